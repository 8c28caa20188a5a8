//! Sentence and word tokenization compatible with mwtokenizer 0.2.0 for
//! languages written with spaces.

mod abbreviations;
mod sentence;
mod symbols;
mod word;

pub use abbreviations::Abbreviations;

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

/// Whether `c` is in mwtokenizer's `ALL_UNICODE_PUNCTUATION`.
pub use symbols::is_punctuation;
/// Whether `c` is in mwtokenizer's `GLOBAL_SENTENCE_TERMINATORS`.
pub use symbols::is_sentence_terminator;

/// The tokenizer of one language: `mwtokenizer.Tokenizer(language_code)`
/// with `use_abbreviation=True` everywhere.
#[derive(Debug, Clone)]
pub struct Tokenizer {
    abbreviations: Abbreviations,
}

impl Tokenizer {
    /// Builds the tokenizer for `language_code` (e.g. `en`, `bat_smg`).
    ///
    /// Abbreviations come from the key `language_code + "wiki"`; an unknown
    /// key yields an empty set, as upstream.
    ///
    /// # Errors
    /// [`TextError::UnsupportedLanguage`] for the SentencePiece languages
    /// ([`SENTENCEPIECE_LANGUAGES`]), whose word tokenization is not
    /// implemented.
    pub fn new(language_code: &str) -> Result<Self, TextError> {
        if SENTENCEPIECE_LANGUAGES.contains(&language_code) {
            return Err(TextError::UnsupportedLanguage {
                language: language_code.to_owned(),
            });
        }
        Ok(Self {
            abbreviations: Abbreviations::for_language(language_code),
        })
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
    /// [`Tokenizer::sentences`] per line.
    pub fn node_sentences<'a>(&self, text: &'a str) -> Vec<&'a str> {
        text.split('\n')
            .filter(|line| !line.is_empty())
            .flat_map(|line| self.sentences(line))
            .collect()
    }

    /// `Tokenizer.word_tokenize(text)`: tokens are contiguous slices of `text`
    /// and may be empty strings (see the crate documentation of the algorithm).
    pub fn words<'a>(&self, text: &'a str) -> Vec<&'a str> {
        word::tokenize_words(text, &self.abbreviations)
    }
}
