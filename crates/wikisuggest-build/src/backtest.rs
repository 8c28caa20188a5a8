//! Backtest: run the finished engine on held-out articles stripped of their links, and
//! compare its recommendations with the links the authors made (production's
//! `generate_backtesting_eval.py`: micro precision and recall per threshold).

use std::path::Path;

use wikisuggest_engine::{Dataset, Engine, LinkOptions, RecommendOptions};
use wikisuggest_text::pyunicode;
use wikisuggest_text::title::normalise_title;

use crate::dump::open_dump;
use crate::error::Result;
use crate::split::Split;
use crate::training::gold_and_stripped;

/// Micro-averaged counts at one threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BacktestPoint {
    /// Model probability threshold.
    pub threshold: f64,
    /// Links recommended.
    pub recommended: u64,
    /// Links the articles really have (distinct anchor → article pairs).
    pub expected: u64,
    /// Recommended links that are real.
    pub correct: u64,
}

impl BacktestPoint {
    /// `correct / recommended` (1.0 when nothing was recommended).
    pub fn precision(&self) -> f64 {
        if self.recommended == 0 {
            1.0
        } else {
            self.correct as f64 / self.recommended as f64
        }
    }

    /// `correct / expected`.
    pub fn recall(&self) -> f64 {
        if self.expected == 0 {
            0.0
        } else {
            self.correct as f64 / self.expected as f64
        }
    }
}

/// The backtest result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Backtest {
    /// Held-out articles evaluated.
    pub articles: u64,
    /// One point per threshold, in the order asked.
    pub points: Vec<BacktestPoint>,
}

/// Runs the engine over the held-out articles of `dump` at each threshold.
pub fn backtest(
    dump: &Path,
    engine: &Engine,
    language_code: &str,
    split: &Split,
    thresholds: &[f64],
) -> Result<Backtest> {
    backtest_against(
        dump,
        engine,
        engine.dataset(),
        language_code,
        split,
        thresholds,
    )
}

/// [`backtest`], with the articles' links resolved against `reference` (its redirects and
/// pages) rather than the engine's own dataset: an older dataset judged by the titles of a
/// current one, so that links to articles it does not know count as missed.
pub fn backtest_against(
    dump: &Path,
    engine: &Engine,
    reference: &Dataset,
    language_code: &str,
    split: &Split,
    thresholds: &[f64],
) -> Result<Backtest> {
    let dataset = reference;
    let mut result = Backtest {
        articles: 0,
        points: thresholds
            .iter()
            .map(|&threshold| BacktestPoint {
                threshold,
                recommended: 0,
                expected: 0,
                correct: 0,
            })
            .collect(),
    };
    let mut reader = open_dump(dump)?;
    let namespaces = reader.namespaces().clone();
    let resolve = |t: &str| {
        let t = match dataset.redirect(t) {
            Ok(Some(target)) => target.to_owned(),
            _ => t.to_owned(),
        };
        dataset.has_page(&t).unwrap_or(false).then_some(t)
    };
    while let Some(page) = reader.next_page()? {
        if result.articles as usize >= split.max_test_articles {
            break;
        }
        if page.ns != 0 || page.redirect.is_some() {
            continue;
        }
        let title = normalise_title(&page.title);
        if !split.is_held_out(&title) {
            continue;
        }
        let (gold, stripped) = gold_and_stripped(&page.text, &namespaces, resolve);
        // Thresholds are independent runs of the pass: spread them over the cores.
        let run = |threshold: f64| -> Result<(u64, u64)> {
            let options = RecommendOptions {
                link: LinkOptions {
                    language_code: Some(language_code.to_owned()),
                    threshold,
                    max_recommendations: 0,
                    sections_to_exclude: Vec::new(),
                },
                ..RecommendOptions::default()
            };
            let recs = engine.recommend(&stripped, &title, None, None, &options)?;
            let correct = recs
                .links
                .iter()
                .filter(|l| gold.contains(&(pyunicode::lower(&l.link_text), l.link_target.clone())))
                .count();
            Ok((recs.links.len() as u64, correct as u64))
        };
        let counts = run_parallel(thresholds, &run)?;
        for (point, (recommended, correct)) in result.points.iter_mut().zip(counts) {
            point.expected += gold.len() as u64;
            point.recommended += recommended;
            point.correct += correct;
        }
        result.articles += 1;
    }
    Ok(result)
}

/// `f` of every threshold, in order, computed on up to as many threads as there are cores.
fn run_parallel<T: Send>(
    thresholds: &[f64],
    f: &(dyn Fn(f64) -> Result<T> + Sync),
) -> Result<Vec<T>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = thresholds.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = thresholds
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(|&t| f(t)).collect::<Vec<_>>()))
            .collect();
        let mut out = Vec::with_capacity(thresholds.len());
        for handle in handles {
            let part = handle.join().map_err(|_| {
                crate::BuildError::InvalidArgument("a backtest thread panicked".into())
            })?;
            for r in part {
                out.push(r?);
            }
        }
        Ok(out)
    })
}
