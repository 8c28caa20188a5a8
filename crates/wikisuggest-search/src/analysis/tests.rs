#![allow(clippy::unwrap_used)]

use super::*;

fn analyse(language: &str, text: &str) -> Vec<String> {
    terms(&mut text_analyzer(profile(language).unwrap()), text)
}

#[test]
fn english_lowercases_drops_stop_words_possessives_and_stems_after_folding() {
    assert_eq!(
        analyse("en", "The Moon's orbits are elliptical."),
        vec!["moon", "orbit", "ellipt"]
    );
    // Curly and modifier apostrophes are CirrusSearch's plain one first.
    assert_eq!(analyse("en", "Earth’s"), vec!["earth"]);
    // Folding comes before the stemmer: "cafés" stems as "cafes".
    assert_eq!(analyse("en", "Cafés"), analyse("en", "cafes"));
    assert_eq!(analyse("simple", "Running"), vec!["run"]);
}

#[test]
fn word_break_helper_splits_what_unicode_keeps_together() {
    // `.` and `:` join letters under UAX #29; CirrusSearch makes them spaces first.
    assert_eq!(
        analyse("zz", "e.g. foo:bar snake_case f(x)"),
        vec!["e", "g", "foo", "bar", "snake", "case", "f", "x"]
    );
    assert_eq!(
        analyse("zz", "3.14 well-known don't"),
        vec!["3", "14", "well", "known", "don't"]
    );
}

#[test]
fn folding_removes_diacritics_and_spells_out_special_letters() {
    assert_eq!(analyse("sv", "Ærøskøbing"), vec!["aeroskobing"]);
    assert_eq!(analyse("pl", "Łódź"), vec!["lodz"]);
    assert_eq!(analyse("ru", "Ёлка"), analyse("ru", "елка"));
    assert_eq!(analyse("el", "Καλημέρα"), analyse("el", "καλημερα"));
    // Vowel signs of Indic scripts are letters of the word, not accents.
    assert_eq!(analyse("ta", "தமிழ்"), vec!["தமிழ்"]);
    // NFKC, case folding and default-ignorables: ligatures, full width, ß, soft hyphens.
    assert_eq!(analyse("de", "Straße"), analyse("de", "strasse"));
    assert_eq!(
        analyse("zz", "ﬁle Ｗｉｋｉ ex\u{AD}ample"),
        vec!["file", "wiki", "example"]
    );
    // CirrusSearch's default analyzer does not fold.
    assert_eq!(analyse("zz", "Café"), vec!["café"]);
}

#[test]
fn elision_cuts_articles_before_an_apostrophe() {
    assert_eq!(analyse("fr", "l'homme"), analyse("fr", "homme"));
    assert_eq!(analyse("it", "dell'arte"), analyse("it", "arte"));
    assert_eq!(analyse("ca", "l'home"), analyse("ca", "home"));
    // Not a listed article: kept whole.
    assert_eq!(analyse("fr", "aujourd'hui"), vec!["aujourd'hui"]);
    assert_eq!(analyse("en", "l'homme"), vec!["l'homm"]);
}

#[test]
fn scripts_without_spaces_become_bigrams() {
    assert_eq!(analyse("ja", "東京都"), vec!["東京", "京都"]);
    assert_eq!(analyse("zh", "月"), vec!["月"]);
    // Punctuation and other scripts end a run.
    assert_eq!(
        analyse("zh", "月球、地球 moon"),
        vec!["月球", "地球", "moon"]
    );
    // Katakana words are taken apart like the rest; half width is made full width.
    assert_eq!(analyse("ja", "ｶﾀｶﾅ"), analyse("ja", "カタカナ"));
    assert_eq!(analyse("ja", "カタカナ"), vec!["カタ", "タカ", "カナ"]);
    // Thai: bigrams of characters with their combining vowels and tones.
    let thai = analyse("th", "ภาษาไทย");
    assert!(thai.len() >= 3, "{thai:?}");
    assert!(thai.iter().all(|t| t.chars().count() >= 2));
    // Korean is written with spaces: words stay whole, except under Japanese's bigrams.
    assert_eq!(analyse("ko", "한국어 위키"), vec!["한국어", "위키"]);
    assert_eq!(analyse("ja", "한국어"), vec!["한국", "국어"]);
}

#[test]
fn stemmers_follow_the_language() {
    assert_eq!(analyse("fr", "chevaux"), analyse("fr", "cheval"));
    assert_eq!(analyse("es", "gatos"), analyse("es", "gato"));
    assert_eq!(analyse("de", "Häuser"), analyse("de", "hauser"));
    assert_eq!(analyse("id", "makanan"), analyse("id", "makan"));
    // Stop words are removed where a list exists.
    assert!(analyse("fr", "le la les").is_empty());
    assert_eq!(analyse("sw", "na ya wa"), vec!["na", "ya", "wa"]);
}

#[test]
fn very_long_tokens_are_cut_and_nothing_is_empty() {
    let long = "a".repeat(600);
    let t = analyse("zz", &long);
    assert_eq!(
        t.iter().map(|s| s.chars().count()).collect::<Vec<_>>(),
        vec![255, 255, 90]
    );
    assert!(analyse("en", "  ... !!! ").is_empty());
    assert!(analyse("en", "").is_empty());
    assert!(analyse("en", "\u{640}\u{2C8}").is_empty());
}

#[test]
fn language_codes_are_checked() {
    assert!(profile("").is_err());
    assert!(profile("en; rm -rf").is_err());
    assert_eq!(profile("EN").unwrap().language, "en");
    assert_eq!(profile("pt-br").unwrap().language, "pt-br");
    assert_eq!(profile("xyz").unwrap().language, "default");
    assert!(!profile("xyz").unwrap().fold);
}
