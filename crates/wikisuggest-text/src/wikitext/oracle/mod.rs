//! The markup ports as they were before they read the lexer: kept as the oracles the lexed
//! ports are tested against (unit tests, the differential fuzz targets). Each keeps what the
//! lexer replaced: the mwparserfromhell port reads the page's code points, one step per
//! character where its shortcuts do not apply; the wikitextparser port finds its candidates
//! by its own scans.
//!
//! Built for tests and with the `oracle` feature (the fuzz targets); never used otherwise.

/// mwparserfromhell 0.7.2's C tokenizer over code points.
mod mwparserfromhell;
/// wikitextparser 0.51.1's wikilink search over its own scans of the page.
mod wikitextparser;

pub use wikitextparser::wikilink_ranges;

use super::node_kind::NodeKind;
use mwparserfromhell::{CodePointPage, Item, Limits, MwparserfromhellTokenizer};

/// A top-level node as the oracle sees it: kind, code point span, heading level (0 for
/// other kinds).
pub type OracleNode = (NodeKind, usize, usize, u8);

/// The top-level partition of `text` by the code point port, and the reads it made
/// (`max_reads`: give up past that many, `None` then).
pub fn partition(text: &str, max_reads: Option<u64>) -> Option<(Vec<OracleNode>, u64)> {
    partition_read(text, max_reads, false)
}

/// [`partition`] taking every character in its own step, as upstream does (`stepwise`),
/// or with the shortcuts that take runs of plain characters at once.
pub(crate) fn partition_read(
    text: &str,
    max_reads: Option<u64>,
    stepwise: bool,
) -> Option<(Vec<OracleNode>, u64)> {
    let page = CodePointPage::new(text);
    let mut tokenizer = MwparserfromhellTokenizer::new(
        page.reader(stepwise),
        Limits {
            max_reads,
            ..Limits::default()
        },
    );
    let mut items = Vec::new();
    tokenizer.advance(usize::MAX, &mut items);
    if tokenizer.exhausted() {
        return None;
    }
    let nodes = items
        .into_iter()
        .filter_map(|item| match item {
            Item::Text(start, end) => (start < end).then_some((NodeKind::Text, start, end, 0)),
            Item::Node(raw) => Some((raw.kind, raw.start, raw.end, raw.level)),
        })
        .collect();
    Some((nodes, tokenizer.reads()))
}
