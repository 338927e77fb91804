//! The whole source-side cascade (§2.1): stages 1-5 wired together, with its timers and records.

use super::*;
use crate::equations::{padhye_bits_per_s, Rto};

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
    /// First NAKs whose sample was not taken: the same receiver NAKed the next packet too, so
    /// the loss was seen late (`LesbccConfig::rtt_run_hold`), or the next packet's record had
    /// left the transmit window when the hold ended, or the hold queue was full.
    pub rtt_ambiguous: u64,
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

impl LesbccRecords {
    /// Bytes of its columns (allocated capacity).
    pub fn heap_bytes(&self) -> usize {
        (self.rate_time_ns.capacity()
            + self.rate_bps.capacity()
            + self.rtt_time_ns.capacity()
            + self.rtt_sample_s.capacity()
            + self.srtt_s.capacity()
            + self.sigma_s.capacity()
            + self.li_time_ns.capacity())
            * 8
            + self.li_receiver.capacity() * 4
            + self.rtt_used.capacity()
            + self.li_outcome.capacity()
    }
}

castlab_core::timers! {
    /// The cascade's timers (Appendix A): rate increase, Max-LPRF decay, TFRC recomputation.
    pub enum CascadeTimer { Increase, Decay, Tfrc }
}

/// The whole source-side cascade: RTT estimator, LI2LE, Max-LPRF, ATF and the rate policy.
#[derive(Clone, Debug)]
pub struct Cascade {
    cfg: LesbccConfig,
    pub rtt: LiRttEstimator,
    pub li2le: Li2Le,
    pub lprf: MaxLprf,
    pub atf: Atf,
    pub aimd: Aimd,
    pub history: SourceLossHistory,
    /// Current TFRC average loss interval ŝ (None before the first LE).
    s_hat: Option<f64>,
    rng: Rng,
    timers: TimerTable<CascadeTimer>,
    pub stats: CascadeStats,
    pub records: LesbccRecords,
    /// Record one row per LI and per RTT sample (off in the synthetic drive of large trees).
    pub record_lis: bool,
    last_rate: f64,
    /// The first rate has been noted (a rate change is one from `last_rate` after that).
    rate_noted: bool,
    rate_dirty: bool,
}

impl Cascade {
    pub fn new(cfg: &LesbccConfig, rng: Rng) -> Self {
        let aimd = Aimd::new(cfg);
        Cascade {
            cfg: cfg.clone(),
            rtt: LiRttEstimator::new(cfg),
            li2le: Li2Le::default(),
            lprf: MaxLprf::default(),
            atf: Atf::default(),
            last_rate: aimd.rate_bps,
            aimd,
            history: SourceLossHistory::from_config(cfg),
            s_hat: None,
            rng,
            timers: TimerTable::default(),
            stats: CascadeStats::default(),
            records: LesbccRecords::default(),
            record_lis: cfg.trace.on(),
            rate_noted: false,
            rate_dirty: true,
        }
    }

    pub fn config(&self) -> &LesbccConfig {
        &self.cfg
    }

    /// Arm the periodic timers; call once at the start.
    pub fn start(&mut self, now: Instant) {
        self.timers.set(CascadeTimer::Increase, now + self.rtt.plus_sigmas(self.cfg.increase_sigmas));
        self.timers.set(CascadeTimer::Decay, now + self.decay_period());
        if self.cfg.policy == RatePolicy::Tfrc {
            self.timers.set(CascadeTimer::Tfrc, now + self.rtt.plus_sigmas(0.0));
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
        if r != self.last_rate || !self.rate_noted {
            if self.cfg.trace.on() {
                self.records.rate_time_ns.push(now.as_nanos());
                self.records.rate_bps.push(r);
            }
            self.rate_noted = true;
            self.last_rate = r;
            self.rate_dirty = true;
        }
    }

    /// One LI from receiver `rcv`, for a packet sent at `sent_at` (None: unknown, e.g. outside
    /// the transmit window: no RTT sample). Appendix A, event "LI received".
    pub fn on_li(&mut self, now: Instant, rcv: usize, sent_at: Option<Instant>) -> LiOutcome {
        self.stats.lis += 1;
        if let Some(t) = sent_at {
            self.rtt_sample(now, now.saturating_since(t).as_secs_f64());
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

    /// Offer one RTT sample `r` (seconds) to the estimator (stage 1), recorded at `at`: the
    /// arrival of the NAK it was measured with.
    pub fn rtt_sample(&mut self, at: Instant, r: f64) {
        let used = self.rtt.sample(r);
        if used {
            self.stats.rtt_samples += 1;
        } else {
            self.stats.rtt_pruned += 1;
        }
        if self.record_lis {
            let rec = &mut self.records;
            rec.rtt_time_ns.push(at.as_nanos());
            rec.rtt_sample_s.push(r);
            rec.srtt_s.push(self.rtt.srtt());
            rec.sigma_s.push(self.rtt.sigma());
            rec.rtt_used.push(used);
        }
    }

    fn filter(&mut self, now: Instant, rcv: usize) -> LiOutcome {
        let cfg = &self.cfg;
        // Stage 2, LI2LE: a window of SRTT + 2σ (§2.1, Appendix A) or one LE per RTT round
        // (§2, §3.1.3), by `li2le_reading`.
        if cfg.li2le {
            let passed = match cfg.li2le_reading {
                Li2LeReading::Window => self.li2le.offer(now, rcv, self.rtt.plus_sigmas(cfg.li2le_sigmas)),
                Li2LeReading::Slot => self.li2le.offer_slot(now, rcv, self.rtt.plus_sigmas(0.0)),
            };
            if !passed {
                return LiOutcome::Li2Le;
            }
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
        // §4.1: t_RTO = SRTT + 4σ; p stays in (0, 1] (our choice: the equation is defined there)
        padhye_bits_per_s(self.cfg.packet_bytes as f64, self.rtt.srtt(), p.clamp(1e-12, 1.0), Rto::Seconds(t_rto))
    }

    pub fn next_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(slot) = self.timers.expire(now) {
            match slot {
                CascadeTimer::Increase => {
                    // Appendix A RateIncreaseTimer: increase unless inside a congestion epoch.
                    // At least 1 ms (our choice, as the Tfrc and decay timers): a zero RTT
                    // estimate (an LI echoing its own send instant) re-armed the timer at `now`
                    // and this loop never ended.
                    let interval = self.rtt.plus_sigmas(self.cfg.increase_sigmas).max(Duration::from_millis(1));
                    let congested = self.cfg.atf && self.atf.congested(now);
                    let tfrc_active = self.cfg.policy == RatePolicy::Tfrc && self.history.total > 0;
                    if !congested && !tfrc_active {
                        self.aimd.increase(interval.as_secs_f64());
                        self.stats.rate_increases += 1;
                    }
                    self.timers.set(CascadeTimer::Increase, now + interval);
                }
                CascadeTimer::Decay => {
                    self.lprf.decay(self.cfg.lprf_decay_factor);
                    self.stats.lprf_decays += 1;
                    self.timers.set(CascadeTimer::Decay, now + self.decay_period());
                }
                CascadeTimer::Tfrc => {
                    // §4.1: each RTT without congestion, ŝ_0 is recomputed; ŝ = max(ŝ_0, ŝ_1).
                    if let (Some(s0), Some(s1)) = (self.history.average(0), self.history.average(1)) {
                        let s = s0.max(s1).max(1.0);
                        if self.s_hat != Some(s) {
                            self.s_hat = Some(s);
                            let eq = self.tfrc_equation_bps(s);
                            self.aimd.set(eq);
                        }
                    }
                    self.timers.set(CascadeTimer::Tfrc, now + self.rtt.plus_sigmas(0.0).max(Duration::from_millis(1)));
                }
            }
        }
        self.note_rate(now);
    }
}
