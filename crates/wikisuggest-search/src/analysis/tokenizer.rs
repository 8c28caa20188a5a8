//! Words out of article text: CirrusSearch's character mappings, Unicode word boundaries,
//! bigrams for scripts written without spaces, lowercasing, elision and English possessives.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use unicode_segmentation::UnicodeSegmentation;

use super::Profile;
use super::filters::casefold;

/// The longest token, in characters: longer runs are cut, as Lucene's tokenizers cut at 255.
const MAX_TOKEN_CHARS: usize = 255;

/// The tokenizer half of a language's analyzer (stop words, folding and stemming follow as
/// filters).
#[derive(Clone)]
pub struct WikiTokenizer {
    profile: Profile,
    mapped: String,
    tokens: Vec<Token>,
}

impl WikiTokenizer {
    pub fn new(profile: Profile) -> Self {
        Self {
            profile,
            mapped: String::new(),
            tokens: Vec::new(),
        }
    }
}

/// CirrusSearch's `word_break_helper` (these become spaces) and `globo_norm` (these become an
/// ASCII apostrophe; `ˈ ˌ` and the Arabic tatweel disappear).
fn premap(c: char) -> Option<char> {
    match c {
        '_' | ':' | '.' | '(' | ')' | '\u{FF0E}' | '\u{FF3F}' | '\u{FF1A}' | '\u{B7}'
        | '\u{202F}' => Some(' '),
        '`' | '\u{B4}' | '\u{2B9}' | '\u{2BB}' | '\u{2BC}' | '\u{2BD}' | '\u{2BE}' | '\u{2BF}'
        | '\u{2CB}' | '\u{55A}' | '\u{5F3}' | '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}'
        | '\u{2035}' | '\u{A78C}' | '\u{FF07}' | '\u{FF40}' => Some('\''),
        '\u{2C8}' | '\u{2CC}' | '\u{640}' => None,
        c => Some(c),
    }
}

/// Characters of scripts written without spaces between words.
fn spaceless(c: char, hangul: bool) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF     // Hiragana, Katakana
        | 0x31F0..=0x31FF   // Katakana phonetic extensions
        | 0xFF66..=0xFF9F   // halfwidth Katakana
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xF900..=0xFAFF   // CJK compatibility ideographs
        | 0x20000..=0x3FFFF // CJK extensions B and later
        | 0x0E00..=0x0E7F   // Thai
        | 0x0E80..=0x0EFF   // Lao
        | 0x1780..=0x17FF   // Khmer
        | 0x1000..=0x109F   // Myanmar
    ) || (hangul && matches!(c as u32, 0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x3130..=0x318F))
}

impl WikiTokenizer {
    fn push(&mut self, text: String, from: usize, to: usize) {
        if text.is_empty() {
            return;
        }
        let position = self.tokens.len();
        if text.chars().nth(MAX_TOKEN_CHARS).is_none() {
            self.tokens.push(token(text, from, to, position));
            return;
        }
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(MAX_TOKEN_CHARS) {
            let position = self.tokens.len();
            self.tokens
                .push(token(piece.iter().collect(), from, to, position));
        }
    }

    /// One word of a script written with spaces.
    fn word(&mut self, word: &str, from: usize) {
        let mut text = String::with_capacity(word.len());
        casefold(word, &mut text);
        let profile = self.profile;
        if profile.possessive && text.ends_with("'s") {
            text.truncate(text.len() - 2);
        }
        if let Some(cut) = text.find('\'') {
            let article = &text[..cut];
            if profile.elisions.contains(&article) {
                text.drain(..=cut);
            }
        }
        self.push(text, from, from + word.len());
    }

    /// A run of characters (grapheme clusters) of spaceless scripts: overlapping bigrams, or
    /// the one character alone.
    fn run(&mut self, units: &[(usize, &str)]) {
        let folded: Vec<(usize, usize, String)> = units
            .iter()
            .map(|(at, unit)| {
                let mut s = String::with_capacity(unit.len());
                casefold(unit, &mut s);
                (*at, at + unit.len(), s)
            })
            .collect();
        match folded.as_slice() {
            [] => {}
            [(from, to, one)] => self.push(one.clone(), *from, *to),
            many => {
                for pair in many.windows(2) {
                    if let [(from, _, a), (_, to, b)] = pair {
                        self.push(format!("{a}{b}"), *from, *to);
                    }
                }
            }
        }
    }

    fn analyse(&mut self, text: &str) {
        self.tokens.clear();
        let mut mapped = std::mem::take(&mut self.mapped);
        mapped.clear();
        mapped.extend(text.chars().filter_map(premap));
        let hangul = self.profile.bigram_hangul;
        let mut run: Vec<(usize, &str)> = Vec::new();
        for (at, segment) in mapped.split_word_bound_indices() {
            let mut chars = segment.chars();
            let first = chars.next();
            if first.is_some_and(|c| spaceless(c, hangul)) {
                // Katakana words come whole: take them apart into characters.
                for (i, g) in segment.grapheme_indices(true) {
                    run.push((at + i, g));
                }
                continue;
            }
            if !run.is_empty() {
                self.run(&run);
                run.clear();
            }
            if segment.chars().any(char::is_alphanumeric) {
                self.word(segment, at);
            }
        }
        if !run.is_empty() {
            self.run(&run);
        }
        self.mapped = mapped;
    }
}

fn token(text: String, from: usize, to: usize, position: usize) -> Token {
    Token {
        offset_from: from,
        offset_to: to,
        position,
        text,
        position_length: 1,
    }
}

/// The analysed tokens, handed out one by one.
pub struct WikiTokenStream<'a> {
    tokens: &'a mut [Token],
    next: usize,
    /// What `token` shows before the first `advance` (tantivy never asks then).
    spare: Token,
}

impl Tokenizer for WikiTokenizer {
    type TokenStream<'a> = WikiTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        self.analyse(text);
        WikiTokenStream {
            tokens: &mut self.tokens,
            next: 0,
            spare: Token::default(),
        }
    }
}

impl TokenStream for WikiTokenStream<'_> {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        match self.next.checked_sub(1) {
            Some(i) => self.tokens.get(i).unwrap_or(&self.spare),
            None => &self.spare,
        }
    }

    fn token_mut(&mut self) -> &mut Token {
        match self.next.checked_sub(1) {
            Some(i) => self.tokens.get_mut(i).unwrap_or(&mut self.spare),
            None => &mut self.spare,
        }
    }
}
