//! The text crate's [`LinkModel`] backed by a [`Dataset`] and a [`Scorer`].

use std::borrow::Cow;
use std::sync::{Mutex, OnceLock};

use wikisuggest_text::MwTokenizer;
use wikisuggest_text::pipeline::{Candidate, GramRow, LinkModel, MAX_GRAM};
use wikisuggest_text::pyunicode;
use wikisuggest_text::tokenize::is_punctuation;

use crate::dataset::{Candidate as DatasetCandidate, Dataset};
use crate::error::Error;
use crate::features::{Lowercase, PageVector, Scorer};

/// Python's `str.lower()` from the text crate, the one the datasets were keyed with.
#[derive(Debug, Clone, Copy, Default)]
pub struct PyLowercase;

impl Lowercase for PyLowercase {
    fn lower(&self, s: &str) -> String {
        pyunicode::lower(s)
    }

    fn lower_into(&self, s: &str, out: &mut String) {
        pyunicode::lower_into(out, s);
    }
}

/// The `ngram` feature: word tokens of the mention, leaving out tokens that
/// start with U+0020 and single punctuation characters.
pub fn ngram_feature(tokenizer: &MwTokenizer, mention: &str) -> u32 {
    let kept = tokenizer
        .words(mention)
        .into_iter()
        .filter(|t| !t.starts_with(' '))
        .filter(|t| {
            let mut chars = t.chars();
            !matches!((chars.next(), chars.next()), (Some(c), None) if is_punctuation(c))
        })
        .count();
    u32::try_from(kept).unwrap_or(u32::MAX)
}

/// One request's view of the dataset.
///
/// [`LinkModel`] is infallible, but dataset lookups fail on a corrupt native file; the
/// first such error is kept here and reported once the pass returns, while the pass itself
/// sees "no data".
pub(super) struct DatasetModel<'a> {
    pub dataset: &'a Dataset,
    pub scorer: &'a Scorer,
    pub tokenizer: &'a MwTokenizer,
    pub failure: Mutex<Option<Error>>,
    /// The page's vector, looked up at the first mention scored (the pass scores the
    /// mentions of one page).
    page: OnceLock<(String, PageVector)>,
    /// The last anchor whose candidates the pass asked for, with its full candidate map:
    /// the pass scores a mention right after asking for its candidates.
    last: Mutex<Option<(String, Vec<DatasetCandidate<'a>>)>>,
    /// The last title whose redirect the pass asked for, if it is no redirect, with its
    /// index: the pass asks next whether that title is a page.
    title: Mutex<Option<(String, Option<u32>)>>,
}

impl<'a> DatasetModel<'a> {
    pub fn new(dataset: &'a Dataset, scorer: &'a Scorer, tokenizer: &'a MwTokenizer) -> Self {
        Self {
            dataset,
            scorer,
            tokenizer,
            failure: Mutex::new(None),
            page: OnceLock::new(),
            last: Mutex::new(None),
            title: Mutex::new(None),
        }
    }

    fn keep<T>(&self, result: Result<T, Error>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                if let Ok(mut slot) = self.failure.lock() {
                    slot.get_or_insert(error);
                }
                None
            }
        }
    }

    /// The first lookup error met, if any.
    pub fn into_failure(self) -> Option<Error> {
        self.failure.into_inner().ok().flatten()
    }
}

impl LinkModel for DatasetModel<'_> {
    /// The titles are borrowed from the dataset, not copied.
    fn candidates(&self, anchor: &str) -> Option<Vec<Candidate<'_>>> {
        let found = self.keep(self.dataset.anchor_candidates(anchor))??;
        let owned = found
            .iter()
            .map(|c| Candidate {
                title: Cow::Borrowed(c.title),
                count: u64::from(c.count),
            })
            .collect();
        if let Ok(mut last) = self.last.lock() {
            *last = Some((anchor.to_owned(), found));
        }
        Some(owned)
    }

    fn is_anchor(&self, anchor: &str) -> bool {
        self.keep(self.dataset.has_anchor(anchor)).unwrap_or(false)
    }

    fn anchor_prefixes(&self, text: &str, ends: &[usize], out: &mut Vec<bool>) {
        let before = out.len();
        if self
            .keep(self.dataset.has_anchor_prefixes(text, ends, out))
            .is_none()
        {
            // A damaged file: reported once the pass ends; until then, no anchors.
            out.truncate(before);
            out.resize(before + ends.len(), false);
        }
    }

    fn anchor_rows(&self, text: &str, rows: &[GramRow], out: &mut Vec<[bool; MAX_GRAM]>) {
        let before = out.len();
        if self
            .keep(self.dataset.has_anchor_rows(text, rows, out))
            .is_none()
        {
            // A damaged file: reported once the pass ends; until then, no anchors.
            out.truncate(before);
            out.resize(before + rows.len(), [false; MAX_GRAM]);
        }
    }

    fn redirect(&self, title: &str) -> Option<String> {
        let (target, index) = self.keep(self.dataset.redirect_found(title))?;
        if target.is_none()
            && let Ok(mut last) = self.title.lock()
        {
            let last = last.get_or_insert_with(|| (String::new(), None));
            last.0.clear();
            last.0.push_str(title);
            last.1 = index;
        }
        target.map(str::to_owned)
    }

    /// One title look-up, and the target's spelling from the dataset.
    fn link_target(&self, title: &str, out: &mut String) -> bool {
        self.keep(self.dataset.link_target_into(title, out))
            .unwrap_or(false)
    }

    fn prepare_link_targets(&self, titles: &[&str]) {
        self.dataset.prefetch_link_targets(titles);
    }

    fn has_page(&self, title: &str) -> bool {
        let remembered = self
            .title
            .lock()
            .ok()
            .and_then(|last| last.as_ref().filter(|(t, _)| t == title).map(|(_, i)| *i));
        let found = match remembered {
            Some(Some(t)) => self.dataset.has_page_at(t),
            Some(None) => Ok(false),
            None => self.dataset.has_page(title),
        };
        self.keep(found).unwrap_or(false)
    }

    /// Scores every candidate of the mention in one pass over the anchor's full candidate
    /// map (which `ambig` and `kurtosis` need); the pass hands us the same top-10 slice the
    /// scorer derives from it, in the same order.
    fn scores(&self, page_title: &str, mention: &str, candidates: &[Candidate<'_>]) -> Vec<f32> {
        let mut scores = vec![f32::NAN; candidates.len()];
        let remembered = self
            .last
            .lock()
            .ok()
            .and_then(|mut last| last.take())
            .filter(|(anchor, _)| anchor == mention)
            .map(|(_, all)| all);
        let Some(all) =
            remembered.or_else(|| self.keep(self.dataset.anchor_candidates(mention))?)
        else {
            return scores;
        };
        let page = match self.page.get() {
            Some((title, page)) if title == page_title => Some(page),
            Some(_) => None,
            None => self
                .keep(PageVector::of(self.scorer, self.dataset, page_title))
                .map(|page| &self.page.get_or_init(|| (page_title.to_owned(), page)).1),
        };
        // Another page's title (never, in the pass): looked up for this call only.
        let other;
        let page = match page {
            Some(page) => page,
            None => match self.keep(PageVector::of(self.scorer, self.dataset, page_title)) {
                Some(page) => {
                    other = page;
                    &other
                }
                None => return scores,
            },
        };
        let ngram = ngram_feature(self.tokenizer, mention);
        let mut scored: Vec<(&str, f32)> = Vec::with_capacity(candidates.len());
        let done = self.scorer.for_each_candidate(
            self.dataset,
            page,
            mention,
            ngram,
            &all,
            |cand, _, p| scored.push((cand.title, p)),
        );
        if self.keep(done).is_none() {
            return scores;
        }
        for (score, c) in scores.iter_mut().zip(candidates) {
            if let Some(&(_, p)) = scored.iter().find(|(title, _)| *title == c.title) {
                *score = p;
            }
        }
        scores
    }
}
