//! The files of a catalog folder and their columns, written once: the builder writes them,
//! the engine reads them, and pandas, polars, DuckDB or Spark read them as they are.
//!
//! | file | one row per | from |
//! |---|---|---|
//! | `articles.parquet` | article (namespace 0, not a redirect), by page id | every part |
//! | `redirects.parquet` | redirect between articles, by the redirect's page id | `sql` |
//! | `popular.parquet` | title of the day's top list, in its order | `pageviews` |
//! | `collections.parquet` | article of a page collection | `collections` |
//! | `catalog.json` | the catalog: its wiki, parts, sources and counts | every part |

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

/// The catalog's description file.
pub const MANIFEST: &str = "catalog.json";
/// The articles.
pub const ARTICLES: &str = "articles.parquet";
/// Redirects between articles.
pub const REDIRECTS: &str = "redirects.parquet";
/// The day's top list, resolved.
pub const POPULAR: &str = "popular.parquet";
/// Page collections and their articles.
pub const COLLECTIONS: &str = "collections.parquet";
/// The folder of the seed-search index built beside the catalog.
pub const SEARCH_INDEX: &str = "search";

/// The format of the folder; a reader refuses a newer one.
pub const FORMAT_VERSION: u32 = 1;

/// Columns of `articles.parquet`, in order.
pub mod articles {
    pub const PAGE_ID: &str = "page_id";
    pub const TITLE: &str = "title";
    pub const WIKIDATA_ID: &str = "wikidata_id";
    pub const REDIRECTS: &str = "redirects";
    pub const LANGLINKS: &str = "langlinks";
    pub const LANGLINKS_COUNT: &str = "langlinks_count";
    pub const DISAMBIGUATION: &str = "disambiguation";
    pub const PAGE_LEN: &str = "page_len";
    pub const TEXT_BYTES: &str = "text_bytes";
    pub const LEAD_SECTION_SIZE: &str = "lead_section_size";
    pub const TOPICS: &str = "topics";
    pub const COUNTRIES: &str = "countries";
    pub const PAGEVIEWS: &str = "pageviews";
    /// The categories the search index lists (names without the namespace, spaces).
    pub const CATEGORIES: &str = "categories";
    /// Fields of a `langlinks` entry.
    pub const LANG: &str = "lang";
    pub const LANG_TITLE: &str = "title";
    /// Fields of a `topics` or `countries` entry.
    pub const LABEL: &str = "label";
    pub const SCORE: &str = "score";
}

/// Columns of `redirects.parquet`.
pub mod redirects {
    pub const TITLE: &str = "title";
    pub const TARGET: &str = "target";
    /// The redirect page's own size.
    pub const PAGE_LEN: &str = "page_len";
}

/// Columns of `popular.parquet`.
pub mod popular {
    /// 1-based place on the top list.
    pub const RANK: &str = "rank";
    /// The title as the top list spells it (underscores).
    pub const ARTICLE: &str = "article";
    pub const VIEWS: &str = "views";
    /// The namespace the title is in; null for a title MediaWiki refuses.
    pub const NAMESPACE: &str = "namespace";
    /// The title as MediaWiki writes it (spaces, namespace prefix).
    pub const TITLE: &str = "title";
    /// Null when no such page exists.
    pub const PAGE_ID: &str = "page_id";
    pub const IS_REDIRECT: &str = "is_redirect";
    /// For a redirect to an article: that article's title.
    pub const REDIRECT_TARGET: &str = "redirect_target";
    pub const PAGE_LEN: &str = "page_len";
    pub const WIKIDATA_ID: &str = "wikidata_id";
    pub const DISAMBIGUATION: &str = "disambiguation";
    /// Language codes of the page's own interlanguage links.
    pub const LANGLINKS: &str = "langlinks";
}

/// Columns of `collections.parquet`.
pub mod collections {
    pub const COLLECTION: &str = "collection";
    pub const DESCRIPTION: &str = "description";
    pub const END_DATE: &str = "end_date";
    /// Position of the article in the collection's list.
    pub const POSITION: &str = "position";
    pub const WIKIDATA_ID: &str = "wikidata_id";
    /// The article's title per Wikipedia language (`lang`, `title`).
    pub const SITELINKS: &str = "sitelinks";
}

/// `articles.parquet`. Columns a part was not built with are null (`text_bytes`,
/// `lead_section_size`, `topics`, `countries` and `categories` without `cirrus`,
/// `pageviews` without `pageviews`).
pub const ARTICLES_SCHEMA: &str = "message articles {
  required int64 page_id;
  required binary title (STRING);
  optional binary wikidata_id (STRING);
  required group redirects (LIST) { repeated group list { required binary element (STRING); } }
  required group langlinks (LIST) {
    repeated group list { required group element { required binary lang (STRING); required binary title (STRING); } }
  }
  required int32 langlinks_count;
  required boolean disambiguation;
  optional int64 page_len;
  optional int64 text_bytes;
  optional int64 lead_section_size;
  optional group topics (LIST) {
    repeated group list { required group element { required binary label (STRING); required int32 score (INTEGER(16,true)); } }
  }
  optional group countries (LIST) {
    repeated group list { required group element { required binary label (STRING); required int32 score (INTEGER(16,true)); } }
  }
  optional int64 pageviews;
  optional group categories (LIST) { repeated group list { required binary element (STRING); } }
}";

/// `redirects.parquet`.
pub const REDIRECTS_SCHEMA: &str = "message redirects {
  required binary title (STRING);
  required binary target (STRING);
  optional int64 page_len;
}";

/// `popular.parquet`.
pub const POPULAR_SCHEMA: &str = "message popular {
  required int32 rank;
  required binary article (STRING);
  required int64 views;
  optional int32 namespace;
  optional binary title (STRING);
  optional int64 page_id;
  required boolean is_redirect;
  optional binary redirect_target (STRING);
  optional int64 page_len;
  optional binary wikidata_id (STRING);
  required boolean disambiguation;
  required group langlinks (LIST) { repeated group list { required binary element (STRING); } }
}";

/// `collections.parquet`.
pub const COLLECTIONS_SCHEMA: &str = "message collections {
  required binary collection (STRING);
  optional binary description (STRING);
  optional binary end_date (STRING);
  required int32 position;
  required binary wikidata_id (STRING);
  required group sitelinks (LIST) {
    repeated group list { required group element { required binary lang (STRING); required binary title (STRING); } }
  }
}";

fn utf8_list() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
}

/// The schema of a gap table (`missing()`): the article columns a user reads.
pub fn gaps_schema() -> SchemaRef {
    use articles::*;
    Arc::new(Schema::new(vec![
        Field::new(TITLE, DataType::Utf8, false),
        Field::new(PAGE_ID, DataType::Int64, false),
        Field::new(WIKIDATA_ID, DataType::Utf8, true),
        Field::new(LANGLINKS_COUNT, DataType::Int32, false),
        Field::new(PAGEVIEWS, DataType::Int64, true),
        Field::new(PAGE_LEN, DataType::Int64, true),
        Field::new(TEXT_BYTES, DataType::Int64, true),
        Field::new(LEAD_SECTION_SIZE, DataType::Int64, true),
        Field::new(TOPICS, utf8_list(), true),
        Field::new(COUNTRIES, utf8_list(), true),
    ]))
}
