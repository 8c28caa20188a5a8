//! The links already on the page (and the page's own title): a candidate mention they
//! cover, or a candidate target they already link, is not linked again.

use memchr::memmem;

use super::model::{Candidate, LinkModel};
use super::page_text::ByteOffsets;
use super::{Budget, HashMap, HashSet, Request};
use crate::error::TextError;
use crate::title::{normalise_anchor, normalise_title};
use crate::wikitext::{ParseLimits, wikilink_ranges_bounded};

/// The mentions and targets already linked on the page; a candidate mention that one of
/// them covers is not linked again.
pub(super) struct Linked {
    mentions: HashSet<String>,
    /// Every linked mention, each followed by a NUL: a mention without NUL occurs inside a
    /// linked mention exactly when it occurs in this text, so one search answers.
    joined: String,
    pub(super) targets: HashSet<String>,
}

impl Linked {
    /// The page's existing links (targets through redirects, kept only when the page
    /// exists; of the links with one anchor, the last kept counts) and the page's own title, or `None`
    /// when the budget ran out while reading them.
    pub(super) fn existing(
        model: &dyn LinkModel,
        request: &Request<'_>,
        (init, init_chars): (&str, &[char]),
        limits: &ParseLimits,
        budget: &Budget<'_>,
    ) -> Result<Option<Self>, TextError> {
        let mut link_dict: HashMap<String, String> = HashMap::default();
        // Nested links (`[[a|[[a|…]]]]`) make link extraction quadratic and their labels
        // overlap: links come as ranges, are extracted within the budget, and each label is
        // read as a slice of the page only while it is normalised, with the budget checked
        // before each.
        let ranges = match wikilink_ranges_bounded(init_chars, limits, budget.cancel) {
            Ok(ranges) => ranges,
            Err(TextError::ParseLimitExceeded) => return Ok(None),
            Err(e) => return Err(e),
        };
        let bytes = ByteOffsets::new(init, init_chars.len());
        // Read from the last link back, the first link kept for an anchor is the one the
        // later duplicates would have left in place: the earlier links with that anchor
        // need no title look-ups at all.
        for link in ranges.into_iter().rev() {
            if budget.spent() {
                return Ok(None);
            }
            let title = bytes.slice(link.title);
            let anchor = match link.text.map(|r| bytes.slice(r)) {
                Some(text) if !text.is_empty() => normalise_anchor(text),
                _ => normalise_anchor(title),
            };
            if link_dict.contains_key(&anchor) {
                continue;
            }
            let mut target = normalise_title(title);
            if let Some(resolved) = model.redirect(&target) {
                target = resolved;
            }
            if model.has_page(&target) {
                link_dict.insert(anchor, target);
            }
        }
        let mut linked = Self {
            mentions: HashSet::with_capacity_and_hasher(link_dict.len() + 1, Default::default()),
            joined: String::new(),
            targets: HashSet::with_capacity_and_hasher(link_dict.len() + 1, Default::default()),
        };
        // The anchors are distinct keys: each moves into the set without a check or copy.
        for (anchor, target) in link_dict {
            linked.joined.push_str(&anchor);
            linked.joined.push('\0');
            linked.mentions.insert(anchor);
            linked.targets.insert(target);
        }
        linked.insert_mention(&normalise_anchor(request.page_title));
        linked.targets.insert(normalise_title(request.page_title));
        Ok(Some(linked))
    }

    /// Adds a linked mention.
    pub(super) fn insert_mention(&mut self, mention: &str) {
        if !self.mentions.contains(mention) {
            self.mentions.insert(mention.to_owned());
            self.joined.push_str(mention);
            self.joined.push('\0');
        }
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
                memmem::find(self.joined.as_bytes(), mention.as_bytes()).is_some()
            }
    }
}
