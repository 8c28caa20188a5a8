//! Jaro similarity as computed by python-Levenshtein 0.12.1 on `str` (spec §4.5).
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
    let mut take = |i: usize, lo: usize, hi: usize, used: &mut [usize]| {
        for j in lo..hi {
            if used[j] == 0 && s1[j] == s2[i] {
                matches += 1;
                used[j] = matches;
                return;
            }
        }
    };
    // Pass 1: the first `half` positions of s2, window [0, min(i + half, l1 − 1)].
    for i in 0..half.min(l2) {
        let hi = (i + half).min(l1 - 1) + 1;
        take(i, 0, hi, &mut used);
    }
    // Pass 2: window [i − half, l1), to the end of s1.
    for i in half..(l1 + half).min(l2) {
        take(i, i - half, l1, &mut used);
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
}
