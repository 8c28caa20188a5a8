//! The rule file: a small TOML or JSON document (`link-rules.schema.json` describes it), read
//! with unknown keys refused so that a misspelt rule is an error rather than a rule that
//! silently does nothing.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The version of the rule file format this crate reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Rule files larger than this are refused: a realistic file (a few thousand titles, a few
/// hundred phrases, an inline class table) is well below it.
const MAX_FILE_BYTES: u64 = 256 << 20;

/// A rule set as written in a file or passed from Python: every field optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// The format version; absent means [`FORMAT_VERSION`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// Link targets never suggested (titles; a redirect names its target).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_targets: Vec<String>,
    /// Phrases never linked, compared whole and case-folded with the link's text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_anchors: Vec<String>,
    /// Phrases never linked, compared whole and exactly (case included).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_anchors_exact: Vec<String>,
    /// Wikidata items (`Q…`, or a preset name) whose instances (P31) are never link targets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_classes: Vec<String>,
    /// The P31 table: a path (TSV, relative to the rule file) or title → items inline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classes: Option<ClassesSpec>,
    /// Section titles never searched (case-folded exact match; `%LEAD%` is the lead).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_sections: Vec<String>,
    /// Pages transcluding one of these templates get no suggestions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_templates: Vec<String>,
    /// Pages in one of these categories get no suggestions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_categories: Vec<String>,
    /// Local names of the template namespace besides `Template` (e.g. `Vorlage`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub template_namespaces: Vec<String>,
    /// Local names of the category namespace besides `Category` (e.g. `Kategorie`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub category_namespaces: Vec<String>,
    /// At most one suggestion per target per section, none for a target linked earlier in it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_duplicate_links: bool,
    /// The lowest score a suggestion may have (raises a lower `threshold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_score: Option<f64>,
    /// The most suggestions per page (lowers a larger `max_recommendations`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_links: Option<u32>,
    /// Of the suggestions found, only this many of the best scored are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_links_shown: Option<u32>,
    /// A page with fewer suggestions than this gets none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_links: Option<u32>,
}

/// Where a rule set's P31 table comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ClassesSpec {
    /// A TSV table on disk (see [`super::classes`]).
    Path(String),
    /// Title → the items it is an instance of.
    Table(BTreeMap<String, Vec<String>>),
}

/// The syntax of a rule file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Toml,
    Json,
}

impl Syntax {
    /// By extension (`.toml`, `.json`), else by the first character (`{` is JSON).
    pub fn of(path: &Path, text: &str) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("json") => Syntax::Json,
            Some(e) if e.eq_ignore_ascii_case("toml") => Syntax::Toml,
            _ if text.trim_start().starts_with('{') => Syntax::Json,
            _ => Syntax::Toml,
        }
    }
}

/// The line (from 1) of byte `at` of `text`.
fn line_of(text: &str, at: usize) -> usize {
    let before = text.as_bytes().get(..at).unwrap_or(text.as_bytes());
    1 + memchr::memchr_iter(b'\n', before).count()
}

impl RuleSpec {
    /// Parses a rule file's text: one object (a JSON object, a TOML document) whose keys are
    /// the rules. A value of the wrong kind (a bare string where a list is meant) is refused
    /// naming its key and line.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `origin` and what is wrong.
    pub fn parse(text: &str, syntax: Syntax, origin: &str) -> Result<Self> {
        let bad = |line: Option<usize>, key: String, message: &str| {
            let line = line.map(|n| format!("line {n}: ")).unwrap_or_default();
            let key = if key.is_empty() || key == "." {
                String::new()
            } else {
                format!("{key}: ")
            };
            Error::InvalidArgument(format!("{origin}: {line}{key}{}", message.trim_end()))
        };
        let json_error = |key: String, e: serde_json::Error| {
            // The position is given as the line; the message without it.
            let message = e.to_string();
            let message = (message.rsplit_once(" at line ")).map_or(message.as_str(), |(m, _)| m);
            bad(Some(e.line()), key, message)
        };
        let toml_error = |key: String, e: toml::de::Error| {
            let line = e.span().map(|span| line_of(text, span.start));
            bad(line, key, e.message())
        };
        let spec: RuleSpec = match syntax {
            Syntax::Json => {
                // A JSON array would be read field by field, in order: never a rule set.
                if !text.trim_start().starts_with('{') {
                    return Err(bad(
                        None,
                        String::new(),
                        "a rule file in JSON is one object whose keys are the rules \
                         ({\"exclude_targets\": [\"Title\"], …})",
                    ));
                }
                let mut de = serde_json::Deserializer::from_str(text);
                let spec = serde_path_to_error::deserialize(&mut de)
                    .map_err(|e| json_error(e.path().to_string(), e.into_inner()))?;
                de.end().map_err(|e| json_error(String::new(), e))?;
                spec
            }
            Syntax::Toml => {
                let de = toml::de::Deserializer::parse(text)
                    .map_err(|e| toml_error(String::new(), e))?;
                serde_path_to_error::deserialize(de)
                    .map_err(|e| toml_error(e.path().to_string(), e.into_inner()))?
            }
        };
        spec.check_version(origin)?;
        Ok(spec)
    }

    /// Reads and parses the rule file at `path` (UTF-8 text).
    ///
    /// # Errors
    /// [`Error::Io`] when it cannot be read, [`Error::InvalidArgument`] naming the file when
    /// it is not UTF-8 text or is malformed.
    pub fn read(path: &Path) -> Result<Self> {
        let size = std::fs::metadata(path)
            .map_err(|e| Error::io(path, e))?
            .len();
        if size > MAX_FILE_BYTES {
            return Err(Error::InvalidArgument(format!(
                "{}: a rule file of {size} bytes is larger than the {MAX_FILE_BYTES} allowed",
                path.display()
            )));
        }
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            Error::InvalidArgument(format!(
                "{}: line {}: a rule file is UTF-8 text; byte {at} is not (0x{:02x})",
                path.display(),
                bytes
                    .get(..at)
                    .map_or(1, |b| 1 + b.iter().filter(|&&c| c == b'\n').count()),
                bytes.get(at).copied().unwrap_or_default(),
            ))
        })?;
        Self::parse(&text, Syntax::of(path, &text), &path.display().to_string())
    }

    fn check_version(&self, origin: &str) -> Result<()> {
        match self.version {
            None | Some(FORMAT_VERSION) => Ok(()),
            Some(other) => Err(Error::InvalidArgument(format!(
                "{origin}: rule file version {other} is not supported (this version reads \
                 {FORMAT_VERSION})"
            ))),
        }
    }

    /// The spec as JSON text (pretty, stable key order).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The spec as TOML text.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a value cannot be written as TOML (never for a spec
    /// that was read from a file).
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string(self).map_err(|e| Error::InvalidArgument(format!("rules as TOML: {e}")))
    }
}
