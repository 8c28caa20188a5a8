//! Runs `recommend` over a folder of articles many times, for a profiler:
//! `cargo run --release --example profile_recommend -- DATASET.linkdata ARTICLES_DIR [ROUNDS] [exhaustive] [budget]`.
//!
//! Titles come from `ARTICLES_DIR/manifest.tsv` (`file<TAB>page_title` rows after a header)
//! when it exists, else from the file names. `exhaustive` runs with threshold 0 and no
//! maximum (every candidate mention classified) instead of the API defaults; `budget` gives
//! each page the 30 s time budget of whole-wiki runs (never reached here, but
//! checked as the pass goes, as on those paths). The last line
//! printed is a checksum of every link, to compare two builds' outputs.

use std::hash::{Hash, Hasher};
use std::path::Path;
use std::time::Instant;

use wikisuggest_engine::{Dataset, Engine, RecommendOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, dataset, articles, rest @ ..] = args.as_slice() else {
        return Err(
            "usage: profile_recommend DATASET.linkdata ARTICLES_DIR [ROUNDS] [exhaustive] [budget]"
                .into(),
        );
    };
    let rounds: usize = rest.first().map_or(Ok(20), |r| r.parse())?;
    let flags = rest.get(1..).unwrap_or_default();
    let exhaustive = flags.iter().any(|m| m == "exhaustive");
    let budget = flags.iter().any(|m| m == "budget");
    let engine = Engine::new(Dataset::open_native(Path::new(dataset))?);
    let dir = Path::new(articles);
    let mut pages = Vec::new();
    let manifest = dir.join("manifest.tsv");
    if manifest.is_file() {
        for line in std::fs::read_to_string(&manifest)?.lines().skip(1) {
            let mut fields = line.split('\t');
            let (Some(file), Some(title)) = (fields.next(), fields.next()) else {
                continue;
            };
            pages.push((title.to_owned(), std::fs::read_to_string(dir.join(file))?));
        }
    } else {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path
                .extension()
                .is_some_and(|e| e == "wikitext" || e == "txt")
            {
                let title = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                pages.push((title.unwrap_or_default(), std::fs::read_to_string(&path)?));
            }
        }
    }
    let bytes: usize = pages.iter().map(|(_, t)| t.len()).sum();
    let mut options = RecommendOptions::default();
    if exhaustive {
        options.link.threshold = 0.0;
        options.link.max_recommendations = 0;
    }
    if budget {
        options.time_budget = Some(std::time::Duration::from_secs(30));
    }
    let start = Instant::now();
    let mut links = 0;
    let mut digest = std::collections::hash_map::DefaultHasher::new();
    for round in 0..rounds {
        for (title, text) in &pages {
            let found = engine.recommend(text, title, None, None, &options)?;
            links += found.links.len();
            if round == 0 {
                for l in &found.links {
                    (&l.link_text, &l.link_target, l.score.to_bits()).hash(&mut digest);
                    (l.wikitext_offset, l.match_index).hash(&mut digest);
                    (&l.context_before, &l.context_after).hash(&mut digest);
                }
            }
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
    println!("links digest {:016x}", digest.finish());
    Ok(())
}
