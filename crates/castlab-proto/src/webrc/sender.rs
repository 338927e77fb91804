//! The WEBRC sender (RFC 3738 §3.1): the base channel's and the wave channels' packet
//! schedules, and the CTSI, CN and PSN of each packet (§3.1.2, §5.1).

use castlab_core::{Agent, ConfigError, Dest, Duration, GroupId, Instant, Packet, StartInfo, TimerTable};

use super::{CcInfo, WebrcConfig, PSN_SPACE};

castlab_core::timers! {
    /// The sender's timer.
    pub enum SenderTimer {
        /// The earliest channel's next packet is due.
        Send,
    }
}

/// What the sender sent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SenderRecords {
    /// Packets sent per channel, indexed by CN (the base channel last, CN = T).
    pub sent_per_channel: Vec<u64>,
    pub sent: u64,
    pub bytes: u64,
}

castlab_core::records_table!(SenderRecords {
    columns: [sent_per_channel],
    scalars: [sent = |r| r.sent, bytes = |r| r.bytes],
});

/// One channel's schedule: the wave (or base slot) under way and its next packet.
#[derive(Clone, Copy, Debug)]
struct Channel {
    /// Waves: the slot at whose end the current wave ends. Base: the current slot.
    slot: i64,
    /// The next packet's index within the wave (or the slot).
    j: u64,
    /// When it leaves (None: after `stop`).
    next: Option<Instant>,
}

/// The WEBRC sender. See the module documentation.
#[derive(Debug)]
pub struct WebrcSender {
    cfg: WebrcConfig,
    groups: Vec<GroupId>,
    flow: u32,
    start: Instant,
    stop: Instant,
    channels: Vec<Channel>,
    /// log(1/P)/TSD.
    lambda: f64,
    tsd_s: f64,
    /// M, packets per wave, and L, base packets per slot.
    m: u64,
    l: u64,
    timers: TimerTable<SenderTimer>,
    last_now: Instant,
    records: SenderRecords,
}

impl WebrcSender {
    /// A sender of session `flow` whose channel CN is on `groups[CN]` (T + 1 groups, the base
    /// channel's last), sending from `start` until `stop`.
    pub fn try_new(
        cfg: WebrcConfig,
        groups: &[GroupId],
        flow: u32,
        start: Instant,
        stop: Instant,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        check_groups(&cfg, groups)?;
        let t = cfg.t() as usize;
        let mut s = WebrcSender {
            lambda: cfg.lambda(),
            tsd_s: cfg.tsd.as_secs_f64(),
            m: cfg.wave_packets(),
            l: cfg.l(),
            groups: groups.to_vec(),
            flow,
            start,
            stop,
            channels: vec![Channel { slot: 0, j: 0, next: None }; t + 1],
            timers: TimerTable::default(),
            last_now: start,
            records: SenderRecords { sent_per_channel: vec![0; t + 1], ..SenderRecords::default() },
            cfg,
        };
        for c in 0..t {
            // The wave of channel c ending at the end of slot c; those of slots 0..N-1 began
            // before the start and are joined in mid-life.
            let mut ch = Channel { slot: c as i64, j: 0, next: None };
            let a = s.wave_start_s(ch.slot);
            if a < 0.0 {
                ch.j = s.cum(s.wave_r0(), -a).ceil().max(0.0) as u64;
            }
            s.channels[c] = ch;
            s.schedule(c);
        }
        s.channels[t] = Channel { slot: 0, j: 0, next: None };
        s.schedule(t);
        Ok(s)
    }

    pub fn config(&self) -> &WebrcConfig {
        &self.cfg
    }
    pub fn records(&self) -> &SenderRecords {
        &self.records
    }

    /// BCR_P/P^N, a wave's starting rate.
    fn wave_r0(&self) -> f64 {
        self.cfg.bcr_p * self.cfg.p.powi(-(self.cfg.waves as i32))
    }
    /// Seconds after the start at which the wave ending with slot `m` begins (slot m-N+1).
    fn wave_start_s(&self, m: i64) -> f64 {
        (m - self.cfg.waves as i64 + 1) as f64 * self.tsd_s
    }
    /// The integral of r0·P^(τ/TSD) from 0 to τ: packets sent by then.
    fn cum(&self, r0: f64, tau: f64) -> f64 {
        r0 / self.lambda * (1.0 - (-self.lambda * tau).exp())
    }
    /// τ_j, when that integral reaches j.
    fn tau(&self, r0: f64, j: u64) -> f64 {
        -(1.0 - j as f64 * self.lambda / r0).ln() / self.lambda
    }

    /// Sets channel `c`'s next packet time from its (slot, j), moving to the next wave (or
    /// slot) when this one is done.
    fn schedule(&mut self, c: usize) {
        let t = self.cfg.t() as usize;
        let (r0, count) = if c == t { (self.cfg.bcr_p, self.l) } else { (self.wave_r0(), self.m) };
        let mut ch = self.channels[c];
        if ch.j >= count {
            ch.j = 0;
            ch.slot += if c == t { 1 } else { t as i64 };
        }
        let begin = if c == t { ch.slot as f64 * self.tsd_s } else { self.wave_start_s(ch.slot) };
        let off = begin + self.tau(r0, ch.j);
        let at = self.start + Duration::from_secs_f64(off.max(0.0));
        ch.next = (at < self.stop).then_some(at);
        self.channels[c] = ch;
    }

    fn arm(&mut self) {
        match self.channels.iter().filter_map(|c| c.next).min() {
            Some(at) => self.timers.set(SenderTimer::Send, at),
            None => self.timers.stop(SenderTimer::Send),
        }
    }

    /// The channel whose packet is due by `now`, earliest first (lowest CN on ties).
    fn due(&self, now: Instant) -> Option<usize> {
        let mut pick: Option<(usize, Instant)> = None;
        for (c, ch) in self.channels.iter().enumerate() {
            if let Some(at) = ch.next {
                if at <= now && pick.is_none_or(|(_, b)| at < b) {
                    pick = Some((c, at));
                }
            }
        }
        pick.map(|(c, _)| c)
    }

    /// CTSI, CN and PSN of channel `c`'s next packet (§3.1.2).
    fn info(&self, c: usize) -> CcInfo {
        let t = self.cfg.t() as i64;
        let ch = self.channels[c];
        let (slot, psn) = if c == t as usize {
            // The base channel: PSN ≡ j (mod L), wrapping at the largest multiple of L ≤ 2^16.
            let wrap = PSN_SPACE / self.l * self.l;
            (ch.slot, ((ch.slot as u64).wrapping_mul(self.l) + ch.j) % wrap)
        } else {
            // A wave: its last packet has 2^16 - 1.
            let tau = self.tau(self.wave_r0(), ch.j);
            let within = ((tau / self.tsd_s).floor() as i64).clamp(0, self.cfg.waves as i64 - 1);
            (ch.slot - self.cfg.waves as i64 + 1 + within, (PSN_SPACE - self.m + ch.j) % PSN_SPACE)
        };
        CcInfo { ctsi: slot.rem_euclid(t) as u8, cn: c as u8, psn: psn as u16 }
    }
}

impl Agent for WebrcSender {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        self.last_now = now;
        self.arm();
    }

    fn handle_packet(&mut self, _now: Instant, _packet: &Packet) {}

    fn handle_timeout(&mut self, now: Instant) {
        while let Some(timer) = self.timers.expire(now) {
            match timer {
                SenderTimer::Send => self.last_now = now,
            }
        }
        self.arm();
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        let c = self.due(self.last_now)?;
        let info = self.info(c);
        let mut p = Packet::data(Dest::Group(self.groups[c]), self.cfg.packet_size);
        p.flow = self.flow;
        p.layer = info.cn;
        p.seq = info.psn as u64;
        p.sent_at = self.channels[c].next.unwrap_or(self.last_now);
        p.header = info.encode();
        self.records.sent += 1;
        self.records.bytes += self.cfg.packet_size as u64;
        self.records.sent_per_channel[c] += 1;
        self.channels[c].j += 1;
        self.schedule(c);
        self.arm();
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }
}

/// §3: one group per channel, each its own.
pub(super) fn check_groups(cfg: &WebrcConfig, groups: &[GroupId]) -> Result<(), ConfigError> {
    if groups.len() != cfg.layers as usize {
        return Err(ConfigError::new("groups", groups.len(), "need exactly one group per channel (`layers`)"));
    }
    for (i, g) in groups.iter().enumerate() {
        if groups[..i].contains(g) {
            return Err(ConfigError::new("groups", g.0, "each channel needs its own group (duplicate)"));
        }
    }
    Ok(())
}
