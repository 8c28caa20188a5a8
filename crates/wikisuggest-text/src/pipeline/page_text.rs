//! Offsets in the page: where each top-level node lies in the page's UTF-8 text and code
//! points, the current text of each text node as links are spliced in, and slices of the
//! page by code point ranges.

use memchr::memmem;

use crate::wikitext::{Node, NodeKind};

/// Bytes of page per top-level node that [`PageText::new`] sizes its lists for.
const NODE_EVERY: usize = 32;

/// Where the top-level nodes lie in the page's UTF-8 text, and the current value of each
/// text node: a node's text stays a slice of the page until a link is spliced into it.
///
/// The partition gives every node's span in bytes and in code points, so node texts are
/// never copied nor decoded, and a code point offset is found from the node holding it.
pub(super) struct PageText<'a> {
    text: &'a str,
    /// Code point and byte offset of the start of each node, then of the end of the last.
    starts: Vec<(usize, usize)>,
    /// Per top-level node: its ordinal among the text nodes, if it is one.
    pub(super) ordinal_of: Vec<Option<usize>>,
    /// Per text node: its node index.
    text_nodes: Vec<usize>,
    /// Per text node: its text once a link was spliced into it (`None`: the original).
    spliced: Vec<Option<String>>,
    /// The text nodes with a link spliced in, ascending.
    spliced_nodes: Vec<usize>,
    /// Per text node: the length of its current text in code points.
    pub(super) lengths: Vec<usize>,
    /// The original texts of the first text nodes, each followed by a NUL, and where
    /// each starts in it (then the end): extended as counts reach further.
    texts: String,
    texts_at: Vec<usize>,
}

impl<'a> PageText<'a> {
    /// The page `text`, whose nodes are then given in order by [`Self::push`].
    pub(super) fn new(text: &'a str) -> Self {
        // Sized for a node every few dozen bytes (text and other nodes alternate), so that
        // the lists seldom grow as the nodes come.
        let nodes = text.len() / NODE_EVERY + 16;
        let mut starts = Vec::with_capacity(nodes + 1);
        starts.push((0, 0));
        Self {
            text,
            starts,
            ordinal_of: Vec::with_capacity(nodes),
            spliced: Vec::with_capacity(nodes / 2),
            text_nodes: Vec::with_capacity(nodes / 2),
            spliced_nodes: Vec::new(),
            lengths: Vec::with_capacity(nodes / 2),
            texts: String::new(),
            texts_at: vec![0],
        }
    }

    /// The page's next node (they partition it, in order, from its start).
    pub(super) fn push(&mut self, node: &Node) {
        let index = self.ordinal_of.len();
        // The last entry is where the nodes end, which is where this one starts.
        if let Some(last) = self.starts.last_mut() {
            *last = (node.start, node.byte_start);
        }
        self.starts
            .push((node.end, node.byte_end.min(self.text.len())));
        if node.kind == NodeKind::Text {
            self.ordinal_of.push(Some(self.text_nodes.len()));
            self.text_nodes.push(index);
            self.lengths.push(node.end - node.start);
            self.spliced.push(None);
        } else {
            self.ordinal_of.push(None);
        }
    }

    /// Byte range of node `index`.
    pub(super) fn node_bytes(&self, index: usize) -> std::ops::Range<usize> {
        let at = |i: usize| self.starts.get(i).map_or(self.text.len(), |s| s.1);
        at(index)..at(index + 1)
    }

    /// Code point range of node `index`.
    pub(super) fn node_chars(&self, index: usize) -> std::ops::Range<usize> {
        let last = self.starts.last().map_or(0, |s| s.0);
        let at = |i: usize| self.starts.get(i).map_or(last, |s| s.0);
        at(index)..at(index + 1)
    }

    /// The original text of text node `ordinal`.
    pub(super) fn original_str(&self, ordinal: usize) -> &'a str {
        let index = self.text_nodes.get(ordinal).copied().unwrap_or(usize::MAX);
        self.text.get(self.node_bytes(index)).unwrap_or_default()
    }

    /// The length in code points of the original text of text node `ordinal`.
    pub(super) fn original_len(&self, ordinal: usize) -> usize {
        let index = self.text_nodes.get(ordinal).copied().unwrap_or(usize::MAX);
        self.node_chars(index).len()
    }

    /// The current text of text node `ordinal`.
    pub(super) fn current_str(&self, ordinal: usize) -> &str {
        match self.spliced.get(ordinal) {
            Some(Some(text)) => text,
            _ => self.original_str(ordinal),
        }
    }

    /// Replaces bytes `at..at + len` of the current text of node `ordinal` (a span on
    /// character boundaries) by `replacement` (the original is copied on first use);
    /// `false` for no such node or span.
    pub(super) fn splice(
        &mut self,
        ordinal: usize,
        at: usize,
        len: usize,
        replacement: &str,
    ) -> bool {
        let original = self.original_str(ordinal);
        let Some(slot) = self.spliced.get_mut(ordinal) else {
            return false;
        };
        let current: &str = slot.as_deref().unwrap_or(original);
        let Some(removed) = current.get(at..at + len) else {
            return false;
        };
        let removed = removed.chars().count();
        if slot.is_none() {
            let at = self.spliced_nodes.partition_point(|&j| j < ordinal);
            self.spliced_nodes.insert(at, ordinal);
        }
        let text = slot.get_or_insert_with(|| original.to_owned());
        text.replace_range(at..at + len, replacement);
        if let Some(length) = self.lengths.get_mut(ordinal) {
            *length = *length - removed + replacement.chars().count();
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
    pub(super) fn count_before(&mut self, ordinal: usize, needle: &str) -> usize {
        if needle.is_empty() || needle.contains('\0') {
            return (0..ordinal)
                .map(|j| count_str(self.current_str(j), needle))
                .sum();
        }
        let finder = memmem::Finder::new(needle.as_bytes());
        // `str.count` is leftmost non-overlapping, as `find_iter`.
        let spliced: usize = self
            .spliced_nodes
            .iter()
            .take_while(|&&j| j < ordinal)
            .filter_map(|&j| self.spliced.get(j)?.as_ref())
            .map(|text| finder.find_iter(text.as_bytes()).count())
            .sum();
        // The texts of the nodes before `ordinal`, joined once: later counts reuse them.
        for j in self.texts_at.len() - 1..ordinal.min(self.text_nodes.len()) {
            let original = self.original_str(j);
            self.texts.push_str(original);
            self.texts.push('\0');
            self.texts_at.push(self.texts.len());
        }
        let (texts, starts) = (&self.texts, &self.texts_at);
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
                from = hit + needle.len();
            } else {
                // Counted from its current text above: go on at the next node.
                from = starts.get(j + 1).copied().unwrap_or(end).max(hit + 1);
            }
        }
        n + spliced
    }
}

/// Python's `str.count`: non-overlapping occurrences, and `len + 1` (in code points) for an
/// empty needle.
pub(super) fn count_str(hay: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return hay.chars().count() + 1;
    }
    memmem::find_iter(hay.as_bytes(), needle.as_bytes()).count()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::matching::count;
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
            let mut page = PageText::new(text);
            for node in doc.nodes() {
                page.push(node);
            }
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
                let end = page.current_str(texts / 2).len();
                assert!(page.splice(texts / 2, end, 0, "ab"));
                let first = page.current_str(texts / 2).chars().next().unwrap();
                assert!(page.splice(texts / 2, 0, first.len_utf8(), "é"));
                let spliced = page.spliced.get(texts / 2).cloned().flatten().unwrap();
                assert_eq!(page.current_str(texts / 2), spliced);
                assert_eq!(page.lengths.get(texts / 2), Some(&spliced.chars().count()));
                assert!(!page.splice(texts / 2, 1, 0, "x") || spliced.is_char_boundary(1));
            }
            for needle in ["ab", "a", "😀", "b a", "é日", "", "zz"] {
                let chars: Vec<char> = needle.chars().collect();
                for ordinal in 0..=texts {
                    let direct: usize = (0..ordinal)
                        .map(|j| {
                            let current: Vec<char> = page.current_str(j).chars().collect();
                            count(&current, &chars)
                        })
                        .sum();
                    assert_eq!(
                        page.count_before(ordinal, needle),
                        direct,
                        "{text:?} {needle:?}"
                    );
                }
            }
        }
    }
}
