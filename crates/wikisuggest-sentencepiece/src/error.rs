//! Errors of this crate.

/// A model file that cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The bytes are not a well-formed `ModelProto` message.
    #[error("malformed SentencePiece model: {0}")]
    Malformed(&'static str),
    /// The model is well formed but uses a feature this implementation does not
    /// reproduce (for example a unigram model).
    #[error("unsupported SentencePiece model: {0}")]
    Unsupported(String),
    /// The model's content contradicts itself (duplicate pieces, no unknown piece, ...),
    /// which the library refuses as well.
    #[error("invalid SentencePiece model: {0}")]
    Invalid(String),
}
