//! Driving the cascade with synthetic LI streams (§3.1.4, Figs 11-12), without a network.

use super::*;

// ------------------------------------------------------------------------------------------
// Synthetic drive (§3.1.4, Fig. 11-12)
// ------------------------------------------------------------------------------------------

/// A class of identical receivers for [`run_synthetic`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReceiverClass {
    /// How many receivers.
    pub count: usize,
    /// Independent per-packet loss probability of each.
    pub loss: f64,
    /// Constant round-trip time source → receiver → source (the LI arrives this long after
    /// the lost packet was sent).
    pub rtt: Duration,
}

/// What [`run_synthetic`] measured.
#[derive(Clone, Debug, Default)]
pub struct SyntheticResult {
    pub stats: CascadeStats,
    pub packets: u64,
    pub duration_s: f64,
    /// LEs out of LI2LE per receiver (index order: the classes in turn).
    pub les_per_receiver: Vec<u64>,
    /// LEs passed by Max-LPRF per receiver.
    pub passed_per_receiver: Vec<u64>,
    pub final_srtt_s: f64,
    pub mean_rate_bps: f64,
}

/// Drive the source cascade directly: packets sent at the cascade's rate (nothing during the
/// ATF's silence), each lost independently at each receiver with its class's probability, and
/// each loss returning to the source as one LI after the receiver's constant RTT. This is the
/// set-up of §3.1.4 (Fig. 11: all receivers on one router, constant RTTs, uniform losses, no
/// aggregation) without the packet-level network, so that 10,001 receivers take milliseconds.
/// Receivers losing a packet are drawn by geometric skips (cost ∝ expected losses, not N).
pub fn run_synthetic(cfg: &LesbccConfig, classes: &[ReceiverClass], packets: u64, seed: u64) -> SyntheticResult {
    let mut rng = Rng::seed_from_u64(seed);
    let mut cas = Cascade::new(cfg, Rng::seed_from_u64(seed ^ 0x9E37_79B9_7F4A_7C15));
    cas.record_lis = false;
    let total: usize = classes.iter().map(|c| c.count).sum();
    cas.li2le.ensure(total);
    cas.lprf.ensure(total);
    let mut les_per = vec![0u64; total];
    let mut passed_per = vec![0u64; total];
    // One FIFO of pending LIs per class (constant RTT per class keeps each in time order).
    let mut queues: Vec<VecDeque<(u64, u32, u64)>> = classes.iter().map(|_| VecDeque::new()).collect();
    let offsets: Vec<usize> = classes
        .iter()
        .scan(0usize, |acc, c| {
            let o = *acc;
            *acc += c.count;
            Some(o)
        })
        .collect();
    let mut now = Instant::ZERO;
    cas.start(now);
    let mut next_send = now;
    let mut sent = 0u64;
    let mut rate_integral = 0.0;
    let mut last_t = 0.0;
    loop {
        // next event: a send, an LI arrival, or a cascade timer
        let send_at = if sent < packets {
            let s = cas.silence_end().filter(|&e| e > next_send).unwrap_or(next_send);
            Some(s)
        } else {
            None
        };
        let li_at = queues.iter().enumerate().filter_map(|(k, q)| q.front().map(|&(t, _, _)| (t, k))).min();
        if send_at.is_none() && li_at.is_none() {
            break;
        }
        let timer_at = cas.next_timeout();
        let mut t = u64::MAX;
        if let Some(s) = send_at {
            t = t.min(s.as_nanos());
        }
        if let Some((l, _)) = li_at {
            t = t.min(l);
        }
        if let Some(x) = timer_at {
            if x.as_nanos() < t {
                now = x;
                cas.handle_timeout(now);
                continue;
            }
        }
        let ts = t as f64 * 1e-9;
        rate_integral += cas.rate_bps() * (ts - last_t);
        last_t = ts;
        now = Instant::from_nanos(t);
        if let Some((l, k)) = li_at.filter(|&(l, _)| l == t) {
            let (_, rcv, sent_ns) = queues[k].pop_front().expect("front");
            let before = cas.stats;
            cas.on_li(now, rcv as usize, Some(Instant::from_nanos(sent_ns)));
            if cas.stats.les > before.les {
                les_per[rcv as usize] += 1;
            }
            if cas.stats.lprf_passed > before.lprf_passed {
                passed_per[rcv as usize] += 1;
            }
            let _ = l;
            continue;
        }
        if cas.silenced(now) {
            next_send = now.max(cas.silence_end().unwrap_or(now));
            continue;
        }
        // send packet `sent`
        cas.on_send();
        for (k, c) in classes.iter().enumerate() {
            if c.loss <= 0.0 || c.count == 0 {
                continue;
            }
            let arrive = (now + c.rtt).as_nanos();
            if c.loss >= 1.0 {
                for i in 0..c.count {
                    queues[k].push_back((arrive, (offsets[k] + i) as u32, t));
                }
                continue;
            }
            let ln_q = (1.0 - c.loss).ln();
            let mut i = 0usize;
            loop {
                // geometric skip: receivers i.. without loss before the next loser
                let u = 1.0 - rng.uniform();
                let skip = (u.ln() / ln_q).floor();
                if !skip.is_finite() || skip >= (c.count - i) as f64 {
                    break;
                }
                i += skip as usize;
                queues[k].push_back((arrive, (offsets[k] + i) as u32, t));
                i += 1;
                if i >= c.count {
                    break;
                }
            }
        }
        sent += 1;
        next_send = now + Duration::from_secs_f64(cfg.packet_bytes as f64 * 8.0 / cas.rate_bps());
    }
    SyntheticResult {
        stats: cas.stats,
        packets: sent,
        duration_s: last_t,
        les_per_receiver: les_per,
        passed_per_receiver: passed_per,
        final_srtt_s: cas.srtt(),
        mean_rate_bps: if last_t > 0.0 { rate_integral / last_t } else { cas.rate_bps() },
    }
}
