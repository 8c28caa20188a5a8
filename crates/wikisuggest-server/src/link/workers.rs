//! The engine's threads: one long-lived thread per engine slot, started with the server.
//!
//! A link request that holds slot `i` posts its page to thread `i` and waits for the answer
//! without blocking the I/O threads. The hand-off allocates nothing: each slot has its own
//! place for the page, the answer and the waiting request's waker, made once at start-up,
//! and the page's memory stays with the thread that computes it (a thread per slot keeps
//! its allocator caches warm, where a pool of short-lived threads would start cold).
//!
//! A request that goes away while its page is being computed (client gone, request timed
//! out) tells the engine to stop; the slot is given back when the engine has stopped,
//! never before, so the slots still bound the pages computed at once.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use wikisuggest_core::models::LinkRecommendationSet;

use super::slots::Slot;
use super::{BackendError, LinkBackend, LinkRequest};

/// What a page's computation gives back: the answer, with the wiki and the request it
/// was for (moved to the engine's thread and back, not copied).
pub type Outcome = (
    Result<LinkRecommendationSet, BackendError>,
    String,
    LinkRequest,
);

/// One engine thread per slot of [`super::slots::FairSlots`]; the threads end when this is
/// dropped (after the page they are computing, if any).
pub struct EngineThreads {
    places: Vec<Arc<Place>>,
}

/// Where a slot's request and its thread meet.
struct Place {
    state: Mutex<PlaceState>,
    /// Signalled when a page is posted or the threads are told to stop.
    posted: Condvar,
    /// Set when the request waiting for this page went away: the engine stops early.
    cancel: AtomicBool,
}

#[derive(Default)]
struct PlaceState {
    page: Option<(String, LinkRequest)>,
    done: Option<Outcome>,
    waker: Option<Waker>,
    /// The slot the posted page holds, given back by whichever of the request and the
    /// thread finishes last.
    slot: Option<Slot>,
    /// The request went away before taking its outcome.
    abandoned: bool,
    stop: bool,
}

impl Place {
    fn lock(&self) -> MutexGuard<'_, PlaceState> {
        // Every update is a single step on plain fields: a poisoned lock holds consistent
        // data (and the engine's own panics are caught before they reach it).
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn work(&self, backend: &dyn LinkBackend) {
        loop {
            let (wiki, request) = {
                let mut state = self.lock();
                loop {
                    if state.stop {
                        return;
                    }
                    if let Some(page) = state.page.take() {
                        break page;
                    }
                    state = self
                        .posted
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            // A panic is a defect, not an input error: it answers this request with a 500
            // and leaves the thread serving the next ones.
            let result = catch_unwind(AssertUnwindSafe(|| {
                backend.recommend_cancellable(&wiki, &request, &self.cancel)
            }))
            .unwrap_or_else(|_| Err(BackendError::Failed("the engine's pass panicked".into())));
            let (waker, slot, dropped) = {
                let mut state = self.lock();
                if state.abandoned {
                    (None, state.slot.take(), Some((result, wiki, request)))
                } else {
                    state.done = Some((result, wiki, request));
                    (state.waker.take(), None, None)
                }
            };
            // Outside the lock: waking, giving the slot back (which may post the next
            // page here) and dropping an answer nobody waits for.
            if let Some(waker) = waker {
                waker.wake();
            }
            drop(slot);
            drop(dropped);
        }
    }
}

impl EngineThreads {
    /// `n` threads (at least one) computing pages with `backend`.
    ///
    /// # Errors
    /// The operating system refused a thread.
    pub fn start(n: usize, backend: &Arc<dyn LinkBackend>) -> std::io::Result<Self> {
        let mut threads = Self {
            places: Vec::with_capacity(n.max(1)),
        };
        for _ in 0..n.max(1) {
            let place = Arc::new(Place {
                state: Mutex::new(PlaceState::default()),
                posted: Condvar::new(),
                cancel: AtomicBool::new(false),
            });
            let (own, backend) = (place.clone(), backend.clone());
            std::thread::Builder::new()
                .name("wikisuggest-engine".into())
                .spawn(move || own.work(backend.as_ref()))?;
            // Pushed once started: dropping `threads` on an error stops those before it.
            threads.places.push(place);
        }
        Ok(threads)
    }

    /// Computes `request` for `wiki` on the thread of `slot`, which it holds until the
    /// engine is done with the page. Dropping the returned future before it completes
    /// cancels the computation.
    pub fn compute(&self, slot: Slot, wiki: String, request: LinkRequest) -> Computing {
        let place = self.places[slot.index() % self.places.len()].clone();
        {
            let mut state = place.lock();
            place.cancel.store(false, Ordering::Relaxed);
            state.page = Some((wiki, request));
            state.done = None;
            state.waker = None;
            state.abandoned = false;
            state.slot = Some(slot);
        }
        place.posted.notify_one();
        Computing {
            place,
            taken: false,
        }
    }
}

impl Drop for EngineThreads {
    fn drop(&mut self) {
        for place in &self.places {
            place.lock().stop = true;
            place.posted.notify_one();
        }
    }
}

/// A page being computed; completes with its [`Outcome`].
pub struct Computing {
    place: Arc<Place>,
    taken: bool,
}

impl Future for Computing {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let (done, slot) = {
            let mut state = self.place.lock();
            match state.done.take() {
                Some(done) => (done, state.slot.take()),
                None => {
                    match &mut state.waker {
                        Some(waker) if waker.will_wake(cx.waker()) => {}
                        waker => *waker = Some(cx.waker().clone()),
                    }
                    return Poll::Pending;
                }
            }
        };
        self.taken = true;
        drop(slot);
        Poll::Ready(done)
    }
}

impl Drop for Computing {
    fn drop(&mut self) {
        if self.taken {
            return;
        }
        let (done, slot, page) = {
            let mut state = self.place.lock();
            match state.done.take() {
                // Finished, not taken: the slot is this side's to give back.
                Some(done) => (Some(done), state.slot.take(), None),
                // Not started yet: the thread never sees it, the slot is free at once.
                None if state.page.is_some() => (None, state.slot.take(), state.page.take()),
                None => {
                    self.place.cancel.store(true, Ordering::Relaxed);
                    state.abandoned = true;
                    state.waker = None;
                    (None, None, None)
                }
            }
        };
        drop(slot);
        drop(done);
        drop(page);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::sync::Mutex as StdMutex;
    use std::thread::ThreadId;
    use std::time::{Duration, Instant};

    use super::super::slots::{AppKey, FairSlots};
    use super::*;
    use wikisuggest_records::params::LinkOptions;

    /// Answers with the page's title as `page_title`, records the thread it ran on; a page
    /// titled "panic" panics, one titled "wait" works until cancelled.
    #[derive(Default)]
    struct Recording {
        threads: StdMutex<Vec<ThreadId>>,
        cancelled: AtomicBool,
    }

    impl LinkBackend for Recording {
        fn wikis(&self) -> Vec<String> {
            vec!["enwiki".into()]
        }

        fn recommend_cancellable(
            &self,
            _: &str,
            request: &LinkRequest,
            cancel: &AtomicBool,
        ) -> Result<LinkRecommendationSet, BackendError> {
            self.threads
                .lock()
                .unwrap()
                .push(std::thread::current().id());
            match request.page_title.as_str() {
                "panic" => panic!("a defect"),
                "wait" => {
                    let until = Instant::now() + Duration::from_secs(30);
                    while !cancel.load(Ordering::Relaxed) && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    self.cancelled
                        .store(cancel.load(Ordering::Relaxed), Ordering::SeqCst);
                    Err(BackendError::Failed("stopped".into()))
                }
                title => Ok(LinkRecommendationSet {
                    links: Vec::new(),
                    links_count: Some(0),
                    meta: None,
                    page_title: Some(title.into()),
                    pageid: None,
                    revid: None,
                    extra: Default::default(),
                }),
            }
        }
    }

    fn page(title: &str) -> LinkRequest {
        LinkRequest {
            page_title: title.into(),
            wikitext: "The cat.".into(),
            revid: 1,
            pageid: serde_json::Value::Null,
            options: LinkOptions::default(),
        }
    }

    fn setup(n: usize) -> (Arc<Recording>, Arc<FairSlots>, EngineThreads) {
        let backend = Arc::new(Recording::default());
        let shared: Arc<dyn LinkBackend> = backend.clone();
        let threads = EngineThreads::start(n, &shared).unwrap();
        (backend, FairSlots::new(n), threads)
    }

    #[tokio::test]
    async fn pages_are_computed_on_the_slots_long_lived_thread() {
        let (backend, slots, threads) = setup(1);
        for title in ["A", "B", "C"] {
            let slot = slots.acquire(AppKey::new("app")).await;
            let (result, wiki, request) = threads.compute(slot, "enwiki".into(), page(title)).await;
            assert_eq!(result.unwrap().page_title.as_deref(), Some(title));
            assert_eq!(
                (wiki.as_str(), request.page_title.as_str()),
                ("enwiki", title)
            );
        }
        let ran = backend.threads.lock().unwrap().clone();
        assert_eq!(ran.len(), 3);
        assert!(ran.iter().all(|id| *id == ran[0]), "{ran:?}");
        assert_ne!(ran[0], std::thread::current().id());
        // Every slot came back.
        assert_eq!(slots.load().0, 0);
    }

    #[tokio::test]
    async fn a_panic_answers_its_request_and_the_thread_serves_the_next() {
        let (_backend, slots, threads) = setup(1);
        let slot = slots.acquire(AppKey::new("app")).await;
        let (result, _, _) = threads.compute(slot, "enwiki".into(), page("panic")).await;
        assert!(matches!(result, Err(BackendError::Failed(_))));
        let slot = slots.acquire(AppKey::new("app")).await;
        let (result, _, _) = threads.compute(slot, "enwiki".into(), page("after")).await;
        assert_eq!(result.unwrap().page_title.as_deref(), Some("after"));
    }

    #[tokio::test]
    async fn a_request_that_goes_away_stops_the_engine_and_frees_its_slot_after() {
        let (backend, slots, threads) = setup(1);
        let slot = slots.acquire(AppKey::new("app")).await;
        let computing = threads.compute(slot, "enwiki".into(), page("wait"));
        let gone = tokio::time::timeout(Duration::from_millis(50), computing).await;
        assert!(gone.is_err());
        // The slot comes back once the engine has stopped, and the next page runs.
        let slot = tokio::time::timeout(Duration::from_secs(10), slots.acquire(AppKey::new("app")))
            .await
            .unwrap();
        assert!(backend.cancelled.load(Ordering::SeqCst));
        let (result, _, _) = threads.compute(slot, "enwiki".into(), page("next")).await;
        assert_eq!(result.unwrap().page_title.as_deref(), Some("next"));
    }
}
