//! `Tokenizer.sentence_tokenize(line, use_abbreviation=True)` of mwtokenizer.
//!
//! Upstream splits with the `regex` module pattern
//! `((?<=[T])\s+|(?<=[Z])\s*)`, keeps the separators, glues blank pieces onto
//! the preceding sentence and then re-joins sentences ending in an
//! abbreviation.  Because every step only concatenates neighbouring pieces,
//! each sentence is a contiguous slice of the line; we compute those slices
//! directly from piece boundaries.

use super::abbreviations::Abbreviations;
use super::symbols::{is_no_space_terminator, is_sentence_terminator};
use crate::pyunicode::{is_regex_module_space, last_word, strip};

/// Byte ranges of the pieces produced by the regex split, separators
/// included, in order (text, separator, text, …, text).
fn split_pieces(line: &str) -> Vec<(usize, usize)> {
    let mut pieces = Vec::new();
    let mut piece_start = 0;
    let mut prev: Option<char> = None;
    let mut iter = line.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let Some(p) = prev else {
            prev = Some(c);
            continue;
        };
        if is_sentence_terminator(p) && is_regex_module_space(c) {
            // Greedy `\s+`: the whole whitespace run is the separator.
            let mut end = i + c.len_utf8();
            let mut last = c;
            while let Some(&(j, d)) = iter.peek() {
                if !is_regex_module_space(d) {
                    break;
                }
                end = j + d.len_utf8();
                last = d;
                iter.next();
            }
            pieces.push((piece_start, i));
            pieces.push((i, end));
            piece_start = end;
            prev = Some(last);
            continue;
        }
        if is_no_space_terminator(p) {
            // Zero-width split right after `。` / `༎`.
            pieces.push((piece_start, i));
            pieces.push((i, i));
            piece_start = i;
        }
        prev = Some(c);
    }
    // A zero-width match is also possible at the very end of the line.
    if prev.is_some_and(is_no_space_terminator) && piece_start < line.len() {
        pieces.push((piece_start, line.len()));
        pieces.push((line.len(), line.len()));
        piece_start = line.len();
    }
    pieces.push((piece_start, line.len()));
    pieces
}

pub(super) fn split_sentences<'a>(line: &'a str, abbreviations: &Abbreviations) -> Vec<&'a str> {
    let pieces = split_pieces(line);
    let text = |(a, b): (usize, usize)| line.get(a..b).unwrap_or_default();
    if pieces.len() == 1 {
        return vec![line];
    }
    // `capture_trailing_space`: blank pieces join the current sentence.
    let mut sentences: Vec<(usize, usize)> = Vec::new();
    for &piece in &pieces {
        match sentences.last_mut() {
            Some(current) if strip(text(piece)).is_empty() => current.1 = piece.1,
            _ => sentences.push(piece),
        }
    }
    if sentences.len() == 1 {
        return sentences.into_iter().map(text).collect();
    }
    // `incorporate_abbreviations`.
    let mut merged = Vec::with_capacity(sentences.len());
    let mut idx = 0;
    while let Some(&(start, mut end)) = sentences.get(idx) {
        let mut last = last_word(text((start, end)));
        while let (Some(word), Some(&(_, next_end))) = (last, sentences.get(idx + 1)) {
            if !abbreviations.is_abbreviation(word) {
                break;
            }
            let next = sentences.get(idx + 1).copied().unwrap_or_default();
            idx += 1;
            end = next_end;
            if !strip(text(next)).is_empty() {
                last = last_word(text((start, end)));
            }
        }
        merged.push(text((start, end)));
        idx += 1;
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Vec<&str> {
        split_sentences(line, &Abbreviations::for_language("en"))
    }

    #[test]
    fn keeps_trailing_whitespace() {
        assert_eq!(split("One. Two!  Three"), ["One. ", "Two!  ", "Three"]);
        assert_eq!(split("No terminator"), ["No terminator"]);
        assert_eq!(split("  "), ["  "]);
    }

    #[test]
    fn abbreviations_do_not_split() {
        assert_eq!(
            split("Mr. Smith went. He left."),
            ["Mr. Smith went. ", "He left."]
        );
        assert_eq!(split("In the U.S. it is."), ["In the U.S. it is."]);
        assert_eq!(split("A. B. C. d"), ["A. B. C. d"]);
    }

    #[test]
    fn no_space_terminators() {
        assert_eq!(split("你好。世界。"), ["你好。", "世界。"]);
        assert_eq!(split("a。 b"), ["a。 ", "b"]);
    }

    #[test]
    fn information_separators_are_not_regex_space() {
        // U+001C is `str.isspace` but not `regex` `\s`: no split here…
        assert_eq!(split("end.\u{1c}next"), ["end.\u{1c}next"]);
        // …yet a piece made only of it is blank for `strip()`.
        assert_eq!(split("x. \u{1c}"), ["x. \u{1c}"]);
    }

    #[test]
    fn odd_terminators() {
        assert_eq!(split("x\u{1ef7} y"), ["x\u{1ef7} ", "y"]);
        assert_eq!(split("Really?! Yes"), ["Really?! ", "Yes"]);
    }
}
