//! Step 2 (the search documents, read on several threads) and step 5 (the articles written).

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use wikisuggest_engine::extsort::{Sorted, Sorter};

use super::codec::{Dec, Enc, RecordReader};
use super::joins::{ArticleRecord, Extras};
use super::{BuildOptions, Counts, check_cancel};
use crate::error::{Error, Result};
use crate::pq::{TableWriter, Value};
use crate::schema::{self, articles as col};
use crate::similar::IndexSink;
use crate::sources::cirrus::{Summary, read_shard};

fn encode_summary(s: &Summary, e: &mut Enc) {
    e.clear();
    e.opt_i64(s.text_bytes).opt_i64(s.lead_section_size);
    for tags in [&s.topics, &s.countries] {
        e.u32(u32::try_from(tags.len()).unwrap_or(u32::MAX));
        for (label, score) in tags {
            e.bytes(label.as_bytes()).i16(*score);
        }
    }
    e.u32(u32::try_from(s.categories.len()).unwrap_or(u32::MAX));
    for c in &s.categories {
        e.bytes(c.as_bytes());
    }
}

fn decode_summary(page_id: u64, data: &[u8]) -> std::io::Result<Summary> {
    let mut d = Dec::new(data);
    let text_bytes = d.opt_i64()?;
    let lead_section_size = d.opt_i64()?;
    let mut lists = [Vec::new(), Vec::new()];
    for list in &mut lists {
        let n = d.u32()?;
        for _ in 0..n {
            let label = String::from_utf8_lossy(d.bytes()?).into_owned();
            list.push((label, d.i16()?));
        }
    }
    let [topics, countries] = lists;
    let n = d.u32()?;
    let mut categories = Vec::with_capacity(n.min(1024) as usize);
    for _ in 0..n {
        categories.push(String::from_utf8_lossy(d.bytes()?).into_owned());
    }
    Ok(Summary {
        page_id,
        text_bytes,
        lead_section_size,
        topics,
        countries,
        categories,
    })
}

/// Step 2: every shard read (several at once), each document's summary sorted by page id
/// and the document handed to `sink`.
pub(crate) fn read_search(
    shards: &[PathBuf],
    work: &Path,
    budget: usize,
    sink: Option<&dyn IndexSink>,
    options: &BuildOptions,
    counts: &mut Counts,
) -> Result<Sorted> {
    let sorter = Mutex::new(Sorter::new(work, "search", budget));
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let documents = AtomicUsize::new(0);
    let threads = options.threads.clamp(1, shards.len().max(1));
    // A shard's reader stops on the build's cancel flag or another shard's failure.
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut enc = Enc::default();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = shards.get(i) else { break };
                    if failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let outcome = read_shard(path, &stop, |summary, doc| {
                        if options.cancel.load(Ordering::Relaxed) {
                            return Err(Error::Cancelled);
                        }
                        encode_summary(&summary, &mut enc);
                        sorter
                            .lock()
                            .map_err(|_| Error::Cancelled)?
                            .push(&summary.page_id.to_be_bytes(), &enc.0)
                            .map_err(|e| Error::io(work, e))?;
                        if let Some(sink) = sink {
                            sink.add(doc).map_err(Error::Search)?;
                        }
                        documents.fetch_add(1, Ordering::Relaxed);
                        options.progress.add(1);
                        Ok(())
                    });
                    if let Err(e) = outcome {
                        failed.store(true, Ordering::Relaxed);
                        stop.store(true, Ordering::Relaxed);
                        if let Ok(mut slot) = first_error.lock()
                            && slot.is_none()
                        {
                            *slot = Some(e);
                        }
                        break;
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    check_cancel(&options.cancel)?;
    counts.search_documents = documents.load(Ordering::Relaxed) as u64;
    let sorter = sorter.into_inner().map_err(|_| Error::Cancelled)?;
    sorter.finish().map_err(|e| Error::io(work, e))
}

/// A page-id-ordered stream (big-endian keys) read alongside the articles.
struct Beside {
    sorted: Sorted,
    next: Option<(u64, Vec<u8>)>,
}

impl Beside {
    fn new(mut sorted: Sorted) -> std::io::Result<Self> {
        let next = Self::pull(&mut sorted)?;
        Ok(Self { sorted, next })
    }

    fn pull(sorted: &mut Sorted) -> std::io::Result<Option<(u64, Vec<u8>)>> {
        Ok(sorted.next()?.map(|r| {
            let id = r.key.try_into().map(u64::from_be_bytes).unwrap_or_default();
            (id, r.payload.to_vec())
        }))
    }

    /// The payload for `page_id` (the first, if several), skipping lower ids; `skipped`
    /// counts the records that matched no article.
    fn take(&mut self, page_id: u64, skipped: &mut u64) -> std::io::Result<Option<Vec<u8>>> {
        let mut found = None;
        while let Some((id, _)) = &self.next {
            if *id > page_id {
                break;
            }
            let (id, payload) = self.next.take().unwrap_or_default();
            if id == page_id {
                if found.is_none() {
                    found = Some(payload);
                }
            } else {
                *skipped += 1;
            }
            self.next = Self::pull(&mut self.sorted)?;
        }
        Ok(found)
    }
}

/// Step 5: the articles with their search summaries and title-joined extras, by page id.
pub(crate) fn write_articles(
    articles: &Path,
    extras: Sorted,
    search: Option<Sorted>,
    with_views: bool,
    out: &Path,
    options: &BuildOptions,
) -> Result<u64> {
    let io = |e: std::io::Error| Error::io(articles, e);
    let mut reader = RecordReader::new(BufReader::with_capacity(
        1 << 20,
        File::open(articles).map_err(io)?,
    ));
    let mut extras = Beside::new(extras).map_err(io)?;
    let mut search = search.map(Beside::new).transpose().map_err(io)?;
    let mut w = TableWriter::create(out, schema::ARTICLES_SCHEMA)?;
    let l = |w: &TableWriter, name: &str| w.leaf(name);
    let page_id = l(&w, col::PAGE_ID)?;
    let title = l(&w, col::TITLE)?;
    let wikidata = l(&w, col::WIKIDATA_ID)?;
    let redirects = l(&w, "redirects.list.element")?;
    let ll_lang = l(&w, "langlinks.list.element.lang")?;
    let ll_title = l(&w, "langlinks.list.element.title")?;
    let ll_count = l(&w, col::LANGLINKS_COUNT)?;
    let disambiguation = l(&w, col::DISAMBIGUATION)?;
    let page_len = l(&w, col::PAGE_LEN)?;
    let text_bytes = l(&w, col::TEXT_BYTES)?;
    let lead = l(&w, col::LEAD_SECTION_SIZE)?;
    let topic_label = l(&w, "topics.list.element.label")?;
    let topic_score = l(&w, "topics.list.element.score")?;
    let country_label = l(&w, "countries.list.element.label")?;
    let country_score = l(&w, "countries.list.element.score")?;
    let pageviews = l(&w, col::PAGEVIEWS)?;
    let categories = l(&w, "categories.list.element")?;
    let mut skipped = (0u64, 0u64);
    let mut n = 0u64;
    while let Some(record) = reader.next_record().map_err(io)? {
        let a = ArticleRecord::decode(record).map_err(io)?;
        n += 1;
        if n.is_multiple_of(65536) {
            options.progress.add(65536);
            check_cancel(&options.cancel)?;
        }
        let extra = extras
            .take(a.page_id, &mut skipped.0)
            .map_err(io)?
            .map(|p| Extras::decode(&p))
            .transpose()
            .map_err(io)?;
        let summary = match &mut search {
            Some(s) => s
                .take(a.page_id, &mut skipped.1)
                .map_err(io)?
                .map(|p| decode_summary(a.page_id, &p))
                .transpose()
                .map_err(io)?,
            None => None,
        };
        w.flat(
            page_id,
            Some(Value::I64(i64::try_from(a.page_id).unwrap_or(i64::MAX))),
        );
        w.flat(title, Some(Value::Str(&a.title)));
        w.flat(wikidata, a.wikidata_id.as_deref().map(Value::Str));
        let no_redirects: &[String] = &[];
        let rd = extra
            .as_ref()
            .map_or(no_redirects, |e| e.redirects.as_slice());
        w.list(&[redirects], Some(rd.iter().map(|r| vec![Value::Str(r)])));
        w.list(
            &[ll_lang, ll_title],
            Some(
                a.langlinks
                    .iter()
                    .map(|(lang, t)| vec![Value::Str(lang), Value::Str(t)]),
            ),
        );
        w.flat(
            ll_count,
            Some(Value::I32(
                i32::try_from(a.langlinks.len()).unwrap_or(i32::MAX),
            )),
        );
        w.flat(disambiguation, Some(Value::Bool(a.disambiguation)));
        w.flat(page_len, a.len.map(Value::I64));
        let in_search = search.is_some();
        w.flat(
            text_bytes,
            summary.as_ref().and_then(|s| s.text_bytes).map(Value::I64),
        );
        w.flat(
            lead,
            summary
                .as_ref()
                .and_then(|s| s.lead_section_size)
                .map(Value::I64),
        );
        let tags = |pick: fn(&Summary) -> &Vec<(String, i16)>| {
            // Without the cirrus part the column is null; with it, an article the index
            // dump lacks has no predictions.
            in_search.then(|| {
                summary
                    .as_ref()
                    .map(|s| pick(s).clone())
                    .unwrap_or_default()
            })
        };
        let topics = tags(|s| &s.topics);
        w.list(
            &[topic_label, topic_score],
            topics.as_ref().map(|t| {
                t.iter()
                    .map(|(label, score)| vec![Value::Str(label), Value::I32(i32::from(*score))])
            }),
        );
        let countries = tags(|s| &s.countries);
        w.list(
            &[country_label, country_score],
            countries.as_ref().map(|t| {
                t.iter()
                    .map(|(label, score)| vec![Value::Str(label), Value::I32(i32::from(*score))])
            }),
        );
        let views = extra.as_ref().and_then(|e| e.views);
        w.flat(
            pageviews,
            with_views.then(|| Value::I64(i64::try_from(views.unwrap_or(0)).unwrap_or(i64::MAX))),
        );
        let no_categories: Vec<String> = Vec::new();
        w.list(
            &[categories],
            in_search.then(|| {
                summary
                    .as_ref()
                    .map_or(&no_categories, |s| &s.categories)
                    .iter()
                    .map(|c| vec![Value::Str(c)])
            }),
        );
        w.end_row()?;
    }
    w.finish()
}
