//! Binding of the dataset builder (`wikisuggest-build`): the Rust steps of
//! `wikisuggest.build`. Each long step runs on a [`Worker`] thread that the caller waits for
//! interruptibly, so Ctrl-C works during every one of them. Training itself happens in
//! Python (XGBoost), between [`NativeDatasetBuild::training_rows`] and
//! [`NativeDatasetBuild::write`].

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use wikisuggest_build::{
    BuildError, BuildOptions, Embedding, Scan, Split, WordVectors, backtest, backtest_against,
    scan, set_vectors, training_rows, write_outputs,
};
use wikisuggest_engine::{Dataset, Engine};

use crate::errors::{build_error, wikisuggest_error};
use crate::runtime::Worker;

/// Runs one build step on the scan, on a thread of its own, and waits for it
/// interruptibly. After Ctrl-C the step goes on holding the scan; a later step finds it
/// busy and says so rather than waiting without end.
fn step<T: Send + 'static>(
    py: Python<'_>,
    scan: &Arc<Mutex<Scan>>,
    name: &str,
    work: impl FnOnce(&mut Scan) -> Result<T, BuildError> + Send + 'static,
) -> PyResult<T> {
    let scan = scan.clone();
    Worker::spawn(name, move || match scan.try_lock() {
        Ok(mut scan) => work(&mut scan).map_err(Some),
        Err(_) => Err(None),
    })?
    .wait(py)?
    .map_err(|error| match error {
        Some(error) => build_error(error),
        None => busy(),
    })
}

fn busy() -> PyErr {
    wikisuggest_error("the scan is busy: an interrupted build step is still running, or one failed")
}

/// The feature rows as little-endian float32 `bytes`, without holding two copies of the
/// largest buffer of the build (9.8 GB at the default training cap on enwiki-shaped
/// articles): the object is allocated uninitialised, so its pages are untouched, and is
/// filled from the end while the vector is shortened behind the copy, which returns the
/// freed tail to the system (a large allocation lives in its own mapping, and shrinking it
/// unmaps pages). The peak is one copy plus one chunk.
fn features_bytes(py: Python<'_>, mut features: Vec<f32>) -> PyResult<Bound<'_, PyBytes>> {
    const CHUNK: usize = 1 << 22; // values per step: 16 MB
    let len = features
        .len()
        .checked_mul(4)
        .and_then(|n| isize::try_from(n).ok())
        .ok_or_else(|| PyValueError::new_err("training rows exceed the address space"))?;
    // SAFETY: the GIL is held; a NULL source asks for an uninitialised object of `len`
    // bytes, returned as a new reference or NULL with an exception set.
    let bytes = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PyBytes_FromStringAndSize(std::ptr::null(), len))?
    };
    // SAFETY: `bytes` is a fresh bytes object of `len` bytes that no other code has seen;
    // its buffer is writable until it is handed out.
    let out = unsafe { ffi::PyBytes_AsString(bytes.as_ptr()) }.cast::<u8>();
    if out.is_null() {
        return Err(PyErr::fetch(py));
    }
    while !features.is_empty() {
        let start = features.len().saturating_sub(CHUNK);
        for (i, v) in features.iter().enumerate().skip(start) {
            let le = v.to_le_bytes();
            // SAFETY: `i < features.len() <= len / 4`, so the four bytes at `4 * i` lie
            // inside the object's buffer, which nothing else references yet.
            unsafe { std::ptr::copy_nonoverlapping(le.as_ptr(), out.add(4 * i), 4) };
        }
        features.truncate(start);
        features.shrink_to_fit();
    }
    Ok(bytes.cast_into::<PyBytes>()?)
}

fn split(holdout_fraction: f64, max_train_articles: usize, max_test_articles: usize) -> Split {
    Split {
        holdout_fraction,
        max_train_articles,
        max_test_articles,
    }
}

/// A scanned dump: its tables, ready for embeddings, training rows and writing.
#[pyclass(module = "wikisuggest._native", frozen)]
pub struct NativeDatasetBuild {
    scan: Arc<Mutex<Scan>>,
}

#[pymethods]
impl NativeDatasetBuild {
    /// Scans `dump` (two streaming passes). With `exclude_held_out`, the articles that
    /// share of the split holds out do not feed the anchors or the link graph.
    #[new]
    // One argument per build option: the Python side passes them positionally.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (dump, wiki_id, language_code, min_link_probability, min_link_count, keep_missing_targets, exclude_held_out=None))]
    fn new(
        py: Python<'_>,
        dump: PathBuf,
        wiki_id: &str,
        language_code: &str,
        min_link_probability: f64,
        min_link_count: u64,
        keep_missing_targets: bool,
        exclude_held_out: Option<f64>,
    ) -> PyResult<Self> {
        let mut options = BuildOptions::new(wiki_id, language_code);
        options.min_link_probability = min_link_probability;
        options.min_link_count = min_link_count;
        options.keep_missing_targets = keep_missing_targets;
        options.held_out = exclude_held_out.map(|f| split(f, usize::MAX, usize::MAX));
        // The scan reads the whole dump: it runs on a worker so Ctrl-C interrupts the wait
        // (the abandoned scan ends with the process, or is dropped when it finishes).
        let scan = Worker::spawn("wikisuggest-scan", move || scan(&dump, &options))?
            .wait(py)?
            .map_err(build_error)?;
        Ok(Self {
            scan: Arc::new(Mutex::new(scan)),
        })
    }

    /// Counts of the scan and the tables.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let scan = self.lock()?;
        let s = &scan.stats;
        let tables = &scan.tables;
        let counts = [
            ("articles", s.articles),
            ("redirects", s.redirects),
            ("links", s.links),
            ("link_anchors", s.link_anchors),
            ("anchors", s.anchors),
            ("anchor_targets", s.pairs),
            ("pageids", tables.pageids.len() as u64),
            ("vectors", tables.vectors.keys.len() as u64),
        ];
        let d = PyDict::new(py);
        for (name, count) in counts {
            d.set_item(name, count)?;
        }
        Ok(d)
    }

    /// Title vectors = mean of these word vectors (`data`: little-endian float32,
    /// `len(words) × dim`).
    fn set_word_vectors(
        &self,
        py: Python<'_>,
        words: Vec<String>,
        dim: usize,
        data: &[u8],
    ) -> PyResult<()> {
        let values: Vec<f32> = data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let words = WordVectors::new(words, dim, values).map_err(build_error)?;
        step(py, &self.scan, "wikisuggest-vectors", move |scan| {
            set_vectors(scan, &Embedding::WordVectors(words))
        })
    }

    /// Title vectors from the link graph.
    fn set_link_graph_vectors(&self, py: Python<'_>, dim: usize, seed: u64) -> PyResult<()> {
        step(py, &self.scan, "wikisuggest-vectors", move |scan| {
            set_vectors(scan, &Embedding::LinkGraph { dim, seed })
        })
    }

    /// Labelled feature rows of the training articles: `(features, labels, articles,
    /// mentions)`, features as little-endian float32 bytes (7 per row), labels as bytes.
    fn training_rows<'py>(
        &self,
        py: Python<'py>,
        holdout_fraction: f64,
        max_train_articles: usize,
        max_test_articles: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>, u64, u64)> {
        let s = split(holdout_fraction, max_train_articles, max_test_articles);
        let rows = step(py, &self.scan, "wikisuggest-training-rows", move |scan| {
            training_rows(scan, &s)
        })?;
        let features = features_bytes(py, rows.features)?;
        Ok((
            features,
            PyBytes::new(py, &rows.labels),
            rows.articles,
            rows.mentions,
        ))
    }

    /// Writes the published files and the native file with `model_json` into `out_dir`;
    /// returns `(checksums, native path)`.
    fn write<'py>(
        &self,
        py: Python<'py>,
        out_dir: PathBuf,
        model_json: &[u8],
    ) -> PyResult<(Bound<'py, PyDict>, PathBuf)> {
        let model_json = model_json.to_vec();
        let out = step(py, &self.scan, "wikisuggest-write", move |scan| {
            write_outputs(scan, &out_dir, &model_json)
        })?;
        let d = PyDict::new(py);
        for (k, v) in out.checksums.to_map() {
            d.set_item(k, v)?;
        }
        Ok((d, out.native))
    }
}

impl NativeDatasetBuild {
    fn lock(&self) -> PyResult<MutexGuard<'_, Scan>> {
        self.scan.try_lock().map_err(|_| busy())
    }
}

/// `(threshold, recommended, expected, correct)` per threshold, and the article count.
type BacktestResult = (Vec<(f64, u64, u64, u64)>, u64);

/// Backtests the dataset of `wiki_id` in `data_dir` on the held-out articles of `dump`:
/// a list of `(threshold, recommended, expected, correct)` and the article count. With
/// `reference_dir`, the articles' links are resolved against that dataset instead.
#[pyfunction]
#[pyo3(signature = (dump, data_dir, wiki_id, language_code, thresholds, holdout_fraction, max_test_articles, reference_dir=None))]
#[allow(clippy::too_many_arguments)]
pub fn backtest_dataset(
    py: Python<'_>,
    dump: PathBuf,
    data_dir: PathBuf,
    wiki_id: &str,
    language_code: &str,
    thresholds: Vec<f64>,
    holdout_fraction: f64,
    max_test_articles: usize,
    reference_dir: Option<PathBuf>,
) -> PyResult<BacktestResult> {
    let s = split(holdout_fraction, usize::MAX, max_test_articles);
    let (wiki_id, language_code) = (wiki_id.to_owned(), language_code.to_owned());
    let result = Worker::spawn("wikisuggest-backtest", move || {
        let engine = Engine::open(&data_dir, &wiki_id)?;
        match &reference_dir {
            Some(dir) => {
                let reference = Dataset::open(dir, &wiki_id)?;
                backtest_against(&dump, &engine, &reference, &language_code, &s, &thresholds)
            }
            None => backtest(&dump, &engine, &language_code, &s, &thresholds),
        }
    })?
    .wait(py)?
    .map_err(build_error)?;
    let points = result
        .points
        .iter()
        .map(|p| (p.threshold, p.recommended, p.expected, p.correct))
        .collect();
    Ok((points, result.articles))
}

/// The wiki a dump says it is of (its `<dbname>`), or `None`: only its head is read.
#[pyfunction]
pub fn dump_wiki(py: Python<'_>, dump: PathBuf) -> PyResult<Option<String>> {
    Worker::spawn("wikisuggest-dump-head", move || {
        wikisuggest_build::dump::dump_wiki(&dump)
    })?
    .wait(py)?
    .map_err(build_error)
}

/// Registers the builder's classes and functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeDatasetBuild>()?;
    m.add_function(wrap_pyfunction!(backtest_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(dump_wiki, m)?)?;
    Ok(())
}
