//! TCP Reno and NewReno flows through the simulator, on a dumbbell:
//! senders – r1 – bottleneck – r2 – receivers.

use castlab_core::{Addr, AgentId, ChannelId, Header, Instant, NetView, Packet, RouterExtension, TcpHeader, Verdict};
use castlab_proto::tcp::{CcAlgorithm, RetxKind, TcpConfig, TcpSender, TcpSink};
use castlab_sim::Simulator;

mod common;
use common::{link, secs};

/// Access links: fast enough never to be the bottleneck, with room for any window.
const ACCESS_BPS: f64 = 100e6;
const ACCESS_DELAY_S: f64 = 0.001;

struct Dumbbell {
    sim: Simulator,
    senders: Vec<AgentId>,
    sinks: Vec<AgentId>,
    /// r1 → r2, where the queue builds.
    bottleneck: ChannelId,
    r1: castlab_core::NodeId,
}

/// `flows` TCP flows with the given algorithm and config, flow i starting at `starts[i]`.
fn dumbbell(
    seed: u64,
    bottleneck_bps: f64,
    bottleneck_delay_s: f64,
    queue_pkts: usize,
    algo: CcAlgorithm,
    cfg: &TcpConfig,
    starts: &[f64],
) -> Dumbbell {
    let mut sim = Simulator::new(seed);
    let r1 = sim.add_node("r1").unwrap();
    let r2 = sim.add_node("r2").unwrap();
    sim.add_link(r1, r2, &link(bottleneck_bps, bottleneck_delay_s, queue_pkts)).unwrap();
    let bottleneck = sim.channel_between(r1, r2).unwrap();
    let (mut senders, mut sinks) = (vec![], vec![]);
    for (i, &start) in starts.iter().enumerate() {
        let s = sim.add_node(&format!("s{i}")).unwrap();
        let d = sim.add_node(&format!("d{i}")).unwrap();
        sim.add_link(s, r1, &link(ACCESS_BPS, ACCESS_DELAY_S, 10_000)).unwrap();
        sim.add_link(r2, d, &link(ACCESS_BPS, ACCESS_DELAY_S, 10_000)).unwrap();
        sinks.push(sim.add_agent(d, Some(80), Instant::ZERO, Box::new(TcpSink::new(cfg.clone()))).unwrap());
        let tx = TcpSender::new(Addr::new(d, 80), i as u32, cfg.clone(), algo.build(cfg));
        senders.push(sim.add_agent(s, None, secs(start), Box::new(tx)).unwrap());
    }
    Dumbbell { sim, senders, sinks, bottleneck, r1 }
}

impl Dumbbell {
    fn sender(&self, i: usize) -> &TcpSender {
        self.sim.agent::<TcpSender>(self.senders[i]).unwrap()
    }
    fn sink(&self, i: usize) -> &TcpSink {
        self.sim.agent::<TcpSink>(self.sinks[i]).unwrap()
    }
}

/// Base round-trip time of the dumbbell: propagation both ways plus serialisation of a data
/// packet on each forward hop and of an ACK on each return hop.
fn base_rtt_s(bottleneck_bps: f64, bottleneck_delay_s: f64, cfg: &TcpConfig) -> f64 {
    let data_bits = ((cfg.mss_bytes + cfg.header_bytes) * 8) as f64;
    let ack_bits = (cfg.header_bytes * 8) as f64;
    2.0 * (2.0 * ACCESS_DELAY_S + bottleneck_delay_s)
        + data_bits * (2.0 / ACCESS_BPS + 1.0 / bottleneck_bps)
        + ack_bits * (2.0 / ACCESS_BPS + 1.0 / bottleneck_bps)
}

#[test]
fn one_flow_fills_an_idle_link_past_slow_start() {
    // 10 Mb/s, 20 ms bottleneck: base RTT ~45 ms, BDP ~54 packets of 1040 bytes; a DropTail
    // queue of 60 packets holds at least one BDP, so after a halving cwnd = (BDP + Q)/2 >= BDP
    // and the link never idles (the classic buffer-sizing rule). Expect >= 95 % utilisation
    // from 10 s (well after slow start and its losses) to 60 s.
    let (rate, delay, queue) = (10e6, 0.020, 60usize);
    for algo in [CcAlgorithm::Reno, CcAlgorithm::NewReno] {
        for delayed_ack in [false, true] {
            let cfg = TcpConfig { delayed_ack, ..Default::default() };
            let bdp_pkts = rate * base_rtt_s(rate, delay, &cfg) / 8.0 / (cfg.mss_bytes + cfg.header_bytes) as f64;
            assert!(queue as f64 >= bdp_pkts, "queue {queue} < BDP {bdp_pkts}");
            let mut d = dumbbell(1, rate, delay, queue, algo, &cfg, &[0.0]);
            d.sim.run(secs(10.0)).unwrap();
            let b0 = d.sim.channel_stats(d.bottleneck).unwrap().bytes_departed;
            let g0 = d.sink(0).received_bytes();
            d.sim.run(secs(60.0)).unwrap();
            let b1 = d.sim.channel_stats(d.bottleneck).unwrap().bytes_departed;
            let g1 = d.sink(0).received_bytes();
            let util = (b1 - b0) as f64 * 8.0 / (50.0 * rate);
            // Goodput: payload only, so at most 1000/1040 of the link.
            let goodput = (g1 - g0) as f64 * 8.0 / 50.0;
            let tx = d.sender(0);
            println!(
                "{algo:?} delayed_ack={delayed_ack}: utilisation {util:.4}, goodput {goodput:.0} b/s, \
                 timeouts {}, retx {}, drops {}",
                tx.stats.timeouts,
                tx.stats.retransmissions,
                d.sim.channel_stats(d.bottleneck).unwrap().drops()
            );
            println!(
                "  timeouts at {:?} s",
                tx.trace.timeout_time_ns.iter().map(|&t| t as f64 / 1e9).collect::<Vec<_>>()
            );
            // Upper bound: capacity, plus the one packet that may straddle the window's start.
            let one_pkt = (cfg.mss_bytes + cfg.header_bytes) as f64 * 8.0 / (50.0 * rate);
            assert!(util >= 0.95 && util <= 1.0 + one_pkt, "{algo:?} {delayed_ack}: utilisation {util}");
            assert!(goodput >= 0.95 * rate * 1000.0 / 1040.0, "{algo:?} {delayed_ack}: goodput {goodput}");
            // It is congestion-limited, not application-limited: the queue overflowed.
            assert!(d.sim.channel_stats(d.bottleneck).unwrap().drops() > 0);
            // Nothing is acknowledged that the sink did not deliver in order.
            assert!(tx.snd_una() <= d.sink(0).received_bytes());
            assert_eq!(tx.trace.acked_bytes.last(), Some(&tx.snd_una()));
            assert!(d.sim.conservation().holds());
        }
    }
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

#[test]
fn two_flows_with_equal_rtt_share_fairly() {
    // Two flows, same RTT, one 10 Mb/s bottleneck with a queue of one BDP, 100 s. Jain's
    // index over the goodputs must be >= 0.95 (a 1 : 1.6 split would give 0.949).
    let (rate, delay, queue) = (10e6, 0.020, 55usize);
    for algo in [CcAlgorithm::Reno, CcAlgorithm::NewReno] {
        let cfg = TcpConfig::default();
        let mut d = dumbbell(2, rate, delay, queue, algo, &cfg, &[0.0, 0.5]);
        d.sim.run(secs(100.0)).unwrap();
        let g: Vec<f64> = (0..2).map(|i| d.sink(i).received_bytes() as f64 * 8.0 / 100.0).collect();
        let j = jain(&g);
        let util = d.sim.channel_stats(d.bottleneck).unwrap().bytes_departed as f64 * 8.0 / (100.0 * rate);
        println!(
            "{algo:?}: goodputs {:.0} / {:.0} b/s, Jain {j:.4}, utilisation {util:.4}, timeouts {} / {}",
            g[0],
            g[1],
            d.sender(0).stats.timeouts,
            d.sender(1).stats.timeouts
        );
        for i in 0..2 {
            println!(
                "  flow {i} timeouts at {:?} s",
                d.sender(i).trace.timeout_time_ns.iter().map(|&t| t as f64 / 1e9).collect::<Vec<_>>()
            );
        }
        assert!(j >= 0.95, "{algo:?}: Jain {j} from {g:?}");
        assert!(util > 0.9, "{algo:?}: utilisation {util}");
        assert!(d.sim.conservation().holds());
    }
}

/// Drops the first transmission of chosen data segments of one flow as they are forwarded on
/// one channel: deterministic losses at chosen places in a window.
struct SegmentDropper {
    channel: ChannelId,
    flow: u32,
    seqs: Vec<u64>,
    done: Vec<bool>,
}

impl SegmentDropper {
    fn new(channel: ChannelId, flow: u32, seqs: &[u64]) -> Self {
        SegmentDropper { channel, flow, seqs: seqs.to_vec(), done: vec![false; seqs.len()] }
    }
}

impl RouterExtension for SegmentDropper {
    fn on_forward(&mut self, _now: Instant, pkt: &mut Packet, out: ChannelId, _net: &dyn NetView) -> Verdict {
        let is_data = matches!(pkt.header, Header::Tcp(h) if h.flags & TcpHeader::DATA != 0);
        if out != self.channel || pkt.flow != self.flow || !is_data {
            return Verdict::Forward;
        }
        match self.seqs.iter().position(|&s| s == pkt.seq) {
            Some(i) if !self.done[i] => {
                self.done[i] = true;
                Verdict::Drop
            }
            _ => Verdict::Forward,
        }
    }
}

/// One flow in congestion avoidance (ssthresh 20 segments, a queue too large to overflow)
/// losing exactly the segments `lost` (first transmissions only) at r1.
fn controlled_losses(algo: CcAlgorithm, lost: &[u64]) -> Dumbbell {
    let cfg = TcpConfig { initial_ssthresh_bytes: 20_000, ..Default::default() };
    let mut d = dumbbell(3, 10e6, 0.020, 1000, algo, &cfg, &[0.0]);
    let dropper = SegmentDropper::new(d.bottleneck, 0, lost);
    d.sim.attach_extension(d.r1, Box::new(dropper)).unwrap();
    d.sim.run(secs(20.0)).unwrap();
    assert_eq!(d.sim.extension::<SegmentDropper>(d.r1).unwrap().done, vec![true; lost.len()]);
    assert_eq!(d.sim.channel_stats(d.bottleneck).unwrap().drops(), 0, "no other loss");
    d
}

#[test]
fn single_loss_in_congestion_avoidance_is_repaired_by_fast_retransmit_and_halves_cwnd() {
    for algo in [CcAlgorithm::Reno, CcAlgorithm::NewReno] {
        let d = controlled_losses(algo, &[200_000]);
        let tx = d.sender(0);
        assert_eq!(tx.stats.timeouts, 0, "{algo:?}");
        assert_eq!(tx.trace.retx_seq, vec![200_000], "{algo:?}");
        assert_eq!(tx.trace.retx_kind, vec![RetxKind::Fast as u8], "{algo:?}");
        // The one reduction: ssthresh drops from 20 segments to half the window in flight
        // (the flow is window-limited and below the BDP, so FlightSize = cwnd at that moment).
        let tr = &tx.trace;
        let k = tr.ssthresh_bytes.iter().position(|&s| s != 20_000).expect("a reduction");
        let cwnd_before = tr.cwnd_bytes[k - 1];
        assert!(cwnd_before >= 20_000, "in congestion avoidance: {cwnd_before}");
        assert_eq!(tr.ssthresh_bytes[k], cwnd_before / 2, "{algo:?}");
        assert!(tr.ssthresh_bytes[k..].iter().all(|&s| s == tr.ssthresh_bytes[k]), "{algo:?}: one reduction");
        // The reduction happens when the fast retransmission is sent.
        assert_eq!(tr.cc_time_ns[k], tr.retx_time_ns[0]);
        // Once recovery ends cwnd is ssthresh (Reno deflation; NewReno's full ACK with a full
        // pipe gives the same), within one RTT of the retransmission.
        let rtt_ns = 100_000_000;
        let after = tr.cc_time_ns.iter().position(|&t| t > tr.retx_time_ns[0] + rtt_ns).unwrap();
        assert!(
            tr.cwnd_bytes[after - 1] >= tr.ssthresh_bytes[k] && tr.cwnd_bytes[after - 1] <= tr.ssthresh_bytes[k] + 1000
        );
        assert!(!tx.controller().in_recovery());
    }
}

#[test]
fn newreno_recovers_four_losses_in_one_window_without_timeout_reno_times_out() {
    let lost = [200_000u64, 202_000, 204_000, 206_000];
    let reno = controlled_losses(CcAlgorithm::Reno, &lost);
    let newreno = controlled_losses(CcAlgorithm::NewReno, &lost);
    let (r, n) = (reno.sender(0), newreno.sender(0));
    println!("Reno: {:?}\nNewReno: {:?}", r.stats, n.stats);
    assert_eq!(n.stats.timeouts, 0);
    assert_eq!(n.trace.retx_seq, lost.to_vec(), "exactly the lost segments, once each");
    let p = RetxKind::Partial as u8;
    assert_eq!(n.trace.retx_kind, vec![RetxKind::Fast as u8, p, p, p]);
    assert!(r.stats.timeouts >= 1, "{:?}", r.stats);
    // Both delivered everything in the end.
    for d in [&reno, &newreno] {
        assert!(d.sink(0).received_bytes() > 1_000_000);
        assert!(d.sink(0).received_bytes() >= d.sender(0).snd_una());
    }
    // The timeout costs Reno delivered data over the run.
    assert!(reno.sink(0).received_bytes() < newreno.sink(0).received_bytes());
}

#[test]
fn same_seed_same_traces() {
    let run = || {
        let cfg = TcpConfig { delayed_ack: true, ..Default::default() };
        let mut d = dumbbell(7, 5e6, 0.010, 20, CcAlgorithm::NewReno, &cfg, &[0.0, 0.3, 0.7]);
        d.sim.run(secs(15.0)).unwrap();
        (0..3)
            .map(|i| {
                let t = &d.sender(i).trace;
                (
                    t.cc_time_ns.clone(),
                    t.cwnd_bytes.clone(),
                    t.rtt_ns.clone(),
                    t.retx_time_ns.clone(),
                    d.sink(i).trace.rx_time_ns.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let a = run();
    assert!(a.iter().all(|f| !f.3.is_empty()), "the scenario has losses");
    assert_eq!(a, run());
}
