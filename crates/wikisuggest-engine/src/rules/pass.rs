//! The rules at work in one page's pass: bound to a dataset once (titles through its
//! redirects), asked about every link the pass chooses, and then the limits that act on the
//! whole result.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use wikisuggest_text::TextError;
use wikisuggest_text::pipeline::{
    self, LinkFilter, LinkModel, LinkRecommendation, Placement, Recommendations, Request, Stop,
};
use wikisuggest_text::sections::sections;
use wikisuggest_text::title::canonical_title;
use wikisuggest_text::wikitext::{ParseLimits, Wikitext, wikilink_ranges_bounded};

use super::page::Stopped;
use super::{ExcludedLink, Exclusion, RuleKind, Rules};
use crate::dataset::Dataset;
use crate::error::Result;

/// The targets a rule set excludes on one dataset: each normalised title and the target it
/// redirects to, with the rule and entry that name it.
#[derive(Debug, Default)]
pub(crate) struct BoundRules {
    targets: HashMap<String, (RuleKind, String)>,
}

impl BoundRules {
    fn bind(rules: &Rules, dataset: &Dataset) -> Result<Self> {
        let mut targets =
            HashMap::with_capacity(2 * (rules.targets.len() + rules.class_titles.len()));
        let named = (rules.targets.iter()).map(|(title, given)| (title, RuleKind::Target, given));
        let classed =
            (rules.class_titles.iter()).map(|(title, item)| (title, RuleKind::Class, item));
        // Targets first: a title named outright is reported as such, not by its class.
        for (title, rule, value) in named.chain(classed) {
            let resolved = dataset.redirect(title)?;
            for key in std::iter::once(title.as_str()).chain(resolved) {
                targets
                    .entry(key.to_owned())
                    .or_insert_with(|| (rule, value.clone()));
            }
        }
        Ok(Self { targets })
    }
}

/// Most rule sets an engine keeps bound at once (one per wiki configuration in use).
const CACHED: usize = 8;

/// The rule sets an engine has bound to its dataset, newest last.
#[derive(Debug, Default)]
pub(crate) struct BoundCache(Mutex<Vec<(u64, Arc<BoundRules>)>>);

impl BoundCache {
    fn get(&self, rules: &Rules, dataset: &Dataset) -> Result<Arc<BoundRules>> {
        let mut cache = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, bound)) = cache.iter().find(|(id, _)| *id == rules.id) {
            return Ok(bound.clone());
        }
        // Bound under the lock: the workers of a batch wait for one binding, not do many.
        let bound = Arc::new(BoundRules::bind(rules, dataset)?);
        if cache.len() >= CACHED {
            cache.remove(0);
        }
        cache.push((rules.id, bound.clone()));
        Ok(bound)
    }
}

/// What the rules did to one page beyond its links.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    pub excluded: Vec<ExcludedLink>,
    pub page_excluded: Option<Exclusion>,
}

/// The pass over one page under `rules`.
///
/// # Errors
/// The outer error is the dataset's (binding the rules read its redirects); the inner result
/// is the pass's own.
pub(crate) fn recommend(
    rules: &Rules,
    cache: &BoundCache,
    dataset: &Dataset,
    model: &dyn LinkModel,
    request: &Request<'_>,
    cancel: Option<&AtomicBool>,
) -> Result<(Result<Recommendations, TextError>, Applied)> {
    let mut applied = Applied::default();
    let nothing = |stop| Recommendations {
        links: Vec::new(),
        stop,
    };
    // The page rules read the whole page before the pass: inside the page's time budget and
    // cancellation too. A page whose scan is stopped gets what a pass stopped there gives.
    let started = Instant::now();
    let spent = || {
        cancel.is_some_and(|c| c.load(Ordering::Relaxed))
            || request.time_budget.is_some_and(|b| started.elapsed() > b)
    };
    match rules.page_exclusion_within(request.wikitext, &[], &[], &spent) {
        Err(Stopped) => return Ok((Ok(nothing(Stop::TimeBudget)), applied)),
        Ok(Some(exclusion)) => {
            applied.page_excluded = Some(exclusion);
            return Ok((Ok(nothing(Stop::Complete)), applied));
        }
        Ok(None) => {}
    }
    let spec = &rules.spec;
    let sections_to_exclude: Vec<String>;
    let mut request = request.clone();
    // What is left of the budget is the pass's.
    request.time_budget = (request.time_budget).map(|b| b.saturating_sub(started.elapsed()));
    if let Some(score) = spec.min_score {
        request.threshold = request.threshold.max(score);
    }
    if let Some(most) = spec.max_links.map(i64::from)
        && (request.max_recommendations <= 0 || request.max_recommendations > most)
    {
        request.max_recommendations = most;
    }
    if !spec.exclude_sections.is_empty() {
        sections_to_exclude = (request.sections_to_exclude.iter())
            .chain(&spec.exclude_sections)
            .cloned()
            .collect();
        request.sections_to_exclude = &sections_to_exclude;
    }
    let outcome = if rules.filters_links() {
        let bound = cache.get(rules, dataset)?;
        let mut filter = PageFilter {
            rules,
            bound: &bound,
            dataset,
            excluded: Vec::new(),
            section_links: None,
            suggested: Vec::new(),
        };
        let outcome = pipeline::recommend_filtered(model, &request, cancel, Some(&mut filter));
        applied.excluded = filter.excluded;
        outcome
    } else {
        pipeline::recommend_cancellable(model, &request, cancel)
    };
    let outcome = outcome.map(|mut found| {
        limit(rules, &mut found.links, &mut applied);
        found
    });
    Ok((outcome, applied))
}

/// The limits on a whole result: too few links drop them all; past `max_links_shown`, only
/// the best scored stay (in discovery order, renumbered).
fn limit(rules: &Rules, links: &mut Vec<LinkRecommendation>, applied: &mut Applied) {
    let excluded = |links: Vec<LinkRecommendation>, rule, value: String| {
        links.into_iter().map(move |link| ExcludedLink {
            link,
            exclusion: Exclusion {
                rule,
                value: value.clone(),
            },
        })
    };
    if let Some(fewest) = rules.spec.min_links
        && links.len() < fewest as usize
        && !links.is_empty()
    {
        let value = fewest.to_string();
        applied.page_excluded = Some(Exclusion {
            rule: RuleKind::TooFewLinks,
            value: value.clone(),
        });
        let all = std::mem::take(links);
        applied
            .excluded
            .extend(excluded(all, RuleKind::TooFewLinks, value));
        return;
    }
    let Some(shown) = rules.spec.max_links_shown.map(|n| n as usize) else {
        return;
    };
    if links.len() <= shown {
        return;
    }
    // The best scored first; among equal scores, the one found first.
    let mut order: Vec<usize> = (0..links.len()).collect();
    order.sort_by(|&a, &b| {
        let (sa, sb) = (links.get(a).map(|l| l.score), links.get(b).map(|l| l.score));
        sb.partial_cmp(&sa)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    let mut keep = vec![false; links.len()];
    for &i in order.iter().take(shown) {
        if let Some(k) = keep.get_mut(i) {
            *k = true;
        }
    }
    let mut kept = Vec::with_capacity(shown);
    let mut dropped = Vec::new();
    for (link, keep) in std::mem::take(links).into_iter().zip(keep) {
        if keep {
            kept.push(link);
        } else {
            dropped.push(link);
        }
    }
    for (i, link) in kept.iter_mut().enumerate() {
        link.link_index = i;
    }
    *links = kept;
    applied
        .excluded
        .extend(excluded(dropped, RuleKind::NotShown, shown.to_string()));
}

/// Asks the rules about each link the pass chooses; keeps what they removed.
struct PageFilter<'a> {
    rules: &'a Rules,
    bound: &'a BoundRules,
    dataset: &'a Dataset,
    excluded: Vec<ExcludedLink>,
    /// The page's existing links by section, found at the first duplicate check.
    section_links: Option<Vec<SectionLink>>,
    /// Targets suggested so far, with their section.
    suggested: Vec<(usize, String)>,
}

impl PageFilter<'_> {
    fn verdict(&mut self, link: &LinkRecommendation, at: &Placement<'_>) -> Option<Exclusion> {
        if let Some((rule, value)) = self.bound.targets.get(&link.link_target) {
            return Some(Exclusion {
                rule: *rule,
                value: value.clone(),
            });
        }
        if let Some(phrase) = self.rules.anchor_rule(&link.link_text) {
            return Some(Exclusion {
                rule: RuleKind::Anchor,
                value: phrase.to_owned(),
            });
        }
        if self.rules.spec.no_duplicate_links {
            let section = at.section_index;
            let target = &link.link_target;
            let suggested = (self.suggested.iter()).any(|(s, t)| *s == section && t == target);
            let dataset = self.dataset;
            let existing = self
                .section_links
                .get_or_insert_with(|| existing_links(at.doc, dataset));
            let linked = || {
                existing
                    .iter()
                    .any(|l| l.section == section && l.start < at.node.start && l.target == *target)
            };
            if suggested || linked() {
                return Some(Exclusion {
                    rule: RuleKind::Duplicate,
                    value: target.clone(),
                });
            }
            self.suggested.push((section, target.clone()));
        }
        None
    }
}

impl LinkFilter for PageFilter<'_> {
    fn keep(&mut self, link: &LinkRecommendation, at: &Placement<'_>) -> bool {
        match self.verdict(link, at) {
            None => true,
            Some(exclusion) => {
                self.excluded.push(ExcludedLink {
                    link: link.clone(),
                    exclusion,
                });
                false
            }
        }
    }
}

/// A wikilink of a page, placed in its section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionLink {
    /// The section's position (0: the lead, even when empty), as the pass counts them.
    pub section: usize,
    /// Code point offset of the link's `[[`.
    pub start: usize,
    /// Code point offset just past its `]]`.
    pub end: usize,
    /// The target as written (without a `#fragment`).
    pub title: String,
    /// The label (everything after the first `|`), if it has one.
    pub label: Option<String>,
    /// Its target, normalised and through one redirect where `redirect` knows one.
    pub target: String,
}

/// The sections of a page as the pass sees them: each one's heading title (stripped; `None`
/// for the lead) and the code point offset where it starts.
pub fn page_sections(wikitext: &str) -> Vec<(Option<String>, usize)> {
    let doc = Wikitext::parse(wikitext);
    sections(&doc)
        .iter()
        .map(|s| {
            let start = doc
                .nodes()
                .get(s.nodes.start)
                .map_or(doc.chars().len(), |n| n.start);
            let title = (s.heading.and_then(|h| doc.nodes().get(h)))
                .and_then(|node| node.heading_title())
                .map(|range| wikisuggest_text::pyunicode::strip(&doc.slice(range)).to_owned());
            (title, start)
        })
        .collect()
}

/// Every wikilink of `wikitext` (at any depth: templates, references and captions included)
/// with its section, the definition of "linked earlier in the section" for duplicate links.
/// A page whose links take too long to find (hostile nesting) reports none.
pub fn section_links(
    wikitext: &str,
    redirect: &dyn Fn(&str) -> Option<String>,
) -> Vec<SectionLink> {
    let doc = Wikitext::parse(wikitext);
    links_of(&doc, redirect)
}

fn existing_links(doc: &Wikitext, dataset: &Dataset) -> Vec<SectionLink> {
    links_of(doc, &|title| {
        dataset.redirect(title).ok().flatten().map(str::to_owned)
    })
}

fn links_of(doc: &Wikitext, redirect: &dyn Fn(&str) -> Option<String>) -> Vec<SectionLink> {
    let chars = doc.chars();
    let page: String = chars.iter().collect();
    // Linear in practice; the bound only stops pathological nesting.
    let limits = ParseLimits {
        deadline: None,
        max_reads: Some(64 * chars.len() as u64 + 1_000_000),
    };
    let Ok((ranges, _work)) = wikilink_ranges_bounded(&page, &limits, None) else {
        return Vec::new();
    };
    // The links come as byte ranges of the page; sections and callers count code points.
    let char_starts: Vec<usize> = page.char_indices().map(|(b, _)| b).collect();
    let char_of = |byte: usize| char_starts.partition_point(|&b| b < byte);
    let starts: Vec<usize> = sections(doc)
        .iter()
        .map(|s| {
            doc.nodes()
                .get(s.nodes.start)
                .map_or(chars.len(), |n| n.start)
        })
        .collect();
    ranges
        .into_iter()
        .map(|link| {
            let text = |range: std::ops::Range<usize>| -> String {
                page.get(range).unwrap_or_default().to_owned()
            };
            let raw = text(link.title);
            let normalised = canonical_title(&raw);
            let target = redirect(&normalised).unwrap_or(normalised);
            let start = char_of(link.span.start);
            SectionLink {
                section: starts.partition_point(|&s| s <= start).saturating_sub(1),
                start,
                end: char_of(link.span.end),
                title: raw,
                label: link.text.map(text),
                target,
            }
        })
        .collect()
}
