//! Link recommendations: the request the routes hand to a backend, the backend trait, and
//! the per-wiki datasets (opened once at start-up, shared by all requests).

mod engine;
pub mod fetch;
pub mod live;
pub mod params;
pub mod slots;
pub mod workers;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use wikisuggest_core::models::LinkRecommendationSet;
use wikisuggest_engine::Engine;
use wikisuggest_records::params::LinkOptions;

pub use engine::EngineBackend;
pub use live::{LiveEngine, ReloadOutcome};

use crate::error::{Error, Result};

/// One request, parsed and defaulted as the link service does.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRequest {
    /// Normalised title (MediaWiki's title rules), echoed as `page_title`.
    pub page_title: String,
    pub wikitext: String,
    pub revid: i64,
    /// Echoed unchanged, whatever its JSON type.
    pub pageid: Value,
    /// The options, parsed from the query (and the body's `sections_to_exclude`) over their
    /// defaults; `language_code` is always set (the domain's when the query names none).
    /// A `max_recommendations` of 0 or less is unlimited.
    pub options: LinkOptions,
}

/// Why a backend produced no answer: a problem with this request's input (400), with the
/// backend itself (500), or a passing one (503: its dataset is being opened again).
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("{0}")]
    BadInput(String),
    #[error("{0}")]
    Failed(String),
    #[error("{0}")]
    Unavailable(String),
}

/// What the link routes call: [`EngineBackend`] by default, or any implementation (a stub in
/// tests, another engine) given to [`crate::Server::bind_with_backend`].
pub trait LinkBackend: Send + Sync + 'static {
    /// Wiki ids served (`enwiki`, …), sorted.
    fn wikis(&self) -> Vec<String>;

    /// Recommends links for `request` on `wiki_id`: `cancel` is set when nobody waits for
    /// the answer any more (client gone, request timed out), and a backend that can should
    /// then stop working; one that cannot may ignore it.
    fn recommend_cancellable(
        &self,
        wiki_id: &str,
        request: &LinkRequest,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<LinkRecommendationSet, BackendError>;

    /// [`LinkBackend::recommend_cancellable`] for a request nobody cancels.
    fn recommend(
        &self,
        wiki_id: &str,
        request: &LinkRequest,
    ) -> Result<LinkRecommendationSet, BackendError> {
        self.recommend_cancellable(wiki_id, request, &std::sync::atomic::AtomicBool::new(false))
    }

    /// Opens again the datasets whose files were replaced since they were opened, each
    /// swapped in whole once verified (see [`LiveEngine::reload`]). By default, there is
    /// nothing to reload.
    fn reload(&self) -> Vec<(String, ReloadOutcome)> {
        Vec::new()
    }
}

/// The wiki ids of `dir`'s sub-folders, each with its folder.
/// The wikis `--datasets` names, each with the folder its files are in. It takes what
/// `LinkEngine.open` and `recommend-dump` take too: one wiki's native file
/// (`<wiki>.linkdata`), or one wiki's own folder (its native file or published files); or,
/// as a server of several wikis, a folder of wiki folders.
fn wiki_folders(dir: &Path) -> Result<Vec<(String, std::path::PathBuf)>> {
    if dir.is_file() {
        let wiki = dir
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".linkdata"));
        let Some(wiki) = wiki else {
            return Err(Error::input(
                dir,
                "a dataset file is a native <wiki>.linkdata; or give a folder",
            ));
        };
        let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
        let folder = parent.unwrap_or_else(|| Path::new(".")).to_owned();
        return Ok(vec![(wiki.to_owned(), folder)]);
    }
    if let Some(wiki) = own_wiki(dir)? {
        return Ok(vec![(wiki, dir.to_owned())]);
    }
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::input(dir, e))? {
        let path = entry.map_err(|e| Error::input(dir, e))?.path();
        if !path.is_dir() {
            continue;
        }
        let Some(wiki_id) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        folders.push((wiki_id, path));
    }
    folders.sort();
    Ok(folders)
}

/// The wiki whose own dataset files `dir` holds (a native file, or the published model),
/// if it holds one wiki's rather than wiki folders.
fn own_wiki(dir: &Path) -> Result<Option<String>> {
    for entry in std::fs::read_dir(dir).map_err(|e| Error::input(dir, e))? {
        let path = entry.map_err(|e| Error::input(dir, e))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let wiki = name
            .strip_suffix(".linkdata")
            .or_else(|| name.strip_suffix(".linkmodel.json"));
        if let Some(wiki) = wiki.filter(|w| !w.is_empty())
            && path.is_file()
        {
            return Ok(Some(wiki.to_owned()));
        }
    }
    Ok(None)
}

/// Opens `dir/<wiki_id>/` for every sub-folder (a native `<wiki_id>.linkdata`, or the
/// published `.sql.gz` / `.sqlite` files) as an engine. A native file's checksum is verified:
/// a server answers from it for a long time, so it reads it whole once, at start-up.
pub fn open_datasets(dir: &Path) -> Result<BTreeMap<String, Engine>> {
    let mut datasets = BTreeMap::new();
    for (wiki_id, path) in wiki_folders(dir)? {
        let engine = live::open_engine(&path, &wiki_id).map_err(|source| Error::Dataset {
            wiki_id: wiki_id.clone(),
            source,
        })?;
        log::info!("opened dataset {wiki_id} from {}", path.display());
        datasets.insert(wiki_id, engine);
    }
    Ok(datasets)
}

/// [`open_datasets`], each engine able to open its folder again ([`LiveEngine`]).
pub fn open_live_datasets(
    dir: &Path,
    application_version: &str,
    retry: std::time::Duration,
) -> Result<BTreeMap<String, LiveEngine>> {
    let mut datasets = BTreeMap::new();
    for (wiki_id, path) in wiki_folders(dir)? {
        let live =
            LiveEngine::open(&path, &wiki_id, application_version, retry).map_err(|source| {
                Error::Dataset {
                    wiki_id: wiki_id.clone(),
                    source,
                }
            })?;
        log::info!("opened dataset {wiki_id} from {}", path.display());
        datasets.insert(wiki_id, live);
    }
    Ok(datasets)
}

/// `project`/`domain` → wiki id, as the service computes it.
pub use wikisuggest_records::wiki::wiki_id_of_path as wiki_id;

/// The `valid_project_domain_pairs` of a 404: `wikipedia/<language>`.
pub fn project_domain_pairs(wikis: &[String]) -> Vec<String> {
    wikis
        .iter()
        .map(|id| wikisuggest_records::wiki::project_domain_pair(id))
        .collect()
}

#[cfg(test)]
mod dataset_forms {
    #![allow(clippy::unwrap_used)]

    use super::wiki_folders;
    use std::path::{Path, PathBuf};

    #[test]
    fn datasets_may_name_a_parent_one_wikis_folder_or_its_file() {
        let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let parent = repo.join("tests/data/parity/datasets");
        let forms = [
            (parent.clone(), parent.join("enwiki")),
            (parent.join("enwiki"), parent.join("enwiki")),
            (
                repo.join("python/wikisuggest/data/enwiki.linkdata"),
                repo.join("python/wikisuggest/data"),
            ),
        ];
        for (given, folder) in forms {
            let found = wiki_folders(&given).unwrap();
            assert!(
                found.contains(&("enwiki".to_owned(), folder)),
                "{given:?}: {found:?}"
            );
        }
        let not_dataset = repo.join("Cargo.toml");
        assert!(wiki_folders(Path::new(&not_dataset)).is_err());
    }
}
