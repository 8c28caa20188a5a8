//! The longest-prefix matcher over a model's user-defined symbols: such a symbol is
//! never normalized and never split or merged by BPE.

use foldhash::HashSet;

#[derive(Debug, Default)]
pub(crate) struct PrefixMatcher {
    symbols: HashSet<Box<str>>,
    /// The distinct byte lengths of `symbols`, longest first.
    lengths: Vec<usize>,
}

impl PrefixMatcher {
    pub(crate) fn new<'a>(symbols: impl IntoIterator<Item = &'a str>) -> Self {
        let symbols: HashSet<Box<str>> = symbols.into_iter().map(Box::from).collect();
        let mut lengths: Vec<usize> = symbols.iter().map(|s| s.len()).collect();
        lengths.sort_unstable_by(|a, b| b.cmp(a));
        lengths.dedup();
        Self { symbols, lengths }
    }

    /// The byte length of the longest symbol that `text` starts with.
    pub(crate) fn longest_match(&self, text: &str) -> Option<usize> {
        self.lengths.iter().copied().find(|&len| {
            text.get(..len)
                .is_some_and(|head| self.symbols.contains(head))
        })
    }
}
