//! The single mapping from core, engine and builder errors to the Python exception tree
//! declared in `python/wikisuggest/errors.py`. Nothing here inspects message text: the class
//! is chosen from the error's variant and, for HTTP errors, from the kind the core decided.

use pyo3::PyTypeInfo;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use pythonize::pythonize;
use wikisuggest_build::BuildError;
use wikisuggest_core::Error;
use wikisuggest_core::http_error::{HttpError, HttpErrorKind, OAuthErrorBody};
use wikisuggest_engine::{Error as EngineError, TextError};

/// The classes of `python/wikisuggest/errors.py`, as handles the compiler checks.
mod classes {
    pyo3::import_exception!(wikisuggest.errors, WikisuggestError);
    pyo3::import_exception!(wikisuggest.errors, InvalidParameter);
    pyo3::import_exception!(wikisuggest.errors, ConfigurationError);
    pyo3::import_exception!(wikisuggest.errors, TransportError);
    pyo3::import_exception!(wikisuggest.errors, ResponseTooLarge);
    pyo3::import_exception!(wikisuggest.errors, MediaWikiError);
    pyo3::import_exception!(wikisuggest.errors, EditConflict);
    pyo3::import_exception!(wikisuggest.errors, Timeout);
    pyo3::import_exception!(wikisuggest.errors, DecodeError);
    pyo3::import_exception!(wikisuggest.errors, ReauthorizationRequired);
    pyo3::import_exception!(wikisuggest.errors, StateMismatch);
    pyo3::import_exception!(wikisuggest.errors, DatasetError);
    pyo3::import_exception!(wikisuggest.errors, MissingCatalogPart);
    pyo3::import_exception!(wikisuggest.errors, Cancelled);
    pyo3::import_exception!(wikisuggest.errors, WikitextError);
    pyo3::import_exception!(wikisuggest.errors, UnsupportedLanguage);
    pyo3::import_exception!(wikisuggest.errors, HTTPError);
    pyo3::import_exception!(wikisuggest.errors, Unauthorized);
    pyo3::import_exception!(wikisuggest.errors, ReadDenied);
    pyo3::import_exception!(wikisuggest.errors, NotFound);
    pyo3::import_exception!(wikisuggest.errors, UnsupportedDomain);
    pyo3::import_exception!(wikisuggest.errors, UnsupportedMediaType);
    pyo3::import_exception!(wikisuggest.errors, UnprocessableEntity);
    pyo3::import_exception!(wikisuggest.errors, RateLimited);
    pyo3::import_exception!(wikisuggest.errors, ServerError);
    pyo3::import_exception!(wikisuggest.errors, OAuthError);
    pyo3::import_exception!(wikisuggest.errors, InvalidClient);
    pyo3::import_exception!(wikisuggest.errors, InvalidGrant);
    pyo3::import_exception!(wikisuggest.errors, InvalidRequest);
    pyo3::import_exception!(wikisuggest.errors, InvalidScope);
    pyo3::import_exception!(wikisuggest.errors, UnsupportedGrantType);
    pyo3::import_exception!(wikisuggest.errors, UnauthorizedClient);
    pyo3::import_exception!(wikisuggest.errors, AccessDenied);
}

/// A class of the exception tree: a typo is a compile error, not a failed look-up at run time.
type Class = for<'py> fn(Python<'py>) -> Bound<'py, PyType>;

/// An error of a crate below the binding, as its Python exception: what a generic door
/// (`NativeCall`, the batches) needs of the errors it carries.
pub trait IntoPyErr {
    fn into_pyerr(self, py: Python<'_>) -> PyErr;
    /// A failure of the binding itself (a task that died), in this error type.
    fn internal(message: &str) -> Self;
}

impl IntoPyErr for Error {
    fn into_pyerr(self, py: Python<'_>) -> PyErr {
        core_error(py, self)
    }

    fn internal(message: &str) -> Self {
        Self::Internal(message.to_owned())
    }
}

impl IntoPyErr for EngineError {
    fn into_pyerr(self, py: Python<'_>) -> PyErr {
        engine_error(py, &self)
    }

    fn internal(message: &str) -> Self {
        Self::Internal(message.to_owned())
    }
}

/// A dataset build or dump-reading error: a file that cannot be read or written is an
/// `OSError`, a bad argument an `InvalidParameter` (a `ValueError`), anything else a
/// `WikisuggestError`.
pub fn build_error(error: BuildError) -> PyErr {
    match error {
        BuildError::Io { .. } => PyOSError::new_err(error.to_string()),
        BuildError::InvalidArgument(_) => Python::attach(|py| {
            let kwargs = PyDict::new(py);
            instantiate(
                py,
                classes::InvalidParameter::type_object,
                &error.to_string(),
                &kwargs,
            )
            .unwrap_or_else(|conversion_failure| conversion_failure)
        }),
        other => wikisuggest_error(&other.to_string()),
    }
}

pub fn wikisuggest_error(message: &str) -> PyErr {
    classes::WikisuggestError::new_err(message.to_owned())
}

/// An `InvalidParameter` naming `parameter`, raised before any work starts.
pub fn invalid_parameter(parameter: &str, message: &str) -> PyErr {
    Python::attach(|py| {
        let kwargs = PyDict::new(py);
        kwargs.set_item("parameter", parameter)?;
        instantiate(
            py,
            classes::InvalidParameter::type_object,
            &format!("{parameter}: {message}"),
            &kwargs,
        )
    })
    .unwrap_or_else(|conversion_failure| conversion_failure)
}

/// A translation catalog error: a file that cannot be read or written is an `OSError`, a bad
/// argument an `InvalidParameter`, a part the catalog was built without a
/// `MissingCatalogPart`, a damaged dump or catalog a `DatasetError` (naming its path), a
/// stopped build `Cancelled`.
pub fn translation_error(error: wikisuggest_translation::Error) -> PyErr {
    use wikisuggest_translation::Error as T;
    Python::attach(|py| {
        let kwargs = PyDict::new(py);
        let class: Class = match &error {
            T::Io { .. } => return Ok(PyOSError::new_err(error.to_string())),
            T::InvalidParameter { parameter, .. } => {
                kwargs.set_item("parameter", parameter)?;
                classes::InvalidParameter::type_object
            }
            T::MissingPart(_) => classes::MissingCatalogPart::type_object,
            T::Dump { path, .. } | T::Catalog { path, .. } => {
                kwargs.set_item("path", path.display().to_string())?;
                classes::DatasetError::type_object
            }
            T::Cancelled => classes::Cancelled::type_object,
            _ => classes::WikisuggestError::type_object,
        };
        instantiate(py, class, &error.to_string(), &kwargs)
    })
    .unwrap_or_else(|conversion_failure| conversion_failure)
}

/// Convert a local engine error into the matching Python exception.
pub fn engine_error(py: Python<'_>, error: &EngineError) -> PyErr {
    build_engine(py, error).unwrap_or_else(|conversion_failure| conversion_failure)
}

fn build_engine(py: Python<'_>, error: &EngineError) -> PyResult<PyErr> {
    let kwargs = PyDict::new(py);
    match error {
        EngineError::Text(TextError::UnsupportedLanguage { language }) => {
            kwargs.set_item("language", language)?;
        }
        EngineError::InvalidParameter(invalid) => kwargs.set_item("parameter", &invalid.name)?,
        _ => {}
    }
    // One classification for exceptions and for the error rows of whole-wiki runs.
    let class: Class = match wikisuggest_linkrows::error_class(error) {
        "UnsupportedLanguage" => classes::UnsupportedLanguage::type_object,
        "WikitextError" => classes::WikitextError::type_object,
        "InvalidParameter" => classes::InvalidParameter::type_object,
        "WikisuggestError" => classes::WikisuggestError::type_object,
        "Cancelled" => classes::Cancelled::type_object,
        _ => classes::DatasetError::type_object,
    };
    instantiate(py, class, &error.to_string(), &kwargs)
}

/// Convert a core error into the matching Python exception, with its attributes set.
pub fn core_error(py: Python<'_>, error: Error) -> PyErr {
    build(py, &error).unwrap_or_else(|conversion_failure| conversion_failure)
}

fn build(py: Python<'_>, error: &Error) -> PyResult<PyErr> {
    let kwargs = PyDict::new(py);
    let class: Class = match error {
        Error::InvalidParameter { name, .. } => {
            kwargs.set_item("parameter", name)?;
            classes::InvalidParameter::type_object
        }
        Error::Config(_) => classes::ConfigurationError::type_object,
        Error::Http(http) => {
            fill_http(py, &kwargs, http)?;
            http_class(http)
        }
        Error::Timeout { url, .. } => {
            kwargs.set_item("url", url)?;
            classes::Timeout::type_object
        }
        Error::Transport { url, .. } => {
            kwargs.set_item("url", url)?;
            classes::TransportError::type_object
        }
        Error::ResponseTooLarge { url, limit } => {
            kwargs.set_item("url", url)?;
            kwargs.set_item("limit", limit)?;
            classes::ResponseTooLarge::type_object
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
            classes::DecodeError::type_object
        }
        Error::ReauthorizationRequired(_) => classes::ReauthorizationRequired::type_object,
        Error::StateMismatch => classes::StateMismatch::type_object,
        Error::AuthorizationFailed(body) => {
            fill_oauth(&kwargs, body)?;
            oauth_class(&body.error)
        }
        Error::Api { code, .. } => {
            kwargs.set_item("code", code)?;
            classes::MediaWikiError::type_object
        }
        Error::EditConflict { title, baserevid } => {
            kwargs.set_item("title", title)?;
            kwargs.set_item("baserevid", baserevid)?;
            classes::EditConflict::type_object
        }
        Error::ChecksumMismatch {
            url,
            expected,
            actual,
            ..
        } => {
            kwargs.set_item("url", url)?;
            kwargs.set_item("expected", expected)?;
            kwargs.set_item("actual", actual)?;
            classes::DatasetError::type_object
        }
        Error::RedirectRefused { url, .. } => {
            kwargs.set_item("url", url)?;
            classes::TransportError::type_object
        }
        Error::DownloadBudget {
            url,
            attempts,
            received,
            ..
        } => {
            kwargs.set_item("url", url)?;
            kwargs.set_item("attempts", attempts)?;
            kwargs.set_item("received", received)?;
            classes::TransportError::type_object
        }
        Error::File { path, .. } => {
            kwargs.set_item("path", path)?;
            classes::DatasetError::type_object
        }
        Error::Internal(_) => classes::WikisuggestError::type_object,
    };
    instantiate(py, class, &error.to_string(), &kwargs)
}

fn instantiate(
    py: Python<'_>,
    class: Class,
    message: &str,
    kwargs: &Bound<'_, PyDict>,
) -> PyResult<PyErr> {
    let instance = class(py).call((message,), Some(kwargs))?;
    Ok(PyErr::from_value(instance))
}

fn http_class(http: &HttpError) -> Class {
    match http.kind {
        HttpErrorKind::Unauthorized => classes::Unauthorized::type_object,
        HttpErrorKind::ReadDenied => classes::ReadDenied::type_object,
        HttpErrorKind::UnsupportedDomain => classes::UnsupportedDomain::type_object,
        HttpErrorKind::NotFound => classes::NotFound::type_object,
        HttpErrorKind::UnsupportedMediaType => classes::UnsupportedMediaType::type_object,
        HttpErrorKind::UnprocessableEntity => classes::UnprocessableEntity::type_object,
        HttpErrorKind::RateLimited => classes::RateLimited::type_object,
        HttpErrorKind::ServerError => classes::ServerError::type_object,
        HttpErrorKind::OAuth => oauth_class(http.oauth.as_ref().map_or("", |o| o.error.as_str())),
        HttpErrorKind::Other => classes::HTTPError::type_object,
    }
}

/// The exception class for an OAuth 2.0 `error` code (token endpoint or authorize redirect).
fn oauth_class(error: &str) -> Class {
    match error {
        "invalid_client" => classes::InvalidClient::type_object,
        "invalid_grant" => classes::InvalidGrant::type_object,
        "invalid_request" => classes::InvalidRequest::type_object,
        "invalid_scope" => classes::InvalidScope::type_object,
        "unsupported_grant_type" => classes::UnsupportedGrantType::type_object,
        "unauthorized_client" => classes::UnauthorizedClient::type_object,
        "access_denied" => classes::AccessDenied::type_object,
        _ => classes::OAuthError::type_object,
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
