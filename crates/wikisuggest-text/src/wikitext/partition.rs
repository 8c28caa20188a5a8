//! The top-level node partition of a page, as mwparserfromhell 0.7.2 sees it.

use std::ops::Range;
use std::sync::OnceLock;
use std::time::Instant;

use super::lexer::{Lexed, LexedBits};
use super::mwparserfromhell::{Item, Limits, MwparserfromhellTokenizer};
use super::node_kind::NodeKind;
use crate::error::TextError;

/// Optional bounds for [`Wikitext::parse_bounded`].
///
/// The partition follows the upstream backtracking algorithm exactly, which
/// is quadratic on some pathological inputs; limits turn such inputs into an
/// error instead of a long computation.  A page that parses within the
/// limits gets exactly the same result as with [`Wikitext::parse`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ParseLimits {
    /// Give up after this instant.
    pub deadline: Option<Instant>,
    /// Give up after this many character reads (real pages need a few per
    /// character; see the crate README).
    pub max_reads: Option<u64>,
}

/// One top-level node: its kind and its span in the page, in code points and in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// What the node is.
    pub kind: NodeKind,
    /// Code point offset of the first character.
    pub start: usize,
    /// Code point offset just past the last character.
    pub end: usize,
    /// Byte offset of the first character in the page's UTF-8.
    pub byte_start: usize,
    /// Byte offset just past the last character.
    pub byte_end: usize,
    level: u8,
}

impl Node {
    /// Heading level (1–6) for headings.
    pub fn heading_level(&self) -> Option<u8> {
        (self.kind == NodeKind::Heading).then_some(self.level)
    }

    /// Code point range of a heading's raw title (between the `=` runs that
    /// define its level; surplus `=` belong to the title).
    pub fn heading_title(&self) -> Option<Range<usize>> {
        let level = usize::from(self.heading_level()?);
        let start = self.start + level;
        Some(start..self.end.saturating_sub(level).max(start))
    }

    /// The node's code point range.
    pub fn range(&self) -> Range<usize> {
        self.start..self.end
    }

    /// The node's byte range in the page.
    pub fn bytes(&self) -> Range<usize> {
        self.byte_start..self.byte_end
    }
}

/// A parsed page: its text and the top-level partition covering it exactly, in order.
#[derive(Debug, Clone)]
pub struct Wikitext {
    text: String,
    /// The page's length in code points.
    len: usize,
    /// The page as code points, made when first asked for.
    chars: OnceLock<Vec<char>>,
    /// The lexing the partition read, for the wikilink search to read too.
    lexed: LexedBits,
    nodes: Vec<Node>,
    /// Character reads the parse made.
    reads: u64,
}

impl Wikitext {
    /// Parses `text` (never fails; invalid markup is text).
    ///
    /// The nodes cover the text exactly, except that parsing stops at the
    /// first NUL character, as upstream's C tokenizer does (it reads NUL as
    /// the end of the text).
    pub fn parse(text: &str) -> Self {
        Self::parse_measured(text).0
    }

    /// Like [`Wikitext::parse`], also returning how many character reads the parse
    /// made: the measure that [`ParseLimits::max_reads`] bounds, for sizing that limit
    /// from real pages.
    pub fn parse_measured(text: &str) -> (Self, u64) {
        let lexed = Lexed::new(text);
        let mut tokenizer = MwparserfromhellTokenizer::new(&lexed, Limits::default());
        let items = tokenizer.run();
        let reads = tokenizer.reads();
        drop(tokenizer);
        (Self::from_items(text, lexed, items, reads), reads)
    }

    /// Like [`Wikitext::parse`], but gives up when `limits` are exceeded.
    ///
    /// # Errors
    /// [`TextError::ParseLimitExceeded`] when a limit is hit.
    pub fn parse_bounded(text: &str, limits: ParseLimits) -> Result<Self, TextError> {
        Self::parse_cancellable(text, limits, None)
    }

    /// [`Wikitext::parse_bounded`], also giving up once `cancel` is set (checked where
    /// the deadline is).
    ///
    /// # Errors
    /// [`TextError::ParseLimitExceeded`] when a limit is hit or the parse is cancelled.
    pub fn parse_cancellable(
        text: &str,
        limits: ParseLimits,
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<Self, TextError> {
        let lexed = Lexed::new(text);
        let mut tokenizer = MwparserfromhellTokenizer::new(
            &lexed,
            Limits {
                deadline: limits.deadline,
                max_reads: limits.max_reads,
                cancel,
            },
        );
        let items = tokenizer.run();
        if tokenizer.exhausted() {
            return Err(TextError::ParseLimitExceeded);
        }
        let reads = tokenizer.reads();
        drop(tokenizer);
        Ok(Self::from_items(text, lexed, items, reads))
    }

    /// The nodes of the tokenizer's items (byte spans), with their code point spans.
    fn from_items(text: &str, lexed: Lexed<'_>, items: Vec<Item>, reads: u64) -> Self {
        // Sized for every item (a filter's iterator gives no lower bound to reserve from).
        let mut nodes: Vec<Node> = Vec::with_capacity(items.len());
        nodes.extend(items.into_iter().filter_map(|item| match item {
            Item::Text(start, end) => (start < end).then_some(Node {
                kind: NodeKind::Text,
                start,
                end,
                byte_start: start,
                byte_end: end,
                level: 0,
            }),
            Item::Node(raw) => Some(Node {
                kind: raw.kind,
                start: raw.start,
                end: raw.end,
                byte_start: raw.start,
                byte_end: raw.end,
                level: raw.level,
            }),
        }));
        // The nodes follow each other: their bounds ascend, and convert in one pass.
        if !lexed.is_ascii() {
            let mut offsets: Vec<usize> = Vec::with_capacity(2 * nodes.len());
            offsets.extend(nodes.iter().flat_map(|n| [n.start, n.end]));
            lexed.to_code_points(&mut offsets);
            for (node, span) in nodes.iter_mut().zip(offsets.chunks_exact(2)) {
                if let [start, end] = *span {
                    (node.start, node.end) = (start, end);
                }
            }
        }
        let len = if lexed.text().len() == text.len() {
            lexed.chars_in(0..text.len())
        } else {
            // After a NUL: the rest is counted apart.
            lexed.chars_in(0..lexed.text().len())
                + text
                    .get(lexed.text().len()..)
                    .map_or(0, |rest| rest.chars().count())
        };
        Self {
            text: text.to_owned(),
            len,
            chars: OnceLock::new(),
            lexed: lexed.into_bits(),
            nodes,
            reads,
        }
    }

    /// The lexing of the page up to its first NUL, as the partition read it.
    pub(crate) fn lexed(&self) -> Lexed<'_> {
        Lexed::with_text(&self.text, &self.lexed)
    }

    /// How many character reads the parse made (the measure [`ParseLimits::max_reads`]
    /// bounds).
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// The page.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The page's length in code points.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the page is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The page as code points (made at the first call).
    pub fn chars(&self) -> &[char] {
        self.chars.get_or_init(|| self.text.chars().collect())
    }

    /// Top-level nodes in document order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The source text of a code point range (clamped to the page).
    pub fn slice(&self, range: Range<usize>) -> String {
        let end = range.end.min(self.len);
        let start = range.start.min(end);
        // The byte offsets of the range, from the node holding its start.
        let i = self.nodes.partition_point(|n| n.end <= start);
        let (at_char, at_byte) = self
            .nodes
            .get(i)
            .map_or((0, 0), |n| (n.start.min(start), n.byte_start));
        let rest = self.text.get(at_byte..).unwrap_or_default();
        let mut indices = rest.char_indices().map(|(b, _)| at_byte + b);
        let mut byte_of = |skip: usize| indices.nth(skip).unwrap_or(self.text.len());
        let first = byte_of(start - at_char);
        let last = if end == start {
            first
        } else {
            byte_of(end - start - 1)
        };
        self.text.get(first..last).unwrap_or_default().to_owned()
    }

    /// The source text of a node.
    pub fn node_text(&self, node: &Node) -> String {
        self.text.get(node.bytes()).unwrap_or_default().to_owned()
    }

    /// Top-level text nodes in document order.
    pub fn text_nodes(&self) -> impl Iterator<Item = &Node> + '_ {
        self.nodes.iter().filter(|n| n.kind == NodeKind::Text)
    }
}

#[cfg(test)]
mod tests {
    use super::Wikitext;

    /// Slices by code point ranges agree with the page's characters, across multi-byte
    /// characters, nodes and the page's end.
    #[test]
    fn slices_by_code_points() {
        let text = "é{{日}}a😀[[b|ç]] end";
        let doc = Wikitext::parse(text);
        let chars: Vec<char> = text.chars().collect();
        assert_eq!(doc.len(), chars.len());
        assert_eq!(doc.chars(), chars.as_slice());
        for start in 0..=chars.len() + 1 {
            for end in start..=chars.len() + 2 {
                let expected: String = chars
                    .get(start.min(chars.len())..end.min(chars.len()))
                    .unwrap_or_default()
                    .iter()
                    .collect();
                assert_eq!(doc.slice(start..end), expected, "{start}..{end}");
            }
        }
        for node in doc.nodes() {
            assert_eq!(doc.node_text(node), doc.slice(node.range()));
        }
    }
}
