//! The engine's result as the service's response record: the one mapping from
//! [`LinkRecommendationSet`] to `wikisuggest_records`, used by the reference server (which
//! answers with it) and by the Python binding (whose records are the client's).

use wikisuggest_records as records;

use crate::recommend::{LinkRecommendationSet, Meta};
use crate::tables::DatasetChecksums;
use wikisuggest_text::pipeline::LinkRecommendation;

/// A count or offset as the wire's integer (never out of range for a real page; `None`
/// rather than a wrapped value if it were).
fn wire_int(n: usize) -> Option<i64> {
    i64::try_from(n).ok()
}

/// A link of the text crate's pipeline as the wire's record (a type of another crate, hence
/// a function).
pub fn link_record(l: LinkRecommendation) -> records::LinkRecommendation {
    records::LinkRecommendation {
        link_text: l.link_text,
        link_target: l.link_target,
        score: Some(f64::from(l.score)),
        wikitext_offset: wire_int(l.wikitext_offset),
        context_before: Some(l.context_before),
        context_after: Some(l.context_after),
        link_index: wire_int(l.link_index),
        match_index: wire_int(l.match_index),
        extra: Default::default(),
    }
}

impl From<DatasetChecksums> for records::DatasetChecksums {
    fn from(sums: DatasetChecksums) -> Self {
        Self {
            anchors: sums.anchors,
            model: sums.model,
            pageids: sums.pageids,
            redirects: sums.redirects,
            w2vfiltered: sums.w2vfiltered,
            extra: Default::default(),
        }
    }
}

impl From<Meta> for records::Meta {
    fn from(meta: Meta) -> Self {
        Self {
            application_version: Some(meta.application_version),
            dataset_checksums: Some(meta.dataset_checksums.into()),
            format_version: Some(meta.format_version),
            extra: Default::default(),
        }
    }
}

impl From<LinkRecommendationSet> for records::LinkRecommendationSet {
    fn from(set: LinkRecommendationSet) -> Self {
        Self {
            links_count: wire_int(set.links.len()),
            links: set.links.into_iter().map(link_record).collect(),
            meta: Some(set.meta.into()),
            page_title: Some(set.page_title),
            pageid: set.pageid,
            revid: set.revid,
            extra: Default::default(),
        }
    }
}
