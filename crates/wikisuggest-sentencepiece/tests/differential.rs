//! Differential tests against the Python `sentencepiece` library on the models
//! mwtokenizer 0.2.0 ships.
//!
//! Fixtures are written by `tests/fixtures_builder/make_sentencepiece_fixtures.py`
//! (repository root). A small set is committed under `tests/data/sentencepiece/`; the
//! full set (a whole recorded jawiki page, CLDR names, random normalizer soups, for
//! every language code) is read from the directory in
//! `WIKISUGGEST_SENTENCEPIECE_FIXTURES` when it is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::{Path, PathBuf};

use serde_json::Value;
use wikisuggest_sentencepiece::Model;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![repo().join("tests/data/sentencepiece")];
    if let Ok(dir) = std::env::var("WIKISUGGEST_SENTENCEPIECE_FIXTURES") {
        dirs.push(PathBuf::from(dir));
    }
    dirs
}

fn model(name: &str) -> Model {
    let path = repo()
        .join("crates/wikisuggest-text/assets/spcmodels")
        .join(name);
    Model::from_bytes(&std::fs::read(&path).unwrap()).unwrap()
}

/// The fixtures `<prefix>…json` of `dir`, each with its file name.
fn fixtures(dir: &Path, prefix: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with(prefix) && name.ends_with(".json") {
            let fixture = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            out.push((name, fixture));
        }
    }
    out
}

/// Encodes every case of the fixture `name` with `model`, and describes each one whose
/// pieces differ from the library's in `failures`; returns the number of cases.
fn compare_cases(name: &str, fixture: &Value, model: &Model, failures: &mut Vec<String>) -> usize {
    let cases = fixture["cases"].as_array().unwrap();
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let expected: Vec<&str> = case["pieces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        let ours = model.encode_as_pieces(text);
        if ours != expected {
            failures.push(format!(
                "{name}: {text:?}\n  ours   {ours:?}\n  theirs {expected:?}"
            ));
        }
    }
    cases.len()
}

/// Fails with the first ten `failures` (of `cases` read from `dir`), if any.
fn assert_none_differ(failures: &[String], cases: usize, dir: &Path) {
    let first: Vec<&str> = failures.iter().take(10).map(String::as_str).collect();
    assert!(
        failures.is_empty(),
        "{} of {cases} cases differ in {}:\n{}",
        failures.len(),
        dir.display(),
        first.join("\n")
    );
}

#[test]
fn pieces_match_the_library_on_every_model() {
    for dir in fixture_dirs() {
        let mut codes = Vec::new();
        let mut cases = 0;
        let mut failures = Vec::new();
        for (name, fixture) in fixtures(&dir, "sp-") {
            let model = model(fixture["model"].as_str().unwrap());
            codes.push(fixture["code"].as_str().unwrap().to_owned());
            cases += compare_cases(&name, &fixture, &model, &mut failures);
        }
        codes.sort();
        assert_eq!(
            codes.len(),
            13,
            "{}: one fixture per language code",
            dir.display()
        );
        assert_none_differ(&failures, cases, &dir);
    }
}

/// The small models the fixture builder trains for the options the 12 models leave at one
/// setting (full fixture set only).
#[test]
fn pieces_match_the_library_on_trained_models_with_other_options() {
    let Ok(dir) = std::env::var("WIKISUGGEST_SENTENCEPIECE_FIXTURES") else {
        return;
    };
    let dir = PathBuf::from(dir);
    let mut models = 0;
    let mut cases = 0;
    let mut failures = Vec::new();
    for (name, fixture) in fixtures(&dir, "synthetic-") {
        let file = dir.join(fixture["model_file"].as_str().unwrap());
        let model = Model::from_bytes(&std::fs::read(file).unwrap()).unwrap();
        models += 1;
        cases += compare_cases(&name, &fixture, &model, &mut failures);
    }
    assert_eq!(models, 3, "{}", dir.display());
    assert_none_differ(&failures, cases, &dir);
}
