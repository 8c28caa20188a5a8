//! CirrusSearch's `morelike` without the search cluster: a per-wiki full-text index of the
//! articles' text built with tantivy, and Lucene's MoreLikeThis, as Elasticsearch runs it for
//! CirrusSearch, written on tantivy's term statistics, boolean queries and BM25.
//!
//! * [`build_index`] / [`IndexBuilder`] write an index folder from [`Document`]s (page id,
//!   title, text, redirects, disambiguation flag), memory-bounded and resumable.
//! * [`SearchIndex::similar`] answers `morelike:A|B` with `(title, score)` hits, best first;
//!   [`SearchIndex::more_like`] also reports the seeds as resolved and the terms chosen.
//! * [`analysis`] holds the per-language analyzers, [`morelike`] the term selection and its
//!   parameters (CirrusSearch's defaults, overridable per wiki and per call).

pub mod analysis;
mod build;
mod collect;
mod error;
mod index;
pub mod morelike;
mod read_only;
mod schema;
mod title;

pub use build::{
    BuildOptions, BuildSummary, Document, DocumentRef, IndexBuilder, SharedIndexBuilder,
    build_index,
};
pub use error::{Result, SearchError};
pub use index::{Hit, MAX_LIMIT, MoreLike, SearchIndex, Seed};
pub use morelike::{MoreLikeOverrides, MoreLikeParams, QueryTerm};
pub use schema::{SETTINGS_FILE, TEXT_ANALYZER};
pub use title::title_key;
