//! The wikitextparser port as first written: every scan over the whole range, every mask
//! written byte by byte. Quadratic in the nesting, and kept as the reference the linear
//! search is tested against.

// Test code: the reference is only compared with, never run in the library.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ops::Range;

use super::BARE_URL_SCHEMES;
use super::parse::{ExtMatch, FindClosing, find_byte, match_extension_at, next_byte};

/// HTML tag names wikitextparser recognises.
pub(super) const HTML_TAGS: [&str; 58] = [
    "abbr",
    "b",
    "bdi",
    "bdo",
    "big",
    "blockquote",
    "br",
    "caption",
    "center",
    "cite",
    "code",
    "data",
    "dd",
    "del",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "font",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "ins",
    "kbd",
    "li",
    "mark",
    "ol",
    "p",
    "q",
    "rb",
    "rp",
    "rt",
    "rtc",
    "ruby",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "sup",
    "table",
    "td",
    "th",
    "time",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
    "wbr",
];
/// A wikilink as code point ranges (see the parent module's `LinkRanges`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Found {
    pub span: Range<usize>,
    pub title: Range<usize>,
    pub text: Option<Range<usize>>,
}

/// The wikilinks of `chars`, in document order.
pub(super) fn find(chars: &[char]) -> Vec<Found> {
    find_all(chars, &Work)
}

/// No accounting: the reference does not bound its work.
struct Work;

impl Work {
    fn charge(&self, _: usize) -> bool {
        true
    }
}

fn find_all(chars: &[char], work: &Work) -> Vec<Found> {
    let mut shadow: Vec<u8> = chars
        .iter()
        .map(|&c| if c.is_ascii() { c as u8 } else { b'?' })
        .collect();
    let mut found = Vec::new();
    let len = shadow.len();
    extract_tag_extensions(&mut shadow, 0, len, &mut found, work);
    parse_sub_spans(&mut shadow, 0, len, &mut found, work);
    found.sort_by_key(|l: &Found| (l.span.start, l.span.end));
    found
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
    let (&first, _) = needle.split_first()?;
    // Candidates are where the first byte matches in either case.
    memchr::memchr2_iter(first.to_ascii_lowercase(), first.to_ascii_uppercase(), hay)
        .find(|&p| {
            hay.get(p..p + needle.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(needle))
        })
        .map(|p| p + from)
}

/// Remembers the last search for each closing tag so that many unclosed
/// tags of one name cost one scan, not one scan each.
#[derive(Default)]
struct CloseCache {
    /// `(name, end)` → (searched from, first match at or after it).
    found: std::collections::HashMap<(&'static str, usize), (usize, Option<usize>)>,
}

impl FindClosing for CloseCache {
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

fn extract_tag_extensions(
    b: &mut [u8],
    start: usize,
    end: usize,
    found: &mut Vec<Found>,
    work: &Work,
) {
    if !work.charge(end.saturating_sub(start)) {
        return;
    }
    let mut cache = CloseCache::default();
    let mut i = start;
    while i < end {
        if at(b, i) != b'<' {
            i = next_byte(b, b'<', i, end);
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
                extract_tag_extensions(b, content.start, content.end, found, work);
                parse_sub_spans(b, i, e, found, work);
                fill(b, content, b'_');
                i = e;
            }
            None => i += 1,
        }
    }
}

fn parse_sub_spans(b: &mut [u8], start: usize, end: usize, found: &mut Vec<Found>, work: &Work) {
    // Each pass below scans the whole range: that is the work counted.
    let scan = end.saturating_sub(start);
    if !work.charge(scan) {
        return;
    }
    // Brackets inside HTML tags are not link syntax; pipes, braces and
    // newlines in them are blanked once everything else is found.
    let html_tags = find_html_tags(b, start, end);
    for tag in &html_tags {
        if let Some(s) = b.get_mut(tag.clone()) {
            s.iter_mut()
                .filter(|c| matches!(**c, b'[' | b']'))
                .for_each(|c| *c = b' ');
        }
    }
    loop {
        loop {
            if !work.charge(scan) {
                return;
            }
            let matches = find_links_and_parameters(b, start, end);
            if matches.is_empty() {
                break;
            }
            // Upstream searches backwards; process in that order.
            for (span, is_link) in matches.into_iter().rev() {
                if !work.charge(span.len()) {
                    return;
                }
                let inner_end = span.end.saturating_sub(2).max(span.start + 2);
                parse_sub_spans(b, span.start + 2, inner_end, found, work);
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
        if !work.charge(scan) {
            return;
        }
        let templates = find_templates(b, start, end);
        if templates.is_empty() {
            break;
        }
        for (span, valid_name) in templates {
            if !work.charge(span.len()) {
                return;
            }
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
    for tag in html_tags {
        if let Some(s) = b.get_mut(tag) {
            s.iter_mut()
                .filter(|c| matches!(**c, b'|' | b'{' | b'}' | b'\n'))
                .for_each(|c| *c = b' ');
        }
    }
}

/// HTML start and end tags with a known name (case-sensitive), as spans.
fn find_html_tags(b: &[u8], start: usize, end: usize) -> Vec<Range<usize>> {
    let name_end = |k: usize| {
        let mut e = k;
        while e < end && is_word_byte(at(b, e)) {
            e += 1;
        }
        e
    };
    let known = |r: Range<usize>| {
        b.get(r)
            .is_some_and(|n| HTML_TAGS.iter().any(|t| t.as_bytes() == n))
    };
    let close = |k: usize| find_byte(b, b'>', k, end);
    let mut tags = Vec::new();
    // Start tags: `<name` then anything up to `>`.
    let mut i = start;
    while i < end {
        if at(b, i) == b'<' {
            let n = name_end(i + 1);
            if known(i + 1..n)
                && let Some(g) = close(n)
            {
                tags.push(i..g + 1);
                i = g + 1;
                continue;
            }
        }
        i = next_byte(b, b'<', i + 1, end);
    }
    // End tags: `</name>` or `</name` + space + anything up to `>`.
    let mut i = start;
    while i + 1 < end {
        if at(b, i) == b'<' && at(b, i + 1) == b'/' {
            let n = name_end(i + 2);
            let spaced = matches!(at(b, n), b' ' | b'\t' | b'\n' | 0x0c | b'\r' | 0) && n < end;
            if known(i + 2..n)
                && (at(b, n) == b'>' || spaced)
                && let Some(g) = close(n)
            {
                tags.push(i..g + 1);
                i = g + 1;
                continue;
            }
        }
        i = next_byte(b, b'<', i + 1, end);
    }
    tags
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
///
/// Upstream runs this pattern with the `REVERSE` flag: the search starts at
/// the end, each attempt matches the pattern right to left from a candidate
/// end position, and after a match the search resumes at its start.  The
/// possessive pieces of the pattern therefore bind from the right, which
/// decides cases such as `[[a|]]]` (label `]`).
fn find_links_and_parameters(b: &[u8], start: usize, end: usize) -> Vec<(Range<usize>, bool)> {
    let mut out = Vec::new();
    let mut pos = end;
    while pos > start {
        let found = match at(b, pos - 1) {
            b']' => link_ending_at(b, pos, start, end).map(|s| (s, true)),
            b'}' => parameter_ending_at(b, pos, start).map(|s| (s, false)),
            _ => None,
        };
        match found {
            Some((s, is_link)) => {
                out.push((s..pos, is_link));
                pos = s;
            }
            // Only a `]` or `}` just before `pos` can end a match: skip to the next one.
            None => {
                pos = b
                    .get(start..pos - 1)
                    .and_then(|hay| memchr::memrchr2(b']', b'}', hay))
                    .map_or(start, |p| start + p + 1);
            }
        }
    }
    out.reverse();
    out
}

/// Steps back over `[^\[\]|]*`.
fn back_plain(b: &[u8], mut k: usize, start: usize) -> usize {
    while k > start && !matches!(at(b, k - 1), b'[' | b']' | b'|') {
        k -= 1;
    }
    k
}

/// Start of a wikilink whose closing `]\0*]` ends at `e`, matched backwards.
fn link_ending_at(b: &[u8], e: usize, start: usize, end: usize) -> Option<usize> {
    let mut k = e - 1; // the final `]`
    while k > start && at(b, k - 1) == 0 {
        k -= 1;
    }
    if k == start || at(b, k - 1) != b']' {
        return None;
    }
    k -= 1;
    // Label segments, right to left: plain text, an optional `[…]` pair,
    // an optional lone `]`, an optional lone `[`, then the `|`.
    loop {
        let segment_end = k;
        k = back_plain(b, k, start);
        if k > start && at(b, k - 1) == b']' && !three_closers(b, k, end) {
            let m = back_plain(b, k - 1, start);
            if m > start && at(b, m - 1) == b'[' {
                k = back_plain(b, m - 1, start);
            }
        }
        if k > start && at(b, k - 1) == b']' && !prev_is(b, k - 1, b']') {
            k -= 1;
        }
        if k > start && at(b, k - 1) == b'[' && !prev_is(b, k - 1, b'[') {
            k -= 1;
        }
        if k > start && at(b, k - 1) == b'|' {
            k -= 1;
        } else {
            k = segment_end;
            break;
        }
    }
    let title_end = k;
    while k > start && is_title_byte(at(b, k - 1)) {
        k -= 1;
    }
    if k == title_end {
        return None;
    }
    let title_start = k;
    if k == start || at(b, k - 1) != b'[' {
        return None;
    }
    k -= 1;
    while k > start && at(b, k - 1) == 0 {
        k -= 1;
    }
    if k == start || at(b, k - 1) != b'[' {
        return None;
    }
    k -= 1;
    if starts_with_bare_url(b, title_start, end) {
        return None;
    }
    // Not preceded by an odd number of `[` (NULs between them ignored).
    let mut brackets = 0usize;
    let mut j = k;
    while j > 0 {
        match at(b, j - 1) {
            b'[' => brackets += 1,
            0 => {}
            _ => break,
        }
        j -= 1;
    }
    brackets.is_multiple_of(2).then_some(k)
}

/// `[ \0]*` then a bare URL scheme and at least one URL byte.
fn starts_with_bare_url(b: &[u8], mut u: usize, end: usize) -> bool {
    while u < end && matches!(at(b, u), b' ' | 0) {
        u += 1;
    }
    let word_boundary = u == 0 || !is_word_byte(at(b, u - 1));
    let first = at(b, u);
    word_boundary
        && BARE_URL_SCHEMES.iter().any(|s| {
            let after = u + s.len();
            s.as_bytes().first() == Some(&first)
                && b.get(u..after) == Some(s.as_bytes())
                && after < end
                && (is_url_byte(at(b, after)) || at(b, after) == b'[')
        })
}

/// Start of a `{{{…}}}` ending at `e`, matched backwards.
fn parameter_ending_at(b: &[u8], e: usize, start: usize) -> Option<usize> {
    if e < start + 6 || b.get(e - 3..e) != Some(b"}}}") {
        return None;
    }
    let mut k = e - 3;
    let body_end = k;
    while k > start {
        let c = at(b, k - 1);
        let before = if k >= 2 { at(b, k - 2) } else { 0 };
        let ok = match c {
            b'}' => before != b'}' && at(b, k) != b'}',
            b'{' => before != b'{',
            _ => true,
        };
        if !ok {
            break;
        }
        k -= 1;
    }
    (k < body_end && k >= start + 3 && b.get(k - 3..k) == Some(b"{{{")).then(|| k - 3)
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
        i = next_byte(b, b'{', i + 1, end);
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
