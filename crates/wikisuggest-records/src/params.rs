//! The parameters of the services' operations, each with its default and its checks written
//! once: the HTTP client sends them, the local link engine embeds them in its own options, the
//! reference server parses its query strings into them, and the extension module exports the
//! defaults to Python, whose signatures, docs and command line read them from there.
//!
//! The services accept almost anything (the link service does not range-check `threshold`,
//! the translation service applies a negative `count` as a slice), so these checks are where a
//! caller learns that a value makes no sense.

use std::time::Duration;

use crate::TranslationPage;
pub use crate::invalid::{Checked, InvalidParameter};
use crate::wiki::check_code;

/// A number of seconds as a [`Duration`]: finite and not negative. The one conversion of every
/// timeout, budget and leeway a caller gives in seconds.
pub fn seconds(name: &str, value: f64) -> Checked<Duration> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        InvalidParameter::new(
            name,
            format!("must be a non-negative number of seconds, got {value}"),
        )
    })
}

/// [`seconds`] that must also be more than zero (a timeout of nothing would fail every call).
pub fn positive_seconds(name: &str, value: f64) -> Checked<Duration> {
    match seconds(name, value) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(InvalidParameter::new(
            name,
            format!("must be a positive number of seconds, got {value}"),
        )),
    }
}

/// A count that cannot be negative.
pub fn check_count(name: &str, value: i64) -> Checked {
    if value < 0 {
        return Err(InvalidParameter::new(
            name,
            format!("must be a non-negative integer, got {value}"),
        ));
    }
    Ok(())
}

/// The options every link recommendation takes, wherever it is computed: sent by the client,
/// embedded in the local engine's options, parsed from the reference server's query string.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkOptions {
    /// Language code for tokenization; `None`: the wiki's (see [`crate::wiki::language_code`]).
    pub language_code: Option<String>,
    /// Minimum probability; a score equal to it is accepted.
    pub threshold: f64,
    /// Stop after this many links; `0` (and, for the services, a negative value) means no limit.
    pub max_recommendations: i64,
    /// Section titles to skip (case-folded exact match; `%LEAD%` is the lead).
    pub sections_to_exclude: Vec<String>,
}

impl LinkOptions {
    /// Production's default threshold.
    pub const DEFAULT_THRESHOLD: f64 = 0.5;
    /// Production's default number of links.
    pub const DEFAULT_MAX_RECOMMENDATIONS: i64 = 15;

    /// The ranges, checked the same way wherever a recommendation runs: by the client before
    /// it sends, by the local engine before it computes. NaN fails the range check (it would
    /// otherwise compare as "keep every link").
    pub fn validate(&self) -> Checked {
        if let Some(code) = &self.language_code {
            check_code("language_code", code)?;
        }
        if !(0.0..=1.0).contains(&self.threshold) {
            return Err(InvalidParameter::new(
                "threshold",
                format!("must be between 0 and 1, got {}", self.threshold),
            ));
        }
        check_count("max_recommendations", self.max_recommendations)?;
        if self.sections_to_exclude.iter().any(String::is_empty) {
            return Err(InvalidParameter::new(
                "sections_to_exclude",
                "section names must not be empty",
            ));
        }
        Ok(())
    }

    /// What a service that, like the upstream one, compares scores against any `threshold`,
    /// reads a negative maximum as "no limit" and matches section names as given still
    /// refuses: a threshold that is not a number at all. The reference server checks this, so
    /// an out-of-range threshold keeps upstream's answer (no links) while NaN is a 400.
    pub fn validate_as_service(&self) -> Checked {
        if self.threshold.is_nan() {
            return Err(InvalidParameter::new(
                "threshold",
                "must be a number, got NaN",
            ));
        }
        Ok(())
    }
}

impl Default for LinkOptions {
    fn default() -> Self {
        Self {
            language_code: None,
            threshold: Self::DEFAULT_THRESHOLD,
            max_recommendations: Self::DEFAULT_MAX_RECOMMENDATIONS,
            sections_to_exclude: Vec::new(),
        }
    }
}

/// How the translation service finds candidates from seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchAlgorithm {
    #[default]
    MoreLike,
    MostPopular,
}

impl SearchAlgorithm {
    pub fn parse(value: &str) -> Checked<Self> {
        match value {
            "morelike" => Ok(Self::MoreLike),
            "mostpopular" => Ok(Self::MostPopular),
            other => Err(InvalidParameter::new(
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

/// How the translation service orders its candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RankMethod {
    #[default]
    Default,
    Sitelinks,
}

impl RankMethod {
    pub fn parse(value: &str) -> Checked<Self> {
        match value {
            "default" => Ok(Self::Default),
            "sitelinks" => Ok(Self::Sitelinks),
            other => Err(InvalidParameter::new(
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

/// The parameters of a translation recommendation, as the service reads them today
/// (`/translation/recommend`). Optional ones are sent only when set, so a request with the
/// defaults is the contract's.
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
    /// The service's default number of recommendations.
    pub const DEFAULT_COUNT: i64 = 12;

    /// The parameters from `source` to `target`, every other one at its default.
    pub fn new(source: &str, target: &str) -> Self {
        Self {
            source: source.to_owned(),
            target: target.to_owned(),
            count: Self::DEFAULT_COUNT,
            seed: Vec::new(),
            topic: Vec::new(),
            country: Vec::new(),
            include_pageviews: false,
            search_algorithm: SearchAlgorithm::default(),
            rank_method: RankMethod::default(),
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
    pub fn next_page(&self, page: &TranslationPage) -> Option<Self> {
        let offset = page.continue_offset.filter(|&o| o >= 0)?;
        Some(Self {
            continue_offset: Some(offset),
            continue_seed: page.continue_seed.or(self.continue_seed),
            ..self.clone()
        })
    }

    pub fn validate(&self) -> Checked {
        check_code("source", &self.source)?;
        check_code("target", &self.target)?;
        if self.source == self.target {
            return Err(InvalidParameter::new(
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
                    return Err(InvalidParameter::new(name, "entries must not be empty"));
                }
                if value.contains('|') {
                    return Err(InvalidParameter::new(
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
                return Err(InvalidParameter::new(
                    "country",
                    format!("{code:?} is not an ISO 3166 alpha-3 code (such as \"can\")"),
                ));
            }
        }
        if self.collections && self.seed.len() > 1 {
            return Err(InvalidParameter::new(
                "seed",
                "with collections, seed is one collection name",
            ));
        }
        if let Some(name) = &self.featured_collection
            && name.trim().is_empty()
        {
            return Err(InvalidParameter::new(
                "featured_collection",
                "must not be empty",
            ));
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
            return Err(InvalidParameter::new(
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
            return Err(InvalidParameter::new(
                "continue_seed",
                format!("must be between 0 and {}, got {seed}", u32::MAX),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    fn refused(result: Checked) -> String {
        match result {
            Err(InvalidParameter { name, .. }) => name,
            Ok(()) => panic!("accepted"),
        }
    }

    #[test]
    fn link_option_ranges() {
        let ok = LinkOptions::default();
        ok.validate().unwrap();
        LinkOptions {
            threshold: 1.0,
            max_recommendations: 0,
            sections_to_exclude: vec!["See also".into()],
            ..ok.clone()
        }
        .validate()
        .unwrap();
        for (options, name) in [
            (
                LinkOptions {
                    threshold: f64::NAN,
                    ..ok.clone()
                },
                "threshold",
            ),
            (
                LinkOptions {
                    threshold: f64::INFINITY,
                    ..ok.clone()
                },
                "threshold",
            ),
            (
                LinkOptions {
                    threshold: -0.1,
                    ..ok.clone()
                },
                "threshold",
            ),
            (
                LinkOptions {
                    max_recommendations: -1,
                    ..ok.clone()
                },
                "max_recommendations",
            ),
            (
                LinkOptions {
                    sections_to_exclude: vec![String::new()],
                    ..ok.clone()
                },
                "sections_to_exclude",
            ),
            (
                LinkOptions {
                    language_code: Some("en/x".into()),
                    ..ok.clone()
                },
                "language_code",
            ),
        ] {
            assert_eq!(refused(options.validate()), name);
        }
    }

    /// The service keeps upstream's answers for what upstream accepts, but not NaN.
    #[test]
    fn service_checks_are_upstreams() {
        let lenient = LinkOptions {
            threshold: 1.5,
            max_recommendations: -3,
            ..LinkOptions::default()
        };
        lenient.validate_as_service().unwrap();
        assert_eq!(refused(lenient.validate()), "threshold");
        let nan = LinkOptions {
            threshold: f64::NAN,
            ..LinkOptions::default()
        };
        assert_eq!(refused(nan.validate_as_service()), "threshold");
    }

    #[test]
    fn seconds_become_durations_once() {
        assert_eq!(seconds("t", 1.5), Ok(Duration::from_millis(1500)));
        assert_eq!(seconds("t", 0.0), Ok(Duration::ZERO));
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(seconds("t", bad).unwrap_err().name, "t");
        }
        assert!(positive_seconds("t", 0.0).is_err());
        assert_eq!(positive_seconds("t", 2.0), Ok(Duration::from_secs(2)));
    }

    #[test]
    fn translation_validation() {
        let ok = TranslationParams::new("en", "fr");
        ok.validate().unwrap();
        assert_eq!(ok.count, TranslationParams::DEFAULT_COUNT);
        let cases: Vec<(TranslationParams, &str)> = vec![
            (TranslationParams::new("en", "en"), "target"),
            (TranslationParams::new("", "fr"), "source"),
            (
                TranslationParams {
                    count: -2,
                    ..ok.clone()
                },
                "count",
            ),
            (
                TranslationParams {
                    seed: vec!["A|B".into()],
                    ..ok.clone()
                },
                "seed",
            ),
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
            assert_eq!(refused(params.validate()), field);
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
        assert!(SearchAlgorithm::parse("fulltext").is_err());
        assert!(RankMethod::parse("pageviews").is_err());
        assert_eq!(SearchAlgorithm::default().as_str(), "morelike");
        assert_eq!(RankMethod::default().as_str(), "default");
    }

    #[test]
    fn next_page_follows_the_continuation() {
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
}
