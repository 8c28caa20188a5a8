//! The records the services return, decoded leniently: fields the contract lists are typed
//! (optional unless a record is meaningless without them), anything else the server adds is
//! kept in `extra` so newer servers lose nothing.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Number, Value};

/// Response of both link-recommendation operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkRecommendationSet {
    pub links: Vec<LinkRecommendation>,
    #[serde(default)]
    pub links_count: Option<i64>,
    #[serde(default)]
    pub meta: Option<Meta>,
    #[serde(default)]
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
    #[serde(default)]
    pub score: Option<f64>,
    #[serde(default)]
    pub wikitext_offset: Option<i64>,
    #[serde(default)]
    pub context_before: Option<String>,
    #[serde(default)]
    pub context_after: Option<String>,
    #[serde(default)]
    pub link_index: Option<i64>,
    #[serde(default)]
    pub match_index: Option<i64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    #[serde(default)]
    pub application_version: Option<String>,
    #[serde(default)]
    pub dataset_checksums: Option<DatasetChecksums>,
    #[serde(default)]
    pub format_version: Option<i64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DatasetChecksums {
    #[serde(default)]
    pub anchors: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub pageids: Option<String>,
    #[serde(default)]
    pub redirects: Option<String>,
    #[serde(default)]
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
    #[serde(default)]
    pub wikidata_id: Option<String>,
    /// An integer today, a float in older deployments.
    #[serde(default)]
    pub rank: Option<Number>,
    #[serde(default, deserialize_with = "lenient_int")]
    pub langlinks_count: Option<i64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The two shapes of a translation response: the contract's bare array, and the envelope
/// that deployments have used since November 2025.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum TranslationResponse {
    List(Vec<TranslationRecommendation>),
    Envelope {
        recommendations: Vec<TranslationRecommendation>,
        #[serde(default)]
        continue_offset: Option<i64>,
        #[serde(default)]
        continue_seed: Option<i64>,
    },
}

impl TranslationResponse {
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
fn lenient_int<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
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
        assert_eq!(b[0].extra["size"], 42);
        assert_eq!(b[0].pageviews, None);
        assert!(serde_json::from_str::<TranslationResponse>(r#"{"items":[]}"#).is_err());
    }
}
