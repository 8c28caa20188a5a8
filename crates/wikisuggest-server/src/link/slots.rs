//! The engine's slots, shared fairly between apps.
//!
//! At most `n` link requests are computed at once. When a slot frees up, it goes to the
//! app (a bearer token's client, a personal token, or an anonymous client address) that
//! holds the fewest slots among those waiting, and within one app to its oldest request. So
//! an app that sends many heavy requests at once gets the slots only while nobody else
//! wants one: another app's request waits for the next slot that frees, at most one
//! request's time budget, never behind the heavy app's queue. The slots are never left
//! idle while anyone waits.
//!
//! Each slot has a number, and a slot's requests are computed by that slot's own engine
//! thread (see [`super::workers`]); a slot given back is the first taken again, so the
//! thread that ran last, whose caches are warm, runs next.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::oneshot;

/// Who a request counts against.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AppKey(pub Arc<str>);

impl AppKey {
    pub fn new(key: impl Into<Arc<str>>) -> Self {
        Self(key.into())
    }
}

struct Waiter {
    ticket: u64,
    granted: oneshot::Sender<usize>,
}

#[derive(Default)]
struct Queues {
    /// The numbers of the free slots; the last given back is taken first.
    free: Vec<usize>,
    next_ticket: u64,
    /// Slots held, per app holding any.
    running: HashMap<AppKey, usize>,
    /// Requests waiting, per app with any, oldest first.
    waiting: HashMap<AppKey, VecDeque<Waiter>>,
}

impl Queues {
    /// Gives free slots to waiting requests, fewest-held app first (ties: oldest request).
    fn grant(&mut self) {
        while !self.free.is_empty() {
            let next = self
                .waiting
                .iter()
                .filter_map(|(app, queue)| {
                    let oldest = queue.front()?.ticket;
                    Some((self.running.get(app).copied().unwrap_or(0), oldest, app))
                })
                .min()
                .map(|(_, _, app)| app.clone());
            let Some(app) = next else {
                return;
            };
            let waiter = self.waiting.get_mut(&app).and_then(VecDeque::pop_front);
            if self.waiting.get(&app).is_some_and(VecDeque::is_empty) {
                self.waiting.remove(&app);
            }
            let Some(waiter) = waiter else {
                continue;
            };
            let Some(index) = self.free.pop() else {
                return;
            };
            // A waiter that went away gets nothing; the slot stays free for the next.
            match waiter.granted.send(index) {
                Ok(()) => *self.running.entry(app).or_default() += 1,
                Err(index) => self.free.push(index),
            }
        }
    }

    fn release(&mut self, app: &AppKey, index: usize) {
        if let Some(held) = self.running.get_mut(app) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                self.running.remove(app);
            }
        }
        self.free.push(index);
        self.grant();
    }
}

/// `n` engine slots.
pub struct FairSlots {
    queues: Mutex<Queues>,
}

/// A slot held; given back when dropped.
pub struct Slot {
    slots: Arc<FairSlots>,
    app: AppKey,
    index: usize,
}

impl Slot {
    /// The slot's number, below the number of slots.
    pub fn index(&self) -> usize {
        self.index
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.lock().release(&self.app, self.index);
    }
}

/// Takes a waiter out of its queue when the wait is given up (the request went away),
/// and gives back a slot granted just before that.
struct Waiting<'a> {
    slots: &'a Arc<FairSlots>,
    app: &'a AppKey,
    ticket: u64,
    granted: Option<oneshot::Receiver<usize>>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let Some(mut granted) = self.granted.take() else {
            return;
        };
        let mut queues = self.slots.lock();
        if let Some(queue) = queues.waiting.get_mut(self.app) {
            queue.retain(|w| w.ticket != self.ticket);
            if queue.is_empty() {
                queues.waiting.remove(self.app);
            }
        }
        // Granted between the last poll and now: the slot is ours to give back.
        if let Ok(index) = granted.try_recv() {
            queues.release(self.app, index);
        }
    }
}

impl FairSlots {
    pub fn new(n: usize) -> Arc<Self> {
        Arc::new(Self {
            queues: Mutex::new(Queues {
                // Reversed: slot 0 is taken first.
                free: (0..n.max(1)).rev().collect(),
                ..Queues::default()
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Queues> {
        self.queues.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for a slot for `app`'s request.
    pub async fn acquire(self: &Arc<Self>, app: AppKey) -> Slot {
        loop {
            let (ticket, granted) = {
                let mut queues = self.lock();
                if queues.waiting.is_empty()
                    && let Some(index) = queues.free.pop()
                {
                    *queues.running.entry(app.clone()).or_default() += 1;
                    return Slot {
                        slots: self.clone(),
                        app,
                        index,
                    };
                }
                let ticket = queues.next_ticket;
                queues.next_ticket += 1;
                let (tx, rx) = oneshot::channel();
                queues
                    .waiting
                    .entry(app.clone())
                    .or_default()
                    .push_back(Waiter {
                        ticket,
                        granted: tx,
                    });
                queues.grant();
                (ticket, rx)
            };
            let mut waiting = Waiting {
                slots: self,
                app: &app,
                ticket,
                granted: Some(granted),
            };
            let got = match waiting.granted.as_mut() {
                Some(rx) => rx.await.ok(),
                None => None,
            };
            // Granted: counted for `app` by `grant`, no clean-up left to do.
            waiting.granted = None;
            drop(waiting);
            // The sender is only dropped unsent by this request's own clean-up, never
            // here; should it be, the request queues again.
            if let Some(index) = got {
                return Slot {
                    slots: self.clone(),
                    app,
                    index,
                };
            }
        }
    }

    /// Slots held and requests waiting, per app (for tests and logs).
    pub fn load(&self) -> (usize, usize) {
        let queues = self.lock();
        let held = queues.running.values().sum();
        let waiting = queues.waiting.values().map(VecDeque::len).sum();
        (held, waiting)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::sync::Mutex as StdMutex;

    use super::*;

    fn app(name: &str) -> AppKey {
        AppKey::new(name)
    }

    #[tokio::test]
    async fn a_free_slot_goes_to_the_app_holding_fewest() {
        let slots = FairSlots::new(2);
        let order = Arc::new(StdMutex::new(Vec::new()));
        let heavy1 = slots.acquire(app("heavy")).await;
        let heavy2 = slots.acquire(app("heavy")).await;
        let mut tasks = Vec::new();
        // Five more heavy requests queue first, then one light one.
        for i in 0..6 {
            let (shared, order) = (slots.clone(), order.clone());
            let name = if i < 5 { "heavy" } else { "light" };
            tasks.push(tokio::spawn(async move {
                let slot = shared.acquire(app(name)).await;
                order.lock().unwrap().push(name);
                slot
            }));
            tokio::task::yield_now().await;
            while slots.load().1 < i + 1 {
                tokio::task::yield_now().await;
            }
        }
        drop(heavy1);
        // The light request takes the freed slot, ahead of four older heavy ones.
        let light = tasks.pop().unwrap().await.unwrap();
        assert_eq!(order.lock().unwrap().as_slice(), ["light"]);
        drop(light);
        drop(heavy2);
        for task in tasks {
            drop(task.await.unwrap());
        }
        assert_eq!(order.lock().unwrap().len(), 6);
        assert_eq!(slots.load(), (0, 0));
    }

    #[tokio::test]
    async fn a_waiter_that_goes_away_leaves_nothing_behind() {
        let slots = FairSlots::new(1);
        let held = slots.acquire(app("a")).await;
        let waiting = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire(app("b")).await }
        });
        while slots.load().1 == 0 {
            tokio::task::yield_now().await;
        }
        waiting.abort();
        let _ = waiting.await;
        assert_eq!(slots.load(), (1, 0));
        drop(held);
        // The slot is free again: taken at once.
        let again = slots.acquire(app("c")).await;
        assert_eq!(slots.load(), (1, 0));
        drop(again);
    }
}
