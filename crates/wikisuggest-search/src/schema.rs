//! The index's fields and its own settings file beside tantivy's.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};

use crate::error::{Result, SearchError};
use crate::morelike::MoreLikeOverrides;

/// The analyzer's name in tantivy's tokenizer registry.
pub const TEXT_ANALYZER: &str = "wiki_text";

/// The file, inside the index folder, that says which language the index was analysed in.
pub const SETTINGS_FILE: &str = "wikisuggest-search.json";

/// Bumped when the fields or the analysis change in a way older indexes cannot serve.
pub const FORMAT: u32 = 1;

#[derive(Clone, Copy, Debug)]
pub struct Fields {
    pub page_id: Field,
    /// The title as the documents gave it (shown in results).
    pub title: Field,
    /// The title's normalised form, for looking seeds up.
    pub title_key: Field,
    /// The normalised titles of the redirects to the page.
    pub redirect_key: Field,
    pub disambiguation: Field,
    /// The article's text: analysed for search, stored for the seeds' term counts.
    pub text: Field,
}

pub fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text_options = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TEXT_ANALYZER)
                .set_index_option(IndexRecordOption::WithFreqs)
                .set_fieldnorms(true),
        )
        .set_stored();
    let fields = Fields {
        page_id: b.add_u64_field("page_id", INDEXED | FAST | STORED),
        // A fast field too: hits read their titles from its column, not from the document
        // store (whose blocks hold the texts).
        title: b.add_text_field("title", TextOptions::default().set_stored().set_fast("raw")),
        title_key: b.add_text_field("title_key", STRING),
        redirect_key: b.add_text_field("redirect_key", STRING),
        disambiguation: b.add_u64_field("disambiguation", FAST | STORED),
        text: b.add_text_field("text", text_options),
    };
    (b.build(), fields)
}

/// What the index folder records of its own making.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub format: u32,
    /// The wiki language code whose analyzer the text went through.
    pub language: String,
    /// The wiki's own morelike settings, over CirrusSearch's defaults.
    #[serde(default)]
    pub morelike: MoreLikeOverrides,
}

pub fn settings_path(dir: &Path) -> PathBuf {
    dir.join(SETTINGS_FILE)
}

pub fn read_settings(dir: &Path) -> Result<Option<Settings>> {
    let path = settings_path(dir);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(SearchError::Io { path, source }),
    };
    let settings: Settings =
        serde_json::from_slice(&bytes).map_err(|e| SearchError::NotAnIndex {
            path: dir.to_path_buf(),
            reason: format!("{SETTINGS_FILE}: {e}"),
        })?;
    if settings.format != FORMAT {
        return Err(SearchError::NotAnIndex {
            path: dir.to_path_buf(),
            reason: format!(
                "index format {} (this version reads {FORMAT}); build it again",
                settings.format
            ),
        });
    }
    Ok(Some(settings))
}

/// Written to a temporary file and renamed, so that a crash leaves the old file or the new.
pub fn write_settings(dir: &Path, settings: &Settings) -> Result<()> {
    let path = settings_path(dir);
    let tmp = dir.join(format!("{SETTINGS_FILE}.tmp"));
    let io = |source| SearchError::Io {
        path: path.clone(),
        source,
    };
    let body = serde_json::to_vec_pretty(settings).map_err(|e| io(std::io::Error::other(e)))?;
    std::fs::write(&tmp, body).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)
}
