//! Placing links back into a page (`wikisuggest.apply_links`) through the partition API it
//! uses: for any page and phrase, a bounded partition is found or refused (never a panic, never
//! more than linear work), its text runs are ordered and inside the page, every occurrence of
//! the phrase lies within one run, and the existing link targets hold no character that would
//! end a link.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wikisuggest_text::wikitext::{NodeKind, PlainText, link_targets};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // The phrase is the page's first line (often a fragment of markup itself).
    let phrase: String = text
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(40)
        .collect();
    for target in link_targets(&text) {
        assert!(
            !target.contains(['[', ']', '{', '}', '<', '>', '\n', '|']),
            "{target:?}"
        );
    }
    let Ok(plain) = PlainText::bounded(&text) else {
        return;
    };
    let length = text.chars().count();
    assert!(plain.len() <= length);
    let mut end = 0;
    for run in plain.text_runs() {
        assert!(
            end <= run.start && run.start < run.end && run.end <= length,
            "{run:?}"
        );
        assert!(plain.is_text(run.clone()));
        // The run is its text node, cut short where an unclosed comment hides the rest.
        assert!(
            matches!(plain.node_at(run.start), Some((NodeKind::Text, r))
                if r.start == run.start
                    && (r.end == run.end || (run.end < r.end && plain.hidden_from() == Some(run.end)))),
            "{run:?} {:?} {:?}",
            plain.node_at(run.start),
            plain.hidden_from()
        );
        end = run.end;
    }
    let width = phrase.chars().count();
    let mut previous: Option<usize> = None;
    for start in plain.occurrences(&phrase) {
        assert!(
            width > 0 && plain.is_text(start..start + width),
            "{start} {phrase:?}"
        );
        let found: String = text.chars().skip(start).take(width).collect();
        assert_eq!(found, phrase);
        assert!(
            previous.is_none_or(|p| p + width <= start),
            "overlapping occurrences"
        );
        previous = Some(start);
    }
});
