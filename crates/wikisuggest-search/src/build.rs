//! Building an index folder from a wiki's articles: memory-bounded (tantivy's indexing budget),
//! committed every so many documents, and resumed where an interrupted build stopped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use tantivy::directory::MmapDirectory;
use tantivy::{Index, IndexWriter, TantivyDocument};

use crate::analysis::{profile, text_analyzer};
use crate::error::{Result, SearchError, invalid};
use crate::morelike::{MoreLikeOverrides, MoreLikeParams};
use crate::schema::{self, FORMAT, Fields, Settings, TEXT_ANALYZER};
use crate::title::title_key;

/// One article as the index takes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Document {
    pub page_id: u64,
    pub title: String,
    /// The article's plain text (the CirrusSearch dump's `text`).
    pub text: String,
    /// Titles of the redirects to the article.
    pub redirects: Vec<String>,
    pub disambiguation: bool,
}

/// One article, borrowed: what a catalog build hands over without copying the text.
#[derive(Clone, Copy, Debug)]
pub struct DocumentRef<'a> {
    pub page_id: u64,
    pub title: &'a str,
    pub text: &'a str,
    pub redirects: &'a [&'a str],
    pub disambiguation: bool,
}

impl Document {
    pub fn as_ref<'a>(&'a self, redirects: &'a [&'a str]) -> DocumentRef<'a> {
        DocumentRef {
            page_id: self.page_id,
            title: &self.title,
            text: &self.text,
            redirects,
            disambiguation: self.disambiguation,
        }
    }
}

fn tantivy_document(f: &Fields, doc: &DocumentRef<'_>) -> TantivyDocument {
    let mut d = TantivyDocument::default();
    d.add_u64(f.page_id, doc.page_id);
    d.add_text(f.title, doc.title);
    if let Some(key) = title_key(doc.title) {
        d.add_text(f.title_key, key);
    }
    for r in doc.redirects {
        if let Some(key) = title_key(r) {
            d.add_text(f.redirect_key, key);
        }
    }
    d.add_u64(f.disambiguation, u64::from(doc.disambiguation));
    d.add_text(f.text, doc.text);
    d
}

/// How a build runs.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The wiki's language code, which chooses the analyzer.
    pub language: String,
    /// The wiki's own morelike settings (`MediaWiki:Cirrussearch-morelikethis-settings`).
    pub morelike: MoreLikeOverrides,
    /// Bytes the indexer may hold before it writes a segment (at least 15 MiB a thread).
    pub memory_budget: usize,
    /// Indexing threads.
    pub threads: usize,
    /// Documents between commits: what an interruption can cost.
    pub commit_every: u64,
}

impl BuildOptions {
    pub fn new(language: &str) -> Self {
        Self {
            language: language.to_owned(),
            morelike: MoreLikeOverrides::default(),
            memory_budget: 128 << 20,
            threads: 1,
            commit_every: 50_000,
        }
    }
}

/// What a finished build reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildSummary {
    /// Documents in the index.
    pub documents: u64,
    /// Documents this call added (the rest were there from an interrupted build).
    pub added: u64,
    /// Whether the index was already complete before this call.
    pub already_complete: bool,
}

/// The progress recorded with every commit.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Progress {
    pub documents: u64,
    pub last_page_id: Option<u64>,
    pub complete: bool,
}

pub(crate) fn progress(index: &Index, dir: &Path) -> Result<Progress> {
    let metas = index.load_metas()?;
    match metas.payload {
        None => Ok(Progress::default()),
        Some(p) => serde_json::from_str(&p).map_err(|e| SearchError::NotAnIndex {
            path: dir.to_path_buf(),
            reason: format!("commit record: {e}"),
        }),
    }
}

pub(crate) fn open_index(dir: &Path, language: &str) -> Result<(Index, Fields)> {
    let (schema, fields) = schema::schema();
    let directory = MmapDirectory::open(dir).map_err(|e| SearchError::NotAnIndex {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    let index = Index::open_or_create(directory, schema)?;
    index
        .tokenizers()
        .register(TEXT_ANALYZER, text_analyzer(profile(language)?));
    Ok((index, fields))
}

/// The lock files of tantivy's writer, and of its readers while they open the segments.
const LOCK_FILES: [&str; 2] = [".tantivy-writer.lock", ".tantivy-meta.lock"];

/// A finished index's folder as it is kept: its files shared as its settings are
/// ([`share_files`]), and without the lock files the writer left (empty once it ended; the
/// index's readers take no lock, see `read_only`).
fn leave_finished(dir: &Path) -> Result<()> {
    share_files(dir)?;
    for name in LOCK_FILES {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Err(source) if source.kind() != std::io::ErrorKind::NotFound => {
                return Err(SearchError::Io { path, source });
            }
            _ => {}
        }
    }
    Ok(())
}

/// The files tantivy writes atomically (through a private temporary file) readable by whoever
/// may read the rest of the index: they get the settings file's permissions, which follow the
/// user's umask, so a finished index can be shared with other users.
fn share_files(dir: &Path) -> Result<()> {
    let io = |path: PathBuf| move |source| SearchError::Io { path, source };
    let settings = schema::settings_path(dir);
    let permissions = std::fs::metadata(&settings)
        .map_err(io(settings))?
        .permissions();
    for name in ["meta.json", ".managed.json"] {
        let path = dir.join(name);
        if path.exists() {
            std::fs::set_permissions(&path, permissions.clone()).map_err(io(path.clone()))?;
        }
    }
    Ok(())
}

/// An index under construction in its folder.
///
/// Documents are [`push`](Self::push)ed in the build's order every time: those an earlier,
/// interrupted build committed are recognised and skipped (checking that the last of them is
/// the same page), the others added.
pub struct IndexBuilder {
    dir: PathBuf,
    writer: IndexWriter,
    fields: Fields,
    progress: Progress,
    /// Documents committed when the builder opened: the first this many pushed are skipped.
    resume_at: u64,
    /// Documents pushed so far (skipped or added).
    position: u64,
    since_commit: u64,
    commit_every: u64,
}

/// Checks the options, creates `dir` and records the settings; the index, its fields and the
/// writer, with the progress an earlier build committed.
fn prepare(dir: &Path, options: &BuildOptions) -> Result<(IndexWriter, Fields, Progress)> {
    MoreLikeParams::default().with(&options.morelike)?;
    let threads = options.threads.max(1);
    if options.memory_budget < threads * (15 << 20) {
        return Err(invalid(
            "memory_budget",
            format!(
                "at least 15 MiB per thread, got {} bytes",
                options.memory_budget
            ),
        ));
    }
    profile(&options.language)?;
    std::fs::create_dir_all(dir).map_err(|source| SearchError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let wanted = Settings {
        format: FORMAT,
        language: options.language.clone(),
        morelike: options.morelike.clone(),
    };
    match schema::read_settings(dir)? {
        Some(found) if found.language != wanted.language => {
            return Err(invalid(
                "language",
                format!(
                    "{} holds an index analysed as {:?}, not {:?}",
                    dir.display(),
                    found.language,
                    wanted.language
                ),
            ));
        }
        _ => schema::write_settings(dir, &wanted)?,
    }
    let (index, fields) = open_index(dir, &options.language)?;
    let progress = progress(&index, dir)?;
    let writer = index.writer_with_num_threads(threads, options.memory_budget)?;
    Ok((writer, fields, progress))
}

impl IndexBuilder {
    /// Opens `dir` (creating it) for a new build, or for resuming one over the same language.
    pub fn open(dir: &Path, options: &BuildOptions) -> Result<Self> {
        let (writer, fields, progress) = prepare(dir, options)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            writer,
            fields,
            resume_at: progress.documents,
            progress,
            position: 0,
            since_commit: 0,
            commit_every: options.commit_every.max(1),
        })
    }

    /// Documents committed when the build (re)started.
    pub fn resumed_at(&self) -> u64 {
        self.resume_at
    }

    /// Documents in the index, committed or not.
    pub fn documents(&self) -> u64 {
        self.progress.documents
    }

    /// Whether an earlier build finished: nothing is left to add.
    pub fn is_complete(&self) -> bool {
        self.progress.complete
    }

    /// Takes the next document of the build's input: skipped if an interrupted build had
    /// committed it, added otherwise (with a commit every `commit_every` documents). Returns
    /// whether it was added.
    pub fn push(&mut self, doc: &Document) -> Result<bool> {
        let position = self.position;
        if self.progress.complete {
            return Ok(false);
        }
        if position < self.resume_at {
            if position + 1 == self.resume_at
                && let Some(expected) = self.progress.last_page_id
                && expected != doc.page_id
            {
                return Err(SearchError::InputChanged {
                    path: self.dir.clone(),
                    position,
                    expected,
                    found: doc.page_id,
                });
            }
            self.position += 1;
            return Ok(false);
        }
        self.add(doc)?;
        self.position += 1;
        Ok(true)
    }

    fn add(&mut self, doc: &Document) -> Result<()> {
        let redirects: Vec<&str> = doc.redirects.iter().map(String::as_str).collect();
        let d = tantivy_document(&self.fields, &doc.as_ref(&redirects));
        self.writer.add_document(d)?;
        self.progress.documents += 1;
        self.progress.last_page_id = Some(doc.page_id);
        self.since_commit += 1;
        if self.since_commit >= self.commit_every {
            self.commit(false)?;
        }
        Ok(())
    }

    fn commit(&mut self, complete: bool) -> Result<()> {
        self.progress.complete = complete;
        let payload = serde_json::to_string(&self.progress).map_err(|e| SearchError::Io {
            path: self.dir.clone(),
            source: std::io::Error::other(e),
        })?;
        let mut prepared = self.writer.prepare_commit()?;
        prepared.set_payload(&payload);
        prepared.commit()?;
        self.since_commit = 0;
        Ok(())
    }

    /// Commits what was added so far (an interrupted build keeps it); returns the count.
    pub fn checkpoint(&mut self) -> Result<u64> {
        if !self.progress.complete {
            self.commit(false)?;
        }
        Ok(self.progress.documents)
    }

    /// Commits the last documents, marks the index complete and lets merges finish. The input
    /// must have reached the documents an interrupted build had committed.
    pub fn finish(mut self) -> Result<u64> {
        if self.progress.complete {
            return Ok(self.progress.documents);
        }
        if self.position < self.resume_at {
            return Err(SearchError::InputShorter {
                path: self.dir.clone(),
                given: self.position,
                committed: self.resume_at,
            });
        }
        self.commit(true)?;
        let documents = self.progress.documents;
        merge_if_small(&mut self.writer, documents)?;
        self.writer.wait_merging_threads()?;
        leave_finished(&self.dir)?;
        Ok(documents)
    }
}

/// Indexes of up to this many articles end as one segment: a few files, the same whatever the
/// number of threads that built them (the catalog shipped with the package is one), and a
/// query visits one segment. Larger ones keep the segments the merge policy left.
const ONE_SEGMENT_UP_TO: u64 = 250_000;

/// Merges a small finished index's segments into one (a merge keeps the last commit's
/// payload, the mark of a complete build).
fn merge_if_small(writer: &mut IndexWriter, documents: u64) -> Result<()> {
    if documents > ONE_SEGMENT_UP_TO {
        return Ok(());
    }
    let segments = writer.index().searchable_segment_ids()?;
    if segments.len() > 1 {
        writer.merge(&segments).wait()?;
    }
    Ok(())
}

/// Builds the index of `docs` in `dir`, or resumes the interrupted build there (the documents
/// must come in the same order each time). `cancel` stops the build at the next document,
/// committing what was added ([`SearchError::Interrupted`]). A complete index is left as it is.
pub fn build_index<I>(
    dir: &Path,
    docs: I,
    options: &BuildOptions,
    cancel: Option<&AtomicBool>,
) -> Result<BuildSummary>
where
    I: IntoIterator<Item = Document>,
{
    let mut builder = IndexBuilder::open(dir, options)?;
    if builder.is_complete() {
        return Ok(BuildSummary {
            documents: builder.documents(),
            added: 0,
            already_complete: true,
        });
    }
    let mut added = 0u64;
    for doc in docs {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            let documents = builder.checkpoint()?;
            return Err(SearchError::Interrupted { documents });
        }
        added += u64::from(builder.push(&doc)?);
    }
    let documents = builder.finish()?;
    Ok(BuildSummary {
        documents,
        added,
        already_complete: false,
    })
}

/// A build fed from several threads at once (a catalog reading its dump's shards in
/// parallel), in no fixed order. Such a build cannot resume by position: an interrupted one
/// starts over (a catalog builds in a staging folder that it discards). Memory stays within
/// the indexing budget.
pub struct SharedIndexBuilder {
    dir: PathBuf,
    writer: std::sync::RwLock<Option<IndexWriter>>,
    fields: Fields,
    added: std::sync::atomic::AtomicU64,
}

impl SharedIndexBuilder {
    /// Starts a build in `dir`, discarding whatever an unfinished build left there; a complete
    /// index is refused.
    pub fn create(dir: &Path, options: &BuildOptions) -> Result<Self> {
        let (writer, fields, progress) = prepare(dir, options)?;
        if progress.complete {
            return Err(invalid(
                "path",
                format!("{} already holds a complete index", dir.display()),
            ));
        }
        if progress.documents > 0 {
            writer.delete_all_documents()?;
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            writer: std::sync::RwLock::new(Some(writer)),
            fields,
            added: std::sync::atomic::AtomicU64::new(0),
        })
    }

    fn finished(&self) -> SearchError {
        invalid(
            "builder",
            format!("the build of {} has finished", self.dir.display()),
        )
    }

    /// Adds one article; callable from several threads at once.
    pub fn add(&self, doc: &DocumentRef<'_>) -> Result<()> {
        let guard = self.writer.read().map_err(|_| self.finished())?;
        let writer = guard.as_ref().ok_or_else(|| self.finished())?;
        writer.add_document(tantivy_document(&self.fields, doc))?;
        self.added.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Commits every article added, marks the index complete, lets merges finish; returns the
    /// article count.
    pub fn finish(&self) -> Result<u64> {
        let mut guard = self.writer.write().map_err(|_| self.finished())?;
        let mut writer = guard.take().ok_or_else(|| self.finished())?;
        let progress = Progress {
            documents: self.added.load(Ordering::Relaxed),
            last_page_id: None,
            complete: true,
        };
        let payload = serde_json::to_string(&progress).map_err(|e| SearchError::Io {
            path: self.dir.clone(),
            source: std::io::Error::other(e),
        })?;
        let mut prepared = writer.prepare_commit()?;
        prepared.set_payload(&payload);
        prepared.commit()?;
        merge_if_small(&mut writer, progress.documents)?;
        writer.wait_merging_threads()?;
        leave_finished(&self.dir)?;
        Ok(progress.documents)
    }
}
