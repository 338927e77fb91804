//! Output-queue disciplines: DropTail and RED, shared by the simulator's links and the
//! real-network router's interfaces (pure logic: a queue of slot indices, no packets, no I/O).
//!
//! Queue lengths count packets *waiting* in the queue, not the one being serialised onto the
//! link (as in ns-2, whose results the papers report): a DropTail queue of limit 20 holds 20
//! waiting packets while a 21st is on the wire.
//!
//! RED follows Floyd and Jacobson, *Random Early Detection Gateways for Congestion
//! Avoidance* (1993), Fig. 2, in packet mode:
//! - on each arrival the average is updated: `avg ← (1 − w_q)·avg + w_q·q` while the link is
//!   busy or packets wait; an arrival to an idle link instead decays it as if `m` packets of
//!   typical size had arrived to the empty queue: `avg ← (1 − w_q)^m·avg`, `m = idle / s`,
//!   `s` the transmission time of a `mean_pkt_bytes` packet;
//! - `min_th ≤ avg < max_th`: `count ← count + 1`, `p_b = max_p·(avg − min_th)/(max_th − min_th)`,
//!   `p_a = p_b / (1 − count·p_b)`, drop (or mark) with probability `p_a`, then `count ← 0`;
//! - `avg ≥ max_th`: drop (or mark), `count ← 0`; with `gentle`, between `max_th` and
//!   `2·max_th` the probability instead rises linearly from `max_p` to 1 (and is spaced by
//!   `count` the same way);
//! - `avg < min_th`: `count ← −1`;
//! - the physical buffer (`limit_pkts`) still overflows: such drops are "forced".

use std::collections::VecDeque;

use crate::{Duration, Instant, Rng};

/// RED parameters. Defaults follow Floyd and Jacobson's recommendations (w_q = 0.002,
/// max_p = 0.1, max_th = 3·min_th) with min_th = 5 packets.
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    pub limit_pkts: usize,
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    /// Mark packets (set `Packet::marked`) instead of dropping them early.
    pub mark: bool,
    /// Typical packet size for the idle-period correction.
    pub mean_pkt_bytes: u32,
}

impl RedConfig {
    /// Check the parameters; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        let nonneg = |v: f64| v.is_finite() && v >= 0.0;
        if !nonneg(self.min_th) {
            return Err(format!("min_th must be a finite number >= 0 (got {})", self.min_th));
        }
        if !nonneg(self.max_th) || self.max_th <= self.min_th {
            return Err(format!("max_th must exceed min_th (got {} <= {})", self.max_th, self.min_th));
        }
        if !(0.0..=1.0).contains(&self.max_p) {
            return Err(format!("max_p must be a probability in [0, 1] (got {})", self.max_p));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(format!("w_q must be in (0, 1] (got {})", self.w_q));
        }
        if self.mean_pkt_bytes == 0 {
            return Err("mean_pkt_bytes must be positive".into());
        }
        if self.limit_pkts == 0 {
            return Err("limit_pkts must be at least 1".into());
        }
        Ok(())
    }
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            limit_pkts: 50,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: false,
            mark: false,
            mean_pkt_bytes: 1000,
        }
    }
}

/// A queue discipline and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueConfig {
    DropTail { limit_pkts: usize },
    Red(RedConfig),
}

impl QueueConfig {
    pub fn limit_pkts(&self) -> usize {
        match self {
            QueueConfig::DropTail { limit_pkts } => *limit_pkts,
            QueueConfig::Red(r) => r.limit_pkts,
        }
    }
}

/// What the discipline decided about an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    Enqueued,
    /// Enqueued with the congestion mark set (RED in marking mode).
    Marked,
    /// The buffer was full.
    DropForced,
    /// RED dropped it early.
    DropEarly,
}

/// RED's state: the average and the count since the last drop.
#[derive(Clone, Debug)]
pub struct RedState {
    pub cfg: RedConfig,
    pub avg: f64,
    pub count: i64,
    /// Transmission time of a typical packet (for the idle correction); set by the channel.
    pub s: Duration,
}

impl RedState {
    pub fn new(cfg: RedConfig, rate_bps: u64) -> Self {
        let s = Duration::transmission(cfg.mean_pkt_bytes, rate_bps.max(1));
        RedState { cfg, avg: 0.0, count: -1, s }
    }

    /// Update the average for an arrival that finds `q` packets waiting; `idle_since` is
    /// when the link went idle if it is idle now.
    pub fn update_avg(&mut self, q: usize, now: Instant, idle_since: Option<Instant>) {
        let w = self.cfg.w_q;
        match idle_since {
            Some(t0) if q == 0 => {
                let m = if self.s.is_zero() { 0.0 } else { (now - t0).as_nanos() as f64 / self.s.as_nanos() as f64 };
                self.avg *= (1.0 - w).powf(m);
            }
            _ => self.avg = (1.0 - w) * self.avg + w * q as f64,
        }
    }

    /// The base probability p_b for the current average (before count spacing), or `None`
    /// below min_th. Returns 1.0 above the (gentle) maximum.
    pub fn p_b(&self) -> Option<f64> {
        let c = &self.cfg;
        if self.avg < c.min_th {
            None
        } else if self.avg < c.max_th {
            Some(c.max_p * (self.avg - c.min_th) / (c.max_th - c.min_th))
        } else if c.gentle && self.avg < 2.0 * c.max_th {
            Some(c.max_p + (1.0 - c.max_p) * (self.avg - c.max_th) / c.max_th)
        } else {
            Some(1.0)
        }
    }

    /// The early-drop decision of Floyd and Jacobson's Fig. 2 for the current average.
    pub fn early_drop(&mut self, rng: &mut Rng) -> bool {
        match self.p_b() {
            None => {
                self.count = -1;
                false
            }
            Some(pb) if pb >= 1.0 => {
                self.count = 0;
                true
            }
            Some(pb) => {
                self.count += 1;
                let denom = 1.0 - self.count as f64 * pb;
                let pa = if denom <= 0.0 { 1.0 } else { (pb / denom).min(1.0) };
                if rng.uniform() < pa {
                    self.count = 0;
                    true
                } else {
                    false
                }
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Disc {
    DropTail,
    // boxed: a DropTail queue (most of them, one per receiver's link) stays one cache line
    Red(Box<RedState>),
}

/// A FIFO of packet references with a discipline. Storage starts empty and doubles when full,
/// never beyond the limit, so its memory follows its high-water mark, not its limit (most
/// links' queues never come near their limit).
/// Fields in declaration order (`repr(C)`): what a DropTail arrival touches first, then the
/// discipline (RED's larger state boxed), 64 bytes in all.
/// The storage a queue takes at its first packet (then doubled as needed).
const FIRST_ROOM: usize = 4;

#[derive(Clone, Debug)]
#[repr(C)]
pub struct Queue {
    buf: VecDeque<u32>,
    limit: usize,
    /// EWMA of the waiting-queue length updated at each arrival (RED's average on RED).
    plain_avg: f64,
    plain_w: f64,
    disc: Disc,
}

impl Queue {
    pub fn new(cfg: &QueueConfig, rate_bps: u64, avg_weight: f64) -> Self {
        let limit = cfg.limit_pkts();
        let disc = match cfg {
            QueueConfig::DropTail { .. } => Disc::DropTail,
            QueueConfig::Red(r) => Disc::Red(Box::new(RedState::new(r.clone(), rate_bps))),
        };
        Queue { buf: VecDeque::new(), limit, disc, plain_avg: 0.0, plain_w: avg_weight }
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    pub fn limit(&self) -> usize {
        self.limit
    }
    /// The averaged queue length: RED's `avg` on a RED queue, else an EWMA with the channel's
    /// configured weight, updated at each arrival.
    pub fn avg(&self) -> f64 {
        match &self.disc {
            Disc::Red(r) => r.avg,
            Disc::DropTail => self.plain_avg,
        }
    }
    pub fn red(&self) -> Option<&RedState> {
        match &self.disc {
            Disc::Red(r) => Some(&**r),
            Disc::DropTail => None,
        }
    }

    /// Decide on and (if admitted) enqueue packet `pkt`.
    #[inline]
    pub fn arrive(&mut self, pkt: u32, now: Instant, idle_since: Option<Instant>, rng: &mut Rng) -> Admit {
        let q = self.buf.len();
        let mut verdict = Admit::Enqueued;
        match &mut self.disc {
            Disc::DropTail => {
                self.plain_avg = (1.0 - self.plain_w) * self.plain_avg + self.plain_w * q as f64;
            }
            Disc::Red(r) => {
                r.update_avg(q, now, idle_since);
                if r.early_drop(rng) {
                    if r.cfg.mark {
                        verdict = Admit::Marked;
                    } else {
                        return Admit::DropEarly;
                    }
                }
            }
        }
        if q >= self.limit {
            return Admit::DropForced;
        }
        if q == self.buf.capacity() {
            self.grow();
        }
        self.buf.push_back(pkt);
        verdict
    }

    /// Room for more packets: double the storage (at least [`FIRST_ROOM`]), capped at the
    /// limit, so that growth is amortised and the storage never exceeds the limit. Called
    /// only when the queue is full and below its limit.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let len = self.buf.len();
        let room = len.saturating_mul(2).max(FIRST_ROOM).min(self.limit);
        self.buf.reserve_exact(room - len);
    }

    /// Whether [`Queue::pass_through`] would take a packet now (it changes nothing).
    #[inline]
    pub fn passes_through(&self) -> bool {
        matches!(self.disc, Disc::DropTail) && self.buf.is_empty() && self.limit > 0
    }

    /// An arrival at an idle link with nothing waiting, on DropTail: account for it exactly
    /// as [`Queue::arrive`] would (it is admitted and its averaged length sees an empty
    /// queue) and return true; the caller then transmits the packet at once instead of
    /// storing it and popping it back (which would touch the queue's buffer, a cache line of
    /// its own). False, with nothing changed, on RED, with packets waiting, or with no room.
    #[inline]
    pub fn pass_through(&mut self) -> bool {
        if !self.passes_through() {
            return false;
        }
        self.plain_avg = (1.0 - self.plain_w) * self.plain_avg + self.plain_w * 0.0;
        true
    }

    /// The head packet, left in the queue.
    pub fn front(&self) -> Option<u32> {
        self.buf.front().copied()
    }
    pub fn pop(&mut self) -> Option<u32> {
        self.buf.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Long-run early-drop fraction for a fixed p_b under Fig. 2's spacing rule, computed
    /// from the distribution of the gap between drops: gap n has probability
    /// Π_{i<n}(1 − p_i)·p_n with p_i = p_b / (1 − i·p_b), capped at 1. Independent of the code
    /// under test.
    fn theory_fraction(pb: f64) -> f64 {
        let mut survive = 1.0;
        let mut mean_gap = 0.0;
        let mut n = 1.0;
        loop {
            let denom = 1.0 - n * pb;
            let p = if denom <= 0.0 { 1.0 } else { (pb / denom).min(1.0) };
            mean_gap += n * survive * p;
            survive *= 1.0 - p;
            if survive < 1e-15 {
                break;
            }
            n += 1.0;
        }
        1.0 / mean_gap
    }

    #[test]
    fn theory_helper_matches_closed_form_when_one_over_pb_is_integral() {
        // gaps uniform on 1..1/p_b − 1 → mean 1/(2 p_b) → fraction 2 p_b
        for pb in [0.01, 0.02, 0.05, 0.1, 0.25] {
            assert!((theory_fraction(pb) - 2.0 * pb).abs() < 1e-9, "{pb}");
        }
    }

    #[test]
    fn red_drop_probability_matches_theory_over_200k_arrivals() {
        let cfg = RedConfig { min_th: 5.0, max_th: 15.0, max_p: 0.1, ..Default::default() };
        let mut rng = Rng::seed_from_u64(11);
        for avg in [6.0, 8.0, 10.0, 12.5, 14.9] {
            let mut red = RedState::new(cfg.clone(), 1_000_000);
            red.avg = avg;
            let pb = red.p_b().unwrap();
            let n = 200_000;
            let drops = (0..n).filter(|_| red.early_drop(&mut rng)).count();
            let measured = drops as f64 / n as f64;
            let theory = theory_fraction(pb);
            // binomial-like standard error is below sqrt(f/n) ≈ 0.0009 at f = 0.18; 3 %
            // relative (at least 0.0015 absolute) is a > 3 σ band for every point here.
            let tol = (0.03 * theory).max(0.0015);
            assert!((measured - theory).abs() < tol, "avg {avg}: {measured} vs {theory}");
        }
    }

    #[test]
    fn red_thresholds_and_gentle() {
        let mut red = RedState::new(RedConfig::default(), 1_000_000);
        red.avg = 4.9;
        assert_eq!(red.p_b(), None);
        red.avg = 15.0;
        assert_eq!(red.p_b(), Some(1.0));
        let mut g = RedState::new(RedConfig { gentle: true, ..Default::default() }, 1_000_000);
        g.avg = 22.5; // halfway from max_th to 2 max_th: 0.1 + 0.9·0.5
        assert!((g.p_b().unwrap() - 0.55).abs() < 1e-12);
        g.avg = 30.0;
        assert_eq!(g.p_b(), Some(1.0));
        let mut rng = Rng::seed_from_u64(1);
        red.avg = 20.0;
        assert!(red.early_drop(&mut rng));
    }

    #[test]
    fn red_average_ewma_and_idle_decay() {
        let mut red = RedState::new(RedConfig { w_q: 0.5, mean_pkt_bytes: 1000, ..Default::default() }, 8_000_000);
        // s = 1 ms at 8 Mb/s
        assert_eq!(red.s, Duration::from_millis(1));
        red.update_avg(4, Instant::ZERO, None);
        assert!((red.avg - 2.0).abs() < 1e-12);
        red.update_avg(4, Instant::ZERO, None);
        assert!((red.avg - 3.0).abs() < 1e-12);
        // idle for 2 ms = 2 packet times: avg·(1 − w_q)² (Fig. 2's idle branch)
        red.update_avg(0, Instant::from_nanos(2_000_000), Some(Instant::ZERO));
        assert!((red.avg - 3.0 * 0.25).abs() < 1e-12, "{}", red.avg);
    }

    #[test]
    fn pass_through_accounts_as_an_arrival_to_an_empty_queue() {
        let cfg = QueueConfig::DropTail { limit_pkts: 3 };
        let (mut a, mut b) = (Queue::new(&cfg, 1_000_000, 0.25), Queue::new(&cfg, 1_000_000, 0.25));
        let mut rng = Rng::seed_from_u64(0);
        for q in [&mut a, &mut b] {
            q.arrive(1, Instant::ZERO, None, &mut rng);
            q.arrive(2, Instant::ZERO, None, &mut rng);
            q.pop();
            q.pop();
        }
        // a stores and pops the packet; b passes it through: the same average afterwards
        assert_eq!(a.arrive(3, Instant::ZERO, None, &mut rng), Admit::Enqueued);
        assert_eq!(a.pop(), Some(3));
        assert!(b.pass_through());
        assert_eq!(a.avg().to_bits(), b.avg().to_bits());
        assert!((b.avg() - 0.75 * 0.25).abs() < 1e-12, "{}", b.avg());
        // not with a packet waiting, not on RED, not with no room at all
        b.arrive(4, Instant::ZERO, None, &mut rng);
        assert!(!b.pass_through());
        let mut red = Queue::new(&QueueConfig::Red(RedConfig::default()), 1_000_000, 0.002);
        assert!(!red.pass_through());
        let mut none = Queue::new(&QueueConfig::DropTail { limit_pkts: 0 }, 1_000_000, 0.002);
        assert!(!none.pass_through());
    }

    #[test]
    fn storage_grows_with_the_high_water_mark_never_past_the_limit_in_fifo_order() {
        let mut q = Queue::new(&QueueConfig::DropTail { limit_pkts: 1000 }, 1_000_000, 0.002);
        let mut rng = Rng::seed_from_u64(0);
        assert_eq!(q.buf.capacity(), 0, "nothing reserved before the first packet");
        // wrap the ring before it grows: pop 3 of 4, then fill past the first room
        let (mut next_in, mut next_out) = (0u32, 0u32);
        for _ in 0..4 {
            assert_eq!(q.arrive(next_in, Instant::ZERO, None, &mut rng), Admit::Enqueued);
            next_in += 1;
        }
        let first = q.buf.capacity();
        assert!((4..1000).contains(&first), "{first}");
        for _ in 0..3 {
            assert_eq!(q.pop(), Some(next_out));
            next_out += 1;
        }
        for _ in 0..20 {
            assert_eq!(q.arrive(next_in, Instant::ZERO, None, &mut rng), Admit::Enqueued);
            next_in += 1;
        }
        assert_eq!(q.len(), 21);
        assert!(q.buf.capacity() < 64, "about twice the high-water mark: {}", q.buf.capacity());
        // fill to the limit: room for exactly the limit, not the next power of two
        while q.len() < 1000 {
            assert_eq!(q.arrive(next_in, Instant::ZERO, None, &mut rng), Admit::Enqueued);
            next_in += 1;
        }
        assert_eq!(q.buf.capacity(), 1000);
        assert_eq!(q.arrive(next_in, Instant::ZERO, None, &mut rng), Admit::DropForced);
        assert_eq!(q.buf.capacity(), 1000);
        while let Some(p) = q.pop() {
            assert_eq!(p, next_out, "first in, first out across the growths");
            next_out += 1;
        }
        assert_eq!(next_out, next_in);
    }

    #[test]
    fn droptail_limit_counts_waiting_packets() {
        let mut q = Queue::new(&QueueConfig::DropTail { limit_pkts: 3 }, 1_000_000, 0.002);
        let mut rng = Rng::seed_from_u64(0);
        let got: Vec<Admit> = (0..5).map(|i| q.arrive(i, Instant::ZERO, None, &mut rng)).collect();
        assert_eq!(got, vec![Admit::Enqueued, Admit::Enqueued, Admit::Enqueued, Admit::DropForced, Admit::DropForced]);
        assert_eq!(q.pop(), Some(0));
        assert_eq!(q.arrive(9, Instant::ZERO, None, &mut rng), Admit::Enqueued);
        assert_eq!(q.len(), 3);
    }
}
