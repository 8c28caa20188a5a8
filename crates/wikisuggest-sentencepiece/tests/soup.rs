//! Random text through every model: encoding never fails and the pieces always spell
//! the normalized text (each character of it in exactly one piece).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::Path;

use wikisuggest_sentencepiece::{Model, ModelError};

/// A random character of the planes text holds (ASCII, Latin, punctuation, kana, CJK, Thai
/// and Tibetan, full-width forms, the supplementary planes); seeded, so failures reproduce.
fn random_char(rng: &mut fastrand::Rng) -> char {
    let ranges: [(u32, u32); 8] = [
        (0x00, 0x7f),
        (0x80, 0x2ff),
        (0x2000, 0x206f),
        (0x3000, 0x30ff),
        (0x4e00, 0x9fff),
        (0x0e00, 0x0fff),
        (0xff00, 0xffef),
        (0x1_0000, 0x10_ffff),
    ];
    let (lo, hi) = ranges[rng.usize(..ranges.len())];
    char::from_u32(rng.u32(lo..=hi)).unwrap_or('\u{2581}')
}

fn models() -> Vec<(String, Model)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wikisuggest-text/assets/spcmodels");
    let mut out: Vec<(String, Model)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let model = Model::from_bytes(&std::fs::read(&p).unwrap()).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), model)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn pieces_spell_the_normalized_text() {
    let models = models();
    assert_eq!(models.len(), 12);
    let mut rng = fastrand::Rng::with_seed(0x5eed_1234_abcd_ef01);
    for round in 0..300 {
        let len = rng.usize(..60);
        let text: String = (0..len).map(|_| random_char(&mut rng)).collect();
        let (name, model) = &models[round % models.len()];
        let pieces = model.encode_as_pieces(&text);
        assert!(pieces.iter().all(|p| !p.is_empty()), "{name}: {text:?}");
        assert_eq!(pieces.concat(), model.normalize(&text), "{name}: {text:?}");
    }
}

#[test]
fn damaged_models_are_errors_not_panics() {
    let (_, bytes) = {
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../wikisuggest-text/assets/spcmodels");
        let path = dir.join("nws_bpe_ja.model");
        ((), std::fs::read(path).unwrap())
    };
    // Truncations and byte flips at spread-out positions: each either loads (a flip in
    // a score or a piece's text) or gives a typed error; encoding what loads still works.
    let mut rng = fastrand::Rng::with_seed(42);
    for _ in 0..60 {
        let mut damaged = bytes.clone();
        if rng.bool() {
            damaged.truncate(rng.usize(..bytes.len()));
        } else {
            damaged[rng.usize(..bytes.len())] ^= 1 << rng.u8(..8);
        }
        if let Ok(model) = Model::from_bytes(&damaged) {
            model.encode_as_pieces("東京は日本の首都です。 ＡＢＣ");
        }
    }
    assert!(matches!(
        Model::from_bytes(b""),
        Err(ModelError::Invalid(_)) | Err(ModelError::Unsupported(_))
    ));
    assert!(matches!(
        Model::from_bytes(&[0xff; 8]),
        Err(ModelError::Malformed(_))
    ));
}
