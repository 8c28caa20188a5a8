//! Hostile data files at server start-up: multi-member gzip catalogs read whole, endless
//! catalog lines refused by name, damaged native datasets refused before serving.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::PathBuf;

use wikisuggest_server::translation::TranslationData;
use wikisuggest_server::{Server, ServerConfig};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ws-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn record(title: &str) -> String {
    format!(
        "{{\"title\": \"{title}\", \"wikidata_id\": \"Q1\", \"langlinks\": [], \
         \"pageviews\": 1, \"topic\": \"T\", \"text\": \"word\"}}\n"
    )
}

#[test]
fn every_member_of_a_gzip_catalog_is_read() {
    let dir = temp_dir("catalog");
    // What `cat a.gz b.gz`, pigz and bgzip write.
    let mut bytes = gz(record("Cat").as_bytes());
    bytes.extend(gz(record("Lion").as_bytes()));
    std::fs::write(dir.join("en.jsonl.gz"), bytes).unwrap();
    let data = TranslationData::open(&dir).unwrap();
    assert_eq!(data.catalogs["en"].articles.len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_endless_catalog_line_is_refused_by_file_and_line() {
    let dir = temp_dir("long-line");
    let limit = wikisuggest_server::translation::dataset::MAX_LINE_BYTES as usize;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(record("Cat").as_bytes()).unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..=limit >> 20 {
        e.write_all(&chunk).unwrap();
    }
    std::fs::write(dir.join("en.jsonl.gz"), e.finish().unwrap()).unwrap();
    let error = TranslationData::open(&dir).err().unwrap().to_string();
    assert!(
        error.contains("en.jsonl.gz") && error.contains("line 2"),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_damaged_native_dataset_is_refused_at_start_up() {
    let dir = temp_dir("native");
    let wiki = dir.join("enwiki");
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    wikisuggest_engine::convert(
        &repo.join("tests/data/parity/datasets/enwiki"),
        "enwiki",
        &wiki,
    )
    .unwrap();
    let path = wiki.join("enwiki.linkdata");
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 5;
    bytes[last] ^= 0x01;
    std::fs::write(&path, bytes).unwrap();
    let config = ServerConfig {
        port: 0,
        datasets: Some(dir.clone()),
        ..ServerConfig::default()
    };
    match Server::bind(config).await {
        Err(e) => assert!(e.to_string().contains("checksum"), "{e}"),
        Ok(_) => panic!("served a damaged dataset"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
