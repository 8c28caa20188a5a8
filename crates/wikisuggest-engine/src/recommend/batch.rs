//! Many pages at once, on several threads, results in input order.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::{Engine, LinkRecommendationSet, RecommendOptions};
use crate::error::Result;

/// One page of a batch.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// The page source.
    pub wikitext: String,
    /// The page title (normalised by the engine).
    pub page_title: String,
    /// Echoed in the result.
    pub pageid: Option<i64>,
    /// Echoed in the result.
    pub revid: Option<i64>,
    /// Overrides the batch's language code for this page.
    pub language_code: Option<String>,
}

/// One worker per available core.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

impl Engine {
    /// Recommends links for every page on up to `workers` threads (at least one), and
    /// returns one result per page in input order. Pages are handed out one at a time, so a
    /// long page does not hold up a whole share of the batch.
    pub fn recommend_batch(
        &self,
        pages: &[Page],
        options: &RecommendOptions,
        workers: usize,
    ) -> Vec<Result<LinkRecommendationSet>> {
        self.recommend_batch_until(pages, options, workers, &AtomicBool::new(false))
            .into_iter()
            .flatten()
            .collect()
    }

    /// [`recommend_batch`](Self::recommend_batch) that stops handing out pages once `stop`
    /// is set: pages already running finish, the others come back as `None`.
    pub fn recommend_batch_until(
        &self,
        pages: &[Page],
        options: &RecommendOptions,
        workers: usize,
        stop: &AtomicBool,
    ) -> Vec<Option<Result<LinkRecommendationSet>>> {
        let next = AtomicUsize::new(0);
        let work = || {
            let mut mine = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(page) = pages.get(i) else { break };
                mine.push((i, self.recommend_page(page, options)));
            }
            mine
        };
        let workers = workers.clamp(1, pages.len().max(1));
        let done: Vec<(usize, Result<LinkRecommendationSet>)> = if workers == 1 {
            work()
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..workers).map(|_| scope.spawn(work)).collect();
                // A worker only ends by running out of pages; a panic in one (a bug) is
                // re-raised here rather than silently losing its pages.
                handles
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            })
        };
        let mut out: Vec<Option<Result<LinkRecommendationSet>>> =
            std::iter::repeat_with(|| None).take(pages.len()).collect();
        for (i, result) in done {
            if let Some(slot) = out.get_mut(i) {
                *slot = Some(result);
            }
        }
        out
    }

    fn recommend_page(
        &self,
        page: &Page,
        options: &RecommendOptions,
    ) -> Result<LinkRecommendationSet> {
        let own;
        let options = match &page.language_code {
            Some(code) => {
                own = RecommendOptions {
                    language_code: Some(code.clone()),
                    ..options.clone()
                };
                &own
            }
            None => options,
        };
        self.recommend(
            &page.wikitext,
            &page.page_title,
            page.pageid,
            page.revid,
            options,
        )
    }
}
