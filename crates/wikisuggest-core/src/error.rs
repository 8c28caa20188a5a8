//! The one error type of the core crate.
//!
//! Every variant's message is safe to show: URLs are stripped of their query, bodies are
//! truncated, and credentials are held in [`crate::Secret`], which never formats itself.

use crate::http_error::{HttpError, OAuthErrorBody};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter failed validation before anything was sent.
    #[error("invalid {name}: {message}")]
    InvalidParameter { name: String, message: String },

    /// The client itself is misconfigured (User-Agent without contact, bad base URL, ...).
    #[error("{0}")]
    Config(String),

    /// The server answered with a status of 400 or more.
    #[error("{0}")]
    Http(Box<HttpError>),

    /// No complete answer within the configured time.
    #[error("request to {url} timed out ({during})")]
    Timeout { url: String, during: String },

    /// The connection could not be made or broke before a complete answer arrived.
    #[error("request to {url} failed: {message}")]
    Transport {
        url: String,
        message: String,
        /// True when the failure happened before any byte of the request was sent, so even
        /// a non-idempotent request may be retried.
        before_send: bool,
    },

    /// The response body grew past the client's limit (`max_body_size`), counted after
    /// decompression; reading stopped there, so an endless or inflating body cannot exhaust
    /// memory.
    #[error(
        "the response of {url} is larger than the limit of {limit} bytes (after \
         decompression); raise max_body_size if this server legitimately sends more"
    )]
    ResponseTooLarge { url: String, limit: usize },

    /// The server answered 2xx but the body is not what the contract describes.
    #[error(
        "could not decode the response of {url} (HTTP {status}): {message}; body starts with {snippet:?}"
    )]
    Decode {
        url: String,
        status: u16,
        message: String,
        snippet: String,
    },

    /// The token endpoint refused a grant; see [`crate::http_error::HttpError::oauth`].
    #[error(
        "the stored refresh token is no longer accepted; authorize the application again ({0})"
    )]
    ReauthorizationRequired(String),

    /// The `state` of an authorization redirect is missing or is not the one that was sent:
    /// the redirect may have been forged (cross-site request forgery).
    #[error(
        "the state of the authorization redirect does not match the one sent; start the \
         authorization again"
    )]
    StateMismatch,

    /// The authorization server redirected back with an error instead of a code. MediaWiki
    /// reports a user's refusal as `unauthorized_client`.
    #[error("authorization was not granted: {0}")]
    AuthorizationFailed(OAuthErrorBody),

    /// A wiki's Action API refused a request with an error code (`maxlag` after the
    /// retries, `badtoken`, `protectedpage`, a failed login, ...).
    #[error("the wiki refused the request: {code}: {info}")]
    Api { code: String, info: String },

    /// An edit was refused because the page changed after the revision it was based on.
    #[error("edit conflict on {title:?}: the page has changed since revision {baserevid}")]
    EditConflict { title: String, baserevid: u64 },

    /// A downloaded file's checksum (of the kind published: `sha256`, `sha1`) is not the
    /// published one, after a second download from zero.
    #[error(
        "the file downloaded from {url} has {kind} {actual}, not the published {expected} \
         (twice, the second time from zero)"
    )]
    ChecksumMismatch {
        url: String,
        kind: &'static str,
        expected: String,
        actual: String,
    },

    /// A server answered a download with a redirect that downloads do not follow (to
    /// another host or port, or from https to http), or with more redirects than followed.
    #[error(
        "{url} redirected to {}; downloads only follow a few redirects on the same host",
        location.as_deref().unwrap_or("an unnamed location")
    )]
    RedirectRefused {
        url: String,
        location: Option<String>,
    },

    /// A download used up its budget of requests or of bytes received before the file was
    /// whole: the server keeps cutting transfers, answering other ranges than asked, or
    /// sending more than the file.
    #[error(
        "gave up downloading {url} after {attempts} requests that received {received} bytes          for a file of {}: the server keeps cutting the transfer or answering other ranges          than asked",
        size.map_or_else(|| "unknown size".to_owned(), |s| format!("{s} bytes"))
    )]
    DownloadBudget {
        url: String,
        attempts: u32,
        received: u64,
        size: Option<u64>,
    },

    /// A local file of a download could not be read or written.
    #[error("{path}: {message}")]
    File { path: String, message: String },

    /// Anything that is a bug or an environment problem rather than a remote failure.
    #[error("{0}")]
    Internal(String),
}

impl Error {
    pub fn invalid(name: impl Into<String>, message: impl Into<String>) -> Self {
        Self::InvalidParameter {
            name: name.into(),
            message: message.into(),
        }
    }

    /// The HTTP status, when the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Http(e) => Some(e.status),
            Self::Decode { status, .. } => Some(*status),
            _ => None,
        }
    }

    pub fn as_http(&self) -> Option<&HttpError> {
        match self {
            Self::Http(e) => Some(e),
            _ => None,
        }
    }
}

impl From<wikisuggest_records::params::InvalidParameter> for Error {
    fn from(value: wikisuggest_records::params::InvalidParameter) -> Self {
        Self::InvalidParameter {
            name: value.name,
            message: value.message,
        }
    }
}

impl From<HttpError> for Error {
    fn from(value: HttpError) -> Self {
        Self::Http(Box::new(value))
    }
}

/// A URL as it may appear in messages: scheme, host, port and path, never the query
/// string or user info.
pub fn display_url(url: &reqwest::Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.set_fragment(None);
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.to_string()
}

/// Classify a reqwest failure without ever formatting the URL it carries.
pub(crate) fn from_reqwest(err: reqwest::Error, url: &reqwest::Url) -> Error {
    let url = display_url(url);
    if err.is_timeout() {
        let during = if err.is_connect() {
            "while connecting"
        } else {
            "while waiting for the response"
        };
        return Error::Timeout {
            url,
            during: during.to_owned(),
        };
    }
    let before_send = err.is_connect();
    let err = err.without_url();
    let mut message = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(inner) = source {
        let text = inner.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = inner.source();
    }
    Error::Transport {
        url,
        message,
        before_send,
    }
}
