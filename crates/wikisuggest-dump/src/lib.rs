//! The one reader of MediaWiki XML export dumps and SQL table dumps ([`sql`]) (`pages-articles.xml`, `.xml.bz2` with
//! multistream, `.xml.gz`), shared by the dataset builder, the reference server's page store
//! and whole-wiki runs.
//!
//! The dump is read as a stream in two layers. A byte scanner cuts the decompressed XML into
//! `<page>…</page>` elements, counting each page's bytes as they arrive; only then is a page
//! parsed as XML. So:
//!
//! * memory is bounded by [`DumpOptions::max_page_bytes`] whatever the dump holds (one 8 GiB
//!   `<text>` is skipped, not buffered), and such a page becomes a [`PageError`] naming the
//!   page and its byte offset;
//! * a page that is not well-formed (bad XML, an invalid UTF-8 byte, a bad id) is that page's
//!   error, and reading goes on at the next `<page>`;
//! * the dump must end with `</mediawiki>`: a dump cut between pages, or at a compressed
//!   stream's boundary, is a [`DumpError::Truncated`], never a silent end.
//!
//! Export dumps write `<page>` and `</page>` literally and escape `<` in text, which is what
//! lets the scanner find pages without parsing (CDATA sections and comments, which dumps do
//! not use, are not looked into).

mod error;
mod multistream;
mod page;
mod prefetch;
mod reader;
mod scanner;
mod siteinfo;
mod source;
pub mod sql;

pub use error::{DumpError, PageError, Result};
pub use multistream::ParallelBz2;
pub use page::{Page, Revision};
pub use prefetch::Prefetch;
pub use reader::{DumpOptions, DumpReader, Item, open};
pub use siteinfo::{Namespaces, SiteInfo};
pub use source::decompressed;
