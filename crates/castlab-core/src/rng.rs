//! Deterministic random-number streams.
//!
//! One master seed per run; every entity (agent, link, source) draws from its own stream
//! derived from `(seed, entity kind, entity index)` with SplitMix64, so adding an entity never
//! shifts another entity's numbers. The generator is xoshiro256++ (Blackman and Vigna), written
//! here so that a run's numbers never change with a dependency's version.

/// SplitMix64 step: used to derive stream seeds and to fill xoshiro's state.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Kinds of entity that own a stream; part of the derivation so that agent 3 and link 3 differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum StreamKind {
    Agent = 1,
    Channel = 2,
    Extension = 3,
    Scenario = 4,
    /// The simulator's per-agent send jitter (phase randomisation), apart from the agent's own
    /// stream so that turning it on does not shift the agent's numbers.
    Phase = 5,
}

/// A xoshiro256++ generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator seeded from a single 64-bit value.
    pub fn seed_from_u64(seed: u64) -> Self {
        let mut st = seed;
        let mut s = [0u64; 4];
        for w in &mut s {
            *w = splitmix64(&mut st);
        }
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    /// The stream of entity `index` of `kind` under the master `seed`.
    pub fn stream(seed: u64, kind: StreamKind, index: u64) -> Self {
        let mut st = seed;
        let a = splitmix64(&mut st);
        let mut st2 = a ^ (kind as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
        let b = splitmix64(&mut st2);
        let mut st3 = b ^ index.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7);
        Rng::seed_from_u64(splitmix64(&mut st3))
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[0].wrapping_add(self.s[3]).rotate_left(23).wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform on [0, 1), 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on [lo, hi).
    pub fn uniform_range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// True with probability `p` (p <= 0: never; p >= 1: always).
    pub fn bernoulli(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            false
        } else if p >= 1.0 {
            true
        } else {
            self.uniform() < p
        }
    }

    /// Uniform integer on [0, n). `n` must be positive. Lemire's multiply-shift, with rejection
    /// so that there is no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        let mut m = (self.next_u64() as u128) * (n as u128);
        let mut lo = m as u64;
        if lo < n {
            let threshold = n.wrapping_neg() % n;
            while lo < threshold {
                m = (self.next_u64() as u128) * (n as u128);
                lo = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - U is in (0, 1], so the log is finite.
        -mean * (1.0 - self.uniform()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a1: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(7, StreamKind::Agent, 3);
                move |_| r.next_u64()
            })
            .collect();
        let a2: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(7, StreamKind::Agent, 3);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(7, StreamKind::Channel, 3);
                move |_| r.next_u64()
            })
            .collect();
        let s: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(8, StreamKind::Agent, 3);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a1, a2);
        assert_ne!(a1, c);
        assert_ne!(a1, s);
    }

    #[test]
    fn uniform_moments() {
        let mut r = Rng::seed_from_u64(1);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| r.uniform()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        // standard error of the mean is sqrt(1/12/n) ~ 0.00065
        assert!((mean - 0.5).abs() < 0.004, "mean {mean}");
        assert!((var - 1.0 / 12.0).abs() < 0.002, "var {var}");
        assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)));
    }

    #[test]
    fn below_is_unbiased_over_small_range() {
        let mut r = Rng::seed_from_u64(2);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[r.below(6) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn exponential_mean() {
        let mut r = Rng::seed_from_u64(3);
        let n = 100_000;
        let m = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        assert!((m - 2.0).abs() < 0.05, "{m}");
    }
}
