//! Article-level rules: a page that transcludes an excluded template or sits in an excluded
//! category gets no suggestions, as a wiki's Add a Link task configuration says.
//!
//! The wikitext shows the templates a page calls itself and the categories it names itself;
//! templates reached through other templates, and categories they add, are known only to the
//! wiki (its Action API lists them) and are passed in by the caller when it has them.

use std::collections::HashSet;

use wikisuggest_text::pyunicode;
use wikisuggest_text::title::fold_title;

/// Template and category names, normalised as MediaWiki compares titles within a namespace.
#[derive(Debug, Clone, Default)]
pub struct PageRules {
    templates: HashSet<String>,
    categories: HashSet<String>,
    /// Case-folded names of the template namespace (`template`, and local names).
    template_namespaces: Vec<String>,
    /// Case-folded names of the category namespace.
    category_namespaces: Vec<String>,
}

/// Which of a page's templates or categories excludes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageHit {
    Template(String),
    Category(String),
}

/// Prefixes a transclusion may start with that change how, not what, it transcludes.
const MODIFIERS: [&str; 4] = ["subst", "safesubst", "msgnw", "msg"];

impl PageRules {
    /// `templates` and `categories` as a wiki configuration lists them, with or without their
    /// namespace; a prefix written before a `:` in such an entry is taken as a local name of
    /// that namespace, as are the names given in `*_namespaces`.
    pub fn new(
        templates: &[String],
        categories: &[String],
        template_namespaces: &[String],
        category_namespaces: &[String],
    ) -> Self {
        let mut rules = Self {
            template_namespaces: namespaces("template", template_namespaces, templates),
            category_namespaces: namespaces("category", category_namespaces, categories),
            ..Self::default()
        };
        rules.templates = (templates.iter())
            .map(|t| local_name(t, &rules.template_namespaces))
            .filter(|t| !t.is_empty())
            .collect();
        rules.categories = (categories.iter())
            .map(|c| local_name(c, &rules.category_namespaces))
            .filter(|c| !c.is_empty())
            .collect();
        rules
    }

    /// Whether there is anything to check.
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty() && self.categories.is_empty()
    }

    /// The first excluded template or category of the page: those its wikitext names, then
    /// `templates` and `categories` as the wiki lists them (with or without namespace).
    pub fn hit(
        &self,
        wikitext: &str,
        templates: &[String],
        categories: &[String],
    ) -> Option<PageHit> {
        self.hit_within(wikitext, templates, categories, &|| false)
            .unwrap_or(None)
    }

    /// [`PageRules::hit`], asking `stop` every so often (every [`CHECK_EVERY`] pieces of
    /// markup) whether the page's time is up; the scan's time is linear in the page.
    ///
    /// # Errors
    /// [`Stopped`] once `stop` says so: whether the page is excluded is then unknown.
    pub fn hit_within(
        &self,
        wikitext: &str,
        templates: &[String],
        categories: &[String],
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<PageHit>, Stopped> {
        if self.is_empty() {
            return Ok(None);
        }
        let mut found = None;
        scan(wikitext, stop, &mut |kind, name| {
            let hit = match kind {
                Kind::Template if !self.templates.is_empty() => {
                    let name = local_name(name, &self.template_namespaces);
                    self.templates
                        .contains(&name)
                        .then_some(PageHit::Template(name))
                }
                Kind::Category if !self.categories.is_empty() => {
                    self.category_of_link(name).and_then(|name| {
                        let name = local_name(name, &[]);
                        self.categories
                            .contains(&name)
                            .then_some(PageHit::Category(name))
                    })
                }
                _ => None,
            };
            found = hit;
            found.is_none()
        })?;
        Ok(found
            .or_else(|| {
                (templates.iter())
                    .map(|t| local_name(t, &self.template_namespaces))
                    .find(|t| self.templates.contains(t))
                    .map(PageHit::Template)
            })
            .or_else(|| {
                (categories.iter())
                    .map(|c| local_name(c, &self.category_namespaces))
                    .find(|c| self.categories.contains(c))
                    .map(PageHit::Category)
            }))
    }

    /// Whether `prefix` (before a `:` of a link) names the category namespace.
    fn is_category_namespace(&self, prefix: &str) -> bool {
        let folded = pyunicode::casefold(prefix.trim());
        self.category_namespaces.contains(&folded)
    }
}

fn namespaces(canonical: &str, given: &[String], entries: &[String]) -> Vec<String> {
    let mut out = vec![canonical.to_owned()];
    let inferred = entries
        .iter()
        .filter_map(|e| e.split_once(':').map(|(prefix, _)| prefix));
    for name in given.iter().map(String::as_str).chain(inferred) {
        let folded = pyunicode::casefold(&name.replace('_', " "))
            .trim()
            .to_owned();
        if !folded.is_empty() && !out.contains(&folded) {
            out.push(folded);
        }
    }
    out
}

/// `name` without a leading namespace of `namespaces` (or a leading `:`), as MediaWiki
/// compares titles ([`fold_title`]: NFC, `_` as spaces, runs of spaces as one, trimmed),
/// its first letter upper-cased.
fn local_name(name: &str, namespaces: &[String]) -> String {
    let name = fold_title(name);
    let mut rest = name.trim().trim_start_matches(':');
    if let Some((prefix, after)) = rest.split_once(':')
        && namespaces.contains(&pyunicode::casefold(prefix.trim()))
    {
        rest = after;
    }
    let collapsed = rest.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut chars = collapsed.chars();
    let mut out = String::with_capacity(collapsed.len());
    if let Some(first) = chars.next() {
        pyunicode::push_upper(&mut out, first);
        out.push_str(chars.as_str());
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Template,
    Category,
}

/// The scan of a page stopped before its end (its time was up or its result no longer
/// wanted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// Pieces of markup the scan looks at between two questions to its `stop`: a few
/// microseconds of work, so that a page's deadline and cancellation are noticed at once
/// without reading the clock at every brace.
pub const CHECK_EVERY: u32 = 1024;

/// Calls `found(kind, raw name)` for every transclusion (`{{name|…}}`, any depth) and every
/// `[[prefix:name]]` link outside comments and `<nowiki>`, until it returns `false`. A link's
/// prefix is passed whole (`Category:Foo`): the caller knows the namespace names.
///
/// Every byte is looked at a bounded number of times (each search for the end of a name
/// stops at the next opening, each comment or `<nowiki>` is skipped once, and nothing is
/// copied or case-converted beyond a name), so the scan is linear in the page.
fn scan(
    text: &str,
    stop: &dyn Fn() -> bool,
    found: &mut dyn FnMut(Kind, &str) -> bool,
) -> Result<(), Stopped> {
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut pieces = 0u32;
    while let Some(step) = memchr::memchr3(b'{', b'[', b'<', bytes.get(at..).unwrap_or_default()) {
        pieces = pieces.wrapping_add(1);
        if pieces.is_multiple_of(CHECK_EVERY) && stop() {
            return Err(Stopped);
        }
        at += step;
        let rest = text.get(at..).unwrap_or_default();
        if let Some(after) = rest.strip_prefix("<!--") {
            at += 4 + memchr::memmem::find(after.as_bytes(), b"-->")
                .map_or(after.len(), |end| end + 3);
        } else if starts_with_ignore_case(rest.as_bytes(), b"<nowiki>") {
            let after = rest.as_bytes().get(8..).unwrap_or_default();
            at += 8 + find_ignore_case(after, b"</nowiki>").map_or(after.len(), |end| end + 9);
        } else if rest.starts_with("{{{") {
            at += 3;
        } else if let Some(after) = rest.strip_prefix("{{") {
            let end = after.find(['|', '}', '{', '<', '[']).unwrap_or(after.len());
            let mut name = after.get(..end).unwrap_or_default().trim();
            while let Some((prefix, tail)) = name.split_once(':')
                && MODIFIERS
                    .iter()
                    .any(|m| prefix.trim().eq_ignore_ascii_case(m))
            {
                name = tail.trim();
            }
            let transcludes = !name.is_empty() && !name.starts_with('#') && !name.starts_with(':');
            if transcludes && !found(Kind::Template, name) {
                return Ok(());
            }
            at += 2;
        } else if let Some(after) = rest.strip_prefix("[[") {
            let end = after
                .find(['|', ']', '[', '{', '\n'])
                .unwrap_or(after.len());
            let target = after.get(..end).unwrap_or_default().trim();
            if !target.starts_with(':') && target.contains(':') && !found(Kind::Category, target) {
                return Ok(());
            }
            at += 2;
        } else {
            at += 1;
        }
    }
    Ok(())
}

/// Whether `text` starts with `prefix`, ASCII case ignored.
fn starts_with_ignore_case(text: &[u8], prefix: &[u8]) -> bool {
    text.get(..prefix.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
}

/// The first position of `needle` (which starts with `<`) in `haystack`, ASCII case ignored:
/// each `<` of the haystack is compared once, nothing is copied.
fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(step) = memchr::memchr(b'<', haystack.get(from..)?) {
        let at = from + step;
        if starts_with_ignore_case(haystack.get(at..)?, needle) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

impl PageRules {
    /// [`PageRules::hit`] for links only once their prefix names the category namespace.
    pub(crate) fn category_of_link<'a>(&self, target: &'a str) -> Option<&'a str> {
        let (prefix, name) = target.split_once(':')?;
        self.is_category_namespace(prefix).then_some(name)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn rules(templates: &[&str], categories: &[&str]) -> PageRules {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        PageRules::new(&own(templates), &own(categories), &[], &own(&["Kategorie"]))
    }

    #[test]
    fn templates_by_name_with_or_without_namespace() {
        let r = rules(&["Template:Under_construction", "infobox  person"], &[]);
        let hit = |text: &str| r.hit(text, &[], &[]);
        assert_eq!(
            hit("x {{under construction|date=2020}} y"),
            Some(PageHit::Template("Under construction".into()))
        );
        assert!(hit("{{Template:Infobox person\n|name=x}}").is_some());
        assert!(hit("{{subst:Infobox_person}}").is_some());
        assert!(hit("{{Infobox personal}} {{{Under construction}}}").is_none());
        assert!(
            hit("<!-- {{Under construction}} --> <nowiki>{{Under construction}}</nowiki>")
                .is_none()
        );
        assert!(
            hit("{{#if:{{Under construction}}|a}}").is_some(),
            "nested calls count"
        );
        assert!(
            r.hit("plain", &["Template:Under construction".into()], &[])
                .is_some()
        );
        assert!(PageRules::default().hit("{{Anything}}", &[], &[]).is_none());
    }

    #[test]
    fn categories_by_namespace_names() {
        let r = rules(&[], &["Living people", "Category:Stubs"]);
        let hit = |text: &str| r.hit(text, &[], &[]);
        assert_eq!(
            hit("text\n[[Category:Living_people|Doe, John]]"),
            Some(PageHit::Category("Living people".into()))
        );
        assert!(hit("[[kategorie:stubs]]").is_some(), "local namespace name");
        assert!(hit("[[:Category:Living people]] is a link").is_none());
        assert!(hit("[[Living people]]").is_none());
        assert!(r.hit("", &[], &["Category:Stubs".into()]).is_some());
        assert_eq!(r.category_of_link("Kategorie:Foo"), Some("Foo"));
        assert_eq!(r.category_of_link("File:Foo"), None);
    }

    #[test]
    fn nowiki_is_skipped_whatever_its_case() {
        let r = rules(&["Stub"], &[]);
        assert!(r.hit("<NoWiki>{{stub}}</NOWIKI>", &[], &[]).is_none());
        assert!(r.hit("<nowiki>a</nowiki>{{stub}}", &[], &[]).is_some());
        assert!(r.hit("<nowiki>a</nowiki <{{stub}}", &[], &[]).is_none());
        assert!(
            r.hit("<nowiki>{{stub}}", &[], &[]).is_none(),
            "unclosed: to the end"
        );
        assert!(r.hit("<nowiki", &[], &[]).is_none());
        assert_eq!(find_ignore_case(b"x</NoWiKi>", b"</nowiki>"), Some(1));
        assert_eq!(find_ignore_case(b"<</nowik", b"</nowiki>"), None);
    }

    /// Pages of a million tags: every byte is looked at a bounded number of times (before,
    /// the scan copied and lower-cased the rest of the page at every `<nowiki>`).
    #[test]
    fn the_scan_is_linear() {
        let r = rules(&["Stub"], &["Stubs"]);
        let pages = [
            "<nowiki>a</nowiki>".repeat(1 << 19),
            "<NOWIKI>".repeat(1 << 20),
            "<!--".repeat(1 << 20),
            "{{a".repeat(1 << 20),
            "[[a:".repeat(1 << 20),
            "{{subst:".repeat(1 << 20),
        ];
        for page in &pages {
            let started = std::time::Instant::now();
            assert!(r.hit(page, &[], &[]).is_none());
            assert!(started.elapsed().as_secs() < 20, "{}", &page[..12]);
        }
    }

    #[test]
    fn the_scan_stops_when_asked() {
        let r = rules(&["Stub"], &[]);
        let page = "<nowiki>a</nowiki>".repeat(4 * CHECK_EVERY as usize);
        let asked = std::cell::Cell::new(0);
        let stop = || {
            asked.set(asked.get() + 1);
            true
        };
        assert_eq!(r.hit_within(&page, &[], &[], &stop), Err(Stopped));
        assert_eq!(asked.get(), 1);
        // A page shorter than one stretch is never stopped, and an answer found is kept.
        assert_eq!(
            r.hit_within("{{Stub}}", &[], &[], &|| true),
            Ok(Some(PageHit::Template("Stub".into())))
        );
        let never = r.hit_within(&page, &[], &[], &|| false);
        assert_eq!(never, Ok(None));
        assert!(
            PageRules::default()
                .hit_within(&page, &[], &[], &|| true)
                .is_ok()
        );
    }

    #[test]
    fn a_prefix_in_an_entry_names_the_namespace() {
        let r = PageRules::new(&["Plantilla:Ficha".into()], &[], &[], &[]);
        assert!(r.hit("{{plantilla:ficha}}", &[], &[]).is_some());
        assert!(r.hit("{{Ficha}}", &[], &[]).is_some());
    }
}
