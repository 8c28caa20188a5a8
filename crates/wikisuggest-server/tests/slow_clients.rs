//! Clients that send half a request and then nothing (slowloris) must neither hold their
//! connection for ever nor keep other clients out.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use wikisuggest_server::{Server, ServerConfig};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_headers_time_out_and_do_not_starve_healthz() {
    let config = ServerConfig {
        port: 0,
        header_read_timeout: Duration::from_secs(1),
        max_connections: 8,
        ..ServerConfig::default()
    };
    let server = Server::bind(config).await.unwrap();
    let addr = server.local_addr();
    // Five times as many slow clients as there are connection slots.
    let mut slow = Vec::new();
    for _ in 0..40 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            .await
            .unwrap();
        slow.push(stream);
    }
    // Everyone else still gets an answer (after the slow ones' slots time out).
    let reply = tokio::time::timeout(Duration::from_secs(30), healthz(addr))
        .await
        .expect("/healthz got no answer while slow clients held connections");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    // And every slow client was disconnected by the server rather than kept waiting.
    for mut stream in slow {
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut rest))
            .await
            .expect("a half-sent request was kept open past the header-read timeout");
        // Closed with or without an error reply; a reset is as good as a close.
        let _ = closed;
    }
    server.shutdown().await.unwrap();
}
