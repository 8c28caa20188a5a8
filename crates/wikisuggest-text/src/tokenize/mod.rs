//! Sentence and word tokenization compatible with mwtokenizer 0.2.0: rule-based
//! on whitespace and punctuation, or with the language's SentencePiece model for
//! the languages written without spaces.

mod abbreviations;
mod sentence;
mod sentencepiece;
mod symbols;
mod word;

use std::borrow::Cow;

pub use abbreviations::Abbreviations;
use wikisuggest_sentencepiece::Model;

use crate::error::TextError;

/// Language codes that mwtokenizer routes to a SentencePiece model
/// (`NON_WHITESPACE_LANGUAGES_SPC_MAPPING`; underscored forms only).
pub const SENTENCEPIECE_LANGUAGES: [&str; 13] = [
    "bo",
    "dz",
    "gan",
    "ja",
    "km",
    "lo",
    "my",
    "th",
    "wuu",
    "zh",
    "zh_min_nan",
    "zh_classical",
    "zh_yue",
];

/// The production key of a language code: the domain spellings of the SentencePiece
/// languages (`zh-yue`, `zh-min-nan`, `zh-classical`) become the underscored keys
/// production uses for those wikis (`zh_yuewiki`, ...). Every other code is used as
/// given, as mwtokenizer uses it (so `be-tarask` keeps finding no abbreviation set).
pub fn language_key(language_code: &str) -> &str {
    match language_code {
        "zh-yue" => "zh_yue",
        "zh-min-nan" => "zh_min_nan",
        "zh-classical" => "zh_classical",
        other => other,
    }
}

/// Whether `c` is in mwtokenizer's `ALL_UNICODE_PUNCTUATION`.
pub use symbols::is_punctuation;
/// Whether `c` is in mwtokenizer's `GLOBAL_SENTENCE_TERMINATORS`.
pub use symbols::is_sentence_terminator;

/// The tokenizer of one language: `mwtokenizer.Tokenizer(language_code)`
/// with `use_abbreviation=True` everywhere.
#[derive(Debug, Clone)]
pub struct MwTokenizer {
    abbreviations: Abbreviations,
    /// The SentencePiece model of a language written without spaces.
    model: Option<&'static Model>,
}

impl MwTokenizer {
    /// Builds the tokenizer for `language_code` (e.g. `en`, `bat_smg`, `ja`,
    /// `zh-yue`), after mapping it with [`language_key`].
    ///
    /// Abbreviations come from the key `language_key + "wiki"`; an unknown key
    /// yields an empty set, as upstream. The [`SENTENCEPIECE_LANGUAGES`] get their
    /// SentencePiece model.
    ///
    /// # Errors
    /// [`TextError::TokenizerModel`] if the language's built-in model cannot be
    /// parsed (a damaged build; the models are checked by this crate's tests).
    pub fn new(language_code: &str) -> Result<Self, TextError> {
        let key = language_key(language_code);
        Ok(Self {
            abbreviations: Abbreviations::for_language(key),
            model: sentencepiece::model_for(key)?,
        })
    }

    /// Whether words are split by the language's SentencePiece model.
    pub fn uses_sentencepiece(&self) -> bool {
        self.model.is_some()
    }

    /// The abbreviation set in use.
    pub fn abbreviations(&self) -> &Abbreviations {
        &self.abbreviations
    }

    /// `Tokenizer.sentence_tokenize(line)`: the sentences of one line, each a
    /// contiguous slice of `line` keeping its trailing whitespace.
    pub fn sentences<'a>(&self, line: &'a str) -> Vec<&'a str> {
        sentence::split_sentences(line, &self.abbreviations)
    }

    /// Sentences of a text node as the engine iterates them: split on `\n`,
    /// skip empty lines (whitespace-only lines are kept), then
    /// [`MwTokenizer::sentences`] per line.
    pub fn node_sentences<'a>(&self, text: &'a str) -> Vec<&'a str> {
        let mut ranges = Vec::new();
        self.node_sentence_ranges(text, &mut ranges);
        ranges
            .into_iter()
            .map(|(a, b)| text.get(a..b).unwrap_or_default())
            .collect()
    }

    /// [`MwTokenizer::node_sentences`] as byte ranges `(start, end)` of `text`, appended to
    /// `out`: a caller tokenizing many texts reuses one buffer.
    pub fn node_sentence_ranges(&self, text: &str, out: &mut Vec<(usize, usize)>) {
        let mut start = 0;
        for line in text.split('\n') {
            if !line.is_empty() {
                sentence::sentence_ranges(line, &self.abbreviations, start, out);
            }
            start += line.len() + 1;
        }
    }

    /// [`MwTokenizer::words`] joined into one text, with where each token ends in it
    /// (appended to `ends`): the n-grams of a sentence are then slices of one text.
    ///
    /// On whitespace languages the tokens cover `text` exactly, so the joined text is
    /// `text` itself and nothing is copied.
    pub fn joined_words<'a>(&self, text: &'a str, ends: &mut Vec<usize>) -> Cow<'a, str> {
        match self.model {
            Some(model) => Cow::Owned(sentencepiece::joined_words(
                model,
                text,
                &self.abbreviations,
                ends,
            )),
            None => {
                word::token_ends(text, &self.abbreviations, ends);
                Cow::Borrowed(text)
            }
        }
    }

    /// `Tokenizer.word_tokenize(text)`.
    ///
    /// On whitespace languages the tokens are contiguous slices of `text` and may
    /// be empty strings (see the crate documentation of the algorithm). With a
    /// SentencePiece model they are owned, never empty, and hold the model's
    /// normalized text (NFKC-like), so they need not occur in `text`.
    pub fn words<'a>(&self, text: &'a str) -> Vec<Cow<'a, str>> {
        match self.model {
            Some(model) => {
                sentencepiece::tokenize_words_with_model(model, text, &self.abbreviations)
            }
            None => word::tokenize_words(text, &self.abbreviations)
                .into_iter()
                .map(Cow::Borrowed)
                .collect(),
        }
    }
}
