//! Access tokens (HMAC-signed JWTs, checked by signature and `exp` only, as the gateway
//! does), authorization codes (single use, with their PKCE challenge) and refresh tokens
//! (rotated on use; the old one stays usable for a grace period).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

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
}

#[derive(Debug, Default)]
struct Store {
    codes: HashMap<String, CodeRecord>,
    refresh: HashMap<String, RefreshRecord>,
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
        let exp = (issued + self.lifetimes.access).as_secs_f64().ceil() as u64;
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
            let mut store = self.store();
            let now = now();
            let grace = self.lifetimes.refresh_grace.as_secs();
            store
                .refresh
                .retain(|_, r| r.expires > now && r.revoked.is_none_or(|at| at + grace >= now));
            store.refresh.insert(
                token.clone(),
                RefreshRecord {
                    client_id: client_id.to_owned(),
                    scopes: scopes.to_vec(),
                    expires: now + self.lifetimes.refresh.as_secs(),
                    revoked: None,
                },
            );
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

    pub fn issue_code(
        &self,
        client_id: &str,
        redirect_uri: Option<String>,
        scopes: Vec<String>,
        challenge: Option<(String, Method)>,
    ) -> Result<String, ApiError> {
        let code = random_token()?;
        let now = now();
        let mut store = self.store();
        store.codes.retain(|_, c| c.expires > now);
        store.codes.insert(
            code.clone(),
            CodeRecord {
                client_id: client_id.to_owned(),
                redirect_uri,
                scopes,
                challenge,
                expires: now + self.lifetimes.code.as_secs(),
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

    /// Validates a refresh token of `client_id` and rotates it away; returns its scopes.
    pub fn rotate_refresh(&self, token: &str, client_id: &str) -> Result<Vec<String>, ApiError> {
        let invalid = |hint: &str| ApiError::invalid_grant("The refresh token is invalid.", hint);
        let now = now();
        let mut store = self.store();
        let record = store
            .refresh
            .get_mut(token)
            .ok_or_else(|| invalid("Cannot decrypt the refresh token"))?;
        if record.client_id != client_id {
            return Err(invalid("Token is not linked to client"));
        }
        if record.expires <= now {
            return Err(invalid("Token has expired"));
        }
        match record.revoked {
            Some(at) if now > at + self.lifetimes.refresh_grace.as_secs() => {
                Err(invalid("Token has been revoked"))
            }
            Some(_) => Ok(record.scopes.clone()),
            None => {
                record.revoked = Some(now);
                Ok(record.scopes.clone())
            }
        }
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
        assert_eq!(svc.rotate_refresh(&refresh, "app").unwrap(), ["basic"]);
        // Rotated away, but within the grace period.
        assert!(svc.rotate_refresh(&refresh, "app").is_ok());
        assert!(svc.rotate_refresh(&refresh, "other").is_err());
        assert!(svc.rotate_refresh("unknown", "app").is_err());
        let strict = service(100, 0);
        let refresh = strict
            .issue("app", &[], "authorization_code", true)
            .unwrap();
        let refresh = refresh.refresh_token.unwrap();
        strict.rotate_refresh(&refresh, "app").unwrap();
        strict.store().refresh.get_mut(&refresh).unwrap().revoked = Some(now() - 1);
        let err = strict.rotate_refresh(&refresh, "app").unwrap_err();
        assert!(
            matches!(err, ApiError::OAuth { hint: Some(h), .. } if h == "Token has been revoked")
        );
    }
}
