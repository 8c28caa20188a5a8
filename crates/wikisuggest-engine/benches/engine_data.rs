//! Benchmark of the data and scoring half of the link engine.
//!
//! ```text
//! cargo bench -p wikisuggest-engine --bench engine_data            # everything
//! cargo bench -p wikisuggest-engine --bench engine_data -- scoring # scoring only
//! cargo bench -p wikisuggest-engine --bench engine_data -- dataset [DIR]
//! ```
//!
//! `scoring` measures model rows/s (batch and single row) on the parity model and the
//! full feature + model path of `Scorer::score` over every parity anchor.
//!
//! `dataset` generates a synthetic enwiki-scale native file (7 M titles of which 6 M
//! articles with 50-d vectors and 1 M redirects, 15 M anchors, ~20 M candidates) into DIR
//! (default: the system temp dir; reused if present), then measures, in a fresh child
//! process, the open time, resident memory after opening, and lookup latencies.
//!
//! `tables ARTICLES_DIR [ROUNDS]` measures what table size costs the whole engine: the
//! shipped 6.7 MB enwiki sample against an enwiki-size file holding the sample's own tables
//! plus synthetic filler up to 7 M titles and 15 M anchors (built once per format version
//! under `target/bench-tables/`, then reused). Filler keys are common words followed by
//! `zq` and a hexadecimal number, so no article text matches them and both files must give
//! the same links (checked).
//! `recommend` runs over the articles of `ARTICLES_DIR` (`titles.tsv`: file, title) on
//! each file in turn, for `ROUNDS` interleaved rounds, timed in thread CPU time; the best
//! round of each file is reported, with their ratio. `bash bench/run tables` prepares
//! the articles and runs this.

// A benchmark binary reports by printing and stops on the first failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use wikisuggest_engine::native::{NO_PAGE, NONE_U32, NativeInput, StringTable};
use wikisuggest_engine::{
    Dataset, DatasetChecksums, LinkModel, NUM_FEATURES, RustLowercase, Scorer, write_native_file,
};

#[path = "common/enwiki_tables.rs"]
mod enwiki_tables;

use enwiki_tables::{ENWIKI, Rng, enwiki_size_tables, words};

const TITLES: usize = ENWIKI.titles;
const ARTICLES: usize = ENWIKI.articles;
const ANCHORS: usize = ENWIKI.anchors;
const DIM: usize = 50;
const WIKI: &str = "synthwiki";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn parity_dir() -> PathBuf {
    repo().join("tests/data/parity/datasets/enwiki")
}

/// CPU time of this thread in ns (from the scheduler), so results hold on a busy machine.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// Wall and CPU seconds of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (t, c) = (Instant::now(), cpu_ns());
    let out = f();
    (out, t.elapsed().as_secs_f64(), (cpu_ns() - c) as f64 / 1e9)
}

/// Resident memory in KiB: (anonymous, file-backed).
fn rss_parts_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
            .unwrap_or(0)
    };
    (field("RssAnon:"), field("RssFile:"))
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match args.first().map(String::as_str) {
        Some("scoring") => scoring(),
        Some("dataset") => dataset(args.get(1).map(PathBuf::from)),
        Some("open-child") => open_child(Path::new(&args[1])),
        Some("tables") => tables(&args[1..]),
        _ => {
            scoring();
            dataset(None);
        }
    }
}

// ---------------------------------------------------------------------------------------

fn scoring() {
    let json = std::fs::read(parity_dir().join("enwiki.linkmodel.json")).unwrap();
    let model = LinkModel::from_json(&json).unwrap();
    let flat: Vec<f64> = std::fs::read(repo().join("tests/data/engine-fixtures/rows.f64"))
        .unwrap()
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let base: Vec<[f32; NUM_FEATURES]> = flat
        .chunks_exact(NUM_FEATURES)
        .map(|r| std::array::from_fn(|i| r[i] as f32))
        .collect();
    let rows: Vec<[f32; NUM_FEATURES]> = base.iter().cycle().take(1_000_000).copied().collect();

    println!(
        "== scoring (parity model: {} trees, {} nodes)",
        model.num_trees(),
        model.num_nodes()
    );
    let mut out = vec![0.0f32; rows.len()];
    for _ in 0..2 {
        model.predict_batch_into(&rows, &mut out);
    }
    let reps = 5;
    let ((), wall, cpu) = timed(|| {
        for _ in 0..reps {
            model.predict_batch_into(black_box(&rows), &mut out);
        }
    });
    let n = (reps * rows.len()) as f64;
    println!(
        "predict_batch: {:.2} M rows/s CPU ({:.0} ns/row CPU, {:.0} ns/row wall), 1 thread",
        n / cpu / 1e6,
        cpu * 1e9 / n,
        wall * 1e9 / n
    );
    let (acc, wall, cpu) = timed(|| {
        let mut acc = 0.0f32;
        for r in rows.iter().take(200_000) {
            acc += model.predict(black_box(r));
        }
        acc
    });
    black_box(acc);
    println!(
        "predict (single row): {:.0} ns/row CPU ({:.0} wall)",
        cpu * 1e9 / 200_000.0,
        wall * 1e9 / 200_000.0
    );

    let t = Instant::now();
    let ds = Dataset::open(&parity_dir(), "enwiki").unwrap();
    println!(
        "open published parity dataset (gunzip + unpickle + index, in memory): {:.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let scorer = Scorer::new(Arc::new(RustLowercase));
    let mut anchors = Vec::new();
    ds.for_each_anchor(|a, _| {
        anchors.push(a.to_owned());
        Ok(())
    })
    .unwrap();
    let (scored, wall, cpu) = timed(|| {
        let mut scored = 0usize;
        for a in &anchors {
            let s = scorer.score(&ds, "Cat", a, 1).unwrap().unwrap();
            scored += s.candidates.len();
            black_box(s.best());
        }
        scored
    });
    println!(
        "Scorer::score over {} anchors: {} candidates in {:.0} ms CPU = {:.2} µs/candidate CPU \
         ({:.2} wall; lookups + 7 features + model)",
        anchors.len(),
        scored,
        cpu * 1e3,
        cpu * 1e6 / scored as f64,
        wall * 1e6 / scored as f64
    );
}

// ---------------------------------------------------------------------------------------

fn generate(dir: &Path) -> PathBuf {
    let t = Instant::now();
    let mut rng = Rng(7);
    let model_json = std::fs::read(parity_dir().join("enwiki.linkmodel.json")).unwrap();
    let model = LinkModel::from_json(&model_json).unwrap();

    let mut titles = StringTable::default();
    for i in 0..TITLES {
        let n = 1 + rng.below(3);
        // The index keeps titles unique; the words give realistic lengths (~20 bytes).
        let t = format!("{} {i:x}", words(&mut rng, n, true));
        titles.push(&t).unwrap();
    }
    let mut page_ids = vec![NO_PAGE; TITLES];
    let mut vector_rows = vec![NONE_U32; TITLES];
    let mut redirects = vec![NONE_U32; TITLES];
    for i in 0..TITLES {
        if i < ARTICLES {
            page_ids[i] = i as i64 + 1;
            vector_rows[i] = i as u32;
        } else {
            redirects[i] = rng.below(ARTICLES) as u32;
        }
    }
    let mut vectors = Vec::with_capacity(ARTICLES * DIM);
    for _ in 0..ARTICLES * DIM {
        vectors.push((rng.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5);
    }
    let mut anchors = StringTable::default();
    let mut candidate_offsets = Vec::with_capacity(ANCHORS + 1);
    candidate_offsets.push(0u64);
    let mut candidates = Vec::with_capacity(ANCHORS * 4 / 3);
    for i in 0..ANCHORS {
        let n = 1 + rng.below(4);
        anchors
            .push(&format!("{} {i:x}", words(&mut rng, n, false)))
            .unwrap();
        // Mostly one candidate, a long tail of ambiguous anchors.
        let k = match rng.below(100) {
            0 => 10 + rng.below(200),
            1..=20 => 2 + rng.below(4),
            _ => 1,
        };
        for _ in 0..k {
            candidates.push((rng.below(ARTICLES) as u32, 1 + rng.below(50) as u32));
        }
        candidate_offsets.push(candidates.len() as u64);
    }
    let input = NativeInput {
        wiki_id: WIKI.to_owned(),
        checksums: DatasetChecksums::default(),
        titles,
        page_ids,
        redirects,
        vector_rows,
        dim: DIM,
        vectors,
        anchors,
        candidate_offsets,
        candidates,
        model,
        model_json,
    };
    println!(
        "generated synthetic tables in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let path = write_native_file(&input, dir).unwrap();
    println!(
        "wrote {} ({:.2} GB) in {:.1} s",
        path.display(),
        std::fs::metadata(&path).unwrap().len() as f64 / 1e9,
        t.elapsed().as_secs_f64()
    );
    path
}

fn dataset(dir: Option<PathBuf>) {
    let dir = dir.unwrap_or_else(|| std::env::temp_dir().join("wikisuggest-bench-synthwiki"));
    let path = dir.join(format!("{WIKI}.linkdata"));
    println!("== synthetic enwiki-scale dataset in {}", dir.display());
    if !path.is_file() {
        generate(&dir);
    }
    // Measure in a fresh process, so generation memory does not count.
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["open-child", path.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn open_child(path: &Path) {
    let rss0 = rss_kib();
    let (ds, open_wall, open_cpu) = timed(|| Dataset::open_native(path).unwrap());
    let rss1 = rss_kib();
    let info = ds.info();
    println!(
        "open: {:.3} ms wall ({:.3} ms CPU); RSS before {} MiB, after open {} MiB; {} titles, \
         {} anchors, {} candidates, {} vectors × {}",
        open_wall * 1e3,
        open_cpu * 1e3,
        rss0 / 1024,
        rss1 / 1024,
        info.titles,
        info.anchors,
        info.candidates,
        info.vectors,
        info.dim
    );

    // Lookups of existing keys, picked by index at random.
    let mut rng = Rng(99);
    let n = 100_000;
    let title_keys: Vec<String> = (0..n)
        .map(|_| {
            ds.title_at(rng.below(info.titles as usize))
                .unwrap()
                .to_owned()
        })
        .collect();
    let t = Instant::now();
    let mut hits = 0;
    for k in &title_keys {
        hits += usize::from(ds.has_page(k).unwrap());
        hits += usize::from(ds.vector(k).unwrap().is_some());
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "{n} random title lookups (has_page + vector): {:.2} µs each (cold pages included), {hits} hits",
        dt * 1e6 / n as f64
    );
    let t = Instant::now();
    let mut misses = 0;
    for i in 0..n {
        misses += usize::from(
            ds.anchor_candidates(&format!("no such anchor {i}"))
                .unwrap()
                .is_none(),
        );
    }
    println!(
        "{n} anchor misses: {:.2} µs each",
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
    let scorer = Scorer::new(Arc::new(RustLowercase));
    // Anchors are only reachable by key; collect some via iteration over a prefix.
    let mut keys = Vec::new();
    let _ = ds.for_each_anchor(|a, _| {
        if keys.len() < 20_000 {
            keys.push(a.to_owned());
            Ok(())
        } else {
            Err(wikisuggest_engine::Error::InvalidArgument("enough".into()))
        }
    });
    let t = Instant::now();
    let mut scored = 0;
    for k in &keys {
        scored += scorer
            .score(&ds, &title_keys[0], k, 2)
            .unwrap()
            .map_or(0, |s| s.candidates.len());
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "Scorer::score on {} anchors: {scored} candidates, {:.2} µs/candidate",
        keys.len(),
        dt * 1e6 / scored as f64
    );
    let (anon, file) = rss_parts_kib();
    println!(
        "RSS after {misses} misses, {} lookups and scoring: {} MiB anonymous + {} MiB \
         file-backed (clean, reclaimable page cache of the {:.2} GB map)",
        2 * n,
        anon / 1024,
        file / 1024,
        std::fs::metadata(path).unwrap().len() as f64 / 1e9
    );
}

// ---------------------------------------------------------------------------------------

fn sample_path() -> PathBuf {
    repo().join("python/wikisuggest/data/enwiki.linkdata")
}

/// The enwiki-size file for this format version, built if missing.
fn enwiki_size_file(sample: &Dataset) -> PathBuf {
    let version = u32::from_le_bytes(
        std::fs::read(sample_path()).unwrap()[8..12]
            .try_into()
            .unwrap(),
    );
    let dir = repo().join(format!("target/bench-tables/format-v{version}"));
    let path = dir.join("enwiki.linkdata");
    if path.is_file() {
        return path;
    }
    let t = Instant::now();
    let (tables, filler) = enwiki_size_tables(sample, ENWIKI);
    let input = NativeInput::from_tables(
        "enwiki",
        &tables,
        sample.model_json().to_vec(),
        sample.checksums().clone(),
    )
    .unwrap();
    drop(tables);
    println!(
        "built enwiki-size tables ({filler} filler titles) in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let written = write_native_file(&input, &dir).unwrap();
    println!(
        "wrote {} in {:.1} s",
        written.display(),
        t.elapsed().as_secs_f64()
    );
    path
}

fn describe(label: &str, path: &Path, ds: &Dataset) -> String {
    let info = ds.info();
    format!(
        "{label}: {} ({:.1} MB; {} titles, {} anchors, {} candidates, {} vectors × {})",
        path.display(),
        std::fs::metadata(path).unwrap().len() as f64 / 1e6,
        info.titles,
        info.anchors,
        info.candidates,
        info.vectors,
        info.dim
    )
}

fn tables(args: &[String]) {
    use wikisuggest_engine::{Engine, LinkOptions, RecommendOptions};
    let articles_dir = PathBuf::from(args.first().expect("usage: tables ARTICLES_DIR [ROUNDS]"));
    let rounds: usize = args.get(1).map_or(7, |r| r.parse().unwrap());
    let mut pages = Vec::new();
    for line in std::fs::read_to_string(articles_dir.join("titles.tsv"))
        .unwrap()
        .lines()
    {
        let (file, title) = line.split_once('\t').unwrap();
        let text = std::fs::read_to_string(articles_dir.join(file)).unwrap();
        pages.push((title.to_owned(), text));
    }
    let bytes: usize = pages.iter().map(|(_, t)| t.len()).sum();

    let small_path = sample_path();
    let small = Dataset::open_native(&small_path).unwrap();
    let large_path = enwiki_size_file(&small);
    let large = Dataset::open_native(&large_path).unwrap();
    println!("== per-article CPU of recommend: small vs enwiki-size tables");
    println!(
        "articles: {} from {} ({:.2} MB of wikitext)",
        pages.len(),
        articles_dir.display(),
        bytes as f64 / 1e6
    );
    println!("{}", describe("small", &small_path, &small));
    println!("{}", describe("large", &large_path, &large));
    let engines = [Engine::new(small), Engine::new(large)];
    let settings = [
        ("API defaults", RecommendOptions::default()),
        (
            "threshold 0, no maximum",
            RecommendOptions {
                link: LinkOptions {
                    threshold: 0.0,
                    max_recommendations: 0,
                    ..LinkOptions::default()
                },
                ..RecommendOptions::default()
            },
        ),
    ];
    println!(
        "{rounds} rounds, small and large interleaved; one thread, thread CPU time; best round"
    );
    println!(
        "\n{:26}{:>14}{:>14}{:>9}{:>16}",
        "", "small µs/art", "large µs/art", "ratio", "median ratio"
    );
    for (name, options) in &settings {
        let links = |engine: &Engine| -> Vec<String> {
            pages
                .iter()
                .map(|(title, text)| {
                    let set = engine.recommend(text, title, None, None, options).unwrap();
                    format!("{:?}", set.links)
                })
                .collect()
        };
        // Same links from both files: the filler must not change any answer.
        assert!(
            links(&engines[0]) == links(&engines[1]),
            "the two datasets gave different links"
        );
        let run = |engine: &Engine| {
            for (title, text) in &pages {
                black_box(engine.recommend(text, title, None, None, options).unwrap());
            }
        };
        let mut best = [f64::MAX; 2];
        let mut ratios = Vec::new();
        for round in 0..rounds {
            let mut cpu = [0.0; 2];
            // Alternate which file goes first, so neither always runs on a warmer cache.
            for k in [round % 2, 1 - round % 2] {
                let ((), _, c) = timed(|| run(&engines[k]));
                cpu[k] = c;
                best[k] = best[k].min(c);
            }
            ratios.push(cpu[1] / cpu[0]);
        }
        ratios.sort_by(f64::total_cmp);
        let per = |s: f64| s * 1e6 / pages.len() as f64;
        println!(
            "{name:26}{:14.0}{:14.0}{:8.2}×{:15.2}×",
            per(best[0]),
            per(best[1]),
            best[1] / best[0],
            ratios[ratios.len() / 2]
        );
    }
}
