//! The article links of a page: which wikilinks count, their anchor and target, and the
//! page's text with those links replaced by what a reader sees.
//!
//! Links are found with the same wikilink parser the engine uses at query time, so a
//! link the builder counts is a link the engine would see as already present.

use std::ops::Range;

use wikisuggest_text::title::{normalise_anchor, normalise_title};
use wikisuggest_text::wikitext::wikilinks;

use crate::dump::Namespaces;

/// Longest link target the production extractor accepts, in code points.
const MAX_TARGET_CHARS: usize = 256;

/// A wikilink to a main-namespace title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArticleLink {
    /// Code point span of the whole `[[…]]`.
    pub span: Range<usize>,
    /// `normalise_anchor` of the label, or of the target when there is no label.
    pub anchor: String,
    /// `normalise_title` of the target (before redirect resolution).
    pub target: String,
    /// What a reader sees in place of the link.
    pub display: String,
}

/// The main-namespace links of `text`, in document order. Links nested inside another
/// kept link are dropped (their text is part of the outer label).
pub fn article_links(text: &str, namespaces: &Namespaces) -> Vec<ArticleLink> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<ArticleLink> = Vec::new();
    for link in wikilinks(text) {
        if out
            .last()
            .is_some_and(|prev| link.span.start < prev.span.end)
        {
            continue;
        }
        let raw = link.title.as_str();
        if !is_article_target(raw, namespaces) {
            continue;
        }
        let target = normalise_title(raw);
        if target.is_empty() {
            continue;
        }
        let label = link.text.as_deref().filter(|t| !t.is_empty());
        let anchor = normalise_anchor(label.unwrap_or(raw));
        // A reader sees the label, or the target as written (fragment included).
        let display = match label {
            Some(l) => l.to_owned(),
            None => {
                let inner = chars
                    .get(link.span.start + 2..link.span.end.saturating_sub(2))
                    .unwrap_or_default();
                inner.iter().take_while(|&&c| c != '|').collect()
            }
        };
        out.push(ArticleLink {
            span: link.span,
            anchor,
            target,
            display,
        });
    }
    out
}

/// Whether a raw link target names a main-namespace page of this wiki: not too long, no
/// characters that cannot occur in titles, no namespace prefix and no interwiki prefix.
fn is_article_target(raw: &str, namespaces: &Namespaces) -> bool {
    if raw.chars().count() > MAX_TARGET_CHARS
        || raw.contains(['\n', '|', '[', ']', '<', '>', '{', '}'])
    {
        return false;
    }
    let raw = raw.trim_start();
    // `[[:Foo]]` forces a plain link; what follows may still be a namespace.
    let raw = raw.strip_prefix(':').unwrap_or(raw);
    let Some((prefix, _)) = raw.split_once(':') else {
        return true;
    };
    if let Some(ns) = namespaces.lookup(prefix) {
        return ns == 0;
    }
    // Interwiki and language prefixes (`de:`, `wikt:`) are lowercase ASCII words; titles
    // with a colon (`Star Wars: …`) are not.
    let prefix = prefix.trim();
    let interwiki = !prefix.is_empty()
        && prefix
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'_');
    !interwiki
}

/// `text` with each link of `links` (as returned by [`article_links`]) replaced by its
/// display text: the page as it reads once its article links are removed.
pub fn strip_links(text: &str, links: &[ArticleLink]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut links = links.iter().peekable();
    let mut skip_until = 0usize;
    for (i, c) in text.chars().enumerate() {
        if i < skip_until {
            continue;
        }
        if let Some(link) = links.next_if(|l| l.span.start == i) {
            out.push_str(&link.display);
            skip_until = link.span.end;
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns() -> Namespaces {
        let mut n = Namespaces::default();
        n.insert("File", 6);
        n.insert("Category", 14);
        n
    }

    #[test]
    fn keeps_article_links_with_their_anchor_and_target() {
        let text = "The [[domestic cat|Cat]]s and [[dog_house#Roof]] and [[:Category:X]] \
                    [[Category:Y]] [[de:Katze]] [[Star Wars: Episode I]] \
                    [[File:A.jpg|thumb|A [[lion]]]].";
        let links = article_links(text, &ns());
        let got: Vec<(&str, &str, &str)> = links
            .iter()
            .map(|l| (l.anchor.as_str(), l.target.as_str(), l.display.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("cat", "Domestic cat", "Cat"),
                ("dog_house", "Dog house", "dog_house#Roof"),
                (
                    "star wars: episode i",
                    "Star Wars: Episode I",
                    "Star Wars: Episode I"
                ),
                ("lion", "Lion", "lion"),
            ]
        );
    }

    #[test]
    fn stripping_leaves_the_readable_text() {
        let text = "A [[b|B c]]d, [[Category:Z]] é [[e]].";
        let links = article_links(text, &ns());
        assert_eq!(strip_links(text, &links), "A B cd, [[Category:Z]] é e.");
    }
}
