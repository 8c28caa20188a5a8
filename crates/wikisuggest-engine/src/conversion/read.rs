//! The read pass: each published dump decoded and verified in one read, its rows turned
//! into title references (sorted later) and sequential work files.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::Ctx;
use super::work::WorkDir;
use crate::checksum::{self, checksum_path, to_hex};
use crate::error::{Error, Result};
use crate::extsort::Sorter;
use crate::native::{NO_PAGE, NONE_U32};
use crate::published::{dump_path, model_path};
use crate::sqldump;
use crate::tables::{DatasetChecksums, Row, TableKind, decode_row, dimension_mismatch};
use crate::xgboost::LinkModel;

use super::Phase;

/// The published file being read: hashed and counted as the decoder pulls it.
struct Hashed<'c, 'o> {
    pub(super) file: File,
    pub(super) sha: Sha256,
    pub(super) ctx: &'c mut Ctx<'o>,
}

impl Read for Hashed<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.sha.update(&buf[..n]);
        // The decoder reads in 64 KiB steps: a report per read is cheap.
        self.ctx
            .advance_block(n as u64)
            .map_err(std::io::Error::other)?;
        Ok(n)
    }
}

// Title reference kinds (first byte of a title record's payload).
pub(super) const REF_PAGE: u8 = 0;
pub(super) const REF_VECTOR: u8 = 1;
pub(super) const REF_REDIRECT_FROM: u8 = 2;
pub(super) const REF_REDIRECT_TO: u8 = 3;
pub(super) const REF_CANDIDATE: u8 = 4;

pub(super) fn title_ref(kind: u8, value: u64) -> [u8; 9] {
    let mut p = [0u8; 9];
    p[0] = kind;
    p[1..].copy_from_slice(&value.to_le_bytes());
    p
}

/// What the read pass leaves behind.
pub(super) struct Decoded {
    pub(super) titles: Sorter,
    pub(super) anchors: PathBuf,
    pub(super) counts: PathBuf,
    pub(super) vectors: PathBuf,
    pub(super) n_anchors: u64,
    pub(super) n_candidates: u64,
    pub(super) n_redirects: u64,
    pub(super) n_vector_rows: u64,
    pub(super) dim: usize,
    pub(super) checksums: DatasetChecksums,
    pub(super) model: LinkModel,
    pub(super) model_json: Vec<u8>,
}

/// Reads the rows of one dump, verifying its checksum on the way: the mismatch is reported
/// rather than whatever a corrupt file fails to parse as.
pub(super) fn read_table(
    ctx: &mut Ctx<'_>,
    dir: &Path,
    wiki_id: &str,
    kind: TableKind,
    mut on_row: impl FnMut(String, Row) -> Result<()>,
) -> Result<String> {
    let path = dump_path(dir, wiki_id, kind);
    let expected = checksum::read_checksum_file(&checksum_path(&path))?;
    let file = File::open(&path).map_err(|e| Error::io(&path, e))?;
    let mut source = Hashed {
        file,
        sha: Sha256::new(),
        ctx,
    };
    let table = format!("lr_{wiki_id}_{}", kind.name());
    let parsed = sqldump::read_dump_from(&mut source, &path, &table, |row| {
        let decoded = decode_row(kind, &row.lookup, &row.value)?;
        on_row(row.lookup, decoded)
    });
    if source.ctx.cancelled() {
        return Err(Error::Cancelled);
    }
    // Bytes after the last gzip member (or after a parse error) are part of the file too.
    let rest = std::io::copy(&mut source, &mut std::io::sink());
    if source.ctx.cancelled() {
        return Err(Error::Cancelled);
    }
    let actual = to_hex(&source.sha.finalize());
    if actual != expected {
        return Err(Error::ChecksumMismatch {
            path,
            expected,
            actual,
        });
    }
    parsed?;
    rest.map_err(|e| Error::io(&path, e))?;
    Ok(actual)
}

pub(super) fn decode_all(
    ctx: &mut Ctx<'_>,
    dir: &Path,
    wiki_id: &str,
    work: &WorkDir,
) -> Result<Decoded> {
    let budget = ctx.options.sort_budget;
    let mut total = 0;
    for kind in TableKind::ALL {
        let path = dump_path(dir, wiki_id, kind);
        total += std::fs::metadata(&path)
            .map_err(|e| Error::io(&path, e))?
            .len();
    }
    ctx.start(Phase::Read, total)?;

    let mut checksums = DatasetChecksums::default();
    let model_file = model_path(dir, wiki_id);
    checksums.model = Some(checksum::verify_file(&model_file)?);
    let model_json = std::fs::read(&model_file).map_err(|e| Error::io(&model_file, e))?;
    let model = LinkModel::from_json(&model_json)?;

    let mut titles = work.sorter("titles", budget / 2);
    let sorted = |e: std::io::Error| Error::io(&work.0, e);

    // Anchors: `[key len u32][key][candidates u32]` in file order, one count per candidate.
    let mut anchors = work.create_file("anchors.in")?;
    let mut counts = work.create_file("counts.in")?;
    let mut n_anchors = 0u64;
    let mut n_candidates = 0u64;
    checksums.anchors = Some(read_table(
        ctx,
        dir,
        wiki_id,
        TableKind::Anchors,
        |key, row| {
            let Row::Anchor(cands) = row else {
                return Err(Error::Internal("anchor row of another kind".into()));
            };
            let (Ok(key_len), Ok(n)) = (u32::try_from(key.len()), u32::try_from(cands.len()))
            else {
                return Err(Error::TooLarge("anchor row".into()));
            };
            anchors.put(&key_len.to_le_bytes())?;
            anchors.put(key.as_bytes())?;
            anchors.put(&n.to_le_bytes())?;
            for (title, count) in cands {
                counts.put(&count.to_le_bytes())?;
                titles
                    .push(title.as_bytes(), &title_ref(REF_CANDIDATE, n_candidates))
                    .map_err(sorted)?;
                n_candidates += 1;
            }
            n_anchors += 1;
            Ok(())
        },
    )?);

    let mut n_redirects = 0u64;
    checksums.redirects = Some(read_table(
        ctx,
        dir,
        wiki_id,
        TableKind::Redirects,
        |from, row| {
            let Row::Redirect(to) = row else {
                return Err(Error::Internal("redirect row of another kind".into()));
            };
            titles
                .push(from.as_bytes(), &title_ref(REF_REDIRECT_FROM, n_redirects))
                .map_err(sorted)?;
            titles
                .push(to.as_bytes(), &title_ref(REF_REDIRECT_TO, n_redirects))
                .map_err(sorted)?;
            n_redirects += 1;
            Ok(())
        },
    )?);

    checksums.pageids = Some(read_table(
        ctx,
        dir,
        wiki_id,
        TableKind::PageIds,
        |title, row| {
            let Row::PageId(id) = row else {
                return Err(Error::Internal("page id row of another kind".into()));
            };
            if id == NO_PAGE {
                return Err(Error::BadRow {
                    table: "pageids",
                    key: title,
                    reason: "page id i64::MIN is reserved".into(),
                });
            }
            titles
                .push(title.as_bytes(), &title_ref(REF_PAGE, id as u64))
                .map_err(sorted)
        },
    )?);

    let mut vectors = work.create_file("vectors")?;
    let mut n_vector_rows = 0u64;
    let mut dim: Option<usize> = None;
    let mut buf = Vec::new();
    checksums.w2vfiltered = Some(read_table(
        ctx,
        dir,
        wiki_id,
        TableKind::Vectors,
        |title, row| {
            let Row::Vector(v) = row else {
                return Err(Error::Internal("vector row of another kind".into()));
            };
            match dim {
                None => dim = Some(v.len()),
                Some(d) if d != v.len() => return Err(dimension_mismatch(&title, v.len(), d)),
                Some(_) => {}
            }
            if n_vector_rows >= u64::from(NONE_U32) {
                return Err(Error::TooLarge("vector rows".into()));
            }
            buf.clear();
            for x in &v {
                buf.extend_from_slice(&x.to_le_bytes());
            }
            vectors.put(&buf)?;
            titles
                .push(title.as_bytes(), &title_ref(REF_VECTOR, n_vector_rows))
                .map_err(sorted)?;
            n_vector_rows += 1;
            Ok(())
        },
    )?);

    Ok(Decoded {
        titles,
        anchors: anchors.finish()?,
        counts: counts.finish()?,
        vectors: vectors.finish()?,
        n_anchors,
        n_candidates,
        n_redirects,
        n_vector_rows,
        dim: dim.unwrap_or(0),
        checksums,
        model,
        model_json,
    })
}
