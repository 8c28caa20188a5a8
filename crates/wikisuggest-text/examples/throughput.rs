//! Parse, link-extraction and tokenization throughput over a directory of
//! `.wikitext` files.
//!
//! `cargo run --release -p wikisuggest-text --example throughput -- DIR`

use std::time::Instant;

use wikisuggest_text::MwTokenizer;
use wikisuggest_text::wikitext::{Wikitext, wikilinks};

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tests/data/parity/articles/enwiki".into());
    let mut texts = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "wikitext") {
            texts.push(std::fs::read_to_string(path)?);
        }
    }
    let chars: usize = texts.iter().map(|t| t.chars().count()).sum();
    let tokenizer = MwTokenizer::new("en").map_err(std::io::Error::other)?;
    let start = Instant::now();
    let mut tokens = 0;
    for text in &texts {
        let doc = Wikitext::parse(text);
        let _ = wikilinks(text);
        for node in doc.text_nodes() {
            let value = doc.node_text(node);
            for sentence in tokenizer.node_sentences(&value) {
                tokens += tokenizer.words(sentence).len();
            }
        }
    }
    let elapsed = start.elapsed();
    println!(
        "{} pages, {chars} code points, {tokens} tokens in {elapsed:?} ({:.1} MB/s)",
        texts.len(),
        chars as f64 / elapsed.as_secs_f64() / 1e6
    );
    Ok(())
}
