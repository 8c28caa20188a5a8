//! Deeply nested markup: link extraction does work quadratic in the nesting, so it is
//! counted and bounded (by a work limit, the time budget or cancellation), and links are
//! ranges, never copies of their nested labels.

// Test support code: failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::AtomicBool;

use wikisuggest_text::TextError;
use wikisuggest_text::wikitext::{ParseLimits, wikilink_ranges_bounded, wikilinks_measured};

fn nested(open: &str, close: &str, depth: usize) -> String {
    format!("{}x{}", open.repeat(depth), close.repeat(depth))
}

fn shapes(depth: usize) -> [String; 3] {
    [
        nested("[[a|", "]]", depth),
        nested("{{a|", "}}", depth),
        nested("{{{a|", "}}}", depth),
    ]
}

#[test]
fn work_is_counted_and_grows_with_the_nesting() {
    for (small, large) in shapes(200).iter().zip(shapes(400).iter()) {
        let (_, w1) = wikilinks_measured(small);
        let (_, w2) = wikilinks_measured(large);
        // Twice as deep is about four times the work: the counter sees the quadratic case.
        assert!(w2 > 3 * w1, "{w1} → {w2} for {}", &small[..8]);
    }
    // Flat text costs a small multiple of its length.
    let flat = "[[a|b]] and {{c|d}} and {{{e|f}}} ".repeat(400);
    let (links, w) = wikilinks_measured(&flat);
    assert_eq!(links.len(), 400);
    assert!(w < 20 * flat.len() as u64, "{w} for {} bytes", flat.len());
}

#[test]
fn a_work_limit_stops_extraction_of_nested_markup() {
    for text in shapes(2000) {
        let chars: Vec<char> = text.chars().collect();
        let (_, unbounded) = wikilinks_measured(&text);
        let limit = 50 * chars.len() as u64;
        assert!(unbounded > 10 * limit, "{unbounded} ≤ 10 × {limit}");
        let limits = ParseLimits {
            deadline: None,
            max_reads: Some(limit),
        };
        assert!(matches!(
            wikilink_ranges_bounded(&chars, &limits, None),
            Err(TextError::ParseLimitExceeded)
        ));
    }
    // Within the limit, the ranges are the links.
    let text = nested("[[a|", "]]", 3);
    let chars: Vec<char> = text.chars().collect();
    let ranges = wikilink_ranges_bounded(&chars, &ParseLimits::default(), None).unwrap();
    let spans: Vec<_> = ranges.iter().map(|r| r.span.clone()).collect();
    assert_eq!(spans, [0..19, 4..17, 8..15]);
    // The outermost label is a range over the inner links, not a copy of them.
    assert_eq!(ranges[0].text, Some(4..17));
}

#[test]
fn a_cancelled_extraction_stops() {
    let text = nested("[[a|", "]]", 3000);
    let chars: Vec<char> = text.chars().collect();
    let cancel = AtomicBool::new(true);
    assert!(matches!(
        wikilink_ranges_bounded(&chars, &ParseLimits::default(), Some(&cancel)),
        Err(TextError::ParseLimitExceeded)
    ));
}

mod pipeline {
    use std::sync::atomic::AtomicBool;

    use wikisuggest_text::pipeline::{
        Candidate, LinkModel, Request, Stop, recommend, recommend_cancellable,
    };

    /// Every "cat" is a link to `Cat`, with probability 1.
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
            title == "Cat"
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
        }
    }

    #[test]
    fn cancelled_work_stops_like_an_exhausted_budget() {
        let page = format!("The cat sat. {}", super::nested("[[a|", "]]", 2000));
        let done = recommend(&Cats, &request(&page)).unwrap();
        assert_eq!(done.links.len(), 1);
        assert_eq!(done.stop, Stop::Complete);
        let cancel = AtomicBool::new(true);
        let stopped = recommend_cancellable(&Cats, &request(&page), Some(&cancel)).unwrap();
        assert!(stopped.links.is_empty());
        assert_eq!(stopped.stop, Stop::TimeBudget);
    }
}
