//! The RLM receiver: McCanne, Jacobson and Vetterli, *Receiver-driven Layered Multicast*
//! (SIGCOMM 1996), §3.
//!
//! A receiver subscribes to a cumulative set of layers (level N = layers 1..N, layer m on
//! `data_groups[m - 1]`) and runs the state machine of Figure 6 (§3.4): steady (S),
//! hysteresis (H), measurement (M) and drop (D). It probes for spare capacity with
//! join-experiments paced by one randomised join-timer per level (§3.2, §4) with exponential
//! backoff on failure and relaxation in steady state (§3.5); it correlates experiments with
//! congestion through a detection-time estimator (§3.5); and it shares what it learns with
//! the other receivers of the session by announcing every experiment on a control group
//! (§3.3, "shared learning").
//!
//! # Conventions where the paper is loose
//!
//! * **Which join-timer.** `T_J^k` is the timer that paces the experiment *to* level k (adding
//!   layer k while at level k-1). A failed experiment at level k backs off `T_J^k` (§3.4: "drop
//!   the current layer and multiplicatively increase the join-timer for that layer"); steady
//!   state at level N relaxes `T_J^N` (§3.4: "the join-timer for the current layer"), so a
//!   proven level is quickly reinstated after an unrelated drop (Figure 4, F), while the timer
//!   of a level that keeps failing grows to `T_max` (§4.3: "join-experiments at progressively
//!   larger intervals until the maximum interval is reached").
//! * **Experiment suppression** follows §3.4 and §3.3 literally: when my join-timer for level
//!   P fires and an experiment at a *lower* level is in progress (mine or announced by
//!   another receiver), I draw a new timer instead; an experiment in progress at the same or
//!   a higher level does not stop mine ("we allow experimental overlap if the pending level is
//!   the same as or less than the level in progress").
//! * **The join-timer law** of §4 is `λ/2 + X` with X exponential truncated to `[0, 4λ]`. The
//!   printed density `λe^{-λx}/(1-e^{-4λ²})` mixes a rate and a time; we read λ as the
//!   exponential's mean (a time, `λ = T_J^k`), i.e. density `e^{-x/λ} / (λ(1-e^{-4}))` on
//!   `[0, 4λ]`. See [`draw_join_interval`].
//! * **Detection-time samples** come from this receiver's own failed experiments only: §3.5
//!   defines the detection time as the latency between a *local* action and its impact.
//! * **The base layer** is never dropped (level ≥ 1); at level 1 the drop action is void.
//!
//! The choices where the paper gives no value (the loss-rate estimator and its threshold, the
//! initial detection-time estimate, the session-message interval, the group-size estimate and
//! the `T_max` scaling rule) are stated on [`RlmConfig`].
//!
//! Driving follows [`castlab_core::agent`]; the receiver keeps its join, detection and session
//! timers in a [`TimerTable`]. Everything it does is recorded in [`RlmRecords`].

use core::any::Any;
use std::collections::VecDeque;

use castlab_core::{
    Addr, Agent, AgentEvent, Dest, Duration, GroupId, Header, Instant, Packet, RlmHeader, Rng, StartInfo,
    TimerTable,
};

/// Protocol constants (Table 1 with the values of §4) and the choices the paper leaves open.
#[derive(Clone, Debug, PartialEq)]
pub struct RlmConfig {
    /// α, join-timer backoff factor: `T_J^k ← min(α·T_J^k, T_max)` on a failed experiment
    /// (§3.5; value 2 from §4).
    pub alpha: f64,
    /// β, join-timer relaxation factor: `T_J^k ← max(β·T_J^k, T_min)` at detection-timer
    /// intervals in steady state (§3.5; value 2/3 from §4).
    pub beta: f64,
    /// k1, k2: the detection timer (and the time an experiment is "in progress") is
    /// `k1·T̂_D + k2·σ̂_D` (§3.4; values 1 and 2 from §4).
    pub k1: f64,
    pub k2: f64,
    /// g1, g2: low-pass gains of the detection-time mean and deviation (§3.5; 0.25 and 0.25,
    /// §4): `σ̂_D ← (1-g2)σ̂_D + g2|D - T̂_D|`, then `T̂_D ← (1-g1)T̂_D + g1 D`.
    pub g1: f64,
    pub g2: f64,
    /// `T_J^min`, the minimum join-timer (§3.5; 5 s, §4). Also every level's initial
    /// join-timer: "the timer duration is short because the layer has not yet proven
    /// problematic" (§3.2).
    pub t_min: Duration,
    /// `T_J^max` for a session of one receiver (§3.5; 600 s, §4). Scaled with the estimated
    /// number of receivers when `scale_t_max` is set.
    pub t_max: Duration,
    /// Scale `T_max` in proportion to the estimated group size n̂ (§3.3, §3.5): the effective
    /// maximum is `t_max · n̂`, so that once every receiver's timer for a failing level has
    /// saturated, the aggregate experiment rate `n̂ / (c · t_max · n̂)` does not depend on the
    /// session size. Default true.
    pub scale_t_max: bool,
    /// Initial detection-time mean T̂_D. The paper only says "conservative (i.e., large)"
    /// (§3.2). Our choice: 2 s, two orders of magnitude above the round-trip time of the
    /// paper's 10 ms topologies, so early experiments are not declared successful before
    /// their congestion could show; failed experiments then pull it down to the measured
    /// value.
    pub detection_init: Duration,
    /// Initial detection-time deviation σ̂_D. Our choice: 0.5 s, which with k1 = 1, k2 = 2
    /// makes the initial detection timer 3 s.
    pub detection_dev_init: Duration,
    /// Gain w of the short-term loss-rate estimator (the "L > T" reaction of §3.4, whose form
    /// the paper does not give). Our choice: an exponentially weighted moving average of the
    /// per-packet loss indicator over all subscribed layers, `p ← (1-w)p + w·1{lost}`, updated
    /// once per lost packet (as gaps reveal them) and once per received packet, with
    /// w = 1/16 (a memory of about 16 packets: ~0.13 s at level 5 of the §4 source).
    pub loss_gain: f64,
    /// T, the loss-rate threshold of the "L > T" transitions. 0.25: the NLM paper (Nakauchi
    /// et al., §5) reports running RLM with a 25 % threshold.
    pub loss_threshold: f64,
    /// Minimum interval between this receiver's session messages. The paper only says the
    /// group size is estimated "through the exchange of session-wide control messages (e.g.,
    /// as in RTCP)" (§3.5). We follow RTCP (RFC 1889 §6.2): the interval is
    /// `max(session_interval_min, n̂ · control_size_bytes · 8 / session_bandwidth_bps)`, each
    /// actual interval drawn uniformly on [0.5, 1.5] times that. Default 5 s (RTCP's minimum).
    pub session_interval_min: Duration,
    /// Session-wide bandwidth budget for session messages, bit/s. Default 1600 b/s (5 % of the
    /// 32 kb/s base layer, as RTCP gives control 5 % of the session): with 40-byte messages the
    /// interval grows past 5 s beyond 25 receivers.
    pub session_bandwidth_bps: f64,
    /// A member not heard from for this many (current) session intervals is forgotten
    /// (RTCP's member timeout is 5 intervals). The group-size estimate n̂ is 1 (this receiver)
    /// plus the number of distinct other senders of RLM messages heard within that time.
    pub member_timeout_intervals: u32,
    /// Size of RLM control packets (join announcements and session messages), bytes.
    pub control_size_bytes: u32,
    /// Record every data arrival time (for the windowed loss metric). Costs 8 bytes per packet.
    pub record_arrivals: bool,
}

impl Default for RlmConfig {
    fn default() -> Self {
        RlmConfig {
            alpha: 2.0,
            beta: 2.0 / 3.0,
            k1: 1.0,
            k2: 2.0,
            g1: 0.25,
            g2: 0.25,
            t_min: Duration::from_secs(5),
            t_max: Duration::from_secs(600),
            scale_t_max: true,
            detection_init: Duration::from_secs(2),
            detection_dev_init: Duration::from_millis(500),
            loss_gain: 1.0 / 16.0,
            loss_threshold: 0.25,
            session_interval_min: Duration::from_secs(5),
            session_bandwidth_bps: 1600.0,
            member_timeout_intervals: 5,
            control_size_bytes: 40,
            record_arrivals: true,
        }
    }
}

/// A configuration value out of range; names the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RlmError {
    #[error("RLM config field `{field}` = {value}: {reason}")]
    Invalid { field: &'static str, value: f64, reason: &'static str },
    #[error("an RLM receiver needs at least one data group")]
    NoLayers,
}

impl RlmConfig {
    /// Check every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), RlmError> {
        let bad = |field, value, reason| Err(RlmError::Invalid { field, value, reason });
        if !(self.alpha.is_finite() && self.alpha > 1.0) {
            return bad("alpha", self.alpha, "must be > 1");
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return bad("beta", self.beta, "must be in (0, 1)");
        }
        for (f, v) in [("k1", self.k1), ("k2", self.k2)] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(f, v, "must be finite and >= 0");
            }
        }
        for (f, v) in [("g1", self.g1), ("g2", self.g2), ("loss_gain", self.loss_gain)] {
            if !(v > 0.0 && v <= 1.0) {
                return bad(f, v, "must be in (0, 1]");
            }
        }
        if !(self.loss_threshold > 0.0 && self.loss_threshold < 1.0) {
            return bad("loss_threshold", self.loss_threshold, "must be in (0, 1)");
        }
        if self.t_min.is_zero() {
            return bad("t_min", 0.0, "must be > 0");
        }
        if self.t_max < self.t_min {
            return bad("t_max", self.t_max.as_secs_f64(), "must be >= t_min");
        }
        if (self.k1 * self.detection_init.as_secs_f64() + self.k2 * self.detection_dev_init.as_secs_f64()) <= 0.0 {
            return bad("detection_init", self.detection_init.as_secs_f64(), "initial detection timer must be > 0");
        }
        if self.session_interval_min.is_zero() {
            return bad("session_interval_min", 0.0, "must be > 0");
        }
        if !(self.session_bandwidth_bps.is_finite() && self.session_bandwidth_bps > 0.0) {
            return bad("session_bandwidth_bps", self.session_bandwidth_bps, "must be > 0");
        }
        if self.member_timeout_intervals == 0 {
            return bad("member_timeout_intervals", 0.0, "must be >= 1");
        }
        Ok(())
    }
}

/// The four states of Figure 6 (§3.4). The `u8` value is what the records store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RlmState {
    /// Steady state: a join-timer is pending (below the top level).
    Steady = 0,
    /// Hysteresis: absorb transient congestion for a detection time.
    Hysteresis = 1,
    /// Measurement: watch the loss-rate estimator for long-term congestion.
    Measurement = 2,
    /// Drop: a layer was just dropped; ignore losses for a detection time.
    Drop = 3,
}

/// Why a state transition happened (records' `trans_cause`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Cause {
    /// A single packet loss (the "L" edges).
    Loss = 0,
    /// The loss-rate estimator crossed the threshold ("L > T").
    LossRate = 1,
    /// The detection timer expired ("T_D").
    DetectionTimer = 2,
}

/// Outcome of a join-experiment (records' `exp_outcome`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Outcome {
    Running = 0,
    Success = 1,
    Failed = 2,
}

/// Columnar records of one receiver, readable after a run.
#[derive(Clone, Debug, Default)]
pub struct RlmRecords {
    /// State transitions (only actual changes of state; the S→S edges of Figure 6 are the
    /// experiments and relaxations below).
    pub trans_time_ns: Vec<u64>,
    pub trans_from: Vec<u8>,
    pub trans_to: Vec<u8>,
    pub trans_cause: Vec<u8>,
    /// Own join-experiments: start, target level, outcome ([`Outcome`] as u8), end (u64::MAX
    /// while running), and for failed ones the detection-time sample in ns (0 otherwise).
    pub exp_start_ns: Vec<u64>,
    pub exp_level: Vec<u32>,
    pub exp_outcome: Vec<u8>,
    pub exp_end_ns: Vec<u64>,
    pub exp_detect_ns: Vec<u64>,
    /// Level changes (the level after the change).
    pub level_time_ns: Vec<u64>,
    pub level: Vec<u32>,
    /// Losses: one row per sequence gap, at the arrival that revealed it.
    pub loss_time_ns: Vec<u64>,
    pub loss_layer: Vec<u8>,
    pub loss_count: Vec<u64>,
    /// Data arrival times (when `record_arrivals`), and the total count either way.
    pub arr_time_ns: Vec<u64>,
    pub received: u64,
    /// Join-timer firings suppressed by a lower experiment in progress (§3.4).
    pub supp_time_ns: Vec<u64>,
    pub supp_level: Vec<u32>,
    /// Shared-learning backoffs: a foreign experiment at my next level coincided with
    /// congestion (§3.3).
    pub shared_time_ns: Vec<u64>,
    pub shared_level: Vec<u32>,
    /// Foreign join announcements heard (time, level).
    pub heard_time_ns: Vec<u64>,
    pub heard_level: Vec<u32>,
    /// Control packets sent (join announcements + session messages).
    pub control_sent: u64,
    /// Packets ignored as malformed or not part of this session.
    pub ignored: u64,
}

impl RlmRecords {
    pub fn lost(&self) -> u64 {
        self.loss_count.iter().sum()
    }
}

/// Draw one join-timer interval for mean parameter λ (§4): `λ/2 + X`, X exponential with
/// mean λ truncated to `[0, 4λ]` (density `e^{-x/λ} / (λ(1 - e^{-4}))`), by inversion.
/// Support `[λ/2, 9λ/2]`; mean `λ/2 + λ(1 - 5e^{-4})/(1 - e^{-4})` ≈ 1.425 λ.
pub fn draw_join_interval(lambda: Duration, rng: &mut Rng) -> Duration {
    let l = lambda.as_secs_f64();
    let u = rng.uniform();
    let trunc = 1.0 - (-4.0f64).exp();
    let x = -l * (1.0 - u * trunc).ln();
    Duration::from_secs_f64(l / 2.0 + x.min(4.0 * l))
}

// Timer slots. Expired timers are handled in deadline order; on a tie the detection timer
// goes first (an experiment's outcome is settled before the next join-timer is looked at).
const T_DETECT: usize = 0;
const T_JOIN: usize = 1;
const T_SESSION: usize = 2;

#[derive(Clone, Copy, Debug)]
struct OwnExperiment {
    level: u32,
    start: Instant,
    /// First loss seen while it ran (when it sent us to M).
    onset: Option<Instant>,
    row: usize,
}

/// An RLM receiver (§3). See the module documentation.
#[derive(Debug)]
pub struct RlmReceiver {
    cfg: RlmConfig,
    data_groups: Vec<GroupId>,
    control_group: GroupId,
    addr: Addr,
    rng: Rng,
    started: bool,
    state: RlmState,
    /// N, the current level of subscription (layers 1..N).
    level: u32,
    /// `T_J^k` in seconds, index k = 1..=L (index 0 unused).
    join_mean_s: Vec<f64>,
    /// T̂_D and σ̂_D, seconds.
    td_s: f64,
    sd_s: f64,
    timers: TimerTable<3>,
    own: Option<OwnExperiment>,
    /// Start (arrival of the announcement) of the latest foreign experiment per level.
    foreign_start: Vec<Option<Instant>>,
    /// Other members heard from: (address, last heard).
    members: Vec<(Addr, Instant)>,
    /// Next expected sequence number per layer (None until the first packet after a join).
    gap_next: Vec<Option<u64>>,
    /// Short-term loss-rate estimate.
    loss_rate: f64,
    out: VecDeque<Packet>,
    events: VecDeque<AgentEvent>,
    pub records: RlmRecords,
}

impl RlmReceiver {
    /// A receiver of the layers on `data_groups` (layer m, 0-based, on `data_groups[m]`,
    /// cumulative) that announces and hears experiments on `control_group`.
    ///
    /// Panics on an invalid configuration or no data groups; scenario code checks with
    /// [`RlmReceiver::try_new`] first.
    pub fn new(cfg: RlmConfig, data_groups: Vec<GroupId>, control_group: GroupId) -> Self {
        match Self::try_new(cfg, data_groups, control_group) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    pub fn try_new(cfg: RlmConfig, data_groups: Vec<GroupId>, control_group: GroupId) -> Result<Self, RlmError> {
        cfg.validate()?;
        if data_groups.is_empty() {
            return Err(RlmError::NoLayers);
        }
        let l = data_groups.len();
        let t_min = cfg.t_min.as_secs_f64();
        Ok(RlmReceiver {
            td_s: cfg.detection_init.as_secs_f64(),
            sd_s: cfg.detection_dev_init.as_secs_f64(),
            cfg,
            control_group,
            addr: Addr::default(),
            rng: Rng::seed_from_u64(0),
            started: false,
            state: RlmState::Steady,
            level: 0,
            join_mean_s: vec![t_min; l + 1],
            timers: TimerTable::default(),
            own: None,
            foreign_start: vec![None; l + 1],
            members: Vec::new(),
            gap_next: vec![None; l],
            loss_rate: 0.0,
            out: VecDeque::new(),
            events: VecDeque::new(),
            records: RlmRecords::default(),
            data_groups,
        })
    }

    // ------------------------------------------------------------------ read-only views

    pub fn config(&self) -> &RlmConfig {
        &self.cfg
    }
    pub fn state(&self) -> RlmState {
        self.state
    }
    /// Current level of subscription N (number of layers).
    pub fn level(&self) -> u32 {
        self.level
    }
    /// Number of layers available.
    pub fn layers(&self) -> u32 {
        self.data_groups.len() as u32
    }
    /// `T_J^k`, the join-timer mean parameter for the experiment to level k (1..=L).
    pub fn join_timer_mean(&self, k: u32) -> Duration {
        Duration::from_secs_f64(self.join_mean_s[k as usize])
    }
    /// (T̂_D, σ̂_D).
    pub fn detection_estimate(&self) -> (Duration, Duration) {
        (Duration::from_secs_f64(self.td_s), Duration::from_secs_f64(self.sd_s))
    }
    /// The detection timer `k1·T̂_D + k2·σ̂_D` (§3.4).
    pub fn detection_window(&self) -> Duration {
        Duration::from_secs_f64(self.cfg.k1 * self.td_s + self.cfg.k2 * self.sd_s)
    }
    /// The short-term loss-rate estimate.
    pub fn loss_rate(&self) -> f64 {
        self.loss_rate
    }
    /// When the pending join-timer fires (only in S below the top level).
    pub fn join_deadline(&self) -> Option<Instant> {
        self.timers.get(T_JOIN)
    }
    /// When the detection timer fires (relaxation in S; state timer in H, M, D).
    pub fn detection_deadline(&self) -> Option<Instant> {
        self.timers.get(T_DETECT)
    }
    pub fn session_deadline(&self) -> Option<Instant> {
        self.timers.get(T_SESSION)
    }
    /// Estimated number of receivers n̂ (this one included), as of the last update.
    pub fn receivers_estimate(&self) -> u32 {
        1 + self.members.len() as u32
    }
    /// The effective `T_max`: `t_max · n̂` when scaling, else `t_max` (§3.5).
    pub fn t_max_effective(&self) -> Duration {
        if self.cfg.scale_t_max {
            self.cfg.t_max * self.receivers_estimate() as u64
        } else {
            self.cfg.t_max
        }
    }
    /// Whether an own experiment is running, and at which level.
    pub fn own_experiment(&self) -> Option<u32> {
        self.own.map(|e| e.level)
    }

    // ------------------------------------------------------------------ internals

    fn window(&self) -> Duration {
        self.detection_window()
    }

    fn set_state(&mut self, now: Instant, to: RlmState, cause: Cause) {
        if to != self.state {
            let r = &mut self.records;
            r.trans_time_ns.push(now.as_nanos());
            r.trans_from.push(self.state as u8);
            r.trans_to.push(to as u8);
            r.trans_cause.push(cause as u8);
            self.state = to;
        }
    }

    fn push_level(&mut self, now: Instant) {
        self.records.level_time_ns.push(now.as_nanos());
        self.records.level.push(self.level);
        self.events.push_back(AgentEvent::LevelChanged { level: self.level });
    }

    /// Subscribe to the next layer (the "add" action, §3.4).
    fn add_layer(&mut self, now: Instant) {
        let m = self.level as usize;
        self.events.push_back(AgentEvent::Join(self.data_groups[m]));
        self.gap_next[m] = None; // gap tracking restarts at the first packet
        self.level += 1;
        self.push_level(now);
    }

    /// The "drop" action (§3.4): leave the top layer and back off its join-timer (§3.5).
    /// Returns false at level 1 (the base layer is kept).
    fn drop_layer(&mut self, now: Instant) -> bool {
        if self.level <= 1 {
            return false;
        }
        let k = self.level;
        self.backoff(k);
        self.level -= 1;
        let m = self.level as usize;
        self.events.push_back(AgentEvent::Leave(self.data_groups[m]));
        self.gap_next[m] = None;
        self.push_level(now);
        true
    }

    // §3.5, join-timer backoff: T_J^k ← min(α·T_J^k, T_max)
    fn backoff(&mut self, k: u32) {
        let t_max = self.t_max_effective().as_secs_f64();
        let t = &mut self.join_mean_s[k as usize];
        *t = (self.cfg.alpha * *t).min(t_max);
    }

    // §3.5, join-timer relaxation: T_J^k ← max(β·T_J^k, T_min)
    fn relax(&mut self, k: u32) {
        let t_min = self.cfg.t_min.as_secs_f64();
        let t = &mut self.join_mean_s[k as usize];
        *t = (self.cfg.beta * *t).max(t_min);
    }

    // §3.5, detection-time estimator: deviation first (against the old mean), then the mean.
    fn feed_detection(&mut self, sample: Duration) {
        let d = sample.as_secs_f64();
        self.sd_s = (1.0 - self.cfg.g2) * self.sd_s + self.cfg.g2 * (d - self.td_s).abs();
        self.td_s = (1.0 - self.cfg.g1) * self.td_s + self.cfg.g1 * d;
    }

    fn arm_join_timer(&mut self, now: Instant) {
        if self.level < self.layers() {
            let k = self.level as usize + 1;
            // the level's mean, clamped to the current (possibly shrunk) T_max
            let lambda = self.join_mean_s[k].min(self.t_max_effective().as_secs_f64());
            let d = draw_join_interval(Duration::from_secs_f64(lambda), &mut self.rng);
            self.timers.set(T_JOIN, now + d);
        } else {
            self.timers.stop(T_JOIN);
        }
    }

    fn arm_detection(&mut self, now: Instant) {
        let w = self.window();
        self.timers.set(T_DETECT, now + w);
    }

    /// Enter S: a pending join-timer (§3.4) and the relaxation clock.
    fn enter_steady(&mut self, now: Instant, cause: Cause) {
        self.set_state(now, RlmState::Steady, cause);
        self.arm_join_timer(now);
        self.arm_detection(now);
    }

    /// Enter H, M or D: no join-timer outside S; the detection timer bounds the stay.
    fn enter_waiting(&mut self, now: Instant, to: RlmState, cause: Cause) {
        self.set_state(now, to, cause);
        self.timers.stop(T_JOIN);
        self.arm_detection(now);
    }

    /// Highest foreign experiment in progress (started less than a detection window ago).
    fn highest_foreign(&self, now: Instant) -> Option<u32> {
        let w = self.window();
        (1..self.foreign_start.len())
            .rev()
            .find(|&k| matches!(self.foreign_start[k], Some(t) if now.saturating_since(t) < w))
            .map(|k| k as u32)
    }

    fn foreign_in_progress(&self, now: Instant, k: u32) -> bool {
        let w = self.window();
        matches!(self.foreign_start.get(k as usize), Some(Some(t)) if now.saturating_since(*t) < w)
    }

    fn lower_experiment_in_progress(&self, now: Instant, pending: u32) -> bool {
        if matches!(self.own, Some(e) if e.level < pending) {
            return true;
        }
        (1..pending).any(|k| self.foreign_in_progress(now, k))
    }

    fn end_experiment(&mut self, now: Instant, outcome: Outcome, sample: Option<Duration>) {
        if let Some(e) = self.own.take() {
            let r = &mut self.records;
            r.exp_outcome[e.row] = outcome as u8;
            r.exp_end_ns[e.row] = now.as_nanos();
            if let Some(s) = sample {
                r.exp_detect_ns[e.row] = s.as_nanos();
            }
        }
    }

    fn control_packet(&self, kind: u8, level: u32) -> Packet {
        let mut p = Packet::data(Dest::Group(self.control_group), self.cfg.control_size_bytes);
        p.header = Header::Rlm(RlmHeader {
            kind,
            level: level.min(u8::MAX as u32) as u8,
            current: self.level.min(u8::MAX as u32) as u8,
            receivers: self.receivers_estimate(),
        });
        p
    }

    fn send(&mut self, p: Packet) {
        self.records.control_sent += 1;
        self.out.push_back(p);
    }

    /// The join-timer fired in S (§3.4).
    fn on_join_timer(&mut self, now: Instant) {
        if self.state != RlmState::Steady || self.level >= self.layers() {
            return;
        }
        let pending = self.level + 1;
        if self.lower_experiment_in_progress(now, pending) {
            // §3.4: "If a lower layer join-experiment is in progress, we ignore the current
            // join-timer and simply schedule a new one."
            self.records.supp_time_ns.push(now.as_nanos());
            self.records.supp_level.push(pending);
            self.arm_join_timer(now);
            return;
        }
        // §3.3, shared learning: announce the experiment to the group, then add the layer.
        let p = self.control_packet(RlmHeader::JOIN, pending);
        self.send(p);
        self.add_layer(now);
        let r = &mut self.records;
        let row = r.exp_start_ns.len();
        r.exp_start_ns.push(now.as_nanos());
        r.exp_level.push(pending);
        r.exp_outcome.push(Outcome::Running as u8);
        r.exp_end_ns.push(u64::MAX);
        r.exp_detect_ns.push(0);
        self.own = Some(OwnExperiment { level: pending, start: now, onset: None, row });
        // The experiment lasts one detection time; the S detection clock restarts with it.
        // Figure 4: a new join-timer is set at once (it is suppressed while this experiment
        // is still in progress).
        self.arm_detection(now);
        self.arm_join_timer(now);
    }

    fn on_detection_timer(&mut self, now: Instant) {
        match self.state {
            RlmState::Steady => {
                // An experiment that outlived the detection time without congestion succeeded.
                if self.own.is_some() {
                    self.end_experiment(now, Outcome::Success, None);
                }
                // §3.5: relax the current level's join-timer at detection-timer intervals.
                let n = self.level;
                self.relax(n);
                self.arm_detection(now);
            }
            RlmState::Hysteresis => {
                // §3.4: transient congestion is over; measure for another detection time.
                self.enter_waiting(now, RlmState::Measurement, Cause::DetectionTimer);
            }
            RlmState::Measurement => {
                // No long-term congestion: an own experiment waiting here survived.
                if self.own.is_some() {
                    self.end_experiment(now, Outcome::Success, None);
                }
                self.enter_steady(now, Cause::DetectionTimer);
            }
            RlmState::Drop => self.enter_steady(now, Cause::DetectionTimer),
        }
    }

    fn on_session_timer(&mut self, now: Instant) {
        self.expire_members(now);
        let p = self.control_packet(RlmHeader::SESSION, self.level);
        self.send(p);
        let d = self.session_interval().mul_f64(self.rng.uniform_range(0.5, 1.5));
        self.timers.set(T_SESSION, now + d);
    }

    /// RTCP-style deterministic interval (before randomisation).
    fn session_interval(&self) -> Duration {
        let n = self.receivers_estimate() as f64;
        let bw = n * self.cfg.control_size_bytes as f64 * 8.0 / self.cfg.session_bandwidth_bps;
        Duration::from_secs_f64(bw).max(self.cfg.session_interval_min)
    }

    fn expire_members(&mut self, now: Instant) {
        let timeout = self.session_interval() * self.cfg.member_timeout_intervals as u64;
        self.members.retain(|(_, t)| now.saturating_since(*t) < timeout);
    }

    /// A loss was detected (the "L" and "L > T" edges of Figure 6).
    fn on_loss(&mut self, now: Instant) {
        match self.state {
            RlmState::Steady => {
                let higher = self.highest_foreign(now);
                if let Some(e) = self.own {
                    if higher.is_none_or(|h| h <= e.level) {
                        // §3.4: our experiment is the highest in progress: it failed.
                        let sample = now.saturating_since(e.start);
                        self.feed_detection(sample);
                        self.end_experiment(now, Outcome::Failed, Some(sample));
                        self.drop_layer(now);
                        self.enter_waiting(now, RlmState::Drop, Cause::Loss);
                    } else {
                        // §3.4: a higher experiment is running too: measure before dropping.
                        if let Some(o) = self.own.as_mut() {
                            o.onset = Some(now);
                        }
                        self.enter_waiting(now, RlmState::Measurement, Cause::Loss);
                    }
                } else {
                    // §3.3, shared learning: congestion during a foreign experiment at the
                    // level I would try next means that level is problematic for me too.
                    let next = self.level + 1;
                    if next <= self.layers() && self.foreign_in_progress(now, next) {
                        self.backoff(next);
                        self.records.shared_time_ns.push(now.as_nanos());
                        self.records.shared_level.push(next);
                    }
                    // §3.4: not experimenting: absorb it in the hysteresis state.
                    self.enter_waiting(now, RlmState::Hysteresis, Cause::Loss);
                }
            }
            RlmState::Measurement => {
                if self.loss_rate > self.cfg.loss_threshold {
                    // §3.4: long-term congestion: drop the current layer.
                    if let Some(e) = self.own {
                        let sample = e.onset.unwrap_or(now).saturating_since(e.start);
                        self.feed_detection(sample);
                        self.end_experiment(now, Outcome::Failed, Some(sample));
                    }
                    if self.drop_layer(now) {
                        self.enter_waiting(now, RlmState::Drop, Cause::LossRate);
                    }
                }
            }
            // H absorbs transient congestion; D ignores losses until its timer expires.
            RlmState::Hysteresis | RlmState::Drop => {}
        }
    }

    fn on_data(&mut self, now: Instant, m: usize, p: &Packet) {
        self.records.received += 1;
        if self.cfg.record_arrivals {
            self.records.arr_time_ns.push(now.as_nanos());
        }
        if m >= self.level as usize {
            return; // a late packet of a layer already left: not gap-checked
        }
        let w = self.cfg.loss_gain;
        let mut lost = 0u64;
        match self.gap_next[m] {
            None => self.gap_next[m] = Some(p.seq + 1),
            Some(next) => {
                if p.seq > next {
                    lost = p.seq - next;
                }
                if p.seq >= next {
                    self.gap_next[m] = Some(p.seq + 1);
                }
            }
        }
        if lost > 0 {
            let r = &mut self.records;
            r.loss_time_ns.push(now.as_nanos());
            r.loss_layer.push(m as u8);
            r.loss_count.push(lost);
            // k loss indicators in a row: p ← (1-w)^k p + 1 - (1-w)^k
            let keep = (1.0 - w).powf(lost.min(1 << 20) as f64);
            self.loss_rate = keep * self.loss_rate + (1.0 - keep);
        }
        self.loss_rate *= 1.0 - w; // the received packet
        if lost > 0 {
            self.on_loss(now);
        }
    }

    fn on_control(&mut self, now: Instant, p: &Packet, h: &RlmHeader) {
        if p.src == self.addr {
            return; // our own message, back down the tree
        }
        match self.members.iter_mut().find(|(a, _)| *a == p.src) {
            Some(m) => m.1 = now,
            None => self.members.push((p.src, now)),
        }
        if h.kind == RlmHeader::JOIN {
            let k = h.level as u32;
            if k == 0 || k > self.layers() {
                self.records.ignored += 1;
                return;
            }
            // §3.4: note the experiment's start time for its level.
            self.foreign_start[k as usize] = Some(now);
            self.records.heard_time_ns.push(now.as_nanos());
            self.records.heard_level.push(k);
        } else if h.kind != RlmHeader::SESSION {
            self.records.ignored += 1;
        }
    }
}

impl Agent for RlmReceiver {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        if self.started {
            return;
        }
        self.started = true;
        self.addr = info.addr;
        self.rng = info.rng;
        self.events.push_back(AgentEvent::Join(self.control_group));
        self.add_layer(now); // level 1: the base layer
        self.state = RlmState::Steady;
        self.enter_steady(now, Cause::DetectionTimer);
        let d = self.session_interval().mul_f64(self.rng.uniform_range(0.5, 1.5));
        self.timers.set(T_SESSION, now + d);
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        if !self.started {
            self.records.ignored += 1;
            return;
        }
        let Some(g) = p.group() else {
            self.records.ignored += 1;
            return;
        };
        match p.header {
            Header::Data => match self.data_groups.iter().position(|x| *x == g) {
                Some(m) => self.on_data(now, m, p),
                None => self.records.ignored += 1,
            },
            Header::Rlm(h) if g == self.control_group => self.on_control(now, p, &h),
            _ => self.records.ignored += 1,
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        loop {
            let due = (0..3)
                .filter_map(|i| self.timers.get(i).filter(|t| *t <= now).map(|t| (t, i)))
                .min();
            let Some((_, slot)) = due else { break };
            self.timers.stop(slot);
            match slot {
                T_JOIN => self.on_join_timer(now),
                T_DETECT => self.on_detection_timer(now),
                _ => self.on_session_timer(now),
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        self.out.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        self.events.pop_front()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
