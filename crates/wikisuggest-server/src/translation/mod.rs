//! Translation recommendations from the translation catalogs built from the public dumps.

pub mod catalogs;
pub mod collections;
pub mod params;
pub mod recommend;

pub use catalogs::TranslationCatalogs;
pub use params::{Algorithm, RankMethod, TranslationQuery};
pub use recommend::{Outcome, recommend};
