//! The wikitext parser and link extraction: any text parses, within a work bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wikisuggest_text::wikitext::{ParseLimits, Wikitext, wikilink_ranges_bounded};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // Bounded like a page with a budget: pathological nesting is a typed stop, not a hang.
    let limits = ParseLimits {
        deadline: None,
        max_reads: Some(200 * data.len() as u64 + 10_000),
    };
    if let Ok(doc) = Wikitext::parse_bounded(&text, limits) {
        let end = doc.nodes().last().map_or(0, |n| n.end);
        assert!(end <= doc.chars().len());
        if let Ok((links, _)) = wikilink_ranges_bounded(&text, &limits, None) {
            for link in links {
                assert!(link.span.end <= text.len());
                assert!(link.title.start >= link.span.start && link.title.end <= link.span.end);
                assert!(text.get(link.title).is_some() && link.text.is_none_or(|t| text.get(t).is_some()));
            }
        }
    }
});
