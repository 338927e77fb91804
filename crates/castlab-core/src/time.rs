//! Simulated time: integer nanoseconds.
//!
//! castlab never uses `std::time` inside protocol or engine code: every input carries `now`
//! as an [`Instant`], so a state machine runs identically on virtual time (the simulator),
//! in a unit test that feeds it by hand, and on a wall clock (the real-network driver, which
//! converts its clock into an `Instant` at the boundary).

use core::fmt;
use core::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

const NS_PER_S: f64 = 1e9;

/// A point in time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

/// A non-negative span of time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(u64);

impl Instant {
    pub const ZERO: Instant = Instant(0);
    pub const MAX: Instant = Instant(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Instant(ns)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as `f64`, rounded to the nearest nanosecond. Negative or NaN input gives zero;
    /// callers that take user input validate it first (see the simulator's scenario checks).
    pub fn from_secs_f64(s: f64) -> Self {
        Instant(secs_to_nanos(s))
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_S
    }
    /// `self - earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    pub fn checked_sub(self, d: Duration) -> Option<Instant> {
        self.0.checked_sub(d.0).map(Instant)
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Duration(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        Duration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        Duration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        Duration(s * 1_000_000_000)
    }
    pub fn from_secs_f64(s: f64) -> Self {
        Duration(secs_to_nanos(s))
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_S
    }
    pub fn mul_f64(self, k: f64) -> Duration {
        Duration::from_secs_f64(self.as_secs_f64() * k)
    }
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// Time to serialise `bytes` onto a link of `rate_bps` bit/s, rounded to the nearest
    /// nanosecond (ties up). `rate_bps` must be positive.
    pub fn transmission(bytes: u32, rate_bps: u64) -> Duration {
        debug_assert!(rate_bps > 0);
        // in 64 bits when nothing overflows (every packet smaller than ~2 GB on a link under
        // ~18 Eb/s): the same quotient as in 128 bits, without the 128-bit division's call
        if let Some(n) = (bytes as u64).checked_mul(8_000_000_000).and_then(|n| n.checked_add(rate_bps / 2)) {
            return Duration(n / rate_bps);
        }
        let num = bytes as u128 * 8 * 1_000_000_000u128;
        let rate = rate_bps as u128;
        Duration(((num + rate / 2) / rate) as u64)
    }
}

fn secs_to_nanos(s: f64) -> u64 {
    if s.is_nan() || s <= 0.0 {
        0
    } else if s >= u64::MAX as f64 / NS_PER_S {
        u64::MAX
    } else {
        (s * NS_PER_S).round() as u64
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(d.0))
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: an earlier minus a later instant is zero.
    fn sub(self, other: Instant) -> Duration {
        self.saturating_since(other)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0.saturating_sub(d.0))
    }
}
impl SubAssign for Duration {
    fn sub_assign(&mut self, d: Duration) {
        *self = *self - d;
    }
}
impl Mul<u64> for Duration {
    type Output = Duration;
    fn mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
}
impl Div<u64> for Duration {
    type Output = Duration;
    fn div(self, k: u64) -> Duration {
        Duration(self.0 / k)
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmission_time_is_size_over_rate() {
        // 1000 bytes at 1.5 Mb/s = 8000 / 1.5e6 s = 5.333333 ms
        assert_eq!(Duration::transmission(1000, 1_500_000).as_nanos(), 5_333_333);
        // 1500 bytes at 10 Mb/s = 1.2 ms exactly
        assert_eq!(Duration::transmission(1500, 10_000_000).as_nanos(), 1_200_000);
        // rounding to nearest: 1 byte at 3 bit/s = 2.6666..s
        assert_eq!(Duration::transmission(1, 3).as_nanos(), 2_666_666_667);
    }

    #[test]
    fn transmission_in_64_bits_is_the_128_bit_quotient() {
        let exact = |b: u32, r: u64| {
            let (n, r) = (b as u128 * 8_000_000_000, r as u128);
            ((n + r / 2) / r) as u64
        };
        let mut rng = crate::rng::Rng::seed_from_u64(5);
        for _ in 0..100_000 {
            let b = match rng.below(3) {
                0 => rng.below(70_000) as u32,
                1 => rng.below(u32::MAX as u64 + 1) as u32,
                _ => u32::MAX - rng.below(4) as u32,
            };
            let r = match rng.below(3) {
                0 => 1 + rng.below(100_000_000_000),
                1 => 1 + rng.below(u64::MAX - 1),
                _ => u64::MAX - rng.below(4),
            };
            assert_eq!(Duration::transmission(b, r).as_nanos(), exact(b, r), "{b} bytes at {r} b/s");
        }
    }

    #[test]
    fn seconds_round_trip_and_saturate() {
        assert_eq!(Instant::from_secs_f64(1.5).as_nanos(), 1_500_000_000);
        assert_eq!(Duration::from_secs_f64(-3.0), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(f64::NAN), Duration::ZERO);
        assert_eq!(Instant::from_nanos(5) - Instant::from_nanos(9), Duration::ZERO);
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
    }
}
