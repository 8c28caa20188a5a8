//! Requests to the token endpoint, `POST {auth_url}/w/rest.php/oauth2/access_token`, and the
//! parsing of its answer.
//!
//! The body is always `application/x-www-form-urlencoded` (MediaWiki answers anything else,
//! multipart included, with 415) and credentials travel in it rather than in a Basic header,
//! which MediaWiki accepts equally and which keeps them out of any header logging.

use serde_json::Value;

use super::pkce::check_verifier;
use super::token::Token;
use crate::client::{Client, RawResponse};
use crate::encode::Query;
use crate::error::{Error, Result};
use crate::secret::Secret;

/// One token request.
#[derive(Debug, Clone)]
pub enum Grant {
    /// App authentication; renewed by asking again.
    ClientCredentials {
        client_id: String,
        client_secret: Secret,
    },
    /// The code from an authorization redirect. Public clients send no secret but must send
    /// the PKCE verifier.
    AuthorizationCode {
        code: Secret,
        client_id: String,
        client_secret: Option<Secret>,
        code_verifier: Option<Secret>,
        redirect_uri: Option<String>,
    },
    /// Exchange a refresh token for a new pair (the server rotates the refresh token).
    RefreshToken {
        refresh_token: Secret,
        client_id: String,
        client_secret: Option<Secret>,
    },
}

fn required(name: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::invalid(name, "must not be empty"));
    }
    Ok(())
}

impl Grant {
    pub fn grant_type(&self) -> &'static str {
        match self {
            Self::ClientCredentials { .. } => "client_credentials",
            Self::AuthorizationCode { .. } => "authorization_code",
            Self::RefreshToken { .. } => "refresh_token",
        }
    }

    /// The grant's fields in the order the form carries them, each with its value (`None`
    /// for an optional one not given).
    fn fields(&self) -> Vec<(&'static str, Option<&str>)> {
        match self {
            Self::ClientCredentials {
                client_id,
                client_secret,
            } => vec![
                ("client_id", Some(client_id.as_str())),
                ("client_secret", Some(client_secret.expose())),
            ],
            Self::AuthorizationCode {
                code,
                client_id,
                client_secret,
                code_verifier,
                redirect_uri,
            } => vec![
                ("code", Some(code.expose())),
                ("client_id", Some(client_id.as_str())),
                ("client_secret", client_secret.as_ref().map(Secret::expose)),
                ("code_verifier", code_verifier.as_ref().map(Secret::expose)),
                ("redirect_uri", redirect_uri.as_deref()),
            ],
            Self::RefreshToken {
                refresh_token,
                client_id,
                client_secret,
            } => vec![
                ("refresh_token", Some(refresh_token.expose())),
                ("client_id", Some(client_id.as_str())),
                ("client_secret", client_secret.as_ref().map(Secret::expose)),
            ],
        }
    }

    /// Reject what the server would reject anyway, before a request is spent on it: a
    /// field given empty (or blank), a PKCE verifier of the wrong form.
    pub fn validate(&self) -> Result<()> {
        for (name, value) in self.fields() {
            match value {
                Some(verifier) if name == "code_verifier" => check_verifier(name, verifier)?,
                Some(value) => required(name, value)?,
                None => {}
            }
        }
        Ok(())
    }

    /// The form body.
    pub fn form(&self) -> Query {
        let mut form = Query::new();
        form.push("grant_type", self.grant_type());
        for (name, value) in self.fields() {
            form.push_some(name, value);
        }
        form
    }
}

/// Send `grant` to the token endpoint of `client` and return the token it grants. Error
/// responses become [`Error::Http`] with the OAuth body parsed (the client's error mapping).
pub async fn request_token(client: &Client, grant: &Grant) -> Result<Token> {
    grant.validate()?;
    let request = client.prepare_token_request(&grant.form())?;
    let response = client.execute(&request).await?;
    parse_token_response(&response)
}

/// A 2xx answer of the token endpoint as a [`Token`]. A body without a usable `access_token`
/// is a decode error, never a token: some servers (and proxies) answer 200 with an error
/// object. The body is not quoted in the error because it may hold tokens.
pub fn parse_token_response(response: &RawResponse) -> Result<Token> {
    let decode_error = |message: String| Error::Decode {
        url: response.url.clone(),
        status: response.status,
        message: response.redactor.text(&message),
        snippet: String::new(),
    };
    let body: Value = serde_json::from_slice(&response.body)
        .map_err(|e| decode_error(format!("the token response is not JSON ({e})")))?;
    let Some(object) = body.as_object() else {
        return Err(decode_error(
            "the token response is not a JSON object".to_owned(),
        ));
    };
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let Some(access_token) = text("access_token") else {
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        keys.sort_unstable();
        return Err(decode_error(format!(
            "the token response has no access_token (keys: {})",
            keys.join(", ")
        )));
    };
    let token_type = text("token_type").unwrap_or("Bearer");
    if !token_type.eq_ignore_ascii_case("bearer") {
        return Err(decode_error(format!(
            "unsupported token_type {token_type:?}; only Bearer tokens can be used"
        )));
    }
    let expires_in = match object.get("expires_in") {
        None | Some(Value::Null) => None,
        Some(value) => Some(lifetime(value).ok_or_else(|| {
            decode_error(format!("expires_in is not a number of seconds: {value}"))
        })?),
    };
    Ok(Token::received(
        "Bearer".to_owned(),
        Secret::new(access_token),
        text("refresh_token").map(Secret::new),
        expires_in,
    ))
}

/// `expires_in` as whole seconds; numbers and numeric strings are accepted, negative values
/// mean "already expired".
fn lifetime(value: &Value) -> Option<u64> {
    let secs = match value {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    secs.is_finite().then(|| secs.max(0.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(body: &str) -> RawResponse {
        RawResponse {
            status: 200,
            body: body.as_bytes().to_vec(),
            url: "http://127.0.0.1/w/rest.php/oauth2/access_token".into(),
            redactor: Default::default(),
        }
    }

    #[test]
    fn forms_per_grant() {
        let g = Grant::ClientCredentials {
            client_id: "id".into(),
            client_secret: Secret::new("s&cret"),
        };
        assert_eq!(
            g.form().encode(),
            "grant_type=client_credentials&client_id=id&client_secret=s%26cret"
        );
        let g = Grant::AuthorizationCode {
            code: Secret::new("c"),
            client_id: "id".into(),
            client_secret: None,
            code_verifier: Some(Secret::new("v".repeat(43))),
            redirect_uri: Some("http://127.0.0.1:1/cb".into()),
        };
        assert_eq!(
            g.form().encode(),
            format!(
                "grant_type=authorization_code&code=c&client_id=id&code_verifier={}&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb",
                "v".repeat(43)
            )
        );
        let g = Grant::RefreshToken {
            refresh_token: Secret::new("r"),
            client_id: "id".into(),
            client_secret: Some(Secret::new("s")),
        };
        assert_eq!(
            g.form().encode(),
            "grant_type=refresh_token&refresh_token=r&client_id=id&client_secret=s"
        );
        assert!(!format!("{g:?}").contains("\"r\""));
    }

    #[test]
    fn validation() {
        let bad = [
            Grant::ClientCredentials {
                client_id: " ".into(),
                client_secret: Secret::new("s"),
            },
            Grant::ClientCredentials {
                client_id: "id".into(),
                client_secret: Secret::new(""),
            },
            Grant::AuthorizationCode {
                code: Secret::new("c"),
                client_id: "id".into(),
                client_secret: None,
                code_verifier: Some(Secret::new("too-short")),
                redirect_uri: None,
            },
            Grant::RefreshToken {
                refresh_token: Secret::new(""),
                client_id: "id".into(),
                client_secret: None,
            },
        ];
        for grant in bad {
            assert!(matches!(
                grant.validate(),
                Err(Error::InvalidParameter { .. })
            ));
        }
    }

    #[test]
    fn parses_token_responses() {
        let t = parse_token_response(&response(
            r#"{"token_type":"Bearer","expires_in":14399,"access_token":"a.b.c","refresh_token":"r1"}"#,
        ))
        .unwrap();
        assert_eq!(t.access_token.expose(), "a.b.c");
        assert_eq!(t.refresh_token.unwrap().expose(), "r1");
        assert_eq!(t.expires_in, Some(14399));
        let t = parse_token_response(&response(
            r#"{"token_type":"bearer","expires_in":"60","access_token":"x"}"#,
        ))
        .unwrap();
        assert_eq!(t.refresh_token, None);
        assert_eq!(t.expires_in, Some(60));
    }

    #[test]
    fn absurd_expires_in_saturates() {
        for value in [
            "1e19",
            "1e20",
            "18446744073709551615",
            "1.7e308",
            "\"99999999999999999999999\"",
        ] {
            let body = format!(r#"{{"access_token":"x","expires_in":{value}}}"#);
            let t = parse_token_response(&response(&body)).unwrap();
            assert_eq!(
                t.expires_in,
                Some(crate::oauth::token::MAX_LIFETIME_SECS),
                "{value}"
            );
            assert!(t.expires_at().is_some());
            let _ = t.to_stored();
        }
    }

    #[test]
    fn success_without_access_token_is_a_decode_error() {
        for body in [
            r#"{"error":"invalid_grant","refresh_token":"SECRET-RT"}"#,
            r#"{"access_token":""}"#,
            "[1]",
            "<html>",
            r#"{"access_token":"x","token_type":"mac"}"#,
            r#"{"access_token":"x","expires_in":"soon"}"#,
        ] {
            let err = parse_token_response(&response(body)).unwrap_err();
            assert!(matches!(err, Error::Decode { .. }), "{body}");
            assert!(!err.to_string().contains("SECRET-RT"), "{err}");
        }
    }
}
