//! The wikilinks wikitextparser 0.51.1 reports, at every depth.
//!
//! wikitextparser works on a *shadow*: one byte per code point (non-ASCII
//! becomes `?`) in which constructs that were already recognised are masked
//! so that the remaining patterns see plain text:
//!
//! 1. comments become NUL bytes, unparsable extension tags (`<nowiki>`,
//!    `<math>`, `<pre>` …) become `_`; parsable ones (`<ref>` …) are searched
//!    recursively, then their content becomes `_`;
//! 2. innermost wikilinks and `{{{parameters}}}` are found, searched
//!    recursively, and masked (links keep their length but their special
//!    characters become control bytes, so the enclosing link can match);
//! 3. innermost templates are masked with `X`, which may let further links
//!    match; repeat until nothing changes.
//!
//! A link's title and label are then read from its masked interior.

use std::ops::Range;

/// A wikilink as wikitextparser reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WikiLink {
    /// Code point span of the whole `[[…]]`.
    pub span: Range<usize>,
    /// The target before the first `|`, without any `#fragment`.
    pub title: String,
    /// Everything after the first `|`, or `None` without a `|`.
    pub text: Option<String>,
}

const PARSABLE_TAGS: [&str; 12] = [
    "categorytree",
    "gallery",
    "imagemap",
    "includeonly",
    "indicator",
    "inputbox",
    "noinclude",
    "onlyinclude",
    "poem",
    "ref",
    "references",
    "section",
];
const UNPARSABLE_TAGS: [&str; 20] = [
    "ce",
    "charinsert",
    "chem",
    "graph",
    "hiero",
    "languages",
    "mapframe",
    "maplink",
    "math",
    "nowiki",
    "pagelist",
    "pagequality",
    "pages",
    "pre",
    "score",
    "source",
    "syntaxhighlight",
    "templatedata",
    "templatestyles",
    "timeline",
];
const BARE_URL_SCHEMES: [&str; 27] = [
    "bitcoin:",
    "ftp://",
    "ftps://",
    "geo:",
    "git://",
    "gopher://",
    "http://",
    "https://",
    "irc://",
    "ircs://",
    "magnet:",
    "mailto:",
    "mms://",
    "news:",
    "nntp://",
    "redis://",
    "sftp://",
    "sip:",
    "sips:",
    "sms:",
    "ssh://",
    "svn://",
    "tel:",
    "telnet://",
    "urn:",
    "worldwind://",
    "xmpp:",
];

/// Returns the wikilinks of `text` in document order (by span).
pub fn wikilinks(text: &str) -> Vec<WikiLink> {
    let chars: Vec<char> = text.chars().collect();
    let mut shadow: Vec<u8> = chars
        .iter()
        .map(|&c| if c.is_ascii() { c as u8 } else { b'?' })
        .collect();
    let mut found = Vec::new();
    let len = shadow.len();
    extract_tag_extensions(&mut shadow, 0, len, &mut found);
    parse_sub_spans(&mut shadow, 0, len, &mut found);
    found.sort_by_key(|l: &Found| (l.span.start, l.span.end));
    let string = |r: Range<usize>| -> String { chars.get(r).unwrap_or_default().iter().collect() };
    found
        .into_iter()
        .map(|f| WikiLink {
            title: string(f.title),
            text: f.text.map(string),
            span: f.span,
        })
        .collect()
}

struct Found {
    span: Range<usize>,
    title: Range<usize>,
    text: Option<Range<usize>>,
}

fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

fn fill(b: &mut [u8], range: Range<usize>, byte: u8) {
    if let Some(s) = b.get_mut(range) {
        s.fill(byte);
    }
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Finds `needle` (ASCII, case-insensitive) in `b[from..end]`.
fn find_ci(b: &[u8], from: usize, end: usize, needle: &[u8]) -> Option<usize> {
    let hay = b.get(from..end)?;
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
        .map(|p| p + from)
}

/// The listed tag name at `i` (case-insensitive, followed by a non-word byte).
fn tag_name_at(b: &[u8], i: usize, end: usize, names: &[&'static str]) -> Option<&'static str> {
    names.iter().copied().find(|n| {
        let e = i + n.len();
        e <= end
            && b.get(i..e)
                .is_some_and(|s| s.eq_ignore_ascii_case(n.as_bytes()))
            && !(e < end && is_word_byte(at(b, e)))
    })
}

enum ExtMatch {
    Comment(usize),
    Unparsable(usize),
    Parsable { end: usize, content: Range<usize> },
}

/// Remembers the last search for each closing tag so that many unclosed
/// tags of one name cost one scan, not one scan each.
#[derive(Default)]
struct CloseCache {
    /// `(name, end)` → (searched from, first match at or after it).
    found: std::collections::HashMap<(&'static str, usize), (usize, Option<usize>)>,
}

impl CloseCache {
    fn find(&mut self, b: &[u8], from: usize, end: usize, name: &'static str) -> Option<usize> {
        if let Some(&(searched, hit)) = self.found.get(&(name, end))
            && searched <= from
            && hit.is_none_or(|h| h >= from)
        {
            return hit;
        }
        let hit = find_ci(b, from, end, format!("</{name}").as_bytes());
        self.found.insert((name, end), (from, hit));
        hit
    }
}

fn match_extension_at(b: &[u8], i: usize, end: usize, cache: &mut CloseCache) -> Option<ExtMatch> {
    if b.get(i + 1..i + 4) == Some(b"!--") && i + 4 <= end {
        let close = b
            .get(i + 4..end)
            .and_then(|s| s.windows(3).position(|w| w == b"-->"))
            .map_or(end, |p| i + 4 + p + 3);
        return Some(ExtMatch::Comment(close));
    }
    let (name, parsable) = match tag_name_at(b, i + 1, end, &UNPARSABLE_TAGS) {
        Some(n) => (n, false),
        None => (tag_name_at(b, i + 1, end, &PARSABLE_TAGS)?, true),
    };
    let gt = (i + 1 + name.len()..end).find(|&k| at(b, k) == b'>')?;
    if at(b, gt - 1) == b'/' {
        return Some(if parsable {
            ExtMatch::Parsable {
                end: gt + 1,
                content: gt + 1..gt + 1,
            }
        } else {
            ExtMatch::Unparsable(gt + 1)
        });
    }
    // Lazy content up to the first `</name\s*>`.
    let mut from = gt + 1;
    let closing = loop {
        let pos = cache.find(b, from, end, name)?;
        let mut k = pos + 2 + name.len();
        while k < end && at(b, k).is_ascii_whitespace() {
            k += 1;
        }
        if k < end && at(b, k) == b'>' {
            break (pos, k + 1);
        }
        from = pos + 1;
    };
    Some(if parsable {
        ExtMatch::Parsable {
            end: closing.1,
            content: gt + 1..closing.0,
        }
    } else {
        ExtMatch::Unparsable(closing.1)
    })
}

fn extract_tag_extensions(b: &mut [u8], start: usize, end: usize, found: &mut Vec<Found>) {
    let mut cache = CloseCache::default();
    let mut i = start;
    while i < end {
        if at(b, i) != b'<' {
            i += 1;
            continue;
        }
        match match_extension_at(b, i, end, &mut cache) {
            Some(ExtMatch::Comment(e)) => {
                fill(b, i..e, 0);
                i = e;
            }
            Some(ExtMatch::Unparsable(e)) => {
                fill(b, i..e, b'_');
                i = e;
            }
            Some(ExtMatch::Parsable { end: e, content }) => {
                extract_tag_extensions(b, content.start, content.end, found);
                parse_sub_spans(b, i, e, found);
                fill(b, content, b'_');
                i = e;
            }
            None => i += 1,
        }
    }
}

fn parse_sub_spans(b: &mut [u8], start: usize, end: usize, found: &mut Vec<Found>) {
    loop {
        loop {
            let matches = find_links_and_parameters(b, start, end);
            if matches.is_empty() {
                break;
            }
            // Upstream searches backwards; process in that order.
            for (span, is_link) in matches.into_iter().rev() {
                let inner_end = span.end.saturating_sub(2).max(span.start + 2);
                parse_sub_spans(b, span.start + 2, inner_end, found);
                if is_link {
                    found.push(split_link(b, span.clone()));
                    if let Some(s) = b.get_mut(span) {
                        for c in s {
                            *c = match *c {
                                b'|' => 1,
                                b'[' => 2,
                                b']' => 3,
                                b'\'' => 7,
                                b'{' => 5,
                                b'}' => 6,
                                other => other,
                            };
                        }
                    }
                } else {
                    fill(b, span, b'_');
                }
            }
        }
        let templates = find_templates(b, start, end);
        if templates.is_empty() {
            break;
        }
        for (span, valid_name) in templates {
            if valid_name {
                fill(b, span, b'X');
            } else {
                let second = span.start + 1;
                fill(b, span, b'_');
                if let Some(c) = b.get_mut(second) {
                    *c = b'{';
                }
            }
        }
    }
}

/// Title and label positions from the masked link (`FULLMATCH` upstream).
fn split_link(b: &[u8], span: Range<usize>) -> Found {
    let mut k = span.start + 1;
    while at(b, k) == 0 && k < span.end {
        k += 1;
    }
    let title_start = k + 1;
    // The closing `]\0*]`.
    let mut close = span.end.saturating_sub(2);
    while close > title_start && at(b, close) == 0 {
        close -= 1;
    }
    let stop = (title_start..close)
        .find(|&i| matches!(at(b, i), b'|' | b'#' | b']'))
        .unwrap_or(close);
    let mut text_from = stop;
    if at(b, stop) == b'#' {
        text_from = (stop..close)
            .find(|&i| matches!(at(b, i), b'|' | b']'))
            .unwrap_or(close);
    }
    let text = (at(b, text_from) == b'|').then(|| text_from + 1..close.max(text_from + 1));
    Found {
        span,
        title: title_start..stop,
        text,
    }
}

fn is_title_byte(c: u8) -> bool {
    !matches!(
        c,
        1..=6 | b'|' | b'{' | b'}' | b'[' | b']' | b'<' | b'>' | b'\n'
    )
}

fn is_url_byte(c: u8) -> bool {
    !matches!(c, b' ' | b'\t' | b'\n' | b'"' | b'<' | b'>' | b'[' | b']')
}

/// Non-overlapping wikilink (`true`) and parameter (`false`) matches in
/// `b[start..end]`, left to right.
fn find_links_and_parameters(b: &[u8], start: usize, end: usize) -> Vec<(Range<usize>, bool)> {
    let mut out = Vec::new();
    let mut i = start;
    // Number of `[` (NULs ignored) directly before `i`, counted as we go so
    // that long bracket runs stay linear.
    let mut run = 0usize;
    while i + 1 < end {
        let c = at(b, i);
        if c == b'[' {
            if let Some(e) = match_link(b, i, run, end) {
                out.push((i..e, true));
                i = e;
                run = 0;
                continue;
            }
        } else if c == b'{'
            && let Some(e) = match_parameter(b, i, end)
        {
            out.push((i..e, false));
            i = e;
            run = 0;
            continue;
        }
        match c {
            b'[' => run += 1,
            0 => {}
            _ => run = 0,
        }
        i += 1;
    }
    out
}

/// A wikilink starting at `i`, preceded by `brackets_before` `[`.
fn match_link(b: &[u8], i: usize, brackets_before: usize, end: usize) -> Option<usize> {
    // Not preceded by an odd number of `[` (NULs between them ignored).
    if brackets_before % 2 == 1 {
        return None;
    }
    let mut j = i + 1;
    while j < end && at(b, j) == 0 {
        j += 1;
    }
    if at(b, j) != b'[' || j >= end {
        return None;
    }
    j += 1;
    // `[[http://…]]` is an external link.
    let mut u = j;
    while u < end && matches!(at(b, u), b' ' | 0) {
        u += 1;
    }
    let word_boundary = u == 0 || !is_word_byte(at(b, u - 1));
    if word_boundary
        && let Some(scheme) = BARE_URL_SCHEMES
            .iter()
            .find(|s| b.get(u..u + s.len()) == Some(s.as_bytes()))
        && u + scheme.len() < end
        && (is_url_byte(at(b, u + scheme.len())) || at(b, u + scheme.len()) == b'[')
    {
        return None;
    }
    let title_start = j;
    while j < end && is_title_byte(at(b, j)) {
        j += 1;
    }
    if j == title_start {
        return None;
    }
    // Label segments: `|` then text with at most one `[…]` pair.  Upstream
    // matches backwards, so a bracket pair inside the segment is preferred
    // over the optional lone brackets allowed at its start.
    let plain = |b: &[u8], mut k: usize| {
        while k < end && !matches!(at(b, k), b'[' | b']' | b'|') {
            k += 1;
        }
        k
    };
    let pair_then_plain = |b: &[u8], j: usize| -> Option<usize> {
        let k = plain(b, j);
        if at(b, k) != b'[' || k >= end {
            return None;
        }
        let m = plain(b, k + 1);
        (at(b, m) == b']' && m < end && !three_closers(b, m + 1, end)).then(|| plain(b, m + 1))
    };
    while j < end && at(b, j) == b'|' {
        j += 1;
        if let Some(k) = pair_then_plain(b, j) {
            j = k;
            continue;
        }
        if at(b, j) == b'[' && j < end {
            j += 1;
        }
        if at(b, j) == b']' && j < end && !prev_is(b, j, b']') && !closes_at(b, j, end) {
            j += 1;
        }
        j = pair_then_plain(b, j).unwrap_or_else(|| plain(b, j));
    }
    if at(b, j) != b']' || j >= end {
        return None;
    }
    j += 1;
    while j < end && at(b, j) == 0 {
        j += 1;
    }
    (at(b, j) == b']' && j < end).then_some(j + 1)
}

/// `]\0*]` at `j`: the link's closing brackets.
fn closes_at(b: &[u8], j: usize, end: usize) -> bool {
    let mut k = j + 1;
    while k < end && at(b, k) == 0 {
        k += 1;
    }
    at(b, j) == b']' && k < end && at(b, k) == b']'
}

/// Whether the byte before `j` (skipping NULs) is `c`.
fn prev_is(b: &[u8], j: usize, c: u8) -> bool {
    let mut k = j;
    while k > 0 {
        k -= 1;
        if at(b, k) != 0 {
            return at(b, k) == c;
        }
    }
    false
}

/// `(?:\0*\]){3}` at `k`.
fn three_closers(b: &[u8], mut k: usize, end: usize) -> bool {
    for _ in 0..3 {
        while k < end && at(b, k) == 0 {
            k += 1;
        }
        if k >= end || at(b, k) != b']' {
            return false;
        }
        k += 1;
    }
    true
}

/// `{{{…}}}` without nested `{{`/`}}` pairs.
fn match_parameter(b: &[u8], i: usize, end: usize) -> Option<usize> {
    if b.get(i..i + 3) != Some(b"{{{") || i + 3 > end {
        return None;
    }
    let mut j = i + 3;
    let body_start = j;
    while j < end {
        let c = at(b, j);
        let ok = match c {
            b'}' => at(b, j - 1) != b'}' && at(b, j + 1) != b'}',
            b'{' => at(b, j - 1) != b'{',
            _ => true,
        };
        if !ok {
            break;
        }
        j += 1;
    }
    (j > body_start && b.get(j..j + 3) == Some(b"}}}") && j + 3 <= end).then_some(j + 3)
}

/// Innermost `{{…}}` (templates and parser functions, `true`) and
/// invalid-name templates (`false`), left to right.
fn find_templates(b: &[u8], start: usize, end: usize) -> Vec<(Range<usize>, bool)> {
    let mut out = Vec::new();
    let mut i = start;
    while i + 1 < end {
        if at(b, i) == b'{'
            && at(b, i + 1) == b'{'
            && let Some((e, valid)) = match_template(b, i, end)
        {
            out.push((i..e, valid));
            i = e;
            continue;
        }
        i += 1;
    }
    out
}

fn skip(b: &[u8], mut k: usize, end: usize, pred: impl Fn(u8) -> bool) -> usize {
    while k < end && pred(at(b, k)) {
        k += 1;
    }
    k
}

/// Arguments: `|` then anything without `{{` or `}}`, up to the closing `}}`.
fn match_args_and_close(b: &[u8], mut k: usize, end: usize) -> Option<usize> {
    if at(b, k) == b'|' && k < end {
        k += 1;
        while k < end {
            let c = at(b, k);
            if (c == b'{' && at(b, k + 1) == b'{') || (c == b'}' && at(b, k + 1) == b'}') {
                break;
            }
            k += 1;
        }
    }
    (b.get(k..k + 2) == Some(b"}}") && k + 2 <= end).then_some(k + 2)
}

fn match_template(b: &[u8], i: usize, end: usize) -> Option<(usize, bool)> {
    let space = |c: u8| c.is_ascii_whitespace() || c == 0;
    let k = skip(b, i + 2, end, space);
    // Parser function `{{#name:…}}`.
    if at(b, k) == b'#' {
        let n = skip(b, k + 1, end, |c| {
            !(c == b'{' || c == b'}' || c == b':' || c == b'|' || space(c))
        });
        if n > k + 1 {
            let mut m = n;
            if at(b, m) == b':' {
                m += 1;
                while m < end {
                    let c = at(b, m);
                    if (c == b'{' && at(b, m + 1) == b'{') || (c == b'}' && at(b, m + 1) == b'}') {
                        break;
                    }
                    m += 1;
                }
            }
            if b.get(m..m + 2) == Some(b"}}") && m + 2 <= end {
                return Some((m + 2, true));
            }
        }
    }
    // Invalid (empty) name.
    let n = skip(b, i + 2, end, |c| space(c) || c == b'_');
    if let Some(e) = match_args_and_close(b, n, end) {
        return Some((e, false));
    }
    // Template with a valid name.
    let t = skip(b, k, end, is_title_byte);
    if t == k {
        return None;
    }
    let t = skip(b, t, end, space);
    match_args_and_close(b, t, end).map(|e| (e, true))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
