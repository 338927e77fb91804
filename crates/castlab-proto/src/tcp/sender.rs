//! The TCP sender agent: segments, ACK processing, retransmissions and the RTO timer.

use super::rack::{Rack, Validity};
use super::rate::RateSampler;
use super::*;

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
    /// A segment chosen by RFC 6675's `NextSeg` (rules 1 and 3) during SACK loss recovery,
    /// after the first retransmission (which is `Fast`).
    Sack = 5,
    /// A tail loss probe that resends the last segment sent (RFC 8985 §7.3).
    Probe = 6,
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
    /// Paced flows only: one row per segment sent, with the cumulative on-wire bytes sent
    /// (retransmissions included). The sending rate over time is the slope of this series.
    pub tx_time_ns: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    /// Controllers with a state code ([`CongestionControl::state_code`]) only: one row
    /// whenever the code changed, with the pacing rate (payload bits/s, 0 when not pacing) then,
    /// and the controller's path model then ([`CongestionControl::path_model`]): bottleneck
    /// bandwidth (payload bits/s) and minimum RTT (ns; 0 before the first sample).
    pub state_time_ns: Vec<u64>,
    pub state_code: Vec<u8>,
    pub pacing_rate_bps: Vec<f64>,
    pub model_bw_bps: Vec<f64>,
    pub min_rtt_ns: Vec<u64>,
}

impl TcpTrace {
    /// Bytes acknowledged in the window `(t0, t1]` (ns), from the cumulative series.
    pub fn acked_between(&self, t0_ns: u64, t1_ns: u64) -> u64 {
        cum_at(&self.ack_time_ns, &self.acked_bytes, t1_ns) - cum_at(&self.ack_time_ns, &self.acked_bytes, t0_ns)
    }
}

/// The value of a cumulative series at time `t` (last row with time <= t, else 0).
pub(crate) fn cum_at(times: &[u64], cum: &[u64], t: u64) -> u64 {
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
    /// Tail loss probes sent (RFC 8985 §7.3), new data or a retransmission.
    pub tlp_probes: u64,
    /// Probe episodes whose ACK showed that the probe repaired a loss (§7.4.2), each answered
    /// by one window reduction.
    pub tlp_recoveries: u64,
    /// Segments RACK marked lost (§6.2 step 5), on an ACK or the reordering timer (the marks
    /// of a retransmission timeout, §6.3, are not counted).
    pub rack_losses: u64,
    /// Packets that were not a valid ACK for this flow (wrong header or flow, ACK beyond
    /// anything sent): counted and dropped.
    pub ignored: u64,
}

castlab_core::timers! {
    /// The sender's timers: the tail loss probe's PTO (RFC 8985 §7.2; before the RTO, so that
    /// a PTO capped at the RTO's deadline goes first), retransmission timeout, start and stop
    /// of the transfer, the next pacing deadline (only for a controller with a pacing rate)
    /// and RACK's reordering timer (§6.2 step 5).
    pub enum SenderTimer { Tlp, Rto, Start, Stop, Pace, Reo }
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
    /// A duplicate ACK allowed one Limited Transmit segment (RFC 3042 §2).
    pending_lt: bool,
    /// Bytes sent by Limited Transmit since the last ACK of new data: RFC 5681 §3.2 step 2
    /// leaves them out of the FlightSize that sets ssthresh.
    lt_bytes: u64,
    completed_at: Option<Instant>,
    last_cc: (u64, u64),
    /// SACK (RFC 6675): whether the controller recovers by the scoreboard; the scoreboard,
    /// SACKed ranges above `snd_una` (disjoint, sorted, `[start, end)`); HighRxt, one past the
    /// highest byte retransmitted in the current recovery.
    sack: bool,
    scoreboard: Vec<(u64, u64)>,
    high_rxt: u64,
    /// Without RACK, for a controller that asks for rate samples: one past the segments
    /// RFC 6675's `IsLost` has counted as lost. `IsLost` only grows with the SACKs above a
    /// segment, so the lost unSACKed segments lie below this mark and an ACK's new losses
    /// are those it moves past.
    lost_mark: u64,
    /// Delivery-rate estimation, for a controller that asks for rate samples.
    rate: Option<RateSampler>,
    /// The smallest RTT sample so far.
    min_rtt: Option<Duration>,
    /// Pacing: the earliest instant the next segment may leave (Linux's `tcp_wstamp_ns`).
    pace_next: Instant,
    /// The skb being sent under `cfg.skb_pacing`: segments it may still take, the instant it
    /// is sent at, `pace_next` before it (`prior_wstamp`) and its payload so far.
    skb: Skb,
    /// RACK-TLP (RFC 8985), on a SACK flow with `cfg.rack`.
    pub(crate) rack: Option<Rack>,
    /// The PTO expired and a probe is due (sent by the next `poll_transmit`).
    pending_tlp: bool,
    /// RTO recovery: `snd_max` when the timer last expired, until the cumulative ACK passes it.
    rto_recovery: Option<u64>,
    /// On-wire bytes sent, for the paced flows' `tx_*` trace.
    tx_total: u64,
    last_state: Option<u8>,
    pub stats: TcpSenderStats,
    pub trace: TcpTrace,
}

impl TcpSender {
    /// A sender of flow `flow` to the sink at `dst`, with the given controller.
    pub fn new(dst: Addr, flow: u32, cfg: TcpConfig, cc: Box<dyn CongestionControl>) -> Self {
        let sack = cfg.sack && cc.uses_sack();
        let rate = cc.wants_rate_samples().then(RateSampler::new);
        let rack = (cfg.rack && sack).then(|| Rack::new(u64::from(cfg.mss_bytes)));
        TcpSender {
            sack,
            rate,
            rack,
            pending_tlp: false,
            rto_recovery: None,
            min_rtt: None,
            pace_next: Instant::ZERO,
            skb: Skb::default(),
            tx_total: 0,
            last_state: None,
            scoreboard: Vec::with_capacity(if sack { 32 } else { 0 }),
            high_rxt: 0,
            lost_mark: 0,
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
            pending_lt: false,
            lt_bytes: 0,
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

    /// A SACK sender (RFC 2018, RFC 6675 recovery); sets `cfg.sack`, which its sink needs too.
    pub fn sack(dst: Addr, flow: u32, mut cfg: TcpConfig) -> Self {
        cfg.sack = true;
        let cc = Box::new(Sack::new(&cfg));
        TcpSender::new(dst, flow, cfg, cc)
    }

    /// A CUBIC sender (RFC 9438 with Linux's HyStart).
    pub fn cubic(dst: Addr, flow: u32, cfg: TcpConfig) -> Self {
        let cc = Box::new(Cubic::new(&cfg, CubicConfig::default()));
        TcpSender::new(dst, flow, cfg, cc)
    }

    /// A BBR v1 sender (Linux's `tcp_bbr.c`), paced.
    pub fn bbr(dst: Addr, flow: u32, cfg: TcpConfig) -> Self {
        let cc = Box::new(Bbr::new(&cfg, BbrConfig::default()));
        TcpSender::new(dst, flow, cfg, cc)
    }

    /// The smallest RTT measured so far.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// The SACK scoreboard: SACKed byte ranges above `snd_una` (empty without SACK).
    pub fn scoreboard(&self) -> &[(u64, u64)] {
        &self.scoreboard
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
            sack: [(0, 0); 3],
        });
        p
    }

    /// The transfer starts: with a handshake RTT ([`TcpConfig::handshake_rtt`]), the sample
    /// the connection's SYN-ACK gave is taken first (traced as an RTT sample).
    fn begin(&mut self, now: Instant) {
        self.started = true;
        if let Some(r) = self.cfg.handshake_rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
            self.rtt.sample(r);
            let srtt = self.rtt.srtt().unwrap_or(r);
            if self.cfg.trace.on() {
                self.trace.rtt_time_ns.push(now.as_nanos());
                self.trace.rtt_ns.push(r.as_nanos());
                self.trace.srtt_ns.push(srtt.as_nanos());
                self.trace.rto_ns.push(self.rtt.rto().as_nanos());
            }
            self.cc.on_handshake_rtt(now, r, srtt);
        }
    }

    fn record_retx(&mut self, seq: u64, kind: RetxKind) {
        self.stats.retransmissions += 1;
        if self.cfg.trace.on() {
            self.trace.retx_time_ns.push(self.now.as_nanos());
            self.trace.retx_seq.push(seq);
            self.trace.retx_kind.push(kind as u8);
        }
        // RFC 6298 §3, Karn's rule: no RTT sample from anything this retransmission may ack.
        self.karn_mark = self.snd_max;
    }

    fn record_cc(&mut self) {
        let cur = (self.cc.cwnd(), self.cc.ssthresh());
        if cur != self.last_cc && self.cfg.trace.on() {
            self.last_cc = cur;
            self.trace.cc_time_ns.push(self.now.as_nanos());
            self.trace.cwnd_bytes.push(cur.0);
            self.trace.ssthresh_bytes.push(cur.1);
        }
        let state = self.cc.state_code();
        if state.is_some() && state != self.last_state && self.cfg.trace.on() {
            self.last_state = state;
            self.trace.state_time_ns.push(self.now.as_nanos());
            self.trace.state_code.push(state.unwrap_or(0));
            self.trace.pacing_rate_bps.push(self.cc.pacing_rate().map_or(0.0, |r| r * 8.0));
            let (bw, min_rtt) = self.cc.path_model().unwrap_or((0.0, None));
            self.trace.model_bw_bps.push(bw * 8.0);
            self.trace.min_rtt_ns.push(min_rtt.map_or(0, |d| d.as_nanos()));
        }
    }

    /// Bytes SACKed above `snd_una`.
    fn sacked_bytes(&self) -> u64 {
        self.scoreboard.iter().map(|&(a, b)| b - a).sum()
    }

    /// Feed the ACK's deliveries to the rate sampler; the bytes it newly delivered.
    fn rate_on_ack(&mut self, now: Instant, h: &TcpHeader) -> Option<u64> {
        let rs = self.rate.as_mut()?;
        let mut blocks = [(0u64, 0u64); 3];
        for (i, b) in blocks.iter_mut().enumerate() {
            *b = h.sack_block(i).unwrap_or((0, 0));
        }
        Some(rs.on_ack(now, h.ack, &blocks))
    }

    /// What the controller hears about an ACK besides [`AckInfo`].
    fn ack_sample(&mut self, now: Instant, rtt: Option<Duration>, newly_delivered: u64) -> AckSample {
        let min_rtt = self.min_rtt;
        let (rate, delivered, delivered_time) = match self.rate.as_mut() {
            Some(rs) => (rs.sample(min_rtt), rs.delivered, rs.delivered_time),
            None => (None, 0, Instant::ZERO),
        };
        AckSample {
            now,
            rtt,
            srtt: self.rtt.srtt(),
            ack: self.snd_una,
            snd_nxt: self.snd_max,
            newly_delivered,
            inflight: (self.snd_max - self.snd_una).saturating_sub(self.sacked_bytes()),
            delivered,
            delivered_time,
            rate,
            losses: 0,
        }
    }

    /// Segments this ACK newly marked lost, for a controller that asks for rate samples
    /// (Linux's `rs->losses`): RACK's marks (`rack_marked`), or without RACK the segments
    /// RFC 6675's `IsLost` newly covers.
    fn newly_lost(&mut self, rack_marked: u32) -> u64 {
        if self.rate.is_none() {
            return 0;
        }
        if self.rack.is_some() {
            return u64::from(rack_marked);
        }
        if !self.sack {
            return 0;
        }
        let top = self.high_sacked();
        let mut s = self.lost_mark.max(self.snd_una);
        let mut n = 0;
        while s < top {
            let len = self.seg_len(s).min(self.snd_max - s).max(1);
            if !self.is_sacked(s, len) {
                if !self.is_lost(s, len) {
                    break;
                }
                n += 1;
            }
            s += len;
        }
        self.lost_mark = s;
        n
    }

    fn outstanding(&self) -> bool {
        self.snd_una < self.snd_max
    }

    // ----- SACK scoreboard (RFC 6675 §3 and §4) -----

    /// Record the ACK's SACK blocks (RFC 6675 §5: "the scoreboard MUST be updated") and drop
    /// what the cumulative ACK covers. Blocks outside (snd_una, snd_max] are ignored.
    fn update_scoreboard(&mut self, h: &TcpHeader) {
        for i in 0..h.sack.len() {
            let Some((s, e)) = h.sack_block(i) else { continue };
            let (s, e) = (s.max(self.snd_una), e.min(self.snd_max));
            if s >= e {
                continue;
            }
            let a = self.scoreboard.partition_point(|&(_, end)| end < s);
            let mut b = a;
            let (mut ns, mut ne) = (s, e);
            while b < self.scoreboard.len() && self.scoreboard[b].0 <= e {
                ns = ns.min(self.scoreboard[b].0);
                ne = ne.max(self.scoreboard[b].1);
                b += 1;
            }
            if b > a {
                self.scoreboard[a] = (ns, ne);
                self.scoreboard.drain(a + 1..b);
            } else {
                self.scoreboard.insert(a, (ns, ne));
            }
        }
    }

    fn trim_scoreboard(&mut self) {
        let una = self.snd_una;
        let k = self.scoreboard.partition_point(|&(_, e)| e <= una);
        self.scoreboard.drain(..k);
        if let Some(first) = self.scoreboard.first_mut() {
            first.0 = first.0.max(una);
        }
    }

    /// Whether the segment `[s, s + len)` is SACKed whole.
    fn is_sacked(&self, s: u64, len: u64) -> bool {
        let i = self.scoreboard.partition_point(|&(_, e)| e <= s);
        self.scoreboard.get(i).is_some_and(|&(a, b)| a <= s && s + len <= b)
    }

    /// RFC 6675 §4 `IsLost(s)`: more than (DupThresh − 1)·SMSS bytes SACKed above the segment
    /// at `s`, or DupThresh discontiguous SACKed ranges above it.
    fn is_lost(&self, s: u64, len: u64) -> bool {
        let above = s + len;
        let i = self.scoreboard.partition_point(|&(_, e)| e <= above);
        let (mut bytes, mut ranges) = (0u64, 0u32);
        for &(a, b) in &self.scoreboard[i..] {
            bytes += b - a.max(above);
            ranges += 1;
        }
        let dt = self.cfg.dupack_threshold;
        bytes > (dt as u64 - 1) * self.cfg.mss_bytes as u64 || ranges >= dt
    }

    /// One past the highest SACKed byte (HighACK's SACK counterpart), or `snd_una`.
    fn high_sacked(&self) -> u64 {
        self.scoreboard.last().map_or(self.snd_una, |r| r.1)
    }

    /// RFC 6675 §4 `SetPipe`: the octets in flight by the scoreboard's reckoning.
    fn pipe(&self) -> u64 {
        let mut pipe = 0;
        let mut s = self.snd_una;
        while s < self.snd_max {
            let len = self.seg_len(s).min(self.snd_max - s).max(1);
            if !self.is_sacked(s, len) {
                if !self.is_lost(s, len) {
                    pipe += len;
                }
                if s < self.high_rxt {
                    pipe += len;
                }
            }
            s += len;
        }
        pipe
    }

    /// RFC 6675 §4 `NextSeg` rules 1 and 3: the first unSACKed segment at or above HighRxt
    /// and below the highest SACKed byte that is lost (rule 1), else any such (rule 3, only
    /// when `rule3`). Rule 2 (new data) is the caller's; rule 4 (rescue) is not used.
    fn next_hole(&self, rule3: bool) -> Option<(u64, u64)> {
        let top = self.high_sacked();
        let mut s = self.high_rxt.max(self.snd_una);
        let mut first_unsacked = None;
        while s < top {
            let len = self.seg_len(s).min(self.snd_max - s).max(1);
            if !self.is_sacked(s, len) {
                if self.is_lost(s, len) {
                    return Some((s, len));
                }
                first_unsacked.get_or_insert((s, len));
            }
            s += len;
        }
        if rule3 {
            first_unsacked
        } else {
            None
        }
    }

    /// SACK loss recovery's next segment (RFC 6675 §5 step (C)): while cwnd − pipe ≥ 1 SMSS,
    /// `NextSeg` by rules 1, 2, 3.
    fn sack_recovery_transmit(&mut self) -> Option<Packet> {
        if let Some(kind) = self.pending_retx.take() {
            // §5 step 4.3: the first segment presumed dropped, whatever the window (with RACK,
            // the first segment marked lost, as Linux's PRR sends at least one on entry).
            let first = match self.rack.as_ref() {
                Some(rack) => rack.first_lost(),
                None => Some((self.snd_una, self.seg_len(self.snd_una).min(self.snd_max - self.snd_una))),
            };
            if let Some((seq, len)) = first.filter(|f| f.1 > 0) {
                self.record_retx(seq, kind);
                self.high_rxt = seq + len;
                return Some(self.emit(seq, len));
            }
        }
        let mss = self.cfg.mss_bytes as u64;
        // RFC 8985 §9.2: RFC 6675's pipe and NextSeg do not go with RACK; then the pipe is
        // Linux's `tcp_packets_in_flight` and the segments sent again are those marked lost
        let pipe = self.rack.as_ref().map_or_else(|| self.pipe(), Rack::pipe);
        if self.cc.cwnd() < pipe + mss {
            return None;
        }
        let hole = match self.rack.as_ref() {
            Some(rack) => rack.first_lost(),
            None => self.next_hole(false),
        };
        if let Some((seq, len)) = hole {
            self.record_retx(seq, RetxKind::Sack);
            self.high_rxt = seq + len;
            return Some(self.emit(seq, len));
        }
        // rule 2: new data, within the receiver's window
        let limit = self.data_limit();
        if self.snd_nxt == self.snd_max && self.snd_nxt < limit {
            let len = self.seg_len(self.snd_nxt).min(limit - self.snd_nxt);
            if self.snd_max - self.snd_una + len <= self.snd_wnd {
                let seq = self.snd_nxt;
                self.snd_nxt += len;
                self.snd_max = self.snd_nxt;
                return Some(self.emit(seq, len));
            }
        }
        if self.rack.is_some() {
            return None;
        }
        if let Some((seq, len)) = self.next_hole(true) {
            self.record_retx(seq, RetxKind::Sack);
            self.high_rxt = seq + len;
            return Some(self.emit(seq, len));
        }
        None
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
        if self.sack {
            self.update_scoreboard(h);
        }
        self.rack_on_ack(now, h);
        self.tlp_on_ack(h);
        let delivered = self.rate_on_ack(now, h);
        let wnd = h.wnd as u64;
        if ack == self.snd_una {
            // RFC 5681 §2, DUPLICATE ACKNOWLEDGMENT: outstanding data, no payload, same ACK
            // number, unchanged window.
            let is_dup = self.outstanding() && h.payload == 0 && wnd == self.snd_wnd;
            self.snd_wnd = wnd;
            if is_dup {
                self.stats.dup_acks += 1;
                self.dupacks += 1;
                // RFC 5681 §3.2 step 2: segments sent by Limited Transmit do not count in the
                // FlightSize that sets ssthresh.
                let flight = (self.snd_max - self.snd_una).saturating_sub(self.lt_bytes);
                let info =
                    AckInfo { ack, bytes_acked: 0, flight_before: flight, flight_after: flight, snd_max: self.snd_max };
                let mut sample = self.ack_sample(now, None, delivered.unwrap_or(0));
                self.cc.on_ack_sample(&sample);
                let in_recovery = self.cc.in_recovery();
                let mut marked = 0;
                let r = if self.rack.is_some() {
                    // RFC 8985 replaces DupThresh: RACK's marks alone start recovery
                    marked = self.rack_detect(now);
                    if !self.tlp_allowed() {
                        self.timers.stop(SenderTimer::Tlp);
                    }
                    AckResponse { retransmit: self.pending_retx.is_some(), restart_rto: false }
                } else {
                    let mut r = self.cc.on_dup_ack(&info, self.dupacks);
                    if self.sack && !r.retransmit && !in_recovery && self.first_is_lost() {
                        // RFC 6675 §5 step 2: IsLost(HighACK + 1) enters recovery early.
                        r = self.cc.on_sack_loss(&info);
                    }
                    r
                };
                if r.retransmit {
                    // (rack_detect did the bookkeeping of a recovery it started)
                    if self.rack.is_none() {
                        self.stats.fast_retransmits += 1;
                        self.pending_retx = Some(RetxKind::Fast);
                        self.high_rxt = self.snd_una;
                    }
                } else if self.cfg.limited_transmit && !in_recovery && self.dupacks < self.cfg.dupack_threshold {
                    // RFC 3042 §2 / RFC 5681 §3.2 step 1: the first and second duplicate ACKs
                    // each send one new segment (checked in poll_transmit).
                    self.pending_lt = true;
                }
                sample.losses = self.newly_lost(marked);
                self.cc.on_ack_processed(&sample);
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
        let mut rtt_sample = None;
        if unambiguous && h.ts_ecr <= now.as_nanos() {
            let r = Duration::from_nanos(now.as_nanos() - h.ts_ecr);
            rtt_sample = Some(r);
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
            self.rtt.sample(r);
            if let Some(rack) = self.rack.as_mut() {
                rack.rtt_since_probe = true;
            }
            if self.cfg.trace.on() {
                self.trace.rtt_time_ns.push(now.as_nanos());
                self.trace.rtt_ns.push(r.as_nanos());
                self.trace.srtt_ns.push(self.rtt.srtt().map_or(0, |d| d.as_nanos()));
                self.trace.rto_ns.push(self.rtt.rto().as_nanos());
            }
        }
        self.snd_una = ack;
        if self.sack {
            self.trim_scoreboard();
            self.high_rxt = self.high_rxt.max(ack);
        }
        if self.snd_nxt < ack {
            self.snd_nxt = ack; // after go-back-N the receiver may hold more than we resent
        }
        self.dupacks = 0;
        self.lt_bytes = 0;
        self.pending_lt = false;
        self.rto_seq = None;
        if self.rto_recovery.is_some_and(|p| ack >= p) {
            self.rto_recovery = None;
        }
        if self.cfg.trace.on() {
            self.trace.ack_time_ns.push(now.as_nanos());
            self.trace.acked_bytes.push(ack);
        }
        let mut sample = self.ack_sample(now, rtt_sample, delivered.unwrap_or(info.bytes_acked));
        self.cc.on_ack_sample(&sample);
        let r = self.cc.on_new_ack(&info);
        if r.retransmit {
            self.pending_retx = Some(RetxKind::Partial);
        }
        let mut marked = 0;
        if self.rack.is_some() {
            marked = self.rack_detect(now);
        } else if self.sack && !self.cc.in_recovery() && self.outstanding() && self.first_is_lost() {
            // RFC 6675 §5 step 2 on an ACK that also SACKs: the scoreboard alone may show the
            // new first segment lost.
            let flight = (self.snd_max - self.snd_una).saturating_sub(self.lt_bytes);
            let info =
                AckInfo { ack, bytes_acked: 0, flight_before: flight, flight_after: flight, snd_max: self.snd_max };
            if self.cc.on_sack_loss(&info).retransmit {
                self.stats.fast_retransmits += 1;
                self.pending_retx = Some(RetxKind::Fast);
                self.high_rxt = self.snd_una;
            }
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
        if self.rack.is_some() {
            if self.outstanding() {
                // RFC 8985 §7.2: an ACK of new data (re)starts the PTO
                self.schedule_tlp(now);
            } else {
                self.timers.stop(SenderTimer::Tlp);
                self.timers.stop(SenderTimer::Reo);
            }
        }
        sample.losses = self.newly_lost(marked);
        self.cc.on_ack_processed(&sample);
    }

    // ----- RACK-TLP (RFC 8985) -----

    /// §6.2 steps 1-3 for an ACK: the records of what it delivers, RACK.rtt, RACK.xmit_ts and
    /// reordering.
    fn rack_on_ack(&mut self, now: Instant, h: &TcpHeader) {
        let Some(rack) = self.rack.as_mut() else { return };
        // step 1: RACK.min_RTT, with this ACK's sample
        let sample =
            (h.ack > self.snd_una && (self.cfg.timestamps || h.ack > self.karn_mark) && h.ts_ecr <= now.as_nanos())
                .then(|| Duration::from_nanos(now.as_nanos() - h.ts_ecr));
        let min_rtt = match (self.min_rtt, sample) {
            (Some(m), Some(r)) => Some(m.min(r)),
            (m, r) => m.or(r),
        };
        let v = Validity { min_rtt };
        let mut blocks = [(0u64, 0u64); 3];
        for (i, b) in blocks.iter_mut().enumerate() {
            *b = h.sack_block(i).unwrap_or((0, 0));
        }
        rack.on_ack(now, h.ack, &blocks, &v);
    }

    /// §7.4.2: whether the probe's ACK shows that it repaired a loss (the window is reduced
    /// once, Linux's `tcp_process_tlp_ack`), or that it was not needed, ending the episode.
    fn tlp_on_ack(&mut self, h: &TcpHeader) {
        let Some(rack) = self.rack.as_mut() else { return };
        let Some(end) = rack.tlp_end_seq else { return };
        if h.ack < end {
            return;
        }
        if !rack.tlp_is_retrans {
            // a probe of new data was delivered
            rack.tlp_end_seq = None;
        } else if h.ack > end {
            // the ACK passes the probe with no duplicate seen: the probe repaired a loss
            rack.tlp_end_seq = None;
            self.stats.tlp_recoveries += 1;
            let flight = self.snd_max - self.snd_una;
            let info = AckInfo {
                ack: h.ack,
                bytes_acked: h.ack - self.snd_una,
                flight_before: flight,
                flight_after: self.snd_max - h.ack,
                snd_max: self.snd_max,
            };
            self.cc.on_loss_repaired(&info);
        } else if h.ack == self.snd_una && h.payload == 0 && (0..h.sack.len()).all(|i| h.sack_block(i).is_none()) {
            // case 2: a duplicate ACK without SACK, the original and the probe both arrived
            rack.tlp_end_seq = None;
        }
    }

    /// §6.2 step 5 and the reordering timer; a segment marked lost starts fast recovery
    /// (Linux's `tcp_time_to_recover`: "Has loss detection marked at least one packet lost?").
    /// Returns the segments it marked.
    fn rack_detect(&mut self, now: Instant) -> u32 {
        let Some(rack) = self.rack.as_mut() else { return 0 };
        let recovering = self.cc.in_recovery() || self.rto_recovery.is_some();
        let reo = rack.reo_wnd(&self.cfg, recovering, self.min_rtt, self.rtt.srtt());
        let (marked, timeout) = rack.detect_loss(now, reo);
        self.stats.rack_losses += u64::from(marked);
        match timeout {
            Some(t) => self.timers.set(SenderTimer::Reo, now + t + self.cfg.rack_reo_slack),
            None => self.timers.stop(SenderTimer::Reo),
        }
        if rack.segs_lost == 0 || self.cc.in_recovery() {
            return marked;
        }
        let flight = (self.snd_max - self.snd_una).saturating_sub(self.lt_bytes);
        let info = AckInfo {
            ack: self.snd_una,
            bytes_acked: 0,
            flight_before: flight,
            flight_after: flight,
            snd_max: self.snd_max,
        };
        if self.cc.on_sack_loss(&info).retransmit {
            self.stats.fast_retransmits += 1;
            self.pending_retx = Some(RetxKind::Fast);
            self.high_rxt = self.snd_una;
            // §7.1: fast recovery resets the TLP episode; §7.2: no probe in recovery
            rack.tlp_end_seq = None;
            rack.tlp_is_retrans = false;
            self.pending_tlp = false;
            self.timers.stop(SenderTimer::Tlp);
        }
        marked
    }

    /// §7.2's conditions for scheduling a probe: data in flight, not in fast or RTO
    /// recovery, nothing SACKed.
    fn tlp_allowed(&self) -> bool {
        self.cfg.tlp
            && self.outstanding()
            && !self.cc.in_recovery()
            && self.rto_recovery.is_none()
            && self.rack.as_ref().is_some_and(|r| r.segs_sacked == 0)
    }

    /// §7.2 `TLP_calc_PTO`, with Linux's allowances: 2·SRTT, plus TLP.max_ack_delay with one
    /// segment in flight or the timer slack with more; 1 s (the initial RTO) without an RTT
    /// sample; never after the RTO would expire. Disarms the PTO when no probe may be
    /// scheduled.
    fn schedule_tlp(&mut self, now: Instant) {
        if !self.tlp_allowed() {
            self.timers.stop(SenderTimer::Tlp);
            return;
        }
        let pto = match self.rtt.srtt() {
            Some(srtt) => {
                let one = self.snd_max - self.snd_una <= u64::from(self.cfg.mss_bytes);
                srtt * 2 + if one { self.cfg.tlp_max_ack_delay } else { self.cfg.tlp_slack }
            }
            None => self.cfg.initial_rto,
        };
        let rto_at = self.timers.get(SenderTimer::Rto).unwrap_or(now + self.rtt.rto());
        self.timers.set(SenderTimer::Tlp, (now + pto).min(rto_at));
    }

    /// §7.3 on the PTO's expiry: a probe is due if none is in flight and an RTT sample came
    /// since the last; either way the RTO is re-armed.
    fn on_tlp(&mut self, now: Instant) {
        if !self.outstanding() {
            return;
        }
        let Some(rack) = self.rack.as_ref() else { return };
        if rack.tlp_end_seq.is_none() && rack.rtt_since_probe {
            self.pending_tlp = true;
        }
        self.timers.set(SenderTimer::Rto, now + self.rtt.rto());
    }

    /// §7.3 `TLP_send_probe`: the next new segment if there is one and the receiver's window
    /// takes it, else the last segment sent again; whatever the congestion window.
    fn send_probe(&mut self) -> Option<Packet> {
        let limit = self.data_limit();
        let new_len = self.seg_len(self.snd_nxt).min(limit.saturating_sub(self.snd_nxt));
        let (seq, len, retrans) =
            if self.snd_nxt == self.snd_max && new_len > 0 && self.snd_max - self.snd_una + new_len <= self.snd_wnd {
                let seq = self.snd_nxt;
                self.snd_nxt += new_len;
                self.snd_max = self.snd_nxt;
                (seq, new_len, false)
            } else {
                let (seq, len) = self.rack.as_ref()?.last_segment()?;
                self.record_retx(seq, RetxKind::Probe);
                (seq, len, true)
            };
        self.stats.tlp_probes += 1;
        let p = self.emit_segment(seq, len, true);
        if let Some(rack) = self.rack.as_mut() {
            rack.tlp_end_seq = Some(self.snd_max);
            rack.tlp_is_retrans = retrans;
            rack.rtt_since_probe = false;
        }
        Some(p)
    }

    /// RACK's reordering timer expired (§6.2 step 5, `RACK_detect_loss_and_arm_timer`).
    fn on_reo(&mut self, now: Instant) {
        if self.outstanding() {
            // marks off an ACK belong to no rate sample (Linux's `tcp_rack_reo_timeout`)
            self.rack_detect(now);
        }
    }

    fn on_rto(&mut self, now: Instant) {
        if !self.outstanding() {
            return;
        }
        self.stats.timeouts += 1;
        if self.cfg.trace.on() {
            self.trace.timeout_time_ns.push(now.as_nanos());
            self.trace.timeout_rto_ns.push(self.rtt.rto().as_nanos());
        }
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
        // RFC 2018 §8: after a timeout the SACKed bits are turned off (the receiver may have
        // reneged); go-back-N skips what later ACKs SACK again.
        self.scoreboard.clear();
        self.high_rxt = self.snd_una;
        // the timeout marks everything outstanding lost (Linux's `tcp_timeout_mark_lost`),
        // outside any ACK: later ACKs count only marks above it
        self.lost_mark = self.snd_max;
        self.rto_recovery = Some(self.snd_max);
        if let Some(rack) = self.rack.as_mut() {
            // RFC 8985 §6.3 (the reordering window of RTO recovery) and §7.1
            let reo = rack.reo_wnd(&self.cfg, true, self.min_rtt, self.rtt.srtt());
            rack.on_rto(now, reo);
        }
        self.pending_tlp = false;
        self.timers.stop(SenderTimer::Tlp);
        self.timers.stop(SenderTimer::Reo);
        self.dupacks = 0;
        self.pending_retx = None;
        self.pending_lt = false;
        self.lt_bytes = 0;
    }
}

impl Agent for TcpSender {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        self.now = now;
        self.cc.on_start(now, info.rng);
        if self.cfg.stop <= now.max(self.cfg.start) {
            self.stopped = true;
        } else if self.cfg.stop != Instant::MAX {
            self.timers.set(SenderTimer::Stop, self.cfg.stop);
        }
        if self.cfg.start <= now {
            self.begin(now);
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
                SenderTimer::Start => self.begin(now),
                SenderTimer::Stop => self.stopped = true,
                SenderTimer::Rto => self.on_rto(now),
                SenderTimer::Tlp => self.on_tlp(now),
                SenderTimer::Reo => self.on_reo(now),
                // the pacing deadline: poll_transmit sends what waited for it
                SenderTimer::Pace => {}
            }
        }
        self.record_cc();
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        let Some(rate) = self.cc.pacing_rate().filter(|r| *r > 0.0 && r.is_finite()) else {
            return self.transmit();
        };
        if self.cfg.skb_pacing {
            return self.poll_skb_paced(rate);
        }
        // Pacing (as Linux's internal pacing, `tcp_update_skb_after_send`): a segment may
        // leave at `pace_next`, which each segment sent pushes on by its payload at the rate
        // (the controller's rate counts payload bytes, as its delivery-rate samples do).
        if self.held_by_pacing() {
            return None;
        }
        let p = self.transmit()?;
        let payload = p.size_bytes.saturating_sub(self.cfg.header_bytes).max(1);
        let gap = (payload as f64 / rate).min(Self::MAX_PACING_GAP_S);
        self.pace_next = self.pace_next.max(self.now) + Duration::from_secs_f64(gap);
        self.traced_tx(p)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }
}

/// An skb under [`TcpConfig::skb_pacing`]: see [`TcpSender::poll_skb_paced`].
#[derive(Clone, Copy, Debug, Default)]
struct Skb {
    left: u32,
    at: Instant,
    prior: Instant,
    payload: u64,
}

impl TcpSender {
    /// Linux's internal pacing per skb (`tcp_write_xmit`, `tcp_pacing_check`,
    /// `tcp_update_skb_after_send`): a new skb leaves at `pace_next` or later and takes up to
    /// `tso_segs` segments at that instant, and no more than half the window
    /// (`tcp_cwnd_test`, which keeps two skbs in flight), as many as the window allows; it
    /// then sets the next departure to its own departure plus its payload at the rate, less the
    /// smaller of half that and the time the sender was behind (`credit`). No delay until 10
    /// segments have been sent.
    fn poll_skb_paced(&mut self, rate: f64) -> Option<Packet> {
        let in_skb = self.skb.left > 0 && self.skb.at == self.now;
        if !in_skb && self.held_by_pacing() {
            return None;
        }
        let Some(mut p) = self.transmit() else {
            self.skb.left = 0;
            return None;
        };
        if !in_skb {
            let half_cwnd = (self.cc.cwnd() / u64::from(self.cfg.mss_bytes.max(1)) / 2).max(1);
            let left = u64::from(self.tso_segs(rate)).min(half_cwnd) as u32;
            self.skb = Skb { left, at: self.now, prior: self.pace_next, payload: 0 };
        }
        self.skb.left -= 1;
        if self.cfg.push && self.skb.left == 0 && !self.cc.in_recovery() {
            // the skb ends: the last new segment of it is pushed
            if let Header::Tcp(h) = p.header {
                let end = p.seq + u64::from(h.payload);
                if end == self.snd_max && end == self.snd_nxt {
                    Self::mark_push(&mut p);
                }
            }
        }
        self.skb.payload += u64::from(p.size_bytes.saturating_sub(self.cfg.header_bytes));
        let sent = self.skb.prior.max(self.now);
        self.pace_next = sent;
        if self.stats.segments_sent >= 10 {
            let len = (self.skb.payload as f64 / rate).min(Self::MAX_PACING_GAP_S);
            let credit = (sent - self.skb.prior).as_secs_f64();
            self.pace_next = sent + Duration::from_secs_f64(len - credit.min(len / 2.0));
        }
        self.traced_tx(p)
    }

    /// Whether the next departure is still to come; if so the pacing timer is set for it.
    fn held_by_pacing(&mut self) -> bool {
        if self.now >= self.pace_next {
            return false;
        }
        if self.started {
            self.timers.set(SenderTimer::Pace, self.pace_next);
        }
        true
    }

    /// `tcp_tso_segs` / `tcp_tso_autosize`: the segments an skb may hold at pacing rate `rate`
    /// (payload bytes/s), given the flow's min RTT (`tcp_min_rtt`).
    fn tso_segs(&self, rate: f64) -> u32 {
        let cfg = &self.cfg;
        let min_tso = self.cc.min_tso_segs().unwrap_or(cfg.min_tso_segs).max(1);
        let gso = f64::from(cfg.gso_max_bytes);
        let mut bytes = rate / f64::from(1u32 << cfg.pacing_shift);
        if let Some(m) = self.min_rtt {
            let r = (m.as_nanos() / 1000) >> cfg.tso_rtt_log;
            if r < 32 {
                bytes += gso / f64::from(1u32 << r);
            }
        }
        let segs = (bytes.min(gso) / f64::from(cfg.mss_bytes)) as u32;
        segs.max(min_tso)
    }

    /// A paced segment's trace row.
    fn traced_tx(&mut self, p: Packet) -> Option<Packet> {
        self.tx_total += p.size_bytes as u64;
        if self.cfg.trace.on() {
            self.trace.tx_time_ns.push(self.now.as_nanos());
            self.trace.tx_bytes.push(self.tx_total);
        }
        Some(p)
    }
}

impl TcpSender {
    /// The longest wait pacing puts between two segments, whatever the rate (a controller's
    /// rate near 0 would otherwise stall the flow for good; the RTO is the bound that matters).
    const MAX_PACING_GAP_S: f64 = 1.0;

    /// The next segment the window allows, without pacing.
    fn transmit(&mut self) -> Option<Packet> {
        if !self.started {
            return None;
        }
        if std::mem::take(&mut self.pending_tlp) && self.outstanding() {
            if let Some(p) = self.send_probe() {
                return Some(p);
            }
        }
        if self.sack && self.cc.in_recovery() {
            return self.sack_recovery_transmit();
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
            self.pending_lt = false;
            if self.snd_nxt == self.snd_max {
                // nothing left to send: the application limits the flow (rate estimation §3.4)
                let inflight = self.snd_max - self.snd_una;
                if let Some(rs) = self.rate.as_mut() {
                    rs.mark_app_limited(inflight);
                }
            }
            return None;
        }
        if std::mem::take(&mut self.pending_lt) && self.snd_nxt == self.snd_max {
            // RFC 3042 §2: one segment of previously unsent data, if the receiver's window
            // allows it and FlightSize stays within cwnd + 2·SMSS; cwnd is unchanged. Only a
            // segment the window would not let out counts as Limited Transmit (one it allows
            // goes below, as usual). After a timeout, while go-back-N resends old data,
            // snd_nxt < snd_max: nothing is sent.
            let len = self.seg_len(self.snd_nxt).min(limit - self.snd_nxt);
            let after = self.snd_max - self.snd_una + len;
            let cwnd = self.cc.cwnd();
            if after > cwnd && after <= cwnd + 2 * self.cfg.mss_bytes as u64 && after <= self.snd_wnd {
                let seq = self.snd_nxt;
                self.snd_nxt += len;
                self.snd_max = self.snd_nxt;
                self.lt_bytes += len;
                return Some(self.emit(seq, len));
            }
        }
        if self.sack {
            // go-back-N after a timeout: segments SACKed since are not sent again
            while self.snd_nxt < self.snd_max {
                let len = self.seg_len(self.snd_nxt).min(self.snd_max - self.snd_nxt);
                if len == 0 || !self.is_sacked(self.snd_nxt, len) {
                    break;
                }
                self.snd_nxt += len;
            }
            if self.snd_nxt >= limit {
                return None;
            }
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
        let mut p = self.emit(seq, len);
        let next = self.seg_len(self.snd_nxt).min(limit.saturating_sub(self.snd_nxt));
        if self.cfg.push && seq + len == self.snd_max && (next == 0 || self.snd_nxt - self.snd_una + next > wnd) {
            Self::mark_push(&mut p); // the window is full: the burst ends here
        }
        Some(p)
    }

    /// Set PSH ([`TcpConfig::push`]).
    fn mark_push(p: &mut Packet) {
        if let Header::Tcp(h) = &mut p.header {
            h.flags |= TcpHeader::PSH;
        }
    }

    /// RFC 6675 `IsLost(HighACK + 1)`: the first unacknowledged segment is lost by the
    /// scoreboard.
    fn first_is_lost(&self) -> bool {
        let len = self.seg_len(self.snd_una).min(self.snd_max - self.snd_una);
        len > 0 && !self.scoreboard.is_empty() && self.is_lost(self.snd_una, len)
    }

    /// Build a segment and do the per-send bookkeeping.
    fn emit(&mut self, seq: u64, len: u64) -> Packet {
        self.emit_segment(seq, len, false)
    }

    /// [`Self::emit`]; `probe`: a tail loss probe, which schedules no further probe.
    fn emit_segment(&mut self, seq: u64, len: u64, probe: bool) -> Packet {
        if let Some(rs) = self.rate.as_mut() {
            // nothing else in flight: this segment starts a new delivery interval
            let idle = seq == self.snd_una && self.snd_max <= seq + len;
            rs.on_send(self.now, seq, len, idle);
        }
        self.stats.segments_sent += 1;
        self.stats.payload_bytes_sent += len;
        // RFC 6298 §5.1: start the timer, if it is not running, when data is sent.
        if !self.timers.is_armed(SenderTimer::Rto) {
            self.timers.set(SenderTimer::Rto, self.now + self.rtt.rto());
        }
        if let Some(rack) = self.rack.as_mut() {
            let new_data = seq >= rack.end();
            rack.on_send(self.now, seq, len);
            if new_data && !probe {
                // RFC 8985 §7.2: new data (not itself a probe) (re)starts the PTO
                self.schedule_tlp(self.now);
            }
        }
        self.segment(seq, len)
    }
}
