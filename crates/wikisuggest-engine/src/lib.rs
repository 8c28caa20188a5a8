//! Data and scoring half of the wikisuggest local link engine.
//!
//! - **Datasets.** [`Dataset`] holds one wiki's anchors, redirects, page ids, embeddings
//!   and link model. It opens a native memory-mapped file in O(1)
//!   ([`Dataset::open_native`]), or reads the published formats (mysqldump `.sql.gz`
//!   with checksums, legacy sqlitedict `.sqlite`) and converts them in memory.
//!   [`convert`] writes the native file once.
//! - **Scoring.** [`Scorer`] computes the 7 model features of a mention's candidates and
//!   evaluates the XGBoost model ([`LinkModel`]) bit-exactly as XGBoost 2.1.4's
//!   `predict_proba`.
//! - **Recommendation.** [`Engine`] puts a dataset and a scorer behind the placement pass
//!   of `wikisuggest-text` and returns production's response ([`LinkRecommendationSet`]),
//!   for one page or for many pages on several threads ([`Engine::recommend_batch`]).
//!
//! The crate has no Python dependency. [`Scorer`] does not tokenize or lowercase text
//! itself: callers pass the mention's token count and a [`Lowercase`] implementation
//! ([`Engine`] passes the text crate's, [`PyLowercase`]).
//!
//! ```no_run
//! use std::{path::Path, sync::Arc};
//! use wikisuggest_engine::{Dataset, RustLowercase, Scorer};
//!
//! let ds = Dataset::open(Path::new("data/enwiki"), "enwiki")?;
//! let scorer = Scorer::new(Arc::new(RustLowercase));
//! if let Some(scores) = scorer.score(&ds, "Cat", "domestic cat", 2)? {
//!     if let Some(best) = scores.best() {
//!         println!("{} {}", best.title, best.probability);
//!     }
//! }
//! # Ok::<(), wikisuggest_engine::Error>(())
//! ```

pub mod checksum;
pub mod conversion;
pub mod cosine;
mod dataset;
pub mod drift;
mod error;
pub mod extsort;
pub mod features;
pub mod jaro;
pub mod kurtosis;
pub mod native;
pub mod pickle;
pub mod published;
mod recommend;
pub mod rules;
pub mod sqldump;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod tables;
mod wire;
pub mod xgboost;

pub use conversion::{ConvertOptions, Phase as ConvertPhase, Progress as ConvertProgress};
pub use cosine::SdotKernel;
pub use dataset::{
    Candidate, Dataset, DatasetInfo, DatasetSource, NativeOpenOptions, Vector, convert,
    convert_with, write_native_file,
};
pub use error::{Error, PickleError, Result};
pub use features::{Features, Lowercase, MentionScores, RustLowercase, ScoredCandidate, Scorer};
pub use published::PublishedDataset;
pub use recommend::{
    BatchStream, Engine, FORMAT_VERSION, LentText, LinkRecommendation, LinkRecommendationSet, Meta,
    Page, PageSource, PyLowercase, RecommendOptions, default_workers, ngram_feature,
};
pub use rules::{ExcludedLink, Exclusion, RuleKind, RuleSpec, Rules};
pub use tables::{DatasetChecksums, Tables};
pub use wikisuggest_records::params::LinkOptions;
pub use wikisuggest_text::TextError;
pub use wikisuggest_text::pipeline::Stop;
pub use wire::link_record;
pub use xgboost::{LinkModel, NUM_FEATURES};

#[cfg(test)]
mod send_sync {
    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn shareable_types() {
        assert_send_sync::<super::Dataset>();
        assert_send_sync::<super::Scorer>();
        assert_send_sync::<super::LinkModel>();
        assert_send_sync::<super::Engine>();
    }
}
