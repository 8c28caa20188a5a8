//! `NativeCall`, the one door of every single operation: work prepared once, then sent
//! blocking (`send`: the calling thread waits interruptibly, without the interpreter) or
//! awaited (`send_async`: an asyncio awaitable). The client's requests, the token manager's
//! renewals, the wiki's Action API calls and the engine's single pages all come through here,
//! so each kind of wait is written once and every task it starts is counted by [`InFlight`]
//! (the exit-time `quiesce` waits for them).
//!
//! A call is generic over what its work yields: the work runs without the interpreter and
//! ends in a [`Deliver`], the conversion to Python that runs once the result is back on a
//! Python thread. Errors are converted there too, with [`IntoPyErr`].

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use tokio::sync::Semaphore;
use wikisuggest_engine::default_workers;

use crate::deliver::{Deliver, deliver};
use crate::errors::{IntoPyErr, wikisuggest_error};
use crate::runtime::{InFlight, Worker, runtime, wait_for_task};

type Work = Pin<Box<dyn Future<Output = Deliver> + Send>>;

/// CPU-bound work, run on a thread rather than polled.
type Job = Box<dyn FnOnce() -> Deliver + Send>;

/// A first try of a job on the calling thread, for a bounded time: what it delivers, or
/// `None` when the job is to run after all (where it can be interrupted).
type FirstTry = Box<dyn FnOnce() -> Option<Deliver> + Send>;

/// What a call does when sent.
enum Prepared {
    /// I/O: polled on the shared runtime.
    Future(Work),
    /// CPU-bound: run on the caller's own worker thread (`send`) or the runtime's blocking
    /// pool (`send_async`), at most one per core at a time. Sent blocking, its first try
    /// (if any) runs on the calling thread before.
    Job(Job, Option<FirstTry>),
}

/// The slots of awaited CPU-bound work: one per core (as the engine's batches), so that a
/// thousand pages awaited at once wait their turn as futures instead of each taking a
/// thread of the blocking pool (up to 512) and sharing the cores between them.
fn cpu_slots() -> Arc<Semaphore> {
    static SLOTS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    SLOTS
        .get_or_init(|| Arc::new(Semaphore::new(default_workers())))
        .clone()
}

/// A prepared operation, sent once: blocking (`send`) or awaited (`send_async`).
#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeCall {
    work: Mutex<Option<Prepared>>,
}

impl NativeCall {
    /// A call whose `work` gives a value that `convert` turns into Python, or an error.
    pub fn new<T, E, F, C>(work: F, convert: C) -> Self
    where
        T: Send + 'static,
        E: IntoPyErr + Send + 'static,
        F: Future<Output = Result<T, E>> + Send + 'static,
        C: for<'py> FnOnce(Python<'py>, T) -> PyResult<Bound<'py, PyAny>> + Send + 'static,
    {
        let work = async move { deliver(work.await, convert) };
        Self {
            work: Mutex::new(Some(Prepared::Future(Box::pin(work)))),
        }
    }

    /// A call whose value converts to Python as it is.
    pub fn value<T, E>(work: impl Future<Output = Result<T, E>> + Send + 'static) -> Self
    where
        T: for<'py> IntoPyObject<'py> + Send + 'static,
        E: IntoPyErr + Send + 'static,
    {
        Self::new(work, |py, value| {
            pyo3::IntoPyObjectExt::into_bound_py_any(value, py)
        })
    }

    /// CPU-bound `work` (a page of the local engine): sent blocking, it runs on the calling
    /// thread's own worker thread (one hand-over each way); awaited, on the runtime's
    /// blocking pool, at most one per core at a time, never on its I/O threads.
    pub fn blocking<T, E, C>(
        work: impl FnOnce() -> Result<T, E> + Send + 'static,
        convert: C,
    ) -> Self
    where
        T: Send + 'static,
        E: IntoPyErr + Send + 'static,
        C: for<'py> FnOnce(Python<'py>, T) -> PyResult<Bound<'py, PyAny>> + Send + 'static,
    {
        Self::of_job(job(work, convert), None)
    }

    /// [`NativeCall::blocking`], tried first on the calling thread when sent blocking:
    /// `first` gives the answer, or `None` when it could not within the bounded time it
    /// takes (then `work` runs as in [`NativeCall::blocking`], interruptibly). Most pages
    /// end within it, sparing the two hand-overs to a worker and back (about a twentieth of
    /// an average page's work); the bound keeps Ctrl-C answered within it.
    pub fn blocking_tried_first<T, E, C>(
        first: impl FnOnce() -> Option<Result<T, E>> + Send + 'static,
        work: impl FnOnce() -> Result<T, E> + Send + 'static,
        convert: C,
    ) -> Self
    where
        T: Send + 'static,
        E: IntoPyErr + Send + 'static,
        C: for<'py> FnOnce(Python<'py>, T) -> PyResult<Bound<'py, PyAny>> + Clone + Send + 'static,
    {
        let convert_first = convert.clone();
        let tried: FirstTry = Box::new(move || {
            let outcome = caught(first, |why| Some(Err(E::internal(why))))?;
            Some(deliver(outcome, convert_first))
        });
        Self::of_job(job(work, convert), Some(tried))
    }

    fn of_job(job: Job, first: Option<FirstTry>) -> Self {
        Self {
            work: Mutex::new(Some(Prepared::Job(job, first))),
        }
    }

    fn take(&self) -> PyResult<Prepared> {
        self.work
            .lock()
            .ok()
            .and_then(|mut work| work.take())
            .ok_or_else(|| wikisuggest_error("this call was already sent"))
    }
}

/// The blocking `work` of a call, its value converted by `convert` (a panic becomes an
/// internal error).
fn job<T, E, C>(work: impl FnOnce() -> Result<T, E> + Send + 'static, convert: C) -> Job
where
    T: Send + 'static,
    E: IntoPyErr + Send + 'static,
    C: for<'py> FnOnce(Python<'py>, T) -> PyResult<Bound<'py, PyAny>> + Send + 'static,
{
    Box::new(move || deliver(caught(work, |why| Err(E::internal(why))), convert))
}

/// `work()`, or `panicked(why)` if it panicked: a panic never crosses into Python.
fn caught<R>(work: impl FnOnce() -> R, panicked: impl FnOnce(&str) -> R) -> R {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .unwrap_or_else(|_| panicked("the task failed: it panicked"))
}

#[pymethods]
impl NativeCall {
    /// Send and wait, without the GIL and interruptibly: Ctrl-C drops the work (an HTTP
    /// request is closed; a page already running on the engine finishes unseen).
    fn send<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let work = match self.take()? {
            Prepared::Future(work) => work,
            Prepared::Job(job, first) => {
                crate::logging::refresh(py)?;
                if let Some(delivered) = first.and_then(|first| py.detach(first)) {
                    return delivered(py);
                }
                return Worker::on_own_thread(job)?.wait(py)?(py);
            }
        };
        let rt = runtime()?;
        crate::logging::refresh(py)?;
        let task = rt.spawn(async move {
            let _guard = InFlight::enter();
            work.await
        });
        wait_for_task(py, rt, task)?(py)
    }

    /// Send as an awaitable for the running asyncio loop; cancelling it drops the work.
    fn send_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let work: Work = match self.take()? {
            Prepared::Future(work) => work,
            // Never tried first on the event loop's thread, which it would hold.
            Prepared::Job(job, _) => Box::pin(async move {
                // The slot goes with the job: work cancelled once running still holds it.
                let slot = cpu_slots().acquire_owned().await;
                tokio::task::spawn_blocking(move || {
                    let _slot = slot;
                    job()
                })
                .await
                .unwrap_or_else(|joined| {
                    let message = format!("internal error: a native task failed: {joined}");
                    Box::new(move |_| Err(wikisuggest_error(&message)))
                })
            }),
        };
        crate::logging::refresh(py)?;
        crate::awaitable::awaitable(py, work)
    }
}
