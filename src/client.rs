//! `NativeClient`: the object behind `wikisuggest.Client` and `wikisuggest.AsyncClient`.
//! Each method has a blocking form and an `_async` form sharing one body.

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use wikisuggest_core::client::{PreparedRequest, ResponseKind, StaticToken};
use wikisuggest_core::oauth::{Grant, request_token};
use wikisuggest_core::params::{
    LinkParams, RankMethod, RevisionBody, SearchAlgorithm, TranslationParams,
};
use wikisuggest_core::retry::RetryPolicy;
use wikisuggest_core::{AuthProvider, Client, ClientConfig, Error, Secret};

use crate::convert::FetchedOut;
use crate::errors::core_error;
use crate::oauth::{NativeTokenManager, TokenOut};
use crate::runtime::{run_async, run_blocking};

#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeClient {
    pub(crate) inner: Arc<Client>,
}

fn seconds(name: &str, value: f64) -> Result<Duration, Error> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        Error::invalid(
            name,
            format!("must be a non-negative number of seconds, got {value}"),
        )
    })
}

/// Send `request` (if it was valid) and decode the response for Python.
async fn fetch(
    client: Arc<Client>,
    request: Result<PreparedRequest, Error>,
    kind: ResponseKind,
    raw: bool,
) -> Result<FetchedOut, Error> {
    Ok(FetchedOut(client.fetch(&request?, kind, raw).await?))
}

/// One token-endpoint request through this client; the token as its dict shape.
async fn grant(client: Arc<Client>, grant: Grant) -> Result<TokenOut, Error> {
    let token = request_token(&client, &grant).await?;
    Ok(TokenOut(token.to_stored()))
}

fn client_credentials_grant(client_id: String, client_secret: String) -> Grant {
    Grant::ClientCredentials {
        client_id,
        client_secret: Secret::new(client_secret),
    }
}

fn authorization_code_grant(
    code: String,
    client_id: String,
    client_secret: Option<String>,
    code_verifier: Option<String>,
    redirect_uri: Option<String>,
) -> Grant {
    Grant::AuthorizationCode {
        code: Secret::new(code),
        client_id,
        client_secret: client_secret.map(Secret::new),
        code_verifier: code_verifier.map(Secret::new),
        redirect_uri,
    }
}

fn refresh_token_grant(
    refresh_token: String,
    client_id: String,
    client_secret: Option<String>,
) -> Grant {
    Grant::RefreshToken {
        refresh_token: Secret::new(refresh_token),
        client_id,
        client_secret: client_secret.map(Secret::new),
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn link_params(
    project: String,
    domain: String,
    page_title: String,
    language_code: Option<String>,
    threshold: f64,
    sections_to_exclude: Vec<String>,
    max_recommendations: i64,
) -> LinkParams {
    LinkParams {
        project,
        domain,
        page_title,
        language_code,
        threshold,
        sections_to_exclude,
        max_recommendations,
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn translation_params(
    source: String,
    target: String,
    count: i64,
    seed: Vec<String>,
    topic: Vec<String>,
    include_pageviews: bool,
    search_algorithm: &str,
    rank_method: &str,
) -> Result<TranslationParams, Error> {
    Ok(TranslationParams {
        source,
        target,
        count,
        seed,
        topic,
        include_pageviews,
        search_algorithm: SearchAlgorithm::parse(search_algorithm)?,
        rank_method: RankMethod::parse(rank_method)?,
    })
}

#[pymethods]
impl NativeClient {
    #[new]
    #[pyo3(signature = (*, base_url, auth_url, user_agent, timeout, connect_timeout, max_retries, backoff_base, backoff_max, max_retry_after, max_concurrency=None, rate_limit=None, token=None, manager=None, max_body_size=None, allow_insecure_http=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        base_url: String,
        auth_url: String,
        user_agent: String,
        timeout: f64,
        connect_timeout: f64,
        max_retries: u32,
        backoff_base: f64,
        backoff_max: f64,
        max_retry_after: f64,
        max_concurrency: Option<usize>,
        rate_limit: Option<crate::limits::RateLimitArg>,
        token: Option<String>,
        manager: Option<Bound<'_, NativeTokenManager>>,
        max_body_size: Option<usize>,
        allow_insecure_http: bool,
    ) -> PyResult<Self> {
        let manager = manager.map(|m| m.get().inner.clone());
        let build = || -> Result<Client, Error> {
            let config = ClientConfig {
                base_url,
                auth_url,
                user_agent,
                timeout: seconds("timeout", timeout)?,
                connect_timeout: seconds("connect_timeout", connect_timeout)?,
                retry: RetryPolicy {
                    max_retries,
                    backoff_base: seconds("backoff_base", backoff_base)?,
                    backoff_max: seconds("backoff_max", backoff_max)?,
                    max_retry_after: seconds("max_retry_after", max_retry_after)?,
                    ..RetryPolicy::default()
                },
                max_concurrency,
                rate_limit: rate_limit.map(|r| r.into_core()).transpose()?,
                max_body_size: max_body_size
                    .unwrap_or(wikisuggest_core::config::DEFAULT_MAX_BODY_SIZE),
                allow_insecure_http,
            };
            let auth: Option<Arc<dyn AuthProvider>> = match (token, &manager) {
                (Some(_), Some(_)) => {
                    return Err(Error::invalid(
                        "auth",
                        "give a token or a token manager, not both",
                    ));
                }
                (Some(token), None) => Some(Arc::new(StaticToken::new(Secret::new(token))?)),
                (None, Some(manager)) => Some(manager.clone()),
                (None, None) => None,
            };
            let client = Client::new(config, auth)?;
            if let Some(manager) = &manager {
                manager.attach(&client)?;
            }
            Ok(client)
        };
        build()
            .map(|client| Self {
                inner: Arc::new(client),
            })
            .map_err(|e| core_error(py, e))
    }

    #[getter]
    fn base_url(&self) -> &str {
        self.inner.base_url()
    }

    #[getter]
    fn auth_url(&self) -> &str {
        self.inner.auth_url()
    }

    #[getter]
    fn user_agent(&self) -> &str {
        self.inner.user_agent()
    }

    #[getter]
    fn max_concurrency(&self) -> usize {
        self.inner.max_concurrency()
    }

    fn __repr__(&self) -> String {
        format!(
            "NativeClient(base_url={:?}, user_agent={:?}, authenticated={})",
            self.inner.base_url(),
            self.inner.user_agent(),
            if self.inner.has_auth() {
                "True"
            } else {
                "False"
            }
        )
    }

    #[pyo3(signature = (project, domain, page_title, language_code, revision, threshold, sections_to_exclude, max_recommendations, raw))]
    #[allow(clippy::too_many_arguments)]
    fn link_recommendations(
        &self,
        py: Python<'_>,
        project: String,
        domain: String,
        page_title: String,
        language_code: Option<String>,
        revision: Option<i64>,
        threshold: f64,
        sections_to_exclude: Vec<String>,
        max_recommendations: i64,
        raw: bool,
    ) -> PyResult<Py<PyAny>> {
        let params = link_params(
            project,
            domain,
            page_title,
            language_code,
            threshold,
            sections_to_exclude,
            max_recommendations,
        );
        let request = self.inner.prepare_link_recommendations(&params, revision);
        let out = run_blocking(
            py,
            fetch(
                self.inner.clone(),
                request,
                ResponseKind::LinkRecommendationSet,
                raw,
            ),
        )?;
        Ok(out.into_pyobject(py)?.unbind())
    }

    #[pyo3(signature = (project, domain, page_title, language_code, revision, threshold, sections_to_exclude, max_recommendations, raw))]
    #[allow(clippy::too_many_arguments)]
    fn link_recommendations_async<'py>(
        &self,
        py: Python<'py>,
        project: String,
        domain: String,
        page_title: String,
        language_code: Option<String>,
        revision: Option<i64>,
        threshold: f64,
        sections_to_exclude: Vec<String>,
        max_recommendations: i64,
        raw: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = link_params(
            project,
            domain,
            page_title,
            language_code,
            threshold,
            sections_to_exclude,
            max_recommendations,
        );
        let request = self.inner.prepare_link_recommendations(&params, revision);
        run_async(
            py,
            fetch(
                self.inner.clone(),
                request,
                ResponseKind::LinkRecommendationSet,
                raw,
            ),
        )
    }

    #[pyo3(signature = (project, domain, page_title, wikitext, revid, pageid, language_code, threshold, sections_to_exclude, max_recommendations, raw))]
    #[allow(clippy::too_many_arguments)]
    fn link_recommendations_for_revision(
        &self,
        py: Python<'_>,
        project: String,
        domain: String,
        page_title: String,
        wikitext: String,
        revid: i64,
        pageid: i64,
        language_code: Option<String>,
        threshold: f64,
        sections_to_exclude: Vec<String>,
        max_recommendations: i64,
        raw: bool,
    ) -> PyResult<Py<PyAny>> {
        let params = link_params(
            project,
            domain,
            page_title,
            language_code,
            threshold,
            sections_to_exclude,
            max_recommendations,
        );
        let body = RevisionBody {
            wikitext,
            revid,
            pageid,
            sections_to_exclude: Vec::new(),
        };
        let request = self
            .inner
            .prepare_link_recommendations_for_revision(&params, &body);
        let out = run_blocking(
            py,
            fetch(
                self.inner.clone(),
                request,
                ResponseKind::LinkRecommendationSet,
                raw,
            ),
        )?;
        Ok(out.into_pyobject(py)?.unbind())
    }

    #[pyo3(signature = (project, domain, page_title, wikitext, revid, pageid, language_code, threshold, sections_to_exclude, max_recommendations, raw))]
    #[allow(clippy::too_many_arguments)]
    fn link_recommendations_for_revision_async<'py>(
        &self,
        py: Python<'py>,
        project: String,
        domain: String,
        page_title: String,
        wikitext: String,
        revid: i64,
        pageid: i64,
        language_code: Option<String>,
        threshold: f64,
        sections_to_exclude: Vec<String>,
        max_recommendations: i64,
        raw: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = link_params(
            project,
            domain,
            page_title,
            language_code,
            threshold,
            sections_to_exclude,
            max_recommendations,
        );
        let body = RevisionBody {
            wikitext,
            revid,
            pageid,
            sections_to_exclude: Vec::new(),
        };
        let request = self
            .inner
            .prepare_link_recommendations_for_revision(&params, &body);
        run_async(
            py,
            fetch(
                self.inner.clone(),
                request,
                ResponseKind::LinkRecommendationSet,
                raw,
            ),
        )
    }

    #[pyo3(signature = (source, target, count, seed, topic, include_pageviews, search_algorithm, rank_method, raw))]
    #[allow(clippy::too_many_arguments)]
    fn translation_recommendations(
        &self,
        py: Python<'_>,
        source: String,
        target: String,
        count: i64,
        seed: Vec<String>,
        topic: Vec<String>,
        include_pageviews: bool,
        search_algorithm: &str,
        rank_method: &str,
        raw: bool,
    ) -> PyResult<Py<PyAny>> {
        let request = translation_params(
            source,
            target,
            count,
            seed,
            topic,
            include_pageviews,
            search_algorithm,
            rank_method,
        )
        .and_then(|params| self.inner.prepare_translation_recommendations(&params));
        let out = run_blocking(
            py,
            fetch(
                self.inner.clone(),
                request,
                ResponseKind::TranslationRecommendations,
                raw,
            ),
        )?;
        Ok(out.into_pyobject(py)?.unbind())
    }

    #[pyo3(signature = (source, target, count, seed, topic, include_pageviews, search_algorithm, rank_method, raw))]
    #[allow(clippy::too_many_arguments)]
    fn translation_recommendations_async<'py>(
        &self,
        py: Python<'py>,
        source: String,
        target: String,
        count: i64,
        seed: Vec<String>,
        topic: Vec<String>,
        include_pageviews: bool,
        search_algorithm: &str,
        rank_method: &str,
        raw: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = translation_params(
            source,
            target,
            count,
            seed,
            topic,
            include_pageviews,
            search_algorithm,
            rank_method,
        )
        .and_then(|params| self.inner.prepare_translation_recommendations(&params));
        run_async(
            py,
            fetch(
                self.inner.clone(),
                request,
                ResponseKind::TranslationRecommendations,
                raw,
            ),
        )
    }

    fn client_credentials(
        &self,
        py: Python<'_>,
        client_id: String,
        client_secret: String,
    ) -> PyResult<Py<PyAny>> {
        let request = grant(
            self.inner.clone(),
            client_credentials_grant(client_id, client_secret),
        );
        Ok(run_blocking(py, request)?.into_pyobject(py)?.unbind())
    }

    fn client_credentials_async<'py>(
        &self,
        py: Python<'py>,
        client_id: String,
        client_secret: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = grant(
            self.inner.clone(),
            client_credentials_grant(client_id, client_secret),
        );
        run_async(py, request)
    }

    #[pyo3(signature = (code, client_id, client_secret=None, code_verifier=None, redirect_uri=None))]
    fn authorization_code(
        &self,
        py: Python<'_>,
        code: String,
        client_id: String,
        client_secret: Option<String>,
        code_verifier: Option<String>,
        redirect_uri: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let request = grant(
            self.inner.clone(),
            authorization_code_grant(code, client_id, client_secret, code_verifier, redirect_uri),
        );
        Ok(run_blocking(py, request)?.into_pyobject(py)?.unbind())
    }

    #[pyo3(signature = (code, client_id, client_secret=None, code_verifier=None, redirect_uri=None))]
    fn authorization_code_async<'py>(
        &self,
        py: Python<'py>,
        code: String,
        client_id: String,
        client_secret: Option<String>,
        code_verifier: Option<String>,
        redirect_uri: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = grant(
            self.inner.clone(),
            authorization_code_grant(code, client_id, client_secret, code_verifier, redirect_uri),
        );
        run_async(py, request)
    }

    #[pyo3(signature = (refresh_token, client_id, client_secret=None))]
    fn refresh_token(
        &self,
        py: Python<'_>,
        refresh_token: String,
        client_id: String,
        client_secret: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let request = grant(
            self.inner.clone(),
            refresh_token_grant(refresh_token, client_id, client_secret),
        );
        Ok(run_blocking(py, request)?.into_pyobject(py)?.unbind())
    }

    #[pyo3(signature = (refresh_token, client_id, client_secret=None))]
    fn refresh_token_async<'py>(
        &self,
        py: Python<'py>,
        refresh_token: String,
        client_id: String,
        client_secret: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = grant(
            self.inner.clone(),
            refresh_token_grant(refresh_token, client_id, client_secret),
        );
        run_async(py, request)
    }
}
