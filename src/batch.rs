//! `NativeBatch`: a running batch of requests, read item by item as items finish — blocking
//! (interruptible) or awaited. Dropping it aborts what has not finished.

use std::sync::Arc;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyType};
use tokio::sync::Mutex;
use wikisuggest_core::Client;
use wikisuggest_core::batch::{BatchItem, BatchStream};

use crate::client::{LinkArgs, NativeClient, Operation, TranslationArgs};
use crate::errors::{core_error, wikisuggest_error};
use crate::runtime::{InFlight, runtime, wait_interruptibly};

#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeBatch {
    stream: Arc<Mutex<BatchStream>>,
    total: usize,
}

/// Most items handed to Python per call.
const GROUP_LIMIT: usize = 256;

/// Where the items of a batch came from, as the Python layer planned it: the batch's inputs,
/// and for each request sent (in order) the position of its input.
#[derive(FromPyObject)]
pub struct Origin<'py> {
    inputs: Bound<'py, PyList>,
    native_index: Bound<'py, PyList>,
}

/// `wikisuggest.batch.BatchItem`, looked up once.
static BATCH_ITEM: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Finished items as the `wikisuggest.batch.BatchItem`s of their inputs (an empty list at the
/// end), built here rather than from a tuple per item by Python code, which measured as a
/// tenth of a batch's CPU per request.
fn batch_items<'py>(
    py: Python<'py>,
    items: Vec<BatchItem>,
    origin: &Origin<'py>,
) -> PyResult<Bound<'py, PyList>> {
    let class = BATCH_ITEM.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("wikisuggest.batch")?
                .getattr("BatchItem")?
                .cast_into::<PyType>()?
                .unbind(),
        )
    })?;
    let items = items
        .into_iter()
        .map(|item| batch_item(py, class.bind(py), origin, item))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

fn batch_item<'py>(
    py: Python<'py>,
    class: &Bound<'py, PyType>,
    origin: &Origin<'py>,
    item: BatchItem,
) -> PyResult<Bound<'py, PyAny>> {
    let index = origin.native_index.get_item(item.index)?;
    let input = origin.inputs.get_item(index.extract::<usize>()?)?;
    let result = match item.result {
        Ok(response) => crate::convert::undecoded(py, &response)?,
        Err(error) => Err(error),
    };
    let none = || py.None().into_bound(py);
    let (result, error) = match result {
        Ok(value) => (value, none()),
        Err(error) => (
            none(),
            core_error(py, error)
                .into_value(py)
                .into_bound(py)
                .into_any(),
        ),
    };
    crate::convert::instance(
        class,
        &[
            (intern!(py, "index"), index),
            (intern!(py, "input"), input),
            (intern!(py, "result"), result),
            (intern!(py, "error"), error),
        ],
    )
}

/// Finished items handed to the asyncio side as they are: `items()` converts them on the
/// event loop's thread, rather than the I/O thread that completes the wait holding the
/// interpreter for the whole conversion (which then contends with the loop for it).
#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeGroup(std::sync::Mutex<Vec<BatchItem>>);

#[pymethods]
impl NativeGroup {
    /// The items as `next` returns them (a second call returns an empty list).
    fn items<'py>(&self, py: Python<'py>, origin: Origin<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .0
            .lock()
            .map(|mut items| std::mem::take(&mut *items))
            .unwrap_or_default();
        batch_items(py, items, &origin)
    }
}

impl NativeBatch {
    /// Prepare every item's request and start them all.
    fn start<A: Operation>(client: &Arc<Client>, items: Vec<A>, raw: bool) -> PyResult<Self> {
        let rt = runtime()?;
        Python::attach(crate::logging::refresh);
        let requests = items.into_iter().map(|args| args.prepare(client)).collect();
        let stream = BatchStream::spawn(client.clone(), requests, A::KIND, raw, rt.handle());
        Ok(Self {
            total: stream.total(),
            stream: Arc::new(Mutex::new(stream)),
        })
    }
}

#[pymethods]
impl NativeBatch {
    /// Link requests: each item is the options dict of one `NativeClient.link_recommendations`.
    #[staticmethod]
    fn links(client: &NativeClient, items: Vec<LinkArgs>, raw: bool) -> PyResult<Self> {
        Self::start(&client.inner, items, raw)
    }

    #[staticmethod]
    fn translations(
        client: &NativeClient,
        items: Vec<TranslationArgs>,
        raw: bool,
    ) -> PyResult<Self> {
        Self::start(&client.inner, items, raw)
    }

    #[getter]
    fn total(&self) -> usize {
        self.total
    }

    /// The next finished items (at least one, as many as are ready), waiting without the
    /// GIL; an empty list when all were returned. Ctrl-C raises `KeyboardInterrupt` here
    /// without cancelling the batch (call `cancel`).
    fn next<'py>(&self, py: Python<'py>, origin: Origin<'py>) -> PyResult<Bound<'py, PyList>> {
        let rt = runtime()?;
        let stream = self.stream.clone();
        // Gathered on the I/O threads (not in `block_on` on this one), so that the items
        // finishing together are handed over in one group: this thread wakes once for them.
        let mut task = rt.spawn(async move { stream.lock().await.next_group(GROUP_LIMIT).await });
        let waited = wait_interruptibly(py, |interval| {
            rt.block_on(async { tokio::time::timeout(interval, &mut task).await })
                .ok()
        });
        match waited {
            Ok(Ok(group)) => batch_items(py, group, &origin),
            Ok(Err(join_error)) => Err(wikisuggest_error(&format!(
                "internal error: the batch task failed: {join_error}"
            ))),
            Err(signal) => {
                // The caller ends the batch on a signal; items not handed over by then are
                // reported unfinished, as those still in flight are.
                task.abort();
                Err(signal)
            }
        }
    }

    /// Awaitable form of `next`: it gives a `NativeGroup`, whose `items()` are those `next`
    /// returns (an empty list at the end).
    fn next_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        runtime()?;
        let stream = self.stream.clone();
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let _guard = InFlight::enter();
            let group = stream.lock().await.next_group(GROUP_LIMIT).await;
            Ok(NativeGroup(std::sync::Mutex::new(group)))
        })
    }

    /// Abort every item that has not finished; finished items can still be read.
    fn cancel(&self, py: Python<'_>) -> PyResult<()> {
        let rt = runtime()?;
        let stream = self.stream.clone();
        py.detach(|| rt.block_on(async move { stream.lock().await.abort() }));
        Ok(())
    }
}
