//! The one tokio runtime of the process, the in-flight count that the exit-time `quiesce`
//! waits on, and the one interruptible wait of every blocking call ([`wait_interruptibly`],
//! and [`Worker`] for work on a thread of its own). Single operations go through
//! `crate::call::NativeCall`, batches through `crate::batch`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use pyo3::prelude::*;
use tokio::runtime::Runtime;

use crate::errors::wikisuggest_error;

/// How often a blocked sync call wakes up to let Python handle signals (Ctrl-C).
const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(50);

static FIRST_PID: OnceLock<u32> = OnceLock::new();
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The shared runtime, built on first use (importing the module stays cheap and fork-safe).
/// A tokio runtime does not survive `fork()`: in a child process we raise instead of hanging
/// forever.
pub fn runtime() -> PyResult<&'static Runtime> {
    let pid = std::process::id();
    let first = *FIRST_PID.get_or_init(|| pid);
    if first != pid {
        return Err(wikisuggest_error(
            "wikisuggest cannot be used in a process forked after it started its I/O threads; \
             create clients in the child (e.g. use multiprocessing's 'spawn' start method)",
        ));
    }
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let built = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("wikisuggest-io")
        .enable_all()
        .build()
        .map_err(|error| wikisuggest_error(&format!("cannot start the I/O threads: {error}")))?;
    // Two first callers may race: one runtime is kept, the other dropped unused.
    Ok(RUNTIME.get_or_init(move || built))
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

/// Waits (with [`wait_interruptibly`]) for `task` on the shared runtime `rt`. On a signal the
/// task is aborted, which drops its future (an HTTP request is closed), and the signal's error
/// returned.
pub fn wait_for_task<T: Send + 'static>(
    py: Python<'_>,
    rt: &Runtime,
    task: tokio::task::JoinHandle<T>,
) -> PyResult<T> {
    wait_for_task_reporting(py, rt, task, |_| Ok(()))
}

/// [`wait_for_task`], calling `tick` between polls (see [`wait_reporting`]); an error it
/// returns stops the task as a signal does.
pub fn wait_for_task_reporting<T: Send + 'static>(
    py: Python<'_>,
    rt: &Runtime,
    mut task: tokio::task::JoinHandle<T>,
    tick: impl FnMut(Python<'_>) -> PyResult<()>,
) -> PyResult<T> {
    let waited = wait_reporting(
        py,
        |interval| {
            rt.block_on(async { tokio::time::timeout(interval, &mut task).await })
                .ok()
        },
        tick,
    );
    match waited {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(join_error)) => Err(wikisuggest_error(&format!(
            "internal error: a native task failed: {join_error}"
        ))),
        Err(signal) => {
            task.abort();
            Err(signal)
        }
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

    /// `work` on the calling thread's own worker: a long-lived thread started at the thread's
    /// first call and reused by its next ones, so that a sync call hands its work over once
    /// and is handed the result once (a thread of its own, or a task pool, costs more
    /// wake-ups than a short page costs work). A call made while the worker still runs an
    /// earlier, abandoned one (the caller was interrupted) gets a new worker; the old one ends
    /// after its work. A panic in `work` ends only `work`: its caller gets an error.
    pub fn on_own_thread(work: impl FnOnce() -> T + Send + 'static) -> PyResult<Self> {
        let (tx, rx) = mpsc::sync_channel(1);
        own_thread::run(Box::new(move || {
            let value = work();
            Box::new(move || {
                // The receiver only goes away if the caller is gone; nothing to report then.
                let _ = tx.send(value);
            })
        }))?;
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

/// The long-lived worker thread of each thread that makes sync calls (see
/// [`Worker::on_own_thread`]).
mod own_thread {
    use std::cell::RefCell;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;

    use pyo3::PyResult;

    use crate::errors::wikisuggest_error;

    /// Work, and what hands its result over: the worker is free again before the caller
    /// hears of it, so the caller's next call finds it free.
    pub(super) type Job = Box<dyn FnOnce() -> Reply + Send>;
    pub(super) type Reply = Box<dyn FnOnce() + Send>;

    /// The workers' thread name (short enough for Linux to keep it whole).
    const NAME: &str = "wikisuggest-cpu";

    struct OwnWorker {
        jobs: mpsc::Sender<Job>,
        /// Set while a job runs.
        busy: Arc<AtomicBool>,
        /// The process that started it: a forked child has no such thread.
        pid: u32,
    }

    thread_local! {
        // Dropped when the calling thread ends: the worker then ends too.
        static OWN: RefCell<Option<OwnWorker>> = const { RefCell::new(None) };
    }

    impl OwnWorker {
        fn start() -> PyResult<Self> {
            let (jobs, queue) = mpsc::channel::<Job>();
            let busy = Arc::new(AtomicBool::new(false));
            let running = Arc::clone(&busy);
            std::thread::Builder::new()
                .name(NAME.to_owned())
                .spawn(move || {
                    for job in queue {
                        // A panic ends the job (its result's sender is dropped: the caller
                        // hears of it), not the thread.
                        let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                        running.store(false, Ordering::Release);
                        if let Ok(reply) = reply {
                            reply();
                        }
                    }
                })
                .map_err(|e| wikisuggest_error(&format!("cannot start a worker thread: {e}")))?;
            Ok(Self {
                jobs,
                busy,
                pid: std::process::id(),
            })
        }

        fn is_free(&self) -> bool {
            self.pid == std::process::id() && !self.busy.load(Ordering::Acquire)
        }
    }

    /// Runs `job` on the calling thread's worker (started, or replaced when busy, first).
    pub(super) fn run(job: Job) -> PyResult<()> {
        let mut job = Some(job);
        let handed = OWN.try_with(|own| {
            let mut own = own.borrow_mut();
            let worker = match own.take() {
                Some(worker) if worker.is_free() => worker,
                _ => OwnWorker::start()?,
            };
            worker.busy.store(true, Ordering::Release);
            let sent = job.take().map(|job| worker.jobs.send(job));
            *own = Some(worker);
            match sent {
                Some(Err(_)) => Err(wikisuggest_error(
                    "internal error: a worker thread has stopped",
                )),
                _ => Ok(()),
            }
        });
        match (handed, job) {
            (Ok(handed), _) => handed,
            // The calling thread is ending (its worker is gone): a thread for this job alone.
            (Err(_), Some(job)) => std::thread::Builder::new()
                .name(NAME.to_owned())
                .spawn(move || job()())
                .map(drop)
                .map_err(|e| wikisuggest_error(&format!("cannot start a worker thread: {e}"))),
            (Err(_), None) => Ok(()),
        }
    }
}
