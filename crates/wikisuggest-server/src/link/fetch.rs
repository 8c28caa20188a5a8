//! GET link requests can read the page from a wiki's Action API, as production's service
//! does: one query for the latest revision of the title, or for the
//! given revision id (the title is then not sent), taking the main slot's wikitext, the page
//! id and the revision id.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use wikisuggest_core::mediawiki::{ActionApi, ActionApiConfig};
use wikisuggest_core::retry::RetryPolicy;

use crate::error::{ApiError, Error, Result};

/// Identifies the server to the wikis it reads, as Wikimedia's User-Agent policy asks.
const CONTACT: &str = "(https://github.com/wikisuggest/wikisuggest; reference server)";

pub struct FetchedPage {
    pub wikitext: String,
    pub revid: i64,
    pub pageid: u64,
}

/// How the server asks a wiki: one attempt per client request. The client that asked the
/// server has its own retry policy (the service client retries a 502 or 504 with back-off),
/// and retries here would multiply with it: four attempts here times four there is sixteen
/// requests to a wiki that is already failing. A request to the wiki is given a third of
/// the server's request timeout at most, so the client hears a 504 from the server rather
/// than a 408.
fn upstream_policy() -> RetryPolicy {
    RetryPolicy {
        max_retries: 0,
        ..RetryPolicy::default()
    }
}

/// One Action API client per configured wiki; a bad URL stops start-up.
pub fn clients(
    specs: &[(String, String)],
    version: &str,
    request_timeout: Duration,
) -> Result<BTreeMap<String, Arc<ActionApi>>> {
    let user_agent = format!("wikisuggest-server/{version} {CONTACT}");
    let timeout = (request_timeout / 3).max(Duration::from_secs(1));
    let mut clients = BTreeMap::new();
    for (wiki, url) in specs {
        let base = ActionApiConfig::new(url.clone(), user_agent.clone());
        let config = ActionApiConfig {
            maxlag: None,
            retry: upstream_policy(),
            timeout,
            connect_timeout: base.connect_timeout.min(timeout),
            ..base
        };
        let api = ActionApi::new(config, None)
            .map_err(|e| Error::Runtime(format!("--wiki-api {wiki}: {e}")))?;
        clients.insert(wiki.clone(), Arc::new(api));
    }
    Ok(clients)
}

/// The page to recommend links for; `None` when the wiki has no such page or revision.
/// As in production, a non-zero `revision` is fetched by id and reported as the `revid`.
pub async fn page(
    api: &ActionApi,
    raw_title: &str,
    revision: i64,
) -> Result<Option<FetchedPage>, ApiError> {
    let fetched = if revision != 0 {
        match u64::try_from(revision) {
            Ok(id) => api.page(None, Some(id)).await,
            Err(_) => return Ok(None),
        }
    } else {
        api.page(Some(raw_title), None).await
    };
    let page = fetched.map_err(|e| {
        log::warn!("fetching {raw_title:?} from {} failed: {e}", api.api_url());
        upstream_error(&e)
    })?;
    Ok(page.map(|page| FetchedPage {
        wikitext: page.wikitext,
        revid: if revision != 0 {
            revision
        } else {
            i64::try_from(page.revid).unwrap_or(i64::MAX)
        },
        pageid: page.pageid,
    }))
}

/// The wiki failed, not the server: 504 when it did not answer in time, 502 otherwise, so
/// that the client's retry policy (which retries both) decides whether to ask again.
fn upstream_error(error: &wikisuggest_core::Error) -> ApiError {
    use wikisuggest_core::Error as E;
    let (status, message) = match error {
        E::Timeout { .. } => (
            StatusCode::GATEWAY_TIMEOUT,
            "The wiki did not answer in time".to_owned(),
        ),
        E::Api { code, .. } if code.starts_with("http-") => (
            StatusCode::BAD_GATEWAY,
            format!(
                "The wiki answered HTTP {}",
                code.trim_start_matches("http-")
            ),
        ),
        E::Api { code, .. } => (
            StatusCode::BAD_GATEWAY,
            format!("The wiki refused the query ({code})"),
        ),
        E::Transport { .. } => (
            StatusCode::BAD_GATEWAY,
            "The wiki could not be reached".to_owned(),
        ),
        _ => (
            StatusCode::BAD_GATEWAY,
            "The wiki's answer could not be read".to_owned(),
        ),
    };
    ApiError::Unavailable {
        status,
        message,
        retry_after: None,
    }
}
