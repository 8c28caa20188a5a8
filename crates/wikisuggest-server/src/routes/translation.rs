//! Operation 3, `GET /service/lw/recommendation/api/v1/translation`, and the routes beside
//! it: `/translation/page-collections`, `/translation/page-collection-groups` and
//! `/translation/page-collection-membership`.

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;

use crate::config::TranslationShape;
use crate::error::ApiError;
use crate::reply::json_response;
use crate::state::SharedState;
use crate::translation::{TranslationQuery, collections, recommend};

pub async fn translation(
    State(state): State<SharedState>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let raw = raw.unwrap_or_default();
    let query = TranslationQuery::parse(&raw, &state.translation).map_err(ApiError::Validation)?;
    // With a configured seed, one query always gets the same order (tests); without, each
    // request is shuffled anew, as in production.
    let shuffle_seed = match state.config.seed {
        Some(seed) => seed ^ fnv1a(raw.as_bytes()),
        None => fastrand::u64(..),
    };
    let worker = state.clone();
    let outcome =
        tokio::task::spawn_blocking(move || recommend(&worker.translation, &query, shuffle_seed))
            .await
            .map_err(|e| ApiError::Internal(format!("the translation task failed: {e}")))?;
    let body = match state.config.translation_shape {
        TranslationShape::Array => outcome.array(),
        TranslationShape::Envelope => outcome.envelope(),
    };
    Ok(json_response(StatusCode::OK, &body))
}

pub async fn page_collections(State(state): State<SharedState>) -> Response {
    json_response(StatusCode::OK, &collections::list(&state.translation))
}

pub async fn page_collection_groups(State(state): State<SharedState>) -> Response {
    json_response(StatusCode::OK, &collections::groups(&state.translation))
}

pub async fn page_collection_membership(
    State(state): State<SharedState>,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let raw = raw.unwrap_or_default();
    let answer = collections::membership(&state.translation, &raw).map_err(ApiError::Validation)?;
    Ok(json_response(StatusCode::OK, &answer))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
