//! Operation 3 over the local catalogs: parameter validation with the service's 422 bodies
//! (translation-service.md §1.3), algorithm choice (§1.4), search/popular candidates
//! (§3.2–3.5), ordering and truncation (§2.5).

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Value, json};

use super::dataset::{Catalog, TranslationData, topic_term};
use crate::link::params::py_int;

/// Language code → the code its wiki and interlanguage links use (§3.4).
const DOMAIN_MAPPING: [(&str, &str); 10] = [
    ("be-tarask", "be-x-old"),
    ("bho", "bh"),
    ("gsw", "als"),
    ("lzh", "zh-classical"),
    ("nan", "zh-min-nan"),
    ("nb", "no"),
    ("rup", "roa-rup"),
    ("sgs", "bat-smg"),
    ("vro", "fiu-vro"),
    ("yue", "zh-yue"),
];
/// CirrusSearch answers at most one batch of candidates.
const MAX_CANDIDATES: usize = 500;
/// More-like-this: how many discriminative seed terms are used.
const MAX_QUERY_TERMS: usize = 25;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    MoreLike,
    MostPopular,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankMethod {
    Default,
    Sitelinks,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TranslationQuery {
    pub source: String,
    pub target: String,
    pub count: i64,
    pub seed: Option<String>,
    pub topic: Option<String>,
    pub country: Option<String>,
    pub include_pageviews: bool,
    /// Validated, then unused: the mode follows from seed/topic/country, as in production.
    pub search_algorithm: Algorithm,
    pub rank_method: RankMethod,
}

fn missing(name: &str) -> Value {
    json!({"type": "missing", "loc": ["query", name], "msg": "Field required", "input": null})
}

fn enum_error(name: &str, input: &str, expected: &str) -> Value {
    json!({"type": "enum", "loc": ["query", name], "msg": format!("Input should be {expected}"),
           "input": input, "ctx": {"expected": expected}})
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" | "t" | "y" => Some(true),
        "false" | "0" | "no" | "off" | "f" | "n" => Some(false),
        _ => None,
    }
}

impl TranslationQuery {
    /// Parses the raw query string; `Err` holds the `detail` entries of a 422.
    pub fn parse(raw: &str, data: &TranslationData) -> Result<Self, Vec<Value>> {
        // A repeated key: the last value wins.
        let params: HashMap<String, String> = form_urlencoded::parse(raw.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let get = |name: &str| params.get(name).map(String::as_str);
        let text = |name: &str| get(name).filter(|v| !v.is_empty()).map(str::to_owned);
        let mut errors = Vec::new();
        let source = get("source").map(str::to_owned);
        let target = get("target").map(str::to_owned);
        if source.is_none() {
            errors.push(missing("source"));
        }
        if target.is_none() {
            errors.push(missing("target"));
        }
        let count = match get("count") {
            None => 12,
            Some(v) => py_int(v).unwrap_or_else(|| {
                errors.push(json!({"type": "int_parsing", "loc": ["query", "count"],
                    "msg": "Input should be a valid integer, unable to parse string as an integer",
                    "input": v}));
                0
            }),
        };
        let include_pageviews = match get("include_pageviews") {
            None => false,
            Some(v) => parse_bool(v).unwrap_or_else(|| {
                errors.push(
                    json!({"type": "bool_parsing", "loc": ["query", "include_pageviews"],
                    "msg": "Input should be a valid boolean, unable to interpret input",
                    "input": v}),
                );
                false
            }),
        };
        let search_algorithm = match get("search_algorithm") {
            None | Some("morelike") => Algorithm::MoreLike,
            Some("mostpopular") => Algorithm::MostPopular,
            Some(v) => {
                errors.push(enum_error(
                    "search_algorithm",
                    v,
                    "'morelike' or 'mostpopular'",
                ));
                Algorithm::MoreLike
            }
        };
        let rank_method = match get("rank_method") {
            None | Some("default") => RankMethod::Default,
            Some("sitelinks") => RankMethod::Sitelinks,
            Some(v) => {
                errors.push(enum_error("rank_method", v, "'default' or 'sitelinks'"));
                RankMethod::Default
            }
        };
        let (Some(source), Some(target)) = (source, target) else {
            return Err(errors);
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        let query = Self {
            source,
            target,
            count,
            seed: text("seed"),
            topic: text("topic"),
            country: text("country"),
            include_pageviews,
            search_algorithm,
            rank_method,
        };
        query.check_languages(data).map(|()| query)
    }

    fn check_languages(&self, data: &TranslationData) -> Result<(), Vec<Value>> {
        let known = |code: &str| {
            // Without any catalog there is no language list: accept anything (as upstream
            // does before its list is loaded).
            data.languages.is_empty()
                || data.languages.contains(code)
                || DOMAIN_MAPPING.iter().any(|(a, b)| *a == code || *b == code)
        };
        let message = if !known(&self.source) {
            "Invalid source language code"
        } else if !known(&self.target) {
            "Invalid target language code"
        } else if self.source == self.target {
            "Source and target languages must be different"
        } else {
            return Ok(());
        };
        Err(vec![json!({
            "type": "value_error",
            "loc": [],
            "msg": format!("Value error, {message}"),
            "input": self.echo(),
            "ctx": {"error": {}},
            "url": "https://errors.pydantic.dev/2.10/v/value_error",
        })])
    }

    /// Every request field with its parsed value (the `input` of a model-level 422).
    fn echo(&self) -> Value {
        json!({
            "source": self.source, "target": self.target, "count": self.count,
            "seed": self.seed, "topic": self.topic, "country": self.country,
            "include_pageviews": self.include_pageviews,
            "search_algorithm": match self.search_algorithm {
                Algorithm::MoreLike => "morelike", Algorithm::MostPopular => "mostpopular" },
            "rank_method": match self.rank_method {
                RankMethod::Default => "default", RankMethod::Sitelinks => "sitelinks" },
        })
    }
}

/// The response items for `query`; `shuffle_seed` drives `rank_method=default`.
pub fn recommend(data: &TranslationData, query: &TranslationQuery, shuffle_seed: u64) -> Value {
    let Some(catalog) = data.catalogs.get(&query.source) else {
        // Production answers an empty list when the source wiki cannot be searched.
        return Value::Array(Vec::new());
    };
    let search = query.seed.is_some() || query.topic.is_some() || query.country.is_some();
    // (article index, rank) in candidate order.
    let ranked: Vec<(usize, i64)> = if search {
        let mut rng = fastrand::Rng::with_seed(shuffle_seed ^ 0x5eed);
        search_candidates(catalog, query, &mut rng)
            .into_iter()
            .filter(|&i| !catalog.articles[i].record.disambiguation)
            .zip(1..)
            .collect()
    } else {
        catalog
            .most_viewed
            .iter()
            .take(MAX_CANDIDATES)
            .map(|&i| i as usize)
            .zip(1..)
            .filter(|&(i, _)| !catalog.articles[i].record.disambiguation)
            .collect()
    };
    let target = query.target.as_str();
    let mapped = DOMAIN_MAPPING
        .iter()
        .find(|(code, _)| *code == target)
        .map_or(target, |(_, domain)| domain);
    let mut items: Vec<(usize, i64)> = ranked
        .into_iter()
        .filter(|&(i, _)| {
            let links = &catalog.articles[i].record.langlinks;
            !links.iter().any(|l| l == target || l == mapped)
        })
        .collect();
    match query.rank_method {
        RankMethod::Default => fastrand::Rng::with_seed(shuffle_seed).shuffle(&mut items),
        RankMethod::Sitelinks => items
            .sort_by_key(|&(i, _)| std::cmp::Reverse(catalog.articles[i].record.langlinks.len())),
    }
    // Python slice semantics: a negative count drops items from the end.
    let keep = if query.count >= 0 {
        usize::try_from(query.count).unwrap_or(usize::MAX)
    } else {
        items
            .len()
            .saturating_sub(usize::try_from(query.count.unsigned_abs()).unwrap_or(usize::MAX))
    };
    items.truncate(keep);
    Value::Array(
        items
            .into_iter()
            .map(|(i, rank)| {
                let record = &catalog.articles[i].record;
                json!({
                    "title": record.title,
                    "pageviews": if query.include_pageviews { record.pageviews } else { 0 },
                    "wikidata_id": record.wikidata_id,
                    "rank": rank,
                    "langlinks_count": record.langlinks.len(),
                })
            })
            .collect(),
    )
}

/// Candidates of the search mode, best first.
fn search_candidates(
    catalog: &Catalog,
    query: &TranslationQuery,
    rng: &mut fastrand::Rng,
) -> Vec<usize> {
    if query.country.is_some() {
        // The catalogs carry no country predictions: no article matches.
        return Vec::new();
    }
    // `+` separates keywords that must all match; `|` alternatives inside one keyword.
    let topic_filter: Option<Vec<HashSet<String>>> = query.topic.as_deref().map(|topic| {
        topic_term(topic)
            .split('+')
            .map(|part| part.split('|').map(str::to_owned).collect())
            .collect()
    });
    let topic_ok = |i: usize| {
        topic_filter.as_ref().is_none_or(|keywords| {
            let term = catalog.articles[i]
                .topic_term
                .as_deref()
                .unwrap_or_default();
            keywords
                .iter()
                .all(|alternatives| alternatives.contains(term))
        })
    };
    match query.seed.as_deref() {
        Some(seed) => more_like(catalog, seed)
            .into_iter()
            .filter(|&i| topic_ok(i))
            .collect(),
        None => {
            // Topic only: production sorts such searches randomly.
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
        TranslationQuery::parse(raw, &data).map(|q| recommend(&data, &q, 7))
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
