//! Numbering the titles: the title references in byte order give each distinct title its
//! index and the per-title columns; redirect targets and candidates get their title indexes
//! through sorts on their sequence numbers.

use std::path::PathBuf;

use super::read::{
    Decoded, REF_CANDIDATE, REF_PAGE, REF_REDIRECT_FROM, REF_REDIRECT_TO, REF_VECTOR,
};
use super::work::{StringsOut, WorkDir};
use super::{Ctx, Phase};
use crate::error::{Error, Result};
use crate::extsort::{Record, Sorted};
use crate::native::{NO_PAGE, NONE_U32};

/// What numbering the titles produces.
pub(super) struct Titles {
    pub(super) offsets: PathBuf,
    pub(super) bytes: PathBuf,
    pub(super) page_ids: PathBuf,
    pub(super) vector_rows: PathBuf,
    pub(super) redirects: PathBuf,
    pub(super) count: u64,
    pub(super) pages: u64,
    /// Title number of each candidate, in candidate order.
    pub(super) candidates: Sorted,
}

pub(super) fn be64(n: u64) -> [u8; 8] {
    n.to_be_bytes()
}

pub(super) fn u32_at(payload: &[u8], at: usize) -> Result<u32> {
    payload
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or_else(|| Error::Internal("short work record".into()))
}

pub(super) fn u64_at(payload: &[u8], at: usize) -> Result<u64> {
    payload
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| Error::Internal("short work record".into()))
}

/// The per-title state gathered from one title's references.
pub(super) struct Current {
    pub(super) page: i64,
    pub(super) vector_row: u32,
    pub(super) redirect_from: bool,
}

impl Current {
    const EMPTY: Current = Current {
        page: NO_PAGE,
        vector_row: NONE_U32,
        redirect_from: false,
    };
}

pub(super) fn number_titles(ctx: &mut Ctx<'_>, work: &WorkDir, d: &mut Decoded) -> Result<Titles> {
    let budget = ctx.options.sort_budget;
    let io = |e: std::io::Error| Error::io(&work.0, e);
    let refs = std::mem::replace(&mut d.titles, work.sorter("unused", 1));
    ctx.start(Phase::Titles, refs.len())?;
    let mut sorted = refs.finish().map_err(io)?;

    let mut strings = StringsOut::create(work, "titles")?;
    let mut page_ids = work.create_file("page_ids")?;
    let mut vector_rows = work.create_file("vector_rows")?;
    let mut redirect_ends = work.sorter("redirect_ends", budget / 4);
    let mut candidates = work.sorter("candidates", budget / 4);
    let mut pages = 0u64;

    let mut key: Vec<u8> = Vec::new();
    let mut index: Option<u32> = None;
    let mut cur = Current::EMPTY;
    let dup = |table: &'static str, key: &[u8]| Error::DuplicateKey {
        table,
        key: String::from_utf8_lossy(key).into_owned(),
    };
    let mut finish_title = |cur: &Current| -> Result<()> {
        page_ids.put(&cur.page.to_le_bytes())?;
        vector_rows.put(&cur.vector_row.to_le_bytes())
    };
    while let Some(r) = sorted.next().map_err(io)? {
        if index.is_none() || r.key != key.as_slice() {
            if index.is_some() {
                finish_title(&cur)?;
            }
            cur = Current::EMPTY;
            key.clear();
            key.extend_from_slice(r.key);
            index = Some(strings.push(r.key)?);
        }
        let t = index.unwrap_or(NONE_U32);
        let (&kind, value) = r
            .payload
            .split_first()
            .ok_or_else(|| Error::Internal("empty title reference".into()))?;
        let value = u64_at(value, 0)?;
        match kind {
            REF_PAGE => {
                if cur.page != NO_PAGE {
                    return Err(dup("pageids", &key));
                }
                cur.page = value as i64;
                pages += 1;
            }
            REF_VECTOR => {
                if cur.vector_row != NONE_U32 {
                    return Err(dup("w2vfiltered", &key));
                }
                cur.vector_row = value as u32;
            }
            REF_REDIRECT_FROM | REF_REDIRECT_TO => {
                if kind == REF_REDIRECT_FROM {
                    if cur.redirect_from {
                        return Err(dup("redirects", &key));
                    }
                    cur.redirect_from = true;
                }
                let mut p = [0u8; 5];
                p[0] = kind;
                p[1..].copy_from_slice(&t.to_le_bytes());
                redirect_ends.push(&be64(value), &p).map_err(io)?;
            }
            REF_CANDIDATE => candidates
                .push(&be64(value), &t.to_le_bytes())
                .map_err(io)?,
            _ => return Err(Error::Internal("unknown title reference".into())),
        }
        ctx.advance(1)?;
    }
    if index.is_some() {
        finish_title(&cur)?;
    }
    drop(sorted);
    let (offsets, bytes, count) = strings.finish()?;

    // Redirects: pair each redirect's two ends by its number, then order the pairs by
    // source title to write the per-title column.
    let mut ends = redirect_ends.finish().map_err(io)?;
    let mut pairs = work.sorter("redirect_pairs", budget / 2);
    let mut open: Option<(u64, u8, u32)> = None;
    while let Some(r) = ends.next().map_err(io)? {
        let k = u64::from_be_bytes(
            r.key
                .try_into()
                .map_err(|_| Error::Internal("bad redirect key".into()))?,
        );
        let role = *r.payload.first().unwrap_or(&0);
        let t = u32_at(r.payload, 1)?;
        match open.take() {
            None => open = Some((k, role, t)),
            Some((k0, role0, t0)) if k0 == k && role0 != role => {
                let (from, to) = if role0 == REF_REDIRECT_FROM {
                    (t0, t)
                } else {
                    (t, t0)
                };
                pairs
                    .push(&from.to_be_bytes(), &to.to_le_bytes())
                    .map_err(io)?;
            }
            Some(_) => return Err(Error::Internal("unpaired redirect end".into())),
        }
    }
    if open.is_some() {
        return Err(Error::Internal("unpaired redirect end".into()));
    }
    drop(ends);
    let mut pairs = pairs.finish().map_err(io)?;
    let mut redirects = work.create_file("redirects")?;
    let mut next = pairs.next().map_err(io)?.map(pair_of).transpose()?;
    for t in 0..count as u32 {
        let target = match next {
            Some((from, to)) if from == t => {
                next = pairs.next().map_err(io)?.map(pair_of).transpose()?;
                to
            }
            _ => NONE_U32,
        };
        redirects.put(&target.to_le_bytes())?;
    }
    if next.is_some() {
        return Err(Error::Internal("redirect of an unknown title".into()));
    }

    Ok(Titles {
        offsets,
        bytes,
        page_ids: page_ids.finish()?,
        vector_rows: vector_rows.finish()?,
        redirects: redirects.finish()?,
        count,
        pages,
        candidates: candidates.finish().map_err(io)?,
    })
}

pub(super) fn pair_of(r: Record<'_>) -> Result<(u32, u32)> {
    let from = r
        .key
        .try_into()
        .map(u32::from_be_bytes)
        .map_err(|_| Error::Internal("bad redirect pair".into()))?;
    Ok((from, u32_at(r.payload, 0)?))
}
