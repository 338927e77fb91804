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
//! When the armed deadline is reached, the driver calls [`Agent::handle_timeout`] and applies
//! the rule again. A driver may call `handle_timeout` late, never early: an agent can assume
//! `now >= ` the deadline it last returned. Agents with several timers keep them in a
//! [`TimerTable`] and return its earliest deadline.
//!
//! Agents draw random numbers only from the [`crate::rng::Rng`] the driver hands them at
//! start, derived from the run's seed and the agent's id, so that a run is a pure function of
//! scenario and seed.

use core::any::Any;

use crate::ids::{Addr, GroupId};
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

/// A sans-IO protocol endpoint. See the module documentation for the driving rule.
pub trait Agent: Any {
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
    /// For reading an agent's records back (monitors, Python bindings).
    fn as_any(&self) -> &dyn Any;
}

/// A fixed set of named timers, for agents that need several. `K` indexes the table.
///
/// Modelled on the timer table of quinn-proto: each slot holds an optional deadline and
/// [`TimerTable::next`] gives the earliest. Linear scan: agents have a handful of timers.
#[derive(Clone, Debug)]
pub struct TimerTable<const N: usize> {
    slots: [Option<Instant>; N],
}

impl<const N: usize> Default for TimerTable<N> {
    fn default() -> Self {
        TimerTable { slots: [None; N] }
    }
}

impl<const N: usize> TimerTable<N> {
    pub fn set(&mut self, slot: usize, at: Instant) {
        self.slots[slot] = Some(at);
    }
    pub fn stop(&mut self, slot: usize) {
        self.slots[slot] = None;
    }
    pub fn get(&self, slot: usize) -> Option<Instant> {
        self.slots[slot]
    }
    pub fn is_armed(&self, slot: usize) -> bool {
        self.slots[slot].is_some()
    }
    /// The earliest armed deadline.
    pub fn next(&self) -> Option<Instant> {
        self.slots.iter().flatten().min().copied()
    }
    /// Disarm and return the first slot (lowest index) whose deadline is at or before `now`.
    pub fn expire(&mut self, now: Instant) -> Option<usize> {
        for (i, s) in self.slots.iter_mut().enumerate() {
            if matches!(s, Some(t) if *t <= now) {
                *s = None;
                return Some(i);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_table_orders_and_expires() {
        let mut t = TimerTable::<3>::default();
        assert_eq!(t.next(), None);
        t.set(2, Instant::from_nanos(50));
        t.set(0, Instant::from_nanos(70));
        assert_eq!(t.next(), Some(Instant::from_nanos(50)));
        assert_eq!(t.expire(Instant::from_nanos(49)), None);
        assert_eq!(t.expire(Instant::from_nanos(80)), Some(0));
        assert_eq!(t.expire(Instant::from_nanos(80)), Some(2));
        assert_eq!(t.expire(Instant::from_nanos(80)), None);
        assert_eq!(t.next(), None);
    }
}
