//! The sequential link placement pass of the production engine
//! (`process_page`), written against [`LinkModel`] so that any dataset and
//! scorer can plug in.
//!
//! The pass is deliberately faithful to upstream, including behaviour that
//! looks accidental (no word boundaries, first-occurrence node offsets,
//! raw-substring `match_index`, discovery order, `0` meaning unlimited …);
//! see the spec's quirk catalogue.  Scores are pure functions of
//! `(page, mention, candidate)`, so implementations may batch or cache them.
//!
//! The pass in order: the page's partition and its existing links (`linked`), where its
//! text nodes lie (`page_text`), each node's anchor grams (`words`), each mention's target
//! and placement (`place`), and the list of links it returns (`select`).

mod filter;
mod linked;
mod matching;
mod model;
mod page_text;
mod place;
mod pyfloat;
mod select;
mod strings;
mod words;

use std::cell::Cell;
use std::collections::HashMap as StdHashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use filter::{LinkFilter, Placement};
pub use model::{Candidate, GramRow, LinkModel, MAX_GRAM};
pub use pyfloat::format_f32;

use crate::error::TextError;
use crate::sections::{SectionExclusion, sections};
use crate::tokenize::MwTokenizer;
use crate::wikitext::{Lexed, Node, NodeKind, NodeStream, ParseLimits, Wikitext};
use linked::Linked;
use matching::find_first;
use page_text::PageText;
use place::{classify, place, splice_link};
use select::Selection;
use strings::StrSet;
use words::{NodeBuffers, node_mentions};

// The pass hashes every n-gram of the page; a fast non-cryptographic hasher matters there,
// and no key comes from an adversary who could profit from collisions beyond slowing down
// their own request.
type HashMap<K, V> = StdHashMap<K, V, foldhash::fast::RandomState>;

/// Parameters of one request.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The page source.
    pub wikitext: &'a str,
    /// The page title, already in `normalise_title` form.
    pub page_title: &'a str,
    /// Language code for tokenization (`en`, `bat_smg` …).
    pub language_code: &'a str,
    /// Minimum probability (a score equal to it is accepted).
    pub threshold: f64,
    /// Stop after exactly this many links; `0` and negative values never
    /// match, so they mean unlimited.
    pub max_recommendations: i64,
    /// Section titles to skip (case-folded exact match; `%LEAD%` for the lead).
    pub sections_to_exclude: &'a [String],
    /// Wall-clock budget, checked before each n-gram (upstream: 29 s); the clock itself is
    /// read at every 16th check.
    pub time_budget: Option<Duration>,
    /// Bound on the work of reading the page's markup, in the units the parsers count:
    /// character reads of the partition ([`Wikitext::reads`]), steps of the link search
    /// ([`crate::wikitext::wikilinks_measured`]) and bytes of the existing links' titles and
    /// labels. A page over it ends with [`TextError::WorkLimitExceeded`]: the same page
    /// always gets the same answer, whatever the machine's speed. The articles of the
    /// gensim enwiki sample need at most 3.5, 5.3 and 0.6 units per byte of wikitext for
    /// the three. `None`: no bound but the labels' own (eight units per byte plus 64 Ki).
    pub max_work: Option<u64>,
}

/// One recommended link, in discovery order.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRecommendation {
    /// Position in the result list.
    pub link_index: usize,
    /// The mention as written.
    pub link_text: String,
    /// Target article title.
    pub link_target: String,
    /// Model probability.
    pub score: f32,
    /// Code point offset in the wikitext.
    pub wikitext_offset: usize,
    /// Occurrences of `link_text` before the link, counted in top-level text.
    pub match_index: usize,
    /// Up to 10 code points of the same text node before the mention.
    pub context_before: String,
    /// Up to 10 code points of the same text node after the mention.
    pub context_after: String,
}

/// Why processing ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The page was processed completely.
    Complete,
    /// `max_recommendations` links were found.
    MaxRecommendations,
    /// The time budget ran out; the links found so far are returned.
    TimeBudget,
}

impl Stop {
    /// The message upstream logs as `info` (verbatim, including its
    /// unformatted placeholder and missing space).
    pub fn info(self) -> &'static str {
        match self {
            Stop::Complete => "",
            Stop::MaxRecommendations => {
                "Stopping page processing as max recommendations limit {maxrec} reached."
            }
            Stop::TimeBudget => {
                "Stopping page processing as maximum processing time 30seconds reached"
            }
        }
    }
}

/// The result of [`recommend`].
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendations {
    /// Links in discovery order (not sorted by offset).
    pub links: Vec<LinkRecommendation>,
    /// How processing ended.
    pub stop: Stop,
}

/// Context window size in code points.
const CONTEXT: usize = 10;
/// Candidates scored per mention.
const TOP_CANDIDATES: usize = 10;

/// Runs the placement pass over one page.
///
/// # Errors
/// * [`TextError::UnsupportedLanguage`] for SentencePiece languages;
/// * [`TextError::BadReplacement`] when a target or mention contains a
///   backslash escape that Python's `re` rejects (upstream: HTTP 500);
/// * [`TextError::MentionNotFound`] when a placed mention cannot be found
///   again in the original node text (upstream: HTTP 500).
pub fn recommend(
    model: &dyn LinkModel,
    request: &Request<'_>,
) -> Result<Recommendations, TextError> {
    recommend_cancellable(model, request, None)
}

/// [`recommend`], stopping as at the end of the time budget once `cancel` is set (by
/// another thread, when the result is no longer wanted): checked wherever the budget is.
///
/// # Errors
/// As [`recommend`].
pub fn recommend_cancellable(
    model: &dyn LinkModel,
    request: &Request<'_>,
    cancel: Option<&AtomicBool>,
) -> Result<Recommendations, TextError> {
    recommend_filtered(model, request, cancel, None)
}

/// [`recommend_cancellable`], asking `filter` about each link the pass chooses before it is
/// returned (see [`LinkFilter`]); with `None` it is exactly [`recommend_cancellable`].
///
/// # Errors
/// As [`recommend`].
pub fn recommend_filtered(
    model: &dyn LinkModel,
    request: &Request<'_>,
    cancel: Option<&AtomicBool>,
    mut filter: Option<&mut dyn LinkFilter>,
) -> Result<Recommendations, TextError> {
    let budget = Budget {
        started: Instant::now(),
        limit: request.time_budget,
        cancel,
        checks: Cell::new(0),
    };
    let stopped = |links: Selection| links.finish(Stop::TimeBudget);
    let tokenizer = MwTokenizer::new(request.language_code)?;
    let exclusion = SectionExclusion::new(request.sections_to_exclude);
    // The budget also bounds parsing, whose worst case is quadratic: when the parse runs
    // out of time the pass stops with the links found before, as a timeout does upstream;
    // a page over the work limit is refused.
    let limits = ParseLimits {
        deadline: request.time_budget.map(|b| budget.started + b),
        max_reads: request.max_work,
    };
    // A filter is shown the whole parsed page, and a work limit bounds the whole parse
    // before any other work: the page is then parsed first. Otherwise its nodes are parsed
    // as the pass reaches them, and a pass that stops at its maximum of links leaves the
    // rest of the page unparsed (a third to a half of the partition's work on real pages).
    let whole = if filter.is_some() || request.max_work.is_some() {
        match Wikitext::parse_cancellable(request.wikitext, limits, cancel) {
            Ok(doc) => Some(doc),
            Err(e) => {
                return markup_unread(
                    e,
                    request,
                    &budget,
                    Selection::new(request.max_recommendations),
                );
            }
        }
    } else {
        None
    };
    let lexed = match &whole {
        Some(doc) => doc.lexed(),
        None => Lexed::new(request.wikitext),
    };
    let mut nodes = match &whole {
        Some(doc) => PageNodes::Whole(doc.nodes()),
        None => PageNodes::Stream(Box::new(NodeStream::new(
            &lexed,
            limits.with_cancel(cancel),
        ))),
    };
    // The parse's string form: the text up to a NUL, if any (see `Wikitext`).
    let init = lexed.text();

    let work = request
        .max_work
        .map(|max| (max, whole.as_ref().map_or(0, Wikitext::reads)));
    let Some(mut linked) =
        Linked::existing(model, request, (&lexed, init), (&limits, work), &budget)?
    else {
        return Ok(stopped(Selection::new(request.max_recommendations)));
    };

    // Top-level text nodes: original and current values, by page order.
    let mut page = PageText::new(init);
    // The sections a filter is told about.
    let all_sections = whole.as_ref().map(sections).unwrap_or_default();

    let mut tested = StrSet::default();
    // Mentions that failed the linked-mention or linked-target filter (see below).
    let mut blocked = StrSet::default();
    let mut links = Selection::new(request.max_recommendations);
    let mut buffers = NodeBuffers::default();

    // The section of the node being read: its index among the page's sections (the lead,
    // possibly empty, is 0; each heading starts the next), and whether it is searched.
    let mut section_index = 0;
    let mut searched = !exclusion.excludes_lead();
    for index in 0.. {
        let node = match nodes.get(index) {
            Ok(Some(node)) => node,
            Ok(None) => break,
            Err(e) => return markup_unread(e, request, &budget, links),
        };
        page.push(&node);
        if node.kind == NodeKind::Heading {
            section_index += 1;
            searched = !exclusion.excludes_heading(&node, request.wikitext);
        }
        if !searched {
            continue;
        }
        let Some(Some(ordinal)) = page.ordinal_of.get(index).copied() else {
            continue;
        };
        let orig_string: &str = page.original_str(ordinal);
        // Offsets count from the first occurrence of the node's text in the page, which
        // cannot start after the node itself, so only the text up to its end is
        // searched. Only nodes that receive a link need it.
        let node_start = |page: &PageText<'_>| {
            let own_end = page.node_bytes(index).end.min(init.len());
            init.as_bytes()
                .get(..own_end)
                .and_then(|prefix| find_first(prefix, orig_string.as_bytes()))
                .map_or(0, |b| page.char_of(b))
        };

        // The same for every link of the node: found once.
        let mut node_start_at: Option<usize> = None;
        if node_mentions(model, &tokenizer, orig_string, &budget, &mut buffers).is_none() {
            return Ok(stopped(links));
        }

        for (mention, original) in buffers.mentions.iter() {
            // Filtering a mention reads every linked mention, which hostile nested
            // labels make long: the budget bounds this loop too.
            if budget.spent() {
                return Ok(stopped(links));
            }
            // The filters are pure, so the cheapest run first; and the linked sets only
            // grow, so a mention they block stays blocked for the rest of the page.
            if tested.contains(mention) || blocked.contains(mention) {
                continue;
            }
            let Some(candidates) = model.candidates(mention) else {
                continue;
            };
            if linked.blocks(mention, &candidates) {
                blocked.insert(mention);
                continue;
            }
            if let Some((target, score)) = classify(model, request, mention, candidates) {
                let found = splice_link(&mut page, ordinal, original, &target, score)?;
                linked.insert_mention(mention);
                linked.targets.insert(&target);
                if found {
                    let node_start = *node_start_at.get_or_insert_with(|| node_start(&page));
                    let mut link = place(
                        &mut page, ordinal, node_start, mention, original, target, score,
                    )?;
                    if let (Some(filter), Some(doc), Some(section)) = (
                        filter.as_deref_mut(),
                        &whole,
                        all_sections.get(section_index),
                    ) {
                        // The slot the link would take, for the filter's report.
                        link.link_index = links.len();
                        let at = Placement {
                            doc,
                            section,
                            section_index,
                            node: page.node_chars(index),
                        };
                        if !filter.keep(&link, &at) {
                            tested.insert(mention);
                            continue;
                        }
                    }
                    if links.offer(link) {
                        return Ok(links.finish(Stop::MaxRecommendations));
                    }
                }
            }
            tested.insert(mention);
        }
    }
    Ok(links.finish(Stop::Complete))
}

/// The page's top-level nodes as the pass reads them.
enum PageNodes<'a> {
    /// Parsed before the pass.
    Whole(&'a [Node]),
    /// Parsed as far as the pass reads (boxed: the tokenizer's state is large).
    Stream(Box<NodeStream<'a>>),
}

impl PageNodes<'_> {
    /// Node `index`, `None` past the last.
    fn get(&mut self, index: usize) -> Result<Option<Node>, TextError> {
        match self {
            PageNodes::Whole(nodes) => Ok(nodes.get(index).copied()),
            PageNodes::Stream(stream) => stream.node(index),
        }
    }
}

/// The answer when the page's markup could not be read (`error`): the links found so far
/// once the time budget is spent or the pass cancelled; the work limit's error over it.
fn markup_unread(
    error: TextError,
    request: &Request<'_>,
    budget: &Budget<'_>,
    links: Selection,
) -> Result<Recommendations, TextError> {
    match error {
        TextError::ParseLimitExceeded if budget.spent_now() => Ok(links.finish(Stop::TimeBudget)),
        TextError::ParseLimitExceeded => Err(TextError::WorkLimitExceeded {
            stage: "markup",
            limit: request.max_work.unwrap_or(u64::MAX),
        }),
        e => Err(e),
    }
}

/// When the pass stops early: at the end of the request's time budget, or once another
/// thread sets `cancel`.
pub(super) struct Budget<'a> {
    started: Instant,
    limit: Option<Duration>,
    cancel: Option<&'a AtomicBool>,
    /// Checks made so far: the clock is read at the first and then at every
    /// `CLOCK_EVERY`th.
    checks: Cell<u32>,
}

/// How often (in checks) `Budget::spent` reads the clock. The pass checks before every
/// gram, sentence, mention and existing link, thousands of times per page; reading the
/// clock each time cost 1–3 % of a budgeted pass, and a budget of seconds does not need
/// that precision.
const CLOCK_EVERY: u32 = 16;

impl Budget<'_> {
    /// Whether to stop: cancelled (looked at on every call), or the time budget is over
    /// (the clock is read on the first call and then every `CLOCK_EVERY` calls).
    pub(super) fn spent(&self) -> bool {
        if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return true;
        }
        let Some(limit) = self.limit else {
            return false;
        };
        let n = self.checks.get();
        self.checks.set(n.wrapping_add(1));
        n.is_multiple_of(CLOCK_EVERY) && self.started.elapsed() > limit
    }

    /// `Budget::spent` with the clock read now: to tell a parse stopped by its deadline
    /// from one stopped by its work limit.
    pub(super) fn spent_now(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
            || self.limit.is_some_and(|b| self.started.elapsed() > b)
    }
}

#[cfg(test)]
mod tests;
