//! RLC, receiver-driven layered congestion control: Vicisano, Rizzo and Crowcroft,
//! *TCP-like congestion control for layered multicast data transfer* (INFOCOM 1998), with the
//! set-up of the Rainbow paper's §IV-B (Yano & McCanne, UCB/CSD-99-1068), which compares
//! Rainbow against it.
//!
//! * [`RlcSource`]: cumulative layers whose rates double (layer 0 at B, layer i ≥ 1 at
//!   B·2^(i-1), so level L carries B·2^(L-1) in all); synchronisation points (SPs) every
//!   `sp_base_interval`, SP k being one for levels 1..=L when 2^(L-1) divides k, so the time
//!   between join opportunities doubles with the level; the first packet of each layer after
//!   an SP carries the SP's mark. Optional burst test: before each SP every layer sends at
//!   twice its rate for `burst_duration`, then pauses as long, so the long-term rate is kept.
//! * [`RlcReceiver`]: joins the next layer at an SP of its level if it saw no loss and no
//!   late packet since the previous such SP (burst included); drops its top layer on a loss,
//!   then ignores losses for `deaf_period` (the leave takes effect meanwhile). A gap in a
//!   layer's sequence numbers becomes a loss if the packets do not arrive within
//!   `reorder_timeout`; a packet that arrives in that time was only late.
//!
//! Where the sources are loose (our readings, each a `RlcConfig` field):
//! * the Rainbow paper gives B = 32 kb/s and "synchronization points for base layer come every
//!   second", and says joins to the 7th layer come "every 32 seconds": SPs for level L every
//!   2^(L-1) s, so the 1 s base interval of the paper wins over public RLC code's 250 ms;
//! * burst length, deaf period and reorder timeout are not in the Rainbow paper: 250 ms,
//!   10 s and 500 ms, the last two as in public RLC implementations (INRIA's MCL, MAD-RLC);
//! * "since the last SP" is read as since the last SP at which this receiver could have joined
//!   (one of its level); losses while deaf do not count against a join.

use std::collections::VecDeque;

use castlab_core::config::check::{int_in, nonzero, packet_rate};
use castlab_core::{
    Agent, AgentEvent, ConfigError, Dest, Duration, GroupId, Header, Instant, Packet, RlcHeader, StartInfo, TimerTable,
};

/// RLC's parameters. `Default` is the Rainbow paper's set-up where it gives one.
#[derive(Clone, Debug, PartialEq)]
pub struct RlcConfig {
    /// Rate of layer 0 (B), bit/s. Rainbow §IV-B: "the base layer's sending rate is 32 Kbps".
    pub base_rate_bps: f64,
    /// Number of layers. Ours: 10 (level 10 carries 16 Mb/s, above every link of §IV-B).
    pub layers: u32,
    /// Packet size, bytes. Rainbow §IV-B: "Data packets are 512 Bytes".
    pub packet_bytes: u32,
    /// SPs for level 1 come every this long; level L's every 2^(L-1) times this. Rainbow
    /// §IV-B: "synchronization points for base layer come every second" (public RLC: 250 ms).
    pub sp_base_interval: Duration,
    /// The burst test before each SP (Vicisano et al.); public RLC code omits it.
    pub burst: bool,
    /// Length of the burst, and of the pause after it. Ours: 250 ms.
    pub burst_duration: Duration,
    /// After dropping a layer, losses are ignored this long. Public RLC: 10 s.
    pub deaf_period: Duration,
    /// A missing packet counts as lost when it has not arrived this long after a later one.
    /// Public RLC: 500 ms.
    pub reorder_timeout: Duration,
}

impl Default for RlcConfig {
    fn default() -> Self {
        RlcConfig {
            base_rate_bps: 32e3,
            layers: 10,
            packet_bytes: 512,
            sp_base_interval: Duration::from_secs(1),
            burst: true,
            burst_duration: Duration::from_millis(250),
            deaf_period: Duration::from_secs(10),
            reorder_timeout: Duration::from_millis(500),
        }
    }
}

impl RlcConfig {
    /// Check every field; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        int_in("layers", self.layers.into(), 1, 32)?;
        int_in("packet_bytes", self.packet_bytes.into(), 1, 65_507)?;
        packet_rate("base_rate_bps", self.base_rate_bps, self.packet_bytes)?;
        packet_rate("base_rate_bps", self.layer_rate_bps(self.layers - 1) * 2.0, self.packet_bytes)
            .map_err(|e| ConfigError::new("layers", self.layers, format!("top layer too fast: {}", e.reason)))?;
        nonzero("sp_base_interval", self.sp_base_interval)?;
        if self.burst && self.burst_duration.as_nanos() * 2 >= self.sp_base_interval.as_nanos() {
            return Err(ConfigError::new(
                "burst_duration",
                self.burst_duration.as_secs_f64(),
                "burst and pause must fit in one sp_base_interval",
            ));
        }
        nonzero("reorder_timeout", self.reorder_timeout)?;
        Ok(())
    }

    /// Layer i's own rate (layer 0: B; layer i ≥ 1: B·2^(i-1)).
    pub fn layer_rate_bps(&self, i: u32) -> f64 {
        if i == 0 {
            self.base_rate_bps
        } else {
            self.base_rate_bps * 2f64.powi(i as i32 - 1)
        }
    }

    /// The cumulative rate of level L (layers 0..L): B·2^(L-1).
    pub fn level_rate_bps(&self, level: u32) -> f64 {
        self.base_rate_bps * 2f64.powi(level.max(1) as i32 - 1)
    }

    /// Time between SPs of level L: 2^(L-1) base intervals.
    pub fn sp_interval(&self, level: u32) -> Duration {
        Duration::from_nanos(self.sp_base_interval.as_nanos() << (level.max(1) - 1).min(40))
    }

    /// The highest level SP number `k` is an SP for (k > 0): the largest L with 2^(L-1) | k.
    pub fn sp_level_of(&self, k: u64) -> u32 {
        (k.trailing_zeros() + 1).min(self.layers)
    }
}

castlab_core::config_fields!(RlcConfig {
    base_rate_bps,
    layers,
    packet_bytes,
    sp_base_interval,
    burst,
    burst_duration,
    deaf_period,
    reorder_timeout,
});

// ------------------------------------------------------------------------------------ source

/// One layer's send schedule.
#[derive(Clone, Copy, Debug)]
struct Stream {
    group: GroupId,
    interval: Duration,
    next_at: Instant,
    seq: u64,
    /// The number of the last SP this layer has marked a packet for.
    marked_sp: u64,
}

/// The RLC sender: every layer on its own group, SPs and bursts as in the module doc.
#[derive(Debug)]
pub struct RlcSource {
    cfg: RlcConfig,
    flow: u32,
    start: Instant,
    stop: Instant,
    streams: Vec<Stream>,
    out: VecDeque<Packet>,
    pub sent: u64,
    pub sent_in_burst: u64,
}

impl RlcSource {
    /// A source of `groups.len()` layers (layer i on `groups[i]`), sending from `start` to
    /// `stop`.
    pub fn try_new(
        cfg: RlcConfig,
        groups: &[GroupId],
        flow: u32,
        start: Instant,
        stop: Instant,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if groups.len() != cfg.layers as usize {
            return Err(ConfigError::new(
                "groups",
                groups.len(),
                format!("needs one group per layer ({})", cfg.layers),
            ));
        }
        let bits = cfg.packet_bytes as f64 * 8.0;
        let streams = groups
            .iter()
            .enumerate()
            .map(|(i, &g)| Stream {
                group: g,
                interval: Duration::from_secs_f64(bits / cfg.layer_rate_bps(i as u32)),
                next_at: Instant::MAX,
                seq: 0,
                marked_sp: 0,
            })
            .collect();
        Ok(RlcSource { cfg, flow, start, stop, streams, out: VecDeque::new(), sent: 0, sent_in_burst: 0 })
    }

    pub fn config(&self) -> &RlcConfig {
        &self.cfg
    }

    /// Relative to the run's start: which SP comes next at or after `t`, and whether `t` lies
    /// in its burst window or its pause window.
    fn phase(&self, t: Instant) -> (u64, bool, bool) {
        let base = self.cfg.sp_base_interval.as_nanos();
        let rel = t.saturating_since(self.start).as_nanos();
        let k = rel.div_ceil(base).max(1);
        let until = k * base - rel; // time to the next SP
        let b = self.cfg.burst_duration.as_nanos();
        let (burst, pause) =
            if self.cfg.burst { (until > b && until <= 2 * b, until <= b && until > 0) } else { (false, false) };
        (k, burst, pause)
    }

    /// Send layer i's packet due at `t`, and schedule its next one (§ burst test: twice the
    /// rate in the burst window, nothing in the pause window).
    fn emit(&mut self, i: usize, t: Instant) {
        let base = self.cfg.sp_base_interval.as_nanos();
        let rel = t.saturating_since(self.start).as_nanos();
        // the last SP at or before t
        let last_sp = rel / base;
        let (_, burst, _) = self.phase(t);
        let st = &mut self.streams[i];
        let mut h = RlcHeader { burst, ..RlcHeader::default() };
        if last_sp > 0 && st.marked_sp < last_sp {
            st.marked_sp = last_sp;
            h.sp_index = last_sp as u32;
            h.sp_level = self.cfg.sp_level_of(last_sp) as u8;
        }
        let mut p = Packet::data(Dest::Group(st.group), self.cfg.packet_bytes);
        p.flow = self.flow;
        p.layer = i as u8;
        p.seq = st.seq;
        p.sent_at = t;
        p.header = Header::Rlc(h);
        st.seq += 1;
        self.sent += 1;
        if burst {
            self.sent_in_burst += 1;
        }
        self.out.push_back(p);
        let step = if burst { st.interval.mul_f64(0.5) } else { st.interval };
        let mut next = t + step;
        let (k, _, pause) = self.phase(next);
        if pause {
            next = self.start + Duration::from_nanos(k * base); // resume at the SP
        }
        self.streams[i].next_at = if next < self.stop { next } else { Instant::MAX };
    }
}

impl Agent for RlcSource {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        self.start = now.max(self.start);
        for s in &mut self.streams {
            s.next_at = self.start;
        }
        self.handle_timeout(now);
    }
    fn handle_packet(&mut self, _now: Instant, _p: &Packet) {}
    fn handle_timeout(&mut self, now: Instant) {
        for i in 0..self.streams.len() {
            while self.streams[i].next_at <= now {
                let t = self.streams[i].next_at;
                self.emit(i, t);
            }
        }
    }
    fn poll_transmit(&mut self) -> Option<Packet> {
        self.out.pop_front()
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.streams.iter().map(|s| s.next_at).min().filter(|t| *t != Instant::MAX)
    }
}

// ---------------------------------------------------------------------------------- receiver

castlab_core::timers! {
    /// The receiver's one timer: the earliest reorder deadline of a missing packet.
    pub enum RlcTimer { Reorder }
}

/// What an RLC receiver did, as columns (times in ns).
#[derive(Clone, Debug, Default)]
pub struct RlcRecords {
    pub level_time_ns: Vec<u64>,
    pub level: Vec<u32>,
    /// Losses detected (after the reorder timeout): when, which layer, how many.
    pub loss_time_ns: Vec<u64>,
    pub loss_layer: Vec<u8>,
    pub loss_count: Vec<u64>,
    pub received: u64,
    pub lost: u64,
    /// Packets that came after a later one but within the reorder timeout.
    pub late: u64,
    pub joins: u64,
    pub drops: u64,
    /// Losses ignored while deaf.
    pub deaf_losses: u64,
    pub ignored: u64,
}

castlab_core::records_table!(RlcRecords {
    columns: [level_time_ns, level, loss_time_ns, loss_layer, loss_count],
    scalars: [
        received = |r| r.received,
        lost = |r| r.lost,
        late = |r| r.late,
        joins = |r| r.joins,
        drops = |r| r.drops,
        deaf_losses = |r| r.deaf_losses,
        ignored = |r| r.ignored,
    ],
});

/// Most missing packets tracked per layer while they may still come; past it a gap counts as
/// lost at once (bounded state: no allocation per packet).
const MAX_PENDING: usize = 64;

/// Per layer: the next sequence number expected and the missing ones still awaited.
#[derive(Clone, Debug, Default)]
struct Layer {
    next: Option<u64>,
    pending: VecDeque<(u64, Instant)>,
}

/// The RLC receiver.
#[derive(Debug)]
pub struct RlcReceiver {
    cfg: RlcConfig,
    groups: Vec<GroupId>,
    level: u32,
    layers: Vec<Layer>,
    /// No loss and no late packet since the last SP of this receiver's level.
    clean: bool,
    /// The last SP acted on (each SP is marked on every layer: act once).
    last_sp: u32,
    deaf_until: Instant,
    timers: TimerTable<RlcTimer>,
    events: VecDeque<AgentEvent>,
    pub records: RlcRecords,
}

impl RlcReceiver {
    /// A receiver of the layers on `groups` (layer i on `groups[i]`), starting at level 1.
    pub fn try_new(cfg: RlcConfig, groups: Vec<GroupId>) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if groups.is_empty() || groups.len() > 32 {
            return Err(ConfigError::new("groups", groups.len(), "needs 1 to 32 layers"));
        }
        let n = groups.len();
        Ok(RlcReceiver {
            cfg,
            groups,
            level: 0,
            layers: vec![Layer::default(); n],
            clean: false,
            last_sp: 0,
            deaf_until: Instant::ZERO,
            timers: TimerTable::default(),
            events: VecDeque::new(),
            records: RlcRecords::default(),
        })
    }

    pub fn level(&self) -> u32 {
        self.level
    }
    pub fn is_deaf(&self, now: Instant) -> bool {
        now < self.deaf_until
    }
    pub fn config(&self) -> &RlcConfig {
        &self.cfg
    }

    fn set_level(&mut self, now: Instant, level: u32) {
        while self.level < level {
            self.events.push_back(AgentEvent::Join(self.groups[self.level as usize]));
            self.layers[self.level as usize] = Layer::default();
            self.level += 1;
        }
        while self.level > level {
            self.level -= 1;
            self.events.push_back(AgentEvent::Leave(self.groups[self.level as usize]));
            self.layers[self.level as usize] = Layer::default();
        }
        self.records.level_time_ns.push(now.as_nanos());
        self.records.level.push(level);
        self.events.push_back(AgentEvent::LevelChanged { level });
    }

    /// A loss (after the reorder timeout): drop the top layer unless deaf.
    fn on_loss(&mut self, now: Instant, layer: usize, count: u64) {
        self.records.lost += count;
        self.records.loss_time_ns.push(now.as_nanos());
        self.records.loss_layer.push(layer as u8);
        self.records.loss_count.push(count);
        if self.is_deaf(now) {
            self.records.deaf_losses += count;
            return;
        }
        self.clean = false;
        if self.level > 1 {
            self.records.drops += 1;
            self.set_level(now, self.level - 1);
        }
        self.deaf_until = now + self.cfg.deaf_period;
    }

    fn rearm(&mut self) {
        match self.layers.iter().filter_map(|l| l.pending.front().map(|(_, d)| *d)).min() {
            Some(d) => self.timers.set(RlcTimer::Reorder, d),
            None => self.timers.stop(RlcTimer::Reorder),
        }
    }
}

impl Agent for RlcReceiver {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        self.set_level(now, 1);
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        let Header::Rlc(h) = p.header else {
            self.records.ignored += 1;
            return;
        };
        let i = p.layer as usize;
        if i >= self.level as usize || p.dst != Dest::Group(self.groups[i]) {
            self.records.ignored += 1;
            return;
        }
        self.records.received += 1;
        let l = &mut self.layers[i];
        match l.next {
            None => l.next = Some(p.seq + 1),
            Some(n) if p.seq >= n => {
                // a gap: the missing ones may still come within the reorder timeout
                for s in n..p.seq {
                    if l.pending.len() < MAX_PENDING {
                        l.pending.push_back((s, now + self.cfg.reorder_timeout));
                    } else {
                        self.records.lost += 1;
                    }
                }
                l.next = Some(p.seq + 1);
            }
            Some(_) => {
                if let Some(k) = l.pending.iter().position(|(s, _)| *s == p.seq) {
                    l.pending.remove(k);
                    self.records.late += 1;
                    self.clean = false; // a late packet also forbids a join
                }
            }
        }
        self.rearm();
        // §RLC: at an SP of this receiver's level, join if the interval since the last one was
        // clean (each SP is marked on every layer: act on its first mark only)
        if h.sp_level > 0 && h.sp_index != self.last_sp {
            self.last_sp = h.sp_index;
            if h.sp_level as u32 >= self.level {
                if self.clean && !self.is_deaf(now) && (self.level as usize) < self.groups.len() {
                    self.records.joins += 1;
                    self.set_level(now, self.level + 1);
                }
                self.clean = true;
            }
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.timers.expire(now) != Some(RlcTimer::Reorder) {
            return;
        }
        for i in 0..self.layers.len() {
            let mut lost = 0;
            while let Some(&(_, d)) = self.layers[i].pending.front() {
                if d > now {
                    break;
                }
                self.layers[i].pending.pop_front();
                lost += 1;
            }
            if lost > 0 {
                self.on_loss(now, i, lost);
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
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Driver;

    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }
    fn groups(n: u32) -> Vec<GroupId> {
        (0..n).map(|i| GroupId(10 + i)).collect()
    }
    fn pkt(layer: u8, seq: u64, sp: Option<(u32, u8)>) -> Packet {
        let mut p = Packet::data(Dest::Group(GroupId(10 + layer as u32)), 512);
        p.layer = layer;
        p.seq = seq;
        let (sp_index, sp_level) = sp.unwrap_or((0, 0));
        p.header = Header::Rlc(RlcHeader { sp_index, sp_level, burst: false });
        p
    }
    fn rx() -> Driver<RlcReceiver> {
        Driver::started(RlcReceiver::try_new(RlcConfig::default(), groups(6)).unwrap())
    }

    #[test]
    fn joins_exactly_at_an_sp_after_a_clean_interval() {
        let mut d = rx();
        assert_eq!(d.agent.level(), 1);
        d.packet(ms(100), &pkt(0, 0, Some((1, 1)))); // the first SP only starts a clean interval
        assert_eq!(d.agent.level(), 1);
        for s in 1..5 {
            d.packet(ms(100 + 200 * s), &pkt(0, s, None));
        }
        assert_eq!(d.agent.level(), 1, "no join between SPs");
        d.packet(ms(1100), &pkt(0, 5, Some((2, 2))));
        assert_eq!(d.agent.level(), 2);
        assert!(d.events.iter().any(|(t, e)| *t == ms(1100) && *e == AgentEvent::Join(GroupId(11))));
    }

    #[test]
    fn an_sp_of_a_lower_level_is_no_join_opportunity() {
        let mut d = rx();
        d.packet(ms(100), &pkt(0, 0, Some((2, 2))));
        d.packet(ms(1100), &pkt(0, 1, Some((3, 1))));
        assert_eq!(d.agent.level(), 2, "SP 3 is a level-1 SP: a level-1 receiver joins");
        d.packet(ms(1150), &pkt(1, 0, None));
        d.packet(ms(2100), &pkt(0, 2, Some((5, 1))));
        assert_eq!(d.agent.level(), 2, "SP 5 is for level 1 only; level 2 waits for SPs divisible by 2");
    }

    #[test]
    fn no_join_after_a_loss_and_the_top_layer_is_dropped_on_loss() {
        let mut d = rx();
        d.packet(ms(0), &pkt(0, 0, Some((1, 2))));
        d.packet(ms(10), &pkt(0, 1, Some((2, 2))));
        assert_eq!(d.agent.level(), 2);
        d.packet(ms(20), &pkt(1, 0, None));
        d.packet(ms(30), &pkt(1, 3, None)); // 1 and 2 missing
        d.advance_to(ms(30 + 500));
        assert_eq!(d.agent.level(), 1, "dropped after the reorder timeout");
        assert_eq!(d.agent.records.lost, 2);
        assert!(d.events.iter().any(|(_, e)| *e == AgentEvent::Leave(GroupId(11))));
        // deaf for 10 s: no join either, however clean
        d.packet(ms(1000), &pkt(0, 2, Some((3, 1))));
        d.packet(ms(2000), &pkt(0, 3, Some((4, 3))));
        assert_eq!(d.agent.level(), 1);
    }

    #[test]
    fn losses_are_ignored_while_deaf() {
        let mut d = rx();
        d.packet(ms(0), &pkt(0, 0, Some((1, 3))));
        d.packet(ms(10), &pkt(0, 1, Some((2, 3))));
        d.packet(ms(20), &pkt(0, 2, Some((4, 3))));
        assert_eq!(d.agent.level(), 3);
        d.packet(ms(30), &pkt(2, 0, None));
        d.packet(ms(40), &pkt(2, 2, None));
        d.advance_to(ms(600));
        assert_eq!(d.agent.level(), 2);
        d.packet(ms(700), &pkt(1, 0, None));
        d.packet(ms(710), &pkt(1, 5, None)); // more losses, while deaf
        d.advance_to(ms(1300));
        assert_eq!(d.agent.level(), 2, "deaf: the second loss drops nothing");
        assert_eq!(d.agent.records.deaf_losses, 4);
        assert_eq!(d.agent.records.drops, 1);
    }

    #[test]
    fn a_packet_within_the_reorder_timeout_is_late_not_lost() {
        let mut d = rx();
        d.packet(ms(0), &pkt(0, 0, Some((1, 1))));
        d.packet(ms(10), &pkt(0, 2, None));
        d.packet(ms(400), &pkt(0, 1, None)); // 390 ms late, under 500
        d.advance_to(ms(2000));
        assert_eq!((d.agent.records.lost, d.agent.records.late), (0, 1));
        // but a late packet forbids the next join
        d.packet(ms(2100), &pkt(0, 3, Some((2, 2))));
        assert_eq!(d.agent.level(), 1);
    }

    fn source(burst: bool, layers: u32) -> Driver<RlcSource> {
        let cfg = RlcConfig { burst, layers, ..RlcConfig::default() };
        let gs = groups(layers);
        Driver::started(RlcSource::try_new(cfg, &gs, 1, Instant::ZERO, Instant::MAX).unwrap())
    }

    #[test]
    fn sp_spacing_doubles_with_the_level() {
        let mut d = source(false, 6);
        d.advance_to(ms(64_500));
        // SP marks on layer 0: SP k is for levels 1..=trailing_zeros(k)+1
        let marks: Vec<(u32, u8)> = d
            .sent
            .iter()
            .filter_map(|(_, p)| match p.header {
                Header::Rlc(h) if p.layer == 0 && h.sp_level > 0 => Some((h.sp_index, h.sp_level)),
                _ => None,
            })
            .collect();
        assert_eq!(marks.len(), 64, "one mark per SP on each layer");
        for (k, l) in &marks {
            assert_eq!(*l as u32, (k.trailing_zeros() + 1).min(6), "SP {k}");
        }
        // level L's SPs come every 2^(L-1) s
        let cfg = RlcConfig::default();
        for l in 1..=6u32 {
            let ks: Vec<u32> = marks.iter().filter(|(_, lv)| *lv as u32 >= l).map(|(k, _)| *k).collect();
            assert!(ks.windows(2).all(|w| w[1] - w[0] == 1 << (l - 1)), "level {l}: {ks:?}");
            assert_eq!(cfg.sp_interval(l), Duration::from_secs(1 << (l - 1)));
        }
    }

    #[test]
    fn the_burst_doubles_the_rate_then_pauses_and_keeps_the_long_term_rate() {
        let layers = 4;
        let mut with = source(true, layers);
        let mut without = source(false, layers);
        let horizon = ms(60_000);
        with.advance_to(horizon);
        without.advance_to(horizon);
        let cfg = RlcConfig { layers, ..RlcConfig::default() };
        // layer 3 (128 kb/s, 31.25 packets/s): per second, 1 s of sending = 0.5 s normal, 0.25 s at
        // twice the rate, 0.25 s paused
        let count = |d: &Driver<RlcSource>, a: u64, b: u64, layer: u8| {
            d.sent.iter().filter(|(t, p)| p.layer == layer && *t >= ms(a) && *t < ms(b)).count()
        };
        let rate = cfg.layer_rate_bps(3) / (cfg.packet_bytes as f64 * 8.0);
        let n_burst = count(&with, 30_500, 30_750, 3) as f64;
        let n_pause = count(&with, 30_750, 31_000, 3);
        assert!((n_burst - 2.0 * rate * 0.25).abs() <= 1.0, "burst: {n_burst} packets in 250 ms");
        assert_eq!(n_pause, 0, "nothing sent in the pause before the SP");
        let long_with = count(&with, 10_000, 50_000, 3) as f64;
        let long_without = count(&without, 10_000, 50_000, 3) as f64;
        assert!((long_with / long_without - 1.0).abs() < 0.02, "{long_with} vs {long_without}");
        assert!((long_without / 40.0 - rate).abs() / rate < 0.02);
        assert!(with.sent.iter().any(|(_, p)| matches!(p.header, Header::Rlc(h) if h.burst)));
    }

    #[test]
    fn bad_config_names_the_field() {
        let e = RlcConfig { layers: 0, ..RlcConfig::default() }.validate().unwrap_err();
        assert_eq!(e.field, "layers");
        let e =
            RlcConfig { burst_duration: Duration::from_millis(600), ..RlcConfig::default() }.validate().unwrap_err();
        assert_eq!(e.field, "burst_duration");
        let e = RlcSource::try_new(RlcConfig::default(), &groups(3), 1, Instant::ZERO, Instant::MAX).unwrap_err();
        assert_eq!(e.field, "groups");
    }
}
