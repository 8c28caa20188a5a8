//! Jaro similarity as computed by python-Levenshtein 0.12.1 on `str`.
//!
//! This is not the textbook Jaro: the match window is `(l1 + 1) / 2` of the *shorter*
//! string, and the second half of the longer string scans to the end of the shorter one.
//! Inputs are compared by code point; callers lowercase them first.

/// Jaro similarity of two code point sequences.
pub fn jaro_chars(a: &[char], b: &[char]) -> f64 {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return 1.0,
        (true, false) | (false, true) => return 0.0,
        _ => {}
    }
    // s1 is the shorter (argument order kept on equal lengths).
    let (s1, s2) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let (l1, l2) = (s1.len(), s2.len());
    let half = l1.div_ceil(2);
    // used[j] = the match number (1-based) that consumed s1[j], or 0.
    let mut used = vec![0usize; l1];
    let mut matches = 0usize;
    // The first free position of s1 in `lo..hi` holding `c` takes the next match number.
    let take = |c: char, lo: usize, hi: usize, used: &mut [usize], matches: &mut usize| {
        if let Some(j) = (lo..hi).find(|&j| used[j] == 0 && s1[j] == c) {
            *matches += 1;
            used[j] = *matches;
            true
        } else {
            false
        }
    };
    // Pass 1: the first `half` positions of s2, window [0, i + half]. For odd l1 the
    // window's last position is l1, one past the end: upstream reads the string's NUL
    // terminator there and the word after its `calloc(l1)` match array. With glibc on
    // 64-bit Linux that word is zeroed padding for l1 == 1 (the minimum chunk). For
    // larger odd l1 it lies outside the allocation and its value depends on the heap's
    // state (usually the next chunk's non-zero size field, but not on every machine), so
    // upstream has no defined answer there; we follow the usual case, no match. So only
    // when l1 == 1 can a NUL in s2 match that virtual position, once.
    let mut virtual_free = l1 == 1;
    for (i, &c) in s2.iter().enumerate().take(half) {
        let hi = (i + half).min(l1 - 1) + 1;
        let found = take(c, 0, hi, &mut used, &mut matches);
        if !found && virtual_free && i + half >= l1 && c == '\0' {
            matches += 1;
            virtual_free = false;
        }
    }
    // Pass 2: window [i − half, l1), to the end of s1.
    for (i, &c) in s2.iter().enumerate().take(l1 + half).skip(half) {
        take(c, i - half, l1, &mut used, &mut matches);
    }
    if matches == 0 {
        return 0.0;
    }
    let mut trans = 0usize;
    let mut k = 0usize;
    for &u in &used {
        if u != 0 {
            k += 1;
            if u != k {
                trans += 1;
            }
        }
    }
    let m = matches as f64;
    (m / l1 as f64 + m / l2 as f64 + 1.0 - trans as f64 / m / 2.0) / 3.0
}

/// [`jaro_chars`] on strings.
pub fn jaro(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    jaro_chars(&a, &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        assert_eq!(jaro("hunting", "hunting"), 1.0);
        assert_eq!(jaro("brian", "jesus"), 0.0);
        assert_eq!(jaro("", ""), 1.0);
        assert_eq!(jaro("", "a"), 0.0);
        assert_eq!(jaro("a", ""), 0.0);
    }

    /// Values of python-Levenshtein 0.12.1 for its read past the end (see pass 1).
    #[test]
    fn nul_past_the_end_quirk() {
        assert_eq!(jaro("\0😀", "😀"), 1.25);
        assert_eq!(jaro("a", "\0"), 1.0);
        assert_eq!(jaro("a", "\0\0"), 0.8333333333333334);
        assert_eq!(jaro("\0", "\0\0"), 0.8333333333333334);
        assert_eq!(jaro("abc", "x\0yz"), 0.0);
        assert_eq!(jaro("abcde", "xy\0zwv"), 0.0);
    }
}
