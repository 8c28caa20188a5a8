//! Literal search, counting and replacement with Python `re` semantics.

use crate::pyunicode;

/// The placement rule `(?<!\[\[)(?<!-->)` + escaped `m` + `(?![\w\s]*[\]\]])`:
/// the first occurrence of `m` in `s` that does not directly follow `[[` or
/// `-->`, and that is not followed (after word and space characters) by `]`.
/// There is no word boundary: `cat` matches inside `category`.
pub(crate) fn find_mention(s: &[char], m: &[char]) -> Option<usize> {
    if m.is_empty() || m.len() > s.len() {
        return None;
    }
    (0..=s.len() - m.len()).find(|&i| {
        occurs_at(s, i, m)
            && !(i >= 2 && s.get(i - 2..i) == Some(&['[', '['][..]))
            && !(i >= 3 && s.get(i - 3..i) == Some(&['-', '-', '>'][..]))
            && {
                let mut j = i + m.len();
                while s
                    .get(j)
                    .is_some_and(|&c| pyunicode::is_word(c) || pyunicode::is_space(c))
                {
                    j += 1;
                }
                s.get(j) != Some(&']')
            }
    })
}

/// [`find_mention`] on UTF-8 text, as a byte offset: a match of a UTF-8 needle starts and
/// ends on code point boundaries, and `[[`, `-->` and `]` are single bytes, so the rule reads
/// the same on bytes; candidates come from a SIMD search instead of a comparison at every
/// code point.
pub(crate) fn find_mention_str(s: &str, m: &str) -> Option<usize> {
    if m.is_empty() {
        return None;
    }
    let bytes = s.as_bytes();
    let finder = memchr::memmem::Finder::new(m.as_bytes());
    let mut from = 0;
    while let Some(hit) = bytes.get(from..).and_then(|rest| finder.find(rest)) {
        let i = from + hit;
        let before = bytes.get(..i).unwrap_or_default();
        let after = s.get(i + m.len()..).unwrap_or_default();
        if !before.ends_with(b"[[")
            && !before.ends_with(b"-->")
            && after
                .chars()
                .find(|&c| !(pyunicode::is_word(c) || pyunicode::is_space(c)))
                != Some(']')
        {
            return Some(i);
        }
        // Matches may overlap: the next one can start one byte on.
        from = i + 1;
    }
    None
}

/// Whether non-empty `m` occurs in `s` at `i`. The first character is compared on its
/// own first: it rules out almost every position without a slice comparison.
#[inline]
fn occurs_at(s: &[char], i: usize, m: &[char]) -> bool {
    s.get(i) == m.first() && s.get(i..i + m.len()) == Some(m)
}

/// `str.count`: non-overlapping occurrences (an empty needle counts
/// `len + 1` positions, as Python does).
pub(crate) fn count(s: &[char], m: &[char]) -> usize {
    if m.is_empty() {
        return s.len() + 1;
    }
    let mut n = 0;
    let mut i = 0;
    while i + m.len() <= s.len() {
        if occurs_at(s, i, m) {
            n += 1;
            i += m.len();
        } else {
            i += 1;
        }
    }
    n
}

/// The first occurrence of `needle` in `hay`, as `memmem::find`.
///
/// The needle is often a whole text node, thousands of bytes long, searched once: its
/// first bytes are searched for instead (a long needle's preprocessing costs about as much
/// as the search), and each hit is compared whole. Comparisons stop at a budget of the
/// two lengths, after which the full search takes over, so the time stays linear.
pub(crate) fn find_first(hay: &[u8], needle: &[u8]) -> Option<usize> {
    const HEAD: usize = 16;
    let Some(head) = needle.get(..HEAD).filter(|_| needle.len() > 2 * HEAD) else {
        return memchr::memmem::find(hay, needle);
    };
    let finder = memchr::memmem::Finder::new(head);
    let mut budget = hay.len() + needle.len();
    let mut from = 0;
    while let Some(hit) = hay.get(from..).and_then(|rest| finder.find(rest)) {
        let at = from + hit;
        // A hit too close to the end rules out every later one as well.
        if hay.get(at..at + needle.len())? == needle {
            return Some(at);
        }
        budget = budget.saturating_sub(needle.len());
        if budget == 0 {
            let rest = hay.get(at + 1..)?;
            return memchr::memmem::find(rest, needle).map(|i| at + 1 + i);
        }
        from = at + 1;
    }
    None
}

/// Why a replacement template was rejected (Python raises `re.error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadTemplate(pub String);

/// Expands a Python `re` replacement template for a pattern without groups:
/// `\\`, `\n`, `\t` … become characters, other escapes of non-letters stay
/// as written, and group references or unknown letter escapes are errors.
pub(crate) fn expand_template(template: &str) -> Result<String, BadTemplate> {
    let mut out = String::with_capacity(template.len());
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            return Err(BadTemplate("bad escape (end of pattern)".into()));
        };
        match e {
            '\\' => out.push('\\'),
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            '0' => {
                // Octal escape: `\0` plus up to two more octal digits.
                let mut value = 0u32;
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&d @ '0'..='7') => {
                            value = value * 8 + (d as u32 - '0' as u32);
                            chars.next();
                        }
                        _ => break,
                    }
                }
                out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
            }
            '1'..='9' | 'g' => return Err(BadTemplate(format!("invalid group reference \\{e}"))),
            e if e.is_ascii_alphabetic() => return Err(BadTemplate(format!("bad escape \\{e}"))),
            e => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn placement_rule() {
        assert_eq!(find_mention(&v("The category of cat"), &v("cat")), Some(4));
        assert_eq!(find_mention(&v("[[cat]] cat"), &v("cat")), Some(8));
        assert_eq!(find_mention(&v("-->cat cat"), &v("cat")), Some(7));
        // Followed by word/space characters and then `]`: inside a link.
        assert_eq!(
            find_mention(&v("[[Felis catus|x]] catus"), &v("catus")),
            Some(8)
        );
        assert_eq!(find_mention(&v("a cat b]] cat"), &v("cat")), Some(10));
        assert_eq!(find_mention(&v("xanchor1"), &v("anchor1")), Some(1));
        assert_eq!(find_mention(&v("abc"), &v("")), None);
    }

    /// The head search finds what the full search finds, including after many hits of
    /// the head alone and past the comparison budget.
    #[test]
    fn first_occurrence() {
        let long = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(3);
        let cases: [(String, &str); 6] = [
            (format!("xx{long}yy{long}"), long.as_str()),
            (format!("{}{long}", &long[..40]), long.as_str()),
            ("a".repeat(5000) + "b", &"a".repeat(100)),
            ("a".repeat(5000), &("a".repeat(99) + "b")),
            (
                ("a".repeat(99) + "c").repeat(80) + &"a".repeat(99) + "b",
                &("a".repeat(99) + "b"),
            ),
            ("short hay".into(), long.as_str()),
        ];
        for (hay, needle) in &cases {
            assert_eq!(
                find_first(hay.as_bytes(), needle.as_bytes()),
                memchr::memmem::find(hay.as_bytes(), needle.as_bytes()),
                "{needle:?}"
            );
        }
        assert_eq!(find_first(b"abc", b""), Some(0));
    }

    /// The byte search places every mention where the code point search does.
    #[test]
    fn placement_rule_on_bytes() {
        let texts = [
            "The category of cat",
            "[[cat]] cat",
            "-->cat cat",
            "[[Felis catus|x]] catus",
            "a cat b]] cat",
            "xanchor1",
            "é[[éé]] ééé -->éé éé]]",
            "aaaa]] aaa aa",
            "ß straße ß]] ß",
            "x\u{a0}cat\u{3000}]] cat",
        ];
        let needles = [
            "cat", "catus", "anchor1", "éé", "é", "aa", "a", "ß", "", "x",
        ];
        for text in texts {
            for needle in needles {
                let by_bytes = find_mention_str(text, needle)
                    .map(|b| text.get(..b).map(|p| p.chars().count()));
                assert_eq!(
                    by_bytes,
                    find_mention(&v(text), &v(needle)).map(Some),
                    "{text:?} {needle:?}"
                );
            }
        }
    }

    #[test]
    fn python_count() {
        assert_eq!(count(&v("female male"), &v("male")), 2);
        assert_eq!(count(&v("aaaa"), &v("aa")), 2);
        assert_eq!(count(&v("ab"), &v("")), 3);
    }

    #[test]
    fn replacement_templates() {
        assert_eq!(expand_template(r"[[A\\B|x]]").unwrap(), r"[[A\B|x]]");
        assert_eq!(expand_template(r"a\nb").unwrap(), "a\nb");
        assert_eq!(expand_template(r"a\&b").unwrap(), r"a\&b");
        assert!(expand_template(r"a\db").is_err());
        assert!(expand_template(r"a\1").is_err());
        assert!(expand_template(r"a\g<0>").is_err());
        assert!(expand_template("a\\").is_err());
    }
}
