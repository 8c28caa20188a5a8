//! The lexed port against the code point port it was made from (`oracle`): the same
//! partition and the same read count on every input. The code point port's shortcuts
//! (runs taken in one step: plain text, plain characters in unsafe contexts, URL
//! characters; bracketed schemes that fail, settled from the text) are checked on the same
//! inputs against it taking every character in its own step, as upstream does. The code
//! point port is itself checked against mwparserfromhell by the differential tests.

use crate::wikitext::mwparserfromhell::Limits;
use crate::wikitext::oracle;
use crate::wikitext::{Lexed, NodeStream, Wikitext};

fn assert_same_as_oracle(text: &str) {
    let (doc, reads) = Wikitext::parse_measured(text);
    let ours: Vec<_> = doc
        .nodes()
        .iter()
        .map(|n| (n.kind, n.start, n.end, n.heading_level().unwrap_or(0)))
        .collect();
    let theirs = oracle::partition(text, None);
    let stepwise = oracle::partition_read(text, None, true);
    assert_eq!(theirs, stepwise, "shortcuts of the oracle on {text:?}");
    let (theirs, their_reads) = theirs.unwrap_or_default();
    assert_eq!(ours, theirs, "nodes of {text:?}");
    assert_eq!(reads, their_reads, "reads of {text:?}");
    // Parsed in steps as the pass reads it, the page has the same nodes and reads.
    let lexed = Lexed::new(text);
    for step in [1, 2, 3, 7, 64] {
        let mut stream = NodeStream::with_step(&lexed, Limits::default(), step);
        let mut nodes = Vec::new();
        while let Ok(Some(node)) = stream.node(nodes.len()) {
            nodes.push(node);
        }
        assert_eq!(nodes, doc.nodes(), "nodes of {text:?} in steps of {step}");
        let whole = stream.into_whole().ok();
        assert_eq!(
            whole,
            Some((nodes, reads)),
            "reads of {text:?} in steps of {step}"
        );
    }
    for node in doc.nodes() {
        assert_eq!(
            text.get(node.bytes()).map(|s| s.chars().count()),
            Some(node.end - node.start),
            "bytes of {node:?} in {text:?}"
        );
    }
}

/// Inputs where a run must stop and hand over to the step-by-step loop: the states of
/// `verify_safe` in which a plain character changes the context or fails the route, and
/// URL characters that end a link, open a construct or are held back from a free link.
const BOUNDARIES: &[&str] = &[
    // Template names: leading spaces, text after a newline, braces and comments.
    "{{ a b }}",
    "{{  a}}",
    "{{\ta}}",
    "{{\u{3000}a}}",
    "{{a\nb}}",
    "{{a\n b}}",
    "{{a\n}}",
    "{{\na}}",
    "{{a b\n|c}}",
    "{{ {{b}} c}}",
    "{{a{b}}",
    "{{a}b}}",
    "{{a<!--x-->b}}",
    "{{a<b>}}",
    "{{a[b]}}",
    // Parameter keys and argument names with the brace flags.
    "{{a|{b=c}}",
    "{{a|b{=c}}",
    "{{a|}b=c}}",
    "{{a|{{{b}}}c=d}}",
    "{{a|b}c=d}}",
    "{{a|{{b}}c=d}}",
    "{{a|b=c|d{e=f}}",
    "{{a|b{{c=d}}",
    "{{{a{b|c}}}",
    "{{{a}b}}}",
    "{{{a{{b}}c}}}",
    // Wikilink titles.
    "[[a b]]",
    "[[a{b]]",
    "[[a}b]]",
    "[[a]b]]",
    "[[a<!--c-->b]]",
    "[[a<b]]",
    "[[a>b]]",
    "[[a\nb]]",
    "[[a{{b}}c]]",
    "[[a|b{c]]",
    // External link titles and closing tags.
    "[http://a b c]",
    "[http://a b\nc]",
    "<b>x</b >",
    "<b>x</b c>",
    "<b>x</b<>",
    "<REF>x</ref\u{3000}>",
    "<link>x</lin\u{212a}>",
    "<nowiki>a</NOWIKI >",
    // Free and bracketed URLs.
    "http://a.b/c.",
    "http://a.b/c.d",
    "http://a.b/c,,d e",
    "http://a.b/c.)",
    "http://a.b/(c)d",
    "http://a.b/c(d).",
    "http://a.b/c...",
    "http://a.b/c...d",
    "http://a.b/c.&amp;d",
    "http://a.b/c.{{x}}",
    "http://a.b/c.<!--x-->d",
    "http://a.b/c.''d''",
    "http://a.b/c'd",
    "http://a.b/c\"d",
    "[http://a.b/c. d]",
    "[http://a.b/c.]",
    "[http://a.b/c(d).e]",
    "{{a|url=http://a.b/c.d?e=f&g=h|t=x}}",
    "{{a|http://a.b/c|d}}",
    "{{a|b=http://a.b/c=d}}",
    "{{a|b=http://a.b/c}}d}}",
    "== http://a.b/c=d ==",
    "{{{a|http://b.c/d}}}e}}}",
    "mailto:a@b.c.",
    "http://a.b/c\\d",
    "http://a.b/c;d!e?f:g",
    "http://é.b/ü。x",
    "[[http://a.b/c]]",
    "http://a.b/c\0d",
    // Tag names and attributes.
    "<div class=\"a b\" id=x style='c'>y</div>",
    "<ref name=a b>x</ref>",
    "<ref name = \"a\">x</ref>",
    "<ref name=\"a\\\"b\">x</ref>",
    "<ref name=\"a\"b>x</ref>",
    "<span title=\"x''y\">z</span>",
    "<a b=c d=\"e\" f>g</a>",
    "<ref  name=\"x\"/>",
    "<ref name=\"unclosed>x</ref>",
    "<ref name='unclosed>x</ref>",
    "<br  clear=all>",
    "<ref na{{x}}me=\"y\">z</ref>",
    "<ref name=\"[[a]]\">z</ref>",
    "<ref name=ab\"cd\">z</ref>",
    "<refé name=é>z</refé>",
    "<ref\u{3000}name=x>z</ref>",
    "{| class=\"wikitable\" style=\"x\"\n|a\n|}",
    "{|\n|- style=\"a b\" id=c\n| style=\"d\" | e\n|}",
    // Bracketed schemes, settled from the text when they fail.
    "[/a]",
    "[//a b]",
    "[/",
    "[ftp:x]",
    "[mailto:x y]",
    "[[mailto:x]]",
    "[[a:b]]",
    "[[/a]]",
    "[[//a]]",
    "[[http:x]]",
    "[http:/x y]",
    "[HTTP://x y]",
    "[[é:x]]",
    "[a+b.c-d:e]",
    "[news:",
    "[[",
    "[",
    "[\0a",
];

#[test]
fn the_lexed_port_matches_the_oracle_at_run_boundaries() {
    for text in BOUNDARIES {
        assert_same_as_oracle(text);
        // The same markup inside the other contexts that take runs.
        for wrap in [
            "{{t|{}}}",
            "{{t|k={}}}",
            "[[{}]]",
            "<ref>{}</ref>",
            "''{}''",
            "\n{|\n|{}\n|}",
        ] {
            assert_same_as_oracle(&wrap.replace("{}", text));
        }
    }
}

/// Seeded markup soups built from the boundary fragments and the constructs around them,
/// with characters of every UTF-8 length and the spaces beyond ASCII wherever markup can
/// meet them (names, attributes, URLs, line starts).
#[test]
fn the_lexed_port_matches_the_oracle_on_markup_soup() {
    const PIECES: &[&str] = &[
        "{{",
        "}}",
        "{",
        "}",
        "{{{",
        "}}}",
        "[[",
        "]]",
        "[",
        "]",
        "|",
        "=",
        "\n",
        " ",
        "a",
        "b c",
        "é",
        "😀",
        "<!--",
        "-->",
        "<b>",
        "</b>",
        "<ref>",
        "</ref>",
        "''",
        "'''",
        "'",
        "http://",
        "x.y",
        ".",
        ",",
        ")",
        "(",
        "?",
        "&amp;",
        "&",
        "{|",
        "|}",
        "|-",
        "!",
        "<",
        ">",
        "/",
        "\"",
        "\\",
        ":",
        ";",
        "#",
        "*",
        "-",
        "\u{3000}",
        "\t",
        "mailto:",
        "[http://a.b c]",
        "\u{a0}",
        "\u{85}",
        "\u{2028}",
        "\u{1680}",
        "\u{205f}",
        "日本",
        "ß",
        "\u{212a}",
        "é=",
        "<é",
        "</é",
        "&é;",
        "é:",
        ":é",
        "\u{3000}|",
        "\n\u{a0}{|",
        "\n\u{3000}|-",
        "\n é|}",
        "<ref name=é\u{a0}x>",
        "<span title=\"日\">",
        "ゑ''",
    ];
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..3000 {
        let len = (next() % 120) as usize;
        let text: String = (0..len)
            .map(|_| {
                let piece = next() % (PIECES.len() as u64 + BOUNDARIES.len() as u64);
                let piece = piece as usize;
                PIECES
                    .get(piece)
                    .or_else(|| BOUNDARIES.get(piece - PIECES.len()))
                    .copied()
                    .unwrap_or_default()
            })
            .collect();
        assert_same_as_oracle(&text);
    }
}

/// The parity articles, whole.
#[test]
fn the_lexed_port_matches_the_oracle_on_the_parity_articles() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/parity/articles/enwiki");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        if let Ok(text) = std::fs::read_to_string(entry.path()) {
            assert_same_as_oracle(&text);
            seen += 1;
        }
    }
    assert!(seen >= 70, "{seen} articles in {}", dir.display());
}

/// Tag names and URL schemes are compared in place when ASCII: the same answers as
/// upstream's definitions, `rstrip().lower()` equality and `lower()` in an ASCII list.
#[test]
fn names_compare_as_their_lowercase_forms() {
    use crate::pyunicode;
    use crate::wikitext::mwparserfromhell::{
        PARSER_BLACKLIST, SINGLE_ONLY, URI_SCHEMES, URI_SCHEMES_NO_SLASHES, in_list, is_scheme,
        same_tag,
    };

    let names = [
        "ref",
        "REF",
        "Ref ",
        "ref\u{3000}",
        "re f",
        "nowiki",
        "NoWiki\t",
        "br",
        "BR",
        "link",
        "lin\u{212a}",
        "\u{212a}",
        "k",
        "HTTP",
        "http",
        "Https",
        "İ",
        "i\u{307}",
        "",
        " ",
        "ré",
        "math",
        "MATH ",
        "ftp",
        "Ftp\n",
    ];
    let key = |s: &str| pyunicode::lower(s.trim_end_matches(pyunicode::is_space));
    for a in names {
        for b in names {
            assert_eq!(same_tag(a, b), key(a) == key(b), "{a:?} {b:?}");
        }
        for list in [&SINGLE_ONLY[..], &PARSER_BLACKLIST[..], &URI_SCHEMES[..]] {
            let lowered = pyunicode::lower(a);
            let expected = lowered.is_ascii() && list.contains(&lowered.as_str());
            assert_eq!(in_list(a, list), expected, "{a:?}");
        }
        // Schemes are made of URI scheme characters, all ASCII.
        if a.is_ascii() {
            assert_eq!(
                is_scheme(a.as_bytes(), true),
                in_list(a, &URI_SCHEMES),
                "{a:?}"
            );
            assert_eq!(
                is_scheme(a.as_bytes(), false),
                in_list(a, &URI_SCHEMES_NO_SLASHES),
                "{a:?}"
            );
        }
    }
}
