//! The markup ports as they were before they read the lexer: kept as the oracles the lexed
//! ports are tested against (unit tests, the differential fuzz targets). Each walks the page
//! as its original does: the mwparserfromhell port over the page's code points, one step per
//! character where its shortcuts do not apply.
//!
//! Built for tests and with the `oracle` feature (the fuzz targets); never used otherwise.

#![allow(dead_code)]

/// mwparserfromhell 0.7.2's C tokenizer over code points.
mod mwparserfromhell;
/// wikitextparser 0.51.1's wikilink search over its own scans of the page.
mod wikitextparser;

pub use wikitextparser::wikilink_ranges;

use super::node_kind::NodeKind;
use mwparserfromhell::{Item, Limits, MwparserfromhellTokenizer};

/// The code points of `text`.
pub(crate) fn code_points(text: &str) -> Vec<char> {
    text.chars().collect()
}

/// A top-level node as the oracle sees it: kind, code point span, heading level (0 for
/// other kinds).
pub type OracleNode = (NodeKind, usize, usize, u8);

/// The top-level partition of `text` by the code point port, and the reads it made
/// (`max_reads`: give up past that many, `None` then).
pub fn partition(text: &str, max_reads: Option<u64>) -> Option<(Vec<OracleNode>, u64)> {
    let chars = code_points(text);
    let mut tokenizer = MwparserfromhellTokenizer::new(
        &chars,
        Limits {
            max_reads,
            ..Limits::default()
        },
    );
    let items = tokenizer.run();
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
