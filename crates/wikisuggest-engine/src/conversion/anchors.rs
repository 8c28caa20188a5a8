//! Sorting the anchors with their resolved candidates, and their word prefixes, each matched
//! with the anchor equal to it.

use std::path::PathBuf;

use super::read::Decoded;
use super::titles::{Titles, be64, u32_at};
use super::work::{In, StringsIn, StringsOut, WorkDir};
use super::{Ctx, Phase};
use crate::error::{Error, Result};
use crate::native::NONE_U32;

/// What sorting the anchors produces.
pub(super) struct Anchors {
    pub(super) offsets: PathBuf,
    pub(super) bytes: PathBuf,
    pub(super) candidate_offsets: PathBuf,
    pub(super) candidates: PathBuf,
    pub(super) count: u64,
    /// Distinct word prefixes: `[len u32][bytes][anchor index u32 or NONE]`, sorted.
    pub(super) prefixes: PathBuf,
    pub(super) n_prefixes: u64,
}

pub(super) fn sort_anchors(
    ctx: &mut Ctx<'_>,
    work: &WorkDir,
    d: &Decoded,
    titles: &mut Titles,
) -> Result<Anchors> {
    let budget = ctx.options.sort_budget;
    let io = |e: std::io::Error| Error::io(&work.0, e);
    ctx.start(Phase::Anchors, d.n_anchors * 2)?;

    // Each anchor with its candidates resolved to title numbers, keyed by its text.
    let mut sorter = work.sorter("anchors", budget / 2);
    let mut anchors = In::open(&d.anchors)?;
    let mut counts = In::open(&d.counts)?;
    let mut key = Vec::new();
    let mut payload = Vec::new();
    let mut c = 0u64;
    for _ in 0..d.n_anchors {
        let len = anchors.u32()? as usize;
        anchors.fill(&mut key, len)?;
        let n = anchors.u32()?;
        payload.clear();
        for _ in 0..n {
            let r = titles
                .candidates
                .next()
                .map_err(io)?
                .ok_or_else(|| Error::Internal("missing candidate".into()))?;
            if r.key != be64(c) {
                return Err(Error::Internal("candidates out of order".into()));
            }
            payload.extend_from_slice(&u32_at(r.payload, 0)?.to_le_bytes());
            payload.extend_from_slice(&counts.u32()?.to_le_bytes());
            c += 1;
        }
        sorter.push(&key, &payload).map_err(io)?;
        ctx.advance(1)?;
    }
    drop(anchors);
    drop(counts);

    let mut sorted = sorter.finish().map_err(io)?;
    let mut strings = StringsOut::create(work, "anchor_keys")?;
    let mut candidate_offsets = work.create_file("candidate_offsets")?;
    let mut candidates = work.create_file("candidates")?;
    let mut prefixes = work.sorter("prefixes", budget / 2);
    candidate_offsets.put(&0u64.to_le_bytes())?;
    let mut written = 0u64;
    let mut previous: Option<Vec<u8>> = None;
    while let Some(r) = sorted.next().map_err(io)? {
        if previous.as_deref() == Some(r.key) {
            return Err(Error::DuplicateKey {
                table: "anchors",
                key: String::from_utf8_lossy(r.key).into_owned(),
            });
        }
        strings.push(r.key)?;
        // The payload is already in the stored form: (title u32, count u32) pairs.
        candidates.put(r.payload)?;
        written += (r.payload.len() / 8) as u64;
        candidate_offsets.put(&written.to_le_bytes())?;
        for (i, _) in r.key.iter().enumerate().filter(|&(_, &b)| b == b' ') {
            prefixes.push(&r.key[..i], &[]).map_err(io)?;
        }
        match &mut previous {
            Some(p) => {
                p.clear();
                p.extend_from_slice(r.key);
            }
            None => previous = Some(r.key.to_vec()),
        }
        ctx.advance(1)?;
    }
    drop(sorted);
    let (offsets, bytes, count) = strings.finish()?;

    // Distinct prefixes in byte order, each matched with the anchor equal to it (both
    // streams are sorted, so one pass over the anchors finds them).
    let mut sorted = prefixes.finish().map_err(io)?;
    let mut keys = StringsIn::open(&offsets, &bytes, count)?;
    let mut out = work.create_file("prefixes")?;
    let mut n_prefixes = 0u64;
    let mut last: Option<Vec<u8>> = None;
    let mut anchor: Option<(u32, Vec<u8>)> = keys.next()?.map(|k| (0, k.to_vec()));
    while let Some(r) = sorted.next().map_err(io)? {
        if last.as_deref() == Some(r.key) {
            continue;
        }
        while let Some((i, a)) = &anchor {
            if a.as_slice() >= r.key {
                break;
            }
            let i = *i + 1;
            anchor = keys.next()?.map(|k| (i, k.to_vec()));
        }
        let found = match &anchor {
            Some((i, a)) if a.as_slice() == r.key => *i,
            _ => NONE_U32,
        };
        out.put(&(r.key.len() as u32).to_le_bytes())?;
        out.put(r.key)?;
        out.put(&found.to_le_bytes())?;
        n_prefixes += 1;
        last = Some(r.key.to_vec());
    }
    Ok(Anchors {
        offsets,
        bytes,
        candidate_offsets: candidate_offsets.finish()?,
        candidates: candidates.finish()?,
        count,
        prefixes: out.finish()?,
        n_prefixes,
    })
}
