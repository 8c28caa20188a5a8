//! `NativeEngine`: the local link engine. Arguments are extracted while attached, the engine
//! runs detached from the interpreter, and results become the same `wikisuggest.models`
//! records the HTTP client returns.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use wikisuggest_core::models as core;
use wikisuggest_engine::{
    BatchStream, Dataset, DatasetSource, Engine, LinkRecommendationSet, MentionScores,
    NativeOpenOptions, Page, RecommendOptions, default_workers,
};

use crate::errors::{core_error, engine_error, wikisuggest_error};
use crate::runtime::wait_interruptibly;

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
}

impl OptionArgs {
    /// Checked with the client's own rules, so a value one path refuses the other refuses too.
    pub(crate) fn validate(self, py: Python<'_>) -> PyResult<RecommendOptions> {
        wikisuggest_core::params::check_link_options(
            self.threshold,
            self.max_recommendations,
            &self.sections_to_exclude,
        )
        .map_err(|e| core_error(py, e))?;
        let time_budget = match self.time_budget {
            None => None,
            Some(s) => Some(Duration::try_from_secs_f64(s).map_err(|_| {
                crate::errors::invalid_parameter(
                    "time_budget",
                    "must be a non-negative number of seconds",
                )
            })?),
        };
        Ok(RecommendOptions {
            language_code: self.language_code,
            threshold: self.threshold,
            max_recommendations: self.max_recommendations,
            sections_to_exclude: self.sections_to_exclude,
            time_budget,
        })
    }
}

/// The engine's result as the client's model, so both paths share one conversion.
fn to_core(set: LinkRecommendationSet) -> core::LinkRecommendationSet {
    let sums = set.meta.dataset_checksums;
    let links = set
        .links
        .into_iter()
        .map(|l| core::LinkRecommendation {
            link_text: l.link_text,
            link_target: l.link_target,
            score: Some(f64::from(l.score)),
            wikitext_offset: i64::try_from(l.wikitext_offset).ok(),
            context_before: Some(l.context_before),
            context_after: Some(l.context_after),
            link_index: i64::try_from(l.link_index).ok(),
            match_index: i64::try_from(l.match_index).ok(),
            extra: Default::default(),
        })
        .collect::<Vec<_>>();
    core::LinkRecommendationSet {
        links_count: i64::try_from(links.len()).ok(),
        links,
        meta: Some(core::Meta {
            application_version: Some(set.meta.application_version),
            dataset_checksums: Some(core::DatasetChecksums {
                anchors: sums.anchors,
                model: sums.model,
                pageids: sums.pageids,
                redirects: sums.redirects,
                w2vfiltered: sums.w2vfiltered,
                extra: Default::default(),
            }),
            format_version: Some(set.meta.format_version),
            extra: Default::default(),
        }),
        page_title: Some(set.page_title),
        pageid: set.pageid,
        revid: set.revid,
        extra: Default::default(),
    }
}

/// A page of a batch as Python passes it: wikitext, page_title, pageid, revid, language_code.
type PageTuple = (String, String, Option<i64>, Option<i64>, Option<String>);

type EngineResult = wikisuggest_engine::Result<LinkRecommendationSet>;

fn result_to_py<'py>(py: Python<'py>, result: EngineResult) -> PyResult<Bound<'py, PyAny>> {
    match result {
        Ok(set) => crate::convert::link_set(py, &to_core(set)),
        Err(error) => Err(engine_error(py, &error)),
    }
}

/// `(ok, value or exception)`, or `None` for a page that was not started.
fn item_to_py<'py>(py: Python<'py>, item: Option<EngineResult>) -> PyResult<Bound<'py, PyAny>> {
    let Some(result) = item else {
        return Ok(py.None().into_bound(py));
    };
    let (ok, value) = match result {
        Ok(set) => (true, crate::convert::link_set(py, &to_core(set))?),
        Err(error) => (
            false,
            engine_error(py, &error)
                .into_value(py)
                .into_bound(py)
                .into_any(),
        ),
    };
    Ok(PyTuple::new(py, [ok.into_pyobject(py)?.to_owned().into_any(), value])?.into_any())
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

    /// One page, `(wikitext, page_title, pageid, revid, language_code)`, with `options`;
    /// `send_async` awaits it on the shared runtime's blocking pool instead.
    #[pyo3(signature = (page, options, send_async=false))]
    fn recommend<'py>(
        &self,
        py: Python<'py>,
        page: PageTuple,
        options: OptionArgs,
        send_async: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let opts = options.validate(py)?;
        let engine = self.engine.clone();
        let (wikitext, page_title, pageid, revid, language_code) = page;
        let opts = RecommendOptions {
            language_code: language_code.or(opts.language_code),
            ..opts
        };
        let work = move || engine.recommend(&wikitext, &page_title, pageid, revid, &opts);
        if !send_async {
            let result = py.detach(work);
            return result_to_py(py, result);
        }
        let rt = crate::runtime::runtime()?;
        let work = rt.spawn_blocking(work);
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let joined = work.await;
            Python::attach(|py| match joined {
                Ok(result) => result_to_py(py, result).map(Bound::unbind),
                Err(e) => Err(wikisuggest_error(&format!(
                    "internal error: the engine task failed: {e}"
                ))),
            })
        })
    }

    /// A stream of pages on `workers` threads (all cores when `None`), results in input
    /// order; see `NativeBatchStream`.
    #[pyo3(signature = (workers, options))]
    fn stream(
        &self,
        py: Python<'_>,
        workers: Option<usize>,
        options: OptionArgs,
    ) -> PyResult<NativeBatchStream> {
        let opts = options.validate(py)?;
        let workers = workers.unwrap_or_else(default_workers).max(1);
        let stream = BatchStream::new(self.engine.clone(), opts, workers)
            .map_err(|e| engine_error(py, &e))?;
        Ok(NativeBatchStream { stream })
    }

    /// Converts a published (or legacy SQLite) dataset into a native file; returns its path.
    #[staticmethod]
    fn convert(
        py: Python<'_>,
        src_dir: PathBuf,
        wiki_id: String,
        out_dir: PathBuf,
    ) -> PyResult<PathBuf> {
        py.detach(|| wikisuggest_engine::convert(&src_dir, &wiki_id, &out_dir))
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

/// A batch in flight: Python pushes pages (a few per worker ahead of what it has taken) and
/// takes their results in input order as they finish, so the engine's threads never wait for
/// the slowest page of a chunk.
#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeBatchStream {
    stream: BatchStream,
}

#[pymethods]
impl NativeBatchStream {
    /// Queues one page: `(wikitext, page_title, pageid, revid, language_code)`.
    fn push(&self, page: PageTuple) {
        let (wikitext, page_title, pageid, revid, language_code) = page;
        self.stream.push(Page {
            wikitext,
            page_title,
            pageid,
            revid,
            language_code,
        });
    }

    /// Pages pushed whose outcome was not taken yet.
    fn pending(&self) -> u64 {
        self.stream.pending()
    }

    /// Waits (interruptibly, without the interpreter) for the oldest pending page and returns
    /// `(outcomes, interruption)`: its outcome and every later one already finished, each
    /// `(ok, result or exception)`, in input order; `[]` when nothing is pending. If a signal
    /// handler raises (Ctrl-C), no further page starts, the pages running finish, and every
    /// pending page comes back (`None` for those not started) with that exception as
    /// `interruption`.
    fn take<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let stream = &self.stream;
        let mut outcomes = Vec::new();
        let mut waited = Ok(());
        if stream.pending() > 0 {
            match wait_interruptibly(py, |interval| {
                let got = stream.take(interval);
                (!got.is_empty()).then_some(got)
            }) {
                Ok(got) => outcomes = got,
                Err(signal) => waited = Err(signal),
            }
        }
        // A signal that arrived after the last check would otherwise be raised as this call
        // returns, discarding the outcomes it took from the stream.
        let interruption = match waited.and_then(|()| py.check_signals()) {
            Ok(()) => None,
            Err(signal) => {
                stream.stop();
                py.detach(|| {
                    while stream.pending() > 0 {
                        outcomes.extend(stream.take(Duration::from_secs(3600)));
                    }
                });
                Some(signal)
            }
        };
        let items = outcomes
            .into_iter()
            .map(|item| item_to_py(py, item))
            .collect::<PyResult<Vec<_>>>()?;
        let interruption = match interruption {
            Some(e) => e.into_value(py).into_bound(py).into_any(),
            None => py.None().into_bound(py),
        };
        PyTuple::new(py, [PyList::new(py, items)?.into_any(), interruption])
    }

    /// Starts no further page; pages running finish in the background.
    fn close(&self) {
        self.stream.stop();
    }
}
