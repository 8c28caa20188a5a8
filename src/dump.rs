//! Binding of the builder's streaming dump reader for `wikisuggest.dump`: the pages of a
//! MediaWiki XML dump in bounded batches. A reader thread parses (and decompresses) ahead
//! of the caller while the caller recommends links for the previous batch; at most two
//! batches wait in between, so memory stays bounded whatever the dump size.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::Duration;

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use wikisuggest_build::BuildError;
use wikisuggest_build::dump::{Page, open_dump};

use crate::errors::{invalid_parameter, wikisuggest_error};

/// `(page_id, revision_id, title, wikitext)` of an article.
type PageTuple = (i64, Option<i64>, String, String);

/// One batch: the articles, then how many dump pages (of any kind) have been read so far.
struct Batch {
    pages: Vec<PageTuple>,
    position: u64,
}

/// Batches waiting between the reader thread and the caller.
const QUEUED_BATCHES: usize = 2;

/// How often a caller waiting for a batch checks for Ctrl-C.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

fn dump_error(error: BuildError) -> PyErr {
    match error {
        BuildError::Io { .. } => PyOSError::new_err(error.to_string()),
        other => wikisuggest_error(&other.to_string()),
    }
}

/// Which pages a batch keeps and how large it may grow.
struct Selection {
    namespaces: Vec<i64>,
    skip_redirects: bool,
    skip_pages: u64,
    max_pages: usize,
    max_bytes: usize,
}

impl Selection {
    fn keeps(&self, page: &Page) -> bool {
        self.namespaces.contains(&page.ns) && !(self.skip_redirects && page.redirect.is_some())
    }
}

/// Reads the dump on this thread until it ends, fails or nobody listens any more.
fn read_batches(path: PathBuf, selection: Selection, tx: SyncSender<Result<Batch, BuildError>>) {
    let mut reader = match open_dump(&path) {
        Ok(reader) => reader,
        Err(error) => {
            let _ = tx.send(Err(error));
            return;
        }
    };
    let mut position = 0u64;
    let mut pages = Vec::new();
    let mut bytes = 0usize;
    loop {
        let page = match reader.next_page() {
            Ok(page) => page,
            Err(error) => {
                let _ = tx.send(Err(error));
                return;
            }
        };
        let Some(page) = page else { break };
        position += 1;
        if position > selection.skip_pages && selection.keeps(&page) {
            bytes += page.text.len();
            pages.push((page.id, page.revision_id, page.title, page.text));
        }
        if pages.len() >= selection.max_pages || bytes >= selection.max_bytes {
            let batch = Batch {
                pages: std::mem::take(&mut pages),
                position,
            };
            bytes = 0;
            if tx.send(Ok(batch)).is_err() {
                return;
            }
        }
    }
    // The last batch may be empty: it still carries the final position.
    let _ = tx.send(Ok(Batch { pages, position }));
}

/// The articles of a dump, in dump order, a bounded batch at a time.
#[pyclass(module = "wikisuggest._native", frozen)]
pub struct NativeDumpPages {
    batches: Mutex<Option<Receiver<Result<Batch, BuildError>>>>,
}

#[pymethods]
impl NativeDumpPages {
    /// Starts reading `path` (`.xml` or `.bz2`, multistream included) after its first
    /// `skip_pages` pages. Batches hold pages of `namespaces` (redirects left out with
    /// `skip_redirects`), at most `max_pages` of them and about `max_bytes` of wikitext.
    #[new]
    #[pyo3(signature = (path, namespaces, skip_redirects, skip_pages, max_pages, max_bytes))]
    fn new(
        path: PathBuf,
        namespaces: Vec<i64>,
        skip_redirects: bool,
        skip_pages: u64,
        max_pages: usize,
        max_bytes: usize,
    ) -> PyResult<Self> {
        if max_pages == 0 || max_bytes == 0 {
            return Err(invalid_parameter(
                "batch_pages",
                "batches must allow at least one page and one byte",
            ));
        }
        if !path.is_file() {
            return Err(PyOSError::new_err(format!(
                "{}: no such dump file",
                path.display()
            )));
        }
        let selection = Selection {
            namespaces,
            skip_redirects,
            skip_pages,
            max_pages,
            max_bytes,
        };
        let (tx, rx) = sync_channel(QUEUED_BATCHES);
        std::thread::Builder::new()
            .name("wikisuggest-dump".into())
            .spawn(move || read_batches(path, selection, tx))
            .map_err(|e| PyOSError::new_err(format!("cannot start the dump reader: {e}")))?;
        Ok(Self {
            batches: Mutex::new(Some(rx)),
        })
    }

    /// The next batch as `(pages, position)`: pages are `(page_id, revision_id, title,
    /// wikitext)`, `position` counts the dump pages read so far. `None` after the last.
    fn next_batch(&self, py: Python<'_>) -> PyResult<Option<(Vec<PageTuple>, u64)>> {
        let mut guard = self
            .batches
            .lock()
            .map_err(|_| wikisuggest_error("the dump reader failed earlier"))?;
        // The receiver moves into the released section and back (it cannot be shared).
        let Some(mut rx) = guard.take() else {
            return Ok(None);
        };
        loop {
            let (back, received) = py.detach(move || {
                let received = rx.recv_timeout(SIGNAL_CHECK);
                (rx, received)
            });
            rx = back;
            match received {
                Ok(Ok(batch)) => {
                    *guard = Some(rx);
                    return Ok(Some((batch.pages, batch.position)));
                }
                Ok(Err(error)) => return Err(dump_error(error)),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(interrupt) = py.check_signals() {
                        *guard = Some(rx);
                        return Err(interrupt);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Ok(None),
            }
        }
    }
}

/// Registers the dump reader.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeDumpPages>()?;
    Ok(())
}
