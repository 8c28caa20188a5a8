//! The whole local link engine: a [`Dataset`] and a [`Scorer`] behind the text crate's
//! placement pass, returning what production's `Query.run` returns.
//!
//! Scores are pure functions of (page, mention, candidate), so the placement
//! pass asks for them on demand, at most once per mention and page; throughput comes from
//! running pages in parallel ([`Engine::recommend_batch`]), which keeps every page's pass
//! sequential and its output identical to a single call.

mod adapter;
mod batch;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use wikisuggest_records::params::{InvalidParameter, LinkOptions};
use wikisuggest_text::pipeline::{self, Request, Stop};
use wikisuggest_text::title::{
    InvalidTitle, check_title, normalise_and_check_title, normalise_title,
};
use wikisuggest_text::{MwTokenizer, TextError};

pub use adapter::{PyLowercase, ngram_feature};
pub use batch::{BatchStream, LentText, Page, PageSource, default_workers};
pub use wikisuggest_text::pipeline::LinkRecommendation;

use crate::dataset::{Dataset, DatasetInfo};
use crate::error::{Error, Result};
use crate::features::{MentionScores, Scorer};
use crate::rules::{self, BoundCache, ExcludedLink, Exclusion, Rules};
use crate::tables::DatasetChecksums;
use adapter::DatasetModel;

/// `meta.format_version` of every result.
pub const FORMAT_VERSION: i64 = 1;

/// Parameters of one recommendation request: the options every link recommendation takes
/// (defaults and checks: [`LinkOptions`]) and what only a local engine has.
#[derive(Debug, Clone, Default)]
pub struct RecommendOptions {
    /// Language, threshold, maximum and excluded sections, as the HTTP API takes them. With no
    /// language code, the wiki's (`enwiki` → `en`, `bat_smgwiki` → `bat_smg`) is used, as the
    /// API's default is.
    pub link: LinkOptions,
    /// Wall-clock budget per page; `None` never stops early. Production uses 29 s, which
    /// makes its output depend on machine speed.
    pub time_budget: Option<Duration>,
    /// Never-link rules applied inside the pass; `None` gives production's output.
    pub rules: Option<Arc<Rules>>,
    /// Bound on the work of reading a page's markup (see
    /// [`wikisuggest_text::pipeline::Request::max_work`]): a page over it is refused with
    /// [`TextError::WorkLimitExceeded`], the same answer on any machine. `None`: unbounded
    /// but for the built-in bound on nested links' labels.
    pub max_work: Option<u64>,
}

impl RecommendOptions {
    /// The link options checked as the client checks them, so a value one path refuses the
    /// other refuses too.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the option.
    pub fn validate(&self) -> Result<()> {
        Ok(self.link.validate()?)
    }
}

/// A page title MediaWiki would refuse, as the `page_title` parameter's error. A title that
/// spans lines or runs past MediaWiki's length is most often the page's text given in the
/// title's place: the error says so.
fn title_error(e: InvalidTitle, title: &str) -> Error {
    let swapped = title.contains('\n') || title.len() > wikisuggest_text::title::MAX_TITLE_BYTES;
    let hint = if swapped {
        " (were wikitext and title swapped? a page is (wikitext, page_title), in that order)"
    } else {
        ""
    };
    InvalidParameter::new("page_title", format!("{e}{hint}")).into()
}

/// `meta` of a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// Always [`FORMAT_VERSION`].
    pub format_version: i64,
    /// The engine's version (production: the deployed commit).
    pub application_version: String,
    /// The published checksums of the dataset files (empty for sources without them).
    pub dataset_checksums: DatasetChecksums,
}

/// The recommendations for one page: production's response body.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRecommendationSet {
    /// Links in discovery order (not offset order); `link_index` is the position.
    pub links: Vec<LinkRecommendation>,
    /// The page title, normalised.
    pub page_title: String,
    /// Echoed from the request.
    pub pageid: Option<i64>,
    /// Echoed from the request.
    pub revid: Option<i64>,
    /// Versions and checksums.
    pub meta: Meta,
    /// Why processing ended (production only logs it).
    pub stop: Stop,
    /// The links the rules removed, in the order the pass found them (empty without rules).
    pub excluded: Vec<ExcludedLink>,
    /// The rule that removed the whole page, if one did.
    pub page_excluded: Option<Exclusion>,
}

impl LinkRecommendationSet {
    /// `links_count`.
    pub fn links_count(&self) -> usize {
        self.links.len()
    }
}

/// A wiki's dataset and model, ready to recommend links. Immutable; share it with `Arc`.
#[derive(Debug)]
pub struct Engine {
    dataset: Dataset,
    scorer: Scorer,
    application_version: String,
    /// Rule sets bound to this dataset.
    rules: BoundCache,
}

impl Engine {
    /// An engine over `dataset`, lowercasing as Python does.
    pub fn new(dataset: Dataset) -> Self {
        Self {
            dataset,
            scorer: Scorer::new(Arc::new(PyLowercase)),
            application_version: env!("CARGO_PKG_VERSION").to_owned(),
            rules: BoundCache::default(),
        }
    }

    /// Opens the dataset of `wiki_id` in `dir` (any format [`Dataset::open`] reads).
    pub fn open(dir: &Path, wiki_id: &str) -> Result<Self> {
        Dataset::open(dir, wiki_id).map(Self::new)
    }

    /// Sets `meta.application_version`.
    pub fn with_application_version(mut self, version: impl Into<String>) -> Self {
        self.application_version = version.into();
        self
    }

    /// The dataset.
    pub fn dataset(&self) -> &Dataset {
        &self.dataset
    }

    /// Sizes and provenance of the dataset.
    pub fn info(&self) -> DatasetInfo {
        self.dataset.info()
    }

    /// The language code used when a request names none: the wiki's.
    pub fn default_language(&self) -> &str {
        wikisuggest_records::wiki::language_code(self.dataset.wiki_id())
    }

    /// Recommends links for one page.
    ///
    /// # Errors
    /// [`Error::Text`] for an unsupported language or the upstream failures of the
    /// placement pass, and [`Error::Corrupt`] when the native file is
    /// damaged.
    pub fn recommend(
        &self,
        wikitext: &str,
        page_title: &str,
        pageid: Option<i64>,
        revid: Option<i64>,
        options: &RecommendOptions,
    ) -> Result<LinkRecommendationSet> {
        let page_title =
            normalise_and_check_title(page_title).map_err(|e| title_error(e, page_title))?;
        self.recommend_normalised(wikitext, page_title, pageid, revid, options, None)
    }

    /// [`Engine::recommend`] for a title that is already normalised (MediaWiki's title rules), as
    /// an HTTP front end has it after decoding the path: normalising again would decode a
    /// `%` in the title a second time. Once `cancel` is set by another thread (e.g. when the
    /// request that wanted the result is gone), it stops as at the end of the time budget.
    ///
    /// # Errors
    /// As [`Engine::recommend`].
    pub fn recommend_normalised(
        &self,
        wikitext: &str,
        page_title: String,
        pageid: Option<i64>,
        revid: Option<i64>,
        options: &RecommendOptions,
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<LinkRecommendationSet> {
        check_title(&page_title).map_err(|e| title_error(e, &page_title))?;
        let link = &options.link;
        let language = link
            .language_code
            .as_deref()
            .unwrap_or_else(|| self.default_language());
        let tokenizer = MwTokenizer::new(language)?;
        let request = Request {
            wikitext,
            page_title: &page_title,
            language_code: language,
            threshold: link.threshold,
            max_recommendations: link.max_recommendations,
            sections_to_exclude: &link.sections_to_exclude,
            time_budget: options.time_budget,
            max_work: options.max_work,
        };
        self.dataset.check_unchanged()?;
        let model = DatasetModel::new(&self.dataset, &self.scorer, &tokenizer);
        let passed = match &options.rules {
            None => Ok((
                pipeline::recommend_cancellable(&model, &request, cancel),
                Default::default(),
            )),
            Some(set) => {
                rules::recommend(set, &self.rules, &self.dataset, &model, &request, cancel)
            }
        };
        let failure = model.into_failure();
        // A mapped file changed during the pass may have given wrong answers, or read as a
        // corrupt one: that change is the error, before any the pass reported.
        self.dataset.check_unchanged()?;
        if let Some(failure) = failure {
            return Err(failure);
        }
        let (outcome, applied) = passed?;
        let found = outcome?;
        Ok(LinkRecommendationSet {
            links: found.links,
            page_title,
            pageid,
            revid,
            meta: Meta {
                format_version: FORMAT_VERSION,
                application_version: self.application_version.clone(),
                dataset_checksums: self.dataset.checksums().clone(),
            },
            stop: found.stop,
            excluded: applied.excluded,
            page_excluded: applied.page_excluded,
        })
    }

    /// Features and probabilities of a mention's classification candidates on a page, for
    /// inspection: what the engine computes before picking the best one. `mention` is
    /// lowercased as the anchor key; `None` if it is not an anchor.
    pub fn score(
        &self,
        page_title: &str,
        mention: &str,
        language_code: Option<&str>,
    ) -> Result<Option<MentionScores>> {
        let language = language_code.unwrap_or_else(|| self.default_language());
        let tokenizer = MwTokenizer::new(language)?;
        let key = wikisuggest_text::pyunicode::lower(mention);
        let ngram = ngram_feature(&tokenizer, &key);
        self.dataset.check_unchanged()?;
        let scores = self
            .scorer
            .score(&self.dataset, &normalise_title(page_title), &key, ngram)?;
        self.dataset.check_unchanged()?;
        Ok(scores)
    }
}

impl From<TextError> for Error {
    fn from(error: TextError) -> Self {
        Error::Text(error)
    }
}
