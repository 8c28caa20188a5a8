//! `NativeClient`: the object behind `wikisuggest.Client` and `wikisuggest.AsyncClient`.
//!
//! Each operation is one method that takes one options value (a dict the Python layer builds
//! once) and returns a [`NativeCall`] (src/call.rs): the request is prepared there, once, and
//! only sending it differs between the blocking (`send`) and the asyncio (`send_async`) client.

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use serde::de::DeserializeOwned;
use wikisuggest_core::client::{PreparedRequest, ResponseKind, StaticToken, decode};
use wikisuggest_core::models::{PageCollection, PageCollectionGroups, PageCollectionMembership};
use wikisuggest_core::oauth::{Grant, request_token};
use wikisuggest_core::params::{
    LinkOptions, LinkParams, MembershipParams, MembershipQuery, RankMethod, RevisionBody,
    SearchAlgorithm, TranslationParams,
};
use wikisuggest_core::retry::RetryPolicy;
use wikisuggest_core::{AuthProvider, Client, ClientConfig, Error, Secret};

use crate::call::NativeCall;
use crate::errors::core_error;
use crate::oauth::NativeTokenManager;

#[pyclass(frozen, module = "wikisuggest._native")]
pub struct NativeClient {
    pub(crate) inner: Arc<Client>,
}

/// A client's timeout or back-off: more than zero seconds.
fn seconds(name: &str, value: f64) -> Result<Duration, Error> {
    Ok(wikisuggest_records::params::positive_seconds(name, value)?)
}

/// The arguments of one link-recommendation request, as the Python layer passes them: a dict
/// whose values it has type-checked; ranges are checked by [`LinkParams::validate`]. With
/// `wikitext` (and `revid`, `pageid`) it is the POST form, otherwise the GET form.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct LinkArgs {
    project: String,
    domain: String,
    page_title: String,
    language_code: Option<String>,
    threshold: f64,
    sections_to_exclude: Vec<String>,
    max_recommendations: i64,
    #[pyo3(default)]
    revision: Option<i64>,
    #[pyo3(default)]
    wikitext: Option<String>,
    #[pyo3(default)]
    revid: Option<i64>,
    #[pyo3(default)]
    pageid: Option<i64>,
}

/// An operation's options value: how it becomes a request, and what its response holds.
pub(crate) trait Operation {
    const KIND: ResponseKind;
    fn prepare(self, client: &Client) -> Result<PreparedRequest, Error>;
}

impl Operation for LinkArgs {
    const KIND: ResponseKind = ResponseKind::LinkRecommendationSet;

    fn prepare(self, client: &Client) -> Result<PreparedRequest, Error> {
        let params = LinkParams {
            project: self.project,
            domain: self.domain,
            page_title: self.page_title,
            options: LinkOptions {
                language_code: self.language_code,
                threshold: self.threshold,
                sections_to_exclude: self.sections_to_exclude,
                max_recommendations: self.max_recommendations,
            },
        };
        let Some(wikitext) = self.wikitext else {
            return client.prepare_link_recommendations(&params, self.revision);
        };
        let required = |name: &str, value: Option<i64>| {
            value.ok_or_else(|| Error::invalid(name, "is required with wikitext"))
        };
        let body = RevisionBody {
            wikitext,
            revid: required("revid", self.revid)?,
            pageid: required("pageid", self.pageid)?,
            sections_to_exclude: Vec::new(),
        };
        client.prepare_link_recommendations_for_revision(&params, &body)
    }
}

/// The arguments of one translation-recommendation request (a dict, as for [`LinkArgs`]).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct TranslationArgs {
    source: String,
    target: String,
    count: i64,
    seed: Vec<String>,
    topic: Vec<String>,
    include_pageviews: bool,
    search_algorithm: String,
    rank_method: String,
    #[pyo3(default)]
    country: Vec<String>,
    #[pyo3(default)]
    collections: bool,
    #[pyo3(default)]
    featured_collection: Option<String>,
    #[pyo3(default)]
    min_size: Option<i64>,
    #[pyo3(default)]
    max_size: Option<i64>,
    #[pyo3(default)]
    lead_section: bool,
    #[pyo3(default)]
    continue_offset: Option<i64>,
    #[pyo3(default)]
    continue_seed: Option<i64>,
}

impl Operation for TranslationArgs {
    const KIND: ResponseKind = ResponseKind::TranslationRecommendations;

    fn prepare(self, client: &Client) -> Result<PreparedRequest, Error> {
        client.prepare_translation_recommendations(&self.params()?)
    }
}

impl TranslationArgs {
    /// The parameters of operation 3 (the local translation engine takes them too).
    pub(crate) fn params(self) -> Result<TranslationParams, Error> {
        Ok(TranslationParams {
            count: self.count,
            seed: self.seed,
            topic: self.topic,
            include_pageviews: self.include_pageviews,
            search_algorithm: SearchAlgorithm::parse(&self.search_algorithm)?,
            rank_method: RankMethod::parse(&self.rank_method)?,
            country: self.country,
            collections: self.collections,
            featured_collection: self.featured_collection,
            min_size: self.min_size,
            max_size: self.max_size,
            lead_section: self.lead_section,
            continue_offset: self.continue_offset,
            continue_seed: self.continue_seed,
            ..TranslationParams::new(&self.source, &self.target)
        })
    }
}

/// The arguments of the authorization-code grant (a dict, as the other requests': five
/// optional strings in a row read wrongly too easily as positional arguments).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct CodeGrantArgs {
    code: String,
    client_id: String,
    client_secret: Option<String>,
    code_verifier: Option<String>,
    redirect_uri: Option<String>,
}

/// The arguments of a page-collection-membership request: Wikidata ids, or titles of one
/// language's wiki (exactly one of the two).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct MembershipArgs {
    collection: String,
    #[pyo3(default)]
    qids: Option<Vec<String>>,
    #[pyo3(default)]
    language: Option<String>,
    #[pyo3(default)]
    titles: Option<Vec<String>>,
}

impl MembershipArgs {
    fn prepare(self, client: &Client) -> Result<PreparedRequest, Error> {
        let query = match (self.qids, self.titles, self.language) {
            (Some(qids), None, None) => MembershipQuery::Qids(qids),
            (None, Some(titles), Some(language)) => MembershipQuery::Titles { language, titles },
            (None, Some(_), None) => {
                return Err(Error::invalid("language", "is required with titles"));
            }
            (None, None, _) => return Err(Error::invalid("qids", "give qids or titles")),
            _ => {
                return Err(Error::invalid(
                    "qids",
                    "give qids or titles (with language), not both",
                ));
            }
        };
        let params = MembershipParams {
            collection: self.collection,
            query,
        };
        client.prepare_page_collection_membership(&params)
    }
}

/// The requests of the client's operations, each a [`NativeCall`].
impl NativeClient {
    /// The request of `args` (a validation failure surfaces on send).
    fn fetch<A: Operation>(&self, args: A, raw: bool) -> NativeCall {
        let request = args.prepare(&self.inner);
        let client = self.inner.clone();
        NativeCall::new(
            async move { client.fetch_undecoded(&request?, A::KIND, raw).await },
            |py, response| {
                crate::records_json::undecoded(py, &response)?.map_err(|e| core_error(py, e))
            },
        )
    }

    /// A request whose body must decode as `T`; it comes back as that JSON, and the Python
    /// layer builds its record from it. The body is parsed once: `T` is checked against
    /// the parsed value.
    fn fetch_json<T: DeserializeOwned>(
        &self,
        request: Result<PreparedRequest, Error>,
    ) -> NativeCall {
        let client = self.inner.clone();
        NativeCall::new(
            async move {
                let response = client.execute(&request?).await?;
                let value: serde_json::Value = decode(&response)?;
                if T::deserialize(&value).is_err() {
                    // Only a body of the wrong shape is parsed again, for the error that
                    // quotes it.
                    decode::<T>(&response)?;
                }
                Ok::<_, Error>(value)
            },
            |py, value| Ok(pythonize::pythonize(py, &value)?),
        )
    }

    /// One token-endpoint request; the token comes back as its dict shape.
    fn grant(&self, grant: Grant) -> NativeCall {
        let client = self.inner.clone();
        NativeCall::new(
            async move { request_token(&client, &grant).await },
            |py, token| crate::oauth::token_out(py, &token),
        )
    }
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
                    backoff_base: seconds("backoff", backoff_base)?,
                    backoff_max: seconds("max_backoff", backoff_max)?,
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

    /// Link recommendations: GET for a stored revision, POST when `args` holds `wikitext`.
    fn link_recommendations(&self, args: LinkArgs, raw: bool) -> NativeCall {
        self.fetch(args, raw)
    }

    fn translation_recommendations(&self, args: TranslationArgs, raw: bool) -> NativeCall {
        self.fetch(args, raw)
    }

    fn page_collections(&self) -> NativeCall {
        let request = self.inner.prepare_page_collections();
        self.fetch_json::<Vec<PageCollection>>(request)
    }

    fn page_collection_groups(&self) -> NativeCall {
        let request = self.inner.prepare_page_collection_groups();
        self.fetch_json::<PageCollectionGroups>(request)
    }

    fn page_collection_membership(&self, args: MembershipArgs) -> NativeCall {
        let request = args.prepare(&self.inner);
        self.fetch_json::<PageCollectionMembership>(request)
    }

    fn client_credentials(&self, client_id: String, client_secret: String) -> NativeCall {
        let grant = Grant::ClientCredentials {
            client_id,
            client_secret: Secret::new(client_secret),
        };
        self.grant(grant)
    }

    fn authorization_code(&self, args: CodeGrantArgs) -> NativeCall {
        let grant = Grant::AuthorizationCode {
            code: Secret::new(args.code),
            client_id: args.client_id,
            client_secret: args.client_secret.map(Secret::new),
            code_verifier: args.code_verifier.map(Secret::new),
            redirect_uri: args.redirect_uri,
        };
        self.grant(grant)
    }

    #[pyo3(signature = (refresh_token, client_id, client_secret=None))]
    fn refresh_token(
        &self,
        refresh_token: String,
        client_id: String,
        client_secret: Option<String>,
    ) -> NativeCall {
        let grant = Grant::RefreshToken {
            refresh_token: Secret::new(refresh_token),
            client_id,
            client_secret: client_secret.map(Secret::new),
        };
        self.grant(grant)
    }
}
