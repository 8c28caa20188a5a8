//! Readers of the published formats, on the real parity datasets.

// Test support code: failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};
use wikisuggest_engine::published::read_published;
use wikisuggest_engine::{Dataset, DatasetSource, Error, PublishedDataset};

use common::{gunzip, gz, parity_copy, parity_dir, py_json_str, rewrite_checksum, small_fixtures};

fn parity() -> PublishedDataset {
    read_published(&parity_dir(), "enwiki").unwrap()
}

/// The candidates of `anchor` in `ds`, as (title, count) pairs.
fn candidates(ds: &Dataset, anchor: &str) -> Vec<(String, u32)> {
    ds.anchor_candidates(anchor)
        .unwrap()
        .unwrap()
        .iter()
        .map(|c| (c.title.to_owned(), c.count))
        .collect()
}

#[test]
fn row_counts_first_row_and_checksums() {
    let data = parity();
    let t = &data.tables;
    assert_eq!(t.anchors.len(), 20_818);
    assert_eq!(t.redirects.len(), 99);
    assert_eq!(t.pageids.len(), 21_356);
    assert_eq!(t.vectors.keys.len(), 21_356);
    assert_eq!(t.vectors.dim, 50);
    assert_eq!(t.anchors[0].0, "!");
    assert_eq!(t.anchors[0].1, vec![("Exclamation mark".to_owned(), 1)]);
    let pairs: usize = t.anchors.iter().map(|(_, c)| c.len()).sum();
    assert_eq!(pairs, 21_843);
    assert_eq!(t.anchors.iter().filter(|(_, c)| c.len() > 10).count(), 2);

    // Each checksum is the first field of the published .checksum file.
    let read = |f: &str| {
        let text = std::fs::read_to_string(parity_dir().join(format!("{f}.checksum"))).unwrap();
        text.split_whitespace().next().unwrap().to_owned()
    };
    let c = &data.checksums;
    for (checksum, file) in [
        (&c.anchors, "lr_enwiki_anchors.sql.gz"),
        (&c.redirects, "lr_enwiki_redirects.sql.gz"),
        (&c.pageids, "lr_enwiki_pageids.sql.gz"),
        (&c.w2vfiltered, "lr_enwiki_w2vfiltered.sql.gz"),
        (&c.model, "enwiki.linkmodel.json"),
    ] {
        assert_eq!(checksum.as_deref(), Some(read(file).as_str()), "{file}");
    }
    assert_eq!(
        c.to_map().keys().copied().collect::<Vec<_>>(),
        ["anchors", "model", "pageids", "redirects", "w2vfiltered"]
    );
}

#[test]
fn candidate_order_is_preserved() {
    // The producer wrote candidates by count descending, then title by code point; the
    // reader must keep that order, not re-sort or hash it.
    let data = parity();
    let mut checked = 0;
    for (anchor, cands) in &data.tables.anchors {
        for w in cands.windows(2) {
            let ok = w[0].1 > w[1].1 || (w[0].1 == w[1].1 && w[0].0 < w[1].0);
            assert!(ok, "{anchor:?}: {:?} before {:?}", w[0], w[1]);
            checked += 1;
        }
    }
    assert!(checked > 1000);
}

/// sha256 over the rows, serialised as the fixture builder serialises its independent
/// Python decode (`pickle.loads`) of the same dumps.
fn digest<'a>(lines: impl Iterator<Item = (&'a str, String)>) -> (usize, String) {
    let mut lines: Vec<(&str, String)> = lines.collect();
    // By key (code point order = UTF-8 byte order), as Python's sorted().
    lines.sort();
    let mut h = Sha256::new();
    for (_, l) in &lines {
        h.update(l.as_bytes());
        h.update(b"\n");
    }
    (
        lines.len(),
        wikisuggest_engine::checksum::to_hex(&h.finalize()),
    )
}

#[test]
fn rows_match_an_independent_python_decode() {
    let data = parity();
    let t = &data.tables;
    let expected: BTreeMap<String, serde_json::Value> = serde_json::from_slice(
        &std::fs::read(small_fixtures().join("parity_digest.json")).unwrap(),
    )
    .unwrap();
    let anchors = digest(t.anchors.iter().map(|(k, c)| {
        let items: Vec<String> = c
            .iter()
            .map(|(t, n)| format!("[{}, {n}]", py_json_str(t)))
            .collect();
        (
            k.as_str(),
            format!("[{}, [{}]]", py_json_str(k), items.join(", ")),
        )
    }));
    let redirects = digest(t.redirects.iter().map(|(k, v)| {
        (
            k.as_str(),
            format!("[{}, {}]", py_json_str(k), py_json_str(v)),
        )
    }));
    let pageids = digest(
        t.pageids
            .iter()
            .map(|(k, v)| (k.as_str(), format!("[{}, {v}]", py_json_str(k)))),
    );
    let vectors = digest(t.vectors.keys.iter().enumerate().map(|(i, k)| {
        let bits: Vec<String> = t
            .vectors
            .row(i)
            .unwrap()
            .iter()
            .map(|v| v.to_bits().to_string())
            .collect();
        (
            k.as_str(),
            format!("[{}, [{}]]", py_json_str(k), bits.join(", ")),
        )
    }));
    for (name, (rows, sha)) in [
        ("anchors", anchors),
        ("redirects", redirects),
        ("pageids", pageids),
        ("w2vfiltered", vectors),
    ] {
        assert_eq!(expected[name]["rows"], rows, "{name}");
        assert_eq!(expected[name]["sha256"], sha.as_str(), "{name}");
    }
}

#[test]
fn native_conversion_round_trips_every_row() {
    let data = parity();
    let out = common::temp_dir("convert");
    let path = wikisuggest_engine::convert(&parity_dir(), "enwiki", &out).unwrap();
    assert_eq!(path, out.join("enwiki.linkdata"));
    let native = Dataset::open(&out, "enwiki").unwrap();
    assert_eq!(native.info().source, DatasetSource::Native(path.clone()));
    native.verify().unwrap();
    let in_memory = Dataset::open(&parity_dir(), "enwiki").unwrap();
    assert_eq!(
        in_memory.info().source,
        DatasetSource::Published(parity_dir())
    );

    for ds in [&native, &in_memory] {
        let t = &data.tables;
        let info = ds.info();
        assert_eq!(
            (
                info.anchors,
                info.redirects,
                info.pages,
                info.vectors,
                info.dim,
                info.candidates
            ),
            (20_818, 99, 21_356, 21_356, 50, 21_843)
        );
        assert_eq!(info.model_trees, 100);
        assert_eq!(ds.checksums(), &data.checksums);
        assert_eq!(ds.model_json(), &data.model_json[..]);
        for (anchor, cands) in &t.anchors {
            assert_eq!(&candidates(ds, anchor), cands, "{anchor:?}");
        }
        for (from, to) in &t.redirects {
            assert_eq!(ds.redirect(from).unwrap(), Some(to.as_str()));
        }
        for (title, id) in &t.pageids {
            assert_eq!(ds.page_id(title).unwrap(), Some(*id));
            assert!(ds.has_page(title).unwrap());
            // Articles are not redirects.
            assert_eq!(ds.redirect(title).unwrap(), None);
        }
        for (i, title) in t.vectors.keys.iter().enumerate() {
            let v = ds.vector(title).unwrap().unwrap().to_vec();
            assert_eq!(
                v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                t.vectors
                    .row(i)
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect::<Vec<_>>()
            );
        }
        // Prefix look-ups answer like single ones, including ends that are not character
        // boundaries or go backwards (false).
        for (anchor, _) in t.anchors.iter().step_by(97) {
            let text = format!("{anchor} x");
            let mut ends: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
            ends.extend([text.len(), anchor.len(), 1]);
            let mut answers = Vec::new();
            ds.has_anchor_prefixes(&text, &ends, &mut answers).unwrap();
            let mut hashed = 0;
            let single: Vec<bool> = ends
                .iter()
                .map(|&end| {
                    let ok = end >= hashed && text.get(..end).is_some();
                    if ok {
                        hashed = end;
                    }
                    ok && ds.has_anchor(&text[..end]).unwrap()
                })
                .collect();
            assert_eq!(answers, single, "{text:?}");
            // The anchor itself is one of the prefixes, and is found.
            let whole = ends.iter().position(|&e| e == anchor.len()).unwrap();
            assert!(answers[whole], "{anchor:?}");
            assert_eq!(answers[ends.len() - 2..], [false, false]);
        }
        // Misses.
        assert!(!ds.has_anchor("no such anchor \u{1f600}").unwrap());
        assert!(ds.anchor_candidates("").unwrap().is_none());
        assert!(!ds.has_page("No such page").unwrap());
        assert!(ds.vector("No such page").unwrap().is_none());
        // Redirect sources are titles but not pages.
        let (from, _) = &t.redirects[0];
        assert!(!ds.has_page(from).unwrap());
        // Full iteration sees every anchor once, in byte order.
        let mut seen = Vec::new();
        ds.for_each_anchor(|a, c| {
            assert!(!c.is_empty());
            seen.push(a.to_owned());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), t.anchors.len());
        assert!(seen.windows(2).all(|w| w[0] < w[1]));
    }
}

#[test]
fn checksum_mismatch_names_the_file() {
    let dir = parity_copy("mismatch");
    let path = dir.join("lr_enwiki_redirects.sql.gz");
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    match Dataset::open(&dir, "enwiki") {
        Err(Error::ChecksumMismatch {
            path: p,
            expected,
            actual,
        }) => {
            assert_eq!(p, path);
            assert_ne!(expected, actual);
            assert!(
                Error::ChecksumMismatch {
                    path: p,
                    expected,
                    actual
                }
                .to_string()
                .contains("lr_enwiki_redirects.sql.gz")
            );
        }
        other => panic!("expected a checksum mismatch, got {other:?}"),
    }
    // A malformed .checksum file is its own error.
    std::fs::write(dir.join("enwiki.linkmodel.json.checksum"), "nothex  x\n").unwrap();
    assert!(matches!(
        Dataset::open(&dir, "enwiki"),
        Err(Error::BadChecksumFile { .. })
    ));
}

#[test]
fn truncated_and_corrupt_dumps_are_typed_errors() {
    let dir = parity_copy("corrupt-dumps");
    let path = dir.join("lr_enwiki_redirects.sql.gz");
    let original = std::fs::read(&path).unwrap();
    let text = gunzip(&path);

    // Truncated gzip stream.
    std::fs::write(&path, &original[..original.len() / 2]).unwrap();
    rewrite_checksum(&path);
    assert!(matches!(
        Dataset::open(&dir, "enwiki"),
        Err(Error::Io { .. })
    ));

    // Not gzip at all.
    std::fs::write(&path, b"INSERT INTO nothing").unwrap();
    rewrite_checksum(&path);
    assert!(matches!(
        Dataset::open(&dir, "enwiki"),
        Err(Error::Io { .. })
    ));

    // A cut INSERT line: an SQL error naming the line.
    let cut = text.iter().rposition(|&b| b == b')').unwrap();
    std::fs::write(&path, gz(&text[..cut])).unwrap();
    rewrite_checksum(&path);
    match Dataset::open(&dir, "enwiki") {
        Err(Error::SqlDump { line, .. }) => assert!(line > 10),
        other => panic!("expected an SQL error, got {other:?}"),
    }

    // A value that is not a pickle: a typed row error.
    let bad = String::from_utf8_lossy(&text).replacen("VALUES (1,", "VALUES (1,'x','junk'),(1,", 1);
    std::fs::write(&path, gz(bad.as_bytes())).unwrap();
    rewrite_checksum(&path);
    match Dataset::open(&dir, "enwiki") {
        Err(Error::Row { path, source, .. }) => {
            assert!(path.ends_with("lr_enwiki_redirects.sql.gz"));
            match *source {
                Error::BadRow {
                    table: "redirects",
                    key,
                    ..
                } => assert_eq!(key, "x"),
                other => panic!("expected a bad row, got {other:?}"),
            }
        }
        other => panic!("expected a bad row, got {other:?}"),
    }

    // Wrong table name inside a file.
    let renamed =
        String::from_utf8_lossy(&text).replace("lr_enwiki_redirects", "lr_other_redirects");
    std::fs::write(&path, gz(renamed.as_bytes())).unwrap();
    rewrite_checksum(&path);
    assert!(matches!(
        Dataset::open(&dir, "enwiki"),
        Err(Error::SqlDump { .. })
    ));

    // Duplicate keys: the first row twice (bytes kept exact: the values are binary).
    let at = text.windows(11).position(|w| w == b"INSERT INTO").unwrap();
    let len = text[at..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut doubled = text[..at + len].to_vec();
    doubled.extend_from_slice(&text[at..]);
    std::fs::write(&path, gz(&doubled)).unwrap();
    rewrite_checksum(&path);
    match Dataset::open(&dir, "enwiki") {
        Err(Error::DuplicateKey {
            table: "redirects", ..
        }) => {}
        other => panic!("expected a duplicate key, got {other:?}"),
    }

    // Missing files.
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(
        Dataset::open(&dir, "enwiki"),
        Err(Error::Io { .. })
    ));
    assert!(matches!(
        Dataset::open(&dir, "dewiki"),
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        Dataset::open(&dir, "../x"),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn truncated_pickles_are_typed_errors() {
    // Every prefix of every kind of real value fails cleanly.
    let dir = parity_dir();
    for (name, table) in [
        ("anchors", "lr_enwiki_anchors"),
        ("redirects", "lr_enwiki_redirects"),
        ("pageids", "lr_enwiki_pageids"),
        ("w2vfiltered", "lr_enwiki_w2vfiltered"),
    ] {
        let mut values = Vec::new();
        wikisuggest_engine::sqldump::read_dump(
            &dir.join(format!("{table}.sql.gz")),
            table,
            |row| {
                if values.len() < 3 {
                    values.push(row.value);
                }
                Ok(())
            },
        )
        .unwrap();
        for v in values {
            assert!(wikisuggest_engine::pickle::loads(&v).is_ok(), "{name}");
            for cut in 0..v.len() {
                assert!(
                    wikisuggest_engine::pickle::loads(&v[..cut]).is_err(),
                    "{name} cut at {cut}"
                );
            }
            // Bit flips: errors or other values, never a panic.
            let mut rng = common::Rng(0x9e37_79b9_7f4a_7c15 ^ v.len() as u64);
            for _ in 0..2000 {
                let mut w = v.clone();
                let i = rng.below(w.len());
                w[i] ^= 1 << rng.below(8);
                let _ = wikisuggest_engine::pickle::loads(&w);
            }
        }
    }
}

#[cfg(feature = "sqlite")]
#[test]
fn legacy_sqlite_files_read_like_the_dumps() {
    use wikisuggest_engine::sqldump::read_dump;
    let dir = common::temp_dir("sqlite");
    // sqlitedict layout: table "unnamed", key TEXT PRIMARY KEY, value BLOB.
    for name in ["anchors", "redirects", "pageids", "w2vfiltered"] {
        let conn = rusqlite::Connection::open(dir.join(format!("enwiki.{name}.sqlite"))).unwrap();
        conn.execute_batch("CREATE TABLE unnamed (key TEXT PRIMARY KEY, value BLOB); BEGIN;")
            .unwrap();
        let table = format!("lr_enwiki_{name}");
        read_dump(
            &parity_dir().join(format!("{table}.sql.gz")),
            &table,
            |row| {
                conn.execute(
                    "INSERT INTO unnamed (key, value) VALUES (?1, ?2)",
                    rusqlite::params![row.lookup, row.value],
                )
                .unwrap();
                Ok(())
            },
        )
        .unwrap();
        conn.execute_batch("COMMIT;").unwrap();
    }
    std::fs::copy(
        parity_dir().join("enwiki.linkmodel.json"),
        dir.join("enwiki.linkmodel.json"),
    )
    .unwrap();
    let ds = Dataset::open(&dir, "enwiki").unwrap();
    assert_eq!(ds.info().source, DatasetSource::Sqlite(dir.to_path_buf()));
    assert!(ds.checksums().to_map().is_empty());
    let data = parity();
    for (anchor, cands) in data.tables.anchors.iter().step_by(7) {
        assert_eq!(&candidates(&ds, anchor), cands);
    }
    assert_eq!(ds.info().vectors, 21_356);
}
