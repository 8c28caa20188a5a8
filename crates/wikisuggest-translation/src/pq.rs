//! Parquet files written and read column by column (the `parquet` crate's column API, without
//! its Arrow layer, whose compile time is several times the rest of the crate's).
//!
//! A table is written a row group at a time: rows are appended to per-leaf buffers of values
//! and definition/repetition levels, flushed every [`ROW_GROUP_ROWS`] rows. The schemas are
//! standard (three-level `LIST`s of strings or of structs), so any Parquet reader reads them.
//! Reading gives a row group's leaf whole: its values and levels, walked per row.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, Type as Physical};
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DataType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::SchemaDescriptor;

use crate::error::{Error, Result};

/// Rows per row group: large enough for good compression, small enough that a reader holds
/// one group's leaves at a time.
pub const ROW_GROUP_ROWS: usize = 64 * 1024;

fn pq_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::catalog(path, format!("Parquet: {e}"))
}

/// The values of one leaf column.
#[derive(Debug, Clone)]
pub enum Values {
    Bool(Vec<bool>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    Bytes(Vec<ByteArray>),
}

impl Values {
    fn new(physical: Physical) -> Option<Self> {
        Some(match physical {
            Physical::BOOLEAN => Self::Bool(Vec::new()),
            Physical::INT32 => Self::I32(Vec::new()),
            Physical::INT64 => Self::I64(Vec::new()),
            Physical::BYTE_ARRAY => Self::Bytes(Vec::new()),
            _ => return None,
        })
    }

    fn clear(&mut self) {
        match self {
            Self::Bool(v) => v.clear(),
            Self::I32(v) => v.clear(),
            Self::I64(v) => v.clear(),
            Self::Bytes(v) => v.clear(),
        }
    }
}

/// A leaf's buffered values and levels.
#[derive(Debug, Clone)]
struct Leaf {
    values: Values,
    def: Vec<i16>,
    rep: Vec<i16>,
    max_def: i16,
    max_rep: i16,
}

/// One value pushed to a leaf.
pub enum Value<'a> {
    Bool(bool),
    I32(i32),
    I64(i64),
    Str(&'a str),
}

/// Writes one Parquet table, row by row.
pub struct TableWriter {
    path: PathBuf,
    writer: Option<SerializedFileWriter<BufWriter<File>>>,
    leaves: Vec<Leaf>,
    names: Vec<String>,
    rows: usize,
    written: u64,
}

impl TableWriter {
    /// A new file at `path` (replaced if it exists) with the schema `message`.
    pub fn create(path: &Path, message: &str) -> Result<Self> {
        let schema = Arc::new(parse_message_type(message).map_err(|e| pq_error(path, e))?);
        let descr = SchemaDescriptor::new(schema.clone());
        let mut leaves = Vec::new();
        let mut names = Vec::new();
        for column in descr.columns() {
            let values = Values::new(column.physical_type())
                .ok_or_else(|| pq_error(path, "unsupported physical type"))?;
            leaves.push(Leaf {
                values,
                def: Vec::new(),
                rep: Vec::new(),
                max_def: column.max_def_level(),
                max_rep: column.max_rep_level(),
            });
            names.push(column.path().string());
        }
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("wikisuggest {}", env!("CARGO_PKG_VERSION")))
            .build();
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        let writer = SerializedFileWriter::new(
            BufWriter::with_capacity(1 << 20, file),
            schema,
            props.into(),
        )
        .map_err(|e| pq_error(path, e))?;
        Ok(Self {
            path: path.to_owned(),
            writer: Some(writer),
            leaves,
            names,
            rows: 0,
            written: 0,
        })
    }

    /// The index of the leaf at the dotted `path` (`langlinks.list.element.lang`).
    pub fn leaf(&self, path: &str) -> Result<usize> {
        self.names
            .iter()
            .position(|n| n == path)
            .ok_or_else(|| pq_error(&self.path, format!("no column {path}")))
    }

    fn push_value(&mut self, leaf: usize, value: Value<'_>) {
        let Some(l) = self.leaves.get_mut(leaf) else {
            return;
        };
        match (&mut l.values, value) {
            (Values::Bool(v), Value::Bool(x)) => v.push(x),
            (Values::I32(v), Value::I32(x)) => v.push(x),
            (Values::I64(v), Value::I64(x)) => v.push(x),
            (Values::Bytes(v), Value::Str(x)) => v.push(ByteArray::from(x.as_bytes().to_vec())),
            // A type mismatch is a programming error caught by the tests' round trips.
            _ => debug_assert!(false, "value of the wrong type for leaf {leaf}"),
        }
    }

    /// A top-level value (`None` for null in an optional column).
    pub fn flat(&mut self, leaf: usize, value: Option<Value<'_>>) {
        let Some(max_def) = self.leaves.get(leaf).map(|l| l.max_def) else {
            return;
        };
        if max_def > 0 {
            let present = value.is_some();
            if let Some(l) = self.leaves.get_mut(leaf) {
                l.def.push(if present { max_def } else { 0 });
            }
        }
        if let Some(value) = value {
            self.push_value(leaf, value);
        }
    }

    /// The items of a list, one value per leaf per item (`leaves` are the fields of its
    /// struct, or its one element); `None` for a null list.
    pub fn list<'v>(
        &mut self,
        leaves: &[usize],
        items: Option<impl IntoIterator<Item = Vec<Value<'v>>>>,
    ) {
        for &leaf in leaves {
            if self.leaves.get(leaf).is_none() {
                return;
            }
        }
        let max_def = self.leaves[leaves[0]].max_def;
        let mut count = 0usize;
        if let Some(items) = items {
            for item in items {
                for (&leaf, value) in leaves.iter().zip(item) {
                    let l = &mut self.leaves[leaf];
                    l.def.push(max_def);
                    l.rep.push(i16::from(count > 0));
                    self.push_value(leaf, value);
                }
                count += 1;
            }
            if count == 0 {
                for &leaf in leaves {
                    let l = &mut self.leaves[leaf];
                    l.def.push(max_def - 1);
                    l.rep.push(0);
                }
            }
        } else {
            for &leaf in leaves {
                let l = &mut self.leaves[leaf];
                l.def.push(0);
                l.rep.push(0);
            }
        }
    }

    /// Ends a row; a full row group is written out.
    pub fn end_row(&mut self) -> Result<()> {
        self.rows += 1;
        if self.rows >= ROW_GROUP_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let path = self.path.clone();
        let err = |e: parquet::errors::ParquetError| pq_error(&path, e);
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| pq_error(&path, "already closed"))?;
        let mut group = writer.next_row_group().map_err(err)?;
        for leaf in &mut self.leaves {
            let mut column = group
                .next_column()
                .map_err(err)?
                .ok_or_else(|| pq_error(&path, "fewer columns than leaves"))?;
            let def = (leaf.max_def > 0).then_some(leaf.def.as_slice());
            let rep = (leaf.max_rep > 0).then_some(leaf.rep.as_slice());
            match &leaf.values {
                Values::Bool(v) => column.typed::<BoolType>().write_batch(v, def, rep),
                Values::I32(v) => column.typed::<Int32Type>().write_batch(v, def, rep),
                Values::I64(v) => column.typed::<Int64Type>().write_batch(v, def, rep),
                Values::Bytes(v) => column.typed::<ByteArrayType>().write_batch(v, def, rep),
            }
            .map_err(err)?;
            column.close().map_err(err)?;
            leaf.values.clear();
            leaf.def.clear();
            leaf.rep.clear();
        }
        group.close().map_err(err)?;
        self.written += self.rows as u64;
        self.rows = 0;
        Ok(())
    }

    /// Writes what is buffered and the footer; returns the number of rows.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        let path = self.path.clone();
        let writer = self
            .writer
            .take()
            .ok_or_else(|| pq_error(&path, "already closed"))?;
        let inner = writer.into_inner().map_err(|e| pq_error(&path, e))?;
        let file = inner
            .into_inner()
            .map_err(|e| Error::io(&path, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&path, e))?;
        Ok(self.written)
    }
}

/// A leaf of one row group, read whole.
#[derive(Debug, Clone)]
pub struct LeafData {
    pub values: Values,
    def: Vec<i16>,
    rep: Vec<i16>,
    max_def: i16,
    max_rep: i16,
    rows: usize,
}

/// How a row's list is: null, or the range of its items in the leaf's values.
pub type ListRow = Option<std::ops::Range<usize>>;

impl LeafData {
    /// For a top-level column: per row, the index of its value, or `None` for null.
    pub fn flat(&self) -> Vec<Option<usize>> {
        if self.max_def == 0 {
            return (0..self.rows).map(Some).collect();
        }
        let mut next = 0;
        self.def
            .iter()
            .map(|&d| {
                (d == self.max_def).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect()
    }

    /// For a list column: per row, `None` (null) or its items' range in `values`.
    pub fn lists(&self) -> Vec<ListRow> {
        let mut out: Vec<ListRow> = Vec::with_capacity(self.rows);
        let mut next = 0usize;
        for (&d, &r) in self.def.iter().zip(&self.rep) {
            if r == 0 {
                out.push(if d == 0 && self.max_def > 1 {
                    None
                } else {
                    Some(next..next)
                });
            }
            if d == self.max_def {
                next += 1;
                if let Some(Some(range)) = out.last_mut() {
                    range.end = next;
                }
            }
        }
        let _ = self.max_rep;
        out
    }

    pub fn i64_at(&self, i: usize) -> Option<i64> {
        match &self.values {
            Values::I64(v) => v.get(i).copied(),
            Values::I32(v) => v.get(i).map(|&x| i64::from(x)),
            _ => None,
        }
    }

    pub fn bool_at(&self, i: usize) -> Option<bool> {
        match &self.values {
            Values::Bool(v) => v.get(i).copied(),
            _ => None,
        }
    }

    pub fn str_at(&self, i: usize) -> Option<&str> {
        match &self.values {
            Values::Bytes(v) => v.get(i).and_then(|b| std::str::from_utf8(b.data()).ok()),
            _ => None,
        }
    }
}

/// Reads a Parquet table written by [`TableWriter`] (or any with the same leaves).
pub struct TableReader {
    path: PathBuf,
    reader: SerializedFileReader<File>,
    names: Vec<String>,
}

impl TableReader {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let reader = SerializedFileReader::new(file).map_err(|e| pq_error(path, e))?;
        let names = reader
            .metadata()
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|c| c.path().string())
            .collect();
        Ok(Self {
            path: path.to_owned(),
            reader,
            names,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Total rows.
    pub fn rows(&self) -> u64 {
        u64::try_from(self.reader.metadata().file_metadata().num_rows()).unwrap_or(0)
    }

    pub fn row_groups(&self) -> usize {
        self.reader.num_row_groups()
    }

    /// The index of the leaf at the dotted `path`.
    pub fn leaf(&self, path: &str) -> Result<usize> {
        self.names
            .iter()
            .position(|n| n == path)
            .ok_or_else(|| pq_error(&self.path, format!("no column {path}")))
    }

    /// Leaf `leaf` of row group `group`, whole.
    pub fn read(&self, group: usize, leaf: usize) -> Result<LeafData> {
        let err = |e: parquet::errors::ParquetError| pq_error(&self.path, e);
        let rg = self.reader.get_row_group(group).map_err(err)?;
        let rows = usize::try_from(rg.metadata().num_rows()).unwrap_or(0);
        let descr = rg.metadata().schema_descr().column(leaf);
        let (max_def, max_rep) = (descr.max_def_level(), descr.max_rep_level());
        let reader = rg.get_column_reader(leaf).map_err(err)?;
        let mut def = Vec::new();
        let mut rep = Vec::new();
        let values = match reader {
            ColumnReader::BoolColumnReader(r) => {
                Values::Bool(read_all(r, rows, &mut def, &mut rep).map_err(err)?)
            }
            ColumnReader::Int32ColumnReader(r) => {
                Values::I32(read_all(r, rows, &mut def, &mut rep).map_err(err)?)
            }
            ColumnReader::Int64ColumnReader(r) => {
                Values::I64(read_all(r, rows, &mut def, &mut rep).map_err(err)?)
            }
            ColumnReader::ByteArrayColumnReader(r) => {
                Values::Bytes(read_all(r, rows, &mut def, &mut rep).map_err(err)?)
            }
            _ => return Err(pq_error(&self.path, "unsupported column type")),
        };
        Ok(LeafData {
            values,
            def,
            rep,
            max_def,
            max_rep,
            rows,
        })
    }
}

fn read_all<T: DataType>(
    mut reader: ColumnReaderImpl<T>,
    rows: usize,
    def: &mut Vec<i16>,
    rep: &mut Vec<i16>,
) -> parquet::errors::Result<Vec<T::T>> {
    let mut values = Vec::new();
    let mut read = 0;
    while read < rows {
        let (records, _, _) =
            reader.read_records(rows - read, Some(def), Some(rep), &mut values)?;
        if records == 0 {
            return Err(parquet::errors::ParquetError::General(format!(
                "the column ends after {read} of {rows} rows"
            )));
        }
        read += records;
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const SCHEMA: &str = "message t {
      required int64 id;
      optional binary name (STRING);
      required group tags (LIST) { repeated group list { required binary element (STRING); } }
      optional group pairs (LIST) {
        repeated group list { required group element { required binary a (STRING); required int32 b (INTEGER(16,true)); } }
      }
    }";

    #[test]
    fn rows_round_trip_through_levels() {
        let dir = std::env::temp_dir().join(format!("pq-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.parquet");
        let mut w = TableWriter::create(&path, SCHEMA).unwrap();
        let (id, name) = (w.leaf("id").unwrap(), w.leaf("name").unwrap());
        let tags = w.leaf("tags.list.element").unwrap();
        let (a, b) = (
            w.leaf("pairs.list.element.a").unwrap(),
            w.leaf("pairs.list.element.b").unwrap(),
        );
        type Row<'a> = (
            i64,
            Option<&'a str>,
            Vec<&'a str>,
            Option<Vec<(&'a str, i32)>>,
        );
        let rows: Vec<Row<'_>> = vec![
            (1, Some("x"), vec!["p", "q"], Some(vec![("u", 3), ("v", 4)])),
            (2, None, vec![], None),
            (3, Some("z"), vec!["r"], Some(vec![])),
        ];
        for (i, n, t, p) in &rows {
            w.flat(id, Some(Value::I64(*i)));
            w.flat(name, n.map(Value::Str));
            w.list(&[tags], Some(t.iter().map(|s| vec![Value::Str(s)])));
            w.list(
                &[a, b],
                p.as_ref()
                    .map(|p| p.iter().map(|(s, n)| vec![Value::Str(s), Value::I32(*n)])),
            );
            w.end_row().unwrap();
        }
        assert_eq!(w.finish().unwrap(), 3);

        let r = TableReader::open(&path).unwrap();
        assert_eq!(r.rows(), 3);
        let ids = r.read(0, r.leaf("id").unwrap()).unwrap();
        let got: Vec<_> = ids
            .flat()
            .into_iter()
            .map(|i| ids.i64_at(i.unwrap()))
            .collect();
        assert_eq!(got, [Some(1), Some(2), Some(3)]);
        let names = r.read(0, r.leaf("name").unwrap()).unwrap();
        let got: Vec<_> = names
            .flat()
            .into_iter()
            .map(|i| i.and_then(|i| names.str_at(i)))
            .collect();
        assert_eq!(got, [Some("x"), None, Some("z")]);
        let t = r.read(0, r.leaf("tags.list.element").unwrap()).unwrap();
        let got: Vec<Vec<&str>> = t
            .lists()
            .into_iter()
            .map(|l| l.unwrap().map(|i| t.str_at(i).unwrap()).collect())
            .collect();
        assert_eq!(got, [vec!["p", "q"], vec![], vec!["r"]]);
        let pa = r.read(0, r.leaf("pairs.list.element.a").unwrap()).unwrap();
        let pb = r.read(0, r.leaf("pairs.list.element.b").unwrap()).unwrap();
        let got: Vec<Option<Vec<(&str, i64)>>> = pa
            .lists()
            .into_iter()
            .map(|l| {
                l.map(|l| {
                    l.map(|i| (pa.str_at(i).unwrap(), pb.i64_at(i).unwrap()))
                        .collect()
                })
            })
            .collect();
        assert_eq!(got, [Some(vec![("u", 3), ("v", 4)]), None, Some(vec![])]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
