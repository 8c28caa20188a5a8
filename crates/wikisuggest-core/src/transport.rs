//! The one HTTP transport under both clients: the service [`crate::Client`] and the wiki's
//! Action API ([`crate::mediawiki::ActionApi`]).
//!
//! Everything that protects a request lives here once: the single `reqwest` builder (TLS
//! verification on, redirects never followed, timeouts), the User-Agent, the bearer token,
//! bodies read with a limit while they stream (an endless or inflating body stops at the
//! limit; of an error body only the start is read), the credentials of a request cut out of
//! every text its answer produces, and the retry and replay loop. A client decides only what
//! an answer means, through a [`Verdict`]; when to try again, how long to wait and how to
//! replay with a renewed token is decided here.
//!
//! Large files go through the same transport ([`Transport::download`], in [`ranged`]): the
//! body streams into a [`Sink`] instead of memory, and a cut transfer is resumed with
//! `Range` and `If-Range` as [`wikisuggest_resume`] decides, within a budget of attempts and
//! bytes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reqwest::Method;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, USER_AGENT};

use crate::auth::AuthProvider;
use crate::error::{Error, Result, display_url, from_reqwest};
use crate::limits::RequestLimits;
use crate::redact::Redactor;
use crate::retry::RetryPolicy;
use crate::secret::Secret;

pub mod ranged;

pub use ranged::Sink;
pub use wikisuggest_resume::{DownloadBudget, RemoteFile, Resume};

/// Log target of request events; Python sees it as the logger `wikisuggest.http`.
pub(crate) const LOG_TARGET: &str = "wikisuggest.http";

/// How much of an error response's body is read: enough for any error document; the rest
/// is not waited for, so an endless (or 1 GB) error body costs 64 KiB.
pub const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// Numbers the requests of this process, so the log lines of one request (its attempts,
/// retries and replay) can be told apart from those of concurrent ones.
static REQUEST_SEQUENCE: AtomicU64 = AtomicU64::new(1);

/// The settings every request of a transport shares.
#[derive(Debug, Clone)]
pub struct TransportConfig {
    /// The composed User-Agent (operator's part with ours appended).
    pub user_agent: String,
    /// Limit for one attempt, from sending the request to the last byte of the body; `None`
    /// for downloads, which take as long as the file needs (`read_timeout` bounds them).
    pub timeout: Option<Duration>,
    pub connect_timeout: Duration,
    /// Longest wait for the answer's headers and for each next piece of its body: a stalled
    /// transfer fails after it (and a download is resumed), however long the whole takes.
    pub read_timeout: Option<Duration>,
    pub retry: RetryPolicy,
    /// Largest successful response body accepted, in bytes, counted after decompression.
    pub max_body_size: usize,
    /// Whether a body labelled `Content-Encoding: gzip` is inflated. Downloads keep the
    /// bytes as published (a `.gz` file stays compressed, or its hash would be of others).
    pub decompress: bool,
    pub redirects: Redirects,
}

/// Which redirects a transport follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redirects {
    /// None: an answer's redirect is the caller's to judge. Requests that carry credentials
    /// (a bearer token, a session cookie, a password) use this: a redirect would carry them
    /// wherever it points.
    Never,
    /// Up to this many, each to the host and port of the URL asked for (an upgrade from
    /// http to https on the default ports included), never from https to http. For requests
    /// without credentials: published files moved on their own server.
    SameHost(usize),
}

/// The body a request carries.
#[derive(Debug, Clone)]
pub enum Body {
    None,
    Json(Vec<u8>),
    Form(Vec<u8>),
}

/// One request as the transport sends it (again, on a retry or replay).
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub method: Method,
    pub url: reqwest::Url,
    pub body: Body,
    /// Further headers (`Accept`, a session's `Cookie`); values marked sensitive stay so.
    pub headers: HeaderMap,
    /// Credentials the request carries besides the bearer token and the secret fields of a
    /// form (see [`Redactor::for_request`]): session cookies, a CSRF token, a password.
    pub secrets: Vec<Secret>,
    /// A lower limit than the transport's `max_body_size` for this answer's body (an index,
    /// a checksum file).
    pub body_limit: Option<usize>,
}

impl Outgoing {
    pub fn new(method: Method, url: reqwest::Url, body: Body) -> Self {
        Self {
            method,
            url,
            body,
            headers: HeaderMap::new(),
            secrets: Vec::new(),
            body_limit: None,
        }
    }
}

/// An answer, whatever its status. Bodies are bounded: a success's by the transport's
/// `max_body_size`, anything else's by [`ERROR_BODY_LIMIT`] and already redacted.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// The request URL as it may be shown (no query, no user info).
    pub url: String,
    /// The credentials the request carried, to cut out of any text quoting this answer.
    pub redactor: Redactor,
}

impl Reply {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as text, with every credential of the request replaced.
    pub fn redacted_text(&self) -> String {
        self.redactor.text(&String::from_utf8_lossy(&self.body))
    }
}

/// What a client makes of one answer.
pub enum Verdict<T> {
    /// The call is over, successfully.
    Done(T),
    /// The call failed and trying again would not help.
    Fail(Error),
    /// The call failed in a way that may pass: try again after the back-off (or `after`,
    /// the server's `Retry-After`) while the retry budget lasts; then fail with `error`.
    Retry {
        error: Error,
        after: Option<Duration>,
    },
    /// The server rejected the bearer token: renew it and replay the request once (outside
    /// the retry budget: it is a different request, not a repetition); else fail with `error`.
    TokenRejected(Error),
}

/// One connection pool and the settings of [`TransportConfig`]; cheap to clone (clones share
/// the pool).
#[derive(Clone)]
pub struct Transport {
    http: reqwest::Client,
    user_agent: HeaderValue,
    retry: RetryPolicy,
    max_body_size: usize,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("user_agent", &self.user_agent)
            .field("max_body_size", &self.max_body_size)
            .finish_non_exhaustive()
    }
}

/// Whether a redirect from `from` to `to` stays on the same server (and does not drop TLS).
pub(crate) fn same_host(from: &reqwest::Url, to: &reqwest::Url) -> bool {
    // An upgrade from http to https on the default ports is the same server.
    let upgrade = from.scheme() == "http"
        && to.scheme() == "https"
        && from.port().is_none()
        && to.port().is_none();
    from.host_str() == to.host_str()
        && (from.port_or_known_default() == to.port_or_known_default() || upgrade)
        && !(from.scheme() == "https" && to.scheme() != "https")
}

fn redirect_policy(redirects: Redirects) -> reqwest::redirect::Policy {
    match redirects {
        Redirects::Never => reqwest::redirect::Policy::none(),
        Redirects::SameHost(max) => reqwest::redirect::Policy::custom(move |attempt| {
            let same = attempt
                .previous()
                .first()
                .is_some_and(|first| same_host(first, attempt.url()));
            if same && attempt.previous().len() <= max {
                attempt.follow()
            } else {
                // The 3xx answer is returned, and reported as a refused redirect.
                attempt.stop()
            }
        }),
    }
}

/// The retry state of one request: how many attempts in a row failed, and the wait before
/// the next. Every retry of the crate, of a call or of a download, waits here: the policy's
/// back-off, the server's `Retry-After` (up to its cap), and one log line per retry.
pub(crate) struct Retries<'a> {
    policy: &'a RetryPolicy,
    id: u64,
    failed: u32,
}

impl<'a> Retries<'a> {
    pub(crate) fn new(policy: &'a RetryPolicy) -> Self {
        Self {
            policy,
            id: REQUEST_SEQUENCE.fetch_add(1, Ordering::Relaxed),
            failed: 0,
        }
    }

    /// The number of this request in the log lines.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The last attempt moved the work forward (a download got further than ever before):
    /// the failures before it are forgiven.
    pub(crate) fn progressed(&mut self) {
        self.failed = 0;
    }

    /// After a failed attempt that may pass: waits the back-off (or `after`, the server's
    /// `Retry-After`) and returns `Ok`, or gives `error` back when the policy says stop.
    pub(crate) async fn pause(
        &mut self,
        what: &str,
        error: Error,
        after: Option<Duration>,
    ) -> Result<()> {
        let Some(delay) = self.policy.delay(self.failed, after) else {
            return Err(error);
        };
        log::warn!(
            target: LOG_TARGET,
            "r{} {what}: {}; retry {} of {} in {:.1} s",
            self.id,
            short_reason(&error),
            self.failed + 1,
            self.policy.max_retries,
            delay.as_secs_f64()
        );
        tokio::time::sleep(delay).await;
        self.failed += 1;
        Ok(())
    }
}

impl Transport {
    pub fn new(config: &TransportConfig) -> Result<Self> {
        let user_agent = HeaderValue::from_str(&config.user_agent)
            .map_err(|_| Error::Config("user_agent is not a valid header value".to_owned()))?;
        let mut http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .redirect(redirect_policy(config.redirects));
        crate::config::check_timeout("connect_timeout", config.connect_timeout)?;
        if let Some(timeout) = config.timeout {
            crate::config::check_timeout("timeout", timeout)?;
            http = http.timeout(timeout);
        }
        if let Some(timeout) = config.read_timeout {
            crate::config::check_timeout("read_timeout", timeout)?;
            http = http.read_timeout(timeout);
        }
        if !config.decompress {
            http = http.no_gzip();
        }
        if config.max_body_size == 0 {
            return Err(Error::Config("max_body_size must be positive".to_owned()));
        }
        ensure_crypto_provider();
        let http = http
            .build()
            .map_err(|e| Error::Config(format!("could not build the HTTP client: {e}")))?;
        Ok(Self {
            http,
            user_agent,
            retry: config.retry.clone(),
            max_body_size: config.max_body_size,
        })
    }

    pub fn user_agent(&self) -> &str {
        self.user_agent.to_str().unwrap_or_default()
    }

    pub fn retry(&self) -> &RetryPolicy {
        &self.retry
    }

    /// Send the request `prepare` builds (called again for each attempt, so it may include
    /// state that changed, such as cookies) until `judge` accepts an answer or gives up.
    ///
    /// With `auth`, every attempt carries its bearer token. Failures before an answer (not
    /// timeouts: the whole attempt had its time) are retried when nothing can have been
    /// processed twice: always for GET and HEAD, for other methods only when no byte of the
    /// request was sent. `limits`, when given, is
    /// taken for each attempt until its answer is read.
    pub async fn exchange<T>(
        &self,
        auth: Option<&dyn AuthProvider>,
        limits: Option<&RequestLimits>,
        mut prepare: impl FnMut() -> Result<Outgoing>,
        mut judge: impl FnMut(Reply) -> Verdict<T>,
    ) -> Result<T> {
        let mut token = match auth {
            Some(auth) => Some(auth.bearer().await?),
            None => None,
        };
        let mut replayed = false;
        let mut retries = Retries::new(&self.retry);
        let id = retries.id();
        loop {
            let request = prepare()?;
            let shown_url = display_url(&request.url);
            let method = request.method.clone();
            let form = match &request.body {
                Body::Form(bytes) => Some(bytes.as_slice()),
                _ => None,
            };
            let mut secrets = request.secrets.clone();
            secrets.extend(token.clone());
            let redactor = Redactor::for_request(&secrets, form);
            let permit = match limits {
                Some(limits) => Some(limits.acquire().await?),
                None => None,
            };
            let started = Instant::now();
            let sent = self
                .send_once(request, token.as_ref(), &shown_url, &redactor)
                .await;
            drop(permit);
            let elapsed_ms = started.elapsed().as_millis();
            let (error, after) = match sent {
                Ok(reply) => {
                    log::debug!(target: LOG_TARGET, "r{id} {method} {shown_url} -> {} ({elapsed_ms} ms)", reply.status);
                    match judge(reply) {
                        Verdict::Done(value) => return Ok(value),
                        Verdict::Fail(error) => return Err(redactor.error(error)),
                        Verdict::TokenRejected(error) => {
                            let error = redactor.error(error);
                            if let (Some(auth), Some(sent), false) =
                                (auth, token.as_ref(), replayed)
                            {
                                replayed = true;
                                log::info!(target: LOG_TARGET, "r{id} the server rejected the access token ({}); renewing it and replaying once", short_reason(&error));
                                if let Some(fresh) = auth.renew_rejected(sent.clone()).await? {
                                    token = Some(fresh);
                                    continue;
                                }
                            }
                            return Err(error);
                        }
                        Verdict::Retry { error, after } => (redactor.error(error), after),
                    }
                }
                Err(error) => {
                    let error = redactor.error(error);
                    log::debug!(target: LOG_TARGET, "r{id} {method} {shown_url} failed after {elapsed_ms} ms: {error}");
                    let idempotent = method == Method::GET || method == Method::HEAD;
                    let retryable = matches!(
                        &error,
                        Error::Transport { before_send, .. } if idempotent || *before_send
                    );
                    if !retryable {
                        return Err(error);
                    }
                    (error, None)
                }
            };
            retries
                .pause(&format!("{method} {shown_url}"), error, after)
                .await?;
        }
    }

    /// One attempt: the answer with its body read within the limits, or why there is none.
    /// Errors are not yet redacted (the caller does, with the request's redactor).
    async fn send_once(
        &self,
        request: Outgoing,
        token: Option<&Secret>,
        shown_url: &str,
        redactor: &Redactor,
    ) -> Result<Reply> {
        let url = request.url;
        let limit = request
            .body_limit
            .map_or(self.max_body_size, |l| l.min(self.max_body_size));
        let mut builder = self
            .http
            .request(request.method, url.clone())
            .header(USER_AGENT, self.user_agent.clone())
            .headers(request.headers);
        if let Some(token) = token {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", token.expose())).map_err(|_| {
                    Error::Config("the access token is not a valid header value".to_owned())
                })?;
            value.set_sensitive(true);
            builder = builder.header(AUTHORIZATION, value);
        }
        builder = match request.body {
            Body::None => builder,
            Body::Json(bytes) => builder.header(CONTENT_TYPE, "application/json").body(bytes),
            Body::Form(bytes) => builder
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(bytes),
        };
        let response = builder.send().await.map_err(|e| from_reqwest(e, &url))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = if status.is_success() {
            read_body(response, limit, &url).await?
        } else {
            // Redacted before anyone parses or cuts it: a secret straddling a later cut
            // would otherwise survive as a prefix.
            let body = read_error_body(response, &url).await?;
            if redactor.is_empty() {
                body
            } else {
                redactor.text(&String::from_utf8_lossy(&body)).into_bytes()
            }
        };
        Ok(Reply {
            status: status.as_u16(),
            headers,
            body,
            url: shown_url.to_owned(),
            redactor: redactor.clone(),
        })
    }
}

/// A successful response's body, refusing to hold more than `limit` bytes. reqwest hands
/// out decompressed chunks, so the count is of inflated bytes: a small gzip that inflates to
/// gigabytes stops at the limit like an endless chunked body does. A declared
/// `Content-Length` above the limit fails before anything is read.
async fn read_body(
    mut response: reqwest::Response,
    limit: usize,
    url: &reqwest::Url,
) -> Result<Vec<u8>> {
    let too_large = || Error::ResponseTooLarge {
        url: display_url(url),
        limit,
    };
    // The length is only trusted as an early refusal; the count below is what enforces it.
    let declared = response
        .content_length()
        .and_then(|n| usize::try_from(n).ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut body = Vec::with_capacity(declared.unwrap_or(0).min(limit).min(1 << 20));
    while let Some(chunk) = response.chunk().await.map_err(|e| from_reqwest(e, url))? {
        if chunk.len() > limit - body.len() {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The start of an error (or redirect) response's body: at most [`ERROR_BODY_LIMIT`] bytes.
/// A body cut short, or one that breaks off, still leaves the status to report.
pub(crate) async fn read_error_body(
    mut response: reqwest::Response,
    url: &reqwest::Url,
) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = ERROR_BODY_LIMIT - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if body.len() >= ERROR_BODY_LIMIT {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) if e.is_timeout() => return Err(from_reqwest(e, url)),
            Err(_) => break,
        }
    }
    Ok(body)
}

/// Installs the TLS crypto provider once per process: reqwest needs one, and ring builds
/// without cmake or nasm. Every HTTP client of the crate (the transport, the downloader)
/// calls it before building its reqwest client.
pub(crate) fn ensure_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The failure in a few words, for a log line.
pub(crate) fn short_reason(error: &Error) -> String {
    match error {
        Error::Http(http) => format!("HTTP {} {}", http.status, http.reason),
        Error::Timeout { .. } => "timed out".to_owned(),
        Error::Transport { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// A loopback server answering every connection with `answer(request_head)`, streaming
    /// `tail` forever after it when given; counts connections.
    async fn serve(
        answer: impl Fn(&str) -> Vec<u8> + Send + Sync + 'static,
        endless_tail: Option<Vec<u8>>,
    ) -> (reqwest::Url, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = reqwest::Url::parse(&format!(
            "http://{}/api.php",
            listener.local_addr().unwrap()
        ))
        .unwrap();
        let count = Arc::new(AtomicUsize::new(0));
        let seen = count.clone();
        let answer = Arc::new(answer);
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                seen.fetch_add(1, Ordering::SeqCst);
                let answer = answer.clone();
                let tail = endless_tail.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 65536];
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    let request = String::from_utf8_lossy(&buf[..n]).into_owned();
                    if sock.write_all(&answer(&request)).await.is_err() {
                        return;
                    }
                    if let Some(tail) = tail {
                        while sock.write_all(&tail).await.is_ok() {}
                    }
                });
            }
        });
        (url, count)
    }

    fn transport(max_body_size: usize, max_retries: u32) -> Transport {
        Transport::new(&TransportConfig {
            user_agent: "Test/1.0 (test@example.org) wikisuggest/0".to_owned(),
            timeout: Some(Duration::from_secs(20)),
            connect_timeout: Duration::from_secs(5),
            read_timeout: None,
            retry: RetryPolicy {
                max_retries,
                backoff_base: Duration::from_millis(1),
                ..RetryPolicy::default()
            },
            max_body_size,
            decompress: true,
            redirects: Redirects::Never,
        })
        .unwrap()
    }

    fn echo_fail(reply: Reply) -> Verdict<()> {
        Verdict::Fail(Error::Api {
            code: format!("http-{}", reply.status),
            info: String::from_utf8_lossy(&reply.body).into_owned(),
        })
    }

    #[tokio::test]
    async fn an_endless_body_stops_at_the_limit() {
        let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        let chunk = format!("{:x}\r\n{}\r\n", 65536, "x".repeat(65536)).into_bytes();
        let (url, _) = serve(move |_| head.clone(), Some(chunk)).await;
        let t = transport(1 << 20, 0);
        let err = t
            .exchange(
                None,
                None,
                || Ok(Outgoing::new(Method::GET, url.clone(), Body::None)),
                |_reply| Verdict::Done(()),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, Error::ResponseTooLarge { limit, .. } if limit == 1 << 20),
            "{err}"
        );
    }

    #[tokio::test]
    async fn an_endless_error_body_is_read_to_64_kib_and_its_echo_redacted() {
        let (url, _) = serve(
            |request| {
                let mut head = b"HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
                let echo = format!("you sent {request}");
                head.extend(format!("{:x}\r\n{echo}\r\n", echo.len()).into_bytes());
                head
            },
            Some(format!("{:x}\r\n{}\r\n", 65536, "y".repeat(65536)).into_bytes()),
        )
        .await;
        let t = transport(1 << 20, 0);
        let body = b"lgname=Bot&lgpassword=pa%24%24word-123&token=csrf%2B%5C".to_vec();
        let err = t
            .exchange(
                Some(&crate::auth::StaticToken::new(Secret::new("bearer-xyz")).unwrap()),
                None,
                || {
                    let mut out =
                        Outgoing::new(Method::POST, url.clone(), Body::Form(body.clone()));
                    out.secrets = vec![Secret::new("pa$$word-123"), Secret::new("csrf+\\")];
                    Ok(out)
                },
                |reply| {
                    assert!(reply.body.len() <= ERROR_BODY_LIMIT);
                    echo_fail(reply)
                },
            )
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("you sent POST"), "{text}");
        for secret in [
            "bearer-xyz",
            "pa$$word-123",
            "pa%24%24word-123",
            "csrf%2B%5C",
        ] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }

    #[tokio::test]
    async fn retries_are_bounded_and_a_rejected_token_is_replayed_once() {
        let answer = |_: &str| b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n".to_vec();
        let (url, count) = serve(answer, None).await;
        let t = transport(1024, 2);
        let retry = |reply: Reply| Verdict::<()>::Retry {
            error: Error::Api {
                code: format!("http-{}", reply.status),
                info: String::new(),
            },
            after: None,
        };
        let get = || Ok(Outgoing::new(Method::GET, url.clone(), Body::None));
        assert!(t.exchange(None, None, get, retry).await.is_err());
        assert_eq!(count.load(Ordering::SeqCst), 3);
        // A personal token cannot be renewed: no replay.
        let token = crate::auth::StaticToken::new(Secret::new("t")).unwrap();
        let rejected = |_: Reply| Verdict::<()>::TokenRejected(Error::Internal("401".into()));
        assert!(t.exchange(Some(&token), None, get, rejected).await.is_err());
        assert_eq!(count.load(Ordering::SeqCst), 4);
    }
}
