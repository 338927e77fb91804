//! RLC, receiver-driven layered congestion control: Vicisano, Rizzo and Crowcroft, *TCP-like
//! congestion control for layered multicast data transfer* (INFOCOM 1998), with the set-up of
//! the Rainbow paper (Yano & McCanne, §IV-B), which uses RLC as its baseline.
//!
//! * **Sender** ([`RlcSender`]): cumulative layers, layer m on `groups[m]`. Layer 0 sends at
//!   B, every further layer doubles the cumulative rate (layer m ≥ 1 sends at `B·2^(m-1)`, so
//!   level L = layers 0..L-1 receives `B·2^(L-1)`). Time is cut into SP periods of length
//!   `sp_base`; the first base-layer packet of period n carries a synchronisation point (SP)
//!   for every top layer m whose spacing `sp_base·2^m` divides `n·sp_base`. With the Rainbow
//!   set-up (B = 32 kb/s, `sp_base` = 1 s) a receiver at level 6 may join the 7th layer every
//!   2^5 = 32 s, as §IV-B states. Optional **burst test**: in the last `2·burst` of every SP
//!   period the packets due are sent in the first half at twice the rate and none in the
//!   second half, so the long-term rate is unchanged.
//! * **Receiver** ([`RlcReceiver`]): per-layer sequence numbers; a gap is "late" until it
//!   arrives or `reorder_timeout` passes, when it becomes a loss. On a loss outside the deaf
//!   period the top layer is dropped and a deaf period starts (losses in it are ignored: it
//!   covers the leave latency). At an SP for its top layer it joins the next layer only if it
//!   saw a whole SP interval with no loss and no late packet (this includes the burst) and is
//!   not deaf.
//!
//! # Where the descriptions are loose (our readings)
//!
//! * **SP and burst marks travel** in `Header::Control` with kind [`RLC_DATA_KIND`]:
//!   `args[0]` = 0 (no SP) or 1 + the highest top layer the SP is for; `args[1]` = 1 in a
//!   burst packet. The layer and per-layer sequence number are `Packet::layer` / `Packet::seq`.
//!   No new header variant in castlab-core.
//! * **Which packet carries the SP**: the first base-layer packet whose nominal send time is at
//!   or after the period boundary (every receiver gets the base layer).
//! * **A clean interval** runs from the last SP of any layer (every SP resets the loss and
//!   late counts, as public RLC does) to the SP for the top layer; the first SP after start
//!   only opens one. Receivers at the same level thus join at the same SPs (synchronisation).
//! * **Deaf period** also forbids joining (a receiver that ignores losses cannot claim a
//!   clean interval).
//! * **Level 1 is never dropped**; a loss there only spoils the interval.

use castlab_core::config::check;
use castlab_core::{
    Agent, AgentEvent, ConfigError, ControlMsg, Dest, Duration, GroupId, Header, Instant, NodeId, Packet, StartInfo,
    TimerTable,
};

/// `ControlMsg::kind` of RLC data packets ("RL").
pub const RLC_DATA_KIND: u16 = 0x524C;

/// Most layers a session may have (bounds the receiver's fixed per-layer state).
pub const RLC_MAX_LAYERS: usize = 16;

/// Gaps the receiver tracks per layer while waiting for reordered packets; a gap beyond this
/// counts as lost at once (our choice: keeps per-packet work allocation-free).
pub const RLC_MAX_PENDING: usize = 64;

/// RLC constants. `Default` is the Rainbow paper's set-up (§IV-B) where it gives a value, else
/// the public RLC implementations' values (INRIA MCL, Tampere MAD-RLC).
#[derive(Clone, Debug, PartialEq)]
pub struct RlcConfig {
    /// B, base-layer rate, b/s (Rainbow §IV-B: 32 kb/s).
    pub base_rate_bps: f64,
    /// Number of layers (our choice: 9 gives 32·2^8 = 8.2 Mb/s, above the 4 Mb/s fastest link
    /// of Rainbow's B-(ii); §IV-B says a 4 Mb/s link needs the 7th or 8th layer).
    pub layers: u32,
    /// Packet size, bytes (Rainbow §IV-B: 512 B for every run).
    pub packet_size: u32,
    /// SP spacing of the base layer; layer m's spacing is `sp_base·2^m` (Rainbow §IV-B: 1 s;
    /// public RLC uses 250 ms).
    pub sp_base: Duration,
    /// Burst test before every SP (public RLC code omits it: default off).
    pub burst: bool,
    /// Burst length: twice the rate for this long, then silence for as long (our choice:
    /// 125 ms, one eighth of the base SP period). Must satisfy `2·burst_len < sp_base`.
    pub burst_len: Duration,
    /// Deaf period after a drop (public RLC: 10 s; its LAN profile 1 s).
    pub deaf_period: Duration,
    /// A missing packet counts as lost after this long (public RLC: 500 ms).
    pub reorder_timeout: Duration,
}

impl Default for RlcConfig {
    fn default() -> Self {
        RlcConfig {
            base_rate_bps: 32_000.0,
            layers: 9,
            packet_size: 512,
            sp_base: Duration::from_secs(1),
            burst: false,
            burst_len: Duration::from_millis(125),
            deaf_period: Duration::from_secs(10),
            reorder_timeout: Duration::from_millis(500),
        }
    }
}

castlab_core::config_fields!(RlcConfig {
    base_rate_bps,
    layers,
    packet_size,
    sp_base,
    burst,
    burst_len,
    deaf_period,
    reorder_timeout,
});

impl RlcConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check::positive("base_rate_bps", self.base_rate_bps)?;
        check::int_in("layers", self.layers as u64, 1, RLC_MAX_LAYERS as u64)?;
        check::int_in("packet_size", self.packet_size as u64, 1, 65_535)?;
        check::nonzero("sp_base", self.sp_base)?;
        check::nonzero("reorder_timeout", self.reorder_timeout)?;
        if self.burst && (self.burst_len.is_zero() || self.burst_len * 2 >= self.sp_base) {
            return Err(ConfigError::new(
                "burst_len",
                self.burst_len.as_secs_f64(),
                "must be positive and less than half of sp_base",
            ));
        }
        // The top layer's packet interval must not round to zero.
        check::packet_rate("base_rate_bps", self.layer_rate_bps(self.layers - 1), self.packet_size)?;
        Ok(())
    }

    /// Rate of layer m alone: B for m = 0, `B·2^(m-1)` above.
    pub fn layer_rate_bps(&self, m: u32) -> f64 {
        if m == 0 {
            self.base_rate_bps
        } else {
            self.base_rate_bps * 2f64.powi(m as i32 - 1)
        }
    }

    /// Cumulative rate at level L (layers 0..L-1): `B·2^(L-1)`.
    pub fn level_rate_bps(&self, level: u32) -> f64 {
        self.base_rate_bps * 2f64.powi(level as i32 - 1)
    }

    /// Spacing of the SPs of top layer m: `sp_base·2^m`.
    pub fn sp_spacing(&self, m: u32) -> Duration {
        self.sp_base * (1u64 << m)
    }
}

castlab_core::timers! {
    /// The sender's timers.
    pub enum SenderTimer {
        /// The next packet of some layer is due.
        Send,
    }
}

#[derive(Clone, Copy, Debug)]
struct Layer {
    group: GroupId,
    delta: Duration,
    /// Nominal (unwarped) send time of the next packet.
    next_nominal: Instant,
    next_seq: u64,
}

/// The RLC sender. See the module documentation.
#[derive(Debug)]
pub struct RlcSender {
    cfg: RlcConfig,
    flow: u32,
    start: Instant,
    stop: Instant,
    layers: Vec<Layer>,
    timers: TimerTable<SenderTimer>,
    /// Index of the layer whose packet is due (set on timeout, taken by poll_transmit).
    due: Option<usize>,
    /// `now` of the last timeout, so that poll_transmit can release every packet due by then.
    last_now: Instant,
    started: bool,
    /// Packets sent per layer.
    pub sent: Vec<u64>,
}

impl RlcSender {
    /// A sender of `cfg.layers` layers, layer m on `groups[m]`, sending from `start` to `stop`.
    pub fn try_new(
        cfg: RlcConfig,
        groups: &[GroupId],
        flow: u32,
        start: Instant,
        stop: Instant,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        check_groups(&cfg, groups)?;
        let layers = groups
            .iter()
            .enumerate()
            .map(|(m, &group)| Layer {
                group,
                delta: Duration::from_secs_f64(cfg.packet_size as f64 * 8.0 / cfg.layer_rate_bps(m as u32)),
                next_nominal: start,
                next_seq: 0,
            })
            .collect();
        let n = groups.len();
        Ok(RlcSender {
            cfg,
            flow,
            start,
            stop,
            layers,
            timers: TimerTable::default(),
            due: None,
            last_now: Instant::ZERO,
            started: false,
            sent: vec![0; n],
        })
    }

    pub fn config(&self) -> &RlcConfig {
        &self.cfg
    }

    /// Real send time of a packet whose nominal time is `v`: the identity, except in the last
    /// `2·burst_len` of an SP period, which is compressed into its first half (burst test).
    pub fn warp(&self, v: Instant) -> Instant {
        if !self.cfg.burst || v < self.start {
            return v;
        }
        let t = self.cfg.sp_base.as_nanos();
        let b2 = (self.cfg.burst_len * 2).as_nanos();
        let off = (v - self.start).as_nanos() % t;
        let burst_start = t - b2;
        if off < burst_start {
            v
        } else {
            // §burst: twice the rate over the first half of the last 2b of the period.
            v - Duration::from_nanos((off - burst_start) / 2)
        }
    }

    /// Whether nominal time `v` lies in a burst window.
    fn in_burst(&self, v: Instant) -> bool {
        self.cfg.burst && v >= self.start && {
            let t = self.cfg.sp_base.as_nanos();
            (v - self.start).as_nanos() % t >= t - (self.cfg.burst_len * 2).as_nanos()
        }
    }

    /// The layer whose warped send time is earliest and not after `now` (lowest index on ties).
    fn pick_due(&self, now: Instant) -> Option<usize> {
        let mut pick: Option<(usize, Instant)> = None;
        for (i, l) in self.layers.iter().enumerate() {
            if l.next_nominal < self.stop {
                let at = self.warp(l.next_nominal);
                if at <= now && pick.is_none_or(|(_, b)| at < b) {
                    pick = Some((i, at));
                }
            }
        }
        pick.map(|(i, _)| i)
    }

    fn arm(&mut self) {
        let mut best: Option<Instant> = None;
        for l in &self.layers {
            if l.next_nominal < self.stop {
                let at = self.warp(l.next_nominal);
                best = Some(best.map_or(at, |b: Instant| b.min(at)));
            }
        }
        match best {
            Some(at) => self.timers.set(SenderTimer::Send, at),
            None => self.timers.stop(SenderTimer::Send),
        }
    }

    /// SP mark for a base-layer packet with nominal time `v`: 1 + the highest top layer whose
    /// SP this is, or 0. The packet is the first of its period on the base layer.
    fn sp_mark(&self, v: Instant, delta: Duration) -> u64 {
        let t = self.cfg.sp_base.as_nanos();
        let off = (v - self.start).as_nanos();
        let period = off / t;
        // First base-layer packet at or after the boundary `period·t`.
        let boundary = period * t;
        if off - boundary >= delta.as_nanos() {
            return 0;
        }
        // §IV-B: spacing for top layer m is sp_base·2^m; the highest m dividing `period`.
        let mut m = 0u32;
        while m + 1 < self.cfg.layers && period.is_multiple_of(1u64 << (m + 1)) {
            m += 1;
        }
        m as u64 + 1
    }
}

impl Agent for RlcSender {
    fn handle_start(&mut self, _now: Instant, _info: StartInfo) {
        self.started = true;
        self.arm();
    }

    fn handle_packet(&mut self, _now: Instant, _packet: &Packet) {}

    fn handle_timeout(&mut self, now: Instant) {
        while let Some(timer) = self.timers.expire(now) {
            match timer {
                SenderTimer::Send => {
                    self.last_now = now;
                    self.due = self.pick_due(now);
                    if self.due.is_none() {
                        self.arm();
                    }
                }
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        let i = self.due.take()?;
        let l = self.layers[i];
        let v = l.next_nominal;
        let sp = if i == 0 { self.sp_mark(v, l.delta) } else { 0 };
        let burst = self.in_burst(v) as u64;
        let mut p = Packet::data(Dest::Group(l.group), self.cfg.packet_size);
        p.flow = self.flow;
        p.layer = i as u8;
        p.seq = l.next_seq;
        p.sent_at = self.warp(v);
        p.header = Header::Control(ControlMsg { kind: RLC_DATA_KIND, args: [sp, burst, 0] });
        let l = &mut self.layers[i];
        l.next_seq += 1;
        l.next_nominal = v + l.delta;
        self.sent[i] += 1;
        self.due = self.pick_due(self.last_now);
        self.arm();
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    /// Told to stop: RLC (Vicisano et al. §2-§4) has no end-of-session message from the
    /// sender (receivers see the layers go quiet), so the sender sends nothing more and
    /// disarms its timer. It holds no group.
    fn handle_shutdown(&mut self, now: Instant) {
        self.stop = self.stop.min(now);
        self.due = None;
        self.timers.clear();
    }
}

castlab_core::timers! {
    /// The receiver's timers.
    pub enum ReceiverTimer {
        /// The earliest pending gap's reorder deadline.
        Reorder,
    }
}

/// What the receiver did, for monitors and tests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RlcRecords {
    /// (time, level) after every change, starting with level 1 at start.
    pub levels: Vec<(Instant, u32)>,
    /// Packets received per layer.
    pub received: [u64; RLC_MAX_LAYERS],
    /// Bytes received (all layers).
    pub bytes: u64,
    /// Packets declared lost (reorder timeout passed), per layer.
    pub lost: [u64; RLC_MAX_LAYERS],
    /// Packets that arrived after a later one (late, not lost).
    pub late: u64,
    /// Losses ignored because the receiver was deaf.
    pub ignored: u64,
    /// SPs seen for the receiver's top layer, and times of joins and drops.
    pub sps_seen: u64,
    pub joins: Vec<Instant>,
    pub drops: Vec<Instant>,
}

#[derive(Clone, Copy, Debug)]
struct RxLayer {
    /// Next expected sequence number, once the first packet has been seen.
    expect: Option<u64>,
    /// Missing sequence numbers with their loss deadline (first `npending` slots valid).
    pending: [(u64, Instant); RLC_MAX_PENDING],
    npending: usize,
}

impl Default for RxLayer {
    fn default() -> Self {
        RxLayer { expect: None, pending: [(0, Instant::ZERO); RLC_MAX_PENDING], npending: 0 }
    }
}

/// The RLC receiver. See the module documentation.
#[derive(Debug)]
pub struct RlcReceiver {
    cfg: RlcConfig,
    groups: Vec<GroupId>,
    flow: u32,
    level: u32,
    layers: Vec<RxLayer>,
    deaf_until: Instant,
    /// An SP (any) was seen since start: the interval since the last SP is a whole one.
    interval_open: bool,
    /// A loss or a late packet since that SP.
    spoiled: bool,
    timers: TimerTable<ReceiverTimer>,
    events: [Option<AgentEvent>; 4],
    /// Told to stop: layers still to leave (top first), given out by `poll_event` after
    /// `events`.
    leaving: u32,
    records: RlcRecords,
}

impl RlcReceiver {
    /// A receiver of the session whose layer m is on `groups[m]` (its data carries `flow`).
    pub fn try_new(cfg: RlcConfig, groups: &[GroupId], flow: u32) -> Result<Self, ConfigError> {
        cfg.validate()?;
        check_groups(&cfg, groups)?;
        Ok(RlcReceiver {
            layers: vec![RxLayer::default(); groups.len()],
            groups: groups.to_vec(),
            cfg,
            flow,
            level: 0,
            deaf_until: Instant::ZERO,
            interval_open: false,
            spoiled: false,
            timers: TimerTable::default(),
            events: [None; 4],
            leaving: 0,
            records: RlcRecords::default(),
        })
    }

    pub fn level(&self) -> u32 {
        self.level
    }
    pub fn config(&self) -> &RlcConfig {
        &self.cfg
    }
    pub fn records(&self) -> &RlcRecords {
        &self.records
    }
    pub fn is_deaf(&self, now: Instant) -> bool {
        now < self.deaf_until
    }

    fn push_event(&mut self, e: AgentEvent) {
        if let Some(slot) = self.events.iter_mut().find(|s| s.is_none()) {
            *slot = Some(e);
        }
    }

    fn rearm(&mut self) {
        let mut best: Option<Instant> = None;
        for l in &self.layers[..self.level as usize] {
            for &(_, d) in &l.pending[..l.npending] {
                best = Some(best.map_or(d, |b: Instant| b.min(d)));
            }
        }
        match best {
            Some(d) => self.timers.set(ReceiverTimer::Reorder, d),
            None => self.timers.stop(ReceiverTimer::Reorder),
        }
    }

    /// `n` packets of layer `m` are lost at `now`.
    fn on_loss(&mut self, now: Instant, m: usize, n: u64) {
        self.records.lost[m] += n;
        if self.is_deaf(now) {
            // Deaf period: losses ignored (they are the leave's own latency).
            self.records.ignored += n;
            return;
        }
        self.spoiled = true;
        if self.level > 1 {
            // Drop the top layer, then go deaf.
            self.level -= 1;
            let top = self.level as usize;
            self.layers[top] = RxLayer::default();
            self.deaf_until = now + self.cfg.deaf_period;
            self.records.drops.push(now);
            self.records.levels.push((now, self.level));
            self.push_event(AgentEvent::Leave(self.groups[top]));
            self.push_event(AgentEvent::LevelChanged { level: self.level });
        }
    }

    fn join(&mut self, now: Instant) {
        let m = self.level as usize;
        self.level += 1;
        self.layers[m] = RxLayer::default();
        self.records.joins.push(now);
        self.records.levels.push((now, self.level));
        self.push_event(AgentEvent::Join(self.groups[m]));
        self.push_event(AgentEvent::LevelChanged { level: self.level });
    }
}

impl Agent for RlcReceiver {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        self.level = 1;
        self.records.levels.push((now, 1));
        self.push_event(AgentEvent::Join(self.groups[0]));
        self.push_event(AgentEvent::LevelChanged { level: 1 });
    }

    /// The sender restarted: its per-layer sequence numbers start afresh, so each layer's
    /// expected number and its late packets are forgotten and tracking starts again from the
    /// next packet; the level stays. RLC receivers hear only their sender.
    fn handle_peer_restart(&mut self, _now: Instant, _node: NodeId) {
        self.layers.iter_mut().for_each(|l| *l = RxLayer::default());
    }

    fn handle_packet(&mut self, now: Instant, packet: &Packet) {
        let Header::Control(ControlMsg { kind: RLC_DATA_KIND, args }) = packet.header else { return };
        if packet.flow != self.flow {
            return;
        }
        let m = packet.layer as usize;
        if m >= self.level as usize {
            // A layer left a moment ago (or not yet joined): not ours any more.
            return;
        }
        self.records.received[m] += 1;
        self.records.bytes += packet.size_bytes as u64;
        let seq = packet.seq;
        let reorder = self.cfg.reorder_timeout;
        let mut immediate_loss = 0u64;
        let mut was_late = false;
        let mut gap = false;
        {
            let l = &mut self.layers[m];
            match l.expect {
                None => l.expect = Some(seq + 1),
                Some(e) if seq == e => l.expect = Some(e + 1),
                Some(e) if seq > e => {
                    // A gap: e..seq are late until they arrive or the reorder timeout passes.
                    gap = true;
                    for s in e..seq {
                        if l.npending < RLC_MAX_PENDING {
                            l.pending[l.npending] = (s, now + reorder);
                            l.npending += 1;
                        } else {
                            immediate_loss += 1;
                        }
                    }
                    l.expect = Some(seq + 1);
                }
                Some(_) => {
                    // Older than expected: a late packet filling a gap, or a duplicate.
                    if let Some(i) = l.pending[..l.npending].iter().position(|&(s, _)| s == seq) {
                        l.pending[i] = l.pending[l.npending - 1];
                        l.npending -= 1;
                        was_late = true;
                    }
                }
            }
        }
        if was_late {
            self.records.late += 1;
            if !self.is_deaf(now) {
                // Public RLC: join only with 0 lost and 0 late packets since the last SP.
                self.spoiled = true;
            }
        }
        if gap && !self.is_deaf(now) {
            // Packets are missing (late, perhaps lost): this interval is not clean.
            self.spoiled = true;
        }
        if immediate_loss > 0 {
            self.on_loss(now, m, immediate_loss);
        }
        // SP handling: marks travel on the base layer.
        let sp = args[0];
        if m == 0 && sp > 0 {
            // Every SP closes an interval; a join needs the closing SP to be one for the top
            // layer, a whole clean interval before it (no loss, no late packet) and no deafness.
            let top = self.level - 1;
            if sp > top as u64 {
                self.records.sps_seen += 1;
                let clean = self.interval_open && !self.spoiled && !self.is_deaf(now);
                if clean && self.level < self.cfg.layers {
                    self.join(now);
                }
            }
            self.interval_open = true;
            self.spoiled = false;
        }
        self.rearm();
    }

    fn handle_timeout(&mut self, now: Instant) {
        while let Some(timer) = self.timers.expire(now) {
            match timer {
                ReceiverTimer::Reorder => {
                    // Every pending gap past its deadline is a loss; one loss event per layer.
                    for m in (0..self.level as usize).rev() {
                        let l = &mut self.layers[m];
                        let mut n = 0u64;
                        let mut i = 0;
                        while i < l.npending {
                            if l.pending[i].1 <= now {
                                l.pending[i] = l.pending[l.npending - 1];
                                l.npending -= 1;
                                n += 1;
                            } else {
                                i += 1;
                            }
                        }
                        if n > 0 && m < self.level as usize {
                            self.on_loss(now, m, n);
                        }
                    }
                }
            }
        }
        self.rearm();
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        None
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        if let Some(e) = self.events[0].take() {
            self.events.rotate_left(1);
            return Some(e);
        }
        if self.leaving > 0 {
            self.leaving -= 1;
            return Some(AgentEvent::Leave(self.groups[self.leaving as usize]));
        }
        None
    }

    /// Told to stop: the receiver leaves every layer it holds, the top first (its level
    /// becomes 0, recorded); packets still in flight are then above its level and ignored.
    fn handle_shutdown(&mut self, now: Instant) {
        if self.level == 0 {
            return;
        }
        self.timers.clear();
        self.leaving = self.level;
        self.level = 0;
        self.records.levels.push((now, 0));
        self.push_event(AgentEvent::LevelChanged { level: 0 });
    }
}

/// §2: one group per layer, each layer its own group.
fn check_groups(cfg: &RlcConfig, groups: &[GroupId]) -> Result<(), ConfigError> {
    if groups.len() != cfg.layers as usize {
        return Err(ConfigError::new("groups", groups.len(), "need exactly one group per layer"));
    }
    for (i, g) in groups.iter().enumerate() {
        if groups[..i].contains(g) {
            return Err(ConfigError::new("groups", g.0, "each layer needs its own group (duplicate)"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------- registration

pub mod registration;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Driver;
    use castlab_core::{Addr, NodeId, Rng};

    fn groups(n: u32) -> Vec<GroupId> {
        (0..n).map(|m| GroupId(10 + m)).collect()
    }
    fn info() -> StartInfo {
        StartInfo { addr: Addr::new(NodeId(1), 1), rng: Rng::seed_from_u64(1) }
    }
    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }
    fn cfg4() -> RlcConfig {
        RlcConfig { layers: 4, ..RlcConfig::default() }
    }

    /// Runs a sender alone until `until`, returning every packet it emits (with its send time).
    /// The packets a sender sends from 0 until `until` (and its timers after it, until it has
    /// none), driven by the shared harness: events drained, packets never before their time.
    fn run_sender(cfg: RlcConfig, until: Instant) -> Vec<Packet> {
        let n = cfg.layers;
        let s = RlcSender::try_new(cfg, &groups(n), 7, Instant::ZERO, until).unwrap();
        let mut d = Driver::start_with(s, Instant::ZERO, info());
        while let Some(t) = d.agent.poll_timeout() {
            d.advance_to(t);
        }
        assert!(d.sent.iter().all(|(t, p)| p.sent_at <= *t), "packet released before its time");
        d.sent.into_iter().map(|(_, p)| p).collect()
    }

    fn sp_of(p: &Packet) -> u64 {
        match p.header {
            Header::Control(ControlMsg { kind: RLC_DATA_KIND, args }) => args[0],
            _ => panic!("not an RLC packet"),
        }
    }

    fn rx(cfg: RlcConfig) -> Driver<RlcReceiver> {
        let n = cfg.layers;
        let r = RlcReceiver::try_new(cfg, &groups(n), 7).unwrap();
        Driver::start_with(r, Instant::ZERO, info())
    }

    /// The events `d` reported from the `from`-th on.
    fn events_from(d: &Driver<RlcReceiver>, from: usize) -> Vec<AgentEvent> {
        d.events[from..].iter().map(|(_, e)| *e).collect()
    }

    /// A data packet of `layer` at `t` (timers due before it fire first); the events it caused.
    fn feed(r: &mut Driver<RlcReceiver>, t: Instant, layer: u8, seq: u64, sp: u64) -> Vec<AgentEvent> {
        let mut p = Packet::data(Dest::Group(GroupId(10 + layer as u32)), 512);
        p.flow = 7;
        p.layer = layer;
        p.seq = seq;
        p.header = Header::Control(ControlMsg { kind: RLC_DATA_KIND, args: [sp, 0, 0] });
        let k = r.events.len();
        r.packet(t, &p);
        events_from(r, k)
    }

    /// The receiver's timers due up to `t` fired; the events they caused.
    fn fire(r: &mut Driver<RlcReceiver>, t: Instant) -> Vec<AgentEvent> {
        let k = r.events.len();
        r.advance_to(t);
        events_from(r, k)
    }

    /// Brings a receiver to `level` through clean SP intervals on the base layer; returns the
    /// next base-layer sequence number and time (ms).
    fn climb(r: &mut Driver<RlcReceiver>, level: u32) -> (u64, u64) {
        let mut seq = 0;
        let mut t = 0;
        while r.agent.level() < level {
            // An SP for every top layer: mark = layers.
            feed(r, ms(t), 0, seq, 16);
            seq += 1;
            t += 100;
        }
        (seq, t)
    }

    #[test]
    fn told_to_stop_the_receiver_leaves_every_layer_it_holds_top_first() {
        let mut r = rx(cfg4());
        let (seq, t) = climb(&mut r, 3);
        // a gap on the base layer arms the reorder timer
        feed(&mut r, ms(t), 0, seq + 2, 0);
        assert!(r.agent.poll_timeout().is_some());
        let k = r.events.len();
        r.shutdown(ms(t + 10));
        assert_eq!(
            events_from(&r, k),
            vec![
                AgentEvent::LevelChanged { level: 0 },
                AgentEvent::Leave(GroupId(12)),
                AgentEvent::Leave(GroupId(11)),
                AgentEvent::Leave(GroupId(10))
            ]
        );
        assert_eq!(r.agent.level(), 0);
        assert_eq!(r.agent.records().levels.last(), Some(&(ms(t + 10), 0)));
        assert_eq!(r.agent.poll_timeout(), None);
        // data still in flight is not counted; a second stop does nothing
        let got: u64 = r.agent.records().received.iter().sum();
        assert!(feed(&mut r, ms(t + 20), 0, seq + 3, 16).is_empty());
        r.shutdown(ms(t + 30));
        assert_eq!(r.events.len(), k + 4);
        assert_eq!(r.agent.records().received.iter().sum::<u64>(), got);
    }

    #[test]
    fn told_to_stop_the_sender_sends_nothing_more() {
        let s = RlcSender::try_new(cfg4(), &groups(4), 7, Instant::ZERO, Instant::MAX).unwrap();
        let mut d = Driver::start_with(s, Instant::ZERO, info());
        d.advance_to(ms(2000));
        let sent = d.sent.len();
        assert!(sent > 0 && d.agent.poll_timeout().is_some());
        d.shutdown(ms(2001));
        assert_eq!(d.agent.poll_timeout(), None);
        d.advance_to(ms(60_000));
        assert_eq!(d.sent.len(), sent);
        assert_eq!(d.agent.sent.iter().sum::<u64>(), sent as u64);
    }

    #[test]
    fn default_is_rainbow_setup() {
        let c = RlcConfig::default();
        assert_eq!(c.base_rate_bps, 32_000.0);
        assert_eq!(c.sp_base, Duration::from_secs(1));
        assert_eq!(c.packet_size, 512);
        // §IV-B: join experiments for the 7th layer (at level 6, top layer index 5) every 32 s.
        assert_eq!(c.sp_spacing(5), Duration::from_secs(32));
        assert!(c.validate().is_ok());
    }

    #[test]
    fn bad_config_names_the_field() {
        let e = RlcConfig { base_rate_bps: -1.0, ..RlcConfig::default() }.validate().unwrap_err();
        assert_eq!(e.field, "base_rate_bps");
        let e = RlcConfig { layers: 0, ..RlcConfig::default() }.validate().unwrap_err();
        assert_eq!(e.field, "layers");
        let e = RlcConfig { burst: true, burst_len: Duration::from_millis(500), ..RlcConfig::default() }
            .validate()
            .unwrap_err();
        assert_eq!(e.field, "burst_len");
        let e = RlcReceiver::try_new(RlcConfig::default(), &groups(3), 7).unwrap_err();
        assert_eq!(e.field, "groups");
    }

    #[test]
    fn sender_layer_rates_double_the_cumulative_rate() {
        let cfg = cfg4();
        let pkts = run_sender(cfg.clone(), ms(64_000));
        for level in 1..=4u32 {
            let bytes: u64 = pkts.iter().filter(|p| (p.layer as u32) < level).map(|p| p.size_bytes as u64).sum();
            let rate = bytes as f64 * 8.0 / 64.0;
            let want = 32_000.0 * 2f64.powi(level as i32 - 1);
            // One packet per layer of rounding at the end of the run.
            assert!((rate - want).abs() <= level as f64 * 512.0 * 8.0 / 64.0, "level {level}: {rate} vs {want}");
        }
        // Per-layer sequence numbers are 0, 1, 2, ... on every layer.
        for m in 0..4u8 {
            let seqs: Vec<u64> = pkts.iter().filter(|p| p.layer == m).map(|p| p.seq).collect();
            assert!(seqs.iter().enumerate().all(|(i, &s)| s == i as u64));
        }
    }

    #[test]
    fn sender_sp_spacing_per_layer_is_sp_base_times_two_to_the_layer() {
        let cfg = cfg4();
        let delta_ns = (512.0 * 8.0 / 32_000.0 * 1e9) as u64;
        let pkts = run_sender(cfg.clone(), ms(40_000));
        let sps: Vec<(u64, u64)> =
            pkts.iter().filter(|p| sp_of(p) > 0).map(|p| (p.sent_at.as_nanos(), sp_of(p) - 1)).collect();
        assert!(pkts.iter().all(|p| p.layer == 0 || sp_of(p) == 0), "SPs travel on the base layer only");
        for m in 0..4u64 {
            let spacing = 1_000_000_000u64 << m;
            let times: Vec<u64> = sps.iter().filter(|&&(_, top)| top >= m).map(|&(t, _)| t).collect();
            // One SP for top layer m in every period of sp_base·2^m, just after its boundary.
            assert_eq!(times.len() as u64, 40_000_000_000u64.div_ceil(spacing), "layer {m}");
            for (k, &t) in times.iter().enumerate() {
                let boundary = k as u64 * spacing;
                assert!(t >= boundary && t < boundary + delta_ns, "layer {m} SP {k} at {t}");
            }
        }
    }

    #[test]
    fn burst_doubles_the_rate_for_the_burst_period_then_pauses_and_keeps_the_long_term_rate() {
        let on = RlcConfig { burst: true, ..cfg4() };
        let off = cfg4();
        let until = ms(20_000);
        let p_on = run_sender(on, until);
        let p_off = run_sender(off, until);
        // Long-term rate unchanged: the same packets per layer over the run.
        for m in 0..4u8 {
            let a = p_on.iter().filter(|p| p.layer == m).count();
            let b = p_off.iter().filter(|p| p.layer == m).count();
            assert_eq!(a, b, "layer {m}");
        }
        let count = |ps: &[Packet], lo: u64, hi: u64| {
            ps.iter().filter(|p| p.layer == 3 && p.sent_at >= ms(lo) && p.sent_at < ms(hi)).count() as f64
        };
        // Layer 3 sends at 128 kb/s = 31.25 packets/s: ~3.9 per 125 ms. Over 10 SP periods:
        let (mut burst, mut pause, mut normal) = (0.0, 0.0, 0.0);
        for k in 5..15u64 {
            let end = k * 1000;
            burst += count(&p_on, end - 250, end - 125);
            pause += count(&p_on, end - 125, end);
            normal += count(&p_off, end - 250, end - 125);
        }
        assert_eq!(pause, 0.0, "silence in the second half of the burst window");
        let ratio = burst / normal;
        assert!((ratio - 2.0).abs() < 0.15, "burst/normal = {ratio}");
    }

    #[test]
    fn receiver_joins_exactly_at_an_sp_after_a_clean_interval() {
        let mut r = rx(cfg4());
        // Base-layer packets; the first SP opens the interval, it does not allow a join.
        assert!(feed(&mut r, ms(0), 0, 0, 1).is_empty());
        for s in 1..8 {
            assert!(feed(&mut r, ms(s * 128), 0, s, 0).is_empty());
        }
        assert_eq!(r.agent.level(), 1);
        let ev = feed(&mut r, ms(1024), 0, 8, 1);
        assert_eq!(ev, vec![AgentEvent::Join(GroupId(11)), AgentEvent::LevelChanged { level: 2 }]);
        assert_eq!(r.agent.records().joins, vec![ms(1024)]);
        // At level 2 an SP for top layer 0 only (mark 1) is not an SP for this receiver.
        feed(&mut r, ms(2048), 0, 9, 1);
        feed(&mut r, ms(3072), 0, 10, 1);
        assert_eq!(r.agent.level(), 2);
        // An SP for top layer ≥ 1 (mark 2) after a clean interval since the last SP: join.
        let ev = feed(&mut r, ms(4096), 0, 11, 2);
        assert_eq!(ev, vec![AgentEvent::Join(GroupId(12)), AgentEvent::LevelChanged { level: 3 }]);
    }

    #[test]
    fn receiver_does_not_join_after_a_loss_in_the_interval() {
        let mut r = rx(cfg4());
        feed(&mut r, ms(0), 0, 0, 1);
        feed(&mut r, ms(128), 0, 1, 0);
        // seq 2 missing; it becomes a loss after the reorder timeout.
        feed(&mut r, ms(384), 0, 3, 0);
        assert_eq!(r.agent.poll_timeout(), Some(ms(884)));
        assert!(fire(&mut r, ms(884)).is_empty(), "level 1 is never dropped");
        assert_eq!(r.agent.records().lost[0], 1);
        assert!(feed(&mut r, ms(1024), 0, 4, 1).is_empty(), "no join after a loss");
        assert_eq!(r.agent.level(), 1);
        // The next interval is clean: join.
        let ev = feed(&mut r, ms(2048), 0, 5, 1);
        assert_eq!(ev[0], AgentEvent::Join(GroupId(11)));
    }

    #[test]
    fn receiver_drops_the_top_layer_on_loss_and_goes_deaf() {
        let mut r = rx(cfg4());
        let (_, t) = climb(&mut r, 3);
        assert_eq!(r.agent.level(), 3);
        feed(&mut r, ms(t), 2, 0, 0);
        feed(&mut r, ms(t + 10), 2, 2, 0);
        let ev = fire(&mut r, ms(t + 510));
        assert_eq!(ev, vec![AgentEvent::Leave(GroupId(12)), AgentEvent::LevelChanged { level: 2 }]);
        assert!(r.agent.is_deaf(ms(t + 510)));
        assert!(!r.agent.is_deaf(ms(t + 510 + 10_000)));
        assert_eq!(r.agent.records().drops, vec![ms(t + 510)]);
    }

    #[test]
    fn receiver_ignores_losses_in_the_deaf_period() {
        let mut r = rx(cfg4());
        let (_, t) = climb(&mut r, 4);
        // Loss on layer 3: drop to 3, deaf until t + 500 + 10 s.
        feed(&mut r, ms(t), 3, 0, 0);
        feed(&mut r, ms(t), 3, 2, 0);
        fire(&mut r, ms(t + 500));
        assert_eq!(r.agent.level(), 3);
        let deaf_end = t + 500 + 10_000;
        // Loss on layer 2 inside the deaf period: ignored.
        feed(&mut r, ms(t + 1000), 2, 0, 0);
        feed(&mut r, ms(t + 1000), 2, 5, 0);
        assert!(fire(&mut r, ms(t + 1500)).is_empty());
        assert_eq!(r.agent.level(), 3);
        assert_eq!(r.agent.records().ignored, 4);
        // After it, a loss drops again.
        feed(&mut r, ms(deaf_end + 1), 2, 6, 0);
        feed(&mut r, ms(deaf_end + 2), 2, 8, 0);
        let ev = fire(&mut r, ms(deaf_end + 502));
        assert_eq!(ev, vec![AgentEvent::Leave(GroupId(12)), AgentEvent::LevelChanged { level: 2 }]);
    }

    #[test]
    fn receiver_reorder_timeout_turns_a_gap_into_a_loss_only_when_it_expires() {
        let mut r = rx(cfg4());
        let (_, t) = climb(&mut r, 2);
        feed(&mut r, ms(t), 1, 0, 0);
        feed(&mut r, ms(t + 10), 1, 2, 0);
        assert_eq!(r.agent.poll_timeout(), Some(ms(t + 510)));
        // The late packet arrives within the timeout: no loss, counted late, timer disarmed.
        feed(&mut r, ms(t + 400), 1, 1, 0);
        assert_eq!(r.agent.poll_timeout(), None);
        assert_eq!(r.agent.records().late, 1);
        assert_eq!(r.agent.records().lost[1], 0);
        assert_eq!(r.agent.level(), 2);
        // A gap that is not filled: a loss exactly at the deadline, not before.
        feed(&mut r, ms(t + 600), 1, 4, 0);
        assert_eq!(r.agent.poll_timeout(), Some(ms(t + 1100)));
        assert!(fire(&mut r, ms(t + 1099)).is_empty());
        let ev = fire(&mut r, ms(t + 1100));
        assert_eq!(ev[0], AgentEvent::Leave(GroupId(11)));
        assert_eq!(r.agent.records().lost[1], 1);
    }
}
