//! Reader for the gzip-compressed mysqldump files of the published datasets.
//!
//! Each data line is `INSERT INTO `table` VALUES (id,'lookup','value');`. The value is a
//! binary blob written as a MySQL string literal, so lines are split on `\n` as bytes and
//! never decoded as text as a whole.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use crate::error::{Error, Result};

/// Longest line accepted in a dump (one `INSERT` row: the largest published rows are a
/// few hundred KiB). A longer line is an error naming it, not an allocation of its size.
pub const MAX_LINE_BYTES: u64 = 64 << 20;

/// Reads one line (through `\n`) into `line`, reading at most `max` bytes: `Ok(false)` at
/// the end of the input, `Err(())` if the line is longer than `max`.
pub(crate) fn read_line_bounded(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    max: u64,
) -> std::io::Result<Result<bool, ()>> {
    line.clear();
    let n = reader.by_ref().take(max + 1).read_until(b'\n', line)?;
    if n as u64 > max {
        return Ok(Err(()));
    }
    Ok(Ok(n > 0))
}

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
    let mut reader = BufReader::with_capacity(
        1 << 16,
        MultiGzDecoder::new(BufReader::with_capacity(1 << 16, compressed)),
    );
    let mut line = Vec::new();
    let mut line_no = 0u64;
    let mut rows = 0u64;
    loop {
        let more = read_line_bounded(&mut reader, &mut line, MAX_LINE_BYTES)
            .map_err(|e| Error::io(path, e))?;
        line_no += 1;
        match more {
            Ok(true) => {}
            Ok(false) => return Ok(rows),
            Err(()) => {
                return Err(Error::SqlDump {
                    path: path.to_owned(),
                    line: line_no,
                    reason: format!("line longer than {MAX_LINE_BYTES} bytes"),
                });
            }
        }
        if !line.starts_with(b"INSERT INTO") {
            continue;
        }
        let parsed = parse_insert(&line, table).map_err(|reason| Error::SqlDump {
            path: path.to_owned(),
            line: line_no,
            reason,
        })?;
        for row in parsed {
            rows += 1;
            on_row(row).map_err(|e| Error::Row {
                path: path.to_owned(),
                line: line_no,
                source: Box::new(e),
            })?;
        }
    }
}

/// Parses one `INSERT INTO` statement (with one or several value tuples) of `table`.
pub fn parse_insert(line: &[u8], table: &str) -> Result<Vec<SqlRow>, String> {
    let mut p = Parser { s: line, i: 0 };
    p.expect(b"INSERT INTO ")?;
    p.expect(b"`")?;
    let name_end = p
        .rest()
        .iter()
        .position(|&b| b == b'`')
        .ok_or("unterminated table name")?;
    let name = &p.rest()[..name_end];
    if name != table.as_bytes() {
        return Err(format!(
            "table `{}` where `{table}` was expected",
            String::from_utf8_lossy(name)
        ));
    }
    p.i += name_end + 1;
    p.expect(b" VALUES ")?;
    let mut rows = Vec::new();
    loop {
        p.expect(b"(")?;
        let id = p.integer()?;
        p.expect(b",")?;
        let lookup = p.literal()?;
        p.expect(b",")?;
        let value = p.literal()?;
        p.expect(b")")?;
        let lookup = String::from_utf8(lookup).map_err(|_| "lookup is not valid UTF-8")?;
        rows.push(SqlRow { id, lookup, value });
        match p.peek() {
            Some(b',') => p.i += 1,
            Some(b';') => break,
            _ => return Err(format!("expected ',' or ';' at column {}", p.i + 1)),
        }
    }
    p.i += 1;
    if !p.rest().iter().all(|b| b.is_ascii_whitespace()) {
        return Err("trailing characters after ';'".into());
    }
    Ok(rows)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &[u8] {
        self.s.get(self.i..).unwrap_or_default()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, lit: &[u8]) -> Result<(), String> {
        if self.rest().starts_with(lit) {
            self.i += lit.len();
            Ok(())
        } else {
            Err(format!(
                "expected {:?} at column {}",
                String::from_utf8_lossy(lit),
                self.i + 1
            ))
        }
    }

    fn integer(&mut self) -> Result<u64, String> {
        let digits = self
            .rest()
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let text = std::str::from_utf8(&self.rest()[..digits]).map_err(|e| e.to_string())?;
        let v = text
            .parse()
            .map_err(|_| format!("expected an unsigned integer at column {}", self.i + 1))?;
        self.i += digits;
        Ok(v)
    }

    /// A string literal (`'…'`, optionally `_binary '…'`) or a hex literal (`0x…`).
    fn literal(&mut self) -> Result<Vec<u8>, String> {
        if self.rest().starts_with(b"_binary ") {
            self.i += b"_binary ".len();
        }
        if self.rest().starts_with(b"0x") {
            self.i += 2;
            return self.hex_literal();
        }
        self.expect(b"'")?;
        let mut out = Vec::with_capacity(64);
        loop {
            let Some(b) = self.peek() else {
                return Err("unterminated string literal".into());
            };
            self.i += 1;
            match b {
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return Err("unterminated escape".into());
                    };
                    self.i += 1;
                    match e {
                        b'0' => out.push(0),
                        b'b' => out.push(0x08),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'Z' => out.push(0x1a),
                        // MySQL keeps the backslash of `\%` and `\_` (pattern escapes).
                        b'%' | b'_' => out.extend_from_slice(&[b'\\', e]),
                        // `\'`, `\"`, `\\` and any other `\x` stand for `x`.
                        other => out.push(other),
                    }
                }
                b'\'' => {
                    if self.peek() == Some(b'\'') {
                        self.i += 1;
                        out.push(b'\'');
                    } else {
                        return Ok(out);
                    }
                }
                other => out.push(other),
            }
        }
    }

    fn hex_literal(&mut self) -> Result<Vec<u8>, String> {
        let n = self
            .rest()
            .iter()
            .take_while(|b| b.is_ascii_hexdigit())
            .count();
        if n % 2 != 0 {
            return Err("odd number of hex digits".into());
        }
        let digits = &self.rest()[..n];
        let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8).unwrap_or(0);
        let out = digits
            .chunks_exact(2)
            .map(|p| nibble(p[0]) << 4 | nibble(p[1]))
            .collect();
        self.i += n;
        Ok(out)
    }
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
