//! The dump reader of the builder: the project's one reader of XML dumps
//! ([`wikisuggest_dump`]), read strictly — a page that cannot be read fails the build, which
//! must not silently leave pages out of the tables.

use std::path::Path;

pub use wikisuggest_dump::{DumpOptions, DumpReader, Namespaces, Page};

use crate::error::{BuildError, Result};

/// Opens a dump (`.xml`, `.xml.bz2` multistream included, `.xml.gz`) with the default
/// limits; see [`wikisuggest_dump::open`].
pub fn open_dump(path: &Path) -> Result<DumpReader> {
    Ok(wikisuggest_dump::open(path, &DumpOptions::default())?)
}

/// The wiki a dump says it is of: its `<siteinfo>`'s `<dbname>` (e.g. `enwiki`), when it has
/// one. Only the dump's head is read.
pub fn dump_wiki(path: &Path) -> Result<Option<String>> {
    Ok(open_dump(path)?.site().dbname.clone())
}

/// [`open_dump`] of the dump of `wiki_id`: a dump whose `<dbname>` names another wiki is
/// refused (a dataset built from it would carry the wrong wiki's titles under this id).
pub fn open_dump_of(path: &Path, wiki_id: &str) -> Result<DumpReader> {
    let reader = open_dump(path)?;
    if let Some(dbname) = reader.site().dbname.as_deref()
        && !dbname.is_empty()
        && dbname != wiki_id
    {
        return Err(BuildError::InvalidArgument(format!(
            "{} is a dump of {dbname}, not of {wiki_id}: give each wiki its own dump",
            path.display()
        )));
    }
    Ok(reader)
}
