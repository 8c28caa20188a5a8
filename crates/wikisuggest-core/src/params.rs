//! Operation parameters, validated before anything is sent.
//!
//! The services accept almost anything (the link service does not range-check `threshold`,
//! the translation service applies a negative `count` as a slice), so the client is where a
//! caller learns that a value makes no sense.

use serde::Serialize;

use crate::encode::Query;
use crate::error::{Error, Result};

/// Parameters shared by both link-recommendation operations.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkParams {
    pub project: String,
    pub domain: String,
    pub page_title: String,
    pub language_code: Option<String>,
    pub threshold: f64,
    pub sections_to_exclude: Vec<String>,
    pub max_recommendations: i64,
}

impl LinkParams {
    pub fn new(project: &str, domain: &str, page_title: &str) -> Self {
        Self {
            project: project.to_owned(),
            domain: domain.to_owned(),
            page_title: page_title.to_owned(),
            language_code: None,
            threshold: 0.5,
            sections_to_exclude: Vec::new(),
            max_recommendations: 15,
        }
    }

    pub fn validate(&self) -> Result<()> {
        if self.project != "wikipedia" {
            return Err(Error::invalid(
                "project",
                format!(
                    "{:?} is not supported; the service serves only \"wikipedia\"",
                    self.project
                ),
            ));
        }
        check_code("domain", &self.domain)?;
        if let Some(code) = &self.language_code {
            check_code("language_code", code)?;
        }
        if self.page_title.trim().is_empty() {
            return Err(Error::invalid("page_title", "must not be empty"));
        }
        check_link_options(
            self.threshold,
            self.max_recommendations,
            &self.sections_to_exclude,
        )
    }

    /// The query parameters common to GET and POST.
    pub(crate) fn query(&self, include_sections: bool) -> Query {
        let mut q = Query::new();
        if let Some(code) = &self.language_code {
            q.push("language_code", code.as_str());
        }
        q.push("threshold", format_float(self.threshold));
        q.push("max_recommendations", self.max_recommendations.to_string());
        if include_sections {
            for section in &self.sections_to_exclude {
                q.push("sections_to_exclude", section.as_str());
            }
        }
        q
    }
}

/// The JSON body of operation 2.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RevisionBody {
    pub wikitext: String,
    pub revid: i64,
    pub pageid: i64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sections_to_exclude: Vec<String>,
}

impl RevisionBody {
    pub fn validate(&self) -> Result<()> {
        check_count("revid", self.revid)?;
        check_count("pageid", self.pageid)?;
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchAlgorithm {
    MoreLike,
    MostPopular,
}

impl SearchAlgorithm {
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "morelike" => Ok(Self::MoreLike),
            "mostpopular" => Ok(Self::MostPopular),
            other => Err(Error::invalid(
                "search_algorithm",
                format!("must be \"morelike\" or \"mostpopular\", got {other:?}"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::MoreLike => "morelike",
            Self::MostPopular => "mostpopular",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankMethod {
    Default,
    Sitelinks,
}

impl RankMethod {
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "default" => Ok(Self::Default),
            "sitelinks" => Ok(Self::Sitelinks),
            other => Err(Error::invalid(
                "rank_method",
                format!("must be \"default\" or \"sitelinks\", got {other:?}"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Sitelinks => "sitelinks",
        }
    }
}

/// Parameters of operation 3.
#[derive(Debug, Clone, PartialEq)]
pub struct TranslationParams {
    pub source: String,
    pub target: String,
    pub count: i64,
    pub seed: Vec<String>,
    pub topic: Vec<String>,
    pub include_pageviews: bool,
    pub search_algorithm: SearchAlgorithm,
    pub rank_method: RankMethod,
}

impl TranslationParams {
    pub fn new(source: &str, target: &str) -> Self {
        Self {
            source: source.to_owned(),
            target: target.to_owned(),
            count: 12,
            seed: Vec::new(),
            topic: Vec::new(),
            include_pageviews: false,
            search_algorithm: SearchAlgorithm::MoreLike,
            rank_method: RankMethod::Default,
        }
    }

    pub fn validate(&self) -> Result<()> {
        check_code("source", &self.source)?;
        check_code("target", &self.target)?;
        if self.source == self.target {
            return Err(Error::invalid(
                "target",
                "source and target languages must be different",
            ));
        }
        check_count("count", self.count)?;
        for (name, values) in [("seed", &self.seed), ("topic", &self.topic)] {
            for value in values {
                if value.trim().is_empty() {
                    return Err(Error::invalid(name, "entries must not be empty"));
                }
                if value.contains('|') {
                    return Err(Error::invalid(
                        name,
                        format!(
                            "{value:?} contains '|', which separates entries; pass a list instead"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn query(&self) -> Query {
        let mut q = Query::new();
        q.push("source", self.source.as_str())
            .push("target", self.target.as_str())
            .push("count", self.count.to_string());
        if !self.seed.is_empty() {
            q.push("seed", self.seed.join("|"));
        }
        if !self.topic.is_empty() {
            q.push("topic", self.topic.join("|"));
        }
        q.push(
            "include_pageviews",
            if self.include_pageviews {
                "true"
            } else {
                "false"
            },
        )
        .push("search_algorithm", self.search_algorithm.as_str())
        .push("rank_method", self.rank_method.as_str());
        q
    }
}

/// Language codes and wiki subdomains: ASCII letters, digits, `-` and `_`
/// (`en`, `simple`, `be-tarask`, `bat_smg`, `zh-min-nan`).
fn check_code(name: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        return Err(Error::invalid(name, "must not be empty"));
    }
    if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(Error::invalid(
            name,
            format!(
                "{value:?} is not a language code or wiki subdomain (letters, digits, '-', '_')"
            ),
        ));
    }
    Ok(())
}

/// The ranges of the options every link operation shares, checked the same way wherever one
/// runs: by the client before it sends, by the local engine before it computes. NaN fails the
/// range check (it would otherwise compare as "keep every link").
pub fn check_link_options(
    threshold: f64,
    max_recommendations: i64,
    sections_to_exclude: &[String],
) -> Result<()> {
    if !(0.0..=1.0).contains(&threshold) {
        return Err(Error::invalid(
            "threshold",
            format!("must be between 0 and 1, got {threshold}"),
        ));
    }
    check_count("max_recommendations", max_recommendations)?;
    if sections_to_exclude.iter().any(String::is_empty) {
        return Err(Error::invalid(
            "sections_to_exclude",
            "section names must not be empty",
        ));
    }
    Ok(())
}

/// What a service that, like the upstream one, compares scores against any `threshold` can
/// still refuse: a value that is not a number at all. The reference server calls this, so an
/// out-of-range threshold keeps upstream's answer (no links) while NaN is a 400.
pub fn check_threshold_is_number(threshold: f64) -> Result<()> {
    if threshold.is_nan() {
        return Err(Error::invalid("threshold", "must be a number, got NaN"));
    }
    Ok(())
}

fn check_count(name: &str, value: i64) -> Result<()> {
    if value < 0 {
        return Err(Error::invalid(
            name,
            format!("must be a non-negative integer, got {value}"),
        ));
    }
    Ok(())
}

/// Shortest decimal that reads back as the same double (`0.5`, not `0.500000`).
fn format_float(value: f64) -> String {
    let text = value.to_string();
    if text.contains('.') || text.contains('e') {
        text
    } else {
        format!("{text}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_params_validation() {
        let ok = LinkParams::new("wikipedia", "en", "Cat");
        ok.validate().unwrap();
        let cases: Vec<(LinkParams, &str)> = vec![
            (LinkParams::new("wiktionary", "en", "Cat"), "project"),
            (LinkParams::new("wikipedia", "", "Cat"), "domain"),
            (LinkParams::new("wikipedia", "en/x", "Cat"), "domain"),
            (LinkParams::new("wikipedia", "en", "  "), "page_title"),
            (
                LinkParams {
                    threshold: 1.5,
                    ..ok.clone()
                },
                "threshold",
            ),
            (
                LinkParams {
                    threshold: f64::NAN,
                    ..ok.clone()
                },
                "threshold",
            ),
            (
                LinkParams {
                    max_recommendations: -1,
                    ..ok.clone()
                },
                "max_recommendations",
            ),
            (
                LinkParams {
                    language_code: Some(String::new()),
                    ..ok.clone()
                },
                "language_code",
            ),
            (
                LinkParams {
                    sections_to_exclude: vec![String::new()],
                    ..ok.clone()
                },
                "sections_to_exclude",
            ),
        ];
        for (params, field) in cases {
            match params.validate() {
                Err(Error::InvalidParameter { name, .. }) => assert_eq!(name, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }

    #[test]
    fn shared_link_option_checks() {
        check_link_options(0.0, 0, &[]).unwrap();
        check_link_options(1.0, 15, &["See also".to_owned()]).unwrap();
        assert!(check_link_options(0.5, 15, &[String::new()]).is_err());
        for (threshold, max, name) in [
            (f64::NAN, 15, "threshold"),
            (f64::INFINITY, 15, "threshold"),
            (2.0, 15, "threshold"),
            (-0.1, 15, "threshold"),
            (0.5, -1, "max_recommendations"),
        ] {
            match check_link_options(threshold, max, &[]) {
                Err(Error::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
                other => panic!("{threshold} {max}: {other:?}"),
            }
        }
        assert!(check_threshold_is_number(f64::NAN).is_err());
        check_threshold_is_number(1.5).unwrap();
        let mut nan = LinkParams::new("wikipedia", "en", "Cat");
        nan.threshold = f64::NAN;
        assert!(nan.validate().is_err());
    }

    #[test]
    fn link_query_encoding() {
        let p = LinkParams {
            language_code: Some("en".into()),
            threshold: 0.25,
            sections_to_exclude: vec!["%LEAD%".into(), "See also".into()],
            max_recommendations: 0,
            ..LinkParams::new("wikipedia", "simple", "Cat")
        };
        assert_eq!(
            p.query(true).encode(),
            "language_code=en&threshold=0.25&max_recommendations=0&sections_to_exclude=%25LEAD%25&sections_to_exclude=See%20also"
        );
        assert_eq!(
            p.query(false).encode(),
            "language_code=en&threshold=0.25&max_recommendations=0"
        );
        let whole = LinkParams {
            threshold: 1.0,
            ..LinkParams::new("wikipedia", "en", "Cat")
        };
        assert!(whole.query(true).encode().contains("threshold=1.0"));
    }

    #[test]
    fn translation_query_encoding() {
        let p = TranslationParams {
            seed: vec!["Apple".into(), "Banana split".into()],
            topic: vec!["Women+Space".into()],
            include_pageviews: true,
            rank_method: RankMethod::Sitelinks,
            ..TranslationParams::new("en", "fr")
        };
        p.validate().unwrap();
        assert_eq!(
            p.query().encode(),
            "source=en&target=fr&count=12&seed=Apple%7CBanana%20split&topic=Women%2BSpace&include_pageviews=true&search_algorithm=morelike&rank_method=sitelinks"
        );
    }

    #[test]
    fn translation_validation() {
        assert!(TranslationParams::new("en", "en").validate().is_err());
        assert!(
            TranslationParams {
                count: -2,
                ..TranslationParams::new("en", "fr")
            }
            .validate()
            .is_err()
        );
        assert!(
            TranslationParams {
                seed: vec!["A|B".into()],
                ..TranslationParams::new("en", "fr")
            }
            .validate()
            .is_err()
        );
        assert!(SearchAlgorithm::parse("fulltext").is_err());
        assert!(RankMethod::parse("pageviews").is_err());
    }

    #[test]
    fn body_serialisation() {
        let body = RevisionBody {
            wikitext: "x".into(),
            revid: 5,
            pageid: 7,
            sections_to_exclude: vec![],
        };
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"wikitext":"x","revid":5,"pageid":7}"#
        );
    }
}
