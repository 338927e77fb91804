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

use std::collections::VecDeque;

use castlab_core::{
    Addr, Agent, AgentEvent, ConfigError, Dest, Duration, GroupId, Header, Instant, NodeId, Packet, RlmHeader, RlmKind,
    Rng, StartInfo, TimerTable,
};

pub use crate::sink::Record;
use crate::window::WorstWindowLoss;

mod members;
use members::Members;

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
    /// (§3.2). We take 5 s, the value of McCanne's own RLM in ns-2 (`rlm_param(init-td)`):
    /// until a failed experiment has been measured, the detection timer must outlast the time
    /// a failing experiment takes to show congestion, two link delays plus the time to fill
    /// the bottleneck queue. That is about 6 s for topology (4)'s 720-packet queue at 32 pairs
    /// (one pair's extra 1 Mb/s filling it), 4 s at fig9's 2 s links. Our earlier 2 s ± 0.5 s
    /// (a 3 s timer) judged those experiments successful before their congestion arrived and
    /// left topology (4) overloaded at ~2 % loss that no receiver's measurement state reacts
    /// to (tests/protocols/test_rlm.py, docs/fidelity/rlm.md "Against ns-2's own RLM"). Failed experiments then pull
    /// the estimate to the measured value.
    pub detection_init: Duration,
    /// Initial detection-time deviation σ̂_D: 2 s, ns-2's `rlm_param(init-td-var)`; with
    /// k1 = 1, k2 = 2 the initial detection timer is 9 s.
    pub detection_dev_init: Duration,
    /// Gain w of the short-term loss-rate estimator (the "L > T" reaction of §3.4, whose form
    /// the paper does not give). Our choice: an exponentially weighted moving average of the
    /// per-packet loss indicator over all subscribed layers, `p ← (1-w)p + w·1{lost}`, updated
    /// once per lost packet (as gaps reveal them) and once per received packet, with
    /// w = 1/16 (a memory of about 16 packets: ~0.13 s at level 5 of the §4 source).
    pub loss_gain: f64,
    /// T, the loss-rate threshold of the "L > T" transitions. 0.25: Nakauchi et al. (§5)
    /// report running RLM with a 25 % threshold.
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
    /// L, the most other members the receiver stores for n̂ (not a paper constant; our choice).
    /// Up to L current others n̂ is the exact count above; beyond, the member table samples
    /// the membership by RFC 2762's key and mask (§2, §3) with its binning estimate (§4.2),
    /// storing at most L (`members.rs`). Default 256: the largest RLM session of castlab's
    /// experiments and tests has 100 receivers (rlm-fig10, rlm-fig11, rlm-fig12), so none
    /// samples; L = 256 keeps the table at 6 KB (16-byte entries and a 512-slot index), and
    /// once sampling the table holds about L/2 to L members, so n̂'s standard deviation is
    /// about 6 to 9 % of its mean (RFC 2762 §2.1).
    pub member_limit: u32,
    /// Size of RLM control packets (join announcements and session messages), bytes.
    pub control_size_bytes: u32,
    /// What the receiver keeps besides its protocol records (not a paper constant; our
    /// choice). [`Record::Summary`] (the default): the count of data arrivals and the online
    /// worst-case loss for `windows`, so memory does not grow with the run.
    /// [`Record::Arrivals`]: also every data arrival's time and layer in `records.arr_time_ns`
    /// and `records.arr_layer` (9 bytes per packet), from which the windowed loss of any
    /// window, and what each layer delivered, can be computed afterwards.
    pub record: Record,
    /// How the "L > T" test of the measurement state reads the loss rate. `false` (default,
    /// our choice above): the moving average of `loss_gain`. `true`: the estimator of ns-2's
    /// RLM (McCanne's `MMG`, `exceed_loss_thresh`): packets lost over packets lost plus
    /// received since M was entered, judged only once `loss_ratio_min_packets` packets have
    /// been received in M.
    pub loss_ratio_in_m: bool,
    /// The packets M must receive before `loss_ratio_in_m` judges its ratio (ns-2's MMG: 10).
    pub loss_ratio_min_packets: u32,
    /// Extra σ̂_D multiples per level in the measurement state's timer: M lasts
    /// `k1·T̂_D + (k2 + k2_m_per_level·N)·σ̂_D` at level N. Default 0: §3.4 gives one detection
    /// timer for every state. ns-2's MMG (`set_TD_timer_wait`) waits `T̂_D + (N/2 + 1.5)σ̂_D`
    /// in M and `T̂_D + 1.5σ̂_D` elsewhere, i.e. k2 = 1.5 with 0.5 here.
    pub k2_m_per_level: f64,
    /// Whether the join-timer keeps running outside S. Default false: §3.4 sets a join-timer in
    /// the steady state, so it is cancelled on leaving S and drawn afresh on entering it.
    /// `true` is ns-2's MMG arming: the timer keeps running in H, M and D, a firing outside S
    /// (or suppressed) only draws the next one, entering S does not redraw it, and after a drop
    /// one is armed if none is pending (ns-2's MMG never re-arms after a failed experiment to
    /// the top layer; `tests/ns2/rlm.tcl` adds that re-arming as `rearm=1`).
    pub join_timer_outside_steady: bool,
    /// Whether a drop on the loss rate in M ("L > T") backs off the dropped level's join-timer.
    /// Default true: §3.4's drop action. ns-2's MMG backs off only a level whose experiment
    /// failed in S (`log-loss`), never on a drop from M.
    pub backoff_on_loss_rate_drop: bool,
    /// Windows (§4.1: the paper uses 1, 10 and 100 s) for which the worst-case windowed loss
    /// is computed online while the receiver runs ([`crate::window`]); memory per window is
    /// bounded by the arrivals of one window length, not by the run. Default none (our
    /// choice: experiments ask for the windows they report).
    pub windows: Vec<Duration>,
    /// The rows of foreign join announcements heard (`records.heard_time_ns`, `heard_level`;
    /// not a paper constant: our choice). Every announcement reaches every receiver, so with N
    /// receivers these rows grow with N times the session's experiments, in every receiver:
    /// N² rows in all. `Off` (the default, unlike the other protocols' `trace`: no study reads
    /// them) keeps none; `Full` keeps every one. What the receiver does is the same either way.
    pub trace: crate::Trace,
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
            detection_init: Duration::from_secs(5),
            detection_dev_init: Duration::from_secs(2),
            loss_gain: 1.0 / 16.0,
            loss_threshold: 0.25,
            session_interval_min: Duration::from_secs(5),
            session_bandwidth_bps: 1600.0,
            member_timeout_intervals: 5,
            member_limit: 256,
            control_size_bytes: 40,
            record: Record::Summary,
            loss_ratio_in_m: false,
            loss_ratio_min_packets: 10,
            k2_m_per_level: 0.0,
            join_timer_outside_steady: false,
            backoff_on_loss_rate_drop: true,
            windows: Vec::new(),
            trace: crate::Trace::Off,
        }
    }
}

castlab_core::records_table!(RlmRecords {
    columns: [
        level_time_ns,
        level,
        exp_start_ns,
        exp_level,
        exp_outcome,
        exp_end_ns,
        exp_detect_ns,
        trans_time_ns,
        trans_from,
        trans_to,
        trans_cause,
        loss_time_ns,
        loss_layer,
        loss_count,
        arr_time_ns,
        arr_layer,
        supp_time_ns,
        supp_level,
        shared_time_ns,
        shared_level,
        heard_time_ns,
        heard_level,
    ],
    scalars: [
        received = |r| r.received,
        lost = |r| r.lost(),
        control_sent = |r| r.control_sent,
        ignored = |r| r.ignored,
    ],
});

castlab_core::config_fields!(RlmConfig {
    alpha,
    beta,
    k1,
    k2,
    g1,
    g2,
    t_min,
    t_max,
    scale_t_max,
    detection_init,
    detection_dev_init,
    loss_gain,
    loss_threshold,
    session_interval_min,
    session_bandwidth_bps,
    member_timeout_intervals,
    member_limit,
    control_size_bytes,
    record,
    loss_ratio_in_m,
    loss_ratio_min_packets,
    k2_m_per_level,
    join_timer_outside_steady,
    backoff_on_loss_rate_drop,
    windows,
    trace,
});

impl RlmConfig {
    /// Check every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |field: &str, value: f64, reason: &str| Err(ConfigError::new(field, value, reason));
        if !(self.alpha.is_finite() && self.alpha > 1.0) {
            return bad("alpha", self.alpha, "must be > 1");
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return bad("beta", self.beta, "must be in (0, 1)");
        }
        for (f, v) in [("k1", self.k1), ("k2", self.k2), ("k2_m_per_level", self.k2_m_per_level)] {
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
        if self.member_limit == 0 {
            return bad("member_limit", 0.0, "must be >= 1");
        }
        if self.windows.iter().any(|w| w.is_zero()) {
            return bad("windows", 0.0, "every window must be positive");
        }
        Ok(())
    }
}

castlab_core::wire_enum! {
    /// The four states of Figure 6 (§3.4). The `u8` value is what the records store; bindings
    /// show it by name.
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
}

castlab_core::wire_enum! {
    /// Why a state transition happened (records' `trans_cause`).
    pub enum Cause {
        /// A single packet loss (the "L" edges).
        Loss = 0,
        /// The loss-rate estimator crossed the threshold ("L > T").
        LossRate = 1,
        /// The detection timer expired ("T_D").
        DetectionTimer = 2,
    }
}

castlab_core::wire_enum! {
    /// Outcome of a join-experiment (records' `exp_outcome`).
    pub enum Outcome { Running = 0, Success = 1, Failed = 2 }
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
    /// Data arrival times (with [`Record::Arrivals`]), and the total count either way.
    pub arr_time_ns: Vec<u64>,
    pub arr_layer: Vec<u8>,
    pub received: u64,
    /// Join-timer firings suppressed by a lower experiment in progress (§3.4).
    pub supp_time_ns: Vec<u64>,
    pub supp_level: Vec<u32>,
    /// Shared-learning backoffs: a foreign experiment at my next level coincided with
    /// congestion (§3.3).
    pub shared_time_ns: Vec<u64>,
    pub shared_level: Vec<u32>,
    /// Foreign join announcements heard (time, level), with `RlmConfig::trace` on.
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

castlab_core::timers! {
    /// The receiver's timers. Expired timers are handled in deadline order; on a tie the
    /// detection timer goes first (an experiment's outcome is settled before the next
    /// join-timer is looked at).
    pub enum RlmTimer { Detect, Join, Session }
}

#[derive(Clone, Copy, Debug)]
struct OwnExperiment {
    level: u32,
    start: Instant,
    /// First loss seen while it ran (when it sent us to M).
    onset: Option<Instant>,
    row: usize,
}

/// An RLM receiver's memory in bytes, by part ([`RlmReceiver::memory`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RlmMemory {
    /// The receiver's own struct (configuration, state, timers, estimators).
    pub fixed: usize,
    /// The member table behind the group-size estimate n̂ (one entry per other receiver
    /// heard, an expired one kept to be reused until room is needed): at most
    /// `member_limit` entries.
    pub members: usize,
    /// The rows of foreign join announcements heard (`heard_time_ns`, `heard_level`): grow with
    /// the session's experiments, so with the session size times the run's length.
    pub heard: usize,
    /// Every other record column (levels, transitions, own experiments, losses, suppressions,
    /// shared-learning backoffs, and with [`Record::Arrivals`] the arrivals).
    pub records: usize,
    /// Per-layer state (groups, join-timer means, foreign experiments, gap tracking).
    pub layers: usize,
    /// The online worst-case windowed loss, one per configured window.
    pub windows: usize,
    /// The outgoing packet and event queues.
    pub queues: usize,
}

impl RlmMemory {
    pub fn total(&self) -> usize {
        self.fixed + self.members + self.heard + self.records + self.layers + self.windows + self.queues
    }
}

/// An RLM receiver (§3). See the module documentation.
///
/// Laid out in order (`repr(C)`) from a cache line's start (`align(64)`): every control packet
/// of the session reaches every receiver, and with 10^4 receivers their state fits no cache,
/// so what a control packet reads comes first, in the first line: the flags and group that
/// route it, the own address, and the member table's key, mask and index (`members`), which
/// reject a sender not sampled without reading anything else.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct RlmReceiver {
    control_group: GroupId,
    started: bool,
    /// Told to stop ([`Agent::handle_shutdown`]): every group left, nothing armed.
    stopped: bool,
    /// The last packet queued nothing and left the deadline as it was (`quiet_after_packet`).
    quiet: bool,
    /// `cfg.trace.on()`, in the first line with the rest of what a control packet reads.
    trace_heard: bool,
    addr: Addr,
    /// Other members heard from, and when last heard.
    members: Members,
    /// Start (arrival of the announcement) of the latest foreign experiment per level.
    foreign_start: Vec<Option<Instant>>,
    cfg: RlmConfig,
    data_groups: Vec<GroupId>,
    /// No group carries two layers (then a packet's layer field can pick its layer directly).
    groups_distinct: bool,
    rng: Rng,
    state: RlmState,
    /// N, the current level of subscription (layers 1..N).
    level: u32,
    /// `T_J^k` in seconds, index k = 1..=L (index 0 unused).
    join_mean_s: Vec<f64>,
    /// T̂_D and σ̂_D, seconds.
    td_s: f64,
    sd_s: f64,
    timers: TimerTable<RlmTimer>,
    own: Option<OwnExperiment>,
    /// Next expected sequence number per layer (None until the first packet after a join).
    gap_next: Vec<Option<u64>>,
    /// The node the data comes from (its last data packet's), whose restart resets `gap_next`.
    data_source: Option<NodeId>,
    /// When each layer was last joined: packets sent before that (the tail of an earlier
    /// subscription still in flight) are counted as received but never seed gap tracking,
    /// or the jump to the first packet of the new subscription would look like a loss.
    joined_at: Vec<Instant>,
    /// Short-term loss-rate estimate.
    loss_rate: f64,
    /// Packets received and lost since M was last entered (`loss_ratio_in_m`).
    m_received: u64,
    m_lost: u64,
    /// Online worst-case windowed loss, one per configured window.
    windows: Vec<WorstWindowLoss>,
    out: VecDeque<Packet>,
    events: VecDeque<AgentEvent>,
    pub records: RlmRecords,
}

impl RlmReceiver {
    /// A receiver of the layers on `data_groups` (layer m, 0-based, on `data_groups[m]`,
    /// cumulative) that announces and hears experiments on `control_group`. The error names
    /// the bad configuration field (or `data_groups` when there are none).
    pub fn try_new(cfg: RlmConfig, data_groups: Vec<GroupId>, control_group: GroupId) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if data_groups.is_empty() {
            return Err(ConfigError::new("data_groups", "[]", "needs at least one layer"));
        }
        if data_groups.contains(&control_group) {
            return Err(ConfigError::new("control_group", control_group.0, "must not be one of the data groups"));
        }
        let l = data_groups.len();
        let t_min = cfg.t_min.as_secs_f64();
        let windows = cfg.windows.iter().map(|w| WorstWindowLoss::new(w.as_nanos())).collect();
        let groups_distinct = data_groups.iter().enumerate().all(|(i, g)| !data_groups[..i].contains(g));
        let member_limit = cfg.member_limit as usize;
        Ok(RlmReceiver {
            trace_heard: cfg.trace.on(),
            groups_distinct,
            td_s: cfg.detection_init.as_secs_f64(),
            sd_s: cfg.detection_dev_init.as_secs_f64(),
            cfg,
            control_group,
            addr: Addr::default(),
            rng: Rng::seed_from_u64(0),
            started: false,
            stopped: false,
            state: RlmState::Steady,
            level: 0,
            join_mean_s: vec![t_min; l + 1],
            timers: TimerTable::default(),
            own: None,
            foreign_start: vec![None; l + 1],
            members: Members::new(member_limit),
            gap_next: vec![None; l],
            data_source: None,
            joined_at: vec![Instant::ZERO; l],
            loss_rate: 0.0,
            m_received: 0,
            m_lost: 0,
            windows,
            out: VecDeque::new(),
            events: VecDeque::new(),
            quiet: false,
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
        self.timers.get(RlmTimer::Join)
    }
    /// When the detection timer fires (relaxation in S; state timer in H, M, D).
    pub fn detection_deadline(&self) -> Option<Instant> {
        self.timers.get(RlmTimer::Detect)
    }
    pub fn session_deadline(&self) -> Option<Instant> {
        self.timers.get(RlmTimer::Session)
    }
    /// Estimated number of receivers n̂ (this one included), as of the last update.
    /// Exact up to `member_limit` other receivers, RFC 2762's sampled estimate beyond.
    pub fn receivers_estimate(&self) -> u32 {
        1 + self.members.estimate().min(u64::from(u32::MAX - 1)) as u32
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
    /// What this receiver holds in memory, by part (allocated capacities, so the figures do not
    /// depend on the machine or the allocator's rounding).
    pub fn memory(&self) -> RlmMemory {
        use std::mem::size_of;
        fn cap<T>(v: &Vec<T>) -> usize {
            v.capacity() * size_of::<T>()
        }
        let r = &self.records;
        let records = cap(&r.trans_time_ns)
            + cap(&r.trans_from)
            + cap(&r.trans_to)
            + cap(&r.trans_cause)
            + cap(&r.exp_start_ns)
            + cap(&r.exp_level)
            + cap(&r.exp_outcome)
            + cap(&r.exp_end_ns)
            + cap(&r.exp_detect_ns)
            + cap(&r.level_time_ns)
            + cap(&r.level)
            + cap(&r.loss_time_ns)
            + cap(&r.loss_layer)
            + cap(&r.loss_count)
            + cap(&r.arr_time_ns)
            + cap(&r.arr_layer)
            + cap(&r.supp_time_ns)
            + cap(&r.supp_level)
            + cap(&r.shared_time_ns)
            + cap(&r.shared_level);
        let heard = cap(&r.heard_time_ns) + cap(&r.heard_level);
        let layers = cap(&self.data_groups)
            + cap(&self.join_mean_s)
            + cap(&self.foreign_start)
            + cap(&self.gap_next)
            + cap(&self.joined_at)
            + cap(&self.cfg.windows);
        let windows = cap(&self.windows) + self.windows.iter().map(WorstWindowLoss::heap_bytes).sum::<usize>();
        let queues = self.out.capacity() * size_of::<Packet>() + self.events.capacity() * size_of::<AgentEvent>();
        RlmMemory {
            fixed: size_of::<Self>(),
            members: self.members.heap_bytes(),
            heard,
            records,
            layers,
            windows,
            queues,
        }
    }

    /// The online worst-case loss (§4.1) over windows of `window_ns`, or `None` if that window
    /// is not configured (`RlmConfig::windows`). Readable at any time; the run can go on.
    pub fn worst_window_loss(&self, window_ns: u64) -> Option<f64> {
        self.windows.iter().find(|w| w.window_ns() == window_ns).map(|w| w.value())
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
        self.gap_next[m] = None; // gap tracking restarts at the first packet sent after now
        self.joined_at[m] = now;
        self.level += 1;
        self.push_level(now);
    }

    /// The "drop" action (§3.4): leave the top layer and, with `backoff`, back off its
    /// join-timer (§3.5). Returns false at level 1 (the base layer is kept).
    fn drop_layer(&mut self, now: Instant, backoff: bool) -> bool {
        if self.level <= 1 {
            return false;
        }
        let k = self.level;
        if backoff {
            self.backoff(k);
        }
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
            self.timers.set(RlmTimer::Join, now + d);
        } else {
            self.timers.stop(RlmTimer::Join);
        }
    }

    fn arm_detection(&mut self, now: Instant) {
        let w = self.window();
        self.timers.set(RlmTimer::Detect, now + w);
    }

    /// Draw a join-timer unless one is pending (`join_timer_outside_steady`).
    fn arm_join_timer_if_idle(&mut self, now: Instant) {
        if self.timers.get(RlmTimer::Join).is_none() {
            self.arm_join_timer(now);
        }
    }

    /// Enter S: a pending join-timer (§3.4) and the relaxation clock.
    fn enter_steady(&mut self, now: Instant, cause: Cause) {
        self.set_state(now, RlmState::Steady, cause);
        if self.cfg.join_timer_outside_steady {
            self.arm_join_timer_if_idle(now);
        } else {
            self.arm_join_timer(now);
        }
        self.arm_detection(now);
    }

    /// Enter H, M or D: no join-timer outside S (unless `join_timer_outside_steady`); the
    /// detection timer bounds the stay, in M lengthened by `k2_m_per_level` per level.
    fn enter_waiting(&mut self, now: Instant, to: RlmState, cause: Cause) {
        self.set_state(now, to, cause);
        if self.cfg.join_timer_outside_steady {
            self.arm_join_timer_if_idle(now);
        } else {
            self.timers.stop(RlmTimer::Join);
        }
        if to == RlmState::Measurement {
            self.m_received = 0;
            self.m_lost = 0;
            let extra = self.cfg.k2_m_per_level * self.level as f64 * self.sd_s;
            let w = self.window() + Duration::from_secs_f64(extra);
            self.timers.set(RlmTimer::Detect, now + w);
        } else {
            self.arm_detection(now);
        }
    }

    /// The "L > T" test of M: the moving average, or with `loss_ratio_in_m` the ratio since M
    /// was entered (once enough packets were received there).
    fn loss_rate_exceeded(&self) -> bool {
        if self.cfg.loss_ratio_in_m {
            if self.m_received < self.cfg.loss_ratio_min_packets as u64 {
                return false;
            }
            let lost = self.m_lost as f64;
            lost / (lost + self.m_received as f64) > self.cfg.loss_threshold
        } else {
            self.loss_rate > self.cfg.loss_threshold
        }
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

    fn control_packet(&self, kind: castlab_core::RlmKind, level: u32) -> Packet {
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
            if self.cfg.join_timer_outside_steady {
                // ns-2's MMG: a firing outside S only draws the next one
                self.arm_join_timer(now);
            }
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
        self.timers.set(RlmTimer::Session, now + d);
    }

    /// RTCP-style deterministic interval (before randomisation).
    fn session_interval(&self) -> Duration {
        let n = self.receivers_estimate() as f64;
        let bw = n * self.cfg.control_size_bytes as f64 * 8.0 / self.cfg.session_bandwidth_bps;
        Duration::from_secs_f64(bw).max(self.cfg.session_interval_min)
    }

    fn expire_members(&mut self, now: Instant) {
        let timeout = self.session_interval() * self.cfg.member_timeout_intervals as u64;
        self.members.expire(now, timeout);
    }

    /// A loss was detected (the "L" and "L > T" edges of Figure 6).
    #[inline(never)]
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
                        self.drop_layer(now, true);
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
                if self.loss_rate_exceeded() {
                    // §3.4: long-term congestion: drop the current layer.
                    if let Some(e) = self.own {
                        let sample = e.onset.unwrap_or(now).saturating_since(e.start);
                        self.feed_detection(sample);
                        self.end_experiment(now, Outcome::Failed, Some(sample));
                    }
                    if self.drop_layer(now, self.cfg.backoff_on_loss_rate_drop) {
                        self.enter_waiting(now, RlmState::Drop, Cause::LossRate);
                    }
                }
            }
            // H absorbs transient congestion; D ignores losses until its timer expires.
            RlmState::Hysteresis | RlmState::Drop => {}
        }
    }

    /// A gap of `lost` packets on layer `m`, revealed now: its record row and `lost` loss
    /// indicators into the loss-rate estimator. Out of line: rare beside the arrivals, and it
    /// keeps the per-packet path short.
    #[cold]
    #[inline(never)]
    fn record_gap(&mut self, now: Instant, m: usize, lost: u64) {
        self.m_lost = self.m_lost.saturating_add(lost);
        let r = &mut self.records;
        r.loss_time_ns.push(now.as_nanos());
        r.loss_layer.push(m as u8);
        r.loss_count.push(lost);
        // k loss indicators in a row: p ← (1-w)^k p + 1 - (1-w)^k
        let w = self.cfg.loss_gain;
        let keep = (1.0 - w).powf(lost.min(1 << 20) as f64);
        self.loss_rate = keep * self.loss_rate + (1.0 - keep);
    }

    fn on_data(&mut self, now: Instant, m: usize, p: &Packet) {
        self.records.received += 1;
        self.data_source = Some(p.src.node);
        let t = now.as_nanos();
        if self.cfg.record == Record::Arrivals {
            self.records.arr_time_ns.push(t);
            self.records.arr_layer.push(m as u8);
        }
        if m >= self.level as usize || p.sent_at < self.joined_at[m] {
            // a late packet of a layer already left, or sent before our join: not gap-checked
            for w in &mut self.windows {
                w.push(t, 1, 0);
            }
            return;
        }
        let w = self.cfg.loss_gain;
        self.m_received += 1;
        let mut lost = 0u64;
        match self.gap_next[m] {
            None => self.gap_next[m] = Some(p.seq.saturating_add(1)),
            Some(next) => {
                if p.seq > next {
                    lost = p.seq - next;
                }
                if p.seq >= next {
                    self.gap_next[m] = Some(p.seq.saturating_add(1));
                }
            }
        }
        if lost > 0 {
            self.record_gap(now, m, lost);
        }
        // the received packet
        self.loss_rate *= 1.0 - w;
        // the loss a gap reveals counts at this instant, before this arrival (as
        // castlab_core::metrics::arrival_process orders the recorded rows)
        for win in &mut self.windows {
            if lost > 0 {
                win.push(t, 0, lost);
            }
            win.push(t, 1, 0);
        }
        if lost > 0 {
            self.on_loss(now);
        }
    }

    #[inline(never)]
    fn on_control(&mut self, now: Instant, p: &Packet, h: &RlmHeader) {
        if p.src == self.addr {
            return; // our own message, back down the tree
        }
        if !self.members.heard(p.src, now) {
            self.records.ignored += 1; // the member table can neither store nor sample it
        }
        match h.kind {
            RlmKind::Join => {
                let k = h.level as u32;
                if k == 0 || k > self.layers() {
                    self.records.ignored += 1;
                    return;
                }
                // §3.4: note the experiment's start time for its level.
                self.foreign_start[k as usize] = Some(now);
                if self.trace_heard {
                    self.records.heard_time_ns.push(now.as_nanos());
                    self.records.heard_level.push(k);
                }
            }
            RlmKind::Session => {}
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
        self.members.set_key(info.addr);
        self.rng = info.rng;
        self.events.push_back(AgentEvent::Join(self.control_group));
        self.add_layer(now); // level 1: the base layer
        self.state = RlmState::Steady;
        self.enter_steady(now, Cause::DetectionTimer);
        let d = self.session_interval().mul_f64(self.rng.uniform_range(0.5, 1.5));
        self.timers.set(RlmTimer::Session, now + d);
    }

    /// The source restarted: its sequence numbers start afresh, so every layer's gap
    /// tracking starts again from the next packet (as after a join); the level, the
    /// join-timers and the detection-time estimate are the receiver's own and stay. Another
    /// receiver's restart (heard on the control group) changes nothing here.
    fn handle_peer_restart(&mut self, _now: Instant, node: NodeId) {
        if self.data_source == Some(node) {
            self.gap_next.iter_mut().for_each(|g| *g = None);
        }
    }

    /// Told to stop: the receiver leaves its session as a host does, every layer from the top
    /// down (its level becomes 0, recorded) and the control group; its timers are disarmed
    /// and an experiment under way is abandoned unannounced (§3.3 announces only joins).
    fn handle_shutdown(&mut self, now: Instant) {
        if !self.started || self.stopped {
            return;
        }
        self.stopped = true;
        self.timers.clear();
        self.own = None;
        while self.level > 0 {
            self.level -= 1;
            self.events.push_back(AgentEvent::Leave(self.data_groups[self.level as usize]));
        }
        self.push_level(now);
        self.events.push_back(AgentEvent::Leave(self.control_group));
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        // A control packet of the session (what `on_packet` gives to `on_control`) queues
        // nothing and sets no timer: quiet, read from the first cache line (see the struct).
        if let Header::Rlm(h) = p.header {
            if self.started && !self.stopped && p.group() == Some(self.control_group) {
                self.on_control(now, p, &h);
                self.quiet = true;
                return;
            }
        }
        // a driver polled after the previous call, or skipped the polls of a quiet one: either
        // way it has seen this deadline
        let deadline = self.timers.next();
        self.on_packet(now, p);
        self.quiet = self.out.is_empty() && self.events.is_empty() && self.timers.next() == deadline;
    }

    fn quiet_after_packet(&self) -> bool {
        self.quiet
    }

    fn handle_timeout(&mut self, now: Instant) {
        while let Some(timer) = self.timers.expire_earliest(now) {
            match timer {
                RlmTimer::Join => self.on_join_timer(now),
                RlmTimer::Detect => self.on_detection_timer(now),
                RlmTimer::Session => self.on_session_timer(now),
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
}

impl RlmReceiver {
    /// A packet: data of a layer, or a control message of the session.
    fn on_packet(&mut self, now: Instant, p: &Packet) {
        if !self.started || self.stopped {
            self.records.ignored += 1;
            return;
        }
        let Some(g) = p.group() else {
            self.records.ignored += 1;
            return;
        };
        match p.header {
            Header::Data => {
                // the layer the packet says it is, when that layer's group is its group (one
                // comparison); else a search, which also gives the first of duplicate groups
                let m = p.layer as usize;
                let m = if self.groups_distinct && self.data_groups.get(m) == Some(&g) {
                    Some(m)
                } else {
                    self.data_groups.iter().position(|x| *x == g)
                };
                match m {
                    Some(m) => self.on_data(now, m, p),
                    None => self.records.ignored += 1,
                }
            }
            Header::Rlm(h) if g == self.control_group => self.on_control(now, p, &h),
            _ => self.records.ignored += 1,
        }
    }
}

// ---------------------------------------------------------------------- registration

pub mod registration;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Driver;
    use castlab_core::NodeId;

    const CTL: GroupId = GroupId(99);

    fn groups(n: u32) -> Vec<GroupId> {
        (0..n).map(|m| GroupId(10 + m)).collect()
    }
    fn me() -> Addr {
        Addr::new(NodeId(3), 7)
    }
    fn other(i: u32) -> Addr {
        Addr::new(NodeId(100 + i), 1)
    }
    fn at(s: f64) -> Instant {
        Instant::from_secs_f64(s)
    }
    fn secs(d: Duration) -> f64 {
        d.as_secs_f64()
    }
    fn close(a: f64, b: f64) -> bool {
        // timers and samples are rounded to whole nanoseconds
        (a - b).abs() < 1e-8
    }

    /// The hand-worked timings of these tests assume a 3 s initial detection timer
    /// (T̂_D = 2 s, σ̂_D = 0.5 s); the defaults' 9 s one is checked on its own. The rows of
    /// announcements heard are kept, for the tests that read them.
    fn cfg3() -> RlmConfig {
        RlmConfig {
            detection_init: Duration::from_secs(2),
            detection_dev_init: Duration::from_millis(500),
            trace: crate::Trace::Full,
            ..RlmConfig::default()
        }
    }

    /// A receiver driven by hand through the shared harness ([`crate::testing::Driver`]), with
    /// the next sequence number of each layer.
    struct Rig {
        d: Driver<RlmReceiver>,
        seq: Vec<u64>,
    }

    impl Rig {
        fn with(cfg: RlmConfig, layers: u32) -> Rig {
            let rx = RlmReceiver::try_new(cfg, groups(layers), CTL).expect("valid config");
            let d = Driver::start_with(rx, Instant::ZERO, StartInfo { addr: me(), rng: Rng::seed_from_u64(42) });
            let mut r = Rig { d, seq: vec![0; layers as usize] };
            r.data(at(0.01), 0); // sets the base of gap tracking on layer 0
            r
        }
        fn new() -> Rig {
            Rig::with(cfg3(), 6)
        }
        fn take_events(&mut self) -> Vec<AgentEvent> {
            std::mem::take(&mut self.d.events).into_iter().map(|(_, e)| e).collect()
        }
        fn joins_sent(&self) -> Vec<RlmHeader> {
            self.d
                .sent
                .iter()
                .filter_map(|(_, p)| match p.header {
                    Header::Rlm(h) if h.kind == RlmHeader::JOIN => Some(h),
                    _ => None,
                })
                .collect()
        }
        /// Advance to `t` as a driver would: every deadline up to `t`, in order.
        fn timeout(&mut self, t: Instant) {
            self.d.advance_to(t);
        }
        /// Fire the join-timer (any earlier timer fires first, as a driver would).
        fn fire_join(&mut self) -> Instant {
            let t = self.d.agent.join_deadline().expect("a pending join-timer");
            self.timeout(t);
            t
        }
        fn fire_detect(&mut self) -> Instant {
            let t = self.d.agent.detection_deadline().expect("a detection timer");
            self.timeout(t);
            t
        }
        fn fire_session(&mut self) -> Instant {
            let t = self.d.agent.session_deadline().expect("a session timer");
            self.timeout(t);
            t
        }
        /// Deliver `p` at `t`, every timer due before it fired first.
        fn packet(&mut self, t: Instant, p: Packet) {
            self.d.packet(t, &p);
        }
        /// The next packet of `layer` (0-based) arrives at `t`.
        fn data(&mut self, t: Instant, layer: usize) {
            self.lose(t, layer, 0);
        }
        /// `k` packets of `layer` are lost; the one after them arrives at `t`.
        fn lose(&mut self, t: Instant, layer: usize, k: u64) {
            self.seq[layer] += k;
            let mut p = Packet::data(Dest::Group(GroupId(10 + layer as u32)), 1000);
            p.layer = layer as u8;
            p.seq = self.seq[layer];
            p.sent_at = t; // as if sent with no delay
            self.seq[layer] += 1;
            self.packet(t, p);
        }
        fn control(&mut self, t: Instant, from: Addr, kind: castlab_core::RlmKind, level: u8) {
            let mut p = Packet::data(Dest::Group(CTL), 40);
            p.src = from;
            p.header = Header::Rlm(RlmHeader { kind, level, current: level.saturating_sub(1), receivers: 1 });
            self.packet(t, p);
        }
        /// Run one successful experiment: fire the join-timer, then its detection timer.
        fn succeed(&mut self) {
            let n = self.d.agent.level();
            self.fire_join();
            assert_eq!(self.d.agent.level(), n + 1);
            self.fire_detect();
            assert_eq!(self.d.agent.own_experiment(), None);
        }
        /// Run one failed experiment: add, lose a base-layer packet `after` later, wait out D.
        fn fail(&mut self, after: f64) {
            let n = self.d.agent.level();
            let t = self.fire_join();
            assert_eq!(self.d.agent.level(), n + 1);
            self.lose(t + Duration::from_secs_f64(after), 0, 1);
            assert_eq!(self.d.agent.state(), RlmState::Drop);
            assert_eq!(self.d.agent.level(), n);
            self.fire_detect();
            assert_eq!(self.d.agent.state(), RlmState::Steady);
        }
        fn last_transition(&self) -> (u8, u8, u8) {
            let r = &self.d.agent.records;
            let i = r.trans_time_ns.len() - 1;
            (r.trans_from[i], r.trans_to[i], r.trans_cause[i])
        }
    }

    const S_: u8 = RlmState::Steady as u8;
    const H_: u8 = RlmState::Hysteresis as u8;
    const M_: u8 = RlmState::Measurement as u8;
    const D_: u8 = RlmState::Drop as u8;

    #[test]
    fn defaults_are_the_papers_values() {
        let c = RlmConfig::default();
        // §4: α = 2, β = 2/3, k1 = 1, k2 = 2, g1 = g2 = 0.25, T_min = 5 s, T_max = 600 s
        assert_eq!((c.alpha, c.beta, c.k1, c.k2, c.g1, c.g2), (2.0, 2.0 / 3.0, 1.0, 2.0, 0.25, 0.25));
        assert_eq!((c.t_min, c.t_max), (Duration::from_secs(5), Duration::from_secs(600)));
        assert_eq!(c.loss_threshold, 0.25);
        // "conservative (i.e., large)" (§3.2): ns-2's RLM values, a 9 s initial detection timer
        assert_eq!((c.detection_init, c.detection_dev_init), (Duration::from_secs(5), Duration::from_secs(2)));
        assert!(c.validate().is_ok());
        let bad = RlmConfig { alpha: 1.0, ..RlmConfig::default() };
        assert_eq!(bad.validate().unwrap_err().field, "alpha");
        let bad = RlmConfig { t_max: Duration::from_secs(1), ..RlmConfig::default() };
        assert_eq!(bad.validate().unwrap_err().field, "t_max");
        assert_eq!(RlmReceiver::try_new(RlmConfig::default(), vec![], CTL).err().unwrap().field, "data_groups");
    }

    #[test]
    fn start_joins_control_group_and_base_layer() {
        let rx = RlmReceiver::try_new(cfg3(), groups(6), CTL).expect("valid config");
        let d = Driver::start_with(rx, at(10.0), StartInfo { addr: me(), rng: Rng::seed_from_u64(1) });
        assert!(d.events.iter().all(|(t, _)| *t == at(10.0)));
        let ev: Vec<_> = d.events.iter().map(|(_, e)| *e).collect();
        let rx = &d.agent;
        assert_eq!(
            ev,
            vec![AgentEvent::Join(CTL), AgentEvent::Join(GroupId(10)), AgentEvent::LevelChanged { level: 1 }]
        );
        assert_eq!((rx.state(), rx.level()), (RlmState::Steady, 1));
        // join-timer for level 2 drawn from λ = T_min = 5 s: support [2.5, 22.5] s
        let j = secs(rx.join_deadline().unwrap() - at(10.0));
        assert!((2.5..=22.5).contains(&j), "{j}");
        // detection timer k1·T_D + k2·σ_D = 2 + 2·0.5 = 3 s
        assert_eq!(rx.detection_deadline(), Some(at(13.0)));
        // first session message within [0.5, 1.5] × 5 s
        let s = secs(rx.session_deadline().unwrap() - at(10.0));
        assert!((2.5..7.5).contains(&s), "{s}");
        assert_eq!(
            rx.poll_timeout(),
            [rx.join_deadline(), rx.detection_deadline(), rx.session_deadline()].into_iter().flatten().min()
        );
    }

    #[test]
    fn s_join_timer_announces_then_adds_a_layer() {
        let mut r = Rig::new();
        r.take_events();
        let t = r.fire_join();
        // §3.3: the announcement goes to the control group and names the experimental level
        let js = r.joins_sent();
        assert_eq!(js.len(), 1);
        assert_eq!((js[0].level, js[0].current), (2, 1));
        let p =
            r.d.sent
                .iter()
                .map(|(_, p)| p)
                .find(|p| matches!(p.header, Header::Rlm(h) if h.kind == RlmHeader::JOIN))
                .unwrap();
        assert_eq!((p.dst, p.size_bytes), (Dest::Group(CTL), 40));
        assert_eq!(r.take_events(), vec![AgentEvent::Join(GroupId(11)), AgentEvent::LevelChanged { level: 2 }]);
        assert_eq!((r.d.agent.state(), r.d.agent.level(), r.d.agent.own_experiment()), (RlmState::Steady, 2, Some(2)));
        let rec = &r.d.agent.records;
        assert_eq!((rec.exp_level.clone(), rec.exp_outcome.clone()), (vec![2], vec![Outcome::Running as u8]));
        assert_eq!(rec.exp_start_ns, vec![t.as_nanos()]);
        // the experiment lasts one detection time; a new join-timer (for level 3) is pending
        assert_eq!(r.d.agent.detection_deadline(), Some(t + Duration::from_secs(3)));
        assert!(r.d.agent.join_deadline().unwrap() >= t + Duration::from_millis(2500));
    }

    #[test]
    fn told_to_stop_it_leaves_every_layer_top_first_and_the_control_group() {
        let mut r = Rig::new();
        let t = r.fire_join(); // level 2, its experiment under way
        r.data(t + Duration::from_millis(500), 1);
        let stop = t + Duration::from_secs(1);
        r.timeout(stop); // the timers due before the stop (a session message, say) fire first
        r.take_events();
        let sent = r.d.sent.len();
        r.d.shutdown(stop);
        assert_eq!(
            r.take_events(),
            vec![
                AgentEvent::Leave(GroupId(11)),
                AgentEvent::Leave(GroupId(10)),
                AgentEvent::LevelChanged { level: 0 },
                AgentEvent::Leave(CTL)
            ]
        );
        assert_eq!(r.d.agent.level(), 0);
        let rec = &r.d.agent.records;
        assert_eq!((rec.level_time_ns.last(), rec.level.last()), (Some(&stop.as_nanos()), Some(&0)));
        // nothing armed, nothing announced; later packets are not taken; a second stop is a no-op
        assert_eq!(r.d.agent.poll_timeout(), None);
        assert_eq!(r.d.sent.len(), sent);
        let ignored = r.d.agent.records.ignored;
        r.data(stop + Duration::from_millis(10), 0);
        r.d.shutdown(stop + Duration::from_secs(1));
        r.d.advance_to(stop + Duration::from_secs(100));
        assert_eq!(r.d.agent.records.ignored, ignored + 1);
        assert!(r.take_events().is_empty());
        assert_eq!(r.d.sent.len(), sent);
    }

    #[test]
    fn s_detection_timer_ends_a_clean_experiment_in_success() {
        let mut r = Rig::new();
        let t = r.fire_join();
        r.data(t + Duration::from_secs(1), 1);
        let td = r.fire_detect();
        assert_eq!(td, t + Duration::from_secs(3));
        let rec = &r.d.agent.records;
        assert_eq!(rec.exp_outcome, vec![Outcome::Success as u8]);
        assert_eq!(rec.exp_end_ns, vec![td.as_nanos()]);
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Steady, 2));
        assert!(rec.trans_time_ns.is_empty(), "S→S edges are not state changes");
    }

    #[test]
    fn s_loss_during_own_experiment_drops_backs_off_and_enters_d() {
        let mut r = Rig::new();
        let t = r.fire_join();
        r.take_events();
        let tl = t + Duration::from_millis(400);
        r.lose(tl, 0, 1);
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Drop, 1));
        assert_eq!(r.take_events(), vec![AgentEvent::Leave(GroupId(11)), AgentEvent::LevelChanged { level: 1 }]);
        assert_eq!(r.last_transition(), (S_, D_, Cause::Loss as u8));
        // §3.5 backoff: T_J^2 = min(2 · 5 s, 600 s) = 10 s; the others are untouched
        assert_eq!(r.d.agent.join_timer_mean(2), Duration::from_secs(10));
        assert_eq!(r.d.agent.join_timer_mean(3), Duration::from_secs(5));
        let rec = &r.d.agent.records;
        assert_eq!(rec.exp_outcome, vec![Outcome::Failed as u8]);
        assert_eq!((rec.exp_end_ns[0], rec.exp_detect_ns[0]), (tl.as_nanos(), 400_000_000));
        assert_eq!(r.d.agent.join_deadline(), None, "no join-timer outside S");
        // D lasts one (updated) detection time
        assert_eq!(r.d.agent.detection_deadline(), Some(tl + r.d.agent.detection_window()));
    }

    #[test]
    fn d_ignores_losses_then_returns_to_s_on_its_timer() {
        let mut r = Rig::new();
        let t = r.fire_join();
        r.lose(t + Duration::from_millis(400), 0, 1);
        let n_trans = r.d.agent.records.trans_time_ns.len();
        r.lose(t + Duration::from_millis(500), 0, 3);
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Drop, 1));
        assert_eq!(r.d.agent.records.trans_time_ns.len(), n_trans);
        assert_eq!(r.d.agent.records.lost(), 4, "losses are still recorded");
        let td = r.fire_detect();
        assert_eq!(r.d.agent.state(), RlmState::Steady);
        assert_eq!(r.last_transition(), (D_, S_, Cause::DetectionTimer as u8));
        // back in S, a join-timer drawn from the backed-off λ = 10 s: support [5, 45] s
        let j = secs(r.d.agent.join_deadline().unwrap() - td);
        assert!((5.0..=45.0).contains(&j), "{j}");
    }

    #[test]
    fn s_loss_without_experiment_goes_through_h_and_m_back_to_s() {
        let mut r = Rig::new();
        r.lose(at(1.0), 0, 1);
        assert_eq!(r.d.agent.state(), RlmState::Hysteresis);
        assert_eq!(r.last_transition(), (S_, H_, Cause::Loss as u8));
        assert_eq!(r.d.agent.join_deadline(), None);
        // H absorbs further losses (even heavy ones)
        r.lose(at(1.5), 0, 5);
        assert_eq!(r.d.agent.state(), RlmState::Hysteresis);
        assert!(r.d.agent.loss_rate() > 0.25);
        let t = r.fire_detect();
        assert_eq!(t, at(4.0));
        assert_eq!(r.d.agent.state(), RlmState::Measurement);
        assert_eq!(r.last_transition(), (H_, M_, Cause::DetectionTimer as u8));
        let t2 = r.fire_detect();
        assert_eq!(t2, at(7.0));
        assert_eq!(r.d.agent.state(), RlmState::Steady);
        assert_eq!(r.last_transition(), (M_, S_, Cause::DetectionTimer as u8));
        assert_eq!(r.d.agent.level(), 1);
        assert!(r.d.agent.join_deadline().is_some());
        assert_eq!(r.d.agent.records.trans_to, vec![H_, M_, S_]);
    }

    #[test]
    fn m_drops_on_loss_rate_above_threshold_but_not_on_a_single_loss() {
        let mut r = Rig::new();
        r.succeed(); // level 2
        let t0 = r.d.now;
        r.lose(t0 + Duration::from_millis(10), 0, 1); // S → H
        r.fire_detect(); // H → M
        assert_eq!(r.d.agent.state(), RlmState::Measurement);
        // a quiet stretch lets the estimator decay: (15/16)^100 of what it was
        let mut t = r.d.now;
        for _ in 0..100 {
            t += Duration::from_millis(5);
            r.data(t, 0);
        }
        // a single loss: p = (1/16)(15/16) + tiny ≈ 0.06 < 0.25 → stay in M
        r.lose(t + Duration::from_millis(5), 0, 1);
        assert!(r.d.agent.loss_rate() < 0.07, "{}", r.d.agent.loss_rate());
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Measurement, 2));
        // eight in a row: p ≥ (1 - (15/16)^8)(15/16) ≈ 0.378 > 0.25 → drop (L > T)
        r.take_events();
        r.lose(t + Duration::from_millis(10), 0, 8);
        assert!(r.d.agent.loss_rate() > 0.37, "{}", r.d.agent.loss_rate());
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Drop, 1));
        assert_eq!(r.last_transition(), (M_, D_, Cause::LossRate as u8));
        assert_eq!(r.take_events(), vec![AgentEvent::Leave(GroupId(11)), AgentEvent::LevelChanged { level: 1 }]);
        // the drop action backs off the dropped level's timer
        assert_eq!(r.d.agent.join_timer_mean(2), Duration::from_secs(10));
        // not an experiment: the experiment records are unchanged (the one success)
        assert_eq!(r.d.agent.records.exp_outcome, vec![Outcome::Success as u8]);
    }

    /// Level 2, then a foreign experiment at `foreign` is announced just before my
    /// join-timer (pending level 3) fires.
    fn with_foreign_before_my_join(foreign: u8) -> (Rig, Instant) {
        let mut r = Rig::new();
        r.succeed();
        let tj = r.d.agent.join_deadline().unwrap();
        let heard = (tj - Duration::from_millis(100)).max(r.d.now);
        r.control(heard, other(1), RlmHeader::JOIN, foreign);
        r.d.sent.clear();
        let t = r.fire_join();
        (r, t)
    }

    #[test]
    fn s_loss_during_own_experiment_under_a_higher_one_measures_first() {
        // M → S: the congestion was the higher experiment's; mine survives
        let (mut r, t) = with_foreign_before_my_join(5);
        assert_eq!(
            (r.d.agent.level(), r.d.agent.own_experiment()),
            (3, Some(3)),
            "a higher experiment does not suppress mine"
        );
        r.lose(t + Duration::from_millis(300), 0, 1);
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Measurement, 3));
        assert_eq!(r.last_transition(), (S_, M_, Cause::Loss as u8));
        assert_eq!(*r.d.agent.records.exp_outcome.last().unwrap(), Outcome::Running as u8);
        r.fire_detect();
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Steady, 3));
        assert_eq!(*r.d.agent.records.exp_outcome.last().unwrap(), Outcome::Success as u8);
        assert_eq!(r.d.agent.join_timer_mean(3), Duration::from_secs(5));

        // M → D: long-term congestion; my experiment failed, its detection time runs from its
        // start to the first loss (the onset), not to the drop
        let (mut r, t) = with_foreign_before_my_join(5);
        r.lose(t + Duration::from_millis(300), 0, 1);
        r.lose(t + Duration::from_millis(350), 0, 8);
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Drop, 2));
        let rec = &r.d.agent.records;
        assert_eq!(*rec.exp_outcome.last().unwrap(), Outcome::Failed as u8);
        assert_eq!(*rec.exp_detect_ns.last().unwrap(), 300_000_000);
        assert_eq!(r.d.agent.join_timer_mean(3), Duration::from_secs(10));
    }

    #[test]
    fn same_level_overlap_is_allowed_and_a_loss_then_fails_my_experiment() {
        let (mut r, t) = with_foreign_before_my_join(3);
        assert_eq!(r.joins_sent().len(), 1, "overlap at the same level is allowed");
        assert_eq!(r.d.agent.level(), 3);
        r.lose(t + Duration::from_millis(300), 0, 1);
        // mine is (jointly) the highest in progress: it failed
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Drop, 2));
    }

    #[test]
    fn a_lower_experiment_in_progress_suppresses_mine() {
        let (r, t) = with_foreign_before_my_join(2);
        assert_eq!(r.joins_sent().len(), 0);
        assert_eq!((r.d.agent.level(), r.d.agent.own_experiment()), (2, None));
        assert_eq!(r.d.agent.records.supp_level, vec![3]);
        assert_eq!(r.d.agent.records.supp_time_ns, vec![t.as_nanos()]);
        // a new join-timer was scheduled, from λ = T_J^3 = 5 s
        let j = secs(r.d.agent.join_deadline().unwrap() - t);
        assert!((2.5..=22.5).contains(&j), "{j}");
    }

    #[test]
    fn a_finished_lower_experiment_does_not_suppress_mine() {
        // long join-timers (λ = 20 s: at least 10 s) leave room to hear a foreign experiment
        // that is over (older than the 3 s window) by the time my timer fires
        let cfg = RlmConfig { t_min: Duration::from_secs(20), ..cfg3() };
        let mut r = Rig::with(cfg, 6);
        r.succeed(); // level 2
        let tj = r.d.agent.join_deadline().unwrap();
        let heard = tj - Duration::from_millis(3500);
        assert!(heard >= r.d.now);
        r.control(heard, other(1), RlmHeader::JOIN, 2);
        r.fire_join();
        assert_eq!((r.d.agent.level(), r.d.agent.own_experiment()), (3, Some(3)));
        assert!(r.d.agent.records.supp_level.is_empty());
    }

    #[test]
    fn my_own_experiment_in_progress_suppresses_my_next_join_timer() {
        // short join-timers (λ = 1 s: at most 4.5 s) and a long detection time (11 s) make the
        // next join-timer fire while my experiment is still in progress
        let cfg = RlmConfig { t_min: Duration::from_secs(1), detection_init: Duration::from_secs(10), ..cfg3() };
        let mut r = Rig::with(cfg, 6);
        let t = r.fire_join();
        assert_eq!(r.d.agent.own_experiment(), Some(2));
        let tj = r.fire_join();
        assert!(tj < t + Duration::from_secs(11));
        assert_eq!(r.d.agent.level(), 2);
        assert_eq!(r.d.agent.records.supp_level, vec![3]);
    }

    #[test]
    fn shared_learning_backs_off_my_next_level_only() {
        // a foreign experiment at my next level (2) fails: I learn with it
        let mut r = Rig::new();
        r.control(at(1.0), other(1), RlmHeader::JOIN, 2);
        r.lose(at(1.4), 0, 1);
        assert_eq!(r.d.agent.state(), RlmState::Hysteresis);
        assert_eq!(r.d.agent.join_timer_mean(2), Duration::from_secs(10));
        assert_eq!(r.d.agent.records.shared_level, vec![2]);
        assert_eq!(r.d.agent.level(), 1, "nothing to drop: I was not experimenting");

        // a foreign experiment two levels up: not about my next level
        let mut r = Rig::new();
        r.control(at(1.0), other(1), RlmHeader::JOIN, 3);
        r.lose(at(1.4), 0, 1);
        assert_eq!(r.d.agent.state(), RlmState::Hysteresis);
        assert_eq!(
            (r.d.agent.join_timer_mean(2), r.d.agent.join_timer_mean(3)),
            (Duration::from_secs(5), Duration::from_secs(5))
        );
        assert!(r.d.agent.records.shared_level.is_empty());

        // a foreign experiment at my next level that ended (older than the 3 s window)
        let mut r = Rig::new();
        r.control(at(1.0), other(1), RlmHeader::JOIN, 2);
        r.lose(at(4.5), 0, 1);
        assert_eq!(r.d.agent.join_timer_mean(2), Duration::from_secs(5));
    }

    /// One scripted session: experiments of its own (one fails), announcements and session
    /// messages from 40 others, losses.
    fn scripted_session(trace: crate::Trace) -> Rig {
        let mut r = Rig::with(RlmConfig { trace, ..cfg3() }, 6);
        r.succeed();
        for i in 0..40u32 {
            let t = r.d.now + Duration::from_millis(50);
            let kind = if i % 3 == 0 { RlmHeader::SESSION } else { RlmHeader::JOIN };
            r.control(t, Addr::new(NodeId(100 + i), 1), kind, (i % 6 + 1) as u8);
        }
        assert_eq!(r.d.agent.receivers_estimate(), 41);
        r.fire_session();
        r.fail(0.5);
        r.succeed();
        let t = r.d.now + Duration::from_millis(10);
        r.lose(t, 0, 3);
        r.timeout(r.d.now + Duration::from_secs(60));
        r
    }

    #[test]
    fn trace_off_keeps_no_heard_rows_and_changes_nothing_else() {
        assert_eq!(RlmConfig::default().trace, crate::Trace::Off);
        let (full, off) = (scripted_session(crate::Trace::Full), scripted_session(crate::Trace::Off));
        let (a, b) = (&full.d, &off.d);
        assert_eq!(a.agent.records.heard_level.len(), 26, "every foreign announcement, with trace on");
        assert!(b.agent.records.heard_level.is_empty() && b.agent.records.heard_time_ns.is_empty());
        assert_eq!(format!("{:?}", a.sent), format!("{:?}", b.sent));
        assert_eq!(format!("{:?}", a.events), format!("{:?}", b.events));
        let (mut ra, mut rb) = (a.agent.records.clone(), b.agent.records.clone());
        ra.heard_level.clear();
        ra.heard_time_ns.clear();
        rb.heard_level.clear();
        rb.heard_time_ns.clear();
        assert_eq!(format!("{ra:?}"), format!("{rb:?}"));
        // the 40 others, silent for the last 60 s, have timed out (5 intervals of 8.2 s)
        assert_eq!((a.agent.receivers_estimate(), b.agent.receivers_estimate()), (1, 1));
        assert!(b.agent.memory().heard == 0 && a.agent.memory().heard > 0);
    }

    #[test]
    fn quiet_after_a_packet_exactly_when_its_polls_would_find_nothing() {
        let mut r = Rig::new();
        r.data(at(0.1), 0);
        assert!(r.d.agent.quiet_after_packet(), "an arrival in sequence changes nothing to poll");
        r.control(at(0.2), other(1), RlmHeader::SESSION, 1);
        assert!(r.d.agent.quiet_after_packet(), "a session message changes n̂, nothing to poll");
        r.control(at(0.3), other(1), RlmHeader::JOIN, 3);
        assert!(r.d.agent.quiet_after_packet(), "a foreign experiment is noted, nothing to poll");
        // a loss in S: to H, the join-timer is stopped and the detection timer re-armed
        let before = r.d.agent.poll_timeout();
        r.lose(at(0.4), 0, 1);
        assert_eq!(r.d.agent.state(), RlmState::Hysteresis);
        assert_ne!(r.d.agent.poll_timeout(), before);
        assert!(!r.d.agent.quiet_after_packet());
        // in H a further loss changes nothing
        r.lose(at(0.5), 0, 1);
        assert!(r.d.agent.quiet_after_packet());
        // a failed experiment's loss drops a layer: a Leave and a level change to poll
        let mut r = Rig::new();
        let t = r.fire_join();
        r.lose(t + Duration::from_millis(300), 0, 1);
        assert_eq!(r.d.agent.state(), RlmState::Drop);
        assert!(!r.d.agent.quiet_after_packet());
    }

    #[test]
    fn own_announcements_coming_back_are_ignored() {
        let mut r = Rig::new();
        r.fire_join();
        let mine =
            *r.d.sent
                .iter()
                .map(|(_, p)| p)
                .find(|p| matches!(p.header, Header::Rlm(h) if h.kind == RlmHeader::JOIN))
                .unwrap();
        let mut back = mine;
        back.src = me(); // the engine stamps the sender's address
        let t = r.d.now + Duration::from_millis(20);
        r.packet(t, back);
        assert!(r.d.agent.records.heard_level.is_empty());
        assert_eq!(r.d.agent.receivers_estimate(), 1);
        // the same packet from someone else is a foreign experiment
        back.src = other(2);
        r.packet(t, back);
        assert_eq!(r.d.agent.records.heard_level, vec![2]);
        assert_eq!(r.d.agent.receivers_estimate(), 2);
    }

    #[test]
    fn join_timer_distribution_matches_its_formula() {
        // λ/2 + X, X ~ Exp(mean λ) truncated to [0, 4λ]:
        // E = λ/2 + λ(1 - 5e^-4)/(1 - e^-4); P(T ≤ 3λ/2) = (1 - e^-1)/(1 - e^-4)
        let lambda = 10.0;
        let e4 = (-4.0f64).exp();
        let mean_th = lambda / 2.0 + lambda * (1.0 - 5.0 * e4) / (1.0 - e4);
        assert!((mean_th - 14.2536).abs() < 1e-3); // hand value: 5 + 10 · 0.908422 / 0.981684
        let p_th = (1.0 - (-1.0f64).exp()) / (1.0 - e4);
        let mut rng = Rng::seed_from_u64(7);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| secs(draw_join_interval(Duration::from_secs(10), &mut rng))).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let below = xs.iter().filter(|&&x| x <= 1.5 * lambda).count() as f64 / n as f64;
        let (lo, hi) = xs.iter().fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
        // sd of X ≈ 0.86λ: the mean's standard error is ~0.02 s, 5 SE = 0.1 s;
        // the fraction's standard error is ~0.0011, 5 SE ≈ 0.006
        assert!((mean - mean_th).abs() < 0.1, "mean {mean} vs {mean_th}");
        assert!((below - p_th).abs() < 0.006, "{below} vs {p_th}");
        assert!(lo >= 5.0 && hi <= 45.0, "support [{lo}, {hi}]");
        assert!(lo < 5.01 && hi > 44.0, "the support is covered: [{lo}, {hi}]");
    }

    #[test]
    fn backoff_saturates_at_t_max_and_relaxation_floors_at_t_min() {
        // two layers: at level 2 there is no next experiment, so only T_J^2 moves
        let mut r = Rig::with(cfg3(), 2);
        let mut seen = vec![];
        for _ in 0..8 {
            r.fail(0.2);
            seen.push(secs(r.d.agent.join_timer_mean(2)));
        }
        // T ← min(2T, 600 s) from 5 s
        assert_eq!(seen, vec![10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 600.0, 600.0]);
        // a success, then relaxation at every detection-timer expiry in S: T ← max(2T/3, 5 s)
        let t0 = r.fire_join();
        assert_eq!(r.d.agent.level(), 2);
        let mut relaxed = vec![];
        let mut expect = vec![];
        let mut e = 600.0f64;
        let mut last = t0;
        for _ in 0..14 {
            let t = r.fire_detect();
            assert_eq!(t - last, r.d.agent.detection_window(), "relaxation runs at detection-timer intervals");
            last = t;
            relaxed.push(secs(r.d.agent.join_timer_mean(2)));
            e = (e * 2.0 / 3.0).max(5.0);
            expect.push(e);
        }
        assert_eq!(*relaxed.last().unwrap(), 5.0);
        for (a, b) in relaxed.iter().zip(&expect) {
            assert!((a - b).abs() < 1e-6, "{relaxed:?} vs {expect:?}");
        }
        // 600 (2/3)^k > 5 for k ≤ 11: the floor is reached at the 12th relaxation
        assert!(relaxed[10] > 5.0 && relaxed[11] == 5.0);
    }

    #[test]
    fn detection_time_estimator_follows_the_update_equations() {
        let mut r = Rig::new();
        assert_eq!(r.d.agent.detection_estimate(), (Duration::from_secs(2), Duration::from_millis(500)));
        r.fail(0.4);
        // σ = 0.75·0.5 + 0.25·|0.4 − 2| = 0.775; T_D = 0.75·2 + 0.25·0.4 = 1.6
        let (td, sd) = r.d.agent.detection_estimate();
        assert!(close(secs(td), 1.6) && close(secs(sd), 0.775), "{td:?} {sd:?}");
        r.fail(1.0);
        // σ = 0.75·0.775 + 0.25·|1.0 − 1.6| = 0.73125; T_D = 0.75·1.6 + 0.25·1.0 = 1.45
        let (td, sd) = r.d.agent.detection_estimate();
        assert!(close(secs(td), 1.45) && close(secs(sd), 0.73125), "{td:?} {sd:?}");
        // detection timer k1·T_D + k2·σ_D = 1.45 + 1.4625
        assert!(close(secs(r.d.agent.detection_window()), 2.9125));
        assert_eq!(r.d.agent.records.exp_detect_ns, vec![400_000_000, 1_000_000_000]);
        // a foreign failure does not feed the estimator (§3.5: the latency of a local action)
        r.control(r.d.now + Duration::from_millis(1), other(1), RlmHeader::JOIN, 2);
        r.lose(r.d.now + Duration::from_millis(300), 0, 1);
        assert!(close(secs(r.d.agent.detection_estimate().0), 1.45));
    }

    #[test]
    fn group_size_is_estimated_from_session_messages_and_scales_t_max() {
        // members are kept for a million session intervals here, so that they outlive the long
        // join-timers of the backoff below without feeding session messages at every step
        let cfg = RlmConfig { member_timeout_intervals: 1_000_000, ..cfg3() };
        let mut r = Rig::with(cfg, 2);
        for i in 0..3 {
            r.control(at(0.5 + i as f64 * 0.1), other(i), RlmHeader::SESSION, 3);
        }
        r.control(at(0.9), other(0), RlmHeader::SESSION, 3); // a repeat is one member
        assert_eq!(r.d.agent.receivers_estimate(), 4);
        assert_eq!(r.d.agent.t_max_effective(), Duration::from_secs(2400));
        // backing off: the timer saturates at 4 × 600 s
        let mut seen = vec![];
        for _ in 0..10 {
            r.fail(0.2);
            seen.push(secs(r.d.agent.join_timer_mean(2)));
        }
        assert_eq!(seen[8..], [2400.0, 2400.0], "{seen:?}");
        assert_eq!(seen[7], 1280.0);
        // my session messages carry my estimate
        let sess: Vec<RlmHeader> =
            r.d.sent
                .iter()
                .filter_map(|(_, p)| match p.header {
                    Header::Rlm(h) if h.kind == RlmHeader::SESSION => Some(h),
                    _ => None,
                })
                .collect();
        assert!(!sess.is_empty());
        assert!(sess.iter().all(|h| h.receivers == 4));
    }

    #[test]
    fn silent_members_time_out_after_five_session_intervals() {
        let mut r = Rig::new();
        r.control(at(0.5), other(1), RlmHeader::SESSION, 3);
        r.control(at(0.6), other(2), RlmHeader::JOIN, 2); // an announcement counts too
        assert_eq!(r.d.agent.receivers_estimate(), 3);
        assert_eq!(r.d.agent.t_max_effective(), Duration::from_secs(1800));
        // other(2) keeps talking; other(1) falls silent. Timeout: 5 × max(5 s, 3·320/1600 s)
        let mut t = 0.6;
        while t < 24.0 {
            t += 4.0;
            r.timeout(at(t));
            r.control(at(t), other(2), RlmHeader::SESSION, 3);
        }
        assert_eq!(r.d.agent.receivers_estimate(), 3, "heard within 25 s");
        r.timeout(at(40.0));
        r.control(at(40.0), other(2), RlmHeader::SESSION, 3);
        let t = r.fire_session();
        assert!(t > at(40.0));
        assert_eq!(r.d.agent.receivers_estimate(), 2);
        assert_eq!(r.d.agent.t_max_effective(), Duration::from_secs(1200));
    }

    #[test]
    fn without_scaling_t_max_is_fixed() {
        let cfg = RlmConfig { scale_t_max: false, ..cfg3() };
        let mut r = Rig::with(cfg, 2);
        r.control(at(0.5), other(1), RlmHeader::SESSION, 3);
        assert_eq!(r.d.agent.receivers_estimate(), 2);
        assert_eq!(r.d.agent.t_max_effective(), Duration::from_secs(600));
    }

    #[test]
    fn session_interval_grows_with_the_group_as_rtcp() {
        let mut r = Rig::new();
        // 49 others: n̂ = 50, interval = max(5 s, 50 · 320 bit / 1600 b/s) = 10 s
        for i in 0..49 {
            r.control(at(0.1 + i as f64 * 0.001), other(i), RlmHeader::SESSION, 1);
        }
        assert_eq!(r.d.agent.receivers_estimate(), 50);
        let t = r.fire_session();
        let d = secs(r.d.agent.session_deadline().unwrap() - t);
        assert!((5.0..15.0).contains(&d), "{d}");
        let mut r = Rig::new();
        let t = r.fire_session();
        let d = secs(r.d.agent.session_deadline().unwrap() - t);
        assert!((2.5..7.5).contains(&d), "{d}");
    }

    #[test]
    fn what_a_control_packet_reads_lies_in_the_first_cache_line() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<RlmReceiver>(), 64);
        for end in [
            offset_of!(RlmReceiver, control_group) + size_of::<GroupId>(),
            offset_of!(RlmReceiver, started) + 1,
            offset_of!(RlmReceiver, stopped) + 1,
            offset_of!(RlmReceiver, quiet) + 1,
            offset_of!(RlmReceiver, trace_heard) + 1,
            offset_of!(RlmReceiver, addr) + size_of::<Addr>(),
            offset_of!(RlmReceiver, members) + Members::HOT_BYTES,
        ] {
            assert!(end <= 64, "{end}");
        }
    }

    /// n̂ is the exact count up to `member_limit` others and RFC 2762's sampled estimate
    /// beyond, the member table's bytes bounded by the limit, and a foreign announcement is
    /// heard whether or not its sender is sampled.
    #[test]
    fn the_group_estimate_is_exact_up_to_the_member_limit_and_sampled_beyond() {
        let mut r = Rig::new();
        let limit = r.d.agent.config().member_limit;
        assert_eq!(limit, 256);
        for i in 0..limit {
            r.control(at(0.1 + f64::from(i) * 1e-4), other(i), RlmHeader::SESSION, 1);
            assert_eq!(r.d.agent.receivers_estimate(), i + 2);
        }
        // 256 entries of 16 bytes and an index of 512 4-byte slots (at most 3/4 full)
        let most = 256 * 16 + 512 * 4;
        assert!(r.d.agent.memory().members <= most, "{:?}", r.d.agent.memory());
        for i in limit..5000 {
            r.control(at(0.2 + f64::from(i) * 1e-5), other(i), RlmHeader::SESSION, 1);
            assert!(r.d.agent.memory().members <= most, "{:?}", r.d.agent.memory());
        }
        // 5,000 others: within 5 standard deviations of the binomial sampling (members.rs)
        let m = r.d.agent.members.bits();
        assert!(m > 0);
        let sd = (5000.0 * ((1u64 << m) - 1) as f64).sqrt();
        let n = f64::from(r.d.agent.receivers_estimate());
        assert!((n - 5001.0).abs() <= 5.0 * sd, "n̂ {n} with {m} bits");
        let heard = r.d.agent.records.heard_level.len();
        for i in 5000..5020 {
            r.control(at(0.3 + f64::from(i) * 1e-5), other(i), RlmHeader::JOIN, 2);
        }
        assert_eq!(r.d.agent.records.heard_level.len(), heard + 20);
    }

    /// Drive a rig through a run with losses, experiments and a foreign announcement.
    fn scripted(cfg: RlmConfig) -> Rig {
        let mut r = Rig::with(cfg, 6);
        let mut t = 0.02;
        for i in 0..6000u64 {
            t += 0.01;
            r.timeout(at(t));
            // a gap of one to three packets every 12 s, on the base layer
            let k = if i % 1201 == 600 { 1 + i % 3 } else { 0 };
            r.lose(at(t), 0, k);
            if i == 1500 {
                r.control(at(t + 0.001), other(1), RlmHeader::JOIN, 3);
            }
        }
        r
    }

    #[test]
    fn records_summary_and_arrivals_drive_the_same_receiver() {
        let w = vec![Duration::from_secs(1), Duration::from_secs(10)];
        let lean = scripted(RlmConfig { windows: w.clone(), ..cfg3() });
        let full = scripted(RlmConfig { record: Record::Arrivals, windows: w, ..cfg3() });
        let (a, b) = (&lean.d.agent.records, &full.d.agent.records);
        assert!(a.arr_time_ns.is_empty());
        assert_eq!(b.arr_time_ns.len() as u64, b.received);
        assert!(a.arr_layer.is_empty() && b.arr_layer.len() == b.arr_time_ns.len());
        // the script sends on the base layer only, while the level climbs above it
        assert!(b.arr_layer.iter().all(|&m| m == 0) && b.level.iter().any(|&l| l > 1));
        assert!(
            a.lost() > 0 && !a.exp_start_ns.is_empty(),
            "the script must lose packets and run experiments: {} {}",
            a.lost(),
            a.exp_start_ns.len()
        );
        // everything but the arrival rows is the same, and so are the online windows
        assert_eq!((a.received, a.lost(), a.control_sent), (b.received, b.lost(), b.control_sent));
        assert_eq!((&a.level_time_ns, &a.level), (&b.level_time_ns, &b.level));
        assert_eq!((&a.trans_time_ns, &a.trans_to, &a.exp_outcome), (&b.trans_time_ns, &b.trans_to, &b.exp_outcome));
        assert_eq!((&a.loss_time_ns, &a.loss_count), (&b.loss_time_ns, &b.loss_count));
        assert_eq!(lean.d.sent.len(), full.d.sent.len());
        for ns in [1_000_000_000, 10_000_000_000] {
            let (x, y) = (lean.d.agent.worst_window_loss(ns).unwrap(), full.d.agent.worst_window_loss(ns).unwrap());
            assert_eq!(x.to_bits(), y.to_bits());
            assert!(x > 0.0 && x < 1.0, "{x}");
        }
        // the 1 s window's worst loss at least the 10 s one's (a smaller window can only be worse)
        assert!(
            lean.d.agent.worst_window_loss(1_000_000_000).unwrap()
                >= lean.d.agent.worst_window_loss(10_000_000_000).unwrap()
        );
        assert_eq!(lean.d.agent.worst_window_loss(5_000_000_000), None);
        // what the windows hold is bounded by one window of arrivals, not by the 60 s run
        assert!(lean.d.agent.windows.iter().all(|w| w.held() <= 1 + (w.window_ns() / 10_000_000) as usize));
    }

    #[test]
    fn a_zero_window_is_refused_by_name() {
        let cfg = RlmConfig { windows: vec![Duration::from_secs(1), Duration::ZERO], ..RlmConfig::default() };
        let e = RlmReceiver::try_new(cfg, groups(2), CTL).expect_err("zero window");
        assert!(e.to_string().contains("windows"), "{e}");
    }

    #[test]
    fn gap_tracking_restarts_when_a_layer_is_rejoined() {
        let mut r = Rig::with(RlmConfig { record: Record::Arrivals, ..cfg3() }, 6);
        let t = r.fire_join();
        r.data(t + Duration::from_millis(50), 1);
        r.data(t + Duration::from_millis(60), 1);
        r.lose(t + Duration::from_millis(100), 0, 1); // fails the experiment: layer 2 left
        assert_eq!(r.d.agent.level(), 1);
        // a straggler of the left layer: counted as received, not gap-checked
        r.lose(t + Duration::from_millis(110), 1, 30);
        assert_eq!(r.d.agent.records.lost(), 1);
        r.fire_detect();
        r.fire_join();
        assert_eq!(r.d.agent.level(), 2);
        // the tail of the first subscription (sent before the re-join) arrives late: it must
        // not seed gap tracking, or the jump to the new packets would count as a loss
        let t2 = r.d.now;
        let mut stale = Packet::data(Dest::Group(GroupId(11)), 1000);
        stale.layer = 1;
        stale.seq = 3;
        stale.sent_at = t2 - Duration::from_millis(5);
        r.packet(t2 + Duration::from_millis(20), stale);
        // the first packet sent after the re-join sets the base; the 50 sent meanwhile are not lost
        r.lose(t2 + Duration::from_millis(30), 1, 50);
        r.data(t2 + Duration::from_millis(40), 1);
        assert_eq!(r.d.agent.records.lost(), 1);
        assert_eq!(r.d.agent.records.received, 1 + 2 + 1 + 1 + 1 + 2);
        assert_eq!(r.d.agent.records.arr_time_ns.len() as u64, r.d.agent.records.received);
    }

    #[test]
    fn malformed_or_foreign_input_is_ignored() {
        let mut r = Rig::new();
        let before = r.d.agent.records.clone();
        r.control(at(1.0), other(1), RlmHeader::JOIN, 0);
        r.control(at(1.0), other(1), RlmHeader::JOIN, 7); // only 6 layers
                                                          // (an unknown kind byte never reaches an agent: the codec rejects it)
        let mut p = Packet::data(Dest::Group(GroupId(55)), 1000); // not a session group
        p.seq = 9;
        r.packet(at(1.1), p);
        r.packet(at(1.1), Packet::data(Dest::Unicast(other(1)), 100));
        assert_eq!(r.d.agent.records.ignored, 4);
        assert!(r.d.agent.records.heard_level.is_empty());
        assert_eq!(r.d.agent.records.received, before.received);
        assert_eq!(r.d.agent.state(), RlmState::Steady);
    }

    /// ns-2's MMG receiver (McCanne's RLM in ns-2.35) as castlab options, on the 3 s rig.
    fn mmg3() -> RlmConfig {
        RlmConfig {
            loss_ratio_in_m: true,
            k2_m_per_level: 0.5,
            join_timer_outside_steady: true,
            backoff_on_loss_rate_drop: false,
            ..cfg3()
        }
    }

    #[test]
    fn loss_ratio_in_m_counts_from_entering_m_and_waits_for_ten_packets() {
        let mut r = Rig::with(RlmConfig { join_timer_outside_steady: false, ..mmg3() }, 6);
        r.succeed(); // level 2
        let t0 = r.d.now;
        r.lose(t0 + Duration::from_millis(10), 0, 1); // S → H
        r.lose(t0 + Duration::from_millis(20), 0, 20); // absorbed in H, and not M's to count
        r.fire_detect(); // H → M
        assert_eq!(r.d.agent.state(), RlmState::Measurement);
        let mut t = r.d.now;
        // 5 lost against 1 received: over T, but fewer than 10 packets received in M
        t += Duration::from_millis(5);
        r.lose(t, 0, 5);
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Measurement, 2));
        for _ in 0..9 {
            t += Duration::from_millis(5);
            r.data(t, 0);
        }
        // 5 lost, 10 received: 1/3 > 0.25 is only judged at the next loss; one more lost
        // and one received: 6 / (6 + 11) > 0.25 → drop
        t += Duration::from_millis(5);
        r.lose(t, 0, 1);
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Drop, 1));
        assert_eq!(r.last_transition(), (M_, D_, Cause::LossRate as u8));
        // MMG does not back off a level dropped from M
        assert_eq!(r.d.agent.join_timer_mean(2), Duration::from_secs(5));
    }

    #[test]
    fn loss_ratio_in_m_stays_under_the_threshold_without_the_losses_of_h() {
        let mut r = Rig::with(RlmConfig { join_timer_outside_steady: false, ..mmg3() }, 6);
        r.succeed();
        let t0 = r.d.now;
        r.lose(t0 + Duration::from_millis(10), 0, 1);
        r.lose(t0 + Duration::from_millis(20), 0, 20);
        r.fire_detect();
        let mut t = r.d.now;
        for _ in 0..10 {
            t += Duration::from_millis(5);
            r.data(t, 0);
        }
        // 3 lost against 11 received since M: 0.21 ≤ 0.25; counting H's 21 it would be over
        t += Duration::from_millis(5);
        r.lose(t, 0, 3);
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Measurement, 2));
    }

    #[test]
    fn m_timer_grows_by_k2_m_per_level_sigma_per_level() {
        let mut r = Rig::with(RlmConfig { join_timer_outside_steady: false, ..mmg3() }, 6);
        r.succeed(); // level 2
        let t0 = r.d.now + Duration::from_millis(10);
        r.lose(t0, 0, 1); // S → H: k1·T̂_D + k2·σ̂_D = 2 + 2·0.5 = 3 s
        assert_eq!(r.d.agent.detection_deadline(), Some(t0 + Duration::from_secs(3)));
        let tm = r.fire_detect(); // H → M: 2 + (2 + 0.5·2)·0.5 = 3.5 s at level 2
        assert_eq!(r.d.agent.state(), RlmState::Measurement);
        assert_eq!(r.d.agent.detection_deadline(), Some(tm + Duration::from_millis(3500)));
    }

    #[test]
    fn join_timer_outside_steady_keeps_running_and_is_rearmed_after_a_drop() {
        // a 31 s detection timer outlasts any first join-timer (at most 22.5 s)
        let cfg = RlmConfig { detection_init: Duration::from_secs(30), ..mmg3() };
        let mut r = Rig::with(cfg, 2);
        let tj = r.d.agent.join_deadline().expect("a join-timer in S");
        r.lose(r.d.now + Duration::from_millis(10), 0, 1); // S → H
        assert_eq!(r.d.agent.state(), RlmState::Hysteresis);
        assert_eq!(r.d.agent.join_deadline(), Some(tj), "H keeps the join-timer");
        r.timeout(tj); // it fires in H: no experiment, only the next draw
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Hysteresis, 1));
        let tj2 = r.d.agent.join_deadline().expect("drawn again");
        assert!(tj2 >= tj + Duration::from_millis(2500));
        assert!(r.joins_sent().is_empty());
        // leaving H for M, and M for S, does not redraw it (3 s states on this rig)
        let mut r3 = Rig::with(mmg3(), 2);
        r3.lose(r3.d.now + Duration::from_millis(10), 0, 1);
        let mut kept = 0;
        for to in [RlmState::Measurement, RlmState::Steady] {
            let tj = r3.d.agent.join_deadline().expect("a join-timer");
            r3.fire_detect();
            assert_eq!(r3.d.agent.state(), to);
            if tj > r3.d.now {
                assert_eq!(r3.d.agent.join_deadline(), Some(tj));
                kept += 1;
            }
        }
        assert!(kept >= 1, "the seed's join-timer outlasts a state change");
        // at the top level there is no join-timer; a failed experiment to it re-arms one
        let mut r = Rig::with(mmg3(), 2);
        let t = r.fire_join();
        assert_eq!((r.d.agent.level(), r.d.agent.join_deadline()), (2, None));
        r.lose(t + Duration::from_millis(300), 0, 1);
        assert_eq!((r.d.agent.state(), r.d.agent.level()), (RlmState::Drop, 1));
        assert!(r.d.agent.join_deadline().is_some(), "re-armed in D");
    }

    #[test]
    fn the_mmg_options_default_to_the_papers_reading() {
        let c = RlmConfig::default();
        assert!(!c.loss_ratio_in_m && !c.join_timer_outside_steady && c.backoff_on_loss_rate_drop);
        assert_eq!((c.k2_m_per_level, c.loss_ratio_min_packets), (0.0, 10));
        let bad = RlmConfig { k2_m_per_level: -1.0, ..RlmConfig::default() };
        assert_eq!(bad.validate().unwrap_err().field, "k2_m_per_level");
    }
}
