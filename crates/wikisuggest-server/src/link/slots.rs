//! The engine's slots, shared fairly between apps.
//!
//! At most `n` link requests are computed at once. When a slot frees up, it goes to the
//! app (a bearer token's client, a personal token, or an anonymous client address) that
//! holds the fewest slots among those waiting, and within one app to its oldest request. So
//! an app that sends many heavy requests at once gets the slots only while nobody else
//! wants one: another app's request waits for the next slot that frees, at most one
//! request's time budget, never behind the heavy app's queue. The slots are never left
//! idle while anyone waits.

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
    granted: oneshot::Sender<()>,
}

#[derive(Default)]
struct Queues {
    free: usize,
    next_ticket: u64,
    /// Slots held, per app holding any.
    running: HashMap<AppKey, usize>,
    /// Requests waiting, per app with any, oldest first.
    waiting: HashMap<AppKey, VecDeque<Waiter>>,
}

impl Queues {
    /// Gives free slots to waiting requests, fewest-held app first (ties: oldest request).
    fn grant(&mut self) {
        while self.free > 0 {
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
            // A waiter that went away gets nothing; the slot stays free for the next.
            if waiter.granted.send(()).is_ok() {
                self.free -= 1;
                *self.running.entry(app).or_default() += 1;
            }
        }
    }

    fn release(&mut self, app: &AppKey) {
        if let Some(held) = self.running.get_mut(app) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                self.running.remove(app);
            }
        }
        self.free += 1;
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
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.lock().release(&self.app);
    }
}

/// Takes a waiter out of its queue when the wait is given up (the request went away),
/// and gives back a slot granted just before that.
struct Waiting<'a> {
    slots: &'a Arc<FairSlots>,
    app: &'a AppKey,
    ticket: u64,
    granted: Option<oneshot::Receiver<()>>,
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
        if granted.try_recv().is_ok() {
            queues.release(self.app);
        }
    }
}

impl FairSlots {
    pub fn new(n: usize) -> Arc<Self> {
        Arc::new(Self {
            queues: Mutex::new(Queues {
                free: n.max(1),
                ..Queues::default()
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Queues> {
        self.queues.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for a slot for `app`'s request.
    pub async fn acquire(self: &Arc<Self>, app: AppKey) -> Slot {
        let (ticket, granted) = {
            let mut queues = self.lock();
            if queues.free > 0 && queues.waiting.is_empty() {
                queues.free -= 1;
                *queues.running.entry(app.clone()).or_default() += 1;
                return Slot {
                    slots: self.clone(),
                    app,
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
            Some(rx) => rx.await.is_ok(),
            None => false,
        };
        // Granted: counted for `app` by `grant`, no clean-up left to do.
        waiting.granted = None;
        drop(waiting);
        if !got {
            // The sender is only dropped unsent by this request's own clean-up: never
            // here. Count the slot anyway so that giving it back stays balanced.
            let mut queues = self.lock();
            queues.free = queues.free.saturating_sub(1);
            *queues.running.entry(app.clone()).or_default() += 1;
        }
        Slot {
            slots: self.clone(),
            app,
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
