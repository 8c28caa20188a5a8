//! `Tokenizer.sentence_tokenize(line, use_abbreviation=True)` of mwtokenizer.
//!
//! Upstream splits with the `regex` module pattern
//! `((?<=[T])\s+|(?<=[Z])\s*)`, keeps the separators, glues blank pieces onto
//! the preceding sentence and then re-joins sentences ending in an
//! abbreviation.  Because every step only concatenates neighbouring pieces,
//! each sentence is a contiguous slice of the line; we compute those slices
//! directly from piece boundaries, in the caller's buffer.
//!
//! A split can only follow a terminator, so the scan jumps from one terminator to the
//! next: in ASCII text with a byte search for `.`, `!` and `?`, elsewhere byte by byte,
//! decoding only the characters that are not ASCII.

use super::abbreviations::Abbreviations;
use super::symbols::{is_no_space_terminator, is_sentence_terminator};
use crate::pyunicode::{is_regex_module_space, last_word, strip};

/// The next sentence terminator of `line` at or after byte `from`: its byte offset and the
/// terminator.
#[inline]
fn next_terminator(line: &str, from: usize, ascii: bool) -> Option<(usize, char)> {
    let bytes = line.as_bytes();
    if ascii {
        let at = from + memchr::memchr3(b'.', b'!', b'?', bytes.get(from..)?)?;
        return Some((at, char::from(*bytes.get(at)?)));
    }
    let mut at = from;
    while let Some(&b) = bytes.get(at) {
        if b.is_ascii() {
            if matches!(b, b'.' | b'!' | b'?') {
                return Some((at, char::from(b)));
            }
            at += 1;
        } else {
            let c = line.get(at..)?.chars().next()?;
            if is_sentence_terminator(c) {
                return Some((at, c));
            }
            at += c.len_utf8();
        }
    }
    None
}

/// Appends the byte ranges of the pieces produced by the regex split to `pieces`,
/// separators included, in order (text, separator, text, …, text).
fn split_pieces(line: &str, pieces: &mut Vec<(usize, usize)>) {
    let ascii = line.is_ascii();
    let mut piece_start = 0;
    let mut from = 0;
    while let Some((at, terminator)) = next_terminator(line, from, ascii) {
        let after = at + terminator.len_utf8();
        let Some(next) = line.get(after..).and_then(|rest| rest.chars().next()) else {
            // A zero-width match is also possible at the very end of the line.
            if is_no_space_terminator(terminator) && piece_start < line.len() {
                pieces.push((piece_start, line.len()));
                pieces.push((line.len(), line.len()));
                piece_start = line.len();
            }
            break;
        };
        if is_regex_module_space(next) {
            // Greedy `\s+`: the whole whitespace run is the separator.
            let run = line.get(after..).unwrap_or_default();
            let end = run
                .char_indices()
                .find(|&(_, c)| !is_regex_module_space(c))
                .map_or(line.len(), |(i, _)| after + i);
            pieces.push((piece_start, after));
            pieces.push((after, end));
            piece_start = end;
            from = end;
            continue;
        }
        if is_no_space_terminator(terminator) {
            // Zero-width split right after `。` / `༎`.
            pieces.push((piece_start, after));
            pieces.push((after, after));
            piece_start = after;
        }
        from = after;
    }
    pieces.push((piece_start, line.len()));
}

/// Appends the sentences of `line` to `out` as byte ranges, shifted by `offset` (where the
/// line starts in the caller's text).
pub(super) fn sentence_ranges(
    line: &str,
    abbreviations: &Abbreviations,
    offset: usize,
    out: &mut Vec<(usize, usize)>,
) {
    let base = out.len();
    split_pieces(line, out);
    let text = |(a, b): (usize, usize)| line.get(a..b).unwrap_or_default();
    // `capture_trailing_space`: blank pieces join the current sentence. Sentences are
    // built in place, over the pieces they are made of.
    let mut sentences = base;
    for i in base..out.len() {
        let Some(&piece) = out.get(i) else { break };
        if sentences > base && strip(text(piece)).is_empty() {
            if let Some(current) = out.get_mut(sentences - 1) {
                current.1 = piece.1;
            }
        } else {
            if let Some(slot) = out.get_mut(sentences) {
                *slot = piece;
            }
            sentences += 1;
        }
    }
    out.truncate(sentences);
    // `incorporate_abbreviations`, in place again.
    if sentences - base > 1 {
        let mut merged = base;
        let mut idx = base;
        while let Some(&(start, mut end)) = out.get(idx) {
            let mut last = last_word(text((start, end)));
            while let (Some(word), Some(&next)) = (last, out.get(idx + 1)) {
                if !abbreviations.is_abbreviation(word) {
                    break;
                }
                idx += 1;
                end = next.1;
                if !strip(text(next)).is_empty() {
                    last = last_word(text((start, end)));
                }
            }
            if let Some(slot) = out.get_mut(merged) {
                *slot = (start, end);
            }
            merged += 1;
            idx += 1;
        }
        out.truncate(merged);
    }
    for range in out.get_mut(base..).unwrap_or_default() {
        range.0 += offset;
        range.1 += offset;
    }
}

/// The sentences of `line`, each a contiguous slice of it keeping its trailing whitespace.
pub(super) fn split_sentences<'a>(line: &'a str, abbreviations: &Abbreviations) -> Vec<&'a str> {
    let mut ranges = Vec::new();
    sentence_ranges(line, abbreviations, 0, &mut ranges);
    ranges
        .into_iter()
        .map(|(a, b)| line.get(a..b).unwrap_or_default())
        .collect()
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
