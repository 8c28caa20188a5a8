//! wikitextparser 0.51.1's wikilink search as it was before it read the lexer: a copy of
//! its shadow, block jumps in a table of one entry per byte, candidates found by their own
//! scans.

mod failures;
mod live;
mod parse;
mod shadow;

use std::sync::atomic::AtomicBool;

use crate::error::TextError;
pub(super) use crate::wikitext::LinkRanges;
use crate::wikitext::ParseLimits;
pub(super) use crate::wikitext::wikitextparser::{
    BARE_URL_SCHEMES, PARSABLE_TAGS, UNPARSABLE_TAGS,
};
use parse::{Parser, Work};

/// The wikilinks of `text` as byte ranges, in document order, with the work done; `Err`
/// past the limits.
pub fn wikilink_ranges(
    text: &str,
    limits: &ParseLimits,
    cancel: Option<&AtomicBool>,
) -> Result<(Vec<LinkRanges>, u64), TextError> {
    let mut parser = Parser::new(text, Work::new(limits, cancel));
    if u32::try_from(text.len()).is_err() {
        return Err(TextError::ParseLimitExceeded);
    }
    parser.run();
    if parser.work.exhausted {
        return Err(TextError::ParseLimitExceeded);
    }
    Ok((std::mem::take(&mut parser.found), parser.work.done))
}
