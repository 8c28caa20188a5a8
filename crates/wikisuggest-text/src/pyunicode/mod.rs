//! Character predicates and case mappings with CPython 3.11 semantics.
//!
//! Production runs on CPython 3.11, whose Unicode database is version 14.0.
//! Rust's `char` methods follow a newer Unicode version and use different
//! definitions (for instance `char::is_whitespace` lacks U+001C..U+001F and
//! `char::is_alphabetic` includes combining marks), so every predicate the
//! engine relies on is answered from tables generated from CPython itself by
//! `tools/gen_pyunicode.py`.

#[rustfmt::skip] // generated
mod tables;

use std::cmp::Ordering;

fn in_ranges(table: &[(u32, u32)], c: char) -> bool {
    let cp = u32::from(c);
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                Ordering::Less
            } else if lo > cp {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        })
        .is_ok()
}

/// The code points below 128 of a range table, as a bit mask (built at compile time).
const fn ascii_mask(mut table: &[(u32, u32)]) -> u128 {
    let mut mask = 0u128;
    while let [(lo, hi), rest @ ..] = table {
        let mut cp = *lo;
        while cp <= *hi && cp < 128 {
            mask |= 1 << cp;
            cp += 1;
        }
        table = rest;
    }
    mask
}

/// [`is_space`] of the code points below 128, bit `c` for `c`: for scanners that classify
/// ASCII bytes without decoding them.
pub(crate) const ASCII_SPACE: u128 = ascii_mask(tables::SPACE);

/// [`is_punctuation_category`] of the code points below 128, as [`ASCII_SPACE`].
pub(crate) const ASCII_PUNCTUATION: u128 = ascii_mask(tables::PUNCTUATION);

/// Membership in a generated range table. Most wikitext is ASCII, so code points below
/// 128 are answered from a mask of the same table instead of a binary search.
macro_rules! in_table {
    ($table:ident, $c:expr) => {{
        const ASCII: u128 = ascii_mask(tables::$table);
        let c: char = $c;
        match u32::from(c) {
            cp @ 0..128 => (ASCII >> cp) & 1 == 1,
            _ => in_ranges(tables::$table, c),
        }
    }};
}

fn lookup(table: &'static [(u32, &'static str)], c: char) -> Option<&'static str> {
    let cp = u32::from(c);
    table
        .binary_search_by_key(&cp, |&(k, _)| k)
        .ok()
        .and_then(|i| table.get(i))
        .map(|&(_, s)| s)
}

/// `str.isspace()` for one character (equals `re`'s `\s` on `str` patterns).
pub fn is_space(c: char) -> bool {
    in_table!(SPACE, c)
}

/// `\s` of the third-party `regex` module: Unicode White_Space, which is the
/// [`is_space`] set without the information separators U+001C..U+001F.
pub fn is_regex_module_space(c: char) -> bool {
    is_space(c) && !('\u{1c}'..='\u{1f}').contains(&c)
}

/// `str.isalnum()` for one character.
pub fn is_alnum(c: char) -> bool {
    in_table!(ALNUM, c)
}

/// `\w` of Python's `re` module on `str` patterns: `isalnum()` or `_`.
///
/// Not the `regex` crate's `\w`, which also admits marks and connectors.
pub fn is_word(c: char) -> bool {
    c == '_' || is_alnum(c)
}

/// `str.isalpha()` for one character (general category L*).
pub fn is_alpha(c: char) -> bool {
    in_table!(ALPHA, c)
}

/// `str.isdecimal()` for one character.
pub fn is_decimal(c: char) -> bool {
    in_table!(DECIMAL, c)
}

/// `str.isdigit()` for one character.
pub fn is_digit(c: char) -> bool {
    in_table!(DIGIT, c)
}

/// Unicode `Cased` as CPython 3.11 has it.
pub fn is_cased(c: char) -> bool {
    in_table!(CASED, c)
}

/// Unicode `Case_Ignorable` as CPython 3.11 has it.
pub fn is_case_ignorable(c: char) -> bool {
    in_table!(CASE_IGNORABLE, c)
}

/// General category P* in Unicode 14.0.
pub fn is_punctuation_category(c: char) -> bool {
    in_table!(PUNCTUATION, c)
}

/// The mapping of the code points below 128 by a generated mapping table (built at compile
/// time): the one ASCII byte each maps to, or `0` where the table must be asked (NUL, and a
/// code point mapped to anything else).
const fn ascii_map(mut table: &[(u32, &str)]) -> [u8; 128] {
    let mut map = [0u8; 128];
    let mut cp = 1;
    while cp < 128 {
        map[cp] = cp as u8;
        cp += 1;
    }
    while let [(cp, to), rest @ ..] = table {
        if *cp < 128 {
            map[*cp as usize] = match to.as_bytes() {
                [b] if *b < 128 => *b,
                _ => 0,
            };
        }
        table = rest;
    }
    map
}

/// Pushes the mapping of `c` by a generated mapping table. Most wikitext is ASCII, so code
/// points below 128 are mapped by the table's [`ascii_map`] instead of a binary search.
macro_rules! push_mapped {
    ($out:expr, $table:ident, $c:expr) => {{
        const ASCII: [u8; 128] = ascii_map(tables::$table);
        let (out, c): (&mut String, char) = ($out, $c);
        match ASCII.get(u32::from(c) as usize) {
            Some(&b) if b != 0 => out.push(char::from(b)),
            _ => match lookup(tables::$table, c) {
                Some(s) => out.push_str(s),
                None => out.push(c),
            },
        }
    }};
}

pub(crate) const CAPITAL_SIGMA: char = '\u{3a3}';
const FINAL_SIGMA: char = '\u{3c2}';
const SMALL_SIGMA: char = '\u{3c3}';

/// `str.lower()`: full lowercase mapping, including the Final_Sigma rule.
pub fn lower(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    // Only a capital sigma looks at its neighbours: without one, no code point vector.
    if !s.contains(CAPITAL_SIGMA) {
        let mut out = String::with_capacity(s.len());
        for c in s.chars() {
            push_mapped!(&mut out, LOWER, c);
        }
        return out;
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == CAPITAL_SIGMA {
            out.push(if is_final_sigma(&chars, i) {
                FINAL_SIGMA
            } else {
                SMALL_SIGMA
            });
        } else {
            push_mapped!(&mut out, LOWER, c);
        }
    }
    out
}

/// Appends `str.lower()` of `s` to `out`.
pub fn lower_into(out: &mut String, s: &str) {
    if s.is_ascii() {
        let start = out.len();
        out.push_str(s);
        if let Some(added) = out.get_mut(start..) {
            added.make_ascii_lowercase();
        }
    } else if !s.contains(CAPITAL_SIGMA) {
        for c in s.chars() {
            push_mapped!(out, LOWER, c);
        }
    } else {
        out.push_str(&lower(s));
    }
}

/// The Final_Sigma context of CPython: a cased letter (possibly followed by
/// case-ignorable characters) before, and no cased letter (after skipping
/// case-ignorable characters) after.
fn is_final_sigma(chars: &[char], i: usize) -> bool {
    let before = chars
        .get(..i)
        .unwrap_or_default()
        .iter()
        .rev()
        .find(|&&c| !is_case_ignorable(c));
    if !before.is_some_and(|&c| is_cased(c)) {
        return false;
    }
    let after = chars
        .get(i + 1..)
        .unwrap_or_default()
        .iter()
        .find(|&&c| !is_case_ignorable(c));
    !after.is_some_and(|&c| is_cased(c))
}

/// `str.upper()`: full uppercase mapping (`ß` becomes `SS`).
pub fn upper(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_mapped!(&mut out, UPPER, c);
    }
    out
}

/// `str.upper()` of a single character (may be several characters).
pub fn upper_char(c: char) -> &'static str {
    lookup(tables::UPPER, c).unwrap_or("")
}

/// Pushes `str.upper()` of one character onto `out`.
pub fn push_upper(out: &mut String, c: char) {
    push_mapped!(out, UPPER, c);
}

/// `str.casefold()`: full Unicode case folding.
pub fn casefold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_mapped!(&mut out, CASEFOLD, c);
    }
    out
}

/// `str.strip()` with no argument: removes leading and trailing [`is_space`].
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// `str.rsplit(maxsplit=1)[-1]`: the last run of non-[`is_space`] characters,
/// or `None` when `s` is blank (where Python would raise `IndexError`).
pub fn last_word(s: &str) -> Option<&str> {
    let trimmed = s.trim_end_matches(is_space);
    if trimmed.is_empty() {
        return None;
    }
    let start = trimmed
        .char_indices()
        .rev()
        .find(|&(_, c)| is_space(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    trimmed.get(start..)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ASCII masks answer exactly as the tables they are built from.
    #[test]
    fn ascii_masks_equal_tables() {
        type Predicate = fn(char) -> bool;
        type Ranges = &'static [(u32, u32)];
        let predicates: [(Predicate, Ranges); 8] = [
            (is_space, tables::SPACE),
            (is_alnum, tables::ALNUM),
            (is_alpha, tables::ALPHA),
            (is_decimal, tables::DECIMAL),
            (is_digit, tables::DIGIT),
            (is_cased, tables::CASED),
            (is_case_ignorable, tables::CASE_IGNORABLE),
            (is_punctuation_category, tables::PUNCTUATION),
        ];
        for (predicate, table) in predicates {
            for c in (0..128u8).map(char::from) {
                assert_eq!(predicate(c), in_ranges(table, c), "{c:?}");
            }
        }
        assert!(is_space('\u{1c}') && is_punctuation_category('_') && !is_alnum('$'));
    }

    /// The ASCII forms of the mapping tables map exactly as the tables they are built from.
    #[test]
    fn ascii_maps_equal_tables() {
        type Mapping = fn(&str) -> String;
        type Table = &'static [(u32, &'static str)];
        let mappings: [(Mapping, Table); 3] = [
            (lower, tables::LOWER),
            (upper, tables::UPPER),
            (casefold, tables::CASEFOLD),
        ];
        for (mapping, table) in mappings {
            for c in (0..128u8).map(char::from) {
                let want: String = lookup(table, c).map_or_else(|| c.to_string(), str::to_owned);
                // One character at a time, and inside a string that is not ASCII.
                assert_eq!(mapping(&c.to_string()), want, "{c:?}");
                assert_eq!(mapping(&format!("é{c}")), format!("{}{want}", mapping("é")));
            }
        }
        let mut pushed = String::new();
        for c in (0..128u8).map(char::from) {
            push_upper(&mut pushed, c);
        }
        assert_eq!(
            pushed,
            upper(&(0..128u8).map(char::from).collect::<String>())
        );
        assert_eq!(lower("ÀB"), "àb");
        assert_eq!(upper("éz"), "ÉZ");
    }

    #[test]
    fn whitespace_sets_differ_from_rust() {
        assert!(is_space('\u{1c}'));
        assert!(!'\u{1c}'.is_whitespace());
        assert!(!is_regex_module_space('\u{1c}'));
        assert!(is_regex_module_space('\u{a0}'));
        assert!(!is_space('\u{200b}'));
    }

    #[test]
    fn word_excludes_marks() {
        assert!(is_word('_'));
        assert!(is_word('é'));
        assert!(is_word('٣'));
        assert!(!is_word('\u{301}'));
        assert!(!is_word('-'));
    }

    #[test]
    fn case_mappings() {
        assert_eq!(lower("İ"), "i\u{307}");
        assert_eq!(upper("ß"), "SS");
        assert_eq!(casefold("Straße"), "strasse");
        assert_eq!(lower("ΟΔΟΣ ΣΑ"), "οδος σα");
        assert_eq!(upper_char('a'), "A");
        assert_eq!(upper_char('1'), "");
    }

    #[test]
    fn strip_and_last_word() {
        assert_eq!(strip("\u{1f} a b\u{85}"), "a b");
        assert_eq!(last_word("foo bar.  "), Some("bar."));
        assert_eq!(last_word("single"), Some("single"));
        assert_eq!(last_word(" \u{a0}"), None);
    }
}
