//! Translation recommendations from local per-language catalogs.

pub mod dataset;
pub mod recommend;

pub use dataset::{Article, Catalog, TranslationData};
pub use recommend::{Algorithm, RankMethod, TranslationQuery, recommend};
