//! What finished work hands to Python: [`Deliver`], the conversion of a value (or an error)
//! that runs once the interpreter is held. Every door ends its work in one: a single call
//! (`crate::call`), an awaitable (`crate::awaitable`) and a batch's groups (`crate::batch`).

use pyo3::prelude::*;

use crate::errors::IntoPyErr;

/// A finished piece of work's value (or error), converted once the interpreter is held.
pub type Deliver = Box<dyn for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>> + Send>;

/// The conversion of a finished piece of work's `outcome` to Python, run with the
/// interpreter.
pub fn deliver<T, E, C>(outcome: Result<T, E>, convert: C) -> Deliver
where
    T: Send + 'static,
    E: IntoPyErr + Send + 'static,
    C: for<'py> FnOnce(Python<'py>, T) -> PyResult<Bound<'py, PyAny>> + Send + 'static,
{
    Box::new(move |py| match outcome {
        Ok(value) => convert(py, value),
        Err(error) => Err(error.into_pyerr(py)),
    })
}
