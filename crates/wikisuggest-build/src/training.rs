//! Training rows: `(mention, candidate)` feature vectors labelled by the links the
//! training articles really have.
//!
//! Each training article is stripped of its article links and run through the engine's
//! own query-time pass ([`recommend`]) with a model that records every mention it is
//! asked to score and accepts none. The rows therefore cover exactly the mentions the
//! engine would score on that page. As in production, the gold anchors are added too,
//! and every candidate of a mention gets a row (not only the top 10). A row is positive
//! iff the article links that anchor to that candidate.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use wikisuggest_engine::features::Features;
use wikisuggest_engine::jaro::jaro;
use wikisuggest_engine::kurtosis::padded_kurtosis;
use wikisuggest_engine::tables::Tables;
use wikisuggest_engine::{NUM_FEATURES, SdotKernel};
use wikisuggest_text::MwTokenizer;
use wikisuggest_text::pipeline::{Candidate, LinkModel, Request, recommend};
use wikisuggest_text::pyunicode;
use wikisuggest_text::title::normalise_title;

use crate::dump::{Namespaces, open_dump};
use crate::error::{BuildError, Result};
use crate::links::{article_links, strip_links};
use crate::scan::Scan;
use crate::split::Split;

/// Feature rows and labels, row-major (`labels.len() × NUM_FEATURES`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrainingRows {
    /// Features in the v2 column order, float32 as the model sees them.
    pub features: Vec<f32>,
    /// 1 for a real link, else 0.
    pub labels: Vec<u8>,
    /// Articles the rows come from.
    pub articles: u64,
    /// Mentions scored.
    pub mentions: u64,
}

/// In-memory lookups over the built tables.
pub struct Lookups<'a> {
    anchors: HashMap<&'a str, &'a [(String, u32)]>,
    redirects: HashMap<&'a str, &'a str>,
    pages: HashSet<&'a str>,
    vectors: HashMap<&'a str, usize>,
    tables: &'a Tables,
}

impl<'a> Lookups<'a> {
    /// Indexes `tables`.
    pub fn new(tables: &'a Tables) -> Self {
        Self {
            anchors: tables
                .anchors
                .iter()
                .map(|(k, c)| (k.as_str(), c.as_slice()))
                .collect(),
            redirects: tables
                .redirects
                .iter()
                .map(|(k, t)| (k.as_str(), t.as_str()))
                .collect(),
            pages: tables.pageids.iter().map(|(k, _)| k.as_str()).collect(),
            vectors: tables
                .vectors
                .keys
                .iter()
                .enumerate()
                .map(|(i, k)| (k.as_str(), i))
                .collect(),
            tables,
        }
    }

    fn vector(&self, title: &str) -> Option<&'a [f32]> {
        self.vectors
            .get(title)
            .and_then(|&i| self.tables.vectors.row(i))
    }

    /// The 7 features of each of `all` (the full candidate list of `mention`), computed as
    /// the engine's scorer computes them at query time.
    pub fn features(
        &self,
        page: &str,
        mention: &str,
        ngram: u32,
        all: &[(String, u32)],
    ) -> Vec<Features> {
        let counts: Vec<u32> = all.iter().map(|(_, c)| *c).collect();
        let kurtosis = padded_kurtosis(&counts);
        let page_vec = self.vector(page);
        let mention_lower = pyunicode::lower(mention);
        let sdot = SdotKernel::default();
        all.iter()
            .map(|(title, count)| {
                let w2v = match (page_vec, self.vector(title)) {
                    (Some(p), Some(c)) => sdot.cosine(p, c),
                    _ => 0.0,
                };
                Features {
                    ngram: f64::from(ngram),
                    freq: f64::from(*count),
                    ambig: all.len() as f64,
                    kurtosis,
                    w2v: f64::from(w2v),
                    jaro: jaro(&mention_lower, &pyunicode::lower(title)),
                    wiki: 0.0,
                }
            })
            .collect()
    }
}

/// The `ngram` feature, exactly as the engine computes it at query time.
pub use wikisuggest_engine::ngram_feature as ngram_count;

/// Records the mentions the query pass scores; accepts none.
struct Recorder<'a> {
    lookups: &'a Lookups<'a>,
    seen: Mutex<Vec<String>>,
}

impl LinkModel for Recorder<'_> {
    fn candidates(&self, anchor: &str) -> Option<Vec<Candidate<'_>>> {
        self.lookups.anchors.get(anchor).map(|cands| {
            cands
                .iter()
                .map(|(title, count)| Candidate {
                    title: title.as_str().into(),
                    count: u64::from(*count),
                })
                .collect()
        })
    }

    fn is_anchor(&self, anchor: &str) -> bool {
        self.lookups.anchors.contains_key(anchor)
    }

    fn redirect(&self, title: &str) -> Option<String> {
        self.lookups.redirects.get(title).map(|t| (*t).to_owned())
    }

    fn has_page(&self, title: &str) -> bool {
        self.lookups.pages.contains(title)
    }

    fn scores(&self, _page: &str, mention: &str, candidates: &[Candidate<'_>]) -> Vec<f32> {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(mention.to_owned());
        }
        vec![0.0; candidates.len()]
    }
}

/// The gold `(anchor, target)` pairs of an article and its text without those links.
pub(crate) fn gold_and_stripped(
    text: &str,
    namespaces: &Namespaces,
    resolve: impl Fn(&str) -> Option<String>,
) -> (HashSet<(String, String)>, String) {
    let links = article_links(text, namespaces);
    let gold = links
        .iter()
        .filter_map(|l| resolve(&l.target).map(|t| (l.anchor.clone(), t)))
        .collect();
    (gold, strip_links(text, &links))
}

/// Generates the training rows from the training articles of `scan` (vectors must be
/// set first).
pub fn training_rows(scan: &Scan, split: &Split) -> Result<TrainingRows> {
    let tokenizer =
        MwTokenizer::new(&scan.options.language_code).map_err(|source| BuildError::Text {
            title: String::new(),
            source,
        })?;
    let lookups = Lookups::new(&scan.tables);
    let resolve = |t: &str| {
        let t = lookups.redirects.get(t).copied().unwrap_or(t);
        lookups.pages.contains(t).then(|| t.to_owned())
    };
    let mut rows = TrainingRows::default();
    let mut reader = open_dump(&scan.dump)?;
    while let Some(page) = reader.next_page()? {
        if rows.articles as usize >= split.max_train_articles {
            break;
        }
        if page.ns != 0 || page.redirect.is_some() {
            continue;
        }
        let title = normalise_title(&page.title);
        if split.is_held_out(&title) {
            continue;
        }
        let (gold, stripped) = gold_and_stripped(&page.text, &scan.namespaces, resolve);
        let recorder = Recorder {
            lookups: &lookups,
            seen: Mutex::new(Vec::new()),
        };
        let request = Request {
            wikitext: &stripped,
            page_title: &title,
            language_code: &scan.options.language_code,
            threshold: f64::INFINITY,
            max_recommendations: 0,
            sections_to_exclude: &[],
            time_budget: None,
            max_work: None,
        };
        recommend(&recorder, &request).map_err(|source| BuildError::Text {
            title: title.clone(),
            source,
        })?;
        let mut mentions = recorder.seen.into_inner().unwrap_or_default();
        let mut gold_anchors: Vec<&String> = gold.iter().map(|(a, _)| a).collect();
        gold_anchors.sort();
        gold_anchors.dedup();
        let scored: HashSet<String> = mentions.iter().cloned().collect();
        mentions.extend(
            gold_anchors
                .into_iter()
                .filter(|a| !scored.contains(*a) && lookups.anchors.contains_key(a.as_str()))
                .cloned(),
        );
        for mention in &mentions {
            let Some(all) = lookups.anchors.get(mention.as_str()) else {
                continue;
            };
            let ngram = ngram_count(&tokenizer, mention);
            for (f, (cand, _)) in lookups
                .features(&title, mention, ngram, all)
                .iter()
                .zip(*all)
            {
                rows.features.extend(f.to_row());
                let label = gold.contains(&(mention.clone(), cand.clone()));
                rows.labels.push(u8::from(label));
            }
            rows.mentions += 1;
        }
        rows.articles += 1;
    }
    debug_assert_eq!(rows.features.len(), rows.labels.len() * NUM_FEATURES);
    Ok(rows)
}
