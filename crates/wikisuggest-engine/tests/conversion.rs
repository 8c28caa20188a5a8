//! The streamed conversion of published files: the same bytes as the in-memory writer,
//! whatever the sort budget; progress, cancellation and failures leave nothing behind.

// Test support code: failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use wikisuggest_engine::native::{NativeInput, write_native};
use wikisuggest_engine::published::read_published;
use wikisuggest_engine::{ConvertOptions, ConvertPhase, Dataset, Error, convert_with};

use common::{gunzip, gz, parity_copy, parity_dir, rewrite_checksum, temp_dir};

/// What the in-memory path (all tables read, interned and written from memory) makes.
fn in_memory_file() -> Vec<u8> {
    let data = read_published(&parity_dir(), "enwiki").unwrap();
    let input =
        NativeInput::from_tables("enwiki", &data.tables, data.model_json, data.checksums).unwrap();
    let mut out = std::io::Cursor::new(Vec::new());
    write_native(&input, &mut out).unwrap();
    out.into_inner()
}

fn streamed(src: &Path, budget: usize) -> Result<Vec<u8>, Error> {
    let out = temp_dir("streamed-out");
    let options = ConvertOptions {
        sort_budget: budget,
        ..ConvertOptions::default()
    };
    let path = convert_with(src, "enwiki", &out, &options)?;
    let bytes = std::fs::read(&path).unwrap();
    // Only the finished file is left in the output folder.
    let names: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec!["enwiki.linkdata".to_owned()]);
    Ok(bytes)
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn streamed_conversion_writes_the_in_memory_writers_bytes_for_every_budget() {
    let expected = in_memory_file();
    // The default budget sorts in memory; small ones spill hundreds of runs and merge them
    // in several levels.
    for budget in [usize::MAX / 4, 1 << 20, 64 << 10, 4 << 10] {
        let got = streamed(&parity_dir(), budget).unwrap();
        assert!(got == expected, "budget {budget}: the files differ");
    }
    let out = temp_dir("open");
    let path = wikisuggest_engine::convert(&parity_dir(), "enwiki", &out).unwrap();
    let ds = Dataset::open_native(&path).unwrap();
    ds.verify().unwrap();
    assert_eq!(
        ds.checksums(),
        Dataset::open(&parity_dir(), "enwiki").unwrap().checksums()
    );
}

#[test]
fn progress_goes_through_the_phases_in_order_and_ends_complete() {
    let seen = Mutex::new(Vec::new());
    let report = |p: wikisuggest_engine::ConvertProgress| seen.lock().unwrap().push(p);
    let out = temp_dir("progress");
    let options = ConvertOptions {
        sort_budget: 64 << 10,
        progress: Some(&report),
        cancel: None,
        work_budget: None,
    };
    convert_with(&parity_dir(), "enwiki", &out, &options).unwrap();
    let seen = seen.into_inner().unwrap();
    let mut phases: Vec<ConvertPhase> = seen.iter().map(|p| p.phase).collect();
    phases.dedup();
    assert_eq!(
        phases,
        vec![
            ConvertPhase::Read,
            ConvertPhase::Titles,
            ConvertPhase::Anchors,
            ConvertPhase::Index,
            ConvertPhase::Write,
            ConvertPhase::Verify
        ]
    );
    assert!(seen.iter().all(|p| p.done <= p.total));
    let read: Vec<_> = seen
        .iter()
        .filter(|p| p.phase == ConvertPhase::Read)
        .collect();
    let sources: u64 = ["anchors", "redirects", "pageids", "w2vfiltered"]
        .iter()
        .map(|t| {
            std::fs::metadata(parity_dir().join(format!("lr_enwiki_{t}.sql.gz")))
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(read.last().unwrap().total, sources);
    assert_eq!(read.last().unwrap().done, sources);
    let last = seen.last().unwrap();
    assert_eq!((last.phase, last.done), (ConvertPhase::Verify, last.total));
    let written = seen
        .iter()
        .rfind(|p| p.phase == ConvertPhase::Write)
        .unwrap();
    assert_eq!(written.done, written.total);
}

#[test]
fn a_cancelled_conversion_stops_and_removes_its_work_files() {
    for stop_in in [
        ConvertPhase::Read,
        ConvertPhase::Titles,
        ConvertPhase::Write,
    ] {
        let out = temp_dir("cancel");
        let cancel = AtomicBool::new(false);
        let report = |p: wikisuggest_engine::ConvertProgress| {
            if p.phase == stop_in {
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        };
        let options = ConvertOptions {
            sort_budget: 64 << 10,
            progress: Some(&report),
            cancel: Some(&cancel),
            work_budget: None,
        };
        let err = convert_with(&parity_dir(), "enwiki", &out, &options).unwrap_err();
        assert!(matches!(err, Error::Cancelled), "{stop_in:?}: {err:?}");
        assert!(
            leftovers(&out).is_empty(),
            "{stop_in:?}: {:?}",
            leftovers(&out)
        );
    }
}

#[test]
fn damaged_sources_give_the_errors_of_the_in_memory_reader_and_leave_nothing() {
    // A flipped byte in the middle of a dump: the checksum mismatch is what is reported,
    // not the gzip or parse error it causes.
    let src = parity_copy("corrupt");
    let anchors = src.join("lr_enwiki_anchors.sql.gz");
    let mut bytes = std::fs::read(&anchors).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    std::fs::write(&anchors, &bytes).unwrap();
    let out = temp_dir("corrupt-out");
    let err = wikisuggest_engine::convert(&src, "enwiki", &out).unwrap_err();
    assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err:?}");
    assert!(leftovers(&out).is_empty());

    // A repeated key (the checksum rewritten to match) is the in-memory writer's error.
    let src = parity_copy("duplicate");
    let pageids = src.join("lr_enwiki_pageids.sql.gz");
    let text = gunzip(&pageids);
    let first = text
        .split(|&b| b == b'\n')
        .find(|l| l.starts_with(b"INSERT INTO"))
        .unwrap()
        .to_vec();
    let mut doubled = text.clone();
    doubled.extend_from_slice(&first);
    doubled.push(b'\n');
    std::fs::write(&pageids, gz(&doubled)).unwrap();
    rewrite_checksum(&pageids);
    let err = wikisuggest_engine::convert(&src, "enwiki", &out).unwrap_err();
    assert!(
        matches!(
            err,
            Error::DuplicateKey {
                table: "pageids",
                ..
            }
        ),
        "{err:?}"
    );
    let in_memory = Dataset::open(&src, "enwiki").unwrap_err();
    assert!(matches!(
        in_memory,
        Error::DuplicateKey {
            table: "pageids",
            ..
        }
    ));
    assert!(leftovers(&out).is_empty());

    // A dump cut short.
    let src = parity_copy("truncated");
    let vectors = src.join("lr_enwiki_w2vfiltered.sql.gz");
    let bytes = std::fs::read(&vectors).unwrap();
    std::fs::write(&vectors, &bytes[..bytes.len() / 3]).unwrap();
    rewrite_checksum(&vectors);
    assert!(wikisuggest_engine::convert(&src, "enwiki", &out).is_err());
    assert!(leftovers(&out).is_empty());
}

#[test]
fn work_files_are_held_to_the_space_reserved_for_them() {
    let sources: u64 = std::fs::read_dir(parity_dir())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    // Six times the sources is what the fetcher reserves: the parity dataset fits.
    let out = temp_dir("work-budget-fits");
    let options = ConvertOptions {
        sort_budget: 64 << 10,
        work_budget: Some(6 * sources),
        ..ConvertOptions::default()
    };
    convert_with(&parity_dir(), "enwiki", &out, &options).unwrap();
    assert_eq!(leftovers(&out), vec!["enwiki.linkdata".to_owned()]);

    // Less is refused, with the typed error, and nothing is left.
    for budget in [1_000, sources / 2, sources * 2] {
        let out = temp_dir("work-budget-short");
        let options = ConvertOptions {
            sort_budget: 64 << 10,
            work_budget: Some(budget),
            ..ConvertOptions::default()
        };
        let err = convert_with(&parity_dir(), "enwiki", &out, &options).unwrap_err();
        assert!(matches!(err, Error::TooLarge(_)), "{budget}: {err:?}");
        assert!(
            err.to_string().contains(&format!("{budget} bytes")),
            "{err}"
        );
        assert!(leftovers(&out).is_empty(), "{:?}", leftovers(&out));
    }
}

#[test]
fn temporary_folders_are_removed_when_dropped_even_by_a_panic() {
    let dir = temp_dir("dropped");
    std::fs::create_dir_all(dir.join("a/b")).unwrap();
    std::fs::write(dir.join("a/b/file"), b"x").unwrap();
    let path = dir.to_path_buf();
    drop(dir);
    assert!(!path.exists(), "{path:?} is left");

    // A file handed out with its folder keeps the folder until the file goes.
    let dir = temp_dir("dropped-file");
    let path = dir.to_path_buf();
    std::fs::write(dir.join("f"), b"x").unwrap();
    let file = dir.file(path.join("f"));
    assert!(file.is_file());
    drop(file);
    assert!(!path.exists(), "{path:?} is left");

    // A failing test unwinds through its folder.
    let seen = Mutex::new(None);
    let failed = std::panic::catch_unwind(|| {
        let dir = parity_copy("panicking");
        *seen.lock().unwrap() = Some(dir.to_path_buf());
        panic!("a failing test");
    });
    assert!(failed.is_err());
    let path = seen.into_inner().unwrap().unwrap();
    assert!(!path.exists(), "{path:?} is left");
}
