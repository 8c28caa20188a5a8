//! Operation 3 answered from the catalogs: the parsed query handed to the translation engine
//! (`wikisuggest-translation`, which computes production's modes, filters and rankings), its
//! page given the shape the server is configured for.

use serde_json::{Value, json};
use wikisuggest_translation::engine::Query;

use super::catalogs::TranslationCatalogs;
use super::params::TranslationQuery;

/// The answer before it is given a shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub items: Vec<Value>,
    pub continue_offset: Option<i64>,
    pub continue_seed: Option<i64>,
}

impl Outcome {
    fn empty() -> Self {
        Self {
            items: Vec::new(),
            continue_offset: None,
            continue_seed: None,
        }
    }

    /// The November 2025 envelope.
    pub fn envelope(&self) -> Value {
        json!({
            "recommendations": self.items,
            "continue_offset": self.continue_offset,
            "continue_seed": self.continue_seed,
        })
    }

    /// The contract's bare array of the five fields it lists.
    pub fn array(&self) -> Value {
        const CONTRACT: [&str; 5] = [
            "title",
            "pageviews",
            "wikidata_id",
            "rank",
            "langlinks_count",
        ];
        Value::Array(
            self.items
                .iter()
                .map(|item| {
                    let fields = CONTRACT
                        .iter()
                        .map(|&k| (k.to_owned(), item.get(k).cloned().unwrap_or(Value::Null)));
                    Value::Object(fields.collect())
                })
                .collect(),
        )
    }
}

/// The engine's query for a parsed request; `random_seed` drives every random draw.
pub fn engine_query(query: &TranslationQuery, random_seed: u64) -> Query {
    Query {
        random_seed: Some(random_seed),
        ..query.query.clone()
    }
}

/// The answer for `query`. A source language without a catalog, or a mode its catalog was
/// built without, answers an empty list, as production answers when its upstream call fails.
pub fn recommend(
    catalogs: &TranslationCatalogs,
    query: &TranslationQuery,
    random_seed: u64,
) -> Outcome {
    // Page collections answer for any source language (their articles carry titles in
    // every language): a catalog with them serves a source the server has no catalog of.
    let engine = catalogs.engines.get(&query.query.source).or_else(|| {
        query
            .query
            .collections
            .then(|| {
                catalogs
                    .engines
                    .values()
                    .find(|e| e.collections().is_some())
            })
            .flatten()
    });
    let Some(engine) = engine else {
        return Outcome::empty();
    };
    match engine.answer(&engine_query(query, random_seed)) {
        Ok(page) => Outcome {
            items: page
                .items
                .iter()
                .map(|item| serde_json::to_value(item).unwrap_or(Value::Null))
                .collect(),
            continue_offset: page.continue_offset,
            continue_seed: page.continue_seed,
        },
        Err(error) => {
            log::warn!(target: "wikisuggest.server", "translation {}→{}: {error}", query.query.source, query.query.target);
            Outcome::empty()
        }
    }
}
