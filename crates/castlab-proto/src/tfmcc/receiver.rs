//! The TFMCC receiver (RFC 4654 §4, §5).

use castlab_core::{
    Addr, Agent, AgentEvent, ConfigError, Dest, Duration, GroupId, Instant, Packet, PacketLines, Rng, StartInfo,
    TimerTable,
};

use super::arrivals::Arrivals;
use super::loss::{LossTracker, ReceiverLossHistory};
use super::{
    micros, micros_between, round_is_newer, synthetic_interval, DataHeader, FeedbackHeader, FirstInterval, TfmccConfig,
};
use crate::equations::{padhye_bits_per_s, Rto};

castlab_core::timers! {
    /// The receiver's timers.
    pub enum ReceiverTimer {
        /// The receiver leaves the session (first of timers due together: no ordinary report
        /// at the instant it leaves).
        Leave,
        /// The biased feedback timer of a non-CLR receiver (§4.5).
        Feedback,
        /// The CLR's report, once per RTT (§4.5).
        ClrFeedback,
        /// The calculated rate has stayed below the lowest reported rate for §4.4's 120 s.
        LowRate,
    }
}

/// Arrivals kept for the receive rate at most (a rate needing more than this many packets per
/// k RTTs is underestimated: our choice).
const RATE_RING: usize = 4096;
/// The arrivals' queue starts this small and grows (doubling, amortised) to what the receiver's
/// windows hold at the rate it receives; once it fits, nothing is allocated per packet.
const RATE_FIRST: usize = 16;
/// Arrivals are kept for this many times the longest window the receiver reads at the time
/// (§4.3.4's k RTTs; before the first RTT measurement over at least [`RATE_SPAN_FLOOR`]), so a
/// window that grows up to this factor before the next arrival still finds every packet it
/// covers (our choice).
const RATE_KEEP_WINDOWS: u64 = 4;
/// The RTT the kept arrivals assume at least until the receiver's first RTT measurement: §3.1's
/// lower bound for the initial R_max ("should not be smaller than 500 milliseconds"), so a
/// receiver whose first measurement jumps from a small configured R_max still counts every
/// packet of its first windows.
const RATE_SPAN_FLOOR: Duration = Duration::from_millis(500);

/// Bits per second in the arrivals of the last `window` before `now`.
fn bits_per_s_over(arrivals: &Arrivals, now: Instant, window: Duration) -> f64 {
    if window.is_zero() {
        return 0.0;
    }
    bits_per_s(arrivals.bytes_after(now - window), window)
}

/// `bytes` received over `window` (not zero) in bits per second.
fn bits_per_s(bytes: u64, window: Duration) -> f64 {
    bytes as f64 * 8.0 / window.as_secs_f64()
}

/// What the receiver did. Fields in declaration order (`repr(C)`): the counters every packet
/// writes first (see [`TfmccReceiver`]).
#[derive(Clone, Debug, Default, PartialEq)]
#[repr(C)]
pub struct ReceiverRecords {
    pub received: u64,
    pub bytes: u64,
    /// Packets that were not TFMCC data of this session, or duplicates, or arrived after
    /// the receiver left.
    pub ignored: u64,
    /// Packets found lost (§5.1).
    pub lost: u64,
    pub loss_events: u64,
    /// Feedback timers cancelled by suppression or by a new round (§4.5).
    pub suppressed: u64,
    /// When the receiver left the session (s), and whether it told the sender (as the CLR).
    pub left_s: Option<f64>,
    pub leave_reported: bool,
    /// It left by §4.4's rule: the calculated rate below the reported floor for 120 s.
    pub left_for_low_rate: bool,
    /// Every report sent: when, X_r (b/s), p, the RTT it used (s), whether it was the CLR.
    pub report_time_ns: Vec<u64>,
    pub report_rate_bps: Vec<f64>,
    pub report_loss_event_rate: Vec<f64>,
    pub report_rtt_s: Vec<f64>,
    pub report_clr: Vec<bool>,
    /// Every RTT measurement (§4.3.2): when, the sample and the smoothed RTT (s).
    pub rtt_time_ns: Vec<u64>,
    pub rtt_sample_s: Vec<f64>,
    pub rtt_s: Vec<f64>,
}

castlab_core::records_table!(ReceiverRecords {
    columns: [
        report_time_ns,
        report_rate_bps,
        report_loss_event_rate,
        report_rtt_s,
        report_clr,
        rtt_time_ns,
        rtt_sample_s,
        rtt_s,
    ],
    scalars: [
        received = |r| r.received,
        bytes = |r| r.bytes,
        lost = |r| r.lost,
        loss_events = |r| r.loss_events,
        suppressed = |r| r.suppressed,
        ignored = |r| r.ignored,
        left_s = |r| r.left_s,
        leave_reported = |r| r.leave_reported,
        left_for_low_rate = |r| r.left_for_low_rate,
    ],
});

/// The TFMCC receiver of session `flow` on `group`: reports to the sender by unicast.
///
/// Fields in declaration order (`repr(C)`): what every data packet reads or writes first, then
/// the counters it writes (`records` starts with them), then the loss history (read at every
/// packet once a loss event was seen), then what only reports, timers and the set-up use (the
/// packets and events waiting to be polled too: two flags in the first line say whether there
/// are any, so that the poll after every packet reads nothing else). At
/// 10^5 receivers each packet finds its receiver out of the caches; this way it reads a run
/// of adjacent lines that the simulator can ask for ahead ([`Agent::packet_lines`]) rather
/// than lines scattered over 1.6 KB.
#[derive(Debug)]
#[repr(C)]
pub struct TfmccReceiver {
    left: bool,
    have_loss: bool,
    is_clr: bool,
    data_since_report: bool,
    /// Whether `out[0]` / `events[0]` holds something (every poll after a packet reads these).
    out_ready: bool,
    event_ready: bool,
    flow: u32,
    group: GroupId,
    /// The last data packet: its timestamp (sender's clock) and arrival.
    last_ts_us: u32,
    last_arrival: Option<Instant>,
    // §4.5
    fb_nr: Option<u8>,
    /// D_r of §4.3.3, sender clock minus receiver clock ([`micros`], wrapping).
    one_way_us: Option<u32>,
    me: Addr,
    sender: Option<Addr>,
    /// R_max from the last data packet.
    r_max: Duration,
    /// The smoothed RTT R (§4.3.2), once measured.
    rtt: Option<Duration>,
    /// The RTT in use: R' between measurements (§4.3.3), R_max before any.
    r_now: Duration,
    x_fbr: f64,
    fb_set_at: Instant,
    fb_delay: Duration,
    fb_postponed: Duration,
    fb_rmax: Duration,
    /// Since when the calculated rate has been below the reported floor (§4.4).
    low_since: Option<Instant>,
    /// The arrivals of the last [`RATE_KEEP_WINDOWS`] windows (at most [`RATE_RING`]): when,
    /// and the packet's size, oldest first.
    arrivals: Arrivals,
    tracker: LossTracker,
    timers: TimerTable<ReceiverTimer>,
    cfg: TfmccConfig,
    records: ReceiverRecords,
    history: ReceiverLossHistory,
    rng: Rng,
    last_clr_report: Option<Instant>,
    /// When it leaves the session (None: never), and whether it has (`left`).
    leave_at: Option<Instant>,
    out: [Option<Packet>; 2],
    events: [Option<AgentEvent>; 2],
}

impl TfmccReceiver {
    pub fn try_new(cfg: TfmccConfig, group: GroupId, flow: u32) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(TfmccReceiver {
            r_max: cfg.initial_rtt,
            r_now: cfg.initial_rtt,
            tracker: LossTracker::new(cfg.dupacks),
            history: if cfg.history_discounting {
                ReceiverLossHistory::with_discounting(cfg.loss_intervals as usize, cfg.discount_threshold)
            } else {
                ReceiverLossHistory::new(cfg.loss_intervals as usize)
            },
            fb_rmax: cfg.initial_rtt,
            cfg,
            group,
            flow,
            me: Addr::default(),
            sender: None,
            rng: Rng::seed_from_u64(0),
            rtt: None,
            one_way_us: None,
            have_loss: false,
            is_clr: false,
            arrivals: Arrivals::with_capacity(RATE_FIRST),
            last_ts_us: 0,
            last_arrival: None,
            fb_nr: None,
            x_fbr: f64::INFINITY,
            fb_set_at: Instant::ZERO,
            fb_delay: Duration::ZERO,
            fb_postponed: Duration::ZERO,
            data_since_report: false,
            last_clr_report: None,
            leave_at: None,
            left: false,
            low_since: None,
            out_ready: false,
            event_ready: false,
            out: [None; 2],
            timers: TimerTable::default(),
            events: [None; 2],
            records: ReceiverRecords::default(),
        })
    }

    /// The receiver leaves the session at `at` (§4.4 with §2.2.2's receiver_leave flag: as the
    /// CLR it first sends a report with the flag set; see the module's readings).
    pub fn leaving_at(mut self, at: Instant) -> Self {
        self.leave_at = Some(at);
        self
    }

    pub fn config(&self) -> &TfmccConfig {
        &self.cfg
    }
    pub fn has_left(&self) -> bool {
        self.left
    }
    pub fn records(&self) -> &ReceiverRecords {
        &self.records
    }
    pub fn is_clr(&self) -> bool {
        self.is_clr
    }
    pub fn have_loss(&self) -> bool {
        self.have_loss
    }
    /// The smoothed RTT, once measured.
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt
    }
    /// The RTT the rate uses now (§4.3.3's R', or R_max before a measurement).
    pub fn current_rtt(&self) -> Duration {
        self.r_now
    }
    pub fn loss_history(&self) -> &ReceiverLossHistory {
        &self.history
    }
    /// p (§5.4).
    pub fn loss_event_rate(&self) -> f64 {
        self.tracker.highest().map_or(0.0, |h| self.history.loss_event_rate(h))
    }

    /// Bits per second received over the last `window` (§4.3.4).
    pub fn receive_rate_bps(&self, now: Instant, window: Duration) -> f64 {
        if window.is_zero() {
            return 0.0;
        }
        bits_per_s_over(&self.arrivals, now, window)
    }

    /// Slots the arrivals' queue holds now (its allocation; [`RATE_RING`] at most).
    pub fn arrivals_capacity(&self) -> usize {
        self.arrivals.capacity()
    }

    /// Slots the loss tracker's ring holds now (256 at most).
    pub fn loss_ring_capacity(&self) -> usize {
        self.tracker.capacity()
    }

    /// Keep the arrival at `now` for the receive rate: older ones go once they lie beyond
    /// [`RATE_KEEP_WINDOWS`] times the longest window read now (over at least
    /// [`RATE_SPAN_FLOOR`] before the first RTT measurement), or past [`RATE_RING`]. The queue
    /// halves once it is a quarter full (after a slowstart peak), so it follows the rate both
    /// ways at an amortised cost.
    fn keep_arrival(&mut self, now: Instant, bytes: u32) {
        let span = if self.rtt.is_some() { self.rtt_span() } else { self.rtt_span().max(RATE_SPAN_FLOOR) };
        let keep = span * (self.cfg.receive_rate_rtts.max(1) as u64 * RATE_KEEP_WINDOWS);
        while let Some(t) = self.arrivals.front_time() {
            if self.arrivals.len() >= RATE_RING || t + keep <= now {
                self.arrivals.pop_front();
            } else {
                break;
            }
        }
        let cap = self.arrivals.capacity();
        if cap > RATE_FIRST && self.arrivals.len() * 4 <= cap {
            self.arrivals.shrink_to(cap / 2);
        }
        self.arrivals.push_back(now, bytes);
    }

    /// The rate equation (1) gives once a loss event was seen (§4.4), None before.
    fn calculated_rate_bps(&self) -> Option<f64> {
        // `have_loss` first: without it, p (which reads the loss history) is not needed
        if !self.have_loss {
            return None;
        }
        let p = self.loss_event_rate();
        if p <= 0.0 || p.is_nan() {
            return None;
        }
        // R' (§4.3.3), or the smoothed R with `rate_from_smoothed_rtt` (an ablation)
        let r = match (self.cfg.rate_from_smoothed_rtt, self.rtt) {
            (true, Some(r)) => r,
            _ => self.r_now,
        };
        // equation (1) of §2.1: t_RTO = 4R
        Some(padhye_bits_per_s(self.cfg.packet_size as f64, r.as_secs_f64(), p, Rto::RttTimes(4.0)))
    }

    /// X_r (§4.4): equation (1) once a loss event was seen, else twice the receive rate; at
    /// least one packet per 8 s.
    pub fn desired_rate_bps(&self, now: Instant) -> f64 {
        self.desired_from(now, self.calculated_rate_bps())
    }

    /// X_r given the calculated rate `calc` (computed once per packet by the caller).
    fn desired_from(&self, now: Instant, calc: Option<f64>) -> f64 {
        let x = calc
            .unwrap_or_else(|| 2.0 * self.receive_rate_bps(now, self.rtt_span() * self.cfg.receive_rate_rtts as u64));
        x.max(self.cfg.min_rate_bps())
    }

    /// [`TfmccReceiver::desired_from`] for the packet just kept: the same X_r, its k·R window's
    /// bytes found from the window the last packet read (`Arrivals::bytes_after_tracked`).
    fn desired_at_arrival(&mut self, now: Instant, calc: Option<f64>) -> f64 {
        let x = match calc {
            Some(x) => x,
            None => {
                let window = self.rtt_span() * self.cfg.receive_rate_rtts as u64;
                if window.is_zero() {
                    0.0
                } else {
                    2.0 * bits_per_s(self.arrivals.bytes_after_tracked(now - window), window)
                }
            }
        };
        x.max(self.cfg.min_rate_bps())
    }

    /// The "RTT" over which receipts are counted (§4.3.1's 10 RTTs without data, §4.3.4's k
    /// RTTs of receive rate, §5.6's last RTT): the receiver's RTT (R' between measurements,
    /// R_max before the first), or at least R_max with `windows_over_rmax` (an ablation).
    fn rtt_span(&self) -> Duration {
        if self.cfg.windows_over_rmax {
            self.r_now.max(self.r_max)
        } else {
            self.r_now
        }
    }

    /// §4.4: reporting one packet per 8 s when the calculated rate is lower is allowed only
    /// with this: a receiver whose calculated rate stays below the reported one for more than
    /// 120 s while the sender sends faster than the calculated rate must leave. The sender never
    /// sends below that same floor, so the second condition holds whenever the first does.
    fn watch_low_rate(&mut self, now: Instant, calc: Option<f64>) {
        let low = calc.is_some_and(|x| x < self.cfg.min_rate_bps());
        if !low {
            if self.low_since.take().is_some() {
                self.timers.stop(ReceiverTimer::LowRate);
            }
        } else if self.low_since.is_none() {
            self.low_since = Some(now);
            self.timers.set(ReceiverTimer::LowRate, now + self.cfg.low_rate_leave_after);
        }
    }

    fn round_time(&self) -> Duration {
        self.r_max.mul_f64(self.cfg.round_rtts)
    }

    /// §4.5: t = max(T·(1 + ln x / ln N), 0), x uniform in (0, 1].
    fn feedback_delay(&mut self) -> Duration {
        let x = 1.0 - self.rng.uniform();
        let f = (1.0 + x.ln() / self.cfg.receivers_bound.ln()).max(0.0);
        self.round_time().mul_f64(f)
    }

    /// Leave the session: a CLR reports once more with receiver_leave set (§3.3 case 3 makes
    /// the sender drop it at once instead of after 10 silent RTTs); then no more reports,
    /// timers or data, and the group is left.
    fn leave(&mut self, now: Instant) {
        if self.is_clr && self.sender.is_some() && self.last_arrival.is_some() {
            self.send_report(now, true);
            self.records.leave_reported = true;
        }
        self.timers.stop(ReceiverTimer::Feedback);
        self.timers.stop(ReceiverTimer::ClrFeedback);
        self.timers.stop(ReceiverTimer::LowRate);
        self.left = true;
        self.records.left_s = Some(now.as_secs_f64());
        if let Some(slot) = self.events.iter_mut().find(|s| s.is_none()) {
            *slot = Some(AgentEvent::Leave(self.group));
            self.event_ready = true;
        }
    }

    /// A report to the sender; `leave` sets receiver_leave (§2.2.2).
    fn send_report(&mut self, now: Instant, leave: bool) {
        let Some(dst) = self.sender else { return };
        let Some(last) = self.last_arrival else { return };
        let x = self.desired_rate_bps(now);
        let p = self.loss_event_rate();
        // ts_i' = ts_i + tr_d
        let held = ((now - last).as_nanos() / 1000) as u32;
        let fb = FeedbackHeader {
            ts_echo_us: self.last_ts_us.wrapping_add(held),
            tr_us: micros(now),
            rate_bps: x,
            have_rtt: self.rtt.is_some(),
            have_loss: self.have_loss,
            leave,
            fb_nr: self.fb_nr.unwrap_or(0),
            loss_event_rate: p as f32,
        };
        let mut pkt = Packet::data(Dest::Unicast(dst), self.cfg.feedback_size);
        pkt.flow = self.flow;
        pkt.sent_at = now;
        pkt.header = fb.encode();
        if let Some(slot) = self.out.iter_mut().find(|s| s.is_none()) {
            *slot = Some(pkt);
            self.out_ready = true;
        }
        self.data_since_report = false;
        self.records.report_time_ns.push(now.as_nanos());
        self.records.report_rate_bps.push(x);
        self.records.report_loss_event_rate.push(p);
        self.records.report_rtt_s.push(self.r_now.as_secs_f64());
        self.records.report_clr.push(self.is_clr);
    }

    fn cancel_feedback(&mut self) {
        if self.timers.is_armed(ReceiverTimer::Feedback) {
            self.timers.stop(ReceiverTimer::Feedback);
            self.records.suppressed += 1;
        }
    }

    fn on_data(&mut self, now: Instant, p: &Packet, h: DataHeader) {
        if self.last_arrival.is_none() {
            // §4.1: initialised by the first data packet; R = R_max until measured.
            self.sender = Some(p.src);
            self.r_now = h.r_max;
        }
        // §4.3.1: no data for 10 RTTs clears have_loss (the sender may slowstart again).
        if let Some(last) = self.last_arrival {
            if now - last > self.rtt_span() * self.cfg.clr_timeout_rtts as u64 {
                self.have_loss = false;
            }
        }
        self.records.received += 1;
        self.records.bytes += p.size_bytes as u64;
        self.keep_arrival(now, p.size_bytes.max(1));

        // §4.3.2: an echo of our own timestamp gives an RTT sample.
        let mine = h.echo.is_some_and(|e| e.receiver == self.me);
        if mine {
            self.is_clr = h.is_clr;
        } else if h.is_clr {
            self.is_clr = false;
        }
        if let (true, Some(e)) = (mine, h.echo) {
            // at least 1 ms (§4.3.2), at most the 64 s R_max can carry (§2.2.1)
            let sample =
                Duration::from_micros(micros_between(micros(now), e.timestamp_us).clamp(1000, 64_000_000) as u64);
            let r = match self.rtt {
                None => {
                    // §5.6: a synthetic interval made with R_max is scaled by (R/R_max)².
                    let k = sample.as_secs_f64() / self.r_now.as_secs_f64();
                    self.history.scale_synthetic(k * k);
                    sample
                }
                Some(r) => {
                    let q = if self.is_clr { self.cfg.clr_rtt_filter } else { self.cfg.rtt_filter };
                    Duration::from_secs_f64(q * r.as_secs_f64() + (1.0 - q) * sample.as_secs_f64())
                }
            };
            self.rtt = Some(r);
            self.r_now = r;
            // §4.3.3: the delay from here to the sender, ts_i - tr_r' (see the module's
            // readings for the sign), in mixed clocks: only sums with a forward delay mean
            // anything.
            self.one_way_us = Some(h.ts_us.wrapping_sub(e.timestamp_us));
            self.records.rtt_time_ns.push(now.as_nanos());
            self.records.rtt_sample_s.push(sample.as_secs_f64());
            self.records.rtt_s.push(r.as_secs_f64());
        } else if let Some(d) = self.one_way_us {
            // §4.3.3: R' = max(D_r + tr_now - ts_j, 1 ms).
            let r = micros_between(d.wrapping_add(micros(now)), h.ts_us);
            self.r_now = Duration::from_micros(r.clamp(1000, 64_000_000) as u64);
        } else {
            self.r_now = h.r_max;
        }

        // §5: losses and loss events, merged over R (§5.2), or R_max with `merge_over_rmax`
        // (an ablation).
        let rtt = self.r_now;
        let merge = if self.cfg.merge_over_rmax { h.r_max } else { rtt };
        let s = self.cfg.packet_size as f64;
        // §5.6's receive rate over the last RTT, counted only at the first loss event
        let (arrivals, span) = (&self.arrivals, self.rtt_span());
        let first = self.cfg.first_interval;
        let seed = move || {
            let l0 = synthetic_interval(s, rtt.as_secs_f64(), bits_per_s_over(arrivals, now, span));
            match first {
                FirstInterval::Rfc => l0.max(1.0),
                FirstInterval::None => 0.0,
                // X_recv in bytes/s where §5.6 has bits/s, truncated: 0 is no seed
                FirstInterval::Uftp => (l0 / 64.0).floor(),
            }
        };
        let (history, records) = (&mut self.history, &mut self.records);
        let mut new_event = false;
        let fresh = self.tracker.arrive(p.seq, now, |l| {
            records.lost += 1;
            if history.on_lost(l.seq, l.at, merge, seed) {
                records.loss_events += 1;
                new_event = true;
            }
        });
        if !fresh {
            self.records.ignored += 1;
        }
        if new_event {
            self.have_loss = true;
        }
        self.last_ts_us = h.ts_us;
        self.last_arrival = Some(now);
        self.data_since_report = true;

        // §4.5: R_max changed by more than 10 %: rescale the pending timer.
        self.r_max = h.r_max;
        if self.timers.is_armed(ReceiverTimer::Feedback) {
            let ratio = self.r_max.as_secs_f64() / self.fb_rmax.as_secs_f64();
            if !(0.9..=1.1).contains(&ratio) {
                self.fb_delay = self.fb_delay.mul_f64(ratio);
                self.fb_rmax = self.r_max;
                self.timers.set(ReceiverTimer::Feedback, self.fb_set_at + self.fb_delay);
            }
        }

        let calc = self.calculated_rate_bps();
        self.watch_low_rate(now, calc);
        let x = self.desired_at_arrival(now, calc);
        let new_round = self.fb_nr.is_none_or(|n| round_is_newer(h.fb_nr, n));
        if new_round {
            // §4.5: a new round cancels feedback for older ones; non-CLR receivers set a timer.
            self.cancel_feedback();
            self.fb_nr = Some(h.fb_nr);
            self.x_fbr = x;
            if !self.is_clr {
                self.fb_set_at = now;
                self.fb_delay = self.feedback_delay();
                self.fb_postponed = Duration::ZERO;
                self.fb_rmax = self.r_max;
                self.timers.set(ReceiverTimer::Feedback, now + self.fb_delay);
            }
        } else if self.timers.is_armed(ReceiverTimer::Feedback) {
            // §4.5: suppressed by a lower X_supp (than X_r or X_fbr) unless our RTT exceeds R_max.
            let supp = h.suppression_bps as f64;
            if (supp < x || supp < self.x_fbr) && self.r_max >= self.r_now {
                self.cancel_feedback();
            }
        }
        if self.is_clr {
            self.cancel_feedback();
            if !self.timers.is_armed(ReceiverTimer::ClrFeedback) {
                let at = self.last_clr_report.map_or(now, |t| (t + self.r_now).max(now));
                self.timers.set(ReceiverTimer::ClrFeedback, at);
            }
        } else {
            self.timers.stop(ReceiverTimer::ClrFeedback);
        }
    }
}

impl Agent for TfmccReceiver {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        self.me = info.addr;
        self.rng = info.rng;
        self.events[0] = Some(AgentEvent::Join(self.group));
        self.event_ready = true;
        if let Some(at) = self.leave_at {
            self.timers.set(ReceiverTimer::Leave, at.max(now));
        }
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        if self.left || p.flow != self.flow || !matches!(p.dst, Dest::Group(g) if g == self.group) {
            self.records.ignored += 1;
            return;
        }
        match DataHeader::decode(p) {
            Some(h) => self.on_data(now, p, h),
            None => self.records.ignored += 1,
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        while let Some(t) = self.timers.expire_earliest(now) {
            match t {
                ReceiverTimer::Feedback => {
                    // §4.5: data older than R_max postpones the report by the excess.
                    let since = self.last_arrival.map_or(Duration::ZERO, |l| now - l);
                    let extra = since - self.r_max;
                    if extra > self.fb_postponed {
                        self.fb_postponed = extra;
                        self.timers.set(ReceiverTimer::Feedback, self.fb_set_at + self.fb_delay + extra);
                    } else if !self.is_clr {
                        self.send_report(now, false);
                    }
                }
                ReceiverTimer::Leave => self.leave(now),
                ReceiverTimer::LowRate => {
                    if !self.left {
                        self.records.left_for_low_rate = true;
                        self.leave(now);
                    }
                }
                ReceiverTimer::ClrFeedback => {
                    if self.is_clr && self.data_since_report {
                        self.send_report(now, false);
                        self.last_clr_report = Some(now);
                        self.timers.set(ReceiverTimer::ClrFeedback, now + self.r_now);
                    }
                }
            }
        }
    }

    /// Told to stop (a signal, the end of `castlab net tfmcc-receiver`'s run): the receiver
    /// leaves the session now, as at a `leave` time, so that as the CLR it sends its report
    /// with receiver_leave set (§2.2.2, §3.3 case 3) and the sender picks another CLR at the
    /// next report instead of after 10 silent RTTs.
    fn handle_shutdown(&mut self, now: Instant) {
        if !self.left {
            self.timers.stop(ReceiverTimer::Leave);
            self.leave(now);
        }
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        if !self.out_ready {
            return None;
        }
        let p = self.out[0].take()?;
        self.out.rotate_left(1);
        self.out_ready = self.out[0].is_some();
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        if !self.event_ready {
            return None;
        }
        let e = self.events[0].take()?;
        self.events.rotate_left(1);
        self.event_ready = self.events[0].is_some();
        Some(e)
    }

    /// Every field before `records` and its first line; the loss history too once a loss
    /// event was seen (the rate reads it); the oldest arrival and the window's start, and the
    /// loss tracker's next slot.
    fn packet_lines(&self) -> PacketLines {
        let end = if self.have_loss {
            std::mem::offset_of!(TfmccReceiver, history) + std::mem::size_of::<ReceiverLossHistory>()
        } else {
            std::mem::offset_of!(TfmccReceiver, records) + 64
        };
        let [a, b] = self.arrivals.lines();
        PacketLines { hot_bytes: end as u32, elsewhere: [a, b, self.tracker.next_line()] }
    }
}

#[cfg(test)]
mod layout {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn what_a_packet_reads_lies_in_the_lines_it_names() {
        // `packet_lines` names the receiver's first `hot_bytes`: every field a data packet
        // reads or writes must lie there (the loss history once a loss event was seen)
        let mut r = TfmccReceiver::try_new(TfmccConfig::default(), GroupId(0), 1).unwrap();
        let lines = r.packet_lines();
        let hot = lines.hot_bytes as usize;
        let end = |off: usize, size: usize| off + size;
        for e in [
            end(offset_of!(TfmccReceiver, low_since), size_of::<Option<Instant>>()),
            end(offset_of!(TfmccReceiver, arrivals), size_of::<Arrivals>()),
            end(offset_of!(TfmccReceiver, tracker), size_of::<LossTracker>()),
            end(offset_of!(TfmccReceiver, timers), size_of::<TimerTable<ReceiverTimer>>()),
            end(offset_of!(TfmccReceiver, cfg), size_of::<TfmccConfig>()),
            end(offset_of!(TfmccReceiver, records) + offset_of!(ReceiverRecords, ignored), 8),
        ] {
            assert!(e <= hot, "{e} > {hot}");
        }
        assert!(hot < offset_of!(TfmccReceiver, history) + 64);
        // the polls after every packet read the flags in the first line, not `out`/`events`
        assert!(offset_of!(TfmccReceiver, out_ready) < 64 && offset_of!(TfmccReceiver, event_ready) < 64);
        assert!(offset_of!(TfmccReceiver, out) >= hot && offset_of!(TfmccReceiver, events) >= hot);
        r.have_loss = true;
        let with_loss = r.packet_lines().hot_bytes as usize;
        assert_eq!(with_loss, offset_of!(TfmccReceiver, history) + size_of::<ReceiverLossHistory>());
        // the tracker's slot for the first packet, and no arrival kept yet
        assert_ne!(lines.elsewhere[2], 0);
        assert_eq!(lines.elsewhere[..2], [0, 0]);
    }
}
