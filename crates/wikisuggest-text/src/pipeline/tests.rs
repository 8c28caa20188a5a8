//! The placement pass against a small in-memory model that scores every
//! candidate 0.9 (the production unit tests use the same mock), checking
//! the quirks listed in the spec.

use super::*;

#[path = "../../tests/common/table_model.rs"]
mod table_model;
use table_model::{Scoring, TableModel as Mock};

impl Mock {
    /// Every anchor's targets as its candidates and as existing pages, each scoring 0.9.
    fn new(anchors: &[(&str, &[&str])]) -> Self {
        let mut m = Mock {
            anchors: Default::default(),
            redirects: Default::default(),
            pages: Default::default(),
            scoring: Scoring::Every(0.9),
        };
        for (anchor, targets) in anchors {
            let cands = targets
                .iter()
                .map(|t| Candidate {
                    title: (*t).to_owned().into(),
                    count: 1,
                })
                .collect();
            m.anchors.insert((*anchor).to_owned(), cands);
            m.pages.extend(targets.iter().map(|t| (*t).to_owned()));
        }
        m
    }
}

fn run(model: &Mock, wikitext: &str) -> Vec<(String, String, usize, usize, String, String)> {
    run_with(model, wikitext, "Page", 0.5, -1, &[])
        .unwrap()
        .links
        .into_iter()
        .map(|l| {
            (
                l.link_text,
                l.link_target,
                l.wikitext_offset,
                l.match_index,
                l.context_before,
                l.context_after,
            )
        })
        .collect()
}

fn run_with(
    model: &Mock,
    wikitext: &str,
    page: &str,
    threshold: f64,
    max: i64,
    exclude: &[String],
) -> Result<Recommendations, TextError> {
    recommend(
        model,
        &Request {
            wikitext,
            page_title: page,
            language_code: "en",
            threshold,
            max_recommendations: max,
            sections_to_exclude: exclude,
            time_budget: None,
            max_work: None,
        },
    )
}

fn s(x: &str) -> String {
    x.to_owned()
}

#[test]
fn last_spelling_first_position() {
    let m = Mock::new(&[("cat", &["Cat"])]);
    let links = run(&m, "Cat and cat. CAT!");
    assert_eq!(links.len(), 1);
    assert_eq!((links[0].0.as_str(), links[0].2), ("CAT", 13));
}

#[test]
fn no_word_boundaries() {
    let m = Mock::new(&[("cat", &["Cat"])]);
    assert_eq!(run(&m, "The category of cat")[0].2, 4);
}

#[test]
fn node_offset_is_first_occurrence_in_page() {
    let m = Mock::new(&[("dog", &["Dog"])]);
    assert_eq!(run(&m, "{{t| the dog}} the dog")[0].2, 9);
}

#[test]
fn discovery_order_not_offset_order() {
    let m = Mock::new(&[("apple", &["Apple"]), ("red house", &["Red house"])]);
    let links = run(&m, "Apple is near the big red house.");
    let texts: Vec<&str> = links.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(texts, ["red house", "Apple"]);
    assert_eq!((links[0].2, links[1].2), (22, 0));
}

#[test]
fn existing_links_page_title_and_substrings_block() {
    let m = Mock::new(&[
        ("york", &["York"]),
        ("new york city", &["New York City"]),
        ("dog", &["Dog"]),
    ]);
    let out = run_with(
        &m,
        "new york city and york. [[Dog|doggy]] dog",
        "New York City",
        0.5,
        -1,
        &[],
    )
    .unwrap();
    assert!(out.links.is_empty(), "{:?}", out.links);
}

#[test]
fn context_is_clipped_at_node_boundaries() {
    let m = Mock::new(&[("hunting", &["Hunting"])]);
    let links = run(&m, "[[human]]s for hunting rodents and more");
    assert_eq!(
        (links[0].4.as_str(), links[0].5.as_str()),
        ("s for ", " rodents a")
    );
}

#[test]
fn match_index_counts_substrings_and_inserted_markup() {
    let m = Mock::new(&[("male", &["Male"])]);
    let links = run(&m, "A female.\n\n== S ==\nA male cat.");
    assert_eq!(links[0].3, 1);
    // The inserted `[[Dog House|big house|pr=0.9]]` contains `Dog`.
    let m = Mock::new(&[("big house", &["Dog House"]), ("dog", &["Dog"])]);
    let links = run(&m, "a big house. ''x'' Dog");
    assert_eq!(links.len(), 2, "{links:?}");
    assert_eq!((links[1].0.as_str(), links[1].3), ("Dog", 1));
}

#[test]
fn max_recommendations_and_threshold() {
    let m = Mock::new(&[("a1", &["A1"]), ("b1", &["B1"]), ("c1", &["C1"])]);
    let text = "a1 b1 c1";
    let all = run_with(&m, text, "P", 0.5, 0, &[]).unwrap();
    assert_eq!(all.links.len(), 3, "{all:?}");
    let two = run_with(&m, text, "P", 0.5, 2, &[]).unwrap();
    assert_eq!((two.links.len(), two.stop), (2, Stop::MaxRecommendations));
    // Equality is accepted; the float32 score is compared widened, so the
    // float64 threshold 0.9 is just above a float32 score of 0.9.
    let exact = f64::from(0.9f32);
    assert_eq!(
        run_with(&m, text, "P", exact, -1, &[]).unwrap().links.len(),
        3
    );
    assert!(
        run_with(&m, text, "P", 0.9, -1, &[])
            .unwrap()
            .links
            .is_empty()
    );
    assert_eq!(
        run_with(&m, text, "P", f64::NAN, -1, &[])
            .unwrap()
            .links
            .len(),
        3
    );
}

#[test]
fn excluded_sections_still_count_for_match_index() {
    let m = Mock::new(&[("fox", &["Fox"])]);
    let text = "Lead.\n== Notes ==\nfox\n== Body ==\nthe fox";
    let out = run_with(&m, text, "P", 0.5, -1, &[s("NOTES")]).unwrap();
    assert_eq!(out.links.len(), 1);
    assert_eq!(
        (out.links[0].wikitext_offset, out.links[0].match_index),
        (37, 1)
    );
    let lead = run_with(&m, "fox", "P", 0.5, -1, &[s("%LEAD%")]).unwrap();
    assert!(lead.links.is_empty());
}

#[test]
fn unplaceable_links_still_block() {
    // `cat]` cannot take a link (it looks like the inside of one), but the
    // target is blocked afterwards, so `kitty` (same target) gets nothing.
    let m = Mock::new(&[("cat", &["Cat"]), ("kitty", &["Cat"])]);
    assert!(run(&m, "cat] kitty").is_empty());
    assert_eq!(run(&m, "cat kitty").len(), 1);
}

#[test]
fn backslash_targets_are_errors() {
    let m = Mock::new(&[("dee", &["A\\d"])]);
    assert!(matches!(
        run_with(&m, "dee", "P", 0.5, -1, &[]),
        Err(TextError::BadReplacement { .. })
    ));
}

fn run_language(model: &Mock, wikitext: &str, language_code: &str) -> Vec<(String, usize)> {
    recommend(
        model,
        &Request {
            wikitext,
            page_title: "P",
            language_code,
            threshold: 0.5,
            max_recommendations: -1,
            sections_to_exclude: &[],
            time_budget: None,
            max_work: None,
        },
    )
    .unwrap()
    .links
    .into_iter()
    .map(|l| (l.link_text, l.wikitext_offset))
    .collect()
}

#[test]
fn sentencepiece_languages_link_the_model_pieces() {
    // ja splits this into ` `, `東京`, `は日本の`, `首都`, `です`, `。`:
    // `東京` and `首都` are grams, `日本` (inside a piece) is not.
    let m = Mock::new(&[
        ("東京", &["東京都"]),
        ("日本", &["日本"]),
        ("首都", &["首都"]),
    ]);
    let text = "東京は日本の首都です。";
    let links = run_language(&m, text, "ja");
    assert_eq!(links, vec![(s("東京"), 0), (s("首都"), 6)]);
    // The whitespace tokenizer sees one word and links nothing.
    assert!(run_language(&m, text, "en").is_empty());
    // The domain spelling of a SentencePiece wiki maps to its production key.
    assert_eq!(
        run_language(&m, text, "zh-yue"),
        run_language(&m, text, "zh_yue")
    );
}

#[test]
fn sentencepiece_normalized_grams_are_not_placed() {
    // NFKC turns the full-width `ＡＢＣ` into `ABC`: the gram is an anchor but not a
    // literal substring of the text, so it is not placed.
    let m = Mock::new(&[("abc", &["ABC"])]);
    assert!(run_language(&m, "ＡＢＣ", "ja").is_empty());
    assert_eq!(run_language(&m, "ABC", "ja"), vec![(s("ABC"), 0)]);
}

#[test]
fn zero_time_budget_stops() {
    let m = Mock::new(&[("a", &["A"])]);
    // Also when the page holds no anchor at all (no gram is ever emitted).
    for wikitext in ["a b c", "x y z"] {
        let r = recommend(
            &m,
            &Request {
                wikitext,
                page_title: "P",
                language_code: "en",
                threshold: 0.5,
                max_recommendations: -1,
                sections_to_exclude: &[],
                time_budget: Some(Duration::ZERO),
                max_work: None,
            },
        )
        .unwrap();
        assert_eq!(r.stop, Stop::TimeBudget, "{wikitext:?}");
    }
}

#[test]
fn shared_across_threads() {
    fn check<T: Send + Sync>() {}
    check::<Wikitext>();
    check::<MwTokenizer>();
    check::<Recommendations>();
    check::<Box<dyn LinkModel>>();
}

/// The section and placement cases of the production unit tests (anchor
/// `anchor1` → `Page1`, constant score 0.9, default threshold 0.8): the
/// number of links and, when there is one, its offset in the page.
#[test]
fn production_unit_cases() {
    let m = Mock::new(&[("anchor1", &["Page1"])]);
    let cases: &[(&str, &[&str], Option<usize>)] = &[
        (
            "Lorem ipsum xanchor1 dolor sit amet\n== References ==\n foo anchor1 blah\n",
            &["References"],
            None,
        ),
        (
            "Lorem ipsum xanchor1 dolor sit amet\n== reFerences ==\n foo anchor1 blah\n",
            &["References"],
            None,
        ),
        (
            "Lorem ipsum xanchor1 dolor sit amet\n== References ==\n foo\n=== Bar ===\n baz anchor1 blah\n",
            &["References"],
            Some(75),
        ),
        (
            "Lorem ipsum xanchor1 dolor sit amet\n== References ==\n foo\n=== Bar ===\n baz anchor1 blah\n",
            &["References", "Bar"],
            None,
        ),
        (
            "Lorem ipsum xanchor1 dolor sit amet\n==Referencesd== anchor1 blah\n",
            &["References"],
            Some(52),
        ),
        (
            "No partial match xanchor1 dolor sit amet\n==References== anchor1 blah\n",
            &["Reference"],
            Some(56),
        ),
        (
            "Skip sub-sections xanchor1 \n==References== foo\n === Bar ===\n anchor1 \n== Something ==\n anchor1 test\n",
            &["References"],
            Some(87),
        ),
        (
            "Lorem ipsum xanchor1 dolor sit amet\n==Foo== anchor1 blah\n",
            &["References"],
            Some(44),
        ),
        ("Lorem ipsum anchor1 dolor sit amet", &[], Some(12)),
        (
            "Lorem ipsum.\n== New section ==\n anchor1 blah",
            &[],
            Some(32),
        ),
        ("Skip lead anchor1 blah \n==Foo==\n Bar", &["%LEAD%"], None),
        (
            "Skip lead anchor1 blah\n==Foo==\n anchor1 blah",
            &["%LEAD%"],
            Some(32),
        ),
        ("==Foo==\n anchor1 blah", &[], Some(9)),
        (
            "Foo\n==Foo==\n anchor1 blah\n==bar==\n==baz==\n",
            &[],
            Some(13),
        ),
        ("Lorem ipsum xanchor1 dolor sit amet", &[], None),
        ("Lorem ipsum anchor1x dolor sit amet", &[], None),
        ("Lorem ipsum anchor1 dolor sit anchor1 amet", &[], Some(12)),
        ("Lorem ipsum anchor1 dolor sit anchor12 amet", &[], Some(12)),
    ];
    for (text, exclude, offset) in cases {
        let exclude: Vec<String> = exclude.iter().map(|x| s(x)).collect();
        let out = run_with(&m, text, "Page", 0.8, -1, &exclude).unwrap();
        let got: Vec<(usize, &str, &str)> = out
            .links
            .iter()
            .map(|l| {
                (
                    l.wikitext_offset,
                    l.link_text.as_str(),
                    l.link_target.as_str(),
                )
            })
            .collect();
        let want: Vec<(usize, &str, &str)> =
            offset.iter().map(|&o| (o, "anchor1", "Page1")).collect();
        assert_eq!(got, want, "{text:?} excluding {exclude:?}");
    }
}

#[test]
fn time_budget_bounds_pathological_parsing() {
    let m = Mock::new(&[("a", &["A"])]);
    let junk = "<b>".repeat(200_000);
    let started = Instant::now();
    let r = recommend(
        &m,
        &Request {
            wikitext: &junk,
            page_title: "P",
            language_code: "en",
            threshold: 0.5,
            max_recommendations: -1,
            sections_to_exclude: &[],
            time_budget: Some(Duration::from_millis(200)),
            max_work: None,
        },
    )
    .unwrap();
    assert_eq!((r.links.len(), r.stop), (0, Stop::TimeBudget));
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A model that records what the pass asks of it about existing links.
struct Recording<'m> {
    inner: &'m Mock,
    told: std::sync::Mutex<Vec<String>>,
    asked: std::sync::Mutex<Vec<String>>,
}

impl LinkModel for Recording<'_> {
    fn candidates(&self, anchor: &str) -> Option<Vec<Candidate<'_>>> {
        self.inner.candidates(anchor)
    }
    fn redirect(&self, title: &str) -> Option<String> {
        self.inner.redirect(title)
    }
    fn has_page(&self, title: &str) -> bool {
        self.inner.has_page(title)
    }
    fn prepare_link_targets(&self, titles: &[&str]) {
        let mut told = self.told.lock().unwrap();
        told.extend(titles.iter().map(|t| (*t).to_owned()));
    }
    fn link_target(&self, title: &str, out: &mut String) -> bool {
        self.asked.lock().unwrap().push(title.to_owned());
        self.inner.link_target(title, out)
    }
    fn scores(&self, page_title: &str, mention: &str, candidates: &[Candidate<'_>]) -> Vec<f32> {
        self.inner.scores(page_title, mention, candidates)
    }
}

/// Existing links are read from the last back: the model is told every link's title at
/// once, first, and then asked the way production's dict is filled — an anchor's link is
/// looked up only until one of its links leads to an article (a later duplicate of a
/// linked anchor is not looked up again; a duplicate after a missing page is).
#[test]
fn existing_links_are_told_at_once_then_looked_up_as_before() {
    let mut m = Mock::new(&[("cat", &["Cat"])]);
    m.pages.extend(["Felis".to_owned(), "Dog".to_owned()]);
    let model = Recording {
        inner: &m,
        told: Default::default(),
        asked: Default::default(),
    };
    let page = "[[Cat]] [[Felis|cat]] [[Dog]] [[Nowhere|dog]] [[cat#x|CAT]] end";
    recommend(
        &model,
        &Request {
            wikitext: page,
            page_title: "Page",
            language_code: "en",
            threshold: 0.5,
            max_recommendations: -1,
            sections_to_exclude: &[],
            time_budget: None,
            max_work: None,
        },
    )
    .unwrap();
    let told = model.told.into_inner().unwrap();
    let asked = model.asked.into_inner().unwrap();
    // Every link's title, normalised (first letter upper case, no fragment), from the last
    // link back.
    assert_eq!(told, ["Cat", "Nowhere", "Dog", "Felis", "Cat"]);
    // "cat" is linked by its last link, so its two earlier links are not looked up; "dog"
    // leads nowhere from its last link, so the one before it is.
    assert_eq!(asked, ["Cat", "Nowhere", "Dog"]);
}

/// Keeps every link: with a filter, the pass parses the whole page before it starts.
struct KeepAll;

impl LinkFilter for KeepAll {
    fn keep(&mut self, _: &LinkRecommendation, _: &Placement<'_>) -> bool {
        true
    }
}

/// A pass that parses the page's nodes as it reads them gives the links and the stop of
/// the pass over the page parsed first, wherever it stops: in any section, across the
/// parse's steps, with sections excluded, and after a NUL.
#[test]
fn nodes_parsed_as_read_give_the_links_of_the_whole_page() {
    const ANIMALS: [&str; 12] = [
        "fox", "dog", "cat", "hen", "owl", "elk", "yak", "emu", "gnu", "ant", "bee", "eel",
    ];
    let targets: Vec<[String; 1]> = ANIMALS.iter().map(|a| [a.to_uppercase()]).collect();
    let target_refs: Vec<[&str; 1]> = targets.iter().map(|[t]| [t.as_str()]).collect();
    let pairs: Vec<(&str, &[&str])> = ANIMALS
        .iter()
        .zip(&target_refs)
        .map(|(a, t)| (*a, &t[..]))
        .collect();
    let m = Mock::new(&pairs);
    let mut page = String::from("The {{infobox|fox=1}} lead, é and the [[dog]].\n");
    for (i, animal) in ANIMALS.iter().enumerate() {
        page.push_str(&format!("== Part {i} ==\n"));
        // Filler markup, so that the sections lie across several of the parse's steps.
        for _ in 0..40 {
            page.push_str("Some {{cite|a=b}} text, 日本, <ref>x</ref> and '''more''' words. ");
        }
        page.push_str(&format!(
            "\nA {animal} met the {animal}.\n{{| class=t\n| {animal}\n|}}\n"
        ));
    }
    page.push_str("== Notes ==\nthe owl\u{0}the eel");
    for max in [-1, 0, 1, 2, 3, 5, 8, 11] {
        for exclude in [vec![], vec![s("PART 3"), s("notes")], vec![s("%LEAD%")]] {
            let request = Request {
                wikitext: &page,
                page_title: "P",
                language_code: "en",
                threshold: 0.5,
                max_recommendations: max,
                sections_to_exclude: &exclude,
                time_budget: None,
                max_work: None,
            };
            let streamed = recommend(&m, &request).unwrap();
            let whole = recommend_filtered(&m, &request, None, Some(&mut KeepAll)).unwrap();
            assert_eq!(streamed, whole, "max {max}, excluding {exclude:?}");
            if max > 0 {
                assert_eq!(streamed.links.len(), max as usize, "max {max}");
            }
        }
    }
}

/// A pass that reaches its maximum leaves the rest of the page unparsed: a tail whose
/// parse takes minutes does not hold it, while the same page read to its end runs out of
/// time (keeping the links it found before).
#[test]
fn a_pass_that_stops_early_leaves_the_rest_unparsed() {
    let m = Mock::new(&[("a1", &["A1"]), ("b1", &["B1"])]);
    // An unknown tag name: nothing to the wikilink search, which reads the whole page;
    // nested attempts to the partition. The filler puts the tail beyond the parse's step.
    let filler = "Words, [[links]] and {{templates}}.\n".repeat(300);
    let page = format!("a1 and b1.\n\n{filler}{}", "<x>".repeat(200_000));
    let request = |max| Request {
        wikitext: &page,
        page_title: "P",
        language_code: "en",
        threshold: 0.5,
        max_recommendations: max,
        sections_to_exclude: &[],
        time_budget: Some(Duration::from_secs(1)),
        max_work: None,
    };
    let early = recommend(&m, &request(2)).unwrap();
    assert_eq!(
        (early.links.len(), early.stop),
        (2, Stop::MaxRecommendations)
    );
    let all = recommend(&m, &request(-1)).unwrap();
    assert_eq!((all.links.len(), all.stop), (2, Stop::TimeBudget));
}
