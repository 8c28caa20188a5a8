//! The local page store that GET link recommendations read wikitext from, in place of the
//! MediaWiki API: a MediaWiki XML export (`.xml`, `.xml.bz2`, `.xml.gz`, read as a stream by
//! the project's one dump reader), or a directory of `Title.wikitext` files (underscores in
//! file names stand for spaces).

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use wikisuggest_dump::{DumpError, DumpOptions, DumpReader};

use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    pub pageid: i64,
    pub revid: i64,
    pub title: String,
    pub wikitext: String,
}

#[derive(Debug, Default)]
pub struct PageStore {
    /// The dump's `<dbname>` (e.g. `enwiki`), when known: pages then belong to that wiki only.
    pub wiki_id: Option<String>,
    revisions: Vec<Revision>,
    /// Title → index of its latest revision (highest revision id).
    latest: HashMap<String, usize>,
    by_revid: HashMap<i64, usize>,
}

impl PageStore {
    pub fn open(path: &Path) -> Result<Self> {
        if path.is_dir() {
            return Self::from_dir(path);
        }
        let reader = wikisuggest_dump::open(path, &Self::dump_options())
            .map_err(|e| Error::input(path, reason(e)))?;
        Self::from_reader(reader).map_err(|e| Error::input(path, reason(e)))
    }

    /// Every revision is kept (GET by revision id), each page bounded by the reader's limit.
    fn dump_options() -> DumpOptions {
        DumpOptions {
            all_revisions: true,
            ..DumpOptions::default()
        }
    }

    /// Reads `Title.wikitext` files; page and revision ids are 1.. in file-name order.
    pub fn from_dir(dir: &Path) -> Result<Self> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| Error::input(dir, e))? {
            let path = entry.map_err(|e| Error::input(dir, e))?.path();
            if path.extension().is_some_and(|ext| ext == "wikitext") {
                names.push(path);
            }
        }
        names.sort();
        let mut store = Self::default();
        for (i, path) in names.iter().enumerate() {
            let wikitext = std::fs::read_to_string(path).map_err(|e| Error::input(path, e))?;
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().replace('_', " "));
            let id = i64::try_from(i + 1).unwrap_or(i64::MAX);
            store.insert(Revision {
                pageid: id,
                revid: id,
                title: stem.unwrap_or_default(),
                wikitext,
            });
        }
        Ok(store)
    }

    /// Streams an export: only `<dbname>`, and per page its title, id and revisions are kept.
    pub fn from_xml<R: Read + Send + 'static>(input: R) -> std::result::Result<Self, String> {
        let reader = DumpReader::new(Box::new(input), Path::new("-"), &Self::dump_options())
            .map_err(reason)?;
        Self::from_reader(reader).map_err(reason)
    }

    /// The pages of `reader`; a page that cannot be read (over the size limit, malformed) is
    /// left out with a warning, and the others are served.
    fn from_reader(mut reader: DumpReader) -> std::result::Result<Self, DumpError> {
        let mut store = Self {
            wiki_id: reader.site().dbname.clone(),
            ..Self::default()
        };
        while let Some(item) = reader.next_item()? {
            let page = match item {
                Ok(page) => page,
                Err(error) => {
                    log::warn!("{}: {error}; the page is left out", reader.path().display());
                    continue;
                }
            };
            for earlier in page.earlier_revisions {
                store.insert(Revision {
                    pageid: page.id,
                    revid: earlier.id.unwrap_or_default(),
                    title: page.title.clone(),
                    wikitext: earlier.text,
                });
            }
            store.insert(Revision {
                pageid: page.id,
                revid: page.revision_id.unwrap_or_default(),
                title: page.title,
                wikitext: page.text,
            });
        }
        Ok(store)
    }

    fn insert(&mut self, revision: Revision) {
        let index = self.revisions.len();
        let newer = self
            .latest
            .get(&revision.title)
            .is_none_or(|&i| self.revisions[i].revid <= revision.revid);
        if newer {
            self.latest.insert(revision.title.clone(), index);
        }
        self.by_revid.insert(revision.revid, index);
        self.revisions.push(revision);
    }

    pub fn len(&self) -> usize {
        self.latest.len()
    }

    pub fn is_empty(&self) -> bool {
        self.latest.is_empty()
    }

    /// Latest revision of a page, by its normalised title (spaces, first letter upper case).
    pub fn latest(&self, title: &str) -> Option<&Revision> {
        self.latest.get(title).map(|&i| &self.revisions[i])
    }

    pub fn revision(&self, revid: i64) -> Option<&Revision> {
        self.by_revid.get(&revid).map(|&i| &self.revisions[i])
    }

    /// Whether pages of `wiki_id` may come from this store.
    pub fn serves(&self, wiki_id: &str) -> bool {
        self.wiki_id.as_deref().is_none_or(|own| own == wiki_id)
    }
}

/// The reader's error without the file name, which [`Error::input`] puts first.
fn reason(error: DumpError) -> String {
    match error {
        DumpError::Io { source, .. } => source.to_string(),
        DumpError::Malformed { offset, reason, .. } => {
            format!("malformed dump: {reason} (at byte {offset})")
        }
        DumpError::Page { error, .. } => error.to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::*;

    const DUMP: &str = r#"<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">
  <siteinfo><dbname>enwiki</dbname></siteinfo>
  <page><title>AC/DC</title><ns>0</ns><id>7</id>
    <revision><id>100</id><text bytes="5">Old &amp; gone</text></revision>
    <revision><id>101</id><text bytes="5">'''AC/DC''' is a [[band]] &lt;ref/&gt;</text></revision>
  </page>
  <page><title>Empty</title><ns>0</ns><id>8</id><revision><id>5</id><text /></revision></page>
</mediawiki>"#;

    #[test]
    fn reads_an_export() {
        let store = PageStore::from_xml(DUMP.as_bytes()).unwrap();
        assert_eq!(store.wiki_id.as_deref(), Some("enwiki"));
        assert_eq!(store.len(), 2);
        let latest = store.latest("AC/DC").unwrap();
        assert_eq!((latest.pageid, latest.revid), (7, 101));
        assert_eq!(latest.wikitext, "'''AC/DC''' is a [[band]] <ref/>");
        assert_eq!(store.revision(100).unwrap().wikitext, "Old & gone");
        assert_eq!(store.latest("Empty").unwrap().wikitext, "");
        assert!(store.serves("enwiki") && !store.serves("frwiki"));
    }

    #[test]
    fn reads_bz2_and_directories() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("ws-pages-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("dump.xml.bz2");
        let mut enc =
            bzip2::write::BzEncoder::new(File::create(&path).unwrap(), bzip2::Compression::fast());
        enc.write_all(DUMP.as_bytes()).unwrap();
        enc.finish().unwrap();
        assert_eq!(PageStore::open(&path).unwrap().len(), 2);

        let pages = dir.join("pages");
        std::fs::create_dir_all(&pages).unwrap();
        std::fs::write(pages.join("Cat_food.wikitext"), "Food for [[cat]]s.").unwrap();
        let store = PageStore::open(&pages).unwrap();
        assert_eq!(
            store.latest("Cat food").unwrap().wikitext,
            "Food for [[cat]]s."
        );
        assert!(store.serves("anywiki"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_every_member_of_a_multi_member_gzip() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("ws-pages-gz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("dump.xml.gz");
        // Two members, split inside the XML, as `cat a.gz b.gz` of two halves.
        let (head, tail) = DUMP.split_at(DUMP.len() / 2);
        let mut bytes = Vec::new();
        for part in [head, tail] {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(part.as_bytes()).unwrap();
            bytes.extend(enc.finish().unwrap());
        }
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(PageStore::open(&path).unwrap().len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rejects_broken_xml() {
        assert!(PageStore::from_xml("<page><id>x</id></page>".as_bytes()).is_err());
    }
}
