//! The links of the search against expectations recorded from wikitextparser 0.51.1, and
//! against the reference port (every scan over the whole range) on real articles and
//! generated markup soup: the same links, always. Against the search as it was before it
//! read the lexer (`oracle`): the same links and the same work.

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::RngSeed;

use super::*;

/// The reference port's links, as byte ranges of `text`.
fn reference_links(text: &str) -> Vec<LinkRanges> {
    let chars: Vec<char> = text.chars().collect();
    // Byte offset of every code point offset.
    let mut bytes: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
    bytes.push(text.len());
    let b = |cp: usize| bytes.get(cp).copied().unwrap_or(text.len());
    let r = |range: std::ops::Range<usize>| b(range.start)..b(range.end);
    reference::find(&chars)
        .into_iter()
        .map(|f| LinkRanges {
            span: r(f.span),
            title: r(f.title),
            text: f.text.map(r),
        })
        .collect()
}

fn ours(text: &str) -> Vec<LinkRanges> {
    match wikilink_ranges_bounded(text, &ParseLimits::default(), None) {
        Ok((links, work)) => {
            let oracle =
                crate::wikitext::oracle::wikilink_ranges(text, &ParseLimits::default(), None);
            assert_eq!(
                oracle.ok(),
                Some((links.clone(), work)),
                "the oracle on {text:?}"
            );
            links
        }
        Err(e) => panic!("{e}"),
    }
}

fn pairs(text: &str) -> Vec<(String, Option<String>)> {
    wikilinks(text)
        .into_iter()
        .map(|l| (l.title, l.text))
        .collect()
}

fn p(t: &str, x: Option<&str>) -> (String, Option<String>) {
    (t.to_owned(), x.map(str::to_owned))
}

#[test]
fn basic_links_and_labels() {
    assert_eq!(
        pairs("[[a]] [[B#c|d]] [[ p ]] [[V|W|X]] [[d|]]"),
        [
            p("a", None),
            p("B", Some("d")),
            p(" p ", None),
            p("V", Some("W|X")),
            p("d", Some(""))
        ]
    );
}

#[test]
fn links_at_every_depth() {
    assert_eq!(
        pairs("{{t|[[a]]}} <ref>[[b]]</ref> [[File:x.jpg|thumb|[[c]] d]]"),
        [
            p("a", None),
            p("b", None),
            p("File:x.jpg", Some("thumb|[[c]] d")),
            p("c", None)
        ]
    );
}

#[test]
fn masked_regions_hide_links() {
    assert!(
        pairs("<!-- [[a]] --> <nowiki>[[b]]</nowiki> <math>[[c]]</math> <pre>[[d]]</pre>")
            .is_empty()
    );
    assert!(pairs("[[a\nb]] [[a<b>c]] [[http://x.org]]").is_empty());
}

/// Expectations recorded from wikitextparser 0.51.1.
#[test]
fn bracket_and_mask_quirks() {
    let spans = |t: &str| -> Vec<(String, Option<String>, Range<usize>)> {
        wikilinks(t)
            .into_iter()
            .map(|l| (l.title, l.text, l.span))
            .collect()
    };
    let q = |t: &str, x: Option<&str>, r: Range<usize>| (t.to_owned(), x.map(str::to_owned), r);
    assert_eq!(spans("[[a|]b]]"), [q("a", Some("]b"), 0..8)]);
    assert_eq!(spans("[[a|[b]]]"), [q("a", Some("[b]"), 0..9)]);
    assert_eq!(
        spans("[[a|[b] c]] [[x|y]z]]"),
        [q("a", Some("[b] c"), 0..11)]
    );
    assert_eq!(spans("[[[a]]] [[[[b]]]]"), [q("b", None, 10..15)]);
    assert_eq!(
        spans("[[a|''b'']] [[c|{{d|e}}]] [[{{f}}]]"),
        [
            q("a", Some("''b''"), 0..11),
            q("c", Some("{{d|e}}"), 12..25),
            q("{{f}}", None, 26..35)
        ]
    );
    assert_eq!(
        spans("[[a<!-- x -->|b]] [[a|b<!--]]-->c]]"),
        [
            q("a<!-- x -->", Some("b"), 0..17),
            q("a", Some("b<!--]]-->c"), 18..35)
        ]
    );
}

/// The tag names matched in place are the list's.
#[test]
fn html_tag_names_are_the_list() {
    for name in reference::HTML_TAGS {
        assert!(parse::is_html_tag(name.as_bytes()), "{name}");
        for other in [format!("{name}x"), format!("x{name}"), name.to_uppercase()] {
            assert_eq!(
                parse::is_html_tag(other.as_bytes()),
                reference::HTML_TAGS.contains(&other.as_str()),
                "{other}"
            );
        }
    }
    assert!(!parse::is_html_tag(b"") && !parse::is_html_tag(b"ref"));
}

/// The extension tag names looked up by word are the ones the lists give name by name,
/// whatever their case, whatever follows and wherever the range ends.
#[test]
fn extension_names_are_the_lists() {
    use super::{PARSABLE_TAGS, UNPARSABLE_TAGS};
    let by_lists = |b: &[u8], i: usize, end: usize| {
        parse::tag_name_at(b, i, end, &UNPARSABLE_TAGS)
            .map(|n| (n, false))
            .or_else(|| parse::tag_name_at(b, i, end, &PARSABLE_TAGS).map(|n| (n, true)))
    };
    let mut found = 0;
    for name in UNPARSABLE_TAGS.iter().chain(&PARSABLE_TAGS) {
        let words = [
            name.to_string(),
            name.to_uppercase(),
            format!("{name}x"),
            format!("{name}_"),
            format!("{name}9"),
            format!("x{name}"),
            name[..name.len() - 1].to_string(),
            format!("{name}é"),
        ];
        for word in words {
            for after in ["", " ", ">", "/>", "x", "\n"] {
                let page = format!("<{word}{after}");
                let b = page.as_bytes();
                for end in 0..=b.len() {
                    let got = parse::extension_name_at(b, 1, end);
                    assert_eq!(got, by_lists(b, 1, end), "{page:?} up to {end}");
                    found += usize::from(got.is_some());
                }
            }
        }
    }
    assert!(found > 32 * 8);
}

/// Every article of the committed fixtures, and of the full set when
/// `WIKISUGGEST_TEXT_FIXTURES` names it, gives the reference port's links.
#[test]
fn articles_give_the_reference_links() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/text");
    let mut dirs = vec![committed];
    if let Ok(dir) = std::env::var("WIKISUGGEST_TEXT_FIXTURES") {
        dirs.push(dir.into());
    }
    let parity =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/parity/articles/enwiki");
    let mut texts = Vec::new();
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|x| x == "json") {
                let v: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                if let Some(text) = v.get("wikitext").and_then(|t| t.as_str()) {
                    texts.push((path.display().to_string(), text.to_owned()));
                }
            }
        }
    }
    for entry in std::fs::read_dir(&parity).unwrap() {
        let path = entry.unwrap().path();
        texts.push((
            path.display().to_string(),
            std::fs::read_to_string(&path).unwrap(),
        ));
    }
    assert!(texts.len() >= 70, "{} articles", texts.len());
    for (name, text) in &texts {
        assert_eq!(ours(text), reference_links(text), "{name}");
    }
}

/// Fragments of markup that open, close and mask constructs, for generated soup.
const PIECES: &[&str] = &[
    "[",
    "]",
    "[[",
    "]]",
    "]]]",
    "|",
    "{",
    "}",
    "{{",
    "}}",
    "{{{",
    "}}}",
    "{{#if:",
    "{{ |",
    "{{_",
    ":",
    "#",
    "<",
    ">",
    "</",
    "/>",
    "<b>",
    "</b>",
    "<b ",
    "<span title=\"",
    "\"",
    "<ref>",
    "</ref>",
    "<ref name=x/>",
    "<poem>",
    "</poem>",
    "<nowiki>",
    "</nowiki>",
    "<!--",
    "-->",
    "\n",
    " ",
    "\0",
    "'",
    "_",
    "X",
    "a",
    "b",
    "é",
    "😀",
    "http://x",
    "mailto:",
    "File:x.jpg",
    "thumb",
];

fn soup() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(PIECES), 0..160).prop_map(|p| p.concat())
}

fn nested_soup() -> impl Strategy<Value = String> {
    // Openers, a middle, closers: deep nesting of mixed kinds.
    let openers = proptest::collection::vec(
        proptest::sample::select(&["[[a|", "{{a|", "{{{a|", "[[", "{{", "<ref>", "[[a|b]] "][..]),
        0..40,
    );
    let closers = proptest::collection::vec(
        proptest::sample::select(&["]]", "}}", "}}}", "]", "}", "</ref>", " [[c]]"][..]),
        0..40,
    );
    (openers, soup(), closers).prop_map(|(o, m, c)| format!("{}{m}{}", o.concat(), c.concat()))
}

/// 3,000 cases each, or `PROPTEST_CASES` to search further.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok());
    ProptestConfig {
        cases: cases.unwrap_or(3000),
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x11_4E5),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn soup_gives_the_reference_links(text in soup()) {
        prop_assert_eq!(ours(&text), reference_links(&text), "{:?}", text);
    }

    #[test]
    fn nested_soup_gives_the_reference_links(text in nested_soup()) {
        prop_assert_eq!(ours(&text), reference_links(&text), "{:?}", text);
    }
}

/// The search through the partition's lexing reads the page up to its first NUL, as the
/// partition does: the links of that prefix.
#[test]
fn the_partitions_lexing_gives_the_links_of_the_text_it_read() {
    for text in [
        "[[a|b]] {{c|[[d]]}} <ref>[[e]]</ref>",
        "[[a]]\0[[b]]",
        "é[[日|x]]\0",
        "",
    ] {
        let doc = Wikitext::parse(text);
        let prefix = text.split('\0').next().unwrap_or_default();
        let limits = ParseLimits::default();
        assert_eq!(
            wikilink_ranges_of(&doc, &limits, None).unwrap(),
            wikilink_ranges_bounded(prefix, &limits, None).unwrap(),
            "{text:?}"
        );
    }
}
