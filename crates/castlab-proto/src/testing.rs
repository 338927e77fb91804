//! One harness for driving an agent by hand (test support; modelled on quinn's `tests/util.rs`).
//!
//! [`Driver`] applies the driving rule of [`castlab_core::agent`] after every call: it drains
//! the transmits into [`Driver::sent`] and the events into [`Driver::events`], and re-reads the
//! deadline, checking that it is never earlier than `now` (an agent asking to be woken in the
//! past is a bug the harness reports by panicking with the instant).
//!
//! Available to the crate's own tests and, with the `testing` feature, to other crates' tests.

use castlab_core::{Addr, Agent, AgentEvent, Instant, NodeId, Packet, Rng, StartInfo};

/// An agent driven by hand, with what it sent and asked for.
pub struct Driver<A: Agent> {
    pub agent: A,
    pub now: Instant,
    /// Every packet the agent sent, with the instant it was sent.
    pub sent: Vec<(Instant, Packet)>,
    pub events: Vec<(Instant, AgentEvent)>,
}

impl<A: Agent> Driver<A> {
    /// Start `agent` at `at` with address `addr` and an RNG seeded with `seed`.
    pub fn start_at(mut agent: A, at: Instant, addr: Addr, seed: u64) -> Self {
        agent.handle_start(at, StartInfo { addr, rng: Rng::seed_from_u64(seed) });
        let mut d = Driver { agent, now: at, sent: Vec::new(), events: Vec::new() };
        d.drain();
        d
    }

    /// Start at time zero on node 0, port 1.
    pub fn start(agent: A, seed: u64) -> Self {
        Self::start_at(agent, Instant::ZERO, Addr::new(NodeId(0), 1), seed)
    }

    /// The driving rule after a `handle_*` call: drain transmits and events, check the deadline.
    fn drain(&mut self) {
        while let Some(p) = self.agent.poll_transmit() {
            self.sent.push((self.now, p));
        }
        if let Some(d) = self.agent.poll_timeout() {
            assert!(d >= self.now, "poll_timeout gave {d:?}, earlier than now = {:?}", self.now);
        }
        while let Some(e) = self.agent.poll_event() {
            self.events.push((self.now, e));
        }
    }

    /// The next deadline the agent asked for.
    pub fn deadline(&self) -> Option<Instant> {
        self.agent.poll_timeout()
    }

    /// Deliver `p` at `at` (>= now), after firing every deadline before it.
    pub fn packet(&mut self, at: Instant, p: &Packet) {
        self.advance_to(at);
        self.agent.handle_packet(at, p);
        self.drain();
    }

    /// Fire the next deadline if there is one at or before `limit`; returns the instant fired.
    pub fn step(&mut self, limit: Instant) -> Option<Instant> {
        let d = self.agent.poll_timeout().filter(|d| *d <= limit)?;
        self.now = self.now.max(d);
        self.agent.handle_timeout(self.now);
        self.drain();
        Some(d)
    }

    /// Advance to `t` as a driver would: every deadline up to `t`, in order; `now` ends at `t`.
    /// Stops after `max_steps` timeouts (returning false) so a timer that re-arms at `now` for
    /// ever cannot hang a test.
    pub fn advance_to_bounded(&mut self, t: Instant, max_steps: usize) -> bool {
        assert!(t >= self.now, "time goes backwards: {t:?} < {:?}", self.now);
        for _ in 0..max_steps {
            if self.step(t).is_none() {
                self.now = t;
                return true;
            }
        }
        false
    }

    /// [`Driver::advance_to_bounded`] with a generous bound; panics if it is reached.
    pub fn advance_to(&mut self, t: Instant) {
        assert!(self.advance_to_bounded(t, 10_000_000), "more than 10^7 timeouts before {t:?}");
    }

    /// Take what was sent so far.
    pub fn take_sent(&mut self) -> Vec<(Instant, Packet)> {
        std::mem::take(&mut self.sent)
    }

    /// Take the events so far.
    pub fn take_events(&mut self) -> Vec<(Instant, AgentEvent)> {
        std::mem::take(&mut self.events)
    }
}
