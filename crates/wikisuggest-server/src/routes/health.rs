//! Liveness: 200 with an empty body, as the link service answers.

use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

pub async fn healthz() -> impl IntoResponse {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        "",
    )
}
