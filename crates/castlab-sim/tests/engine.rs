//! Engine behaviour against hand computation and invariants.

use castlab_core::{Addr, AgentId, Dest, Duration, GroupId, Instant, NodeId};
use castlab_proto::{CbrSource, CbrStream, LayeredSink};
use castlab_sim::testext::LayerDropper;
use castlab_sim::{LinkConfig, QueueConfig, RedConfig, SimConfig, SimError, Simulator};

mod common;
use common::{link, secs};

fn cbr_to(dst: Dest, rate: f64, size: u32, start: f64, stop: f64, jitter: bool) -> Box<CbrSource> {
    Box::new(
        CbrSource::try_new(vec![CbrStream::new(dst, rate, 0)], size, 1, secs(start), secs(stop), jitter)
            .expect("valid source"),
    )
}

fn sink(sim: &Simulator, a: AgentId) -> &LayeredSink {
    sim.agent::<LayeredSink>(a).expect("a sink")
}

#[test]
fn single_packet_delay_is_serialisation_plus_propagation_per_hop() {
    let mut sim = Simulator::new(1);
    let a = sim.add_node("a").unwrap();
    let b = sim.add_node("b").unwrap();
    let c = sim.add_node("c").unwrap();
    sim.add_link(a, b, &link(10e6, 0.005, 10)).unwrap();
    sim.add_link(b, c, &link(1e6, 0.020, 10)).unwrap();
    let rx = sim.add_agent(c, Some(7), Instant::ZERO, Box::new(LayeredSink::recording(vec![], vec![]))).unwrap();
    // one packet at t = 0 (the stream stops before its second packet at 8 ms)
    sim.add_agent(a, None, Instant::ZERO, cbr_to(Dest::Unicast(Addr::new(c, 7)), 1e6, 1000, 0.0, 0.001, false))
        .unwrap();
    sim.run(secs(1.0)).unwrap();
    let r = &sink(&sim, rx).records;
    // 8000 bits: 0.8 ms at 10 Mb/s + 5 ms + 8 ms at 1 Mb/s + 20 ms = 33.8 ms
    assert_eq!(r.arr_time_ns, vec![33_800_000]);
}

#[test]
fn bottleneck_throughput_is_min_of_offered_and_capacity() {
    for offered in [0.4e6, 0.9e6, 1.5e6, 3.0e6] {
        let mut sim = Simulator::new(2);
        let s = sim.add_node("s").unwrap();
        let r1 = sim.add_node("r1").unwrap();
        let d = sim.add_node("d").unwrap();
        sim.add_link(s, r1, &link(100e6, 0.001, 1000)).unwrap();
        sim.add_link(r1, d, &link(1e6, 0.010, 20)).unwrap();
        let rx = sim.add_agent(d, Some(5), Instant::ZERO, Box::new(LayeredSink::recording(vec![], vec![]))).unwrap();
        sim.add_agent(s, None, Instant::ZERO, cbr_to(Dest::Unicast(Addr::new(d, 5)), offered, 1000, 0.0, 1e9, true))
            .unwrap();
        sim.run(secs(100.0)).unwrap();
        let rec = &sink(&sim, rx).records;
        let (t0, t1) = (10e9 as u64, 100e9 as u64);
        let bytes: u64 = rec
            .arr_time_ns
            .iter()
            .zip(&rec.arr_size)
            .filter(|(t, _)| (t0..t1).contains(*t))
            .map(|(_, s)| *s as u64)
            .sum();
        let thr = bytes as f64 * 8.0 / 90.0;
        let expect = offered.min(1e6);
        assert!((thr / expect - 1.0).abs() < 0.01, "offered {offered}: {thr} vs {expect}");
    }
}

/// Builds a scenario exercising every packet fate: queue drops (DropTail and RED), random
/// loss, multicast fan-out, joins and leaves, unicast to a port nobody listens on.
fn busy_scenario(seed: u64) -> (Simulator, Vec<AgentId>) {
    busy_scenario_with(seed, Duration::ZERO)
}

/// [`busy_scenario`] with phase randomisation of up to `overhead` at every sender.
fn busy_scenario_with(seed: u64, overhead: Duration) -> (Simulator, Vec<AgentId>) {
    let cfg = SimConfig { leave_latency: Duration::from_millis(300), phase_overhead: overhead, ..Default::default() };
    let mut sim = Simulator::with_config(seed, cfg).unwrap();
    let s = sim.add_node("s").unwrap();
    let r = sim.add_node("r").unwrap();
    let x = sim.add_node("x").unwrap();
    let y = sim.add_node("y").unwrap();
    sim.add_link(s, r, &link(1.5e6, 0.01, 20)).unwrap();
    let mut lc = LinkConfig::new(
        600e3,
        0.02,
        QueueConfig::Red(RedConfig { limit_pkts: 30, min_th: 3.0, max_th: 9.0, w_q: 0.02, ..Default::default() }),
    );
    lc.loss_ab = 0.01;
    sim.add_link(r, x, &lc).unwrap();
    sim.add_link(r, y, &link(1e6, 0.005, 10)).unwrap();
    let groups: Vec<GroupId> = (0..4).map(|_| sim.add_group(s).unwrap()).collect();
    let rates = [100e3, 200e3, 400e3, 800e3];
    sim.add_agent(
        s,
        None,
        Instant::ZERO,
        Box::new(
            CbrSource::try_layered(&groups, &rates, 1000, 3, Instant::ZERO, Instant::MAX, true).expect("valid source"),
        ),
    )
    .unwrap();
    let mut sinks = vec![];
    let sched_x = vec![(secs(1.0), 4), (secs(20.0), 2), (secs(30.0), 3), (secs(45.0), 1)];
    let sched_y = vec![(secs(2.0), 2), (secs(25.0), 4), (secs(35.0), 0), (secs(40.0), 3)];
    sinks.push(
        sim.add_agent(x, None, Instant::ZERO, Box::new(LayeredSink::recording(groups.clone(), sched_x))).unwrap(),
    );
    sinks.push(
        sim.add_agent(y, None, Instant::ZERO, Box::new(LayeredSink::recording(groups.clone(), sched_y))).unwrap(),
    );
    // unicast cross traffic y → x that starts and stops, and a stream to a port nobody binds
    sim.add_agent(y, None, Instant::ZERO, cbr_to(Dest::Unicast(Addr::new(x, 4242)), 300e3, 500, 5.0, 40.0, true))
        .unwrap();
    (sim, sinks)
}

#[test]
fn packets_are_conserved_per_link_and_overall() {
    let (mut sim, _) = busy_scenario(3);
    for stop in [7.3, 21.0, 33.3, 50.0] {
        sim.run(secs(stop)).unwrap();
        let c = sim.conservation();
        assert!(c.holds(), "at {stop}: {c:?}");
        assert!(c.queue_drops > 0 || stop < 10.0);
        for i in 0..sim.channel_count() {
            let ch = castlab_core::ChannelId(i as u32);
            let st = sim.channel_stats(ch).unwrap();
            let busy = (st.enqueued - st.departures) as usize - sim.queue_len(ch).unwrap();
            assert!(busy <= 1, "channel {i}: {st:?}");
            assert_eq!(st.arrivals, st.enqueued + st.drops(), "channel {i}");
            let in_flight = st.departures - st.lost_random - st.delivered;
            assert!(in_flight < 100, "channel {i}: {st:?}");
        }
    }
    let c = sim.conservation();
    assert!(c.lost_random > 0 && c.no_listener > 0 && c.mc_unwanted > 0 && c.delivered_local > 0, "{c:?}");
    let red = sim.channel_stats(sim.channel_between(NodeId(1), NodeId(2)).unwrap()).unwrap();
    assert!(red.drops_early > 0, "{red:?}");
}

fn fingerprint(sim: &Simulator, sinks: &[AgentId]) -> u64 {
    // FNV-1a over every record column of every sink and the link counters
    let mut h: u64 = 0xcbf29ce484222325;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    };
    for &a in sinks {
        let r = &sink(sim, a).records;
        r.arr_time_ns.iter().for_each(|&x| eat(x));
        r.arr_seq.iter().for_each(|&x| eat(x));
        r.arr_layer.iter().for_each(|&x| eat(x as u64));
        r.loss_time_ns.iter().for_each(|&x| eat(x));
        r.loss_count.iter().for_each(|&x| eat(x as u64));
    }
    for i in 0..sim.channel_count() {
        let st = sim.channel_stats(castlab_core::ChannelId(i as u32)).unwrap();
        eat(st.departures);
        eat(st.drops_early);
        eat(st.lost_random);
    }
    eat(sim.engine_stats().events);
    h
}

#[test]
fn same_seed_same_run_other_seed_differs() {
    let run = |seed| {
        let (mut sim, sinks) = busy_scenario(seed);
        sim.run(secs(50.0)).unwrap();
        fingerprint(&sim, &sinks)
    };
    let a = run(11);
    assert_eq!(a, run(11));
    assert_ne!(a, run(12));
    // running in pieces is the same run
    let (mut sim, sinks) = busy_scenario(11);
    for t in [0.5, 3.0, 17.25, 50.0] {
        sim.run(secs(t)).unwrap();
    }
    assert_eq!(a, fingerprint(&sim, &sinks));
}

/// s - n1 - n2 - n3 with delays 10, 20, 30 ms; fast links so serialisation is tiny.
fn chain(join_latency: f64, leave_latency: f64) -> (Simulator, GroupId, [NodeId; 4]) {
    let cfg = SimConfig {
        join_latency: Duration::from_secs_f64(join_latency),
        leave_latency: Duration::from_secs_f64(leave_latency),
        ..Default::default()
    };
    let mut sim = Simulator::with_config(5, cfg).unwrap();
    let n: Vec<NodeId> = ["s", "n1", "n2", "n3"].iter().map(|x| sim.add_node(x).unwrap()).collect();
    for (i, d) in [0.010, 0.020, 0.030].iter().enumerate() {
        sim.add_link(n[i], n[i + 1], &link(1e9, *d, 100)).unwrap();
    }
    let g = sim.add_group(n[0]).unwrap();
    // one 100-byte packet every ms (0.8 µs per hop to serialise)
    sim.add_agent(
        n[0],
        None,
        Instant::ZERO,
        Box::new(
            CbrSource::try_layered(&[g], &[800e3], 100, 1, Instant::ZERO, Instant::MAX, false).expect("valid source"),
        ),
    )
    .unwrap();
    (sim, g, [n[0], n[1], n[2], n[3]])
}

#[test]
fn join_and_leave_latencies_on_a_three_hop_tree() {
    let (jl, ll) = (0.1, 0.5);
    let (mut sim, g, n) = chain(jl, ll);
    let rx = sim
        .add_agent(
            n[3],
            None,
            Instant::ZERO,
            Box::new(LayeredSink::recording(vec![g], vec![(secs(1.0), 1), (secs(2.0), 0)])),
        )
        .unwrap();
    sim.run(secs(1.0 + jl + 0.0599)).unwrap();
    assert!(!sim.forwards(g, n[0], sim.channel_between(n[0], n[1]).unwrap()), "graft arrived early");
    sim.run(secs(1.0 + jl + 0.0601)).unwrap();
    assert!(sim.forwards(g, n[0], sim.channel_between(n[0], n[1]).unwrap()), "graft late");
    sim.run(secs(1.9999)).unwrap();
    let t = &sink(&sim, rx).records.arr_time_ns;
    let first = t[0] as f64 / 1e9;
    let tx = 3.0 * 0.8e-6;
    // graft reaches s at 1 + jl + 60 ms; the next packet (sent each whole ms) takes 60 ms + tx down
    let graft_done = 1.0 + jl + 0.060;
    assert!(
        first >= graft_done + 0.060 + tx - 1e-9 && first <= graft_done + 0.001 + 0.060 + tx + 1e-9,
        "first {first}"
    );
    // Leave at 2 s: n3 prunes at 2 + ll; the prune reaches n2 30 ms later, n1 20 ms after
    // that, s 10 ms after that. Step through each instant.
    let fwd = |sim: &Simulator, i: usize| sim.forwards(g, n[i], sim.channel_between(n[i], n[i + 1]).unwrap());
    let hops = [(2, 2.0 + ll + 0.030), (1, 2.0 + ll + 0.050), (0, 2.0 + ll + 0.060)];
    for (i, at) in hops {
        sim.run(secs(at - 1e-4)).unwrap();
        assert!(fwd(&sim, i), "node {i} pruned before {at}");
        sim.run(secs(at + 1e-4)).unwrap();
        assert!(!fwd(&sim, i), "node {i} still forwarding after {at}");
    }
    sim.run(secs(5.0)).unwrap();
    // Arriving at n3 unwanted after the leave: the 30 ms already on the n2→n3 wire, plus all
    // n2 forwarded until the prune reached it (ll + 30 ms); one packet per ms.
    let unwanted = sim.node_stats(n[3]).unwrap().mc_unwanted as f64;
    assert!((unwanted - (0.030 + ll + 0.030) * 1000.0).abs() <= 1.0, "{unwanted}");
    assert_eq!(sink(&sim, rx).records.arr_time_ns.iter().filter(|&&t| t >= 2_000_000_000).count(), 0);
}

#[test]
fn no_packet_goes_down_a_pruned_branch() {
    let mut sim =
        Simulator::with_config(6, SimConfig { leave_latency: Duration::from_millis(200), ..Default::default() })
            .unwrap();
    let s = sim.add_node("s").unwrap();
    let a = sim.add_node("a").unwrap();
    let b = sim.add_node("b").unwrap();
    let c = sim.add_node("c").unwrap();
    sim.add_link(s, a, &link(10e6, 0.01, 50)).unwrap();
    sim.add_link(a, b, &link(10e6, 0.01, 50)).unwrap();
    sim.add_link(a, c, &link(10e6, 0.01, 50)).unwrap();
    let g = sim.add_group(s).unwrap();
    sim.add_agent(
        s,
        None,
        Instant::ZERO,
        Box::new(
            CbrSource::try_layered(&[g], &[1e6], 1000, 1, Instant::ZERO, Instant::MAX, true).expect("valid source"),
        ),
    )
    .unwrap();
    let rb =
        sim.add_agent(b, None, Instant::ZERO, Box::new(LayeredSink::recording(vec![g], vec![(secs(0.5), 1)]))).unwrap();
    let rc = sim
        .add_agent(
            c,
            None,
            Instant::ZERO,
            Box::new(LayeredSink::recording(vec![g], vec![(secs(0.5), 1), (secs(5.0), 0)])),
        )
        .unwrap();
    let ac = sim.channel_between(a, c).unwrap();
    sim.run(secs(5.0 + 0.2 + 0.01 + 0.01)).unwrap();
    let after_prune = sim.channel_stats(ac).unwrap().departures;
    let rc_count = sink(&sim, rc).records.received();
    sim.run(secs(30.0)).unwrap();
    assert_eq!(sim.channel_stats(ac).unwrap().departures, after_prune, "packets went down the pruned branch");
    assert_eq!(sink(&sim, rc).records.received(), rc_count);
    // the other branch still flows, at the source rate
    let got_b = sink(&sim, rb).records.received();
    assert!((got_b as f64 / (29.5 * 125.0) - 1.0).abs() < 0.02, "{got_b}");
}

#[test]
fn router_extension_drops_one_layer_on_one_interface_and_sends_reports() {
    let mut sim = Simulator::new(8);
    let s = sim.add_node("s").unwrap();
    let a = sim.add_node("a").unwrap();
    let b = sim.add_node("b").unwrap();
    let c = sim.add_node("c").unwrap();
    for (x, y) in [(s, a), (a, b), (a, c)] {
        sim.add_link(x, y, &link(10e6, 0.005, 50)).unwrap();
    }
    let groups: Vec<GroupId> = (0..3).map(|_| sim.add_group(s).unwrap()).collect();
    sim.add_agent(
        s,
        None,
        Instant::ZERO,
        Box::new(
            CbrSource::try_layered(&groups, &[64e3, 128e3, 256e3], 500, 1, Instant::ZERO, Instant::MAX, true)
                .expect("valid source"),
        ),
    )
    .unwrap();
    let rb = sim
        .add_agent(b, None, Instant::ZERO, Box::new(LayeredSink::recording(groups.clone(), vec![(Instant::ZERO, 3)])))
        .unwrap();
    let rc = sim
        .add_agent(c, None, Instant::ZERO, Box::new(LayeredSink::recording(groups.clone(), vec![(Instant::ZERO, 3)])))
        .unwrap();
    let ac = sim.channel_between(a, c).unwrap();
    let as_ = sim.channel_between(a, s).unwrap();
    sim.attach_extension(a, Box::new(LayerDropper::new(ac, 1).with_reports(as_, Duration::from_secs(1)))).unwrap();
    assert!(matches!(
        sim.attach_extension(a, Box::new(LayerDropper::new(ac, 1))),
        Err(SimError::ExtensionPresent { .. })
    ));
    sim.run(secs(20.5)).unwrap();
    let lb = &sink(&sim, rb).records.arr_layer;
    let lc = &sink(&sim, rc).records.arr_layer;
    assert!(lb.contains(&1));
    assert!(!lc.contains(&1), "layer 1 reached c");
    assert!(lc.contains(&0) && lc.contains(&2));
    let d = sim.extension::<LayerDropper>(a).unwrap();
    assert_eq!(d.dropped, sim.channel_stats(ac).unwrap().ext_drops);
    let layer1_at_b = lb.iter().filter(|&&l| l == 1).count() as u64;
    assert!(d.dropped.abs_diff(layer1_at_b) <= 2, "{} vs {}", d.dropped, layer1_at_b);
    assert_eq!(d.reports_sent, 20);
    // the reports went to s on port 9, where nobody listens
    assert_eq!(sim.node_stats(s).unwrap().no_listener, 20);
    assert!(sim.conservation().holds());
}

#[test]
fn routing_follows_costs() {
    // a - b - d (cost 1+1) versus a - c - d with a cheap detour: costs decide the path
    for (cost_ab, via) in [(1u64, "b"), (5, "c")] {
        let mut sim = Simulator::new(1);
        let a = sim.add_node("a").unwrap();
        let b = sim.add_node("b").unwrap();
        let c = sim.add_node("c").unwrap();
        let d = sim.add_node("d").unwrap();
        let mut l = link(1e6, 0.001, 10);
        l.cost = cost_ab;
        sim.add_link(a, b, &l).unwrap();
        sim.add_link(b, d, &link(1e6, 0.001, 10)).unwrap();
        let mut l2 = link(1e6, 0.001, 10);
        l2.cost = 2;
        sim.add_link(a, c, &l2).unwrap();
        sim.add_link(c, d, &link(1e6, 0.001, 10)).unwrap();
        sim.add_agent(d, Some(1), Instant::ZERO, Box::new(LayeredSink::recording(vec![], vec![]))).unwrap();
        sim.add_agent(a, None, Instant::ZERO, cbr_to(Dest::Unicast(Addr::new(d, 1)), 1e5, 100, 0.0, 1.0, false))
            .unwrap();
        sim.run(secs(2.0)).unwrap();
        let mid = sim.node_named("via", via).unwrap();
        let used = sim.channel_stats(sim.channel_between(mid, d).unwrap()).unwrap().departures;
        assert_eq!(used, 125, "expected the path through {via}");
    }
}

#[test]
fn bad_input_is_an_error_naming_the_field() {
    let mut sim = Simulator::new(1);
    let a = sim.add_node("a").unwrap();
    let b = sim.add_node("b").unwrap();
    fn field<T>(r: Result<T, SimError>) -> Option<&'static str> {
        r.err().map(|e| e.field())
    }
    assert_eq!(field(sim.add_node("a")), Some("name"));
    assert_eq!(field(sim.add_link(a, NodeId(9), &link(1e6, 0.0, 1))), Some("b"));
    assert_eq!(field(sim.add_link(a, b, &link(0.0, 0.0, 1))), Some("rate_bps"));
    assert_eq!(field(sim.add_link(a, b, &link(-5.0, 0.0, 1))), Some("rate_bps"));
    assert_eq!(field(sim.add_link(a, b, &link(f64::NAN, 0.0, 1))), Some("rate_bps"));
    assert_eq!(field(sim.add_link(a, b, &link(1e6, -1.0, 1))), Some("delay"));
    let mut l = link(1e6, 0.0, 1);
    l.loss_ba = 1.5;
    assert_eq!(field(sim.add_link(a, b, &l)), Some("loss_ba"));
    let red =
        LinkConfig::new(1e6, 0.0, QueueConfig::Red(RedConfig { min_th: 10.0, max_th: 5.0, ..Default::default() }));
    assert_eq!(field(sim.add_link(a, b, &red)), Some("max_th"));
    assert_eq!(field(sim.add_group(NodeId(7))), Some("source"));
    assert_eq!(field(sim.check_group("groups", GroupId(0))), Some("groups"));
    assert_eq!(field(sim.node_named("node", "zz")), Some("node"));
    sim.add_link(a, b, &link(1e6, 0.0, 1)).unwrap();
    sim.add_agent(a, Some(5), Instant::ZERO, Box::new(LayeredSink::recording(vec![], vec![]))).unwrap();
    assert_eq!(
        field(sim.add_agent(a, Some(5), Instant::ZERO, Box::new(LayeredSink::recording(vec![], vec![])))),
        Some("port")
    );
    sim.run(secs(10.0)).unwrap();
    assert_eq!(
        field(sim.add_agent(a, None, secs(3.0), Box::new(LayeredSink::recording(vec![], vec![])))),
        Some("start")
    );
    assert_eq!(field(sim.check_start("start", 3.0)), Some("start"));
    assert_eq!(field(sim.run(secs(5.0))), Some("until"));
    assert_eq!(field(sim.add_node("late")), Some("node"));
    // and the simulation is intact after the errors
    sim.run(secs(11.0)).unwrap();
    assert!(sim.conservation().holds());
}

#[test]
fn a_member_sending_to_the_group_reaches_every_member_via_the_root() {
    let mut sim = Simulator::new(9);
    let s = sim.add_node("s").unwrap();
    let a = sim.add_node("a").unwrap();
    let b = sim.add_node("b").unwrap();
    let c = sim.add_node("c").unwrap();
    sim.add_link(s, a, &link(1e9, 0.010, 50)).unwrap();
    sim.add_link(a, b, &link(1e9, 0.020, 50)).unwrap();
    sim.add_link(a, c, &link(1e9, 0.040, 50)).unwrap();
    let g = sim.add_group(s).unwrap();
    let rb = sim
        .add_agent(b, None, Instant::ZERO, Box::new(LayeredSink::recording(vec![g], vec![(Instant::ZERO, 1)])))
        .unwrap();
    let rc = sim
        .add_agent(c, None, Instant::ZERO, Box::new(LayeredSink::recording(vec![g], vec![(Instant::ZERO, 1)])))
        .unwrap();
    // b sends one 125-byte packet at t = 1 s (1 µs per hop to serialise)
    sim.add_agent(b, None, secs(1.0), cbr_to(Dest::Group(g), 1e3, 125, 1.0, 1.5, false)).unwrap();
    sim.run(secs(3.0)).unwrap();
    // up b→a→s (20 + 10 ms), down s→a→c (10 + 40 ms) and s→a→b (10 + 20 ms); 1 µs per hop
    assert_eq!(sink(&sim, rc).records.arr_time_ns, vec![1_000_000_000 + 80_000_000 + 4_000]);
    assert_eq!(sink(&sim, rb).records.arr_time_ns, vec![1_000_000_000 + 60_000_000 + 4_000]);
    assert!(sim.conservation().holds());
}

/// The fingerprint of `busy_scenario(11)` run for 50 s, taken with the engine as it was before
/// phase randomisation existed: with it off, a run must not change by a byte.
const BUSY_11_BEFORE_PHASE: u64 = 12580318498038028972;

#[test]
fn phase_randomisation_off_leaves_the_run_as_it_was() {
    let (mut sim, sinks) = busy_scenario(11);
    sim.run(secs(50.0)).unwrap();
    assert_eq!(fingerprint(&sim, &sinks), BUSY_11_BEFORE_PHASE);
    assert_eq!(sim.conservation().in_sender, 0);
}

#[test]
fn phase_randomisation_same_seed_same_run_and_it_changes_the_run() {
    let ms = Duration::from_millis(2);
    let run = |seed, overhead| {
        let (mut sim, sinks) = busy_scenario_with(seed, overhead);
        let mut waiting = 0;
        for t in [7.3, 21.0, 33.3, 50.0] {
            sim.run(secs(t)).unwrap();
            let c = sim.conservation();
            assert!(c.holds(), "at {t}: {c:?}");
            waiting += c.in_sender;
        }
        (fingerprint(&sim, &sinks), waiting)
    };
    let (a, waiting) = run(11, ms);
    assert_eq!(a, run(11, ms).0);
    assert_ne!(a, run(12, ms).0);
    assert_ne!(a, run(11, Duration::ZERO).0);
    assert_ne!(a, run(11, Duration::from_millis(1)).0);
    // packets do wait at their senders (and are counted while they do)
    assert!(waiting > 0);
}

/// One sender, one receiver, 1000-byte packets every 16 ms over 10 Mb/s + 1 Mb/s hops: each
/// packet arrives 33.8 ms after it was sent plus its random wait at the sender, the waits
/// spread over [0, overhead], and the packets arrive in the order they were sent.
#[test]
fn phase_randomisation_delays_each_packet_by_at_most_the_overhead_in_order() {
    let overhead = Duration::from_millis(3);
    let mut sim = Simulator::with_config(4, SimConfig { phase_overhead: overhead, ..Default::default() }).unwrap();
    let a = sim.add_node("a").unwrap();
    let b = sim.add_node("b").unwrap();
    let c = sim.add_node("c").unwrap();
    sim.add_link(a, b, &link(10e6, 0.005, 10)).unwrap();
    sim.add_link(b, c, &link(1e6, 0.020, 10)).unwrap();
    let rx = sim.add_agent(c, Some(7), Instant::ZERO, Box::new(LayeredSink::recording(vec![], vec![]))).unwrap();
    sim.add_agent(a, None, Instant::ZERO, cbr_to(Dest::Unicast(Addr::new(c, 7)), 0.5e6, 1000, 0.0, 8.0, false))
        .unwrap();
    sim.run(secs(9.0)).unwrap();
    let r = &sink(&sim, rx).records;
    assert_eq!(r.arr_time_ns.len(), 500);
    let mut waits = vec![];
    for (k, (&t, &seq)) in r.arr_time_ns.iter().zip(&r.arr_seq).enumerate() {
        assert_eq!(seq, k as u64, "packet {k} out of order");
        // sent at k * 16 ms; 33.8 ms through the network (the 1 Mb/s hop is free when a packet
        // comes: a packet takes 8 ms on it and the next leaves its sender at least 13 ms later)
        let wait = t as i64 - (k as i64 * 16_000_000 + 33_800_000);
        assert!((0..=overhead.as_nanos() as i64).contains(&wait), "packet {k}: waited {wait} ns");
        waits.push(wait as f64 / overhead.as_nanos() as f64);
    }
    let mean = waits.iter().sum::<f64>() / waits.len() as f64;
    assert!((mean - 0.5).abs() < 0.05, "mean wait {mean} of the overhead");
    assert!(waits.iter().any(|&w| w < 0.1) && waits.iter().any(|&w| w > 0.9));
}
