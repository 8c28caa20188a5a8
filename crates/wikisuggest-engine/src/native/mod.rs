//! The native per-wiki dataset format: one immutable, memory-mappable file.
//!
//! ```text
//! header (64 bytes, little-endian)
//!   0  magic "WSLINKDB"        8  version u32       12 section count u32
//!   16 file length u64         24 sha256 (32 bytes, see below)
//!   56 title probe bound u32   60 anchor probe bound u32
//! section table: count × { kind u32, reserved u32 (0), offset u64, length u64 }
//! sections in `Section::ALL` order, each on the first 64-byte boundary after the previous
//! ```
//!
//! The sha256 covers the whole file: the body (everything after the aligned header area),
//! then the header area with the sha256 field itself zeroed. Version 1 hashed the body
//! only, so a changed section table went unnoticed even by `verify`. Version 3 adds the
//! anchors' word prefixes to the anchor index (see `hash.rs`), so the n-grams from one
//! text position stop probing at the first that no anchor continues; its metadata counts
//! them. Newer versions are rejected by older builds and older ones by this build
//! ("convert again").
//!
//! A probe bound is the longest displacement of any key in that hash index (see `hash.rs`):
//! a look-up gives up after it, so a damaged (e.g. full) index costs a bounded number of
//! probes, never a scan of the whole table.
//!
//! Strings (titles, anchors) are kept in string tables: concatenated UTF-8 bytes plus
//! `n + 1` u64 offsets. Each string table has an open-addressing hash index
//! (see `hash.rs`) so a lookup touches O(1) pages. Everything else refers to titles by their
//! u32 index: candidate lists are `(title, count)` pairs, redirects and vector rows are
//! per-title u32 columns, page ids a per-title i64 column. Vectors form one row-major
//! float32 matrix.
//!
//! Opening validates the header, the canonical layout of the section table, every
//! section's size against the counts in the metadata, the ends of the offset columns and
//! the probe bounds (O(1) in the data size); each later access is bounds-checked, so a
//! corrupt file yields [`Error::Corrupt`](crate::Error::Corrupt), never a panic. The
//! checksum is checked on demand (`verify`), since it reads the whole file.

mod filter;
mod guard;
pub(crate) mod hash;
mod publish;
pub(crate) mod reader;
pub(crate) mod writer;

pub(crate) use publish::publish_native_file;
pub(crate) use reader::NativeImage;
pub use writer::{NativeInput, StringTable, write_native};

/// File magic.
pub(crate) const MAGIC: &[u8; 8] = b"WSLINKDB";
/// Format version written and accepted.
pub(crate) const VERSION: u32 = 3;
/// Where the sha256 sits in the header.
pub(crate) const DIGEST_AT: std::ops::Range<usize> = 24..56;
/// Size of the fixed header.
pub(crate) const HEADER_LEN: usize = 64;
/// Size of one section table entry.
pub(crate) const ENTRY_LEN: usize = 24;
/// Section alignment.
pub(crate) const ALIGN: usize = 64;

/// Size of the header area (header and section table, padded to the alignment) of a file
/// with `sections` sections: where the body, and the digest's first part, starts.
pub(crate) fn header_area_len(sections: usize) -> usize {
    (HEADER_LEN + sections * ENTRY_LEN).div_ceil(ALIGN) * ALIGN
}

/// "No value" in the per-title u32 columns (redirect target, vector row).
pub const NONE_U32: u32 = u32::MAX;
/// "Not an article" in the page-id column.
pub const NO_PAGE: i64 = i64::MIN;

/// The file name of the native dataset of `wiki_id`.
pub fn native_file_name(wiki_id: &str) -> String {
    format!("{wiki_id}.linkdata")
}

/// Section kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Section {
    Meta = 1,
    TitleOffsets = 2,
    TitleBytes = 3,
    TitleHash = 4,
    PageIds = 5,
    Redirects = 6,
    VectorRows = 7,
    Vectors = 8,
    AnchorOffsets = 9,
    AnchorBytes = 10,
    AnchorHash = 11,
    CandidateOffsets = 12,
    Candidates = 13,
    Model = 14,
    ModelJson = 15,
}

impl Section {
    pub(crate) const ALL: [Section; 15] = [
        Section::Meta,
        Section::TitleOffsets,
        Section::TitleBytes,
        Section::TitleHash,
        Section::PageIds,
        Section::Redirects,
        Section::VectorRows,
        Section::Vectors,
        Section::AnchorOffsets,
        Section::AnchorBytes,
        Section::AnchorHash,
        Section::CandidateOffsets,
        Section::Candidates,
        Section::Model,
        Section::ModelJson,
    ];
}

/// The metadata section (JSON).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Meta {
    pub wiki_id: String,
    pub titles: u64,
    pub pages: u64,
    pub redirects: u64,
    pub vectors: u64,
    pub dim: u64,
    pub anchors: u64,
    pub candidates: u64,
    /// Distinct word prefixes of the anchors (version 3): the anchor index is sized for
    /// `anchors + anchor_prefixes` keys.
    pub anchor_prefixes: u64,
    pub checksums: crate::tables::DatasetChecksums,
}
