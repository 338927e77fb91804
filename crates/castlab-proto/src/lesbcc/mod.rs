//! LE-SBCC: loss-event oriented source-based multicast congestion control (Thapliyal,
//! Sidhartha, Li, Kalyanaraman), the source side.
//!
//! The source turns the stream of loss indications (LIs: the NAKs of the PGM-like transport
//! in [`crate::lesbcc::pgm_transport`]) into rate changes through the cascade of §2.1 (Fig. 1, Appendix A):
//!
//! 1. [`LiRttEstimator`]: SRTT and mean deviation σ from LI timing, samples far below SRTT
//!    pruned (§2.1 "RTT Estimation", Appendix A `estimateRTT`);
//! 2. [`Li2Le`]: per receiver, an LI becomes a loss event (LE) only if it comes more than
//!    SRTT + 2σ after the last one passed (§2.1, Fig. 2);
//! 3. [`MaxLprf`]: each LE passes with probability max X_i / Σ X_i over the per-receiver LE
//!    counts X_i, decayed by 10 % every 100 SRTT (§2.1, Fig. 3);
//! 4. [`Atf`]: at most one rate reduction per congestion epoch, with a silence period in
//!    which nothing is sent (§2.1, Fig. 4, Appendix A `ATFilter`);
//! 5. the rate policy: [`Aimd`] (halve on a reduction, add MSS / (SRTT + 2σ) every increase
//!    interval SRTT + 2σ, Appendix A) or the TFRC module of §4 ([`SourceLossHistory`] and
//!    [`crate::equations::padhye_bits_per_s`]).
//!
//! Each stage is its own unit, testable by hand, and stages 2-4 can be switched off
//! ([`LesbccConfig`]) for the ablations of §3.1.2. [`Cascade`] chains them; [`LesbccSource`] is
//! the sans-IO agent that puts the cascade on top of the PGM transmit side (ODATA, RDATA, NCF);
//! [`run_synthetic`] drives the cascade directly with synthetic LI streams (the set-up of
//! §3.1.4, Fig. 11: one router, constant RTTs, independent uniform losses).

use std::collections::VecDeque;

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

/// How LI2LE turns a receiver's LIs into LEs. The paper defines it twice and the two differ
/// by a factor that grows with the loss rate (fig12: 1 + p·x LIs per LE against the chain's
/// ratio), so both are kept and the experiments whose numbers rest on it report both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Li2LeReading {
    /// §2.1 and Appendix A `LI2LEfilter`: an LI passes if it comes more than SRTT + 2σ after
    /// the receiver's last passed LI (the window opens at the LI it passes). The default: it is
    /// the filter as the paper specifies it in code.
    Window,
    /// §2's definition ("1 when one or more LIs are generated per RTT per receiver") and
    /// §3.1.3's Markov chain (one binary LE per RTT round): time is cut into rounds of SRTT,
    /// and a receiver's first LI in a round passes.
    Slot,
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
    /// at half of it (paper silent on σ: our choice). The first sample moves both by the gains
    /// like every later one (Appendix A `estimateRTT` has no first-sample rule; TCP's RFC 6298
    /// §2.2 would set SRTT = R, σ = R/2, and one burst-inflated first sample would then hold
    /// SRTT high while the pruning of §2.1 discards the true samples below SRTT/2).
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
    /// How long the source holds a NAK's RTT sample before it decides whether the sample
    /// measures the path. A sample is the NAK's arrival minus the send time of its packet j
    /// (Appendix A), which is a round trip only if the receiver could see the loss at once, from
    /// the packet sent after j (§2.1 expects "timely generation" of LIs "to allow reliable RTT
    /// sampling" and warns of "arbitrary delays ... in generating an LI"). If the same receiver
    /// also NAKs j + 1, that packet was lost too and the loss of j was seen only later, after
    /// a wait the source cannot measure (a burst, or a link that was down: the NAKs for what
    /// was sent during an outage arrive after it, as long as the outage). Such a sample is
    /// ambiguous and not taken, as Karn's rule drops the samples of retransmitted segments
    /// (RFC 6298 §3). A receiver schedules the NAKs of one gap together, each after its own
    /// random backoff, so the NAK for j + 1 comes at most a backoff later than the one for j;
    /// the hold covers that. Paper silent: 200 ms, twice §5.2.1's 100 ms maximum backoff (our
    /// choice). Zero: every receiver's first NAK for j is a sample at once.
    pub rtt_run_hold: Duration,
    /// Stage switches, for the ablations of §3.1.2 (Fig. 7). Default all on.
    pub li2le: bool,
    pub max_lprf: bool,
    pub atf: bool,
    /// The ATF's silence period (no data sent). Default on (§2.1, Appendix A).
    pub silence: bool,
    /// LI2LE passes an LI if it comes more than SRTT + k·σ after the last passed. Default k = 2.
    /// Used by the window reading only.
    pub li2le_sigmas: f64,
    /// Which of the paper's two LI-to-LE definitions LI2LE follows. Default
    /// [`Li2LeReading::Window`] (§2.1, Appendix A).
    pub li2le_reading: Li2LeReading,
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
    /// Ambient SPMs (RFC 3208 §6.1): one when the source starts and then one every this
    /// interval, for the whole session. §5.1 drops SPMs (the window travels in every packet),
    /// so the default is zero, none; a standard PGM receiver (OpenPGM) learns where to send
    /// NAKs only from an SPM's path NLA, so the PGM wire needs them (`castlab net
    /// lesbcc-source --wire pgm` sets 0.5 s, our choice: a receiver that joins or loses the
    /// first SPM can NAK within half a second, at 36 bytes per SPM).
    pub spm_interval: Duration,
    /// Trace rows (our choice; the paper has none): `Full` (default) keeps a row per rate
    /// change, RTT sample and LI ([`LesbccRecords`]) and reports each rate change to the
    /// driver (`RateChanged`, the engine's rate timeline); `Off` keeps the counters only, so
    /// memory stays flat over a long run.
    pub trace: crate::Trace,
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
            rtt_run_hold: Duration::from_millis(200),
            li2le: true,
            max_lprf: true,
            atf: true,
            silence: true,
            li2le_sigmas: 2.0,
            li2le_reading: Li2LeReading::Window,
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
            spm_interval: Duration::ZERO,
            trace: crate::Trace::Full,
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

castlab_core::records_table!(LesbccRecords {
    columns: [
        rate_time_ns,
        rate_bps,
        rtt_time_ns,
        rtt_sample_s,
        srtt_s,
        sigma_s,
        rtt_used,
        li_time_ns,
        li_receiver,
        li_outcome,
    ],
});

castlab_core::config_enum!(RatePolicy { Aimd => "aimd", Tfrc => "tfrc" });
castlab_core::config_enum!(Li2LeReading { Window => "window", Slot => "slot" });

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
    rtt_run_hold,
    li2le,
    max_lprf,
    atf,
    silence,
    li2le_sigmas,
    li2le_reading,
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
    spm_interval,
    trace,
});

mod cascade;
mod filters;
pub mod pgm_transport;
mod receivers;
pub mod registration;
#[cfg(test)]
mod ring_reference;
mod source;
mod synthetic;
mod tfrc;

pub use cascade::*;
pub use filters::*;
pub use receivers::*;
pub use source::*;
pub use synthetic::*;
pub use tfrc::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Driver;
    use castlab_core::{GroupId, NodeId};

    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }

    /// A zero RTT estimate (an LI whose echoed send time is its arrival time: same-instant in a
    /// harness, forged on a network) must not re-arm a timer at the same instant: the timeout
    /// returns, and the next deadline lies ahead. Run on a thread so a regression fails in
    /// seconds instead of hanging the suite.
    #[test]
    fn a_zero_rtt_estimate_does_not_re_arm_the_increase_timer_forever() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let cfg =
                LesbccConfig { rtt_gain: 1.0, rtt_dev_gain: 1.0, rtt_prune_below: 0.0, ..LesbccConfig::default() };
            let mut c = Cascade::new(&cfg, Rng::seed_from_u64(1));
            c.start(ms(0));
            let t = ms(50);
            c.on_li(t, 0, Some(t)); // RTT sample 0 s: SRTT 0, σ 0.2 (gains 1, no pruning)
            c.on_li(t, 0, Some(t)); // again: SRTT 0, σ 0
            assert_eq!((c.srtt(), c.sigma()), (0.0, 0.0));
            let mut now = t;
            for _ in 0..100 {
                let next = c.next_timeout().expect("the increase timer is armed");
                now = now.max(next);
                c.handle_timeout(now);
            }
            tx.send((now, c.next_timeout())).unwrap();
        });
        let (now, next) = rx.recv_timeout(core::time::Duration::from_secs(10)).expect("handle_timeout returned");
        assert!(next.expect("still armed") > now);
    }

    #[test]
    fn rtt_estimator_follows_appendix_a_and_prunes_low_samples() {
        let cfg = LesbccConfig::default();
        let mut e = LiRttEstimator::new(&cfg);
        assert_eq!((e.srtt(), e.sigma()), (0.2, 0.1));
        // from the initial estimate: δ = 0.2 − 0.1 = 0.1: SRTT = 0.2 − 0.125·0.1 = 0.1875,
        // σ = 0.1 + 0.125 (0.1 − 0.1) = 0.1
        assert!(e.sample(0.100));
        assert!((e.srtt() - 0.1875).abs() < 1e-12 && (e.sigma() - 0.1).abs() < 1e-12);
        // δ = 0.1875 − 0.18 = 0.0075: SRTT = 0.1865625, σ = 0.1 + 0.125 (0.0075 − 0.1) = 0.0884375
        assert!(e.sample(0.180));
        assert!((e.srtt() - 0.1865625).abs() < 1e-12, "{}", e.srtt());
        assert!((e.sigma() - 0.0884375).abs() < 1e-12, "{}", e.sigma());
        // samples below SRTT/2 ≈ 0.093: nine of ten pruned
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
    fn a_first_sample_far_above_the_initial_estimate_does_not_pin_srtt() {
        // Appendix A applies the gain from the initial estimate (200 ms, σ 100 ms) on every
        // sample, the first included: R = 1.2 s gives δ = −1.0, SRTT = 0.2 + 1.0/8 = 0.325,
        // σ = 0.1 + (1.0 − 0.1)/8 = 0.2125.
        let cfg = LesbccConfig::default();
        let mut e = LiRttEstimator::new(&cfg);
        assert!(e.sample(1.2));
        assert!((e.srtt() - 0.325).abs() < 1e-12, "{}", e.srtt());
        assert!((e.sigma() - 0.2125).abs() < 1e-12, "{}", e.sigma());
        // the true round trips that follow (0.45 s) are not pruned and pull SRTT to them
        for _ in 0..40 {
            assert!(e.sample(0.45));
        }
        assert!((e.srtt() - 0.45).abs() < 0.01, "{}", e.srtt());
        assert_eq!(e.pruned, 0);
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
    fn li2le_slot_reading_passes_a_receivers_first_li_of_each_round() {
        let mut f = Li2Le::default();
        let slot = Duration::from_millis(100);
        // the round clock starts at the first LI (t = 0): rounds [0, 100), [100, 200), ...
        assert!(f.offer_slot(ms(0), 0, slot));
        assert!(!f.offer_slot(ms(99), 0, slot), "same round");
        // receiver 1 shares the clock: its first LI passes, its second in round 0 does not
        assert!(f.offer_slot(ms(50), 1, slot));
        assert!(!f.offer_slot(ms(90), 1, slot));
        // 100 ms opens round 1: both pass once more
        assert!(f.offer_slot(ms(100), 0, slot));
        assert!(f.offer_slot(ms(101), 1, slot));
        assert!(!f.offer_slot(ms(199), 0, slot));
        assert_eq!(f.round(), 1);
        // a gap of several rounds advances by whole slots: 1050 ms is round 10, [1000, 1100)
        assert!(f.offer_slot(ms(1050), 0, slot));
        assert_eq!(f.round(), 10);
        assert!(!f.offer_slot(ms(1099), 0, slot));
        assert!(f.offer_slot(ms(1100), 0, slot));
        // the slot length is read when an LI crosses a boundary: at 50 ms slots the round that
        // started at 1100 ends at 1150
        let half = Duration::from_millis(50);
        assert!(!f.offer_slot(ms(1149), 0, half));
        assert!(f.offer_slot(ms(1150), 0, half));
        assert_eq!(f.round(), 12);
    }

    #[test]
    fn li2le_slot_and_window_readings_differ_on_lis_close_across_a_boundary() {
        // LIs at 0, 150 and 210 ms with a 100 ms RTT: the window (opened at each pass) filters
        // 210 (60 ms after the pass at 150); the slot reading passes it (round 2, [200, 300)).
        let w = Duration::from_millis(100);
        let (mut win, mut slot) = (Li2Le::default(), Li2Le::default());
        let by_window: Vec<bool> = [0, 150, 210].iter().map(|&t| win.offer(ms(t), 0, w)).collect();
        let by_slot: Vec<bool> = [0, 150, 210].iter().map(|&t| slot.offer_slot(ms(t), 0, w)).collect();
        assert_eq!(by_window, vec![true, true, false]);
        assert_eq!(by_slot, vec![true, true, true]);
    }

    #[test]
    fn the_cascade_follows_the_configured_li2le_reading() {
        // Max-LPRF and the ATF off so LI2LE's output is the count of reductions. The RTT
        // estimate stays at its initial 200 ms (σ 100 ms) as no LI carries a send time: the
        // window is SRTT + 2σ = 400 ms, the slot SRTT = 200 ms.
        let base = LesbccConfig { max_lprf: false, atf: false, ..LesbccConfig::default() };
        let drive = |cfg: &LesbccConfig| {
            let mut c = Cascade::new(cfg, Rng::seed_from_u64(1));
            c.start(ms(0));
            for t in [0u64, 150, 250, 350, 450, 650] {
                c.on_li(ms(t), 0, None);
            }
            (c.stats.lis, c.stats.les)
        };
        assert_eq!(base.li2le_reading, Li2LeReading::Window);
        // window: 0 passes, then nothing until more than 400 ms later: 450 passes, 650 does not
        assert_eq!(drive(&base), (6, 2));
        // slot: rounds [0, 200), [200, 400), [400, 600), [600, 800): 0, 250, 450, 650 pass
        let slot = LesbccConfig { li2le_reading: Li2LeReading::Slot, ..base.clone() };
        assert_eq!(drive(&slot), (6, 4));
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
        let mut h = SourceLossHistory::new(vec![1.0; 8], 0.95, 256);
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
        let info = StartInfo { addr: Addr::new(NodeId(0), 1), rng: Rng::seed_from_u64(3) };
        let mut d = crate::testing::Driver::start_with(s, Instant::ZERO, info);
        // timer by timer, until the first one at or after `end`
        fn run_to(d: &mut Driver<LesbccSource>, end: Instant) {
            while d.now < end {
                let t = d.agent.poll_timeout().unwrap();
                d.advance_to(t);
            }
        }
        run_to(&mut d, ms(300));
        let odata: Vec<_> =
            d.sent.iter().filter(|(_, p)| matches!(p.header, Header::Pgm(h) if h.kind == PgmHeader::ODATA)).collect();
        assert!(odata.len() >= 30 && odata.len() <= 31, "{}", odata.len());
        assert_eq!(odata[1].0.as_nanos() - odata[0].0.as_nanos(), 10_000_000);
        // a NAK for seq 5 from a receiver: NCF at once, then silence (SRTT/2 + 2σ from the
        // initial 0.2 and 0.1: the NAK's own sample is still held, `rtt_run_hold`), then the
        // RDATA
        let now = d.now + Duration::from_millis(1);
        let mut nak = Packet::data(Dest::Unicast(Addr::new(NodeId(0), 1)), 40);
        nak.src = Addr::new(NodeId(5), 1);
        nak.flow = 1;
        nak.seq = 5;
        nak.header = Header::Pgm(PgmHeader { kind: PgmHeader::NAK, trail: 0, lead: 6 });
        d.advance_to(now);
        d.sent.clear();
        d.packet(now, &nak);
        assert_eq!(d.sent.len(), 1);
        assert!(matches!(d.sent[0].1.header, Header::Pgm(h) if h.kind == PgmHeader::NCF) && d.sent[0].1.seq == 5);
        assert_eq!(d.agent.cascade().stats.rate_reductions, 1);
        let (srtt, sigma) = (0.2, 0.1);
        let silence_end = d.agent.cascade().silence_end().unwrap();
        assert!((silence_end.saturating_since(now).as_secs_f64() - (0.5 * srtt + 2.0 * sigma)).abs() < 1e-6);
        d.sent.clear();
        run_to(&mut d, silence_end + Duration::from_millis(100));
        let data: Vec<_> =
            d.sent.iter().filter(|(_, p)| matches!(p.header, Header::Pgm(h) if h.kind != PgmHeader::NCF)).collect();
        assert!(data.iter().all(|(t, _)| *t >= silence_end), "nothing sent during the silence");
        assert!(matches!(data[0].1.header, Header::Pgm(h) if h.kind == PgmHeader::RDATA) && data[0].1.seq == 5);
        // half the rate: 20 ms between packets
        assert_eq!(data[2].0.as_nanos() - data[1].0.as_nanos(), 20_000_000);
    }

    #[test]
    fn told_to_stop_the_source_sends_one_last_spm_with_its_window_and_nothing_more() {
        let cfg = LesbccConfig { initial_rate_bps: 448_000.0, ..LesbccConfig::default() }; // 100 pkt/s
        let mut d = started(cfg);
        while d.now < ms(300) {
            let t = d.agent.poll_timeout().unwrap();
            d.advance_to(t);
        }
        // a NAK: its NCF goes at once, its repair waits for the silence; the stop drops the repair
        d.packet(d.now, &nak_from(5, 3));
        let (lead, trail) = (d.agent.lead(), d.agent.trail());
        d.sent.clear();
        let stop = d.now + Duration::from_millis(1);
        d.shutdown(stop);
        assert_eq!(d.sent.len(), 1);
        let (t, p) = d.sent[0];
        assert_eq!((t, p.dst, p.seq), (stop, Dest::Group(GroupId(0)), lead));
        assert!(matches!(p.header, Header::Pgm(h) if h.kind == PgmHeader::SPM && h.lead == lead && h.trail == trail));
        assert_eq!(d.agent.poll_timeout(), None);
        d.packet(stop + Duration::from_millis(1), &nak_from(6, 4));
        d.advance_to(stop + Duration::from_secs(10));
        d.shutdown(stop + Duration::from_secs(11));
        assert_eq!(d.sent.len(), 1);
        assert_eq!(d.agent.stats.odata_sent, lead);
    }

    fn nak_from(node: u32, seq: u64) -> Packet {
        let mut nak = Packet::data(Dest::Unicast(Addr::new(NodeId(0), 1)), 40);
        nak.src = Addr::new(NodeId(node), 1);
        nak.flow = 1;
        nak.seq = seq;
        nak.header = Header::Pgm(PgmHeader { kind: PgmHeader::NAK, trail: 0, lead: seq + 1 });
        nak
    }

    /// A source started at 0 on node 0 on the shared harness.
    fn started(cfg: LesbccConfig) -> Driver<LesbccSource> {
        let s = LesbccSource::try_new(Dest::Group(GroupId(0)), 1, cfg).expect("valid config");
        Driver::start_with(s, Instant::ZERO, StartInfo { addr: Addr::new(NodeId(0), 1), rng: Rng::seed_from_u64(3) })
    }

    #[test]
    fn source_state_per_receiver_grows_with_the_receivers_heard_and_only_with_them() {
        let mut d = started(LesbccConfig::default());
        let empty = d.agent.state();
        assert_eq!((empty.receivers, empty.per_receiver), (0, 0));
        for i in 0..1000u32 {
            d.packet(ms(10 + i as u64), &nak_from(1 + i, 0));
        }
        let st = d.agent.state();
        assert_eq!(st.receivers, 1000);
        // each receiver holds a 6-byte address, a 6-byte last-pass time and an 8-byte count,
        // in columns whose first allocation is 1024 receivers; the index holds a 4-byte number
        // per slot, at most 80 % full and grown by a quarter (so at most 1.25 · 1000 / 0.8
        // slots)
        assert!(st.per_receiver >= 1024 * 20 + 1250 * 4, "{st:?}");
        assert!(st.per_receiver <= 1024 * 20 + 1563 * 4, "{st:?}");
        // a second NAK from each adds nothing
        for i in 0..1000u32 {
            d.packet(ms(2000 + i as u64), &nak_from(1 + i, 0));
        }
        let s = d.agent.state();
        assert_eq!((s.receivers, s.per_receiver, s.fixed), (1000, st.per_receiver, st.fixed));
    }

    #[test]
    fn a_nak_and_its_repeats_give_one_rtt_sample_per_receiver() {
        // samples at once (no hold): which NAKs give a sample, not when
        let cfg = LesbccConfig { initial_rate_bps: 448_000.0, rtt_run_hold: Duration::ZERO, ..LesbccConfig::default() }; // 100 pkt/s
        let mut d = started(cfg);
        d.advance_to(ms(300));
        let offered = |s: &LesbccSource| s.cascade().stats.rtt_samples + s.cascade().stats.rtt_pruned;
        // receiver 5's first NAK for seq 5 (sent at 50 ms): one sample of 250 ms
        d.packet(ms(300), &nak_from(5, 5));
        assert_eq!(offered(&d.agent), 1);
        assert_eq!(d.agent.cascade().records.rtt_sample_s, vec![0.25]);
        // its repeats: one while the repair is held back by the silence period, one after the
        // RDATA went out (the repair was lost), as NAK_RPT_IVL / NAK_RDATA_IVL would send them
        let t1 = d.now + Duration::from_millis(20);
        d.advance_to(t1);
        assert!(d.agent.cascade().silenced(d.now) && d.agent.stats.rdata_sent == 0);
        d.packet(t1, &nak_from(5, 5));
        d.advance_to(ms(2000));
        assert_eq!(d.agent.stats.rdata_sent, 1);
        d.packet(ms(2000), &nak_from(5, 5));
        assert_eq!(d.agent.cascade().stats.lis, 3, "every NAK is an LI");
        assert_eq!(offered(&d.agent), 1, "a repeat's timing is not a round trip");
        // another receiver's first NAK for the same loss is its own round trip
        d.packet(ms(2000), &nak_from(6, 5));
        assert_eq!(offered(&d.agent), 2);
        assert!((d.agent.cascade().records.rtt_sample_s[1] - 1.95).abs() < 1e-9);
        // and receiver 5's first NAK for another loss is a sample again
        d.packet(ms(2000), &nak_from(5, 10));
        assert_eq!(offered(&d.agent), 3);
    }

    #[test]
    fn a_window_slot_reused_by_a_new_sequence_number_forgets_the_old_naks() {
        let cfg = LesbccConfig {
            initial_rate_bps: 448_000.0,
            transmit_window_pkts: 16,
            rtt_run_hold: Duration::ZERO,
            ..LesbccConfig::default()
        };
        let mut d = started(cfg);
        d.advance_to(ms(100));
        assert!(d.agent.lead() > 3);
        d.packet(ms(100), &nak_from(5, 3));
        // seq 19 takes seq 3's slot (16 slots)
        for _ in 0..1000 {
            if d.agent.lead() > 19 {
                break;
            }
            d.advance_to(d.now + Duration::from_millis(10));
        }
        assert!(d.agent.lead() > 19);
        d.packet(d.now, &nak_from(5, 19));
        assert_eq!(d.agent.cascade().stats.rtt_samples + d.agent.cascade().stats.rtt_pruned, 2);
    }

    #[test]
    fn a_nak_whose_next_packet_the_same_receiver_also_naks_gives_no_rtt_sample() {
        // 100 pkt/s from 0: seq j sent at 10·j ms. The hold is 200 ms.
        let cfg = LesbccConfig { initial_rate_bps: 448_000.0, ..LesbccConfig::default() };
        let mut d = started(cfg);
        d.advance_to(ms(300));
        let rows = |d: &Driver<LesbccSource>| d.agent.cascade().records.rtt_sample_s.clone();
        let ambiguous = |d: &Driver<LesbccSource>| d.agent.cascade().stats.rtt_ambiguous;
        // receiver 5 lost 3, 4 and 5 (NAKs in a random order, as their backoffs fall);
        // receiver 6 lost only 4, and receiver 7 lost 10 and 12 (not consecutive)
        for (t, node, seq) in [(300, 5, 4), (310, 6, 4), (320, 5, 5), (330, 5, 3), (340, 7, 12), (350, 7, 10)] {
            d.packet(ms(t), &nak_from(node, seq));
        }
        assert!(rows(&d).is_empty(), "held, not yet taken");
        assert_eq!(d.agent.cascade().stats.lis, 6, "every NAK is an LI at once");
        d.advance_to(ms(600));
        // taken: 5's NAK for 5 (320 − 50 ms), 6's for 4 (310 − 40), 7's for 12 and 10
        // (340 − 120, 350 − 100); not taken: 5's for 4 and 3, whose next packet it lost too
        let got = rows(&d);
        let want = [0.27, 0.27, 0.22, 0.25];
        assert_eq!(got.len(), want.len(), "{got:?}");
        assert!(got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-9), "{got:?}");
        assert_eq!(ambiguous(&d), 2);
        // rows carry the NAK's arrival time, in arrival order
        let times: Vec<u64> = d.agent.cascade().records.rtt_time_ns.iter().map(|t| t / 1_000_000).collect();
        assert_eq!(times, vec![310, 320, 340, 350]);
        // a NAK for the newest packet (nothing sent after it yet when the NAK came: the loss was
        // seen from a control packet's lead) is taken, even if the same receiver then NAKs the
        // packet sent next (the ATF off here, so that nothing holds the pacer)
        let cfg = LesbccConfig { initial_rate_bps: 448_000.0, atf: false, ..LesbccConfig::default() };
        let mut d = started(cfg);
        d.advance_to(ms(300));
        let newest = d.agent.lead() - 1;
        d.packet(ms(300), &nak_from(8, newest));
        d.advance_to(ms(350));
        assert!(d.agent.lead() > newest + 1);
        d.packet(ms(350), &nak_from(8, newest + 1));
        d.advance_to(ms(700));
        assert_eq!(rows(&d).len(), 2);
        assert_eq!(ambiguous(&d), 0);
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
