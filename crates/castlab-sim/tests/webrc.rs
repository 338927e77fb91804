//! WEBRC (RFC 3738) through the simulator: MRTTs measured through the engine's grafts, and a
//! receiver behind a bottleneck using it without overrunning it.

use castlab_core::{AgentId, GroupId, Instant, NodeId};
use castlab_proto::webrc::{WebrcConfig, WebrcReceiver, WebrcSender};
use castlab_sim::Simulator;

mod common;
use common::{link, secs};

/// A WEBRC session rooted at `src`: one group per channel and the sender.
fn session(sim: &mut Simulator, src: NodeId, cfg: &WebrcConfig) -> Vec<GroupId> {
    let groups: Vec<GroupId> = (0..cfg.layers).map(|_| sim.add_group(src).unwrap()).collect();
    let tx = WebrcSender::try_new(cfg.clone(), &groups, 1, Instant::ZERO, Instant::MAX).unwrap();
    sim.add_agent(src, None, Instant::ZERO, Box::new(tx)).unwrap();
    groups
}

fn webrc(sim: &Simulator, a: AgentId) -> &WebrcReceiver {
    sim.agent::<WebrcReceiver>(a).expect("a WEBRC receiver")
}

/// S –(bottleneck_bps, 20 ms)– R, 100 Mb/s elsewhere; one receiver of `cfg`.
fn line(seed: u64, cfg: WebrcConfig, bottleneck_bps: f64) -> (Simulator, AgentId) {
    let mut sim = Simulator::new(seed);
    let s = sim.add_node("S").unwrap();
    let r = sim.add_node("r").unwrap();
    let x = sim.add_node("R").unwrap();
    sim.add_link(s, r, &link(100e6, 0.005, 1000)).unwrap();
    sim.add_link(r, x, &link(bottleneck_bps, 0.020, 30)).unwrap();
    let groups = session(&mut sim, s, &cfg);
    let rx = WebrcReceiver::try_new(cfg, &groups, 1).unwrap();
    let a = sim.add_agent(x, None, secs(0.0), Box::new(rx)).unwrap();
    (sim, a)
}

#[test]
fn mrtt_through_the_engine_is_the_path_round_trip() {
    // No congestion (100 Mb/s, the receiver capped at 2 Mb/s): each join grafts up to the
    // sender's node, 25 ms away, and the data comes back: RTT 50 ms. ARTT starts from the base
    // channel's first packet (its wait for a 1 packet/s channel included) and then follows the
    // wave joins' MRTTs.
    let cfg = WebrcConfig { max_rate_bps: 2e6, ..WebrcConfig::default() };
    let (mut sim, a) = line(1, cfg, 100e6);
    sim.run(secs(200.0)).unwrap();
    let r = webrc(&sim, a);
    let rec = r.records();
    assert!(rec.mrtt.len() > 20, "{} MRTTs", rec.mrtt.len());
    let artt = r.artt().unwrap();
    println!("ARTT {artt:.4} s after {} MRTTs", rec.mrtt.len());
    assert!((0.035..0.075).contains(&artt), "ARTT {artt}");
    // The joins' own FirstTime - JoinTime is the RTT plus the wait for the wave's next packet.
    let fj: Vec<f64> = rec.mrtt_first_minus_join[1..].to_vec();
    assert!(fj.iter().all(|&x| x >= 0.049), "{fj:?}");
    assert_eq!(rec.lost, 0);
}

#[test]
fn a_receiver_behind_a_bottleneck_uses_it_without_overrunning_it() {
    // 2 Mb/s = 250 packets/s of 1000 B; WEBRC's waves reach 10 Mb/s. From 100 s to 300 s the
    // receiver's mean reception rate is below the bottleneck and above a quarter of it, and its
    // loss stays a small fraction (TFRC-like equation at the bottleneck's drops).
    let (mut sim, a) = line(2, WebrcConfig::default(), 2e6);
    sim.run(secs(100.0)).unwrap();
    let (b0, l0) = (webrc(&sim, a).records().received, webrc(&sim, a).records().lost);
    sim.run(secs(300.0)).unwrap();
    let rec = webrc(&sim, a).records();
    let rate = (rec.received - b0) as f64 / 200.0;
    let loss = (rec.lost - l0) as f64 / ((rec.received - b0) + (rec.lost - l0)) as f64;
    println!("rate {rate:.1} packets/s, loss {loss:.4}");
    assert!(rate > 62.5 && rate <= 250.0, "rate {rate} packets/s");
    assert!(loss < 0.05, "loss {loss}");
    assert!(!webrc(&sim, a).in_slow_start() && rec.loss_event_ns.len() > 3);
}
