//! Stage 5b, the TFRC module of §4.1: the loss-interval history with its weights and discount.
//! Padhye's throughput equation, which turns its average into a rate, is
//! [`crate::equations::padhye_bits_per_s`].

use super::*;

// ------------------------------------------------------------------------------------------
// Stage 5b: the TFRC module (§4.1)
// ------------------------------------------------------------------------------------------

/// Loss intervals counted at the source from the LE stream (§4.1). `s_0` is the number of
/// packets sent since the most recent LE; `s_1, s_2, ...` the earlier intervals, newest first.
/// The first interval runs from the start of the transfer to the first LE.
#[derive(Clone, Debug)]
pub struct SourceLossHistory {
    s0: u64,
    /// s_1 at the front.
    intervals: VecDeque<u64>,
    weights: Vec<f64>,
    alpha: f64,
    cap: usize,
    /// Total number of loss intervals N since the start (the deque keeps the newest `cap`).
    pub total: u64,
}

impl SourceLossHistory {
    pub fn new(weights: Vec<f64>, alpha: f64, cap: usize) -> Self {
        let cap = cap.max(weights.len()).max(1);
        SourceLossHistory { s0: 0, intervals: VecDeque::with_capacity(cap), weights, alpha, cap, total: 0 }
    }
    pub fn from_config(cfg: &LesbccConfig) -> Self {
        SourceLossHistory::new(cfg.tfrc_weights.clone(), cfg.tfrc_alpha, cfg.tfrc_history)
    }
    /// A packet was sent.
    pub fn on_packet(&mut self) {
        self.s0 += 1;
    }
    /// A loss event: s_0 becomes s_1.
    pub fn on_loss_event(&mut self) {
        if self.intervals.len() == self.cap {
            self.intervals.pop_back();
        }
        self.intervals.push_front(self.s0);
        self.s0 = 0;
        self.total += 1;
    }
    pub fn s0(&self) -> u64 {
        self.s0
    }
    /// A loss event after `packets` packets since the previous one (for hand-made histories).
    pub fn push_interval(&mut self, packets: u64) {
        self.s0 = packets;
        self.on_loss_event();
    }
    /// Set s_0, the packets since the most recent loss event.
    pub fn set_s0(&mut self, packets: u64) {
        self.s0 = packets;
    }
    /// s_k for k >= 0 (None beyond the history).
    pub fn s(&self, k: usize) -> Option<u64> {
        if k == 0 {
            Some(self.s0)
        } else {
            self.intervals.get(k - 1).copied()
        }
    }
    /// Number of loss intervals held (N, up to the history cap).
    pub fn n_intervals(&self) -> usize {
        self.intervals.len()
    }
    /// ŝ_i of §4.1:
    /// (Σ_{k=1..n} s_{i+k−1} w_k + Σ_{k=i+n..N} s_k α^{k−i−n+1}) /
    /// (Σ_{k=1..n} w_k + Σ_{k=i+n..N} α^{k−i−n+1}).
    /// Short histories (§4.1): the weights of the missing terms are 0 (N < n: w_{N+1..n} = 0,
    /// and the discounted tail is empty, i.e. α = 0, while N <= n). None when no term exists.
    pub fn average(&self, i: usize) -> Option<f64> {
        let n = self.weights.len();
        let big_n = self.intervals.len();
        let (mut num, mut den) = (0.0, 0.0);
        for k in 1..=n {
            let idx = i + k - 1;
            // s_idx exists up to idx = N
            let Some(s) = self.s(idx) else { break };
            let w = self.weights[k - 1];
            num += s as f64 * w;
            den += w;
        }
        let mut a = self.alpha;
        for k in (i + n)..=big_n {
            let Some(s) = self.s(k) else { break };
            num += s as f64 * a;
            den += a;
            a *= self.alpha;
        }
        if den > 0.0 {
            Some(num / den)
        } else {
            None
        }
    }
}
