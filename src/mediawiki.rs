//! `NativeWiki`: the object behind `wikisuggest.Wiki` and `wikisuggest.AsyncWiki` (a wiki's
//! Action API). Each operation is prepared once and returned as a `NativeCall`, sent blocking
//! or awaited; results are plain tuples (the site's information a dict) that `python/wikisuggest/edits/wiki.py` turns into
//! records.

use std::sync::Arc;

use pyo3::prelude::*;
use wikisuggest_core::client::StaticToken;
use wikisuggest_core::mediawiki::{
    ActionApi, ActionApiConfig, EditRequest, PageRevision, SiteInfo,
};
use wikisuggest_core::retry::RetryPolicy;
use wikisuggest_core::{AuthProvider, Error, Secret};

use crate::call::NativeCall;
use crate::errors::core_error;
use crate::oauth::NativeTokenManager;

/// `(title, pageid, revid, wikitext)`.
type PageOut = Option<(String, u64, u64, String)>;
/// `(title, pageid, old_revid, new_revid, nochange)`.
type EditOut = (String, u64, Option<u64>, Option<u64>, bool);

#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeWiki {
    inner: Arc<ActionApi>,
}

fn page_out(page: Option<PageRevision>) -> PageOut {
    page.map(|p| (p.title, p.pageid, p.revid, p.wikitext))
}

async fn fetch_page(
    api: Arc<ActionApi>,
    title: Option<String>,
    revid: Option<u64>,
) -> Result<PageOut, Error> {
    Ok(page_out(api.page(title.as_deref(), revid).await?))
}

async fn site_info(api: Arc<ActionApi>) -> Result<SiteInfo, Error> {
    api.siteinfo().await
}

async fn log_in(api: Arc<ActionApi>, username: String, password: Secret) -> Result<(), Error> {
    api.login(&username, &password).await
}

/// The body of a read, as JSON text (decoded by the Python layer).
async fn read(api: Arc<ActionApi>, params: Vec<(String, String)>) -> Result<String, Error> {
    Ok(api.read(&params).await?.to_string())
}

async fn save(api: Arc<ActionApi>, edit: EditRequest) -> Result<EditOut, Error> {
    let done = api.edit(&edit).await?;
    Ok((
        done.title,
        done.pageid,
        done.old_revid,
        done.new_revid,
        done.nochange,
    ))
}

#[pymethods]
impl NativeWiki {
    #[new]
    #[pyo3(signature = (*, api_url, user_agent, timeout, max_retries, maxlag=None, token=None, manager=None, max_body_size=None, allow_insecure_http=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        api_url: String,
        user_agent: String,
        timeout: f64,
        max_retries: u32,
        maxlag: Option<u32>,
        token: Option<String>,
        manager: Option<Bound<'_, NativeTokenManager>>,
        max_body_size: Option<usize>,
        allow_insecure_http: bool,
    ) -> PyResult<Self> {
        let manager = manager.map(|m| m.get().inner.clone());
        let build = || -> Result<ActionApi, Error> {
            let timeout = wikisuggest_records::params::positive_seconds("timeout", timeout)?;
            let config = ActionApiConfig {
                timeout,
                maxlag,
                retry: RetryPolicy {
                    max_retries,
                    ..RetryPolicy::default()
                },
                max_body_size: max_body_size
                    .unwrap_or(wikisuggest_core::config::DEFAULT_MAX_BODY_SIZE),
                allow_insecure_http,
                ..ActionApiConfig::new(api_url, user_agent)
            };
            let auth: Option<Arc<dyn AuthProvider>> = match (token, manager) {
                (Some(_), Some(_)) => {
                    return Err(Error::invalid(
                        "auth",
                        "give a token or a token manager, not both",
                    ));
                }
                (Some(token), None) => Some(Arc::new(StaticToken::new(Secret::new(token))?)),
                (None, Some(manager)) => Some(manager),
                (None, None) => None,
            };
            ActionApi::new(config, auth)
        };
        build()
            .map(|api| Self {
                inner: Arc::new(api),
            })
            .map_err(|e| core_error(py, e))
    }

    #[getter]
    fn api_url(&self) -> String {
        self.inner.api_url()
    }

    #[pyo3(signature = (title=None, revid=None))]
    fn page(&self, title: Option<String>, revid: Option<u64>) -> NativeCall {
        NativeCall::value(fetch_page(self.inner.clone(), title, revid))
    }

    /// A read of the Action API (`action=query`, `parse` or `wbgetentities`): its JSON body.
    fn read(&self, params: Vec<(String, String)>) -> NativeCall {
        NativeCall::value(read(self.inner.clone(), params))
    }

    fn siteinfo(&self) -> NativeCall {
        // A dict keyed by the fields of `SiteInfo`, as the Python record names them.
        NativeCall::new(site_info(self.inner.clone()), |py, info| {
            Ok(pythonize::pythonize(py, &info)?)
        })
    }

    fn login(&self, username: String, password: String) -> NativeCall {
        NativeCall::value(log_in(self.inner.clone(), username, Secret::new(password)))
    }

    #[pyo3(signature = (title, text, baserevid, summary, tags, minor, bot))]
    #[allow(clippy::too_many_arguments)]
    fn edit(
        &self,
        title: String,
        text: String,
        baserevid: u64,
        summary: String,
        tags: Vec<String>,
        minor: bool,
        bot: bool,
    ) -> NativeCall {
        let request = EditRequest {
            title,
            text,
            baserevid,
            summary,
            tags,
            minor,
            bot,
        };
        NativeCall::value(save(self.inner.clone(), request))
    }

    fn __repr__(&self) -> String {
        format!("NativeWiki(api_url={:?})", self.inner.api_url())
    }
}
