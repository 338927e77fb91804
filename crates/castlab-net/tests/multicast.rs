//! A layered source and two receivers (a fixed-level sink and an RLM receiver) over loopback
//! IP multicast, each with its own driver and node address, inside a network namespace that
//! the test creates and deletes itself.
//!
//! The loopback interface of a fresh namespace carries multicast once it is up with the
//! multicast flag and a route for 239.0.0.0/8; the host's own interfaces are never touched.
//! The test re-runs its own binary inside the namespace (`ip netns exec`) with an environment
//! variable telling it to do the work. Without root or without `ip netns` it is skipped with
//! the reason printed (cargo has no "skipped" state: it passes and says so).

use std::net::{Ipv4Addr, UdpSocket};
use std::thread;

use castlab_core::{Addr, AgentId, Dest, GroupId, Header, Instant, NodeId, Packet, RlmHeader};
use castlab_net::{Driver, Envelope, GroupEntry, NetConfig, Reject, SessionTable};
use castlab_proto::rlm::{RlmConfig, RlmReceiver};
use castlab_proto::{CbrSource, LayeredSink};

mod common;
use common::{in_netns, lo, INNER};

const PORT_BASE: u16 = 47_000;
const SESSION: u32 = 0x5eed;
const LAYERS: u32 = 6;
const CTL: GroupId = GroupId(LAYERS);
const RUN_S: f64 = 3.5;
const LEAVE_AT_S: f64 = 1.5;

fn group_addr(g: u32) -> Ipv4Addr {
    Ipv4Addr::new(239, 255, 42, 1 + g as u8)
}

/// Nodes 0 (source, 127.0.0.1), 1 (sink), 2 (RLM receiver); six source-specific data groups
/// and an any-source control group, all on UDP port PORT_BASE.
fn table() -> SessionTable {
    let mut t = SessionTable::new();
    for n in 0..3u8 {
        t.set_node(NodeId(n as u32), lo(n + 1)).unwrap();
    }
    for g in 0..=LAYERS {
        let source = if g < LAYERS { Some(NodeId(0)) } else { None };
        t.set_group(GroupId(g), GroupEntry { addr: group_addr(g), udp_port: PORT_BASE, source }).unwrap();
    }
    t
}

fn cfg() -> NetConfig {
    NetConfig { port_base: PORT_BASE, session_id: SESSION, seed: 3, ..NetConfig::default() }
}

fn secs(s: f64) -> Instant {
    Instant::from_secs_f64(s)
}

fn data_groups() -> Vec<GroupId> {
    (0..LAYERS).map(GroupId).collect()
}

#[test]
fn layered_source_sink_and_rlm_receiver_over_loopback_multicast() {
    if std::env::var(INNER).is_err() {
        return in_netns("layered_source_sink_and_rlm_receiver_over_loopback_multicast", "mc");
    }
    // Receivers first, so that they are members when the source starts.
    let sink = thread::spawn(|| {
        let mut d = Driver::new(cfg(), table()).unwrap();
        let s = LayeredSink::recording(data_groups(), vec![(Instant::ZERO, 3), (secs(LEAVE_AT_S), 1)]);
        d.add_agent(AgentId(1), Addr::new(NodeId(1), 1), Box::new(s)).unwrap();
        d.run_until(secs(RUN_S)).unwrap();
        d
    });
    let rlm = thread::spawn(|| {
        let mut d = Driver::new(cfg(), table()).unwrap();
        // Short timers so that it climbs within the test (the paper's are seconds).
        let c = RlmConfig {
            t_min: castlab_core::Duration::from_millis(150),
            detection_init: castlab_core::Duration::from_millis(100),
            detection_dev_init: castlab_core::Duration::from_millis(20),
            session_interval_min: castlab_core::Duration::from_millis(500),
            // the rows of announcements heard: a forged one must not be among them
            trace: castlab_proto::Trace::Full,
            ..RlmConfig::default()
        };
        let r = RlmReceiver::try_new(c, data_groups(), CTL).unwrap();
        d.add_agent(AgentId(2), Addr::new(NodeId(2), 1), Box::new(r)).unwrap();
        d.run_until(secs(RUN_S)).unwrap();
        d
    });
    thread::sleep(std::time::Duration::from_millis(100));
    let src = thread::spawn(|| {
        let mut d = Driver::new(cfg(), table()).unwrap();
        // 64·2^m kb/s, 500-byte packets: layer 0 is 16 packets/s, all six 4 Mb/s.
        let rates: Vec<f64> = (0..LAYERS).map(|m| 64e3 * f64::from(1u32 << m)).collect();
        let s = CbrSource::try_layered(&data_groups(), &rates, 500, 1, Instant::ZERO, Instant::MAX, true)
            .expect("valid source");
        d.add_agent(AgentId(0), Addr::new(NodeId(0), 1), Box::new(s)).unwrap();
        d.run_until(secs(RUN_S - 0.1)).unwrap();
        d
    });

    // The attacker on 127.0.0.9, at 1 s.
    thread::sleep(std::time::Duration::from_millis(1000));
    let evil = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).unwrap();
    evil.set_multicast_if_v4(&lo(1)).unwrap();
    evil.bind(&std::net::SocketAddrV4::new(lo(9), 0).into()).unwrap();
    let evil: UdpSocket = evil.into();
    let env = Envelope::new(SESSION, None);
    let mut buf = [0u8; 2048];
    // a data packet on a source-specific group, claiming the source: the kernel's
    // source filter stops it before any socket
    let mut p = Packet::data(Dest::Group(GroupId(0)), 500);
    p.src = Addr::new(NodeId(0), 1);
    p.seq = 999_999;
    p.flow = 1;
    let n = env.seal(&p, &mut buf).unwrap();
    for _ in 0..10 {
        evil.send_to(&buf[..n], (group_addr(0), PORT_BASE)).unwrap();
    }
    // a control message on the any-source control group, claiming to be the source node:
    // the driver's source check drops it
    let mut c = Packet::data(Dest::Group(CTL), 40);
    c.src = Addr::new(NodeId(0), 1);
    c.header = Header::Rlm(RlmHeader { kind: RlmHeader::JOIN, level: 6, current: 5, receivers: 1 });
    let n = env.seal(&c, &mut buf).unwrap();
    for _ in 0..7 {
        evil.send_to(&buf[..n], (group_addr(LAYERS), PORT_BASE)).unwrap();
    }
    for k in 0..5u8 {
        evil.send_to(&[k; 33], (group_addr(LAYERS), PORT_BASE)).unwrap();
    }

    let src = src.join().unwrap();
    let sink = sink.join().unwrap();
    let rlm = rlm.join().unwrap();

    // The source sent everything it offered (under the cap), on six groups.
    let ss = src.stats();
    let offered = src.agent::<CbrSource>(0).unwrap().sent();
    assert_eq!(ss.datagrams_sent, offered);
    assert!(offered > 2000, "{offered}");

    // The sink: layers 0-2 until the leave, then layer 0 only; never layers 3-5 (joined by the
    // RLM receiver's process only); nothing lost; the forged data packet never delivered.
    let r = &sink.agent::<LayeredSink>(0).unwrap().records;
    let leave_ns = secs(LEAVE_AT_S).as_nanos();
    let grace = 50_000_000;
    let count = |layer: u8, from: u64, to: u64| {
        r.arr_layer.iter().zip(&r.arr_time_ns).filter(|(l, t)| **l == layer && **t >= from && **t < to).count()
    };
    for layer in 0..3u8 {
        assert!(count(layer, 0, leave_ns) > 0, "layer {layer} before the leave");
    }
    assert_eq!(count(1, leave_ns + grace, u64::MAX), 0, "layer 1 still delivered after the leave");
    assert_eq!(count(2, leave_ns + grace, u64::MAX), 0, "layer 2 still delivered after the leave");
    assert!(count(0, leave_ns + 1_000_000_000, u64::MAX) >= 8, "layer 0 stopped");
    assert!(r.arr_layer.iter().all(|&l| l < 3), "a layer the sink never joined reached it");
    assert!(!r.arr_seq.contains(&999_999), "the forged packet reached the sink");
    assert_eq!(r.lost(), 0);
    let sk = sink.stats();
    assert_eq!(sk.not_joined, 0, "the kernel delivered a group no local agent had joined");
    assert_eq!(sk.rejected_total(), 0);
    assert_eq!(sink.joined(0), &[GroupId(0)]);
    // layer 1 arrivals until the leave match what the source sent on it in that time (16 per
    // second at layer 0, 32 at layer 1) over the ~1.4 s between the source's start and the
    // leave; the lower bound leaves room for a slow start of the source's thread
    let l1 = count(1, 0, leave_ns) as f64;
    assert!((20.0..=55.0).contains(&l1), "layer 1 packets before the leave: {l1}");

    // The RLM receiver climbed (no loss on loopback), its membership follows its level, it
    // heard nobody else, and the forged and malformed control datagrams were counted.
    let rx = rlm.agent::<RlmReceiver>(0).unwrap();
    assert!(rx.level() >= 3, "RLM level {}", rx.level());
    assert_eq!(rx.records.lost(), 0);
    let mut joined = rlm.joined(0).to_vec();
    joined.sort();
    let mut want: Vec<GroupId> = (0..rx.level()).map(GroupId).collect();
    want.push(CTL);
    assert_eq!(joined, want);
    let rs = rlm.stats();
    assert_eq!(rs.rejected_by(Reject::WrongSource), 7);
    assert_eq!(rs.rejected_by(Reject::Malformed), 5);
    assert_eq!(rx.records.heard_time_ns.len(), 0, "a forged announcement reached the receiver");
    let levels = &rlm.timelines().level;
    assert!(levels.windows(2).all(|w| w[1] == w[0] + 1), "levels went down on a lossless path: {levels:?}");
    eprintln!(
        "source: {} datagrams, timer lateness mean {:.0} us max {:.0} us; sink {} packets; RLM level {} ({} level changes)",
        ss.datagrams_sent,
        ss.late_mean_ns() / 1e3,
        ss.late_max_ns as f64 / 1e3,
        r.received(),
        rx.level(),
        levels.len()
    );
}
