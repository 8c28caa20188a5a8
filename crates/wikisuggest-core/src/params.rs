//! Operation parameters, validated before anything is sent, and how each travels.
//!
//! The parameters the client shares with the local engine and the reference server (the link
//! options, the translation parameters) are defined once, with their defaults and checks, in
//! `wikisuggest_records::params`; they are re-exported here. This module adds what only the
//! client has: the link request's path (project, domain, title), the POST body, the
//! page-collection-membership query, and the query strings all of them become.

use serde::Serialize;

use crate::encode::Query;
use crate::error::{Error, Result};
pub use wikisuggest_records::params::{
    InvalidParameter, LinkOptions, RankMethod, SearchAlgorithm, TranslationParams, check_count,
};
use wikisuggest_records::wiki::check_code;
use wikisuggest_text::title::normalise_and_check_title;

/// Parameters shared by both link-recommendation operations: the page, and the options every
/// link recommendation takes.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkParams {
    pub project: String,
    pub domain: String,
    pub page_title: String,
    pub options: LinkOptions,
}

impl LinkParams {
    /// The page `page_title` of `project`/`domain`, with the default options.
    pub fn new(project: &str, domain: &str, page_title: &str) -> Self {
        Self {
            project: project.to_owned(),
            domain: domain.to_owned(),
            page_title: page_title.to_owned(),
            options: LinkOptions::default(),
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
        // The title is sent as given; the service checks the title its normalisation makes.
        normalise_and_check_title(&self.page_title)
            .map_err(|e| Error::invalid("page_title", e.to_string()))?;
        Ok(self.options.validate()?)
    }

    /// The query parameters common to GET and POST.
    pub(crate) fn query(&self, include_sections: bool) -> Query {
        let options = &self.options;
        let mut q = Query::new();
        if let Some(code) = &options.language_code {
            q.push("language_code", code.as_str());
        }
        q.push("threshold", format_float(options.threshold));
        q.push(
            "max_recommendations",
            options.max_recommendations.to_string(),
        );
        if include_sections {
            for section in &options.sections_to_exclude {
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

/// The query string of a translation request.
pub(crate) fn translation_query(params: &TranslationParams) -> Query {
    let mut q = Query::new();
    q.push("source", params.source.as_str())
        .push("target", params.target.as_str())
        .push("count", params.count.to_string());
    if !params.seed.is_empty() {
        q.push("seed", params.seed.join("|"));
    }
    if !params.topic.is_empty() {
        q.push("topic", params.topic.join("|"));
    }
    q.push(
        "include_pageviews",
        if params.include_pageviews {
            "true"
        } else {
            "false"
        },
    )
    .push("search_algorithm", params.search_algorithm.as_str())
    .push("rank_method", params.rank_method.as_str());
    if !params.country.is_empty() {
        q.push("country", params.country.join("|"));
    }
    if params.collections {
        q.push("collections", "true");
    }
    if let Some(name) = &params.featured_collection {
        q.push("featured_collection", name.as_str());
    }
    if params.lead_section {
        q.push("lead_section", "true");
    }
    let numbers = [
        ("min_size", params.min_size),
        ("max_size", params.max_size),
        ("continue_offset", params.continue_offset),
        ("continue_seed", params.continue_seed),
    ];
    for (name, value) in numbers {
        if let Some(value) = value {
            q.push(name, value.to_string());
        }
    }
    q
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

    fn with(params: &LinkParams, change: impl FnOnce(&mut LinkOptions)) -> LinkParams {
        let mut changed = params.clone();
        change(&mut changed.options);
        changed
    }

    #[test]
    fn link_params_validation() {
        let ok = LinkParams::new("wikipedia", "en", "Cat");
        ok.validate().unwrap();
        let cases: Vec<(LinkParams, &str)> = vec![
            (LinkParams::new("wiktionary", "en", "Cat"), "project"),
            (LinkParams::new("wikipedia", "", "Cat"), "domain"),
            (LinkParams::new("wikipedia", "en/x", "Cat"), "domain"),
            (LinkParams::new("wikipedia", "en", "  "), "page_title"),
            (LinkParams::new("wikipedia", "en", "A|B"), "page_title"),
            (
                LinkParams::new("wikipedia", "en", "#Fragment"),
                "page_title",
            ),
            (with(&ok, |o| o.threshold = 1.5), "threshold"),
            (with(&ok, |o| o.threshold = f64::NAN), "threshold"),
            (
                with(&ok, |o| o.max_recommendations = -1),
                "max_recommendations",
            ),
            (
                with(&ok, |o| o.language_code = Some(String::new())),
                "language_code",
            ),
            (
                with(&ok, |o| o.sections_to_exclude = vec![String::new()]),
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
    fn link_query_encoding() {
        let p = LinkParams {
            options: LinkOptions {
                language_code: Some("en".into()),
                threshold: 0.25,
                sections_to_exclude: vec!["%LEAD%".into(), "See also".into()],
                max_recommendations: 0,
            },
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
        let whole = with(&LinkParams::new("wikipedia", "en", "Cat"), |o| {
            o.threshold = 1.0;
        });
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
            translation_query(&p).encode(),
            "source=en&target=fr&count=12&seed=Apple%7CBanana%20split&topic=Women%2BSpace&include_pageviews=true&search_algorithm=morelike&rank_method=sitelinks"
        );
    }

    /// Each parameter alone, as it travels.
    #[test]
    fn translation_parameter_encoding() {
        let base = TranslationParams::new("en", "fr");
        let defaults = "source=en&target=fr&count=12&include_pageviews=false&search_algorithm=morelike&rank_method=default";
        assert_eq!(translation_query(&base).encode(), defaults);
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
            let encoded = translation_query(&params).encode();
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
            translation_query(&all).encode(),
            "source=en&target=fr&count=12&seed=Vital%20articles%20%28en%29%2FMathematics&include_pageviews=false&search_algorithm=morelike&rank_method=default&collections=true&lead_section=true&min_size=1&max_size=9&continue_offset=3&continue_seed=5"
        );
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
