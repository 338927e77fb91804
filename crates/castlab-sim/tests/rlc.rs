//! RLC (Vicisano et al. 1998) in the simulator, with the Rainbow paper's §IV-B parameters:
//! base layer 32 kb/s, cumulative rates doubling, SPs for level L every 2^(L-1) s, 512-byte
//! packets.

use castlab_core::{Addr, AgentId, GroupId, Instant, NodeId};
use castlab_proto::rlc::{RlcConfig, RlcReceiver, RlcSource};
use castlab_proto::tcp::{TcpConfig, TcpSender, TcpSink};
use castlab_sim::{LinkConfig, QueueConfig, Simulator};

fn secs(s: f64) -> Instant {
    Instant::from_secs_f64(s)
}

fn link(rate: f64, delay: f64, q: usize) -> LinkConfig {
    LinkConfig::new(rate, delay, QueueConfig::DropTail { limit_pkts: q })
}

fn session(sim: &mut Simulator, src: NodeId, cfg: &RlcConfig, start: f64) -> Vec<GroupId> {
    let groups: Vec<GroupId> = (0..cfg.layers).map(|_| sim.add_group(src).unwrap()).collect();
    let s = RlcSource::try_new(cfg.clone(), &groups, 1, secs(start), Instant::MAX).unwrap();
    sim.add_agent(src, None, secs(start), Box::new(s)).unwrap();
    groups
}

fn rlc(sim: &Simulator, a: AgentId) -> &RlcReceiver {
    sim.agent::<RlcReceiver>(a).unwrap()
}

/// Seconds spent at each level over [t0, t1).
fn time_at(r: &RlcReceiver, t0: f64, t1: f64) -> Vec<f64> {
    let rec = &r.records;
    let mut out = vec![0.0; 16];
    for i in 0..rec.level.len() {
        let a = (rec.level_time_ns[i] as f64 / 1e9).max(t0);
        let b = rec.level_time_ns.get(i + 1).map_or(t1, |t| *t as f64 / 1e9).min(t1);
        if b > a {
            out[rec.level[i] as usize] += b - a;
        }
    }
    out
}

/// Four receivers behind one 1 Mb/s bottleneck: level 6 (1.024 Mb/s) does not fit, level 5
/// (512 kb/s) does. They join at the same SPs (RLC's synchronisation) and spend most of the
/// second half at level 5.
#[test]
fn receivers_behind_one_bottleneck_join_together_and_settle_at_the_level_that_fits() {
    let cfg = RlcConfig { layers: 8, ..RlcConfig::default() };
    let mut sim = Simulator::new(3);
    let s = sim.add_node("S").unwrap();
    let r1 = sim.add_node("R1").unwrap();
    let r2 = sim.add_node("R2").unwrap();
    sim.add_link(s, r1, &link(10e6, 0.005, 100)).unwrap();
    sim.add_link(r1, r2, &link(1e6, 0.020, 20)).unwrap();
    let groups = session(&mut sim, s, &cfg, 0.0);
    let mut rx = Vec::new();
    for i in 0..4 {
        let h = sim.add_node(&format!("H{i}")).unwrap();
        sim.add_link(r2, h, &link(10e6, 0.005, 100)).unwrap();
        let r = RlcReceiver::try_new(cfg.clone(), groups.clone()).unwrap();
        rx.push(sim.add_agent(h, None, secs(0.2), Box::new(r)).unwrap());
    }
    sim.run(secs(300.0)).unwrap();
    // synchronised: every join of every receiver happened within 100 ms of another receiver's
    // join to the same level (they act on the same SPs)
    let joins: Vec<Vec<(u64, u32)>> = rx
        .iter()
        .map(|&a| {
            let r = &rlc(&sim, a).records;
            r.level_time_ns
                .windows(2)
                .zip(r.level.windows(2))
                .filter(|(_, l)| l[1] > l[0])
                .map(|(t, l)| (t[1], l[1]))
                .collect()
        })
        .collect();
    let mut shared = 0;
    let mut total = 0;
    for (i, ji) in joins.iter().enumerate() {
        for &(t, l) in ji {
            total += 1;
            if joins
                .iter()
                .enumerate()
                .any(|(k, jk)| k != i && jk.iter().any(|&(u, m)| m == l && t.abs_diff(u) < 100_000_000))
            {
                shared += 1;
            }
        }
    }
    assert!(total >= 16, "{total} joins");
    assert!(shared as f64 >= 0.8 * total as f64, "only {shared} of {total} joins shared with another receiver");
    for &a in &rx {
        let at = time_at(rlc(&sim, a), 150.0, 300.0);
        assert!(at[5] >= 0.6 * 150.0, "level 5 for {:.0} of 150 s: {at:?}", at[5]);
        assert!(at[6] + at[7] + at[8] <= 0.2 * 150.0, "above the fitting level too long: {at:?}");
    }
}

/// One RLC session against one NewReno flow through a 256 kb/s dumbbell (the Rainbow paper's
/// B-(iii) middle case, where RLC is "fair only near 256 kb/s"): the measured ratio of their
/// receiving rates, reported; the Rainbow paper's Fig. 12(b) puts RLC near 1 there.
#[test]
fn one_rlc_session_against_one_newreno_flow_gives_a_measured_rate_ratio() {
    let cfg = RlcConfig { layers: 8, ..RlcConfig::default() };
    let mut sim = Simulator::new(5);
    let a = sim.add_node("A").unwrap();
    let r1 = sim.add_node("R1").unwrap();
    let r2 = sim.add_node("R2").unwrap();
    let b = sim.add_node("B").unwrap();
    let c = sim.add_node("C").unwrap();
    let d = sim.add_node("D").unwrap();
    sim.add_link(a, r1, &link(10e6, 0.005, 100)).unwrap();
    sim.add_link(c, r1, &link(10e6, 0.005, 100)).unwrap();
    sim.add_link(r1, r2, &link(256e3, 0.020, 20)).unwrap();
    sim.add_link(r2, b, &link(10e6, 0.005, 100)).unwrap();
    sim.add_link(r2, d, &link(10e6, 0.005, 100)).unwrap();
    let groups = session(&mut sim, a, &cfg, 0.0);
    let rx = sim.add_agent(b, None, secs(0.3), Box::new(RlcReceiver::try_new(cfg.clone(), groups).unwrap())).unwrap();
    let tcfg = TcpConfig { mss_bytes: 512, ..TcpConfig::default() };
    let sink = sim.add_agent(d, Some(80), Instant::ZERO, Box::new(TcpSink::new(tcfg.clone()))).unwrap();
    let tx = TcpSender::newreno(Addr::new(d, 80), 2, tcfg);
    sim.add_agent(c, None, secs(0.5), Box::new(tx)).unwrap();
    let dur = 400.0;
    sim.run(secs(dur)).unwrap();
    let rlc_bps = rlc(&sim, rx).records.received as f64 * 512.0 * 8.0 / dur;
    let tcp_bps = sim.agent::<TcpSink>(sink).unwrap().received_bytes() as f64 * 8.0 / dur;
    let ratio = rlc_bps / tcp_bps;
    println!("RLC {:.1} kb/s, NewReno {:.1} kb/s, ratio {ratio:.2}", rlc_bps / 1e3, tcp_bps / 1e3);
    // both got something and together they used the link: the ratio is measured, not bounded
    assert!(rlc_bps > 10e3 && tcp_bps > 10e3, "RLC {rlc_bps}, TCP {tcp_bps}");
    assert!(rlc_bps + tcp_bps > 0.7 * 256e3, "utilisation {}", (rlc_bps + tcp_bps) / 256e3);
}
