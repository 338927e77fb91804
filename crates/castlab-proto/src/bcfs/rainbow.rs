//! Rainbow receivers (Yano & McCanne §III-B, §III-C): TCP-like window control at each receiver
//! over BCFS, the source being a digital fountain ([`crate::bcfs::fountain::FountainSource`]).
//!
//! The window is a set of labels 1..W. A transmission request (TRQ) is a BCF request on one
//! label, at level 1 except after a loss (§III-C); each reply carries a fresh symbol and tears
//! down the label's breadcrumbs, and its arrival sends the next TRQ on that label (the "ack
//! clock"), so the TRQs outstanding never exceed W (§III-B).
//!
//! - Slow start: every answered TRQ grows W by one: the reply's label is re-requested and the
//!   new label W is opened (two TRQs per reply, §III-C).
//! - Congestion avoidance: W grows by one once every label held has been answered, counted as
//!   W answered TRQs since the last increase (§III-C).
//! - Loss detection: a TRQ whose timer (TCP-style RTO from the RTT estimate, §III-C) expires,
//!   or an earlier TRQ still unanswered when a later one is answered (§III-C).
//! - On loss: W is halved (labels 1..W/2 remain) and TRQs are held until the outstanding
//!   estimate W_old - L - R drops below the new W (L: TRQs found lost, R: replies received since
//!   the loss was detected), or RTT/2 has passed; then the receiver is in congestion avoidance
//!   and requests the idle labels of the window as the window allows: TRQs still out on labels
//!   above the halved W count toward it until answered or found lost, so at most W TRQs are
//!   ever out after a send (§III-B's invariant). Losses of TRQs sent before the halving belong to
//!   the same event (as TCP fast recovery): they count in L, they do not halve again.
//! - A label whose TRQ was lost may still hold breadcrumbs in the routers, which would suppress
//!   a new level-1 request: its next TRQ goes one level higher (level 2, 3 after consecutive
//!   losses); the source echoes the level, so one reply clears the stale state; once a reply at
//!   the TRQ's level arrives, the label returns to level 1 (§III-C).

use std::collections::VecDeque;

use castlab_core::{Addr, Agent, ConfigError, Duration, Instant, Packet, StartInfo};

use crate::bcfs::fountain::{FountainMode, FountainSink};
use crate::bcfs::BcfHost;

/// Rainbow receiver settings (§III-C). The paper gives the rules, not constants: every value
/// here is our choice, stated per field.
#[derive(Clone, Debug, PartialEq)]
pub struct RainbowConfig {
    /// Wire size of a TRQ, bytes. Paper silent: 40 (a TCP ACK's size).
    pub request_bytes: u32,
    /// Window at start: "At this point the receiver's window size is one" (§III-C).
    pub initial_window: u32,
    /// Slow-start threshold at start: unbounded, slow start runs to the first loss as in TCP.
    pub initial_ssthresh: u32,
    /// Bound on the window (labels in use). Paper silent: 1024.
    pub max_window: u32,
    /// TRQ timer before any RTT sample. Paper silent: 1 s (RFC 6298's initial RTO).
    pub initial_rto: Duration,
    /// Floor of the TRQ timer. Paper silent: 0.2 s (ns-2's TCP `minrto_` era default).
    pub min_rto: Duration,
    /// Ceiling of the TRQ timer after back-off. Paper silent: 10 s.
    pub max_rto: Duration,
    /// The hold after a loss ends at most this fraction of the RTT estimate after detection:
    /// "TRQ also resumes when RTT/2 has passed after loss detection" (§III-C): 0.5.
    pub hold_rtt_fraction: f64,
    /// An outstanding TRQ is lost once this many TRQs sent after it have been answered. §III-C
    /// states the rule ("a later TRQ is replied before an earlier TRQ") without a count; read
    /// literally it is 1. TRQs aggregated at a router are answered early, so replies come out
    /// of order without any loss (the paper's own §IV-B.4 remark); with 1, the fast receivers
    /// of scenario A-(i) measured ~196 kb/s against the paper's 330 (see `rainbow-a1`, which
    /// runs both). Default: 3, TCP's duplicate-ACK threshold, as "the window control algorithm
    /// mirrors that in TCP" (§III-C).
    pub reorder_threshold: u32,
    /// A loss of a TRQ sent before the last halving belongs to the same loss event and does not
    /// halve again, as TCP's fast recovery treats losses within one window (RFC 6582 §3.2): the
    /// paper is silent ("the window size is halved", §III-C). `false` halves at every declared
    /// loss: an ablation of this reading.
    pub halve_once_per_window: bool,
}

impl Default for RainbowConfig {
    fn default() -> Self {
        RainbowConfig {
            request_bytes: 40,
            initial_window: 1,
            initial_ssthresh: u32::MAX,
            max_window: 1024,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(10),
            hold_rtt_fraction: 0.5,
            reorder_threshold: 3,
            halve_once_per_window: true,
        }
    }
}

impl RainbowConfig {
    /// Check every field; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        use castlab_core::config::check::{in_closed, int_in, nonzero};
        int_in("request_bytes", self.request_bytes.into(), 1, 65_507)?;
        int_in("max_window", self.max_window.into(), 1, 1 << 20)?;
        int_in("initial_window", self.initial_window.into(), 1, self.max_window.into())?;
        int_in("initial_ssthresh", self.initial_ssthresh.into(), 1, u32::MAX.into())?;
        nonzero("initial_rto", self.initial_rto)?;
        nonzero("min_rto", self.min_rto)?;
        if self.max_rto < self.min_rto {
            return Err(ConfigError::new("max_rto", self.max_rto.as_secs_f64(), "must be >= min_rto"));
        }
        in_closed("hold_rtt_fraction", self.hold_rtt_fraction, 0.0, 10.0)?;
        int_in("reorder_threshold", self.reorder_threshold.into(), 1, 1 << 16)?;
        Ok(())
    }
}

castlab_core::records_table!(RainbowRecords {
    columns: [rx_time_ns, rx_symbol, win_time_ns, win],
    scalars: [
        trqs_sent = |r| r.trqs_sent,
        trqs_raised = |r| r.trqs_raised,
        losses_timeout = |r| r.losses_timeout,
        losses_order = |r| r.losses_order,
        loss_events = |r| r.loss_events,
        unmatched_replies = |r| r.unmatched_replies,
        after_done = |r| r.after_done,
    ],
});

castlab_core::config_fields!(RainbowConfig {
    request_bytes,
    initial_window,
    initial_ssthresh,
    max_window,
    initial_rto,
    min_rto,
    max_rto,
    hold_rtt_fraction,
    reorder_threshold,
    halve_once_per_window,
});

#[derive(Clone, Copy, Debug, Default)]
struct Label {
    outstanding: bool,
    /// Send order of the last TRQ on this label.
    seq: u64,
    sent_at: Instant,
    /// Level of the last TRQ sent on this label.
    level: u32,
    /// Level the next TRQ on this label uses.
    next_level: u32,
    /// TRQs sent after this one that were answered while it waits.
    overtaken: u32,
}

#[derive(Clone, Copy, Debug)]
struct Hold {
    until: Instant,
    w_orig: u32,
    lost: u32,
    recv: u32,
}

/// What a receiver records (per-receiver results of §IV).
#[derive(Clone, Debug, Default)]
pub struct RainbowRecords {
    /// Arrival time and symbol id of every symbol received until completion.
    pub rx_time_ns: Vec<u64>,
    pub rx_symbol: Vec<u32>,
    /// The window after every change.
    pub win_time_ns: Vec<u64>,
    pub win: Vec<u32>,
    pub trqs_sent: u64,
    /// TRQs sent above level 1.
    pub trqs_raised: u64,
    pub losses_timeout: u64,
    pub losses_order: u64,
    /// Window halvings.
    pub loss_events: u64,
    /// Replies that answered no outstanding TRQ (late ones for labels given up as lost, or
    /// beyond the window after a halving): their symbols still count.
    pub unmatched_replies: u64,
    /// Replies arriving after completion (not counted as received).
    pub after_done: u64,
    /// When the receiver was told to stop ([`Agent::handle_shutdown`]), if it was.
    pub stopped_at: Option<Instant>,
    pub started_at: Option<Instant>,
    pub done_at: Option<Instant>,
}

/// A Rainbow receiver (§III-C).
#[derive(Debug)]
pub struct RainbowReceiver {
    pub cfg: RainbowConfig,
    pub host: BcfHost,
    pub source: Addr,
    pub sink: FountainSink,
    labels: Vec<Label>,
    w: u32,
    ssthresh: u32,
    ca_count: u32,
    send_seq: u64,
    recover_seq: u64,
    srtt_ns: Option<f64>,
    rttvar_ns: f64,
    backoff: u32,
    hold: Option<Hold>,
    pending: VecDeque<Packet>,
    /// The instant of the last `handle_*` call: a TRQ deadline computed with a smaller RTO
    /// (after a new RTT sample) can lie before it, and the agent contract never asks for a
    /// wake-up in the past.
    now: Instant,
    pub rec: RainbowRecords,
}

impl RainbowReceiver {
    pub fn new(cfg: RainbowConfig, source: Addr, flow: u32, mode: FountainMode) -> Self {
        let mut host = BcfHost::new(flow, cfg.request_bytes, 0);
        host.bind(0, 0);
        let sink = FountainSink::new(mode);
        let need = sink.needed() as usize + 64;
        let cap = (cfg.max_window as usize).min(256);
        RainbowReceiver {
            host,
            source,
            sink,
            labels: Vec::with_capacity(cap),
            w: cfg.initial_window.max(1),
            ssthresh: cfg.initial_ssthresh,
            ca_count: 0,
            send_seq: 0,
            recover_seq: 0,
            srtt_ns: None,
            rttvar_ns: 0.0,
            backoff: 0,
            hold: None,
            pending: VecDeque::with_capacity(cap),
            now: Instant::ZERO,
            rec: RainbowRecords {
                rx_time_ns: Vec::with_capacity(need),
                rx_symbol: Vec::with_capacity(need),
                win_time_ns: Vec::with_capacity(need),
                win: Vec::with_capacity(need),
                ..Default::default()
            },
            cfg,
        }
    }

    pub fn window(&self) -> u32 {
        self.w
    }
    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    pub fn in_hold(&self) -> bool {
        self.hold.is_some()
    }
    pub fn done(&self) -> bool {
        self.rec.done_at.is_some()
    }
    /// Told to stop ([`Agent::handle_shutdown`]).
    pub fn stopped(&self) -> bool {
        self.rec.stopped_at.is_some()
    }
    /// Labels with a TRQ outstanding.
    pub fn outstanding(&self) -> u32 {
        self.labels.iter().filter(|l| l.outstanding).count() as u32
    }
    /// Whether `label` has a TRQ outstanding, and at which level.
    pub fn label_state(&self, label: u32) -> Option<(bool, u32)> {
        let l = self.labels.get(label.checked_sub(1)? as usize)?;
        Some((l.outstanding, l.level))
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt_ns.map(|s| Duration::from_nanos(s as u64))
    }

    /// The TRQ timer (RFC 6298 shape: srtt + 4 rttvar, floored, doubled per back-off).
    pub fn rto(&self) -> Duration {
        let base = match self.srtt_ns {
            None => self.cfg.initial_rto,
            Some(s) => Duration::from_nanos((s + 4.0 * self.rttvar_ns) as u64).max(self.cfg.min_rto),
        };
        let b = base.as_nanos().saturating_mul(1u64 << self.backoff.min(20));
        Duration::from_nanos(b).min(self.cfg.max_rto)
    }

    fn record_window(&mut self, now: Instant) {
        self.rec.win_time_ns.push(now.as_nanos());
        self.rec.win.push(self.w);
    }

    fn ensure_label(&mut self, l: u32) {
        while self.labels.len() < l as usize {
            self.labels.push(Label { next_level: 1, ..Default::default() });
        }
    }

    fn send(&mut self, now: Instant, l: u32) {
        self.ensure_label(l);
        self.send_seq += 1;
        let lab = &mut self.labels[l as usize - 1];
        let level = lab.next_level.max(1);
        lab.outstanding = true;
        lab.level = level;
        lab.seq = self.send_seq;
        lab.sent_at = now;
        lab.overtaken = 0;
        self.rec.trqs_sent += 1;
        self.rec.trqs_raised += (level > 1) as u64;
        self.pending.push_back(self.host.request(self.source, l, level, None));
    }

    /// Request idle labels of the window, lowest first, while fewer TRQs than W are out: "the
    /// number of breadcrumbs outstanding is less than or equal to the congestion window" (§III-B).
    /// TRQs still out on labels above W (sent before a halving) count until they are answered
    /// or found lost; each of those answers frees a slot for an idle label of the window.
    fn fill(&mut self, now: Instant) {
        if self.hold.is_some() || self.done() || self.stopped() {
            return;
        }
        let mut out = self.outstanding();
        let mut l = 1;
        while out < self.w && l <= self.w {
            self.ensure_label(l);
            if !self.labels[l as usize - 1].outstanding {
                self.send(now, l);
                out += 1;
            }
            l += 1;
        }
    }

    fn rtt_sample(&mut self, sample_ns: f64) {
        match self.srtt_ns {
            None => {
                self.srtt_ns = Some(sample_ns);
                self.rttvar_ns = sample_ns / 2.0;
            }
            Some(s) => {
                self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (s - sample_ns).abs();
                self.srtt_ns = Some(0.875 * s + 0.125 * sample_ns);
            }
        }
    }

    fn declare_lost(&mut self, now: Instant, l: u32) {
        let lab = &mut self.labels[l as usize - 1];
        lab.outstanding = false;
        // breadcrumbs may remain at this level: go one higher next time (§III-C)
        lab.next_level = lab.level + 1;
        let seq = lab.seq;
        if seq > self.recover_seq || !self.cfg.halve_once_per_window {
            // a new loss event: halve, hold (§III-C)
            let w_orig = self.w;
            self.w = (self.w / 2).max(1);
            self.ssthresh = self.w;
            self.ca_count = 0;
            self.recover_seq = self.send_seq;
            let rtt = self.srtt_ns.map_or(self.cfg.initial_rto.as_nanos() as f64, |s| s);
            let until = now + Duration::from_nanos((rtt * self.cfg.hold_rtt_fraction) as u64);
            self.hold = Some(Hold { until, w_orig, lost: 1, recv: 0 });
            self.rec.loss_events += 1;
            self.record_window(now);
        } else if let Some(h) = self.hold.as_mut() {
            h.lost += 1;
        }
        // same event with the hold already over: the slot is free, and `fill` re-requests the
        // label (one level up) once it is the lowest idle label of the window
    }

    /// End the hold when the outstanding estimate W - L - R is below the new window, or RTT/2
    /// has passed; then request idle labels of the window as the window allows (`fill`).
    fn check_hold(&mut self, now: Instant) {
        if let Some(h) = self.hold {
            let estimate = h.w_orig as i64 - h.lost as i64 - h.recv as i64;
            if estimate < self.w as i64 || now >= h.until {
                self.hold = None;
            }
        }
        self.fill(now);
    }

    fn finish(&mut self, now: Instant) {
        self.rec.done_at = Some(now);
        self.hold = None;
        for l in &mut self.labels {
            l.outstanding = false;
        }
    }
}

impl Agent for RainbowReceiver {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        self.now = now;
        self.host.set_addr(info.addr);
        self.rec.started_at = Some(now);
        self.record_window(now);
        for l in 1..=self.w {
            self.send(now, l);
        }
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        self.now = now;
        if self.stopped() {
            return;
        }
        let Some(m) = self.host.receive(p) else { return };
        if !m.is_reply() || m.from != self.source {
            return;
        }
        if self.done() {
            self.rec.after_done += 1;
            return;
        }
        let sym = m.msg as u32;
        self.rec.rx_time_ns.push(now.as_nanos());
        self.rec.rx_symbol.push(sym);
        self.sink.add_packet(sym, Some(p.uid));
        let l = m.label;
        let mut answered: Option<u64> = None;
        if l >= 1 && (l as usize) <= self.labels.len() {
            let lab = &mut self.labels[l as usize - 1];
            if m.level >= lab.level {
                // the breadcrumbs of the label's last TRQ are torn down: back to level 1
                lab.next_level = 1;
                if lab.outstanding {
                    lab.outstanding = false;
                    answered = Some(lab.seq);
                    let sample = now.saturating_since(lab.sent_at).as_nanos() as f64;
                    self.rtt_sample(sample);
                    self.backoff = 0;
                }
            }
        }
        if self.sink.try_complete() {
            self.finish(now);
            return;
        }
        if let Some(h) = self.hold.as_mut() {
            h.recv += 1;
        }
        let Some(seq) = answered else {
            self.rec.unmatched_replies += 1;
            self.check_hold(now);
            return;
        };
        // a later TRQ answered while an earlier one waits: the earlier is lost (§III-C)
        for i in 0..self.labels.len() {
            let lab = &mut self.labels[i];
            if lab.outstanding && lab.seq < seq {
                lab.overtaken += 1;
                if lab.overtaken >= self.cfg.reorder_threshold {
                    self.rec.losses_order += 1;
                    self.declare_lost(now, i as u32 + 1);
                }
            }
        }
        if self.hold.is_none() {
            // the answered label is idle again: `fill` below re-requests it (it is the only idle
            // label of the window, or the lowest) and, if W grew, the new label W
            if self.w < self.ssthresh {
                // slow start: W + 1 per reply (two TRQs: this label and the new label W)
                if self.w < self.cfg.max_window {
                    self.w += 1;
                    self.record_window(now);
                }
            } else if l <= self.w {
                // congestion avoidance: +1 once every label has been answered
                self.ca_count += 1;
                if self.ca_count >= self.w && self.w < self.cfg.max_window {
                    self.ca_count = 0;
                    self.w += 1;
                    self.record_window(now);
                }
            }
        }
        self.check_hold(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        if self.done() || self.stopped() {
            return;
        }
        let rto = self.rto();
        let mut fired = false;
        for i in 0..self.labels.len() {
            let lab = self.labels[i];
            if lab.outstanding && lab.sent_at + rto <= now {
                fired = true;
                self.rec.losses_timeout += 1;
                self.declare_lost(now, i as u32 + 1);
            }
        }
        if fired {
            self.backoff += 1;
        }
        self.check_hold(now);
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        self.pending.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.done() || self.stopped() {
            return None;
        }
        let rto = self.rto();
        let trq = self.labels.iter().filter(|l| l.outstanding).map(|l| l.sent_at + rto).min();
        let next = match (trq, self.hold.map(|h| h.until)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // an overdue TRQ is due now (its expiry check in handle_timeout compares with `now`)
        next.map(|t| t.max(self.now))
    }

    /// The real network: a reply's symbol bytes (the fountain's wire mode).
    fn handle_payload(&mut self, p: &Packet, bytes: &[u8]) {
        if !self.stopped() {
            self.sink.offer(p.uid, bytes);
        }
    }

    /// Told to stop: the receiver sends no more TRQs (a TRQ queued and not yet sent is
    /// dropped), its TRQ and hold timers are disarmed, and replies arriving later are neither
    /// counted nor answered: the ack clock stops (§III-B). It holds no group: TRQs are
    /// unicast toward the source and replies come back on breadcrumbs. BCFS has no message by
    /// which a receiver removes its breadcrumbs (§II-B: a reply tears them down, soft-state
    /// ageing removes the rest), so each TRQ still outstanding (at most W) draws one reply
    /// that the host then drops.
    fn handle_shutdown(&mut self, now: Instant) {
        if self.stopped() {
            return;
        }
        self.now = now;
        self.rec.stopped_at = Some(now);
        self.pending.clear();
        self.hold = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Driver;
    use castlab_core::{BcfHeader, Dest, Header, NodeId, Rng};

    type Rx = Driver<RainbowReceiver>;

    const SRC: Addr = Addr::new(NodeId(0), 1);

    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }

    fn reply(label: u32, level: u32, sym: u64) -> Packet {
        let mut p = Packet::data(Dest::Unicast(SRC), 512);
        p.src = SRC;
        p.header = Header::Bcf(BcfHeader { kind: BcfHeader::REPLY, flags: 0, level, label, msg: sym });
        p
    }

    /// (label, level) of every TRQ sent since the last call.
    fn sent(r: &mut Rx) -> Vec<(u32, u32)> {
        std::mem::take(&mut r.sent)
            .into_iter()
            .map(|(_, p)| match p.header {
                Header::Bcf(h) => {
                    assert_eq!(h.kind, BcfHeader::REQUEST);
                    assert_eq!(p.dst, Dest::Unicast(SRC));
                    (h.label, h.level)
                }
                _ => panic!("not a request"),
            })
            .collect()
    }

    /// `r` started at 0 on the harness, with the random stream these tests always used.
    fn start(r: RainbowReceiver, seed: u64) -> Rx {
        Driver::start_with(r, ms(0), StartInfo { addr: Addr::new(NodeId(5), 1000), rng: Rng::seed_from_u64(seed) })
    }

    /// A receiver with the paper's literal out-of-order rule (one later answer = loss).
    fn receiver() -> Rx {
        let cfg = RainbowConfig { reorder_threshold: 1, ..Default::default() };
        start(RainbowReceiver::new(cfg, SRC, 1, FountainMode::Symbolic { needed: 1000 }), 1)
    }

    #[test]
    fn told_to_stop_the_receiver_sends_no_more_trqs_and_stops_its_timers() {
        let mut r = receiver();
        assert_eq!(sent(&mut r), vec![(1, 1)]);
        r.packet(ms(100), &reply(1, 1, 1));
        assert_eq!(sent(&mut r), vec![(1, 1), (2, 1)]);
        assert_eq!(r.agent.outstanding(), 2);
        assert!(r.agent.poll_timeout().is_some());
        r.shutdown(ms(150));
        assert!(r.agent.stopped() && r.agent.rec.stopped_at == Some(ms(150)));
        assert_eq!(r.agent.poll_timeout(), None);
        // the replies to the two TRQs still out arrive: no TRQ follows (the ack clock has
        // stopped), nothing is counted, the window stays
        let (trqs, got, w) = (r.agent.rec.trqs_sent, r.agent.rec.rx_symbol.len(), r.agent.window());
        r.packet(ms(200), &reply(1, 1, 2));
        r.packet(ms(201), &reply(2, 1, 3));
        r.advance_to(ms(60_000));
        assert_eq!(sent(&mut r), vec![]);
        assert_eq!((r.agent.rec.trqs_sent, r.agent.rec.rx_symbol.len(), r.agent.window()), (trqs, got, w));
        assert_eq!(r.agent.rec.losses_timeout, 0);
        assert!(r.events.is_empty(), "it holds no group: {:?}", r.events);
        r.shutdown(ms(60_001));
        assert_eq!(r.agent.rec.stopped_at, Some(ms(150)));
    }

    #[test]
    fn window_dynamics_against_a_hand_trace() {
        let mut r = receiver();
        let mut sym = 0;
        let mut rx = |r: &mut Rx, t: u64, label: u32, level: u32| {
            sym += 1;
            r.packet(ms(t), &reply(label, level, sym));
            sent(r)
        };
        // start: W = 1, one TRQ on label 1 at level 1
        assert_eq!(sent(&mut r), vec![(1, 1)]);
        assert_eq!(r.agent.window(), 1);
        // slow start: each reply re-requests its label and opens label W
        assert_eq!(rx(&mut r, 100, 1, 1), vec![(1, 1), (2, 1)]);
        assert_eq!(r.agent.window(), 2);
        assert_eq!(rx(&mut r, 200, 1, 1), vec![(1, 1), (3, 1)]);
        assert_eq!(rx(&mut r, 201, 2, 1), vec![(2, 1), (4, 1)]);
        assert_eq!(r.agent.window(), 4);
        // RTT estimate 100 ms: first sample 100, then 100, 101 ms
        assert!((r.agent.srtt().unwrap().as_secs_f64() - 0.100).abs() < 0.001);
        // TRQs now out, in send order: 1, 3, 2, 4. Label 3's answer arrives before label 1's:
        // label 1 is lost. W: 4 -> 2 and the hold starts: W_old 4, L 1, R 0, 4-1-0 = 3, not < 2
        assert_eq!(rx(&mut r, 300, 3, 1), vec![]);
        assert_eq!(r.agent.window(), 2);
        assert_eq!(r.agent.ssthresh(), 2);
        assert!(r.agent.in_hold());
        assert_eq!(r.agent.rec.losses_order, 1);
        assert_eq!(r.agent.rec.loss_events, 1);
        // label 2 answered: R = 1, 4-1-1 = 2 is still not < 2: TRQs stay held
        assert_eq!(rx(&mut r, 301, 2, 1), vec![]);
        assert!(r.agent.in_hold());
        // label 4 (beyond the new W) answered: R = 2, 4-1-2 = 1 < 2: the hold ends and the idle
        // labels of the new window are requested, label 1 one level up (stale breadcrumbs);
        // label 4 itself is not re-requested
        assert_eq!(rx(&mut r, 302, 4, 1), vec![(1, 2), (2, 1)]);
        assert!(!r.agent.in_hold());
        assert_eq!(r.agent.label_state(1), Some((true, 2)));
        assert_eq!(r.agent.window(), 2);
        // congestion avoidance: W = 2 answers raise W by one; label 1's level-2 reply echoes
        // the level and returns the label to level 1
        assert_eq!(rx(&mut r, 400, 1, 2), vec![(1, 1)]);
        assert_eq!(r.agent.window(), 2);
        assert_eq!(rx(&mut r, 401, 2, 1), vec![(2, 1), (3, 1)]);
        assert_eq!(r.agent.window(), 3);
        assert_eq!(rx(&mut r, 500, 1, 1), vec![(1, 1)]);
        assert_eq!(rx(&mut r, 501, 2, 1), vec![(2, 1)]);
        assert_eq!(rx(&mut r, 502, 3, 1), vec![(3, 1), (4, 1)]);
        assert_eq!(r.agent.window(), 4);
        assert_eq!(r.agent.rec.win, vec![1, 2, 3, 4, 2, 3, 4]);
    }

    #[test]
    fn reorder_threshold_counts_later_answers() {
        let cfg = RainbowConfig { reorder_threshold: 3, ..Default::default() };
        let mut r = start(RainbowReceiver::new(cfg, SRC, 1, FountainMode::Symbolic { needed: 1000 }), 1);
        let mut sym = 0;
        for (t, l) in [(100, 1), (200, 1), (201, 2), (300, 1), (301, 3), (302, 2)] {
            sym += 1;
            r.packet(ms(t), &reply(l, 1, sym));
        }
        sent(&mut r);
        // W = 7; out, in send order: 4, 1, 5, 3, 6, 2, 7. Label 4 waits while TRQs sent after
        // it are answered (1, then 5, then 3): two later answers are not enough, the third is.
        // They come before label 4's timer can expire (sent at 201 ms, RTO at least 200 ms), so
        // the reorder rule alone decides
        assert_eq!(r.agent.window(), 7);
        for (i, l) in [1u32, 5, 3].iter().enumerate() {
            assert_eq!(r.agent.rec.loss_events, 0, "after {i} later answers");
            sym += 1;
            r.packet(ms(350 + i as u64), &reply(*l, 1, sym));
        }
        assert_eq!(r.agent.rec.losses_order, 1);
        assert_eq!(r.agent.rec.loss_events, 1);
        assert_eq!(r.agent.label_state(4), Some((false, 1)));
    }

    #[test]
    fn losses_of_trqs_sent_before_a_halving_halve_again_only_in_the_ablation() {
        // (halve once per window, window after, loss events)
        for (once, w_after, events) in [(true, 2, 1), (false, 1, 3)] {
            let cfg = RainbowConfig { reorder_threshold: 1, halve_once_per_window: once, ..Default::default() };
            let mut r = start(RainbowReceiver::new(cfg, SRC, 1, FountainMode::Symbolic { needed: 1000 }), 1);
            let mut sym = 0;
            for (t, l) in [(100, 1), (200, 1), (201, 2)] {
                sym += 1;
                r.packet(ms(t), &reply(l, 1, sym));
            }
            sent(&mut r);
            // W = 4, out in send order 1, 3, 2, 4 (as in the hand trace): label 4's answer comes
            // first and overtakes the three others, each lost under the literal rule
            assert_eq!(r.agent.window(), 4);
            sym += 1;
            r.packet(ms(300), &reply(4, 1, sym));
            assert_eq!(r.agent.rec.losses_order, 3, "once = {once}");
            assert_eq!(r.agent.rec.loss_events, events, "once = {once}");
            assert_eq!(r.agent.window(), w_after, "once = {once}");
        }
    }

    #[test]
    fn timer_loss_and_the_rtt_half_hold() {
        let mut r = receiver();
        sent(&mut r);
        for (t, l) in [(100, 1), (200, 1), (201, 2)] {
            r.packet(ms(t), &reply(l, 1, t));
        }
        sent(&mut r);
        // W = 4 with TRQs 1, 3, 2, 4 out; none is answered. The earliest TRQ timer fires at
        // sent + RTO (RTO = srtt + 4 rttvar, floored at 200 ms)
        let deadline = r.agent.poll_timeout().unwrap();
        assert_eq!(deadline, ms(200) + r.agent.rto());
        r.advance_to(deadline);
        // labels 1 and 3 were sent at 200 ms: both lost, one event: W 4 -> 2, L = 2;
        // estimate 4 - 2 - 0 = 2 is not < 2, so the hold lasts until RTT/2
        assert_eq!(r.agent.window(), 2);
        assert_eq!(r.agent.rec.loss_events, 1);
        assert_eq!(r.agent.rec.losses_timeout, 2);
        assert!(r.agent.in_hold());
        assert_eq!(sent(&mut r), vec![]);
        let srtt = r.agent.srtt().unwrap();
        let until = deadline + Duration::from_nanos(srtt.as_nanos() / 2);
        assert_eq!(r.agent.poll_timeout(), Some(until));
        r.advance_to(until);
        assert!(!r.agent.in_hold());
        // labels 2 and 4 are still out (their timers have not fired): two TRQs fill the halved
        // window, so nothing more is sent (§III-B: outstanding <= W)
        assert_eq!(r.agent.outstanding(), 2);
        assert_eq!(sent(&mut r), vec![]);
        // label 2's answer frees a slot: the lowest idle label, 1, goes one level up; label 2
        // stays idle, since label 4 (beyond W) still counts
        r.packet(until + Duration::from_millis(1), &reply(2, 1, 999));
        assert_eq!(sent(&mut r), vec![(1, 2)]);
        assert_eq!(r.agent.outstanding(), 2);
        // label 4's answer frees the next: label 2
        r.packet(until + Duration::from_millis(2), &reply(4, 1, 1000));
        assert_eq!(sent(&mut r), vec![(2, 1)]);
    }

    /// §III-B: "the number of breadcrumbs outstanding is less than or equal to the congestion
    /// window". Drive a receiver through random answer orders, lost replies and timer expiries
    /// (the paths into and out of the hold after a halving) and check that whenever it sends a
    /// TRQ, at most W TRQs are out afterwards.
    #[test]
    fn never_more_trqs_out_than_the_window() {
        let mut rng = Rng::seed_from_u64(7);
        let mut checked = 0;
        for run in 0..40u64 {
            let cfg = RainbowConfig { reorder_threshold: 1 + (run % 4) as u32, ..Default::default() };
            let mut r = start(RainbowReceiver::new(cfg, SRC, 1, FountainMode::Symbolic { needed: 100_000 }), run);
            // in flight: (arrival time, label, level); a TRQ's reply arrives 80-150 ms later, or never
            let mut flight: Vec<(Instant, u32, u32)> = Vec::new();
            let mut sym = 0u64;
            let take = |r: &mut Rx, flight: &mut Vec<(Instant, u32, u32)>, rng: &mut Rng| {
                let s = sent(r);
                for &(l, lev) in &s {
                    if !rng.bernoulli(0.03) {
                        let delay = 80 + rng.next_u64() % (10 + 20 * (run % 4));
                        flight.push((r.now + Duration::from_millis(delay), l, lev));
                    }
                }
                s.len()
            };
            take(&mut r, &mut flight, &mut rng);
            for _ in 0..3000 {
                flight.sort();
                let next_rx = flight.first().map(|f| f.0);
                match (next_rx, r.agent.poll_timeout()) {
                    (Some(a), Some(b)) if b < a => r.advance_to(b),
                    (None, Some(b)) => r.advance_to(b),
                    (Some(_), _) => {
                        let (t, l, lev) = flight.remove(0);
                        sym += 1;
                        r.packet(t, &reply(l, lev, sym));
                    }
                    (None, None) => break,
                }
                if take(&mut r, &mut flight, &mut rng) > 0 {
                    checked += 1;
                    assert!(
                        r.agent.outstanding() <= r.agent.window(),
                        "run {run} at {:?}: {} out, W {}",
                        r.now,
                        r.agent.outstanding(),
                        r.agent.window()
                    );
                }
            }
            assert!(
                r.agent.rec.loss_events > 3,
                "run {run}: the trace went through the hold ({})",
                r.agent.rec.loss_events
            );
        }
        assert!(checked > 10_000);
    }

    #[test]
    fn stops_requesting_once_complete() {
        let mut r =
            start(RainbowReceiver::new(RainbowConfig::default(), SRC, 1, FountainMode::Symbolic { needed: 3 }), 1);
        sent(&mut r);
        r.packet(ms(10), &reply(1, 1, 0));
        r.packet(ms(20), &reply(1, 1, 1));
        sent(&mut r);
        r.packet(ms(30), &reply(2, 1, 2));
        assert!(r.agent.done());
        assert_eq!(sent(&mut r), vec![]);
        assert_eq!(r.agent.poll_timeout(), None);
        r.packet(ms(40), &reply(1, 1, 3));
        assert_eq!(r.agent.rec.after_done, 1);
        assert_eq!(r.agent.rec.rx_symbol, vec![0, 1, 2]);
    }
}
