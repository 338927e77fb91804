//! A Linux-like TCP sender's per-packet work, RACK-TLP's records, timers and recovery
//! included, allocates nothing once its buffers have grown: a counting global allocator
//! watches a cubic flow and its sink through a 10 Mb/s bottleneck with a 20-packet DropTail
//! queue (losses every few seconds, fast recovery, lost retransmissions, probes), driven by a
//! hand loop whose own queues are allocated beforehand; and a BBR flow through a queue of 8, whose
//! sender counts each ACK's losses.
//!
//! Only the test's own thread is counted (`castlab_core::alloc_count`).

use std::collections::VecDeque;

use castlab_core::alloc_count::{counting_is_installed, thread_allocations, watch, CountingAlloc};
use castlab_core::{Addr, Agent, Duration, Instant, NodeId, Packet, Rng, StartInfo};
use castlab_proto::tcp::{TcpConfig, TcpSender, TcpSink};
use castlab_proto::Trace;

#[global_allocator]
static A: CountingAlloc = CountingAlloc;

const SND: Addr = Addr::new(NodeId(0), 1);
const RCV: Addr = Addr::new(NodeId(1), 2);

/// The flow on its path: the data link's queue (departure times), the packets on each
/// direction's wire (arrival time, packet), and the drops.
struct Path {
    snd: TcpSender,
    snk: TcpSink,
    queue: VecDeque<Instant>,
    data: VecDeque<(Instant, Packet)>,
    acks: VecDeque<(Instant, Packet)>,
    busy: Instant,
    drops: u64,
    /// The queue's limit, packets.
    limit: usize,
}

const RATE_BPS: f64 = 10e6;
const QUEUE: usize = 20;

impl Path {
    fn pump(&mut self, now: Instant) {
        while let Some(p) = self.snd.poll_transmit() {
            while self.queue.front().is_some_and(|&t| t <= now) {
                self.queue.pop_front();
            }
            if self.queue.len() >= self.limit {
                self.drops += 1;
                continue;
            }
            let done = self.busy.max(now) + Duration::from_secs_f64(p.size_bytes as f64 * 8.0 / RATE_BPS);
            self.busy = done;
            self.queue.push_back(done);
            self.data.push_back((done + Duration::from_millis(10), p));
        }
        while let Some(p) = self.snk.poll_transmit() {
            self.acks.push_back((now + Duration::from_millis(10), p));
        }
    }

    /// Run the next event at or before `until`; false when none is due.
    fn step(&mut self, until: Instant) -> bool {
        let cands = [
            self.data.front().map(|x| x.0),
            self.acks.front().map(|x| x.0),
            self.snd.poll_timeout(),
            self.snk.poll_timeout(),
        ];
        let Some(t) = cands.iter().flatten().min().copied().filter(|&t| t <= until) else { return false };
        if cands[0] == Some(t) {
            if let Some((_, mut p)) = self.data.pop_front() {
                p.src = SND;
                self.snk.handle_packet(t, &p);
            }
        } else if cands[1] == Some(t) {
            if let Some((_, mut p)) = self.acks.pop_front() {
                p.src = RCV;
                self.snd.handle_packet(t, &p);
            }
        } else if cands[2] == Some(t) {
            self.snd.handle_timeout(t);
        } else {
            self.snk.handle_timeout(t);
        }
        self.pump(t);
        true
    }

    fn run_until(&mut self, until: Instant) {
        for _ in 0..100_000_000u64 {
            if !self.step(until) {
                return;
            }
        }
        panic!("the loop did not reach {until:?}");
    }
}

/// `snd` and its sink on the path with a queue of `limit` packets, started.
fn path(snd: TcpSender, cfg: TcpConfig, limit: usize) -> Path {
    let mut path = Path {
        snd,
        snk: TcpSink::new(cfg),
        queue: VecDeque::with_capacity(4 * QUEUE),
        data: VecDeque::with_capacity(4096),
        acks: VecDeque::with_capacity(4096),
        busy: Instant::ZERO,
        drops: 0,
        limit,
    };
    path.snd.handle_start(Instant::ZERO, StartInfo { addr: SND, rng: Rng::seed_from_u64(1) });
    path.snk.handle_start(Instant::ZERO, StartInfo { addr: RCV, rng: Rng::seed_from_u64(2) });
    path.pump(Instant::ZERO);
    path
}

/// One test, so that no other test's allocations run in the counted spans.
#[test]
fn per_packet_work_allocates_nothing() {
    rack_tlp_sender_per_packet_work_allocates_nothing();
    bbr_sender_counting_losses_allocates_nothing();
}

fn rack_tlp_sender_per_packet_work_allocates_nothing() {
    let cfg = TcpConfig { trace: Trace::Off, sack: true, ..TcpConfig::linux() };
    assert!(cfg.rack && cfg.tlp);
    let mut path = path(TcpSender::cubic(RCV, 5, cfg.clone()), cfg, QUEUE);
    // warm-up: slow start's overshoot sizes every buffer
    path.run_until(Instant::from_secs_f64(10.0));
    assert!(counting_is_installed(), "the counting allocator is not in use");
    let (before, drops0, rack0) = (thread_allocations(), path.drops, path.snd.stats.rack_losses);
    watch(true);
    path.run_until(Instant::from_secs_f64(60.0));
    watch(false);
    let allocs = thread_allocations() - before;
    let st = path.snd.stats;
    assert!(path.drops > drops0 + 10, "the queue dropped in the counted span: {}", path.drops - drops0);
    assert!(st.rack_losses > rack0, "RACK marked losses in the counted span");
    assert_eq!(allocs, 0, "allocations in the sender's and sink's per-packet work ({st:?})");
}

/// A BBR sender counting each ACK's losses for its controller (RACK's marks, or RFC 6675's
/// `IsLost` without RACK): a queue of 8 packets, below what the 5/4 phase puts in flight beyond
/// the BDP, drops in every probing phase.
fn bbr_sender_counting_losses_allocates_nothing() {
    for rack in [true, false] {
        let cfg = TcpConfig { trace: Trace::Off, sack: true, rack, tlp: rack, ..TcpConfig::linux() };
        let mut path = path(TcpSender::bbr(RCV, 5, cfg.clone()), cfg, 8);
        path.run_until(Instant::from_secs_f64(10.0));
        let (before, drops0) = (thread_allocations(), path.drops);
        watch(true);
        path.run_until(Instant::from_secs_f64(60.0));
        watch(false);
        let allocs = thread_allocations() - before;
        let st = path.snd.stats;
        assert!(
            path.drops > drops0 + 10,
            "rack {rack}: the queue dropped in the counted span: {}",
            path.drops - drops0
        );
        assert_eq!(allocs, 0, "rack {rack}: allocations in the sender's and sink's per-packet work ({st:?})");
    }
}
