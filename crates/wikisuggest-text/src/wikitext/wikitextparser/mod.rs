//! The wikilinks wikitextparser 0.51.1 reports, at every depth.
//!
//! wikitextparser works on a *shadow* of the page in which constructs already recognised
//! are masked, so that the remaining patterns see plain text:
//!
//! 1. comments become NUL bytes, unparsable extension tags (`<nowiki>`, `<math>`, `<pre>`
//!    …) become `_`; parsable ones (`<ref>` …) are searched recursively, then their
//!    content becomes `_`;
//! 2. innermost wikilinks and `{{{parameters}}}` are found, searched recursively, and
//!    masked (links keep their length but their special characters become control bytes,
//!    so the enclosing link can match);
//! 3. innermost templates are masked with `X`, which may let further links match; repeat
//!    until nothing changes.
//!
//! A link's title and label are then read from its masked interior.
//!
//! Upstream's shadow has one byte per code point (non-ASCII becomes `?`); this one is the
//! page's UTF-8 bytes, which every pattern treats as it treats `?` (none of them names a
//! byte above 0x7F), so positions are byte offsets and labels are slices of the page.
//!
//! Upstream scans the whole range again for every nesting level and rewrites every
//! enclosing construct byte by byte, which makes nested markup (`[[a|[[a|…]]]]`,
//! `{{a|{{…}}}}`) quadratic. This search gives the same links in time and memory linear in
//! such nesting: later rounds only retry what a masked span can have changed, masked spans
//! are stepped over whole (`parse`, `shadow`). Its work is counted
//! ([`wikilinks_measured`]), and [`wikilink_ranges_bounded`] stops at a work limit, a
//! deadline or a cancellation flag.

mod failures;
mod live;
pub(in crate::wikitext) mod parse;
#[cfg(test)]
mod reference;
pub(in crate::wikitext) mod shadow;
#[cfg(test)]
mod tests;

use std::ops::Range;
use std::sync::atomic::AtomicBool;

use super::lexer::Lexed;
use super::{ParseLimits, Wikitext};
use crate::error::TextError;
use parse::{Parser, Work};

/// A wikilink as wikitextparser reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WikiLink {
    /// Code point span of the whole `[[…]]`.
    pub span: Range<usize>,
    /// The target before the first `|`, without any `#fragment`.
    pub title: String,
    /// Everything after the first `|`, or `None` without a `|`.
    pub text: Option<String>,
}

/// A wikilink as byte ranges into the page (see [`WikiLink`]): slices of the page, however
/// much the labels nest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRanges {
    /// The whole `[[…]]`.
    pub span: Range<usize>,
    /// The target before the first `|`, without any `#fragment`.
    pub title: Range<usize>,
    /// Everything after the first `|`, or `None` without a `|`.
    pub text: Option<Range<usize>>,
}

pub(crate) const PARSABLE_TAGS: [&str; 12] = [
    "categorytree",
    "gallery",
    "imagemap",
    "includeonly",
    "indicator",
    "inputbox",
    "noinclude",
    "onlyinclude",
    "poem",
    "ref",
    "references",
    "section",
];
pub(crate) const UNPARSABLE_TAGS: [&str; 20] = [
    "ce",
    "charinsert",
    "chem",
    "graph",
    "hiero",
    "languages",
    "mapframe",
    "maplink",
    "math",
    "nowiki",
    "pagelist",
    "pagequality",
    "pages",
    "pre",
    "score",
    "source",
    "syntaxhighlight",
    "templatedata",
    "templatestyles",
    "timeline",
];
pub(crate) const BARE_URL_SCHEMES: [&str; 27] = [
    "bitcoin:",
    "ftp://",
    "ftps://",
    "geo:",
    "git://",
    "gopher://",
    "http://",
    "https://",
    "irc://",
    "ircs://",
    "magnet:",
    "mailto:",
    "mms://",
    "news:",
    "nntp://",
    "redis://",
    "sftp://",
    "sip:",
    "sips:",
    "sms:",
    "ssh://",
    "svn://",
    "tel:",
    "telnet://",
    "urn:",
    "worldwind://",
    "xmpp:",
];

/// Returns the wikilinks of `text` in document order (by span), with code point spans.
pub fn wikilinks(text: &str) -> Vec<WikiLink> {
    wikilinks_measured(text).0
}

/// [`wikilinks`], also returning the work done: the measure that
/// [`wikilink_ranges_bounded`] bounds with [`ParseLimits::max_reads`].
pub fn wikilinks_measured(text: &str) -> (Vec<WikiLink>, u64) {
    let (found, work) = search(&Lexed::whole(text), &ParseLimits::default(), None);
    (strings(text, found), work.done)
}

/// The wikilinks of `text` as byte ranges, in document order, with the work done (see
/// [`wikilinks_measured`]), giving up when `limits` are exceeded or `cancel` is set.
///
/// # Errors
/// [`TextError::ParseLimitExceeded`] when a limit is hit or the work is cancelled.
pub fn wikilink_ranges_bounded(
    text: &str,
    limits: &ParseLimits,
    cancel: Option<&AtomicBool>,
) -> Result<(Vec<LinkRanges>, u64), TextError> {
    wikilink_ranges_in(&Lexed::whole(text), limits, cancel)
}

/// [`wikilink_ranges_bounded`] of the page `doc` was parsed from, up to its first NUL (where
/// the partition ends), reading the lexing the partition read.
///
/// # Errors
/// As [`wikilink_ranges_bounded`].
pub fn wikilink_ranges_of(
    doc: &Wikitext,
    limits: &ParseLimits,
    cancel: Option<&AtomicBool>,
) -> Result<(Vec<LinkRanges>, u64), TextError> {
    wikilink_ranges_in(&doc.lexed(), limits, cancel)
}

/// [`wikilink_ranges_of`] over a lexed page.
// Out of line: the engine benchmark counts the pass's stages by function (`bench/engine.py`).
#[inline(never)]
pub(crate) fn wikilink_ranges_in(
    lexed: &Lexed<'_>,
    limits: &ParseLimits,
    cancel: Option<&AtomicBool>,
) -> Result<(Vec<LinkRanges>, u64), TextError> {
    let (found, work) = search(lexed, limits, cancel);
    if work.exhausted {
        return Err(TextError::ParseLimitExceeded);
    }
    Ok((found, work.done))
}

fn search<'c>(
    lexed: &Lexed<'_>,
    limits: &ParseLimits,
    cancel: Option<&'c AtomicBool>,
) -> (Vec<LinkRanges>, Work<'c>) {
    let work = Work::new(limits, cancel);
    // Positions are kept as 32 bits: a longer text is over any sensible work limit.
    if u32::try_from(lexed.text().len()).is_err() {
        let mut work = work;
        work.exhausted = true;
        return (Vec::new(), work);
    }
    let mut parser = Parser::new(lexed, work);
    parser.run();
    (std::mem::take(&mut parser.found), parser.work)
}

/// The links with code point spans and their title and label as strings.
fn strings(text: &str, found: Vec<LinkRanges>) -> Vec<WikiLink> {
    // Code point offset of every byte offset the links name, in one pass over the text.
    let mut offsets: Vec<usize> = found
        .iter()
        .flat_map(|l| {
            let text = l.text.clone().unwrap_or(0..0);
            [
                l.span.start,
                l.span.end,
                l.title.start,
                l.title.end,
                text.start,
                text.end,
            ]
        })
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    let mut chars_at = std::collections::HashMap::with_capacity(offsets.len());
    let (mut byte, mut chars) = (0, 0);
    for offset in offsets {
        chars += text.get(byte..offset).map_or(0, |s| s.chars().count());
        byte = offset;
        chars_at.insert(offset, chars);
    }
    let cp = |b: usize| chars_at.get(&b).copied().unwrap_or(0);
    let string = |r: &Range<usize>| text.get(r.clone()).unwrap_or_default().to_owned();
    found
        .into_iter()
        .map(|l| WikiLink {
            title: string(&l.title),
            text: l.text.as_ref().map(string),
            span: cp(l.span.start)..cp(l.span.end),
        })
        .collect()
}
