//! wikitextparser 0.51.1's wikilink search as it was before it read the lexer: the same
//! search, its candidates found by its own scans of the page rather than among the lexer's
//! markers, and its block jumps in a table of its own, zeroed for the page.

use std::sync::atomic::AtomicBool;

use crate::error::TextError;
use crate::wikitext::wikitextparser::parse::{Candidates, Parser, Work};
use crate::wikitext::wikitextparser::shadow::Shadow;
use crate::wikitext::{LinkRanges, ParseLimits};

/// The candidates of `text` by two scans: one for brackets and braces, one for angle
/// brackets.
fn scanned_candidates(text: &str) -> Candidates {
    let b = text.as_bytes();
    let mut candidates = Candidates::default();
    for i in memchr::memchr3_iter(b']', b'}', b'{', b) {
        candidates.file(b, i);
    }
    for i in memchr::memchr2_iter(b'<', b'>', b) {
        candidates.file(b, i);
    }
    candidates
}

/// The wikilinks of `text` as byte ranges, in document order, with the work done; `Err`
/// past the limits.
pub fn wikilink_ranges(
    text: &str,
    limits: &ParseLimits,
    cancel: Option<&AtomicBool>,
) -> Result<(Vec<LinkRanges>, u64), TextError> {
    if u32::try_from(text.len()).is_err() {
        return Err(TextError::ParseLimitExceeded);
    }
    let mut parser = Parser::with_candidates(
        Shadow::fresh(text),
        scanned_candidates(text),
        Work::new(limits, cancel),
    );
    parser.run();
    if parser.work.exhausted {
        return Err(TextError::ParseLimitExceeded);
    }
    Ok((std::mem::take(&mut parser.found), parser.work.done))
}
