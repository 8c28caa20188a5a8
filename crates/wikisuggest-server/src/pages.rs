//! The local page store that GET link recommendations read wikitext from, in place of the
//! MediaWiki API: a MediaWiki XML export (`.xml` or `.xml.bz2`, read as a stream), or a
//! directory of `Title.wikitext` files (underscores in file names stand for spaces).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use quick_xml::Reader;
use quick_xml::events::Event;

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
        let file = File::open(path).map_err(|e| Error::input(path, e))?;
        let name = path.to_string_lossy();
        if name.ends_with(".bz2") {
            let decoder = bzip2::read::MultiBzDecoder::new(BufReader::new(file));
            Self::from_xml(BufReader::new(decoder)).map_err(|e| Error::input(path, e))
        } else if name.ends_with(".gz") {
            // Every member: `cat a.gz b.gz`, pigz and bgzip write several.
            let decoder = flate2::read::MultiGzDecoder::new(BufReader::new(file));
            Self::from_xml(BufReader::new(decoder)).map_err(|e| Error::input(path, e))
        } else {
            Self::from_xml(BufReader::new(file)).map_err(|e| Error::input(path, e))
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
    pub fn from_xml<R: BufRead>(input: R) -> std::result::Result<Self, String> {
        let mut reader = Reader::from_reader(input);
        let mut store = Self::default();
        let mut buf = Vec::new();
        let mut path: Vec<Vec<u8>> = Vec::new();
        let mut text = String::new();
        let (mut title, mut pageid) = (String::new(), 0i64);
        let (mut revid, mut wikitext) = (0i64, String::new());
        loop {
            match reader.read_event_into(&mut buf) {
                Ok(Event::Start(e)) => {
                    path.push(e.local_name().as_ref().to_vec());
                    text.clear();
                }
                Ok(Event::Empty(e)) => {
                    // `<text/>` (deleted or empty revision) has no content.
                    if e.local_name().as_ref() == b"text" {
                        wikitext.clear();
                    }
                }
                Ok(Event::Text(e)) => {
                    // Entity references arrive as separate `GeneralRef` events.
                    text.push_str(&e.decode().map_err(|e| e.to_string())?);
                }
                Ok(Event::GeneralRef(e)) => {
                    let name = e.decode().map_err(|e| e.to_string())?;
                    let entity = format!("&{name};");
                    let part = quick_xml::escape::unescape(&entity).map_err(|e| e.to_string())?;
                    text.push_str(&part);
                }
                Ok(Event::CData(e)) => {
                    text.push_str(&String::from_utf8_lossy(&e.into_inner()));
                }
                Ok(Event::End(_)) => {
                    let tag = path.pop().unwrap_or_default();
                    let parent = path.last().map(Vec::as_slice);
                    match (tag.as_slice(), parent) {
                        (b"dbname", _) => store.wiki_id = Some(text.trim().to_owned()),
                        (b"title", Some(b"page")) => title = text.clone(),
                        (b"id", Some(b"page")) => pageid = parse_id(&text)?,
                        (b"id", Some(b"revision")) => revid = parse_id(&text)?,
                        (b"text", Some(b"revision")) => wikitext = std::mem::take(&mut text),
                        (b"revision", _) => store.insert(Revision {
                            pageid,
                            revid,
                            title: title.clone(),
                            wikitext: std::mem::take(&mut wikitext),
                        }),
                        _ => {}
                    }
                    text.clear();
                }
                Ok(Event::Eof) => break,
                Ok(_) => {}
                Err(e) => return Err(format!("at byte {}: {e}", reader.buffer_position())),
            }
            buf.clear();
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

fn parse_id(text: &str) -> std::result::Result<i64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("not an id: {text:?}"))
}

#[cfg(test)]
mod tests {
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
