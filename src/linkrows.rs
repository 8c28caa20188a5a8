//! Whole-wiki link rows for Python: the rows of a dump (`NativeDumpRows`) or of an Arrow batch
//! of pages (`link_rows`), built by the `wikisuggest-linkrows` crate and handed over as Arrow
//! record batches through the Arrow PyCapsule interface (`__arrow_c_array__`), so that
//! `pyarrow.record_batch(...)` takes them without a copy and no wikitext or link becomes a
//! Python object.

use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema, from_ffi, to_ffi};
use arrow_array::{Array, RecordBatch, StructArray};
use pyo3::exceptions::{PyOSError, PyStopIteration};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};
use wikisuggest_dump::{DumpError, DumpOptions};
use wikisuggest_engine::RecommendOptions;
use wikisuggest_linkrows::{
    ArrowPages, DumpRun, DumpRunOptions, Engines, PreviewPages, RowBatch, RunEvent, Selection,
};

use crate::engine::{NativeEngine, OptionArgs};
use crate::errors::{invalid_parameter, wikisuggest_error};
use crate::runtime::{Worker, wait_interruptibly};

const SCHEMA_CAPSULE: &CStr = c"arrow_schema";
const ARRAY_CAPSULE: &CStr = c"arrow_array";

/// A record batch (link rows, a gap table), for `pyarrow.record_batch()` (the Arrow PyCapsule interface).
#[pyclass(module = "wikisuggest._native", frozen)]
pub struct NativeArrowBatch {
    batch: RecordBatch,
}

impl NativeArrowBatch {
    /// A batch to hand to Python.
    pub(crate) fn new(batch: RecordBatch) -> Self {
        Self { batch }
    }
}

#[pymethods]
impl NativeArrowBatch {
    /// `(schema capsule, array capsule)` of the batch as one struct array. A requested schema
    /// is not honoured (the rows have one schema), as the interface allows.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let data = StructArray::from(self.batch.clone()).into_data();
        let (array, schema) = to_ffi(&data)
            .map_err(|e| wikisuggest_error(&format!("internal error: exporting rows: {e}")))?;
        let schema = PyCapsule::new_with_value(py, schema, SCHEMA_CAPSULE)?;
        let array = PyCapsule::new_with_value(py, array, ARRAY_CAPSULE)?;
        PyTuple::new(py, [schema.into_any(), array.into_any()])
    }

    /// Rows.
    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }
}

/// The record batch behind an object of the Arrow PyCapsule interface (a `pyarrow`
/// `RecordBatch`, …), without a copy.
fn import_batch(object: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    let refused = |why: String| invalid_parameter("pages", &why);
    let capsules = object
        .call_method0("__arrow_c_array__")
        .map_err(|_| refused("must be an Arrow record batch (__arrow_c_array__)".into()))?;
    let (schema, array): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) = capsules.extract()?;
    let schema_ptr = schema.pointer_checked(Some(SCHEMA_CAPSULE))?;
    let array_ptr = array.pointer_checked(Some(ARRAY_CAPSULE))?;
    // SAFETY: the capsules are named as the interface prescribes, so they hold an
    // `ArrowSchema` and an `ArrowArray`. The array is moved out (an empty, released one left
    // in its place, which the capsule's destructor then ignores), the schema only read.
    let data = unsafe {
        let array = std::ptr::replace(
            array_ptr.cast::<FFI_ArrowArray>().as_ptr(),
            FFI_ArrowArray::empty(),
        );
        from_ffi(array, schema_ptr.cast::<FFI_ArrowSchema>().as_ref())
    }
    .map_err(|e| refused(format!("cannot be read as Arrow data: {e}")))?;
    if !matches!(data.data_type(), arrow_schema::DataType::Struct(_)) {
        return Err(refused("must be a record batch (a struct array)".into()));
    }
    Ok(RecordBatch::from(StructArray::from(data)))
}

/// A count given from Python that must be at least 1 (a negative one is named too, not an
/// overflow).
fn at_least_one(name: &str, value: i64) -> PyResult<u64> {
    match u64::try_from(value) {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(invalid_parameter(
            name,
            &format!("must be at least 1, got {value}"),
        )),
    }
}

/// [`at_least_one`] as a size.
fn at_least_one_size(name: &str, value: i64) -> PyResult<usize> {
    let n = at_least_one(name, value)?;
    usize::try_from(n).map_err(|_| invalid_parameter(name, &format!("is too large: {value}")))
}

/// A dump path that is no file is the caller's mistake, said before anything starts.
fn check_dump(name: &str, path: &std::path::Path) -> PyResult<()> {
    if path.is_file() {
        return Ok(());
    }
    Err(invalid_parameter(
        name,
        &format!("{}: no such dump file", path.display()),
    ))
}

fn dump_error(error: DumpError) -> PyErr {
    match error {
        DumpError::Io { .. } => PyOSError::new_err(error.to_string()),
        other => wikisuggest_error(&other.to_string()),
    }
}

/// What a run starts with: the engine, the dump, the pass options and the run's options.
type Prepared = (
    Arc<wikisuggest_engine::Engine>,
    PathBuf,
    RecommendOptions,
    DumpRunOptions,
);

/// The link rows of a dump's articles, a batch at a time (see `DumpRun`): checked when made,
/// started by `start` from where an earlier run stopped.
#[pyclass(module = "wikisuggest._native", frozen)]
pub struct NativeDumpRows {
    ready: Mutex<Option<Prepared>>,
    run: Mutex<Option<Arc<DumpRun>>>,
}

fn batch_tuple<'py>(py: Python<'py>, last: bool, batch: RowBatch) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("rows", NativeArrowBatch { batch: batch.rows })?;
    out.set_item("pages", batch.pages)?;
    out.set_item("links", batch.links)?;
    out.set_item("errors", batch.errors)?;
    out.set_item("position", batch.position)?;
    out.set_item("last", last)?;
    Ok(out)
}

impl NativeDumpRows {
    /// The run, once `start` has begun it.
    fn started(&self) -> PyResult<Arc<DumpRun>> {
        self.run
            .lock()
            .ok()
            .and_then(|run| run.clone())
            .ok_or_else(|| wikisuggest_error("this run was not started"))
    }
}

#[pymethods]
impl NativeDumpRows {
    /// A run over the articles of `path` (main namespace, no redirects), recommending links
    /// with `engine` and `options` (the engine's pass options) on `workers` threads: every
    /// argument checked here, before the caller prepares anything; `start` begins it.
    #[new]
    #[pyo3(signature = (engine, path, options, *, wiki_db, pages_per_batch, rows_per_batch, workers, max_page_bytes))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        engine: &NativeEngine,
        path: PathBuf,
        options: OptionArgs,
        wiki_db: String,
        pages_per_batch: i64,
        rows_per_batch: i64,
        workers: Option<i64>,
        max_page_bytes: i64,
    ) -> PyResult<Self> {
        let recommend = options.validate(py)?;
        let pages_per_batch = at_least_one("pages_per_part", pages_per_batch)?;
        let rows_per_batch = at_least_one_size("rows_per_part", rows_per_batch)?;
        let max_page_bytes = at_least_one_size("max_page_bytes", max_page_bytes)?;
        let workers = workers
            .map(|n| at_least_one_size("workers", n))
            .transpose()?;
        check_dump("dump", &path)?;
        let options = DumpRunOptions {
            wiki_db,
            selection: Selection::articles(),
            pages_per_batch,
            rows_per_batch,
            workers: workers
                .unwrap_or_else(wikisuggest_engine::default_workers)
                .max(1),
            dump: DumpOptions {
                max_page_bytes,
                ..DumpOptions::default()
            },
        };
        Ok(Self {
            ready: Mutex::new(Some((engine.shared(), path, recommend, options))),
            run: Mutex::new(None),
        })
    }

    /// Starts reading after the dump's first `skip_pages` pages (those an earlier run did).
    fn start(&self, skip_pages: u64) -> PyResult<()> {
        let taken = self.ready.lock().ok().and_then(|mut ready| ready.take());
        let Some((engine, path, recommend, mut options)) = taken else {
            return Err(wikisuggest_error("this run was started already"));
        };
        options.selection.skip_pages = skip_pages;
        let run = DumpRun::start(engine, path, recommend, options)
            .map_err(|e| PyOSError::new_err(format!("cannot start the dump reader: {e}")))?;
        if let Ok(mut slot) = self.run.lock() {
            *slot = Some(Arc::new(run));
        }
        Ok(())
    }

    /// The next batch as a dict: `rows` (for `pyarrow.record_batch`), `pages`, `links`,
    /// `errors`, `position` (dump pages read up to its last page) and `last` (the dump has
    /// been read to its end). `None` after the last. Raises when the dump cannot be read
    /// further (after every batch before the failure), and on Ctrl-C.
    fn next_batch<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let run = self.started()?;
        let Some(event) = wait_interruptibly(py, |interval| run.next(interval))? else {
            return Ok(None);
        };
        match event {
            RunEvent::Batch(batch) => batch_tuple(py, false, batch).map(Some),
            RunEvent::Last(batch) => batch_tuple(py, true, batch).map(Some),
            RunEvent::Failed(error) => Err(dump_error(error)),
            RunEvent::Broken(reason) => Err(wikisuggest_error(&reason)),
        }
    }

    /// Stops the run at once: no page starts any more (pages running finish in the
    /// background); `next_batch` then returns `None`.
    fn close(&self) {
        if let Ok(run) = self.started() {
            run.stop();
        }
    }
}

/// The link rows of an Arrow batch of pages, a chunk of rows at a time.
#[pyclass(module = "wikisuggest._native", frozen)]
pub struct NativeRowChunks {
    pages: Arc<ArrowPages>,
    engines: Arc<Engines>,
    options: Arc<wikisuggest_engine::RecommendOptions>,
    chunks: std::sync::Mutex<std::vec::IntoIter<std::ops::Range<usize>>>,
}

#[pymethods]
impl NativeRowChunks {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The rows of the next chunk, computed on a thread of its own while this one waits
    /// interruptibly.
    fn __next__(&self, py: Python<'_>) -> PyResult<NativeArrowBatch> {
        let next = self
            .chunks
            .lock()
            .map_err(|_| wikisuggest_error("the row chunks failed earlier"))?
            .next();
        let Some(range) = next else {
            return Err(PyStopIteration::new_err(()));
        };
        let (pages, engines, options) = (
            self.pages.clone(),
            self.engines.clone(),
            self.options.clone(),
        );
        let worker = Worker::spawn("wikisuggest-rows", move || {
            pages.link_rows(range, &engines, &options)
        })?;
        let batch = worker
            .wait(py)?
            .map_err(|e| wikisuggest_error(&format!("internal error: link rows: {e}")))?;
        Ok(NativeArrowBatch { batch })
    }
}

/// The link rows of `pages` (an Arrow record batch with columns `wiki_db`, `page_id`,
/// `revision_id`, `page_title`, `wikitext`): each page on the engine of its wiki in
/// `engines`, or the error row in `refused` for a wiki whose dataset cannot be used, with the
/// engine's pass `options`; in chunks of about `chunk_bytes` of wikitext.
#[pyfunction]
#[pyo3(signature = (pages, engines, refused, options, chunk_bytes))]
pub fn link_rows(
    py: Python<'_>,
    pages: &Bound<'_, PyAny>,
    engines: std::collections::HashMap<String, PyRef<'_, NativeEngine>>,
    refused: std::collections::HashMap<String, String>,
    options: OptionArgs,
    chunk_bytes: usize,
) -> PyResult<NativeRowChunks> {
    let options = options.validate(py)?;
    if chunk_bytes == 0 {
        return Err(invalid_parameter("chunk_bytes", "must be at least 1"));
    }
    let batch = import_batch(pages)?;
    let pages = ArrowPages::new(batch).map_err(|e| invalid_parameter("pages", &e.to_string()))?;
    let mut known = Engines::new();
    for (wiki, engine) in engines {
        known.insert(wiki, engine.shared());
    }
    for (wiki, error) in refused {
        known.refuse(wiki, error);
    }
    let chunks = pages.chunks(chunk_bytes);
    Ok(NativeRowChunks {
        pages: Arc::new(pages),
        engines: Arc::new(known),
        options: Arc::new(options),
        chunks: std::sync::Mutex::new(chunks.into_iter()),
    })
}

/// What a change of rules does to the links of `pages` (a dump's path, of which the first
/// `sample` articles, or a list of engine pages): each page under `before` and under `after`
/// (the engine's pass options of each), compared natively on `workers` threads per rule set,
/// waited for interruptibly (Ctrl-C stops the pages). A dict: `pages`, `links_before`,
/// `links_after`, `changes` (`(page_title, change, rule, value, link, pageid)`), `lost_last`,
/// `gained_first` and `errors` (title → `Class: message`).
#[pyfunction]
#[pyo3(signature = (engine, pages, before, after, *, sample, workers))]
pub fn rules_preview<'py>(
    py: Python<'py>,
    engine: &NativeEngine,
    pages: &Bound<'py, PyAny>,
    before: OptionArgs,
    after: OptionArgs,
    sample: Option<i64>,
    workers: Option<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    let (before, after) = (before.validate(py)?, after.validate(py)?);
    let sample = sample.map(|n| at_least_one("sample", n)).transpose()?;
    let workers = workers
        .map(|n| at_least_one_size("workers", n))
        .transpose()?;
    let pages = if let Ok(path) = pages.extract::<PathBuf>() {
        check_dump("pages", &path)?;
        PreviewPages::Dump {
            path,
            sample,
            dump: DumpOptions::default(),
        }
    } else {
        let given: Vec<crate::engine_page::PageArgs> = pages.extract()?;
        let take = sample.map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
        PreviewPages::Given(given.into_iter().take(take).map(Into::into).collect())
    };
    let engine = engine.shared();
    let workers = workers.unwrap_or_else(wikisuggest_engine::default_workers);
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    let worker = Worker::spawn("wikisuggest-preview", move || {
        wikisuggest_linkrows::preview_rules(&engine, pages, before, after, workers, &stopping)
    })?;
    let report = match worker.wait(py) {
        Ok(report) => report.map_err(dump_error)?,
        Err(interrupted) => {
            stop.store(true, Ordering::SeqCst);
            return Err(interrupted);
        }
    };
    preview_to_py(py, report)
}

fn preview_to_py(
    py: Python<'_>,
    report: wikisuggest_linkrows::RulesPreview,
) -> PyResult<Bound<'_, PyDict>> {
    let records: Vec<_> = report.changes.iter().map(|c| c.link.clone()).collect();
    let links = crate::convert::links(py, &records)?;
    let changes = (report.changes.iter())
        .zip(links)
        .map(|(c, link)| {
            (
                c.page_title.as_str(),
                c.change.as_str(),
                c.rule.as_str(),
                c.value.as_str(),
                link,
                c.pageid,
            )
                .into_pyobject(py)
        })
        .collect::<PyResult<Vec<_>>>()?;
    let out = PyDict::new(py);
    out.set_item("pages", report.pages)?;
    out.set_item("links_before", report.links_before)?;
    out.set_item("links_after", report.links_after)?;
    out.set_item("changes", changes)?;
    out.set_item("lost_last", report.lost_last)?;
    out.set_item("gained_first", report.gained_first)?;
    let errors = PyDict::new(py);
    for (title, error) in report.errors {
        errors.set_item(title, error)?;
    }
    out.set_item("errors", errors)?;
    Ok(out)
}

/// An empty batch of link rows: its schema is the rows' schema.
#[pyfunction]
pub fn link_rows_schema() -> NativeArrowBatch {
    NativeArrowBatch {
        batch: RecordBatch::new_empty(wikisuggest_linkrows::schema()),
    }
}

/// Registers the whole-wiki row entries.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeArrowBatch>()?;
    m.add_class::<NativeDumpRows>()?;
    m.add_class::<NativeRowChunks>()?;
    m.add_function(wrap_pyfunction!(link_rows, m)?)?;
    m.add_function(wrap_pyfunction!(link_rows_schema, m)?)?;
    m.add_function(wrap_pyfunction!(rules_preview, m)?)?;
    m.add("LINK_ROWS_SPARK_DDL", wikisuggest_linkrows::spark_ddl())?;
    Ok(())
}
