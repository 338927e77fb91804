//! The congestion-control interface (RFC 5681's events as callbacks) and the window state the
//! Reno family shares; one file per algorithm beside it, as smoltcp and quinn do.

use super::*;

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

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3.3, as Linux's
/// `tcp_rate.c` computes it): `delivered` bytes were delivered over `interval`, starting from
/// the connection's count `prior_delivered` when the newest packet this ACK covers was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSample {
    pub delivered: u64,
    pub interval: Duration,
    pub prior_delivered: u64,
    /// The newest packet was sent while the application, not the network, limited sending.
    pub is_app_limited: bool,
}

/// What the sender knows about an arriving ACK beyond [`AckInfo`]: time, RTT and the delivery
/// rate. Handed to [`CongestionControl::on_ack_sample`] before the window callbacks and to
/// [`CongestionControl::on_ack_processed`] after them (Linux's `pkts_acked` and
/// `cong_control`), for every ACK of new data and every duplicate ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSample {
    pub now: Instant,
    /// The RTT measured from this ACK (RFC 7323 §4.1 echo), if any.
    pub rtt: Option<Duration>,
    /// The sender's smoothed RTT (RFC 6298) after this ACK's sample.
    pub srtt: Option<Duration>,
    /// The cumulative ACK (snd_una after it) and the next byte to send.
    pub ack: u64,
    pub snd_nxt: u64,
    /// Bytes this ACK newly delivered, cumulatively or by SACK (Linux's `acked_sacked`).
    /// Counted only when the controller asks for rate samples; else the bytes newly
    /// acknowledged cumulatively.
    pub newly_delivered: u64,
    /// Bytes sent and neither acknowledged nor SACKed, after this ACK.
    pub inflight: u64,
    /// Bytes delivered since the start and when the last of them was (rate samples only).
    pub delivered: u64,
    pub delivered_time: Instant,
    /// This ACK's delivery-rate sample (only when the controller asks for them).
    pub rate: Option<RateSample>,
    /// Segments this ACK's processing newly marked lost (Linux's `rs->losses`, counted by
    /// `tcp_ack` as the growth of `tp->lost` across it): RACK's marks, or RFC 6675's `IsLost`
    /// without RACK. A retransmission timeout's marks belong to no ACK and are not counted
    /// here, as in Linux. Counted only when the controller asks for rate samples; else 0.
    pub losses: u64,
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
    /// Whether the sender keeps a SACK scoreboard and recovers by RFC 6675 for this
    /// controller. Default false.
    fn uses_sack(&self) -> bool {
        false
    }
    /// The scoreboard says the first unacknowledged segment is lost (RFC 6675 §5 step 2,
    /// `IsLost(HighACK + 1)`) before the third duplicate ACK. Only a SACK controller acts.
    fn on_sack_loss(&mut self, _ack: &AckInfo) -> AckResponse {
        AckResponse::default()
    }
    /// A tail loss probe repaired a loss, seen when the ACK passed the probe (RFC 8985
    /// §7.4.2, "invoke a congestion control response equivalent to a fast recovery"): reduce
    /// the window once without entering recovery (Linux's CWR, `tcp_init_cwnd_reduction`
    /// then `tcp_end_cwnd_reduction`). Default: nothing.
    fn on_loss_repaired(&mut self, _ack: &AckInfo) {}
    /// The sender starts; `rng` is the agent's own random stream (determinism). Default: unused.
    fn on_start(&mut self, _now: Instant, _rng: Rng) {}
    /// Whether the sender keeps per-segment delivery records and hands rate samples in
    /// [`AckSample::rate`]. Default false (no per-segment work).
    fn wants_rate_samples(&self) -> bool {
        false
    }
    /// An ACK arrived, before `on_new_ack` / `on_dup_ack` (Linux's `pkts_acked`).
    fn on_ack_sample(&mut self, _s: &AckSample) {}
    /// The ACK has been processed, recovery entered or left (Linux's `cong_control`).
    fn on_ack_processed(&mut self, _s: &AckSample) {}
    /// The rate at which the sender paces segments, payload bytes per second; `None` (the
    /// default) sends whatever the window allows at once.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    /// The fewest segments an skb holds under [`TcpConfig::skb_pacing`] (`min_tso_segs` of
    /// `tcp_congestion_ops`); `None` (the default) takes [`TcpConfig::min_tso_segs`].
    fn min_tso_segs(&self) -> Option<u32> {
        None
    }
    /// A small code naming the controller's current state (BBR: mode and gain-cycle phase),
    /// traced when it changes; `None` (the default) for controllers without one.
    fn state_code(&self) -> Option<u8> {
        None
    }
    /// The handshake's RTT sample ([`TcpConfig::handshake_rtt`]), once, when the transfer
    /// starts, before any ACK; `srtt` is the estimator's after it. Default: nothing.
    fn on_handshake_rtt(&mut self, _now: Instant, _rtt: Duration, _srtt: Duration) {}
    /// The controller's model of the path, for the trace: the bottleneck bandwidth estimate
    /// (payload bytes per second) and the minimum RTT it holds; `None` (the default) for
    /// controllers without one.
    fn path_model(&self) -> Option<(f64, Option<Duration>)> {
        None
    }
}

/// The algorithms shipped here, for callers that choose one by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcAlgorithm {
    Reno,
    NewReno,
    /// RFC 2018 SACK with RFC 6675 loss recovery; needs `TcpConfig::sack` at both ends.
    Sack,
    /// CUBIC (RFC 9438) with Linux's HyStart; recovers by SACK when `TcpConfig::sack`.
    Cubic,
    /// BBR v1 as Linux's `tcp_bbr.c`, paced; recovers by SACK when `TcpConfig::sack`.
    Bbr,
}

impl CcAlgorithm {
    pub fn build(self, cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        match self {
            CcAlgorithm::Reno => Box::new(Reno::new(cfg)),
            CcAlgorithm::NewReno => Box::new(NewReno::new(cfg)),
            CcAlgorithm::Sack => Box::new(Sack::new(cfg)),
            CcAlgorithm::Cubic => Box::new(Cubic::new(cfg, CubicConfig::default())),
            CcAlgorithm::Bbr => Box::new(Bbr::new(cfg, BbrConfig::default())),
        }
    }

    /// Every variant, by the name a flow chooses it with.
    pub const ALL: [(&'static str, CcAlgorithm); 5] = [
        ("reno", CcAlgorithm::Reno),
        ("newreno", CcAlgorithm::NewReno),
        ("sack", CcAlgorithm::Sack),
        ("cubic", CcAlgorithm::Cubic),
        ("bbr", CcAlgorithm::Bbr),
    ];

    /// The variants' names, in [`CcAlgorithm::ALL`]'s order.
    pub const NAMES: [&'static str; Self::ALL.len()] = {
        let mut out = [""; Self::ALL.len()];
        let mut i = 0;
        while i < out.len() {
            out[i] = Self::ALL[i].0;
            i += 1;
        }
        out
    };

    /// The variant named `name`.
    pub fn from_name(name: &str) -> Option<CcAlgorithm> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|&(_, a)| a)
    }

    /// Whether both ends run SACK (RFC 2018) with this variant: "sack" by definition; CUBIC
    /// and BBR because Linux, whose behaviour they model, negotiates it by default.
    pub fn uses_sack(self) -> bool {
        matches!(self, CcAlgorithm::Sack | CcAlgorithm::Cubic | CcAlgorithm::Bbr)
    }

    /// The flow settings this variant starts from before a caller's overrides: RFC 5681's
    /// ns-2-like defaults (`TcpConfig::default()`) for the Reno family, which existing
    /// experiments use; Linux's for CUBIC and BBR (`TcpConfig::linux()`).
    pub fn default_config(self) -> TcpConfig {
        match self {
            CcAlgorithm::Cubic | CcAlgorithm::Bbr => TcpConfig::linux(),
            _ => TcpConfig::default(),
        }
    }
}

/// Window arithmetic shared by Reno and NewReno (RFC 5681 §3.1 and §3.2).
#[derive(Clone, Debug)]
pub(crate) struct Window {
    pub(crate) mss: u64,
    pub(crate) cwnd: u64,
    pub(crate) ssthresh: u64,
    /// Bytes acknowledged since cwnd last grew in congestion avoidance.
    pub(crate) ca_acked: u64,
    pub(crate) dupthresh: u32,
}

impl Window {
    pub(crate) fn new(cfg: &TcpConfig) -> Self {
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
    pub(crate) fn grow(&mut self, n: u64) {
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
    pub(crate) fn halve(&mut self, flight: u64, window: u64) {
        self.ssthresh = (flight.min(window) / 2).max(2 * self.mss);
        self.ca_acked = 0;
    }

    /// RFC 5681 §3.2 steps 2 and 3: set ssthresh, retransmit, cwnd = ssthresh + 3·SMSS.
    pub(crate) fn enter_fast_recovery(&mut self, flight: u64) {
        self.halve(flight, self.cwnd);
        self.cwnd = self.ssthresh + self.dupthresh as u64 * self.mss;
    }

    /// RFC 5681 §3.1: after a timeout cwnd is the loss window LW = 1 SMSS; ssthresh by eq. (4)
    /// unless the segment was already retransmitted by the timer, then held constant.
    /// `recovering`: the timer expired during fast recovery, whose uninflated window is ssthresh.
    pub(crate) fn timeout(&mut self, to: &TimeoutInfo, recovering: bool) {
        if to.first_for_segment {
            let window = if recovering { self.ssthresh } else { self.cwnd };
            self.halve(to.flight, window);
        }
        self.ca_acked = 0;
        self.cwnd = self.mss;
    }
}
