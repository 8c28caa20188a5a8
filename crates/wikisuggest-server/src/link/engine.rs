//! The link engine: `wikisuggest-engine`'s [`Engine`] (the placement pass of `wikisuggest-text`
//! over one wiki's dataset, scored by its model, as research-mwaddlink does), answering the
//! server's requests.
//!
//! The server calls the engine's own entry point rather than adapting the dataset to the
//! placement pass itself: one adapter serves the Python engine, the builder's backtest and
//! the server, so the server takes the same fast anchor look-ups and reports a damaged
//! dataset as an error instead of answering as if the data were missing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use wikisuggest_core::models::LinkRecommendationSet;
use wikisuggest_engine::{Engine, RecommendOptions, Rules, TextError};

use super::live::{LiveEngine, ReloadOutcome};
use super::{BackendError, LinkBackend, LinkRequest};

/// The engine's budget per request unless [`EngineBackend::with_time_budget`] sets one
/// (production stops placing links after 29 seconds and returns what it found).
const TIME_BUDGET: Duration = Duration::from_secs(29);

pub struct EngineBackend {
    engines: BTreeMap<String, Arc<LiveEngine>>,
    time_budget: Duration,
    /// Never-link rules of the wikis that have them.
    rules: BTreeMap<String, Arc<Rules>>,
}

impl EngineBackend {
    /// One engine per wiki id, each reporting `application_version` in `meta`.
    pub fn new(engines: BTreeMap<String, Engine>, application_version: &str) -> Self {
        let engines = engines
            .into_iter()
            .map(|(wiki, engine)| {
                let live = LiveEngine::new(engine, &wiki, application_version, Duration::ZERO);
                (wiki, live)
            })
            .collect();
        Self::from_live(engines)
    }

    /// Engines that open their dataset again when its files are replaced.
    pub fn from_live(engines: BTreeMap<String, LiveEngine>) -> Self {
        let engines = engines
            .into_iter()
            .map(|(wiki, live)| (wiki, Arc::new(live)))
            .collect();
        Self {
            engines,
            time_budget: TIME_BUDGET,
            rules: BTreeMap::new(),
        }
    }

    /// Sets the wall-clock budget of each page's pass.
    pub fn with_time_budget(mut self, budget: Duration) -> Self {
        self.time_budget = budget;
        self
    }

    /// Reads each wiki's rule file; a file for a wiki without a dataset is refused, as a
    /// misspelt wiki id would otherwise leave its rules unapplied.
    ///
    /// # Errors
    /// [`crate::Error::Input`] naming the file.
    pub fn with_rules(mut self, files: &[(String, PathBuf)]) -> crate::Result<Self> {
        for (wiki, path) in files {
            if !self.engines.contains_key(wiki) {
                return Err(crate::Error::input(
                    path,
                    format!("rules for {wiki}, which has no dataset"),
                ));
            }
            let rules = Rules::load(path).map_err(|e| crate::Error::input(path, e))?;
            log::info!("rules for {wiki} from {}", path.display());
            self.rules.insert(wiki.clone(), Arc::new(rules));
        }
        Ok(self)
    }
}

impl LinkBackend for EngineBackend {
    fn wikis(&self) -> Vec<String> {
        self.engines.keys().cloned().collect()
    }

    fn reload(&self) -> Vec<(String, ReloadOutcome)> {
        self.engines
            .iter()
            .map(|(wiki, live)| (wiki.clone(), live.reload()))
            .collect()
    }

    fn recommend_cancellable(
        &self,
        wiki_id: &str,
        request: &LinkRequest,
        cancel: &AtomicBool,
    ) -> Result<LinkRecommendationSet, BackendError> {
        let live = self
            .engines
            .get(wiki_id)
            .ok_or_else(|| BackendError::Failed(format!("no dataset for {wiki_id}")))?;
        let engine = live.engine();
        let options = RecommendOptions {
            link: request.options.clone(),
            time_budget: Some(self.time_budget),
            rules: self.rules.get(wiki_id).cloned(),
            max_work: None,
        };
        // The engine refuses answers from a mapped dataset changed in place since it was
        // opened: open it again for the requests to come.
        let found = engine
            .recommend_normalised(
                &request.wikitext,
                request.page_title.clone(),
                None,
                Some(request.revid),
                &options,
                Some(cancel),
            )
            .map_err(|e| {
                if matches!(e, wikisuggest_engine::Error::Changed { .. }) {
                    live.changed_under_engine();
                }
                engine_error(e)
            })?;
        // The engine owns the one mapping to the wire record (the client's too).
        Ok(found.into())
    }
}

/// Languages the tokenizer cannot handle are the request's problem (400); a dataset file
/// that changed under the engine is being opened again (503); the rest, a damaged dataset
/// included, are the engine's (500, as upstream).
fn engine_error(err: wikisuggest_engine::Error) -> BackendError {
    match err {
        // A page refused for its language or for markup too complex to read within the
        // engine's work bound (deeply nested links) is the request's fault: the same page
        // gets the same answer on every try and every machine.
        wikisuggest_engine::Error::Text(
            TextError::UnsupportedLanguage { .. }
            | TextError::WorkLimitExceeded { .. }
            | TextError::ParseLimitExceeded,
        ) => BackendError::BadInput(err.to_string()),
        wikisuggest_engine::Error::Changed { .. } => {
            // The path stays in the log: clients learn what to do, not where files are.
            log::warn!("{err}");
            BackendError::Unavailable(
                "The dataset of this wiki changed on disk and is being opened again; retry \
                 shortly."
                    .into(),
            )
        }
        other => BackendError::Failed(other.to_string()),
    }
}
