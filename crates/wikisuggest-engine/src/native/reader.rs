//! Reading the native format from a memory map or an in-memory image.

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use super::filter::{MAX_FILTERED_SLOT_BYTES, TagFilter, TagTable, Tagged};
use super::guard::GuardedMap;
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
        map: GuardedMap,
        file: File,
        identity: (u64, Option<std::time::SystemTime>),
    },
    Owned(Vec<u8>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped { map, .. } => map.bytes(),
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
#[derive(Debug, Clone, Copy, Default)]
struct Found {
    /// Index of the key in its string table.
    index: Option<u32>,
    /// Whether the key is a word prefix of some anchor (anchor index only).
    prefix: bool,
}

/// One hash index and the string table it points into, sliced once for many probes.
struct Keys<'a> {
    image: &'a NativeImage,
    slots: &'a [u8],
    n_slots: usize,
    offsets: &'a [u8],
    bytes: &'a [u8],
    bytes_section: Section,
    /// How many slots a look-up examines at most: the probe bound plus one.
    probes: usize,
}

/// A row of prefixes of one text to look up (see [`NativeImage::find_anchor_rows`]).
pub(crate) trait PrefixRow {
    /// Where the prefixes start.
    fn start(&self) -> usize;
    /// Where they end, ascending.
    fn ends(&self) -> &[usize];
}

impl PrefixRow for (usize, &[usize]) {
    fn start(&self) -> usize {
        self.0
    }
    fn ends(&self) -> &[usize] {
        self.1
    }
}

impl PrefixRow for wikisuggest_text::pipeline::GramRow {
    fn start(&self) -> usize {
        self.start
    }
    fn ends(&self) -> &[usize] {
        self.ends.get(..self.len).unwrap_or(&self.ends)
    }
}

/// The look-ups of one row of [`NativeImage::find_anchor_rows`] under way.
#[derive(Debug, Default)]
struct Pending {
    row: usize,
    /// The hash of the row's text up to `hashed`.
    hasher: hash::Hasher,
    hashed: usize,
    /// This level's key ends at `end`; whether it is asked for (a valid key) at all.
    end: usize,
    asked: bool,
    /// After the level: whether longer grams of the row may still be anchors.
    more: bool,
    h: u64,
    /// The slot to examine next, and how many more may be.
    slot: usize,
    left: usize,
    /// The prefix flags met so far.
    found: Found,
    /// The anchor whose tag matched at `slot`, its key not compared yet.
    key: Option<u32>,
}

/// String `i` of the table with offsets column `offsets` over `bytes`.
#[inline]
fn string_at<'a>(offsets: &[u8], bytes: &'a [u8], i: usize) -> Option<&'a [u8]> {
    let (a, b) = (le_u64(offsets, i * 8)?, le_u64(offsets, i * 8 + 8)?);
    bytes.get(a as usize..b as usize).filter(|_| a <= b)
}

/// Asks the CPU to fetch the cache line holding `bytes[at]`, without waiting for it.
#[inline]
fn prefetch(bytes: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(b) = bytes.get(at) {
        // SAFETY: a prefetch is a hint that never faults and reads nothing the program
        // sees; the address is inside `bytes` anyway. SSE is part of x86_64.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                std::ptr::from_ref(b).cast(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, at);
}

impl Keys<'_> {
    /// The first slot probed for hash `h`.
    #[inline]
    fn start(&self, h: u64) -> usize {
        hash::start_slot(h, self.n_slots)
    }

    /// The slot after `s`, wrapping around.
    #[inline]
    fn next(&self, s: usize) -> usize {
        if s + 1 >= self.n_slots { 0 } else { s + 1 }
    }

    #[inline]
    fn slot_at(&self, s: usize) -> Option<hash::Slot> {
        hash::split_entry(le_u64(self.slots, s * 8).unwrap_or(0))
    }

    /// Key `i` of the string table.
    #[inline]
    fn key(&self, i: u32) -> Result<&[u8]> {
        string_at(self.offsets, self.bytes, i as usize).ok_or_else(|| {
            let what = self.bytes_section;
            self.image
                .corrupt(format!("{what:?} string {i} out of range"))
        })
    }

    /// Looks the key of `p` up from where `p` stands: the slots are scanned (see
    /// [`Keys::scan`]) and each anchor whose tag matches is compared with `key`. Every
    /// key sits within the probe bound of its start slot: past it, the key is absent.
    fn probe(&self, key: &[u8], p: &mut Pending) -> Result<Found> {
        loop {
            if p.key.is_none() {
                self.scan(p);
            }
            let Some(i) = p.key else {
                return Ok(p.found);
            };
            if self.key(i)? == key {
                return Ok(Found {
                    index: Some(i),
                    prefix: p.found.prefix || self.slot_at(p.slot).is_some_and(|s| s.prefix),
                });
            }
            // Two keys sharing a tag: go on along the chain.
            p.key = None;
            p.slot = self.next(p.slot);
        }
    }

    /// Scans the slots from `p.slot` (at most `p.left`) up to the first whose tag matches
    /// a key with bytes, left in `p.slot` with its index in `p.key`, or to the end of the
    /// chain (`p.left` then 0): what needs no key bytes, without reading any. A prefix-only
    /// entry holds no key bytes: its tag decides, and an anchor with the same key may still
    /// follow in the chain.
    fn scan(&self, p: &mut Pending) {
        let tag = hash::tag(p.h);
        while p.left > 0 {
            // The slots up to the end of the table, read without a check per slot.
            let run = p.left.min(self.n_slots.saturating_sub(p.slot));
            let entries = self
                .slots
                .get(p.slot * 8..(p.slot + run) * 8)
                .unwrap_or_default()
                .as_chunks::<8>()
                .0;
            if entries.is_empty() {
                p.left = 0;
                return;
            }
            for &entry in entries {
                let Some(slot) = hash::split_entry(u64::from_le_bytes(entry)) else {
                    p.left = 0;
                    return;
                };
                p.left -= 1;
                if slot.tag == tag {
                    match slot.index() {
                        Some(i) => {
                            p.key = Some(i);
                            return;
                        }
                        None => p.found.prefix |= slot.prefix,
                    }
                }
                p.slot += 1;
            }
            if p.slot >= self.n_slots {
                p.slot = 0;
            }
        }
    }
}

/// An anchor index (its slots, key offsets and key bytes) up to this size is probed one
/// gram at a time ([`NativeImage::find_anchor_rows`]): it fits in the caches.
const STRAIGHT_INDEX_BYTES: usize = 4 << 20;

/// What is known of an anchor index's tags without reading its slots.
#[derive(Debug)]
enum TagSummary {
    /// Every tag, for an index probed one gram at a time.
    Table(TagTable),
    /// Which classes of tags occur, for a larger index.
    Filter(TagFilter),
    /// Nothing: the index is too large for either.
    None,
}

impl TagSummary {
    fn filter(&self) -> Option<&TagFilter> {
        match self {
            TagSummary::Filter(f) => Some(f),
            _ => None,
        }
    }

    /// What the summary tells of `tag`.
    #[inline(always)]
    fn look_up(&self, tag: u32) -> Tagged {
        match self {
            TagSummary::Table(t) => t.look_up(tag),
            TagSummary::Filter(f) if !f.may_hold(tag) => Tagged::Absent,
            _ => Tagged::Unknown,
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
    /// Where the body starts (end of the aligned header area).
    body_start: usize,
    /// Longest displacement in the title and anchor hash indexes.
    probe_bounds: [u32; 2],
    /// The anchor index's tag summary, made at the first look-up.
    anchor_tags: OnceLock<TagSummary>,
}

impl std::fmt::Debug for NativeImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeImage")
            .field("path", &self.path)
            .field("meta", &self.meta)
            .finish_non_exhaustive()
    }
}

#[inline]
fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

#[inline]
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
        // Guarded: a truncation by another process reads as zeros and sets a flag that
        // `check_unchanged` reports, instead of killing the process (see `guard`).
        let map = GuardedMap::map(&file).map_err(|e| Error::io(path, e))?;
        let identity = identity(&file).map_err(|e| Error::io(path, e))?;
        if identity != before || identity.0 != map.bytes().len() as u64 {
            return Err(Error::Changed {
                path: path.to_owned(),
                reason: "changed while being opened".into(),
            });
        }
        let image = Self::new(
            Storage::Mapped {
                map,
                file,
                identity,
            },
            path.to_owned(),
        );
        // The structure was read from the map: a truncation meanwhile may have passed
        // zeros for it (or failed its checks, a typed error too).
        image.and_then(|image| image.check_unchanged().map(|()| image))
    }

    /// Fails with [`Error::Changed`] if a mapped file was truncated, extended or rewritten
    /// in place since it was opened: what was read from it since may be wrong. Replacing
    /// it by rename leaves the mapped file unchanged. Cheap: a flag, then one `fstat`.
    pub(crate) fn check_unchanged(&self) -> Result<()> {
        let Storage::Mapped {
            map,
            file,
            identity,
        } = &self.storage
        else {
            return Ok(());
        };
        let changed = |reason: &str| Error::Changed {
            path: self.path.clone(),
            reason: reason.to_owned(),
        };
        if map.faulted() {
            return Err(changed("truncated while in use"));
        }
        match self::identity(file) {
            Ok(now) if now == *identity => Ok(()),
            Ok(_) => Err(changed("changed in place since it was opened")),
            Err(e) => Err(Error::io(&self.path, e)),
        }
    }

    /// Validates an in-memory image.
    pub(crate) fn from_bytes(bytes: Vec<u8>) -> Result<Self> {
        Self::new(Storage::Owned(bytes), PathBuf::from("<memory>"))
    }

    #[cold]
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
            anchor_tags: OnceLock::new(),
        })
    }

    /// The tag summary of the anchor index: an exact table when the index is probed one
    /// gram at a time ([`STRAIGHT_INDEX_BYTES`]), a filter when it is not too large.
    fn anchor_tags(&self) -> &TagSummary {
        self.anchor_tags.get_or_init(|| {
            let keys = self.anchor_keys();
            let straight =
                keys.slots.len() + keys.offsets.len() + keys.bytes.len() <= STRAIGHT_INDEX_BYTES;
            let n_keys = self
                .n_anchors
                .saturating_add(usize::try_from(self.meta.anchor_prefixes).unwrap_or(usize::MAX));
            if straight && let Some(table) = TagTable::of_slots(keys.slots, n_keys) {
                TagSummary::Table(table)
            } else if keys.slots.len() <= MAX_FILTERED_SLOT_BYTES {
                TagSummary::Filter(TagFilter::of_slots(keys.slots))
            } else {
                TagSummary::None
            }
        })
    }

    /// The anchor index over the anchor strings.
    fn anchor_keys(&self) -> Keys<'_> {
        self.keys(
            Section::AnchorHash,
            Section::AnchorOffsets,
            Section::AnchorBytes,
        )
    }

    #[inline]
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

    #[inline]
    fn u64_at(&self, s: Section, i: usize) -> Result<u64> {
        le_u64(self.section(s), i.saturating_mul(8))
            .ok_or_else(|| self.corrupt(format!("{s:?} index {i} out of range")))
    }

    #[inline]
    fn u32_at(&self, s: Section, i: usize) -> Result<u32> {
        le_u32(self.section(s), i.saturating_mul(4))
            .ok_or_else(|| self.corrupt(format!("{s:?} index {i} out of range")))
    }

    #[inline]
    fn string(&self, offsets: Section, bytes: Section, i: usize) -> Result<&[u8]> {
        string_at(self.section(offsets), self.section(bytes), i)
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

    /// The hash index `hash_s` over the string table `offsets`/`bytes`.
    fn keys(&self, hash_s: Section, offsets: Section, bytes: Section) -> Keys<'_> {
        let slots = self.section(hash_s);
        Keys {
            image: self,
            slots,
            n_slots: slots.len() / 8,
            offsets: self.section(offsets),
            bytes: self.section(bytes),
            bytes_section: bytes,
            probes: (self.probe_bound(hash_s) + 1).min(slots.len() / 8),
        }
    }

    fn find_hashed(
        &self,
        key: &str,
        h: u64,
        hash_s: Section,
        offsets: Section,
        bytes: Section,
    ) -> Result<Found> {
        let keys = self.keys(hash_s, offsets, bytes);
        let mut p = Pending {
            h,
            slot: keys.start(h),
            left: keys.probes,
            ..Pending::default()
        };
        keys.probe(key.as_bytes(), &mut p)
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

    /// Asks the processor to fetch what looking each of `titles` up as a link target reads
    /// (see [`Dataset::link_target_into`](crate::Dataset)): the title index's slots, the offsets
    /// and bytes of the first title whose tag matches, its redirect and page id, and the
    /// target's offsets and bytes. It goes a stage at a time over all the titles, so that
    /// the cache misses of one stage overlap instead of each title's following each other.
    /// A hint: it decides nothing and changes nothing, and a damaged image only ends it.
    pub(crate) fn prefetch_link_targets(&self, titles: &[&str]) {
        let keys = self.keys(
            Section::TitleHash,
            Section::TitleOffsets,
            Section::TitleBytes,
        );
        let redirects = self.section(Section::Redirects);
        let page_ids = self.section(Section::PageIds);
        let mut pending: Vec<Pending> = titles
            .iter()
            .map(|title| {
                let h = hash::hash(title.as_bytes());
                let slot = keys.start(h);
                prefetch(keys.slots, slot * 8);
                Pending {
                    h,
                    slot,
                    left: keys.probes,
                    ..Pending::default()
                }
            })
            .collect();
        // The first title along each chain whose tag matches (the one a look-up compares
        // first), then its target: itself, or the title it redirects to.
        let mut targets: Vec<Option<(usize, usize)>> = Vec::with_capacity(pending.len());
        for p in &mut pending {
            keys.scan(p);
            let i = p.key.map(|i| i as usize);
            if let Some(i) = i {
                prefetch(keys.offsets, i * 8);
                prefetch(redirects, i * 4);
                prefetch(page_ids, i * 8);
            }
            targets.push(i.map(|i| (i, i)));
        }
        for (i, target) in targets.iter_mut().flatten() {
            if let Some(at) = le_u64(keys.offsets, *i * 8) {
                prefetch(keys.bytes, at as usize);
            }
            if let Some(t) = le_u32(redirects, *i * 4).filter(|&t| (t as usize) < self.n_titles) {
                *target = t as usize;
                prefetch(page_ids, *target * 8);
                prefetch(keys.offsets, *target * 8);
            }
        }
        for &(i, target) in targets.iter().flatten() {
            if target != i
                && let Some(at) = le_u64(keys.offsets, target * 8)
            {
                prefetch(keys.bytes, at as usize);
            }
        }
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
        let mut answers = vec![None; ends.len()];
        self.find_anchor_rows(text, &[(0, ends)], |_, level, hit| {
            if let Some(slot) = answers.get_mut(level) {
                *slot = hit;
            }
        })?;
        answers.into_iter().for_each(&mut found);
        Ok(())
    }

    /// [`Self::find_anchor_prefixes`] for many rows of prefixes of one text at once: row
    /// `r` asks for `text[start..end]`, `end` in its `ends`, and each answer is given as
    /// `found(r, level, index)` (`level`: the position of `end` in `ends`; an end that is
    /// no character boundary or goes backwards answers `None`), in no particular order.
    ///
    /// The look-ups go level by level: the first grams of every row are hashed and their
    /// index slots prefetched before any is probed, then the key offsets and key bytes of
    /// the slots that match, and so on, so that the cache misses of one row overlap those
    /// of the others instead of each waiting for the previous one (on an enwiki-size
    /// index, every probe misses the caches). The answers are those of one look-up each.
    pub(crate) fn find_anchor_rows<R: PrefixRow>(
        &self,
        text: &str,
        rows: &[R],
        mut found: impl FnMut(usize, usize, Option<u32>),
    ) -> Result<()> {
        let keys = self.anchor_keys();
        let bytes = text.as_bytes();
        let tags = self.anchor_tags();
        if keys.slots.len() + keys.offsets.len() + keys.bytes.len() <= STRAIGHT_INDEX_BYTES {
            return Self::find_anchor_rows_straight(&keys, tags, text, rows, found);
        }
        let filter = tags.filter();
        // Sized once: a filtered collect would grow it step by step, copying every entry.
        let mut work: Vec<Pending> = Vec::with_capacity(rows.len());
        work.extend(
            rows.iter()
                .enumerate()
                // A row starting inside a character has no key: all its answers are `None`.
                .filter(|(_, row)| !row.ends().is_empty() && text.is_char_boundary(row.start()))
                .map(|(r, row)| Pending {
                    row: r,
                    hasher: hash::Hasher::new(),
                    hashed: row.start(),
                    ..Pending::default()
                }),
        );
        let mut level = 0;
        while !work.is_empty() {
            // Hash this level's grams and prefetch their start slots.
            for p in &mut work {
                let Some(row) = rows.get(p.row) else {
                    continue;
                };
                p.end = row.ends().get(level).copied().unwrap_or(0);
                // `hashed` is at or after the row's start, a character boundary.
                p.asked = p.end >= p.hashed && text.is_char_boundary(p.end);
                if !p.asked {
                    continue;
                }
                p.hasher
                    .write(bytes.get(p.hashed..p.end).unwrap_or_default());
                p.hashed = p.end;
                p.h = p.hasher.finish();
                p.slot = keys.start(p.h);
                p.found = Found::default();
                p.key = None;
                if filter.is_some_and(|f| !f.may_hold(hash::tag(p.h))) {
                    // No slot holds its tag: nothing to scan.
                    p.left = 0;
                    continue;
                }
                p.left = keys.probes;
                prefetch(keys.slots, p.slot * 8);
            }
            // Scan each chain up to the first slot whose tag matches an anchor's, and
            // prefetch that anchor's offsets.
            for p in work.iter_mut().filter(|p| p.asked) {
                keys.scan(p);
                if let Some(i) = p.key {
                    prefetch(keys.offsets, i as usize * 8);
                    prefetch(keys.offsets, i as usize * 8 + 8);
                }
            }
            // Then the key bytes those offsets point at.
            for p in &work {
                if let Some(i) = p.key
                    && let Some(at) = le_u64(keys.offsets, i as usize * 8)
                {
                    prefetch(keys.bytes, at as usize);
                }
            }
            // Compare the keys.
            for p in &mut work {
                let Some(row) = rows.get(p.row) else {
                    continue;
                };
                if !p.asked {
                    // No key at this end: the row goes on with the next one.
                    found(p.row, level, None);
                    p.more = true;
                    continue;
                }
                let key = bytes.get(row.start()..p.end).unwrap_or_default();
                // Most grams are no anchor: their scan found no tag to compare.
                let hit = match p.key {
                    None => p.found,
                    Some(_) => keys.probe(key, p)?,
                };
                found(p.row, level, hit.index);
                // No anchor continues this gram with a space: no longer one is an anchor.
                p.more = hit.prefix || bytes.get(p.end) != Some(&b' ');
            }
            level += 1;
            work.retain(|p| p.more && rows.get(p.row).is_some_and(|r| level < r.ends().len()));
        }
        Ok(())
    }

    /// [`Self::find_anchor_rows`] one row after another, each gram probed as soon as it is
    /// hashed: for an index that stays in the caches, where the level-by-level passes
    /// have no misses to overlap and only cost their own bookkeeping. The same answers.
    fn find_anchor_rows_straight<R: PrefixRow>(
        keys: &Keys<'_>,
        tags: &TagSummary,
        text: &str,
        rows: &[R],
        mut found: impl FnMut(usize, usize, Option<u32>),
    ) -> Result<()> {
        let bytes = text.as_bytes();
        for (r, row) in rows.iter().enumerate() {
            let ends = row.ends();
            // A row starting inside a character has no key: all its answers are `None`.
            if ends.is_empty() || !text.is_char_boundary(row.start()) {
                continue;
            }
            let mut hasher = hash::Hasher::new();
            let mut hashed = row.start();
            for (level, &end) in ends.iter().enumerate() {
                if end < hashed || !text.is_char_boundary(end) {
                    // No key at this end: the row goes on with the next one.
                    found(r, level, None);
                    continue;
                }
                let piece = bytes.get(hashed..end).unwrap_or_default();
                // Most pieces (a space and a word) fit in the eight bytes from `hashed`.
                match bytes.get(hashed..).and_then(<[u8]>::first_chunk::<8>) {
                    Some(&window) if piece.len() <= 8 => hasher.write_window(window, piece.len()),
                    _ => hasher.write(piece),
                }
                hashed = end;
                let h = hasher.finish();
                let hit = match tags.look_up(hash::tag(h)) {
                    Tagged::Absent => Found::default(),
                    // The one key with this tag, if any, is this gram's only candidate: a
                    // well-formed index holds a key with the gram's bytes in the gram's chain.
                    Tagged::Once {
                        index: Some(i),
                        prefix,
                    } => {
                        let key = bytes.get(row.start()..end).unwrap_or_default();
                        if keys.key(i)? == key {
                            Found {
                                index: Some(i),
                                prefix,
                            }
                        } else {
                            Found::default()
                        }
                    }
                    Tagged::Once {
                        index: None,
                        prefix,
                    } => Found {
                        index: None,
                        prefix,
                    },
                    Tagged::Unknown => Self::probe_gram(keys, bytes, row.start(), end, h)?,
                };
                found(r, level, hit.index);
                // No anchor continues this gram with a space: no longer one is an anchor.
                if !(hit.prefix || bytes.get(end) != Some(&b' ')) {
                    break;
                }
            }
        }
        Ok(())
    }

    /// The look-up of `bytes[start..end]`, hash `h`, along the slots.
    fn probe_gram(
        keys: &Keys<'_>,
        bytes: &[u8],
        start: usize,
        end: usize,
        h: u64,
    ) -> Result<Found> {
        let mut p = Pending {
            end,
            asked: true,
            h,
            slot: keys.start(h),
            left: keys.probes,
            ..Pending::default()
        };
        keys.scan(&mut p);
        match p.key {
            None => Ok(p.found),
            Some(_) => keys.probe(bytes.get(start..end).unwrap_or_default(), &mut p),
        }
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

    #[test]
    fn rows_of_grams_answer_like_one_look_up_each() {
        let im = image(&["new york city", "new york", "york", "é", "city hall"]);
        let text = "new york city hall é york";
        // Every start and end that `text` allows, some not character boundaries, some
        // going backwards.
        let starts: Vec<usize> = (0..=text.len() + 1).collect();
        let ends: Vec<Vec<usize>> = starts
            .iter()
            .map(|&s| {
                let mut e: Vec<usize> = (s + 1..=text.len()).filter(|e| e % 3 != 1).collect();
                e.push(s);
                e
            })
            .collect();
        let rows: Vec<(usize, &[usize])> = starts
            .iter()
            .zip(&ends)
            .map(|(&s, e)| (s, e.as_slice()))
            .collect();
        let mut got: Vec<Vec<Option<u32>>> = ends.iter().map(|e| vec![None; e.len()]).collect();
        let mut asked = 0;
        im.find_anchor_rows(text, &rows, |row, level, found| {
            got[row][level] = found;
            asked += 1;
        })
        .unwrap();
        let mut hits = 0;
        for ((start, ends), got) in rows.iter().zip(&got) {
            // One look-up per gram; an end that goes back before the last key's answers no.
            let mut hashed = *start;
            let single: Vec<Option<u32>> = ends
                .iter()
                .map(|&end| {
                    let key = text.get(*start..end).filter(|_| end >= hashed)?;
                    hashed = end;
                    im.find_anchor(key).unwrap()
                })
                .collect();
            assert_eq!(got, &single, "row at {start}");
            hits += got.iter().flatten().count();
        }
        assert!(hits >= 5, "{hits}");
        // Grams after one that no anchor continues are not looked up.
        let total: usize = ends.iter().map(Vec::len).sum();
        assert!(asked < total / 2, "{asked} of {total}");
    }
}
