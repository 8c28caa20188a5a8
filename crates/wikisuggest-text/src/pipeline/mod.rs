//! The sequential link placement pass of the production engine
//! (`process_page`), written against [`LinkModel`] so that any dataset and
//! scorer can plug in.
//!
//! The pass is deliberately faithful to upstream, including behaviour that
//! looks accidental (no word boundaries, first-occurrence node offsets,
//! raw-substring `match_index`, discovery order, `0` meaning unlimited …);
//! see the spec's quirk catalogue.  Scores are pure functions of
//! `(page, mention, candidate)`, so implementations may batch or cache them.

mod filter;
mod matching;
mod pyfloat;

use std::borrow::Cow;
use std::collections::{HashMap as StdHashMap, HashSet as StdHashSet};

use memchr::memmem;

// The pass hashes every n-gram of the page; a fast non-cryptographic hasher matters there,
// and no key comes from an adversary who could profit from collisions beyond slowing down
// their own request.
type HashMap<K, V> = StdHashMap<K, V, foldhash::fast::RandomState>;
type HashSet<K> = StdHashSet<K, foldhash::fast::RandomState>;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use filter::{LinkFilter, Placement};
pub use pyfloat::format_f32;

use crate::error::TextError;
use crate::pyunicode;
use crate::sections::{SectionExclusion, sections};
use crate::title::{normalise_anchor, normalise_title};
use crate::tokenize::MwTokenizer;
use crate::wikitext::{NodeKind, ParseLimits, Wikitext, wikilink_ranges_bounded};
use matching::{count, expand_template, find_first, find_mention, find_mention_str};

/// One candidate target of an anchor, in the dataset's stored order.
///
/// The title may borrow from the model: a dataset read in place hands out its own titles,
/// and the pass copies only the one it links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate<'m> {
    /// Target article title.
    pub title: Cow<'m, str>,
    /// Number of times the anchor links to it.
    pub count: u64,
}

/// The datasets and model of one wiki.
pub trait LinkModel: Send + Sync {
    /// Candidates of an anchor (the exact, Python-lowercased n-gram) in
    /// stored order, or `None` when it is not an anchor.
    fn candidates(&self, anchor: &str) -> Option<Vec<Candidate<'_>>>;

    /// Whether `anchor` has candidates; called for every n-gram of the page, so
    /// implementations should answer without building the candidate list.
    fn is_anchor(&self, anchor: &str) -> bool {
        self.candidates(anchor).is_some()
    }

    /// [`LinkModel::is_anchor`] for the prefixes `text[..end]`, `end` in `ends`
    /// (ascending), appended to `out` in order: the 1- to 5-word grams from one position
    /// are prefixes of the longest, which lets an implementation share work between them.
    fn anchor_prefixes(&self, text: &str, ends: &[usize], out: &mut Vec<bool>) {
        out.extend(
            ends.iter()
                .map(|&end| text.get(..end).is_some_and(|key| self.is_anchor(key))),
        );
    }

    /// [`LinkModel::anchor_prefixes`] for many positions of one text at once, one answer
    /// row per [`GramRow`] appended to `out` (unused slots `false`). Asking for a whole
    /// sentence lets an implementation overlap the table look-ups of its positions instead
    /// of waiting for each in turn.
    fn anchor_rows(&self, text: &str, rows: &[GramRow], out: &mut Vec<[bool; MAX_GRAM]>) {
        let mut ends = Vec::with_capacity(MAX_GRAM);
        let mut answers = Vec::with_capacity(MAX_GRAM);
        for row in rows {
            let mut answer = [false; MAX_GRAM];
            let grams = row.ends.get(..row.len).unwrap_or_default();
            let key = grams.last().and_then(|&end| text.get(row.start..end));
            if let Some(key) = key.filter(|_| grams.iter().all(|&end| end >= row.start)) {
                ends.clear();
                ends.extend(grams.iter().map(|&end| end - row.start));
                answers.clear();
                self.anchor_prefixes(key, &ends, &mut answers);
                for (slot, &a) in answer.iter_mut().zip(&answers) {
                    *slot = a;
                }
            }
            out.push(answer);
        }
    }

    /// The target of a redirect title, if it is one (one hop).
    fn redirect(&self, title: &str) -> Option<String>;

    /// Whether `title` is an article (a key of `pageids`).
    fn has_page(&self, title: &str) -> bool;

    /// Model probabilities (float32) for `candidates` of `mention` on the
    /// page `page_title`, one per candidate, in order.  `candidates` is the
    /// top-10 slice; features that need the full candidate set can ask
    /// [`LinkModel::candidates`].
    fn scores(&self, page_title: &str, mention: &str, candidates: &[Candidate<'_>]) -> Vec<f32>;
}

/// The 1- to [`MAX_GRAM`]-word grams from one position of a text (see
/// [`LinkModel::anchor_rows`]): their keys are `text[start..end]` for each `end` in
/// `ends[..len]`, ascending, so each is a prefix of the next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GramRow {
    /// Byte offset of the grams' first token.
    pub start: usize,
    /// Byte offsets where the 1-, 2-, … word grams end.
    pub ends: [usize; MAX_GRAM],
    /// How many of `ends` are grams.
    pub len: usize,
}

/// Parameters of one request.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The page source.
    pub wikitext: &'a str,
    /// The page title, already in `normalise_title` form.
    pub page_title: &'a str,
    /// Language code for tokenization (`en`, `bat_smg` …).
    pub language_code: &'a str,
    /// Minimum probability (a score equal to it is accepted).
    pub threshold: f64,
    /// Stop after exactly this many links; `0` and negative values never
    /// match, so they mean unlimited.
    pub max_recommendations: i64,
    /// Section titles to skip (case-folded exact match; `%LEAD%` for the lead).
    pub sections_to_exclude: &'a [String],
    /// Wall-clock budget checked before each n-gram (upstream: 29 s).
    pub time_budget: Option<Duration>,
}

/// One recommended link, in discovery order.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRecommendation {
    /// Position in the result list.
    pub link_index: usize,
    /// The mention as written.
    pub link_text: String,
    /// Target article title.
    pub link_target: String,
    /// Model probability.
    pub score: f32,
    /// Code point offset in the wikitext.
    pub wikitext_offset: usize,
    /// Occurrences of `link_text` before the link, counted in top-level text.
    pub match_index: usize,
    /// Up to 10 code points of the same text node before the mention.
    pub context_before: String,
    /// Up to 10 code points of the same text node after the mention.
    pub context_after: String,
}

/// Why processing ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The page was processed completely.
    Complete,
    /// `max_recommendations` links were found.
    MaxRecommendations,
    /// The time budget ran out; the links found so far are returned.
    TimeBudget,
}

impl Stop {
    /// The message upstream logs as `info` (verbatim, including its
    /// unformatted placeholder and missing space).
    pub fn info(self) -> &'static str {
        match self {
            Stop::Complete => "",
            Stop::MaxRecommendations => {
                "Stopping page processing as max recommendations limit {maxrec} reached."
            }
            Stop::TimeBudget => {
                "Stopping page processing as maximum processing time 30seconds reached"
            }
        }
    }
}

/// The result of [`recommend`].
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendations {
    /// Links in discovery order (not sorted by offset).
    pub links: Vec<LinkRecommendation>,
    /// How processing ended.
    pub stop: Stop,
}

/// Context window size in code points.
const CONTEXT: usize = 10;
/// Longest n-gram.
pub const MAX_GRAM: usize = 5;
/// Candidates scored per mention.
const TOP_CANDIDATES: usize = 10;

/// Where the top-level nodes lie in the page's UTF-8 text, and the current value of each
/// text node: a node's text stays a slice of the page until a link is spliced into it.
///
/// Node byte offsets are found in one pass (a node of ASCII text costs one `is_ascii` check),
/// so node texts are never copied, and a code point offset is found from the node holding it.
struct PageText<'a> {
    text: &'a str,
    chars: &'a [char],
    /// Code point and byte offset of the start of each node, then of the end of the last.
    starts: Vec<(usize, usize)>,
    /// Per top-level node: its ordinal among the text nodes, if it is one.
    ordinal_of: Vec<Option<usize>>,
    /// Per text node: its node index.
    text_nodes: Vec<usize>,
    /// Per text node: its text once a link was spliced into it (`None`: the original), as
    /// code points and as UTF-8.
    spliced: Vec<Option<(Vec<char>, String)>>,
    /// The text nodes with a link spliced in, ascending.
    spliced_nodes: Vec<usize>,
    /// Per text node: the length of its current text in code points.
    lengths: Vec<usize>,
    /// The original texts of the text nodes, each followed by a NUL, and where each
    /// starts in it (then the end): built at the first count.
    texts: std::cell::OnceCell<(String, Vec<usize>)>,
}

impl<'a> PageText<'a> {
    /// `text` is `chars` as UTF-8; `nodes` partition `chars` in order.
    fn new(text: &'a str, chars: &'a [char], nodes: &[crate::wikitext::Node]) -> Self {
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
    fn node_bytes(&self, index: usize) -> std::ops::Range<usize> {
        let at = |i: usize| self.starts.get(i).map_or(self.text.len(), |s| s.1);
        at(index)..at(index + 1)
    }

    /// Code point range of node `index`.
    fn node_chars(&self, index: usize) -> std::ops::Range<usize> {
        let at = |i: usize| self.starts.get(i).map_or(self.chars.len(), |s| s.0);
        at(index)..at(index + 1)
    }

    /// The original text of text node `ordinal`.
    fn original_str(&self, ordinal: usize) -> &'a str {
        let index = self.text_nodes.get(ordinal).copied().unwrap_or(usize::MAX);
        self.text.get(self.node_bytes(index)).unwrap_or_default()
    }

    /// The original code points of text node `ordinal`.
    fn original(&self, ordinal: usize) -> &'a [char] {
        let index = self.text_nodes.get(ordinal).copied().unwrap_or(usize::MAX);
        self.chars.get(self.node_chars(index)).unwrap_or_default()
    }

    /// The current text of text node `ordinal`.
    fn current_str(&self, ordinal: usize) -> &str {
        match self.spliced.get(ordinal) {
            Some(Some((_, text))) => text,
            _ => self.original_str(ordinal),
        }
    }

    /// The current code points of text node `ordinal`.
    fn current(&self, ordinal: usize) -> &[char] {
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
    fn splice(&mut self, ordinal: usize, at: usize, len: usize, replacement: &str) -> bool {
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
    fn char_of(&self, byte: usize) -> usize {
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
    fn count_before(&self, ordinal: usize, needle: &[char]) -> usize {
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
fn char_offset(text: &str, byte: usize, chars: usize) -> usize {
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
fn utf8_len(bytes: &[u8], n: usize) -> usize {
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

/// Insertion-ordered map from lowercase gram to its last original spelling.
///
/// One map serves every text node of a page: [`Mentions::clear`] keeps its strings and
/// table, so a node's mentions cost no allocation once earlier nodes had as many. The
/// table maps a key's hash to its first entry; entries with the same hash are chained.
#[derive(Default)]
struct Mentions {
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
    fn clear(&mut self) {
        self.len = 0;
        self.next.clear();
        self.index.clear();
    }

    /// The `(key, original)` pairs in insertion order.
    fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        (self.order.iter().take(self.len)).map(|(key, original)| (key.as_str(), original.as_str()))
    }

    /// Records the anchor `gram` under its lowercase key. Grams that are not anchors are
    /// never recorded: the pass would skip them anyway, and most grams are not anchors.
    fn insert(&mut self, gram: &str, key: &str) {
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
struct Words<'a> {
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
struct WordBuffers {
    places: Vec<usize>,
    joined: String,
    bounds: Vec<usize>,
    lowered: String,
    lowered_bounds: Vec<usize>,
    grams: Vec<usize>,
}

impl<'a> Words<'a> {
    /// The words of `sentence`, in `buffers`.
    fn new(tokenizer: &MwTokenizer, sentence: &'a str, buffers: &'a mut WordBuffers) -> Self {
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
    fn from_tokens(tokens: &[&str], buffers: &'a mut WordBuffers) -> Self {
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
    fn index(joined: Option<&'a str>, buffers: &'a mut WordBuffers) -> Self {
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
    fn gram_ends(&self, start: usize) -> impl Iterator<Item = usize> + '_ {
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
    fn gram(&self, start: usize, last: usize) -> Option<(&str, Cow<'_, str>)> {
        let span = |bounds: &[usize]| Some(*bounds.get(start)?..*bounds.get(last + 1)?);
        let gram = self.joined.get(span(self.bounds)?)?;
        let key = match self.lowered {
            Some((lowered, bounds)) => Cow::Borrowed(lowered.get(span(bounds)?)?),
            None => Cow::Owned(pyunicode::lower(gram)),
        };
        Some((gram, key))
    }

    /// Whether each gram is an anchor, by start token and length (`[start][n - 1]`). The
    /// grams of the whole sentence are asked for at once, in rows of one start each: their
    /// keys are prefixes of the longest one's.
    fn anchors(&self, model: &dyn LinkModel) -> Vec<[bool; MAX_GRAM]> {
        let Some((lowered, bounds)) = &self.lowered else {
            // A capital sigma: keys are lowercased whole and need not be prefixes.
            return (0..self.tokens.len())
                .map(|start| {
                    let mut row = [false; MAX_GRAM];
                    let grams = self
                        .gram_ends(start)
                        .filter_map(|last| self.gram(start, last));
                    for (slot, (_, key)) in row.iter_mut().zip(grams) {
                        *slot = model.is_anchor(&key);
                    }
                    row
                })
                .collect();
        };
        // A gram starts at a token other than a single space and ends after `n` such
        // tokens (see `gram_ends`): the grams of each start are the next `MAX_GRAM` entries
        // of `grams`.
        let words = self.grams;
        let mut rows = Vec::with_capacity(words.len());
        for (k, &start) in words.iter().enumerate() {
            let mut row = GramRow {
                start: bounds.get(start).copied().unwrap_or(0),
                ..GramRow::default()
            };
            for (end, &last) in row.ends.iter_mut().zip(words.get(k..).unwrap_or_default()) {
                *end = bounds.get(last + 1).copied().unwrap_or(row.start);
                row.len += 1;
            }
            rows.push(row);
        }
        let mut answers = Vec::with_capacity(rows.len());
        model.anchor_rows(lowered, &rows, &mut answers);
        let mut table = vec![[false; MAX_GRAM]; self.tokens.len()];
        for (&start, answer) in words.iter().zip(answers) {
            if let Some(row) = table.get_mut(start) {
                *row = answer;
            }
        }
        table
    }

    /// Calls `emit(gram, key)` with every `n`-word gram that `anchors` (the table of
    /// [`Words::anchors`]) marks as an anchor, in order of their first token.
    fn anchor_grams(
        &self,
        n: usize,
        anchors: &[[bool; MAX_GRAM]],
        mut emit: impl FnMut(&str, &str) -> bool,
    ) -> bool {
        for (start, row) in anchors.iter().enumerate() {
            if !row.get(n - 1).is_some_and(|&a| a) {
                continue;
            }
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

/// Runs the placement pass over one page.
///
/// # Errors
/// * [`TextError::UnsupportedLanguage`] for SentencePiece languages;
/// * [`TextError::BadReplacement`] when a target or mention contains a
///   backslash escape that Python's `re` rejects (upstream: HTTP 500);
/// * [`TextError::MentionNotFound`] when a placed mention cannot be found
///   again in the original node text (upstream: HTTP 500).
pub fn recommend(
    model: &dyn LinkModel,
    request: &Request<'_>,
) -> Result<Recommendations, TextError> {
    recommend_cancellable(model, request, None)
}

/// [`recommend`], stopping as at the end of the time budget once `cancel` is set (by
/// another thread, when the result is no longer wanted): checked wherever the budget is.
///
/// # Errors
/// As [`recommend`].
pub fn recommend_cancellable(
    model: &dyn LinkModel,
    request: &Request<'_>,
    cancel: Option<&AtomicBool>,
) -> Result<Recommendations, TextError> {
    recommend_filtered(model, request, cancel, None)
}

/// [`recommend_cancellable`], asking `filter` about each link the pass chooses before it is
/// returned (see [`LinkFilter`]); with `None` it is exactly [`recommend_cancellable`].
///
/// # Errors
/// As [`recommend`].
pub fn recommend_filtered(
    model: &dyn LinkModel,
    request: &Request<'_>,
    cancel: Option<&AtomicBool>,
    mut filter: Option<&mut dyn LinkFilter>,
) -> Result<Recommendations, TextError> {
    let budget = Budget {
        started: Instant::now(),
        limit: request.time_budget,
        cancel,
    };
    let stopped = |links| Recommendations {
        links,
        stop: Stop::TimeBudget,
    };
    let tokenizer = MwTokenizer::new(request.language_code)?;
    let exclusion = SectionExclusion::new(request.sections_to_exclude);
    // The budget also bounds parsing, whose worst case is quadratic: a page
    // that cannot be parsed in time yields no links, like a timeout upstream.
    let limits = ParseLimits {
        deadline: request.time_budget.map(|b| budget.started + b),
        max_reads: None,
    };
    let doc = match Wikitext::parse_cancellable(request.wikitext, limits, cancel) {
        Ok(doc) => doc,
        Err(TextError::ParseLimitExceeded) => return Ok(stopped(Vec::new())),
        Err(e) => return Err(e),
    };
    // The parse's string form: the text up to a NUL, if any (see `Wikitext`).
    let init_len = doc.nodes().last().map_or(0, |n| n.end);
    let init_chars: &[char] = doc.chars().get(..init_len).unwrap_or_default();
    let init: Cow<'_, str> = if init_len == doc.chars().len() {
        Cow::Borrowed(request.wikitext)
    } else {
        Cow::Owned(init_chars.iter().collect())
    };

    let Some(mut linked) = Linked::existing(model, request, (&init, init_chars), &limits, &budget)?
    else {
        return Ok(stopped(Vec::new()));
    };

    // Top-level text nodes: original and current values, by page order.
    let mut page = PageText::new(&init, init_chars, doc.nodes());

    let mut tested: HashSet<String> = HashSet::default();
    // Mentions that failed the linked-mention or linked-target filter (see below).
    let mut blocked: HashSet<String> = HashSet::default();
    let mut links: Vec<LinkRecommendation> = Vec::new();
    let mut buffers = NodeBuffers::default();

    for (section_index, section) in sections(&doc).into_iter().enumerate() {
        if exclusion.excludes(&doc, &section) {
            continue;
        }
        for index in section.nodes.clone() {
            let Some(Some(ordinal)) = page.ordinal_of.get(index).copied() else {
                continue;
            };
            let orig_string: &str = page.original_str(ordinal);
            // Offsets count from the first occurrence of the node's text in the page, which
            // cannot start after the node itself, so only the text up to its end is
            // searched. Only nodes that receive a link need it.
            let node_start = |page: &PageText<'_>| {
                let own_end = page.node_bytes(index).end.min(init.len());
                init.as_bytes()
                    .get(..own_end)
                    .and_then(|prefix| find_first(prefix, orig_string.as_bytes()))
                    .map_or(0, |b| page.char_of(b))
            };

            // The same for every link of the node: found once.
            let mut node_start_at: Option<usize> = None;
            if node_mentions(model, &tokenizer, orig_string, &budget, &mut buffers).is_none() {
                return Ok(stopped(links));
            }

            for (mention, original) in buffers.mentions.iter() {
                // Filtering a mention reads every linked mention, which hostile nested
                // labels make long: the budget bounds this loop too.
                if budget.spent() {
                    return Ok(stopped(links));
                }
                // The filters are pure, so the cheapest run first; and the linked sets only
                // grow, so a mention they block stays blocked for the rest of the page.
                if tested.contains(mention) || blocked.contains(mention) {
                    continue;
                }
                let Some(candidates) = model.candidates(mention) else {
                    continue;
                };
                if linked.blocks(mention, &candidates) {
                    blocked.insert(mention.to_owned());
                    continue;
                }
                if let Some((target, score)) = classify(model, request, mention, candidates) {
                    let original_chars: Vec<char> = original.chars().collect();
                    let found = splice_link(
                        &mut page,
                        ordinal,
                        (original, &original_chars),
                        &target,
                        score,
                    )?;
                    linked.insert_mention(mention);
                    linked.targets.insert(target.clone());
                    if found {
                        let link = place(
                            &page,
                            ordinal,
                            *node_start_at.get_or_insert_with(|| node_start(&page)),
                            mention,
                            &original_chars,
                            target,
                            score,
                            links.len(),
                        )?;
                        if let Some(filter) = filter.as_deref_mut() {
                            let at = Placement {
                                doc: &doc,
                                section: &section,
                                section_index,
                                node: page.node_chars(index),
                            };
                            if !filter.keep(&link, &at) {
                                tested.insert(mention.to_owned());
                                continue;
                            }
                        }
                        links.push(link);
                        if i64::try_from(links.len())
                            .is_ok_and(|n| n == request.max_recommendations)
                        {
                            return Ok(Recommendations {
                                links,
                                stop: Stop::MaxRecommendations,
                            });
                        }
                    }
                }
                tested.insert(mention.to_owned());
            }
        }
    }
    Ok(Recommendations {
        links,
        stop: Stop::Complete,
    })
}

/// When the pass stops early: at the end of the request's time budget, or once another
/// thread sets `cancel`.
struct Budget<'a> {
    started: Instant,
    limit: Option<Duration>,
    cancel: Option<&'a AtomicBool>,
}

impl Budget<'_> {
    fn spent(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
            || self.limit.is_some_and(|b| self.started.elapsed() > b)
    }
}

/// The mentions and targets already linked on the page; a candidate mention that one of
/// them covers is not linked again.
struct Linked {
    mentions: HashSet<String>,
    /// Every linked mention, each followed by a NUL: a mention without NUL occurs inside a
    /// linked mention exactly when it occurs in this text, so one search answers.
    joined: String,
    targets: HashSet<String>,
}

impl Linked {
    /// The page's existing links (targets through redirects, kept only when the page
    /// exists; of the links with one anchor, the last kept counts) and the page's own title, or `None`
    /// when the budget ran out while reading them.
    fn existing(
        model: &dyn LinkModel,
        request: &Request<'_>,
        (init, init_chars): (&str, &[char]),
        limits: &ParseLimits,
        budget: &Budget<'_>,
    ) -> Result<Option<Self>, TextError> {
        let mut link_dict: HashMap<String, String> = HashMap::default();
        // Nested links (`[[a|[[a|…]]]]`) make link extraction quadratic and their labels
        // overlap: links come as ranges, are extracted within the budget, and each label is
        // read as a slice of the page only while it is normalised, with the budget checked
        // before each.
        let ranges = match wikilink_ranges_bounded(init_chars, limits, budget.cancel) {
            Ok(ranges) => ranges,
            Err(TextError::ParseLimitExceeded) => return Ok(None),
            Err(e) => return Err(e),
        };
        let bytes = ByteOffsets::new(init, init_chars.len());
        // Read from the last link back, the first link kept for an anchor is the one the
        // later duplicates would have left in place: the earlier links with that anchor
        // need no title look-ups at all.
        for link in ranges.into_iter().rev() {
            if budget.spent() {
                return Ok(None);
            }
            let title = bytes.slice(link.title);
            let anchor = match link.text.map(|r| bytes.slice(r)) {
                Some(text) if !text.is_empty() => normalise_anchor(text),
                _ => normalise_anchor(title),
            };
            if link_dict.contains_key(&anchor) {
                continue;
            }
            let mut target = normalise_title(title);
            if let Some(resolved) = model.redirect(&target) {
                target = resolved;
            }
            if model.has_page(&target) {
                link_dict.insert(anchor, target);
            }
        }
        let mut linked = Self {
            mentions: HashSet::with_capacity_and_hasher(link_dict.len() + 1, Default::default()),
            joined: String::new(),
            targets: HashSet::with_capacity_and_hasher(link_dict.len() + 1, Default::default()),
        };
        // The anchors are distinct keys: each moves into the set without a check or copy.
        for (anchor, target) in link_dict {
            linked.joined.push_str(&anchor);
            linked.joined.push('\0');
            linked.mentions.insert(anchor);
            linked.targets.insert(target);
        }
        linked.insert_mention(&normalise_anchor(request.page_title));
        linked.targets.insert(normalise_title(request.page_title));
        Ok(Some(linked))
    }

    /// Adds a linked mention.
    fn insert_mention(&mut self, mention: &str) {
        if !self.mentions.contains(mention) {
            self.mentions.insert(mention.to_owned());
            self.joined.push_str(mention);
            self.joined.push('\0');
        }
    }

    /// Whether `mention` may not be linked: a candidate is already a linked target, or the
    /// mention occurs inside a linked mention.
    fn blocks(&self, mention: &str, candidates: &[Candidate<'_>]) -> bool {
        candidates
            .iter()
            .any(|c| self.targets.contains(c.title.as_ref()))
            || if mention.contains('\0') {
                let within = memmem::Finder::new(mention.as_bytes());
                self.mentions
                    .iter()
                    .any(|s| within.find(s.as_bytes()).is_some())
            } else {
                memmem::find(self.joined.as_bytes(), mention.as_bytes()).is_some()
            }
    }
}

/// Slices of a text by code point ranges.
///
/// The byte offset of every [`ByteOffsets::STEP`]th code point is found in one pass over
/// the text (none for an ASCII text, where the two offsets agree), so each range costs at
/// most a short walk from the nearest offset before it.
struct ByteOffsets<'a> {
    text: &'a str,
    /// Byte offset of code point `STEP * i`; empty for an ASCII text.
    steps: Vec<usize>,
}

impl<'a> ByteOffsets<'a> {
    const STEP: usize = 32;

    /// `text` holds `chars` code points.
    fn new(text: &'a str, chars: usize) -> Self {
        let mut steps = Vec::new();
        if text.len() != chars {
            let bytes = text.as_bytes();
            let mut at = 0;
            steps.reserve(chars / Self::STEP + 1);
            for _ in 0..=chars / Self::STEP {
                steps.push(at);
                at += utf8_len(bytes.get(at..).unwrap_or_default(), Self::STEP);
            }
        }
        Self { text, steps }
    }

    /// Byte offset of code point offset `char` (the end of the text past its last).
    fn byte(&self, char: usize) -> usize {
        if self.steps.is_empty() {
            return char.min(self.text.len());
        }
        let step = (char / Self::STEP).min(self.steps.len() - 1);
        let at = self.steps.get(step).copied().unwrap_or_default();
        let rest = self.text.as_bytes().get(at..).unwrap_or_default();
        at + utf8_len(rest, char - step * Self::STEP)
    }

    /// The text of code points `range`.
    fn slice(&self, range: std::ops::Range<usize>) -> &'a str {
        let start = self.byte(range.start);
        // A label is short: walked from its start.
        let rest = self.text.as_bytes().get(start..).unwrap_or_default();
        let end = start + utf8_len(rest, range.end.saturating_sub(range.start));
        self.text.get(start..end).unwrap_or_default()
    }
}

/// Buffers of [`node_mentions`], kept from one text node to the next.
#[derive(Default)]
struct NodeBuffers {
    /// The node's sentences, as byte ranges.
    sentences: Vec<(usize, usize)>,
    words: WordBuffers,
    /// The node's mentions.
    mentions: Mentions,
}

/// The anchor grams of a text node, sentence by sentence, longest grams first, into
/// `buffers.mentions`; `None` when the budget ran out.
fn node_mentions(
    model: &dyn LinkModel,
    tokenizer: &MwTokenizer,
    text: &str,
    budget: &Budget<'_>,
    buffers: &mut NodeBuffers,
) -> Option<()> {
    let NodeBuffers {
        sentences,
        words: word_buffers,
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
        let anchors = words.anchors(model);
        for n in (1..=MAX_GRAM).rev() {
            let complete = words.anchor_grams(n, &anchors, |gram, key| {
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

/// Replaces the first occurrence of `original` in text node `ordinal` of `page` by the link markup upstream
/// writes (`[[target|original|pr=score]]`); whether it was found.
fn splice_link(
    page: &mut PageText<'_>,
    ordinal: usize,
    (text, original): (&str, &[char]),
    target: &str,
    score: f32,
) -> Result<bool, TextError> {
    let replacement = expand_template(&format!("[[{target}|{text}|pr={}]]", format_f32(score)))
        .map_err(|e| TextError::BadReplacement {
            target: target.to_owned(),
            reason: e.0,
        })?;
    // Nodes are only copied to be changed: look first.
    let current = page.current_str(ordinal);
    let Some(byte) = find_mention_str(current, text) else {
        return Ok(false);
    };
    let at = char_offset(current, byte, page.current(ordinal).len());
    Ok(page.splice(ordinal, at, original.len(), &replacement))
}

/// Scores the top candidates and keeps the best one if it reaches the
/// threshold (ties: the first; NaN scores compare as upstream's `max`).
fn classify(
    model: &dyn LinkModel,
    request: &Request<'_>,
    mention: &str,
    mut candidates: Vec<Candidate<'_>>,
) -> Option<(String, f32)> {
    if candidates.len() > TOP_CANDIDATES {
        // Stable: ties keep the stored order.
        candidates.sort_by_key(|c| std::cmp::Reverse(c.count));
        candidates.truncate(TOP_CANDIDATES);
    }
    let scores = model.scores(request.page_title, mention, &candidates);
    let mut best: Option<(usize, f32)> = None;
    for (i, &p) in scores.iter().enumerate().take(candidates.len()) {
        // Replace only on a strictly greater score, so NaN never wins
        // against an earlier score and never loses its first place.
        let greater =
            best.is_none_or(|(_, bp)| p.partial_cmp(&bp) == Some(std::cmp::Ordering::Greater));
        if greater {
            best = Some((i, p));
        }
    }
    let (i, p) = best?;
    if f64::from(p) < request.threshold {
        return None;
    }
    candidates.get(i).map(|c| (c.title.to_string(), p))
}

/// Offsets, context and `match_index` of a link just placed in node `ordinal`.
#[allow(clippy::too_many_arguments)]
fn place(
    page: &PageText<'_>,
    ordinal: usize,
    node_start: usize,
    mention: &str,
    original: &[char],
    target: String,
    score: f32,
    link_index: usize,
) -> Result<LinkRecommendation, TextError> {
    let orig = page.original(ordinal);
    let orig_str = page.original_str(ordinal);
    let link_text: String = original.iter().collect();
    // The mention's offset in the node, and the occurrences before it there.
    let (i1, in_node) = match find_mention_str(orig_str, &link_text) {
        Some(byte) => {
            let prefix = orig_str.get(..byte).unwrap_or_default();
            (
                char_offset(orig_str, byte, orig.len()),
                // `str.count` is leftmost non-overlapping, as `find_iter`.
                memmem::find_iter(prefix.as_bytes(), link_text.as_bytes()).count(),
            )
        }
        None => {
            // Rare fallback: match in lowercased coordinates.
            let lower: Vec<char> = pyunicode::lower(&orig.iter().collect::<String>())
                .chars()
                .collect();
            let lower_mention: Vec<char> = pyunicode::lower(&original.iter().collect::<String>())
                .chars()
                .collect();
            let i1 =
                find_mention(&lower, &lower_mention).ok_or_else(|| TextError::MentionNotFound {
                    mention: mention.to_owned(),
                    text: lower.iter().collect(),
                })?;
            (i1, count(orig.get(..i1).unwrap_or_default(), original))
        }
    };
    let slice = |a: usize, b: usize| -> String {
        let b = b.min(orig.len());
        orig.get(a.min(b)..b).unwrap_or_default().iter().collect()
    };
    let context_before = slice(i1.saturating_sub(CONTEXT), i1);
    let after_start = i1 + original.len();
    let context_after = slice(after_start, after_start + CONTEXT);
    // Preceding nodes: up to the first node whose current text equals ours.
    let this = page.current(ordinal);
    let position = (page.lengths.get(..ordinal).unwrap_or_default().iter())
        .enumerate()
        .filter(|&(_, &length)| length == this.len())
        .map(|(j, _)| j)
        .find(|&j| page.current(j) == this)
        .unwrap_or(ordinal);
    let before = page.count_before(position, original);
    let match_index = before + in_node;
    Ok(LinkRecommendation {
        link_index,
        link_text,
        link_target: target,
        score,
        wikitext_offset: node_start + i1,
        match_index,
        context_before,
        context_after,
    })
}

#[cfg(test)]
mod tests;
