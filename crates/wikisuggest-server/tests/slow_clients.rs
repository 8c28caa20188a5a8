//! Clients that send half a request and then nothing (slowloris) must neither hold their
//! connection for ever nor keep other clients out.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use wikisuggest_server::{RunningServer, Server, ServerConfig};

async fn healthz(addr: SocketAddr) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.unwrap();
    reply
}

async fn slow_clients(addr: SocketAddr, count: usize) -> Vec<TcpStream> {
    let mut slow = Vec::new();
    for _ in 0..count {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            .await
            .unwrap();
        slow.push(stream);
    }
    slow
}

async fn server(header_read_timeout: Duration, max_connections: usize) -> RunningServer {
    let config = ServerConfig {
        port: 0,
        header_read_timeout,
        max_connections,
        ..ServerConfig::default()
    };
    Server::bind(config).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_headers_are_dropped_after_the_header_read_timeout() {
    let server = server(Duration::from_secs(1), 64).await;
    let slow = slow_clients(server.local_addr(), 10).await;
    for mut stream in slow {
        let mut rest = Vec::new();
        // The server ends the connection (with or without an error reply); waiting for ever
        // here is the bug.
        tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut rest))
            .await
            .expect("a half-sent request was kept open past the header-read timeout")
            .ok();
    }
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_house_of_slow_clients_does_not_keep_healthz_out() {
    // Five times as many slow clients as there are slots, and a header-read timeout far
    // beyond this test's patience: /healthz is answered because it takes the slot of the
    // longest-waiting half-sent request, not because the timeout freed one.
    let server = server(Duration::from_secs(600), 8).await;
    let addr = server.local_addr();
    let _slow = slow_clients(addr, 40).await;
    let reply = tokio::time::timeout(Duration::from_secs(60), healthz(addr))
        .await
        .expect("/healthz got no answer while slow clients held every connection slot");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    server.shutdown().await.unwrap();
}
