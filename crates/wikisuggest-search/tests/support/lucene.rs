//! An independent re-derivation of what Elasticsearch computes for a morelike query on one
//! shard, written from Lucene's and Java's published algorithms, not from the crate's code:
//! Java's `HashMap` is simulated bucket by bucket with its resizes, Lucene's `PriorityQueue`
//! with its 1-based array and hole-shifting moves, BM25 with Lucene's norm table and its
//! `weight - weight / (1 + freq · normInverse)` form.
//!
//! The corpora are lower-case words separated by spaces, analysed by an analyzer that only
//! splits and lowercases, so a document's terms are its words.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashSet};

pub struct Doc {
    pub title: String,
    pub words: Vec<String>,
}

impl Doc {
    pub fn new(title: &str, text: &str) -> Self {
        Self {
            title: title.to_owned(),
            words: text.split_whitespace().map(str::to_lowercase).collect(),
        }
    }
}

pub struct Params {
    pub min_term_freq: u32,
    pub min_doc_freq: u64,
    pub max_doc_freq: Option<u64>,
    pub max_query_terms: usize,
    pub percent: i32,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            min_term_freq: 2,
            min_doc_freq: 2,
            max_doc_freq: None,
            max_query_terms: 25,
            percent: 30,
        }
    }
}

/// Java's `String.hashCode`, as the polynomial reduced modulo 2³² and read as signed.
fn java_hash(s: &str) -> i32 {
    let mut h: u64 = 0;
    for unit in s.encode_utf16() {
        h = (h * 31 + u64::from(unit)) % (1u64 << 32);
    }
    h as u32 as i32
}

/// A literal `java.util.HashMap<String, Integer>`: table of chains, `put` appending to the
/// chain, resize when `++size > threshold`, each chain split into low and high halves keeping
/// order. Returns the keys in iteration order.
struct JavaHashMap {
    table: Vec<Vec<(i32, String, u32)>>,
    size: usize,
}

impl JavaHashMap {
    fn new() -> Self {
        Self {
            table: vec![Vec::new(); 16],
            size: 0,
        }
    }

    fn hash(key: &str) -> u32 {
        let h = java_hash(key) as u32;
        h ^ (h >> 16)
    }

    fn add(&mut self, key: &str, value: u32) {
        let h = Self::hash(key);
        let n = self.table.len();
        let chain = &mut self.table[(h as usize) & (n - 1)];
        if let Some(e) = chain.iter_mut().find(|e| e.1 == key) {
            e.2 += value;
            return;
        }
        chain.push((h as i32, key.to_owned(), value));
        self.size += 1;
        if self.size > self.table.len() * 3 / 4 {
            self.resize();
        }
    }

    fn resize(&mut self) {
        let old = std::mem::take(&mut self.table);
        let old_cap = old.len();
        let mut table = vec![Vec::new(); old_cap * 2];
        for (j, chain) in old.into_iter().enumerate() {
            let (mut lo, mut hi) = (Vec::new(), Vec::new());
            for e in chain {
                if (e.0 as u32 as usize) & old_cap == 0 {
                    lo.push(e);
                } else {
                    hi.push(e);
                }
            }
            table[j] = lo;
            table[j + old_cap] = hi;
        }
        self.table = table;
    }

    fn entries(&self) -> Vec<(String, u32)> {
        self.table
            .iter()
            .flatten()
            .map(|e| (e.1.clone(), e.2))
            .collect()
    }
}

/// Lucene's `PriorityQueue` of (word, score), `lessThan(a, b) = a.score < b.score`, 1-based.
struct Pq {
    heap: Vec<Option<(String, f32)>>,
    size: usize,
}

impl Pq {
    fn new(max: usize) -> Self {
        Self {
            heap: vec![None; max + 1],
            size: 0,
        }
    }
    fn score(&self, i: usize) -> f32 {
        self.heap[i].as_ref().map_or(f32::NAN, |e| e.1)
    }
    fn add(&mut self, e: (String, f32)) {
        self.size += 1;
        self.heap[self.size] = Some(e);
        let mut i = self.size;
        let node = self.heap[i].take();
        let ns = node.as_ref().map_or(f32::NAN, |e| e.1);
        let mut j = i >> 1;
        while j > 0 && ns < self.score(j) {
            self.heap[i] = self.heap[j].take();
            i = j;
            j >>= 1;
        }
        self.heap[i] = node;
    }
    fn down_heap(&mut self, mut i: usize) {
        let node = self.heap[i].take();
        let ns = node.as_ref().map_or(f32::NAN, |e| e.1);
        let mut j = i << 1;
        let mut k = j + 1;
        if k <= self.size && self.score(k) < self.score(j) {
            j = k;
        }
        while j <= self.size && self.score(j) < ns {
            self.heap[i] = self.heap[j].take();
            i = j;
            j = i << 1;
            k = j + 1;
            if k <= self.size && self.score(k) < self.score(j) {
                j = k;
            }
        }
        self.heap[i] = node;
    }
    fn pop_all(mut self) -> Vec<(String, f32)> {
        let mut out = Vec::new();
        while self.size > 0 {
            let top = self.heap[1].take();
            self.heap[1] = self.heap[self.size].take();
            self.size -= 1;
            if self.size > 0 {
                self.down_heap(1);
            }
            out.extend(top);
        }
        out
    }
}

pub struct Expected {
    /// Chosen terms, as a set.
    pub terms: HashSet<String>,
    pub minimum_should_match: usize,
    /// (title, score), best first (ties by title).
    pub hits: Vec<(String, f32)>,
}

/// Lucene's `SmallFloat.intToByte4` / `byte4ToInt`: document lengths as norms keep 3 bits of
/// precision above 24.
fn length_table(len: u64) -> f32 {
    fn long_to_int4(i: u64) -> u64 {
        let num_bits = 64 - i.leading_zeros() as u64;
        if num_bits < 4 {
            return i;
        }
        let shift = num_bits - 4;
        let mut encoded = (i >> shift) & 0x07;
        encoded |= (shift + 1) << 3;
        encoded
    }
    fn int4_to_long(i: u64) -> u64 {
        let bits = i & 0x07;
        let shift = (i >> 3) as i64 - 1;
        if shift == -1 {
            bits
        } else {
            (bits | 0x08) << shift
        }
    }
    let byte = if len < 24 {
        len
    } else {
        24 + long_to_int4(len - 24)
    };
    let decoded = if byte < 24 {
        byte
    } else {
        24 + int4_to_long(byte - 24)
    };
    decoded as f32
}

/// What a one-shard Elasticsearch answers to `morelike` with these seeds (given as titles that
/// exist; their order does not matter: they are sorted as CirrusSearch sorts them).
pub fn morelike(corpus: &[Doc], seeds: &[&str], p: &Params) -> Expected {
    let mut seed_docs: Vec<&Doc> = corpus
        .iter()
        .filter(|d| seeds.contains(&d.title.as_str()))
        .collect();
    seed_docs.sort_by(|a, b| a.title.cmp(&b.title));
    let mut map = JavaHashMap::new();
    for d in &seed_docs {
        let mut tv: BTreeMap<&str, u32> = BTreeMap::new();
        for w in &d.words {
            *tv.entry(w).or_default() += 1;
        }
        for (w, f) in tv {
            map.add(w, f);
        }
    }
    let n_docs = corpus.len() as u64;
    let df = |t: &str| {
        corpus
            .iter()
            .filter(|d| d.words.iter().any(|w| w == t))
            .count() as u64
    };
    let entries = map.entries();
    let limit = p.max_query_terms.min(100).min(entries.len());
    let mut pq = Pq::new(limit);
    for (word, tf) in entries {
        if p.min_term_freq > 0 && tf < p.min_term_freq {
            continue;
        }
        let d = df(&word);
        if p.min_doc_freq > 0 && d < p.min_doc_freq {
            continue;
        }
        if p.max_doc_freq.is_some_and(|m| d > m) || d == 0 {
            continue;
        }
        let idf = ((((n_docs + 1) as f64) / ((d + 1) as f64)).ln() + 1.0) as f32;
        let score = tf as f32 * idf;
        if pq.size < limit {
            pq.add((word, score));
        } else if pq.score(1) < score {
            if let Some(top) = pq.heap[1].as_mut() {
                *top = (word, score);
            }
            pq.down_heap(1);
        }
    }
    let terms: Vec<String> = pq.pop_all().into_iter().map(|e| e.0).collect();
    let n = terms.len() as i32;
    let calc = (n * p.percent) as f32 * (1.0f32 / 100.0f32);
    let msm = if calc < 0.0 {
        n + calc as i32
    } else {
        calc as i32
    }
    .max(0) as usize;

    // BM25 over the whole corpus (seeds included in the statistics, excluded from hits).
    let total: u64 = corpus.iter().map(|d| d.words.len() as u64).sum();
    let avgdl = (total as f64 / n_docs as f64) as f32;
    let (k1, b) = (1.2f32, 0.75f32);
    let mut hits = Vec::new();
    for d in corpus {
        if seed_docs.iter().any(|s| s.title == d.title) || terms.is_empty() {
            continue;
        }
        let dl = length_table(d.words.len() as u64);
        let norm_inverse = 1.0f32 / (k1 * ((1.0 - b) + b * dl / avgdl));
        let mut matched = 0;
        let mut score = 0.0f32;
        for t in &terms {
            let freq = d.words.iter().filter(|w| *w == t).count();
            if freq == 0 {
                continue;
            }
            matched += 1;
            let docf = df(t) as f64;
            let idf = (1.0 + (n_docs as f64 - docf + 0.5) / (docf + 0.5)).ln() as f32;
            let weight = idf;
            score += weight - weight / (1.0 + freq as f32 * norm_inverse);
        }
        if matched >= msm.max(1) {
            hits.push((d.title.clone(), score));
        }
    }
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Expected {
        terms: terms.into_iter().collect(),
        minimum_should_match: msm,
        hits,
    }
}
