//! Removing the credentials of a request from every text its answer produces.
//!
//! A server (or a proxy in front of it) may echo the request back in an error body: the
//! form holding the client secret, the `Authorization` header. [`Secret`] keeps our own
//! formatting safe, but text that arrives from the wire is only safe once every secret the
//! request carried has been cut out of it. The client does that once, where a response
//! becomes a value ([`crate::client::RawResponse`] or an [`Error`]), so messages, `body`
//! attributes and log lines built later never see a credential.

use percent_encoding::utf8_percent_encode;
use serde_json::Value;

use crate::error::Error;
use crate::http_error::HttpError;
use crate::secret::Secret;

/// What a secret is replaced with.
pub const REDACTED: &str = "***";

/// Form fields whose values are credentials: those of an OAuth 2.0 token request, and of
/// the Action API's login (`lgpassword`, `lgtoken`) and writes (`token`, the CSRF token).
const SECRET_FIELDS: [&str; 8] = [
    "client_secret",
    "refresh_token",
    "code",
    "code_verifier",
    "access_token",
    "lgpassword",
    "lgtoken",
    "token",
];

/// The spellings of a set of secrets that may come back: as sent, percent-encoded as a form
/// sends it, and with `+` for spaces. Longest first, so a secret containing another is
/// replaced whole.
#[derive(Clone, Default)]
pub struct Redactor {
    needles: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} spellings)", self.needles.len())
    }
}

impl Redactor {
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a Secret>) -> Self {
        let mut needles = Vec::new();
        for secret in secrets {
            let raw = secret.expose();
            if raw.is_empty() {
                continue;
            }
            let encoded = utf8_percent_encode(raw, percent_encoding::NON_ALPHANUMERIC).to_string();
            let form = crate::encode::plain_segment(raw);
            for spelling in [raw.to_owned(), encoded, form.replace("%20", "+"), form] {
                if !needles.contains(&spelling) {
                    needles.push(spelling);
                }
            }
        }
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        Self { needles }
    }

    /// The secrets a request carries: `secrets` (its bearer token, session cookies, …) and
    /// the credential fields of a form body.
    pub fn for_request(secrets: &[Secret], form: Option<&[u8]>) -> Self {
        let mut secrets = secrets.to_vec();
        if let Some(form) = form {
            secrets.extend(
                form_pairs(form)
                    .filter(|(key, _)| SECRET_FIELDS.contains(&key.as_str()))
                    .map(|(_, value)| Secret::new(value)),
            );
        }
        Self::new(&secrets)
    }

    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// `text` with every secret replaced by [`REDACTED`].
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for needle in &self.needles {
            if out.contains(needle.as_str()) {
                out = out.replace(needle.as_str(), REDACTED);
            }
        }
        out
    }

    fn option(&self, text: &mut Option<String>) {
        if let Some(t) = text {
            *t = self.text(t);
        }
    }

    /// A JSON value with every string (keys included) redacted.
    pub fn json(&self, value: Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.text(&s)),
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.json(v)).collect()),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (self.text(&k), self.json(v)))
                    .collect(),
            ),
            other => other,
        }
    }

    /// Every text field of an HTTP error.
    pub fn http(&self, error: &mut HttpError) {
        if self.is_empty() {
            return;
        }
        error.reason = self.text(&error.reason);
        error.url = self.text(&error.url);
        error.body = error.body.take().map(|b| self.json(b));
        self.option(&mut error.request_id);
        self.option(&mut error.www_authenticate);
        self.option(&mut error.detail);
        self.option(&mut error.error_key);
        if let Some(oauth) = &mut error.oauth {
            oauth.error = self.text(&oauth.error);
            self.option(&mut oauth.description);
            self.option(&mut oauth.hint);
        }
    }

    /// Every text an error carries.
    pub fn error(&self, error: Error) -> Error {
        if self.is_empty() {
            return error;
        }
        match error {
            Error::Http(mut http) => {
                self.http(&mut http);
                Error::Http(http)
            }
            Error::Transport {
                url,
                message,
                before_send,
            } => Error::Transport {
                url: self.text(&url),
                message: self.text(&message),
                before_send,
            },
            Error::Timeout { url, during } => Error::Timeout {
                url: self.text(&url),
                during,
            },
            Error::ResponseTooLarge { url, limit } => Error::ResponseTooLarge {
                url: self.text(&url),
                limit,
            },
            Error::Decode {
                url,
                status,
                message,
                snippet,
            } => Error::Decode {
                url: self.text(&url),
                status,
                message: self.text(&message),
                snippet: self.text(&snippet),
            },
            Error::ReauthorizationRequired(why) => Error::ReauthorizationRequired(self.text(&why)),
            Error::Api { code, info } => Error::Api {
                code: self.text(&code),
                info: self.text(&info),
            },
            Error::Internal(message) => Error::Internal(self.text(&message)),
            Error::Config(message) => Error::Config(self.text(&message)),
            other => other,
        }
    }
}

/// `application/x-www-form-urlencoded` pairs, decoded (`+` is a space).
fn form_pairs(form: &[u8]) -> impl Iterator<Item = (String, String)> + '_ {
    let decode = |part: &[u8]| {
        let spaced: Vec<u8> = part
            .iter()
            .map(|&b| if b == b'+' { b' ' } else { b })
            .collect();
        percent_encoding::percent_decode(&spaced)
            .decode_utf8_lossy()
            .into_owned()
    };
    form.split(|&b| b == b'&')
        .filter(|p| !p.is_empty())
        .map(move |pair| {
            let mut parts = pair.splitn(2, |&b| b == b'=');
            let key = parts.next().unwrap_or_default();
            let value = parts.next().unwrap_or_default();
            (decode(key), decode(value))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::Query;

    #[test]
    fn every_spelling_of_a_secret_is_removed() {
        let mut form = Query::new();
        form.push("grant_type", "client_credentials")
            .push("client_id", "app")
            .push("client_secret", "s3cr3t+&/ x");
        let body = form.encode();
        let r = Redactor::for_request(&[Secret::new("bearer-abc")], Some(body.as_bytes()));
        let echoed = format!("you sent {body} with Bearer bearer-abc; raw s3cr3t+&/ x");
        let clean = r.text(&echoed);
        assert!(!clean.contains("s3cr3t"), "{clean}");
        assert!(!clean.contains("bearer-abc"), "{clean}");
        assert!(clean.contains("client_id=app"), "{clean}");
        let json = r.json(serde_json::json!({"echo": {"bearer-abc": ["x s3cr3t+&/ x y"]}}));
        assert!(!json.to_string().contains("s3cr3t"), "{json}");
        assert!(!json.to_string().contains("bearer-abc"), "{json}");
    }

    #[test]
    fn errors_are_redacted_in_every_field() {
        let r = Redactor::new(&[Secret::new("TOPSECRET")]);
        let e = r.error(Error::Decode {
            url: "u".into(),
            status: 200,
            message: "TOPSECRET".into(),
            snippet: "..TOPSECRET..".into(),
        });
        assert!(!e.to_string().contains("TOPSECRET"), "{e}");
        assert!(e.to_string().contains(REDACTED));
    }
}
