//! The logical per-wiki tables, decoded from pickled rows.
//!
//! Both published formats (mysqldump `.sql.gz` and the legacy sqlitedict `.sqlite`
//! files) store `(lookup key, pickle bytes)` rows; this module turns such rows into typed
//! tables, whatever container they came from.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::pickle::{self, PickleValue};

/// The four lookup tables of a wiki, as read from a published source, in source order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tables {
    /// Anchor text → candidates `(target title, count)` in stored order.
    pub anchors: Vec<(String, Vec<(String, u32)>)>,
    /// Redirect title → target title.
    pub redirects: Vec<(String, String)>,
    /// Article title → page id.
    pub pageids: Vec<(String, i64)>,
    /// Article title → embedding.
    pub vectors: VectorTable,
}

/// Embeddings of equal dimension, stored as one flat row-major matrix.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VectorTable {
    /// Vector dimension (0 while empty).
    pub dim: usize,
    /// Row keys (article titles), one per row.
    pub keys: Vec<String>,
    /// `keys.len() × dim` values.
    pub data: Vec<f32>,
}

impl VectorTable {
    /// The vector of row `i`.
    pub fn row(&self, i: usize) -> Option<&[f32]> {
        self.data.get(i * self.dim..(i + 1) * self.dim)
    }

    fn push(&mut self, key: String, v: &[f32]) -> Result<()> {
        if self.keys.is_empty() {
            self.dim = v.len();
        } else if v.len() != self.dim {
            return Err(dimension_mismatch(&key, v.len(), self.dim));
        }
        self.keys.push(key);
        self.data.extend_from_slice(v);
        Ok(())
    }
}

/// The published sha256 checksums of a wiki's five source files (`meta.dataset_checksums`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DatasetChecksums {
    /// `lr_{wiki}_anchors.sql.gz`.
    pub anchors: Option<String>,
    /// `{wiki}.linkmodel.json`.
    pub model: Option<String>,
    /// `lr_{wiki}_pageids.sql.gz`.
    pub pageids: Option<String>,
    /// `lr_{wiki}_redirects.sql.gz`.
    pub redirects: Option<String>,
    /// `lr_{wiki}_w2vfiltered.sql.gz`.
    pub w2vfiltered: Option<String>,
}

impl DatasetChecksums {
    /// The checksums as the sorted map of `meta.dataset_checksums`; empty when the source
    /// carried none (the legacy SQLite files), as upstream.
    pub fn to_map(&self) -> BTreeMap<&'static str, &str> {
        [
            ("anchors", &self.anchors),
            ("model", &self.model),
            ("pageids", &self.pageids),
            ("redirects", &self.redirects),
            ("w2vfiltered", &self.w2vfiltered),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
        .collect()
    }
}

/// Which logical table a row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// `anchors`.
    Anchors,
    /// `redirects`.
    Redirects,
    /// `pageids`.
    PageIds,
    /// `w2vfiltered`.
    Vectors,
}

impl TableKind {
    /// All four, in the order used for file names and messages.
    pub const ALL: [TableKind; 4] = [
        TableKind::Anchors,
        TableKind::Redirects,
        TableKind::PageIds,
        TableKind::Vectors,
    ];

    /// The dataset name used in file and table names.
    pub fn name(self) -> &'static str {
        match self {
            TableKind::Anchors => "anchors",
            TableKind::Redirects => "redirects",
            TableKind::PageIds => "pageids",
            TableKind::Vectors => "w2vfiltered",
        }
    }
}

/// The error for a vector whose dimension differs from the table's.
pub(crate) fn dimension_mismatch(key: &str, got: usize, dim: usize) -> Error {
    bad_row(
        "w2vfiltered",
        key,
        format!("dimension {got} differs from {dim}"),
    )
}

fn bad_row(table: &'static str, key: &str, reason: impl Into<String>) -> Error {
    Error::BadRow {
        table,
        key: key.to_owned(),
        reason: reason.into(),
    }
}

/// One decoded row of a published table (the value after unpickling and checking).
#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    /// `anchors`: candidates `(target title, count)` in stored order.
    Anchor(Vec<(String, u32)>),
    /// `redirects`: the target title.
    Redirect(String),
    /// `pageids`: the page id.
    PageId(i64),
    /// `w2vfiltered`: the embedding.
    Vector(Vec<f32>),
}

/// Decodes the pickled `value` of the row `key` of table `kind`.
pub fn decode_row(kind: TableKind, key: &str, value: &[u8]) -> Result<Row> {
    let table = kind.name();
    let v = pickle::loads(value).map_err(|e| bad_row(table, key, e.to_string()))?;
    Ok(match kind {
        TableKind::Anchors => {
            let PickleValue::Dict(items) = v else {
                return Err(bad_row(table, key, "value is not a dict"));
            };
            let mut cands = Vec::with_capacity(items.len());
            for (title, count) in items {
                let (PickleValue::Str(title), PickleValue::Int(count)) = (title, count) else {
                    return Err(bad_row(table, key, "candidate is not str → int"));
                };
                let count = u32::try_from(count)
                    .map_err(|_| bad_row(table, key, format!("count {count} outside 0..2^32")))?;
                cands.push((title, count));
            }
            Row::Anchor(cands)
        }
        TableKind::Redirects => {
            let PickleValue::Str(target) = v else {
                return Err(bad_row(table, key, "value is not a str"));
            };
            Row::Redirect(target)
        }
        TableKind::PageIds => match v {
            PickleValue::Int(id) => Row::PageId(id),
            PickleValue::Bool(b) => Row::PageId(i64::from(b)),
            _ => return Err(bad_row(table, key, "value is not an int")),
        },
        TableKind::Vectors => {
            // Only float32 vectors are supported: they are what the published
            // datasets hold, and production computes their cosine in float32.
            let vector = match &v {
                PickleValue::Array(a) => a.to_f32_vec(),
                _ => None,
            }
            .ok_or_else(|| bad_row(table, key, "value is not a one-dimensional float32 array"))?;
            Row::Vector(vector)
        }
    })
}

impl Tables {
    /// Decodes one `(key, pickle)` row of `kind` and appends it.
    pub fn push_row(&mut self, kind: TableKind, key: String, value: &[u8]) -> Result<()> {
        match decode_row(kind, &key, value)? {
            Row::Anchor(cands) => self.anchors.push((key, cands)),
            Row::Redirect(target) => self.redirects.push((key, target)),
            Row::PageId(id) => self.pageids.push((key, id)),
            Row::Vector(vector) => self.vectors.push(key, &vector)?,
        }
        Ok(())
    }
}
