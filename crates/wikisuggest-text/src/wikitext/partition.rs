//! The top-level node partition of a page, as mwparserfromhell 0.7.2 sees it.

use std::ops::Range;
use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;
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

    /// A heading's raw title ([`Node::heading_title`]) in `page`, the text the node was
    /// parsed from.
    pub fn heading_title_in<'t>(&self, page: &'t str) -> Option<&'t str> {
        let title = self.heading_title()?;
        // Counted from the node's own start, as [`Wikitext::slice`] does.
        let rest = page.get(self.byte_start..)?;
        let byte = |chars: usize| {
            let skip = chars.saturating_sub(self.start);
            rest.char_indices().nth(skip).map_or(rest.len(), |(b, _)| b)
        };
        rest.get(byte(title.start)..byte(title.end))
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

impl ParseLimits {
    /// The tokenizer's limits: these, and `cancel`.
    pub(crate) fn with_cancel(self, cancel: Option<&AtomicBool>) -> Limits<'_> {
        Limits {
            deadline: self.deadline,
            max_reads: self.max_reads,
            cancel,
        }
    }
}

/// How far past the last node asked for [`NodeStream::node`] parses, in bytes: each step
/// ends with a handful of calls, and a page whose pass stops early is parsed at most this
/// far beyond where it stopped.
const STREAM_STEP: usize = 4096;

/// The top-level nodes of a lexed page as the tokenizer finds them, parsed only as far
/// as they are asked for: the pass over a page that stops at its maximum of links leaves
/// the rest of the page unparsed. The nodes are those of [`Wikitext::parse`], in order.
pub(crate) struct NodeStream<'a> {
    lexed: &'a Lexed<'a>,
    tokenizer: MwparserfromhellTokenizer<'a>,
    /// The items of the last step, before they become nodes.
    items: Vec<Item>,
    nodes: Vec<Node>,
    /// The byte and code point offsets of the end of the last node.
    end: (usize, usize),
    /// Where the next step stops, and how far each goes.
    until: usize,
    step: usize,
    /// Whether every node is in `nodes`.
    done: bool,
    /// Whether a limit stopped the parse (the nodes after the last step's are unknown).
    exhausted: bool,
}

impl<'a> NodeStream<'a> {
    /// A stream of the nodes of `lexed`, parsed within `limits`.
    pub(crate) fn new(lexed: &'a Lexed<'a>, limits: Limits<'a>) -> Self {
        Self::with_step(lexed, limits, STREAM_STEP)
    }

    /// [`Self::new`], parsing `step` bytes at a time.
    pub(crate) fn with_step(lexed: &'a Lexed<'a>, limits: Limits<'a>, step: usize) -> Self {
        Self {
            lexed,
            tokenizer: MwparserfromhellTokenizer::new(lexed, limits),
            items: Vec::new(),
            nodes: Vec::new(),
            end: (0, 0),
            until: step,
            step,
            done: false,
            exhausted: false,
        }
    }

    /// Node `i` (`None` past the last), parsing on as far as it takes.
    ///
    /// # Errors
    /// [`TextError::ParseLimitExceeded`] when a limit is hit before node `i` is found.
    pub(crate) fn node(&mut self, i: usize) -> Result<Option<Node>, TextError> {
        while self.nodes.len() <= i && !self.done {
            let until = self.until;
            self.until = until.saturating_add(self.step);
            self.step(until)?;
        }
        Ok(self.nodes.get(i).copied())
    }

    /// Every node, and the reads the parse made.
    ///
    /// # Errors
    /// [`TextError::ParseLimitExceeded`] when a limit is hit.
    pub(crate) fn into_whole(mut self) -> Result<(Vec<Node>, u64), TextError> {
        if !self.done {
            self.step(usize::MAX)?;
        }
        Ok((self.nodes, self.tokenizer.reads()))
    }

    /// Parses on up to `until` and appends the nodes found.
    // Out of line: the engine benchmark counts the pass's stages by function (`bench/engine.py`).
    #[inline(never)]
    fn step(&mut self, until: usize) -> Result<(), TextError> {
        if self.exhausted {
            return Err(TextError::ParseLimitExceeded);
        }
        self.done = self.tokenizer.advance(until, &mut self.items);
        if self.tokenizer.exhausted() {
            // The items of an exhausted parse are meaningless.
            (self.exhausted, self.done) = (true, false);
            return Err(TextError::ParseLimitExceeded);
        }
        // Sized for every item (a filter's iterator gives no lower bound to reserve from).
        self.nodes.reserve(self.items.len());
        let (lexed, end) = (self.lexed, &mut self.end);
        // Nodes follow each other: their code point offsets are counted on from the
        // last one's end.
        let mut chars = |byte: usize| {
            if lexed.is_ascii() {
                return byte;
            }
            let to = byte.min(lexed.text().len()).max(end.0);
            *end = (to, end.1 + lexed.chars_in(end.0..to));
            end.1
        };
        for item in self.items.drain(..) {
            let (kind, byte_start, byte_end, level) = match item {
                Item::Text(start, end) if start < end => (NodeKind::Text, start, end, 0),
                Item::Text(..) => continue,
                Item::Node(raw) => (raw.kind, raw.start, raw.end, raw.level),
            };
            let start = chars(byte_start);
            self.nodes.push(Node {
                kind,
                start,
                end: chars(byte_end),
                byte_start,
                byte_end,
                level,
            });
        }
        Ok(())
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
        // Without limits the parse cannot give up.
        let (nodes, reads) = NodeStream::new(&lexed, Limits::default())
            .into_whole()
            .unwrap_or_default();
        (Self::from_nodes(text, lexed, nodes, reads), reads)
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
        let (nodes, reads) = NodeStream::new(&lexed, limits.with_cancel(cancel)).into_whole()?;
        Ok(Self::from_nodes(text, lexed, nodes, reads))
    }

    /// The page parsed into `nodes` with `reads` reads.
    fn from_nodes(text: &str, lexed: Lexed<'_>, nodes: Vec<Node>, reads: u64) -> Self {
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
