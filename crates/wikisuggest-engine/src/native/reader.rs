//! Reading the native format from a memory map or an in-memory image.

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{
    ALIGN, DIGEST_AT, ENTRY_LEN, HEADER_LEN, MAGIC, Meta, NO_PAGE, NONE_U32, Section, VERSION, hash,
};
use crate::error::{Error, Result};
use crate::xgboost::LinkModel;

/// The bytes of an image.
enum Storage {
    /// A shared map of `file`, whose length and modification time were `identity` when
    /// mapped: a change to either means the file was changed in place.
    Mapped {
        map: memmap2::Mmap,
        file: File,
        identity: (u64, Option<std::time::SystemTime>),
    },
    Owned(Vec<u8>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped { map, .. } => map,
            Storage::Owned(v) => v,
        }
    }
}

/// Length and modification time of an open file.
fn identity(file: &File) -> std::io::Result<(u64, Option<std::time::SystemTime>)> {
    let m = file.metadata()?;
    Ok((m.len(), m.modified().ok()))
}

/// Files up to this size are read into private memory instead of being mapped: nothing
/// another process does to the file afterwards can reach them.
pub(crate) const PRIVATE_COPY_MAX: u64 = 64 << 20;

/// What a hash-index look-up found.
#[derive(Debug, Clone, Copy)]
struct Found {
    /// Index of the key in its string table.
    index: Option<u32>,
    /// Whether the key is a word prefix of some anchor (anchor index only).
    prefix: bool,
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
    /// Where the body starts (end of the aligned header area).
    body_start: usize,
    /// Longest displacement in the title and anchor hash indexes.
    probe_bounds: [u32; 2],
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
    /// Validates a native file: read into private memory if it has at most `copy_max`
    /// bytes, memory-mapped otherwise.
    pub(crate) fn open(path: &Path, copy_max: u64) -> Result<Self> {
        use std::io::Read;
        let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
        let before = identity(&file).map_err(|e| Error::io(path, e))?;
        if before.0 <= copy_max {
            let mut bytes = Vec::with_capacity(before.0 as usize);
            file.read_to_end(&mut bytes)
                .map_err(|e| Error::io(path, e))?;
            return Self::new(Storage::Owned(bytes), path.to_owned());
        }
        // SAFETY: the map is read-only and files are written once by the converter, then
        // replaced by rename (the map keeps the old inode alive). A change in place is
        // detected by `check_unchanged` before each use; between that check and the
        // reads, a truncation by another process can still fault (documented).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        let identity = identity(&file).map_err(|e| Error::io(path, e))?;
        if identity != before || identity.0 != map.len() as u64 {
            return Err(Error::Corrupt {
                path: path.to_owned(),
                reason: "changed while being opened".into(),
            });
        }
        Self::new(
            Storage::Mapped {
                map,
                file,
                identity,
            },
            path.to_owned(),
        )
    }

    /// Fails if a mapped file was changed in place (truncated, extended or rewritten)
    /// since it was opened. Replacing it by rename leaves the mapped file unchanged.
    pub(crate) fn check_unchanged(&self) -> Result<()> {
        let Storage::Mapped { file, identity, .. } = &self.storage else {
            return Ok(());
        };
        match self::identity(file) {
            Ok(now) if now == *identity => Ok(()),
            Ok(_) => Err(self.corrupt(
                "changed in place since it was opened (replace dataset files by rename); \
                 open it again",
            )),
            Err(e) => Err(Error::io(&self.path, e)),
        }
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
        if version < VERSION {
            return Err(corrupt(format!(
                "format version {version} is no longer read (this build reads {VERSION}): \
                 convert the dataset again"
            )));
        }
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
        if count != Section::ALL.len() {
            return Err(corrupt(format!(
                "{count} sections listed, the format has {}",
                Section::ALL.len()
            )));
        }
        let table_end = HEADER_LEN + count * ENTRY_LEN;
        let body_start = table_end.div_ceil(ALIGN) * ALIGN;
        if b.len() < body_start || b[table_end..body_start].iter().any(|&x| x != 0) {
            return Err(corrupt(
                "section table out of bounds or padded with data".into(),
            ));
        }

        // The layout is canonical: sections in `Section::ALL` order, each on the first
        // aligned offset after the previous one, the last ending the file. Any other
        // offset, kind or length in the table is damage, found here without reading data.
        let mut ranges = Vec::with_capacity(count);
        let mut next = body_start as u64;
        for (i, section) in Section::ALL.iter().enumerate() {
            let at = HEADER_LEN + i * ENTRY_LEN;
            let (kind, reserved, offset, len) = (
                le_u32(b, at).unwrap_or(0),
                le_u32(b, at + 4).unwrap_or(u32::MAX),
                le_u64(b, at + 8).unwrap_or(u64::MAX),
                le_u64(b, at + 16).unwrap_or(u64::MAX),
            );
            if kind != *section as u32 || reserved != 0 {
                return Err(corrupt(format!(
                    "section table entry {i} is not {section:?}"
                )));
            }
            let aligned = next.div_ceil(ALIGN as u64) * ALIGN as u64;
            let end = offset.checked_add(len).filter(|&e| e <= file_len);
            let Some(end) = end.filter(|_| offset == aligned) else {
                return Err(corrupt(format!("section {section:?} out of place")));
            };
            ranges.push(offset as usize..end as usize);
            next = end;
        }
        if next != file_len {
            return Err(corrupt("data after the last section".into()));
        }

        let meta: Meta = serde_json::from_slice(&b[ranges[Section::Meta as usize - 1].clone()])
            .map_err(|e| corrupt(format!("metadata: {e}")))?;
        let too_big = || corrupt("counts exceed the addressable size".into());
        let n_titles = usize::try_from(meta.titles).map_err(|_| too_big())?;
        let n_anchors = usize::try_from(meta.anchors).map_err(|_| too_big())?;
        let dim = usize::try_from(meta.dim).map_err(|_| too_big())?;
        let n_vectors = usize::try_from(meta.vectors).map_err(|_| too_big())?;
        let n_cands = usize::try_from(meta.candidates).map_err(|_| too_big())?;
        // Each distinct word prefix ends before a distinct space of the anchor bytes, so
        // there are no more of them than anchor bytes: this also bounds the index size.
        let n_prefixes = usize::try_from(meta.anchor_prefixes)
            .ok()
            .filter(|&p| p <= ranges[Section::AnchorBytes as usize - 1].len())
            .ok_or_else(|| corrupt("more anchor prefixes than anchor bytes".into()))?;
        let anchor_keys = n_anchors + n_prefixes;
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
            (Section::AnchorHash, Some(hash::slot_count(anchor_keys) * 8)),
        ];
        for (section, size) in expected {
            let got = ranges[section as usize - 1].len();
            if Some(got) != size {
                return Err(corrupt(format!(
                    "section {section:?} has {got} bytes, expected {size:?}"
                )));
            }
        }
        // Each offset column starts at 0 and ends at its data's length (O(1) checks).
        let column_ends = [
            (Section::TitleOffsets, n_titles, Section::TitleBytes, 1),
            (Section::AnchorOffsets, n_anchors, Section::AnchorBytes, 1),
            (Section::CandidateOffsets, n_anchors, Section::Candidates, 8),
        ];
        for (offsets, n, data, width) in column_ends {
            let col = &b[ranges[offsets as usize - 1].clone()];
            let data_len = (ranges[data as usize - 1].len() / width) as u64;
            if le_u64(col, 0) != Some(0) || le_u64(col, n * 8) != Some(data_len) {
                return Err(corrupt(format!("{offsets:?} do not span {data:?}")));
            }
        }
        let probe_bounds = [
            le_u32(b, 56).unwrap_or(u32::MAX),
            le_u32(b, 60).unwrap_or(u32::MAX),
        ];
        for (bound, n) in probe_bounds.iter().zip([n_titles, anchor_keys]) {
            if *bound > hash::MAX_PROBE_BOUND || *bound as usize > hash::slot_count(n) {
                return Err(corrupt(format!("hash probe bound {bound} out of range")));
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
            probe_bounds,
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

    /// Recomputes the checksum over the whole file (reads everything once).
    pub(crate) fn verify(&self) -> Result<()> {
        let b = self.storage.bytes();
        let (Some(body), Some(header)) = (b.get(self.body_start..), b.get(..self.body_start))
        else {
            return Err(self.corrupt("header area beyond the end of the file"));
        };
        let mut header = header.to_vec();
        let stored = header[DIGEST_AT].to_vec();
        header[DIGEST_AT].fill(0);
        let mut sha = Sha256::new();
        sha.update(body);
        sha.update(&header);
        if sha.finalize().as_slice() != stored.as_slice() {
            return Err(self.corrupt("checksum mismatch"));
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
        let h = hash::hash(key.as_bytes());
        Ok(self.find_hashed(key, h, hash_s, offsets, bytes)?.index)
    }

    /// The probe bound of the index `hash_s`.
    fn probe_bound(&self, hash_s: Section) -> usize {
        let i = usize::from(hash_s == Section::AnchorHash);
        self.probe_bounds[i] as usize
    }

    fn find_hashed(
        &self,
        key: &str,
        h: u64,
        hash_s: Section,
        offsets: Section,
        bytes: Section,
    ) -> Result<Found> {
        let mut found = Found {
            index: None,
            prefix: false,
        };
        let table = self.section(hash_s);
        let slots = table.len() / 8;
        if slots == 0 {
            return Ok(found);
        }
        let tag = hash::tag(h);
        let mut s = hash::start_slot(h, slots);
        // Every key sits within the bound of its start slot: past it, the key is absent.
        for _ in 0..=self.probe_bound(hash_s).min(slots - 1) {
            let Some(slot) = hash::split_entry(le_u64(table, s * 8).unwrap_or(0)) else {
                break;
            };
            if slot.tag == tag {
                match slot.index() {
                    Some(i) if self.string(offsets, bytes, i as usize)? == key.as_bytes() => {
                        found.index = Some(i);
                        found.prefix |= slot.prefix;
                        break;
                    }
                    // A prefix-only entry holds no key bytes: the tag decides. An anchor
                    // with the same key may still follow in the chain.
                    None => found.prefix |= slot.prefix,
                    Some(_) => {}
                }
            }
            s += 1;
            if s == slots {
                s = 0;
            }
        }
        Ok(found)
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
    /// calling `found` in order. Each prefix's hash continues from the shorter one's, and
    /// once a prefix followed by a space is no word prefix of any anchor, the longer ones
    /// cannot be anchors: they answer `None` without a probe.
    pub(crate) fn find_anchor_prefixes(
        &self,
        text: &str,
        ends: &[usize],
        mut found: impl FnMut(Option<u32>),
    ) -> Result<()> {
        let mut hasher = hash::Hasher::new();
        let mut hashed = 0;
        let mut rest = ends.iter();
        while let Some(&end) = rest.next() {
            let Some(key) = text.get(..end).filter(|_| end >= hashed) else {
                found(None);
                continue;
            };
            hasher.write(key.as_bytes().get(hashed..).unwrap_or_default());
            hashed = end;
            let hit = self.find_hashed(
                key,
                hasher.finish(),
                Section::AnchorHash,
                Section::AnchorOffsets,
                Section::AnchorBytes,
            )?;
            found(hit.index);
            if !hit.prefix && text.as_bytes().get(end) == Some(&b' ') {
                rest.by_ref().for_each(|_| found(None));
            }
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

#[cfg(test)]
mod tests {
    // Test support code: failing loudly is the point.
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::native::{NativeInput, StringTable, write_native};
    use crate::tables::DatasetChecksums;

    fn image(anchors: &[&str]) -> NativeImage {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let json = std::fs::read(
            dir.join("../../tests/data/parity/datasets/enwiki/enwiki.linkmodel.json"),
        )
        .unwrap();
        let mut titles = StringTable::default();
        titles.push("T").unwrap();
        let mut table = StringTable::default();
        for a in anchors {
            table.push(a).unwrap();
        }
        let input = NativeInput {
            wiki_id: "enwiki".into(),
            checksums: DatasetChecksums::default(),
            titles,
            page_ids: vec![1],
            redirects: vec![NONE_U32],
            vector_rows: vec![NONE_U32],
            dim: 0,
            vectors: Vec::new(),
            candidate_offsets: (0..=anchors.len() as u64).collect(),
            candidates: vec![(0, 1); anchors.len()],
            anchors: table,
            model: LinkModel::from_json(&json).unwrap(),
            model_json: json,
        };
        let mut out = std::io::Cursor::new(Vec::new());
        write_native(&input, &mut out).unwrap();
        NativeImage::from_bytes(out.into_inner()).unwrap()
    }

    fn look_up(im: &NativeImage, key: &str) -> (Option<u32>, bool) {
        let f = im
            .find_hashed(
                key,
                hash::hash(key.as_bytes()),
                Section::AnchorHash,
                Section::AnchorOffsets,
                Section::AnchorBytes,
            )
            .unwrap();
        (f.index, f.prefix)
    }

    #[test]
    fn the_anchor_index_knows_the_word_prefixes_of_its_anchors() {
        let im = image(&["new york city", "new york", "york", "a  b"]);
        assert_eq!(im.meta.anchor_prefixes, 4, "new, new york, a, \"a \"");
        // A prefix that is no anchor: no index, but flagged.
        assert_eq!(look_up(&im, "new"), (None, true));
        assert_eq!(look_up(&im, "a "), (None, true));
        // An anchor that is also a prefix of another one.
        assert_eq!(look_up(&im, "new york"), (Some(1), true));
        // Anchors no other anchor continues.
        assert_eq!(look_up(&im, "new york city"), (Some(0), false));
        assert_eq!(look_up(&im, "york"), (Some(2), false));
        // Neither.
        assert_eq!(look_up(&im, "boston"), (None, false));
        assert_eq!(im.find_anchor("new").unwrap(), None);
    }

    #[test]
    fn grams_after_one_that_no_anchor_continues_answer_no() {
        let im = image(&["new york city", "york"]);
        let text = "new york city hall";
        let mut answers = Vec::new();
        im.find_anchor_prefixes(text, &[3, 8, 13, 18], |f| answers.push(f))
            .unwrap();
        assert_eq!(answers, [None, None, Some(0), None]);
        // "york" is an anchor but no word prefix: what follows it answers no.
        answers.clear();
        im.find_anchor_prefixes("york city", &[4, 9], |f| answers.push(f))
            .unwrap();
        assert_eq!(answers, [Some(1), None]);
    }
}
