//! §5: detecting lost packets from sequence numbers, grouping them into loss events, and the
//! weighted average loss interval that gives the loss event rate p, with §5.5's history
//! discounting (TFRC's, RFC 5348 §5.5).

use castlab_core::{Duration, Instant};

use super::TFMCC_MAX_INTERVALS;

/// Sequence numbers tracked while waiting for three later packets (a gap wider than this is
/// decided at once: our choice, bounds the tracker's memory).
const RING: usize = 256;
/// The ring's first size: it holds the undecided packets, from the lowest undecided to the
/// highest received, and doubles (up to [`RING`]) only when a gap is wider, so a receiver that
/// loses a few packets at a time keeps a small ring and nothing is allocated per packet once
/// the widest gap seen fits.
const RING_FIRST: usize = 16;

/// §5.1: which packets arrived and which are lost. A packet is lost when `dupacks` packets
/// with higher sequence numbers have arrived; its nominal arrival time is interpolated
/// between its neighbours' (§5.2).
#[derive(Clone, Debug)]
pub struct LossTracker {
    dupacks: u32,
    /// Arrival time of sequence number s at `s % ring.len()` (with s, to tell it from an older
    /// one). Its length is a power of two, at most [`RING`], above `highest - next`.
    ring: Vec<(u64, Instant, bool)>,
    highest: Option<u64>,
    /// The lowest sequence number not yet decided (arrived, or lost).
    next: u64,
    /// The last decided packet that arrived: S_before, T_before.
    before: Option<(u64, Instant)>,
}

/// A packet found lost, with its interpolated arrival time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lost {
    pub seq: u64,
    pub at: Instant,
}

impl LossTracker {
    pub fn new(dupacks: u32) -> Self {
        LossTracker { dupacks, ring: vec![(0, Instant::ZERO, false); RING_FIRST], highest: None, next: 0, before: None }
    }

    pub fn highest(&self) -> Option<u64> {
        self.highest
    }

    fn slot(&self, s: u64) -> usize {
        (s % self.ring.len() as u64) as usize
    }

    /// The address of the slot the next packet in order takes: a prefetch hint
    /// (`Agent::packet_lines`).
    pub(super) fn next_line(&self) -> usize {
        let s = self.highest.map_or(0, |h| h.wrapping_add(1));
        if self.ring.is_empty() {
            return 0;
        }
        self.ring.get(self.slot(s)).map_or(0, |e| e as *const (u64, Instant, bool) as usize)
    }

    fn has(&self, s: u64) -> Option<Instant> {
        let (q, t, ok) = self.ring[self.slot(s)];
        (ok && q == s).then_some(t)
    }

    /// The ring's length now (a power of two, at most [`RING`]).
    pub fn capacity(&self) -> usize {
        self.ring.len()
    }

    /// Grow the ring until sequence number `seq` fits beside the undecided ones (`next` up to
    /// the highest): each arrived one moves to its slot in the larger ring.
    fn fit(&mut self, seq: u64) {
        let mut len = self.ring.len();
        while seq >= self.next + len as u64 && len < RING {
            len *= 2;
        }
        if len == self.ring.len() {
            return;
        }
        let mut ring = vec![(0, Instant::ZERO, false); len];
        if let Some(h) = self.highest {
            for s in self.next..=h {
                if let Some(t) = self.has(s) {
                    ring[(s % len as u64) as usize] = (s, t, true);
                }
            }
        }
        self.ring = ring;
    }

    /// The first arrived packet after `s` (up to the highest): S_after, T_after, and how many
    /// arrived after `s`.
    fn after(&self, s: u64) -> (Option<(u64, Instant)>, u32) {
        let Some(h) = self.highest else { return (None, 0) };
        let mut first = None;
        let mut n = 0;
        let mut q = s + 1;
        while q <= h && q < s + RING as u64 {
            if let Some(t) = self.has(q) {
                first = first.or(Some((q, t)));
                n += 1;
                if n >= self.dupacks {
                    break;
                }
            }
            q += 1;
        }
        (first, n)
    }

    /// Packet `seq` arrived at `now`; `on_lost` is called for each packet this reveals as
    /// lost, in sequence order. Returns false for a duplicate or a packet already counted lost.
    pub fn arrive(&mut self, seq: u64, now: Instant, mut on_lost: impl FnMut(Lost)) -> bool {
        let Some(h) = self.highest else {
            // §4.1: the stream starts at the first packet seen.
            self.highest = Some(seq);
            self.next = seq + 1;
            self.before = Some((seq, now));
            let i = self.slot(seq);
            self.ring[i] = (seq, now, true);
            return true;
        };
        if seq < self.next || self.has(seq).is_some() {
            return false;
        }
        // Keep the undecided window inside the ring: decide the oldest ones now.
        while seq >= self.next + RING as u64 {
            self.decide(true, &mut on_lost);
        }
        self.fit(seq);
        let i = self.slot(seq);
        self.ring[i] = (seq, now, true);
        self.highest = Some(h.max(seq));
        while self.next <= self.highest.unwrap_or(0) {
            if !self.decide(false, &mut on_lost) {
                break;
            }
        }
        true
    }

    /// Decide `next`: arrived, lost (or `force`d lost); false when it must wait.
    fn decide(&mut self, force: bool, on_lost: &mut impl FnMut(Lost)) -> bool {
        let s = self.next;
        if let Some(t) = self.has(s) {
            self.before = Some((s, t));
            self.next += 1;
            return true;
        }
        let (after, n) = self.after(s);
        if n < self.dupacks && !force {
            return false;
        }
        // §5.2: T_loss = T_before + (T_after - T_before)·(S_loss - S_before)/(S_after - S_before).
        let at = match (self.before, after) {
            (Some((sb, tb)), Some((sa, ta))) => {
                let frac = (s - sb) as f64 / (sa - sb) as f64;
                let (tb, ta) = (tb.as_nanos() as f64, ta.as_nanos() as f64);
                Instant::from_nanos((tb + (ta - tb) * frac).max(0.0) as u64)
            }
            (Some((_, tb)), None) => tb,
            (None, Some((_, ta))) => ta,
            (None, None) => Instant::ZERO,
        };
        self.next += 1;
        on_lost(Lost { seq: s, at });
        true
    }
}

/// §5.2-§5.6: loss events and the average loss interval.
///
/// History discounting (§5.5, as RFC 5348 §5.5): each closed interval I_i carries a discount
/// factor DF_i (1 when it closes), and a general factor DF follows the open interval I_0: when
/// I_0 exceeds twice the weighted mean I_mean of I_1..I_n, DF = max(2·I_mean/I_0, THRESHOLD),
/// else 1. DF scales the weight of every closed interval against I_0's in the average that
/// includes I_0, and is folded into the DF_i when a new loss event closes I_0. DF is a function
/// of I_0 and the history, so it is computed where it is used, which is the same as updating
/// it at every arrival.
#[derive(Clone, Debug)]
pub struct ReceiverLossHistory {
    n: usize,
    weights: [f64; TFMCC_MAX_INTERVALS],
    /// Closed intervals I_1..I_k, most recent first (packets; the synthetic one may be a
    /// fraction).
    closed: [f64; TFMCC_MAX_INTERVALS],
    /// DF_1..DF_k, the discount factor of each closed interval (§5.5).
    discount: [f64; TFMCC_MAX_INTERVALS],
    /// THRESHOLD of §5.5, the smallest DF; None: no history discounting.
    discount_floor: Option<f64>,
    k: usize,
    /// Start of the most recent loss event: S_A and its nominal time T_old.
    last: Option<(u64, Instant)>,
    /// Index in `closed` of the synthetic interval of §5.6 while it is there.
    synthetic: Option<usize>,
    /// Loss events so far.
    pub events: u64,
}

impl ReceiverLossHistory {
    /// A history averaging `n` intervals with §5.4's weights.
    pub fn new(n: usize) -> Self {
        let n = n.clamp(2, TFMCC_MAX_INTERVALS);
        let mut weights = [0.0; TFMCC_MAX_INTERVALS];
        let half = n as f64 / 2.0;
        for (i, w) in weights.iter_mut().enumerate().take(n) {
            // §5.4: w_i = 1 for i < n/2, else 1 - (i - (n/2 - 1))/(n/2 + 1).
            *w = if (i as f64) < half { 1.0 } else { 1.0 - (i as f64 - (half - 1.0)) / (half + 1.0) };
        }
        ReceiverLossHistory {
            n,
            weights,
            closed: [0.0; TFMCC_MAX_INTERVALS],
            discount: [1.0; TFMCC_MAX_INTERVALS],
            discount_floor: None,
            k: 0,
            last: None,
            synthetic: None,
            events: 0,
        }
    }

    /// The same with §5.5's history discounting, DF never below `threshold` (in (0, 1]).
    pub fn with_discounting(n: usize, threshold: f64) -> Self {
        ReceiverLossHistory {
            discount_floor: Some(threshold.clamp(f64::MIN_POSITIVE, 1.0)),
            ..ReceiverLossHistory::new(n)
        }
    }

    /// DF_1..DF_k, most recent first.
    pub fn discounts(&self) -> &[f64] {
        &self.discount[..self.k]
    }

    /// §5.5's I_mean: the weighted mean of the closed intervals I_1..I_n, each weight w_(i-1)
    /// times DF_i (0 with no closed interval).
    fn closed_mean(&self) -> f64 {
        let (mut t, mut w) = (0.0, 0.0);
        for ((ii, wi), df) in self.closed.iter().zip(&self.weights[..self.k.min(self.n)]).zip(&self.discount) {
            t += ii * wi * df;
            w += wi * df;
        }
        if w > 0.0 {
            t / w
        } else {
            0.0
        }
    }

    /// §5.5's general discount factor DF for an open interval of `i0` packets: 1 without
    /// discounting or while I_0 ≤ 2·I_mean, else max(2·I_mean/I_0, THRESHOLD).
    pub fn general_discount(&self, i0: f64) -> f64 {
        let Some(floor) = self.discount_floor else { return 1.0 };
        let mean = self.closed_mean();
        if self.k == 0 || i0 <= 2.0 * mean {
            1.0
        } else {
            (2.0 * mean / i0).max(floor)
        }
    }

    pub fn weights(&self) -> &[f64] {
        &self.weights[..self.n]
    }

    /// Whether any loss event has been seen.
    pub fn has_loss(&self) -> bool {
        self.last.is_some()
    }

    fn push(&mut self, interval: f64) {
        // §5.5: the general DF of the interval now closing is folded into every older DF_i.
        let df = self.general_discount(interval);
        for d in &mut self.discount[..self.k] {
            *d *= df;
        }
        // shift: I_i -> I_(i+1), the oldest forgotten; the new I_1 starts with DF_1 = 1
        let keep = self.n.min(TFMCC_MAX_INTERVALS);
        for i in (1..keep).rev() {
            self.closed[i] = self.closed[i - 1];
            self.discount[i] = self.discount[i - 1];
        }
        self.closed[0] = interval;
        self.discount[0] = 1.0;
        self.k = (self.k + 1).min(keep);
        self.synthetic = self.synthetic.map(|i| i + 1).filter(|&i| i < self.k);
    }

    /// A packet found lost at nominal time `at` with RTT `rtt` (§5.2): a new loss event when
    /// it lies more than an RTT after the start of the last one. For the first event the
    /// history is seeded with `first_interval` (§5.6), computed only then. Returns whether
    /// a new event began. A `first_interval` below 1 seeds nothing.
    pub fn on_lost(&mut self, seq: u64, at: Instant, rtt: Duration, first_interval: impl FnOnce() -> f64) -> bool {
        match self.last {
            None => {
                // a seed below one packet is none: the first closed interval is then the
                // real one that the second event ends
                let l0 = first_interval();
                if l0 >= 1.0 {
                    self.push(l0);
                    self.synthetic = Some(0);
                }
            }
            Some((s_old, t_old)) => {
                if t_old + rtt >= at || seq <= s_old {
                    return false;
                }
                // §5.3: interval A holds S_B - S_A packets.
                self.push((seq - s_old) as f64);
            }
        }
        self.last = Some((seq, at));
        self.events += 1;
        true
    }

    /// §5.6: scale the synthetic interval by (R/R_max)² when the first RTT is measured while
    /// it is still in the history.
    pub fn scale_synthetic(&mut self, factor: f64) {
        if let Some(i) = self.synthetic {
            self.closed[i] = (self.closed[i] * factor).max(1.0);
        }
    }

    /// I_0 with `highest` the highest sequence number received.
    pub fn open_interval(&self, highest: u64) -> f64 {
        self.last.map_or(0.0, |(s, _)| (highest + 1).saturating_sub(s) as f64)
    }

    /// §5.4: the loss event rate p = 1/I_mean (0 before the first loss event). With fewer
    /// than n closed intervals each sum is normalised by the weights it used. With §5.5's
    /// discounting, I_i (i ≥ 1) weighs w·DF_i, and in the average with I_0 also DF.
    pub fn loss_event_rate(&self, highest: u64) -> f64 {
        if self.k == 0 {
            return 0.0;
        }
        let i0 = self.open_interval(highest);
        let df = self.general_discount(i0);
        let w = &self.weights;
        let d = &self.discount;
        // I_tot0: I_0..I_(n-1) with w_0..w_(n-1); I_tot1: I_1..I_n with w_0..w_(n-1).
        let (mut t0, mut w0) = (i0 * w[0], w[0]);
        for ((ii, wi), di) in self.closed.iter().zip(&w[1..self.n.min(self.k + 1)]).zip(d) {
            t0 += ii * wi * di * df;
            w0 += wi * di * df;
        }
        let (mut t1, mut w1) = (0.0, 0.0);
        for ((ii, wi), di) in self.closed.iter().zip(&w[..self.k.min(self.n)]).zip(d) {
            t1 += ii * wi * di;
            w1 += wi * di;
        }
        let mean = (t0 / w0).max(t1 / w1);
        if mean > 0.0 {
            1.0 / mean
        } else {
            0.0
        }
    }

    /// The closed intervals, most recent first.
    pub fn intervals(&self) -> &[f64] {
        &self.closed[..self.k]
    }
}
