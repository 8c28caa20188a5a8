//! The engine's slots are shared between apps: one app's many requests cannot keep
//! another's waiting behind them, and each request's engine time is bounded.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use wikisuggest_server::{LinkRequest, RunningServer, Server, ServerConfig};

use support::{Answer, StandIn, TempDir};

const LINKS: &str = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en";
const CLIENTS: &str = r#"
[[personal_tokens]]
token = "heavy-app-token-0123456789"
name = "heavy"
[[personal_tokens]]
token = "light-app-token-0123456789"
name = "light"
"#;

/// A folder of its own (removed when dropped) with the clients.
fn with_clients(name: &str) -> TempDir {
    let dir = TempDir::new(&format!("fair-{name}"));
    std::fs::write(dir.join("clients.toml"), CLIENTS).unwrap();
    dir
}

/// POSTs `wikitext` for `title` with `token`; the status and body.
async fn post(addr: SocketAddr, token: &str, title: &str, wikitext: &str) -> (u16, String) {
    let body = json!({"wikitext": wikitext, "revid": 1, "pageid": 1}).to_string();
    let request = format!(
        "POST {LINKS}/{title} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\
         Authorization: Bearer {token}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut conn = TcpStream::connect(addr).await.unwrap();
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    conn.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

/// Records which page each computation was for, and lets one through per permit.
#[derive(Default)]
struct Gate {
    started: Mutex<Vec<String>>,
    permits: Mutex<usize>,
    wake: Condvar,
}

impl Gate {
    fn let_one_through(&self) {
        *self.permits.lock().unwrap() += 1;
        self.wake.notify_all();
    }

    fn started(&self) -> Vec<String> {
        self.started.lock().unwrap().clone()
    }
}

impl StandIn for Gate {
    fn answer(&self, request: &LinkRequest, _: &AtomicBool) -> Answer {
        self.started
            .lock()
            .unwrap()
            .push(request.page_title.clone());
        let mut permits = self.permits.lock().unwrap();
        while *permits == 0 {
            permits = self.wake.wait(permits).unwrap();
        }
        *permits -= 1;
        Ok(support::no_links())
    }
}

async fn until(server: &RunningServer, held: usize, waiting: usize) {
    tokio::time::timeout(Duration::from_secs(60), async {
        while server.link_load() != (held, waiting) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "never {held} running and {waiting} waiting: {:?}",
            server.link_load()
        )
    });
}

/// Waits until the backend has started `count` computations.
async fn started(gate: &Gate, count: usize) {
    tokio::time::timeout(Duration::from_secs(60), async {
        while gate.started().len() < count {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("never {count} started: {:?}", gate.started()));
}

/// Six requests of one app hold both slots and queue four more; a request of another app
/// that arrives after them takes the next slot that frees, ahead of the four.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_app_takes_the_next_free_slot() {
    let dir = with_clients("order");
    let gate = Arc::new(Gate::default());
    let config = ServerConfig {
        port: 0,
        clients: Some(dir.join("clients.toml")),
        link_workers: 2,
        ..ServerConfig::default()
    };
    let server = Server::bind_with_backend(config, support::enwiki(&gate))
        .await
        .unwrap();
    let addr = server.local_addr();
    let heavy: Vec<_> = (0..6)
        .map(|i| {
            let title = format!("Heavy_{i}");
            tokio::spawn(async move { post(addr, "heavy-app-token-0123456789", &title, "x").await })
        })
        .collect();
    until(&server, 2, 4).await;
    // A slot is counted as held before its engine thread reaches the backend: both
    // computations must have started before the other app's request arrives.
    started(&gate, 2).await;
    let light = tokio::spawn(post(addr, "light-app-token-0123456789", "Light", "x"));
    until(&server, 2, 5).await;
    gate.let_one_through();
    started(&gate, 3).await;
    assert_eq!(gate.started()[2], "Light", "{:?}", gate.started());
    for _ in 0..6 {
        gate.let_one_through();
    }
    assert_eq!(light.await.unwrap().0, 200);
    for task in heavy {
        assert_eq!(task.await.unwrap().0, 200);
    }
    assert_eq!(server.link_load(), (0, 0));
    server.shutdown().await.unwrap();
}

/// The reproducer: one token keeps both engine slots busy with 150 KB pages of nested
/// links (`[[a|[[a|…]]]]`), two at a time, while another app asks for ordinary pages. With
/// the default per-request budget and the slots shared, every one of the other app's
/// requests is answered (before: they waited out the heavy ones, one got a 408).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heavy_app_cannot_starve_another() {
    let dir = with_clients("heavy");
    let repo = support::repo();
    let config = ServerConfig {
        port: 0,
        datasets: Some(repo.join("tests/data/parity/datasets")),
        clients: Some(dir.join("clients.toml")),
        link_workers: 2,
        ..ServerConfig::default()
    };
    let server = Server::bind(config).await.unwrap();
    let addr = server.local_addr();
    let depth = 150_000 / "[[a|".len() / 2;
    let nested = format!("{}a{}", "[[a|".repeat(depth), "]]".repeat(depth));
    let nested = Arc::new(nested);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let heavy: Vec<_> = (0..2)
        .map(|_| {
            let (nested, stop) = (nested.clone(), stop.clone());
            tokio::spawn(async move {
                let mut statuses = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let (status, _) =
                        post(addr, "heavy-app-token-0123456789", "Nest", &nested).await;
                    statuses.push(status);
                }
                statuses
            })
        })
        .collect();
    let page = "Anarchism is a political philosophy. The cat sat on the mat.";
    for i in 0..3 {
        let (status, text) = post(addr, "light-app-token-0123456789", "Page", page).await;
        assert_eq!(status, 200, "light request {i}: {text}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for task in heavy {
        let statuses = task.await.unwrap();
        // The heavy pages are answered too: with what was found within the budget, or
        // refused as too deeply nested to read (a 400 naming the limit), never a 500.
        assert!(
            statuses.iter().all(|&s| s == 200 || s == 400),
            "{statuses:?}"
        );
    }
    server.shutdown().await.unwrap();
}
