//! The agent contract: protocols as sans-IO state machines.
//!
//! An agent (a source, a receiver, a TCP endpoint...) is a plain struct. It never reads a
//! clock, opens a socket or schedules anything itself. Inputs arrive through `handle_*` calls
//! that carry `now`; outputs are pulled with `poll_*` calls.
//!
//! # The driving rule
//!
//! A driver (the simulator, a unit test, the UDP driver) must, after **every** `handle_*`
//! call (including [`Agent::handle_start`]):
//!
//! 1. drain [`Agent::poll_transmit`] until it returns `None`, sending each packet;
//! 2. re-read [`Agent::poll_timeout`] and arm its single timer for that instant (or disarm
//!    it on `None`); an earlier armed deadline is simply replaced;
//! 3. drain [`Agent::poll_event`] until it returns `None` (group joins and leaves, level and
//!    rate changes).
//!
//! One exception: an agent whose [`Agent::packets_only_count`] is true declares that
//! `handle_packet` leaves nothing to poll (no packet, no event, the same `poll_timeout`), so a
//! driver may skip the three polls after it (they would all answer nothing new); an agent whose
//! [`Agent::quiet_after_packet`] is true right after a `handle_packet` says the same of that
//! one packet.
//!
//! When the armed deadline is reached, the driver calls [`Agent::handle_timeout`] and applies
//! the rule again. A driver may call `handle_timeout` late, never early: an agent can assume
//! `now >= ` the deadline it last returned. Agents with several timers declare them as an enum
//! ([`timers!`]), keep them in a [`TimerTable`] and return its earliest deadline.
//!
//! # Application bytes (the real network only)
//!
//! A packet is a fixed-size header: in the simulator it carries no bytes beyond it. On the
//! real network a packet may carry application bytes too (a fountain symbol, say). The
//! driver asks for them with [`Agent::poll_payload`] for each packet `poll_transmit` gave,
//! right before sending it, and hands received ones to [`Agent::handle_payload`] right
//! before the [`Agent::handle_packet`] call for the same packet. The simulator calls neither,
//! so an agent must not depend on them there.
//!
//! Agents draw random numbers only from the [`crate::rng::Rng`] the driver hands them at
//! start, derived from the run's seed and the agent's id, so that a run is a pure function of
//! scenario and seed.

use core::any::Any;

use crate::ids::{Addr, GroupId, NodeId};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::Instant;

/// Something an agent asks of its driver or reports to monitors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AgentEvent {
    /// Subscribe this agent to a multicast group (IGMP join; a socket option in real mode).
    Join(GroupId),
    /// Unsubscribe.
    Leave(GroupId),
    /// A layered receiver's subscription level changed (recorded in the level timeline).
    LevelChanged { level: u32 },
    /// A rate-controlled sender changed its sending rate (recorded in the rate timeline).
    RateChanged { rate_bps: f64 },
}

/// What the driver tells an agent when it starts.
#[derive(Clone, Debug)]
pub struct StartInfo {
    /// The agent's own unicast address (its node and port).
    pub addr: Addr,
    /// The agent's private random stream.
    pub rng: Rng,
}

/// Reading a hosted agent or extension back as its concrete type (monitors, bindings).
/// Implemented for every `'static` type, so agents and extensions never write it.
pub trait AsAny: Any {
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What [`Agent::packet_lines`] tells: how many bytes from the agent's own address a packet
/// reads (its hot fields laid out first), and up to three cache lines elsewhere (its buffers'
/// current ends), 0 for none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketLines {
    pub hot_bytes: u32,
    pub elsewhere: [usize; 3],
}

impl Default for PacketLines {
    fn default() -> Self {
        PacketLines { hot_bytes: 192, elsewhere: [0; 3] }
    }
}

/// A sans-IO protocol endpoint. See the module documentation for the driving rule.
pub trait Agent: AsAny {
    /// Called once, at the agent's start time.
    fn handle_start(&mut self, now: Instant, info: StartInfo);
    /// A packet addressed to this agent (unicast to its port, or to a group it joined).
    fn handle_packet(&mut self, now: Instant, packet: &Packet);
    /// The deadline last returned by [`Agent::poll_timeout`] has been reached.
    fn handle_timeout(&mut self, now: Instant);
    /// The next packet to send, if any. The driver stamps `src` and `uid`.
    fn poll_transmit(&mut self) -> Option<Packet>;
    /// The next instant at which [`Agent::handle_timeout`] must be called.
    fn poll_timeout(&self) -> Option<Instant>;
    /// The next event for the driver or the monitors. Agents that never join, leave or report
    /// a level or rate keep the default: none.
    fn poll_event(&mut self) -> Option<AgentEvent> {
        None
    }
    /// True when [`Agent::handle_packet`] never queues a packet or an event and never changes
    /// what [`Agent::poll_timeout`] returns (a receiver that only counts): a driver may then
    /// skip the driving rule's polls after a packet. Read once, when the agent is added. The
    /// default, false, is always correct.
    fn packets_only_count(&self) -> bool {
        false
    }
    /// True when the last [`Agent::handle_packet`] queued no packet and no event and left what
    /// [`Agent::poll_timeout`] returns unchanged: a driver may skip the driving rule's polls
    /// after that packet. Read after each packet, before the polls. The default, false, is
    /// always correct.
    fn quiet_after_packet(&self) -> bool {
        false
    }
    /// Where the agent's next [`Agent::handle_packet`] reads its state: a hint a driver may
    /// prefetch before that packet is handled, when it knows which agent comes next (a
    /// simulator with many receivers, each read once per packet, their state no longer in the
    /// caches). Only addresses: reading it changes nothing, and a stale or wrong one costs a
    /// wasted prefetch, never a wrong result. The default: the agent's first three lines.
    fn packet_lines(&self) -> PacketLines {
        PacketLines::default()
    }
    /// Node `node` restarted: its packets now come from a new incarnation whose sequence
    /// numbers start afresh (the real-network driver sees a newer session epoch in its
    /// datagrams). What the agent keeps about that node's packets (expected sequence
    /// numbers, a receive window, repairs it waits for) belonged to the old incarnation and
    /// is reset, so the agent resynchronises instead of treating the new packets as old ones
    /// or asking for repairs the new incarnation never sent. The driving rule applies after
    /// it. Agents that keep nothing per peer keep the default: nothing to do.
    fn handle_peer_restart(&mut self, _now: Instant, _node: NodeId) {}
    /// The agent is told to stop: the real-network driver calls this once when its process
    /// got a stop signal (SIGTERM, SIGINT, SIGHUP) or reached the end of its run. (The
    /// simulator never calls it: a scenario's receiver leaves at a time its agent is given,
    /// so no simulated run depends on it.) The agent ends its part
    /// the protocol's way: it queues what the protocol sends on leaving (a receiver's leave
    /// report, a PGM source's last SPM), asks to leave its groups
    /// ([`AgentEvent::Leave`]) and disarms its timers. The driving rule applies after it; the
    /// driver then sends what was queued (waiting a bounded time for a full socket or the rate
    /// cap) and calls nothing else on the agent: what is to be sent must be queued here, not
    /// left to a later timer. Agents with no one to tell keep the default: nothing to do.
    fn handle_shutdown(&mut self, _now: Instant) {}
    /// Real network only: write the application bytes `packet` (the packet `poll_transmit`
    /// just gave) carries into `out` and return how many (at most `out.len()`). Agents whose
    /// packets carry no bytes keep the default: none.
    fn poll_payload(&mut self, _packet: &Packet, _out: &mut [u8]) -> usize {
        0
    }
    /// Real network only: the application bytes that came with `packet`, handed over just
    /// before `handle_packet(packet)` (and only for a packet that carried some). The default
    /// ignores them.
    fn handle_payload(&mut self, _packet: &Packet, _bytes: &[u8]) {}
}

/// The timers of one agent: a field-less enum whose [`Timer::VALUES`] lists every variant, so
/// `handle_timeout` matches on the enum exhaustively and a new timer cannot fall into a
/// catch-all arm (quinn-proto's `Timer` and `TimerTable`). Declare one with [`timers!`].
pub trait Timer: Copy + Eq + core::fmt::Debug + 'static {
    /// Every timer, in the order ties between equal deadlines are broken.
    const VALUES: &'static [Self];
    /// The timer's slot: its position in [`Timer::VALUES`].
    fn index(self) -> usize;
}

/// Declares a timer enum and implements [`Timer`] for it (declaration order is tie order).
///
/// ```
/// castlab_core::timers! {
///     /// The timers of an example agent.
///     pub enum DemoTimer { Retransmit, Idle }
/// }
/// let mut t = castlab_core::TimerTable::<DemoTimer>::default();
/// t.set(DemoTimer::Idle, castlab_core::Instant::from_nanos(5));
/// assert_eq!(t.expire(castlab_core::Instant::from_nanos(9)), Some(DemoTimer::Idle));
/// ```
#[macro_export]
macro_rules! timers {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $($(#[$vm:meta])* $var:ident),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vm])* $var,)+
        }
        impl $crate::agent::Timer for $name {
            const VALUES: &'static [Self] = &[$($name::$var),+];
            fn index(self) -> usize {
                self as usize
            }
        }
    };
}

/// Most timers one agent may declare.
pub const MAX_TIMERS: usize = 8;

/// One optional deadline per timer of `T`. [`TimerTable::next`] gives the earliest in O(1):
/// a driver asks for it after every packet an agent handles, while the deadlines change far
/// more rarely, so the earliest is kept up to date when a deadline changes (a linear scan of
/// the agent's handful of timers).
#[derive(Clone, Debug)]
pub struct TimerTable<T: Timer> {
    slots: [Option<Instant>; MAX_TIMERS],
    /// The earliest of `slots`.
    earliest: Option<Instant>,
    _timers: core::marker::PhantomData<T>,
}

impl<T: Timer> Default for TimerTable<T> {
    fn default() -> Self {
        const { assert!(T::VALUES.len() <= MAX_TIMERS, "too many timers for a TimerTable") };
        TimerTable { slots: [None; MAX_TIMERS], earliest: None, _timers: core::marker::PhantomData }
    }
}

impl<T: Timer> TimerTable<T> {
    fn rescan(&mut self) {
        self.earliest = self.slots[..T::VALUES.len()].iter().flatten().min().copied();
    }
    pub fn set(&mut self, timer: T, at: Instant) {
        let old = self.slots[timer.index()].replace(at);
        match (old, self.earliest) {
            // the earliest can only have moved earlier: no scan
            (_, Some(e)) if at <= e => self.earliest = Some(at),
            (_, None) => self.earliest = Some(at),
            // this timer was not the earliest, and the new deadline is later than it
            (Some(o), Some(e)) if o != e => {}
            (None, Some(_)) => {}
            _ => self.rescan(),
        }
    }
    pub fn stop(&mut self, timer: T) {
        let old = self.slots[timer.index()].take();
        if old.is_some() && old == self.earliest {
            self.rescan();
        }
    }
    /// Disarm every timer (an agent told to stop).
    pub fn clear(&mut self) {
        self.slots = [None; MAX_TIMERS];
        self.earliest = None;
    }
    pub fn get(&self, timer: T) -> Option<Instant> {
        self.slots[timer.index()]
    }
    pub fn is_armed(&self, timer: T) -> bool {
        self.slots[timer.index()].is_some()
    }
    /// The earliest armed deadline.
    #[inline]
    pub fn next(&self) -> Option<Instant> {
        self.earliest
    }
    /// Disarm and return the first timer (in [`Timer::VALUES`] order) whose deadline is at or
    /// before `now`.
    pub fn expire(&mut self, now: Instant) -> Option<T> {
        let t = *T::VALUES.iter().find(|t| matches!(self.slots[t.index()], Some(d) if d <= now))?;
        self.stop(t);
        Some(t)
    }
    /// Disarm and return the due timer with the earliest deadline (ties: [`Timer::VALUES`]
    /// order), for agents that handle expired timers in deadline order.
    pub fn expire_earliest(&mut self, now: Instant) -> Option<T> {
        let t = T::VALUES
            .iter()
            .filter_map(|&t| self.slots[t.index()].filter(|d| *d <= now).map(|d| (d, t.index(), t)))
            .min_by_key(|&(d, i, _)| (d, i))?
            .2;
        self.stop(t);
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::timers! {
        enum T3 { A, B, C }
    }

    #[test]
    fn timer_table_orders_and_expires() {
        let mut t = TimerTable::<T3>::default();
        assert_eq!(t.next(), None);
        t.set(T3::C, Instant::from_nanos(50));
        t.set(T3::A, Instant::from_nanos(70));
        assert_eq!(t.next(), Some(Instant::from_nanos(50)));
        assert_eq!(t.expire(Instant::from_nanos(49)), None);
        assert_eq!(t.expire(Instant::from_nanos(80)), Some(T3::A));
        assert_eq!(t.expire(Instant::from_nanos(80)), Some(T3::C));
        assert_eq!(t.expire(Instant::from_nanos(80)), None);
        assert_eq!(t.next(), None);
    }

    #[test]
    fn expire_earliest_takes_deadline_order_then_declaration_order() {
        let mut t = TimerTable::<T3>::default();
        t.set(T3::A, Instant::from_nanos(70));
        t.set(T3::B, Instant::from_nanos(50));
        t.set(T3::C, Instant::from_nanos(50));
        assert_eq!(t.expire_earliest(Instant::from_nanos(80)), Some(T3::B));
        assert_eq!(t.expire_earliest(Instant::from_nanos(80)), Some(T3::C));
        assert_eq!(t.expire_earliest(Instant::from_nanos(80)), Some(T3::A));
        assert!(!t.is_armed(T3::A) && t.get(T3::B).is_none());
        assert_eq!(T3::VALUES, &[T3::A, T3::B, T3::C]);
    }

    #[test]
    fn the_kept_earliest_deadline_is_always_the_minimum_of_the_slots() {
        // random sets, stops and expiries over few distinct deadlines (many ties), checked
        // against a scan of the timers after every step
        let mut rng = crate::rng::Rng::seed_from_u64(3);
        let mut t = TimerTable::<T3>::default();
        let all = [T3::A, T3::B, T3::C];
        for step in 0..100_000 {
            let timer = all[rng.below(3) as usize];
            let at = Instant::from_nanos(rng.below(6));
            match rng.below(5) {
                0 | 1 => t.set(timer, at),
                2 => t.stop(timer),
                3 => {
                    t.expire(at);
                }
                _ => {
                    t.expire_earliest(at);
                }
            }
            let scan = all.iter().filter_map(|&x| t.get(x)).min();
            assert_eq!(t.next(), scan, "step {step}");
        }
    }
}
