//! The TFMCC sender (RFC 4654 §3).

use castlab_core::{
    Addr, Agent, AgentEvent, ConfigError, Dest, Duration, GroupId, Instant, Packet, StartInfo, TimerTable,
};

use super::{micros, micros_between, rtt_on_the_wire, DataHeader, Echo, FeedbackHeader, TfmccConfig};

castlab_core::timers! {
    /// The sender's timers.
    pub enum SenderTimer {
        /// The next data packet is due.
        Send,
        /// The feedback round may end (§3.4).
        Round,
        /// A no-feedback rule of §3.3 is due.
        NoFeedback,
        /// The next step of a slowstart increase (§3.6).
        Ramp,
    }
}

/// The current limiting receiver (§3.3).
#[derive(Clone, Copy, Debug)]
struct Clr {
    addr: Addr,
    /// Its last instantaneous RTT as the sender measured it (§3.2).
    rtt: Duration,
    last_report: Instant,
    selected_at: Instant,
    /// The rate was halved in this silence (§3.3).
    halved: bool,
    /// Its last report's timestamp (its clock) and when it arrived (ours), to echo (§3.5).
    tr_us: u32,
    tr_at: Instant,
}

/// A slowstart increase spread over one RTT (§3.6): from `from` to `to` b/s in
/// `slowstart_ramp_steps` equal steps, step k at `start + over·k/steps`.
#[derive(Clone, Copy, Debug)]
struct Ramp {
    from: f64,
    to: f64,
    start: Instant,
    over: Duration,
    step: u32,
}

/// A timestamp waiting to be echoed, with its §3.5 priority (1 first).
#[derive(Clone, Copy, Debug)]
struct Pending {
    addr: Addr,
    prio: u8,
    fb_nr: u8,
    rate_bps: f64,
    tr_us: u32,
    tr_at: Instant,
}

/// What the sender did: columns for monitors and the bindings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SenderRecords {
    /// Every rate change.
    pub rate_time_ns: Vec<u64>,
    pub rate_bps: Vec<f64>,
    /// Every receiver report: when, from which receiver (index in [`TfmccSender::receivers`]),
    /// its rate (as reported, b/s), its loss event rate, the instantaneous RTT (s), the
    /// feedback round it answered, and whether it came from the CLR.
    pub fb_time_ns: Vec<u64>,
    pub fb_receiver: Vec<u32>,
    pub fb_rate_bps: Vec<f64>,
    pub fb_loss_event_rate: Vec<f64>,
    pub fb_rtt_s: Vec<f64>,
    pub fb_round: Vec<u32>,
    pub fb_from_clr: Vec<bool>,
    /// Every CLR change (receiver index).
    pub clr_time_ns: Vec<u64>,
    pub clr_receiver: Vec<u32>,
    /// Every feedback round's end: when, and R_max after it (s).
    pub round_time_ns: Vec<u64>,
    pub round_rmax_s: Vec<f64>,
    pub data_sent: u64,
    pub bytes_sent: u64,
    /// Halvings for lack of feedback (§3.3).
    pub halvings: u64,
    /// When slowstart ended (s).
    pub slowstart_end_s: Option<f64>,
    /// Reports with receiver_leave set, and how many of them came from the CLR (§3.3 case 3).
    pub leave_reports: u64,
    pub clr_leaves: u64,
    /// Reports that did not decode or came from another session.
    pub ignored: u64,
}

castlab_core::records_table!(SenderRecords {
    columns: [
        rate_time_ns,
        rate_bps,
        fb_time_ns,
        fb_receiver,
        fb_rate_bps,
        fb_loss_event_rate,
        fb_rtt_s,
        fb_round,
        fb_from_clr,
        clr_time_ns,
        clr_receiver,
        round_time_ns,
        round_rmax_s,
    ],
    scalars: [
        data_sent = |r| r.data_sent,
        bytes_sent = |r| r.bytes_sent,
        halvings = |r| r.halvings,
        slowstart_end_s = |r| r.slowstart_end_s,
        leave_reports = |r| r.leave_reports,
        clr_leaves = |r| r.clr_leaves,
        ignored = |r| r.ignored,
    ],
});

/// Receivers the sender keeps an index for (bounds its records' receiver table: N of §4.5).
const MAX_RECEIVERS: usize = 10_000;

/// The TFMCC sender: multicasts session `flow` to `group` from `start` until `stop`.
#[derive(Debug)]
pub struct TfmccSender {
    cfg: TfmccConfig,
    group: GroupId,
    flow: u32,
    start: Instant,
    stop: Instant,
    rate_bps: f64,
    r_max: Duration,
    slowstart: bool,
    clr: Option<Clr>,
    /// No increase before this (§3.3 case 3).
    hold_until: Instant,
    /// The CLR left or was dropped for silence: the next report is taken as in case 3.
    clr_gone: bool,
    /// Last slowstart step of 8s/R_max (§3.6).
    last_bump: Instant,
    /// Last increase outside slowstart (§3.3: at most 8s/R_max every R_max).
    last_increase: Option<Instant>,
    /// The slowstart increase under way (§3.6).
    ramp: Option<Ramp>,
    /// The lowest rate a non-CLR receiver reported in this feedback round, and who: it caps
    /// slowstart's increase (§3.6) unless that receiver has since become the CLR.
    round_floor: Option<(Addr, f64)>,
    // §3.4 feedback rounds
    fb_nr: u8,
    round_start: Instant,
    round_len: Duration,
    suppression_bps: f64,
    round_non_clr: bool,
    round_rmax_raised: bool,
    r_peak: Duration,
    clr_echoed: bool,
    pending: Option<Pending>,
    // §3.3 no feedback
    last_any_feedback: Instant,
    // §3.7 sending
    seq: u64,
    last_send: Option<Instant>,
    next_send: Instant,
    due: bool,
    /// `now` of the last timeout: the actual send time of a due packet.
    last_now: Instant,
    timers: TimerTable<SenderTimer>,
    events: [Option<AgentEvent>; 2],
    receivers: Vec<Addr>,
    records: SenderRecords,
    /// Told to stop ([`Agent::handle_shutdown`]): feedback is no longer read.
    stopped: bool,
}

impl TfmccSender {
    pub fn try_new(
        cfg: TfmccConfig,
        group: GroupId,
        flow: u32,
        start: Instant,
        stop: Instant,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if stop < start {
            return Err(ConfigError::new("stop", stop.as_secs_f64(), "must not be before start"));
        }
        let r_max = cfg.initial_rtt;
        // §3.1: X starts at one packet per maximum RTT.
        let rate_bps = cfg.packet_per(r_max).max(cfg.min_rate_bps());
        Ok(TfmccSender {
            round_len: r_max.mul_f64(cfg.round_rtts),
            cfg,
            group,
            flow,
            start,
            stop,
            rate_bps,
            r_max,
            slowstart: true,
            clr: None,
            hold_until: Instant::ZERO,
            clr_gone: false,
            last_bump: Instant::ZERO,
            last_increase: None,
            ramp: None,
            round_floor: None,
            fb_nr: 0,
            round_start: start,
            suppression_bps: f64::INFINITY,
            round_non_clr: false,
            round_rmax_raised: false,
            r_peak: Duration::ZERO,
            clr_echoed: false,
            pending: None,
            last_any_feedback: start,
            seq: 0,
            last_send: None,
            next_send: start,
            due: false,
            last_now: Instant::ZERO,
            timers: TimerTable::default(),
            events: [None; 2],
            receivers: Vec::new(),
            records: SenderRecords::default(),
            stopped: false,
        })
    }

    pub fn config(&self) -> &TfmccConfig {
        &self.cfg
    }
    pub fn records(&self) -> &SenderRecords {
        &self.records
    }
    /// X, b/s.
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }
    pub fn r_max(&self) -> Duration {
        self.r_max
    }
    pub fn in_slowstart(&self) -> bool {
        self.slowstart
    }
    pub fn clr(&self) -> Option<Addr> {
        self.clr.map(|c| c.addr)
    }
    pub fn feedback_round(&self) -> u8 {
        self.fb_nr
    }
    /// X_supp, b/s (infinite at the start of a round).
    pub fn suppression_bps(&self) -> f64 {
        self.suppression_bps
    }
    /// Receivers that reported, in the order of their first report (records index them).
    pub fn receivers(&self) -> &[Addr] {
        &self.receivers
    }

    fn ipi(&self) -> Duration {
        Duration::from_secs_f64(8.0 * self.cfg.packet_size as f64 / self.rate_bps)
    }

    fn receiver_index(&mut self, a: Addr) -> u32 {
        if let Some(i) = self.receivers.iter().position(|&r| r == a) {
            return i as u32;
        }
        if self.receivers.len() < MAX_RECEIVERS {
            self.receivers.push(a);
            return (self.receivers.len() - 1) as u32;
        }
        u32::MAX
    }

    /// X ← x at once, ending any slowstart increase under way.
    fn set_rate(&mut self, now: Instant, x: f64) {
        if self.ramp.take().is_some() {
            self.timers.stop(SenderTimer::Ramp);
        }
        self.apply_rate(now, x);
    }

    /// §3.6: raise X to `to` gradually over one RTT (see the module's readings): the CLR's
    /// RTT as measured here, R_max without a CLR. A ramp to the same target goes on as it is.
    fn ramp_to(&mut self, now: Instant, to: f64) {
        if self.ramp.is_some_and(|r| r.to == to) {
            return;
        }
        let over = self.clr.map_or(self.r_max, |c| c.rtt);
        let n = self.cfg.slowstart_ramp_steps;
        self.ramp = Some(Ramp { from: self.rate_bps, to, start: now, over, step: 0 });
        self.timers.set(SenderTimer::Ramp, now + over.mul_f64(1.0 / n as f64));
    }

    /// The next step of the ramp: X at its share of the way, and the step after it armed.
    fn ramp_step(&mut self, now: Instant) {
        let Some(mut r) = self.ramp else { return };
        let n = self.cfg.slowstart_ramp_steps;
        r.step += 1;
        let x = r.from + (r.to - r.from) * r.step as f64 / n as f64;
        if r.step >= n {
            self.ramp = None;
        } else {
            self.ramp = Some(r);
            self.timers.set(SenderTimer::Ramp, r.start + r.over.mul_f64((r.step + 1) as f64 / n as f64));
        }
        self.apply_rate(now, x);
    }

    fn apply_rate(&mut self, now: Instant, x: f64) {
        let x = x.max(self.cfg.min_rate_bps());
        if x == self.rate_bps || !x.is_finite() {
            return;
        }
        self.rate_bps = x;
        self.records.rate_time_ns.push(now.as_nanos());
        self.records.rate_bps.push(x);
        if let Some(slot) = self.events.iter_mut().find(|s| s.is_none()) {
            *slot = Some(AgentEvent::RateChanged { rate_bps: x });
        } else {
            self.events[1] = Some(AgentEvent::RateChanged { rate_bps: x });
        }
        // Our reading of §3.7: the next packet is due one new interval after the last one.
        if let Some(last) = self.last_send {
            self.next_send = (last + self.ipi()).max(now);
            if !self.due && now < self.stop {
                self.timers.set(SenderTimer::Send, self.next_send);
            }
        }
    }

    fn make_clr(&mut self, now: Instant, addr: Addr, rtt: Duration, tr: (u32, Instant)) {
        let new = self.clr.is_none_or(|c| c.addr != addr);
        self.clr = Some(Clr {
            addr,
            rtt,
            last_report: now,
            selected_at: if new { now } else { self.clr.map_or(now, |c| c.selected_at) },
            halved: false,
            tr_us: tr.0,
            tr_at: tr.1,
        });
        if new {
            let i = self.receiver_index(addr);
            self.records.clr_time_ns.push(now.as_nanos());
            self.records.clr_receiver.push(i);
        }
    }

    /// §3: a receiver report from `src` arrived at `now`.
    fn on_feedback(&mut self, now: Instant, src: Addr, fb: FeedbackHeader) {
        // §3.2: R_r = ts_now - ts_i', at least 1 ms.
        let r_us = micros_between(micros(now), fb.ts_echo_us).max(1000) as u64;
        let r_r = Duration::from_micros(r_us);
        if r_r > self.r_max {
            self.r_max = r_r;
            self.round_rmax_raised = true;
        }
        self.r_peak = self.r_peak.max(r_r);
        self.last_any_feedback = now;
        let was_clr = self.clr.is_some_and(|c| c.addr == src);
        // §3.4: non-CLR feedback of this round lowers X_supp (with the rate as reported); a
        // leaving receiver's rate no longer limits anyone.
        if !was_clr && !fb.leave && fb.fb_nr == self.fb_nr {
            self.round_non_clr = true;
            if self.suppression_bps > fb.rate_bps {
                self.suppression_bps = (1.0 - self.cfg.suppression_g) * fb.rate_bps;
            }
        }
        // §3.3: a rate computed with R_max is scaled to the sender's measured RTT.
        let x = if fb.have_loss && !fb.have_rtt {
            fb.rate_bps * self.r_max.as_secs_f64() / r_r.as_secs_f64()
        } else {
            fb.rate_bps
        };
        if fb.have_loss && !fb.leave && self.slowstart {
            // §3.6: slowstart ends with the first report of a loss, and so does its increase.
            self.slowstart = false;
            if self.ramp.take().is_some() {
                self.timers.stop(SenderTimer::Ramp);
            }
            self.records.slowstart_end_s = Some(now.as_secs_f64());
        }
        let idx = self.receiver_index(src);
        self.records.fb_time_ns.push(now.as_nanos());
        self.records.fb_receiver.push(idx);
        self.records.fb_rate_bps.push(fb.rate_bps);
        self.records.fb_loss_event_rate.push(fb.loss_event_rate as f64);
        self.records.fb_rtt_s.push(r_r.as_secs_f64());
        self.records.fb_round.push(fb.fb_nr as u32);
        self.records.fb_from_clr.push(was_clr);
        if fb.leave {
            self.on_leave(now, was_clr);
            return;
        }

        if !was_clr && fb.fb_nr == self.fb_nr && self.round_floor.is_none_or(|(_, r)| x < r) {
            self.round_floor = Some((src, x));
        }
        let step = self.cfg.packet_per(self.r_max);
        let round = self.round_len;
        let tr = (fb.tr_us, now);
        let x_now = self.rate_bps;
        let mut new_clr = false;
        match self.clr {
            None => {
                // §3.3 case 1 (and case 3's rule after the CLR was dropped for silence).
                self.make_clr(now, src, r_r, tr);
                new_clr = true;
                if self.clr_gone && x > x_now {
                    self.hold_until = now + round;
                } else if self.slowstart {
                    self.slowstart_step(now, x, step);
                } else {
                    self.follow_clr(now, x, step);
                }
                self.clr_gone = false;
            }
            Some(c) if c.addr != src => {
                if x < x_now {
                    // §3.3 case 2.
                    self.make_clr(now, src, r_r, tr);
                    new_clr = true;
                    self.set_rate(now, x);
                } else if self.slowstart && self.ramp.is_some_and(|r| r.to > x) {
                    // §3.6: the increase is limited to the lowest reported rate.
                    self.ramp_to(now, x);
                }
            }
            Some(_) => {
                // §3.3 case 4.
                self.make_clr(now, src, r_r, tr);
                if self.slowstart {
                    self.slowstart_step(now, x, step);
                } else if x < x_now || now >= self.hold_until {
                    self.follow_clr(now, x, step);
                }
            }
        }
        self.offer_echo(src, &fb, x, new_clr, tr);
        // §3.4: a round past T ends at its first non-CLR report.
        if !was_clr && fb.fb_nr == self.fb_nr && now >= self.round_start + self.round_len {
            self.end_round(now);
        }
        self.arm_no_feedback();
    }

    /// §3.3 case 3: a report with receiver_leave set. A leaving receiver never becomes the
    /// CLR and its rate changes nothing; when the CLR leaves, the sender has no CLR until the
    /// next report, whose receiver becomes CLR (case 1's path with `clr_gone`), and the rate
    /// does not increase for one feedback round from the leave.
    fn on_leave(&mut self, now: Instant, was_clr: bool) {
        self.records.leave_reports += 1;
        if was_clr {
            self.records.clr_leaves += 1;
            if self.ramp.take().is_some() {
                self.timers.stop(SenderTimer::Ramp);
            }
            self.clr = None;
            self.clr_gone = true;
            self.hold_until = now + self.round_len;
        }
        self.arm_no_feedback();
    }

    /// §3.3 cases 1 and 4 outside slowstart: X ← X_r when that is lower; otherwise X ←
    /// min(X_r, X + 8s/R_max), at most once per R_max ("an increase rate of no more than
    /// 8s/R_max bits/s every R_max seconds", case 1 and the recovery sentence of §3.3; see the
    /// module's readings).
    fn follow_clr(&mut self, now: Instant, x: f64, step: f64) {
        let x_now = self.rate_bps;
        if x < x_now {
            self.set_rate(now, x);
        } else if x > x_now && self.last_increase.is_none_or(|t| now >= t + self.r_max) {
            self.last_increase = Some(now);
            self.set_rate(now, x.min(x_now + step));
        }
    }

    /// §3.6: towards the lowest reported rate (the CLR's report, or a lower one of this round
    /// from a receiver that is not the CLR), or up by 8s/R_max once per R_max when that is
    /// more; increases spread over an RTT ([`Self::ramp_to`]), decreases at once. No increase
    /// for a feedback round after the CLR left (§3.3 case 3).
    fn slowstart_step(&mut self, now: Instant, x: f64, step: f64) {
        let clr = self.clr.map(|c| c.addr);
        let x = match self.round_floor {
            Some((a, r)) if Some(a) != clr => x.min(r),
            _ => x,
        };
        let bumped = self.rate_bps + step;
        if x < self.rate_bps {
            self.set_rate(now, x);
        } else if now < self.hold_until {
        } else if x >= bumped {
            self.ramp_to(now, x);
        } else if now >= self.last_bump + self.r_max && self.ramp.is_none() {
            self.last_bump = now;
            self.ramp_to(now, bumped);
        }
    }

    /// §3.5: keep the most urgent timestamp to echo in the next data packet.
    fn offer_echo(&mut self, src: Addr, fb: &FeedbackHeader, x: f64, new_clr: bool, tr: (u32, Instant)) {
        let is_clr = self.clr.is_some_and(|c| c.addr == src);
        let prio = if is_clr && (new_clr || !fb.have_rtt) {
            1
        } else if is_clr {
            // the CLR's timestamp is echoed whenever nothing else waits
            return;
        } else if !fb.have_rtt {
            2
        } else {
            3
        };
        let cand = Pending { addr: src, prio, fb_nr: fb.fb_nr, rate_bps: x, tr_us: tr.0, tr_at: tr.1 };
        let better = match self.pending {
            None => true,
            Some(p) => {
                // older feedback first (a larger distance back from the current round), then
                // the lowest rate
                let age = |n: u8| self.fb_nr.wrapping_sub(n);
                (cand.prio, std::cmp::Reverse(age(cand.fb_nr)), cand.rate_bps.to_bits())
                    < (p.prio, std::cmp::Reverse(age(p.fb_nr)), p.rate_bps.to_bits())
            }
        };
        if better {
            self.pending = Some(cand);
        }
    }

    /// §3.5: the echo for a data packet sent at `now`.
    fn take_echo(&mut self, now: Instant) -> Option<(Echo, bool)> {
        let clr = self.clr;
        let clr_due = !self.clr_echoed && now >= self.round_start + self.round_len / 2;
        let pick = match (self.pending, clr) {
            // the CLR's timestamp at least once per round, even when others keep arriving
            (Some(p), Some(c)) if p.prio > 1 && clr_due => (c.addr, c.tr_us, c.tr_at),
            (Some(p), _) => {
                self.pending = None;
                (p.addr, p.tr_us, p.tr_at)
            }
            (None, Some(c)) => (c.addr, c.tr_us, c.tr_at),
            (None, None) => return None,
        };
        let is_clr = clr.is_some_and(|c| c.addr == pick.0);
        if is_clr {
            self.clr_echoed = true;
        }
        // tr_r' = tr_r + ts_d
        let held = ((now - pick.2).as_nanos() / 1000) as u32;
        Some((Echo { receiver: pick.0, timestamp_us: pick.1.wrapping_add(held) }, is_clr))
    }

    /// §3.4 and §3.2: close the round, decay R_max, open the next one.
    fn end_round(&mut self, now: Instant) {
        if !self.round_rmax_raised {
            self.r_max = self.r_max.mul_f64(self.cfg.rmax_decay).max(self.r_peak);
        }
        // R_max is never below the packet interval plus the clock's granularity.
        self.r_max = self.r_max.max(self.ipi() + self.cfg.clock_granularity);
        self.fb_nr = self.fb_nr.wrapping_add(1);
        self.suppression_bps = f64::INFINITY;
        self.round_floor = None;
        self.round_start = now;
        self.round_len = self.r_max.mul_f64(self.cfg.round_rtts);
        self.round_non_clr = false;
        self.round_rmax_raised = false;
        self.r_peak = Duration::ZERO;
        self.clr_echoed = false;
        self.records.round_time_ns.push(now.as_nanos());
        self.records.round_rmax_s.push(self.r_max.as_secs_f64());
        self.timers.set(SenderTimer::Round, now + self.round_len);
    }

    /// The "RTT" of the no-feedback rules: see the module's readings.
    fn silence_unit(&self) -> Duration {
        self.clr.map_or(self.r_max, |c| c.rtt).max(self.ipi())
    }

    fn arm_no_feedback(&mut self) {
        let u = self.silence_unit();
        let k = self.cfg.clr_timeout_rtts as u64;
        let at = match self.clr {
            Some(c) if !c.halved => c.last_report + u * self.cfg.clr_halve_rtts as u64,
            Some(c) => c.last_report + u * k,
            None => self.last_any_feedback + u * k,
        };
        self.timers.set(SenderTimer::NoFeedback, at);
    }

    /// §3.3: the rules for a silent CLR and for no feedback at all.
    fn on_no_feedback(&mut self, now: Instant) {
        let u = self.silence_unit();
        let k = self.cfg.clr_timeout_rtts as u64;
        match self.clr {
            Some(c) if now >= c.last_report + u * k => {
                // the CLR crashed or left: the next report picks a new one (as in case 3)
                self.clr = None;
                self.clr_gone = true;
                self.last_any_feedback = self.last_any_feedback.max(c.last_report);
            }
            Some(c) if !c.halved && now >= c.last_report + u * self.cfg.clr_halve_rtts as u64 => {
                if now >= c.selected_at + u * k {
                    self.halve(now);
                }
                if let Some(c) = self.clr.as_mut() {
                    c.halved = true;
                }
            }
            None if now >= self.last_any_feedback + u * k => {
                // every 10 RTTs without any feedback
                self.halve(now);
                self.last_any_feedback = now;
            }
            _ => {}
        }
        self.arm_no_feedback();
    }

    fn halve(&mut self, now: Instant) {
        self.records.halvings += 1;
        self.set_rate(now, self.rate_bps / 2.0);
    }
}

impl Agent for TfmccSender {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        let at = self.start.max(now);
        self.next_send = at;
        self.round_start = at;
        self.last_any_feedback = at;
        self.timers.set(SenderTimer::Send, at);
        self.timers.set(SenderTimer::Round, at + self.round_len);
        self.arm_no_feedback();
        self.records.rate_time_ns.push(at.as_nanos());
        self.records.rate_bps.push(self.rate_bps);
        self.events[0] = Some(AgentEvent::RateChanged { rate_bps: self.rate_bps });
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        if p.flow != self.flow || self.stopped {
            return;
        }
        match FeedbackHeader::decode(p) {
            Some(fb) if matches!(p.dst, Dest::Unicast(_)) => self.on_feedback(now, p.src, fb),
            _ => self.records.ignored += 1,
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.last_now = now;
        while let Some(t) = self.timers.expire_earliest(now) {
            match t {
                SenderTimer::Send => {
                    if now < self.stop {
                        self.due = true;
                    }
                }
                SenderTimer::Round => {
                    if self.round_non_clr || now >= self.round_start + self.round_len * 2 {
                        self.end_round(now);
                    } else {
                        self.timers.set(SenderTimer::Round, self.round_start + self.round_len * 2);
                    }
                }
                SenderTimer::NoFeedback => self.on_no_feedback(now),
                SenderTimer::Ramp => self.ramp_step(now),
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        if !self.due {
            return None;
        }
        self.due = false;
        let now = self.last_now;
        let echo = self.take_echo(now);
        let h = DataHeader {
            ts_us: micros(now),
            echo: echo.map(|e| e.0),
            is_clr: echo.is_some_and(|e| e.1),
            fb_nr: self.fb_nr,
            suppression_bps: self.suppression_bps as f32,
            r_max: rtt_on_the_wire(self.r_max),
        };
        let mut p = Packet::data(Dest::Group(self.group), self.cfg.packet_size);
        p.flow = self.flow;
        p.seq = self.seq;
        p.sent_at = now;
        p.header = h.encode();
        self.seq += 1;
        self.records.data_sent += 1;
        self.records.bytes_sent += self.cfg.packet_size as u64;
        // §3.7: the next nominal send time is this packet's nominal one plus the current
        // interval (the actual send time, in the header, may be later).
        self.last_send = Some(self.next_send);
        self.next_send += self.ipi();
        if self.next_send < self.stop {
            self.timers.set(SenderTimer::Send, self.next_send);
        }
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    /// Told to stop: RFC 4654's sender (§3.1-§3.7) has no message that ends its session (only
    /// a receiver leaves, §4.2, by a flag in its feedback), so the sender sends nothing more and
    /// disarms every timer (sending, feedback rounds, the no-feedback timer, a slowstart
    /// ramp). It holds no group.
    fn handle_shutdown(&mut self, now: Instant) {
        self.stopped = true;
        self.stop = self.stop.min(now);
        self.due = false;
        self.ramp = None;
        self.timers.clear();
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        let e = self.events[0].take()?;
        self.events.rotate_left(1);
        Some(e)
    }
}
