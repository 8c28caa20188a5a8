//! Reader for the legacy sqlitedict files `{wiki}.{name}.sqlite` (spec §5.5).
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
fn read_table(path: &Path, kind: TableKind, tables: &mut Tables) -> rusqlite::Result<Result<()>> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let mut stmt = conn.prepare("SELECT key, value FROM unnamed ORDER BY rowid")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let key: String = row.get(0)?;
        let value: Vec<u8> = row.get(1)?;
        if let Err(e) = tables.push_row(kind, key, &value) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(()))
}
