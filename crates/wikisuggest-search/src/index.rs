//! An index folder opened for morelike queries.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, Index, IndexReader, ReloadPolicy, Searcher, TantivyDocument, Term};

use crate::analysis::{profile, terms, text_analyzer};
use crate::build::progress;
use crate::collect::AllMatches;
use crate::error::{Result, SearchError, invalid};
use crate::morelike::{
    MoreLikeOverrides, MoreLikeParams, QueryTerm, SeedTerms, minimum_should_match, select_terms,
};
use crate::read_only::open_read_only;
use crate::schema::{self, Fields};
use crate::title::title_key;

/// Tantivy's BM25 multiplies every term's weight by `k1 + 1`; Lucene (since 8.0) and so
/// Elasticsearch do not. Scores are divided by it to read as the search cluster's.
const BM25_K1_PLUS_ONE: f32 = 2.2;

/// The most hits one query may ask for.
pub const MAX_LIMIT: usize = 10_000;

/// One article like the seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub page_id: u64,
    pub title: String,
    /// BM25 (k1 1.2, b 0.75), summed over the query's terms the article contains.
    pub score: f32,
    pub disambiguation: bool,
}

/// A seed after lookup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seed {
    /// The title given.
    pub given: String,
    /// The article it resolved to (through a redirect if it is one), or `None` if missing.
    pub page: Option<(u64, String)>,
}

/// What a morelike query did: its seeds, its terms, how many were required, its hits.
#[derive(Clone, Debug, PartialEq)]
pub struct MoreLike {
    pub seeds: Vec<Seed>,
    pub terms: Vec<QueryTerm>,
    pub minimum_should_match: usize,
    pub hits: Vec<Hit>,
}

/// A complete index, ready for queries from many threads.
pub struct SearchIndex {
    dir: PathBuf,
    reader: IndexReader,
    fields: Fields,
    analyzer: TextAnalyzer,
    params: MoreLikeParams,
    language: String,
    documents: u64,
}

/// The fast-field columns a hit is read from, per segment.
struct HitColumns {
    page_id: tantivy::columnar::Column<u64>,
    disambiguation: tantivy::columnar::Column<u64>,
    title: tantivy::columnar::StrColumn,
}

impl HitColumns {
    fn open(reader: &tantivy::SegmentReader) -> Result<Self> {
        let fast = reader.fast_fields();
        let missing = || SearchError::NotAnIndex {
            path: PathBuf::new(),
            reason: "the title column is missing".to_owned(),
        };
        Ok(Self {
            page_id: fast.u64("page_id")?,
            disambiguation: fast.u64("disambiguation")?,
            title: fast.str("title")?.ok_or_else(missing)?,
        })
    }

    fn hit(&self, doc: tantivy::DocId, score: f32) -> Result<Hit> {
        let mut title = String::new();
        if let Some(ord) = self.title.term_ords(doc).next() {
            self.title
                .ord_to_str(ord, &mut title)
                .map_err(|source| SearchError::Io {
                    path: PathBuf::new(),
                    source,
                })?;
        }
        Ok(Hit {
            page_id: self.page_id.first(doc).unwrap_or_default(),
            title,
            score,
            disambiguation: self.disambiguation.first(doc).is_some_and(|v| v != 0),
        })
    }
}

struct Prepared {
    seeds: Vec<Seed>,
    seed_pages: HashSet<u64>,
    seed_addresses: HashSet<DocAddress>,
    terms: Vec<QueryTerm>,
    minimum_should_match: usize,
    /// `None` when no term was chosen: nothing matches.
    query: Option<BooleanQuery>,
}

struct Resolved {
    address: DocAddress,
    page_id: u64,
    title: String,
}

impl SearchIndex {
    /// Opens the index in `dir` for reading: nothing is written in the folder (it may be
    /// read-only or shared); an incomplete build is refused.
    pub fn open(dir: &Path) -> Result<Self> {
        let settings = schema::read_settings(dir)?.ok_or_else(|| SearchError::NotAnIndex {
            path: dir.to_path_buf(),
            reason: format!("no {}", schema::SETTINGS_FILE),
        })?;
        let params = MoreLikeParams::default().with(&settings.morelike)?;
        let (index, fields): (Index, Fields) = open_read_only(dir, &settings.language)?;
        let state = progress(&index, dir)?;
        if !state.complete {
            return Err(SearchError::Incomplete {
                path: dir.to_path_buf(),
                documents: state.documents,
            });
        }
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            dir: dir.to_path_buf(),
            documents: reader.searcher().num_docs(),
            reader,
            fields,
            analyzer: text_analyzer(profile(&settings.language)?),
            params,
            language: settings.language,
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    pub fn language(&self) -> &str {
        &self.language
    }

    pub fn documents(&self) -> u64 {
        self.documents
    }

    /// The wiki's morelike parameters (CirrusSearch's defaults with the wiki's overrides).
    pub fn params(&self) -> &MoreLikeParams {
        &self.params
    }

    /// The terms `text` is indexed under.
    pub fn analyze(&self, text: &str) -> Vec<String> {
        terms(&mut self.analyzer.clone(), text)
    }

    fn lookup(
        &self,
        searcher: &Searcher,
        field: tantivy::schema::Field,
        key: &str,
    ) -> Result<Option<DocAddress>> {
        let query = TermQuery::new(Term::from_field_text(field, key), IndexRecordOption::Basic);
        let found = searcher.search(&query, &DocSetCollector)?;
        Ok(found.into_iter().min())
    }

    fn resolve(&self, searcher: &Searcher, given: &str) -> Result<Option<Resolved>> {
        let Some(key) = title_key(given) else {
            return Ok(None);
        };
        let address = match self.lookup(searcher, self.fields.title_key, &key)? {
            Some(a) => a,
            None => match self.lookup(searcher, self.fields.redirect_key, &key)? {
                Some(a) => a,
                None => return Ok(None),
            },
        };
        let doc: TantivyDocument = searcher.doc(address)?;
        let page_id = doc
            .get_first(self.fields.page_id)
            .and_then(|v| v.as_u64())
            .unwrap_or_default();
        let title = doc
            .get_first(self.fields.title)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned();
        Ok(Some(Resolved {
            address,
            page_id,
            title,
        }))
    }

    /// `morelike:<seeds>` with the wiki's parameters: the best `limit` articles, best first.
    /// `seeds` are titles, each possibly holding several separated by `|`.
    pub fn similar<S: AsRef<str>>(&self, seeds: &[S], limit: usize) -> Result<Vec<Hit>> {
        Ok(self
            .more_like(seeds, &MoreLikeOverrides::default(), limit)?
            .hits)
    }

    /// The seeds resolved, the query's terms chosen, and the query itself.
    fn prepare<S: AsRef<str>>(
        &self,
        searcher: &Searcher,
        seeds: &[S],
        overrides: &MoreLikeOverrides,
    ) -> Result<Prepared> {
        let params = self.params.with(overrides)?;
        let mut seen = HashSet::new();
        let mut report = Vec::new();
        let mut resolved = Vec::new();
        for given in seeds.iter().flat_map(|s| s.as_ref().split('|')) {
            let page = self.resolve(searcher, given)?;
            report.push(Seed {
                given: given.trim().to_owned(),
                page: page.as_ref().map(|r| (r.page_id, r.title.clone())),
            });
            if let Some(r) = page
                && seen.insert(r.page_id)
            {
                resolved.push(r);
            }
        }
        // CirrusSearch sorts the seed titles before handing them to Elasticsearch.
        resolved.sort_by(|a, b| a.title.as_bytes().cmp(b.title.as_bytes()));

        let mut seed_terms = SeedTerms::default();
        let mut analyzer = self.analyzer.clone();
        for r in &resolved {
            let doc: TantivyDocument = searcher.doc(r.address)?;
            let text = doc
                .get_first(self.fields.text)
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            seed_terms.add_document(terms(&mut analyzer, text), &params);
        }
        let text_field = self.fields.text;
        let chosen = select_terms(&seed_terms, &params, searcher.num_docs(), |t| {
            searcher.doc_freq(&Term::from_field_text(text_field, t))
        })?;
        let msm = minimum_should_match(&params.minimum_should_match, chosen.len())?;
        let clauses: Vec<(Occur, Box<dyn Query>)> = chosen
            .iter()
            .map(|t| {
                let q: Box<dyn Query> = Box::new(TermQuery::new(
                    Term::from_field_text(text_field, &t.term),
                    IndexRecordOption::WithFreqs,
                ));
                (Occur::Should, q)
            })
            .collect();
        Ok(Prepared {
            seeds: report,
            seed_pages: resolved.iter().map(|r| r.page_id).collect(),
            seed_addresses: resolved.iter().map(|r| r.address).collect(),
            query: (!clauses.is_empty())
                .then(|| BooleanQuery::with_minimum_required_clauses(clauses, msm)),
            terms: chosen,
            minimum_should_match: msm,
        })
    }

    /// `morelike:<seeds>` with this call's overrides over the wiki's parameters, reporting the
    /// resolved seeds and the chosen terms with the hits.
    pub fn more_like<S: AsRef<str>>(
        &self,
        seeds: &[S],
        overrides: &MoreLikeOverrides,
        limit: usize,
    ) -> Result<MoreLike> {
        if limit > MAX_LIMIT {
            return Err(invalid(
                "limit",
                format!("at most {MAX_LIMIT}, got {limit}"),
            ));
        }
        let searcher = self.reader.searcher();
        let prepared = self.prepare(&searcher, seeds, overrides)?;
        let mut out = MoreLike {
            seeds: prepared.seeds,
            terms: prepared.terms,
            minimum_should_match: prepared.minimum_should_match,
            hits: Vec::new(),
        };
        let Some(query) = prepared.query.filter(|_| limit > 0) else {
            return Ok(out);
        };
        // The seeds are scored like any document, then left out.
        let top = searcher.search(
            &query,
            &TopDocs::with_limit(limit + prepared.seed_addresses.len()).order_by_score(),
        )?;
        let mut columns: HashMap<u32, HitColumns> = HashMap::new();
        for (score, address) in top {
            if out.hits.len() >= limit {
                break;
            }
            if prepared.seed_addresses.contains(&address) {
                continue;
            }
            let segment = address.segment_ord;
            let c = match columns.entry(segment) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(HitColumns::open(searcher.segment_reader(segment))?)
                }
            };
            out.hits
                .push(c.hit(address.doc_id, score / BM25_K1_PLUS_ONE)?);
        }
        // Equal scores in page id order, whatever the index's segments.
        out.hits
            .sort_by(|a, b| b.score.total_cmp(&a.score).then(a.page_id.cmp(&b.page_id)));
        Ok(out)
    }

    /// Page ids of the articles like the seeds (already split on `|`), best first, for a
    /// catalog's recommendations: at most `limit` (any number: `usize::MAX` keeps every match,
    /// as `morelikethis` beside a topic or a country needs), only those `within` accepts.
    pub fn similar_ids(
        &self,
        seeds: &[String],
        limit: usize,
        within: Option<&(dyn Fn(u64) -> bool + Sync)>,
    ) -> Result<Vec<u64>> {
        if within.is_none() && limit <= MAX_LIMIT {
            let found = self.more_like(seeds, &MoreLikeOverrides::default(), limit)?;
            return Ok(found.hits.into_iter().map(|h| h.page_id).collect());
        }
        let searcher = self.reader.searcher();
        let prepared = self.prepare(&searcher, seeds, &MoreLikeOverrides::default())?;
        let Some(query) = prepared.query.filter(|_| limit > 0) else {
            return Ok(Vec::new());
        };
        let mut found: Vec<(f32, u64)> = searcher
            .search(&query, &AllMatches)?
            .into_iter()
            .filter(|(_, id)| !prepared.seed_pages.contains(id))
            .filter(|(_, id)| within.is_none_or(|keep| keep(*id)))
            .collect();
        found.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        found.truncate(limit);
        Ok(found.into_iter().map(|(_, id)| id).collect())
    }
}
