//! Never-link rules on the parity articles, against production's own outputs: each rule
//! removes exactly the links it names, every other link is production's to the last field,
//! and the slots it frees go to the next links production finds, in its order.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde_json::Value;
use wikisuggest_engine::{
    Engine, LinkOptions, LinkRecommendation, LinkRecommendationSet, Page, RecommendOptions,
    RuleKind, RuleSpec, Rules, default_workers,
};

use common::{Article, parity_articles as articles};

/// Production's links for an article: threshold 0, no limit (every link the pass finds).
fn exhaustive(name: &str) -> Vec<Value> {
    let path = common::repo_root()
        .join("tests/data/parity/expected/exhaustive/enwiki")
        .join(format!("{name}.json"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["links"].as_array().unwrap().clone()
}

/// Every field of production's link but its index.
fn same(got: &LinkRecommendation, want: &Value) -> bool {
    want["link_text"] == got.link_text.as_str()
        && want["link_target"] == got.link_target.as_str()
        && want["wikitext_offset"].as_u64() == Some(got.wikitext_offset as u64)
        && want["context_before"] == got.context_before.as_str()
        && want["context_after"] == got.context_after.as_str()
        && want["match_index"].as_u64() == Some(got.match_index as u64)
        && want["score"].as_f64().map(|s| s as f32) == Some(got.score)
}

fn rules(spec: RuleSpec) -> Option<Arc<Rules>> {
    Some(Arc::new(Rules::from_spec(spec, None).unwrap()))
}

fn options(threshold: f64, max: i64, rules: Option<Arc<Rules>>) -> RecommendOptions {
    RecommendOptions {
        link: LinkOptions {
            threshold,
            max_recommendations: max,
            ..LinkOptions::default()
        },
        rules,
        ..RecommendOptions::default()
    }
}

fn run(
    engine: &Arc<Engine>,
    articles: &[Article],
    opts: &RecommendOptions,
) -> Vec<LinkRecommendationSet> {
    let pages = articles.iter().map(|a| Page {
        wikitext: a.wikitext.clone().into(),
        page_title: a.page_title.clone(),
        ..Page::default()
    });
    engine
        .recommend_batch(pages, opts, default_workers())
        .into_iter()
        .map(Result::unwrap)
        .collect()
}

fn engine() -> Arc<Engine> {
    Arc::new(Engine::open(&common::parity_dir(), "enwiki").unwrap())
}

/// With `opts` (threshold 0, no limit) every article's links are production's minus those
/// `removed` says go, in order, indices renumbered; and the rule set reports exactly those
/// as excluded, by `rule`. Returns how many were removed.
fn check_removes_exactly(
    engine: &Arc<Engine>,
    articles: &[Article],
    opts: &RecommendOptions,
    rule: RuleKind,
    removed: &dyn Fn(&Value) -> bool,
) -> usize {
    let mut count = 0;
    for (article, got) in articles.iter().zip(run(engine, articles, opts)) {
        let want = exhaustive(&article.name);
        let (gone, kept): (Vec<&Value>, Vec<&Value>) = want.iter().partition(|l| removed(l));
        assert_eq!(got.links.len(), kept.len(), "{}: link count", article.name);
        for (i, (g, w)) in got.links.iter().zip(&kept).enumerate() {
            assert!(same(g, w), "{}: link {i}: {g:?} != {w}", article.name);
            assert_eq!(g.link_index, i);
        }
        assert_eq!(got.excluded.len(), gone.len(), "{}: excluded", article.name);
        for (e, w) in got.excluded.iter().zip(&gone) {
            assert!(
                same(&e.link, w),
                "{}: excluded {:?} != {w}",
                article.name,
                e.link
            );
            assert_eq!(e.exclusion.rule, rule);
        }
        count += gone.len();
    }
    count
}

#[test]
fn no_rules_and_empty_rules_are_production() {
    let engine = engine();
    let articles = articles();
    let plain = run(&engine, &articles, &options(0.0, -1, None));
    let empty = run(
        &engine,
        &articles,
        &options(0.0, -1, rules(RuleSpec::default())),
    );
    for ((article, a), b) in articles.iter().zip(&plain).zip(&empty) {
        assert_eq!(a, b, "{}", article.name);
        let want = exhaustive(&article.name);
        assert_eq!(a.links.len(), want.len());
        assert!(a.links.iter().zip(&want).all(|(g, w)| same(g, w)));
        assert!(a.excluded.is_empty() && a.page_excluded.is_none());
    }
}

#[test]
fn targets_are_removed_exactly_redirects_included() {
    let engine = engine();
    let articles = articles();
    // Every third target production links on any article, one of them named by a redirect.
    let mut targets: Vec<String> = Vec::new();
    for article in &articles {
        for (i, link) in exhaustive(&article.name).iter().enumerate() {
            let target = link["link_target"].as_str().unwrap().to_owned();
            if i % 3 == 0 && !targets.contains(&target) {
                targets.push(target);
            }
        }
    }
    let ds = engine.dataset();
    let linked: HashSet<String> = articles
        .iter()
        .flat_map(|a| exhaustive(&a.name))
        .map(|l| l["link_target"].as_str().unwrap().to_owned())
        .collect();
    let redirect = (0..ds.title_count())
        .map(|i| ds.title_at(i).unwrap().to_owned())
        .find_map(|t| {
            let to = ds.redirect(&t).unwrap()?.to_owned();
            (linked.contains(&to) && !targets.contains(&to)).then_some((t, to))
        })
        .expect("a redirect to a linked target");
    let mut named: Vec<String> = targets.iter().map(|t| t.replace(' ', "_")).collect();
    named.push(redirect.0.clone());
    let mut excluded: HashSet<String> = targets.iter().cloned().collect();
    excluded.insert(redirect.1.clone());
    let spec = RuleSpec {
        exclude_targets: named,
        ..RuleSpec::default()
    };
    let opts = options(0.0, -1, rules(spec));
    let removed = |l: &Value| excluded.contains(l["link_target"].as_str().unwrap());
    let n = check_removes_exactly(&engine, &articles, &opts, RuleKind::Target, &removed);
    assert!(n > 100, "only {n} links removed");
    // The redirect's removals name the redirect, as the rule set wrote it.
    let set = run(&engine, &articles, &opts);
    let by_redirect = set
        .iter()
        .flat_map(|s| &s.excluded)
        .filter(|e| e.link.link_target == redirect.1)
        .collect::<Vec<_>>();
    assert!(!by_redirect.is_empty());
    assert!(by_redirect.iter().all(|e| e.exclusion.value == redirect.0));
}

#[test]
fn anchors_are_removed_case_folded_or_exactly() {
    let engine = engine();
    let articles = articles();
    let mut texts: Vec<String> = Vec::new();
    for article in &articles {
        for (i, link) in exhaustive(&article.name).iter().enumerate() {
            let text = link["link_text"].as_str().unwrap().to_owned();
            if i % 4 == 1 && !texts.contains(&text) {
                texts.push(text);
            }
        }
    }
    let (folded, exact) = texts.split_at(texts.len() / 2);
    let spec = RuleSpec {
        // Written in upper case: compared case-folded.
        exclude_anchors: folded.iter().map(|t| t.to_uppercase()).collect(),
        exclude_anchors_exact: exact.to_vec(),
        ..RuleSpec::default()
    };
    let folded_keys: HashSet<String> = folded.iter().map(|t| t.to_lowercase()).collect();
    let exact: HashSet<&String> = exact.iter().collect();
    let removed = |l: &Value| {
        let text = l["link_text"].as_str().unwrap();
        folded_keys.contains(&text.to_lowercase()) || exact.contains(&text.to_owned())
    };
    let n = check_removes_exactly(
        &engine,
        &articles,
        &options(0.0, -1, rules(spec)),
        RuleKind::Anchor,
        &removed,
    );
    assert!(n > 50, "only {n} links removed");

    // An exact phrase in another case removes nothing.
    let other_case: Vec<String> = exact
        .iter()
        .map(|t| t.to_uppercase())
        .filter(|t| !exact.contains(t))
        .collect();
    let upper: HashSet<&String> = other_case.iter().collect();
    let spec = RuleSpec {
        exclude_anchors_exact: other_case.clone(),
        ..RuleSpec::default()
    };
    let removed = |l: &Value| upper.contains(&l["link_text"].as_str().unwrap().to_owned());
    check_removes_exactly(
        &engine,
        &articles,
        &options(0.0, -1, rules(spec)),
        RuleKind::Anchor,
        &removed,
    );
}

#[test]
fn classes_remove_the_instances_of_excluded_items() {
    let engine = engine();
    let articles = articles();
    let mut table: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut excluded = HashSet::new();
    for (i, link) in articles
        .iter()
        .flat_map(|a| exhaustive(&a.name))
        .enumerate()
    {
        let target = link["link_target"].as_str().unwrap().to_owned();
        if table.contains_key(&target) {
            continue;
        }
        // Disambiguation pages (production's preset), people (named), cities (not excluded).
        let class = ["Q4167410", "Q5", "Q515"][i % 3];
        if class != "Q515" {
            excluded.insert(target.clone());
        }
        table.insert(target, vec!["Q1".into(), class.into()]);
    }
    let spec = RuleSpec {
        exclude_classes: vec!["production".into(), "Q5".into()],
        classes: Some(wikisuggest_engine::rules::ClassesSpec::Table(table)),
        ..RuleSpec::default()
    };
    let removed = |l: &Value| excluded.contains(l["link_target"].as_str().unwrap());
    let n = check_removes_exactly(
        &engine,
        &articles,
        &options(0.0, -1, rules(spec)),
        RuleKind::Class,
        &removed,
    );
    assert!(n > 100, "only {n} links removed");
}

#[test]
fn freed_slots_go_to_the_next_links_in_production_order() {
    let engine = engine();
    let articles = articles();
    let targets: Vec<String> = articles
        .iter()
        .flat_map(|a| exhaustive(&a.name).into_iter().take(4))
        .map(|l| l["link_target"].as_str().unwrap().to_owned())
        .collect();
    let excluded: HashSet<&String> = targets.iter().collect();
    let spec = RuleSpec {
        exclude_targets: targets.clone(),
        ..RuleSpec::default()
    };
    // Production's API configuration (threshold 0.5, 15 links) with and without the rules.
    let unlimited = run(&engine, &articles, &options(0.5, -1, None));
    let ruled = run(&engine, &articles, &options(0.5, 15, rules(spec)));
    let mut refilled = 0;
    for ((article, all), got) in articles.iter().zip(&unlimited).zip(&ruled) {
        let want: Vec<&LinkRecommendation> = all
            .links
            .iter()
            .filter(|l| !excluded.contains(&l.link_target))
            .take(15)
            .collect();
        assert_eq!(got.links.len(), want.len(), "{}", article.name);
        for (i, (g, w)) in got.links.iter().zip(&want).enumerate() {
            let renumbered = LinkRecommendation {
                link_index: i,
                ..(*w).clone()
            };
            assert_eq!(*g, renumbered, "{}: link {i}", article.name);
        }
        let production_api = all.links.iter().take(15).count();
        if all.links.len() > 15 && want.len() == 15 {
            refilled += usize::from(production_api == 15);
        }
    }
    assert!(refilled > 10, "only {refilled} articles had slots refilled");
}

#[test]
fn sections_are_excluded_as_sections_to_exclude_does() {
    let engine = engine();
    let articles = articles();
    let sections = vec![
        "History".to_owned(),
        "%LEAD%".to_owned(),
        "see also".to_owned(),
    ];
    let by_rule = run(
        &engine,
        &articles,
        &options(
            0.5,
            15,
            rules(RuleSpec {
                exclude_sections: sections.clone(),
                ..RuleSpec::default()
            }),
        ),
    );
    let by_request = run(&engine, &articles, &{
        let mut by_request = options(0.5, 15, None);
        by_request.link.sections_to_exclude = sections;
        by_request
    });
    let mut differs_from_plain = 0;
    let plain = run(&engine, &articles, &options(0.5, 15, None));
    for ((a, b), p) in by_rule.iter().zip(&by_request).zip(&plain) {
        assert_eq!(a.links, b.links);
        differs_from_plain += usize::from(a.links != p.links);
    }
    assert!(differs_from_plain > 30);
}

#[test]
fn limits_of_a_task_configuration() {
    let engine = engine();
    let articles = articles();
    // What production finds at the configuration's score and number of links.
    let all = run(&engine, &articles, &options(0.6, 10, None));
    let spec = RuleSpec {
        min_score: Some(0.6),
        max_links: Some(10),
        max_links_shown: Some(3),
        min_links: Some(2),
        ..RuleSpec::default()
    };
    let got = run(&engine, &articles, &options(0.0, -1, rules(spec)));
    let mut pages_dropped = 0;
    for ((article, all), got) in articles.iter().zip(&all).zip(&got) {
        let found: Vec<&LinkRecommendation> = all.links.iter().collect();
        if found.len() < 2 {
            assert!(got.links.is_empty(), "{}", article.name);
            if !found.is_empty() {
                pages_dropped += 1;
                let page = got.page_excluded.as_ref().unwrap();
                assert_eq!(
                    (page.rule, page.value.as_str()),
                    (RuleKind::TooFewLinks, "2")
                );
            }
            continue;
        }
        // The three best scored, in the order they were found.
        let mut best = found.clone();
        best.sort_by(|a, b| b.score.partial_cmp(&a.score).unwrap());
        let floor = best[2.min(best.len() - 1)].score;
        let shown: Vec<&str> = found
            .iter()
            .filter(|l| l.score >= floor)
            .take(3)
            .map(|l| l.link_target.as_str())
            .collect();
        let got_targets: Vec<&str> = got.links.iter().map(|l| l.link_target.as_str()).collect();
        assert_eq!(got_targets, shown, "{}", article.name);
        assert!(got.links.iter().enumerate().all(|(i, l)| l.link_index == i));
        let not_shown = got
            .excluded
            .iter()
            .filter(|e| e.exclusion.rule == RuleKind::NotShown);
        assert_eq!(not_shown.count(), found.len() - shown.len());
    }
    assert!(pages_dropped > 0);
}

#[test]
fn pages_with_an_excluded_template_get_nothing() {
    let engine = engine();
    let articles = articles();
    let spec = RuleSpec {
        exclude_templates: vec!["Template:Infobox_country".into()],
        exclude_categories: vec!["Living people".into()],
        ..RuleSpec::default()
    };
    let got = run(&engine, &articles, &options(0.5, 15, rules(spec)));
    let plain = run(&engine, &articles, &options(0.5, 15, None));
    let (mut by_template, mut by_category) = (0, 0);
    for ((article, got), plain) in articles.iter().zip(&got).zip(&plain) {
        let text = article.wikitext.to_lowercase().replace('_', " ");
        let template = text.contains("{{infobox country");
        let category = text.contains("[[category:living people");
        match &got.page_excluded {
            Some(e) => {
                assert!(got.links.is_empty());
                match e.rule {
                    RuleKind::Template => by_template += 1,
                    RuleKind::Category => by_category += 1,
                    other => panic!("{other:?}"),
                }
            }
            None => {
                assert!(!template && !category, "{}", article.name);
                assert_eq!(got.links, plain.links);
            }
        }
    }
    assert!(
        by_template >= 5 && by_category >= 2,
        "{by_template} {by_category}"
    );
}

#[test]
fn duplicate_links_within_a_section() {
    let engine = engine();
    // Production keeps one target per anchor among existing links (the last): here "the
    // animal" keeps Africa, so Mammal is not known as linked and the pass suggests it again
    // in the lead, where it is linked already.
    let page = "The [[Mammal|the animal]] and the [[Africa|the animal]]. A mammal has a stomach.\n\
                == Habitat ==\nThe mammal lives in dust.\n";
    let plain = engine
        .recommend(page, "Burrow test", None, None, &options(0.0, -1, None))
        .unwrap();
    let mammals: Vec<&LinkRecommendation> = plain
        .links
        .iter()
        .filter(|l| l.link_target == "Mammal")
        .collect();
    assert_eq!(mammals.len(), 1, "{:?}", plain.links);
    assert!(mammals[0].wikitext_offset < page.find("==").unwrap());
    let spec = RuleSpec {
        no_duplicate_links: true,
        ..RuleSpec::default()
    };
    let ruled = engine
        .recommend(
            page,
            "Burrow test",
            None,
            None,
            &options(0.0, -1, rules(spec)),
        )
        .unwrap();
    let kept: Vec<&str> = ruled.links.iter().map(|l| l.link_target.as_str()).collect();
    assert!(!kept.contains(&"Mammal"));
    assert_eq!(ruled.excluded.len(), 1);
    assert_eq!(ruled.excluded[0].exclusion.rule, RuleKind::Duplicate);
    assert_eq!(ruled.excluded[0].link, *mammals[0]);
    let others: Vec<&LinkRecommendation> = plain
        .links
        .iter()
        .filter(|l| l.link_target != "Mammal")
        .collect();
    assert_eq!(ruled.links.len(), others.len());
    assert!(ruled.links.iter().any(|l| l.link_target == "Stomach"));

    // Linked in another section only: not a duplicate.
    let elsewhere = "A mammal has a stomach.\n== Habitat ==\nThe [[Mammal]] lives in dust.\n";
    let spec = RuleSpec {
        no_duplicate_links: true,
        ..RuleSpec::default()
    };
    let plain = engine
        .recommend(
            elsewhere,
            "Burrow test",
            None,
            None,
            &options(0.0, -1, None),
        )
        .unwrap();
    let ruled = engine
        .recommend(
            elsewhere,
            "Burrow test",
            None,
            None,
            &options(0.0, -1, rules(spec)),
        )
        .unwrap();
    assert_eq!(plain.links, ruled.links);
}

#[test]
fn section_links_are_placed_in_their_sections() {
    let links = wikisuggest_engine::rules::section_links(
        "[[a]] x {{t|[[B_c#x|y]]}}\n== One ==\n[[A]]\n=== Two ===\n[[d]]",
        &|t| (t == "D").then(|| "Delta".to_owned()),
    );
    let got: Vec<(usize, &str)> = links
        .iter()
        .map(|l| (l.section, l.target.as_str()))
        .collect();
    assert_eq!(got, [(0, "A"), (0, "B c"), (1, "A"), (2, "Delta")]);
    assert!(links.windows(2).all(|w| w[0].start < w[1].start));
    assert_eq!(
        (links[1].title.as_str(), links[1].label.as_deref()),
        ("B_c", Some("y"))
    );
    assert_eq!(links[0].end - links[0].start, "[[a]]".len());
    let sections = wikisuggest_engine::rules::page_sections("lead\n== One ==\nx\n=== Two ===\ny");
    let titles: Vec<Option<&str>> = sections.iter().map(|(t, _)| t.as_deref()).collect();
    assert_eq!(titles, [None, Some("One"), Some("Two")]);
    assert_eq!(sections[1].1, 5);
}

#[test]
fn rule_files_in_toml_and_json() {
    let dir = common::temp_dir("rule-files");
    std::fs::write(
        dir.join("p31.tsv"),
        "title\tp31\nNeck\tQ5107\nStomach\tQ1\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("enwiki.toml"),
        "# enwiki\nversion = 1\nexclude_targets = ['Mammal']\nexclude_classes = ['production-enwiki']\n\
         classes = 'p31.tsv'\nno_duplicate_links = true\n",
    )
    .unwrap();
    let rules = Rules::load(&dir.join("enwiki.toml")).unwrap();
    assert!(rules.spec().no_duplicate_links);
    let json = rules.spec().to_json();
    std::fs::write(dir.join("same.json"), &json).unwrap();
    let again = Rules::load(&dir.join("same.json")).unwrap();
    assert_eq!(again.spec(), rules.spec());
    let engine = engine();
    let page = "The aardvark is a mammal with a long neck and a small stomach.";
    let set = engine
        .recommend(
            page,
            "Test",
            None,
            None,
            &options(0.0, -1, Some(Arc::new(again))),
        )
        .unwrap();
    let removed: Vec<(&str, RuleKind)> = set
        .excluded
        .iter()
        .map(|e| (e.link.link_target.as_str(), e.exclusion.rule))
        .collect();
    assert!(
        removed.contains(&("Mammal", RuleKind::Target)),
        "{removed:?}"
    );
    assert!(removed.contains(&("Neck", RuleKind::Class)), "{removed:?}");
    assert!(set.links.iter().any(|l| l.link_target == "Stomach"));
    std::fs::write(dir.join("bad.toml"), "exclude_targets = 'Mammal'\n").unwrap();
    let err = Rules::load(&dir.join("bad.toml")).unwrap_err().to_string();
    assert!(err.contains("bad.toml"), "{err}");
    assert!(Rules::load(&dir.join("missing.toml")).is_err());
}

/// The page rules' scan runs inside the page's time budget and cancellation, as the pass
/// does: a page of a million `<nowiki>` tags under an exclusion rule stops at its budget
/// with no link (what a timed-out pass gives), and at once when cancelled.
#[test]
fn the_page_scan_is_inside_the_budget_and_cancellation() {
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};
    use wikisuggest_engine::Stop;

    let engine = engine();
    let spec = RuleSpec {
        exclude_templates: vec!["Under construction".into()],
        exclude_categories: vec!["Stubs".into()],
        ..RuleSpec::default()
    };
    let page = "<nowiki>a</nowiki>".repeat(1 << 19);
    let budgeted = RecommendOptions {
        time_budget: Some(Duration::ZERO),
        ..options(0.5, 15, rules(spec.clone()))
    };
    let got = engine
        .recommend(&page, "Nowiki", None, None, &budgeted)
        .unwrap();
    assert_eq!((got.stop, got.links.len()), (Stop::TimeBudget, 0));
    assert!(got.page_excluded.is_none(), "unknown, not excluded");

    let cancel = AtomicBool::new(true);
    let started = Instant::now();
    let opts = options(0.5, 15, rules(spec.clone()));
    let got = engine
        .recommend_normalised(&page, "Nowiki".into(), None, None, &opts, Some(&cancel))
        .unwrap();
    assert_eq!((got.stop, got.links.len()), (Stop::TimeBudget, 0));
    assert!(started.elapsed() < Duration::from_secs(5));

    // An excluded page is still found so, within a budget that lets the scan finish.
    let excluded = format!("{page}{{{{Under construction}}}}");
    let opts = RecommendOptions {
        time_budget: Some(Duration::from_secs(60)),
        ..options(0.5, 15, rules(spec))
    };
    let got = engine
        .recommend(&excluded, "Nowiki", None, None, &opts)
        .unwrap();
    assert_eq!(got.page_excluded.map(|e| e.rule), Some(RuleKind::Template));
}

/// Titles written by hand name the page MediaWiki would: doubled spaces and underscores, a
/// decomposed accent (NFD), direction marks and a lower-case first letter all remove exactly
/// the links of the title as stored, in targets and in the class table alike.
#[test]
fn titles_are_compared_as_mediawiki_stores_them() {
    use unicode_forms::nfd;

    let engine = engine();
    let articles = articles();
    let stored = [
        "Coup d'état",
        "Département",
        "Adolfo Suárez Madrid–Barajas Airport",
    ];
    let written: Vec<String> = vec![
        nfd("coup  d'état"),
        nfd("Département").replace('D', "\u{200e}D"),
        nfd("Adolfo__Suárez Madrid–Barajas\u{a0}\u{a0}Airport "),
    ];
    for (title, form) in stored.iter().zip(&written) {
        assert_ne!(*title, form.as_str());
    }
    let excluded: HashSet<&str> = stored.into_iter().collect();
    let removed = |l: &Value| excluded.contains(l["link_target"].as_str().unwrap());
    let spec = RuleSpec {
        exclude_targets: written.clone(),
        ..RuleSpec::default()
    };
    let n = check_removes_exactly(
        &engine,
        &articles,
        &options(0.0, -1, rules(spec)),
        RuleKind::Target,
        &removed,
    );
    assert!(n >= 3, "only {n} links removed");
    let classes = written
        .iter()
        .map(|t| (t.clone(), vec!["Q5".to_owned()]))
        .collect();
    let spec = RuleSpec {
        exclude_classes: vec!["Q5".into()],
        classes: Some(wikisuggest_engine::rules::ClassesSpec::Table(classes)),
        ..RuleSpec::default()
    };
    let m = check_removes_exactly(
        &engine,
        &articles,
        &options(0.0, -1, rules(spec)),
        RuleKind::Class,
        &removed,
    );
    assert_eq!(m, n);
}

/// A decomposing normaliser for the test above (the crate itself only composes).
mod unicode_forms {
    /// `text` with the precomposed Latin letters it uses decomposed (NFD for these).
    pub fn nfd(text: &str) -> String {
        text.chars()
            .flat_map(|c| match c {
                'é' => vec!['e', '\u{301}'],
                'á' => vec!['a', '\u{301}'],
                other => vec![other],
            })
            .collect()
    }
}
