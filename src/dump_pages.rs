//! `NativeDumpPages`: the articles of a dump handed to Python a bounded batch at a time, for
//! callers that need the pages themselves (the rules' preview), not link rows. The one dump
//! reader (`wikisuggest_dump`) runs on a thread of its own, at most two batches ahead.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use wikisuggest_dump::{DumpError, DumpOptions, Page};

use crate::errors::{invalid_parameter, wikisuggest_error};
use crate::runtime::wait_interruptibly;

/// `(page_id, revision_id, title, wikitext)` of an article.
type PageTuple = (i64, Option<i64>, String, String);

/// The articles of a batch, then how many dump pages (of any kind) were read so far.
type Batch = (Vec<PageTuple>, u64);

/// Batches waiting between the reader thread and the caller.
const QUEUED_BATCHES: usize = 2;

fn dump_error(error: DumpError) -> PyErr {
    match error {
        DumpError::Io { .. } => PyOSError::new_err(error.to_string()),
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

/// Reads the dump until it ends, fails or nobody listens any more.
fn read_batches(path: PathBuf, selection: Selection, tx: SyncSender<Result<Batch, DumpError>>) {
    let mut reader = match wikisuggest_dump::open(&path, &DumpOptions::default()) {
        Ok(reader) => reader,
        Err(error) => {
            let _ = tx.send(Err(error));
            return;
        }
    };
    let (mut position, mut pages, mut bytes) = (0u64, Vec::new(), 0usize);
    loop {
        let page = match reader.next_page() {
            Ok(Some(page)) => page,
            Ok(None) => break,
            Err(error) => {
                let _ = tx.send(Err(error));
                return;
            }
        };
        position += 1;
        if position > selection.skip_pages && selection.keeps(&page) {
            bytes += page.text.len();
            pages.push((page.id, page.revision_id, page.title, page.text));
        }
        if pages.len() >= selection.max_pages || bytes >= selection.max_bytes {
            bytes = 0;
            if tx.send(Ok((std::mem::take(&mut pages), position))).is_err() {
                return;
            }
        }
    }
    // The last batch may be empty: it still carries the final position.
    let _ = tx.send(Ok((pages, position)));
}

/// The articles of a dump, in dump order, a bounded batch at a time.
#[pyclass(module = "wikisuggest._native", frozen)]
pub struct NativeDumpPages {
    batches: Mutex<Option<Receiver<Result<Batch, DumpError>>>>,
}

#[pymethods]
impl NativeDumpPages {
    /// Starts reading `path` after its first `skip_pages` pages. Batches hold pages of
    /// `namespaces` (redirects left out with `skip_redirects`), at most `max_pages` of them
    /// and about `max_bytes` of wikitext.
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

    /// The next batch as `(pages, position)`, waited for interruptibly; `None` after the last.
    fn next_batch(&self, py: Python<'_>) -> PyResult<Option<Batch>> {
        let taken = self
            .batches
            .lock()
            .map_err(|_| wikisuggest_error("the dump reader is unusable after a failure"))?
            .take();
        let Some(rx) = taken else {
            return Ok(None);
        };
        // `detach` needs a `Sync` closure; a `Receiver` is only `Send`.
        let rx = Mutex::new(rx);
        let got = wait_interruptibly(py, |interval| {
            let rx = rx.lock().ok()?;
            match rx.recv_timeout(interval) {
                Ok(batch) => Some(Some(batch)),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => Some(None),
            }
        });
        let keep = |rx: Mutex<Receiver<_>>| {
            if let (Ok(mut slot), Ok(rx)) = (self.batches.lock(), rx.into_inner()) {
                *slot = Some(rx);
            }
        };
        match got {
            Err(signal) => {
                // Interrupted: the reader is still there for the next call.
                keep(rx);
                Err(signal)
            }
            Ok(Some(Ok(batch))) => {
                keep(rx);
                Ok(Some(batch))
            }
            Ok(Some(Err(error))) => Err(dump_error(error)),
            Ok(None) => Ok(None),
        }
    }
}
