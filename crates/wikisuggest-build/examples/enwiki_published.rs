//! Writes enwiki-size published files for the conversion benchmark (`bench/convert.py`): the
//! benchmarks' synthetic enwiki-size tables (the shipped sample's tables plus filler up to
//! 7 M titles and 15 M anchors) in the published formats, `lr_enwiki_*.sql.gz` with pickled
//! values and the model, each with its `.checksum`.
//!
//! ```text
//! cargo run -p wikisuggest-build --example enwiki_published -- OUT_DIR [DIVISOR]
//! ```
//!
//! `DIVISOR` writes a fraction of enwiki's size (e.g. 8 for an eighth).

// An example binary reports by printing and stops on the first failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../wikisuggest-engine/benches/common/enwiki_tables.rs"]
mod enwiki_tables;

use std::path::{Path, PathBuf};
use std::time::Instant;

use enwiki_tables::{ENWIKI, enwiki_size_tables};
use wikisuggest_build::publish::write_published_with;
use wikisuggest_engine::Dataset;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(
        args.first()
            .expect("usage: enwiki_published OUT_DIR [DIVISOR]"),
    );
    let divisor: usize = args
        .get(1)
        .map_or(1, |d| d.parse().expect("DIVISOR is a number"));
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sample = Dataset::open_native(&repo.join("python/wikisuggest/data/enwiki.linkdata"))
        .expect("the shipped sample dataset");
    let t = Instant::now();
    let (tables, filler) = enwiki_size_tables(&sample, ENWIKI.divided(divisor));
    println!(
        "generated {} anchors, {} page ids, {} redirects ({filler} filler titles) in {:.1} s",
        tables.anchors.len(),
        tables.pageids.len(),
        tables.redirects.len(),
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    // Level 1: gigabytes at level 9 take an hour, and the reader's cost hardly depends on it.
    let level = flate2::Compression::fast();
    write_published_with(&out, "enwiki", &tables, sample.model_json(), level).expect("written");
    println!(
        "wrote the published files into {} in {:.1} s",
        out.display(),
        t.elapsed().as_secs_f64()
    );
}
