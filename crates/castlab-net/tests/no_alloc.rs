//! The driver's per-packet path allocates nothing: a counting global allocator watches a
//! steady stream of datagrams between two agents over loopback unicast (after a warm-up, so
//! that the agents' own buffers and the driver's tables have their final size).
//!
//! Only the test's own thread is counted (`castlab_core::alloc_count`).

use std::net::Ipv4Addr;

use castlab_core::alloc_count::{counting_is_installed, thread_allocations, watch, CountingAlloc};
use castlab_core::{Addr, Agent, AgentId, Dest, Duration, Instant, NodeId, Packet, StartInfo};
use castlab_net::{Driver, NetConfig, SessionTable};

#[global_allocator]
static A: CountingAlloc = CountingAlloc;

/// Sends `burst` packets to `peer` every `every`; counts what it receives. Allocation-free.
struct Blaster {
    peer: Addr,
    every: Duration,
    burst: u32,
    next: Instant,
    due: u32,
    seq: u64,
    received: u64,
}

impl Agent for Blaster {
    fn handle_start(&mut self, now: Instant, _: StartInfo) {
        self.next = now + self.every;
    }
    fn handle_packet(&mut self, _: Instant, _: &Packet) {
        self.received += 1;
    }
    fn handle_timeout(&mut self, now: Instant) {
        while self.next <= now {
            self.due += self.burst;
            self.next += self.every;
        }
    }
    fn poll_transmit(&mut self) -> Option<Packet> {
        if self.due == 0 {
            return None;
        }
        self.due -= 1;
        self.seq += 1;
        let mut p = Packet::data(Dest::Unicast(self.peer), 600);
        p.seq = self.seq;
        Some(p)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Some(self.next)
    }
}

#[test]
fn steady_state_send_and_receive_allocate_nothing() {
    let mut t = SessionTable::new();
    t.set_node(NodeId(0), Ipv4Addr::new(127, 0, 0, 1)).unwrap();
    t.set_node(NodeId(1), Ipv4Addr::new(127, 0, 0, 2)).unwrap();
    let base = (20_000 + std::process::id().wrapping_mul(131) % 40_000) as u16;
    let cfg = NetConfig { port_base: base, key: Some(b"k".to_vec()), ..NetConfig::default() };
    let mut d = Driver::new(cfg, t).unwrap();
    let a = Addr::new(NodeId(0), 1);
    let b = Addr::new(NodeId(1), 1);
    let blaster = |peer| Blaster {
        peer,
        every: Duration::from_millis(2),
        burst: 3,
        next: Instant::ZERO,
        due: 0,
        seq: 0,
        received: 0,
    };
    d.add_agent(AgentId(0), a, Box::new(blaster(b))).unwrap();
    d.add_agent(AgentId(1), b, Box::new(blaster(a))).unwrap();
    d.run_until(d.now() + Duration::from_millis(200)).unwrap();
    assert!(counting_is_installed(), "the counting allocator is not in use");
    let sent0 = d.stats().datagrams_sent;
    let before = thread_allocations();
    watch(true);
    d.run_until(d.now() + Duration::from_millis(500)).unwrap();
    watch(false);
    let allocs = thread_allocations() - before;
    let sent = d.stats().datagrams_sent - sent0;
    assert!(sent > 600, "only {sent} datagrams");
    assert_eq!(d.stats().rejected_total(), 0);
    assert_eq!(allocs, 0, "{allocs} allocations for {sent} datagrams");
}
