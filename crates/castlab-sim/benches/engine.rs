//! Engine benchmarks (measured, not timed tests). Run with:
//!
//!     cargo bench -p castlab-sim --bench engine
//!
//! (a) 100 CBR flows (120 kb/s each, 1000-byte packets, RLM §4 jitter) through a 10 Mb/s
//!     DropTail dumbbell for 100 simulated seconds;
//! (b) one 6-layer source (32·2^m kb/s) to 1,000 receivers, all at level 5, behind one
//!     1.5 Mb/s bottleneck, for 600 simulated seconds;
//! (c) the CBR star: one 992 kb/s CBR source (1000-byte packets, one group) to
//!     100 receivers on RLM's star (S–R1 10 Mb/s, R1–R2 1.5 Mb/s DropTail 20, R2–receivers
//!     10 Mb/s, every link 10 ms), 600 simulated seconds. `bench/ns2/cbr_star.tcl` is the same
//!     scenario for ns-2.
//!
//! One scenario alone, at another size (for profiling and A/B runs of a change):
//!
//!     cargo bench -p castlab-sim --bench engine -- star RECEIVERS SECONDS
//!
//! The star at 100, 1,000, ... receivers up to MAX (default 100,000, or 1,000,000 with
//! `CASTLAB_BENCH_MILLION=1` in the environment), each for SECONDS simulated (default
//! 60,000 / receivers and at least 2: about 7.4 M deliveries each up to 10^5), for the cost per
//! delivered packet against the receiver count:
//!
//!     cargo bench -p castlab-sim --bench engine -- scale [SECONDS [MAX]]
//!
//! Prints wall time, events per second, link transmissions (packets forwarded, one per hop)
//! per second, wall and CPU nanoseconds per packet delivered to an agent (the run only, not
//! the set-up; on a shared machine read the CPU figure), the event queue's pops per event (a
//! batch of link events is one pop), and heap allocations per million events over the second
//! half of each run, counted by a counting global allocator: the steady state should allocate
//! (almost) nothing (the sinks' record columns still grow, amortised).

use std::sync::atomic::Ordering;
use std::time::Instant as WallInstant;

use castlab_core::{Addr, Dest, GroupId, Instant, NodeId};
use castlab_proto::{CbrSource, CbrStream, LayeredSink};
use castlab_sim::{LinkConfig, QueueConfig, Simulator};

mod common;
use common::{cpu_s, peak_rss_mib, Counting, ALLOCS};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn dt(limit: usize) -> QueueConfig {
    QueueConfig::DropTail { limit_pkts: limit }
}

fn dumbbell() -> Simulator {
    let mut sim = Simulator::new(1);
    let a = sim.add_node("A").unwrap();
    let b = sim.add_node("B").unwrap();
    sim.add_link(a, b, &LinkConfig::new(10e6, 0.020, dt(100))).unwrap();
    for i in 0..100 {
        let l = sim.add_node(&format!("L{i}")).unwrap();
        let r = sim.add_node(&format!("R{i}")).unwrap();
        sim.add_link(l, a, &LinkConfig::new(100e6, 0.001 + 0.0001 * i as f64, dt(100))).unwrap();
        sim.add_link(b, r, &LinkConfig::new(100e6, 0.001, dt(100))).unwrap();
        sim.add_agent(r, Some(5), Instant::ZERO, Box::new(LayeredSink::new(vec![], vec![]))).unwrap();
        let st = CbrStream::new(Dest::Unicast(Addr::new(r, 5)), 120e3, 0);
        sim.add_agent(
            l,
            None,
            Instant::ZERO,
            Box::new(CbrSource::try_new(vec![st], 1000, i, Instant::ZERO, Instant::MAX, true).expect("valid source")),
        )
        .unwrap();
    }
    sim
}

fn fanout() -> Simulator {
    let mut sim = Simulator::new(1);
    let s = sim.add_node("S").unwrap();
    let a = sim.add_node("A").unwrap();
    let b = sim.add_node("B").unwrap();
    sim.add_link(s, a, &LinkConfig::new(100e6, 0.001, dt(100))).unwrap();
    sim.add_link(a, b, &LinkConfig::new(1.5e6, 0.010, dt(20))).unwrap();
    let groups: Vec<GroupId> = (0..6).map(|_| sim.add_group(s).unwrap()).collect();
    let rates: Vec<f64> = (0..6).map(|m| 32e3 * 2f64.powi(m)).collect();
    sim.add_agent(
        s,
        None,
        Instant::ZERO,
        Box::new(
            CbrSource::try_layered(&groups, &rates, 1000, 1, Instant::ZERO, Instant::MAX, true).expect("valid source"),
        ),
    )
    .unwrap();
    for i in 0..1000 {
        let r = sim.add_node(&format!("R{i}")).unwrap();
        sim.add_link(b, r, &LinkConfig::new(10e6, 0.005, dt(20))).unwrap();
        sim.add_agent(r, None, Instant::ZERO, Box::new(LayeredSink::new(groups.clone(), vec![(Instant::ZERO, 5)])))
            .unwrap();
    }
    sim
}

/// The CBR star (c) with `n` receivers.
fn star(n: usize) -> Simulator {
    let mut sim = Simulator::new(1);
    let s = sim.add_node("S").unwrap();
    let r1 = sim.add_node("R1").unwrap();
    let r2 = sim.add_node("R2").unwrap();
    sim.add_link(s, r1, &LinkConfig::new(10e6, 0.010, dt(20))).unwrap();
    sim.add_link(r1, r2, &LinkConfig::new(1.5e6, 0.010, dt(20))).unwrap();
    let g = sim.add_group(s).unwrap();
    let src = CbrStream::new(Dest::Group(g), 992e3, 0);
    sim.add_agent(
        s,
        None,
        Instant::ZERO,
        Box::new(CbrSource::try_new(vec![src], 1000, 1, Instant::ZERO, Instant::MAX, true).expect("valid source")),
    )
    .unwrap();
    for i in 0..n {
        let r = sim.add_node(&format!("X{i}")).unwrap();
        sim.add_link(r2, r, &LinkConfig::new(10e6, 0.010, dt(20))).unwrap();
        sim.add_agent(r, None, Instant::ZERO, Box::new(LayeredSink::new(vec![g], vec![(Instant::ZERO, 1)]))).unwrap();
    }
    sim
}

fn bench(name: &str, mut sim: Simulator, until_s: f64) {
    let half = Instant::from_secs_f64(until_s / 2.0);
    let t0 = WallInstant::now();
    let c0 = cpu_s();
    sim.run(half).unwrap();
    let (e_half, a_half) = (sim.engine_stats().events, ALLOCS.load(Ordering::Relaxed));
    sim.run(Instant::from_secs_f64(until_s)).unwrap();
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_s() - c0;
    let st = sim.engine_stats();
    let allocs = ALLOCS.load(Ordering::Relaxed) - a_half;
    let per_m = allocs as f64 / ((st.events - e_half) as f64 / 1e6);
    assert!(sim.conservation().holds());
    let delivered: u64 =
        (0..sim.node_count()).map(|n| sim.node_stats(NodeId(n as u32)).map_or(0, |s| s.delivered_local)).sum();
    println!(
        "{name}: {until_s} s simulated in {wall:.2} s wall | {:.2} M events, {:.2} M events/s | {:.2} M packets forwarded, {:.2} M forwarded/s | {:.1} ns wall, {:.1} ns CPU per delivery ({:.2} M delivered) | {:.2} pops per event | {per_m:.1} allocations per M events (2nd half) | peak RSS so far {:.0} MiB",
        st.events as f64 / 1e6,
        st.events as f64 / wall / 1e6,
        st.forwarded as f64 / 1e6,
        st.forwarded as f64 / wall / 1e6,
        wall * 1e9 / delivered.max(1) as f64,
        cpu * 1e9 / delivered.max(1) as f64,
        delivered as f64 / 1e6,
        sim.queue_pops() as f64 / st.events.max(1) as f64,
        peak_rss_mib(),
    );
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing and must stay quick.
    if !std::env::args().any(|a| a == "--bench") {
        println!("engine benchmarks: run with `cargo bench -p castlab-sim --bench engine`");
        return;
    }
    let args: Vec<String> = std::env::args().filter(|a| a != "--bench").collect();
    if args.get(1).map(String::as_str) == Some("star") {
        let n: usize = args.get(2).and_then(|a| a.parse().ok()).expect("star RECEIVERS SECONDS");
        let secs: f64 = args.get(3).and_then(|a| a.parse().ok()).expect("star RECEIVERS SECONDS");
        bench(&format!("(c) CBR star, {n} receivers"), star(n), secs);
        return;
    }
    if args.get(1).map(String::as_str) == Some("scale") {
        // by default about 7.4 M deliveries at each size (60,000 receiver-seconds, at least 2 s):
        // enough CPU time at every size for the figure to be read
        let secs: Option<f64> = args.get(2).and_then(|a| a.parse().ok());
        // 10^6 receivers take minutes: only when asked for
        let dflt = if std::env::var_os("CASTLAB_BENCH_MILLION").is_some() { 1_000_000 } else { 100_000 };
        let max: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(dflt);
        let mut n = 100;
        while n <= max {
            let secs = secs.unwrap_or((60_000.0 / n as f64).max(2.0));
            bench(&format!("(c) CBR star, {n} receivers"), star(n), secs);
            n *= 10;
        }
        return;
    }
    bench("(a) 100 CBR flows, 10 Mb/s dumbbell", dumbbell(), 100.0);
    bench("(b) 6-layer source to 1000 receivers, 1.5 Mb/s bottleneck", fanout(), 600.0);
    bench("(c) CBR star, 100 receivers", star(100), 600.0);
}
