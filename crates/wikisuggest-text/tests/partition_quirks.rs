//! Partition quirks of the production parser, with expectations
//! recorded from mwparserfromhell 0.7.2.

use wikisuggest_text::wikitext::{NodeKind, Wikitext};

/// `(kind, start, end, heading level or 0)`.
type Row = (NodeKind, usize, usize, u8);

fn partition(text: &str) -> Vec<Row> {
    Wikitext::parse(text)
        .nodes()
        .iter()
        .map(|n| (n.kind, n.start, n.end, n.heading_level().unwrap_or(0)))
        .collect()
}

#[test]
fn matches_mwparserfromhell() {
    use NodeKind::*;
    let cases: &[(&str, &str, &[Row])] = &[
        (
            "template",
            "a {{t|x=1}} b",
            &[(Text, 0, 2, 0), (Template, 2, 11, 0), (Text, 11, 13, 0)],
        ),
        (
            "argument",
            "a {{{1|d}}} b",
            &[(Text, 0, 2, 0), (Argument, 2, 11, 0), (Text, 11, 13, 0)],
        ),
        (
            "wikilink and trail",
            "[[Link]]s and [[a|b]]",
            &[(Wikilink, 0, 8, 0), (Text, 8, 14, 0), (Wikilink, 14, 21, 0)],
        ),
        (
            "external links",
            "[http://x.org label] and http://example.com/x, y",
            &[
                (ExternalLink, 0, 20, 0),
                (Text, 20, 25, 0),
                (ExternalLink, 25, 45, 0),
                (Text, 45, 48, 0),
            ],
        ),
        (
            "comment",
            "a <!-- c --> b",
            &[(Text, 0, 2, 0), (Comment, 2, 12, 0), (Text, 12, 14, 0)],
        ),
        (
            "entities split text",
            "a&nbsp;b&amp;c&#123;d&#x7b;e &bogus; &#0;",
            &[
                (Text, 0, 1, 0),
                (HtmlEntity, 1, 7, 0),
                (Text, 7, 8, 0),
                (HtmlEntity, 8, 13, 0),
                (Text, 13, 14, 0),
                (HtmlEntity, 14, 20, 0),
                (Text, 20, 21, 0),
                (HtmlEntity, 21, 27, 0),
                (Text, 27, 41, 0),
            ],
        ),
        (
            "heading",
            "== H ==\ntext",
            &[(Heading, 0, 7, 2), (Text, 7, 12, 0)],
        ),
        (
            "heading trailing text",
            "==References== foo\nbar",
            &[(Heading, 0, 14, 2), (Text, 14, 22, 0)],
        ),
        (
            "heading leading space",
            " === Bar ===\n",
            &[(Text, 0, 13, 0)],
        ),
        (
            "heading surplus level 1",
            "== A =\n",
            &[(Heading, 0, 6, 1), (Text, 6, 7, 0)],
        ),
        (
            "heading capped at 6",
            "=======A=======\n",
            &[(Heading, 0, 15, 6), (Text, 15, 16, 0)],
        ),
        (
            "heading with markup",
            "==[[L]] b==\n",
            &[(Heading, 0, 11, 2), (Text, 11, 12, 0)],
        ),
        (
            "heading cannot span lines",
            "== a\nb ==\n",
            &[(Text, 0, 10, 0)],
        ),
        (
            "ref and self-closing ref",
            "x<ref>r</ref> y<ref name=a/> z",
            &[
                (Text, 0, 1, 0),
                (Tag, 1, 13, 0),
                (Text, 13, 15, 0),
                (Tag, 15, 28, 0),
                (Text, 28, 30, 0),
            ],
        ),
        (
            "html tags",
            "<b>bold</b> <span class=\"x\">s</span>",
            &[(Tag, 0, 11, 0), (Text, 11, 12, 0), (Tag, 12, 36, 0)],
        ),
        (
            "nowiki and math",
            "<nowiki>[[a]]</nowiki><math>x</math>",
            &[(Tag, 0, 22, 0), (Tag, 22, 36, 0)],
        ),
        (
            "bold and italics",
            "'''b''' ''i'' '''''bi''''' plain",
            &[
                (Tag, 0, 7, 0),
                (Text, 7, 8, 0),
                (Tag, 8, 13, 0),
                (Text, 13, 14, 0),
                (Tag, 14, 26, 0),
                (Text, 26, 32, 0),
            ],
        ),
        ("unbalanced italics", "''open", &[(Text, 0, 6, 0)]),
        (
            "four ticks",
            "''''x''''",
            &[(Text, 0, 1, 0), (Tag, 1, 9, 0)],
        ),
        (
            "lists",
            "* a\n# b\n: c\n; d : e\n",
            &[
                (Tag, 0, 1, 0),
                (Text, 1, 4, 0),
                (Tag, 4, 5, 0),
                (Text, 5, 8, 0),
                (Tag, 8, 9, 0),
                (Text, 9, 12, 0),
                (Tag, 12, 13, 0),
                (Text, 13, 16, 0),
                (Tag, 16, 17, 0),
                (Text, 17, 20, 0),
            ],
        ),
        ("hr", "----\nx", &[(Tag, 0, 4, 0), (Text, 4, 6, 0)]),
        (
            "table",
            "{| class=w\n|a||b\n|-\n!h\n|}\nafter",
            &[(Tag, 0, 25, 0), (Text, 25, 31, 0)],
        ),
        (
            "magic words and signatures",
            "__TOC__ ~~~~",
            &[(Text, 0, 12, 0)],
        ),
        ("unclosed template", "{{a|b", &[(Text, 0, 5, 0)]),
        ("unclosed link", "[[a|b", &[(Text, 0, 5, 0)]),
        ("link with newline", "[[a\nb]]", &[(Text, 0, 7, 0)]),
        (
            "free link punctuation",
            "see http://x.org/a_(b), now",
            &[(Text, 0, 4, 0), (ExternalLink, 4, 22, 0), (Text, 22, 27, 0)],
        ),
        (
            "invalid tag",
            "<foo bar>x</foo> <a-b>",
            &[(Tag, 0, 16, 0), (Text, 16, 22, 0)],
        ),
        (
            "br implicit close",
            "a<br>b</br>c",
            &[
                (Text, 0, 1, 0),
                (Tag, 1, 5, 0),
                (Text, 5, 6, 0),
                (Tag, 6, 11, 0),
                (Text, 11, 12, 0),
            ],
        ),
        (
            "li implicit close at end",
            "x<li>y",
            &[(Text, 0, 1, 0), (Tag, 1, 5, 0), (Text, 5, 6, 0)],
        ),
        (
            "template in link title",
            "[[{{a}}]]",
            &[(Wikilink, 0, 9, 0)],
        ),
        (
            "wikilink ext",
            "[[http://x.org y]]",
            &[(Text, 0, 1, 0), (ExternalLink, 1, 17, 0), (Text, 17, 18, 0)],
        ),
        (
            "nested template",
            "{{a|{{b|c}}|d}}",
            &[(Template, 0, 15, 0)],
        ),
        ("comment unclosed", "a <!-- b", &[(Text, 0, 8, 0)]),
        ("pre", "<pre>''x''</pre>", &[(Tag, 0, 16, 0)]),
        (
            "dl term",
            ";term:def\n",
            &[
                (Tag, 0, 1, 0),
                (Text, 1, 5, 0),
                (Tag, 5, 6, 0),
                (Text, 6, 10, 0),
            ],
        ),
    ];
    for (name, text, expected) in cases {
        assert_eq!(partition(text), *expected, "{name}: {text:?}");
    }
}
