//! The one place where a caller may veto a link the placement pass has chosen.
//!
//! A vetoed link still takes its place in the pass as production would have placed it (its
//! phrase is spliced into the page, its mention and target count as linked), but it is not
//! returned and does not count towards `max_recommendations`. So excluding a link removes
//! exactly that link: every other link keeps its offsets, context and `match_index`, and the
//! slot it freed goes to the next link the pass finds, in production's order.

use std::ops::Range;

use super::LinkRecommendation;
use crate::sections::Section;
use crate::wikitext::Wikitext;

/// Where the pass is when it asks a [`LinkFilter`] about a link.
#[derive(Debug, Clone)]
pub struct Placement<'a> {
    /// The parsed page.
    pub doc: &'a Wikitext,
    /// The section being searched.
    pub section: &'a Section,
    /// Its position among all the page's sections (the lead, possibly empty, is 0).
    pub section_index: usize,
    /// Code point range of the text node holding the link.
    pub node: Range<usize>,
}

/// Decides, link by link, whether the pass returns a link it has chosen.
pub trait LinkFilter {
    /// Whether `link` is returned (`false` vetoes it as described in the module docs).
    fn keep(&mut self, link: &LinkRecommendation, at: &Placement<'_>) -> bool;
}
