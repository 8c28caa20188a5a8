//! A catalog built from a wiki's dumps in bounded memory.
//!
//! The steps, each a stream:
//!
//! 1. **Views** (`pageviews` part): the day's lines of the wiki are sorted by title and
//!    summed per title; the sums go to a work file in title order, and the 1000 largest make
//!    the day's top list (as the Pageview API's `top` endpoint ranks it).
//! 2. **Search documents** (`cirrus` part): the shards are read on several threads; each
//!    document's sizes and predictions are sorted by page id, and the document is handed to
//!    the search index builder, if any.
//! 3. **Tables** (`sql` part): `page`, `page_props`, `langlinks` and `redirect` are merged on
//!    the page id (each is dumped in that order). Articles go to a work file in page-id order;
//!    redirects between articles to `redirects.parquet`; the top list's titles are resolved
//!    as MediaWiki resolves them and written to `popular.parquet`.
//! 4. **Title joins**: the articles' titles (sorted), the redirects' targets (sorted) and the
//!    views (in title order) are merged, giving each article its redirects and views, sorted
//!    back by page id.
//! 5. **Assembly**: the articles, their search summaries and their title-joined extras are
//!    merged on the page id into `articles.parquet`.
//!
//! Sorting spills to work files beyond the memory budget, so the peak memory does not grow
//! with the wiki. Everything is written to a fresh folder that replaces the catalog only
//! once whole.

mod assemble;
mod codec;
mod joins;
mod popular;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::schema;
use crate::similar::IndexSink;

/// Starts a search index in the folder given (inside the catalog being built).
pub type IndexFactory = Arc<
    dyn Fn(&Path, &IndexStart) -> std::result::Result<Arc<dyn IndexSink>, String> + Send + Sync,
>;

/// What a search index is started with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexStart {
    /// The wiki's language code (it chooses the analyzer).
    pub language: String,
    /// Bytes the indexer may hold (a share of the build's memory).
    pub memory: usize,
    /// Indexing threads.
    pub threads: usize,
}
use crate::sources::site::Site;
use crate::wiki;

pub use popular::TOP_LIST_LENGTH;

/// The SQL table dumps of one run.
#[derive(Debug, Clone)]
pub struct SqlSources {
    pub page: PathBuf,
    pub page_props: PathBuf,
    pub langlinks: PathBuf,
    pub redirect: PathBuf,
    /// `siteinfo-namespaces.json.gz` (to place the top list's titles); English Wikipedia's
    /// namespaces without it.
    pub namespaces: Option<PathBuf>,
}

/// Everything a catalog is built from.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The wiki's database name (`enwiki`).
    pub wiki: String,
    pub sql: SqlSources,
    /// The shards of the search index dump (`cirrus` part).
    pub cirrus: Vec<PathBuf>,
    /// One day's `pageview_complete` file (`pageviews` part).
    pub pageviews: Option<PathBuf>,
    /// The page collections (`collections` part), already resolved.
    pub collections: Option<PathBuf>,
}

/// Where the sources come from, recorded in the catalog's description.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The SQL dumps' run (`YYYYMMDD`).
    pub dump_run: Option<String>,
    /// The search index dump's run (`YYYYMMDD`).
    pub cirrus_run: Option<String>,
    /// The day of the views (`YYYY-MM-DD`).
    pub pageviews_day: Option<String>,
    /// The metawiki run the collections come from.
    pub collections_run: Option<String>,
    /// Each source file: name, size and checksum as published.
    pub files: Vec<SourceFile>,
}

/// A source file of the catalog.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    pub name: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha1: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md5: Option<String>,
}

/// Counts of what a catalog holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub articles: u64,
    pub redirects: u64,
    pub with_wikidata_id: u64,
    pub disambiguations: u64,
    pub langlinks: u64,
    pub search_documents: u64,
    /// Search documents with no article in the `page` table (deleted or moved since).
    pub search_documents_unmatched: u64,
    pub viewed_titles: u64,
    pub collections: u64,
}

/// A catalog's description (`catalog.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    /// The wiki's database name.
    pub wiki: String,
    /// Its interlanguage-link code (`en`).
    pub language: String,
    /// The parts it was built with (`sql`, `cirrus`, `pageviews`, `collections`).
    pub parts: Vec<String>,
    pub provenance: Provenance,
    pub counts: Counts,
    /// Whether a search index was built beside it (`search/`).
    pub search_index: bool,
    /// The namespaces used to place titles.
    pub site: Site,
    pub built_by: String,
    /// Seconds since the epoch.
    pub built_at: u64,
}

/// The build's phases, reported to progress callbacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Views,
    Search,
    Tables,
    Joins,
    Articles,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Self::Views => "views",
            Self::Search => "search documents",
            Self::Tables => "tables",
            Self::Joins => "title joins",
            Self::Articles => "articles",
        }
    }
}

/// How far a build is: its phase and how many items of it are done. Shared with a caller
/// that polls it (the binding's progress bars).
#[derive(Debug, Default)]
pub struct Progress {
    phase: AtomicU64,
    done: AtomicU64,
}

impl Progress {
    fn enter(&self, phase: Phase) {
        self.phase.store(phase as u64 + 1, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
    }

    fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// The phase running and its items done; `None` before the first.
    pub fn get(&self) -> Option<(Phase, u64)> {
        let phase = match self.phase.load(Ordering::Relaxed) {
            1 => Phase::Views,
            2 => Phase::Search,
            3 => Phase::Tables,
            4 => Phase::Joins,
            5 => Phase::Articles,
            _ => return None,
        };
        Some((phase, self.done.load(Ordering::Relaxed)))
    }
}

/// How a build runs.
#[derive(Clone)]
pub struct BuildOptions {
    /// Bytes of sort buffers in all (spilled to work files beyond).
    pub memory: usize,
    /// Search shards read at once.
    pub threads: usize,
    /// Starts the search index in the folder it is given, and receives every search
    /// document (`cirrus` part): seed search's index by default, `None` for none.
    pub index: Option<IndexFactory>,
    pub progress: Arc<Progress>,
    /// Set to stop the build (Ctrl-C); it then ends with [`Error::Cancelled`].
    pub cancel: Arc<AtomicBool>,
    pub provenance: Provenance,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            memory: 1 << 30,
            threads: std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            index: Some(crate::seed::index_factory()),
            progress: Arc::default(),
            cancel: Arc::default(),
            provenance: Provenance::default(),
        }
    }
}

impl std::fmt::Debug for BuildOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuildOptions")
            .field("memory", &self.memory)
            .field("threads", &self.threads)
            .field("index", &self.index.is_some())
            .finish_non_exhaustive()
    }
}

/// The work folder of a build: removed when the build ends, whole or not.
struct WorkDir(PathBuf);

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(crate) fn check_cancel(cancel: &AtomicBool) -> Result<()> {
    if cancel.load(Ordering::Relaxed) {
        Err(Error::Cancelled)
    } else {
        Ok(())
    }
}

/// Builds the catalog of `sources` into the folder `out` (replacing a catalog there).
pub fn build(sources: &Sources, out: &Path, options: &BuildOptions) -> Result<Manifest> {
    let wiki_id = sources.wiki.as_str();
    wikisuggest_engine::published::validate_wiki_id(wiki_id)
        .map_err(|e| Error::invalid("wiki", e.to_string()))?;
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "catalog".to_owned());
    let staging = parent.join(format!(".{name}.building-{}", std::process::id()));
    let work = WorkDir(parent.join(format!(".{name}.work-{}", std::process::id())));
    for dir in [&staging, &work.0] {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let staged = WorkDir(staging.clone());
    let site = match &sources.sql.namespaces {
        Some(path) => Site::read(path)?,
        None => Site::default(),
    };
    // The sorts that may be alive at once share the budget.
    let budget = (options.memory / 4).max(1 << 20);
    let mut counts = Counts::default();

    // 1. Views.
    let views = match &sources.pageviews {
        Some(path) => {
            options.progress.enter(Phase::Views);
            Some(popular::read_views(
                path,
                &wiki::pageview_project(wiki_id),
                &work.0,
                budget,
                options,
                &mut counts,
            )?)
        }
        None => None,
    };

    // 2. Search documents.
    let search = if sources.cirrus.is_empty() {
        None
    } else {
        options.progress.enter(Phase::Search);
        let sink = match &options.index {
            Some(start) => {
                let settings = IndexStart {
                    language: wiki::subdomain(wiki_id),
                    // The search sort holds another share while the index is built.
                    memory: budget,
                    threads: options.threads,
                };
                Some(start(&staging.join(schema::SEARCH_INDEX), &settings).map_err(Error::Search)?)
            }
            None => None,
        };
        let read = assemble::read_search(
            &sources.cirrus,
            &work.0,
            budget,
            sink.as_deref(),
            options,
            &mut counts,
        )?;
        if let Some(sink) = &sink {
            sink.finish().map_err(Error::Search)?;
        }
        Some(read)
    };

    // 3. Tables.
    options.progress.enter(Phase::Tables);
    let top = views.as_ref().map(|v| v.top.as_slice()).unwrap_or_default();
    let tables = joins::merge_tables(
        &sources.sql,
        &site,
        top,
        &work.0,
        &staging,
        budget,
        options,
        &mut counts,
    )?;
    if let Some(views) = &views {
        popular::write_popular(&staging.join(schema::POPULAR), &views.top, &tables.placed)?;
    }

    // 4. Title joins.
    options.progress.enter(Phase::Joins);
    let extras = joins::title_joins(
        tables.titles,
        tables.redirect_pairs,
        views.as_ref().map(|v| v.file.as_path()),
        &work.0,
        budget,
        options,
        &mut counts,
    )?;

    // 5. Articles.
    options.progress.enter(Phase::Articles);
    assemble::write_articles(
        &tables.articles,
        extras,
        search,
        views.is_some(),
        &staging.join(schema::ARTICLES),
        options,
    )?;

    if let Some(collections) = &sources.collections {
        let target = staging.join(schema::COLLECTIONS);
        std::fs::copy(collections, &target).map_err(|e| Error::io(&target, e))?;
        counts.collections = crate::pq::TableReader::open(&target)?.rows();
    }
    let mut parts = vec!["sql".to_owned()];
    if !sources.cirrus.is_empty() {
        parts.push("cirrus".to_owned());
    }
    if sources.pageviews.is_some() {
        parts.push("pageviews".to_owned());
    }
    if sources.collections.is_some() {
        parts.push("collections".to_owned());
    }
    let manifest = Manifest {
        format: schema::FORMAT_VERSION,
        wiki: wiki_id.to_owned(),
        language: wiki::subdomain(wiki_id),
        parts,
        provenance: options.provenance.clone(),
        counts,
        search_index: options.index.is_some() && !sources.cirrus.is_empty(),
        site,
        built_by: format!("wikisuggest {}", env!("CARGO_PKG_VERSION")),
        built_at: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let json = serde_json::to_vec_pretty(&manifest).map_err(|e| Error::catalog(out, e))?;
    let manifest_path = staging.join(schema::MANIFEST);
    std::fs::write(&manifest_path, json).map_err(|e| Error::io(&manifest_path, e))?;
    check_cancel(&options.cancel)?;
    replace_dir(&staging, out)?;
    std::mem::forget(staged);
    Ok(manifest)
}

/// Puts the folder `from` at `to`, moving an existing `to` aside first.
fn replace_dir(from: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        let old = to.with_extension(format!("old-{}", std::process::id()));
        std::fs::rename(to, &old).map_err(|e| Error::io(to, e))?;
        std::fs::rename(from, to).map_err(|e| Error::io(to, e))?;
        let _ = std::fs::remove_dir_all(&old);
    } else {
        std::fs::rename(from, to).map_err(|e| Error::io(to, e))?;
    }
    Ok(())
}
