//! mwtokenizer's `whitespace_word_tokenization` with `use_abbreviation=True`.
//!
//! Tokens are whitespace runs, punctuation runs, and words that may contain
//! inner punctuation (`40.123`, `dog's`).  Trailing punctuation may produce an
//! empty-string token before it (`foo .` gives `foo`, ` `, ``, `.`); the
//! n-gram generator counts those, so they are reproduced exactly.

use super::abbreviations::Abbreviations;
use super::symbols::is_punctuation;
use crate::pyunicode::is_space;

pub(super) fn tokenize_words<'a>(text: &'a str, abbreviations: &Abbreviations) -> Vec<&'a str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let n = chars.len();
    let byte_at = |k: usize| chars.get(k).map_or(text.len(), |&(b, _)| b);
    let slice = |a: usize, b: usize| text.get(byte_at(a)..byte_at(b)).unwrap_or_default();
    let char_at = |k: usize| chars.get(k).map(|&(_, c)| c);
    let space_at = |k: usize| char_at(k).is_some_and(is_space);
    let punct_at = |k: usize| char_at(k).is_some_and(is_punctuation);

    let mut tokens = Vec::new();
    // The pending word is always the char range `word_start..idx`.
    let mut word_start: Option<usize> = None;
    let mut idx = 0;
    while let Some(c) = char_at(idx) {
        if is_space(c) {
            if let Some(ws) = word_start.take() {
                tokens.push(slice(ws, idx));
            }
            let start = idx;
            while space_at(idx + 1) {
                idx += 1;
            }
            tokens.push(slice(start, idx + 1));
        } else if is_punctuation(c) {
            let at_start_or_after_space = idx == 0 || space_at(idx - 1);
            if idx + 1 != n {
                if punct_at(idx + 1) || space_at(idx + 1) {
                    let start = idx;
                    while punct_at(idx + 1) {
                        idx += 1;
                    }
                    if idx + 1 == n || space_at(idx + 1) {
                        let ws = word_start.take().unwrap_or(start);
                        emit_trailing(
                            &mut tokens,
                            abbreviations,
                            slice(ws, start),
                            slice(start, idx + 1),
                            slice(ws, idx + 1),
                        );
                    } else if at_start_or_after_space {
                        word_start = None;
                        tokens.push(slice(start, idx + 1));
                    } else {
                        word_start.get_or_insert(start);
                    }
                } else if at_start_or_after_space {
                    tokens.push(slice(idx, idx + 1));
                } else {
                    word_start.get_or_insert(idx);
                }
            } else {
                let ws = word_start.take().unwrap_or(idx);
                emit_trailing(
                    &mut tokens,
                    abbreviations,
                    slice(ws, idx),
                    slice(idx, idx + 1),
                    slice(ws, idx + 1),
                );
            }
        } else {
            word_start.get_or_insert(idx);
        }
        idx += 1;
    }
    if let Some(ws) = word_start {
        tokens.push(slice(ws, n));
    }
    tokens
}

/// Trailing punctuation: one token if `word + run` is an abbreviation,
/// otherwise `word` (possibly empty) and `run`.
fn emit_trailing<'a>(
    tokens: &mut Vec<&'a str>,
    abbreviations: &Abbreviations,
    word: &'a str,
    run: &'a str,
    joined: &'a str,
) {
    if abbreviations.is_abbreviation(joined) {
        tokens.push(joined);
    } else {
        tokens.push(word);
        tokens.push(run);
    }
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

    #[test]
    fn whitespace_runs() {
        assert_eq!(
            words("a\u{a0}b \n c\u{1c}"),
            ["a", "\u{a0}", "b", " \n ", "c", "\u{1c}"]
        );
        assert_eq!(words(""), Vec::<&str>::new());
        assert_eq!(words("."), ["", "."]);
    }
}
