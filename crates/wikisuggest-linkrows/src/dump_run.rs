//! The articles of a dump through the engine, as record batches of link rows: the dump is
//! read (and decompressed) on threads of its own, pages run on the engine's workers, and the
//! rows come out in dump order, a batch every so many articles.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arrow_array::RecordBatch;
use wikisuggest_dump::{DumpError, DumpOptions};
use wikisuggest_engine::{
    BatchStream, Engine, Error as EngineError, LinkRecommendationSet, RecommendOptions,
};

use crate::articles::{Articles, Selection, engine_page};
use crate::rows::{PageKey, RowBuilder, error_text};

/// Which pages a run keeps and how it cuts its rows into batches.
#[derive(Debug, Clone)]
pub struct DumpRunOptions {
    /// The wiki id written in every row.
    pub wiki_db: String,
    /// The pages kept, and those an earlier run has done.
    pub selection: Selection,
    /// Kept pages per batch of rows.
    pub pages_per_batch: u64,
    /// Rows after which a batch ends early (a page's rows are never split).
    pub rows_per_batch: usize,
    /// Engine threads.
    pub workers: usize,
    /// How the dump is read.
    pub dump: DumpOptions,
}

/// The rows of consecutive pages of the dump.
#[derive(Debug)]
pub struct RowBatch {
    /// The rows, in dump order.
    pub rows: RecordBatch,
    /// Pages kept (each gave its links or one error row).
    pub pages: u64,
    /// Link rows.
    pub links: u64,
    /// Error rows.
    pub errors: u64,
    /// Dump pages (of any kind) read up to the batch's last page: where a run resumes.
    pub position: u64,
}

/// What a run hands over next.
#[derive(Debug)]
pub enum RunEvent {
    /// A batch of rows; more follow.
    Batch(RowBatch),
    /// The last batch: the dump has been read to its `</mediawiki>`.
    Last(RowBatch),
    /// The dump cannot be read further; the batches before stand.
    Failed(DumpError),
    /// The run failed for a reason of its own (a defect); the batches before stand.
    Broken(String),
}

/// A run over a dump; dropping it stops the reading and the engine's workers.
pub struct DumpRun {
    // A mutex makes the run shareable between threads (a receiver alone is not `Sync`).
    events: Mutex<Receiver<RunEvent>>,
    stopped: Arc<AtomicBool>,
}

impl DumpRun {
    /// Starts reading `path` and recommending links for its pages with `recommend`.
    pub fn start(
        engine: Arc<Engine>,
        path: PathBuf,
        recommend: RecommendOptions,
        options: DumpRunOptions,
    ) -> std::io::Result<Self> {
        let (send, events) = sync_channel(1);
        let stopped = Arc::new(AtomicBool::new(false));
        let stop = stopped.clone();
        std::thread::Builder::new()
            .name("wikisuggest-dump".into())
            .spawn(move || {
                let mut run = Coordinator {
                    send,
                    options,
                    recommend,
                    queue: VecDeque::new(),
                    outcomes: VecDeque::new(),
                    rows: RowBuilder::new(),
                    pages: 0,
                    stopped: stop,
                };
                run.run(engine, &path);
            })?;
        Ok(Self {
            events: Mutex::new(events),
            stopped,
        })
    }

    /// Stops the run: no page starts any more, and no further event comes. Pages running
    /// finish in the background. Dropping the run stops it too.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// The next event, waiting at most `timeout`: `None` when the time ran out,
    /// `Some(None)` after the last event ([`RunEvent::Last`], [`RunEvent::Failed`] or
    /// [`RunEvent::Broken`]).
    pub fn next(&self, timeout: Duration) -> Option<Option<RunEvent>> {
        let events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        match events.recv_timeout(timeout) {
            Ok(event) => Some(Some(event)),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(None),
        }
    }
}

/// A page read and not settled yet, in dump order.
enum Pending {
    /// Its result will come from the engine.
    Engine { key: OwnedKey, position: u64 },
    /// It could not be read: its error row.
    Error {
        key: OwnedKey,
        error: String,
        position: u64,
    },
}

struct OwnedKey {
    page_id: Option<i64>,
    revision_id: Option<i64>,
    title: Option<String>,
}

/// Pages queued in the engine per worker: enough that no worker waits for the next page or
/// behind one long page, few enough that memory stays flat.
const PAGES_PER_WORKER: usize = 8;

struct Coordinator {
    send: SyncSender<RunEvent>,
    options: DumpRunOptions,
    recommend: RecommendOptions,
    queue: VecDeque<Pending>,
    outcomes: VecDeque<Result<LinkRecommendationSet, EngineError>>,
    rows: RowBuilder,
    pages: u64,
    stopped: Arc<AtomicBool>,
}

impl Coordinator {
    fn run(&mut self, engine: Arc<Engine>, path: &std::path::Path) {
        let mut reader =
            match Articles::open(path, self.options.selection.clone(), &self.options.dump) {
                Ok(reader) => reader,
                Err(error) => {
                    let _ = self.send.send(RunEvent::Failed(error));
                    return;
                }
            };
        let workers = self.options.workers.max(1);
        let stream = match BatchStream::new(engine, self.recommend.clone(), workers) {
            Ok(stream) => stream,
            Err(error) => {
                let failure = std::io::Error::other(error.to_string());
                let _ = self.send.send(RunEvent::Failed(DumpError::Io {
                    path: path.to_owned(),
                    source: failure,
                }));
                return;
            }
        };
        let window = workers * PAGES_PER_WORKER;
        let mut in_engine = 0usize;
        let mut failure: Option<DumpError> = None;
        let mut reading = true;
        loop {
            if self.stopped.load(Ordering::SeqCst) {
                return;
            }
            while reading && in_engine < window {
                let next = reader.next_article();
                let position = reader.position();
                match next {
                    Err(error) => {
                        failure = Some(error);
                        reading = false;
                    }
                    Ok(None) => reading = false,
                    Ok(Some(Ok(page))) => {
                        let key = OwnedKey {
                            page_id: Some(page.id),
                            revision_id: page.revision_id,
                            title: Some(page.title.clone()),
                        };
                        stream.push(engine_page(page));
                        in_engine += 1;
                        self.queue.push_back(Pending::Engine { key, position });
                    }
                    Ok(Some(Err(error))) => {
                        self.queue.push_back(Pending::Error {
                            error: error_text("WikitextError", &error),
                            key: OwnedKey {
                                page_id: error.id,
                                revision_id: error.revision_id,
                                title: error.title,
                            },
                            position,
                        });
                    }
                }
            }
            // Settle what is ready at the front of the queue, in dump order.
            if self.outcomes.is_empty() && in_engine > 0 {
                let wait = if reading {
                    Duration::from_millis(20)
                } else {
                    Duration::from_secs(1)
                };
                for outcome in stream.take(wait) {
                    in_engine -= 1;
                    self.outcomes.push_back(outcome.unwrap_or_else(|| {
                        Err(EngineError::Internal("the page was not started".into()))
                    }));
                }
            }
            if !self.settle() {
                return;
            }
            if !reading && self.queue.is_empty() {
                break;
            }
        }
        let _ = match (self.batch(reader.position()), failure) {
            (Err(broken), _) => self.send.send(broken),
            (Ok(last), None) => self.send.send(RunEvent::Last(last)),
            (Ok(last), Some(error)) => self
                .send
                .send(RunEvent::Batch(last))
                .and_then(|()| self.send.send(RunEvent::Failed(error))),
        };
    }

    /// Adds the rows of the settled pages at the front of the queue, handing over a batch
    /// whenever one is full; `false` once nobody takes batches any more.
    fn settle(&mut self) -> bool {
        loop {
            let position = match self.queue.front() {
                Some(Pending::Error { .. }) => {
                    let Some(Pending::Error {
                        key,
                        error,
                        position,
                    }) = self.queue.pop_front()
                    else {
                        return true;
                    };
                    self.rows
                        .add_error(&key.borrowed(&self.options.wiki_db), &error);
                    position
                }
                Some(Pending::Engine { .. }) if !self.outcomes.is_empty() => {
                    let (Some(Pending::Engine { key, position }), Some(outcome)) =
                        (self.queue.pop_front(), self.outcomes.pop_front())
                    else {
                        return true;
                    };
                    let key = key.borrowed(&self.options.wiki_db);
                    self.rows
                        .add_outcome(&key, &outcome, self.recommend.time_budget);
                    position
                }
                _ => return true,
            };
            self.pages += 1;
            if self.pages >= self.options.pages_per_batch
                || self.rows.rows() >= self.options.rows_per_batch
            {
                let event = self.batch(position).map_or_else(|e| e, RunEvent::Batch);
                let broken = matches!(event, RunEvent::Broken(_));
                if self.send.send(event).is_err() || broken {
                    return false;
                }
            }
        }
    }

    /// The rows collected so far, up to dump page `position`.
    fn batch(&mut self, position: u64) -> Result<RowBatch, RunEvent> {
        let (links, errors, pages) = (self.rows.links(), self.rows.errors(), self.pages);
        self.pages = 0;
        let rows = self
            .rows
            .finish()
            .map_err(|e| RunEvent::Broken(format!("internal error: link rows: {e}")))?;
        Ok(RowBatch {
            rows,
            pages,
            links,
            errors,
            position,
        })
    }
}

impl OwnedKey {
    fn borrowed<'a>(&'a self, wiki_db: &'a str) -> PageKey<'a> {
        PageKey {
            wiki_db: Some(wiki_db),
            page_id: self.page_id,
            revision_id: self.revision_id,
            page_title: self.title.as_deref(),
        }
    }
}

impl Drop for DumpRun {
    fn drop(&mut self) {
        self.stop();
    }
}
