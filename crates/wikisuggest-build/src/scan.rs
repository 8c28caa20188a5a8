//! The two streaming passes over a dump that produce the lookup tables.
//!
//! 1. **Catalogue**: main-namespace articles (title → page id), redirects (title →
//!    target), and every anchor text used in a link (the phrases to look for as text).
//! 2. **Counts**: each article's links, resolved through one redirect hop and kept when
//!    the target is an article; the plain-text occurrences of the anchor texts; the
//!    link graph for embeddings.
//!
//! Two passes keep memory proportional to the tables, never to the dump: the redirect
//! map must be complete before any link can be resolved.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use wikisuggest_engine::tables::Tables;
use wikisuggest_text::title::normalise_title;

use crate::anchors::{AnchorCounts, AnchorFilter, Interner, count_text_anchors};
use crate::dump::{Namespaces, open_dump, open_dump_of};
use crate::error::Result;
use crate::links::article_links;
use crate::split::Split;

/// Settings of a build.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Wiki id (`enwiki`): names the output files.
    pub wiki_id: String,
    /// Language code for tokenization (`en`).
    pub language_code: String,
    /// Minimum link probability of an anchor (production: 0.065).
    pub min_link_probability: f64,
    /// Minimum number of times an anchor is used as a link (production: 2).
    pub min_link_count: u64,
    /// Treat link targets that are not pages of the dump as existing articles. For
    /// excerpts of a wiki (most targets lie outside); off for complete dumps.
    pub keep_missing_targets: bool,
    /// First synthetic page id given to such targets.
    pub synthetic_id_base: i64,
    /// Articles held out of the counts: their links feed neither the anchors nor the
    /// link graph (their targets still count as pages). Builds the dataset a backtest on
    /// those articles needs, so that it cannot recall links it has already seen.
    pub held_out: Option<Split>,
}

impl BuildOptions {
    /// Production defaults for `wiki_id`.
    pub fn new(wiki_id: &str, language_code: &str) -> Self {
        Self {
            wiki_id: wiki_id.to_owned(),
            language_code: language_code.to_owned(),
            min_link_probability: 0.065,
            min_link_count: 2,
            keep_missing_targets: false,
            synthetic_id_base: 90_000_000,
            held_out: None,
        }
    }
}

/// Counts reported by a scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Main-namespace articles in the dump.
    pub articles: u64,
    /// Main-namespace redirects in the dump.
    pub redirects: u64,
    /// Article links kept (after redirect resolution).
    pub links: u64,
    /// Distinct anchor texts of those links.
    pub link_anchors: u64,
    /// Anchors that passed the filters.
    pub anchors: u64,
    /// `(anchor, target)` pairs kept.
    pub pairs: u64,
}

/// The result of scanning a dump: the tables without embeddings, the link graph, and
/// what later steps need to look things up.
#[derive(Debug)]
pub struct Scan {
    /// The dump that was scanned.
    pub dump: PathBuf,
    /// The settings used.
    pub options: BuildOptions,
    /// The wiki's namespaces.
    pub namespaces: Namespaces,
    /// Anchors, redirects and page ids, sorted by key; vectors empty.
    pub tables: Tables,
    /// Titles of the link graph (every page id title and every link target).
    pub titles: Interner,
    /// Distinct `(source, target)` article links as title ids.
    pub edges: Vec<(u32, u32)>,
    /// Counts.
    pub stats: ScanStats,
}

/// Runs both passes over `dump`.
pub fn scan(dump: &Path, options: &BuildOptions) -> Result<Scan> {
    wikisuggest_engine::published::validate_wiki_id(&options.wiki_id)?;
    // Pass 1: catalogue.
    let mut reader = open_dump_of(dump, &options.wiki_id)?;
    let namespaces = reader.namespaces().clone();
    let mut articles: HashMap<String, i64> = HashMap::new();
    let mut redirects: HashMap<String, String> = HashMap::new();
    let mut anchor_texts = Interner::default();
    while let Some(page) = reader.next_page()? {
        if page.ns != 0 {
            continue;
        }
        let title = normalise_title(&page.title);
        match page.redirect {
            Some(target) => {
                redirects.insert(title, normalise_title(&target));
            }
            None => {
                for link in article_links(&page.text, &namespaces) {
                    anchor_texts.intern(&link.anchor);
                }
                articles.insert(title, page.id);
            }
        }
    }
    let is_article = |t: &str| {
        articles.contains_key(t) || (options.keep_missing_targets && !redirects.contains_key(t))
    };

    // Pass 2: counts.
    let mut counts = AnchorCounts::from_interner(anchor_texts);
    let mut titles = Interner::default();
    // Distinct within each article here, across articles after the pass: a flat list
    // costs 8 bytes an edge, a hash set about twice that and more while it grows.
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut stats = ScanStats {
        articles: articles.len() as u64,
        redirects: redirects.len() as u64,
        ..ScanStats::default()
    };
    let mut reader = open_dump(dump)?;
    while let Some(page) = reader.next_page()? {
        if page.ns != 0 || page.redirect.is_some() {
            continue;
        }
        let title = normalise_title(&page.title);
        let excluded = options.held_out.is_some_and(|s| s.is_held_out(&title));
        let source = titles.intern(&title);
        let mut resolved = Vec::new();
        let first_edge = edges.len();
        for link in article_links(&page.text, &namespaces) {
            let target = redirects.get(&link.target).unwrap_or(&link.target);
            if !is_article(target) {
                continue;
            }
            let t = titles.intern(target);
            if !excluded {
                edges.push((source, t));
            }
            resolved.push((link.anchor, t));
        }
        let mut new = edges.split_off(first_edge);
        new.sort_unstable();
        new.dedup();
        edges.append(&mut new);
        if excluded {
            continue;
        }
        stats.links += resolved.len() as u64;
        let text_counts = count_text_anchors(&page.text, &counts.anchors);
        counts.add_article(&resolved, &text_counts);
    }

    let filter = AnchorFilter {
        min_link_probability: options.min_link_probability,
        min_link_count: options.min_link_count,
    };
    let anchors = counts.finish(filter, |t| titles.name(t).to_owned());
    stats.link_anchors = counts.linked_anchors();
    drop(counts);
    stats.anchors = anchors.len() as u64;
    stats.pairs = anchors.iter().map(|(_, c)| c.len() as u64).sum();

    let mut pageids: Vec<(String, i64)> = articles.into_iter().collect();
    if options.keep_missing_targets {
        let known: HashSet<&str> = pageids.iter().map(|(t, _)| t.as_str()).collect();
        let mut missing: Vec<&str> = (0..titles.len() as u32)
            .map(|t| titles.name(t))
            .filter(|t| !known.contains(t))
            .collect();
        missing.sort_unstable();
        let synthetic: Vec<(String, i64)> = missing
            .into_iter()
            .zip(options.synthetic_id_base..)
            .map(|(t, id)| (t.to_owned(), id))
            .collect();
        pageids.extend(synthetic);
    }
    pageids.sort();
    let mut redirects: Vec<(String, String)> = redirects.into_iter().collect();
    redirects.sort();
    for (t, _) in &pageids {
        titles.intern(t);
    }
    edges.sort_unstable();
    edges.dedup();
    edges.shrink_to_fit();

    Ok(Scan {
        dump: dump.to_owned(),
        options: options.clone(),
        namespaces,
        tables: Tables {
            anchors,
            redirects,
            pageids,
            vectors: Default::default(),
        },
        titles,
        edges,
        stats,
    })
}
