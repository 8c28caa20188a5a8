//! Section iteration with exclusion, as the production engine does it
//! (mwparserfromhell `get_sections(include_lead=True, include_headings=True,
//! flat=True)`).

use std::collections::HashSet;
use std::ops::Range;

use crate::pyunicode;
use crate::wikitext::{Node, NodeKind, Wikitext};

/// The exact, case-sensitive entry that excludes the lead section.
pub const LEAD_MARKER: &str = "%LEAD%";

/// A flat section: the lead (no heading) or one top-level heading and the
/// nodes up to the next top-level heading of any level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Index of the heading node (the first node), `None` for the lead.
    pub heading: Option<usize>,
    /// Range of node indices, heading included.
    pub nodes: Range<usize>,
}

impl Section {
    /// Whether the section has no nodes (only the lead can be empty).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

/// All sections in document order, starting with the (possibly empty) lead.
pub fn sections(doc: &Wikitext) -> Vec<Section> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut heading = None;
    for (i, node) in doc.nodes().iter().enumerate() {
        if node.kind == NodeKind::Heading {
            out.push(Section {
                heading,
                nodes: start..i,
            });
            start = i;
            heading = Some(i);
        }
    }
    out.push(Section {
        heading,
        nodes: start..doc.nodes().len(),
    });
    out
}

/// The `sections_to_exclude` rule: case-folded exact titles, plus the lead
/// when [`LEAD_MARKER`] is listed.
#[derive(Debug, Clone, Default)]
pub struct SectionExclusion {
    exclude_lead: bool,
    titles: HashSet<String>,
}

impl SectionExclusion {
    /// Builds the rule from the request's list.
    pub fn new<S: AsRef<str>>(sections_to_exclude: &[S]) -> Self {
        Self {
            exclude_lead: sections_to_exclude
                .iter()
                .any(|s| s.as_ref() == LEAD_MARKER),
            titles: sections_to_exclude
                .iter()
                .map(|s| pyunicode::casefold(s.as_ref()))
                .collect(),
        }
    }

    /// Whether `section` is skipped for candidate generation.  Empty
    /// sections are always skipped.  Exclusion does not cascade to
    /// subsections.
    pub fn excludes(&self, doc: &Wikitext, section: &Section) -> bool {
        if section.is_empty() {
            return true;
        }
        match section.heading.and_then(|i| doc.nodes().get(i)) {
            Some(heading) => self.excludes_heading(heading, doc.text()),
            None => self.excludes_lead(),
        }
    }

    /// Whether the lead section is skipped.
    pub fn excludes_lead(&self) -> bool {
        self.exclude_lead
    }

    /// Whether the section that `heading` (a node of `page`) starts is skipped.
    pub fn excludes_heading(&self, heading: &Node, page: &str) -> bool {
        let title = heading.heading_title_in(page).unwrap_or_default();
        self.titles
            .contains(&pyunicode::casefold(pyunicode::strip(title)))
    }
}

/// The sections the engine searches, in order.
pub fn included_sections(doc: &Wikitext, exclusion: &SectionExclusion) -> Vec<Section> {
    sections(doc)
        .into_iter()
        .filter(|s| !exclusion.excludes(doc, s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "Lead [[x]].\n== References ==\nrefs\n=== Bar ===\nbar\n==[[L]] b== tail\n";

    #[test]
    fn flat_sections() {
        let doc = Wikitext::parse(PAGE);
        let s = sections(&doc);
        assert_eq!(s.len(), 4);
        assert_eq!(s[0].heading, None);
        assert!(s.iter().skip(1).all(|x| x.heading == Some(x.nodes.start)));
        let titles: Vec<String> = s
            .iter()
            .filter_map(|x| x.heading)
            .map(|i| doc.slice(doc.nodes()[i].heading_title().unwrap()))
            .collect();
        assert_eq!(titles, [" References ", " Bar ", "[[L]] b"]);
    }

    #[test]
    fn exclusion_is_casefolded_exact_and_not_cascading() {
        let doc = Wikitext::parse(PAGE);
        let all = sections(&doc);
        let ex = SectionExclusion::new(&["REFERENCES", "[[l]] B"]);
        let kept: Vec<Option<usize>> = included_sections(&doc, &ex)
            .iter()
            .map(|s| s.heading)
            .collect();
        assert_eq!(kept, [all[0].heading, all[2].heading]);
        assert!(!SectionExclusion::new(&["%lead%"]).excludes(&doc, &all[0]));
        assert!(SectionExclusion::new(&[LEAD_MARKER]).excludes(&doc, &all[0]));
        assert!(!SectionExclusion::new(&["Refer"]).excludes(&doc, &all[1]));
    }

    #[test]
    fn empty_lead_is_skipped() {
        let doc = Wikitext::parse("== A ==\ntext");
        let s = sections(&doc);
        assert!(s[0].is_empty());
        assert_eq!(
            included_sections(&doc, &SectionExclusion::default()).len(),
            1
        );
    }

    #[test]
    fn heading_named_lead_marker() {
        let doc = Wikitext::parse("x\n== %lead% ==\ny");
        let s = sections(&doc);
        assert!(SectionExclusion::new(&[LEAD_MARKER]).excludes(&doc, &s[1]));
    }
}
