//! The one definition of the link rows' schema.

use std::sync::{Arc, LazyLock};

use arrow_schema::{DataType, Field, Schema, SchemaRef};

/// Column names and types, in order.
pub const COLUMNS: [(&str, DataType); 13] = [
    ("wiki_db", DataType::Utf8),
    ("page_id", DataType::Int64),
    ("revision_id", DataType::Int64),
    ("page_title", DataType::Utf8),
    ("link_index", DataType::Int64),
    ("link_text", DataType::Utf8),
    ("link_target", DataType::Utf8),
    ("score", DataType::Float64),
    ("wikitext_offset", DataType::Int64),
    ("match_index", DataType::Int64),
    ("context_before", DataType::Utf8),
    ("context_after", DataType::Utf8),
    ("error", DataType::Utf8),
];

static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(
        COLUMNS
            .iter()
            .map(|(name, kind)| Field::new(*name, kind.clone(), true))
            .collect::<Vec<_>>(),
    ))
});

/// The rows' Arrow schema (every column nullable: an error row has no link).
pub fn schema() -> SchemaRef {
    SCHEMA.clone()
}

/// The same schema as a Spark DDL string (`wiki_db string, page_id bigint, …`).
pub fn spark_ddl() -> String {
    COLUMNS
        .iter()
        .map(|(name, kind)| {
            let spark = match kind {
                DataType::Int64 => "bigint",
                DataType::Float64 => "double",
                _ => "string",
            };
            format!("{name} {spark}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ddl_names_every_column_in_order() {
        let ddl = spark_ddl();
        assert!(ddl.starts_with("wiki_db string, page_id bigint, revision_id bigint, "));
        assert!(ddl.ends_with("context_after string, error string"));
        assert_eq!(ddl.matches(", ").count() + 1, schema().fields().len());
    }
}
