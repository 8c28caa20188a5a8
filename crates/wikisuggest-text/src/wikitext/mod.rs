//! Wikitext as the production engine sees it.
//!
//! * [`Wikitext::parse`] reproduces mwparserfromhell 0.7.2's top-level node
//!   partition (text nodes, headings and everything else as opaque nodes).
//! * [`wikilinks`] reproduces the wikilink set that wikitextparser 0.51.1
//!   reports at every depth.

mod contexts;
#[rustfmt::skip] // generated
mod entities;
/// mwparserfromhell 0.7.2's C tokenizer, down to the top-level node spans.
mod mwparserfromhell;
mod partition;
mod tag_data;
/// wikitextparser 0.51.1's wikilink search over its masked shadow.
mod wikitextparser;

pub use partition::{Node, NodeKind, ParseLimits, Wikitext};
pub use wikitextparser::{
    LinkRanges, WikiLink, wikilink_ranges_bounded, wikilinks, wikilinks_measured,
};
