//! A wiki's namespaces (`<wiki>-<date>-siteinfo-namespaces.json.gz` of the dump run) and the
//! part of MediaWiki's `Title::newFromText` that places a title of the top list: its
//! namespace and its stored form.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// One namespace: its number and whether its titles start with a capital letter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Namespace {
    pub id: i32,
    pub first_letter: bool,
}

/// The namespaces of a wiki, by every name they are known by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// Lower-cased names and aliases (spaces, not underscores) → namespace; in name order,
    /// so that a catalog's `catalog.json` is the same for the same namespaces.
    names: BTreeMap<String, i32>,
    /// Namespaces whose titles are case-sensitive in their first letter.
    case_sensitive: Vec<i32>,
}

impl Default for Site {
    /// Wikipedia's usual namespaces in English, for catalogs built without a siteinfo file.
    fn default() -> Self {
        let mut names = BTreeMap::new();
        for (id, name) in [
            (-2, "Media"),
            (-1, "Special"),
            (1, "Talk"),
            (2, "User"),
            (3, "User talk"),
            (4, "Project"),
            (5, "Project talk"),
            (6, "File"),
            (7, "File talk"),
            (8, "MediaWiki"),
            (9, "MediaWiki talk"),
            (10, "Template"),
            (11, "Template talk"),
            (12, "Help"),
            (13, "Help talk"),
            (14, "Category"),
            (15, "Category talk"),
            (100, "Portal"),
            (101, "Portal talk"),
            (828, "Module"),
            (829, "Module talk"),
            (6, "Image"),
            (4, "Wikipedia"),
            (5, "Wikipedia talk"),
        ] {
            names.insert(name.to_lowercase(), id);
        }
        Self {
            names,
            case_sensitive: Vec::new(),
        }
    }
}

/// Where a title of the top list is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    pub namespace: i32,
    /// The stored form (DB key): underscores, without the namespace prefix.
    pub dbkey: String,
    /// As MediaWiki writes it: spaces, with the prefix as given.
    pub text: String,
}

impl Site {
    /// Reads `siteinfo-namespaces.json(.gz)` (the `query` of `meta=siteinfo&siprop=
    /// namespaces|namespacealiases`, in either format version).
    pub fn read(path: &Path) -> Result<Self> {
        let mut text = Vec::new();
        wikisuggest_dump::decompressed(path)
            .and_then(|mut r| r.read_to_end(&mut text))
            .map_err(|e| Error::io(path, e))?;
        Self::parse(&text).map_err(|reason| Error::dump(path, reason))
    }

    /// Parses the JSON of [`Site::read`].
    pub fn parse(json: &[u8]) -> std::result::Result<Self, String> {
        let value: Value = serde_json::from_slice(json).map_err(|e| e.to_string())?;
        let query = value.get("query").unwrap_or(&value);
        let namespaces = query
            .get("namespaces")
            .and_then(Value::as_object)
            .ok_or("no `namespaces` object")?;
        let mut site = Self {
            names: BTreeMap::new(),
            case_sensitive: Vec::new(),
        };
        for ns in namespaces.values() {
            let id = ns
                .get("id")
                .and_then(Value::as_i64)
                .and_then(|n| i32::try_from(n).ok())
                .ok_or("a namespace without an id")?;
            for key in ["name", "*", "canonical"] {
                if let Some(name) = ns.get(key).and_then(Value::as_str)
                    && !name.is_empty()
                {
                    site.names.insert(fold(name), id);
                }
            }
            if ns.get("case").and_then(Value::as_str) == Some("case-sensitive") {
                site.case_sensitive.push(id);
            }
        }
        for alias in query
            .get("namespacealiases")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let id = alias
                .get("id")
                .and_then(Value::as_i64)
                .and_then(|n| i32::try_from(n).ok());
            let name = alias
                .get("alias")
                .or_else(|| alias.get("*"))
                .and_then(Value::as_str);
            if let (Some(id), Some(name)) = (id, name) {
                site.names.insert(fold(name), id);
            }
        }
        Ok(site)
    }

    /// Where MediaWiki puts `raw` (`Title::newFromText`): `None` for a title it refuses.
    /// Interwiki prefixes are not known here: such a title is taken as an article's.
    pub fn place(&self, raw: &str) -> Option<Placed> {
        let mut text = normalise_spaces(&raw.replace('_', " "));
        if let Some(i) = text.find('#') {
            text.truncate(i);
            text = text.trim_end().to_owned();
        }
        let mut namespace = 0;
        let mut rest = text.as_str();
        if let Some(stripped) = rest.strip_prefix(':') {
            rest = stripped.trim_start();
        } else if let Some((prefix, after)) = rest.split_once(':')
            && let Some(&id) = self.names.get(&fold(prefix.trim()))
        {
            namespace = id;
            rest = after.trim_start();
        }
        if rest.is_empty() || !valid(rest) {
            return None;
        }
        let name = if self.case_sensitive.contains(&namespace) {
            rest.to_owned()
        } else {
            upper_first(rest)
        };
        if name.len() > 255 {
            return None;
        }
        let display = if namespace == 0 {
            name.clone()
        } else {
            let prefix = text.split_once(':').map_or("", |(p, _)| p.trim());
            format!("{prefix}:{name}")
        };
        Some(Placed {
            namespace,
            dbkey: name.replace(' ', "_"),
            text: display,
        })
    }
}

fn fold(name: &str) -> String {
    name.replace('_', " ").trim().to_lowercase()
}

/// Runs of whitespace (MediaWiki's title whitespace: spaces and the Unicode spaces) become
/// one space; the ends are trimmed.
fn normalise_spaces(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() || c == '\u{200e}' || c == '\u{200f}' {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// Characters and sequences a title may not hold (MediaWiki's legal title characters).
fn valid(title: &str) -> bool {
    let bytes = title.as_bytes();
    if title.chars().any(|c| {
        matches!(c, '<' | '>' | '[' | ']' | '{' | '}' | '|' | '\u{fffd}') || c.is_control()
    }) {
        return false;
    }
    // Percent escapes are refused (a title is stored decoded), and so are relative paths.
    let escape = bytes
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit());
    let relative = title == "."
        || title == ".."
        || title.starts_with("./")
        || title.starts_with("../")
        || title.contains("/./")
        || title.contains("/../")
        || title.ends_with("/.")
        || title.ends_with("/..");
    // Signatures (`~~~`) are refused too.
    !escape && !relative && !title.contains("~~~")
}

/// The first letter in upper case, when that is one letter (MediaWiki keeps `ß` as it is).
pub(crate) fn upper_first(s: &str) -> String {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return String::new();
    };
    let mut upper = first.to_uppercase();
    let one = match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => first,
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(one);
    out.push_str(chars.as_str());
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const SITEINFO: &str = r#"{"batchcomplete":"","query":{"namespaces":{
        "-1":{"id":-1,"case":"first-letter","name":"Special","canonical":"Special"},
        "0":{"id":0,"case":"first-letter","name":"","content":true},
        "4":{"id":4,"case":"first-letter","name":"Wikipedia","canonical":"Project"},
        "14":{"id":14,"case":"first-letter","name":"Category","canonical":"Category"}},
        "namespacealiases":[{"id":4,"alias":"WP"}]}}"#;

    #[test]
    fn titles_are_placed_as_mediawiki_places_them() {
        let site = Site::parse(SITEINFO.as_bytes()).unwrap();
        let p = site.place("moon_landing").unwrap();
        assert_eq!(
            (p.namespace, p.dbkey.as_str(), p.text.as_str()),
            (0, "Moon_landing", "Moon landing")
        );
        let p = site.place("Special:Search").unwrap();
        assert_eq!((p.namespace, p.dbkey.as_str()), (-1, "Search"));
        assert_eq!(site.place("WP:About").unwrap().namespace, 4);
        assert_eq!(site.place("project:About").unwrap().namespace, 4);
        // Not a namespace: the colon belongs to the title.
        let p = site.place("Star_Wars:_Andor").unwrap();
        assert_eq!((p.namespace, p.dbkey.as_str()), (0, "Star_Wars:_Andor"));
        assert_eq!(site.place("Foo#Section").unwrap().dbkey, "Foo");
        assert_eq!(site.place("  a__b ").unwrap().dbkey, "A_b");
        assert_eq!(site.place("ßtraße").unwrap().dbkey, "ßtraße");
        for bad in ["", "a|b", "x[y]", "%41bc", "../x", "Special:"] {
            assert_eq!(site.place(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_namespaces_are_written_in_name_order() {
        // The same namespaces, read in a different order, describe a catalog identically.
        let reordered = SITEINFO.replace(
            r#""-1":{"id":-1,"case":"first-letter","name":"Special","canonical":"Special"},"#,
            "",
        );
        let reordered = reordered.replace(
            r#""namespaces":{"#,
            r#""namespaces":{"-1":{"id":-1,"case":"first-letter","name":"Special","canonical":"Special"},"#,
        );
        assert_ne!(reordered, SITEINFO);
        let (a, b) = (
            Site::parse(SITEINFO.as_bytes()).unwrap(),
            Site::parse(reordered.as_bytes()).unwrap(),
        );
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, serde_json::to_string(&b).unwrap());
        let names: Vec<String> = serde_json::from_str::<serde_json::Value>(&json).unwrap()["names"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert!(names.len() >= 5, "{names:?}");
        let default = serde_json::to_string(&Site::default()).unwrap();
        assert_eq!(default, serde_json::to_string(&Site::default()).unwrap());
    }
}
