//! Conversion of a published dataset (`lr_{wiki}_*.sql.gz` + model) into the native file,
//! streamed through disk so that memory stays bounded whatever the wiki's size.
//!
//! The tables are never held in memory. One read of each dump verifies its sha256 while it
//! is decoded and writes compact records to work files: title references (each page id,
//! vector row, redirect end and anchor candidate, keyed by its title), the vectors in row
//! order, the anchors with their candidate counts. External sorts ([`crate::extsort`],
//! within [`ConvertOptions::sort_budget`]) then give the titles in byte order, which numbers
//! them and writes the per-title columns; the candidates and redirect targets get their
//! title numbers by two more sorts on their sequence numbers; the anchors are sorted with
//! their resolved candidates, and their word prefixes sorted and matched against them.
//! The hash indexes are built one at a time, inserting in the same order as the in-memory
//! writer, so the file is byte for byte the one [`crate::native::write_native`] writes for
//! the same tables.
//!
//! Memory: the sort budget (256 MiB by default), or the largest hash index being built
//! (8 bytes per slot: about 11.4 bytes per anchor and anchor word prefix), whichever is
//! larger, plus the model. Disk: the work files (about the size of the uncompressed
//! tables) beside the output, removed at the end, whatever the outcome.

mod anchors;
mod index;
mod read;
mod titles;
mod work;

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::native::writer::{BodyWriter, write_layout};
use crate::native::{DIGEST_AT, HEADER_LEN, Meta, NativeImage, Section, header_area_len};
use crate::published::validate_wiki_id;

use anchors::sort_anchors;
use index::build_indexes;
use read::decode_all;
use titles::number_titles;
use work::{In, WorkDir};

/// Default of [`ConvertOptions::sort_budget`].
pub const DEFAULT_SORT_BUDGET: usize = 256 << 20;

/// The steps of a conversion, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Reading and verifying the published files (progress in compressed bytes).
    Read,
    /// Sorting and numbering the titles (progress in title references).
    Titles,
    /// Sorting the anchors and their word prefixes (progress in anchors).
    Anchors,
    /// Building the hash indexes (progress in keys).
    Index,
    /// Writing the native file (progress in bytes of its sections).
    Write,
    /// Reading the written file back to check its digest (progress in bytes).
    Verify,
}

impl Phase {
    /// A short lowercase name, for progress displays.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Read => "read",
            Phase::Titles => "titles",
            Phase::Anchors => "anchors",
            Phase::Index => "index",
            Phase::Write => "write",
            Phase::Verify => "verify",
        }
    }
}

/// How far a conversion got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The current step.
    pub phase: Phase,
    /// Units of the step done.
    pub done: u64,
    /// Units of the step in all.
    pub total: u64,
}

/// Settings of [`convert_with`].
#[derive(Clone, Copy)]
pub struct ConvertOptions<'a> {
    /// Bytes the sorts may buffer (together) before spilling to disk.
    pub sort_budget: usize,
    /// Called as the conversion advances (often: keep it cheap).
    pub progress: Option<&'a (dyn Fn(Progress) + Sync)>,
    /// When set, the conversion stops at the next check with [`Error::Cancelled`].
    pub cancel: Option<&'a AtomicBool>,
    /// Bytes of disk the work files and the native file may take together (the space
    /// checked free before the conversion): past it, the conversion stops with
    /// [`Error::TooLarge`] and removes its files. `None`: no limit.
    pub work_budget: Option<u64>,
}

impl Default for ConvertOptions<'_> {
    fn default() -> Self {
        Self {
            sort_budget: DEFAULT_SORT_BUDGET,
            progress: None,
            cancel: None,
            work_budget: None,
        }
    }
}

impl std::fmt::Debug for ConvertOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConvertOptions")
            .field("sort_budget", &self.sort_budget)
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel.is_some())
            .field("work_budget", &self.work_budget)
            .finish()
    }
}

/// Progress reporting and cancellation, checked every [`CHECK_EVERY`] records.
pub(crate) struct Ctx<'a> {
    options: ConvertOptions<'a>,
    phase: Phase,
    done: u64,
    total: u64,
    ticks: u32,
}

const CHECK_EVERY: u32 = 4096;

impl Ctx<'_> {
    pub(crate) fn cancelled(&self) -> bool {
        self.options
            .cancel
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    pub(crate) fn start(&mut self, phase: Phase, total: u64) -> Result<()> {
        self.phase = phase;
        self.done = 0;
        self.total = total;
        self.report()
    }

    pub(crate) fn report(&self) -> Result<()> {
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        if let Some(progress) = self.options.progress {
            progress(Progress {
                phase: self.phase,
                done: self.done.min(self.total),
                total: self.total,
            });
        }
        Ok(())
    }

    /// Counts `n` units (records): checks for cancellation, and reports every few thousand
    /// calls.
    pub(crate) fn advance(&mut self, n: u64) -> Result<()> {
        self.done += n;
        self.ticks += 1;
        if self.ticks >= CHECK_EVERY {
            self.ticks = 0;
            return self.report();
        }
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        Ok(())
    }

    /// Counts `n` units of a large step (a block of bytes) and reports.
    pub(crate) fn advance_block(&mut self, n: u64) -> Result<()> {
        self.done += n;
        self.report()
    }
}

/// Converts the published dataset of `wiki_id` in `src_dir` into
/// `out_dir/{wiki_id}.linkdata`, streamed through work files (see the module docs), and
/// returns the file's path. Every source file is verified against its `.checksum`. The
/// file appears by rename, complete and verified, or not at all.
pub fn convert_published(
    src_dir: &Path,
    wiki_id: &str,
    out_dir: &Path,
    options: &ConvertOptions<'_>,
) -> Result<PathBuf> {
    validate_wiki_id(wiki_id)?;
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let mut ctx = Ctx {
        options: *options,
        phase: Phase::Read,
        done: 0,
        total: 0,
        ticks: 0,
    };
    let work = WorkDir::create(out_dir, wiki_id, options.work_budget)?;
    let outcome = run(&mut ctx, src_dir, wiki_id, out_dir, &work);
    let over = work
        .meter()
        .exceeded()
        .then(|| over_budget(work.meter().limit()));
    drop(work);
    match (outcome, over) {
        (Err(_), _) if ctx.cancelled() => Err(Error::Cancelled),
        (Err(_), Some(over)) => Err(over),
        (other, _) => other,
    }
}

/// The error of a conversion whose files would pass `limit` bytes of disk.
fn over_budget(limit: u64) -> Error {
    Error::TooLarge(format!(
        "the conversion's work files and output would pass the {limit} bytes of disk reserved \
         for them (the free space checked before it began); the published files expand far \
         more than a link dataset does, and were refused"
    ))
}

fn run(
    ctx: &mut Ctx<'_>,
    src_dir: &Path,
    wiki_id: &str,
    out_dir: &Path,
    work: &WorkDir,
) -> Result<PathBuf> {
    let mut decoded = decode_all(ctx, src_dir, wiki_id, work)?;
    let mut titles = number_titles(ctx, work, &mut decoded)?;
    let anchors = sort_anchors(ctx, work, &decoded, &mut titles)?;
    let ((title_hash, title_bound), (anchor_hash, anchor_bound)) =
        build_indexes(ctx, work, &titles, &anchors)?;

    let meta = Meta {
        wiki_id: wiki_id.to_owned(),
        titles: titles.count,
        pages: titles.pages,
        redirects: decoded.n_redirects,
        vectors: decoded.n_vector_rows,
        dim: decoded.dim as u64,
        anchors: anchors.count,
        candidates: decoded.n_candidates,
        anchor_prefixes: anchors.n_prefixes,
        checksums: decoded.checksums.clone(),
    };
    let meta = serde_json::to_vec(&meta).map_err(|e| Error::Internal(e.to_string()))?;
    let model = decoded.model.to_bytes();
    let files = |s: Section| -> Option<&Path> {
        Some(match s {
            Section::TitleOffsets => &titles.offsets,
            Section::TitleBytes => &titles.bytes,
            Section::TitleHash => &title_hash,
            Section::PageIds => &titles.page_ids,
            Section::Redirects => &titles.redirects,
            Section::VectorRows => &titles.vector_rows,
            Section::Vectors => &decoded.vectors,
            Section::AnchorOffsets => &anchors.offsets,
            Section::AnchorBytes => &anchors.bytes,
            Section::AnchorHash => &anchor_hash,
            Section::CandidateOffsets => &anchors.candidate_offsets,
            Section::Candidates => &anchors.candidates,
            Section::Meta | Section::Model | Section::ModelJson => return None,
        })
    };
    let mut total = (meta.len() + model.len() + decoded.model_json.len()) as u64;
    for s in Section::ALL {
        if let Some(path) = files(s) {
            total += std::fs::metadata(path)
                .map_err(|e| Error::io(path, e))?
                .len();
        }
    }
    let meter = work.meter();
    if meter.used().saturating_add(total) > meter.limit() {
        return Err(over_budget(meter.limit()));
    }
    ctx.start(Phase::Write, total)?;
    let ctx = std::cell::RefCell::new(ctx);
    crate::native::publish_native_file(
        out_dir,
        wiki_id,
        |w| {
            let mut ctx = ctx.borrow_mut();
            write_layout(w, (title_bound, anchor_bound), |s, body| match files(s) {
                Some(path) => copy_section(&mut ctx, body, path),
                None => {
                    let bytes = match s {
                        Section::Meta => &meta,
                        Section::Model => &model,
                        _ => &decoded.model_json,
                    };
                    body.put(bytes)?;
                    ctx.advance_block(bytes.len() as u64)
                        .map_err(std::io::Error::other)
                }
            })
            .map_err(|e| Error::io(out_dir, e))
        },
        |tmp| verify_streamed(&mut ctx.borrow_mut(), tmp),
    )
}

/// Checks a written native file: its structure (header, section table, metadata: a few
/// pages of a memory map), then its digest, read as a stream so that the check does not
/// make the whole file resident.
fn verify_streamed(ctx: &mut Ctx<'_>, path: &Path) -> Result<()> {
    NativeImage::open(path, 0)?;
    let corrupt = |reason: &str| Error::Corrupt {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    let mut file = In::open(path)?;
    let mut header = vec![0u8; HEADER_LEN];
    file.fill(&mut header, HEADER_LEN)?;
    let sections = u32::from_le_bytes([header[12], header[13], header[14], header[15]]);
    let area = header_area_len(sections as usize);
    let mut rest = Vec::new();
    file.fill(&mut rest, area - HEADER_LEN)?;
    header.extend_from_slice(&rest);
    let stored = header[DIGEST_AT].to_vec();
    header[DIGEST_AT].fill(0);
    let len = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    ctx.start(Phase::Verify, len.saturating_sub(area as u64))?;
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.r.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        ctx.advance_block(n as u64)?;
    }
    sha.update(&header);
    if sha.finalize().as_slice() != stored.as_slice() {
        return Err(corrupt("checksum mismatch after writing"));
    }
    Ok(())
}

fn copy_section<W: Write>(
    ctx: &mut Ctx<'_>,
    body: &mut BodyWriter<W>,
    path: &Path,
) -> std::io::Result<()> {
    let file = File::open(path)?;
    let mut r = BufReader::with_capacity(1 << 16, file);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        body.put(&buf[..n])?;
        ctx.advance_block(n as u64).map_err(std::io::Error::other)?;
    }
}
