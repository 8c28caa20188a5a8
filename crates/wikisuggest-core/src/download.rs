//! Downloads of large published files into a cache folder: streamed to disk while hashed,
//! resumed after a cut, verified against a published checksum. The requests go through the
//! shared [`Transport`] (its retry policy and `Retry-After`, its limits and log); this
//! module keeps the file side: the partial file and the record beside it, the checksum, the
//! rename into place.
//!
//! A file is written to `<dest>.incomplete`, beside a small `<dest>.incomplete.json` that
//! records the URL and the validators (`ETag`, `Last-Modified`, size) of the answer the
//! bytes came from, written before the first byte. A later attempt, in this process or the
//! next one, asks for the rest (see [`wikisuggest_resume`] for the rules and the budget of
//! requests and bytes). Bodies are bytes: no content decoding (a `.gz` served
//! with `Content-Encoding: gzip` stays compressed), no charset. No credentials are ever
//! sent, and a redirect is only followed to the same host.
//!
//! The partial file and its record are opened without following symbolic links, and their
//! folder must not be one: a link planted in a shared cache cannot make a download write
//! elsewhere.
//!
//! When the finished file's checksum differs from the expected one it is fetched once more
//! from zero; a second mismatch is [`Error::ChecksumMismatch`], naming the URL and both
//! hashes. A verified file is renamed to `dest`; the partial is left for the next attempt
//! whenever anything else stops the download (an error, or the future being dropped).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use reqwest::header::{ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_LENGTH, HeaderValue};
use ring::digest::{Context, SHA1_FOR_LEGACY_USE_ONLY, SHA256};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, display_url};
use crate::retry::RetryPolicy;
use crate::transport::ranged::{header, refusal, validators};
use crate::transport::{
    Body, LOG_TARGET, Outgoing, Redirects, Resume, Sink, Transport, TransportConfig, Verdict,
};

pub use crate::transport::{DownloadBudget, RemoteFile};

/// Redirects followed at most, all on the host of the URL asked for.
const MAX_REDIRECTS: usize = 5;

/// Largest small file ([`Downloader::get_small`]) whatever its caller asks.
const SMALL_FILE_CEILING: usize = 256 << 20;

/// Settings of a [`Downloader`].
#[derive(Debug, Clone)]
pub struct DownloadConfig {
    /// `<app>/<version> (<contact>)`; `wikisuggest/<version>` is appended.
    pub user_agent: String,
    /// Limit for making a connection.
    pub connect_timeout: Duration,
    /// Longest wait for the answer's headers, and for the next bytes of a body: a stalled
    /// transfer fails after it and is resumed, however long the whole file takes.
    pub read_timeout: Duration,
    /// Retries of failed attempts (statuses, cuts, timeouts) without progress, and the
    /// `Retry-After` cap.
    pub retry: RetryPolicy,
    /// What one file's download may cost in all, progress or not.
    pub budget: DownloadBudget,
}

impl DownloadConfig {
    pub fn new(user_agent: impl Into<String>) -> Self {
        Self {
            user_agent: user_agent.into(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            retry: RetryPolicy {
                // GET of a static file is idempotent: retry the usual statuses and 500 too.
                statuses: vec![429, 500, 502, 503, 504],
                ..RetryPolicy::default()
            },
            budget: DownloadBudget::default(),
        }
    }
}

/// A small file read whole (an index, a checksum file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmallFile {
    pub body: Vec<u8>,
    pub remote: RemoteFile,
}

/// The hash functions a published checksum may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChecksumKind {
    Sha256,
    /// What Wikimedia's dump status lists beside md5 (legacy, but enough to detect damage).
    Sha1,
}

impl ChecksumKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Sha256 => "sha256",
            Self::Sha1 => "sha1",
        }
    }

    fn hex_len(self) -> usize {
        match self {
            Self::Sha256 => 64,
            Self::Sha1 => 40,
        }
    }

    fn context(self) -> Context {
        match self {
            Self::Sha256 => Context::new(&SHA256),
            Self::Sha1 => Context::new(&SHA1_FOR_LEGACY_USE_ONLY),
        }
    }
}

/// A published checksum: its kind and lowercase hex value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checksum {
    pub kind: ChecksumKind,
    pub hex: String,
}

impl Checksum {
    /// Checks `kind` (`"sha256"` or `"sha1"`) and `hex` (its number of hex digits).
    pub fn parse(kind: &str, hex: &str) -> Result<Self> {
        let kind = match kind.to_ascii_lowercase().as_str() {
            "sha256" => ChecksumKind::Sha256,
            "sha1" => ChecksumKind::Sha1,
            other => {
                return Err(Error::invalid(
                    "checksum",
                    format!("the kinds are sha256 and sha1, not {other:?}"),
                ));
            }
        };
        if hex.len() != kind.hex_len() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::invalid(
                "checksum",
                format!(
                    "{hex:?} is not a {} ({} hexadecimal digits)",
                    kind.name(),
                    kind.hex_len()
                ),
            ));
        }
        Ok(Self {
            kind,
            hex: hex.to_ascii_lowercase(),
        })
    }
}

/// One file to download.
#[derive(Debug, Clone)]
pub struct DownloadRequest {
    /// Absolute http(s) URL.
    pub url: String,
    /// Where the verified file ends up.
    pub dest: PathBuf,
    /// The published checksum, if known.
    pub checksum: Option<Checksum>,
    /// Largest size accepted: a body that announces or sends more fails. Give the published
    /// size when it is known.
    pub max_size: u64,
}

/// A finished, verified download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    pub path: PathBuf,
    pub size: u64,
    /// The file's checksum, of the kind asked for (sha256 when none was).
    pub checksum: Checksum,
    pub remote: RemoteFile,
    /// Bytes that were already on disk from an earlier attempt when this call started.
    pub resumed_from: u64,
    /// How many times the file had to start again from zero.
    pub restarts: u32,
    /// Requests made for the file, and body bytes received in all.
    pub attempts: u32,
    pub received: u64,
}

/// The record beside a partial download: where its bytes came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct PartialRecord {
    url: String,
    #[serde(flatten)]
    remote: RemoteFile,
}

/// Downloads over one connection pool of the shared transport; cheap to share behind an
/// `Arc`.
#[derive(Debug)]
pub struct Downloader {
    transport: Transport,
    budget: DownloadBudget,
}

/// Parses and checks a download URL: absolute http(s), without credentials.
pub fn parse_url(url: &str) -> Result<reqwest::Url> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| Error::Config(format!("{url:?} is not a valid URL: {e}")))?;
    if parsed.scheme() != "http" && parsed.scheme() != "https" {
        return Err(Error::Config(format!(
            "downloads use http or https, not {:?}",
            parsed.scheme()
        )));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(Error::Config(
            "a download URL must not carry credentials".to_owned(),
        ));
    }
    Ok(parsed)
}

fn file_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::File {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The partial file of a download to `dest`.
pub fn partial_path(dest: &Path) -> PathBuf {
    with_suffix(dest, ".incomplete")
}

fn record_path(dest: &Path) -> PathBuf {
    with_suffix(dest, ".incomplete.json")
}

/// Lowercase hex of bytes.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Options that open a file without following a symbolic link in its last component: a
/// link fails to open (`ELOOP`) instead of leading elsewhere.
fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        // FILE_FLAG_OPEN_REPARSE_POINT: open a link itself, which `refuse_link` then refuses.
        options.custom_flags(0x0020_0000);
    }
    options
}

/// Refuses a file or folder that is a symbolic link (on Windows, any reparse point).
fn refuse_link(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(file_error(
            path,
            "is a symbolic link; the cache writes only its own files (remove the link)",
        )),
        _ => Ok(()),
    }
}

/// Opens `path` to read and write, created if missing, never through a link.
fn open_no_follow(path: &Path) -> Result<File> {
    refuse_link(path)?;
    no_follow(
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    )
    .open(path)
    .map_err(|e| file_error(path, e))
}

/// Reads a small file, never through a link; `None` if it is missing or unreadable.
fn read_no_follow(path: &Path, limit: u64) -> Option<Vec<u8>> {
    let file = no_follow(OpenOptions::new().read(true)).open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// The partial file being extended, and the hash of its bytes so far.
struct Partial {
    dest: PathBuf,
    path: PathBuf,
    url: String,
    file: File,
    len: u64,
    kind: ChecksumKind,
    hash: Context,
}

impl Partial {
    /// Opens the partial of `dest` with the record of its bytes, if it names `url` (the
    /// bytes are then hashed again, since a hash state cannot be stored).
    fn open(dest: &Path, url: &str, kind: ChecksumKind) -> Result<(Self, Option<RemoteFile>)> {
        let path = partial_path(dest);
        let record: Option<PartialRecord> = read_no_follow(&record_path(dest), 1 << 16)
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        let file = open_no_follow(&path)?;
        let meta = file.metadata().map_err(|e| file_error(&path, e))?;
        if !meta.is_file() {
            return Err(file_error(&path, "is not a regular file"));
        }
        let mut partial = Self {
            dest: dest.to_owned(),
            path,
            url: url.to_owned(),
            file,
            len: 0,
            kind,
            hash: kind.context(),
        };
        let kept = record.filter(|r| r.url == url).map(|r| r.remote);
        if kept.is_none() {
            partial.restart()?;
            return Ok((partial, None));
        }
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = partial
                .file
                .read(&mut buf)
                .map_err(|e| file_error(&partial.path, e))?;
            if n == 0 {
                break;
            }
            partial.hash.update(&buf[..n]);
            partial.len += n as u64;
        }
        Ok((partial, kept))
    }

    fn digest(&self) -> String {
        hex(self.hash.clone().finish().as_ref())
    }
}

impl Sink for Partial {
    fn begin(&mut self, record: &RemoteFile) -> Result<()> {
        write_record(
            &self.dest,
            &PartialRecord {
                url: self.url.clone(),
                remote: record.clone(),
            },
        )
    }

    fn restart(&mut self) -> Result<()> {
        self.file
            .set_len(0)
            .and_then(|()| self.file.seek(SeekFrom::Start(0)).map(drop))
            .map_err(|e| file_error(&self.path, e))?;
        self.len = 0;
        self.hash = self.kind.context();
        Ok(())
    }

    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(bytes)
            .map_err(|e| file_error(&self.path, e))?;
        self.hash.update(bytes);
        self.len += bytes.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.file.flush().map_err(|e| file_error(&self.path, e))
    }
}

/// Writes the record beside the partial through a fresh temporary file and a rename, so it
/// is never half-written and never written through a link.
fn write_record(dest: &Path, record: &PartialRecord) -> Result<()> {
    let path = record_path(dest);
    let tmp = with_suffix(&path, ".tmp");
    let bytes = serde_json::to_vec(record).map_err(|e| Error::Internal(e.to_string()))?;
    // A leftover (or a planted link) goes; `create_new` then refuses anything in its place.
    let _ = std::fs::remove_file(&tmp);
    let mut file = no_follow(OpenOptions::new().write(true).create_new(true))
        .open(&tmp)
        .map_err(|e| file_error(&tmp, e))?;
    file.write_all(&bytes).map_err(|e| file_error(&tmp, e))?;
    drop(file);
    std::fs::rename(&tmp, &path).map_err(|e| file_error(&path, e))
}

fn remove_partial(dest: &Path) {
    let _ = std::fs::remove_file(partial_path(dest));
    let _ = std::fs::remove_file(record_path(dest));
}

impl Downloader {
    pub fn new(config: DownloadConfig) -> Result<Self> {
        let transport = Transport::new(&TransportConfig {
            user_agent: crate::user_agent::compose(&config.user_agent)?,
            timeout: None,
            connect_timeout: config.connect_timeout,
            read_timeout: Some(config.read_timeout),
            retry: config.retry,
            max_body_size: SMALL_FILE_CEILING,
            // Published files are bytes: never inflate a `.gz` the server labels as
            // gzip-encoded, or the hash would be of other bytes.
            decompress: false,
            redirects: Redirects::SameHost(MAX_REDIRECTS),
        })?;
        if config.budget.max_attempts == 0 || config.budget.bytes_factor == 0 {
            return Err(Error::Config(
                "a download budget needs at least one attempt and a positive factor".to_owned(),
            ));
        }
        Ok(Self {
            transport,
            budget: config.budget,
        })
    }

    /// A request for a published small file or its size: no cache's older copy, no
    /// decoding, `None` for 404 and 410 (the file does not exist).
    async fn ask(&self, method: Method, url: &str, limit: usize) -> Result<Option<SmallFile>> {
        let url = parse_url(url)?;
        let policy = self.transport.retry();
        let head = method == Method::HEAD;
        let prepare = || {
            let mut out = Outgoing::new(method.clone(), url.clone(), Body::None);
            // Indexes and checksums must be current, not a cache's older copy.
            out.headers
                .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            out.headers
                .insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
            out.body_limit = Some(limit);
            Ok(out)
        };
        let judge = |reply: crate::transport::Reply| {
            if reply.is_success() {
                let mut remote = validators(&reply.headers);
                remote.size = if head {
                    // A HEAD answer has no body: its size is in the header alone.
                    header(&reply.headers, CONTENT_LENGTH).and_then(|v| v.trim().parse().ok())
                } else {
                    Some(reply.body.len() as u64)
                };
                return Verdict::Done(Some(SmallFile {
                    body: reply.body,
                    remote,
                }));
            }
            if matches!(reply.status, 404 | 410) {
                return Verdict::Done(None);
            }
            refusal(
                policy,
                method.as_str(),
                &url,
                reply.status,
                &reply.headers,
                &reply.body,
            )
        };
        self.transport.exchange(None, None, prepare, judge).await
    }

    /// `HEAD url`: the size and validators of a file, `None` if it does not exist. The
    /// size is `None` when the server does not give it.
    pub async fn head(&self, url: &str) -> Result<Option<RemoteFile>> {
        Ok(self
            .ask(Method::HEAD, url, 1)
            .await?
            .map(|small| small.remote))
    }

    /// `HEAD` of each of `urls`, at most `concurrency` at a time, each with the retry policy:
    /// the answers in the order of `urls` (a failure is that URL's alone).
    pub async fn head_many(
        self: &Arc<Self>,
        urls: Vec<String>,
        concurrency: usize,
    ) -> Vec<Result<Option<RemoteFile>>> {
        let permits = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        let n = urls.len();
        for (i, url) in urls.into_iter().enumerate() {
            let (me, permits) = (self.clone(), permits.clone());
            tasks.spawn(async move {
                let _permit = permits.acquire_owned().await;
                (i, me.head(&url).await)
            });
        }
        let mut out: Vec<Option<Result<Option<RemoteFile>>>> = (0..n).map(|_| None).collect();
        while let Some(joined) = tasks.join_next().await {
            if let Ok((i, answer)) = joined
                && let Some(slot) = out.get_mut(i)
            {
                *slot = Some(answer);
            }
        }
        out.into_iter()
            .map(|answer| {
                answer
                    .unwrap_or_else(|| Err(Error::Internal("a HEAD request did not finish".into())))
            })
            .collect()
    }

    /// `GET url` of a small file, refusing more than `limit` bytes; `None` if it does not
    /// exist.
    pub async fn get_small(&self, url: &str, limit: usize) -> Result<Option<SmallFile>> {
        if limit == 0 {
            return Err(Error::invalid("limit", "must be positive"));
        }
        self.ask(Method::GET, url, limit).await
    }

    /// Downloads `request.url` to `request.dest` (see the module docs). `progress` is
    /// called with the bytes on disk and the total, when known.
    pub async fn download(
        &self,
        request: &DownloadRequest,
        progress: &(dyn Fn(u64, Option<u64>) + Send + Sync),
    ) -> Result<Downloaded> {
        let url = parse_url(&request.url)?;
        let kind = request
            .checksum
            .as_ref()
            .map_or(ChecksumKind::Sha256, |c| c.kind);
        if let Some(parent) = request.dest.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| file_error(parent, e))?;
            refuse_link(parent)?;
        }
        let (mut partial, record) = Partial::open(&request.dest, url.as_str(), kind)?;
        let mut resume = Resume::new(partial.len, record, request.max_size, self.budget);
        let resumed_from = resume.held();
        let mut fresh_after_mismatch = false;
        loop {
            let finished = self
                .transport
                .download(&url, &mut partial, &mut resume, progress)
                .await?;
            let actual = partial.digest();
            if let Some(want) = &request.checksum
                && want.hex != actual
            {
                log::warn!(target: LOG_TARGET, "{}: {} {actual} is not the published {}", display_url(&url), kind.name(), want.hex);
                if fresh_after_mismatch {
                    remove_partial(&request.dest);
                    return Err(Error::ChecksumMismatch {
                        url: display_url(&url),
                        kind: kind.name(),
                        expected: want.hex.clone(),
                        actual,
                    });
                }
                // Once more from zero: the bytes on disk may predate a change upstream, or
                // have been damaged on the way.
                fresh_after_mismatch = true;
                resume.start_again();
                continue;
            }
            partial
                .file
                .sync_all()
                .map_err(|e| file_error(&partial.path, e))?;
            let size = partial.len;
            drop(partial);
            std::fs::rename(partial_path(&request.dest), &request.dest)
                .map_err(|e| file_error(&request.dest, e))?;
            let _ = std::fs::remove_file(record_path(&request.dest));
            return Ok(Downloaded {
                path: request.dest.clone(),
                size,
                checksum: Checksum { kind, hex: actual },
                remote: finished,
                resumed_from,
                restarts: resume.restarts(),
                attempts: resume.attempts(),
                received: resume.received(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::same_host;

    #[test]
    fn redirects_stay_on_the_host_and_on_tls() {
        let u = |s: &str| reqwest::Url::parse(s).unwrap();
        assert!(same_host(&u("https://a.org/x"), &u("https://a.org/y")));
        assert!(same_host(&u("http://a.org/x"), &u("https://a.org/y")));
        assert!(same_host(&u("https://a.org/x"), &u("https://a.org:443/y")));
        assert!(!same_host(&u("https://a.org/x"), &u("http://a.org/y")));
        assert!(!same_host(&u("https://a.org/x"), &u("https://b.org/y")));
        assert!(!same_host(
            &u("http://127.0.0.1:1/x"),
            &u("http://127.0.0.1:2/y")
        ));
    }

    #[test]
    fn urls_with_credentials_or_other_schemes_are_refused() {
        for bad in ["ftp://a.org/x", "https://u:p@a.org/x", "not a url"] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        assert!(parse_url("https://a.org/x.sql.gz").is_ok());
    }

    #[test]
    fn checksums_are_checked_for_their_kind() {
        let sha1 = "a".repeat(40);
        assert_eq!(
            Checksum::parse("SHA1", &sha1).unwrap().kind,
            ChecksumKind::Sha1
        );
        assert!(Checksum::parse("sha256", &sha1).is_err());
        assert!(Checksum::parse("md4", &sha1).is_err());
        assert!(Checksum::parse("sha256", &"g".repeat(64)).is_err());
        assert_eq!(
            Checksum::parse("sha256", &"AB".repeat(32)).unwrap().hex,
            "ab".repeat(32)
        );
    }
}
