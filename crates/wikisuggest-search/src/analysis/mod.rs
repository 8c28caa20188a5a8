//! The `text` field's analyzer per wiki language, as close to CirrusSearch's as tantivy's
//! building blocks allow.
//!
//! CirrusSearch analyses `text` with the ICU tokenizer, then (per language) elision or English
//! possessives, ICU's `nfkc_cf` normalizer, the language's stop words, its stemmer and ICU
//! folding (English stems after folding, every other language before). Here:
//!
//! * words are cut at Unicode's word boundaries (UAX #29, what the ICU tokenizer does for
//!   scripts written with spaces), after CirrusSearch's `word_break_helper` turned `_ : . ( )`
//!   into spaces and `globo_norm` unified apostrophes ([`tokenizer`]);
//! * scripts written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar) become overlapping
//!   bigrams of their characters, as Lucene's CJK bigram filter does, where ICU uses dictionaries;
//! * `nfkc_cf` is NFKC plus lowercasing (with `ß` → `ss`, final sigma → sigma) and the removal
//!   of default-ignorable characters; folding drops the diacritics of Latin, Greek, Cyrillic,
//!   Arabic and Hebrew letters and spells out Latin's special letters ([`filters`]);
//! * stop words are tantivy's lists (Lucene's for English, Snowball's for the others), for the
//!   languages that have one; stemmers are Snowball's, where CirrusSearch has a stemmer and
//!   Snowball one for the language.
//!
//! `docs/search.md` lists, per language, what this leaves different from CirrusSearch.

mod filters;
mod tokenizer;

use tantivy::tokenizer::{Language as StopLanguage, StopWordFilter, TextAnalyzer, TokenStream};

use crate::error::{Result, invalid};
pub use filters::FoldStem;
pub use tokenizer::WikiTokenizer;

/// Where a language's analyzer departs from the common chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The wiki language code the profile was chosen for.
    pub language: &'static str,
    /// Stop words removed after lowercasing (tantivy's list for that language).
    pub stop_words: Option<StopLanguage>,
    /// The Snowball stemmer standing in for CirrusSearch's.
    pub stemmer: Option<frostem::Algorithm>,
    /// English stems after folding (`kstem` follows `icu_folding`); every other language before.
    pub stem_after_fold: bool,
    /// ICU folding applies (every language CirrusSearch configures, not its bare default).
    pub fold: bool,
    /// Leading articles cut at an apostrophe (`l'homme` → `homme`).
    pub elisions: &'static [&'static str],
    /// A trailing `'s` dropped (English possessives).
    pub possessive: bool,
    /// Hangul is bigrammed too (Japanese's `cjk_bigram`), not kept as words.
    pub bigram_hangul: bool,
}

const FRENCH_ELISIONS: &[&str] = &[
    "l", "m", "t", "qu", "n", "s", "j", "d", "c", "jusqu", "quoiqu", "lorsqu", "puisqu",
];
const ITALIAN_ELISIONS: &[&str] = &[
    "c", "l", "all", "dall", "dell", "nell", "sull", "coll", "pell", "gl", "agl", "dagl", "degl",
    "negl", "sugl", "un", "m", "t", "s", "v", "d",
];
const CATALAN_ELISIONS: &[&str] = &["d", "l", "m", "n", "s", "t"];
const IRISH_ELISIONS: &[&str] = &["d", "m", "b"];

const BASE: Profile = Profile {
    language: "",
    stop_words: None,
    stemmer: None,
    stem_after_fold: false,
    fold: true,
    elisions: &[],
    possessive: false,
    bigram_hangul: false,
};

/// The profile of a wiki language code (`en`, `sw`, `pt-br`...). Codes without a language of
/// their own in CirrusSearch get its default: normalisation without folding.
pub fn profile(language: &str) -> Result<Profile> {
    use StopLanguage as S;
    use frostem::Algorithm as A;
    let code = language.trim().to_ascii_lowercase();
    if code.is_empty()
        || code.len() > 32
        || !code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(invalid(
            "language",
            format!("not a wiki language code: {language:?}"),
        ));
    }
    let with = |stop: Option<S>, stem: Option<A>| Profile {
        stop_words: stop,
        stemmer: stem,
        ..BASE
    };
    let p = match code.as_str() {
        "en" | "simple" => Profile {
            stop_words: Some(S::English),
            stemmer: Some(A::English),
            stem_after_fold: true,
            possessive: true,
            ..BASE
        },
        "fr" => Profile {
            elisions: FRENCH_ELISIONS,
            ..with(Some(S::French), Some(A::French))
        },
        "it" => Profile {
            elisions: ITALIAN_ELISIONS,
            ..with(Some(S::Italian), Some(A::Italian))
        },
        "ca" => Profile {
            elisions: CATALAN_ELISIONS,
            ..with(None, Some(A::Catalan))
        },
        "ga" => Profile {
            elisions: IRISH_ELISIONS,
            ..with(None, Some(A::Irish))
        },
        "da" => with(Some(S::Danish), Some(A::Danish)),
        "de" => with(Some(S::German), Some(A::German)),
        "es" => with(Some(S::Spanish), Some(A::Spanish)),
        "fi" => with(Some(S::Finnish), Some(A::Finnish)),
        "hu" => with(Some(S::Hungarian), Some(A::Hungarian)),
        "nl" => with(Some(S::Dutch), Some(A::Dutch)),
        "no" | "nb" => with(Some(S::Norwegian), Some(A::Norwegian)),
        "pt" | "pt-br" => with(Some(S::Portuguese), Some(A::Portuguese)),
        "ru" => with(Some(S::Russian), Some(A::Russian)),
        "sv" => with(Some(S::Swedish), Some(A::Swedish)),
        "ar" => with(None, Some(A::Arabic)),
        "cs" => with(None, Some(A::Czech)),
        "el" => with(None, Some(A::Greek)),
        "eo" => with(None, Some(A::Esperanto)),
        "et" => with(None, Some(A::Estonian)),
        "eu" => with(None, Some(A::Basque)),
        "hi" => with(None, Some(A::Hindi)),
        "hy" => with(None, Some(A::Armenian)),
        "id" => with(None, Some(A::Indonesian)),
        "lt" => with(None, Some(A::Lithuanian)),
        "ro" => with(None, Some(A::Romanian)),
        "sh" => with(None, Some(A::Serbian)),
        "tr" => with(None, Some(A::Turkish)),
        "ja" => Profile {
            bigram_hangul: true,
            ..BASE
        },
        // Folding without a stemmer or a stop list here (CirrusSearch may have either).
        "as" | "az" | "bg" | "bn" | "ckb" | "crh" | "fa" | "gag" | "gl" | "gu" | "he" | "ig"
        | "kk" | "km" | "kn" | "ko" | "lv" | "ml" | "mr" | "mwl" | "my" | "ne" | "or" | "pl"
        | "si" | "sk" | "sl" | "sq" | "ta" | "te" | "th" | "tl" | "tt" | "uk" | "uz" | "vi"
        | "zh" => BASE,
        _ => Profile {
            fold: false,
            ..BASE
        },
    };
    Ok(Profile {
        language: profile_code(&code),
        ..p
    })
}

/// The code as a `'static` string: the known codes by name, every other one as `default`.
fn profile_code(code: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "en", "simple", "fr", "it", "ca", "ga", "da", "de", "es", "fi", "hu", "nl", "no", "nb",
        "pt", "pt-br", "ru", "sv", "ar", "cs", "el", "eo", "et", "eu", "hi", "hy", "id", "lt",
        "ro", "sh", "tr", "ja", "as", "az", "bg", "bn", "ckb", "crh", "fa", "gag", "gl", "gu",
        "he", "ig", "kk", "km", "kn", "ko", "lv", "ml", "mr", "mwl", "my", "ne", "or", "pl", "si",
        "sk", "sl", "sq", "ta", "te", "th", "tl", "tt", "uk", "uz", "vi", "zh",
    ];
    KNOWN
        .iter()
        .find(|k| **k == code)
        .copied()
        .unwrap_or("default")
}

/// The tantivy analyzer of a profile: the index's `text` field and the seeds' term counts both
/// go through it, so they cannot disagree.
pub fn text_analyzer(profile: Profile) -> TextAnalyzer {
    let builder = TextAnalyzer::builder(WikiTokenizer::new(profile)).dynamic();
    let builder = match profile.stop_words.and_then(StopWordFilter::new) {
        Some(stop) => builder.filter_dynamic(stop),
        None => builder,
    };
    builder.filter_dynamic(FoldStem::new(profile)).build()
}

/// The terms of `text` in order, as the index stores them.
pub fn terms(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

#[cfg(test)]
mod tests;
