//! The `w2v` feature: float32 cosine similarity with numpy/OpenBLAS summation order.
//!
//! Upstream computes `dot(a, b) / (norm(b) * norm(a))` on float32 numpy arrays, where
//! `dot` and `norm` (`sqrt(dot(x, x))`) call OpenBLAS `sdot`. The rounding of a float32
//! dot product depends on the summation order, so this module reproduces the order of
//! OpenBLAS's x86-64 `sdot` kernels: on AVX2 and AVX-512 machines a vectorised kernel
//! over the first `n & !31` elements, whose float32 result is added to a double-precision
//! sum of the remaining float32 products, rounded to float32 at the end; on a CPU that
//! OpenBLAS does not recognise (it falls back to its Prescott target), a four-lane SSE
//! loop and a float32 tail.

/// Which OpenBLAS x86-64 `sdot` kernel to reproduce.
///
/// OpenBLAS picks the kernel at run time from the CPU: AVX-512 machines (Skylake-X and
/// later Intel, AMD Zen 4) use the Skylake-X kernel; AVX2-only machines the Haswell one;
/// a CPU model OpenBLAS does not know (common in virtual machines) the Prescott one.
/// Production's outputs match the Skylake-X kernel, the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SdotKernel {
    /// `sdot_microk_skylakex-2.c` (default).
    #[default]
    SkylakeX,
    /// `sdot_microk_haswell-2.c` (also used for AMD Zen 1–3).
    Haswell,
    /// The generic SSE `sdot` of OpenBLAS's Prescott target, which numpy's bundled
    /// OpenBLAS uses when it does not recognise the CPU model.
    Prescott,
}

impl SdotKernel {
    /// Every kernel, in declaration order.
    pub const ALL: [SdotKernel; 3] = [
        SdotKernel::SkylakeX,
        SdotKernel::Haswell,
        SdotKernel::Prescott,
    ];

    /// Float32 dot product of two equally long sequences in this kernel's order.
    ///
    /// Extra elements of the longer input are ignored.
    pub fn dot(self, x: &[f32], y: &[f32]) -> f32 {
        let n = x.len().min(y.len());
        let n1 = n & !31;
        let head = match self {
            SdotKernel::SkylakeX => skylakex_kernel(&x[..n1], &y[..n1]),
            SdotKernel::Haswell => haswell_kernel(&x[..n1], &y[..n1]),
            SdotKernel::Prescott => return prescott_dot(&x[..n], &y[..n]),
        };
        let mut tail = 0.0f64;
        for i in n1..n {
            // `dot += y[i] * x[i]` with `double dot`: a float product, widened.
            tail += f64::from(y[i] * x[i]);
        }
        (tail + f64::from(head)) as f32
    }

    /// Cosine similarity as the `w2v` feature: `dot(a, b) / (norm(b) * norm(a))` in
    /// float32, and 0.0 when the norm product is zero or the result is NaN.
    pub fn cosine(self, a: &[f32], b: &[f32]) -> f32 {
        self.cosine_with_norm(a, self.norm(a), b)
    }

    /// `sqrt(dot(a, a))` in float32, as numpy's `norm` on float32.
    pub fn norm(self, a: &[f32]) -> f32 {
        self.dot(a, a).sqrt()
    }

    /// [`cosine`](Self::cosine) with `na = norm(a)` computed once by the caller (the
    /// page's vector is compared with every candidate's).
    pub fn cosine_with_norm(self, a: &[f32], na: f32, b: &[f32]) -> f32 {
        let nb = self.norm(b);
        let denom = nb * na;
        if denom == 0.0 {
            return 0.0;
        }
        let c = self.dot(a, b) / denom;
        if c.is_nan() { 0.0 } else { c }
    }
}

/// Lane-wise fused multiply-add of 8 lanes: `acc[l] = fma(x[l], y[l], acc[l])`.
#[inline]
fn fma8(acc: &mut [f32; 8], x: &[f32], y: &[f32]) {
    for l in 0..8 {
        acc[l] = x[l].mul_add(y[l], acc[l]);
    }
}

/// The horizontal sum shared by both kernels: upper 128-bit half added to the lower,
/// then two `hadd`s: `(h0 + h1) + (h2 + h3)`.
#[inline]
fn hsum8(v: &[f32; 8]) -> f32 {
    let h = [v[0] + v[4], v[1] + v[5], v[2] + v[6], v[3] + v[7]];
    (h[0] + h[1]) + (h[2] + h[3])
}

/// `n` is a multiple of 32. With AVX-512, blocks of 64 go to four 16-lane accumulators
/// that are then folded to 8 lanes (low + high); the rest, in blocks of 32, goes to four
/// 8-lane accumulators, summed `((a0 + a1) + a2) + a3`.
fn skylakex_kernel(x: &[f32], y: &[f32]) -> f32 {
    let n = x.len();
    let n64 = n & !63;
    let mut acc = [[0.0f32; 8]; 4];
    if n64 > 0 {
        let mut wide = [[0.0f32; 16]; 4];
        for i in (0..n64).step_by(64) {
            for (k, w) in wide.iter_mut().enumerate() {
                let j = i + 16 * k;
                for ((w, &a), &b) in w.iter_mut().zip(&x[j..j + 16]).zip(&y[j..j + 16]) {
                    *w = a.mul_add(b, *w);
                }
            }
        }
        for k in 0..4 {
            for l in 0..8 {
                acc[k][l] = wide[k][l] + wide[k][l + 8];
            }
        }
    }
    for i in (n64..n).step_by(32) {
        for (k, a) in acc.iter_mut().enumerate() {
            let j = i + 8 * k;
            fma8(a, &x[j..j + 8], &y[j..j + 8]);
        }
    }
    let mut s = [0.0f32; 8];
    for l in 0..8 {
        s[l] = ((acc[0][l] + acc[1][l]) + acc[2][l]) + acc[3][l];
    }
    hsum8(&s)
}

/// `n` is a multiple of 32: four 8-lane FMA accumulators; each folded to 4 lanes, then
/// `(a0 + a1) + (a2 + a3)` and two `hadd`s.
fn haswell_kernel(x: &[f32], y: &[f32]) -> f32 {
    if x.is_empty() {
        return 0.0;
    }
    let mut acc = [[0.0f32; 8]; 4];
    for i in (0..x.len()).step_by(32) {
        for (k, a) in acc.iter_mut().enumerate() {
            let j = i + 8 * k;
            fma8(a, &x[j..j + 8], &y[j..j + 8]);
        }
    }
    let fold = |a: &[f32; 8]| [a[0] + a[4], a[1] + a[5], a[2] + a[6], a[3] + a[7]];
    let h: Vec<[f32; 4]> = acc.iter().map(fold).collect();
    let mut c = [0.0f32; 4];
    for l in 0..4 {
        c[l] = (h[0][l] + h[1][l]) + (h[2][l] + h[3][l]);
    }
    (c[0] + c[1]) + (c[2] + c[3])
}

/// The Prescott target's `sdot`: blocks of 16 go to four 4-lane accumulators (one per
/// group of 4), summed `(a0 + a1) + (a2 + a3)`; further groups of 4 are added to that
/// sum; two `hadd`s; then the last `n % 4` products are added one by one in float32.
fn prescott_dot(x: &[f32], y: &[f32]) -> f32 {
    let n = x.len();
    let (n4, n16) = (n & !3, n & !15);
    let mut acc = [0.0f32; 4];
    if n16 > 0 {
        let mut a = [[0.0f32; 4]; 4];
        for i in (0..n16).step_by(16) {
            for (k, a) in a.iter_mut().enumerate() {
                let j = i + 4 * k;
                for l in 0..4 {
                    a[l] += x[j + l] * y[j + l];
                }
            }
        }
        for l in 0..4 {
            acc[l] = (a[0][l] + a[1][l]) + (a[2][l] + a[3][l]);
        }
    }
    for i in (n16..n4).step_by(4) {
        for l in 0..4 {
            acc[l] += x[i + l] * y[i + l];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for i in n4..n {
        s += x[i] * y[i];
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_on_small_integers() {
        let a: Vec<f32> = (0..50).map(|i| (i % 7) as f32).collect();
        let b: Vec<f32> = (0..50).map(|i| (i % 5) as f32 - 2.0).collect();
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        for k in SdotKernel::ALL {
            assert_eq!(k.dot(&a, &b), exact);
            assert_eq!(k.cosine(&a, &a), 1.0);
        }
    }

    #[test]
    fn zero_and_nan_rules() {
        let z = [0.0f32; 50];
        let a = [1.0f32; 50];
        assert_eq!(SdotKernel::SkylakeX.cosine(&z, &a), 0.0);
        let mut n = [1.0f32; 50];
        n[3] = f32::NAN;
        assert_eq!(SdotKernel::SkylakeX.cosine(&n, &a), 0.0);
    }
}
