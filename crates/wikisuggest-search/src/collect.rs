//! Every document a query matches, with its score and page id: what a filtered or unbounded
//! morelike needs (`morelikethis` beside a topic keeps the whole match set).

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

/// Collects `(score, page id)` of every match.
pub struct AllMatches;

pub struct SegmentMatches {
    page_ids: Column<u64>,
    found: Vec<(Score, u64)>,
}

impl Collector for AllMatches {
    type Fruit = Vec<(Score, u64)>;
    type Child = SegmentMatches;

    fn for_segment(
        &self,
        _segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentMatches> {
        Ok(SegmentMatches {
            page_ids: reader.fast_fields().u64("page_id")?,
            found: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Vec<(Score, u64)>>) -> tantivy::Result<Self::Fruit> {
        Ok(fruits.into_iter().flatten().collect())
    }
}

impl SegmentCollector for SegmentMatches {
    type Fruit = Vec<(Score, u64)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if let Some(page_id) = self.page_ids.first(doc) {
            self.found.push((score, page_id));
        }
    }

    fn harvest(self) -> Self::Fruit {
        self.found
    }
}
