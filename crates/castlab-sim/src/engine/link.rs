//! Links: a duplex link is two simplex channels, each with its own output queue at the sending
//! node, as in ns-3's point-to-point device. A packet waits in the queue, is serialised for
//! `size / rate`, then propagates for the link's delay; optional Bernoulli loss drops it on the
//! wire after it has used the capacity.
//!
//! The link owns a packet's path from its queue to the far node, as ns-3's point-to-point
//! channel schedules the far device's receive itself: [`Simulator::enqueue`] admits it,
//! `start_tx` schedules the end of its serialisation, `tx_done` its arrival, and `arrive`
//! hands it to the far node (`Simulator::node_receive`). The events on the way are this
//! file's [`LinkEv`]s, batched here when a fan-out schedules them back to back
//! (`schedule_link`); the run loop passes them to [`Simulator::link_event`].

use castlab_core::{AgentId, ChannelId, Duration, Instant, NodeId, Packet, Rng};

use castlab_core::{Agent, Dest};

use super::class::ClassId;
use super::event::{Entry, Ev};
use super::fanout::Touch;
use super::pool::Slot;
use super::{prefetch, AgentSlot, Node, Simulator, AHEAD};
use crate::queue::{Admit, Queue, QueueConfig};

/// A link's events: one packet finishing serialisation on channel `ch` or arriving at its far
/// end, or a batch of either.
#[derive(Clone, Copy, Debug)]
pub(super) enum LinkEv {
    TxDone {
        ch: ChannelId,
        pkt: Slot,
    },
    Arrive {
        ch: ChannelId,
        pkt: Slot,
    },
    /// Several `TxDone`s of one time with no other event of that time between their `seq`s,
    /// in that order (a fan-out's copies leaving links of one rate): `Simulator::batches` holds their `(ch, pkt)`.
    TxDoneBatch {
        batch: u32,
    },
    /// Several `Arrive`s of one time with no other event of that time between their `seq`s,
    /// in that order.
    ArriveBatch {
        batch: u32,
    },
    /// A token-bucket channel's head packet may leave: its bucket holds the packet's size.
    Wake {
        ch: ChannelId,
    },
}

/// Where the last arrival on a channel was handled: the far node, its group state and the
/// member's slot and agent (a receiver's leaf), the lines the agent said its next packet
/// reads (`Agent::packet_lines`), and the channel's next arrival in its wire. Addresses only,
/// to prefetch (`Simulator::prefetch_hint`): one gone stale (the tree or the agent changed)
/// costs a wasted prefetch, never a wrong result; 0 for none. One cache line, read at every
/// event of a large run.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Hint {
    mc: usize,
    slot: usize,
    agent: usize,
    wire_front: usize,
    elsewhere: [usize; 3],
    hot_bytes: u32,
    /// The node's index (`u32::MAX`: none).
    node: u32,
}

impl Default for Hint {
    fn default() -> Self {
        Hint { mc: 0, slot: 0, agent: 0, wire_front: 0, elsewhere: [0; 3], hot_bytes: 0, node: u32::MAX }
    }
}

/// At most this much of an agent is asked for ahead of a packet (`Simulator::prefetch_hint`).
const MAX_AGENT_BYTES: usize = 1024;

/// The address of `x`, 0 for none.
#[inline(always)]
fn addr<T>(x: Option<&T>) -> usize {
    x.map_or(0, |x| x as *const T as usize)
}

/// Prefetch the line at `a` (none for 0).
#[inline(always)]
fn prefetch_addr(a: usize) {
    if a != 0 {
        prefetch(a as *const u8);
    }
}

/// A recent `TxDone` or `Arrive` that may still grow into a batch (see
/// [`Simulator::schedule_link`]).
#[derive(Clone, Copy)]
pub(super) struct LastLink {
    time: u64,
    /// The `seq` of its latest member.
    seq: u64,
    arrive: bool,
    /// Its batch, or `NO_BATCH` while it is a single event.
    batch: u32,
    /// Where the single event sits in the queue (used when it becomes a batch).
    at: (u32, u32),
}

/// How many link events may grow into batches at once: at least two, for a busy link's
/// departure, which schedules its packet's `Arrive` and then the next packet's `TxDone`,
/// alternating two times; eight, for a fan-out to idle links of up to eight rates in any order,
/// whose copies' `TxDone`s alternate between as many times (each rate's a batch of its own).
pub(super) const OPEN_LINKS: usize = 8;

const NO_BATCH: u32 = u32::MAX;
/// `Simulator::train` while no train is being built.
pub(super) const NO_TRAIN: u32 = u32::MAX;

/// One direction of a duplex link, as given by the user.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    pub rate_bps: f64,
    pub delay_s: f64,
    pub queue: QueueConfig,
    /// Bernoulli loss on the wire, a→b and b→a.
    pub loss_ab: f64,
    pub loss_ba: f64,
    /// Routing cost of each direction (1 = hop count).
    pub cost: u64,
    /// A token bucket in place of serialisation ([`TokenBucket`]), each direction; None: the
    /// packet is serialised for `size / rate`.
    pub bucket: Option<TokenBucket>,
}

impl LinkConfig {
    pub fn new(rate_bps: f64, delay_s: f64, queue: QueueConfig) -> Self {
        LinkConfig { rate_bps, delay_s, queue, loss_ab: 0.0, loss_ba: 0.0, cost: 1, bucket: None }
    }
}

/// A token-bucket channel, as Linux's tbf over a child FIFO (`sch_tbf.c`): tokens fill at the
/// link's rate up to `burst_bytes`; the head packet leaves the moment the bucket holds its
/// charged length (`size + overhead_bytes`: tbf charges `qdisc_pkt_len`, the frame with its
/// link-layer header, 14 bytes on Ethernet and veth) and reaches the far end after the
/// link's delay, with no serialisation time. While it waits for tokens the head packet stays
/// in the queue and counts toward its limit (tbf's dequeue peeks at the child and takes the
/// packet only once it conforms). A packet charged more than `burst_bytes` can never conform:
/// it is dropped on arrival and counted in `drops_forced`, as tbf's enqueue drops a packet
/// above its `max_size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    pub burst_bytes: u32,
    pub overhead_bytes: u32,
}

/// A channel's bucket state. Tokens are counted in bit-nanoseconds (bits x 10^9): `rate_bps`
/// of them accrue per nanosecond and a byte costs 8 x 10^9, so filling and spending are exact
/// integer operations that never drift.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bucket {
    /// The bucket's size in bit-nanoseconds.
    cap: u64,
    tokens: u64,
    /// When `tokens` was last brought up to date.
    at: Instant,
    overhead: u32,
    /// The head packet waits for tokens (a `Wake` is scheduled): the channel is busy with no
    /// packet on its way out.
    pub(super) waiting: bool,
}

const BIT_NS_PER_BYTE: u64 = 8 * 1_000_000_000;

impl Bucket {
    pub(super) fn new(b: TokenBucket) -> Self {
        let cap = b.burst_bytes as u64 * BIT_NS_PER_BYTE;
        // the bucket starts full, as tbf's tokens start at its buffer
        Bucket { cap, tokens: cap, at: Instant::ZERO, overhead: b.overhead_bytes, waiting: false }
    }

    /// The packet's cost in bit-nanoseconds.
    fn cost(&self, size_bytes: u32) -> u64 {
        (size_bytes as u64 + self.overhead as u64) * BIT_NS_PER_BYTE
    }

    fn fits(&self, size_bytes: u32) -> bool {
        self.cost(size_bytes) <= self.cap
    }

    /// Fill to `now`, then take a packet of `size_bytes` if the bucket holds it (true), else
    /// return false and the nanoseconds until it will (`wait`).
    fn take(&mut self, now: Instant, rate_bps: u64, size_bytes: u32, wait: &mut u64) -> bool {
        let dt = now.as_nanos().saturating_sub(self.at.as_nanos()) as u128;
        let filled = self.tokens as u128 + dt * rate_bps as u128;
        self.tokens = filled.min(self.cap as u128) as u64;
        self.at = now;
        let cost = self.cost(size_bytes);
        if self.tokens >= cost {
            self.tokens -= cost;
            true
        } else {
            *wait = (cost - self.tokens).div_ceil(rate_bps.max(1));
            false
        }
    }
}

/// Per-channel counters. Fields in declaration order (`repr(C)`): the ones every packet writes
/// first, so that they share a cache line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct ChannelStats {
    /// Packets offered to the output queue.
    pub arrivals: u64,
    pub enqueued: u64,
    /// Packets that finished serialisation.
    pub departures: u64,
    pub bytes_departed: u64,
    /// Packets that reached the far node.
    pub delivered: u64,
    pub drops_forced: u64,
    pub drops_early: u64,
    pub marked: u64,
    /// Packets lost on the wire (Bernoulli loss).
    pub lost_random: u64,
    /// Packets the sending node's extension dropped for this interface.
    pub ext_drops: u64,
    /// Packets lost because the channel went down: queued, being serialised or on the wire
    /// when it failed, or offered while it was down (see the engine's `faults`).
    pub drops_link_down: u64,
}

impl ChannelStats {
    pub fn drops(&self) -> u64 {
        self.drops_forced + self.drops_early
    }
}

/// Periodic samples of one channel.
#[derive(Clone, Debug, Default)]
pub struct ChannelSeries {
    pub interval: Duration,
    pub time_ns: Vec<u64>,
    pub qlen: Vec<u32>,
    pub qavg: Vec<f64>,
    /// Cumulative bytes that finished serialisation.
    pub bytes: Vec<u64>,
    /// Cumulative queue drops.
    pub drops: Vec<u64>,
}

/// A trace point on a channel (ns-3's device trace sources): told of every packet that finishes
/// serialisation onto the wire, before the wire's loss. Per-link pcap is one (castlab-py
/// writes the bytes the real mode would send), since the engine knows no wire format.
pub trait LinkTap: Send {
    fn on_depart(&mut self, now: Instant, from: NodeId, to: NodeId, packet: &Packet);
}

/// A channel's fields in declaration order (`repr(C)`, aligned to a cache line): every field a
/// packet's enqueue, departure and arrival read or write lies in the first three cache lines
/// (the state and failure flags, the tap's pointer, the queue, the counters a packet writes
/// first), so that at 10^6 receivers, where each fan-out walks every receiver's channel three
/// times (enqueue, departure, arrival), a channel costs three adjacent lines, not six scattered
/// ones; what only some packets or the set-up use follows.
#[repr(C, align(64))]
pub(super) struct Channel {
    pub(super) from: NodeId,
    pub(super) to: NodeId,
    pub(super) busy: bool,
    /// Failures (the engine's `faults`): the state scheduled for the link itself
    /// (`forced_down`), the state in force (`down`: forced, or an end node down), how many
    /// times it went down (`downs`: grafts and prunes sent before carry the old count and are
    /// lost), and the packets the failure caught: the one being serialised (`tx_doomed`) and
    /// the next `doomed` arrivals (the packets on the wire; a channel delivers in order).
    pub(super) down: bool,
    pub(super) tx_doomed: bool,
    pub(super) forced_down: bool,
    /// `bucket` is some: read here, in the first line, so a packet on a serialising channel
    /// never touches the line that holds `bucket`.
    pub(super) bucketed: bool,
    pub(super) downs: u32,
    /// The class (the engine's `class`) this channel is a member of, or `NO_CLASS`.
    pub(super) class: ClassId,
    pub(super) rate_bps: u64,
    pub(super) delay: Duration,
    pub(super) loss: f64,
    pub(super) idle_since: Instant,
    pub(super) in_flight: u64,
    pub(super) doomed: u64,
    pub(super) tap: Option<Box<dyn LinkTap>>,
    pub(super) queue: Queue,
    pub(super) stats: ChannelStats,
    pub(super) reverse: ChannelId,
    pub(super) cost: u64,
    pub(super) rng: Rng,
    // boxed: most channels keep no series, and every byte of a channel counts at 10^6 receivers
    pub(super) series: Option<Box<ChannelSeries>>,
    /// A token bucket in place of serialisation ([`TokenBucket`]); while its head packet waits
    /// for tokens the channel is `busy` with no packet, and a `Wake` ends the wait. Boxed, as
    /// `series`: most channels have none.
    pub(super) bucket: Option<Box<Bucket>>,
}

impl Simulator {
    /// Attach `tap` to channel `ch` (replacing any earlier one); false when there is no such
    /// channel.
    pub fn set_link_tap(&mut self, ch: ChannelId, tap: Box<dyn LinkTap>) -> bool {
        self.settle();
        match self.channels.get_mut(ch.index()) {
            Some(c) => {
                c.tap = Some(tap);
                true
            }
            None => false,
        }
    }

    /// A link event: the end of a serialisation, an arrival at the far end, or a batch of
    /// either (`schedule_link`).
    pub(super) fn link_event(&mut self, ev: LinkEv) {
        match ev {
            LinkEv::TxDone { ch, pkt } => self.tx_done(ch, pkt),
            LinkEv::Arrive { ch, pkt } => self.arrive(ch, pkt, self.hinting),
            LinkEv::TxDoneBatch { batch } => self.run_batch(batch, false),
            LinkEv::ArriveBatch { batch } => self.run_batch(batch, true),
            LinkEv::Wake { ch } => self.wake(ch),
        }
    }

    pub(super) fn enqueue(&mut self, ch: ChannelId, p: Slot) {
        let now = self.now;
        self.touch_member(Touch::Link(ch));
        let c = &mut self.channels[ch.index()];
        c.stats.arrivals += 1;
        if c.down {
            c.stats.drops_link_down += 1;
            self.pool.release(p);
            return;
        }
        if c.bucketed {
            if !c.bucket.as_ref().is_some_and(|b| b.fits(self.pool.slots[p.index()].size_bytes)) {
                c.stats.drops_forced += 1;
                self.pool.release(p);
                return;
            }
        } else if !c.busy && c.queue.pass_through() {
            // admitted to the empty queue and popped at once: what `arrive` then `start_tx`
            // do, without the queue's buffer
            c.stats.enqueued += 1;
            c.busy = true;
            let t = now + Duration::transmission(self.pool.slots[p.index()].size_bytes, c.rate_bps);
            self.schedule_link(t, false, ch, p);
            return;
        }
        let idle = if c.busy { None } else { Some(c.idle_since) };
        match c.queue.arrive(p.0, now, idle, &mut c.rng) {
            Admit::Enqueued => c.stats.enqueued += 1,
            Admit::Marked => {
                c.stats.enqueued += 1;
                c.stats.marked += 1;
                self.pool.slots[p.index()].marked = true;
            }
            Admit::DropForced => {
                c.stats.drops_forced += 1;
                self.pool.release(p);
            }
            Admit::DropEarly => {
                c.stats.drops_early += 1;
                self.pool.release(p);
            }
        }
        if !self.channels[ch.index()].busy {
            self.start_tx(ch);
        }
    }

    pub(super) fn start_tx(&mut self, ch: ChannelId) {
        let c = &mut self.channels[ch.index()];
        if c.bucketed {
            return self.start_bucketed(ch);
        }
        let Some(p) = c.queue.pop().map(Slot) else { return };
        c.busy = true;
        let t = self.now + Duration::transmission(self.pool.slots[p.index()].size_bytes, c.rate_bps);
        self.schedule_link(t, false, ch, p);
    }

    /// `start_tx` on a token-bucket channel: the head packet leaves now if the bucket holds it,
    /// else a `Wake` is scheduled for when it will, the packet staying at the queue's head.
    fn start_bucketed(&mut self, ch: ChannelId) {
        let now = self.now;
        let c = &mut self.channels[ch.index()];
        let Some(b) = c.bucket.as_deref_mut() else { return };
        let Some(head) = c.queue.front().map(Slot) else { return };
        c.busy = true;
        let mut wait = 0;
        if b.take(now, c.rate_bps, self.pool.slots[head.index()].size_bytes, &mut wait) {
            c.queue.pop();
            self.schedule_link(now, false, ch, head);
        } else {
            b.waiting = true;
            let at = now + Duration::from_nanos(wait);
            self.schedule(at, Ev::Link(LinkEv::Wake { ch }));
        }
    }

    pub(super) fn tx_done(&mut self, ch: ChannelId, p: Slot) {
        let now = self.now;
        let c = &mut self.channels[ch.index()];
        c.busy = false;
        if c.tx_doomed {
            // it was being serialised when the channel went down
            c.tx_doomed = false;
            c.stats.drops_link_down += 1;
            self.pool.release(p);
            if c.queue.is_empty() {
                c.idle_since = now;
            } else {
                self.start_tx(ch);
            }
            return;
        }
        c.stats.departures += 1;
        c.stats.bytes_departed += self.pool.slots[p.index()].size_bytes as u64;
        if let Some(t) = &mut c.tap {
            t.on_depart(now, c.from, c.to, &self.pool.slots[p.index()]);
        }
        self.stats.forwarded += 1;
        if c.loss > 0.0 && c.rng.bernoulli(c.loss) {
            c.stats.lost_random += 1;
            self.pool.release(p);
        } else {
            c.in_flight += 1;
            let at = now + c.delay;
            self.schedule_link(at, true, ch, p);
        }
        let c = &mut self.channels[ch.index()];
        if c.queue.is_empty() {
            c.idle_since = now;
        } else {
            self.start_tx(ch);
        }
    }

    /// A token-bucket channel's wait for tokens ends: its head packet leaves now, unless a
    /// failure emptied the queue meanwhile (the failure found the channel busy, but no packet
    /// was on its way out).
    fn wake(&mut self, ch: ChannelId) {
        let now = self.now;
        let c = &mut self.channels[ch.index()];
        c.busy = false;
        c.tx_doomed = false;
        if let Some(b) = &mut c.bucket {
            b.waiting = false;
        }
        if c.queue.is_empty() {
            c.idle_since = now;
        } else {
            self.start_tx(ch);
        }
    }

    /// Packet `pkt` reaches the far end of channel `ch`; with `hint`, where it was handled is
    /// remembered for the run loop's prefetch of the channel's next arrival (`note_hint`). A
    /// batch's members prefetch their own way (`run_batch`) and remember nothing.
    #[inline]
    pub(super) fn arrive(&mut self, ch: ChannelId, pkt: Slot, hint: bool) {
        let c = &mut self.channels[ch.index()];
        c.in_flight -= 1;
        if c.doomed > 0 {
            // on the wire when the channel went down
            c.doomed -= 1;
            c.stats.drops_link_down += 1;
            self.pool.release(pkt);
            return;
        }
        c.stats.delivered += 1;
        let to = c.to;
        if hint {
            // read before the packet's slot may be released
            let dst = self.pool.slots[pkt.index()].dst;
            self.node_receive(to, pkt, Some(ch), false);
            return self.note_hint(ch, to, dst);
        }
        self.node_receive(to, pkt, Some(ch), false);
    }

    /// Remember where an arrival on `ch` at node `to` was handled (its state still in the
    /// caches), for the run loop to ask for it before the next arrival on `ch` (`Hint`).
    #[inline]
    fn note_hint(&mut self, ch: ChannelId, to: NodeId, dst: Dest) {
        let n = to.index();
        // an arrival off a train leaves its channel's wire unread (the next one is likely on a
        // train too)
        let wire_front = if self.queue.popped_train { 0 } else { self.queue.front_addr(ch) };
        let mut h = Hint { node: to.0, wire_front, ..Hint::default() };
        if let Dest::Group(g) = dst {
            if let Some(gr) = self.groups.get(g.index()) {
                // a receiver's leaf is read in the dense `leaf` array, any other node in its
                // group state (`Group::leaf`): hint the one the arrival reads
                let member = match gr.leaf.get(n) {
                    Some(&m) if m != super::multicast::NO_AGENT => {
                        h.mc = addr(gr.leaf.get(n));
                        Some(m)
                    }
                    _ => gr.mc.get(n).map(|st| {
                        h.mc = addr(Some(st));
                        st.member0
                    }),
                };
                if let Some(a) = member.and_then(|m| self.agents.get(m.index())) {
                    h.slot = addr(Some(a));
                    h.agent = &*a.agent as *const dyn Agent as *const u8 as usize;
                    let lines = a.agent.packet_lines();
                    (h.hot_bytes, h.elsewhere) = (lines.hot_bytes, lines.elsewhere);
                }
            }
        }
        if let Some(x) = self.hints.get_mut(ch.index()) {
            *x = h;
        }
    }

    /// Ask the caches for what the next arrival on `ch` will read: the channel, its wire (when
    /// the arrival waits there, `on_wire`), and where the last arrival on it was handled
    /// (`Hint`). A hint: no effect on what the run computes.
    #[inline]
    pub(super) fn prefetch_hint(&self, ch: ChannelId, on_wire: bool) {
        self.prefetch_channel(ch);
        if on_wire {
            prefetch_addr(self.queue.wire_addr(ch));
        }
        let Some(h) = self.hints.get(ch.index()) else { return };
        for a in [addr(self.nodes.get(h.node as usize)), h.mc, h.slot, h.wire_front] {
            prefetch_addr(a);
        }
        if h.agent != 0 {
            let hot = (h.hot_bytes as usize).min(MAX_AGENT_BYTES);
            for off in (0..hot).step_by(64) {
                prefetch_addr(h.agent + off);
            }
        }
        for a in h.elsewhere {
            prefetch_addr(a);
        }
    }

    /// Ask the caches for channel `ch`'s wire (its header: where its front and back are).
    #[inline(always)]
    pub(super) fn prefetch_wire(&self, ch: ChannelId) {
        prefetch_addr(self.queue.wire_addr(ch));
    }

    /// Ask the caches for channel `ch`'s `Hint` line only (none for a channel without one, such
    /// as `NONE`): read one event later by `prefetch_hint`.
    #[inline(always)]
    pub(super) fn prefetch_hint_line(&self, ch: u32) {
        if let Some(h) = self.hints.get(ch as usize) {
            prefetch(h as *const Hint as *const u8);
        }
    }

    /// Schedule a `TxDone` (`arrive` false) or an `Arrive` of packet `pkt` on channel `ch`.
    ///
    /// Link events of one kind at one time become one batch event when no other event of that
    /// time is scheduled between them: a fan-out to idle links of one rate schedules one
    /// `TxDone` per copy in a row, each of them an `Arrive` in a row; a fan-out's departures
    /// from busy links alternate an `Arrive` (one time) and the next packet's `TxDone`
    /// (another time), two batches at once. The order stays exactly `(time, seq)`: each member
    /// still takes its own `seq`, and no event of the batch's time has a `seq` between two
    /// members' (`last_links` holds at most one open batch per time; any other event of that
    /// time closes it: a link event of the other kind replaces it, any other `schedule`, a
    /// class event and every pop close all), so the batch sits in the queue at its first
    /// member's key and runs its members in order, as their own events would have run.
    #[inline(always)]
    pub(super) fn schedule_link(&mut self, at: Instant, arrive: bool, ch: ChannelId, pkt: Slot) {
        let time = at.as_nanos();
        // the common case inline (the next member of a batch), the rest out of line
        for l in self.last_links.iter_mut().flatten() {
            if l.time == time && l.arrive == arrive && l.batch != NO_BATCH {
                self.seq += 1;
                l.seq = self.seq;
                self.batches[l.batch as usize].push((ch, pkt));
                return;
            }
        }
        self.schedule_link_start(time, arrive, ch, pkt);
    }

    /// `schedule_link` when the event does not join a batch already started.
    #[inline(never)]
    fn schedule_link_start(&mut self, time: u64, arrive: bool, ch: ChannelId, pkt: Slot) {
        if !self.coalesce {
            if arrive {
                self.seq += 1;
                self.last_links = [None; OPEN_LINKS];
                let ev = Ev::Link(LinkEv::Arrive { ch, pkt });
                return self.queue.push_wire(ch, Entry { time, seq: self.seq, ev });
            }
            return self.schedule(Instant::from_nanos(time), Ev::Link(LinkEv::TxDone { ch, pkt }));
        }
        // the open link event of this time, if any (at most one)
        let same_time = self.last_links.iter().position(|l| l.is_some_and(|l| l.time == time));
        if let Some(i) = same_time {
            if let Some(l) = self.last_links[i] {
                if l.arrive == arrive {
                    self.seq += 1;
                    let batch = if l.batch == NO_BATCH { self.start_batch(l.at, arrive) } else { l.batch };
                    self.batches[batch as usize].push((ch, pkt));
                    self.last_links[i] = Some(LastLink { seq: self.seq, batch, ..l });
                    return;
                }
            }
        }
        self.seq += 1;
        if arrive {
            // an arrival waits on its channel's wire (the event queue's "Arrivals on the wire"),
            // or on the train a batch of departures builds ("Trains")
            let ev = Ev::Link(LinkEv::Arrive { ch, pkt });
            if self.train != NO_TRAIN {
                self.queue.push_train(self.train, Entry { time, seq: self.seq, ev });
            } else {
                self.queue.push_wire(ch, Entry { time, seq: self.seq, ev });
            }
        } else {
            self.queue.push(Entry { time, seq: self.seq, ev: Ev::Link(LinkEv::TxDone { ch, pkt }) });
        }
        let at = self.queue.last_pushed();
        // it replaces the open one of its time (of the other kind: closed by this event), else
        // an empty slot, else the older
        let i = same_time.unwrap_or_else(|| {
            let mut oldest = 0;
            for (k, l) in self.last_links.iter().enumerate() {
                match (l, self.last_links[oldest]) {
                    (None, _) => return k,
                    (Some(a), Some(b)) if a.seq < b.seq => oldest = k,
                    _ => {}
                }
            }
            oldest
        });
        self.last_links[i] = Some(LastLink { time, seq: self.seq, arrive, batch: NO_BATCH, at });
    }

    /// Turn the single link event at `at` in the queue (a `TxDone` or an `Arrive`) into a
    /// batch holding it.
    #[inline(never)]
    fn start_batch(&mut self, at: (u32, u32), arrive: bool) -> u32 {
        let b = match self.batch_free.pop() {
            Some(b) => b,
            None => {
                self.batches.push(Vec::new());
                (self.batches.len() - 1) as u32
            }
        };
        let last = self.queue.pushed_mut(at);
        let first = match *last {
            Ev::Link(LinkEv::TxDone { ch, pkt } | LinkEv::Arrive { ch, pkt }) => (ch, pkt),
            _ => unreachable!("an open link event is a single link event"),
        };
        *last = Ev::Link(if arrive { LinkEv::ArriveBatch { batch: b } } else { LinkEv::TxDoneBatch { batch: b } });
        self.batches[b as usize].push(first);
        b
    }

    /// Run a batch's members in order, each as its own event would have run. The arrivals a
    /// long batch of departures schedules go on one train (the event queue's "Trains").
    pub(super) fn run_batch(&mut self, batch: u32, arrive: bool) {
        let list = std::mem::take(&mut self.batches[batch as usize]);
        self.stats.events += list.len() as u64 - 1;
        let pf = list.len() >= self.prefetch_from;
        let train = !arrive && self.coalesce && list.len() >= self.train_from;
        if train {
            self.train = self.queue.begin_train();
        }
        for (i, &(ch, pkt)) in list.iter().enumerate() {
            if pf {
                if let Some(&(c, _)) = list.get(i + AHEAD) {
                    self.prefetch_channel(c);
                    if !arrive {
                        // a departure draws its wire's loss
                        self.prefetch_rng(c);
                        if !train {
                            // and puts its copy on the channel's wire
                            self.prefetch_wire(c);
                        }
                    }
                }
            }
            if arrive {
                if pf {
                    if let Some(&(c, q)) = list.get(i + AHEAD / 2) {
                        self.prefetch_receiver(c, q);
                    }
                    if let Some(&(c, q)) = list.get(i + AHEAD / 4) {
                        self.prefetch_agent(c, q);
                    }
                }
                self.arrive(ch, pkt, false);
            } else {
                self.tx_done(ch, pkt);
            }
            self.drain_dirty();
        }
        if train {
            let t = std::mem::replace(&mut self.train, NO_TRAIN);
            self.queue.end_train(t);
            // the sort moved the train's entries: no batch may grow through their places
            self.last_links = [None; OPEN_LINKS];
        }
        let mut list = list;
        list.clear();
        self.batches[batch as usize] = list;
        self.batch_free.push(batch);
    }

    /// Ask the caches for the lines a batch member's channel will be read in (a hint: no
    /// effect on what the run computes). A batch walks every receiver's state in a row,
    /// which at 10^5 receivers and more is no longer in the caches.
    #[inline(always)]
    pub(super) fn prefetch_channel(&self, ch: ChannelId) {
        if let Some(c) = self.channels.get(ch.index()) {
            let at = c as *const Channel as *const u8;
            prefetch(at);
            prefetch(at.wrapping_add(64));
            prefetch(at.wrapping_add(128));
        }
    }

    /// Ask the caches for channel `ch`'s random stream (a departure on a lossy link draws
    /// from it; it lies beyond the lines `prefetch_channel` asks for).
    #[inline(always)]
    pub(super) fn prefetch_rng(&self, ch: ChannelId) {
        if let Some(c) = self.channels.get(ch.index()) {
            prefetch((&c.rng) as *const Rng as *const u8);
        }
    }

    /// The same for the far end of an arrival: the node, and the member's slot when it is a
    /// receiver's leaf (its channel was asked for earlier; the group's dense `leaf` array, read
    /// here, stays in the caches). The agent itself is asked for later (`prefetch_agent`), once
    /// the slot that points to it has come in: reading the slot here would wait for it.
    #[inline(always)]
    pub(super) fn prefetch_receiver(&self, ch: ChannelId, pkt: Slot) {
        let Some((n, m)) = self.leaf_of(ch, pkt) else { return };
        if let Some(nd) = self.nodes.get(n) {
            prefetch(nd as *const Node as *const u8);
        }
        if let Some(a) = self.agents.get(m.index()) {
            prefetch(a as *const AgentSlot as *const u8);
        }
    }

    /// The leaf member's agent at the far end of an arrival (its slot was asked for earlier).
    #[inline(always)]
    pub(super) fn prefetch_agent(&self, ch: ChannelId, pkt: Slot) {
        let Some((_, m)) = self.leaf_of(ch, pkt) else { return };
        if let Some(a) = self.agents.get(m.index()) {
            let at = &*a.agent as *const dyn Agent as *const u8;
            prefetch(at);
            prefetch(at.wrapping_add(64));
            prefetch(at.wrapping_add(128));
        }
    }

    /// The far node of channel `ch` and, for group packet `pkt`, the node's member when the node
    /// is a receiver's leaf (`NO_AGENT` else, which indexes no agent).
    #[inline(always)]
    fn leaf_of(&self, ch: ChannelId, pkt: Slot) -> Option<(usize, AgentId)> {
        let n = self.channels.get(ch.index())?.to.index();
        let m = match self.pool.slots.get(pkt.index()).map(|p| p.dst) {
            Some(Dest::Group(g)) => self.groups.get(g.index()).and_then(|gr| gr.leaf.get(n)).copied(),
            _ => None,
        };
        Some((n, m.unwrap_or(super::multicast::NO_AGENT)))
    }
}

#[cfg(test)]
mod layout {
    use super::{Channel, Hint};
    use std::mem::offset_of;

    #[test]
    fn a_hint_is_one_cache_line() {
        assert_eq!((std::mem::size_of::<Hint>(), std::mem::align_of::<Hint>()), (64, 64));
    }

    #[test]
    fn what_a_packet_touches_lies_in_a_channels_first_three_cache_lines() {
        // enqueue, tx_done and arrive read and write these (and the queue's fields)
        let end = |off: usize, size: usize| off + size;
        let hot = [
            end(offset_of!(Channel, doomed), 8),
            end(offset_of!(Channel, tap), 16),
            end(offset_of!(Channel, queue), std::mem::size_of::<castlab_core::queue::Queue>()),
            end(offset_of!(Channel, stats) + offset_of!(super::ChannelStats, delivered), 8),
        ];
        for h in hot {
            assert!(h <= 3 * 64, "{hot:?}");
        }
        assert_eq!(std::mem::align_of::<Channel>(), 64);
    }
}

#[cfg(test)]
mod token_bucket {
    use std::sync::{Arc, Mutex};

    use castlab_core::{Addr, Agent, ChannelId, Dest, Instant, NodeId, Packet, StartInfo};

    use super::{LinkTap, TokenBucket};
    use crate::{LinkConfig, QueueConfig, Simulator};

    /// Sends packets of the given sizes at the given times to port 9 of `to`.
    struct Script {
        to: NodeId,
        plan: Vec<(Instant, u32)>,
        next: usize,
        due: Vec<Packet>,
    }

    impl Agent for Script {
        fn handle_start(&mut self, now: Instant, _info: StartInfo) {
            self.handle_timeout(now);
        }
        fn handle_packet(&mut self, _now: Instant, _packet: &Packet) {}
        fn handle_timeout(&mut self, now: Instant) {
            while let Some(&(t, size)) = self.plan.get(self.next) {
                if t > now {
                    break;
                }
                self.due.push(Packet::data(Dest::Unicast(Addr::new(self.to, 9)), size));
                self.next += 1;
            }
            self.due.reverse();
        }
        fn poll_transmit(&mut self) -> Option<Packet> {
            self.due.pop()
        }
        fn poll_timeout(&self) -> Option<Instant> {
            self.plan.get(self.next).map(|&(t, _)| t)
        }
    }

    /// Departure times (ns) and sizes seen on a channel.
    struct Tap(Arc<Mutex<Vec<(u64, u32)>>>);

    impl LinkTap for Tap {
        fn on_depart(&mut self, now: Instant, _from: NodeId, _to: NodeId, packet: &Packet) {
            if let Ok(mut v) = self.0.lock() {
                v.push((now.as_nanos(), packet.size_bytes));
            }
        }
    }

    const MS: u64 = 1_000_000;

    /// A 1 Mb/s link with a 1600-byte bucket charging 14 bytes per packet (the testbed's tbf),
    /// 5 ms of delay, a FIFO of `limit`; the script's packets sent over it; returns the
    /// departures and the channel's counters.
    fn run(limit: usize, plan: &[(f64, u32)]) -> (Vec<(u64, u32)>, super::ChannelStats) {
        run_failing(limit, plan, None)
    }

    /// `run`, the link going down and up again at `fail` (seconds), if given.
    fn run_failing(
        limit: usize,
        plan: &[(f64, u32)],
        fail: Option<(f64, f64)>,
    ) -> (Vec<(u64, u32)>, super::ChannelStats) {
        let mut sim = Simulator::new(1);
        let (a, b) = (sim.add_node("a").unwrap(), sim.add_node("b").unwrap());
        let mut cfg = LinkConfig::new(1e6, 0.005, QueueConfig::DropTail { limit_pkts: limit });
        cfg.bucket = Some(TokenBucket { burst_bytes: 1600, overhead_bytes: 14 });
        let (ab, _): (ChannelId, ChannelId) = sim.add_link(a, b, &cfg).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        sim.set_link_tap(ab, Box::new(Tap(seen.clone())));
        let plan = plan.iter().map(|&(t, s)| (Instant::from_secs_f64(t), s)).collect();
        sim.add_agent(a, None, Instant::ZERO, Box::new(Script { to: b, plan, next: 0, due: vec![] })).unwrap();
        if let Some((down, up)) = fail {
            sim.schedule_link_state(Instant::from_secs_f64(down), ab, false).unwrap();
            sim.schedule_link_state(Instant::from_secs_f64(up), ab, true).unwrap();
        }
        // 2 ms after 1 s: where the tests' second packet waits for tokens, the head of its queue
        sim.run(Instant::from_secs_f64(1.002)).unwrap();
        let c = sim.conservation();
        assert!(c.holds(), "{c:?}");
        sim.run(Instant::from_secs_f64(5.0)).unwrap();
        let c = sim.conservation();
        assert!(c.holds() && c.in_transmission == 0 && c.in_queues == 0, "{c:?}");
        let stats = sim.channel_stats(ab).unwrap().clone();
        let v = seen.lock().unwrap().clone();
        (v, stats)
    }

    #[test]
    fn a_packet_leaves_when_the_bucket_holds_its_frame() {
        // at 1 s, after idle (bucket full, 1600 B): 588 B (602 charged) leaves at once, 998 B
        // left; 1500 B (1514 charged) waits for 516 B = 4128 bits = 4.128 ms; the next 1500 B
        // for 1514 B = 12.112 ms more. At 2 s the bucket is full again: 1500 B leaves at once,
        // and the 588 B behind it finds 86 B: 516 B more = 4.128 ms.
        let (dep, st) = run(50, &[(1.0, 588), (1.0, 1500), (1.0, 1500), (2.0, 1500), (2.0, 588)]);
        assert_eq!(
            dep,
            vec![
                (1000 * MS, 588),
                (1000 * MS + 4_128_000, 1500),
                (1000 * MS + 16_240_000, 1500),
                (2000 * MS, 1500),
                (2000 * MS + 4_128_000, 588),
            ]
        );
        assert_eq!((st.departures, st.delivered, st.drops(), st.bytes_departed), (5, 5, 0, 588 * 2 + 1500 * 3));
    }

    #[test]
    fn back_to_back_packets_leave_at_the_token_rate() {
        // 1500 B every 1 ms from 0 (far above 1 Mb/s): the first at once (86 B left), then one
        // per 1514 B of tokens: 12.112 ms apart, the second after (1514 - 86) B = 11.424 ms
        let plan: Vec<(f64, u32)> = (0..6).map(|k| (k as f64 * 1e-3, 1500)).collect();
        let (dep, _) = run(50, &plan);
        let times: Vec<u64> = dep.iter().map(|d| d.0).collect();
        let want: Vec<u64> = (0..6).map(|k| if k == 0 { 0 } else { 11_424_000 + (k - 1) * 12_112_000 }).collect();
        assert_eq!(times, want);
    }

    #[test]
    fn the_head_waiting_for_tokens_holds_its_place_in_the_queue() {
        // a FIFO of one: the first 1500 B leaves at once, the second waits at the head for
        // tokens and fills the queue (tbf peeks at its child), so the third is dropped; were
        // the waiting packet out of the queue, the third would be admitted
        let (dep, st) = run(1, &[(0.0, 1500), (0.0, 1500), (0.0, 1500)]);
        assert_eq!(dep, vec![(0, 1500), (11_424_000, 1500)]);
        assert_eq!((st.arrivals, st.enqueued, st.drops_forced), (3, 2, 1));
    }

    #[test]
    fn a_failure_while_the_head_waits_drops_what_the_link_holds_and_the_bucket_goes_on() {
        // at 1 s 588 B leaves at once (on the wire for 5 ms) and two 1500 B wait; the link
        // fails at 1.002 s: the two queued and the one on the wire are lost. Up again at 1.5 s,
        // the bucket is full by 2 s: 1500 B leaves at once.
        let (dep, st) = run_failing(50, &[(1.0, 588), (1.0, 1500), (1.0, 1500), (2.0, 1500)], Some((1.002, 1.5)));
        assert_eq!(dep, vec![(1000 * MS, 588), (2000 * MS, 1500)]);
        assert_eq!((st.drops_link_down, st.departures, st.delivered), (3, 2, 1));
    }

    #[test]
    fn a_packet_larger_than_the_bucket_is_a_counted_drop() {
        // 1600 B charges 1614 B > 1600 B: it could never leave; the 588 B after it does
        let (dep, st) = run(50, &[(0.0, 1600), (0.5, 588)]);
        assert_eq!(dep, vec![(500 * MS, 588)]);
        assert_eq!((st.drops_forced, st.departures, st.delivered), (1, 1, 1));
    }
}
