//! Results travel to Python as plain dicts and lists (via serde); the Python layer turns
//! them into frozen dataclasses with `from_dict`, the same constructor users call.

use pyo3::prelude::*;
use serde::Serialize;

/// Any serialisable value, converted when pyo3 hands it to Python (after an async call
/// completed, or after a sync call re-attached).
pub struct Pythonized<T>(pub T);

impl<'py, T: Serialize> IntoPyObject<'py> for Pythonized<T> {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        Ok(pythonize::pythonize(py, &self.0)?)
    }
}
