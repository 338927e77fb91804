//! Streaming measurement against full records: the worst-case windowed loss computed online
//! (`castlab_proto::window`) must equal the offline metric (`castlab_sim::metrics`) on the
//! full records, bit for bit, and a sink that keeps no rows must count what a recording one
//! counts.

use castlab_core::{GroupId, Instant, Rng};
use castlab_proto::window::WorstWindowLoss;
use castlab_proto::{CbrSource, LayeredSink};
use castlab_sim::metrics::{arrival_process, worst_window_loss};
use castlab_sim::{LinkConfig, QueueConfig, Simulator};

const S: u64 = 1_000_000_000;

/// A random receiver process: arrival times (sorted, often equal, with bursts and silences)
/// and loss rows (time, count) at arrival instants, as a sink produces them.
fn random_process(rng: &mut Rng, n: usize) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let (mut arr, mut loss_t, mut loss_c) = (vec![], vec![], vec![]);
    let mut t = rng.below(5 * S);
    for _ in 0..n {
        t += match rng.below(10) {
            0 => 0,                         // equal times
            1 => rng.below(20) * S / 10,    // a silence of up to 2 s
            _ => rng.below(50) * 1_000_000, // 0-50 ms, on whole ms
        };
        if rng.bernoulli(0.15) {
            loss_t.push(t);
            let most = if rng.bernoulli(0.1) { 40 } else { 3 };
            loss_c.push(1 + rng.below(most));
        }
        arr.push(t);
    }
    (arr, loss_t, loss_c)
}

#[test]
fn online_worst_window_equals_offline_on_random_processes() {
    let mut rng = Rng::seed_from_u64(2026);
    let windows = [1, 1_000_000, 37_000_000, S / 2, S, 3 * S, 10 * S, 100 * S];
    let mut nonzero = 0;
    for case in 0..300 {
        let n = 1 + rng.below(if case % 10 == 0 { 3000 } else { 300 }) as usize;
        let (arr, lt, lc) = random_process(&mut rng, n);
        let (t, r, l) = arrival_process(&arr, &lt, &lc);
        for &w in &windows {
            let offline = worst_window_loss(&t, &r, &l, w);
            // online: feed rows in the order a sink does (loss before the arrival revealing it)
            let mut on = WorstWindowLoss::new(w);
            for i in 0..t.len() {
                on.push(t[i], r[i], l[i]);
                // reading mid-run must not disturb the result
                if i % 97 == 0 {
                    let _ = on.value();
                }
            }
            let online = on.value();
            assert_eq!(online.to_bits(), offline.to_bits(), "case {case} n {n} w {w}: {online} vs {offline}");
            if offline > 0.0 {
                nonzero += 1;
            }
        }
    }
    assert!(nonzero > 1000, "the processes must exercise losses: {nonzero}");
}

#[test]
fn online_value_read_mid_run_equals_offline_on_the_prefix() {
    let mut rng = Rng::seed_from_u64(5);
    let (arr, lt, lc) = random_process(&mut rng, 2000);
    let (t, r, l) = arrival_process(&arr, &lt, &lc);
    let mut on = WorstWindowLoss::new(S);
    for i in 0..t.len() {
        on.push(t[i], r[i], l[i]);
        // a prefix ending between rows of one instant is not a state a sink is read in
        if i % 50 == 0 && (i + 1 == t.len() || t[i + 1] > t[i]) {
            let off = worst_window_loss(&t[..=i], &r[..=i], &l[..=i], S);
            assert_eq!(on.value().to_bits(), off.to_bits(), "prefix {i}");
        }
    }
}

#[test]
fn online_memory_is_bounded_by_the_window_not_the_run() {
    let mut on = WorstWindowLoss::new(S);
    let mut most = 0;
    for k in 0..200_000u64 {
        // 1,000 arrivals a second for 200 s, a loss every 997 packets
        let t = k * 1_000_000;
        if k % 997 == 0 {
            on.push(t, 0, 1);
        }
        on.push(t, 1, 0);
        most = most.max(on.held());
    }
    assert!(most <= 1_002, "held {most} events for a 1 s window at 1,000/s");
}

/// A source of 3 layers through a lossy bottleneck to two sinks on the same node: one keeps
/// every arrival, one only counters and online windows.
#[test]
fn summary_sink_in_a_lossy_run_equals_the_recording_sink() {
    let mut sim = Simulator::new(3);
    let s = sim.add_node("s").unwrap();
    let a = sim.add_node("a").unwrap();
    let b = sim.add_node("b").unwrap();
    sim.add_link(s, a, &LinkConfig::new(10e6, 0.002, QueueConfig::DropTail { limit_pkts: 50 })).unwrap();
    let mut lossy = LinkConfig::new(400e3, 0.010, QueueConfig::DropTail { limit_pkts: 8 });
    lossy.loss_ab = 0.02;
    sim.add_link(a, b, &lossy).unwrap();
    let groups: Vec<GroupId> = (0..3).map(|_| sim.add_group(s).unwrap()).collect();
    let rates = [100e3, 200e3, 300e3];
    let src = CbrSource::try_layered(&groups, &rates, 500, 1, Instant::ZERO, Instant::MAX, true).unwrap();
    sim.add_agent(s, None, Instant::ZERO, Box::new(src)).unwrap();
    let sched = vec![(Instant::ZERO, 3), (Instant::from_secs_f64(20.0), 1), (Instant::from_secs_f64(25.0), 3)];
    let windows = [S / 10, S, 10 * S];
    let full = LayeredSink::recording(groups.clone(), sched.clone()).with_windows(&windows);
    let lean = LayeredSink::new(groups.clone(), sched).with_windows(&windows);
    let fa = sim.add_agent(b, None, Instant::ZERO, Box::new(full)).unwrap();
    let la = sim.add_agent(b, None, Instant::ZERO, Box::new(lean)).unwrap();
    sim.run(Instant::from_secs_f64(60.0)).unwrap();
    let full = sim.agent::<LayeredSink>(fa).unwrap();
    let lean = sim.agent::<LayeredSink>(la).unwrap();
    assert!(full.records.lost() > 100, "the run must lose packets: {}", full.records.lost());
    assert_eq!(full.summary, lean.summary);
    assert_eq!(lean.summary.received, full.records.received());
    assert_eq!(lean.summary.lost, full.records.lost());
    assert_eq!(lean.summary.bytes, full.records.bytes());
    assert!(lean.records.arr_time_ns.is_empty());
    let counts: Vec<u64> = full.records.loss_count.iter().map(|&c| c as u64).collect();
    let (t, r, l) = arrival_process(&full.records.arr_time_ns, &full.records.loss_time_ns, &counts);
    for w in windows {
        let off = worst_window_loss(&t, &r, &l, w);
        assert!(off > 0.0);
        assert_eq!(lean.worst_window_loss(w).unwrap().to_bits(), off.to_bits(), "window {w}");
        assert_eq!(full.worst_window_loss(w).unwrap().to_bits(), off.to_bits(), "window {w}");
    }
}
