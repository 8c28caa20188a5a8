//! The authorization-code flow's browser half: building the authorize URL and reading the
//! redirect that comes back.

use subtle::ConstantTimeEq;

use super::pkce::{new_code_verifier, new_state, s256_challenge};
use crate::config::normalise_base_url;
use crate::encode::Query;
use crate::error::{Error, Result};
use crate::http_error::OAuthErrorBody;
use crate::secret::Secret;

/// What [`authorization_url`] produced: the URL to open, and what must be kept to finish the
/// flow (`state` to check the redirect, `code_verifier` for the token request).
#[derive(Debug, Clone)]
pub struct AuthorizationRequest {
    pub url: String,
    pub state: String,
    pub code_verifier: Secret,
    pub redirect_uri: Option<String>,
}

/// Build `{auth_url}/w/rest.php/oauth2/authorize?...` with a fresh PKCE verifier.
///
/// `code_challenge_method=S256` is always sent: MediaWiki assumes `plain` when a challenge
/// comes without a method, which would put the verifier itself in the browser's history.
/// `state` is generated unless the caller supplies one (e.g. to carry its own session key).
pub fn authorization_url(
    auth_url: &str,
    client_id: &str,
    redirect_uri: Option<&str>,
    scope: Option<&str>,
    state: Option<&str>,
) -> Result<AuthorizationRequest> {
    let auth_url = normalise_base_url("auth_url", auth_url)?;
    if client_id.trim().is_empty() {
        return Err(Error::invalid("client_id", "must not be empty"));
    }
    let state = match state {
        Some("") => return Err(Error::invalid("state", "must not be empty")),
        Some(s) => s.to_owned(),
        None => new_state()?,
    };
    let code_verifier = new_code_verifier()?;
    let mut query = Query::new();
    query
        .push("response_type", "code")
        .push("client_id", client_id);
    if let Some(uri) = redirect_uri {
        let parsed = reqwest::Url::parse(uri)
            .map_err(|e| Error::invalid("redirect_uri", format!("is not an absolute URL: {e}")))?;
        if parsed.fragment().is_some() {
            return Err(Error::invalid("redirect_uri", "must not have a fragment"));
        }
        // `http://127.0.0.1:80@evil.example/cb` is a URI for evil.example: user info in a
        // redirect URI only ever serves to make a remote host look like a local one.
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(Error::invalid(
                "redirect_uri",
                "must not carry user info (`…@`)",
            ));
        }
        query.push("redirect_uri", uri);
    }
    if let Some(scope) = scope.map(str::trim).filter(|s| !s.is_empty()) {
        query.push("scope", scope);
    }
    query
        .push("state", state.clone())
        .push("code_challenge", s256_challenge(code_verifier.expose()))
        .push("code_challenge_method", "S256");
    Ok(AuthorizationRequest {
        url: format!("{auth_url}/w/rest.php/oauth2/authorize?{}", query.encode()),
        state,
        code_verifier,
        redirect_uri: redirect_uri.map(str::to_owned),
    })
}

/// Read the redirect the browser was sent back with (a full URL, or only its query string)
/// and return the authorization code.
///
/// An `error` parameter wins over everything else and becomes
/// [`Error::AuthorizationFailed`]; MediaWiki sends a user's refusal as `unauthorized_client`
/// and leaves `state` out then, so a missing state is not checked in that case. Otherwise the
/// state must equal `expected_state`, compared in constant time so its value cannot be guessed
/// byte by byte from response timings.
pub fn parse_redirect(redirect: &str, expected_state: &str) -> Result<Secret> {
    let redirect = redirect.trim();
    let query = match reqwest::Url::parse(redirect) {
        Ok(url) => url.query().unwrap_or_default().to_owned(),
        Err(_) => redirect.trim_start_matches('?').to_owned(),
    };
    let mut code = None;
    let mut state = None;
    let mut error = None;
    let mut description = None;
    let mut hint = None;
    for (key, value) in form_pairs(&query) {
        let slot = match key.as_str() {
            "code" => &mut code,
            "state" => &mut state,
            "error" => &mut error,
            "error_description" => &mut description,
            "hint" => &mut hint,
            _ => continue,
        };
        slot.get_or_insert(value);
    }
    if let Some(error) = error {
        return Err(Error::AuthorizationFailed(OAuthErrorBody {
            error,
            description,
            hint,
        }));
    }
    let same_state = state
        .as_deref()
        .is_some_and(|s| bool::from(s.as_bytes().ct_eq(expected_state.as_bytes())));
    if !same_state || expected_state.is_empty() {
        return Err(Error::StateMismatch);
    }
    match code {
        Some(code) if !code.is_empty() => Ok(Secret::new(code)),
        _ => Err(Error::invalid(
            "redirect",
            "has neither a code nor an error parameter",
        )),
    }
}

/// `application/x-www-form-urlencoded` pairs: `+` is a space, then percent-decoding.
fn form_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    let decode = |part: &str| {
        percent_encoding::percent_decode_str(&part.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    query.split('&').filter(|p| !p.is_empty()).map(move |pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (decode(key), decode(value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(url: &str) -> Vec<(String, String)> {
        let url = reqwest::Url::parse(url).unwrap();
        url.query_pairs().into_owned().collect()
    }

    fn get<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
        pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn url_carries_pkce_s256_and_state() {
        let req = authorization_url(
            "http://127.0.0.1:9/",
            "abc123",
            Some("http://127.0.0.1:5000/callback"),
            Some("basic editpage"),
            None,
        )
        .unwrap();
        assert!(
            req.url
                .starts_with("http://127.0.0.1:9/w/rest.php/oauth2/authorize?")
        );
        let p = params(&req.url);
        assert_eq!(get(&p, "response_type"), Some("code"));
        assert_eq!(get(&p, "client_id"), Some("abc123"));
        assert_eq!(
            get(&p, "redirect_uri"),
            Some("http://127.0.0.1:5000/callback")
        );
        assert_eq!(get(&p, "scope"), Some("basic editpage"));
        assert_eq!(get(&p, "state"), Some(req.state.as_str()));
        assert_eq!(get(&p, "code_challenge_method"), Some("S256"));
        assert_eq!(
            get(&p, "code_challenge"),
            Some(s256_challenge(req.code_verifier.expose()).as_str())
        );
        // The verifier itself never appears in the URL.
        assert!(!req.url.contains(req.code_verifier.expose()));
        assert!(!format!("{req:?}").contains(req.code_verifier.expose()));
    }

    #[test]
    fn optional_parts_are_left_out_and_state_can_be_given() {
        let req =
            authorization_url("http://127.0.0.1", "id", None, None, Some("my-state")).unwrap();
        let p = params(&req.url);
        assert_eq!(get(&p, "redirect_uri"), None);
        assert_eq!(get(&p, "scope"), None);
        assert_eq!(get(&p, "state"), Some("my-state"));
        for hostile in [
            "http://127.0.0.1:80@evil.example/callback",
            "http://user@127.0.0.1/callback",
        ] {
            let err = authorization_url("http://127.0.0.1", "id", Some(hostile), None, None);
            assert!(
                matches!(err, Err(Error::InvalidParameter { .. })),
                "{hostile}"
            );
        }
        for (client_id, state) in [("", None), ("id", Some(""))] {
            let err = authorization_url("http://127.0.0.1", client_id, None, None, state);
            assert!(matches!(err, Err(Error::InvalidParameter { .. })));
        }
    }

    #[test]
    fn redirect_with_code_and_matching_state() {
        let code = parse_redirect(
            "http://127.0.0.1:5000/callback?code=a%2Bb+c&state=xyz",
            "xyz",
        )
        .unwrap();
        assert_eq!(code.expose(), "a+b c");
        let code = parse_redirect("?state=xyz&code=k", "xyz").unwrap();
        assert_eq!(code.expose(), "k");
    }

    #[test]
    fn redirect_state_must_match() {
        for redirect in [
            "http://127.0.0.1/cb?code=k&state=other",
            "http://127.0.0.1/cb?code=k",
            "http://127.0.0.1/cb?code=k&state=xy",
        ] {
            assert!(matches!(
                parse_redirect(redirect, "xyz"),
                Err(Error::StateMismatch)
            ));
        }
        assert!(matches!(
            parse_redirect("code=k&state=", ""),
            Err(Error::StateMismatch)
        ));
    }

    #[test]
    fn redirect_error_wins_and_needs_no_state() {
        let err = parse_redirect(
            "http://127.0.0.1/cb?error=unauthorized_client&error_description=User+has+rejected+the+request",
            "xyz",
        )
        .unwrap_err();
        match err {
            Error::AuthorizationFailed(body) => {
                assert_eq!(body.error, "unauthorized_client");
                assert_eq!(
                    body.description.as_deref(),
                    Some("User has rejected the request")
                );
            }
            other => panic!("unexpected {other:?}"),
        }
        let err = parse_redirect("http://127.0.0.1/cb?state=xyz", "xyz").unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { .. }));
    }
}
