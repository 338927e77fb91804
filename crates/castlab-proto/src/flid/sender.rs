//! The FLID-DL sender: cumulative layers on rotating groups, slots and increase signals.

use castlab_core::{
    Agent, ConfigError, ControlMsg, Dest, Duration, GroupId, Header, Instant, Packet, Rng, StartInfo, TimerTable,
};

use super::{check_groups, FlidConfig, FLID_DATA_KIND, FLID_MAX_GROUPS};

castlab_core::timers! {
    /// The sender's timers.
    pub enum SenderTimer {
        /// The next packet of some layer is due.
        Send,
    }
}

/// The FLID-DL sender. See the module documentation.
#[derive(Debug)]
pub struct FlidSender {
    cfg: FlidConfig,
    groups: Vec<GroupId>,
    flow: u32,
    start: Instant,
    stop: Instant,
    /// Packet interval of each layer index (N of them).
    delta: Vec<Duration>,
    /// Send time of each layer's next packet.
    next: Vec<Instant>,
    /// Next sequence number of each group.
    seq: [u64; FLID_MAX_GROUPS],
    timers: TimerTable<SenderTimer>,
    due: Option<usize>,
    last_now: Instant,
    rng: Rng,
    /// The slot whose signal is `signal` (None before the first packet).
    slot: Option<u64>,
    signal: u64,
    /// Packets sent per layer index.
    pub sent: Vec<u64>,
    /// Slots whose signal was drawn, and how many of them signalled each level (index L-1).
    pub slots: u64,
    pub signals: Vec<u64>,
}

impl FlidSender {
    /// A sender of the session on `groups` (`cfg.layers` of them: `groups[0]` the base
    /// layer's, the others rotating), sending from `start` to `stop`.
    pub fn try_new(
        cfg: FlidConfig,
        groups: &[GroupId],
        flow: u32,
        start: Instant,
        stop: Instant,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        check_groups(&cfg, groups)?;
        let n = cfg.levels() as usize;
        let delta = (0..n)
            .map(|l| Duration::from_secs_f64(cfg.packet_size as f64 * 8.0 / cfg.layer_rate_bps(l as u32)))
            .collect();
        Ok(FlidSender {
            groups: groups.to_vec(),
            flow,
            start,
            stop,
            delta,
            next: vec![start; n],
            seq: [0; FLID_MAX_GROUPS],
            timers: TimerTable::default(),
            due: None,
            last_now: Instant::ZERO,
            rng: Rng::seed_from_u64(0),
            slot: None,
            signal: 0,
            sent: vec![0; n],
            slots: 0,
            signals: vec![0; n],
            cfg,
        })
    }

    pub fn config(&self) -> &FlidConfig {
        &self.cfg
    }

    /// The slot a send time falls in.
    fn slot_of(&self, t: Instant) -> u64 {
        (t - self.start).as_nanos() / self.cfg.slot.as_nanos()
    }

    /// The signal of slot `k`: one uniform draw per slot, in slot order.
    fn signal_of(&mut self, k: u64) -> u64 {
        let mut from = self.slot.map_or(0, |s| s + 1);
        while from <= k {
            // Nested signals: the highest level m with p_m ≥ u (p_L decreases with L).
            let u = self.rng.uniform();
            let mut m = 0u32;
            while m + 1 < self.cfg.levels() && self.cfg.increase_probability(m + 1) >= u {
                m += 1;
            }
            self.signal = m as u64;
            self.slots += 1;
            if m > 0 {
                self.signals[m as usize - 1] += 1;
            }
            from += 1;
        }
        self.slot = Some(k.max(self.slot.unwrap_or(0)));
        self.signal
    }

    /// The layer whose packet is due earliest and not after `now` (lowest index on ties).
    fn pick_due(&self, now: Instant) -> Option<usize> {
        let mut pick: Option<(usize, Instant)> = None;
        for (i, &at) in self.next.iter().enumerate() {
            if at < self.stop && at <= now && pick.is_none_or(|(_, b)| at < b) {
                pick = Some((i, at));
            }
        }
        pick.map(|(i, _)| i)
    }

    fn arm(&mut self) {
        match self.next.iter().copied().filter(|&t| t < self.stop).min() {
            Some(at) => self.timers.set(SenderTimer::Send, at),
            None => self.timers.stop(SenderTimer::Send),
        }
    }
}

impl Agent for FlidSender {
    fn handle_start(&mut self, _now: Instant, info: StartInfo) {
        self.rng = info.rng;
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
        let layer = self.due.take()?;
        let at = self.next[layer];
        let k = self.slot_of(at);
        let signal = self.signal_of(k);
        let g = self.cfg.group_of(layer as u32, k);
        let mut p = Packet::data(Dest::Group(self.groups[g]), self.cfg.packet_size);
        p.flow = self.flow;
        p.layer = layer as u8;
        p.seq = self.seq[g];
        p.sent_at = at;
        p.header = Header::Control(ControlMsg { kind: FLID_DATA_KIND, args: [k, signal, 0] });
        self.seq[g] += 1;
        self.next[layer] = at + self.delta[layer];
        self.sent[layer] += 1;
        self.due = self.pick_due(self.last_now);
        self.arm();
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }
}
