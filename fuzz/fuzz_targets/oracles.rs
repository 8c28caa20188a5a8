//! The markup ports against the ports they were made from (`wikitext::oracle`): the lexed
//! mwparserfromhell port gives the code point port's partition and read count, and the
//! wikilink search on the lexer gives the same links and work as the search before it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wikisuggest_text::wikitext::{oracle, ParseLimits, Wikitext, wikilink_ranges_bounded};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // Bounded as a page with a budget: both ports stop at the same read.
    let max_reads = 200 * data.len() as u64 + 10_000;
    let limits = ParseLimits {
        deadline: None,
        max_reads: Some(max_reads),
    };
    let ours = Wikitext::parse_bounded(&text, limits).ok().map(|doc| {
        let nodes: Vec<_> = (doc.nodes().iter())
            .map(|n| (n.kind, n.start, n.end, n.heading_level().unwrap_or(0)))
            .collect();
        (nodes, doc.reads())
    });
    assert_eq!(ours, oracle::partition(&text, Some(max_reads)), "{text:?}");
    let links = wikilink_ranges_bounded(&text, &limits, None).ok();
    assert_eq!(links, oracle::wikilink_ranges(&text, &limits, None).ok(), "{text:?}");
});
