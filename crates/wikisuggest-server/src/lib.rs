//! Reference server for wikisuggest's service contract: link recommendations from local
//! datasets and pages, translation recommendations from local catalogs, an OAuth 2.0
//! authorization server, and the gateway's token checks and rate limits — under one base URL.
//!
//! ```no_run
//! # async fn run() -> Result<(), wikisuggest_server::Error> {
//! use wikisuggest_server::{Server, ServerConfig};
//! let config = ServerConfig { port: 0, ..ServerConfig::default() };
//! let server = Server::bind(config).await?;
//! println!("listening on http://{}", server.local_addr());
//! server.shutdown().await?;
//! # Ok(()) }
//! ```

mod accept;
pub mod config;
pub mod connections;
pub mod error;
mod gateway;
pub mod link;
pub mod oauth;
pub mod pages;
mod paths;
pub mod ratelimit;
mod reply;
mod routes;
mod state;
pub mod translation;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use config::{RateLimits, ServerConfig, TranslationShape};
pub use error::{Error, Result};
pub use link::{BackendError, EngineBackend, LinkBackend, LinkRequest, ReloadOutcome};
pub use routes::openapi::document as openapi_document;

use oauth::tokens::Lifetimes;
use oauth::{ClientRegistry, TokenService};
use pages::PageStore;
use state::AppState;
use translation::TranslationCatalogs;

/// How long a shutdown waits for requests in flight before dropping them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

pub struct Server;

/// Everything read from disk at start-up.
struct Loaded {
    backend: Arc<dyn LinkBackend>,
    pages: Option<PageStore>,
    translation: TranslationCatalogs,
    clients: ClientRegistry,
}

fn load(config: &ServerConfig, backend: Option<Arc<dyn LinkBackend>>) -> Result<Loaded> {
    // Datasets, pages and catalogs are independent: read them side by side.
    let (backend, pages, translation) = std::thread::scope(|scope| {
        let translation = scope.spawn(|| TranslationCatalogs::open(&config.translation_catalogs));
        let pages = scope.spawn(|| config.pages.as_deref().map(PageStore::open).transpose());
        let backend = match backend {
            Some(backend) => Ok(backend),
            None => match &config.datasets {
                Some(dir) => {
                    link::open_live_datasets(dir, &config.application_version, config.dataset_retry)
                }
                None => Ok(Default::default()),
            }
            .and_then(|datasets| {
                if let Some(dir) = &config.datasets
                    && datasets.is_empty()
                {
                    log::warn!(
                        "no link datasets in {}: give a folder of wiki folders, one wiki's \
                         folder, or its .linkdata file",
                        dir.display()
                    );
                }
                for wiki in datasets.keys() {
                    log::info!("serving links for {wiki}");
                }
                let backend =
                    EngineBackend::from_live(datasets).with_time_budget(config.link_time_budget);
                Ok(Arc::new(backend.with_rules(&config.rules)?) as Arc<dyn LinkBackend>)
            }),
        };
        let joined = |e| Error::Runtime(format!("loading failed: {e:?}"));
        (
            backend,
            pages.join().map_err(joined),
            translation.join().map_err(joined),
        )
    });
    let (backend, pages, translation) = (backend?, pages??, translation??);
    if let Some(store) = &pages {
        log::info!("loaded {} pages", store.len());
    }
    let clients = match &config.clients {
        Some(path) => ClientRegistry::open(path)?,
        None => ClientRegistry::default(),
    };
    Ok(Loaded {
        backend,
        pages,
        translation,
        clients,
    })
}

impl Server {
    /// Loads the data named in `config` ([`EngineBackend`] over `config.datasets` answers
    /// link requests), binds and starts serving.
    pub async fn bind(config: ServerConfig) -> Result<RunningServer> {
        Self::bind_with_backend(config, None).await
    }

    /// As [`bind`](Self::bind), with the link requests answered by `backend` when given.
    pub async fn bind_with_backend(
        config: ServerConfig,
        backend: Option<Arc<dyn LinkBackend>>,
    ) -> Result<RunningServer> {
        let loaded = load_blocking(&config, backend).await?;
        let addr = SocketAddr::new(config.host, config.port);
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| Error::Bind {
                addr: addr.to_string(),
                source,
            })?;
        let local = listener.local_addr().map_err(|source| Error::Bind {
            addr: addr.to_string(),
            source,
        })?;
        let state = app_state(config, loaded, format!("http://{local}"))?;
        let total = connections::connection_cap(
            state.config.max_connections,
            connections::descriptor_limit(),
        );
        let caps = connections::Caps {
            total,
            per_address: connections::per_address_cap(
                state.config.max_connections_per_address,
                total,
            ),
            fresh_grace: connections::FRESH_GRACE,
            answered_grace: connections::ANSWERED_GRACE,
        };
        let limits = accept::ConnectionLimits {
            header_read_timeout: state.config.header_read_timeout,
            caps,
        };
        let backend = state.backend.clone();
        let slots = state.link_slots.clone();
        let app = routes::router(state);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(accept::serve(listener, app, limits, stopped));
        log::info!(
            "serving on http://{local} (at most {} connections, {} per client address)",
            caps.total,
            caps.per_address
        );
        Ok(RunningServer {
            local,
            caps,
            backend,
            slots,
            stop: Some(stop),
            task,
        })
    }
}

impl Server {
    /// The application the server runs, without a listener: loads the data named in
    /// `config` and returns the routes with their gateway, limits and fallbacks, ready to be
    /// driven request by request (for example with `tower::ServiceExt::oneshot`). Tokens it
    /// issues name `http://{host}:{port}` of `config` as their issuer.
    pub async fn router(config: ServerConfig) -> Result<axum::Router> {
        let loaded = load_blocking(&config, None).await?;
        let issuer = format!("http://{}", SocketAddr::new(config.host, config.port));
        Ok(routes::router(app_state(config, loaded, issuer)?))
    }
}

/// [`load`] off the async runtime's worker threads.
async fn load_blocking(
    config: &ServerConfig,
    backend: Option<Arc<dyn LinkBackend>>,
) -> Result<Loaded> {
    let loading = config.clone();
    tokio::task::spawn_blocking(move || load(&loading, backend))
        .await
        .map_err(|e| Error::Runtime(e.to_string()))?
}

/// The state every route shares; `issuer` is the base URL tokens are issued for.
fn app_state(config: ServerConfig, loaded: Loaded, issuer: String) -> Result<Arc<AppState>> {
    let tokens = TokenService::new(
        issuer,
        Lifetimes {
            access: config.access_token_ttl,
            refresh: config.refresh_token_ttl,
            refresh_grace: config.refresh_grace,
            code: config.authorization_code_ttl,
        },
    )
    .map_err(Error::Runtime)?;
    let wikis = loaded.backend.wikis();
    let wiki_apis = link::fetch::clients(
        &config.wiki_apis,
        &config.application_version,
        config.request_timeout,
    )?;
    let link_slots = link::slots::FairSlots::new(config.link_workers);
    let engine_threads = link::workers::EngineThreads::start(config.link_workers, &loaded.backend)
        .map_err(|e| Error::Runtime(format!("cannot start the engine's threads: {e}")))?;
    Ok(Arc::new(AppState {
        link_slots,
        engine_threads,
        config,
        backend: loaded.backend,
        wikis,
        pages: loaded.pages,
        wiki_apis,
        translation: loaded.translation,
        clients: loaded.clients,
        tokens,
        limiter: Default::default(),
    }))
}

/// A server accepting connections on the current tokio runtime.
pub struct RunningServer {
    local: SocketAddr,
    caps: connections::Caps,
    backend: Arc<dyn LinkBackend>,
    slots: Arc<link::slots::FairSlots>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

/// Opens again, off the async runtime's workers, the link datasets whose files were
/// replaced (see [`LinkBackend::reload`]).
async fn reload_backend(backend: Arc<dyn LinkBackend>) -> Result<Vec<(String, ReloadOutcome)>> {
    tokio::task::spawn_blocking(move || backend.reload())
        .await
        .map_err(|e| Error::Runtime(e.to_string()))
}

impl RunningServer {
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The connection caps in force (sized from the descriptor limit unless configured).
    pub fn connection_caps(&self) -> connections::Caps {
        self.caps
    }

    /// Link requests the engine is computing, and link requests waiting for a slot.
    pub fn link_load(&self) -> (usize, usize) {
        self.slots.load()
    }

    /// Opens again the link datasets whose files were replaced since they were opened
    /// (renamed into place, or copied over in place), verifies them and swaps each in
    /// whole; a wiki whose new files fail keeps its engine. What happened, per wiki.
    pub async fn reload_datasets(&self) -> Result<Vec<(String, ReloadOutcome)>> {
        reload_backend(self.backend.clone()).await
    }

    /// Reloads the datasets (as [`Self::reload_datasets`]) each time the process receives
    /// SIGHUP, until the server stops. Installs a process-wide SIGHUP handler: for a server
    /// that owns its process.
    #[cfg(unix)]
    pub fn reload_on_sighup(&self) -> Result<()> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut hangups =
            signal(SignalKind::hangup()).map_err(|e| Error::Runtime(e.to_string()))?;
        let backend = self.backend.clone();
        tokio::spawn(async move {
            while hangups.recv().await.is_some() {
                log::info!("SIGHUP: reloading the datasets whose files changed");
                match reload_backend(backend.clone()).await {
                    Ok(outcomes) => log_reload(&outcomes),
                    Err(e) => log::error!("reloading the datasets failed: {e}"),
                }
            }
        });
        Ok(())
    }

    /// Stops accepting, lets requests in flight finish (up to a bound), then returns.
    pub async fn shutdown(mut self) -> Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match tokio::time::timeout(SHUTDOWN_GRACE, &mut self.task).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(Error::Runtime(e.to_string())),
            Ok(Err(e)) => Err(Error::Runtime(e.to_string())),
            Err(_) => {
                self.task.abort();
                log::warn!("requests still running after {SHUTDOWN_GRACE:?}: dropped");
                Ok(())
            }
        }
    }

    /// Serves until `signal` completes, then shuts down gracefully.
    pub async fn run_until(self, signal: impl std::future::Future<Output = ()>) -> Result<()> {
        signal.await;
        self.shutdown().await
    }
}

/// One log line per wiki of a reload.
pub fn log_reload(outcomes: &[(String, ReloadOutcome)]) {
    for (wiki, outcome) in outcomes {
        match outcome {
            ReloadOutcome::Unchanged => log::info!("dataset of {wiki}: unchanged"),
            ReloadOutcome::Reopened => log::info!("dataset of {wiki}: reopened"),
            ReloadOutcome::Failed(e) => log::warn!("dataset of {wiki}: kept, reload failed: {e}"),
        }
    }
}

/// A server on its own thread and runtime (for callers without one, e.g. Python).
pub struct BackgroundServer {
    local: SocketAddr,
    backend: Arc<dyn LinkBackend>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
}

impl BackgroundServer {
    pub fn start(config: ServerConfig, worker_threads: usize) -> Result<Self> {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("wikisuggest-server".into())
            .spawn(move || -> Result<()> {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(worker_threads.max(1))
                    .thread_name("wikisuggest-server-worker")
                    .enable_all()
                    .build()
                    .map_err(|e| Error::Runtime(e.to_string()))?;
                runtime.block_on(async move {
                    match Server::bind(config).await {
                        Ok(server) => {
                            let ready = (server.local_addr(), server.backend.clone());
                            let _ = ready_tx.send(Ok(ready));
                            server
                                .run_until(async {
                                    let _ = stopped.await;
                                })
                                .await
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            Ok(())
                        }
                    }
                })
            })
            .map_err(|e| Error::Runtime(e.to_string()))?;
        let (local, backend) = ready_rx
            .recv()
            .map_err(|_| Error::Runtime("the server thread ended before binding".into()))??;
        Ok(Self {
            local,
            backend,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The wikis served with link datasets, in order.
    pub fn wikis(&self) -> Vec<String> {
        self.backend.wikis()
    }

    /// [`RunningServer::reload_datasets`], on the calling thread (which it blocks while
    /// the new files are opened and verified).
    pub fn reload_datasets(&self) -> Vec<(String, ReloadOutcome)> {
        let outcomes = self.backend.reload();
        log_reload(&outcomes);
        outcomes
    }

    /// Whether the server thread has ended (it only ends after a stop or a failure).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Stops accepting connections, lets requests in flight finish, and waits.
    pub fn stop(&mut self) -> Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .map_err(|_| Error::Runtime("the server thread panicked".into()))?,
            None => Ok(()),
        }
    }

    /// Asks the server to stop without waiting for it (for callers that must not block,
    /// such as a finaliser holding a lock the server's logging may need).
    pub fn stop_in_background(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // Dropping the handle detaches the thread; it ends after the graceful shutdown.
        self.thread.take();
    }
}

impl Drop for BackgroundServer {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
