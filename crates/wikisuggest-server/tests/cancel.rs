//! Engine work whose request timed out is cancelled, not left running for nobody.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use wikisuggest_server::{BackendError, LinkRequest, Server, ServerConfig};

use support::{Answer, StandIn};

/// Works until cancelled (at most a minute), then records that it was.
#[derive(Default)]
struct Endless {
    cancelled: AtomicBool,
}

impl StandIn for Endless {
    fn answer(&self, _: &LinkRequest, cancel: &AtomicBool) -> Answer {
        let until = Instant::now() + Duration::from_secs(60);
        while Instant::now() < until {
            if cancel.load(Ordering::Relaxed) {
                self.cancelled.store(true, Ordering::SeqCst);
                return Err(BackendError::Failed("cancelled".into()));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Err(BackendError::Failed("never cancelled".into()))
    }
}

#[tokio::test]
async fn a_timed_out_request_cancels_its_engine_work() {
    let pages = support::cat_pages("cancel");
    let backend = Arc::new(Endless::default());
    let config = ServerConfig {
        port: 0,
        pages: Some(pages.to_path_buf()),
        request_timeout: Duration::from_millis(300),
        ..ServerConfig::default()
    };
    let server = Server::bind_with_backend(config, support::enwiki(&backend))
        .await
        .unwrap();
    let addr = server.local_addr();
    let reply = support::get_cat(addr).await;
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    // The work stops soon after the timeout instead of running its minute.
    for _ in 0..400 {
        if backend.cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(backend.cancelled.load(Ordering::SeqCst));
}
