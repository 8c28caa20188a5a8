//! Sets of strings kept in one buffer: the pass remembers the mentions it tried and the
//! anchors and targets already linked without a string allocated per entry.

use std::hash::BuildHasher;

use super::HashMap;

/// An insertion-ordered set of strings, each stored in one buffer and followed by a NUL.
///
/// The buffer is itself useful: a string without NUL occurs inside one of the entries
/// exactly when it occurs in the buffer.
#[derive(Default)]
pub(super) struct StrSet {
    /// The entries, each followed by a NUL.
    joined: String,
    /// Where each entry starts in `joined`.
    starts: Vec<u32>,
    /// Per entry: the next entry with the same hash (`u32::MAX`: none).
    next: Vec<u32>,
    /// An entry's hash to the last entry with that hash.
    index: HashMap<u64, u32>,
    hasher: foldhash::fast::RandomState,
}

impl StrSet {
    /// A set sized for about `n` entries.
    pub(super) fn with_capacity(n: usize) -> Self {
        Self {
            joined: String::with_capacity(n * 16),
            starts: Vec::with_capacity(n),
            next: Vec::with_capacity(n),
            index: HashMap::with_capacity_and_hasher(n, Default::default()),
            hasher: Default::default(),
        }
    }

    /// Entry `i`.
    fn entry(&self, i: u32) -> &str {
        let start = self.starts.get(i as usize).map_or(0, |&s| s as usize);
        let end = (self.starts.get(i as usize + 1))
            .map_or(self.joined.len(), |&e| e as usize)
            .saturating_sub(1);
        self.joined.get(start..end).unwrap_or_default()
    }

    /// The entry equal to `s` with hash `hash`, if there is one.
    fn find(&self, s: &str, hash: u64) -> Option<u32> {
        let mut at = self.index.get(&hash).copied()?;
        loop {
            if self.entry(at) == s {
                return Some(at);
            }
            at = self
                .next
                .get(at as usize)
                .copied()
                .filter(|&n| n != u32::MAX)?;
        }
    }

    /// Whether `s` is in the set.
    pub(super) fn contains(&self, s: &str) -> bool {
        self.find(s, self.hasher.hash_one(s)).is_some()
    }

    /// Adds `s`; whether it was new.
    pub(super) fn insert(&mut self, s: &str) -> bool {
        let hash = self.hasher.hash_one(s);
        if self.find(s, hash).is_some() {
            return false;
        }
        let i = self.starts.len() as u32;
        self.starts.push(self.joined.len() as u32);
        self.joined.push_str(s);
        self.joined.push('\0');
        self.next
            .push(self.index.insert(hash, i).unwrap_or(u32::MAX));
        true
    }

    /// The entries, each followed by a NUL.
    pub(super) fn joined(&self) -> &str {
        &self.joined
    }

    /// The entries in insertion order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.starts.len() as u32).map(|i| self.entry(i))
    }

    /// The number of entries.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.starts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::StrSet;

    #[test]
    fn entries_are_kept_once_in_order() {
        let mut set = StrSet::with_capacity(2);
        for s in ["cat", "", "dog", "cat", "é日", "", "do", "a\0b"] {
            set.insert(s);
        }
        assert_eq!(set.len(), 6);
        let entries: Vec<&str> = set.iter().collect();
        assert_eq!(entries, ["cat", "", "dog", "é日", "do", "a\0b"]);
        for s in &entries {
            assert!(set.contains(s), "{s:?}");
        }
        assert!(!set.contains("ca") && !set.contains("dogs") && !set.contains("a"));
        assert_eq!(set.joined(), "cat\0\0dog\0é日\0do\0a\0b\0");
    }
}
