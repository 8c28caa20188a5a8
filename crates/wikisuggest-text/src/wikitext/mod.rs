//! Wikitext as the production engine sees it.
//!
//! * [`Wikitext::parse`] reproduces mwparserfromhell 0.7.2's top-level node
//!   partition (text nodes, headings and everything else as opaque nodes).
//! * [`wikilinks`] reproduces the wikilink set that wikitextparser 0.51.1
//!   reports at every depth.

mod contexts;
#[rustfmt::skip] // generated
mod entities;
/// The one pass over a page's bytes that both ports read.
mod lexer;
/// mwparserfromhell 0.7.2's C tokenizer, down to the top-level node spans, over the lexed
/// page.
mod mwparserfromhell;
#[cfg(test)]
#[path = "mwparserfromhell/tests.rs"]
mod mwparserfromhell_tests;
/// The page as the tokenizer reads it: bytes, with the lexer's markers.
type TokenizerPage<'a> = &'a lexer::Lexed<'a>;
/// The kinds of top-level nodes.
mod node_kind;
/// The ports as they were before the lexer, kept as test oracles.
#[cfg(any(test, feature = "oracle"))]
#[doc(hidden)]
pub mod oracle;
mod partition;
/// The partition as placing links back into a page needs it.
mod plain_text;
mod tag_data;
/// What the tokenizer reads a page through.
mod tokenizer_page;
/// wikitextparser 0.51.1's wikilink search over its masked shadow.
pub(crate) mod wikitextparser;

pub(crate) use lexer::Lexed;
pub use node_kind::NodeKind;
pub(crate) use partition::NodeStream;
pub use partition::{Node, ParseLimits, Wikitext};
pub use plain_text::{PlainText, READS_PER_CODE_POINT, link_targets};
pub(crate) use wikitextparser::wikilink_ranges_in;
pub use wikitextparser::{
    LinkRanges, WikiLink, wikilink_ranges_bounded, wikilink_ranges_of, wikilinks,
    wikilinks_measured,
};
