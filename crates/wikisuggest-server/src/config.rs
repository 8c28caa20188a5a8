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
    /// Translation catalogs: `(wiki, path)` with the wiki id when the caller named one (it is
    /// checked against the catalog's own); a path is a catalog folder or a folder of them.
    pub translation_catalogs: Vec<(Option<String>, PathBuf)>,
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
    /// 0 (the default): sized from the process's descriptor limit (see `docs/self-hosting.md`);
    /// a larger value than that limit allows is lowered to it. When all are taken, a new
    /// client takes the place of the connection idle the longest (idle: no request in
    /// flight, before the first request or between two); when every connection is busy
    /// with a request, the newcomer is answered 503 with `Connection: close`.
    pub max_connections: usize,
    /// Most connections one client address (an IPv6 /64) holds at once; a client at its cap
    /// makes room among its own connections only. 0 (the default): an eighth of the
    /// connection cap, at least 8. Behind a reverse proxy every client has the proxy's
    /// address: raise it to the cap there.
    pub max_connections_per_address: usize,
    /// Most link requests computed at once (at least one); the others wait their turn.
    /// The engine is CPU-bound, so running more pages than there are cores only adds
    /// thread switches and working memory; a request that gives up while waiting costs
    /// nothing. The number of cores by default. A free slot goes to the waiting app
    /// (token's client, personal token, or anonymous client address) that holds the fewest
    /// slots, so one app's requests cannot keep another's waiting behind them.
    pub link_workers: usize,
    /// Wall-clock budget of the engine per link request: at its end the page's pass stops
    /// and the links found so far are answered (production stops at 29 s). It bounds how
    /// long one request holds an engine slot.
    pub link_time_budget: Duration,
    /// How long a dataset whose file changed under the server waits between two attempts
    /// to open it again (requests for its wiki are answered 503 meanwhile).
    pub dataset_retry: Duration,
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
            translation_catalogs: Vec::new(),
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
            max_connections: 0,
            max_connections_per_address: 0,
            link_workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            link_time_budget: Duration::from_secs(5),
            dataset_retry: Duration::from_secs(1),
            application_version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}
