//! One page of the engine at the Python boundary: the page's arguments as the Python layer
//! passes them ([`PageArgs`]) and the engine's result as the Python record ([`set_to_py`]),
//! for the single call (`crate::engine`), the batch (`crate::engine_batch`) and the row
//! builder (`crate::linkrows`).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use wikisuggest_engine::{LinkRecommendationSet, Page};

/// A page of the engine as the Python layer passes it (`_args.py`'s `NativePage`):
/// `(wikitext, page_title, pageid, revid, language_code)`, the order `recommend` takes them.
/// Not the dump reader's `(page_id, revision_id, title, wikitext)` rows (`crate::dump`).
/// The wikitext is lent, not copied (`crate::lent_text`): a lone surrogate in it is this
/// page's `InvalidParameter`.
pub struct PageArgs(Page);

impl<'a, 'py> FromPyObject<'a, 'py> for PageArgs {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let tuple = obj.cast::<PyTuple>()?;
        if tuple.len() != 5 {
            return Err(PyTypeError::new_err(
                "a native page is (wikitext, page_title, pageid, revid, language_code)",
            ));
        }
        Ok(Self(Page {
            wikitext: crate::lent_text::lend("wikitext", &tuple.get_item(0)?)?,
            page_title: tuple.get_item(1)?.extract()?,
            pageid: tuple.get_item(2)?.extract()?,
            revid: tuple.get_item(3)?.extract()?,
            language_code: tuple.get_item(4)?.extract()?,
        }))
    }
}

impl From<PageArgs> for Page {
    fn from(PageArgs(page): PageArgs) -> Self {
        page
    }
}

/// The result's record; with `explain`, the `ExplainedResult` of it (see
/// `crate::rules::explained`).
pub(crate) fn set_to_py(
    py: Python<'_>,
    mut set: LinkRecommendationSet,
    explain: bool,
) -> PyResult<Bound<'_, PyAny>> {
    if !explain {
        return crate::convert::link_set(py, &set.into());
    }
    let excluded = std::mem::take(&mut set.excluded);
    let page = set.page_excluded.take();
    let links: Vec<_> = (excluded.iter())
        .map(|e| wikisuggest_engine::link_record(e.link.clone()))
        .collect();
    let record = crate::convert::link_set(py, &set.into())?;
    crate::rules::explained(py, record, &excluded, page.as_ref(), &links)
}
