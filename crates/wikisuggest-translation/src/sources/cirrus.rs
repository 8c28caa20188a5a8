//! The weekly CirrusSearch index dump: `other/cirrus_search_index/<YYYYMMDD>/index_name=<wiki>_content/*.json.bz2`.
//!
//! Each shard is Elasticsearch bulk NDJSON: an action line (`{"index":{"_id":"12"}}`), then
//! the document (`page_id`, `namespace`, `title`, `redirect`, `text`, `text_bytes`,
//! `source_text`, `wikibase_item`, `weighted_tags`, and more that is not read here). A shard
//! is read as a stream, a line at a time, each at most [`MAX_DOCUMENT_BYTES`].

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Deserialize;
use wikisuggest_search::DocumentRef;

use crate::error::{Error, Result};
use crate::sources::lead::lead_section_size;
use crate::topics::{Kind, parse_tag};

/// Longest document line accepted (enwiki's largest articles make lines of a few MiB).
pub const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

#[derive(Deserialize)]
struct RawRedirect<'a> {
    #[serde(default)]
    namespace: Option<i64>,
    #[serde(borrow, default)]
    title: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct RawDocument<'a> {
    #[serde(default)]
    page_id: Option<u64>,
    #[serde(default)]
    namespace: Option<i64>,
    #[serde(borrow, default)]
    title: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    redirect: Option<Vec<RawRedirect<'a>>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(default)]
    text_bytes: Option<i64>,
    #[serde(borrow, default)]
    source_text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    wikibase_item: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    weighted_tags: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, default)]
    category: Option<Vec<Cow<'a, str>>>,
    /// `primary`, or `redirect` for the redirect documents CirrusSearch can index.
    #[serde(borrow, default)]
    page_type: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ActionId {
    #[serde(rename = "_id", default)]
    id: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Action {
    #[serde(default)]
    index: Option<ActionId>,
    #[serde(default)]
    create: Option<ActionId>,
}

/// What the catalog keeps of a document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub page_id: u64,
    pub text_bytes: Option<i64>,
    pub lead_section_size: Option<i64>,
    /// Topic predictions (label, score), as tagged.
    pub topics: Vec<(String, i16)>,
    /// Country predictions (label, score).
    pub countries: Vec<(String, i16)>,
    /// Category names (without the namespace).
    pub categories: Vec<String>,
}

/// Counts of a shard.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShardStats {
    pub documents: u64,
    /// Documents of other namespaces (skipped).
    pub other_namespaces: u64,
    /// Documents of redirects (`page_type: redirect`, skipped: a redirect is listed in its
    /// target's document).
    pub redirect_documents: u64,
}

fn page_id_of(value: &serde_json::Value) -> Option<u64> {
    match value {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Reads the shard at `path` (`.bz2`, `.gz` or plain), calling `on_document` for each
/// namespace-0 document with its summary and what an index builder needs.
pub fn read_shard(
    path: &Path,
    cancel: &AtomicBool,
    on_document: impl FnMut(Summary, &DocumentRef<'_>) -> Result<()>,
) -> Result<ShardStats> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let name = path.as_os_str().as_encoded_bytes();
    let source: Box<dyn Read + Send> = if name.ends_with(b".bz2") {
        Box::new(wikisuggest_dump::Prefetch::spawn(
            bzip2::read::MultiBzDecoder::new(BufReader::with_capacity(1 << 16, file)),
        ))
    } else if name.ends_with(b".gz") {
        Box::new(wikisuggest_dump::Prefetch::spawn(
            flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 16, file)),
        ))
    } else {
        Box::new(file)
    };
    read_shard_from(source, path, cancel, on_document)
}

/// [`read_shard`] of the decompressed bytes `source` gives.
pub fn read_shard_from(
    source: impl Read,
    path: &Path,
    cancel: &AtomicBool,
    mut on_document: impl FnMut(Summary, &DocumentRef<'_>) -> Result<()>,
) -> Result<ShardStats> {
    let mut reader = BufReader::with_capacity(1 << 20, source);
    let mut line = Vec::new();
    let mut line_no = 0u64;
    let mut stats = ShardStats::default();
    let mut action_id: Option<u64> = None;
    let mut expect_document = false;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        line.clear();
        let n = reader
            .by_ref()
            .take(MAX_DOCUMENT_BYTES + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(path, e))?;
        line_no += 1;
        if n == 0 {
            break;
        }
        if n as u64 > MAX_DOCUMENT_BYTES {
            return Err(Error::dump(
                path,
                format!("line {line_no} is longer than {MAX_DOCUMENT_BYTES} bytes"),
            ));
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        let bad = |e: serde_json::Error| Error::dump(path, format!("line {line_no}: {e}"));
        if !expect_document {
            let action: Action = serde_json::from_slice(text).map_err(bad)?;
            let Some(id) = action.index.or(action.create) else {
                return Err(Error::dump(
                    path,
                    format!("line {line_no}: expected an index action line"),
                ));
            };
            action_id = id.id.as_ref().and_then(page_id_of);
            expect_document = true;
            continue;
        }
        expect_document = false;
        let doc: RawDocument<'_> = serde_json::from_slice(text).map_err(bad)?;
        let Some(page_id) = doc.page_id.or(action_id) else {
            return Err(Error::dump(
                path,
                format!("line {line_no}: a document without a page id"),
            ));
        };
        if doc.namespace.unwrap_or(0) != 0 {
            stats.other_namespaces += 1;
            continue;
        }
        if doc.page_type.as_deref().is_some_and(|t| t != "primary") {
            stats.redirect_documents += 1;
            continue;
        }
        stats.documents += 1;
        let mut summary = Summary {
            page_id,
            text_bytes: doc.text_bytes,
            lead_section_size: doc
                .source_text
                .as_deref()
                .and_then(lead_section_size)
                .and_then(|n| i64::try_from(n).ok()),
            ..Summary::default()
        };
        for tag in doc.weighted_tags.iter().flatten() {
            if let Some((kind, label, score)) = parse_tag(tag) {
                let list = match kind {
                    Kind::Topic => &mut summary.topics,
                    Kind::Country => &mut summary.countries,
                };
                if !list.iter().any(|(l, _)| l == label) {
                    list.push((label.to_owned(), score));
                }
            }
        }
        summary.categories = doc
            .category
            .iter()
            .flatten()
            .map(|c| c.replace('_', " "))
            .collect();
        let redirects: Vec<&str> = doc
            .redirect
            .iter()
            .flatten()
            .filter(|r| r.namespace.unwrap_or(0) == 0)
            .filter_map(|r| r.title.as_deref())
            .collect();
        // The `text` field (the page's rendered text) is what `morelike` searches. Whether a
        // page is a disambiguation page is in `page_props`, read after the search documents:
        // the catalog, not the index, carries that flag.
        let index_doc = DocumentRef {
            page_id,
            title: doc.title.as_deref().unwrap_or_default(),
            text: doc.text.as_deref().unwrap_or_default(),
            redirects: &redirects,
            disambiguation: false,
        };
        // The document's own Wikidata id is the catalog's from `page_props`; it is not kept.
        let _ = &doc.wikibase_item;
        on_document(summary, &index_doc)?;
    }
    if expect_document {
        return Err(Error::dump(
            path,
            "the shard ends after an action line, without its document",
        ));
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const SHARD: &str = r#"{"index":{"_id":"12"}}
{"page_id":12,"namespace":0,"title":"Moon","redirect":[{"namespace":0,"title":"Luna"},{"namespace":1,"title":"Talk:Moon"}],"text":"The Moon orbits Earth.","text_bytes":2048,"source_text":"Lead.\n== Orbit ==\n","wikibase_item":"Q405","weighted_tags":["classification.prediction.articletopic/STEM.Space|987","classification.prediction.articlecountry/United States|512","recommendation.link/exists|1"],"category":["Moons","Natural_satellites"]}
{"index":{"_id":"13"}}
{"namespace":4,"title":"Project page"}
{"index":{"_id":14}}
{"namespace":0,"title":"Sun","text":"Star.","text_bytes":10,"page_type":"primary"}
{"index":{"_id":15}}
{"page_id":15,"namespace":0,"title":"Sol","page_type":"redirect","redirect_target":"Sun"}
"#;

    #[test]
    fn documents_become_summaries_and_index_documents() {
        let mut got = Vec::new();
        let stats = read_shard_from(
            SHARD.as_bytes(),
            Path::new("shard"),
            &AtomicBool::new(false),
            |summary, doc| {
                got.push((
                    summary,
                    doc.title.to_owned(),
                    doc.text.to_owned(),
                    doc.redirects
                        .iter()
                        .map(|r| (*r).to_owned())
                        .collect::<Vec<_>>(),
                ));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(stats.documents, 2);
        assert_eq!(stats.other_namespaces, 1);
        assert_eq!(stats.redirect_documents, 1);
        let (moon, title, text, redirects) = &got[0];
        assert_eq!(moon.page_id, 12);
        assert_eq!(moon.text_bytes, Some(2048));
        assert_eq!(moon.lead_section_size, Some(6));
        assert_eq!(moon.topics, [("STEM.Space".to_owned(), 987)]);
        assert_eq!(moon.countries, [("United States".to_owned(), 512)]);
        assert_eq!(
            (title.as_str(), text.as_str()),
            ("Moon", "The Moon orbits Earth.")
        );
        assert_eq!(redirects, &["Luna"]);
        assert_eq!(moon.categories, ["Moons", "Natural satellites"]);
        // The id of the action line stands in for a missing `page_id`.
        assert_eq!(got[1].0.page_id, 14);
        assert_eq!(got[1].0.lead_section_size, None);
    }

    #[test]
    fn broken_shards_are_errors() {
        let cancel = AtomicBool::new(false);
        for bad in [
            "{\"index\":{\"_id\":\"1\"}}\n{\"page_id\":1,\"title\":\"X\"\n",
            "{\"page_id\":1}\n",
            "{\"index\":{\"_id\":\"1\"}}\n",
            "{\"index\":{}}\n{\"title\":\"no id\"}\n",
        ] {
            let r = read_shard_from(bad.as_bytes(), Path::new("s"), &cancel, |_, _| Ok(()));
            assert!(r.is_err(), "{bad}");
        }
    }
}
