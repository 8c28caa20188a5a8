//! Page collections (`collections` part): production's single- and multi-collection modes
//! (`single_collection_recommender.py`, `multiple_collection_recommender.py`) and its
//! interleaving helpers (`recommendation_helper.py`).
//!
//! A collection's articles are Wikidata items with their Wikipedia titles per language. An
//! article is a candidate when it has a title in the source language and none in the target;
//! its `langlinks_count` counts every language it has (the source's included) and its size
//! is known for English only, as production fetches English sizes alone.

use std::collections::{HashMap, HashSet};

use wikisuggest_records::PageCollectionMetadata;

use crate::catalog::Catalog;
use crate::error::Result;
use crate::pq::TableReader;
use crate::pyrandom::PyRandom;
use crate::query::{Item, Outcome, Query};
use crate::schema::{self, collections as col};

/// Candidates production takes at most from several collections.
pub const MAX_RECOMMENDATIONS: usize = 500;

/// An article of a collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Article {
    pub wikidata_id: String,
    /// Language code → title.
    pub titles: Vec<(String, String)>,
}

impl Article {
    pub fn title(&self, language: &str) -> Option<&str> {
        self.titles
            .iter()
            .find(|(l, _)| l == language)
            .map(|(_, t)| t.as_str())
    }
}

/// A page collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collection {
    pub name: String,
    pub description: Option<String>,
    pub end_date: Option<String>,
    pub articles: Vec<Article>,
}

impl Collection {
    /// What an item says of its collection (`PageCollection.get_metadata`).
    pub fn metadata(&self, target: &str) -> PageCollectionMetadata {
        let in_target = self
            .articles
            .iter()
            .filter(|a| a.title(target).is_some())
            .count();
        PageCollectionMetadata {
            name: self.name.clone(),
            description: self.description.clone(),
            end_date: self.end_date.clone(),
            articles_count: Some(i64::try_from(self.articles.len()).unwrap_or(i64::MAX)),
            articles_by_language_count: Some(
                [(
                    target.to_owned(),
                    i64::try_from(in_target).unwrap_or(i64::MAX),
                )]
                .into_iter()
                .collect(),
            ),
            extra: serde_json::Map::new(),
        }
    }

    /// The catalog rows of its articles in the catalog's language.
    pub fn rows_in(&self, catalog: &Catalog) -> HashSet<usize> {
        self.articles
            .iter()
            .filter_map(|a| a.title(catalog.language()))
            .filter_map(|t| catalog.row_of_title(t))
            .collect()
    }
}

/// Every collection, in the order they were listed.
#[derive(Debug, Clone, Default)]
pub struct Collections {
    pub list: Vec<Collection>,
}

fn fold(name: &str) -> String {
    name.to_lowercase()
}

impl Collections {
    /// Reads `collections.parquet` of a catalog.
    pub fn read(catalog: &Catalog) -> Result<Self> {
        Self::read_file(&catalog.dir.join(schema::COLLECTIONS))
    }

    // A row is read from several columns at once: its index is the natural loop variable.
    #[allow(clippy::needless_range_loop)]
    pub fn read_file(path: &std::path::Path) -> Result<Self> {
        let reader = TableReader::open(path)?;
        let leaf = |n: &str| reader.leaf(n);
        let (name, description, end_date, qid) = (
            leaf(col::COLLECTION)?,
            leaf(col::DESCRIPTION)?,
            leaf(col::END_DATE)?,
            leaf(col::WIKIDATA_ID)?,
        );
        let (lang, title) = (
            leaf("sitelinks.list.element.lang")?,
            leaf("sitelinks.list.element.title")?,
        );
        let mut list: Vec<Collection> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for group in 0..reader.row_groups() {
            let columns = [name, description, end_date, qid]
                .iter()
                .map(|&l| reader.read(group, l))
                .collect::<Result<Vec<_>>>()?;
            let at: Vec<_> = columns.iter().map(crate::pq::LeafData::flat).collect();
            let langs = reader.read(group, lang)?;
            let titles = reader.read(group, title)?;
            let rows = langs.lists();
            let count = at[0].len();
            for r in 0..count {
                let s = |k: usize| {
                    at[k][r]
                        .and_then(|i| columns[k].str_at(i))
                        .map(str::to_owned)
                };
                let collection_name = s(0).unwrap_or_default();
                let slot = *index.entry(collection_name.clone()).or_insert_with(|| {
                    list.push(Collection {
                        name: collection_name.clone(),
                        description: s(1),
                        end_date: s(2),
                        articles: Vec::new(),
                    });
                    list.len() - 1
                });
                let sitelinks = rows
                    .get(r)
                    .cloned()
                    .flatten()
                    .unwrap_or_default()
                    .map(|i| {
                        (
                            langs.str_at(i).unwrap_or_default().to_owned(),
                            titles.str_at(i).unwrap_or_default().to_owned(),
                        )
                    })
                    .collect();
                list[slot].articles.push(Article {
                    wikidata_id: s(3).unwrap_or_default(),
                    titles: sitelinks,
                });
            }
        }
        Ok(Self { list })
    }

    /// The collection named `name` (any case).
    pub fn find(&self, name: &str) -> Option<&Collection> {
        let name = fold(name);
        self.list.iter().find(|c| fold(&c.name) == name)
    }

    /// Collections named `name`, or grouped under it (`name/…`), any case.
    pub fn matching(&self, name: &str) -> Vec<&Collection> {
        let name = fold(name);
        let group = format!("{name}/");
        self.list
            .iter()
            .filter(|c| {
                let own = fold(&c.name);
                own == name || own.starts_with(&group)
            })
            .collect()
    }
}

/// An article of a collection as an item, when it is a candidate.
fn item(
    catalog: &Catalog,
    article: &Article,
    source: &str,
    target: &str,
    metadata: &PageCollectionMetadata,
) -> Option<Item> {
    let title = article.title(source)?;
    if article.title(target).is_some() {
        return None;
    }
    // The catalog's articles are of its own language: another source's titles are not looked
    // up in it (collections answer for any source).
    let same = catalog.language() == source;
    let row = same.then(|| catalog.row_of_title(title)).flatten();
    // Production fetches sizes of English Wikipedia's pages only (`prop=info` on the title:
    // a redirect's own size).
    let size = if source == "en" && same {
        catalog.page_len_of_title(title).ok().flatten()
    } else {
        None
    };
    Some(Item {
        row,
        title: title.to_owned(),
        wikidata_id: Some(article.wikidata_id.clone()),
        rank: 0,
        langlinks_count: i64::try_from(article.titles.len()).unwrap_or(i64::MAX),
        size,
        lead_section_size: None,
        collection: Some(metadata.clone()),
        views: row.and_then(|r| catalog.pageviews(r)),
    })
}

/// Collections mode (`collections=true`).
pub(crate) fn recommend(
    catalog: &Catalog,
    collections: &Collections,
    p: &Query,
    rng: &mut fastrand::Rng,
) -> Result<Outcome> {
    let seed = p.seed.as_deref().filter(|s| !s.is_empty());
    let matched = seed.map(|s| collections.matching(s)).unwrap_or_default();
    if let [one] = matched.as_slice() {
        return Ok(single(catalog, one, p, rng));
    }
    let chosen: Vec<&Collection> = if seed.is_some() {
        matched
    } else {
        collections.list.iter().collect()
    };
    let featured = p
        .featured_collection
        .as_deref()
        .and_then(|name| collections.find(name));
    Ok(Outcome::plain(multiple(catalog, chosen, featured, p, rng)))
}

/// One collection: its articles in the order `random.Random(continue_seed).shuffle` gives,
/// from `continue_offset` on; the next page's offset is that of this page's last article.
fn single(
    catalog: &Catalog,
    collection: &Collection,
    p: &Query,
    rng: &mut fastrand::Rng,
) -> Outcome {
    let seed = p
        .continue_seed
        .filter(|&s| s != 0)
        .and_then(|s| u64::try_from(s).ok())
        .unwrap_or_else(|| u64::from(rng.u32(..)));
    let offset = usize::try_from(p.continue_offset.unwrap_or(0)).unwrap_or(0);
    let mut sorted: Vec<&Article> = collection.articles.iter().collect();
    PyRandom::new(seed).shuffle(&mut sorted);
    let cut: Vec<&Article> = sorted.into_iter().skip(offset).collect();
    let metadata = collection.metadata(&p.target);
    let mut seen = HashSet::new();
    let items: Vec<Item> = cut
        .iter()
        .filter_map(|a| item(catalog, a, &p.source, &p.target, &metadata))
        .filter(|i| seen.insert(i.wikidata_id.clone()))
        .collect();
    // The continuation is computed on what is returned, after the filters and the cut; the
    // engine calls back with the final items through `continue_offset_of`.
    Outcome {
        items,
        continue_offset: Some(i64::try_from(offset).unwrap_or(i64::MAX)),
        continue_seed: Some(i64::try_from(seed).unwrap_or(i64::MAX)),
        order: None,
    }
    .with_order(
        cut.iter()
            .map(|a| a.title(&p.source).map(str::to_owned))
            .collect(),
    )
}

/// Several collections: shuffled, their articles shuffled and taken in turn (each item
/// once, at most 500), then the featured collection's articles interleaved.
fn multiple(
    catalog: &Catalog,
    mut chosen: Vec<&Collection>,
    featured: Option<&Collection>,
    p: &Query,
    rng: &mut fastrand::Rng,
) -> Vec<Item> {
    if let Some(f) = featured {
        let name = fold(&f.name);
        chosen.retain(|c| fold(&c.name) != name);
    }
    rng.shuffle(&mut chosen);
    let lists: Vec<Vec<Item>> = chosen
        .iter()
        .map(|c| {
            let metadata = c.metadata(&p.target);
            let mut articles: Vec<&Article> = c.articles.iter().collect();
            rng.shuffle(&mut articles);
            articles
                .into_iter()
                .filter_map(|a| item(catalog, a, &p.source, &p.target, &metadata))
                .collect::<Vec<_>>()
        })
        .filter(|l| !l.is_empty())
        .collect();
    let mut taken: Vec<Item> = Vec::new();
    let mut seen = HashSet::new();
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    'rounds: for i in 0..longest {
        for list in &lists {
            if taken.len() >= MAX_RECOMMENDATIONS {
                break 'rounds;
            }
            if let Some(it) = list.get(i)
                && seen.insert(it.wikidata_id.clone())
            {
                taken.push(it.clone());
            }
        }
    }
    let featured_items: Vec<Item> = featured
        .map(|f| {
            let metadata = f.metadata(&p.target);
            f.articles
                .iter()
                .filter_map(|a| item(catalog, a, &p.source, &p.target, &metadata))
                .collect()
        })
        .unwrap_or_default();
    let mut out = interleave_by_ratio(taken, featured_items);
    // With a size filter production reorders after filtering (round robin by collection,
    // featured interleaved); the engine filters first, so the reorder is applied then.
    if p.min_size.is_some() || p.max_size.is_some() {
        out = reorder(out, featured.map(|f| f.name.as_str()));
    }
    out
}

/// `reorder_page_collection_recommendations`.
fn reorder(items: Vec<Item>, featured: Option<&str>) -> Vec<Item> {
    let Some(featured) = featured else {
        return interleave_by_collection(items);
    };
    let (featured_items, simple): (Vec<Item>, Vec<Item>) = items
        .into_iter()
        .partition(|i| i.collection.as_ref().is_some_and(|c| c.name == featured));
    interleave_by_ratio(interleave_by_collection(simple), featured_items)
}

/// `interleave_by_collection`: round robin over collections in order of first appearance.
fn interleave_by_collection(items: Vec<Item>) -> Vec<Item> {
    let mut groups: Vec<(String, Vec<Item>)> = Vec::new();
    for item in items {
        let name = item
            .collection
            .as_ref()
            .map(|c| c.name.clone())
            .unwrap_or_default();
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, g)) => g.push(item),
            None => groups.push((name, vec![item])),
        }
    }
    let longest = groups.iter().map(|(_, g)| g.len()).max().unwrap_or(0);
    let mut out = Vec::new();
    for i in 0..longest {
        for (_, g) in &groups {
            if let Some(it) = g.get(i) {
                out.push(it.clone());
            }
        }
    }
    out
}

/// `interleave_by_ratio(primary, featured, 0.5)`: one featured item before each primary one
/// while both last (an item equal to one already placed is skipped), then the rest of both
/// lists, titles not yet placed.
pub(crate) fn interleave_by_ratio(primary: Vec<Item>, featured: Vec<Item>) -> Vec<Item> {
    if featured.is_empty() {
        return primary;
    }
    if primary.is_empty() {
        return featured;
    }
    let shared = primary.len().min(featured.len());
    let mut out: Vec<Item> = Vec::new();
    for (p, f) in primary[..shared].iter().zip(&featured[..shared]) {
        if !out.contains(f) {
            out.push(f.clone());
        }
        if !out.contains(p) {
            out.push(p.clone());
        }
    }
    let mut titles: HashSet<String> = out.iter().map(|i| i.title.clone()).collect();
    for item in primary[shared..].iter().chain(&featured[shared..]) {
        if titles.insert(item.title.clone()) {
            out.push(item.clone());
        }
    }
    out
}

impl Outcome {
    /// Records the order the single-collection continuation is counted in.
    fn with_order(mut self, order: Vec<Option<String>>) -> Self {
        self.order = Some(order);
        self
    }
}

/// The single-collection continuation: the request's offset plus the place, in the cut
/// shuffled list, of the first article whose source title is the last item's; `-1` when
/// nothing is returned.
pub(crate) fn continue_offset(offset: i64, order: &[Option<String>], last: Option<&str>) -> i64 {
    let Some(last) = last else {
        return -1;
    };
    let place = order
        .iter()
        .position(|t| t.as_deref() == Some(last))
        .map_or(-1, |i| i64::try_from(i).unwrap_or(i64::MAX));
    offset + place
}
