//! Runs `recommend` over a folder of articles many times, for a profiler:
//! `cargo run --release --example profile_recommend -- DATASET.linkdata ARTICLES_DIR [ROUNDS]`.

use std::path::Path;
use std::time::Instant;

use wikisuggest_engine::{Dataset, Engine, RecommendOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, dataset, articles, rest @ ..] = args.as_slice() else {
        return Err("usage: profile_recommend DATASET.linkdata ARTICLES_DIR [ROUNDS]".into());
    };
    let rounds: usize = rest.first().map_or(Ok(20), |r| r.parse())?;
    let engine = Engine::new(Dataset::open_native(Path::new(dataset))?);
    let mut pages = Vec::new();
    for entry in std::fs::read_dir(articles)? {
        let path = entry?.path();
        if path
            .extension()
            .is_some_and(|e| e == "wikitext" || e == "txt")
        {
            let title = path.file_stem().map(|s| s.to_string_lossy().into_owned());
            pages.push((title.unwrap_or_default(), std::fs::read_to_string(&path)?));
        }
    }
    let bytes: usize = pages.iter().map(|(_, t)| t.len()).sum();
    let options = RecommendOptions::default();
    let start = Instant::now();
    let mut links = 0;
    for _ in 0..rounds {
        for (title, text) in &pages {
            links += engine
                .recommend(text, title, None, None, &options)?
                .links
                .len();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let n = (rounds * pages.len()) as f64;
    println!(
        "{} pages, {links} links, {:.3} ms/page, {:.1} MB/s",
        pages.len(),
        secs * 1e3 / n,
        (rounds * bytes) as f64 / secs / 1e6
    );
    Ok(())
}
