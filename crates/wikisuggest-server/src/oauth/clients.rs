//! Registered clients and personal API tokens, read from a TOML file:
//!
//! ```toml
//! [[clients]]
//! id = "…"                 # client key
//! secret = "…"             # omit for a public (non-confidential) client
//! redirect_uris = ["http://127.0.0.1/callback"]
//! grants = ["authorization_code", "refresh_token", "client_credentials"]
//! rate_limit_per_minute = 600   # optional; else the server default
//!
//! [[personal_tokens]]
//! token = "…"              # sent as a bearer token; never expires
//! name = "…"
//! ```

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::oauth::pkce::constant_time_eq;

pub const GRANTS: [&str; 3] = ["authorization_code", "refresh_token", "client_credentials"];

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Client {
    pub id: String,
    #[serde(default)]
    pub secret: Option<String>,
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    #[serde(default = "default_grants")]
    pub grants: Vec<String>,
    #[serde(default)]
    pub rate_limit_per_minute: Option<u32>,
}

fn default_grants() -> Vec<String> {
    GRANTS.iter().map(|g| (*g).to_owned()).collect()
}

impl Client {
    pub fn is_confidential(&self) -> bool {
        self.secret.is_some()
    }

    pub fn allows(&self, grant: &str) -> bool {
        self.grants.iter().any(|g| g == grant)
    }

    pub fn secret_matches(&self, given: &str) -> bool {
        self.secret
            .as_deref()
            .is_some_and(|s| constant_time_eq(s.as_bytes(), given.as_bytes()))
    }

    /// The redirect URI to use: the registered one when none is given (only if there is
    /// exactly one), else an exact match — except that the port of a loopback URI
    /// (`127.0.0.1`, `[::1]`) is ignored (RFC 8252 §7.3).
    ///
    /// A given URI is parsed before anything is compared, and one carrying user info
    /// (`http://127.0.0.1:80@evil.example/cb`) or a fragment is refused outright: a string
    /// prefix that looks like a loopback host says nothing about where a browser will go.
    pub fn redirect_uri(&self, given: Option<&str>) -> Option<String> {
        match given {
            None => match self.redirect_uris.as_slice() {
                [only] => Some(only.clone()),
                _ => None,
            },
            Some(uri) => {
                let parsed = acceptable_redirect(uri)?;
                self.redirect_uris
                    .iter()
                    .any(|r| r == uri || same_ignoring_loopback_port(r, &parsed))
                    .then(|| uri.to_owned())
            }
        }
    }
}

/// `uri` parsed, when it may be redirected to at all: absolute, without user info or
/// fragment.
fn acceptable_redirect(uri: &str) -> Option<url::Url> {
    let parsed = url::Url::parse(uri).ok()?;
    let has_userinfo = !parsed.username().is_empty() || parsed.password().is_some();
    (!has_userinfo && parsed.fragment().is_none()).then_some(parsed)
}

/// Both URIs are `http` on the same loopback address with the same path and query; only
/// the port may differ. Compared on the parsed URLs, never on their text.
fn same_ignoring_loopback_port(registered: &str, given: &url::Url) -> bool {
    let Some(registered) = acceptable_redirect(registered) else {
        return false;
    };
    let loopback = |url: &url::Url| match url.host() {
        Some(url::Host::Ipv4(ip)) => ip == std::net::Ipv4Addr::LOCALHOST,
        Some(url::Host::Ipv6(ip)) => ip == std::net::Ipv6Addr::LOCALHOST,
        _ => false,
    };
    registered.scheme() == "http"
        && given.scheme() == "http"
        && loopback(&registered)
        && registered.host() == given.host()
        && registered.path() == given.path()
        && registered.query() == given.query()
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PersonalToken {
    pub token: String,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientsFile {
    #[serde(default)]
    clients: Vec<Client>,
    #[serde(default)]
    personal_tokens: Vec<PersonalToken>,
}

#[derive(Debug, Default)]
pub struct ClientRegistry {
    clients: HashMap<String, Client>,
    personal: Vec<PersonalToken>,
}

impl ClientRegistry {
    pub fn open(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::input(path, e))?;
        Self::parse(&text).map_err(|e| Error::input(path, e))
    }

    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let file: ClientsFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut clients = HashMap::new();
        for client in file.clients {
            if let Some(bad) = client.grants.iter().find(|g| !GRANTS.contains(&g.as_str())) {
                return Err(format!("client {}: unknown grant {bad:?}", client.id));
            }
            if client.id.is_empty() || clients.contains_key(&client.id) {
                return Err(format!("client id {:?} is empty or repeated", client.id));
            }
            clients.insert(client.id.clone(), client);
        }
        if file.personal_tokens.iter().any(|t| t.token.len() < 16) {
            return Err("personal tokens must be at least 16 characters".into());
        }
        Ok(Self {
            clients,
            personal: file.personal_tokens,
        })
    }

    pub fn get(&self, id: &str) -> Option<&Client> {
        self.clients.get(id)
    }

    /// The personal token's name, if `token` is one.
    pub fn personal(&self, token: &str) -> Option<&PersonalToken> {
        self.personal
            .iter()
            .find(|t| constant_time_eq(t.token.as_bytes(), token.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
        [[clients]]
        id = "conf"
        secret = "s3cret"
        redirect_uris = ["http://127.0.0.1:9000/cb", "https://app.example/cb"]
        [[clients]]
        id = "pub"
        redirect_uris = ["http://127.0.0.1/cb"]
        grants = ["authorization_code", "refresh_token"]
        [[personal_tokens]]
        token = "personal-token-0123456789"
    "#;

    #[test]
    fn parses_and_matches() {
        let reg = ClientRegistry::parse(FILE).unwrap();
        let conf = reg.get("conf").unwrap();
        assert!(
            conf.is_confidential() && conf.secret_matches("s3cret") && !conf.secret_matches("x")
        );
        assert!(conf.allows("client_credentials"));
        let public = reg.get("pub").unwrap();
        assert!(!public.is_confidential() && !public.allows("client_credentials"));
        assert_eq!(
            public.redirect_uri(None).as_deref(),
            Some("http://127.0.0.1/cb")
        );
        assert!(
            public
                .redirect_uri(Some("http://127.0.0.1:5555/cb"))
                .is_some()
        );
        assert!(
            public
                .redirect_uri(Some("http://localhost:5555/cb"))
                .is_none()
        );
        assert!(
            public
                .redirect_uri(Some("http://127.0.0.1:5555/other"))
                .is_none()
        );
        assert_eq!(conf.redirect_uri(None), None);
        // Code theft: everything before `@` is user info, the browser goes to evil.example.
        for hostile in [
            "http://127.0.0.1:80@evil.example/cb",
            "http://127.0.0.1@evil.example/cb",
            "http://127.0.0.1:5555@evil.example:80/cb",
            "http://user@127.0.0.1:5555/cb",
            "http://127.0.0.1.evil.example/cb",
            "http://127.0.0.1:5555/cb#frag",
            "http://127.0.0.1:5555/cb/../cb2",
            "https://127.0.0.1:5555/cb",
            "http://[::1]:5555/cb",
        ] {
            assert!(public.redirect_uri(Some(hostile)).is_none(), "{hostile}");
        }
        assert!(conf.redirect_uri(Some("http://127.0.0.1:1/cb")).is_some());
        assert!(
            conf.redirect_uri(Some("https://x@app.example/cb"))
                .is_none()
        );
        assert!(conf.redirect_uri(Some("https://app.example/cb")).is_some());
        assert!(reg.personal("personal-token-0123456789").is_some());
        assert!(reg.personal("personal-token-012345678").is_none());
    }

    #[test]
    fn rejects_bad_files() {
        assert!(ClientRegistry::parse("[[clients]]\nid='a'\ngrants=['password']").is_err());
        assert!(ClientRegistry::parse("[[clients]]\nid='a'\n[[clients]]\nid='a'").is_err());
        assert!(ClientRegistry::parse("[[clients]]\nid='a'\ncolour='red'").is_err());
        assert!(ClientRegistry::parse("[[personal_tokens]]\ntoken='short'").is_err());
    }
}
