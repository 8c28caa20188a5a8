//! Link recommendations: the request the routes hand to a backend, the backend trait, and
//! the per-wiki datasets (opened once at start-up, shared by all requests).

mod engine;
pub mod fetch;
pub mod params;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use wikisuggest_core::models::LinkRecommendationSet;
use wikisuggest_engine::{Dataset, Engine, NativeOpenOptions};

pub use engine::EngineBackend;

use crate::error::{Error, Result};

/// One request, parsed and defaulted as in link-engine.md §6.3.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRequest {
    /// Normalised title (§2.4.1), echoed as `page_title`.
    pub page_title: String,
    pub wikitext: String,
    pub revid: i64,
    /// Echoed unchanged, whatever its JSON type.
    pub pageid: Value,
    pub language_code: String,
    pub threshold: f64,
    /// 0 or negative: unlimited.
    pub max_recommendations: i64,
    pub sections_to_exclude: Vec<String>,
}

/// Why a backend produced no answer: a problem with this request's input (400) or with the
/// backend itself (500).
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("{0}")]
    BadInput(String),
    #[error("{0}")]
    Failed(String),
}

/// What the link routes call: [`EngineBackend`] by default, or any implementation (a stub in
/// tests, another engine) given to [`crate::Server::bind_with_backend`].
pub trait LinkBackend: Send + Sync + 'static {
    /// Wiki ids served (`enwiki`, …), sorted.
    fn wikis(&self) -> Vec<String>;

    fn recommend(
        &self,
        wiki_id: &str,
        request: &LinkRequest,
    ) -> Result<LinkRecommendationSet, BackendError>;

    /// [`LinkBackend::recommend`] for a request that may go away: `cancel` is set when
    /// nobody waits for the answer any more (client gone, request timed out), and a
    /// backend that can should then stop working. By default, it is ignored.
    fn recommend_cancellable(
        &self,
        wiki_id: &str,
        request: &LinkRequest,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<LinkRecommendationSet, BackendError> {
        let _ = cancel;
        self.recommend(wiki_id, request)
    }
}

/// Opens `dir/<wiki_id>/` for every sub-folder (a native `<wiki_id>.linkdata`, or the
/// published `.sql.gz` / `.sqlite` files) as an engine. A native file's checksum is verified:
/// a server answers from it for a long time, so it reads it whole once, at start-up.
pub fn open_datasets(dir: &Path) -> Result<BTreeMap<String, Engine>> {
    let mut datasets = BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::input(dir, e))? {
        let path = entry.map_err(|e| Error::input(dir, e))?.path();
        if !path.is_dir() {
            continue;
        }
        let Some(wiki_id) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        let options = NativeOpenOptions {
            verify: true,
            ..NativeOpenOptions::default()
        };
        let dataset =
            Dataset::open_with(&path, &wiki_id, &options).map_err(|source| Error::Dataset {
                wiki_id: wiki_id.clone(),
                source,
            })?;
        log::info!("opened dataset {wiki_id} from {}", path.display());
        datasets.insert(wiki_id, Engine::new(dataset));
    }
    Ok(datasets)
}

/// `project`/`domain` → wiki id, as the service computes it (§6.2).
pub fn wiki_id(project: &str, domain: &str) -> String {
    if project == "wikipedia" {
        format!("{domain}wiki")
    } else {
        format!("{domain}{project}")
    }
}

/// The `valid_project_domain_pairs` of a 404: `wikipedia/<id without "wiki">`.
pub fn project_domain_pairs(wikis: &[String]) -> Vec<String> {
    wikis
        .iter()
        .map(|id| format!("wikipedia/{}", id.replace("wiki", "")))
        .collect()
}
