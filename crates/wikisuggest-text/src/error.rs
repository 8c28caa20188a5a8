//! Errors of this crate.

/// Errors returned by the text layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TextError {
    /// The tokenizer cannot handle this language. Every language code production
    /// accepts is tokenized (the SentencePiece languages included), so the
    /// tokenizer never returns this; callers that map it keep working.
    #[error("language {language:?} is not supported")]
    UnsupportedLanguage {
        /// The language code as given.
        language: String,
    },
    /// A built-in SentencePiece model failed to load (a damaged build).
    #[error("the SentencePiece model {model} cannot be loaded: {reason}")]
    TokenizerModel {
        /// The model file name.
        model: &'static str,
        /// Why it was refused.
        reason: String,
    },
    /// The link markup for a target is not a valid Python `re` replacement
    /// template (a backslash escape such as `\d` in the title).
    #[error("cannot insert a link to {target:?}: {reason}")]
    BadReplacement {
        /// The link target.
        target: String,
        /// What the template parser rejected.
        reason: String,
    },
    /// Parsing hit a [`crate::wikitext::ParseLimits`] bound.
    #[error("the page is too complex to parse within the given limits")]
    ParseLimitExceeded,
    /// Reading the page's markup needs more work than allowed: the request's work limit
    /// (see [`crate::pipeline::Request::max_work`]), or the bound on the existing links'
    /// labels that keeps deeply nested links (`[[a|[[a|…]]]]`) linear in the page.
    #[error("the page needs more than {limit} units of work to read its {stage}")]
    WorkLimitExceeded {
        /// What was being read: `markup`, `existing links` or `existing links' labels`.
        stage: &'static str,
        /// The limit that was reached.
        limit: u64,
    },
    /// A placed mention could not be found again in its original text node.
    #[error("Unable to find match for {mention:?} in {text:?}")]
    MentionNotFound {
        /// The lowercase mention key.
        mention: String,
        /// The lowercased node text searched.
        text: String,
    },
}
