//! `NativeEngineBatch`: the engine's batch, speaking the protocol of `crate::batch` (ready
//! `BatchItem`s from `next`, `next_async`, `interrupt`, `cancel`). The Python driver feeds it
//! pages a few per worker ahead of what it has read back (`push`, or `refuse` for a page that
//! never reaches the engine), and it hands back the items in input order, each with the
//! index and input the driver gave: the engine's stream returns outcomes in order, and this
//! side pairs them with what was fed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::{IntoPyObjectExt, PyTypeInfo};
use wikisuggest_engine::{BatchStream, LinkRecommendationSet};

use crate::batch::{NativeGroup, extend, item};
use crate::deliver::Deliver;
use crate::engine_page::{PageArgs, set_to_py};
use crate::errors::engine_error;
use crate::runtime::{runtime, wait_interruptibly};

type Outcome = Option<wikisuggest_engine::Result<LinkRecommendationSet>>;

/// How long one wait of the asyncio side holds a thread of the blocking pool.
const ASYNC_WAIT_SLICE: Duration = Duration::from_millis(50);

/// A page as fed, in input order.
struct Entry {
    index: Py<PyAny>,
    input: Py<PyAny>,
    /// The error that kept it from the engine; `None` once the engine has it.
    refused: Option<Py<PyAny>>,
}

#[derive(Default)]
struct Queue {
    entries: VecDeque<Entry>,
    /// Outcomes taken from the engine's stream and not paired yet, in input order.
    outcomes: VecDeque<Outcome>,
}

impl Queue {
    /// Whether the oldest entry is settled (refused, or its outcome is here).
    fn ready(&self) -> bool {
        self.entries
            .front()
            .is_some_and(|e| e.refused.is_some() || !self.outcomes.is_empty())
    }

    /// The settled entries at the head, as items; with `all`, every entry (those with no
    /// outcome come back `Cancelled`).
    fn settle<'py>(
        &mut self,
        py: Python<'py>,
        all: bool,
        explain: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut items = Vec::new();
        while let Some(entry) = self.entries.front() {
            let outcome = if let Some(error) = &entry.refused {
                Err(PyErr::from_value(error.bind(py).clone()))
            } else {
                match self.outcomes.pop_front() {
                    Some(Some(Ok(set))) => set_to_py(py, set, explain),
                    Some(Some(Err(error))) => Err(engine_error(py, &error)),
                    Some(None) => Err(not_started(py)),
                    None if all => Err(not_started(py)),
                    None => break,
                }
            };
            let Some(entry) = self.entries.pop_front() else {
                break;
            };
            items.push(item(
                py,
                entry.index.into_bound(py),
                entry.input.into_bound(py),
                outcome,
            )?);
        }
        PyList::new(py, items)?.into_bound_py_any(py)
    }
}

fn not_started(py: Python<'_>) -> PyErr {
    match py
        .import("wikisuggest.errors")
        .and_then(|m| m.getattr("Cancelled"))
        .and_then(|class| class.call1(("interrupted before this page started",)))
    {
        Ok(error) => PyErr::from_value(error),
        Err(error) => error,
    }
}

struct Shared {
    stream: BatchStream,
    queue: Mutex<Queue>,
    /// Held while outcomes move from the stream to the queue, so that two takers (the
    /// asyncio side's wait and an interruption) never append out of order.
    taking: Mutex<()>,
    /// Items carry what the rules removed (see `crate::engine_page::set_to_py`).
    explain: bool,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits at most `timeout` for the oldest page's outcome, and moves every outcome ready
    /// into the queue; whether any came.
    fn take(&self, timeout: Duration) -> bool {
        let _taking = self.taking.lock().unwrap_or_else(PoisonError::into_inner);
        let got = self.stream.take(timeout);
        let any = !got.is_empty();
        self.queue().outcomes.extend(got);
        any
    }

    /// Whether `next` has to wait: nothing settled at the head, and a page in the engine.
    fn must_wait(&self) -> bool {
        !self.queue().ready() && self.stream.pending() > 0
    }
}

#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeEngineBatch {
    shared: Arc<Shared>,
}

impl NativeEngineBatch {
    /// With `explain`, items carry what the rules removed (`crate::engine_page::set_to_py`).
    pub fn new(stream: BatchStream, explain: bool) -> Self {
        Self {
            shared: Arc::new(Shared {
                explain,
                stream,
                queue: Mutex::new(Queue::default()),
                taking: Mutex::new(()),
            }),
        }
    }
}

#[pymethods]
impl NativeEngineBatch {
    /// Queues page `page` (the input `input`, at position `index`) on the engine.
    fn push(&self, index: Bound<'_, PyAny>, input: Bound<'_, PyAny>, page: PageArgs) {
        let mut queue = self.shared.queue();
        queue.entries.push_back(Entry {
            index: index.unbind(),
            input: input.unbind(),
            refused: None,
        });
        self.shared.stream.push(page.into());
    }

    /// Records a page that does not reach the engine, with the error it gets, in its place.
    fn refuse(
        &self,
        index: Bound<'_, PyAny>,
        input: Bound<'_, PyAny>,
        error: Bound<'_, PyAny>,
    ) -> PyResult<()> {
        if !error.is_instance(&pyo3::exceptions::PyBaseException::type_object(error.py()))? {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "error must be an exception",
            ));
        }
        self.shared.queue().entries.push_back(Entry {
            index: index.unbind(),
            input: input.unbind(),
            refused: Some(error.unbind()),
        });
        Ok(())
    }

    /// Pages in the engine whose outcome was not read yet.
    fn pending(&self) -> u64 {
        self.shared.stream.pending()
    }

    /// Appends the next settled items to `sink`, in input order (see `crate::batch`). Ctrl-C
    /// raises here and loses nothing: outcomes not paired stay here, for `interrupt`.
    fn next(&self, py: Python<'_>, sink: &Bound<'_, PyAny>) -> PyResult<bool> {
        let shared = &self.shared;
        if shared.must_wait() {
            wait_interruptibly(py, |interval| shared.take(interval).then_some(()))?;
        }
        extend(sink, shared.queue().settle(py, false, shared.explain)?)
    }

    /// Awaitable form of `next`: it gives a `NativeGroup`. The wait runs on the blocking
    /// pool in short slices; what a slice takes goes into this batch, so a cancelled wait
    /// loses nothing.
    fn next_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let rt = runtime()?;
        let shared = self.shared.clone();
        NativeGroup::awaitable(py, async move {
            while shared.must_wait() {
                let waiting = shared.clone();
                let _ = rt
                    .spawn_blocking(move || waiting.take(ASYNC_WAIT_SLICE))
                    .await;
            }
            let items: Deliver =
                Box::new(move |py| shared.queue().settle(py, false, shared.explain));
            items
        })
    }

    /// Starts no further page, waits (without the interpreter) for the pages running, and
    /// returns every item not returned yet: finished pages with their outcome, the others
    /// `Cancelled`.
    fn interrupt<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let shared = &self.shared;
        shared.stream.stop();
        py.detach(|| {
            while shared.stream.pending() > 0 {
                shared.take(Duration::from_secs(3600));
            }
        });
        shared.queue().settle(py, true, shared.explain)
    }

    /// Starts no further page; pages running finish in the background.
    fn cancel(&self) {
        self.shared.stream.stop();
    }
}
