//! The top-level node partition of a page, as mwparserfromhell 0.7.2 sees it.

use std::ops::Range;
use std::time::Instant;

use super::mwparserfromhell::{Item, Limits, MwparserfromhellTokenizer};
use crate::error::TextError;

/// The code points of `text`, allocated once at their exact number.
///
/// Pages are mostly ASCII: 64-byte windows that are all ASCII are widened at once, and
/// only the other windows go through the UTF-8 decoder.
pub(crate) fn code_points(text: &str) -> Vec<char> {
    const WINDOW: usize = 64;
    let bytes = text.as_bytes();
    let mut chars = Vec::with_capacity(text.chars().count());
    let mut i = 0;
    while i < bytes.len() {
        if let Some(window) = bytes.get(i..i + WINDOW)
            && window.is_ascii()
        {
            chars.extend(window.iter().map(|&b| char::from(b)));
            i += WINDOW;
            continue;
        }
        // `i` is always a character boundary: decode past the end of this window.
        let stop = i + WINDOW;
        let mut decoder = text.get(i..).unwrap_or_default().chars();
        while i < stop
            && let Some(c) = decoder.next()
        {
            chars.push(c);
            i += c.len_utf8();
        }
    }
    chars
}

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

/// Kinds of top-level nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// Plain text: the only kind searched for link candidates.
    Text,
    /// `{{…}}`
    Template,
    /// `{{{…}}}`
    Argument,
    /// `[[…]]`
    Wikilink,
    /// `[url label]` or a bare URL.
    ExternalLink,
    /// `<!-- … -->`
    Comment,
    /// `&name;`, `&#123;`, `&#x7b;`
    HtmlEntity,
    /// `== … ==` at the start of a line.
    Heading,
    /// HTML and extension tags, bold/italics, list markers, `----`, tables.
    Tag,
}

/// One top-level node: its kind and its code point span in the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// What the node is.
    pub kind: NodeKind,
    /// Code point offset of the first character.
    pub start: usize,
    /// Code point offset just past the last character.
    pub end: usize,
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
}

/// A parsed page: its code points and the top-level partition covering them
/// exactly, in order.
#[derive(Debug, Clone)]
pub struct Wikitext {
    chars: Vec<char>,
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
        let chars = code_points(text);
        let mut tokenizer = MwparserfromhellTokenizer::new(&chars, Limits::default());
        let items = tokenizer.run();
        let reads = tokenizer.reads();
        drop(tokenizer);
        (Self::from_items(chars, items, reads), reads)
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
        let chars = code_points(text);
        let mut tokenizer = MwparserfromhellTokenizer::new(
            &chars,
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
        Ok(Self::from_items(chars, items, reads))
    }

    fn from_items(chars: Vec<char>, items: Vec<Item>, reads: u64) -> Self {
        let nodes = items
            .into_iter()
            .filter_map(|item| match item {
                Item::Text(start, end) => (start < end).then_some(Node {
                    kind: NodeKind::Text,
                    start,
                    end,
                    level: 0,
                }),
                Item::Node(raw) => Some(Node {
                    kind: raw.kind,
                    start: raw.start,
                    end: raw.end,
                    level: raw.level,
                }),
            })
            .collect();
        Self {
            chars,
            nodes,
            reads,
        }
    }

    /// How many character reads the parse made (the measure [`ParseLimits::max_reads`]
    /// bounds).
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// The page as code points.
    pub fn chars(&self) -> &[char] {
        &self.chars
    }

    /// Top-level nodes in document order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The source text of a code point range (clamped to the page).
    pub fn slice(&self, range: Range<usize>) -> String {
        let end = range.end.min(self.chars.len());
        let start = range.start.min(end);
        self.chars
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .collect()
    }

    /// The source text of a node.
    pub fn node_text(&self, node: &Node) -> String {
        self.slice(node.range())
    }

    /// Top-level text nodes in document order.
    pub fn text_nodes(&self) -> impl Iterator<Item = &Node> + '_ {
        self.nodes.iter().filter(|n| n.kind == NodeKind::Text)
    }
}

#[cfg(test)]
mod tests {
    use super::code_points;

    /// Characters of every UTF-8 length placed at every offset around the window edges,
    /// so that windows end inside, before and after multi-byte characters.
    #[test]
    fn code_points_match_the_decoder_at_every_window_edge() {
        for c in ['é', '。', '😀', '\u{80}', '\u{7f}'] {
            for at in 0..140 {
                for tail in [0, 1, 63, 64, 65] {
                    let text = format!("{}{c}{}{c}", "a".repeat(at), "b".repeat(tail));
                    let expected: Vec<char> = text.chars().collect();
                    assert_eq!(code_points(&text), expected, "{c:?} at {at}, tail {tail}");
                }
            }
        }
        assert!(code_points("").is_empty());
    }
}
