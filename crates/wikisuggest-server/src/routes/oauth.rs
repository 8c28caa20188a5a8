//! Operations 4 and 5: the token endpoint and the authorization endpoint. There is no user
//! interface: the local server acts for one signed-in user who approves every request.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::error::{ApiError, no_store};
use crate::oauth::Client;
use crate::oauth::pkce::{self, Method};
use crate::reply::json_response;
use crate::state::SharedState;

type Params = HashMap<String, String>;

fn parse_form(bytes: &[u8]) -> Params {
    // On repeats the first value wins.
    let mut params = Params::new();
    for (k, v) in form_urlencoded::parse(bytes) {
        params
            .entry(k.into_owned())
            .or_insert_with(|| v.into_owned());
    }
    params
}

fn param<'a>(params: &'a Params, name: &str) -> Option<&'a str> {
    params
        .get(name)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

fn scopes(value: Option<&str>) -> Vec<String> {
    let list: Vec<String> = value
        .unwrap_or_default()
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if list.is_empty() {
        vec!["basic".to_owned()]
    } else {
        list
    }
}

/// `GET|POST /w/rest.php/oauth2/authorize` (A.1). Errors found before the redirect URI is
/// trusted are an HTML page; later ones are redirected with `error` in the query.
pub async fn authorize(State(state): State<SharedState>, RawQuery(raw): RawQuery) -> Response {
    let params = parse_form(raw.unwrap_or_default().as_bytes());
    let Some(client) = param(&params, "client_id").and_then(|id| state.clients.get(id)) else {
        return error_page(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client authentication failed",
        );
    };
    let Some(redirect) = client.redirect_uri(param(&params, "redirect_uri")) else {
        return error_page(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "The redirect URI does not match a registered one",
        );
    };
    let state_param = param(&params, "state");
    match authorize_checks(client, &params) {
        Ok(challenge) => {
            let code = state.tokens.issue_code(
                &client.id,
                param(&params, "redirect_uri").map(str::to_owned),
                scopes(param(&params, "scope")),
                challenge,
            );
            match code {
                Ok(code) => {
                    let mut query = vec![("code", code.as_str())];
                    query.extend(state_param.map(|s| ("state", s)));
                    redirect_to(&redirect, &query)
                }
                Err(err) => err.into_response(),
            }
        }
        Err((error, description)) => {
            let mut query = vec![("error", error), ("error_description", description)];
            query.extend(state_param.map(|s| ("state", s)));
            redirect_to(&redirect, &query)
        }
    }
}

type Challenge = Option<(String, Method)>;

fn authorize_checks(
    client: &Client,
    params: &Params,
) -> Result<Challenge, (&'static str, &'static str)> {
    if param(params, "response_type") != Some("code") {
        return Err((
            "unsupported_response_type",
            "The authorization server does not support this response type",
        ));
    }
    if !client.allows("authorization_code") {
        return Err((
            "unauthorized_client",
            "The client may not use the authorization code grant",
        ));
    }
    match param(params, "code_challenge") {
        None if !client.is_confidential() => Err((
            "invalid_request",
            "Code challenge must be provided for public clients",
        )),
        None => Ok(None),
        Some(challenge) => {
            let method = Method::parse(param(params, "code_challenge_method")).ok_or((
                "invalid_request",
                "Code challenge method must be one of `plain` or `S256`",
            ))?;
            if !pkce::well_formed(challenge) {
                return Err((
                    "invalid_request",
                    "Code challenge must follow the specifications of RFC-7636.",
                ));
            }
            Ok(Some((challenge.to_owned(), method)))
        }
    }
}

fn redirect_to(uri: &str, query: &[(&str, &str)]) -> Response {
    let encoded = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(query)
        .finish();
    let separator = if uri.contains('?') { '&' } else { '?' };
    let location = format!("{uri}{separator}{encoded}");
    match HeaderValue::from_str(&location) {
        Ok(value) => {
            let mut response = StatusCode::FOUND.into_response();
            response.headers_mut().insert(header::LOCATION, value);
            response
        }
        Err(_) => error_page(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Invalid redirect URI",
        ),
    }
}

fn error_page(status: StatusCode, error: &str, description: &str) -> Response {
    let page = format!(
        "<!DOCTYPE html><html><head><title>Error</title></head><body>\
         <h1>{error}</h1><p>{description}</p></body></html>"
    );
    (status, Html(page)).into_response()
}

/// `POST /w/rest.php/oauth2/access_token` (A.2).
pub async fn access_token(
    State(state): State<SharedState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| {
            v.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        });
    if !form {
        return Err(ApiError::UnsupportedContentType);
    }
    let params = parse_form(&body);
    let grant =
        param(&params, "grant_type").ok_or_else(|| ApiError::invalid_request("grant_type"))?;
    if !matches!(
        grant,
        "client_credentials" | "authorization_code" | "refresh_token"
    ) {
        return Err(ApiError::oauth(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "The authorization grant type is not supported by the authorization server.",
        )
        .with_hint("Check that all required parameters have been provided"));
    }
    let client = authenticate(&state, &headers, &params)?;
    if !client.allows(grant) {
        return Err(ApiError::invalid_client());
    }
    let issued = match grant {
        "client_credentials" => {
            if !client.is_confidential() {
                return Err(ApiError::invalid_client());
            }
            let scopes = scopes(param(&params, "scope"));
            state.tokens.issue(&client.id, &scopes, grant, false)?
        }
        "authorization_code" => {
            let code = param(&params, "code").ok_or_else(|| ApiError::invalid_request("code"))?;
            let scopes = state.tokens.redeem_code(
                code,
                &client.id,
                param(&params, "redirect_uri"),
                param(&params, "code_verifier"),
            )?;
            state.tokens.issue(&client.id, &scopes, grant, true)?
        }
        _ => {
            let token = param(&params, "refresh_token")
                .ok_or_else(|| ApiError::invalid_request("refresh_token"))?;
            let requested = param(&params, "scope").map(|s| scopes(Some(s)));
            state.tokens.refresh(token, &client.id, requested)?
        }
    };
    log::info!("issued a {grant} token to client {}", client.id);
    let mut response = json_response(StatusCode::OK, &issued);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=UTF-8"),
    );
    no_store(&mut response);
    Ok(response)
}

/// The client, from `client_id`/`client_secret` in the body or HTTP Basic.
fn authenticate<'a>(
    state: &'a SharedState,
    headers: &HeaderMap,
    params: &Params,
) -> Result<&'a Client, ApiError> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| STANDARD.decode(b.trim()).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.split_once(':').map(|(a, b)| (a.to_owned(), b.to_owned())));
    let (id, secret) = match &basic {
        Some((id, secret)) => (Some(id.as_str()), Some(secret.as_str())),
        None => (param(params, "client_id"), param(params, "client_secret")),
    };
    let id = id.ok_or_else(|| ApiError::invalid_request("client_id"))?;
    let client = state.clients.get(id).ok_or_else(ApiError::invalid_client)?;
    if client.is_confidential() {
        let secret = secret.ok_or_else(|| ApiError::invalid_request("client_secret"))?;
        if !client.secret_matches(secret) {
            return Err(ApiError::invalid_client());
        }
    }
    Ok(client)
}
