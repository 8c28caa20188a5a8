//! Lucene's MoreLikeThis as Elasticsearch runs it for CirrusSearch (`XMoreLikeThis` with
//! documents given by id), written on tantivy's primitives.
//!
//! 1. The seeds' term frequencies are summed, seed by seed (in the order of their titles, as
//!    CirrusSearch sorts them), each seed's terms in byte order (a term vector's order).
//!    Terms outside the word-length bounds are skipped.
//! 2. The terms are walked in the order a Java `HashMap` holding them iterates ([`java`]); a
//!    term survives when its summed frequency reaches `min_term_freq` and its document
//!    frequency lies within `[min_doc_freq, max_doc_freq]` (and is not 0). Its score is
//!    `tf · idf` with the classic idf `1 + ln((numDocs + 1) / (docFreq + 1))`, in `f32`.
//! 3. The best `max_query_terms` (capped at 100) are kept by Lucene's bounded heap, which
//!    admits a term only when it scores strictly more than the least kept.
//! 4. The terms become unboosted SHOULD clauses; `minimum_should_match` of them are required
//!    (`⌊30 % · n⌋` by default). Hits are scored with BM25 and the seeds left out.

pub mod java;
mod params;

pub use params::{MAX_QUERY_TERMS_LIMIT, MoreLikeOverrides, MoreLikeParams, minimum_should_match};

use std::collections::HashMap;

use java::{LuceneQueue, iteration_order};

/// One term of a morelike query, with the figures that chose it.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryTerm {
    pub term: String,
    /// Occurrences in the seeds together.
    pub tf: u32,
    /// Documents of the index containing the term.
    pub doc_freq: u64,
    /// `tf · idf`, the selection score.
    pub score: f32,
}

/// The seeds' terms with their summed frequencies, in first-seen order.
#[derive(Default, Debug)]
pub struct SeedTerms {
    terms: Vec<(String, u32)>,
    index: HashMap<String, usize>,
}

impl SeedTerms {
    /// Adds one seed's analysed terms (in text order; they are counted, then taken in byte
    /// order, as a term vector lists them).
    pub fn add_document<I: IntoIterator<Item = String>>(
        &mut self,
        terms: I,
        params: &MoreLikeParams,
    ) {
        let mut counts: HashMap<String, u32> = HashMap::new();
        for t in terms {
            *counts.entry(t).or_insert(0) += 1;
        }
        let mut counts: Vec<(String, u32)> = counts.into_iter().collect();
        counts.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        for (term, freq) in counts {
            if is_noise_word(&term, params) {
                continue;
            }
            match self.index.get(&term) {
                Some(&i) => {
                    if let Some(entry) = self.terms.get_mut(i) {
                        entry.1 = entry.1.saturating_add(freq);
                    }
                }
                None => {
                    self.index.insert(term.clone(), self.terms.len());
                    self.terms.push((term, freq));
                }
            }
        }
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// `isNoiseWord`: the word-length bounds, in UTF-16 code units (Java's `String.length()`).
fn is_noise_word(term: &str, params: &MoreLikeParams) -> bool {
    let len = term.encode_utf16().count();
    let (min, max) = (
        params.min_word_length as usize,
        params.max_word_length as usize,
    );
    (min > 0 && len < min) || (max > 0 && len > max)
}

/// ClassicSimilarity's idf, `(float)(ln((docCount + 1) / (double)(docFreq + 1)) + 1.0)`.
pub fn classic_idf(doc_freq: u64, num_docs: u64) -> f32 {
    (((num_docs + 1) as f64 / (doc_freq + 1) as f64).ln() + 1.0) as f32
}

/// Chooses the query's terms (`createQueue`): `doc_freq` gives a term's document frequency,
/// `num_docs` is the index's document count. Returned best first.
pub fn select_terms<E>(
    seeds: &SeedTerms,
    params: &MoreLikeParams,
    num_docs: u64,
    mut doc_freq: impl FnMut(&str) -> Result<u64, E>,
) -> Result<Vec<QueryTerm>, E> {
    let limit = params.query_terms_limit().min(seeds.terms.len());
    let mut queue = LuceneQueue::new(limit, |a: &QueryTerm, b: &QueryTerm| a.score < b.score);
    if limit == 0 {
        return Ok(Vec::new());
    }
    let max_doc_freq = params.max_doc_freq.map_or(u64::MAX, u64::from);
    for i in iteration_order(&seeds.terms.iter().map(|t| t.0.as_str()).collect::<Vec<_>>()) {
        let Some((term, tf)) = seeds.terms.get(i) else {
            continue;
        };
        let tf = *tf;
        if params.min_term_freq > 0 && tf < params.min_term_freq {
            continue;
        }
        let df = doc_freq(term)?;
        if params.min_doc_freq > 0 && df < u64::from(params.min_doc_freq) {
            continue;
        }
        if df > max_doc_freq || df == 0 {
            continue;
        }
        // `float score = tf * idf;` (int times float, in float).
        let score = tf as f32 * classic_idf(df, num_docs);
        let candidate = QueryTerm {
            term: term.clone(),
            tf,
            doc_freq: df,
            score,
        };
        if !queue.is_full() {
            queue.add(candidate);
        } else if let Some(top) = queue.top_mut()
            && top.score < score
        {
            *top = candidate;
            queue.update_top();
        }
    }
    let mut chosen = Vec::with_capacity(queue.len());
    while let Some(t) = queue.pop() {
        chosen.push(t);
    }
    chosen.reverse();
    Ok(chosen)
}
