//! The link engine: the placement pass of `wikisuggest-text` (link-engine.md §2) over one
//! wiki's dataset, scored by `wikisuggest-engine`'s model (§4).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use wikisuggest_core::models::{DatasetChecksums, LinkRecommendation, LinkRecommendationSet, Meta};
use wikisuggest_engine::{Dataset, Lowercase, Scorer};
use wikisuggest_text::pipeline::{self, Candidate};
use wikisuggest_text::tokenize::{Tokenizer, is_punctuation};
use wikisuggest_text::{TextError, pyunicode};

use super::{BackendError, LinkBackend, LinkRequest};

/// Upstream stops placing links after 29 seconds and returns what it found.
const TIME_BUDGET: Duration = Duration::from_secs(29);

/// Python's `str.lower()`, as the model's `jaro` feature needs.
struct PythonLower;

impl Lowercase for PythonLower {
    fn lower(&self, s: &str) -> String {
        pyunicode::lower(s)
    }
}

pub struct EngineBackend {
    datasets: BTreeMap<String, Arc<Dataset>>,
    scorer: Scorer,
    application_version: String,
}

impl EngineBackend {
    pub fn new(datasets: BTreeMap<String, Arc<Dataset>>, application_version: String) -> Self {
        Self {
            datasets,
            scorer: Scorer::new(Arc::new(PythonLower)),
            application_version,
        }
    }
}

/// One request's view of a wiki for the placement pass.
struct WikiModel<'a> {
    dataset: &'a Dataset,
    scorer: &'a Scorer,
    tokenizer: &'a Tokenizer,
}

/// The `ngram` feature (§4.1): word tokens of the mention, without tokens starting with a
/// space and single punctuation characters.
fn ngram(tokenizer: &Tokenizer, mention: &str) -> u32 {
    let count = tokenizer
        .words(mention)
        .into_iter()
        .filter(|token| {
            let mut chars = token.chars();
            let single_punct =
                matches!((chars.next(), chars.next()), (Some(c), None) if is_punctuation(c));
            !token.starts_with(' ') && !single_punct
        })
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

impl pipeline::LinkModel for WikiModel<'_> {
    fn candidates(&self, anchor: &str) -> Option<Vec<Candidate>> {
        match self.dataset.anchor_candidates(anchor) {
            Ok(found) => found.map(|all| {
                all.iter()
                    .map(|c| Candidate {
                        title: c.title.to_owned(),
                        count: u64::from(c.count),
                    })
                    .collect()
            }),
            Err(err) => {
                log::error!("anchor lookup failed: {err}");
                None
            }
        }
    }

    fn redirect(&self, title: &str) -> Option<String> {
        self.dataset
            .redirect(title)
            .ok()
            .flatten()
            .map(str::to_owned)
    }

    fn has_page(&self, title: &str) -> bool {
        self.dataset.has_page(title).unwrap_or(false)
    }

    fn scores(&self, page_title: &str, mention: &str, candidates: &[Candidate]) -> Vec<f32> {
        let scored = self.dataset.anchor_candidates(mention).and_then(|all| {
            let all = all.unwrap_or_default();
            let n = ngram(self.tokenizer, mention);
            self.scorer
                .score_candidates(self.dataset, page_title, mention, n, &all)
        });
        match scored {
            Ok(scores) => candidates
                .iter()
                .map(|c| {
                    scores
                        .candidates
                        .iter()
                        .find(|s| s.title == c.title)
                        .map_or(0.0, |s| s.probability)
                })
                .collect(),
            Err(err) => {
                log::error!("scoring {mention:?} failed: {err}");
                vec![0.0; candidates.len()]
            }
        }
    }
}

impl LinkBackend for EngineBackend {
    fn wikis(&self) -> Vec<String> {
        self.datasets.keys().cloned().collect()
    }

    fn recommend(
        &self,
        wiki_id: &str,
        request: &LinkRequest,
    ) -> Result<LinkRecommendationSet, BackendError> {
        self.recommend_cancellable(wiki_id, request, &AtomicBool::new(false))
    }

    fn recommend_cancellable(
        &self,
        wiki_id: &str,
        request: &LinkRequest,
        cancel: &AtomicBool,
    ) -> Result<LinkRecommendationSet, BackendError> {
        let dataset = self
            .datasets
            .get(wiki_id)
            .ok_or_else(|| BackendError::Failed(format!("no dataset for {wiki_id}")))?;
        let tokenizer = Tokenizer::new(&request.language_code).map_err(text_error)?;
        // A mapped dataset changed in place since start-up gives no answers (see
        // `Dataset::check_unchanged`); checked again after the pass.
        let unchanged = || {
            dataset
                .check_unchanged()
                .map_err(|e| BackendError::Failed(e.to_string()))
        };
        unchanged()?;
        let model = WikiModel {
            dataset,
            scorer: &self.scorer,
            tokenizer: &tokenizer,
        };
        let found = pipeline::recommend_cancellable(
            &model,
            &pipeline::Request {
                wikitext: &request.wikitext,
                page_title: &request.page_title,
                language_code: &request.language_code,
                threshold: request.threshold,
                max_recommendations: request.max_recommendations,
                sections_to_exclude: &request.sections_to_exclude,
                time_budget: Some(TIME_BUDGET),
            },
            Some(cancel),
        )
        .map_err(text_error)?;
        unchanged()?;
        let links: Vec<LinkRecommendation> = found
            .links
            .into_iter()
            .map(|link| LinkRecommendation {
                context_after: Some(link.context_after),
                context_before: Some(link.context_before),
                link_index: Some(link.link_index as i64),
                link_target: link.link_target,
                link_text: link.link_text,
                match_index: Some(link.match_index as i64),
                score: Some(f64::from(link.score)),
                wikitext_offset: Some(link.wikitext_offset as i64),
                extra: Default::default(),
            })
            .collect();
        let checksums = dataset.checksums();
        Ok(LinkRecommendationSet {
            links_count: Some(links.len() as i64),
            links,
            meta: Some(Meta {
                application_version: Some(self.application_version.clone()),
                dataset_checksums: Some(DatasetChecksums {
                    anchors: checksums.anchors.clone(),
                    model: checksums.model.clone(),
                    pageids: checksums.pageids.clone(),
                    redirects: checksums.redirects.clone(),
                    w2vfiltered: checksums.w2vfiltered.clone(),
                    extra: Default::default(),
                }),
                format_version: Some(1),
                extra: Default::default(),
            }),
            page_title: Some(request.page_title.clone()),
            pageid: None,
            revid: Some(request.revid),
            extra: Default::default(),
        })
    }
}

/// Languages the tokenizer cannot handle are the request's problem (400); the rest are the
/// engine's (500, as upstream).
fn text_error(err: TextError) -> BackendError {
    match err {
        TextError::UnsupportedLanguage { .. } => BackendError::BadInput(err.to_string()),
        other => BackendError::Failed(other.to_string()),
    }
}
