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

/// Parameters of operation 3, as the service reads them today (translation-service.md §1.2).
/// Optional ones are sent only when set, so a request with the defaults is the contract's.
#[derive(Debug, Clone, PartialEq)]
pub struct TranslationParams {
    pub source: String,
    pub target: String,
    pub count: i64,
    /// Seed titles (sent joined by `|`); with `collections`, one collection name.
    pub seed: Vec<String>,
    /// Topic terms, one alternative each (joined by `|`); `+` inside one means "and".
    pub topic: Vec<String>,
    /// ISO 3166 alpha-3 country codes, as `topic` (`|` or, `+` and).
    pub country: Vec<String>,
    pub include_pageviews: bool,
    pub search_algorithm: SearchAlgorithm,
    pub rank_method: RankMethod,
    /// Recommend from page collections (`seed` names one, or a group of them).
    pub collections: bool,
    /// A collection whose articles are interleaved with the others.
    pub featured_collection: Option<String>,
    /// Inclusive size bounds in bytes: of the article, or of its lead with `lead_section`.
    pub min_size: Option<i64>,
    pub max_size: Option<i64>,
    /// Size bounds apply to the lead section; items carry `lead_section_size`.
    pub lead_section: bool,
    /// Single-collection paging: the previous page's `continue_offset` and `continue_seed`.
    pub continue_offset: Option<i64>,
    pub continue_seed: Option<i64>,
}

impl TranslationParams {
    pub fn new(source: &str, target: &str) -> Self {
        Self {
            source: source.to_owned(),
            target: target.to_owned(),
            count: 12,
            seed: Vec::new(),
            topic: Vec::new(),
            country: Vec::new(),
            include_pageviews: false,
            search_algorithm: SearchAlgorithm::MoreLike,
            rank_method: RankMethod::Default,
            collections: false,
            featured_collection: None,
            min_size: None,
            max_size: None,
            lead_section: false,
            continue_offset: None,
            continue_seed: None,
        }
    }

    /// The parameters of the page after `page`, or `None` when the service signalled the
    /// end (`continue_offset` absent or `-1`).
    pub fn next_page(&self, page: &crate::models::TranslationPage) -> Option<Self> {
        let offset = page.continue_offset.filter(|&o| o >= 0)?;
        Some(Self {
            continue_offset: Some(offset),
            continue_seed: page.continue_seed.or(self.continue_seed),
            ..self.clone()
        })
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
        for (name, values) in [
            ("seed", &self.seed),
            ("topic", &self.topic),
            ("country", &self.country),
        ] {
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
        for code in self.country.iter().flat_map(|c| c.split('+')) {
            if code.len() != 3 || !code.bytes().all(|b| b.is_ascii_alphabetic()) {
                return Err(Error::invalid(
                    "country",
                    format!("{code:?} is not an ISO 3166 alpha-3 code (such as \"can\")"),
                ));
            }
        }
        if self.collections && self.seed.len() > 1 {
            return Err(Error::invalid(
                "seed",
                "with collections, seed is one collection name",
            ));
        }
        if let Some(name) = &self.featured_collection
            && name.trim().is_empty()
        {
            return Err(Error::invalid("featured_collection", "must not be empty"));
        }
        if let Some(min) = self.min_size {
            check_count("min_size", min)?;
        }
        if let Some(max) = self.max_size {
            check_count("max_size", max)?;
        }
        if let (Some(min), Some(max)) = (self.min_size, self.max_size)
            && min > max
        {
            return Err(Error::invalid(
                "min_size",
                format!("{min} is above max_size {max}: nothing could match"),
            ));
        }
        if let Some(offset) = self.continue_offset {
            // -1 marks the end of the pages; it is not a position to ask for.
            check_count("continue_offset", offset)?;
        }
        if let Some(seed) = self.continue_seed
            && !(0..=i64::from(u32::MAX)).contains(&seed)
        {
            return Err(Error::invalid(
                "continue_seed",
                format!("must be between 0 and {}, got {seed}", u32::MAX),
            ));
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
        if !self.country.is_empty() {
            q.push("country", self.country.join("|"));
        }
        if self.collections {
            q.push("collections", "true");
        }
        if let Some(name) = &self.featured_collection {
            q.push("featured_collection", name.as_str());
        }
        if self.lead_section {
            q.push("lead_section", "true");
        }
        let numbers = [
            ("min_size", self.min_size),
            ("max_size", self.max_size),
            ("continue_offset", self.continue_offset),
            ("continue_seed", self.continue_seed),
        ];
        for (name, value) in numbers {
            if let Some(value) = value {
                q.push(name, value.to_string());
            }
        }
        q
    }
}

/// What `/translation/page-collection-membership` is asked: Wikidata ids, or titles of one
/// language (the service takes exactly one of the two forms).
#[derive(Debug, Clone, PartialEq)]
pub enum MembershipQuery {
    Qids(Vec<String>),
    Titles {
        language: String,
        titles: Vec<String>,
    },
}

/// Parameters of `/translation/page-collection-membership`.
#[derive(Debug, Clone, PartialEq)]
pub struct MembershipParams {
    pub collection: String,
    pub query: MembershipQuery,
}

impl MembershipParams {
    pub fn qids(collection: &str, qids: &[&str]) -> Self {
        Self {
            collection: collection.to_owned(),
            query: MembershipQuery::Qids(qids.iter().map(|q| (*q).to_owned()).collect()),
        }
    }

    pub fn titles(collection: &str, language: &str, titles: &[&str]) -> Self {
        Self {
            collection: collection.to_owned(),
            query: MembershipQuery::Titles {
                language: language.to_owned(),
                titles: titles.iter().map(|t| (*t).to_owned()).collect(),
            },
        }
    }

    pub fn validate(&self) -> Result<()> {
        if self.collection.trim().is_empty() {
            return Err(Error::invalid("collection", "must not be empty"));
        }
        let (name, values) = match &self.query {
            MembershipQuery::Qids(qids) => {
                for qid in qids {
                    let digits = qid.strip_prefix('Q').unwrap_or_default();
                    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                        return Err(Error::invalid(
                            "qids",
                            format!("{qid:?} is not a Wikidata id (such as \"Q42\")"),
                        ));
                    }
                }
                ("qids", qids)
            }
            MembershipQuery::Titles { language, titles } => {
                check_code("language", language)?;
                ("titles", titles)
            }
        };
        if values.is_empty() {
            return Err(Error::invalid(name, "give at least one"));
        }
        for value in values {
            if value.trim().is_empty() || value.contains('|') {
                return Err(Error::invalid(
                    name,
                    format!("{value:?} is empty or contains '|', which separates entries"),
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn query(&self) -> Query {
        let mut q = Query::new();
        q.push("collection", self.collection.as_str());
        match &self.query {
            MembershipQuery::Qids(qids) => {
                q.push("qids", qids.join("|"));
            }
            MembershipQuery::Titles { language, titles } => {
                q.push("language", language.as_str())
                    .push("titles", titles.join("|"));
            }
        }
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

    /// Each parameter alone, as it travels.
    #[test]
    fn translation_parameter_encoding() {
        let base = TranslationParams::new("en", "fr");
        let defaults = "source=en&target=fr&count=12&include_pageviews=false&search_algorithm=morelike&rank_method=default";
        assert_eq!(base.query().encode(), defaults);
        let cases: Vec<(TranslationParams, &str)> = vec![
            (
                TranslationParams {
                    count: 0,
                    ..base.clone()
                },
                "count=0",
            ),
            (
                TranslationParams {
                    seed: vec!["Ä b".into()],
                    ..base.clone()
                },
                "seed=%C3%84%20b",
            ),
            (
                TranslationParams {
                    topic: vec!["Southern Africa".into(), "Women+Space".into()],
                    ..base.clone()
                },
                "topic=Southern%20Africa%7CWomen%2BSpace",
            ),
            (
                TranslationParams {
                    country: vec!["can+usa".into(), "PRK".into()],
                    ..base.clone()
                },
                "country=can%2Busa%7CPRK",
            ),
            (
                TranslationParams {
                    include_pageviews: true,
                    ..base.clone()
                },
                "include_pageviews=true",
            ),
            (
                TranslationParams {
                    search_algorithm: SearchAlgorithm::MostPopular,
                    ..base.clone()
                },
                "search_algorithm=mostpopular",
            ),
            (
                TranslationParams {
                    rank_method: RankMethod::Sitelinks,
                    ..base.clone()
                },
                "rank_method=sitelinks",
            ),
            (
                TranslationParams {
                    collections: true,
                    ..base.clone()
                },
                "collections=true",
            ),
            (
                TranslationParams {
                    featured_collection: Some("Wiki99/Food & drink".into()),
                    ..base.clone()
                },
                "featured_collection=Wiki99%2FFood%20%26%20drink",
            ),
            (
                TranslationParams {
                    min_size: Some(2500),
                    ..base.clone()
                },
                "min_size=2500",
            ),
            (
                TranslationParams {
                    max_size: Some(0),
                    ..base.clone()
                },
                "max_size=0",
            ),
            (
                TranslationParams {
                    lead_section: true,
                    ..base.clone()
                },
                "lead_section=true",
            ),
            (
                TranslationParams {
                    continue_offset: Some(17),
                    ..base.clone()
                },
                "continue_offset=17",
            ),
            (
                TranslationParams {
                    continue_seed: Some(4_294_967_295),
                    ..base.clone()
                },
                "continue_seed=4294967295",
            ),
        ];
        for (params, expected) in cases {
            params.validate().unwrap();
            let encoded = params.query().encode();
            let pairs: Vec<&str> = encoded.split('&').collect();
            assert!(pairs.contains(&expected), "{expected} not in {encoded}");
            // Only the parameter that was set differs from the defaults.
            let changed: Vec<&&str> = pairs
                .iter()
                .filter(|p| !defaults.split('&').any(|d| d == **p))
                .collect();
            assert_eq!(changed, [&expected], "{encoded}");
        }
        let all = TranslationParams {
            collections: true,
            seed: vec!["Vital articles (en)/Mathematics".into()],
            min_size: Some(1),
            max_size: Some(9),
            lead_section: true,
            continue_offset: Some(3),
            continue_seed: Some(5),
            ..base.clone()
        };
        assert_eq!(
            all.query().encode(),
            "source=en&target=fr&count=12&seed=Vital%20articles%20%28en%29%2FMathematics&include_pageviews=false&search_algorithm=morelike&rank_method=default&collections=true&lead_section=true&min_size=1&max_size=9&continue_offset=3&continue_seed=5"
        );
    }

    #[test]
    fn translation_new_parameters_validation() {
        let ok = TranslationParams::new("en", "fr");
        let cases: Vec<(TranslationParams, &str)> = vec![
            (
                TranslationParams {
                    country: vec!["us".into()],
                    ..ok.clone()
                },
                "country",
            ),
            (
                TranslationParams {
                    country: vec!["can+".into()],
                    ..ok.clone()
                },
                "country",
            ),
            (
                TranslationParams {
                    country: vec!["can|usa".into()],
                    ..ok.clone()
                },
                "country",
            ),
            (
                TranslationParams {
                    collections: true,
                    seed: vec!["A".into(), "B".into()],
                    ..ok.clone()
                },
                "seed",
            ),
            (
                TranslationParams {
                    featured_collection: Some(" ".into()),
                    ..ok.clone()
                },
                "featured_collection",
            ),
            (
                TranslationParams {
                    min_size: Some(-1),
                    ..ok.clone()
                },
                "min_size",
            ),
            (
                TranslationParams {
                    max_size: Some(-5),
                    ..ok.clone()
                },
                "max_size",
            ),
            (
                TranslationParams {
                    min_size: Some(10),
                    max_size: Some(9),
                    ..ok.clone()
                },
                "min_size",
            ),
            (
                TranslationParams {
                    continue_offset: Some(-1),
                    ..ok.clone()
                },
                "continue_offset",
            ),
            (
                TranslationParams {
                    continue_seed: Some(1 << 32),
                    ..ok.clone()
                },
                "continue_seed",
            ),
            (
                TranslationParams {
                    continue_seed: Some(-3),
                    ..ok.clone()
                },
                "continue_seed",
            ),
        ];
        for (params, field) in cases {
            match params.validate() {
                Err(Error::InvalidParameter { name, .. }) => assert_eq!(name, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        TranslationParams {
            min_size: Some(7),
            max_size: Some(7),
            collections: true,
            seed: vec!["One".into()],
            ..ok
        }
        .validate()
        .unwrap();
    }

    #[test]
    fn next_page_follows_the_continuation() {
        use crate::models::TranslationPage;
        let params = TranslationParams {
            collections: true,
            seed: vec!["Set".into()],
            ..TranslationParams::new("en", "fr")
        };
        let page = |offset, seed| TranslationPage {
            items: Vec::new(),
            continue_offset: offset,
            continue_seed: seed,
        };
        let next = params.next_page(&page(Some(7), Some(99))).unwrap();
        assert_eq!(
            (next.continue_offset, next.continue_seed),
            (Some(7), Some(99))
        );
        assert_eq!(next.seed, params.seed);
        assert!(params.next_page(&page(Some(-1), Some(99))).is_none());
        assert!(params.next_page(&page(None, None)).is_none());
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
    fn membership_encoding_and_validation() {
        let qids = MembershipParams::qids("Wiki99/Food", &["Q1", "Q42"]);
        qids.validate().unwrap();
        assert_eq!(
            qids.query().encode(),
            "collection=Wiki99%2FFood&qids=Q1%7CQ42"
        );
        let titles = MembershipParams::titles("Pets", "fr", &["Chat noir", "Chien"]);
        titles.validate().unwrap();
        assert_eq!(
            titles.query().encode(),
            "collection=Pets&language=fr&titles=Chat%20noir%7CChien"
        );
        let cases = [
            (MembershipParams::qids(" ", &["Q1"]), "collection"),
            (MembershipParams::qids("Pets", &[]), "qids"),
            (MembershipParams::qids("Pets", &["42"]), "qids"),
            (MembershipParams::qids("Pets", &["Q4x"]), "qids"),
            (MembershipParams::titles("Pets", "", &["Cat"]), "language"),
            (MembershipParams::titles("Pets", "en", &["A|B"]), "titles"),
            (MembershipParams::titles("Pets", "en", &[]), "titles"),
        ];
        for (params, field) in cases {
            match params.validate() {
                Err(Error::InvalidParameter { name, .. }) => assert_eq!(name, field),
                other => panic!("{field}: {other:?}"),
            }
        }
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
