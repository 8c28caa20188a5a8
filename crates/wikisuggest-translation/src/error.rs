//! What can go wrong building or reading a catalog, or answering from it.

use std::path::{Path, PathBuf};

/// The crate's error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A dump is not in the format it should be in (a cut or damaged file, another table).
    #[error("{path}: {reason}")]
    Dump { path: PathBuf, reason: String },
    /// A catalog folder is missing a file, or holds one this version cannot read.
    #[error("{path}: {reason}")]
    Catalog { path: PathBuf, reason: String },
    /// A parameter that makes no sense (a negative count, an unknown topic…).
    #[error("{parameter}: {message}")]
    InvalidParameter { parameter: String, message: String },
    /// The catalog lacks the part a request needs (`pageviews` for popular mode, …).
    #[error("{0}")]
    MissingPart(String),
    /// The work was stopped (Ctrl-C) before it finished.
    #[error("stopped before the end")]
    Cancelled,
    /// A failure of the search index the seed mode asks.
    #[error("search index: {0}")]
    Search(String),
}

/// The crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_owned(),
            source,
        }
    }

    pub(crate) fn dump(path: &Path, reason: impl Into<String>) -> Self {
        Self::Dump {
            path: path.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn catalog(path: &Path, reason: impl std::fmt::Display) -> Self {
        Self::Catalog {
            path: path.to_owned(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn invalid(parameter: &str, message: impl Into<String>) -> Self {
        Self::InvalidParameter {
            parameter: parameter.to_owned(),
            message: message.into(),
        }
    }
}

impl From<wikisuggest_dump::DumpError> for Error {
    fn from(error: wikisuggest_dump::DumpError) -> Self {
        use wikisuggest_dump::DumpError;
        match error {
            DumpError::Io { path, source } => Self::Io { path, source },
            DumpError::Sql { path, line, reason } => Self::Dump {
                path,
                reason: format!("line {line}: {reason}"),
            },
            other => Self::Dump {
                path: PathBuf::new(),
                reason: other.to_string(),
            },
        }
    }
}
