//! Many pages at once, on several threads, results in input order.

use std::collections::{BTreeMap, VecDeque};
use std::num::NonZeroUsize;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::{Engine, LinkRecommendationSet, RecommendOptions, Stop};
use crate::error::{Error, Result};
/// Text another owner keeps alive and lends to the engine: a binding lends a page's UTF-8
/// this way without copying it (a Python `str`'s own bytes, held by a reference to it).
pub trait LentText: Send + Sync {
    /// The text, valid for as long as `self` lives.
    fn text(&self) -> &str;
}

/// A page's wikitext: a `String`, or text lent by its owner ([`LentText`]). Reads as `&str`.
#[derive(Clone)]
pub enum PageSource {
    /// The engine's own copy.
    Owned(String),
    /// Borrowed from its owner, which stays alive while the page does.
    Lent(Arc<dyn LentText>),
}

impl Default for PageSource {
    fn default() -> Self {
        Self::Owned(String::new())
    }
}

impl std::ops::Deref for PageSource {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Self::Owned(text) => text,
            Self::Lent(lent) => lent.text(),
        }
    }
}

impl From<String> for PageSource {
    fn from(text: String) -> Self {
        Self::Owned(text)
    }
}

impl From<&str> for PageSource {
    fn from(text: &str) -> Self {
        Self::Owned(text.to_owned())
    }
}

impl std::fmt::Debug for PageSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A page runs to tens of thousands of characters: its size says enough.
        write!(f, "PageSource({} bytes)", self.len())
    }
}

/// One page of a batch.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// The page source.
    pub wikitext: PageSource,
    /// The page title (normalised by the engine).
    pub page_title: String,
    /// Echoed in the result.
    pub pageid: Option<i64>,
    /// Echoed in the result.
    pub revid: Option<i64>,
    /// Overrides the batch's language code for this page.
    pub language_code: Option<String>,
}

/// One worker per available core.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

impl Engine {
    /// Recommends links for every page on up to `workers` threads (at least one), and
    /// returns one result per page in input order (see [`BatchStream`]).
    pub fn recommend_batch(
        self: &Arc<Self>,
        pages: impl IntoIterator<Item = Page>,
        options: &RecommendOptions,
        workers: usize,
    ) -> Vec<Result<LinkRecommendationSet>> {
        let stream = match BatchStream::new(self.clone(), options.clone(), workers) {
            Ok(stream) => stream,
            Err(e) => {
                let message = e.to_string();
                return pages
                    .into_iter()
                    .map(|_| Err(Error::Internal(message.clone())))
                    .collect();
            }
        };
        let mut count = 0;
        for page in pages {
            stream.push(page);
            count += 1;
        }
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            out.extend(
                stream
                    .take(Duration::from_secs(3600))
                    .into_iter()
                    // Nothing stops this stream; kept total rather than unreachable.
                    .map(|o| o.unwrap_or_else(|| Err(Error::Internal("page not started".into())))),
            );
        }
        out
    }

    /// Recommends links for one `page`, whose own language code (if any) overrides
    /// `options`'.
    pub fn recommend_page(
        &self,
        page: &Page,
        options: &RecommendOptions,
    ) -> Result<LinkRecommendationSet> {
        let own;
        let options = match &page.language_code {
            Some(code) => {
                let mut with_language = options.clone();
                with_language.link.language_code = Some(code.clone());
                own = with_language;
                &own
            }
            None => options,
        };
        self.recommend(
            &page.wikitext,
            &page.page_title,
            page.pageid,
            page.revid,
            options,
        )
    }

    /// [`Engine::recommend_page`] if it ends within `slice` of wall-clock time, else `None`
    /// (the links found are dropped: the caller runs the page again where it can be
    /// interrupted). A request whose own time budget is no longer than `slice` is answered
    /// whole, as [`Engine::recommend_page`] answers it.
    pub fn recommend_page_within(
        &self,
        page: &Page,
        options: &RecommendOptions,
        slice: Duration,
    ) -> Option<Result<LinkRecommendationSet>> {
        if options.time_budget.is_some_and(|budget| budget <= slice) {
            return Some(self.recommend_page(page, options));
        }
        let sliced = RecommendOptions {
            time_budget: Some(slice),
            ..options.clone()
        };
        // A pass stops at its time budget (here the slice, shorter than the request's own)
        // only by reporting it: any other answer is the page's whole answer.
        match self.recommend_page(page, &sliced) {
            Ok(set) if set.stop == Stop::TimeBudget => None,
            answer => Some(answer),
        }
    }
}

/// Pages in, results out in input order, computed by worker threads that each take the next
/// queued page as soon as they finish one.
///
/// This is the form behind every batch: the caller keeps a few pages per worker queued and
/// takes results as they complete, so no worker waits for the slowest page of a fixed chunk,
/// and memory holds only the pages queued, running or not yet taken. Dropping the stream stops
/// it: pages not started are discarded and the workers end after their current page.
pub struct BatchStream {
    shared: Arc<Shared>,
}

struct Shared {
    engine: Arc<Engine>,
    options: RecommendOptions,
    state: Mutex<State>,
    /// Signalled when a page is queued or the stream stops (workers wait on it).
    queued: Condvar,
    /// Signalled when a page finishes (the consumer waits on it).
    finished: Condvar,
}

#[derive(Default)]
struct State {
    waiting: VecDeque<(u64, Page)>,
    /// Outcomes not taken yet, by sequence number (`None`: stopped before it started); the
    /// consumer takes them in order.
    done: BTreeMap<u64, Option<Result<LinkRecommendationSet>>>,
    pushed: u64,
    taken: u64,
    stopped: bool,
}

impl Shared {
    /// The state, whatever a panicking thread left: every update below is a single step
    /// on plain collections, so a poisoned lock still holds consistent data.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn work(&self) {
        loop {
            let (seq, page) = {
                let mut state = self.lock();
                loop {
                    if state.stopped {
                        return;
                    }
                    if let Some(next) = state.waiting.pop_front() {
                        break next;
                    }
                    state = self
                        .queued
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            // A panic is a defect, not an input error; it becomes this page's error so the
            // batch keeps its other pages and the consumer never waits for a page that died.
            let result = catch_unwind(AssertUnwindSafe(|| {
                self.engine.recommend_page(&page, &self.options)
            }))
            .unwrap_or_else(|_| Err(Error::Internal("the page's pass panicked".into())));
            self.lock().done.insert(seq, Some(result));
            self.finished.notify_all();
        }
    }
}

impl BatchStream {
    /// A stream over `engine` with `workers` threads (at least one).
    pub fn new(engine: Arc<Engine>, options: RecommendOptions, workers: usize) -> Result<Self> {
        let shared = Arc::new(Shared {
            engine,
            options,
            state: Mutex::new(State::default()),
            queued: Condvar::new(),
            finished: Condvar::new(),
        });
        let stream = Self { shared };
        for _ in 0..workers.max(1) {
            let shared = stream.shared.clone();
            std::thread::Builder::new()
                .name("wikisuggest-engine".into())
                .spawn(move || shared.work())
                .map_err(|e| Error::Internal(format!("cannot start a worker thread: {e}")))?;
        }
        Ok(stream)
    }

    /// Queues `page`; after [`stop`](Self::stop) it comes back as `None` (not started).
    pub fn push(&self, page: Page) {
        let mut state = self.shared.lock();
        let seq = state.pushed;
        state.pushed += 1;
        if state.stopped {
            state.done.insert(seq, None);
        } else {
            state.waiting.push_back((seq, page));
            self.shared.queued.notify_one();
        }
    }

    /// Pages pushed whose outcome has not been taken yet.
    pub fn pending(&self) -> u64 {
        let state = self.shared.lock();
        state.pushed - state.taken
    }

    /// Waits at most `timeout` for the outcome of the oldest page not taken yet (its result,
    /// or `None` if the stream stopped before it started), then returns it with every later
    /// one already settled, in input order. Empty when the time ran out
    /// or nothing is pending.
    pub fn take(&self, timeout: Duration) -> Vec<Option<Result<LinkRecommendationSet>>> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        while state.taken < state.pushed && !state.done.contains_key(&state.taken) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Vec::new();
            }
            state = self
                .shared
                .finished
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let mut out = Vec::new();
        loop {
            let seq = state.taken;
            let Some(outcome) = state.done.remove(&seq) else {
                break;
            };
            out.push(outcome);
            state.taken += 1;
        }
        out
    }

    /// Starts no more pages: those still queued come back as `None` (not started);
    /// pages already running finish and are taken as usual.
    pub fn stop(&self) {
        let mut state = self.shared.lock();
        state.stopped = true;
        while let Some((seq, _)) = state.waiting.pop_front() {
            state.done.insert(seq, None);
        }
        self.shared.queued.notify_all();
        self.shared.finished.notify_all();
    }
}

impl Drop for BatchStream {
    fn drop(&mut self) {
        self.stop();
    }
}
