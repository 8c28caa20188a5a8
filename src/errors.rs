//! The single mapping from core and engine errors to the Python exception tree declared in
//! `python/wikisuggest/errors.py`. Nothing here inspects message text: the class is chosen
//! from the error's variant and, for HTTP errors, from the kind the core decided.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule};
use pythonize::pythonize;
use wikisuggest_core::Error;
use wikisuggest_core::http_error::{HttpError, HttpErrorKind, OAuthErrorBody};
use wikisuggest_engine::{Error as EngineError, TextError};

pyo3::import_exception!(wikisuggest.errors, WikisuggestError);

static ERRORS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

pub fn wikisuggest_error(message: &str) -> PyErr {
    WikisuggestError::new_err(message.to_owned())
}

/// An `InvalidParameter` naming `parameter`, raised before any work starts.
pub fn invalid_parameter(parameter: &str, message: &str) -> PyErr {
    Python::attach(|py| {
        let kwargs = PyDict::new(py);
        kwargs.set_item("parameter", parameter)?;
        instantiate(
            py,
            "InvalidParameter",
            &format!("{parameter}: {message}"),
            &kwargs,
        )
    })
    .unwrap_or_else(|conversion_failure| conversion_failure)
}

/// Convert a local engine error into the matching Python exception.
pub fn engine_error(py: Python<'_>, error: &EngineError) -> PyErr {
    build_engine(py, error).unwrap_or_else(|conversion_failure| conversion_failure)
}

fn build_engine(py: Python<'_>, error: &EngineError) -> PyResult<PyErr> {
    let kwargs = PyDict::new(py);
    let class = match error {
        EngineError::Text(TextError::UnsupportedLanguage { language }) => {
            kwargs.set_item("language", language)?;
            "UnsupportedLanguage"
        }
        EngineError::Text(_) => "WikitextError",
        EngineError::InvalidArgument(_) => "InvalidParameter",
        _ => "DatasetError",
    };
    instantiate(py, class, &error.to_string(), &kwargs)
}

/// Convert a core error into the matching Python exception, with its attributes set.
pub fn core_error(py: Python<'_>, error: Error) -> PyErr {
    build(py, &error).unwrap_or_else(|conversion_failure| conversion_failure)
}

fn build(py: Python<'_>, error: &Error) -> PyResult<PyErr> {
    let kwargs = PyDict::new(py);
    let class = match error {
        Error::InvalidParameter { name, .. } => {
            kwargs.set_item("parameter", name)?;
            "InvalidParameter"
        }
        Error::Config(_) => "ConfigurationError",
        Error::Http(http) => {
            fill_http(py, &kwargs, http)?;
            http_class(http)
        }
        Error::Timeout { url, .. } => {
            kwargs.set_item("url", url)?;
            "Timeout"
        }
        Error::Transport { url, .. } => {
            kwargs.set_item("url", url)?;
            "TransportError"
        }
        Error::ResponseTooLarge { url, limit } => {
            kwargs.set_item("url", url)?;
            kwargs.set_item("limit", limit)?;
            "ResponseTooLarge"
        }
        Error::Decode {
            url,
            status,
            snippet,
            ..
        } => {
            kwargs.set_item("url", url)?;
            kwargs.set_item("status", status)?;
            kwargs.set_item("snippet", snippet)?;
            "DecodeError"
        }
        Error::ReauthorizationRequired(_) => "ReauthorizationRequired",
        Error::StateMismatch => "StateMismatch",
        Error::AuthorizationFailed(body) => {
            fill_oauth(&kwargs, body)?;
            oauth_class(&body.error)
        }
        Error::Api { code, .. } => {
            kwargs.set_item("code", code)?;
            "MediaWikiError"
        }
        Error::EditConflict { title, baserevid } => {
            kwargs.set_item("title", title)?;
            kwargs.set_item("baserevid", baserevid)?;
            "EditConflict"
        }
        Error::Internal(_) => "WikisuggestError",
    };
    instantiate(py, class, &error.to_string(), &kwargs)
}

fn instantiate(
    py: Python<'_>,
    class: &str,
    message: &str,
    kwargs: &Bound<'_, PyDict>,
) -> PyResult<PyErr> {
    let module = ERRORS_MODULE.get_or_try_init(py, || {
        PyModule::import(py, "wikisuggest.errors").map(Bound::unbind)
    })?;
    let cls = module.bind(py).getattr(class)?;
    let instance = cls.call((message,), Some(kwargs))?;
    Ok(PyErr::from_value(instance))
}

fn http_class(http: &HttpError) -> &'static str {
    match http.kind {
        HttpErrorKind::Unauthorized => "Unauthorized",
        HttpErrorKind::ReadDenied => "ReadDenied",
        HttpErrorKind::UnsupportedDomain => "UnsupportedDomain",
        HttpErrorKind::NotFound => "NotFound",
        HttpErrorKind::UnsupportedMediaType => "UnsupportedMediaType",
        HttpErrorKind::UnprocessableEntity => "UnprocessableEntity",
        HttpErrorKind::RateLimited => "RateLimited",
        HttpErrorKind::ServerError => "ServerError",
        HttpErrorKind::OAuth => oauth_class(http.oauth.as_ref().map_or("", |o| o.error.as_str())),
        HttpErrorKind::Other => "HTTPError",
    }
}

/// The exception class for an OAuth 2.0 `error` code (token endpoint or authorize redirect).
fn oauth_class(error: &str) -> &'static str {
    match error {
        "invalid_client" => "InvalidClient",
        "invalid_grant" => "InvalidGrant",
        "invalid_request" => "InvalidRequest",
        "invalid_scope" => "InvalidScope",
        "unsupported_grant_type" => "UnsupportedGrantType",
        "unauthorized_client" => "UnauthorizedClient",
        "access_denied" => "AccessDenied",
        _ => "OAuthError",
    }
}

fn fill_oauth(kwargs: &Bound<'_, PyDict>, oauth: &OAuthErrorBody) -> PyResult<()> {
    kwargs.set_item("error", &oauth.error)?;
    kwargs.set_item("error_description", &oauth.description)?;
    kwargs.set_item("hint", &oauth.hint)
}

fn fill_http(py: Python<'_>, kwargs: &Bound<'_, PyDict>, http: &HttpError) -> PyResult<()> {
    kwargs.set_item("status", http.status)?;
    kwargs.set_item("reason", &http.reason)?;
    kwargs.set_item("method", &http.method)?;
    kwargs.set_item("url", &http.url)?;
    let body = match &http.body {
        Some(body) => pythonize(py, body)?.unbind(),
        None => py.None(),
    };
    kwargs.set_item("body", body)?;
    kwargs.set_item("retry_after", http.retry_after.map(|d| d.as_secs_f64()))?;
    kwargs.set_item("request_id", &http.request_id)?;
    kwargs.set_item("www_authenticate", &http.www_authenticate)?;
    kwargs.set_item("detail", &http.detail)?;
    kwargs.set_item("error_key", &http.error_key)?;
    if let Some(oauth) = &http.oauth {
        fill_oauth(kwargs, oauth)?;
    }
    Ok(())
}
