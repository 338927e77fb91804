//! Batched link events and shared fan-out slots give the same run as one event and one slot
//! per copy: the engine's observable state after a run, compared field by field.

use castlab_core::{Duration, GroupId, Instant, NodeId};
use castlab_proto::rlm::{RlmConfig, RlmReceiver};
use castlab_proto::{CbrSource, CbrStream, LayeredSink};

use super::link::OPEN_LINKS;
use super::{ChannelId, Simulator};
use crate::testext::LayerDropper;
use crate::{LinkConfig, QueueConfig, RedConfig};

fn dt(limit: usize) -> QueueConfig {
    QueueConfig::DropTail { limit_pkts: limit }
}

/// A tree with every case a batch or a shared slot meets: receivers on links of equal and of
/// different rates and delays (batches of several sizes, split by rate; arrivals of one batch
/// at several times), Bernoulli loss on
/// some (lost members), RED marking and dropping queues (no sharing there), a receiver node
/// with a downstream branch and an extension (unshared on arrival), RLM receivers that join,
/// leave and announce to the group (grafts, prunes, packets up to the root), sinks joining
/// late, and unicast CBR across the tree (links busy when a fan-out comes).
fn scenario(seed: u64, coalesce: bool) -> Simulator {
    let mut sim = Simulator::new(seed);
    sim.coalesce = coalesce;
    let s = sim.add_node("S").unwrap();
    let r1 = sim.add_node("R1").unwrap();
    let r2 = sim.add_node("R2").unwrap();
    sim.add_link(s, r1, &LinkConfig::new(10e6, 0.010, dt(20))).unwrap();
    sim.add_link(r1, r2, &LinkConfig::new(1.5e6, 0.010, dt(20))).unwrap();
    let groups: Vec<GroupId> = (0..4).map(|_| sim.add_group(s).unwrap()).collect();
    let control = sim.add_group(s).unwrap();
    let rates = [64e3, 128e3, 256e3, 512e3];
    let src = CbrSource::try_layered(&groups, &rates, 1000, 1, Instant::ZERO, Instant::MAX, true).unwrap();
    sim.add_agent(s, None, Instant::ZERO, Box::new(src)).unwrap();
    let red = RedConfig { mark: true, ..RedConfig::default() };
    let mut leaves: Vec<NodeId> = Vec::new();
    for i in 0..40 {
        let x = sim.add_node(&format!("X{i}")).unwrap();
        let (rate, delay) = match (i % 7, i % 9) {
            (_, 4 | 5) => (300e3, 0.010), // RED queues that fill
            (3, _) => (2e6, 0.005),
            // one rate, three delays: a batch of departures whose arrivals are not in order
            _ => (10e6, 0.010 + 0.001 * (i % 3) as f64),
        };
        let q = match i % 9 {
            4 => QueueConfig::Red(red.clone()),
            5 => QueueConfig::Red(RedConfig::default()),
            _ => dt(20),
        };
        let mut l = LinkConfig::new(rate, delay, q);
        if i % 5 == 1 {
            l.loss_ab = 0.02;
        }
        sim.add_link(r2, x, &l).unwrap();
        leaves.push(x);
        if i % 4 == 0 {
            let cfg = RlmConfig::default();
            let rx = RlmReceiver::try_new(cfg, groups.clone(), control).unwrap();
            sim.add_agent(x, None, Instant::from_secs_f64(1.0 + 0.3 * i as f64), Box::new(rx)).unwrap();
        } else {
            let start = Instant::from_secs_f64(0.1 * (i % 6) as f64);
            let sink =
                LayeredSink::new(groups.clone(), vec![(start, 1 + (i % 4) as u32), (Instant::from_secs_f64(20.0), 2)]);
            sim.add_agent(x, None, Instant::ZERO, Box::new(sink)).unwrap();
        }
    }
    // a receiver with a branch below it and an extension that drops layer 3 there
    let y = sim.add_node("Y").unwrap();
    let (down, _) = sim.add_link(leaves[2], y, &LinkConfig::new(10e6, 0.010, dt(20))).unwrap();
    sim.add_agent(y, None, Instant::ZERO, Box::new(LayeredSink::new(groups.clone(), vec![(Instant::ZERO, 4)])))
        .unwrap();
    sim.attach_extension(leaves[2], Box::new(LayerDropper::new(down, 3))).unwrap();
    // unicast traffic from S to two leaves, sharing their links with the fan-out
    for &x in &leaves[..2] {
        let dst = castlab_core::Dest::Unicast(castlab_core::Addr::new(x, 9));
        sim.add_agent(x, Some(9), Instant::ZERO, Box::new(LayeredSink::new(vec![], vec![]))).unwrap();
        let st = CbrStream::new(dst, 200e3, 0);
        let src = CbrSource::try_new(vec![st], 600, 7, Instant::ZERO, Instant::MAX, true).unwrap();
        sim.add_agent(s, None, Instant::ZERO, Box::new(src)).unwrap();
    }
    for ch in 0..4 {
        sim.monitor_channel(ChannelId(ch), Duration::from_millis(100)).unwrap();
    }
    sim
}

/// Everything a run exposes, printed.
fn fingerprint(sim: &Simulator) -> String {
    let mut out = format!("{:?}\n{:?}\n{:?}\n", sim.engine_stats(), sim.conservation(), sim.timelines());
    for c in 0..sim.channel_count() {
        let ch = ChannelId(c as u32);
        out +=
            &format!("{:?} {:?} {:?}\n", sim.channel_stats(ch), sim.queue_len(ch), sim.queue_avg(ch).map(f64::to_bits));
        if let Some(s) = sim.channel_series(ch) {
            out += &format!("{:?}\n", (&s.time_ns, &s.qlen, &s.bytes, &s.drops));
        }
    }
    for n in 0..sim.node_count() {
        out += &format!("{:?}\n", sim.node_stats(NodeId(n as u32)));
    }
    for a in 0..sim.agent_count() {
        let id = castlab_core::AgentId(a as u32);
        if let Some(k) = sim.agent::<LayeredSink>(id) {
            out += &format!("{:?}\n", k.summary);
        } else if let Some(r) = sim.agent::<RlmReceiver>(id) {
            out += &format!("{:?} {:?}\n", r.records.level_time_ns, r.records.level);
        }
    }
    out
}

#[test]
fn batched_and_shared_copies_give_the_same_run_as_single_events() {
    for seed in [1, 2, 3] {
        let mut a = scenario(seed, true);
        let mut b = scenario(seed, false);
        // in several pieces, so that runs stop and resume with batches pending
        for t in [7.3, 19.99, 45.0, 60.0] {
            a.run(Instant::from_secs_f64(t)).unwrap();
            b.run(Instant::from_secs_f64(t)).unwrap();
            assert_eq!(fingerprint(&a), fingerprint(&b), "seed {seed}, at {t} s");
        }
        let st = a.engine_stats();
        assert!(a.conservation().holds());
        // the scenario exercises what it is for: losses, marks, extension drops, batches
        let chans: Vec<_> =
            (0..a.channel_count()).map(|c| a.channel_stats(ChannelId(c as u32)).unwrap().clone()).collect();
        let (lost, marked) = (chans.iter().any(|c| c.lost_random > 0), chans.iter().any(|c| c.marked > 0));
        let (early, ext) = (chans.iter().any(|c| c.drops_early > 0), chans.iter().any(|c| c.ext_drops > 0));
        assert!(lost && marked && early && ext, "lost {lost} marked {marked} early {early} ext {ext}");
        // without batches every event is a pop; with them, a fan-out's copies are few pops
        assert_eq!(b.queue_pops(), st.events);
        assert!(a.queue_pops() * 4 < st.events * 3, "{} pops for {} events", a.queue_pops(), st.events);
    }
}

#[test]
fn batches_pop_in_exactly_the_order_of_their_members_keys() {
    // Random schedules of link events and other events at few distinct times, interleaved
    // with pops as the run loop does them; every popped batch is expanded into its members.
    // The sequence must be exactly the `(time, seq)` order of the events as scheduled.
    use super::event::Ev;
    use super::link::LinkEv;
    use super::pool::Slot;
    use castlab_core::Rng;
    use std::collections::BTreeSet;
    let mut rng = Rng::seed_from_u64(11);
    let mut sim = Simulator::new(1);
    let mut reference: BTreeSet<(u64, u64, u32)> = BTreeSet::new();
    let (mut id, mut batched) = (0u32, 0usize);
    let mut now = 0u64;
    for _ in 0..50_000 {
        let u = rng.uniform();
        if u < 0.6 {
            // a burst of link events of one kind and time, sometimes broken by another event;
            // sometimes its arrivals go on a train, as a batch of departures puts them
            let train = rng.uniform() < 0.3;
            if train {
                sim.train = sim.queue.begin_train();
            }
            let t = now + rng.below(4);
            let arrive = rng.uniform() < 0.5;
            for _ in 0..1 + rng.below(5) {
                id += 1;
                if rng.uniform() < 0.15 {
                    sim.schedule(Instant::from_nanos(t), Ev::Sample { ch: ChannelId(id) });
                } else {
                    let (t2, a2) = if rng.uniform() < 0.1 { (t + 1, !arrive) } else { (t, arrive) };
                    sim.schedule_link(Instant::from_nanos(t2), a2, ChannelId(id), Slot(0));
                    reference.insert((t2, sim.seq, id));
                    continue;
                }
                reference.insert((t, sim.seq, id));
            }
            if train {
                let t = std::mem::replace(&mut sim.train, super::link::NO_TRAIN);
                sim.queue.end_train(t);
                sim.last_links = [None; OPEN_LINKS];
            }
        } else {
            let Some((time, ev)) = sim.queue.pop_until(u64::MAX) else { continue };
            now = time;
            sim.last_links = [None; OPEN_LINKS];
            let ids: Vec<u32> = match ev {
                Ev::Link(LinkEv::TxDone { ch, .. } | LinkEv::Arrive { ch, .. }) | Ev::Sample { ch } => vec![ch.0],
                Ev::Link(LinkEv::TxDoneBatch { batch } | LinkEv::ArriveBatch { batch }) => {
                    batched += 1;
                    let list = std::mem::take(&mut sim.batches[batch as usize]);
                    sim.batch_free.push(batch);
                    list.iter().map(|m| m.0 .0).collect()
                }
                other => panic!("{other:?}"),
            };
            for got in ids {
                let want = reference.pop_first().expect("an event is pending");
                assert_eq!((time, got), (want.0, want.2));
            }
        }
    }
    assert!(batched > 1000, "{batched} batches");
}

#[test]
fn a_busy_links_alternating_arrives_and_departures_make_two_batches() {
    // A fan-out's departures from busy links: each schedules its packet's `Arrive` (time 10)
    // and then the next packet's `TxDone` (time 20). Five such pairs are two queue entries,
    // each a batch of five in order; any other event scheduled between them closes both
    // batches (the members after it start new ones).
    use super::event::Ev;
    use super::link::LinkEv;
    use super::pool::Slot;
    let mut sim = Simulator::new(1);
    let (t10, t20) = (Instant::from_nanos(10), Instant::from_nanos(20));
    for c in 0..5 {
        sim.schedule_link(t10, true, ChannelId(c), Slot(0));
        sim.schedule_link(t20, false, ChannelId(100 + c), Slot(0));
    }
    sim.schedule(t10, Ev::Sample { ch: ChannelId(50) });
    for c in 5..7 {
        sim.schedule_link(t10, true, ChannelId(c), Slot(0));
        sim.schedule_link(t20, false, ChannelId(100 + c), Slot(0));
    }
    let mut popped: Vec<(u64, &str, Vec<u32>)> = Vec::new();
    while let Some((time, ev)) = sim.queue.pop_until(u64::MAX) {
        sim.last_links = [None; OPEN_LINKS];
        let (kind, ids) = match ev {
            Ev::Link(LinkEv::ArriveBatch { batch }) => {
                ("arrives", sim.batches[batch as usize].iter().map(|m| m.0 .0).collect())
            }
            Ev::Link(LinkEv::TxDoneBatch { batch }) => {
                ("departures", sim.batches[batch as usize].iter().map(|m| m.0 .0).collect())
            }
            Ev::Sample { ch } => ("sample", vec![ch.0]),
            other => panic!("{other:?}"),
        };
        popped.push((time, kind, ids));
    }
    let want: Vec<(u64, &str, Vec<u32>)> = vec![
        (10, "arrives", vec![0, 1, 2, 3, 4]),
        (10, "sample", vec![50]),
        (10, "arrives", vec![5, 6]),
        (20, "departures", vec![100, 101, 102, 103, 104]),
        (20, "departures", vec![105, 106]),
    ];
    assert_eq!(popped, want);
}

#[test]
fn prefetching_every_batch_and_fan_out_gives_the_same_run() {
    // prefetching is a cache hint; forced on for every batch and fan-out here, and the hints
    // of the next arrival at every event (the scenario's are far below the sizes where they
    // start), the run must not move
    for seed in [1, 2] {
        let mut a = scenario(seed, true);
        let mut b = scenario(seed, true);
        b.prefetch_from = 1;
        b.hint_from = 0;
        for t in [7.3, 30.0] {
            a.run(Instant::from_secs_f64(t)).unwrap();
            b.run(Instant::from_secs_f64(t)).unwrap();
            assert_eq!(fingerprint(&a), fingerprint(&b), "seed {seed}, at {t} s");
        }
    }
}

#[test]
fn arrivals_on_trains_give_the_same_run_as_on_wires_and_as_single_events() {
    // every batch of departures puts its arrivals on a train here (the scenario's batches are
    // far below the length where trains start), with and without the prefetches and hints:
    // the run must be the one with wires only, and the one without batches
    for seed in [1, 2, 3] {
        let mut wires = scenario(seed, true);
        wires.train_from = usize::MAX;
        let mut trains = scenario(seed, true);
        trains.train_from = 1;
        let mut hinted = scenario(seed, true);
        (hinted.train_from, hinted.prefetch_from, hinted.hint_from) = (1, 1, 0);
        let mut single = scenario(seed, false);
        for t in [7.3, 19.99, 45.0, 60.0] {
            let at = Instant::from_secs_f64(t);
            for sim in [&mut wires, &mut trains, &mut hinted, &mut single] {
                sim.run(at).unwrap();
            }
            let want = fingerprint(&single);
            assert_eq!(fingerprint(&wires), want, "seed {seed}, at {t} s");
            assert_eq!(fingerprint(&trains), want, "seed {seed}, at {t} s");
            assert_eq!(fingerprint(&hinted), want, "seed {seed}, at {t} s");
        }
        assert!(trains.queue.trains_run > 1000, "{} trains", trains.queue.trains_run);
        assert_eq!(wires.queue.trains_run, 0);
    }
}

/// Fan-outs that become classes (`engine::class`), and everything that must end one: a
/// member leaving and joining again on its schedule, a receiver joining late (a graft at the
/// fan-out node), unicast traffic onto a member's link for a while, a member link failing and
/// coming back, packets that come faster than one leaf's links serialise them (a class whose
/// links are still busy), sinks that record every arrival and keep windowed losses, a layered
/// source whose groups share the members' links with another group's sinks, a layered
/// receiver's groups in one class (one of them dropping a layer and taking it back), a
/// fan-out with one unlike link (never a class), and runs that stop and resume.
fn class_scenario(seed: u64, coalesce: bool) -> Simulator {
    let mut sim = Simulator::new(seed);
    sim.coalesce = coalesce;
    let s = sim.add_node("S").unwrap();
    let r1 = sim.add_node("R1").unwrap();
    sim.add_link(s, r1, &LinkConfig::new(100e6, 0.005, dt(50))).unwrap();
    let g = sim.add_group(s).unwrap();
    let cbr = CbrSource::try_new(
        vec![CbrStream::new(castlab_core::Dest::Group(g), 992e3, 0)],
        1000,
        1,
        Instant::ZERO,
        Instant::MAX,
        true,
    )
    .unwrap();
    sim.add_agent(s, None, Instant::ZERO, Box::new(cbr)).unwrap();
    let layered: Vec<GroupId> = (0..3).map(|_| sim.add_group(s).unwrap()).collect();
    let src =
        CbrSource::try_layered(&layered, &[64e3, 128e3, 256e3], 500, 2, Instant::ZERO, Instant::MAX, true).unwrap();
    sim.add_agent(s, None, Instant::ZERO, Box::new(src)).unwrap();
    let secs = Instant::from_secs_f64;
    // R2: 40 alike leaves on group g, behind a faster link
    let r2 = sim.add_node("R2").unwrap();
    sim.add_link(r1, r2, &LinkConfig::new(100e6, 0.010, dt(20))).unwrap();
    let mut leaves = Vec::new();
    for i in 0..40 {
        let x = sim.add_node(&format!("A{i}")).unwrap();
        let (to_x, _) = sim.add_link(r2, x, &LinkConfig::new(10e6, 0.010, dt(20))).unwrap();
        let schedule = match i {
            5 => vec![(Instant::ZERO, 1), (secs(12.3), 0), (secs(20.0), 1)],
            39 => vec![(secs(8.0), 1)],
            _ => vec![(Instant::ZERO, 1)],
        };
        let sink = if i % 3 == 0 {
            LayeredSink::recording(vec![g], schedule).with_windows(&[1_000_000_000])
        } else {
            LayeredSink::new(vec![g], schedule)
        };
        sim.add_agent(x, None, Instant::ZERO, Box::new(sink)).unwrap();
        if i == 11 {
            sim.schedule_link_state(secs(33.0), to_x, false).unwrap();
            sim.schedule_link_state(secs(36.0), to_x, true).unwrap();
        }
        leaves.push(x);
    }
    // unicast CBR onto leaf 7's link from 25 s to 30 s, fast enough to queue there
    let dst = castlab_core::Dest::Unicast(castlab_core::Addr::new(leaves[7], 9));
    sim.add_agent(leaves[7], Some(9), Instant::ZERO, Box::new(LayeredSink::new(vec![], vec![]))).unwrap();
    let uni = CbrSource::try_new(vec![CbrStream::new(dst, 8.5e6, 0)], 700, 3, secs(25.0), secs(30.0), true).unwrap();
    sim.add_agent(s, None, Instant::ZERO, Box::new(uni)).unwrap();
    // R3: 12 leaves at 1.05 Mb/s on group g (the 992 kb/s stream's jitter sometimes brings a
    // packet before the last one has left)
    let r3 = sim.add_node("R3").unwrap();
    sim.add_link(r1, r3, &LinkConfig::new(10e6, 0.010, dt(20))).unwrap();
    for i in 0..12 {
        let x = sim.add_node(&format!("B{i}")).unwrap();
        sim.add_link(r3, x, &LinkConfig::new(1.05e6, 0.007, dt(20))).unwrap();
        sim.add_agent(x, None, Instant::ZERO, Box::new(LayeredSink::new(vec![g], vec![(Instant::ZERO, 1)]))).unwrap();
    }
    // R5: 8 leaves on group g whose nodes also hold sinks of the layered groups
    let r5 = sim.add_node("R5").unwrap();
    sim.add_link(r1, r5, &LinkConfig::new(10e6, 0.010, dt(20))).unwrap();
    for i in 0..8 {
        let x = sim.add_node(&format!("D{i}")).unwrap();
        sim.add_link(r5, x, &LinkConfig::new(10e6, 0.004, dt(20))).unwrap();
        sim.add_agent(x, None, Instant::ZERO, Box::new(LayeredSink::new(vec![g], vec![(Instant::ZERO, 1)]))).unwrap();
        let sink = LayeredSink::new(layered.clone(), vec![(Instant::ZERO, 1 + (i % 3) as u32)]);
        sim.add_agent(x, None, Instant::ZERO, Box::new(sink)).unwrap();
    }
    // R6: 10 leaves whose one sink takes the three layered groups (one class for the three),
    // one of them dropping to two layers at 15 s and back at 26 s
    let r6 = sim.add_node("R6").unwrap();
    sim.add_link(r1, r6, &LinkConfig::new(10e6, 0.010, dt(20))).unwrap();
    for i in 0..10 {
        let x = sim.add_node(&format!("E{i}")).unwrap();
        sim.add_link(r6, x, &LinkConfig::new(10e6, 0.003, dt(20))).unwrap();
        let schedule = match i {
            6 => vec![(Instant::ZERO, 3), (secs(15.0), 2), (secs(26.0), 3)],
            _ => vec![(Instant::ZERO, 3)],
        };
        let sink = if i % 4 == 0 {
            LayeredSink::recording(layered.clone(), schedule).with_windows(&[1_000_000_000])
        } else {
            LayeredSink::new(layered.clone(), schedule)
        };
        sim.add_agent(x, None, Instant::ZERO, Box::new(sink)).unwrap();
    }
    // R4: 6 leaves, one with a longer delay: never a class
    let r4 = sim.add_node("R4").unwrap();
    sim.add_link(r1, r4, &LinkConfig::new(10e6, 0.010, dt(20))).unwrap();
    for i in 0..6 {
        let x = sim.add_node(&format!("C{i}")).unwrap();
        sim.add_link(r4, x, &LinkConfig::new(10e6, if i == 3 { 0.012 } else { 0.010 }, dt(20))).unwrap();
        sim.add_agent(x, None, Instant::ZERO, Box::new(LayeredSink::new(vec![g], vec![(Instant::ZERO, 1)]))).unwrap();
    }
    sim
}

fn sink_records(sim: &Simulator) -> String {
    let mut out = String::new();
    for a in 0..sim.agent_count() {
        if let Some(k) = sim.agent::<LayeredSink>(castlab_core::AgentId(a as u32)) {
            out += &format!(
                "{:?} {:?} {:?}\n",
                k.records,
                k.worst_window_loss(1_000_000_000).map(f64::to_bits),
                k.level()
            );
        }
    }
    out
}

#[test]
fn fan_outs_as_classes_give_the_same_run_as_copies() {
    for seed in [1, 2, 3] {
        let mut a = class_scenario(seed, true);
        let mut b = class_scenario(seed, false);
        let mut c = class_scenario(seed, true);
        c.prefetch_from = 1;
        for t in [3.0, 12.3, 12.30001, 27.5, 34.0, 50.0] {
            for sim in [&mut a, &mut b, &mut c] {
                sim.run(Instant::from_secs_f64(t)).unwrap();
            }
            let (fa, fb, fc) = (fingerprint(&a), fingerprint(&b), fingerprint(&c));
            assert_eq!(fa, fb, "seed {seed}, at {t} s");
            assert_eq!(fa, fc, "seed {seed}, at {t} s");
            assert_eq!(sink_records(&a), sink_records(&b), "seed {seed}, at {t} s");
            assert!(a.conservation().holds());
        }
        // the scenario exercises what it is for: classes formed, and ended by each trigger
        assert_eq!(b.classes.counts, (0, 0, 0, 0));
        let (formed, flushed, early, joined) = a.classes.counts;
        assert!(
            formed >= 10 && flushed >= 20 && early >= 8 && joined >= 4,
            "formed {formed}, flushed {flushed}, ended early {early}, groups joined {joined}"
        );
        let down = (0..a.channel_count()).any(|c| a.channel_stats(ChannelId(c as u32)).unwrap().drops_link_down > 0);
        assert!(down);
    }
}

#[test]
fn one_run_and_many_runs_or_advances_with_classes_are_the_same_run() {
    let mut a = class_scenario(4, true);
    let mut b = class_scenario(4, true);
    let mut c = class_scenario(4, true);
    a.run(Instant::from_secs_f64(40.0)).unwrap();
    for i in 1..=400 {
        b.run(Instant::from_secs_f64(0.1 * i as f64)).unwrap();
        c.advance(Instant::from_secs_f64(0.1 * i as f64)).unwrap();
    }
    // advancing leaves classes live until settled
    assert!(!c.classes.live.is_empty());
    c.settle();
    assert_eq!(fingerprint(&a), fingerprint(&b));
    assert_eq!(fingerprint(&a), fingerprint(&c));
    assert_eq!(sink_records(&a), sink_records(&b));
    assert_eq!(sink_records(&a), sink_records(&c));
}
