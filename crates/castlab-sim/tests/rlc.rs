//! RLC (Vicisano, Rizzo, Crowcroft, INFOCOM 98) through the simulator, with the Rainbow
//! paper's set-up (§IV-B: 512-byte packets, base layer 32 kb/s, base-layer SPs every second).

use castlab_core::{Addr, AgentId, GroupId, Instant, NodeId};
use castlab_proto::rlc::{RlcConfig, RlcReceiver, RlcSender};
use castlab_proto::tcp::{CcAlgorithm, TcpConfig, TcpSender, TcpSink};
use castlab_sim::Simulator;

mod common;
use common::{link, secs};

/// An RLC session rooted at `src`: one group per layer and the sender.
fn session(sim: &mut Simulator, src: NodeId, cfg: &RlcConfig, flow: u32, start: f64) -> Vec<GroupId> {
    let groups: Vec<GroupId> = (0..cfg.layers).map(|_| sim.add_group(src).unwrap()).collect();
    let tx = RlcSender::try_new(cfg.clone(), &groups, flow, secs(start), Instant::MAX).unwrap();
    sim.add_agent(src, None, secs(start), Box::new(tx)).unwrap();
    groups
}

fn rlc(sim: &Simulator, a: AgentId) -> &RlcReceiver {
    sim.agent::<RlcReceiver>(a).expect("an RLC receiver")
}

/// Time spent at each level over [t0, t1), seconds, indexed by level.
fn time_at_levels(levels: &[(Instant, u32)], t0: Instant, t1: Instant) -> Vec<f64> {
    let mut out = vec![0.0; 17];
    for (i, &(t, lvl)) in levels.iter().enumerate() {
        let end = levels.get(i + 1).map_or(t1, |s| s.0).min(t1);
        let start = t.max(t0);
        if end > start {
            out[lvl as usize] += (end - start).as_secs_f64();
        }
    }
    out
}

/// Source – r1 –(bottleneck)– r2 – n receivers (fast, equal access links), receivers starting at
/// `starts`.
fn star(seed: u64, bottleneck_bps: f64, starts: &[f64]) -> (Simulator, Vec<AgentId>) {
    let cfg = RlcConfig::default();
    let mut sim = Simulator::new(seed);
    let s = sim.add_node("S").unwrap();
    let r1 = sim.add_node("r1").unwrap();
    let r2 = sim.add_node("r2").unwrap();
    sim.add_link(s, r1, &link(100e6, 0.001, 1000)).unwrap();
    sim.add_link(r1, r2, &link(bottleneck_bps, 0.020, 20)).unwrap();
    let groups = session(&mut sim, s, &cfg, 1, 0.0);
    let mut rx = Vec::new();
    for (i, &st) in starts.iter().enumerate() {
        let x = sim.add_node(&format!("R{i}")).unwrap();
        sim.add_link(r2, x, &link(100e6, 0.005, 1000)).unwrap();
        let r = RlcReceiver::try_new(cfg.clone(), &groups, 1).unwrap();
        rx.push(sim.add_agent(x, None, secs(st), Box::new(r)).unwrap());
    }
    (sim, rx)
}

#[test]
fn receivers_behind_one_bottleneck_join_and_drop_at_the_same_instants() {
    // Receivers start at different times; a late starter catches up at the SPs of its lower
    // level (here all share one level from ~8 s). From 20 s on, every join and every drop of
    // one is a join or drop of all, at the same instant (shared losses, shared SPs). The 20 s
    // cut was set after a first run showed convergence at 8.1 s.
    let (mut sim, rx) = star(3, 300e3, &[0.0, 0.4, 1.3, 2.7]);
    sim.run(secs(200.0)).unwrap();
    let after = secs(20.0);
    let joins = |a| -> Vec<Instant> { rlc(&sim, a).records().joins.iter().copied().filter(|&t| t > after).collect() };
    let drops = |a| -> Vec<Instant> { rlc(&sim, a).records().drops.iter().copied().filter(|&t| t > after).collect() };
    let j0 = joins(rx[0]);
    let d0 = drops(rx[0]);
    assert!(j0.len() >= 3 && !d0.is_empty(), "the run must exercise joins and drops: {j0:?} {d0:?}");
    for &a in &rx[1..] {
        assert_eq!(joins(a), j0);
        assert_eq!(drops(a), d0);
    }
    println!("synchronised: {} joins and {} drops after 20 s, identical at all 4 receivers", j0.len(), d0.len());
}

#[test]
fn a_receiver_settles_at_the_largest_level_that_fits() {
    // Cumulative rates 32·2^(L-1) kb/s: 256 kb/s (level 4) fits in 300 kb/s, 512 does not.
    // Rule (fixed before running): over [100 s, 400 s) at least 60 % of the time at level 4 and
    // at most 20 % above it.
    let (mut sim, rx) = star(5, 300e3, &[0.0]);
    sim.run(secs(400.0)).unwrap();
    let r = rlc(&sim, rx[0]);
    let at = time_at_levels(&r.records().levels, secs(100.0), secs(400.0));
    let above: f64 = at[5..].iter().sum();
    println!("time at levels over [100, 400) s: {:?}", &at[..8]);
    assert!(at[4] >= 0.6 * 300.0, "level 4 for {} s", at[4]);
    assert!(above <= 0.2 * 300.0, "above level 4 for {above} s");
}

/// One RLC session and one NewReno flow share a DropTail bottleneck; returns the ratio of
/// their receiving rates over [50 s, 350 s) (RLC / TCP).
fn rlc_vs_newreno(seed: u64, bottleneck_bps: f64) -> (f64, f64, f64) {
    let cfg = RlcConfig::default();
    let mut sim = Simulator::new(seed);
    let r1 = sim.add_node("r1").unwrap();
    let r2 = sim.add_node("r2").unwrap();
    sim.add_link(r1, r2, &link(bottleneck_bps, 0.020, 20)).unwrap();
    let (s_rlc, d_rlc, s_tcp, d_tcp) = (
        sim.add_node("Srlc").unwrap(),
        sim.add_node("Rrlc").unwrap(),
        sim.add_node("Stcp").unwrap(),
        sim.add_node("Rtcp").unwrap(),
    );
    for s in [s_rlc, s_tcp] {
        sim.add_link(s, r1, &link(100e6, 0.001, 1000)).unwrap();
    }
    for d in [d_rlc, d_tcp] {
        sim.add_link(r2, d, &link(100e6, 0.001, 1000)).unwrap();
    }
    let groups = session(&mut sim, s_rlc, &cfg, 1, 1.0);
    let rx = sim
        .add_agent(d_rlc, None, secs(1.0), Box::new(RlcReceiver::try_new(cfg.clone(), &groups, 1).unwrap()))
        .unwrap();
    // 512-byte packets (§IV-B): 40 bytes of headers + 472 of payload.
    let tcfg = TcpConfig { mss_bytes: 472, ..Default::default() };
    let sink = sim.add_agent(d_tcp, Some(80), Instant::ZERO, Box::new(TcpSink::new(tcfg.clone()))).unwrap();
    let tx = TcpSender::new(Addr::new(d_tcp, 80), 2, tcfg.clone(), CcAlgorithm::NewReno.build(&tcfg));
    sim.add_agent(s_tcp, None, secs(2.0), Box::new(tx)).unwrap();
    sim.run(secs(50.0)).unwrap();
    let (r0, t0) = (rlc(&sim, rx).records().bytes, sim.agent::<TcpSink>(sink).unwrap().received_bytes());
    sim.run(secs(350.0)).unwrap();
    let (r1b, t1) = (rlc(&sim, rx).records().bytes, sim.agent::<TcpSink>(sink).unwrap().received_bytes());
    let rlc_bps = (r1b - r0) as f64 * 8.0 / 300.0;
    // TCP goodput counted in payload bytes; scale to wire bytes (512/472) to compare like with like.
    let tcp_bps = (t1 - t0) as f64 * 8.0 / 300.0 * 512.0 / 472.0;
    (rlc_bps / tcp_bps, rlc_bps, tcp_bps)
}

#[test]
fn one_rlc_session_against_one_newreno_flow_reports_its_rate_ratio() {
    // Rainbow §IV-B, Fig. 12(b): RLC takes too much at 128 kb/s, too little at 512 kb/s, and is
    // near fair (ratio ~1) only at 256 kb/s. Reported here, not asserted: one seed per point.
    for bw in [128e3, 256e3, 512e3] {
        let (ratio, r, t) = rlc_vs_newreno(11, bw);
        println!(
            "bottleneck {:.0} kb/s: RLC {:.1} kb/s, NewReno {:.1} kb/s, ratio {ratio:.2}",
            bw / 1e3,
            r / 1e3,
            t / 1e3
        );
        assert!(r > 0.0 && t > 0.0, "both flows must get through");
        assert!(r + t <= bw * 1.01, "no more than the link carries");
    }
}
