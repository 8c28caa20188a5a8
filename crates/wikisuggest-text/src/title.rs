//! Title and anchor normalisation of the production engine.

use std::borrow::Cow;

use crate::pyunicode;

/// `urllib.parse.unquote` (UTF-8, `errors="replace"`; `+` is kept).
///
/// Only maximal ASCII runs are percent-decoded, each on its own, so an
/// escape sequence interrupted by a non-ASCII character decodes as two
/// invalid halves, exactly as upstream.
pub fn unquote(s: &str) -> Cow<'_, str> {
    if !s.contains('%') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        let ascii_len = rest.find(|c: char| !c.is_ascii()).unwrap_or(rest.len());
        let (ascii, tail) = rest.split_at(ascii_len);
        out.push_str(&String::from_utf8_lossy(&unquote_to_bytes(ascii)));
        let other_len = tail.find(|c: char| c.is_ascii()).unwrap_or(tail.len());
        let (other, tail) = tail.split_at(other_len);
        out.push_str(other);
        rest = tail;
    }
    Cow::Owned(out)
}

/// `%XX` (two hex digits) becomes one byte; anything else is kept.
fn unquote_to_bytes(ascii: &str) -> Vec<u8> {
    let bytes = ascii.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            // `from_str_radix` accepts a sign; upstream needs two hex digits.
            .filter(|_| bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit));
        match (b, hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// `normalise_title`: percent-decode, strip, uppercase the first code point
/// (`str.upper`, possibly several code points), `_` → space, cut at `#`.
pub fn normalise_title(title: &str) -> String {
    let mut out = String::new();
    normalise_title_into(&mut out, title);
    out
}

/// [`normalise_title`] appended to `out` (a caller normalising many titles reuses one
/// buffer).
pub fn normalise_title_into(out: &mut String, title: &str) {
    let decoded = unquote(title);
    let stripped = pyunicode::strip(&decoded);
    let start = out.len();
    let mut chars = stripped.chars();
    if let Some(first) = chars.next() {
        pyunicode::push_upper(out, first);
        out.push_str(chars.as_str());
    }
    if let Some(added) = out.get(start..)
        && added.contains('_')
    {
        let replaced = added.replace('_', " ");
        out.truncate(start);
        out.push_str(&replaced);
    }
    if let Some(i) = out.get(start..).and_then(|added| added.find('#')) {
        out.truncate(start + i);
    }
}

/// `normalise_anchor`: `str.lower(str.strip(anchor))`.
pub fn normalise_anchor(anchor: &str) -> String {
    pyunicode::lower(pyunicode::strip(anchor))
}

/// [`normalise_anchor`] appended to `out`.
pub fn normalise_anchor_into(out: &mut String, anchor: &str) {
    pyunicode::lower_into(out, pyunicode::strip(anchor));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expectations recorded from CPython 3.11 `urllib.parse.unquote`.
    #[test]
    fn unquote_matches_python() {
        let cases = [
            ("a%20b", "a b"),
            ("%C3%A9t%C3%A9", "été"),
            ("%zz%4", "%zz%4"),
            ("%E2%82", "\u{fffd}"),
            ("%C3é%A9", "\u{fffd}é\u{fffd}"),
            ("x+y", "x+y"),
            ("%ED%A0%80", "\u{fffd}\u{fffd}\u{fffd}"),
            ("%F0%9F%98%80_", "😀_"),
            ("%FF%FEab", "\u{fffd}\u{fffd}ab"),
            ("%E2%82%41", "\u{fffd}A"),
            ("%+1", "%+1"),
        ];
        for (input, expected) in cases {
            assert_eq!(unquote(input), expected, "{input}");
        }
    }

    /// Expectations recorded from the production `normalise_title`.
    #[test]
    fn normalise_title_matches_python() {
        let cases = [
            ("_x_", " x "),
            ("ßtraße", "SStraße"),
            ("foo#bar", "Foo"),
            (" ǆemal", "Ǆemal"),
            ("ǳ", "Ǳ"),
            ("%20abc%5Fd ", "Abc d"),
            ("\u{1c} q\u{85}", "Q"),
            ("ﬁx", "FIx"),
            ("#Section", ""),
            ("", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(normalise_title(input), expected, "{input:?}");
        }
    }

    #[test]
    fn normalise_anchor_is_strip_then_lower() {
        assert_eq!(normalise_anchor("  İstanbul_X "), "i\u{307}stanbul_x");
        assert_eq!(normalise_anchor("%20A"), "%20a");
        assert_eq!(normalise_anchor("ΟΔΟΣ"), "οδος");
    }
}
