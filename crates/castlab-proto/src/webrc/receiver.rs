//! The WEBRC receiver (RFC 3738 §3.2): joins and leaves, the MRTT and ARTT (§3.2.2.2), the
//! loss filter (§3.2.2.1), TRR_P and ARR_P (§3.2.2.5), slow start (§3.2.2.6), the target
//! rate (§3.2.2.7) and the receiver events (§3.2.3). It never sends.

use std::collections::VecDeque;

use castlab_core::{Agent, AgentEvent, ConfigError, Duration, GroupId, Instant, Packet, StartInfo, TimerTable};

use super::sender::check_groups;
use super::{layers_rate, lossp_for_rate, reqn, CcInfo, LossFilter, RttFilter, WebrcConfig, PSN_SPACE};

castlab_core::timers! {
    /// The receiver's timers.
    pub enum ReceiverTimer {
        /// The next epoch boundary (§3.2.3.5).
        Epoch,
        /// The loss event under way ends, ARTT after it began (§3.2.3.4).
        LossEvent,
        /// The join under way times out (§3.2.3.7).
        JoinTimeout,
        /// No packet for max{10, TSD} s (§3.2.3.8).
        Silence,
        /// No time slot change for max{20, 2·TSD} s (§3.2.3.8).
        SlotStall,
    }
}

/// What the receiver measured and did: columns for monitors and the bindings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReceiverRecords {
    /// At each epoch (§3.2.3.5), after the updates: NWC, TRATE, ARR_P, TRR_P and RR_P
    /// (packets/s), ARTT (s), LOSSP (NaN during start-up) and SSR_P (inf in start-up).
    pub epoch_time_ns: Vec<u64>,
    pub epoch_nwc: Vec<u32>,
    pub epoch_trate: Vec<f64>,
    pub epoch_arr: Vec<f64>,
    pub epoch_trr: Vec<f64>,
    pub epoch_rr: Vec<f64>,
    pub epoch_artt: Vec<f64>,
    pub epoch_lossp: Vec<f64>,
    pub epoch_ssr: Vec<f64>,
    /// Each MRTT measurement: when, FirstTime - JoinTime, the MRTT and ARTT after it.
    pub mrtt_time_ns: Vec<u64>,
    pub mrtt_first_minus_join: Vec<f64>,
    pub mrtt: Vec<f64>,
    pub mrtt_artt: Vec<f64>,
    /// Each wave join: when and its CN.
    pub join_time_ns: Vec<u64>,
    pub join_cn: Vec<u32>,
    /// Each loss event's start.
    pub loss_event_ns: Vec<u64>,
    pub received: u64,
    pub bytes: u64,
    pub lost: u64,
    /// Packets older than the next expected PSN (reordered or duplicated).
    pub late: u64,
    pub leaves: u64,
    pub join_timeouts: u64,
    pub slot_changes: u64,
    /// When start-up ended, seconds (None: not yet).
    pub slow_start_end_s: Option<f64>,
    /// 1 once an exceptional timeout made the receiver leave the session (§3.2.3.8).
    pub left_session: u64,
    /// Packets of another session, of a channel not joined, or not WEBRC.
    pub ignored: u64,
}

castlab_core::records_table!(ReceiverRecords {
    columns: [
        epoch_time_ns,
        epoch_nwc,
        epoch_trate,
        epoch_arr,
        epoch_trr,
        epoch_rr,
        epoch_artt,
        epoch_lossp,
        epoch_ssr,
        mrtt_time_ns,
        mrtt_first_minus_join,
        mrtt,
        mrtt_artt,
        join_time_ns,
        join_cn,
        loss_event_ns,
    ],
    scalars: [
        received = |r| r.received,
        bytes = |r| r.bytes,
        lost = |r| r.lost,
        late = |r| r.late,
        leaves = |r| r.leaves,
        join_timeouts = |r| r.join_timeouts,
        slot_changes = |r| r.slot_changes,
        slow_start_end_s = |r| r.slow_start_end_s,
        left_session = |r| r.left_session != 0,
        ignored = |r| r.ignored,
    ],
});

/// The WEBRC receiver. See the module documentation.
#[derive(Debug)]
pub struct WebrcReceiver {
    cfg: WebrcConfig,
    groups: Vec<GroupId>,
    flow: u32,
    t: u32,
    el_s: f64,
    tsd_s: f64,
    /// G = Nu·EL/TSD (§3.2.2.1).
    g: f64,
    /// SSMINR_P = BCR_P·(1 + 1/P + 1/P²) (§3.2.2.6).
    ssminr: f64,
    base_join: Instant,
    /// CTSI as last seen (None before the first base channel packet).
    ctsi: Option<u32>,
    nwc: u32,
    /// The join under way: CN and JoinTime (JOINING = true).
    joining: Option<(u32, Instant)>,
    /// FirstTime - JoinTime of the previous wave join (slow start's MRTT check).
    prev_fj: Option<f64>,
    /// When the most recently joined wave's first packet arrived.
    last_wave_first: Option<Instant>,
    rtt: Option<RttFilter>,
    loss: LossFilter,
    lossp: f64,
    /// SSR_P (infinite in start-up).
    ssr: f64,
    trr: f64,
    arr: f64,
    in_loss_event: bool,
    rx_epoch: u64,
    lost_epoch: u64,
    /// The next expected PSN per channel (None: none yet).
    expect: Vec<Option<u64>>,
    /// The base channel's PSN wrap: the largest multiple of L not above 2^16.
    base_wrap: u64,
    stopped: bool,
    timers: TimerTable<ReceiverTimer>,
    events: VecDeque<AgentEvent>,
    records: ReceiverRecords,
}

impl WebrcReceiver {
    /// A receiver of session `flow` whose channel CN is on `groups[CN]`.
    pub fn try_new(cfg: WebrcConfig, groups: &[GroupId], flow: u32) -> Result<Self, ConfigError> {
        cfg.validate()?;
        check_groups(&cfg, groups)?;
        let t = cfg.t();
        let (el_s, tsd_s) = (cfg.el.as_secs_f64(), cfg.tsd.as_secs_f64());
        Ok(WebrcReceiver {
            groups: groups.to_vec(),
            flow,
            t,
            el_s,
            tsd_s,
            g: cfg.nu * el_s / tsd_s,
            ssminr: layers_rate(cfg.bcr_p, cfg.p, 2),
            base_join: Instant::ZERO,
            ctsi: None,
            nwc: 0,
            joining: None,
            prev_fj: None,
            last_wave_first: None,
            rtt: None,
            loss: LossFilter::reset(1.0),
            lossp: f64::NAN,
            ssr: f64::INFINITY,
            trr: 0.0,
            arr: 0.0,
            in_loss_event: false,
            rx_epoch: 0,
            lost_epoch: 0,
            expect: vec![None; t as usize + 1],
            base_wrap: PSN_SPACE / cfg.l() * cfg.l(),
            stopped: false,
            timers: TimerTable::default(),
            // Each call queues at most one leave and one level per slot change (at most T)
            // or every channel once: no queue grows past this.
            events: VecDeque::with_capacity(2 * t as usize + 8),
            records: ReceiverRecords::default(),
            cfg,
        })
    }

    pub fn config(&self) -> &WebrcConfig {
        &self.cfg
    }
    pub fn records(&self) -> &ReceiverRecords {
        &self.records
    }
    /// NWC, the wave channels joined.
    pub fn nwc(&self) -> u32 {
        self.nwc
    }
    /// ARTT in seconds (None before the base channel's first packet).
    pub fn artt(&self) -> Option<f64> {
        self.rtt.map(|r| r.artt)
    }
    /// LOSSP (NaN during start-up).
    pub fn lossp(&self) -> f64 {
        self.lossp
    }
    pub fn trr(&self) -> f64 {
        self.trr
    }
    pub fn arr(&self) -> f64 {
        self.arr
    }
    pub fn ssr(&self) -> f64 {
        self.ssr
    }
    pub fn in_slow_start(&self) -> bool {
        self.ssr.is_infinite()
    }
    pub fn left_session(&self) -> bool {
        self.stopped
    }
    pub fn is_joining(&self) -> bool {
        self.joining.is_some()
    }

    /// TRATE (§3.2.2.7), packets/s.
    pub fn trate(&self) -> f64 {
        let mrr = self.cfg.mrr_p();
        if self.ssr.is_infinite() {
            (4.0 * self.trr).min(mrr)
        } else {
            let eq = match self.rtt {
                Some(r) if self.lossp > 0.0 => reqn(r.artt, self.lossp),
                _ => f64::INFINITY,
            };
            self.ssr.max(eq).min(mrr)
        }
    }

    fn r(&self) -> f64 {
        1.0 / self.cfg.p
    }

    /// Ends start-up with SSR_P = `ssr`: LOSSP is reset so that REQN with the current ARTT
    /// equals TRR_P (§3.2.2.6).
    fn end_slow_start(&mut self, now: Instant, ssr: f64) {
        self.ssr = ssr;
        let artt = self.rtt.map_or(0.0, |r| r.artt);
        let a = lossp_for_rate(artt, self.trr);
        self.loss = LossFilter::reset(a);
        self.lossp = a;
        self.records.slow_start_end_s = Some(now.as_secs_f64());
    }

    fn set_level(&mut self) {
        self.events.push_back(AgentEvent::LevelChanged { level: self.nwc });
    }

    /// A time slot change to CTSI `i + 1` (§3.2.3.3): the lowest layer of slot i, wave
    /// channel i, goes quiescent and is left.
    fn slot_change(&mut self, now: Instant) {
        let Some(i) = self.ctsi else { return };
        self.records.slot_changes += 1;
        // §3.2.2.5: the base channel's rate jumps back up by (1-P)·BCR_P.
        self.arr += (1.0 - self.cfg.p) * self.cfg.bcr_p;
        if self.nwc > 0 {
            self.events.push_back(AgentEvent::Leave(self.groups[i as usize]));
            self.records.leaves += 1;
            self.expect[i as usize] = None;
            self.nwc -= 1;
            self.arr = (self.arr - self.cfg.bcr_p).max(0.0);
            if self.joining.is_some_and(|(cn, _)| cn == i) {
                self.joining = None;
                self.timers.stop(ReceiverTimer::JoinTimeout);
            }
            self.set_level();
        }
        self.ctsi = Some((i + 1) % self.t);
        self.timers.set(ReceiverTimer::SlotStall, now + self.slot_stall_after());
    }

    fn silence_after(&self) -> Duration {
        Duration::from_secs(10).max(self.cfg.tsd)
    }
    fn slot_stall_after(&self) -> Duration {
        Duration::from_secs(20).max(self.cfg.tsd.mul_f64(2.0))
    }

    /// §3.2.3.8: leave every channel and stop.
    fn leave_session(&mut self) {
        if let Some(i) = self.ctsi {
            for k in 0..self.nwc {
                self.events.push_back(AgentEvent::Leave(self.groups[((i + k) % self.t) as usize]));
            }
        }
        self.events.push_back(AgentEvent::Leave(self.groups[self.t as usize]));
        self.nwc = 0;
        self.joining = None;
        self.set_level();
        self.stopped = true;
        self.records.left_session = 1;
        for &t in ReceiverTimer::VALUES_ALL {
            self.timers.stop(t);
        }
    }

    /// `n` packets of a channel were found lost at `now` (§3.2.3.4).
    fn lost(&mut self, now: Instant, n: u64) {
        self.records.lost += n;
        self.lost_epoch += n;
        if !self.in_loss_event {
            self.in_loss_event = true;
            self.records.loss_event_ns.push(now.as_nanos());
            let artt = self.rtt.map_or(0.0, |r| r.artt.max(0.0));
            self.timers.set(ReceiverTimer::LossEvent, now + Duration::from_secs_f64(artt));
            let ssr = (self.cfg.p * self.trr).max(self.ssminr);
            if self.ssr.is_infinite() {
                self.end_slow_start(now, ssr);
            } else {
                self.ssr = ssr;
                self.loss.loss_event();
            }
        }
        for _ in 0..n {
            self.loss.packet();
        }
    }

    /// The first packet of the channel being joined (§3.2.3.2, §3.2.2.2).
    fn first_after_join(&mut self, now: Instant, join: Instant) {
        let fj = now.saturating_since(join).as_secs_f64();
        let p = self.cfg.p;
        let mrtt = fj - (1.0 / p).ln() / 2.0 / (1.0 - p) / self.cfg.bcr_p * p.powi(self.nwc as i32);
        let Some(mut rtt) = self.rtt else { return };
        rtt.measure(mrtt, self.cfg.alpha, p);
        self.rtt = Some(rtt);
        self.records.mrtt_time_ns.push(now.as_nanos());
        self.records.mrtt_first_minus_join.push(fj);
        self.records.mrtt.push(mrtt);
        self.records.mrtt_artt.push(rtt.artt);
        // §3.2.2.6: a large increase of FirstTime - JoinTime ends start-up.
        if self.ssr.is_infinite() {
            if let Some(prev) = self.prev_fj {
                let large = (p.powi(self.nwc as i32 + 1) - 1.0) / (p * p.ln()) / self.arr;
                if fj - prev > large {
                    let ssr = (p * self.trr).max(self.ssminr);
                    self.end_slow_start(now, ssr);
                }
            }
        }
        self.prev_fj = Some(fj);
        self.last_wave_first = Some(now);
        self.joining = None;
        self.timers.stop(ReceiverTimer::JoinTimeout);
    }

    /// The epoch boundary (§3.2.3.5): RR_P, IRR_P, TRR_P, ARR_P, LOSSP; then the join
    /// decision (§3.2.3.6).
    fn epoch(&mut self, now: Instant) {
        let p = self.cfg.p;
        let rr = self.rx_epoch as f64 / self.el_s;
        let irr = (self.rx_epoch + self.lost_epoch) as f64 / self.el_s;
        self.rx_epoch = 0;
        self.lost_epoch = 0;
        if self.ctsi.is_none() {
            return;
        }
        // §3.2.2.5, Beta and Zeta by mode.
        let (beta, zeta) = if self.ssr.is_infinite() {
            ((1.0 - p.powf(0.25)) / 2.0, p.sqrt() / (1.0 + p.sqrt()))
        } else {
            (1.0 - (p / (1.0 + p)).powf(self.el_s / self.tsd_s), 2.0 * self.el_s / (4.0 + self.tsd_s))
        };
        self.trr = (1.0 - zeta) * self.trr + zeta * rr;
        self.arr = p.powf(self.el_s / self.tsd_s) * (1.0 - beta) * self.arr + beta * irr;
        self.arr = self.arr.min(layers_rate(self.cfg.bcr_p, p, self.nwc));
        if self.ssr.is_finite() {
            self.lossp = self.loss.epoch(self.g, self.cfg.delta);
        }
        // §3.2.2.6: the maximum reception rate reached.
        let next = self.arr * (p.powi(-(self.nwc as i32) - 2) - 1.0) / (p.powi(-(self.nwc as i32) - 1) - 1.0);
        if self.ssr.is_infinite() && (next > self.cfg.mrr_p() || next > self.cfg.sr_p()) {
            let ssr = self.trr.max(self.ssminr);
            self.end_slow_start(now, ssr);
        }
        self.decide(now, zeta);
        let r = &mut self.records;
        r.epoch_time_ns.push(now.as_nanos());
        r.epoch_nwc.push(self.nwc);
        r.epoch_arr.push(self.arr);
        r.epoch_trr.push(self.trr);
        r.epoch_rr.push(rr);
        r.epoch_artt.push(self.rtt.map_or(f64::NAN, |x| x.artt));
        r.epoch_lossp.push(self.lossp);
        r.epoch_ssr.push(self.ssr);
        let trate = self.trate();
        self.records.epoch_trate.push(trate);
    }

    /// §3.2.3.6: join the next higher layer, or not.
    fn decide(&mut self, now: Instant, zeta: f64) {
        let p = self.cfg.p;
        let Some(i) = self.ctsi else { return };
        if self.in_loss_event || self.joining.is_some() || self.nwc >= self.cfg.waves {
            return;
        }
        if self.ssr.is_infinite() {
            if let Some(first) = self.last_wave_first {
                if now.saturating_since(first).as_secs_f64() < self.el_s {
                    return;
                }
                // §3.2.2.6: TRR_P greatly below ARR_P ends start-up instead of a join.
                let q = p.powf(-self.el_s / self.tsd_s);
                let g = (p.powi(-(self.nwc as i32) - 1) - 1.0) / (p.powi(-(self.nwc as i32)) - 1.0);
                let c = zeta + (1.0 - zeta) * q * (zeta + (1.0 - zeta) * p.sqrt() * q) / g;
                if self.trr < c * self.arr - 2.0 / self.el_s {
                    let ssr = self.trr.max(self.ssminr);
                    self.end_slow_start(now, ssr);
                    return;
                }
            }
        }
        let r = self.r();
        let after = self.arr * (r.powi(self.nwc as i32 + 2) - 1.0) / (r.powi(self.nwc as i32 + 1) - 1.0);
        // The sender does not send at a constant aggregate rate (see the module doc).
        if self.trate() < after {
            return;
        }
        let cn = (i + self.nwc) % self.t;
        self.nwc += 1;
        self.arr *= (r.powi(self.nwc as i32 + 1) - 1.0) / (r.powi(self.nwc as i32) - 1.0);
        self.joining = Some((cn, now));
        self.expect[cn as usize] = None;
        self.events.push_back(AgentEvent::Join(self.groups[cn as usize]));
        self.set_level();
        self.records.join_time_ns.push(now.as_nanos());
        self.records.join_cn.push(cn);
        // §3.2.3.7: max{2·V/ARTT, 10·ARTT}.
        let (v, a) = self.rtt.map_or((0.0, 0.0), |x| (x.v, x.artt));
        let wait = if a > 0.0 { (2.0 * v / a).max(10.0 * a) } else { 10.0 * self.el_s };
        let wait = wait.clamp(self.el_s, 10.0 * self.tsd_s);
        self.timers.set(ReceiverTimer::JoinTimeout, now + Duration::from_secs_f64(wait));
    }
}

impl ReceiverTimer {
    const VALUES_ALL: &'static [ReceiverTimer] = <ReceiverTimer as castlab_core::Timer>::VALUES;
}

impl Agent for WebrcReceiver {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        // §3.2.1: join the base channel first.
        self.base_join = now;
        self.events.push_back(AgentEvent::Join(self.groups[self.t as usize]));
        self.set_level();
        self.timers.set(ReceiverTimer::Epoch, now + self.cfg.el);
        self.timers.set(ReceiverTimer::Silence, now + self.silence_after());
        self.timers.set(ReceiverTimer::SlotStall, now + self.slot_stall_after());
    }

    fn handle_packet(&mut self, now: Instant, packet: &Packet) {
        if self.stopped {
            return;
        }
        let Some(info) = CcInfo::decode(packet) else {
            self.records.ignored += 1;
            return;
        };
        let (cn, t) = (info.cn as u32, self.t);
        if packet.flow != self.flow || cn > t || info.ctsi as u32 >= t {
            self.records.ignored += 1;
            return;
        }
        let psn = info.psn as u64;
        match self.ctsi {
            None if cn == t => {
                // The session's first base channel packet (§3.2.3.2, §3.2.2.5).
                let fj = now.saturating_since(self.base_join).as_secs_f64();
                self.rtt = Some(RttFilter::base(fj));
                self.records.mrtt_time_ns.push(now.as_nanos());
                self.records.mrtt_first_minus_join.push(fj);
                self.records.mrtt.push(fj);
                self.records.mrtt_artt.push(fj);
                let k = (psn % self.cfg.l()) as f64;
                self.trr = self.cfg.bcr_p + k * self.cfg.p.ln() / self.tsd_s;
                self.arr = self.trr;
                self.ctsi = Some(info.ctsi as u32);
                self.timers.set(ReceiverTimer::SlotStall, now + self.slot_stall_after());
            }
            None => {
                self.records.ignored += 1;
                return;
            }
            Some(j) => {
                // §3.2.3.3: a change of 1..=T-Q/2 slots ahead; anything else is a straggler.
                let d = (info.ctsi as u32 + t - j) % t;
                if d >= 1 && 2 * d <= 2 * t - self.cfg.q() {
                    for _ in 0..d {
                        self.slot_change(now);
                    }
                }
            }
        }
        let Some(i) = self.ctsi else { return };
        if cn < t && (cn + t - i) % t >= self.nwc {
            // A wave not joined (left a moment ago).
            self.records.ignored += 1;
            return;
        }
        self.timers.set(ReceiverTimer::Silence, now + self.silence_after());
        if let Some((jcn, jt)) = self.joining {
            if jcn == cn {
                self.first_after_join(now, jt);
            }
        }
        // Sequence numbers, scoped by CN (§3.2.3.4).
        let wrap = if cn == t { self.base_wrap } else { PSN_SPACE };
        let psn = psn % wrap;
        match self.expect[cn as usize] {
            None => self.expect[cn as usize] = Some((psn + 1) % wrap),
            Some(e) => {
                let gap = (psn + wrap - e) % wrap;
                if gap == 0 {
                    self.expect[cn as usize] = Some((psn + 1) % wrap);
                } else if gap < wrap / 2 {
                    self.expect[cn as usize] = Some((psn + 1) % wrap);
                    self.lost(now, gap);
                } else {
                    self.records.late += 1;
                    return;
                }
            }
        }
        self.records.received += 1;
        self.records.bytes += packet.size_bytes as u64;
        self.rx_epoch += 1;
        self.loss.packet();
    }

    fn handle_timeout(&mut self, now: Instant) {
        while let Some(timer) = self.timers.expire(now) {
            if self.stopped {
                break;
            }
            match timer {
                ReceiverTimer::Epoch => {
                    self.timers.set(ReceiverTimer::Epoch, now + self.cfg.el);
                    self.epoch(now);
                }
                ReceiverTimer::LossEvent => self.in_loss_event = false,
                ReceiverTimer::JoinTimeout => {
                    // §3.2.3.7: the join is undone (and its channel left).
                    if let Some((cn, _)) = self.joining.take() {
                        let r = self.r();
                        self.arr *= (r.powi(self.nwc as i32) - 1.0) / (r.powi(self.nwc as i32 + 1) - 1.0);
                        self.nwc -= 1;
                        self.events.push_back(AgentEvent::Leave(self.groups[cn as usize]));
                        self.records.join_timeouts += 1;
                        self.records.leaves += 1;
                        self.set_level();
                    }
                }
                ReceiverTimer::Silence | ReceiverTimer::SlotStall => self.leave_session(),
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        None
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        self.events.pop_front()
    }
}
