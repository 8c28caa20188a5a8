//! Writers for the published per-wiki files: `lr_{wiki}_{table}.sql.gz` (mysqldump text,
//! one `INSERT` per row, pickled values), `{wiki}.linkmodel.json`, and a `.checksum` for
//! each (`shasum -a 256` format).
//!
//! Output is deterministic: rows come sorted, the gzip header carries the file name and a
//! zero modification time, and nothing depends on the clock or the host.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::GzBuilder;
use sha2::{Digest, Sha256};
use wikisuggest_engine::checksum::to_hex;
use wikisuggest_engine::published::{dump_path, model_path, validate_wiki_id};
use wikisuggest_engine::tables::{DatasetChecksums, TableKind, Tables};

use crate::error::{BuildError, Result};
use crate::pickle;

/// Appends `bytes` as the inside of a MySQL string literal, with mysqldump's escapes.
pub fn escape_mysql(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        match b {
            0 => out.extend_from_slice(b"\\0"),
            b'\'' => out.extend_from_slice(b"\\'"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x1a => out.extend_from_slice(b"\\Z"),
            _ => out.push(b),
        }
    }
}

/// Writes a gzip file with a fixed header (the inner file name, modification time 0), so
/// its bytes depend on the content only.
fn write_gzip(
    path: &Path,
    level: Compression,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let inner_name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = File::create(path).map_err(|e| BuildError::io(path, e))?;
    let mut gz = GzBuilder::new()
        .filename(inner_name)
        .mtime(0)
        .write(BufWriter::with_capacity(1 << 20, file), level);
    fill(&mut gz).map_err(|e| BuildError::io(path, e))?;
    let mut w = gz.finish().map_err(|e| BuildError::io(path, e))?;
    w.flush().map_err(|e| BuildError::io(path, e))?;
    Ok(())
}

/// Writes `path.checksum` for `path` and returns the digest.
pub fn write_checksum(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| BuildError::io(path, e))?;
    let digest = to_hex(&Sha256::digest(&bytes));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut sum = path.as_os_str().to_owned();
    sum.push(".checksum");
    let sum = PathBuf::from(sum);
    std::fs::write(&sum, format!("{digest}  {name}\n")).map_err(|e| BuildError::io(&sum, e))?;
    Ok(digest)
}

/// Writes one table as a mysqldump file; `rows` yields `(lookup, pickle)` in id order.
fn write_table<'a>(
    path: &Path,
    level: Compression,
    table: &str,
    rows: impl Iterator<Item = (&'a str, Vec<u8>)>,
) -> Result<()> {
    write_gzip(path, level, |w| {
        // The header and footer mirror `mysqldump --skip-opt --no-create-info
        // --skip-extended-insert`; importers only execute the INSERT lines.
        writeln!(w, "-- wikisuggest dataset dump")?;
        writeln!(w, "--")?;
        writeln!(w, "-- Dumping data for table `{table}`")?;
        writeln!(w, "--")?;
        writeln!(w)?;
        let mut line = Vec::with_capacity(1 << 12);
        for (id, (lookup, value)) in rows.enumerate() {
            line.clear();
            line.extend_from_slice(
                format!("INSERT INTO `{table}` VALUES ({},'", id + 1).as_bytes(),
            );
            escape_mysql(&mut line, lookup.as_bytes());
            line.extend_from_slice(b"','");
            escape_mysql(&mut line, &value);
            line.extend_from_slice(b"');\n");
            w.write_all(&line)?;
        }
        writeln!(w)?;
        writeln!(w, "-- Dump completed")?;
        Ok(())
    })
}

/// Writes the five published files of `wiki_id` (tables sorted by key, as they come from
/// the builder) and their checksums into `dir`. Returns the checksums.
pub fn write_published(
    dir: &Path,
    wiki_id: &str,
    tables: &Tables,
    model_json: &[u8],
) -> Result<DatasetChecksums> {
    write_published_with(dir, wiki_id, tables, model_json, Compression::new(9))
}

/// [`write_published`] at another gzip level (the benchmarks write gigabytes at level 1).
pub fn write_published_with(
    dir: &Path,
    wiki_id: &str,
    tables: &Tables,
    model_json: &[u8],
    level: Compression,
) -> Result<DatasetChecksums> {
    validate_wiki_id(wiki_id)?;
    std::fs::create_dir_all(dir).map_err(|e| BuildError::io(dir, e))?;
    let mut sums = DatasetChecksums::default();
    for kind in TableKind::ALL {
        let path = dump_path(dir, wiki_id, kind);
        let table = format!("lr_{wiki_id}_{}", kind.name());
        match kind {
            TableKind::Anchors => write_table(
                &path,
                level,
                &table,
                tables
                    .anchors
                    .iter()
                    .map(|(k, c)| (k.as_str(), pickle::dumps_str_int_dict(c))),
            )?,
            TableKind::Redirects => write_table(
                &path,
                level,
                &table,
                tables
                    .redirects
                    .iter()
                    .map(|(k, t)| (k.as_str(), pickle::dumps_str(t))),
            )?,
            TableKind::PageIds => write_table(
                &path,
                level,
                &table,
                tables
                    .pageids
                    .iter()
                    .map(|(k, id)| (k.as_str(), pickle::dumps_int(*id))),
            )?,
            TableKind::Vectors => {
                let v = &tables.vectors;
                write_table(
                    &path,
                    level,
                    &table,
                    v.keys.iter().enumerate().map(|(i, k)| {
                        (
                            k.as_str(),
                            pickle::dumps_f32_array(v.row(i).unwrap_or_default()),
                        )
                    }),
                )?;
            }
        }
        let digest = write_checksum(&path)?;
        let slot = match kind {
            TableKind::Anchors => &mut sums.anchors,
            TableKind::Redirects => &mut sums.redirects,
            TableKind::PageIds => &mut sums.pageids,
            TableKind::Vectors => &mut sums.w2vfiltered,
        };
        *slot = Some(digest);
    }
    let model = model_path(dir, wiki_id);
    std::fs::write(&model, model_json).map_err(|e| BuildError::io(&model, e))?;
    sums.model = Some(write_checksum(&model)?);
    Ok(sums)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wikisuggest_engine::sqldump::parse_insert;

    #[test]
    fn escapes_round_trip_through_the_dump_parser() {
        let lookup = "it's \"q\" \\ é";
        let value: Vec<u8> = (0u8..=255).collect();
        let mut line = b"INSERT INTO `t` VALUES (7,'".to_vec();
        escape_mysql(&mut line, lookup.as_bytes());
        line.extend_from_slice(b"','");
        escape_mysql(&mut line, &value);
        line.extend_from_slice(b"');\n");
        assert!(!line[..line.len() - 1].contains(&b'\n'));
        let rows = parse_insert(&line, "t").unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].id, 7);
        assert_eq!(rows[0].lookup, lookup);
        assert_eq!(rows[0].value, value);
    }
}
