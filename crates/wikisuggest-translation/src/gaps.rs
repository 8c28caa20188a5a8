//! Whole-pair gap tables: every article of the source that a target lacks, by production's
//! rule (no interlanguage link to the target or its mapped code, disambiguation pages left
//! out), with no cap and no sampling, filtered as asked, most viewed first.

use std::collections::HashSet;
use std::sync::Arc;

use arrow_array::builder::{Int32Builder, Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};

use crate::catalog::{Catalog, parse_qid};
use crate::error::{Error, Result};
use crate::schema;
use crate::topics::{Kind, TagFilter, term_of_label};

/// How a gap table is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderBy {
    /// The day's views, most first (the interlanguage-link count when the catalog has no
    /// views), then the link count.
    Pageviews,
    /// Interlanguage links, most first, then views.
    LanglinksCount,
}

impl OrderBy {
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "pageviews" => Ok(Self::Pageviews),
            "langlinks_count" => Ok(Self::LanglinksCount),
            other => Err(Error::invalid(
                "order_by",
                format!("must be \"pageviews\" or \"langlinks_count\", got {other:?}"),
            )),
        }
    }
}

/// What a gap table holds.
#[derive(Debug, Clone)]
pub struct GapRequest {
    /// One or several target languages; several add a leading `target` column.
    pub targets: Vec<String>,
    /// Topic terms, each a `|`-alternative (`+` inside one: all of them), as for `recommend`.
    pub topic: Vec<String>,
    pub country: Vec<String>,
    /// Only these titles (redirects followed).
    pub titles: Option<Vec<String>>,
    /// Only these Wikidata items.
    pub wikidata_ids: Option<Vec<String>>,
    /// Only articles in this category (as the search index lists it).
    pub category: Option<String>,
    /// Inclusive bounds on the article's size in bytes (`page_len`).
    pub min_size: Option<i64>,
    pub max_size: Option<i64>,
    pub order_by: OrderBy,
}

impl GapRequest {
    pub fn new(target: &str) -> Self {
        Self {
            targets: vec![target.to_owned()],
            topic: Vec::new(),
            country: Vec::new(),
            titles: None,
            wikidata_ids: None,
            category: None,
            min_size: None,
            max_size: None,
            order_by: OrderBy::Pageviews,
        }
    }
}

fn check_code(name: &str, code: &str) -> Result<()> {
    let ok = !code.is_empty()
        && code
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            name,
            format!("{code:?} is not a language code"),
        ))
    }
}

/// The gap table of `request` over `catalog`.
pub fn missing(catalog: &Catalog, request: &GapRequest) -> Result<RecordBatch> {
    if request.targets.is_empty() {
        return Err(Error::invalid(
            "target",
            "give at least one target language",
        ));
    }
    for t in &request.targets {
        check_code("target", t)?;
        if t == catalog.language() {
            return Err(Error::invalid(
                "target",
                format!("{t:?} is the catalog's own language"),
            ));
        }
    }
    for (name, bound) in [
        ("min_size", request.min_size),
        ("max_size", request.max_size),
    ] {
        if bound.is_some_and(|b| b < 0) {
            return Err(Error::invalid(name, "must be a non-negative integer"));
        }
    }
    let filter = TagFilter::from_request(
        (!request.topic.is_empty())
            .then(|| request.topic.join("|"))
            .as_deref(),
        (!request.country.is_empty())
            .then(|| request.country.join("|"))
            .as_deref(),
    );
    if !filter.is_empty() && !catalog.has_part("cirrus") {
        return Err(Error::MissingPart(
            "topic and country need the catalog's `cirrus` part".to_owned(),
        ));
    }
    let only_rows: Option<HashSet<usize>> = match &request.titles {
        Some(titles) => {
            let mut rows = HashSet::new();
            for t in titles {
                if let Some(r) = catalog.resolve_title(t)? {
                    rows.insert(r);
                }
            }
            Some(rows)
        }
        None => None,
    };
    let only_items: Option<HashSet<u64>> = request
        .wikidata_ids
        .as_ref()
        .map(|ids| ids.iter().filter_map(|q| parse_qid(q.trim())).collect());
    let in_category: Option<HashSet<usize>> = match &request.category {
        Some(name) => Some(catalog.rows_in_category(name)?),
        None => None,
    };
    let mut rows: Vec<(usize, usize)> = Vec::new();
    for row in 0..catalog.len() {
        if catalog.is_disambiguation(row)
            || only_rows.as_ref().is_some_and(|s| !s.contains(&row))
            || in_category.as_ref().is_some_and(|s| !s.contains(&row))
            || only_items.as_ref().is_some_and(|s| {
                catalog
                    .wikidata_id(row)
                    .and_then(|q| parse_qid(&q))
                    .is_none_or(|q| !s.contains(&q))
            })
        {
            continue;
        }
        let len = catalog.page_len(row);
        if request.min_size.is_some_and(|m| len.is_none_or(|l| l < m))
            || request.max_size.is_some_and(|m| len.is_none_or(|l| l > m))
        {
            continue;
        }
        if !filter.is_empty() && !filter.matches(|k| catalog.labels(k, row)) {
            continue;
        }
        for (t, target) in request.targets.iter().enumerate() {
            if catalog.is_missing(row, target) {
                rows.push((t, row));
            }
        }
    }
    let views = |r: usize| catalog.pageviews(r).unwrap_or(-1);
    let links = |r: usize| i64::try_from(catalog.langlinks_count(r)).unwrap_or(i64::MAX);
    let by_views = request.order_by == OrderBy::Pageviews && catalog.has_part("pageviews");
    if request.order_by == OrderBy::Pageviews && !by_views {
        log::info!(target: "wikisuggest.translation", "the catalog has no views: gaps ordered by interlanguage links");
    }
    rows.sort_by(|&(ta, a), &(tb, b)| {
        let key = |r: usize| {
            if by_views {
                (views(r), links(r))
            } else {
                (links(r), views(r))
            }
        };
        ta.cmp(&tb)
            .then_with(|| key(b).cmp(&key(a)))
            .then_with(|| catalog.page_id(a).cmp(&catalog.page_id(b)))
    });
    table(catalog, &rows, &request.targets)
}

fn terms(catalog: &Catalog, kind: Kind, row: usize) -> Vec<String> {
    catalog
        .labels(kind, row)
        .into_iter()
        .map(|l| term_of_label(kind, l).map_or_else(|| l.to_owned(), str::to_owned))
        .collect()
}

fn table(catalog: &Catalog, rows: &[(usize, usize)], targets: &[String]) -> Result<RecordBatch> {
    let several = targets.len() > 1;
    let n = rows.len();
    let mut target = StringBuilder::with_capacity(n, n * 3);
    let mut title = StringBuilder::with_capacity(n, n * 24);
    let mut page_id = Int64Builder::with_capacity(n);
    let mut wikidata = StringBuilder::with_capacity(n, n * 9);
    let mut links = Int32Builder::with_capacity(n);
    let mut views = Int64Builder::with_capacity(n);
    let mut len = Int64Builder::with_capacity(n);
    let mut bytes = Int64Builder::with_capacity(n);
    let mut lead = Int64Builder::with_capacity(n);
    let mut topics = ListBuilder::new(StringBuilder::new());
    let mut countries = ListBuilder::new(StringBuilder::new());
    let tagged = catalog.has_part("cirrus");
    for &(t, row) in rows {
        target.append_value(&targets[t]);
        title.append_value(catalog.title(row));
        page_id.append_value(i64::try_from(catalog.page_id(row)).unwrap_or(i64::MAX));
        wikidata.append_option(catalog.wikidata_id(row));
        links.append_value(i32::try_from(catalog.langlinks_count(row)).unwrap_or(i32::MAX));
        views.append_option(catalog.pageviews(row));
        len.append_option(catalog.page_len(row));
        bytes.append_option(catalog.text_bytes(row));
        lead.append_option(catalog.lead_section_size(row));
        for (builder, kind) in [(&mut topics, Kind::Topic), (&mut countries, Kind::Country)] {
            if tagged {
                for term in terms(catalog, kind, row) {
                    builder.values().append_value(term);
                }
                builder.append(true);
            } else {
                builder.append(false);
            }
        }
    }
    let base = schema::gaps_schema();
    let mut fields: Vec<Field> = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    if several {
        fields.push(Field::new("target", DataType::Utf8, false));
        columns.push(Arc::new(target.finish()));
    }
    let built: Vec<ArrayRef> = vec![
        Arc::new(title.finish()),
        Arc::new(page_id.finish()),
        Arc::new(wikidata.finish()),
        Arc::new(links.finish()),
        Arc::new(views.finish()),
        Arc::new(len.finish()),
        Arc::new(bytes.finish()),
        Arc::new(lead.finish()),
        Arc::new(topics.finish()),
        Arc::new(countries.finish()),
    ];
    for (field, column) in base.fields().iter().zip(built) {
        // The list builders name their item `item` and allow nulls in it.
        let field = Field::new(
            field.name(),
            column.data_type().clone(),
            field.is_nullable(),
        );
        fields.push(field);
        columns.push(column);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| Error::catalog(&catalog.dir, format!("building the gap table: {e}")))
}
