//! The `kurtosis` feature in O(number of candidates).
//!
//! Upstream computes `scipy.stats.kurtosis` (Fisher, biased) over the candidate counts
//! padded with ones to 1000 values. The padding contributes `N − k` identical terms, so
//! the moments have a closed form over the `k` real counts.

/// Values are padded with ones up to this many (no padding beyond it).
pub const PADDED_LEN: usize = 1000;

/// numpy's float64 machine epsilon, used by scipy's "variance is zero" test.
const EPS: f64 = 2.220446049250313e-16;

/// Excess kurtosis of `counts` padded with ones to [`PADDED_LEN`] values.
///
/// NaN when the variance is numerically zero (`m2 ≤ (ε·mean)²`), e.g. for a single
/// candidate of count 1, as scipy returns.
pub fn padded_kurtosis(counts: &[u32]) -> f64 {
    let k = counts.len();
    let n = k.max(PADDED_LEN);
    let pad = (n - k) as f64;
    let n = n as f64;
    let sum: f64 = counts.iter().map(|&c| f64::from(c)).sum::<f64>() + pad;
    let mean = sum / n;
    let (mut s2, mut s4) = (0.0f64, 0.0f64);
    for &c in counts {
        let d = f64::from(c) - mean;
        let d2 = d * d;
        s2 += d2;
        s4 += d2 * d2;
    }
    let d = 1.0 - mean;
    let d2 = d * d;
    s2 += pad * d2;
    s4 += pad * d2 * d2;
    let m2 = s2 / n;
    let m4 = s4 / n;
    if m2 <= (EPS * mean) * (EPS * mean) {
        return f64::NAN;
    }
    m4 / (m2 * m2) - 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values (scipy 1.16.1 on the padded lists).
    #[test]
    fn reference_values() {
        assert!(padded_kurtosis(&[1]).is_nan());
        assert!(padded_kurtosis(&[]).is_nan());
        let cases: [(Vec<u32>, f64); 5] = [
            (vec![2], 995.0010010010005),
            (vec![100], 995.001001001),
            (vec![5, 3], 675.1298606375466),
            (vec![3; 999], 995.0010010010012),
            ((1..=1199).collect(), -1.2000016694490818),
        ];
        for (counts, expected) in cases {
            let got = padded_kurtosis(&counts);
            // The model sees float32; the float64 value may differ from numpy's pairwise
            // sums in the last bits only.
            assert_eq!(got as f32, expected as f32, "{counts:?}");
            assert!(
                (got - expected).abs() <= 1e-12 * expected.abs(),
                "{got} vs {expected}"
            );
        }
    }

    #[test]
    fn all_equal_without_padding_is_nan() {
        assert!(padded_kurtosis(&[7; 1000]).is_nan());
        assert!(padded_kurtosis(&[1; 1500]).is_nan());
    }
}
