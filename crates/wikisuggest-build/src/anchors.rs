//! Anchor statistics: how often each anchor text is a link, how often it is plain text,
//! and which targets it links to in how many articles; then the link-probability filter.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;

use hashbrown::HashTable;

use wikisuggest_text::pyunicode;
use wikisuggest_text::wikitext::{NodeKind, Wikitext};

/// Longest plain-text n-gram matched against the anchors (production: 10 words).
pub const MAX_TEXT_NGRAM: usize = 10;

/// Interns strings as dense ids.
///
/// Each string is stored once, in one shared buffer: the table holds only ids and
/// finds a string's text through its offsets. At enwiki scale (tens of millions of
/// anchor texts and titles) this costs the text plus about 14 bytes per string, where
/// a map of owned `String`s plus a `Vec<String>` cost two copies and about 80 bytes.
#[derive(Default)]
pub struct Interner {
    hasher: RandomState,
    table: HashTable<u32>,
    text: String,
    /// End offset in `text` of each string; string `i` starts where `i - 1` ends.
    ends: Vec<usize>,
}

impl std::fmt::Debug for Interner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interner")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl Interner {
    /// The id of `s`, adding it if new.
    pub fn intern(&mut self, s: &str) -> u32 {
        let hash = self.hasher.hash_one(s);
        let (text, ends) = (&self.text, &self.ends);
        if let Some(&id) = self.table.find(hash, |&id| slice(text, ends, id) == s) {
            return id;
        }
        let id = self.ends.len() as u32;
        self.text.push_str(s);
        self.ends.push(self.text.len());
        let (hasher, text, ends) = (&self.hasher, &self.text, &self.ends);
        self.table
            .insert_unique(hash, id, |&id| hasher.hash_one(slice(text, ends, id)));
        id
    }

    /// The id of `s`, if known.
    pub fn get(&self, s: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(s);
        self.table.find(hash, |&id| self.name(id) == s).copied()
    }

    /// The string of `id`.
    pub fn name(&self, id: u32) -> &str {
        slice(&self.text, &self.ends, id)
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// String `id` of an interner's buffer (`""` for an unknown id).
fn slice<'a>(text: &'a str, ends: &[usize], id: u32) -> &'a str {
    let i = id as usize;
    let Some(&end) = ends.get(i) else {
        return "";
    };
    let start = if i == 0 {
        0
    } else {
        ends.get(i - 1).copied().unwrap_or(0)
    };
    text.get(start..end).unwrap_or("")
}

/// Counters filled one article at a time.
#[derive(Debug, Default)]
pub struct AnchorCounts {
    /// Anchor texts that may occur in articles as text (a superset of the final anchors).
    pub anchors: Interner,
    /// Times each anchor is used as a link to an article.
    as_link: Vec<u64>,
    /// Times each anchor occurs as plain text.
    as_text: Vec<u64>,
    /// `(anchor, target)` → number of distinct source articles.
    pairs: HashMap<(u32, u32), u32>,
}

/// Link-probability filter settings.
#[derive(Debug, Clone, Copy)]
pub struct AnchorFilter {
    /// Keep anchors with `as_link / (as_text + as_link)` at least this.
    pub min_link_probability: f64,
    /// Keep anchors used as a link at least this many times.
    pub min_link_count: u64,
}

impl AnchorCounts {
    /// Counters for the given candidate anchor texts.
    pub fn new(anchor_texts: impl IntoIterator<Item = String>) -> Self {
        let mut anchors = Interner::default();
        for a in anchor_texts {
            anchors.intern(&a);
        }
        Self::from_interner(anchors)
    }

    /// Counters for the candidate anchor texts already interned in `anchors` (saves
    /// holding them twice while the catalogue is turned into counters).
    pub fn from_interner(anchors: Interner) -> Self {
        let n = anchors.len();
        Self {
            anchors,
            as_link: vec![0; n],
            as_text: vec![0; n],
            pairs: HashMap::new(),
        }
    }

    /// Records one article: its resolved `(anchor, target id)` links, and its text for
    /// the plain-text occurrences.
    pub fn add_article(&mut self, links: &[(String, u32)], text_ngrams: &HashMap<u32, u64>) {
        let mut seen: HashSet<(u32, u32)> = HashSet::new();
        for (anchor, target) in links {
            let a = self.anchor_id(anchor);
            if let Some(slot) = self.as_link.get_mut(a as usize) {
                *slot += 1;
            }
            if seen.insert((a, *target)) {
                *self.pairs.entry((a, *target)).or_insert(0) += 1;
            }
        }
        for (&a, &n) in text_ngrams {
            if let Some(slot) = self.as_text.get_mut(a as usize) {
                *slot += n;
            }
        }
    }

    fn anchor_id(&mut self, anchor: &str) -> u32 {
        let id = self.anchors.intern(anchor);
        let n = self.anchors.len();
        self.as_link.resize(n, 0);
        self.as_text.resize(n, 0);
        id
    }

    /// Number of anchor texts used at least once as a link to an article.
    pub fn linked_anchors(&self) -> u64 {
        self.as_link.iter().filter(|&&n| n > 0).count() as u64
    }

    /// `(as_link, as_text)` of an anchor.
    pub fn usage(&self, anchor: &str) -> (u64, u64) {
        self.anchors.get(anchor).map_or((0, 0), |a| {
            (
                self.as_link.get(a as usize).copied().unwrap_or(0),
                self.as_text.get(a as usize).copied().unwrap_or(0),
            )
        })
    }

    /// The anchors that pass `filter`, each with its targets (ids) and counts, in
    /// production's stored order: count descending, then target title ascending. Anchors
    /// are sorted by text (code point order).
    pub fn finish(
        &self,
        filter: AnchorFilter,
        title_of: impl Fn(u32) -> String,
    ) -> Vec<(String, Vec<(String, u32)>)> {
        // Candidates stay ids until their anchor has passed the filter: most pairs belong
        // to anchors that are dropped, and a title string per pair is what a whole wiki
        // cannot afford to hold.
        let mut by_anchor: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
        for (&(a, t), &count) in &self.pairs {
            if self.keeps(a, filter) {
                by_anchor.entry(a).or_default().push((t, count));
            }
        }
        let mut out: Vec<(String, Vec<(String, u32)>)> = by_anchor
            .into_iter()
            .map(|(a, cands)| {
                let mut cands: Vec<(String, u32)> = cands
                    .into_iter()
                    .map(|(t, count)| (title_of(t), count))
                    .collect();
                cands.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
                (self.anchors.name(a).to_owned(), cands)
            })
            .collect();
        out.sort_by(|x, y| x.0.cmp(&y.0));
        out
    }

    /// Whether anchor `a` passes `filter` (and is not numeric).
    fn keeps(&self, a: u32, filter: AnchorFilter) -> bool {
        let text = self.anchors.name(a);
        let as_link = self.as_link.get(a as usize).copied().unwrap_or(0);
        let as_text = self.as_text.get(a as usize).copied().unwrap_or(0);
        let probability = as_link as f64 / (as_link + as_text) as f64;
        !is_numeric_anchor(text)
            && as_link >= filter.min_link_count
            && probability >= filter.min_link_probability
    }
}

/// Empty, all digits, or digit groups separated by `/` or `-` (dates, years, scores):
/// production drops these anchors.
pub fn is_numeric_anchor(anchor: &str) -> bool {
    anchor.is_empty()
        || anchor
            .split(['/', '-'])
            .all(|group| !group.is_empty() && group.chars().all(pyunicode::is_digit))
}

/// Counts the occurrences of known anchors in the plain text of a page.
///
/// The text is what the engine searches at query time: the top-level text nodes of the
/// page (links, templates, tags and references are not text). Node boundaries and
/// ``\n.,;:()!"`` break phrases, as in production; within a chunk, every run of 1 to
/// [`MAX_TEXT_NGRAM`] whitespace-separated lowercase words is looked up.
pub fn count_text_anchors(text: &str, anchors: &Interner) -> HashMap<u32, u64> {
    let doc = Wikitext::parse(text);
    let mut counts = HashMap::new();
    let mut gram = String::new();
    for node in doc.nodes().iter().filter(|n| n.kind == NodeKind::Text) {
        let lower = pyunicode::lower(&doc.node_text(node));
        for chunk in lower.split(['\n', '.', ',', ';', ':', '(', ')', '!', '"']) {
            let words: Vec<&str> = chunk.split_whitespace().collect();
            for start in 0..words.len() {
                gram.clear();
                for (k, w) in words.iter().skip(start).take(MAX_TEXT_NGRAM).enumerate() {
                    if k > 0 {
                        gram.push(' ');
                    }
                    gram.push_str(w);
                    if let Some(id) = anchors.get(&gram) {
                        *counts.entry(id).or_insert(0) += 1;
                    }
                }
            }
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interner_keeps_each_string_once_with_a_stable_id() {
        let mut i = Interner::default();
        let words: Vec<String> = (0..5000).map(|n| format!("w{n}")).collect();
        for w in &words {
            i.intern(w);
        }
        assert_eq!(i.intern(""), 5000);
        assert_eq!(i.intern("w17"), 17);
        assert_eq!(i.len(), 5001);
        for (n, w) in words.iter().enumerate() {
            assert_eq!(i.get(w), Some(n as u32));
            assert_eq!(i.name(n as u32), w);
        }
        assert_eq!(i.get(""), Some(5000));
        assert_eq!(i.name(5000), "");
        assert_eq!(i.get("w5000"), None);
        assert_eq!(i.name(9999), "");
    }

    #[test]
    fn numeric_anchors() {
        for a in ["", "1990", "1990-91", "12/25/2001", "٣"] {
            assert!(is_numeric_anchor(a), "{a:?}");
        }
        for a in ["1990s", "-", "1-", "a1", "1 2"] {
            assert!(!is_numeric_anchor(a), "{a:?}");
        }
    }

    #[test]
    fn text_ngrams_respect_chunks_and_nodes() {
        let mut anchors = Interner::default();
        for a in ["new york", "york", "new york city", "city"] {
            anchors.intern(a);
        }
        let text = "New York City, new\n york. {{tmpl|new york}} [[x|york]] York";
        let counts = count_text_anchors(text, &anchors);
        let get = |s: &str| anchors.get(s).and_then(|id| counts.get(&id)).copied();
        assert_eq!(get("new york city"), Some(1));
        assert_eq!(get("new york"), Some(1));
        assert_eq!(get("york"), Some(3));
        assert_eq!(get("city"), Some(1));
    }

    #[test]
    fn counts_distinct_articles_and_filters_by_link_probability() {
        let mut c = AnchorCounts::new(["cat".to_owned(), "the".to_owned()]);
        let texts: HashMap<u32, u64> = [(1, 100)].into_iter().collect();
        // Article 1 links "cat" to target 7 twice: one distinct article.
        c.add_article(
            &[("cat".into(), 7), ("cat".into(), 7), ("the".into(), 8)],
            &texts,
        );
        c.add_article(
            &[("cat".into(), 7), ("cat".into(), 9), ("the".into(), 8)],
            &HashMap::new(),
        );
        c.add_article(&[("1990".into(), 5), ("1990".into(), 5)], &HashMap::new());
        assert_eq!(c.usage("cat"), (4, 0));
        assert_eq!(c.usage("the"), (2, 100));
        let filter = AnchorFilter {
            min_link_probability: 0.065,
            min_link_count: 2,
        };
        let kept = c.finish(filter, |t| format!("T{t}"));
        assert_eq!(
            kept,
            [(
                "cat".to_owned(),
                vec![("T7".to_owned(), 2), ("T9".to_owned(), 1)]
            )]
        );
    }
}
