//! Downloads against a loopback server that misbehaves on purpose: cuts, ignored ranges,
//! corrupt bytes, stalls, error statuses, redirects, endless bodies.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wikisuggest_core::Error;
use wikisuggest_core::download::{
    Checksum, DownloadBudget, DownloadConfig, DownloadRequest, Downloaded, Downloader, partial_path,
};

const UA: &str = "DownloadTests/1.0 (https://example.org/tests; tests@example.org)";

/// What one request asked for.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// How the server answers request number `n` (from 0) of a path.
#[derive(Debug, Clone)]
enum Answer {
    /// The file (honouring `Range` and `If-Range`), with its faults.
    File(Faults),
    Status(u16, Option<&'static str>),
    Redirect(String),
    /// A chunked body that never ends.
    Endless,
    /// The file cut after `cut` bytes; a ranged request is answered with a `206` whose
    /// `Content-Range` starts half way to the byte asked for (another range).
    OtherRange {
        cut: usize,
    },
    /// A `200` without `Content-Length` (a chunked body of the file).
    Unsized,
}

/// What is wrong with a file's answer: cut after `cut` body bytes if given, silent for
/// `stall.1` after `stall.0` bytes, with byte `corrupt` flipped, a `206` ignored, or
/// labelled `Content-Encoding: gzip`.
#[derive(Debug, Clone, Default)]
struct Faults {
    cut: Option<usize>,
    ignore_range: bool,
    corrupt: Option<usize>,
    stall: Option<(usize, Duration)>,
    gzip_label: bool,
}

fn file() -> Answer {
    Answer::File(Faults::default())
}

struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Body bytes sent, over all answers.
    sent: Arc<AtomicUsize>,
}

const ETAG: &str = "\"v1\"";

async fn serve(data: Vec<u8>, plan: Vec<Answer>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sent = Arc::new(AtomicUsize::new(0));
    let (log, count) = (seen.clone(), sent.clone());
    let data = Arc::new(data);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (log, data, plan, count) = (log.clone(), data.clone(), plan.clone(), count.clone());
            tokio::spawn(async move { handle(stream, log, data, plan, count).await });
        }
    });
    Server { url, seen, sent }
}

async fn read_head(stream: &mut TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    let mut lines = text.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    Some(Seen {
        method,
        path,
        headers,
    })
}

async fn handle(
    mut stream: TcpStream,
    log: Arc<Mutex<Vec<Seen>>>,
    data: Arc<Vec<u8>>,
    plan: Vec<Answer>,
    count: Arc<AtomicUsize>,
) {
    // One request per connection: every answer closes it.
    let Some(seen) = read_head(&mut stream).await else {
        return;
    };
    let n = {
        let mut log = log.lock().unwrap();
        log.push(seen.clone());
        log.iter()
            .filter(|s| s.method == "GET")
            .count()
            .saturating_sub(1)
    };
    let answer = if seen.method == "HEAD" {
        match plan.first() {
            Some(Answer::Unsized) => Answer::Unsized,
            _ => file(),
        }
    } else {
        plan.get(n).cloned().unwrap_or_else(file)
    };
    let head = seen.method == "HEAD";
    match answer {
        Answer::Status(code, retry_after) => {
            let extra = retry_after
                .map(|r| format!("Retry-After: {r}\r\n"))
                .unwrap_or_default();
            let reply = format!(
                "HTTP/1.1 {code} Status\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(reply.as_bytes()).await;
        }
        Answer::Redirect(to) => {
            let reply = format!(
                "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(reply.as_bytes()).await;
        }
        Answer::Endless => {
            let _ = stream
                .write_all(
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
                )
                .await;
            let chunk = vec![b'x'; 4096];
            loop {
                let mut piece = format!("{:x}\r\n", chunk.len()).into_bytes();
                piece.extend_from_slice(&chunk);
                piece.extend_from_slice(b"\r\n");
                if stream.write_all(&piece).await.is_err() {
                    return;
                }
            }
        }
        Answer::OtherRange { cut } => {
            let asked: usize = seen
                .header("Range")
                .map(|r| {
                    r.trim_start_matches("bytes=")
                        .trim_end_matches('-')
                        .parse()
                        .unwrap()
                })
                .unwrap_or(0);
            let start = asked / 2;
            let status = if asked > 0 {
                format!(
                    "206 Partial Content\r\nContent-Range: bytes {start}-{}/{}",
                    data.len() - 1,
                    data.len()
                )
            } else {
                "200 OK".to_owned()
            };
            let reply = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nETag: {ETAG}\r\nConnection: close\r\n\r\n",
                data.len() - start
            );
            if stream.write_all(reply.as_bytes()).await.is_err() {
                return;
            }
            let end = (start + cut).min(data.len());
            if stream.write_all(&data[start..end]).await.is_ok() {
                count.fetch_add(end - start, Ordering::SeqCst);
            }
            let _ = stream.flush().await;
        }
        Answer::Unsized => {
            let _ = stream
                .write_all(
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
                )
                .await;
            if head {
                return;
            }
            for piece in data.chunks(4096) {
                let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
                chunk.extend_from_slice(piece);
                chunk.extend_from_slice(b"\r\n");
                if stream.write_all(&chunk).await.is_err() {
                    return;
                }
            }
            let _ = stream.write_all(b"0\r\n\r\n").await;
        }
        Answer::File(Faults {
            cut,
            ignore_range,
            corrupt,
            stall,
            gzip_label,
        }) => {
            let mut start = 0;
            if let Some(range) = seen.header("Range")
                && !ignore_range
                && seen.header("If-Range").is_none_or(|v| v == ETAG)
            {
                start = range
                    .trim_start_matches("bytes=")
                    .trim_end_matches('-')
                    .parse()
                    .unwrap();
            }
            if start >= data.len() && start > 0 {
                let reply = format!(
                    "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    data.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
                return;
            }
            let mut body = data[start..].to_vec();
            if let Some(at) = corrupt
                && at < body.len()
            {
                body[at] ^= 0xff;
            }
            let status = if start > 0 {
                format!(
                    "206 Partial Content\r\nContent-Range: bytes {start}-{}/{}",
                    data.len() - 1,
                    data.len()
                )
            } else {
                "200 OK".to_owned()
            };
            let encoding = if gzip_label {
                "Content-Encoding: gzip\r\n"
            } else {
                ""
            };
            let reply = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nETag: {ETAG}\r\nLast-Modified: Tue, 04 Mar 2025 10:00:00 GMT\r\n{encoding}Connection: close\r\n\r\n",
                body.len()
            );
            if stream.write_all(reply.as_bytes()).await.is_err() || head {
                return;
            }
            let limit = cut.unwrap_or(body.len()).min(body.len());
            let mut sent = 0;
            for piece in body[..limit].chunks(1024) {
                if let Some((after, pause)) = stall
                    && sent >= after
                    && sent < after + 1024
                {
                    tokio::time::sleep(pause).await;
                }
                if stream.write_all(piece).await.is_err() {
                    return;
                }
                sent += piece.len();
                count.fetch_add(piece.len(), Ordering::SeqCst);
            }
            let _ = stream.flush().await;
        }
    }
}

fn downloader(read_timeout: Duration, max_retries: u32) -> Downloader {
    let mut config = DownloadConfig::new(UA);
    config.read_timeout = read_timeout;
    config.retry.max_retries = max_retries;
    config.retry.backoff_base = Duration::from_millis(10);
    config.retry.backoff_max = Duration::from_millis(50);
    Downloader::new(config).unwrap()
}

fn payload(n: usize) -> Vec<u8> {
    // Bytes that would decode differently as text: every value, zeros and invalid UTF-8.
    (0..n).map(|i| (i * 7 + i / 256) as u8).collect()
}

fn sha256_hex(data: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, data)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A fresh empty folder (`wikisuggest-download-<name>-<pid>` in the temporary folder),
/// removed with everything in it when dropped, whether the test passes or panics.
struct TempDir(PathBuf);

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!(
        "wikisuggest-download-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// A file in a [`TempDir`] of its own, which goes with it.
struct TempFile {
    path: PathBuf,
    _dir: TempDir,
}

impl AsRef<Path> for TempFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl std::ops::Deref for TempFile {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

async fn fetch(
    d: &Downloader,
    server: &Server,
    dest: &Path,
    sha: Option<String>,
) -> wikisuggest_core::Result<Downloaded> {
    let request = DownloadRequest {
        url: format!("{}data.sql.gz", server.url),
        dest: dest.to_owned(),
        checksum: sha.map(|h| Checksum::parse("sha256", &h).unwrap()),
        max_size: 1 << 30,
    };
    d.download(&request, &|_, _| {}).await
}

/// Serves `data` by `plan` and downloads it with `d` as `data.sql.gz` in a fresh folder
/// `name`, checked against its sha256: the server, the file (which keeps its folder) and
/// the outcome.
async fn serve_and_fetch(
    data: &[u8],
    plan: Vec<Answer>,
    name: &str,
    d: &Downloader,
) -> (Server, TempFile, wikisuggest_core::Result<Downloaded>) {
    let server = serve(data.to_vec(), plan).await;
    let dir = temp_dir(name);
    let dest = TempFile {
        path: dir.join("data.sql.gz"),
        _dir: dir,
    };
    let done = fetch(d, &server, &dest, Some(sha256_hex(data))).await;
    (server, dest, done)
}

fn gets(server: &Server) -> Vec<Seen> {
    server
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.method == "GET")
        .cloned()
        .collect()
}

#[tokio::test]
async fn downloads_bytes_as_they_are_with_the_users_agent_and_no_credentials() {
    let data = payload(200_000);
    let (server, dest, done) = serve_and_fetch(
        &data,
        vec![Answer::File(Faults {
            gzip_label: true,
            ..Faults::default()
        })],
        "plain",
        &downloader(Duration::from_secs(5), 2),
    )
    .await;
    let done = done.unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    assert_eq!(
        (done.size, done.resumed_from, done.restarts),
        (200_000, 0, 0)
    );
    assert_eq!(done.remote.etag.as_deref(), Some(ETAG));
    assert!(!partial_path(&dest).exists());
    let seen = gets(&server);
    assert_eq!(seen.len(), 1);
    let agent = seen[0].header("User-Agent").unwrap();
    assert!(
        agent.starts_with(UA) && agent.contains("wikisuggest/"),
        "{agent}"
    );
    assert_eq!(seen[0].header("Accept-Encoding"), Some("identity"));
    assert!(seen[0].header("Authorization").is_none());
    assert!(seen[0].header("Cookie").is_none());
}

#[tokio::test]
async fn a_cut_connection_is_resumed_with_range_and_if_range() {
    let data = payload(300_000);
    let cut = Answer::File(Faults {
        cut: Some(100_000),
        ..Faults::default()
    });
    let (server, dest, done) = serve_and_fetch(
        &data,
        vec![cut],
        "cut",
        &downloader(Duration::from_secs(5), 3),
    )
    .await;
    let done = done.unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    assert_eq!(done.restarts, 0);
    let seen = gets(&server);
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].header("Range"), Some("bytes=100000-"));
    assert_eq!(seen[1].header("If-Range"), Some(ETAG));
}

#[tokio::test]
async fn a_200_to_a_range_request_restarts_from_zero() {
    let data = payload(150_000);
    let plan = vec![
        Answer::File(Faults {
            cut: Some(50_000),
            ..Faults::default()
        }),
        Answer::File(Faults {
            ignore_range: true,
            ..Faults::default()
        }),
    ];
    let (server, dest, done) = serve_and_fetch(
        &data,
        plan,
        "ignored-range",
        &downloader(Duration::from_secs(5), 3),
    )
    .await;
    let done = done.unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    assert_eq!(done.restarts, 1);
    assert_eq!(gets(&server).len(), 2);
}

#[tokio::test]
async fn corrupt_bytes_are_fetched_once_more_then_reported_with_both_hashes() {
    let data = payload(80_000);
    let corrupt = Answer::File(Faults {
        corrupt: Some(1234),
        ..Faults::default()
    });
    // Corrupt once: the second download from zero is good.
    let d = downloader(Duration::from_secs(5), 2);
    let (server, dest, done) = serve_and_fetch(&data, vec![corrupt.clone()], "corrupt", &d).await;
    let done = done.unwrap();
    assert_eq!(done.restarts, 1);
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    let seen = gets(&server);
    assert_eq!(seen.len(), 2);
    assert!(seen[1].header("Range").is_none());

    // Corrupt every time: an error naming the URL and both hashes, nothing left behind.
    let server = serve(data.clone(), vec![corrupt.clone(), corrupt]).await;
    let dest = dest.with_file_name("again.sql.gz");
    let err = fetch(&d, &server, &dest, Some(sha256_hex(&data)))
        .await
        .unwrap_err();
    let mut bad = data.clone();
    bad[1234] ^= 0xff;
    match &err {
        Error::ChecksumMismatch {
            url,
            kind,
            expected,
            actual,
        } => {
            assert_eq!(*kind, "sha256");
            assert_eq!(url, &format!("{}data.sql.gz", server.url));
            assert_eq!(expected, &sha256_hex(&data));
            assert_eq!(actual, &sha256_hex(&bad));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(gets(&server).len(), 2);
    assert!(!dest.exists() && !partial_path(&dest).exists());
}

#[tokio::test]
async fn a_stalled_body_times_out_and_is_resumed() {
    let data = payload(100_000);
    let stall = Answer::File(Faults {
        stall: Some((40_000, Duration::from_secs(3))),
        ..Faults::default()
    });
    let (server, dest, done) = serve_and_fetch(
        &data,
        vec![stall],
        "stall",
        &downloader(Duration::from_millis(500), 3),
    )
    .await;
    let done = done.unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    let seen = gets(&server);
    assert_eq!(seen.len(), 2);
    let range = seen[1].header("Range").unwrap();
    let from: usize = range
        .trim_start_matches("bytes=")
        .trim_end_matches('-')
        .parse()
        .unwrap();
    assert!((40_000..100_000).contains(&from), "{range}");
    assert_eq!(done.restarts, 0);
}

#[tokio::test]
async fn statuses_are_retried_with_retry_after_and_other_errors_are_not() {
    let data = payload(10_000);
    let server = serve(
        data.clone(),
        vec![Answer::Status(503, Some("0")), Answer::Status(429, None)],
    )
    .await;
    let dir = temp_dir("status");
    let d = downloader(Duration::from_secs(5), 3);
    fetch(&d, &server, &dir.join("a"), Some(sha256_hex(&data)))
        .await
        .unwrap();
    assert_eq!(gets(&server).len(), 3);

    let server = serve(data.clone(), vec![Answer::Status(403, None)]).await;
    let err = fetch(&d, &server, &dir.join("b"), None).await.unwrap_err();
    assert_eq!(err.status(), Some(403));
    assert_eq!(gets(&server).len(), 1);

    // Out of retries: the last status is the error.
    let server = serve(data, vec![Answer::Status(503, None); 5]).await;
    let err = fetch(
        &downloader(Duration::from_secs(5), 1),
        &server,
        &dir.join("c"),
        None,
    )
    .await
    .unwrap_err();
    assert_eq!(err.status(), Some(503));
    assert_eq!(gets(&server).len(), 2);
}

#[tokio::test]
async fn redirects_are_followed_on_the_same_host_only() {
    let data = payload(5_000);
    let other = serve(data.clone(), vec![]).await;
    let dir = temp_dir("redirect");
    let d = downloader(Duration::from_secs(5), 0);

    let server = serve(
        data.clone(),
        vec![Answer::Redirect(format!("{}data.sql.gz", other.url))],
    )
    .await;
    let err = fetch(&d, &server, &dir.join("a"), None).await.unwrap_err();
    assert!(matches!(err, Error::RedirectRefused { .. }), "{err:?}");
    assert!(err.to_string().contains("same host"), "{err}");
    assert!(other.seen.lock().unwrap().is_empty());

    let server = serve(data.clone(), vec![Answer::Redirect("/moved".to_owned())]).await;
    fetch(&d, &server, &dir.join("b"), Some(sha256_hex(&data)))
        .await
        .unwrap();
    let seen = gets(&server);
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].path, "/moved");
}

#[tokio::test]
async fn an_endless_body_stops_at_the_size_limit() {
    let server = serve(Vec::new(), vec![Answer::Endless]).await;
    let dir = temp_dir("endless");
    let request = DownloadRequest {
        url: format!("{}data.sql.gz", server.url),
        dest: dir.join("x"),
        checksum: None,
        max_size: 100_000,
    };
    let err = downloader(Duration::from_secs(5), 0)
        .download(&request, &|_, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ResponseTooLarge { .. }), "{err:?}");
}

#[tokio::test]
async fn a_partial_left_by_an_earlier_run_is_resumed_by_the_next() {
    let data = payload(120_000);
    let cut = Answer::File(Faults {
        cut: Some(70_000),
        ..Faults::default()
    });
    // No retries: the first run gives up with its partial on disk.
    let (server, dest, err) = serve_and_fetch(
        &data,
        vec![cut],
        "earlier",
        &downloader(Duration::from_secs(5), 0),
    )
    .await;
    let err = err.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err:?}");
    assert_eq!(
        std::fs::metadata(partial_path(&dest)).unwrap().len(),
        70_000
    );

    let progress = Mutex::new(Vec::new());
    let request = DownloadRequest {
        url: format!("{}data.sql.gz", server.url),
        dest: dest.to_path_buf(),
        checksum: Some(Checksum::parse("sha256", &sha256_hex(&data)).unwrap()),
        max_size: 1 << 30,
    };
    let done = downloader(Duration::from_secs(5), 0)
        .download(&request, &|done, total| {
            progress.lock().unwrap().push((done, total))
        })
        .await
        .unwrap();
    assert_eq!(done.resumed_from, 70_000);
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    let progress = progress.into_inner().unwrap();
    assert_eq!(progress.first(), Some(&(70_000, Some(120_000))));
    assert_eq!(progress.last(), Some(&(120_000, Some(120_000))));
    assert_eq!(gets(&server)[1].header("Range"), Some("bytes=70000-"));

    // A complete partial (the run stopped before its rename) needs no body at all.
    std::fs::rename(&dest, partial_path(&dest)).unwrap();
    std::fs::write(
        dest.with_file_name("data.sql.gz.incomplete.json"),
        format!(
            "{{\"url\":\"{}data.sql.gz\",\"size\":120000,\"etag\":{ETAG:?}}}",
            server.url
        ),
    )
    .unwrap();
    let done = fetch(
        &downloader(Duration::from_secs(5), 0),
        &server,
        &dest,
        Some(sha256_hex(&data)),
    )
    .await
    .unwrap();
    assert_eq!(done.resumed_from, 120_000);
    assert_eq!(std::fs::read(&dest).unwrap(), data);
}

#[tokio::test]
async fn head_and_small_files() {
    let data = payload(4_000);
    let server = serve(data.clone(), vec![file(), Answer::Status(404, None)]).await;
    let d = downloader(Duration::from_secs(5), 0);
    let remote = d
        .head(&format!("{}data.sql.gz", server.url))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(remote.size, Some(4_000));
    assert_eq!(remote.etag.as_deref(), Some(ETAG));
    let small = d
        .get_small(&format!("{}wikis.txt", server.url), 10_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(small.body, data);
    assert!(
        d.get_small(&format!("{}missing", server.url), 10_000)
            .await
            .unwrap()
            .is_none()
    );
    let too_big = d
        .get_small(&format!("{}wikis.txt", server.url), 100)
        .await
        .unwrap_err();
    assert!(matches!(too_big, Error::ResponseTooLarge { .. }));
    let seen = server.seen.lock().unwrap();
    assert!(
        seen.iter()
            .all(|s| s.header("Cache-Control") == Some("no-cache"))
    );
}

#[tokio::test]
async fn a_server_that_cuts_every_transfer_and_answers_other_ranges_is_given_up() {
    // The reproducer: every transfer cut, every resume answered with a 206 that starts
    // elsewhere. Restarting from zero is not progress: the retries end, and in any case
    // the budget of requests and bytes does.
    let size = 400_000;
    let data = payload(size);
    let server = serve(
        data.clone(),
        vec![Answer::OtherRange { cut: 100_000 }; 10_000],
    )
    .await;
    let dir = temp_dir("other-range");
    let started = std::time::Instant::now();
    let err = fetch(
        &downloader(Duration::from_secs(5), 5),
        &server,
        &dir.join("data.sql.gz"),
        Some(sha256_hex(&data)),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, Error::Transport { .. } | Error::DownloadBudget { .. }),
        "{err:?}"
    );
    assert!(
        gets(&server).len() <= 12,
        "{} requests",
        gets(&server).len()
    );
    assert!(server.sent.load(Ordering::SeqCst) <= 3 * size);
    assert!(started.elapsed() < Duration::from_secs(30));

    // However many retries are allowed, the budget ends it, with a typed error.
    let server = serve(
        data.clone(),
        vec![Answer::OtherRange { cut: 100_000 }; 10_000],
    )
    .await;
    let mut config = DownloadConfig::new(UA);
    config.retry.max_retries = 1_000_000;
    config.retry.backoff_base = Duration::from_millis(1);
    config.retry.backoff_max = Duration::from_millis(2);
    config.budget = DownloadBudget {
        max_attempts: 10_000,
        bytes_factor: 3,
        bytes_slack: 0,
    };
    let err = fetch(
        &Downloader::new(config).unwrap(),
        &server,
        &dir.join("again.sql.gz"),
        Some(sha256_hex(&data)),
    )
    .await
    .unwrap_err();
    match err {
        Error::DownloadBudget {
            received, size: s, ..
        } => {
            // The piece that crossed the budget is the last one read.
            assert!(received <= 3 * size as u64 + 65_536, "{received}");
            assert_eq!(s, Some(size as u64));
        }
        other => panic!("{other:?}"),
    }

    // A budget of requests ends a server that sends one piece per request.
    let cut = Answer::File(Faults {
        cut: Some(1_000),
        ..Faults::default()
    });
    let server = serve(data.clone(), vec![cut; 10_000]).await;
    let mut config = DownloadConfig::new(UA);
    config.retry.backoff_base = Duration::from_millis(1);
    config.retry.backoff_max = Duration::from_millis(2);
    config.budget.max_attempts = 20;
    let err = fetch(
        &Downloader::new(config).unwrap(),
        &server,
        &dir.join("drip.sql.gz"),
        None,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, Error::DownloadBudget { attempts: 20, .. }),
        "{err:?}"
    );
    assert_eq!(gets(&server).len(), 20);
    assert!(err.to_string().contains("20 requests"), "{err}");
}

#[cfg(unix)]
#[tokio::test]
async fn planted_links_in_the_download_folder_are_not_followed() {
    let data = payload(50_000);
    let server = serve(data.clone(), vec![]).await;
    let dir = temp_dir("links");
    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let victim = outside.join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let folder = dir.join("downloads");
    std::fs::create_dir_all(&folder).unwrap();
    let dest = folder.join("data.sql.gz");
    let d = downloader(Duration::from_secs(5), 0);

    // The partial file as a link: refused, the file it points to untouched.
    std::os::unix::fs::symlink(&victim, partial_path(&dest)).unwrap();
    let err = fetch(&d, &server, &dest, Some(sha256_hex(&data)))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::File { .. }), "{err:?}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    std::fs::remove_file(partial_path(&dest)).unwrap();

    // The record and its temporary file as links: replaced, not written through.
    let record = folder.join("data.sql.gz.incomplete.json");
    std::os::unix::fs::symlink(&victim, &record).unwrap();
    std::os::unix::fs::symlink(&victim, folder.join("data.sql.gz.incomplete.json.tmp")).unwrap();
    fetch(&d, &server, &dest, Some(sha256_hex(&data)))
        .await
        .unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");

    // The folder itself as a link: refused.
    let linked = dir.join("linked");
    std::os::unix::fs::symlink(&outside, &linked).unwrap();
    let err = fetch(&d, &server, &linked.join("data.sql.gz"), None)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::File { .. }), "{err:?}");
    assert!(!outside.join("data.sql.gz.incomplete").exists());
}

#[tokio::test]
async fn sha1_checksums_and_files_of_unknown_size() {
    let data = payload(30_000);
    let server = serve(data.clone(), vec![Answer::Unsized]).await;
    let dir = temp_dir("sha1");
    let d = downloader(Duration::from_secs(5), 0);
    let url = format!("{}data.sql.gz", server.url);
    let remote = d.head(&url).await.unwrap().unwrap();
    assert_eq!(remote.size, None);
    let sha1: String = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, &data)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let request = DownloadRequest {
        url,
        dest: dir.join("data"),
        checksum: Some(Checksum::parse("sha1", &sha1).unwrap()),
        max_size: 1 << 20,
    };
    let done = d.download(&request, &|_, _| {}).await.unwrap();
    assert_eq!(done.checksum.hex, sha1);
    assert_eq!(done.size, 30_000);
    assert_eq!(std::fs::read(dir.join("data")).unwrap(), data);
}
