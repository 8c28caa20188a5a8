//! The translation catalogs the server answers from: one per source language, opened at
//! start-up (`--translation-catalog`), with the page collections of any of them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wikisuggest_translation::Engine;
use wikisuggest_translation::collections::Collections;
use wikisuggest_translation::schema::MANIFEST;

use crate::error::{Error, Result};

/// Catalogs by source language.
#[derive(Default)]
pub struct TranslationCatalogs {
    pub engines: BTreeMap<String, Arc<Engine>>,
    /// Language codes the server accepts (the service's site-matrix list): the catalogs'
    /// languages and every code their interlanguage links and collections use.
    pub languages: BTreeSet<String>,
    /// Page collections (from the first catalog built with them).
    pub collections: Option<Collections>,
}

impl std::fmt::Debug for TranslationCatalogs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranslationCatalogs")
            .field("languages", &self.engines.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The catalog folders under `path`: itself, or its subfolders holding a catalog.
fn catalog_folders(path: &Path) -> Result<Vec<PathBuf>> {
    if path.join(MANIFEST).is_file() {
        return Ok(vec![path.to_owned()]);
    }
    let entries = std::fs::read_dir(path).map_err(|e| Error::input(path, e))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join(MANIFEST).is_file())
        .collect();
    found.sort();
    Ok(found)
}

impl TranslationCatalogs {
    /// Opens the catalogs `entries` name: `(wiki, path)`, the wiki (when given) checked
    /// against the catalog's own.
    pub fn open(entries: &[(Option<String>, PathBuf)]) -> Result<Self> {
        let mut out = Self::default();
        for (wiki, path) in entries {
            let folders = catalog_folders(path)?;
            if folders.is_empty() {
                return Err(Error::input(
                    path,
                    "no translation catalog here (no catalog.json in it or in its subfolders)",
                ));
            }
            for folder in folders {
                let engine = Engine::open(&folder).map_err(|e| Error::input(&folder, e))?;
                let catalog = engine.catalog();
                if let Some(wiki) = wiki
                    && *wiki != catalog.manifest.wiki
                {
                    return Err(Error::input(
                        &folder,
                        format!("the catalog of {}, not {wiki}", catalog.manifest.wiki),
                    ));
                }
                log::info!(
                    "serving translations from {} ({} articles, parts {})",
                    catalog.manifest.wiki,
                    catalog.len(),
                    catalog.manifest.parts.join(", ")
                );
                out.languages.insert(catalog.language().to_owned());
                out.languages
                    .extend(catalog.link_codes().map(str::to_owned));
                if out.collections.is_none()
                    && let Some(collections) = engine.collections()
                {
                    for collection in &collections.list {
                        for article in &collection.articles {
                            out.languages
                                .extend(article.titles.iter().map(|(l, _)| l.clone()));
                        }
                    }
                    out.collections = Some(collections.clone());
                }
                out.engines
                    .insert(catalog.language().to_owned(), Arc::new(engine));
            }
        }
        Ok(out)
    }
}
