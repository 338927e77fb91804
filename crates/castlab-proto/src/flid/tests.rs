//! FLID-DL driven through the shared harness against values computed by hand.

use super::*;
use crate::testing::{Driver, Link, Pair};
use castlab_core::{Addr, Agent, AgentEvent, ControlMsg, Dest, Header, Instant, NodeId, Packet, Rng, StartInfo};

fn groups(n: u32) -> Vec<GroupId> {
    (0..n).map(|m| GroupId(40 + m)).collect()
}
fn info(node: u32) -> StartInfo {
    StartInfo { addr: Addr::new(NodeId(node), 1), rng: Rng::seed_from_u64(node as u64) }
}
fn ms(x: u64) -> Instant {
    Instant::from_nanos(x * 1_000_000)
}
/// 6 groups, 2 quiescent: levels 1..4, dynamic groups 1..5 (D = 5).
fn cfg6() -> FlidConfig {
    FlidConfig { layers: 6, quiescent_slots: 2, ..FlidConfig::default() }
}

fn run_sender(cfg: FlidConfig, until: Instant) -> (Vec<Packet>, FlidSender) {
    let n = cfg.layers;
    let s = FlidSender::try_new(cfg, &groups(n), 7, Instant::ZERO, until).unwrap();
    let mut d = Driver::start_with(s, Instant::ZERO, info(1));
    while let Some(t) = d.agent.poll_timeout() {
        d.advance_to(t);
    }
    assert!(d.sent.iter().all(|(t, p)| p.sent_at <= *t), "packet released before its time");
    (d.sent.into_iter().map(|(_, p)| p).collect(), d.agent)
}

fn args(p: &Packet) -> [u64; 3] {
    match p.header {
        Header::Control(ControlMsg { kind: FLID_DATA_KIND, args }) => args,
        _ => panic!("not a FLID-DL packet"),
    }
}
fn group_of_packet(p: &Packet) -> u32 {
    match p.dst {
        Dest::Group(g) => g.0 - 40,
        _ => panic!("not multicast"),
    }
}

/// A data packet of `layer` on group index `g` in slot `slot` with signal `signal`.
fn pkt(g: u32, layer: u8, seq: u64, slot: u64, signal: u64) -> Packet {
    let mut p = Packet::data(Dest::Group(GroupId(40 + g)), 512);
    p.flow = 7;
    p.layer = layer;
    p.seq = seq;
    p.header = Header::Control(ControlMsg { kind: FLID_DATA_KIND, args: [slot, signal, 0] });
    p
}

fn rx(cfg: FlidConfig) -> Driver<FlidReceiver> {
    let n = cfg.layers;
    Driver::start_with(FlidReceiver::try_new(cfg, &groups(n), 7).unwrap(), Instant::ZERO, info(2))
}

fn feed(r: &mut Driver<FlidReceiver>, t: Instant, p: Packet) -> Vec<AgentEvent> {
    let k = r.events.len();
    r.packet(t, &p);
    r.events[k..].iter().map(|(_, e)| *e).collect()
}

#[test]
fn defaults_and_level_rates_follow_the_factor() {
    let c = FlidConfig::default();
    assert_eq!(c.factor, 1.3);
    assert_eq!(c.slot, Duration::from_millis(500));
    assert!(c.validate().is_ok());
    assert_eq!(c.levels(), 18);
    // R_L = 64k·1.3^(L-1): level 1 64 kb/s, level 2 83.2 kb/s, level 3 108.16 kb/s.
    assert!((c.level_rate_bps(1) - 64_000.0).abs() < 1e-6);
    assert!((c.level_rate_bps(2) - 83_200.0).abs() < 1e-6);
    assert!((c.level_rate_bps(3) - 108_160.0).abs() < 1e-6);
    // Layer 1 alone: 83.2k - 64k = 19.2 kb/s; layer 2 alone: 24.96 kb/s.
    assert!((c.layer_rate_bps(1) - 19_200.0).abs() < 1e-6);
    assert!((c.layer_rate_bps(2) - 24_960.0).abs() < 1e-6);
}

#[test]
fn increase_probability_matches_tcp_additive_increase_at_the_reference_rtt() {
    let c = FlidConfig::default();
    // 8·512·0.5 / 0.1² = 204 800 b/s gained per slot in expectation.
    // 1.3^9 = 10.604499, 1.3^11 = 17.921603, 1.3^16 = 66.541828.
    // Level 10: R_11 - R_10 = 64k·1.3^9·0.3 = 203 606.4 b/s: p = 1.00586 → 1.
    assert_eq!(c.increase_probability(10), 1.0);
    // Level 11: 64k·1.3^10·0.3 = 264 688.3 b/s: p = 204800/264688.3 = 0.773740.
    assert!((c.increase_probability(11) - 0.773740).abs() < 1e-5, "{}", c.increase_probability(11));
    // Level 12: 64k·1.3^11·0.3 = 344 094.8 b/s: p = 0.595185.
    assert!((c.increase_probability(12) - 0.595185).abs() < 1e-5, "{}", c.increase_probability(12));
    // Level 17: 64k·1.3^16·0.3 = 1 277 599.9 b/s: p = 0.160301.
    assert!((c.increase_probability(17) - 0.160301).abs() < 1e-5, "{}", c.increase_probability(17));
    // The top level (18) cannot increase.
    assert_eq!(c.increase_probability(18), 0.0);
}

#[test]
fn bad_config_names_the_field() {
    let e = FlidConfig { factor: 1.0, ..FlidConfig::default() }.validate().unwrap_err();
    assert_eq!(e.field, "factor");
    let e = FlidConfig { layers: 2, ..FlidConfig::default() }.validate().unwrap_err();
    assert_eq!(e.field, "layers");
    let e = FlidConfig { layers: 6, quiescent_slots: 5, ..FlidConfig::default() }.validate().unwrap_err();
    assert_eq!(e.field, "quiescent_slots");
    let e = FlidConfig { slot: Duration::from_millis(10), ..FlidConfig::default() }.validate().unwrap_err();
    assert_eq!(e.field, "slot");
    let e = FlidReceiver::try_new(FlidConfig::default(), &groups(3), 7).unwrap_err();
    assert_eq!(e.field, "groups");
}

#[test]
fn groups_rotate_one_layer_down_per_slot_and_rest_quiescent() {
    let c = cfg6();
    // N = 4, D = 5. Slot 0: top layer 3 on dynamic 0 (group 1), layer 2 on group 5, layer 1
    // on group 4; groups 2 and 3 rest.
    assert_eq!((c.group_of(0, 0), c.group_of(3, 0), c.group_of(2, 0), c.group_of(1, 0)), (0, 1, 5, 4));
    // Slot 1: group 1 moved down to layer 2, the new top is on group 2.
    assert_eq!((c.group_of(3, 1), c.group_of(2, 1), c.group_of(1, 1)), (2, 1, 5));
    // Each dynamic group: top, then down one per slot, then 2 quiet slots, period D = 5.
    let roles: Vec<Option<u32>> = (0..10u64).map(|k| (1..4).find(|&l| c.group_of(l, k) == 1)).collect();
    assert_eq!(roles, vec![Some(3), Some(2), Some(1), None, None, Some(3), Some(2), Some(1), None, None]);
}

#[test]
fn sender_sends_each_layer_at_its_rate_on_the_group_of_the_slot() {
    let c = cfg6();
    let (pkts, s) = run_sender(c.clone(), ms(20_000));
    for level in 1..=4u32 {
        let bytes: u64 = pkts.iter().filter(|p| (p.layer as u32) < level).map(|p| p.size_bytes as u64).sum();
        let rate = bytes as f64 * 8.0 / 20.0;
        let want = 64_000.0 * 1.3f64.powi(level as i32 - 1);
        assert!((rate - want).abs() <= level as f64 * 512.0 * 8.0 / 20.0, "level {level}: {rate} vs {want}");
    }
    for p in &pkts {
        let [k, _, _] = args(p);
        assert_eq!(k, p.sent_at.as_nanos() / 500_000_000, "slot number");
        assert_eq!(group_of_packet(p) as usize, c.group_of(p.layer as u32, k));
    }
    // Per-group sequence numbers are 0, 1, 2, ... on every group.
    for g in 0..6u32 {
        let seqs: Vec<u64> = pkts.iter().filter(|p| group_of_packet(p) == g).map(|p| p.seq).collect();
        assert!(seqs.iter().enumerate().all(|(i, &s)| s == i as u64), "group {g}");
    }
    assert_eq!(s.slots, 40);
}

#[test]
fn each_group_rate_decreases_over_its_active_period() {
    let c = cfg6();
    let (pkts, _) = run_sender(c, ms(10_000));
    // Group 1's packets per slot over slots 5..8 (top, then layers 2, 1, quiet): 24.96k·1.3 =
    // 32.448 kb/s = 3.96 packets per slot, then 24.96k (3.05), 19.2k (2.34), 0.
    let per_slot: Vec<usize> =
        (5..9u64).map(|k| pkts.iter().filter(|p| group_of_packet(p) == 1 && args(p)[0] == k).count()).collect();
    assert!(per_slot[0] >= per_slot[1] && per_slot[1] >= per_slot[2] && per_slot[2] > 0, "{per_slot:?}");
    assert_eq!(per_slot[3], 0);
    assert!((3..=5).contains(&per_slot[0]) && (1..=3).contains(&per_slot[2]), "{per_slot:?}");
}

#[test]
fn signals_are_nested_and_follow_the_probabilities() {
    // Levels up to 9 have p = 1, so every slot signals at least level 9; above, the share of
    // slots whose signal reaches level L is p_L.
    let c = FlidConfig::default();
    let (pkts, s) = run_sender(c.clone(), ms(2_000_000));
    assert!(pkts.iter().all(|p| args(p)[1] >= 9));
    let slots = s.slots as f64;
    for level in [12u32, 15, 17] {
        let reach: u64 = s.signals[level as usize - 1..].iter().sum();
        let share = reach as f64 / slots;
        let p = c.increase_probability(level);
        // 4000 slots: binomial standard error ≤ 0.008; 4 of them.
        assert!((share - p).abs() < 0.032, "level {level}: {share} vs {p}");
    }
    // Every packet of a slot carries the same signal.
    let mut by_slot = std::collections::BTreeMap::new();
    for p in &pkts {
        let [k, m, _] = args(p);
        assert_eq!(*by_slot.entry(k).or_insert(m), m, "slot {k}");
    }
}

#[test]
fn receiver_keeps_its_level_by_joining_one_group_per_slot() {
    let c = cfg6();
    let mut r = rx(c);
    // Slot 0 on the base layer, no signal: the first packet opens the slot.
    assert!(feed(&mut r, ms(0), pkt(0, 0, 0, 0, 0)).is_empty());
    // Slot 1, signal for level 1 in slot 0? No (0): stays at 1, no group joined.
    assert!(feed(&mut r, ms(500), pkt(0, 0, 1, 1, 1)).is_empty());
    // Slot 1 carried signal 1: at the boundary into slot 2 join layer 1 (group of layer 1 in
    // slot 2: dynamic (2 - 2) mod 5 = 0 → group 1).
    let ev = feed(&mut r, ms(1000), pkt(0, 0, 2, 2, 0));
    assert_eq!(ev, vec![AgentEvent::Join(GroupId(41)), AgentEvent::LevelChanged { level: 2 }]);
    // Level 2 in slot 3 with no signal and no loss: keep it: the layer-1 group of slot 3 is
    // group 2, joined; group 1 went quiet and is left (events in group order).
    feed(&mut r, ms(1100), pkt(1, 1, 0, 2, 0));
    let ev = feed(&mut r, ms(1500), pkt(0, 0, 3, 3, 0));
    assert_eq!(ev, vec![AgentEvent::Leave(GroupId(41)), AgentEvent::Join(GroupId(42))]);
    assert_eq!(r.agent.level(), 2);
    assert_eq!(r.agent.records().increases, vec![ms(1000)]);
}

#[test]
fn receiver_adds_a_layer_only_on_a_signal_for_its_level_and_no_loss() {
    let c = cfg6();
    let mut r = rx(c);
    feed(&mut r, ms(0), pkt(0, 0, 0, 0, 1));
    feed(&mut r, ms(500), pkt(0, 0, 1, 1, 1));
    assert_eq!(r.agent.level(), 2);
    // Slot 1 signals level 1 only: a receiver at level 2 keeps its level.
    feed(&mut r, ms(1000), pkt(0, 0, 2, 2, 2));
    assert_eq!(r.agent.level(), 2);
    // Slot 2 signals level 2, but a packet is lost on the base layer (seq 3 missing).
    feed(&mut r, ms(1200), pkt(0, 0, 4, 2, 2));
    feed(&mut r, ms(1500), pkt(0, 0, 5, 3, 3));
    assert_eq!(r.agent.level(), 1, "a loss in the slot lets a layer fall, signal or not");
    assert_eq!(r.agent.records().lost[0], 1);
    // Slot 3 signals level 3, clean: level 1 → 2 (one layer per slot).
    let ev = feed(&mut r, ms(2000), pkt(0, 0, 6, 4, 0));
    assert_eq!(*ev.last().unwrap(), AgentEvent::LevelChanged { level: 2 });
    assert_eq!(r.agent.records().loss_slots, 1);
}

#[test]
fn a_loss_lowers_the_level_at_the_boundary_without_a_leave_of_a_carrying_group() {
    let c = cfg6();
    let mut r = rx(c.clone());
    // Climb to level 4 (the top) with signal 3 in every slot.
    let mut seq = 0;
    let mut k = 0;
    while r.agent.level() < 4 {
        feed(&mut r, ms(500 * k), pkt(0, 0, seq, k, 3));
        seq += 1;
        k += 1;
    }
    assert_eq!(k, 4);
    let held: Vec<usize> = (0..6).filter(|&g| r.agent.holds(g)).collect();
    let expect: Vec<usize> =
        (0..4).map(|l| c.group_of(l, 3)).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    assert_eq!(held, expect, "level 4 in slot 3 holds the groups of layers 0..3");
    // Slot 4 opens on the base layer (level 4 kept: the signal 3 does not cover it; the
    // top group of slot 4 is joined), then a loss on the top layer's group.
    feed(&mut r, ms(2000), pkt(0, 0, seq, 4, 3));
    seq += 1;
    assert_eq!(r.agent.level(), 4);
    let top = c.group_of(3, 4) as u32;
    assert!(r.agent.holds(top as usize));
    feed(&mut r, ms(2010), pkt(top, 3, 0, 4, 3));
    feed(&mut r, ms(2020), pkt(top, 3, 2, 4, 3));
    let ev = feed(&mut r, ms(2500), pkt(0, 0, seq, 5, 3));
    // Level 3 in slot 5: layers 1 and 2 are on the groups that carried 2 and 3 in slot 4 (no
    // join); only the group that went quiet is left, and it carries nothing.
    assert_eq!(
        ev,
        vec![AgentEvent::Leave(GroupId(40 + c.group_of(1, 4) as u32)), AgentEvent::LevelChanged { level: 3 }]
    );
    assert!((1..3).all(|l| (1..4).any(|m| c.group_of(l, 5) == c.group_of(m, 4))));
    assert_eq!(r.agent.records().decreases, vec![ms(2500)]);
}

#[test]
fn packets_of_groups_not_held_and_foreign_flows_are_ignored() {
    let mut r = rx(cfg6());
    feed(&mut r, ms(0), pkt(0, 0, 0, 0, 0));
    // A packet on a group the receiver does not hold: not counted, no slot change.
    assert!(feed(&mut r, ms(600), pkt(3, 2, 9, 1, 3)).is_empty());
    let mut other = pkt(0, 0, 5, 7, 3);
    other.flow = 8;
    assert!(feed(&mut r, ms(700), other).is_empty());
    assert_eq!(r.agent.records().received[0], 1);
    assert_eq!(r.agent.records().slots, 0);
    // A slot number far ahead (a sender restarted, a corrupt packet): bounded work, level 1.
    feed(&mut r, ms(800), pkt(0, 0, 1, u64::MAX / 2, 0));
    assert_eq!(r.agent.level(), 1);
}

#[test]
fn a_lossy_top_layer_makes_the_receiver_alternate_between_the_two_top_levels() {
    // 6 groups: levels 64k, 83.2k, 108.16k, 140.6k. Every second packet of layer 3 is lost.
    // At a 20 ms reference RTT every p_L is 1 (8·512·0.5/0.02² = 5.12 Mb/s per slot), so a
    // clean slot always raises the level: level 3 → 4 (clean slot), then the slot at level 4
    // loses → 3, and so on, one slot each. The Pair's link delivers every group (no
    // membership), so the loss is seen only while the receiver holds layer 3's group.
    let c = FlidConfig { reference_rtt: Duration::from_millis(20), ..cfg6() };
    let n = c.layers;
    let tx = FlidSender::try_new(c.clone(), &groups(n), 7, Instant::ZERO, Instant::MAX).unwrap();
    let rcv = FlidReceiver::try_new(c.clone(), &groups(n), 7).unwrap();
    let mut odd = false;
    let lossy = Link::delay(Duration::from_millis(20)).loss(move |p: &Packet| {
        if p.layer == 3 {
            odd = !odd;
            odd
        } else {
            false
        }
    });
    let mut pair = Pair::start(tx, info(1), rcv, info(2), lossy, Link::delay(Duration::from_millis(20)));
    pair.run_until(ms(30_000));
    let rec = pair.b.agent.records();
    // Start: level 1 at 0; slot 0 opens, levels 2, 3, 4 at the boundaries into slots 1-3.
    let after: Vec<u32> = rec.levels.iter().filter(|(t, _)| *t > ms(2_000)).map(|l| l.1).collect();
    assert!(after.len() > 40, "{}", after.len());
    assert!(after.windows(2).all(|w| (w[0], w[1]) == (4, 3) || (w[0], w[1]) == (3, 4)), "{after:?}");
    // A slot at level 3 is clean (layer 3's group is not held) and every signal covers it:
    // each level-3 period lasts exactly one slot. Changes happen at the first packet of a
    // slot (sent within 64 ms of its start, received 20 ms later). A slot at level 4 ends in a
    // decrease when a gap is seen inside it: not always, since a gap whose packets straddle a
    // boundary decides nothing (4 layer-3 packets per slot, half of them lost).
    let slot_of = |t: Instant| (t.as_nanos() - 20_000_000) / 500_000_000;
    let late: Vec<(Instant, u32)> = rec.levels.iter().copied().filter(|(t, _)| *t > ms(2_000)).collect();
    for w in late.windows(2) {
        if w[0].1 == 3 {
            assert_eq!(slot_of(w[1].0), slot_of(w[0].0) + 1, "{late:?}");
        }
    }
    let at4: u64 = late.windows(2).filter(|w| w[0].1 == 4).map(|w| slot_of(w[1].0) - slot_of(w[0].0)).sum();
    assert!(at4 >= 20, "{at4} slots at level 4");
    assert_eq!(rec.loss_slots as usize, rec.decreases.len());
}

#[test]
fn on_a_clean_link_the_receiver_climbs_one_level_per_slot_to_the_top_and_stays() {
    let c = FlidConfig { reference_rtt: Duration::from_millis(20), ..cfg6() };
    let n = c.layers;
    let tx = FlidSender::try_new(c.clone(), &groups(n), 7, Instant::ZERO, Instant::MAX).unwrap();
    let rcv = FlidReceiver::try_new(c, &groups(n), 7).unwrap();
    let d = || Link::delay(Duration::from_millis(20));
    let mut pair = Pair::start(tx, info(1), rcv, info(2), d(), d());
    pair.run_until(ms(30_000));
    let rec = pair.b.agent.records();
    // Levels 2, 3, 4 at the first packets of slots 1, 2, 3 on groups held: the base layer's
    // (one every 64 ms: 512, 1024, 1536 ms; the dynamic layers held send later in each of
    // those slots), plus the 20 ms delay.
    let want = vec![(ms(0), 1), (ms(532), 2), (ms(1044), 3), (ms(1556), 4)];
    assert_eq!(rec.levels, want);
    assert_eq!(rec.loss_slots, 0);
    assert_eq!(pair.b.agent.level(), 4);
}
