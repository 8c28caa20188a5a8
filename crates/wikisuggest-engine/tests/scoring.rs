//! Features and model evaluation against reference outputs of the pinned Python
//! libraries (made by tests/fixtures_builder/make_model_fixtures.py).

// Test support code: failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::sync::Arc;

use wikisuggest_engine::jaro::jaro;
use wikisuggest_engine::kurtosis::padded_kurtosis;
use wikisuggest_engine::{
    Candidate, Dataset, Error, LinkModel, NUM_FEATURES, RustLowercase, Scorer, SdotKernel,
};

fn read_f64(path: &Path) -> Vec<f64> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn read_f32(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn load_model(dir: &Path, name: &str) -> LinkModel {
    let path = if name == "parity" {
        common::parity_dir().join("enwiki.linkmodel.json")
    } else {
        dir.join(format!("{name}.model.json"))
    };
    LinkModel::from_json(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn predictions_are_bit_exact() {
    for dir in common::fixture_dirs() {
        let flat = read_f64(&dir.join("rows.f64"));
        // Upstream passes float64 rows; XGBoost rounds them to float32.
        let rows: Vec<[f32; NUM_FEATURES]> = flat
            .chunks_exact(NUM_FEATURES)
            .map(|r| std::array::from_fn(|i| r[i] as f32))
            .collect();
        assert!(rows.len() >= 500);
        assert!(rows.iter().any(|r| r.iter().any(|v| v.is_nan())));
        for name in ["numerical", "categorical", "parity"] {
            let model = load_model(&dir, name);
            let expected = read_f32(&dir.join(format!("{name}.proba.f32")));
            assert_eq!(expected.len(), rows.len());
            let got = model.predict_batch(&rows);
            let compact = LinkModel::from_bytes(&model.to_bytes()).unwrap();
            // (Compared as bytes: categorical nodes hold NaN thresholds.)
            assert!(compact.to_bytes() == model.to_bytes());
            let mut mismatches = 0;
            for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                if g.to_bits() != e.to_bits() {
                    if mismatches < 5 {
                        eprintln!("{name} row {i} {:?}: got {g:e}, expected {e:e}", rows[i]);
                    }
                    mismatches += 1;
                }
                assert_eq!(compact.predict(&rows[i]).to_bits(), g.to_bits());
            }
            assert_eq!(
                mismatches,
                0,
                "{name}: {mismatches} of {} rows differ ({})",
                rows.len(),
                dir.display()
            );
        }
    }
}

#[test]
fn early_stopping_limits_the_trees() {
    let dir = common::small_fixtures();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let best = manifest["best_iteration"]["numerical"].as_u64().unwrap() as usize;
    let model = load_model(&dir, "numerical");
    assert_eq!(model.num_trees(), best + 1);
    // Without the attribute, all stored trees are used.
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("numerical.model.json")).unwrap()).unwrap();
    let stored = json["learner"]["gradient_booster"]["model"]["trees"]
        .as_array()
        .unwrap()
        .len();
    json["learner"]["attributes"]
        .as_object_mut()
        .unwrap()
        .remove("best_iteration");
    let all = LinkModel::from_json(&serde_json::to_vec(&json).unwrap()).unwrap();
    assert_eq!(all.num_trees(), stored);
    assert!(stored > best + 1);
}

/// A change to a model document.
type Edit = Box<dyn FnOnce(&mut serde_json::Value)>;

fn with_parity_model(edit: impl FnOnce(&mut serde_json::Value)) -> Result<LinkModel, Error> {
    let mut json: serde_json::Value = serde_json::from_slice(
        &std::fs::read(common::parity_dir().join("enwiki.linkmodel.json")).unwrap(),
    )
    .unwrap();
    edit(&mut json);
    LinkModel::from_json(&serde_json::to_vec(&json).unwrap())
}

#[test]
fn other_model_kinds_are_refused() {
    assert!(with_parity_model(|_| {}).is_ok());
    let cases: Vec<(&str, Edit)> = vec![
        (
            "objective",
            Box::new(|j| j["learner"]["objective"]["name"] = "reg:squarederror".into()),
        ),
        (
            "logitraw",
            Box::new(|j| j["learner"]["objective"]["name"] = "binary:logitraw".into()),
        ),
        (
            "gblinear",
            Box::new(|j| j["learner"]["gradient_booster"]["name"] = "gblinear".into()),
        ),
        (
            "dart",
            Box::new(|j| j["learner"]["gradient_booster"]["name"] = "dart".into()),
        ),
        (
            "features",
            Box::new(|j| j["learner"]["learner_model_param"]["num_feature"] = "6".into()),
        ),
        (
            "classes",
            Box::new(|j| j["learner"]["learner_model_param"]["num_class"] = "3".into()),
        ),
        (
            "base_score",
            Box::new(|j| j["learner"]["learner_model_param"]["base_score"] = "1E0".into()),
        ),
        (
            "best_iteration",
            Box::new(|j| j["learner"]["attributes"]["best_iteration"] = "100".into()),
        ),
        (
            "child",
            Box::new(|j| {
                j["learner"]["gradient_booster"]["model"]["trees"][0]["left_children"][0] =
                    100000.into()
            }),
        ),
        (
            "cycle",
            Box::new(|j| {
                j["learner"]["gradient_booster"]["model"]["trees"][0]["left_children"][1] = 0.into()
            }),
        ),
        (
            "feature",
            Box::new(|j| {
                j["learner"]["gradient_booster"]["model"]["trees"][0]["split_indices"][0] = 7.into()
            }),
        ),
        (
            "trees",
            Box::new(|j| {
                j["learner"]["gradient_booster"]["model"]["gbtree_model_param"]["num_trees"] =
                    "99".into()
            }),
        ),
    ];
    for (name, edit) in cases {
        match with_parity_model(edit) {
            Err(Error::Model(msg)) => assert!(!msg.is_empty()),
            other => panic!("{name}: expected a model error, got {other:?}"),
        }
    }
    assert!(matches!(LinkModel::from_json(b"{"), Err(Error::Model(_))));
    assert!(matches!(
        LinkModel::from_bytes(b"XGBM"),
        Err(Error::Model(_))
    ));
}

#[test]
fn jaro_matches_python_levenshtein() {
    for dir in common::fixture_dirs() {
        let cases = jsonl(&dir.join("jaro.jsonl"));
        assert!(cases.len() >= 1000);
        let non_ascii = cases
            .iter()
            .filter(|c| !c[0].as_str().unwrap().is_ascii())
            .count();
        assert!(non_ascii > 100);
        // Every disagreement is listed, not just the first.
        let mismatches: Vec<String> = cases
            .iter()
            .filter_map(|c| {
                let (a, b) = (c[0].as_str().unwrap(), c[1].as_str().unwrap());
                let expected = f64::from_bits(c[2].as_u64().unwrap());
                let got = jaro(a, b);
                (got.to_bits() != expected.to_bits())
                    .then(|| format!("jaro({a:?}, {b:?}) = {got}, expected {expected}"))
            })
            .collect();
        assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    }
}

#[test]
fn kurtosis_matches_scipy_as_float32() {
    for dir in common::fixture_dirs() {
        for c in jsonl(&dir.join("kurtosis.jsonl")) {
            let counts: Vec<u32> = c[0]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u32)
                .collect();
            let expected = f64::from_bits(c[1].as_u64().unwrap());
            let got = padded_kurtosis(&counts);
            if expected.is_nan() {
                assert!(got.is_nan(), "{counts:?}");
            } else {
                // XGBoost sees float32; the float64 may differ from numpy's pairwise sum
                // in the last bits.
                assert_eq!(got as f32, expected as f32, "{counts:?}");
                assert!((got - expected).abs() <= 1e-9 * expected.abs().max(1.0));
            }
        }
    }
}

#[test]
fn cosine_matches_numpy_for_one_openblas_kernel() {
    // Which kernel numpy's OpenBLAS used depends on the CPU that made the fixtures;
    // one of the orders must reproduce every case exactly.
    for dir in common::fixture_dirs() {
        let cases = jsonl(&dir.join("cosine.jsonl"));
        let bits = |v: &serde_json::Value| -> Vec<f32> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| f32::from_bits(x.as_u64().unwrap() as u32))
                .collect()
        };
        let mut matched = Vec::new();
        for kernel in SdotKernel::ALL {
            let ok = cases
                .iter()
                .filter(|c| {
                    let expected = f32::from_bits(c[2].as_u64().unwrap() as u32);
                    kernel.cosine(&bits(&c[0]), &bits(&c[1])).to_bits() == expected.to_bits()
                })
                .count();
            eprintln!("{kernel:?}: {ok} of {} cosines exact", cases.len());
            if ok == cases.len() {
                matched.push(kernel);
            }
        }
        assert!(
            !matched.is_empty(),
            "no sdot order reproduces numpy ({})",
            dir.display()
        );
    }
}

/// End to end on the real data: the score of every link in the production engine's
/// exhaustive outputs is the best candidate's probability for its mention. Checked for
/// mentions whose token count is unambiguous (lowercase ASCII words and spaces).
#[test]
fn parity_link_scores_are_reproduced() {
    let root = common::repo_root().join("tests/data/parity");
    let ds = Dataset::open(&common::parity_dir(), "enwiki").unwrap();
    let scorer = Scorer::new(Arc::new(RustLowercase));
    let manifest = std::fs::read_to_string(root.join("articles/manifest.tsv")).unwrap();
    let (mut checked, mut total) = (0, 0);
    for line in manifest.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (file, page) = (cols[0], cols[1]);
        let name = Path::new(file).file_stem().unwrap().to_string_lossy();
        let expected: serde_json::Value = serde_json::from_slice(
            &std::fs::read(root.join(format!("expected/exhaustive/enwiki/{name}.json"))).unwrap(),
        )
        .unwrap();
        for link in expected["links"].as_array().unwrap() {
            total += 1;
            let text = link["link_text"].as_str().unwrap().to_lowercase();
            let simple = !text.is_empty()
                && text
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b' ')
                && !text.contains("  ")
                && !text.starts_with(' ')
                && !text.ends_with(' ');
            if !simple {
                continue;
            }
            let ngram = text.split(' ').count() as u32;
            let scores = scorer.score(&ds, page, &text, ngram).unwrap().unwrap();
            let best = scores.best().unwrap();
            let score = link["score"].as_f64().unwrap() as f32;
            assert_eq!(
                best.title,
                link["link_target"].as_str().unwrap(),
                "{page}: {text:?}"
            );
            assert_eq!(
                best.probability.to_bits(),
                score.to_bits(),
                "{page}: {text:?} {:?}",
                best.features
            );
            checked += 1;
        }
    }
    eprintln!("checked {checked} of {total} expected links");
    assert!(checked > 1000, "only {checked} links checked");
}

#[test]
fn corrupt_compact_models_never_panic() {
    let dir = common::small_fixtures();
    let rows: Vec<[f32; NUM_FEATURES]> = read_f64(&dir.join("rows.f64"))
        .chunks_exact(NUM_FEATURES)
        .take(64)
        .map(|r| std::array::from_fn(|i| r[i] as f32))
        .collect();
    let mut rng = common::Rng(0xfeed_beef);
    for name in ["categorical", "numerical"] {
        let bytes = load_model(&dir, name).to_bytes();
        let mut accepted = 0;
        for _ in 0..3000 {
            let mut b = bytes.clone();
            let i = rng.below(b.len());
            b[i] ^= 1 << rng.below(8);
            if rng.below(10) == 0 {
                b.truncate(rng.below(b.len()));
            }
            if let Ok(m) = LinkModel::from_bytes(&b) {
                accepted += 1;
                std::hint::black_box(m.predict_batch(&rows));
            }
        }
        // Flips of thresholds and leaf values are valid models; structural ones are not.
        assert!(accepted > 0 && accepted < 3000, "{name}: {accepted}");
    }
}

/// A candidate read from the dataset finds its vector by its title's index; the same
/// candidates made from their titles alone (looked up by title) score bit for bit alike.
#[test]
fn candidates_read_by_index_score_as_by_title() {
    let root = common::repo_root().join("tests/data/parity");
    let ds = Dataset::open(&common::parity_dir(), "enwiki").unwrap();
    let scorer = Scorer::new(Arc::new(RustLowercase));
    let manifest = std::fs::read_to_string(root.join("articles/manifest.tsv")).unwrap();
    let page = manifest
        .lines()
        .skip(1)
        .filter_map(|line| line.split('\t').nth(1))
        .find(|title| ds.vector(title).unwrap().is_some())
        .unwrap();
    let (mut compared, mut with_vectors) = (0, 0);
    ds.for_each_anchor(|anchor, read| {
        if compared >= 3000 {
            return Ok(());
        }
        let by_title: Vec<Candidate<'_>> = read
            .iter()
            .map(|c| Candidate::new(c.title, c.count))
            .collect();
        let a = scorer.score_candidates(&ds, page, anchor, 1, read)?;
        let b = scorer.score_candidates(&ds, page, anchor, 1, &by_title)?;
        assert_eq!(a.candidates.len(), b.candidates.len(), "{anchor}");
        for (x, y) in a.candidates.iter().zip(&b.candidates) {
            assert_eq!(x.title, y.title, "{anchor}");
            assert_eq!(
                x.features.w2v.to_bits(),
                y.features.w2v.to_bits(),
                "{anchor}"
            );
            assert_eq!(x.probability.to_bits(), y.probability.to_bits(), "{anchor}");
            with_vectors += usize::from(x.features.w2v != 0.0);
        }
        compared += 1;
        Ok(())
    })
    .unwrap();
    assert!(
        with_vectors > 100,
        "only {with_vectors} candidates had vectors"
    );
}
