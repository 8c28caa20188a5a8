//! Translation recommendations from local per-language catalogs.

pub mod collections;
pub mod dataset;
pub mod params;
pub mod recommend;

pub use dataset::{Article, Catalog, Collection, CollectionInfo, TranslationData};
pub use params::{Algorithm, RankMethod, TranslationQuery};
pub use recommend::{Outcome, recommend};
