//! The hash index over a string table.
//!
//! Linear probing over `slots` u64 entries: `0` is empty, otherwise
//! `(flag << 63) | (tag << 32) | payload` with `tag` the low 31 bits of the key's hash, so
//! most non-matching slots are skipped without reading the key. The payload is the key's
//! index + 1, or [`PREFIX_ONLY`]. The start slot is `hash * slots >> 64` (no power-of-two
//! size needed). The load factor is kept at or below [`MAX_LOAD`]; probing is bounded by
//! the table size, so even a corrupt table cannot loop.
//!
//! The anchor index also holds the *word prefixes* of the anchors: every `key[..i]` with
//! `key[i] == b' '`. An anchor that is also a word prefix carries the flag bit; a prefix
//! that is no anchor gets an entry of its own with payload [`PREFIX_ONLY`] (no key bytes
//! are stored for it, so a tag match counts as a prefix: a false "prefix" only costs a
//! look-up that could have been skipped, never an answer). A look-up of the n-grams from
//! one text position stops at the first gram followed by a space that is no word prefix:
//! no longer gram from there can be an anchor. Most positions then cost one or two probes
//! instead of five, which is what keeps an enwiki-size index (whose probes all miss the
//! caches) close to the cost of a small one.
//!
//! The hash function is part of the file format: FNV-1a (64-bit) with a final avalanche
//! mix, defined here, never a std hasher whose output may change between releases.

/// Maximum fill ratio (numerator/denominator).
const MAX_LOAD: (u64, u64) = (7, 10);

/// Largest probe bound a file may declare. At 70 % load the longest displacement of a
/// real index is a few dozen slots; the writer refuses an index that would need more.
pub(crate) const MAX_PROBE_BOUND: u32 = 4096;

/// The format's string hash.
pub(crate) fn hash(key: &[u8]) -> u64 {
    let mut h = Hasher::new();
    h.write(key);
    h.finish()
}

/// [`hash`] fed in pieces: the hash of a key that extends another continues from the
/// shorter key's state instead of starting over.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hasher(u64);

impl Default for Hasher {
    fn default() -> Self {
        Self::new()
    }
}

impl Hasher {
    pub(crate) fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    /// FNV-1a over `bytes`.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// [`Self::write`] of the first `len` bytes of `window` (`len` at most 8), in eight
    /// steps whatever `len` is: a loop over a word's bytes ends at a different count for
    /// each word, an exit the CPU mispredicts; eight steps each kept or not do not branch.
    #[inline]
    pub(crate) fn write_window(&mut self, window: [u8; 8], len: usize) {
        for (i, &b) in window.iter().enumerate() {
            let next = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
            self.0 = std::hint::select_unpredictable(i < len, next, self.0);
        }
    }

    /// The hash of everything written so far.
    pub(crate) fn finish(self) -> u64 {
        // Murmur3 finalizer: spreads FNV's weak high bits.
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// Number of slots for `n` keys.
pub(crate) fn slot_count(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let n = n as u64;
    (n * MAX_LOAD.1).div_ceil(MAX_LOAD.0).max(n + 1) as usize
}

/// The first slot probed for `h`.
#[inline]
pub(crate) fn start_slot(h: u64, slots: usize) -> usize {
    ((u128::from(h) * slots as u128) >> 64) as usize
}

/// Payload of an anchor-index entry for a word prefix that is not itself an anchor.
pub(crate) const PREFIX_ONLY: u32 = u32::MAX;

/// The flag bit of an entry whose key is a word prefix of some anchor.
const PREFIX_FLAG: u64 = 1 << 63;

/// The slot entry with hash `h`, `payload` (index + 1 or [`PREFIX_ONLY`]) and prefix flag.
#[inline]
pub(crate) fn entry(h: u64, payload: u32, prefix: bool) -> u64 {
    (if prefix { PREFIX_FLAG } else { 0 }) | (u64::from(tag(h)) << 32) | u64::from(payload)
}

/// One decoded non-empty slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    /// The tag of the key's hash.
    pub tag: u32,
    /// Index + 1 of the key, or [`PREFIX_ONLY`].
    pub payload: u32,
    /// Whether the key is a word prefix of some anchor.
    pub prefix: bool,
}

impl Slot {
    /// The key's index in its string table, unless it is a prefix-only entry.
    #[inline]
    pub(crate) fn index(self) -> Option<u32> {
        (self.payload != PREFIX_ONLY)
            .then(|| self.payload.checked_sub(1))
            .flatten()
    }
}

/// Decodes entry `e` (`None` for an empty slot).
#[inline]
pub(crate) fn split_entry(e: u64) -> Option<Slot> {
    (e != 0).then_some(Slot {
        tag: ((e >> 32) as u32) & 0x7fff_ffff,
        payload: e as u32,
        prefix: e & PREFIX_FLAG != 0,
    })
}

/// The tag stored for hash `h` (31 bits).
#[inline]
pub(crate) fn tag(h: u64) -> u32 {
    (h as u32) & 0x7fff_ffff
}

/// An index being filled, with the longest displacement so far.
pub(crate) struct Builder {
    table: Vec<u64>,
    bound: usize,
}

impl Builder {
    /// An empty index for `n` keys.
    pub(crate) fn new(n: usize) -> Self {
        Self {
            table: vec![0u64; slot_count(n)],
            bound: 0,
        }
    }

    /// Inserts a key (which must not be present yet) with hash `h`.
    pub(crate) fn insert(&mut self, h: u64, payload: u32, prefix: bool) {
        let slots = self.table.len();
        let mut s = start_slot(h, slots);
        let mut displacement = 0;
        while self.table[s] != 0 {
            s += 1;
            displacement += 1;
            if s == slots {
                s = 0;
            }
        }
        self.bound = self.bound.max(displacement);
        self.table[s] = entry(h, payload, prefix);
    }

    /// Sets the prefix flag of the key with hash `h` for which `is_key(index)` holds;
    /// false if there is none.
    pub(crate) fn mark_prefix(&mut self, h: u64, is_key: impl Fn(u32) -> bool) -> bool {
        let slots = self.table.len();
        let mut s = start_slot(h, slots);
        for _ in 0..=self.bound {
            let Some(slot) = split_entry(self.table[s]) else {
                return false;
            };
            if slot.tag == tag(h) && slot.index().is_some_and(&is_key) {
                self.table[s] |= PREFIX_FLAG;
                return true;
            }
            s += 1;
            if s == slots {
                s = 0;
            }
        }
        false
    }

    /// Adds the word prefix with hash `h`: flags the anchor for which `is_key(index)` holds
    /// (the anchor equal to the prefix), or, if there is none, inserts a prefix-only entry.
    pub(crate) fn add_prefix(&mut self, h: u64, is_key: impl Fn(u32) -> bool) {
        if !self.mark_prefix(h, is_key) {
            self.insert(h, PREFIX_ONLY, true);
        }
    }

    /// The slot array and its probe bound: the longest distance from a key's start slot
    /// to the slot holding it.
    pub(crate) fn finish(self) -> (Vec<u64>, u32) {
        (self.table, u32::try_from(self.bound).unwrap_or(u32::MAX))
    }
}

/// Builds the index of `n` keys given by `key(i)`.
pub(crate) fn build<'a>(n: usize, key: impl Fn(usize) -> &'a [u8]) -> (Vec<u64>, u32) {
    let mut b = Builder::new(n);
    for i in 0..n {
        b.insert(hash(key(i)), i as u32 + 1, false);
    }
    b.finish()
}

/// The word prefixes of `keys` (every `key[..i]` with `key[i] == b' '`), sorted and
/// without duplicates.
pub(crate) fn word_prefixes<'a>(keys: impl Iterator<Item = &'a [u8]>) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    for key in keys {
        out.extend(
            key.iter()
                .enumerate()
                .filter(|&(_, &b)| b == b' ')
                .map(|(i, _)| &key[..i]),
        );
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Builds the anchor index: `n` anchors given by `key(i)` and their word prefixes (see
/// the module docs). Returns the slots, the probe bound and the number of distinct word
/// prefixes (the index is sized for `n` plus that many keys).
pub(crate) fn build_anchor_index<'a>(
    n: usize,
    key: impl Fn(usize) -> &'a [u8],
) -> (Vec<u64>, u32, usize) {
    let prefixes = word_prefixes((0..n).map(&key));
    let mut b = Builder::new(n + prefixes.len());
    for i in 0..n {
        b.insert(hash(key(i)), i as u32 + 1, false);
    }
    for p in &prefixes {
        b.add_prefix(hash(p), |i| key(i as usize) == *p);
    }
    let (table, bound) = b.finish();
    (table, bound, prefixes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_hashes_like_its_bytes() {
        let window = *b"\xe9 york!!";
        for len in 0..=8 {
            let (mut a, mut b) = (Hasher(12345), Hasher(12345));
            a.write(&window[..len]);
            b.write_window(window, len);
            assert_eq!(a.finish(), b.finish(), "{len}");
        }
    }

    #[test]
    fn word_prefixes_are_cut_before_each_space() {
        let keys: [&[u8]; 3] = [b"new york city", b"new", b"new york"];
        let got = word_prefixes(keys.into_iter());
        assert_eq!(got, vec![&b"new"[..], &b"new york"[..]]);
    }

    #[test]
    fn entries_round_trip() {
        let h = 0xdead_beef_f00d_cafe;
        let s = split_entry(entry(h, 7, true)).unwrap();
        assert_eq!((s.tag, s.index(), s.prefix), (tag(h), Some(6), true));
        let s = split_entry(entry(h, PREFIX_ONLY, true)).unwrap();
        assert_eq!(s.index(), None);
        assert_eq!(split_entry(0), None);
    }
}
