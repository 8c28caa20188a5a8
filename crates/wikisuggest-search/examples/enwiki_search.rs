//! Speed and size of seed search on a generated index of enwiki's shape (`bash bench/run
//! search`): build time, peak memory, size on disk, and one seed query's time on one core,
//! against tantivy's own `MoreLikeThisQuery` on the same index as the baseline.
//!
//! enwiki has about 6.9 million articles of about 680 words on average (4.7 billion words).
//! The corpus generated here has that shape scaled by `--fraction` (default 0.02): article
//! lengths log-normal (median 350 words, mean 680), words Zipf-distributed over 30 million
//! ranks, and each article drawing 30 % of its words from one of its topic's 200 words (one
//! topic per 140 articles), so that seeds have repeated, specific terms as real articles do.
//! Figures for the whole of enwiki are extrapolated from the fraction, linearly.
//!
//! Usage: `enwiki_search [--fraction F] [--queries N] [--keep DIR]`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod process;

use std::path::{Path, PathBuf};
use std::time::Instant;

use tantivy::collector::TopDocs;
use tantivy::query::{MoreLikeThisQuery, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{Index, Term};
use wikisuggest_search::analysis::{profile, text_analyzer};
use wikisuggest_search::{BuildOptions, Document, SearchIndex, TEXT_ANALYZER, build_index};

const ENWIKI_ARTICLES: f64 = 6_900_000.0;
const RANKS: f64 = 30_000_000.0;
const TOPIC_SIZE: usize = 200;
const ARTICLES_PER_TOPIC: usize = 140;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit().max(1e-300), self.unit());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
    /// Zipf with exponent 1 over `RANKS` ranks (log-uniform).
    fn zipf(&mut self) -> u64 {
        (self.unit() * RANKS.ln()).exp() as u64
    }
}

/// A pronounceable word for a rank: frequent ranks get short words.
fn word(mut rank: u64, out: &mut String) {
    const C: &[u8] = b"bcdfghjklmnprstvwz";
    const V: &[u8] = b"aeiou";
    loop {
        out.push(C[(rank % 18) as usize] as char);
        rank /= 18;
        out.push(V[(rank % 5) as usize] as char);
        rank /= 5;
        if rank == 0 {
            break;
        }
    }
}

fn article(i: usize, rng: &mut Rng) -> Document {
    let len = ((5.86 + 1.15 * rng.normal()).exp() as usize).clamp(5, 50_000);
    let topic = (i / ARTICLES_PER_TOPIC) as u64;
    let mut text = String::with_capacity(len * 8);
    for _ in 0..len {
        let rank = if rng.unit() < 0.3 {
            // Topic words sit in the middle of the frequency range.
            10_000 + topic * TOPIC_SIZE as u64 + rng.next() % TOPIC_SIZE as u64
        } else {
            rng.zipf()
        };
        word(rank, &mut text);
        text.push(' ');
    }
    let redirects = (0..(i % 3)).map(|k| format!("Alias {i} {k}")).collect();
    Document {
        page_id: i as u64 + 1,
        title: format!("Article {i}"),
        text,
        redirects,
        disambiguation: i.is_multiple_of(20),
    }
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
                .sum()
        })
        .unwrap_or(0)
}

fn peak_rss_mib() -> f64 {
    process::status_kib("VmHWM:") as f64 / 1024.0
}

/// CPU time of the calling thread, in milliseconds (the machine is shared: wall time would
/// count other work).
fn thread_cpu_ms() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 * 1000.0 + t.tv_nsec as f64 / 1e6
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let mut fraction = 0.02f64;
    let mut queries = 200usize;
    let mut keep: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--fraction" => {
                fraction = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--fraction F")
            }
            "--queries" => {
                queries = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--queries N")
            }
            "--keep" => keep = args.next().map(PathBuf::from),
            other => panic!("unknown argument {other}"),
        }
    }
    let n = (ENWIKI_ARTICLES * fraction) as usize;
    let scratch = tempfile::tempdir().expect("scratch folder");
    let dir = keep.clone().unwrap_or_else(|| scratch.path().join("index"));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "seed search on a generated enwiki-shaped index: {n} articles ({:.1} % of enwiki's {ENWIKI_ARTICLES})",
        fraction * 100.0
    );
    println!("load average at start: {}", load.trim());

    let mut rng = Rng(42);
    let mut words = 0u64;
    let docs = (0..n).map(|i| {
        let d = article(i, &mut rng);
        words += d.text.split(' ').count() as u64 - 1;
        d
    });
    let (wall, cpu) = (Instant::now(), process::cpu_seconds());
    let mut options = BuildOptions::new("en");
    options.memory_budget = 256 << 20;
    build_index(&dir, docs, &options, None).expect("build");
    let build_wall = wall.elapsed().as_secs_f64();
    let build_cpu = process::cpu_seconds() - cpu;
    let size = dir_size(&dir);
    println!(
        "build: {words} words, {build_wall:.0} s wall, {build_cpu:.0} s CPU (generation included), peak RSS {:.0} MiB, index {:.0} MiB",
        peak_rss_mib(),
        size as f64 / (1 << 20) as f64
    );
    let scale = 1.0 / fraction;
    println!(
        "  extrapolated to enwiki: {:.0} min CPU, index {:.1} GiB (peak memory is bounded by the indexing budget, not the size)",
        build_cpu * scale / 60.0,
        size as f64 * scale / (1u64 << 30) as f64
    );

    let index = SearchIndex::open(&dir).expect("open");
    let mut qrng = Rng(7);
    let seeds: Vec<String> = (0..queries)
        .map(|_| format!("Article {}", qrng.next() % n as u64))
        .collect();
    // Warm the page cache and the term dictionary once.
    for s in seeds.iter().take(10) {
        index.similar(&[s.as_str()], 500).expect("query");
    }
    let mut ours = Vec::new();
    let mut hits = 0usize;
    let mut wall = Vec::new();
    for s in &seeds {
        let (t, c) = (Instant::now(), thread_cpu_ms());
        hits += index.similar(&[s.as_str()], 500).expect("query").len();
        ours.push(thread_cpu_ms() - c);
        wall.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    wall.sort_by(f64::total_cmp);
    ours.sort_by(f64::total_cmp);

    // The baseline: tantivy's own MoreLikeThisQuery (min_doc_frequency 2, otherwise its
    // defaults) on the same index, top 500.
    let raw = Index::open_in_dir(&dir).expect("tantivy index");
    raw.tokenizers()
        .register(TEXT_ANALYZER, text_analyzer(profile("en").expect("en")));
    let reader = raw.reader().expect("reader");
    let searcher = reader.searcher();
    let key = raw.schema().get_field("title_key").expect("title_key");
    let mut theirs = Vec::new();
    for s in &seeds {
        let c = thread_cpu_ms();
        let q = TermQuery::new(Term::from_field_text(key, s), IndexRecordOption::Basic);
        let Some((_, address)) = searcher
            .search(&q, &TopDocs::with_limit(1).order_by_score())
            .expect("lookup")
            .into_iter()
            .next()
        else {
            continue;
        };
        let mlt = MoreLikeThisQuery::builder()
            .with_min_doc_frequency(2)
            .with_document(address);
        searcher
            .search(&mlt, &TopDocs::with_limit(500).order_by_score())
            .expect("mlt");
        theirs.push(thread_cpu_ms() - c);
    }
    theirs.sort_by(f64::total_cmp);
    let (m, t) = (percentile(&ours, 0.5), percentile(&theirs, 0.5));
    println!(
        "one seed, top 500, one core (thread CPU time): median {m:.1} ms, p90 {:.1} ms, max {:.1} ms ({:.0} hits on average) over {queries} seeds; wall median {:.1} ms",
        percentile(&ours, 0.9),
        ours[ours.len() - 1],
        hits as f64 / queries as f64,
        percentile(&wall, 0.5)
    );
    println!(
        "  baseline tantivy MoreLikeThisQuery (CPU): median {t:.1} ms, p90 {:.1} ms; ratio {:.2}x",
        percentile(&theirs, 0.9),
        m / t
    );
    println!(
        "  upper bound for enwiki (as if every posting list grew with the article count): median {:.0} ms; run two fractions to see the real growth",
        m * scale
    );
    println!(
        "load average at end: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
}
