//! The LE-SBCC filter cascade's stages 1-4 and 5a (§2.1, Appendix A): RTT estimation, LI to LE,
//! Max-LPRF, the adaptive time filter, and the rate AIMD.

use super::*;

// ------------------------------------------------------------------------------------------
// Stage 1: RTT estimation (§2.1, Appendix A estimateRTT)
// ------------------------------------------------------------------------------------------

/// SRTT and mean deviation σ from LI timing (sample = arrival of the NAK for seq j minus the
/// send time of j), starting from the initial estimate. Samples below `prune_below · SRTT` are
/// pruned, keeping one in `keep_one_in` of them (§2.1).
#[derive(Clone, Debug)]
pub struct LiRttEstimator {
    srtt: f64,
    sigma: f64,
    gain: f64,
    dev_gain: f64,
    prune_below: f64,
    keep_one_in: u32,
    low_seen: u64,
    pub accepted: u64,
    pub pruned: u64,
}

impl LiRttEstimator {
    pub fn new(cfg: &LesbccConfig) -> Self {
        let s = cfg.initial_srtt.as_secs_f64();
        LiRttEstimator {
            srtt: s,
            sigma: s / 2.0,
            gain: cfg.rtt_gain,
            dev_gain: cfg.rtt_dev_gain,
            prune_below: cfg.rtt_prune_below,
            keep_one_in: cfg.rtt_prune_keep_one_in.max(1),
            low_seen: 0,
            accepted: 0,
            pruned: 0,
        }
    }
    /// SRTT, seconds.
    pub fn srtt(&self) -> f64 {
        self.srtt
    }
    /// Mean deviation σ, seconds.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }
    /// SRTT + k·σ as a duration.
    pub fn plus_sigmas(&self, k: f64) -> Duration {
        Duration::from_secs_f64(self.srtt + k * self.sigma)
    }
    /// Offer one sample (seconds); returns whether it was used.
    pub fn sample(&mut self, r: f64) -> bool {
        if !(r.is_finite() && r >= 0.0) {
            return false;
        }
        // Every sample, the first included, moves the estimate by the gain (Appendix A
        // estimateRTT has no first-sample rule: SRTT and σ start from the initial estimate).
        if r < self.prune_below * self.srtt {
            // §2.1: exclude a large fraction of the samples far below SRTT.
            self.low_seen += 1;
            if !self.low_seen.is_multiple_of(self.keep_one_in as u64) {
                self.pruned += 1;
                return false;
            }
        }
        // Appendix A: δ = SRTT − RTT; SRTT moves toward RTT by the gain; σ += g (|δ| − σ).
        let delta = self.srtt - r;
        self.srtt -= self.gain * delta;
        self.sigma += self.dev_gain * (delta.abs() - self.sigma);
        self.accepted += 1;
        true
    }
}

// ------------------------------------------------------------------------------------------
// Stage 2: LI to LE (§2.1, Fig. 2)
// ------------------------------------------------------------------------------------------

/// Per receiver, what LI2LE must remember: for the window reading the time the last LI was
/// passed as an LE (`T_LastPassed`), for the slot reading the RTT round it was passed in.
///
/// Two readings of the paper (see [`Li2LeReading`]): [`Li2Le::offer`] is §2.1's filter and
/// Appendix A's `LI2LEfilter` (a window of SRTT + 2σ opened at the LI it passes);
/// [`Li2Le::offer_slot`] is §2's definition and §3.1.3's chain (time cut into rounds of one
/// RTT, and per receiver an LE is 1 in a round with one or more LIs). One filter serves one
/// reading (the cascade's is fixed by its configuration): both keep their value in the same
/// per-receiver column, so a receiver costs one value, not two.
#[derive(Clone, Debug, Default)]
pub struct Li2Le {
    last: LastPassed,
    /// Start of the current round (slot reading); the round clock starts at the first LI.
    round_start: Option<Instant>,
    round: u64,
    /// The reading of the first LI offered (debug builds check that it does not change).
    #[cfg(debug_assertions)]
    reading: Option<Li2LeReading>,
}

/// The per-receiver column of [`Li2Le`]: a time in ns or a round number, or [`NEVER`]. Kept in
/// 6 bytes while every value stored is below [`NARROW_NEVER`] (a time under 2^48 ns, about 78
/// hours, and a round number, which never exceeds the nanoseconds since the first LI as a
/// round lasts at least 1 ns); the first value that does not fit turns the column into 8-byte
/// values, once, keeping every value.
#[derive(Clone, Debug)]
enum LastPassed {
    Narrow(Vec<[u16; 3]>),
    Wide(Vec<u64>),
}

impl Default for LastPassed {
    fn default() -> Self {
        LastPassed::Narrow(Vec::new())
    }
}

/// A receiver never passed: no LI is offered at the end of time (`Instant::MAX`), and rounds
/// never count to `u64::MAX`.
const NEVER: u64 = u64::MAX;
/// [`NEVER`] in the 6-byte column (2^48 − 1).
const NARROW_NEVER: u64 = (1 << 48) - 1;

fn pack48(v: u64) -> [u16; 3] {
    [v as u16, (v >> 16) as u16, (v >> 32) as u16]
}

fn unpack48(p: [u16; 3]) -> u64 {
    u64::from(p[0]) | u64::from(p[1]) << 16 | u64::from(p[2]) << 32
}

impl LastPassed {
    fn ensure(&mut self, n: usize) {
        match self {
            LastPassed::Narrow(v) => grow_slim(v, n, pack48(NARROW_NEVER)),
            LastPassed::Wide(v) => grow_slim(v, n, NEVER),
        }
    }
    fn get(&self, i: usize) -> u64 {
        match self {
            LastPassed::Narrow(v) => match unpack48(v[i]) {
                NARROW_NEVER => NEVER,
                x => x,
            },
            LastPassed::Wide(v) => v[i],
        }
    }
    fn set(&mut self, i: usize, x: u64) {
        if let LastPassed::Narrow(v) = self {
            if x < NARROW_NEVER {
                v[i] = pack48(x);
                return;
            }
            let mut wide = Vec::with_capacity(v.capacity());
            wide.extend(v.iter().map(|&p| match unpack48(p) {
                NARROW_NEVER => NEVER,
                y => y,
            }));
            *self = LastPassed::Wide(wide);
        }
        if let LastPassed::Wide(v) = self {
            v[i] = x;
        }
    }
    fn heap_bytes(&self) -> usize {
        match self {
            LastPassed::Narrow(v) => v.capacity() * std::mem::size_of::<[u16; 3]>(),
            LastPassed::Wide(v) => v.capacity() * std::mem::size_of::<u64>(),
        }
    }
    fn is_narrow(&self) -> bool {
        matches!(self, LastPassed::Narrow(_))
    }
}

impl Li2Le {
    /// Make room for receivers `0..n` (grows only when a new receiver appears).
    pub fn ensure(&mut self, n: usize) {
        self.last.ensure(n);
    }
    /// Bytes of its per-receiver table (allocated capacity).
    pub fn heap_bytes(&self) -> usize {
        self.last.heap_bytes()
    }
    /// Whether the per-receiver values are still held in 6 bytes each.
    pub fn is_narrow(&self) -> bool {
        self.last.is_narrow()
    }
    #[cfg(debug_assertions)]
    fn check_reading(&mut self, r: Li2LeReading) {
        debug_assert_eq!(*self.reading.get_or_insert(r), r, "one Li2Le serves one reading");
    }
    #[cfg(not(debug_assertions))]
    fn check_reading(&mut self, _: Li2LeReading) {}
    /// An LI from `rcv` at `now`: an LE if more than `window` (SRTT + 2σ) since the last pass.
    pub fn offer(&mut self, now: Instant, rcv: usize, window: Duration) -> bool {
        self.check_reading(Li2LeReading::Window);
        self.ensure(rcv + 1);
        debug_assert!(now != Instant::MAX);
        let t = self.last.get(rcv);
        let pass = t == NEVER || now.saturating_since(Instant::from_nanos(t)) > window;
        if pass {
            self.last.set(rcv, now.as_nanos());
        }
        pass
    }
    /// An LI from `rcv` at `now`, slot reading (§2: "an LE is a per-receiver binary number
    /// which is 1 when one or more LIs are generated per RTT per receiver"; §3.1.3's chain
    /// counts one per round): an LE if it is the receiver's first LI of the current round.
    /// The rounds are one source-wide clock that starts at the first LI; each boundary is
    /// `slot` (the current SRTT) after the previous one, the length read when an LI crosses
    /// it (a gap of several rounds advances by whole slots of the current length).
    pub fn offer_slot(&mut self, now: Instant, rcv: usize, slot: Duration) -> bool {
        self.check_reading(Li2LeReading::Slot);
        self.ensure(rcv + 1);
        let start = *self.round_start.get_or_insert(now);
        let slot_ns = slot.as_nanos().max(1);
        let gone = now.saturating_since(start).as_nanos() / slot_ns;
        if gone > 0 {
            self.round += gone;
            self.round_start = Some(start + Duration::from_nanos(gone * slot_ns));
        }
        debug_assert!(now != Instant::MAX && self.round != NEVER);
        let r = self.last.get(rcv);
        let pass = r == NEVER || self.round > r;
        if pass {
            self.last.set(rcv, self.round);
        }
        pass
    }
    /// The current round of the slot reading (0 before the first LI).
    pub fn round(&self) -> u64 {
        self.round
    }
}

// ------------------------------------------------------------------------------------------
// Stage 3: Max-LPRF (§2.1, Fig. 3)
// ------------------------------------------------------------------------------------------

/// Per-receiver LE counts X_i; passes each LE with probability max X_i / Σ X_i.
#[derive(Clone, Debug, Default)]
pub struct MaxLprf {
    x: Vec<f64>,
    sum: f64,
    max: f64,
}

impl MaxLprf {
    pub fn ensure(&mut self, n: usize) {
        grow_slim(&mut self.x, n, 0.0);
    }
    /// Bytes of its per-receiver counts (allocated capacity).
    pub fn heap_bytes(&self) -> usize {
        self.x.capacity() * std::mem::size_of::<f64>()
    }
    /// Count an LE from `rcv` and return the acceptance probability max X_i / Σ X_i (after the
    /// update, Appendix A `maxLPRFilter`).
    pub fn count(&mut self, rcv: usize) -> f64 {
        self.ensure(rcv + 1);
        self.x[rcv] += 1.0;
        self.sum += 1.0;
        if self.x[rcv] > self.max {
            self.max = self.x[rcv];
        }
        self.max / self.sum
    }
    /// Count an LE and decide with the uniform draw `u` in [0, 1).
    pub fn offer(&mut self, rcv: usize, u: f64) -> bool {
        u < self.count(rcv)
    }
    /// Multiply every count by `factor` (the periodic 10 % decay).
    pub fn decay(&mut self, factor: f64) {
        let mut s = 0.0;
        for v in &mut self.x {
            *v *= factor;
            s += *v;
        }
        self.sum = s;
        self.max *= factor;
    }
    pub fn counts(&self) -> &[f64] {
        &self.x
    }
    pub fn ratio(&self) -> f64 {
        if self.sum > 0.0 {
            self.max / self.sum
        } else {
            0.0
        }
    }
}

// ------------------------------------------------------------------------------------------
// Stage 4: adaptive time filter (§2.1, Fig. 4, Appendix A ATFilter)
// ------------------------------------------------------------------------------------------

/// At most one rate reduction per congestion epoch; a silence period at the start of each.
#[derive(Clone, Debug, Default)]
pub struct Atf {
    epoch_end: Option<Instant>,
    silence_end: Option<Instant>,
}

impl Atf {
    /// Appendix A `CongestionFlag`.
    pub fn congested(&self, now: Instant) -> bool {
        self.epoch_end.is_some_and(|t| now < t)
    }
    /// Appendix A `SilenceFlag`.
    pub fn silenced(&self, now: Instant) -> bool {
        self.silence_end.is_some_and(|t| now < t)
    }
    pub fn silence_end(&self) -> Option<Instant> {
        self.silence_end
    }
    pub fn epoch_end(&self) -> Option<Instant> {
        self.epoch_end
    }
    /// An LE passed by Max-LPRF: filtered inside an epoch; otherwise accepted, starting a
    /// silence period of `silence` and an epoch of `silence + epoch` (Appendix A).
    pub fn offer(&mut self, now: Instant, silence: Duration, epoch: Duration) -> bool {
        if self.congested(now) {
            return false;
        }
        self.silence_end = Some(now + silence);
        self.epoch_end = Some(now + silence + epoch);
        true
    }
}

// ------------------------------------------------------------------------------------------
// Stage 5a: rate AIMD (Appendix A)
// ------------------------------------------------------------------------------------------

/// The sending rate under AIMD.
#[derive(Clone, Debug)]
pub struct Aimd {
    pub rate_bps: f64,
    min_bps: f64,
    max_bps: f64,
    mss_bits: f64,
    decrease: f64,
}

impl Aimd {
    pub fn new(cfg: &LesbccConfig) -> Self {
        Aimd {
            rate_bps: cfg.initial_rate_bps.clamp(cfg.min_rate_bps, cfg.max_rate_bps),
            min_bps: cfg.min_rate_bps,
            max_bps: cfg.max_rate_bps,
            mss_bits: cfg.packet_bytes as f64 * 8.0,
            decrease: cfg.decrease_factor,
        }
    }
    /// A rate reduction: rate = rate · 1/2.
    pub fn decrease(&mut self) {
        self.rate_bps = (self.rate_bps * self.decrease).max(self.min_bps);
    }
    /// One increase interval without a reduction: rate += MSS / (SRTT + 2σ).
    pub fn increase(&mut self, interval_s: f64) {
        self.rate_bps = (self.rate_bps + self.mss_bits / interval_s.max(1e-6)).min(self.max_bps);
    }
    pub fn set(&mut self, bps: f64) {
        self.rate_bps = bps.clamp(self.min_bps, self.max_bps);
    }
}
