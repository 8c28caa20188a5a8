//! The accept loop: every connection is HTTP/1 with a header-read timeout, and at most
//! `max_connections` are open at once.
//!
//! Without both, clients that open connections and send half a request (slowloris) hold a
//! file descriptor each for ever; enough of them exhaust the process's descriptors and then
//! nobody, `/healthz` included, gets an answer. With the timeout a half-sent request costs
//! its sender a slot for `header_read_timeout` at most; with the cap the server keeps the
//! descriptors it needs and the kernel's listen queue holds the surplus.

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, oneshot, watch};
use tokio::task::JoinSet;

/// Pause after a failed `accept` (e.g. out of descriptors) before trying again, so the loop
/// does not spin while connections are being closed.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub max_connections: usize,
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
    let (closing, closing_seen) = watch::channel(false);
    let mut stop = pin!(stop);
    let mut connections = JoinSet::new();
    loop {
        let permit = tokio::select! {
            _ = &mut stop => break,
            permit = slots.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
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
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let mut closing_seen = closing_seen.clone();
        connections.spawn(async move {
            // The slot is given back when the connection ends, however it ends.
            let _permit = permit;
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout);
            let mut connection = pin!(builder.serve_connection(TokioIo::new(stream), service));
            tokio::select! {
                _ = connection.as_mut() => return,
                _ = closing_seen.changed() => connection.as_mut().graceful_shutdown(),
            }
            let _ = connection.await;
        });
        // Reap finished connections so the set does not grow with every one ever served.
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    let _ = closing.send(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}
