//! What the tokenizer reads a page through: its characters as units (one per position),
//! and the few questions about them that depend on how positions are counted.
//!
//! The port reads the lexed page (`Lexed`): positions are byte offsets, a unit is a byte
//! (every character that can change the tokenizer's state is ASCII, so a byte of another
//! character never compares equal to what is looked for), and runs that can only be text
//! end at the lexer's next marker. The oracle (`super::oracle`) reads the page's code
//! points one position each.
//!
//! The tokenizer's source (`mwparserfromhell`) is compiled once for each page type: the
//! module that includes it names the type as `TokenizerPage`, so that each build of the
//! tokenizer is as plain (not generic) as if it had been written for its page alone.

use std::ops::{Deref, Range};

use super::lexer::{Lexed, utf8_width};

/// A page as the tokenizer reads it.
pub(crate) trait Source<'a>: Copy {
    /// A stretch of the page as a string.
    type Str: Deref<Target = str> + Default;

    /// One unit per position: the character itself where it is ASCII, otherwise the first
    /// byte of its UTF-8 (at the position where the character starts).
    fn units(self) -> &'a [u8];

    /// How many positions the character whose unit is `unit` spans (1 for a NUL, past the
    /// end).
    fn unit_len(unit: u8) -> usize;

    /// How many positions the character `c` spans.
    fn width(self, c: char) -> usize;

    /// The character at position `at` (NUL past the end).
    fn char_at(self, at: usize) -> char;

    /// The character ending at `at` and where it starts, if there is one.
    fn char_before(self, at: usize) -> Option<(char, usize)>;

    /// The page between two character positions.
    fn slice(self, start: usize, end: usize) -> Self::Str;

    /// The first position at or after `from` whose character may start or end markup
    /// (the length of the page if none).
    fn next_marker(self, from: usize) -> usize;

    /// The number of characters in the positions `range`.
    fn chars_in(self, range: Range<usize>) -> usize;

    /// The first `-->` at or after `from`, before the page's first NUL.
    fn comment_close(self, from: usize) -> Option<usize>;

    /// Whether every character is taken in its own step, as upstream does, without the
    /// shortcuts (runs that can only be text, failing bracketed schemes).
    fn stepwise(self) -> bool;
}

/// A stretch of the lexed page. The tokenizer borrows it as it borrows the oracle's owned
/// strings (`&name`), so that its one source reads the same for both.
#[derive(Clone, Copy, Default)]
pub(crate) struct PageStr<'a>(&'a str);

impl Deref for PageStr<'_> {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        self.0
    }
}

impl<'a> Source<'a> for &'a Lexed<'a> {
    type Str = PageStr<'a>;

    #[inline]
    fn units(self) -> &'a [u8] {
        self.bytes()
    }

    #[inline]
    fn unit_len(unit: u8) -> usize {
        utf8_width(unit)
    }

    #[inline]
    fn width(self, c: char) -> usize {
        c.len_utf8()
    }

    fn char_at(self, at: usize) -> char {
        self.text()
            .get(at..)
            .and_then(|rest| rest.chars().next())
            .unwrap_or('\0')
    }

    fn char_before(self, at: usize) -> Option<(char, usize)> {
        let c = self.text().get(..at)?.chars().next_back()?;
        Some((c, at - c.len_utf8()))
    }

    #[inline]
    fn slice(self, start: usize, end: usize) -> PageStr<'a> {
        PageStr(self.text().get(start..end).unwrap_or_default())
    }

    #[inline]
    fn next_marker(self, from: usize) -> usize {
        Lexed::next_marker(self, from)
    }

    #[inline]
    fn chars_in(self, range: Range<usize>) -> usize {
        Lexed::chars_in(self, range)
    }

    fn comment_close(self, from: usize) -> Option<usize> {
        // The lexed text ends at the page's first NUL.
        self.bytes()
            .get(from..)
            .and_then(|rest| memchr::memmem::find(rest, b"-->"))
            .map(|p| from + p)
    }

    #[inline]
    fn stepwise(self) -> bool {
        false
    }
}
