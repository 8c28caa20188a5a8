//! One pass over a page's bytes that both markup ports read instead of the bytes: where the
//! markup characters are, and where code points start.
//!
//! Every construct either port recognises starts or ends at one of the bytes
//! `{}[]<>|=&'#*;:/-!` or a line break, all ASCII, so the stretches between two of them can
//! only ever be text: a port steps from one marker to the next with a bit scan instead of
//! reading each byte. The second bit set marks UTF-8 continuation bytes, so that a stretch's
//! length in code points (the unit of every offset the ports report) is a population count.
//! The third marks the few markers the wikitextparser port's search starts from
//! ([`CANDIDATE_BYTES`]), so that it files them without looking at the others.
//!
//! The bit sets are found 32 bytes at a time (AVX2, where the processor has it) or 8 bytes
//! at a time otherwise; the two ways are tested against each other.

use std::borrow::Cow;
use std::ops::Range;

/// Bytes that may start or end markup (NUL ends the text and is never lexed).
pub(crate) const MARKER_BYTES: &[u8; 18] = b"{}[]<>|=&'#*;:/-!\n";

/// The markers the wikitextparser port's search starts from: where a link, parameter or
/// template may close or a template open, and where a tag may open or close.
pub(crate) const CANDIDATE_BYTES: &[u8; 5] = b"]}{<>";

/// `bytes` by table.
const fn byte_table(bytes: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    table
}

/// [`MARKER_BYTES`] by table.
const IS_MARKER: [bool; 256] = byte_table(MARKER_BYTES);

/// [`CANDIDATE_BYTES`] by table.
const IS_CANDIDATE: [bool; 256] = byte_table(CANDIDATE_BYTES);

/// Whether `b` is one of [`MARKER_BYTES`].
#[inline]
pub(crate) fn is_marker_byte(b: u8) -> bool {
    IS_MARKER[usize::from(b)]
}

/// The bytes of a page up to its first NUL (where both ports' reading ends), with their
/// markers, continuation bytes and candidates as bit sets (bit `i % 64` of word `i / 64` for byte `i`).
#[derive(Debug, Clone)]
pub(crate) struct Lexed<'a> {
    text: &'a str,
    markers: Cow<'a, [u64]>,
    continuations: Cow<'a, [u64]>,
    candidates: Cow<'a, [u64]>,
    /// No continuation byte at all: every byte is a code point.
    ascii: bool,
}

impl<'a> Lexed<'a> {
    /// Lexes `page` up to its first NUL.
    pub(crate) fn new(page: &'a str) -> Self {
        let end = memchr::memchr(0, page.as_bytes()).unwrap_or(page.len());
        // A NUL is ASCII: the text before it ends on a character boundary.
        Self::whole(page.get(..end).unwrap_or_default())
    }

    /// Lexes all of `text`, NULs included.
    pub(crate) fn whole(text: &'a str) -> Self {
        let BitSets {
            markers,
            continuations,
            candidates,
        } = bit_sets(text.as_bytes());
        let ascii = continuations.iter().all(|&w| w == 0);
        Self {
            text,
            markers: Cow::Owned(markers),
            continuations: Cow::Owned(continuations),
            candidates: Cow::Owned(candidates),
            ascii,
        }
    }

    /// Keeps the bit sets for a later [`Lexed::with_text`] over the same text.
    pub(crate) fn into_bits(self) -> LexedBits {
        LexedBits {
            markers: self.markers.into_owned(),
            continuations: self.continuations.into_owned(),
            candidates: self.candidates.into_owned(),
            ascii: self.ascii,
            len: self.text.len(),
        }
    }

    /// The lexing `bits` kept of `page` (the page they were made from).
    pub(crate) fn with_text<'b>(page: &'b str, bits: &'b LexedBits) -> Lexed<'b> {
        Lexed {
            text: page.get(..bits.len).unwrap_or(page),
            markers: Cow::Borrowed(&bits.markers),
            continuations: Cow::Borrowed(&bits.continuations),
            candidates: Cow::Borrowed(&bits.candidates),
            ascii: bits.ascii,
        }
    }

    /// The candidates ([`CANDIDATE_BYTES`]) at or after `from`, in order.
    pub(crate) fn candidates_from(&self, from: usize) -> impl Iterator<Item = usize> + '_ {
        set_from(&self.candidates, from, self.text.len())
    }

    /// The text lexed (the page up to its first NUL).
    pub(crate) fn text(&self) -> &'a str {
        self.text
    }

    /// The text's bytes.
    #[inline]
    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Whether every byte is a code point.
    pub(crate) fn is_ascii(&self) -> bool {
        self.ascii
    }

    /// The first marker at or after `from`, or the text's length.
    #[inline]
    pub(crate) fn next_marker(&self, from: usize) -> usize {
        next_set(&self.markers, from, self.text.len())
    }

    /// The number of code points in the bytes `range` (which start and end on character
    /// boundaries).
    #[inline]
    pub(crate) fn chars_in(&self, range: Range<usize>) -> usize {
        let len = range.end.saturating_sub(range.start);
        if self.ascii {
            return len;
        }
        len - count_set(&self.continuations, range)
    }
}

/// A page's lexing kept without the page (see [`Lexed::into_bits`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct LexedBits {
    markers: Vec<u64>,
    continuations: Vec<u64>,
    candidates: Vec<u64>,
    ascii: bool,
    /// The length of the text lexed (the page up to its first NUL).
    len: usize,
}

/// The width of the UTF-8 sequence that `lead` starts (1 for ASCII and for bytes that
/// start none, so that a step always moves).
#[inline]
pub(crate) fn utf8_width(lead: u8) -> usize {
    match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// The set bits at or after `from` (below `len`), in order.
fn set_from(bits: &[u64], from: usize, len: usize) -> impl Iterator<Item = usize> + '_ {
    let mut w = from / 64;
    let mut word = bits
        .get(w)
        .map_or(0, |&first| first & (u64::MAX << (from % 64)));
    std::iter::from_fn(move || {
        loop {
            if word != 0 {
                let at = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                return (at < len).then_some(at);
            }
            w += 1;
            word = *bits.get(w)?;
        }
    })
}

/// The first set bit at or after `from` (below `len`), or `len`.
#[inline]
fn next_set(bits: &[u64], from: usize, len: usize) -> usize {
    let mut w = from / 64;
    let Some(&first) = bits.get(w) else {
        return len;
    };
    let mut word = first & (u64::MAX << (from % 64));
    loop {
        if word != 0 {
            return (w * 64 + word.trailing_zeros() as usize).min(len);
        }
        w += 1;
        match bits.get(w) {
            Some(&next) => word = next,
            None => return len,
        }
    }
}

/// The number of set bits in `range`.
#[inline]
fn count_set(bits: &[u64], range: Range<usize>) -> usize {
    let (start, end) = (range.start, range.end);
    if end <= start {
        return 0;
    }
    let (first, last) = (start / 64, (end - 1) / 64);
    let word = |w: usize| bits.get(w).copied().unwrap_or(0);
    let low = u64::MAX << (start % 64);
    let high = u64::MAX >> (63 - (end - 1) % 64);
    if first == last {
        return (word(first) & low & high).count_ones() as usize;
    }
    let mut n = (word(first) & low).count_ones() + (word(last) & high).count_ones();
    for w in first + 1..last {
        n += word(w).count_ones();
    }
    n as usize
}

/// The three bit sets of a text (bit `i % 64` of word `i / 64` for byte `i`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct BitSets {
    markers: Vec<u64>,
    continuations: Vec<u64>,
    candidates: Vec<u64>,
}

impl BitSets {
    /// All clear, for `len` bytes.
    fn clear(len: usize) -> Self {
        let words = len.div_ceil(64);
        Self {
            markers: vec![0; words],
            continuations: vec![0; words],
            candidates: vec![0; words],
        }
    }
}

/// The marker, continuation and candidate bit sets of `bytes`.
fn bit_sets(bytes: &[u8]) -> BitSets {
    let mut sets = BitSets::clear(bytes.len());
    #[cfg(target_arch = "x86_64")]
    {
        if avx2::available() {
            // SAFETY: the processor has AVX2 (checked just above).
            unsafe { avx2::bit_sets(bytes, &mut sets) };
            return sets;
        }
    }
    portable_bit_sets(
        bytes,
        &mut sets.markers,
        &mut sets.continuations,
        &mut sets.candidates,
    );
    sets
}

/// [`bit_sets`] eight bytes at a time, for any processor (into the words from the first).
fn portable_bit_sets(
    bytes: &[u8],
    markers: &mut [u64],
    continuations: &mut [u64],
    candidates: &mut [u64],
) {
    for (((chunk, m), c), k) in bytes
        .chunks(64)
        .zip(markers.iter_mut())
        .zip(continuations.iter_mut())
        .zip(candidates.iter_mut())
    {
        let (mut mw, mut cw, mut kw) = (0u64, 0u64, 0u64);
        for (i, &b) in chunk.iter().enumerate() {
            mw |= u64::from(is_marker_byte(b)) << i;
            cw |= u64::from(b & 0xC0 == 0x80) << i;
            kw |= u64::from(IS_CANDIDATE[usize::from(b)]) << i;
        }
        *m = mw;
        *c = cw;
        *k = kw;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    //! The bit sets 32 bytes at a time: a byte is a marker when the bit its high nibble
    //! selects is set in its low nibble's entry (each high nibble that holds markers has a
    //! bit of its own; bytes from 0x80 up select none). Candidates are found the same way,
    //! with low nibble entries of their own (every candidate is a marker, so its high nibble
    //! has a bit).

    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    use super::{BitSets, CANDIDATE_BYTES, MARKER_BYTES};

    /// Whether the processor has AVX2 (looked up once).
    pub(super) fn available() -> bool {
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| std::is_x86_feature_detected!("avx2"))
    }

    /// Per low nibble, the bits of the high nibbles that make a marker with it; per high
    /// nibble, its bit; per low nibble, the bits of the high nibbles that make a candidate
    /// with it.
    const TABLES: ([u8; 16], [u8; 16], [u8; 16]) = {
        let mut low = [0u8; 16];
        let mut high = [0u8; 16];
        let mut next_bit = 0;
        let mut i = 0;
        while i < MARKER_BYTES.len() {
            let b = MARKER_BYTES[i];
            let h = (b >> 4) as usize;
            if high[h] == 0 {
                high[h] = 1 << next_bit;
                next_bit += 1;
            }
            low[(b & 15) as usize] |= high[h];
            i += 1;
        }
        let mut candidate_low = [0u8; 16];
        let mut i = 0;
        while i < CANDIDATE_BYTES.len() {
            let b = CANDIDATE_BYTES[i];
            candidate_low[(b & 15) as usize] |= high[(b >> 4) as usize];
            i += 1;
        }
        (low, high, candidate_low)
    };

    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn bit_sets(bytes: &[u8], sets: &mut BitSets) {
        let (low, high, candidate_low) = TABLES;
        // SAFETY (this block and the loop's): AVX2 is available (the caller's contract);
        // every load reads 32 bytes inside `bytes` (the chunks are exactly 32 long).
        let (low, high, candidate_low, nibble, limit) = unsafe {
            (
                _mm256_broadcastsi128_si256(_mm_loadu_si128(low.as_ptr().cast())),
                _mm256_broadcastsi128_si256(_mm_loadu_si128(high.as_ptr().cast())),
                _mm256_broadcastsi128_si256(_mm_loadu_si128(candidate_low.as_ptr().cast())),
                _mm256_set1_epi8(0x0F),
                _mm256_set1_epi8(-64),
            )
        };
        let mut chunks = bytes.chunks_exact(64);
        let mut w = 0;
        for chunk in chunks.by_ref() {
            let (mut m, mut c, mut k) = (0u64, 0u64, 0u64);
            for half in 0..2 {
                let Some(part) = chunk.get(half * 32..half * 32 + 32) else {
                    continue;
                };
                let (mbits, cbits, kbits) = unsafe {
                    let v = _mm256_loadu_si256(part.as_ptr().cast());
                    let low_nibbles = _mm256_and_si256(v, nibble);
                    let lo = _mm256_shuffle_epi8(low, low_nibbles);
                    let hi = _mm256_shuffle_epi8(
                        high,
                        _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble),
                    );
                    // `shuffle` gives 0 for bytes from 0x80 up, which select no bit.
                    let zero = _mm256_setzero_si256();
                    let hit = _mm256_and_si256(lo, hi);
                    let m = !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hit, zero)) as u32);
                    let candidate =
                        _mm256_and_si256(_mm256_shuffle_epi8(candidate_low, low_nibbles), hi);
                    let k = !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(candidate, zero)) as u32);
                    // Continuation bytes, 0x80..=0xBF, are below -64 as signed bytes.
                    let c = _mm256_movemask_epi8(_mm256_cmpgt_epi8(limit, v)) as u32;
                    (m, c, k)
                };
                m |= u64::from(mbits) << (half * 32);
                c |= u64::from(cbits) << (half * 32);
                k |= u64::from(kbits) << (half * 32);
            }
            if let (Some(mw), Some(cw), Some(kw)) = (
                sets.markers.get_mut(w),
                sets.continuations.get_mut(w),
                sets.candidates.get_mut(w),
            ) {
                *mw = m;
                *cw = c;
                *kw = k;
            }
            w += 1;
        }
        let rest = chunks.remainder();
        if let (Some(mw), Some(cw), Some(kw)) = (
            sets.markers.get_mut(w..),
            sets.continuations.get_mut(w..),
            sets.candidates.get_mut(w..),
        ) {
            super::portable_bit_sets(rest, mw, cw, kw);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_bytes(text: &str) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
        let b = text.as_bytes();
        let markers = (0..b.len()).filter(|&i| is_marker_byte(b[i])).collect();
        let conts = (0..b.len()).filter(|&i| b[i] & 0xC0 == 0x80).collect();
        let candidates = (0..b.len())
            .filter(|&i| CANDIDATE_BYTES.contains(&b[i]))
            .collect();
        (markers, conts, candidates)
    }

    fn bits_to_positions(bits: &[u64], len: usize) -> Vec<usize> {
        (0..len)
            .filter(|&i| bits[i / 64] >> (i % 64) & 1 == 1)
            .collect()
    }

    /// Both ways of finding the bit sets agree with a byte-by-byte look, on text of every
    /// length around the block sizes, with every marker and multi-byte characters.
    #[test]
    fn bit_sets_match_a_byte_by_byte_look() {
        let unit = "a{b}c[d]e<f>g|h=i&j'k#l*m;n:o/p-q!r\nsé日😀\u{80}\u{7f}~ ";
        for len in 0..300 {
            let text: String = unit.chars().cycle().skip(len % 7).take(len).collect();
            let (markers, conts, candidates) = by_bytes(&text);
            let b = text.as_bytes();
            let sets = bit_sets(b);
            assert_eq!(
                bits_to_positions(&sets.markers, b.len()),
                markers,
                "{text:?}"
            );
            assert_eq!(
                bits_to_positions(&sets.continuations, b.len()),
                conts,
                "{text:?}"
            );
            assert_eq!(
                bits_to_positions(&sets.candidates, b.len()),
                candidates,
                "{text:?}"
            );
            let mut portable = BitSets::clear(b.len());
            portable_bit_sets(
                b,
                &mut portable.markers,
                &mut portable.continuations,
                &mut portable.candidates,
            );
            assert_eq!(portable, sets);
        }
        for b in 0..=255u8 {
            let sets = bit_sets(&[b; 64]);
            assert_eq!(sets.markers[0] != 0, is_marker_byte(b), "{b:#x}");
            assert_eq!(
                sets.candidates[0] != 0,
                CANDIDATE_BYTES.contains(&b),
                "{b:#x}"
            );
        }
    }

    #[test]
    fn markers_and_code_points() {
        let text = "ab{{é}}日\0[[x]]";
        assert_eq!(
            Lexed::new(&"x{".repeat(100)).candidates_from(64).count(),
            68
        );
        let lexed = Lexed::new(text);
        assert_eq!(lexed.text(), "ab{{é}}日");
        assert_eq!(lexed.next_marker(0), 2);
        assert_eq!(lexed.next_marker(4), 6);
        assert_eq!(lexed.next_marker(8), lexed.text().len());
        assert_eq!(lexed.chars_in(0..lexed.text().len()), 8);
        assert_eq!(utf8_width(lexed.bytes()[4]), 2);
        let counts = [0, 4, 6, 8, 11].map(|end| lexed.chars_in(0..end));
        assert_eq!(counts, [0, 4, 5, 7, 8]);
        let candidates: Vec<usize> = lexed.candidates_from(3).collect();
        assert_eq!(candidates, [3, 6, 7]);
        let lexed_tags = Lexed::new("a|b<c>d]e=f}");
        let candidates: Vec<usize> = lexed_tags.candidates_from(0).collect();
        assert_eq!(candidates, [3, 5, 7, 11]);
        let kept = lexed.clone().into_bits();
        let again = Lexed::with_text(text, &kept);
        assert_eq!(again.text(), lexed.text());
        assert_eq!(again.candidates_from(0).count(), 4);
        let long = "é".repeat(100) + "{";
        let lexed = Lexed::new(&long);
        assert_eq!(lexed.next_marker(0), 200);
        assert_eq!(lexed.chars_in(2..200), 99);
        assert!(!lexed.is_ascii());
        assert!(Lexed::new("plain {{text}}").is_ascii());
    }
}
