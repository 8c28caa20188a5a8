//! The accept loop: every connection is HTTP/1 with a header-read timeout, and the open
//! connections are bounded by [`Caps`] (see [`crate::connections`] for who makes room).
//!
//! Without both, clients that open connections and send half a request (slowloris), or
//! that keep connections alive and ask now and then, hold a file descriptor each for ever;
//! enough of them exhaust the process's descriptors or its connection cap, and then nobody,
//! `/healthz` included, gets an answer. Here a new connection takes the place of the one
//! idle the longest; when none can make room (every connection is busy with a request, or
//! was idle for less than a second), the newcomer waits up to a second for a place and is
//! then answered with a 503 and `Connection: close` instead of waiting unanswered: the loop
//! never stops accepting.

use std::net::{IpAddr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::{Frame, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;

use crate::connections::{Caps, Connections, MAX_REFUSING, Socket, Ticket, waiting_cap};

/// Pause after a failed `accept` (e.g. out of descriptors) before trying again, so the loop
/// does not spin while connections are being closed.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(50);

/// How long writing a refusal (and reading what the client sent) may take.
const REFUSAL_TIME: Duration = Duration::from_secs(2);

const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
Content-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: 88\r\n\r\n\
{\"message\":\"Every connection of the server is busy with a request; retry in a moment.\"}\n";

#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub caps: Caps,
}

/// Marks its connection busy for each request, until the answer's body is dropped, and
/// hands the routes the peer's address.
struct Tracked<S> {
    inner: S,
    ticket: Arc<Ticket>,
    peer: SocketAddr,
}

impl<S, B> hyper::service::Service<hyper::Request<B>> for Tracked<S>
where
    S: hyper::service::Service<hyper::Request<B>, Response = hyper::Response<Body>>,
    S::Future: Send + 'static,
{
    type Response = hyper::Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn call(&self, mut request: hyper::Request<B>) -> Self::Future {
        self.ticket.started();
        request.extensions_mut().insert(ConnectInfo(self.peer));
        let finished = Finished(Some(self.ticket.clone()));
        let future = self.inner.call(request);
        Box::pin(async move {
            // If the answer is never made (the connection broke), `finished` is dropped here.
            let response = future.await?;
            Ok(response.map(|body| {
                Body::new(TrackedBody {
                    inner: body,
                    _finished: finished,
                })
            }))
        })
    }
}

/// Tells the table a request is over when dropped.
struct Finished(Option<Arc<Ticket>>);

impl Drop for Finished {
    fn drop(&mut self) {
        if let Some(ticket) = self.0.take() {
            ticket.finished();
        }
    }
}

/// An answer's body that ends its request's busy time when hyper is done with it.
struct TrackedBody {
    inner: Body,
    _finished: Finished,
}

impl hyper::body::Body for TrackedBody {
    type Data = <Body as hyper::body::Body>::Data;
    type Error = <Body as hyper::body::Body>::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Writes the 503 to a connection that found no place, then reads (and drops) what the
/// client sent so that closing does not reset the connection before the answer is read.
async fn refuse(mut stream: TcpStream) {
    let _ = tokio::time::timeout(REFUSAL_TIME, async {
        stream.write_all(REFUSAL).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<(), std::io::Error>(())
    })
    .await;
}

/// Serves one admitted connection until it ends, the server closes, or the table evicts
/// it: an idle connection (no request in flight, perhaps half a request head) is closed at
/// once; a request in flight is finished first.
async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    ticket: Ticket,
    app: Router,
    header_read_timeout: Duration,
    mut closing: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let ticket = Arc::new(ticket);
    let shared = ticket.shared().clone();
    let service = Tracked {
        inner: TowerToHyperService::new(app),
        ticket: ticket.clone(),
        peer,
    };
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    let mut served = pin!(builder.serve_connection(TokioIo::new(stream), service));
    // Declared after `served`, so dropped before it: the connection leaves the table
    // before its socket is closed (the table may look at the socket until then).
    let _leave = Leave(ticket);
    tokio::select! {
        _ = served.as_mut() => return,
        _ = closing.changed() => {}
        () = shared.evicted() => {}
    }
    if shared.in_flight() == 0 {
        return;
    }
    served.as_mut().graceful_shutdown();
    let _ = served.await;
}

/// Takes its connection out of the table when dropped.
struct Leave(Arc<Ticket>);

impl Drop for Leave {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// The socket the table may look at (see [`Connections::admit`]).
fn socket_of(stream: &TcpStream) -> Option<Socket> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        Some(stream.as_raw_fd())
    }
    #[cfg(not(unix))]
    {
        let _ = stream;
        Some(())
    }
}

/// A newcomer that found no place: it waits for one up to [`PLACE_WAIT`], then is refused.
async fn wait_for_place(
    stream: TcpStream,
    peer: SocketAddr,
    table: Arc<Connections>,
    app: Router,
    header_read_timeout: Duration,
    mut closing: watch::Receiver<bool>,
) {
    let admitted = tokio::select! {
        admitted = table.admit_within(peer.ip(), socket_of(&stream), PLACE_WAIT) => admitted,
        _ = closing.changed() => return,
    };
    match admitted {
        Some(ticket) => {
            serve_connection(stream, peer, ticket, app, header_read_timeout, closing).await;
        }
        None => refuse(stream).await,
    }
}

/// One of a bounded number of tasks of a kind (waiting for a place, writing a refusal);
/// given back when dropped.
struct Counted(Arc<AtomicUsize>);

impl Counted {
    fn take(count: &Arc<AtomicUsize>, max: usize) -> Option<Self> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Self(count.clone()))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How long a newcomer that found no place waits for one before it is answered 503.
const PLACE_WAIT: Duration = Duration::from_secs(1);

/// Serve `app` on `listener` until `stop` fires, then let open connections finish their
/// current request (the caller bounds how long that may take).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    stop: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let table = Connections::new(limits.caps);
    let max_waiting = waiting_cap(limits.caps.total);
    // Newcomers waiting for a place, then refusals being written.
    let waiting = Arc::new(AtomicUsize::new(0));
    let refusing = Arc::new(AtomicUsize::new(0));
    let (closing, closing_seen) = watch::channel(false);
    let mut stop = pin!(stop);
    let mut connections = JoinSet::new();
    let timeout = limits.header_read_timeout;
    let mut stopped = false;
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    log::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    continue;
                }
            },
        };
        // Until the newcomer has a place, a wait or a refusal: while every one of those is
        // taken, the loop stops accepting, and further clients queue in the kernel's
        // backlog (answered later) instead of being dropped unanswered.
        loop {
            let closing = closing_seen.clone();
            if let Some(ticket) = table.admit(peer.ip(), socket_of(&stream)) {
                connections.spawn(serve_connection(
                    stream,
                    peer,
                    ticket,
                    app.clone(),
                    timeout,
                    closing,
                ));
            } else if let Some(slot) = Counted::take(&waiting, max_waiting) {
                let (table, app) = (table.clone(), app.clone());
                connections.spawn(async move {
                    wait_for_place(stream, peer, table, app, timeout, closing).await;
                    drop(slot);
                });
            } else if let Some(slot) = Counted::take(&refusing, MAX_REFUSING) {
                connections.spawn(async move {
                    refuse(stream).await;
                    drop(slot);
                });
            } else {
                // Reap, then look again shortly (or stop).
                while connections.try_join_next().is_some() {}
                tokio::select! {
                    _ = &mut stop => stopped = true,
                    () = tokio::time::sleep(ACCEPT_ERROR_PAUSE) => continue,
                }
            }
            break;
        }
        if stopped {
            break;
        }
        // Reap finished connections so the set does not grow with every one ever served.
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    let _ = closing.send(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// The peer address a route sees (set by [`serve`]; absent when the router is driven
/// without a listener).
pub fn peer(request: &axum::http::Request<axum::body::Body>) -> Option<IpAddr> {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_announces_its_length() {
        let text = std::str::from_utf8(REFUSAL).unwrap_or_default();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or_default();
        assert!(
            head.contains(&format!("Content-Length: {}", body.len())),
            "{head}"
        );
        assert!(serde_json::from_str::<serde_json::Value>(body).is_ok());
    }
}
