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
//! (nlm)    NLM Fig. 8 with N = 100 sessions on a 100 Mb/s LMR1–LMR2 link (1 Mb/s each),
//!          LMRs on both ends and the loss meter on LMR1, receivers joining on [20, 30] s, 600 s
//!          (experiments/nlm.py `Fig8`, Fig. 13's largest N);
//! (rainbow) Rainbow B-(i): 125 receivers behind one 500 kb/s shared link, RED 10-packet
//!          queues and BCF routers everywhere, a symbolic fountain, 2000 packets each, starts on
//!          [0, 5] s, 400 s (experiments/rainbow.py `b1_run`);
//! (lesbcc) LE-SBCC Fig. 5: one multicast source to 4 receivers over 5 Mb/s bottlenecks and 16
//!          unicast LE-SBCC flows, 125-packet DropTail buffers, 450 s
//!          (experiments/lesbcc.py `fig5_run`).
//!
//! Prints per scenario the simulated and wall time, events per second, link transmissions
//! (packets forwarded, one per hop) per second, and heap allocations per million events over
//! the second half of the run (a counting global allocator), plus the whole run's rate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant as WallInstant;

use castlab_core::{Dest, Duration, GroupId, Instant, NodeId, Rng};
use castlab_proto::bcfs::{BcfConfig, BcfRouter};
use castlab_proto::fountain::{FountainMode, FountainSource};
use castlab_proto::lesbcc::{LesbccConfig, LesbccSource};
use castlab_proto::nlm::{NlmConfig, NlmReceiver, NlmSender};
use castlab_proto::pgm::{PgmReceiver, PgmReceiverConfig};
use castlab_proto::rainbow::{RainbowConfig, RainbowReceiver};
use castlab_proto::rlm::{RlmConfig, RlmReceiver};
use castlab_proto::tcp::{CcAlgorithm, TcpConfig, TcpSender, TcpSink};
use castlab_proto::CbrSource;
use castlab_sim::nlm::NlmRouter;
use castlab_sim::{LinkConfig, QueueConfig, RedConfig, Simulator};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
fn rlm(n: usize) -> Simulator {
    let mut sim = Simulator::new(1);
    let link = droptail(1.5e6, 0.010, 20);
    let s = node(&mut sim, "S");
    let x = node(&mut sim, "X");
    sim.add_link(s, x, &link).unwrap();
    let groups: Vec<GroupId> = (0..6).map(|_| sim.add_group(s).unwrap()).collect();
    let control = sim.add_group(s).unwrap();
    let rates: Vec<f64> = (0..6).map(|m| 32e3 * f64::from(1u32 << m)).collect();
    let source = CbrSource::layered(&groups, &rates, 1000, 1, Instant::ZERO, Instant::MAX, true);
    sim.add_agent(s, None, Instant::ZERO, Box::new(source)).unwrap();
    for (i, t) in starts(1, n, 30.0, 120.0).into_iter().enumerate() {
        let r = node(&mut sim, &format!("R{i}"));
        sim.add_link(x, r, &link).unwrap();
        let rx = RlmReceiver::new(RlmConfig::default(), groups.clone(), control);
        sim.add_agent(r, None, secs(t), Box::new(rx)).unwrap();
    }
    sim
}

/// `k` NewReno flows through a 10 Mb/s, 20 ms dumbbell whose DropTail queue holds one BDP.
fn tcp(k: usize) -> Simulator {
    let mut sim = Simulator::new(1);
    let cfg = TcpConfig::default();
    let (rate, delay, access_delay) = (10e6, 0.020, 0.001);
    let bdp = rate * 2.0 * (2.0 * access_delay + delay) / 8.0 / f64::from(cfg.mss_bytes + cfg.header_bytes);
    let r1 = node(&mut sim, "r1");
    let r2 = node(&mut sim, "r2");
    sim.add_link(r1, r2, &droptail(rate, delay, bdp.round() as usize)).unwrap();
    for (i, t) in starts(1, k, 0.0, 5.0).into_iter().enumerate() {
        let s = node(&mut sim, &format!("s{i}"));
        let d = node(&mut sim, &format!("d{i}"));
        sim.add_link(s, r1, &droptail(100e6, access_delay, 10_000)).unwrap();
        sim.add_link(r2, d, &droptail(100e6, access_delay, 10_000)).unwrap();
        let sink = sim.add_agent(d, None, Instant::ZERO, Box::new(TcpSink::new(cfg.clone()))).unwrap();
        let dst = sim.agent_addr(sink).unwrap();
        let tx = TcpSender::new(dst, i as u32, cfg.clone(), CcAlgorithm::NewReno.build(&cfg));
        sim.add_agent(s, None, secs(t), Box::new(tx)).unwrap();
    }
    sim
}

/// NLM Fig. 8 with `n` sessions, 1 Mb/s of bottleneck each.
fn nlm(n: usize) -> Simulator {
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
    sim
}

/// Rainbow B-(i) with `n` receivers behind one shared 500 kb/s link.
fn rainbow(n: usize) -> Simulator {
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
    sim.add_link(g0, g1, &red(500e3, 0.020)).unwrap();
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
    let src = FountainSource::new(sim.agent_count() as u32 + 1, 512, None);
    let src = sim.add_agent(s, None, Instant::ZERO, Box::new(src)).unwrap();
    let src = sim.agent_addr(src).unwrap();
    for (r, t) in rx_nodes.into_iter().zip(starts(1, n, 0.0, 5.0)) {
        let flow = sim.agent_count() as u32 + 1;
        let rx = RainbowReceiver::new(RainbowConfig::default(), src, flow, FountainMode::Symbolic { needed: 2000 });
        sim.add_agent(r, None, secs(t), Box::new(rx)).unwrap();
    }
    sim
}

/// LE-SBCC Fig. 5: the multicast source, 4 receivers, and 16 unicast LE-SBCC flows (4 per
/// receiver), all with the §3 simulation receivers (NAK at once, no NCF suppression).
fn lesbcc() -> Simulator {
    let mut sim = Simulator::new(1);
    let (access, core, bott, buf) = ((6e6, 0.005), (102e6, 0.013), (5e6, 0.010), 125);
    let main = node(&mut sim, "main");
    let r1 = node(&mut sim, "r1");
    let r2 = node(&mut sim, "r2");
    let rcv: Vec<NodeId> = (1..=4).map(|k| node(&mut sim, &format!("rcv{k}"))).collect();
    sim.add_link(main, r1, &droptail(access.0, access.1, buf)).unwrap();
    sim.add_link(r1, r2, &droptail(core.0, core.1, buf)).unwrap();
    for &r in &rcv {
        sim.add_link(r2, r, &droptail(bott.0, bott.1, buf)).unwrap();
    }
    let g = sim.add_group(main).unwrap();
    let rcfg = PgmReceiverConfig { nak_backoff_max: Duration::ZERO, ncf_suppression: false, ..Default::default() };
    for &r in &rcv {
        sim.add_agent(r, None, Instant::ZERO, Box::new(PgmReceiver::new(Some(g), 0, rcfg.clone()))).unwrap();
    }
    let t = starts(1, 17, 0.0, 5.0);
    for (k, &r) in rcv.iter().enumerate() {
        for j in 0..4 {
            let s = node(&mut sim, &format!("u{}_{j}", k + 1));
            sim.add_link(s, r1, &droptail(access.0, access.1, buf)).unwrap();
            let flow = sim.agent_count() as u32 + 1;
            let rx =
                sim.add_agent(r, None, Instant::ZERO, Box::new(PgmReceiver::new(None, flow, rcfg.clone()))).unwrap();
            let dst = sim.agent_addr(rx).unwrap();
            let tx = LesbccSource::new(Dest::Unicast(dst), flow, LesbccConfig::default());
            sim.add_agent(s, None, secs(t[k * 4 + j]), Box::new(tx)).unwrap();
        }
    }
    let tx = LesbccSource::new(Dest::Group(g), 0, LesbccConfig::default());
    sim.add_agent(main, None, secs(t[16]), Box::new(tx)).unwrap();
    sim
}

fn bench(name: &str, mut sim: Simulator, until_s: f64) {
    let half = secs(until_s / 2.0);
    let (a0, t0) = (ALLOCS.load(Ordering::Relaxed), WallInstant::now());
    sim.run(half).unwrap();
    let (e_half, a_half) = (sim.engine_stats().events, ALLOCS.load(Ordering::Relaxed));
    sim.run(secs(until_s)).unwrap();
    let wall = t0.elapsed().as_secs_f64();
    let a_end = ALLOCS.load(Ordering::Relaxed);
    let st = sim.engine_stats();
    let per_m = |allocs: u64, events: u64| allocs as f64 / (events.max(1) as f64 / 1e6);
    assert!(sim.conservation().holds());
    println!(
        "{name}: {until_s:.0} s simulated in {wall:.2} s wall | {:.2} M events, {:.2} M events/s | {:.2} M packets \
         forwarded, {:.2} M forwarded/s | {:.1} allocations per M events (2nd half: {} allocs over {:.2} M events; \
         whole run {:.1})",
        st.events as f64 / 1e6,
        st.events as f64 / wall / 1e6,
        st.forwarded as f64 / 1e6,
        st.forwarded as f64 / wall / 1e6,
        per_m(a_end - a_half, st.events - e_half),
        a_end - a_half,
        (st.events - e_half) as f64 / 1e6,
        per_m(a_end - a0, st.events),
    );
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
    if want("rlm") {
        bench("(rlm) RLM, 100 receivers on topology (2)", rlm(100), 600.0);
    }
    if want("tcp") {
        bench("(tcp) 16 NewReno flows, 10 Mb/s dumbbell", tcp(16), 200.0);
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
}
