//! Binding of the translation engine (`wikisuggest-translation`): a catalog opened for
//! answering (`NativeTranslationEngine`, whose calls go through the one `NativeCall` door and
//! run without the interpreter), and the catalog and collection builds, each on a
//! [`Worker`] waited for interruptibly (Ctrl-C stops the build at its next check and leaves
//! no half-written catalog).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use wikisuggest_translation::build::{BuildOptions, Progress, Provenance, SourceFile};
use wikisuggest_translation::engine::Request;
use wikisuggest_translation::gaps::{GapRequest, OrderBy};
use wikisuggest_translation::seed::SimilarOptions;
use wikisuggest_translation::sources::meta::{MetaSources, build_collections};
use wikisuggest_translation::{Engine, Sources, SqlSources};

use crate::call::NativeCall;
use crate::client::TranslationArgs;
use crate::errors::{IntoPyErr, translation_error};
use crate::linkrows::NativeArrowBatch;
use crate::runtime::Worker;

impl IntoPyErr for wikisuggest_translation::Error {
    fn into_pyerr(self, _py: Python<'_>) -> PyErr {
        translation_error(self)
    }

    fn internal(message: &str) -> Self {
        Self::Search(message.to_owned())
    }
}

/// A catalog opened for answering.
#[pyclass(module = "wikisuggest._native", frozen)]
pub struct NativeTranslationEngine {
    engine: Arc<Engine>,
}

#[pymethods]
impl NativeTranslationEngine {
    /// Opens the catalog folder `path` (its articles are read into memory, without the
    /// interpreter).
    #[staticmethod]
    fn open(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let worker = Worker::spawn("wikisuggest-catalog", move || Engine::open(&path))?;
        let engine = worker.wait(py)?.map_err(translation_error)?;
        Ok(Self {
            engine: Arc::new(engine),
        })
    }

    /// The catalog's `catalog.json`, as JSON text.
    fn manifest(&self) -> PyResult<String> {
        serde_json::to_string(&self.engine.catalog().manifest)
            .map_err(|e| crate::errors::wikisuggest_error(&e.to_string()))
    }

    /// Articles in the catalog.
    fn __len__(&self) -> usize {
        self.engine.catalog().len()
    }

    /// One page of recommendations (a `TranslationPage`), as production's service answers.
    #[pyo3(signature = (args, random_seed=None, follow_redirects=false))]
    fn recommend(
        &self,
        args: TranslationArgs,
        random_seed: Option<u64>,
        follow_redirects: bool,
    ) -> NativeCall {
        let engine = Arc::clone(&self.engine);
        NativeCall::blocking(
            move || {
                let params = args.params().map_err(|e| {
                    wikisuggest_translation::Error::InvalidParameter {
                        parameter: "params".to_owned(),
                        message: e.to_string(),
                    }
                })?;
                engine.page(&Request {
                    params,
                    random_seed,
                    follow_redirects,
                })
            },
            |py, page| crate::convert::translation_page(py, &page),
        )
    }

    /// Articles like `seeds` (`morelike`): `(title, score)` pairs, best first. `None`
    /// keeps the wiki's morelike parameter.
    #[pyo3(signature = (seeds, limit, *, min_term_freq, min_doc_freq, max_query_terms, minimum_should_match))]
    fn similar(
        &self,
        seeds: Vec<String>,
        limit: usize,
        min_term_freq: Option<u32>,
        min_doc_freq: Option<u32>,
        max_query_terms: Option<u32>,
        minimum_should_match: Option<String>,
    ) -> NativeCall {
        let engine = Arc::clone(&self.engine);
        let options = SimilarOptions {
            min_term_freq,
            min_doc_freq,
            max_query_terms,
            minimum_should_match,
        };
        NativeCall::blocking(
            move || engine.similar(&seeds, &options, limit),
            |py, hits| pyo3::IntoPyObjectExt::into_bound_py_any(hits, py),
        )
    }

    /// The gap table of `targets` (a record batch through the Arrow PyCapsule interface).
    #[pyo3(signature = (targets, *, topic, country, titles, wikidata_ids, category, min_size, max_size, order_by))]
    #[allow(clippy::too_many_arguments)]
    fn missing(
        &self,
        targets: Vec<String>,
        topic: Vec<String>,
        country: Vec<String>,
        titles: Option<Vec<String>>,
        wikidata_ids: Option<Vec<String>>,
        category: Option<String>,
        min_size: Option<i64>,
        max_size: Option<i64>,
        order_by: String,
    ) -> NativeCall {
        let engine = Arc::clone(&self.engine);
        NativeCall::blocking(
            move || {
                let request = GapRequest {
                    targets,
                    topic,
                    country,
                    titles,
                    wikidata_ids,
                    category,
                    min_size,
                    max_size,
                    order_by: OrderBy::parse(&order_by)?,
                };
                wikisuggest_translation::gaps::missing(engine.catalog(), &request)
            },
            |py, batch| Bound::new(py, NativeArrowBatch::new(batch)).map(Bound::into_any),
        )
    }
}

/// What the Python side hands over to build a catalog.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct CatalogSpec {
    wiki: String,
    page: PathBuf,
    page_props: PathBuf,
    langlinks: PathBuf,
    redirect: PathBuf,
    namespaces: Option<PathBuf>,
    cirrus: Vec<PathBuf>,
    pageviews: Option<PathBuf>,
    collections: Option<PathBuf>,
    memory: usize,
    threads: Option<usize>,
    dump_run: Option<String>,
    cirrus_run: Option<String>,
    pageviews_day: Option<String>,
    collections_run: Option<String>,
    /// (name, size, sha1, md5) of each source file.
    files: Vec<(String, u64, Option<String>, Option<String>)>,
}

/// Calls `progress(phase, done)` between waits.
fn report(py: Python<'_>, progress: Option<&Bound<'_, PyAny>>, state: &Progress) -> PyResult<()> {
    if let (Some(callback), Some((phase, done))) = (progress, state.get()) {
        callback.call1((phase.name(), done))?;
    }
    let _ = py;
    Ok(())
}

/// Builds a catalog into `out`; returns its `catalog.json` as JSON text.
#[pyfunction]
#[pyo3(signature = (spec, out, progress=None))]
pub fn build_translation_catalog(
    py: Python<'_>,
    spec: CatalogSpec,
    out: PathBuf,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    let sources = Sources {
        wiki: spec.wiki,
        sql: SqlSources {
            page: spec.page,
            page_props: spec.page_props,
            langlinks: spec.langlinks,
            redirect: spec.redirect,
            namespaces: spec.namespaces,
        },
        cirrus: spec.cirrus,
        pageviews: spec.pageviews,
        collections: spec.collections,
    };
    let mut options = BuildOptions {
        memory: spec.memory,
        provenance: Provenance {
            dump_run: spec.dump_run,
            cirrus_run: spec.cirrus_run,
            pageviews_day: spec.pageviews_day,
            collections_run: spec.collections_run,
            files: spec
                .files
                .into_iter()
                .map(|(name, size, sha1, md5)| SourceFile {
                    name,
                    size,
                    sha1,
                    md5,
                })
                .collect(),
        },
        ..BuildOptions::default()
    };
    if let Some(threads) = spec.threads {
        options.threads = threads.max(1);
    }
    let state = Arc::clone(&options.progress);
    let cancel = Arc::clone(&options.cancel);
    let worker = Worker::spawn("wikisuggest-catalog-build", move || {
        wikisuggest_translation::build(&sources, &out, &options)
    })?;
    let waited = worker.wait_reporting(py, |py| report(py, progress.as_ref(), &state));
    match waited {
        Ok(Ok(manifest)) => serde_json::to_string(&manifest)
            .map_err(|e| crate::errors::wikisuggest_error(&e.to_string())),
        Ok(Err(error)) => Err(translation_error(error)),
        Err(interrupted) => {
            // Stop the build and let it remove its work files before raising.
            cancel.store(true, Ordering::Relaxed);
            py.detach(|| worker.wait_for(Duration::from_secs(30)));
            Err(interrupted)
        }
    }
}

/// Builds `collections.parquet` at `out` from Meta-Wiki's pages and interwiki links and
/// Wikidata's sitelinks; returns the number of collections.
#[pyfunction]
pub fn build_translation_collections(
    py: Python<'_>,
    pages_articles: PathBuf,
    iwlinks: PathBuf,
    items_per_site: PathBuf,
    out: PathBuf,
) -> PyResult<u64> {
    let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    let sources = MetaSources {
        pages_articles,
        iwlinks,
        items_per_site,
    };
    let worker = Worker::spawn("wikisuggest-collections", move || {
        build_collections(&sources, &out, &flag)
    })?;
    match worker.wait(py) {
        Ok(result) => result.map_err(translation_error),
        Err(interrupted) => {
            cancel.store(true, Ordering::Relaxed);
            py.detach(|| worker.wait_for(Duration::from_secs(30)));
            Err(interrupted)
        }
    }
}

/// The catalog's part names and the build's phases, for the Python side's checks and bars.
#[pyfunction]
pub fn translation_constants(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("parts", ["sql", "cirrus", "pageviews", "collections"])?;
    out.set_item(
        "domain_mapping",
        pyo3::types::PyDict::from_sequence(
            &pyo3::types::PyList::new(py, wikisuggest_translation::wiki::DOMAIN_MAPPING)?
                .into_any(),
        )?,
    )?;
    out.set_item("format", wikisuggest_translation::schema::FORMAT_VERSION)?;
    out.set_item(
        "max_candidates",
        wikisuggest_translation::engine::MAX_CANDIDATES,
    )?;
    out.set_item(
        "top_list_length",
        wikisuggest_translation::build::TOP_LIST_LENGTH,
    )?;
    Ok(out)
}
