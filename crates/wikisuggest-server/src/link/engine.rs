//! The link engine: `wikisuggest-engine`'s [`Engine`] (the placement pass of `wikisuggest-text`
//! over one wiki's dataset, scored by its model; link-engine.md §2, §4), answering the
//! server's requests.
//!
//! The server calls the engine's own entry point rather than adapting the dataset to the
//! placement pass itself: one adapter serves the Python engine, the builder's backtest and
//! the server, so the server takes the same fast anchor look-ups and reports a damaged
//! dataset as an error instead of answering as if the data were missing.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use wikisuggest_core::models::{DatasetChecksums, LinkRecommendation, LinkRecommendationSet, Meta};
use wikisuggest_engine::{Engine, RecommendOptions, TextError};

use super::{BackendError, LinkBackend, LinkRequest};

/// Upstream stops placing links after 29 seconds and returns what it found.
const TIME_BUDGET: Duration = Duration::from_secs(29);

pub struct EngineBackend {
    engines: BTreeMap<String, Arc<Engine>>,
}

impl EngineBackend {
    /// One engine per wiki id, each reporting `application_version` in `meta`.
    pub fn new(engines: BTreeMap<String, Engine>, application_version: &str) -> Self {
        let engines = engines
            .into_iter()
            .map(|(wiki, engine)| {
                let engine = engine.with_application_version(application_version);
                (wiki, Arc::new(engine))
            })
            .collect();
        Self { engines }
    }
}

impl LinkBackend for EngineBackend {
    fn wikis(&self) -> Vec<String> {
        self.engines.keys().cloned().collect()
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
        let engine = self
            .engines
            .get(wiki_id)
            .ok_or_else(|| BackendError::Failed(format!("no dataset for {wiki_id}")))?;
        let options = RecommendOptions {
            language_code: Some(request.language_code.clone()),
            threshold: request.threshold,
            max_recommendations: request.max_recommendations,
            sections_to_exclude: request.sections_to_exclude.clone(),
            time_budget: Some(TIME_BUDGET),
            max_work: None,
        };
        // The engine refuses answers from a mapped dataset changed in place since start-up.
        let found = engine
            .recommend_normalised(
                &request.wikitext,
                request.page_title.clone(),
                None,
                Some(request.revid),
                &options,
                Some(cancel),
            )
            .map_err(engine_error)?;
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
        let checksums = found.meta.dataset_checksums;
        Ok(LinkRecommendationSet {
            links_count: Some(links.len() as i64),
            links,
            meta: Some(Meta {
                application_version: Some(found.meta.application_version),
                dataset_checksums: Some(DatasetChecksums {
                    anchors: checksums.anchors,
                    model: checksums.model,
                    pageids: checksums.pageids,
                    redirects: checksums.redirects,
                    w2vfiltered: checksums.w2vfiltered,
                    extra: Default::default(),
                }),
                format_version: Some(found.meta.format_version),
                extra: Default::default(),
            }),
            page_title: Some(found.page_title),
            pageid: None,
            revid: found.revid,
            extra: Default::default(),
        })
    }
}

/// Languages the tokenizer cannot handle are the request's problem (400); the rest, a
/// damaged dataset included, are the engine's (500, as upstream).
fn engine_error(err: wikisuggest_engine::Error) -> BackendError {
    match err {
        wikisuggest_engine::Error::Text(TextError::UnsupportedLanguage { .. }) => {
            BackendError::BadInput(err.to_string())
        }
        other => BackendError::Failed(other.to_string()),
    }
}
