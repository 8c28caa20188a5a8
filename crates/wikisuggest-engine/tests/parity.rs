//! The whole engine against the production engine's outputs on the parity articles
//! (tests/data/parity): every article in both configurations, compared field by field
//! (links in order, every field exact, scores equal as float32).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use wikisuggest_engine::{
    BatchStream, Engine, LinkOptions, LinkRecommendationSet, Page, RecommendOptions, Stop,
    default_workers,
};

use common::{Article, parity_articles as articles};

/// The two configurations of the parity set: name, threshold, max_recommendations.
const CONFIGS: [(&str, f64, i64); 2] = [("api", 0.5, 15), ("exhaustive", 0.0, -1)];

fn expected(config: &str, name: &str) -> Value {
    let path = common::repo_root()
        .join("tests/data/parity/expected")
        .join(config)
        .join("enwiki")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The first difference between our result and the expected one, if any.
fn difference(ours: &LinkRecommendationSet, want: &Value) -> Option<String> {
    let links = want["links"].as_array().unwrap();
    if want["links_count"].as_u64() != Some(ours.links_count() as u64) {
        return Some(format!(
            "links_count {} != expected {}",
            ours.links_count(),
            want["links_count"]
        ));
    }
    for (i, (got, w)) in ours.links.iter().zip(links).enumerate() {
        let same = w["link_text"] == got.link_text.as_str()
            && w["link_target"] == got.link_target.as_str()
            && w["wikitext_offset"].as_u64() == Some(got.wikitext_offset as u64)
            && w["context_before"] == got.context_before.as_str()
            && w["context_after"] == got.context_after.as_str()
            && w["match_index"].as_u64() == Some(got.match_index as u64)
            && w["link_index"].as_u64() == Some(got.link_index as u64)
            && w["score"].as_f64().map(|s| s as f32) == Some(got.score);
        if !same {
            return Some(format!("link {i}: got {got:?}, expected {w}"));
        }
    }
    let echoed = want["page_title"] == ours.page_title.as_str()
        && want["pageid"].as_i64() == ours.pageid
        && want["revid"].as_i64() == ours.revid
        && want["meta"]["format_version"].as_i64() == Some(ours.meta.format_version);
    (!echoed).then(|| "page_title, pageid, revid or format_version differ".to_owned())
}

fn options(threshold: f64, max_recommendations: i64) -> RecommendOptions {
    RecommendOptions {
        link: LinkOptions {
            threshold,
            max_recommendations,
            ..LinkOptions::default()
        },
        ..RecommendOptions::default()
    }
}

#[test]
fn every_parity_article_matches_production_in_both_configurations() {
    let engine = Arc::new(Engine::open(&common::parity_dir(), "enwiki").unwrap());
    let articles = articles();
    assert_eq!(articles.len(), 71);
    let pages: Vec<Page> = articles
        .iter()
        .map(|a| Page {
            wikitext: a.wikitext.clone().into(),
            page_title: a.page_title.clone(),
            pageid: Some(a.pageid),
            revid: Some(a.revid),
            language_code: None,
        })
        .collect();
    let mut failures = Vec::new();
    let mut compared = 0;
    for (config, threshold, max) in CONFIGS {
        let results =
            engine.recommend_batch(pages.clone(), &options(threshold, max), default_workers());
        for (article, result) in articles.iter().zip(results) {
            let ours = result.unwrap();
            compared += 1;
            if let Some(d) = difference(&ours, &expected(config, &article.name)) {
                failures.push(format!("{config}/{}: {d}", article.name));
            }
        }
    }
    assert_eq!(compared, 142);
    assert!(
        failures.is_empty(),
        "{} of 142 differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn batch_equals_single_calls_and_keeps_input_order() {
    let engine = Arc::new(Engine::open(&common::parity_dir(), "enwiki").unwrap());
    let articles = articles();
    // Longest first and a duplicate: order must follow the input, not completion.
    let picked: Vec<&Article> = [5usize, 0, 17, 5, 40]
        .iter()
        .map(|&i| &articles[i])
        .collect();
    let pages: Vec<Page> = picked
        .iter()
        .map(|a| Page {
            wikitext: a.wikitext.clone().into(),
            page_title: a.page_title.clone(),
            pageid: Some(a.pageid),
            ..Page::default()
        })
        .collect();
    let opts = options(0.0, -1);
    let batch = engine.recommend_batch(pages, &opts, 3);
    for (a, got) in picked.iter().zip(batch) {
        let single = engine
            .recommend(&a.wikitext, &a.page_title, Some(a.pageid), None, &opts)
            .unwrap();
        assert_eq!(got.unwrap(), single);
    }
}

#[test]
fn a_page_within_a_slice_is_its_whole_answer_or_none() {
    let engine = Engine::open(&common::parity_dir(), "enwiki").unwrap();
    let articles = articles();
    let page_of = |wikitext: String| Page {
        wikitext: wikitext.into(),
        page_title: "Joined".to_owned(),
        ..Page::default()
    };
    let one = page_of(articles[0].wikitext.clone());
    // Every article joined, read whole: far longer than a millisecond's slice.
    let joined: Vec<&str> = articles.iter().map(|a| a.wikitext.as_str()).collect();
    let long = page_of(joined.join("\n"));
    for (threshold, max) in [(0.5, 15), (0.0, 0)] {
        let opts = options(threshold, max);
        let whole = engine.recommend_page(&one, &opts).unwrap();
        let within = engine.recommend_page_within(&one, &opts, Duration::from_secs(60));
        assert_eq!(within.unwrap().unwrap(), whole);
    }
    let opts = options(0.0, 0);
    assert!(
        engine
            .recommend_page_within(&long, &opts, Duration::from_millis(1))
            .is_none()
    );
    // A request whose own budget is shorter than the slice gets its budget's answer.
    let budgeted = RecommendOptions {
        time_budget: Some(Duration::from_millis(1)),
        ..opts
    };
    let answer = engine.recommend_page_within(&long, &budgeted, Duration::from_secs(60));
    assert_eq!(answer.unwrap().unwrap().stop, Stop::TimeBudget);
}

#[test]
fn result_echoes_the_request_and_carries_the_checksums() {
    let engine = Engine::open(&common::parity_dir(), "enwiki")
        .unwrap()
        .with_application_version("test-1");
    let set = engine
        .recommend(
            "A [[cat]] is a mammal.",
            "Some_page ",
            None,
            Some(7),
            &options(0.5, 15),
        )
        .unwrap();
    assert_eq!(set.page_title, "Some page");
    assert_eq!((set.pageid, set.revid), (None, Some(7)));
    assert_eq!(set.meta.application_version, "test-1");
    assert_eq!(set.meta.format_version, 1);
    // The published files' checksums, as production's MySQL backend reports them.
    let sums = set.meta.dataset_checksums.to_map();
    assert_eq!(sums.len(), 5);
    let anchors =
        std::fs::read_to_string(common::parity_dir().join("lr_enwiki_anchors.sql.gz.checksum"))
            .unwrap();
    assert_eq!(sums["anchors"], &anchors[..64]);
    assert_eq!(set.stop, Stop::Complete);
}

#[test]
fn sentencepiece_language_and_maximum() {
    let engine = Engine::open(&common::parity_dir(), "enwiki").unwrap();
    // A language written without spaces is tokenized with its SentencePiece model: the
    // full-width letters normalize to `Aardvark`, which is not in the text, so nothing
    // is placed, while the plain spelling is.
    let ja = |text: &str| {
        engine
            .recommend(
                text,
                "Page",
                None,
                None,
                &RecommendOptions {
                    link: LinkOptions {
                        language_code: Some("ja".into()),
                        threshold: 0.0,
                        ..LinkOptions::default()
                    },
                    ..RecommendOptions::default()
                },
            )
            .unwrap()
            .links
    };
    assert!(ja("ＡＡＲＤＶＡＲＫ。").is_empty());
    assert!(!ja("aardvark。").is_empty());
    let a = &articles()[3];
    let set = engine
        .recommend(&a.wikitext, &a.page_title, None, None, &options(0.0, 2))
        .unwrap();
    assert_eq!(set.links.len(), 2);
    assert_eq!(set.stop, Stop::MaxRecommendations);
}

#[test]
fn score_inspection_agrees_with_the_placement() {
    let engine = Engine::open(&common::parity_dir(), "enwiki").unwrap();
    let want = expected("api", "Aardvark");
    let first = &want["links"][0];
    let scores = engine
        .score("Aardvark", first["link_text"].as_str().unwrap(), None)
        .unwrap()
        .unwrap();
    let best = scores.best().unwrap();
    assert_eq!(best.title, first["link_target"].as_str().unwrap());
    assert_eq!(best.probability, first["score"].as_f64().unwrap() as f32);
    assert!(
        engine
            .score("Aardvark", "no such anchor xyzzy", None)
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_stopped_stream_starts_no_page_and_finishes_the_running_ones() {
    let engine = Arc::new(Engine::open(&common::parity_dir(), "enwiki").unwrap());
    let article = &articles()[5];
    let page = Page {
        wikitext: article.wikitext.clone().into(),
        page_title: article.page_title.clone(),
        ..Page::default()
    };
    let long = Duration::from_secs(600);

    // Stopped before anything runs: every page, queued or pushed later, is not started.
    let stream = BatchStream::new(engine.clone(), RecommendOptions::default(), 2).unwrap();
    stream.stop();
    for _ in 0..3 {
        stream.push(page.clone());
    }
    let outcomes = stream.take(long);
    assert_eq!(outcomes.len(), 3);
    assert!(outcomes.iter().all(|o| o.is_none()));
    assert_eq!(stream.pending(), 0);
    assert!(
        stream.take(long).is_empty(),
        "nothing pending returns at once"
    );

    // Stopped while running: what a worker had taken finishes with its real result, the
    // rest is not started, and everything comes back in input order.
    let stream = BatchStream::new(engine.clone(), RecommendOptions::default(), 1).unwrap();
    for _ in 0..4 {
        stream.push(page.clone());
    }
    let first = stream.take(long);
    let taken_before_stop = first.len();
    stream.stop();
    let mut outcomes = first;
    while stream.pending() > 0 {
        outcomes.extend(stream.take(long));
    }
    assert_eq!(outcomes.len(), 4);
    let single = engine
        .recommend(
            &page.wikitext,
            &page.page_title,
            None,
            None,
            &RecommendOptions::default(),
        )
        .unwrap();
    let Some(Ok(got)) = &outcomes[0] else {
        panic!("the first page ran to the end: {:?}", outcomes[0]);
    };
    assert_eq!(got, &single);
    // With one worker, at most one page was running when the stream stopped: it finished,
    // and the pages still queued did not start.
    let started = outcomes
        .iter()
        .take_while(|o| matches!(o, Some(Ok(_))))
        .count();
    assert!(
        (taken_before_stop..=taken_before_stop + 1).contains(&started),
        "{started} of 4 ran, {taken_before_stop} taken before the stop"
    );
    assert!(outcomes[started..].iter().all(|o| o.is_none()));
}
