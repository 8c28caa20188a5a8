//! The query parameters of `/translation` and `/translation/sections`, parsed and checked as
//! the service's request model does (research-recommendation-api's request model): each field first
//! (one 422 entry per bad field, in the model's field order), then the languages.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::catalogs::TranslationCatalogs;
use crate::link::params::py_int;

pub use wikisuggest_translation::wiki::{DOMAIN_MAPPING, link_code};

use wikisuggest_records::params::TranslationParams;
/// The translation parameters' values and defaults are the client's (one definition).
pub use wikisuggest_records::params::{RankMethod, SearchAlgorithm as Algorithm};
use wikisuggest_translation::engine::Query;

/// A `/translation` request as the service's request model reads it: the translation
/// engine's one [`Query`] (its `random_seed` is set per request), and the search algorithm.
#[derive(Debug, Clone, PartialEq)]
pub struct TranslationQuery {
    pub query: Query,
    /// Validated, then unused: the mode follows from the other fields, as in production.
    pub search_algorithm: Algorithm,
}

pub(crate) fn missing(name: &str) -> Value {
    json!({"type": "missing", "loc": ["query", name], "msg": "Field required", "input": null})
}

fn enum_error(name: &str, input: &str, expected: &str) -> Value {
    json!({"type": "enum", "loc": ["query", name], "msg": format!("Input should be {expected}"),
           "input": input, "ctx": {"expected": expected}})
}

/// A model-level check that failed (pydantic's `value_error` with the whole model as input).
pub(crate) fn value_error(message: &str, input: Value) -> Value {
    json!({
        "type": "value_error",
        "loc": [],
        "msg": format!("Value error, {message}"),
        "input": input,
        "ctx": {"error": {}},
        "url": "https://errors.pydantic.dev/2.10/v/value_error",
    })
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" | "t" | "y" => Some(true),
        "false" | "0" | "no" | "off" | "f" | "n" => Some(false),
        _ => None,
    }
}

/// The raw parameters; a repeated key keeps its last value (as FastAPI does for scalars).
pub(crate) struct RawParams(HashMap<String, String>);

impl RawParams {
    pub(crate) fn new(raw: &str) -> Self {
        Self(
            form_urlencoded::parse(raw.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// A string field; empty strings count as absent where the service tests truthiness.
    fn text(&self, name: &str) -> Option<String> {
        self.get(name).filter(|v| !v.is_empty()).map(str::to_owned)
    }

    fn int(&self, name: &str, errors: &mut Vec<Value>) -> Option<i64> {
        let value = self.get(name)?;
        let parsed = py_int(value);
        if parsed.is_none() {
            errors.push(json!({"type": "int_parsing", "loc": ["query", name],
                "msg": "Input should be a valid integer, unable to parse string as an integer",
                "input": value}));
        }
        parsed
    }

    fn flag(&self, name: &str, errors: &mut Vec<Value>) -> bool {
        let Some(value) = self.get(name) else {
            return false;
        };
        parse_bool(value).unwrap_or_else(|| {
            errors.push(json!({"type": "bool_parsing", "loc": ["query", name],
                "msg": "Input should be a valid boolean, unable to interpret input",
                "input": value}));
            false
        })
    }
}

/// Whether `code` names a wiki the server knows (or any code when it knows none, as upstream
/// before its language list is loaded).
pub(crate) fn known_language(data: &TranslationCatalogs, code: &str) -> bool {
    data.languages.is_empty()
        || data.languages.contains(code)
        || DOMAIN_MAPPING.iter().any(|(a, b)| *a == code || *b == code)
}

impl TranslationQuery {
    /// Parses the raw query string; `Err` holds the `detail` entries of a 422.
    pub fn parse(raw: &str, data: &TranslationCatalogs) -> Result<Self, Vec<Value>> {
        let params = RawParams::new(raw);
        let mut errors = Vec::new();
        let source = params.get("source").map(str::to_owned);
        let target = params.get("target").map(str::to_owned);
        if source.is_none() {
            errors.push(missing("source"));
        }
        if target.is_none() {
            errors.push(missing("target"));
        }
        // Field order of the service's request model.
        let count = params
            .int("count", &mut errors)
            .unwrap_or(TranslationParams::DEFAULT_COUNT);
        let collections = params.flag("collections", &mut errors);
        let lead_section = params.flag("lead_section", &mut errors);
        let include_pageviews = params.flag("include_pageviews", &mut errors);
        let search_algorithm = match params.get("search_algorithm") {
            None => Algorithm::default(),
            Some(v) => Algorithm::parse(v).unwrap_or_else(|_| {
                errors.push(enum_error(
                    "search_algorithm",
                    v,
                    "'morelike' or 'mostpopular'",
                ));
                Algorithm::default()
            }),
        };
        let rank_method = match params.get("rank_method") {
            None => RankMethod::default(),
            Some(v) => RankMethod::parse(v).unwrap_or_else(|_| {
                errors.push(enum_error("rank_method", v, "'default' or 'sitelinks'"));
                RankMethod::default()
            }),
        };
        let min_size = params.int("min_size", &mut errors);
        let max_size = params.int("max_size", &mut errors);
        let continue_offset = params.int("continue_offset", &mut errors);
        let continue_seed = params.int("continue_seed", &mut errors);
        let (Some(source), Some(target)) = (source, target) else {
            return Err(errors);
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        let query = Self {
            query: Query {
                source,
                target,
                count,
                seed: params.text("seed"),
                topic: params.text("topic"),
                country: params.text("country"),
                featured_collection: params.text("featured_collection"),
                collections,
                lead_section,
                include_pageviews,
                rank_method,
                min_size,
                max_size,
                continue_offset,
                continue_seed,
                random_seed: None,
                follow_redirects: false,
            },
            search_algorithm,
        };
        query.check_languages(data).map(|()| query)
    }

    fn check_languages(&self, data: &TranslationCatalogs) -> Result<(), Vec<Value>> {
        let q = &self.query;
        let message = if !known_language(data, &q.source) {
            "Invalid source language code"
        } else if !known_language(data, &q.target) {
            "Invalid target language code"
        } else if q.source == q.target {
            "Source and target languages must be different"
        } else {
            return Ok(());
        };
        Err(vec![value_error(message, self.echo())])
    }

    /// Every request field with its parsed value (the `input` of a model-level 422).
    fn echo(&self) -> Value {
        let q = &self.query;
        json!({
            "source": q.source, "target": q.target, "count": q.count,
            "seed": q.seed, "topic": q.topic, "country": q.country,
            "featured_collection": q.featured_collection, "collections": q.collections,
            "lead_section": q.lead_section, "include_pageviews": q.include_pageviews,
            "search_algorithm": self.search_algorithm.as_str(),
            "rank_method": q.rank_method.as_str(),
            "min_size": q.min_size, "max_size": q.max_size,
            "continue_offset": q.continue_offset, "continue_seed": q.continue_seed,
        })
    }
}
