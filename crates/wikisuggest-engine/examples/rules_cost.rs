//! The cost of never-link rules in the pass: the parity articles, one after the other on one
//! thread, with or without a realistic rule set (a few thousand target titles and a few
//! hundred phrases drawn from the dataset, some of which the articles' links hit).
//!
//! ```text
//! rules_cost convert PUBLISHED_DIR OUT_DIR           # once: the native file to measure on
//! rules_cost run NATIVE_FILE ARTICLES_DIR MODE ROUNDS # MODE: plain or rules
//! ```
//!
//! `bench/rules.py` runs `run` under callgrind with 1 and 3 rounds: the difference is the
//! instructions of two rounds of passes, without opening the dataset or building the rules.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a measuring tool

use std::path::Path;
use std::sync::Arc;

use wikisuggest_engine::{Dataset, Engine, RecommendOptions, RuleSpec, Rules};

/// Target titles and phrases of the realistic rule set.
const TARGETS: usize = 3000;
const PHRASES: usize = 300;

fn articles(dir: &Path) -> Vec<(String, String)> {
    let manifest = std::fs::read_to_string(dir.join("manifest.tsv")).unwrap();
    manifest
        .lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            (
                f[1].to_owned(),
                std::fs::read_to_string(dir.join(f[0])).unwrap(),
            )
        })
        .collect()
}

/// Every n-th page title and every m-th anchor of the dataset: spread over the alphabet, so
/// some are targets and phrases of the articles' links and most are not.
fn rule_set(dataset: &Dataset) -> Rules {
    let titles = dataset.title_count();
    let step = (titles / (2 * TARGETS)).max(1);
    let mut targets = Vec::with_capacity(TARGETS);
    let mut i = 0;
    while targets.len() < TARGETS && i < titles {
        let title = dataset.title_at(i).unwrap();
        if dataset.has_page(title).unwrap() {
            targets.push(title.to_owned());
        }
        i += step;
    }
    let mut anchors = Vec::new();
    dataset
        .for_each_anchor(|anchor, _| {
            anchors.push(anchor.to_owned());
            Ok(())
        })
        .unwrap();
    let step = (anchors.len() / PHRASES).max(1);
    let phrases: Vec<String> = anchors.into_iter().step_by(step).take(PHRASES).collect();
    let spec = RuleSpec {
        exclude_targets: targets,
        exclude_anchors: phrases,
        ..RuleSpec::default()
    };
    Rules::from_spec(spec, None).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["convert", src, out] => {
            let path =
                wikisuggest_engine::convert(Path::new(src), "enwiki", Path::new(out)).unwrap();
            println!("{}", path.display());
        }
        ["run", file, dir, mode, rounds] => {
            let engine = Engine::new(Dataset::open_native(Path::new(file)).unwrap());
            let rules = match *mode {
                "plain" => None,
                "rules" => Some(Arc::new(rule_set(engine.dataset()))),
                other => panic!("mode {other}: plain or rules"),
            };
            let spec_sizes = rules.as_ref().map(|r| {
                (
                    r.spec().exclude_targets.len(),
                    r.spec().exclude_anchors.len(),
                )
            });
            let options = RecommendOptions {
                rules,
                ..RecommendOptions::default()
            };
            let pages = articles(Path::new(dir));
            let (mut links, mut excluded) = (0, 0);
            for _ in 0..rounds.parse::<usize>().unwrap() {
                for (title, text) in &pages {
                    let set = engine.recommend(text, title, None, None, &options).unwrap();
                    links += set.links.len();
                    excluded += set.excluded.len();
                }
            }
            println!(
                "{mode}: {} pages x {rounds}, {links} links, {excluded} excluded, rules {spec_sizes:?}",
                pages.len()
            );
        }
        _ => {
            eprintln!("usage: rules_cost convert SRC OUT | run NATIVE ARTICLES plain|rules ROUNDS");
            std::process::exit(2);
        }
    }
}
