//! Everything the server is started with. Defaults follow the contract (token lifetimes) and
//! keep a bare `wikisuggest serve` safe: loopback only, bounded bodies and request times.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::time::Duration;

/// Requests per minute allowed to one app (bearer token's client) or one anonymous
/// User-Agent, with a burst of the same size.
#[derive(Debug, Clone, PartialEq)]
pub struct RateLimits {
    /// Default for authenticated apps; a client in the clients file may override it.
    pub authenticated_per_minute: u32,
    /// Per distinct User-Agent of unauthenticated requests.
    pub anonymous_per_minute: u32,
}

impl Default for RateLimits {
    fn default() -> Self {
        // The REST gateway's `authed-user` and `unauthed-bot` classes (per minute).
        Self {
            authenticated_per_minute: 200,
            anonymous_per_minute: 200,
        }
    }
}

/// The body of a translation answer: the contract's bare array of five-field items, or the
/// envelope deployments have written since November 2025 (`recommendations` with every item
/// field, `continue_offset`, `continue_seed`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TranslationShape {
    #[default]
    Array,
    Envelope,
}

impl TranslationShape {
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "array" => Some(Self::Array),
            "envelope" => Some(Self::Envelope),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub host: IpAddr,
    /// 0 picks a free port; [`crate::RunningServer::local_addr`] tells which.
    pub port: u16,
    /// One sub-folder per wiki id (`enwiki/`), in the native or published format.
    pub datasets: Option<PathBuf>,
    /// A MediaWiki XML dump (`.xml`, `.xml.bz2`) or a directory of `Title.wikitext` files.
    pub pages: Option<PathBuf>,
    /// Wikis whose pages GET link requests fetch from a MediaWiki Action API, as production's
    /// service does: `(wiki id, api.php URL)`. A wiki listed here is not read from `pages`.
    pub wiki_apis: Vec<(String, String)>,
    /// Never-link rules per wiki: `(wiki id, rule file)`; the engine applies a wiki's rules
    /// to every link request for it.
    pub rules: Vec<(String, PathBuf)>,
    /// Directory of per-language translation catalogs (`<lang>.jsonl.gz`).
    pub translation: Option<PathBuf>,
    /// TOML file of registered OAuth clients and personal API tokens.
    pub clients: Option<PathBuf>,
    /// Seed of every shuffle (translation `rank_method=default`); random when `None`.
    pub seed: Option<u64>,
    pub translation_shape: TranslationShape,
    pub access_token_ttl: Duration,
    pub refresh_token_ttl: Duration,
    /// How long a rotated refresh token stays usable (lost-response retries).
    pub refresh_grace: Duration,
    pub authorization_code_ttl: Duration,
    pub rate_limits: RateLimits,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    /// How long a connection may take to send a request's headers (and how long it may sit
    /// idle between requests); a half-sent request is dropped after that.
    pub header_read_timeout: Duration,
    /// Most connections open at once, so the process never runs out of file descriptors.
    /// When all are taken, a new client takes the slot of the connection that has waited
    /// longest without completing a request head.
    pub max_connections: usize,
    /// Most link requests computed at once (at least one); the others wait their turn.
    /// The engine is CPU-bound, so running more pages than there are cores only adds
    /// thread switches and working memory; a request that gives up while waiting costs
    /// nothing. The number of cores by default.
    pub link_workers: usize,
    /// Reported in `meta.application_version`.
    pub application_version: String,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 8080,
            datasets: None,
            pages: None,
            wiki_apis: Vec::new(),
            rules: Vec::new(),
            translation: None,
            clients: None,
            seed: None,
            translation_shape: TranslationShape::Array,
            access_token_ttl: Duration::from_secs(14_400),
            refresh_token_ttl: Duration::from_secs(365 * 24 * 3600),
            refresh_grace: Duration::from_secs(600),
            authorization_code_ttl: Duration::from_secs(600),
            rate_limits: RateLimits::default(),
            max_body_bytes: 4 * 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            header_read_timeout: Duration::from_secs(10),
            max_connections: 512,
            link_workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            application_version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}
