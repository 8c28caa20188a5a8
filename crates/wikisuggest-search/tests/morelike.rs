//! Morelike checked against Lucene's algorithm: hand-worked cases, then random corpora
//! against the independent re-derivation in `support/lucene.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::{HashMap, HashSet};
use std::path::Path;

use support::lucene::{self, Doc, Params};
use wikisuggest_search::{BuildOptions, Document, MoreLikeOverrides, SearchIndex, build_index};

/// A language with no analyzer of its own: words are split and lowercased, nothing more, so
/// the oracle's terms are the words.
const PLAIN: &str = "zz";

struct Corpus {
    _dir: tempfile::TempDir,
    index: SearchIndex,
    docs: Vec<Doc>,
}

fn document(i: usize, title: &str, text: &str) -> Document {
    Document {
        page_id: 100 + i as u64,
        title: title.to_owned(),
        text: text.to_owned(),
        redirects: Vec::new(),
        disambiguation: false,
    }
}

fn build(docs: Vec<Document>, options: &BuildOptions) -> Corpus {
    let dir = tempfile::tempdir().unwrap();
    let oracle = docs.iter().map(|d| Doc::new(&d.title, &d.text)).collect();
    build_index(dir.path(), docs, options, None).unwrap();
    let index = SearchIndex::open(dir.path()).unwrap();
    Corpus {
        _dir: dir,
        index,
        docs: oracle,
    }
}

fn plain(texts: &[(&str, &str)]) -> Corpus {
    let docs = texts
        .iter()
        .enumerate()
        .map(|(i, (t, x))| document(i, t, x))
        .collect();
    build(docs, &BuildOptions::new(PLAIN))
}

fn overrides(max_query_terms: u32) -> MoreLikeOverrides {
    MoreLikeOverrides {
        max_query_terms: Some(max_query_terms),
        ..MoreLikeOverrides::default()
    }
}

fn terms_of(c: &Corpus, seeds: &[&str], o: &MoreLikeOverrides) -> HashSet<String> {
    let r = c.index.more_like(seeds, o, 500).unwrap();
    r.terms.into_iter().map(|t| t.term).collect()
}

fn titles(c: &Corpus, seeds: &[&str]) -> Vec<String> {
    c.index
        .similar(seeds, 500)
        .unwrap()
        .into_iter()
        .map(|h| h.title)
        .collect()
}

fn set(words: &[&str]) -> HashSet<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// Compares one query with the oracle: same terms, same required count, same hits with the
/// same scores (to float rounding), in non-increasing score order.
fn check(c: &Corpus, seeds: &[&str], p: &Params) {
    let expected = lucene::morelike(&c.docs, seeds, p);
    let o = MoreLikeOverrides {
        min_term_freq: Some(p.min_term_freq),
        min_doc_freq: Some(p.min_doc_freq as u32),
        max_doc_freq: Some(p.max_doc_freq.map(|m| m as u32)),
        max_query_terms: Some(p.max_query_terms as u32),
        minimum_should_match: Some(format!("{}%", p.percent)),
        ..MoreLikeOverrides::default()
    };
    let got = c.index.more_like(seeds, &o, 10_000).unwrap();
    let got_terms: HashSet<String> = got.terms.iter().map(|t| t.term.clone()).collect();
    assert_eq!(got_terms, expected.terms, "terms for {seeds:?}");
    assert_eq!(got.minimum_should_match, expected.minimum_should_match);
    let got_hits: HashMap<&str, f32> = got
        .hits
        .iter()
        .map(|h| (h.title.as_str(), h.score))
        .collect();
    let want: HashMap<&str, f32> = expected
        .hits
        .iter()
        .map(|(t, s)| (t.as_str(), *s))
        .collect();
    assert_eq!(
        got_hits.keys().collect::<HashSet<_>>(),
        want.keys().collect::<HashSet<_>>(),
        "hits for {seeds:?}"
    );
    for (title, score) in &want {
        let g = got_hits[title];
        assert!(
            (g - score).abs() <= 1e-5 * score.abs().max(1.0),
            "score of {title} for {seeds:?}: {g} against Lucene's {score}"
        );
    }
    for pair in got.hits.windows(2) {
        assert!(pair[0].score >= pair[1].score, "hits out of order");
    }
}

#[test]
fn equal_scores_at_the_cut_go_to_javas_hashmap_order() {
    // "a" and "p" both occur twice in the seed and in two documents: equal tf · idf. With one
    // query term, Java's map iterates "p" (hash 112, bucket 0) before "a" (97, bucket 1), and
    // the heap admits the later "a" only if it scored strictly more: "p" is kept, although
    // "a" comes first in byte order.
    let c = plain(&[("Seed", "a a p p"), ("Other", "a p"), ("Third", "zzz")]);
    assert_eq!(terms_of(&c, &["Seed"], &overrides(1)), set(&["p"]));
    assert_eq!(terms_of(&c, &["Seed"], &overrides(2)), set(&["a", "p"]));
    check(
        &c,
        &["Seed"],
        &Params {
            max_query_terms: 1,
            ..Params::default()
        },
    );
}

#[test]
fn ties_among_many_terms_follow_the_heap() {
    // Thirty terms of equal score in a map of 64 buckets, five kept: which five is decided by
    // the iteration order and Lucene's heap moves only.
    let words: Vec<String> = (0..30).map(|i| format!("w{i:02}")).collect();
    let seed = words
        .iter()
        .flat_map(|w| [w.as_str(), w.as_str()])
        .collect::<Vec<_>>()
        .join(" ");
    let other = words.join(" ");
    let c = plain(&[("Seed", &seed), ("Other", &other), ("Filler", "x y z")]);
    let p = Params {
        max_query_terms: 5,
        ..Params::default()
    };
    check(&c, &["Seed"], &p);
    assert_eq!(terms_of(&c, &["Seed"], &overrides(5)).len(), 5);
}

#[test]
fn the_minimum_should_match_floor_is_thirty_percent_rounded_down() {
    // Ten query terms: ⌊0.3 · 10⌋ = 3 must match. "Two" holds two of them and is left out,
    // "Three" holds three and is in; "Rest" holds the other seven.
    let seed = (1..=10)
        .map(|i| format!("t{i} t{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let c = plain(&[
        ("Seed", &seed),
        ("Two", "t1 t2 filler"),
        ("Three", "t1 t2 t3"),
        ("Rest", "t4 t5 t6 t7 t8 t9 t10"),
    ]);
    let r = c
        .index
        .more_like(&["Seed"], &MoreLikeOverrides::default(), 500)
        .unwrap();
    assert_eq!(r.terms.len(), 10);
    assert_eq!(r.minimum_should_match, 3);
    let mut hits = titles(&c, &["Seed"]);
    hits.sort();
    assert_eq!(hits, vec!["Rest", "Three"]);
    check(&c, &["Seed"], &Params::default());
    // Three query terms: ⌊0.9⌋ = 0, so one term is enough.
    let c = plain(&[("Seed", "u u v v w w"), ("One", "u"), ("Other", "v w")]);
    let r = c
        .index
        .more_like(&["Seed"], &MoreLikeOverrides::default(), 500)
        .unwrap();
    assert_eq!((r.terms.len(), r.minimum_should_match), (3, 0));
    let mut hits = titles(&c, &["Seed"]);
    hits.sort();
    assert_eq!(hits, vec!["One", "Other"]);
}

#[test]
fn several_seeds_sum_their_frequencies_and_are_all_left_out() {
    // "x" occurs once in each seed: 2 together, enough for min_term_freq 2; "y" and "z" once.
    let c = plain(&[
        ("First", "x y"),
        ("Second", "x z"),
        ("Hit", "x"),
        ("Miss", "y z"),
    ]);
    assert_eq!(
        terms_of(&c, &["First|Second"], &MoreLikeOverrides::default()),
        set(&["x"])
    );
    assert_eq!(titles(&c, &["First|Second"]), vec!["Hit"]);
    assert!(
        titles(&c, &["First"]).is_empty(),
        "one seed alone has no term twice"
    );
    check(&c, &["First", "Second"], &Params::default());
    // The seeds may come as one `|`-joined string or as several strings.
    assert_eq!(
        titles(&c, &["Second", "First"]),
        titles(&c, &["First|Second"])
    );
}

fn wiki() -> Corpus {
    let mut docs = vec![
        document(0, "Moon", "moon orbit earth moon orbit tide crater crater"),
        document(1, "Earth", "earth orbit sun moon tide ocean"),
        document(2, "Crater", "crater impact moon crater"),
        document(3, "Sun", "sun star orbit"),
        document(4, "Mercury", "mercury planet orbit sun crater"),
    ];
    docs[0].redirects = vec!["Luna".into(), "The_Moon".into()];
    docs[4].disambiguation = true;
    build(docs, &BuildOptions::new(PLAIN))
}

#[test]
fn a_redirect_seed_is_its_target() {
    let c = wiki();
    let direct = c.index.similar(&["Moon"], 500).unwrap();
    assert!(!direct.is_empty());
    assert_eq!(c.index.similar(&["Luna"], 500).unwrap(), direct);
    // Read as MediaWiki reads titles: "the_Moon" is "The Moon"; past the first letter case
    // matters, so "the moon" is another (missing) page.
    assert_eq!(c.index.similar(&["the_Moon"], 500).unwrap(), direct);
    assert!(c.index.similar(&["the moon"], 500).unwrap().is_empty());
    let r = c
        .index
        .more_like(&["Luna"], &MoreLikeOverrides::default(), 500)
        .unwrap();
    assert_eq!(r.seeds[0].page, Some((100, "Moon".to_owned())));
    // A seed given twice, once through its redirect, counts once.
    assert_eq!(c.index.similar(&["Moon|Luna"], 500).unwrap(), direct);
    check(&c, &["Moon"], &Params::default());
}

#[test]
fn a_missing_seed_is_dropped() {
    let c = wiki();
    let direct = c.index.similar(&["Moon"], 500).unwrap();
    assert_eq!(
        c.index.similar(&["No such page|Moon"], 500).unwrap(),
        direct
    );
    let r = c
        .index
        .more_like(&["No such page|Moon"], &MoreLikeOverrides::default(), 500)
        .unwrap();
    assert_eq!(r.seeds.len(), 2);
    assert_eq!(r.seeds[0].page, None);
}

#[test]
fn a_disambiguation_page_seeds_and_is_returned_flagged() {
    let c = wiki();
    // Mercury (a disambiguation page) as the seed: its words occur once each, so with the
    // defaults nothing is chosen; with min_term_freq 1 its terms work as any seed's.
    assert!(c.index.similar(&["Mercury"], 500).unwrap().is_empty());
    let o = MoreLikeOverrides {
        min_term_freq: Some(1),
        ..MoreLikeOverrides::default()
    };
    let r = c.index.more_like(&["Mercury"], &o, 500).unwrap();
    assert!(!r.hits.is_empty());
    assert!(r.hits.iter().all(|h| h.title != "Mercury"));
    check(
        &c,
        &["Mercury"],
        &Params {
            min_term_freq: 1,
            ..Params::default()
        },
    );
    // As a hit it keeps its flag.
    let hits = c.index.more_like(&["Moon"], &o, 500).unwrap().hits;
    let mercury = hits.iter().find(|h| h.title == "Mercury").unwrap();
    assert!(mercury.disambiguation);
    assert!(
        hits.iter()
            .filter(|h| h.title != "Mercury")
            .all(|h| !h.disambiguation)
    );
}

#[test]
fn no_seed_or_no_term_gives_an_empty_list() {
    let c = wiki();
    assert!(
        c.index
            .similar(&["Nothing|Nowhere"], 500)
            .unwrap()
            .is_empty()
    );
    assert!(c.index.similar::<&str>(&[], 500).unwrap().is_empty());
    assert!(c.index.similar(&[" | "], 500).unwrap().is_empty());
    // Sun's words occur once: no term reaches min_term_freq 2.
    let r = c
        .index
        .more_like(&["Sun"], &MoreLikeOverrides::default(), 500)
        .unwrap();
    assert!(r.terms.is_empty() && r.hits.is_empty());
    // min_doc_freq: a word in the seed alone is never chosen.
    let c = plain(&[("Seed", "only only"), ("Other", "else")]);
    assert!(c.index.similar(&["Seed"], 500).unwrap().is_empty());
}

#[test]
fn limits_and_document_frequency_bounds_apply() {
    let c = wiki();
    let all = c.index.similar(&["Moon"], 500).unwrap();
    assert_eq!(c.index.similar(&["Moon"], 1).unwrap(), all[..1].to_vec());
    assert!(c.index.similar(&["Moon"], 0).unwrap().is_empty());
    assert!(c.index.similar(&["Moon"], 10_001).is_err());
    // max_doc_freq 2 drops "orbit" (4 documents) and "moon" (3).
    let o = MoreLikeOverrides {
        max_doc_freq: Some(Some(2)),
        ..MoreLikeOverrides::default()
    };
    let r = c.index.more_like(&["Moon"], &o, 500).unwrap();
    assert!(r.terms.iter().all(|t| t.doc_freq <= 2));
    assert!(r.terms.iter().all(|t| t.term != "orbit"));
    check(
        &c,
        &["Moon"],
        &Params {
            max_doc_freq: Some(2),
            ..Params::default()
        },
    );
    let bad = MoreLikeOverrides {
        minimum_should_match: Some("most".into()),
        ..MoreLikeOverrides::default()
    };
    assert!(c.index.more_like(&["Moon"], &bad, 10).is_err());
}

#[test]
fn the_wikis_own_settings_apply_under_the_calls() {
    let docs = vec![
        document(0, "Seed", "a a b"),
        document(1, "Hit", "a b"),
        document(2, "Other", "b c"),
    ];
    let mut options = BuildOptions::new(PLAIN);
    options.morelike.min_term_freq = Some(1);
    let c = build(docs, &options);
    assert_eq!(c.index.params().min_term_freq, 1);
    assert_eq!(
        terms_of(&c, &["Seed"], &MoreLikeOverrides::default()),
        set(&["a", "b"])
    );
    let per_call = MoreLikeOverrides {
        min_term_freq: Some(2),
        ..MoreLikeOverrides::default()
    };
    assert_eq!(terms_of(&c, &["Seed"], &per_call), set(&["a"]));
}

/// A corpus drawn from `rng` (seeded: the same on every run).
fn random_corpus(rng: &mut fastrand::Rng, docs: usize, vocabulary: u64) -> Corpus {
    let docs = (0..docs)
        .map(|i| {
            // Zipf-like: low word numbers are common; lengths from 3 to 90 words exercise
            // Lucene's length quantisation above 24.
            let len = 3 + rng.usize(..88);
            let words: Vec<String> = (0..len)
                .map(|_| {
                    let r = rng.u64(..vocabulary * vocabulary);
                    format!("w{}", (r as f64).sqrt() as u64)
                })
                .map(|w| {
                    let n: u64 = w[1..].parse().unwrap_or(0);
                    format!("w{}", vocabulary - 1 - n)
                })
                .collect();
            document(i, &format!("Doc {i}"), &words.join(" "))
        })
        .collect();
    build(docs, &BuildOptions::new(PLAIN))
}

#[test]
fn random_corpora_agree_with_lucenes_algorithm() {
    let mut rng = fastrand::Rng::with_seed(0x9E37_79B9_7F4A_7C15);
    for (docs, vocabulary) in [(120, 40), (250, 150)] {
        let c = random_corpus(&mut rng, docs, vocabulary);
        for round in 0..25 {
            let n_seeds = 1 + rng.usize(..3);
            let seeds: Vec<String> = (0..n_seeds)
                .map(|_| format!("Doc {}", rng.usize(..docs)))
                .collect();
            let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
            let p = match round % 4 {
                0 => Params::default(),
                1 => Params {
                    max_query_terms: 5,
                    ..Params::default()
                },
                2 => Params {
                    percent: 60,
                    min_doc_freq: 5,
                    ..Params::default()
                },
                _ => Params {
                    min_term_freq: 1,
                    max_doc_freq: Some(docs as u64 / 4),
                    ..Params::default()
                },
            };
            check(&c, &seeds, &p);
        }
    }
}

#[test]
fn an_interrupted_build_resumes_to_the_same_index() {
    let docs: Vec<Document> = (0..40)
        .map(|i| {
            document(
                i,
                &format!("Doc {i}"),
                &format!("common w{} w{} w{}", i % 7, i % 5, i % 3),
            )
        })
        .collect();
    let whole = build(docs.clone(), &BuildOptions::new(PLAIN));

    let dir = tempfile::tempdir().unwrap();
    let mut options = BuildOptions::new(PLAIN);
    options.commit_every = 7;
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let stop_after = docs.clone().into_iter().enumerate().map(|(i, d)| {
        if i == 23 {
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        d
    });
    let err = build_index(dir.path(), stop_after, &options, Some(&cancel)).unwrap_err();
    assert!(
        matches!(
            err,
            wikisuggest_search::SearchError::Interrupted { documents: 23 }
        ),
        "{err}"
    );
    assert!(matches!(
        SearchIndex::open(dir.path()),
        Err(wikisuggest_search::SearchError::Incomplete { documents: 23, .. })
    ));
    // Other documents than before are refused.
    let mut changed = docs.clone();
    changed[22].page_id = 9_999;
    assert!(matches!(
        build_index(dir.path(), changed, &options, None),
        Err(wikisuggest_search::SearchError::InputChanged { position: 22, .. })
    ));
    assert!(matches!(
        build_index(dir.path(), docs[..10].to_vec(), &options, None),
        Err(wikisuggest_search::SearchError::InputShorter { .. })
    ));
    let summary = build_index(dir.path(), docs.clone(), &options, None).unwrap();
    assert_eq!((summary.documents, summary.added), (40, 17));
    let again = build_index(dir.path(), docs, &options, None).unwrap();
    assert!(again.already_complete);
    // The interrupted runs committed segments of their own; a small index ends as one, and
    // the earlier segments' files are gone.
    let segments = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension() == Some("idx".as_ref()))
        .count();
    assert_eq!(segments, 1);
    let resumed = SearchIndex::open(dir.path()).unwrap();
    assert_eq!(resumed.documents(), 40);
    // The same hits with the same scores; the index's segments differ, and with them the
    // order in which a hit's term scores are added (the last bit of a float).
    for seed in ["Doc 3", "Doc 17", "Doc 30|Doc 1"] {
        let scores = |index: &SearchIndex| -> HashMap<String, f32> {
            let hits = index.similar(&[seed], 500).unwrap();
            hits.into_iter().map(|h| (h.title, h.score)).collect()
        };
        let (a, b) = (scores(&resumed), scores(&whole.index));
        assert!(!a.is_empty());
        assert_eq!(
            a.keys().collect::<HashSet<_>>(),
            b.keys().collect::<HashSet<_>>()
        );
        for (title, score) in &a {
            assert!(
                (score - b[title]).abs() <= 1e-6,
                "{title}: {score} vs {}",
                b[title]
            );
        }
    }
}

#[test]
fn folders_that_are_not_complete_indexes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        SearchIndex::open(dir.path()),
        Err(wikisuggest_search::SearchError::NotAnIndex { .. })
    ));
    std::fs::write(
        dir.path().join(wikisuggest_search::SETTINGS_FILE),
        b"{not json",
    )
    .unwrap();
    assert!(matches!(
        SearchIndex::open(dir.path()),
        Err(wikisuggest_search::SearchError::NotAnIndex { .. })
    ));
    let dir = tempfile::tempdir().unwrap();
    build_index(
        dir.path(),
        vec![document(0, "A", "a")],
        &BuildOptions::new("en"),
        None,
    )
    .unwrap();
    let other = build_index(
        dir.path(),
        vec![document(0, "A", "a")],
        &BuildOptions::new("fr"),
        None,
    );
    assert!(matches!(
        other,
        Err(wikisuggest_search::SearchError::InvalidParameter {
            name: "language",
            ..
        })
    ));
    let mut small = BuildOptions::new("en");
    small.memory_budget = 1 << 20;
    assert!(build_index(Path::new("/nonexistent/never"), Vec::new(), &small, None).is_err());
}

#[test]
fn page_ids_for_catalogs_can_be_filtered_and_unbounded() {
    let c = wiki();
    let seeds = vec!["Moon".to_owned()];
    let hits = c.index.similar(&["Moon"], 500).unwrap();
    let ids: Vec<u64> = hits.iter().map(|h| h.page_id).collect();
    assert_eq!(c.index.similar_ids(&seeds, 500, None).unwrap(), ids);
    // Every match, best first, with no limit: the same list here.
    assert_eq!(c.index.similar_ids(&seeds, usize::MAX, None).unwrap(), ids);
    assert_eq!(
        c.index.similar_ids(&seeds, 2, Some(&|_| true)).unwrap(),
        ids[..2].to_vec()
    );
    // A filter keeps the order of what it accepts.
    let odd = |id: u64| id % 2 == 1;
    let want: Vec<u64> = ids.iter().copied().filter(|id| odd(*id)).collect();
    assert!(!want.is_empty() && want.len() < ids.len());
    assert_eq!(
        c.index.similar_ids(&seeds, usize::MAX, Some(&odd)).unwrap(),
        want
    );
    assert!(
        c.index
            .similar_ids(&["Nothing".to_owned()], usize::MAX, Some(&odd))
            .unwrap()
            .is_empty()
    );
    // The seeds are never among them.
    let all = c
        .index
        .similar_ids(&seeds, usize::MAX, Some(&|_| true))
        .unwrap();
    assert!(!all.contains(&100));
}

#[test]
fn a_build_fed_from_several_threads_equals_one_fed_in_order() {
    let docs: Vec<Document> = (0..60)
        .map(|i| {
            document(
                i,
                &format!("Doc {i}"),
                &format!("common w{} w{} w{} w{}", i % 7, i % 5, i % 3, i % 11),
            )
        })
        .collect();
    let ordered = build(docs.clone(), &BuildOptions::new(PLAIN));
    let dir = tempfile::tempdir().unwrap();
    // An unfinished build left behind is discarded.
    let mut partial =
        wikisuggest_search::IndexBuilder::open(dir.path(), &BuildOptions::new(PLAIN)).unwrap();
    partial.push(&docs[0]).unwrap();
    partial.checkpoint().unwrap();
    drop(partial);
    let shared =
        wikisuggest_search::SharedIndexBuilder::create(dir.path(), &BuildOptions::new(PLAIN))
            .unwrap();
    std::thread::scope(|s| {
        for part in docs.chunks(15) {
            let shared = &shared;
            s.spawn(move || {
                for d in part.iter().rev() {
                    let redirects: Vec<&str> = d.redirects.iter().map(String::as_str).collect();
                    shared.add(&d.as_ref(&redirects)).unwrap();
                }
            });
        }
    });
    assert_eq!(shared.finish().unwrap(), 60);
    assert!(shared.finish().is_err());
    assert!(shared.add(&docs[0].as_ref(&[])).is_err());
    let index = SearchIndex::open(dir.path()).unwrap();
    assert_eq!(index.documents(), 60);
    for seed in ["Doc 3", "Doc 44|Doc 12"] {
        let a: HashMap<String, f32> = index
            .similar(&[seed], 500)
            .unwrap()
            .into_iter()
            .map(|h| (h.title, h.score))
            .collect();
        let b: HashMap<String, f32> = ordered
            .index
            .similar(&[seed], 500)
            .unwrap()
            .into_iter()
            .map(|h| (h.title, h.score))
            .collect();
        assert!(!a.is_empty());
        assert_eq!(
            a.keys().collect::<HashSet<_>>(),
            b.keys().collect::<HashSet<_>>()
        );
        for (t, s) in &a {
            assert!((s - b[t]).abs() <= 1e-6);
        }
    }
    assert!(
        wikisuggest_search::SharedIndexBuilder::create(dir.path(), &BuildOptions::new(PLAIN))
            .is_err()
    );
}
