//! Translation recommendations from Wikimedia's public dumps.
//!
//! A *catalog* is one folder per source wiki ([`schema`] lists its files): one row per
//! article with what production's translation service reads from the live wiki (interlanguage
//! links, Wikidata item, disambiguation, sizes, topic and country predictions, the day's
//! views), built from the dumps in bounded memory ([`build`]). The [`engine`] answers from it
//! as the service answers — its modes, filters and rankings — and [`gaps`] lists every
//! article a target wiki lacks. Seed mode asks a search index through the [`similar`] seam, which [`seed`] implements
//! with `wikisuggest-search` (the index built into the catalog's folder).

pub mod build;
pub mod catalog;
pub mod collections;
pub mod engine;
pub mod error;
pub mod gaps;
pub mod pq;
mod pyrandom;
mod query;
pub mod schema;
pub mod seed;
pub mod similar;
pub mod sources;
pub mod topics;
pub mod wiki;

pub use build::{BuildOptions, Manifest, Sources, SqlSources, build};
pub use catalog::Catalog;
pub use engine::{Engine, Request};
pub use error::{Error, Result};
