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

impl RuleSpec {
    /// Parses a rule file's text.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `origin` and what is wrong.
    pub fn parse(text: &str, syntax: Syntax, origin: &str) -> Result<Self> {
        let spec: RuleSpec = match syntax {
            Syntax::Json => serde_json::from_str(text)
                .map_err(|e| Error::InvalidArgument(format!("{origin}: {e}")))?,
            Syntax::Toml => toml::from_str(text)
                .map_err(|e| Error::InvalidArgument(format!("{origin}: {}", e.message())))?,
        };
        spec.check_version(origin)?;
        Ok(spec)
    }

    /// Reads and parses the rule file at `path`.
    ///
    /// # Errors
    /// [`Error::Io`] when it cannot be read, [`Error::InvalidArgument`] when it is malformed.
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
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
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
