//! Errors of the dataset builder.

use std::path::{Path, PathBuf};

/// Why a build step failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The dump cannot be read: malformed, cut short, or a page that cannot be read.
    #[error(transparent)]
    Dump(#[from] wikisuggest_dump::DumpError),
    /// An argument is out of range or inconsistent.
    #[error("{0}")]
    InvalidArgument(String),
    /// The engine rejected data the builder produced.
    #[error(transparent)]
    Engine(#[from] wikisuggest_engine::Error),
    /// The text pipeline failed on a page.
    #[error("page {title:?}: {source}")]
    Text {
        /// The page.
        title: String,
        /// The cause.
        source: wikisuggest_text::TextError,
    },
}

impl BuildError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_owned(),
            source,
        }
    }
}

/// Result of the builder.
pub type Result<T, E = BuildError> = std::result::Result<T, E>;
