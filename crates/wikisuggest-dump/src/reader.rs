//! Pages of a dump, one at a time: the scanner cuts each `<page>` out (bounded), then it is
//! parsed; the end must be `</mediawiki>`.

use std::io::Read;
use std::path::{Path, PathBuf};

use memchr::memmem::Finder;

use crate::error::{DumpError, PageError, Result};
use crate::page::{self, Page};
use crate::scanner::Scanner;
use crate::siteinfo::{Namespaces, SiteInfo};
use crate::source::decompressed;

/// How a dump is read.
#[derive(Debug, Clone)]
pub struct DumpOptions {
    /// Largest `<page>…</page>` element, in bytes of XML, counted while reading. A larger
    /// page is skipped and becomes a [`PageError`]. MediaWiki refuses wikitext over 2 MiB
    /// (`$wgMaxArticleSize`), which escaping can grow to about 12 MiB of XML at worst.
    pub max_page_bytes: usize,
    /// Keep every revision of a page ([`Page::earlier_revisions`]), not only the last.
    pub all_revisions: bool,
}

impl DumpOptions {
    /// The default [`DumpOptions::max_page_bytes`]: 32 MiB.
    pub const MAX_PAGE_BYTES: usize = 32 << 20;
    /// Largest header (`<siteinfo>` and what precedes the first page).
    pub const MAX_HEADER_BYTES: usize = 16 << 20;
}

impl Default for DumpOptions {
    fn default() -> Self {
        Self {
            max_page_bytes: Self::MAX_PAGE_BYTES,
            all_revisions: false,
        }
    }
}

/// A page, or why it could not be read.
pub type Item = std::result::Result<Page, PageError>;

/// Opens the dump at `path` (see [`decompressed`]) and reads its header.
///
/// # Errors
/// [`DumpError::Io`] when the file cannot be opened or decompressed, and the errors of
/// [`DumpReader::new`].
pub fn open(path: &Path, options: &DumpOptions) -> Result<DumpReader> {
    let source = decompressed(path).map_err(|source| DumpError::Io {
        path: path.to_owned(),
        source,
    })?;
    DumpReader::new(source, path, options)
}

/// Iterates over the pages of a dump.
pub struct DumpReader {
    scanner: Scanner<Box<dyn Read + Send>>,
    path: PathBuf,
    options: DumpOptions,
    site: SiteInfo,
    /// The header ended at a `<page>` (already consumed) that starts here.
    pending_page: Option<u64>,
    /// `</mediawiki>` has been read.
    ended: bool,
    page_start: Finder<'static>,
    page_end: Finder<'static>,
    page_bytes: Vec<u8>,
}

impl DumpReader {
    /// Reads the header of the dump `source` (named `path` in errors).
    ///
    /// # Errors
    /// [`DumpError::Malformed`] for a header that is not XML or over
    /// [`DumpOptions::MAX_HEADER_BYTES`], [`DumpError::Truncated`] for a dump without pages
    /// that does not end, [`DumpError::Io`] when reading fails.
    pub fn new(source: Box<dyn Read + Send>, path: &Path, options: &DumpOptions) -> Result<Self> {
        let mut this = Self {
            scanner: Scanner::new(source),
            path: path.to_owned(),
            options: options.clone(),
            site: SiteInfo::default(),
            pending_page: None,
            ended: false,
            page_start: Finder::new(b"<page>").into_owned(),
            page_end: Finder::new(b"</page>").into_owned(),
            page_bytes: Vec::new(),
        };
        let mut header = Vec::new();
        let mut over = false;
        let found = this
            .scanner
            .pass(&this.page_start, |bytes| {
                if header.len() + bytes.len() > DumpOptions::MAX_HEADER_BYTES {
                    over = true;
                } else {
                    header.extend_from_slice(bytes);
                }
            })
            .map_err(|e| this.io(e))?;
        if over {
            return Err(this.malformed(0, "no <page> in the first 16 MiB"));
        }
        if found {
            header.truncate(header.len() - b"<page>".len());
            this.pending_page = Some(this.scanner.offset() - b"<page>".len() as u64);
        } else if Finder::new(b"</mediawiki>").find(&header).is_some() {
            // A dump without pages.
            this.ended = true;
        } else {
            return Err(this.truncated("before any page"));
        }
        this.site = SiteInfo::parse(&header).map_err(|reason| this.malformed(0, reason))?;
        Ok(this)
    }

    /// The dump's file name, as errors name it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The wiki's database name and namespaces.
    pub fn site(&self) -> &SiteInfo {
        &self.site
    }

    /// The wiki's namespaces.
    pub fn namespaces(&self) -> &Namespaces {
        &self.site.namespaces
    }

    /// Bytes of decompressed XML read so far.
    pub fn offset(&self) -> u64 {
        self.scanner.offset()
    }

    fn io(&self, source: std::io::Error) -> DumpError {
        DumpError::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn malformed(&self, offset: u64, reason: impl Into<String>) -> DumpError {
        DumpError::Malformed {
            path: self.path.clone(),
            offset,
            reason: reason.into(),
        }
    }

    fn truncated(&self, place: impl Into<String>) -> DumpError {
        DumpError::Truncated {
            path: self.path.clone(),
            offset: self.scanner.offset(),
            place: place.into(),
        }
    }

    /// The next page, or the error of a page that could not be read (the reader goes on
    /// after it); `None` after `</mediawiki>`.
    ///
    /// # Errors
    /// [`DumpError::Truncated`] when the dump ends before `</mediawiki>`, [`DumpError::Io`]
    /// when reading or decompressing fails. Reading cannot go on after either.
    pub fn next_item(&mut self) -> Result<Option<Item>> {
        let start = match self.pending_page.take() {
            Some(start) => start,
            None => match self.next_page_start()? {
                Some(start) => start,
                None => return Ok(None),
            },
        };
        let max = self.options.max_page_bytes;
        let mut bytes = std::mem::take(&mut self.page_bytes);
        bytes.clear();
        bytes.extend_from_slice(b"<page>");
        let mut over = false;
        let found = self
            .scanner
            .pass(&self.page_end, |chunk| {
                if over {
                    return;
                }
                if bytes.len() + chunk.len() > max {
                    over = true;
                    // Only the start is kept, for the fields that name the page.
                    let room = LEAD.saturating_sub(bytes.len()).min(chunk.len());
                    bytes.extend_from_slice(&chunk[..room]);
                } else {
                    bytes.extend_from_slice(chunk);
                }
            })
            .map_err(|e| self.io(e))?;
        if !found {
            self.page_bytes = bytes;
            return Err(self.truncated(format!("inside the page that starts at byte {start}")));
        }
        let item = if over {
            Err(failure(
                &bytes,
                start,
                format!("the page is larger than the limit of {max} bytes (max_page_bytes)"),
            ))
        } else {
            let mut page = Page {
                offset: start,
                ..Page::default()
            };
            match page::parse(&bytes, self.options.all_revisions, &mut page) {
                Ok(()) => Ok(page),
                Err(reason) => Err(failure(&bytes, start, reason)),
            }
        };
        self.page_bytes = bytes;
        if self.page_bytes.capacity() > 4 * LEAD {
            // One long page should not hold its buffer for the rest of the dump.
            self.page_bytes = Vec::new();
        }
        Ok(Some(item))
    }

    /// Moves past the next `<page>` and returns its offset; `None` at `</mediawiki>`.
    fn next_page_start(&mut self) -> Result<Option<u64>> {
        if self.ended {
            return Ok(None);
        }
        let lt = Finder::new(b"<");
        loop {
            if !self.scanner.pass(&lt, |_| {}).map_err(|e| self.io(e))? {
                return Err(self.truncated("between pages"));
            }
            let at = self.scanner.offset() - 1;
            let path = &self.path;
            let next = self.scanner.peek(11).map_err(|source| DumpError::Io {
                path: path.clone(),
                source,
            })?;
            if next.starts_with(b"page>") {
                self.scanner.skip(5);
                return Ok(Some(at));
            }
            if next.starts_with(b"/mediawiki>") {
                self.scanner.skip(11);
                self.ended = true;
                return Ok(None);
            }
        }
    }

    /// The next page; a page that cannot be read is an error here too
    /// ([`DumpError::Page`]), for readers that want every page or none.
    ///
    /// # Errors
    /// As [`DumpReader::next_item`], and [`DumpError::Page`].
    pub fn next_page(&mut self) -> Result<Option<Page>> {
        match self.next_item()? {
            None => Ok(None),
            Some(Ok(page)) => Ok(Some(page)),
            Some(Err(error)) => Err(DumpError::Page {
                path: self.path.clone(),
                error: Box::new(error),
            }),
        }
    }
}

/// Bytes of a page kept to name it in an error: its title and ids come first.
const LEAD: usize = 64 << 10;

/// The error of the page in `bytes`, with the fields that can be read from its start (as
/// text with invalid bytes replaced: the error may be one of them).
fn failure(bytes: &[u8], offset: u64, reason: String) -> PageError {
    let lead = String::from_utf8_lossy(&bytes[..bytes.len().min(LEAD)]);
    // Values no field can hold, to tell the fields read from those that were not.
    let mut fields = Page {
        ns: i64::MIN,
        id: i64::MIN,
        ..Page::default()
    };
    // The parse stops at the first problem; what it read before is what is known.
    let _ = page::parse(lead.as_bytes(), false, &mut fields);
    PageError {
        offset,
        ns: (fields.ns != i64::MIN).then_some(fields.ns),
        id: (fields.id != i64::MIN).then_some(fields.id),
        revision_id: fields.revision_id,
        title: (!fields.title.is_empty()).then_some(fields.title),
        redirect: fields.redirect.is_some(),
        reason,
    }
}

#[cfg(test)]
mod tests;
