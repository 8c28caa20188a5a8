//! Readers of the dumps a catalog is built from, each a stream.

pub mod cirrus;
pub mod lead;
pub mod meta;
pub mod pageviews;
pub mod site;
pub mod tables;
