//! The receive window as one slot per sequence number (a ring of `receive_window_pkts`
//! slots allocated up front): the reference that
//! [`PgmReceiver`](super::pgm_transport::PgmReceiver)'s window, which keeps only
//! the missing sequence numbers, is checked against (`same_as_the_ring_window`). Test code.

use core::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use castlab_core::{
    Addr, Agent, AgentEvent, ConfigError, Dest, Duration, GroupId, Header, Instant, NodeId, Packet, PgmHeader, Rng,
    StartInfo,
};

use super::pgm_transport::{PgmReceiverConfig, ReceiverStats};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum SlotState {
    #[default]
    Empty,
    Received,
    /// Missing, NAK back-off running.
    Backoff,
    /// NAK sent, waiting for an NCF or the repair.
    WaitNcf,
    /// NCF seen, waiting for the repair.
    WaitData,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    /// seq + 1 (0: unused).
    tag: u64,
    state: SlotState,
    deadline: Instant,
}

/// The PGM receiver with its receive window as a ring of slots.
#[derive(Debug)]
pub struct RingReceiver {
    cfg: PgmReceiverConfig,
    group: Option<GroupId>,
    flow: u32,
    rng: Rng,
    started: bool,
    joined: bool,
    /// Told to stop ([`Agent::handle_shutdown`]), and whether its group was left since.
    stopped: bool,
    left: bool,
    source: Option<Addr>,
    /// Lowest sequence number not yet received (and not given up).
    rx_trail: u64,
    /// One past the highest sequence number known to exist.
    lead: u64,
    slots: Vec<Slot>,
    timers: BinaryHeap<Reverse<(Instant, u64)>>,
    naks: VecDeque<u64>,
    pub stats: ReceiverStats,
    /// When the receiver last became complete up to the source's lead (all data held).
    pub complete_at: Option<Instant>,
}

impl RingReceiver {
    /// A receiver of session `flow`, joining `group` (multicast) or listening on its port
    /// (unicast, `group` None). The error names the bad configuration field.
    pub fn try_new(group: Option<GroupId>, flow: u32, cfg: PgmReceiverConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let w = cfg.receive_window_pkts;
        Ok(RingReceiver {
            group,
            flow,
            rng: Rng::seed_from_u64(0),
            started: false,
            joined: false,
            stopped: false,
            left: false,
            source: None,
            rx_trail: 0,
            lead: 0,
            slots: vec![Slot::default(); w],
            timers: BinaryHeap::with_capacity(w),
            naks: VecDeque::with_capacity(64),
            stats: ReceiverStats::default(),
            complete_at: None,
            cfg,
        })
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
        let s = &self.slots[self.idx(seq)];
        s.tag == seq + 1 && s.state == SlotState::Received
    }
    /// Sequence numbers currently missing (in back-off or waiting).
    pub fn missing(&self) -> u64 {
        (self.rx_trail..self.lead).filter(|&q| !self.has(q)).count() as u64
    }

    fn idx(&self, seq: u64) -> usize {
        (seq % self.slots.len() as u64) as usize
    }

    fn backoff(&mut self, now: Instant) -> Instant {
        let max = self.cfg.nak_backoff_max.as_secs_f64();
        now + Duration::from_secs_f64(self.rng.uniform_range(0.0, max))
    }

    fn set_state(&mut self, seq: u64, state: SlotState, deadline: Instant) {
        let i = self.idx(seq);
        self.slots[i] = Slot { tag: seq + 1, state, deadline };
        if state != SlotState::Received {
            self.timers.push(Reverse((deadline, seq)));
        }
    }

    /// Give up everything below `to` that is missing; advance the trail.
    fn give_up_below(&mut self, to: u64) {
        while self.rx_trail < to {
            let q = self.rx_trail;
            if !self.has(q) {
                self.stats.unrecoverable += 1;
            }
            let i = self.idx(q);
            self.slots[i] = Slot::default();
            self.rx_trail += 1;
        }
        if self.lead < self.rx_trail {
            self.lead = self.rx_trail;
        }
    }

    fn advance_trail(&mut self) {
        while self.rx_trail < self.lead {
            let q = self.rx_trail;
            let i = self.idx(q);
            if self.slots[i].tag == q + 1 && self.slots[i].state == SlotState::Received {
                self.slots[i] = Slot::default();
                self.rx_trail += 1;
            } else {
                break;
            }
        }
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
        let w = self.slots.len() as u64;
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
            self.set_state(q, SlotState::Backoff, at);
        }
    }

    fn on_data(&mut self, now: Instant, seq: u64, h: &PgmHeader) {
        let trail = if self.started { h.trail } else { h.trail.min(seq) };
        self.on_window(now, trail, h.lead.max(seq + 1), Some(seq));
        if seq < self.rx_trail || self.has(seq) {
            self.stats.duplicates += 1;
            return;
        }
        let i = self.idx(seq);
        let was = if self.slots[i].tag == seq + 1 { self.slots[i].state } else { SlotState::Empty };
        match was {
            SlotState::Backoff => {
                self.stats.naks_cancelled_repair += 1;
                self.stats.repaired += 1;
            }
            SlotState::WaitNcf | SlotState::WaitData => self.stats.repaired += 1,
            _ => {}
        }
        self.set_state(seq, SlotState::Received, now);
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
        let i = self.idx(seq);
        if self.slots[i].tag != seq + 1 {
            return;
        }
        match self.slots[i].state {
            SlotState::Backoff if self.cfg.ncf_suppression => {
                self.stats.naks_suppressed_ncf += 1;
                self.set_state(seq, SlotState::WaitData, now + self.cfg.nak_rdata_ivl);
            }
            SlotState::WaitNcf => self.set_state(seq, SlotState::WaitData, now + self.cfg.nak_rdata_ivl),
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
}

impl Agent for RingReceiver {
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
        self.slots.iter_mut().for_each(|s| *s = Slot::default());
        self.timers.clear();
        self.naks.clear();
        self.complete_at = None;
        self.stats.source_restarts += 1;
    }

    /// Told to stop: the receiver simply stops (RFC 3208 asks nothing of a departing
    /// receiver): no more NAKs, its timers dropped, its group left; its counters stay.
    fn handle_shutdown(&mut self, _now: Instant) {
        self.stopped = true;
        self.timers.clear();
        self.naks.clear();
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
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

    fn handle_timeout(&mut self, now: Instant) {
        while let Some(&Reverse((t, seq))) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            if seq < self.rx_trail || seq >= self.lead {
                continue;
            }
            let i = self.idx(seq);
            let s = self.slots[i];
            if s.tag != seq + 1 || s.deadline != t {
                continue; // stale entry
            }
            match s.state {
                SlotState::Backoff => {
                    // back-off over, no NCF or repair: send the NAK
                    self.naks.push_back(seq);
                    self.stats.naks_sent += 1;
                    self.set_state(seq, SlotState::WaitNcf, now + self.cfg.nak_rpt_ivl);
                }
                SlotState::WaitNcf | SlotState::WaitData => {
                    // no NCF / no repair in time: back off again
                    let at = self.backoff(now);
                    self.set_state(seq, SlotState::Backoff, at);
                }
                _ => {}
            }
        }
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
        self.timers.peek().map(|r| r.0 .0)
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

#[cfg(test)]
mod tests {
    use super::super::pgm_transport::PgmReceiver;
    use super::*;
    use crate::testing::Driver;
    use castlab_core::{PgmKind, StreamKind};
    use proptest::prelude::*;

    /// One step: milliseconds to wait (as quarters), a selector of kind and sequence number,
    /// a number, and whether the source's trail moves on.
    fn steps() -> impl Strategy<Value = Vec<(u16, u8, u64, u8)>> {
        prop::collection::vec((0u16..3000, any::<u8>(), 0u64..64, any::<u8>()), 1..400)
    }

    fn info(seed: u64) -> StartInfo {
        StartInfo { addr: Addr::new(NodeId(3), 1), rng: castlab_core::Rng::stream(seed, StreamKind::Agent, 0) }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// The receiver that keeps only its missing sequence numbers behaves as the one with a
        /// slot per sequence number: the same NAKs at the same instants, the same counters,
        /// window edges, deadlines and held sequence numbers after every step, under random
        /// data, repairs, NCFs and SPMs (out of order, duplicated, beyond a small receive
        /// window, with the source's trail moving on), NCF suppression on and off, a source
        /// restart now and then.
        #[test]
        fn same_as_the_ring_window(input in steps(), window in 1usize..40, seed in 0u64..1000,
                                   suppress in any::<bool>(), backoff_ms in 0u64..150) {
            let cfg = PgmReceiverConfig {
                receive_window_pkts: window,
                ncf_suppression: suppress,
                nak_backoff_max: Duration::from_millis(backoff_ms),
                nak_rpt_ivl: Duration::from_millis(400),
                nak_rdata_ivl: Duration::from_millis(700),
                ..PgmReceiverConfig::default()
            };
            let new = PgmReceiver::try_new(Some(GroupId(0)), 7, cfg.clone()).expect("valid");
            let old = RingReceiver::try_new(Some(GroupId(0)), 7, cfg).expect("valid");
            let mut a = Driver::start_with(new, Instant::ZERO, info(seed));
            let mut b = Driver::start_with(old, Instant::ZERO, info(seed));
            let mut t = Instant::ZERO;
            let (mut lead, mut trail) = (0u64, 0u64);
            for (dt, sel, x, tr) in input {
                t += Duration::from_millis(dt as u64 / 4);
                if sel == 255 {
                    a.peer_restart(t, NodeId(0));
                    b.peer_restart(t, NodeId(0));
                    (lead, trail) = (0, 0);
                    continue;
                }
                let kind = [PgmKind::Odata, PgmKind::Odata, PgmKind::Odata, PgmKind::Rdata, PgmKind::Ncf,
                            PgmKind::Spm][sel as usize % 6];
                let seq = if sel % 3 == 0 { lead.saturating_sub(x) } else { lead + x % 4 };
                if kind != PgmKind::Ncf && kind != PgmKind::Spm {
                    lead = lead.max(seq + 1);
                }
                if tr % 5 == 0 {
                    trail = (trail + u64::from(tr % 7)).min(lead);
                }
                let mut p = Packet::data(Dest::Group(GroupId(0)), 560);
                p.src = Addr::new(NodeId(0), 1);
                p.flow = if sel % 17 == 0 { 8 } else { 7 };
                p.seq = seq;
                p.header = Header::Pgm(PgmHeader { kind, trail, lead });
                a.packet(t, &p);
                b.packet(t, &p);
                prop_assert_eq!(a.agent.stats, b.agent.stats);
                prop_assert_eq!((a.agent.rx_trail(), a.agent.lead()), (b.agent.rx_trail(), b.agent.lead()));
                prop_assert_eq!(a.agent.poll_timeout(), b.agent.poll_timeout());
                prop_assert_eq!(a.agent.missing(), b.agent.missing());
                prop_assert_eq!(a.agent.is_complete(), b.agent.is_complete());
                prop_assert_eq!(a.agent.complete_at, b.agent.complete_at);
                for q in a.agent.rx_trail().saturating_sub(3)..a.agent.lead() + 3 {
                    prop_assert_eq!(a.agent.has(q), b.agent.has(q), "seq {}", q);
                }
                let sa: Vec<(Instant, u64, PgmHeader)> = a.sent.iter()
                    .map(|(t, p)| (*t, p.seq, match p.header { Header::Pgm(h) => h, _ => unreachable!() })).collect();
                let sb: Vec<(Instant, u64, PgmHeader)> = b.sent.iter()
                    .map(|(t, p)| (*t, p.seq, match p.header { Header::Pgm(h) => h, _ => unreachable!() })).collect();
                prop_assert_eq!(sa, sb);
            }
            a.advance_to(t + Duration::from_secs(10));
            b.advance_to(t + Duration::from_secs(10));
            prop_assert_eq!(a.agent.stats, b.agent.stats);
            prop_assert_eq!(a.sent.len(), b.sent.len());
        }
    }

    /// A packet that changes nothing a driver polls leaves the receiver quiet: data in order,
    /// an NCF or a duplicate for a held sequence number; a packet that starts a back-off with
    /// a nearer deadline does not.
    #[test]
    fn quiet_exactly_when_a_packet_changes_nothing_to_poll() {
        let cfg = PgmReceiverConfig { ncf_suppression: false, ..PgmReceiverConfig::default() };
        let mut d =
            Driver::start_with(PgmReceiver::try_new(Some(GroupId(0)), 7, cfg).expect("valid"), Instant::ZERO, info(1));
        let pkt = |kind, seq, lead| {
            let mut p = Packet::data(Dest::Group(GroupId(0)), 560);
            p.src = Addr::new(NodeId(0), 1);
            p.flow = 7;
            p.seq = seq;
            p.header = Header::Pgm(PgmHeader { kind, trail: 0, lead });
            p
        };
        let ms = |x: u64| Instant::from_nanos(x * 1_000_000);
        d.packet(ms(1), &pkt(PgmKind::Odata, 0, 1));
        d.packet(ms(2), &pkt(PgmKind::Odata, 1, 2));
        assert!(d.agent.quiet_after_packet(), "in order: nothing to poll");
        d.packet(ms(3), &pkt(PgmKind::Ncf, 0, 2));
        assert!(d.agent.quiet_after_packet(), "an NCF for a held packet");
        d.packet(ms(4), &pkt(PgmKind::Odata, 3, 4));
        assert!(!d.agent.quiet_after_packet(), "a gap: its back-off is the new deadline");
        let before = d.agent.poll_timeout();
        d.packet(ms(5), &pkt(PgmKind::Odata, 1, 4));
        assert!(d.agent.quiet_after_packet(), "a duplicate");
        assert_eq!(d.agent.poll_timeout(), before);
    }
}
