//! The connection cap over real sockets: kept-alive clients cannot lock others out, one
//! client address cannot hold every place, a full house of busy connections answers a
//! newcomer 503 at once, and the cap follows the descriptor limit.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use wikisuggest_server::connections::{connection_cap, descriptor_limit, raise_descriptor_limit};
use wikisuggest_server::{LinkRequest, RunningServer, Server, ServerConfig};

use support::{Answer, StandIn};

const HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
const HEALTHZ_CLOSE: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

async fn server(tweak: impl FnOnce(&mut ServerConfig)) -> RunningServer {
    let mut config = ServerConfig {
        port: 0,
        ..ServerConfig::default()
    };
    tweak(&mut config);
    Server::bind(config).await.unwrap()
}

/// A connection to `server` from the loopback address `from` (all of 127/8 is the loopback
/// interface on Linux: distinct client addresses without a network).
async fn connect_from(from: Ipv4Addr, server: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(IpAddr::V4(from), 0))?;
    socket.connect(server).await
}

/// Reads one answer to a `/healthz` (its body is empty): the status, or `None` if the
/// connection closed first.
async fn read_status(stream: &mut TcpStream) -> Option<u16> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    let text = String::from_utf8_lossy(&head);
    text.split(' ').nth(1)?.parse().ok()
}

/// A well-behaved kept-alive client: `/healthz` every `period` on one connection, opening a
/// new one when the server closed it. Counts answered pings.
async fn kept_alive(
    from: Ipv4Addr,
    addr: SocketAddr,
    period: Duration,
    answered: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
) {
    let mut stream: Option<TcpStream> = None;
    while !stop.load(Ordering::Relaxed) {
        let mut conn = match stream.take() {
            Some(conn) => conn,
            None => match connect_from(from, addr).await {
                Ok(conn) => conn,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        if conn.write_all(HEALTHZ).await.is_err() {
            continue; // closed while idle: ask again on a new connection
        }
        match read_status(&mut conn).await {
            Some(200) => {
                answered.fetch_add(1, Ordering::Relaxed);
                stream = Some(conn);
                tokio::time::sleep(period).await;
            }
            _ => continue,
        }
    }
}

/// One fresh client, as HTTP clients behave: ask `/healthz` on a new connection; on a 503,
/// wait the `Retry-After` second and ask again (three times at most). Its final status and
/// how many 503s it got.
async fn fresh_retrying(from: Ipv4Addr, addr: SocketAddr) -> (Result<u16, String>, usize) {
    let mut busy = 0;
    loop {
        match fresh(from, addr).await {
            Ok(503) if busy < 3 => {
                busy += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            other => return (other, busy),
        }
    }
}

/// One fresh client: connect, ask `/healthz` once, read the whole answer.
async fn fresh(from: Ipv4Addr, addr: SocketAddr) -> Result<u16, String> {
    let mut conn = connect_from(from, addr).await.map_err(|e| e.to_string())?;
    conn.write_all(HEALTHZ_CLOSE)
        .await
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    conn.read_to_end(&mut raw)
        .await
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&raw);
    text.split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no answer: {text:?}"))
}

/// The reproducer: 520 ordinary kept-alive clients, each asking `/healthz` every 5 s, against
/// a cap of 512; then a burst of 3,000 fresh clients at once. Before, the kept-alive clients
/// held every place and the burst got 512 answers; now every fresh client is answered: at
/// once, or, when the burst itself fills every place faster than it is served, with a 503
/// and `Retry-After: 1` that it honours, then an answer. None is dropped unanswered.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_alive_clients_cannot_lock_out_a_burst() {
    let limit = raise_descriptor_limit().unwrap_or(1024);
    // Client and server ends of every connection live in this process, plus slack.
    let wanted = 2 * (520 + 3000) + 512;
    let scale = (limit as f64 / wanted as f64).min(1.0);
    let (kept_n, burst_n, cap) = (
        (520.0 * scale) as usize,
        (3000.0 * scale) as usize,
        (512.0 * scale) as usize,
    );
    if scale < 1.0 {
        println!(
            "descriptor limit {limit}: scaled to {kept_n} kept-alive clients, a burst of \
             {burst_n}, a cap of {cap}"
        );
    }
    let server = server(|c| c.max_connections = cap).await;
    let addr = server.local_addr();
    assert_eq!(server.connection_caps().total, cap);
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    // Twenty kept-alive clients per address, each address under its own cap (cap / 8).
    let kept: Vec<_> = (0..kept_n)
        .map(|i| {
            let from = Ipv4Addr::new(127, 0, 1, 1 + (i / 20) as u8);
            tokio::spawn(kept_alive(
                from,
                addr,
                Duration::from_secs(5),
                answered.clone(),
                stop.clone(),
            ))
        })
        .collect();
    // Every kept-alive client has been answered once: together they hold every place.
    tokio::time::timeout(Duration::from_secs(120), async {
        while answered.load(Ordering::Relaxed) < kept_n {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the kept-alive clients were not all answered");

    let burst: Vec<_> = (0..burst_n)
        .map(|i| {
            let from = Ipv4Addr::new(127, 0, 2 + (i / 250) as u8, 1 + (i % 250) as u8);
            tokio::spawn(async move {
                tokio::time::timeout(Duration::from_secs(60), fresh_retrying(from, addr))
                    .await
                    .unwrap_or_else(|_| (Err("no answer within 60 s".into()), 0))
            })
        })
        .collect();
    let mut statuses = std::collections::BTreeMap::new();
    let mut busy = 0;
    for task in burst {
        let (status, retried) = task.await.unwrap();
        *statuses.entry(format!("{status:?}")).or_insert(0usize) += 1;
        busy += retried;
    }
    assert_eq!(
        statuses.get("Ok(200)").copied(),
        Some(burst_n),
        "answers to the burst: {statuses:?}"
    );
    println!("burst of {burst_n}: {busy} answers were 503 (then retried)");
    // The kept-alive clients go on being answered (on new connections when theirs was
    // given to a newcomer).
    let before = answered.load(Ordering::Relaxed);
    tokio::time::timeout(Duration::from_secs(60), async {
        while answered.load(Ordering::Relaxed) < before + kept_n {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("kept-alive clients stopped being answered after the burst");
    stop.store(true, Ordering::Relaxed);
    for task in kept {
        task.abort();
    }
    server.shutdown().await.unwrap();
}

/// An address at its own cap makes room among its own connections, even when another
/// address's connection has been idle longer.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_take_every_place() {
    let server = server(|c| {
        c.max_connections = 64;
        c.max_connections_per_address = 4;
        c.header_read_timeout = Duration::from_secs(600);
    })
    .await;
    let addr = server.local_addr();
    let (a, b) = (Ipv4Addr::new(127, 0, 0, 1), Ipv4Addr::new(127, 0, 0, 2));
    let mut other = connect_from(b, addr).await.unwrap();
    let mut own = Vec::new();
    for _ in 0..4 {
        own.push(connect_from(a, addr).await.unwrap());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A fifth from `a`: its own idlest connection (the first) is closed.
    let mut fifth = connect_from(a, addr).await.unwrap();
    // Closed (end of stream or reset): the read ends instead of waiting for ever.
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), own[0].read_to_end(&mut rest))
        .await
        .expect("the address's idlest connection was not closed");
    assert!(
        rest.is_empty(),
        "it never asked anything: no answer is owed"
    );
    // `b`'s older idle connection still works, and so does the newcomer.
    other.write_all(HEALTHZ).await.unwrap();
    assert_eq!(read_status(&mut other).await, Some(200));
    fifth.write_all(HEALTHZ).await.unwrap();
    assert_eq!(read_status(&mut fifth).await, Some(200));
    server.shutdown().await.unwrap();
}

/// Holds every link request until released.
#[derive(Default)]
struct Held {
    released: Mutex<bool>,
    wake: Condvar,
    running: AtomicUsize,
}

impl Held {
    fn release(&self) {
        *self.released.lock().unwrap() = true;
        self.wake.notify_all();
    }
}

impl StandIn for Held {
    fn answer(&self, _: &LinkRequest, _: &AtomicBool) -> Answer {
        self.running.fetch_add(1, Ordering::SeqCst);
        let mut released = self.released.lock().unwrap();
        while !*released {
            released = self.wake.wait(released).unwrap();
        }
        Ok(support::no_links())
    }
}

/// Every place taken by a connection with a request in flight: a newcomer gets a 503 with
/// `Connection: close` at once (not silence), and is served again once places free up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_house_of_busy_connections_answers_503() {
    let pages = support::cat_pages("busy");
    let backend = Arc::new(Held::default());
    let config = ServerConfig {
        port: 0,
        pages: Some(pages.to_path_buf()),
        max_connections: 3,
        link_workers: 3,
        ..ServerConfig::default()
    };
    let server = Server::bind_with_backend(config, support::enwiki(&backend))
        .await
        .unwrap();
    let addr = server.local_addr();
    let get = "GET /service/linkrecommendation/v1/linkrecommendations/wikipedia/en/Cat \
               HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let mut busy = Vec::new();
    for _ in 0..3 {
        let mut conn = TcpStream::connect(addr).await.unwrap();
        conn.write_all(get.as_bytes()).await.unwrap();
        busy.push(conn);
    }
    while backend.running.load(Ordering::SeqCst) < 3 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut newcomer = TcpStream::connect(addr).await.unwrap();
    let _ = newcomer.write_all(HEALTHZ).await;
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), newcomer.read_to_end(&mut raw))
        .await
        .expect("the newcomer got no answer")
        .unwrap();
    let reply = String::from_utf8_lossy(&raw);
    assert!(reply.starts_with("HTTP/1.1 503"), "{reply}");
    assert!(reply.contains("Connection: close\r\n"), "{reply}");
    assert!(reply.contains("Retry-After: 1\r\n"), "{reply}");
    backend.release();
    for mut conn in busy {
        let mut raw = Vec::new();
        conn.read_to_end(&mut raw).await.unwrap();
        assert!(
            raw.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&raw)
        );
    }
    assert_eq!(fresh(Ipv4Addr::LOCALHOST, addr).await, Ok(200));
    server.shutdown().await.unwrap();
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "still accepting after shutdown"
    );
}

#[tokio::test]
async fn the_cap_is_sized_from_the_descriptor_limit() {
    let limit = descriptor_limit();
    let auto = server(|_| {}).await;
    assert_eq!(auto.connection_caps().total, connection_cap(0, limit));
    assert_eq!(
        auto.connection_caps().per_address,
        (auto.connection_caps().total / 8).max(8)
    );
    auto.shutdown().await.unwrap();
    // More than the descriptors allow is lowered to what they allow.
    let asked = server(|c| c.max_connections = 1 << 40).await;
    if let Some(limit) = limit {
        assert!((asked.connection_caps().total as u64) < limit);
    }
    asked.shutdown().await.unwrap();
}
