//! Downloads of large published files: streamed to disk while hashed, resumed after a cut,
//! verified against a published sha256.
//!
//! A file is written to `<dest>.incomplete`, beside a small `<dest>.incomplete.json` that
//! records the URL and the validators (`ETag`, `Last-Modified`, size) of the answer the
//! bytes came from, written before the first byte. A later attempt, in this process or the
//! next one, asks for the rest with `Range` and `If-Range`: a `206` continues the file, a
//! `200` (the server ignores ranges, or the file changed) starts it again from zero. Cuts
//! and timeouts are retried with the client's [`RetryPolicy`] (honouring `Retry-After`);
//! an attempt that moved the file forward resets the count, so a long download on a flaky
//! line goes on as long as it progresses. Bodies are bytes: no content decoding (a `.gz`
//! served with `Content-Encoding: gzip` stays compressed), no charset. No credentials are
//! ever sent, and a redirect is only followed to the same host.
//!
//! When the finished file's sha256 differs from the expected one it is fetched once more
//! from zero; a second mismatch is [`Error::ChecksumMismatch`], naming the URL and both
//! hashes. A verified file is renamed to `dest`; the partial is left for the next attempt
//! whenever anything else stops the download (an error, or the future being dropped).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_RANGE, ETAG, HeaderMap, HeaderValue,
    IF_RANGE, LAST_MODIFIED, LOCATION, RANGE, USER_AGENT,
};
use ring::digest::{Context, SHA256};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, display_url, from_reqwest};
use crate::http_error::{Endpoint, HttpError};
use crate::retry::RetryPolicy;
use crate::transport::{ensure_crypto_provider, read_error_body};

/// Log target of download events (the Python logger `wikisuggest.http`).
const LOG_TARGET: &str = "wikisuggest.http";

/// Redirects followed at most, all on the host of the URL asked for.
const MAX_REDIRECTS: usize = 5;

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
    /// Retries of failed attempts (statuses, cuts, timeouts) and the `Retry-After` cap.
    pub retry: RetryPolicy,
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
        }
    }
}

/// What a server says about a file without sending it (`HEAD`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteFile {
    /// `Content-Length`, when given.
    pub size: Option<u64>,
    /// `ETag`, as sent.
    pub etag: Option<String>,
    /// `Last-Modified`, as sent.
    pub last_modified: Option<String>,
}

/// A small file read whole (an index, a checksum file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmallFile {
    pub body: Vec<u8>,
    pub remote: RemoteFile,
}

/// One file to download.
#[derive(Debug, Clone)]
pub struct DownloadRequest {
    /// Absolute http(s) URL.
    pub url: String,
    /// Where the verified file ends up.
    pub dest: PathBuf,
    /// The published sha256 (64 hex digits), if known.
    pub sha256: Option<String>,
    /// Largest size accepted: a body that announces or sends more fails.
    pub max_size: u64,
}

/// A finished, verified download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    pub path: PathBuf,
    pub size: u64,
    /// Lowercase hex sha256 of the file.
    pub sha256: String,
    pub remote: RemoteFile,
    /// Bytes that were already on disk from an earlier attempt when this call started.
    pub resumed_from: u64,
    /// How many times the file had to start again from zero.
    pub restarts: u32,
}

/// The record beside a partial download: where its bytes came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct PartialRecord {
    url: String,
    #[serde(flatten)]
    remote: RemoteFile,
}

/// Downloads over one connection pool; cheap to share behind an `Arc`.
pub struct Downloader {
    http: reqwest::Client,
    user_agent: HeaderValue,
    config: DownloadConfig,
}

impl std::fmt::Debug for Downloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Downloader")
            .field("user_agent", &self.user_agent)
            .finish()
    }
}

/// Whether a redirect from `from` to `to` stays on the same host (and does not drop TLS).
fn same_host(from: &reqwest::Url, to: &reqwest::Url) -> bool {
    // An upgrade from http to https on the default ports is the same server.
    let upgrade = from.scheme() == "http"
        && to.scheme() == "https"
        && from.port().is_none()
        && to.port().is_none();
    from.host_str() == to.host_str()
        && (from.port_or_known_default() == to.port_or_known_default() || upgrade)
        && !(from.scheme() == "https" && to.scheme() != "https")
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

fn header(headers: &HeaderMap, name: reqwest::header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn remote_of(response: &reqwest::Response, size: Option<u64>) -> RemoteFile {
    RemoteFile {
        size,
        etag: header(response.headers(), ETAG),
        last_modified: header(response.headers(), LAST_MODIFIED),
    }
}

/// `Content-Range: bytes START-END/TOTAL` → (START, TOTAL).
fn content_range(headers: &HeaderMap) -> Option<(u64, Option<u64>)> {
    let value = header(headers, CONTENT_RANGE)?;
    let rest = value.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let total = total.trim().parse().ok();
    let start = match range.split_once('-') {
        Some((start, _)) => start.trim().parse().ok()?,
        None if range == "*" => return Some((u64::MAX, total)),
        None => return None,
    };
    Some((start, total))
}

/// The validator for `If-Range`: a strong ETag, else the Last-Modified date.
fn validator(remote: &RemoteFile) -> Option<&str> {
    match &remote.etag {
        Some(etag) if !etag.starts_with("W/") => Some(etag),
        _ => remote.last_modified.as_deref(),
    }
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

/// The partial file being extended, and the hash of its bytes so far.
struct Partial {
    path: PathBuf,
    file: File,
    len: u64,
    sha: Context,
}

impl Partial {
    /// Opens the partial of `dest`, keeping its bytes when `record` says they came from
    /// `url` (then they are hashed again, since a hash state cannot be stored).
    fn open(dest: &Path, url: &str) -> Result<(Self, Option<RemoteFile>)> {
        let path = partial_path(dest);
        let record: Option<PartialRecord> = std::fs::read(record_path(dest))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| file_error(&path, e))?;
        let len = file.metadata().map_err(|e| file_error(&path, e))?.len();
        let mut partial = Self {
            path,
            file,
            len: 0,
            sha: Context::new(&SHA256),
        };
        // Bytes are kept only when the record says they came from this URL, and are no more
        // than the file they came from.
        let kept = record
            .filter(|r| r.url == url)
            .map(|r| r.remote)
            .filter(|r| r.size.is_none_or(|size| len <= size));
        if kept.is_none() || len == 0 {
            partial.restart()?;
            return Ok((partial, kept));
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
            partial.sha.update(&buf[..n]);
            partial.len += n as u64;
        }
        Ok((partial, kept))
    }

    /// Empties the file: the next bytes are its first.
    fn restart(&mut self) -> Result<()> {
        self.file
            .set_len(0)
            .and_then(|()| self.file.seek(SeekFrom::Start(0)).map(drop))
            .map_err(|e| file_error(&self.path, e))?;
        self.len = 0;
        self.sha = Context::new(&SHA256);
        Ok(())
    }

    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(bytes)
            .map_err(|e| file_error(&self.path, e))?;
        self.sha.update(bytes);
        self.len += bytes.len() as u64;
        Ok(())
    }
}

/// Writes the record beside the partial (by rename, so it is never half-written).
fn write_record(dest: &Path, record: &PartialRecord) -> Result<()> {
    let path = record_path(dest);
    let tmp = with_suffix(&path, ".tmp");
    let bytes = serde_json::to_vec(record).map_err(|e| Error::Internal(e.to_string()))?;
    std::fs::write(&tmp, bytes).map_err(|e| file_error(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| file_error(&path, e))
}

fn remove_partial(dest: &Path) {
    let _ = std::fs::remove_file(partial_path(dest));
    let _ = std::fs::remove_file(record_path(dest));
}

/// How one attempt ended.
enum Attempt {
    /// The whole file is in the partial.
    Complete(RemoteFile),
    /// Worth another try after `Option<Duration>` (a `Retry-After`), or the policy's delay.
    Retry(Error, Option<Duration>),
}

impl Downloader {
    pub fn new(config: DownloadConfig) -> Result<Self> {
        let user_agent = crate::user_agent::compose(&config.user_agent)?;
        let user_agent = HeaderValue::from_str(&user_agent)
            .map_err(|_| Error::Config("user_agent is not a valid header value".to_owned()))?;
        crate::config::check_timeout("connect_timeout", config.connect_timeout)?;
        crate::config::check_timeout("read_timeout", config.read_timeout)?;
        ensure_crypto_provider();
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let same = attempt
                .previous()
                .first()
                .is_some_and(|first| same_host(first, attempt.url()));
            if same && attempt.previous().len() <= MAX_REDIRECTS {
                attempt.follow()
            } else {
                // The 3xx answer is returned and reported as a refused redirect.
                attempt.stop()
            }
        });
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.read_timeout)
            .redirect(policy)
            // Published files are bytes: never inflate a `.gz` the server labels as
            // gzip-encoded, or the hash would be of other bytes.
            .no_gzip()
            .build()
            .map_err(|e| Error::Config(format!("could not build the HTTP client: {e}")))?;
        Ok(Self {
            http,
            user_agent,
            config,
        })
    }

    pub fn config(&self) -> &DownloadConfig {
        &self.config
    }

    fn request(&self, method: reqwest::Method, url: &reqwest::Url) -> reqwest::RequestBuilder {
        self.http
            .request(method, url.clone())
            .header(USER_AGENT, self.user_agent.clone())
            .header(ACCEPT_ENCODING, "identity")
    }

    /// The error for an answer that is not a success (its body read up to a small limit).
    async fn status_error(
        &self,
        method: &str,
        url: &reqwest::Url,
        response: reqwest::Response,
    ) -> Error {
        let status = response.status();
        if status.is_redirection() {
            let to = header(response.headers(), LOCATION)
                .and_then(|l| url.join(&l).ok())
                .map(|u| display_url(&u))
                .unwrap_or_else(|| "an unnamed location".to_owned());
            return Error::Transport {
                url: display_url(url),
                message: format!(
                    "the server redirected to {to}; downloads only follow redirects on the \
                     same host"
                ),
                before_send: false,
            };
        }
        let headers = response.headers().clone();
        let body = read_error_body(response, url).await.unwrap_or_default();
        HttpError::from_response(
            Endpoint::Service,
            method,
            display_url(url),
            status.as_u16(),
            &headers,
            &body,
        )
        .into()
    }

    /// Whether `error` is worth another attempt, and after how long at most.
    fn retryable(&self, error: &Error) -> Option<Option<Duration>> {
        match error {
            Error::Http(http) if self.config.retry.statuses.contains(&http.status) => {
                Some(http.retry_after)
            }
            Error::Timeout { .. } => Some(None),
            Error::Transport { message, .. } if !message.contains("redirected") => Some(None),
            _ => None,
        }
    }

    /// Sends a request built by `build`, retrying per the policy; `None` for 404 and 410.
    async fn send(
        &self,
        method: reqwest::Method,
        url: &reqwest::Url,
        no_cache: bool,
    ) -> Result<Option<reqwest::Response>> {
        let mut attempt = 0;
        loop {
            let mut request = self.request(method.clone(), url);
            if no_cache {
                // Indexes and checksums must be current, not a cache's older copy.
                request = request.header(CACHE_CONTROL, "no-cache");
            }
            let error = match request.send().await {
                Ok(r) if r.status().is_success() => return Ok(Some(r)),
                Ok(r) if matches!(r.status().as_u16(), 404 | 410) => return Ok(None),
                Ok(r) => self.status_error(method.as_str(), url, r).await,
                Err(e) => from_reqwest(e, url),
            };
            match self
                .retryable(&error)
                .and_then(|after| self.config.retry.delay(attempt, after))
            {
                Some(delay) => {
                    log::warn!(target: LOG_TARGET, "{} {}: {error}; retry {} of {} in {:.1} s",
                        method, display_url(url), attempt + 1, self.config.retry.max_retries,
                        delay.as_secs_f64());
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                None => return Err(error),
            }
        }
    }

    /// `HEAD url`: the size and validators of a file, `None` if it does not exist.
    pub async fn head(&self, url: &str) -> Result<Option<RemoteFile>> {
        let url = parse_url(url)?;
        let Some(response) = self.send(reqwest::Method::HEAD, &url, true).await? else {
            return Ok(None);
        };
        // Read from the header: a HEAD answer has no body, so its body length says 0.
        let size = header(response.headers(), CONTENT_LENGTH).and_then(|v| v.trim().parse().ok());
        Ok(Some(remote_of(&response, size)))
    }

    /// `GET url` of a small file, refusing more than `limit` bytes; `None` if it does not
    /// exist. Caches are asked not to answer from an older copy.
    pub async fn get_small(&self, url: &str, limit: usize) -> Result<Option<SmallFile>> {
        let parsed = parse_url(url)?;
        let mut attempt = 0;
        loop {
            let Some(mut response) = self.send(reqwest::Method::GET, &parsed, true).await? else {
                return Ok(None);
            };
            let too_large = || Error::ResponseTooLarge {
                url: display_url(&parsed),
                limit,
            };
            if response.content_length().is_some_and(|n| n > limit as u64) {
                return Err(too_large());
            }
            let remote = remote_of(&response, response.content_length());
            let mut body = Vec::new();
            let read: Result<()> = async {
                while let Some(chunk) = response
                    .chunk()
                    .await
                    .map_err(|e| from_reqwest(e, &parsed))?
                {
                    if chunk.len() > limit - body.len() {
                        return Err(too_large());
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(())
            }
            .await;
            let error = match read {
                Ok(()) => return Ok(Some(SmallFile { body, remote })),
                Err(e) => e,
            };
            match self
                .retryable(&error)
                .and_then(|after| self.config.retry.delay(attempt, after))
            {
                Some(delay) => {
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                None => return Err(error),
            }
        }
    }

    /// Downloads `request.url` to `request.dest` (see the module docs). `progress` is
    /// called with the bytes on disk and the total, when known.
    pub async fn download(
        &self,
        request: &DownloadRequest,
        progress: &(dyn Fn(u64, Option<u64>) + Send + Sync),
    ) -> Result<Downloaded> {
        let url = parse_url(&request.url)?;
        let expected = match &request.sha256 {
            Some(s) if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Some(s.to_ascii_lowercase())
            }
            Some(s) => {
                return Err(Error::invalid(
                    "sha256",
                    format!("{s:?} is not 64 hexadecimal digits"),
                ));
            }
            None => None,
        };
        if let Some(parent) = request.dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| file_error(parent, e))?;
        }
        let (mut partial, mut remote) = Partial::open(&request.dest, url.as_str())?;
        let resumed_from = partial.len;
        let mut restarts = 0;
        let mut fresh_after_mismatch = false;
        loop {
            let finished = self
                .fill(
                    &url,
                    request,
                    &mut partial,
                    &mut remote,
                    &mut restarts,
                    progress,
                )
                .await?;
            let actual = hex(partial.sha.clone().finish().as_ref());
            match &expected {
                Some(want) if *want != actual => {
                    log::warn!(target: LOG_TARGET, "{}: sha256 {actual} is not the published {want}", display_url(&url));
                    if fresh_after_mismatch {
                        remove_partial(&request.dest);
                        return Err(Error::ChecksumMismatch {
                            url: display_url(&url),
                            expected: want.clone(),
                            actual,
                        });
                    }
                    // Once more from zero: the bytes on disk may predate a change upstream,
                    // or have been damaged on the way.
                    fresh_after_mismatch = true;
                    remote = None;
                    partial.restart()?;
                    restarts += 1;
                    continue;
                }
                _ => {}
            }
            partial
                .file
                .sync_all()
                .map_err(|e| file_error(&partial.path, e))?;
            let size = partial.len;
            drop(partial);
            let from = partial_path(&request.dest);
            std::fs::rename(&from, &request.dest).map_err(|e| file_error(&request.dest, e))?;
            let _ = std::fs::remove_file(record_path(&request.dest));
            return Ok(Downloaded {
                path: request.dest.clone(),
                size,
                sha256: actual,
                remote: finished,
                resumed_from,
                restarts,
            });
        }
    }

    /// Attempts until the partial holds the whole file; the retry count resets whenever
    /// an attempt moved the file forward.
    async fn fill(
        &self,
        url: &reqwest::Url,
        request: &DownloadRequest,
        partial: &mut Partial,
        remote: &mut Option<RemoteFile>,
        restarts: &mut u32,
        progress: &(dyn Fn(u64, Option<u64>) + Send + Sync),
    ) -> Result<RemoteFile> {
        let mut attempt = 0;
        loop {
            let before = partial.len;
            let (error, after) = match self
                .attempt(url, request, partial, remote, restarts, progress)
                .await?
            {
                Attempt::Complete(done) => return Ok(done),
                Attempt::Retry(error, after) => (error, after),
            };
            if partial.len > before {
                attempt = 0;
            }
            match self.config.retry.delay(attempt, after) {
                Some(delay) => {
                    log::warn!(target: LOG_TARGET, "{}: {error} at byte {}; resuming in {:.1} s (retry {} of {})",
                        display_url(url), partial.len, delay.as_secs_f64(), attempt + 1,
                        self.config.retry.max_retries);
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                None => return Err(error),
            }
        }
    }

    /// One request for what the partial lacks, written to it as it arrives.
    async fn attempt(
        &self,
        url: &reqwest::Url,
        request: &DownloadRequest,
        partial: &mut Partial,
        remote: &mut Option<RemoteFile>,
        restarts: &mut u32,
        progress: &(dyn Fn(u64, Option<u64>) + Send + Sync),
    ) -> Result<Attempt> {
        let mut builder = self.request(reqwest::Method::GET, url);
        if partial.len > 0 {
            builder = builder.header(RANGE, format!("bytes={}-", partial.len));
            if let Some(v) = remote.as_ref().and_then(validator)
                && let Ok(value) = HeaderValue::from_str(v)
            {
                builder = builder.header(IF_RANGE, value);
            }
        }
        let mut response = match builder.send().await {
            Ok(r) => r,
            Err(e) => return Ok(Attempt::Retry(from_reqwest(e, url), None)),
        };
        let status = response.status();
        let total = match status {
            StatusCode::PARTIAL_CONTENT => match content_range(response.headers()) {
                Some((start, total)) if start == partial.len => {
                    total.or(remote.as_ref().and_then(|r| r.size))
                }
                // A range other than the one asked for: start again from zero.
                _ => {
                    partial.restart()?;
                    *restarts += 1;
                    return Ok(Attempt::Retry(
                        Error::Transport {
                            url: display_url(url),
                            message: "the server answered with another range".to_owned(),
                            before_send: false,
                        },
                        Some(Duration::ZERO),
                    ));
                }
            },
            StatusCode::OK => {
                if partial.len > 0 {
                    // A 200 to a Range request is the whole file (ranges unsupported, or
                    // the file changed): start again from zero.
                    log::info!(target: LOG_TARGET, "{}: the server sent the whole file; restarting from zero", display_url(url));
                    partial.restart()?;
                    *restarts += 1;
                }
                response.content_length()
            }
            StatusCode::RANGE_NOT_SATISFIABLE => {
                let total = content_range(response.headers()).and_then(|(_, t)| t);
                if let (Some(total), Some(known)) = (total, remote.clone())
                    && total == partial.len
                {
                    // Everything was there already.
                    progress(partial.len, Some(total));
                    return Ok(Attempt::Complete(known));
                }
                partial.restart()?;
                *restarts += 1;
                return Ok(Attempt::Retry(
                    Error::Transport {
                        url: display_url(url),
                        message: "the partial download is longer than the file".to_owned(),
                        before_send: false,
                    },
                    Some(Duration::ZERO),
                ));
            }
            _ => {
                let error = self.status_error("GET", url, response).await;
                return match self.retryable(&error) {
                    Some(after) => Ok(Attempt::Retry(error, after)),
                    None => Err(error),
                };
            }
        };
        if let Some(total) = total
            && total > request.max_size
        {
            return Err(Error::ResponseTooLarge {
                url: display_url(url),
                limit: usize::try_from(request.max_size).unwrap_or(usize::MAX),
            });
        }
        let fresh = remote_of(&response, total);
        // The validators of the answer the bytes come from, on disk before the first byte.
        let keep = match remote.as_ref() {
            Some(r) if partial.len > 0 => RemoteFile {
                size: total.or(r.size),
                etag: fresh.etag.clone().or(r.etag.clone()),
                last_modified: fresh.last_modified.clone().or(r.last_modified.clone()),
            },
            _ => fresh,
        };
        write_record(
            &request.dest,
            &PartialRecord {
                url: url.as_str().to_owned(),
                remote: keep.clone(),
            },
        )?;
        *remote = Some(keep.clone());
        progress(partial.len, total);
        let limit = total.unwrap_or(request.max_size).min(request.max_size);
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(e) => {
                    partial
                        .file
                        .flush()
                        .map_err(|e| file_error(&partial.path, e))?;
                    return Ok(Attempt::Retry(from_reqwest(e, url), None));
                }
            };
            if chunk.len() as u64 > limit.saturating_sub(partial.len) {
                partial.restart()?;
                *restarts += 1;
                return Err(Error::ResponseTooLarge {
                    url: display_url(url),
                    limit: usize::try_from(limit).unwrap_or(usize::MAX),
                });
            }
            partial.append(&chunk)?;
            progress(partial.len, total);
        }
        if let Some(total) = total
            && partial.len < total
        {
            return Ok(Attempt::Retry(
                Error::Transport {
                    url: display_url(url),
                    message: format!("the body ended after {} of {total} bytes", partial.len),
                    before_send: false,
                },
                None,
            ));
        }
        Ok(Attempt::Complete(keep))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ranges() {
        let mut h = HeaderMap::new();
        h.insert(
            CONTENT_RANGE,
            HeaderValue::from_static("bytes 100-199/1000"),
        );
        assert_eq!(content_range(&h), Some((100, Some(1000))));
        h.insert(CONTENT_RANGE, HeaderValue::from_static("bytes 5-9/*"));
        assert_eq!(content_range(&h), Some((5, None)));
        h.insert(CONTENT_RANGE, HeaderValue::from_static("bytes */1000"));
        assert_eq!(content_range(&h), Some((u64::MAX, Some(1000))));
        h.insert(CONTENT_RANGE, HeaderValue::from_static("items 1-2/3"));
        assert_eq!(content_range(&h), None);
    }

    #[test]
    fn strong_etags_are_preferred_as_validators() {
        let r = RemoteFile {
            size: None,
            etag: Some("\"abc\"".into()),
            last_modified: Some("Tue, 01 Apr 2025 00:00:00 GMT".into()),
        };
        assert_eq!(validator(&r), Some("\"abc\""));
        let weak = RemoteFile {
            etag: Some("W/\"abc\"".into()),
            ..r.clone()
        };
        assert_eq!(validator(&weak), Some("Tue, 01 Apr 2025 00:00:00 GMT"));
        assert_eq!(validator(&RemoteFile::default()), None);
    }

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
}
