//! A link model held in tables, for the placement tests: candidates by anchor, redirects,
//! the pages that exist, and how candidates score. The including module has `Candidate`
//! and `LinkModel` of the pipeline in scope.

use std::collections::{HashMap, HashSet};

use super::{Candidate, LinkModel};

/// How candidates score.
#[allow(dead_code)] // each test uses one way
pub enum Scoring {
    /// Every candidate the same.
    Every(f32),
    /// By mention: the target scored for it scores its score, any other candidate 0.
    ByMention(HashMap<String, (String, f32)>),
}

/// A link model held in tables.
pub struct TableModel {
    pub anchors: HashMap<String, Vec<Candidate<'static>>>,
    pub redirects: HashMap<String, String>,
    pub pages: HashSet<String>,
    pub scoring: Scoring,
}

impl LinkModel for TableModel {
    fn candidates(&self, anchor: &str) -> Option<Vec<Candidate<'_>>> {
        self.anchors.get(anchor).cloned()
    }
    fn redirect(&self, title: &str) -> Option<String> {
        self.redirects.get(title).cloned()
    }
    fn has_page(&self, title: &str) -> bool {
        self.pages.contains(title)
    }
    fn scores(&self, _page: &str, mention: &str, candidates: &[Candidate<'_>]) -> Vec<f32> {
        candidates
            .iter()
            .map(|c| match &self.scoring {
                Scoring::Every(score) => *score,
                Scoring::ByMention(scored) => match scored.get(mention) {
                    Some((target, score)) if *target == c.title => *score,
                    _ => 0.0,
                },
            })
            .collect()
    }
}
