//! The LE-SBCC source agent: the cascade over the PGM-like transmit side (§5.1).

use super::*;

// ------------------------------------------------------------------------------------------
// The source agent: the cascade over the PGM transmit side (§5.1)
// ------------------------------------------------------------------------------------------

/// Counters of a [`LesbccSource`]'s transport.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SourceStats {
    pub odata_sent: u64,
    pub rdata_sent: u64,
    pub ncf_sent: u64,
    pub spm_sent: u64,
    pub bytes_sent: u64,
    /// NAKs for a sequence number outside the transmit window (still LIs; no repair).
    pub naks_out_of_window: u64,
    /// NAKs for a sequence number whose repair was already queued (one RDATA sent).
    pub naks_repair_pending: u64,
    /// Packets that were not a NAK of this session, and NAKs from beyond the 2^32 − 1
    /// receivers the source numbers: counted and ignored.
    pub ignored: u64,
}

/// What a [`LesbccSource`] holds in memory, in bytes (allocated capacities, not lengths).
/// The paper's scalability claim (§1, §3.1.4) is about the source's state per receiver: the
/// tables that grow with the receivers heard from are `per_receiver`; the rest is fixed by the
/// configuration (`fixed`: the agent, its transmit window and its repair and NCF queues) or
/// grows with the run, not the receivers (`records`: the cascade's rate, RTT and LI rows,
/// kept for the figures).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SourceState {
    /// Receivers heard from (distinct NAK source addresses).
    pub receivers: usize,
    /// The receiver table (addresses and their index), LI2LE's value per receiver
    /// (`T_LastPassed` or the last round) and Max-LPRF's counts X_i.
    pub per_receiver: usize,
    pub fixed: usize,
    pub records: usize,
}

#[derive(Clone, Copy, Debug, Default)]
struct WinSlot {
    /// seq + 1 (0: empty).
    tag: u64,
    sent_at: Instant,
    repair_queued: bool,
    /// The receivers whose NAK for this sequence number has arrived, as bit (index mod 64):
    /// only a receiver's first NAK for a loss is an RTT sample.
    naked_by: u64,
}

/// An RTT sample held until the source knows whether the same receiver lost the next packet
/// too ([`LesbccConfig::rtt_run_hold`]).
#[derive(Clone, Copy, Debug)]
struct HeldSample {
    seq: u64,
    /// The receiver's bit in [`WinSlot::naked_by`].
    bit: u64,
    /// Arrival of the NAK.
    at: Instant,
    /// The sample, seconds.
    r: f64,
    /// seq + 1 had been sent when the NAK arrived (else the loss was seen from a control
    /// packet's lead, sent after seq: no later data packet to have been lost).
    next_sent: bool,
}

/// Held samples at most (a fixed queue: per-packet work allocates nothing). A NAK that finds it
/// full gives no sample; the count is `CascadeStats::rtt_ambiguous`.
const HELD_SAMPLES: usize = 1024;

castlab_core::timers! {
    /// The source's timers: pacing, the end of a silence period, tail heartbeats, ambient
    /// SPMs, and the end of the oldest RTT sample's hold.
    pub enum SourceTimer { Send, Silence, Heartbeat, Spm, RttHold }
}

/// An LE-SBCC source over the PGM-like transport: paces ODATA (and RDATA, which take
/// precedence) at the cascade's rate to a group (multicast) or one receiver (unicast, the
/// background flows of Fig. 5), answers each NAK with an NCF and one RDATA, and feeds every
/// NAK to the cascade as an LI. Receivers are told apart by the NAK's source address.
#[derive(Debug)]
pub struct LesbccSource {
    cfg: LesbccConfig,
    dest: Dest,
    flow: u32,
    cascade: Cascade,
    now: Instant,
    started: bool,
    /// Told to stop ([`Agent::handle_shutdown`]): the session is over.
    stopped: bool,
    /// Next ODATA sequence number (the window lead, exclusive).
    lead: u64,
    window: Vec<WinSlot>,
    repairs: VecDeque<u64>,
    ncfs: VecDeque<u64>,
    held: VecDeque<HeldSample>,
    receivers: ReceiverTable,
    timers: TimerTable<SourceTimer>,
    send_ready: bool,
    next_send: Instant,
    heartbeats_left: u32,
    pending_event: Option<f64>,
    pub stats: SourceStats,
}

impl LesbccSource {
    /// A source of session `flow` sending to `dest`. The error names the bad configuration
    /// field.
    pub fn try_new(dest: Dest, flow: u32, cfg: LesbccConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let w = cfg.transmit_window_pkts;
        Ok(LesbccSource {
            cascade: Cascade::new(&cfg, Rng::seed_from_u64(0)),
            dest,
            flow,
            now: Instant::ZERO,
            started: false,
            stopped: false,
            lead: 0,
            window: vec![WinSlot::default(); w],
            repairs: VecDeque::with_capacity(1024),
            ncfs: VecDeque::with_capacity(1024),
            held: VecDeque::with_capacity(HELD_SAMPLES),
            receivers: ReceiverTable::default(),
            timers: TimerTable::default(),
            send_ready: false,
            next_send: Instant::ZERO,
            heartbeats_left: cfg.tail_heartbeats,
            pending_event: None,
            stats: SourceStats::default(),
            cfg,
        })
    }

    pub fn config(&self) -> &LesbccConfig {
        &self.cfg
    }
    pub fn cascade(&self) -> &Cascade {
        &self.cascade
    }
    pub fn flow(&self) -> u32 {
        self.flow
    }
    pub fn rate_bps(&self) -> f64 {
        self.cascade.rate_bps()
    }
    /// One past the highest sequence number sent.
    pub fn lead(&self) -> u64 {
        self.lead
    }
    /// Oldest sequence number the source can still repair.
    pub fn trail(&self) -> u64 {
        self.lead.saturating_sub(self.window.len() as u64)
    }
    /// Receivers seen (by the address their NAKs came from), in order of first NAK.
    pub fn receiver_addrs(&self) -> Vec<Addr> {
        self.receivers.addrs().collect()
    }

    /// The source's memory, split as [`SourceState`] says.
    pub fn state(&self) -> SourceState {
        use std::mem::size_of;
        let per_receiver =
            self.receivers.heap_bytes() + self.cascade.li2le.heap_bytes() + self.cascade.lprf.heap_bytes();
        let fixed = size_of::<Self>()
            + self.window.capacity() * size_of::<WinSlot>()
            + (self.repairs.capacity() + self.ncfs.capacity()) * size_of::<u64>()
            + self.held.capacity() * size_of::<HeldSample>();
        SourceState { receivers: self.receivers.len(), per_receiver, fixed, records: self.cascade.records.heap_bytes() }
    }

    fn data_left(&self) -> bool {
        self.cfg.total_packets.is_none_or(|n| self.lead < n)
    }

    fn work_pending(&self) -> bool {
        !self.repairs.is_empty() || self.data_left()
    }

    /// Arm the pacing timer if there is something to send and the ATF is not silent.
    fn arm_send(&mut self) {
        if !self.started || self.send_ready || self.timers.is_armed(SourceTimer::Send) || !self.work_pending() {
            return;
        }
        if let Some(end) = self.cascade.silence_end().filter(|&t| self.now < t) {
            self.timers.set(SourceTimer::Silence, end);
            return;
        }
        let at = self.next_send.max(self.now);
        if at <= self.now {
            self.send_ready = true;
        } else {
            self.timers.set(SourceTimer::Send, at);
        }
    }

    fn header(&self, kind: castlab_core::PgmKind) -> PgmHeader {
        PgmHeader { kind, trail: self.trail(), lead: self.lead }
    }

    fn packet(&self, kind: castlab_core::PgmKind, seq: u64, size: u32) -> Packet {
        let mut p = Packet::data(self.dest, size);
        p.flow = self.flow;
        p.seq = seq;
        p.header = Header::Pgm(self.header(kind));
        p
    }

    fn slot(&self, seq: u64) -> usize {
        (seq % self.window.len() as u64) as usize
    }

    fn on_nak(&mut self, now: Instant, src: Addr, seq: u64) {
        let Some(rcv) = self.receivers.get_or_insert(src).map(|i| i as usize) else {
            // more receivers than a u32 numbers: not a receiver the cascade can count
            self.stats.ignored += 1;
            return;
        };
        let in_window = seq < self.lead && seq >= self.trail();
        let idx = self.slot(seq);
        let known = in_window && self.window[idx].tag == seq + 1;
        // RTT sample from the ODATA's send time (Appendix A, T_send[j]) only on this receiver's
        // first NAK for j. A later NAK from it is a repeat (PGM's NAK_RPT_IVL or NAK_RDATA_IVL ran
        // out, RFC 3208 §6.3): its timing holds the receiver's own wait, not a round trip, and
        // such samples lift SRTT until the pruning of §2.1 discards the true ones. Repeats are
        // still LIs for the filters. The record is a bit per receiver index mod 64: exact up to
        // 64 receivers; beyond, a first NAK that shares its bit with an earlier NAK for the same
        // sequence number gives no sample (a sample missed, never a false one).
        let bit = 1u64 << (rcv % 64);
        let first = known && self.window[idx].naked_by & bit == 0;
        let mut sample_from = if first { Some(self.window[idx].sent_at) } else { None };
        if known {
            self.window[idx].naked_by |= bit;
        }
        if let (Some(t), false) = (sample_from, self.cfg.rtt_run_hold.is_zero()) {
            // Held: the sample is taken only if this receiver does not NAK seq + 1 as well
            // (`LesbccConfig::rtt_run_hold`).
            sample_from = None;
            let held = HeldSample {
                seq,
                bit,
                at: now,
                r: now.saturating_since(t).as_secs_f64(),
                next_sent: seq + 1 < self.lead,
            };
            if self.held.len() < HELD_SAMPLES {
                self.held.push_back(held);
                if !self.timers.is_armed(SourceTimer::RttHold) {
                    self.timers.set(SourceTimer::RttHold, now + self.cfg.rtt_run_hold);
                }
            } else {
                self.cascade.stats.rtt_ambiguous += 1;
            }
        }
        let silenced_before = self.cascade.silenced(now);
        self.cascade.on_li(now, rcv, sample_from);
        if let Some(r) = self.cascade.take_rate_change() {
            self.pending_event = Some(r);
        }
        if !silenced_before && self.cascade.silenced(now) {
            // The ATF started a silence period: hold the pacer until it ends.
            self.timers.stop(SourceTimer::Send);
            self.send_ready = false;
            if let Some(end) = self.cascade.silence_end() {
                self.timers.set(SourceTimer::Silence, end);
            }
        }
        if !known {
            self.stats.naks_out_of_window += 1;
            return;
        }
        // PGM: confirm with an NCF (multicast), queue one repair.
        self.ncfs.push_back(seq);
        if self.window[idx].repair_queued {
            self.stats.naks_repair_pending += 1;
        } else {
            self.window[idx].repair_queued = true;
            self.repairs.push_back(seq);
            self.arm_send();
        }
    }

    /// Decide the held samples whose hold has ended by `now`: a sample is taken unless the same
    /// receiver NAKed the next packet too (its loss was seen late) or that packet's record has
    /// left the transmit window (not known: a sample missed rather than a false one).
    fn release_held(&mut self, now: Instant) {
        let hold = self.cfg.rtt_run_hold;
        while let Some(h) = self.held.front().copied().filter(|h| h.at + hold <= now) {
            self.held.pop_front();
            let next = h.seq + 1;
            let ambiguous = h.next_sent && {
                let s = &self.window[self.slot(next)];
                s.tag != next + 1 || s.naked_by & h.bit != 0
            };
            if ambiguous {
                self.cascade.stats.rtt_ambiguous += 1;
            } else {
                self.cascade.rtt_sample(h.at, h.r);
            }
        }
        match self.held.front() {
            Some(h) => self.timers.set(SourceTimer::RttHold, h.at + hold),
            None => self.timers.stop(SourceTimer::RttHold),
        }
    }

    fn after_input(&mut self) {
        if let Some(r) = self.cascade.take_rate_change() {
            self.pending_event = Some(r);
        }
        self.arm_send();
    }
}

impl Agent for LesbccSource {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        self.now = now;
        self.cascade = Cascade::new(&self.cfg, info.rng);
        self.cascade.start(now);
        self.started = true;
        self.next_send = now;
        if !self.cfg.spm_interval.is_zero() {
            // RFC 3208 §6.1: an SPM at once, then ambient SPMs
            self.ncfs.push_back(u64::MAX);
            self.timers.set(SourceTimer::Spm, now + self.cfg.spm_interval);
        }
        self.after_input();
    }

    /// Told to stop: the session ends. No more ODATA, and repairs and NCFs not yet sent are
    /// dropped (the source will answer no NAK); one last SPM advertises the window as it ends,
    /// so that a receiver missing the tail learns of it. On the PGM wire the driver sends it
    /// with RFC 3208's OPT_FIN, the option that marks the session's end (§9); then nothing
    /// is armed.
    fn handle_shutdown(&mut self, now: Instant) {
        if !self.started || self.stopped {
            return;
        }
        self.stopped = true;
        self.now = now;
        self.timers.clear();
        self.repairs.clear();
        self.ncfs.clear();
        self.send_ready = false;
        self.ncfs.push_back(u64::MAX); // marker: an SPM
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        if self.stopped {
            self.stats.ignored += 1;
            return;
        }
        self.now = now;
        match p.header {
            Header::Pgm(h) if h.kind == PgmHeader::NAK && p.flow == self.flow => self.on_nak(now, p.src, p.seq),
            _ => self.stats.ignored += 1,
        }
        self.after_input();
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.stopped {
            return;
        }
        self.now = now;
        while let Some(slot) = self.timers.expire(now) {
            match slot {
                SourceTimer::Send => self.send_ready = true,
                SourceTimer::Silence => {}
                SourceTimer::RttHold => self.release_held(now),
                SourceTimer::Spm => {
                    self.ncfs.push_back(u64::MAX); // marker: an SPM
                    self.timers.set(SourceTimer::Spm, now + self.cfg.spm_interval);
                }
                SourceTimer::Heartbeat => {
                    if self.heartbeats_left > 0 {
                        self.heartbeats_left -= 1;
                        self.ncfs.push_back(u64::MAX); // marker: an SPM
                        if self.heartbeats_left > 0 {
                            self.timers.set(SourceTimer::Heartbeat, now + self.cfg.heartbeat_interval);
                        }
                    }
                }
            }
        }
        if self.cascade.next_timeout().is_some_and(|t| t <= now) {
            self.cascade.handle_timeout(now);
        }
        self.after_input();
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        if let Some(seq) = self.ncfs.pop_front() {
            let size = self.cfg.control_bytes;
            self.stats.bytes_sent += size as u64;
            if seq == u64::MAX {
                self.stats.spm_sent += 1;
                return Some(self.packet(PgmHeader::SPM, self.lead, size));
            }
            self.stats.ncf_sent += 1;
            return Some(self.packet(PgmHeader::NCF, seq, size));
        }
        if !self.send_ready {
            return None;
        }
        self.send_ready = false;
        if self.cascade.silenced(self.now) {
            self.arm_send();
            return None;
        }
        let now = self.now;
        let size = self.cfg.packet_bytes;
        let pkt = if let Some(seq) = self.repairs.pop_front() {
            let idx = self.slot(seq);
            self.window[idx].repair_queued = false;
            if self.window[idx].tag != seq + 1 {
                // fell out of the window while queued
                self.arm_send();
                return None;
            }
            self.stats.rdata_sent += 1;
            self.packet(PgmHeader::RDATA, seq, size)
        } else if self.data_left() {
            let seq = self.lead;
            let idx = self.slot(seq);
            self.window[idx] = WinSlot { tag: seq + 1, sent_at: now, repair_queued: false, naked_by: 0 };
            self.lead += 1;
            self.stats.odata_sent += 1;
            self.cascade.on_send();
            if !self.data_left() && self.heartbeats_left > 0 {
                self.timers.set(SourceTimer::Heartbeat, now + self.cfg.heartbeat_interval);
            }
            // the lead in the header counts this packet
            self.packet(PgmHeader::ODATA, seq, size)
        } else {
            return None;
        };
        self.stats.bytes_sent += size as u64;
        // at least the clock's 1 ns, however far an unbounded rate has grown
        let gap = Duration::from_secs_f64(size as f64 * 8.0 / self.cascade.rate_bps()).max(Duration::from_nanos(1));
        self.next_send = now + gap;
        self.arm_send();
        Some(pkt)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.stopped {
            return None;
        }
        match (self.timers.next(), self.cascade.next_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        // with traces off, rate changes are not reported: they are rows of the rate timeline
        let trace = self.cascade.config().trace.on();
        self.pending_event.take().filter(|_| trace).map(|rate_bps| AgentEvent::RateChanged { rate_bps })
    }
}
