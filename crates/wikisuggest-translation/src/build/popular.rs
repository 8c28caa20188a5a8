//! The day's views: summed per title, and the top list production's popular mode reads.
//!
//! Production asks MediaWiki's `generator=mostviewed`, which reads the Pageview API's `top`
//! list of the last complete day (user agent, all access methods, 1000 titles, most viewed
//! first) and resolves each title as a page title. Here the list is the 1000 titles with the
//! largest day's sums in the `pageview_complete` file, ties by title; each is placed
//! (namespace, stored form) and resolved against the `page` table during the table merge.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

use wikisuggest_engine::extsort::Sorter;

use super::codec::{RecordReader, RecordWriter};
use super::{BuildOptions, Counts, check_cancel};
use crate::error::{Error, Result};
use crate::pq::{TableWriter, Value};
use crate::schema::{self, popular as col};
use crate::sources::pageviews::read_day;
use crate::sources::site::Placed;

/// Titles on the Pageview API's daily top list.
pub const TOP_LIST_LENGTH: usize = 1000;

/// The views read: the top list, and every title's sum in a work file in title order.
pub(crate) struct Views {
    /// (title as the file spells it, views), most viewed first.
    pub top: Vec<(String, u64)>,
    /// `RecordWriter` records of `title bytes ++ views (u64 LE, last 8 bytes)`.
    pub file: PathBuf,
}

/// A top-list title found in the `page` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub page_id: u64,
    pub is_redirect: bool,
    /// For a redirect to an article: the article's title (spaces).
    pub redirect_target: Option<String>,
    pub len: Option<u64>,
    pub wikidata_id: Option<String>,
    pub disambiguation: bool,
    pub langlinks: Vec<String>,
}

/// A top-list entry: where MediaWiki places its title, and the page it names.
#[derive(Debug, Clone, Default)]
pub(crate) struct Entry {
    pub place: Option<Placed>,
    pub page: Option<Resolved>,
}

pub(crate) fn read_views(
    path: &Path,
    project: &str,
    work: &Path,
    budget: usize,
    options: &BuildOptions,
    counts: &mut Counts,
) -> Result<Views> {
    let io = |e: std::io::Error| Error::io(work, e);
    let mut sorter = Sorter::new(work, "views", budget);
    let progress = &options.progress;
    read_day(path, project, &options.cancel, |title, views| {
        progress.add(1);
        sorter
            .push(title, &views.to_le_bytes())
            .map_err(|e| Error::io(work, e))
    })?;
    check_cancel(&options.cancel)?;
    let mut sorted = sorter.finish().map_err(io)?;
    let file = work.join("views.records");
    let mut out = RecordWriter(BufWriter::with_capacity(
        1 << 20,
        File::create(&file).map_err(io)?,
    ));
    // Smallest first: fewest views, then the title that sorts last.
    let mut heap: BinaryHeap<Reverse<(u64, Reverse<Vec<u8>>)>> = BinaryHeap::new();
    let mut current: Option<(Vec<u8>, u64)> = None;
    let mut record = Vec::new();
    let mut flush = |title: Vec<u8>, total: u64, out: &mut RecordWriter<BufWriter<File>>| {
        record.clear();
        record.extend_from_slice(&title);
        record.extend_from_slice(&total.to_le_bytes());
        out.write(&record)?;
        heap.push(Reverse((total, Reverse(title))));
        if heap.len() > TOP_LIST_LENGTH {
            heap.pop();
        }
        std::io::Result::Ok(())
    };
    while let Some(r) = sorted.next().map_err(io)? {
        let views = r
            .payload
            .try_into()
            .map(u64::from_le_bytes)
            .unwrap_or_default();
        match &mut current {
            Some((title, total)) if title.as_slice() == r.key => *total += views,
            _ => {
                if let Some((title, total)) = current.take() {
                    counts.viewed_titles += 1;
                    flush(title, total, &mut out).map_err(io)?;
                }
                current = Some((r.key.to_vec(), views));
            }
        }
    }
    if let Some((title, total)) = current.take() {
        counts.viewed_titles += 1;
        flush(title, total, &mut out).map_err(io)?;
    }
    out.0.into_inner().map_err(|e| io(e.into_error()))?;
    let mut top: Vec<(u64, Vec<u8>)> = heap
        .into_iter()
        .map(|Reverse((views, Reverse(title)))| (views, title))
        .collect();
    top.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let top = top
        .into_iter()
        .map(|(views, title)| (String::from_utf8_lossy(&title).into_owned(), views))
        .collect();
    Ok(Views { top, file })
}

/// Reads the records of [`Views::file`] in title order.
pub(crate) struct ViewsReader(RecordReader<BufReader<File>>);

impl ViewsReader {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(Self(RecordReader::new(BufReader::with_capacity(
            1 << 20,
            file,
        ))))
    }

    /// The next (title, views).
    pub fn next_title(&mut self) -> std::io::Result<Option<(Vec<u8>, u64)>> {
        Ok(self.0.next_record()?.and_then(|r| {
            let split = r.len().checked_sub(8)?;
            let views = u64::from_le_bytes(r[split..].try_into().ok()?);
            Some((r[..split].to_vec(), views))
        }))
    }
}

/// Writes `popular.parquet`: the top list, each title placed and resolved.
pub(crate) fn write_popular(path: &Path, top: &[(String, u64)], entries: &[Entry]) -> Result<()> {
    let mut w = TableWriter::create(path, schema::POPULAR_SCHEMA)?;
    let leaf = |w: &TableWriter, name: &str| w.leaf(name);
    let rank = leaf(&w, col::RANK)?;
    let article = leaf(&w, col::ARTICLE)?;
    let views_leaf = leaf(&w, col::VIEWS)?;
    let namespace = leaf(&w, col::NAMESPACE)?;
    let title = leaf(&w, col::TITLE)?;
    let page_id = leaf(&w, col::PAGE_ID)?;
    let is_redirect = leaf(&w, col::IS_REDIRECT)?;
    let target = leaf(&w, col::REDIRECT_TARGET)?;
    let page_len = leaf(&w, col::PAGE_LEN)?;
    let wikidata = leaf(&w, col::WIKIDATA_ID)?;
    let disambiguation = leaf(&w, col::DISAMBIGUATION)?;
    let langlinks = leaf(&w, &format!("{}.list.element", col::LANGLINKS))?;
    let empty = Entry::default();
    for (i, (raw, views)) in top.iter().enumerate() {
        let entry = entries.get(i).unwrap_or(&empty);
        let page = entry.page.as_ref();
        w.flat(
            rank,
            Some(Value::I32(i32::try_from(i + 1).unwrap_or(i32::MAX))),
        );
        w.flat(article, Some(Value::Str(raw)));
        w.flat(
            views_leaf,
            Some(Value::I64(i64::try_from(*views).unwrap_or(i64::MAX))),
        );
        w.flat(
            namespace,
            entry.place.as_ref().map(|p| Value::I32(p.namespace)),
        );
        w.flat(title, entry.place.as_ref().map(|p| Value::Str(&p.text)));
        w.flat(
            page_id,
            page.map(|p| Value::I64(i64::try_from(p.page_id).unwrap_or(i64::MAX))),
        );
        w.flat(
            is_redirect,
            Some(Value::Bool(page.is_some_and(|p| p.is_redirect))),
        );
        w.flat(
            target,
            page.and_then(|p| p.redirect_target.as_deref())
                .map(Value::Str),
        );
        w.flat(
            page_len,
            page.and_then(|p| p.len)
                .map(|n| Value::I64(i64::try_from(n).unwrap_or(i64::MAX))),
        );
        w.flat(
            wikidata,
            page.and_then(|p| p.wikidata_id.as_deref()).map(Value::Str),
        );
        w.flat(
            disambiguation,
            Some(Value::Bool(page.is_some_and(|p| p.disambiguation))),
        );
        let links: &[String] = page.map(|p| p.langlinks.as_slice()).unwrap_or_default();
        w.list(
            &[langlinks],
            Some(links.iter().map(|l| vec![Value::Str(l)])),
        );
        w.end_row()?;
    }
    w.finish()?;
    Ok(())
}
