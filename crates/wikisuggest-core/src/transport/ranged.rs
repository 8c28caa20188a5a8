//! Large files through the transport: a `GET` whose body streams into a [`Sink`] (a file
//! being written) instead of memory, resumed with `Range` and `If-Range` after a cut, a
//! stall or an error status, as [`super::resume`] decides. The waits between attempts are
//! the transport's ([`super::Retries`]): its policy, the server's `Retry-After`, its log.

use reqwest::header::{
    ACCEPT_ENCODING, CONTENT_RANGE, ETAG, HeaderMap, HeaderName, HeaderValue, IF_RANGE,
    LAST_MODIFIED, LOCATION, RANGE, USER_AGENT,
};

use wikisuggest_resume::{End, Head, Refusal, RemoteFile, Resume};

use super::{LOG_TARGET, Retries, Transport, Verdict, read_error_body};
use crate::error::{Error, Result, display_url, from_reqwest};
use crate::http_error::{Endpoint, HttpError};
use crate::retry::RetryPolicy;

/// Where the bytes of a download go.
pub trait Sink: Send {
    /// Before the first byte of an answer: what to keep beside the bytes (the validators
    /// of the answer they come from), so that a later run can resume them.
    fn begin(&mut self, record: &RemoteFile) -> Result<()>;
    /// Empties the bytes held: the next are the file's first.
    fn restart(&mut self) -> Result<()>;
    /// Appends the next bytes.
    fn append(&mut self, bytes: &[u8]) -> Result<()>;
    /// After a body ended, cut or not: the bytes so far are written out.
    fn flush(&mut self) -> Result<()>;
}

pub(crate) fn header(headers: &HeaderMap, name: HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// The validators of an answer (its size is the caller's to say).
pub(crate) fn validators(headers: &HeaderMap) -> RemoteFile {
    RemoteFile {
        size: None,
        etag: header(headers, ETAG),
        last_modified: header(headers, LAST_MODIFIED),
    }
}

/// The error of a download `resume` stopped or restarted, naming its URL.
fn refused(url: &reqwest::Url, refusal: Refusal) -> Error {
    let url = display_url(url);
    match refusal {
        Refusal::Budget {
            attempts,
            received,
            size,
        } => Error::DownloadBudget {
            url,
            attempts,
            received,
            size,
        },
        Refusal::TooLarge { limit } => Error::ResponseTooLarge {
            url,
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
        },
        other => Error::Transport {
            url,
            message: other.to_string(),
            before_send: false,
        },
    }
}

/// What an answer that is neither a success nor a range means for a request of a published
/// file: a redirect the transport did not follow is refused; a status of the policy's list
/// is retried (after its `Retry-After`); any other fails.
pub(crate) fn refusal<T>(
    policy: &RetryPolicy,
    method: &str,
    url: &reqwest::Url,
    status: u16,
    headers: &HeaderMap,
    body: &[u8],
) -> Verdict<T> {
    if (300..400).contains(&status) {
        let location = header(headers, LOCATION)
            .and_then(|l| url.join(&l).ok())
            .map(|u| display_url(&u));
        return Verdict::Fail(Error::RedirectRefused {
            url: display_url(url),
            location,
        });
    }
    let error = HttpError::from_response(
        Endpoint::Service,
        method,
        display_url(url),
        status,
        headers,
        body,
    );
    if policy.statuses.contains(&status) {
        let after = error.retry_after;
        Verdict::Retry {
            error: error.into(),
            after,
        }
    } else {
        Verdict::Fail(error.into())
    }
}

impl Transport {
    /// `GET url` into `sink`, which holds the bytes `resume` describes, until the whole file
    /// is there (its validators are returned) or the download fails: a status that is not
    /// retried, a body past the size limit, retries without progress past the policy, or
    /// the budget of `resume` used up. `progress(held, total)` is called as bytes arrive.
    /// No credentials are sent; the body is not decoded.
    pub async fn download(
        &self,
        url: &reqwest::Url,
        sink: &mut dyn Sink,
        resume: &mut Resume,
        progress: &(dyn Fn(u64, Option<u64>) + Send + Sync),
    ) -> Result<RemoteFile> {
        let what = format!("GET {}", display_url(url));
        let mut retries = Retries::new(&self.retry);
        let id = retries.id();
        loop {
            if resume.take_restart() {
                sink.restart()?;
            }
            let asked = resume.request().map_err(|r| refused(url, r))?;
            let mut builder = self
                .http
                .get(url.clone())
                .header(USER_AGENT, self.user_agent.clone())
                .header(ACCEPT_ENCODING, "identity");
            if let Some(start) = asked.start {
                builder = builder.header(RANGE, format!("bytes={start}-"));
                if let Some(value) = asked
                    .if_range
                    .as_deref()
                    .and_then(|v| HeaderValue::from_str(v).ok())
                {
                    builder = builder.header(IF_RANGE, value);
                }
            }
            let mut response = match builder.send().await {
                Ok(response) => response,
                Err(e) => {
                    retries.pause(&what, from_reqwest(e, url), None).await?;
                    continue;
                }
            };
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            log::debug!(target: LOG_TARGET, "r{id} {what} (from byte {}) -> {status}", resume.held());
            let head = resume.head(
                status,
                header(&headers, CONTENT_RANGE).as_deref(),
                response.content_length(),
                validators(&headers),
            );
            if resume.take_restart() {
                log::info!(target: LOG_TARGET, "r{id} {what}: starting the file again from zero");
                sink.restart()?;
            }
            let (total, record) = match head {
                Head::Append { total, record } => (total, record),
                Head::Complete(done) => {
                    progress(resume.held(), Some(resume.held()));
                    return Ok(done);
                }
                Head::Retry(refusal) => {
                    retries.pause(&what, refused(url, refusal), None).await?;
                    continue;
                }
                Head::Fail(refusal) => return Err(refused(url, refusal)),
                Head::Other => {
                    let body = read_error_body(response, url).await.unwrap_or_default();
                    match refusal::<()>(&self.retry, "GET", url, status, &headers, &body) {
                        Verdict::Retry { error, after } => {
                            retries.pause(&what, error, after).await?;
                            continue;
                        }
                        Verdict::Fail(error) | Verdict::TokenRejected(error) => {
                            return Err(error);
                        }
                        Verdict::Done(()) => continue,
                    }
                }
            };
            sink.begin(&record)?;
            progress(resume.held(), total);
            let cut = loop {
                match response.chunk().await {
                    Ok(Some(chunk)) => {
                        if let Err(refusal) = resume.bytes(chunk.len() as u64) {
                            if resume.take_restart() {
                                sink.restart()?;
                            }
                            return Err(refused(url, refusal));
                        }
                        sink.append(&chunk)?;
                        progress(resume.held(), total);
                    }
                    Ok(None) => break None,
                    Err(e) => break Some(from_reqwest(e, url)),
                }
            };
            sink.flush()?;
            match resume.end(cut.is_some()) {
                End::Complete(done) => return Ok(done),
                End::Retry { short, progressed } => {
                    if progressed {
                        retries.progressed();
                    }
                    let error = match (cut, short) {
                        (Some(error), _) => error,
                        (None, Some(refusal)) => refused(url, refusal),
                        (None, None) => Error::Internal("a body ended without a reason".into()),
                    };
                    retries.pause(&what, error, None).await?;
                }
            }
        }
    }
}
