//! Per-language catalogs (`<lang>.jsonl.gz` or `<lang>.jsonl`, one article per line) and the
//! term index behind `seed` similarity.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};

/// One catalog line. Every field but `title` is optional, so catalogs written before a field
/// existed still load.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ArticleRecord {
    pub title: String,
    #[serde(default)]
    pub wikidata_id: Option<String>,
    #[serde(default)]
    pub langlinks: Vec<String>,
    #[serde(default)]
    pub pageviews: i64,
    #[serde(default)]
    pub topic: Option<String>,
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub disambiguation: bool,
    /// Article size in bytes (`size` of the answer, and the size filters).
    #[serde(default)]
    pub size: Option<i64>,
    /// Bytes before the first section heading (`lead_section_size`, lead-section filters).
    #[serde(default)]
    pub lead_section_size: Option<i64>,
    /// Country codes (ISO 3166 alpha-3, lower case) the article is about (`country`).
    #[serde(default)]
    pub countries: Vec<String>,
    /// Names of the page collections the article belongs to.
    #[serde(default)]
    pub collections: Vec<String>,
}

/// A line of `collections.json`: what a page collection says about itself.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CollectionInfo {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub end_date: Option<String>,
}

/// A page collection: its description and, per source language, its articles.
#[derive(Debug, Clone, Default)]
pub struct Collection {
    pub info: CollectionInfo,
    /// Language → indexes of the articles of that catalog, in catalog order.
    pub members: BTreeMap<String, Vec<usize>>,
}

#[derive(Debug, Clone)]
pub struct Article {
    pub record: ArticleRecord,
    /// The topic as a search term: lower case, spaces → `-`.
    pub topic_term: Option<String>,
    /// Distinct term ids of the text, with their counts.
    pub terms: Vec<(u32, u32)>,
}

/// One source language.
#[derive(Debug, Default)]
pub struct Catalog {
    pub articles: Vec<Article>,
    by_title: HashMap<String, usize>,
    /// Inverse document frequency per term id.
    pub idf: Vec<f64>,
    /// Term id → articles containing it.
    pub postings: Vec<Vec<u32>>,
    /// Article indexes by pageviews, highest first (the "most viewed" list).
    pub most_viewed: Vec<u32>,
}

impl Catalog {
    pub fn from_records(records: Vec<ArticleRecord>) -> Self {
        let mut vocabulary: HashMap<String, u32> = HashMap::new();
        let mut postings: Vec<Vec<u32>> = Vec::new();
        let mut articles = Vec::with_capacity(records.len());
        let mut by_title = HashMap::new();
        for (index, record) in records.into_iter().enumerate() {
            let mut counts: BTreeMap<u32, u32> = BTreeMap::new();
            for word in tokens(&record.text) {
                let next = vocabulary.len() as u32;
                let id = *vocabulary.entry(word).or_insert(next);
                if id as usize == postings.len() {
                    postings.push(Vec::new());
                }
                *counts.entry(id).or_default() += 1;
            }
            for &id in counts.keys() {
                postings[id as usize].push(index as u32);
            }
            by_title.insert(record.title.clone(), index);
            articles.push(Article {
                topic_term: record.topic.as_deref().map(topic_term),
                terms: counts.into_iter().collect(),
                record,
            });
        }
        let n = articles.len() as f64;
        let idf = postings
            .iter()
            .map(|docs| (1.0 + n / docs.len() as f64).ln())
            .collect();
        let mut most_viewed: Vec<u32> = (0..articles.len() as u32).collect();
        most_viewed.sort_by_key(|&i| std::cmp::Reverse(articles[i as usize].record.pageviews));
        Self {
            articles,
            by_title,
            idf,
            postings,
            most_viewed,
        }
    }

    /// Resolves a title as MediaWiki would: underscores are spaces, first letter upper case.
    pub fn find(&self, title: &str) -> Option<usize> {
        let spaced = title.trim().replace('_', " ");
        let mut chars = spaced.chars();
        let normal: String = match chars.next() {
            Some(first) => first.to_uppercase().chain(chars).collect(),
            None => return None,
        };
        self.by_title.get(&normal).copied()
    }
}

/// Lower-case alphanumeric words of three letters or more (shorter ones carry little).
pub fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
}

pub fn topic_term(topic: &str) -> String {
    topic.trim().to_lowercase().replace(' ', "-")
}

/// All catalogs, and the language codes the server accepts.
#[derive(Debug, Default)]
pub struct TranslationData {
    pub catalogs: BTreeMap<String, Catalog>,
    /// Codes of every language seen (catalogs and interlanguage links).
    pub languages: BTreeSet<String>,
    /// Page collections: those `collections.json` describes, then any other name a record
    /// carries, each once (names compare case-insensitively).
    pub collections: Vec<Collection>,
}

impl TranslationData {
    pub fn open(dir: &Path) -> Result<Self> {
        let mut data = Self::default();
        for entry in std::fs::read_dir(dir).map_err(|e| Error::input(dir, e))? {
            let path = entry.map_err(|e| Error::input(dir, e))?.path();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name == COLLECTIONS_FILE {
                let text = std::fs::read_to_string(&path).map_err(|e| Error::input(&path, e))?;
                let infos: Vec<CollectionInfo> =
                    serde_json::from_str(&text).map_err(|e| Error::input(&path, e))?;
                data.describe_collections(infos);
                continue;
            }
            let (lang, gzipped) = if let Some(lang) = name.strip_suffix(".jsonl.gz") {
                (lang.to_owned(), true)
            } else if let Some(lang) = name.strip_suffix(".jsonl") {
                (lang.to_owned(), false)
            } else {
                continue;
            };
            let file = std::fs::File::open(&path).map_err(|e| Error::input(&path, e))?;
            let reader: Box<dyn Read> = if gzipped {
                // Every member: `cat a.gz b.gz`, pigz and bgzip write several.
                Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(file)))
            } else {
                Box::new(file)
            };
            let records = read_records(reader).map_err(|e| Error::input(&path, e))?;
            log::info!("loaded {} translation articles for {lang}", records.len());
            data.insert(lang, records);
        }
        // Directory order is arbitrary; the collection list is not.
        data.collections
            .sort_by_key(|c| (c.info.name.to_lowercase(), c.info.name.clone()));
        Ok(data)
    }

    pub fn insert(&mut self, lang: String, records: Vec<ArticleRecord>) {
        for record in &records {
            self.languages.extend(record.langlinks.iter().cloned());
        }
        for collection in &mut self.collections {
            collection.members.remove(&lang);
        }
        for (index, record) in records.iter().enumerate() {
            for name in &record.collections {
                let at = self.collection_slot(name);
                self.collections[at]
                    .members
                    .entry(lang.clone())
                    .or_default()
                    .push(index);
            }
        }
        self.languages.insert(lang.clone());
        self.catalogs.insert(lang, Catalog::from_records(records));
    }

    /// Adds (or updates) the descriptions of collections.
    pub fn describe_collections(&mut self, infos: Vec<CollectionInfo>) {
        for info in infos {
            let at = self.collection_slot(&info.name);
            self.collections[at].info = info;
        }
    }

    /// The collection named `name` (any case), if there is one.
    pub fn collection(&self, name: &str) -> Option<&Collection> {
        let wanted = name.to_lowercase();
        self.collections
            .iter()
            .find(|c| c.info.name.to_lowercase() == wanted)
    }

    fn collection_slot(&mut self, name: &str) -> usize {
        let wanted = name.to_lowercase();
        match self
            .collections
            .iter()
            .position(|c| c.info.name.to_lowercase() == wanted)
        {
            Some(at) => at,
            None => {
                self.collections.push(Collection {
                    info: CollectionInfo {
                        name: name.to_owned(),
                        ..CollectionInfo::default()
                    },
                    members: BTreeMap::new(),
                });
                self.collections.len() - 1
            }
        }
    }
}

/// The optional file of collection descriptions beside the catalogs.
pub const COLLECTIONS_FILE: &str = "collections.json";

/// Longest catalog line (one article record) accepted: a longer one is an error naming
/// it, never an allocation of its size.
pub const MAX_LINE_BYTES: u64 = 16 << 20;

fn read_records(reader: impl Read) -> std::result::Result<Vec<ArticleRecord>, String> {
    let mut records = Vec::new();
    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    for n in 1.. {
        line.clear();
        let read = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| e.to_string())?;
        if read == 0 {
            break;
        }
        if read as u64 > MAX_LINE_BYTES {
            return Err(format!("line {n}: longer than {MAX_LINE_BYTES} bytes"));
        }
        let text = std::str::from_utf8(&line).map_err(|e| format!("line {n}: {e}"))?;
        if text.trim().is_empty() {
            continue;
        }
        let record = serde_json::from_str(text).map_err(|e| format!("line {n}: {e}"))?;
        records.push(record);
    }
    Ok(records)
}
