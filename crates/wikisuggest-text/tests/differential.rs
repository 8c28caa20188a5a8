//! Differential tests against the Python libraries production uses.
//!
//! Fixtures are written by `tests/fixtures_builder/make_text_fixtures.py`
//! (repository root).  A small set is committed under `tests/data/text/`; the
//! full set (all articles of the gensim enwiki sample and the parity
//! articles) is read from the directory in `WIKISUGGEST_TEXT_FIXTURES`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::{Path, PathBuf};

use serde_json::Value;
use wikisuggest_text::sections::sections;
use wikisuggest_text::wikitext::{NodeKind, Wikitext, wikilinks};
use wikisuggest_text::{MwTokenizer, pyunicode};

fn committed_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/text")
}

fn load(dir: &Path) -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("mwtokenizer-")
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), v)
        })
        .collect()
}

fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Text => "Text",
        NodeKind::Template => "Template",
        NodeKind::Argument => "Argument",
        NodeKind::Wikilink => "Wikilink",
        NodeKind::ExternalLink => "ExternalLink",
        NodeKind::Comment => "Comment",
        NodeKind::HtmlEntity => "HTMLEntity",
        NodeKind::Heading => "Heading",
        NodeKind::Tag => "Tag",
    }
}

/// First difference between our partition and the fixture's, if any.
fn partition_mismatch(fixture: &Value) -> Option<String> {
    let text = fixture["wikitext"].as_str().unwrap();
    let doc = Wikitext::parse(text);
    let ours: Vec<(String, u64, u64, u64)> = doc
        .nodes()
        .iter()
        .map(|n| {
            (
                kind_name(n.kind).to_owned(),
                n.start as u64,
                n.end as u64,
                u64::from(n.heading_level().unwrap_or(0)),
            )
        })
        .collect();
    let theirs: Vec<(String, u64, u64, u64)> = fixture["partition"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n[0].as_str().unwrap().to_owned(),
                n[1].as_u64().unwrap(),
                n[2].as_u64().unwrap(),
                n[3].as_u64().unwrap(),
            )
        })
        .collect();
    if ours == theirs {
        return None;
    }
    let i = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
    let at = theirs.get(i).map_or(0, |t| t.1 as usize);
    Some(format!(
        "node {i}: ours {:?} theirs {:?} near {:?}",
        ours.get(i),
        theirs.get(i),
        doc.slice(at.saturating_sub(20)..at + 60)
    ))
}

/// First difference in the flat sections, if any.
fn sections_mismatch(fixture: &Value) -> Option<String> {
    let doc = Wikitext::parse(fixture["wikitext"].as_str().unwrap());
    let ours: Vec<(Option<String>, u64)> = sections(&doc)
        .iter()
        .map(|s| {
            let title = s.heading.map(|i| {
                let range = doc.nodes()[i].heading_title().unwrap();
                pyunicode::strip(&doc.slice(range)).to_owned()
            });
            let nodes = &doc.nodes()[s.nodes.clone()];
            let len = nodes.last().map_or(0, |l| l.end - nodes[0].start);
            (title, len as u64)
        })
        .collect();
    let theirs: Vec<(Option<String>, u64)> = fixture["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s[0].as_str().map(str::to_owned), s[1].as_u64().unwrap()))
        .collect();
    (ours != theirs).then(|| format!("ours {ours:?}\ntheirs {theirs:?}"))
}

/// First difference in the wikilink list, if any.
fn links_mismatch(fixture: &Value) -> Option<String> {
    let text = fixture["wikitext"].as_str().unwrap();
    let ours: Vec<(String, Option<String>, usize, usize)> = wikilinks(text)
        .into_iter()
        .map(|l| (l.title, l.text, l.span.start, l.span.end))
        .collect();
    let theirs: Vec<(String, Option<String>, usize, usize)> = fixture["wikilinks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l[0].as_str().unwrap().to_owned(),
                l[1].as_str().map(str::to_owned),
                l[2].as_u64().unwrap() as usize,
                l[3].as_u64().unwrap() as usize,
            )
        })
        .collect();
    if ours == theirs {
        return None;
    }
    let i = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
    Some(format!(
        "link {i} of {}/{}: ours {:?} theirs {:?}",
        ours.len(),
        theirs.len(),
        ours.get(i),
        theirs.get(i)
    ))
}

/// First difference in sentence or word tokenization, if any.
fn tokenization_mismatch(
    fixture: &Value,
    tokenizer: &MwTokenizer,
) -> (Option<String>, Option<String>) {
    let (mut sentences_bad, mut words_bad) = (None, None);
    for node in fixture["text_nodes"].as_array().unwrap() {
        let text = node[0].as_str().unwrap();
        let expected = node[1].as_array().unwrap();
        let ours = tokenizer.node_sentences(text);
        let theirs: Vec<&str> = expected.iter().map(|s| s[0].as_str().unwrap()).collect();
        if ours != theirs && sentences_bad.is_none() {
            sentences_bad = Some(format!("{text:?}: ours {ours:?} theirs {theirs:?}"));
        }
        for s in expected {
            let sentence = s[0].as_str().unwrap();
            let words: Vec<&str> = s[1]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap())
                .collect();
            let ours = tokenizer.words(sentence);
            if ours != words && words_bad.is_none() {
                words_bad = Some(format!("{sentence:?}: ours {ours:?} theirs {words:?}"));
            }
        }
    }
    (sentences_bad, words_bad)
}

#[derive(Default)]
struct Tally {
    total: usize,
    partition_ok: usize,
    links_ok: usize,
    sections_ok: usize,
    sentences_ok: usize,
    words_ok: usize,
    failures: Vec<String>,
}

fn run(dir: &Path) -> Tally {
    let tokenizer = MwTokenizer::new("en").unwrap();
    let mut tally = Tally::default();
    for (name, fixture) in load(dir) {
        tally.total += 1;
        match partition_mismatch(&fixture) {
            None => tally.partition_ok += 1,
            Some(m) => tally.failures.push(format!("{name} partition: {m}")),
        }
        match sections_mismatch(&fixture) {
            None => tally.sections_ok += 1,
            Some(m) => tally.failures.push(format!("{name} sections: {m}")),
        }
        match links_mismatch(&fixture) {
            None => tally.links_ok += 1,
            Some(m) => tally.failures.push(format!("{name} links: {m}")),
        }
        let (s, w) = tokenization_mismatch(&fixture, &tokenizer);
        match s {
            None => tally.sentences_ok += 1,
            Some(m) => tally.failures.push(format!("{name} sentences: {m}")),
        }
        match w {
            None => tally.words_ok += 1,
            Some(m) => tally.failures.push(format!("{name} words: {m}")),
        }
    }
    for f in &tally.failures {
        println!("MISMATCH {f}");
    }
    println!(
        "articles {}: partition {}, sections {}, links {}, sentences {}, words {}",
        tally.total,
        tally.partition_ok,
        tally.sections_ok,
        tally.links_ok,
        tally.sentences_ok,
        tally.words_ok
    );
    tally
}

#[test]
fn committed_fixtures_match_exactly() {
    let tally = run(&committed_dir());
    assert!(tally.total >= 3, "committed fixtures missing");
    assert!(tally.failures.is_empty(), "{:#?}", tally.failures);
}

#[test]
fn full_fixtures() {
    let Ok(dir) = std::env::var("WIKISUGGEST_TEXT_FIXTURES") else {
        println!("WIKISUGGEST_TEXT_FIXTURES is not set: skipping the full differential run");
        return;
    };
    let tally = run(Path::new(&dir));
    assert!(tally.total > 100, "expected the full fixture set in {dir}");
    // Real articles must match exactly.
    let real: Vec<&String> = tally
        .failures
        .iter()
        .filter(|f| !f.starts_with("random-"))
        .collect();
    assert!(real.is_empty(), "{real:#?}");
    // Random markup soup: a few known wikilink differences in degenerate
    // bracket soup are tolerated (see the crate README); everything else
    // must match.
    let soup: Vec<&String> = tally
        .failures
        .iter()
        .filter(|f| f.starts_with("random-"))
        .collect();
    assert!(
        soup.iter().all(|f| f.contains(" links: ")) && soup.len() * 100 <= tally.total,
        "{soup:#?}"
    );
}

/// The embedded character classes equal mwtokenizer's own tables.
#[test]
fn mwtokenizer_symbol_tables() {
    let path = committed_dir().join("mwtokenizer-symbols.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let set = |key: &str| -> Vec<u32> {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect()
    };
    let ours = |pred: fn(char) -> bool| -> Vec<u32> {
        (0..=0x10FFFF_u32)
            .filter(|&cp| char::from_u32(cp).is_some_and(pred))
            .collect()
    };
    assert_eq!(
        ours(wikisuggest_text::tokenize::is_sentence_terminator),
        set("sentence_terminators")
    );
    assert_eq!(
        ours(wikisuggest_text::tokenize::is_punctuation),
        set("punctuation")
    );
}
