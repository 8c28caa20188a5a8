//! Client configuration.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::limits::RateLimit;
use crate::retry::RetryPolicy;

pub const DEFAULT_BASE_URL: &str = "https://api.wikimedia.org";
pub const DEFAULT_AUTH_URL: &str = "https://meta.wikimedia.org";

#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Where the services live; `{base_url}/service/...`.
    pub base_url: String,
    /// Where the OAuth 2.0 endpoints live; `{auth_url}/w/rest.php/oauth2/...`.
    pub auth_url: String,
    /// `<app>/<version> (<operator contact>)`; `wikisuggest/<version>` is appended.
    pub user_agent: String,
    /// Limit for one attempt, from sending the request to the last byte of the body.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub retry: RetryPolicy,
    /// Most requests in flight at once; `None` picks 3 for Wikimedia's hosts (their stated
    /// limit) and 32 for any other host.
    pub max_concurrency: Option<usize>,
    /// How fast requests may start, if limited: evenly spaced, or a budget per window.
    pub rate_limit: Option<RateLimit>,
    /// Largest response body accepted, in bytes, counted after decompression.
    pub max_body_size: usize,
    /// Send credentials over plain `http://` to a host that is not loopback. Off by default:
    /// anyone on the path could read the token or the client secret.
    pub allow_insecure_http: bool,
}

/// Default of [`ClientConfig::max_body_size`]: 64 MiB, far above any answer of the services
/// (a link recommendation set for a long article is well under 1 MiB).
pub const DEFAULT_MAX_BODY_SIZE: usize = 64 * 1024 * 1024;

impl ClientConfig {
    pub fn new(user_agent: impl Into<String>) -> Self {
        Self {
            base_url: DEFAULT_BASE_URL.to_owned(),
            auth_url: DEFAULT_AUTH_URL.to_owned(),
            user_agent: user_agent.into(),
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            max_concurrency: None,
            rate_limit: None,
            max_body_size: DEFAULT_MAX_BODY_SIZE,
            allow_insecure_http: false,
        }
    }
}

/// Whether `url`'s host is this machine: `localhost`, `127.0.0.0/8` or `::1`, as parsed
/// (never by string prefix: `127.0.0.1.example.org` is a remote host).
pub fn is_loopback(url: &reqwest::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// Refuse to send credentials to `url` in clear text, unless it is loopback or the user
/// opted in with `allow_insecure_http`.
pub fn check_credentials_transport(name: &str, url: &str, allow_insecure_http: bool) -> Result<()> {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return Ok(());
    };
    if parsed.scheme() == "http" && !is_loopback(&parsed) && !allow_insecure_http {
        return Err(Error::Config(format!(
            "{name} {url} uses plain http:// to a host that is not this machine, and credentials \
             would travel unencrypted; use https://, or pass allow_insecure_http=True if the \
             network is trusted"
        )));
    }
    Ok(())
}

/// A base URL without its trailing slash, after checking it is an absolute http(s) URL
/// without query or fragment (they would end up in the middle of every request URL).
pub fn normalise_base_url(name: &str, raw: &str) -> Result<String> {
    let url = reqwest::Url::parse(raw.trim())
        .map_err(|e| Error::Config(format!("{name} {raw:?} is not a valid URL: {e}")))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(Error::Config(format!(
            "{name} must use http or https, got {:?}",
            url.scheme()
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(Error::Config(format!(
            "{name} must not have a query or fragment"
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::Config(format!(
            "{name} must not carry credentials; use auth= instead"
        )));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

pub(crate) fn check_timeout(name: &str, value: Duration) -> Result<()> {
    if value.is_zero() {
        return Err(Error::Config(format!("{name} must be positive")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clear_text_credentials_only_to_loopback_or_by_choice() {
        for ok in [
            "https://example.org",
            "http://127.0.0.1:8080",
            "http://127.8.9.1",
            "http://[::1]:9",
            "http://localhost:1",
            "http://LOCALHOST",
        ] {
            assert!(
                check_credentials_transport("base_url", ok, false).is_ok(),
                "{ok}"
            );
        }
        for bad in [
            "http://example.org",
            "http://127.0.0.1.example.org",
            "http://localhost.example.org",
            "http://10.0.0.1",
            "http://[::2]",
        ] {
            let err = check_credentials_transport("base_url", bad, false).unwrap_err();
            assert!(err.to_string().contains("allow_insecure_http"), "{err}");
            assert!(check_credentials_transport("base_url", bad, true).is_ok());
        }
    }

    #[test]
    fn base_urls() {
        assert_eq!(
            normalise_base_url("base_url", "http://127.0.0.1:8080/").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            normalise_base_url("base_url", "https://example.org/prefix/").unwrap(),
            "https://example.org/prefix"
        );
        for bad in ["ftp://x", "not a url", "http://x/?a=1", "http://user:pw@x/"] {
            let msg = normalise_base_url("base_url", bad).unwrap_err().to_string();
            assert!(msg.contains("base_url"), "{msg}");
            assert!(!msg.contains("pw@"), "{msg}");
        }
    }
}
