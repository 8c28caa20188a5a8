//! What a change of never-link rules does, computed where the pages are: every page runs
//! through the engine under the rules before and the rules after, and only the links that
//! differ leave, each with the rule that made the difference. The pages (a dump's first
//! articles, read through [`Articles`], or pages given) never become Python objects.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wikisuggest_dump::{DumpError, DumpOptions};
use wikisuggest_engine::rules::page_sections;
use wikisuggest_engine::{
    BatchStream, Engine, Error as EngineError, LinkRecommendation, LinkRecommendationSet, Page,
    RecommendOptions, link_record,
};
use wikisuggest_text::pyunicode::casefold;

use crate::articles::{Articles, Selection, engine_page};
use crate::rows::{error_class, error_text};

/// The pages of a preview.
pub enum PreviewPages {
    /// The first `sample` articles of a dump (every article without a sample).
    Dump {
        path: PathBuf,
        sample: Option<u64>,
        dump: DumpOptions,
    },
    /// Pages given, in order.
    Given(Vec<Page>),
}

/// Whether a rule set suggests a link that the other does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Suggested before, not after.
    Removed,
    /// Suggested after, not before.
    Added,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Removed => "removed",
            Self::Added => "added",
        }
    }
}

/// One link that one rule set suggests and the other does not, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkChange {
    /// The page's title as given (or as the dump writes it).
    pub page_title: String,
    pub pageid: Option<i64>,
    pub change: Change,
    /// For a removal, the rule that removed it (`target`, `class`, `anchor`, `duplicate`,
    /// `section`, `template`, `category`, `too_few_links`, `not_shown`, `min_score`,
    /// `max_links`; `displaced`: the result is full and a link the old rules removed took its
    /// slot). For an addition, `refill` (it took a freed slot) or `released` (an old rule
    /// removed it; `value` names that rule).
    pub rule: String,
    /// The rule's entry (a title, a phrase, a limit…).
    pub value: String,
    pub link: wikisuggest_records::LinkRecommendation,
}

/// The difference between two rule sets over the same pages.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RulesPreview {
    /// Pages compared (those that failed are left out of every count).
    pub pages: u64,
    pub links_before: u64,
    pub links_after: u64,
    /// Every changed link, page by page in page order.
    pub changes: Vec<LinkChange>,
    /// Pages with suggestions before and none after.
    pub lost_last: Vec<String>,
    /// Pages without suggestions before and some after.
    pub gained_first: Vec<String>,
    /// Pages that failed under either rule set: title, then `Class: message`.
    pub errors: Vec<(String, String)>,
}

/// A page waiting for its two outcomes.
struct Waiting {
    title: String,
    pageid: Option<i64>,
    /// Read only to place a link in its section, when no rule names why it went.
    wikitext: String,
}

/// What the rules after remove, besides what each excluded link names.
struct After {
    sections: Vec<String>,
    min_score: Option<f64>,
    max_links: Option<u32>,
    max_recommendations: i64,
}

/// Pages in the engines per worker, ahead of the outcomes compared (as in the dump runs).
const PAGES_PER_WORKER: usize = 8;

/// Runs `pages` under `before` and under `after` on `workers` threads each and compares them.
/// Stops early (with what was compared) once `stop` is set.
///
/// # Errors
/// The dump cannot be opened or read further, or the engine's workers cannot start.
pub fn preview_rules(
    engine: &Arc<Engine>,
    pages: PreviewPages,
    before: RecommendOptions,
    after: RecommendOptions,
    workers: usize,
    stop: &AtomicBool,
) -> Result<RulesPreview, DumpError> {
    let internal = |e: EngineError| DumpError::Io {
        path: PathBuf::new(),
        source: std::io::Error::other(e.to_string()),
    };
    let rules_after = After::of(&after);
    let workers = workers.max(1);
    let streams = (
        BatchStream::new(engine.clone(), before, workers).map_err(internal)?,
        BatchStream::new(engine.clone(), after, workers).map_err(internal)?,
    );
    let mut source = Source::open(pages)?;
    let mut waiting: VecDeque<Waiting> = VecDeque::new();
    let mut outcomes: (VecDeque<_>, VecDeque<_>) = (VecDeque::new(), VecDeque::new());
    let mut report = RulesPreview::default();
    let window = workers * PAGES_PER_WORKER;
    let mut reading = true;
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(report);
        }
        while reading && waiting.len() < window {
            match source.next()? {
                None => reading = false,
                Some(Err((title, error))) => report.errors.push((title, error)),
                Some(Ok(page)) => {
                    waiting.push_back(Waiting {
                        title: page.page_title.clone(),
                        pageid: page.pageid,
                        wikitext: page.wikitext.clone(),
                    });
                    streams.0.push(page.clone());
                    streams.1.push(page);
                }
            }
        }
        if waiting.is_empty() {
            return Ok(report);
        }
        let wait = Duration::from_millis(50);
        outcomes.0.extend(streams.0.take(wait));
        outcomes.1.extend(streams.1.take(wait));
        while !outcomes.0.is_empty() && !outcomes.1.is_empty() {
            let (Some(page), Some(b), Some(a)) = (
                waiting.pop_front(),
                outcomes.0.pop_front(),
                outcomes.1.pop_front(),
            ) else {
                break;
            };
            let not_started = || EngineError::Internal("the page was not started".into());
            let (b, a) = (
                b.unwrap_or_else(|| Err(not_started())),
                a.unwrap_or_else(|| Err(not_started())),
            );
            match (b, a) {
                (Ok(b), Ok(a)) => report.compare(&page, &b, &a, &rules_after),
                (Err(e), _) | (_, Err(e)) => {
                    report
                        .errors
                        .push((page.title, error_text(error_class(&e), &e)));
                }
            }
        }
    }
}

/// A page, or one that could not be read: its title and error.
type Read = Result<Page, (String, String)>;

/// Where the pages come from, one at a time.
enum Source {
    Dump {
        articles: Box<Articles>,
        left: Option<u64>,
    },
    Given(std::vec::IntoIter<Page>),
}

impl Source {
    fn open(pages: PreviewPages) -> Result<Self, DumpError> {
        Ok(match pages {
            PreviewPages::Dump { path, sample, dump } => Self::Dump {
                articles: Box::new(Articles::open(&path, Selection::articles(), &dump)?),
                left: sample,
            },
            PreviewPages::Given(pages) => Self::Given(pages.into_iter()),
        })
    }

    fn next(&mut self) -> Result<Option<Read>, DumpError> {
        match self {
            Self::Given(pages) => Ok(pages.next().map(Ok)),
            Self::Dump { articles, left } => {
                if *left == Some(0) {
                    return Ok(None);
                }
                let Some(article) = articles.next_article()? else {
                    return Ok(None);
                };
                if let Some(left) = left {
                    *left -= 1;
                }
                Ok(Some(article.map(engine_page).map_err(|error| {
                    let title = error.title.clone().unwrap_or_default();
                    (title, error_text("WikitextError", &error))
                })))
            }
        }
    }
}

impl After {
    fn of(options: &RecommendOptions) -> Self {
        let spec = options.rules.as_ref().map(|rules| rules.spec());
        Self {
            sections: spec
                .map(|s| s.exclude_sections.iter().map(|t| section_key(t)).collect())
                .unwrap_or_default(),
            min_score: spec.and_then(|s| s.min_score),
            max_links: spec.and_then(|s| s.max_links),
            max_recommendations: options.link.max_recommendations,
        }
    }
}

/// A section title as the rules compare them: `%LEAD%` as it is, any other stripped and
/// case-folded.
fn section_key(title: &str) -> String {
    if title == "%LEAD%" {
        title.to_owned()
    } else {
        casefold(title.trim())
    }
}

/// A link as two results are compared: its text, target and place.
type Key<'a> = (&'a str, &'a str, usize);

fn key(link: &LinkRecommendation) -> Key<'_> {
    (&link.link_text, &link.link_target, link.wikitext_offset)
}

/// Links by key in result order; a key found again keeps its first place and its last link.
fn keyed(links: &[LinkRecommendation]) -> Vec<(Key<'_>, &LinkRecommendation)> {
    let mut out: Vec<(Key<'_>, &LinkRecommendation)> = Vec::with_capacity(links.len());
    let mut at: HashMap<Key<'_>, usize> = HashMap::with_capacity(links.len());
    for link in links {
        match at.get(&key(link)) {
            Some(&i) => out[i].1 = link,
            None => {
                at.insert(key(link), out.len());
                out.push((key(link), link));
            }
        }
    }
    out
}

impl RulesPreview {
    fn compare(
        &mut self,
        page: &Waiting,
        before: &LinkRecommendationSet,
        after: &LinkRecommendationSet,
        rules: &After,
    ) {
        self.pages += 1;
        let (old_links, new_links) = (&before.links, &after.links);
        self.links_before += old_links.len() as u64;
        self.links_after += new_links.len() as u64;
        if !old_links.is_empty() && new_links.is_empty() {
            self.lost_last.push(page.title.clone());
        }
        if !new_links.is_empty() && old_links.is_empty() {
            self.gained_first.push(page.title.clone());
        }
        let full = rules.max_recommendations > 0
            && usize::try_from(rules.max_recommendations).is_ok_and(|m| m <= new_links.len());
        let old = keyed(old_links);
        let new = keyed(new_links);
        let in_new: HashSet<Key<'_>> = new.iter().map(|(k, _)| *k).collect();
        let in_old: HashSet<Key<'_>> = old.iter().map(|(k, _)| *k).collect();
        let (removed_by, removed_before) = (excluded(after), excluded(before));
        let mut sections = None;
        let mut change = |change, rule: String, value: String, link: &LinkRecommendation| {
            self.changes.push(LinkChange {
                page_title: page.title.clone(),
                pageid: page.pageid,
                change,
                rule,
                value,
                link: link_record(link.clone()),
            });
        };
        for (index, (k, link)) in old.iter().enumerate() {
            if in_new.contains(k) {
                continue;
            }
            let (rule, value) = if let Some(reason) = removed_by.get(k) {
                reason.clone()
            } else if let Some(page_rule) = &after.page_excluded {
                (page_rule.rule.name().to_owned(), page_rule.value.clone())
            } else {
                let sections = sections.get_or_insert_with(|| page_sections(&page.wikitext));
                other_reason(link, index, sections, rules, full)
            };
            change(Change::Removed, rule, value, link);
        }
        for (k, link) in &new {
            if in_old.contains(k) {
                continue;
            }
            match removed_before.get(k) {
                Some((rule, value)) => {
                    change(
                        Change::Added,
                        "released".into(),
                        format!("{rule}: {value}"),
                        link,
                    );
                }
                None => change(Change::Added, "refill".into(), String::new(), link),
            }
        }
    }
}

/// The links a result's rules removed, by key, with the rule and its entry.
fn excluded(set: &LinkRecommendationSet) -> HashMap<Key<'_>, (String, String)> {
    set.excluded
        .iter()
        .map(|e| {
            let reason = (
                e.exclusion.rule.name().to_owned(),
                e.exclusion.value.clone(),
            );
            (key(&e.link), reason)
        })
        .collect()
}

/// Why a link the rules after did not exclude outright is gone: its section is excluded, its
/// score is below the new lowest score, it is past the new most links, or a link the old rules
/// removed took its slot in a full result.
fn other_reason(
    link: &LinkRecommendation,
    index: usize,
    sections: &[(Option<String>, usize)],
    rules: &After,
    full: bool,
) -> (String, String) {
    let heading = sections
        .iter()
        .rfind(|(_, start)| *start <= link.wikitext_offset)
        .and_then(|(title, _)| title.as_deref());
    match heading {
        None if rules.sections.iter().any(|s| s == "%LEAD%") => {
            return ("section".into(), "%LEAD%".into());
        }
        Some(title) if rules.sections.contains(&casefold(title)) => {
            return ("section".into(), title.to_owned());
        }
        _ => {}
    }
    if let Some(min) = rules.min_score
        && f64::from(link.score) < min
    {
        return ("min_score".into(), python_float(min));
    }
    if let Some(max) = rules.max_links
        && index >= max as usize
    {
        return ("max_links".into(), max.to_string());
    }
    if full {
        return ("displaced".into(), rules.max_recommendations.to_string());
    }
    ("other".into(), String::new())
}

/// A float as Python's `str` writes it (`0.7`, `1.0`).
fn python_float(value: f64) -> String {
    let text = value.to_string();
    if text.contains(['.', 'e', 'i', 'N']) {
        text
    } else {
        format!("{text}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(text: &str, offset: usize, score: f32) -> LinkRecommendation {
        LinkRecommendation {
            link_index: 0,
            link_text: text.into(),
            link_target: text.to_uppercase(),
            score,
            wikitext_offset: offset,
            match_index: 0,
            context_before: String::new(),
            context_after: String::new(),
        }
    }

    fn rules(sections: &[&str], min_score: Option<f64>, max_links: Option<u32>) -> After {
        After {
            sections: sections.iter().map(|s| section_key(s)).collect(),
            min_score,
            max_links,
            max_recommendations: 15,
        }
    }

    #[test]
    fn a_link_gone_without_a_rule_is_placed() {
        let sections = [(None, 0), (Some("See Also".to_owned()), 100)];
        let lead = link("a", 10, 0.9);
        let later = link("b", 150, 0.6);
        assert_eq!(
            other_reason(&lead, 0, &sections, &rules(&["%LEAD%"], None, None), false),
            ("section".into(), "%LEAD%".into())
        );
        assert_eq!(
            other_reason(
                &later,
                1,
                &sections,
                &rules(&[" see also "], None, None),
                false
            ),
            ("section".into(), "See Also".into())
        );
        assert_eq!(
            other_reason(&later, 1, &sections, &rules(&[], Some(0.7), None), false),
            ("min_score".into(), "0.7".into())
        );
        assert_eq!(
            other_reason(&later, 1, &sections, &rules(&[], Some(1.0), Some(1)), false),
            ("min_score".into(), "1.0".into())
        );
        assert_eq!(
            other_reason(&later, 1, &sections, &rules(&[], None, Some(1)), false),
            ("max_links".into(), "1".into())
        );
        assert_eq!(
            other_reason(&later, 1, &sections, &rules(&[], None, None), true),
            ("displaced".into(), "15".into())
        );
        assert_eq!(
            other_reason(&later, 1, &sections, &rules(&[], None, None), false),
            ("other".into(), String::new())
        );
    }

    #[test]
    fn links_are_compared_by_text_target_and_place() {
        let links = [link("a", 1, 0.5), link("b", 2, 0.5), link("a", 1, 0.7)];
        let keyed = keyed(&links);
        assert_eq!(keyed.len(), 2);
        assert_eq!(keyed[0].1.score, 0.7);
        assert_eq!(keyed[1].0, ("b", "B", 2));
    }
}
