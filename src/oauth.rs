//! OAuth 2.0 in the extension module: `NativeTokenManager` (behind `wikisuggest.TokenManager`),
//! the authorization helpers and the file store, as thin wrappers over the core.
//!
//! Tokens cross into Python as the store's dict shape (`StoredToken`); the Python layer turns
//! that into its `Token` dataclass, and hands the same shape to user-supplied stores.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use pythonize::{depythonize, pythonize};
use wikisuggest_core::oauth::{
    self, FileTokenStore, ManagerOptions, StoredToken, Token, TokenManager, TokenStore,
};
use wikisuggest_core::{Error, Result as CoreResult, Secret};

use crate::call::NativeCall;
use crate::errors::core_error;

/// A store made of two Python callables, `load() -> dict | None` and `save(dict)`.
///
/// The manager calls a store inside its renewal critical section, which runs on a runtime
/// thread; each call attaches to the interpreter for its duration. That cannot deadlock with
/// the caller: blocking callers wait detached from the interpreter, and an asyncio loop
/// releases it between bytecodes. The callables must not use the token manager themselves
/// (its renewal lock is held while they run).
struct CallbackStore {
    load: Py<PyAny>,
    save: Py<PyAny>,
}

/// An exception raised by a user's store callable, as a core error. Only its type and text
/// are kept: the original object cannot travel through the core.
fn callback_failure(py: Python<'_>, operation: &str, err: &PyErr) -> Error {
    let kind = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".to_owned());
    Error::Internal(format!(
        "the token store's {operation}() raised {kind}: {}",
        err.value(py)
    ))
}

impl TokenStore for CallbackStore {
    fn load(&self) -> CoreResult<Option<StoredToken>> {
        Python::attach(|py| {
            let value = self
                .load
                .call0(py)
                .map_err(|e| callback_failure(py, "load", &e))?;
            if value.is_none(py) {
                return Ok(None);
            }
            // The conversion error is not quoted: it could repeat a value, i.e. a token.
            depythonize::<StoredToken>(value.bind(py))
                .map(Some)
                .map_err(|_| {
                    Error::Internal(
                        "the token store's load() must return None or a dict with at least \
                     access_token (as produced by Token.to_dict())"
                            .to_owned(),
                    )
                })
        })
    }

    fn save(&self, token: &StoredToken) -> CoreResult<()> {
        Python::attach(|py| {
            let value = pythonize(py, token).map_err(|e| {
                Error::Internal(format!("could not convert the token for the store: {e}"))
            })?;
            // The store's exception may quote what it was given; the tokens are cut out.
            let secrets: Vec<Secret> = std::iter::once(token.access_token.clone())
                .chain(token.refresh_token.clone())
                .map(Secret::new)
                .collect();
            let redactor = wikisuggest_core::redact::Redactor::new(&secrets);
            self.save
                .call1(py, (value,))
                .map(drop)
                .map_err(|e| redactor.error(callback_failure(py, "save", &e)))
        })
    }
}

fn store_from(
    store_path: Option<PathBuf>,
    store_load: Option<Py<PyAny>>,
    store_save: Option<Py<PyAny>>,
) -> CoreResult<Option<Arc<dyn TokenStore>>> {
    match (store_path, store_load, store_save) {
        (None, None, None) => Ok(None),
        (Some(path), None, None) => Ok(Some(Arc::new(FileTokenStore::new(path)))),
        (None, Some(load), Some(save)) => Ok(Some(Arc::new(CallbackStore { load, save }))),
        _ => Err(Error::invalid(
            "store",
            "give either a file path or both load and save callables",
        )),
    }
}

/// The options both kinds of renewing manager take, as the Python layer passes them (one
/// dict with every key).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct ManagerArgs {
    auth_url: Option<String>,
    user_agent: Option<String>,
    leeway: f64,
    store_path: Option<PathBuf>,
    store_load: Option<Py<PyAny>>,
    store_save: Option<Py<PyAny>>,
}

impl ManagerArgs {
    fn checked(self) -> CoreResult<ManagerOptions> {
        Ok(ManagerOptions {
            auth_url: self.auth_url,
            user_agent: self.user_agent,
            leeway: leeway_from(self.leeway)?,
            store: store_from(self.store_path, self.store_load, self.store_save)?,
        })
    }
}

fn leeway_from(seconds: f64) -> CoreResult<Duration> {
    Ok(wikisuggest_records::params::seconds("leeway", seconds)?)
}

/// A token handed to Python, as the store's dict shape (the Python layer makes it a `Token`).
pub fn token_out<'py>(py: Python<'py>, token: &Token) -> PyResult<Bound<'py, PyAny>> {
    Ok(pythonize(py, &token.to_stored())?)
}

#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeTokenManager {
    pub(crate) inner: Arc<TokenManager>,
}

fn wrap(py: Python<'_>, built: CoreResult<TokenManager>) -> PyResult<NativeTokenManager> {
    built
        .map(|manager| NativeTokenManager {
            inner: Arc::new(manager),
        })
        .map_err(|e| core_error(py, e))
}

#[pymethods]
impl NativeTokenManager {
    #[staticmethod]
    fn client_credentials(
        py: Python<'_>,
        client_id: String,
        client_secret: String,
        options: ManagerArgs,
    ) -> PyResult<Self> {
        let built = options.checked().and_then(|options| {
            TokenManager::client_credentials(client_id, Secret::new(client_secret), options)
        });
        wrap(py, built)
    }

    #[staticmethod]
    fn refresh(
        py: Python<'_>,
        refresh_token: Option<String>,
        client_id: String,
        client_secret: Option<String>,
        token: Option<Bound<'_, PyDict>>,
        options: ManagerArgs,
    ) -> PyResult<Self> {
        let initial = match token {
            Some(dict) => Some(Token::from_stored(&depythonize::<StoredToken>(&dict)?)),
            None => None,
        };
        let built = options.checked().and_then(|options| {
            TokenManager::refresh_token(
                refresh_token.map(Secret::new),
                initial,
                client_id,
                client_secret.map(Secret::new),
                options,
            )
        });
        wrap(py, built)
    }

    #[staticmethod]
    fn personal(py: Python<'_>, token: String) -> PyResult<Self> {
        wrap(py, TokenManager::personal(Secret::new(token)))
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    #[getter]
    fn client_id(&self) -> Option<&str> {
        self.inner.client_id()
    }

    #[getter]
    fn auth_url(&self) -> Option<&str> {
        self.inner.auth_url()
    }

    #[getter]
    fn leeway(&self) -> f64 {
        self.inner.leeway().as_secs_f64()
    }

    /// The current token as a dict, renewed first when due: sent blocking or awaited.
    fn token(&self) -> NativeCall {
        let manager = self.inner.clone();
        NativeCall::new(async move { manager.token().await }, |py, token| {
            token_out(py, &token)
        })
    }

    /// A server rejected the access token `rejected` (HTTP 401): the token to replay the
    /// request with once (renewed, or one another thread renewed meanwhile), or None when it
    /// cannot be renewed; sent blocking or awaited.
    fn renew_rejected(&self, rejected: String) -> NativeCall {
        let manager = self.inner.clone();
        let rejected = Secret::new(rejected);
        NativeCall::new(
            async move { manager.renew_after_rejection(&rejected).await },
            |py, renewed| match renewed {
                Some(token) => token_out(py, &token),
                None => Ok(py.None().into_bound(py)),
            },
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "NativeTokenManager(kind={:?}, client_id={:?})",
            self.inner.kind(),
            self.inner.client_id().unwrap_or_default()
        )
    }
}

/// `(url, state, code_verifier)` for the authorization-code flow with PKCE (S256).
#[pyfunction]
#[pyo3(signature = (auth_url, client_id, redirect_uri=None, scope=None, state=None))]
pub fn authorization_url(
    py: Python<'_>,
    auth_url: &str,
    client_id: &str,
    redirect_uri: Option<&str>,
    scope: Option<&str>,
    state: Option<&str>,
) -> PyResult<(String, String, String)> {
    let request = oauth::authorization_url(auth_url, client_id, redirect_uri, scope, state)
        .map_err(|e| core_error(py, e))?;
    Ok((
        request.url,
        request.state,
        request.code_verifier.expose().to_owned(),
    ))
}

/// The authorization code from a redirect, after checking its state.
#[pyfunction]
pub fn parse_redirect(py: Python<'_>, redirect: &str, expected_state: &str) -> PyResult<String> {
    oauth::parse_redirect(redirect, expected_state)
        .map(|code| code.expose().to_owned())
        .map_err(|e| core_error(py, e))
}

#[pyfunction]
pub fn file_store_load(py: Python<'_>, path: PathBuf) -> PyResult<Option<Py<PyAny>>> {
    let loaded = FileTokenStore::new(path)
        .load()
        .map_err(|e| core_error(py, e))?;
    loaded
        .map(|token| Ok(pythonize(py, &token)?.unbind()))
        .transpose()
}

#[pyfunction]
pub fn file_store_save(py: Python<'_>, path: PathBuf, token: Bound<'_, PyDict>) -> PyResult<()> {
    let token: StoredToken = depythonize(&token)?;
    py.detach(|| FileTokenStore::new(path).save(&token))
        .map_err(|e| core_error(py, e))
}
