//! Per-wiki abbreviation sets of mwtokenizer 0.2.0 (`dict_abbr_filtered.json`,
//! MIT), embedded in the compact form written by `tools/gen_abbreviations.py`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

static DATA: &str = include_str!("../../assets/abbreviations.tsv");

type Set = Arc<HashSet<&'static str>>;

/// Every wiki's set, indexed once per process on first use.
fn all_sets() -> &'static HashMap<&'static str, Set> {
    static SETS: OnceLock<HashMap<&'static str, Set>> = OnceLock::new();
    SETS.get_or_init(|| {
        DATA.lines()
            .filter_map(|line| {
                let mut fields = line.split('\t');
                let key = fields.next()?;
                Some((key, Arc::new(fields.collect())))
            })
            .collect()
    })
}

/// The abbreviation set of one wiki plus mwtokenizer's single-letter rule.
#[derive(Debug, Clone, Default)]
pub struct Abbreviations {
    words: Set,
}

impl Abbreviations {
    /// The set stored under `language_code + "wiki"`; empty if there is none.
    pub fn for_language(language_code: &str) -> Self {
        let key = format!("{language_code}wiki");
        Self {
            words: all_sets().get(key.as_str()).cloned().unwrap_or_default(),
        }
    }

    /// Number of listed abbreviations (without the single-letter rule).
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether the listed set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// mwtokenizer's `is_abbreviation`: listed (exact, case-sensitive), or two
    /// code points where the first is a letter and the second is `.`.
    pub fn is_abbreviation(&self, word: &str) -> bool {
        if self.words.contains(word) {
            return true;
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
