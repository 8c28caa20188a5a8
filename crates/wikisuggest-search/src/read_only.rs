//! A finished index folder seen read-only: opening and querying it writes nothing there, so
//! an index works from an installed package, a read-only mount or a folder many readers share.
//!
//! Tantivy's reader takes its meta lock while it opens the segments, so that a writer's garbage
//! collection removes no segment file mid-open: on a folder, by opening `.tantivy-meta.lock`
//! for writing (creating it if missing) and locking it. A finished index has no writer, so the
//! view hands back a lock that holds nothing. Every write (`open_write`, `atomic_write`, `delete`) is refused,
//! and no watcher is registered: the reader is reloaded by hand, never.

use std::io;
use std::path::Path;
use std::sync::Arc;

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};
use tantivy::{Directory, Index};

use crate::analysis::{profile, text_analyzer};
use crate::error::SearchError;
use crate::schema::{self, Fields, TEXT_ANALYZER};

/// An [`MmapDirectory`] that reads and never writes.
#[derive(Clone, Debug)]
pub(crate) struct ReadOnlyDirectory(MmapDirectory);

impl ReadOnlyDirectory {
    pub(crate) fn new(inner: MmapDirectory) -> Self {
        Self(inner)
    }
}

fn refused(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "the search index is open read-only: {} is not written",
            path.display()
        ),
    )
}

impl Directory for ReadOnlyDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.0.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError {
            io_error: Arc::new(refused(path)),
            filepath: path.to_path_buf(),
        })
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.0.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::IoError {
            io_error: Arc::new(refused(path)),
            filepath: path.to_path_buf(),
        })
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.0.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, _data: &[u8]) -> io::Result<()> {
        Err(refused(path))
    }

    /// Nothing was written, so nothing needs syncing.
    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    /// A lock that holds nothing: the index is finished and no writer runs on it.
    fn acquire_lock(&self, _lock: &Lock) -> Result<DirectoryLock, LockError> {
        Ok(DirectoryLock::from(Box::new(NoLock)))
    }

    /// The index does not change: no watcher, no thread.
    fn watch(&self, _callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        Ok(WatchHandle::empty())
    }
}

struct NoLock;

/// Opens the finished index in `dir` through a [`ReadOnlyDirectory`], with the crate's
/// schema (an index written with another is refused) and the `language`'s analyzer. A folder
/// whose build never committed (no `meta.json`) is incomplete, not created.
pub(crate) fn open_read_only(dir: &Path, language: &str) -> crate::error::Result<(Index, Fields)> {
    let (schema, fields) = schema::schema();
    let directory = MmapDirectory::open(dir).map_err(|e| SearchError::NotAnIndex {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    let directory = ReadOnlyDirectory::new(directory);
    if !Index::exists(&directory).map_err(tantivy::TantivyError::from)? {
        return Err(SearchError::Incomplete {
            path: dir.to_path_buf(),
            documents: 0,
        });
    }
    let index = Index::open(directory)?;
    if index.schema() != schema {
        return Err(SearchError::NotAnIndex {
            path: dir.to_path_buf(),
            reason: "its schema is not this version's".to_owned(),
        });
    }
    index
        .tokenizers()
        .register(TEXT_ANALYZER, text_analyzer(profile(language)?));
    Ok((index, fields))
}
