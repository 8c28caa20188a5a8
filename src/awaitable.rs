//! Native work as an asyncio awaitable: the one bridge of every `*_async` door
//! (`NativeCall::send_async`, the batches' `next_async`).
//!
//! The work runs on the shared runtime and is counted by [`InFlight`] until its result is in
//! the loop's hands (the exit-time `quiesce` waits for that). Its [`Deliver`] runs with the
//! interpreter on the hand-over thread, never on an I/O thread, and the value is set on the
//! loop's own thread, only if the future is still pending. Cancelling the future aborts the
//! work. A loop that closed before the result came back (a program that ended while work still
//! ran) is given nothing and nothing is printed: no one is waiting for that result.
//!
//! The hand-over thread is one long-lived thread that stays attached to the interpreter (its
//! thread state made once) and waits for finished work without holding it; results that
//! finish together are handed over in one hold of the interpreter and one callback of their
//! loop (one wake-up of its self-pipe, one step of its queue). It replaced a thread of
//! the runtime's blocking pool per result, each attaching anew (a thread state and its frame
//! stack made and freed each time) and all contending for the interpreter at once: with a
//! thousand awaitables gathered, a third of the CPU per request and nearly three times the
//! requests per second (docs/benchmarks.md, "HTTP client").

use std::future::Future;
use std::sync::{Mutex, mpsc};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyList;
use pyo3::{intern, wrap_pyfunction};
use tokio::task::{AbortHandle, JoinError};

use crate::deliver::Deliver;
use crate::errors::wikisuggest_error;
use crate::runtime::{InFlight, runtime};

/// A finished piece of work on its way to the loop that awaits it.
struct Handover {
    event_loop: Py<PyAny>,
    future: Py<PyAny>,
    deliver: Deliver,
    /// Dropped once the value is in the loop's hands (or the loop is gone).
    in_flight: InFlight,
}

/// The hand-over thread's queue, made with the thread on first use.
static HANDOVER: Mutex<Option<mpsc::Sender<Handover>>> = Mutex::new(None);

/// A sender to the hand-over thread, starting it on first use.
fn handover_queue() -> PyResult<mpsc::Sender<Handover>> {
    let mut queue = HANDOVER
        .lock()
        .map_err(|_| wikisuggest_error("internal error: the hand-over queue is poisoned"))?;
    if let Some(sender) = queue.as_ref() {
        return Ok(sender.clone());
    }
    let (sender, receiver) = mpsc::channel();
    std::thread::Builder::new()
        .name("wikisuggest-handover".into())
        .spawn(move || Python::attach(|py| hand_over_all(py, receiver)))
        .map_err(|error| wikisuggest_error(&format!("cannot start a thread: {error}")))?;
    *queue = Some(sender.clone());
    Ok(sender)
}

/// The hand-over thread: waits without the interpreter, then hands over everything queued,
/// one callback per loop for the results that finished together.
fn hand_over_all(py: Python<'_>, mut receiver: mpsc::Receiver<Handover>) {
    let mut ready: Vec<Handover> = Vec::new();
    loop {
        // The receiver goes with the wait (it may be used by one thread at a time).
        let (received, back) = py.detach(move || (receiver.recv(), receiver));
        receiver = back;
        let Ok(first) = received else {
            return;
        };
        ready.push(first);
        ready.extend(receiver.try_iter());
        while let Some(first) = ready.first() {
            let event_loop = first.event_loop.clone_ref(py);
            let (same, rest) = std::mem::take(&mut ready)
                .into_iter()
                .partition(|h| h.event_loop.is(&event_loop));
            ready = rest;
            // A conversion that panicked (a bug) loses its group's results, not the thread.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                hand_over(py, event_loop.bind(py), same);
            }));
        }
    }
}

/// `asyncio.get_running_loop` and [`settle`], looked up once.
static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static SETTLE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// An awaitable (an `asyncio.Future` of the running loop) of what `work` delivers. Raises
/// `RuntimeError` outside a running loop, as asyncio's own functions do.
pub fn awaitable<'py, F>(py: Python<'py>, work: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Deliver> + Send + 'static,
{
    let rt = runtime()?;
    let event_loop = GET_RUNNING_LOOP
        .get_or_try_init(py, || {
            py.import("asyncio")?
                .getattr("get_running_loop")
                .map(Bound::unbind)
        })?
        .bind(py)
        .call0()?;
    let future = event_loop.call_method0(intern!(py, "create_future"))?;
    let queue = handover_queue()?;
    let in_flight = InFlight::enter();
    let task = rt.spawn(work);
    future.call_method1(
        intern!(py, "add_done_callback"),
        (AbortOnCancel(task.abort_handle()),),
    )?;
    let (event_loop, target) = (event_loop.unbind(), future.clone().unbind());
    rt.spawn(async move {
        let deliver = match task.await {
            Ok(deliver) => deliver,
            Err(joined) if joined.is_cancelled() => return,
            Err(joined) => failed(joined),
        };
        // The thread never ends while the process runs: a send cannot fail.
        let _ = queue.send(Handover {
            event_loop,
            future: target,
            deliver,
            in_flight,
        });
    });
    Ok(future)
}

/// The error a task that panicked delivers (clippy keeps panics out of the work; this is the
/// net under it, so that an awaiting coroutine never waits forever).
fn failed(joined: JoinError) -> Deliver {
    let message = format!("internal error: a native task failed: {joined}");
    Box::new(move |_| Err(wikisuggest_error(&message)))
}

/// Makes the delivered values of `finished` (all awaited on `event_loop`) and schedules
/// their setting on the loop's thread, in one callback. The work stays counted in flight
/// until then.
fn hand_over(py: Python<'_>, event_loop: &Bound<'_, PyAny>, finished: Vec<Handover>) {
    let mut settled = Vec::with_capacity(finished.len());
    let mut in_flight = Vec::with_capacity(finished.len());
    for handover in finished {
        let Handover {
            future,
            deliver,
            in_flight: counted,
            ..
        } = handover;
        in_flight.push(counted);
        let future = future.into_bound(py);
        if is_true(future.call_method0(intern!(py, "done"))).unwrap_or(true) {
            continue; // cancelled meanwhile
        }
        let (ok, value) = match deliver(py) {
            Ok(value) => (true, value),
            Err(error) => (false, error.into_value(py).into_bound(py).into_any()),
        };
        settled.push((future, ok, value));
    }
    let Some(first) = settled.first().map(|(future, _, _)| future.clone()) else {
        return;
    };
    let scheduled = SETTLE
        .get_or_try_init(py, || {
            wrap_pyfunction!(settle, py).map(|settle| settle.into_any().unbind())
        })
        .and_then(|settle| {
            let settled = PyList::new(py, settled)?;
            event_loop.call_method1(intern!(py, "call_soon_threadsafe"), (settle, settled))
        });
    if let Err(error) = scheduled {
        // A closed loop refuses callbacks: the program ended with this work running.
        if !is_true(event_loop.call_method0(intern!(py, "is_closed"))).unwrap_or(false) {
            error.write_unraisable(py, Some(&first));
        }
    }
    drop(in_flight);
}

/// Runs on the loop's thread: each future of `settled` (`(future, ok, value)` triples) takes
/// its value (or exception) unless it was cancelled after the value was scheduled. An error
/// setting one (none is expected) is raised after the others are set.
#[pyfunction]
fn settle(settled: &Bound<'_, PyList>) -> PyResult<()> {
    let py = settled.py();
    let mut failed = None;
    for entry in settled.iter() {
        let (future, ok, value): (Bound<'_, PyAny>, bool, Bound<'_, PyAny>) = entry.extract()?;
        let outcome = is_true(future.call_method0(intern!(py, "done"))).and_then(|done| {
            if done {
                return Ok(());
            }
            let setter = if ok {
                intern!(py, "set_result")
            } else {
                intern!(py, "set_exception")
            };
            future.call_method1(setter, (value,)).map(drop)
        });
        if let Err(error) = outcome {
            failed.get_or_insert(error);
        }
    }
    failed.map_or(Ok(()), Err)
}

fn is_true(value: PyResult<Bound<'_, PyAny>>) -> PyResult<bool> {
    value?.is_truthy()
}

/// The future's done-callback: a cancelled future aborts its work (an HTTP request is
/// closed; a page already running on the engine finishes unseen).
#[pyclass(frozen, module = "wikisuggest._native")]
struct AbortOnCancel(AbortHandle);

#[pymethods]
impl AbortOnCancel {
    fn __call__(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        if is_true(future.call_method0(intern!(future.py(), "cancelled")))? {
            self.0.abort();
        }
        Ok(())
    }
}
