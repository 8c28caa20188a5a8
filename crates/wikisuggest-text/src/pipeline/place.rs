//! Placing one link: choosing the mention's target, splicing the link markup into the
//! node's current text, and the offsets, context and `match_index` of the placed link.

use memchr::memmem;

use super::matching::{count, expand_template, find_mention, find_mention_str};
use super::model::{Candidate, LinkModel};
use super::page_text::{PageText, char_offset};
use super::{CONTEXT, LinkRecommendation, Request, TOP_CANDIDATES, format_f32};
use crate::error::TextError;
use crate::pyunicode;

/// Replaces the first occurrence of `text` in text node `ordinal` of `page` by the link
/// markup upstream writes (`[[target|text|pr=score]]`); whether it was found.
// Out of line: the engine benchmark counts the pass's stages by function (`bench/engine.py`).
#[inline(never)]
pub(super) fn splice_link(
    page: &mut PageText<'_>,
    ordinal: usize,
    text: &str,
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
    Ok(page.splice(ordinal, byte, text.len(), &replacement))
}

/// Scores the top candidates and keeps the best one if it reaches the
/// threshold (ties: the first; NaN scores compare as upstream's `max`).
// Out of line: the engine benchmark counts the pass's stages by function (`bench/engine.py`).
#[inline(never)]
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
// Out of line: the engine benchmark counts the pass's stages by function (`bench/engine.py`).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) fn place(
    page: &mut PageText<'_>,
    ordinal: usize,
    node_start: usize,
    mention: &str,
    original: &str,
    target: String,
    score: f32,
) -> Result<LinkRecommendation, TextError> {
    let orig_str = page.original_str(ordinal);
    let link_text = original.to_owned();
    // The mention's place in the node, and the occurrences before it there.
    let (i1, in_node, context_before, context_after) = match find_mention_str(orig_str, original) {
        Some(byte) => {
            let prefix = orig_str.get(..byte).unwrap_or_default();
            let after = orig_str.get(byte + original.len()..).unwrap_or_default();
            (
                char_offset(orig_str, byte, page.original_len(ordinal)),
                // `str.count` is leftmost non-overlapping, as `find_iter`.
                memmem::find_iter(prefix.as_bytes(), original.as_bytes()).count(),
                last_chars(prefix, CONTEXT).to_owned(),
                first_chars(after, CONTEXT).to_owned(),
            )
        }
        None => lowercase_fallback(orig_str, mention, original)?,
    };
    // Preceding nodes: up to the first node whose current text equals ours.
    let this = page.current_str(ordinal);
    let length = page.lengths.get(ordinal).copied().unwrap_or(0);
    let position = (page.lengths.get(..ordinal).unwrap_or_default().iter())
        .enumerate()
        .filter(|&(_, &l)| l == length)
        .map(|(j, _)| j)
        .find(|&j| page.current_str(j) == this)
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

/// The last `n` code points of `text` (all of it when shorter).
fn last_chars(text: &str, n: usize) -> &str {
    let Some(back) = n.checked_sub(1) else {
        return "";
    };
    let start = text.char_indices().rev().nth(back).map_or(0, |(b, _)| b);
    text.get(start..).unwrap_or_default()
}

/// The first `n` code points of `text` (all of it when shorter).
fn first_chars(text: &str, n: usize) -> &str {
    let end = text.char_indices().nth(n).map_or(text.len(), |(b, _)| b);
    text.get(..end).unwrap_or_default()
}

/// Where the mention is when the original node does not hold it as written (rare):
/// upstream then searches the lowercased node for the lowercased mention and uses that
/// offset in the original node's code points.
fn lowercase_fallback(
    orig_str: &str,
    mention: &str,
    original: &str,
) -> Result<(usize, usize, String, String), TextError> {
    let orig: Vec<char> = orig_str.chars().collect();
    let original: Vec<char> = original.chars().collect();
    let lower: Vec<char> = pyunicode::lower(orig_str).chars().collect();
    let lower_mention: Vec<char> = pyunicode::lower(&original.iter().collect::<String>())
        .chars()
        .collect();
    let i1 = find_mention(&lower, &lower_mention).ok_or_else(|| TextError::MentionNotFound {
        mention: mention.to_owned(),
        text: lower.iter().collect(),
    })?;
    let slice = |a: usize, b: usize| -> String {
        let b = b.min(orig.len());
        orig.get(a.min(b)..b).unwrap_or_default().iter().collect()
    };
    let after_start = i1 + original.len();
    Ok((
        i1,
        count(orig.get(..i1).unwrap_or_default(), &original),
        slice(i1.saturating_sub(CONTEXT), i1),
        slice(after_start, after_start + CONTEXT),
    ))
}
