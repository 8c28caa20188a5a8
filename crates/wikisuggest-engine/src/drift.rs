//! What a published dataset misses against a current one (built from today's dump): link
//! targets since deleted or turned into redirects, and articles created since, which it can
//! never suggest.

use std::collections::HashSet;

use crate::dataset::Dataset;
use crate::error::Result;

/// A count and the first few examples (in title order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Examples<T> {
    /// How many there are in all.
    pub count: u64,
    /// The first of them, at most as many as asked for.
    pub first: Vec<T>,
}

impl<T> Examples<T> {
    fn add(&mut self, item: impl FnOnce() -> T, limit: usize) {
        self.count += 1;
        if self.first.len() < limit {
            self.first.push(item());
        }
    }
}

/// The differences [`drift`] finds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drift {
    /// Distinct link targets of the published anchors.
    pub targets: u64,
    /// Targets that are no article and no redirect now (deleted, or moved without one).
    pub deleted: Examples<String>,
    /// Targets that are redirects now: `(target, where it redirects)`.
    pub redirected: Examples<(String, String)>,
    /// Articles now.
    pub articles: u64,
    /// Articles now that the published page ids do not hold.
    pub new_articles: Examples<String>,
}

/// Compares the `published` dataset with `current` (the same wiki, built from a recent
/// dump), keeping up to `examples` of each kind.
pub fn drift(published: &Dataset, current: &Dataset, examples: usize) -> Result<Drift> {
    let mut targets: HashSet<String> = HashSet::new();
    published.for_each_anchor(|_, candidates| {
        for c in candidates {
            if !targets.contains(c.title) {
                targets.insert(c.title.to_owned());
            }
        }
        Ok(())
    })?;
    let mut sorted: Vec<String> = targets.into_iter().collect();
    sorted.sort_unstable();
    let mut out = Drift {
        targets: sorted.len() as u64,
        ..Drift::default()
    };
    for title in &sorted {
        if current.has_page(title)? {
            continue;
        }
        match current.redirect(title)? {
            Some(to) => out
                .redirected
                .add(|| (title.clone(), to.to_owned()), examples),
            None => out.deleted.add(|| title.clone(), examples),
        }
    }
    for i in 0..current.title_count() {
        let title = current.title_at(i)?;
        if !current.has_page(title)? {
            continue;
        }
        out.articles += 1;
        if !published.has_page(title)? {
            out.new_articles.add(|| title.to_owned(), examples);
        }
    }
    Ok(out)
}
