//! Never-link rules: what a wiki's editors do not want suggested, applied inside the placement
//! pass so that every path that runs the engine (one page, batches, whole dumps, the server)
//! honours them, and so that a link they remove frees its slot for the next link the pass
//! finds, in production's order.
//!
//! A rule set names
//! - link targets (titles; a redirect stands for its target, resolved through the dataset);
//! - anchor phrases, compared whole with the link's text, case-folded or exactly;
//! - target classes: Wikidata items whose instances (P31) are never targets, given a table
//!   of the targets' P31 values (see [`classes`]; [`classes::PRODUCTION`] is the list
//!   production removed from its datasets);
//! - sections never searched (production's `sections_to_exclude`);
//! - duplicate links (at most one per target per section, none for a target linked earlier
//!   in the section);
//! - pages excluded whole by template or category, and the limits of a wiki's task
//!   configuration (lowest score, most links, most links shown, fewest links).
//!
//! Without a rule set the engine's output is production's, bit for bit.

pub mod classes;
pub mod page;
mod pass;
pub mod spec;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use wikisuggest_text::pipeline::LinkRecommendation;
use wikisuggest_text::pyunicode;
use wikisuggest_text::title::canonical_title;

use crate::error::{Error, Result};
use page::PageRules;
pub use page::{PageHit, Stopped};
pub(crate) use pass::{BoundCache, recommend};
pub use pass::{SectionLink, page_sections, section_links};
pub use spec::{ClassesSpec, RuleSpec, Syntax};

/// Which rule removed a link or a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleKind {
    /// `exclude_targets`.
    Target,
    /// `exclude_classes`.
    Class,
    /// `exclude_anchors` or `exclude_anchors_exact`.
    Anchor,
    /// `no_duplicate_links`.
    Duplicate,
    /// `max_links_shown`: found, but not among the best scored.
    NotShown,
    /// `exclude_templates` (the whole page).
    Template,
    /// `exclude_categories` (the whole page).
    Category,
    /// `min_links` (the whole page).
    TooFewLinks,
}

impl RuleKind {
    /// The rule's name as the rule file spells its key (without `exclude_`).
    pub fn name(self) -> &'static str {
        match self {
            RuleKind::Target => "target",
            RuleKind::Class => "class",
            RuleKind::Anchor => "anchor",
            RuleKind::Duplicate => "duplicate",
            RuleKind::NotShown => "not_shown",
            RuleKind::Template => "template",
            RuleKind::Category => "category",
            RuleKind::TooFewLinks => "too_few_links",
        }
    }
}

/// A rule that applied, and the entry of the rule set that made it apply (the title, phrase
/// or item as the rule set wrote it; for limits, the limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exclusion {
    pub rule: RuleKind,
    pub value: String,
}

/// A link the pass found and a rule removed.
#[derive(Debug, Clone, PartialEq)]
pub struct ExcludedLink {
    /// The link as it would have been returned (`link_index`: the slot it would have taken).
    pub link: LinkRecommendation,
    pub exclusion: Exclusion,
}

/// A checked rule set, ready for the engine. Immutable; share it with `Arc`.
#[derive(Debug)]
pub struct Rules {
    /// Distinguishes rule sets in the engine's cache of their dataset-bound forms.
    id: u64,
    /// What was given, the class table reduced to the titles it excludes.
    spec: RuleSpec,
    /// Normalised title → the title as given.
    targets: Vec<(String, String)>,
    /// Case-folded phrase → the phrase as given.
    anchors_folded: HashMap<String, String>,
    anchors_exact: HashSet<String>,
    /// Normalised title → the excluded item it is an instance of.
    class_titles: HashMap<String, String>,
    page: PageRules,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Rules {
    /// Checks `spec` and builds the rule set; a `classes` path is read relative to `base`
    /// (the rule file's folder).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty entry, an item id that is not `Q…` nor a
    /// preset, classes without a table, a limit out of range or a malformed table;
    /// [`Error::Io`] when the table cannot be read.
    pub fn from_spec(mut spec: RuleSpec, base: Option<&Path>) -> Result<Self> {
        let bad = |what: String| Error::InvalidArgument(format!("rules: {what}"));
        let lists = [
            ("exclude_targets", &spec.exclude_targets),
            ("exclude_anchors", &spec.exclude_anchors),
            ("exclude_anchors_exact", &spec.exclude_anchors_exact),
            ("exclude_classes", &spec.exclude_classes),
            ("exclude_sections", &spec.exclude_sections),
            ("exclude_templates", &spec.exclude_templates),
            ("exclude_categories", &spec.exclude_categories),
            ("template_namespaces", &spec.template_namespaces),
            ("category_namespaces", &spec.category_namespaces),
        ];
        for (name, list) in lists {
            if list.iter().any(|s| pyunicode::strip(s).is_empty()) {
                return Err(bad(format!("{name} holds an empty entry")));
            }
        }
        let mut items: HashSet<String> = HashSet::new();
        for entry in &spec.exclude_classes {
            match classes::preset(entry) {
                Some(preset) => items.extend(preset.iter().map(|q| (*q).to_owned())),
                None if classes::is_item(entry) => {
                    items.insert(entry.clone());
                }
                None => {
                    return Err(bad(format!(
                        "exclude_classes: {entry:?} is neither a Wikidata item (Q…) nor a \
                         preset (production, production-enwiki)"
                    )));
                }
            }
        }
        if let Some(score) = spec.min_score
            && !(0.0..=1.0).contains(&score)
        {
            return Err(bad(format!(
                "min_score must be between 0 and 1, got {score}"
            )));
        }
        for (name, value) in [
            ("max_links", spec.max_links),
            ("max_links_shown", spec.max_links_shown),
        ] {
            if value == Some(0) {
                return Err(bad(format!("{name} must be at least 1")));
            }
        }
        let class_titles = match (&spec.classes, items.is_empty()) {
            (_, true) => HashMap::new(),
            (None, false) => {
                return Err(bad(
                    "exclude_classes needs a classes table (title → P31 items) to know which \
                     targets are instances of them"
                        .to_owned(),
                ));
            }
            (Some(ClassesSpec::Path(path)), false) => {
                let path = base.map_or_else(|| Path::new(path).to_owned(), |b| b.join(path));
                classes::read_table(&path, &|q| items.contains(q))?
            }
            (Some(ClassesSpec::Table(table)), false) => {
                let mut found = HashMap::new();
                for (title, of) in table {
                    for item in of {
                        if !classes::is_item(item) {
                            return Err(bad(format!(
                                "classes: {item:?} (of {title:?}) is not a Wikidata item id"
                            )));
                        }
                    }
                    if let Some(item) = of.iter().find(|q| items.contains(*q)) {
                        found.insert(title.clone(), item.clone());
                    }
                }
                found
            }
        };
        let class_titles: HashMap<String, String> = class_titles
            .into_iter()
            .map(|(title, item)| (canonical_title(&title), item))
            .collect();
        // Kept self-contained: the titles that matter, not where they were read from.
        spec.classes = (!class_titles.is_empty() || spec.classes.is_some()).then(|| {
            ClassesSpec::Table(
                (class_titles.iter())
                    .map(|(title, item)| (title.clone(), vec![item.clone()]))
                    .collect(),
            )
        });
        spec.version = None;
        let page = PageRules::new(
            &spec.exclude_templates,
            &spec.exclude_categories,
            &spec.template_namespaces,
            &spec.category_namespaces,
        );
        Ok(Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            targets: (spec.exclude_targets.iter())
                .map(|t| (canonical_title(t), t.clone()))
                .collect(),
            anchors_folded: (spec.exclude_anchors.iter())
                .map(|a| (pyunicode::casefold(pyunicode::strip(a)), a.clone()))
                .collect(),
            anchors_exact: (spec.exclude_anchors_exact.iter())
                .map(|a| pyunicode::strip(a).to_owned())
                .collect(),
            class_titles,
            page,
            spec,
        })
    }

    /// Reads a rule file (TOML or JSON, see [`spec`]).
    ///
    /// # Errors
    /// As [`RuleSpec::read`] and [`Rules::from_spec`].
    pub fn load(path: &Path) -> Result<Self> {
        let spec = RuleSpec::read(path)?;
        Self::from_spec(spec, path.parent())
    }

    /// The rule set as a self-contained spec (the class table reduced to the titles it
    /// excludes), which [`Rules::from_spec`] turns back into the same rules.
    pub fn spec(&self) -> &RuleSpec {
        &self.spec
    }

    /// Section titles added to `sections_to_exclude`.
    pub fn exclude_sections(&self) -> &[String] {
        &self.spec.exclude_sections
    }

    /// Whether a page whose wikitext (and, where known, whose templates and categories as
    /// the wiki lists them) matches a template or category rule gets no suggestions.
    pub fn page_exclusion(
        &self,
        wikitext: &str,
        templates: &[String],
        categories: &[String],
    ) -> Option<Exclusion> {
        self.page_exclusion_within(wikitext, templates, categories, &|| false)
            .unwrap_or(None)
    }

    /// [`Rules::page_exclusion`], asking `stop` every so often whether the page's time is
    /// up (see [`PageRules::hit_within`]).
    ///
    /// # Errors
    /// [`Stopped`] once `stop` says so.
    pub fn page_exclusion_within(
        &self,
        wikitext: &str,
        templates: &[String],
        categories: &[String],
        stop: &dyn Fn() -> bool,
    ) -> std::result::Result<Option<Exclusion>, Stopped> {
        let hit = self
            .page
            .hit_within(wikitext, templates, categories, stop)?;
        Ok(hit.map(|hit| match hit {
            PageHit::Template(name) => Exclusion {
                rule: RuleKind::Template,
                value: name,
            },
            PageHit::Category(name) => Exclusion {
                rule: RuleKind::Category,
                value: name,
            },
        }))
    }

    /// The rule a link with this text and target falls under, outside any pass: the target
    /// as written (titles and class table entries are compared after normalisation, not
    /// through a dataset's redirects: resolve `target` first where that matters), then the
    /// text.
    pub fn link_exclusion(&self, link_text: &str, target: &str) -> Option<Exclusion> {
        let title = canonical_title(target);
        if let Some((_, given)) = self.targets.iter().find(|(t, _)| *t == title) {
            return Some(Exclusion {
                rule: RuleKind::Target,
                value: given.clone(),
            });
        }
        if let Some(item) = self.class_titles.get(&title) {
            return Some(Exclusion {
                rule: RuleKind::Class,
                value: item.clone(),
            });
        }
        self.anchor_rule(pyunicode::strip(link_text))
            .map(|phrase| Exclusion {
                rule: RuleKind::Anchor,
                value: phrase.to_owned(),
            })
    }

    /// Whether any rule looks at the links the pass chooses (targets, classes, anchors,
    /// duplicates); the others act before or after the pass.
    fn filters_links(&self) -> bool {
        !(self.targets.is_empty()
            && self.class_titles.is_empty()
            && self.anchors_folded.is_empty()
            && self.anchors_exact.is_empty())
            || self.spec.no_duplicate_links
    }

    /// The anchor rule that `link_text` falls under, if any: the phrase as given.
    fn anchor_rule(&self, link_text: &str) -> Option<&str> {
        if let Some(phrase) = self.anchors_exact.get(link_text) {
            return Some(phrase);
        }
        if self.anchors_folded.is_empty() {
            return None;
        }
        self.anchors_folded
            .get(&pyunicode::casefold(link_text))
            .map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn spec(toml: &str) -> RuleSpec {
        RuleSpec::parse(toml, Syntax::Toml, "test").unwrap()
    }

    #[test]
    fn files_are_checked() {
        let err = |text: &str| {
            let parsed = RuleSpec::parse(text, Syntax::Toml, "f.toml");
            parsed
                .and_then(|s| Rules::from_spec(s, None))
                .unwrap_err()
                .to_string()
        };
        assert!(err("exclude_target = ['x']").contains("unknown field"));
        assert!(err("version = 2").contains("version 2"));
        assert!(err("exclude_anchors = ['  ']").contains("empty entry"));
        assert!(err("exclude_classes = ['Q5']").contains("classes table"));
        assert!(err("exclude_classes = ['dates']\nclasses = {}").contains("preset"));
        assert!(err("min_score = 1.5").contains("min_score"));
        assert!(err("max_links = 0").contains("max_links"));
        assert!(err("classes = { X = ['planet'] }\nexclude_classes = ['Q5']").contains("planet"));
        let json = RuleSpec::parse(r#"{"exclude_targets": ["A"]}"#, Syntax::Json, "j").unwrap();
        assert_eq!(json.exclude_targets, ["A"]);
        assert!(RuleSpec::parse(r#"{"exclude_targets": "A"}"#, Syntax::Json, "j").is_err());
    }

    #[test]
    fn anchors_whole_case_folded_or_exact() {
        let rules = Rules::from_spec(
            spec("exclude_anchors = ['New York', 'STRASSE']\nexclude_anchors_exact = ['US']"),
            None,
        )
        .unwrap();
        assert_eq!(rules.anchor_rule("new york"), Some("New York"));
        assert_eq!(rules.anchor_rule("Straße"), Some("STRASSE"));
        assert_eq!(rules.anchor_rule("US"), Some("US"));
        assert_eq!(rules.anchor_rule("us"), None);
        assert_eq!(rules.anchor_rule("New York City"), None);
    }

    #[test]
    fn classes_reduce_to_the_titles_they_exclude() {
        let rules = Rules::from_spec(
            spec(
                "exclude_classes = ['production', 'Q5']\n\
                 [classes]\nMercury = ['Q4167410']\nAda_Lovelace = ['Q5']\nParis = ['Q515']",
            ),
            None,
        )
        .unwrap();
        assert_eq!(rules.class_titles.len(), 2);
        assert_eq!(rules.class_titles["Ada Lovelace"], "Q5");
        let again = Rules::from_spec(rules.spec().clone(), None).unwrap();
        assert_eq!(again.class_titles, rules.class_titles);
        let text = rules.spec().to_toml().unwrap();
        let parsed = Rules::from_spec(RuleSpec::parse(&text, Syntax::Toml, "t").unwrap(), None);
        assert_eq!(parsed.unwrap().class_titles, rules.class_titles);
        assert_ne!(again.id, rules.id);
    }
}
