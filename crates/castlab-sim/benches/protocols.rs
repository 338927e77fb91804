//! Protocol benchmarks (measured, not timed tests): one scenario per protocol, each at the size
//! of its paper's largest run, built from the Rust APIs the way the Python experiments build
//! them. Run with:
//!
//!     cargo bench -p castlab-sim --bench protocols
//!
//! (rlm)    RLM §4 topology (2): S –1.5 Mb/s– X and 100 receivers each on its own 1.5 Mb/s
//!          link from X, DropTail 20, six layers at 32·2^m kb/s, receivers starting uniformly
//!          on [30, 120] s, 600 s (python/castlab/experiments/rlm.py `topology2`);
//! (tcp)    16 NewReno flows through a 10 Mb/s, 20 ms dumbbell with a one-BDP DropTail queue,
//!          starts on [0, 5] s, 200 s (experiments/tcp.py `fairness_run`, K = 16);
//! (tcp100) the many-flow row: 100 NewReno flows through the same dumbbell, flow i starting at
//!          i·0.05 s, 100 s; run only when named (`-- tcp100`), by bench/compare.py beside
//!          ns-2 running bench/ns2/newreno_dumbbell.tcl;
//! (nlm)    NLM Fig. 8 with N = 100 sessions on a 100 Mb/s LMR1–LMR2 link (1 Mb/s each),
//!          LMRs on both ends and the loss meter on LMR1, receivers joining on [20, 30] s, 600 s
//!          (experiments/nlm.py `Fig8`, Fig. 13's largest N);
//! (rainbow) Rainbow B-(i): 125 receivers behind one 500 kb/s shared link, RED 10-packet
//!          queues and BCF routers everywhere, a symbolic fountain, 2000 packets each, starts on
//!          [0, 5] s, 400 s (experiments/rainbow.py `b1_run`);
//! (lesbcc) LE-SBCC Fig. 5: one multicast source to 4 receivers over 5 Mb/s bottlenecks and 16
//!          unicast LE-SBCC flows, 125-packet DropTail buffers, 450 s
//!          (experiments/lesbcc.py `fig5_run`);
//! (lesbcc-state) the LE-SBCC source's memory against the receivers it has heard from, at
//!          10^4, 5·10^4 and 10^5 receivers (and 10^6 with `CASTLAB_BENCH_MILLION=1`), beside the
//!          paper's "under 1 MB of source state for 10,000-50,000 receivers" (§1): the source
//!          sends to a group and N receivers each NAK once, spread over one second (below).
//!
//! Prints per scenario the simulated and wall time, events per second, link transmissions
//! (packets forwarded, one per hop) per second, and heap allocations per million events over
//! the second half of the run's events (a counting global allocator; how many of them were
//! reallocations, i.e. growing record columns, and the whole run's rate beside it).

use std::sync::atomic::Ordering;
use std::time::Instant as WallInstant;

use castlab_core::{
    Addr, Agent, AgentId, ChannelId, Dest, Duration, GroupId, Header, Instant, NodeId, Packet, PgmHeader, Rng,
    StartInfo,
};
use castlab_proto::bcfs::fountain::{FountainMode, FountainSource};
use castlab_proto::bcfs::rainbow::{RainbowConfig, RainbowReceiver};
use castlab_proto::bcfs::{BcfConfig, BcfRouter};
use castlab_proto::lesbcc::pgm_transport::{PgmReceiver, PgmReceiverConfig};
use castlab_proto::lesbcc::{LesbccConfig, LesbccSource};
use castlab_proto::nlm::NlmRouter;
use castlab_proto::nlm::{NlmConfig, NlmReceiver, NlmSender};
use castlab_proto::rlm::{RlmConfig, RlmMemory, RlmReceiver};
use castlab_proto::tcp::{CcAlgorithm, TcpConfig, TcpSender, TcpSink};
use castlab_proto::{CbrSource, LayeredSink};
use castlab_sim::{LinkConfig, QueueConfig, RedConfig, Simulator};

mod common;
use common::{cpu_s, peak_rss_mib, Counting, ALLOCS, REALLOCS};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A scenario and a one-line account of what its run did (checks the set-up, not the speed).
type Scenario = (Simulator, Box<dyn Fn(&Simulator) -> String>);

/// Utilisation of `ch` over the whole run.
fn util(sim: &Simulator, ch: ChannelId, rate_bps: f64) -> f64 {
    sim.channel_stats(ch).unwrap().bytes_departed as f64 * 8.0 / (rate_bps * sim.now().as_secs_f64())
}

fn secs(s: f64) -> Instant {
    Instant::from_secs_f64(s)
}

fn droptail(rate: f64, delay: f64, limit: usize) -> LinkConfig {
    LinkConfig::new(rate, delay, QueueConfig::DropTail { limit_pkts: limit })
}

fn node(sim: &mut Simulator, name: &str) -> NodeId {
    sim.add_node(name).unwrap()
}

/// Start times drawn from their own stream of the scenario's seed.
fn starts(seed: u64, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    let mut rng = Rng::seed_from_u64(seed ^ 0x5354_4152_5453);
    (0..n).map(|_| rng.uniform_range(lo, hi)).collect()
}

/// RLM §4 topology (2) with `n` receivers.
fn rlm(n: usize) -> Scenario {
    let (sim, rxs, bott) = rlm_star(n, 30.0, 120.0);
    let summary = move |sim: &Simulator| {
        let at5 = rxs.iter().filter(|&&a| sim.agent::<RlmReceiver>(a).unwrap().level() >= 5).count();
        format!(
            "{at5} of {} receivers at level >= 5 at the end, bottleneck utilisation {:.3}",
            rxs.len(),
            util(sim, bott, 1.5e6)
        )
    };
    (sim, Box::new(summary))
}

/// RLM §4 topology (2), a star: S –1.5 Mb/s– X and `n` receivers each on its own 1.5 Mb/s
/// link from X (10 ms, DropTail 20), the six-layer source, receivers with the default
/// configuration starting uniformly on [lo, hi] s. The receivers' agents and the S–X channel.
fn rlm_star(n: usize, lo: f64, hi: f64) -> (Simulator, Vec<AgentId>, ChannelId) {
    let mut sim = Simulator::new(1);
    let link = droptail(1.5e6, 0.010, 20);
    let s = node(&mut sim, "S");
    let x = node(&mut sim, "X");
    let (bott, _) = sim.add_link(s, x, &link).unwrap();
    let groups: Vec<GroupId> = (0..6).map(|_| sim.add_group(s).unwrap()).collect();
    let control = sim.add_group(s).unwrap();
    let rates: Vec<f64> = (0..6).map(|m| 32e3 * f64::from(1u32 << m)).collect();
    let source =
        CbrSource::try_layered(&groups, &rates, 1000, 1, Instant::ZERO, Instant::MAX, true).expect("valid source");
    sim.add_agent(s, None, Instant::ZERO, Box::new(source)).unwrap();
    let mut rxs: Vec<AgentId> = vec![];
    for (i, t) in starts(1, n, lo, hi).into_iter().enumerate() {
        let r = node(&mut sim, &format!("R{i}"));
        sim.add_link(x, r, &link).unwrap();
        let rx = RlmReceiver::try_new(RlmConfig::default(), groups.clone(), control).expect("valid config");
        rxs.push(sim.add_agent(r, None, secs(t), Box::new(rx)).unwrap());
    }
    (sim, rxs, bott)
}

/// What the receivers `rxs` sent and got so far: (join announcements, control packets sent,
/// data packets received, packets delivered at their nodes).
fn rlm_tally(sim: &Simulator, rxs: &[AgentId]) -> (u64, u64, u64, u64) {
    let mut t = (0, 0, 0, 0);
    for &a in rxs {
        let r = sim.agent::<RlmReceiver>(a).unwrap();
        t.0 += r.records.exp_start_ns.len() as u64;
        t.1 += r.records.control_sent;
        t.2 += r.records.received;
        let node = sim.agent_addr(a).unwrap().node;
        t.3 += sim.node_stats(node).map_or(0, |s| s.delivered_local);
    }
    t
}

/// (rlm-star) The RLM star at `n` receivers starting on [0, 10] s, run for `until_s`: one
/// line of `key value` pairs (bench/rlm_scale.py reads it). Events and packets are the
/// engine's counters; control packets are the receivers' own counts (join announcements are
/// their experiments, the rest session messages), in all and over the run's second half;
/// control deliveries are the packets delivered at the receivers' nodes that were not data;
/// the receivers' bytes are `RlmReceiver::memory` (allocated capacities), by part; CPU is this
/// thread's, the run's alone; RSS is the process's peak after the set-up and at the end.
fn rlm_scale(n: usize, until_s: f64) {
    let (mut sim, rxs, _) = rlm_star(n, 0.0, 10.0);
    let rss_setup = peak_rss_mib();
    let (t0, c0) = (WallInstant::now(), cpu_s());
    sim.run(secs(until_s / 2.0)).unwrap();
    let (ev_half, half) = (sim.engine_stats().events, rlm_tally(&sim, &rxs));
    sim.run(secs(until_s)).unwrap();
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu_s() - c0);
    let st = sim.engine_stats();
    assert!(sim.conservation().holds());
    let (joins, control, data, delivered) = rlm_tally(&sim, &rxs);
    let mut mem = RlmMemory::default();
    let mut levels = [0usize; 7];
    for &a in &rxs {
        let r = sim.agent::<RlmReceiver>(a).unwrap();
        let m = r.memory();
        mem.fixed += m.fixed;
        mem.members += m.members;
        mem.heard += m.heard;
        mem.records += m.records;
        mem.layers += m.layers;
        mem.windows += m.windows;
        mem.queues += m.queues;
        levels[r.level() as usize] += 1;
    }
    let per = |b: usize| b as f64 / n as f64;
    println!(
        "rlm-star receivers {n} seconds {until_s} events {} forwarded {} events_per_receiver {:.0} cpu_s {cpu:.3} \
         wall_s {wall:.3} cpu_ns_per_event {:.1} rss_setup_mib {rss_setup:.1} rss_peak_mib {:.1} \
         joins {joins} sessions {} control_delivered {} data_received {data} \
         events_2nd_half {} joins_2nd_half {} sessions_2nd_half {} \
         rx_bytes {:.0} rx_fixed {:.0} rx_members {:.0} rx_heard {:.0} rx_records {:.0} rx_layers {:.0} \
         rx_windows {:.0} rx_queues {:.0} at_level_5 {} at_level_6 {}",
        st.events,
        st.forwarded,
        st.events as f64 / n as f64,
        cpu * 1e9 / st.events.max(1) as f64,
        peak_rss_mib(),
        control - joins,
        delivered - data,
        st.events - ev_half,
        joins - half.0,
        (control - joins) - (half.1 - half.0),
        per(mem.total()),
        per(mem.fixed),
        per(mem.members),
        per(mem.heard),
        per(mem.records),
        per(mem.layers),
        per(mem.windows),
        per(mem.queues),
        levels[5],
        levels[6],
    );
}

/// `k` NewReno flows through a 10 Mb/s, 20 ms dumbbell whose DropTail queue holds one BDP,
/// starting on [0, 5] s.
fn tcp(k: usize) -> Scenario {
    tcp_dumbbell(starts(1, k, 0.0, 5.0))
}

/// The many-flow NewReno row: 100 flows through the same dumbbell, flow i starting at i·0.05 s
/// (a schedule bench/ns2/newreno_dumbbell.tcl repeats exactly).
fn newreno100() -> Scenario {
    tcp_dumbbell((0..100).map(|i| f64::from(i) * 0.05).collect())
}

/// NewReno flows starting at `starts` (s) through a 10 Mb/s, 20 ms dumbbell (100 Mb/s, 1 ms
/// access links) whose DropTail queue holds one BDP.
fn tcp_dumbbell(starts: Vec<f64>) -> Scenario {
    let mut sim = Simulator::new(1);
    let cfg = TcpConfig::default();
    let (rate, delay, access_delay) = (10e6, 0.020, 0.001);
    let bdp = rate * 2.0 * (2.0 * access_delay + delay) / 8.0 / f64::from(cfg.mss_bytes + cfg.header_bytes);
    let r1 = node(&mut sim, "r1");
    let r2 = node(&mut sim, "r2");
    let (bott, _) = sim.add_link(r1, r2, &droptail(rate, delay, bdp.round() as usize)).unwrap();
    let mut sinks: Vec<AgentId> = vec![];
    for (i, t) in starts.into_iter().enumerate() {
        let s = node(&mut sim, &format!("s{i}"));
        let d = node(&mut sim, &format!("d{i}"));
        sim.add_link(s, r1, &droptail(100e6, access_delay, 10_000)).unwrap();
        sim.add_link(r2, d, &droptail(100e6, access_delay, 10_000)).unwrap();
        let sink = sim.add_agent(d, None, Instant::ZERO, Box::new(TcpSink::new(cfg.clone()))).unwrap();
        let dst = sim.agent_addr(sink).unwrap();
        let tx = TcpSender::new(dst, i as u32, cfg.clone(), CcAlgorithm::NewReno.build(&cfg));
        sim.add_agent(s, None, secs(t), Box::new(tx)).unwrap();
        sinks.push(sink);
    }
    let summary = move |sim: &Simulator| {
        let g: Vec<f64> = sinks.iter().map(|&a| sim.agent::<TcpSink>(a).unwrap().received_bytes() as f64).collect();
        let (sum, sq) = (g.iter().sum::<f64>(), g.iter().map(|x| x * x).sum::<f64>());
        format!(
            "bottleneck utilisation {:.3}, Jain's index of the goodputs {:.3}",
            util(sim, bott, rate),
            sum * sum / (g.len() as f64 * sq)
        )
    };
    (sim, Box::new(summary))
}

/// NLM Fig. 8 with `n` sessions, 1 Mb/s of bottleneck each.
fn nlm(n: usize) -> Scenario {
    const RATES: [f64; 5] = [100e3, 100e3, 200e3, 400e3, 800e3]; // NLM §4.1
    let mut sim = Simulator::new(1);
    let cfg = NlmConfig::default();
    let lmr1 = node(&mut sim, "LMR1");
    let lmr2 = node(&mut sim, "LMR2");
    let (bott, _) = sim.add_link(lmr1, lmr2, &droptail(n as f64 * 1e6, 0.010, 20)).unwrap();
    for (i, t) in starts(1, n, 20.0, 30.0).into_iter().enumerate() {
        let s = node(&mut sim, &format!("S{i}"));
        let r = node(&mut sim, &format!("R{i}"));
        sim.add_link(s, lmr1, &droptail(10e6, 0.010, 20)).unwrap();
        sim.add_link(lmr2, r, &droptail(10e6, 0.010, 20)).unwrap();
        let g = sim.add_group(s).unwrap();
        let tx = NlmSender::try_new(cfg.clone(), g, &RATES, 1024, i as u32, Instant::ZERO, Instant::MAX, true).unwrap();
        sim.add_agent(s, None, Instant::ZERO, Box::new(tx)).unwrap();
        let rx = NlmReceiver::try_new(cfg.clone(), g, RATES.len(), Duration::from_secs(1)).unwrap();
        sim.add_agent(r, None, secs(t), Box::new(rx)).unwrap();
    }
    let meter = NlmRouter::lmr(cfg.clone()).unwrap().with_meter(bott, Duration::from_secs(1), RATES.len());
    sim.attach_extension(lmr1, Box::new(meter)).unwrap();
    sim.attach_extension(lmr2, Box::new(NlmRouter::lmr(cfg).unwrap())).unwrap();
    let summary = move |sim: &Simulator| format!("bottleneck utilisation {:.3}", util(sim, bott, n as f64 * 1e6));
    (sim, Box::new(summary))
}

/// Rainbow B-(i) with `n` receivers behind one shared 500 kb/s link.
fn rainbow(n: usize) -> Scenario {
    let mut sim = Simulator::new(1);
    let red = |rate: f64, delay: f64| {
        let q = RedConfig {
            limit_pkts: 10,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            mean_pkt_bytes: 512,
            ..RedConfig::default()
        };
        LinkConfig::new(rate, delay, QueueConfig::Red(q))
    };
    let s = node(&mut sim, "S");
    let g0 = node(&mut sim, "G0");
    let g1 = node(&mut sim, "G1");
    sim.add_link(s, g0, &red(10e6, 0.005)).unwrap();
    let (shared, _) = sim.add_link(g0, g1, &red(500e3, 0.020)).unwrap();
    let rx_nodes: Vec<NodeId> = (0..n)
        .map(|k| {
            let r = node(&mut sim, &format!("R{k}"));
            sim.add_link(g1, r, &red(1e6, 0.010)).unwrap();
            r
        })
        .collect();
    for i in 0..sim.node_count() as u32 {
        sim.attach_extension(NodeId(i), Box::new(BcfRouter::new(BcfConfig::default()))).unwrap();
    }
    let mut rxs: Vec<AgentId> = vec![];
    let src = FountainSource::new(sim.agent_count() as u32 + 1, 512, None);
    let src = sim.add_agent(s, None, Instant::ZERO, Box::new(src)).unwrap();
    let src = sim.agent_addr(src).unwrap();
    for (r, t) in rx_nodes.into_iter().zip(starts(1, n, 0.0, 5.0)) {
        let flow = sim.agent_count() as u32 + 1;
        let rx = RainbowReceiver::new(RainbowConfig::default(), src, flow, FountainMode::Symbolic { needed: 2000 });
        rxs.push(sim.add_agent(r, None, secs(t), Box::new(rx)).unwrap());
    }
    let summary = move |sim: &Simulator| {
        let recs: Vec<&RainbowReceiver> = rxs.iter().map(|&a| sim.agent::<RainbowReceiver>(a).unwrap()).collect();
        let last = recs.iter().filter_map(|r| r.rec.done_at).max().map_or(f64::NAN, |t| t.as_secs_f64());
        let done = recs.iter().filter(|r| r.done()).count();
        let ps = sim.channel_stats(shared).unwrap().departures;
        format!(
            "{done} of {} receivers done, the last at {last:.1} s; {ps} packets crossed the shared link",
            recs.len()
        )
    };
    (sim, Box::new(summary))
}

/// LE-SBCC Fig. 5: the multicast source, 4 receivers, and 16 unicast LE-SBCC flows (4 per
/// receiver), all with the §3 simulation receivers (NAK at once, no NCF suppression).
fn lesbcc() -> Scenario {
    let mut sim = Simulator::new(1);
    let (access, core, bott, buf) = ((6e6, 0.005), (102e6, 0.013), (5e6, 0.010), 125);
    let main = node(&mut sim, "main");
    let r1 = node(&mut sim, "r1");
    let r2 = node(&mut sim, "r2");
    let rcv: Vec<NodeId> = (1..=4).map(|k| node(&mut sim, &format!("rcv{k}"))).collect();
    sim.add_link(main, r1, &droptail(access.0, access.1, buf)).unwrap();
    sim.add_link(r1, r2, &droptail(core.0, core.1, buf)).unwrap();
    let botts: Vec<ChannelId> =
        rcv.iter().map(|&r| sim.add_link(r2, r, &droptail(bott.0, bott.1, buf)).unwrap().0).collect();
    let mut unicast: Vec<AgentId> = vec![];
    let g = sim.add_group(main).unwrap();
    let rcfg = PgmReceiverConfig { nak_backoff_max: Duration::ZERO, ncf_suppression: false, ..Default::default() };
    for &r in &rcv {
        sim.add_agent(
            r,
            None,
            Instant::ZERO,
            Box::new(PgmReceiver::try_new(Some(g), 0, rcfg.clone()).expect("valid config")),
        )
        .unwrap();
    }
    let t = starts(1, 17, 0.0, 5.0);
    for (k, &r) in rcv.iter().enumerate() {
        for j in 0..4 {
            let s = node(&mut sim, &format!("u{}_{j}", k + 1));
            sim.add_link(s, r1, &droptail(access.0, access.1, buf)).unwrap();
            let flow = sim.agent_count() as u32 + 1;
            let rx = sim
                .add_agent(
                    r,
                    None,
                    Instant::ZERO,
                    Box::new(PgmReceiver::try_new(None, flow, rcfg.clone()).expect("valid config")),
                )
                .unwrap();
            let dst = sim.agent_addr(rx).unwrap();
            let tx = LesbccSource::try_new(Dest::Unicast(dst), flow, LesbccConfig::default()).expect("valid config");
            unicast.push(sim.add_agent(s, None, secs(t[k * 4 + j]), Box::new(tx)).unwrap());
        }
    }
    let tx = LesbccSource::try_new(Dest::Group(g), 0, LesbccConfig::default()).expect("valid config");
    let main_src = sim.add_agent(main, None, secs(t[16]), Box::new(tx)).unwrap();
    let summary = move |sim: &Simulator| {
        let rate =
            |a: AgentId| sim.agent::<LesbccSource>(a).unwrap().stats.bytes_sent as f64 * 8.0 / sim.now().as_secs_f64();
        let uni: Vec<f64> = unicast.iter().map(|&a| rate(a)).collect();
        let utils: Vec<String> = botts.iter().map(|&c| format!("{:.3}", util(sim, c, bott.0))).collect();
        format!(
            "main source sent {:.0} kb/s, unicast flows {:.0}-{:.0} kb/s, bottleneck utilisations {}",
            rate(main_src) / 1e3,
            uni.iter().cloned().fold(f64::INFINITY, f64::min) / 1e3,
            uni.iter().cloned().fold(0.0, f64::max) / 1e3,
            utils.join(" ")
        )
    };
    (sim, Box::new(summary))
}

/// A receiver as the LE-SBCC source sees it: an address its NAKs come from. It sends one NAK,
/// at its start, and nothing else; it is not a group member.
struct OneNak {
    source: Addr,
    pending: bool,
}

impl Agent for OneNak {
    fn handle_start(&mut self, _now: Instant, _info: StartInfo) {
        self.pending = true;
    }
    fn handle_packet(&mut self, _now: Instant, _p: &Packet) {}
    fn handle_timeout(&mut self, _now: Instant) {}
    fn poll_transmit(&mut self) -> Option<Packet> {
        if !std::mem::take(&mut self.pending) {
            return None;
        }
        let mut p = Packet::data(Dest::Unicast(self.source), 40);
        p.seq = 0;
        p.header = Header::Pgm(PgmHeader { kind: PgmHeader::NAK, trail: 0, lead: 1 });
        Some(p)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}

/// The LE-SBCC source's state with `n` receivers, in a simulated run: the source sends to a
/// group with one member behind a router; `n` receivers, 1,000 to a node on 10 Gb/s links to
/// the router, each NAK once at a time uniform on [0.5, 1.5] s; run to 2 s. The source's
/// per-receiver tables depend only on the distinct addresses its NAKs came from, so receivers
/// that are not members and NAK once give it the state of `n` receivers without the n² NCF
/// deliveries of a group of `n` (every NAK is answered with a multicast NCF).
fn lesbcc_state(n: usize) {
    let t0 = WallInstant::now();
    let mut sim = Simulator::new(1);
    let main = node(&mut sim, "main");
    let r1 = node(&mut sim, "r1");
    let rx = node(&mut sim, "rx");
    sim.add_link(main, r1, &droptail(10e9, 0.005, 100_000)).unwrap();
    sim.add_link(r1, rx, &droptail(10e6, 0.005, 100)).unwrap();
    let g = sim.add_group(main).unwrap();
    sim.add_agent(rx, None, Instant::ZERO, Box::new(LayeredSink::new(vec![g], vec![(Instant::ZERO, 1)]))).unwrap();
    let tx = LesbccSource::try_new(Dest::Group(g), 0, LesbccConfig::default()).expect("valid config");
    let src = sim.add_agent(main, None, Instant::ZERO, Box::new(tx)).unwrap();
    let source = sim.agent_addr(src).unwrap();
    let t = starts(7, n, 0.5, 1.5);
    let mut host = r1;
    for (i, &at) in t.iter().enumerate() {
        if i % 1000 == 0 {
            host = node(&mut sim, &format!("h{}", i / 1000));
            sim.add_link(host, r1, &droptail(10e9, 0.001, 100_000)).unwrap();
        }
        sim.add_agent(host, None, secs(at), Box::new(OneNak { source, pending: false })).unwrap();
    }
    sim.run(secs(2.0)).unwrap();
    let st = sim.agent::<LesbccSource>(src).unwrap().state();
    assert_eq!(st.receivers, n, "every receiver's NAK reached the source");
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    // §1: "below 1MB for 10,000-50,000 receivers", read as 10^6 bytes of per-receiver tables
    let paper = if (10_000..=50_000).contains(&n) {
        if st.per_receiver < 1_000_000 {
            "holds"
        } else {
            "does not hold"
        }
    } else {
        "not the paper's range"
    };
    println!(
        "(lesbcc-state) {n} receivers heard: per-receiver tables {} bytes = {:.3} MB ({:.2} bytes per receiver), \
         fixed {:.2} MiB (the 2^16-packet transmit window), records {:.2} MiB (the figures' LI rows) | paper (§1): \
         under 1 MB for 10,000-50,000 receivers: {paper} | {:.1} s wall",
        st.per_receiver,
        st.per_receiver as f64 / 1e6,
        st.per_receiver as f64 / n as f64,
        mib(st.fixed),
        mib(st.records),
        t0.elapsed().as_secs_f64()
    );
}

/// Counters at the end of one slice of simulated time.
#[derive(Clone, Copy, Default)]
struct Mark {
    events: u64,
    allocs: u64,
    reallocs: u64,
}

fn counters(sim: &Simulator) -> Mark {
    Mark {
        events: sim.engine_stats().events,
        allocs: ALLOCS.load(Ordering::Relaxed),
        reallocs: REALLOCS.load(Ordering::Relaxed),
    }
}

/// Runs `sim` to `until_s` in 1 s slices and reports. "Second half" is the second half of the
/// run's events (from the first slice boundary by which half of them happened): for most
/// scenarios that is about the second half of simulated time, but Rainbow's transfers end long
/// before its 400 s do, and the second half of its time holds almost no events.
fn bench(name: &str, (mut sim, summary): Scenario, until_s: f64) {
    let slices = until_s.ceil() as usize;
    let mut marks = vec![Mark::default(); slices + 1];
    let t0 = WallInstant::now();
    marks[0] = counters(&sim);
    for (k, m) in marks.iter_mut().enumerate().skip(1) {
        sim.run(secs((k as f64).min(until_s))).unwrap();
        *m = counters(&sim);
    }
    let wall = t0.elapsed().as_secs_f64();
    let (first, last) = (marks[0], marks[slices]);
    let h = marks.iter().position(|m| m.events - first.events >= (last.events - first.events) / 2).unwrap();
    let mid = marks[h];
    let st = sim.engine_stats();
    assert!(sim.conservation().holds());
    let per_m = |allocs: u64, events: u64| allocs as f64 / (events.max(1) as f64 / 1e6);
    let (allocs, reallocs) = (last.allocs - mid.allocs, last.reallocs - mid.reallocs);
    println!(
        "{name}: {until_s:.0} s simulated in {wall:.2} s wall | {:.2} M events, {:.2} M events/s | {:.2} M packets \
         forwarded, {:.2} M forwarded/s | {:.1} allocations per M events in the 2nd half (from {h} s: {allocs} \
         allocations, {reallocs} of them growth, over {:.2} M events); whole run {:.1} ({} fresh)",
        st.events as f64 / 1e6,
        st.events as f64 / wall / 1e6,
        st.forwarded as f64 / 1e6,
        st.forwarded as f64 / wall / 1e6,
        per_m(allocs, last.events - mid.events),
        (last.events - mid.events) as f64 / 1e6,
        per_m(last.allocs - first.allocs, last.events - first.events),
        (last.allocs - first.allocs) - (last.reallocs - first.reallocs),
    );
    println!("    {}", summary(&sim));
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing and must stay quick.
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        println!("protocol benchmarks: run with `cargo bench -p castlab-sim --bench protocols [-- NAME...]`");
        return;
    }
    // Optional filter: scenario names after `--` (e.g. `-- rlm nlm`); all when none given.
    let only: Vec<&str> = args.iter().skip(1).filter(|a| !a.starts_with("--")).map(String::as_str).collect();
    let want = |n: &str| only.is_empty() || only.contains(&n);
    // the RLM star at one size, not in the default set: `-- rlm-star RECEIVERS SECONDS`
    if only.first() == Some(&"rlm-star") {
        let n: usize = only.get(1).and_then(|a| a.parse().ok()).expect("rlm-star RECEIVERS SECONDS");
        let until_s: f64 = only.get(2).and_then(|a| a.parse().ok()).expect("rlm-star RECEIVERS SECONDS");
        rlm_scale(n, until_s);
        return;
    }
    if want("rlm") {
        bench("(rlm) RLM, 100 receivers on topology (2)", rlm(100), 600.0);
    }
    if want("tcp") {
        bench("(tcp) 16 NewReno flows, 10 Mb/s dumbbell", tcp(16), 200.0);
    }
    // the many-flow row beside ns-2 (bench/compare.py); not in the default set
    if only.contains(&"tcp100") {
        bench("(tcp100) 100 NewReno flows, 10 Mb/s dumbbell", newreno100(), 100.0);
    }
    if want("nlm") {
        bench("(nlm) NLM, N = 100 sessions (Fig. 8/13)", nlm(100), 600.0);
    }
    if want("rainbow") {
        bench("(rainbow) Rainbow B-(i), 125 receivers behind one shared link", rainbow(125), 400.0);
    }
    if want("lesbcc") {
        bench("(lesbcc) LE-SBCC Fig. 5, 1 multicast + 16 unicast flows", lesbcc(), 450.0);
    }
    if want("lesbcc-state") {
        lesbcc_state(10_000);
        lesbcc_state(50_000);
        lesbcc_state(100_000);
        if std::env::var_os("CASTLAB_BENCH_MILLION").is_some() {
            lesbcc_state(1_000_000);
        }
    }
}
