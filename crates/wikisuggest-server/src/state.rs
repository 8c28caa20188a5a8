//! What every request shares: opened once at start-up, read concurrently afterwards.

use std::collections::BTreeMap;
use std::sync::Arc;

use wikisuggest_core::mediawiki::ActionApi;

use crate::config::ServerConfig;
use crate::link::LinkBackend;
use crate::link::slots::FairSlots;
use crate::link::workers::EngineThreads;
use crate::oauth::{ClientRegistry, TokenService};
use crate::pages::PageStore;
use crate::ratelimit::RateLimiter;
use crate::translation::TranslationCatalogs;

pub struct AppState {
    pub config: ServerConfig,
    pub backend: Arc<dyn LinkBackend>,
    /// Wiki ids the backend serves, computed once.
    pub wikis: Vec<String>,
    pub pages: Option<PageStore>,
    /// Action API clients of the wikis whose pages are fetched (`--wiki-api`).
    pub wiki_apis: BTreeMap<String, Arc<ActionApi>>,
    pub translation: TranslationCatalogs,
    pub clients: ClientRegistry,
    pub tokens: TokenService,
    pub limiter: RateLimiter,
    /// One slot per link request the engine may compute at once (`config.link_workers`),
    /// shared fairly between apps.
    pub link_slots: Arc<FairSlots>,
    /// The engine's threads, one per slot: what a link request's page is computed on.
    pub engine_threads: EngineThreads,
}

pub type SharedState = Arc<AppState>;
