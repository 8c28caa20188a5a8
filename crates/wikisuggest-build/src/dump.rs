//! Streaming reader for MediaWiki XML export dumps (`pages-articles.xml[.bz2]`).
//!
//! Pages are yielded one at a time, so memory stays proportional to the largest page,
//! never to the dump. Only the fields the builder needs are kept: namespace, page id,
//! title, redirect target and the text of the (last) revision. The namespace names come
//! from `<siteinfo>`, which precedes the pages.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, sync_channel};

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::error::{BuildError, Result};

/// One `<page>` of the dump.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// Namespace number (`0` = articles).
    pub ns: i64,
    /// Page id.
    pub id: i64,
    /// Id of the (last) revision, when the dump has one.
    pub revision_id: Option<i64>,
    /// Title as the dump writes it (spaces, namespace prefix included).
    pub title: String,
    /// Target of `<redirect title="…"/>`, for redirect pages.
    pub redirect: Option<String>,
    /// Wikitext of the page's last revision.
    pub text: String,
}

/// Namespace names of the wiki, from `<siteinfo><namespaces>`.
#[derive(Debug, Clone, Default)]
pub struct Namespaces {
    by_name: HashMap<String, i64>,
}

impl Namespaces {
    /// The namespace number of a prefix (`Category`, `file` …), compared case-insensitively
    /// as MediaWiki does for namespace names, with `_` equal to a space.
    pub fn lookup(&self, prefix: &str) -> Option<i64> {
        self.by_name.get(&namespace_key(prefix)).copied()
    }

    /// Adds a namespace name (used for siteinfo entries and tests).
    pub fn insert(&mut self, name: &str, number: i64) {
        if !name.is_empty() {
            self.by_name.insert(namespace_key(name), number);
        }
    }
}

fn namespace_key(name: &str) -> String {
    name.trim().replace('_', " ").to_lowercase()
}

/// Opens a dump, decompressing `.bz2` and `.gz` by name. Every stream or member is read:
/// Wikimedia writes multi-stream bzip2, and `cat`, pigz or bgzip multi-member gzip.
/// Decompression runs on a thread of its own ([`Prefetch`]), so that decoding and parsing
/// use two cores.
pub fn open_dump(path: &Path) -> Result<DumpReader<Box<dyn BufRead>>> {
    let file = File::open(path).map_err(|e| BuildError::io(path, e))?;
    let raw: Box<dyn Read> = if path.extension().is_some_and(|e| e == "bz2") {
        let decoder = bzip2::read::MultiBzDecoder::new(BufReader::new(file));
        Box::new(Prefetch::spawn(decoder))
    } else if path.extension().is_some_and(|e| e == "gz") {
        let decoder = flate2::read::MultiGzDecoder::new(BufReader::new(file));
        Box::new(Prefetch::spawn(decoder))
    } else {
        Box::new(file)
    };
    DumpReader::new(Box::new(BufReader::with_capacity(1 << 16, raw)), path)
}

/// A reader whose source is read ahead on its own thread, a few chunks at a time.
///
/// bzip2 decodes at roughly the speed the builder parses, and both are single-threaded, so
/// the two overlap on two cores. Memory is bounded: at most [`Prefetch::QUEUE`] chunks of
/// [`Prefetch::CHUNK`] bytes wait. The thread stops at the end of the source, at its first
/// error (handed to the reader in order), or when the reader is dropped.
pub struct Prefetch {
    chunks: Receiver<std::io::Result<Vec<u8>>>,
    current: Vec<u8>,
    at: usize,
}

impl Prefetch {
    /// Bytes per chunk.
    pub const CHUNK: usize = 1 << 20;
    /// Chunks decoded ahead of the reader.
    pub const QUEUE: usize = 4;

    /// Starts reading `source` ahead.
    pub fn spawn<R: Read + Send + 'static>(mut source: R) -> Self {
        let (send, chunks) = sync_channel(Self::QUEUE);
        std::thread::spawn(move || {
            loop {
                let mut chunk = vec![0u8; Self::CHUNK];
                let chunk = match fill(&mut source, &mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        chunk.truncate(n);
                        Ok(chunk)
                    }
                    Err(e) => Err(e),
                };
                let failed = chunk.is_err();
                // An error here means the reader is gone: nobody wants the rest.
                if send.send(chunk).is_err() || failed {
                    break;
                }
            }
        });
        Self {
            chunks,
            current: Vec::new(),
            at: 0,
        }
    }
}

/// Reads until `buf` is full or the source ends; returns the bytes read.
fn fill(source: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl Read for Prefetch {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.current.len() {
            match self.chunks.recv() {
                Ok(chunk) => {
                    self.current = chunk?;
                    self.at = 0;
                }
                // The thread has finished: the source has ended.
                Err(_) => return Ok(0),
            }
        }
        let rest = &self.current[self.at..];
        let n = rest.len().min(out.len());
        out[..n].copy_from_slice(&rest[..n]);
        self.at += n;
        Ok(n)
    }
}

/// Iterates over the pages of a dump.
pub struct DumpReader<R: BufRead> {
    reader: Reader<R>,
    path: PathBuf,
    namespaces: Namespaces,
    /// A `<page>` start seen while reading `<siteinfo>`'s end.
    pending_page: bool,
}

/// The element whose text is being collected.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    None,
    Ns,
    Id,
    RevisionId,
    Title,
    Text,
    NamespaceName(i64),
}

impl<R: BufRead> DumpReader<R> {
    /// Reads up to the first page (the `<siteinfo>` header).
    pub fn new(source: R, path: &Path) -> Result<Self> {
        let mut reader = Reader::from_reader(source);
        reader.config_mut().trim_text(false);
        let mut this = Self {
            reader,
            path: path.to_owned(),
            namespaces: Namespaces::default(),
            pending_page: false,
        };
        this.read_siteinfo()?;
        Ok(this)
    }

    /// The wiki's namespaces.
    pub fn namespaces(&self) -> &Namespaces {
        &self.namespaces
    }

    fn error(&self, reason: impl Into<String>) -> BuildError {
        BuildError::Dump {
            path: self.path.clone(),
            reason: format!(
                "{} (near byte {})",
                reason.into(),
                self.reader.buffer_position()
            ),
        }
    }

    fn read_siteinfo(&mut self) -> Result<()> {
        let mut field = Field::None;
        let mut text = String::new();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let event = self
                .reader
                .read_event_into(&mut buf)
                .map_err(|e| BuildError::Dump {
                    path: self.path.clone(),
                    reason: e.to_string(),
                })?;
            match event {
                Event::Start(e) if e.local_name().as_ref() == b"page" => {
                    self.pending_page = true;
                    return Ok(());
                }
                Event::Start(e) if e.local_name().as_ref() == b"namespace" => {
                    let key = attribute(&e, b"key")
                        .and_then(|k| k.parse().ok())
                        .unwrap_or(0);
                    field = Field::NamespaceName(key);
                    text.clear();
                }
                Event::End(e) if e.local_name().as_ref() == b"namespace" => {
                    if let Field::NamespaceName(key) = field {
                        self.namespaces.insert(&text, key);
                    }
                    field = Field::None;
                }
                Event::Text(t) if field != Field::None => {
                    text.push_str(&t.xml_content().map_err(|e| self.error(e.to_string()))?);
                }
                Event::GeneralRef(r) if field != Field::None => {
                    push_entity(&mut text, &r).map_err(|e| self.error(e))?;
                }
                Event::Eof => return Ok(()),
                _ => {}
            }
        }
    }

    /// The next page, or `None` at the end of the dump.
    pub fn next_page(&mut self) -> Result<Option<Page>> {
        if !self.pending_page && !self.skip_to_page()? {
            return Ok(None);
        }
        self.pending_page = false;
        let mut page = Page::default();
        let mut field = Field::None;
        let mut text = String::new();
        // Ids inside <revision> and <contributor> are not the page id.
        let mut depth_below_page = 0usize;
        let mut buf = Vec::with_capacity(1 << 16);
        loop {
            buf.clear();
            let event = self
                .reader
                .read_event_into(&mut buf)
                .map_err(|e| BuildError::Dump {
                    path: self.path.clone(),
                    reason: e.to_string(),
                })?;
            match event {
                Event::Start(e) => {
                    let name = e.local_name();
                    field = match (name.as_ref(), depth_below_page) {
                        (b"ns", 0) => Field::Ns,
                        (b"id", 0) => Field::Id,
                        // Depth 1 is <revision> (a contributor's id sits one level deeper).
                        (b"id", 1) => Field::RevisionId,
                        (b"title", 0) => Field::Title,
                        (b"text", _) => Field::Text,
                        _ => Field::None,
                    };
                    if name.as_ref() == b"redirect" {
                        page.redirect = attribute(&e, b"title");
                    }
                    if matches!(name.as_ref(), b"revision" | b"contributor" | b"upload") {
                        depth_below_page += 1;
                    }
                    text.clear();
                }
                Event::Empty(e) if e.local_name().as_ref() == b"redirect" => {
                    page.redirect = attribute(&e, b"title");
                }
                Event::Text(t) if field != Field::None => {
                    text.push_str(&t.xml_content().map_err(|e| self.error(e.to_string()))?);
                }
                Event::CData(t) if field != Field::None => {
                    text.push_str(&String::from_utf8_lossy(&t));
                }
                Event::GeneralRef(r) if field != Field::None => {
                    push_entity(&mut text, &r).map_err(|e| self.error(e))?;
                }
                Event::End(e) => {
                    let name = e.local_name();
                    match field {
                        Field::Ns => {
                            page.ns = text.trim().parse().map_err(|_| self.error("bad <ns>"))?;
                        }
                        Field::Id => {
                            page.id = text.trim().parse().map_err(|_| self.error("bad <id>"))?;
                        }
                        Field::RevisionId => {
                            let id = text.trim().parse().map_err(|_| self.error("bad <id>"))?;
                            page.revision_id = Some(id);
                        }
                        Field::Title => page.title = std::mem::take(&mut text),
                        // Dumps with several revisions per page: the last one wins.
                        Field::Text => page.text = std::mem::take(&mut text),
                        _ => {}
                    }
                    field = Field::None;
                    match name.as_ref() {
                        b"revision" | b"contributor" | b"upload" => {
                            depth_below_page = depth_below_page.saturating_sub(1);
                        }
                        b"page" => return Ok(Some(page)),
                        _ => {}
                    }
                }
                Event::Eof => return Err(self.error("dump ends inside a <page>")),
                _ => {}
            }
        }
    }

    fn skip_to_page(&mut self) -> Result<bool> {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let event = self
                .reader
                .read_event_into(&mut buf)
                .map_err(|e| BuildError::Dump {
                    path: self.path.clone(),
                    reason: e.to_string(),
                })?;
            match event {
                Event::Start(e) if e.local_name().as_ref() == b"page" => return Ok(true),
                Event::Eof => return Ok(false),
                _ => {}
            }
        }
    }
}

fn attribute(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.try_get_attribute(name)
        .ok()
        .flatten()
        .and_then(|a| a.unescape_value().ok())
        .map(|v| v.into_owned())
}

/// Appends the character an entity reference stands for (XML's five and numeric ones:
/// export dumps use no others).
fn push_entity(out: &mut String, r: &quick_xml::events::BytesRef<'_>) -> Result<(), String> {
    if let Some(c) = r.resolve_char_ref().map_err(|e| e.to_string())? {
        out.push(c);
        return Ok(());
    }
    let name = r.decode().map_err(|e| e.to_string())?;
    let c = match name.as_ref() {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        other => return Err(format!("unknown entity &{other};")),
    };
    out.push(c);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = r#"<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="6" case="first-letter">File</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
  <page>
    <title>Fish &amp; Chips</title>
    <ns>0</ns>
    <id>12</id>
    <revision>
      <id>999</id>
      <contributor><username>X</username><id>77</id></contributor>
      <text xml:space="preserve">A [[dish]] &lt;b&gt; &#233;</text>
    </revision>
  </page>
  <page>
    <title>Chips</title>
    <ns>0</ns>
    <id>13</id>
    <redirect title="Fish &amp; Chips" />
    <revision><id>1000</id><text xml:space="preserve" /></revision>
  </page>
</mediawiki>"#;

    #[test]
    fn reads_pages_namespaces_and_redirects() -> Result<()> {
        let mut r = DumpReader::new(DUMP.as_bytes(), Path::new("test.xml"))?;
        assert_eq!(r.namespaces().lookup("category"), Some(14));
        assert_eq!(r.namespaces().lookup("File"), Some(6));
        assert_eq!(r.namespaces().lookup("Talk"), None);
        let first = r.next_page()?;
        assert_eq!(
            first,
            Some(Page {
                ns: 0,
                id: 12,
                revision_id: Some(999),
                title: "Fish & Chips".into(),
                redirect: None,
                text: "A [[dish]] <b> é".into(),
            })
        );
        let second = r
            .next_page()?
            .ok_or_else(|| BuildError::InvalidArgument("no page".into()))?;
        assert_eq!(second.id, 13);
        assert_eq!(second.revision_id, Some(1000));
        assert_eq!(second.redirect.as_deref(), Some("Fish & Chips"));
        assert_eq!(second.text, "");
        assert_eq!(r.next_page()?, None);
        Ok(())
    }

    #[test]
    fn reads_multistream_bz2_by_extension() -> Result<()> {
        use std::io::Write;
        // Wikimedia's multistream dumps are concatenated bzip2 streams.
        let (head, tail) = DUMP.split_at(DUMP.find("<page>").unwrap_or(0));
        let mut bytes = Vec::new();
        for part in [head, tail] {
            let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            enc.write_all(part.as_bytes())
                .map_err(|e| BuildError::io(Path::new("-"), e))?;
            bytes.extend(
                enc.finish()
                    .map_err(|e| BuildError::io(Path::new("-"), e))?,
            );
        }
        let path = std::env::temp_dir().join(format!("ws-dump-{}.xml.bz2", std::process::id()));
        std::fs::write(&path, bytes).map_err(|e| BuildError::io(&path, e))?;
        let mut r = open_dump(&path)?;
        let mut titles = Vec::new();
        while let Some(p) = r.next_page()? {
            titles.push(p.title);
        }
        std::fs::remove_file(&path).map_err(|e| BuildError::io(&path, e))?;
        assert_eq!(titles, ["Fish & Chips", "Chips"]);
        Ok(())
    }

    #[test]
    fn reads_every_member_of_a_multi_member_gzip() -> Result<()> {
        use std::io::Write;
        // What `cat a.gz b.gz`, pigz and bgzip write: one gzip member after another.
        let (head, tail) = DUMP.split_at(DUMP.find("<page>").unwrap_or(0));
        let mut bytes = Vec::new();
        for part in [head, tail] {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(part.as_bytes())
                .map_err(|e| BuildError::io(Path::new("-"), e))?;
            bytes.extend(
                enc.finish()
                    .map_err(|e| BuildError::io(Path::new("-"), e))?,
            );
        }
        let path = std::env::temp_dir().join(format!("ws-dump-{}.xml.gz", std::process::id()));
        std::fs::write(&path, bytes).map_err(|e| BuildError::io(&path, e))?;
        let mut r = open_dump(&path)?;
        let mut titles = Vec::new();
        while let Some(p) = r.next_page()? {
            titles.push(p.title);
        }
        std::fs::remove_file(&path).map_err(|e| BuildError::io(&path, e))?;
        assert_eq!(titles, ["Fish & Chips", "Chips"]);
        Ok(())
    }

    #[test]
    fn prefetch_yields_the_source_in_order() -> std::io::Result<()> {
        // Several chunks and a partial last one, with bytes that tell positions apart.
        let source: Vec<u8> = (0..Prefetch::CHUNK * 5 + 12_345)
            .map(|i| (i % 251) as u8)
            .collect();
        let mut read = Vec::new();
        Prefetch::spawn(std::io::Cursor::new(source.clone())).read_to_end(&mut read)?;
        assert_eq!(read, source);
        Ok(())
    }

    /// Yields `good` bytes, then fails.
    struct FailsAfter {
        good: usize,
    }

    impl Read for FailsAfter {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.good == 0 {
                return Err(std::io::Error::other("bad block"));
            }
            let n = self.good.min(out.len());
            out[..n].fill(b'x');
            self.good -= n;
            Ok(n)
        }
    }

    #[test]
    fn prefetch_hands_on_the_sources_error_after_its_bytes() {
        let good = Prefetch::CHUNK * 2 + 7;
        let mut reader = Prefetch::spawn(FailsAfter { good });
        let mut read = Vec::new();
        let result = reader.read_to_end(&mut read);
        assert_eq!(read.len(), good - good % Prefetch::CHUNK);
        assert!(result.is_err_and(|e| e.to_string() == "bad block"));
    }

    /// An endless source that holds `_alive` while it exists.
    struct Endless {
        _alive: std::sync::Arc<()>,
    }

    impl Read for Endless {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            out.fill(b'a');
            Ok(out.len())
        }
    }

    #[test]
    fn a_reader_dropped_early_stops_the_thread() -> std::io::Result<()> {
        // The source never ends: the thread can only stop (and drop it) because the reader
        // went away.
        let alive = std::sync::Arc::new(());
        let mut reader = Prefetch::spawn(Endless {
            _alive: alive.clone(),
        });
        let mut first = [0u8; 10];
        reader.read_exact(&mut first)?;
        assert_eq!(&first, b"aaaaaaaaaa");
        drop(reader);
        let mut waited = 0;
        while std::sync::Arc::strong_count(&alive) > 1 && waited < 600 {
            std::thread::sleep(std::time::Duration::from_millis(50));
            waited += 1;
        }
        assert_eq!(std::sync::Arc::strong_count(&alive), 1);
        Ok(())
    }

    #[test]
    fn truncated_dump_is_an_error() -> Result<()> {
        let cut = DUMP
            .get(..DUMP.find("</page>").unwrap_or(0))
            .unwrap_or_default();
        let mut r = DumpReader::new(cut.as_bytes(), Path::new("cut.xml"))?;
        assert!(matches!(r.next_page(), Err(BuildError::Dump { .. })));
        Ok(())
    }
}
