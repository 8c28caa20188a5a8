//! Word tokens and sentences of the SentencePiece languages against mwtokenizer
//! 0.2.0's `word_tokenize` and `sentence_tokenize`, on the fixtures of
//! `tests/fixtures_builder/make_sentencepiece_fixtures.py`: the committed set under
//! `tests/data/sentencepiece/`, plus the full set in
//! `WIKISUGGEST_SENTENCEPIECE_FIXTURES` when it is set.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::{Path, PathBuf};

use serde_json::Value;
use wikisuggest_text::MwTokenizer;
use wikisuggest_text::tokenize::SENTENCEPIECE_LANGUAGES;

fn fixture_dirs() -> Vec<PathBuf> {
    let mut dirs =
        vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/sentencepiece")];
    if let Ok(dir) = std::env::var("WIKISUGGEST_SENTENCEPIECE_FIXTURES") {
        dirs.push(PathBuf::from(dir));
    }
    dirs
}

#[test]
fn words_and_sentences_match_mwtokenizer_for_every_sentencepiece_language() {
    for dir in fixture_dirs() {
        let mut failures = Vec::new();
        let mut cases = 0;
        for code in SENTENCEPIECE_LANGUAGES {
            let path = dir.join(format!("sp-{code}.json"));
            let fixture: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let tokenizer = MwTokenizer::new(code).unwrap();
            assert!(tokenizer.uses_sentencepiece());
            for case in fixture["cases"].as_array().unwrap() {
                let text = case["text"].as_str().unwrap();
                let expected: Vec<&str> = case["words"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|w| w.as_str().unwrap())
                    .collect();
                let ours = tokenizer.words(text);
                cases += 1;
                if ours != expected {
                    failures.push(format!(
                        "{code}: {text:?}\n  ours   {ours:?}\n  theirs {expected:?}"
                    ));
                }
                let expected: Vec<&str> = case["sentences"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap())
                    .collect();
                let ours = tokenizer.sentences(text);
                if ours != expected {
                    failures.push(format!(
                        "{code} sentences: {text:?}\n  ours   {ours:?}\n  theirs {expected:?}"
                    ));
                }
            }
        }
        assert!(cases > 0);
        assert!(
            failures.is_empty(),
            "{} of {cases} cases differ in {}:\n{}",
            failures.len(),
            dir.display(),
            failures[..failures.len().min(10)].join("\n")
        );
    }
}

#[test]
fn domain_spellings_use_the_production_key() {
    let text = "香港係中國嘅特別行政區。";
    for (domain, key) in [
        ("zh-yue", "zh_yue"),
        ("zh-min-nan", "zh_min_nan"),
        ("zh-classical", "zh_classical"),
    ] {
        let by_domain = MwTokenizer::new(domain).unwrap();
        assert!(by_domain.uses_sentencepiece(), "{domain}");
        assert_eq!(
            by_domain.words(text),
            MwTokenizer::new(key).unwrap().words(text)
        );
    }
    // Other codes are used as given, as mwtokenizer does: no model for these.
    for code in ["en", "JA", "zh-hans", "yue", ""] {
        assert!(
            !MwTokenizer::new(code).unwrap().uses_sentencepiece(),
            "{code:?}"
        );
    }
}
