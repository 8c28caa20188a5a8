//! The 7 model features of a (page, mention, candidate) triple, in the order the link model
//! takes them, and their scoring.

use std::sync::Arc;

use crate::cosine::SdotKernel;
use crate::dataset::{Candidate, Dataset};
use crate::error::Result;
use crate::jaro::jaro_chars;
use crate::kurtosis::padded_kurtosis;
use crate::xgboost::NUM_FEATURES;

/// Only this many candidates (the highest counts) are scored when an anchor has more.
pub const MAX_CANDIDATES: usize = 10;

/// Python's `str.lower()`, supplied by the caller.
///
/// Exact Python lowercasing (Unicode 14 data, special casing, final sigma) lives in the
/// text crate; this crate takes it as a parameter so both stay in one place.
pub trait Lowercase: Send + Sync {
    /// Lowercases `s` as Python 3.11's `str.lower()` does.
    fn lower(&self, s: &str) -> String;

    /// Appends [`lower`](Self::lower)`(s)` to `out`, which an implementation may do
    /// without a string of its own.
    fn lower_into(&self, s: &str, out: &mut String) {
        out.push_str(&self.lower(s));
    }
}

/// Rust's `str::to_lowercase`: the same algorithm as Python's `str.lower()`, but with
/// Rust's Unicode version, so results may differ for characters assigned after
/// Unicode 14. Fine for tests and tools; the engine should pass the exact one.
#[derive(Debug, Clone, Copy, Default)]
pub struct RustLowercase;

impl Lowercase for RustLowercase {
    fn lower(&self, s: &str) -> String {
        s.to_lowercase()
    }
}

/// The feature vector in model column order, as upstream's float64 row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Features {
    /// 0: number of word tokens of the mention (computed by the caller's tokenizer).
    pub ngram: f64,
    /// 1: the candidate's count.
    pub freq: f64,
    /// 2: number of candidates of the anchor (all of them).
    pub ambig: f64,
    /// 3: padded excess kurtosis of the counts (NaN = missing).
    pub kurtosis: f64,
    /// 4: float32 cosine of the page's and the candidate's vectors (0.0 if missing).
    pub w2v: f64,
    /// 5: Jaro similarity of the lowercased mention and candidate.
    pub jaro: f64,
    /// 6: always 0.0 (upstream replaces the wiki id by 0.0).
    pub wiki: f64,
}

impl Features {
    /// The row as float64, in column order.
    pub fn to_array(&self) -> [f64; NUM_FEATURES] {
        [
            self.ngram,
            self.freq,
            self.ambig,
            self.kurtosis,
            self.w2v,
            self.jaro,
            self.wiki,
        ]
    }

    /// The row as the model sees it: each value rounded to float32.
    pub fn to_row(&self) -> [f32; NUM_FEATURES] {
        self.to_array().map(|v| v as f32)
    }
}

/// One scored candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredCandidate {
    /// Candidate title.
    pub title: String,
    /// Its count.
    pub count: u32,
    /// Its features.
    pub features: Features,
    /// Model probability (float32, as upstream's numpy float32).
    pub probability: f32,
}

/// The scores of one mention's candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct MentionScores {
    /// The scored candidates, in classification order: stored order, or the
    /// [`MAX_CANDIDATES`] highest counts (stable) when there are more.
    pub candidates: Vec<ScoredCandidate>,
}

impl MentionScores {
    /// The candidate upstream picks: maximal probability, first on ties.
    pub fn best(&self) -> Option<&ScoredCandidate> {
        let mut best: Option<&ScoredCandidate> = None;
        for c in &self.candidates {
            if best.is_none_or(|b| c.probability > b.probability) {
                best = Some(c);
            }
        }
        best
    }
}

/// The candidates classification looks at: all of them in stored order when
/// there are at most [`MAX_CANDIDATES`], else the [`MAX_CANDIDATES`] highest counts,
/// ties kept in stored order.
pub fn classification_candidates<'a>(cands: &[Candidate<'a>]) -> Vec<Candidate<'a>> {
    let mut v = cands.to_vec();
    if v.len() > MAX_CANDIDATES {
        // Stable: equal counts keep their stored order, as Python's sorted(reverse=True).
        v.sort_by_key(|c| std::cmp::Reverse(c.count));
        v.truncate(MAX_CANDIDATES);
    }
    v
}

/// Computes features and probabilities. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Scorer {
    lower: Arc<dyn Lowercase>,
    sdot: SdotKernel,
}

impl std::fmt::Debug for Scorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scorer")
            .field("sdot", &self.sdot)
            .finish_non_exhaustive()
    }
}

impl Scorer {
    /// A scorer using `lower` for Python-compatible lowercasing (jaro feature).
    pub fn new(lower: Arc<dyn Lowercase>) -> Self {
        Self {
            lower,
            sdot: SdotKernel::default(),
        }
    }

    /// Selects the OpenBLAS summation order reproduced by the `w2v` feature.
    pub fn with_sdot_kernel(mut self, sdot: SdotKernel) -> Self {
        self.sdot = sdot;
        self
    }

    /// Scores the classification candidates of `mention` (the lowercase anchor key) on
    /// page `page_title`; `ngram` is the mention's token count from the word tokenizer.
    /// `None` if `mention` is not an anchor.
    pub fn score(
        &self,
        dataset: &Dataset,
        page_title: &str,
        mention: &str,
        ngram: u32,
    ) -> Result<Option<MentionScores>> {
        match dataset.anchor_candidates(mention)? {
            Some(all) => self
                .score_candidates(dataset, page_title, mention, ngram, &all)
                .map(Some),
            None => Ok(None),
        }
    }

    /// [`score`](Self::score) with the anchor's candidate map given by the caller:
    /// `all` is the full map in stored order (it defines `ambig` and `kurtosis`); the
    /// classification candidates are taken from it by [`classification_candidates`].
    pub fn score_candidates(
        &self,
        dataset: &Dataset,
        page_title: &str,
        mention: &str,
        ngram: u32,
        all: &[Candidate<'_>],
    ) -> Result<MentionScores> {
        let page = PageVector::of(self, dataset, page_title)?;
        let mut out = Vec::new();
        self.for_each_candidate(dataset, &page, mention, ngram, all, |cand, features, p| {
            out.push(ScoredCandidate {
                title: cand.title.to_owned(),
                count: cand.count,
                features,
                probability: p,
            });
        })?;
        Ok(MentionScores { candidates: out })
    }

    /// The features and probability of each classification candidate of `all`, in
    /// classification order, handed to `f`: the one computation behind
    /// [`score_candidates`](Self::score_candidates) and the engine's pass. `page` is the
    /// page's vector, looked up once per page rather than once per mention.
    pub(crate) fn for_each_candidate<'a>(
        &self,
        dataset: &Dataset,
        page: &PageVector,
        mention: &str,
        ngram: u32,
        all: &[Candidate<'a>],
        mut f: impl FnMut(&Candidate<'a>, Features, f32),
    ) -> Result<()> {
        // The counts of a usual anchor fit on the stack.
        let mut counts = [0u32; 64];
        let kurtosis = match counts.get_mut(..all.len()) {
            Some(slots) => {
                for (slot, c) in slots.iter_mut().zip(all) {
                    *slot = c.count;
                }
                padded_kurtosis(slots)
            }
            None => padded_kurtosis(&all.iter().map(|c| c.count).collect::<Vec<_>>()),
        };
        let mention_lower: Vec<char> = self.lower.lower(mention).chars().collect();
        let model = dataset.model();
        let mut buffers = JaroBuffers::default();
        let mut vector = Vec::new();
        for cand in classification_candidates(all) {
            let w2v = match &page.vector {
                Some((p, norm)) => match dataset.candidate_vector(&cand)? {
                    Some(v) => {
                        vector.clear();
                        vector.extend(v.iter());
                        self.sdot.cosine_with_norm(p, *norm, &vector)
                    }
                    None => 0.0,
                },
                None => 0.0,
            };
            let features = Features {
                ngram: f64::from(ngram),
                freq: f64::from(cand.count),
                ambig: all.len() as f64,
                kurtosis,
                w2v: f64::from(w2v),
                jaro: buffers.jaro(&mention_lower, cand.title, &*self.lower),
                wiki: 0.0,
            };
            f(&cand, features, model.predict(&features.to_row()));
        }
        Ok(())
    }
}

/// A page's vector and its norm (`sqrt(sdot(p, p))`), or `None` when it has none.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageVector {
    vector: Option<(Vec<f32>, f32)>,
}

impl PageVector {
    /// The vector of `page_title` in `dataset`.
    pub(crate) fn of(scorer: &Scorer, dataset: &Dataset, page_title: &str) -> Result<Self> {
        Ok(Self {
            vector: dataset.vector(page_title)?.map(|v| {
                let v = v.to_vec();
                let norm = scorer.sdot.norm(&v);
                (v, norm)
            }),
        })
    }
}

/// Reused buffers for [`jaro_chars`]: a title lowercased, and its code points.
#[derive(Default)]
struct JaroBuffers {
    lowered: String,
    title: Vec<char>,
}

impl JaroBuffers {
    /// The Jaro similarity of `mention` (lowercased code points) and `title` lowercased.
    fn jaro(&mut self, mention: &[char], title: &str, lower: &dyn Lowercase) -> f64 {
        self.lowered.clear();
        lower.lower_into(title, &mut self.lowered);
        self.title.clear();
        self.title.extend(self.lowered.chars());
        jaro_chars(mention, &self.title)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cands(counts: &[u32]) -> Vec<Candidate<'static>> {
        const NAMES: [&str; 12] = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"];
        counts
            .iter()
            .zip(NAMES)
            .map(|(&count, title)| Candidate::new(title, count))
            .collect()
    }

    #[test]
    fn at_most_ten_candidates_keep_stored_order() {
        let c = cands(&[1, 5, 3]);
        assert_eq!(classification_candidates(&c), c);
    }

    #[test]
    fn more_than_ten_keep_the_top_counts_stably() {
        let c = cands(&[1, 5, 3, 5, 2, 2, 9, 1, 2, 4, 2]);
        let titles: Vec<&str> = classification_candidates(&c)
            .iter()
            .map(|c| c.title)
            .collect();
        // Descending counts; equal counts in stored order; of the two 1s ("a" and "h")
        // only the first fits in the ten.
        assert_eq!(titles, ["g", "b", "d", "j", "c", "e", "f", "i", "k", "a"]);
    }

    #[test]
    fn best_is_the_first_maximum() {
        let scored = |title: &str, probability: f32| ScoredCandidate {
            title: title.to_owned(),
            count: 1,
            features: Features {
                ngram: 1.0,
                freq: 1.0,
                ambig: 3.0,
                kurtosis: f64::NAN,
                w2v: 0.0,
                jaro: 0.0,
                wiki: 0.0,
            },
            probability,
        };
        let s = MentionScores {
            candidates: vec![scored("x", 0.25), scored("y", 0.75), scored("z", 0.75)],
        };
        assert_eq!(s.best().map(|c| c.title.as_str()), Some("y"));
        assert!(MentionScores { candidates: vec![] }.best().is_none());
        let row = s.candidates[0].features.to_row();
        assert!(row[3].is_nan());
        assert_eq!(row[6], 0.0);
    }
}
