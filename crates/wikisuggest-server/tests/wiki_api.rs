//! GET link requests that read the page from a wiki's Action API (`--wiki-api`): titles and
//! revisions the API would misread are refused before anything is sent, and a failing wiki
//! is asked once per request, its failure passed on as a 502 or 504.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wikisuggest_server::{RunningServer, Server, ServerConfig};

const LINKS: &str = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en";

/// What the scripted wiki does with each request.
#[derive(Clone, Copy)]
enum Wiki {
    BadGateway,
    Silent,
}

/// A scripted wiki on a loopback port; counts the requests it receives.
async fn wiki(behaviour: Wiki) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut conn, _)) = listener.accept().await else {
                return;
            };
            let counted = counted.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if conn.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                counted.fetch_add(1, Ordering::SeqCst);
                match behaviour {
                    Wiki::BadGateway => {
                        let _ = conn
                            .write_all(
                                b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\
                                  Connection: close\r\n\r\n",
                            )
                            .await;
                    }
                    Wiki::Silent => tokio::time::sleep(Duration::from_secs(120)).await,
                }
            });
        }
    });
    (addr, count)
}

async fn server(wiki: SocketAddr, request_timeout: Duration) -> RunningServer {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let config = ServerConfig {
        port: 0,
        datasets: Some(repo.join("tests/data/parity/datasets")),
        wiki_apis: vec![("enwiki".into(), format!("http://{wiki}/w/api.php"))],
        request_timeout,
        ..ServerConfig::default()
    };
    Server::bind(config).await.unwrap()
}

async fn get(addr: SocketAddr, path: &str) -> String {
    let mut conn = TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    conn.read_to_end(&mut raw).await.unwrap();
    String::from_utf8_lossy(&raw).into_owned()
}

#[tokio::test]
async fn titles_and_revisions_the_api_would_misread_are_refused() {
    let (wiki, asked) = wiki(Wiki::BadGateway).await;
    let server = server(wiki, Duration::from_secs(30)).await;
    let addr = server.local_addr();
    // `|` separates titles; U+001F announces another separator (a leading one is stripped
    // as whitespace, as the engine strips it); `[`, `{`, `<` and control characters are
    // not legal in titles.
    for title in [
        "A%7CB",
        "Cat%1FDog",
        "Cat%7F",
        "%5B%5BCat%5D%5D",
        "%7B%7Bx%7D%7D",
        "%3Cb%3E",
    ] {
        let reply = get(addr, &format!("{LINKS}/{title}")).await;
        assert!(reply.starts_with("HTTP/1.1 400"), "{title}: {reply}");
        assert!(reply.contains("Invalid page title"), "{title}: {reply}");
    }
    for revision in ["1%7C2%7C3", "-1", "99999999999999999999", "abc"] {
        let reply = get(addr, &format!("{LINKS}/Cat?revision={revision}")).await;
        assert!(reply.starts_with("HTTP/1.1 400"), "{revision}: {reply}");
        assert!(reply.contains("revision"), "{revision}: {reply}");
    }
    assert_eq!(
        asked.load(Ordering::SeqCst),
        0,
        "nothing was sent to the wiki"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_failing_wiki_is_asked_once_per_request() {
    let (wiki, asked) = wiki(Wiki::BadGateway).await;
    let server = server(wiki, Duration::from_secs(30)).await;
    let addr = server.local_addr();
    for round in 1..=3 {
        let reply = get(addr, &format!("{LINKS}/Cat")).await;
        assert!(reply.starts_with("HTTP/1.1 502"), "{reply}");
        assert!(reply.contains("The wiki answered HTTP 502"), "{reply}");
        assert_eq!(asked.load(Ordering::SeqCst), round);
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_wiki_that_does_not_answer_gives_a_504_within_the_request_time() {
    let (wiki, asked) = wiki(Wiki::Silent).await;
    let server = server(wiki, Duration::from_secs(6)).await;
    let reply = get(server.local_addr(), &format!("{LINKS}/Cat")).await;
    // The server gives the wiki a third of its request timeout, so the client hears the
    // wiki's silence as a 504 rather than the server's own 408.
    assert!(reply.starts_with("HTTP/1.1 504"), "{reply}");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    server.shutdown().await.unwrap();
}
