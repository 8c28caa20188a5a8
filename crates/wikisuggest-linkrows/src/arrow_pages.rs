//! Pages given as an Arrow record batch (what Spark's `mapInArrow` hands a Python worker):
//! columns `wiki_db`, `page_id`, `revision_id`, `page_title`, `wikitext`.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{ArrowError, DataType};
use wikisuggest_engine::{Engine, RecommendOptions};

use crate::rows::{PageKey, RowBuilder, error_text};

/// A text column of any of Arrow's string layouts.
enum Texts<'a> {
    Utf8(&'a arrow_array::StringArray),
    Large(&'a arrow_array::LargeStringArray),
    View(&'a arrow_array::StringViewArray),
    Null,
}

impl Texts<'_> {
    fn get(&self, i: usize) -> Option<&str> {
        match self {
            Self::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            Self::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Self::View(a) => a.is_valid(i).then(|| a.value(i)),
            Self::Null => None,
        }
    }
}

/// An integer column (64- or 32-bit).
enum Ints<'a> {
    I64(&'a arrow_array::Int64Array),
    I32(&'a arrow_array::Int32Array),
    Null,
}

impl Ints<'_> {
    fn get(&self, i: usize) -> Option<i64> {
        match self {
            Self::I64(a) => a.is_valid(i).then(|| a.value(i)),
            Self::I32(a) => a.is_valid(i).then(|| i64::from(a.value(i))),
            Self::Null => None,
        }
    }
}

/// The engine of each wiki of a job, or the error text of a wiki whose dataset cannot be
/// used (its pages become error rows).
#[derive(Default, Clone)]
pub struct Engines {
    by_wiki: HashMap<String, Result<Arc<Engine>, String>>,
}

impl Engines {
    /// No wiki yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The engine of `wiki`.
    pub fn insert(&mut self, wiki: String, engine: Arc<Engine>) {
        self.by_wiki.insert(wiki, Ok(engine));
    }

    /// The error of every page of `wiki` (e.g. `DatasetError: no dataset for wiki …`).
    pub fn refuse(&mut self, wiki: String, error: String) {
        self.by_wiki.insert(wiki, Err(error));
    }

    fn get(&self, wiki: Option<&str>) -> Result<&Arc<Engine>, String> {
        let Some(wiki) = wiki else {
            return Err(error_text(
                "InvalidParameter",
                "wiki_db must be a string, got NoneType",
            ));
        };
        match self.by_wiki.get(wiki) {
            Some(Ok(engine)) => Ok(engine),
            Some(Err(error)) => Err(error.clone()),
            None => Err(error_text(
                "DatasetError",
                format!("no dataset for wiki {wiki:?}"),
            )),
        }
    }
}

/// The pages of a record batch.
pub struct ArrowPages {
    batch: RecordBatch,
}

fn texts<'a>(batch: &'a RecordBatch, name: &str) -> Result<Texts<'a>, ArrowError> {
    let column = batch
        .column_by_name(name)
        .ok_or_else(|| ArrowError::SchemaError(format!("the pages have no column {name:?}")))?;
    Ok(match column.data_type() {
        DataType::Utf8 => Texts::Utf8(column.as_string::<i32>()),
        DataType::LargeUtf8 => Texts::Large(column.as_string::<i64>()),
        DataType::Utf8View => Texts::View(column.as_string_view()),
        DataType::Null => Texts::Null,
        other => {
            return Err(ArrowError::SchemaError(format!(
                "column {name:?} must hold strings, not {other}"
            )));
        }
    })
}

fn ints<'a>(batch: &'a RecordBatch, name: &str) -> Result<Ints<'a>, ArrowError> {
    let column = batch
        .column_by_name(name)
        .ok_or_else(|| ArrowError::SchemaError(format!("the pages have no column {name:?}")))?;
    Ok(match column.data_type() {
        DataType::Int64 => Ints::I64(column.as_primitive::<Int64Type>()),
        DataType::Int32 => Ints::I32(column.as_primitive::<Int32Type>()),
        DataType::Null => Ints::Null,
        other => {
            return Err(ArrowError::SchemaError(format!(
                "column {name:?} must hold integers, not {other}"
            )));
        }
    })
}

impl ArrowPages {
    /// The pages of `batch`.
    ///
    /// # Errors
    /// [`ArrowError::SchemaError`] when a column is missing or of another type.
    pub fn new(batch: RecordBatch) -> Result<Self, ArrowError> {
        texts(&batch, "wiki_db")?;
        ints(&batch, "page_id")?;
        ints(&batch, "revision_id")?;
        texts(&batch, "page_title")?;
        texts(&batch, "wikitext")?;
        Ok(Self { batch })
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.batch.num_rows()
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.batch.num_rows() == 0
    }

    /// Consecutive row ranges holding about `limit` bytes of wikitext each (a range ends
    /// with the row that reaches the limit), so that a batch of long pages is processed, and
    /// its rows held, a part at a time.
    pub fn chunks(&self, limit: usize) -> Vec<Range<usize>> {
        let Ok(text) = texts(&self.batch, "wikitext") else {
            // Checked when the pages were made: cannot happen; one chunk of every row.
            return std::iter::once(0..self.len()).collect();
        };
        let mut out = Vec::new();
        let (mut start, mut size) = (0, 0usize);
        for i in 0..self.len() {
            size = size.saturating_add(text.get(i).map_or(0, str::len));
            if size >= limit {
                out.push(start..i + 1);
                start = i + 1;
                size = 0;
            }
        }
        if start < self.len() {
            out.push(start..self.len());
        }
        out
    }

    /// The link rows of the pages in `rows`, each page on the engine of its wiki, one after
    /// another on this thread.
    ///
    /// # Errors
    /// Only if the rows disagree with their schema (see [`RowBuilder::finish`]).
    pub fn link_rows(
        &self,
        rows: Range<usize>,
        engines: &Engines,
        options: &RecommendOptions,
    ) -> Result<RecordBatch, ArrowError> {
        let b = &self.batch;
        let (wikis, ids, revisions) = (
            texts(b, "wiki_db")?,
            ints(b, "page_id")?,
            ints(b, "revision_id")?,
        );
        let (titles, text) = (texts(b, "page_title")?, texts(b, "wikitext")?);
        let mut out = RowBuilder::new();
        for i in rows.start..rows.end.min(self.len()) {
            let key = PageKey {
                wiki_db: wikis.get(i),
                page_id: ids.get(i),
                revision_id: revisions.get(i),
                page_title: titles.get(i),
            };
            let engine = match engines.get(key.wiki_db) {
                Ok(engine) => engine,
                Err(error) => {
                    out.add_error(&key, &error);
                    continue;
                }
            };
            let Some(title) = key.page_title else {
                let error = "page_title must be a string, got NoneType";
                out.add_error(&key, &error_text("InvalidParameter", error));
                continue;
            };
            let Some(wikitext) = text.get(i) else {
                let error = "wikitext must be a string, got NoneType";
                out.add_error(&key, &error_text("WikitextError", error));
                continue;
            };
            let outcome = engine.recommend(wikitext, title, key.page_id, key.revision_id, options);
            out.add_outcome(&key, &outcome, options.time_budget);
        }
        out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array, StringArray};

    fn pages(texts: &[Option<&str>]) -> Result<ArrowPages, ArrowError> {
        let n = texts.len();
        let columns: Vec<(&str, ArrayRef)> = vec![
            (
                "wiki_db",
                Arc::new(StringArray::from(vec![Some("enwiki"); n])),
            ),
            (
                "page_id",
                Arc::new(Int64Array::from((0..n as i64).collect::<Vec<_>>())),
            ),
            ("revision_id", Arc::new(Int64Array::from(vec![None; n]))),
            (
                "page_title",
                Arc::new(StringArray::from(vec![Some("T"); n])),
            ),
            ("wikitext", Arc::new(StringArray::from(texts.to_vec()))),
        ];
        ArrowPages::new(RecordBatch::try_from_iter(columns)?)
    }

    #[test]
    fn chunks_end_at_the_row_that_reaches_the_limit() -> Result<(), ArrowError> {
        let p = pages(&[Some("aaaa"), Some("bb"), None, Some("cccccc"), Some("d")])?;
        assert_eq!(p.chunks(5), vec![0..2, 2..4, 4..5]);
        assert_eq!(p.chunks(1), vec![0..1, 1..2, 2..4, 4..5]);
        assert_eq!(p.chunks(usize::MAX), vec![0..5]);
        Ok(())
    }

    #[test]
    fn pages_of_an_unknown_or_missing_wiki_are_error_rows() -> Result<(), ArrowError> {
        let p = pages(&[Some("text"), None])?;
        let mut engines = Engines::new();
        engines.refuse("enwiki".into(), "DatasetError: broken".into());
        let rows = p.link_rows(0..2, &engines, &RecommendOptions::default())?;
        assert_eq!(rows.num_rows(), 2);
        let errors = rows.column_by_name("error").map(|c| {
            c.as_string::<i32>()
                .iter()
                .map(|v| v.map(str::to_owned))
                .collect::<Vec<_>>()
        });
        assert_eq!(
            errors,
            Some(vec![Some("DatasetError: broken".to_owned()); 2])
        );
        let unknown = p.link_rows(0..1, &Engines::new(), &RecommendOptions::default())?;
        let text = unknown.column(12).as_string::<i32>().value(0).to_owned();
        assert_eq!(text, "DatasetError: no dataset for wiki \"enwiki\"");
        Ok(())
    }

    #[test]
    fn a_column_of_another_type_is_refused() {
        let batch = RecordBatch::try_from_iter(vec![(
            "wiki_db",
            Arc::new(Int64Array::from(vec![1])) as ArrayRef,
        )]);
        let refused = batch.and_then(ArrowPages::new).err().map(|e| e.to_string());
        assert!(refused.is_some_and(|e| e.contains("must hold strings")));
    }
}
