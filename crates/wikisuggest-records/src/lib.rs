//! The contract of Wikimedia's link and translation recommendation services, written once for
//! every side of the wire.
//!
//! - The records the services return, decoded leniently: fields the contract lists are typed
//!   (optional unless a record is meaningless without them), anything else the server adds is
//!   kept in `extra` so newer servers lose nothing. The HTTP client decodes them, the reference
//!   server encodes them, and the local engine's results become them (the engine crate owns
//!   that one mapping). The Python dataclasses of `wikisuggest.records` mirror them field for
//!   field; the binding fills those by name, and a test holds the two lists together.
//! - [`params`]: the operations' parameters with their defaults and checks, which the client
//!   sends, the engine embeds and the server parses into (and Python reads its defaults from).
//! - [`wiki`]: the one rule between a wiki's id, language and domain.

mod invalid;
pub mod params;
pub mod wiki;

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Number, Value};

// A field of type `Option` may be missing from what is read: serde reads it as `None`. A
// field read through `lenient_int` says so with `default`.

/// Response of both link-recommendation operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkRecommendationSet {
    pub links: Vec<LinkRecommendation>,
    pub links_count: Option<i64>,
    pub meta: Option<Meta>,
    pub page_title: Option<String>,
    #[serde(default, deserialize_with = "lenient_int")]
    pub pageid: Option<i64>,
    #[serde(default, deserialize_with = "lenient_int")]
    pub revid: Option<i64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkRecommendation {
    pub link_text: String,
    pub link_target: String,
    pub score: Option<f64>,
    pub wikitext_offset: Option<i64>,
    pub context_before: Option<String>,
    pub context_after: Option<String>,
    pub link_index: Option<i64>,
    pub match_index: Option<i64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub application_version: Option<String>,
    pub dataset_checksums: Option<DatasetChecksums>,
    pub format_version: Option<i64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DatasetChecksums {
    pub anchors: Option<String>,
    pub model: Option<String>,
    pub pageids: Option<String>,
    pub redirects: Option<String>,
    pub w2vfiltered: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One article to translate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranslationRecommendation {
    pub title: String,
    #[serde(default, deserialize_with = "lenient_int")]
    pub pageviews: Option<i64>,
    pub wikidata_id: Option<String>,
    /// An integer today, a float in older deployments.
    pub rank: Option<Number>,
    #[serde(default, deserialize_with = "lenient_int")]
    pub langlinks_count: Option<i64>,
    /// Article size in bytes (since August 2025).
    #[serde(default, deserialize_with = "lenient_int")]
    pub size: Option<i64>,
    /// Lead-section size in bytes, when `lead_section` was asked (since September 2025).
    #[serde(default, deserialize_with = "lenient_int")]
    pub lead_section_size: Option<i64>,
    /// The page collection the article was recommended from (since October 2024).
    pub collection: Option<PageCollectionMetadata>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What an item says about the page collection it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageCollectionMetadata {
    pub name: String,
    pub description: Option<String>,
    pub end_date: Option<String>,
    #[serde(default, deserialize_with = "lenient_int")]
    pub articles_count: Option<i64>,
    /// Language → how many of the collection's articles exist in it (the target's only).
    pub articles_by_language_count: Option<BTreeMap<String, i64>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One page collection, as `/translation/page-collections` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageCollection {
    pub name: String,
    pub description: Option<String>,
    pub end_date: Option<String>,
    #[serde(default, deserialize_with = "lenient_int")]
    pub articles_count: Option<i64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `/translation/page-collection-groups`: the part of a name before `/` → its collections,
/// plus `ungrouped`.
pub type PageCollectionGroups = BTreeMap<String, Vec<PageCollection>>;

/// `/translation/page-collection-membership`: each title or Wikidata id asked about → whether
/// the collection holds it.
pub type PageCollectionMembership = BTreeMap<String, bool>;

/// One answer of operation 3 in either shape: the items and, in single-collection mode, where
/// the next page starts (`continue_offset`, `-1` at the end) and the order's seed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TranslationPage {
    pub items: Vec<TranslationRecommendation>,
    pub continue_offset: Option<i64>,
    pub continue_seed: Option<i64>,
}

/// The two shapes of a translation response: the contract's bare array, and the envelope
/// that deployments have used since November 2025.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum TranslationResponse {
    List(Vec<TranslationRecommendation>),
    Envelope {
        recommendations: Vec<TranslationRecommendation>,
        continue_offset: Option<i64>,
        continue_seed: Option<i64>,
    },
}

impl TranslationResponse {
    /// The answer as a page; the array shape never continues.
    pub fn into_page(self) -> TranslationPage {
        match self {
            Self::List(items) => TranslationPage {
                items,
                ..TranslationPage::default()
            },
            Self::Envelope {
                recommendations,
                continue_offset,
                continue_seed,
            } => TranslationPage {
                items: recommendations,
                continue_offset,
                continue_seed,
            },
        }
    }

    pub fn into_recommendations(self) -> Vec<TranslationRecommendation> {
        match self {
            Self::List(items)
            | Self::Envelope {
                recommendations: items,
                ..
            } => items,
        }
    }
}

/// Integers that some deployments send as floats (`12.0`) or numeric strings.
pub fn lenient_int<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    use serde::de::Error;
    let value = Option::<Value>::deserialize(deserializer)?;
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                    .map(|f| f as i64)
            })
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("expected an integer, got {n}"))),
        Some(Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| D::Error::custom(format!("expected an integer, got {s:?}"))),
        Some(other) => Err(D::Error::custom(format!(
            "expected an integer, got {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_set_keeps_extras_and_tolerates_missing() {
        let json = r#"{"links":[{"link_text":"cat","link_target":"Cat","score":0.75,"new_field":1}],
                       "page_title":"Pet","pageid":"12","future":{"a":1}}"#;
        let set: LinkRecommendationSet = serde_json::from_str(json).unwrap();
        assert_eq!(set.pageid, Some(12));
        assert_eq!(set.revid, None);
        assert_eq!(set.meta, None);
        assert_eq!(set.links[0].extra["new_field"], 1);
        assert_eq!(set.extra["future"]["a"], 1);
        assert_eq!(set.links[0].wikitext_offset, None);
    }

    #[test]
    fn link_set_requires_links() {
        assert!(serde_json::from_str::<LinkRecommendationSet>(r#"{"page_title":"x"}"#).is_err());
        assert!(
            serde_json::from_str::<LinkRecommendationSet>(r#"{"links":[{"link_text":"a"}]}"#)
                .is_err()
        );
    }

    #[test]
    fn translation_both_shapes() {
        let array =
            r#"[{"title":"A","pageviews":0,"wikidata_id":"Q1","rank":12.0,"langlinks_count":3}]"#;
        let envelope = r#"{"recommendations":[{"title":"A","rank":1,"size":42}],"continue_offset":null,"continue_seed":null}"#;
        let a = serde_json::from_str::<TranslationResponse>(array)
            .unwrap()
            .into_recommendations();
        let b = serde_json::from_str::<TranslationResponse>(envelope)
            .unwrap()
            .into_recommendations();
        assert_eq!(a[0].rank.as_ref().and_then(Number::as_f64), Some(12.0));
        assert_eq!(b[0].size, Some(42));
        assert!(b[0].extra.is_empty());
        assert_eq!(b[0].pageviews, None);
        assert!(serde_json::from_str::<TranslationResponse>(r#"{"items":[]}"#).is_err());
    }

    #[test]
    fn translation_pages_and_new_fields() {
        let envelope = r#"{"recommendations":[{"title":"Cello","pageviews":0,"wikidata_id":"Q8371",
            "rank":0,"langlinks_count":4,"size":"3000","lead_section_size":250.0,"badge":"x",
            "collection":{"name":"Wiki99/Music","description":null,"end_date":"2026-01-01",
                          "articles_count":99,"articles_by_language_count":{"fr":40},"v":2}}],
            "continue_offset":12,"continue_seed":4294967295}"#;
        let page = serde_json::from_str::<TranslationResponse>(envelope)
            .unwrap()
            .into_page();
        assert_eq!(
            (page.continue_offset, page.continue_seed),
            (Some(12), Some(4_294_967_295))
        );
        let item = &page.items[0];
        assert_eq!((item.size, item.lead_section_size), (Some(3000), Some(250)));
        assert_eq!(item.extra["badge"], "x");
        let collection = item.collection.as_ref().unwrap();
        assert_eq!(collection.name, "Wiki99/Music");
        assert_eq!(collection.description, None);
        assert_eq!(collection.articles_count, Some(99));
        assert_eq!(
            collection.articles_by_language_count.as_ref().unwrap()["fr"],
            40
        );
        assert_eq!(collection.extra["v"], 2);
        let nulls = r#"{"recommendations":[{"title":"A","size":null,"lead_section_size":null,
            "collection":null}],"continue_offset":null,"continue_seed":null}"#;
        let page = serde_json::from_str::<TranslationResponse>(nulls)
            .unwrap()
            .into_page();
        assert_eq!(
            (page.items[0].size, page.items[0].collection.as_ref()),
            (None, None)
        );
        assert_eq!((page.continue_offset, page.continue_seed), (None, None));
        let array = serde_json::from_str::<TranslationResponse>(r#"[{"title":"A"}]"#)
            .unwrap()
            .into_page();
        assert_eq!(array.items.len(), 1);
        assert_eq!(array.continue_offset, None);
        assert!(
            serde_json::from_str::<TranslationResponse>(r#"[{"title":"A","size":"big"}]"#).is_err()
        );
    }

    #[test]
    fn sibling_endpoint_records() {
        let listed: Vec<PageCollection> = serde_json::from_str(
            r#"[{"name":"Pets","description":"At home","end_date":null,"articles_count":2}]"#,
        )
        .unwrap();
        assert_eq!(listed[0].articles_count, Some(2));
        let groups: PageCollectionGroups = serde_json::from_str(
            r#"{"Wiki99":[{"name":"Wiki99/A","articles_count":1},{"name":"Wiki99/B","articles_count":3}],
                "ungrouped":[]}"#,
        )
        .unwrap();
        assert_eq!(groups["Wiki99"][1].name, "Wiki99/B");
        assert!(groups["ungrouped"].is_empty());
        let membership: PageCollectionMembership =
            serde_json::from_str(r#"{"Q1":true,"Cat":false}"#).unwrap();
        assert_eq!((membership["Q1"], membership["Cat"]), (true, false));
        assert!(serde_json::from_str::<PageCollectionMembership>(r#"{"Q1":"yes"}"#).is_err());
    }
}
