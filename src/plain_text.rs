//! `NativePlainText`: the engine's partition of a page into plain text and markup, for
//! `wikisuggest.apply_links` (which places links only in plain text, and counts a phrase's
//! occurrences where the engine counts them). Parsing runs without the interpreter, can be
//! interrupted, and takes time linear in the page: a page whose markup needs more than
//! `READS_PER_CODE_POINT` reads per code point is refused (`WikitextError`).

use pyo3::prelude::*;
use wikisuggest_engine::{Error as EngineError, TextError};
use wikisuggest_text::wikitext::{NodeKind, PlainText, link_targets};

use crate::errors::engine_error;
use crate::runtime::Worker;

#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativePlainText {
    inner: PlainText,
    link_targets: Vec<String>,
}

/// A node kind as the Python layer names it.
fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Text => "text",
        NodeKind::Template => "template",
        NodeKind::Argument => "argument",
        NodeKind::Wikilink => "wikilink",
        NodeKind::ExternalLink => "external_link",
        NodeKind::Comment => "comment",
        NodeKind::HtmlEntity => "html_entity",
        NodeKind::Heading => "heading",
        NodeKind::Tag => "tag",
    }
}

#[pymethods]
impl NativePlainText {
    #[new]
    fn new(py: Python<'_>, text: String) -> PyResult<Self> {
        let work = Worker::spawn("wikisuggest-partition", move || {
            let inner = PlainText::bounded(&text)?;
            let link_targets = link_targets(&text);
            Ok::<_, TextError>(Self {
                inner,
                link_targets,
            })
        })?;
        work.wait(py)?
            .map_err(|e| engine_error(py, &EngineError::Text(e)))
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// `(start, end)` of every run of plain text, in page order (code points).
    fn text_runs(&self) -> Vec<(usize, usize)> {
        self.inner.text_runs().map(|r| (r.start, r.end)).collect()
    }

    /// `(kind, start, end)` of the top-level node holding `offset`, or `None` past the end.
    fn node_at(&self, offset: usize) -> Option<(&'static str, usize, usize)> {
        self.inner
            .node_at(offset)
            .map(|(kind, range)| (kind_name(kind), range.start, range.end))
    }

    /// Where MediaWiki stops showing the page (an unclosed `<!--`), or `None`.
    fn hidden_from(&self) -> Option<usize> {
        self.inner.hidden_from()
    }

    fn is_text(&self, start: usize, end: usize) -> bool {
        self.inner.is_text(start..end)
    }

    /// Start offsets of `phrase` in plain text, non-overlapping within each run.
    fn occurrences(&self, py: Python<'_>, phrase: &str) -> Vec<usize> {
        py.detach(|| self.inner.occurrences(phrase))
    }

    /// The raw targets of the page's `[[…]]` links at any depth.
    fn link_targets(&self) -> Vec<String> {
        self.link_targets.clone()
    }

    fn __repr__(&self) -> String {
        format!("NativePlainText(len={})", self.inner.len())
    }
}
