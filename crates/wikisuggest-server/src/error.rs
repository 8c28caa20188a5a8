//! Start-up errors, and the error replies of the HTTP routes. Each reply kind keeps the body
//! shape of the component that produces it in production (link service, translation service,
//! MediaWiki REST, OAuth server, gateway).

use std::path::PathBuf;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::reply::json_response;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot bind {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    Input { path: PathBuf, reason: String },
    #[error("dataset of {wiki_id}: {source}")]
    Dataset {
        wiki_id: String,
        source: wikisuggest_engine::Error,
    },
    #[error("server task failed: {0}")]
    Runtime(String),
}

impl Error {
    pub(crate) fn input(path: &std::path::Path, reason: impl std::fmt::Display) -> Self {
        Self::Input {
            path: path.to_owned(),
            reason: reason.to_string(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The realm named in `WWW-Authenticate` challenges.
pub const REALM: &str = "wikisuggest";

/// The `WWW-Authenticate` header of a gateway reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Challenge {
    None,
    /// No token where one is required.
    Bearer,
    /// A token was sent but is expired or does not verify.
    InvalidToken,
}

/// An error reply of a route.
#[derive(Debug, Clone, PartialEq)]
pub enum ApiError {
    /// Link service: `{"message": …}` plus optional extra fields.
    Message {
        status: StatusCode,
        body: Value,
    },
    /// Translation service: FastAPI's `{"detail": [...]}` with status 422.
    Validation(Vec<Value>),
    /// OAuth 2.0 error (`error`, `error_description`, `hint`).
    OAuth {
        status: StatusCode,
        error: &'static str,
        description: String,
        hint: Option<String>,
    },
    /// MediaWiki REST error (415 `rest-unsupported-content-type`).
    UnsupportedContentType,
    /// Gateway local reply `{"httpCode", "httpReason"}`.
    Gateway {
        status: StatusCode,
        reason: &'static str,
        challenge: Challenge,
    },
    /// Gateway rate limit: text body, `Retry-After` in whole seconds.
    TooManyRequests {
        retry_after: u64,
    },
    /// A passing condition (a dataset being opened again, an upstream wiki failing):
    /// `{"message": …}` with `status` (502, 503, 504) and `Retry-After` in whole seconds.
    Unavailable {
        status: StatusCode,
        message: String,
        retry_after: Option<u64>,
    },
    Internal(String),
}

impl ApiError {
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::Message {
            status: StatusCode::BAD_REQUEST,
            body: json!({ "message": message.into() }),
        }
    }

    pub fn oauth(status: StatusCode, error: &'static str, description: impl Into<String>) -> Self {
        Self::OAuth {
            status,
            error,
            description: description.into(),
            hint: None,
        }
    }

    pub fn with_hint(self, text: impl Into<String>) -> Self {
        match self {
            Self::OAuth {
                status,
                error,
                description,
                ..
            } => Self::OAuth {
                status,
                error,
                description,
                hint: Some(text.into()),
            },
            other => other,
        }
    }

    /// `invalid_request` for a missing or malformed form field.
    pub fn invalid_request(field: &str) -> Self {
        Self::oauth(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "The request is missing a required parameter, includes an invalid parameter value, \
             includes a parameter more than once, or is otherwise malformed.",
        )
        .with_hint(format!("Check the `{field}` parameter"))
    }

    pub fn invalid_client() -> Self {
        Self::oauth(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client authentication failed",
        )
    }

    pub fn invalid_grant(description: &str, hint: &str) -> Self {
        Self::oauth(StatusCode::BAD_REQUEST, "invalid_grant", description).with_hint(hint)
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::Message { status, .. }
            | Self::OAuth { status, .. }
            | Self::Gateway { status, .. }
            | Self::Unavailable { status, .. } => *status,
            Self::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::UnsupportedContentType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        match self {
            Self::Message { body, .. } => json_response(status, &body),
            Self::Validation(detail) => json_response(status, &json!({ "detail": detail })),
            Self::OAuth {
                error,
                description,
                hint,
                ..
            } => {
                let mut body = json!({ "error": error, "error_description": description });
                if let (Some(hint), Some(map)) = (hint, body.as_object_mut()) {
                    map.insert("hint".into(), Value::String(hint));
                }
                let mut response = json_response(status, &body);
                no_store(&mut response);
                response
            }
            Self::UnsupportedContentType => json_response(
                status,
                &json!({
                    "errorKey": "rest-unsupported-content-type",
                    "messageTranslations": {
                        "en": "The request content type is not supported; send \
                               application/x-www-form-urlencoded."
                    },
                    "httpCode": 415,
                    "httpReason": "Unsupported Media Type",
                }),
            ),
            Self::Gateway {
                reason, challenge, ..
            } => {
                let mut response = json_response(
                    status,
                    &json!({ "httpCode": status.as_u16(), "httpReason": reason }),
                );
                let value = match challenge {
                    Challenge::None => None,
                    Challenge::Bearer => Some(format!("Bearer realm=\"{REALM}\"")),
                    Challenge::InvalidToken => {
                        Some(format!("Bearer realm=\"{REALM}\", error=\"invalid_token\""))
                    }
                };
                if let Some(value) = value
                    && let Ok(value) = HeaderValue::from_str(&value)
                {
                    response
                        .headers_mut()
                        .insert(header::WWW_AUTHENTICATE, value);
                }
                response
            }
            Self::TooManyRequests { retry_after } => {
                let body = "Too many requests: this client exceeded its rate limit. \
                            Wait for the time given in Retry-After, then retry.\n";
                let mut response = (status, body).into_response();
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
                response
            }
            Self::Unavailable {
                message,
                retry_after,
                ..
            } => {
                let mut response = json_response(status, &json!({ "message": message }));
                if let Some(seconds) = retry_after {
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
                }
                response
            }
            Self::Internal(detail) => {
                log::error!("internal error: {detail}");
                json_response(
                    status,
                    &json!({ "message": "The server encountered an internal error." }),
                )
            }
        }
    }
}

/// Token replies must never be cached (RFC 6749 §5.1).
pub fn no_store(response: &mut Response) {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}
