//! Binding of the published-dataset downloads (`wikisuggest_core::download`) and the streamed
//! conversion (`wikisuggest_engine::convert_with`), for `wikisuggest.datasets`. Both run
//! without the interpreter; their progress is handed to a Python callable between the
//! polls of the shared interruptible wait, and Ctrl-C stops them (a download keeps its
//! partial file for the next call; a conversion removes its work files).

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use wikisuggest_core::download::{
    Checksum, DownloadBudget, DownloadConfig, DownloadRequest, Downloader, RemoteFile,
};
use wikisuggest_core::retry::RetryPolicy;
use wikisuggest_engine::{ConvertOptions, ConvertPhase, ConvertProgress};

use crate::errors::{core_error, engine_error, invalid_parameter};
use crate::runtime::{InFlight, Worker, runtime, wait_for_task_reporting};

/// "No total known" in [`Counter::total`].
const UNKNOWN: u64 = u64::MAX;

/// Progress shared between the working thread and the waiting one.
struct Counter {
    done: AtomicU64,
    total: AtomicU64,
    phase: AtomicU64,
    /// What was last handed to Python, so an unchanged state is not reported again.
    shown: std::sync::Mutex<(u64, u64, u64)>,
}

impl Counter {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            done: AtomicU64::new(0),
            total: AtomicU64::new(UNKNOWN),
            phase: AtomicU64::new(0),
            shown: std::sync::Mutex::new((UNKNOWN, UNKNOWN, UNKNOWN)),
        })
    }

    fn set(&self, phase: u64, done: u64, total: Option<u64>) {
        self.phase.store(phase, Ordering::Relaxed);
        self.total
            .store(total.unwrap_or(UNKNOWN), Ordering::Relaxed);
        self.done.store(done, Ordering::Relaxed);
    }

    /// Calls `callback(done, total[, phase])` if the state changed since the last call.
    fn report(
        &self,
        py: Python<'_>,
        callback: &Py<PyAny>,
        phases: Option<&[&str]>,
    ) -> PyResult<()> {
        let now = (
            self.phase.load(Ordering::Relaxed),
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        );
        {
            let Ok(mut shown) = self.shown.lock() else {
                return Ok(());
            };
            if *shown == now {
                return Ok(());
            }
            *shown = now;
        }
        let total = (now.2 != UNKNOWN).then_some(now.2);
        match phases {
            Some(names) => {
                let name = names.get(now.0 as usize).copied().unwrap_or("");
                callback.call1(py, (now.1, total, name))?;
            }
            None => {
                callback.call1(py, (now.1, total))?;
            }
        }
        Ok(())
    }
}

fn remote_dict<'py>(py: Python<'py>, remote: &RemoteFile) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("size", remote.size)?;
    d.set_item("etag", &remote.etag)?;
    d.set_item("last_modified", &remote.last_modified)?;
    Ok(d)
}

/// Downloads of published files over one connection pool of the shared transport, with its
/// retry policy and a budget of requests and bytes per file.
#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeDownloader {
    inner: Arc<Downloader>,
}

#[pymethods]
impl NativeDownloader {
    #[new]
    #[pyo3(signature = (user_agent, connect_timeout, read_timeout, max_retries, backoff_base, backoff_max, max_retry_after, max_attempts, bytes_factor))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        user_agent: String,
        connect_timeout: f64,
        read_timeout: f64,
        max_retries: u32,
        backoff_base: f64,
        backoff_max: f64,
        max_retry_after: f64,
        max_attempts: u32,
        bytes_factor: u32,
    ) -> PyResult<Self> {
        let seconds = crate::contract::seconds;
        if max_attempts == 0 {
            return Err(invalid_parameter("max_attempts", "must be positive"));
        }
        if bytes_factor == 0 {
            return Err(invalid_parameter("bytes_factor", "must be positive"));
        }
        let mut config = DownloadConfig::new(user_agent);
        config.connect_timeout = seconds("connect_timeout", connect_timeout)?;
        config.read_timeout = seconds("read_timeout", read_timeout)?;
        config.retry = RetryPolicy {
            max_retries,
            backoff_base: seconds("backoff_base", backoff_base)?,
            backoff_max: seconds("backoff_max", backoff_max)?,
            max_retry_after: seconds("max_retry_after", max_retry_after)?,
            ..config.retry
        };
        config.budget = DownloadBudget {
            max_attempts,
            bytes_factor: u64::from(bytes_factor),
            ..DownloadBudget::default()
        };
        let inner = Downloader::new(config).map_err(|e| Python::attach(|py| core_error(py, e)))?;
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// `HEAD url`: `{"size", "etag", "last_modified"}`, or `None` if the file does not exist.
    fn head<'py>(&self, py: Python<'py>, url: String) -> PyResult<Option<Bound<'py, PyDict>>> {
        let inner = self.inner.clone();
        let remote = run(py, async move { inner.head(&url).await }, |_| Ok(()))?;
        remote.map(|r| remote_dict(py, &r)).transpose()
    }

    /// `HEAD` of each of `urls`, `concurrency` at a time (default: what the host asks of
    /// its clients, 3 for Wikimedia's): per URL, `{"size", "etag", "last_modified"}`, `None`
    /// if it does not exist, or the exception of its failure.
    #[pyo3(signature = (urls, concurrency=None))]
    fn head_many<'py>(
        &self,
        py: Python<'py>,
        urls: Vec<String>,
        concurrency: Option<usize>,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let concurrency = concurrency.unwrap_or_else(|| {
            urls.first()
                .map_or(1, |url| wikisuggest_core::limits::default_concurrency(url))
        });
        let inner = self.inner.clone();
        let answers = run(
            py,
            async move { Ok(inner.head_many(urls, concurrency).await) },
            |_| Ok(()),
        )?;
        answers
            .into_iter()
            .map(|answer| match answer {
                Ok(Some(remote)) => Ok(remote_dict(py, &remote)?.into_any().unbind()),
                Ok(None) => Ok(py.None()),
                Err(e) => Ok(core_error(py, e).into_value(py).into_any()),
            })
            .collect()
    }

    /// `GET url` of a small file (at most `limit` bytes): `(body, remote)` or `None`.
    fn get<'py>(
        &self,
        py: Python<'py>,
        url: String,
        limit: usize,
    ) -> PyResult<Option<(Bound<'py, PyBytes>, Bound<'py, PyDict>)>> {
        let inner = self.inner.clone();
        let small = run(
            py,
            async move { inner.get_small(&url, limit).await },
            |_| Ok(()),
        )?;
        small
            .map(|s| Ok((PyBytes::new(py, &s.body), remote_dict(py, &s.remote)?)))
            .transpose()
    }

    /// Downloads `url` to `dest` (resuming `dest.incomplete`), verified against the
    /// checksum `(kind, hex)` when given (`"sha256"` or `"sha1"`), refusing more than
    /// `max_size` bytes. `progress(done, total)` is called as bytes arrive.
    #[pyo3(signature = (url, dest, checksum, max_size, progress=None))]
    fn download<'py>(
        &self,
        py: Python<'py>,
        url: String,
        dest: PathBuf,
        checksum: Option<(String, String)>,
        max_size: u64,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let checksum = checksum
            .map(|(kind, hex)| Checksum::parse(&kind, &hex))
            .transpose()
            .map_err(|e| core_error(py, e))?;
        let inner = self.inner.clone();
        let counter = Counter::new();
        let shared = counter.clone();
        let request = DownloadRequest {
            url,
            dest,
            checksum,
            max_size,
        };
        let done = run(
            py,
            async move {
                let report = move |done: u64, total: Option<u64>| shared.set(0, done, total);
                inner.download(&request, &report).await
            },
            |py| match &progress {
                Some(callback) => counter.report(py, callback, None),
                None => Ok(()),
            },
        )?;
        if let Some(callback) = &progress {
            counter.report(py, callback, None)?;
        }
        let d = PyDict::new(py);
        d.set_item("path", &done.path)?;
        d.set_item("size", done.size)?;
        d.set_item("checksum", (done.checksum.kind.name(), &done.checksum.hex))?;
        d.set_item("remote", remote_dict(py, &done.remote)?)?;
        d.set_item("resumed_from", done.resumed_from)?;
        d.set_item("restarts", done.restarts)?;
        d.set_item("attempts", done.attempts)?;
        d.set_item("received", done.received)?;
        Ok(d)
    }
}

/// Names of the conversion phases, in the order of their numbers below.
const PHASES: [&str; 6] = ["read", "titles", "anchors", "index", "write", "verify"];

fn phase_number(phase: ConvertPhase) -> u64 {
    let name = phase.name();
    PHASES.iter().position(|p| *p == name).unwrap_or(0) as u64
}

/// Converts the published dataset of `wiki_id` in `src_dir` into `out_dir`, streamed in
/// bounded memory and, with `work_budget`, in that many bytes of disk (work files and
/// output); `progress(done, total, phase)` reports it. Ctrl-C cancels it (its work
/// files are removed) and raises `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (src_dir, wiki_id, out_dir, progress=None, sort_budget=None, work_budget=None))]
pub fn convert_dataset(
    py: Python<'_>,
    src_dir: PathBuf,
    wiki_id: String,
    out_dir: PathBuf,
    progress: Option<Py<PyAny>>,
    sort_budget: Option<usize>,
    work_budget: Option<u64>,
) -> PyResult<PathBuf> {
    if sort_budget == Some(0) {
        return Err(invalid_parameter("sort_budget", "must be positive"));
    }
    if work_budget == Some(0) {
        return Err(invalid_parameter("work_budget", "must be positive"));
    }
    let counter = Counter::new();
    let cancel = Arc::new(AtomicBool::new(false));
    let (shared, stop) = (counter.clone(), cancel.clone());
    let budget = sort_budget.unwrap_or(ConvertOptions::default().sort_budget);
    let worker = Worker::spawn("wikisuggest-convert", move || {
        let report =
            move |p: ConvertProgress| shared.set(phase_number(p.phase), p.done, Some(p.total));
        let options = ConvertOptions {
            sort_budget: budget,
            progress: Some(&report),
            cancel: Some(&stop),
            work_budget,
        };
        wikisuggest_engine::convert_with(&src_dir, &wiki_id, &out_dir, &options)
    })?;
    let waited = worker.wait_reporting(py, |py| match &progress {
        Some(callback) => counter.report(py, callback, Some(&PHASES)),
        None => Ok(()),
    });
    match waited {
        Ok(result) => result.map_err(|e| engine_error(py, &e)),
        Err(interrupt) => {
            // Stop the conversion and wait for it to remove its files before raising.
            cancel.store(true, Ordering::Relaxed);
            let _ = py.detach(|| worker.wait_for(Duration::from_secs(30)));
            Err(interrupt)
        }
    }
}

/// What the published native dataset misses against a current one (see
/// `wikisuggest_engine::drift`): counts, and up to `examples` of each kind.
#[pyfunction]
pub fn dataset_drift<'py>(
    py: Python<'py>,
    published: PathBuf,
    current: PathBuf,
    examples: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let drift = Worker::spawn("wikisuggest-drift", move || {
        let published = wikisuggest_engine::Dataset::open_native(&published)?;
        let current = wikisuggest_engine::Dataset::open_native(&current)?;
        wikisuggest_engine::drift::drift(&published, &current, examples)
    })?
    .wait(py)?
    .map_err(|e| engine_error(py, &e))?;
    let d = PyDict::new(py);
    d.set_item("targets", drift.targets)?;
    d.set_item("deleted", drift.deleted.count)?;
    d.set_item("redirected", drift.redirected.count)?;
    d.set_item("articles", drift.articles)?;
    d.set_item("new_articles", drift.new_articles.count)?;
    let examples = PyDict::new(py);
    examples.set_item("deleted", drift.deleted.first)?;
    examples.set_item("redirected", drift.redirected.first)?;
    examples.set_item("new_articles", drift.new_articles.first)?;
    d.set_item("examples", examples)?;
    Ok(d)
}

/// Runs `request` on the shared runtime, waiting for it with the binding's one wait for a
/// runtime task (`tick` between polls): Ctrl-C, or an error from `tick`, drops the request.
fn run<T, F>(
    py: Python<'_>,
    request: F,
    tick: impl FnMut(Python<'_>) -> PyResult<()>,
) -> PyResult<T>
where
    T: Send + 'static,
    F: Future<Output = wikisuggest_core::Result<T>> + Send + 'static,
{
    let rt = runtime()?;
    crate::logging::refresh(py)?;
    let task = rt.spawn(async move {
        let _guard = InFlight::enter();
        request.await
    });
    wait_for_task_reporting(py, rt, task, tick)?.map_err(|error| core_error(py, error))
}
