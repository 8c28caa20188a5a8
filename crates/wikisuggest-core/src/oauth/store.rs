//! Where a token manager persists its token between runs (and between processes that share
//! one authorization).
//!
//! Stores are synchronous: they are called inside the manager's renewal critical section,
//! so that a rotated refresh token is persisted before anyone else may refresh again.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::token::StoredToken;
use crate::error::{Error, Result};

/// Persistence for one token. Implementations must not call back into the token manager
/// (the manager holds its renewal lock while calling them).
pub trait TokenStore: Send + Sync {
    /// The token saved last, or `None` when nothing was saved yet.
    fn load(&self) -> Result<Option<StoredToken>>;
    /// Replace the saved token.
    fn save(&self, token: &StoredToken) -> Result<()>;

    /// Try to take the lock that every process sharing this store holds while it renews the
    /// token, so two of them never spend the same refresh token. The manager re-reads the
    /// store once it holds the lock. Stores without such a lock keep the default.
    fn try_lock(&self) -> Result<LockAttempt> {
        Ok(LockAttempt::Unsupported)
    }
}

/// The outcome of [`TokenStore::try_lock`].
#[derive(Debug)]
pub enum LockAttempt {
    /// The store has no inter-process lock.
    Unsupported,
    /// Another holder has it; try again later.
    Busy,
    /// Held until the guard is dropped.
    Held(StoreLock),
}

/// An exclusive lock on a token store; released when dropped (or when the process ends,
/// however it ends: the operating system drops file locks with the handle).
#[derive(Debug)]
pub struct StoreLock {
    _file: File,
}

/// A JSON file readable only by its owner. Writes are atomic: a reader (another process)
/// sees either the old token or the new one, never half a file, and a crash mid-write leaves
/// the old file in place.
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    path: PathBuf,
}

impl FileTokenStore {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn failure(&self, doing: &str, err: impl std::fmt::Display) -> Error {
        Error::Internal(format!(
            "could not {doing} the token file {}: {err}",
            self.path.display()
        ))
    }

    fn write_new_file(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // Created with mode 0600 from the start: no window in which another user could
            // open the file before its permissions are narrowed.
            options.mode(0o600);
        }
        let mut file = options.open(path)?;
        file.write_all(bytes)?;
        file.sync_all()
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self) -> Result<Option<StoredToken>> {
        let bytes = match fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.failure("read", e)),
        };
        // Only the kind of fault and its position are reported: serde_json's own message may
        // quote a value (`invalid type: string "…"`), which could be a token.
        serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            let kind = match e.classify() {
                serde_json::error::Category::Io => "unreadable",
                serde_json::error::Category::Syntax => "not valid JSON",
                serde_json::error::Category::Data => "not a token record",
                serde_json::error::Category::Eof => "truncated",
            };
            self.failure(
                "parse",
                format!("{kind} at line {} column {}", e.line(), e.column()),
            )
        })
    }

    fn try_lock(&self) -> Result<LockAttempt> {
        let mut lock_path = self.path.clone().into_os_string();
        lock_path.push(".lock");
        let lock_path = PathBuf::from(lock_path);
        if let Some(dir) = lock_path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.exists()
        {
            create_private_dir(dir).map_err(|e| self.failure("create the directory of", e))?;
        }
        // The lock file is never removed: removing it would let two processes lock two
        // different files of the same name.
        let file = match open_lock_file(&lock_path) {
            Ok(Some(file)) => file,
            Ok(None) => {
                log::warn!(
                    target: crate::client::LOG_TARGET,
                    "{} is not a regular file (a symbolic link or a directory); renewing \
                     without the lock",
                    lock_path.display()
                );
                return Ok(LockAttempt::Unsupported);
            }
            // A token file provisioned read-only (its directory not writable by us) still
            // works as before, only without the lock.
            Err(e) if is_read_only(&e) => {
                log::warn!(
                    target: crate::client::LOG_TARGET,
                    "cannot create the lock file {}; renewing without it",
                    lock_path.display()
                );
                return Ok(LockAttempt::Unsupported);
            }
            Err(e) => return Err(self.failure("open the lock of", e)),
        };
        // std's advisory lock: flock(LOCK_EX | LOCK_NB) on Unix, LockFileEx with
        // LOCKFILE_FAIL_IMMEDIATELY on Windows. The operating system releases it with the
        // handle, however the process ends.
        match file.try_lock() {
            Ok(()) => Ok(LockAttempt::Held(StoreLock { _file: file })),
            Err(TryLockError::WouldBlock) => Ok(LockAttempt::Busy),
            // A file system without locks (some network mounts): the token still works, as
            // with a read-only directory, only renewals are not serialised between processes.
            Err(TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {
                log::warn!(
                    target: crate::client::LOG_TARGET,
                    "the file system of {} has no file locks; renewing without one",
                    lock_path.display()
                );
                Ok(LockAttempt::Unsupported)
            }
            Err(TryLockError::Error(e)) => Err(self.failure("lock", e)),
        }
    }

    fn save(&self, token: &StoredToken) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(token).map_err(|e| self.failure("encode", e))?;
        let dir = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.exists() {
            create_private_dir(&dir).map_err(|e| self.failure("create the directory of", e))?;
        }
        let name = self
            .path
            .file_name()
            .ok_or_else(|| self.failure("write", "the path names no file"))?;
        // The temporary file sits in the same directory, so the rename cannot cross file
        // systems and is atomic.
        let temp = dir.join(format!(
            ".{}.{:016x}.tmp",
            name.to_string_lossy(),
            fastrand::u64(..)
        ));
        if let Err(e) = self.write_new_file(&temp, &bytes) {
            let _ = fs::remove_file(&temp);
            if is_read_only(&e) {
                // A token file provisioned read-only: the token just obtained is used all
                // the same (the manager holds it), it is only not kept for the next run.
                log::warn!(
                    target: crate::client::LOG_TARGET,
                    "cannot write the token file {} (read-only); the renewed token is used but \
                     not saved",
                    self.path.display()
                );
                return Ok(());
            }
            return Err(self.failure("write", e));
        }
        if let Err(e) = fs::rename(&temp, &self.path) {
            let _ = fs::remove_file(&temp);
            return Err(self.failure("replace", e));
        }
        // Make the rename itself durable; not every platform can sync a directory.
        if let Ok(dir) = File::open(&dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

/// Open (creating it 0600 if absent) the lock file at `path`, never through a symbolic link
/// (`O_NOFOLLOW`): a link planted there would otherwise make us create or lock a file
/// elsewhere. `None` when `path` is a symbolic link, a directory or anything but a regular
/// file.
#[cfg(unix)]
fn open_lock_file(path: &Path) -> std::io::Result<Option<File>> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        // O_NONBLOCK: opening a FIFO planted there must not wait for a writer.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    match options.open(path) {
        Ok(file) => {
            let kind = file.metadata()?.file_type();
            let regular = kind.is_file() && !kind.is_fifo() && !kind.is_socket();
            Ok(regular.then_some(file))
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::EISDIR)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether an I/O error says the place cannot be written (permissions, a read-only mount).
fn is_read_only(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

/// [`open_lock_file`] where there is no `O_NOFOLLOW`: `None` for anything but a regular file.
#[cfg(not(unix))]
fn open_lock_file(path: &Path) -> std::io::Result<Option<File>> {
    if fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
        return Ok(None);
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    Ok(file.metadata()?.is_file().then_some(file))
}

/// Create `dir` (and its parents) readable only by its owner, like the file it will hold.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(access: &str) -> StoredToken {
        StoredToken {
            token_type: "Bearer".into(),
            access_token: access.into(),
            refresh_token: Some("rt".into()),
            expires_in: Some(14_400),
            obtained_at: 1_700_000_000.5,
            expires_at: Some(1_700_014_400.5),
        }
    }

    fn temp_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "wikisuggest-store-{}-{:x}",
            std::process::id(),
            fastrand::u64(..)
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn missing_file_loads_as_none() {
        let dir = temp_dir();
        let store = FileTokenStore::new(dir.join("token.json"));
        assert_eq!(store.load().unwrap(), None);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn save_replaces_atomically_with_mode_0600() {
        let dir = temp_dir();
        let path = dir.join("token.json");
        // An existing file with loose permissions is replaced, not rewritten in place.
        fs::write(&path, b"{}").unwrap();
        let store = FileTokenStore::new(&path);
        store.save(&sample("one")).unwrap();
        store.save(&sample("two")).unwrap();
        assert_eq!(store.load().unwrap(), Some(sample("two")));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let leftovers: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n != "token.json")
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn missing_directory_is_created_private() {
        let dir = temp_dir();
        let path = dir.join("a").join("b").join("token.json");
        FileTokenStore::new(&path).save(&sample("x")).unwrap();
        assert_eq!(
            FileTokenStore::new(&path).load().unwrap(),
            Some(sample("x"))
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.join("a").join("b"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn corrupt_file_is_an_error_without_content() {
        let dir = temp_dir();
        let path = dir.join("token.json");
        for content in [
            &b"{\"access_token\": \"SECRET\""[..],
            // Type errors are where serde_json quotes the value it found.
            b"{\"access_token\": \"a\", \"expires_in\": \"SECRET\"}",
            b"{\"access_token\": [\"SECRET\"]}",
            b"{\"access_token\": \"a\", \"token_type\": {\"SECRET\": 1}}",
            b"\"SECRET\"",
        ] {
            fs::write(&path, content).unwrap();
            let err = FileTokenStore::new(&path).load().unwrap_err().to_string();
            assert!(
                err.contains("token.json") && !err.contains("SECRET"),
                "{err}"
            );
        }
        fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_path_that_is_a_link_or_a_directory_is_not_used() {
        let dir = temp_dir();
        let path = dir.join("token.json");
        let elsewhere = dir.join("elsewhere");
        std::os::unix::fs::symlink(&elsewhere, dir.join("token.json.lock")).unwrap();
        let store = FileTokenStore::new(&path);
        assert!(matches!(
            store.try_lock().unwrap(),
            LockAttempt::Unsupported
        ));
        assert!(!elsewhere.exists(), "the link was followed");
        fs::remove_file(dir.join("token.json.lock")).unwrap();
        fs::create_dir(dir.join("token.json.lock")).unwrap();
        // Every renewal would fail if a directory there were an error: it is not.
        assert!(matches!(
            store.try_lock().unwrap(),
            LockAttempt::Unsupported
        ));
        store.save(&sample("x")).unwrap();
        fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_read_only_store_keeps_working_without_saving() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir();
        let path = dir.join("token.json");
        FileTokenStore::new(&path).save(&sample("old")).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o500)).unwrap();
        let store = FileTokenStore::new(&path);
        let writable = fs::write(dir.join("probe"), b"x").is_ok(); // root ignores modes
        assert!(matches!(
            store.try_lock().unwrap(),
            LockAttempt::Unsupported | LockAttempt::Held(_)
        ));
        store.save(&sample("new")).unwrap();
        let kept = if writable { "new" } else { "old" };
        assert_eq!(store.load().unwrap(), Some(sample(kept)));
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_lock_excludes_a_second_holder_until_dropped() {
        let dir = temp_dir();
        let path = dir.join("sub").join("token.json");
        let a = FileTokenStore::new(&path);
        let b = FileTokenStore::new(&path);
        let held = match a.try_lock().unwrap() {
            LockAttempt::Held(lock) => lock,
            other => panic!("{other:?}"),
        };
        assert!(matches!(b.try_lock().unwrap(), LockAttempt::Busy));
        drop(held);
        assert!(matches!(b.try_lock().unwrap(), LockAttempt::Held(_)));
        fs::remove_dir_all(dir).unwrap();
    }
}
