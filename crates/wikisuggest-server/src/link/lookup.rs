//! An interim link backend: scans the top-level text of the wikitext for word n-grams that
//! are anchors in the wiki's dataset and scores them with the engine's model. It follows the
//! response format exactly but not the sentence/word tokenization of link-engine.md §2; the
//! full pipeline replaces it by implementing [`LinkBackend`] the same way.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use wikisuggest_core::models::{DatasetChecksums, LinkRecommendation, LinkRecommendationSet, Meta};
use wikisuggest_engine::{Dataset, RustLowercase, Scorer};

use super::{BackendError, LinkBackend, LinkRequest};

const MAX_NGRAM: usize = 5;
const CONTEXT_CHARS: usize = 10;

pub struct LookupBackend {
    datasets: BTreeMap<String, Arc<Dataset>>,
    scorer: Scorer,
    application_version: String,
}

impl LookupBackend {
    pub fn new(datasets: BTreeMap<String, Arc<Dataset>>, application_version: String) -> Self {
        Self {
            datasets,
            scorer: Scorer::new(Arc::new(RustLowercase)),
            application_version,
        }
    }
}

impl LinkBackend for LookupBackend {
    fn wikis(&self) -> Vec<String> {
        self.datasets.keys().cloned().collect()
    }

    fn recommend(
        &self,
        wiki_id: &str,
        request: &LinkRequest,
    ) -> Result<LinkRecommendationSet, BackendError> {
        let dataset = self
            .datasets
            .get(wiki_id)
            .ok_or_else(|| BackendError::Failed(format!("no dataset for {wiki_id}")))?;
        let chars: Vec<char> = request.wikitext.chars().collect();
        let scan = scan(&chars, &request.sections_to_exclude);
        let limit = usize::try_from(request.max_recommendations)
            .ok()
            .filter(|&n| n > 0);
        let mut links = Vec::new();
        let mut chosen: HashSet<String> = HashSet::new();
        'segments: for (start, end) in scan.segments {
            let words = words(&chars, start, end);
            let mut i = 0;
            while i < words.len() {
                let mut advanced = false;
                for n in (1..=MAX_NGRAM.min(words.len() - i)).rev() {
                    let (from, to) = (words[i].0, words[i + n - 1].1);
                    let text: String = chars[from..to].iter().collect();
                    let key = text.to_lowercase();
                    if chosen.contains(&key) {
                        continue;
                    }
                    let scores = self
                        .scorer
                        .score(dataset, &request.page_title, &key, n as u32)
                        .map_err(|e| BackendError::Failed(e.to_string()))?;
                    let Some(best) = scores.as_ref().and_then(|s| s.best()) else {
                        continue;
                    };
                    let score = f64::from(best.probability);
                    // `!(score >= t)` keeps NaN thresholds accepting everything, as upstream.
                    if score < request.threshold
                        || best.title == request.page_title
                        || scan.linked.contains(&best.title)
                    {
                        continue;
                    }
                    let before_text: String = chars[..from].iter().collect();
                    links.push(LinkRecommendation {
                        context_after: Some(window(&chars, to, to + CONTEXT_CHARS)),
                        context_before: Some(window(
                            &chars,
                            from.saturating_sub(CONTEXT_CHARS),
                            from,
                        )),
                        link_index: Some(links.len() as i64),
                        link_target: best.title.clone(),
                        link_text: text.clone(),
                        match_index: Some(before_text.matches(text.as_str()).count() as i64),
                        score: Some(score),
                        wikitext_offset: Some(from as i64),
                        extra: Default::default(),
                    });
                    chosen.insert(key);
                    i += n;
                    advanced = true;
                    if limit.is_some_and(|l| links.len() >= l) {
                        break 'segments;
                    }
                    break;
                }
                if !advanced {
                    i += 1;
                }
            }
        }
        let checksums = dataset.checksums();
        Ok(LinkRecommendationSet {
            links_count: Some(links.len() as i64),
            links,
            meta: Some(Meta {
                application_version: Some(self.application_version.clone()),
                dataset_checksums: Some(DatasetChecksums {
                    anchors: checksums.anchors.clone(),
                    model: checksums.model.clone(),
                    pageids: checksums.pageids.clone(),
                    redirects: checksums.redirects.clone(),
                    w2vfiltered: checksums.w2vfiltered.clone(),
                    extra: Default::default(),
                }),
                format_version: Some(1),
                extra: Default::default(),
            }),
            page_title: Some(request.page_title.clone()),
            pageid: None,
            revid: Some(request.revid),
            extra: Default::default(),
        })
    }
}

fn window(chars: &[char], from: usize, to: usize) -> String {
    chars[from.min(chars.len())..to.min(chars.len())]
        .iter()
        .collect()
}

/// Top-level text of a page, and the targets it already links to.
#[derive(Debug, Default, PartialEq)]
struct Scan {
    /// Char ranges of text outside any wikitext construct, in excluded sections skipped.
    segments: Vec<(usize, usize)>,
    linked: HashSet<String>,
}

fn starts(chars: &[char], i: usize, s: &str) -> bool {
    s.chars()
        .enumerate()
        .all(|(k, c)| chars.get(i + k) == Some(&c))
}

/// Index just past the construct opened at `i` by `open`, nesting on `open`/`close`.
fn skip_nested(chars: &[char], i: usize, open: &str, close: &str) -> usize {
    let (mut depth, mut j) = (0usize, i);
    while j < chars.len() {
        if starts(chars, j, open) {
            depth += 1;
            j += open.len();
        } else if starts(chars, j, close) {
            depth -= 1;
            j += close.len();
            if depth == 0 {
                return j;
            }
        } else {
            j += 1;
        }
    }
    chars.len()
}

fn skip_past(chars: &[char], i: usize, close: &str) -> usize {
    (i..chars.len())
        .find(|&j| starts(chars, j, close))
        .map_or(chars.len(), |j| j + close.chars().count())
}

fn scan(chars: &[char], excluded: &[String]) -> Scan {
    let excluded: HashSet<String> = excluded
        .iter()
        .map(|s| {
            if s == "%LEAD%" {
                s.clone()
            } else {
                s.to_lowercase()
            }
        })
        .collect();
    let mut out = Scan::default();
    let mut skipping = excluded.contains("%LEAD%");
    let (mut i, mut text_start) = (0, 0);
    let mut line_start = true;
    let mut heading = None;
    let flush = |out: &mut Scan, from: usize, to: usize, skipping: bool| {
        if to > from && !skipping {
            out.segments.push((from, to));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let end = if line_start && c == '=' {
            let eol = (i..chars.len())
                .find(|&j| chars[j] == '\n')
                .unwrap_or(chars.len());
            let name: String = chars[i..eol].iter().collect();
            let name = name.trim().trim_matches('=').trim().to_lowercase();
            heading = Some(excluded.contains(&name));
            Some(eol)
        } else if starts(chars, i, "[[") {
            let end = skip_nested(chars, i, "[[", "]]");
            let inner: String = chars[i + 2..end.saturating_sub(2).max(i + 2)]
                .iter()
                .collect();
            let target = inner.split('|').next().unwrap_or_default();
            out.linked.insert(super::params::normalise_title(target));
            Some(end)
        } else if starts(chars, i, "{{") {
            Some(skip_nested(chars, i, "{{", "}}"))
        } else if starts(chars, i, "{|") {
            Some(skip_nested(chars, i, "{|", "|}"))
        } else if starts(chars, i, "<!--") {
            Some(skip_past(chars, i, "-->"))
        } else if starts(chars, i, "<ref") {
            let tag_end = skip_past(chars, i, ">");
            if tag_end >= 2 && chars[tag_end - 2] == '/' {
                Some(tag_end)
            } else {
                Some(skip_past(chars, tag_end, "</ref>"))
            }
        } else if c == '<' || c == '[' {
            Some(skip_past(chars, i, if c == '<' { ">" } else { "]" }))
        } else {
            None
        };
        line_start = c == '\n';
        if let Some(end) = end {
            flush(&mut out, text_start, i, skipping);
            // A heading starts a section: the text before it belonged to the previous one.
            if let Some(skip) = heading.take() {
                skipping = skip;
            }
            i = end.max(i + 1);
            text_start = i;
        } else {
            i += 1;
        }
    }
    flush(&mut out, text_start, chars.len(), skipping);
    out
}

/// Word spans (alphanumeric runs) in `chars[start..end]`.
fn words(chars: &[char], start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = start;
    while i < end {
        if chars[i].is_alphanumeric() {
            let from = i;
            while i < end && chars[i].is_alphanumeric() {
                i += 1;
            }
            out.push((from, i));
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(wikitext: &str, excluded: &[&str]) -> (Vec<String>, Vec<String>) {
        let chars: Vec<char> = wikitext.chars().collect();
        let excluded: Vec<String> = excluded.iter().map(|s| s.to_string()).collect();
        let scan = scan(&chars, &excluded);
        let segs = scan
            .segments
            .iter()
            .map(|&(a, b)| chars[a..b].iter().collect())
            .collect();
        let mut linked: Vec<String> = scan.linked.into_iter().collect();
        linked.sort();
        (segs, linked)
    }

    #[test]
    fn top_level_text_only() {
        let (segs, linked) = texts(
            "A {{t|x}} cat<ref>r</ref> [[dog|dogs]] b<!-- c -->d [http://x y].",
            &[],
        );
        assert_eq!(segs, ["A ", " cat", " ", " b", "d ", "."]);
        assert_eq!(linked, ["Dog"]);
    }

    #[test]
    fn sections_are_excluded() {
        let text = "Lead text\n== History ==\nOld\n== See also ==\nMore";
        let (segs, _) = texts(text, &["%LEAD%", "see ALSO"]);
        assert_eq!(segs, ["\nOld\n"]);
        let (segs, _) = texts(text, &[]);
        assert_eq!(segs, ["Lead text\n", "\nOld\n", "\nMore"]);
    }

    #[test]
    fn unterminated_constructs_do_not_panic() {
        for text in ["[[", "{{a", "<!--", "<ref>x", "== x", "[[a|", "}}]]", "<"] {
            let _ = texts(text, &[]);
        }
    }
}
