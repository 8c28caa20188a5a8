//! PKCE (RFC 7636) and the `state` parameter: random values and the S256 challenge.
//!
//! SHA-256 and the CSPRNG come from `ring`, which the TLS stack links anyway; this keeps a
//! second hash implementation out of the build.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::digest::{SHA256, digest};
use ring::rand::{SecureRandom, SystemRandom};

use crate::error::{Error, Result};
use crate::secret::Secret;

/// Random bytes behind a generated verifier: 48 bytes are 64 base64url characters, well
/// inside the 43–128 the RFC allows, with 384 bits of entropy.
const VERIFIER_BYTES: usize = 48;
/// Random bytes behind a generated `state` (256 bits, 43 characters).
const STATE_BYTES: usize = 32;

fn random_base64url(len: usize) -> Result<String> {
    let mut bytes = vec![0u8; len];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| Error::Internal("the system random number generator failed".to_owned()))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// A fresh code verifier: 64 characters of the base64url alphabet, all of them unreserved.
pub fn new_code_verifier() -> Result<Secret> {
    random_base64url(VERIFIER_BYTES).map(Secret::new)
}

/// A fresh, unguessable `state` value.
pub fn new_state() -> Result<String> {
    random_base64url(STATE_BYTES)
}

/// The S256 challenge of `verifier`: `BASE64URL(SHA256(ASCII(verifier)))` without padding.
pub fn s256_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(digest(&SHA256, verifier.as_bytes()))
}

/// Check the RFC 7636 rule for verifiers (and challenges): 43 to 128 characters from
/// `[A-Za-z0-9-._~]`. MediaWiki rejects anything else with `invalid_request`.
pub fn check_verifier(name: &str, verifier: &str) -> Result<()> {
    let len = verifier.len();
    if !(43..=128).contains(&len) {
        return Err(Error::invalid(
            name,
            format!("must be 43 to 128 characters long, got {len}"),
        ));
    }
    let unreserved = |c: char| c.is_ascii_alphanumeric() || "-._~".contains(c);
    if !verifier.chars().all(unreserved) {
        return Err(Error::invalid(
            name,
            "may only contain letters, digits and - . _ ~",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_vector() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(
            s256_challenge(verifier),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        check_verifier("code_verifier", verifier).unwrap();
    }

    #[test]
    fn generated_values_follow_the_rules() {
        let a = new_code_verifier().unwrap();
        let b = new_code_verifier().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.expose().len(), 64);
        check_verifier("code_verifier", a.expose()).unwrap();
        let state = new_state().unwrap();
        assert_eq!(state.len(), 43);
        assert_ne!(state, new_state().unwrap());
    }

    #[test]
    fn verifier_rule_rejects_bad_values() {
        for bad in ["short", &"a".repeat(129), &format!("{}+", "a".repeat(50))] {
            let err = check_verifier("code_verifier", bad).unwrap_err();
            assert!(matches!(err, Error::InvalidParameter { .. }), "{bad}");
        }
        check_verifier("code_verifier", &"a".repeat(43)).unwrap();
        check_verifier("code_verifier", &"~".repeat(128)).unwrap();
    }
}
