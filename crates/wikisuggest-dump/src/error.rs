//! Errors of the dump reader: of the whole dump (reading stops) or of one page (it goes on).

use std::fmt;
use std::path::PathBuf;

/// Why the dump as a whole cannot be read further.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DumpError {
    /// Reading or decompressing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The dump.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The dump's header is not what an export dump starts with.
    #[error("{path}: malformed dump: {reason} (at byte {offset})")]
    Malformed {
        /// The dump.
        path: PathBuf,
        /// Offset in the decompressed XML.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// The dump ends before its `</mediawiki>`: it was cut short (a partial download, a copy
    /// cut between pages or at a compressed stream's boundary).
    #[error(
        "{path}: the dump is cut short: it ends at byte {offset} {place}, without </mediawiki>"
    )]
    Truncated {
        /// The dump.
        path: PathBuf,
        /// Decompressed bytes read.
        offset: u64,
        /// Where it ends (`between pages`, `inside the page …`).
        place: String,
    },
    /// A line of an SQL table dump is not what mysqldump writes.
    #[error("{path}: line {line}: {reason}")]
    Sql {
        /// The dump.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        reason: String,
    },
    /// A page could not be read, from a reader that treats that as the end
    /// ([`crate::DumpReader::next_page`]).
    #[error("{path}: {error}")]
    Page {
        /// The dump.
        path: PathBuf,
        /// The page.
        error: Box<PageError>,
    },
}

/// A page that could not be read; the reader goes on with the next page. The fields that
/// could still be read are filled in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageError {
    /// Offset of its `<page>` in the decompressed XML.
    pub offset: u64,
    /// Namespace, when it could be read.
    pub ns: Option<i64>,
    /// Page id, when it could be read.
    pub id: Option<i64>,
    /// Id of its (last) revision, when it could be read.
    pub revision_id: Option<i64>,
    /// Title, when it could be read.
    pub title: Option<String>,
    /// Whether it is a redirect, as far as it could be read.
    pub redirect: bool,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for PageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("page ")?;
        if let Some(title) = &self.title {
            write!(f, "{title:?} ")?;
        }
        if let Some(id) = self.id {
            write!(f, "(id {id}) ")?;
        }
        write!(f, "at byte {}: {}", self.offset, self.reason)
    }
}

impl std::error::Error for PageError {}

/// Result of the dump reader.
pub type Result<T, E = DumpError> = std::result::Result<T, E>;
