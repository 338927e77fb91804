//! One harness for driving agents by hand (quinn-proto's `tests/util.rs` is the model):
//!
//! * [`Driver`]: one agent. It follows the driving rule of [`castlab_core::agent`] exactly,
//!   keeps what the agent sent and reported with the instant it happened, fires timers in
//!   deadline order and never early, and checks on every step that the agent never asks to be
//!   woken in the past. A test hands it packets ([`Driver::packet`]) and moves its clock
//!   ([`Driver::advance_to`]).
//! * [`Pair`]: two agents on two `Driver`s, joined by a [`Link`] each way (rate, delay, a loss
//!   pattern, a queue limit), run on virtual time by [`Pair::run_until`].
//!
//! Compiled for this crate's tests and, with the `testing` feature, for other crates' tests.

use std::collections::VecDeque;

use castlab_core::{Addr, Agent, AgentEvent, Duration, Instant, NodeId, Packet, Rng, StartInfo, StreamKind};

/// `x` milliseconds after the start of time.
pub fn ms(x: u64) -> Instant {
    Instant::from_nanos(x * 1_000_000)
}

/// An agent's start on `addr` with the random stream of seed 1.
pub fn start_info(addr: Addr) -> StartInfo {
    StartInfo { addr, rng: Rng::seed_from_u64(1) }
}

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

    /// Advance to `t` as [`Driver::packet`] does, then tell the agent that node `node`
    /// restarted ([`Agent::handle_peer_restart`]).
    pub fn peer_restart(&mut self, t: Instant, node: NodeId) {
        self.advance_to(t);
        self.agent.handle_peer_restart(self.now, node);
        self.drain();
    }

    /// Advance to `t` as [`Driver::packet`] does, then tell the agent to stop
    /// ([`Agent::handle_shutdown`]) and apply the driving rule once, as the real-network
    /// driver does before it exits.
    pub fn shutdown(&mut self, t: Instant) {
        self.advance_to(t);
        self.agent.handle_shutdown(self.now);
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

/// Which end of a [`Pair`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// What decides, for each packet offered to a [`Link`], whether the link loses it.
pub type LossPattern = Box<dyn FnMut(&Packet) -> bool>;

/// One direction of a [`Pair`]'s link: a FIFO queue drained at `rate_bps` (`None`: infinitely
/// fast, every packet leaves at once), then `delay` of propagation. A packet offered while
/// `queue_limit` packets wait or are being transmitted is dropped (`None`: no limit); before
/// that, the loss pattern may lose it. Packets arrive in the order they were sent.
pub struct Link {
    pub rate_bps: Option<f64>,
    pub delay: Duration,
    pub queue_limit: Option<usize>,
    loss: Option<LossPattern>,
    /// When the transmitter has sent everything queued so far.
    busy_until: Instant,
    /// When each packet not yet fully transmitted finishes (front: the oldest).
    in_queue: VecDeque<Instant>,
    /// Packets the loss pattern lost.
    pub lost: u64,
    /// Packets refused by the full queue.
    pub queue_drops: u64,
    /// Packets delivered.
    pub delivered: u64,
}

impl Link {
    /// An infinitely fast, unbounded, lossless link of one-way `delay`.
    pub fn delay(delay: Duration) -> Self {
        Link {
            rate_bps: None,
            delay,
            queue_limit: None,
            loss: None,
            busy_until: Instant::ZERO,
            in_queue: VecDeque::new(),
            lost: 0,
            queue_drops: 0,
            delivered: 0,
        }
    }

    /// The same link transmitting at `rate_bps` bits per second.
    pub fn rate_bps(mut self, rate_bps: f64) -> Self {
        assert!(rate_bps > 0.0 && rate_bps.is_finite(), "a link rate is positive and finite: {rate_bps}");
        self.rate_bps = Some(rate_bps);
        self
    }

    /// The same link holding at most `packets` packets (the one in transmission included).
    pub fn queue_limit(mut self, packets: usize) -> Self {
        self.queue_limit = Some(packets);
        self
    }

    /// The same link losing the packets `pattern` says to lose (it sees every packet offered,
    /// in order).
    pub fn loss(mut self, pattern: impl FnMut(&Packet) -> bool + 'static) -> Self {
        self.loss = Some(Box::new(pattern));
        self
    }

    /// `p` offered at `now`: its arrival time at the far end, or None when it is lost or the
    /// queue is full.
    fn offer(&mut self, now: Instant, p: &Packet) -> Option<Instant> {
        if self.loss.as_mut().is_some_and(|f| f(p)) {
            self.lost += 1;
            return None;
        }
        while self.in_queue.front().is_some_and(|&t| t <= now) {
            self.in_queue.pop_front();
        }
        if self.queue_limit.is_some_and(|n| self.in_queue.len() >= n) {
            self.queue_drops += 1;
            return None;
        }
        let done = match self.rate_bps {
            None => now,
            Some(r) => {
                let start = self.busy_until.max(now);
                let tx = Duration::from_secs_f64(p.size_bytes as f64 * 8.0 / r);
                self.busy_until = start + tx;
                self.in_queue.push_back(self.busy_until);
                self.busy_until
            }
        };
        Some(done + self.delay)
    }
}

/// Two agents joined by a link, one [`Link`] per direction, on virtual time (quinn-proto's
/// `tests/util.rs` `Pair` is the model). Each agent runs on its own [`Driver`], so the driving
/// rule is followed and checked as there. Everything A sends goes to B and everything B sends
/// to A, whatever its destination, stamped as the simulator stamps it (`src`, `uid`,
/// `sent_at`). At one instant, packets arrive before timers fire, in the order they were sent;
/// of two timers due together, A's fires first.
pub struct Pair<A: Agent, B: Agent> {
    pub a: Driver<A>,
    pub b: Driver<B>,
    /// The link from A to B.
    pub ab: Link,
    /// The link from B to A.
    pub ba: Link,
    addrs: (Addr, Addr),
    /// Packets on the links: (arrival, send order, to, packet).
    wire: Vec<(Instant, u64, Side, Packet)>,
    order: u64,
    /// How many of each driver's transmissions are on the links already.
    taken: (usize, usize),
}

impl<A: Agent, B: Agent> Pair<A, B> {
    /// Start `a` (then `b`) at 0 with the given start information, joined by `ab` and `ba`.
    pub fn start(a: A, a_info: StartInfo, b: B, b_info: StartInfo, ab: Link, ba: Link) -> Self {
        let addrs = (a_info.addr, b_info.addr);
        let a = Driver::start_with(a, Instant::ZERO, a_info);
        let b = Driver::start_with(b, Instant::ZERO, b_info);
        let mut pair = Pair { a, b, ab, ba, addrs, wire: Vec::new(), order: 0, taken: (0, 0) };
        pair.pump();
        pair
    }

    /// Put what the agents transmitted since the last call on the links.
    fn pump(&mut self) {
        for k in self.taken.0..self.a.sent.len() {
            let (now, mut p) = self.a.sent[k];
            self.order += 1;
            p.src = self.addrs.0;
            p.uid = self.order;
            p.sent_at = now;
            if let Some(at) = self.ab.offer(now, &p) {
                self.wire.push((at, self.order, Side::B, p));
            }
        }
        self.taken.0 = self.a.sent.len();
        for k in self.taken.1..self.b.sent.len() {
            let (now, mut p) = self.b.sent[k];
            self.order += 1;
            p.src = self.addrs.1;
            p.uid = self.order;
            p.sent_at = now;
            if let Some(at) = self.ba.offer(now, &p) {
                self.wire.push((at, self.order, Side::A, p));
            }
        }
        self.taken.1 = self.b.sent.len();
    }

    /// Run the next arrival or timer due at or before `until`; false when there is none.
    pub fn step(&mut self, until: Instant) -> bool {
        let next = self.wire.iter().enumerate().min_by_key(|(_, w)| (w.0, w.1)).map(|(i, w)| (i, w.0));
        let ta = self.a.agent.poll_timeout();
        let tb = self.b.agent.poll_timeout();
        let Some(t) = [next.map(|x| x.1), ta, tb].into_iter().flatten().min() else { return false };
        if t > until {
            return false;
        }
        match next {
            Some((i, at)) if at == t => {
                let (_, _, to, p) = self.wire.remove(i);
                match to {
                    Side::A => {
                        self.ba.delivered += 1;
                        self.a.packet_before_timers(t, &p)
                    }
                    Side::B => {
                        self.ab.delivered += 1;
                        self.b.packet_before_timers(t, &p)
                    }
                }
            }
            _ if ta == Some(t) => self.a.advance_to(t),
            _ => self.b.advance_to(t),
        }
        self.pump();
        true
    }

    /// Run every arrival and timer due at or before `until`, then bring both agents' clocks to
    /// `until`.
    pub fn run_until(&mut self, until: Instant) {
        // bounded: a pair that never goes quiet before `until` is a bug worth a panic
        for _ in 0..10_000_000 {
            if !self.step(until) {
                self.a.advance_to(until.max(self.a.now));
                self.b.advance_to(until.max(self.b.now));
                self.pump();
                return;
            }
        }
        panic!("more than 10^7 steps before {until:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use castlab_core::{Dest, GroupId};

    /// Sends `n` packets of `size` bytes at start, numbered 0.., and records what it receives.
    struct Burst {
        n: u64,
        size: u32,
        out: VecDeque<Packet>,
        got: Vec<(Instant, u64)>,
    }

    impl Burst {
        fn new(n: u64, size: u32) -> Self {
            Burst { n, size, out: VecDeque::new(), got: Vec::new() }
        }
    }

    impl Agent for Burst {
        fn handle_start(&mut self, _now: Instant, _info: StartInfo) {
            for k in 0..self.n {
                let mut p = Packet::data(Dest::Group(GroupId(0)), self.size);
                p.seq = k;
                self.out.push_back(p);
            }
        }
        fn handle_packet(&mut self, now: Instant, p: &Packet) {
            self.got.push((now, p.seq));
        }
        fn handle_timeout(&mut self, _now: Instant) {}
        fn poll_transmit(&mut self) -> Option<Packet> {
            self.out.pop_front()
        }
        fn poll_timeout(&self) -> Option<Instant> {
            None
        }
    }

    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }

    fn info(node: u32) -> StartInfo {
        StartInfo { addr: Addr::new(NodeId(node), 1), rng: Rng::seed_from_u64(1) }
    }

    fn pair(n: u64, ab: Link) -> Pair<Burst, Burst> {
        Pair::start(Burst::new(n, 1000), info(0), Burst::new(0, 1000), info(1), ab, Link::delay(Duration::ZERO))
    }

    #[test]
    fn an_infinitely_fast_link_delivers_a_burst_after_the_delay_in_order() {
        let mut p = pair(3, Link::delay(Duration::from_millis(100)));
        p.run_until(ms(1000));
        assert_eq!(p.b.agent.got, vec![(ms(100), 0), (ms(100), 1), (ms(100), 2)]);
        assert_eq!((p.ab.delivered, p.ab.lost, p.ab.queue_drops), (3, 0, 0));
        assert_eq!((p.a.now, p.b.now), (ms(1000), ms(1000)));
    }

    #[test]
    fn a_rate_serialises_packets_and_a_queue_limit_drops_the_excess() {
        // 1000-byte packets at 80 kb/s: 100 ms each, then 10 ms of propagation
        let link = || Link::delay(Duration::from_millis(10)).rate_bps(80_000.0);
        let mut p = pair(3, link());
        p.run_until(ms(1000));
        assert_eq!(p.b.agent.got, vec![(ms(110), 0), (ms(210), 1), (ms(310), 2)]);
        // two packets fit (the one in transmission and one waiting): the third is dropped
        let mut p = pair(3, link().queue_limit(2));
        p.run_until(ms(1000));
        assert_eq!(p.b.agent.got, vec![(ms(110), 0), (ms(210), 1)]);
        assert_eq!((p.ab.delivered, p.ab.queue_drops), (2, 1));
    }

    #[test]
    fn the_loss_pattern_sees_every_packet_and_loses_what_it_says() {
        let mut seen = 0;
        let mut p = pair(
            4,
            Link::delay(Duration::from_millis(5)).loss(move |q| {
                assert_eq!(q.seq, seen, "offered in order");
                seen += 1;
                q.seq % 2 == 1
            }),
        );
        p.run_until(ms(100));
        assert_eq!(p.b.agent.got, vec![(ms(5), 0), (ms(5), 2)]);
        assert_eq!((p.ab.delivered, p.ab.lost), (2, 2));
    }

    #[test]
    fn packets_are_stamped_as_the_simulator_stamps_them() {
        struct Check(Vec<Packet>);
        impl Agent for Check {
            fn handle_start(&mut self, _now: Instant, _info: StartInfo) {}
            fn handle_packet(&mut self, _now: Instant, p: &Packet) {
                self.0.push(*p);
            }
            fn handle_timeout(&mut self, _now: Instant) {}
            fn poll_transmit(&mut self) -> Option<Packet> {
                None
            }
            fn poll_timeout(&self) -> Option<Instant> {
                None
            }
        }
        let mut p = Pair::start(
            Burst::new(2, 100),
            info(4),
            Check(Vec::new()),
            info(5),
            Link::delay(Duration::from_millis(1)),
            Link::delay(Duration::ZERO),
        );
        p.run_until(ms(10));
        let got = &p.b.agent.0;
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|q| q.src == Addr::new(NodeId(4), 1) && q.sent_at == Instant::ZERO));
        assert_ne!(got[0].uid, got[1].uid);
    }
}
