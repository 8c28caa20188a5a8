//! Hostile inputs: deep nesting, unclosed constructs, long lines and random
//! markup must never panic, must keep the partition an exact cover of the
//! text, and the linear cases must stay linear.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::{Duration, Instant};

use wikisuggest_text::MwTokenizer;
use wikisuggest_text::sections::{SectionExclusion, included_sections};
use wikisuggest_text::wikitext::{Wikitext, wikilinks};

#[path = "common/hostile_patterns.rs"]
mod hostile_patterns;
use hostile_patterns::PATTERNS;

/// Parses everything the engine would and checks the partition invariants.
fn exercise(text: &str) {
    let doc = Wikitext::parse(text);
    // Like upstream, parsing stops at the first NUL character.
    let len = text
        .chars()
        .position(|c| c == '\0')
        .unwrap_or(text.chars().count());
    let mut pos = 0;
    for node in doc.nodes() {
        assert_eq!(node.start, pos, "gap or overlap at {pos}");
        assert!(node.end > node.start, "empty node at {pos}");
        if let Some(title) = node.heading_title() {
            assert!(node.start <= title.start && title.end <= node.end);
        }
        pos = node.end;
    }
    assert_eq!(pos, len, "partition does not reach the end of {text:?}");
    for link in wikilinks(text) {
        assert!(link.span.start < link.span.end && link.span.end <= text.chars().count());
    }
    let tokenizer = MwTokenizer::new("en").unwrap();
    for section in included_sections(&doc, &SectionExclusion::new(&["%LEAD%"])) {
        for node in &doc.nodes()[section.nodes] {
            let value = doc.node_text(node);
            for sentence in tokenizer.node_sentences(&value) {
                assert_eq!(tokenizer.words(sentence).concat(), sentence);
            }
        }
    }
}

#[test]
fn repeated_constructs_never_panic() {
    for p in PATTERNS {
        exercise(&p.repeat(3000 / p.len()));
        exercise(&format!("x\n{}y", p.repeat(1000 / p.len())));
    }
}

#[test]
fn deep_nesting_stays_within_the_stack() {
    // More nesting than the depth limit of the upstream tokenizer (100).
    for (open, close) in [
        ("{{a|", "}}"),
        ("[[a|", "]]"),
        ("<span>", "</span>"),
        ("''x'''y", ""),
    ] {
        exercise(&format!("{}z{}", open.repeat(300), close.repeat(300)));
    }
    exercise(&"{|\n|a\n".repeat(300));
}

/// A tiny deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn random_markup_never_panics() {
    let pieces = [
        "{", "}", "[", "]", "|", "=", "<", ">", "/", "'", "!", "-", ":", ";", "*", "#", "&", "\n",
        " ", "a", "é", "http://", "ref", "nowiki", "!--", "amp;", "{|", "|}", "|-", "\u{1c}", "\0",
        "。",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..400 {
        let len = (rng.next() % 400) as usize;
        let text: String = (0..len)
            .map(|_| pieces[(rng.next() % pieces.len() as u64) as usize])
            .collect();
        exercise(&text);
    }
}

#[test]
fn parsing_stops_at_nul_like_upstream() {
    let doc = Wikitext::parse("{{a\0b}}");
    assert_eq!(doc.nodes().len(), 1);
    assert_eq!(doc.node_text(&doc.nodes()[0]), "{{a");
}

#[test]
fn megabyte_line_is_fine() {
    let line = "word ".repeat(200_000);
    let (doc, reads) = Wikitext::parse_measured(&line);
    assert_eq!(doc.nodes().len(), 1);
    assert!(reads <= 2 * line.len() as u64, "{reads} reads");
}

/// Work is counted in character reads, the tokenizer's own measure, so these
/// checks are exact and do not depend on how busy the machine is.
fn reads(text: &str) -> u64 {
    Wikitext::parse_measured(text).1
}

/// Inputs for which the algorithm is linear: 100× the input costs 100× the
/// reads (plus a constant), a handful per character.
#[test]
fn linear_cases_scale_linearly() {
    for p in [
        "{{", "''", "'''", "<!--", "&amp", "==a\n", "{{{", "[[", "a b. c! ", "]]",
    ] {
        let small = p.repeat(10_000 / p.len());
        let large = p.repeat(1_000_000 / p.len());
        let (r_small, r_large) = (reads(&small), reads(&large));
        assert!(
            r_large <= r_small * 101 && r_large <= 4 * large.len() as u64,
            "{p:?}: {r_small} reads for 10 KB but {r_large} for 1 MB"
        );
    }
}

/// Inputs that are quadratic upstream too (every unclosed construct scans to
/// the end of the text): 4× the input costs about 16× the reads, not more.
#[test]
fn quadratic_cases_stay_quadratic() {
    for p in ["<b>", "{{a|", "[[a|", "<ref>", "{|\n", "[http://x "] {
        let small = p.repeat(2_000 / p.len());
        let large = p.repeat(8_000 / p.len());
        let (r_small, r_large) = (reads(&small), reads(&large));
        assert!(
            r_large <= r_small * 18,
            "{p:?}: {r_small} reads for 2 KB but {r_large} for 8 KB"
        );
    }
}

/// Real pages need only a handful of reads per code point; the same limit
/// stops pathological input early, and a page that fits gets the exact
/// unbounded result.
#[test]
fn read_limits_are_exact_or_fail() {
    use wikisuggest_text::TextError;
    use wikisuggest_text::wikitext::ParseLimits;

    let per_char = 64;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/parity/articles/enwiki");
    let mut worst = 0.0f64;
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let len = text.chars().count() as u64;
        let limits = |k: u64| ParseLimits {
            deadline: None,
            max_reads: Some(k * len.max(1)),
        };
        let bounded = Wikitext::parse_bounded(&text, limits(per_char)).unwrap();
        assert_eq!(bounded.nodes(), Wikitext::parse(&text).nodes());
        let (_, used) = Wikitext::parse_measured(&text);
        let needed = used.div_ceil(len.max(1));
        // The limit is exact: one read fewer than the parse needs is too few.
        assert!(Wikitext::parse_bounded(&text, limits(needed)).is_ok());
        let one_short = ParseLimits {
            deadline: None,
            max_reads: Some(used - 1),
        };
        assert!(Wikitext::parse_bounded(&text, one_short).is_err());
        worst = worst.max(needed as f64);
    }
    println!("worst parity article needs {worst} reads per code point");
    let junk = "<b>".repeat(20_000);
    let limits = ParseLimits {
        deadline: None,
        max_reads: Some(per_char * junk.chars().count() as u64),
    };
    assert!(matches!(
        Wikitext::parse_bounded(&junk, limits),
        Err(TextError::ParseLimitExceeded)
    ));
    assert!(reads(&junk) > per_char * junk.chars().count() as u64);
    let deadline = ParseLimits {
        deadline: Some(Instant::now() + Duration::from_millis(50)),
        max_reads: None,
    };
    let start = Instant::now();
    assert!(Wikitext::parse_bounded(&"{{a|".repeat(100_000), deadline).is_err());
    assert!(start.elapsed() < Duration::from_secs(5));
}
