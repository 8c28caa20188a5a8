//! Reader for the gzip-compressed mysqldump files of the published datasets.
//!
//! Each data line is `INSERT INTO `table` VALUES (id,'lookup','value');`. The value is a
//! binary blob written as a MySQL string literal, so lines are split on `\n` as bytes and
//! never decoded as text as a whole. Lines and statements are read by the dump crate's one
//! SQL dump parser ([`wikisuggest_dump::sql`]); this module gives the rows their three
//! columns.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;
use wikisuggest_dump::sql::{Insert, LineError, Lines, SqlValue};

use crate::error::{Error, Result};

pub use wikisuggest_dump::sql::MAX_LINE_BYTES;

/// One row of a dump table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlRow {
    /// The `id` column.
    pub id: u64,
    /// The `lookup` column (utf8mb4 text).
    pub lookup: String,
    /// The `value` column (binary).
    pub value: Vec<u8>,
}

/// Streams the rows of a `.sql.gz` dump of `table`, in file order, to `on_row`.
///
/// Only lines starting with `INSERT INTO` carry data; all others are skipped. Every gzip
/// member is read (`cat a.gz b.gz`, pigz and bgzip write several). Returns the number of
/// rows read.
pub fn read_dump(
    path: &Path,
    table: &str,
    on_row: impl FnMut(SqlRow) -> Result<()>,
) -> Result<u64> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    read_dump_from(file, path, table, on_row)
}

/// [`read_dump`] of the gzip bytes `compressed` reads (`path` names them in errors).
pub fn read_dump_from(
    compressed: impl Read,
    path: &Path,
    table: &str,
    mut on_row: impl FnMut(SqlRow) -> Result<()>,
) -> Result<u64> {
    let mut lines = Lines::new(MultiGzDecoder::new(BufReader::with_capacity(
        1 << 16,
        compressed,
    )));
    let mut rows = 0u64;
    let error = |line: u64, reason: String| Error::SqlDump {
        path: path.to_owned(),
        line,
        reason,
    };
    while let Some((line_no, line)) = lines.next_line().map_err(|e| match e {
        LineError::Io(source) => Error::io(path, source),
        LineError::TooLong { line } => error(line, e.to_string()),
    })? {
        if !line.starts_with(b"INSERT INTO") {
            continue;
        }
        let parsed = parse_insert(line, table).map_err(|reason| error(line_no, reason))?;
        for row in parsed {
            rows += 1;
            on_row(row).map_err(|e| Error::Row {
                path: path.to_owned(),
                line: line_no,
                source: Box::new(e),
            })?;
        }
    }
    Ok(rows)
}

/// Parses one `INSERT INTO` statement (with one or several value tuples) of `table`.
pub fn parse_insert(line: &[u8], table: &str) -> Result<Vec<SqlRow>, String> {
    let mut insert = Insert::parse(line)?;
    if insert.table() != table.as_bytes() {
        return Err(format!(
            "table `{}` where `{table}` was expected",
            String::from_utf8_lossy(insert.table())
        ));
    }
    let mut rows = Vec::new();
    let mut values = Vec::with_capacity(3);
    while insert.next_row(&mut values)? {
        rows.push(row_of(&mut values)?);
    }
    Ok(rows)
}

/// The row `(id, 'lookup', 'value')` of a tuple's values.
fn row_of(values: &mut Vec<SqlValue<'_>>) -> Result<SqlRow, String> {
    let count = values.len();
    let mut values = values.drain(..);
    let (
        Some(SqlValue::Number(id)),
        Some(SqlValue::Text(lookup)),
        Some(SqlValue::Text(value)),
        None,
    ) = (values.next(), values.next(), values.next(), values.next())
    else {
        return Err(format!(
            "expected a row (unsigned integer, string, string), got {count} values of other kinds"
        ));
    };
    let id = Some(id)
        .filter(|digits| digits.iter().all(u8::is_ascii_digit))
        .and_then(|digits| std::str::from_utf8(digits).ok()?.parse().ok())
        .ok_or("the id is not an unsigned integer")?;
    let lookup = String::from_utf8(lookup.into_owned()).map_err(|_| "lookup is not valid UTF-8")?;
    Ok(SqlRow {
        id,
        lookup,
        value: value.into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_quotes() {
        let line =
            b"INSERT INTO `t` VALUES (7,'a\\'b''c','\\0\\\\\\n\\r\\Z\\\"\\t\\b\\x\\%\\_');\n";
        let rows = parse_insert(line, "t").unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].id, 7);
        assert_eq!(rows[0].lookup, "a'b'c");
        assert_eq!(rows[0].value, b"\0\\\n\r\x1a\"\t\x08x\\%\\_".to_vec());
    }

    #[test]
    fn binary_prefix_hex_and_extended_insert() {
        let line = b"INSERT INTO `t` VALUES (1,'k',_binary 'v'),(2,'l',0x00ff);";
        let rows = parse_insert(line, "t").unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].value, b"v");
        assert_eq!(rows[1].value, vec![0, 0xff]);
    }

    #[test]
    fn malformed_lines() {
        for bad in [
            &b"INSERT INTO `u` VALUES (1,'k','v');"[..],
            b"INSERT INTO `t` VALUES (1,'k','v')",
            b"INSERT INTO `t` VALUES (1,'k','v",
            b"INSERT INTO `t` VALUES (x,'k','v');",
            b"INSERT INTO `t` VALUES (1,'k','v\\",
            b"INSERT INTO `t` VALUES (1,'\xff','v');",
            b"INSERT INTO `t` VALUES (1,'k',0xabc);",
            b"INSERT INTO `t` VALUES (1,'k','v'); junk",
            b"INSERT INTO `t",
        ] {
            assert!(
                parse_insert(bad, "t").is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
