//! Robustness of the native format: truncations and bit flips never panic.

// Test support code: failing loudly is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use wikisuggest_engine::published::read_published;
use wikisuggest_engine::{Dataset, Engine, Error, LinkOptions, RecommendOptions, Tables};

fn parity_image() -> Vec<u8> {
    let out = common::temp_dir("native-image");
    let path = wikisuggest_engine::convert(&common::parity_dir(), "enwiki", &out).unwrap();
    std::fs::read(path).unwrap()
}

/// A small image (a slice of the parity data) so that hundreds of mutations stay fast.
fn small_image() -> Vec<u8> {
    use wikisuggest_engine::native::{NativeInput, write_native};
    let data = read_published(&common::parity_dir(), "enwiki").unwrap();
    let mut tables = Tables::default();
    tables.anchors = data.tables.anchors[..400].to_vec();
    tables.redirects = data.tables.redirects[..20].to_vec();
    tables.pageids = data.tables.pageids[..300].to_vec();
    tables.vectors.dim = data.tables.vectors.dim;
    tables.vectors.keys = data.tables.vectors.keys[..300].to_vec();
    tables.vectors.data = data.tables.vectors.data[..300 * data.tables.vectors.dim].to_vec();
    let input =
        NativeInput::from_tables("enwiki", &tables, data.model_json, data.checksums).unwrap();
    let mut out = std::io::Cursor::new(Vec::new());
    write_native(&input, &mut out).unwrap();
    out.into_inner()
}

/// Exercises every accessor; any result is fine, a panic is not.
fn exercise(ds: &Dataset) {
    for a in ["!", "cat", "the", "zzz", ""] {
        let _ = ds.anchor_candidates(a);
    }
    let mut answers = Vec::new();
    if ds
        .has_anchor_prefixes("the cat sat", &[3, 7, 11], &mut answers)
        .is_ok()
    {
        assert_eq!(answers.len(), 3);
    }
    for t in ["Cat", "Exclamation mark", "Aa River", "Nothing"] {
        let _ = ds.redirect(t);
        let _ = ds.page_id(t);
        let _ = ds.vector(t).map(|v| v.map(|v| v.to_vec()));
    }
    let mut n = 0;
    let _ = ds.for_each_anchor(|_, _| {
        n += 1;
        Ok(())
    });
    for i in (0..ds.title_count()).step_by(97) {
        let _ = ds.title_at(i);
    }
    let _ = ds.info();
}

#[test]
fn intact_image_opens_and_verifies() {
    let image = parity_image();
    let ds = Dataset::from_native_bytes(image).unwrap();
    ds.verify().unwrap();
    assert_eq!(
        ds.anchor_candidates("!").unwrap().unwrap()[0].title,
        "Exclamation mark"
    );
}

#[test]
fn truncations_are_typed_errors() {
    let image = small_image();
    let mut rng = common::Rng(0x1234_5678_9abc_def1);
    let mut cuts: Vec<usize> = (0..200).map(|_| rng.below(image.len())).collect();
    cuts.extend([0, 1, 7, 8, 63, 64, 65, image.len() - 1]);
    for cut in cuts {
        match Dataset::from_native_bytes(image[..cut].to_vec()) {
            Err(Error::Corrupt { .. }) => {}
            other => panic!("cut at {cut}: expected a corruption error, got {other:?}"),
        }
    }
    // An extended file is rejected too.
    let mut longer = image.clone();
    longer.push(0);
    assert!(matches!(
        Dataset::from_native_bytes(longer),
        Err(Error::Corrupt { .. })
    ));
}

#[test]
fn bit_flips_never_panic_and_are_detected_by_verify() {
    let image = small_image();
    assert!(
        Dataset::from_native_bytes(image.clone())
            .unwrap()
            .verify()
            .is_ok()
    );
    let mut rng = common::Rng(0x0bad_5eed_dead_beef);
    let mut detected = 0;
    let mut failed_pages = 0;
    // The anchor and candidate sections (table entries 8 to 12), which every pass reads.
    let field = |at: usize| u64::from_le_bytes(image[at..at + 8].try_into().unwrap()) as usize;
    let anchors_from = field(64 + 8 * 24 + 8);
    let anchors_to = field(64 + 12 * 24 + 8) + field(64 + 12 * 24 + 16);
    for round in 0..300 {
        let mut bytes = image.clone();
        // A third of the flips hit the header and section table, a third the anchor
        // sections, the rest anywhere.
        let i = match round % 3 {
            0 => rng.below(512),
            1 => anchors_from + rng.below(anchors_to - anchors_from),
            _ => rng.below(bytes.len()),
        };
        bytes[i] ^= 1 << rng.below(8);
        match Dataset::from_native_bytes(bytes) {
            Err(Error::Corrupt { .. }) | Err(Error::Model(_)) => detected += 1,
            Err(other) => panic!("flip at {i}: unexpected error kind {other:?}"),
            Ok(ds) => {
                exercise(&ds);
                // Past the header area, every flip changes the checksummed body.
                if i >= 512 {
                    assert!(ds.verify().is_err(), "flip at {i} not detected");
                }
                if ds.verify().is_err() {
                    detected += 1;
                }
                // The whole pass over a damaged file: a typed error or a result.
                let page = "The cat sat on the mat. Aa River! ''[[Cat]]'' and the cat.";
                let options = RecommendOptions {
                    link: LinkOptions {
                        threshold: 0.0,
                        max_recommendations: 0,
                        ..LinkOptions::default()
                    },
                    ..RecommendOptions::default()
                };
                match Engine::new(ds).recommend(page, "Page", None, None, &options) {
                    Ok(_) => {}
                    Err(Error::Corrupt { .. } | Error::Model(_)) => failed_pages += 1,
                    Err(other) => panic!("flip at {i}: recommend gave {other:?}"),
                }
            }
        }
    }
    assert!(detected > 250, "only {detected} of 300 flips detected");
    // Look-up errors inside the pass (anchors, candidates, titles) surface as errors.
    assert!(failed_pages > 0, "no damaged file made recommend fail");
}

#[test]
fn garbage_is_rejected() {
    let mut rng = common::Rng(42);
    for len in [0usize, 10, 64, 100, 4096] {
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        assert!(Dataset::from_native_bytes(bytes).is_err());
    }
    let mut header = b"WSLINKDB".to_vec();
    header.extend_from_slice(&4u32.to_le_bytes());
    header.resize(128, 0);
    match Dataset::from_native_bytes(header) {
        Err(e) => assert!(e.to_string().contains("version 4"), "{e}"),
        Ok(_) => panic!("accepted a future version"),
    }
}

/// Prefix look-ups skip the grams after one that no anchor continues (format version 3);
/// their answers must stay those of single look-ups, on texts made of anchors' words.
#[test]
fn prefix_look_ups_answer_like_single_ones_on_word_grams() {
    let ds = Dataset::from_native_bytes(parity_image()).unwrap();
    let mut anchors = Vec::new();
    ds.for_each_anchor(|a, _| {
        anchors.push(a.to_owned());
        Ok(())
    })
    .unwrap();
    let mut rng = common::Rng(17);
    let mut found = 0;
    for (k, anchor) in anchors.iter().enumerate() {
        // The anchor, continued by the words of another (or the start of its own).
        let other = &anchors[rng.below(anchors.len())];
        let text = match k % 3 {
            0 => format!("{anchor} {other}"),
            1 => format!("{other} {anchor}"),
            _ => format!("{anchor} {anchor}"),
        };
        let mut ends: Vec<usize> = text.match_indices(' ').map(|(i, _)| i).collect();
        ends.push(text.len());
        ends.dedup();
        let mut answers = Vec::new();
        ds.has_anchor_prefixes(&text, &ends, &mut answers).unwrap();
        let single: Vec<bool> = ends
            .iter()
            .map(|&end| ds.has_anchor(&text[..end]).unwrap())
            .collect();
        assert_eq!(answers, single, "{text:?}");
        found += answers.iter().filter(|&&a| a).count();
    }
    assert!(found >= anchors.len() / 3, "only {found} anchors found");
}
