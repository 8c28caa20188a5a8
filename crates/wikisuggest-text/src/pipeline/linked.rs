//! The links already on the page (and the page's own title): a candidate mention they
//! cover, or a candidate target they already link, is not linked again.

use std::ops::Range;

use memchr::memmem;

use super::model::{Candidate, LinkModel};
use super::strings::StrSet;
use super::{Budget, Request};
use crate::error::TextError;
use crate::title::{normalise_anchor_into, normalise_title_into};
use crate::wikitext::{Lexed, ParseLimits, wikilink_ranges_in};

/// The existing links' titles and labels read per byte of page, at most (see
/// [`Linked::existing`]).
const LABEL_BYTES_PER_BYTE: u64 = 8;
/// ... and the length of labels any page may read.
const LABEL_BYTES_MIN: u64 = 64 * 1024;

/// The mentions and targets already linked on the page; a candidate mention that one of
/// them covers is not linked again.
pub(super) struct Linked {
    /// Kept in one buffer, each followed by a NUL: a mention without NUL occurs inside a
    /// linked mention exactly when it occurs in that buffer, so one search answers.
    mentions: StrSet,
    pub(super) targets: StrSet,
}

impl Linked {
    /// The page's existing links (targets through redirects, kept only when the page
    /// exists; of the links with one anchor, the last kept counts) and the page's own
    /// title, or `None` when the budget ran out while reading them. `work`: the request's
    /// work limit and the work spent on the page so far.
    ///
    /// # Errors
    /// [`TextError::WorkLimitExceeded`] over the work limit, or when the labels to read
    /// total more than [`LABEL_BYTES_PER_BYTE`] times the page (plus [`LABEL_BYTES_MIN`]).
    pub(super) fn existing(
        model: &dyn LinkModel,
        request: &Request<'_>,
        (lexed, init): (&Lexed<'_>, &str),
        (limits, work): (&ParseLimits, Option<(u64, u64)>),
        budget: &Budget<'_>,
    ) -> Result<Option<Self>, TextError> {
        let limits = ParseLimits {
            max_reads: work.map(|(max, spent)| max.saturating_sub(spent)),
            ..*limits
        };
        // The page up to its first NUL (`init`), read through the partition's lexing.
        let (ranges, link_work) = match wikilink_ranges_in(lexed, &limits, budget.cancel) {
            Ok(found) => found,
            Err(TextError::ParseLimitExceeded) if budget.spent_now() => return Ok(None),
            Err(TextError::ParseLimitExceeded) => {
                return Err(TextError::WorkLimitExceeded {
                    stage: "existing links",
                    limit: work.map_or(u64::MAX, |(max, _)| max),
                });
            }
            Err(e) => return Err(e),
        };
        // Nested links (`[[a|[[a|…]]]]`) have overlapping labels: each link is a range, and
        // its label a slice of the page while it is normalised. Their total length grows
        // with the square of the nesting, so it is bounded: by the request's work limit,
        // and in any case linearly in the page (real articles stay below one byte of label
        // per byte of page).
        let own = (init.len() as u64)
            .saturating_mul(LABEL_BYTES_PER_BYTE)
            .saturating_add(LABEL_BYTES_MIN);
        let (label_limit, limit) = match work {
            Some((max, spent)) => {
                let left = max.saturating_sub(spent).saturating_sub(link_work);
                (left.min(own), if left < own { max } else { own })
            }
            None => (own, own),
        };
        let mut label_bytes = 0u64;
        let mut linked = Self {
            mentions: StrSet::with_capacity(ranges.len() + 1),
            targets: StrSet::with_capacity(ranges.len() + 1),
        };
        // Read from the last link back, the first link kept for an anchor is the one the
        // later duplicates would have left in place: the earlier links with that anchor
        // need no title look-ups at all. (Upstream keeps anchor → target in a dict; only
        // its keys and values are used, as the linked mentions and targets.)
        //
        // First every link's anchor and title, into `names`, up to where the budget or the
        // labels' bound stops the reading; the model is told the titles at once, then the
        // links are read in the same order and looked up as before.
        let mut names = String::new();
        let mut read: Vec<(Range<usize>, Range<usize>)> = Vec::with_capacity(ranges.len());
        let mut stop = None;
        for link in ranges.iter().rev() {
            if budget.spent() {
                stop = Some(Ok(None));
                break;
            }
            let label = link.text.clone().unwrap_or_default();
            label_bytes += (link.title.len() + label.len()) as u64;
            if label_bytes > label_limit {
                stop = Some(Err(TextError::WorkLimitExceeded {
                    stage: "existing links' labels",
                    limit,
                }));
                break;
            }
            let raw_title = init.get(link.title.clone()).unwrap_or_default();
            let start = names.len();
            match link.text.clone().and_then(|r| init.get(r)) {
                Some(text) if !text.is_empty() => normalise_anchor_into(&mut names, text),
                _ => normalise_anchor_into(&mut names, raw_title),
            }
            let anchor = start..names.len();
            normalise_title_into(&mut names, raw_title);
            read.push((anchor.clone(), anchor.end..names.len()));
        }
        let titles: Vec<&str> = read
            .iter()
            .map(|(_, title)| names.get(title.clone()).unwrap_or_default())
            .collect();
        model.prepare_link_targets(&titles);
        let mut target = String::new();
        for ((anchor, _), title) in read.iter().zip(titles) {
            // Checked again: the look-ups take longer than the reading.
            if budget.spent() {
                return Ok(None);
            }
            let anchor = names.get(anchor.clone()).unwrap_or_default();
            if linked.mentions.contains(anchor) {
                continue;
            }
            target.clear();
            if model.link_target(title, &mut target) {
                linked.mentions.insert(anchor);
                linked.targets.insert(&target);
            }
        }
        if let Some(stopped) = stop {
            return stopped;
        }
        let (mut anchor, mut title) = (String::new(), String::new());
        normalise_anchor_into(&mut anchor, request.page_title);
        linked.mentions.insert(&anchor);
        normalise_title_into(&mut title, request.page_title);
        linked.targets.insert(&title);
        Ok(Some(linked))
    }

    /// Adds a linked mention.
    pub(super) fn insert_mention(&mut self, mention: &str) {
        self.mentions.insert(mention);
    }

    /// Whether `mention` may not be linked: a candidate is already a linked target, or the
    /// mention occurs inside a linked mention.
    pub(super) fn blocks(&self, mention: &str, candidates: &[Candidate<'_>]) -> bool {
        candidates
            .iter()
            .any(|c| self.targets.contains(c.title.as_ref()))
            || if mention.contains('\0') {
                let within = memmem::Finder::new(mention.as_bytes());
                self.mentions
                    .iter()
                    .any(|s| within.find(s.as_bytes()).is_some())
            } else {
                memmem::find(self.mentions.joined().as_bytes(), mention.as_bytes()).is_some()
            }
    }
}
