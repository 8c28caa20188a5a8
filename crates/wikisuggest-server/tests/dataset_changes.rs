//! Dataset files changed under a running server: a mapped file truncated in place never
//! takes the process down (its requests get a 503) and is opened again once whole; a new
//! file renamed into place is swapped in when the operator asks, never half.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use wikisuggest_server::{RateLimits, ReloadOutcome, RunningServer, Server, ServerConfig};

use support::TempDir;

const LINKS: &str = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en";
const CLIENTS: &str = r#"
[[personal_tokens]]
token = "dataset-test-token-0123456789"
name = "tester"
"#;
const PAGE: &str = "Anarchism is a political philosophy. The cat and the river. Autism is a \
                    condition. An exclamation mark! The ants and the bees. Albedo is a measure.";

/// A folder of its own (removed when dropped) with the clients and an empty `datasets/enwiki`.
fn with_clients(name: &str) -> TempDir {
    let dir = TempDir::new(&format!("datasets-{name}"));
    std::fs::create_dir_all(dir.join("datasets/enwiki")).unwrap();
    std::fs::write(dir.join("clients.toml"), CLIENTS).unwrap();
    dir
}

/// The sample dataset, written where a server started on the folder reads it.
struct Sample {
    tables: wikisuggest_engine::Tables,
    model: Vec<u8>,
    checksums: wikisuggest_engine::DatasetChecksums,
    live: PathBuf,
}

impl Sample {
    fn written(dir: &Path) -> Self {
        let (tables, model, checksums) = support::sample();
        let live = support::write(
            &tables,
            model.clone(),
            checksums.clone(),
            &dir.join("datasets/enwiki"),
        );
        Self {
            tables,
            model,
            checksums,
            live,
        }
    }

    /// A rebuilt dataset whose anchors checksum is `anchors`, written in `staging` and
    /// renamed into place.
    fn replace(&self, anchors: String, staging: &Path) {
        let mut newer = self.checksums.clone();
        newer.anchors = Some(anchors);
        let written = support::write(&self.tables, self.model.clone(), newer, staging);
        std::fs::rename(&written, &self.live).unwrap();
    }
}

async fn start(dir: &Path) -> RunningServer {
    let config = ServerConfig {
        port: 0,
        datasets: Some(dir.join("datasets")),
        clients: Some(dir.join("clients.toml")),
        dataset_retry: Duration::from_millis(100),
        rate_limits: RateLimits {
            authenticated_per_minute: 1_000_000,
            anonymous_per_minute: 1_000_000,
        },
        ..ServerConfig::default()
    };
    Server::bind(config).await.unwrap()
}

/// POSTs [`PAGE`]; the status and the JSON body (`Null` if there is none).
async fn post(addr: SocketAddr) -> (u16, Value) {
    let body = json!({"wikitext": PAGE, "revid": 1, "pageid": 1, "threshold": 0.0}).to_string();
    let request = format!(
        "POST {LINKS}/Page?threshold=0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\
         Authorization: Bearer dataset-test-token-0123456789\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut conn = TcpStream::connect(addr).await.unwrap();
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    conn.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let json = text
        .split_once("\r\n\r\n")
        .and_then(|(_, b)| serde_json::from_str(b).ok())
        .unwrap_or(Value::Null);
    (status, json)
}

/// Posts until an answer is 200 (the dataset was opened again), at most a minute.
async fn until_answered(addr: SocketAddr) -> Value {
    for _ in 0..600 {
        let (status, body) = post(addr).await;
        match status {
            200 => return body,
            503 => tokio::time::sleep(Duration::from_millis(100)).await,
            other => panic!("answered {other}: {body}"),
        }
    }
    panic!("the dataset was never opened again")
}

/// The reproducer: a native file over 64 MiB (memory-mapped) truncated in place at a random
/// length while requests run, trial after trial. No request may take the process down or
/// get a 500; requests after the truncation get a 503; once the whole file is written back
/// in place (as `cp` does), the server answers from it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_truncated_under_the_server_is_refused_then_opened_again() {
    let dir = with_clients("truncate");
    let master = support::large_native(&dir.join("master"));
    let original = std::fs::read(&master).unwrap();
    let live = dir.join("datasets/enwiki/enwiki.linkdata");
    let trials = 8;
    let mut refused = 0;
    for trial in 0..trials {
        std::fs::write(&live, &original).unwrap();
        let server = start(&dir).await;
        let addr = server.local_addr();
        let first = until_answered(addr).await;
        assert!(first["links_count"].as_u64().unwrap() > 0, "{first}");
        // Two clients keep asking while the file is cut.
        let stop = Arc::new(AtomicBool::new(false));
        let clients: Vec<_> = (0..2)
            .map(|_| {
                let stop = stop.clone();
                tokio::spawn(async move {
                    let mut statuses = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        statuses.push(post(addr).await.0);
                    }
                    statuses
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(fastrand::u64(0..200))).await;
        let cut = fastrand::u64(0..original.len() as u64);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&live)
            .unwrap()
            .set_len(cut)
            .unwrap();
        // Requests after the cut find the file changed.
        let (status, body) = post(addr).await;
        assert_eq!(status, 503, "trial {trial}, cut at {cut}: {body}");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("changed on disk"),
            "{body}"
        );
        stop.store(true, Ordering::Relaxed);
        for client in clients {
            let statuses = client.await.unwrap();
            assert!(
                statuses.iter().all(|s| [200, 503].contains(s)),
                "trial {trial}, cut at {cut}: {statuses:?}"
            );
            refused += statuses.iter().filter(|&&s| s == 503).count();
        }
        // Written back whole, in place: opened again, and answering as before.
        std::fs::write(&live, &original).unwrap();
        let again = until_answered(addr).await;
        assert_eq!(again["links"], first["links"], "trial {trial}");
        server.shutdown().await.unwrap();
    }
    println!("{trials} truncations, {refused} requests refused with 503 while they ran");
}

/// A new file renamed into place is swapped in when the operator asks, whole: until then
/// the old one answers; a damaged new file is refused and the old engine goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_swaps_in_a_new_file() {
    let dir = with_clients("swap");
    let sample = Sample::written(&dir);
    let live = &sample.live;
    let server = start(&dir).await;
    let addr = server.local_addr();
    let checksum = |v: &Value| v["meta"]["dataset_checksums"]["anchors"].clone();
    let (_, before) = post(addr).await;
    let old = checksum(&before);
    assert!(old.is_string(), "{before}");
    assert_eq!(
        server.reload_datasets().await.unwrap(),
        [("enwiki".to_owned(), ReloadOutcome::Unchanged)]
    );

    // A rebuilt dataset (other checksums), written beside and renamed into place.
    let staging = dir.join("staging");
    sample.replace("0".repeat(64), &staging);
    let (status, still) = post(addr).await;
    assert_eq!(
        (status, checksum(&still)),
        (200, old.clone()),
        "not before it is asked"
    );
    assert_eq!(
        server.reload_datasets().await.unwrap(),
        [("enwiki".to_owned(), ReloadOutcome::Reopened)]
    );
    let (status, after) = post(addr).await;
    assert_eq!((status, checksum(&after)), (200, json!("0".repeat(64))));
    assert_eq!(after["links"], before["links"]);

    // A damaged file renamed into place: refused, and the engine it would replace stays.
    let mut bytes = std::fs::read(live).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 0xff;
    std::fs::write(staging.join("damaged"), &bytes).unwrap();
    std::fs::rename(staging.join("damaged"), live).unwrap();
    let outcome = server.reload_datasets().await.unwrap();
    assert!(
        matches!(&outcome[..], [(wiki, ReloadOutcome::Failed(reason))]
            if wiki == "enwiki" && reason.contains("checksum")),
        "{outcome:?}"
    );
    let (status, kept) = post(addr).await;
    assert_eq!((status, checksum(&kept)), (200, json!("0".repeat(64))));
    server.shutdown().await.unwrap();
}

/// SIGHUP asks for the same reload (the `wikisuggest-server` binary installs it).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads() {
    let dir = with_clients("sighup");
    let sample = Sample::written(&dir);
    let server = start(&dir).await;
    server.reload_on_sighup().unwrap();
    let addr = server.local_addr();
    sample.replace("1".repeat(64), &dir.join("staging"));
    // SAFETY: sending a signal to this process, whose SIGHUP handler is installed above.
    unsafe { libc::kill(libc::getpid(), libc::SIGHUP) };
    let mut swapped = false;
    for _ in 0..600 {
        let (_, body) = post(addr).await;
        if body["meta"]["dataset_checksums"]["anchors"] == json!("1".repeat(64)) {
            swapped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(swapped, "SIGHUP did not swap the new file in");
    server.shutdown().await.unwrap();
}
