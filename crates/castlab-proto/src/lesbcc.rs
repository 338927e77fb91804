//! LE-SBCC: loss-event oriented source-based multicast congestion control (Thapliyal,
//! Sidhartha, Li, Kalyanaraman), the source side.
//!
//! The source turns the stream of loss indications (LIs: the NAKs of the PGM-like transport
//! in [`crate::pgm`]) into rate changes through the cascade of §2.1 (Fig. 1, Appendix A):
//!
//! 1. [`RttEstimator`]: SRTT and mean deviation σ from LI timing, samples far below SRTT
//!    pruned (§2.1 "RTT Estimation", Appendix A `estimateRTT`);
//! 2. [`Li2Le`]: per receiver, an LI becomes a loss event (LE) only if it comes more than
//!    SRTT + 2σ after the last one passed (§2.1, Fig. 2);
//! 3. [`MaxLprf`]: each LE passes with probability max X_i / Σ X_i over the per-receiver LE
//!    counts X_i, decayed by 10 % every 100 SRTT (§2.1, Fig. 3);
//! 4. [`Atf`]: at most one rate reduction per congestion epoch, with a silence period in
//!    which nothing is sent (§2.1, Fig. 4, Appendix A `ATFilter`);
//! 5. the rate policy: [`Aimd`] (halve on a reduction, add MSS / (SRTT + 2σ) every increase
//!    interval SRTT + 2σ, Appendix A) or the TFRC module of §4 ([`LossHistory`] and
//!    [`padhye_rate`]).
//!
//! Each stage is its own unit, testable by hand, and stages 2-4 can be switched off
//! ([`LesbccConfig`]) for the ablations of §3.1.2. [`Cascade`] chains them; [`LesbccSource`] is
//! the sans-IO agent that puts the cascade on top of the PGM transmit side (ODATA, RDATA, NCF);
//! [`run_synthetic`] drives the cascade directly with synthetic LI streams (the set-up of
//! §3.1.4, Fig. 11: one router, constant RTTs, independent uniform losses).

use core::any::Any;
use std::collections::{HashMap, VecDeque};

use castlab_core::{
    Addr, Agent, AgentEvent, ConfigError, Dest, Duration, Header, Instant, Packet, PgmHeader, Rng, StartInfo,
    TimerTable,
};

// ------------------------------------------------------------------------------------------
// Configuration
// ------------------------------------------------------------------------------------------

/// The rate policy fed by the cascade.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RatePolicy {
    /// Rate-based AIMD of §2.1 / Appendix A.
    Aimd,
    /// The TFRC module of §4.
    Tfrc,
}

/// Parameters of an LE-SBCC source. `Default` is the paper's values where it gives them; the
/// others are marked "paper silent" with the choice made here.
#[derive(Clone, Debug, PartialEq)]
pub struct LesbccConfig {
    /// Data packet size on the wire (ODATA and RDATA), bytes; also the MSS of the increase
    /// rule and `s` of the TFRC equation. Default 560 (§3.1.1, §3.2.1).
    pub packet_bytes: u32,
    /// Size of NCF and SPM packets, bytes. Paper silent: 40.
    pub control_bytes: u32,
    /// Starting rate. Default 200 kb/s (§5.2.1, "Source initial transmission rate").
    pub initial_rate_bps: f64,
    /// Floor of the rate. Paper silent: one packet per second (4480 b/s at 560 bytes).
    pub min_rate_bps: f64,
    /// Ceiling of the rate. Paper silent: none (infinite).
    pub max_rate_bps: f64,
    /// SRTT before any sample. Default 200 ms (§5.2.1, "Source initial RTT estimate"); σ starts
    /// at half of it and the first sample replaces both (SRTT = R, σ = R/2, as TCP's RFC 6298
    /// §2.2; the paper is silent on the first sample).
    pub initial_srtt: Duration,
    /// Gain of SRTT on a new sample. Default 1/8: §2.1 says the estimator "works similar to the
    /// TCP timeout procedure". (Appendix A as printed reads SRTT = RTT + 0.125·δ with
    /// δ = SRTT − RTT, which would give the new sample weight 7/8; we read it as TCP's rule.)
    pub rtt_gain: f64,
    /// Gain of the mean deviation σ. Default 1/8 (Appendix A: σ += 0.125 (|δ| − σ)).
    pub rtt_dev_gain: f64,
    /// Samples below this fraction of SRTT are pruned. Default 0.5 ("smaller than SRTT/2", §2.1).
    pub rtt_prune_below: f64,
    /// Of the samples below the pruning threshold, one in this many is kept (the rest are
    /// dropped). §2.1 prunes "a large fraction" without a number: we keep 1 in 10 (prune 90 %),
    /// counted deterministically.
    pub rtt_prune_keep_one_in: u32,
    /// Stage switches, for the ablations of §3.1.2 (Fig. 7). Default all on.
    pub li2le: bool,
    pub max_lprf: bool,
    pub atf: bool,
    /// The ATF's silence period (no data sent). Default on (§2.1, Appendix A).
    pub silence: bool,
    /// LI2LE passes an LI if it comes more than SRTT + k·σ after the last passed. Default k = 2.
    pub li2le_sigmas: f64,
    /// Max-LPRF counts are multiplied by this every `lprf_decay_every_srtts` SRTTs. Default 0.9
    /// ("decayed periodically by 10 % every 100 SRTTs", §2.1).
    pub lprf_decay_factor: f64,
    pub lprf_decay_every_srtts: f64,
    /// ATF epoch: silence + SRTT + k·σ with k = 4 (Appendix A `CongestionEpochTimer`; §2.1
    /// "at most one rate reduction per SRTT + 4σ").
    pub atf_sigmas: f64,
    /// Silence period: SRTT/2 + k·σ with k = 2 (Appendix A `SilencePeriodTimer` = RTT/2 + 2σ,
    /// i.e. ½(SRTT + 4σ) of §2.1).
    pub silence_sigmas: f64,
    /// Increase interval (and increase step MSS / interval) SRTT + k·σ, k = 2 (Appendix A).
    pub increase_sigmas: f64,
    /// Multiplicative decrease. Default 0.5 ("rate = rate/2", Appendix A).
    pub decrease_factor: f64,
    /// AIMD (§2) or TFRC (§4). Default AIMD.
    pub policy: RatePolicy,
    /// TFRC weights w_1..w_n. Default n = 8, all 1 (§4.1).
    pub tfrc_weights: Vec<f64>,
    /// TFRC history discount α. Default 0.95 (§4.1).
    pub tfrc_alpha: f64,
    /// Loss intervals kept for the discounted tail. Paper silent (the sum runs to N): 256; with
    /// α = 0.95 the weight of the 248th discounted term is below 3e-6.
    pub tfrc_history: usize,
    /// Transmit window, packets: the source keeps send times and can repair this many most
    /// recent sequence numbers. Paper silent: 65536.
    pub transmit_window_pkts: usize,
    /// Number of ODATA packets to send; `None` sends for ever (bulk). Default `None`.
    pub total_packets: Option<u64>,
    /// After the last ODATA of a finite transfer, this many SPM window advertisements are sent,
    /// one every `heartbeat_interval`, so that receivers notice a lost tail. Paper silent: 3
    /// every 500 ms.
    pub tail_heartbeats: u32,
    pub heartbeat_interval: Duration,
}

impl Default for LesbccConfig {
    fn default() -> Self {
        LesbccConfig {
            packet_bytes: 560,
            control_bytes: 40,
            initial_rate_bps: 200e3,
            min_rate_bps: 560.0 * 8.0,
            max_rate_bps: f64::INFINITY,
            initial_srtt: Duration::from_millis(200),
            rtt_gain: 0.125,
            rtt_dev_gain: 0.125,
            rtt_prune_below: 0.5,
            rtt_prune_keep_one_in: 10,
            li2le: true,
            max_lprf: true,
            atf: true,
            silence: true,
            li2le_sigmas: 2.0,
            lprf_decay_factor: 0.9,
            lprf_decay_every_srtts: 100.0,
            atf_sigmas: 4.0,
            silence_sigmas: 2.0,
            increase_sigmas: 2.0,
            decrease_factor: 0.5,
            policy: RatePolicy::Aimd,
            tfrc_weights: vec![1.0; 8],
            tfrc_alpha: 0.95,
            tfrc_history: 256,
            transmit_window_pkts: 1 << 16,
            total_packets: None,
            tail_heartbeats: 3,
            heartbeat_interval: Duration::from_millis(500),
        }
    }
}

impl LesbccConfig {
    /// Check every field; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        use castlab_core::config::check::{in_closed, in_open_closed, nonzero, packet_rate, positive};
        let nonneg = |name: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(ConfigError::new(name, v, "must be finite and >= 0"))
            }
        };
        let at_least_one = |name: &str, v: u64| {
            if v >= 1 {
                Ok(())
            } else {
                Err(ConfigError::new(name, v, "must be at least 1"))
            }
        };
        at_least_one("packet_bytes", self.packet_bytes.into())?;
        at_least_one("control_bytes", self.control_bytes.into())?;
        packet_rate("initial_rate_bps", self.initial_rate_bps, self.packet_bytes)?;
        packet_rate("min_rate_bps", self.min_rate_bps, self.packet_bytes)?;
        if self.max_rate_bps.is_nan() || self.max_rate_bps <= 0.0 || self.max_rate_bps < self.min_rate_bps {
            return Err(ConfigError::new("max_rate_bps", self.max_rate_bps, "must be >= min_rate_bps"));
        }
        if self.max_rate_bps.is_finite() {
            packet_rate("max_rate_bps", self.max_rate_bps, self.packet_bytes)?;
        }
        nonzero("initial_srtt", self.initial_srtt)?;
        in_open_closed("rtt_gain", self.rtt_gain, 0.0, 1.0)?;
        in_open_closed("rtt_dev_gain", self.rtt_dev_gain, 0.0, 1.0)?;
        nonneg("rtt_prune_below", self.rtt_prune_below)?;
        at_least_one("rtt_prune_keep_one_in", self.rtt_prune_keep_one_in.into())?;
        nonneg("li2le_sigmas", self.li2le_sigmas)?;
        in_open_closed("lprf_decay_factor", self.lprf_decay_factor, 0.0, 1.0)?;
        positive("lprf_decay_every_srtts", self.lprf_decay_every_srtts)?;
        nonneg("atf_sigmas", self.atf_sigmas)?;
        nonneg("silence_sigmas", self.silence_sigmas)?;
        nonneg("increase_sigmas", self.increase_sigmas)?;
        in_open_closed("decrease_factor", self.decrease_factor, 0.0, 1.0)?;
        let w = &self.tfrc_weights;
        if w.is_empty() || w.iter().any(|w| !(w.is_finite() && *w >= 0.0)) || w.iter().sum::<f64>() <= 0.0 {
            return Err(ConfigError::new(
                "tfrc_weights",
                format!("{w:?}"),
                "needs at least one weight, each finite and >= 0, not all zero",
            ));
        }
        in_closed("tfrc_alpha", self.tfrc_alpha, 0.0, 1.0)?;
        if self.tfrc_history < self.tfrc_weights.len() {
            return Err(ConfigError::new("tfrc_history", self.tfrc_history, "must be at least the number of weights"));
        }
        at_least_one("transmit_window_pkts", self.transmit_window_pkts as u64)?;
        if self.total_packets == Some(0) {
            return Err(ConfigError::new("total_packets", 0, "must be positive (None for a bulk transfer)"));
        }
        if self.tail_heartbeats > 0 {
            nonzero("heartbeat_interval", self.heartbeat_interval)?;
        }
        Ok(())
    }
}

castlab_core::config_enum!(RatePolicy { Aimd => "aimd", Tfrc => "tfrc" });

castlab_core::config_fields!(LesbccConfig {
    packet_bytes,
    control_bytes,
    initial_rate_bps,
    min_rate_bps,
    max_rate_bps,
    initial_srtt,
    rtt_gain,
    rtt_dev_gain,
    rtt_prune_below,
    rtt_prune_keep_one_in,
    li2le,
    max_lprf,
    atf,
    silence,
    li2le_sigmas,
    lprf_decay_factor,
    lprf_decay_every_srtts,
    atf_sigmas,
    silence_sigmas,
    increase_sigmas,
    decrease_factor,
    policy,
    tfrc_weights,
    tfrc_alpha,
    tfrc_history,
    transmit_window_pkts,
    total_packets,
    tail_heartbeats,
    heartbeat_interval,
});

// ------------------------------------------------------------------------------------------
// Stage 1: RTT estimation (§2.1, Appendix A estimateRTT)
// ------------------------------------------------------------------------------------------

/// SRTT and mean deviation σ from LI timing (sample = arrival of the NAK for seq j minus the
/// send time of j). Samples below `prune_below · SRTT` are pruned, keeping one in
/// `keep_one_in` of them (§2.1).
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: f64,
    sigma: f64,
    has_sample: bool,
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
            has_sample: false,
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
        if !self.has_sample {
            // First sample: SRTT = R, σ = R/2 (RFC 6298 §2.2; the paper is silent).
            self.srtt = r;
            self.sigma = r / 2.0;
            self.has_sample = true;
            self.accepted += 1;
            return true;
        }
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

/// Per receiver, the time the last LI was passed as an LE (`T_LastPassed`).
#[derive(Clone, Debug, Default)]
pub struct Li2Le {
    last_pass: Vec<Option<Instant>>,
}

impl Li2Le {
    /// Make room for receivers `0..n` (grows only when a new receiver appears).
    pub fn ensure(&mut self, n: usize) {
        if self.last_pass.len() < n {
            self.last_pass.resize(n, None);
        }
    }
    /// An LI from `rcv` at `now`: an LE if more than `window` (SRTT + 2σ) since the last pass.
    pub fn offer(&mut self, now: Instant, rcv: usize, window: Duration) -> bool {
        self.ensure(rcv + 1);
        let pass = match self.last_pass[rcv] {
            None => true,
            Some(t) => now.saturating_since(t) > window,
        };
        if pass {
            self.last_pass[rcv] = Some(now);
        }
        pass
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

// ------------------------------------------------------------------------------------------
// Stage 5b: the TFRC module (§4.1)
// ------------------------------------------------------------------------------------------

/// Loss intervals counted at the source from the LE stream (§4.1). `s_0` is the number of
/// packets sent since the most recent LE; `s_1, s_2, ...` the earlier intervals, newest first.
/// The first interval runs from the start of the transfer to the first LE.
#[derive(Clone, Debug)]
pub struct LossHistory {
    s0: u64,
    /// s_1 at the front.
    intervals: VecDeque<u64>,
    weights: Vec<f64>,
    alpha: f64,
    cap: usize,
    /// Total number of loss intervals N since the start (the deque keeps the newest `cap`).
    pub total: u64,
}

impl LossHistory {
    pub fn new(weights: Vec<f64>, alpha: f64, cap: usize) -> Self {
        let cap = cap.max(weights.len()).max(1);
        LossHistory { s0: 0, intervals: VecDeque::with_capacity(cap), weights, alpha, cap, total: 0 }
    }
    pub fn from_config(cfg: &LesbccConfig) -> Self {
        LossHistory::new(cfg.tfrc_weights.clone(), cfg.tfrc_alpha, cfg.tfrc_history)
    }
    /// A packet was sent.
    pub fn on_packet(&mut self) {
        self.s0 += 1;
    }
    /// A loss event: s_0 becomes s_1.
    pub fn on_loss_event(&mut self) {
        if self.intervals.len() == self.cap {
            self.intervals.pop_back();
        }
        self.intervals.push_front(self.s0);
        self.s0 = 0;
        self.total += 1;
    }
    pub fn s0(&self) -> u64 {
        self.s0
    }
    /// A loss event after `packets` packets since the previous one (for hand-made histories).
    pub fn push_interval(&mut self, packets: u64) {
        self.s0 = packets;
        self.on_loss_event();
    }
    /// Set s_0, the packets since the most recent loss event.
    pub fn set_s0(&mut self, packets: u64) {
        self.s0 = packets;
    }
    /// s_k for k >= 0 (None beyond the history).
    pub fn s(&self, k: usize) -> Option<u64> {
        if k == 0 {
            Some(self.s0)
        } else {
            self.intervals.get(k - 1).copied()
        }
    }
    /// Number of loss intervals held (N, up to the history cap).
    pub fn n_intervals(&self) -> usize {
        self.intervals.len()
    }
    /// ŝ_i of §4.1:
    /// (Σ_{k=1..n} s_{i+k−1} w_k + Σ_{k=i+n..N} s_k α^{k−i−n+1}) /
    /// (Σ_{k=1..n} w_k + Σ_{k=i+n..N} α^{k−i−n+1}).
    /// Short histories (§4.1): the weights of the missing terms are 0 (N < n: w_{N+1..n} = 0,
    /// and the discounted tail is empty, i.e. α = 0, while N <= n). None when no term exists.
    pub fn average(&self, i: usize) -> Option<f64> {
        let n = self.weights.len();
        let big_n = self.intervals.len();
        let (mut num, mut den) = (0.0, 0.0);
        for k in 1..=n {
            let idx = i + k - 1;
            if idx > big_n {
                break;
            }
            let w = self.weights[k - 1];
            num += self.s(idx).expect("in range") as f64 * w;
            den += w;
        }
        let mut a = self.alpha;
        for k in (i + n)..=big_n {
            num += self.s(k).expect("in range") as f64 * a;
            den += a;
            a *= self.alpha;
        }
        if den > 0.0 {
            Some(num / den)
        } else {
            None
        }
    }
}

/// The TCP throughput equation of §4.1 (Padhye et al.), bytes per second:
/// T = s / (R √(2p/3) + t_RTO · 3 √(3p/8) · p (1 + 32 p²)).
pub fn padhye_rate(s_bytes: f64, rtt_s: f64, p: f64, t_rto_s: f64) -> f64 {
    let p = p.clamp(1e-12, 1.0);
    let den = rtt_s * (2.0 * p / 3.0).sqrt() + t_rto_s * 3.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p);
    if den > 0.0 {
        s_bytes / den
    } else {
        f64::INFINITY
    }
}

// ------------------------------------------------------------------------------------------
// The cascade
// ------------------------------------------------------------------------------------------

/// Where an LI stopped in the cascade.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiOutcome {
    /// Filtered by LI2LE (not a new LE).
    Li2Le,
    /// An LE that Max-LPRF did not pass.
    MaxLprf,
    /// Passed Max-LPRF, filtered by the ATF (inside a congestion epoch).
    Atf,
    /// Led to a rate reduction (AIMD) or a loss event of the TFRC history.
    Reduced,
}

/// Counters of the cascade (§3.1.1 reports them for the main source).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CascadeStats {
    /// LIs received (every NAK).
    pub lis: u64,
    /// LEs out of LI2LE (equal to `lis` when LI2LE is off).
    pub les: u64,
    /// LEs passed by Max-LPRF (equal to `les` when it is off).
    pub lprf_passed: u64,
    /// Rate reductions (AIMD) or loss events taken into the TFRC history.
    pub rate_reductions: u64,
    pub rate_increases: u64,
    pub rtt_samples: u64,
    pub rtt_pruned: u64,
    pub lprf_decays: u64,
}

/// Columnar records of a source, times in ns since the start of the run.
#[derive(Clone, Debug, Default)]
pub struct LesbccRecords {
    /// One row whenever the rate changed (and the initial rate).
    pub rate_time_ns: Vec<u64>,
    pub rate_bps: Vec<f64>,
    /// One row per RTT sample offered: the sample and SRTT/σ after it, and whether it was used.
    pub rtt_time_ns: Vec<u64>,
    pub rtt_sample_s: Vec<f64>,
    pub srtt_s: Vec<f64>,
    pub sigma_s: Vec<f64>,
    pub rtt_used: Vec<bool>,
    /// One row per LI: time, receiver index, and the stage reached ([`LiOutcome`] as u8:
    /// 0 LI2LE, 1 Max-LPRF, 2 ATF, 3 reduction).
    pub li_time_ns: Vec<u64>,
    pub li_receiver: Vec<u32>,
    pub li_outcome: Vec<u8>,
}

const C_INCREASE: usize = 0;
const C_DECAY: usize = 1;
const C_TFRC: usize = 2;

/// The whole source-side cascade: RTT estimator, LI2LE, Max-LPRF, ATF and the rate policy.
#[derive(Clone, Debug)]
pub struct Cascade {
    cfg: LesbccConfig,
    pub rtt: RttEstimator,
    pub li2le: Li2Le,
    pub lprf: MaxLprf,
    pub atf: Atf,
    pub aimd: Aimd,
    pub history: LossHistory,
    /// Current TFRC average loss interval ŝ (None before the first LE).
    s_hat: Option<f64>,
    rng: Rng,
    timers: TimerTable<3>,
    pub stats: CascadeStats,
    pub records: LesbccRecords,
    /// Record one row per LI and per RTT sample (off in the synthetic drive of large trees).
    pub record_lis: bool,
    last_rate: f64,
    rate_dirty: bool,
}

impl Cascade {
    pub fn new(cfg: &LesbccConfig, rng: Rng) -> Self {
        let aimd = Aimd::new(cfg);
        Cascade {
            cfg: cfg.clone(),
            rtt: RttEstimator::new(cfg),
            li2le: Li2Le::default(),
            lprf: MaxLprf::default(),
            atf: Atf::default(),
            last_rate: aimd.rate_bps,
            aimd,
            history: LossHistory::from_config(cfg),
            s_hat: None,
            rng,
            timers: TimerTable::default(),
            stats: CascadeStats::default(),
            records: LesbccRecords::default(),
            record_lis: true,
            rate_dirty: true,
        }
    }

    pub fn config(&self) -> &LesbccConfig {
        &self.cfg
    }

    /// Arm the periodic timers; call once at the start.
    pub fn start(&mut self, now: Instant) {
        self.timers.set(C_INCREASE, now + self.rtt.plus_sigmas(self.cfg.increase_sigmas));
        self.timers.set(C_DECAY, now + self.decay_period());
        if self.cfg.policy == RatePolicy::Tfrc {
            self.timers.set(C_TFRC, now + self.rtt.plus_sigmas(0.0));
        }
        self.note_rate(now);
    }

    fn decay_period(&self) -> Duration {
        Duration::from_secs_f64((self.rtt.srtt() * self.cfg.lprf_decay_every_srtts).max(1e-3))
    }

    pub fn rate_bps(&self) -> f64 {
        self.aimd.rate_bps
    }
    pub fn srtt(&self) -> f64 {
        self.rtt.srtt()
    }
    pub fn sigma(&self) -> f64 {
        self.rtt.sigma()
    }
    /// The ATF silence is on and data must not be sent.
    pub fn silenced(&self, now: Instant) -> bool {
        self.cfg.silence && self.cfg.atf && self.atf.silenced(now)
    }
    pub fn silence_end(&self) -> Option<Instant> {
        if self.cfg.silence && self.cfg.atf {
            self.atf.silence_end()
        } else {
            None
        }
    }
    /// The current TFRC average loss interval ŝ, packets.
    pub fn s_hat(&self) -> Option<f64> {
        self.s_hat
    }

    /// A data packet was sent (TFRC counts loss intervals in packets).
    pub fn on_send(&mut self) {
        self.history.on_packet();
    }

    /// The rate changed since the last call: the new rate.
    pub fn take_rate_change(&mut self) -> Option<f64> {
        if self.rate_dirty {
            self.rate_dirty = false;
            Some(self.aimd.rate_bps)
        } else {
            None
        }
    }

    fn note_rate(&mut self, now: Instant) {
        let r = self.aimd.rate_bps;
        if r != self.last_rate || self.records.rate_time_ns.is_empty() {
            self.records.rate_time_ns.push(now.as_nanos());
            self.records.rate_bps.push(r);
            self.last_rate = r;
            self.rate_dirty = true;
        }
    }

    /// One LI from receiver `rcv`, for a packet sent at `sent_at` (None: unknown, e.g. outside
    /// the transmit window: no RTT sample). Appendix A, event "LI received".
    pub fn on_li(&mut self, now: Instant, rcv: usize, sent_at: Option<Instant>) -> LiOutcome {
        self.stats.lis += 1;
        if let Some(t) = sent_at {
            let r = now.saturating_since(t).as_secs_f64();
            let used = self.rtt.sample(r);
            if used {
                self.stats.rtt_samples += 1;
            } else {
                self.stats.rtt_pruned += 1;
            }
            if self.record_lis {
                let rec = &mut self.records;
                rec.rtt_time_ns.push(now.as_nanos());
                rec.rtt_sample_s.push(r);
                rec.srtt_s.push(self.rtt.srtt());
                rec.sigma_s.push(self.rtt.sigma());
                rec.rtt_used.push(used);
            }
        }
        let out = self.filter(now, rcv);
        if self.record_lis {
            self.records.li_time_ns.push(now.as_nanos());
            self.records.li_receiver.push(rcv as u32);
            self.records.li_outcome.push(out as u8);
        }
        self.note_rate(now);
        out
    }

    fn filter(&mut self, now: Instant, rcv: usize) -> LiOutcome {
        let cfg = &self.cfg;
        // Stage 2, LI2LE: window SRTT + 2σ.
        if cfg.li2le && !self.li2le.offer(now, rcv, self.rtt.plus_sigmas(cfg.li2le_sigmas)) {
            return LiOutcome::Li2Le;
        }
        self.stats.les += 1;
        // Stage 3, Max-LPRF.
        if cfg.max_lprf {
            let u = self.rng.uniform();
            if !self.lprf.offer(rcv, u) {
                return LiOutcome::MaxLprf;
            }
        }
        self.stats.lprf_passed += 1;
        // Stage 4, ATF: silence SRTT/2 + 2σ, epoch silence + SRTT + 4σ.
        if cfg.atf {
            let silence = Duration::from_secs_f64(0.5 * self.rtt.srtt() + cfg.silence_sigmas * self.rtt.sigma());
            let silence = if cfg.silence { silence } else { Duration::ZERO };
            if !self.atf.offer(now, silence, self.rtt.plus_sigmas(cfg.atf_sigmas)) {
                return LiOutcome::Atf;
            }
        }
        self.stats.rate_reductions += 1;
        match cfg.policy {
            RatePolicy::Aimd => self.aimd.decrease(),
            RatePolicy::Tfrc => self.tfrc_loss_event(),
        }
        LiOutcome::Reduced
    }

    /// §4.1: on an LE, ŝ_1 is computed and the rate set from p = 1/ŝ_1. Before the first LE the
    /// source increases as AIMD does (the paper is silent on TFRC's start); the first LE halves
    /// the rate if the equation would give more (a slow-start exit, as TFRC's own).
    fn tfrc_loss_event(&mut self) {
        let first = self.history.total == 0;
        self.history.on_loss_event();
        let s1 = self.history.average(1).unwrap_or(1.0).max(1.0);
        self.s_hat = Some(s1);
        let eq = self.tfrc_equation_bps(s1);
        if first {
            self.aimd.set(eq.min(self.aimd.rate_bps * self.cfg.decrease_factor));
        } else {
            self.aimd.set(eq);
        }
    }

    fn tfrc_equation_bps(&self, s_hat: f64) -> f64 {
        let p = 1.0 / s_hat.max(1.0);
        let t_rto = self.rtt.srtt() + 4.0 * self.rtt.sigma();
        8.0 * padhye_rate(self.cfg.packet_bytes as f64, self.rtt.srtt(), p, t_rto)
    }

    pub fn next_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(slot) = self.timers.expire(now) {
            match slot {
                C_INCREASE => {
                    // Appendix A RateIncreaseTimer: increase unless inside a congestion epoch.
                    let interval = self.rtt.plus_sigmas(self.cfg.increase_sigmas);
                    let congested = self.cfg.atf && self.atf.congested(now);
                    let tfrc_active = self.cfg.policy == RatePolicy::Tfrc && self.history.total > 0;
                    if !congested && !tfrc_active {
                        self.aimd.increase(interval.as_secs_f64());
                        self.stats.rate_increases += 1;
                    }
                    self.timers.set(C_INCREASE, now + interval);
                }
                C_DECAY => {
                    self.lprf.decay(self.cfg.lprf_decay_factor);
                    self.stats.lprf_decays += 1;
                    self.timers.set(C_DECAY, now + self.decay_period());
                }
                _ => {
                    // §4.1: each RTT without congestion, ŝ_0 is recomputed; ŝ = max(ŝ_0, ŝ_1).
                    if let (Some(s0), Some(s1)) = (self.history.average(0), self.history.average(1)) {
                        let s = s0.max(s1).max(1.0);
                        if self.s_hat != Some(s) {
                            self.s_hat = Some(s);
                            let eq = self.tfrc_equation_bps(s);
                            self.aimd.set(eq);
                        }
                    }
                    self.timers.set(C_TFRC, now + self.rtt.plus_sigmas(0.0).max(Duration::from_millis(1)));
                }
            }
        }
        self.note_rate(now);
    }
}

// ------------------------------------------------------------------------------------------
// The source agent: the cascade over the PGM transmit side (§5.1)
// ------------------------------------------------------------------------------------------

/// Counters of a [`LesbccSource`]'s transport.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SourceStats {
    pub odata_sent: u64,
    pub rdata_sent: u64,
    pub ncf_sent: u64,
    pub spm_sent: u64,
    pub bytes_sent: u64,
    /// NAKs for a sequence number outside the transmit window (still LIs; no repair).
    pub naks_out_of_window: u64,
    /// NAKs for a sequence number whose repair was already queued (one RDATA sent).
    pub naks_repair_pending: u64,
    /// Packets that were not a NAK of this session: counted and ignored.
    pub ignored: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct WinSlot {
    /// seq + 1 (0: empty).
    tag: u64,
    sent_at: Instant,
    repair_queued: bool,
    /// An RDATA of this sequence number has been sent.
    repaired: bool,
}

const T_SEND: usize = 0;
const T_SILENCE: usize = 1;
const T_HEARTBEAT: usize = 2;

/// An LE-SBCC source over the PGM-like transport: paces ODATA (and RDATA, which take
/// precedence) at the cascade's rate to a group (multicast) or one receiver (unicast, the
/// background flows of Fig. 5), answers each NAK with an NCF and one RDATA, and feeds every
/// NAK to the cascade as an LI. Receivers are told apart by the NAK's source address.
#[derive(Debug)]
pub struct LesbccSource {
    cfg: LesbccConfig,
    dest: Dest,
    flow: u32,
    cascade: Cascade,
    now: Instant,
    started: bool,
    /// Next ODATA sequence number (the window lead, exclusive).
    lead: u64,
    window: Vec<WinSlot>,
    repairs: VecDeque<u64>,
    ncfs: VecDeque<u64>,
    receivers: HashMap<Addr, u32>,
    receiver_addrs: Vec<Addr>,
    timers: TimerTable<3>,
    send_ready: bool,
    next_send: Instant,
    heartbeats_left: u32,
    pending_event: Option<f64>,
    pub stats: SourceStats,
}

impl LesbccSource {
    /// A source of session `flow` sending to `dest`. The error names the bad configuration
    /// field.
    pub fn try_new(dest: Dest, flow: u32, cfg: LesbccConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let w = cfg.transmit_window_pkts;
        Ok(LesbccSource {
            cascade: Cascade::new(&cfg, Rng::seed_from_u64(0)),
            dest,
            flow,
            now: Instant::ZERO,
            started: false,
            lead: 0,
            window: vec![WinSlot::default(); w],
            repairs: VecDeque::with_capacity(1024),
            ncfs: VecDeque::with_capacity(1024),
            receivers: HashMap::new(),
            receiver_addrs: Vec::new(),
            timers: TimerTable::default(),
            send_ready: false,
            next_send: Instant::ZERO,
            heartbeats_left: cfg.tail_heartbeats,
            pending_event: None,
            stats: SourceStats::default(),
            cfg,
        })
    }

    pub fn config(&self) -> &LesbccConfig {
        &self.cfg
    }
    pub fn cascade(&self) -> &Cascade {
        &self.cascade
    }
    pub fn flow(&self) -> u32 {
        self.flow
    }
    pub fn rate_bps(&self) -> f64 {
        self.cascade.rate_bps()
    }
    /// One past the highest sequence number sent.
    pub fn lead(&self) -> u64 {
        self.lead
    }
    /// Oldest sequence number the source can still repair.
    pub fn trail(&self) -> u64 {
        self.lead.saturating_sub(self.window.len() as u64)
    }
    /// Receivers seen (by the address their NAKs came from), in order of first NAK.
    pub fn receiver_addrs(&self) -> &[Addr] {
        &self.receiver_addrs
    }

    fn data_left(&self) -> bool {
        self.cfg.total_packets.is_none_or(|n| self.lead < n)
    }

    fn work_pending(&self) -> bool {
        !self.repairs.is_empty() || self.data_left()
    }

    /// Arm the pacing timer if there is something to send and the ATF is not silent.
    fn arm_send(&mut self) {
        if !self.started || self.send_ready || self.timers.is_armed(T_SEND) || !self.work_pending() {
            return;
        }
        if let Some(end) = self.cascade.silence_end().filter(|&t| self.now < t) {
            self.timers.set(T_SILENCE, end);
            return;
        }
        let at = self.next_send.max(self.now);
        if at <= self.now {
            self.send_ready = true;
        } else {
            self.timers.set(T_SEND, at);
        }
    }

    fn header(&self, kind: castlab_core::PgmKind) -> PgmHeader {
        PgmHeader { kind, trail: self.trail(), lead: self.lead }
    }

    fn packet(&self, kind: castlab_core::PgmKind, seq: u64, size: u32) -> Packet {
        let mut p = Packet::data(self.dest, size);
        p.flow = self.flow;
        p.seq = seq;
        p.header = Header::Pgm(self.header(kind));
        p
    }

    fn slot(&self, seq: u64) -> usize {
        (seq % self.window.len() as u64) as usize
    }

    fn on_nak(&mut self, now: Instant, src: Addr, seq: u64) {
        let rcv = match self.receivers.get(&src) {
            Some(&i) => i as usize,
            None => {
                let i = self.receiver_addrs.len();
                self.receivers.insert(src, i as u32);
                self.receiver_addrs.push(src);
                i
            }
        };
        let in_window = seq < self.lead && seq >= self.trail();
        let idx = self.slot(seq);
        let known = in_window && self.window[idx].tag == seq + 1;
        // RTT sample from the ODATA's send time (Appendix A, T_send[j]) only while no repair of
        // j has been sent: a NAK after a repair is a receiver's repeat (its NAK_RDATA_IVL or
        // NAK_RPT_IVL ran out), whose timing is the receiver's wait, not a round trip. Such
        // samples (seconds, against RTTs of ~0.1 s) would lift SRTT until the pruning of §2.1
        // discards the true samples. They are still LIs for the filters.
        let sample_from = if known && !self.window[idx].repaired { Some(self.window[idx].sent_at) } else { None };
        let silenced_before = self.cascade.silenced(now);
        self.cascade.on_li(now, rcv, sample_from);
        if let Some(r) = self.cascade.take_rate_change() {
            self.pending_event = Some(r);
        }
        if !silenced_before && self.cascade.silenced(now) {
            // The ATF started a silence period: hold the pacer until it ends.
            self.timers.stop(T_SEND);
            self.send_ready = false;
            if let Some(end) = self.cascade.silence_end() {
                self.timers.set(T_SILENCE, end);
            }
        }
        if !known {
            self.stats.naks_out_of_window += 1;
            return;
        }
        // PGM: confirm with an NCF (multicast), queue one repair.
        self.ncfs.push_back(seq);
        if self.window[idx].repair_queued {
            self.stats.naks_repair_pending += 1;
        } else {
            self.window[idx].repair_queued = true;
            self.repairs.push_back(seq);
            self.arm_send();
        }
    }

    fn after_input(&mut self) {
        if let Some(r) = self.cascade.take_rate_change() {
            self.pending_event = Some(r);
        }
        self.arm_send();
    }
}

impl Agent for LesbccSource {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        self.now = now;
        self.cascade = Cascade::new(&self.cfg, info.rng);
        self.cascade.start(now);
        self.started = true;
        self.next_send = now;
        self.after_input();
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        self.now = now;
        match p.header {
            Header::Pgm(h) if h.kind == PgmHeader::NAK && p.flow == self.flow => self.on_nak(now, p.src, p.seq),
            _ => self.stats.ignored += 1,
        }
        self.after_input();
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        while let Some(slot) = self.timers.expire(now) {
            match slot {
                T_SEND => self.send_ready = true,
                T_SILENCE => {}
                _ => {
                    if self.heartbeats_left > 0 {
                        self.heartbeats_left -= 1;
                        self.ncfs.push_back(u64::MAX); // marker: an SPM
                        if self.heartbeats_left > 0 {
                            self.timers.set(T_HEARTBEAT, now + self.cfg.heartbeat_interval);
                        }
                    }
                }
            }
        }
        if self.cascade.next_timeout().is_some_and(|t| t <= now) {
            self.cascade.handle_timeout(now);
        }
        self.after_input();
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        if let Some(seq) = self.ncfs.pop_front() {
            let size = self.cfg.control_bytes;
            self.stats.bytes_sent += size as u64;
            if seq == u64::MAX {
                self.stats.spm_sent += 1;
                return Some(self.packet(PgmHeader::SPM, self.lead, size));
            }
            self.stats.ncf_sent += 1;
            return Some(self.packet(PgmHeader::NCF, seq, size));
        }
        if !self.send_ready {
            return None;
        }
        self.send_ready = false;
        if self.cascade.silenced(self.now) {
            self.arm_send();
            return None;
        }
        let now = self.now;
        let size = self.cfg.packet_bytes;
        let pkt = if let Some(seq) = self.repairs.pop_front() {
            let idx = self.slot(seq);
            self.window[idx].repair_queued = false;
            if self.window[idx].tag != seq + 1 {
                // fell out of the window while queued
                self.arm_send();
                return None;
            }
            self.window[idx].repaired = true;
            self.stats.rdata_sent += 1;
            self.packet(PgmHeader::RDATA, seq, size)
        } else if self.data_left() {
            let seq = self.lead;
            let idx = self.slot(seq);
            self.window[idx] = WinSlot { tag: seq + 1, sent_at: now, repair_queued: false, repaired: false };
            self.lead += 1;
            self.stats.odata_sent += 1;
            self.cascade.on_send();
            if !self.data_left() && self.heartbeats_left > 0 {
                self.timers.set(T_HEARTBEAT, now + self.cfg.heartbeat_interval);
            }
            // the lead in the header counts this packet
            self.packet(PgmHeader::ODATA, seq, size)
        } else {
            return None;
        };
        self.stats.bytes_sent += size as u64;
        // at least the clock's 1 ns, however far an unbounded rate has grown
        let gap = Duration::from_secs_f64(size as f64 * 8.0 / self.cascade.rate_bps()).max(Duration::from_nanos(1));
        self.next_send = now + gap;
        self.arm_send();
        Some(pkt)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match (self.timers.next(), self.cascade.next_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        self.pending_event.take().map(|rate_bps| AgentEvent::RateChanged { rate_bps })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ------------------------------------------------------------------------------------------
// Synthetic drive (§3.1.4, Fig. 11-12)
// ------------------------------------------------------------------------------------------

/// A class of identical receivers for [`run_synthetic`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReceiverClass {
    /// How many receivers.
    pub count: usize,
    /// Independent per-packet loss probability of each.
    pub loss: f64,
    /// Constant round-trip time source → receiver → source (the LI arrives this long after
    /// the lost packet was sent).
    pub rtt: Duration,
}

/// What [`run_synthetic`] measured.
#[derive(Clone, Debug, Default)]
pub struct SyntheticResult {
    pub stats: CascadeStats,
    pub packets: u64,
    pub duration_s: f64,
    /// LEs out of LI2LE per receiver (index order: the classes in turn).
    pub les_per_receiver: Vec<u64>,
    /// LEs passed by Max-LPRF per receiver.
    pub passed_per_receiver: Vec<u64>,
    pub final_srtt_s: f64,
    pub mean_rate_bps: f64,
}

/// Drive the source cascade directly: packets sent at the cascade's rate (nothing during the
/// ATF's silence), each lost independently at each receiver with its class's probability, and
/// each loss returning to the source as one LI after the receiver's constant RTT. This is the
/// set-up of §3.1.4 (Fig. 11: all receivers on one router, constant RTTs, uniform losses, no
/// aggregation) without the packet-level network, so that 10,001 receivers take milliseconds.
/// Receivers losing a packet are drawn by geometric skips (cost ∝ expected losses, not N).
pub fn run_synthetic(cfg: &LesbccConfig, classes: &[ReceiverClass], packets: u64, seed: u64) -> SyntheticResult {
    let mut rng = Rng::seed_from_u64(seed);
    let mut cas = Cascade::new(cfg, Rng::seed_from_u64(seed ^ 0x9E37_79B9_7F4A_7C15));
    cas.record_lis = false;
    let total: usize = classes.iter().map(|c| c.count).sum();
    cas.li2le.ensure(total);
    cas.lprf.ensure(total);
    let mut les_per = vec![0u64; total];
    let mut passed_per = vec![0u64; total];
    // One FIFO of pending LIs per class (constant RTT per class keeps each in time order).
    let mut queues: Vec<VecDeque<(u64, u32, u64)>> = classes.iter().map(|_| VecDeque::new()).collect();
    let offsets: Vec<usize> = classes
        .iter()
        .scan(0usize, |acc, c| {
            let o = *acc;
            *acc += c.count;
            Some(o)
        })
        .collect();
    let mut now = Instant::ZERO;
    cas.start(now);
    let mut next_send = now;
    let mut sent = 0u64;
    let mut rate_integral = 0.0;
    let mut last_t = 0.0;
    loop {
        // next event: a send, an LI arrival, or a cascade timer
        let send_at = if sent < packets {
            let s = cas.silence_end().filter(|&e| e > next_send).unwrap_or(next_send);
            Some(s)
        } else {
            None
        };
        let li_at = queues.iter().enumerate().filter_map(|(k, q)| q.front().map(|&(t, _, _)| (t, k))).min();
        if send_at.is_none() && li_at.is_none() {
            break;
        }
        let timer_at = cas.next_timeout();
        let mut t = u64::MAX;
        if let Some(s) = send_at {
            t = t.min(s.as_nanos());
        }
        if let Some((l, _)) = li_at {
            t = t.min(l);
        }
        if let Some(x) = timer_at {
            if x.as_nanos() < t {
                now = x;
                cas.handle_timeout(now);
                continue;
            }
        }
        let ts = t as f64 * 1e-9;
        rate_integral += cas.rate_bps() * (ts - last_t);
        last_t = ts;
        now = Instant::from_nanos(t);
        if let Some((l, k)) = li_at.filter(|&(l, _)| l == t) {
            let (_, rcv, sent_ns) = queues[k].pop_front().expect("front");
            let before = cas.stats;
            cas.on_li(now, rcv as usize, Some(Instant::from_nanos(sent_ns)));
            if cas.stats.les > before.les {
                les_per[rcv as usize] += 1;
            }
            if cas.stats.lprf_passed > before.lprf_passed {
                passed_per[rcv as usize] += 1;
            }
            let _ = l;
            continue;
        }
        if cas.silenced(now) {
            next_send = now.max(cas.silence_end().unwrap_or(now));
            continue;
        }
        // send packet `sent`
        cas.on_send();
        for (k, c) in classes.iter().enumerate() {
            if c.loss <= 0.0 || c.count == 0 {
                continue;
            }
            let arrive = (now + c.rtt).as_nanos();
            if c.loss >= 1.0 {
                for i in 0..c.count {
                    queues[k].push_back((arrive, (offsets[k] + i) as u32, t));
                }
                continue;
            }
            let ln_q = (1.0 - c.loss).ln();
            let mut i = 0usize;
            loop {
                // geometric skip: receivers i.. without loss before the next loser
                let u = 1.0 - rng.uniform();
                let skip = (u.ln() / ln_q).floor();
                if !skip.is_finite() || skip >= (c.count - i) as f64 {
                    break;
                }
                i += skip as usize;
                queues[k].push_back((arrive, (offsets[k] + i) as u32, t));
                i += 1;
                if i >= c.count {
                    break;
                }
            }
        }
        sent += 1;
        next_send = now + Duration::from_secs_f64(cfg.packet_bytes as f64 * 8.0 / cas.rate_bps());
    }
    SyntheticResult {
        stats: cas.stats,
        packets: sent,
        duration_s: last_t,
        les_per_receiver: les_per,
        passed_per_receiver: passed_per,
        final_srtt_s: cas.srtt(),
        mean_rate_bps: if last_t > 0.0 { rate_integral / last_t } else { cas.rate_bps() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use castlab_core::{GroupId, NodeId};

    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }

    #[test]
    fn rtt_estimator_follows_appendix_a_and_prunes_low_samples() {
        let cfg = LesbccConfig::default();
        let mut e = RttEstimator::new(&cfg);
        assert_eq!(e.srtt(), 0.2);
        assert!(e.sample(0.100));
        assert!((e.srtt() - 0.100).abs() < 1e-12 && (e.sigma() - 0.050).abs() < 1e-12);
        // δ = 0.1 − 0.18 = −0.08: SRTT = 0.1 + 0.125·0.08 = 0.11, σ = 0.05 + 0.125 (0.08 − 0.05)
        assert!(e.sample(0.180));
        assert!((e.srtt() - 0.110).abs() < 1e-12, "{}", e.srtt());
        assert!((e.sigma() - 0.05375).abs() < 1e-12, "{}", e.sigma());
        // samples below SRTT/2 = 0.055: nine of ten pruned
        let mut used = 0;
        for _ in 0..20 {
            if e.sample(0.010) {
                used += 1;
            }
        }
        assert_eq!(used, 2);
        assert_eq!(e.pruned, 18);
        // a sample at or above SRTT/2 is always used
        let before = e.accepted;
        assert!(e.sample(e.srtt() * 0.6));
        assert_eq!(e.accepted, before + 1);
    }

    #[test]
    fn li2le_passes_one_li_per_window_per_receiver() {
        let mut f = Li2Le::default();
        let w = Duration::from_millis(100);
        // receiver 0: an LI every 10 ms for 1 s -> passes at 0, 110, 220, ... (strictly > 100 ms)
        let mut passed0 = vec![];
        let mut passed1 = 0;
        for k in 0..100u64 {
            if f.offer(ms(10 * k), 0, w) {
                passed0.push(10 * k);
            }
            // receiver 1 interleaved: its own clock
            if f.offer(ms(10 * k + 5), 1, w) {
                passed1 += 1;
            }
        }
        assert_eq!(passed0, vec![0, 110, 220, 330, 440, 550, 660, 770, 880, 990]);
        assert_eq!(passed1, 10);
        // an LI exactly one window after the last pass is filtered, just after passes
        let mut g = Li2Le::default();
        assert!(g.offer(ms(0), 3, w));
        assert!(!g.offer(ms(100), 3, w));
        assert!(g.offer(Instant::from_nanos(100_000_001), 3, w));
    }

    #[test]
    fn max_lprf_pass_rate_converges_to_max_over_sum() {
        // receivers with LE rates 5:3:1:1 -> max/sum = 0.5
        let mut f = MaxLprf::default();
        let mut rng = Rng::seed_from_u64(11);
        let pattern = [0usize, 0, 0, 0, 0, 1, 1, 1, 2, 3];
        let (mut offered, mut passed) = (0u64, 0u64);
        for round in 0..20_000 {
            for &r in &pattern {
                let u = rng.uniform();
                if f.offer(r, u) {
                    passed += 1;
                }
                offered += 1;
            }
            if round == 10_000 {
                assert!((f.ratio() - 0.5).abs() < 1e-3);
            }
        }
        let rate = passed as f64 / offered as f64;
        assert!((rate - 0.5).abs() < 0.01, "pass rate {rate}");
        // the number passed is about the worst receiver's count
        assert!((passed as f64 / 100_000.0 - 1.0).abs() < 0.02);
        // decay keeps the ratio, scales the counts
        let before = f.ratio();
        f.decay(0.9);
        assert!((f.ratio() - before).abs() < 1e-9);
        assert!((f.counts()[0] - 0.9 * 100_000.0).abs() < 1e-6);
        // a single receiver: every LE passes
        let mut one = MaxLprf::default();
        assert!((0..100).all(|_| one.offer(7, 0.999_999)));
    }

    #[test]
    fn atf_passes_at_most_one_per_epoch_with_silence() {
        let mut a = Atf::default();
        let silence = Duration::from_millis(60);
        let epoch = Duration::from_millis(200);
        let mut passed = vec![];
        for k in 0..100u64 {
            let t = ms(5 * k);
            if a.offer(t, silence, epoch) {
                passed.push(5 * k);
                assert!(a.silenced(t) && a.congested(t));
                assert!(a.silenced(t + Duration::from_millis(59)));
                assert!(!a.silenced(t + Duration::from_millis(60)));
                assert!(a.congested(t + Duration::from_millis(259)));
            }
        }
        // epochs of 260 ms: 0, 260
        assert_eq!(passed, vec![0, 260]);
    }

    #[test]
    fn aimd_halves_and_adds_one_mss_per_interval() {
        let cfg = LesbccConfig { initial_rate_bps: 1e6, ..LesbccConfig::default() };
        let mut a = Aimd::new(&cfg);
        a.decrease();
        assert_eq!(a.rate_bps, 5e5);
        a.increase(0.1);
        assert!((a.rate_bps - (5e5 + 560.0 * 8.0 / 0.1)).abs() < 1e-6);
        for _ in 0..100 {
            a.decrease();
        }
        assert_eq!(a.rate_bps, cfg.min_rate_bps);
    }

    #[test]
    fn tfrc_average_loss_interval_by_hand() {
        // weights 1 x 8, α = 0.95
        let mut h = LossHistory::new(vec![1.0; 8], 0.95, 256);
        assert_eq!(h.average(1), None);
        for _ in 0..7 {
            h.on_packet();
        }
        // no interval yet: ŝ_0 is s_0 alone
        assert_eq!(h.average(0), Some(7.0));
        h.on_loss_event(); // s_1 = 7
        assert_eq!(h.average(1), Some(7.0));
        // N = 3 < n: plain mean of what exists (w_{N+1..n} = 0, α = 0)
        for s in [10u64, 4] {
            for _ in 0..s {
                h.on_packet();
            }
            h.on_loss_event();
        }
        // history newest first: 4, 10, 7
        assert_eq!(h.average(1), Some((4.0 + 10.0 + 7.0) / 3.0));
        for _ in 0..5 {
            h.on_packet();
        }
        // ŝ_0 over s_0..s_3 = 5, 4, 10, 7
        assert_eq!(h.average(0), Some((5.0 + 4.0 + 10.0 + 7.0) / 4.0));
        // fill to N = 8 = n: α = 0, plain mean of 8
        h.on_loss_event(); // s = 5
        let rest = [20u64, 2, 8, 6];
        for s in rest {
            for _ in 0..s {
                h.on_packet();
            }
            h.on_loss_event();
        }
        // newest first: 6, 8, 2, 20, 5, 4, 10, 7
        let all = [6.0, 8.0, 2.0, 20.0, 5.0, 4.0, 10.0, 7.0];
        assert_eq!(h.n_intervals(), 8);
        assert!((h.average(1).unwrap() - all.iter().sum::<f64>() / 8.0).abs() < 1e-12);
        // N = 10 > n: the tail s_9, s_10 discounted by α, α²
        for s in [3u64, 9] {
            for _ in 0..s {
                h.on_packet();
            }
            h.on_loss_event();
        }
        // newest first: 9, 3, 6, 8, 2, 20, 5, 4, 10, 7
        let v = [9.0, 3.0, 6.0, 8.0, 2.0, 20.0, 5.0, 4.0, 10.0, 7.0];
        let num = v[..8].iter().sum::<f64>() + 10.0 * 0.95 + 7.0 * 0.95 * 0.95;
        let den = 8.0 + 0.95 + 0.95 * 0.95;
        assert!((h.average(1).unwrap() - num / den).abs() < 1e-12);
        // ŝ_2 starts at s_2: terms s_2..s_9 weighted 1, s_10 discounted by α
        let num2 = v[1..9].iter().sum::<f64>() + 7.0 * 0.95;
        assert!((h.average(2).unwrap() - num2 / 8.95).abs() < 1e-12);
        // ŝ_0 with s_0 = 12: s_0..s_7 weighted 1, s_8.. discounted
        for _ in 0..12 {
            h.on_packet();
        }
        let num0 = 12.0 + v[..7].iter().sum::<f64>() + 4.0 * 0.95 + 10.0 * 0.95f64.powi(2) + 7.0 * 0.95f64.powi(3);
        let den0 = 8.0 + 0.95 + 0.95f64.powi(2) + 0.95f64.powi(3);
        assert!((h.average(0).unwrap() - num0 / den0).abs() < 1e-12);
    }

    #[test]
    fn padhye_rate_matches_the_formula() {
        let (s, r, p, t) = (560.0, 0.1, 0.01, 0.3);
        let expect =
            s / (r * (2.0 * p / 3.0f64).sqrt() + t * 3.0 * (3.0 * p / 8.0f64).sqrt() * p * (1.0 + 32.0 * p * p));
        assert!((padhye_rate(s, r, p, t) - expect).abs() < 1e-9);
        assert!(padhye_rate(s, r, 0.001, t) > padhye_rate(s, r, 0.01, t));
    }

    #[test]
    fn cascade_stages_can_be_switched_off() {
        // one receiver, a burst of 10 LIs within one RTT
        let run = |cfg: LesbccConfig| {
            let mut c = Cascade::new(&cfg, Rng::seed_from_u64(1));
            c.start(Instant::ZERO);
            for k in 0..10 {
                c.on_li(ms(1000 + k), 0, None);
            }
            c.stats
        };
        let all = run(LesbccConfig::default());
        assert_eq!((all.lis, all.les, all.lprf_passed, all.rate_reductions), (10, 1, 1, 1));
        let no_li2le = run(LesbccConfig { li2le: false, ..LesbccConfig::default() });
        assert_eq!((no_li2le.les, no_li2le.lprf_passed, no_li2le.rate_reductions), (10, 10, 1));
        let none = run(LesbccConfig { li2le: false, atf: false, ..LesbccConfig::default() });
        assert_eq!(none.rate_reductions, 10);
    }

    #[test]
    fn cascade_increases_once_per_interval_outside_epochs() {
        let cfg = LesbccConfig { initial_rate_bps: 1e6, ..LesbccConfig::default() };
        let mut c = Cascade::new(&cfg, Rng::seed_from_u64(1));
        c.start(Instant::ZERO);
        // initial SRTT 0.2, σ 0.1: interval 0.4 s, step 4480 / 0.4 = 11200 b/s
        let first = c.next_timeout().unwrap();
        assert_eq!(first, ms(400));
        c.handle_timeout(first);
        assert!((c.rate_bps() - (1e6 + 11_200.0)).abs() < 1e-6);
        // an LI starts an epoch: halve, no increase until the epoch is over
        c.on_li(ms(450), 0, None);
        assert!((c.rate_bps() - (1e6 + 11_200.0) / 2.0).abs() < 1e-6);
        assert!(c.silenced(ms(451)));
        let r = c.rate_bps();
        c.handle_timeout(ms(800));
        assert_eq!(c.rate_bps(), r, "no increase inside the epoch");
        assert!(c.stats.rate_increases == 1);
    }

    #[test]
    fn source_paces_at_its_rate_and_goes_silent_after_a_reduction() {
        let cfg = LesbccConfig { initial_rate_bps: 448_000.0, ..LesbccConfig::default() }; // 100 pkt/s
        let s = LesbccSource::try_new(Dest::Group(GroupId(0)), 1, cfg).expect("valid config");
        let mut d = crate::testing::Driver::start(s, 3);
        d.advance_to(ms(300));
        let out = d.take_sent();
        let odata: Vec<_> =
            out.iter().filter(|(_, p)| matches!(p.header, Header::Pgm(h) if h.kind == PgmHeader::ODATA)).collect();
        assert!(odata.len() >= 30 && odata.len() <= 31, "{}", odata.len());
        assert_eq!(odata[1].0.as_nanos() - odata[0].0.as_nanos(), 10_000_000);
        // a NAK for seq 5 from a receiver: NCF at once, then silence (0.1 + 0.2 = 0.3 s here
        // after the first sample R: SRTT = R, σ = R/2, silence R/2 + R), then the RDATA first
        let now = d.now + Duration::from_millis(1);
        let mut nak = Packet::data(Dest::Unicast(Addr::new(NodeId(0), 1)), 40);
        nak.src = Addr::new(NodeId(5), 1);
        nak.flow = 1;
        nak.seq = 5;
        nak.header = Header::Pgm(PgmHeader { kind: PgmHeader::NAK, trail: 0, lead: 6 });
        d.advance_to(now);
        d.take_sent();
        d.packet(now, &nak);
        let out = d.take_sent();
        assert_eq!(out.len(), 1);
        assert!(matches!(out[0].1.header, Header::Pgm(h) if h.kind == PgmHeader::NCF) && out[0].1.seq == 5);
        assert_eq!(d.agent.cascade().stats.rate_reductions, 1);
        let r = now.saturating_since(ms(50)).as_secs_f64();
        let silence_end = d.agent.cascade().silence_end().unwrap();
        assert!((silence_end.saturating_since(now).as_secs_f64() - (0.5 * r + 2.0 * 0.5 * r)).abs() < 1e-6);
        d.advance_to(silence_end + Duration::from_millis(100));
        let out = d.take_sent();
        let data: Vec<_> =
            out.iter().filter(|(_, p)| matches!(p.header, Header::Pgm(h) if h.kind != PgmHeader::NCF)).collect();
        assert!(data.iter().all(|(t, _)| *t >= silence_end), "nothing sent during the silence");
        assert!(matches!(data[0].1.header, Header::Pgm(h) if h.kind == PgmHeader::RDATA) && data[0].1.seq == 5);
        // half the rate: 20 ms between packets
        assert_eq!(data[2].0.as_nanos() - data[1].0.as_nanos(), 20_000_000);
    }

    #[test]
    fn synthetic_drive_passes_about_the_worst_receivers_les() {
        let cfg = LesbccConfig::default();
        let rtt = Duration::from_millis(100);
        let one = run_synthetic(&cfg, &[ReceiverClass { count: 1, loss: 0.1, rtt }], 6000, 1);
        let many = run_synthetic(
            &cfg,
            &[ReceiverClass { count: 1, loss: 0.1, rtt }, ReceiverClass { count: 1000, loss: 0.02, rtt }],
            6000,
            1,
        );
        assert_eq!(one.packets, 6000);
        // one receiver: Max-LPRF passes everything
        assert_eq!(one.stats.lprf_passed, one.stats.les);
        // 1000 more receivers at 2 %: some 120,000 LIs, yet the LEs passed stay near the worst's
        assert!(many.stats.lis > 100_000);
        let worst = many.les_per_receiver[0] as f64;
        let passed = many.stats.lprf_passed as f64;
        assert!((passed / worst - 1.0).abs() < 0.25, "passed {passed} worst {worst}");
        // and the worst receiver is the one with the most LEs
        assert!(many.les_per_receiver[1..].iter().all(|&x| (x as f64) < worst));
    }
}
