//! The one tokio runtime of the process, and the bridge from sync Python calls to it.

use std::future::Future;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// Number of native tasks alive right now (requests, back-off sleeps). For tests.
#[pyfunction]
pub fn in_flight_tasks() -> usize {
    IN_FLIGHT.load(Ordering::SeqCst)
}

/// Run `fut` on the shared runtime while the calling thread waits without holding the
/// interpreter, waking every 50 ms to run Python's signal handlers. If one raises
/// (`KeyboardInterrupt`), the task is aborted — dropping the request — and that error returned.
pub fn run_blocking<T, F>(py: Python<'_>, fut: F) -> PyResult<T>
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
    loop {
        let waited = py.detach(|| {
            rt.block_on(async { tokio::time::timeout(SIGNAL_CHECK_INTERVAL, &mut handle).await })
        });
        match waited {
            Ok(Ok(Ok(value))) => return Ok(value),
            Ok(Ok(Err(error))) => return Err(core_error(py, error)),
            Ok(Err(join_error)) => {
                return Err(wikisuggest_error(&format!(
                    "internal error: the request task failed: {join_error}"
                )));
            }
            Err(_still_running) => {
                if let Err(signal) = py.check_signals() {
                    handle.abort();
                    return Err(signal);
                }
            }
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
