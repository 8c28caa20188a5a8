//! The contract between the placement pass and a wiki's datasets and model: what the pass
//! asks ([`LinkModel`]) and the shapes it asks in.

use std::borrow::Cow;

/// Longest n-gram.
pub const MAX_GRAM: usize = 5;

/// One candidate target of an anchor, in the dataset's stored order.
///
/// The title may borrow from the model: a dataset read in place hands out its own titles,
/// and the pass copies only the one it links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate<'m> {
    /// Target article title.
    pub title: Cow<'m, str>,
    /// Number of times the anchor links to it.
    pub count: u64,
}

/// The datasets and model of one wiki.
pub trait LinkModel: Send + Sync {
    /// Candidates of an anchor (the exact, Python-lowercased n-gram) in
    /// stored order, or `None` when it is not an anchor.
    fn candidates(&self, anchor: &str) -> Option<Vec<Candidate<'_>>>;

    /// Whether `anchor` has candidates; called for every n-gram of the page, so
    /// implementations should answer without building the candidate list.
    fn is_anchor(&self, anchor: &str) -> bool {
        self.candidates(anchor).is_some()
    }

    /// [`LinkModel::is_anchor`] for the prefixes `text[..end]`, `end` in `ends`
    /// (ascending), appended to `out` in order: the 1- to 5-word grams from one position
    /// are prefixes of the longest, which lets an implementation share work between them.
    fn anchor_prefixes(&self, text: &str, ends: &[usize], out: &mut Vec<bool>) {
        out.extend(
            ends.iter()
                .map(|&end| text.get(..end).is_some_and(|key| self.is_anchor(key))),
        );
    }

    /// [`LinkModel::anchor_prefixes`] for many positions of one text at once, one answer
    /// row per [`GramRow`] appended to `out` (unused slots `false`). Asking for a whole
    /// sentence lets an implementation overlap the table look-ups of its positions instead
    /// of waiting for each in turn.
    fn anchor_rows(&self, text: &str, rows: &[GramRow], out: &mut Vec<[bool; MAX_GRAM]>) {
        let mut ends = Vec::with_capacity(MAX_GRAM);
        let mut answers = Vec::with_capacity(MAX_GRAM);
        for row in rows {
            let mut answer = [false; MAX_GRAM];
            let grams = row.ends.get(..row.len).unwrap_or_default();
            let key = grams.last().and_then(|&end| text.get(row.start..end));
            if let Some(key) = key.filter(|_| grams.iter().all(|&end| end >= row.start)) {
                ends.clear();
                ends.extend(grams.iter().map(|&end| end - row.start));
                answers.clear();
                self.anchor_prefixes(key, &ends, &mut answers);
                for (slot, &a) in answer.iter_mut().zip(&answers) {
                    *slot = a;
                }
            }
            out.push(answer);
        }
    }

    /// The target of a redirect title, if it is one (one hop).
    fn redirect(&self, title: &str) -> Option<String>;

    /// Whether `title` is an article (a key of `pageids`).
    fn has_page(&self, title: &str) -> bool;

    /// Where a link to `title` leads: its redirect's target, or `title` itself when it is
    /// no redirect ([`LinkModel::redirect`]), appended to `out` when that is an article
    /// ([`LinkModel::has_page`]); whether it is. An implementation may answer both
    /// questions with one look-up and no allocation.
    fn link_target(&self, title: &str, out: &mut String) -> bool {
        let redirect = self.redirect(title);
        let target = redirect.as_deref().unwrap_or(title);
        let page = self.has_page(target);
        if page {
            out.push_str(target);
        }
        page
    }

    /// Told before [`LinkModel::link_target`] is asked of each of `titles`: a model may
    /// fetch what those look-ups will read, all at once, so that their waits for memory
    /// overlap. A hint, which changes no answer; by default nothing is done.
    fn prepare_link_targets(&self, _titles: &[&str]) {}

    /// Model probabilities (float32) for `candidates` of `mention` on the
    /// page `page_title`, one per candidate, in order.  `candidates` is the
    /// top-10 slice; features that need the full candidate set can ask
    /// [`LinkModel::candidates`].
    fn scores(&self, page_title: &str, mention: &str, candidates: &[Candidate<'_>]) -> Vec<f32>;
}

/// The 1- to [`MAX_GRAM`]-word grams from one position of a text (see
/// [`LinkModel::anchor_rows`]): their keys are `text[start..end]` for each `end` in
/// `ends[..len]`, ascending, so each is a prefix of the next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GramRow {
    /// Byte offset of the grams' first token.
    pub start: usize,
    /// Byte offsets where the 1-, 2-, … word grams end.
    pub ends: [usize; MAX_GRAM],
    /// How many of `ends` are grams.
    pub len: usize,
}
