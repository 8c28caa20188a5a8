//! Which articles train the model and which are held out for the backtest.

use sha2::{Digest, Sha256};

/// How articles are divided between training and backtesting.
#[derive(Debug, Clone, Copy)]
pub struct Split {
    /// Share of articles held out for the backtest, chosen by a hash of the title.
    pub holdout_fraction: f64,
    /// Use at most this many training articles (production: 200,000 pages).
    pub max_train_articles: usize,
    /// Backtest at most this many held-out articles.
    pub max_test_articles: usize,
}

impl Default for Split {
    fn default() -> Self {
        Self {
            holdout_fraction: 0.5,
            max_train_articles: 200_000,
            max_test_articles: 10_000,
        }
    }
}

impl Split {
    /// Whether the article `title` (normalised) is held out: the first 8 bytes of
    /// sha256(title) as a fraction of 2^64 fall below the hold-out share. Stable across
    /// builds, dumps and dump order.
    pub fn is_held_out(&self, title: &str) -> bool {
        let digest = Sha256::digest(title.as_bytes());
        let mut head = [0u8; 8];
        head.copy_from_slice(&digest[..8]);
        (u64::from_be_bytes(head) as f64) < self.holdout_fraction * 2f64.powi(64)
    }
}
