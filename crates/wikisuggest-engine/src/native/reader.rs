//! Reading the native format from a memory map or an in-memory image.

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{ENTRY_LEN, HEADER_LEN, MAGIC, Meta, NO_PAGE, NONE_U32, Section, VERSION, hash};
use crate::error::{Error, Result};
use crate::xgboost::LinkModel;

/// The bytes of an image.
enum Storage {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped(m) => m,
            Storage::Owned(v) => v,
        }
    }
}

/// A validated native image. All accessors are bounds-checked.
pub(crate) struct NativeImage {
    storage: Storage,
    path: PathBuf,
    pub(crate) meta: Meta,
    /// Byte range of each section, indexed by `Section as usize - 1`.
    ranges: Vec<Range<usize>>,
    n_titles: usize,
    n_anchors: usize,
    dim: usize,
    /// Where the checksummed body starts (end of the aligned header area).
    body_start: usize,
}

impl std::fmt::Debug for NativeImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeImage")
            .field("path", &self.path)
            .field("meta", &self.meta)
            .finish_non_exhaustive()
    }
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_le_bytes(a))
}

impl NativeImage {
    /// Memory-maps and validates a native file.
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        // SAFETY: the map is read-only and the format is immutable: files are written once
        // by the converter and never modified in place. If another process truncates or
        // rewrites the file while it is mapped, reads may fault or see the new bytes;
        // that is the documented contract of this format (replace files by rename).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        Self::new(Storage::Mapped(map), path.to_owned())
    }

    /// Validates an in-memory image.
    pub(crate) fn from_bytes(bytes: Vec<u8>) -> Result<Self> {
        Self::new(Storage::Owned(bytes), PathBuf::from("<memory>"))
    }

    fn corrupt(&self, reason: impl Into<String>) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    fn new(storage: Storage, path: PathBuf) -> Result<Self> {
        let corrupt = |reason: String| Error::Corrupt {
            path: path.clone(),
            reason,
        };
        let b = storage.bytes();
        if b.len() < HEADER_LEN {
            return Err(corrupt(format!("file too short ({} bytes)", b.len())));
        }
        if &b[..8] != MAGIC {
            return Err(corrupt("not a native link dataset (bad magic)".into()));
        }
        let version = le_u32(b, 8).unwrap_or(0);
        if version != VERSION {
            return Err(corrupt(format!(
                "format version {version}, this build reads {VERSION}"
            )));
        }
        let count = le_u32(b, 12).unwrap_or(0) as usize;
        let file_len = le_u64(b, 16).unwrap_or(0);
        if file_len != b.len() as u64 {
            return Err(corrupt(format!(
                "truncated or extended: header says {file_len} bytes, file has {}",
                b.len()
            )));
        }
        let table_end = count
            .checked_mul(ENTRY_LEN)
            .and_then(|t| t.checked_add(HEADER_LEN))
            .filter(|&e| e <= b.len())
            .ok_or_else(|| corrupt("section table out of bounds".into()))?;
        let body_start = table_end.div_ceil(super::ALIGN) * super::ALIGN;

        let mut ranges: Vec<Option<Range<usize>>> = vec![None; Section::ALL.len()];
        for i in 0..count {
            let at = HEADER_LEN + i * ENTRY_LEN;
            let (kind, offset, len) = (
                le_u32(b, at).unwrap_or(0),
                le_u64(b, at + 8).unwrap_or(u64::MAX),
                le_u64(b, at + 16).unwrap_or(u64::MAX),
            );
            let end = offset.checked_add(len).filter(|&e| e <= file_len);
            let (Some(end), true) = (end, offset >= body_start as u64) else {
                return Err(corrupt(format!("section {kind} out of bounds")));
            };
            // Unknown kinds are skipped (room for additive extensions).
            let Some(slot) = (kind as usize)
                .checked_sub(1)
                .and_then(|k| ranges.get_mut(k))
            else {
                continue;
            };
            if slot.is_some() {
                return Err(corrupt(format!("section {kind} listed twice")));
            }
            *slot = Some(offset as usize..end as usize);
        }
        let ranges = Section::ALL
            .iter()
            .zip(ranges)
            .map(|(s, r)| r.ok_or_else(|| corrupt(format!("missing section {s:?}"))))
            .collect::<Result<Vec<_>>>()?;

        let meta: Meta = serde_json::from_slice(&b[ranges[Section::Meta as usize - 1].clone()])
            .map_err(|e| corrupt(format!("metadata: {e}")))?;
        let too_big = || corrupt("counts exceed the addressable size".into());
        let n_titles = usize::try_from(meta.titles).map_err(|_| too_big())?;
        let n_anchors = usize::try_from(meta.anchors).map_err(|_| too_big())?;
        let dim = usize::try_from(meta.dim).map_err(|_| too_big())?;
        let n_vectors = usize::try_from(meta.vectors).map_err(|_| too_big())?;
        let n_cands = usize::try_from(meta.candidates).map_err(|_| too_big())?;
        if n_titles >= NONE_U32 as usize || n_anchors >= NONE_U32 as usize {
            return Err(too_big());
        }
        let vector_bytes = n_vectors
            .checked_mul(dim)
            .and_then(|x| x.checked_mul(4))
            .ok_or_else(too_big)?;
        let cand_bytes = n_cands.checked_mul(8).ok_or_else(too_big)?;
        let expected: [(Section, Option<usize>); 10] = [
            (Section::TitleOffsets, Some((n_titles + 1) * 8)),
            (Section::PageIds, Some(n_titles * 8)),
            (Section::Redirects, Some(n_titles * 4)),
            (Section::VectorRows, Some(n_titles * 4)),
            (Section::Vectors, Some(vector_bytes)),
            (Section::AnchorOffsets, Some((n_anchors + 1) * 8)),
            (Section::CandidateOffsets, Some((n_anchors + 1) * 8)),
            (Section::Candidates, Some(cand_bytes)),
            (Section::TitleHash, Some(hash::slot_count(n_titles) * 8)),
            (Section::AnchorHash, Some(hash::slot_count(n_anchors) * 8)),
        ];
        for (section, size) in expected {
            let got = ranges[section as usize - 1].len();
            if Some(got) != size {
                return Err(corrupt(format!(
                    "section {section:?} has {got} bytes, expected {size:?}"
                )));
            }
        }
        Ok(Self {
            storage,
            path,
            meta,
            ranges,
            n_titles,
            n_anchors,
            dim,
            body_start,
        })
    }

    fn section(&self, s: Section) -> &[u8] {
        // Ranges were checked against the buffer length when opening.
        self.storage
            .bytes()
            .get(self.ranges[s as usize - 1].clone())
            .unwrap_or_default()
    }

    /// The compiled model of this image.
    pub(crate) fn model(&self) -> Result<LinkModel> {
        LinkModel::from_bytes(self.section(Section::Model))
            .map_err(|e| self.corrupt(format!("model section: {e}")))
    }

    /// The original model JSON.
    pub(crate) fn model_json(&self) -> &[u8] {
        self.section(Section::ModelJson)
    }

    /// Recomputes the body checksum (reads the whole file).
    pub(crate) fn verify(&self) -> Result<()> {
        let b = self.storage.bytes();
        let body = b
            .get(self.body_start..)
            .ok_or_else(|| self.corrupt("header area beyond the end of the file"))?;
        let digest = Sha256::digest(body);
        if digest.as_slice() != &b[24..56] {
            return Err(self.corrupt("body checksum mismatch"));
        }
        Ok(())
    }

    fn u64_at(&self, s: Section, i: usize) -> Result<u64> {
        le_u64(self.section(s), i.saturating_mul(8))
            .ok_or_else(|| self.corrupt(format!("{s:?} index {i} out of range")))
    }

    fn u32_at(&self, s: Section, i: usize) -> Result<u32> {
        le_u32(self.section(s), i.saturating_mul(4))
            .ok_or_else(|| self.corrupt(format!("{s:?} index {i} out of range")))
    }

    fn string(&self, offsets: Section, bytes: Section, i: usize) -> Result<&[u8]> {
        let (a, b) = (self.u64_at(offsets, i)?, self.u64_at(offsets, i + 1)?);
        self.section(bytes)
            .get(a as usize..b as usize)
            .filter(|_| a <= b)
            .ok_or_else(|| self.corrupt(format!("{bytes:?} string {i} out of range")))
    }

    fn find(
        &self,
        key: &str,
        hash_s: Section,
        offsets: Section,
        bytes: Section,
    ) -> Result<Option<u32>> {
        self.find_hashed(key, hash::hash(key.as_bytes()), hash_s, offsets, bytes)
    }

    fn find_hashed(
        &self,
        key: &str,
        h: u64,
        hash_s: Section,
        offsets: Section,
        bytes: Section,
    ) -> Result<Option<u32>> {
        let table = self.section(hash_s);
        let slots = table.len() / 8;
        if slots == 0 {
            return Ok(None);
        }
        let tag = hash::tag(h);
        let mut s = hash::start_slot(h, slots);
        for _ in 0..slots {
            let e = le_u64(table, s * 8).unwrap_or(0);
            if e == 0 {
                return Ok(None);
            }
            if let (t, Some(i)) = hash::split_entry(e) {
                if t == tag && self.string(offsets, bytes, i as usize)? == key.as_bytes() {
                    return Ok(Some(i));
                }
            }
            s += 1;
            if s == slots {
                s = 0;
            }
        }
        Ok(None)
    }

    /// Number of titles.
    pub(crate) fn n_titles(&self) -> usize {
        self.n_titles
    }

    /// Number of anchors.
    pub(crate) fn n_anchors(&self) -> usize {
        self.n_anchors
    }

    /// Vector dimension.
    pub(crate) fn dim(&self) -> usize {
        self.dim
    }

    /// Index of a title.
    pub(crate) fn find_title(&self, title: &str) -> Result<Option<u32>> {
        self.find(
            title,
            Section::TitleHash,
            Section::TitleOffsets,
            Section::TitleBytes,
        )
    }

    /// Index of an anchor.
    pub(crate) fn find_anchor(&self, anchor: &str) -> Result<Option<u32>> {
        self.find(
            anchor,
            Section::AnchorHash,
            Section::AnchorOffsets,
            Section::AnchorBytes,
        )
    }

    /// [`Self::find_anchor`] for the prefixes `text[..end]`, `end` in `ends` (ascending),
    /// calling `found` in order. Each prefix's hash continues from the shorter one's.
    pub(crate) fn find_anchor_prefixes(
        &self,
        text: &str,
        ends: &[usize],
        mut found: impl FnMut(Option<u32>),
    ) -> Result<()> {
        let mut hasher = hash::Hasher::new();
        let mut hashed = 0;
        for &end in ends {
            let Some(key) = text.get(..end).filter(|_| end >= hashed) else {
                found(None);
                continue;
            };
            hasher.write(key.as_bytes().get(hashed..).unwrap_or_default());
            hashed = end;
            found(self.find_hashed(
                key,
                hasher.finish(),
                Section::AnchorHash,
                Section::AnchorOffsets,
                Section::AnchorBytes,
            )?);
        }
        Ok(())
    }

    /// Title `i` as text.
    pub(crate) fn title(&self, i: u32) -> Result<&str> {
        let raw = self.string(Section::TitleOffsets, Section::TitleBytes, i as usize)?;
        std::str::from_utf8(raw).map_err(|_| self.corrupt(format!("title {i} is not UTF-8")))
    }

    /// Anchor `i` as text.
    pub(crate) fn anchor(&self, i: u32) -> Result<&str> {
        let raw = self.string(Section::AnchorOffsets, Section::AnchorBytes, i as usize)?;
        std::str::from_utf8(raw).map_err(|_| self.corrupt(format!("anchor {i} is not UTF-8")))
    }

    /// Page id of title `i`, if it is an article.
    pub(crate) fn page_id(&self, i: u32) -> Result<Option<i64>> {
        let v = self.u64_at(Section::PageIds, i as usize)? as i64;
        Ok((v != NO_PAGE).then_some(v))
    }

    /// Redirect target of title `i`.
    pub(crate) fn redirect(&self, i: u32) -> Result<Option<u32>> {
        let t = self.u32_at(Section::Redirects, i as usize)?;
        if t == NONE_U32 {
            return Ok(None);
        }
        if t as usize >= self.n_titles {
            return Err(self.corrupt(format!("redirect target {t} out of range")));
        }
        Ok(Some(t))
    }

    /// Raw little-endian float32 bytes of title `i`'s vector.
    pub(crate) fn vector_bytes(&self, i: u32) -> Result<Option<&[u8]>> {
        let row = self.u32_at(Section::VectorRows, i as usize)?;
        if row == NONE_U32 {
            return Ok(None);
        }
        let width = self.dim * 4;
        let start = (row as usize).saturating_mul(width);
        self.section(Section::Vectors)
            .get(start..start.saturating_add(width))
            .map(Some)
            .ok_or_else(|| self.corrupt(format!("vector row {row} out of range")))
    }

    /// The `(title index, count)` pairs of anchor `i`, in stored order.
    pub(crate) fn candidates(
        &self,
        i: u32,
    ) -> Result<impl ExactSizeIterator<Item = (u32, u32)> + '_> {
        let (a, b) = (
            self.u64_at(Section::CandidateOffsets, i as usize)?,
            self.u64_at(Section::CandidateOffsets, i as usize + 1)?,
        );
        let raw = a
            .checked_mul(8)
            .zip(b.checked_mul(8))
            .filter(|_| a <= b)
            .and_then(|(x, y)| {
                self.section(Section::Candidates)
                    .get(x as usize..y as usize)
            })
            .ok_or_else(|| self.corrupt(format!("candidates of anchor {i} out of range")))?;
        Ok(raw.chunks_exact(8).map(|c| {
            (
                u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
            )
        }))
    }
}
