//! The one tokio runtime of the process, and the bridge from sync Python calls to it.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use pyo3::prelude::*;
use tokio::runtime::Runtime;

use crate::errors::{core_error, wikisuggest_error};

/// How often a blocked sync call wakes up to let Python handle signals (Ctrl-C).
const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(50);

static FIRST_PID: OnceLock<u32> = OnceLock::new();
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// Hand pyo3-async-runtimes a builder; the runtime (and its threads) is only built on first
/// use, so importing the module stays cheap and fork-safe.
pub fn register_builder() {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder
        .worker_threads(2)
        .thread_name("wikisuggest-io")
        .enable_all();
    pyo3_async_runtimes::tokio::init(builder);
}

/// The shared runtime. A tokio runtime does not survive `fork()`: in a child process we
/// raise instead of hanging forever.
pub fn runtime() -> PyResult<&'static Runtime> {
    let pid = std::process::id();
    let first = *FIRST_PID.get_or_init(|| pid);
    if first != pid {
        return Err(wikisuggest_error(
            "wikisuggest cannot be used in a process forked after it started its I/O threads; \
             create clients in the child (e.g. use multiprocessing's 'spawn' start method)",
        ));
    }
    Ok(pyo3_async_runtimes::tokio::get_runtime())
}

/// Counts a task while it exists, so tests can check that cancelled work was dropped.
pub struct InFlight;

impl InFlight {
    pub fn enter() -> Self {
        IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
        Self
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Called at interpreter exit: wait (without the interpreter, at most a second) until no
/// request task is alive, then a moment more. A task that delivers a result to asyncio
/// attaches to the interpreter once more after it finishes; if that happens while the
/// interpreter is finalizing, CPython ends the thread in a way that aborts the process.
#[pyfunction]
pub fn quiesce(py: Python<'_>) {
    if FIRST_PID.get().is_none() {
        return;
    }
    py.detach(|| {
        let deadline = std::time::Instant::now() + Duration::from_secs(1);
        while IN_FLIGHT.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(SIGNAL_CHECK_INTERVAL);
    });
}

/// Number of native tasks alive right now (requests, back-off sleeps). For tests.
#[pyfunction]
pub fn in_flight_tasks() -> usize {
    IN_FLIGHT.load(Ordering::SeqCst)
}

/// The one wait of every blocking call: `poll` blocks for at most the interval it is given
/// and returns `Some` once the work is done. It runs without holding the interpreter, and
/// between polls Python's signal handlers run; if one raises (`KeyboardInterrupt`), that error
/// is returned and the work is left to the caller to stop.
pub fn wait_interruptibly<T, F>(py: Python<'_>, poll: F) -> PyResult<T>
where
    T: Send,
    F: FnMut(Duration) -> Option<T> + Send,
{
    wait_reporting(py, poll, |_| Ok(()))
}

/// [`wait_interruptibly`], calling `tick` with the interpreter between polls (after the
/// signal handlers ran): how a long call reports its progress to Python as it goes.
pub fn wait_reporting<T, F>(
    py: Python<'_>,
    mut poll: F,
    mut tick: impl FnMut(Python<'_>) -> PyResult<()>,
) -> PyResult<T>
where
    T: Send,
    F: FnMut(Duration) -> Option<T> + Send,
{
    loop {
        if let Some(done) = py.detach(|| poll(SIGNAL_CHECK_INTERVAL)) {
            return Ok(done);
        }
        py.check_signals()?;
        tick(py)?;
    }
}

/// Work running on a thread of its own, waited for with [`wait_interruptibly`].
pub struct Worker<T> {
    // `detach` needs a `Sync` closure; a `Receiver` is only `Send`.
    done: Mutex<mpsc::Receiver<T>>,
}

impl<T: Send + 'static> Worker<T> {
    pub fn spawn(name: &str, work: impl FnOnce() -> T + Send + 'static) -> PyResult<Self> {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                // The receiver only goes away if the caller is gone; nothing to report then.
                let _ = tx.send(work());
            })
            .map_err(|e| wikisuggest_error(&format!("cannot start a worker thread: {e}")))?;
        Ok(Self {
            done: Mutex::new(rx),
        })
    }

    fn poll(&self, interval: Duration) -> Option<PyResult<T>> {
        let stopped = || {
            Some(Err(wikisuggest_error(
                "internal error: a worker thread stopped without a result",
            )))
        };
        let Ok(rx) = self.done.lock() else {
            return stopped();
        };
        match rx.recv_timeout(interval) {
            Ok(value) => Some(Ok(value)),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => stopped(),
        }
    }

    /// The result, or the error a signal handler raised (the work then goes on unless the
    /// caller stops it; if it is dropped, its result is discarded when it ends).
    pub fn wait(&self, py: Python<'_>) -> PyResult<T> {
        self.wait_reporting(py, |_| Ok(()))
    }

    /// Waits at most `limit` without the interpreter and without handling signals: for work
    /// that was told to stop, to finish cleaning up after the caller was interrupted.
    pub fn wait_for(&self, limit: Duration) -> Option<PyResult<T>> {
        self.poll(limit)
    }

    /// [`Worker::wait`], calling `tick` between polls (see [`wait_reporting`]).
    pub fn wait_reporting(
        &self,
        py: Python<'_>,
        tick: impl FnMut(Python<'_>) -> PyResult<()>,
    ) -> PyResult<T> {
        wait_reporting(py, |interval| self.poll(interval), tick)?
    }
}

/// Run `fut` on the shared runtime while the calling thread waits interruptibly (see
/// [`wait_interruptibly`]). On a signal the task is aborted — dropping the request — and the
/// signal's error returned.
pub fn run_blocking<T, F>(py: Python<'_>, fut: F) -> PyResult<T>
where
    T: Send + 'static,
    F: Future<Output = wikisuggest_core::Result<T>> + Send + 'static,
{
    run_blocking_reporting(py, fut, |_| Ok(()))
}

/// [`run_blocking`], calling `tick` between polls (see [`wait_reporting`]); an error it
/// returns stops the task like a signal does.
pub fn run_blocking_reporting<T, F>(
    py: Python<'_>,
    fut: F,
    tick: impl FnMut(Python<'_>) -> PyResult<()>,
) -> PyResult<T>
where
    T: Send + 'static,
    F: Future<Output = wikisuggest_core::Result<T>> + Send + 'static,
{
    let rt = runtime()?;
    crate::logging::refresh(py);
    let mut handle = rt.spawn(async move {
        let _guard = InFlight::enter();
        fut.await
    });
    let waited = wait_reporting(
        py,
        |interval| {
            rt.block_on(async { tokio::time::timeout(interval, &mut handle).await })
                .ok()
        },
        tick,
    );
    match waited {
        Ok(Ok(Ok(value))) => Ok(value),
        Ok(Ok(Err(error))) => Err(core_error(py, error)),
        Ok(Err(join_error)) => Err(wikisuggest_error(&format!(
            "internal error: the request task failed: {join_error}"
        ))),
        Err(signal) => {
            handle.abort();
            Err(signal)
        }
    }
}

/// Wrap `fut` as an awaitable for the running asyncio loop. Cancelling the asyncio task drops
/// the Rust future, which closes its request.
pub fn run_async<'py, T, F>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    T: for<'a> IntoPyObject<'a> + Send + 'static,
    F: Future<Output = wikisuggest_core::Result<T>> + Send + 'static,
{
    runtime()?;
    crate::logging::refresh(py);
    pyo3_async_runtimes::tokio::future_into_py(py, async move {
        let _guard = InFlight::enter();
        fut.await
            .map_err(|error| Python::attach(|py| core_error(py, error)))
    })
}
