//! One wiki's engine as the server holds it: replaced, whole and atomically, when its
//! dataset files are replaced.
//!
//! Two ways in:
//! - **Changed under the engine.** A large native file is memory-mapped; when it is
//!   truncated or rewritten in place (`cp new.linkdata enwiki.linkdata`), the engine refuses
//!   every page with [`wikisuggest_engine::Error::Changed`] instead of answering from bytes
//!   that are no longer the file it opened. The server then opens the file again in the
//!   background (with its checksum verified) and swaps the new engine in; requests for
//!   that wiki are answered 503 until then, and a file that is still being written (its
//!   header's length is not its size yet, or its checksum does not match) is tried again
//!   after `retry`.
//! - **Asked by the operator** ([`LiveEngine::reload`]: SIGHUP, `Server.reload_datasets()`):
//!   a wiki whose files differ from the ones its engine opened (by device, inode, size and
//!   modification time; e.g. a new file renamed into place) is opened and verified, then
//!   swapped in. Until the swap the old engine keeps answering; if the new files fail,
//!   the old engine stays and the failure is reported.
//!
//! A swap is atomic for requests: each one runs on the engine it took at its start, old or
//! new, and an old engine is dropped (its file unmapped) when its last request ends.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use wikisuggest_engine::{Dataset, Engine, NativeOpenOptions};

/// What an operator's reload did to one wiki.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadOutcome {
    /// The files are the ones the engine opened, and it is sound: nothing to do.
    Unchanged,
    /// A new engine over the current files answers from now on.
    Reopened,
    /// The files could not be opened or verified; the previous engine goes on answering.
    Failed(String),
}

/// What identifies the files of a dataset folder: per regular file, its name, device,
/// inode, size and modification time.
type Fingerprint = Vec<(String, u64, u64, u64, Option<SystemTime>)>;

fn fingerprint(dir: &Path) -> std::io::Result<Fingerprint> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        if !meta.is_file() {
            continue;
        }
        #[cfg(unix)]
        let (dev, ino) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (dev, ino) = (0, 0);
        let name = entry.file_name().to_string_lossy().into_owned();
        files.push((name, dev, ino, meta.len(), meta.modified().ok()));
    }
    files.sort();
    Ok(files)
}

enum Reopening {
    Idle,
    Running,
    Failed(Instant),
}

pub struct LiveEngine {
    wiki: String,
    /// The wiki's dataset folder; `None` for an engine given ready-made (never reopened).
    dir: Option<PathBuf>,
    application_version: String,
    retry: Duration,
    current: RwLock<Arc<Engine>>,
    /// The files `current` was opened from.
    opened: Mutex<Fingerprint>,
    reopening: Mutex<Reopening>,
    /// Held while a new engine is being opened, so two openings do not race.
    opening: Mutex<()>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// How the server opens a dataset: a native file's checksum is verified, since the server
/// answers from it for a long time.
pub fn open_engine(dir: &Path, wiki: &str) -> wikisuggest_engine::Result<Engine> {
    let options = NativeOpenOptions {
        verify: true,
        ..NativeOpenOptions::default()
    };
    Dataset::open_with(dir, wiki, &options).map(Engine::new)
}

impl LiveEngine {
    /// Opens `dir` (the folder of `wiki`'s dataset).
    pub fn open(
        dir: &Path,
        wiki: &str,
        application_version: &str,
        retry: Duration,
    ) -> wikisuggest_engine::Result<Self> {
        let before = fingerprint(dir).unwrap_or_default();
        let engine = open_engine(dir, wiki)?.with_application_version(application_version);
        let live = Self::new(engine, wiki, application_version, retry);
        *lock(&live.opened) = before;
        Ok(Self {
            dir: Some(dir.to_owned()),
            ..live
        })
    }

    /// An engine given ready-made: it is never opened again.
    pub fn new(engine: Engine, wiki: &str, application_version: &str, retry: Duration) -> Self {
        Self {
            wiki: wiki.to_owned(),
            dir: None,
            application_version: application_version.to_owned(),
            retry,
            current: RwLock::new(Arc::new(
                engine.with_application_version(application_version),
            )),
            opened: Mutex::new(Vec::new()),
            reopening: Mutex::new(Reopening::Idle),
            opening: Mutex::new(()),
        }
    }

    /// The engine to run a request on.
    pub fn engine(&self) -> Arc<Engine> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Opens the files again and swaps the new engine in.
    fn open_now(&self) -> Result<(), String> {
        let Some(dir) = &self.dir else {
            return Err("this engine was not opened from a folder".into());
        };
        let _opening = lock(&self.opening);
        let before = fingerprint(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let engine = open_engine(dir, &self.wiki)
            .map_err(|e| e.to_string())?
            .with_application_version(&self.application_version);
        // Changed while it was read and verified: the copy is not finished.
        if fingerprint(dir).ok().as_ref() != Some(&before) {
            return Err("the files changed while they were being opened".into());
        }
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(engine);
        *lock(&self.opened) = before;
        Ok(())
    }

    /// The engine refused a page because its file changed under it: open the file again
    /// in the background, unless that is under way or failed less than `retry` ago.
    pub fn changed_under_engine(self: &Arc<Self>) {
        {
            let mut state = lock(&self.reopening);
            match *state {
                Reopening::Running => return,
                Reopening::Failed(at) if at.elapsed() < self.retry => return,
                _ => *state = Reopening::Running,
            }
        }
        let live = self.clone();
        let spawned = thread::Builder::new()
            .name(format!("reopen-{}", self.wiki))
            .spawn(move || {
                let outcome = live.open_now();
                let mut state = lock(&live.reopening);
                match outcome {
                    Ok(()) => {
                        log::info!("dataset of {} changed on disk: opened again", live.wiki);
                        *state = Reopening::Idle;
                    }
                    Err(e) => {
                        log::warn!(
                            "dataset of {} changed on disk and cannot be opened yet: {e}",
                            live.wiki
                        );
                        *state = Reopening::Failed(Instant::now());
                    }
                }
            });
        if let Err(e) = spawned {
            log::error!("cannot start reopening the dataset of {}: {e}", self.wiki);
            *lock(&self.reopening) = Reopening::Failed(Instant::now());
        }
    }

    /// The operator's reload: open the files again if they are not the ones the engine
    /// opened, or if the engine's file changed under it. Blocks while opening.
    pub fn reload(&self) -> ReloadOutcome {
        let Some(dir) = &self.dir else {
            return ReloadOutcome::Unchanged;
        };
        let sound = self.engine().dataset().check_unchanged().is_ok();
        let same = fingerprint(dir).ok().as_ref() == Some(&*lock(&self.opened));
        if sound && same {
            return ReloadOutcome::Unchanged;
        }
        match self.open_now() {
            Ok(()) => {
                log::info!("dataset of {} reopened from {}", self.wiki, dir.display());
                *lock(&self.reopening) = Reopening::Idle;
                ReloadOutcome::Reopened
            }
            Err(e) => {
                log::warn!("dataset of {} not reopened: {e}", self.wiki);
                ReloadOutcome::Failed(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_file_renamed_into_place_changes_the_fingerprint() {
        let dir = std::env::temp_dir().join(format!("ws-fingerprint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a"), b"one").unwrap();
        let first = fingerprint(&dir).unwrap();
        assert_eq!(fingerprint(&dir).unwrap(), first);
        std::fs::write(dir.join("a.new"), b"one").unwrap();
        std::fs::rename(dir.join("a.new"), dir.join("a")).unwrap();
        assert_ne!(fingerprint(&dir).unwrap(), first);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
