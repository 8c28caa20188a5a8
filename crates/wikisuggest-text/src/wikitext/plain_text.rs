//! Where a link may be placed in a page: the engine's own top-level partition
//! ([`Wikitext::parse`]), reduced to what putting a recommendation back into the wikitext
//! needs, behind an interface that stays the same however the partition is computed.
//!
//! The engine suggests phrases only from top-level text nodes, and counts a phrase's
//! occurrences (`match_index`) in them. Placing a suggestion uses the same partition, so a
//! phrase is never linked inside markup and occurrences are counted where the engine
//! counted them. Offsets are code points, as everywhere in this crate.

use std::ops::Range;

use memchr::memmem;

use super::node_kind::NodeKind;
use super::partition::{ParseLimits, Wikitext};
use crate::error::TextError;

/// Reads per code point within which every real page is partitioned (the parity articles
/// need at most 4): a page that fits gets exactly the unbounded partition.
pub const READS_PER_CODE_POINT: u64 = 64;

/// A page's partition into plain text and markup, with searches over the plain text.
#[derive(Debug, Clone)]
pub struct PlainText {
    text: String,
    /// Top-level nodes, in order (the partition stops at a NUL, as the engine's does).
    nodes: Vec<Span>,
    /// Length of the page in code points.
    len: usize,
    /// Where MediaWiki stops showing the page: the `<!--` of a comment never closed.
    hidden_from: Option<usize>,
}

#[derive(Debug, Clone, Copy)]
struct Span {
    kind: NodeKind,
    /// Code points.
    start: usize,
    end: usize,
    /// Bytes of `text`.
    byte_start: usize,
    byte_end: usize,
}

impl PlainText {
    /// The partition of `text`; never fails (invalid markup is text). Its cost is that of
    /// [`Wikitext::parse`]: quadratic on long runs of unclosed constructs.
    pub fn new(text: &str) -> Self {
        Self::from_parsed(text, &Wikitext::parse(text))
    }

    /// The partition of `text` in time linear in its length: at most
    /// [`READS_PER_CODE_POINT`] reads per code point, exactly [`PlainText::new`]'s result
    /// when the page fits.
    ///
    /// # Errors
    /// [`TextError::ParseLimitExceeded`] for a page that does not fit (unclosed or nested
    /// constructs by the thousand, as vandalism leaves them).
    pub fn bounded(text: &str) -> Result<Self, TextError> {
        let length = u64::try_from(text.chars().count()).unwrap_or(u64::MAX);
        let limits = ParseLimits {
            deadline: None,
            max_reads: Some(READS_PER_CODE_POINT.saturating_mul(length.max(16))),
        };
        let parsed = Wikitext::parse_bounded(text, limits)?;
        Ok(Self::from_parsed(text, &parsed))
    }

    fn from_parsed(text: &str, parsed: &Wikitext) -> Self {
        let nodes = (parsed.nodes().iter())
            .map(|node| Span {
                kind: node.kind,
                start: node.start,
                end: node.end,
                byte_start: node.byte_start,
                byte_end: node.byte_end,
            })
            .collect::<Vec<_>>();
        let hidden_from = unclosed_comment(text, &nodes);
        Self {
            len: parsed.len(),
            text: text.to_owned(),
            nodes,
            hidden_from,
        }
    }

    /// The code point offset of a `<!--` that no `-->` follows, outside tags: MediaWiki
    /// hides everything after it (the partition, like mwparserfromhell, reads it as text),
    /// so nothing there is plain text. `None` when every comment is closed.
    pub fn hidden_from(&self) -> Option<usize> {
        self.hidden_from
    }

    /// The page's length in code points.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The code point ranges of plain text (top-level text nodes, up to
    /// [`PlainText::hidden_from`]), in page order.
    pub fn text_runs(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        let end = self.hidden_from.unwrap_or(usize::MAX);
        self.nodes
            .iter()
            .filter(move |n| n.kind == NodeKind::Text && n.start < end)
            .map(move |n| n.start..n.end.min(end))
    }

    /// The kind and range of the top-level node holding code point `offset`; `None` past
    /// the end of the partition.
    pub fn node_at(&self, offset: usize) -> Option<(NodeKind, Range<usize>)> {
        let i = self.nodes.partition_point(|n| n.end <= offset);
        self.nodes
            .get(i)
            .filter(|n| n.start <= offset)
            .map(|n| (n.kind, n.start..n.end))
    }

    /// Whether `range` (non-empty) lies within one run of plain text.
    pub fn is_text(&self, range: Range<usize>) -> bool {
        if range.start >= range.end || self.hidden_from.is_some_and(|h| range.end > h) {
            return false;
        }
        matches!(self.node_at(range.start), Some((NodeKind::Text, run)) if range.end <= run.end)
    }

    /// The start offsets of `phrase` in plain text, in page order: non-overlapping within
    /// each run, never across two (how the engine counts a phrase's occurrences).
    pub fn occurrences(&self, phrase: &str) -> Vec<usize> {
        let mut found = Vec::new();
        if phrase.is_empty() {
            return found;
        }
        let finder = memmem::Finder::new(phrase.as_bytes());
        for node in self.nodes.iter().filter(|n| n.kind == NodeKind::Text) {
            let run = self
                .text
                .get(node.byte_start..node.byte_end)
                .unwrap_or_default();
            // Matches come in order: count the code points between them once.
            let (mut byte, mut offset) = (0usize, node.start);
            for hit in finder.find_iter(run.as_bytes()) {
                offset += run.get(byte..hit).map_or(0, |s| s.chars().count());
                byte = hit;
                found.push(offset);
            }
        }
        if let Some(hidden) = self.hidden_from {
            let phrase_len = phrase.chars().count();
            found.retain(|&start| start + phrase_len <= hidden);
        }
        found
    }
}

/// [`PlainText::hidden_from`]: the first `<!--` after the page's last `-->` that is not
/// inside a tag's node (`<nowiki>`, `<pre>`, `<ref>` keep theirs to themselves). One search
/// from each end of the page.
fn unclosed_comment(text: &str, nodes: &[Span]) -> Option<usize> {
    let bytes = text.as_bytes();
    let after_last_close = memmem::rfind(bytes, b"-->").map_or(0, |at| at + 3);
    let mut from = after_last_close;
    while let Some(found) = memmem::find(bytes.get(from..)?, b"<!--") {
        let at = from + found;
        let i = nodes.partition_point(|n| n.byte_end <= at);
        let node = nodes.get(i).filter(|n| n.byte_start <= at)?;
        if node.kind != NodeKind::Tag {
            let before = text.get(node.byte_start..at)?;
            return Some(node.start + before.chars().count());
        }
        from = node.byte_end;
    }
    None
}

/// The raw targets of every `[[target|…]]` or `[[target]]` in `text`, at any depth and in
/// any context (inside templates, tags and comments too), in page order: what a page may
/// already link to. A target ends at the first `|` or `]]`; one holding a character no
/// title can hold (`[ ] { } < >` or a line break) is not a link and is left out. One pass,
/// linear in the length of `text`.
pub fn link_targets(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut targets = Vec::new();
    let mut from = 0;
    while let Some(found) = memmem::find(bytes.get(from..).unwrap_or_default(), b"[[") {
        let start = from + found + 2;
        // Scanning stops at the next `[`, so every byte is looked at a bounded number of
        // times however many `[[` the page holds.
        let mut end = start;
        let mut closed = false;
        while let Some(&b) = bytes.get(end) {
            match b {
                b'|' => {
                    closed = true;
                    break;
                }
                b']' => {
                    closed = bytes.get(end + 1) == Some(&b']');
                    break;
                }
                b'[' | b'{' | b'}' | b'<' | b'>' | b'\n' => break,
                _ => end += 1,
            }
        }
        if closed && let Some(target) = text.get(start..end) {
            targets.push(target.to_owned());
        }
        from = end.max(start);
    }
    targets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_nodes_follow_the_engines_partition() {
        let text = "Ünïcode {{t| the dog}} the [[dog]] and the dog";
        let plain = PlainText::new(text);
        let runs: Vec<_> = plain.text_runs().collect();
        let expected: Vec<_> = Wikitext::parse(text)
            .text_nodes()
            .map(|n| n.range())
            .collect();
        assert_eq!(runs, expected);
        assert_eq!(plain.len(), text.chars().count());
        let dog = |n: usize| {
            text.match_indices("dog")
                .nth(n)
                .map(|(b, _)| text[..b].chars().count())
        };
        assert_eq!(plain.occurrences("dog"), [dog(2).unwrap()]);
        assert!(plain.is_text(0..7));
        assert!(!plain.is_text(0..9));
        assert_eq!(
            plain.node_at(dog(1).unwrap()).map(|n| n.0),
            Some(NodeKind::Wikilink)
        );
        assert_eq!(plain.node_at(10_000), None);
    }

    #[test]
    fn occurrences_are_code_points_and_do_not_overlap() {
        let plain = PlainText::new("🦔aaaa é aa");
        assert_eq!(plain.occurrences("aa"), [1, 3, 8]);
        assert_eq!(plain.occurrences(""), Vec::<usize>::new());
        assert_eq!(plain.occurrences("é"), [6]);
    }

    #[test]
    fn the_bounded_partition_is_exact_or_refuses() {
        let text = "Real text with [[a link]], {{a template}} and <b>bold</b>.";
        let bounded = PlainText::bounded(text).unwrap();
        assert_eq!(
            bounded.text_runs().collect::<Vec<_>>(),
            PlainText::new(text).text_runs().collect::<Vec<_>>()
        );
        for unit in ["{|\n", "<ref>", "[[a|", "{{a|[[b|"] {
            let text = format!("The cats sleep. {}", unit.repeat(20_000));
            assert!(
                matches!(
                    PlainText::bounded(&text),
                    Err(TextError::ParseLimitExceeded)
                ),
                "{unit:?}"
            );
        }
        for unit in ["[[", "{{", "<!--"] {
            assert!(PlainText::bounded(&unit.repeat(50_000)).is_ok(), "{unit:?}");
        }
    }

    #[test]
    fn an_unclosed_comment_hides_the_rest_of_the_page() {
        let text = "The cat <!-- a note --> and the dog. <!-- unclosed: the dog sleeps";
        let plain = PlainText::new(text);
        let hidden = text.rfind("<!--").unwrap();
        assert_eq!(plain.hidden_from(), Some(hidden));
        assert_eq!(plain.occurrences("dog"), [text.find("dog").unwrap()]);
        let last_dog = text.rfind("dog").unwrap();
        assert!(!plain.is_text(last_dog..last_dog + 3));
        assert!(plain.text_runs().all(|r| r.end <= hidden));
        // Closed comments, and comments in tags, hide nothing.
        for text in [
            "a <!-- b --> c",
            "a <nowiki><!--</nowiki> c",
            "a <!-- b <!-- c --> d",
            "a",
        ] {
            assert_eq!(PlainText::new(text).hidden_from(), None, "{text:?}");
        }
        let plain = PlainText::new("é {{t|<!-- x}} y");
        assert_eq!(plain.hidden_from(), Some(6));
    }

    #[test]
    fn a_nul_ends_the_partition() {
        let plain = PlainText::new("cat\0cat");
        assert_eq!(plain.occurrences("cat"), [0]);
        assert!(!plain.is_text(4..7));
    }

    #[test]
    fn link_targets_at_any_depth() {
        let text = "{{a|[[B|c]]}} [[ D ]] [[e\n]] [[f<]] [[G#x|y]] [[[[H]] [[I]";
        assert_eq!(link_targets(text), ["B", " D ", "G#x", "H"]);
        assert_eq!(link_targets(&"[[".repeat(10_000)), Vec::<String>::new());
    }
}
