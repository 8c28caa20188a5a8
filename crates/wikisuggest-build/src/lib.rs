//! Builds the datasets of the wikisuggest local link engine from a MediaWiki XML dump.
//!
//! The steps follow the production training pipeline, all streaming over the
//! dump so memory grows with the tables, not with the dump:
//!
//! 1. [`scan`]: articles, redirects (one hop), page ids and anchors with their
//!    link-probability filter;
//! 2. [`set_vectors`]: one embedding per title ([`Embedding`]);
//! 3. [`training_rows`]: labelled feature rows, computed as the engine computes them at
//!    query time, for a model trained elsewhere (XGBoost, from Python);
//! 4. [`write_outputs`]: the published files (`.sql.gz` + `.checksum`, model JSON) and
//!    the native file;
//! 5. [`backtest`]: precision and recall of the finished engine on held-out articles.
//!
//! Same dump and options give byte-identical files.

pub mod anchors;
pub mod backtest;
pub mod dump;
pub mod embed;
mod error;
pub mod links;
pub mod pickle;
pub mod publish;
pub mod scan;
pub mod split;
pub mod training;

use std::path::{Path, PathBuf};

use wikisuggest_engine::native::NativeInput;
use wikisuggest_engine::tables::{DatasetChecksums, VectorTable};
use wikisuggest_engine::write_native_file;
use wikisuggest_text::MwTokenizer;

pub use backtest::{Backtest, BacktestPoint, backtest, backtest_against};
pub use embed::WordVectors;
pub use error::{BuildError, Result};
pub use scan::{BuildOptions, Scan, ScanStats, scan};
pub use split::Split;
pub use training::{TrainingRows, training_rows};

/// Where title embeddings come from.
#[derive(Debug, Clone)]
pub enum Embedding {
    /// Mean word vector of the title's words.
    WordVectors(WordVectors),
    /// Random indexing of the link graph, with this dimension and seed.
    LinkGraph {
        /// Vector dimension (production: 50).
        dim: usize,
        /// Seed of the base vectors.
        seed: u64,
    },
}

/// Fills `scan.tables.vectors`: one vector per page-id title that gets one, sorted by
/// title like the other tables.
pub fn set_vectors(scan: &mut Scan, embedding: &Embedding) -> Result<()> {
    let mut table = VectorTable::default();
    match embedding {
        Embedding::WordVectors(words) => {
            let tokenizer = MwTokenizer::new(&scan.options.language_code).map_err(|source| {
                BuildError::Text {
                    title: String::new(),
                    source,
                }
            })?;
            table.dim = words.dim();
            for (title, _) in &scan.tables.pageids {
                if let Some(v) = words.title_vector(title, &tokenizer) {
                    table.keys.push(title.clone());
                    table.data.extend(v);
                }
            }
        }
        Embedding::LinkGraph { dim, seed } => {
            let titles = &scan.titles;
            let vectors = embed::link_graph_vectors(titles.len(), &scan.edges, *dim, *seed, |t| {
                titles.name(t).to_owned()
            });
            table.dim = *dim;
            for (title, _) in &scan.tables.pageids {
                let row = titles
                    .get(title)
                    .and_then(|t| vectors.get(t as usize * dim..(t as usize + 1) * dim));
                if let Some(v) = row {
                    table.keys.push(title.clone());
                    table.data.extend_from_slice(v);
                }
            }
        }
    }
    scan.tables.vectors = table;
    Ok(())
}

/// The files a build wrote.
#[derive(Debug, Clone)]
pub struct Outputs {
    /// sha256 of the five published files.
    pub checksums: DatasetChecksums,
    /// The native file.
    pub native: PathBuf,
}

/// Writes the published files and the native file of `scan` with `model_json` into
/// `out_dir`.
pub fn write_outputs(scan: &Scan, out_dir: &Path, model_json: &[u8]) -> Result<Outputs> {
    let wiki_id = &scan.options.wiki_id;
    let checksums = publish::write_published(out_dir, wiki_id, &scan.tables, model_json)?;
    let input = NativeInput::from_tables(
        wiki_id,
        &scan.tables,
        model_json.to_vec(),
        checksums.clone(),
    )?;
    let native = write_native_file(&input, out_dir)?;
    Ok(Outputs { checksums, native })
}
