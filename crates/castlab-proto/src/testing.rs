//! One harness for driving any agent by hand (quinn-proto's `tests/util.rs` is the model): it
//! follows the driving rule of [`castlab_core::agent`] exactly, keeps what the agent sent and
//! reported with the instant it happened, fires timers in deadline order and never early, and
//! checks on every step that the agent never asks to be woken in the past.
//!
//! Compiled for this crate's tests and, with the `testing` feature, for other crates' tests.

use castlab_core::{Addr, Agent, AgentEvent, Instant, NodeId, Packet, Rng, StartInfo, StreamKind};

/// An agent on virtual time.
pub struct Driver<A: Agent> {
    pub agent: A,
    pub now: Instant,
    /// Every packet the agent transmitted, with when.
    pub sent: Vec<(Instant, Packet)>,
    /// Every event the agent reported, with when.
    pub events: Vec<(Instant, AgentEvent)>,
    /// How many times `handle_timeout` ran.
    pub timeouts: u64,
}

impl<A: Agent> Driver<A> {
    /// Start `agent` at `at` on `addr`, with the random stream the simulator would give agent 0
    /// of a run seeded `seed`.
    pub fn start(mut agent: A, at: Instant, addr: Addr, seed: u64) -> Self {
        agent.handle_start(at, StartInfo { addr, rng: Rng::stream(seed, StreamKind::Agent, 0) });
        let mut d = Driver { agent, now: at, sent: Vec::new(), events: Vec::new(), timeouts: 0 };
        d.drain();
        d
    }

    /// Start `agent` at `at` with the given address and random stream (a test that needs the
    /// stream it always had).
    pub fn start_with(mut agent: A, at: Instant, info: StartInfo) -> Self {
        agent.handle_start(at, info);
        let mut d = Driver { agent, now: at, sent: Vec::new(), events: Vec::new(), timeouts: 0 };
        d.drain();
        d
    }

    /// Start at 0 on node 1, port 1, seed 1.
    pub fn started(agent: A) -> Self {
        Self::start(agent, Instant::ZERO, Addr::new(NodeId(1), 1), 1)
    }

    /// Advance to `t`, firing every timer due on the way (in deadline order, each at its
    /// deadline), then deliver `p` at `t`.
    pub fn packet(&mut self, t: Instant, p: &Packet) {
        self.advance_to(t);
        self.agent.handle_packet(self.now, p);
        self.drain();
    }

    /// Deliver `p` at `t` ahead of the timers due at `t` (those due before `t` fire first, each
    /// at its deadline): for a harness whose rule is that a packet and a timer of the same
    /// instant meet packet first.
    pub fn packet_before_timers(&mut self, t: Instant, p: &Packet) {
        self.fire_until(t, false);
        self.agent.handle_packet(self.now, p);
        self.drain();
    }

    /// Fire every timer due at or before `t`, each at its own deadline; end at `t`.
    pub fn advance_to(&mut self, t: Instant) {
        self.fire_until(t, true);
    }

    /// Fire every timer due before `t` (and at `t` when `inclusive`), each at its own
    /// deadline; end at `t`.
    fn fire_until(&mut self, t: Instant, inclusive: bool) {
        assert!(t >= self.now, "time must not go back ({:?} < {:?})", t, self.now);
        // bounded: an agent that re-arms for the same instant forever is a bug worth a panic
        for _ in 0..1_000_000 {
            match self.agent.poll_timeout() {
                Some(d) if d < t || (inclusive && d == t) => {
                    self.now = self.now.max(d);
                    self.agent.handle_timeout(self.now);
                    self.timeouts += 1;
                    self.drain();
                }
                _ => {
                    self.now = t;
                    return;
                }
            }
        }
        panic!("more than 10^6 timeouts before {t:?}: a timer that never advances");
    }

    /// The driving rule's steps 1-3 after a `handle_*` call, with its invariant checked.
    fn drain(&mut self) {
        while let Some(p) = self.agent.poll_transmit() {
            self.sent.push((self.now, p));
        }
        if let Some(d) = self.agent.poll_timeout() {
            assert!(d >= self.now, "poll_timeout {d:?} is before now {:?}", self.now);
        }
        while let Some(e) = self.agent.poll_event() {
            self.events.push((self.now, e));
        }
    }
}
