//! Link rows collected column by column, then finished as one record batch.

use std::sync::Arc;
use std::time::Duration;

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::ArrowError;
use wikisuggest_engine::{Error as EngineError, LinkRecommendationSet, Stop, TextError};

use crate::schema::schema;

/// The page a row belongs to.
#[derive(Debug, Clone, Copy, Default)]
pub struct PageKey<'a> {
    /// Wiki id.
    pub wiki_db: Option<&'a str>,
    /// Page id.
    pub page_id: Option<i64>,
    /// Revision id.
    pub revision_id: Option<i64>,
    /// Title, as given (not normalised).
    pub page_title: Option<&'a str>,
}

/// The name of the Python exception an engine error is raised as, which error rows start
/// with (the binding maps errors to classes with this function too).
pub fn error_class(error: &EngineError) -> &'static str {
    match error {
        EngineError::Text(TextError::UnsupportedLanguage { .. }) => "UnsupportedLanguage",
        EngineError::Text(_) => "WikitextError",
        EngineError::InvalidArgument(_) | EngineError::InvalidParameter(_) => "InvalidParameter",
        EngineError::Internal(_) => "WikisuggestError",
        EngineError::Cancelled => "Cancelled",
        _ => "DatasetError",
    }
}

/// How a failed page reads in the `error` column: `Class: message`, as Python prints it.
pub fn error_text(class: &str, message: impl std::fmt::Display) -> String {
    format!("{class}: {message}")
}

/// Rows collected column by column.
pub struct RowBuilder {
    wiki_db: StringBuilder,
    page_id: Int64Builder,
    revision_id: Int64Builder,
    page_title: StringBuilder,
    link_index: Int64Builder,
    link_text: StringBuilder,
    link_target: StringBuilder,
    score: Float64Builder,
    wikitext_offset: Int64Builder,
    match_index: Int64Builder,
    context_before: StringBuilder,
    context_after: StringBuilder,
    error: StringBuilder,
    rows: usize,
    links: u64,
    errors: u64,
}

impl Default for RowBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl RowBuilder {
    /// No rows yet.
    pub fn new() -> Self {
        Self {
            wiki_db: StringBuilder::new(),
            page_id: Int64Builder::new(),
            revision_id: Int64Builder::new(),
            page_title: StringBuilder::new(),
            link_index: Int64Builder::new(),
            link_text: StringBuilder::new(),
            link_target: StringBuilder::new(),
            score: Float64Builder::new(),
            wikitext_offset: Int64Builder::new(),
            match_index: Int64Builder::new(),
            context_before: StringBuilder::new(),
            context_after: StringBuilder::new(),
            error: StringBuilder::new(),
            rows: 0,
            links: 0,
            errors: 0,
        }
    }

    /// Rows collected.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Link rows collected.
    pub fn links(&self) -> u64 {
        self.links
    }

    /// Error rows collected.
    pub fn errors(&self) -> u64 {
        self.errors
    }

    fn key(&mut self, key: &PageKey<'_>) {
        self.wiki_db.append_option(key.wiki_db);
        self.page_id.append_option(key.page_id);
        self.revision_id.append_option(key.revision_id);
        self.page_title.append_option(key.page_title);
        self.rows += 1;
    }

    /// The rows of one page's links.
    pub fn add_links(&mut self, key: &PageKey<'_>, set: &LinkRecommendationSet) {
        for link in &set.links {
            self.key(key);
            self.link_index
                .append_option(i64::try_from(link.link_index).ok());
            self.link_text.append_value(&link.link_text);
            self.link_target.append_value(&link.link_target);
            self.score.append_value(f64::from(link.score));
            self.wikitext_offset
                .append_option(i64::try_from(link.wikitext_offset).ok());
            self.match_index
                .append_option(i64::try_from(link.match_index).ok());
            self.context_before.append_value(&link.context_before);
            self.context_after.append_value(&link.context_after);
            self.error.append_null();
        }
        self.links += set.links.len() as u64;
    }

    /// The row of a page that failed.
    pub fn add_error(&mut self, key: &PageKey<'_>, error: &str) {
        self.key(key);
        self.link_index.append_null();
        self.link_text.append_null();
        self.link_target.append_null();
        self.score.append_null();
        self.wikitext_offset.append_null();
        self.match_index.append_null();
        self.context_before.append_null();
        self.context_after.append_null();
        self.error.append_value(error);
        self.errors += 1;
    }

    /// The rows of one page's outcome: its links, or its error. With a `budget`, a page the
    /// engine stopped at the end of its time budget is an error: its links would be a
    /// prefix that depends on the machine's speed.
    pub fn add_outcome(
        &mut self,
        key: &PageKey<'_>,
        outcome: &Result<LinkRecommendationSet, EngineError>,
        budget: Option<Duration>,
    ) {
        match outcome {
            Ok(set) if set.stop == Stop::TimeBudget => {
                let seconds = budget.map_or(0.0, |b| b.as_secs_f64());
                let message = format!(
                    "the page was not finished within its time budget of {seconds} s \
                     (time_budget); no link of it is written"
                );
                self.add_error(key, &error_text("WikitextError", message));
            }
            Ok(set) => self.add_links(key, set),
            Err(error) => self.add_error(key, &error_text(error_class(error), error)),
        }
    }

    /// The rows collected as a record batch; the builder is empty again.
    ///
    /// # Errors
    /// Only if the columns disagreed with the schema, which their construction rules out.
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.wiki_db.finish()),
            Arc::new(self.page_id.finish()),
            Arc::new(self.revision_id.finish()),
            Arc::new(self.page_title.finish()),
            Arc::new(self.link_index.finish()),
            Arc::new(self.link_text.finish()),
            Arc::new(self.link_target.finish()),
            Arc::new(self.score.finish()),
            Arc::new(self.wikitext_offset.finish()),
            Arc::new(self.match_index.finish()),
            Arc::new(self.context_before.finish()),
            Arc::new(self.context_after.finish()),
            Arc::new(self.error.finish()),
        ];
        self.rows = 0;
        self.links = 0;
        self.errors = 0;
        RecordBatch::try_new(schema(), columns)
    }
}
