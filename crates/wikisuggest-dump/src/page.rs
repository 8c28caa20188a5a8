//! One `<page>` element, parsed once the scanner has cut it out of the dump.

use quick_xml::Reader;
use quick_xml::events::{BytesRef, BytesStart, Event};

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
    /// The revisions before the last, in dump order, when the reader keeps every revision
    /// ([`crate::DumpOptions::all_revisions`]); empty otherwise.
    pub earlier_revisions: Vec<Revision>,
    /// Offset of its `<page>` in the decompressed XML.
    pub offset: u64,
}

/// A revision of a page other than the last.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Revision {
    /// Its id, when the dump has one.
    pub id: Option<i64>,
    /// Its wikitext.
    pub text: String,
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
}

/// Parses the bytes of one `<page>…</page>`. On failure, `page` holds the fields read before
/// the error.
pub(crate) fn parse(bytes: &[u8], all_revisions: bool, page: &mut Page) -> Result<(), String> {
    let mut reader = Reader::from_reader(bytes);
    reader.config_mut().trim_text(false);
    let mut field = Field::None;
    let mut text = String::new();
    // Ids inside <revision> and <contributor> are not the page id.
    let mut depth_below_page = 0usize;
    // The last revision's id and text, until a later one replaces them.
    let mut revision: Option<Revision> = None;
    let mut current = Revision::default();
    let mut buf = Vec::new();
    let finish = |page: &mut Page, revision: Option<Revision>| {
        if let Some(last) = revision {
            page.revision_id = last.id;
            page.text = last.text;
        }
    };
    loop {
        buf.clear();
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| format!("{e} (at byte {} of the page)", reader.buffer_position()))?;
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
                    page.redirect = Some(attribute(&e, b"title").unwrap_or_default());
                }
                if name.as_ref() == b"revision" {
                    current = Revision::default();
                }
                if matches!(name.as_ref(), b"revision" | b"contributor" | b"upload") {
                    depth_below_page += 1;
                }
                text.clear();
            }
            Event::Empty(e) => match e.local_name().as_ref() {
                b"redirect" => page.redirect = Some(attribute(&e, b"title").unwrap_or_default()),
                // `<text/>`: a deleted or empty revision.
                b"text" => current.text.clear(),
                _ => {}
            },
            Event::Text(t) if field != Field::None => {
                text.push_str(&t.xml_content().map_err(|e| e.to_string())?);
            }
            Event::CData(t) if field != Field::None => {
                let raw = t.into_inner();
                text.push_str(std::str::from_utf8(&raw).map_err(|e| e.to_string())?);
            }
            Event::GeneralRef(r) if field != Field::None => push_entity(&mut text, &r)?,
            Event::End(e) => {
                let name = e.local_name();
                match field {
                    Field::Ns => page.ns = parse_id(&text, "<ns>")?,
                    Field::Id => page.id = parse_id(&text, "<id>")?,
                    Field::RevisionId => current.id = Some(parse_id(&text, "revision <id>")?),
                    Field::Title => page.title = std::mem::take(&mut text),
                    Field::Text => current.text = std::mem::take(&mut text),
                    Field::None => {}
                }
                field = Field::None;
                match name.as_ref() {
                    b"revision" => {
                        let done = std::mem::take(&mut current);
                        // Dumps with several revisions per page: the last one is the page's.
                        if let Some(earlier) = revision.replace(done)
                            && all_revisions
                        {
                            page.earlier_revisions.push(earlier);
                        }
                        depth_below_page = depth_below_page.saturating_sub(1);
                    }
                    b"contributor" | b"upload" => {
                        depth_below_page = depth_below_page.saturating_sub(1);
                    }
                    b"page" => {
                        finish(page, revision);
                        return Ok(());
                    }
                    _ => {}
                }
            }
            Event::Eof => {
                finish(page, revision);
                return Err("the page ends before its </page>".into());
            }
            _ => {}
        }
    }
}

fn parse_id(text: &str, what: &str) -> Result<i64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("bad {what} {text:?}"))
}

pub(crate) fn attribute(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.try_get_attribute(name)
        .ok()
        .flatten()
        .and_then(|a| a.unescape_value().ok())
        .map(|v| v.into_owned())
}

/// Appends the character an entity reference stands for (XML's five and numeric ones:
/// export dumps use no others).
pub(crate) fn push_entity(out: &mut String, r: &BytesRef<'_>) -> Result<(), String> {
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
