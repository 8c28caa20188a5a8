//! What the engine is asked (a request, as the client and the service's query string carry
//! it) and the candidates it answers with, before they become records.

use serde_json::Number;
use wikisuggest_core::params::{RankMethod, TranslationParams};
use wikisuggest_records::{PageCollectionMetadata, TranslationRecommendation};

use crate::catalog::Catalog;

/// Hits the search cluster and `mostviewed` return at most (`gsrlimit=max`, `gpvimlimit=max`).
pub const MAX_CANDIDATES: usize = 500;

/// A request: the client's parameters, and what only a local engine can offer.
#[derive(Debug, Clone)]
pub struct Request {
    pub params: TranslationParams,
    /// Seeds every random draw (the default ranking's shuffle, topic and country samples,
    /// collection orders); `None` draws a seed from the clock, as production's draws vary.
    pub random_seed: Option<u64>,
    /// Popular mode: a title of the top list that is a redirect stands for its article
    /// (production recommends the redirect page itself, with no interlanguage links: it
    /// always counts as missing), and titles that name no page are left out.
    pub follow_redirects: bool,
}

impl Request {
    pub fn new(params: TranslationParams) -> Self {
        Self {
            params,
            random_seed: None,
            follow_redirects: false,
        }
    }
}

/// A request as the service reads its query string (after its field checks): what
/// [`Engine::answer`] takes, and what the reference server parses into. Lists are joined by
/// `|` as they travel; `count` is applied as Python's slice (a negative one drops items from
/// the end).
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub source: String,
    pub target: String,
    pub count: i64,
    pub seed: Option<String>,
    pub topic: Option<String>,
    pub country: Option<String>,
    pub featured_collection: Option<String>,
    pub collections: bool,
    pub lead_section: bool,
    pub include_pageviews: bool,
    pub rank_method: RankMethod,
    pub min_size: Option<i64>,
    pub max_size: Option<i64>,
    pub continue_offset: Option<i64>,
    pub continue_seed: Option<i64>,
    /// See [`Request::random_seed`].
    pub random_seed: Option<u64>,
    /// See [`Request::follow_redirects`].
    pub follow_redirects: bool,
}

impl Query {
    /// The query the client sends for `request`.
    pub fn of(request: &Request) -> Self {
        let p = &request.params;
        let joined = |v: &[String]| (!v.is_empty()).then(|| v.join("|"));
        Self {
            source: p.source.clone(),
            target: p.target.clone(),
            count: p.count,
            seed: joined(&p.seed),
            topic: joined(&p.topic),
            country: joined(&p.country),
            featured_collection: p.featured_collection.clone(),
            collections: p.collections,
            lead_section: p.lead_section,
            include_pageviews: p.include_pageviews,
            rank_method: p.rank_method,
            min_size: p.min_size,
            max_size: p.max_size,
            continue_offset: p.continue_offset,
            continue_seed: p.continue_seed,
            random_seed: request.random_seed,
            follow_redirects: request.follow_redirects,
        }
    }

    pub(crate) fn searching(&self) -> bool {
        self.seed.is_some() || self.topic.is_some() || self.country.is_some()
    }
}

/// Python's `items[:count]` length.
pub(crate) fn keep(len: usize, count: i64) -> usize {
    if count >= 0 {
        usize::try_from(count).unwrap_or(usize::MAX).min(len)
    } else {
        len.saturating_sub(usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX))
    }
}

/// A candidate: a catalog row (or a top-list title with no article), with what the
/// service's item holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Item {
    pub row: Option<usize>,
    pub title: String,
    pub wikidata_id: Option<String>,
    pub rank: i64,
    pub langlinks_count: i64,
    pub size: Option<i64>,
    pub lead_section_size: Option<i64>,
    pub collection: Option<PageCollectionMetadata>,
    /// The day's views of the title, when the catalog has them.
    pub views: Option<i64>,
}

impl Item {
    /// An article of the catalog, as search and popular mode describe it.
    pub(crate) fn of_row(catalog: &Catalog, row: usize, rank: i64, size: Option<i64>) -> Self {
        Self {
            row: Some(row),
            title: catalog.title(row).to_owned(),
            wikidata_id: catalog.wikidata_id(row),
            rank,
            langlinks_count: i64::try_from(catalog.langlinks_count(row)).unwrap_or(i64::MAX),
            size,
            lead_section_size: None,
            collection: None,
            views: catalog.pageviews(row),
        }
    }

    pub(crate) fn into_record(self, include_pageviews: bool) -> TranslationRecommendation {
        TranslationRecommendation {
            title: self.title,
            pageviews: Some(if include_pageviews {
                self.views.unwrap_or(0)
            } else {
                0
            }),
            wikidata_id: self.wikidata_id,
            rank: Some(Number::from(self.rank)),
            langlinks_count: Some(self.langlinks_count),
            size: self.size,
            lead_section_size: self.lead_section_size,
            collection: self.collection,
            extra: serde_json::Map::new(),
        }
    }
}

/// The candidates and, in single-collection mode, the continuation.
pub(crate) struct Outcome {
    pub items: Vec<Item>,
    pub continue_offset: Option<i64>,
    pub continue_seed: Option<i64>,
    /// Single collection: the source titles of the shuffled, cut list the continuation is
    /// counted in.
    pub order: Option<Vec<Option<String>>>,
}

impl Outcome {
    pub(crate) fn plain(items: Vec<Item>) -> Self {
        Self {
            items,
            continue_offset: None,
            continue_seed: None,
            order: None,
        }
    }
}
