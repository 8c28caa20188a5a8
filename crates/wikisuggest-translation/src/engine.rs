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

pub use wikisuggest_core::params::RankMethod;
use wikisuggest_records::TranslationPage;

use crate::catalog::Catalog;
use crate::collections::{self, Collections};
use crate::error::{Error, Result};
use crate::query::{Item, Outcome, keep};
pub use crate::query::{MAX_CANDIDATES, Query, Request};
use crate::similar::{SimilarPages, SimilarQuery};
use crate::topics::{Kind, TagFilter};

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
