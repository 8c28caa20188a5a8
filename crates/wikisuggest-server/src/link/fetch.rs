//! GET link requests can read the page from a wiki's Action API, as production's service
//! does (link-engine.md §6.6): one query for the latest revision of the title, or for the
//! given revision id (the title is then not sent), taking the main slot's wikitext, the page
//! id and the revision id.

use std::collections::BTreeMap;
use std::sync::Arc;

use wikisuggest_core::mediawiki::{ActionApi, ActionApiConfig};

use crate::error::{ApiError, Error, Result};

/// Identifies the server to the wikis it reads, as Wikimedia's User-Agent policy asks.
const CONTACT: &str = "(https://github.com/wikisuggest/wikisuggest; reference server)";

pub struct FetchedPage {
    pub wikitext: String,
    pub revid: i64,
    pub pageid: u64,
}

/// One Action API client per configured wiki; a bad URL stops start-up.
pub fn clients(
    specs: &[(String, String)],
    version: &str,
) -> Result<BTreeMap<String, Arc<ActionApi>>> {
    let user_agent = format!("wikisuggest-server/{version} {CONTACT}");
    let mut clients = BTreeMap::new();
    for (wiki, url) in specs {
        let config = ActionApiConfig {
            maxlag: None,
            ..ActionApiConfig::new(url.clone(), user_agent.clone())
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
        log::error!("fetching {raw_title:?} from {} failed: {e}", api.api_url());
        ApiError::Internal(format!("could not fetch the page: {e}"))
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
