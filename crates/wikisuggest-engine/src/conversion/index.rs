//! The two hash indexes, built one at a time in the in-memory writer's insertion order.

use std::path::PathBuf;

use super::anchors::Anchors;
use super::titles::Titles;
use super::work::{In, StringsIn, WorkDir};
use super::{Ctx, Phase};
use crate::error::Result;
use crate::native::hash::{self, Builder};

/// Writes a hash index's slots to a work file and returns its probe bound.
pub(super) fn write_index(work: &WorkDir, name: &str, builder: Builder) -> Result<(PathBuf, u32)> {
    let (table, bound) = builder.finish();
    let mut out = work.create_file(name)?;
    let mut buf = Vec::with_capacity(1 << 16);
    for chunk in table.chunks(1 << 13) {
        buf.clear();
        for slot in chunk {
            buf.extend_from_slice(&slot.to_le_bytes());
        }
        out.put(&buf)?;
    }
    Ok((out.finish()?, bound))
}

/// Builds both hash indexes, one at a time, inserting in the in-memory writer's order.
pub(super) fn build_indexes(
    ctx: &mut Ctx<'_>,
    work: &WorkDir,
    titles: &Titles,
    anchors: &Anchors,
) -> Result<((PathBuf, u32), (PathBuf, u32))> {
    ctx.start(
        Phase::Index,
        titles.count + anchors.count + anchors.n_prefixes,
    )?;
    let mut b = Builder::new(titles.count as usize);
    let mut keys = StringsIn::open(&titles.offsets, &titles.bytes, titles.count)?;
    let mut i = 0u32;
    while let Some(k) = keys.next()? {
        i += 1;
        b.insert(hash::hash(k), i, false);
        ctx.advance(1)?;
    }
    let title_index = write_index(work, "title_hash", b)?;

    let mut b = Builder::new((anchors.count + anchors.n_prefixes) as usize);
    let mut keys = StringsIn::open(&anchors.offsets, &anchors.bytes, anchors.count)?;
    let mut i = 0u32;
    while let Some(k) = keys.next()? {
        i += 1;
        b.insert(hash::hash(k), i, false);
        ctx.advance(1)?;
    }
    let mut prefixes = In::open(&anchors.prefixes)?;
    let mut p = Vec::new();
    for _ in 0..anchors.n_prefixes {
        let len = prefixes.u32()? as usize;
        prefixes.fill(&mut p, len)?;
        let anchor = prefixes.u32()?;
        b.add_prefix(hash::hash(&p), |j| j == anchor);
        ctx.advance(1)?;
    }
    let anchor_index = write_index(work, "anchor_hash", b)?;
    Ok((title_index, anchor_index))
}
