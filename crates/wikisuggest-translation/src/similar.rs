//! The seam to the search index of seed mode (CirrusSearch's `morelike`): the catalog build
//! hands it every document of the `cirrus` part, and the engine asks it for pages like the
//! seeds, then runs production's post-processing on the hits. [`crate::seed`] implements it
//! with `wikisuggest-search`; a build or an engine may be given another.

pub use wikisuggest_search::DocumentRef;

/// Where the catalog build hands each search document, from several threads at once.
pub trait IndexSink: Send + Sync {
    /// One namespace-0 document of the index dump.
    fn add(&self, document: &DocumentRef<'_>) -> Result<(), String>;
    /// Every document was added: make the index whole (commit it).
    fn finish(&self) -> Result<(), String>;
}

/// A seed query, as production sends it to the search cluster.
#[derive(Clone, Copy)]
pub struct SimilarQuery<'a> {
    /// The seed titles (the request's `seed` split on `|`); redirects are followed and titles
    /// that name no page dropped by the index, as CirrusSearch does.
    pub seeds: &'a [String],
    /// How many hits at most: 500 for `morelike` (relevance order), or every match for
    /// `morelikethis` beside a topic or country (the service then asks a random order).
    pub limit: usize,
    /// When given, only pages for which it answers `true` may be hits (the topic or country
    /// filter of `morelikethis`), by page id.
    pub within: Option<&'a (dyn Fn(u64) -> bool + Sync)>,
}

/// Pages like the seeds, from the index built with the catalog.
pub trait SimilarPages: Send + Sync {
    /// Page ids of the hits, best first; empty when no seed names a page.
    fn similar(&self, query: &SimilarQuery<'_>) -> Result<Vec<u64>, String>;
}
