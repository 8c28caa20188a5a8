//! mwparserfromhell 0.7.2's tokenizer as it read the page before the lexer: one position
//! per code point, each character looked at where it stands. The tokenizer's protocol
//! (frames, contexts, failed routes) is the port's own; what this keeps is the old way of
//! reading the page under it: its own marker table and scans in place of the lexer's
//! markers, code point positions in place of byte offsets, the comment search that stops
//! at a NUL, and a step-by-step mode that takes every character on its own.

use std::ops::Range;

use crate::wikitext::tokenizer_page::Source;

/// The port's tokenizer, built again over code points (the same files, a second build:
/// each build plain, for its one page type).
#[allow(clippy::duplicate_mod)]
#[path = "../../mwparserfromhell/mod.rs"]
mod tokenizer;
pub(crate) use tokenizer::{Item, Limits, MwparserfromhellTokenizer};

/// The page as this build of the tokenizer reads it.
type TokenizerPage<'a> = CodePoints<'a>;

/// The characters that may start or end markup: `{}[]<>|=&'#*;:/-!`, newline and NUL.
const MARKERS: [bool; 128] = {
    let mut table = [false; 128];
    let markers = b"{}[]<>|=&'#*;:/-!\n\0";
    let mut i = 0;
    while i < markers.len() {
        table[markers[i] as usize] = true;
        i += 1;
    }
    table
};

/// Whether `c` is one of [`MARKERS`].
fn is_marker(c: char) -> bool {
    MARKERS.get(c as usize).copied().unwrap_or(false)
}

/// A character as the tokenizer compares it: itself where ASCII, else its first UTF-8 byte.
fn unit(c: char) -> u8 {
    let mut buf = [0; 4];
    c.encode_utf8(&mut buf);
    buf[0]
}

/// A page's code points and their units, built once per page.
pub(crate) struct CodePointPage {
    chars: Vec<char>,
    units: Vec<u8>,
}

impl CodePointPage {
    pub(crate) fn new(text: &str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let units = chars.iter().map(|&c| unit(c)).collect();
        Self { chars, units }
    }

    /// The page read one code point per position, with the shortcuts (`stepwise` off) or
    /// every character in its own step.
    pub(crate) fn reader(&self, stepwise: bool) -> CodePoints<'_> {
        CodePoints {
            chars: &self.chars,
            units: &self.units,
            stepwise,
        }
    }
}

/// A page read one code point per position.
#[derive(Clone, Copy)]
pub(crate) struct CodePoints<'a> {
    chars: &'a [char],
    units: &'a [u8],
    stepwise: bool,
}

impl<'a> Source<'a> for CodePoints<'a> {
    type Str = String;

    fn units(self) -> &'a [u8] {
        self.units
    }

    fn unit_len(_unit: u8) -> usize {
        1
    }

    fn width(self, _c: char) -> usize {
        1
    }

    fn char_at(self, at: usize) -> char {
        self.chars.get(at).copied().unwrap_or('\0')
    }

    fn char_before(self, at: usize) -> Option<(char, usize)> {
        let before = at.checked_sub(1)?;
        Some((*self.chars.get(before)?, before))
    }

    fn slice(self, start: usize, end: usize) -> String {
        self.chars
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .collect()
    }

    fn next_marker(self, from: usize) -> usize {
        let mut end = from;
        while self.chars.get(end).is_some_and(|&c| !is_marker(c)) {
            end += 1;
        }
        end
    }

    fn chars_in(self, range: Range<usize>) -> usize {
        range.len()
    }

    fn comment_close(self, from: usize) -> Option<usize> {
        // One pass; a NUL reads as the end of the text and so ends the search.
        let text = self.chars;
        let mut i = from;
        loop {
            match text.get(i) {
                None | Some('\0') => return None,
                Some('-') if text.get(i + 1..i + 3) == Some(&['-', '>'][..]) => return Some(i),
                Some(_) => i += 1,
            }
        }
    }

    fn stepwise(self) -> bool {
        self.stepwise
    }
}
