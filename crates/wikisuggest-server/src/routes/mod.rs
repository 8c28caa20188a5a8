//! The router: service routes behind the gateway, OAuth and operational routes beside it.

mod health;
mod link;
mod oauth;
pub mod openapi;
mod translation;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::middleware;
use axum::routing::{get, post};
use tower_http::timeout::TimeoutLayer;

use crate::error::{ApiError, Challenge};
use crate::gateway::gateway;
use crate::paths::{AUTHORIZE_PATH, TOKEN_PATH, TRANSLATION_PATH};
use crate::state::SharedState;

pub fn router(state: SharedState) -> Router {
    let services = Router::new()
        .route(
            "/service/linkrecommendation/v1/linkrecommendations/{project}/{domain}/{*page_title}",
            get(link::get_links).post(link::post_links),
        )
        .route(TRANSLATION_PATH, get(translation::translation))
        .route(
            &format!("{TRANSLATION_PATH}/page-collections"),
            get(translation::page_collections),
        )
        .route(
            &format!("{TRANSLATION_PATH}/page-collection-groups"),
            get(translation::page_collection_groups),
        )
        .route(
            &format!("{TRANSLATION_PATH}/page-collection-membership"),
            get(translation::page_collection_membership),
        )
        .route_layer(middleware::from_fn_with_state(state.clone(), gateway));
    let timeout = state.config.request_timeout;
    let body_limit = state.config.max_body_bytes;
    Router::new()
        .merge(services)
        .route(AUTHORIZE_PATH, get(oauth::authorize).post(oauth::authorize))
        .route(TOKEN_PATH, post(oauth::access_token))
        .route("/healthz", get(health::healthz))
        .route("/openapi.json", get(openapi::openapi))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::Gateway {
        status: StatusCode::NOT_FOUND,
        reason: "Not Found",
        challenge: Challenge::None,
    }
}

async fn method_not_allowed() -> ApiError {
    ApiError::Gateway {
        status: StatusCode::METHOD_NOT_ALLOWED,
        reason: "Method Not Allowed",
        challenge: Challenge::None,
    }
}
