//! The HTTP client for the three service operations.
//!
//! One [`Transport`] (connection pool, TLS, bounded bodies, redaction, retries) per `Client`;
//! every request goes through [`Client::execute`], which says what an answer means: a
//! success, an error to retry, or a rejected token to renew and replay once.

use std::fmt;
use std::sync::Arc;

use reqwest::header::{ACCEPT, HeaderValue};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;

pub use crate::auth::{AuthProvider, BoxFuture, StaticToken};
use crate::config::{ClientConfig, check_credentials_transport, normalise_base_url};
use crate::encode::{Query, plain_segment, title_segment};
use crate::error::{Error, Result};
use crate::http_error::{Endpoint, HttpError, truncate_chars};
use crate::limits::{RequestLimits, default_concurrency};
use crate::models::{
    LinkRecommendationSet, PageCollection, PageCollectionGroups, PageCollectionMembership,
    TranslationPage, TranslationRecommendation, TranslationResponse,
};
use crate::params::{
    LinkParams, MembershipParams, RevisionBody, TranslationParams, translation_query,
};
use crate::redact::Redactor;
pub use crate::transport::Body;
pub(crate) use crate::transport::LOG_TARGET;
use crate::transport::{Outgoing, Redirects, Reply, Transport, TransportConfig, Verdict};

/// A request before it is sent: everything [`Client::execute`] needs to send it again.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    pub method: Method,
    pub url: reqwest::Url,
    pub body: Body,
    pub endpoint: Endpoint,
    /// Whether to attach the bearer token of the client's auth provider.
    pub authenticate: bool,
}

/// A successful response.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub body: Vec<u8>,
    pub url: String,
    /// The credentials the request carried, to cut out of any text quoting this body.
    pub redactor: Redactor,
}

pub struct Client {
    transport: Transport,
    base_url: BaseUrl,
    auth_url: BaseUrl,
    config: ClientConfig,
    auth: Option<Arc<dyn AuthProvider>>,
    limits: RequestLimits,
}

/// A decoded response body.
#[derive(Debug, Clone, PartialEq)]
pub enum Fetched {
    LinkRecommendationSet(Box<LinkRecommendationSet>),
    TranslationRecommendations(Vec<TranslationRecommendation>),
    /// The body as decoded JSON (after it was checked against its record type).
    Raw(serde_json::Value),
}

/// Which record a response body must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseKind {
    LinkRecommendationSet,
    TranslationRecommendations,
}

/// A successful response to a record request, its body not decoded yet: a reader that
/// builds its own objects from the body (the Python binding, once per result) decodes it
/// there in one pass, instead of into [`Fetched`] on an I/O thread and then once more.
#[derive(Debug)]
pub struct Undecoded {
    pub response: RawResponse,
    pub kind: ResponseKind,
    /// The body is wanted exactly as decoded (still checked against the record type).
    pub raw: bool,
}

impl Undecoded {
    /// The body decoded as its kind: the typed record, or with `raw` the JSON as it is.
    pub fn decode(&self) -> Result<Fetched> {
        let fetched = match self.kind {
            ResponseKind::LinkRecommendationSet => {
                Fetched::LinkRecommendationSet(Box::new(decode(&self.response)?))
            }
            ResponseKind::TranslationRecommendations => Fetched::TranslationRecommendations(
                decode::<TranslationResponse>(&self.response)?.into_recommendations(),
            ),
        };
        if self.raw {
            Ok(Fetched::Raw(decode(&self.response)?))
        } else {
            Ok(fetched)
        }
    }
}

/// A normalised base URL (see [`normalise_base_url`]) and its parse, made once: a request's
/// URL is the base's with its path and query set, instead of the whole text parsed again per
/// request (its scheme and host, which cost most to parse, never change).
#[derive(Clone)]
struct BaseUrl {
    text: String,
    parsed: reqwest::Url,
    /// The base's own path without its trailing slash (`""` for a bare host).
    prefix: String,
}

impl BaseUrl {
    fn new(text: String) -> Result<Self> {
        let parsed = reqwest::Url::parse(&text)
            .map_err(|e| Error::Internal(format!("bad base URL {text:?}: {e}")))?;
        let prefix = parsed.path().trim_end_matches('/').to_owned();
        Ok(Self {
            text,
            parsed,
            prefix,
        })
    }

    /// The URL of `path` (which starts with `/`) and `query` under this base: the same URL
    /// as parsing `{base}{path}?{query}` whole.
    fn join(&self, path: &str, query: &Query) -> reqwest::Url {
        let mut url = self.parsed.clone();
        url.set_path(&format!("{}{path}", self.prefix));
        if !query.is_empty() {
            url.set_query(Some(&query.encode()));
        }
        url
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base_url.text)
            .field("auth_url", &self.auth_url.text)
            .field("user_agent", &self.transport.user_agent())
            .field("authenticated", &self.auth.is_some())
            .field("max_concurrency", &self.limits.concurrency())
            .finish()
    }
}

impl Client {
    pub fn new(config: ClientConfig, auth: Option<Arc<dyn AuthProvider>>) -> Result<Self> {
        let base_url = normalise_base_url("base_url", &config.base_url)?;
        let auth_url = normalise_base_url("auth_url", &config.auth_url)?;
        let transport = Transport::new(&TransportConfig {
            user_agent: crate::user_agent::compose(&config.user_agent)?,
            timeout: Some(config.timeout),
            connect_timeout: config.connect_timeout,
            read_timeout: None,
            retry: config.retry.clone(),
            max_body_size: config.max_body_size,
            decompress: true,
            redirects: Redirects::Never,
        })?;
        let concurrency = config
            .max_concurrency
            .unwrap_or_else(|| default_concurrency(&base_url));
        let limits = RequestLimits::new(concurrency, config.rate_limit)?;
        if auth.is_some() {
            check_credentials_transport("base_url", &base_url, config.allow_insecure_http)?;
        }
        Ok(Self {
            transport,
            base_url: BaseUrl::new(base_url)?,
            auth_url: BaseUrl::new(auth_url)?,
            config,
            auth,
            limits,
        })
    }

    /// A client for the token endpoint that shares this one's connection pool, User-Agent,
    /// timeouts and retry policy, but never sends a bearer token. `auth_url` overrides this
    /// client's when given. Token managers attached to a client use it, so token requests
    /// obey the same policy as every other request without a second connection pool.
    ///
    /// The request limits are not shared: they are set for the service host, and a token
    /// renewal paced behind a queue of service requests would hold all of them up.
    pub fn token_transport(&self, auth_url: Option<&str>) -> Result<Client> {
        let auth_url = match auth_url {
            Some(url) => normalise_base_url("auth_url", url)?,
            None => self.auth_url.text.clone(),
        };
        let limits = RequestLimits::new(default_concurrency(&auth_url), None)?;
        Ok(Self {
            transport: self.transport.clone(),
            base_url: self.base_url.clone(),
            auth_url: BaseUrl::new(auth_url.clone())?,
            config: ClientConfig {
                auth_url,
                max_concurrency: None,
                rate_limit: None,
                ..self.config.clone()
            },
            auth: None,
            limits,
        })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    pub fn base_url(&self) -> &str {
        &self.base_url.text
    }

    pub fn auth_url(&self) -> &str {
        &self.auth_url.text
    }

    pub fn user_agent(&self) -> &str {
        self.transport.user_agent()
    }

    pub fn has_auth(&self) -> bool {
        self.auth.is_some()
    }

    pub fn max_concurrency(&self) -> usize {
        self.limits.concurrency()
    }

    fn link_path(params: &LinkParams) -> String {
        format!(
            "/service/linkrecommendation/v1/linkrecommendations/{}/{}/{}",
            plain_segment(&params.project),
            plain_segment(&params.domain),
            title_segment(&params.page_title)
        )
    }

    /// Operation 1 as a prepared request.
    pub fn prepare_link_recommendations(
        &self,
        params: &LinkParams,
        revision: Option<i64>,
    ) -> Result<PreparedRequest> {
        params.validate()?;
        let mut query = params.query(true);
        if let Some(revision) = revision {
            if revision <= 0 {
                return Err(Error::invalid(
                    "revision",
                    format!("must be a positive integer, got {revision}"),
                ));
            }
            query.push("revision", revision.to_string());
        }
        Ok(PreparedRequest {
            method: Method::GET,
            url: self.base_url.join(&Self::link_path(params), &query),
            body: Body::None,
            endpoint: Endpoint::Service,
            authenticate: true,
        })
    }

    /// Operation 2 as a prepared request. Sections to exclude travel in the body, where
    /// they take precedence over the query string.
    pub fn prepare_link_recommendations_for_revision(
        &self,
        params: &LinkParams,
        body: &RevisionBody,
    ) -> Result<PreparedRequest> {
        params.validate()?;
        body.validate()?;
        let body = RevisionBody {
            sections_to_exclude: params.options.sections_to_exclude.clone(),
            ..body.clone()
        };
        let json = serde_json::to_vec(&body)
            .map_err(|e| Error::Internal(format!("could not encode the request body: {e}")))?;
        Ok(PreparedRequest {
            method: Method::POST,
            url: self
                .base_url
                .join(&Self::link_path(params), &params.query(false)),
            body: Body::Json(json),
            endpoint: Endpoint::Service,
            authenticate: true,
        })
    }

    /// Operation 3 as a prepared request.
    pub fn prepare_translation_recommendations(
        &self,
        params: &TranslationParams,
    ) -> Result<PreparedRequest> {
        params.validate()?;
        Ok(PreparedRequest {
            method: Method::GET,
            url: self.base_url.join(
                "/service/lw/recommendation/api/v1/translation",
                &translation_query(params),
            ),
            body: Body::None,
            endpoint: Endpoint::Service,
            authenticate: true,
        })
    }

    /// `GET …/translation/<route>` of the translation service's collection routes.
    fn prepare_translation_route(&self, route: &str, query: &Query) -> Result<PreparedRequest> {
        Ok(PreparedRequest {
            method: Method::GET,
            url: self.base_url.join(
                &format!("/service/lw/recommendation/api/v1/translation/{route}"),
                query,
            ),
            body: Body::None,
            endpoint: Endpoint::Service,
            authenticate: true,
        })
    }

    /// `/translation/page-collections` as a prepared request.
    pub fn prepare_page_collections(&self) -> Result<PreparedRequest> {
        self.prepare_translation_route("page-collections", &Query::new())
    }

    /// `/translation/page-collection-groups` as a prepared request.
    pub fn prepare_page_collection_groups(&self) -> Result<PreparedRequest> {
        self.prepare_translation_route("page-collection-groups", &Query::new())
    }

    /// `/translation/page-collection-membership` as a prepared request.
    pub fn prepare_page_collection_membership(
        &self,
        params: &MembershipParams,
    ) -> Result<PreparedRequest> {
        params.validate()?;
        self.prepare_translation_route("page-collection-membership", &params.query())
    }

    /// A form POST to the OAuth 2.0 token endpoint (never authenticated with a bearer). The
    /// form always holds a credential, so a clear-text `auth_url` is refused unless it is
    /// loopback or the client allows insecure http.
    pub fn prepare_token_request(&self, form: &Query) -> Result<PreparedRequest> {
        check_credentials_transport(
            "auth_url",
            &self.auth_url.text,
            self.config.allow_insecure_http,
        )?;
        Ok(PreparedRequest {
            method: Method::POST,
            url: self
                .auth_url
                .join("/w/rest.php/oauth2/access_token", &Query::new()),
            body: Body::Form(form.encode().into_bytes()),
            endpoint: Endpoint::Token,
            authenticate: false,
        })
    }

    pub async fn link_recommendations(
        &self,
        params: &LinkParams,
        revision: Option<i64>,
    ) -> Result<LinkRecommendationSet> {
        let request = self.prepare_link_recommendations(params, revision)?;
        decode(&self.execute(&request).await?)
    }

    pub async fn link_recommendations_for_revision(
        &self,
        params: &LinkParams,
        body: &RevisionBody,
    ) -> Result<LinkRecommendationSet> {
        let request = self.prepare_link_recommendations_for_revision(params, body)?;
        decode(&self.execute(&request).await?)
    }

    pub async fn translation_recommendations(
        &self,
        params: &TranslationParams,
    ) -> Result<Vec<TranslationRecommendation>> {
        let request = self.prepare_translation_recommendations(params)?;
        let response: TranslationResponse = decode(&self.execute(&request).await?)?;
        Ok(response.into_recommendations())
    }

    /// Operation 3 as a page: the items and the continuation (single-collection mode).
    pub async fn translation_page(&self, params: &TranslationParams) -> Result<TranslationPage> {
        let request = self.prepare_translation_recommendations(params)?;
        let response: TranslationResponse = decode(&self.execute(&request).await?)?;
        Ok(response.into_page())
    }

    pub async fn page_collections(&self) -> Result<Vec<PageCollection>> {
        decode(&self.execute(&self.prepare_page_collections()?).await?)
    }

    pub async fn page_collection_groups(&self) -> Result<PageCollectionGroups> {
        decode(
            &self
                .execute(&self.prepare_page_collection_groups()?)
                .await?,
        )
    }

    pub async fn page_collection_membership(
        &self,
        params: &MembershipParams,
    ) -> Result<PageCollectionMembership> {
        let request = self.prepare_page_collection_membership(params)?;
        decode(&self.execute(&request).await?)
    }

    /// Send `request` and decode its body as `kind`: the typed record, or with `raw` the body
    /// exactly as decoded (still checked against the record type).
    pub async fn fetch(
        &self,
        request: &PreparedRequest,
        kind: ResponseKind,
        raw: bool,
    ) -> Result<Fetched> {
        self.fetch_undecoded(request, kind, raw).await?.decode()
    }

    /// Send `request` and return its successful response for decoding as `kind` later
    /// (see [`Undecoded`]).
    pub async fn fetch_undecoded(
        &self,
        request: &PreparedRequest,
        kind: ResponseKind,
        raw: bool,
    ) -> Result<Undecoded> {
        Ok(Undecoded {
            response: self.execute(request).await?,
            kind,
            raw,
        })
    }

    /// Send a prepared request: retries, token attachment and one replay after a rejected
    /// token. Returns the successful response or the error of the last attempt.
    pub async fn execute(&self, request: &PreparedRequest) -> Result<RawResponse> {
        let auth = if request.authenticate {
            self.auth.as_deref()
        } else {
            None
        };
        let prepare = || {
            let mut outgoing = Outgoing::new(
                request.method.clone(),
                request.url.clone(),
                request.body.clone(),
            );
            outgoing
                .headers
                .insert(ACCEPT, HeaderValue::from_static("application/json"));
            Ok(outgoing)
        };
        let judge = |reply: Reply| self.judge(request, auth.is_some(), reply);
        self.transport
            .exchange(auth, Some(&self.limits), prepare, judge)
            .await
    }

    /// What one answer of the service means.
    fn judge(
        &self,
        request: &PreparedRequest,
        sent_token: bool,
        reply: Reply,
    ) -> Verdict<RawResponse> {
        if reply.is_success() {
            return Verdict::Done(RawResponse {
                status: reply.status,
                body: reply.body,
                url: reply.url,
                redactor: reply.redactor,
            });
        }
        // The body is redacted already; the parsed fields are redacted again by the
        // transport, for secrets that only appear once JSON escapes are decoded.
        let mut error = HttpError::from_response(
            request.endpoint,
            request.method.as_str(),
            reply.url,
            reply.status,
            &reply.headers,
            &reply.body,
        );
        if reply.status == StatusCode::UNAUTHORIZED.as_u16() && !sent_token && request.authenticate
        {
            error.detail = Some(format!(
                "{}; this operation needs an OAuth 2.0 access token or a personal API token: \
                 pass auth= to the client",
                error
                    .detail
                    .as_deref()
                    .unwrap_or("no credentials were sent")
            ));
        }
        if sent_token && error.token_rejected() {
            return Verdict::TokenRejected(error.into());
        }
        // Only GET is retried on any listed status; other methods only on 429, which says
        // the server refused the request without processing it.
        let retryable = self.config.retry.statuses.contains(&error.status)
            && (request.method == Method::GET || error.status == 429);
        if retryable {
            let after = error.retry_after;
            return Verdict::Retry {
                error: error.into(),
                after,
            };
        }
        Verdict::Fail(error.into())
    }
}

/// Decode a successful body into `T`, or a [`Error::Decode`] quoting its start.
pub fn decode<T: DeserializeOwned>(response: &RawResponse) -> Result<T> {
    // The body is checked as UTF-8 once, in one pass, rather than string by string.
    let parsed = match std::str::from_utf8(&response.body) {
        Ok(text) => serde_json::from_str(text).map_err(|e| e.to_string()),
        Err(e) => Err(format!("the body is not UTF-8: {e}")),
    };
    parsed.map_err(|message| {
        // Redacted before truncation, so a secret cut in half by the snippet's end is gone too.
        let text = response
            .redactor
            .text(&String::from_utf8_lossy(&response.body));
        Error::Decode {
            url: response.url.clone(),
            status: response.status,
            message: response.redactor.text(&message),
            snippet: truncate_chars(&text, 120),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::LinkRecommendationSet;

    /// A URL made from the parsed base equals the whole text parsed, whatever the base's
    /// path and the title (slashes, dot segments, reserved and non-ASCII characters).
    #[test]
    fn request_urls_equal_the_whole_text_parsed() {
        let bases = [
            "http://127.0.0.1:8080",
            "https://api.wikimedia.org",
            "https://EXAMPLE.org/prefix/sub/",
            "http://[::1]:9/a%20b",
        ];
        let titles = [
            "Cat",
            "AC/DC",
            "..",
            ".",
            "a/../b",
            "Café au lait",
            "What?#x",
            "100%_pure",
            "C++ (language)",
            "\\back\\slash",
            "日本語",
        ];
        for base in bases {
            let text = normalise_base_url("base_url", base).unwrap();
            let parsed = BaseUrl::new(text.clone()).unwrap();
            for title in titles {
                let path = format!("/x/{}/{}", plain_segment("wikipedia"), title_segment(title));
                let mut query = Query::new();
                query.push("threshold", "0.5").push("seed", title);
                for query in [Query::new(), query] {
                    let mut whole = format!("{text}{path}");
                    if !query.is_empty() {
                        whole.push('?');
                        whole.push_str(&query.encode());
                    }
                    let expected = reqwest::Url::parse(&whole).unwrap();
                    assert_eq!(parsed.join(&path, &query), expected, "{whole}");
                }
            }
        }
    }

    fn response(body: &[u8]) -> RawResponse {
        RawResponse {
            status: 200,
            body: body.to_vec(),
            url: "http://127.0.0.1/x".to_owned(),
            redactor: Redactor::default(),
        }
    }

    fn client() -> Client {
        let mut config = ClientConfig::new("Test/1.0 (test@example.org)");
        config.base_url = "http://127.0.0.1:9".to_owned();
        Client::new(config, None).unwrap()
    }

    #[test]
    fn translation_routes_are_prepared() {
        let c = client();
        let base = "http://127.0.0.1:9/service/lw/recommendation/api/v1/translation";
        let params = TranslationParams {
            collections: true,
            seed: vec!["Wiki99/Food".into()],
            continue_offset: Some(4),
            continue_seed: Some(8),
            ..TranslationParams::new("en", "fr")
        };
        let url = c.prepare_translation_recommendations(&params).unwrap().url;
        assert!(
            url.as_str()
                .starts_with(&format!("{base}?source=en&target=fr&"))
        );
        assert!(
            url.as_str().ends_with("&continue_offset=4&continue_seed=8"),
            "{url}"
        );
        assert_eq!(
            c.prepare_page_collections().unwrap().url.as_str(),
            format!("{base}/page-collections")
        );
        assert_eq!(
            c.prepare_page_collection_groups().unwrap().url.as_str(),
            format!("{base}/page-collection-groups")
        );
        let membership = MembershipParams::titles("Wiki99/Food", "fr", &["Pain", "Fromage"]);
        assert_eq!(
            c.prepare_page_collection_membership(&membership)
                .unwrap()
                .url
                .as_str(),
            format!(
                "{base}/page-collection-membership?collection=Wiki99%2FFood&language=fr&titles=Pain%7CFromage"
            )
        );
        let bad = TranslationParams {
            continue_offset: Some(-1),
            ..params
        };
        assert!(matches!(
            c.prepare_translation_recommendations(&bad),
            Err(Error::InvalidParameter { .. })
        ));
    }

    #[test]
    fn decode_reads_a_body_and_rejects_broken_ones() {
        let ok = b"{\"links\": [], \"links_count\": 0, \"page_title\": \"Caf\\u00e9 \xc3\xa9\", \"x\": 1}";
        let set: LinkRecommendationSet = decode(&response(ok)).unwrap();
        assert_eq!(set.page_title.as_deref(), Some("Caf\u{e9} \u{e9}"));
        assert_eq!(set.extra.get("x"), Some(&serde_json::json!(1)));
        for broken in [&b"{\"links\": [\xff]}"[..], b"{\"links\": [", b"<html>"] {
            match decode::<LinkRecommendationSet>(&response(broken)) {
                Err(Error::Decode {
                    message, snippet, ..
                }) => {
                    assert!(!message.is_empty());
                    assert!(!snippet.is_empty());
                }
                other => panic!("{broken:?}: {other:?}"),
            }
        }
    }
}
