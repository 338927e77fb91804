//! CUBIC (RFC 9438) with the slow-start exit Linux runs beside it, HyStart (`net/ipv4/
//! tcp_cubic.c`: ACK-train and delay-increase detection).
//!
//! Windows are kept in bytes for the sender and in segments (f64) for RFC 9438's formulas,
//! whose constants are in segments and seconds. Loss recovery is RFC 6675's when the flow has
//! SACK (the window is reduced once, on entry, RFC 9438 §4.6) and RFC 6582's partial-ACK
//! retransmissions without it; either way the window is not inflated.

use super::*;

/// RFC 9438's constants and Linux's HyStart settings. `Default` gives theirs.
#[derive(Clone, Debug, PartialEq)]
pub struct CubicConfig {
    /// C, segments/s³. RFC 9438 §4.2: 0.4 (SHOULD), Linux's `bic_scale` 41/1024·10.
    pub c: f64,
    /// β_cubic, the multiplicative decrease factor. RFC 9438 §4.6: 0.7 (SHOULD); Linux 717/1024.
    pub beta: f64,
    /// Fast convergence, RFC 9438 §4.7 (SHOULD be implemented; Linux's default on).
    pub fast_convergence: bool,
    /// HyStart (Linux's `hystart` 1) with its two detectors (`hystart_detect` 3).
    pub hystart: bool,
    pub hystart_ack_train: bool,
    pub hystart_delay: bool,
    /// HyStart runs only once cwnd is at least this many segments (`hystart_low_window` 16).
    pub hystart_low_window: u32,
    /// RTT samples per round before the delay test (`HYSTART_MIN_SAMPLES` 8).
    pub hystart_min_samples: u32,
    /// Bounds of the delay increase that ends slow start, min RTT / 8 clamped to them
    /// (`HYSTART_DELAY_MIN` 4 ms, `HYSTART_DELAY_MAX` 16 ms).
    pub hystart_delay_min: Duration,
    pub hystart_delay_max: Duration,
    /// ACKs at most this far apart form a train (`hystart_ack_delta_us` 2000).
    pub hystart_ack_delta: Duration,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            hystart: true,
            hystart_ack_train: true,
            hystart_delay: true,
            hystart_low_window: 16,
            hystart_min_samples: 8,
            hystart_delay_min: Duration::from_millis(4),
            hystart_delay_max: Duration::from_millis(16),
            hystart_ack_delta: Duration::from_millis(2),
        }
    }
}

/// Why HyStart ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HystartExit {
    AckTrain,
    Delay,
}

/// A CUBIC controller (RFC 9438).
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    w: Window,
    sack: bool,
    recovering: bool,
    /// One past the highest byte sent when recovery began (RFC 6675 RecoveryPoint, RFC 6582
    /// `recover`): no second reduction for losses of the same window.
    recover: u64,
    partial_acks: u32,
    /// The time and smoothed RTT of the ACK being processed (from `on_ack_sample`).
    now: Instant,
    srtt: Option<Duration>,
    // RFC 9438 state, in segments and seconds.
    /// W_max (§4.7): the window before the last reduction, or less with fast convergence.
    w_max: f64,
    /// cwnd_prior (§4.6 Figure 5): cwnd when ssthresh was last set.
    cwnd_prior: f64,
    /// t_epoch (§4.2): when the current congestion-avoidance stage began.
    epoch_start: Option<Instant>,
    /// K and the plateau W_cubic returns to in this epoch (§4.2 Figures 1 and 2).
    k: f64,
    origin: f64,
    /// W_est and α_cubic (§4.3).
    w_est: f64,
    alpha: f64,
    /// The next epoch is the first after a timeout (§4.8: K = 0, W_max = cwnd_epoch).
    after_timeout: bool,
    /// Fractional growth, bytes.
    acc: f64,
    // HyStart (tcp_cubic.c's `bictcp` fields).
    found: Option<HystartExit>,
    round_start: Instant,
    last_ack: Instant,
    end_seq: u64,
    curr_rtt: Option<Duration>,
    sample_cnt: u32,
    delay_min: Option<Duration>,
}

impl Cubic {
    pub fn new(tcp: &TcpConfig, cfg: CubicConfig) -> Self {
        let alpha = alpha_cubic(cfg.beta);
        Cubic {
            w: Window::new(tcp),
            sack: tcp.sack,
            recovering: false,
            recover: 0,
            partial_acks: 0,
            now: Instant::ZERO,
            srtt: None,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch_start: None,
            k: 0.0,
            origin: 0.0,
            w_est: 0.0,
            alpha,
            after_timeout: false,
            acc: 0.0,
            found: None,
            round_start: Instant::ZERO,
            last_ack: Instant::ZERO,
            end_seq: 0,
            curr_rtt: None,
            sample_cnt: 0,
            delay_min: None,
            cfg,
        }
    }

    pub fn config(&self) -> &CubicConfig {
        &self.cfg
    }
    /// W_max, segments.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }
    /// K of the current epoch, seconds.
    pub fn k(&self) -> f64 {
        self.k
    }
    /// W_est of the current epoch, segments.
    pub fn w_est(&self) -> f64 {
        self.w_est
    }
    /// The plateau of the current epoch's W_cubic, segments (W_max, or cwnd_epoch when K = 0).
    pub fn origin(&self) -> f64 {
        self.origin
    }
    /// When the current congestion-avoidance epoch began.
    pub fn epoch_start(&self) -> Option<Instant> {
        self.epoch_start
    }
    /// Why HyStart ended slow start, if it did.
    pub fn hystart_exit(&self) -> Option<HystartExit> {
        self.found
    }
    /// W_cubic(t) of the current epoch (RFC 9438 §4.2 Figure 1), segments, t in seconds.
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.cfg.c * (t - self.k).powi(3) + self.origin
    }

    fn mss(&self) -> f64 {
        self.w.mss as f64
    }

    /// tcp_cubic.c `bictcp_hystart_reset`: a new round starts now and ends when `snd_nxt`
    /// is acknowledged.
    fn hystart_reset(&mut self, now: Instant, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// tcp_cubic.c `hystart_update`, on an RTT sample `delay` in slow start.
    fn hystart_update(&mut self, s: &AckSample, delay: Duration) {
        if s.ack > self.end_seq {
            self.hystart_reset(s.now, s.snd_nxt);
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        if self.cfg.hystart_ack_train && s.now.saturating_since(self.last_ack) <= self.cfg.hystart_ack_delta {
            // ACK-train detection: ACKs closely spaced for longer than half the minimum
            // delay (`threshold >>= 1` without fq pacing, as a CUBIC flow runs) mean the
            // window already fills the path.
            self.last_ack = s.now;
            if s.now.saturating_since(self.round_start) > delay_min / 2 {
                self.exit_slow_start(HystartExit::AckTrain);
            }
        }
        if self.found.is_none() && self.cfg.hystart_delay {
            // delay-increase detection: the round's smallest RTT, after HYSTART_MIN_SAMPLES,
            // above the minimum by HYSTART_DELAY_THRESH(min / 8)
            self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
            if self.sample_cnt < self.cfg.hystart_min_samples {
                self.sample_cnt += 1;
            } else {
                let thresh = (delay_min / 8).max(self.cfg.hystart_delay_min).min(self.cfg.hystart_delay_max);
                if self.curr_rtt.is_some_and(|c| c > delay_min + thresh) {
                    self.exit_slow_start(HystartExit::Delay);
                }
            }
        }
    }

    fn exit_slow_start(&mut self, why: HystartExit) {
        self.found = Some(why);
        self.w.ssthresh = self.w.cwnd;
    }

    /// Slow start (RFC 5681 §3.1 with RFC 3465's limit L = 2·SMSS per ACK), up to ssthresh.
    fn slow_start(&mut self, n: u64) {
        self.w.cwnd = (self.w.cwnd + n.min(2 * self.w.mss)).min(self.w.ssthresh.max(self.w.cwnd));
    }

    /// RFC 9438 §4.2-§4.5 on an ACK of `n` new bytes in congestion avoidance.
    fn congestion_avoidance(&mut self, n: u64) {
        let mss = self.mss();
        let cwnd = self.w.cwnd as f64 / mss;
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                // §4.2: a new congestion-avoidance stage; cwnd_epoch is cwnd now.
                self.epoch_start = Some(self.now);
                self.w_est = cwnd; // §4.3: W_est = cwnd_epoch
                if self.after_timeout || self.w_max <= cwnd {
                    // §4.8 after a timeout: K = 0, W_max = cwnd_epoch. The same when no
                    // reduction set W_max above cwnd (slow start left by HyStart or
                    // ssthresh), as tcp_cubic.c's `bictcp_update` does.
                    self.k = 0.0;
                    self.origin = cwnd;
                    if self.after_timeout {
                        self.w_max = cwnd;
                    }
                } else {
                    // §4.2 Figure 2: K = cbrt((W_max - cwnd_epoch) / C)
                    self.k = ((self.w_max - cwnd) / self.cfg.c).cbrt();
                    self.origin = self.w_max;
                }
                self.after_timeout = false;
                self.now
            }
        };
        let t = self.now.saturating_since(epoch).as_secs_f64();
        let rtt = self.srtt.map_or(0.0, |d| d.as_secs_f64());
        let segs = n as f64 / mss;
        // §4.3 Figure 4; α_cubic becomes 1 once W_est reaches cwnd_prior (SHOULD).
        self.w_est += self.alpha * segs / cwnd;
        if self.w_est >= self.cwnd_prior {
            self.alpha = 1.0;
        }
        if self.w_cubic(t) < self.w_est {
            // §4.3: the Reno-friendly region, cwnd = W_est (never lowered here)
            let est = (self.w_est * mss) as u64;
            if est > self.w.cwnd {
                self.w.cwnd = est;
                self.acc = 0.0;
            }
            return;
        }
        // §4.2 target, bounded by cwnd and 1.5·cwnd; §4.4/§4.5: cwnd += (target − cwnd)/cwnd
        // per ACK, here per SMSS acknowledged (byte counting, as Linux counts segments).
        let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
        self.acc += (target - cwnd) / cwnd * segs * mss;
        if self.acc >= 1.0 {
            let whole = self.acc.floor();
            self.w.cwnd += whole as u64;
            self.acc -= whole;
        }
    }

    /// RFC 9438 §4.7 then §4.6 Figure 5, on entering loss recovery.
    fn reduce(&mut self, flight: u64) {
        let mss = self.mss();
        let cwnd = self.w.cwnd as f64 / mss;
        self.w_max =
            if self.cfg.fast_convergence && cwnd < self.w_max { cwnd * (1.0 + self.cfg.beta) / 2.0 } else { cwnd };
        self.set_ssthresh(flight);
        self.w.cwnd = self.w.ssthresh;
    }

    /// §4.6 Figure 5: ssthresh = flight_size · β_cubic, at least 2 SMSS; cwnd_prior = cwnd.
    /// FlightSize is capped by cwnd, as the Reno family's ssthresh is ([`Window::halve`]).
    fn set_ssthresh(&mut self, flight: u64) {
        let mss = self.w.mss;
        self.cwnd_prior = self.w.cwnd as f64 / mss as f64;
        let f = flight.min(self.w.cwnd) as f64;
        self.w.ssthresh = ((f * self.cfg.beta) as u64).max(2 * mss);
        self.w.ca_acked = 0;
        self.epoch_start = None;
        self.alpha = alpha_cubic(self.cfg.beta);
        self.acc = 0.0;
    }
}

/// RFC 9438 §4.3: α_cubic = 3(1 − β_cubic)/(1 + β_cubic).
fn alpha_cubic(beta: f64) -> f64 {
    3.0 * (1.0 - beta) / (1.0 + beta)
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn cwnd(&self) -> u64 {
        self.w.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }
    fn in_recovery(&self) -> bool {
        self.recovering
    }
    fn uses_sack(&self) -> bool {
        true
    }

    fn on_start(&mut self, now: Instant, _rng: Rng) {
        self.now = now;
        if self.cfg.hystart {
            self.hystart_reset(now, 0);
        }
    }

    fn on_ack_sample(&mut self, s: &AckSample) {
        self.now = s.now;
        self.srtt = s.srtt;
        let Some(delay) = s.rtt else { return };
        // tcp_cubic.c `cubictcp_acked`: no delay samples in the first second of an epoch
        // (right after recovery)
        if self.epoch_start.is_some_and(|e| s.now.saturating_since(e) < Duration::from_secs(1)) {
            return;
        }
        let delay = delay.max(Duration::from_nanos(1));
        self.delay_min = Some(self.delay_min.map_or(delay, |m| m.min(delay)));
        let in_slow_start = self.w.cwnd < self.w.ssthresh;
        if self.cfg.hystart
            && self.found.is_none()
            && in_slow_start
            && self.w.cwnd >= self.cfg.hystart_low_window as u64 * self.w.mss
        {
            self.hystart_update(s, delay);
        }
    }

    fn on_new_ack(&mut self, a: &AckInfo) -> AckResponse {
        if self.recovering {
            if a.ack >= self.recover {
                // RFC 6675 §5 / RFC 6582 §3.2 step 3: recovery ends; cwnd is ssthresh.
                self.recovering = false;
                self.w.cwnd = self.w.ssthresh;
                return AckResponse { retransmit: false, restart_rto: true };
            }
            if self.sack {
                return AckResponse { retransmit: false, restart_rto: true };
            }
            // RFC 6582 §3.2 step 3 without the window deflation (the window never inflated)
            self.partial_acks += 1;
            return AckResponse { retransmit: true, restart_rto: self.partial_acks == 1 };
        }
        if self.w.cwnd < self.w.ssthresh {
            self.slow_start(a.bytes_acked);
        } else {
            self.congestion_avoidance(a.bytes_acked);
        }
        AckResponse { retransmit: false, restart_rto: true }
    }

    fn on_dup_ack(&mut self, a: &AckInfo, dupacks: u32) -> AckResponse {
        if !self.recovering && dupacks == self.w.dupthresh {
            return self.on_sack_loss(a);
        }
        AckResponse::default()
    }

    fn on_sack_loss(&mut self, a: &AckInfo) -> AckResponse {
        if self.recovering || a.ack < self.recover {
            return AckResponse::default();
        }
        // RFC 9438 §4.6: reduce on entering loss recovery (RFC 6675 §5 step 4, RFC 6582 §3.2
        // step 2 for the recovery point).
        self.recover = a.snd_max;
        self.recovering = true;
        self.partial_acks = 0;
        self.reduce(a.flight_before);
        AckResponse { retransmit: true, restart_rto: false }
    }

    fn on_loss_repaired(&mut self, a: &AckInfo) {
        // RFC 9438 §4.6 as on entering recovery (`cubictcp_recalc_ssthresh` through
        // `tcp_init_cwnd_reduction`); cwnd = ssthresh on the same ACK (`tcp_end_cwnd_reduction`)
        if !self.recovering {
            self.reduce(a.flight_before);
        }
    }

    fn on_timeout(&mut self, to: &TimeoutInfo) {
        // RFC 9438 §4.8: cwnd as RFC 5681 (1 SMSS), ssthresh by β_cubic (§4.6), unless the
        // segment was already retransmitted by the timer (RFC 5681 §3.1 holds it); the next
        // epoch starts with K = 0 and W_max = cwnd_epoch.
        if to.first_for_segment {
            self.set_ssthresh(to.flight);
        }
        self.epoch_start = None;
        self.after_timeout = true;
        self.w.cwnd = self.w.mss;
        self.recover = to.snd_max;
        self.recovering = false;
        // tcp_cubic.c `cubictcp_state(TCP_CA_Loss)`: HyStart runs again in the next slow
        // start; its round restarts once what was sent before the timeout is acknowledged.
        self.found = None;
        self.end_seq = to.snd_max;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ms(x: f64) -> Instant {
        Instant::from_nanos((x * 1e6).round() as u64)
    }

    /// A controller driven by hand: ACKs of one segment each, the time and RTT given.
    struct Drive {
        cc: Cubic,
        una: u64,
        nxt: u64,
    }

    impl Drive {
        fn new(cfg: CubicConfig, iw_segs: u32, ssthresh_segs: u64) -> Self {
            let tcp = TcpConfig {
                mss_bytes: MSS as u32,
                initial_window_segs: iw_segs,
                initial_ssthresh_bytes: ssthresh_segs * MSS,
                sack: true,
                ..TcpConfig::default()
            };
            let mut cc = Cubic::new(&tcp, cfg);
            cc.on_start(Instant::ZERO, Rng::seed_from_u64(1));
            Drive { cc, una: 0, nxt: 0 }
        }
        fn cwnd_segs(&self) -> f64 {
            self.cc.cwnd() as f64 / MSS as f64
        }
        /// Send what the window allows (the flight is cwnd).
        fn fill(&mut self) {
            self.nxt = self.nxt.max(self.una + self.cc.cwnd());
        }
        /// One ACK of one new segment at `now`, with an RTT sample `rtt` (also the SRTT).
        fn ack(&mut self, now: Instant, rtt: Duration) {
            self.fill();
            let info = AckInfo {
                ack: self.una + MSS,
                bytes_acked: MSS,
                flight_before: self.nxt - self.una,
                flight_after: self.nxt - self.una - MSS,
                snd_max: self.nxt,
            };
            self.una += MSS;
            let s = AckSample {
                now,
                rtt: Some(rtt),
                srtt: Some(rtt),
                ack: self.una,
                snd_nxt: self.nxt,
                newly_delivered: MSS,
                inflight: self.nxt - self.una,
                delivered: 0,
                delivered_time: Instant::ZERO,
                rate: None,
            };
            self.cc.on_ack_sample(&s);
            self.cc.on_new_ack(&info);
            self.cc.on_ack_processed(&s);
        }
        /// A round trip from `t0` (ms): one ACK per segment of the window, evenly spread.
        fn round(&mut self, t0: f64, rtt_ms: f64) {
            let n = self.cc.cwnd() / MSS;
            for i in 0..n {
                self.ack(ms(t0 + rtt_ms * i as f64 / n as f64), Duration::from_secs_f64(rtt_ms / 1e3));
            }
        }
        /// Three duplicate ACKs: a loss detected, recovery entered, then left by the ACK of
        /// everything outstanding.
        fn loss(&mut self, now: Instant) {
            self.fill();
            let flight = self.nxt - self.una;
            let dup = AckInfo {
                ack: self.una,
                bytes_acked: 0,
                flight_before: flight,
                flight_after: flight,
                snd_max: self.nxt,
            };
            for d in 1..=3 {
                self.cc.on_dup_ack(&dup, d);
            }
            assert!(self.cc.in_recovery());
            let full = AckInfo {
                ack: self.nxt,
                bytes_acked: flight,
                flight_before: flight,
                flight_after: 0,
                snd_max: self.nxt,
            };
            self.una = self.nxt;
            let s = AckSample {
                now,
                rtt: None,
                srtt: None,
                ack: self.una,
                snd_nxt: self.nxt,
                newly_delivered: flight,
                inflight: 0,
                delivered: 0,
                delivered_time: Instant::ZERO,
                rate: None,
            };
            self.cc.on_ack_sample(&s);
            self.cc.on_new_ack(&full);
            assert!(!self.cc.in_recovery());
        }
    }

    /// A flow in congestion avoidance at `w` segments (slow start ended by ssthresh = w).
    fn at_window(cfg: CubicConfig, w: u64) -> Drive {
        Drive::new(CubicConfig { hystart: false, ..cfg }, w as u32, w)
    }

    #[test]
    fn loss_multiplies_the_window_by_beta_and_remembers_w_max() {
        let mut d = at_window(CubicConfig::default(), 100);
        d.loss(ms(0.0));
        // RFC 9438 §4.6: ssthresh = cwnd = 0.7 · 100 segments; §4.7: W_max = 100 (first loss)
        assert_eq!(d.cc.ssthresh(), 70 * MSS);
        assert_eq!(d.cc.cwnd(), 70 * MSS);
        assert_eq!(d.cc.w_max(), 100.0);
    }

    #[test]
    fn k_is_the_cube_root_of_the_gap_over_c() {
        let mut d = at_window(CubicConfig::default(), 100);
        d.loss(ms(0.0));
        d.ack(ms(10.0), Duration::from_millis(100));
        // §4.2 Figure 2 by hand: K = cbrt((100 − 70) / 0.4) = cbrt(75)
        let k = 75f64.powf(1.0 / 3.0);
        assert!((d.cc.k() - k).abs() < 1e-9, "K {} vs {k}", d.cc.k());
        assert!((k - 4.2172).abs() < 1e-4);
    }

    #[test]
    fn window_follows_w_cubic_concave_then_convex() {
        // RTT 200 ms keeps CUBIC out of the Reno-friendly region for the 7 s checked: W_est
        // grows 0.53 segments per RTT (79 segments at 7 s), W_cubic far faster.
        let mut d = at_window(CubicConfig::default(), 100);
        d.loss(ms(0.0));
        let k = 75f64.cbrt();
        let w = |t: f64| 0.4 * (t - k).powi(3) + 100.0;
        let rtt = 200.0;
        let mut t = 0.0;
        let mut checked = 0;
        let mut below_w_max_at_half_k = false;
        while t < 7000.0 {
            d.round(t, rtt);
            t += rtt;
            let ts = t / 1e3 - d.cc.epoch_start().map_or(0.0, |e| e.as_secs_f64());
            let cw = d.cwnd_segs();
            // cwnd chases target = W_cubic(t + RTT) within the round: it lies between the
            // curve one RTT back and one RTT ahead (one segment of rounding).
            let (lo, hi) = (w(ts - 0.2), w(ts + 0.2));
            assert!(cw >= lo - 1.0 && cw <= hi + 1.0, "t {ts:.2} s: cwnd {cw:.1} outside [{lo:.1}, {hi:.1}]");
            if (ts - k / 2.0).abs() < 0.2 {
                below_w_max_at_half_k = cw < 99.0;
            }
            checked += 1;
        }
        assert!(checked >= 35);
        // concave before K (cwnd below W_max), convex after (above it: W_cubic(7.2 s) = 110.6)
        assert!(below_w_max_at_half_k);
        assert!(d.cwnd_segs() > 105.0, "convex growth after K: {}", d.cwnd_segs());
    }

    #[test]
    fn reno_friendly_region_takes_over_at_small_rtt() {
        // RTT 1 ms: W_cubic barely moves in 0.1 s (72.1 segments at t = 0.1 s), while W_est
        // gains α_cubic = 3·0.3/1.7 per RTT until it reaches cwnd_prior = 100, then 1 per RTT.
        let mut d = at_window(CubicConfig::default(), 100);
        d.loss(ms(0.0));
        let alpha = 3.0 * 0.3 / 1.7;
        let rounds_to_prior = (100.0 - 70.0) / alpha; // 56.7
        let mut t = 0.0;
        for _ in 0..100 {
            d.round(t, 1.0);
            t += 1.0;
        }
        let expect = 100.0 + (100.0 - rounds_to_prior); // 143.3 segments
        let cw = d.cwnd_segs();
        assert!((cw - expect).abs() < 0.05 * expect, "cwnd {cw:.1}, W_est by hand {expect:.1}");
        let k = 75f64.cbrt();
        assert!(0.4 * (0.1 - k).powi(3) + 100.0 < 75.0);
    }

    #[test]
    fn growth_per_rtt_is_capped_at_one_and_a_half() {
        // Long after K, W_cubic(t + RTT) is far above cwnd: target = 1.5 cwnd (§4.2), so one
        // round of ACKs raises cwnd by half.
        let mut d = at_window(CubicConfig::default(), 100);
        d.loss(ms(0.0));
        d.ack(ms(1.0), Duration::from_millis(100)); // the epoch starts
        let before = d.cwnd_segs();
        d.round(30_000.0, 100.0);
        let after = d.cwnd_segs();
        assert!((after / before - 1.5).abs() < 0.03, "{before} -> {after}");
    }

    #[test]
    fn fast_convergence_lowers_w_max_on_a_loss_below_it() {
        for (fc, expect) in [(true, 80.0 * 1.7 / 2.0), (false, 80.0)] {
            let mut d = at_window(CubicConfig { fast_convergence: fc, ..Default::default() }, 100);
            d.loss(ms(0.0));
            // grow from 70 to about 80 segments (below W_max = 100), then lose again
            let mut t = 0.0;
            while d.cwnd_segs() < 80.0 {
                d.round(t, 100.0);
                t += 100.0;
            }
            let (cw, cwb) = (d.cwnd_segs(), d.cc.cwnd());
            d.loss(ms(t));
            // §4.7 by hand: W_max = cwnd · (1 + 0.7) / 2 with fast convergence, else cwnd
            let expect = expect * cw / 80.0;
            assert!((d.cc.w_max() - expect).abs() < 1e-6, "fc {fc}: W_max {} vs {expect}", d.cc.w_max());
            assert_eq!(d.cc.cwnd(), (cwb as f64 * 0.7) as u64);
        }
    }

    #[test]
    fn timeout_restarts_from_one_segment_with_k_zero() {
        let mut d = at_window(CubicConfig::default(), 100);
        d.fill();
        let flight = d.nxt - d.una;
        d.cc.on_timeout(&TimeoutInfo { flight, snd_max: d.nxt, first_for_segment: true });
        // §4.8: cwnd = 1 SMSS, ssthresh = 0.7 · FlightSize
        assert_eq!(d.cc.cwnd(), MSS);
        assert_eq!(d.cc.ssthresh(), 70 * MSS);
        // slow start to ssthresh, then the first epoch: K = 0, W_max = cwnd_epoch
        let mut t = 0.0;
        while d.cc.epoch_start().is_none() {
            d.round(t, 100.0);
            t += 100.0;
        }
        assert_eq!(d.cc.k(), 0.0);
        assert_eq!(d.cc.w_max(), d.cc.origin());
        assert!((d.cc.origin() - 70.0).abs() <= 1.0, "W_max {}", d.cc.origin());
    }

    #[test]
    fn hystart_delay_increase_ends_slow_start() {
        // base RTT 100 ms: the threshold is clamp(100/8, 4, 16) = 12.5 ms. A round whose
        // RTTs are all 113 ms ends slow start; one at 112 ms does not.
        let cfg = CubicConfig { hystart_ack_train: false, ..Default::default() };
        for (rise, exits) in [(13.0, true), (12.0, false)] {
            let mut d = Drive::new(cfg.clone(), 16, 1 << 20);
            // round 1 at the base RTT, ACKs 6 ms apart (no train)
            let mut t = 0.0;
            let n = d.cc.cwnd() / MSS;
            for _ in 0..n {
                d.ack(ms(t), Duration::from_millis(100));
                t += 6.0;
            }
            assert!(d.cc.hystart_exit().is_none());
            let n = d.cc.cwnd() / MSS;
            for _ in 0..n {
                d.ack(ms(t), Duration::from_secs_f64((100.0 + rise) / 1e3));
                t += 3.0;
                if d.cc.hystart_exit().is_some() {
                    break;
                }
            }
            assert_eq!(d.cc.hystart_exit() == Some(HystartExit::Delay), exits, "rise {rise} ms");
            if exits {
                // ssthresh = cwnd at the exit; the same ACK then grows cwnd in congestion
                // avoidance (pkts_acked before cong_avoid, as Linux), by less than a segment
                assert!(d.cc.ssthresh() <= d.cc.cwnd() && d.cc.cwnd() - d.cc.ssthresh() < MSS);
                assert!(d.cc.epoch_start().is_some());
            }
        }
    }

    #[test]
    fn hystart_ack_train_ends_slow_start() {
        // ACKs 1 ms apart (within the 2 ms delta) for more than half the minimum RTT (40 ms
        // of 80) since the round began end slow start; ACKs 3 ms apart never do.
        let cfg = CubicConfig { hystart_delay: false, ..Default::default() };
        for (gap, exits) in [(1.0, true), (3.0, false)] {
            let mut d = Drive::new(cfg.clone(), 16, 1 << 20);
            let mut t = 0.0;
            for _ in 0..200 {
                d.ack(ms(t), Duration::from_millis(80));
                t += gap;
                if d.cc.hystart_exit().is_some() {
                    break;
                }
            }
            assert_eq!(d.cc.hystart_exit() == Some(HystartExit::AckTrain), exits, "gap {gap} ms");
        }
    }
}
