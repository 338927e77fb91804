//! The driver's shutdown step (`Driver::shutdown`) over loopback inside a namespace the test
//! creates and deletes itself: what an agent queues when told to stop is sent even past a full
//! rate cap (retried up to the limit given, then counted as unsent), the groups it still holds
//! are left at once (the kernel's membership list shows it), and the driver runs no more.
//! Without root or `ip netns` it is skipped with the reason printed.

use std::net::Ipv4Addr;

use castlab_core::{Addr, Agent, AgentEvent, AgentId, Dest, GroupId, Instant, NodeId, Packet, StartInfo};
use castlab_net::{Driver, GroupEntry, NetConfig, NetError, SessionTable};

mod common;
use common::{in_netns, lo, INNER};

const PORT_BASE: u16 = 47_300;
const GROUP: GroupId = GroupId(0);
const GROUP_ADDR: Ipv4Addr = Ipv4Addr::new(239, 255, 43, 1);

/// Joins the group and sends `burst` 1000-byte packets at start (emptying the rate cap's
/// bucket); told to stop, queues `on_stop` more to node 1 and leaves nothing itself.
struct Stopper {
    burst: u32,
    on_stop: u32,
    out: Vec<Packet>,
    joined: bool,
    stopped_at: Option<Instant>,
}

impl Agent for Stopper {
    fn handle_start(&mut self, _now: Instant, _info: StartInfo) {
        self.out.extend((0..self.burst).map(|_| Packet::data(Dest::Unicast(Addr::new(NodeId(1), 9)), 1000)));
    }
    fn handle_packet(&mut self, _now: Instant, _p: &Packet) {}
    fn handle_timeout(&mut self, _now: Instant) {}
    fn poll_transmit(&mut self) -> Option<Packet> {
        self.out.pop()
    }
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
    fn poll_event(&mut self) -> Option<AgentEvent> {
        if self.joined {
            return None;
        }
        self.joined = true;
        Some(AgentEvent::Join(GROUP))
    }
    fn handle_shutdown(&mut self, now: Instant) {
        self.stopped_at = Some(now);
        self.out.extend((0..self.on_stop).map(|_| Packet::data(Dest::Unicast(Addr::new(NodeId(1), 9)), 1000)));
    }
}

fn driver() -> Driver {
    let mut t = SessionTable::new();
    t.set_node(NodeId(0), lo(1)).unwrap();
    t.set_node(NodeId(1), lo(2)).unwrap();
    t.set_group(GROUP, GroupEntry { addr: GROUP_ADDR, udp_port: PORT_BASE, source: None }).unwrap();
    // 80 kb/s (10 kB/s), a 1500-byte bucket: one 1000-byte datagram, then one per ~100 ms
    let cfg = NetConfig {
        port_base: PORT_BASE,
        rate_cap_bps: 80e3,
        rate_cap_burst_bytes: 1500,
        allow_any_group: false,
        ..NetConfig::default()
    };
    Driver::new(cfg, t).unwrap()
}

/// Whether the kernel lists `GROUP_ADDR` as joined on lo (/proc/net/igmp writes each group
/// as the hexadecimal of its address in host byte order).
fn kernel_joined() -> bool {
    let text = std::fs::read_to_string("/proc/net/igmp").unwrap();
    let want = format!("{:08X}", u32::from_ne_bytes(GROUP_ADDR.octets()));
    text.lines().any(|l| l.trim_start().starts_with(&want))
}

#[test]
fn the_stop_step_sends_past_the_rate_cap_within_its_limit_and_leaves_the_groups() {
    if std::env::var(INNER).is_err() {
        return in_netns("the_stop_step_sends_past_the_rate_cap_within_its_limit_and_leaves_the_groups", "sd");
    }
    let stopper = || Stopper { burst: 5, on_stop: 3, out: Vec::new(), joined: false, stopped_at: None };

    // a limit of 0: no retry, the three packets find the bucket empty and are counted unsent
    let mut d = driver();
    d.add_agent(AgentId(1), Addr::new(NodeId(0), 1), Box::new(stopper())).unwrap();
    assert_eq!(d.joined(0), &[GROUP]);
    assert!(kernel_joined(), "the group is joined in the kernel");
    assert_eq!(d.stats().datagrams_sent, 1, "the start burst: one passes the cap");
    d.shutdown(std::time::Duration::ZERO);
    let s = d.stats().clone();
    assert_eq!((s.shutdown_agents, s.shutdown_sent, s.shutdown_unsent), (1, 0, 3));
    assert_eq!(s.datagrams_sent, 1);
    assert_eq!(s.shutdown_left_groups, 1, "the driver left the group the agent still held");
    assert!(d.joined(0).is_empty() && !kernel_joined(), "the membership is gone at once");
    assert!(d.agent::<Stopper>(0).unwrap().stopped_at.is_some());
    // the driver runs no more; a second shutdown does nothing
    assert!(matches!(d.run_until(Instant::MAX), Err(NetError::ShutDown)));
    d.shutdown(std::time::Duration::from_secs(1));
    assert_eq!(d.stats().shutdown_agents, 1);
    drop(d);

    // a limit of 1 s: the step waits for the bucket (about 100 ms per datagram) and sends all
    let mut d = driver();
    d.add_agent(AgentId(1), Addr::new(NodeId(0), 1), Box::new(stopper())).unwrap();
    let drops_before = d.stats().rate_cap_drops;
    let t0 = std::time::Instant::now();
    d.shutdown(std::time::Duration::from_secs(1));
    let took = t0.elapsed().as_secs_f64();
    let s = d.stats().clone();
    eprintln!("shutdown step: 3 datagrams past an empty 80 kb/s cap in {:.0} ms", took * 1e3);
    assert_eq!((s.shutdown_sent, s.shutdown_unsent, s.datagrams_sent), (3, 0, 4));
    assert_eq!(s.rate_cap_drops, drops_before, "a retried datagram is not counted as dropped");
    assert!((0.15..1.0).contains(&took), "{took} s: the bucket refills at 10 kB/s");
    assert!(!kernel_joined());
}
