//! Parses every `.wikitext` file of a folder `ROUNDS` times and prints a digest of every
//! top-level partition and the character reads it took, to compare two builds' partitions
//! (and to profile the partition alone):
//!
//! `cargo run --release -p wikisuggest-text --example partition_digest -- DIR [ROUNDS]`

use std::hash::{Hash, Hasher};
use std::time::Instant;

use wikisuggest_text::wikitext::Wikitext;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .unwrap_or_else(|| "tests/data/parity/articles/enwiki".into());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(1);
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wikitext"))
        .collect();
    paths.sort();
    let texts = paths
        .iter()
        .map(std::fs::read_to_string)
        .collect::<std::io::Result<Vec<_>>>()?;
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut digest = std::collections::hash_map::DefaultHasher::new();
    let (mut nodes, mut reads) = (0, 0);
    let start = Instant::now();
    for round in 0..rounds {
        for text in &texts {
            let (doc, used) = Wikitext::parse_measured(text);
            if round == 0 {
                nodes += doc.nodes().len();
                reads += used;
                for node in doc.nodes() {
                    (node.kind, node.start, node.end).hash(&mut digest);
                    node.heading_level().hash(&mut digest);
                }
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{} pages, {bytes} bytes, {nodes} nodes, {reads} reads, {:.1} MB/s",
        texts.len(),
        (rounds * bytes) as f64 / secs / 1e6
    );
    println!("partition digest {:016x}", digest.finish());
    Ok(())
}
