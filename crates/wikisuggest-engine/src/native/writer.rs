//! Writing the native format, and interning published tables into its indexed form.

use std::collections::HashMap;
use std::io::{Seek, SeekFrom, Write};

use sha2::{Digest, Sha256};

use super::{ALIGN, DIGEST_AT, MAGIC, Meta, NO_PAGE, NONE_U32, Section, VERSION, hash};
use crate::error::{Error, Result};
use crate::tables::{DatasetChecksums, Tables};
use crate::xgboost::LinkModel;

/// Concatenated UTF-8 strings with `n + 1` offsets; the in-memory twin of a string section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringTable {
    bytes: Vec<u8>,
    offsets: Vec<u64>,
}

impl Default for StringTable {
    fn default() -> Self {
        Self {
            bytes: Vec::new(),
            offsets: vec![0],
        }
    }
}

impl StringTable {
    /// Appends a string and returns its index.
    pub fn push(&mut self, s: &str) -> Result<u32> {
        let index = u32::try_from(self.len())
            .ok()
            .filter(|&i| i < NONE_U32)
            .ok_or_else(|| Error::TooLarge("more than 2^32 − 1 strings".into()))?;
        self.bytes.extend_from_slice(s.as_bytes());
        self.offsets.push(self.bytes.len() as u64);
        Ok(index)
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of string `i` (empty if out of range).
    pub fn get(&self, i: usize) -> &[u8] {
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self.bytes.get(a as usize..b as usize).unwrap_or_default(),
            _ => &[],
        }
    }
}

/// The indexed content of a native dataset, ready to be written.
///
/// Titles and anchors are referred to by their index in `titles` / `anchors`. Keys must
/// be unique within each table.
#[derive(Debug, Clone)]
pub struct NativeInput {
    /// Wiki id.
    pub wiki_id: String,
    /// Published checksums carried along.
    pub checksums: DatasetChecksums,
    /// Every title (articles, redirects and their targets, candidates, vector keys).
    pub titles: StringTable,
    /// Per title: page id, or [`NO_PAGE`].
    pub page_ids: Vec<i64>,
    /// Per title: redirect target title index, or [`NONE_U32`].
    pub redirects: Vec<u32>,
    /// Per title: row in `vectors`, or [`NONE_U32`].
    pub vector_rows: Vec<u32>,
    /// Vector dimension.
    pub dim: usize,
    /// Row-major `rows × dim` matrix.
    pub vectors: Vec<f32>,
    /// Anchor texts.
    pub anchors: StringTable,
    /// Per anchor: start of its candidates in `candidates` (`anchors.len() + 1` entries).
    pub candidate_offsets: Vec<u64>,
    /// `(title index, count)` pairs in stored order.
    pub candidates: Vec<(u32, u32)>,
    /// The compiled model.
    pub model: LinkModel,
    /// The model JSON it was compiled from.
    pub model_json: Vec<u8>,
}

impl NativeInput {
    /// Interns published tables. Titles and anchors are sorted by their UTF-8 bytes so the
    /// output does not depend on the source's row order.
    pub fn from_tables(
        wiki_id: &str,
        tables: &Tables,
        model_json: Vec<u8>,
        checksums: DatasetChecksums,
    ) -> Result<Self> {
        let model = LinkModel::from_json(&model_json)?;

        let mut all: Vec<&str> = Vec::new();
        all.extend(tables.pageids.iter().map(|(t, _)| t.as_str()));
        for (from, to) in &tables.redirects {
            all.push(from);
            all.push(to);
        }
        all.extend(tables.vectors.keys.iter().map(String::as_str));
        for (_, cands) in &tables.anchors {
            all.extend(cands.iter().map(|(t, _)| t.as_str()));
        }
        all.sort_unstable();
        all.dedup();
        let mut titles = StringTable::default();
        let mut index: HashMap<&str, u32> = HashMap::with_capacity(all.len());
        for t in &all {
            index.insert(t, titles.push(t)?);
        }
        let n = titles.len();
        let id = |t: &str| index.get(t).copied().unwrap_or(NONE_U32);

        let mut page_ids = vec![NO_PAGE; n];
        for (t, pid) in &tables.pageids {
            let slot = &mut page_ids[id(t) as usize];
            if *slot != NO_PAGE {
                return Err(dup("pageids", t));
            }
            if *pid == NO_PAGE {
                return Err(Error::BadRow {
                    table: "pageids",
                    key: t.clone(),
                    reason: "page id i64::MIN is reserved".into(),
                });
            }
            *slot = *pid;
        }
        let mut redirects = vec![NONE_U32; n];
        for (from, to) in &tables.redirects {
            let slot = &mut redirects[id(from) as usize];
            if *slot != NONE_U32 {
                return Err(dup("redirects", from));
            }
            *slot = id(to);
        }
        let mut vector_rows = vec![NONE_U32; n];
        for (row, t) in tables.vectors.keys.iter().enumerate() {
            let slot = &mut vector_rows[id(t) as usize];
            if *slot != NONE_U32 {
                return Err(dup("w2vfiltered", t));
            }
            *slot = u32::try_from(row).map_err(|_| Error::TooLarge("vector rows".into()))?;
        }

        let mut order: Vec<usize> = (0..tables.anchors.len()).collect();
        order.sort_unstable_by(|&a, &b| tables.anchors[a].0.cmp(&tables.anchors[b].0));
        let mut anchors = StringTable::default();
        let mut candidate_offsets = vec![0u64];
        let mut candidates = Vec::new();
        for (k, &i) in order.iter().enumerate() {
            let (key, cands) = &tables.anchors[i];
            if k > 0 && tables.anchors[order[k - 1]].0 == *key {
                return Err(dup("anchors", key));
            }
            anchors.push(key)?;
            candidates.extend(cands.iter().map(|(t, c)| (id(t), *c)));
            candidate_offsets.push(candidates.len() as u64);
        }

        Ok(Self {
            wiki_id: wiki_id.to_owned(),
            checksums,
            titles,
            page_ids,
            redirects,
            vector_rows,
            dim: tables.vectors.dim,
            vectors: tables.vectors.data.clone(),
            anchors,
            candidate_offsets,
            candidates,
            model,
            model_json,
        })
    }

    fn check(&self) -> Result<()> {
        let n = self.titles.len();
        let bad = |what: &str| Error::InvalidArgument(format!("inconsistent native input: {what}"));
        if self.page_ids.len() != n || self.redirects.len() != n || self.vector_rows.len() != n {
            return Err(bad("per-title columns must have one entry per title"));
        }
        let rows = self.vectors.len().checked_div(self.dim).unwrap_or(0);
        if rows * self.dim != self.vectors.len() {
            return Err(bad("vector data is not rows × dim"));
        }
        if self
            .vector_rows
            .iter()
            .any(|&r| r != NONE_U32 && r as usize >= rows)
        {
            return Err(bad("vector row out of range"));
        }
        if self
            .redirects
            .iter()
            .any(|&r| r != NONE_U32 && r as usize >= n)
        {
            return Err(bad("redirect target out of range"));
        }
        if self.candidate_offsets.len() != self.anchors.len() + 1
            || self.candidate_offsets.first() != Some(&0)
            || self.candidate_offsets.last() != Some(&(self.candidates.len() as u64))
            || self.candidate_offsets.windows(2).any(|w| w[0] > w[1])
        {
            return Err(bad("candidate offsets"));
        }
        if self.candidates.iter().any(|&(t, _)| t as usize >= n) {
            return Err(bad("candidate title out of range"));
        }
        Ok(())
    }

    /// The metadata, with the number of distinct word prefixes of the anchors.
    fn meta(&self, anchor_prefixes: usize) -> Meta {
        Meta {
            wiki_id: self.wiki_id.clone(),
            titles: self.titles.len() as u64,
            pages: self.page_ids.iter().filter(|&&p| p != NO_PAGE).count() as u64,
            redirects: self.redirects.iter().filter(|&&r| r != NONE_U32).count() as u64,
            vectors: self.vectors.len().checked_div(self.dim).unwrap_or(0) as u64,
            dim: self.dim as u64,
            anchors: self.anchors.len() as u64,
            candidates: self.candidates.len() as u64,
            anchor_prefixes: anchor_prefixes as u64,
            checksums: self.checksums.clone(),
        }
    }
}

fn dup(table: &'static str, key: &str) -> Error {
    Error::DuplicateKey {
        table,
        key: key.to_owned(),
    }
}

/// Counts and hashes everything written after the header area.
pub(crate) struct BodyWriter<W> {
    inner: W,
    pos: u64,
    sha: Sha256,
}

impl<W: Write> BodyWriter<W> {
    pub(crate) fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.inner.write_all(bytes)?;
        self.sha.update(bytes);
        self.pos += bytes.len() as u64;
        Ok(())
    }

    fn align(&mut self) -> std::io::Result<()> {
        let pad = (ALIGN as u64 - self.pos % ALIGN as u64) % ALIGN as u64;
        self.put(&[0u8; ALIGN][..pad as usize])
    }

    /// Writes fixed-size items through a buffer (sections can be gigabytes).
    pub(crate) fn put_items<T: Copy, const N: usize>(
        &mut self,
        items: &[T],
        enc: impl Fn(T) -> [u8; N],
    ) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(1 << 16);
        for chunk in items.chunks((1 << 16) / N.max(1)) {
            buf.clear();
            for &it in chunk {
                buf.extend_from_slice(&enc(it));
            }
            self.put(&buf)?;
        }
        Ok(())
    }
}

/// Encodes one candidate pair as stored: title index, then count, little-endian.
pub(crate) fn candidate_bytes((title, count): (u32, u32)) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&title.to_le_bytes());
    b[4..].copy_from_slice(&count.to_le_bytes());
    b
}

/// Writes `input` in the native format to `out`, which must be positioned at its start.
pub fn write_native<W: Write + Seek>(input: &NativeInput, out: W) -> Result<()> {
    input.check()?;
    write_sections(input, out).map_err(|e| Error::io("<native output>", e))
}

fn write_sections<W: Write + Seek>(input: &NativeInput, out: W) -> std::io::Result<()> {
    let (title_hash, title_bound) = hash::build(input.titles.len(), |i| input.titles.get(i));
    let (anchor_hash, anchor_bound, prefixes) =
        hash::build_anchor_index(input.anchors.len(), |i| input.anchors.get(i));
    let model = input.model.to_bytes();
    let meta = serde_json::to_vec(&input.meta(prefixes)).map_err(std::io::Error::other)?;
    write_layout(
        out,
        (title_bound, anchor_bound),
        |section, w| match section {
            Section::Meta => w.put(&meta),
            Section::TitleOffsets => w.put_items(&input.titles.offsets, u64::to_le_bytes),
            Section::TitleBytes => w.put(&input.titles.bytes),
            Section::TitleHash => w.put_items(&title_hash, u64::to_le_bytes),
            Section::PageIds => w.put_items(&input.page_ids, i64::to_le_bytes),
            Section::Redirects => w.put_items(&input.redirects, u32::to_le_bytes),
            Section::VectorRows => w.put_items(&input.vector_rows, u32::to_le_bytes),
            Section::Vectors => w.put_items(&input.vectors, f32::to_le_bytes),
            Section::AnchorOffsets => w.put_items(&input.anchors.offsets, u64::to_le_bytes),
            Section::AnchorBytes => w.put(&input.anchors.bytes),
            Section::AnchorHash => w.put_items(&anchor_hash, u64::to_le_bytes),
            Section::CandidateOffsets => w.put_items(&input.candidate_offsets, u64::to_le_bytes),
            Section::Candidates => w.put_items(&input.candidates, candidate_bytes),
            Section::Model => w.put(&model),
            Section::ModelJson => w.put(&input.model_json),
        },
    )
}

/// Writes the file around its sections: the header area, then each section (written by
/// `section`, in `Section::ALL` order, each aligned), then the header with the section table
/// and the digest. The one place that knows the layout, whether the sections come from
/// memory or from files.
pub(crate) fn write_layout<W: Write + Seek>(
    out: W,
    (title_bound, anchor_bound): (u32, u32),
    mut section: impl FnMut(Section, &mut BodyWriter<W>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if title_bound.max(anchor_bound) > hash::MAX_PROBE_BOUND {
        return Err(std::io::Error::other(
            "hash index too clustered (probe bound above the format's limit)",
        ));
    }
    let header_area = super::header_area_len(Section::ALL.len());
    let mut w = BodyWriter {
        inner: out,
        pos: 0,
        sha: Sha256::new(),
    };
    w.inner.write_all(&vec![0u8; header_area])?;
    w.pos = header_area as u64;

    let mut entries = Vec::with_capacity(Section::ALL.len());
    for s in Section::ALL {
        w.align()?;
        let start = w.pos;
        section(s, &mut w)?;
        entries.push((s, start, w.pos - start));
    }
    let file_len = w.pos;

    let mut header = Vec::with_capacity(header_area);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&VERSION.to_le_bytes());
    header.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    header.extend_from_slice(&file_len.to_le_bytes());
    header.extend_from_slice(&[0u8; 32]);
    header.extend_from_slice(&title_bound.to_le_bytes());
    header.extend_from_slice(&anchor_bound.to_le_bytes());
    for (section, offset, len) in entries {
        header.extend_from_slice(&(section as u32).to_le_bytes());
        header.extend_from_slice(&0u32.to_le_bytes());
        header.extend_from_slice(&offset.to_le_bytes());
        header.extend_from_slice(&len.to_le_bytes());
    }
    header.resize(header_area, 0);
    // The digest covers the body, then the header area with the digest field zeroed.
    w.sha.update(&header);
    let digest = w.sha.finalize();
    header[DIGEST_AT].copy_from_slice(&digest);
    let mut out = w.inner;
    out.seek(SeekFrom::Start(0))?;
    out.write_all(&header)?;
    out.flush()
}
