//! The dump's header: `<siteinfo>`, with the wiki's database name and namespace names.

use std::collections::HashMap;

use quick_xml::Reader;
use quick_xml::events::Event;

use crate::page::{attribute, push_entity};

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

/// What the header says about the wiki.
#[derive(Debug, Clone, Default)]
pub struct SiteInfo {
    /// `<dbname>` (e.g. `enwiki`), when the dump has one.
    pub dbname: Option<String>,
    /// The namespace names.
    pub namespaces: Namespaces,
}

impl SiteInfo {
    /// Reads the header: the bytes before the first `<page>` (an unfinished document).
    pub(crate) fn parse(header: &[u8]) -> Result<Self, String> {
        let mut reader = Reader::from_reader(header);
        reader.config_mut().trim_text(false);
        let mut site = Self::default();
        let mut namespace: Option<i64> = None;
        let mut in_dbname = false;
        let mut text = String::new();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let event = reader
                .read_event_into(&mut buf)
                .map_err(|e| format!("{e} (at byte {})", reader.buffer_position()))?;
            match event {
                Event::Start(e) if e.local_name().as_ref() == b"namespace" => {
                    namespace = Some(
                        attribute(&e, b"key")
                            .and_then(|k| k.parse().ok())
                            .unwrap_or(0),
                    );
                    text.clear();
                }
                Event::Start(e) if e.local_name().as_ref() == b"dbname" => {
                    in_dbname = true;
                    text.clear();
                }
                Event::End(e) if e.local_name().as_ref() == b"namespace" => {
                    if let Some(key) = namespace.take() {
                        site.namespaces.insert(&text, key);
                    }
                }
                Event::End(e) if e.local_name().as_ref() == b"dbname" => {
                    in_dbname = false;
                    site.dbname = Some(text.trim().to_owned());
                }
                Event::Text(t) if namespace.is_some() || in_dbname => {
                    text.push_str(&t.xml_content().map_err(|e| e.to_string())?);
                }
                Event::GeneralRef(r) if namespace.is_some() || in_dbname => {
                    push_entity(&mut text, &r)?;
                }
                Event::Eof => return Ok(site),
                _ => {}
            }
        }
    }
}
