//! Operation 3 over the local catalogs: algorithm choice (translation-service.md §1.4),
//! search/popular candidates (§3.2–3.5), page collections (§3.9) with single-collection
//! pagination (§2.1), size and lead-section filters (§3.7), ordering and truncation (§2.5).

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Value, json};

use super::collections::{matching, metadata};
use super::dataset::{Catalog, Collection, TranslationData, topic_term};
use super::params::{RankMethod, TranslationQuery, link_code};

/// CirrusSearch answers at most one batch of candidates; multi-collection mode caps alike.
const MAX_CANDIDATES: usize = 500;
/// More-like-this: how many discriminative seed terms are used.
const MAX_QUERY_TERMS: usize = 25;

/// The answer before it is given a shape: items, and the continuation of single-collection
/// mode (`None` elsewhere).
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub items: Vec<Value>,
    pub continue_offset: Option<i64>,
    pub continue_seed: Option<i64>,
}

impl Outcome {
    fn plain(items: Vec<Value>) -> Self {
        Self {
            items,
            continue_offset: None,
            continue_seed: None,
        }
    }

    /// The November 2025 envelope.
    pub fn envelope(&self) -> Value {
        json!({
            "recommendations": self.items,
            "continue_offset": self.continue_offset,
            "continue_seed": self.continue_seed,
        })
    }

    /// The contract's bare array of the five fields it lists.
    pub fn array(&self) -> Value {
        const CONTRACT: [&str; 5] = [
            "title",
            "pageviews",
            "wikidata_id",
            "rank",
            "langlinks_count",
        ];
        Value::Array(
            self.items
                .iter()
                .map(|item| {
                    let fields = CONTRACT
                        .iter()
                        .map(|&k| (k.to_owned(), item.get(k).cloned().unwrap_or(Value::Null)));
                    Value::Object(fields.collect())
                })
                .collect(),
        )
    }
}

/// The recommender §1.4 picks (first match wins).
enum Mode<'a> {
    SingleCollection(&'a Collection),
    MultiCollection(Vec<&'a Collection>),
    Search(Option<&'a Collection>),
    Popular,
}

fn mode<'a>(data: &'a TranslationData, query: &TranslationQuery) -> Mode<'a> {
    let searching = query.seed.is_some() || query.topic.is_some() || query.country.is_some();
    if query.collections {
        let matched = query
            .seed
            .as_deref()
            .map(|seed| matching(data, seed))
            .unwrap_or_default();
        return match matched.as_slice() {
            [one] => Mode::SingleCollection(one),
            _ if query.seed.is_some() => Mode::MultiCollection(matched),
            _ => Mode::MultiCollection(data.collections.iter().collect()),
        };
    }
    match &query.featured_collection {
        Some(name) if searching => Mode::Search(data.collection(name)),
        _ if searching => Mode::Search(None),
        _ => Mode::Popular,
    }
}

/// One candidate: an article of the source catalog, its rank, and the collection it was
/// recommended from.
#[derive(Debug, Clone, Copy)]
struct Candidate<'a> {
    article: usize,
    rank: i64,
    collection: Option<&'a Collection>,
}

/// The answer for `query`; `shuffle_seed` drives every random choice (the default ranking,
/// collection shuffles, and a single-collection seed when none was sent).
pub fn recommend(data: &TranslationData, query: &TranslationQuery, shuffle_seed: u64) -> Outcome {
    let Some(catalog) = data.catalogs.get(&query.source) else {
        // Production answers an empty list when the source wiki cannot be searched.
        return Outcome::plain(Vec::new());
    };
    let missing = |i: usize| {
        let links = &catalog.articles[i].record.langlinks;
        let (target, mapped) = (query.target.as_str(), link_code(&query.target));
        !links.iter().any(|l| l == target || l == mapped)
    };
    let items = |chosen: &[Candidate<'_>]| build_items(data, catalog, query, chosen);
    match mode(data, query) {
        Mode::SingleCollection(collection) => {
            single_collection(catalog, query, collection, shuffle_seed, &missing, items)
        }
        Mode::MultiCollection(collections) => {
            let featured = query
                .featured_collection
                .as_deref()
                .and_then(|name| data.collection(name));
            let candidates = multi_collection(query, collections, featured, shuffle_seed, &missing);
            Outcome::plain(items(&finish(catalog, query, candidates)))
        }
        Mode::Search(featured) => {
            let mut rng = fastrand::Rng::with_seed(shuffle_seed ^ 0x5eed);
            let ranked: Vec<(usize, i64)> = search_candidates(catalog, query, &mut rng)
                .into_iter()
                .filter(|&i| !catalog.articles[i].record.disambiguation)
                .zip(1..)
                .collect();
            let ordered = order(catalog, query, ranked, &missing, shuffle_seed);
            let candidates = match featured {
                Some(collection) => with_featured(&query.source, ordered, collection),
                None => ordered,
            };
            Outcome::plain(items(&finish(catalog, query, candidates)))
        }
        Mode::Popular => {
            let ranked: Vec<(usize, i64)> = catalog
                .most_viewed
                .iter()
                .take(MAX_CANDIDATES)
                .map(|&i| i as usize)
                .zip(1..)
                .filter(|&(i, _)| !catalog.articles[i].record.disambiguation)
                .collect();
            let ordered = order(catalog, query, ranked, &missing, shuffle_seed);
            Outcome::plain(items(&finish(catalog, query, ordered)))
        }
    }
}

/// The missing candidates in answer order (§2.5): shuffled, or by interlanguage links.
fn order<'a>(
    catalog: &Catalog,
    query: &TranslationQuery,
    ranked: Vec<(usize, i64)>,
    missing: &dyn Fn(usize) -> bool,
    shuffle_seed: u64,
) -> Vec<Candidate<'a>> {
    let mut kept: Vec<(usize, i64)> = ranked.into_iter().filter(|&(i, _)| missing(i)).collect();
    match query.rank_method {
        RankMethod::Default => fastrand::Rng::with_seed(shuffle_seed).shuffle(&mut kept),
        RankMethod::Sitelinks => kept
            .sort_by_key(|&(i, _)| std::cmp::Reverse(catalog.articles[i].record.langlinks.len())),
    }
    kept.into_iter()
        .map(|(article, rank)| Candidate {
            article,
            rank,
            collection: None,
        })
        .collect()
}

/// Search results interleaved 1:1 with those of them in the featured collection (featured
/// first at each position, each article once).
fn with_featured<'a>(
    source: &str,
    ordered: Vec<Candidate<'a>>,
    collection: &'a Collection,
) -> Vec<Candidate<'a>> {
    let members: HashSet<usize> = collection
        .members
        .get(source)
        .map(|m| m.iter().copied().collect())
        .unwrap_or_default();
    let featured: Vec<Candidate<'a>> = ordered
        .iter()
        .filter(|c| members.contains(&c.article))
        .map(|c| Candidate {
            rank: 0,
            collection: Some(collection),
            ..*c
        })
        .collect();
    interleave(ordered, featured)
}

/// `primary` and `featured` merged one for one, featured first at each position, then the
/// rest of the longer list; an article appears once (its featured entry wins).
fn interleave<'a>(primary: Vec<Candidate<'a>>, featured: Vec<Candidate<'a>>) -> Vec<Candidate<'a>> {
    if featured.is_empty() {
        return primary;
    }
    if primary.is_empty() {
        return featured;
    }
    let featured_ids: HashSet<usize> = featured.iter().map(|c| c.article).collect();
    let shared = primary.len().min(featured.len());
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(primary.len() + featured.len());
    for (p, f) in primary.iter().zip(&featured) {
        if seen.insert(f.article) {
            out.push(*f);
        }
        if !featured_ids.contains(&p.article) && seen.insert(p.article) {
            out.push(*p);
        }
    }
    let rest_primary = primary[shared..]
        .iter()
        .filter(|c| !featured_ids.contains(&c.article));
    for c in rest_primary.chain(&featured[shared..]) {
        if seen.insert(c.article) {
            out.push(*c);
        }
    }
    out
}

/// Python's `items[:count]` length: a negative count drops that many from the end.
fn keep(len: usize, count: i64) -> usize {
    if count >= 0 {
        usize::try_from(count).unwrap_or(usize::MAX).min(len)
    } else {
        len.saturating_sub(usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX))
    }
}

/// Size or lead-section filter, then the cut to `count` (§3.7).
fn finish<'a>(
    catalog: &Catalog,
    query: &TranslationQuery,
    mut candidates: Vec<Candidate<'a>>,
) -> Vec<Candidate<'a>> {
    if query.has_size_bound() {
        candidates.retain(|c| {
            let record = &catalog.articles[c.article].record;
            query.size_fits(if query.lead_section {
                record.lead_section_size
            } else {
                record.size
            })
        });
    }
    let n = keep(candidates.len(), query.count);
    candidates.truncate(n);
    candidates
}

/// Items as the service writes them; `lead_section_size` only with `lead_section=true`.
fn build_items(
    data: &TranslationData,
    catalog: &Catalog,
    query: &TranslationQuery,
    chosen: &[Candidate<'_>],
) -> Vec<Value> {
    let mut described: HashMap<&str, Value> = HashMap::new();
    chosen
        .iter()
        .map(|c| {
            let record = &catalog.articles[c.article].record;
            let collection = c.collection.map(|col| {
                described
                    .entry(col.info.name.as_str())
                    .or_insert_with(|| metadata(data, col, Some(&query.target)))
                    .clone()
            });
            // Collections count Wikidata sitelinks, the source wiki's own included (§2.4).
            let links = record.langlinks.len() + usize::from(c.collection.is_some());
            json!({
                "title": record.title,
                "pageviews": if query.include_pageviews { record.pageviews } else { 0 },
                "wikidata_id": record.wikidata_id,
                "rank": c.rank,
                "langlinks_count": links,
                "size": record.size,
                "lead_section_size": if query.lead_section { record.lead_section_size } else { None },
                "collection": collection,
            })
        })
        .collect()
}

/// A shuffle seed in the service's range (1..2^32; 0 would read as "none" when sent back).
fn fresh_seed(shuffle_seed: u64) -> i64 {
    i64::try_from(shuffle_seed % 0xFFFF_FFFF + 1).unwrap_or(1)
}

/// One collection (§2.1): its articles in an order fixed by `continue_seed`, read from
/// `continue_offset` on; the next offset is that of the last item returned (so the next page
/// starts with it again), `-1` when nothing was returned.
fn single_collection<'a>(
    catalog: &Catalog,
    query: &TranslationQuery,
    collection: &'a Collection,
    shuffle_seed: u64,
    missing: &dyn Fn(usize) -> bool,
    items: impl Fn(&[Candidate<'a>]) -> Vec<Value>,
) -> Outcome {
    let seed = query
        .continue_seed
        .filter(|&s| s != 0)
        .unwrap_or_else(|| fresh_seed(shuffle_seed));
    let offset = query.continue_offset.unwrap_or(0);
    let mut sorted = collection
        .members
        .get(&query.source)
        .cloned()
        .unwrap_or_default();
    fastrand::Rng::with_seed(seed as u64).shuffle(&mut sorted);
    // Python's `sorted[offset:]`.
    let start = if offset >= 0 {
        usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(sorted.len())
    } else {
        sorted
            .len()
            .saturating_sub(usize::try_from(offset.unsigned_abs()).unwrap_or(usize::MAX))
    };
    let cut = &sorted[start..];
    let mut seen = HashSet::new();
    let candidates: Vec<Candidate<'a>> = cut
        .iter()
        .filter(|&&i| missing(i))
        .filter(|&&i| {
            let record = &catalog.articles[i].record;
            seen.insert(
                record
                    .wikidata_id
                    .clone()
                    .unwrap_or_else(|| record.title.clone()),
            )
        })
        .map(|&article| Candidate {
            article,
            rank: 0,
            collection: Some(collection),
        })
        .collect();
    let chosen = finish(catalog, query, candidates);
    let continue_offset = match chosen.last() {
        None => -1,
        Some(last) => {
            let index = cut.iter().position(|&i| i == last.article).unwrap_or(0);
            offset + i64::try_from(index).unwrap_or(i64::MAX)
        }
    };
    Outcome {
        items: items(&chosen),
        continue_offset: Some(continue_offset),
        continue_seed: Some(seed),
    }
}

/// Several collections (§3.9): collections and their articles shuffled, taken round-robin
/// (each article once, at most 500), then interleaved 1:1 with the featured collection's.
fn multi_collection<'a>(
    query: &TranslationQuery,
    mut collections: Vec<&'a Collection>,
    featured: Option<&'a Collection>,
    shuffle_seed: u64,
    missing: &dyn Fn(usize) -> bool,
) -> Vec<Candidate<'a>> {
    let mut rng = fastrand::Rng::with_seed(shuffle_seed);
    if let Some(featured) = featured {
        collections.retain(|c| !std::ptr::eq(*c, featured));
    }
    rng.shuffle(&mut collections);
    let lists: Vec<(&'a Collection, Vec<usize>)> = collections
        .into_iter()
        .map(|collection| {
            let mut members: Vec<usize> = collection
                .members
                .get(&query.source)
                .map(|m| m.iter().copied().filter(|&i| missing(i)).collect())
                .unwrap_or_default();
            rng.shuffle(&mut members);
            (collection, members)
        })
        .collect();
    let longest = lists.iter().map(|(_, m)| m.len()).max().unwrap_or(0);
    let mut seen = HashSet::new();
    let mut primary = Vec::new();
    'rounds: for round in 0..longest {
        for (collection, members) in &lists {
            if primary.len() >= MAX_CANDIDATES {
                break 'rounds;
            }
            if let Some(&article) = members.get(round)
                && seen.insert(article)
            {
                primary.push(Candidate {
                    article,
                    rank: 0,
                    collection: Some(*collection),
                });
            }
        }
    }
    let featured_items: Vec<Candidate<'a>> = featured
        .and_then(|c| c.members.get(&query.source).map(|m| (c, m)))
        .map(|(collection, members)| {
            members
                .iter()
                .copied()
                .filter(|&i| missing(i))
                .map(|article| Candidate {
                    article,
                    rank: 0,
                    collection: Some(collection),
                })
                .collect()
        })
        .unwrap_or_default();
    interleave(primary, featured_items)
}

/// Candidates of the search mode, best first.
fn search_candidates(
    catalog: &Catalog,
    query: &TranslationQuery,
    rng: &mut fastrand::Rng,
) -> Vec<usize> {
    // `+` separates keywords that must all match; `|` alternatives inside one keyword.
    // Topics are lower-cased and hyphenated by the service; countries by CirrusSearch.
    let keywords = |value: &str| -> Vec<HashSet<String>> {
        value
            .split('+')
            .map(|part| part.split('|').map(str::to_owned).collect())
            .collect()
    };
    let topic_filter = query.topic.as_deref().map(|t| keywords(&topic_term(t)));
    let country_filter = query
        .country
        .as_deref()
        .map(|c| keywords(&c.to_lowercase()));
    let topic_ok = |i: usize| {
        let article = &catalog.articles[i];
        let topic = article.topic_term.as_deref().unwrap_or_default();
        let countries = &article.record.countries;
        topic_filter
            .as_ref()
            .is_none_or(|all| all.iter().all(|alternatives| alternatives.contains(topic)))
            && country_filter.as_ref().is_none_or(|all| {
                all.iter().all(|alternatives| {
                    countries
                        .iter()
                        .any(|c| alternatives.contains(&c.to_lowercase()))
                })
            })
    };
    match query.seed.as_deref() {
        Some(seed) => more_like(catalog, seed)
            .into_iter()
            .filter(|&i| topic_ok(i))
            .collect(),
        None => {
            // Topic or country only: production sorts such searches randomly.
            let mut all: Vec<usize> = (0..catalog.articles.len())
                .filter(|&i| topic_ok(i))
                .collect();
            rng.shuffle(&mut all);
            all.truncate(MAX_CANDIDATES);
            all
        }
    }
}

/// More-like-this over the article texts: the seeds' most discriminative terms (by tf·idf,
/// present in at least two articles), then every other article scored by the idf of the
/// terms it shares; at least two shared terms are required when there are enough terms.
fn more_like(catalog: &Catalog, seed: &str) -> Vec<usize> {
    let seeds: Vec<usize> = seed.split('|').filter_map(|t| catalog.find(t)).collect();
    if seeds.is_empty() {
        return Vec::new();
    }
    let mut weights: BTreeMap<u32, f64> = BTreeMap::new();
    for &s in &seeds {
        for &(term, count) in &catalog.articles[s].terms {
            if catalog.postings[term as usize].len() >= 2 {
                *weights.entry(term).or_default() += f64::from(count) * catalog.idf[term as usize];
            }
        }
    }
    let mut terms: Vec<(u32, f64)> = weights.into_iter().collect();
    terms.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    terms.truncate(MAX_QUERY_TERMS);
    let required = if terms.len() >= 4 { 2 } else { 1 };
    let mut scores: HashMap<u32, (f64, usize)> = HashMap::new();
    for &(term, _) in &terms {
        for &doc in &catalog.postings[term as usize] {
            let entry = scores.entry(doc).or_default();
            entry.0 += catalog.idf[term as usize];
            entry.1 += 1;
        }
    }
    let excluded: HashSet<usize> = seeds.into_iter().collect();
    let mut hits: Vec<(usize, f64)> = scores
        .into_iter()
        .filter(|&(doc, (_, matched))| matched >= required && !excluded.contains(&(doc as usize)))
        .map(|(doc, (score, _))| (doc as usize, score))
        .collect();
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.truncate(MAX_CANDIDATES);
    hits.into_iter().map(|(doc, _)| doc).collect()
}

#[cfg(test)]
mod tests {
    use super::super::dataset::{ArticleRecord, tokens};
    use super::*;

    fn record(title: &str, links: &[&str], views: i64, topic: &str, text: &str) -> ArticleRecord {
        ArticleRecord {
            title: title.into(),
            wikidata_id: Some(format!("Q{}", title.len())),
            langlinks: links.iter().map(|s| s.to_string()).collect(),
            pageviews: views,
            topic: Some(topic.into()),
            text: text.into(),
            disambiguation: title.ends_with("(disambiguation)"),
            ..ArticleRecord::default()
        }
    }

    fn data() -> TranslationData {
        let mut data = TranslationData::default();
        data.insert(
            "en".into(),
            vec![
                record(
                    "Cat",
                    &["fr", "de"],
                    900,
                    "Biology",
                    "domestic cat feline pet mammal",
                ),
                record(
                    "Lion",
                    &["de"],
                    500,
                    "Biology",
                    "large cat feline mammal africa",
                ),
                record(
                    "Tiger",
                    &[],
                    700,
                    "Biology",
                    "large cat feline mammal asia stripes",
                ),
                record(
                    "Tiger (disambiguation)",
                    &[],
                    800,
                    "Biology",
                    "cat feline mammal",
                ),
                record(
                    "Violin",
                    &["es", "it", "de"],
                    100,
                    "Arts",
                    "string instrument music",
                ),
                record("Cello", &[], 50, "Arts", "string instrument music bass"),
            ],
        );
        data
    }

    fn run(raw: &str) -> Result<Value, Vec<Value>> {
        let data = data();
        TranslationQuery::parse(raw, &data).map(|q| recommend(&data, &q, 7).array())
    }

    fn titles(v: &Value) -> Vec<&str> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|i| i["title"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn validation_bodies() {
        let errs = run("count=abc&rank_method=x&include_pageviews=maybe").unwrap_err();
        let kinds: Vec<&str> = errs.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            ["missing", "missing", "int_parsing", "bool_parsing", "enum"]
        );
        let errs = run("source=en&target=en").unwrap_err();
        assert_eq!(
            errs[0]["msg"],
            "Value error, Source and target languages must be different"
        );
        assert_eq!(errs[0]["input"]["count"], 12);
        let errs = run("source=en&target=zz").unwrap_err();
        assert_eq!(errs[0]["msg"], "Value error, Invalid target language code");
        assert!(
            run("source=nb&target=en")
                .unwrap()
                .as_array()
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn popular_mode_filters_and_ranks() {
        let v = run("source=en&target=fr&rank_method=sitelinks&include_pageviews=1").unwrap();
        // Cat exists in fr; the disambiguation page is dropped; ranks are by pageviews.
        assert_eq!(titles(&v), ["Violin", "Lion", "Tiger", "Cello"]);
        assert_eq!(v[0]["rank"], 5);
        assert_eq!(v[0]["langlinks_count"], 3);
        assert_eq!(v[2]["pageviews"], 700);
        let v = run("source=en&target=fr&count=-1&rank_method=sitelinks").unwrap();
        assert_eq!(titles(&v), ["Violin", "Lion", "Tiger"]);
        assert_eq!(v[0]["pageviews"], 0);
    }

    #[test]
    fn seed_and_topic() {
        let v = run("source=en&target=de&seed=cat&rank_method=sitelinks").unwrap();
        assert_eq!(titles(&v), ["Tiger"]);
        let v = run("source=en&target=es&topic=arts&count=5").unwrap();
        assert_eq!(titles(&v), ["Cello"]);
        let v = run("source=en&target=es&seed=Nothing_here").unwrap();
        assert!(titles(&v).is_empty());
        let same = run("source=en&target=es&topic=biology|arts").unwrap();
        assert_eq!(same, run("source=en&target=es&topic=biology|arts").unwrap());
        assert_eq!(titles(&same).len(), 4);
        assert_eq!(
            tokens("A big, BIG cat").collect::<Vec<_>>(),
            ["big", "big", "cat"]
        );
    }
}

#[cfg(test)]
mod collection_tests {
    use std::collections::BTreeSet;

    use super::super::dataset::{ArticleRecord, CollectionInfo};
    use super::*;

    /// Thirty articles: even ones in `Set/Even`, odd ones in `Set/Odd`, the first ten also in
    /// `Solo`; every third exists in French; sizes 100·i bytes, leads 10·i.
    fn data() -> TranslationData {
        let records = (0..30)
            .map(|i: i64| {
                let mut collections =
                    vec![if i % 2 == 0 { "Set/Even" } else { "Set/Odd" }.to_owned()];
                if i < 10 {
                    collections.push("Solo".to_owned());
                }
                ArticleRecord {
                    title: format!("A{i:02}"),
                    wikidata_id: Some(format!("Q{}", 1000 + i)),
                    langlinks: if i % 3 == 0 {
                        vec!["fr".into()]
                    } else {
                        vec![]
                    },
                    pageviews: 1000 - i,
                    topic: Some(if i % 2 == 0 { "Arts" } else { "Science" }.into()),
                    text: format!("word{i} shared common text"),
                    size: Some(100 * i),
                    lead_section_size: (i > 0).then_some(10 * i),
                    countries: match i % 4 {
                        0 => vec!["can".into()],
                        1 => vec!["usa".into()],
                        2 => vec!["can".into(), "usa".into()],
                        _ => vec![],
                    },
                    collections,
                    ..ArticleRecord::default()
                }
            })
            .collect();
        let mut data = TranslationData::default();
        data.insert("en".into(), records);
        data.insert("fr".into(), Vec::new());
        data.describe_collections(vec![CollectionInfo {
            name: "Set/Even".into(),
            description: Some("even ones".into()),
            end_date: Some("2030-01-01".into()),
        }]);
        data
    }

    fn run(data: &TranslationData, raw: &str) -> Outcome {
        let query = TranslationQuery::parse(raw, data).unwrap();
        recommend(data, &query, 11)
    }

    fn titles(outcome: &Outcome) -> Vec<String> {
        outcome
            .items
            .iter()
            .map(|i| i["title"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Follows the continuation from the first page; stops at `-1` or at a page that brings
    /// nothing new (the last item is repeated at the start of each page).
    fn all_pages(data: &TranslationData, base: &str) -> (Vec<Vec<String>>, i64) {
        let first = run(data, base);
        let seed = first.continue_seed.unwrap();
        let mut pages = vec![titles(&first)];
        let mut seen: BTreeSet<String> = pages[0].iter().cloned().collect();
        let mut offset = first.continue_offset.unwrap();
        while offset != -1 {
            let next = run(
                data,
                &format!("{base}&continue_offset={offset}&continue_seed={seed}"),
            );
            assert_eq!(next.continue_seed, Some(seed), "the seed is echoed");
            let page = titles(&next);
            let new: Vec<String> = page
                .iter()
                .filter(|t| !seen.contains(*t))
                .cloned()
                .collect();
            pages.push(page);
            offset = next.continue_offset.unwrap();
            if new.is_empty() {
                break;
            }
            seen.extend(new);
        }
        (pages, seed)
    }

    #[test]
    fn single_collection_pages_cover_it_once() {
        let data = data();
        let base = "source=en&target=fr&collections=true&seed=set/even&count=4";
        let (pages, seed) = all_pages(&data, base);
        // Even articles missing in French: those not divisible by 3.
        let expected: BTreeSet<String> = (0..30)
            .filter(|i| i % 2 == 0 && i % 3 != 0)
            .map(|i| format!("A{i:02}"))
            .collect();
        let got: BTreeSet<String> = pages.iter().flatten().cloned().collect();
        assert_eq!(got, expected);
        // Each page starts with the previous page's last item (§2.1's overlap).
        for pair in pages.windows(2) {
            if let (Some(last), Some(first)) = (pair[0].last(), pair[1].first()) {
                assert_eq!(last, first);
            }
        }
        let no_repeat: Vec<&String> = pages
            .iter()
            .enumerate()
            .flat_map(|(n, p)| p.iter().skip(usize::from(n > 0)))
            .collect();
        assert_eq!(
            no_repeat.len(),
            expected.len(),
            "nothing twice but the overlap"
        );
        // The same seed gives the same pages; another seed another order.
        let with_seed = format!("{base}&continue_seed={seed}");
        assert_eq!(all_pages(&data, &with_seed).0, pages);
        let other = run(&data, &format!("{base}&continue_seed={}", seed + 1));
        assert_ne!(titles(&other), pages[0]);
        let item = &run(&data, base).items[0];
        assert_eq!(item["rank"], 0);
        assert_eq!(item["collection"]["name"], "Set/Even");
        assert_eq!(item["collection"]["description"], "even ones");
        assert_eq!(item["collection"]["end_date"], "2030-01-01");
        assert_eq!(item["collection"]["articles_count"], 15);
        // Even articles in French: 0, 6, 12, 18, 24.
        assert_eq!(
            item["collection"]["articles_by_language_count"],
            json!({"fr": 5})
        );
        // Interlanguage links plus the source wiki itself.
        assert_eq!(item["langlinks_count"], 1);
    }

    #[test]
    fn single_collection_offsets_and_seeds() {
        let data = data();
        let base = "source=en&target=fr&collections=true&seed=Solo&count=3&continue_seed=5";
        let first = run(&data, base);
        assert_eq!(first.continue_seed, Some(5));
        // The offset is the position of the last item in the shuffled collection.
        let offset = first.continue_offset.unwrap();
        let again = run(&data, &format!("{base}&continue_offset={offset}"));
        assert_eq!(again.items[0], first.items[2]);
        let past = run(&data, &format!("{base}&continue_offset=100"));
        assert_eq!((past.items.len(), past.continue_offset), (0, Some(-1)));
        // No seed (or 0, which the service reads as none): one is chosen and echoed.
        let chosen = run(
            &data,
            "source=en&target=fr&collections=true&seed=Solo&continue_seed=0",
        );
        let seed = chosen.continue_seed.unwrap();
        assert!((1..=i64::from(u32::MAX)).contains(&seed));
        let replay = run(
            &data,
            &format!("source=en&target=fr&collections=true&seed=Solo&continue_seed={seed}"),
        );
        assert_eq!(titles(&replay), titles(&chosen));
        // Search, popular and multi-collection answers carry no continuation.
        let popular = run(&data, "source=en&target=fr");
        assert_eq!(
            (popular.continue_offset, popular.continue_seed),
            (None, None)
        );
        assert_eq!(popular.envelope()["continue_offset"], Value::Null);
    }

    #[test]
    fn multi_collection_and_featured() {
        let data = data();
        // A group prefix matching two collections: round-robin across them.
        let out = run(
            &data,
            "source=en&target=fr&collections=1&seed=Set&count=100",
        );
        let names: Vec<&str> = out
            .items
            .iter()
            .map(|i| i["collection"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 20, "every missing article once");
        assert!(names.windows(2).take(8).all(|w| w[0] != w[1]), "{names:?}");
        assert_eq!(out.continue_offset, None);
        // No seed: every collection; the featured one is interleaved first, one for one.
        let out = run(
            &data,
            "source=en&target=fr&collections=true&featured_collection=solo&count=12",
        );
        let names: Vec<&str> = out
            .items
            .iter()
            .map(|i| i["collection"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names[0], "Solo");
        // Solo's six missing articles all come within the first twelve.
        assert_eq!(names.iter().filter(|n| **n == "Solo").count(), 6);
        let unique: BTreeSet<String> = titles(&out).into_iter().collect();
        assert_eq!(unique.len(), 12);
        // Featured with a search: the search's articles in the collection are interleaved.
        let out = run(
            &data,
            "source=en&target=fr&topic=arts&featured_collection=Solo&count=50",
        );
        assert_eq!(out.items[0]["collection"]["name"], "Solo");
        let (featured, rest): (Vec<&Value>, Vec<&Value>) =
            out.items.iter().partition(|i| !i["collection"].is_null());
        assert_eq!(featured.len(), 3, "A02, A04, A08");
        assert!(featured.iter().all(|i| i["rank"] == 0));
        assert!(rest.iter().all(|i| i["rank"].as_i64().unwrap() > 0));
        assert_eq!(
            out.items.len(),
            10,
            "even articles missing in French, each once"
        );
        // A featured collection alone does not select a mode: most popular.
        let out = run(
            &data,
            "source=en&target=fr&featured_collection=Solo&rank_method=sitelinks",
        );
        assert!(out.items.iter().all(|i| i["collection"].is_null()));
    }

    #[test]
    fn size_and_lead_section_filters() {
        let data = data();
        let sizes = |o: &Outcome, key: &str| -> Vec<i64> {
            o.items.iter().map(|i| i[key].as_i64().unwrap()).collect()
        };
        let out = run(
            &data,
            "source=en&target=fr&min_size=1000&max_size=2000&count=50",
        );
        let mut got = sizes(&out, "size");
        got.sort_unstable();
        // Inclusive bounds; 1200, 1500 and 1800 exist in French.
        assert_eq!(got, [1000, 1100, 1300, 1400, 1600, 1700, 1900, 2000]);
        assert!(out.items.iter().all(|i| i["lead_section_size"].is_null()));
        let out = run(
            &data,
            "source=en&target=fr&lead_section=true&max_size=50&count=50",
        );
        let mut got = sizes(&out, "lead_section_size");
        got.sort_unstable();
        // A0 has no lead size: it fails any bound.
        assert_eq!(got, [10, 20, 40, 50]);
        let out = run(
            &data,
            "source=en&target=fr&lead_section=yes&count=3&rank_method=sitelinks",
        );
        assert_eq!(out.items.len(), 3);
        assert!(
            out.items
                .iter()
                .all(|i| i["lead_section_size"].is_i64() || i["title"] == "A00")
        );
        let out = run(&data, "source=en&target=fr&max_size=-1");
        assert!(out.items.is_empty());
        // Collections filter too, and pagination skips what does not pass.
        let out = run(
            &data,
            "source=en&target=fr&collections=true&seed=Set/Even&min_size=2000&count=50",
        );
        let mut got = sizes(&out, "size");
        got.sort_unstable();
        assert_eq!(got, [2000, 2200, 2600, 2800]);
    }

    #[test]
    fn country_terms() {
        let data = data();
        let got = |raw: &str| -> BTreeSet<String> {
            titles(&run(&data, &format!("source=en&target=fr&count=100&{raw}")))
                .into_iter()
                .collect()
        };
        let expected = |f: fn(i64) -> bool| -> BTreeSet<String> {
            (0..30)
                .filter(|&i| i % 3 != 0 && f(i))
                .map(|i| format!("A{i:02}"))
                .collect()
        };
        assert_eq!(got("country=CAN"), expected(|i| i % 4 == 0 || i % 4 == 2));
        assert_eq!(got("country=can%2Busa"), expected(|i| i % 4 == 2));
        assert_eq!(got("country=can|usa"), expected(|i| i % 4 != 3));
        assert_eq!(got("country=can&topic=science"), BTreeSet::new());
        assert_eq!(got("country=usa&topic=science"), expected(|i| i % 4 == 1));
        assert!(got("country=prk").is_empty());
    }

    #[test]
    fn parameters_are_checked_like_the_service() {
        let data = data();
        let errors = TranslationQuery::parse(
            "source=en&target=fr&min_size=1.5&lead_section=maybe&continue_seed=x\
             &collections=2&max_size=&continue_offset=1e3",
            &data,
        )
        .unwrap_err();
        let got: Vec<(&str, &str)> = errors
            .iter()
            .map(|e| (e["type"].as_str().unwrap(), e["loc"][1].as_str().unwrap()))
            .collect();
        assert_eq!(
            got,
            [
                ("bool_parsing", "collections"),
                ("bool_parsing", "lead_section"),
                ("int_parsing", "min_size"),
                ("int_parsing", "max_size"),
                ("int_parsing", "continue_offset"),
                ("int_parsing", "continue_seed"),
            ]
        );
        assert_eq!(errors[0]["input"], "2");
        let errors = TranslationQuery::parse(
            "source=en&target=en&collections=on&min_size=5&continue_seed=9",
            &data,
        )
        .unwrap_err();
        let input = &errors[0]["input"];
        assert_eq!(input.as_object().unwrap().len(), 16, "every field echoed");
        assert_eq!(
            (
                &input["collections"],
                &input["min_size"],
                &input["continue_seed"]
            ),
            (&json!(true), &json!(5), &json!(9))
        );
        assert_eq!(input["featured_collection"], Value::Null);
        // `search_algorithm` is checked but changes nothing.
        let a = run(
            &data,
            "source=en&target=fr&search_algorithm=mostpopular&topic=arts",
        );
        let b = run(&data, "source=en&target=fr&topic=arts");
        assert_eq!(a, b);
    }

    #[test]
    fn both_shapes() {
        let data = data();
        let out = run(
            &data,
            "source=en&target=fr&collections=true&seed=Solo&count=2",
        );
        let array = out.array();
        assert_eq!(array.as_array().unwrap().len(), 2);
        let mut keys: Vec<&String> = array[0].as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "langlinks_count",
                "pageviews",
                "rank",
                "title",
                "wikidata_id"
            ]
        );
        let envelope = out.envelope();
        assert_eq!(envelope["recommendations"][0]["title"], array[0]["title"]);
        assert_eq!(envelope["recommendations"][0].as_object().unwrap().len(), 8);
        assert!(envelope["continue_offset"].is_i64());
        assert!(envelope["continue_seed"].is_i64());
    }
}
