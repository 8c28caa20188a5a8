//! The SQL table dumps the catalog joins, read on threads of their own and handed over in
//! page-id order: `page`, `page_props`, `langlinks` and `redirect` (each dumped in the order
//! of its primary key, which starts with the page id, so the four are merged without sorting).
//! A table out of that order is an error, never a silently wrong join.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};

use wikisuggest_dump::sql::{Columns, SqlValue, read_table};

use crate::error::{Error, Result};

/// Rows per batch handed from a reader thread.
const BATCH: usize = 4096;
/// Batches a reader runs ahead.
const AHEAD: usize = 8;

/// A row of `page`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRow {
    pub id: u64,
    pub namespace: i32,
    /// The title as stored: the DB key (underscores, no namespace prefix).
    pub title: Vec<u8>,
    pub is_redirect: bool,
    pub len: Option<u64>,
}

/// The page properties the catalog reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prop {
    WikibaseItem,
    Disambiguation,
}

/// A row of `page_props` the catalog reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropRow {
    pub page: u64,
    pub prop: Prop,
    pub value: Vec<u8>,
}

/// A row of `langlinks`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LangLinkRow {
    pub from: u64,
    pub lang: String,
    pub title: Vec<u8>,
}

/// A row of `redirect`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedirectRow {
    pub from: u64,
    pub namespace: i32,
    pub title: Vec<u8>,
    /// The redirect leads to another wiki (`rd_interwiki` set).
    pub interwiki: bool,
    /// The redirect leads to a section (`rd_fragment` set).
    pub fragment: bool,
}

/// Rows of one table in page-id order, read ahead on a thread.
pub struct Stream<T> {
    batches: Receiver<Result<Vec<T>>>,
    current: std::vec::IntoIter<T>,
    peeked: Option<T>,
    done: bool,
}

impl<T: Send + 'static> Stream<T> {
    /// The next row, without taking it.
    pub fn peek(&mut self) -> Result<Option<&T>> {
        if self.peeked.is_none() {
            self.peeked = self.pull()?;
        }
        Ok(self.peeked.as_ref())
    }

    /// The next row.
    pub fn next_row(&mut self) -> Result<Option<T>> {
        if let Some(row) = self.peeked.take() {
            return Ok(Some(row));
        }
        self.pull()
    }

    fn pull(&mut self) -> Result<Option<T>> {
        loop {
            if let Some(row) = self.current.next() {
                return Ok(Some(row));
            }
            if self.done {
                return Ok(None);
            }
            match self.batches.recv() {
                Ok(batch) => self.current = batch?.into_iter(),
                Err(_) => {
                    self.done = true;
                    return Ok(None);
                }
            }
        }
    }

    /// Takes the rows whose key is `key` (skipping any below it), via `keep`.
    pub fn take_key(
        &mut self,
        key: u64,
        key_of: impl Fn(&T) -> u64,
        mut keep: impl FnMut(T),
    ) -> Result<()> {
        while let Some(row) = self.peek()? {
            let k = key_of(row);
            if k > key {
                break;
            }
            if let Some(row) = self.next_row()?
                && k == key
            {
                keep(row);
            }
        }
        Ok(())
    }
}

/// Starts reading `table` from `path` on a thread: rows mapped by `map` (`None` skips one),
/// checked to come in non-decreasing `key` order.
fn spawn<T: Send + 'static>(
    path: PathBuf,
    table: &'static str,
    cancel: Arc<AtomicBool>,
    map: impl Fn(&Columns, &[SqlValue<'_>]) -> Result<Option<T>> + Send + 'static,
    key: impl Fn(&T) -> u64 + Send + 'static,
) -> Stream<T> {
    let (send, batches) = sync_channel(AHEAD);
    std::thread::spawn(move || {
        let mut batch = Vec::with_capacity(BATCH);
        let mut last = 0u64;
        let outcome = read_table(&path, table, |columns, row| -> Result<()> {
            let Some(item) = map(columns, row)? else {
                return Ok(());
            };
            let k = key(&item);
            if k < last {
                return Err(Error::dump(
                    &path,
                    format!("`{table}` is not in page-id order ({k} after {last})"),
                ));
            }
            last = k;
            batch.push(item);
            if batch.len() == BATCH {
                if cancel.load(Ordering::Relaxed) {
                    return Err(Error::Cancelled);
                }
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                // The receiver is gone: the join stopped; nothing more to read.
                send.send(Ok(full)).map_err(|_| Error::Cancelled)?;
            }
            Ok(())
        });
        match outcome {
            Ok(_) => {
                if !batch.is_empty() {
                    let _ = send.send(Ok(batch));
                }
            }
            Err(Error::Cancelled) if cancel.load(Ordering::Relaxed) => {
                let _ = send.send(Err(Error::Cancelled));
            }
            Err(Error::Cancelled) => {}
            Err(e) => {
                let _ = send.send(Err(e));
            }
        }
    });
    Stream {
        batches,
        current: Vec::new().into_iter(),
        peeked: None,
        done: false,
    }
}

/// The columns of `table` a reader needs, by name.
fn columns<const N: usize>(
    path: &Path,
    table: &str,
    columns: &Columns,
    names: [&str; N],
) -> Result<[usize; N]> {
    let mut out = [0; N];
    for (slot, name) in out.iter_mut().zip(names) {
        *slot = columns
            .index(name)
            .ok_or_else(|| Error::dump(path, format!("`{table}` has no column `{name}`")))?;
    }
    Ok(out)
}

fn bad_value(path: &Path, table: &str, column: &str) -> Error {
    Error::dump(
        path,
        format!("`{table}`: a row with an unreadable `{column}`"),
    )
}

/// `page` rows.
pub fn pages(path: &Path, cancel: Arc<AtomicBool>) -> Stream<PageRow> {
    let p = path.to_owned();
    spawn(
        path.to_owned(),
        "page",
        cancel,
        move |cols, row| {
            let [id, ns, title, redirect, len] = columns(
                &p,
                "page",
                cols,
                [
                    "page_id",
                    "page_namespace",
                    "page_title",
                    "page_is_redirect",
                    "page_len",
                ],
            )?;
            Ok(Some(PageRow {
                id: row[id]
                    .as_u64()
                    .ok_or_else(|| bad_value(&p, "page", "page_id"))?,
                namespace: row[ns]
                    .as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(|| bad_value(&p, "page", "page_namespace"))?,
                title: row[title]
                    .as_bytes()
                    .ok_or_else(|| bad_value(&p, "page", "page_title"))?
                    .to_vec(),
                is_redirect: row[redirect].as_u64().unwrap_or(0) != 0,
                len: row[len].as_u64(),
            }))
        },
        |r| r.id,
    )
}

/// The `wikibase_item` and `disambiguation` rows of `page_props`.
pub fn props(path: &Path, cancel: Arc<AtomicBool>) -> Stream<PropRow> {
    let p = path.to_owned();
    spawn(
        path.to_owned(),
        "page_props",
        cancel,
        move |cols, row| {
            let [page, name, value] = columns(
                &p,
                "page_props",
                cols,
                ["pp_page", "pp_propname", "pp_value"],
            )?;
            let prop = match row[name].as_bytes() {
                Some(b"wikibase_item") => Prop::WikibaseItem,
                Some(b"disambiguation") => Prop::Disambiguation,
                _ => return Ok(None),
            };
            Ok(Some(PropRow {
                page: row[page]
                    .as_u64()
                    .ok_or_else(|| bad_value(&p, "page_props", "pp_page"))?,
                prop,
                value: row[value].as_bytes().unwrap_or_default().to_vec(),
            }))
        },
        |r| r.page,
    )
}

/// `langlinks` rows.
pub fn langlinks(path: &Path, cancel: Arc<AtomicBool>) -> Stream<LangLinkRow> {
    let p = path.to_owned();
    spawn(
        path.to_owned(),
        "langlinks",
        cancel,
        move |cols, row| {
            let [from, lang, title] =
                columns(&p, "langlinks", cols, ["ll_from", "ll_lang", "ll_title"])?;
            Ok(Some(LangLinkRow {
                from: row[from]
                    .as_u64()
                    .ok_or_else(|| bad_value(&p, "langlinks", "ll_from"))?,
                lang: row[lang]
                    .as_str()
                    .ok_or_else(|| bad_value(&p, "langlinks", "ll_lang"))?
                    .to_owned(),
                title: row[title].as_bytes().unwrap_or_default().to_vec(),
            }))
        },
        |r| r.from,
    )
}

/// `redirect` rows.
pub fn redirects(path: &Path, cancel: Arc<AtomicBool>) -> Stream<RedirectRow> {
    let p = path.to_owned();
    spawn(
        path.to_owned(),
        "redirect",
        cancel,
        move |cols, row| {
            let [from, ns, title, interwiki, fragment] = columns(
                &p,
                "redirect",
                cols,
                [
                    "rd_from",
                    "rd_namespace",
                    "rd_title",
                    "rd_interwiki",
                    "rd_fragment",
                ],
            )?;
            let set = |v: &SqlValue<'_>| v.as_bytes().is_some_and(|b| !b.is_empty());
            Ok(Some(RedirectRow {
                from: row[from]
                    .as_u64()
                    .ok_or_else(|| bad_value(&p, "redirect", "rd_from"))?,
                namespace: row[ns]
                    .as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(|| bad_value(&p, "redirect", "rd_namespace"))?,
                title: row[title].as_bytes().unwrap_or_default().to_vec(),
                interwiki: set(&row[interwiki]),
                fragment: set(&row[fragment]),
            }))
        },
        |r| r.from,
    )
}
