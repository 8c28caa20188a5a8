//! A page's wikitext lent to the engine from its Python `str`, without copying it.
//!
//! An ASCII `str` holds its text as UTF-8 already: the engine reads those bytes in place,
//! keeping a reference to the `str` (immutable), so the bytes stay where they are for as long
//! as the engine reads them, on any thread.
//!
//! Any other `str` is transcoded once into the engine's own UTF-8 copy: its code points are
//! widened into a per-thread buffer (`PyUnicode_AsUCS4`, a plain copy loop in CPython) and
//! written as UTF-8 by `wikisuggest_text::code_points` (blocks of ASCII narrowed whole in
//! vector registers). That takes under half the instructions of CPython's own UTF-8 encoder,
//! which reads every character through a branch, and it does not go through
//! `PyUnicode_AsUTF8AndSize`, which would keep a UTF-8 copy alive in the `str` for as long as
//! the `str` lives (a page read from a dump or a request is new: nothing would use that copy
//! again). The transcoding is where a lone surrogate shows: it becomes this argument's
//! `InvalidParameter`, with the surrogate's position.

use std::cell::RefCell;
use std::sync::Arc;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;
use wikisuggest_engine::{LentText, PageSource};
use wikisuggest_text::code_points::utf8_of_code_points;

use crate::errors::invalid_parameter;

/// The UTF-8 bytes of an ASCII `str`, and the reference that keeps them alive.
struct PyUtf8 {
    _owner: Py<PyAny>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the bytes belong to an immutable `str` that `_owner` keeps
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
    let units = text.len()?;
    transcoded(text, units).map_err(|err| match err {
        Transcoding::Python(err) => err,
        Transcoding::LoneSurrogate(at) => invalid_parameter(
            name,
            &format!("not valid Unicode text: a lone surrogate at position {at}"),
        ),
    })
}

/// Why a `str` could not be transcoded.
enum Transcoding {
    /// CPython refused to copy its code points.
    Python(PyErr),
    /// A lone surrogate at this position (in code points), which UTF-8 cannot hold.
    LoneSurrogate(usize),
}

/// A widening buffer kept by a thread between calls, so that a page's code points are not a
/// fresh allocation each time; one larger than this many code points is not kept.
const KEPT_UNITS: usize = 1 << 20;

thread_local! {
    static CODE_POINTS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// The UTF-8 of `text`, a `str` of `units` code points.
fn transcoded(text: &Bound<'_, PyString>, units: usize) -> Result<PageSource, Transcoding> {
    CODE_POINTS.with(|cell| {
        let mut buffer = cell.borrow_mut();
        if buffer.len() < units {
            buffer.resize(units, 0);
        }
        let widened = buffer.get_mut(..units).unwrap_or_default();
        let capacity = ffi::Py_ssize_t::try_from(units).unwrap_or(ffi::Py_ssize_t::MAX);
        // SAFETY: `text` is a live `str` (the caller holds the interpreter); `widened` has
        // room for `units` code points, which is the string's length, so CPython writes
        // within it (it refuses a buffer that is too short) and no NUL after it.
        let copied =
            unsafe { ffi::PyUnicode_AsUCS4(text.as_ptr(), widened.as_mut_ptr(), capacity, 0) };
        let result = if copied.is_null() {
            Err(Transcoding::Python(PyErr::fetch(text.py())))
        } else {
            utf8_of_code_points(widened)
                .map(PageSource::Owned)
                .map_err(Transcoding::LoneSurrogate)
        };
        if buffer.len() > KEPT_UNITS {
            *buffer = Vec::new();
        }
        result
    })
}

fn lent(owner: Py<PyAny>, ptr: *const u8, len: usize) -> PageSource {
    PageSource::Lent(Arc::new(PyUtf8 {
        _owner: owner,
        ptr,
        len,
    }))
}
