//! Wikitext as the production engine sees it.
//!
//! * [`Wikitext::parse`] reproduces mwparserfromhell 0.7.2's top-level node
//!   partition (text nodes, headings and everything else as opaque nodes).
//! * [`wikilinks`] reproduces the wikilink set that wikitextparser 0.51.1
//!   reports at every depth.

mod contexts;
#[rustfmt::skip] // generated
mod entities;
mod links;
mod partition;
mod tag_data;
mod tokenizer;

pub use links::{
    LinkRanges, WikiLink, wikilink_ranges_bounded, wikilinks, wikilinks_in, wikilinks_measured,
};
pub use partition::{Node, NodeKind, ParseLimits, Wikitext};
