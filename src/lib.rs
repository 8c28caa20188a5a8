//! The `wikisuggest._native` extension module: a thin layer that converts arguments,
//! releases the interpreter while Rust works, and converts results and errors back. All
//! behaviour lives in the pyo3-free crates below it: `wikisuggest-core` (HTTP client, token
//! manager, Action API), `wikisuggest-records` (the service records), `wikisuggest-engine`
//! (local link engine), `wikisuggest-build` (dataset builder, dump reader),
//! `wikisuggest-translation` (translation catalogs and their engine) and `wikisuggest-server`
//! (reference server).
//!
//! Each kind of wait has one door: `call` (a single operation, sent blocking or awaited),
//! `batch` (the protocol every batch speaks; `engine_batch` is the engine's), and
//! `runtime`'s interruptible wait (`wait_interruptibly`, `Worker`) under both. Errors are
//! mapped to Python's exception tree in `errors` only; records are built in `convert` (and
//! `records_json`, straight from a response body).

use pyo3::prelude::*;

mod awaitable;
mod batch;
mod build;
mod call;
mod client;
mod contract;
mod convert;
mod datasets;
mod deliver;
mod engine;
mod engine_batch;
mod engine_page;
mod errors;
mod lent_text;
mod limits;
mod linkrows;
mod logging;
mod mediawiki;
mod oauth;
mod plain_text;
mod records_json;
mod rules;
mod runtime;
mod server;
mod translation;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    logging::install();
    m.add("__version__", wikisuggest_core::VERSION)?;
    m.add_class::<client::NativeClient>()?;
    m.add_class::<call::NativeCall>()?;
    m.add_class::<oauth::NativeTokenManager>()?;
    m.add_class::<batch::NativeBatch>()?;
    m.add_class::<batch::NativeGroup>()?;
    m.add_class::<engine::NativeEngine>()?;
    m.add_class::<engine_batch::NativeEngineBatch>()?;
    m.add_class::<server::NativeServer>()?;
    m.add_class::<mediawiki::NativeWiki>()?;
    m.add_class::<rules::NativeLinkRules>()?;
    m.add_function(wrap_pyfunction!(rules::page_links, m)?)?;
    m.add_function(wrap_pyfunction!(rules::page_sections, m)?)?;
    m.add_function(wrap_pyfunction!(rules::class_table_row, m)?)?;
    m.add_function(wrap_pyfunction!(rules::is_wikidata_item, m)?)?;
    m.add(
        "CLASS_TABLE_HEADER",
        wikisuggest_engine::rules::classes::TABLE_HEADER,
    )?;
    m.add_class::<datasets::NativeDownloader>()?;
    m.add_function(wrap_pyfunction!(datasets::convert_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(datasets::dataset_drift, m)?)?;
    m.add_class::<plain_text::NativePlainText>()?;
    m.add_function(wrap_pyfunction!(runtime::in_flight_tasks, m)?)?;
    m.add_function(wrap_pyfunction!(runtime::quiesce, m)?)?;
    m.add_function(wrap_pyfunction!(oauth::authorization_url, m)?)?;
    m.add_function(wrap_pyfunction!(oauth::parse_redirect, m)?)?;
    m.add_function(wrap_pyfunction!(oauth::file_store_load, m)?)?;
    m.add_function(wrap_pyfunction!(oauth::file_store_save, m)?)?;
    m.add_class::<translation::NativeTranslationEngine>()?;
    m.add_function(wrap_pyfunction!(translation::build_translation_catalog, m)?)?;
    m.add_function(wrap_pyfunction!(
        translation::build_translation_collections,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(translation::translation_constants, m)?)?;
    contract::register(m)?;
    build::register(m)?;
    linkrows::register(m)?;
    Ok(())
}
