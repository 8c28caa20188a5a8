//! Link requests beyond `link_workers` wait for a slot instead of all computing at once.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use wikisuggest_core::models::LinkRecommendationSet;
use wikisuggest_server::{BackendError, LinkBackend, LinkRequest, Server, ServerConfig};

/// Takes a while per page and records how many pages it worked on at once.
#[derive(Default)]
struct Counting {
    running: AtomicUsize,
    most: AtomicUsize,
    calls: AtomicUsize,
}

impl LinkBackend for Counting {
    fn wikis(&self) -> Vec<String> {
        vec!["enwiki".into()]
    }

    fn recommend(&self, _: &str, _: &LinkRequest) -> Result<LinkRecommendationSet, BackendError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(150));
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(LinkRecommendationSet {
            links: Vec::new(),
            links_count: Some(0),
            meta: None,
            page_title: None,
            pageid: None,
            revid: None,
            extra: Default::default(),
        })
    }
}

async fn get(addr: std::net::SocketAddr) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let path = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/Cat";
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    String::from_utf8_lossy(&raw).into_owned()
}

async fn most_at_once(link_workers: usize, requests: usize) -> (usize, usize) {
    let pages =
        std::env::temp_dir().join(format!("ws-slots-{}-{link_workers}", std::process::id()));
    std::fs::create_dir_all(&pages).unwrap();
    std::fs::write(pages.join("Cat.wikitext"), "The cat.").unwrap();
    let backend = Arc::new(Counting::default());
    let config = ServerConfig {
        port: 0,
        pages: Some(pages.clone()),
        link_workers,
        ..ServerConfig::default()
    };
    let server = Server::bind_with_backend(config, Some(backend.clone()))
        .await
        .unwrap();
    let addr = server.local_addr();
    let replies: Vec<_> = (0..requests).map(|_| tokio::spawn(get(addr))).collect();
    for reply in replies {
        let reply = reply.await.unwrap();
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    }
    server.shutdown().await.unwrap();
    std::fs::remove_dir_all(&pages).unwrap();
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
