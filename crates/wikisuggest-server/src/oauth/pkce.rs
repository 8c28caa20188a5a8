//! PKCE (RFC 7636): challenge and verifier syntax, and the S256/plain comparison.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Plain,
    S256,
}

impl Method {
    /// A challenge without a method means `plain` (as the server library does).
    pub fn parse(value: Option<&str>) -> Option<Self> {
        match value {
            None | Some("plain") => Some(Self::Plain),
            Some("S256") => Some(Self::S256),
            Some(_) => None,
        }
    }
}

/// 43–128 characters of `[A-Za-z0-9-._~]`: the rule for both challenges and verifiers.
pub fn well_formed(value: &str) -> bool {
    (43..=128).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

pub fn verify(method: Method, challenge: &str, verifier: &str) -> bool {
    let computed = match method {
        Method::Plain => verifier.to_owned(),
        Method::S256 => URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())),
    };
    constant_time_eq(computed.as_bytes(), challenge.as_bytes())
}

pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_example() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(well_formed(verifier) && well_formed(challenge));
        assert!(verify(Method::S256, challenge, verifier));
        assert!(!verify(Method::S256, verifier, verifier));
        assert!(verify(Method::Plain, verifier, verifier));
        assert!(!well_formed("short") && !well_formed(&"a+".repeat(30)));
        assert_eq!(Method::parse(None), Some(Method::Plain));
        assert_eq!(Method::parse(Some("s256")), None);
    }
}
