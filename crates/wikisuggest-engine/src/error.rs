//! The crate's single error type.
//!
//! Every failure mode that depends on input data (files, pickles, model JSON, native
//! images) is a typed variant here: nothing in this crate panics on bad input.

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors of the dataset readers, the native format and the scorer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O operation on `path` failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// A file's sha256 differs from the one in its `.checksum` file.
    #[error("checksum mismatch for {path}: expected {expected}, computed {actual}")]
    ChecksumMismatch {
        /// The verified data file.
        path: PathBuf,
        /// The digest listed in the `.checksum` file.
        expected: String,
        /// The digest of the file's bytes.
        actual: String,
    },

    /// A `.checksum` file is not in `shasum -a 256` format.
    #[error("malformed checksum file {path}: {reason}")]
    BadChecksumFile {
        /// The `.checksum` file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// A line of a mysqldump file could not be parsed.
    #[error("{path}: line {line}: {reason}")]
    SqlDump {
        /// The dump file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong with it.
        reason: String,
    },

    /// A row of a dataset file was refused; `source` says why.
    #[error("{path}: row on line {line}: {source}")]
    Row {
        /// The dataset file.
        path: PathBuf,
        /// 1-based line (or row) number.
        line: u64,
        /// What is wrong with the row.
        source: Box<Error>,
    },

    /// A pickled value could not be decoded.
    #[error("pickle error: {0}")]
    Pickle(#[from] PickleError),

    /// A table row holds a value of an unexpected shape (after unpickling).
    #[error("{table} row {key:?}: {reason}")]
    BadRow {
        /// Logical table name (`anchors`, `redirects`, `pageids`, `w2vfiltered`).
        table: &'static str,
        /// The row's lookup key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },

    /// Two rows of one table share a lookup key.
    #[error("{table}: duplicate key {key:?}")]
    DuplicateKey {
        /// Logical table name.
        table: &'static str,
        /// The repeated key.
        key: String,
    },

    /// A dataset is larger than the native format can address.
    #[error("dataset too large: {0}")]
    TooLarge(String),

    /// The model JSON is malformed or not of a supported kind.
    #[error("model error: {0}")]
    Model(String),

    /// A native dataset file is truncated, corrupt or of another version.
    #[error("corrupt native dataset {path}: {reason}")]
    Corrupt {
        /// The native file (or `<memory>` for an in-memory image).
        path: PathBuf,
        /// What check failed.
        reason: String,
    },

    /// A memory-mapped native file was truncated, extended or rewritten in place while in
    /// use (or while being opened): what was read from it may be wrong, so the answer is
    /// refused. The file on disk may be whole again (a copy finished): open it anew.
    #[error("native dataset {path} {reason}; open it again (replace dataset files by rename)")]
    Changed {
        /// The native file.
        path: PathBuf,
        /// What changed.
        reason: String,
    },

    /// No dataset in any known format was found.
    #[error("no dataset for wiki {wiki_id:?} in {dir}")]
    NotFound {
        /// The searched directory.
        dir: PathBuf,
        /// The wiki id.
        wiki_id: String,
    },

    /// A page's pass failed in a way no input should cause (a defect in the engine), or a
    /// worker thread could not be started. The batch goes on with its other pages.
    #[error("internal error: {0}")]
    Internal(String),

    /// The caller cancelled a long operation (a conversion); nothing was left behind.
    #[error("cancelled")]
    Cancelled,

    /// A caller-supplied argument is invalid.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// A parameter of a recommendation (an option, a page's title) breaks its rule; it is
    /// named as the caller spells it.
    #[error(transparent)]
    InvalidParameter(#[from] wikisuggest_records::params::InvalidParameter),

    /// The text layer refused the page or its settings (unsupported language, or one of
    /// the upstream failures of the placement pass).
    #[error(transparent)]
    Text(wikisuggest_text::TextError),

    /// An SQLite operation on a legacy sqlitedict file failed.
    #[cfg(feature = "sqlite")]
    #[error("SQLite error on {path}: {source}")]
    Sqlite {
        /// The `.sqlite` file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: rusqlite::Error,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

/// Errors of the restricted pickle decoder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PickleError {
    /// The data ended before the STOP opcode or inside an argument.
    #[error("truncated pickle at byte {0}")]
    Truncated(usize),
    /// An opcode outside the supported subset.
    #[error("unsupported opcode 0x{opcode:02x} at byte {pos}")]
    UnsupportedOpcode {
        /// The opcode byte.
        opcode: u8,
        /// Its offset.
        pos: usize,
    },
    /// A global (class or function) outside the allow-list.
    #[error("unsupported global {module}.{name}")]
    UnsupportedGlobal {
        /// Module name.
        module: String,
        /// Attribute name.
        name: String,
    },
    /// The opcode stream is inconsistent (stack underflow, missing mark, bad memo…).
    #[error("malformed pickle at byte {pos}: {reason}")]
    Malformed {
        /// Offset of the offending opcode.
        pos: usize,
        /// What went wrong.
        reason: String,
    },
}
