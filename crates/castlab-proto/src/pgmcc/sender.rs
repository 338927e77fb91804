//! The PGMCC sender (draft §2.2, §2.3, §2.7, §3).

use std::collections::VecDeque;

use castlab_core::{
    Addr, Agent, ConfigError, ControlMsg, Dest, Duration, GroupId, Header, Instant, Packet, PgmHeader, StartInfo,
    TimerTable,
};

use super::{
    inverse_throughput, loss_from_wire, micros, micros_between, replaces_acker, AckHeader, DataHeader, NakHeader,
    PgmccConfig, PGMCC_NCF_KIND,
};

castlab_core::timers! {
    /// The sender's timers.
    pub enum SenderTimer {
        /// The session starts or stops sending.
        Edge,
        /// The retransmission timer (§2.7).
        Rto,
        /// The next ambient SPM (`PgmccConfig::spm_interval`).
        Spm,
    }
}

/// The current acker and what the sender last computed for it (§2.3).
#[derive(Clone, Copy, Debug)]
struct Acker {
    addr: Addr,
    /// M = 1/T of §2.4 from its last report.
    m: f64,
}

/// What the sender did: columns for monitors and the bindings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SenderRecords {
    /// Every acker change: when, the new acker (index in [`PgmccSender::receivers`]; -1: none,
    /// after `retry_max` timeouts), and its M = 1/T (§2.4) when chosen.
    pub acker_time_ns: Vec<u64>,
    pub acker_receiver: Vec<i64>,
    pub acker_m: Vec<f64>,
    /// Every NAK: when, from which receiver (index), its loss rate p, the RTT sample (s).
    pub fb_time_ns: Vec<u64>,
    pub fb_receiver: Vec<u32>,
    pub fb_loss: Vec<f64>,
    pub fb_rtt_s: Vec<f64>,
    /// Every window reduction (halving, §2.2, or timeout, §2.7): when and W after it.
    pub cut_time_ns: Vec<u64>,
    pub cut_window: Vec<f64>,
    pub data_sent: u64,
    pub rdata_sent: u64,
    pub bytes_sent: u64,
    pub ncf_sent: u64,
    pub spm_sent: u64,
    /// With `pgm_seq_acks`: repairs whose token returned without growth, because an ACK
    /// reported their sequence number received, or could no longer report it (module doc).
    pub repairs_acked: u64,
    /// With `pgm_seq_acks`: repairs taken as lost, `dupacks` ODATA sent after them reported
    /// received and they not (their token returns; the window does not react).
    pub repairs_lost: u64,
    /// ACKs from the current acker, and from a previous one (tokens only).
    pub acks: u64,
    pub acks_previous: u64,
    pub naks: u64,
    pub election_naks: u64,
    pub halvings: u64,
    pub timeouts: u64,
    /// Acker dropped after `retry_max` successive timeouts (§2.7).
    pub acker_drops: u64,
    /// Packets the ACKs showed lost (each once).
    pub losses_seen: u64,
    /// NAKs outside the transmit window or beyond the repair queue.
    pub repairs_refused: u64,
    /// Packets that did not decode, came from another session or carried an impossible
    /// timestamp or sequence number.
    pub ignored: u64,
}

castlab_core::records_table!(SenderRecords {
    columns: [
        acker_time_ns,
        acker_receiver,
        acker_m,
        fb_time_ns,
        fb_receiver,
        fb_loss,
        fb_rtt_s,
        cut_time_ns,
        cut_window,
    ],
    scalars: [
        data_sent = |r| r.data_sent,
        rdata_sent = |r| r.rdata_sent,
        bytes_sent = |r| r.bytes_sent,
        ncf_sent = |r| r.ncf_sent,
        spm_sent = |r| r.spm_sent,
        repairs_acked = |r| r.repairs_acked,
        repairs_lost = |r| r.repairs_lost,
        acks = |r| r.acks,
        acks_previous = |r| r.acks_previous,
        naks = |r| r.naks,
        election_naks = |r| r.election_naks,
        halvings = |r| r.halvings,
        timeouts = |r| r.timeouts,
        acker_drops = |r| r.acker_drops,
        losses_seen = |r| r.losses_seen,
        repairs_refused = |r| r.repairs_refused,
        ignored = |r| r.ignored,
    ],
});

/// Receivers the sender keeps an index for in its records.
const MAX_RECEIVERS: usize = 10_000;

/// The PGMCC sender: multicasts session `flow` to `group` from `start` until `stop`, as fast as
/// its window allows (a greedy source).
#[derive(Debug)]
pub struct PgmccSender {
    cfg: PgmccConfig,
    group: GroupId,
    flow: u32,
    start: Instant,
    stop: Instant,
    /// W and T of §2.2, in packets.
    w: f64,
    t: f64,
    acker: Option<Acker>,
    previous: Option<Addr>,
    /// Successive timeouts (§3's RETRY).
    retry: u32,
    /// PGM sequence number of the next ODATA.
    next_seq: u64,
    /// One past the highest sequence number an ACK may report: the transmit sequence number
    /// of the next ODATA or RDATA (§2.1.1), or with `pgm_seq_acks` the next ODATA's PGM one.
    next_tx: u64,
    repairs: VecDeque<u64>,
    ncfs: VecDeque<u64>,
    /// With `pgm_seq_acks`: the RDATA sent whose token has not returned, oldest first: its
    /// PGM sequence number, and the next ODATA's when it was sent.
    rdata_in_flight: VecDeque<(u64, u64)>,
    /// The highest transmit sequence number an ACK reported, and which of the 64 up to it
    /// were reported received (bit k: `ack_hi - k`) or declared lost.
    ack_hi: Option<u64>,
    ack_bits: u64,
    declared: u64,
    /// Holes below this transmit sequence number are not reacted to, and the window does not
    /// change until an ACK reports one at or above it (§2.2's suspension).
    loss_floor: u64,
    srtt: Option<f64>,
    rttvar: f64,
    rto: Duration,
    /// An SPM is due (ambient, or the one that ends the session).
    spm_due: bool,
    /// Started, and told to stop ([`Agent::handle_shutdown`]): the session is over.
    started: bool,
    stopped: bool,
    timers: TimerTable<SenderTimer>,
    now: Instant,
    records: SenderRecords,
    receivers: Vec<Addr>,
}

impl PgmccSender {
    pub fn try_new(
        cfg: PgmccConfig,
        group: GroupId,
        flow: u32,
        start: Instant,
        stop: Instant,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if stop <= start {
            return Err(ConfigError::new("stop", stop.as_secs_f64(), "must be after start"));
        }
        let rto = cfg.initial_rto;
        let q = cfg.repair_queue_pkts as usize;
        Ok(PgmccSender {
            cfg,
            group,
            flow,
            start,
            stop,
            w: 1.0,
            t: 1.0,
            acker: None,
            previous: None,
            retry: 0,
            next_seq: 0,
            next_tx: 0,
            repairs: VecDeque::with_capacity(q),
            ncfs: VecDeque::with_capacity(q),
            rdata_in_flight: VecDeque::with_capacity(q),
            ack_hi: None,
            ack_bits: 0,
            declared: 0,
            loss_floor: 0,
            srtt: None,
            rttvar: 0.0,
            rto,
            spm_due: false,
            started: false,
            stopped: false,
            timers: TimerTable::default(),
            now: Instant::ZERO,
            records: SenderRecords::default(),
            receivers: Vec::new(),
        })
    }

    pub fn config(&self) -> &PgmccConfig {
        &self.cfg
    }

    pub fn records(&self) -> &SenderRecords {
        &self.records
    }

    /// W, packets.
    pub fn window(&self) -> f64 {
        self.w
    }

    /// T, packets.
    pub fn tokens(&self) -> f64 {
        self.t
    }

    pub fn acker(&self) -> Option<Addr> {
        self.acker.map(|a| a.addr)
    }

    /// Every receiver heard from, in the order first heard (the records' indices).
    pub fn receivers(&self) -> &[Addr] {
        &self.receivers
    }

    /// The retransmission timer's current value (§2.7).
    pub fn rto(&self) -> Duration {
        self.rto
    }

    /// SRTT of the acker's ACKs, s (None before a sample since the last acker change).
    pub fn srtt_s(&self) -> Option<f64> {
        self.srtt
    }

    fn active(&self) -> bool {
        !self.stopped && self.now >= self.start && self.now < self.stop
    }

    fn index_of(&mut self, a: Addr) -> u32 {
        if let Some(i) = self.receivers.iter().position(|&r| r == a) {
            return i as u32;
        }
        if self.receivers.len() < MAX_RECEIVERS {
            self.receivers.push(a);
            return (self.receivers.len() - 1) as u32;
        }
        u32::MAX
    }

    fn set_acker(&mut self, now: Instant, acker: Option<Acker>) {
        if let Some(old) = self.acker {
            self.previous = Some(old.addr);
        }
        self.acker = acker;
        // §2.7: SRTT and RTTVAR restart with the acker.
        self.srtt = None;
        self.rttvar = 0.0;
        self.rto = self.cfg.initial_rto;
        // Holes among packets sent before the change are not the new acker's to report.
        self.loss_floor = self.next_tx;
        let idx = match acker {
            Some(a) => self.index_of(a.addr) as i64,
            None => -1,
        };
        self.records.acker_time_ns.push(now.as_nanos());
        self.records.acker_receiver.push(idx);
        self.records.acker_m.push(acker.map_or(f64::NAN, |a| a.m));
    }

    /// §3, "on ACK/NAK reception": the RTT sample and p give M (§2.4); the acker is elected
    /// or replaced (§2.3). True when `from` is the acker afterwards (its statistics updated).
    fn elect(&mut self, now: Instant, from: Addr, m: f64) -> bool {
        self.retry = 0;
        match self.acker {
            None => {
                self.set_acker(now, Some(Acker { addr: from, m }));
                self.t += 1.0;
                false
            }
            Some(a) if a.addr == from => {
                self.acker = Some(Acker { addr: from, m });
                true
            }
            Some(a) => {
                if replaces_acker(m, a.m, self.cfg.acker_bias) {
                    self.set_acker(now, Some(Acker { addr: from, m }));
                }
                false
            }
        }
    }

    /// An RTT sample from an echoed timestamp (§2.5.1), s; None when it is in the future.
    fn rtt_sample(&self, now: Instant, echo_us: u32) -> Option<f64> {
        let d = micros_between(micros(now), echo_us);
        (d >= 0).then_some(d as f64 * 1e-6)
    }

    fn on_nak(&mut self, now: Instant, p: &Packet, nak: NakHeader) {
        let Some(rtt) = nak.have_ts.then(|| self.rtt_sample(now, nak.ts_echo_us)).flatten() else {
            self.records.ignored += 1;
            return;
        };
        let loss = loss_from_wire(nak.loss);
        let i = self.index_of(p.src);
        let r = &mut self.records;
        r.naks += 1;
        r.election_naks += nak.election as u64;
        r.fb_time_ns.push(now.as_nanos());
        r.fb_receiver.push(i);
        r.fb_loss.push(loss);
        r.fb_rtt_s.push(rtt);
        self.elect(now, p.src, inverse_throughput(rtt, loss));
        if !nak.election {
            self.repair(p.seq);
        }
    }

    /// PGM (RFC 3208 §5.3) on a NAK for `seq`: confirm, and repair if the data is still in the
    /// window.
    fn repair(&mut self, seq: u64) {
        let trail = self.next_seq.saturating_sub(self.cfg.tx_window_pkts as u64);
        let cap = self.cfg.repair_queue_pkts as usize;
        if seq < trail || seq >= self.next_seq || self.ncfs.len() >= cap {
            self.records.repairs_refused += 1;
            return;
        }
        self.ncfs.push_back(seq);
        if !self.repairs.contains(&seq) {
            if self.repairs.len() < cap {
                self.repairs.push_back(seq);
            } else {
                self.records.repairs_refused += 1;
            }
        }
    }

    fn on_ack(&mut self, now: Instant, p: &Packet, ack: AckHeader) {
        let Some(rtt) = self.rtt_sample(now, ack.ts_echo_us) else {
            self.records.ignored += 1;
            return;
        };
        if ack.rx_max >= self.next_tx {
            // Acknowledges a packet never sent.
            self.records.ignored += 1;
            return;
        }
        let is_acker = self.elect(now, p.src, inverse_throughput(rtt, loss_from_wire(ack.loss)));
        if is_acker {
            self.records.acks += 1;
            self.rtt_update(rtt);
            self.update_window(now, ack);
        } else if self.previous == Some(p.src) {
            self.records.acks_previous += 1;
            let new = self.merge(ack);
            self.t = (self.t + new as f64).min(self.w);
        }
    }

    /// RFC 6298 §2.2-§2.3 on the acker's samples (§2.7).
    fn rtt_update(&mut self, r: f64) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(s) => {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (s - r).abs();
                self.srtt = Some(0.875 * s + 0.125 * r);
            }
        }
        let rto = self.srtt.unwrap_or(r) + 4.0 * self.rttvar;
        self.rto = Duration::from_secs_f64(rto).max(self.cfg.min_rto).min(self.cfg.max_rto);
    }

    /// Merge an ACK's bitmap into what the sender knows: the packets it newly acknowledges.
    fn merge(&mut self, ack: AckHeader) -> u32 {
        let hi = match self.ack_hi {
            Some(h) if h >= ack.rx_max => h,
            Some(h) => {
                let s = ack.rx_max - h;
                self.ack_bits = if s >= 64 { 0 } else { self.ack_bits << s };
                self.declared = if s >= 64 { 0 } else { self.declared << s };
                ack.rx_max
            }
            None => ack.rx_max,
        };
        self.ack_hi = Some(hi);
        let lag = hi - ack.rx_max;
        let incoming = if lag >= 64 { 0 } else { (ack.bitmap as u64) << lag };
        let new = incoming & !self.ack_bits & !self.declared;
        if self.cfg.pgm_seq_acks {
            self.ack_repairs(ack, hi, new);
        }
        self.ack_bits |= incoming;
        new.count_ones()
    }

    /// `pgm_seq_acks`: an RDATA repeats the sequence number of the data it repairs, which the
    /// ACKs may have reported before (the original, received by a previous acker) or may no
    /// longer reach (more than 32 behind RX_MAX). A repair in flight whose number this ACK
    /// reports received returns its token, without growth unless the report is new; when the
    /// ACK reports nothing new and names no repair in flight, it answers a repair its bitmap
    /// cannot show (§4: the acker ACKs every data packet that names it), and the oldest such
    /// repair's token returns.
    fn ack_repairs(&mut self, ack: AckHeader, hi: u64, new: u64) {
        let before = self.rdata_in_flight.len();
        let (mut returned, mut lost) = (0u32, 0u32);
        let dupacks = self.cfg.dupacks;
        self.rdata_in_flight.retain(|&(s, after)| {
            // in the ACK's own bitmap (the sender's 64 tracked may not reach back as far)
            let k = ack.rx_max.wrapping_sub(s);
            let reported = s <= ack.rx_max && k < 32 && ack.bitmap >> k & 1 == 1;
            let counted_new = s <= hi && hi - s < 64 && new >> (hi - s) & 1 == 1;
            if reported && !counted_new {
                returned += 1;
            }
            // ODATA sent after it that this ACK reports received (§2.2's three)
            let later = match ack.rx_max.checked_sub(after) {
                Some(d) if d < 32 => (ack.bitmap & (u32::MAX >> (31 - d))).count_ones(),
                Some(_) => ack.bitmap.count_ones(),
                None => 0,
            };
            if !reported && later >= dupacks {
                lost += 1;
                return false;
            }
            !reported
        });
        if before == self.rdata_in_flight.len() && new == 0 {
            let reach = ack.rx_max.saturating_sub(super::ACK_BITMAP_BITS as u64 - 1);
            if let Some(i) = self.rdata_in_flight.iter().position(|&(s, _)| s < reach) {
                self.rdata_in_flight.remove(i);
                returned += 1;
            }
        }
        self.t += (returned + lost) as f64;
        self.records.repairs_acked += returned as u64;
        self.records.repairs_lost += lost as u64;
    }

    /// Holes with at least `dupacks` acknowledged packets above them, each declared once:
    /// (at or above the loss floor, below it).
    fn declare_losses(&mut self) -> (u32, u32) {
        let Some(hi) = self.ack_hi else { return (0, 0) };
        // Only packets actually sent, within the 64 tracked.
        let span = hi.min(63);
        let valid = if span == 63 { u64::MAX } else { (1u64 << (span + 1)) - 1 };
        let mut holes = !self.ack_bits & !self.declared & valid;
        let (mut above, mut below) = (0, 0);
        while holes != 0 {
            let k = 63 - holes.leading_zeros();
            let newer = self.ack_bits & ((1u64 << k) - 1);
            if newer.count_ones() < self.cfg.dupacks {
                // Younger holes have fewer acknowledged packets above them still.
                break;
            }
            self.declared |= 1u64 << k;
            holes &= !(1u64 << k);
            if hi - k as u64 >= self.loss_floor {
                above += 1;
            } else {
                below += 1;
            }
        }
        (above, below)
    }

    /// §2.2 on an ACK from the acker.
    fn update_window(&mut self, now: Instant, ack: AckHeader) {
        let n = self.merge(ack);
        let (lost, lost_before) = self.declare_losses();
        self.records.losses_seen += (lost + lost_before) as u64;
        // A packet declared lost has left the network: its token returns.
        self.t += (lost + lost_before) as f64;
        let suspended = self.ack_hi.is_some_and(|h| h < self.loss_floor);
        if lost > 0 {
            // "T = T - W/2, W = W/2", then no window manipulation until feedback for the
            // next packet sent.
            self.t += n as f64;
            self.w = (self.w / 2.0).max(1.0);
            self.t -= self.w;
            self.loss_floor = self.next_tx;
            self.records.halvings += 1;
            self.records.cut_time_ns.push(now.as_nanos());
            self.records.cut_window.push(self.w);
        } else if suspended {
            self.t += n as f64;
        } else {
            let mut n = n as f64;
            if self.w < self.cfg.ssthresh {
                let d = n.min(self.cfg.ssthresh - self.w);
                n -= d;
                self.t += 2.0 * d;
                self.w += d;
            }
            self.t += n * (1.0 + 1.0 / self.w);
            self.w += n / self.w;
        }
        self.t = self.t.min(self.w);
        if n > 0 {
            self.arm_rto(now, true);
        }
    }

    /// Packets sent that no ACK has reported received or declared lost: above the highest
    /// reported, or holes below it not yet declared (a lost tail: too few packets after them
    /// to declare them, §2.2), which only the timer recovers when no token is left; and
    /// repairs whose token has not returned (`pgm_seq_acks`).
    pub(super) fn outstanding(&self) -> bool {
        let Some(h) = self.ack_hi else { return self.next_tx > 0 };
        let span = h.min(63);
        let valid = if span == 63 { u64::MAX } else { (1u64 << (span + 1)) - 1 };
        h + 1 < self.next_tx || !self.ack_bits & !self.declared & valid != 0 || !self.rdata_in_flight.is_empty()
    }

    fn arm_rto(&mut self, now: Instant, restart: bool) {
        if !self.outstanding() {
            self.timers.stop(SenderTimer::Rto);
        } else if restart || !self.timers.is_armed(SenderTimer::Rto) {
            self.timers.set(SenderTimer::Rto, now + self.rto);
        }
    }

    /// §2.7 and §3, "on timeout expiration".
    fn on_rto(&mut self, now: Instant) {
        self.records.timeouts += 1;
        self.w = 1.0;
        self.t = 1.0;
        // the tokens start again: repairs in flight owe none
        self.rdata_in_flight.clear();
        self.loss_floor = self.next_tx;
        self.records.cut_time_ns.push(now.as_nanos());
        self.records.cut_window.push(self.w);
        if self.retry < self.cfg.retry_max {
            self.retry += 1;
        } else if self.acker.is_some() {
            self.records.acker_drops += 1;
            self.set_acker(now, None);
            self.previous = None;
        }
        // TCP's back-off (RFC 6298 §5.5).
        self.rto = (self.rto * 2).min(self.cfg.max_rto);
        self.timers.set(SenderTimer::Rto, now + self.rto);
    }

    fn data_packet(&mut self, seq: u64, rdata: bool) -> Packet {
        let tx_seq = if self.cfg.pgm_seq_acks { seq } else { self.next_tx };
        let h = DataHeader {
            tx_seq,
            ts_us: micros(self.now),
            acker: self.acker.map(|a| a.addr),
            rdata,
            trail: self.next_seq.saturating_sub(self.cfg.tx_window_pkts as u64) as u32,
        };
        self.next_tx = self.next_tx.max(tx_seq + 1);
        self.t -= 1.0;
        let mut p = Packet::data(Dest::Group(self.group), self.cfg.packet_size);
        p.flow = self.flow;
        p.seq = seq;
        p.header = h.encode();
        self.records.bytes_sent += self.cfg.packet_size as u64;
        p
    }
}

impl Agent for PgmccSender {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        self.now = now;
        self.started = true;
        self.timers.set(SenderTimer::Edge, self.start.max(now));
        if !self.cfg.spm_interval.is_zero() {
            // RFC 3208 §6.1: an SPM at once, then ambient SPMs
            self.spm_due = true;
            self.timers.set(SenderTimer::Spm, now + self.cfg.spm_interval);
        }
    }

    /// Told to stop: the session ends. No more ODATA, RDATA or NCFs (queued repairs are
    /// dropped; later NAKs and ACKs are ignored), nothing armed, and one last SPM advertises
    /// the window as it ends; on RFC 3208's wire the driver sends it with OPT_FIN, the option
    /// that marks the session's end (RFC 3208 §9).
    fn handle_shutdown(&mut self, now: Instant) {
        if !self.started || self.stopped {
            return;
        }
        self.now = now;
        self.stopped = true;
        self.timers.clear();
        self.repairs.clear();
        self.ncfs.clear();
        self.spm_due = true;
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        self.now = now;
        if self.stopped || p.flow != self.flow || !matches!(p.dst, Dest::Unicast(_)) {
            self.records.ignored += 1;
            return;
        }
        if let Some(ack) = AckHeader::decode(p) {
            self.on_ack(now, p, ack);
        } else if let Some(nak) = NakHeader::decode(p) {
            self.on_nak(now, p, nak);
        } else if let Header::Pgm(h) = p.header {
            // A PGM receiver's NAK without PGMCC's feedback: a repair request only.
            if h.kind == PgmHeader::NAK {
                self.records.naks += 1;
                self.repair(p.seq);
            } else {
                self.records.ignored += 1;
            }
        } else {
            self.records.ignored += 1;
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        while let Some(t) = self.timers.expire_earliest(now) {
            match t {
                SenderTimer::Edge => {
                    if now < self.stop {
                        self.timers.set(SenderTimer::Edge, self.stop);
                    } else {
                        self.timers.stop(SenderTimer::Rto);
                    }
                }
                SenderTimer::Rto => {
                    if self.active() {
                        self.on_rto(now);
                    }
                }
                SenderTimer::Spm => {
                    if now < self.stop {
                        self.spm_due = true;
                        self.timers.set(SenderTimer::Spm, now + self.cfg.spm_interval);
                    }
                }
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        if core::mem::take(&mut self.spm_due) {
            // The window's edges: the oldest data still repairable and one past the newest.
            let trail = self.next_seq.saturating_sub(self.cfg.tx_window_pkts as u64);
            let mut p = Packet::data(Dest::Group(self.group), self.cfg.feedback_size);
            p.flow = self.flow;
            p.seq = self.next_seq;
            p.header = Header::Pgm(PgmHeader { kind: PgmHeader::SPM, trail, lead: self.next_seq });
            self.records.spm_sent += 1;
            return Some(p);
        }
        if let Some(seq) = self.ncfs.pop_front() {
            let mut p = Packet::data(Dest::Group(self.group), self.cfg.feedback_size);
            p.flow = self.flow;
            p.seq = seq;
            p.header = Header::Control(ControlMsg { kind: PGMCC_NCF_KIND, args: [0; 3] });
            self.records.ncf_sent += 1;
            return Some(p);
        }
        if !self.active() || self.t < 1.0 {
            return None;
        }
        let p = if let Some(seq) = self.repairs.pop_front() {
            self.records.rdata_sent += 1;
            if self.cfg.pgm_seq_acks {
                if self.rdata_in_flight.len() == self.cfg.repair_queue_pkts as usize {
                    // the oldest repair's token is given up on (counted as returned)
                    self.rdata_in_flight.pop_front();
                    self.t += 1.0;
                    self.records.repairs_acked += 1;
                }
                self.rdata_in_flight.push_back((seq, self.next_seq));
            }
            self.data_packet(seq, true)
        } else {
            let seq = self.next_seq;
            self.next_seq += 1;
            self.records.data_sent += 1;
            self.data_packet(seq, false)
        };
        let now = self.now;
        self.arm_rto(now, false);
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }
}
