//! Turning an error response (any of the body shapes the services and the gateway send)
//! into one structured value.
//!
//! Three JSON shapes reach a client: OAuth 2.0 errors `{error, error_description, hint,
//! message}`, MediaWiki REST errors `{errorKey, messageTranslations, httpCode, httpReason}`
//! and gateway replies `{httpCode, httpReason}`; the link service adds `{message,
//! valid_project_domain_pairs}` and the translation service `{detail: [...]}`. Rate-limit and
//! CDN errors arrive as plain text or HTML. We classify by status first and use the body only
//! for detail, because the same status can carry any of these bodies.

use std::fmt;
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use serde_json::Value;

/// How many characters of a non-JSON body are kept (for messages and `body`).
const TEXT_BODY_LIMIT: usize = 2000;
/// How many characters of a body are quoted in an error message.
const MESSAGE_SNIPPET: usize = 200;

/// What kind of failure a response is, decided from its status and body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpErrorKind {
    /// 401: missing, invalid or expired credentials.
    Unauthorized,
    /// `rest-read-denied`: the project does not know the account yet.
    ReadDenied,
    /// 400/404 naming `valid_project_domain_pairs`: the wiki has no link model.
    UnsupportedDomain,
    NotFound,
    /// 415, e.g. `rest-unsupported-content-type` on the token endpoint.
    UnsupportedMediaType,
    /// 422 with a validation `detail` list.
    UnprocessableEntity,
    /// 429.
    RateLimited,
    /// An OAuth 2.0 error body from the token endpoint.
    OAuth,
    /// 5xx.
    ServerError,
    /// Any other 4xx.
    Other,
}

/// Where a response came from; OAuth bodies are only meaningful from the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Service,
    Token,
}

/// An OAuth 2.0 error body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthErrorBody {
    /// The `error` code, e.g. `invalid_grant`.
    pub error: String,
    /// `error_description`, or the deprecated `message` copy of it.
    pub description: Option<String>,
    pub hint: Option<String>,
}

/// `error: description (hint)`, the way OAuth errors are shown everywhere.
impl fmt::Display for OAuthErrorBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.error)?;
        if let Some(description) = &self.description {
            write!(f, ": {description}")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, " ({hint})")?;
        }
        Ok(())
    }
}

/// An HTTP response with a status of 400 or more.
#[derive(Debug, Clone)]
pub struct HttpError {
    pub kind: HttpErrorKind,
    pub status: u16,
    /// The reason phrase: `httpReason` from the body when present, else the standard one.
    pub reason: String,
    pub method: String,
    /// The URL without its query string.
    pub url: String,
    /// The decoded JSON body, or the (truncated) text body as a JSON string.
    pub body: Option<Value>,
    /// `Retry-After`, when the server sent one that parses.
    pub retry_after: Option<Duration>,
    pub request_id: Option<String>,
    pub www_authenticate: Option<String>,
    /// The human-readable explanation extracted from the body.
    pub detail: Option<String>,
    pub error_key: Option<String>,
    pub oauth: Option<OAuthErrorBody>,
}

impl HttpError {
    /// Build from a response's parts. `body` is the raw body (possibly empty).
    pub fn from_response(
        endpoint: Endpoint,
        method: &str,
        url: String,
        status: u16,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Self {
        let json: Option<Value> = serde_json::from_slice(body).ok();
        let text_body = || {
            let text = String::from_utf8_lossy(body);
            let text = truncate_chars(text.trim(), TEXT_BODY_LIMIT);
            (!text.is_empty()).then_some(Value::String(text))
        };
        let obj = json.as_ref().and_then(Value::as_object);
        let get_str = |key: &str| {
            obj.and_then(|o| o.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };

        let error_key = get_str("errorKey");
        let http_reason = get_str("httpReason");
        let oauth = match (endpoint, get_str("error")) {
            (_, Some(error))
                if endpoint == Endpoint::Token
                    || obj.is_some_and(|o| o.contains_key("error_description")) =>
            {
                Some(OAuthErrorBody {
                    error,
                    description: get_str("error_description").or_else(|| get_str("message")),
                    hint: get_str("hint"),
                })
            }
            _ => None,
        };
        let has_pairs = obj.is_some_and(|o| o.contains_key("valid_project_domain_pairs"));

        let kind = if error_key.as_deref() == Some("rest-read-denied") {
            HttpErrorKind::ReadDenied
        } else if oauth.is_some() && status != 415 && status < 500 && endpoint == Endpoint::Token {
            HttpErrorKind::OAuth
        } else {
            match status {
                401 => HttpErrorKind::Unauthorized,
                400 | 404 if has_pairs => HttpErrorKind::UnsupportedDomain,
                404 => HttpErrorKind::NotFound,
                415 => HttpErrorKind::UnsupportedMediaType,
                422 => HttpErrorKind::UnprocessableEntity,
                429 => HttpErrorKind::RateLimited,
                500..=599 => HttpErrorKind::ServerError,
                _ => HttpErrorKind::Other,
            }
        };

        let detail = obj
            .and_then(|o| describe_json(o, oauth.as_ref()))
            .or_else(|| {
                if json.is_none() {
                    let text = String::from_utf8_lossy(body);
                    let text = collapse_whitespace(&strip_tags(&text));
                    (!text.is_empty()).then(|| truncate_chars(&text, MESSAGE_SNIPPET))
                } else {
                    None
                }
            });

        let reason = http_reason.unwrap_or_else(|| {
            reqwest::StatusCode::from_u16(status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("Unknown Status")
                .to_owned()
        });

        Self {
            kind,
            status,
            reason,
            method: method.to_owned(),
            url,
            body: json.or_else(text_body),
            retry_after: parse_retry_after(headers, SystemTime::now()),
            request_id: header_str(headers, "x-request-id")
                .or_else(|| header_str(headers, "request-id")),
            www_authenticate: header_str(headers, "www-authenticate"),
            detail,
            error_key,
            oauth,
        }
    }

    /// True when a 401 says the bearer token itself is bad (expired, revoked, unverifiable)
    /// rather than missing, so renewing it and replaying the request can help.
    pub fn token_rejected(&self) -> bool {
        if self.status != 401 && self.status != 403 {
            return false;
        }
        let reason_says = self.reason.starts_with("Jwt") && self.reason != "Jwt is missing";
        let header_says = self
            .www_authenticate
            .as_deref()
            .is_some_and(|h| h.contains("invalid_token"));
        let oauth_says = self
            .oauth
            .as_ref()
            .is_some_and(|o| o.error == "access_denied" || o.error == "invalid_token");
        let mediawiki_says = self
            .error_key
            .as_deref()
            .is_some_and(|k| k.starts_with("mwoauth-invalid-authorization"));
        reason_says || header_says || oauth_says || mediawiki_says
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "HTTP {} {} for {} {}",
            self.status, self.reason, self.method, self.url
        )?;
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        if let Some(after) = self.retry_after {
            write!(f, " (retry after {:.0} s)", after.as_secs_f64())?;
        }
        if self.kind == HttpErrorKind::ReadDenied {
            f.write_str(
                " — the project does not recognise this account yet; log in to that project once \
                 with the same account, then retry",
            )?;
        }
        if let Some(id) = &self.request_id {
            write!(f, " [request id {id}]")?;
        }
        Ok(())
    }
}

/// The explanation a JSON error body carries, whatever its shape.
fn describe_json(
    obj: &serde_json::Map<String, Value>,
    oauth: Option<&OAuthErrorBody>,
) -> Option<String> {
    if let Some(o) = oauth {
        return Some(o.to_string());
    }
    if let Some(detail) = obj.get("detail") {
        return Some(match detail {
            Value::String(s) => s.clone(),
            Value::Array(items) => items
                .iter()
                .map(describe_validation_item)
                .collect::<Vec<_>>()
                .join("; "),
            other => truncate_chars(&other.to_string(), MESSAGE_SNIPPET),
        });
    }
    if let Some(translations) = obj.get("messageTranslations").and_then(Value::as_object) {
        let text = translations
            .get("en")
            .or_else(|| translations.values().next())
            .and_then(Value::as_str);
        if let Some(text) = text {
            return Some(text.to_owned());
        }
    }
    for key in ["message", "description", "error"] {
        if let Some(text) = obj.get(key).and_then(Value::as_str) {
            return Some(text.to_owned());
        }
    }
    obj.get("errorKey")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// One entry of a FastAPI/pydantic validation `detail` list, as `loc: msg`.
fn describe_validation_item(item: &Value) -> String {
    let msg = item.get("msg").and_then(Value::as_str).unwrap_or("invalid");
    let loc = item
        .get("loc")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p.as_str() != Some("query") && p.as_str() != Some("body"))
                .map(|p| match p {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(".")
        })
        .unwrap_or_default();
    if loc.is_empty() {
        msg.to_owned()
    } else {
        format!("{loc}: {msg}")
    }
}

fn header_str(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// `Retry-After` as delta-seconds (fractions tolerated) or an HTTP date relative to `now`.
pub fn parse_retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let raw = header_str(headers, "retry-after")?;
    if let Ok(secs) = raw.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)));
    }
    let when = httpdate::parse_http_date(&raw).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

pub(crate) fn truncate_chars(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    fn err(endpoint: Endpoint, status: u16, hdrs: &[(&str, &str)], body: &str) -> HttpError {
        HttpError::from_response(
            endpoint,
            "GET",
            "http://127.0.0.1/x".into(),
            status,
            &headers(hdrs),
            body.as_bytes(),
        )
    }

    #[test]
    fn gateway_401_keeps_reason() {
        let e = err(
            Endpoint::Service,
            401,
            &[(
                "www-authenticate",
                r#"Bearer realm="x", error="invalid_token""#,
            )],
            r#"{"httpCode":401,"httpReason":"Jwt is expired"}"#,
        );
        assert_eq!(e.kind, HttpErrorKind::Unauthorized);
        assert_eq!(e.reason, "Jwt is expired");
        assert!(e.token_rejected());
        let missing = err(
            Endpoint::Service,
            401,
            &[],
            r#"{"httpCode":401,"httpReason":"Jwt is missing"}"#,
        );
        assert!(!missing.token_rejected());
    }

    #[test]
    fn unsupported_domain_on_400_and_404() {
        for status in [400, 404] {
            let e = err(
                Endpoint::Service,
                status,
                &[],
                r#"{"message":"Unable to process request for wikipedia/xx","valid_project_domain_pairs":["wikipedia/en"]}"#,
            );
            assert_eq!(e.kind, HttpErrorKind::UnsupportedDomain);
            assert_eq!(
                e.detail.as_deref(),
                Some("Unable to process request for wikipedia/xx")
            );
        }
    }

    #[test]
    fn rest_415_and_read_denied() {
        let e = err(
            Endpoint::Token,
            415,
            &[],
            r#"{"errorKey":"rest-unsupported-content-type","messageTranslations":{"en":"Unsupported Content-Type"},"httpCode":415,"httpReason":"Unsupported Media Type"}"#,
        );
        assert_eq!(e.kind, HttpErrorKind::UnsupportedMediaType);
        assert_eq!(e.detail.as_deref(), Some("Unsupported Content-Type"));
        let e = err(
            Endpoint::Service,
            403,
            &[],
            r#"{"errorKey":"rest-read-denied","httpCode":403,"httpReason":"Forbidden"}"#,
        );
        assert_eq!(e.kind, HttpErrorKind::ReadDenied);
        assert!(e.to_string().contains("log in to that project"));
    }

    #[test]
    fn oauth_body_with_message_fallback() {
        let e = err(
            Endpoint::Token,
            400,
            &[],
            r#"{"error":"invalid_grant","message":"The refresh token is invalid.","hint":"Token has been revoked"}"#,
        );
        assert_eq!(e.kind, HttpErrorKind::OAuth);
        let o = e.oauth.unwrap();
        assert_eq!(o.error, "invalid_grant");
        assert_eq!(
            o.description.as_deref(),
            Some("The refresh token is invalid.")
        );
        assert_eq!(o.hint.as_deref(), Some("Token has been revoked"));
    }

    #[test]
    fn validation_detail_is_summarised() {
        let e = err(
            Endpoint::Service,
            422,
            &[],
            r#"{"detail":[{"type":"int_parsing","loc":["query","count"],"msg":"Input should be a valid integer","input":"abc"}]}"#,
        );
        assert_eq!(e.kind, HttpErrorKind::UnprocessableEntity);
        assert_eq!(
            e.detail.as_deref(),
            Some("count: Input should be a valid integer")
        );
    }

    #[test]
    fn html_429_with_http_date() {
        let now = SystemTime::now();
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        let e = err(
            Endpoint::Service,
            429,
            &[("retry-after", &later)],
            "<html><body><h1>Wikimedia Error</h1><p>Too many requests</p></body></html>",
        );
        assert_eq!(e.kind, HttpErrorKind::RateLimited);
        let after = e.retry_after.unwrap().as_secs();
        assert!((28..=30).contains(&after), "{after}");
        assert_eq!(
            e.detail.as_deref(),
            Some("Wikimedia Error Too many requests")
        );
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::now();
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "7")]), now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "soon")]), now),
            None
        );
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "-3")]), now),
            None
        );
        let past = httpdate::fmt_http_date(now - Duration::from_secs(100));
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", &past)]), now),
            Some(Duration::ZERO)
        );
    }
}
