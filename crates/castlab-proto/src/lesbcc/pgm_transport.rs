//! The simplified PGM transport LE-SBCC runs on (Thapliyal et al. §5.1): the receiver side
//! ([`PgmReceiver`]) and LI aggregation in routers ([`NakAggregator`], §3.3).
//!
//! The source side (transmit window, ODATA, RDATA, NCF) is in [`crate::lesbcc::LesbccSource`].
//! As §5.1 lists it: no SPMs (the transmit window travels in every packet the source sends,
//! [`castlab_core::PgmHeader`]); a receive window at each receiver; a receiver that sees a gap
//! waits a random back-off, uniform on [0, max] (default 100 ms, §5.2.1), then unicasts a NAK
//! to the source, unless an NCF or the repair for that sequence number arrived meanwhile. Each
//! NAK is one loss indication (LI) for the source's cascade.
//!
//! The retry intervals after a NAK (waiting for the NCF, then for the repair) follow PGM's
//! NAK_RPT_IVL and NAK_RDATA_IVL (RFC 3208 §6.3); neither the paper nor the RFC gives values,
//! the defaults are chosen from what the RFC says the intervals are for (see the fields).

use core::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use castlab_core::{
    Addr, Agent, AgentEvent, ChannelId, ConfigError, Dest, Duration, GroupId, Header, Instant, NetView, NodeId, Packet,
    PgmHeader, Rng, RouterExtension, StartInfo, Verdict,
};

/// Parameters of a PGM receiver.
#[derive(Clone, Debug, PartialEq)]
pub struct PgmReceiverConfig {
    /// Upper end of the uniform NAK back-off. Default 100 ms (§5.2.1, "Receiver maximum random
    /// backoff before sending NAK's").
    pub nak_backoff_max: Duration,
    /// After sending a NAK, wait this long for an NCF or the repair before backing off again
    /// (PGM NAK_RPT_IVL). Paper and RFC 3208 silent on the value: 2 s, our choice. RFC 3208
    /// §6.3 makes it the wait for the matching NCF, so it must exceed the longest NAK-to-NCF
    /// round trip; otherwise the receiver repeats NAKs whose NCF is still on its way, and each
    /// repeat is one more LI for the cascade. The paper's longest round trip is §5.2.1's 500 ms
    /// of propagation plus a full bottleneck queue (`lesbcc-fig21-sim`: 50 packets of 1500 bytes
    /// at 1 Mb/s, 0.6 s more): 2 s covers it, and is what OpenPGM's example receivers use.
    pub nak_rpt_ivl: Duration,
    /// After an NCF, wait this long for the repair before backing off again (PGM
    /// NAK_RDATA_IVL). Paper and RFC 3208 silent on the value: 2 s, our choice. RFC 3208 §6.3
    /// makes it the wait for the repair once the NAK is confirmed; the LE-SBCC source holds
    /// repairs back through the ATF's silence period (½(SRTT + 4σ), §2.1) and paces them at its
    /// rate, so the repair comes a round trip plus up to a silence period after the NCF. 2 s
    /// covers that at §5.2.1's round trip, and is what OpenPGM's example receivers use; it
    /// also leaves NAK aggregation's elimination interval (0.5 s) the "small fraction" of it
    /// that RFC 3208 §7.4 asks of NAK_ELIM_IVL.
    pub nak_rdata_ivl: Duration,
    /// An NCF for a sequence number in back-off cancels this receiver's NAK for it (PGM NAK
    /// suppression, §5.2.1). Default on.
    pub ncf_suppression: bool,
    /// NAK size on the wire, bytes. Paper silent: 40.
    pub nak_bytes: u32,
    /// Receive window, packets: gaps further than this behind the newest sequence number are
    /// given up. Paper silent: 16384. It costs no memory up front: the receiver keeps only the
    /// sequence numbers missing in it.
    pub receive_window_pkts: usize,
}

impl Default for PgmReceiverConfig {
    fn default() -> Self {
        PgmReceiverConfig {
            nak_backoff_max: Duration::from_millis(100),
            nak_rpt_ivl: Duration::from_secs(2),
            nak_rdata_ivl: Duration::from_secs(2),
            ncf_suppression: true,
            nak_bytes: 40,
            receive_window_pkts: 1 << 14,
        }
    }
}

impl PgmReceiverConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        use castlab_core::config::check::{int_in, nonzero};
        nonzero("nak_rpt_ivl", self.nak_rpt_ivl)?;
        nonzero("nak_rdata_ivl", self.nak_rdata_ivl)?;
        int_in("nak_bytes", self.nak_bytes.into(), 1, u32::MAX.into())?;
        int_in("receive_window_pkts", self.receive_window_pkts as u64, 1, 1 << 24)?;
        Ok(())
    }
}

castlab_core::config_fields!(PgmReceiverConfig {
    nak_backoff_max,
    nak_rpt_ivl,
    nak_rdata_ivl,
    ncf_suppression,
    nak_bytes,
    receive_window_pkts,
});

/// Counters of a [`PgmReceiver`]. Fields in declaration order (`repr(C)`): the ones every
/// packet writes first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct ReceiverStats {
    pub odata: u64,
    pub rdata: u64,
    pub ncf: u64,
    pub spm: u64,
    /// Data packets already held (or below the window).
    pub duplicates: u64,
    /// Distinct sequence numbers received.
    pub unique: u64,
    /// Gaps detected (sequence numbers found missing).
    pub gaps: u64,
    /// Gaps filled by RDATA (or a late ODATA).
    pub repaired: u64,
    pub naks_sent: u64,
    /// NAKs cancelled in back-off by a matching NCF.
    pub naks_suppressed_ncf: u64,
    /// NAKs cancelled in back-off because the repair arrived first.
    pub naks_cancelled_repair: u64,
    /// Sequence numbers given up (fell out of the source's or the receive window).
    pub unrecoverable: u64,
    /// Packets not of this session: counted and ignored.
    pub ignored: u64,
    /// Restarts of the source (a new incarnation, told by the driver): each dropped the
    /// receive window of the old one.
    pub source_restarts: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotState {
    Received,
    /// Missing, NAK back-off running.
    Backoff,
    /// NAK sent, waiting for an NCF or the repair.
    WaitNcf,
    /// NCF seen, waiting for the repair.
    WaitData,
}

/// A sequence number of the receive window that went missing: its NAK state, or `Received`
/// once the repair came (until the trail passes it).
#[derive(Clone, Copy, Debug)]
struct Missing {
    seq: u64,
    state: SlotState,
    deadline: Instant,
}

/// A PGM receiver: receive window, gap detection, NAK back-off and suppression, repair.
///
/// The receive window [`rx_trail`, `lead`) is kept as the sequence numbers that went missing
/// in it (in order; those repaired since stay, marked received, until the trail passes them):
/// every other sequence number of the window is held. Memory grows with the losses in the
/// window, not with the window's size; an NCF or a duplicate for a sequence number the receiver
/// holds is answered from the window's edges, or from the missing list, without any state per
/// sequence number.
///
/// Fields in declaration order (`repr(C)`, aligned to a cache line): what every packet reads
/// and writes (the window, the deadline, the flags, the first counters) lies in the first three
/// cache lines, so that a receiver among thousands, each handed every NCF, costs three lines
/// per packet (a layout test checks it).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct PgmReceiver {
    /// Lowest sequence number not yet received (and not given up).
    rx_trail: u64,
    /// One past the highest sequence number known to exist.
    lead: u64,
    /// The earliest entry of `timers` (what `poll_timeout` returns), kept here so that a
    /// packet reads it without the heap.
    next: Option<Instant>,
    /// The window's missing sequence numbers, ascending, all in [rx_trail, lead).
    missing: VecDeque<Missing>,
    naks: VecDeque<u64>,
    /// When the receiver last became complete up to the source's lead (all data held).
    pub complete_at: Option<Instant>,
    /// `cfg.receive_window_pkts`.
    window: u64,
    flow: u32,
    started: bool,
    joined: bool,
    /// Told to stop ([`Agent::handle_shutdown`]), and whether its group was left since.
    stopped: bool,
    left: bool,
    source: Option<Addr>,
    /// The last packet queued nothing and left the deadline as it was (`quiet_after_packet`).
    quiet: bool,
    /// `cfg.ncf_suppression`.
    ncf_suppression: bool,
    pub stats: ReceiverStats,
    timers: BinaryHeap<Reverse<(Instant, u64)>>,
    cfg: PgmReceiverConfig,
    group: Option<GroupId>,
    rng: Rng,
}

impl PgmReceiver {
    /// A receiver of session `flow`, joining `group` (multicast) or listening on its port
    /// (unicast, `group` None). The error names the bad configuration field.
    pub fn try_new(group: Option<GroupId>, flow: u32, cfg: PgmReceiverConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(PgmReceiver {
            rx_trail: 0,
            lead: 0,
            next: None,
            missing: VecDeque::new(),
            naks: VecDeque::new(),
            complete_at: None,
            window: cfg.receive_window_pkts as u64,
            flow,
            started: false,
            joined: false,
            stopped: false,
            left: false,
            source: None,
            quiet: false,
            ncf_suppression: cfg.ncf_suppression,
            stats: ReceiverStats::default(),
            timers: BinaryHeap::new(),
            cfg,
            group,
            rng: Rng::seed_from_u64(0),
        })
    }

    pub fn config(&self) -> &PgmReceiverConfig {
        &self.cfg
    }
    /// Every sequence number below this has been received (or given up).
    pub fn rx_trail(&self) -> u64 {
        self.rx_trail
    }
    /// One past the highest sequence number the receiver knows the source has sent.
    pub fn lead(&self) -> u64 {
        self.lead
    }
    /// All data the source announced has arrived (nothing missing, nothing given up).
    pub fn is_complete(&self) -> bool {
        self.started && self.rx_trail == self.lead && self.stats.unrecoverable == 0
    }
    /// Whether sequence number `seq` is held (or was, below the trail).
    pub fn has(&self, seq: u64) -> bool {
        if seq < self.rx_trail {
            return true;
        }
        if seq >= self.lead {
            return false;
        }
        match self.find(seq) {
            Some(k) => self.missing[k].state == SlotState::Received,
            None => true,
        }
    }
    /// Sequence numbers currently missing (in back-off or waiting).
    pub fn missing(&self) -> u64 {
        self.missing.iter().filter(|m| m.state != SlotState::Received).count() as u64
    }

    /// Where `seq` is in the missing list: O(1) when it lies outside the list's range (the
    /// list's length and edges), else a binary search over the window's losses.
    fn find(&self, seq: u64) -> Option<usize> {
        let (first, last) = (self.missing.front()?, self.missing.back()?);
        if seq < first.seq || seq > last.seq {
            return None;
        }
        self.missing.binary_search_by_key(&seq, |m| m.seq).ok()
    }

    fn backoff(&mut self, now: Instant) -> Instant {
        let max = self.cfg.nak_backoff_max.as_secs_f64();
        now + Duration::from_secs_f64(self.rng.uniform_range(0.0, max))
    }

    /// Put the missing sequence number at `k` of the list into `state` until `deadline`.
    fn set_state(&mut self, k: usize, state: SlotState, deadline: Instant) {
        let m = &mut self.missing[k];
        m.state = state;
        m.deadline = deadline;
        if state != SlotState::Received {
            let seq = m.seq;
            self.arm(deadline, seq);
        }
    }

    /// A timer entry for `seq` at `at` (entries left behind by a state change are skipped
    /// when they come up).
    fn arm(&mut self, at: Instant, seq: u64) {
        self.timers.push(Reverse((at, seq)));
        if self.next.is_none_or(|t| at < t) {
            self.next = Some(at);
        }
    }

    /// Give up everything below `to` that is missing; advance the trail.
    fn give_up_below(&mut self, to: u64) {
        if to <= self.rx_trail {
            return;
        }
        while let Some(m) = self.missing.front().copied().filter(|m| m.seq < to) {
            if m.state != SlotState::Received {
                self.stats.unrecoverable += 1;
            }
            self.missing.pop_front();
        }
        // sequence numbers not yet known to exist are missing too
        self.stats.unrecoverable += to.saturating_sub(self.rx_trail.max(self.lead));
        self.rx_trail = to;
        if self.lead < self.rx_trail {
            self.lead = self.rx_trail;
        }
    }

    /// Advance the trail over held sequence numbers, to the first missing one or the lead.
    fn advance_trail(&mut self) {
        while self.missing.front().is_some_and(|m| m.state == SlotState::Received) {
            self.missing.pop_front();
        }
        self.rx_trail = self.missing.front().map_or(self.lead, |m| m.seq);
    }

    /// Window information from any source packet: sequence numbers below the source's trail
    /// are given up, new ones up to its lead start their NAK back-off (except `except`, the
    /// data packet being delivered).
    fn on_window(&mut self, now: Instant, trail: u64, lead: u64, except: Option<u64>) {
        if !self.started {
            // The receive window starts at the oldest data the source can still repair.
            self.started = true;
            self.rx_trail = trail;
            self.lead = trail;
        }
        if trail > self.rx_trail {
            self.give_up_below(trail);
        }
        let w = self.window;
        if lead > self.rx_trail + w {
            // the receive window cannot hold the gap: give up the oldest
            self.give_up_below(lead - w);
        }
        while self.lead < lead {
            let q = self.lead;
            self.lead += 1;
            if Some(q) == except {
                continue;
            }
            self.stats.gaps += 1;
            let at = self.backoff(now);
            self.missing.push_back(Missing { seq: q, state: SlotState::Backoff, deadline: at });
            self.arm(at, q);
        }
    }

    fn on_data(&mut self, now: Instant, seq: u64, h: &PgmHeader) {
        // beyond the lead it is new: the window below takes it as held
        let fresh = !self.started || seq >= self.lead;
        let trail = if self.started { h.trail } else { h.trail.min(seq) };
        self.on_window(now, trail, h.lead.max(seq + 1), Some(seq));
        if seq < self.rx_trail {
            self.stats.duplicates += 1;
            return;
        }
        if !fresh {
            let k = match self.find(seq) {
                Some(k) if self.missing[k].state != SlotState::Received => k,
                _ => {
                    self.stats.duplicates += 1;
                    return;
                }
            };
            if self.missing[k].state == SlotState::Backoff {
                self.stats.naks_cancelled_repair += 1;
            }
            self.stats.repaired += 1;
            self.set_state(k, SlotState::Received, now);
        }
        self.stats.unique += 1;
        self.advance_trail();
    }

    fn on_ncf(&mut self, now: Instant, seq: u64, h: &PgmHeader) {
        if !self.started {
            // an NCF answers someone else's NAK: no place to start a receive window from
            return;
        }
        self.on_window(now, h.trail, h.lead, None);
        if seq < self.rx_trail || seq >= self.lead {
            return;
        }
        // held (not in the missing list) in O(1) as a rule: the list is empty or `seq` lies
        // outside it
        let Some(k) = self.find(seq) else { return };
        match self.missing[k].state {
            SlotState::Backoff if self.ncf_suppression => {
                self.stats.naks_suppressed_ncf += 1;
                self.set_state(k, SlotState::WaitData, now + self.cfg.nak_rdata_ivl);
            }
            SlotState::WaitNcf => self.set_state(k, SlotState::WaitData, now + self.cfg.nak_rdata_ivl),
            _ => {}
        }
    }

    fn check_complete(&mut self, now: Instant) {
        if self.rx_trail == self.lead && self.started {
            if self.complete_at.is_none() {
                self.complete_at = Some(now);
            }
        } else {
            self.complete_at = None;
        }
    }

    fn on_packet(&mut self, now: Instant, p: &Packet) {
        if self.stopped {
            self.stats.ignored += 1;
            return;
        }
        let h = match p.header {
            Header::Pgm(h) if p.flow == self.flow => h,
            _ => {
                self.stats.ignored += 1;
                return;
            }
        };
        if h.kind == PgmHeader::NAK {
            self.stats.ignored += 1;
            return;
        }
        self.source = Some(p.src);
        match h.kind {
            PgmHeader::ODATA => {
                self.stats.odata += 1;
                self.on_data(now, p.seq, &h);
            }
            PgmHeader::RDATA => {
                self.stats.rdata += 1;
                self.on_data(now, p.seq, &h);
            }
            PgmHeader::NCF => {
                self.stats.ncf += 1;
                self.on_ncf(now, p.seq, &h);
            }
            _ => {
                self.stats.spm += 1;
                self.on_window(now, h.trail, h.lead, None);
            }
        }
        self.check_complete(now);
    }
}

impl Agent for PgmReceiver {
    fn handle_start(&mut self, _now: Instant, info: StartInfo) {
        self.rng = info.rng;
    }

    /// The source restarted: a new transmit window whose sequence numbers start afresh
    /// (RFC 3208 would give it a new TSI, a new session). The receive window of the old one
    /// is dropped, NAKs and repairs pending for it included, so no NAK names the old sequence
    /// space; the window starts again at the next source packet, as at a late join. The
    /// counters stay.
    fn handle_peer_restart(&mut self, _now: Instant, node: NodeId) {
        if self.source.map(|a| a.node) != Some(node) {
            return;
        }
        self.started = false;
        self.rx_trail = 0;
        self.lead = 0;
        self.missing.clear();
        self.timers.clear();
        self.next = None;
        self.naks.clear();
        self.complete_at = None;
        self.stats.source_restarts += 1;
    }

    /// Told to stop: the receiver simply stops (RFC 3208 asks nothing of a departing
    /// receiver): no more NAKs, its timers dropped, its group left; its counters stay.
    fn handle_shutdown(&mut self, _now: Instant) {
        self.stopped = true;
        self.timers.clear();
        self.next = None;
        self.naks.clear();
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        // a driver polled after the previous call, or skipped the polls of a quiet one: either
        // way it has seen this deadline
        let deadline = self.poll_timeout();
        self.on_packet(now, p);
        let no_event = self.joined && (!self.stopped || self.left);
        self.quiet = self.naks.is_empty() && no_event && self.poll_timeout() == deadline;
    }

    fn quiet_after_packet(&self) -> bool {
        self.quiet
    }

    fn handle_timeout(&mut self, now: Instant) {
        while let Some(&Reverse((t, seq))) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            if seq < self.rx_trail || seq >= self.lead {
                continue;
            }
            let Some(k) = self.find(seq) else { continue }; // held: a stale entry
            let m = self.missing[k];
            if m.deadline != t {
                continue; // stale entry
            }
            match m.state {
                SlotState::Backoff => {
                    // back-off over, no NCF or repair: send the NAK
                    self.naks.push_back(seq);
                    self.stats.naks_sent += 1;
                    self.set_state(k, SlotState::WaitNcf, now + self.cfg.nak_rpt_ivl);
                }
                SlotState::WaitNcf | SlotState::WaitData => {
                    // no NCF / no repair in time: back off again
                    let at = self.backoff(now);
                    self.set_state(k, SlotState::Backoff, at);
                }
                SlotState::Received => {}
            }
        }
        self.next = self.timers.peek().map(|r| r.0 .0);
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        let src = self.source?;
        let seq = self.naks.pop_front()?;
        let mut p = Packet::data(Dest::Unicast(src), self.cfg.nak_bytes);
        p.flow = self.flow;
        p.seq = seq;
        p.header = Header::Pgm(PgmHeader { kind: PgmHeader::NAK, trail: self.rx_trail, lead: self.lead });
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        if !self.joined {
            self.joined = true;
            if let Some(g) = self.group {
                return Some(AgentEvent::Join(g));
            }
        }
        if self.stopped && !self.left {
            self.left = true;
            if let Some(g) = self.group {
                return Some(AgentEvent::Leave(g));
            }
        }
        None
    }
}

// ------------------------------------------------------------------------------------------
// LI aggregation in routers (§3.3)
// ------------------------------------------------------------------------------------------

/// Counters of a [`NakAggregator`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AggregatorStats {
    /// NAKs forwarded toward the source (the first per sequence number in an elimination
    /// interval).
    pub naks_forwarded: u64,
    /// NAKs eliminated (a NAK for the same session and sequence number went up less than the
    /// elimination interval ago).
    pub naks_suppressed: u64,
    /// Of `naks_suppressed`, those that arrived after the repair (RDATA) for their sequence
    /// number had already passed this router: NAKs that crossed the repair.
    pub naks_suppressed_after_repair: u64,
    /// Repairs (RDATA) seen passing.
    pub repairs_seen: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct AggSlot {
    tag: u64,
    /// When the NAK that opened the elimination interval was forwarded.
    at: Instant,
    /// The repair of this sequence number has passed since.
    repaired: bool,
}

/// PGM-style NAK aggregation at a router (§3.3): the first NAK per (session, sequence number)
/// is forwarded and opens a NAK elimination interval of `hold`; every further NAK for it in
/// that interval is consumed, whether or not the repair has passed meanwhile. PGM network
/// elements eliminate duplicates for NAK_ELIM_IVL this way (RFC 3208 §7), and §3.3 needs it:
/// the worst receiver's LIs are suppressed because its longer RTT makes its NAKs arrive after
/// the other receivers' NAKs for the same losses, by which time the repair, sent at once by
/// the source, has usually passed the router already. (Clearing the state when the repair
/// passes forwarded exactly those late NAKs.) The interval also ends the state of a repair lost
/// upstream. Paper silent on its length: 0.5 s by default, shorter than the receivers'
/// NAK_RDATA_IVL (2 s), as PGM requires of NAK_ELIM_IVL, so that a receiver's repeat after a
/// lost repair still goes up. Attach it to the routers that aggregate: none, some ("partial")
/// or all ("complete"), as §3.3 uses it.
#[derive(Debug)]
pub struct NakAggregator {
    hold: Duration,
    size: usize,
    /// Per session (flow): a ring of slots indexed by seq.
    flows: Vec<(u32, Vec<AggSlot>)>,
    pub stats: AggregatorStats,
}

impl NakAggregator {
    pub fn new(hold: Duration) -> Self {
        NakAggregator { hold, size: 1 << 14, flows: Vec::new(), stats: AggregatorStats::default() }
    }

    fn ring(&mut self, flow: u32) -> &mut Vec<AggSlot> {
        let k = match self.flows.iter().position(|(f, _)| *f == flow) {
            Some(k) => k,
            None => {
                self.flows.push((flow, vec![AggSlot::default(); self.size]));
                self.flows.len() - 1
            }
        };
        &mut self.flows[k].1
    }

    /// Decide for one NAK: true = forward it.
    pub fn offer_nak(&mut self, now: Instant, flow: u32, seq: u64) -> bool {
        let hold = self.hold;
        let size = self.size as u64;
        let ring = self.ring(flow);
        let s = &mut ring[(seq % size) as usize];
        if s.tag == seq + 1 && now.saturating_since(s.at) < hold {
            let crossed = s.repaired;
            self.stats.naks_suppressed += 1;
            if crossed {
                self.stats.naks_suppressed_after_repair += 1;
            }
            false
        } else {
            *s = AggSlot { tag: seq + 1, at: now, repaired: false };
            self.stats.naks_forwarded += 1;
            true
        }
    }

    /// A repair for (flow, seq) passed. The elimination interval goes on (NAKs that crossed the
    /// repair are still eliminated); the slot only notes it.
    pub fn on_repair(&mut self, flow: u32, seq: u64) {
        let size = self.size as u64;
        if let Some(k) = self.flows.iter().position(|(f, _)| *f == flow) {
            let s = &mut self.flows[k].1[(seq % size) as usize];
            if s.tag == seq + 1 {
                s.repaired = true;
            }
        }
        self.stats.repairs_seen += 1;
    }
}

impl RouterExtension for NakAggregator {
    fn on_arrival(&mut self, now: Instant, pkt: &mut Packet, _from: Option<ChannelId>, net: &dyn NetView) -> Verdict {
        let Header::Pgm(h) = pkt.header else { return Verdict::Forward };
        match h.kind {
            PgmHeader::NAK => {
                // only NAKs passing through (not those addressed to this node)
                if matches!(pkt.dst, Dest::Unicast(a) if a.node == net.node()) {
                    return Verdict::Forward;
                }
                if self.offer_nak(now, pkt.flow, pkt.seq) {
                    Verdict::Forward
                } else {
                    Verdict::Consume
                }
            }
            PgmHeader::RDATA => {
                self.on_repair(pkt.flow, pkt.seq);
                Verdict::Forward
            }
            _ => Verdict::Forward,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Driver;
    use castlab_core::NodeId;

    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }

    fn src_pkt(kind: castlab_core::PgmKind, seq: u64, lead: u64) -> Packet {
        let mut p = Packet::data(Dest::Group(GroupId(0)), 560);
        p.src = Addr::new(NodeId(0), 1);
        p.flow = 7;
        p.seq = seq;
        p.header = Header::Pgm(PgmHeader { kind, trail: 0, lead });
        p
    }

    fn receiver(cfg: PgmReceiverConfig, seed: u64) -> Driver<PgmReceiver> {
        let r = PgmReceiver::try_new(Some(GroupId(0)), 7, cfg).expect("valid config");
        let info = StartInfo { addr: Addr::new(NodeId(3), 1), rng: Rng::seed_from_u64(seed) };
        let d = Driver::start_with(r, Instant::ZERO, info);
        assert_eq!(d.events, vec![(Instant::ZERO, AgentEvent::Join(GroupId(0)))]);
        d
    }

    /// The sequence numbers of the NAKs sent since the last call (`seen` packets were read
    /// before); each is a NAK unicast to the source.
    fn naks(d: &Driver<PgmReceiver>, seen: &mut usize) -> Vec<u64> {
        let v = d.sent[*seen..]
            .iter()
            .map(|(_, p)| {
                assert!(matches!(p.header, Header::Pgm(h) if h.kind == PgmHeader::NAK));
                assert_eq!(p.dst, Dest::Unicast(Addr::new(NodeId(0), 1)));
                p.seq
            })
            .collect();
        *seen = d.sent.len();
        v
    }

    /// Fire the receiver's timers one by one, each at its deadline, until `stop` says so or
    /// none is left.
    fn fire_until(r: &mut Driver<PgmReceiver>, mut stop: impl FnMut(&Driver<PgmReceiver>) -> bool) {
        for _ in 0..10_000 {
            if stop(r) {
                return;
            }
            let Some(t) = r.agent.poll_timeout() else { return };
            r.advance_to(t.max(r.now));
        }
        panic!("timers never stop");
    }

    #[test]
    fn what_every_packet_touches_lies_in_a_receivers_first_three_cache_lines() {
        use std::mem::{offset_of, size_of};
        let end = |off: usize, size: usize| off + size;
        let hot = [
            end(offset_of!(PgmReceiver, missing), size_of::<VecDeque<Missing>>()),
            end(offset_of!(PgmReceiver, next), size_of::<Option<Instant>>()),
            end(offset_of!(PgmReceiver, naks), size_of::<VecDeque<u64>>()),
            end(offset_of!(PgmReceiver, complete_at), size_of::<Option<Instant>>()),
            end(offset_of!(PgmReceiver, source), size_of::<Option<Addr>>()),
            end(offset_of!(PgmReceiver, ncf_suppression), 1),
            end(offset_of!(PgmReceiver, stats) + offset_of!(ReceiverStats, unique), 8),
        ];
        for h in hot {
            assert!(h <= 3 * 64, "{hot:?}");
        }
        assert_eq!(std::mem::align_of::<PgmReceiver>(), 64);
    }

    #[test]
    fn told_to_stop_a_receiver_naks_no_more_and_leaves_its_group() {
        let mut r = receiver(PgmReceiverConfig::default(), 1);
        r.packet(ms(0), &src_pkt(PgmHeader::ODATA, 0, 1));
        r.packet(ms(10), &src_pkt(PgmHeader::ODATA, 3, 4)); // 1 and 2 missing: NAKs in back-off
        assert!(r.agent.poll_timeout().is_some());
        r.shutdown(ms(11));
        assert_eq!(r.events.last(), Some(&(ms(11), AgentEvent::Leave(GroupId(0)))));
        assert_eq!(r.agent.poll_timeout(), None);
        let odata = r.agent.stats.odata;
        r.packet(ms(20), &src_pkt(PgmHeader::ODATA, 4, 5));
        r.advance_to(ms(10_000));
        assert!(r.sent.is_empty(), "no NAK after the stop: {:?}", r.sent);
        assert_eq!(r.agent.stats.odata, odata);
        r.shutdown(ms(10_001));
        assert_eq!(r.events.len(), 2, "joined once, left once");
    }

    #[test]
    fn gap_naks_after_a_backoff_within_the_maximum() {
        let mut r = receiver(PgmReceiverConfig::default(), 1);
        let k = &mut 0;
        r.packet(ms(0), &src_pkt(PgmHeader::ODATA, 0, 1));
        r.packet(ms(10), &src_pkt(PgmHeader::ODATA, 3, 4)); // 1 and 2 missing
        assert_eq!(r.agent.stats.gaps, 2);
        assert!(naks(&r, k).is_empty());
        let t = r.agent.poll_timeout().unwrap();
        assert!(t >= ms(10) && t <= ms(110), "back-off on [0, 100 ms]: {t:?}");
        r.advance_to(ms(110));
        let mut sent = naks(&r, k);
        sent.sort();
        assert_eq!(sent, vec![1, 2]);
        assert!(r.sent.iter().all(|(t, _)| (ms(10)..=ms(110)).contains(t)), "{:?}", r.sent);
        assert_eq!(r.agent.stats.naks_sent, 2);
        // repairs complete the data
        r.packet(ms(150), &src_pkt(PgmHeader::RDATA, 2, 4));
        r.packet(ms(151), &src_pkt(PgmHeader::RDATA, 1, 4));
        assert!(r.agent.is_complete());
        assert_eq!(r.agent.rx_trail(), 4);
        assert_eq!(r.agent.stats.repaired, 2);
        assert_eq!(r.agent.stats.unique, 4);
    }

    #[test]
    fn a_source_restart_drops_the_old_window_and_naks_only_the_new_sequence_space() {
        let mut r = receiver(PgmReceiverConfig::default(), 2);
        for q in 0..50 {
            r.packet(ms(q), &src_pkt(PgmHeader::ODATA, q, q + 1));
        }
        r.packet(ms(60), &src_pkt(PgmHeader::ODATA, 53, 54)); // 50..=52 missing, in back-off
        assert_eq!(r.agent.stats.gaps, 3);
        // another node's restart (a fellow receiver) changes nothing
        r.peer_restart(ms(61), NodeId(5));
        assert_eq!((r.agent.rx_trail(), r.agent.lead()), (50, 54));
        // the source restarts and counts from 0 again
        r.peer_restart(ms(62), NodeId(0));
        let k = &mut r.sent.len();
        assert_eq!(r.agent.stats.source_restarts, 1);
        assert_eq!(r.agent.poll_timeout(), None, "the old back-offs are gone");
        r.packet(ms(70), &src_pkt(PgmHeader::ODATA, 0, 1));
        r.packet(ms(71), &src_pkt(PgmHeader::ODATA, 2, 3)); // 1 missing in the new space
        assert_eq!(r.agent.stats.duplicates, 0, "the new packets are new, not old ones");
        assert_eq!(r.agent.stats.unique, 51 + 2);
        fire_until(&mut r, |r| r.sent.len() > *k);
        assert_eq!(naks(&r, k), vec![1], "a NAK for the new sequence space only");
    }

    #[test]
    fn ncf_in_backoff_suppresses_the_nak() {
        for seed in 0..20 {
            let mut r = receiver(PgmReceiverConfig::default(), seed);
            r.packet(ms(0), &src_pkt(PgmHeader::ODATA, 0, 1));
            r.packet(ms(1), &src_pkt(PgmHeader::ODATA, 2, 3)); // 1 missing
            let t = r.agent.poll_timeout().unwrap();
            // another receiver's NAK was confirmed before our back-off ends
            let at = Instant::from_nanos((ms(1).as_nanos() + t.as_nanos()) / 2);
            if at >= t {
                continue;
            }
            r.packet(at, &src_pkt(PgmHeader::NCF, 1, 3));
            assert_eq!(r.agent.stats.naks_suppressed_ncf, 1);
            // the back-off deadline passes without a NAK
            r.advance_to(t);
            assert!(r.sent.is_empty());
            assert_eq!(r.agent.stats.naks_sent, 0);
            // the repair arrives: complete, still no NAK
            r.packet(t.max(at + Duration::from_millis(20)), &src_pkt(PgmHeader::RDATA, 1, 3));
            assert!(r.agent.is_complete());
            fire_until(&mut r, |_| false);
            assert!(r.sent.is_empty());
        }
        // with suppression off, the NAK still goes
        let cfg = PgmReceiverConfig { ncf_suppression: false, ..PgmReceiverConfig::default() };
        let mut r = receiver(cfg, 1);
        r.packet(ms(0), &src_pkt(PgmHeader::ODATA, 0, 1));
        r.packet(ms(1), &src_pkt(PgmHeader::ODATA, 2, 3));
        r.packet(ms(1), &src_pkt(PgmHeader::NCF, 1, 3));
        let t = r.agent.poll_timeout().unwrap();
        r.advance_to(t);
        assert_eq!(naks(&r, &mut 0), vec![1]);
    }

    #[test]
    fn unanswered_nak_is_repeated_and_repair_cancels_backoff() {
        let cfg = PgmReceiverConfig { nak_rpt_ivl: Duration::from_millis(500), ..PgmReceiverConfig::default() };
        let mut r = receiver(cfg, 4);
        let k = &mut 0;
        r.packet(ms(0), &src_pkt(PgmHeader::ODATA, 0, 1));
        r.packet(ms(1), &src_pkt(PgmHeader::ODATA, 2, 3));
        fire_until(&mut r, |r| r.now >= ms(2000));
        let count = naks(&r, k).len();
        // NAK, then after NAK_RPT_IVL (500 ms) + back-off another: 3 or 4 in 2 s
        assert!((3..=4).contains(&count), "{count}");
        // a lost tail is found from the window in an NCF/SPM
        let now = r.now;
        r.packet(now, &src_pkt(PgmHeader::SPM, 3, 6));
        assert_eq!(r.agent.lead(), 6);
        assert_eq!(r.agent.missing(), 4); // 1, 3, 4, 5
                                          // the repair of 3 arrives while its NAK back-off runs: the NAK is cancelled
        r.packet(now, &src_pkt(PgmHeader::RDATA, 3, 6));
        assert_eq!(r.agent.stats.naks_cancelled_repair, 1);
        assert_eq!(r.agent.missing(), 3);
        r.advance_to(now + Duration::from_millis(101));
        let sent = naks(&r, k);
        assert!(sent.contains(&4) && sent.contains(&5) && !sent.contains(&3), "{sent:?}");
    }

    #[test]
    fn aggregator_eliminates_naks_for_an_interval_even_after_the_repair() {
        let mut a = NakAggregator::new(Duration::from_millis(500));
        assert!(a.offer_nak(ms(0), 7, 10));
        assert!(!a.offer_nak(ms(5), 7, 10));
        assert!(!a.offer_nak(ms(6), 7, 10));
        assert!(a.offer_nak(ms(6), 7, 11), "another sequence number");
        assert!(a.offer_nak(ms(6), 8, 10), "another session");
        // the repair passes 10 ms after the first NAK; a slower receiver's NAK for the same
        // loss (longer RTT, §3.3) crosses it and must still be eliminated
        a.on_repair(7, 10);
        assert!(!a.offer_nak(ms(60), 7, 10), "a NAK that crossed the repair is eliminated");
        assert!(!a.offer_nak(ms(499), 7, 10));
        assert_eq!(a.stats.naks_suppressed_after_repair, 2);
        assert!(a.offer_nak(ms(500), 7, 10), "the interval is over: a repeat goes up");
        assert!(!a.offer_nak(ms(700), 7, 10), "and opens a new interval");
        assert_eq!(a.stats.naks_forwarded, 4);
        assert_eq!(a.stats.naks_suppressed, 5);
        assert_eq!(a.stats.repairs_seen, 1);
    }
}
