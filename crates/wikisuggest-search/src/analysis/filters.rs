//! ICU's `nfkc_cf` normalisation and folding as far as plain Unicode tables reach, and the
//! stemmer, in the order CirrusSearch applies them.

use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

use super::Profile;

/// Default-ignorable characters `nfkc_cf` removes (soft hyphen, zero-width and bidi marks,
/// word joiners, the byte order mark).
fn ignorable(c: char) -> bool {
    matches!(c as u32, 0xAD | 0x034F | 0x061C | 0x180B..=0x180F | 0x200B..=0x200F
        | 0x202A..=0x202E | 0x2060..=0x206F | 0xFE00..=0xFE0F | 0xFEFF)
}

/// NFKC and lowercasing with case folding's `ß` → `ss` and `ς` → `σ`: ICU's `nfkc_cf` but for
/// the rare characters whose case folding and lowercase differ otherwise.
pub fn casefold(word: &str, out: &mut String) {
    if word.is_ascii() {
        out.extend(word.chars().map(|c| c.to_ascii_lowercase()));
        return;
    }
    for c in word.chars().filter(|c| !ignorable(*c)).nfkc() {
        match c {
            'ß' | 'ẞ' => out.push_str("ss"),
            'ς' => out.push('σ'),
            c => out.extend(c.to_lowercase()),
        }
    }
}

/// Letters whose diacritics ICU folding removes: Latin, Greek, Cyrillic, Armenian, Hebrew,
/// Arabic. (Marks of Indic and other scripts are vowel signs: they stay.)
fn folds_marks(base: char) -> bool {
    matches!(base as u32, 0x0000..=0x058F | 0x0590..=0x06FF | 0x1E00..=0x1FFF)
}

/// Latin letters that decompose to nothing simpler but that folding spells out.
fn latin_special(c: char) -> Option<&'static str> {
    Some(match c {
        'ø' => "o",
        'đ' | 'ð' => "d",
        'ł' | 'ŀ' => "l",
        'ħ' => "h",
        'ı' => "i",
        'æ' => "ae",
        'œ' => "oe",
        'þ' => "th",
        'ŧ' => "t",
        'ƀ' => "b",
        'ĸ' => "q",
        _ => return None,
    })
}

/// ICU folding of a lowercased word: diacritics off, Latin's special letters spelt out.
pub fn fold(word: &str) -> String {
    if word.is_ascii() {
        return word.to_owned();
    }
    let mut out = String::with_capacity(word.len());
    let mut base = ' ';
    for c in word.nfd() {
        if canonical_combining_class(c) != 0 {
            if !folds_marks(base) {
                out.push(c);
            }
            continue;
        }
        base = c;
        match latin_special(c) {
            Some(s) => out.push_str(s),
            None => out.push(c),
        }
    }
    // Keep what is left composed, as ICU's output is.
    if out.is_ascii() {
        out
    } else {
        out.nfc().collect()
    }
}

/// Folding and stemming in the profile's order; tokens left empty are dropped (CirrusSearch's
/// `remove_empty`).
#[derive(Clone)]
pub struct FoldStem {
    profile: Profile,
}

impl FoldStem {
    pub fn new(profile: Profile) -> Self {
        Self { profile }
    }
}

impl TokenFilter for FoldStem {
    type Tokenizer<T: Tokenizer> = FoldStemFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> FoldStemFilter<T> {
        FoldStemFilter {
            profile: self.profile,
            inner: tokenizer,
        }
    }
}

#[derive(Clone)]
pub struct FoldStemFilter<T> {
    profile: Profile,
    inner: T,
}

impl<T: Tokenizer> Tokenizer for FoldStemFilter<T> {
    type TokenStream<'a> = FoldStemStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        FoldStemStream {
            profile: self.profile,
            stemmer: self.profile.stemmer.map(frostem::Stemmer::new),
            tail: self.inner.token_stream(text),
        }
    }
}

pub struct FoldStemStream<T> {
    profile: Profile,
    stemmer: Option<frostem::Stemmer>,
    tail: T,
}

impl<T: TokenStream> FoldStemStream<T> {
    fn fold_in_place(&mut self) {
        if !self.profile.fold {
            return;
        }
        let token = self.tail.token_mut();
        if token.text.is_ascii() {
            return;
        }
        token.text = fold(&token.text);
    }

    fn stem_in_place(&mut self) {
        let Some(stemmer) = &self.stemmer else {
            return;
        };
        let token = self.tail.token_mut();
        // The stem is either new or a prefix of the word.
        let stemmed = match stemmer.stem(&token.text) {
            std::borrow::Cow::Owned(stemmed) => Some(stemmed),
            std::borrow::Cow::Borrowed(stem) if stem.len() != token.text.len() => {
                Some(stem.to_owned())
            }
            std::borrow::Cow::Borrowed(_) => None,
        };
        if let Some(stemmed) = stemmed {
            token.text = stemmed;
        }
    }
}

impl<T: TokenStream> TokenStream for FoldStemStream<T> {
    fn advance(&mut self) -> bool {
        while self.tail.advance() {
            if self.profile.stem_after_fold {
                self.fold_in_place();
                self.stem_in_place();
            } else {
                self.stem_in_place();
                self.fold_in_place();
            }
            if !self.tail.token().text.is_empty() {
                return true;
            }
        }
        false
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}
