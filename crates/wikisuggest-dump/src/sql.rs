//! The reader of MediaWiki's SQL table dumps (`<wiki>-<date>-<table>.sql.gz`), as mysqldump
//! writes them: a `CREATE TABLE` statement naming the columns, then `INSERT INTO … VALUES
//! (…),(…);` lines of many rows each.
//!
//! Columns are found by name in the `CREATE TABLE` statement, so a table that gains or
//! reorders columns between MediaWiki versions is still read right. Lines are split on `\n`
//! as bytes (string values are binary: titles are `varbinary`), each at most
//! [`MAX_LINE_BYTES`] long; values are handed out unescaped, one row at a time, so memory
//! does not grow with the table.

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::DumpError;

/// Longest line accepted (mysqldump writes about 1 MiB per `INSERT`); a longer one is an
/// error naming its line, never an allocation of its size.
pub const MAX_LINE_BYTES: u64 = 64 << 20;

/// One value of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue<'a> {
    /// `NULL`.
    Null,
    /// A number, as written (`12`, `-3`, `0.5`, `1e-05`).
    Number(&'a [u8]),
    /// A string literal, unescaped (bytes: a `varbinary` column need not be UTF-8).
    Text(Cow<'a, [u8]>),
}

impl SqlValue<'_> {
    /// The value as an unsigned integer (a number, or a string holding one).
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Self::Number(n) => std::str::from_utf8(n).ok()?.parse().ok(),
            Self::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
            Self::Null => None,
        }
    }

    /// The value as a signed integer.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Self::Number(n) => std::str::from_utf8(n).ok()?.parse().ok(),
            Self::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
            Self::Null => None,
        }
    }

    /// The value's bytes (a string's, or a number's digits); `None` for `NULL`.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Number(n) => Some(n),
            Self::Text(t) => Some(t),
            Self::Null => None,
        }
    }

    /// The value as UTF-8 text; `None` for `NULL` or bytes that are not UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        self.as_bytes().and_then(|b| std::str::from_utf8(b).ok())
    }
}

/// The columns of a table, in the order of its `CREATE TABLE` statement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Columns(Vec<String>);

impl Columns {
    /// The position of the column `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.0.iter().position(|c| c == name)
    }

    /// The column names.
    pub fn names(&self) -> &[String] {
        &self.0
    }
}

/// Streams the rows of the table `table` in the dump at `path` (`.gz`, `.bz2` or plain) to
/// `on_row`, with the table's columns; `on_row` may stop the reading by returning an error,
/// which is handed back. Returns the number of rows read.
pub fn read_table<E: From<DumpError>>(
    path: &Path,
    table: &str,
    on_row: impl FnMut(&Columns, &[SqlValue<'_>]) -> Result<(), E>,
) -> Result<u64, E> {
    let source = crate::decompressed(path).map_err(|source| DumpError::Io {
        path: path.to_owned(),
        source,
    })?;
    read_table_from(source, path, table, on_row)
}

/// [`read_table`] of the decompressed bytes `source` reads (`path` names them in errors).
pub fn read_table_from<E: From<DumpError>>(
    source: impl Read,
    path: &Path,
    table: &str,
    mut on_row: impl FnMut(&Columns, &[SqlValue<'_>]) -> Result<(), E>,
) -> Result<u64, E> {
    let mut lines = Lines::new(source);
    let mut rows = 0u64;
    let mut columns: Option<Columns> = None;
    let error = |line: u64, reason: String| DumpError::Sql {
        path: path.to_owned(),
        line,
        reason,
    };
    let line_error = |e: LineError| match e {
        LineError::Io(source) => DumpError::Io {
            path: path.to_owned(),
            source,
        },
        LineError::TooLong { line } => error(line, e.to_string()),
    };
    while let Some((line_no, line)) = lines.next_line().map_err(line_error)? {
        if line.starts_with(b"CREATE TABLE") {
            let name = backticked(&line[b"CREATE TABLE".len()..])
                .ok_or_else(|| error(line_no, "CREATE TABLE without a table name".into()))?
                .to_owned();
            let cols = read_columns(&mut lines)
                .map_err(line_error)?
                .ok_or_else(|| {
                    error(
                        lines.number(),
                        format!("the CREATE TABLE statement of `{name}` does not end"),
                    )
                })?;
            if name == table {
                columns = Some(cols);
            }
            continue;
        }
        if !line.starts_with(b"INSERT INTO") {
            continue;
        }
        let mut insert = Insert::parse(line).map_err(|r| error(line_no, r))?;
        let Some(cols) = columns.as_ref() else {
            // An INSERT of another table, or before its CREATE TABLE.
            if insert.table() == table.as_bytes() {
                return Err(error(
                    line_no,
                    format!("rows of `{table}` before its CREATE TABLE statement"),
                )
                .into());
            }
            continue;
        };
        if insert.table() != table.as_bytes() {
            continue;
        }
        // One allocation per line (of many rows); the values borrow the line.
        let mut row: Vec<SqlValue<'_>> = Vec::with_capacity(cols.0.len());
        while insert.next_row(&mut row).map_err(|r| error(line_no, r))? {
            if row.len() != cols.0.len() {
                return Err(error(
                    line_no,
                    format!(
                        "a row of {} values where `{table}` has {} columns",
                        row.len(),
                        cols.0.len()
                    ),
                )
                .into());
            }
            rows += 1;
            on_row(cols, &row)?;
        }
    }
    if columns.is_none() {
        return Err(error(
            lines.number(),
            format!("no CREATE TABLE statement of `{table}`"),
        )
        .into());
    }
    Ok(rows)
}

/// The lines of a dump, split on `\n` as bytes, each at most [`MAX_LINE_BYTES`] long.
pub struct Lines<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    number: u64,
}

/// Why [`Lines::next_line`] gives no line.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// Reading (or decompressing) failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The line `line` is longer than [`MAX_LINE_BYTES`].
    #[error("line longer than {MAX_LINE_BYTES} bytes")]
    TooLong {
        /// Its 1-based number.
        line: u64,
    },
}

impl<R: Read> Lines<R> {
    /// The lines of what `source` reads.
    pub fn new(source: R) -> Self {
        Self {
            reader: BufReader::with_capacity(1 << 16, source),
            line: Vec::new(),
            number: 0,
        }
    }

    /// The next line (with its `\n`, if any) and its 1-based number; `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(u64, &[u8])>, LineError> {
        self.line.clear();
        let n = (&mut self.reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut self.line)?;
        self.number += 1;
        if n as u64 > MAX_LINE_BYTES {
            return Err(LineError::TooLong { line: self.number });
        }
        Ok((n > 0).then_some((self.number, self.line.as_slice())))
    }

    /// The number of the last line read (one past the last line at the end).
    pub fn number(&self) -> u64 {
        self.number
    }
}

/// Reads the column lines of a `CREATE TABLE` statement through its closing `)`; `None` if
/// the dump ends first.
fn read_columns<R: Read>(lines: &mut Lines<R>) -> Result<Option<Columns>, LineError> {
    let mut columns = Vec::new();
    while let Some((_, line)) = lines.next_line()? {
        let trimmed = line.trim_ascii_start();
        if trimmed.starts_with(b")") {
            return Ok(Some(Columns(columns)));
        }
        // Column lines start with the column's name in backticks; key lines do not.
        if trimmed.starts_with(b"`")
            && let Some(column) = backticked(trimmed)
        {
            columns.push(column.to_owned());
        }
    }
    Ok(None)
}

/// The first backticked name in `s`.
fn backticked(s: &[u8]) -> Option<&str> {
    let start = memchr::memchr(b'`', s)? + 1;
    let len = memchr::memchr(b'`', &s[start..])?;
    std::str::from_utf8(&s[start..start + len]).ok()
}

/// One `INSERT INTO `table` VALUES (…),(…);` line of a dump, read a row at a time.
pub struct Insert<'a> {
    parser: Parser<'a>,
    table: &'a [u8],
    done: bool,
}

impl<'a> Insert<'a> {
    /// Reads the head of the `INSERT` statement `line` (up to its first row).
    pub fn parse(line: &'a [u8]) -> Result<Self, String> {
        let mut parser = Parser { s: line, i: 0 };
        parser.expect(b"INSERT INTO `")?;
        let len = memchr::memchr(b'`', parser.rest()).ok_or("unterminated table name")?;
        let table = &parser.rest()[..len];
        parser.i += len + 1;
        // `INSERT INTO `t` (`a`,`b`) VALUES` names the columns; mysqldump without
        // --complete-insert does not, and the order is then the CREATE TABLE's.
        if parser.peek() == Some(b' ') && parser.s.get(parser.i + 1) == Some(&b'(') {
            return Err("INSERT with a column list is not supported".into());
        }
        parser.expect(b" VALUES ")?;
        Ok(Self {
            parser,
            table,
            done: false,
        })
    }

    /// The table the rows are of.
    pub fn table(&self) -> &'a [u8] {
        self.table
    }

    /// Reads the next row's values into `row` (emptied first): `false` after the last row.
    /// The statement must end with `;` and nothing but white space after it.
    pub fn next_row(&mut self, row: &mut Vec<SqlValue<'a>>) -> Result<bool, String> {
        row.clear();
        if self.done {
            return Ok(false);
        }
        let p = &mut self.parser;
        p.tuple(row)?;
        match p.peek() {
            Some(b',') => p.i += 1,
            Some(b';') => {
                p.i += 1;
                if !p.rest().iter().all(u8::is_ascii_whitespace) {
                    return Err("trailing characters after ';'".into());
                }
                self.done = true;
            }
            _ => return Err(format!("expected ',' or ';' at column {}", p.i + 1)),
        }
        Ok(true)
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a [u8] {
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

    /// One `(v, v, …)` tuple, its values pushed to `row`.
    fn tuple(&mut self, row: &mut Vec<SqlValue<'a>>) -> Result<(), String> {
        self.expect(b"(")?;
        if self.peek() == Some(b')') {
            self.i += 1;
            return Ok(());
        }
        loop {
            row.push(self.value()?);
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b')') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(format!("expected ',' or ')' at column {}", self.i + 1)),
            }
        }
    }

    fn value(&mut self) -> Result<SqlValue<'a>, String> {
        let rest = self.rest();
        if rest.starts_with(b"NULL") {
            self.i += 4;
            return Ok(SqlValue::Null);
        }
        if rest.starts_with(b"_binary ") {
            self.i += b"_binary ".len();
        }
        match self.peek() {
            Some(b'\'') => self.string(),
            Some(b'0') if self.s.get(self.i + 1) == Some(&b'x') => {
                self.i += 2;
                self.hex()
            }
            Some(b) if b == b'-' || b == b'+' || b == b'.' || b.is_ascii_digit() => {
                let len = self
                    .rest()
                    .iter()
                    .take_while(|&&c| {
                        c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E')
                    })
                    .count();
                let number = &self.rest()[..len];
                self.i += len;
                Ok(SqlValue::Number(number))
            }
            _ => Err(format!("expected a value at column {}", self.i + 1)),
        }
    }

    /// A `'…'` literal; borrowed when it holds no escape.
    fn string(&mut self) -> Result<SqlValue<'a>, String> {
        self.i += 1;
        let start = self.i;
        // The common case: no backslash and no doubled quote before the closing quote.
        if let Some(end) = memchr::memchr2(b'\'', b'\\', self.rest())
            && self.rest()[end] == b'\''
            && self.s.get(start + end + 1) != Some(&b'\'')
        {
            self.i = start + end + 1;
            return Ok(SqlValue::Text(Cow::Borrowed(&self.s[start..start + end])));
        }
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
                        other => out.push(other),
                    }
                }
                b'\'' if self.peek() == Some(b'\'') => {
                    self.i += 1;
                    out.push(b'\'');
                }
                b'\'' => return Ok(SqlValue::Text(Cow::Owned(out))),
                other => out.push(other),
            }
        }
    }

    fn hex(&mut self) -> Result<SqlValue<'a>, String> {
        let n = self
            .rest()
            .iter()
            .take_while(|b| b.is_ascii_hexdigit())
            .count();
        if n % 2 != 0 {
            return Err("odd number of hex digits".into());
        }
        let nibble = |c: u8| (c as char).to_digit(16).map_or(0, |d| d as u8);
        let out = self.rest()[..n]
            .chunks_exact(2)
            .map(|p| (nibble(p[0]) << 4) | nibble(p[1]))
            .collect();
        self.i += n;
        Ok(SqlValue::Text(Cow::Owned(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "-- MySQL dump 10.19\n\
DROP TABLE IF EXISTS `langlinks`;\n\
CREATE TABLE `langlinks` (\n\
  `ll_from` int(8) unsigned NOT NULL DEFAULT 0,\n\
  `ll_lang` varbinary(35) NOT NULL DEFAULT '',\n\
  `ll_title` varbinary(255) NOT NULL DEFAULT '',\n\
  PRIMARY KEY (`ll_from`,`ll_lang`),\n\
  KEY `ll_lang` (`ll_lang`,`ll_title`)\n\
) ENGINE=InnoDB DEFAULT CHARSET=binary;\n\
INSERT INTO `langlinks` VALUES (1,'de','Katze'),(1,'fr','Chat (animal)'),(2,'it','L\\'Aquila'),(3,'nl','It''s'),(4,'x',NULL);\n\
INSERT INTO `langlinks` VALUES (5,'sv',_binary 'Hund');\n\
-- Dump completed on 2026-06-01  0:00:00\n";

    fn rows(text: &str, table: &str) -> Result<Vec<Vec<String>>, DumpError> {
        let mut out = Vec::new();
        read_table_from(
            text.as_bytes(),
            Path::new("t.sql"),
            table,
            |_, row| -> Result<(), DumpError> {
                out.push(
                    row.iter()
                        .map(|v| match v {
                            SqlValue::Null => "NULL".to_owned(),
                            other => String::from_utf8_lossy(other.as_bytes().unwrap_or_default())
                                .into_owned(),
                        })
                        .collect(),
                );
                Ok(())
            },
        )?;
        Ok(out)
    }

    #[test]
    fn columns_come_from_the_create_table_statement() {
        let mut seen = None;
        read_table_from(
            DUMP.as_bytes(),
            Path::new("t.sql"),
            "langlinks",
            |cols, _| -> Result<(), DumpError> {
                seen = Some(cols.clone());
                Ok(())
            },
        )
        .unwrap();
        let cols = seen.unwrap();
        assert_eq!(cols.names(), ["ll_from", "ll_lang", "ll_title"]);
        assert_eq!(cols.index("ll_title"), Some(2));
    }

    #[test]
    fn rows_are_unescaped() {
        let got = rows(DUMP, "langlinks").unwrap();
        assert_eq!(got.len(), 6);
        assert_eq!(got[1], ["1", "fr", "Chat (animal)"]);
        assert_eq!(got[2], ["2", "it", "L'Aquila"]);
        assert_eq!(got[3], ["3", "nl", "It's"]);
        assert_eq!(got[4], ["4", "x", "NULL"]);
        assert_eq!(got[5], ["5", "sv", "Hund"]);
    }

    #[test]
    fn numbers_parse() {
        assert_eq!(SqlValue::Number(b"42").as_u64(), Some(42));
        assert_eq!(SqlValue::Number(b"-3").as_i64(), Some(-3));
        assert_eq!(SqlValue::Text(Cow::Borrowed(b"7")).as_u64(), Some(7));
        assert_eq!(SqlValue::Null.as_u64(), None);
    }

    #[test]
    fn malformed_dumps_are_errors() {
        let no_table = "INSERT INTO `langlinks` VALUES (1,'de','K');\n";
        assert!(rows(no_table, "langlinks").is_err());
        assert!(rows(DUMP, "page").is_err(), "no CREATE TABLE of page");
        for bad in [
            "INSERT INTO `langlinks` VALUES (1,'de','K')\n",
            "INSERT INTO `langlinks` VALUES (1,'de');\n",
            "INSERT INTO `langlinks` VALUES (1,'de','K\n",
            "INSERT INTO `langlinks` VALUES (x,'de','K');\n",
            "INSERT INTO `langlinks` VALUES (1,'de',0xabc);\n",
        ] {
            let text = DUMP.replace(
                "INSERT INTO `langlinks` VALUES (5,'sv',_binary 'Hund');\n",
                bad,
            );
            assert!(rows(&text, "langlinks").is_err(), "{bad}");
        }
    }
}
