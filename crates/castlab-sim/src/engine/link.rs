//! Links: a duplex link is two simplex channels, each with its own output queue at the sending
//! node, as in ns-3's point-to-point device. A packet waits in the queue, is serialised for
//! `size / rate`, then propagates for the link's delay; optional Bernoulli loss drops it on the
//! wire after it has used the capacity.

use castlab_core::{Duration, Instant, NodeId, Rng};

use super::event::Ev;
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

/// Per-channel counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelStats {
    /// Packets offered to the output queue.
    pub arrivals: u64,
    pub enqueued: u64,
    pub drops_forced: u64,
    pub drops_early: u64,
    pub marked: u64,
    /// Packets that finished serialisation.
    pub departures: u64,
    pub bytes_departed: u64,
    /// Packets lost on the wire (Bernoulli loss).
    pub lost_random: u64,
    /// Packets that reached the far node.
    pub delivered: u64,
    /// Packets the sending node's extension dropped for this interface.
    pub ext_drops: u64,
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

pub(super) struct Channel {
    pub(super) from: NodeId,
    pub(super) to: NodeId,
    pub(super) rate_bps: u64,
    pub(super) delay: Duration,
    pub(super) loss: f64,
    pub(super) queue: Queue,
    /// A packet is being serialised (until `tx_end`), or its departure is not yet settled.
    pub(super) busy: bool,
    pub(super) idle_since: Instant,
    /// When the packet on the wire finishes serialisation (valid while `busy`).
    pub(super) tx_end: Instant,
    /// The packet on the wire, whose departure (counters, loss draw) is not yet settled.
    pub(super) dep_pending: Option<u32>,
    /// A `TxDone` event is scheduled at `tx_end` (only while packets wait behind the one on
    /// the wire: the next departure must start then).
    pub(super) txdone_armed: bool,
    pub(super) reverse: u32,
    pub(super) cost: u64,
    pub(super) rng: Rng,
    pub(super) in_flight: u64,
    pub(super) stats: ChannelStats,
    pub(super) series: Option<ChannelSeries>,
}

// Departures without an event of their own.
//
// A packet that starts serialisation at `t0` finishes at `tx_end = t0 + size/rate` and arrives
// at the far end at `tx_end + delay`; both times are known when it starts, so its `Arrive` is
// scheduled then. A `TxDone` event at `tx_end` is only needed when packets wait behind it (the
// next one must start then): it is armed when the first packet queues behind the one on the
// wire. Otherwise the departure is *settled* lazily, the first time anything looks at the
// channel at or after `tx_end`: a packet offered to it, its `Arrive`, a sample, the end of a
// `run`. Settling does what the departure event did (counters, the Bernoulli loss draw, the
// link going idle at `tx_end`), in the same order with respect to the channel's other random
// draws (RED's, which happen when a packet is offered, after settling). Events that fall on
// exactly the same nanosecond as a departure may run in another order than with a `TxDone`
// per packet (docs/engine.md, "Fewer events").
impl Simulator {
    /// Settle the departure of the packet on the wire if it has finished by `now` and nothing
    /// waits behind it.
    #[inline]
    pub(super) fn settle(&mut self, ch: u32) {
        let now = self.now;
        let c = &mut self.channels[ch as usize];
        if c.busy && !c.txdone_armed && c.tx_end <= now {
            debug_assert!(c.queue.is_empty(), "packets wait, so a TxDone must be armed");
            self.depart(ch);
            let c = &mut self.channels[ch as usize];
            c.busy = false;
            c.idle_since = c.tx_end;
        }
    }

    /// The departure bookkeeping of the packet on the wire (once).
    #[inline]
    fn depart(&mut self, ch: u32) {
        let c = &mut self.channels[ch as usize];
        let Some(p) = c.dep_pending.take() else { return };
        c.stats.departures += 1;
        c.stats.bytes_departed += self.pool.slots[p as usize].size_bytes as u64;
        self.stats.forwarded += 1;
        if c.loss > 0.0 && c.rng.bernoulli(c.loss) {
            // its Arrive is already scheduled: it finds the packet marked lost and drops it
            c.stats.lost_random += 1;
            self.pool.lost_on_wire[p as usize] = true;
            self.lost_pending += 1;
        } else {
            c.in_flight += 1;
        }
    }

    pub(super) fn enqueue(&mut self, ch: u32, p: u32) {
        self.settle(ch);
        let now = self.now;
        let c = &mut self.channels[ch as usize];
        c.stats.arrivals += 1;
        let idle = if c.busy { None } else { Some(c.idle_since) };
        let admitted = match c.queue.arrive(p, now, idle, &mut c.rng) {
            Admit::Enqueued => {
                c.stats.enqueued += 1;
                true
            }
            Admit::Marked => {
                c.stats.enqueued += 1;
                c.stats.marked += 1;
                self.pool.slots[p as usize].marked = true;
                true
            }
            Admit::DropForced => {
                c.stats.drops_forced += 1;
                self.pool.release(p);
                false
            }
            Admit::DropEarly => {
                c.stats.drops_early += 1;
                self.pool.release(p);
                false
            }
        };
        let c = &mut self.channels[ch as usize];
        if !c.busy {
            self.start_tx(ch, now);
        } else if admitted && !c.txdone_armed {
            // a packet waits behind the one on the wire: the next departure starts at tx_end
            c.txdone_armed = true;
            let at = c.tx_end;
            self.schedule(at, Ev::TxDone { ch });
        }
    }

    /// Start serialising the next waiting packet at `t0`.
    pub(super) fn start_tx(&mut self, ch: u32, t0: Instant) {
        let c = &mut self.channels[ch as usize];
        let Some(p) = c.queue.pop() else { return };
        c.busy = true;
        c.dep_pending = Some(p);
        c.tx_end = t0 + Duration::transmission(self.pool.slots[p as usize].size_bytes, c.rate_bps);
        let arrive = c.tx_end + c.delay;
        let more = !c.queue.is_empty();
        self.schedule(arrive, Ev::Arrive { ch, pkt: p });
        if more {
            let c = &mut self.channels[ch as usize];
            c.txdone_armed = true;
            let at = c.tx_end;
            self.schedule(at, Ev::TxDone { ch });
        }
    }

    /// The armed departure at `tx_end`: settle it and start the next waiting packet.
    pub(super) fn tx_done(&mut self, ch: u32) {
        let now = self.now;
        self.channels[ch as usize].txdone_armed = false;
        self.depart(ch);
        let c = &mut self.channels[ch as usize];
        c.busy = false;
        if c.queue.is_empty() {
            c.idle_since = now;
        } else {
            self.start_tx(ch, now);
        }
    }

    /// A packet reaches the far end of `ch`.
    pub(super) fn arrive(&mut self, ch: u32, p: u32) {
        // its own departure is settled first (with no delay it arrives at tx_end)
        if self.channels[ch as usize].dep_pending == Some(p) {
            self.depart(ch);
        }
        if self.pool.lost_on_wire[p as usize] {
            self.lost_pending -= 1;
            self.pool.release(p);
            return;
        }
        let c = &mut self.channels[ch as usize];
        c.in_flight -= 1;
        c.stats.delivered += 1;
        let to = c.to.0;
        self.node_receive(to, p, Some(ch), false);
    }
}
