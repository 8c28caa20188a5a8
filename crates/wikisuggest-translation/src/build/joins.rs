//! Steps 3 and 4 of the build: the SQL tables merged on the page id, then the joins on titles.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wikisuggest_engine::extsort::{Sorted, Sorter};

use super::codec::{Dec, Enc, RecordWriter};
use super::popular::{Entry, Resolved, ViewsReader};
use super::{BuildOptions, Counts, SqlSources, check_cancel};
use crate::error::{Error, Result};
use crate::pq::{TableWriter, Value};
use crate::schema::{self, redirects as rcol};
use crate::sources::site::Site;
use crate::sources::tables::{self, Prop};

/// What the table merge leaves for the next steps.
pub(crate) struct Tables {
    /// The articles in page-id order (records of [`ArticleRecord`]).
    pub articles: PathBuf,
    /// Article titles (stored form) → page id (u64 LE).
    pub titles: Sorter,
    /// Redirect targets (stored form) → the redirect's title (spaces).
    pub redirect_pairs: Sorter,
    /// The top list's entries, placed and resolved.
    pub placed: Vec<Entry>,
}

/// An article as the merge writes it to the work file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ArticleRecord {
    pub page_id: u64,
    /// Spaces, not underscores.
    pub title: String,
    pub len: Option<i64>,
    pub wikidata_id: Option<String>,
    pub disambiguation: bool,
    /// (language code, title) per interlanguage link.
    pub langlinks: Vec<(String, String)>,
}

impl ArticleRecord {
    pub fn encode(&self, e: &mut Enc) {
        e.clear();
        e.u64(self.page_id)
            .bytes(self.title.as_bytes())
            .opt_i64(self.len)
            .opt_bytes(self.wikidata_id.as_deref().map(str::as_bytes))
            .u8(u8::from(self.disambiguation))
            .u32(u32::try_from(self.langlinks.len()).unwrap_or(u32::MAX));
        for (lang, title) in &self.langlinks {
            e.bytes(lang.as_bytes()).bytes(title.as_bytes());
        }
    }

    pub fn decode(data: &[u8]) -> std::io::Result<Self> {
        let mut d = Dec::new(data);
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let page_id = d.u64()?;
        let title = text(d.bytes()?);
        let len = d.opt_i64()?;
        let wikidata_id = d.opt_bytes()?.map(text);
        let disambiguation = d.u8()? == 1;
        let n = d.u32()?;
        let mut langlinks = Vec::with_capacity(n.min(1024) as usize);
        for _ in 0..n {
            let lang = text(d.bytes()?);
            langlinks.push((lang, text(d.bytes()?)));
        }
        Ok(Self {
            page_id,
            title,
            len,
            wikidata_id,
            disambiguation,
            langlinks,
        })
    }
}

/// A stored title (underscores) as MediaWiki writes it (spaces).
pub(crate) fn display(dbkey: &[u8]) -> String {
    String::from_utf8_lossy(dbkey).replace('_', " ")
}

/// Step 3: `page` ⋈ `page_props` ⋈ `langlinks` ⋈ `redirect` on the page id.
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge_tables(
    sql: &SqlSources,
    site: &Site,
    top: &[(String, u64)],
    work: &Path,
    out: &Path,
    budget: usize,
    options: &BuildOptions,
    counts: &mut Counts,
) -> Result<Tables> {
    let cancel = Arc::clone(&options.cancel);
    let mut pages = tables::pages(&sql.page, Arc::clone(&cancel));
    let mut props = tables::props(&sql.page_props, Arc::clone(&cancel));
    let mut links = tables::langlinks(&sql.langlinks, Arc::clone(&cancel));
    let mut redirects = tables::redirects(&sql.redirect, Arc::clone(&cancel));

    let mut placed: Vec<Entry> = top
        .iter()
        .map(|(raw, _)| Entry {
            place: site.place(raw),
            page: None,
        })
        .collect();
    let mut wanted: HashMap<(i32, Vec<u8>), Vec<usize>> = HashMap::new();
    for (i, entry) in placed.iter().enumerate() {
        if let Some(p) = &entry.place {
            wanted
                .entry((p.namespace, p.dbkey.as_bytes().to_vec()))
                .or_default()
                .push(i);
        }
    }

    let io = |e: std::io::Error| Error::io(work, e);
    let articles_path = work.join("articles.records");
    let mut articles = RecordWriter(BufWriter::with_capacity(
        1 << 20,
        File::create(&articles_path).map_err(io)?,
    ));
    let mut titles = Sorter::new(work, "titles", budget);
    let mut pairs = Sorter::new(work, "redirect-targets", budget);
    let redirects_path = out.join(schema::REDIRECTS);
    let mut redirect_table = TableWriter::create(&redirects_path, schema::REDIRECTS_SCHEMA)?;
    let (r_title, r_target, r_len) = (
        redirect_table.leaf(rcol::TITLE)?,
        redirect_table.leaf(rcol::TARGET)?,
        redirect_table.leaf(rcol::PAGE_LEN)?,
    );
    let mut enc = Enc::default();
    let mut seen = 0u64;
    while let Some(page) = pages.next_row()? {
        seen += 1;
        if seen.is_multiple_of(65536) {
            options.progress.add(65536);
            check_cancel(&options.cancel)?;
        }
        let mut wikidata_id = None;
        let mut disambiguation = false;
        props.take_key(
            page.id,
            |r| r.page,
            |r| match r.prop {
                Prop::WikibaseItem => {
                    wikidata_id = Some(String::from_utf8_lossy(&r.value).into_owned());
                }
                Prop::Disambiguation => disambiguation = true,
            },
        )?;
        let mut langlinks = Vec::new();
        links.take_key(
            page.id,
            |r| r.from,
            |r| {
                langlinks.push((r.lang, String::from_utf8_lossy(&r.title).into_owned()));
            },
        )?;
        let mut redirect = None;
        redirects.take_key(page.id, |r| r.from, |r| redirect = Some(r))?;
        let article = page.namespace == 0 && !page.is_redirect;
        let target = redirect
            .as_ref()
            .filter(|r| page.is_redirect && r.namespace == 0 && !r.interwiki);
        if let Some(ranks) = wanted.get(&(page.namespace, page.title.clone())) {
            let resolved = Resolved {
                page_id: page.id,
                is_redirect: page.is_redirect,
                redirect_target: target.map(|r| display(&r.title)),
                len: page.len,
                wikidata_id: wikidata_id.clone(),
                disambiguation,
                langlinks: langlinks.iter().map(|(l, _)| l.clone()).collect(),
            };
            for &rank in ranks {
                if let Some(entry) = placed.get_mut(rank) {
                    entry.page = Some(resolved.clone());
                }
            }
        }
        if article {
            counts.articles += 1;
            counts.with_wikidata_id += u64::from(wikidata_id.is_some());
            counts.disambiguations += u64::from(disambiguation);
            counts.langlinks += langlinks.len() as u64;
            let record = ArticleRecord {
                page_id: page.id,
                title: display(&page.title),
                len: page.len.and_then(|n| i64::try_from(n).ok()),
                wikidata_id,
                disambiguation,
                langlinks,
            };
            record.encode(&mut enc);
            articles.write(&enc.0).map_err(io)?;
            titles
                .push(&page.title, &page.id.to_le_bytes())
                .map_err(io)?;
        } else if page.namespace == 0
            && let Some(target) = target
        {
            counts.redirects += 1;
            let title = display(&page.title);
            let to = display(&target.title);
            redirect_table.flat(r_title, Some(Value::Str(&title)));
            redirect_table.flat(r_target, Some(Value::Str(&to)));
            redirect_table.flat(
                r_len,
                page.len.and_then(|n| i64::try_from(n).ok()).map(Value::I64),
            );
            redirect_table.end_row()?;
            pairs.push(&target.title, title.as_bytes()).map_err(io)?;
        }
    }
    redirect_table.finish()?;
    articles.0.into_inner().map_err(|e| io(e.into_error()))?;
    Ok(Tables {
        articles: articles_path,
        titles,
        redirect_pairs: pairs,
        placed,
    })
}

/// What step 4 gives each article: its redirects and its views.
pub(crate) struct Extras {
    pub redirects: Vec<String>,
    pub views: Option<u64>,
}

impl Extras {
    pub fn encode(&self, e: &mut Enc) {
        e.clear();
        e.opt_i64(self.views.map(|v| i64::try_from(v).unwrap_or(i64::MAX)))
            .u32(u32::try_from(self.redirects.len()).unwrap_or(u32::MAX));
        for r in &self.redirects {
            e.bytes(r.as_bytes());
        }
    }

    pub fn decode(data: &[u8]) -> std::io::Result<Self> {
        let mut d = Dec::new(data);
        let views = d.opt_i64()?.and_then(|v| u64::try_from(v).ok());
        let n = d.u32()?;
        let mut redirects = Vec::with_capacity(n.min(1024) as usize);
        for _ in 0..n {
            redirects.push(String::from_utf8_lossy(d.bytes()?).into_owned());
        }
        Ok(Self { redirects, views })
    }
}

/// Step 4: articles' titles ⋈ redirect targets ⋈ views on the title; the result sorted by
/// page id (big-endian keys).
pub(crate) fn title_joins(
    titles: Sorter,
    pairs: Sorter,
    views: Option<&Path>,
    work: &Path,
    budget: usize,
    options: &BuildOptions,
    counts: &mut Counts,
) -> Result<Sorted> {
    let io = |e: std::io::Error| Error::io(work, e);
    let mut titles = titles.finish().map_err(io)?;
    let mut pairs = pairs.finish().map_err(io)?;
    let mut views = views.map(ViewsReader::open).transpose()?;
    let mut next_view = match &mut views {
        Some(v) => v.next_title().map_err(io)?,
        None => None,
    };
    let mut next_pair: Option<(Vec<u8>, String)> = pairs.next().map_err(io)?.map(|r| {
        (
            r.key.to_vec(),
            String::from_utf8_lossy(r.payload).into_owned(),
        )
    });
    let mut extras = Sorter::new(work, "extras", budget);
    let mut enc = Enc::default();
    let mut n = 0u64;
    while let Some(record) = titles.next().map_err(io)? {
        n += 1;
        if n.is_multiple_of(65536) {
            options.progress.add(65536);
            check_cancel(&options.cancel)?;
        }
        let title = record.key;
        let page_id = record
            .payload
            .try_into()
            .map(u64::from_le_bytes)
            .unwrap_or_default();
        let mut redirects = Vec::new();
        while let Some((key, redirect)) = &next_pair {
            match key.as_slice().cmp(title) {
                std::cmp::Ordering::Greater => break,
                std::cmp::Ordering::Equal => redirects.push(redirect.clone()),
                // A redirect to a title with no article: it points nowhere.
                std::cmp::Ordering::Less => {}
            }
            next_pair = pairs.next().map_err(io)?.map(|r| {
                (
                    r.key.to_vec(),
                    String::from_utf8_lossy(r.payload).into_owned(),
                )
            });
        }
        let mut seen_views = None;
        while let (Some(v), Some((key, count))) = (views.as_mut(), &next_view) {
            match key.as_slice().cmp(title) {
                std::cmp::Ordering::Greater => break,
                std::cmp::Ordering::Equal => seen_views = Some(*count),
                std::cmp::Ordering::Less => {}
            }
            next_view = v.next_title().map_err(io)?;
        }
        if redirects.is_empty() && seen_views.is_none() {
            continue;
        }
        redirects.sort();
        Extras {
            redirects,
            views: seen_views,
        }
        .encode(&mut enc);
        extras.push(&page_id.to_be_bytes(), &enc.0).map_err(io)?;
    }
    let _ = counts;
    extras.finish().map_err(io)
}
