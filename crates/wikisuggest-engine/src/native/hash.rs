//! The hash index over a string table.
//!
//! Linear probing over `slots` u64 entries: `0` is empty, otherwise
//! `(tag << 32) | (index + 1)` with `tag` the low 32 bits of the key's hash, so most
//! non-matching slots are skipped without reading the key. The start slot is
//! `hash * slots >> 64` (no power-of-two size needed). The load factor is kept at or
//! below [`MAX_LOAD`]; probing is bounded by the table size, so even a corrupt table
//! cannot loop.
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

/// The slot entry for key `index` with hash `h`.
#[inline]
pub(crate) fn entry(h: u64, index: u32) -> u64 {
    (h << 32) | (u64::from(index) + 1)
}

/// Tag (high half) and index (low half − 1) of a non-empty entry.
#[inline]
pub(crate) fn split_entry(e: u64) -> (u32, Option<u32>) {
    ((e >> 32) as u32, ((e & 0xffff_ffff) as u32).checked_sub(1))
}

/// The tag stored for hash `h`.
#[inline]
pub(crate) fn tag(h: u64) -> u32 {
    h as u32
}

/// Builds the slot array for `n` keys given by `key(i)`, with its probe bound: the
/// longest distance from a key's start slot to the slot holding it.
pub(crate) fn build<'a>(n: usize, key: impl Fn(usize) -> &'a [u8]) -> (Vec<u64>, u32) {
    let slots = slot_count(n);
    let mut table = vec![0u64; slots];
    let mut bound = 0usize;
    for i in 0..n {
        let h = hash(key(i));
        let mut s = start_slot(h, slots);
        let mut displacement = 0;
        while table[s] != 0 {
            s += 1;
            displacement += 1;
            if s == slots {
                s = 0;
            }
        }
        bound = bound.max(displacement);
        table[s] = entry(h, i as u32);
    }
    (table, u32::try_from(bound).unwrap_or(u32::MAX))
}
