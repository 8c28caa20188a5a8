//! CPython's `random.Random(seed).shuffle`, bit for bit: the Mersenne Twister seeded from an
//! integer as `random.seed` seeds it, and `shuffle`'s draws. Production shuffles a page
//! collection with it from the request's `continue_seed`, so the same seed gives the same
//! pages here as there.

const N: usize = 624;
const M: usize = 397;

/// MT19937 as CPython's `_randommodule.c` runs it.
pub struct PyRandom {
    state: [u32; N],
    index: usize,
}

impl PyRandom {
    /// `random.Random(seed)` for a non-negative integer seed.
    pub fn new(seed: u64) -> Self {
        // `random_seed`: the absolute value's 32-bit words, least significant first, at
        // least one.
        let low = (seed & 0xffff_ffff) as u32;
        let high = (seed >> 32) as u32;
        let key: Vec<u32> = if high == 0 {
            vec![low]
        } else {
            vec![low, high]
        };
        let mut r = Self {
            state: [0; N],
            index: N,
        };
        r.init_by_array(&key);
        r
    }

    fn init_genrand(&mut self, seed: u32) {
        self.state[0] = seed;
        for i in 1..N {
            let prev = self.state[i - 1];
            self.state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        self.index = N;
    }

    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19_650_218);
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let prev = self.state[i - 1];
            self.state[i] = (self.state[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                self.state[0] = self.state[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let prev = self.state[i - 1];
            self.state[i] = (self.state[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                self.state[0] = self.state[N - 1];
                i = 1;
            }
        }
        self.state[0] = 0x8000_0000;
    }

    fn next_u32(&mut self) -> u32 {
        const MAG01: [u32; 2] = [0, 0x9908_b0df];
        if self.index >= N {
            for k in 0..N {
                let y = (self.state[k] & 0x8000_0000) | (self.state[(k + 1) % N] & 0x7fff_ffff);
                self.state[k] = self.state[(k + M) % N] ^ (y >> 1) ^ MAG01[(y & 1) as usize];
            }
            self.index = 0;
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `getrandbits(k)` for `0 < k <= 32`.
    fn bits(&mut self, k: u32) -> u32 {
        self.next_u32() >> (32 - k)
    }

    /// `_randbelow_with_getrandbits(n)` for `1 <= n <= 2^32`.
    fn below(&mut self, n: u64) -> u64 {
        let k = 64 - n.leading_zeros();
        if k == 0 {
            return 0;
        }
        loop {
            let r = u64::from(self.bits(k.min(32)));
            if r < n {
                return r;
            }
        }
    }

    /// `shuffle(x)`.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Orders recorded with CPython 3.11: `x = list(range(n)); random.Random(s).shuffle(x)`.
    #[test]
    fn shuffles_as_cpython_does() {
        let cases: [(u64, [usize; 10]); 4] = [
            (0, [7, 8, 1, 5, 3, 4, 2, 0, 9, 6]),
            (42, [7, 3, 2, 8, 5, 6, 9, 4, 0, 1]),
            (2_929_388_239, [3, 7, 9, 6, 5, 8, 4, 0, 2, 1]),
            (4_294_967_295, [0, 7, 1, 5, 2, 6, 4, 8, 3, 9]),
        ];
        for (seed, want) in cases {
            let mut x: Vec<usize> = (0..10).collect();
            PyRandom::new(seed).shuffle(&mut x);
            assert_eq!(x, want, "seed {seed}");
        }
        let mut x: Vec<usize> = (0..1000).collect();
        PyRandom::new(7).shuffle(&mut x);
        assert_eq!(x[..10], [878, 857, 349, 313, 382, 850, 927, 194, 261, 946]);
    }
}
