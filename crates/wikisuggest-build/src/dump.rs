//! The dump reader of the builder: the project's one reader of XML dumps
//! ([`wikisuggest_dump`]), read strictly — a page that cannot be read fails the build, which
//! must not silently leave pages out of the tables.

use std::path::Path;

pub use wikisuggest_dump::{DumpOptions, DumpReader, Namespaces, Page};

use crate::error::Result;

/// Opens a dump (`.xml`, `.xml.bz2` multistream included, `.xml.gz`) with the default
/// limits; see [`wikisuggest_dump::open`].
pub fn open_dump(path: &Path) -> Result<DumpReader> {
    Ok(wikisuggest_dump::open(path, &DumpOptions::default())?)
}
