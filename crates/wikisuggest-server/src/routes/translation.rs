//! Operation 3: `GET /service/lw/recommendation/api/v1/translation`.

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;

use crate::error::ApiError;
use crate::reply::json_response;
use crate::state::SharedState;
use crate::translation::{TranslationQuery, recommend};

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
    let items = recommend(&state.translation, &query, shuffle_seed);
    Ok(json_response(StatusCode::OK, &items))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
