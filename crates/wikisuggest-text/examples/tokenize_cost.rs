//! Cost per character of the SentencePiece path against the whitespace path, on the
//! same text: word tokenization of the page's sentences alone, and the whole link
//! pass (`pipeline::recommend`: parse, sentences, words, n-gram look-ups, placement)
//! over the page with its links turned into plain text and its own link labels as the
//! anchors.
//!
//! `cargo run --release -p wikisuggest-text --example tokenize_cost -- [FILE.wikitext ...]`
//! (default: the recorded jawiki page under `tests/data/jawiki/` and the parity
//! articles' first enwiki page). Text nodes are split into sentences as the engine
//! does; each path then tokenizes every sentence (best of 7 rounds).

use std::time::{Duration, Instant};

use std::collections::HashMap;

use wikisuggest_text::MwTokenizer;
use wikisuggest_text::pipeline::{self, Candidate, LinkModel, Request};
use wikisuggest_text::pyunicode;
use wikisuggest_text::wikitext::{Wikitext, wikilinks};

/// Anchors from the page's own links; every candidate scores 0.9.
struct OwnLinks(HashMap<String, Vec<Candidate<'static>>>);

impl LinkModel for OwnLinks {
    fn candidates(&self, anchor: &str) -> Option<Vec<Candidate<'_>>> {
        self.0.get(anchor).cloned()
    }
    fn redirect(&self, _: &str) -> Option<String> {
        None
    }
    fn has_page(&self, _: &str) -> bool {
        true
    }
    fn scores(&self, _: &str, _: &str, candidates: &[Candidate<'_>]) -> Vec<f32> {
        vec![0.9; candidates.len()]
    }
}

/// The page with each link replaced by its label, and the labels as anchors.
fn unlinked(text: &str) -> (String, OwnLinks) {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut anchors: HashMap<String, Vec<Candidate<'static>>> = HashMap::new();
    let mut at = 0;
    for link in wikilinks(text) {
        if link.span.start < at {
            continue;
        }
        out.extend(&chars[at..link.span.start]);
        let label = link.text.clone().unwrap_or_else(|| link.title.clone());
        out.push_str(&label);
        anchors
            .entry(pyunicode::lower(&label))
            .or_default()
            .push(Candidate {
                title: link.title.into(),
                count: 1,
            });
        at = link.span.end;
    }
    out.extend(&chars[at.min(chars.len())..]);
    (out, OwnLinks(anchors))
}

fn sentences(text: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let splitter = MwTokenizer::new("en")?;
    let doc = Wikitext::parse(text);
    let mut out = Vec::new();
    for node in doc.text_nodes() {
        let value = doc.node_text(node);
        out.extend(
            splitter
                .node_sentences(&value)
                .into_iter()
                .map(str::to_owned),
        );
    }
    Ok(out)
}

/// The best time of one call of `f` over 7 rounds of at least 50 ms each.
fn best_of(mut f: impl FnMut() -> usize) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut tokens = 0;
    for _ in 0..7 {
        let start = Instant::now();
        let mut calls = 0u32;
        while calls == 0 || start.elapsed() < Duration::from_millis(50) {
            tokens = std::hint::black_box(f());
            calls += 1;
        }
        best = best.min(start.elapsed() / calls);
    }
    (best, tokens)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data");
    let mut files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        files.push(format!("{root}/jawiki/ONE_OK_ROCK.wikitext"));
        files.push(format!("{root}/parity/articles/enwiki/ASCII.wikitext"));
    }
    let whitespace = MwTokenizer::new("en")?;
    let sentencepiece = MwTokenizer::new("ja")?;
    // Load the model before timing.
    sentencepiece.words("");
    for file in files {
        let text = std::fs::read_to_string(&file)?;
        let sentences = sentences(&text)?;
        let chars: usize = sentences.iter().map(|s| s.chars().count()).sum();
        let run = |tokenizer: &MwTokenizer| {
            best_of(|| sentences.iter().map(|s| tokenizer.words(s).len()).sum())
        };
        let (ws, ws_tokens) = run(&whitespace);
        let (sp, sp_tokens) = run(&sentencepiece);
        let per_char = |d: Duration| d.as_secs_f64() * 1e9 / chars as f64;
        println!("{file}: {} sentences, {chars} code points", sentences.len());
        println!(
            "  whitespace    {:7.1} ns/char  ({ws_tokens} tokens)",
            per_char(ws)
        );
        println!(
            "  sentencepiece {:7.1} ns/char  ({sp_tokens} tokens)",
            per_char(sp)
        );
        println!(
            "  ratio         {:7.2}x",
            sp.as_secs_f64() / ws.as_secs_f64()
        );
        let (page, model) = unlinked(&text);
        let page_chars = page.chars().count();
        let pass = |language_code: &str| {
            best_of(|| {
                let request = Request {
                    wikitext: &page,
                    page_title: "Page",
                    language_code,
                    threshold: 0.5,
                    max_recommendations: 0,
                    sections_to_exclude: &[],
                    time_budget: None,
                    max_work: None,
                };
                pipeline::recommend(&model, &request).map_or(0, |r| r.links.len())
            })
        };
        let (ws, ws_links) = pass("en");
        let (sp, sp_links) = pass("ja");
        let per_char = |d: Duration| d.as_secs_f64() * 1e9 / page_chars as f64;
        println!("  link pass over {page_chars} code points:");
        println!(
            "    whitespace    {:7.1} ns/char  ({ws_links} links)",
            per_char(ws)
        );
        println!(
            "    sentencepiece {:7.1} ns/char  ({sp_links} links)",
            per_char(sp)
        );
        println!(
            "    ratio         {:7.2}x",
            sp.as_secs_f64() / ws.as_secs_f64()
        );
    }
    Ok(())
}
