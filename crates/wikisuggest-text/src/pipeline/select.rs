//! The list of links the pass returns: each placed link is offered in discovery order, and
//! the list is cut once it holds `max_recommendations` links.
//!
//! This is the one place where the final list is chosen: a rule that keeps a placed link
//! out of the list decides here, before the cut counts it.

use super::{LinkRecommendation, Recommendations, Stop};

/// The links kept so far.
pub(super) struct Selection {
    links: Vec<LinkRecommendation>,
    /// Stop after exactly this many links; `0` and negative values never match.
    max_recommendations: i64,
}

impl Selection {
    pub(super) fn new(max_recommendations: i64) -> Self {
        Self {
            links: Vec::new(),
            max_recommendations,
        }
    }

    /// Adds a placed link at the end of the list (its `link_index` is its position);
    /// `true` once the list is full, when the pass stops.
    pub(super) fn offer(&mut self, mut link: LinkRecommendation) -> bool {
        link.link_index = self.links.len();
        self.links.push(link);
        i64::try_from(self.links.len()).is_ok_and(|n| n == self.max_recommendations)
    }

    /// How many links are kept.
    pub(super) fn len(&self) -> usize {
        self.links.len()
    }

    /// The result, with why the pass ended.
    pub(super) fn finish(self, stop: Stop) -> Recommendations {
        Recommendations {
            links: self.links,
            stop,
        }
    }
}
