//! Datasets for the tests that change files under a running server.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use wikisuggest_engine::native::NativeInput;
use wikisuggest_engine::{DatasetChecksums, Tables, write_native_file};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The parity sample's tables, model and checksums.
pub fn sample() -> (Tables, Vec<u8>, DatasetChecksums) {
    let dir = repo().join("tests/data/parity/datasets/enwiki");
    let published = wikisuggest_engine::published::read_published(&dir, "enwiki").unwrap();
    (published.tables, published.model_json, published.checksums)
}

/// Writes `tables` as `out_dir/enwiki.linkdata`.
pub fn write(
    tables: &Tables,
    model: Vec<u8>,
    checksums: DatasetChecksums,
    out_dir: &Path,
) -> PathBuf {
    let input = NativeInput::from_tables("enwiki", tables, model, checksums).unwrap();
    write_native_file(&input, out_dir).unwrap()
}

/// An enwiki-shaped native file of more than 64 MiB (so the engine maps it instead of
/// reading it into memory): the sample's tables, plus articles and anchors whose keys are
/// sample keys followed by a word no article holds, so they sort among the sample's keys
/// (as a real wiki's spread through its file) and change no answer.
pub fn large_native(out_dir: &Path) -> PathBuf {
    let (mut tables, model, checksums) = sample();
    let dim = tables.vectors.dim.max(1);
    let titles: Vec<String> = tables.pageids.iter().map(|(t, _)| t.clone()).collect();
    let anchors: Vec<String> = tables.anchors.iter().map(|(a, _)| a.clone()).collect();
    let articles = (72usize << 20) / (dim * 4 + 48);
    let mut fillers = Vec::with_capacity(articles);
    for i in 0..articles {
        let title = format!("{} zq{i:x}", titles[i % titles.len()]);
        tables
            .pageids
            .push((title.clone(), 1_000_000_000 + i as i64));
        tables.vectors.keys.push(title.clone());
        tables
            .vectors
            .data
            .extend((0..dim).map(|d| ((i * 31 + d) % 97) as f32 / 97.0 - 0.5));
        fillers.push(title);
    }
    for i in 0..articles / 2 {
        let anchor = format!("{} zq{i:x}", anchors[i % anchors.len()]);
        let target = fillers[(i * 7) % fillers.len()].clone();
        tables
            .anchors
            .push((anchor, vec![(target, 1 + (i % 5) as u32)]));
    }
    let path = write(&tables, model, checksums, out_dir);
    assert!(std::fs::metadata(&path).unwrap().len() > 64 << 20);
    path
}
