//! A page's wikitext lent to the engine from its Python `str`, without copying it.
//!
//! An ASCII `str` holds its text as UTF-8 already: the engine reads those bytes in place. Any
//! other `str` is encoded once into a `bytes` object that the engine reads, rather than
//! through `PyUnicode_AsUTF8AndSize`, which would keep a UTF-8 copy alive in the `str` for as
//! long as the `str` lives (a page read from a dump or a request is new: nothing would use
//! that copy again). Encoding is also where a lone surrogate shows: it becomes this
//! argument's `InvalidParameter`, with the surrogate's position, instead of a scan of its own.
//!
//! The lent text keeps a reference to the object that holds the bytes (a `str` or a `bytes`,
//! both immutable), so the bytes stay where they are for as long as the engine reads them,
//! on any thread.

use std::sync::Arc;

use pyo3::exceptions::PyUnicodeEncodeError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use wikisuggest_engine::{LentText, PageSource};

use crate::errors::invalid_parameter;

/// The UTF-8 bytes of an immutable Python object, and the reference that keeps them alive.
struct PyUtf8 {
    _owner: Py<PyAny>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the bytes belong to an immutable `str` or `bytes` object that `_owner` keeps
// alive: CPython never moves or changes them, so reading them needs no interpreter lock.
unsafe impl Send for PyUtf8 {}
// SAFETY: as for `Send`; the bytes are only ever read.
unsafe impl Sync for PyUtf8 {}

impl LentText for PyUtf8 {
    fn text(&self) -> &str {
        // SAFETY: `ptr..ptr + len` is valid UTF-8 (checked when lent) owned by `_owner`, which
        // lives as long as `self`.
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(self.ptr, self.len)) }
    }
}

/// The text of `value` (the argument `name`, a `str`), lent to the engine.
///
/// # Errors
/// `TypeError` for anything but a `str`; `InvalidParameter` for a lone surrogate.
pub(crate) fn lend(name: &str, value: &Bound<'_, PyAny>) -> PyResult<PageSource> {
    let text = value.cast::<PyString>()?;
    let py = value.py();
    let ascii = text
        .call_method0(pyo3::intern!(py, "isascii"))?
        .is_truthy()?;
    if ascii {
        // An ASCII `str` is its own UTF-8: `to_str` points into it and builds nothing.
        let bytes = text.to_str()?;
        let (ptr, len) = (bytes.as_ptr(), bytes.len());
        return Ok(lent(text.clone().into_any().unbind(), ptr, len));
    }
    let encoded = text.encode_utf8().map_err(|err| surrogate(py, name, err))?;
    let bytes: &[u8] = encoded.as_bytes();
    // Python's encoder writes UTF-8; checked all the same, as the engine relies on it.
    let (ptr, len) = match std::str::from_utf8(bytes) {
        Ok(checked) => (checked.as_ptr(), checked.len()),
        Err(_) => {
            return Err(invalid_parameter(name, "not valid Unicode text"));
        }
    };
    Ok(lent(encoded.into_any().unbind(), ptr, len))
}

fn lent(owner: Py<PyAny>, ptr: *const u8, len: usize) -> PageSource {
    PageSource::Lent(Arc::new(PyUtf8 {
        _owner: owner,
        ptr,
        len,
    }))
}

/// A lone surrogate's `UnicodeEncodeError` as the argument's `InvalidParameter`.
fn surrogate(py: Python<'_>, name: &str, err: PyErr) -> PyErr {
    if !err.is_instance_of::<PyUnicodeEncodeError>(py) {
        return err;
    }
    let start = err
        .value(py)
        .getattr(pyo3::intern!(py, "start"))
        .and_then(|s| s.extract::<usize>());
    match start {
        Ok(at) => invalid_parameter(
            name,
            &format!("not valid Unicode text: a lone surrogate at position {at}"),
        ),
        Err(_) => invalid_parameter(name, "not valid Unicode text: a lone surrogate"),
    }
}
