//! `NativeEngine`: the local link engine. Arguments are extracted while attached, the engine
//! runs detached from the interpreter, and results become the same `wikisuggest.records`
//! records the HTTP client returns (through the engine's one mapping to the wire records).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use wikisuggest_engine::{
    BatchStream, Dataset, DatasetSource, Engine, LinkOptions, LinkRecommendationSet, MentionScores,
    NativeOpenOptions, Page, RecommendOptions, default_workers,
};

use crate::call::NativeCall;
use crate::contract::positive_seconds;
use crate::engine_batch::NativeEngineBatch;
use crate::engine_page::{PageArgs, set_to_py};
use crate::errors::{engine_error, invalid_parameter};
use crate::rules::NativeLinkRules;

/// How long a blocking call runs a page on the calling thread before it hands the page to a
/// worker thread, where Ctrl-C can interrupt the wait: most pages end within a few
/// milliseconds, and the two hand-overs cost the process about 50 µs of CPU; a page that
/// takes longer starts again on the worker, having cost this much more, and a Ctrl-C is
/// answered within it. `FIRST_TRY_VARIABLE` sets another bound for the process.
const FIRST_TRY: Duration = Duration::from_millis(100);

/// The environment variable that replaces [`FIRST_TRY`] (seconds; `0`: every page goes to the
/// worker), read once: for a profiler that slows every page a hundredfold, under which the
/// bound would send every page to the worker after a wasted first try.
const FIRST_TRY_VARIABLE: &str = "WIKISUGGEST_FIRST_TRY";

/// One page's call: tried first on the calling thread (when sent blocking), then run.
struct Call {
    engine: Arc<Engine>,
    page: Page,
    options: RecommendOptions,
    /// When the first try started, if there was one.
    tried: OnceLock<Instant>,
}

impl Call {
    /// The page's answer if it ends within `bound`.
    fn try_within(
        &self,
        bound: Duration,
    ) -> Option<wikisuggest_engine::Result<LinkRecommendationSet>> {
        let _ = self.tried.set(Instant::now());
        (self.engine).recommend_page_within(&self.page, &self.options, bound)
    }

    /// The page's answer, within what is left of its time budget after any first try.
    fn run(&self) -> wikisuggest_engine::Result<LinkRecommendationSet> {
        let Some(tried) = self.tried.get() else {
            return self.engine.recommend_page(&self.page, &self.options);
        };
        let left = RecommendOptions {
            time_budget: (self.options.time_budget).map(|b| b.saturating_sub(tried.elapsed())),
            ..self.options.clone()
        };
        self.engine.recommend_page(&self.page, &left)
    }
}

/// A page's result as its Python record (with `explain`, what the rules removed too).
fn record_of(
    explain: bool,
) -> impl for<'py> FnOnce(Python<'py>, LinkRecommendationSet) -> PyResult<Bound<'py, PyAny>>
+ Clone
+ Send
+ 'static {
    move |py, set| set_to_py(py, set, explain)
}

/// [`FIRST_TRY`], or the process's own bound (see [`FIRST_TRY_VARIABLE`]).
fn first_try() -> PyResult<Duration> {
    static BOUND: OnceLock<Result<Duration, String>> = OnceLock::new();
    let bound = BOUND.get_or_init(|| {
        let Some(value) = std::env::var_os(FIRST_TRY_VARIABLE) else {
            return Ok(FIRST_TRY);
        };
        value
            .to_str()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
            .ok_or_else(|| format!("{value:?} is not a number of seconds, 0 or more"))
    });
    bound
        .clone()
        .map_err(|message| invalid_parameter(FIRST_TRY_VARIABLE, &message))
}

#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeEngine {
    engine: Arc<Engine>,
}

/// The options shared by the pages of one call, as the Python layer passes them (a dict).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct OptionArgs {
    language_code: Option<String>,
    threshold: f64,
    max_recommendations: i64,
    sections_to_exclude: Vec<String>,
    time_budget: Option<f64>,
    rules: Option<Py<NativeLinkRules>>,
}

impl OptionArgs {
    /// The engine's options, checked by [`RecommendOptions::validate`] (the client's own
    /// rules, so a value one path refuses the other refuses too).
    pub(crate) fn validate(self, py: Python<'_>) -> PyResult<RecommendOptions> {
        let options = RecommendOptions {
            link: LinkOptions {
                language_code: self.language_code,
                threshold: self.threshold,
                max_recommendations: self.max_recommendations,
                sections_to_exclude: self.sections_to_exclude,
            },
            time_budget: self
                .time_budget
                .map(|s| positive_seconds("time_budget", s))
                .transpose()?,
            rules: self.rules.map(|r| r.get().inner.clone()),
            ..RecommendOptions::default()
        };
        options.validate().map_err(|e| engine_error(py, &e))?;
        Ok(options)
    }
}

fn source_name(source: &DatasetSource) -> (&'static str, Option<String>) {
    match source {
        DatasetSource::Native(p) => ("native", Some(p.display().to_string())),
        DatasetSource::Published(p) => ("published", Some(p.display().to_string())),
        DatasetSource::Sqlite(p) => ("sqlite", Some(p.display().to_string())),
        _ => ("memory", None),
    }
}

fn scores_to_py<'py>(py: Python<'py>, scores: &MentionScores) -> PyResult<Bound<'py, PyAny>> {
    let rows = scores
        .candidates
        .iter()
        .map(|c| {
            let d = PyDict::new(py);
            d.set_item("title", &c.title)?;
            d.set_item("count", c.count)?;
            let f = &c.features;
            let features = PyDict::new(py);
            for (name, value) in [
                ("ngram", f.ngram),
                ("freq", f.freq),
                ("ambig", f.ambig),
                ("kurtosis", f.kurtosis),
                ("w2v", f.w2v),
                ("jaro", f.jaro),
                ("wiki", f.wiki),
            ] {
                features.set_item(name, value)?;
            }
            d.set_item("features", features)?;
            d.set_item("probability", f64::from(c.probability))?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, rows)?.into_any())
}

impl NativeEngine {
    /// The engine, for native entries that run it themselves.
    pub(crate) fn shared(&self) -> Arc<Engine> {
        self.engine.clone()
    }
}

#[pymethods]
impl NativeEngine {
    /// Opens a dataset directory (native, published or legacy SQLite) or a native file.
    #[staticmethod]
    #[pyo3(signature = (path, wiki_id, application_version, verify))]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        wiki_id: String,
        application_version: String,
        verify: bool,
    ) -> PyResult<Self> {
        let options = NativeOpenOptions {
            verify,
            ..NativeOpenOptions::default()
        };
        let opened = py.detach(|| {
            if path.is_file() {
                let ds = Dataset::open_native_with(&path, &options)?;
                if ds.wiki_id() != wiki_id {
                    return Err(wikisuggest_engine::Error::InvalidArgument(format!(
                        "{} holds wiki {:?}, not {wiki_id:?}",
                        path.display(),
                        ds.wiki_id()
                    )));
                }
                Ok(Engine::new(ds))
            } else {
                Dataset::open_with(&path, &wiki_id, &options).map(Engine::new)
            }
        });
        let engine = opened
            .map_err(|e| engine_error(py, &e))?
            .with_application_version(application_version);
        Ok(Self {
            engine: Arc::new(engine),
        })
    }

    /// Wiki id, provenance, sizes and checksums.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let info = self.engine.info();
        let d = PyDict::new(py);
        d.set_item("wiki_id", &info.wiki_id)?;
        let (kind, path) = source_name(&info.source);
        d.set_item("source", kind)?;
        d.set_item("path", path)?;
        d.set_item("titles", info.titles)?;
        d.set_item("pages", info.pages)?;
        d.set_item("redirects", info.redirects)?;
        d.set_item("vectors", info.vectors)?;
        d.set_item("dim", info.dim)?;
        d.set_item("anchors", info.anchors)?;
        d.set_item("candidates", info.candidates)?;
        d.set_item("model_trees", info.model_trees)?;
        let sums = PyDict::new(py);
        for (k, v) in self.engine.dataset().checksums().to_map() {
            sums.set_item(k, v)?;
        }
        d.set_item("checksums", sums)?;
        d.set_item("language_code", self.engine.default_language())?;
        Ok(d)
    }

    /// Features and probability of each classification candidate, or `None`.
    #[pyo3(signature = (page_title, mention, language_code))]
    fn score<'py>(
        &self,
        py: Python<'py>,
        page_title: String,
        mention: String,
        language_code: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let engine = self.engine.clone();
        let found = py.detach(|| engine.score(&page_title, &mention, language_code.as_deref()));
        match found.map_err(|e| engine_error(py, &e))? {
            Some(scores) => scores_to_py(py, &scores),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// One page with `options`, as a call sent blocking or awaited (with `explain`, what the
    /// rules removed too: see `set_to_py`). Sent blocking, the page runs on the calling
    /// thread for up to [`FIRST_TRY`], then (if it has not ended) again on the caller's own
    /// worker thread, where the caller can interrupt it; awaited, on the runtime's blocking
    /// pool.
    #[pyo3(signature = (page, options, explain=false))]
    fn recommend(
        &self,
        py: Python<'_>,
        page: PageArgs,
        options: OptionArgs,
        explain: bool,
    ) -> PyResult<NativeCall> {
        let options = options.validate(py)?;
        let first_try = first_try()?;
        let convert = record_of(explain);
        let call = Arc::new(Call {
            engine: self.engine.clone(),
            page: Page::from(page),
            options,
            tried: OnceLock::new(),
        });
        if first_try.is_zero() {
            return Ok(NativeCall::blocking(move || call.run(), convert));
        }
        let tried = call.clone();
        Ok(NativeCall::blocking_tried_first(
            move || tried.try_within(first_try),
            move || call.run(),
            convert,
        ))
    }

    /// A batch of pages on `workers` threads (all cores when `None`), items in input order;
    /// see `NativeEngineBatch` (with `explain`, items as `recommend` gives them).
    #[pyo3(signature = (workers, options, explain=false))]
    fn batch(
        &self,
        py: Python<'_>,
        workers: Option<usize>,
        options: OptionArgs,
        explain: bool,
    ) -> PyResult<NativeEngineBatch> {
        let opts = options.validate(py)?;
        let workers = workers.unwrap_or_else(default_workers).max(1);
        let stream = BatchStream::new(self.engine.clone(), opts, workers)
            .map_err(|e| engine_error(py, &e))?;
        Ok(NativeEngineBatch::new(stream, explain))
    }

    /// Every distinct candidate target of the dataset's anchors (the pages it can link to),
    /// sorted.
    fn link_targets(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let engine = self.engine.clone();
        py.detach(|| {
            let mut seen = std::collections::BTreeSet::new();
            engine.dataset().for_each_anchor(|_, candidates| {
                for c in candidates {
                    if !seen.contains(c.title) {
                        seen.insert(c.title.to_owned());
                    }
                }
                Ok(())
            })?;
            Ok(seen.into_iter().collect())
        })
        .map_err(|e| engine_error(py, &e))
    }

    /// Recomputes the native image's checksum (reads it whole).
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        let engine = self.engine.clone();
        py.detach(|| engine.dataset().verify())
            .map_err(|e| engine_error(py, &e))
    }

    #[getter]
    fn wiki_id(&self) -> String {
        self.engine.dataset().wiki_id().to_owned()
    }

    fn __repr__(&self) -> String {
        let info = self.engine.info();
        format!(
            "NativeEngine(wiki_id={:?}, anchors={}, pages={})",
            info.wiki_id, info.anchors, info.pages
        )
    }
}
