//! Link requests beyond `link_workers` wait for a slot instead of all computing at once.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use wikisuggest_server::{LinkRequest, Server, ServerConfig};

use support::{Answer, StandIn};

/// Takes a while per page and records how many pages it worked on at once.
#[derive(Default)]
struct Counting {
    running: AtomicUsize,
    most: AtomicUsize,
    calls: AtomicUsize,
}

impl StandIn for Counting {
    fn answer(&self, _: &LinkRequest, _: &AtomicBool) -> Answer {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(150));
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(support::no_links())
    }
}

async fn most_at_once(link_workers: usize, requests: usize) -> (usize, usize) {
    let pages = support::cat_pages(&format!("slots-{link_workers}"));
    let backend = Arc::new(Counting::default());
    let config = ServerConfig {
        port: 0,
        pages: Some(pages.to_path_buf()),
        link_workers,
        ..ServerConfig::default()
    };
    let server = Server::bind_with_backend(config, support::enwiki(&backend))
        .await
        .unwrap();
    let addr = server.local_addr();
    let replies: Vec<_> = (0..requests)
        .map(|_| tokio::spawn(support::get_cat(addr)))
        .collect();
    for reply in replies {
        let reply = reply.await.unwrap();
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    }
    server.shutdown().await.unwrap();
    (
        backend.most.load(Ordering::SeqCst),
        backend.calls.load(Ordering::SeqCst),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_requests_wait_for_a_free_slot() {
    assert_eq!(most_at_once(1, 4).await, (1, 4));
    let (most, calls) = most_at_once(2, 6).await;
    assert_eq!(calls, 6);
    assert!(most <= 2, "{most} pages computed at once with 2 slots");
}
