//! Production's translation recommendations, answered from a catalog.
//!
//! The mode is chosen as the service chooses it (`recommender_factory.py`, first match
//! wins): one page collection → several page collections → search with a featured
//! collection → search (a seed, topic or country) → popular. Each mode builds the candidates
//! MediaWiki would return — in the order of its `pages` array (page id order, titles that
//! name no page first) — then applies the service's post-processing: disambiguation pages
//! dropped, `rank` numbered, articles the target has dropped, the shuffle or the
//! interlanguage-link order, the size or lead-section filter and the cut to `count`.
//! Random draws come from one generator seeded by the request's `random_seed` (or by the
//! clock), so a seeded answer can be reproduced and `count=5` is the start of `count=500`.

use std::sync::Arc;

use serde_json::Number;
pub use wikisuggest_core::params::RankMethod;
use wikisuggest_core::params::TranslationParams;
use wikisuggest_records::{PageCollectionMetadata, TranslationPage, TranslationRecommendation};

use crate::catalog::Catalog;
use crate::collections::{self, Collections};
use crate::error::{Error, Result};
use crate::similar::{SimilarPages, SimilarQuery};
use crate::topics::{Kind, TagFilter};

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

    fn searching(&self) -> bool {
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

    fn into_record(self, include_pageviews: bool) -> TranslationRecommendation {
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

/// Answers translation requests from a catalog.
pub struct Engine {
    catalog: Catalog,
    /// The search index built with the catalog (seed mode and [`Engine::similar`]).
    index: Option<Arc<wikisuggest_search::SearchIndex>>,
    similar: Option<Arc<dyn SimilarPages>>,
    collections: Option<Collections>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("wiki", &self.catalog.manifest.wiki)
            .field("articles", &self.catalog.len())
            .field("seed_search", &self.similar.is_some())
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Opens the catalog in `dir`, with the search index built beside it if there is one.
    pub fn open(dir: &std::path::Path) -> Result<Self> {
        let catalog = Catalog::open(dir)?;
        let collections = if catalog.has_part("collections") {
            Some(Collections::read(&catalog)?)
        } else {
            None
        };
        let index = if catalog.manifest.search_index {
            Some(Arc::new(crate::seed::open_index(dir)?))
        } else {
            None
        };
        Ok(Self {
            catalog,
            similar: index.clone().map(|i| i as Arc<dyn SimilarPages>),
            index,
            collections,
        })
    }

    /// Seed mode through `similar` instead of the catalog's own index.
    pub fn with_similar(mut self, similar: Arc<dyn SimilarPages>) -> Self {
        self.similar = Some(similar);
        self
    }

    /// Whether the catalog has its search index (seed mode, [`Engine::similar`]).
    pub fn has_search_index(&self) -> bool {
        self.index.is_some()
    }

    /// Articles like the seeds (`morelike:<seeds>`): `(title, score)` pairs, best first, at
    /// most `limit`; disambiguation pages included, the seeds never; empty when no seed names
    /// an article (redirects are followed). Each seed may hold several titles separated by `|`.
    pub fn similar(
        &self,
        seeds: &[String],
        options: &crate::seed::SimilarOptions,
        limit: usize,
    ) -> Result<Vec<(String, f32)>> {
        let index = self.index.as_ref().ok_or_else(crate::seed::no_index)?;
        crate::seed::similar(index, seeds, options, limit)
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn collections(&self) -> Option<&Collections> {
        self.collections.as_ref()
    }

    /// The request checked as the client checks it, with the catalog's wiki as the source.
    fn check(&self, request: &Request) -> Result<()> {
        let p = &request.params;
        p.validate()
            .map_err(|e| Error::invalid(&e.name, e.message))?;
        if p.source != self.catalog.language() {
            return Err(Error::invalid(
                "source",
                format!(
                    "this catalog is of {} ({}), not {:?}",
                    self.catalog.manifest.wiki,
                    self.catalog.language(),
                    p.source
                ),
            ));
        }
        Ok(())
    }

    /// One page of recommendations, as production's service answers `request`.
    pub fn page(&self, request: &Request) -> Result<TranslationPage> {
        self.check(request)?;
        self.answer(&Query::of(request))
    }

    /// The answer to a query as the service reads it (no client-side checks: the reference
    /// server's requests).
    pub fn answer(&self, q: &Query) -> Result<TranslationPage> {
        let mut rng = fastrand::Rng::with_seed(q.random_seed.unwrap_or_else(|| fastrand::u64(..)));
        let outcome = if q.collections {
            let collections = self.collections.as_ref().ok_or_else(|| {
                Error::MissingPart("collections need the catalog's `collections` part".to_owned())
            })?;
            collections::recommend(&self.catalog, collections, q, &mut rng)?
        } else if q.searching() {
            let featured = match &q.featured_collection {
                Some(name) => self.collections.as_ref().and_then(|c| c.find(name)),
                None => None,
            };
            let base = self.search(q, &mut rng)?;
            match featured {
                Some(collection) => {
                    let featured = self.featured_search(q, collection, &mut rng)?;
                    Outcome::plain(collections::interleave_by_ratio(base, featured))
                }
                None => Outcome::plain(base),
            }
        } else {
            Outcome::plain(self.popular(q, &mut rng)?)
        };
        Ok(self.finish(q, outcome))
    }

    /// Production's `BaseRecommender.recommend`: the size or lead-section filter, the cut to
    /// `count`, and the items' views.
    fn finish(&self, p: &Query, outcome: Outcome) -> TranslationPage {
        let Outcome {
            mut items,
            continue_offset,
            continue_seed,
            order,
        } = outcome;
        let bounded = p.min_size.is_some() || p.max_size.is_some();
        let fits = |size: Option<i64>| {
            size.is_some_and(|s| {
                p.min_size.is_none_or(|min| s >= min) && p.max_size.is_none_or(|max| s <= max)
            })
        };
        // `action=parse&redirects=1`: a redirect's lead is its target's.
        let lead_of = |item: &Item| {
            item.row
                .or_else(|| self.catalog.resolve_title(&item.title).ok().flatten())
                .and_then(|r| self.catalog.lead_section_size(r))
        };
        if !p.lead_section && bounded {
            items.retain(|i| fits(i.size));
        } else if p.lead_section && bounded {
            items.retain_mut(|i| {
                let lead = lead_of(i);
                i.lead_section_size = lead;
                fits(lead)
            });
        }
        items.truncate(keep(items.len(), p.count));
        if p.lead_section && !bounded {
            for item in &mut items {
                item.lead_section_size = lead_of(item);
            }
        }
        let continue_offset = match (&order, continue_offset) {
            (Some(order), Some(offset)) => Some(collections::continue_offset(
                offset,
                order,
                items.last().map(|i| i.title.as_str()),
            )),
            (_, offset) => offset,
        };
        TranslationPage {
            items: items
                .into_iter()
                .map(|i| i.into_record(p.include_pageviews))
                .collect(),
            continue_offset,
            continue_seed,
        }
    }

    /// The query's `topic` and `country` as the search cluster reads them.
    fn tag_filter(q: &Query) -> TagFilter {
        TagFilter::from_request(q.topic.as_deref(), q.country.as_deref())
    }

    fn row_matches(&self, filter: &TagFilter, row: usize) -> bool {
        filter.matches(|kind: Kind| self.catalog.labels(kind, row))
    }

    /// The search's hits as MediaWiki's `pages` array holds them: page-id order.
    fn search_hits(
        &self,
        p: &Query,
        restrict: Option<&(dyn Fn(usize) -> bool + Sync)>,
        random: bool,
        rng: &mut fastrand::Rng,
    ) -> Result<Vec<usize>> {
        let filter = Self::tag_filter(p);
        if !filter.is_empty() && !self.catalog.has_tags {
            return Err(Error::MissingPart(
                "topic and country need the catalog's `cirrus` part".to_owned(),
            ));
        }
        let allowed = |row: usize| {
            (filter.is_empty() || self.row_matches(&filter, row)) && restrict.is_none_or(|f| f(row))
        };
        let mut rows: Vec<usize> = if p.seed.is_none() {
            (0..self.catalog.len()).filter(|&r| allowed(r)).collect()
        } else {
            let similar = self.similar.as_ref().ok_or_else(crate::seed::no_index)?;
            let seeds: Vec<String> = p
                .seed
                .as_deref()
                .unwrap_or_default()
                .split('|')
                .map(str::to_owned)
                .collect();
            let within = |page_id: u64| self.catalog.row_of_page(page_id).is_some_and(&allowed);
            let needs_filter = !filter.is_empty() || restrict.is_some();
            let hits = similar
                .similar(&SimilarQuery {
                    seeds: &seeds,
                    limit: if random { usize::MAX } else { MAX_CANDIDATES },
                    within: needs_filter.then_some(&within as &(dyn Fn(u64) -> bool + Sync)),
                })
                .map_err(Error::Search)?;
            hits.into_iter()
                .filter_map(|id| self.catalog.row_of_page(id))
                .filter(|&r| allowed(r))
                .collect()
        };
        if random {
            // `gsrsort=random`: a uniform sample of the matches.
            rng.shuffle(&mut rows);
        }
        rows.truncate(MAX_CANDIDATES);
        // Rows are in page-id order in the catalog.
        rows.sort_unstable();
        Ok(rows)
    }

    /// Search mode (`search_recommender.py`).
    fn search(&self, p: &Query, rng: &mut fastrand::Rng) -> Result<Vec<Item>> {
        let random = p.topic.is_some() || p.country.is_some();
        let rows = self.search_hits(p, None, random, rng)?;
        let items: Vec<Item> = rows
            .into_iter()
            .filter(|&r| !self.catalog.is_disambiguation(r))
            .zip(1..)
            .filter(|&(r, _)| self.catalog.is_missing(r, &p.target))
            .map(|(r, rank)| {
                Item::of_row(
                    &self.catalog,
                    r,
                    rank,
                    self.catalog.text_bytes(r).or(Some(0)),
                )
            })
            .collect();
        Ok(sort(items, p.rank_method, rng))
    }

    /// The featured collection's articles among the search's hits (no random order: the
    /// service sends that query without `gsrsort`), unranked, with the collection.
    fn featured_search(
        &self,
        p: &Query,
        collection: &collections::Collection,
        rng: &mut fastrand::Rng,
    ) -> Result<Vec<Item>> {
        let members = collection.rows_in(&self.catalog);
        let restrict = |row: usize| members.contains(&row);
        let restrict: &(dyn Fn(usize) -> bool + Sync) = &restrict;
        let rows = self.search_hits(p, Some(restrict), false, rng)?;
        let metadata = collection.metadata(&p.target);
        Ok(rows
            .into_iter()
            .filter(|&r| !self.catalog.is_disambiguation(r))
            .filter(|&r| self.catalog.is_missing(r, &p.target))
            .map(|r| Item {
                collection: Some(metadata.clone()),
                ..Item::of_row(&self.catalog, r, 0, self.catalog.text_bytes(r).or(Some(0)))
            })
            .collect())
    }

    /// Popular mode (`popular_recommender.py`): the first 500 titles of the day's top list
    /// as MediaWiki resolves them (titles naming no page first, newest first; then pages by
    /// id), namespace 0 only.
    fn popular(&self, p: &Query, rng: &mut fastrand::Rng) -> Result<Vec<Item>> {
        let follow_redirects = p.follow_redirects;
        let top = self.catalog.top_list()?;
        let mut missing_titles: Vec<Item> = Vec::new();
        let mut pages: Vec<(i64, Item, bool)> = Vec::new();
        let mut seen_pages = std::collections::HashSet::new();
        let mut seen_missing = std::collections::HashSet::new();
        for entry in top.iter().take(MAX_CANDIDATES) {
            if entry.namespace != Some(0) {
                continue;
            }
            let title = entry.title.clone().unwrap_or_default();
            match entry.page_id {
                None => {
                    if follow_redirects || !seen_missing.insert(title.clone()) {
                        continue;
                    }
                    missing_titles.push(Item {
                        row: None,
                        title,
                        wikidata_id: None,
                        rank: 0,
                        langlinks_count: 0,
                        size: Some(0),
                        lead_section_size: None,
                        collection: None,
                        views: Some(entry.views),
                    });
                }
                Some(page_id) => {
                    let article = u64::try_from(page_id)
                        .ok()
                        .and_then(|id| self.catalog.row_of_page(id));
                    let redirect_row = if follow_redirects && entry.is_redirect {
                        match entry.redirect_target.as_deref() {
                            Some(target) => self.catalog.row_of_title(target),
                            None => continue,
                        }
                    } else {
                        None
                    };
                    let (key, item, disambiguation) = match (redirect_row, article) {
                        (Some(row), _) | (None, Some(row)) => (
                            i64::try_from(self.catalog.page_id(row)).unwrap_or(i64::MAX),
                            Item::of_row(
                                &self.catalog,
                                row,
                                0,
                                self.catalog.page_len(row).or(Some(0)),
                            ),
                            self.catalog.is_disambiguation(row),
                        ),
                        (None, None) => {
                            if follow_redirects && entry.is_redirect {
                                continue;
                            }
                            // A page that is no article: a redirect, as production sees it.
                            (
                                page_id,
                                Item {
                                    row: None,
                                    title: title.clone(),
                                    wikidata_id: entry.wikidata_id.clone(),
                                    rank: 0,
                                    langlinks_count: i64::try_from(entry.langlinks.len())
                                        .unwrap_or(0),
                                    size: Some(entry.page_len.unwrap_or(0)),
                                    lead_section_size: None,
                                    collection: None,
                                    views: Some(entry.views),
                                },
                                entry.disambiguation,
                            )
                        }
                    };
                    if seen_pages.insert(key) {
                        pages.push((key, item, disambiguation));
                    }
                }
            }
        }
        // MediaWiki's `pages` array: pages that do not exist have negative ids, given in
        // the order met (so they sort newest first), before the pages, by id.
        missing_titles.reverse();
        pages.sort_by_key(|(key, _, _)| *key);
        let langlinks_of = |item: &Item| -> Vec<String> {
            match item.row {
                Some(row) => self
                    .catalog
                    .langlink_codes(row)
                    .map(str::to_owned)
                    .collect(),
                None => top
                    .iter()
                    .find(|e| e.title.as_deref() == Some(item.title.as_str()))
                    .map(|e| e.langlinks.clone())
                    .unwrap_or_default(),
            }
        };
        let items: Vec<Item> = missing_titles
            .into_iter()
            .map(|i| (i, false))
            .chain(pages.into_iter().map(|(_, i, d)| (i, d)))
            .zip(1..)
            .filter(|((_, disambiguation), _)| !disambiguation)
            .filter(|((item, _), _)| {
                crate::wiki::is_missing(&p.target, langlinks_of(item).iter().map(String::as_str))
            })
            .map(|((item, _), rank)| Item { rank, ..item })
            .collect();
        Ok(sort(items, p.rank_method, rng))
    }
}

/// `sort_recommendations`: a shuffle (production sorts by a random key), or the
/// interlanguage-link count, most first, ties kept in order.
pub(crate) fn sort(mut items: Vec<Item>, method: RankMethod, rng: &mut fastrand::Rng) -> Vec<Item> {
    match method {
        RankMethod::Default => rng.shuffle(&mut items),
        RankMethod::Sitelinks => items.sort_by_key(|i| std::cmp::Reverse(i.langlinks_count)),
    }
    items
}
