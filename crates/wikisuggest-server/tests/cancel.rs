//! Engine work whose request timed out is cancelled, not left running for nobody.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use wikisuggest_core::models::LinkRecommendationSet;
use wikisuggest_server::{BackendError, LinkBackend, LinkRequest, Server, ServerConfig};

/// Works until cancelled (at most a minute), then records that it was.
#[derive(Default)]
struct Endless {
    cancelled: AtomicBool,
}

impl LinkBackend for Endless {
    fn wikis(&self) -> Vec<String> {
        vec!["enwiki".into()]
    }

    fn recommend(&self, _: &str, _: &LinkRequest) -> Result<LinkRecommendationSet, BackendError> {
        Err(BackendError::Failed(
            "only the cancellable form is used".into(),
        ))
    }

    fn recommend_cancellable(
        &self,
        _: &str,
        _: &LinkRequest,
        cancel: &AtomicBool,
    ) -> Result<LinkRecommendationSet, BackendError> {
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
    let pages = std::env::temp_dir().join(format!("ws-cancel-{}", std::process::id()));
    std::fs::create_dir_all(&pages).unwrap();
    std::fs::write(pages.join("Cat.wikitext"), "The cat.").unwrap();
    let backend = Arc::new(Endless::default());
    let config = ServerConfig {
        port: 0,
        pages: Some(pages.clone()),
        request_timeout: Duration::from_millis(300),
        ..ServerConfig::default()
    };
    let server = Server::bind_with_backend(config, Some(backend.clone()))
        .await
        .unwrap();
    let addr = server.local_addr();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let path = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/Cat";
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let reply = String::from_utf8_lossy(&raw);
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    // The work stops soon after the timeout instead of running its minute.
    for _ in 0..400 {
        if backend.cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(backend.cancelled.load(Ordering::SeqCst));
    let _ = std::fs::remove_dir_all(&pages);
}
