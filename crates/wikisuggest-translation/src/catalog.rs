//! A catalog folder opened for answering: its articles in columns in memory (about 120 bytes
//! an article: an enwiki-size catalog takes under a gigabyte), the day's top list, redirects
//! and page collections read when first needed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::build::Manifest;
use crate::error::{Error, Result};
use crate::pq::{LeafData, TableReader};
use crate::schema::{self, articles as col, popular as pcol};
use crate::topics::Kind;

/// Null in an integer column.
const NULL: i64 = i64::MIN;

/// Strings packed end to end.
#[derive(Debug, Default)]
pub(crate) struct Strings {
    data: String,
    ends: Vec<u64>,
}

impl Strings {
    fn push(&mut self, s: &str) {
        self.data.push_str(s);
        self.ends.push(self.data.len() as u64);
    }

    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        let end = self.ends.get(i).map_or(start, |&e| e as usize);
        self.data.get(start..end).unwrap_or_default()
    }
}

/// Lists of small ids per row (interlanguage codes, prediction labels with scores).
#[derive(Debug, Default)]
pub(crate) struct Lists<T> {
    items: Vec<T>,
    ends: Vec<u32>,
}

impl<T> Lists<T> {
    pub fn get(&self, row: usize) -> &[T] {
        let start = if row == 0 {
            0
        } else {
            self.ends[row - 1] as usize
        };
        let end = self.ends.get(row).map_or(start, |&e| e as usize);
        self.items.get(start..end).unwrap_or_default()
    }

    fn end_row(&mut self) {
        self.ends
            .push(u32::try_from(self.items.len()).unwrap_or(u32::MAX));
    }
}

/// Values interned to small ids (language codes, labels).
#[derive(Debug, Default)]
pub(crate) struct Dictionary {
    values: Vec<String>,
    ids: HashMap<String, u16>,
}

impl Dictionary {
    fn intern(&mut self, value: &str) -> u16 {
        if let Some(&id) = self.ids.get(value) {
            return id;
        }
        let id = u16::try_from(self.values.len()).unwrap_or(u16::MAX);
        self.values.push(value.to_owned());
        self.ids.insert(value.to_owned(), id);
        id
    }

    pub fn value(&self, id: u16) -> &str {
        self.values.get(usize::from(id)).map_or("", String::as_str)
    }
}

/// One entry of the day's top list (`popular.parquet`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopEntry {
    pub rank: i32,
    pub article: String,
    pub views: i64,
    pub namespace: Option<i32>,
    pub title: Option<String>,
    pub page_id: Option<i64>,
    pub is_redirect: bool,
    pub redirect_target: Option<String>,
    pub page_len: Option<i64>,
    pub wikidata_id: Option<String>,
    pub disambiguation: bool,
    pub langlinks: Vec<String>,
}

/// Redirect title → (target title, the redirect page's own size), or why it could not be read.
type RedirectMap = std::result::Result<HashMap<String, (String, Option<i64>)>, String>;

/// An opened catalog.
#[derive(Debug)]
pub struct Catalog {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub(crate) page_ids: Vec<u64>,
    pub(crate) titles: Strings,
    pub(crate) wikidata: Vec<u64>,
    pub(crate) langs: Dictionary,
    pub(crate) langlinks: Lists<u16>,
    pub(crate) disambiguation: Vec<bool>,
    pub(crate) page_len: Vec<i64>,
    pub(crate) text_bytes: Vec<i64>,
    pub(crate) lead: Vec<i64>,
    pub(crate) pageviews: Vec<i64>,
    pub(crate) labels: Dictionary,
    pub(crate) topics: Lists<(u16, i16)>,
    pub(crate) countries: Lists<(u16, i16)>,
    pub(crate) has_tags: bool,
    pub(crate) has_views: bool,
    by_title: OnceLock<HashMap<u64, Vec<u32>>>,
    top: OnceLock<std::result::Result<Vec<TopEntry>, String>>,
    redirects: OnceLock<RedirectMap>,
}

fn title_hash(title: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(title)
}

fn int(leaf: &LeafData, at: Option<usize>) -> i64 {
    at.and_then(|i| leaf.i64_at(i)).unwrap_or(NULL)
}

impl Catalog {
    /// Opens the catalog in `dir`: its description and its articles.
    pub fn open(dir: &Path) -> Result<Self> {
        let manifest_path = dir.join(schema::MANIFEST);
        let bytes = std::fs::read(&manifest_path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::catalog(dir, "not a catalog folder (no catalog.json)")
            } else {
                Error::io(&manifest_path, e)
            }
        })?;
        let manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(|e| Error::catalog(&manifest_path, e))?;
        if manifest.format > schema::FORMAT_VERSION {
            return Err(Error::catalog(
                dir,
                format!(
                    "catalog format {} is newer than this version reads ({}): update wikisuggest",
                    manifest.format,
                    schema::FORMAT_VERSION
                ),
            ));
        }
        let mut catalog = Self {
            dir: dir.to_owned(),
            manifest,
            page_ids: Vec::new(),
            titles: Strings::default(),
            wikidata: Vec::new(),
            langs: Dictionary::default(),
            langlinks: Lists::default(),
            disambiguation: Vec::new(),
            page_len: Vec::new(),
            text_bytes: Vec::new(),
            lead: Vec::new(),
            pageviews: Vec::new(),
            labels: Dictionary::default(),
            topics: Lists::default(),
            countries: Lists::default(),
            has_tags: false,
            has_views: false,
            by_title: OnceLock::new(),
            top: OnceLock::new(),
            redirects: OnceLock::new(),
        };
        catalog.read_articles()?;
        Ok(catalog)
    }

    fn read_articles(&mut self) -> Result<()> {
        let reader = TableReader::open(&self.dir.join(schema::ARTICLES))?;
        let leaf = |name: &str| reader.leaf(name);
        let (id, title, qid) = (
            leaf(col::PAGE_ID)?,
            leaf(col::TITLE)?,
            leaf(col::WIKIDATA_ID)?,
        );
        let lang = leaf("langlinks.list.element.lang")?;
        let (dis, len, bytes, lead, views) = (
            leaf(col::DISAMBIGUATION)?,
            leaf(col::PAGE_LEN)?,
            leaf(col::TEXT_BYTES)?,
            leaf(col::LEAD_SECTION_SIZE)?,
            leaf(col::PAGEVIEWS)?,
        );
        let tags = [
            (
                leaf("topics.list.element.label")?,
                leaf("topics.list.element.score")?,
            ),
            (
                leaf("countries.list.element.label")?,
                leaf("countries.list.element.score")?,
            ),
        ];
        let rows = usize::try_from(reader.rows()).unwrap_or(0);
        self.page_ids.reserve(rows);
        for group in 0..reader.row_groups() {
            let ids = reader.read(group, id)?;
            let titles = reader.read(group, title)?;
            let qids = reader.read(group, qid)?;
            let langs = reader.read(group, lang)?;
            let dis = reader.read(group, dis)?;
            let numbers = [
                reader.read(group, len)?,
                reader.read(group, bytes)?,
                reader.read(group, lead)?,
                reader.read(group, views)?,
            ];
            let flat: Vec<Vec<Option<usize>>> = numbers.iter().map(LeafData::flat).collect();
            let (id_at, title_at, qid_at, dis_at) =
                (ids.flat(), titles.flat(), qids.flat(), dis.flat());
            let lang_rows = langs.lists();
            let mut tag_rows = Vec::new();
            for (label, score) in &tags {
                let labels = reader.read(group, *label)?;
                let scores = reader.read(group, *score)?;
                let lists = labels.lists();
                tag_rows.push((labels, scores, lists));
            }
            for r in 0..id_at.len() {
                self.page_ids
                    .push(u64::try_from(int(&ids, id_at[r])).unwrap_or_default());
                self.titles.push(
                    title_at[r]
                        .and_then(|i| titles.str_at(i))
                        .unwrap_or_default(),
                );
                self.wikidata.push(
                    qid_at[r]
                        .and_then(|i| qids.str_at(i))
                        .and_then(parse_qid)
                        .unwrap_or(0),
                );
                for i in lang_rows.get(r).cloned().flatten().unwrap_or_default() {
                    let code = langs.str_at(i).unwrap_or_default();
                    let id = self.langs.intern(code);
                    self.langlinks.items.push(id);
                }
                self.langlinks.end_row();
                self.disambiguation
                    .push(dis_at[r].and_then(|i| dis.bool_at(i)).unwrap_or(false));
                self.page_len.push(int(&numbers[0], flat[0][r]));
                self.text_bytes.push(int(&numbers[1], flat[1][r]));
                self.lead.push(int(&numbers[2], flat[2][r]));
                self.pageviews.push(int(&numbers[3], flat[3][r]));
                for (k, (labels, scores, lists)) in tag_rows.iter().enumerate() {
                    let target = if k == 0 {
                        &mut self.topics
                    } else {
                        &mut self.countries
                    };
                    if let Some(Some(range)) = lists.get(r) {
                        self.has_tags = true;
                        for i in range.clone() {
                            let label = self.labels.intern(labels.str_at(i).unwrap_or_default());
                            let score = scores
                                .i64_at(i)
                                .and_then(|s| i16::try_from(s).ok())
                                .unwrap_or(0);
                            target.items.push((label, score));
                        }
                    }
                    target.end_row();
                }
                if flat[3][r].is_some() {
                    self.has_views = true;
                }
            }
        }
        if self.page_ids.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::catalog(
                reader.path(),
                "articles are not in increasing page-id order",
            ));
        }
        Ok(())
    }

    /// Articles in the catalog.
    pub fn len(&self) -> usize {
        self.page_ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.page_ids.is_empty()
    }

    /// Every interlanguage-link code the catalog's articles use.
    pub fn link_codes(&self) -> impl Iterator<Item = &str> {
        self.langs.values.iter().map(String::as_str)
    }

    /// The interlanguage-link code of the catalog's wiki (`en`).
    pub fn language(&self) -> &str {
        &self.manifest.language
    }

    pub fn has_part(&self, part: &str) -> bool {
        self.manifest.parts.iter().any(|p| p == part)
    }

    /// The row of a page id.
    pub fn row_of_page(&self, page_id: u64) -> Option<usize> {
        self.page_ids.binary_search(&page_id).ok()
    }

    /// The row of an article title (spaces or underscores; not normalised otherwise).
    pub fn row_of_title(&self, title: &str) -> Option<usize> {
        let title = title.replace('_', " ");
        let index = self.by_title.get_or_init(|| {
            let mut map: HashMap<u64, Vec<u32>> = HashMap::with_capacity(self.len());
            for row in 0..self.len() {
                map.entry(title_hash(self.titles.get(row)))
                    .or_default()
                    .push(u32::try_from(row).unwrap_or(u32::MAX));
            }
            map
        });
        index
            .get(&title_hash(&title))?
            .iter()
            .map(|&r| r as usize)
            .find(|&r| self.titles.get(r) == title)
    }

    pub fn page_id(&self, row: usize) -> u64 {
        self.page_ids[row]
    }

    pub fn title(&self, row: usize) -> &str {
        self.titles.get(row)
    }

    pub fn wikidata_id(&self, row: usize) -> Option<String> {
        let q = self.wikidata[row];
        (q != 0).then(|| format!("Q{q}"))
    }

    pub fn langlink_codes(&self, row: usize) -> impl Iterator<Item = &str> {
        self.langlinks
            .get(row)
            .iter()
            .map(|&id| self.langs.value(id))
    }

    pub fn langlinks_count(&self, row: usize) -> usize {
        self.langlinks.get(row).len()
    }

    pub fn is_disambiguation(&self, row: usize) -> bool {
        self.disambiguation[row]
    }

    fn value(column: &[i64], row: usize) -> Option<i64> {
        column.get(row).copied().filter(|&v| v != NULL)
    }

    pub fn page_len(&self, row: usize) -> Option<i64> {
        Self::value(&self.page_len, row)
    }

    pub fn text_bytes(&self, row: usize) -> Option<i64> {
        Self::value(&self.text_bytes, row)
    }

    pub fn lead_section_size(&self, row: usize) -> Option<i64> {
        Self::value(&self.lead, row)
    }

    pub fn pageviews(&self, row: usize) -> Option<i64> {
        Self::value(&self.pageviews, row)
    }

    /// The labels of a row's predictions of one kind.
    pub fn labels(&self, kind: Kind, row: usize) -> Vec<&str> {
        let lists = match kind {
            Kind::Topic => &self.topics,
            Kind::Country => &self.countries,
        };
        lists
            .get(row)
            .iter()
            .map(|&(id, _)| self.labels.value(id))
            .collect()
    }

    /// Missing in `target` (production's rule on the row's interlanguage links).
    pub fn is_missing(&self, row: usize, target: &str) -> bool {
        crate::wiki::is_missing(target, self.langlink_codes(row))
    }

    /// The day's top list (`pageviews` part).
    pub fn top_list(&self) -> Result<&[TopEntry]> {
        if !self.has_part("pageviews") {
            return Err(Error::MissingPart(
                "popular mode needs the catalog's `pageviews` part".to_owned(),
            ));
        }
        self.top
            .get_or_init(|| read_top(&self.dir.join(schema::POPULAR)).map_err(|e| e.to_string()))
            .as_deref()
            .map_err(|e| Error::catalog(&self.dir, e))
    }

    fn redirect(&self, title: &str) -> Result<Option<&(String, Option<i64>)>> {
        let map = self
            .redirects
            .get_or_init(|| {
                read_redirects(&self.dir.join(schema::REDIRECTS)).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| Error::catalog(&self.dir, e))?;
        Ok(map.get(&title.replace('_', " ")))
    }

    /// The target of a redirect title (spaces), from `redirects.parquet`.
    pub fn redirect_target(&self, title: &str) -> Result<Option<&str>> {
        Ok(self.redirect(title)?.map(|(target, _)| target.as_str()))
    }

    /// The size of the page of a title: an article's, or a redirect page's own.
    pub fn page_len_of_title(&self, title: &str) -> Result<Option<i64>> {
        if let Some(row) = self.row_of_title(title) {
            return Ok(self.page_len(row));
        }
        Ok(self.redirect(title)?.and_then(|(_, len)| *len))
    }

    /// The rows of the articles in category `name` (with or without its `Category:`
    /// prefix), as the search index lists categories (`cirrus` part).
    pub fn rows_in_category(&self, name: &str) -> Result<std::collections::HashSet<usize>> {
        if !self.has_part("cirrus") {
            return Err(Error::MissingPart(
                "category filters need the catalog's `cirrus` part".to_owned(),
            ));
        }
        let mut name = name.replace('_', " ").trim().to_owned();
        if let Some((prefix, rest)) = name.split_once(':')
            && prefix.trim().eq_ignore_ascii_case("category")
        {
            name = rest.trim().to_owned();
        }
        let name = crate::sources::site::upper_first(&name);
        let reader = TableReader::open(&self.dir.join(schema::ARTICLES))?;
        let leaf = reader.leaf(&format!("{}.list.element", col::CATEGORIES))?;
        let mut rows = std::collections::HashSet::new();
        let mut base = 0usize;
        for group in 0..reader.row_groups() {
            let data = reader.read(group, leaf)?;
            let lists = data.lists();
            for (r, list) in lists.iter().enumerate() {
                if list
                    .clone()
                    .into_iter()
                    .flatten()
                    .any(|i| data.str_at(i) == Some(name.as_str()))
                {
                    rows.insert(base + r);
                }
            }
            base += lists.len();
        }
        Ok(rows)
    }

    /// The row of a title, following a redirect.
    pub fn resolve_title(&self, title: &str) -> Result<Option<usize>> {
        if let Some(row) = self.row_of_title(title) {
            return Ok(Some(row));
        }
        Ok(self
            .redirect_target(title)?
            .and_then(|target| self.row_of_title(target)))
    }
}

/// `Q42` → 42.
pub(crate) fn parse_qid(qid: &str) -> Option<u64> {
    qid.strip_prefix('Q')
        .or_else(|| qid.strip_prefix('q'))
        .and_then(|n| n.parse().ok())
        .filter(|&n| n != 0)
}

// A row is read from several columns at once: its index is the natural loop variable.
#[allow(clippy::needless_range_loop)]
fn read_top(path: &Path) -> Result<Vec<TopEntry>> {
    let reader = TableReader::open(path)?;
    let mut out = Vec::new();
    let names = [
        pcol::RANK,
        pcol::ARTICLE,
        pcol::VIEWS,
        pcol::NAMESPACE,
        pcol::TITLE,
        pcol::PAGE_ID,
        pcol::IS_REDIRECT,
        pcol::REDIRECT_TARGET,
        pcol::PAGE_LEN,
        pcol::WIKIDATA_ID,
        pcol::DISAMBIGUATION,
    ];
    let leaves = names
        .iter()
        .map(|n| reader.leaf(n))
        .collect::<Result<Vec<_>>>()?;
    let links_leaf = reader.leaf(&format!("{}.list.element", pcol::LANGLINKS))?;
    for group in 0..reader.row_groups() {
        let data = leaves
            .iter()
            .map(|&l| reader.read(group, l))
            .collect::<Result<Vec<_>>>()?;
        let at: Vec<Vec<Option<usize>>> = data.iter().map(LeafData::flat).collect();
        let links = reader.read(group, links_leaf)?;
        let link_rows = links.lists();
        let rows = at[0].len();
        for r in 0..rows {
            let i = |k: usize| at[k][r].and_then(|i| data[k].i64_at(i));
            let s = |k: usize| at[k][r].and_then(|i| data[k].str_at(i)).map(str::to_owned);
            let b = |k: usize| at[k][r].and_then(|i| data[k].bool_at(i)).unwrap_or(false);
            out.push(TopEntry {
                rank: i32::try_from(i(0).unwrap_or(0)).unwrap_or(0),
                article: s(1).unwrap_or_default(),
                views: i(2).unwrap_or(0),
                namespace: i(3).and_then(|n| i32::try_from(n).ok()),
                title: s(4),
                page_id: i(5),
                is_redirect: b(6),
                redirect_target: s(7),
                page_len: i(8),
                wikidata_id: s(9),
                disambiguation: b(10),
                langlinks: link_rows
                    .get(r)
                    .cloned()
                    .flatten()
                    .unwrap_or_default()
                    .filter_map(|i| links.str_at(i).map(str::to_owned))
                    .collect(),
            });
        }
    }
    Ok(out)
}

fn read_redirects(path: &Path) -> Result<HashMap<String, (String, Option<i64>)>> {
    use schema::redirects as rcol;
    let reader = TableReader::open(path)?;
    let (title, target, len) = (
        reader.leaf(rcol::TITLE)?,
        reader.leaf(rcol::TARGET)?,
        reader.leaf(rcol::PAGE_LEN)?,
    );
    let mut map = HashMap::with_capacity(usize::try_from(reader.rows()).unwrap_or(0));
    for group in 0..reader.row_groups() {
        let titles = reader.read(group, title)?;
        let targets = reader.read(group, target)?;
        let lens = reader.read(group, len)?;
        let (a, b, c) = (titles.flat(), targets.flat(), lens.flat());
        for r in 0..a.len() {
            if let (Some(t), Some(to)) = (
                a[r].and_then(|i| titles.str_at(i)),
                b[r].and_then(|i| targets.str_at(i)),
            ) {
                let size = c[r].and_then(|i| lens.i64_at(i));
                map.insert(t.to_owned(), (to.to_owned(), size));
            }
        }
    }
    Ok(map)
}
