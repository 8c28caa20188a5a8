//! The placement pass against the production engine's outputs on the parity
//! articles.
//!
//! The model replays production scores: a candidate scores what production
//! reported for its mention in the `exhaustive` run (threshold 0, every
//! placed mention listed) and 0 otherwise.  Everything else — parsing,
//! existing links, sections, tokenization, n-gram order, filters, placement,
//! offsets, contexts and `match_index` — is computed here, so any divergence
//! in the text half shows up as a mismatch.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::{Path, PathBuf};

use serde_json::Value;
use wikisuggest_text::pipeline::{Candidate, LinkModel, Request, recommend};
use wikisuggest_text::pyunicode;

#[path = "common/table_model.rs"]
mod table_model;
use table_model::{Scoring, TableModel as Replay};

fn replay(p: &Value) -> Replay {
    let anchors = p["anchors"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let cands = v
                .as_array()
                .unwrap()
                .iter()
                .map(|c| Candidate {
                    title: c[0].as_str().unwrap().to_owned().into(),
                    count: c[1].as_u64().unwrap(),
                })
                .collect();
            (k.clone(), cands)
        })
        .collect();
    let redirects = p["redirects"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
        .collect();
    let pages = p["pageids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    let scored = p["expected"]["exhaustive"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                pyunicode::lower(l["link_text"].as_str().unwrap()),
                (
                    l["link_target"].as_str().unwrap().to_owned(),
                    l["score"].as_f64().unwrap() as f32,
                ),
            )
        })
        .collect();
    Replay {
        anchors,
        redirects,
        pages,
        scoring: Scoring::ByMention(scored),
    }
}

type Row = (String, String, u64, String, String, u64, u64, f32);

fn expected_rows(links: &Value) -> Vec<Row> {
    links
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["link_text"].as_str().unwrap().to_owned(),
                l["link_target"].as_str().unwrap().to_owned(),
                l["wikitext_offset"].as_u64().unwrap(),
                l["context_before"].as_str().unwrap().to_owned(),
                l["context_after"].as_str().unwrap().to_owned(),
                l["match_index"].as_u64().unwrap(),
                l["link_index"].as_u64().unwrap(),
                l["score"].as_f64().unwrap() as f32,
            )
        })
        .collect()
}

/// Compares both configurations; returns a description of the first
/// difference per configuration.
fn check(fixture: &Value) -> Vec<String> {
    let p = &fixture["pipeline"];
    let model = replay(p);
    let mut problems = Vec::new();
    for (config, threshold, max) in [("exhaustive", 0.0, -1), ("api", 0.5, 15)] {
        let request = Request {
            wikitext: fixture["wikitext"].as_str().unwrap(),
            page_title: p["page_title"].as_str().unwrap(),
            language_code: "en",
            threshold,
            max_recommendations: max,
            sections_to_exclude: &[],
            time_budget: None,
            max_work: None,
        };
        let ours: Vec<Row> = recommend(&model, &request)
            .unwrap()
            .links
            .into_iter()
            .map(|l| {
                (
                    l.link_text,
                    l.link_target,
                    l.wikitext_offset as u64,
                    l.context_before,
                    l.context_after,
                    l.match_index as u64,
                    l.link_index as u64,
                    l.score,
                )
            })
            .collect();
        let theirs = expected_rows(&p["expected"][config]);
        // A production link whose mention the exhaustive run never scored
        // (an earlier low-score link blocked it there) has no replayable
        // score; such configurations cannot be compared.
        let Scoring::ByMention(scored) = &model.scoring else {
            unreachable!("the replay scores by mention")
        };
        if theirs
            .iter()
            .any(|t| !scored.contains_key(&pyunicode::lower(&t.0)))
        {
            println!("SKIPPED {config}: a link has no replayable score");
            continue;
        }
        if ours != theirs {
            let i = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
            problems.push(format!(
                "{config}: {} vs {} links, first difference at {i}: ours {:?} theirs {:?}",
                ours.len(),
                theirs.len(),
                ours.get(i),
                theirs.get(i)
            ));
        }
    }
    problems
}

fn run(dir: &Path) -> (usize, Vec<String>) {
    let mut checked = 0;
    let mut problems = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("parity-")
        })
        .collect();
    files.sort();
    for path in files {
        let fixture: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if fixture.get("pipeline").is_none() {
            continue;
        }
        checked += 1;
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        problems.extend(check(&fixture).into_iter().map(|p| format!("{name} {p}")));
    }
    for p in &problems {
        println!("MISMATCH {p}");
    }
    println!(
        "pipeline parity: {checked} articles, {} mismatching configurations",
        problems.len()
    );
    (checked, problems)
}

#[test]
fn committed_articles_match_production() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/text");
    let (checked, problems) = run(&dir);
    assert!(checked >= 3);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn all_parity_articles_match_production() {
    let Ok(dir) = std::env::var("WIKISUGGEST_TEXT_FIXTURES") else {
        println!("WIKISUGGEST_TEXT_FIXTURES is not set: skipping the full pipeline parity run");
        return;
    };
    let (checked, problems) = run(Path::new(&dir));
    assert_eq!(checked, 71, "expected all parity articles in {dir}");
    assert!(problems.is_empty(), "{problems:#?}");
}
