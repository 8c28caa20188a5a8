//! Builds one catalog with [`wikisuggest_translation::build`], the function behind
//! `TranslationEngine.published`, `wikisuggest translation fetch` and `wikisuggest translation
//! build`, with the options they use by default (1 GiB of sort buffers, a reader per core).
//! `bench/translation_scale.py` runs it on generated dumps of enwiki's shape and measures the
//! process (`bash bench/run translation`).
//!
//! Usage: `catalog_build --wiki W --page F --page-props F --langlinks F --redirect F
//! [--cirrus F]... [--pageviews F] [--memory-mb N] --out DIR` prints each phase's start on
//! stderr (seconds since the start, phase), then the catalog's description, the build's peak
//! resident memory and its CPU time as JSON on stdout. `catalog_build --open DIR` opens a
//! catalog as the engine does and prints the time and resident memory that takes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../wikisuggest-search/examples/process/mod.rs"]
mod process;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wikisuggest_translation::build::{BuildOptions, Sources, SqlSources};

fn main() {
    let (mut wiki, mut page, mut props, mut links, mut redirect) = (None, None, None, None, None);
    let (mut cirrus, mut pageviews, mut out, mut memory) = (Vec::new(), None, None, 1024usize);
    let mut rest: Vec<String> = std::env::args().skip(1).collect();
    rest.reverse();
    while let Some(flag) = rest.pop() {
        let mut take =
            || PathBuf::from(rest.pop().unwrap_or_else(|| panic!("{flag} needs a value")));
        match flag.as_str() {
            "--wiki" => wiki = Some(take().to_string_lossy().into_owned()),
            "--page" => page = Some(take()),
            "--page-props" => props = Some(take()),
            "--langlinks" => links = Some(take()),
            "--redirect" => redirect = Some(take()),
            "--cirrus" => cirrus.push(take()),
            "--pageviews" => pageviews = Some(take()),
            "--out" => out = Some(take()),
            "--open" => return open_only(&take()),
            "--memory-mb" => memory = take().to_string_lossy().parse().expect("--memory-mb N"),
            other => panic!("unknown argument {other}"),
        }
    }
    let sources = Sources {
        wiki: wiki.expect("--wiki"),
        sql: SqlSources {
            page: page.expect("--page"),
            page_props: props.expect("--page-props"),
            langlinks: links.expect("--langlinks"),
            redirect: redirect.expect("--redirect"),
            namespaces: None,
        },
        cirrus,
        pageviews,
        collections: None,
    };
    let out = out.expect("--out");
    let options = BuildOptions {
        memory: memory << 20,
        ..BuildOptions::default()
    };
    let progress = Arc::clone(&options.progress);
    let start = Instant::now();
    let worker =
        std::thread::spawn(move || wikisuggest_translation::build(&sources, &out, &options));
    let mut phase = None;
    while !worker.is_finished() {
        let now = progress.get().map(|(p, _)| p);
        if now != phase {
            if let Some(p) = now {
                eprintln!("{:.3} {}", start.elapsed().as_secs_f64(), p.name());
            }
            phase = now;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let manifest = worker
        .join()
        .expect("the build panicked")
        .expect("the build failed");
    eprintln!("{:.3} done", start.elapsed().as_secs_f64());
    let build_peak = process::status_kib("VmHWM:");
    let build_cpu = process::cpu_seconds();
    let report = serde_json::json!({
        "manifest": manifest,
        "build_peak_rss_kib": build_peak,
        "build_cpu_seconds": build_cpu,
    });
    println!("{report}");
}

/// `--open DIR`: the engine opened on a catalog in a fresh process, its time and the resident
/// memory it adds.
fn open_only(dir: &std::path::Path) {
    let before = process::status_kib("VmRSS:");
    let opened = Instant::now();
    let engine = wikisuggest_translation::Engine::open(dir).expect("the catalog opens");
    let open_seconds = opened.elapsed().as_secs_f64();
    let report = serde_json::json!({
        "open_seconds": open_seconds,
        "rss_before_kib": before,
        "open_rss_kib": process::status_kib("VmRSS:"),
        "open_peak_rss_kib": process::status_kib("VmHWM:"),
    });
    drop(engine);
    println!("{report}");
}
