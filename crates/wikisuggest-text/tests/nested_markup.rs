//! Deeply nested markup in the shapes and sizes of the reported pages (160 KB of
//! `[[a|[[a|…]]]]`, 400 KB through the whole pass): link extraction does work linear in the
//! page, counted and bounded (by a work limit, the time budget or cancellation); links are
//! byte ranges however deeply their labels nest; and the pass refuses, with a typed error,
//! a page whose existing links' labels would take more than a linear bound to read.

// Test support code: failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::AtomicBool;

use wikisuggest_text::TextError;
use wikisuggest_text::wikitext::{LinkRanges, ParseLimits, Wikitext, wikilink_ranges_bounded};

/// `open` × n, `x`, `close` × n, with n as large as fits in `bytes`.
fn nested(open: &str, close: &str, bytes: usize) -> (String, usize) {
    let depth = (bytes - 1) / (open.len() + close.len());
    (
        format!("{}x{}", open.repeat(depth), close.repeat(depth)),
        depth,
    )
}

const SHAPES: [(&str, &str); 5] = [
    ("[[a|", "]]"),
    ("{{a|", "}}"),
    ("{{{a|", "}}}"),
    ("[[a|{{b|", "}}]]"),
    ("<ref>[[a|", "]]</ref>"),
];

fn links(text: &str) -> (Vec<LinkRanges>, u64) {
    wikilink_ranges_bounded(text, &ParseLimits::default(), None).unwrap()
}

/// The extraction's work per byte of page.
const WORK_PER_BYTE: u64 = 64;

#[test]
fn nested_links_at_160_kb_are_all_found_with_linear_work() {
    let (text, depth) = nested("[[a|", "]]", 160_000);
    let (found, work) = links(&text);
    // Every level is a link; level k spans from its own `[[` to its own `]]`, with title
    // `a` and the rest of the level as its label, all of it ranges into the page.
    assert_eq!(found.len(), depth);
    for (k, link) in found.iter().enumerate() {
        let (start, end) = (4 * k, text.len() - 2 * k);
        assert_eq!(link.span, start..end);
        assert_eq!(&text[link.title.clone()], "a");
        assert_eq!(link.text, Some(start + 4..end - 2));
    }
    assert_eq!(&text[found[depth - 1].text.clone().unwrap()], "x");
    assert!(work <= WORK_PER_BYTE * text.len() as u64, "{work}");
}

#[test]
fn every_nested_shape_takes_work_linear_in_the_page() {
    for (open, close) in SHAPES {
        let (small, _) = nested(open, close, 80_000);
        let (large, depth) = nested(open, close, 160_000);
        let (found, w1) = links(&small);
        let (found_large, w2) = links(&large);
        // Twice the page, about twice the work (upstream: four times).
        assert!(w2 <= w1 * 21 / 10, "{open}: {w1} → {w2}");
        assert!(w2 <= WORK_PER_BYTE * large.len() as u64, "{open}: {w2}");
        // What is found: every level of a link shape (in a `<ref>`, the outermost reaches
        // the `</ref>` of the innermost and takes the whole tag with it), none of the others.
        let expected = match open {
            "[[a|" | "[[a|{{b|" => depth,
            "<ref>[[a|" => 1,
            _ => 0,
        };
        assert_eq!(found_large.len(), expected, "{open}");
        assert!(found.len() <= found_large.len());
    }
}

#[test]
fn a_work_limit_stops_extraction_exactly_at_the_work_counted() {
    for (open, close) in SHAPES {
        let (text, _) = nested(open, close, 20_000);
        let (found, work) = links(&text);
        let limits = |max_reads| ParseLimits {
            deadline: None,
            max_reads: Some(max_reads),
        };
        assert!(matches!(
            wikilink_ranges_bounded(&text, &limits(work - 1), None),
            Err(TextError::ParseLimitExceeded)
        ));
        assert_eq!(
            wikilink_ranges_bounded(&text, &limits(work), None).unwrap(),
            (found, work)
        );
    }
}

#[test]
fn a_cancelled_extraction_stops() {
    let (text, _) = nested("[[a|", "]]", 160_000);
    let cancel = AtomicBool::new(true);
    assert!(matches!(
        wikilink_ranges_bounded(&text, &ParseLimits::default(), Some(&cancel)),
        Err(TextError::ParseLimitExceeded)
    ));
}

/// The partition of the nested shapes reads each character a bounded number of times.
#[test]
fn the_partition_of_nested_shapes_is_linear() {
    for (open, close) in SHAPES {
        let (text, _) = nested(open, close, 400_000);
        let (_, reads) = Wikitext::parse_measured(&text);
        assert!(reads <= 4 * text.len() as u64, "{open}: {reads}");
    }
}

mod pipeline {
    use std::sync::atomic::AtomicBool;

    use wikisuggest_text::TextError;
    use wikisuggest_text::pipeline::{
        Candidate, LinkModel, Request, Stop, recommend, recommend_cancellable,
    };

    /// Every "cat" is a link to `Cat`, with probability 1; `A` is a page too, so that the
    /// nested links are all kept as existing links.
    struct Cats;

    impl LinkModel for Cats {
        fn candidates(&self, anchor: &str) -> Option<Vec<Candidate<'_>>> {
            (anchor == "cat").then(|| {
                vec![Candidate {
                    title: "Cat".into(),
                    count: 1,
                }]
            })
        }
        fn redirect(&self, _: &str) -> Option<String> {
            None
        }
        fn has_page(&self, title: &str) -> bool {
            title == "Cat" || title == "A"
        }
        fn scores(&self, _: &str, _: &str, c: &[Candidate<'_>]) -> Vec<f32> {
            vec![1.0; c.len()]
        }
    }

    fn request(wikitext: &str) -> Request<'_> {
        Request {
            wikitext,
            page_title: "Page",
            language_code: "en",
            threshold: 0.5,
            max_recommendations: 0,
            sections_to_exclude: &[],
            time_budget: None,
            max_work: None,
        }
    }

    /// The reported page: 400 KB of nested links, whose labels total 13 GB. The pass reads
    /// a bounded length of labels and refuses the page; moderately nested links are read.
    #[test]
    fn a_400_kb_page_of_nested_links_is_refused_after_linear_work() {
        let (nested, _) = super::nested("[[a|", "]]", 400_000);
        let page = format!("The cat sat. {nested}");
        match recommend(&Cats, &request(&page)) {
            Err(TextError::WorkLimitExceeded { stage, limit }) => {
                assert_eq!(stage, "existing links' labels");
                assert!(limit <= 8 * page.len() as u64 + 65_536, "{limit}");
            }
            other => panic!("{other:?}"),
        }
        // 50 levels: 7.5 KB of labels, read.
        let (nested, _) = super::nested("[[a|", "]]", 300);
        let page = format!("The cat sat. {nested}");
        let done = recommend(&Cats, &request(&page)).unwrap();
        assert_eq!(done.links.len(), 1);
        assert_eq!(done.stop, Stop::Complete);
    }

    /// A work limit refuses a page at the stage that reaches it, and a page within it gets
    /// the same links as without one.
    #[test]
    fn a_work_limit_refuses_the_page_at_the_stage_that_reaches_it() {
        let (nested, _) = super::nested("{{a|", "}}", 160_000);
        let page = format!("The cat sat. {nested}");
        let limited = |max_work| Request {
            max_work: Some(max_work),
            ..request(&page)
        };
        let unlimited = recommend(&Cats, &request(&page)).unwrap();
        assert_eq!(unlimited.links.len(), 1);
        assert_eq!(
            recommend(&Cats, &limited(100 * page.len() as u64)).unwrap(),
            unlimited
        );
        for (max_work, expected) in [
            (1_000, "markup"),
            (page.len() as u64 * 5 / 2, "existing links"),
        ] {
            match recommend(&Cats, &limited(max_work)) {
                Err(TextError::WorkLimitExceeded { stage, limit }) => {
                    assert_eq!((stage, limit), (expected, max_work));
                }
                other => panic!("{max_work}: {other:?}"),
            }
        }
    }

    #[test]
    fn cancelled_work_stops_like_an_exhausted_budget() {
        let (nested, _) = super::nested("{{a|", "}}", 160_000);
        let page = format!("The cat sat. {nested}");
        let cancel = AtomicBool::new(true);
        let stopped = recommend_cancellable(&Cats, &request(&page), Some(&cancel)).unwrap();
        assert!(stopped.links.is_empty());
        assert_eq!(stopped.stop, Stop::TimeBudget);
    }
}
