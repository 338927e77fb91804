//! The arrivals a TFMCC receiver counts its receive rate over (RFC 4654 §4.3.4's k RTTs, §5.6's
//! last RTT): each packet's arrival time and size, oldest first, with the sum of the sizes that
//! arrived after a given time.
//!
//! Every receiver of a session keeps these for several of its windows, so at 10^5 receivers
//! their bytes are most of the run's memory, and the sum over the k·R window is read at every
//! packet. So the times (8 bytes each) are kept apart from the sizes, which are kept as runs of
//! equal sizes (a session's data packets are all of one size: one run), and the oldest arrival
//! of the last window read is remembered, so that the next read of a window that moved little
//! walks only the arrivals that entered or left it. The sums are integers: the same bytes as
//! summing every arrival of the window, whatever the order.

use std::collections::VecDeque;

use castlab_core::Instant;

/// Arrival times and sizes, oldest first; arrivals are numbered from 0 in the order kept.
#[derive(Debug, Default)]
pub(super) struct Arrivals {
    /// When each kept arrival came, oldest first (never decreasing: a receiver's clock).
    times: VecDeque<Instant>,
    /// The number of `times[0]` (arrivals kept so far minus those still kept).
    front: u64,
    /// Runs of equal sizes: the number of the run's first arrival and the size of every
    /// arrival from it to the next run's first; the first run starts at or before `front`.
    sizes: VecDeque<(u64, u32)>,
    /// The number of the oldest arrival inside the window [`Arrivals::bytes_after_tracked`]
    /// read last (`front` ..= the end).
    cursor: u64,
}

impl Arrivals {
    pub(super) fn with_capacity(n: usize) -> Self {
        Arrivals { times: VecDeque::with_capacity(n), ..Default::default() }
    }

    pub(super) fn len(&self) -> usize {
        self.times.len()
    }

    /// Slots the times' queue holds (its allocation).
    pub(super) fn capacity(&self) -> usize {
        self.times.capacity()
    }

    pub(super) fn shrink_to(&mut self, n: usize) {
        self.times.shrink_to(n);
    }

    /// The addresses of the kept times a packet reads next (the oldest, and the oldest of the
    /// last window read), 0 where there is none: a prefetch hint (`Agent::packet_lines`).
    pub(super) fn lines(&self) -> [usize; 2] {
        let at = |i: u64| self.times.get(i as usize).map_or(0, |t| t as *const Instant as usize);
        [at(0), at(self.cursor.saturating_sub(self.front))]
    }

    /// The oldest kept arrival's time.
    pub(super) fn front_time(&self) -> Option<Instant> {
        self.times.front().copied()
    }

    fn end(&self) -> u64 {
        self.front + self.times.len() as u64
    }

    /// Forget the oldest kept arrival.
    pub(super) fn pop_front(&mut self) {
        if self.times.pop_front().is_none() {
            return;
        }
        self.front += 1;
        while self.sizes.len() >= 2 && self.sizes[1].0 <= self.front {
            self.sizes.pop_front();
        }
        self.cursor = self.cursor.max(self.front);
    }

    /// Keep an arrival of `bytes` at `at` (no earlier than the last one kept).
    pub(super) fn push_back(&mut self, at: Instant, bytes: u32) {
        let n = self.end();
        self.times.push_back(at);
        if self.sizes.back().is_none_or(|&(_, b)| b != bytes) {
            self.sizes.push_back((n, bytes));
        }
    }

    /// The bytes of arrivals `from` ..< `to` (numbers).
    fn bytes_between(&self, from: u64, to: u64) -> u64 {
        let mut sum = 0;
        let mut next = to;
        for &(first, size) in self.sizes.iter().rev() {
            if next <= from {
                break;
            }
            let lo = first.max(from);
            if next > lo {
                sum += (next - lo) * u64::from(size);
            }
            next = first;
        }
        sum
    }

    /// The bytes of the kept arrivals later than `after`.
    pub(super) fn bytes_after(&self, after: Instant) -> u64 {
        let inside = self.times.iter().rev().take_while(|&&t| t > after).count() as u64;
        let end = self.end();
        self.bytes_between(end - inside, end)
    }

    /// [`Arrivals::bytes_after`], found by moving the oldest arrival of the window read last
    /// to the oldest later than `after`: for a window read at every arrival, whose start moves
    /// little between two reads.
    pub(super) fn bytes_after_tracked(&mut self, after: Instant) -> u64 {
        let end = self.end();
        let mut c = self.cursor.clamp(self.front, end);
        while c > self.front && self.times[(c - 1 - self.front) as usize] > after {
            c -= 1;
        }
        while c < end && self.times[(c - self.front) as usize] <= after {
            c += 1;
        }
        self.cursor = c;
        self.bytes_between(c, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use castlab_core::Rng;

    /// The reference: every kept arrival in a plain list, summed one by one.
    fn plain_bytes_after(kept: &[(u64, u32)], after: u64) -> u64 {
        kept.iter().filter(|&&(t, _)| t > after).map(|&(_, b)| u64::from(b)).sum()
    }

    #[test]
    fn sums_over_any_window_equal_the_plain_sum_of_the_kept_arrivals() {
        // random arrivals (several at one time at times), sizes from one, two or many values,
        // pops from the front, and windows that grow, shrink, jump or hold nothing
        for (seed, sizes) in [(1u64, 1u64), (2, 2), (3, 7), (4, 1_000)] {
            let mut rng = Rng::seed_from_u64(seed);
            let mut a = Arrivals::with_capacity(4);
            let mut kept: Vec<(u64, u32)> = Vec::new();
            let mut now = 0u64;
            for _ in 0..20_000 {
                let r = rng.uniform();
                if r < 0.5 {
                    if rng.uniform() < 0.8 {
                        now += rng.below(2_000);
                    }
                    let b = 1 + rng.below(sizes) as u32 * 97;
                    a.push_back(Instant::from_nanos(now), b);
                    kept.push((now, b));
                } else if r < 0.7 {
                    let n = rng.below(3);
                    for _ in 0..n {
                        a.pop_front();
                        if !kept.is_empty() {
                            kept.remove(0);
                        }
                    }
                } else {
                    let after = now.saturating_sub(rng.below(60_000));
                    let want = plain_bytes_after(&kept, after);
                    assert_eq!(a.bytes_after(Instant::from_nanos(after)), want);
                    assert_eq!(a.bytes_after_tracked(Instant::from_nanos(after)), want);
                }
                assert_eq!(a.len(), kept.len());
                assert_eq!(a.front_time().map(|t| t.as_nanos()), kept.first().map(|k| k.0));
            }
            // one run of sizes per change of size at most, and only those still kept
            assert!(a.sizes.len() <= kept.len().max(1), "{} runs for {}", a.sizes.len(), kept.len());
        }
    }

    #[test]
    fn arrivals_of_one_size_keep_one_run() {
        let mut a = Arrivals::default();
        for k in 0..1_000u64 {
            a.push_back(Instant::from_nanos(k), 1000);
            if k % 3 == 0 {
                a.pop_front();
            }
        }
        assert_eq!(a.sizes.len(), 1);
        assert_eq!(a.bytes_after(Instant::from_nanos(899)), 100 * 1000);
        assert_eq!(a.bytes_after_tracked(Instant::from_nanos(899)), 100 * 1000);
        // empty, then kept again
        while a.len() > 0 {
            a.pop_front();
        }
        assert_eq!(a.bytes_after_tracked(Instant::ZERO), 0);
        a.push_back(Instant::from_nanos(5_000), 10);
        assert_eq!(a.bytes_after_tracked(Instant::from_nanos(4_999)), 10);
        assert_eq!(a.bytes_after(Instant::from_nanos(5_000)), 0);
    }
}
