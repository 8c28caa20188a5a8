//! Seed mode on `wikisuggest-search`: the index a catalog build writes into the catalog's
//! `search/` folder from the `cirrus` part, and the morelike queries the engine asks it.

use std::path::Path;
use std::sync::Arc;

use wikisuggest_search::{
    BuildOptions as IndexOptions, DocumentRef, MoreLikeOverrides, SearchError, SearchIndex,
    SharedIndexBuilder,
};

/// CirrusSearch's morelike parameters, the defaults of [`SimilarOptions`].
pub use wikisuggest_search::MoreLikeParams;

use crate::build::{IndexFactory, IndexStart};
use crate::error::{Error, Result};
use crate::similar::{IndexSink, SimilarPages, SimilarQuery};

/// The least indexing memory per indexing thread (tantivy refuses less).
const MEMORY_PER_THREAD: usize = 15 << 20;

/// What a seed search without an index says: which part to fetch.
pub(crate) fn no_index() -> Error {
    Error::MissingPart(
        "seed search needs the search index built with the catalog's `cirrus` part: fetch the \
         catalog with parts=(\"sql\", \"cirrus\")"
            .to_owned(),
    )
}

/// A search error as the crate reports it: a bad parameter stays one.
fn search_error(error: SearchError) -> Error {
    match error {
        SearchError::InvalidParameter { name, reason } => Error::InvalidParameter {
            parameter: name.to_owned(),
            message: reason,
        },
        other => Error::Search(other.to_string()),
    }
}

struct CatalogIndex(SharedIndexBuilder);

impl IndexSink for CatalogIndex {
    fn add(&self, document: &DocumentRef<'_>) -> std::result::Result<(), String> {
        self.0.add(document).map_err(|e| e.to_string())
    }

    fn finish(&self) -> std::result::Result<(), String> {
        self.0.finish().map(|_| ()).map_err(|e| e.to_string())
    }
}

/// Starts the wiki's search index in the folder a catalog build gives, with the memory and
/// threads it grants (at least one thread's minimum).
pub fn index_factory() -> IndexFactory {
    Arc::new(|dir: &Path, start: &IndexStart| {
        let mut options = IndexOptions::new(&start.language);
        options.memory_budget = start.memory.max(MEMORY_PER_THREAD);
        options.threads = start
            .threads
            .clamp(1, (options.memory_budget / MEMORY_PER_THREAD).max(1));
        let builder = SharedIndexBuilder::create(dir, &options).map_err(|e| e.to_string())?;
        Ok(Arc::new(CatalogIndex(builder)) as Arc<dyn IndexSink>)
    })
}

/// Opens the index of the catalog in `dir`.
pub(crate) fn open_index(dir: &Path) -> Result<SearchIndex> {
    let path = dir.join(crate::schema::SEARCH_INDEX);
    SearchIndex::open(&path).map_err(|e| Error::catalog(&path, e))
}

impl SimilarPages for SearchIndex {
    fn similar(&self, query: &SimilarQuery<'_>) -> std::result::Result<Vec<u64>, String> {
        self.similar_ids(query.seeds, query.limit, query.within)
            .map_err(|e| e.to_string())
    }
}

/// Per-call overrides of the wiki's morelike parameters (`None` keeps the wiki's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimilarOptions {
    pub min_term_freq: Option<u32>,
    pub min_doc_freq: Option<u32>,
    /// Capped at 100, as CirrusSearch caps it.
    pub max_query_terms: Option<u32>,
    pub minimum_should_match: Option<String>,
}

/// How many pages `similar` returns unless told: production's 500 candidates.
pub const SIMILAR_LIMIT: usize = crate::query::MAX_CANDIDATES;

/// `morelike:<seeds>` on `index`: `(title, score)` pairs, best first (BM25 as the search
/// cluster reports it); disambiguation pages included, seeds never; empty when no seed names
/// a page. Each seed may hold several titles separated by `|`.
pub(crate) fn similar(
    index: &SearchIndex,
    seeds: &[String],
    options: &SimilarOptions,
    limit: usize,
) -> Result<Vec<(String, f32)>> {
    let overrides = MoreLikeOverrides {
        min_term_freq: options.min_term_freq,
        min_doc_freq: options.min_doc_freq,
        max_query_terms: options.max_query_terms,
        minimum_should_match: options.minimum_should_match.clone(),
        ..MoreLikeOverrides::default()
    };
    let found = index
        .more_like(seeds, &overrides, limit)
        .map_err(search_error)?;
    Ok(found.hits.into_iter().map(|h| (h.title, h.score)).collect())
}
