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
pub struct RttEstimator {
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

impl RttEstimator {
    pub fn new(cfg: &LesbccConfig) -> Self {
        let s = cfg.initial_srtt.as_secs_f64();
        RttEstimator {
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

/// Per receiver, the time the last LI was passed as an LE (`T_LastPassed`), and for the slot
/// reading the RTT round it was passed in.
///
/// Two readings of the paper (see [`Li2LeReading`]): [`Li2Le::offer`] is §2.1's filter and
/// Appendix A's `LI2LEfilter` (a window of SRTT + 2σ opened at the LI it passes);
/// [`Li2Le::offer_slot`] is §2's definition and §3.1.3's chain (time cut into rounds of one
/// RTT, and per receiver an LE is 1 in a round with one or more LIs).
#[derive(Clone, Debug, Default)]
pub struct Li2Le {
    /// `NEVER` for a receiver never passed (8 bytes per receiver; an `Option` takes 16).
    last_pass: Vec<Instant>,
    /// `NO_ROUND` for a receiver never passed.
    last_round: Vec<u64>,
    /// Start of the current round (slot reading); the round clock starts at the first LI.
    round_start: Option<Instant>,
    round: u64,
}

/// `Li2Le::last_pass` of a receiver never passed (no LI is offered at the end of time).
const NEVER: Instant = Instant::MAX;
/// `Li2Le::last_round` of a receiver never passed (rounds count RTTs from 0: never this many).
const NO_ROUND: u64 = u64::MAX;

impl Li2Le {
    /// Make room for receivers `0..n` (grows only when a new receiver appears).
    pub fn ensure(&mut self, n: usize) {
        if self.last_pass.len() < n {
            self.last_pass.resize(n, NEVER);
            self.last_round.resize(n, NO_ROUND);
        }
    }
    /// Bytes of its per-receiver tables (allocated capacity).
    pub fn heap_bytes(&self) -> usize {
        self.last_pass.capacity() * std::mem::size_of::<Instant>()
            + self.last_round.capacity() * std::mem::size_of::<u64>()
    }
    /// An LI from `rcv` at `now`: an LE if more than `window` (SRTT + 2σ) since the last pass.
    pub fn offer(&mut self, now: Instant, rcv: usize, window: Duration) -> bool {
        self.ensure(rcv + 1);
        debug_assert!(now != NEVER);
        let t = self.last_pass[rcv];
        let pass = t == NEVER || now.saturating_since(t) > window;
        if pass {
            self.last_pass[rcv] = now;
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
        self.ensure(rcv + 1);
        let start = *self.round_start.get_or_insert(now);
        let slot_ns = slot.as_nanos().max(1);
        let gone = now.saturating_since(start).as_nanos() / slot_ns;
        if gone > 0 {
            self.round += gone;
            self.round_start = Some(start + Duration::from_nanos(gone * slot_ns));
        }
        debug_assert!(now != NEVER && self.round != NO_ROUND);
        let r = self.last_round[rcv];
        let pass = r == NO_ROUND || self.round > r;
        if pass {
            self.last_round[rcv] = self.round;
            self.last_pass[rcv] = now;
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
        if self.x.len() < n {
            self.x.resize(n, 0.0);
        }
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
