//! A client for a wiki's MediaWiki Action API (`…/api.php`): read a page's current revision,
//! log in with a bot password, and save an edit without overwriting anyone else's.
//!
//! Requests follow the same rules as the service client: the operator's User-Agent with ours
//! appended, retries with jittered back-off for what may be retried, and a bearer token from
//! an [`AuthProvider`] when one is given (replayed once with a renewed token after a 401).
//! Edits send `maxlag` (5 s by default) and, when the wiki answers that its replicas lag, wait
//! as long as its `Retry-After` says before trying again. A conflicting edit is reported as
//! [`Error::EditConflict`]: the edit names its base revision (`baserevid`, and deliberately no
//! `basetimestamp`, with which MediaWiki lets a user overwrite their own newer edit).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Method;
use reqwest::header::{AUTHORIZATION, COOKIE, HeaderMap, HeaderValue, RETRY_AFTER, SET_COOKIE};
use serde_json::Value;

use crate::client::AuthProvider;
use crate::error::{Error, Result, display_url, from_reqwest};
use crate::http_error::truncate_chars;
use crate::retry::RetryPolicy;
use crate::secret::Secret;

/// Settings of one [`ActionApi`].
#[derive(Debug, Clone)]
pub struct ActionApiConfig {
    /// The wiki's `api.php`, e.g. `https://en.wikipedia.org/w/api.php`.
    pub api_url: String,
    /// `<app>/<version> (<operator contact>)`; `wikisuggest/<version>` is appended.
    pub user_agent: String,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub retry: RetryPolicy,
    /// Sent with every write: the wiki refuses writes while its replicas lag more than this
    /// many seconds (Wikimedia asks bots for 5). `None` leaves it out.
    pub maxlag: Option<u32>,
}

impl ActionApiConfig {
    pub fn new(api_url: impl Into<String>, user_agent: impl Into<String>) -> Self {
        Self {
            api_url: api_url.into(),
            user_agent: user_agent.into(),
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            maxlag: Some(5),
        }
    }
}

/// One revision of a page, as production's service reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRevision {
    pub title: String,
    pub pageid: u64,
    pub revid: u64,
    pub wikitext: String,
}

/// An edit to save.
#[derive(Debug, Clone)]
pub struct EditRequest {
    pub title: String,
    pub text: String,
    /// The revision the new text was made from; a later revision by anyone is a conflict.
    pub baserevid: u64,
    pub summary: String,
    pub tags: Vec<String>,
    pub minor: bool,
    pub bot: bool,
}

/// What the wiki did with an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditOutcome {
    pub title: String,
    pub pageid: u64,
    pub old_revid: Option<u64>,
    pub new_revid: Option<u64>,
    /// The text was identical to the current revision: nothing was saved.
    pub nochange: bool,
}

/// The actions [`ActionApi::read`] sends: reads that change nothing on the wiki.
pub const READ_ACTIONS: [&str; 3] = ["query", "parse", "wbgetentities"];

/// How a call goes over the wire: reads as GET, writes as a POSTed form (MediaWiki refuses
/// tokens in the query string).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Read,
    Write,
}

pub struct ActionApi {
    http: reqwest::Client,
    api_url: reqwest::Url,
    user_agent: HeaderValue,
    retry: RetryPolicy,
    maxlag: Option<u32>,
    auth: Option<Arc<dyn AuthProvider>>,
    /// Session cookies (a login); never shown.
    cookies: Mutex<BTreeMap<String, Secret>>,
    csrf: Mutex<Option<Secret>>,
    logged_in: Mutex<bool>,
}

impl std::fmt::Debug for ActionApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionApi")
            .field("api_url", &display_url(&self.api_url))
            .finish_non_exhaustive()
    }
}

impl ActionApi {
    pub fn new(config: ActionApiConfig, auth: Option<Arc<dyn AuthProvider>>) -> Result<Self> {
        let user_agent = crate::user_agent::compose(&config.user_agent)?;
        let user_agent = HeaderValue::from_str(&user_agent)
            .map_err(|_| Error::Config("user_agent is not a valid header value".to_owned()))?;
        let api_url = crate::config::normalise_base_url("api_url", &config.api_url)?;
        let api_url = reqwest::Url::parse(&api_url)
            .map_err(|e| Error::Config(format!("api_url is not a valid URL: {e}")))?;
        crate::config::check_timeout("timeout", config.timeout)?;
        crate::config::check_timeout("connect_timeout", config.connect_timeout)?;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.connect_timeout)
            // Redirects would carry the session cookie or bearer token to wherever they point.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Error::Config(format!("could not build the HTTP client: {e}")))?;
        Ok(Self {
            http,
            api_url,
            user_agent,
            retry: config.retry,
            maxlag: config.maxlag,
            auth,
            cookies: Mutex::new(BTreeMap::new()),
            csrf: Mutex::new(None),
            logged_in: Mutex::new(false),
        })
    }

    pub fn api_url(&self) -> String {
        display_url(&self.api_url)
    }

    /// The page's latest revision (`revid` `None`) or the given revision, with its wikitext
    /// (main slot), page id and revision id. `None` when the page or revision does not exist.
    pub async fn page(
        &self,
        title: Option<&str>,
        revid: Option<u64>,
    ) -> Result<Option<PageRevision>> {
        let mut params = vec![
            ("action", "query".to_owned()),
            ("prop", "revisions".to_owned()),
            ("rvprop", "content|ids".to_owned()),
            ("rvslots", "main".to_owned()),
        ];
        match (revid, title) {
            (Some(revid), _) => params.push(("revids", revid.to_string())),
            (None, Some(title)) => {
                params.push(("titles", title.to_owned()));
                params.push(("rvlimit", "1".to_owned()));
            }
            (None, None) => return Err(Error::invalid("title", "give a title or a revision id")),
        }
        let body = self.call(Verb::Read, params).await?;
        let Some(page) = body.pointer("/query/pages/0") else {
            return Ok(None);
        };
        let Some(revision) = page.pointer("/revisions/0") else {
            return Ok(None);
        };
        let text = revision
            .pointer("/slots/main/content")
            .and_then(Value::as_str);
        match (
            page.get("title").and_then(Value::as_str),
            page.get("pageid").and_then(Value::as_u64),
            revision.get("revid").and_then(Value::as_u64),
            text,
        ) {
            (Some(title), Some(pageid), Some(revid), Some(text)) => Ok(Some(PageRevision {
                title: title.to_owned(),
                pageid,
                revid,
                wikitext: text.to_owned(),
            })),
            _ => Err(self.decode_error("a revision without title, ids or content", &body)),
        }
    }

    /// One read of the Action API with `params` (`action` among [`READ_ACTIONS`]; `format`
    /// is added): the decoded body of a success, the wiki's error as [`Error::Api`]. Reads are
    /// retried as the policy allows; writes go through [`ActionApi::edit`] only.
    pub async fn read(&self, params: &[(String, String)]) -> Result<Value> {
        let action = params
            .iter()
            .find(|(k, _)| k == "action")
            .map(|(_, v)| v.as_str());
        if !action.is_some_and(|a| READ_ACTIONS.contains(&a)) {
            return Err(Error::invalid(
                "action",
                format!("must be one of {}", READ_ACTIONS.join(", ")),
            ));
        }
        if params.iter().any(|(k, _)| k == "format" || k == "token") {
            return Err(Error::invalid(
                "params",
                "format and token are set by the client",
            ));
        }
        let params = params
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        self.call(Verb::Read, params).await
    }

    /// Log in with a bot password (`User@appid` and its generated password). The session
    /// cookie is kept for later calls, which then assert that they run logged in.
    pub async fn login(&self, username: &str, password: &Secret) -> Result<()> {
        let tokens = self
            .call(
                Verb::Read,
                vec![
                    ("action", "query".to_owned()),
                    ("meta", "tokens".to_owned()),
                    ("type", "login".to_owned()),
                ],
            )
            .await?;
        let token = tokens
            .pointer("/query/tokens/logintoken")
            .and_then(Value::as_str)
            .ok_or_else(|| self.decode_error("no login token", &tokens))?
            .to_owned();
        let reply = self
            .call(
                Verb::Write,
                vec![
                    ("action", "login".to_owned()),
                    ("lgname", username.to_owned()),
                    ("lgpassword", password.expose().to_owned()),
                    ("lgtoken", token),
                ],
            )
            .await?;
        let result = reply.pointer("/login/result").and_then(Value::as_str);
        if result != Some("Success") {
            let reason = reply
                .pointer("/login/reason")
                .and_then(Value::as_str)
                .unwrap_or("no reason given");
            return Err(Error::Api {
                code: "login-failed".to_owned(),
                info: truncate_chars(reason, 300),
            });
        }
        *lock(&self.csrf) = None;
        *lock(&self.logged_in) = true;
        Ok(())
    }

    /// Save `edit`. Refuses to create a page, and reports a newer revision than
    /// `edit.baserevid` as [`Error::EditConflict`].
    pub async fn edit(&self, edit: &EditRequest) -> Result<EditOutcome> {
        if edit.title.trim().is_empty() {
            return Err(Error::invalid("title", "must not be empty"));
        }
        let mut renewed_token = false;
        loop {
            let token = self.csrf_token().await?;
            let mut params = vec![
                ("action", "edit".to_owned()),
                ("title", edit.title.clone()),
                ("text", edit.text.clone()),
                ("baserevid", edit.baserevid.to_string()),
                ("summary", edit.summary.clone()),
                ("nocreate", "1".to_owned()),
                (
                    if edit.minor { "minor" } else { "notminor" },
                    "1".to_owned(),
                ),
            ];
            if edit.bot {
                params.push(("bot", "1".to_owned()));
            }
            if !edit.tags.is_empty() {
                params.push(("tags", edit.tags.join("|")));
            }
            params.push(("token", token.expose().to_owned()));
            match self.call(Verb::Write, params).await {
                Ok(body) => return self.edit_outcome(&edit.title, &body),
                Err(Error::Api { code, .. }) if code == "editconflict" => {
                    return Err(Error::EditConflict {
                        title: edit.title.clone(),
                        baserevid: edit.baserevid,
                    });
                }
                // A session that expired invalidates the token: fetch a new one, once.
                Err(Error::Api { code, .. }) if code == "badtoken" && !renewed_token => {
                    renewed_token = true;
                    *lock(&self.csrf) = None;
                }
                Err(other) => return Err(other),
            }
        }
    }

    fn edit_outcome(&self, title: &str, body: &Value) -> Result<EditOutcome> {
        let edit = body
            .get("edit")
            .ok_or_else(|| self.decode_error("no edit result", body))?;
        if edit.get("result").and_then(Value::as_str) != Some("Success") {
            // Extensions (captchas, abuse filters) answer with a non-Success result.
            return Err(Error::Api {
                code: "edit-refused".to_owned(),
                info: truncate_chars(&edit.to_string(), 300),
            });
        }
        Ok(EditOutcome {
            title: edit
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or(title)
                .to_owned(),
            pageid: edit.get("pageid").and_then(Value::as_u64).unwrap_or(0),
            old_revid: edit.get("oldrevid").and_then(Value::as_u64),
            new_revid: edit.get("newrevid").and_then(Value::as_u64),
            nochange: edit.get("nochange").is_some(),
        })
    }

    async fn csrf_token(&self) -> Result<Secret> {
        if let Some(token) = lock(&self.csrf).clone() {
            return Ok(token);
        }
        let body = self
            .call(
                Verb::Read,
                vec![
                    ("action", "query".to_owned()),
                    ("meta", "tokens".to_owned()),
                ],
            )
            .await?;
        let token = body
            .pointer("/query/tokens/csrftoken")
            .and_then(Value::as_str)
            .ok_or_else(|| self.decode_error("no CSRF token", &body))?;
        let token = Secret::new(token);
        *lock(&self.csrf) = Some(token.clone());
        Ok(token)
    }

    /// One API call, retried as the policy allows; the decoded body of a success, or the
    /// wiki's error as [`Error::Api`].
    async fn call(&self, verb: Verb, mut params: Vec<(&str, String)>) -> Result<Value> {
        params.push(("format", "json".to_owned()));
        params.push(("formatversion", "2".to_owned()));
        if verb == Verb::Write {
            if let Some(lag) = self.maxlag {
                params.push(("maxlag", lag.to_string()));
            }
            if *lock(&self.logged_in) && params.iter().any(|(k, v)| *k == "action" && v == "edit") {
                params.push(("assert", "user".to_owned()));
            }
        }
        let mut attempt = 0u32;
        let mut replayed = false;
        let mut bearer = match &self.auth {
            Some(auth) => Some(auth.bearer().await?),
            None => None,
        };
        loop {
            let request = self.request(verb, &params, bearer.as_ref());
            let sent = request.send().await;
            let response = match sent {
                Ok(response) => response,
                Err(err) => {
                    let err = from_reqwest(err, &self.api_url);
                    let retryable = match &err {
                        Error::Transport { before_send, .. } => *before_send || verb == Verb::Read,
                        Error::Timeout { .. } => verb == Verb::Read,
                        _ => false,
                    };
                    match self.retry.delay(attempt, None) {
                        Some(wait) if retryable => {
                            tokio::time::sleep(wait).await;
                            attempt += 1;
                            continue;
                        }
                        _ => return Err(err),
                    }
                }
            };
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            self.keep_cookies(&headers);
            let bytes = response
                .bytes()
                .await
                .map_err(|e| from_reqwest(e, &self.api_url))?;
            if status == 401
                && !replayed
                && let (Some(auth), Some(sent)) = (&self.auth, bearer.clone())
                && let Some(fresh) = auth.renew_rejected(sent).await?
            {
                bearer = Some(fresh);
                replayed = true;
                continue;
            }
            let retry_after = retry_after(&headers);
            if status >= 400 {
                let retryable =
                    self.retry.statuses.contains(&status) && (verb == Verb::Read || status == 429);
                if let Some(wait) = self.retry.delay(attempt, retry_after).filter(|_| retryable) {
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                    continue;
                }
                return Err(Error::Api {
                    code: format!("http-{status}"),
                    info: truncate_chars(&String::from_utf8_lossy(&bytes), 300),
                });
            }
            let body: Value = serde_json::from_slice(&bytes).map_err(|e| Error::Decode {
                url: display_url(&self.api_url),
                status,
                message: e.to_string(),
                snippet: truncate_chars(&String::from_utf8_lossy(&bytes), 200),
            })?;
            let Some(error) = body.get("error") else {
                return Ok(body);
            };
            let code = error
                .get("code")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_owned();
            if code == "maxlag" {
                // The wiki says how long to stay away; without a header, its reported lag.
                let lag = error.get("lag").and_then(Value::as_f64).unwrap_or(5.0);
                let wait = retry_after.unwrap_or(Duration::from_secs_f64(lag.clamp(1.0, 60.0)));
                if let Some(wait) = self.retry.delay(attempt, Some(wait)) {
                    log::info!(
                        target: crate::client::LOG_TARGET,
                        "the wiki's replicas lag; trying again in {:.1} s",
                        wait.as_secs_f64()
                    );
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                    continue;
                }
            }
            let info = error
                .get("info")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return Err(Error::Api {
                code,
                info: truncate_chars(info, 300),
            });
        }
    }

    fn request(
        &self,
        verb: Verb,
        params: &[(&str, String)],
        bearer: Option<&Secret>,
    ) -> reqwest::RequestBuilder {
        let mut request = match verb {
            Verb::Read => self
                .http
                .request(Method::GET, self.api_url.clone())
                .query(params),
            Verb::Write => self
                .http
                .request(Method::POST, self.api_url.clone())
                .form(params),
        };
        request = request.header(reqwest::header::USER_AGENT, self.user_agent.clone());
        let cookies = lock(&self.cookies)
            .iter()
            .map(|(name, value)| format!("{name}={}", value.expose()))
            .collect::<Vec<_>>()
            .join("; ");
        if !cookies.is_empty()
            && let Ok(mut value) = HeaderValue::from_str(&cookies)
        {
            value.set_sensitive(true);
            request = request.header(COOKIE, value);
        }
        if let Some(token) = bearer
            && let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {}", token.expose()))
        {
            value.set_sensitive(true);
            request = request.header(AUTHORIZATION, value);
        }
        request
    }

    fn keep_cookies(&self, headers: &HeaderMap) {
        let mut jar = lock(&self.cookies);
        for value in headers.get_all(SET_COOKIE) {
            let Ok(text) = value.to_str() else { continue };
            let pair = text.split(';').next().unwrap_or_default();
            let Some((name, value)) = pair.split_once('=') else {
                continue;
            };
            let (name, value) = (name.trim(), value.trim());
            let expired = value.is_empty() || value == "deleted";
            if expired {
                jar.remove(name);
            } else {
                jar.insert(name.to_owned(), Secret::new(value));
            }
        }
    }

    fn decode_error(&self, what: &str, body: &Value) -> Error {
        Error::Decode {
            url: display_url(&self.api_url),
            status: 200,
            message: what.to_owned(),
            snippet: truncate_chars(&body.to_string(), 200),
        }
    }
}

fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?;
    text.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// A poisoned lock only means another thread panicked while holding plain data: use it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_is_checked() {
        let ua = "Bot/1.0 (https://example.org; bot@example.org)";
        assert!(
            ActionApi::new(ActionApiConfig::new("http://127.0.0.1:1/api.php", ua), None).is_ok()
        );
        let err = ActionApi::new(ActionApiConfig::new("ftp://x/api.php", ua), None).unwrap_err();
        assert!(err.to_string().contains("api_url"), "{err}");
        let err = ActionApi::new(ActionApiConfig::new("http://x/api.php", "curl/8"), None);
        assert!(matches!(err, Err(Error::Config(_))));
    }

    #[test]
    fn cookies_are_kept_and_expired() {
        let ua = "Bot/1.0 (https://example.org; bot@example.org)";
        let api =
            ActionApi::new(ActionApiConfig::new("http://127.0.0.1:1/api.php", ua), None).unwrap();
        let mut headers = HeaderMap::new();
        headers.append(
            SET_COOKIE,
            HeaderValue::from_static("wiki_session=abc; path=/; HttpOnly"),
        );
        headers.append(SET_COOKIE, HeaderValue::from_static("other=1"));
        api.keep_cookies(&headers);
        assert_eq!(lock(&api.cookies).len(), 2);
        let mut gone = HeaderMap::new();
        gone.append(
            SET_COOKIE,
            HeaderValue::from_static("other=deleted; expires=Thu, 01 Jan 1970"),
        );
        api.keep_cookies(&gone);
        assert_eq!(
            lock(&api.cookies).keys().collect::<Vec<_>>(),
            ["wiki_session"]
        );
        assert!(!format!("{api:?}").contains("abc"));
    }
}
