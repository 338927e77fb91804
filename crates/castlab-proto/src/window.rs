//! The worst-case windowed loss of McCanne, Jacobson and Vetterli (1996, §4.2), computed
//! online while a receiver runs, so a sink need not keep every arrival.
//!
//! The definition is the one `castlab_core::metrics::worst_window_loss` computes offline from
//! full records, and this must give the same number to the last bit (a test in
//! `crates/castlab-sim/tests/streaming.rs` checks it on random processes): a window `[t, t + W)`
//! slides over `t ∈ [T_first, max(T_first, T_last − W)]`; its loss rate is
//! `lost / (lost + received)` over the events inside it; the result is the maximum over all
//! positions, NaN when no window holds an event.
//!
//! How it runs online. The content of the window only changes where `t` passes an event time
//! `t_i` or where `t + W` does (`t = t_i − W`), so those breakpoints (clamped into the range)
//! give every content the window takes. A position `t` is *final* once an event at or after
//! `t + W` has been seen: events come in time order, so nothing later can enter `[t, t + W)`.
//! Final breakpoints are evaluated in increasing order with two pointers and running sums,
//! and events behind the current position are dropped. What stays in memory is the events of
//! the last `W` seconds (one entry per distinct event time), so memory is bounded by the
//! arrival rate times the window, not by the run's length. The last positions (within `W` of
//! the end) are only final when the run is over: [`WorstWindowLoss::value`] evaluates them on a
//! copy of the cursor, without changing the state, so it can be read at any time and the run
//! continued.

use std::collections::VecDeque;

/// Running state of the worst-case loss over windows of one length.
#[derive(Clone, Debug)]
pub struct WorstWindowLoss {
    window_ns: u64,
    first_ns: Option<u64>,
    /// Events not yet behind every pending position: (time, received, lost), one per time.
    events: VecDeque<(u64, u64, u64)>,
    /// Absolute index of `events[0]`.
    base: usize,
    cur: Cursor,
}

/// Where the evaluation stands (absolute event indices). Copy, so the end of the run can be
/// evaluated on a copy.
#[derive(Clone, Copy, Debug)]
struct Cursor {
    /// Next event whose own time is a pending position.
    ia: usize,
    /// Next event whose time minus `W` is a pending position.
    ib: usize,
    /// The window's events are `[lo, hi)`; their sums.
    lo: usize,
    hi: usize,
    received: u128,
    lost: u128,
    best: f64,
}

impl WorstWindowLoss {
    /// `window_ns` must be positive (the callers check it and name the field).
    pub fn new(window_ns: u64) -> Self {
        WorstWindowLoss {
            window_ns: window_ns.max(1),
            first_ns: None,
            events: VecDeque::new(),
            base: 0,
            cur: Cursor { ia: 0, ib: 0, lo: 0, hi: 0, received: 0, lost: 0, best: f64::NAN },
        }
    }

    pub fn window_ns(&self) -> u64 {
        self.window_ns
    }

    /// Events held now (for memory checks).
    pub fn held(&self) -> usize {
        self.events.len()
    }

    /// Heap bytes held (the events' allocated capacity).
    pub fn heap_bytes(&self) -> usize {
        self.events.capacity() * std::mem::size_of::<(u64, u64, u64)>()
    }

    /// At `t_ns` (not before the previous event), `received` packets arrived and `lost` losses
    /// were detected.
    pub fn push(&mut self, t_ns: u64, received: u64, lost: u64) {
        if received == 0 && lost == 0 {
            return;
        }
        if self.first_ns.is_none() {
            self.first_ns = Some(t_ns);
        }
        match self.events.back_mut() {
            // Same time as the last event: no window position can have it inside yet (it is
            // at or after every final position's window end), so it merges.
            Some(b) if b.0 == t_ns => {
                b.1 += received;
                b.2 += lost;
            }
            Some(b) => {
                debug_assert!(b.0 < t_ns, "events must come in time order");
                self.events.push_back((t_ns, received, lost));
            }
            None => self.events.push_back((t_ns, received, lost)),
        }
        // Positions t with t + W ≤ t_ns are final.
        let limit = t_ns.checked_sub(self.window_ns);
        if let Some(limit) = limit {
            let mut cur = self.cur;
            self.advance(&mut cur, limit);
            self.cur = cur;
            // Events before the window's start are behind every pending position.
            while self.base < self.cur.lo {
                self.events.pop_front();
                self.base += 1;
            }
        }
    }

    /// The worst-case loss over the events pushed so far, as if the run ended now.
    pub fn value(&self) -> f64 {
        let Some(first) = self.first_ns else { return f64::NAN };
        let last = self.events.back().map_or(first, |e| e.0);
        let end = first.max(last.saturating_sub(self.window_ns));
        let mut cur = self.cur;
        self.advance(&mut cur, end);
        self.eval(&mut cur, end);
        cur.best
    }

    fn time(&self, i: usize) -> u64 {
        self.events[i - self.base].0
    }

    /// Evaluate, in increasing order, every pending breakpoint at or before `limit`.
    fn advance(&self, cur: &mut Cursor, limit: u64) {
        let first = self.first_ns.unwrap_or(0);
        let end = self.base + self.events.len();
        loop {
            let a = (cur.ia < end).then(|| self.time(cur.ia));
            let b = (cur.ib < end).then(|| self.time(cur.ib).saturating_sub(self.window_ns).max(first));
            let (t, from_a) = match (a, b) {
                (Some(a), Some(b)) if a <= b => (a, true),
                (Some(_), Some(b)) => (b, false),
                (Some(a), None) => (a, true),
                (None, Some(b)) => (b, false),
                (None, None) => break,
            };
            if t > limit {
                break;
            }
            if from_a {
                cur.ia += 1;
            } else {
                cur.ib += 1;
            }
            self.eval(cur, t);
        }
    }

    /// The window `[t, t + W)`: move the pointers (positions only increase) and take its rate.
    fn eval(&self, cur: &mut Cursor, t: u64) {
        let end = self.base + self.events.len();
        while cur.lo < end && self.time(cur.lo) < t {
            if cur.lo < cur.hi {
                let e = self.events[cur.lo - self.base];
                cur.received -= u128::from(e.1);
                cur.lost -= u128::from(e.2);
            }
            cur.lo += 1;
        }
        if cur.hi < cur.lo {
            cur.hi = cur.lo;
            cur.received = 0;
            cur.lost = 0;
        }
        let stop = t.saturating_add(self.window_ns);
        while cur.hi < end && self.time(cur.hi) < stop {
            let e = self.events[cur.hi - self.base];
            cur.received += u128::from(e.1);
            cur.lost += u128::from(e.2);
            cur.hi += 1;
        }
        if cur.received + cur.lost > 0 {
            // the same expression as the offline metric, so the same f64
            cur.best = cur.best.max(cur.lost as f64 / (cur.received + cur.lost) as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn hand_made_process() {
        // 10 arrivals a second for 100 s with one loss of 5 at 50 s: every 1 s window holds
        // exactly 10 arrivals of the 0.1 s grid, so a window holding the loss has rate 5/15.
        let mut w = WorstWindowLoss::new(S);
        for k in 0..1000u64 {
            let t = k * S / 10;
            if t == 50 * S {
                w.push(t, 0, 5);
            }
            w.push(t, 1, 0);
        }
        let v = w.value();
        assert!((v - 5.0 / 15.0).abs() < 1e-12, "{v}");
        // memory: the last ~1 s of events, not the run
        assert!(w.held() <= 12, "{}", w.held());
    }

    #[test]
    fn empty_is_nan_and_value_does_not_change_state() {
        let mut w = WorstWindowLoss::new(S);
        assert!(w.value().is_nan());
        w.push(0, 1, 0);
        w.push(S / 2, 0, 1);
        assert!((w.value() - 0.5).abs() < 1e-12);
        assert!((w.value() - 0.5).abs() < 1e-12);
        // the run so far is shorter than a window: the only position is [0, 1 s)
        w.push(3 * S, 1, 0);
        // now positions run over [0, 2 s]: [0.5 s, 1.5 s) holds the loss alone
        assert_eq!(w.value(), 1.0);
    }
}
