//! Reader for the legacy sqlitedict files `{wiki}.{name}.sqlite`.
//!
//! Each file has one table `unnamed(key TEXT PRIMARY KEY, value BLOB)` whose values are
//! pickles. These files carry no checksums, so the dataset's checksums stay empty, as
//! upstream reports `{}` for this backend.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::PublishedDataset;
use crate::error::{Error, Result};
use crate::published::{model_path, validate_wiki_id};
use crate::tables::{DatasetChecksums, TableKind, Tables};

/// Path of the sqlitedict file of `kind` for `wiki_id` inside `dir`.
pub fn sqlite_path(dir: &Path, wiki_id: &str, kind: TableKind) -> PathBuf {
    dir.join(format!("{wiki_id}.{}.sqlite", kind.name()))
}

/// Whether `dir` holds legacy sqlitedict files for `wiki_id`.
pub fn is_sqlite_dir(dir: &Path, wiki_id: &str) -> bool {
    sqlite_path(dir, wiki_id, TableKind::Anchors).is_file()
}

/// Reads the four sqlitedict files and the model of `wiki_id` in `dir`.
pub fn read_sqlite(dir: &Path, wiki_id: &str) -> Result<PublishedDataset> {
    validate_wiki_id(wiki_id)?;
    let mut tables = Tables::default();
    for kind in TableKind::ALL {
        let path = sqlite_path(dir, wiki_id, kind);
        read_table(&path, kind, &mut tables).map_err(|source| Error::Sqlite {
            path: path.clone(),
            source,
        })??;
    }
    let model = model_path(dir, wiki_id);
    let model_json = std::fs::read(&model).map_err(|e| Error::io(&model, e))?;
    Ok(PublishedDataset {
        tables,
        model_json,
        checksums: DatasetChecksums::default(),
    })
}

/// Outer error: SQLite; inner: row decoding.
///
/// `unnamed` must be an ordinary table: a view (possibly recursive, so endless) or a
/// virtual table is refused before any row is read. Every row takes at least a byte of
/// the file, so more rows than the file has bytes means the read is not of a table.
fn read_table(path: &Path, kind: TableKind, tables: &mut Tables) -> rusqlite::Result<Result<()>> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let schema: Option<(String, String)> = conn
        .query_row(
            "SELECT type, coalesce(sql, '') FROM sqlite_master WHERE name = 'unnamed'",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            other => Err(other),
        })?;
    let refuse = |reason: String| -> rusqlite::Result<Result<()>> {
        Ok(Err(Error::Row {
            path: path.to_owned(),
            line: 0,
            source: Box::new(Error::InvalidArgument(reason)),
        }))
    };
    match schema {
        Some((object, sql))
            if object == "table" && !sql.to_ascii_uppercase().contains("VIRTUAL") => {}
        Some((object, _)) => {
            return refuse(format!("\"unnamed\" is a {object}, not an ordinary table"));
        }
        None => return refuse("no table \"unnamed\"".into()),
    }
    let max_rows = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let mut stmt = conn.prepare("SELECT key, value FROM unnamed ORDER BY rowid")?;
    let mut rows = stmt.query([])?;
    let mut n = 0u64;
    while let Some(row) = rows.next()? {
        n += 1;
        if n > max_rows {
            return refuse(format!("more rows than the file has bytes ({max_rows})"));
        }
        let key: String = row.get(0)?;
        let value: Vec<u8> = row.get(1)?;
        if let Err(e) = tables.push_row(kind, key, &value) {
            return Ok(Err(Error::Row {
                path: path.to_owned(),
                line: n,
                source: Box::new(e),
            }));
        }
    }
    Ok(Ok(()))
}
