//! `NativeServer`: the reference server running on its own thread and tokio runtime, behind
//! `wikisuggest.serve` and `wikisuggest.Server`. All behaviour lives in `wikisuggest-server`.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::prelude::*;
use wikisuggest_server::{
    BackgroundServer, RateLimits, ReloadOutcome, ServerConfig, TranslationShape,
};

use crate::errors::{invalid_parameter, wikisuggest_error};

#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeServer {
    url: String,
    inner: Mutex<Option<BackgroundServer>>,
}

use crate::contract::seconds;

/// An integer argument in the range of `T` (a port, a count), or an `InvalidParameter` naming
/// it: Python's integers reach here unchecked, and a conversion error would name nothing.
fn integer<T: TryFrom<i64>>(name: &str, value: i64, range: &str) -> PyResult<T> {
    T::try_from(value)
        .map_err(|_| invalid_parameter(name, &format!("must be {range}, got {value}")))
}

#[pymethods]
impl NativeServer {
    #[new]
    #[pyo3(signature = (
        *, host, port, datasets=None, pages=None, wiki_apis=Vec::new(), rules=Vec::new(),
        translation_catalogs=Vec::new(),
        clients=None, seed=None,
        access_token_ttl=14400.0, rate_limit=200, anonymous_rate_limit=200,
        translation_shape="array", max_body_bytes=4194304, request_timeout=30.0, threads=2,
        max_connections=0, max_connections_per_address=0, link_time_budget=5.0
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        host: &str,
        port: i64,
        datasets: Option<PathBuf>,
        pages: Option<PathBuf>,
        wiki_apis: Vec<(String, String)>,
        rules: Vec<(String, PathBuf)>,
        translation_catalogs: Vec<(Option<String>, PathBuf)>,
        clients: Option<PathBuf>,
        seed: Option<u64>,
        access_token_ttl: f64,
        rate_limit: i64,
        anonymous_rate_limit: i64,
        translation_shape: &str,
        max_body_bytes: i64,
        request_timeout: f64,
        threads: i64,
        max_connections: i64,
        max_connections_per_address: i64,
        link_time_budget: f64,
    ) -> PyResult<Self> {
        let host = host
            .parse()
            .map_err(|_| wikisuggest_error(&format!("host must be an IP address, got {host:?}")))?;
        let translation_shape = TranslationShape::parse(translation_shape).ok_or_else(|| {
            wikisuggest_error(&format!(
                "translation_shape must be \"array\" or \"envelope\", got {translation_shape:?}"
            ))
        })?;
        const COUNT: &str = "a whole number, 0 or more";
        let config = ServerConfig {
            host,
            port: integer("port", port, "a port number from 0 to 65535")?,
            datasets,
            pages,
            wiki_apis,
            rules,
            translation_catalogs,
            clients,
            seed,
            translation_shape,
            access_token_ttl: seconds("access_token_ttl", access_token_ttl)?,
            rate_limits: RateLimits {
                authenticated_per_minute: integer("rate_limit", rate_limit, COUNT)?,
                anonymous_per_minute: integer("anonymous_rate_limit", anonymous_rate_limit, COUNT)?,
            },
            max_body_bytes: integer("max_body_bytes", max_body_bytes, COUNT)?,
            request_timeout: seconds("request_timeout", request_timeout)?,
            max_connections: integer("max_connections", max_connections, COUNT)?,
            max_connections_per_address: integer(
                "max_connections_per_address",
                max_connections_per_address,
                COUNT,
            )?,
            link_time_budget: seconds("link_time_budget", link_time_budget)?,
            application_version: wikisuggest_core::VERSION.to_owned(),
            ..ServerConfig::default()
        };
        let threads: usize = integer("threads", threads, COUNT)?;
        let server = py
            .detach(|| BackgroundServer::start(config, threads))
            .map_err(|e| wikisuggest_error(&e.to_string()))?;
        Ok(Self {
            url: format!("http://{}", server.local_addr()),
            inner: Mutex::new(Some(server)),
        })
    }

    /// The base URL, e.g. `http://127.0.0.1:41234`.
    #[getter]
    fn url(&self) -> &str {
        &self.url
    }

    /// The wikis served with link datasets, in order (empty once stopped).
    #[getter]
    fn wikis(&self) -> Vec<String> {
        self.inner
            .lock()
            .map(|s| s.as_ref().map(|s| s.wikis()).unwrap_or_default())
            .unwrap_or_default()
    }

    #[getter]
    fn running(&self) -> bool {
        self.inner
            .lock()
            .map(|s| s.as_ref().is_some_and(|s| !s.is_finished()))
            .unwrap_or(false)
    }

    /// Opens again the link datasets whose files were replaced, each verified and then
    /// swapped in; `(wiki id, "unchanged" | "reopened" | "failed: <reason>")` per wiki.
    fn reload_datasets(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        let guard = self
            .inner
            .lock()
            .map_err(|_| wikisuggest_error("server state is poisoned"))?;
        let Some(server) = guard.as_ref() else {
            return Err(wikisuggest_error("the server is stopped"));
        };
        let outcomes = py.detach(|| server.reload_datasets());
        Ok(outcomes
            .into_iter()
            .map(|(wiki, outcome)| {
                let said = match outcome {
                    ReloadOutcome::Unchanged => "unchanged".to_owned(),
                    ReloadOutcome::Reopened => "reopened".to_owned(),
                    ReloadOutcome::Failed(reason) => format!("failed: {reason}"),
                };
                (wiki, said)
            })
            .collect())
    }

    /// Stops accepting connections, lets requests in flight finish, and waits. Idempotent.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let server = self
            .inner
            .lock()
            .map_err(|_| wikisuggest_error("server state is poisoned"))?
            .take();
        match server {
            Some(mut server) => py
                .detach(move || server.stop())
                .map_err(|e| wikisuggest_error(&e.to_string())),
            None => Ok(()),
        }
    }
}

impl Drop for NativeServer {
    /// A server that was never stopped is told to stop, but not waited for: this may run
    /// while the interpreter is held, which the server's logging could be waiting for.
    fn drop(&mut self) {
        if let Some(server) = self.inner.get_mut().ok().and_then(Option::take) {
            server.stop_in_background();
        }
    }
}
