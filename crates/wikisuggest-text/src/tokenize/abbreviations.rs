//! Per-wiki abbreviation sets of mwtokenizer 0.2.0 (`dict_abbr_filtered.json`,
//! MIT), embedded in the compact form written by `tools/gen_abbreviations.py`.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

static DATA: &str = include_str!("../../assets/abbreviations.tsv");

/// Words are looked up for every punctuation run that ends a word, so the set answers most
/// of them from its longest length and the last bytes of its words, before hashing.
#[derive(Debug, Default)]
struct Set {
    words: std::collections::HashSet<&'static str, foldhash::fast::RandomState>,
    /// Length in bytes of the longest word.
    longest: usize,
    /// Bit `b` is set when a word ends in byte `b`.
    last_bytes: [u64; 4],
}

impl Set {
    fn new(words: impl Iterator<Item = &'static str>) -> Self {
        let mut set = Self::default();
        for word in words {
            set.longest = set.longest.max(word.len());
            if let Some(&last) = word.as_bytes().last()
                && let Some(bits) = set.last_bytes.get_mut(usize::from(last >> 6))
            {
                *bits |= 1 << (last & 63);
            }
            set.words.insert(word);
        }
        set
    }

    fn contains(&self, word: &str) -> bool {
        let Some(&last) = word.as_bytes().last() else {
            return self.words.contains(word);
        };
        let ends_like_one = self
            .last_bytes
            .get(usize::from(last >> 6))
            .is_some_and(|bits| (bits >> (last & 63)) & 1 == 1);
        word.len() <= self.longest && ends_like_one && self.words.contains(word)
    }
}

/// Per wiki key: the words of its line (`None`: the line has no tab) and its set, once
/// built.
type Sets = HashMap<&'static str, (Option<&'static str>, OnceLock<Arc<Set>>)>;

/// Every wiki's line of the data, indexed once per process on first use; a wiki's set is
/// built from its line when a tokenizer first asks for it (a process uses one or a few
/// of the 321).
fn all_sets() -> &'static Sets {
    static SETS: OnceLock<Sets> = OnceLock::new();
    SETS.get_or_init(|| {
        DATA.lines()
            .map(|line| match line.split_once('\t') {
                Some((key, words)) => (key, (Some(words), OnceLock::new())),
                None => (line, (None, OnceLock::new())),
            })
            .collect()
    })
}

/// The set stored under `key`, if there is one.
fn set(key: &str) -> Option<Arc<Set>> {
    let (words, set) = all_sets().get(key)?;
    let set = set.get_or_init(|| Arc::new(Set::new(words.iter().flat_map(|w| w.split('\t')))));
    Some(Arc::clone(set))
}

/// The abbreviation set of one wiki plus mwtokenizer's single-letter rule.
#[derive(Debug, Clone, Default)]
pub struct Abbreviations {
    words: Arc<Set>,
}

impl Abbreviations {
    /// The set stored under `language_code + "wiki"`; empty if there is none.
    pub fn for_language(language_code: &str) -> Self {
        let key = format!("{language_code}wiki");
        Self {
            words: set(&key).unwrap_or_default(),
        }
    }

    /// Number of listed abbreviations (without the single-letter rule).
    pub fn len(&self) -> usize {
        self.words.words.len()
    }

    /// Whether the listed set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.words.is_empty()
    }

    /// mwtokenizer's `is_abbreviation`: listed (exact, case-sensitive), or two
    /// code points where the first is a letter and the second is `.`.
    pub fn is_abbreviation(&self, word: &str) -> bool {
        if self.words.contains(word) {
            return true;
        }
        if word.as_bytes().last() != Some(&b'.') {
            return false;
        }
        let mut chars = word.chars();
        matches!(
            (chars.next(), chars.next(), chars.next()),
            (Some(first), Some('.'), None) if crate::pyunicode::is_alpha(first)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_upstream() {
        assert_eq!(Abbreviations::for_language("en").len(), 1735);
        assert_eq!(Abbreviations::for_language("de").len(), 1615);
        assert_eq!(Abbreviations::for_language("cs").len(), 781);
        assert_eq!(Abbreviations::for_language("az").len(), 434);
        assert_eq!(Abbreviations::for_language("simple").len(), 295);
        assert!(!Abbreviations::for_language("bat_smg").is_empty());
        assert!(Abbreviations::for_language("be-tarask").is_empty());
        assert_eq!(DATA.lines().count(), 321);
    }

    #[test]
    fn abbreviation_rule() {
        let en = Abbreviations::for_language("en");
        assert!(en.is_abbreviation("Mr.") && en.is_abbreviation("U.S."));
        assert!(en.is_abbreviation("x.") && en.is_abbreviation("Ж."));
        assert!(
            !en.is_abbreviation("1.") && !en.is_abbreviation("qqq.") && !en.is_abbreviation(".")
        );
        assert!(!Abbreviations::for_language("xx").is_abbreviation("Mr."));
    }
}
