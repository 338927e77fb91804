//! castlab's LE-SBCC source and two PGM receivers speak RFC 3208 PGM to each other over
//! loopback IP multicast (`pgm_wire`), each with its own driver and node address, inside a
//! network namespace the test creates and deletes: the receivers learn of the source from its
//! SPMs, each loses a tenth of the ODATA (dropped before its agent sees it, so that the loss
//! is known), NAKs it in PGM's upstream format and is repaired by RDATA; the drivers' counts
//! by PGM type match the agents' own.
//!
//! Skipped (with the reason printed) without root or `ip netns`.

use std::net::Ipv4Addr;
use std::thread;

use castlab_core::{
    Addr, Agent, AgentEvent, AgentId, Duration, GroupId, Header, Instant, NodeId, Packet, PgmHeader, StartInfo,
};
use castlab_net::{Driver, GroupEntry, NetConfig, SessionTable};
use castlab_proto::lesbcc::pgm_transport::{PgmReceiver, PgmReceiverConfig};
use castlab_proto::lesbcc::{LesbccConfig, LesbccSource};

mod common;
use common::{in_netns, lo, INNER};

const PORT: u16 = 47_500;
const FLOW: u32 = 7;
const PACKETS: u64 = 200;
const RUN_S: f64 = 6.0;

const GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 43, 1);

fn table() -> SessionTable {
    let mut t = SessionTable::new();
    // the receivers' own nodes only: the source learns them from their NAKs, as it would
    // third-party receivers'
    t.set_node(NodeId(0), lo(1)).unwrap();
    t.set_group(GroupId(0), GroupEntry { addr: GROUP, udp_port: PORT, source: Some(NodeId(0)) }).unwrap();
    t
}

fn cfg() -> NetConfig {
    NetConfig { pgm_wire: true, pgm_flow: FLOW, session_id: 0x96, seed: 5, ..NetConfig::default() }
}

/// A PGM receiver behind a lossy link: every `every`-th ODATA (from `phase`) never reaches it.
struct Lossy {
    inner: PgmReceiver,
    every: u64,
    phase: u64,
    dropped: u64,
}

impl Agent for Lossy {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        self.inner.handle_start(now, info)
    }
    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        if let Header::Pgm(h) = p.header {
            if h.kind == PgmHeader::ODATA && p.seq % self.every == self.phase {
                self.dropped += 1;
                return;
            }
        }
        self.inner.handle_packet(now, p)
    }
    fn handle_timeout(&mut self, now: Instant) {
        self.inner.handle_timeout(now)
    }
    fn poll_transmit(&mut self) -> Option<Packet> {
        self.inner.poll_transmit()
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.inner.poll_timeout()
    }
    fn poll_event(&mut self) -> Option<AgentEvent> {
        self.inner.poll_event()
    }
}

#[test]
fn lesbcc_source_repairs_pgm_receivers_over_the_pgm_wire() {
    if std::env::var(INNER).is_err() {
        return in_netns("lesbcc_source_repairs_pgm_receivers_over_the_pgm_wire", "pgm");
    }
    let receiver = |node: u8, phase: u64| {
        thread::spawn(move || {
            let mut t = table();
            t.set_node(NodeId(node as u32), lo(node + 1)).unwrap();
            let mut d = Driver::new(cfg(), t).unwrap();
            let rcfg = PgmReceiverConfig {
                nak_rpt_ivl: Duration::from_millis(500),
                nak_rdata_ivl: Duration::from_millis(500),
                ..PgmReceiverConfig::default()
            };
            let r = PgmReceiver::try_new(Some(GroupId(0)), FLOW, rcfg).unwrap();
            let a = Lossy { inner: r, every: 10, phase, dropped: 0 };
            d.add_agent(AgentId(node as u32), Addr::new(NodeId(node as u32), 1), Box::new(a)).unwrap();
            d.run_until(Instant::from_secs_f64(RUN_S)).unwrap();
            d
        })
    };
    let r1 = receiver(1, 3);
    let r2 = receiver(2, 7);
    thread::sleep(std::time::Duration::from_millis(200));
    let src = thread::spawn(|| {
        let mut d = Driver::new(cfg(), table()).unwrap();
        let c = LesbccConfig {
            total_packets: Some(PACKETS),
            initial_rate_bps: 800e3,
            // a floor, so that the known losses do not slow the transfer past the test's time
            min_rate_bps: 400e3,
            spm_interval: Duration::from_millis(200),
            ..LesbccConfig::default()
        };
        let s = LesbccSource::try_new(castlab_core::Dest::Group(GroupId(0)), FLOW, c).unwrap();
        d.add_agent(AgentId(0), Addr::new(NodeId(0), 1), Box::new(s)).unwrap();
        d.run_until(Instant::from_secs_f64(RUN_S - 0.2)).unwrap();
        d
    });
    let src = src.join().unwrap();
    let rs = [r1.join().unwrap(), r2.join().unwrap()];
    let s = src.agent::<LesbccSource>(0).unwrap();
    let st = src.stats();
    eprintln!("source {:?}\nsource driver {:?}", s.stats, st);
    assert_eq!(s.stats.odata_sent, PACKETS);
    // every datagram of the source is PGM, counted by type as the agent counts them
    assert_eq!(st.pgm_sent[4], s.stats.odata_sent);
    assert_eq!(st.pgm_sent[5], s.stats.rdata_sent);
    assert_eq!(st.pgm_sent[10], s.stats.ncf_sent);
    assert_eq!(st.pgm_sent[0], s.stats.spm_sent);
    assert!(s.stats.spm_sent >= 5, "ambient SPMs every 200 ms");
    assert_eq!(st.rejected_total(), 0, "{st:?}");
    // both receivers are told apart by their NAKs' source address, both unlisted peers
    assert_eq!(s.receiver_addrs().len(), 2, "{:?}", s.receiver_addrs());
    assert!(s.receiver_addrs().iter().all(|a| a.node.0 >= castlab_net::driver::PEER_NODE_BASE));
    let mut naks = 0;
    for d in &rs {
        let a = d.agent::<Lossy>(0).unwrap();
        let r = &a.inner;
        let ds = d.stats();
        eprintln!("receiver {:?} dropped {}\ndriver {:?}", r.stats, a.dropped, ds);
        assert_eq!(a.dropped, PACKETS / 10);
        assert!(r.is_complete(), "every loss repaired: {:?}", r.stats);
        assert_eq!(r.rx_trail(), PACKETS);
        assert_eq!(r.stats.repaired, PACKETS / 10);
        assert_eq!(ds.pgm_sent[8], r.stats.naks_sent);
        assert_eq!(ds.rejected_total(), 0, "{ds:?}");
        naks += r.stats.naks_sent;
    }
    // the source received every NAK the receivers sent, as PGM NAKs
    assert_eq!(st.pgm_received[8], naks);
    // the two receivers lost different sequence numbers: each needed its own repair
    assert!(s.stats.rdata_sent >= PACKETS / 10 * 2, "{:?}", s.stats);
}
