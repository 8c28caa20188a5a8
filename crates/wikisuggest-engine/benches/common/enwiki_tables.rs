//! The enwiki-size synthetic tables of the benchmarks: the shipped sample's own tables plus
//! filler up to enwiki's size (7 M titles of which 6 M articles, 15 M anchors). Shared by the
//! engine's table-size benchmark and the conversion benchmark, which writes them in the
//! published formats.

// Each benchmark that includes this file uses a part of it.
#![allow(dead_code)]

use std::collections::HashSet;

use wikisuggest_engine::{Dataset, Tables};

/// How many titles, articles and anchors to reach.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    pub titles: usize,
    pub articles: usize,
    pub anchors: usize,
}

/// enwiki's size.
pub const ENWIKI: Size = Size {
    titles: 7_000_000,
    articles: 6_000_000,
    anchors: 15_000_000,
};

impl Size {
    /// This size divided by `d` (at least one of each).
    pub fn divided(self, d: usize) -> Size {
        Size {
            titles: (self.titles / d).max(1),
            articles: (self.articles / d).max(1),
            anchors: (self.anchors / d).max(1),
        }
    }
}

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

pub const WORDS: &[&str] = &[
    "river",
    "history",
    "john",
    "county",
    "school",
    "national",
    "united",
    "album",
    "the",
    "football",
    "of",
    "station",
    "de",
    "church",
    "war",
    "film",
    "new",
    "saint",
    "district",
    "battle",
    "island",
    "railway",
    "party",
    "language",
    "university",
    "song",
    "list",
];

pub fn words(rng: &mut Rng, n: usize, capital: bool) -> String {
    let mut s = String::new();
    for k in 0..n {
        if k > 0 {
            s.push(' ');
        }
        let w = WORDS[rng.below(WORDS.len())];
        if capital && k == 0 {
            s.push_str(&w[..1].to_uppercase());
            s.push_str(&w[1..]);
        } else {
            s.push_str(w);
        }
    }
    s
}

/// The sample's tables plus synthetic filler up to enwiki's size, as `convert` would
/// write them (titles and anchors sorted, so the sample's keys are spread through the file
/// as a real enwiki's would be).
pub fn enwiki_size_tables(sample: &Dataset, size: Size) -> (Tables, usize) {
    let mut tables = Tables::default();
    let mut titles: HashSet<String> = HashSet::new();
    // Filler keys end in a word no article holds, so they change no answer.
    let filler_key = |rng: &mut Rng, n: usize, capital: bool, i: usize| {
        format!("{} zq{i:x}", words(rng, n, capital))
    };
    let dim = sample.dim().max(1);
    tables.vectors.dim = dim;
    for i in 0..sample.title_count() {
        let t = sample.title_at(i).unwrap().to_owned();
        if let Some(pid) = sample.page_id(&t).unwrap() {
            tables.pageids.push((t.clone(), pid));
        }
        if let Some(target) = sample.redirect(&t).unwrap() {
            tables.redirects.push((t.clone(), target.to_owned()));
        }
        if let Some(v) = sample.vector(&t).unwrap() {
            tables.vectors.keys.push(t.clone());
            tables.vectors.data.extend(v.iter());
        }
        titles.insert(t);
    }
    let mut anchors: HashSet<String> = HashSet::new();
    sample
        .for_each_anchor(|a, cands| {
            anchors.insert(a.to_owned());
            let cands = cands
                .iter()
                .map(|c| (c.title.to_owned(), c.count))
                .collect();
            tables.anchors.push((a.to_owned(), cands));
            Ok(())
        })
        .unwrap();
    let mut rng = Rng(7);
    let mut filler = Vec::with_capacity(size.titles);
    let mut i = 0usize;
    while titles.len() + filler.len() < size.titles {
        let n = 1 + rng.below(3);
        let t = filler_key(&mut rng, n, true, i);
        i += 1;
        if !titles.contains(&t) {
            filler.push(t);
        }
    }
    let articles = size.articles.saturating_sub(tables.pageids.len());
    for (k, t) in filler.iter().enumerate() {
        if k < articles {
            tables.pageids.push((t.clone(), 1_000_000_000 + k as i64));
            tables.vectors.keys.push(t.clone());
            for _ in 0..dim {
                let x = (rng.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                tables.vectors.data.push(x);
            }
        } else {
            let to = filler[rng.below(articles.max(1))].clone();
            tables.redirects.push((t.clone(), to));
        }
    }
    let mut i = 0usize;
    while tables.anchors.len() < size.anchors {
        let n = 1 + rng.below(4);
        let a = filler_key(&mut rng, n, false, i);
        i += 1;
        if anchors.contains(&a) {
            continue;
        }
        // Mostly one candidate, a long tail of ambiguous anchors.
        let k = match rng.below(100) {
            0 => 10 + rng.below(200),
            1..=20 => 2 + rng.below(4),
            _ => 1,
        };
        let cands = (0..k)
            .map(|_| {
                (
                    filler[rng.below(articles.max(1))].clone(),
                    1 + rng.below(50) as u32,
                )
            })
            .collect();
        tables.anchors.push((a, cands));
    }
    (tables, filler.len())
}
