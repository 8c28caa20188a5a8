//! Offsets in the page: where each top-level node lies in the page's UTF-8 text and code
//! points, the current text of each text node as links are spliced in, and slices of the
//! page by code point ranges.

use memchr::memmem;

use super::matching::count;
use crate::wikitext::{Node, NodeKind};

/// Where the top-level nodes lie in the page's UTF-8 text, and the current value of each
/// text node: a node's text stays a slice of the page until a link is spliced into it.
///
/// Node byte offsets are found in one pass (a node of ASCII text costs one `is_ascii` check),
/// so node texts are never copied, and a code point offset is found from the node holding it.
pub(super) struct PageText<'a> {
    text: &'a str,
    chars: &'a [char],
    /// Code point and byte offset of the start of each node, then of the end of the last.
    starts: Vec<(usize, usize)>,
    /// Per top-level node: its ordinal among the text nodes, if it is one.
    pub(super) ordinal_of: Vec<Option<usize>>,
    /// Per text node: its node index.
    text_nodes: Vec<usize>,
    /// Per text node: its text once a link was spliced into it (`None`: the original), as
    /// code points and as UTF-8.
    spliced: Vec<Option<(Vec<char>, String)>>,
    /// The text nodes with a link spliced in, ascending.
    spliced_nodes: Vec<usize>,
    /// Per text node: the length of its current text in code points.
    pub(super) lengths: Vec<usize>,
    /// The original texts of the text nodes, each followed by a NUL, and where each
    /// starts in it (then the end): built at the first count.
    texts: std::cell::OnceCell<(String, Vec<usize>)>,
}

impl<'a> PageText<'a> {
    /// `text` is `chars` as UTF-8; `nodes` partition `chars` in order.
    pub(super) fn new(text: &'a str, chars: &'a [char], nodes: &[Node]) -> Self {
        let mut starts = Vec::with_capacity(nodes.len() + 1);
        let mut ordinal_of = Vec::with_capacity(nodes.len());
        let mut text_nodes = Vec::new();
        let bytes = text.as_bytes();
        let (mut at_char, mut at_byte) = (0usize, 0usize);
        let advance = |to_char: usize, at_char: &mut usize, at_byte: &mut usize| {
            let n = to_char.saturating_sub(*at_char);
            // ASCII runs: as many bytes as code points.
            let ascii = bytes
                .get(*at_byte..*at_byte + n)
                .is_some_and(|run| run.is_ascii());
            *at_byte += if ascii {
                n
            } else {
                utf8_len(bytes.get(*at_byte..).unwrap_or_default(), n)
            };
            *at_char = to_char.max(*at_char);
        };
        for (index, node) in nodes.iter().enumerate() {
            advance(node.start, &mut at_char, &mut at_byte);
            starts.push((at_char, at_byte));
            if node.kind == NodeKind::Text {
                ordinal_of.push(Some(text_nodes.len()));
                text_nodes.push(index);
            } else {
                ordinal_of.push(None);
            }
        }
        advance(chars.len(), &mut at_char, &mut at_byte);
        starts.push((at_char, at_byte.min(text.len())));
        let spliced = vec![None; text_nodes.len()];
        let mut page = Self {
            text,
            chars,
            starts,
            ordinal_of,
            text_nodes,
            spliced,
            spliced_nodes: Vec::new(),
            lengths: Vec::new(),
            texts: std::cell::OnceCell::new(),
        };
        page.lengths = (page.text_nodes.iter())
            .map(|&index| page.node_chars(index).len())
            .collect();
        page
    }

    /// Byte range of node `index`.
    pub(super) fn node_bytes(&self, index: usize) -> std::ops::Range<usize> {
        let at = |i: usize| self.starts.get(i).map_or(self.text.len(), |s| s.1);
        at(index)..at(index + 1)
    }

    /// Code point range of node `index`.
    pub(super) fn node_chars(&self, index: usize) -> std::ops::Range<usize> {
        let at = |i: usize| self.starts.get(i).map_or(self.chars.len(), |s| s.0);
        at(index)..at(index + 1)
    }

    /// The original text of text node `ordinal`.
    pub(super) fn original_str(&self, ordinal: usize) -> &'a str {
        let index = self.text_nodes.get(ordinal).copied().unwrap_or(usize::MAX);
        self.text.get(self.node_bytes(index)).unwrap_or_default()
    }

    /// The original code points of text node `ordinal`.
    pub(super) fn original(&self, ordinal: usize) -> &'a [char] {
        let index = self.text_nodes.get(ordinal).copied().unwrap_or(usize::MAX);
        self.chars.get(self.node_chars(index)).unwrap_or_default()
    }

    /// The current text of text node `ordinal`.
    pub(super) fn current_str(&self, ordinal: usize) -> &str {
        match self.spliced.get(ordinal) {
            Some(Some((_, text))) => text,
            _ => self.original_str(ordinal),
        }
    }

    /// The current code points of text node `ordinal`.
    pub(super) fn current(&self, ordinal: usize) -> &[char] {
        match self.spliced.get(ordinal) {
            Some(Some((text, _))) => text,
            _ => self.original(ordinal),
        }
    }

    /// Replaces code points `at..at + len` of the current text of node `ordinal` by
    /// `replacement` (the original is copied on first use); `false` for no such node.
    ///
    /// Both forms of the text change in place: a node receiving many links is not encoded
    /// anew for each.
    pub(super) fn splice(
        &mut self,
        ordinal: usize,
        at: usize,
        len: usize,
        replacement: &str,
    ) -> bool {
        let (original, original_str) = (self.original(ordinal), self.original_str(ordinal));
        let Some(slot) = self.spliced.get_mut(ordinal) else {
            return false;
        };
        if slot.is_none() {
            let at = self.spliced_nodes.partition_point(|&j| j < ordinal);
            self.spliced_nodes.insert(at, ordinal);
        }
        let (chars, text) =
            slot.get_or_insert_with(|| (original.to_vec(), original_str.to_owned()));
        let end = (at + len).min(chars.len());
        let at = at.min(end);
        // The same range in bytes: an ASCII text has one byte per code point.
        let byte = |i: usize| -> usize {
            if text.len() == chars.len() {
                i
            } else {
                let before = chars.get(..i).unwrap_or_default();
                before.iter().map(|c| c.len_utf8()).sum()
            }
        };
        let bytes = byte(at)..byte(end);
        if text.get(bytes.clone()).is_none() {
            return false;
        }
        text.replace_range(bytes, replacement);
        chars.splice(at..end, replacement.chars());
        if let Some(length) = self.lengths.get_mut(ordinal) {
            *length = chars.len();
        }
        true
    }

    /// Code point offset of byte offset `byte`, which lies on a character boundary.
    pub(super) fn char_of(&self, byte: usize) -> usize {
        let node = self
            .starts
            .partition_point(|s| s.1 <= byte)
            .saturating_sub(1);
        let (at_char, at_byte) = self.starts.get(node).copied().unwrap_or((0, 0));
        at_char
            + self
                .text
                .get(at_byte..byte)
                .map_or(0, |within| within.chars().count())
    }

    /// `str.count(needle)` summed over the current texts of text nodes `..ordinal`.
    ///
    /// Nodes without a link spliced in are searched in one scan of their original texts
    /// joined with NULs (text nodes are about 40 % of a page): the page holds no NUL, so
    /// a needle without one matches only within a node, and Python's count of each node
    /// (leftmost, non-overlapping) is the count of the scan's matches in it.
    pub(super) fn count_before(&self, ordinal: usize, needle: &[char]) -> usize {
        let needle_str: String = needle.iter().collect();
        if needle.is_empty() || needle_str.contains('\0') {
            return (0..ordinal).map(|j| count(self.current(j), needle)).sum();
        }
        let finder = memmem::Finder::new(needle_str.as_bytes());
        // `str.count` is leftmost non-overlapping, as `find_iter`.
        let spliced: usize = self
            .spliced_nodes
            .iter()
            .take_while(|&&j| j < ordinal)
            .filter_map(|&j| self.spliced.get(j)?.as_ref())
            .map(|(_, text)| finder.find_iter(text.as_bytes()).count())
            .sum();
        let (texts, starts) = self.texts.get_or_init(|| {
            let mut texts = String::new();
            let mut starts = Vec::with_capacity(self.text_nodes.len() + 1);
            for j in 0..self.text_nodes.len() {
                starts.push(texts.len());
                texts.push_str(self.original_str(j));
                texts.push('\0');
            }
            starts.push(texts.len());
            (texts, starts)
        });
        let end = starts.get(ordinal).copied().unwrap_or(texts.len());
        let hay = texts.as_bytes().get(..end).unwrap_or_default();
        let mut n = 0;
        let mut from = 0;
        while let Some(hit) = hay.get(from..).and_then(|rest| finder.find(rest)) {
            let hit = from + hit;
            // The text node holding the match.
            let j = starts.partition_point(|&s| s <= hit).saturating_sub(1);
            if matches!(self.spliced.get(j), Some(None)) {
                n += 1;
                from = hit + needle_str.len();
            } else {
                // Counted from its current text above: go on at the next node.
                from = starts.get(j + 1).copied().unwrap_or(end).max(hit + 1);
            }
        }
        n + spliced
    }
}

/// The code point offset of byte offset `byte` of `text`, which holds `chars` code points
/// (the same offset when every code point is one byte).
pub(super) fn char_offset(text: &str, byte: usize, chars: usize) -> usize {
    if text.len() == chars {
        byte
    } else {
        text.get(..byte).map_or(0, |prefix| prefix.chars().count())
    }
}

/// The length in bytes of the first `n` code points of the UTF-8 text `bytes` (all of it
/// when it holds fewer).
///
/// Eight bytes are counted at a time while at least eight code points remain: a byte
/// starts a code point unless its top bits are `10`, and a word of eight bytes holds at
/// most eight starts.
pub(super) fn utf8_len(bytes: &[u8], n: usize) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut left = n;
    let mut at = 0;
    while left >= 8 {
        let Some(word) = bytes
            .get(at..at + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
        else {
            break;
        };
        let word = u64::from_le_bytes(word);
        // Bit 7 of each byte: set for a continuation byte (`10xxxxxx`).
        let continuations = word & !(word << 1) & HIGH;
        left -= 8 - continuations.count_ones() as usize;
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b & 0xC0 != 0x80 {
            if left == 0 {
                break;
            }
            left -= 1;
        }
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wikitext::Wikitext;

    /// Node byte offsets and code point offsets agree with a direct count at every position,
    /// and counting in place matches `count` node by node, splices included.
    #[test]
    fn page_text_offsets_and_counts() {
        for text in [
            "",
            "a",
            &"é日a😀 [[x]] ".repeat(40),
            &"x".repeat(128),
            &"ab [[c]] ab{{d}}ab".repeat(16),
        ] {
            let doc = Wikitext::parse(text);
            let chars = doc.chars();
            let mut page = PageText::new(text, chars, doc.nodes());
            for (at, (byte, _)) in text
                .char_indices()
                .chain(std::iter::once((text.len(), ' ')))
                .enumerate()
            {
                assert_eq!(page.char_of(byte), at, "{text:?} byte {byte}");
            }
            for (index, node) in doc.nodes().iter().enumerate() {
                let bytes = page.node_bytes(index);
                assert_eq!(
                    text.get(bytes).map(|s| s.chars().count()),
                    Some(node.end - node.start)
                );
            }
            let texts = page.text_nodes.len();
            if texts > 1 {
                let end = page.current(texts / 2).len();
                assert!(page.splice(texts / 2, end, 0, "ab"));
                assert!(page.splice(texts / 2, 0, 1, "é"));
                let spliced = page.spliced.get(texts / 2).cloned().flatten();
                let (chars, utf8) = spliced.unwrap();
                assert_eq!(chars.iter().collect::<String>(), utf8);
                assert_eq!(page.lengths.get(texts / 2), Some(&chars.len()));
            }
            for needle in ["ab", "a", "😀", "b a", "é日", "", "zz"] {
                let needle: Vec<char> = needle.chars().collect();
                for ordinal in 0..=texts {
                    let direct: usize = (0..ordinal).map(|j| count(page.current(j), &needle)).sum();
                    assert_eq!(
                        page.count_before(ordinal, &needle),
                        direct,
                        "{text:?} {needle:?}"
                    );
                }
            }
        }
    }

    /// The byte length of the first code points equals a count by `char_indices`, at every
    /// count, in text mixing one- to four-byte code points.
    #[test]
    fn utf8_length_of_leading_code_points() {
        let text = "aé日😀".repeat(7) + "xyz" + &"ü".repeat(20);
        let chars = text.chars().count();
        for n in 0..=chars + 2 {
            let expected = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
            assert_eq!(utf8_len(text.as_bytes(), n), expected, "{n}");
        }
    }
}
