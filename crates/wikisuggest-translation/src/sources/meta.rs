//! Page collections rebuilt from Meta-Wiki's and Wikidata's dumps (`collections` part).
//!
//! Production lists the Meta-Wiki pages (main namespace) carrying a `<page-collection>`
//! marker (the WikimediaCampaignEvents extension), reads each marker's `name`,
//! `description` and `end-date`, and takes as the collection's articles the page's
//! interwiki links: to Wikidata items (`d:Q42`), or to Wikipedia articles (`en:Moon`), both
//! resolved through Wikidata to the item's title in every Wikipedia language. From dumps:
//!
//! - the markers from `metawiki-<date>-pages-articles.xml.bz2` (pages whose own wikitext
//!   holds the tag; a marker that a template writes is not seen);
//! - the links from `metawiki-<date>-iwlinks.sql.gz`, in the order the API lists them
//!   (prefix, then title);
//! - the items' titles from `wikidatawiki-<date>-wb_items_per_site.sql.gz`.
//!
//! One page is one collection (several pages of one name are several collections, as in
//! production); collections without any article are left out; they are listed by name,
//! case-insensitively. A Wikipedia's language is its database name's subdomain
//! (`zh_min_nanwiki` → `zh-min-nan`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::AtomicBool;

use wikisuggest_dump::sql::read_table;

use crate::build::check_cancel;
use crate::error::{Error, Result};
use crate::pq::{TableWriter, Value};
use crate::schema::{self, collections as col};
use crate::sources::site::upper_first;
use crate::wiki::subdomain;

/// Interwiki prefixes of Wikidata on Meta-Wiki.
const WIKIDATA_PREFIXES: [&str; 2] = ["d", "wikidata"];

/// Database names that end in `wiki` but are no language's Wikipedia.
const NOT_WIKIPEDIAS: [&str; 16] = [
    "commonswiki",
    "specieswiki",
    "metawiki",
    "wikidatawiki",
    "mediawikiwiki",
    "sourceswiki",
    "outreachwiki",
    "wikimaniawiki",
    "incubatorwiki",
    "foundationwiki",
    "testwiki",
    "test2wiki",
    "testwikidatawiki",
    "wikifunctionswiki",
    "wikimania2005wiki",
    "wikitech",
];

/// The language of a Wikipedia's database name, or `None` for other sites.
pub fn wikipedia_language(site: &str) -> Option<String> {
    let prefix = site.strip_suffix("wiki")?;
    if prefix.is_empty()
        || NOT_WIKIPEDIAS.contains(&site)
        || !prefix.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
    {
        return None;
    }
    Some(subdomain(site))
}

/// A `<page-collection>` marker's attributes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marker {
    pub name: String,
    pub description: String,
    pub end_date: String,
}

/// The first `<page-collection …>` marker of `wikitext` (outside comments).
pub fn find_marker(wikitext: &str) -> Option<Marker> {
    let lower = wikitext.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("<page-collection") {
        let start = from + at;
        from = start + 1;
        if lower[..start]
            .rfind("<!--")
            .is_some_and(|c| lower[c..start].find("-->").is_none())
        {
            continue;
        }
        let after = &wikitext[start + "<page-collection".len()..];
        if !after.starts_with(|c: char| c.is_whitespace() || c == '>' || c == '/') {
            continue;
        }
        let end = after.find('>')?;
        let attributes = parse_attributes(after[..end].trim_end_matches('/'));
        let get = |k: &str| attributes.get(k).cloned().unwrap_or_default();
        return Some(Marker {
            name: get("name"),
            description: get("description"),
            end_date: get("end-date"),
        });
    }
    None
}

/// HTML-style attributes: `key='v'`, `key="v"` or `key=v`, keys in lower case.
fn parse_attributes(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let key_len = rest
            .find(|c: char| c == '=' || c.is_whitespace())
            .unwrap_or(rest.len());
        let key = rest[..key_len].to_ascii_lowercase();
        rest = rest[key_len..].trim_start();
        let Some(value_part) = rest.strip_prefix('=') else {
            if !key.is_empty() {
                out.insert(key, String::new());
            }
            continue;
        };
        let value_part = value_part.trim_start();
        let (value, tail) = match value_part.chars().next() {
            Some(q @ ('\'' | '"')) => {
                let inner = &value_part[1..];
                let close = inner.find(q).unwrap_or(inner.len());
                (&inner[..close], inner.get(close + 1..).unwrap_or(""))
            }
            _ => {
                let end = value_part
                    .find(char::is_whitespace)
                    .unwrap_or(value_part.len());
                (&value_part[..end], &value_part[end..])
            }
        };
        out.insert(key, decode_entities(value));
        rest = tail.trim_start();
    }
    out
}

fn decode_entities(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A collection page of Meta-Wiki.
#[derive(Debug, Clone)]
struct CollectionPage {
    marker: Marker,
    title: String,
    /// (prefix, title) of its interwiki links, in API order.
    links: Vec<(String, String)>,
}

/// The dumps the `collections` part is built from.
#[derive(Debug, Clone)]
pub struct MetaSources {
    pub pages_articles: std::path::PathBuf,
    pub iwlinks: std::path::PathBuf,
    pub items_per_site: std::path::PathBuf,
}

/// Builds `collections.parquet` at `out`; returns the number of collections.
pub fn build_collections(sources: &MetaSources, out: &Path, cancel: &AtomicBool) -> Result<u64> {
    // 1. The marked pages.
    let mut pages: BTreeMap<u64, CollectionPage> = BTreeMap::new();
    let mut reader = wikisuggest_dump::open(&sources.pages_articles, &Default::default())?;
    let mut seen = 0u64;
    while let Some(item) = reader.next_item()? {
        seen += 1;
        if seen.is_multiple_of(4096) {
            check_cancel(cancel)?;
        }
        let Ok(page) = item else { continue };
        if page.ns != 0 || page.redirect.is_some() {
            continue;
        }
        if let Some(marker) = find_marker(&page.text) {
            pages.insert(
                u64::try_from(page.id).unwrap_or_default(),
                CollectionPage {
                    marker,
                    title: page.title.clone(),
                    links: Vec::new(),
                },
            );
        }
    }
    // Translations of a marked page (`Page/fr` of the Translate extension) carry its
    // marker too; MediaWiki ignores the marker there.
    let titles: HashSet<String> = pages.values().map(|p| p.title.clone()).collect();
    pages.retain(|_, p| {
        !p.title
            .rsplit_once('/')
            .is_some_and(|(base, lang)| titles.contains(base) && is_language_code(lang))
    });

    // 2. Their interwiki links.
    read_table(&sources.iwlinks, "iwlinks", |cols, row| -> Result<()> {
        let index = |n: &str| {
            cols.index(n)
                .ok_or_else(|| Error::dump(&sources.iwlinks, format!("no column {n}")))
        };
        let (from, prefix, title) = (
            index("iwl_from")?,
            index("iwl_prefix")?,
            index("iwl_title")?,
        );
        if let Some(id) = row[from].as_u64()
            && let Some(page) = pages.get_mut(&id)
        {
            page.links.push((
                row[prefix].as_str().unwrap_or_default().to_owned(),
                row[title].as_str().unwrap_or_default().to_owned(),
            ));
        }
        Ok(())
    })?;
    for page in pages.values_mut() {
        page.links.sort();
        page.links.dedup();
    }

    // 3. The items: by id, and by (site, title) for the links to articles.
    let mut qids: HashSet<u64> = HashSet::new();
    let mut by_title: HashMap<(String, String), Option<u64>> = HashMap::new();
    for page in pages.values() {
        for (prefix, title) in &page.links {
            if WIKIDATA_PREFIXES.contains(&prefix.as_str()) {
                if let Some(q) = leading_qid(title) {
                    qids.insert(q);
                }
            } else if !title.contains(':')
                && let Some(site) = site_of_prefix(prefix)
            {
                by_title.insert((site, normalise(title)), None);
            }
        }
    }
    let columns = |cols: &wikisuggest_dump::sql::Columns| -> Result<[usize; 3]> {
        let mut out = [0; 3];
        for (slot, n) in out
            .iter_mut()
            .zip(["ips_item_id", "ips_site_id", "ips_site_page"])
        {
            *slot = cols
                .index(n)
                .ok_or_else(|| Error::dump(&sources.items_per_site, format!("no column {n}")))?;
        }
        Ok(out)
    };
    let mut rows = 0u64;
    read_table(
        &sources.items_per_site,
        "wb_items_per_site",
        |cols, row| -> Result<()> {
            rows += 1;
            if rows.is_multiple_of(65536) {
                check_cancel(cancel)?;
            }
            let [item, site, title] = columns(cols)?;
            let key = (
                row[site].as_str().unwrap_or_default().to_owned(),
                row[title].as_str().unwrap_or_default().to_owned(),
            );
            if let Some(slot) = by_title.get_mut(&key) {
                *slot = row[item].as_u64();
            }
            Ok(())
        },
    )?;
    let wanted: HashSet<u64> = qids
        .iter()
        .copied()
        .chain(by_title.values().flatten().copied())
        .collect();
    let mut sitelinks: HashMap<u64, Vec<(String, String)>> = HashMap::new();
    read_table(
        &sources.items_per_site,
        "wb_items_per_site",
        |cols, row| -> Result<()> {
            let [item, site, title] = columns(cols)?;
            if let Some(q) = row[item].as_u64()
                && wanted.contains(&q)
                && let Some(language) = wikipedia_language(row[site].as_str().unwrap_or_default())
            {
                sitelinks
                    .entry(q)
                    .or_default()
                    .push((language, row[title].as_str().unwrap_or_default().to_owned()));
            }
            Ok(())
        },
    )?;
    for links in sitelinks.values_mut() {
        links.sort();
    }

    // 4. The collections, by name.
    let mut collections: Vec<(&CollectionPage, Vec<u64>)> = Vec::new();
    for page in pages.values() {
        let mut items: Vec<u64> = Vec::new();
        let mut from_items: HashMap<String, HashSet<String>> = HashMap::new();
        for (prefix, title) in &page.links {
            if WIKIDATA_PREFIXES.contains(&prefix.as_str())
                && let Some(q) = leading_qid(title)
                && !items.contains(&q)
                && sitelinks.contains_key(&q)
            {
                items.push(q);
                for (lang, t) in &sitelinks[&q] {
                    from_items
                        .entry(lang.clone())
                        .or_default()
                        .insert(t.clone());
                }
            }
        }
        for (prefix, title) in &page.links {
            if WIKIDATA_PREFIXES.contains(&prefix.as_str()) || title.contains(':') {
                continue;
            }
            let Some(site) = site_of_prefix(prefix) else {
                continue;
            };
            let language = subdomain(&site);
            let normal = normalise(title);
            if from_items
                .get(&language)
                .is_some_and(|t| t.contains(&normal))
            {
                continue;
            }
            if let Some(Some(q)) = by_title.get(&(site, normal))
                && !items.contains(q)
                && sitelinks.contains_key(q)
            {
                items.push(*q);
            }
        }
        if !items.is_empty() {
            collections.push((page, items));
        }
    }
    let name_of = |p: &CollectionPage| {
        if p.marker.name.is_empty() {
            p.title.clone()
        } else {
            p.marker.name.clone()
        }
    };
    collections.sort_by_key(|(p, _)| name_of(p).to_lowercase());
    let mut w = TableWriter::create(out, schema::COLLECTIONS_SCHEMA)?;
    let l = |w: &TableWriter, n: &str| w.leaf(n);
    let (name, description, end_date, position, qid) = (
        l(&w, col::COLLECTION)?,
        l(&w, col::DESCRIPTION)?,
        l(&w, col::END_DATE)?,
        l(&w, col::POSITION)?,
        l(&w, col::WIKIDATA_ID)?,
    );
    let (lang, title) = (
        l(&w, "sitelinks.list.element.lang")?,
        l(&w, "sitelinks.list.element.title")?,
    );
    for (page, items) in &collections {
        let collection_name = name_of(page);
        for (i, q) in items.iter().enumerate() {
            w.flat(name, Some(Value::Str(&collection_name)));
            w.flat(description, Some(Value::Str(&page.marker.description)));
            w.flat(end_date, Some(Value::Str(&page.marker.end_date)));
            w.flat(
                position,
                Some(Value::I32(i32::try_from(i).unwrap_or(i32::MAX))),
            );
            let id = format!("Q{q}");
            w.flat(qid, Some(Value::Str(&id)));
            let links = sitelinks.get(q).map(Vec::as_slice).unwrap_or_default();
            w.list(
                &[lang, title],
                Some(
                    links
                        .iter()
                        .map(|(l, t)| vec![Value::Str(l), Value::Str(t)]),
                ),
            );
            w.end_row()?;
        }
    }
    w.finish()?;
    Ok(collections.len() as u64)
}

/// `Q42…` → 42 (production matches a leading `Q` and digits).
fn leading_qid(title: &str) -> Option<u64> {
    let digits: String = title
        .strip_prefix('Q')?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The Wikipedia an interwiki prefix of Meta-Wiki may lead to (`en` → `enwiki`, `w` →
/// `enwiki`): whether that site exists is for Wikidata's table to say (`wikt` gives
/// `wiktwiki`, which matches nothing).
fn site_of_prefix(prefix: &str) -> Option<String> {
    let prefix = prefix.to_ascii_lowercase();
    if prefix == "w" || prefix == "wikipedia" {
        return Some("enwiki".to_owned());
    }
    if !is_language_code(&prefix) {
        return None;
    }
    let site = if prefix == "be-tarask" {
        "be_x_oldwiki".to_owned()
    } else {
        format!("{}wiki", prefix.replace('-', "_"))
    };
    wikipedia_language(&site).map(|_| site)
}

fn is_language_code(s: &str) -> bool {
    (2..=12).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
        && s.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
}

/// A link's title as Wikidata stores sitelinks: spaces, first letter upper.
fn normalise(title: &str) -> String {
    upper_first(title.replace('_', " ").trim())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn markers_and_their_attributes() {
        let m = find_marker(
            "Intro\n<page-collection name='Wiki99/food' description=\"Food &amp; drink\" end-date=2026-12-31></page-collection>",
        )
        .unwrap();
        assert_eq!(m.name, "Wiki99/food");
        assert_eq!(m.description, "Food & drink");
        assert_eq!(m.end_date, "2026-12-31");
        assert_eq!(find_marker("<!-- <page-collection name='x'/> -->"), None);
        assert_eq!(find_marker("<page-collections name='x'/>"), None);
        assert_eq!(
            find_marker("<PAGE-COLLECTION />").unwrap(),
            Marker::default()
        );
    }

    #[test]
    fn sites_and_languages() {
        assert_eq!(wikipedia_language("enwiki").as_deref(), Some("en"));
        assert_eq!(
            wikipedia_language("zh_min_nanwiki").as_deref(),
            Some("zh-min-nan")
        );
        assert_eq!(wikipedia_language("commonswiki"), None);
        assert_eq!(wikipedia_language("enwikivoyage"), None);
        assert_eq!(site_of_prefix("fr").as_deref(), Some("frwiki"));
        assert_eq!(site_of_prefix("w").as_deref(), Some("enwiki"));
        // A prefix of another project gives a site Wikidata does not know: no match there.
        assert_eq!(site_of_prefix("wikt").as_deref(), Some("wiktwiki"));
        assert_eq!(site_of_prefix("Q"), None);
        assert_eq!(leading_qid("Q42"), Some(42));
        assert_eq!(leading_qid("Q42x"), Some(42));
        assert_eq!(leading_qid("P31"), None);
    }
}
