//! The PGMCC receiver (draft §2.1.2, §2.3.1, §2.5, §2.6, §4).

use std::collections::VecDeque;

use castlab_core::{
    Addr, Agent, AgentEvent, ConfigError, ControlMsg, Dest, GroupId, Header, Instant, Packet, PgmHeader, Rng,
    StartInfo, TimerTable,
};

use super::{loss_to_wire, AckHeader, DataHeader, NakHeader, PgmccConfig, ACK_BITMAP_BITS, PGMCC_NCF_KIND};

castlab_core::timers! {
    /// The receiver's timers.
    pub enum ReceiverTimer {
        /// The earliest pending NAK's back-off ends.
        Nak,
        /// The election NAK's back-off ends (§2.3.1).
        Election,
    }
}

/// What the receiver did: columns for monitors and the bindings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReceiverRecords {
    /// Every NAK sent: when, and the loss rate p it reported.
    pub nak_time_ns: Vec<u64>,
    pub nak_loss: Vec<f64>,
    /// Data packets (ODATA and RDATA) received, their bytes, and transmit sequence numbers
    /// missed (the loss filter's losses).
    pub received: u64,
    pub bytes: u64,
    pub lost: u64,
    pub rdata: u64,
    /// RDATA that filled a gap this receiver was waiting for.
    pub repaired: u64,
    pub naks_sent: u64,
    pub election_naks: u64,
    pub acks_sent: u64,
    /// NAKs cancelled by an NCF.
    pub suppressed: u64,
    /// Gaps given up: beyond `nak_slots`, or fallen behind the sender's transmit window.
    pub given_up: u64,
    /// Packets that did not decode or came from another session.
    pub ignored: u64,
}

castlab_core::records_table!(ReceiverRecords {
    columns: [nak_time_ns, nak_loss],
    scalars: [
        received = |r| r.received,
        bytes = |r| r.bytes,
        lost = |r| r.lost,
        rdata = |r| r.rdata,
        repaired = |r| r.repaired,
        naks_sent = |r| r.naks_sent,
        election_naks = |r| r.election_naks,
        acks_sent = |r| r.acks_sent,
        suppressed = |r| r.suppressed,
        given_up = |r| r.given_up,
        ignored = |r| r.ignored,
    ],
});

/// A missing packet: the PGM sequence number and when its NAK's back-off ends (None: the NAK
/// went, the repair is awaited).
#[derive(Clone, Copy, Debug)]
struct PendingNak {
    seq: u64,
    due: Option<Instant>,
}

/// The PGMCC receiver of session `flow` on `group`: ACKs when the data names it acker, NAKs
/// its gaps to the sender by unicast.
#[derive(Debug)]
pub struct PgmccReceiver {
    cfg: PgmccConfig,
    group: GroupId,
    flow: u32,
    me: Addr,
    rng: Rng,
    sender: Option<Addr>,
    /// The loss filter's p (§2.6).
    p: f64,
    /// The highest transmit sequence number received and the ACK bitmap (bit k: hi - k).
    hi_tx: Option<u64>,
    bitmap: u32,
    /// The latest data packet's timestamp and when it arrived (§2.5.1).
    last_ts: Option<(u32, Instant)>,
    /// One past the highest PGM sequence number seen in ODATA.
    next_seq: Option<u64>,
    pending: Vec<PendingNak>,
    is_acker: bool,
    timers: TimerTable<ReceiverTimer>,
    out: VecDeque<Packet>,
    join_pending: bool,
    /// Told to stop ([`Agent::handle_shutdown`]), and whether its group was left since.
    stopped: bool,
    leave_pending: bool,
    records: ReceiverRecords,
}

impl PgmccReceiver {
    pub fn try_new(cfg: PgmccConfig, group: GroupId, flow: u32) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let slots = cfg.nak_slots as usize;
        Ok(PgmccReceiver {
            cfg,
            group,
            flow,
            me: Addr::default(),
            rng: Rng::seed_from_u64(0),
            sender: None,
            p: 0.0,
            hi_tx: None,
            bitmap: 0,
            last_ts: None,
            next_seq: None,
            pending: Vec::with_capacity(slots),
            is_acker: false,
            timers: TimerTable::default(),
            out: VecDeque::with_capacity(slots + 2),
            join_pending: false,
            stopped: false,
            leave_pending: false,
            records: ReceiverRecords::default(),
        })
    }

    pub fn config(&self) -> &PgmccConfig {
        &self.cfg
    }

    pub fn records(&self) -> &ReceiverRecords {
        &self.records
    }

    /// p, the loss filter's estimate (§2.6).
    pub fn loss_rate(&self) -> f64 {
        self.p
    }

    /// The latest data packet named this receiver acker.
    pub fn is_acker(&self) -> bool {
        self.is_acker
    }

    /// Gaps waiting for their NAK.
    pub fn pending_naks(&self) -> usize {
        self.pending.iter().filter(|n| n.due.is_some()).count()
    }

    /// §2.6: one transmit sequence number's outcome through the filter.
    fn filter(&mut self, lost: bool) {
        let c = self.cfg.loss_filter;
        self.p = (1.0 - c) * self.p + if lost { c } else { 0.0 };
    }

    /// The echoed timestamp: the latest one plus how long it was held (§2.5.1).
    fn echo(&self, now: Instant) -> Option<u32> {
        let (ts, at) = self.last_ts?;
        let held = now.saturating_since(at).as_nanos() / 1000;
        Some(ts.wrapping_add(held as u32))
    }

    fn feedback(&self, header: Header, seq: u64) -> Option<Packet> {
        let mut p = Packet::data(Dest::Unicast(self.sender?), self.cfg.feedback_size);
        p.flow = self.flow;
        p.seq = seq;
        p.header = header;
        Some(p)
    }

    fn send_nak(&mut self, now: Instant, seq: u64, election: bool) {
        let echo = self.echo(now);
        let ack = election.then(|| self.hi_tx.map(|hi| (hi, self.bitmap))).flatten();
        let h = NakHeader {
            ts_echo_us: echo.unwrap_or(0),
            have_ts: echo.is_some(),
            loss: loss_to_wire(self.p),
            election,
            ack,
        };
        if let Some(p) = self.feedback(h.encode(), seq) {
            self.out.push_back(p);
            self.records.naks_sent += 1;
            self.records.election_naks += election as u64;
            self.records.nak_time_ns.push(now.as_nanos());
            self.records.nak_loss.push(self.p);
        }
    }

    fn backoff(&mut self, now: Instant) -> Instant {
        now + self.cfg.nak_backoff_max.mul_f64(self.rng.uniform())
    }

    fn arm_nak(&mut self) {
        match self.pending.iter().filter_map(|n| n.due).min() {
            Some(t) => self.timers.set(ReceiverTimer::Nak, t),
            None => self.timers.stop(ReceiverTimer::Nak),
        }
    }

    /// Forget missing packet `seq` (`waiting_only`: only if its NAK has not gone yet); true
    /// when it was missing.
    fn cancel(&mut self, seq: u64, waiting_only: bool) -> bool {
        match self.pending.iter().position(|n| n.seq == seq && (!waiting_only || n.due.is_some())) {
            Some(i) => {
                self.pending.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// §2.6 and the ACK bitmap (§2.1.2) on transmit sequence number `s`.
    fn on_tx_seq(&mut self, s: u64) {
        match self.hi_tx {
            None => {
                self.hi_tx = Some(s);
                self.bitmap = 1;
                self.filter(false);
            }
            Some(hi) if s > hi => {
                let gap = s - hi - 1;
                // The filter through `gap` losses at once: 1 - p' = (1 - p)(1 - c)^gap.
                let keep = (1.0 - self.cfg.loss_filter).powf(gap.min(1 << 20) as f64);
                self.p = 1.0 - (1.0 - self.p) * keep;
                self.filter(false);
                self.records.lost = self.records.lost.saturating_add(gap);
                let shift = s - hi;
                self.bitmap = if shift >= ACK_BITMAP_BITS as u64 { 0 } else { self.bitmap << shift } | 1;
                self.hi_tx = Some(s);
            }
            Some(hi) if s < hi => {
                // Late: it stays lost for the filter (module doc), but the ACK reports it.
                if hi - s < ACK_BITMAP_BITS as u64 {
                    self.bitmap |= 1 << (hi - s);
                }
            }
            Some(_) => {}
        }
    }

    /// PGM's receive side: gaps in ODATA become pending NAKs; data fills them.
    fn on_pgm_seq(&mut self, now: Instant, seq: u64, rdata: bool, trail: u32) {
        if self.cancel(seq, false) && rdata {
            self.records.repaired += 1;
        }
        if !rdata {
            let from = self.next_seq.unwrap_or(seq);
            if seq >= from {
                let gaps = seq - from;
                let room = (self.cfg.nak_slots as usize - self.pending.len()) as u64;
                for k in 0..gaps.min(room) {
                    let due = self.backoff(now);
                    self.pending.push(PendingNak { seq: from + k, due: Some(due) });
                }
                self.records.given_up += gaps.saturating_sub(room);
                self.next_seq = Some(seq.saturating_add(1));
            }
        }
        // Gaps the sender can no longer repair (wrapping comparison of the trail's low bits).
        let before = self.pending.len();
        self.pending.retain(|n| (trail.wrapping_sub(n.seq as u32) as i32) <= 0);
        self.records.given_up += (before - self.pending.len()) as u64;
        self.arm_nak();
    }

    fn on_data(&mut self, now: Instant, p: &Packet, h: DataHeader) {
        self.sender = Some(p.src);
        self.records.received += 1;
        self.records.bytes += p.size_bytes as u64;
        self.records.rdata += h.rdata as u64;
        self.last_ts = Some((h.ts_us, now));
        self.on_tx_seq(h.tx_seq);
        self.on_pgm_seq(now, p.seq, h.rdata, h.trail);
        self.is_acker = h.acker == Some(self.me);
        match h.acker {
            Some(a) if a == self.me => {
                // §4: an immediate ACK (no correction term: it is not delayed).
                let ack = AckHeader {
                    ts_echo_us: h.ts_us,
                    loss: loss_to_wire(self.p),
                    rx_max: self.hi_tx.unwrap_or(h.tx_seq),
                    bitmap: self.bitmap,
                };
                if let Some(pkt) = self.feedback(ack.encode(), 0) {
                    self.out.push_back(pkt);
                    self.records.acks_sent += 1;
                }
            }
            Some(_) => {}
            None => {
                // §2.3.1: ask for an election, one request at a time.
                if !self.timers.is_armed(ReceiverTimer::Election) {
                    let due = self.backoff(now);
                    self.timers.set(ReceiverTimer::Election, due);
                }
            }
        }
    }
}

impl Agent for PgmccReceiver {
    fn handle_start(&mut self, _now: Instant, info: StartInfo) {
        self.me = info.addr;
        self.rng = info.rng;
        self.join_pending = true;
    }

    /// Told to stop: the receiver leaves. No more ACKs (an acker's departure shows at the
    /// source as ACKs that stop: its timer, §2.7, then drops it; the draft's ACKER_LEAVING,
    /// §2.3.2, is not sent) and no more NAKs: pending ones and queued feedback are dropped,
    /// nothing is armed, and the group is left. The counters stay.
    fn handle_shutdown(&mut self, _now: Instant) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        self.timers.clear();
        self.pending.clear();
        self.out.clear();
        self.is_acker = false;
        self.join_pending = false;
        self.leave_pending = true;
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        if self.stopped || p.flow != self.flow || !matches!(p.dst, Dest::Group(g) if g == self.group) {
            self.records.ignored += 1;
            return;
        }
        if let Some(h) = DataHeader::decode(p) {
            self.on_data(now, p, h);
        } else if matches!(p.header, Header::Control(ControlMsg { kind: PGMCC_NCF_KIND, .. }))
            || matches!(p.header, Header::Pgm(h) if h.kind == PgmHeader::NCF)
        {
            // (an NCF as RFC 3208's wire delivers it is PGM's own header)
            // PGM's NAK suppression: another receiver's NAK was confirmed.
            if self.cancel(p.seq, true) {
                self.records.suppressed += 1;
                self.arm_nak();
            }
        } else {
            self.records.ignored += 1;
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        while let Some(t) = self.timers.expire_earliest(now) {
            match t {
                ReceiverTimer::Election => self.send_nak(now, 0, true),
                ReceiverTimer::Nak => {
                    for i in 0..self.pending.len() {
                        if self.pending[i].due.is_some_and(|d| d <= now) {
                            self.pending[i].due = None;
                            let seq = self.pending[i].seq;
                            self.send_nak(now, seq, false);
                        }
                    }
                    self.arm_nak();
                }
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
        if core::mem::take(&mut self.leave_pending) {
            return Some(AgentEvent::Leave(self.group));
        }
        core::mem::take(&mut self.join_pending).then_some(AgentEvent::Join(self.group))
    }
}
