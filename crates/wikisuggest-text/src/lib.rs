//! Text half of the local link engine: Python-compatible Unicode helpers, a
//! wikitext partitioner reproducing what the production parsers see, title
//! normalisation, section iteration and mwtokenizer-compatible tokenization.
//!
//! All offsets exposed by this crate are Unicode code point indices, as
//! Python `str` indices are.

pub mod code_points;
pub mod error;
pub mod pipeline;
pub mod pyunicode;
pub mod sections;
pub mod title;
pub mod tokenize;
pub mod wikitext;

pub use error::TextError;
pub use tokenize::MwTokenizer;
