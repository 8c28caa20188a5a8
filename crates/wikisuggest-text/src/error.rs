//! Errors of this crate.

/// Errors returned by the text layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TextError {
    /// The language is written without spaces; mwtokenizer tokenizes it with a
    /// SentencePiece model, which this crate does not implement yet.
    #[error("language {language:?} needs SentencePiece word tokenization, which is not supported")]
    UnsupportedLanguage {
        /// The language code as given.
        language: String,
    },
}
