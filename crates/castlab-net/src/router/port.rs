//! One router interface: its packet socket, its output queue drained at the link's rate, and
//! the delay line behind it (the link's propagation delay), as the simulator's channel models
//! a link: wait in the queue, serialise for `size / rate`, propagate for `delay`.
//!
//! The schedule runs on virtual times: a frame's serialisation ends exactly `size / rate`
//! after the previous one's (or after its own arrival at an idle link), and it leaves the
//! delay line `delay` after that, however late the loop wakes. So the queue lengths the
//! extensions read are the exact lengths of that schedule, and the only inexactness on the
//! wire is how late the loop hands a frame to the kernel.
//!
//! Sizes: serialisation counts the IP datagram (total length), not the Ethernet header, so
//! that a castlab packet of `size_bytes` takes `size_bytes + 28` bytes of link time (its UDP
//! and IP headers), a choice stated in `docs/real-network.md`.
//!
//! Storage: every frame slot is allocated when the port is made (queue limit + the one being
//! serialised + the delay line's capacity); the per-packet path allocates nothing.

use std::collections::VecDeque;
use std::io;

use castlab_core::queue::{Admit, Queue};
use castlab_core::{Duration, Instant, Rng};

use super::config::IfaceConfig;
use super::frame::Mac;
use super::igmp::Membership;
use super::sys::{PacketSocket, BATCH};

/// Bytes of one frame slot: a 1500-byte MTU frame and its Ethernet header, rounded up.
pub const SLOT: usize = 2048;
/// The delay line holds at most this many frames (a 1 Gb/s link with 10 ms of delay).
pub const MAX_DELAY_LINE: usize = 1 << 15;

/// Counters of one interface and its queue, in `tc -s`'s terms where they exist.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Frames and bytes read from the interface.
    pub rx_frames: u64,
    pub rx_bytes: u64,
    /// Frames the kernel dropped before the router could read them (its socket's receive
    /// buffer was full), as of the last [`Port::read_kernel_drops`].
    pub rx_kernel_drops: u64,
    /// Packets offered to the output queue, and admitted (marked ones included).
    pub arrivals: u64,
    pub enqueued: u64,
    pub marked: u64,
    /// Drops by cause: the buffer was full; RED dropped early; the delay line was full; the
    /// extension's `on_forward` said drop.
    pub drops_forced: u64,
    pub drops_early: u64,
    pub drops_delay_line: u64,
    pub drops_ext: u64,
    /// Frames that finished serialisation (IP bytes, as the queue counts them).
    pub departures: u64,
    pub bytes_departed: u64,
    /// Frames handed to the kernel after the delay line, their bytes (whole frames), and the
    /// frames the kernel refused (a full socket buffer or an error).
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub tx_errors: u64,
    /// How late, after their due time, frames left the delay line: the sum and the maximum.
    pub late_total_ns: u64,
    pub late_max_ns: u64,
}

/// A histogram of durations in ns with about 3 % resolution (log-linear: 32 sub-buckets per
/// power of two), allocated once; recording allocates nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatencyHist {
    counts: Box<[u64]>,
    count: u64,
    max: u64,
}

const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;

impl Default for LatencyHist {
    fn default() -> Self {
        LatencyHist {
            counts: vec![0; ((64 - SUB_BITS as usize) * SUB as usize) + SUB as usize].into_boxed_slice(),
            count: 0,
            max: 0,
        }
    }
}

impl LatencyHist {
    fn index(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let e = 63 - v.leading_zeros();
        ((e - SUB_BITS) as u64 * SUB + (v >> (e - SUB_BITS))) as usize
    }

    /// The largest value that falls in bucket `i`.
    fn upper(i: usize) -> u64 {
        let i = i as u64;
        if i < 2 * SUB {
            return i;
        }
        let shift = i / SUB - 1;
        let m = i % SUB + SUB;
        (m << shift) + ((1u64 << shift) - 1)
    }

    pub fn record(&mut self, ns: u64) {
        self.counts[Self::index(ns)] += 1;
        self.count += 1;
        self.max = self.max.max(ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// The `q`-quantile (nearest rank), as its bucket's upper bound (at most 3 % above the
    /// true value, never below it), capped at the largest value seen; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::upper(i).min(self.max);
            }
        }
        self.max
    }

    pub fn clear(&mut self) {
        self.counts.fill(0);
        self.count = 0;
        self.max = 0;
    }
}

/// Slots whose frame the router did not forward from an interface (its own sends) carry no
/// ingress time.
const NO_INGRESS: u32 = u32::MAX;

/// What [`Port::flush`] needs to time the router's hand-over: the router's clock origin and
/// the histogram of the frames' router-only transit.
struct Transit {
    clock0: std::time::Instant,
    hist: LatencyHist,
    /// The hand-over's lateness alone (after the frame's due time).
    late: LatencyHist,
}

/// A frame slot in flight: serialised until `done`, or waiting in the delay line until `due`.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    slot: u32,
    at: Instant,
}

pub struct Port {
    pub cfg: IfaceConfig,
    pub sock: PacketSocket,
    pub mac: Mac,
    pub mtu: u32,
    pub membership: Membership,
    pub stats: PortStats,
    buf: Box<[u8]>,
    lens: Box<[u16]>,
    /// IP datagram length of each slot (serialisation size).
    ip_lens: Box<[u16]>,
    free: Vec<u32>,
    queue: Queue,
    rng: Rng,
    /// The frame being serialised and when it ends.
    tx: Option<InFlight>,
    idle_since: Instant,
    delay_line: VecDeque<InFlight>,
    delay_cap: usize,
    /// Per slot: ns from the kernel's receive timestamp of the frame it copies to the moment
    /// the router handled it (or `NO_INGRESS`); read only with `transit` on.
    ingress_wait: Box<[u32]>,
    transit: Option<Transit>,
}

impl Port {
    pub fn new(
        cfg: IfaceConfig,
        sock: PacketSocket,
        mac: Mac,
        mtu: u32,
        membership: Membership,
        rng: Rng,
        avg_weight: f64,
    ) -> Self {
        // enough slots for a full delay line of minimum-size frames (64 bytes of IP)
        let delay_cap = if cfg.delay.is_zero() {
            0
        } else if cfg.rate_bps == 0 {
            MAX_DELAY_LINE
        } else {
            let pkts = (cfg.rate_bps as f64 * cfg.delay.as_secs_f64() / (64.0 * 8.0)).ceil() as usize + 2;
            pkts.min(MAX_DELAY_LINE)
        };
        let limit = cfg.queue.limit_pkts();
        let n = limit + 1 + delay_cap;
        let queue = Queue::new(&cfg.queue, cfg.rate_bps.max(1), avg_weight);
        Port {
            sock,
            mac,
            mtu,
            membership,
            stats: PortStats::default(),
            buf: vec![0u8; n * SLOT].into_boxed_slice(),
            lens: vec![0u16; n].into_boxed_slice(),
            ip_lens: vec![0u16; n].into_boxed_slice(),
            free: (0..n as u32).rev().collect(),
            queue,
            rng,
            tx: None,
            idle_since: Instant::ZERO,
            delay_line: VecDeque::with_capacity(delay_cap.max(1)),
            delay_cap,
            ingress_wait: vec![NO_INGRESS; n].into_boxed_slice(),
            transit: None,
            cfg,
        }
    }

    /// A free slot to build a frame in, or None (every slot in use: cannot happen while the
    /// queue and delay line respect their bounds, counted as a forced drop if it does).
    pub fn alloc(&mut self) -> Option<u32> {
        let s = self.free.pop()?;
        self.ingress_wait[s as usize] = NO_INGRESS;
        Some(s)
    }

    /// The frame in slot `s` was handled `ns` after the kernel received it.
    pub fn set_ingress_wait(&mut self, s: u32, ns: u64) {
        self.ingress_wait[s as usize] = ns.min(NO_INGRESS as u64 - 1) as u32;
    }

    /// Time every forwarded frame's transit through the router (see [`Port::transit`]),
    /// on the router's clock that starts at `clock0`; off: `None`.
    pub fn set_transit(&mut self, clock0: Option<std::time::Instant>) {
        self.transit =
            clock0.map(|clock0| Transit { clock0, hist: LatencyHist::default(), late: LatencyHist::default() });
    }

    /// With transit timing on, the router-only added latency of every frame this port
    /// forwarded: from the kernel's receive timestamp to the router handling the frame, plus
    /// from the frame's due time (its arrival plus queueing, serialisation and the delay
    /// line) to its `sendmmsg` call. The link's own schedule is not counted: it is the
    /// configured behaviour, not the router's cost.
    pub fn transit(&self) -> Option<&LatencyHist> {
        self.transit.as_ref().map(|t| &t.hist)
    }

    /// With transit timing on, the part of [`Port::transit`] after the frames' due time:
    /// how late the router handed them to the kernel.
    pub fn transit_late(&self) -> Option<&LatencyHist> {
        self.transit.as_ref().map(|t| &t.late)
    }

    /// Empty the transit histograms.
    pub fn clear_transit(&mut self) {
        if let Some(t) = self.transit.as_mut() {
            t.hist.clear();
            t.late.clear();
        }
    }

    pub fn slot_mut(&mut self, s: u32) -> &mut [u8] {
        let at = s as usize * SLOT;
        &mut self.buf[at..at + SLOT]
    }

    pub fn release(&mut self, s: u32) {
        self.free.push(s);
    }

    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }
    pub fn queue_avg(&self) -> f64 {
        self.queue.avg()
    }
    pub fn queue_limit(&self) -> usize {
        self.queue.limit()
    }
    pub fn queue(&self) -> &Queue {
        &self.queue
    }
    pub fn delay_line_len(&self) -> usize {
        self.delay_line.len()
    }
    /// Frames not yet handed to the kernel: queued, being serialised, or in the delay line.
    pub fn in_flight(&self) -> usize {
        self.queue.len() + usize::from(self.tx.is_some()) + self.delay_line.len()
    }

    fn tx_time(&self, s: u32) -> Duration {
        if self.cfg.rate_bps == 0 {
            Duration::ZERO
        } else {
            Duration::transmission(self.ip_lens[s as usize] as u32, self.cfg.rate_bps)
        }
    }

    /// Offer the frame in slot `s` (`len` bytes, `ip_len` of them the IP datagram) to the
    /// output queue at `now`. Runs the schedule up to `now` first, so that the discipline
    /// sees the exact queue. Returns the discipline's decision; a dropped slot is released.
    pub fn enqueue(&mut self, s: u32, len: usize, ip_len: usize, now: Instant) -> Admit {
        self.advance(now);
        self.lens[s as usize] = len as u16;
        self.ip_lens[s as usize] = ip_len as u16;
        self.stats.arrivals += 1;
        let idle = if self.tx.is_none() { Some(self.idle_since) } else { None };
        let a = self.queue.arrive(s, now, idle, &mut self.rng);
        match a {
            Admit::Enqueued => self.stats.enqueued += 1,
            Admit::Marked => {
                self.stats.enqueued += 1;
                self.stats.marked += 1;
            }
            Admit::DropForced => {
                self.stats.drops_forced += 1;
                self.release(s);
            }
            Admit::DropEarly => {
                self.stats.drops_early += 1;
                self.release(s);
            }
        }
        if self.tx.is_none() {
            self.start_tx(now);
        }
        self.poll(now);
        a
    }

    fn start_tx(&mut self, at: Instant) {
        if let Some(s) = self.queue.pop() {
            let done = at + self.tx_time(s);
            self.tx = Some(InFlight { slot: s, at: done });
        }
    }

    /// Run the serialisation schedule up to `now` (on its own virtual times), moving finished
    /// frames into the delay line.
    pub fn advance(&mut self, now: Instant) {
        while let Some(t) = self.tx {
            if t.at > now {
                break;
            }
            self.tx = None;
            self.stats.departures += 1;
            self.stats.bytes_departed += self.ip_lens[t.slot as usize] as u64;
            if self.delay_cap == 0 {
                self.delay_line.push_back(InFlight { slot: t.slot, at: t.at });
            } else if self.delay_line.len() >= self.delay_cap {
                self.stats.drops_delay_line += 1;
                self.release(t.slot);
            } else {
                self.delay_line.push_back(InFlight { slot: t.slot, at: t.at + self.cfg.delay });
            }
            if self.queue.is_empty() {
                self.idle_since = t.at;
            } else {
                self.start_tx(t.at);
            }
        }
    }

    /// Hand every frame whose delay has passed to the kernel, up to [`BATCH`] frames per
    /// `sendmmsg(2)`.
    pub fn flush(&mut self, now: Instant) {
        let mut due = [0u32; BATCH];
        let mut due_at = [Instant::ZERO; BATCH];
        loop {
            let mut n = 0;
            while n < BATCH {
                let Some(f) = self.delay_line.front().copied() else { break };
                if f.at > now {
                    break;
                }
                self.delay_line.pop_front();
                let late = now.saturating_since(f.at).as_nanos();
                self.stats.late_total_ns += late;
                self.stats.late_max_ns = self.stats.late_max_ns.max(late);
                due[n] = f.slot;
                due_at[n] = f.at;
                n += 1;
            }
            if n == 0 {
                return;
            }
            if let Some(t) = self.transit.as_mut() {
                // the moment of the hand-over, read just before the system call
                let handed = Instant::from_nanos(t.clock0.elapsed().as_nanos() as u64);
                for k in 0..n {
                    let w = self.ingress_wait[due[k] as usize];
                    if w != NO_INGRESS {
                        let late = handed.saturating_since(due_at[k]).as_nanos();
                        t.hist.record(w as u64 + late);
                        t.late.record(late);
                    }
                }
            }
            let (buf, lens, stats) = (&self.buf, &self.lens, &mut self.stats);
            let frame = |k: usize| {
                let s = due[k] as usize;
                &buf[s * SLOT..s * SLOT + lens[s] as usize]
            };
            let _ = self.sock.send_batch(n, frame, |k, ok| {
                if ok {
                    stats.tx_frames += 1;
                    stats.tx_bytes += lens[due[k] as usize] as u64;
                } else {
                    stats.tx_errors += 1;
                }
            });
            for &s in &due[..n] {
                self.free.push(s);
            }
            if n < BATCH {
                return;
            }
        }
    }

    /// Add the kernel's receive drops since the last call to `rx_kernel_drops`.
    pub fn read_kernel_drops(&mut self) {
        if let Ok(d) = self.sock.kernel_drops() {
            self.stats.rx_kernel_drops += d;
        }
    }

    /// Advance and flush at `now`.
    pub fn poll(&mut self, now: Instant) {
        self.advance(now);
        self.flush(now);
    }

    /// The next instant something is due: a serialisation ends or a frame leaves the delay line.
    pub fn next_deadline(&self) -> Option<Instant> {
        let a = self.tx.map(|t| t.at);
        let b = self.delay_line.front().map(|f| f.at);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (x, None) | (None, x) => x,
        }
    }

    /// Send a frame built in slot `s` past the queue (ARP and IGMP: control traffic of the
    /// router itself, which a real router's control plane also sends ahead of data).
    pub fn send_now(&mut self, s: u32, len: usize) -> io::Result<()> {
        let at = s as usize * SLOT;
        let r = self.sock.send(&self.buf[at..at + len]);
        self.release(s);
        match r {
            Ok(true) => {
                self.stats.tx_frames += 1;
                self.stats.tx_bytes += len as u64;
                Ok(())
            }
            Ok(false) => {
                self.stats.tx_errors += 1;
                Err(io::Error::from(io::ErrorKind::WouldBlock))
            }
            Err(e) => {
                self.stats.tx_errors += 1;
                Err(e)
            }
        }
    }

    /// The counters as `tc -s qdisc` would print them, one paragraph.
    pub fn tc_text(&self) -> String {
        let kind = match &self.cfg.queue {
            castlab_core::queue::QueueConfig::DropTail { limit_pkts } => format!("droptail limit {limit_pkts}p"),
            castlab_core::queue::QueueConfig::Red(r) => format!(
                "red limit {}p min {} max {} probability {} w_q {}{}",
                r.limit_pkts,
                r.min_th,
                r.max_th,
                r.max_p,
                r.w_q,
                if r.gentle { " gentle" } else { "" }
            ),
        };
        let s = &self.stats;
        let rate = if self.cfg.rate_bps == 0 { "unlimited".to_string() } else { format!("{}bit", self.cfg.rate_bps) };
        format!(
            "qdisc {kind} dev {} rate {rate} delay {:.6}s\n Sent {} bytes {} pkt (dropped {}, overlimits 0 requeues 0)\n \
             backlog {}p avg {:.3}p delay-line {}p\n arrivals {} enqueued {} marked {} drops forced {} early {} \
             delay-line {} extension {} tx-errors {} rx-kernel-drops {} late mean {:.0}us max {:.0}us\n",
            self.cfg.name,
            self.cfg.delay.as_secs_f64(),
            s.bytes_departed,
            s.departures,
            s.drops_forced + s.drops_early + s.drops_delay_line + s.drops_ext,
            self.queue.len(),
            self.queue.avg(),
            self.delay_line.len(),
            s.arrivals,
            s.enqueued,
            s.marked,
            s.drops_forced,
            s.drops_early,
            s.drops_delay_line,
            s.drops_ext,
            s.tx_errors,
            s.rx_kernel_drops,
            if s.tx_frames == 0 { 0.0 } else { s.late_total_ns as f64 / s.tx_frames as f64 / 1e3 },
            s.late_max_ns as f64 / 1e3,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::LatencyHist;

    #[test]
    fn latency_hist_quantiles_are_within_three_percent_above() {
        let mut h = LatencyHist::default();
        assert_eq!(h.quantile(0.5), 0);
        // 1 us, 2 us, ... 1000 us: the median is 500 us, the 99th percentile 990 us
        for k in 1..=1000u64 {
            h.record(k * 1000);
        }
        assert_eq!(h.count(), 1000);
        assert_eq!(h.max(), 1_000_000);
        for (q, want) in [(0.5, 500_000u64), (0.99, 990_000), (0.001, 1000)] {
            let got = h.quantile(q);
            assert!(got >= want && got as f64 <= want as f64 * 1.032, "q {q}: {got} for {want}");
        }
        assert_eq!(h.quantile(1.0), 1_000_000);
        // below 64 ns every value has its own bucket
        let mut h = LatencyHist::default();
        for v in [3u64, 7, 7, 40, 63] {
            h.record(v);
        }
        assert_eq!((h.quantile(0.2), h.quantile(0.6), h.quantile(0.8), h.quantile(1.0)), (3, 7, 40, 63));
        // the largest values still land in a bucket
        h.record(u64::MAX);
        assert_eq!(h.quantile(1.0), u64::MAX);
        h.clear();
        assert_eq!((h.count(), h.quantile(0.5)), (0, 0));
    }
}
