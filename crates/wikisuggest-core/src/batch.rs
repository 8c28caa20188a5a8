//! Many requests at once: every item runs as its own task on the client's limits (so the
//! concurrency bound and rate limit hold across the whole batch), and results come back as
//! they complete, each with its input index. One item's failure is that item's result; it
//! never ends the batch. Dropping the stream aborts whatever has not finished.

use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc};
use tokio::task::{JoinHandle, JoinSet};

use crate::client::{Client, PreparedRequest, ResponseKind, Undecoded};
use crate::error::Result;

/// One finished item.
#[derive(Debug)]
pub struct FinishedRequest {
    pub index: usize,
    /// The response, decoded by the reader (which builds its results from the body).
    pub result: Result<Undecoded>,
}

/// The results of a running batch, in completion order.
#[derive(Debug)]
pub struct RequestStream {
    receiver: mpsc::UnboundedReceiver<FinishedRequest>,
    /// Items received by a [`RequestStream::next_group`] that did not return them yet.
    pending: Vec<FinishedRequest>,
    driver: JoinHandle<()>,
    total: usize,
}

impl RequestStream {
    /// Start the batch on `runtime`. Items start in input order, never more at once than the
    /// client's concurrency limit (so a batch of a million pages holds a handful of tasks,
    /// not a million). Requests that failed to prepare (invalid parameters) are reported as
    /// results straight away.
    pub fn spawn(
        client: Arc<Client>,
        requests: Vec<Result<PreparedRequest>>,
        kind: ResponseKind,
        raw: bool,
        runtime: &tokio::runtime::Handle,
    ) -> Self {
        let (sender, receiver) = mpsc::unbounded_channel();
        let total = requests.len();
        let driver = runtime.spawn(async move {
            let slots = Arc::new(Semaphore::new(client.max_concurrency()));
            // Dropping this set (when the driver is aborted) aborts every running item.
            let mut running = JoinSet::new();
            for (index, request) in requests.into_iter().enumerate() {
                let Ok(slot) = slots.clone().acquire_owned().await else {
                    break;
                };
                let sender = sender.clone();
                let client = client.clone();
                running.spawn(async move {
                    let result = match request {
                        Ok(request) => client.fetch_undecoded(&request, kind, raw).await,
                        Err(error) => Err(error),
                    };
                    drop(slot);
                    // The receiver is gone only when the batch was abandoned.
                    let _ = sender.send(FinishedRequest { index, result });
                });
                while running.try_join_next().is_some() {}
            }
            while running.join_next().await.is_some() {}
        });
        Self {
            receiver,
            pending: Vec::new(),
            driver,
            total,
        }
    }

    /// Number of items in the batch.
    pub fn total(&self) -> usize {
        self.total
    }

    /// The next finished item, or `None` when every item has been returned. Cancel-safe.
    pub async fn next(&mut self) -> Option<FinishedRequest> {
        self.receiver.recv().await
    }

    /// The next finished item and every other one already waiting, up to `limit` items; an
    /// empty vector when every item has been returned. Cancel-safe. Handing items over in
    /// groups saves a thread wake-up per item when results arrive faster than they are read.
    pub async fn next_group(&mut self, limit: usize) -> Vec<FinishedRequest> {
        if self.pending.is_empty() {
            match self.receiver.recv().await {
                Some(first) => self.pending.push(first),
                None => return Vec::new(),
            }
            // Let the I/O tasks that are ready finish first: items that complete together
            // then cross to Python together, one wake-up of the reader instead of several.
            // What was received is kept in `pending`, so dropping this future here (a
            // timeout, a cancelled task) loses nothing: the next call returns it.
            tokio::task::yield_now().await;
        }
        while self.pending.len() < limit.max(1) {
            match self.receiver.try_recv() {
                Ok(item) => self.pending.push(item),
                Err(_) => break,
            }
        }
        std::mem::take(&mut self.pending)
    }

    /// Stop every item that has not finished.
    pub fn abort(&mut self) {
        self.driver.abort();
        self.receiver.close();
    }

    /// The items finished and not returned yet, without waiting (after [`abort`](Self::abort):
    /// every item that finished before it).
    pub fn finished(&mut self) -> Vec<FinishedRequest> {
        let mut items = std::mem::take(&mut self.pending);
        while let Ok(item) = self.receiver.try_recv() {
            items.push(item);
        }
        items
    }
}

impl Drop for RequestStream {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::future::Future;
    use std::task::Poll;

    use super::*;
    use crate::error::Error;

    fn item(index: usize) -> FinishedRequest {
        FinishedRequest {
            index,
            result: Err(Error::invalid("page", "test item")),
        }
    }

    #[tokio::test]
    async fn an_aborted_stream_still_returns_what_finished() {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut stream = RequestStream {
            receiver,
            pending: vec![item(0)],
            driver: tokio::spawn(std::future::pending()),
            total: 3,
        };
        sender.send(item(2)).unwrap();
        stream.abort();
        // Nothing is accepted once the stream is aborted.
        assert!(sender.send(item(1)).is_err());
        let indexes: Vec<usize> = stream.finished().iter().map(|i| i.index).collect();
        assert_eq!(indexes, vec![0, 2]);
        assert!(stream.finished().is_empty());
    }

    #[tokio::test]
    async fn a_group_dropped_while_gathering_loses_no_item() {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut stream = RequestStream {
            receiver,
            pending: Vec::new(),
            driver: tokio::spawn(async {}),
            total: 3,
        };
        for index in 0..3 {
            sender.send(item(index)).unwrap();
        }
        // Polled once, the call takes the first item and yields; it is dropped there, as a
        // wait interrupted by Ctrl-C or a cancelled asyncio task drops it.
        {
            let mut call = std::pin::pin!(stream.next_group(10));
            let first = std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await;
            assert!(first.is_pending());
        }
        drop(sender);
        let indexes: Vec<usize> = stream
            .next_group(10)
            .await
            .iter()
            .map(|i| i.index)
            .collect();
        assert_eq!(indexes, vec![0, 1, 2]);
        assert!(stream.next_group(10).await.is_empty());
    }
}
