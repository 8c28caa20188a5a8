//! Readers for the published per-wiki files (`lr_{wiki}_*.sql.gz` + `{wiki}.linkmodel.json`).

use std::path::{Path, PathBuf};

use crate::checksum;
use crate::error::{Error, Result};
use crate::sqldump;
use crate::tables::{DatasetChecksums, TableKind, Tables};

/// Path of the dump of `kind` for `wiki_id` inside `dir`.
pub fn dump_path(dir: &Path, wiki_id: &str, kind: TableKind) -> PathBuf {
    dir.join(format!("lr_{wiki_id}_{}.sql.gz", kind.name()))
}

/// Path of the model file for `wiki_id` inside `dir`.
pub fn model_path(dir: &Path, wiki_id: &str) -> PathBuf {
    dir.join(format!("{wiki_id}.linkmodel.json"))
}

/// Whether `dir` looks like a published dataset directory for `wiki_id`.
pub fn is_published_dir(dir: &Path, wiki_id: &str) -> bool {
    dump_path(dir, wiki_id, TableKind::Anchors).is_file()
}

/// Everything a published directory holds for one wiki, checksums verified.
#[derive(Debug, Clone)]
pub struct PublishedDataset {
    /// The decoded tables.
    pub tables: Tables,
    /// The model JSON bytes.
    pub model_json: Vec<u8>,
    /// The verified sha256 of each source file.
    pub checksums: DatasetChecksums,
}

/// Reads and verifies the five published files of `wiki_id` in `dir`.
///
/// Every file is checked against its `.checksum` before it is parsed.
pub fn read_published(dir: &Path, wiki_id: &str) -> Result<PublishedDataset> {
    validate_wiki_id(wiki_id)?;
    let mut checksums = DatasetChecksums::default();
    let model = model_path(dir, wiki_id);
    checksums.model = Some(checksum::verify_file(&model)?);
    let model_json = std::fs::read(&model).map_err(|e| Error::io(&model, e))?;

    let mut tables = Tables::default();
    for kind in TableKind::ALL {
        let path = dump_path(dir, wiki_id, kind);
        let digest = checksum::verify_file(&path)?;
        let table = format!("lr_{wiki_id}_{}", kind.name());
        sqldump::read_dump(&path, &table, |row| {
            tables.push_row(kind, row.lookup, &row.value)
        })?;
        let slot = match kind {
            TableKind::Anchors => &mut checksums.anchors,
            TableKind::Redirects => &mut checksums.redirects,
            TableKind::PageIds => &mut checksums.pageids,
            TableKind::Vectors => &mut checksums.w2vfiltered,
        };
        *slot = Some(digest);
    }
    Ok(PublishedDataset {
        tables,
        model_json,
        checksums,
    })
}

/// Wiki ids are used in file names: accept only what the published index accepts
/// (`^[\w_-]+$`, ASCII here), so no id can name a path outside the directory.
pub fn validate_wiki_id(wiki_id: &str) -> Result<()> {
    let ok = !wiki_id.is_empty()
        && wiki_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "invalid wiki id {wiki_id:?}"
        )))
    }
}
