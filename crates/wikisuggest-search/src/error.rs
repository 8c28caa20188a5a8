//! The crate's one error type.

use std::path::PathBuf;

/// What can go wrong building, opening or querying a search index.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// A parameter out of its range (a negative frequency, a malformed `minimum_should_match`,
    /// an unknown language code...).
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter { name: &'static str, reason: String },
    /// The folder holds no index, or one this version cannot read.
    #[error("no usable search index in {path}: {reason}")]
    NotAnIndex { path: PathBuf, reason: String },
    /// The folder holds an index whose build has not finished (resume it with the builder).
    #[error(
        "the search index in {path} is incomplete ({documents} documents committed); resume its build"
    )]
    Incomplete { path: PathBuf, documents: u64 },
    /// A resumed build was handed other documents than the interrupted one had committed.
    #[error(
        "the documents differ from those of the interrupted build in {path}: document {position} was page {expected}, now page {found}"
    )]
    InputChanged {
        path: PathBuf,
        position: u64,
        expected: u64,
        found: u64,
    },
    /// A resumed build was handed fewer documents than the interrupted one had committed.
    #[error(
        "the documents differ from those of the interrupted build in {path}: {given} given, {committed} already committed"
    )]
    InputShorter {
        path: PathBuf,
        given: u64,
        committed: u64,
    },
    /// A build stopped on request; everything before `documents` is committed and a new build
    /// over the same folder resumes there.
    #[error("build interrupted after {documents} committed documents")]
    Interrupted { documents: u64 },
    /// The index library failed (I/O, a damaged file, memory).
    #[error("search index: {0}")]
    Index(#[from] tantivy::TantivyError),
    /// Reading or writing the index's own files failed.
    #[error("search index file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, SearchError>;

pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> SearchError {
    SearchError::InvalidParameter {
        name,
        reason: reason.into(),
    }
}
