//! TCP Reno and NewReno as sans-IO agents: a bulk or fixed-size sender ([`TcpSender`]) and a
//! cumulative-ACK receiver ([`TcpSink`]).
//!
//! What is implemented, and where it comes from:
//! - congestion control behind the [`CongestionControl`] interface: [`Reno`] (RFC 5681 §3.1
//!   slow start and congestion avoidance, §3.2 fast retransmit and fast recovery) and
//!   [`NewReno`] (RFC 6582 §3.2: partial acknowledgements keep the sender in fast recovery and
//!   retransmit the next hole, `recover` guards against a second reduction);
//! - the retransmission timer of RFC 6298 (§2 estimator, §3 Karn's rule, §5 timer management
//!   with exponential back-off), in [`RttEstimator`] and [`TcpSender`];
//! - a receiver sending cumulative ACKs, immediately or delayed (RFC 5681 §4.2, RFC 1122
//!   §4.2.3.2), with an RFC 7323-style timestamp echo used for RTT samples.
//!
//! The model is one-way data transfer in the style of ns-2's `Agent/TCP` and `TCPSink`: no
//! connection set-up or tear-down, sequence numbers count payload bytes from 0, and every
//! segment but the last of a fixed-size transfer carries exactly `mss_bytes` of payload.
//! Per-flow traces ([`TcpTrace`], [`SinkTrace`]) are columnar vectors that a caller reads after
//! a run (`Simulator::agent::<TcpSender>(id)`).

use core::any::Any;
use core::fmt::Debug;
use std::collections::VecDeque;

use castlab_core::{
    Addr, Agent, ConfigError, Dest, Duration, Header, Instant, Packet, StartInfo, TcpHeader, TimerTable,
};

// ------------------------------------------------------------------------------------------
// Configuration
// ------------------------------------------------------------------------------------------

/// How much data the application hands to the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    /// An FTP-like bulk source: always data to send (until the stop time).
    Bulk,
    /// A fixed number of payload bytes; the last segment carries `FIN`.
    Bytes(u64),
}

impl TcpConfig {
    /// The largest initial window accepted: RFC 6928 allows 10 segments; 1,000 leaves room for
    /// experiments while a typo (10^9) can no longer send a whole window at t = 0.
    pub const MAX_INITIAL_WINDOW_SEGS: u32 = 1000;

    /// Check every field; the error names the field. (`transfer`, `start` and `stop` are the
    /// flow's, set by whoever creates it.)
    pub fn validate(&self) -> Result<(), ConfigError> {
        use castlab_core::config::check::{int_in, nonzero};
        int_in("mss_bytes", self.mss_bytes.into(), 1, 65_495)?;
        int_in("header_bytes", self.header_bytes.into(), 0, 65_535 - u64::from(self.mss_bytes))?;
        int_in("initial_window_segs", self.initial_window_segs.into(), 1, Self::MAX_INITIAL_WINDOW_SEGS.into())?;
        int_in("initial_ssthresh_bytes", self.initial_ssthresh_bytes, 2 * u64::from(self.mss_bytes), u64::MAX)?;
        int_in("rwnd_bytes", self.rwnd_bytes.into(), self.mss_bytes.into(), u32::MAX.into())?;
        nonzero("initial_rto", self.initial_rto)?;
        nonzero("min_rto", self.min_rto)?;
        if self.max_rto < self.min_rto {
            return Err(ConfigError::new("max_rto", self.max_rto.as_secs_f64(), "must be >= min_rto"));
        }
        nonzero("clock_granularity", self.clock_granularity)?;
        int_in("dupack_threshold", self.dupack_threshold.into(), 1, 1000)?;
        nonzero("delayed_ack_timeout", self.delayed_ack_timeout)?;
        if self.stop < self.start {
            return Err(ConfigError::new("stop", self.stop.as_secs_f64(), "must not be before start"));
        }
        if self.transfer == Transfer::Bytes(0) {
            return Err(ConfigError::new("transfer_bytes", 0, "must be positive (None for a bulk transfer)"));
        }
        Ok(())
    }
}

castlab_core::config_fields!(TcpConfig {
    mss_bytes,
    header_bytes,
    initial_window_segs,
    initial_ssthresh_bytes,
    rwnd_bytes,
    initial_rto,
    min_rto,
    max_rto,
    clock_granularity,
    dupack_threshold,
    timestamps,
    delayed_ack,
    delayed_ack_timeout,
});

/// Parameters of a TCP sender and sink. `Default` gives the values named on each field.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Sender maximum segment size (SMSS), payload bytes per segment. Default 1000 (the usual
    /// ns-2 packet size of the papers' simulations).
    pub mss_bytes: u32,
    /// Header overhead added to the payload to get the on-wire size. Default 40 (IPv4 + TCP
    /// without options). A pure ACK is this many bytes.
    pub header_bytes: u32,
    /// Initial window, segments. Default 2: RFC 2581 §3.1 (IW <= 2 segments), still within
    /// the upper bound of RFC 5681 §3.1 eq. (1) for every SMSS (ns-2's `windowInit_` is 2 too).
    pub initial_window_segs: u32,
    /// Initial slow-start threshold, bytes. Default 1 GiB: RFC 5681 §3.1 says "arbitrarily
    /// high (e.g., the size of the largest possible advertised window)", which is 2^30 with
    /// RFC 7323 §2.3 window scaling.
    pub initial_ssthresh_bytes: u64,
    /// Receiver window the sink advertises, bytes. Default 1 GiB (RFC 7323 §2.3 maximum), so
    /// that the congestion window governs; set e.g. 20 × MSS to mimic ns-2's `window_ 20`.
    pub rwnd_bytes: u32,
    /// RTO before any RTT sample. Default 1 s, RFC 6298 §2.1.
    pub initial_rto: Duration,
    /// Lower bound on the RTO. Default 1 s, RFC 6298 §2.4. (Many ns-2 scripts use 0.2 s, and
    /// Linux uses 200 ms: make it a parameter of the scenario.)
    pub min_rto: Duration,
    /// Upper bound on the RTO. Default 60 s, RFC 6298 §2.5 ("at least 60 seconds").
    pub max_rto: Duration,
    /// Clock granularity G of RFC 6298 §2 (RTO = SRTT + max(G, K·RTTVAR)). Default 1 ms.
    pub clock_granularity: Duration,
    /// Duplicate ACKs that trigger fast retransmit. Default 3, RFC 5681 §3.2.
    pub dupack_threshold: u32,
    /// RTT measurement from the timestamp echo (RFC 7323 §4.1, RTTM). With timestamps every
    /// ACK of new data gives a sample, retransmitted segments included: RFC 6298 §3 says the
    /// timestamp option "removes the ambiguity" Karn's rule guards against. Without it the
    /// ACK must cover data sent after the last retransmission (strict Karn). Default true.
    /// Strict Karn lets a flow that lost a retransmission keep a backed-off RTO for many
    /// RTTs (every loss in go-back-N recovery restarts the lockout); ns-2's default agents
    /// (`timestamps_ false`) behave like `false`.
    pub timestamps: bool,
    /// Delayed ACKs at the sink: ACK every second segment or after `delayed_ack_timeout`
    /// (RFC 5681 §4.2, RFC 1122 §4.2.3.2). Default off, as ns-2's plain `TCPSink`.
    pub delayed_ack: bool,
    /// Delayed-ACK timer. Default 200 ms (RFC 1122 §4.2.3.2 allows up to 500 ms).
    pub delayed_ack_timeout: Duration,
    /// Bulk (FTP-like) or fixed-size transfer. Default bulk.
    pub transfer: Transfer,
    /// The sender starts sending at `max(start, the agent's start)`. Default 0.
    pub start: Instant,
    /// The sender sends no new data from `stop` on; data already sent is still recovered
    /// (retransmitted) until acknowledged. Default never.
    pub stop: Instant,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss_bytes: 1000,
            header_bytes: 40,
            initial_window_segs: 2,
            initial_ssthresh_bytes: 1 << 30,
            rwnd_bytes: 1 << 30,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            clock_granularity: Duration::from_millis(1),
            dupack_threshold: 3,
            timestamps: true,
            delayed_ack: false,
            delayed_ack_timeout: Duration::from_millis(200),
            transfer: Transfer::Bulk,
            start: Instant::ZERO,
            stop: Instant::MAX,
        }
    }
}

// ------------------------------------------------------------------------------------------
// Congestion control interface
// ------------------------------------------------------------------------------------------

/// What the sender tells its controller about an arriving ACK. Sequence numbers are bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    /// The cumulative acknowledgement carried by the ACK.
    pub ack: u64,
    /// Bytes newly acknowledged by it (0 for a duplicate ACK).
    pub bytes_acked: u64,
    /// FlightSize before the ACK: bytes sent and not yet cumulatively acknowledged.
    pub flight_before: u64,
    /// FlightSize after the ACK ("the amount of data presently outstanding", RFC 6582 §3.2).
    pub flight_after: u64,
    /// One past the highest byte ever sent.
    pub snd_max: u64,
}

/// What the sender tells its controller when the retransmission timer expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeoutInfo {
    /// FlightSize when the timer expired.
    pub flight: u64,
    /// One past the highest byte ever sent.
    pub snd_max: u64,
    /// False when the segment at the left edge was already retransmitted by the timer: RFC
    /// 5681 §3.1 then holds ssthresh constant.
    pub first_for_segment: bool,
}

/// The controller's answer to an ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckResponse {
    /// Retransmit the first unacknowledged segment now, whatever the window.
    pub retransmit: bool,
    /// Restart the retransmission timer (only consulted when the ACK acknowledged new data
    /// and data remains outstanding; RFC 6298 §5.3 restarts it, RFC 6582 §3.2 only on the
    /// first partial ACK of a recovery).
    pub restart_rto: bool,
}

/// A TCP congestion controller. The sender owns sequence numbers, timers and the receiver
/// window; the controller owns `cwnd` and `ssthresh` (bytes) and the recovery state.
pub trait CongestionControl: Debug {
    fn name(&self) -> &'static str;
    fn cwnd(&self) -> u64;
    fn ssthresh(&self) -> u64;
    /// In fast recovery.
    fn in_recovery(&self) -> bool;
    /// An ACK that acknowledged new data.
    fn on_new_ack(&mut self, ack: &AckInfo) -> AckResponse;
    /// The `dupacks`-th consecutive duplicate ACK (RFC 5681 §2 definition).
    fn on_dup_ack(&mut self, ack: &AckInfo, dupacks: u32) -> AckResponse;
    /// The retransmission timer expired.
    fn on_timeout(&mut self, to: &TimeoutInfo);
}

/// The algorithms shipped here, for callers that choose one by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcAlgorithm {
    Reno,
    NewReno,
}

impl CcAlgorithm {
    pub fn build(self, cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        match self {
            CcAlgorithm::Reno => Box::new(Reno::new(cfg)),
            CcAlgorithm::NewReno => Box::new(NewReno::new(cfg)),
        }
    }
}

/// Window arithmetic shared by Reno and NewReno (RFC 5681 §3.1 and §3.2).
#[derive(Clone, Debug)]
struct Window {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Bytes acknowledged since cwnd last grew in congestion avoidance.
    ca_acked: u64,
    dupthresh: u32,
}

impl Window {
    fn new(cfg: &TcpConfig) -> Self {
        let mss = cfg.mss_bytes.max(1) as u64;
        Window {
            mss,
            // RFC 5681 §3.1: IW, in bytes.
            cwnd: cfg.initial_window_segs.max(1) as u64 * mss,
            ssthresh: cfg.initial_ssthresh_bytes,
            ca_acked: 0,
            dupthresh: cfg.dupack_threshold.max(1),
        }
    }

    /// Growth on an ACK of `n` new bytes outside recovery.
    fn grow(&mut self, n: u64) {
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1 eq. (2), slow start: cwnd += min(N, SMSS).
            self.cwnd += n.min(self.mss);
        } else {
            // RFC 5681 §3.1, congestion avoidance, the RECOMMENDED byte counting (RFC 3465):
            // when the bytes acknowledged reach cwnd, cwnd grows by SMSS.
            self.ca_acked += n;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += self.mss;
            }
        }
    }

    /// RFC 5681 §3.1 eq. (4): ssthresh = max(FlightSize / 2, 2·SMSS), with FlightSize capped
    /// by `window`, the congestion window not counting fast-recovery inflation. The RFC sets
    /// ssthresh to "no more than" eq. (4); the cap matters in two cases where snd_max − snd_una
    /// overstates what the window let into the network: after go-back-N (snd_max stays at the
    /// old maximum while cwnd restarts from 1 SMSS), and in a fast recovery whose retransmission
    /// was lost (every duplicate ACK inflates cwnd and sends new data, so FlightSize grows for
    /// a whole RTO). Without the cap a timeout there set ssthresh to hundreds of segments and
    /// the next slow start overran the bottleneck queue. ns-2's Reno and NewReno agents halve
    /// their uninflated `cwnd_` the same way (inflation lives in `dupwnd_`).
    fn halve(&mut self, flight: u64, window: u64) {
        self.ssthresh = (flight.min(window) / 2).max(2 * self.mss);
        self.ca_acked = 0;
    }

    /// RFC 5681 §3.2 steps 2 and 3: set ssthresh, retransmit, cwnd = ssthresh + 3·SMSS.
    fn enter_fast_recovery(&mut self, flight: u64) {
        self.halve(flight, self.cwnd);
        self.cwnd = self.ssthresh + self.dupthresh as u64 * self.mss;
    }

    /// RFC 5681 §3.1: after a timeout cwnd is the loss window LW = 1 SMSS; ssthresh by eq. (4)
    /// unless the segment was already retransmitted by the timer, then held constant.
    /// `recovering`: the timer expired during fast recovery, whose uninflated window is ssthresh.
    fn timeout(&mut self, to: &TimeoutInfo, recovering: bool) {
        if to.first_for_segment {
            let window = if recovering { self.ssthresh } else { self.cwnd };
            self.halve(to.flight, window);
        }
        self.ca_acked = 0;
        self.cwnd = self.mss;
    }
}

/// TCP Reno: RFC 5681 §3 (slow start, congestion avoidance, fast retransmit, fast recovery).
#[derive(Clone, Debug)]
pub struct Reno {
    w: Window,
    recovering: bool,
}

impl Reno {
    pub fn new(cfg: &TcpConfig) -> Self {
        Reno { w: Window::new(cfg), recovering: false }
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn cwnd(&self) -> u64 {
        self.w.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }
    fn in_recovery(&self) -> bool {
        self.recovering
    }

    fn on_new_ack(&mut self, a: &AckInfo) -> AckResponse {
        if self.recovering {
            // RFC 5681 §3.2 step 6: the next ACK of new data deflates the window.
            self.recovering = false;
            self.w.cwnd = self.w.ssthresh;
            self.w.ca_acked = 0;
        } else {
            self.w.grow(a.bytes_acked);
        }
        // RFC 6298 §5.3: restart the timer on every ACK of new data.
        AckResponse { retransmit: false, restart_rto: true }
    }

    fn on_dup_ack(&mut self, a: &AckInfo, dupacks: u32) -> AckResponse {
        if self.recovering {
            // RFC 5681 §3.2 step 4: each further duplicate inflates cwnd by SMSS.
            self.w.cwnd += self.w.mss;
            AckResponse::default()
        } else if dupacks == self.w.dupthresh {
            // RFC 5681 §3.2 steps 2-3, fast retransmit.
            self.recovering = true;
            self.w.enter_fast_recovery(a.flight_before);
            AckResponse { retransmit: true, restart_rto: false }
        } else {
            AckResponse::default()
        }
    }

    fn on_timeout(&mut self, to: &TimeoutInfo) {
        self.w.timeout(to, self.recovering);
        self.recovering = false;
    }
}

/// TCP NewReno: RFC 6582 §3.2 on top of RFC 5681.
#[derive(Clone, Debug)]
pub struct NewReno {
    w: Window,
    recovering: bool,
    /// RFC 6582 §3.2 step 1, `recover`, kept as one past the highest byte sent when it was
    /// recorded, so "the ACK covers recover" reads `ack >= recover`. Starts at 0, the first
    /// byte (the initial send sequence number of this model).
    recover: u64,
    partial_acks: u32,
}

impl NewReno {
    pub fn new(cfg: &TcpConfig) -> Self {
        NewReno { w: Window::new(cfg), recovering: false, recover: 0, partial_acks: 0 }
    }
    /// The `recover` variable of RFC 6582 (exclusive: one past the highest byte it covers).
    pub fn recover(&self) -> u64 {
        self.recover
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }
    fn cwnd(&self) -> u64 {
        self.w.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }
    fn in_recovery(&self) -> bool {
        self.recovering
    }

    fn on_new_ack(&mut self, a: &AckInfo) -> AckResponse {
        if !self.recovering {
            self.w.grow(a.bytes_acked);
            return AckResponse { retransmit: false, restart_rto: true };
        }
        if a.ack >= self.recover {
            // RFC 6582 §3.2 step 3, full acknowledgement: cwnd = min(ssthresh,
            // max(FlightSize, SMSS) + SMSS) (option 1, which avoids a burst), exit recovery.
            self.recovering = false;
            self.w.cwnd = self.w.ssthresh.min(a.flight_after.max(self.w.mss) + self.w.mss);
            self.w.ca_acked = 0;
            AckResponse { retransmit: false, restart_rto: true }
        } else {
            // RFC 6582 §3.2 step 3, partial acknowledgement: retransmit the first unacknowledged
            // segment, deflate cwnd by the new data acknowledged and add back SMSS if at least
            // SMSS was acknowledged; stay in fast recovery. Reset the retransmit timer on the
            // first partial ACK only (as step 3 says; the "Impatient" choice of RFC 3782 §4).
            self.partial_acks += 1;
            let back = if a.bytes_acked >= self.w.mss { self.w.mss } else { 0 };
            self.w.cwnd = (self.w.cwnd.saturating_sub(a.bytes_acked) + back).max(self.w.mss);
            AckResponse { retransmit: true, restart_rto: self.partial_acks == 1 }
        }
    }

    fn on_dup_ack(&mut self, a: &AckInfo, dupacks: u32) -> AckResponse {
        if self.recovering {
            // RFC 5681 §3.2 step 4, unchanged by RFC 6582: inflate by SMSS.
            self.w.cwnd += self.w.mss;
            AckResponse::default()
        } else if dupacks == self.w.dupthresh {
            // RFC 6582 §3.2 step 2: enter fast retransmit only if the ACK covers more than
            // recover; then recover = highest sequence number transmitted.
            if a.ack < self.recover {
                return AckResponse::default();
            }
            self.recover = a.snd_max;
            self.recovering = true;
            self.partial_acks = 0;
            self.w.enter_fast_recovery(a.flight_before);
            AckResponse { retransmit: true, restart_rto: false }
        } else {
            AckResponse::default()
        }
    }

    fn on_timeout(&mut self, to: &TimeoutInfo) {
        // RFC 6582 §3.2 step 4: after a retransmit timeout, record the highest sequence number
        // transmitted in recover and exit fast recovery.
        self.recover = to.snd_max;
        self.w.timeout(to, self.recovering);
        self.recovering = false;
    }
}

// ------------------------------------------------------------------------------------------
// RTT estimation (RFC 6298 §2)
// ------------------------------------------------------------------------------------------

/// The retransmission-timeout estimator of RFC 6298 §2, in integer nanoseconds.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    rto: Duration,
    min_rto: Duration,
    max_rto: Duration,
    granularity: Duration,
}

impl RttEstimator {
    pub fn new(cfg: &TcpConfig) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            // RFC 6298 §2.1: RTO = 1 s until a measurement is made.
            rto: cfg.initial_rto.min(cfg.max_rto),
            min_rto: cfg.min_rto,
            max_rto: cfg.max_rto,
            granularity: cfg.clock_granularity,
        }
    }

    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    pub fn rto(&self) -> Duration {
        self.rto
    }

    /// Take one measurement `r`.
    pub fn sample(&mut self, r: Duration) {
        let r_ns = r.as_nanos();
        match self.srtt {
            None => {
                // RFC 6298 §2.2: SRTT = R, RTTVAR = R/2.
                self.srtt = Some(r);
                self.rttvar = Duration::from_nanos(r_ns / 2);
            }
            Some(s) => {
                // RFC 6298 §2.3 (alpha = 1/8, beta = 1/4): RTTVAR first, with the old SRTT.
                let s_ns = s.as_nanos();
                let diff = s_ns.abs_diff(r_ns);
                self.rttvar = Duration::from_nanos((3 * self.rttvar.as_nanos() + diff) / 4);
                self.srtt = Some(Duration::from_nanos((7 * s_ns + r_ns) / 8));
            }
        }
        // RFC 6298 §2.2-2.3: RTO = SRTT + max(G, K·RTTVAR), K = 4; §2.4 and §2.5 bounds.
        let srtt = self.srtt.unwrap_or(r);
        let rto = srtt + self.granularity.max(self.rttvar * 4);
        self.rto = rto.max(self.min_rto).min(self.max_rto);
    }

    /// RFC 6298 §5.5: RTO = RTO · 2, bounded by the maximum (§2.5).
    pub fn back_off(&mut self) {
        self.rto = (self.rto * 2).min(self.max_rto);
    }
}

// ------------------------------------------------------------------------------------------
// Sender
// ------------------------------------------------------------------------------------------

/// Why a segment was sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RetxKind {
    /// Fast retransmit on the third duplicate ACK (RFC 5681 §3.2 step 2).
    Fast = 1,
    /// NewReno retransmission on a partial ACK (RFC 6582 §3.2 step 3).
    Partial = 2,
    /// The retransmission of the first unacknowledged segment on timer expiry (RFC 6298 §5.4).
    Timeout = 3,
    /// A later segment resent in slow start after a timeout (go-back-N from `snd_una`).
    GoBackN = 4,
}

/// Columnar per-flow records of a [`TcpSender`]. All times are ns since the start of the run.
#[derive(Clone, Debug, Default)]
pub struct TcpTrace {
    /// One row whenever cwnd or ssthresh changed (after the input that changed them).
    pub cc_time_ns: Vec<u64>,
    pub cwnd_bytes: Vec<u64>,
    pub ssthresh_bytes: Vec<u64>,
    /// One row per RTT sample (Karn's rule: never from retransmitted data), with the
    /// smoothed RTT and the RTO computed from it.
    pub rtt_time_ns: Vec<u64>,
    pub rtt_ns: Vec<u64>,
    pub srtt_ns: Vec<u64>,
    pub rto_ns: Vec<u64>,
    /// One row per retransmitted segment: when, its first byte, and why ([`RetxKind`] as u8).
    pub retx_time_ns: Vec<u64>,
    pub retx_seq: Vec<u64>,
    pub retx_kind: Vec<u8>,
    /// One row per retransmission-timer expiry, with the RTO that expired (before back-off).
    pub timeout_time_ns: Vec<u64>,
    pub timeout_rto_ns: Vec<u64>,
    /// One row per ACK of new data: the cumulative bytes acknowledged (snd_una) after it.
    /// Throughput over time is the slope of this series.
    pub ack_time_ns: Vec<u64>,
    pub acked_bytes: Vec<u64>,
}

impl TcpTrace {
    /// Bytes acknowledged in the window `(t0, t1]` (ns), from the cumulative series.
    pub fn acked_between(&self, t0_ns: u64, t1_ns: u64) -> u64 {
        cum_at(&self.ack_time_ns, &self.acked_bytes, t1_ns) - cum_at(&self.ack_time_ns, &self.acked_bytes, t0_ns)
    }
}

/// The value of a cumulative series at time `t` (last row with time <= t, else 0).
fn cum_at(times: &[u64], cum: &[u64], t: u64) -> u64 {
    let k = times.partition_point(|&x| x <= t);
    if k == 0 {
        0
    } else {
        cum[k - 1]
    }
}

/// Counters of a [`TcpSender`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSenderStats {
    pub segments_sent: u64,
    pub payload_bytes_sent: u64,
    pub retransmissions: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub dup_acks: u64,
    /// Packets that were not a valid ACK for this flow (wrong header or flow, ACK beyond
    /// anything sent): counted and dropped.
    pub ignored: u64,
}

castlab_core::timers! {
    /// The sender's timers: retransmission timeout, start and stop of the transfer.
    pub enum SenderTimer { Rto, Start, Stop }
}

/// A TCP sender: one flow, to one [`TcpSink`].
#[derive(Debug)]
pub struct TcpSender {
    cfg: TcpConfig,
    dst: Addr,
    flow: u32,
    cc: Box<dyn CongestionControl>,
    rtt: RttEstimator,
    timers: TimerTable<SenderTimer>,
    /// The latest `now` handed in; stamps segments built in `poll_transmit`.
    now: Instant,
    started: bool,
    stopped: bool,
    /// Oldest unacknowledged byte, next byte to send, one past the highest byte ever sent.
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// The receiver's advertised window (unbounded until the first ACK).
    snd_wnd: u64,
    dupacks: u32,
    /// Karn's rule (RFC 6298 §3): `snd_max` when a segment was last retransmitted; an ACK at
    /// or below it may have been triggered by a retransmission and gives no RTT sample.
    karn_mark: u64,
    /// First byte of the segment last retransmitted by the timer (ssthresh is held on a second
    /// timeout of the same segment, RFC 5681 §3.1).
    rto_seq: Option<u64>,
    pending_retx: Option<RetxKind>,
    completed_at: Option<Instant>,
    last_cc: (u64, u64),
    pub stats: TcpSenderStats,
    pub trace: TcpTrace,
}

impl TcpSender {
    /// A sender of flow `flow` to the sink at `dst`, with the given controller.
    pub fn new(dst: Addr, flow: u32, cfg: TcpConfig, cc: Box<dyn CongestionControl>) -> Self {
        TcpSender {
            rtt: RttEstimator::new(&cfg),
            cfg,
            dst,
            flow,
            cc,
            timers: TimerTable::default(),
            now: Instant::ZERO,
            started: false,
            stopped: false,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            snd_wnd: u64::MAX,
            dupacks: 0,
            karn_mark: 0,
            rto_seq: None,
            pending_retx: None,
            completed_at: None,
            last_cc: (u64::MAX, u64::MAX),
            stats: TcpSenderStats::default(),
            trace: TcpTrace::default(),
        }
    }

    /// A Reno sender.
    pub fn reno(dst: Addr, flow: u32, cfg: TcpConfig) -> Self {
        let cc = Box::new(Reno::new(&cfg));
        TcpSender::new(dst, flow, cfg, cc)
    }

    /// A NewReno sender.
    pub fn newreno(dst: Addr, flow: u32, cfg: TcpConfig) -> Self {
        let cc = Box::new(NewReno::new(&cfg));
        TcpSender::new(dst, flow, cfg, cc)
    }

    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn controller(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }
    pub fn cwnd(&self) -> u64 {
        self.cc.cwnd()
    }
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }
    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Oldest unacknowledged byte (= payload bytes delivered and acknowledged so far).
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    /// When a fixed-size transfer was completely acknowledged.
    pub fn completed_at(&self) -> Option<Instant> {
        self.completed_at
    }

    /// One past the last byte the application lets us send.
    fn data_limit(&self) -> u64 {
        if self.stopped {
            return self.snd_max;
        }
        match self.cfg.transfer {
            Transfer::Bulk => u64::MAX,
            Transfer::Bytes(n) => n,
        }
    }

    /// Payload of the segment starting at `seq`: SMSS, or what is left of a fixed transfer.
    fn seg_len(&self, seq: u64) -> u64 {
        let end = match self.cfg.transfer {
            Transfer::Bulk => u64::MAX,
            Transfer::Bytes(n) => n,
        };
        (self.cfg.mss_bytes as u64).min(end.saturating_sub(seq))
    }

    fn segment(&self, seq: u64, len: u64) -> Packet {
        let mut p = Packet::data(Dest::Unicast(self.dst), self.cfg.header_bytes + len as u32);
        p.flow = self.flow;
        p.seq = seq;
        let mut flags = TcpHeader::DATA;
        if matches!(self.cfg.transfer, Transfer::Bytes(n) if seq + len == n) {
            flags |= TcpHeader::FIN;
        }
        p.header = Header::Tcp(TcpHeader {
            ack: 0,
            flags,
            payload: len as u32,
            wnd: 0,
            ts_val: self.now.as_nanos(),
            ts_ecr: 0,
        });
        p
    }

    fn record_retx(&mut self, seq: u64, kind: RetxKind) {
        self.stats.retransmissions += 1;
        self.trace.retx_time_ns.push(self.now.as_nanos());
        self.trace.retx_seq.push(seq);
        self.trace.retx_kind.push(kind as u8);
        // RFC 6298 §3, Karn's rule: no RTT sample from anything this retransmission may ack.
        self.karn_mark = self.snd_max;
    }

    fn record_cc(&mut self) {
        let cur = (self.cc.cwnd(), self.cc.ssthresh());
        if cur != self.last_cc {
            self.last_cc = cur;
            self.trace.cc_time_ns.push(self.now.as_nanos());
            self.trace.cwnd_bytes.push(cur.0);
            self.trace.ssthresh_bytes.push(cur.1);
        }
    }

    fn outstanding(&self) -> bool {
        self.snd_una < self.snd_max
    }

    fn on_ack(&mut self, now: Instant, h: &TcpHeader) {
        let ack = h.ack;
        if ack > self.snd_max {
            // Acknowledges data never sent (RFC 793 §3.9, SEGMENT ARRIVES): ignore it.
            self.stats.ignored += 1;
            return;
        }
        if ack < self.snd_una {
            return; // an old ACK, reordered
        }
        let wnd = h.wnd as u64;
        if ack == self.snd_una {
            // RFC 5681 §2, DUPLICATE ACKNOWLEDGMENT: outstanding data, no payload, same ACK
            // number, unchanged window.
            let is_dup = self.outstanding() && h.payload == 0 && wnd == self.snd_wnd;
            self.snd_wnd = wnd;
            if is_dup {
                self.stats.dup_acks += 1;
                self.dupacks += 1;
                let info = AckInfo {
                    ack,
                    bytes_acked: 0,
                    flight_before: self.snd_max - self.snd_una,
                    flight_after: self.snd_max - self.snd_una,
                    snd_max: self.snd_max,
                };
                let r = self.cc.on_dup_ack(&info, self.dupacks);
                if r.retransmit {
                    self.stats.fast_retransmits += 1;
                    self.pending_retx = Some(RetxKind::Fast);
                }
            }
            return;
        }
        // New data acknowledged.
        self.snd_wnd = wnd;
        let info = AckInfo {
            ack,
            bytes_acked: ack - self.snd_una,
            flight_before: self.snd_max - self.snd_una,
            flight_after: self.snd_max - ack,
            snd_max: self.snd_max,
        };
        // RFC 7323 §4.1: the echo names the transmission the ACK answers, so with timestamps
        // any ACK of new data is a sample. Without them, RFC 6298 §3 (Karn): only when the
        // ACK covers data sent after the last retransmission.
        let unambiguous = self.cfg.timestamps || ack > self.karn_mark;
        if unambiguous && h.ts_ecr <= now.as_nanos() {
            let r = Duration::from_nanos(now.as_nanos() - h.ts_ecr);
            self.rtt.sample(r);
            self.trace.rtt_time_ns.push(now.as_nanos());
            self.trace.rtt_ns.push(r.as_nanos());
            self.trace.srtt_ns.push(self.rtt.srtt().map_or(0, |d| d.as_nanos()));
            self.trace.rto_ns.push(self.rtt.rto().as_nanos());
        }
        self.snd_una = ack;
        if self.snd_nxt < ack {
            self.snd_nxt = ack; // after go-back-N the receiver may hold more than we resent
        }
        self.dupacks = 0;
        self.rto_seq = None;
        self.trace.ack_time_ns.push(now.as_nanos());
        self.trace.acked_bytes.push(ack);
        let r = self.cc.on_new_ack(&info);
        if r.retransmit {
            self.pending_retx = Some(RetxKind::Partial);
        }
        if !self.outstanding() {
            // RFC 6298 §5.2: all outstanding data acknowledged, turn off the timer.
            self.timers.stop(SenderTimer::Rto);
            if matches!(self.cfg.transfer, Transfer::Bytes(n) if ack >= n) && self.completed_at.is_none() {
                self.completed_at = Some(now);
                self.timers.stop(SenderTimer::Stop);
            }
        } else if r.restart_rto {
            // RFC 6298 §5.3: restart the timer so that it expires after RTO.
            self.timers.set(SenderTimer::Rto, now + self.rtt.rto());
        }
    }

    fn on_rto(&mut self, now: Instant) {
        if !self.outstanding() {
            return;
        }
        self.stats.timeouts += 1;
        self.trace.timeout_time_ns.push(now.as_nanos());
        self.trace.timeout_rto_ns.push(self.rtt.rto().as_nanos());
        let first = self.rto_seq != Some(self.snd_una);
        self.rto_seq = Some(self.snd_una);
        self.cc.on_timeout(&TimeoutInfo {
            flight: self.snd_max - self.snd_una,
            snd_max: self.snd_max,
            first_for_segment: first,
        });
        // RFC 6298 §5.5: back off the timer; §5.6: start it again for the retransmission.
        self.rtt.back_off();
        self.timers.set(SenderTimer::Rto, now + self.rtt.rto());
        // RFC 6298 §5.4: retransmit the earliest unacknowledged segment. Everything after it
        // is resent too as the window reopens (go-back-N, as BSD and ns-2 do).
        self.snd_nxt = self.snd_una;
        self.dupacks = 0;
        self.pending_retx = None;
    }
}

impl Agent for TcpSender {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        self.now = now;
        if self.cfg.stop <= now.max(self.cfg.start) {
            self.stopped = true;
        } else if self.cfg.stop != Instant::MAX {
            self.timers.set(SenderTimer::Stop, self.cfg.stop);
        }
        if self.cfg.start <= now {
            self.started = true;
        } else {
            self.timers.set(SenderTimer::Start, self.cfg.start);
        }
        self.record_cc();
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        self.now = now;
        match p.header {
            Header::Tcp(h) if p.flow == self.flow && h.flags & TcpHeader::ACK != 0 => self.on_ack(now, &h),
            _ => self.stats.ignored += 1,
        }
        self.record_cc();
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        while let Some(slot) = self.timers.expire(now) {
            match slot {
                SenderTimer::Start => self.started = true,
                SenderTimer::Stop => self.stopped = true,
                SenderTimer::Rto => self.on_rto(now),
            }
        }
        self.record_cc();
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        if !self.started {
            return None;
        }
        if let Some(kind) = self.pending_retx.take() {
            // Fast retransmit / partial-ACK retransmission of the segment at snd_una, sent
            // whatever the window (RFC 5681 §3.2 step 3, RFC 6582 §3.2 step 3).
            let seq = self.snd_una;
            let len = self.seg_len(seq);
            if len > 0 && self.outstanding() {
                self.record_retx(seq, kind);
                return Some(self.emit(seq, len));
            }
        }
        let limit = self.data_limit();
        if self.snd_nxt >= limit {
            return None;
        }
        let len = self.seg_len(self.snd_nxt).min(limit - self.snd_nxt);
        let wnd = self.cc.cwnd().min(self.snd_wnd);
        if self.snd_nxt - self.snd_una + len > wnd {
            return None;
        }
        let seq = self.snd_nxt;
        if seq < self.snd_max {
            let kind =
                if seq == self.snd_una && self.rto_seq == Some(seq) { RetxKind::Timeout } else { RetxKind::GoBackN };
            self.record_retx(seq, kind);
        }
        self.snd_nxt += len;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        Some(self.emit(seq, len))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl TcpSender {
    /// Build a segment and do the per-send bookkeeping.
    fn emit(&mut self, seq: u64, len: u64) -> Packet {
        self.stats.segments_sent += 1;
        self.stats.payload_bytes_sent += len;
        // RFC 6298 §5.1: start the timer, if it is not running, when data is sent.
        if !self.timers.is_armed(SenderTimer::Rto) {
            self.timers.set(SenderTimer::Rto, self.now + self.rtt.rto());
        }
        self.segment(seq, len)
    }
}

// ------------------------------------------------------------------------------------------
// Sink
// ------------------------------------------------------------------------------------------

/// Columnar records of a [`TcpSink`].
#[derive(Clone, Debug, Default)]
pub struct SinkTrace {
    /// One row per data segment that advanced the in-order point: when, and the in-order
    /// payload bytes received so far (goodput is the slope).
    pub rx_time_ns: Vec<u64>,
    pub rx_bytes: Vec<u64>,
}

impl SinkTrace {
    /// In-order payload bytes delivered in the window `(t0, t1]` (ns).
    pub fn bytes_between(&self, t0_ns: u64, t1_ns: u64) -> u64 {
        cum_at(&self.rx_time_ns, &self.rx_bytes, t1_ns) - cum_at(&self.rx_time_ns, &self.rx_bytes, t0_ns)
    }
}

/// Counters of a [`TcpSink`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSinkStats {
    pub segments: u64,
    /// Segments entirely below the in-order point (already received).
    pub duplicates: u64,
    /// Segments above the in-order point (a hole before them).
    pub out_of_order: u64,
    pub acks_sent: u64,
    pub ignored: u64,
}

castlab_core::timers! {
    /// The sink's one timer: the delayed ACK (RFC 5681 §4.2).
    pub enum SinkTimer { DelAck }
}

/// A TCP receiver for one flow: cumulative ACKs, immediate or delayed (RFC 5681 §4.2).
#[derive(Debug)]
pub struct TcpSink {
    cfg: TcpConfig,
    /// Next byte expected in order (the cumulative ACK).
    rcv_nxt: u64,
    /// Segments received above `rcv_nxt`: disjoint, sorted, non-adjacent `[start, end)`.
    ooo: Vec<(u64, u64)>,
    /// In-order segments received since the last ACK (delayed ACKs).
    unacked: u32,
    /// Timestamp to echo in the next ACK and where to send it.
    ts_recent: u64,
    peer: Option<(Dest, u32)>,
    fin_at: Option<Instant>,
    timers: TimerTable<SinkTimer>,
    now: Instant,
    out: VecDeque<Packet>,
    pub stats: TcpSinkStats,
    pub trace: SinkTrace,
}

impl TcpSink {
    pub fn new(cfg: TcpConfig) -> Self {
        TcpSink {
            cfg,
            rcv_nxt: 0,
            ooo: Vec::with_capacity(16),
            unacked: 0,
            ts_recent: 0,
            peer: None,
            fin_at: None,
            timers: TimerTable::default(),
            now: Instant::ZERO,
            out: VecDeque::with_capacity(4),
            stats: TcpSinkStats::default(),
            trace: SinkTrace::default(),
        }
    }

    /// In-order payload bytes received.
    pub fn received_bytes(&self) -> u64 {
        self.rcv_nxt
    }
    /// When the segment carrying FIN was delivered in order (fixed-size transfers).
    pub fn fin_at(&self) -> Option<Instant> {
        self.fin_at
    }

    fn send_ack(&mut self) {
        let Some((dst, flow)) = self.peer else { return };
        let mut p = Packet::data(dst, self.cfg.header_bytes);
        p.flow = flow;
        p.seq = 0;
        p.header = Header::Tcp(TcpHeader {
            ack: self.rcv_nxt,
            flags: TcpHeader::ACK,
            payload: 0,
            wnd: self.cfg.rwnd_bytes,
            ts_val: self.now.as_nanos(),
            ts_ecr: self.ts_recent,
        });
        self.unacked = 0;
        self.timers.stop(SinkTimer::DelAck);
        self.stats.acks_sent += 1;
        self.out.push_back(p);
    }

    /// Insert `[s, e)` into the out-of-order list, merging overlaps and neighbours.
    fn insert_ooo(&mut self, s: u64, e: u64) {
        let i = self.ooo.partition_point(|&(_, end)| end < s);
        let mut j = i;
        let (mut ns, mut ne) = (s, e);
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            ns = ns.min(self.ooo[j].0);
            ne = ne.max(self.ooo[j].1);
            j += 1;
        }
        if j > i {
            self.ooo[i] = (ns, ne);
            self.ooo.drain(i + 1..j);
        } else {
            self.ooo.insert(i, (ns, ne));
        }
    }

    fn on_data(&mut self, now: Instant, p: &Packet, h: &TcpHeader) {
        self.stats.segments += 1;
        let (s, e) = (p.seq, p.seq + h.payload as u64);
        if e <= self.rcv_nxt {
            // A duplicate segment: ACK at once (RFC 793 / RFC 5681 §4.2).
            self.stats.duplicates += 1;
            self.ts_recent = h.ts_val;
            self.send_ack();
            return;
        }
        if s > self.rcv_nxt {
            // RFC 5681 §4.2: an out-of-order segment gets an immediate duplicate ACK. The
            // echoed timestamp stays that of the last in-order segment (RFC 7323 §4.3).
            self.stats.out_of_order += 1;
            self.insert_ooo(s, e);
            self.send_ack();
            return;
        }
        // In order (possibly overlapping what we have).
        let filled_hole = !self.ooo.is_empty();
        if self.unacked == 0 {
            // RFC 7323 §4.3: with delayed ACKs, echo the earliest unacknowledged segment.
            self.ts_recent = h.ts_val;
        }
        self.rcv_nxt = e;
        while let Some(&(fs, fe)) = self.ooo.first() {
            if fs > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(fe);
            self.ooo.remove(0);
        }
        if h.flags & TcpHeader::FIN != 0 && self.ooo.is_empty() && self.fin_at.is_none() {
            self.fin_at = Some(now);
        }
        self.trace.rx_time_ns.push(now.as_nanos());
        self.trace.rx_bytes.push(self.rcv_nxt);
        self.unacked += 1;
        if filled_hole {
            // RFC 5681 §4.2: a segment that fills (part of) a gap is ACKed immediately.
            self.ts_recent = h.ts_val;
            self.send_ack();
        } else if !self.cfg.delayed_ack || self.unacked >= 2 || self.fin_at.is_some() {
            // RFC 5681 §4.2 / RFC 1122 §4.2.3.2: an ACK at least every second segment.
            self.send_ack();
        } else if !self.timers.is_armed(SinkTimer::DelAck) {
            self.timers.set(SinkTimer::DelAck, now + self.cfg.delayed_ack_timeout);
        }
    }
}

impl Agent for TcpSink {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        self.now = now;
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        self.now = now;
        let Header::Tcp(h) = p.header else {
            self.stats.ignored += 1;
            return;
        };
        if h.flags & TcpHeader::DATA == 0 {
            self.stats.ignored += 1;
            return;
        }
        match self.peer {
            None => self.peer = Some((Dest::Unicast(p.src), p.flow)),
            Some((Dest::Unicast(a), f)) if a == p.src && f == p.flow => {}
            Some(_) => {
                // One sink serves one connection.
                self.stats.ignored += 1;
                return;
            }
        }
        self.on_data(now, p, &h);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        if self.timers.expire(now) == Some(SinkTimer::DelAck) && self.unacked > 0 {
            self.send_ack();
        }
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        self.out.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use castlab_core::{NodeId, Rng};

    const SND: Addr = Addr::new(NodeId(0), 1);
    const RCV: Addr = Addr::new(NodeId(1), 2);

    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }

    fn info(addr: Addr) -> StartInfo {
        StartInfo { addr, rng: Rng::seed_from_u64(1) }
    }

    /// A hand-driven pair: sender and sink joined by a pipe of fixed one-way delay and
    /// infinite rate, so that a window leaves in one instant and its ACKs return together one
    /// RTT later. `drop(seq, n)` says whether the pipe loses the `n`-th (0-based) transmission
    /// of the data segment starting at byte `seq`. ACKs are never lost. Returns every data
    /// segment sent (lost or not) with its send time. Packets due at the same instant are
    /// delivered in the order they were sent, before timers due then.
    fn run(
        snd: &mut TcpSender,
        snk: &mut TcpSink,
        one_way: Duration,
        until: Instant,
        drop: &mut dyn FnMut(u64, u32) -> bool,
    ) -> Vec<(Instant, Packet)> {
        let mut pipe = Pipe::new(one_way);
        pipe.run(snd, snk, until, drop);
        pipe.sent
    }

    /// The pipe's state, for runs resumed in steps.
    struct Pipe {
        one_way: Duration,
        wire: Vec<(Instant, u64, bool, Packet)>,
        sent: Vec<(Instant, Packet)>,
        times_sent: Vec<u32>,
        ord: u64,
        started: bool,
    }

    impl Pipe {
        fn new(one_way: Duration) -> Self {
            Pipe { one_way, wire: Vec::new(), sent: Vec::new(), times_sent: Vec::new(), ord: 0, started: false }
        }

        /// The driving rule: drain transmits after every input (timeouts are re-read by the
        /// loop in `run`; these agents raise no events).
        fn pump(
            &mut self,
            now: Instant,
            snd: &mut TcpSender,
            snk: &mut TcpSink,
            drop: &mut dyn FnMut(u64, u32) -> bool,
        ) {
            while let Some(mut p) = snd.poll_transmit() {
                p.src = SND;
                p.sent_at = now;
                self.sent.push((now, p));
                let k = (p.seq / 1000) as usize;
                if self.times_sent.len() <= k {
                    self.times_sent.resize(k + 1, 0);
                }
                let n = self.times_sent[k];
                self.times_sent[k] += 1;
                if !drop(p.seq, n) {
                    self.ord += 1;
                    self.wire.push((now + self.one_way, self.ord, true, p));
                }
            }
            assert_eq!(snd.poll_event(), None);
            while let Some(mut p) = snk.poll_transmit() {
                p.src = RCV;
                self.ord += 1;
                self.wire.push((now + self.one_way, self.ord, false, p));
            }
        }

        fn run(
            &mut self,
            snd: &mut TcpSender,
            snk: &mut TcpSink,
            until: Instant,
            drop: &mut dyn FnMut(u64, u32) -> bool,
        ) {
            if !self.started {
                self.started = true;
                snk.handle_start(Instant::ZERO, info(RCV));
                snd.handle_start(Instant::ZERO, info(SND));
                self.pump(Instant::ZERO, snd, snk, drop);
            }
            loop {
                let next_pkt = self.wire.iter().enumerate().min_by_key(|(_, w)| (w.0, w.1)).map(|(i, w)| (i, w.0));
                let t_snd = snd.poll_timeout();
                let t_snk = snk.poll_timeout();
                let t = [next_pkt.map(|x| x.1), t_snd, t_snk].into_iter().flatten().min();
                let Some(t) = t else { break };
                if t > until {
                    break;
                }
                match next_pkt {
                    Some((i, tp)) if tp == t => {
                        let (_, _, to_sink, p) = self.wire.remove(i);
                        if to_sink {
                            snk.handle_packet(t, &p);
                        } else {
                            snd.handle_packet(t, &p);
                        }
                    }
                    _ if t_snd == Some(t) => snd.handle_timeout(t),
                    _ => snk.handle_timeout(t),
                }
                self.pump(t, snd, snk, drop);
            }
        }
    }

    /// Data segments sent per distinct send time, in time order.
    fn rounds(sent: &[(Instant, Packet)]) -> Vec<(Instant, usize)> {
        let mut out: Vec<(Instant, usize)> = Vec::new();
        for (t, _) in sent {
            match out.last_mut() {
                Some((lt, n)) if lt == t => *n += 1,
                _ => out.push((*t, 1)),
            }
        }
        out
    }

    /// cwnd and ssthresh in force at the end of instant `t`, from the trace.
    fn cc_at(tr: &TcpTrace, t: Instant) -> (u64, u64) {
        let k = tr.cc_time_ns.partition_point(|&x| x <= t.as_nanos());
        assert!(k > 0);
        (tr.cwnd_bytes[k - 1], tr.ssthresh_bytes[k - 1])
    }

    fn sender(newreno: bool, cfg: TcpConfig) -> TcpSender {
        if newreno {
            TcpSender::newreno(RCV, 5, cfg)
        } else {
            TcpSender::reno(RCV, 5, cfg)
        }
    }

    #[test]
    fn slow_start_doubles_per_rtt_until_ssthresh_then_one_segment_per_rtt() {
        // RTT 100 ms, IW 2, ssthresh 64 segments. RFC 5681 §3.1: slow start adds one SMSS per
        // ACK (one ACK per segment here), so each round is twice the previous one until cwnd
        // reaches ssthresh; congestion avoidance then adds one SMSS per round.
        for newreno in [false, true] {
            let cfg = TcpConfig { initial_ssthresh_bytes: 64_000, ..Default::default() };
            let mut snd = sender(newreno, cfg.clone());
            let mut snk = TcpSink::new(cfg);
            let sent = run(&mut snd, &mut snk, Duration::from_millis(50), ms(950), &mut |_, _| false);
            let r = rounds(&sent);
            let sizes: Vec<usize> = r.iter().map(|x| x.1).collect();
            assert_eq!(sizes, vec![2, 4, 8, 16, 32, 64, 65, 66, 67, 68]);
            for (k, (t, _)) in r.iter().enumerate() {
                assert_eq!(*t, ms(100 * k as u64), "round {k} leaves one RTT after the previous");
            }
            // cwnd at the end of each round's ACK burst (the burst at 100·k ms closes round k-1).
            let expect_cwnd = [4_000, 8_000, 16_000, 32_000, 64_000, 65_000, 66_000, 67_000, 68_000];
            for (k, w) in expect_cwnd.iter().enumerate() {
                assert_eq!(cc_at(&snd.trace, ms(100 * (k as u64 + 1))), (*w, 64_000), "after round {k}");
            }
            assert_eq!(snd.stats.retransmissions + snd.stats.timeouts, 0);
            // Every RTT sample is the pipe's 100 ms.
            assert!(!snd.trace.rtt_ns.is_empty());
            assert!(snd.trace.rtt_ns.iter().all(|&r| r == 100_000_000));
        }
    }

    // With ssthresh = 8 segments the rounds are 2, 4, 8 (slow start), 9, 10 (congestion
    // avoidance): segments 23..=32 (bytes 23000..33000) form the window of 10 sent at 400 ms.

    #[test]
    fn single_loss_in_congestion_avoidance_halves_cwnd_by_fast_retransmit() {
        for newreno in [false, true] {
            let cfg = TcpConfig { initial_ssthresh_bytes: 8_000, ..Default::default() };
            let mut snd = sender(newreno, cfg.clone());
            let mut snk = TcpSink::new(cfg);
            let sent =
                run(&mut snd, &mut snk, Duration::from_millis(50), ms(3000), &mut |seq, n| seq == 23_000 && n == 0);
            let r = rounds(&sent);
            assert_eq!(r[4], (ms(400), 10), "the window of 10 holding the loss");
            assert_eq!(cc_at(&snd.trace, ms(400)).0, 10_000);
            // The ACKs of that window return at 500 ms: the third duplicate triggers the fast
            // retransmit of segment 23 at once (RFC 5681 §3.2), no timer.
            assert_eq!(snd.trace.retx_seq, vec![23_000]);
            assert_eq!(snd.trace.retx_kind, vec![RetxKind::Fast as u8]);
            assert_eq!(snd.trace.retx_time_ns, vec![ms(500).as_nanos()]);
            assert!(snd.trace.timeout_time_ns.is_empty());
            assert_eq!(snd.stats.timeouts, 0);
            // ssthresh = FlightSize / 2 = 10 segments / 2; cwnd = ssthresh + 3 SMSS on entry.
            let k = snd.trace.ssthresh_bytes.iter().position(|&s| s == 5_000).expect("halved");
            assert_eq!(snd.trace.cc_time_ns[k], ms(500).as_nanos());
            assert_eq!(snd.trace.cwnd_bytes[k], 8_000);
            // The retransmission is acknowledged at 600 ms: cwnd deflates to ssthresh = half
            // the 10-segment window it had before the loss.
            assert_eq!(cc_at(&snd.trace, ms(600)), (5_000, 5_000));
            assert!(!snd.controller().in_recovery());
            // and the transfer goes on in congestion avoidance.
            assert!(snd.snd_una() > 100_000, "{}", snd.snd_una());
            assert_eq!(snk.received_bytes(), snd.snd_una());
        }
    }

    #[test]
    fn newreno_recovers_several_losses_in_one_window_without_timeout_reno_does_not() {
        let lost = [23_000u64, 25_000, 27_000, 29_000];
        let mut results = Vec::new();
        for newreno in [false, true] {
            let cfg = TcpConfig { initial_ssthresh_bytes: 8_000, ..Default::default() };
            let mut snd = sender(newreno, cfg.clone());
            let mut snk = TcpSink::new(cfg);
            run(&mut snd, &mut snk, Duration::from_millis(50), ms(5000), &mut |seq, n| lost.contains(&seq) && n == 0);
            assert!(snd.snd_una() > 100_000, "the transfer carries on");
            results.push(snd);
        }
        let (reno, newreno) = (&results[0], &results[1]);
        // NewReno (RFC 6582 §3.2): one fast retransmit, then one retransmission per partial
        // ACK, one RTT apart; exactly the lost segments are resent and ssthresh is cut once.
        assert_eq!(newreno.stats.timeouts, 0);
        assert_eq!(newreno.trace.retx_seq, lost.to_vec());
        let k = |x: RetxKind| x as u8;
        assert_eq!(
            newreno.trace.retx_kind,
            vec![k(RetxKind::Fast), k(RetxKind::Partial), k(RetxKind::Partial), k(RetxKind::Partial)]
        );
        let want_t: Vec<u64> = [500, 600, 700, 800].iter().map(|&t| ms(t).as_nanos()).collect();
        assert_eq!(newreno.trace.retx_time_ns, want_t);
        let mut thresholds = newreno.trace.ssthresh_bytes.clone();
        thresholds.dedup();
        assert_eq!(thresholds, vec![8_000, 5_000], "one reduction, to half the 10-segment window");
        // Reno leaves recovery on the first partial ACK with too little in flight to get three
        // more duplicates: it must wait for the retransmission timer.
        assert!(reno.stats.timeouts >= 1, "{:?}", reno.stats);
        assert_eq!(reno.trace.retx_kind[0], k(RetxKind::Fast));
        // The timer expires one (minimum, 1 s) RTO after the partial ACK at 600 ms restarted it.
        assert_eq!(reno.trace.timeout_time_ns[0], ms(1600).as_nanos());
    }

    #[test]
    fn timeout_in_fast_recovery_halves_the_uninflated_window_not_the_inflated_flight() {
        // Segment 23 000 is lost and so is its fast retransmission. Every duplicate ACK then
        // inflates cwnd and lets a new segment out, for a whole RTO, so snd_max - snd_una ends
        // far above the 5-segment recovery window. The timeout must halve that window
        // (ssthresh 5 000 -> 2 500), not the inflated FlightSize (RFC 5681 §3.1: "no more than"
        // eq. (4)).
        for newreno in [false, true] {
            let cfg = TcpConfig { initial_ssthresh_bytes: 8_000, ..Default::default() };
            let mut snd = sender(newreno, cfg.clone());
            let mut snk = TcpSink::new(cfg);
            run(&mut snd, &mut snk, Duration::from_millis(50), ms(1400), &mut |seq, n| seq == 23_000 && n <= 1);
            assert_eq!(snd.stats.timeouts, 1, "newreno={newreno}");
            let at = snd.trace.timeout_time_ns[0];
            assert!(snd.snd_max() > 23_000 + 20 * 1000, "the inflated recovery sent plenty: {}", snd.snd_max());
            let mut thresholds: Vec<u64> = snd
                .trace
                .cc_time_ns
                .iter()
                .zip(&snd.trace.ssthresh_bytes)
                .filter(|(t, _)| **t <= at)
                .map(|(_, s)| *s)
                .collect();
            thresholds.dedup();
            assert_eq!(thresholds, vec![8_000, 5_000, 2_500], "newreno={newreno}");
        }
    }

    #[test]
    fn rto_backs_off_exponentially_up_to_the_maximum() {
        // Nothing ever arrives. RFC 6298: first RTO 1 s (§2.1), doubled at each expiry (§5.5),
        // capped at 60 s (§2.5); each expiry resends the first segment (§5.4).
        let cfg = TcpConfig::default();
        let mut snd = TcpSender::reno(RCV, 5, cfg.clone());
        let mut snk = TcpSink::new(cfg);
        let sent = run(&mut snd, &mut snk, Duration::from_millis(50), Instant::from_secs_f64(200.0), &mut |_, _| true);
        let s = |x: u64| x * 1_000_000_000;
        assert_eq!(snd.trace.timeout_time_ns, vec![s(1), s(3), s(7), s(15), s(31), s(63), s(123), s(183)]);
        assert_eq!(snd.trace.timeout_rto_ns, vec![s(1), s(2), s(4), s(8), s(16), s(32), s(60), s(60)]);
        assert_eq!(snd.trace.retx_seq, vec![0; 8]);
        assert!(snd.trace.retx_kind.iter().all(|&k| k == RetxKind::Timeout as u8));
        // The loss window is one segment (RFC 5681 §3.1): IW of 2, then one per expiry.
        assert_eq!(sent.len(), 2 + 8);
        assert_eq!(snd.cwnd(), 1000);
        assert_eq!(snd.ssthresh(), 2000);
    }

    #[test]
    fn karn_no_rtt_sample_from_a_retransmitted_segment() {
        // Segment 0 is lost once; segment 1 alone gives one duplicate ACK, so the timer
        // recovers it at 1 s (RTO backs off to 2 s). Its ACK at 1.1 s covers retransmitted data
        // and gives no sample; the first sample comes from new data, acknowledged at 1.2 s.
        let cfg = TcpConfig { timestamps: false, ..Default::default() };
        let mut snd = TcpSender::newreno(RCV, 5, cfg.clone());
        let mut snk = TcpSink::new(cfg);
        let mut pipe = Pipe::new(Duration::from_millis(50));
        let mut drop = |seq: u64, n: u32| seq == 0 && n == 0;
        pipe.run(&mut snd, &mut snk, ms(1150), &mut drop);
        assert_eq!(snd.trace.timeout_time_ns, vec![ms(1000).as_nanos()]);
        assert_eq!(snd.snd_una(), 2000);
        assert!(snd.trace.rtt_ns.is_empty(), "{:?}", snd.trace.rtt_ns);
        assert_eq!(snd.rtt_estimator().rto(), Duration::from_secs(2), "the backed-off RTO stays");
        pipe.run(&mut snd, &mut snk, ms(1250), &mut drop);
        assert_eq!(snd.trace.rtt_time_ns.first(), Some(&ms(1200).as_nanos()));
        assert_eq!(snd.trace.rtt_ns[0], 100_000_000);
        assert_eq!(snd.rtt_estimator().rto(), Duration::from_secs(1));
    }

    #[test]
    fn timestamps_give_a_sample_from_a_retransmitted_segment() {
        // The same loss as above with timestamps on (the default): the ACK at 1.1 s echoes the
        // retransmission's timestamp (1.0 s), so it is an unambiguous 100 ms sample (RFC 7323
        // §4.1) and the backed-off RTO falls back to the 1 s floor at once, not at 1.2 s.
        let cfg = TcpConfig::default();
        assert!(cfg.timestamps);
        let mut snd = TcpSender::newreno(RCV, 5, cfg.clone());
        let mut snk = TcpSink::new(cfg);
        let mut pipe = Pipe::new(Duration::from_millis(50));
        let mut drop = |seq: u64, n: u32| seq == 0 && n == 0;
        pipe.run(&mut snd, &mut snk, ms(1150), &mut drop);
        assert_eq!(snd.trace.timeout_time_ns, vec![ms(1000).as_nanos()]);
        assert_eq!(snd.trace.rtt_time_ns.last(), Some(&ms(1100).as_nanos()));
        assert_eq!(snd.trace.rtt_ns.last(), Some(&100_000_000));
        assert_eq!(snd.rtt_estimator().rto(), Duration::from_secs(1));
    }

    #[test]
    fn rtt_estimator_follows_rfc_6298() {
        let cfg = TcpConfig { min_rto: Duration::from_millis(200), ..Default::default() };
        let mut e = RttEstimator::new(&cfg);
        assert_eq!(e.rto(), Duration::from_secs(1), "§2.1 initial RTO");
        e.sample(Duration::from_millis(100));
        // §2.2: SRTT = 100, RTTVAR = 50, RTO = 100 + 4·50 = 300 ms.
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        assert_eq!(e.rto(), Duration::from_millis(300));
        e.sample(Duration::from_millis(200));
        // §2.3: RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5;
        // RTO = 112.5 + 4·62.5 = 362.5 ms.
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.rto(), Duration::from_micros(362_500));
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60), "§2.5 cap");
        // §2.4: the default floor is 1 s.
        let mut d = RttEstimator::new(&TcpConfig::default());
        d.sample(Duration::from_millis(100));
        assert_eq!(d.rto(), Duration::from_secs(1));
    }

    fn seg(seq: u64, ts: u64) -> Packet {
        let mut p = Packet::data(Dest::Unicast(RCV), 1040);
        p.src = SND;
        p.flow = 5;
        p.seq = seq;
        p.header = Header::Tcp(TcpHeader { flags: TcpHeader::DATA, payload: 1000, ts_val: ts, ..Default::default() });
        p
    }

    fn acks(s: &mut TcpSink) -> Vec<(u64, u64)> {
        std::iter::from_fn(|| s.poll_transmit())
            .map(|p| {
                assert_eq!(p.dst, Dest::Unicast(SND));
                assert_eq!(p.size_bytes, 40);
                let Header::Tcp(h) = p.header else { panic!("not tcp") };
                assert_eq!(h.flags, TcpHeader::ACK);
                (h.ack, h.ts_ecr)
            })
            .collect()
    }

    #[test]
    fn sink_delayed_acks_every_second_segment_or_on_timer() {
        let cfg = TcpConfig { delayed_ack: true, ..Default::default() };
        let mut s = TcpSink::new(cfg);
        s.handle_start(Instant::ZERO, info(RCV));
        s.handle_packet(ms(0), &seg(0, 7));
        assert_eq!(acks(&mut s), vec![]);
        assert_eq!(s.poll_timeout(), Some(ms(200)));
        s.handle_packet(ms(10), &seg(1000, 8));
        // RFC 5681 §4.2: every second segment; the echo is the earliest unacknowledged one's.
        assert_eq!(acks(&mut s), vec![(2000, 7)]);
        assert_eq!(s.poll_timeout(), None);
        s.handle_packet(ms(20), &seg(2000, 9));
        assert_eq!(acks(&mut s), vec![]);
        s.handle_timeout(ms(220));
        assert_eq!(acks(&mut s), vec![(3000, 9)], "timer ACK");
        // Out of order: immediate duplicate ACK; filling the hole: immediate ACK past it.
        s.handle_packet(ms(300), &seg(4000, 11));
        assert_eq!(acks(&mut s), vec![(3000, 9)]);
        s.handle_packet(ms(310), &seg(3000, 10));
        assert_eq!(acks(&mut s), vec![(5000, 10)]);
        // A duplicate segment: immediate ACK.
        s.handle_packet(ms(320), &seg(0, 12));
        assert_eq!(acks(&mut s), vec![(5000, 12)]);
        assert_eq!(s.poll_timeout(), None);
        assert_eq!((s.stats.duplicates, s.stats.out_of_order, s.stats.acks_sent), (1, 1, 5));
        assert_eq!(s.trace.rx_bytes, vec![1000, 2000, 3000, 5000]);
    }

    #[test]
    fn sink_without_delay_acks_each_segment_and_merges_holes() {
        let mut s = TcpSink::new(TcpConfig::default());
        s.handle_start(Instant::ZERO, info(RCV));
        let mut got = Vec::new();
        for (i, sq) in [0u64, 2000, 4000, 3000, 1000, 5000].into_iter().enumerate() {
            s.handle_packet(ms(i as u64), &seg(sq, i as u64));
            got.extend(acks(&mut s).into_iter().map(|a| a.0));
        }
        assert_eq!(got, vec![1000, 1000, 1000, 1000, 5000, 6000]);
        assert_eq!(s.poll_timeout(), None);
        // A packet of another connection or without a TCP header is counted and ignored.
        let mut other = seg(6000, 0);
        other.flow = 6;
        s.handle_packet(ms(9), &other);
        s.handle_packet(ms(9), &Packet::data(Dest::Unicast(RCV), 100));
        assert_eq!(acks(&mut s), vec![]);
        assert_eq!(s.stats.ignored, 2);
        assert_eq!(s.received_bytes(), 6000);
    }

    #[test]
    fn fixed_size_transfer_completes_with_fin() {
        // 10 500 bytes = 10 full segments + 500: rounds of 2, 4, then the last 5 at 200 ms.
        let cfg = TcpConfig { transfer: Transfer::Bytes(10_500), ..Default::default() };
        let mut snd = TcpSender::newreno(RCV, 5, cfg.clone());
        let mut snk = TcpSink::new(cfg);
        let sent = run(&mut snd, &mut snk, Duration::from_millis(50), Instant::from_secs_f64(100.0), &mut |_, _| false);
        assert_eq!(rounds(&sent).iter().map(|r| r.1).collect::<Vec<_>>(), vec![2, 4, 5]);
        let last = sent.last().unwrap().1;
        let Header::Tcp(h) = last.header else { panic!() };
        assert_eq!((last.seq, h.payload, last.size_bytes), (10_000, 500, 540));
        assert!(h.flags & TcpHeader::FIN != 0);
        assert!(sent[..sent.len() - 1]
            .iter()
            .all(|(_, p)| matches!(p.header, Header::Tcp(h) if h.flags & TcpHeader::FIN == 0)));
        assert_eq!(snd.completed_at(), Some(ms(300)));
        assert_eq!(snk.fin_at(), Some(ms(250)));
        assert_eq!(snk.received_bytes(), 10_500);
        assert_eq!(snd.stats.payload_bytes_sent, 10_500);
        assert_eq!(snd.poll_timeout(), None, "no timer left once done");
        assert_eq!(snd.trace.acked_between(0, ms(300).as_nanos()), 10_500);
    }

    #[test]
    fn start_and_stop_times_bound_new_data() {
        let cfg = TcpConfig { start: ms(1000), stop: ms(1350), ..Default::default() };
        let mut snd = TcpSender::reno(RCV, 5, cfg.clone());
        let mut snk = TcpSink::new(cfg);
        let sent = run(&mut snd, &mut snk, Duration::from_millis(50), Instant::from_secs_f64(10.0), &mut |_, _| false);
        let r = rounds(&sent);
        assert_eq!(r, vec![(ms(1000), 2), (ms(1100), 4), (ms(1200), 8), (ms(1300), 16)]);
        assert_eq!(snd.snd_una(), 30_000);
        assert_eq!(snd.poll_timeout(), None);
    }

    #[test]
    fn sender_ignores_what_is_not_a_valid_ack() {
        let cfg = TcpConfig::default();
        let mut snd = TcpSender::reno(RCV, 5, cfg);
        snd.handle_start(Instant::ZERO, info(SND));
        while snd.poll_transmit().is_some() {}
        let mut a = Packet::data(Dest::Unicast(SND), 40);
        a.flow = 5;
        a.header = Header::Tcp(TcpHeader { ack: 5000, flags: TcpHeader::ACK, wnd: 1 << 20, ..Default::default() });
        snd.handle_packet(ms(1), &a); // acknowledges bytes never sent
        snd.handle_packet(ms(1), &Packet::data(Dest::Unicast(SND), 40));
        assert_eq!(snd.stats.ignored, 2);
        assert_eq!(snd.snd_una(), 0);
        assert_eq!(snd.cwnd(), 2000);
    }
}
