//! Client configuration.

use std::time::Duration;

use crate::error::{Error, Result};
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
    /// Most request starts per second, if set.
    pub rate_limit: Option<f64>,
}

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
        }
    }
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
