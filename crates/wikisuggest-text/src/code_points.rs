//! Code points as CPython hands them out (one `u32` each, `PyUnicode_AsUCS4`) written as
//! UTF-8: how a non-ASCII Python `str` becomes the text the engine reads.

/// Code points narrowed or written at a time: a block with only ASCII in it (most of a
/// page, even where the page is not all ASCII) is narrowed whole, in vector registers.
const LANES: usize = 16;

/// ASCII blocks narrowed before they are copied out together.
const STAGED: usize = 64;

/// `code_points` as UTF-8, or the position of the first that is not a Unicode scalar value
/// (a lone surrogate, or a value above U+10FFFF, which CPython never holds).
///
/// # Errors
/// The position (in code points) of the first value that UTF-8 cannot hold.
pub fn utf8_of_code_points(code_points: &[u32]) -> Result<String, usize> {
    // Room for the ASCII and a few wider characters; a page of wider ones grows it.
    let mut out = Vec::with_capacity(code_points.len() + code_points.len() / 8 + LANES);
    // A run of ASCII blocks is narrowed into this stage, then copied out whole: the loop
    // that narrows them touches nothing else.
    let mut stage = [0u8; STAGED * LANES];
    let mut rest = code_points;
    let mut at = 0;
    while !rest.is_empty() {
        let mut run = 0;
        for (block, to) in rest.chunks_exact(LANES).zip(stage.chunks_exact_mut(LANES)) {
            let Some(ascii) = <&[u32; LANES]>::try_from(block).ok().and_then(narrow_ascii) else {
                break;
            };
            to.copy_from_slice(&ascii);
            run += LANES;
        }
        out.extend_from_slice(stage.get(..run).unwrap_or_default());
        rest = rest.get(run..).unwrap_or_default();
        at += run;
        if run == stage.len() {
            continue;
        }
        // The block that is not all ASCII (or the last, shorter one): code point by code point.
        let (block, after) = rest.split_at(LANES.min(rest.len()));
        for (i, &c) in block.iter().enumerate() {
            push_utf8(&mut out, c, at + i)?;
        }
        rest = after;
        at += block.len();
    }
    // Only whole scalar values were written: the check cannot fail, and it passes ASCII
    // quickly. Kept, so that no unchecked `str` is ever made here (were it to fail, the
    // position is the code point where the bytes stop being UTF-8).
    String::from_utf8(out).map_err(|e| {
        let valid = e.as_bytes().get(..e.utf8_error().valid_up_to());
        std::str::from_utf8(valid.unwrap_or_default()).map_or(0, |s| s.chars().count())
    })
}

/// Writes the code point `c`, at position `at`, as UTF-8.
#[inline]
fn push_utf8(out: &mut Vec<u8>, c: u32, at: usize) -> Result<(), usize> {
    if c < 0x80 {
        out.push(c as u8);
        return Ok(());
    }
    let c = char::from_u32(c).ok_or(at)?;
    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    Ok(())
}

/// The block's bytes when every code point in it is ASCII.
#[cfg(target_arch = "x86_64")]
#[inline]
fn narrow_ascii(block: &[u32; LANES]) -> Option<[u8; LANES]> {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of every x86_64 processor; the four loads read the block's four
    // quarters (four code points, 16 bytes, each) and the store writes the 16 bytes of `out`.
    unsafe {
        let quarter = |i: usize| _mm_loadu_si128(block.as_ptr().add(4 * i).cast());
        let (a, b, c, d) = (quarter(0), quarter(1), quarter(2), quarter(3));
        let any = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
        // The bits above the seven of ASCII, in any code point of the block.
        let wide = _mm_andnot_si128(_mm_set1_epi32(0x7F), any);
        if _mm_movemask_epi8(_mm_cmpeq_epi32(wide, _mm_setzero_si128())) != 0xFFFF {
            return None;
        }
        // Every value is below 0x80: the saturating packs keep each as it is.
        let bytes = _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
        let mut out = [0u8; LANES];
        _mm_storeu_si128(out.as_mut_ptr().cast(), bytes);
        Some(out)
    }
}

/// [`narrow_ascii`] for any processor.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline]
fn narrow_ascii_portable(block: &[u32; LANES]) -> Option<[u8; LANES]> {
    (block.iter().fold(0, |any, &c| any | c) < 0x80).then(|| block.map(|c| c as u8))
}

#[cfg(not(target_arch = "x86_64"))]
use narrow_ascii_portable as narrow_ascii;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The plain way: each code point on its own.
    fn one_by_one(code_points: &[u32]) -> Result<String, usize> {
        code_points
            .iter()
            .enumerate()
            .map(|(i, &c)| char::from_u32(c).ok_or(i))
            .collect()
    }

    /// Every width of character, and a lone surrogate, at every position around the blocks'
    /// edges, in texts of every length up to three blocks.
    #[test]
    fn every_position_around_the_blocks() {
        let wide = [
            0xE9, 0x7FF, 0x800, 0x4E2D, 0xFFFF, 0x1_0000, 0x1D11E, 0x10_FFFF,
        ];
        let refused = [0xD800, 0xDC80, 0xDFFF, 0x11_0000, u32::MAX];
        for len in 0..3 * LANES + 2 {
            let ascii: Vec<u32> = (0..len as u32).map(|i| 0x20 + i % 0x5F).collect();
            assert_eq!(utf8_of_code_points(&ascii), one_by_one(&ascii));
            for at in 0..len {
                for &c in wide.iter().chain(&refused).chain(&[0x7F, 0x80, 0]) {
                    let mut text = ascii.clone();
                    text[at] = c;
                    let expected = one_by_one(&text);
                    if refused.contains(&c) {
                        assert_eq!(expected, Err(at));
                    }
                    assert_eq!(
                        utf8_of_code_points(&text),
                        expected,
                        "{c:#x} at {at} of {len}"
                    );
                }
            }
        }
    }

    /// The vector narrowing and the portable one agree on every block: all ASCII (every
    /// value once), and one value past ASCII in any lane.
    #[test]
    fn both_narrowings_agree() {
        for first in (0..0x80u32).step_by(LANES) {
            let block: [u32; LANES] = std::array::from_fn(|i| first + i as u32);
            assert!(narrow_ascii(&block).is_some());
            assert_eq!(narrow_ascii(&block), narrow_ascii_portable(&block));
            for lane in 0..LANES {
                for wide in [
                    0x80,
                    0xFF,
                    0x100,
                    0x7FFF,
                    0x8000,
                    0xFFFF,
                    0x1_0000,
                    0xD800,
                    u32::MAX,
                ] {
                    let mut block = block;
                    block[lane] = wide;
                    assert_eq!(narrow_ascii(&block), None, "{wide:#x} in lane {lane}");
                    assert_eq!(narrow_ascii_portable(&block), None);
                }
            }
        }
    }

    proptest! {
        /// Any mix of ASCII runs and wider characters reads back as the same characters.
        #[test]
        fn any_text(text in "[a-z \\n\\[\\]{}|=]{0,40}([é中𝄞ß\u{80}\u{7ff}\u{800}][a-z ]{0,20}){0,6}") {
            let code_points: Vec<u32> = text.chars().map(u32::from).collect();
            prop_assert_eq!(utf8_of_code_points(&code_points), Ok(text));
        }

        /// The first value UTF-8 cannot hold is the one reported, wherever it is.
        #[test]
        fn the_first_refused_value(
            mut code_points in proptest::collection::vec(0u32..0x11_0000, 0..80),
            at in 0usize..80,
        ) {
            if let Some(c) = code_points.get_mut(at) {
                *c = 0xD800 + (*c % 0x800);
            }
            prop_assert_eq!(utf8_of_code_points(&code_points), one_by_one(&code_points));
        }
    }
}
