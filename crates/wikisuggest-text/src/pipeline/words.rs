//! The n-grams of a text node: its sentences and word tokens, the 1- to 5-word grams of
//! each position asked of the model together, and the anchors among them, in the order the
//! pass tries them.

use std::borrow::Cow;

use memchr::memmem;

use super::model::{GramRow, LinkModel, MAX_GRAM};
use super::{Budget, HashMap};
use crate::pyunicode;
use crate::tokenize::MwTokenizer;

/// Insertion-ordered map from lowercase gram to its last original spelling.
///
/// One map serves every text node of a page: [`Mentions::clear`] keeps its strings and
/// table, so a node's mentions cost no allocation once earlier nodes had as many. The
/// table maps a key's hash to its first entry; entries with the same hash are chained.
#[derive(Default)]
pub(super) struct Mentions {
    /// `(key, original)` per entry; only the first `len` are in use.
    order: Vec<(String, String)>,
    len: usize,
    /// Per entry: the next entry with the same hash (`usize::MAX`: none).
    next: Vec<usize>,
    index: HashMap<u64, usize>,
    hasher: foldhash::fast::RandomState,
}

impl Mentions {
    /// Empties the map.
    pub(super) fn clear(&mut self) {
        self.len = 0;
        self.next.clear();
        self.index.clear();
    }

    /// The `(key, original)` pairs in insertion order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        (self.order.iter().take(self.len)).map(|(key, original)| (key.as_str(), original.as_str()))
    }

    /// Records the anchor `gram` under its lowercase key. Grams that are not anchors are
    /// never recorded: the pass would skip them anyway, and most grams are not anchors.
    pub(super) fn insert(&mut self, gram: &str, key: &str) {
        use std::hash::BuildHasher;
        let hash = self.hasher.hash_one(key);
        let mut at = self.index.get(&hash).copied().unwrap_or(usize::MAX);
        while let Some((entry, original)) = self.order.get_mut(at).filter(|_| at < self.len) {
            if entry == key {
                if original != gram {
                    original.clear();
                    original.push_str(gram);
                }
                return;
            }
            at = self.next.get(at).copied().unwrap_or(usize::MAX);
        }
        let slot = self.len;
        match self.order.get_mut(slot) {
            Some((entry, original)) => {
                entry.clear();
                entry.push_str(key);
                original.clear();
                original.push_str(gram);
            }
            None => self.order.push((key.to_owned(), gram.to_owned())),
        }
        self.len += 1;
        self.next
            .push(self.index.insert(hash, slot).unwrap_or(usize::MAX));
    }
}

/// The word tokens of one sentence, joined once, so that every n-gram is a slice of the
/// joined text rather than a string built token by token. On whitespace languages the
/// joined text is the sentence itself.
///
/// The lowercase keys are slices of the joined lowercase tokens: Python's `str.lower()`
/// maps every character on its own except the capital sigma, whose form depends on its
/// neighbours; a sentence holding one lowercases each gram whole instead.
///
/// The arrays live in [`WordBuffers`], reused from one sentence to the next.
pub(super) struct Words<'a> {
    /// Per token: its place in `grams` (the number of tokens before it that are not a
    /// single space).
    tokens: &'a [usize],
    joined: &'a str,
    /// `joined[bounds[i]..bounds[i + 1]]` is token `i`.
    bounds: &'a [usize],
    /// The lowercase tokens joined, with their bounds.
    lowered: Option<(&'a str, &'a [usize])>,
    /// The tokens that are not a single space, ascending: the tokens an n-gram counts.
    grams: &'a [usize],
}

/// The arrays behind [`Words`], kept from one sentence to the next.
#[derive(Default)]
pub(super) struct WordBuffers {
    places: Vec<usize>,
    joined: String,
    bounds: Vec<usize>,
    lowered: String,
    lowered_bounds: Vec<usize>,
    grams: Vec<usize>,
}

impl<'a> Words<'a> {
    /// The words of `sentence`, in `buffers`.
    pub(super) fn new(
        tokenizer: &MwTokenizer,
        sentence: &'a str,
        buffers: &'a mut WordBuffers,
    ) -> Self {
        buffers.bounds.clear();
        buffers.bounds.push(0);
        match tokenizer.joined_words(sentence, &mut buffers.bounds) {
            Cow::Borrowed(joined) => Self::index(Some(joined), buffers),
            Cow::Owned(joined) => {
                buffers.joined = joined;
                Self::index(None, buffers)
            }
        }
    }

    /// The words of given tokens.
    #[cfg(test)]
    pub(super) fn from_tokens(tokens: &[&str], buffers: &'a mut WordBuffers) -> Self {
        buffers.joined = tokens.concat();
        buffers.bounds.clear();
        buffers.bounds.push(0);
        let mut end = 0;
        for token in tokens {
            end += token.len();
            buffers.bounds.push(end);
        }
        Self::index(None, buffers)
    }

    /// The words of the tokens in `buffers.bounds`, of `joined` (`None`: `buffers.joined`).
    pub(super) fn index(joined: Option<&'a str>, buffers: &'a mut WordBuffers) -> Self {
        let WordBuffers {
            places,
            joined: owned,
            bounds,
            lowered,
            lowered_bounds,
            grams,
        } = buffers;
        let joined: &'a str = joined.unwrap_or(owned);
        places.clear();
        grams.clear();
        for (i, token) in bounds.windows(2).enumerate() {
            places.push(grams.len());
            let single_space = matches!(token, [a, b] if b - a == 1)
                && token.first().and_then(|&a| joined.as_bytes().get(a)) == Some(&b' ');
            if !single_space {
                grams.push(i);
            }
        }
        lowered.clear();
        let lowered = if joined.is_ascii() {
            // ASCII lowercases character by character: the whole text at once.
            lowered.push_str(joined);
            lowered.make_ascii_lowercase();
            Some((&**lowered, &**bounds))
        } else {
            let mut sigma = [0u8; 4];
            let sigma = pyunicode::CAPITAL_SIGMA.encode_utf8(&mut sigma).as_bytes();
            if memmem::find(joined.as_bytes(), sigma).is_none() {
                lowered_bounds.clear();
                lowered_bounds.push(0);
                for token in bounds.windows(2) {
                    if let [a, b] = *token {
                        pyunicode::lower_into(lowered, joined.get(a..b).unwrap_or_default());
                    }
                    lowered_bounds.push(lowered.len());
                }
                Some((&**lowered, &**lowered_bounds))
            } else {
                None
            }
        };
        Self {
            tokens: places,
            joined,
            bounds,
            lowered,
            grams,
        }
    }

    /// The last tokens of the 1- to 5-word grams starting at token `start`, shortest
    /// first: a gram starts at any token other than a single space and ends once it holds
    /// `n` tokens that are not a single space.
    pub(super) fn gram_ends(&self, start: usize) -> impl Iterator<Item = usize> + '_ {
        let place = self.tokens.get(start).copied().unwrap_or(usize::MAX);
        let from = match self.grams.get(place) {
            Some(&token) if token == start => place,
            _ => self.grams.len(),
        };
        self.grams
            .get(from..)
            .unwrap_or_default()
            .iter()
            .copied()
            .take(MAX_GRAM)
    }

    /// The text and lowercase key of tokens `start..=last`.
    pub(super) fn gram(&self, start: usize, last: usize) -> Option<(&str, Cow<'_, str>)> {
        let span = |bounds: &[usize]| Some(*bounds.get(start)?..*bounds.get(last + 1)?);
        let gram = self.joined.get(span(self.bounds)?)?;
        let key = match self.lowered {
            Some((lowered, bounds)) => Cow::Borrowed(lowered.get(span(bounds)?)?),
            None => Cow::Owned(pyunicode::lower(gram)),
        };
        Some((gram, key))
    }

    /// Whether each gram is an anchor, by start token and length (`[start][n - 1]`), in
    /// `buffers.table`. The grams of the whole sentence are asked for at once, in rows of
    /// one start each: their keys are prefixes of the longest one's.
    pub(super) fn anchors<'b>(
        &self,
        model: &dyn LinkModel,
        buffers: &'b mut AnchorBuffers,
    ) -> &'b [[bool; MAX_GRAM]] {
        let AnchorBuffers {
            rows,
            answers,
            table,
        } = buffers;
        table.clear();
        let Some((lowered, bounds)) = &self.lowered else {
            // A capital sigma: keys are lowercased whole and need not be prefixes.
            table.extend((0..self.tokens.len()).map(|start| {
                let mut row = [false; MAX_GRAM];
                let grams = self
                    .gram_ends(start)
                    .filter_map(|last| self.gram(start, last));
                for (slot, (_, key)) in row.iter_mut().zip(grams) {
                    *slot = model.is_anchor(&key);
                }
                row
            }));
            return table;
        };
        // A gram starts at a token other than a single space and ends after `n` such
        // tokens (see `gram_ends`): the grams of each start are the next `MAX_GRAM` entries
        // of `grams`.
        let words = self.grams;
        rows.clear();
        for (k, &start) in words.iter().enumerate() {
            let start = bounds.get(start).copied().unwrap_or(0);
            // Filled where it lies in `rows`: a row built aside and then pushed is copied
            // back from stores the processor has not finished, which stalls the copy.
            rows.push(GramRow {
                start,
                ..GramRow::default()
            });
            let Some(row) = rows.last_mut() else {
                continue;
            };
            let lasts = words.get(k..).unwrap_or_default();
            for (end, &last) in row.ends.iter_mut().zip(lasts) {
                *end = bounds.get(last + 1).copied().unwrap_or(start);
            }
            row.len = lasts.len().min(MAX_GRAM);
        }
        answers.clear();
        model.anchor_rows(lowered, rows, answers);
        table.resize(self.tokens.len(), [false; MAX_GRAM]);
        for (&start, &answer) in words.iter().zip(answers.iter()) {
            if let Some(row) = table.get_mut(start) {
                *row = answer;
            }
        }
        table
    }

    /// Calls `emit(gram, key)` with the `n`-word gram from each start token in `starts`
    /// (ascending: see [`anchor_starts`]), in that order.
    pub(super) fn anchor_grams(
        &self,
        n: usize,
        starts: &[usize],
        mut emit: impl FnMut(&str, &str) -> bool,
    ) -> bool {
        for &start in starts {
            let Some((gram, key)) = self
                .gram_ends(start)
                .nth(n - 1)
                .and_then(|last| self.gram(start, last))
            else {
                continue;
            };
            if !emit(gram, &key) {
                return false;
            }
        }
        true
    }
}

/// The start tokens of the anchors that `anchors` (the table of [`Words::anchors`]) marks,
/// by gram length: `out[n - 1]` holds those of the `n`-word grams, ascending. One pass
/// over the table, rather than one per length.
pub(super) fn anchor_starts(anchors: &[[bool; MAX_GRAM]], out: &mut [Vec<usize>; MAX_GRAM]) {
    for list in out.iter_mut() {
        list.clear();
    }
    for (start, row) in anchors.iter().enumerate() {
        if *row == [false; MAX_GRAM] {
            continue;
        }
        for (list, &anchor) in out.iter_mut().zip(row) {
            if anchor {
                list.push(start);
            }
        }
    }
}

/// The arrays behind [`Words::anchors`], kept from one sentence to the next.
#[derive(Default)]
pub(super) struct AnchorBuffers {
    rows: Vec<GramRow>,
    answers: Vec<[bool; MAX_GRAM]>,
    table: Vec<[bool; MAX_GRAM]>,
}

/// Buffers of [`node_mentions`], kept from one text node to the next.
#[derive(Default)]
pub(super) struct NodeBuffers {
    /// The node's sentences, as byte ranges.
    sentences: Vec<(usize, usize)>,
    words: WordBuffers,
    anchors: AnchorBuffers,
    /// The anchors' start tokens by length (see [`anchor_starts`]).
    starts: [Vec<usize>; MAX_GRAM],
    /// The node's mentions.
    pub(super) mentions: Mentions,
}

/// The anchor grams of a text node, sentence by sentence, longest grams first, into
/// `buffers.mentions`; `None` when the budget ran out.
pub(super) fn node_mentions(
    model: &dyn LinkModel,
    tokenizer: &MwTokenizer,
    text: &str,
    budget: &Budget<'_>,
    buffers: &mut NodeBuffers,
) -> Option<()> {
    let NodeBuffers {
        sentences,
        words: word_buffers,
        anchors: anchor_buffers,
        starts,
        mentions,
    } = buffers;
    mentions.clear();
    sentences.clear();
    tokenizer.node_sentence_ranges(text, sentences);
    for &(start, end) in sentences.iter() {
        // Checked per sentence too: a sentence without anchors emits no gram.
        if budget.spent() {
            return None;
        }
        let sentence = text.get(start..end).unwrap_or_default();
        let words = Words::new(tokenizer, sentence, word_buffers);
        anchor_starts(words.anchors(model, anchor_buffers), starts);
        for n in (1..=MAX_GRAM).rev() {
            let of_length = starts.get(n - 1).map_or(&[][..], Vec::as_slice);
            let complete = words.anchor_grams(n, of_length, |gram, key| {
                if budget.spent() {
                    return false;
                }
                mentions.insert(gram, key);
                true
            });
            if !complete {
                return None;
            }
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gram keys built from per-token lowercase forms equal `str.lower()` of the whole gram,
    /// including around a capital sigma, whose form depends on its neighbours.
    #[test]
    fn gram_keys_equal_whole_gram_lowercase() {
        let sentences: [&[&str]; 4] = [
            &["The", " ", "Big", " ", "CAT", "."],
            &["İstanbul", " ", "ΚΑΙ", " ", "Straße"],
            // Per token, "Σ" alone would be "σ"; after "Α" in one gram it is final: "ς".
            &["Α", "Σ", " ", "ΟΔΟΣ", "'", "Α"],
            &["ΣΑ", " ", "Σ"],
        ];
        for tokens in sentences {
            let mut buffers = WordBuffers::default();
            let words = Words::from_tokens(tokens, &mut buffers);
            let every_gram = vec![[true; MAX_GRAM]; tokens.len()];
            let mut starts = Default::default();
            anchor_starts(&every_gram, &mut starts);
            for n in 1..=MAX_GRAM {
                let mut seen = 0;
                words.anchor_grams(n, &starts[n - 1], |gram, key| {
                    assert_eq!(key, pyunicode::lower(gram), "{gram:?}");
                    seen += 1;
                    true
                });
                let words_in_sentence = tokens.iter().filter(|t| **t != " ").count();
                assert_eq!(seen > 0, n <= words_in_sentence);
            }
        }
        assert_eq!(pyunicode::lower("ΑΣ"), "ας");
    }

    /// The mention map keeps insertion order and the last spelling of each key, and starts
    /// empty again after `clear` while reusing its entries.
    #[test]
    fn mentions_keep_order_and_last_spelling_across_nodes() {
        let mut mentions = Mentions::default();
        for (gram, key) in [("Cat", "cat"), ("New York", "new york"), ("CAT", "cat")] {
            mentions.insert(gram, key);
        }
        let got: Vec<(&str, &str)> = mentions.iter().collect();
        assert_eq!(got, [("cat", "CAT"), ("new york", "New York")]);
        mentions.clear();
        assert_eq!(mentions.iter().count(), 0);
        for (gram, key) in [("dog", "dog"), ("Cat", "cat"), ("Dog", "dog"), ("a", "a")] {
            mentions.insert(gram, key);
        }
        let got: Vec<(&str, &str)> = mentions.iter().collect();
        assert_eq!(got, [("dog", "Dog"), ("cat", "Cat"), ("a", "a")]);
    }
}
