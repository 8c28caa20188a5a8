//! Titles: production's normalisation of titles and anchors, and beside it MediaWiki's rules
//! for what a title may be, checked in one place.
//!
//! The check is used by every front end: the HTTP client before it asks for a title's links
//! or a wiki's page, the reference server before it answers, the local engine for every page
//! it is given, and (through the extension module) the edits' link-target rules. The client,
//! the server and the engine check the title `normalise_title` makes of what the caller gave
//! (the title production reads), so every front end gives the same answer for a title.

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
    // Most titles (a page's links, hundreds of them) start and end with an ASCII character
    // that is no space and hold no `%`, `_` or `#`: then only the first character changes,
    // to its ASCII capital. One look at the bytes instead of a search for each rule.
    let bytes = title.as_bytes();
    if let (Some(&first), Some(&last)) = (bytes.first(), bytes.last())
        && is_ascii_kept(first)
        && is_ascii_kept(last)
        && !bytes
            .iter()
            .fold(false, |any, &b| any | matches!(b, b'%' | b'_' | b'#'))
    {
        out.push(char::from(first.to_ascii_uppercase()));
        out.push_str(title.get(1..).unwrap_or_default());
        return;
    }
    normalise_title_by_rule(out, title);
}

/// An ASCII byte that `str.strip` keeps.
#[inline]
fn is_ascii_kept(b: u8) -> bool {
    b.is_ascii() && (pyunicode::ASCII_SPACE >> b) & 1 == 0
}

/// [`normalise_title_into`] rule by rule, for any title.
fn normalise_title_by_rule(out: &mut String, title: &str) {
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

/// A title written by hand (in a rule file, a class table) as MediaWiki stores it, so that
/// it names the page a dataset knows: Unicode NFC (MediaWiki normalises all input so),
/// left-to-right and right-to-left marks and embeddings dropped, every run of spaces,
/// underscores and the other spaces MediaWiki folds into one (NBSP, U+1680, U+180E,
/// U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) as one space, and then
/// [`normalise_title`]. A title already in that form comes back as `normalise_title` gives
/// it.
pub fn canonical_title(title: &str) -> String {
    let normal = normalise_title(&fold_title(title));
    // Percent escapes may have spelt more spaces: fold those too.
    if normal.contains("  ") {
        fold_title(&normal)
    } else {
        normal
    }
}

/// The part of [`canonical_title`] that is not production's: NFC, direction marks dropped,
/// every run of MediaWiki's title spaces (underscores included) as one space, none at
/// either end.
pub fn fold_title(title: &str) -> String {
    let composed = icu_normalizer::ComposingNormalizerBorrowed::new_nfc().normalize(title);
    let mut folded = String::with_capacity(composed.len());
    let mut in_space = false;
    for c in composed.chars() {
        if is_bidi_mark(c) {
            continue;
        }
        if is_title_space(c) {
            in_space = true;
            continue;
        }
        if in_space && !folded.is_empty() {
            folded.push(' ');
        }
        in_space = false;
        folded.push(c);
    }
    folded
}

/// The characters MediaWiki folds into one underscore in a title.
fn is_title_space(c: char) -> bool {
    matches!(
        c,
        ' ' | '_' | '\u{a0}' | '\u{1680}' | '\u{180e}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
    )
}

/// The direction marks and embeddings MediaWiki removes from a title.
fn is_bidi_mark(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}')
}

/// `normalise_anchor`: `str.lower(str.strip(anchor))`.
pub fn normalise_anchor(anchor: &str) -> String {
    pyunicode::lower(pyunicode::strip(anchor))
}

/// [`normalise_anchor`] appended to `out`.
pub fn normalise_anchor_into(out: &mut String, anchor: &str) {
    pyunicode::lower_into(out, pyunicode::strip(anchor));
}

/// The longest title MediaWiki accepts, in UTF-8 bytes.
pub const MAX_TITLE_BYTES: usize = 255;

/// A title MediaWiki would refuse, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{shown} is not a MediaWiki title: {reason}")]
pub struct InvalidTitle {
    /// The title, quoted with escapes and cut short (a swapped argument can be an article).
    pub shown: String,
    /// Why MediaWiki would refuse it.
    pub reason: String,
}

/// MediaWiki's rules for a title (`MediaWikiTitleCodec`): not empty once its white space
/// (and `_`) is dropped, none of the characters its default `$wgLegalTitleChars` leaves out
/// (`#<>[]|{}`, the ASCII control characters and DEL), no U+FFFD (what is left of text that
/// was not UTF-8), at most [`MAX_TITLE_BYTES`] bytes of UTF-8.
///
/// # Errors
/// [`InvalidTitle`] saying which rule `title` breaks.
pub fn check_title(title: &str) -> Result<(), InvalidTitle> {
    match title_problem(title) {
        None => Ok(()),
        Some(reason) => Err(InvalidTitle {
            shown: shown(title),
            reason,
        }),
    }
}

/// [`check_title`] of the title production reads for `raw` ([`normalise_title`]), which is
/// returned.
///
/// # Errors
/// As [`check_title`], for the normalised title.
pub fn normalise_and_check_title(raw: &str) -> Result<String, InvalidTitle> {
    let title = normalise_title(raw);
    check_title(&title).map_err(|e| InvalidTitle {
        shown: shown(raw),
        ..e
    })?;
    Ok(title)
}

fn title_problem(title: &str) -> Option<String> {
    if let Some(c) = title.chars().find(|&c| forbidden(c)) {
        return Some(if c.is_ascii_control() {
            format!("it holds the control character U+{:04X}", u32::from(c))
        } else {
            format!("a title cannot hold {c:?}")
        });
    }
    if title.contains('\u{fffd}') {
        return Some("it holds U+FFFD (text that was not valid UTF-8)".to_owned());
    }
    if title.chars().all(mediawiki_white_space) {
        return Some("it is empty".to_owned());
    }
    if title.len() > MAX_TITLE_BYTES {
        return Some(format!(
            "it is longer than {MAX_TITLE_BYTES} bytes ({} bytes of UTF-8)",
            title.len()
        ));
    }
    None
}

/// The characters no MediaWiki title holds.
fn forbidden(c: char) -> bool {
    c.is_ascii_control() || matches!(c, '#' | '<' | '>' | '[' | ']' | '|' | '{' | '}')
}

/// What `MediaWikiTitleCodec` collapses and trims as white space (`_` is a space in titles).
fn mediawiki_white_space(c: char) -> bool {
    matches!(
        c,
        ' ' | '_' | '\u{a0}' | '\u{1680}' | '\u{180e}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
    )
}

/// A title as an error shows it.
fn shown(title: &str) -> String {
    const MAX: usize = 60;
    match title.char_indices().nth(MAX) {
        None => format!("{title:?}"),
        Some((end, _)) => format!("{:?}…", &title[..end]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The look at a title's bytes gives what the rules give: titles with and without
    /// each rule's character, at either end and inside, ASCII or not.
    #[test]
    fn plain_titles_are_normalised_as_by_the_rules() {
        let parts = [
            "a", "Z", "1", " ", "\t", "\u{1c}", "\u{a0}", "_", "%", "%20", "#", "é", "ß", "ǆ", "-",
            "x y", "(", "\u{3000}", "ﬁ",
        ];
        for a in parts {
            for b in parts {
                for c in parts {
                    let title = format!("{a}{b}{c}");
                    let (mut fast, mut by_rule) = (String::from("<"), String::from("<"));
                    normalise_title_into(&mut fast, &title);
                    normalise_title_by_rule(&mut by_rule, &title);
                    assert_eq!(fast, by_rule, "{title:?}");
                }
            }
        }
        assert_eq!(normalise_title("mammal"), "Mammal");
        assert_eq!(normalise_title("1990s in music"), "1990s in music");
    }

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

    #[test]
    fn canonical_titles_are_mediawikis() {
        let cases = [
            ("New  York", "New York"),
            ("New__York_", "New York"),
            ("  new \u{a0}\u{3000} york ", "New york"),
            ("\u{200e}e\u{301}cole", "École"),
            ("Cafe\u{301}", "Café"),
            ("A%20%20B", "A B"),
            ("Mammal", "Mammal"),
            ("mammal#Legs", "Mammal"),
            ("", ""),
            ("  ", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(canonical_title(input), expected, "{input:?}");
        }
        // Titles already canonical are left as production normalises them.
        for title in ["Ada Lovelace", "São Paulo", "ǅemal", "Straße"] {
            assert_eq!(canonical_title(title), normalise_title(title));
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

    #[test]
    fn titles_mediawiki_accepts() {
        for good in [
            "Cat",
            "AC/DC",
            "Škoda auto",
            "C++",
            "100%",
            "\u{200b}Cat",
            "Ǆemal",
            "\u{85}Cat",
            &"é".repeat(127),
        ] {
            assert_eq!(check_title(good), Ok(()), "{good:?}");
        }
    }

    #[test]
    fn titles_mediawiki_refuses() {
        for (bad, why) in [
            ("", "empty"),
            ("  ", "empty"),
            ("_\u{a0}\u{3000}", "empty"),
            ("A|B", "'|'"),
            ("[[Cat]]", "'['"),
            ("A{b}", "'{'"),
            ("<b>", "'<'"),
            ("Foo#Bar", "'#'"),
            ("\u{1f}Cat", "U+001F"),
            ("Cat\u{7f}", "U+007F"),
            ("Line\nbreak", "U+000A"),
            ("a\u{fffd}", "U+FFFD"),
            (&"a".repeat(256), "longer than 255 bytes"),
            (&"é".repeat(128), "256 bytes"),
        ] {
            let reason = check_title(bad)
                .map_err(|e| e.reason)
                .err()
                .unwrap_or_default();
            assert!(reason.contains(why), "{bad:?}: {reason}");
        }
        let long = check_title(&"x".repeat(500)).err().map(|e| e.to_string());
        assert!(long.is_some_and(|m| m.len() < 200));
    }

    /// What the front ends check: the title production reads.
    #[test]
    fn normalised_titles_are_checked() {
        for (raw, title) in [
            ("\u{1c} Dog", "Dog"),
            ("\u{1c}\u{a0}Dog", "Dog"),
            ("\u{1c}\u{2028}Dog", "Dog"),
            ("\u{1c}\u{85}Dog", "Dog"),
            ("Dog \u{1f}", "Dog"),
            ("Cat#History", "Cat"),
            ("cat_and_dog", "Cat and dog"),
        ] {
            assert_eq!(
                normalise_and_check_title(raw).as_deref(),
                Ok(title),
                "{raw:?}"
            );
        }
        for raw in [
            "",
            "#Fragment only",
            "A%7CB",
            "%5B%5BCat",
            "%C3",
            "Cat\u{1f}Dog",
        ] {
            assert!(normalise_and_check_title(raw).is_err(), "{raw:?}");
        }
    }
}
