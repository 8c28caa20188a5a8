//! A client for a wiki's MediaWiki Action API (`…/api.php`): read a page's current revision,
//! read what the wiki calls its namespaces and interwiki prefixes, log in with a bot
//! password, and save an edit without overwriting anyone else's.
//!
//! Requests go through the same [`Transport`] as the service client's: the operator's
//! User-Agent with ours appended, bodies read within limits, every credential of a request
//! (bot password, CSRF and login tokens, session cookies, bearer token) cut out of any text
//! an answer produces, retries with jittered back-off for what may be retried, and a bearer
//! token from an [`AuthProvider`] when one is given (replayed once with a renewed token after
//! a 401). Credentials never travel over plain `http://` to a host that is not this machine
//! unless the caller allows it. Edits send `maxlag` (5 s by default) and, when the wiki
//! answers that its replicas lag, wait as long as its `Retry-After` says before trying again.
//! A conflicting edit is reported as [`Error::EditConflict`]: the edit names its base revision
//! (`baserevid`, and deliberately no `basetimestamp`, with which MediaWiki lets a user
//! overwrite their own newer edit).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use reqwest::Method;
use reqwest::header::{COOKIE, HeaderMap, HeaderValue, LOCATION, SET_COOKIE};
use serde_json::Value;

use crate::auth::AuthProvider;
use crate::config::{DEFAULT_MAX_BODY_SIZE, check_credentials_transport};
use crate::encode::Query;
use crate::error::{Error, Result, display_url};
use crate::http_error::{parse_retry_after, truncate_chars};
use crate::redact::Redactor;
use crate::retry::RetryPolicy;
use crate::secret::Secret;
use crate::transport::{Body, Outgoing, Redirects, Reply, Transport, TransportConfig, Verdict};

/// How much of a wiki's error text is kept in a message.
const INFO_LIMIT: usize = 300;

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
    /// Largest answer accepted, in bytes after decompression (a page is at most 2 MiB of
    /// wikitext on Wikimedia's wikis).
    pub max_body_size: usize,
    /// Send credentials (bearer token, bot password, session) over plain `http://` to a
    /// host that is not this machine. Off by default.
    pub allow_insecure_http: bool,
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
            max_body_size: DEFAULT_MAX_BODY_SIZE,
            allow_insecure_http: false,
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

/// What a wiki says about its titles (`meta=siteinfo`): enough to tell whether a link
/// target would name an article of this wiki or something else.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SiteInfo {
    /// The content language (`en`, `fr`, …).
    pub lang: String,
    /// Whether the first letter of a title is always upper case (`case: first-letter`).
    pub first_letter_case: bool,
    /// The characters a title may hold, as a regular-expression character class body.
    pub legal_title_chars: String,
    /// Every name of every namespace other than the main one: local names, canonical
    /// names and aliases (`Category`, `Catégorie`, `Image`, `WP`, …).
    pub namespace_names: Vec<String>,
    /// The interwiki prefixes (language links among them).
    pub interwiki_prefixes: Vec<String>,
    /// Every alias of every double-underscore behaviour switch (`__NOTOC__`, …).
    pub behaviour_switches: Vec<String>,
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

/// A successful answer, with the credentials its request carried (to redact any text
/// quoting it).
struct Answer {
    body: Value,
    redactor: Redactor,
    url: String,
}

impl Answer {
    /// A 2xx answer that is not what the API documents.
    fn decode_error(&self, what: &str) -> Error {
        decode_error(&self.url, what, &self.redactor.text(&self.body.to_string()))
    }
}

pub struct ActionApi {
    transport: Transport,
    api_url: reqwest::Url,
    maxlag: Option<u32>,
    allow_insecure_http: bool,
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
        let api_url = crate::config::normalise_base_url("api_url", &config.api_url)?;
        if auth.is_some() {
            check_credentials_transport("api_url", &api_url, config.allow_insecure_http)?;
        }
        let api_url = reqwest::Url::parse(&api_url)
            .map_err(|e| Error::Config(format!("api_url is not a valid URL: {e}")))?;
        let transport = Transport::new(&TransportConfig {
            user_agent: crate::user_agent::compose(&config.user_agent)?,
            timeout: Some(config.timeout),
            connect_timeout: config.connect_timeout,
            read_timeout: None,
            retry: config.retry,
            max_body_size: config.max_body_size,
            decompress: true,
            redirects: Redirects::Never,
        })?;
        Ok(Self {
            transport,
            api_url,
            maxlag: config.maxlag,
            allow_insecure_http: config.allow_insecure_http,
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
                check_title(title)?;
                params.push(("titles", title.to_owned()));
                params.push(("rvlimit", "1".to_owned()));
            }
            (None, None) => return Err(Error::invalid("title", "give a title or a revision id")),
        }
        let answer = self.call(Verb::Read, params).await?;
        let asked = match (revid, title) {
            (Some(revid), _) => Asked::Revision(revid),
            (None, title) => Asked::Title(title.unwrap_or_default()),
        };
        page_revision(&answer, &asked)
    }

    /// What the wiki calls its namespaces, interwiki prefixes and behaviour switches.
    pub async fn siteinfo(&self) -> Result<SiteInfo> {
        let answer = self
            .call(
                Verb::Read,
                vec![
                    ("action", "query".to_owned()),
                    ("meta", "siteinfo".to_owned()),
                    (
                        "siprop",
                        "general|namespaces|namespacealiases|interwikimap|magicwords".to_owned(),
                    ),
                ],
            )
            .await?;
        site_info(&answer)
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
        Ok(self.call(Verb::Read, params).await?.body)
    }

    /// Log in with a bot password (`User@appid` and its generated password). The session
    /// cookie is kept for later calls, which then assert that they run logged in.
    pub async fn login(&self, username: &str, password: &Secret) -> Result<()> {
        check_credentials_transport("api_url", self.api_url.as_str(), self.allow_insecure_http)?;
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
            .body
            .pointer("/query/tokens/logintoken")
            .and_then(Value::as_str)
            .ok_or_else(|| tokens.decode_error("no login token"))?
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
        let result = reply.body.pointer("/login/result").and_then(Value::as_str);
        if result != Some("Success") {
            let reason = reply
                .body
                .pointer("/login/reason")
                .and_then(Value::as_str)
                .unwrap_or("no reason given");
            return Err(Error::Api {
                code: "login-failed".to_owned(),
                info: truncate_chars(&reply.redactor.text(reason), INFO_LIMIT),
            });
        }
        *lock(&self.csrf) = None;
        *lock(&self.logged_in) = true;
        Ok(())
    }

    /// Save `edit`. Refuses to create a page, and reports a newer revision than
    /// `edit.baserevid` as [`Error::EditConflict`].
    pub async fn edit(&self, edit: &EditRequest) -> Result<EditOutcome> {
        check_title(&edit.title)?;
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
                Ok(answer) => return edit_outcome(&edit.title, &answer),
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

    async fn csrf_token(&self) -> Result<Secret> {
        if let Some(token) = lock(&self.csrf).clone() {
            return Ok(token);
        }
        let answer = self
            .call(
                Verb::Read,
                vec![
                    ("action", "query".to_owned()),
                    ("meta", "tokens".to_owned()),
                ],
            )
            .await?;
        let token = answer
            .body
            .pointer("/query/tokens/csrftoken")
            .and_then(Value::as_str)
            .ok_or_else(|| answer.decode_error("no CSRF token"))?;
        let token = Secret::new(token);
        *lock(&self.csrf) = Some(token.clone());
        Ok(token)
    }

    /// One API call through the transport; the decoded body of a success, or the wiki's
    /// error as [`Error::Api`].
    async fn call(&self, verb: Verb, mut params: Vec<(&str, String)>) -> Result<Answer> {
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
        let mut query = Query::new();
        for (key, value) in &params {
            query.push(key, value.as_str());
        }
        let encoded = query.encode();
        let prepare = || self.outgoing(verb, &encoded);
        let judge = |reply: Reply| self.judge(verb, reply);
        self.transport
            .exchange(self.auth.as_deref(), None, prepare, judge)
            .await
    }

    /// The request of one attempt, with the session's cookies as they are now.
    fn outgoing(&self, verb: Verb, encoded: &str) -> Result<Outgoing> {
        let mut outgoing = match verb {
            Verb::Read => {
                let mut url = self.api_url.clone();
                url.set_query(Some(encoded));
                Outgoing::new(Method::GET, url, Body::None)
            }
            Verb::Write => Outgoing::new(
                Method::POST,
                self.api_url.clone(),
                Body::Form(encoded.as_bytes().to_vec()),
            ),
        };
        let jar = lock(&self.cookies);
        let cookies = jar
            .iter()
            .map(|(name, value)| format!("{name}={}", value.expose()))
            .collect::<Vec<_>>()
            .join("; ");
        if !cookies.is_empty()
            && let Ok(mut value) = HeaderValue::from_str(&cookies)
        {
            value.set_sensitive(true);
            outgoing.headers.insert(COOKIE, value);
        }
        // Every cookie is sent, but only those that are credentials are cut out of the texts
        // an answer produces: a user id or name, `forceHTTPS=1` are public, and cutting such
        // short values out of every message would garble it.
        outgoing.secrets = (jar.iter())
            .filter(|(name, value)| is_credential_cookie(name, value.expose()))
            .map(|(_, value)| value.clone())
            .collect();
        if let Some(token) = lock(&self.csrf).clone() {
            outgoing.secrets.push(token);
        }
        Ok(outgoing)
    }

    /// What one answer of the wiki means.
    fn judge(&self, verb: Verb, reply: Reply) -> Verdict<Answer> {
        self.keep_cookies(&reply.headers);
        let retry_after = parse_retry_after(&reply.headers, SystemTime::now());
        let status = reply.status;
        if status == 401 && self.auth.is_some() {
            return Verdict::TokenRejected(http_error(&reply));
        }
        if (300..400).contains(&status) {
            // Redirects are not followed (they would carry the session or the token along).
            let location = reply
                .headers
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(|l| match self.api_url.join(l) {
                    Ok(url) => display_url(&url),
                    Err(_) => "an unreadable address".to_owned(),
                })
                .unwrap_or_else(|| "no address".to_owned());
            return Verdict::Fail(Error::Api {
                code: format!("http-{status}"),
                info: format!(
                    "the wiki answered with a redirect (HTTP {status}) to {}; redirects are not \
                     followed: use the address they lead to as api_url",
                    reply.redactor.text(&location)
                ),
            });
        }
        if status >= 400 {
            let error = http_error(&reply);
            let retryable = self.transport.retry().statuses.contains(&status)
                && (verb == Verb::Read || status == 429);
            if retryable {
                return Verdict::Retry {
                    error,
                    after: retry_after,
                };
            }
            return Verdict::Fail(error);
        }
        let body: Value = match serde_json::from_slice(&reply.body) {
            Ok(body) => body,
            Err(e) => {
                return Verdict::Fail(decode_error(
                    &reply.url,
                    &format!("not JSON ({e})"),
                    &reply.redacted_text(),
                ));
            }
        };
        let Some(error) = body.get("error") else {
            return Verdict::Done(Answer {
                body,
                redactor: reply.redactor,
                url: reply.url,
            });
        };
        let code = error
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_owned();
        let info = error
            .get("info")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let refusal = Error::Api {
            info: truncate_chars(&reply.redactor.text(info), INFO_LIMIT),
            code,
        };
        if matches!(&refusal, Error::Api { code, .. } if code == "maxlag") {
            // The wiki says how long to stay away; without a header, its reported lag.
            let lag = error.get("lag").and_then(Value::as_f64).unwrap_or(5.0);
            let wait = retry_after.unwrap_or(Duration::from_secs_f64(lag.clamp(1.0, 60.0)));
            log::info!(
                target: crate::transport::LOG_TARGET,
                "the wiki's replicas lag; trying again in {:.1} s",
                wait.as_secs_f64()
            );
            return Verdict::Retry {
                error: refusal,
                after: Some(wait),
            };
        }
        Verdict::Fail(refusal)
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
}

/// Whether a cookie the wiki set is a credential: a session or token by its name (core's
/// `<wiki>_session` and `<wiki>Token`, CentralAuth's `centralauth_Session` and
/// `centralauth_Token`, any `…secret…`/`…pass…`), or a value long and varied enough to be one
/// (16 bytes or more, not all digits). A user id, a user name, a flag are not.
fn is_credential_cookie(name: &str, value: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let named = ["session", "token", "secret", "pass", "auth_key"]
        .iter()
        .any(|word| name.contains(word));
    named || (value.len() >= 16 && !value.bytes().all(|b| b.is_ascii_digit()))
}

/// A title the wiki would refuse or misread (`|` separates titles in `titles=`, U+001F
/// announces another separator): MediaWiki's title rules, checked before anything is sent.
fn check_title(title: &str) -> Result<()> {
    wikisuggest_text::title::check_title(title).map_err(|e| Error::invalid("title", e.to_string()))
}

/// An error status as the wiki's refusal, quoting the start of its (redacted) body.
fn http_error(reply: &Reply) -> Error {
    Error::Api {
        code: format!("http-{}", reply.status),
        info: truncate_chars(&String::from_utf8_lossy(&reply.body), INFO_LIMIT),
    }
}

fn decode_error(url: &str, what: &str, text: &str) -> Error {
    Error::Decode {
        url: url.to_owned(),
        status: 200,
        message: what.to_owned(),
        snippet: truncate_chars(text, 200),
    }
}

/// What a `prop=revisions` read asked for.
#[derive(Debug, Clone, Copy)]
enum Asked<'a> {
    Title(&'a str),
    Revision(u64),
}

/// The title the wiki answers about when asked for `asked`: through its `normalized`
/// (`Foo_bar` → `Foo bar`) and then its `converted` (a language variant) entries.
fn answered_title(query: &Value, asked: &str) -> String {
    let mut title = asked.to_owned();
    for list in ["normalized", "converted"] {
        let entries = query.get(list).and_then(Value::as_array);
        let mapped = entries.into_iter().flatten().find_map(|entry| {
            (entry.get("from").and_then(Value::as_str) == Some(title.as_str()))
                .then(|| entry.get("to").and_then(Value::as_str))
                .flatten()
        });
        if let Some(to) = mapped {
            title = to.to_owned();
        }
    }
    title
}

/// The revision in an answer to `prop=revisions`, or `None` for a page or revision that
/// does not exist. Anything else that is not formatversion 2's documented shape is an error,
/// never a silent "no such page", and so is an answer about another page or revision than
/// the one asked for.
fn page_revision(answer: &Answer, asked: &Asked<'_>) -> Result<Option<PageRevision>> {
    let Some(query) = answer.body.get("query") else {
        return Err(answer.decode_error("no query result"));
    };
    if query.get("badrevids").is_some() && query.get("pages").is_none() {
        return Ok(None);
    }
    if let Some(interwiki) = query.pointer("/interwiki/0/title").and_then(Value::as_str) {
        return Err(Error::invalid(
            "title",
            format!("{interwiki:?} names a page of another wiki (an interwiki link)"),
        ));
    }
    let page = match query.get("pages") {
        Some(Value::Array(pages)) => match pages.first() {
            Some(page) => page,
            None => return Ok(None),
        },
        Some(Value::Object(_)) => {
            return Err(answer.decode_error(
                "pages keyed by id: the wiki answered in formatversion 1 (MediaWiki before \
                 1.25, or a proxy that rewrites the request); this client needs formatversion 2",
            ));
        }
        _ => return Err(answer.decode_error("no pages in the query result")),
    };
    if page.get("invalid").is_some() {
        let reason = page
            .get("invalidreason")
            .and_then(Value::as_str)
            .unwrap_or("not a valid title");
        return Err(Error::invalid(
            "title",
            truncate_chars(&answer.redactor.text(reason), INFO_LIMIT),
        ));
    }
    if page.get("missing").is_some() || page.get("special").is_some() {
        return Ok(None);
    }
    let Some(revision) = page.pointer("/revisions/0") else {
        return Err(answer.decode_error("a page without its revision"));
    };
    if revision.get("texthidden").is_some() || revision.pointer("/slots/main/texthidden").is_some()
    {
        return Err(Error::Api {
            code: "texthidden".to_owned(),
            info: "the revision's text is hidden (deleted or suppressed)".to_owned(),
        });
    }
    match (
        page.get("title").and_then(Value::as_str),
        page.get("pageid").and_then(Value::as_u64),
        revision.get("revid").and_then(Value::as_u64),
        revision
            .pointer("/slots/main/content")
            .and_then(Value::as_str),
    ) {
        (Some(title), Some(pageid), Some(revid), Some(text)) => {
            let other = match *asked {
                Asked::Revision(wanted) => (revid != wanted).then(|| {
                    format!("revision {revid} of {title:?} (asked for revision {wanted})")
                }),
                Asked::Title(wanted) => {
                    let expected = answered_title(query, wanted);
                    (title != expected).then(|| format!("{title:?} (asked for {expected:?})"))
                }
            };
            if let Some(other) = other {
                return Err(answer.decode_error(&format!(
                    "the wiki answered about another page than the one asked for: {other}"
                )));
            }
            Ok(Some(PageRevision {
                title: title.to_owned(),
                pageid,
                revid,
                wikitext: text.to_owned(),
            }))
        }
        _ => Err(answer.decode_error("a revision without title, ids or content")),
    }
}

fn site_info(answer: &Answer) -> Result<SiteInfo> {
    let query = answer
        .body
        .get("query")
        .ok_or_else(|| answer.decode_error("no siteinfo"))?;
    let general = query
        .get("general")
        .ok_or_else(|| answer.decode_error("no general siteinfo"))?;
    let text = |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut namespace_names = Vec::new();
    let namespaces: Vec<&Value> = match query.get("namespaces") {
        Some(Value::Object(map)) => map.values().collect(),
        Some(Value::Array(items)) => items.iter().collect(),
        _ => return Err(answer.decode_error("no namespaces in the siteinfo")),
    };
    for namespace in namespaces {
        if namespace.get("id").and_then(Value::as_i64) == Some(0) {
            continue;
        }
        namespace_names.extend(text(namespace, "name"));
        namespace_names.extend(text(namespace, "canonical"));
    }
    for alias in query
        .get("namespacealiases")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        namespace_names.extend(text(alias, "alias"));
    }
    namespace_names.retain(|name| !name.is_empty());
    let interwiki_prefixes = query
        .get("interwikimap")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| text(entry, "prefix"))
        .collect();
    let behaviour_switches = query
        .get("magicwords")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|word| word.get("aliases").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .filter(|alias| alias.starts_with("__") && alias.ends_with("__") && alias.len() > 4)
        .map(str::to_owned)
        .collect();
    Ok(SiteInfo {
        lang: text(general, "lang").unwrap_or_default(),
        first_letter_case: text(general, "case").as_deref() != Some("case-sensitive"),
        legal_title_chars: text(general, "legaltitlechars").unwrap_or_default(),
        namespace_names,
        interwiki_prefixes,
        behaviour_switches,
    })
}

fn edit_outcome(title: &str, answer: &Answer) -> Result<EditOutcome> {
    let edit = answer
        .body
        .get("edit")
        .ok_or_else(|| answer.decode_error("no edit result"))?;
    if edit.get("result").and_then(Value::as_str) != Some("Success") {
        // Extensions (captchas, abuse filters) answer with a non-Success result.
        return Err(Error::Api {
            code: "edit-refused".to_owned(),
            info: truncate_chars(&answer.redactor.text(&edit.to_string()), INFO_LIMIT),
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

/// A poisoned lock only means another thread panicked while holding plain data: use it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    const UA: &str = "Bot/1.0 (https://example.org; bot@example.org)";

    fn answer(body: Value) -> Answer {
        Answer {
            body,
            redactor: Redactor::default(),
            url: "http://127.0.0.1/api.php".to_owned(),
        }
    }

    #[test]
    fn configuration_is_checked() {
        assert!(
            ActionApi::new(ActionApiConfig::new("http://127.0.0.1:1/api.php", UA), None).is_ok()
        );
        let err = ActionApi::new(ActionApiConfig::new("ftp://x/api.php", UA), None).unwrap_err();
        assert!(err.to_string().contains("api_url"), "{err}");
        let err = ActionApi::new(ActionApiConfig::new("http://x/api.php", "curl/8"), None);
        assert!(matches!(err, Err(Error::Config(_))));
    }

    #[test]
    fn credentials_never_go_over_plain_http_to_another_host() {
        let token: Arc<dyn AuthProvider> =
            Arc::new(crate::auth::StaticToken::new(Secret::new("t")).unwrap());
        let remote = ActionApiConfig::new("http://wiki.example.org/w/api.php", UA);
        let err = ActionApi::new(remote.clone(), Some(token.clone())).unwrap_err();
        assert!(err.to_string().contains("allow_insecure_http"), "{err}");
        let allowed = ActionApiConfig {
            allow_insecure_http: true,
            ..remote.clone()
        };
        assert!(ActionApi::new(allowed, Some(token.clone())).is_ok());
        let local = ActionApiConfig::new("http://127.0.0.1:9/api.php", UA);
        assert!(ActionApi::new(local, Some(token)).is_ok());
        // A bot password is refused before any request is made.
        let api = ActionApi::new(remote, None).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let err = runtime
            .block_on(api.login("Bot@app", &Secret::new("pw")))
            .unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{err}");
    }

    #[test]
    fn cookies_are_kept_and_expired() {
        let api =
            ActionApi::new(ActionApiConfig::new("http://127.0.0.1:1/api.php", UA), None).unwrap();
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
        let outgoing = api.outgoing(Verb::Write, "a=1").unwrap();
        assert!(outgoing.headers.get(COOKIE).unwrap().is_sensitive());
        assert_eq!(outgoing.secrets, vec![Secret::new("abc")]);
    }

    #[test]
    fn only_credential_cookies_are_redacted() {
        let api =
            ActionApi::new(ActionApiConfig::new("http://127.0.0.1:1/api.php", UA), None).unwrap();
        let mut headers = HeaderMap::new();
        for cookie in [
            "enwiki_session=k3jd8s7fh2k4j5h6g7f8d9s0a1s2d3f4",
            "enwikiUserID=1213",
            "enwikiUserName=Bot",
            "forceHTTPS=1",
            "centralauth_Token=0123456789abcdef0123456789abcdef",
            "loginnotify_prevlogins=2026-a1b2c3-9f8e7d6c5b4a39281706",
        ] {
            headers.append(SET_COOKIE, HeaderValue::from_str(cookie).unwrap());
        }
        api.keep_cookies(&headers);
        let outgoing = api.outgoing(Verb::Read, "a=1").unwrap();
        let cookie = outgoing.headers.get(COOKIE).unwrap().to_str().unwrap();
        assert!(cookie.contains("enwikiUserID=1213") && cookie.contains("forceHTTPS=1"));
        let redactor = Redactor::new(&outgoing.secrets);
        let text = "error 1213 on db1101 for Bot; session k3jd8s7fh2k4j5h6g7f8d9s0a1s2d3f4 \
                    token 0123456789abcdef0123456789abcdef login 2026-a1b2c3-9f8e7d6c5b4a39281706";
        assert_eq!(
            redactor.text(text),
            "error 1213 on db1101 for Bot; session *** token *** login ***"
        );
    }

    #[test]
    fn page_answers_are_read_strictly() {
        let a = Asked::Title("A");
        let found = serde_json::json!({"query": {"pages": [{"pageid": 5, "title": "A",
            "revisions": [{"revid": 7, "slots": {"main": {"content": "x"}}}]}]}});
        assert_eq!(page_revision(&answer(found), &a).unwrap().unwrap().revid, 7);
        let missing = serde_json::json!({"query": {"pages": [{"title": "B", "missing": true}]}});
        assert_eq!(page_revision(&answer(missing), &a).unwrap(), None);
        let bad_revid = serde_json::json!({"query": {"badrevids": {"9": {"revid": 9}}}});
        assert_eq!(
            page_revision(&answer(bad_revid), &Asked::Revision(9)).unwrap(),
            None
        );
        let version_1 = serde_json::json!({"query": {"pages": {"5": {"pageid": 5, "title": "A",
            "revisions": [{"revid": 7, "*": "x"}]}}}});
        let err = page_revision(&answer(version_1), &a).unwrap_err();
        assert!(err.to_string().contains("formatversion 1"), "{err}");
        let invalid = serde_json::json!({"query": {"pages": [{"title": "a|b", "invalid": true,
            "invalidreason": "bad"}]}});
        assert!(matches!(
            page_revision(&answer(invalid), &Asked::Title("a|b")),
            Err(Error::InvalidParameter { .. })
        ));
        let interwiki =
            serde_json::json!({"query": {"interwiki": [{"title": "fr:Chat", "iw": "fr"}]}});
        assert!(matches!(
            page_revision(&answer(interwiki), &Asked::Title("fr:Chat")),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            page_revision(&answer(serde_json::json!({"batchcomplete": true})), &a),
            Err(Error::Decode { .. })
        ));
    }

    #[test]
    fn an_answer_about_another_page_is_refused() {
        let page = |title: &str, revid: u64, extra: Value| {
            let mut query = serde_json::json!({"pages": [{"pageid": 5, "title": title,
                "revisions": [{"revid": revid, "slots": {"main": {"content": "x"}}}]}]});
            if let (Some(q), Value::Object(more)) = (query.as_object_mut(), extra) {
                q.extend(more);
            }
            answer(serde_json::json!({ "query": query }))
        };
        let none = Value::Null;
        let err = page_revision(&page("Evil", 7, none.clone()), &Asked::Title("Aardvark"));
        assert!(
            matches!(&err, Err(Error::Decode { message, .. })
            if message.contains("another page") && message.contains("Evil")),
            "{err:?}"
        );
        let err = page_revision(&page("Aardvark", 8, none.clone()), &Asked::Revision(7));
        assert!(matches!(err, Err(Error::Decode { .. })), "{err:?}");
        // The wiki's own spelling of the title asked for is the same page.
        let normalized = serde_json::json!({
            "normalized": [{"from": "aardvark_x", "to": "Aardvark x"}],
            "converted": [{"from": "Aardvark x", "to": "Aardvark X"}]});
        let got = page_revision(
            &page("Aardvark X", 7, normalized.clone()),
            &Asked::Title("aardvark_x"),
        );
        assert_eq!(got.unwrap().unwrap().title, "Aardvark X");
        let got = page_revision(&page("Other", 7, normalized), &Asked::Title("aardvark_x"));
        assert!(got.is_err());
        let got = page_revision(&page("Any title", 7, none), &Asked::Revision(7));
        assert_eq!(got.unwrap().unwrap().revid, 7);
    }

    #[test]
    fn titles_the_api_would_misread_are_refused() {
        for bad in ["A|B", "\u{1f}A", "", "  ", "A\nB"] {
            assert!(check_title(bad).is_err(), "{bad:?}");
        }
        assert!(check_title("Café: a story").is_ok());
    }

    #[test]
    fn siteinfo_collects_every_name() {
        let body = serde_json::json!({"query": {
            "general": {"lang": "fr", "case": "first-letter", "legaltitlechars": "a-z"},
            "namespaces": {"0": {"id": 0, "name": ""},
                           "14": {"id": 14, "name": "Catégorie", "canonical": "Category"}},
            "namespacealiases": [{"id": 6, "alias": "Image"}],
            "interwikimap": [{"prefix": "en"}, {"prefix": "wikt"}],
            "magicwords": [{"name": "notoc", "aliases": ["__AUCUNSOMMAIRE__", "__NOTOC__"]},
                           {"name": "pagename", "aliases": ["PAGENAME"]}]}});
        let info = site_info(&answer(body)).unwrap();
        assert_eq!(info.lang, "fr");
        assert!(info.first_letter_case);
        assert_eq!(info.namespace_names, ["Catégorie", "Category", "Image"]);
        assert_eq!(info.interwiki_prefixes, ["en", "wikt"]);
        assert_eq!(info.behaviour_switches, ["__AUCUNSOMMAIRE__", "__NOTOC__"]);
    }
}
