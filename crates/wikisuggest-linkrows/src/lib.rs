//! Whole-wiki link rows: the link engine run over many pages — the articles of a MediaWiki
//! XML dump ([`DumpRun`]) or the rows of an Arrow record batch ([`ArrowPages`], what Spark
//! hands a Python worker) — and its results as Arrow record batches of one schema
//! ([`schema`]): one row per recommended link, one row with `error` set per page that failed.
//! A dump is read through one door, [`Articles`]; the same pages under two rule sets give a
//! rules preview ([`preview_rules`]), computed here too, so no page crosses into Python.
//!
//! Rows are built here, column by column, so that neither a page's wikitext nor a link ever
//! becomes a Python object on these paths; the Python layer only moves record batches (by the
//! Arrow C data interface) to Parquet or to Spark.

mod arrow_pages;
mod articles;
mod dump_run;
mod preview;
mod rows;
mod schema;

pub use arrow_pages::{ArrowPages, Engines};
pub use articles::{Articles, Selection, engine_page};
pub use dump_run::{DumpRun, DumpRunOptions, RowBatch, RunEvent};
pub use preview::{Change, LinkChange, PreviewPages, RulesPreview, preview_rules};
pub use rows::{RowBuilder, error_class, error_text};
pub use schema::{COLUMNS, schema, spark_ddl};

pub use arrow_array::RecordBatch;
