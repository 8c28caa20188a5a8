//! Hostile data files at server start-up: damaged translation catalogs and catalogs of
//! another wiki refused by name, damaged native datasets refused before serving.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};

use wikisuggest_server::{Server, ServerConfig};

use support::{TempDir, repo};

/// A copy of the translation catalog shipped in the Python package, in `dir/enwiki`.
fn catalog_copy(dir: &Path) -> PathBuf {
    let shipped = repo().join("python/wikisuggest/data/translation");
    let out = dir.join("enwiki");
    std::fs::create_dir_all(&out).unwrap();
    copy_files(&shipped, &out);
    // The search index built with the catalog.
    copy_files(&shipped.join("search"), &out.join("search"));
    out
}

fn copy_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

/// Why the server refused to start with these translation catalogs.
async fn refusal(catalogs: Vec<(Option<String>, PathBuf)>) -> String {
    let config = ServerConfig {
        port: 0,
        translation_catalogs: catalogs,
        ..ServerConfig::default()
    };
    match Server::bind(config).await {
        Err(e) => e.to_string(),
        Ok(_) => panic!("served a catalog it should have refused"),
    }
}

#[tokio::test]
async fn a_cut_or_lying_catalog_file_is_refused_by_name() {
    let dir = TempDir::new("hostile-catalog");
    let catalog = catalog_copy(&dir);
    let articles = catalog.join("articles.parquet");
    let bytes = std::fs::read(&articles).unwrap();
    // The copy serves: what follows is refused for what was done to it, not for the copy.
    let config = ServerConfig {
        port: 0,
        translation_catalogs: vec![(None, catalog.clone())],
        ..ServerConfig::default()
    };
    Server::bind(config)
        .await
        .unwrap()
        .shutdown()
        .await
        .unwrap();

    // Cut in the middle, as an interrupted copy leaves it.
    std::fs::write(&articles, &bytes[..bytes.len() / 2]).unwrap();
    let error = refusal(vec![(None, catalog.clone())]).await;
    assert!(error.contains("articles.parquet"), "{error}");

    // A footer that claims more metadata than the file holds: refused, not allocated.
    let mut lying = bytes.clone();
    let at = lying.len() - 8;
    lying[at..at + 4].copy_from_slice(&0xFFFF_FFF0_u32.to_le_bytes());
    std::fs::write(&articles, &lying).unwrap();
    let error = refusal(vec![(None, catalog.clone())]).await;
    assert!(error.contains("articles.parquet"), "{error}");
    std::fs::write(&articles, &bytes).unwrap();

    // A description that is not JSON, or of a format this version does not read.
    let manifest = catalog.join("catalog.json");
    let description = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, &description[..description.len() / 3]).unwrap();
    let error = refusal(vec![(None, catalog.clone())]).await;
    assert!(error.contains("catalog.json"), "{error}");
    let newer = description.replacen("\"format\": 1,", "\"format\": 99,", 1);
    assert_ne!(newer, description);
    std::fs::write(&manifest, newer).unwrap();
    let error = refusal(vec![(None, catalog.clone())]).await;
    assert!(error.contains("format 99"), "{error}");
    std::fs::write(&manifest, &description).unwrap();

    // A catalog whose search index went missing: refused by name, not answered empty.
    std::fs::remove_dir_all(catalog.join("search")).unwrap();
    let error = refusal(vec![(None, catalog.clone())]).await;
    assert!(error.contains("search"), "{error}");
}

#[tokio::test]
async fn a_catalog_named_for_another_wiki_or_a_folder_without_one_is_refused() {
    let dir = TempDir::new("hostile-named");
    let catalog = catalog_copy(&dir);
    let error = refusal(vec![(Some("frwiki".to_owned()), catalog)]).await;
    assert!(
        error.contains("enwiki") && error.contains("frwiki"),
        "{error}"
    );
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let error = refusal(vec![(None, empty)]).await;
    assert!(error.contains("no translation catalog"), "{error}");
    let error = refusal(vec![(None, dir.join("absent"))]).await;
    assert!(error.contains("absent"), "{error}");
}

#[tokio::test]
async fn a_damaged_native_dataset_is_refused_at_start_up() {
    let dir = TempDir::new("hostile-native");
    let wiki = dir.join("enwiki");
    wikisuggest_engine::convert(
        &repo().join("tests/data/parity/datasets/enwiki"),
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
        datasets: Some(dir.to_path_buf()),
        ..ServerConfig::default()
    };
    match Server::bind(config).await {
        Err(e) => assert!(e.to_string().contains("checksum"), "{e}"),
        Ok(_) => panic!("served a damaged dataset"),
    }
}

/// A failing test unwinds through its folder: the folder and what was written in it go.
#[test]
fn a_temp_dir_is_removed_when_its_test_panics() {
    let seen = std::sync::Mutex::new(None);
    let failed = std::panic::catch_unwind(|| {
        let dir = support::TempDir::new("panicking");
        std::fs::create_dir_all(dir.join("nested")).unwrap();
        std::fs::write(dir.join("nested/file"), b"x").unwrap();
        *seen.lock().unwrap() = Some(dir.to_path_buf());
        panic!("a failing test");
    });
    assert!(failed.is_err());
    let path = seen.into_inner().unwrap().unwrap();
    assert!(!path.exists(), "{path:?} is left");
}
