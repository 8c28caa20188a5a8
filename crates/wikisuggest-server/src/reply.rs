//! JSON replies written like the link service's Flask `jsonify`: keys sorted (serde_json's
//! default map is ordered), compact separators, raw UTF-8, and a trailing newline.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;

pub fn json_response<T: Serialize + ?Sized>(status: StatusCode, value: &T) -> Response {
    // Going through `Value` sorts the keys of structs too.
    match serde_json::to_value(value) {
        Ok(value) => value_response(status, &value),
        Err(err) => {
            log::error!("cannot serialise a reply: {err}");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// [`json_response`] of a reply already made a [`Value`] (its maps' keys are sorted).
pub fn value_response(status: StatusCode, value: &Value) -> Response {
    match serde_json::to_vec(value) {
        Ok(mut body) => {
            body.push(b'\n');
            let mut response = (status, body).into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(err) => {
            log::error!("cannot serialise a reply: {err}");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}
