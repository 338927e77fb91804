//! The driver over loopback unicast (no root needed): timers and sockets with a ping-pong
//! pair, hostile datagrams at a running receiver, the sending-rate cap.
//!
//! Nodes are distinct loopback addresses (127.0.0.1, 127.0.0.2, ...), which Linux routes to
//! `lo` without configuration, so each node has its own IP and source checks mean something.
//! Each test takes its own UDP port range, derived from the process id, so parallel tests and
//! parallel runs do not collide.

use std::collections::VecDeque;
use std::net::{Ipv4Addr, UdpSocket};

use castlab_core::{Addr, Agent, AgentId, Dest, Duration, Header, Instant, NodeId, Packet, StartInfo};
use castlab_net::{Driver, Envelope, NetConfig, Reject, SessionTable};
use castlab_proto::{CbrSource, CbrStream, LayeredSink};

fn lo(n: u8) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 0, n)
}

/// A port base for test number `k` of this process: 40 ports each, within 20000..60000.
fn port_base(k: u32) -> u16 {
    let pid = std::process::id();
    (20_000 + (pid.wrapping_mul(97).wrapping_add(k * 40)) % 40_000) as u16
}

fn table(nodes: u8) -> SessionTable {
    let mut t = SessionTable::new();
    for n in 0..nodes {
        t.set_node(NodeId(n as u32), lo(n + 1)).unwrap();
    }
    t
}

/// Sends a ping to its peer at each of its own deadlines and answers every ping with a pong.
/// Records (deadline, when it ran) for each timer and the pongs it got.
struct PingPong {
    peer: Addr,
    deadlines: VecDeque<Instant>,
    fired: Vec<(Instant, Instant)>,
    pongs: Vec<u64>,
    pings_answered: u64,
    /// (packet's sent_at, arrival) of every packet received.
    arrivals: Vec<(Instant, Instant)>,
    out: VecDeque<Packet>,
    next: u64,
}

const PING: u16 = 1;
const PONG: u16 = 2;

impl PingPong {
    fn new(peer: Addr, deadlines: Vec<Instant>) -> Self {
        PingPong {
            peer,
            deadlines: deadlines.into(),
            fired: Vec::new(),
            pongs: Vec::new(),
            pings_answered: 0,
            arrivals: Vec::new(),
            out: VecDeque::new(),
            next: 0,
        }
    }
    fn msg(&self, kind: u16, seq: u64) -> Packet {
        let mut p = Packet::data(Dest::Unicast(self.peer), 100);
        p.header = Header::Control(castlab_core::ControlMsg { kind, args: [seq, 0, 0] });
        p.seq = seq;
        p
    }
}

impl Agent for PingPong {
    fn handle_start(&mut self, _now: Instant, _info: StartInfo) {}
    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        self.arrivals.push((p.sent_at, now));
        if let Header::Control(c) = p.header {
            match c.kind {
                PING => {
                    self.pings_answered += 1;
                    let m = self.msg(PONG, c.args[0]);
                    self.out.push_back(m);
                }
                PONG => self.pongs.push(c.args[0]),
                _ => {}
            }
        }
    }
    fn handle_timeout(&mut self, now: Instant) {
        while let Some(&d) = self.deadlines.front() {
            if d > now {
                break;
            }
            self.deadlines.pop_front();
            self.fired.push((d, now));
            let m = self.msg(PING, self.next);
            self.next += 1;
            self.out.push_back(m);
        }
    }
    fn poll_transmit(&mut self) -> Option<Packet> {
        self.out.pop_front()
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.deadlines.front().copied()
    }
}

#[test]
fn ping_pong_timers_fire_in_order_never_early_and_every_ping_is_answered() {
    let cfg = NetConfig { port_base: port_base(0), session_id: 11, ..NetConfig::default() };
    let mut d = Driver::new(cfg, table(2)).unwrap();
    let a = Addr::new(NodeId(0), 1);
    let b = Addr::new(NodeId(1), 2);
    let t0 = d.now();
    // A: every 7 ms for 40 deadlines; B: an irregular set, with two equal deadlines.
    let da: Vec<Instant> = (1..=40).map(|k| t0 + Duration::from_millis(7 * k)).collect();
    let mut db: Vec<Instant> = (1..=15).map(|k| t0 + Duration::from_millis(3 + 11 * k * k % 250)).collect();
    db.sort();
    db.push(*db.last().unwrap());
    let ia = d.add_agent(AgentId(0), a, Box::new(PingPong::new(b, da.clone()))).unwrap();
    let ib = d.add_agent(AgentId(1), b, Box::new(PingPong::new(a, db.clone()))).unwrap();
    d.run_until(t0 + Duration::from_millis(600)).unwrap();

    for (i, want) in [(ia, &da), (ib, &db)] {
        let pp = d.agent::<PingPong>(i).unwrap();
        let deadlines: Vec<Instant> = pp.fired.iter().map(|f| f.0).collect();
        // every deadline ran once, in order (deadlines already due at a wake-up run together)
        assert_eq!(&deadlines, want, "agent {i}");
        for (dl, ran) in &pp.fired {
            assert!(ran >= dl, "agent {i}: deadline {dl} ran early at {ran}");
        }
        assert!(pp.fired.windows(2).all(|w| w[0].1 <= w[1].1), "run times go back");
        // every ping came back as a pong, in order (loopback does not reorder)
        assert_eq!(pp.pongs, (0..want.len() as u64).collect::<Vec<_>>(), "agent {i}");
    }
    let s = d.stats();
    let pings = (da.len() + db.len()) as u64;
    assert_eq!(s.datagrams_sent, 2 * pings);
    assert_eq!(s.datagrams_received, 2 * pings);
    assert_eq!(s.delivered, 2 * pings);
    assert_eq!(s.rejected_total(), 0);
    // each datagram is padded to the packet's 100 bytes
    assert_eq!(s.bytes_sent, 2 * pings * 100);
    assert!(s.timer_fires > 0 && s.late_max_ns as f64 >= s.late_mean_ns());
    // the loop's lateness is bounded by the poll's millisecond granularity and the load of
    // the machine; a generous bound that still catches a loop that polls on a fixed tick
    assert!(s.late_max_ns < 200_000_000, "late max {} ns", s.late_max_ns);
}

/// A unicast CBR source on node 0 to a sink on node 1.
fn source_and_sink(cfg: NetConfig, rate_bps: f64, size: u32) -> (Driver, usize, usize) {
    let mut d = Driver::new(cfg, table(3)).unwrap();
    let sink_addr = Addr::new(NodeId(1), 5);
    let sink = d.add_agent(AgentId(1), sink_addr, Box::new(LayeredSink::recording(vec![], vec![]))).unwrap();
    let st = CbrStream::new(Dest::Unicast(sink_addr), rate_bps, 0);
    let src = CbrSource::try_new(vec![st], size, 7, Instant::ZERO, Instant::MAX, false).expect("valid source");
    let s = d.add_agent(AgentId(0), Addr::new(NodeId(0), 4), Box::new(src)).unwrap();
    (d, s, sink)
}

#[test]
fn hostile_datagrams_are_counted_by_reason_and_the_receiver_keeps_working() {
    let key = b"pre-shared".to_vec();
    let cfg = NetConfig { port_base: port_base(1), session_id: 21, key: Some(key.clone()), ..NetConfig::default() };
    let base = cfg.port_base;
    let (mut d, _src, sink) = source_and_sink(cfg, 400_000.0, 500); // 100 packets/s
    d.run_until(d.now() + Duration::from_millis(300)).unwrap();
    let before = d.agent::<LayeredSink>(sink).unwrap().records.received();
    assert!(before >= 20, "{before}");

    // The attacker: another loopback address, sending at the sink's UDP port.
    let target = (lo(2), base + 5);
    let evil = UdpSocket::bind((lo(9), 0)).unwrap();
    let good = Envelope::new(21, Some(&key));
    let sink_addr = Addr::new(NodeId(1), 5);
    let mut p = Packet::data(Dest::Unicast(sink_addr), 500);
    p.src = Addr::new(NodeId(0), 4); // claims to be the source, but comes from 127.0.0.9
    p.flow = 7;
    p.seq = 1_000_000;
    let mut buf = [0u8; 2048];
    let mut sent = [0u64; 7];
    let mut shoot = |bytes: &[u8], why: Reject| {
        evil.send_to(bytes, target).unwrap();
        sent[why as usize] += 1;
    };
    for k in 0..50u8 {
        // garbage of every length from 0 to 49
        let junk: Vec<u8> = (0..k).map(|i| i.wrapping_mul(31).wrapping_add(k)).collect();
        shoot(&junk, Reject::Malformed);
    }
    let n = Envelope::new(99, Some(&key)).seal(&p, &mut buf).unwrap();
    for _ in 0..20 {
        shoot(&buf[..n], Reject::ForeignSession);
    }
    let n = Envelope::new(21, None).seal(&p, &mut buf).unwrap();
    for _ in 0..20 {
        shoot(&buf[..n], Reject::Unauthenticated);
    }
    let n = Envelope::new(21, Some(b"guess")).seal(&p, &mut buf).unwrap();
    for _ in 0..20 {
        shoot(&buf[..n], Reject::BadMac);
    }
    let n = good.seal(&p, &mut buf).unwrap();
    for _ in 0..20 {
        shoot(&buf[..n], Reject::WrongSource);
    }
    // right key, right claimed source, but one byte longer than size_bytes
    buf[n] = 0;
    for _ in 0..20 {
        shoot(&buf[..n + 1], Reject::WrongSize);
    }
    let mut other = p;
    other.dst = Dest::Unicast(Addr::new(NodeId(1), 6));
    let n = good.seal(&other, &mut buf).unwrap();
    for _ in 0..20 {
        shoot(&buf[..n], Reject::Misdirected);
    }

    d.run_until(d.now() + Duration::from_millis(500)).unwrap();
    let s = d.stats().clone();
    for r in Reject::ALL {
        assert_eq!(s.rejected_by(r), sent[r as usize], "{}", r.name());
    }
    let rec = &d.agent::<LayeredSink>(sink).unwrap().records;
    assert!(rec.received() >= before + 30, "the sink stopped: {} -> {}", before, rec.received());
    assert!(!rec.arr_seq.contains(&1_000_000), "a hostile packet reached the agent");
    assert_eq!(rec.lost(), 0);
    assert_eq!(s.delivered, rec.received());
}

#[test]
fn rate_cap_holds_and_counts_what_it_drops() {
    // The source offers 4 Mb/s; the cap is 1 Mb/s with a 16 KB bucket.
    let cfg =
        NetConfig { port_base: port_base(2), rate_cap_bps: 1e6, rate_cap_burst_bytes: 16_000, ..NetConfig::default() };
    let (mut d, _src, sink) = source_and_sink(cfg, 4e6, 1000);
    let t0 = d.now();
    d.run_until(t0 + Duration::from_millis(1500)).unwrap();
    let elapsed = (d.now() - t0).as_secs_f64();
    let s = d.stats().clone();
    let cap_bytes = 1e6 / 8.0 * elapsed + 16_000.0;
    assert!(s.bytes_sent as f64 <= cap_bytes, "sent {} > {}", s.bytes_sent, cap_bytes);
    assert!(s.bytes_sent as f64 >= 0.85 * 1e6 / 8.0 * elapsed, "sent {} far below the cap", s.bytes_sent);
    assert!(s.rate_cap_drops > 0);
    // everything offered was either sent or dropped by the cap
    let offered = d.agent::<CbrSource>(1).unwrap().sent();
    assert_eq!(s.datagrams_sent + s.rate_cap_drops, offered);
    assert_eq!(s.rate_cap_drop_bytes, s.rate_cap_drops * 1000);
    // what was sent arrived (loopback); the last datagram may still be in the socket when the
    // run stops, so read on a little: the sink must then hold at least everything sent before
    d.run_until(d.now() + Duration::from_millis(100)).unwrap();
    let rec = &d.agent::<LayeredSink>(sink).unwrap().records;
    assert!(rec.received() >= s.datagrams_sent, "{} received of {} sent", rec.received(), s.datagrams_sent);
}

#[test]
fn bad_configuration_is_an_error_naming_the_field() {
    let t = table(1);
    let err = |cfg: NetConfig, t: SessionTable| Driver::new(cfg, t).err().expect("an error").to_string();
    assert!(err(NetConfig { rate_cap_bps: -1.0, ..NetConfig::default() }, t.clone()).starts_with("rate_cap_bps"));
    assert!(err(NetConfig { ttl: 0, ..NetConfig::default() }, t.clone()).starts_with("ttl"));
    let mut g = t.clone();
    let e = castlab_net::GroupEntry { addr: Ipv4Addr::new(224, 1, 2, 3), udp_port: 5000, source: None };
    g.set_group(castlab_core::GroupId(0), e).unwrap();
    assert!(err(NetConfig::default(), g.clone()).starts_with("group address"));
    assert!(Driver::new(NetConfig { allow_any_group: true, ..NetConfig::default() }, g).is_ok());
    let mut s = t.clone();
    let e = castlab_net::GroupEntry { addr: Ipv4Addr::new(239, 1, 2, 3), udp_port: 5000, source: Some(NodeId(7)) };
    s.set_group(castlab_core::GroupId(0), e).unwrap();
    assert!(err(NetConfig::default(), s).starts_with("group source"));
    // table entries
    let mut t2 = SessionTable::new();
    assert!(t2.set_node(NodeId(0), Ipv4Addr::new(239, 0, 0, 1)).unwrap_err().to_string().starts_with("node address"));
    assert!(t2.set_node(NodeId(5000), lo(1)).unwrap_err().to_string().starts_with("node"));
    // an agent on a node without an address, or on a port in use
    let mut d = Driver::new(NetConfig { port_base: port_base(3), ..NetConfig::default() }, t).unwrap();
    let sink = || Box::new(LayeredSink::recording(vec![], vec![]));
    assert!(d.add_agent(AgentId(0), Addr::new(NodeId(3), 1), sink()).err().unwrap().to_string().starts_with("node"));
    d.add_agent(AgentId(0), Addr::new(NodeId(0), 1), sink()).unwrap();
    assert!(d.add_agent(AgentId(1), Addr::new(NodeId(0), 1), sink()).err().unwrap().to_string().starts_with("port"));
    // castlab ports wrap onto UDP ports modulo 2^16; the one that lands on UDP port 0 is refused
    let e = d.add_agent(AgentId(1), Addr::new(NodeId(0), 0u16.wrapping_sub(port_base(3))), sink()).err().unwrap();
    assert!(e.to_string().starts_with("port") && e.to_string().contains("UDP port 0"), "{e}");
}

#[test]
fn sent_at_arrives_on_the_receivers_clock_across_drivers_started_apart() {
    // Two drivers (as two processes would be) whose time zeros are 300 ms apart: the packet's
    // sent_at, stamped on the sender's clock, must reach the receiver on the receiver's clock.
    let base = port_base(4);
    let cfg = move || NetConfig { port_base: base, session_id: 31, ..NetConfig::default() };
    let a = Addr::new(NodeId(0), 1);
    let b = Addr::new(NodeId(1), 2);
    let mut rx = Driver::new(cfg(), table(2)).unwrap();
    rx.add_agent(AgentId(1), b, Box::new(PingPong::new(a, vec![]))).unwrap();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let mut tx = Driver::new(cfg(), table(2)).unwrap();
        let t0 = tx.now();
        let pings: Vec<Instant> = (1..=20).map(|k| t0 + Duration::from_millis(10 * k)).collect();
        tx.add_agent(AgentId(0), a, Box::new(PingPong::new(b, pings))).unwrap();
        tx.run_until(t0 + Duration::from_millis(400)).unwrap();
        tx
    });
    rx.run_until(rx.now() + Duration::from_millis(900)).unwrap();
    let tx = sender.join().unwrap();
    let got = &rx.agent::<PingPong>(0).unwrap().arrivals;
    assert_eq!(got.len(), 20);
    for (sent, arrived) in got {
        // the receiver's clock is ~300 ms ahead of the sender's; a raw copy would be 300 ms off
        let one_way = arrived.as_nanos() as i64 - sent.as_nanos() as i64;
        assert!((-1_000_000..100_000_000).contains(&one_way), "one-way {one_way} ns");
        assert!(sent.as_nanos() > 300_000_000, "sent_at {sent} is on the sender's clock");
    }
    // and the pongs came back, on the sender's clock likewise
    for (sent, arrived) in &tx.agent::<PingPong>(0).unwrap().arrivals {
        let one_way = arrived.as_nanos() as i64 - sent.as_nanos() as i64;
        assert!((-1_000_000..100_000_000).contains(&one_way), "one-way {one_way} ns");
    }
}

/// A source process restarted: its datagrams come with a newer session epoch and sequence
/// numbers from zero again. The receiving driver counts the restart and tells its sink, which
/// resynchronises (a gap in the new sequence space is a loss again); a late datagram of the
/// old incarnation is counted as stale and dropped.
#[test]
fn a_restarted_source_is_told_by_its_epoch_and_the_sink_resynchronises() {
    let quiet = Duration::from_millis(200);
    let cfg = NetConfig { port_base: port_base(7), session_id: 31, restart_quiet: quiet, ..NetConfig::default() };
    let base = cfg.port_base;
    let mut d = Driver::new(cfg, table(2)).unwrap();
    let sink = d.add_agent(AgentId(1), Addr::new(NodeId(1), 5), Box::new(LayeredSink::new(vec![], vec![]))).unwrap();
    let src = UdpSocket::bind((lo(1), 0)).unwrap(); // node 0's address
    let mut buf = [0u8; 2048];
    let mut send = |epoch: u64, seq: u64| {
        let mut p = Packet::data(Dest::Unicast(Addr::new(NodeId(1), 5)), 200);
        p.src = Addr::new(NodeId(0), 1);
        p.flow = 3;
        p.seq = seq;
        let n = Envelope::new(31, None).with_epoch(epoch).seal(&p, &mut buf).unwrap();
        src.send_to(&buf[..n], (lo(2), base + 5)).unwrap();
    };
    let old = d.epoch() - 1_000_000_000; // a process started a second before this driver
    let new = d.epoch() + 1;
    let step = |d: &mut Driver, f: &mut dyn FnMut()| {
        f();
        d.run_until(d.now() + Duration::from_millis(50)).unwrap();
    };
    // the first incarnation: seq 0..=9 without 5 (one loss)
    step(&mut d, &mut || (0..10).filter(|s| *s != 5).for_each(|s| send(old, s)));
    // without a key the new epoch is believed once the old one has been silent for `quiet`
    d.run_until(d.now() + quiet).unwrap();
    // restarted: seq 0..=4, then a straggler of the old one, then 7 (5 and 6 lost)
    step(&mut d, &mut || (0..5).for_each(|s| send(new, s)));
    step(&mut d, &mut || send(old, 10));
    step(&mut d, &mut || send(new, 7));
    let s = d.stats();
    assert_eq!((s.peer_restarts, s.stale_epoch, s.unconfirmed_epoch), (1, 1, 0), "{s:?}");
    let sm = &d.agent::<LayeredSink>(sink).unwrap().summary;
    assert_eq!(sm.received, 9 + 5 + 1);
    assert_eq!(sm.lost, 1 + 2, "the new sequence space is tracked from its first packet");
}

/// Node 0's datagram to the sink at node 1 port 5: flow 3, sequence number `seq`, sealed with
/// `epoch` (and `key`). Its `uid` counts as a driver's does: `seq + 1` within the epoch.
fn sink_datagram(session: u32, key: Option<&[u8]>, epoch: u64, seq: u64) -> Vec<u8> {
    let mut p = Packet::data(Dest::Unicast(Addr::new(NodeId(1), 5)), 200);
    p.src = Addr::new(NodeId(0), 1);
    p.flow = 3;
    p.seq = seq;
    p.uid = seq + 1;
    let mut buf = [0u8; 2048];
    let n = Envelope::new(session, key).with_epoch(epoch).seal(&p, &mut buf).unwrap();
    buf[..n].to_vec()
}

/// A receiving driver with a sink at node 1 port 5, and a socket on node 0's address (what a
/// spoofer on the path can send from as well as the source).
fn epoch_rig(k: u32, key: Option<&[u8]>, quiet: Duration) -> (Driver, usize, UdpSocket, u16) {
    let cfg = NetConfig {
        port_base: port_base(k),
        session_id: 32,
        key: key.map(|k| k.to_vec()),
        restart_quiet: quiet,
        ..NetConfig::default()
    };
    let base = cfg.port_base;
    let mut d = Driver::new(cfg, table(2)).unwrap();
    let sink = d.add_agent(AgentId(1), Addr::new(NodeId(1), 5), Box::new(LayeredSink::new(vec![], vec![]))).unwrap();
    let src = UdpSocket::bind((lo(1), 0)).unwrap();
    (d, sink, src, base + 5)
}

/// Send `d` to the sink and let the driver read it.
fn deliver(d: &mut Driver, src: &UdpSocket, port: u16, bytes: &[u8]) {
    src.send_to(bytes, (lo(2), port)).unwrap();
    d.run_until(d.now() + Duration::from_millis(5)).unwrap();
}

/// Without a key, one datagram with a newer epoch in the middle of a flowing stream (a spoofer
/// sending from the source's address) is dropped and counted; the source's own datagrams
/// keep arriving, and no restart is told to the sink.
#[test]
fn a_forged_newer_epoch_does_not_stop_a_flowing_stream_without_a_key() {
    let (mut d, sink, src, port) = epoch_rig(8, None, Duration::from_secs(1));
    let genuine = d.epoch() - 1_000_000_000;
    for seq in 0..40u64 {
        if seq == 20 {
            // the forgery: a later epoch, as a restarted source would carry, and the next seq
            deliver(&mut d, &src, port, &sink_datagram(32, None, genuine + 3_600_000_000_000, seq));
            deliver(&mut d, &src, port, &sink_datagram(32, None, u64::MAX, seq));
        }
        deliver(&mut d, &src, port, &sink_datagram(32, None, genuine, seq));
    }
    let s = d.stats();
    assert_eq!((s.unconfirmed_epoch, s.stale_epoch, s.peer_restarts), (2, 0, 0), "{s:?}");
    assert_eq!(s.delivered, 40, "{s:?}");
    let sm = &d.agent::<LayeredSink>(sink).unwrap().summary;
    assert_eq!((sm.received, sm.lost), (40, 0), "every genuine datagram is delivered");
}

/// Without a key, random mutations of the epoch field of genuine datagrams, interleaved with
/// the stream: every mutated one is dropped (newer or older), every genuine one delivered.
#[test]
fn random_mutations_of_the_epoch_do_not_stop_a_flowing_stream_without_a_key() {
    let (mut d, sink, src, port) = epoch_rig(9, None, Duration::from_secs(1));
    let genuine = d.epoch() - 1_000_000_000;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15; // xorshift64 state, fixed: the test is repeatable
    let (mut mutated, mut newer) = (0u64, 0u64);
    for seq in 0..60u64 {
        let good = sink_datagram(32, None, genuine, seq);
        deliver(&mut d, &src, port, &good);
        // one to three bytes of the epoch field flipped at random
        let mut bad = good.clone();
        for _ in 0..1 + seq % 3 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            bad[12 + (x % 8) as usize] ^= (x >> 8) as u8 | 1;
        }
        let e = u64::from_be_bytes(bad[12..20].try_into().unwrap());
        if e == 0 || e == genuine {
            continue; // epoch 0 is untracked by design; unchanged is no mutation
        }
        mutated += 1;
        newer += u64::from(e > genuine);
        deliver(&mut d, &src, port, &bad);
    }
    let s = d.stats();
    assert!(mutated >= 55 && newer > 0 && newer < mutated, "mutated {mutated}, newer {newer}");
    assert_eq!((s.unconfirmed_epoch, s.stale_epoch), (newer, mutated - newer), "{s:?}");
    assert_eq!((s.delivered, s.peer_restarts), (60, 0), "{s:?}");
    let sm = &d.agent::<LayeredSink>(sink).unwrap().summary;
    assert_eq!((sm.received, sm.lost), (60, 0));
}

/// Without a key, a source that restarts quickly: the new incarnation's datagrams that come
/// before the old one has been silent for `restart_quiet` are dropped as unconfirmed; the
/// first after it is believed (a restart told to the sink) and so is every later one.
#[test]
fn a_real_restart_is_believed_once_the_old_epoch_has_been_quiet() {
    let quiet = Duration::from_millis(200);
    let (mut d, sink, src, port) = epoch_rig(10, None, quiet);
    let old = d.epoch() - 1_000_000_000;
    let new = d.epoch() + 1;
    for seq in 0..10u64 {
        deliver(&mut d, &src, port, &sink_datagram(32, None, old, seq));
    }
    let last_old = d.now();
    // restarted 20 ms later, sending every 20 ms from seq 0, for 600 ms
    d.run_until(d.now() + Duration::from_millis(20)).unwrap();
    let mut before_quiet = 0u64; // sent before the old epoch had been quiet for `quiet`
    let mut sent = 0u64;
    for seq in 0..30u64 {
        if d.now().saturating_since(last_old) < quiet {
            before_quiet += 1;
        }
        sent += 1;
        deliver(&mut d, &src, port, &sink_datagram(32, None, new, seq));
        d.run_until(d.now() + Duration::from_millis(15)).unwrap();
    }
    let s = d.stats();
    assert_eq!(s.peer_restarts, 1, "{s:?}");
    // the dropped ones are those sent within `quiet`: the driver reads each after it was sent
    // and before the next is sent, so only the last of them can be read after `quiet`
    assert!((before_quiet - 1..=before_quiet).contains(&s.unconfirmed_epoch), "{s:?}, {before_quiet}");
    assert!(before_quiet >= 3, "the restart came within the quiet time ({before_quiet} datagrams)");
    assert_eq!(s.delivered, 10 + sent - s.unconfirmed_epoch, "{s:?}");
    let sm = &d.agent::<LayeredSink>(sink).unwrap().summary;
    assert_eq!(sm.received, 10 + sent - s.unconfirmed_epoch);
    // a straggler of the old incarnation now is stale
    deliver(&mut d, &src, port, &sink_datagram(32, None, old, 10));
    assert_eq!(d.stats().stale_epoch, 1);
}

/// With a key the MAC covers the epoch: a genuine datagram whose epoch is rewritten (MAC kept)
/// and one sealed with another key are bad MACs and change nothing; a keyed restart (a newer
/// epoch under the session key) is believed at once.
#[test]
fn with_a_key_a_forged_epoch_is_a_bad_mac() {
    let key: &[u8] = b"epoch-test-key";
    let (mut d, sink, src, port) = epoch_rig(11, Some(key), Duration::from_secs(1));
    let genuine = d.epoch() - 1_000_000_000;
    for seq in 0..20u64 {
        if seq == 10 {
            let mut forged = sink_datagram(32, Some(key), genuine, seq);
            forged[12..20].copy_from_slice(&(genuine + 1).to_be_bytes());
            deliver(&mut d, &src, port, &forged);
            deliver(&mut d, &src, port, &sink_datagram(32, Some(b"not-the-key"), genuine + 1, seq));
        }
        deliver(&mut d, &src, port, &sink_datagram(32, Some(key), genuine, seq));
    }
    let s = d.stats();
    assert_eq!(s.rejected_by(Reject::BadMac), 2, "{s:?}");
    assert_eq!((s.peer_restarts, s.unconfirmed_epoch, s.stale_epoch, s.delivered), (0, 0, 0, 20), "{s:?}");
    // the source restarts under the key: believed at its first datagram, no quiet time needed
    let new = d.epoch() + 1;
    deliver(&mut d, &src, port, &sink_datagram(32, Some(key), new, 0));
    let s = d.stats();
    assert_eq!((s.peer_restarts, s.unconfirmed_epoch, s.delivered), (1, 0, 21), "{s:?}");
    assert_eq!(d.agent::<LayeredSink>(sink).unwrap().summary.received, 21);
}

/// With a key, a genuine datagram captured and sent again (its MAC valid) is dropped and
/// counted as a replay, at once or long after, and so is a copy of one delivered more than the
/// replay window ago; datagrams that arrive out of order but only once are delivered. A
/// restarted source (a newer epoch under the key) counts afresh and is not taken for a replay.
#[test]
fn with_a_key_a_replayed_datagram_is_counted_and_dropped() {
    let key: &[u8] = b"replay-test-key";
    let (mut d, sink, src, port) = epoch_rig(12, Some(key), Duration::from_secs(1));
    let genuine = d.epoch() - 1_000_000_000;
    let captured: Vec<Vec<u8>> = (0..1100u64).map(|seq| sink_datagram(32, Some(key), genuine, seq)).collect();
    // 0..10 in order, then 12, 11 (reordered, each once)
    for seq in (0..10).chain([12, 11]) {
        deliver(&mut d, &src, port, &captured[seq]);
    }
    assert_eq!((d.stats().delivered, d.stats().replayed), (12, 0), "{:?}", d.stats());
    // the captured datagram of seq 3, sent again now and again later
    deliver(&mut d, &src, port, &captured[3]);
    deliver(&mut d, &src, port, &captured[12]);
    d.run_until(d.now() + Duration::from_millis(300)).unwrap();
    deliver(&mut d, &src, port, &captured[3]);
    let s = d.stats();
    assert_eq!((s.delivered, s.replayed, s.rejected_total()), (12, 3, 0), "{s:?}");
    let sm = &d.agent::<LayeredSink>(sink).unwrap().summary;
    assert_eq!(sm.received, 12);
    // the stream goes on to seq 1099: seq 13, never delivered, now lies below the window
    for chunk in captured[14..].chunks(100) {
        for c in chunk {
            src.send_to(c, (lo(2), port)).unwrap();
        }
        d.run_until(d.now() + Duration::from_millis(5)).unwrap();
    }
    deliver(&mut d, &src, port, &captured[13]);
    deliver(&mut d, &src, port, &captured[1099]);
    let s = d.stats();
    assert_eq!((s.delivered, s.replayed), (12 + 1086, 5), "{s:?}");
    // the source restarts under the key and counts from 1 again: delivered
    let new = d.epoch() + 1;
    for seq in 0..3 {
        deliver(&mut d, &src, port, &sink_datagram(32, Some(key), new, seq));
    }
    let s = d.stats();
    assert_eq!((s.peer_restarts, s.delivered, s.replayed), (1, 1101, 5), "{s:?}");
    // sealed with epoch 0, as a user-space router seals what it marks or makes: not judged
    let routed = sink_datagram(32, Some(key), 0, 40);
    deliver(&mut d, &src, port, &routed);
    deliver(&mut d, &src, port, &routed);
    let s = d.stats();
    assert_eq!((s.delivered, s.replayed), (1103, 5), "{s:?}");
}

/// Without a key a copy is not refused: anyone can forge a datagram without copying one, so
/// the driver keeps no window (the copies are the agent's to judge).
#[test]
fn without_a_key_a_copy_is_delivered() {
    let (mut d, _sink, src, port) = epoch_rig(13, None, Duration::from_secs(1));
    let genuine = d.epoch() - 1_000_000_000;
    let one = sink_datagram(32, None, genuine, 0);
    deliver(&mut d, &src, port, &one);
    deliver(&mut d, &src, port, &one);
    let s = d.stats();
    assert_eq!((s.delivered, s.replayed), (2, 0), "{s:?}");
}
