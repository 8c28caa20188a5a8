//! The batches of the binding: a running batch hands Python ready
//! `wikisuggest.batch.BatchItem`s, read by the one pair of drivers in
//! `python/wikisuggest/batch.py`. Both kinds speak the same protocol:
//!
//! - `next(sink)`: appends the next finished items (at least one; as many as are ready) to
//!   `sink`, waiting interruptibly without the interpreter; `False` at the end;
//! - `next_async()`: an awaitable of a [`NativeGroup`] whose `items()` are what `next` returns;
//! - `interrupt()`: stop, and return every item not returned yet that can be settled;
//! - `cancel()`: stop, without waiting for anything.
//!
//! The client's [`NativeBatch`] (HTTP requests, results as they complete) is here; the
//! engine's (pages, results in input order) is `crate::engine_batch`.

use std::future::Future;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyType};
use pyo3::{IntoPyObjectExt, intern};
use tokio::sync::Mutex;
use wikisuggest_core::Client;
use wikisuggest_core::batch::{FinishedRequest, RequestStream};

use crate::client::{LinkArgs, NativeClient, Operation, TranslationArgs};
use crate::convert::RecordClass;
use crate::deliver::Deliver;
use crate::errors::core_error;
use crate::runtime::{runtime, wait_for_task};

/// Most items handed to Python per call.
const GROUP_LIMIT: usize = 256;

/// `wikisuggest.batch.BatchItem`, looked up once.
static BATCH_ITEM: PyOnceLock<RecordClass> = PyOnceLock::new();

/// A `wikisuggest.batch.BatchItem` (built as `crate::convert` builds records, without the
/// frozen dataclass's `__init__`, which measured as a tenth of a batch's CPU per item, and
/// left out of the cyclic collector when its input and outcome are). Every field is set by
/// name: tests/test_native_records.py fails if the dataclass gains one.
pub fn item<'py>(
    py: Python<'py>,
    index: Bound<'py, PyAny>,
    input: Bound<'py, PyAny>,
    outcome: Result<Bound<'py, PyAny>, PyErr>,
) -> PyResult<Bound<'py, PyAny>> {
    let class = BATCH_ITEM.get_or_try_init(py, || {
        RecordClass::new(
            py.import("wikisuggest.batch")?
                .getattr("BatchItem")?
                .cast_into::<PyType>()?,
        )
    })?;
    let none = || py.None().into_bound(py);
    let (result, error) = match outcome {
        Ok(value) => (value, none()),
        Err(error) => (none(), error.into_value(py).into_bound(py).into_any()),
    };
    crate::convert::atomic_instance(
        py,
        class,
        &[
            (intern!(py, "index"), index),
            (intern!(py, "input"), input),
            (intern!(py, "result"), result),
            (intern!(py, "error"), error),
        ],
    )
}

/// Appends `items` to the driver's `sink` here, not in Python code after this call returns:
/// a signal handler that runs between the two (Ctrl-C) would lose them. Whether any came.
pub fn extend(sink: &Bound<'_, PyAny>, items: Bound<'_, PyAny>) -> PyResult<bool> {
    let any = items.len()? > 0;
    sink.call_method1(intern!(sink.py(), "extend"), (items,))?;
    Ok(any)
}

/// Finished items handed to the asyncio side as they are: `items()` converts them on the
/// event loop's thread, rather than the I/O thread that completes the wait holding the
/// interpreter for the whole conversion (which then contends with the loop for it).
#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeGroup(std::sync::Mutex<Option<Deliver>>);

impl NativeGroup {
    pub fn new(deliver: Deliver) -> Self {
        Self(std::sync::Mutex::new(Some(deliver)))
    }

    /// An awaitable of the group whose items `work` ends with: both batches' `next_async`.
    pub fn awaitable<'py, F>(py: Python<'py>, work: F) -> PyResult<Bound<'py, PyAny>>
    where
        F: Future<Output = Deliver> + Send + 'static,
    {
        crate::awaitable::awaitable(py, async move {
            let items = work.await;
            let group: Deliver =
                Box::new(move |py| Bound::new(py, NativeGroup::new(items)).map(Bound::into_any));
            group
        })
    }
}

#[pymethods]
impl NativeGroup {
    /// The items as `next` returns them (a second call returns an empty list).
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let deliver = self.0.lock().ok().and_then(|mut d| d.take());
        match deliver {
            Some(deliver) => deliver(py),
            None => PyList::empty(py).into_bound_py_any(py),
        }
    }
}

/// Where the items of a client batch came from, as the Python layer planned it: the batch's
/// inputs, and for each request sent (in order) the position of its input.
#[derive(FromPyObject)]
pub struct Origin {
    inputs: Py<PyList>,
    native_index: Py<PyList>,
}

impl Origin {
    /// Finished requests as the `BatchItem`s of their inputs.
    fn items<'py>(
        &self,
        py: Python<'py>,
        finished: Vec<FinishedRequest>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let items = finished
            .into_iter()
            .map(|done| {
                let index = self.native_index.bind(py).get_item(done.index)?;
                let input = self.inputs.bind(py).get_item(index.extract::<usize>()?)?;
                let outcome = match done.result {
                    Ok(response) => crate::records_json::undecoded(py, &response)?,
                    Err(error) => Err(error),
                };
                item(py, index, input, outcome.map_err(|e| core_error(py, e)))
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)?.into_bound_py_any(py)
    }
}

/// A running batch of requests, read item by item as items finish. Dropping it aborts what
/// has not finished.
#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeBatch {
    stream: Arc<Mutex<RequestStream>>,
    origin: Arc<Origin>,
}

impl NativeBatch {
    /// Prepare every item's request and start them all.
    fn start<A: Operation>(
        client: &Arc<Client>,
        items: Vec<A>,
        raw: bool,
        origin: Origin,
    ) -> PyResult<Self> {
        let rt = runtime()?;
        Python::attach(crate::logging::refresh)?;
        let requests = items.into_iter().map(|args| args.prepare(client)).collect();
        let stream = RequestStream::spawn(client.clone(), requests, A::KIND, raw, rt.handle());
        Ok(Self {
            stream: Arc::new(Mutex::new(stream)),
            origin: Arc::new(origin),
        })
    }

    /// Finished items not handed over yet, after the batch was stopped.
    fn stop<'py>(&self, py: Python<'py>) -> PyResult<Vec<FinishedRequest>> {
        let rt = runtime()?;
        let stream = self.stream.clone();
        Ok(py.detach(|| {
            rt.block_on(async move {
                let mut stream = stream.lock().await;
                stream.abort();
                stream.finished()
            })
        }))
    }
}

#[pymethods]
impl NativeBatch {
    /// Link requests: each item is the options dict of one `NativeClient.link_recommendations`;
    /// `origin` is the plan (`inputs`, `native_index`) the items are reported against.
    #[staticmethod]
    fn links(
        client: &NativeClient,
        items: Vec<LinkArgs>,
        raw: bool,
        origin: Origin,
    ) -> PyResult<Self> {
        Self::start(&client.inner, items, raw, origin)
    }

    #[staticmethod]
    fn translations(
        client: &NativeClient,
        items: Vec<TranslationArgs>,
        raw: bool,
        origin: Origin,
    ) -> PyResult<Self> {
        Self::start(&client.inner, items, raw, origin)
    }

    /// The next finished items, appended to `sink` (see the module's comment). Ctrl-C raises
    /// `KeyboardInterrupt` here and loses nothing: items gathered meanwhile stay in the
    /// stream, for `interrupt`.
    fn next(&self, py: Python<'_>, sink: &Bound<'_, PyAny>) -> PyResult<bool> {
        let rt = runtime()?;
        let stream = self.stream.clone();
        // Gathered on the I/O threads (not in `block_on` on this one), so that the items
        // finishing together are handed over in one group: this thread wakes once for them.
        let task = rt.spawn(async move { stream.lock().await.next_group(GROUP_LIMIT).await });
        let group = wait_for_task(py, rt, task)?;
        extend(sink, self.origin.items(py, group)?)
    }

    /// Awaitable form of `next`: it gives a `NativeGroup`.
    fn next_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        runtime()?;
        let stream = self.stream.clone();
        let origin = self.origin.clone();
        NativeGroup::awaitable(py, async move {
            let group = stream.lock().await.next_group(GROUP_LIMIT).await;
            let items: Deliver = Box::new(move |py| origin.items(py, group));
            items
        })
    }

    /// Abort every item that has not finished, and return those that finished and were not
    /// handed over yet (the Python layer reports the others `Cancelled`).
    fn interrupt<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let finished = self.stop(py)?;
        self.origin.items(py, finished)
    }

    /// Abort every item that has not finished.
    fn cancel(&self, py: Python<'_>) -> PyResult<()> {
        self.stop(py).map(drop)
    }
}
