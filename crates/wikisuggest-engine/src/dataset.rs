//! [`Dataset`]: one wiki's lookup tables and link model, opened once and shared.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use crate::conversion::ConvertOptions;
use crate::error::{Error, Result};
use crate::native::{self, NativeImage, NativeInput, publish_native_file, write_native};
use crate::published::{self, PublishedDataset, validate_wiki_id};
use crate::tables::DatasetChecksums;
use crate::xgboost::LinkModel;
use wikisuggest_text::pipeline::{GramRow, MAX_GRAM};

/// Where a [`Dataset`] was loaded from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DatasetSource {
    /// A native file, memory-mapped.
    Native(PathBuf),
    /// A directory of published `.sql.gz` files, converted in memory.
    Published(PathBuf),
    /// A directory of legacy sqlitedict files, converted in memory.
    Sqlite(PathBuf),
    /// A native image passed as bytes.
    Memory,
}

/// Sizes and provenance of a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetInfo {
    /// Wiki id.
    pub wiki_id: String,
    /// Where it was loaded from.
    pub source: DatasetSource,
    /// Distinct titles (articles, redirects, candidates, vector keys).
    pub titles: u64,
    /// Titles with a page id (`pageids` rows).
    pub pages: u64,
    /// Redirect rows.
    pub redirects: u64,
    /// Vector rows.
    pub vectors: u64,
    /// Vector dimension.
    pub dim: u64,
    /// Anchor rows.
    pub anchors: u64,
    /// `(anchor, candidate)` pairs.
    pub candidates: u64,
    /// Trees the model evaluates.
    pub model_trees: usize,
}

/// One candidate target of an anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate<'a> {
    /// Target title.
    pub title: &'a str,
    /// Number of source articles linking the anchor to it.
    pub count: u32,
    /// The title's index in the dataset it was read from (titles are unique there), so
    /// that its vector is found without looking the title up again; `None` for a
    /// candidate made elsewhere.
    pub(crate) index: Option<u32>,
}

impl<'a> Candidate<'a> {
    /// A candidate `title` with `count`, found by its title when it is scored.
    pub fn new(title: &'a str, count: u32) -> Self {
        Self {
            title,
            count,
            index: None,
        }
    }
}

/// A borrowed float32 vector stored little-endian in the dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vector<'a> {
    raw: &'a [u8],
}

impl<'a> Vector<'a> {
    /// Number of components.
    pub fn dim(&self) -> usize {
        self.raw.len() / 4
    }

    /// The components.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = f32> + 'a {
        self.raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
    }

    /// The components as an owned vector.
    pub fn to_vec(&self) -> Vec<f32> {
        self.iter().collect()
    }
}

/// How a native file is opened (see [`Dataset::open_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeOpenOptions {
    /// Recompute the checksum over the whole file before use (reads it once). Without
    /// it, opening validates the structure only (O(1) in the data size).
    pub verify: bool,
    /// Files up to this many bytes are read into private memory; larger ones are
    /// memory-mapped, guarded against truncation (a read past the new end gives zeros and
    /// a flag, not a fatal SIGBUS) and checked for changes in place before and after each
    /// use.
    pub private_copy_max: u64,
}

impl Default for NativeOpenOptions {
    fn default() -> Self {
        Self {
            verify: false,
            private_copy_max: native::reader::PRIVATE_COPY_MAX,
        }
    }
}

/// The datasets and model of one wiki, immutable after opening.
///
/// `Send + Sync`: share it across threads with `Arc<Dataset>`. Lookups take keys exactly
/// as upstream stores them (anchors: Python-lowercased text; titles: normalised titles)
/// and never normalise them. Lookups return `Err` only if the native file is corrupt.
#[derive(Debug)]
pub struct Dataset {
    image: NativeImage,
    model: LinkModel,
    source: DatasetSource,
}

impl Dataset {
    /// Opens the dataset of `wiki_id` in `dir`, detecting its format: a native file
    /// `{wiki_id}.linkdata` (memory-mapped, O(1)), else published `lr_{wiki_id}_*.sql.gz`
    /// files (checksums verified, converted in memory), else legacy
    /// `{wiki_id}.*.sqlite` files (converted in memory).
    pub fn open(dir: &Path, wiki_id: &str) -> Result<Self> {
        Self::open_with(dir, wiki_id, &NativeOpenOptions::default())
    }

    /// [`Dataset::open`], opening a native file as `options` say.
    pub fn open_with(dir: &Path, wiki_id: &str, options: &NativeOpenOptions) -> Result<Self> {
        validate_wiki_id(wiki_id)?;
        let native_path = dir.join(native::native_file_name(wiki_id));
        if native_path.is_file() {
            let ds = Self::open_native_with(&native_path, options)?;
            if ds.image.meta.wiki_id != wiki_id {
                return Err(Error::Corrupt {
                    path: native_path,
                    reason: format!("holds wiki {:?}, not {wiki_id:?}", ds.image.meta.wiki_id),
                });
            }
            return Ok(ds);
        }
        if published::is_published_dir(dir, wiki_id) {
            let data = published::read_published(dir, wiki_id)?;
            return Self::from_published(&data, wiki_id, DatasetSource::Published(dir.to_owned()));
        }
        #[cfg(feature = "sqlite")]
        if crate::sqlite::is_sqlite_dir(dir, wiki_id) {
            let data = crate::sqlite::read_sqlite(dir, wiki_id)?;
            return Self::from_published(&data, wiki_id, DatasetSource::Sqlite(dir.to_owned()));
        }
        Err(Error::NotFound {
            dir: dir.to_owned(),
            wiki_id: wiki_id.to_owned(),
        })
    }

    /// Opens a native file (read into memory if small, memory-mapped otherwise).
    /// Validates its structure, not its checksum (see [`verify`](Self::verify)).
    pub fn open_native(path: &Path) -> Result<Self> {
        Self::open_native_with(path, &NativeOpenOptions::default())
    }

    /// Opens a native file as `options` say.
    pub fn open_native_with(path: &Path, options: &NativeOpenOptions) -> Result<Self> {
        let image = NativeImage::open(path, options.private_copy_max)?;
        if options.verify {
            let verified = image.verify();
            image.check_unchanged()?;
            verified?;
        }
        let model = image.model()?;
        // The model was read from the file too.
        image.check_unchanged()?;
        Ok(Self {
            image,
            model,
            source: DatasetSource::Native(path.to_owned()),
        })
    }

    /// Fails with [`Error::Changed`] if the memory-mapped file was truncated or changed in
    /// place since it was opened (always `Ok` for a file read into memory). A page whose
    /// look-ups ran between two successful checks read the file as it was opened.
    pub fn check_unchanged(&self) -> Result<()> {
        self.image.check_unchanged()
    }

    /// Reads a native image held in memory (e.g. embedded or downloaded).
    pub fn from_native_bytes(bytes: Vec<u8>) -> Result<Self> {
        let image = NativeImage::from_bytes(bytes)?;
        let model = image.model()?;
        Ok(Self {
            image,
            model,
            source: DatasetSource::Memory,
        })
    }

    /// Builds a dataset from already read published tables, in memory.
    pub fn from_published(
        data: &PublishedDataset,
        wiki_id: &str,
        source: DatasetSource,
    ) -> Result<Self> {
        let input = NativeInput::from_tables(
            wiki_id,
            &data.tables,
            data.model_json.clone(),
            data.checksums.clone(),
        )?;
        let mut buf = Cursor::new(Vec::new());
        write_native(&input, &mut buf)?;
        let image = NativeImage::from_bytes(buf.into_inner())?;
        Ok(Self {
            image,
            model: input.model,
            source,
        })
    }

    /// Checks the checksum over the whole native image: header, section table and
    /// data (reads everything once).
    pub fn verify(&self) -> Result<()> {
        self.image.check_unchanged()?;
        let verified = self.image.verify();
        // A truncation while hashing reads zeros: say so rather than "checksum mismatch".
        self.image.check_unchanged()?;
        verified
    }

    /// The wiki id.
    pub fn wiki_id(&self) -> &str {
        &self.image.meta.wiki_id
    }

    /// The published sha256 of the five source files (`meta.dataset_checksums`); all
    /// `None` for sources without checksums (legacy SQLite).
    pub fn checksums(&self) -> &DatasetChecksums {
        &self.image.meta.checksums
    }

    /// Sizes and provenance.
    pub fn info(&self) -> DatasetInfo {
        let m = &self.image.meta;
        DatasetInfo {
            wiki_id: m.wiki_id.clone(),
            source: self.source.clone(),
            titles: m.titles,
            pages: m.pages,
            redirects: m.redirects,
            vectors: m.vectors,
            dim: m.dim,
            anchors: m.anchors,
            candidates: m.candidates,
            model_trees: self.model.num_trees(),
        }
    }

    /// The link model.
    pub fn model(&self) -> &LinkModel {
        &self.model
    }

    /// The model JSON the model was compiled from (e.g. to load it in XGBoost).
    pub fn model_json(&self) -> &[u8] {
        self.image.model_json()
    }

    /// Whether `anchor` is a key of the anchors table.
    pub fn has_anchor(&self, anchor: &str) -> Result<bool> {
        Ok(self.image.find_anchor(anchor)?.is_some())
    }

    /// [`Dataset::has_anchor`] for the prefixes `text[..end]`, `end` in `ends` (ascending;
    /// an end that is not a character boundary or goes backwards answers `false`),
    /// appended to `out` in order. Cheaper than one look-up each: the n-grams from one
    /// position are prefixes of the longest, and each hash continues from the shorter one's.
    pub fn has_anchor_prefixes(
        &self,
        text: &str,
        ends: &[usize],
        out: &mut Vec<bool>,
    ) -> Result<()> {
        self.image
            .find_anchor_prefixes(text, ends, |found| out.push(found.is_some()))
    }

    /// [`Dataset::has_anchor_prefixes`] for the rows of grams of one text (see
    /// [`GramRow`]), one answer row appended to `out` per row. The look-ups of all rows
    /// overlap, which is what makes a large table's cache misses cheap.
    pub fn has_anchor_rows(
        &self,
        text: &str,
        rows: &[GramRow],
        out: &mut Vec<[bool; MAX_GRAM]>,
    ) -> Result<()> {
        let before = out.len();
        out.resize(before + rows.len(), [false; MAX_GRAM]);
        let answers = out.get_mut(before..).unwrap_or_default();
        self.image
            .find_anchor_rows(text, rows, |row, level, found| {
                if let Some(slot) = answers.get_mut(row).and_then(|a| a.get_mut(level)) {
                    *slot = found.is_some();
                }
            })
    }

    /// The candidates of `anchor` in stored order (which decides ties), or `None` if it is
    /// not an anchor.
    pub fn anchor_candidates(&self, anchor: &str) -> Result<Option<Vec<Candidate<'_>>>> {
        let Some(a) = self.image.find_anchor(anchor)? else {
            return Ok(None);
        };
        let pairs = self.image.candidates(a)?;
        let mut out = Vec::with_capacity(pairs.len());
        for (t, count) in pairs {
            out.push(Candidate {
                title: self.image.title(t)?,
                count,
                index: Some(t),
            });
        }
        Ok(Some(out))
    }

    /// The redirect target of `title` (one hop), if it is a redirect.
    pub fn redirect(&self, title: &str) -> Result<Option<&str>> {
        Ok(self.redirect_found(title)?.0)
    }

    /// [`Dataset::redirect`], with the title's index (`None`: not a title).
    pub(crate) fn redirect_found(&self, title: &str) -> Result<(Option<&str>, Option<u32>)> {
        let Some(t) = self.image.find_title(title)? else {
            return Ok((None, None));
        };
        match self.image.redirect(t)? {
            Some(target) => Ok((Some(self.image.title(target)?), Some(t))),
            None => Ok((None, Some(t))),
        }
    }

    /// Where a link to `title` leads, if that is an article: the target of its redirect
    /// (one hop), or `title` itself when it is no redirect, appended to `out` as the dataset
    /// spells it; whether it is an article. A title that is no redirect is `title` itself:
    /// it was found by its bytes, so they are not read again.
    pub(crate) fn link_target_into(&self, title: &str, out: &mut String) -> Result<bool> {
        let Some(t) = self.image.find_title(title)? else {
            return Ok(false);
        };
        let redirect = self.image.redirect(t)?;
        let target = redirect.unwrap_or(t);
        if self.image.page_id(target)?.is_none() {
            return Ok(false);
        }
        match redirect {
            Some(target) => out.push_str(self.image.title(target)?),
            None => out.push_str(title),
        }
        Ok(true)
    }

    /// Fetches into the caches what [`Dataset::link_target_into`] of each of `titles` reads, all
    /// at once (a hint: answers nothing, changes nothing).
    pub(crate) fn prefetch_link_targets(&self, titles: &[&str]) {
        self.image.prefetch_link_targets(titles);
    }

    /// [`Dataset::has_page`] of the title with index `t`.
    pub(crate) fn has_page_at(&self, t: u32) -> Result<bool> {
        Ok(self.image.page_id(t)?.is_some())
    }

    /// Whether `title` is a key of the pageids table.
    pub fn has_page(&self, title: &str) -> Result<bool> {
        Ok(self.page_id(title)?.is_some())
    }

    /// The page id of `title`, if it is a key of the pageids table.
    pub fn page_id(&self, title: &str) -> Result<Option<i64>> {
        match self.image.find_title(title)? {
            Some(t) => self.image.page_id(t),
            None => Ok(None),
        }
    }

    /// The embedding of candidate `c`: by its title's index when it has one.
    pub(crate) fn candidate_vector(&self, c: &Candidate<'_>) -> Result<Option<Vector<'_>>> {
        match c.index {
            Some(t) => Ok(self.image.vector_bytes(t)?.map(|raw| Vector { raw })),
            None => self.vector(c.title),
        }
    }

    /// The embedding of `title`, if it has one.
    pub fn vector(&self, title: &str) -> Result<Option<Vector<'_>>> {
        match self.image.find_title(title)? {
            Some(t) => Ok(self.image.vector_bytes(t)?.map(|raw| Vector { raw })),
            None => Ok(None),
        }
    }

    /// Visits every anchor with its candidates, in stored order (UTF-8 byte order of the
    /// keys for files made by [`convert`]). Stops at the first error `f` returns.
    pub fn for_each_anchor(
        &self,
        mut f: impl FnMut(&str, &[Candidate<'_>]) -> Result<()>,
    ) -> Result<()> {
        let mut cands = Vec::new();
        for a in 0..self.image.n_anchors() as u32 {
            cands.clear();
            for (t, count) in self.image.candidates(a)? {
                cands.push(Candidate {
                    title: self.image.title(t)?,
                    count,
                    index: Some(t),
                });
            }
            f(self.image.anchor(a)?, &cands)?;
        }
        Ok(())
    }

    /// Number of titles (for iteration with [`title_at`](Self::title_at)).
    pub fn title_count(&self) -> usize {
        self.image.n_titles()
    }

    /// Title number `i` in stored order (UTF-8 byte order for files made by [`convert`]).
    pub fn title_at(&self, i: usize) -> Result<&str> {
        let i = u32::try_from(i)
            .ok()
            .filter(|&i| (i as usize) < self.image.n_titles())
            .ok_or_else(|| Error::InvalidArgument(format!("title index {i} out of range")))?;
        self.image.title(i)
    }

    /// Vector dimension (0 without vectors).
    pub fn dim(&self) -> usize {
        self.image.dim()
    }
}

/// Converts the published (or legacy SQLite) dataset of `wiki_id` in `src_dir` into the
/// native file `out_dir/{wiki_id}.linkdata`, and returns its path.
///
/// Published `.sql.gz` files are converted as a stream, in bounded memory (see
/// [`crate::conversion`]); legacy SQLite files are read into memory. The file is written under
/// a temporary name and renamed into place, so a reader never maps a half-written file.
pub fn convert(src_dir: &Path, wiki_id: &str, out_dir: &Path) -> Result<PathBuf> {
    convert_with(src_dir, wiki_id, out_dir, &ConvertOptions::default())
}

/// [`convert`] with progress reports, cancellation and a sort budget (published files).
pub fn convert_with(
    src_dir: &Path,
    wiki_id: &str,
    out_dir: &Path,
    options: &ConvertOptions<'_>,
) -> Result<PathBuf> {
    validate_wiki_id(wiki_id)?;
    if published::is_published_dir(src_dir, wiki_id) {
        return crate::conversion::convert_published(src_dir, wiki_id, out_dir, options);
    }
    #[cfg(feature = "sqlite")]
    if crate::sqlite::is_sqlite_dir(src_dir, wiki_id) {
        let data = crate::sqlite::read_sqlite(src_dir, wiki_id)?;
        let input =
            NativeInput::from_tables(wiki_id, &data.tables, data.model_json, data.checksums)?;
        drop(data.tables);
        return write_native_file(&input, out_dir);
    }
    Err(Error::NotFound {
        dir: src_dir.to_owned(),
        wiki_id: wiki_id.to_owned(),
    })
}

/// Writes `input` to `out_dir/{wiki_id}.linkdata` (via a temporary file and a rename).
pub fn write_native_file(input: &NativeInput, out_dir: &Path) -> Result<PathBuf> {
    publish_native_file(
        out_dir,
        &input.wiki_id,
        |w| write_native(input, w),
        |tmp| {
            NativeImage::open(tmp, native::reader::PRIVATE_COPY_MAX)
                .and_then(|image| image.verify())
        },
    )
}
