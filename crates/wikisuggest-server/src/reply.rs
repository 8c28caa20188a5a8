//! JSON replies written like the link service's Flask `jsonify`: keys sorted (serde_json's
//! default map is ordered), compact separators, raw UTF-8, and a trailing newline.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

pub fn json_response<T: Serialize + ?Sized>(status: StatusCode, value: &T) -> Response {
    // Going through `Value` sorts the keys of structs too.
    let bytes = serde_json::to_value(value).and_then(|v| serde_json::to_vec(&v));
    match bytes {
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
