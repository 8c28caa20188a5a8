//! The accept loop: every connection is HTTP/1 with a header-read timeout, and at most
//! `max_connections` are open at once.
//!
//! Without both, clients that open connections and send half a request (slowloris) hold a
//! file descriptor each for ever; enough of them exhaust the process's descriptors and then
//! nobody, `/healthz` included, gets an answer. With the timeout a half-sent request costs
//! its sender a slot for `header_read_timeout` at most. With the cap the server keeps the
//! descriptors it needs; when all slots are taken, a new client gets the slot of the
//! connection that has waited longest without ever completing a request head, so a flood of
//! half-sent requests cannot keep a well-behaved client out even until the timeout.

use std::collections::VecDeque;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore, oneshot, watch};
use tokio::task::JoinSet;

/// Pause after a failed `accept` (e.g. out of descriptors) before trying again, so the loop
/// does not spin while connections are being closed.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub max_connections: usize,
}

/// One connection, as the eviction queue sees it.
#[derive(Default)]
struct Connection {
    /// Set once a complete request head has arrived: from then on it is a client being
    /// served, never evicted.
    started: AtomicBool,
    evict: Notify,
}

/// Connections in the order they were accepted, for eviction. Held weakly: a connection
/// that ended is skipped.
struct Waiting {
    queue: Mutex<VecDeque<Weak<Connection>>>,
    /// Above this length the queue is pruned of connections that ended or started.
    prune_at: usize,
}

impl Waiting {
    fn new(max_connections: usize) -> Self {
        Self {
            queue: Mutex::new(VecDeque::new()),
            prune_at: max_connections.saturating_mul(2).max(16),
        }
    }

    fn push(&self, connection: &Arc<Connection>) {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if queue.len() >= self.prune_at {
            queue.retain(|c| {
                c.upgrade()
                    .is_some_and(|c| !c.started.load(Ordering::Acquire))
            });
        }
        queue.push_back(Arc::downgrade(connection));
    }

    /// Ask the oldest connection that never completed a request head to close.
    fn evict_oldest(&self) {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(entry) = queue.pop_front() {
            if let Some(connection) = entry.upgrade()
                && !connection.started.load(Ordering::Acquire)
            {
                connection.evict.notify_one();
                return;
            }
        }
    }
}

/// Marks its connection as started when the first request head has been read.
struct MarkStarted<S> {
    inner: S,
    connection: Arc<Connection>,
}

impl<S, R> hyper::service::Service<R> for MarkStarted<S>
where
    S: hyper::service::Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn call(&self, request: R) -> Self::Future {
        self.connection.started.store(true, Ordering::Release);
        self.inner.call(request)
    }
}

/// Serve `app` on `listener` until `stop` fires, then let open connections finish their
/// current request (the caller bounds how long that may take).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    stop: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let waiting = Waiting::new(limits.max_connections);
    let (closing, closing_seen) = watch::channel(false);
    let mut stop = pin!(stop);
    let mut connections = JoinSet::new();
    loop {
        let stream = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    log::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    continue;
                }
            },
        };
        let permit = match slots.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                // Full: make room at the expense of whoever has sent the least.
                waiting.evict_oldest();
                tokio::select! {
                    _ = &mut stop => break,
                    permit = slots.clone().acquire_owned() => match permit {
                        Ok(permit) => permit,
                        Err(_) => break,
                    },
                }
            }
        };
        let _ = stream.set_nodelay(true);
        let connection = Arc::new(Connection::default());
        waiting.push(&connection);
        let service = MarkStarted {
            inner: TowerToHyperService::new(app.clone()),
            connection: connection.clone(),
        };
        let mut closing_seen = closing_seen.clone();
        connections.spawn(async move {
            // The slot is given back when the connection ends, however it ends.
            let _permit = permit;
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout);
            let mut served = pin!(builder.serve_connection(TokioIo::new(stream), service));
            loop {
                tokio::select! {
                    _ = served.as_mut() => return,
                    _ = closing_seen.changed() => {
                        // A request in progress is finished; half a request head is not
                        // waited for.
                        if !connection.started.load(Ordering::Acquire) {
                            return;
                        }
                        served.as_mut().graceful_shutdown();
                        break;
                    }
                    _ = connection.evict.notified() => {
                        // Dropped without an answer: it never finished asking anything.
                        if !connection.started.load(Ordering::Acquire) {
                            return;
                        }
                    }
                }
            }
            let _ = served.await;
        });
        // Reap finished connections so the set does not grow with every one ever served.
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    let _ = closing.send(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}
