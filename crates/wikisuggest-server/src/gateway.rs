//! What the API gateway does in front of the services (Wikimedia's API gateway): a bearer
//! token that is present must be valid on every route, POST link recommendations require
//! one, and each app (or anonymous User-Agent) has its own rate limit.

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::{ApiError, Challenge};
use crate::link::slots::AppKey;
use crate::oauth::TokenError;
use crate::paths::LINK_PREFIX;
use crate::state::SharedState;

pub async fn gateway(
    State(state): State<SharedState>,
    mut request: Request,
    next: Next,
) -> Response {
    match admit(&state, &request) {
        Ok(app) => {
            // The routes share the engine's slots fairly between apps (`link::slots`).
            request.extensions_mut().insert(app);
            next.run(request).await
        }
        Err(err) => {
            log::info!(
                "gateway refused {} {}: {}",
                request.method(),
                request.uri().path(),
                err.status()
            );
            err.into_response()
        }
    }
}

fn unauthorized(reason: &'static str, challenge: Challenge) -> ApiError {
    ApiError::Gateway {
        status: StatusCode::UNAUTHORIZED,
        reason,
        challenge,
    }
}

/// Checks the token and the rate limit; the app the request counts against.
fn admit(state: &SharedState, request: &Request) -> Result<AppKey, ApiError> {
    let headers = request.headers();
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        });
    let limits = &state.config.rate_limits;
    let (key, per_minute, app) = match token {
        Some(token) => {
            if let Some(personal) = state.clients.personal(token) {
                let name = personal.name.as_deref().unwrap_or("unnamed");
                let key = format!("personal:{name}");
                (key.clone(), limits.authenticated_per_minute, key)
            } else {
                let bearer = state.tokens.verify(token).map_err(|e| match e {
                    TokenError::Expired => unauthorized("Jwt is expired", Challenge::InvalidToken),
                    TokenError::Invalid => {
                        unauthorized("Jwt verification fails", Challenge::InvalidToken)
                    }
                })?;
                let per_minute = state
                    .clients
                    .get(&bearer.client_id)
                    .and_then(|c| c.rate_limit_per_minute)
                    .unwrap_or(limits.authenticated_per_minute);
                let key = format!("client:{}", bearer.client_id);
                (key.clone(), per_minute, key)
            }
        }
        None => {
            if request.method() == Method::POST && request.uri().path().starts_with(LINK_PREFIX) {
                return Err(unauthorized("Jwt is missing", Challenge::Bearer));
            }
            let agent = headers
                .get(header::USER_AGENT)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default();
            // A User-Agent costs nothing to change: anonymous requests share engine slots
            // by client address where it is known.
            let app = match crate::accept::peer(request) {
                Some(ip) => format!("address:{}", crate::connections::client_key(ip)),
                None => format!("ua:{agent}"),
            };
            (format!("ua:{agent}"), limits.anonymous_per_minute, app)
        }
    };
    state
        .limiter
        .check(&key, per_minute)
        .map_err(|retry_after| ApiError::TooManyRequests { retry_after })?;
    Ok(AppKey::new(app))
}
