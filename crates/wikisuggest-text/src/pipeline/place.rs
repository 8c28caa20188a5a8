//! Placing one link: choosing the mention's target, splicing the link markup into the
//! node's current text, and the offsets, context and `match_index` of the placed link.

use memchr::memmem;

use super::matching::{count, expand_template, find_mention, find_mention_str};
use super::model::{Candidate, LinkModel};
use super::page_text::{PageText, char_offset};
use super::{CONTEXT, LinkRecommendation, Request, TOP_CANDIDATES, format_f32};
use crate::error::TextError;
use crate::pyunicode;

/// Replaces the first occurrence of `original` in text node `ordinal` of `page` by the link markup upstream
/// writes (`[[target|original|pr=score]]`); whether it was found.
pub(super) fn splice_link(
    page: &mut PageText<'_>,
    ordinal: usize,
    (text, original): (&str, &[char]),
    target: &str,
    score: f32,
) -> Result<bool, TextError> {
    let replacement = expand_template(&format!("[[{target}|{text}|pr={}]]", format_f32(score)))
        .map_err(|e| TextError::BadReplacement {
            target: target.to_owned(),
            reason: e.0,
        })?;
    // Nodes are only copied to be changed: look first.
    let current = page.current_str(ordinal);
    let Some(byte) = find_mention_str(current, text) else {
        return Ok(false);
    };
    let at = char_offset(current, byte, page.current(ordinal).len());
    Ok(page.splice(ordinal, at, original.len(), &replacement))
}

/// Scores the top candidates and keeps the best one if it reaches the
/// threshold (ties: the first; NaN scores compare as upstream's `max`).
pub(super) fn classify(
    model: &dyn LinkModel,
    request: &Request<'_>,
    mention: &str,
    mut candidates: Vec<Candidate<'_>>,
) -> Option<(String, f32)> {
    if candidates.len() > TOP_CANDIDATES {
        // Stable: ties keep the stored order.
        candidates.sort_by_key(|c| std::cmp::Reverse(c.count));
        candidates.truncate(TOP_CANDIDATES);
    }
    let scores = model.scores(request.page_title, mention, &candidates);
    let mut best: Option<(usize, f32)> = None;
    for (i, &p) in scores.iter().enumerate().take(candidates.len()) {
        // Replace only on a strictly greater score, so NaN never wins
        // against an earlier score and never loses its first place.
        let greater =
            best.is_none_or(|(_, bp)| p.partial_cmp(&bp) == Some(std::cmp::Ordering::Greater));
        if greater {
            best = Some((i, p));
        }
    }
    let (i, p) = best?;
    if f64::from(p) < request.threshold {
        return None;
    }
    candidates.get(i).map(|c| (c.title.to_string(), p))
}

/// Offsets, context and `match_index` of a link just placed in node `ordinal` (its
/// `link_index` is set where the list is kept, see `select`).
#[allow(clippy::too_many_arguments)]
pub(super) fn place(
    page: &PageText<'_>,
    ordinal: usize,
    node_start: usize,
    mention: &str,
    original: &[char],
    target: String,
    score: f32,
) -> Result<LinkRecommendation, TextError> {
    let orig = page.original(ordinal);
    let orig_str = page.original_str(ordinal);
    let link_text: String = original.iter().collect();
    // The mention's offset in the node, and the occurrences before it there.
    let (i1, in_node) = match find_mention_str(orig_str, &link_text) {
        Some(byte) => {
            let prefix = orig_str.get(..byte).unwrap_or_default();
            (
                char_offset(orig_str, byte, orig.len()),
                // `str.count` is leftmost non-overlapping, as `find_iter`.
                memmem::find_iter(prefix.as_bytes(), link_text.as_bytes()).count(),
            )
        }
        None => {
            // Rare fallback: match in lowercased coordinates.
            let lower: Vec<char> = pyunicode::lower(&orig.iter().collect::<String>())
                .chars()
                .collect();
            let lower_mention: Vec<char> = pyunicode::lower(&original.iter().collect::<String>())
                .chars()
                .collect();
            let i1 =
                find_mention(&lower, &lower_mention).ok_or_else(|| TextError::MentionNotFound {
                    mention: mention.to_owned(),
                    text: lower.iter().collect(),
                })?;
            (i1, count(orig.get(..i1).unwrap_or_default(), original))
        }
    };
    let slice = |a: usize, b: usize| -> String {
        let b = b.min(orig.len());
        orig.get(a.min(b)..b).unwrap_or_default().iter().collect()
    };
    let context_before = slice(i1.saturating_sub(CONTEXT), i1);
    let after_start = i1 + original.len();
    let context_after = slice(after_start, after_start + CONTEXT);
    // Preceding nodes: up to the first node whose current text equals ours.
    let this = page.current(ordinal);
    let position = (page.lengths.get(..ordinal).unwrap_or_default().iter())
        .enumerate()
        .filter(|&(_, &length)| length == this.len())
        .map(|(j, _)| j)
        .find(|&j| page.current(j) == this)
        .unwrap_or(ordinal);
    let before = page.count_before(position, original);
    let match_index = before + in_node;
    Ok(LinkRecommendation {
        link_index: 0,
        link_text,
        link_target: target,
        score,
        wikitext_offset: node_start + i1,
        match_index,
        context_before,
        context_after,
    })
}
