//! Metrics computed once, in Rust: by the simulator, the protocols' readers and Python.

/// Worst-case windowed loss rate (McCanne, Jacobson and Vetterli 1996, §4.2): slide a window
/// of length `window_ns` over a receiver's arrival process; within each window position the
/// loss rate is `lost / (lost + received)`; return the maximum over all positions.
///
/// The process is given as events sorted by time: at `times_ns[i]`, `received[i]` packets
/// arrived and `lost[i]` losses were detected. A window `[t, t + W)` slides over
/// `t ∈ [T_first, max(T_first, T_last − W)]`, so every position lies over observed time (a
/// window is never placed over the silence after the last event, which would inflate the
/// rate). The window's content only changes where `t` passes an event (`t = t_i`, the event
/// leaves just after) or where `t + W` passes one (`t = t_j − W`, it enters just after), so the
/// contents at those breakpoints (and the range's ends) are every content the window takes.
/// O(n) with two pointers after an O(n) merge. Returns NaN when no window holds a packet (an
/// empty process: nothing received and nothing lost has no loss rate, not a loss rate of 0).
/// Sums are 128-bit, so counts near 2^64 do not wrap.
pub fn worst_window_loss(times_ns: &[u64], received: &[u64], lost: &[u64], window_ns: u64) -> f64 {
    let n = times_ns.len();
    assert!(received.len() == n && lost.len() == n, "column lengths differ");
    if n == 0 {
        return f64::NAN;
    }
    debug_assert!(times_ns.windows(2).all(|w| w[0] <= w[1]), "times must be sorted");
    let w = window_ns.max(1);
    let t_first = times_ns[0];
    let t_last = times_ns[n - 1];
    let t_end = t_first.max(t_last.saturating_sub(w));
    // prefix sums
    let mut cr: Vec<u128> = Vec::with_capacity(n + 1);
    let mut cl: Vec<u128> = Vec::with_capacity(n + 1);
    cr.push(0);
    cl.push(0);
    for i in 0..n {
        cr.push(cr[i] + u128::from(received[i]));
        cl.push(cl[i] + u128::from(lost[i]));
    }
    // The content is constant on each interval (b, b'] between consecutive breakpoints
    // b ∈ {t_i} ∪ {t_i − W}, and equals the content at its right end b'. So evaluate at every
    // breakpoint and at the range's ends, all clamped into [t_first, t_end]. Both breakpoint
    // lists are sorted; merge them.
    let a = times_ns.iter().map(|&t| t.clamp(t_first, t_end));
    let b = times_ns.iter().map(|&t| t.saturating_sub(w).clamp(t_first, t_end));
    let mut cands: Vec<u64> = Vec::with_capacity(2 * n + 2);
    cands.push(t_first);
    {
        let (mut ia, mut ib) = (a.peekable(), b.peekable());
        loop {
            match (ia.peek(), ib.peek()) {
                (Some(&x), Some(&y)) => {
                    if x <= y {
                        cands.push(x);
                        ia.next();
                    } else {
                        cands.push(y);
                        ib.next();
                    }
                }
                (Some(&x), None) => {
                    cands.push(x);
                    ia.next();
                }
                (None, Some(&y)) => {
                    cands.push(y);
                    ib.next();
                }
                (None, None) => break,
            }
        }
    }
    cands.push(t_end);
    let mut best = f64::NAN;
    let (mut lo, mut hi) = (0usize, 0usize); // events in [lo, hi) lie in [t, t + W)
    let mut last = u64::MAX;
    for &t in &cands {
        if t == last {
            continue;
        }
        last = t;
        while lo < n && times_ns[lo] < t {
            lo += 1;
        }
        if hi < lo {
            hi = lo;
        }
        while hi < n && times_ns[hi] < t.saturating_add(w) {
            hi += 1;
        }
        let r = cr[hi] - cr[lo];
        let l = cl[hi] - cl[lo];
        if r + l > 0 {
            // f64::max ignores a NaN operand: the first non-empty window replaces it
            best = best.max(l as f64 / (r + l) as f64);
        }
    }
    best
}

/// Merge a receiver's arrival times and loss rows into one sorted event process for
/// [`worst_window_loss`]: arrivals count one received packet each; loss rows carry counts.
pub fn arrival_process(arr_ns: &[u64], loss_ns: &[u64], loss_count: &[u64]) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let mut t = Vec::with_capacity(arr_ns.len() + loss_ns.len());
    let mut r = Vec::with_capacity(t.capacity());
    let mut l = Vec::with_capacity(t.capacity());
    let (mut i, mut j) = (0, 0);
    while i < arr_ns.len() || j < loss_ns.len() {
        // at equal times put the loss first (it was revealed by the arrival at that instant)
        if j < loss_ns.len() && (i >= arr_ns.len() || loss_ns[j] <= arr_ns[i]) {
            t.push(loss_ns[j]);
            r.push(0);
            l.push(loss_count[j]);
            j += 1;
        } else {
            t.push(arr_ns[i]);
            r.push(1);
            l.push(0);
            i += 1;
        }
    }
    (t, r, l)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    /// Brute force over a fine grid of window positions: the reference for the fast version.
    fn brute(times: &[u64], rec: &[u64], lost: &[u64], w: u64, step: u64) -> f64 {
        let t0 = times[0];
        let t1 = t0.max(times[times.len() - 1].saturating_sub(w));
        let mut best = 0.0f64;
        let mut t = t0;
        while t <= t1 {
            let (mut r, mut l) = (0, 0);
            for i in 0..times.len() {
                if times[i] >= t && times[i] < t + w {
                    r += rec[i];
                    l += lost[i];
                }
            }
            if r + l > 0 {
                best = best.max(l as f64 / (r + l) as f64);
            }
            t += step;
        }
        best
    }

    #[test]
    fn steady_loss_is_the_long_run_fraction() {
        // one packet per 10 ms for 100 s; every 10th is lost
        let mut t = vec![];
        let mut r = vec![];
        let mut l = vec![];
        for k in 0..10_000u64 {
            t.push(k * S / 100);
            if k % 10 == 9 {
                r.push(0);
                l.push(1);
            } else {
                r.push(1);
                l.push(0);
            }
        }
        let v = worst_window_loss(&t, &r, &l, 10 * S);
        assert!((v - 0.1).abs() < 0.001, "{v}");
    }

    #[test]
    fn burst_is_seen_at_its_own_time_scale() {
        // 100 pkt/s for 200 s; at t in [100, 100.5) s every packet is lost (50 losses).
        let mut t = vec![];
        let mut r = vec![];
        let mut l = vec![];
        for k in 0..20_000u64 {
            let tk = k * S / 100;
            t.push(tk);
            let lost = (100 * S..100 * S + S / 2).contains(&tk);
            r.push(!lost as u64);
            l.push(lost as u64);
        }
        // 1 s window: 50 lost of 100 → 0.5; 10 s: 50 of 1000 → 0.05; 100 s: 50/10000 = 0.005
        assert!((worst_window_loss(&t, &r, &l, S) - 0.5).abs() < 1e-9);
        assert!((worst_window_loss(&t, &r, &l, 10 * S) - 0.05).abs() < 1e-9);
        assert!((worst_window_loss(&t, &r, &l, 100 * S) - 0.005).abs() < 1e-9);
        // a window shorter than the burst sees only losses
        assert!((worst_window_loss(&t, &r, &l, S / 10) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn window_longer_than_trace_is_the_overall_fraction() {
        let t = [0, S, 2 * S, 3 * S];
        let r = [1, 0, 1, 1];
        let l = [0, 2, 0, 0];
        assert!((worst_window_loss(&t, &r, &l, 100 * S) - 0.4).abs() < 1e-12);
        assert!(worst_window_loss(&[], &[], &[], S).is_nan(), "no packet: no loss rate");
        // counts near 2^64: the sums must not wrap in release builds (a wrapped sum reads 0.1, not 1/3)
        let big = worst_window_loss(&[1, 2, 3], &[u64::MAX, 5, 5], &[0, 0, u64::MAX], 10 * S);
        assert!((big - 0.5).abs() < 1e-9, "{big}");
    }

    #[test]
    fn matches_brute_force_on_irregular_sequences() {
        let mut rng = crate::Rng::seed_from_u64(4);
        for case in 0..30 {
            let n = 20 + rng.below(60) as usize;
            let mut t = vec![];
            let mut cur = 0u64;
            for _ in 0..n {
                cur += rng.below(300) * 1_000_000; // 0-300 ms gaps, ms resolution
                t.push(cur);
            }
            let r: Vec<u64> = (0..n).map(|_| rng.below(2)).collect();
            let l: Vec<u64> = (0..n).map(|_| if rng.bernoulli(0.2) { 1 + rng.below(3) } else { 0 }).collect();
            for w in [S / 2, S, 3 * S] {
                // events and window ends sit on whole milliseconds, so a 0.5 ms grid of starts
                // visits every content the window can take
                let fast = worst_window_loss(&t, &r, &l, w);
                let slow = brute(&t, &r, &l, w, 500_000);
                assert!((fast - slow).abs() < 1e-12, "case {case} w {w}: {fast} vs {slow}");
            }
        }
    }

    #[test]
    fn arrival_process_merges_in_time_order() {
        let (t, r, l) = arrival_process(&[1, 5, 9], &[5, 7], &[2, 1]);
        assert_eq!(t, vec![1, 5, 5, 7, 9]);
        assert_eq!(r, vec![1, 0, 1, 0, 1]);
        assert_eq!(l, vec![0, 2, 0, 1, 0]);
    }
}
