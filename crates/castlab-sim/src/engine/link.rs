//! Links: a duplex link is two simplex channels, each with its own output queue at the sending
//! node, as in ns-3's point-to-point device. A packet waits in the queue, is serialised for
//! `size / rate`, then propagates for the link's delay; optional Bernoulli loss drops it on the
//! wire after it has used the capacity.

use castlab_core::{ChannelId, Duration, Instant, NodeId, Packet, Rng};

use super::Simulator;
use crate::queue::{Admit, Queue, QueueConfig};

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
}

impl LinkConfig {
    pub fn new(rate_bps: f64, delay_s: f64, queue: QueueConfig) -> Self {
        LinkConfig { rate_bps, delay_s, queue, loss_ab: 0.0, loss_ba: 0.0, cost: 1 }
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
    pub(super) downs: u32,
    /// The class (the engine's `class`) this channel is a member of, or `NO_CLASS`.
    pub(super) class: u32,
    pub(super) rate_bps: u64,
    pub(super) delay: Duration,
    pub(super) loss: f64,
    pub(super) idle_since: Instant,
    pub(super) in_flight: u64,
    pub(super) doomed: u64,
    pub(super) tap: Option<Box<dyn LinkTap>>,
    pub(super) queue: Queue,
    pub(super) stats: ChannelStats,
    pub(super) reverse: u32,
    pub(super) cost: u64,
    pub(super) rng: Rng,
    // boxed: most channels keep no series, and every byte of a channel counts at 10^6 receivers
    pub(super) series: Option<Box<ChannelSeries>>,
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

    pub(super) fn enqueue(&mut self, ch: u32, p: u32) {
        let now = self.now;
        let cl = self.channels[ch as usize].class;
        if cl != super::class::NO_CLASS {
            // a packet of its own on a class's member link: back to copies
            self.end_class(cl, true);
        }
        let c = &mut self.channels[ch as usize];
        c.stats.arrivals += 1;
        if c.down {
            c.stats.drops_link_down += 1;
            self.pool.release(p);
            return;
        }
        if !c.busy && c.queue.pass_through() {
            // admitted to the empty queue and popped at once: what `arrive` then `start_tx`
            // do, without the queue's buffer
            c.stats.enqueued += 1;
            c.busy = true;
            let t = now + Duration::transmission(self.pool.slots[p as usize].size_bytes, c.rate_bps);
            self.schedule_link(t, false, ch, p);
            return;
        }
        let idle = if c.busy { None } else { Some(c.idle_since) };
        match c.queue.arrive(p, now, idle, &mut c.rng) {
            Admit::Enqueued => c.stats.enqueued += 1,
            Admit::Marked => {
                c.stats.enqueued += 1;
                c.stats.marked += 1;
                self.pool.slots[p as usize].marked = true;
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
        if !self.channels[ch as usize].busy {
            self.start_tx(ch);
        }
    }

    pub(super) fn start_tx(&mut self, ch: u32) {
        let c = &mut self.channels[ch as usize];
        let Some(p) = c.queue.pop() else { return };
        c.busy = true;
        let t = self.now + Duration::transmission(self.pool.slots[p as usize].size_bytes, c.rate_bps);
        self.schedule_link(t, false, ch, p);
    }

    pub(super) fn tx_done(&mut self, ch: u32, p: u32) {
        let now = self.now;
        let c = &mut self.channels[ch as usize];
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
        c.stats.bytes_departed += self.pool.slots[p as usize].size_bytes as u64;
        if let Some(t) = &mut c.tap {
            t.on_depart(now, c.from, c.to, &self.pool.slots[p as usize]);
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
        let c = &mut self.channels[ch as usize];
        if c.queue.is_empty() {
            c.idle_since = now;
        } else {
            self.start_tx(ch);
        }
    }
}

#[cfg(test)]
mod layout {
    use super::Channel;
    use std::mem::offset_of;

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
