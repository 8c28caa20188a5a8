//! BPE segmentation of normalized text, as the library's `bpe::Model::Encode`:
//! start from single characters (user-defined symbols stay whole and frozen), then
//! repeatedly merge the adjacent pair whose concatenation is the highest-scoring
//! piece, the leftmost pair on ties, until no adjacent pair forms a piece. Pieces of
//! type UNUSED may be formed as intermediates and are split back afterwards.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use foldhash::{HashMap, HashMapExt};

use crate::matcher::PrefixMatcher;

#[derive(Debug, Clone, Copy)]
struct Symbol {
    prev: Option<usize>,
    next: Option<usize>,
    freeze: bool,
    start: usize,
    len: usize,
}

/// A candidate merge of symbols `left` and `right` into a piece of `size` bytes.
///
/// Ordered by integers only: the piece's score mapped so that integer order is float
/// order, then `left` reversed, so the highest score comes first and the leftmost pair
/// among equal scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pair {
    order: (u32, Reverse<usize>),
    right: usize,
    size: usize,
}

impl Pair {
    fn new(score: f32, left: usize, right: usize, size: usize) -> Self {
        // `+ 0.0` turns -0.0 into 0.0, which the library compares as equal.
        let bits = (score + 0.0).to_bits();
        let monotone = if bits >> 31 == 1 {
            !bits
        } else {
            bits | (1 << 31)
        };
        Self {
            order: (monotone, Reverse(left)),
            right,
            size,
        }
    }

    fn left(&self) -> usize {
        self.order.1.0
    }
}

impl Ord for Pair {
    fn cmp(&self, other: &Self) -> Ordering {
        self.order.cmp(&other.order)
    }
}

impl PartialOrd for Pair {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// What merging asks of the model's vocabulary.
pub(crate) trait Vocabulary {
    /// The id of a piece BPE may form, if `piece` is one.
    fn normal_piece_id(&self, piece: &str) -> Option<u32>;
    /// `PieceToId`: reserved pieces first, then the others, else the unknown id.
    fn piece_to_id(&self, piece: &str) -> u32;
    fn score(&self, id: u32) -> f32;
    fn is_unused(&self, id: u32) -> bool;
}

struct Merger<'m, 't, V> {
    model: &'m V,
    text: &'t str,
    symbols: Vec<Symbol>,
    agenda: BinaryHeap<Pair>,
    /// For every UNUSED piece formed: the two pieces it was made of.
    rev_merge: HashMap<&'t str, (&'t str, &'t str)>,
}

impl<'t, V: Vocabulary> Merger<'_, 't, V> {
    fn piece(&self, symbol: usize) -> &'t str {
        self.symbols
            .get(symbol)
            .and_then(|s| self.text.get(s.start..s.start + s.len))
            .unwrap_or("")
    }

    fn maybe_add_pair(&mut self, left: Option<usize>, right: Option<usize>) {
        let (Some(left), Some(right)) = (left, right) else {
            return;
        };
        let (Some(l), Some(r)) = (self.symbols.get(left), self.symbols.get(right)) else {
            return;
        };
        if l.freeze || r.freeze {
            return;
        }
        let (start, size) = (l.start, l.len + r.len);
        let Some(merged) = self.text.get(start..start + size) else {
            return;
        };
        let Some(id) = self.model.normal_piece_id(merged) else {
            return;
        };
        self.agenda
            .push(Pair::new(self.model.score(id), left, right, size));
        if self.model.is_unused(id) {
            let parts = (self.piece(left), self.piece(right));
            self.rev_merge.insert(merged, parts);
        }
    }

    fn resegment(&self, piece: &'t str, out: &mut Vec<(&'t str, u32)>) {
        let id = self.model.piece_to_id(piece);
        if self.model.is_unused(id)
            && let Some(&(left, right)) = self.rev_merge.get(piece)
        {
            self.resegment(left, out);
            self.resegment(right, out);
            return;
        }
        out.push((piece, id));
    }
}

/// The pieces of `normalized` with their ids (the unknown id for characters outside
/// the vocabulary).
pub(crate) fn encode<'t, V: Vocabulary>(
    model: &V,
    matcher: &PrefixMatcher,
    normalized: &'t str,
) -> Vec<(&'t str, u32)> {
    let mut symbols = Vec::with_capacity(normalized.len());
    let mut start = 0;
    while start < normalized.len() {
        let rest = normalized.get(start..).unwrap_or("");
        let (len, freeze) = match matcher.longest_match(rest) {
            Some(len) => (len, true),
            None => (rest.chars().next().map_or(1, char::len_utf8), false),
        };
        let index = symbols.len();
        symbols.push(Symbol {
            prev: index.checked_sub(1),
            next: (start + len < normalized.len()).then_some(index + 1),
            freeze,
            start,
            len,
        });
        start += len;
    }
    if symbols.is_empty() {
        return Vec::new();
    }
    let mut merger = Merger {
        model,
        text: normalized,
        symbols,
        agenda: BinaryHeap::new(),
        rev_merge: HashMap::new(),
    };
    for i in 1..merger.symbols.len() {
        merger.maybe_add_pair(Some(i - 1), Some(i));
    }
    while let Some(top) = merger.agenda.pop() {
        let left = top.left();
        let (Some(&l), Some(&r)) = (merger.symbols.get(left), merger.symbols.get(top.right)) else {
            continue;
        };
        // A pair whose symbols have since been merged elsewhere is stale.
        if l.len == 0 || r.len == 0 || l.len + r.len != top.size {
            continue;
        }
        if let Some(s) = merger.symbols.get_mut(left) {
            s.len = top.size;
            s.next = r.next;
        }
        if let Some(next) = r.next.and_then(|n| merger.symbols.get_mut(n)) {
            next.prev = Some(left);
        }
        if let Some(s) = merger.symbols.get_mut(top.right) {
            s.len = 0;
        }
        merger.maybe_add_pair(l.prev, Some(left));
        merger.maybe_add_pair(Some(left), r.next);
    }
    let mut out = Vec::new();
    let mut index = Some(0);
    while let Some(i) = index {
        let piece = merger.piece(i);
        merger.resegment(piece, &mut out);
        index = merger.symbols.get(i).and_then(|s| s.next);
    }
    out
}
