//! The rules every front end shares, written once in the crates and exported here to Python:
//! the operations' defaults (which the package's signatures, docs and command line read), the
//! one conversion of seconds to a `Duration`, MediaWiki's title rules and the wiki-id rule.

use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMappingProxy, PyTuple};
use wikisuggest_engine::RecommendOptions;
use wikisuggest_records::params::{self, InvalidParameter, LinkOptions, TranslationParams};
use wikisuggest_records::wiki;

use crate::errors::invalid_parameter;

/// A parameter's error as the Python `InvalidParameter` naming it.
pub(crate) fn parameter_error(error: InvalidParameter) -> PyErr {
    invalid_parameter(&error.name, &error.message)
}

/// A number of seconds given from Python (finite, not negative) as a `Duration`.
pub(crate) fn seconds(name: &str, value: f64) -> PyResult<Duration> {
    params::seconds(name, value).map_err(parameter_error)
}

/// [`seconds`] that must be more than zero.
pub(crate) fn positive_seconds(name: &str, value: f64) -> PyResult<Duration> {
    params::positive_seconds(name, value).map_err(parameter_error)
}

/// A read-only view of `entries`, so no caller can change a default for every other.
fn frozen<'py>(py: Python<'py>, entries: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyMappingProxy::new(py, entries.as_mapping()).into_any())
}

fn link_defaults<'py>(py: Python<'py>, options: &LinkOptions) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("language_code", &options.language_code)?;
    d.set_item("threshold", options.threshold)?;
    d.set_item("max_recommendations", options.max_recommendations)?;
    d.set_item(
        "sections_to_exclude",
        PyTuple::new(py, &options.sections_to_exclude)?,
    )?;
    Ok(d)
}

fn translation_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let p = TranslationParams::new("", "");
    let d = PyDict::new(py);
    d.set_item("count", p.count)?;
    d.set_item("seed", PyTuple::new(py, &p.seed)?)?;
    d.set_item("topic", PyTuple::new(py, &p.topic)?)?;
    d.set_item("include_pageviews", p.include_pageviews)?;
    d.set_item("search_algorithm", p.search_algorithm.as_str())?;
    d.set_item("rank_method", p.rank_method.as_str())?;
    d.set_item("country", PyTuple::new(py, &p.country)?)?;
    d.set_item("collections", p.collections)?;
    d.set_item("featured_collection", &p.featured_collection)?;
    d.set_item("min_size", p.min_size)?;
    d.set_item("max_size", p.max_size)?;
    d.set_item("lead_section", p.lead_section)?;
    d.set_item("continue_offset", p.continue_offset)?;
    d.set_item("continue_seed", p.continue_seed)?;
    Ok(d)
}

/// `TranslationEngine.similar`'s defaults: how many pages, and CirrusSearch's morelike
/// parameters a call may override (a wiki's own settings, recorded with its index, come
/// first).
fn similar_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let p = wikisuggest_translation::seed::MoreLikeParams::default();
    let d = PyDict::new(py);
    d.set_item("limit", wikisuggest_translation::seed::SIMILAR_LIMIT)?;
    d.set_item("min_term_freq", p.min_term_freq)?;
    d.set_item("min_doc_freq", p.min_doc_freq)?;
    d.set_item("max_query_terms", p.max_query_terms)?;
    d.set_item("minimum_should_match", &p.minimum_should_match)?;
    Ok(d)
}

/// The engine's pass options: the link options and what only the local engine takes (the
/// time budget in seconds, the never-link rules).
fn engine_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let options = RecommendOptions::default();
    let d = link_defaults(py, &options.link)?;
    d.set_item("time_budget", options.time_budget.map(|t| t.as_secs_f64()))?;
    d.set_item("rules", py.None())?;
    Ok(d)
}

/// The wiki id of a Wikipedia as users write it (`frwiki`, `fr`, `fr.wikipedia.org`, a URL).
#[pyfunction]
fn wiki_id(name: &str) -> PyResult<String> {
    wiki::wiki_id(name).map_err(parameter_error)
}

/// The language code of a wiki id (`bat_smgwiki` → `bat_smg`).
#[pyfunction]
fn wiki_language(wiki_id: &str) -> String {
    wiki::language_code(wiki_id).to_owned()
}

/// The domain of a wiki id (`bat_smgwiki` → `bat-smg.wikipedia.org`).
#[pyfunction]
fn wiki_domain(wiki_id: &str) -> String {
    wiki::domain(wiki_id)
}

/// Why MediaWiki would refuse `title`, or `None` when it is a title.
#[pyfunction]
fn title_problem(title: &str) -> Option<String> {
    wikisuggest_text::title::check_title(title)
        .err()
        .map(|e| e.reason)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add(
        "LINK_DEFAULTS",
        frozen(py, &link_defaults(py, &LinkOptions::default())?)?,
    )?;
    m.add(
        "TRANSLATION_DEFAULTS",
        frozen(py, &translation_defaults(py)?)?,
    )?;
    m.add("ENGINE_DEFAULTS", frozen(py, &engine_defaults(py)?)?)?;
    m.add("SIMILAR_DEFAULTS", frozen(py, &similar_defaults(py)?)?)?;
    m.add("MAX_TITLE_BYTES", wikisuggest_text::title::MAX_TITLE_BYTES)?;
    m.add_function(wrap_pyfunction!(wiki_id, m)?)?;
    m.add_function(wrap_pyfunction!(wiki_language, m)?)?;
    m.add_function(wrap_pyfunction!(wiki_domain, m)?)?;
    m.add_function(wrap_pyfunction!(title_problem, m)?)?;
    Ok(())
}
