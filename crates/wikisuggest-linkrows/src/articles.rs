//! The one door through which whole-wiki runs read a dump: the pages they keep (of some
//! namespaces, redirects left out), in dump order, each counted by its position among all the
//! dump's pages so a run can resume after the pages an earlier run did. A page that cannot be
//! read is handed over as its error, unless what could be read of it shows it is not kept.

use std::path::Path;

use wikisuggest_dump::{DumpError, DumpOptions, DumpReader, Page, PageError};

/// A dump's page as the engine takes it (its own title, ids and text; the wiki's language).
pub fn engine_page(page: Page) -> wikisuggest_engine::Page {
    wikisuggest_engine::Page {
        wikitext: page.text,
        page_title: page.title,
        pageid: Some(page.id),
        revid: page.revision_id,
        language_code: None,
    }
}

/// Which pages of a dump a run keeps.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Namespaces of the pages kept (`[0]`: articles).
    pub namespaces: Vec<i64>,
    /// Leave redirects out.
    pub skip_redirects: bool,
    /// Dump pages (of any kind) to pass over first: those an earlier run has done.
    pub skip_pages: u64,
}

impl Selection {
    /// The articles: the main namespace without redirects, from the first page.
    pub fn articles() -> Self {
        Self {
            namespaces: vec![0],
            skip_redirects: true,
            skip_pages: 0,
        }
    }

    fn keeps(&self, ns: i64, redirect: bool) -> bool {
        self.namespaces.contains(&ns) && !(self.skip_redirects && redirect)
    }

    /// A page that could not be read is kept unless what could be read of it shows it is
    /// not one of the pages kept.
    fn keeps_error(&self, error: &PageError) -> bool {
        error.ns.is_none_or(|ns| self.keeps(ns, error.redirect))
    }
}

/// The pages of a dump that a [`Selection`] keeps.
pub struct Articles {
    reader: DumpReader,
    selection: Selection,
    position: u64,
}

impl Articles {
    /// Opens `path` (plain, gzip or bzip2 XML, multistream included).
    ///
    /// # Errors
    /// The dump cannot be opened or does not start as a MediaWiki export.
    pub fn open(path: &Path, selection: Selection, dump: &DumpOptions) -> Result<Self, DumpError> {
        Ok(Self {
            reader: wikisuggest_dump::open(path, dump)?,
            selection,
            position: 0,
        })
    }

    /// The next page kept (or the error of one that could not be read), `None` at the end
    /// of the dump.
    ///
    /// # Errors
    /// The dump cannot be read further (the pages before stand).
    pub fn next_article(&mut self) -> Result<Option<Result<Page, PageError>>, DumpError> {
        while let Some(item) = self.reader.next_item()? {
            self.position += 1;
            if self.position <= self.selection.skip_pages {
                continue;
            }
            match item {
                Ok(page) if self.selection.keeps(page.ns, page.redirect.is_some()) => {
                    return Ok(Some(Ok(page)));
                }
                Err(error) if self.selection.keeps_error(&error) => return Ok(Some(Err(error))),
                _ => {}
            }
        }
        Ok(None)
    }

    /// Dump pages (of any kind) read so far, those passed over included: where a run that
    /// stops after the last page handed over resumes.
    pub fn position(&self) -> u64 {
        self.position
    }
}
