//! Property tests over generated markup soup: whatever the input, parsing never panics,
//! the partition covers the text exactly, the work stays within the upstream worst case
//! (quadratic in the length), and a read budget is exact. The seed is fixed so that a run
//! is reproducible; raise `PROPTEST_CASES` to search further.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use wikisuggest_text::wikitext::{ParseLimits, Wikitext, wikilinks};

/// Markup fragments, including the ones that open constructs the parser must backtrack.
const PIECES: &[&str] = &[
    "{", "}", "{{", "}}", "{{{", "[", "]", "[[", "]]", "|", "=", "==", "<", ">", "/", "'", "''",
    "'''", "!", "-", "-->", "<!--", ":", ";", "*", "#", "&", "&amp;", "&#123;", "\n", " ", "a",
    "é", "😀", "http://x", "<ref>", "</ref>", "<nowiki>", "<b>", "{|", "|}", "|-", "\u{1c}", "\0",
    "。", "cat",
];

fn soup() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(PIECES), 0..250).prop_map(|p| p.concat())
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5EED_2026),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn partition_covers_the_text(text in soup()) {
        let doc = Wikitext::parse(&text);
        // Parsing stops at the first NUL, as upstream's C tokenizer does.
        let len = text.chars().position(|c| c == '\0').unwrap_or(text.chars().count());
        let mut pos = 0;
        for node in doc.nodes() {
            prop_assert_eq!(node.start, pos);
            prop_assert!(node.end > node.start);
            pos = node.end;
        }
        prop_assert_eq!(pos, len);
        let chars = text.chars().count();
        for link in wikilinks(&text) {
            prop_assert!(link.span.start < link.span.end && link.span.end <= chars);
        }
    }

    #[test]
    fn work_is_at_most_quadratic_and_budgets_are_exact(text in soup()) {
        let (doc, reads) = Wikitext::parse_measured(&text);
        let n = text.chars().count() as u64 + 1;
        prop_assert!(reads <= 16 * n + n * n, "{} reads for {} code points", reads, n - 1);
        let budget = |max_reads| ParseLimits { deadline: None, max_reads: Some(max_reads) };
        let bounded = Wikitext::parse_bounded(&text, budget(reads)).unwrap();
        prop_assert_eq!(bounded.nodes(), doc.nodes());
        if reads > 0 {
            prop_assert!(Wikitext::parse_bounded(&text, budget(reads - 1)).is_err());
        }
    }
}
