//! CirrusSearch's morelike settings (`CirrusSearchMoreLikeThisConfig`), their checks and their
//! per-wiki and per-call overrides.

use serde::{Deserialize, Serialize};

use crate::error::{Result, invalid};

/// `CirrusSearchMoreLikeThisMaxQueryTermsLimit`: `max_query_terms` is capped here.
pub const MAX_QUERY_TERMS_LIMIT: u32 = 100;

/// The parameters of one morelike query. `Default` is CirrusSearch's configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MoreLikeParams {
    /// A term must occur at least this often in the seeds together (0: no bound).
    pub min_term_freq: u32,
    /// A term must occur in at least this many documents (0: no bound).
    pub min_doc_freq: u32,
    /// A term may occur in at most this many documents (`None`: no bound).
    pub max_doc_freq: Option<u32>,
    /// The most terms the query keeps (capped at [`MAX_QUERY_TERMS_LIMIT`]).
    pub max_query_terms: u32,
    /// Shorter terms (in UTF-16 units, as Java counts) are ignored (0: no bound).
    pub min_word_length: u32,
    /// Longer terms are ignored (0: no bound).
    pub max_word_length: u32,
    /// How many of the query's terms a hit must contain: `"30%"`, `"-25%"`, `"3"`, `"-2"`.
    pub minimum_should_match: String,
}

impl Default for MoreLikeParams {
    fn default() -> Self {
        Self {
            min_term_freq: 2,
            min_doc_freq: 2,
            max_doc_freq: None,
            max_query_terms: 25,
            min_word_length: 0,
            max_word_length: 0,
            minimum_should_match: "30%".to_owned(),
        }
    }
}

/// Overrides of some parameters (a wiki's `MediaWiki:Cirrussearch-morelikethis-settings`, or
/// one call's arguments); what is `None` keeps the value it overrides.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MoreLikeOverrides {
    pub min_term_freq: Option<u32>,
    pub min_doc_freq: Option<u32>,
    /// `Some(None)` lifts a bound set below; JSON `null` does the same.
    #[serde(with = "double_option")]
    pub max_doc_freq: Option<Option<u32>>,
    pub max_query_terms: Option<u32>,
    pub min_word_length: Option<u32>,
    pub max_word_length: Option<u32>,
    pub minimum_should_match: Option<String>,
}

mod double_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Option<u32>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            None => s.serialize_none(),
            Some(inner) => inner.serialize(s),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<u32>>, D::Error> {
        Option::<u32>::deserialize(d).map(Some)
    }
}

impl MoreLikeParams {
    /// These parameters with `overrides` applied, checked.
    pub fn with(&self, overrides: &MoreLikeOverrides) -> Result<Self> {
        let o = overrides;
        let out = Self {
            min_term_freq: o.min_term_freq.unwrap_or(self.min_term_freq),
            min_doc_freq: o.min_doc_freq.unwrap_or(self.min_doc_freq),
            max_doc_freq: o.max_doc_freq.unwrap_or(self.max_doc_freq),
            max_query_terms: o.max_query_terms.unwrap_or(self.max_query_terms),
            min_word_length: o.min_word_length.unwrap_or(self.min_word_length),
            max_word_length: o.max_word_length.unwrap_or(self.max_word_length),
            minimum_should_match: o
                .minimum_should_match
                .clone()
                .unwrap_or_else(|| self.minimum_should_match.clone()),
        };
        out.check()?;
        Ok(out)
    }

    /// Rejects what CirrusSearch or Elasticsearch would reject.
    pub fn check(&self) -> Result<()> {
        if self.max_query_terms == 0 {
            return Err(invalid("max_query_terms", "must be at least 1"));
        }
        minimum_should_match(&self.minimum_should_match, 1)?;
        Ok(())
    }

    /// The query-term bound in force: `max_query_terms` capped at 100, as CirrusSearch caps it.
    pub fn query_terms_limit(&self) -> usize {
        self.max_query_terms.min(MAX_QUERY_TERMS_LIMIT) as usize
    }
}

/// Elasticsearch's `Queries.calculateMinShouldMatch` for the simple forms (an integer or a
/// percentage, either possibly negative), in its float arithmetic: `⌊n·p/100⌋` for `p%`,
/// `n - ⌊n·p/100⌋` for `-p%`, never below 0.
pub fn minimum_should_match(spec: &str, optional_clauses: usize) -> Result<usize> {
    let bad = || {
        invalid(
            "minimum_should_match",
            format!("expected an integer or a percentage such as \"30%\", got {spec:?}"),
        )
    };
    let spec = spec.trim();
    let n = i64::try_from(optional_clauses).map_err(|_| bad())?;
    let result = if let Some(percent) = spec.strip_suffix('%') {
        let percent: i32 = percent.trim().parse().map_err(|_| bad())?;
        if !(-100..=100).contains(&percent) {
            return Err(bad());
        }
        // `float calc = (result * percent) * (1 / 100f)`, then a cast toward zero.
        let calc = (n as i32).saturating_mul(percent) as f32 * (1.0f32 / 100.0f32);
        if calc < 0.0 {
            n + calc as i64
        } else {
            calc as i64
        }
    } else {
        let calc: i64 = spec.parse().map_err(|_| bad())?;
        if calc < 0 { n + calc } else { calc }
    };
    Ok(usize::try_from(result.max(0)).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_cirrussearchs() {
        let p = MoreLikeParams::default();
        assert_eq!(p.min_term_freq, 2);
        assert_eq!(p.min_doc_freq, 2);
        assert_eq!(p.max_doc_freq, None);
        assert_eq!(p.max_query_terms, 25);
        assert_eq!((p.min_word_length, p.max_word_length), (0, 0));
        assert_eq!(p.minimum_should_match, "30%");
    }

    #[test]
    fn thirty_percent_is_floored() {
        let msm = |n| minimum_should_match("30%", n).ok();
        assert_eq!(msm(25), Some(7));
        assert_eq!(msm(10), Some(3));
        assert_eq!(msm(3), Some(0));
        assert_eq!(msm(4), Some(1));
        assert_eq!(msm(0), Some(0));
        assert_eq!(minimum_should_match("-25%", 10).ok(), Some(8));
        assert_eq!(minimum_should_match("3", 10).ok(), Some(3));
        assert_eq!(minimum_should_match("-2", 10).ok(), Some(8));
        assert_eq!(minimum_should_match("-20", 10).ok(), Some(0));
        assert!(minimum_should_match("3<90%", 10).is_err());
        assert!(minimum_should_match("x", 10).is_err());
    }

    #[test]
    fn overrides_apply_and_are_checked() {
        let base = MoreLikeParams::default();
        let o: MoreLikeOverrides = serde_json::from_str(
            r#"{"min_doc_freq": 1, "max_doc_freq": 9, "max_query_terms": 500}"#,
        )
        .unwrap_or_default();
        let p = base.with(&o).unwrap_or_default();
        assert_eq!((p.min_doc_freq, p.max_doc_freq), (1, Some(9)));
        assert_eq!(p.query_terms_limit(), 100);
        let lift: MoreLikeOverrides =
            serde_json::from_str(r#"{"max_doc_freq": null}"#).unwrap_or_default();
        assert_eq!(p.with(&lift).map(|p| p.max_doc_freq).ok(), Some(None));
        let bad = MoreLikeOverrides {
            minimum_should_match: Some("lots".into()),
            ..MoreLikeOverrides::default()
        };
        assert!(base.with(&bad).is_err());
        assert!(serde_json::from_str::<MoreLikeOverrides>(r#"{"boost": 1}"#).is_err());
    }
}
