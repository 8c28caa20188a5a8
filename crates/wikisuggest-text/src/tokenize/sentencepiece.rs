//! mwtokenizer's `non_whitespace_word_tokenization`: the language's SentencePiece
//! model splits the text into pieces, each piece has U+2581 turned back into a space
//! and goes through the whitespace tokenizer, and empty tokens are dropped.
//!
//! The model files are mwtokenizer 0.2.0's own (see DATA-ATTRIBUTION), compiled into
//! the library; each is parsed once per process, on first use.

use std::borrow::Cow;
use std::sync::OnceLock;

use wikisuggest_sentencepiece::{Model, SPACE_SYMBOL};

use super::abbreviations::Abbreviations;
use super::symbols::is_punctuation;
use super::word::token_ends;
use crate::error::TextError;
use crate::pyunicode::is_space;

macro_rules! model_file {
    ($name:literal) => {
        (
            $name,
            include_bytes!(concat!("../../assets/spcmodels/", $name)).as_slice(),
        )
    };
}

/// The model files, by name.
const MODEL_FILES: [(&str, &[u8]); 12] = [
    model_file!("nws_bpe_gan.model"),
    model_file!("nws_bpe_ja.model"),
    model_file!("nws_bpe_km.model"),
    model_file!("nws_bpe_lo.model"),
    model_file!("nws_bpe_my.model"),
    model_file!("nws_bpe_th.model"),
    model_file!("nws_bpe_wuu.model"),
    model_file!("nws_bpe_zh.model"),
    model_file!("nws_bpe_zh_classical.model"),
    model_file!("nws_bpe_zh_min_nan.model"),
    model_file!("nws_bpe_zh_yue.model"),
    model_file!("spc_bpe_tib.model"),
];

/// mwtokenizer's `NON_WHITESPACE_LANGUAGES_SPC_MAPPING`: language key → model file.
const LANGUAGE_MODELS: [(&str, &str); 13] = [
    ("bo", "spc_bpe_tib.model"),
    ("dz", "spc_bpe_tib.model"),
    ("gan", "nws_bpe_gan.model"),
    ("ja", "nws_bpe_ja.model"),
    ("km", "nws_bpe_km.model"),
    ("lo", "nws_bpe_lo.model"),
    ("my", "nws_bpe_my.model"),
    ("th", "nws_bpe_th.model"),
    ("wuu", "nws_bpe_wuu.model"),
    ("zh", "nws_bpe_zh.model"),
    ("zh_min_nan", "nws_bpe_zh_min_nan.model"),
    ("zh_classical", "nws_bpe_zh_classical.model"),
    ("zh_yue", "nws_bpe_zh_yue.model"),
];

static LOADED: [OnceLock<Result<Model, String>>; 12] = [const { OnceLock::new() }; 12];

/// The model of a language key, parsed on first use.
///
/// `Ok(None)` for a language tokenized on whitespace.
pub(super) fn model_for(language_key: &str) -> Result<Option<&'static Model>, TextError> {
    let Some(&(_, file)) = LANGUAGE_MODELS.iter().find(|(key, _)| *key == language_key) else {
        return Ok(None);
    };
    let Some(index) = MODEL_FILES.iter().position(|(name, _)| *name == file) else {
        return Ok(None);
    };
    let (Some(slot), Some(&(_, bytes))) = (LOADED.get(index), MODEL_FILES.get(index)) else {
        return Ok(None);
    };
    slot.get_or_init(|| Model::from_bytes(bytes).map_err(|e| e.to_string()))
        .as_ref()
        .map(Some)
        .map_err(|reason| TextError::TokenizerModel {
            model: file,
            reason: reason.clone(),
        })
}

/// The word tokens of `text` joined, with where each ends in the joined text appended to
/// `ends`: no token is empty, and tokens are the model's normalized text, so they need
/// not occur in `text`.
pub(super) fn joined_words(
    model: &Model,
    text: &str,
    abbreviations: &Abbreviations,
    ends: &mut Vec<usize>,
) -> String {
    let mut joined = String::with_capacity(text.len() + 1);
    let mut push = |joined: &mut String, token: &str| {
        if !token.is_empty() {
            joined.push_str(token);
            ends.push(joined.len());
        }
    };
    let mut piece_ends = Vec::new();
    model.for_each_piece(text, |piece| {
        // Most pieces are `▁`s followed by letters: the whitespace tokenizer makes one
        // token of the spaces and one of the rest, so the general path is skipped.
        let rest = piece.trim_start_matches(SPACE_SYMBOL);
        if !rest
            .chars()
            .any(|c| c == '\u{2581}' || is_space(c) || is_punctuation(c))
        {
            let spaces = (piece.len() - rest.len()) / SPACE_SYMBOL.len();
            push(&mut joined, &" ".repeat(spaces));
            push(&mut joined, rest);
            return;
        }
        let piece = match piece.contains(SPACE_SYMBOL) {
            true => Cow::Owned(piece.replace(SPACE_SYMBOL, " ")),
            false => Cow::Borrowed(piece),
        };
        piece_ends.clear();
        token_ends(&piece, abbreviations, &mut piece_ends);
        let mut start = 0;
        for &end in &piece_ends {
            push(&mut joined, piece.get(start..end).unwrap_or_default());
            start = end;
        }
    });
    joined
}

/// The word tokens of `text`: no token is empty, and tokens are the model's
/// normalized text, so they need not occur in `text`.
pub(super) fn tokenize_words_with_model<'a>(
    model: &Model,
    text: &'a str,
    abbreviations: &Abbreviations,
) -> Vec<Cow<'a, str>> {
    // The tokens are collected joined, with their end offsets, and only then cut into
    // strings: when the normalization kept the text as it was, they are slices of it.
    let mut ends = Vec::new();
    let joined = joined_words(model, text, abbreviations, &mut ends);
    // With the dummy prefix, an unchanged text joins to " " + text.
    let offset = match joined.strip_prefix(' ') {
        Some(after) if after == text => Some(1),
        _ if joined == text => Some(0),
        _ => None,
    };
    let mut tokens = Vec::with_capacity(ends.len());
    let mut start = 0;
    for end in ends {
        let token = match offset {
            Some(offset) if start >= offset => {
                text.get(start - offset..end - offset).map(Cow::Borrowed)
            }
            // The dummy prefix's space, the usual first token.
            _ if end - start == 1 && joined.get(start..end) == Some(" ") => {
                Some(Cow::Borrowed(" "))
            }
            _ => None,
        };
        tokens.push(
            token.unwrap_or_else(|| Cow::Owned(joined.get(start..end).unwrap_or("").to_owned())),
        );
        start = end;
    }
    tokens
}
