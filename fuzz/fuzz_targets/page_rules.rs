//! The page rules' scan (`exclude_templates`, `exclude_categories`): for any page and any
//! names, no panic and time linear in the page (a page of tags once took minutes), the
//! stoppable scan gives the same answer and asks to stop at most once per `CHECK_EVERY`
//! pieces of markup, a page hidden in a `<nowiki>` is never excluded, and an excluded
//! template written first is always found.
#![no_main]

use std::cell::Cell;

use libfuzzer_sys::fuzz_target;
use wikisuggest_engine::rules::page::CHECK_EVERY;
use wikisuggest_engine::{RuleSpec, Rules};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    // The page's first two lines name the templates and the categories (often markup
    // fragments themselves).
    let names = |line: Option<&str>| -> Vec<String> {
        line.unwrap_or_default()
            .split('|')
            .map(|n| n.chars().take(40).collect::<String>())
            .filter(|n| !n.trim().is_empty())
            .take(8)
            .collect()
    };
    let templates = names(lines.next());
    let categories = names(lines.next());
    let spec = RuleSpec {
        exclude_templates: templates.clone(),
        exclude_categories: categories,
        ..RuleSpec::default()
    };
    let Ok(rules) = Rules::from_spec(spec, None) else {
        return;
    };
    let found = rules.page_exclusion(&text, &[], &[]);
    let asked = Cell::new(0usize);
    let within = rules.page_exclusion_within(&text, &[], &[], &|| {
        asked.set(asked.get() + 1);
        false
    });
    assert_eq!(within.as_ref().ok(), Some(&found));
    let openings = text.bytes().filter(|b| matches!(b, b'{' | b'[' | b'<')).count();
    assert!(asked.get() <= openings / CHECK_EVERY as usize, "{}", asked.get());
    if !text.to_ascii_lowercase().contains("</nowiki>") {
        let hidden = format!("<nowiki>{text}</nowiki>");
        assert_eq!(rules.page_exclusion(&hidden, &[], &[]), None);
    }
    let plain = templates.iter().find(|t| {
        !t.contains(['|', '{', '}', '<', '[', ']', ':', '#', '_'])
            && t.chars().all(|c| c.is_alphanumeric() || c == ' ')
            && t.chars().any(char::is_alphanumeric)
    });
    if let Some(template) = plain {
        let page = format!("{{{{{template}}}}}{text}");
        assert!(rules.page_exclusion(&page, &[], &[]).is_some(), "{template:?}");
    }
});
