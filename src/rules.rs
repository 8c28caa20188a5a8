//! `NativeLinkRules`: a checked rule set handed to the engine with each call's options, so
//! that every path that runs the engine carries it; and the engine's exclusions as Python
//! values.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyFileNotFoundError, PyOSError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pythonize::{depythonize, pythonize};
use wikisuggest_engine::rules::classes;
use wikisuggest_engine::rules::section_links as engine_section_links;
use wikisuggest_engine::{Error as EngineError, ExcludedLink, Exclusion, RuleSpec, Rules};

use crate::errors::{engine_error, invalid_parameter};

#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeLinkRules {
    pub(crate) inner: Arc<Rules>,
}

/// The rule set's spec, read by its one definition (`RuleSpec`: every key, its type and
/// range); what it refuses is the error of the key at fault, as an unknown keyword argument
/// is (each key is read alone to find it).
fn rule_spec(spec: &Bound<'_, PyDict>) -> PyResult<RuleSpec> {
    depythonize(spec).map_err(|whole| {
        let py = spec.py();
        let at_fault = spec.iter().find_map(|(key, value)| {
            let one = PyDict::new(py);
            one.set_item(&key, &value).ok()?;
            depythonize::<RuleSpec>(&one).err().map(|e| {
                let shown = value
                    .repr()
                    .map_or_else(|_| "?".to_owned(), |r| r.to_string());
                (
                    key.to_string(),
                    format!("{shown} is not a value of it ({e})"),
                )
            })
        });
        let (name, message) = at_fault.unwrap_or_else(|| ("rules".to_owned(), whole.to_string()));
        invalid_parameter(&name, &message)
    })
}

#[pymethods]
impl NativeLinkRules {
    /// A rule set from its spec (the rule file's keys); a `classes` path is read as given.
    #[staticmethod]
    fn from_spec(py: Python<'_>, spec: &Bound<'_, PyDict>) -> PyResult<Self> {
        let spec = rule_spec(spec)?;
        let rules = py
            .detach(|| Rules::from_spec(spec, None))
            .map_err(|e| engine_error(py, &e))?;
        Ok(Self {
            inner: Arc::new(rules),
        })
    }

    /// Reads a rule file (TOML or JSON).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let rules = py.detach(|| Rules::load(&path)).map_err(|e| match &e {
            // A rule file that is not there is the caller's file problem, not a dataset's.
            EngineError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                PyFileNotFoundError::new_err(e.to_string())
            }
            EngineError::Io { .. } => PyOSError::new_err(e.to_string()),
            _ => engine_error(py, &e),
        })?;
        Ok(Self {
            inner: Arc::new(rules),
        })
    }

    /// The rule set as a self-contained spec dict.
    fn spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(pythonize(py, self.inner.spec())?)
    }

    fn to_json(&self) -> String {
        self.inner.spec().to_json()
    }

    fn to_toml(&self, py: Python<'_>) -> PyResult<String> {
        self.inner
            .spec()
            .to_toml()
            .map_err(|e| engine_error(py, &e))
    }

    /// `(rule, value)` when a page rule excludes the page, else `None`. The scan (linear in
    /// the page) runs without the interpreter.
    #[pyo3(signature = (wikitext, templates=Vec::new(), categories=Vec::new()))]
    fn page_exclusion(
        &self,
        py: Python<'_>,
        wikitext: String,
        templates: Vec<String>,
        categories: Vec<String>,
    ) -> Option<(&'static str, String)> {
        py.detach(|| {
            self.inner
                .page_exclusion(&wikitext, &templates, &categories)
        })
        .map(|e| (e.rule.name(), e.value))
    }

    /// `(rule, value)` when a target, class or anchor rule names this link.
    fn link_exclusion(&self, link_text: &str, target: &str) -> Option<(&'static str, String)> {
        self.inner
            .link_exclusion(link_text, target)
            .map(|e| (e.rule.name(), e.value))
    }

    fn __repr__(&self) -> String {
        let spec = self.inner.spec();
        format!(
            "NativeLinkRules(targets={}, anchors={}, classes={})",
            spec.exclude_targets.len(),
            spec.exclude_anchors.len() + spec.exclude_anchors_exact.len(),
            spec.exclude_classes.len()
        )
    }
}

/// One row of a class table, as the engine reads it back (see
/// `wikisuggest_engine::rules::classes::table_row`): `InvalidParameter` for a value that
/// cannot be written.
#[pyfunction]
pub fn class_table_row(
    py: Python<'_>,
    title: &str,
    item: &str,
    p31: Vec<String>,
) -> PyResult<String> {
    classes::table_row(title, item, &p31).map_err(|e| engine_error(py, &e))
}

/// Whether `id` is a Wikidata item id (`Q` and digits, the first not zero).
#[pyfunction]
pub fn is_wikidata_item(id: &str) -> bool {
    classes::is_item(id)
}

/// A wikilink: its section's position (0 is the lead), code point span, target as written,
/// label and normalised target.
type LinkOut = (usize, usize, usize, String, Option<String>, String);

/// Every wikilink of `wikitext`, at any depth, in page order.
#[pyfunction]
pub fn page_links(py: Python<'_>, wikitext: String) -> Vec<LinkOut> {
    py.detach(|| {
        engine_section_links(&wikitext, &|_| None)
            .into_iter()
            .map(|l| (l.section, l.start, l.end, l.title, l.label, l.target))
            .collect()
    })
}

/// The sections of `wikitext` as the engine searches them: `(heading title or None, start)`.
#[pyfunction]
pub fn page_sections(py: Python<'_>, wikitext: String) -> Vec<(Option<String>, usize)> {
    py.detach(|| wikisuggest_engine::rules::page_sections(&wikitext))
}

/// A page's record with what the rules removed from it, as `wikisuggest.records`'
/// `ExplainedResult`: each excluded link (`core_links`, the same links as records) with its
/// rule, and the rule that removed the whole page.
pub(crate) fn explained<'py>(
    py: Python<'py>,
    record: Bound<'py, PyAny>,
    excluded: &[ExcludedLink],
    page: Option<&Exclusion>,
    core_links: &[wikisuggest_core::models::LinkRecommendation],
) -> PyResult<Bound<'py, PyAny>> {
    let records = py.import("wikisuggest.records")?;
    let excluded_link = records.getattr("ExcludedLink")?;
    let links = crate::convert::links(py, core_links)?;
    let items = links
        .into_iter()
        .zip(excluded)
        .map(|(link, e)| {
            excluded_link.call1((link, e.exclusion.rule.name(), e.exclusion.value.as_str()))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let page = match page {
        Some(e) => records
            .getattr("Exclusion")?
            .call1((e.rule.name(), e.value.as_str()))?,
        None => py.None().into_bound(py),
    };
    records
        .getattr("ExplainedResult")?
        .call1((record, PyTuple::new(py, items)?, page))
}
