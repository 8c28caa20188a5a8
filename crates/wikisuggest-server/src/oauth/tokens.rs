//! Access tokens (HMAC-signed JWTs, checked by signature and `exp` only, as the gateway
//! does), authorization codes (single use, with their PKCE challenge) and refresh tokens
//! (rotated on use; the old one stays usable for a grace period).
//!
//! Codes and refresh tokens are looked up by key and expired through a queue ordered by
//! expiry, so issuing one costs the same with ten records stored or a million.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use axum::http::StatusCode;

use super::pkce::{self, Method};
use crate::error::ApiError;

type HmacSha256 = Hmac<Sha256>;

/// Lifetimes of what the service issues.
#[derive(Debug, Clone, Copy)]
pub struct Lifetimes {
    pub access: Duration,
    pub refresh: Duration,
    pub refresh_grace: Duration,
    pub code: Duration,
}

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    aud: String,
    jti: String,
    iat: u64,
    nbf: u64,
    exp: u64,
    iss: String,
    sub: String,
    scopes: Vec<String>,
    grant_type: String,
}

/// Who a valid bearer token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bearer {
    /// Client id, or `personal:<name>` for a personal API token.
    pub client_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenError {
    Expired,
    Invalid,
}

#[derive(Debug)]
struct CodeRecord {
    client_id: String,
    /// The `redirect_uri` sent to `/authorize`, if any (then required, identical, at the
    /// token endpoint).
    redirect_uri: Option<String>,
    scopes: Vec<String>,
    challenge: Option<(String, Method)>,
    expires: u64,
}

#[derive(Debug)]
struct RefreshRecord {
    client_id: String,
    scopes: Vec<String>,
    expires: u64,
    /// When it was rotated away; usable until `revoked + grace`.
    revoked: Option<u64>,
    /// The refresh token it was rotated into. A retry within the grace period gets this same
    /// one back: one chain per authorization, however often the old token is replayed.
    successor: Option<String>,
}

#[derive(Debug, Default)]
struct Store {
    codes: HashMap<String, CodeRecord>,
    refresh: HashMap<String, RefreshRecord>,
    /// `(when it may be gone, key)`, earliest first. Entries may be stale (the record was
    /// redeemed, or got a later end); the record itself decides when an entry comes due.
    code_expiry: BinaryHeap<Reverse<(u64, String)>>,
    refresh_expiry: BinaryHeap<Reverse<(u64, String)>>,
}

impl Store {
    /// Drop the records that are dead at `now`; touches only what has come due.
    fn purge(&mut self, now: u64, grace: u64) {
        while let Some(Reverse((due, _))) = self.code_expiry.peek() {
            if *due > now {
                break;
            }
            if let Some(Reverse((_, key))) = self.code_expiry.pop()
                && self.codes.get(&key).is_some_and(|c| c.expires <= now)
            {
                self.codes.remove(&key);
            }
        }
        while let Some(Reverse((due, _))) = self.refresh_expiry.peek() {
            if *due > now {
                break;
            }
            if let Some(Reverse((_, key))) = self.refresh_expiry.pop() {
                let dead = self.refresh.get(&key).is_some_and(|r| {
                    r.expires <= now || r.revoked.is_some_and(|at| at.saturating_add(grace) < now)
                });
                if dead {
                    self.refresh.remove(&key);
                }
            }
        }
    }

    fn add_refresh(&mut self, key: String, record: RefreshRecord) {
        self.refresh_expiry
            .push(Reverse((record.expires, key.clone())));
        self.refresh.insert(key, record);
    }
}

/// The token endpoint's answer (before serialisation).
#[derive(Debug, Serialize)]
pub struct Issued {
    pub token_type: &'static str,
    pub expires_in: u64,
    pub access_token: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
}

pub struct TokenService {
    key: [u8; 32],
    issuer: String,
    lifetimes: Lifetimes,
    store: Mutex<Store>,
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A random URL-safe string of 32 bytes of entropy.
pub fn random_token() -> Result<String, ApiError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| ApiError::Internal(format!("no randomness: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

impl TokenService {
    pub fn new(issuer: String, lifetimes: Lifetimes) -> Result<Self, String> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| format!("no randomness: {e}"))?;
        Ok(Self {
            key,
            issuer,
            lifetimes,
            store: Mutex::new(Store::default()),
        })
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        // A panic elsewhere cannot leave the maps half-updated: keep serving.
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn sign(&self, data: &[u8]) -> Result<Vec<u8>, ApiError> {
        let mut mac =
            HmacSha256::new_from_slice(&self.key).map_err(|e| ApiError::Internal(e.to_string()))?;
        mac.update(data);
        Ok(mac.finalize().into_bytes().to_vec())
    }

    pub fn access_token(
        &self,
        client_id: &str,
        scopes: &[String],
        grant_type: &str,
    ) -> Result<String, ApiError> {
        let issued = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let iat = issued.as_secs();
        // Rounded up: a token never lives shorter than its lifetime.
        let exp = issued
            .saturating_add(self.lifetimes.access)
            .as_secs_f64()
            .ceil() as u64;
        let claims = Claims {
            aud: client_id.to_owned(),
            jti: random_token()?,
            iat,
            nbf: iat,
            exp,
            iss: self.issuer.clone(),
            sub: format!("client:{client_id}"),
            scopes: scopes.to_vec(),
            grant_type: grant_type.to_owned(),
        };
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
        let body = serde_json::to_vec(&claims).map_err(|e| ApiError::Internal(e.to_string()))?;
        let signing_input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(body));
        let signature = URL_SAFE_NO_PAD.encode(self.sign(signing_input.as_bytes())?);
        Ok(format!("{signing_input}.{signature}"))
    }

    /// Checks signature and expiry (no revocation lookup, as the gateway).
    pub fn verify(&self, token: &str) -> Result<Bearer, TokenError> {
        let mut parts = token.rsplitn(2, '.');
        let (Some(signature), Some(signing_input)) = (parts.next(), parts.next()) else {
            return Err(TokenError::Invalid);
        };
        let signature = URL_SAFE_NO_PAD
            .decode(signature)
            .map_err(|_| TokenError::Invalid)?;
        let mut mac = HmacSha256::new_from_slice(&self.key).map_err(|_| TokenError::Invalid)?;
        mac.update(signing_input.as_bytes());
        mac.verify_slice(&signature)
            .map_err(|_| TokenError::Invalid)?;
        let payload = signing_input.split('.').nth(1).ok_or(TokenError::Invalid)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| TokenError::Invalid)?;
        let claims: Claims = serde_json::from_slice(&payload).map_err(|_| TokenError::Invalid)?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        if now >= claims.exp as f64 {
            return Err(TokenError::Expired);
        }
        Ok(Bearer {
            client_id: claims.aud,
        })
    }

    pub fn issue(
        &self,
        client_id: &str,
        scopes: &[String],
        grant_type: &str,
        with_refresh: bool,
    ) -> Result<Issued, ApiError> {
        let access_token = self.access_token(client_id, scopes, grant_type)?;
        let refresh_token = if with_refresh {
            let token = random_token()?;
            let now = now();
            let mut store = self.store();
            store.purge(now, self.lifetimes.refresh_grace.as_secs());
            let record = self.new_refresh_record(client_id, scopes, now);
            store.add_refresh(token.clone(), record);
            Some(token)
        } else {
            None
        };
        Ok(Issued {
            token_type: "Bearer",
            expires_in: self.lifetimes.access.as_secs(),
            access_token,
            refresh_token,
        })
    }

    fn new_refresh_record(&self, client_id: &str, scopes: &[String], now: u64) -> RefreshRecord {
        RefreshRecord {
            client_id: client_id.to_owned(),
            scopes: scopes.to_vec(),
            expires: now.saturating_add(self.lifetimes.refresh.as_secs()),
            revoked: None,
            successor: None,
        }
    }

    pub fn issue_code(
        &self,
        client_id: &str,
        redirect_uri: Option<String>,
        scopes: Vec<String>,
        challenge: Option<(String, Method)>,
    ) -> Result<String, ApiError> {
        let code = random_token()?;
        let now = now();
        let expires = now.saturating_add(self.lifetimes.code.as_secs());
        let mut store = self.store();
        store.purge(now, self.lifetimes.refresh_grace.as_secs());
        store.code_expiry.push(Reverse((expires, code.clone())));
        store.codes.insert(
            code.clone(),
            CodeRecord {
                client_id: client_id.to_owned(),
                redirect_uri,
                scopes,
                challenge,
                expires,
            },
        );
        Ok(code)
    }

    /// Exchanges a code (once) for its scopes, checking client, redirect URI and PKCE.
    pub fn redeem_code(
        &self,
        code: &str,
        client_id: &str,
        redirect_uri: Option<&str>,
        verifier: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        // Removed whatever the outcome: a code is good for one attempt only.
        let record = self.store().codes.remove(code).ok_or_else(|| {
            ApiError::invalid_grant(
                "The provided authorization grant is invalid, expired or revoked",
                "Authorization code has been revoked or does not exist",
            )
        })?;
        if record.client_id != client_id {
            return Err(ApiError::invalid_request("code")
                .with_hint("Authorization code was not issued to this client"));
        }
        if record.expires <= now() {
            return Err(ApiError::invalid_grant(
                "The provided authorization grant is invalid, expired or revoked",
                "Authorization code has expired",
            ));
        }
        if record.redirect_uri.as_deref() != redirect_uri && record.redirect_uri.is_some() {
            return Err(ApiError::invalid_client());
        }
        match (&record.challenge, verifier) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(ApiError::invalid_request("code_verifier")
                    .with_hint("Failed to verify `code_verifier`."));
            }
            (Some(_), None) => return Err(ApiError::invalid_request("code_verifier")),
            (Some((challenge, method)), Some(verifier)) => {
                if !pkce::well_formed(verifier) {
                    return Err(ApiError::invalid_request("code_verifier")
                        .with_hint("Code verifier must follow the specifications of RFC-7636."));
                }
                if !pkce::verify(*method, challenge, verifier) {
                    return Err(ApiError::invalid_grant(
                        "The provided authorization grant is invalid, expired or revoked",
                        "Failed to verify `code_verifier`.",
                    ));
                }
            }
        }
        Ok(record.scopes)
    }

    /// The refresh-token grant: validates `token` for `client_id`, rotates it and answers
    /// with a new access token and the successor refresh token. `requested` scopes must be a
    /// subset of the granted ones.
    ///
    /// The old token stays usable for the grace period so a client that lost the answer can
    /// retry — and the retry gets the *same* successor back, not a second one: replaying a
    /// token within the grace period never forks the authorization into parallel chains.
    pub fn refresh(
        &self,
        token: &str,
        client_id: &str,
        requested: Option<Vec<String>>,
    ) -> Result<Issued, ApiError> {
        let invalid = |hint: &str| ApiError::invalid_grant("The refresh token is invalid.", hint);
        let now = now();
        let grace = self.lifetimes.refresh_grace.as_secs();
        let mut store = self.store();
        store.purge(now, grace);
        let record = store
            .refresh
            .get(token)
            .ok_or_else(|| invalid("Cannot decrypt the refresh token"))?;
        if record.client_id != client_id {
            return Err(invalid("Token is not linked to client"));
        }
        if record.expires <= now {
            return Err(invalid("Token has expired"));
        }
        if record
            .revoked
            .is_some_and(|at| now > at.saturating_add(grace))
        {
            return Err(invalid("Token has been revoked"));
        }
        let mut scopes = record.scopes.clone();
        if let Some(requested) = requested {
            if let Some(extra) = requested.iter().find(|s| !scopes.contains(s)) {
                return Err(ApiError::oauth(
                    StatusCode::BAD_REQUEST,
                    "invalid_scope",
                    "The requested scope is invalid, unknown, or malformed",
                )
                .with_hint(format!("Check the `{extra}` scope")));
            }
            scopes = requested;
        }
        let earlier = record
            .successor
            .clone()
            .filter(|next| store.refresh.contains_key(next));
        let successor = match earlier {
            Some(next) => {
                if let Some(next_record) = store.refresh.get(&next) {
                    scopes.clone_from(&next_record.scopes);
                }
                next
            }
            None if record.revoked.is_some() => return Err(invalid("Token has been revoked")),
            None => {
                let next = random_token()?;
                let fresh = self.new_refresh_record(client_id, &scopes, now);
                store.add_refresh(next.clone(), fresh);
                if let Some(old) = store.refresh.get_mut(token) {
                    old.revoked = Some(now);
                    old.successor = Some(next.clone());
                }
                // Usable through `now + grace` inclusive, dead one second later.
                let dead_at = now.saturating_add(grace).saturating_add(1);
                store
                    .refresh_expiry
                    .push(Reverse((dead_at, token.to_owned())));
                next
            }
        };
        drop(store);
        Ok(Issued {
            token_type: "Bearer",
            expires_in: self.lifetimes.access.as_secs(),
            access_token: self.access_token(client_id, &scopes, "refresh_token")?,
            refresh_token: Some(successor),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(access: u64, grace: u64) -> TokenService {
        TokenService::new(
            "http://127.0.0.1".into(),
            Lifetimes {
                access: Duration::from_secs(access),
                refresh: Duration::from_secs(3600),
                refresh_grace: Duration::from_secs(grace),
                code: Duration::from_secs(600),
            },
        )
        .unwrap()
    }

    #[test]
    fn access_tokens_verify_and_expire() {
        let svc = service(100, 600);
        let token = svc.access_token("app", &[], "client_credentials").unwrap();
        assert_eq!(svc.verify(&token).unwrap().client_id, "app");
        let mut forged = token.clone();
        forged.replace_range(forged.len() - 3.., "AAA");
        assert_eq!(svc.verify(&forged), Err(TokenError::Invalid));
        assert_eq!(svc.verify("not.a.jwt"), Err(TokenError::Invalid));
        assert_eq!(svc.verify(""), Err(TokenError::Invalid));
        let other = service(100, 600);
        assert_eq!(other.verify(&token), Err(TokenError::Invalid));
        let expired = service(0, 600);
        let token = expired
            .access_token("app", &[], "client_credentials")
            .unwrap();
        // Expiry is rounded up to the next whole second.
        std::thread::sleep(Duration::from_millis(1050));
        assert_eq!(expired.verify(&token), Err(TokenError::Expired));
    }

    #[test]
    fn codes_are_single_use_and_check_pkce() {
        let svc = service(100, 600);
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = (
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
            Method::S256,
        );
        let code = svc
            .issue_code("app", None, vec![], Some(challenge.clone()))
            .unwrap();
        assert!(svc.redeem_code(&code, "app", None, Some(verifier)).is_ok());
        assert!(svc.redeem_code(&code, "app", None, Some(verifier)).is_err());
        let code = svc
            .issue_code("app", None, vec![], Some(challenge))
            .unwrap();
        let wrong = "x".repeat(43);
        let err = svc
            .redeem_code(&code, "app", None, Some(&wrong))
            .unwrap_err();
        assert!(matches!(
            err,
            ApiError::OAuth {
                error: "invalid_grant",
                ..
            }
        ));
        let code = svc
            .issue_code("app", Some("http://127.0.0.1/cb".into()), vec![], None)
            .unwrap();
        assert!(svc.redeem_code(&code, "app", None, None).is_err());
        let code = svc.issue_code("app", None, vec![], None).unwrap();
        assert!(svc.redeem_code(&code, "other", None, None).is_err());
        let code = svc.issue_code("app", None, vec![], None).unwrap();
        assert!(svc.redeem_code(&code, "app", None, Some(verifier)).is_err());
    }

    #[test]
    fn refresh_rotation_and_grace() {
        let svc = service(100, 600);
        let issued = svc
            .issue("app", &["basic".into()], "authorization_code", true)
            .unwrap();
        let refresh = issued.refresh_token.unwrap();
        let first = svc.refresh(&refresh, "app", None).unwrap();
        let successor = first.refresh_token.unwrap();
        assert_ne!(successor, refresh);
        // Rotated away, but within the grace period: every replay gets the same successor,
        // never a new independent chain.
        for _ in 0..5 {
            let again = svc.refresh(&refresh, "app", None).unwrap();
            assert_eq!(again.refresh_token.as_deref(), Some(successor.as_str()));
            assert!(svc.verify(&again.access_token).is_ok());
        }
        assert_eq!(svc.store().refresh.len(), 2);
        assert!(svc.refresh(&refresh, "other", None).is_err());
        assert!(svc.refresh("unknown", "app", None).is_err());
        // The successor rotates on as usual.
        let next = svc.refresh(&successor, "app", None).unwrap();
        assert_ne!(next.refresh_token.as_deref(), Some(successor.as_str()));
        let err = svc
            .refresh(
                &next.refresh_token.unwrap(),
                "app",
                Some(vec!["editpage".into()]),
            )
            .unwrap_err();
        assert!(matches!(
            err,
            ApiError::OAuth {
                error: "invalid_scope",
                ..
            }
        ));
        let strict = service(100, 0);
        let refresh = strict
            .issue("app", &[], "authorization_code", true)
            .unwrap();
        let refresh = refresh.refresh_token.unwrap();
        strict.refresh(&refresh, "app", None).unwrap();
        strict.store().refresh.get_mut(&refresh).unwrap().revoked = Some(now() - 1);
        let err = strict.refresh(&refresh, "app", None).unwrap_err();
        assert!(
            matches!(err, ApiError::OAuth { hint: Some(h), .. } if h == "Token has been revoked")
        );
    }

    #[test]
    fn expired_records_are_dropped_without_scanning() {
        let svc = TokenService::new(
            "http://127.0.0.1".into(),
            Lifetimes {
                access: Duration::from_secs(100),
                refresh: Duration::from_secs(0),
                refresh_grace: Duration::from_secs(0),
                code: Duration::from_secs(0),
            },
        )
        .unwrap();
        for _ in 0..100 {
            svc.issue_code("app", None, vec![], None).unwrap();
            svc.issue("app", &[], "authorization_code", true).unwrap();
        }
        // Lifetimes of zero: everything issued is due at once and goes with the next issue.
        let store = svc.store();
        assert!(store.codes.len() <= 1, "{}", store.codes.len());
        assert!(store.refresh.len() <= 1, "{}", store.refresh.len());
        assert!(store.code_expiry.len() <= 1 && store.refresh_expiry.len() <= 1);
    }
}
