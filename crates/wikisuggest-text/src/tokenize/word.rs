//! mwtokenizer's `whitespace_word_tokenization` with `use_abbreviation=True`.
//!
//! Tokens are whitespace runs, punctuation runs, and words that may contain
//! inner punctuation (`40.123`, `dog's`).  Trailing punctuation may produce an
//! empty-string token before it (`foo .` gives `foo`, ` `, ``, `.`); the
//! n-gram generator counts those, so they are reproduced exactly.
//!
//! The tokens are contiguous and cover the text, so the tokenizer only says where each one
//! ends. It reads the UTF-8 bytes and decodes a character only where a byte is not ASCII:
//! most wikitext is ASCII, and a run of ordinary ASCII characters costs one table look-up
//! per byte.

use super::abbreviations::Abbreviations;
use super::symbols::is_punctuation;
use crate::pyunicode::{ASCII_PUNCTUATION, ASCII_SPACE, is_space};

/// What the tokenizer tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Space,
    Punctuation,
    Other,
    /// Past the end of the text.
    End,
}

/// The class of every ASCII character (mwtokenizer's punctuation set has no gap below 128).
static ASCII_CLASS: [Class; 128] = {
    let mut table = [Class::Other; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = if (ASCII_SPACE >> b) & 1 == 1 {
            Class::Space
        } else if (ASCII_PUNCTUATION >> b) & 1 == 1 {
            Class::Punctuation
        } else {
            Class::Other
        };
        b += 1;
    }
    table
};

/// The class of an ASCII byte.
#[inline(always)]
fn ascii_class(b: u8) -> Class {
    ASCII_CLASS
        .get(usize::from(b))
        .copied()
        .unwrap_or(Class::Other)
}

/// Per byte: 1 for an ASCII character of class `Other`, 0 for any other byte (a space,
/// punctuation, or part of a character that is not ASCII).
static ORDINARY: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 128 {
        if (ASCII_SPACE >> b) & 1 == 0 && (ASCII_PUNCTUATION >> b) & 1 == 0 {
            table[b] = 1;
        }
        b += 1;
    }
    table
};

/// Where the run of ordinary ASCII characters (class `Other`) from byte `at` ends. Eight
/// bytes are classified at a time and the run's length is read from their mask: a word
/// ends after a different count of letters each time, and a loop of one test per byte
/// would have the processor mispredict its exit at nearly every word.
#[inline]
fn ordinary_run_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(window) = bytes.get(at..).and_then(|rest| rest.first_chunk::<8>()) {
        let mut ordinary = 0u32;
        for (k, &b) in window.iter().enumerate() {
            ordinary |= u32::from(ORDINARY[usize::from(b)]) << k;
        }
        let run = (!ordinary).trailing_zeros() as usize;
        at += run;
        if run < 8 {
            return at;
        }
    }
    // The last bytes of the text, one at a time.
    while let Some(&b) = bytes.get(at)
        && ORDINARY[usize::from(b)] == 1
    {
        at += 1;
    }
    at
}

/// The class and UTF-8 length of the character at byte `at` of `text`, a character
/// boundary (`End` and 0 at the end).
#[inline(always)]
fn class_at(text: &str, at: usize) -> (Class, usize) {
    match text.as_bytes().get(at) {
        None => (Class::End, 0),
        Some(&b) if b.is_ascii() => (ascii_class(b), 1),
        Some(_) => match text.get(at..).and_then(|rest| rest.chars().next()) {
            Some(c) if is_space(c) => (Class::Space, c.len_utf8()),
            Some(c) if is_punctuation(c) => (Class::Punctuation, c.len_utf8()),
            Some(c) => (Class::Other, c.len_utf8()),
            None => (Class::End, 0),
        },
    }
}

/// Appends where each token of `text` ends (a byte offset) to `ends`, in order: a token
/// runs from the end of the one before it (or the start of `text`) and may be empty.
pub(super) fn token_ends(text: &str, abbreviations: &Abbreviations, ends: &mut Vec<usize>) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    // The pending word is always the byte range `word_start..at`.
    let mut word_start: Option<usize> = None;
    // Whether the character before `at` is a space.
    let mut after_space = false;
    let mut at = 0;
    while at < n {
        let (class, len) = class_at(text, at);
        match class {
            Class::Space => {
                if word_start.take().is_some() {
                    ends.push(at);
                }
                let mut end = at + len;
                loop {
                    let (next, next_len) = class_at(text, end);
                    if next != Class::Space {
                        break;
                    }
                    end += next_len;
                }
                ends.push(end);
                at = end;
                after_space = true;
                continue;
            }
            Class::Punctuation => {
                let at_start_or_after_space = at == 0 || after_space;
                let next = at + len;
                match class_at(text, next) {
                    (Class::End, _) => {
                        let ws = word_start.take().unwrap_or(at);
                        emit_trailing(text, abbreviations, ends, ws, at, next);
                    }
                    (Class::Other, _) => {
                        if at_start_or_after_space {
                            ends.push(next);
                        } else {
                            word_start.get_or_insert(at);
                        }
                    }
                    (mut following, mut following_len) => {
                        // A run of punctuation: where it ends decides what it is.
                        let mut end = next;
                        while following == Class::Punctuation {
                            end += following_len;
                            (following, following_len) = class_at(text, end);
                        }
                        if matches!(following, Class::End | Class::Space) {
                            let ws = word_start.take().unwrap_or(at);
                            emit_trailing(text, abbreviations, ends, ws, at, end);
                        } else if at_start_or_after_space {
                            word_start = None;
                            ends.push(end);
                        } else {
                            word_start.get_or_insert(at);
                        }
                        at = end;
                        after_space = false;
                        continue;
                    }
                }
                at = next;
            }
            Class::Other | Class::End => {
                word_start.get_or_insert(at);
                at += len.max(1);
                // The rest of a run of ordinary ASCII characters, without decoding.
                at = ordinary_run_end(bytes, at);
            }
        }
        after_space = false;
    }
    if word_start.is_some() {
        ends.push(n);
    }
}

/// mwtokenizer's `whitespace_word_tokenization`: the tokens of `text` as slices of it.
pub(super) fn tokenize_words<'a>(text: &'a str, abbreviations: &Abbreviations) -> Vec<&'a str> {
    let mut ends = Vec::new();
    token_ends(text, abbreviations, &mut ends);
    let mut start = 0;
    ends.into_iter()
        .map(|end| {
            let token = text.get(start..end).unwrap_or_default();
            start = end;
            token
        })
        .collect()
}

/// Trailing punctuation `run_start..end` after the word `word_start..run_start`: one token
/// if word and run together are an abbreviation, otherwise the word (possibly empty) and
/// the run.
fn emit_trailing(
    text: &str,
    abbreviations: &Abbreviations,
    ends: &mut Vec<usize>,
    word_start: usize,
    run_start: usize,
    end: usize,
) {
    let joined = text.get(word_start..end).unwrap_or_default();
    if !abbreviations.is_abbreviation(joined) {
        ends.push(run_start);
    }
    ends.push(end);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        tokenize_words(text, &Abbreviations::for_language("en"))
    }

    #[test]
    fn spec_examples() {
        assert_eq!(words("Berlin, Germany"), ["Berlin", ",", " ", "Germany"]);
        assert_eq!(words("foo ."), ["foo", " ", "", "."]);
        assert_eq!(words("a ?! b"), ["a", " ", "", "?!", " ", "b"]);
        assert_eq!(words("x  y"), ["x", "  ", "y"]);
        assert_eq!(words("U.S."), ["U.S."]);
        assert_eq!(words("A. Smith"), ["A.", " ", "Smith"]);
        assert_eq!(words("end."), ["end", "."]);
        assert_eq!(
            words("(born 1990) in [[x]]"),
            [
                "(", "born", " ", "1990", ")", " ", "in", " ", "[[", "x", "]]"
            ]
        );
    }

    #[test]
    fn inner_punctuation_and_symbols() {
        assert_eq!(
            words("40.123 dog's e.g"),
            ["40.123", " ", "dog's", " ", "e.g"]
        );
        assert_eq!(words("a$b <c> x+y"), ["a$b", " ", "<c>", " ", "x+y"]);
        assert_eq!(words("partic...ular"), ["partic...ular"]);
        assert_eq!(words("!!What"), ["!!", "What"]);
    }

    /// The ASCII table classifies as the character predicates do.
    #[test]
    fn ascii_classes_equal_predicates() {
        for b in 0..128u8 {
            let c = char::from(b);
            let expected = if is_space(c) {
                Class::Space
            } else if is_punctuation(c) {
                Class::Punctuation
            } else {
                Class::Other
            };
            assert_eq!(ascii_class(b), expected, "{c:?}");
        }
    }

    #[test]
    fn non_ascii_characters() {
        assert_eq!(
            words("naïve café, «quoted»… 東京。"),
            [
                "naïve", " ", "café", ",", " ", "«", "quoted", "»…", " ", "東京", "。"
            ]
        );
        assert_eq!(words("a\u{2003}\u{a0}b"), ["a", "\u{2003}\u{a0}", "b"]);
    }

    #[test]
    fn whitespace_runs() {
        assert_eq!(
            words("a\u{a0}b \n c\u{1c}"),
            ["a", "\u{a0}", "b", " \n ", "c", "\u{1c}"]
        );
        assert_eq!(words(""), Vec::<&str>::new());
        assert_eq!(words("."), ["", "."]);
    }

    /// The run of ordinary characters read eight bytes at a time ends where a test of
    /// one byte at a time ends it, wherever it starts and however long it is.
    #[test]
    fn ordinary_runs_end_as_byte_by_byte() {
        let text = "abcdefgh ijklmnopqrstuvwxyz0123456789.x y-z, naïve\tend";
        let bytes = text.as_bytes();
        for at in 0..=bytes.len() {
            let mut expected = at;
            while let Some(&b) = bytes.get(expected)
                && b.is_ascii()
                && ascii_class(b) == Class::Other
            {
                expected += 1;
            }
            assert_eq!(ordinary_run_end(bytes, at), expected, "{at}");
        }
    }
}
