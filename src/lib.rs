//! The `wikisuggest._native` extension module: a thin layer that converts arguments,
//! releases the interpreter while Rust works, and converts results and errors back.
//! All behaviour lives in the `wikisuggest-core` (HTTP client) and `wikisuggest-engine`
//! (local link engine) crates.

use pyo3::prelude::*;

mod batch;
mod build;
mod client;
mod convert;
mod dump;
mod engine;
mod errors;
mod limits;
mod link_body;
mod logging;
mod mediawiki;
mod oauth;
mod plain_text;
mod runtime;
mod server;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    runtime::register_builder();
    logging::install();
    m.add("__version__", wikisuggest_core::VERSION)?;
    m.add_class::<client::NativeClient>()?;
    m.add_class::<client::NativeCall>()?;
    m.add_class::<oauth::NativeTokenManager>()?;
    m.add_class::<batch::NativeBatch>()?;
    m.add_class::<batch::NativeGroup>()?;
    m.add_class::<engine::NativeEngine>()?;
    m.add_class::<engine::NativeBatchStream>()?;
    m.add_class::<server::NativeServer>()?;
    m.add_class::<mediawiki::NativeWiki>()?;
    m.add_class::<plain_text::NativePlainText>()?;
    m.add_function(wrap_pyfunction!(runtime::in_flight_tasks, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::quiesce, m)?)?;
    m.add_function(wrap_pyfunction!(oauth::authorization_url, m)?)?;
    m.add_function(wrap_pyfunction!(oauth::parse_redirect, m)?)?;
    m.add_function(wrap_pyfunction!(oauth::file_store_load, m)?)?;
    m.add_function(wrap_pyfunction!(oauth::file_store_save, m)?)?;
    build::register(m)?;
    dump::register(m)?;
    Ok(())
}
