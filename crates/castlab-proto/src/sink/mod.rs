//! A measuring receiver: counts arrivals and detects losses from sequence gaps.
//!
//! What it keeps is chosen with [`Record`]: by default ([`Record::Summary`]) counters only
//! (packets, bytes and losses in all and per layer, first and last arrival) and the worst-case
//! windowed loss for the configured windows computed online ([`crate::window`]), so its
//! memory does not grow with the run; with [`Record::Arrivals`] also one row per arrival and
//! per detected gap ([`SinkRecords`], 25 bytes per arrival). The counters and windowed losses
//! are the same either way (tests check it).
//!
//! The sink subscribes to a layered session by level (level L = the groups of layers
//! 0..L-1, cumulative as in McCanne et al. §2) following a fixed schedule of `(time, level)` changes, or
//! receives unicast packets on its port. For each (flow, layer) it tracks the next expected
//! sequence number; a gap of k packets is recorded as k losses at the arrival time of the
//! packet that revealed it. Gap tracking for a layer starts at the first packet after joining
//! it and stops when the layer is left, so a leave/re-join does not count the packets sent
//! while unsubscribed. Packets that still arrive for a layer after it was left (before the
//! prune takes effect), or that were sent before the layer was (re)joined, are recorded as
//! arrivals but not gap-checked: on a long path the tail of the old subscription can arrive
//! after the re-join, and would otherwise make the jump to the new packets look like a loss.

use castlab_core::{Agent, AgentEvent, GroupId, Instant, NodeId, Packet, StartInfo};

use crate::window::WorstWindowLoss;

/// What a sink keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Record {
    /// Counters and online windowed losses only: memory bounded by the scenario.
    #[default]
    Summary,
    /// Also every arrival and every detected gap ([`SinkRecords`]).
    Arrivals,
}

castlab_core::config_enum!(Record { Summary => "summary", Arrivals => "arrivals" });

/// Counters a sink always keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SinkSummary {
    pub received: u64,
    pub bytes: u64,
    /// Packets detected lost (sum of the gaps).
    pub lost: u64,
    /// Per layer (index = layer; grown to the highest layer seen).
    pub layer_received: Vec<u64>,
    pub layer_lost: Vec<u64>,
    pub first_arrival_ns: Option<u64>,
    pub last_arrival_ns: Option<u64>,
}

impl SinkSummary {
    fn layer(&mut self, layer: u8) -> usize {
        let l = layer as usize;
        if self.layer_received.len() <= l {
            // grows once per new layer, not per packet
            self.layer_received.resize(l + 1, 0);
            self.layer_lost.resize(l + 1, 0);
        }
        l
    }
}

/// Columnar records of one sink.
#[derive(Clone, Debug, Default)]
pub struct SinkRecords {
    pub arr_time_ns: Vec<u64>,
    pub arr_flow: Vec<u32>,
    pub arr_layer: Vec<u8>,
    pub arr_seq: Vec<u64>,
    pub arr_size: Vec<u32>,
    /// One row per detected gap: when it was detected, which layer, how many packets.
    pub loss_time_ns: Vec<u64>,
    pub loss_flow: Vec<u32>,
    pub loss_layer: Vec<u8>,
    pub loss_count: Vec<u32>,
}

impl SinkRecords {
    pub fn received(&self) -> u64 {
        self.arr_time_ns.len() as u64
    }
    pub fn lost(&self) -> u64 {
        self.loss_count.iter().map(|&c| c as u64).sum()
    }
    pub fn bytes(&self) -> u64 {
        self.arr_size.iter().map(|&s| s as u64).sum()
    }
}

#[derive(Clone, Copy, Debug)]
struct GapState {
    flow: u32,
    layer: u8,
    next: u64,
}

/// A receiver that counts arrivals and losses (and records them if asked), joining groups on
/// a schedule.
///
/// Its layout is for a million of them: the fields an arrival reads come first, in declaration
/// order (`repr(C)`), so that they share a few cache lines, and the small per-layer vectors
/// get their room when the sink is made, so that they lie next to each other on the heap
/// instead of wherever the first packet finds space; each layer's group and join time share
/// one entry.
#[derive(Debug)]
#[repr(C)]
pub struct LayeredSink {
    pub summary: SinkSummary,
    /// Per layer m: the group carrying it, and when it was last joined (gap tracking uses only
    /// packets sent after that).
    layers: Vec<(GroupId, Instant)>,
    gaps: Vec<GapState>,
    /// Online worst-case windowed loss, one per configured window.
    windows: Vec<WorstWindowLoss>,
    level: u32,
    record: Record,
    events: Vec<AgentEvent>,
    schedule: Vec<(Instant, u32)>,
    next_change: usize,
    /// Per-arrival and per-gap rows; empty unless the sink records [`Record::Arrivals`].
    pub records: SinkRecords,
}

impl LayeredSink {
    /// `groups[m]` carries layer m. `schedule` lists `(time, level)` changes in time order.
    /// With no groups the sink is a plain unicast sink. It keeps counters only
    /// ([`Record::Summary`]); see [`LayeredSink::recording`] and [`LayeredSink::with_record`].
    pub fn new(groups: Vec<GroupId>, mut schedule: Vec<(Instant, u32)>) -> Self {
        schedule.sort_by_key(|(t, _)| *t);
        // room for one (flow, layer) per layer, or one flow for a unicast sink; more grow later
        let layers = groups.len().max(1);
        LayeredSink {
            record: Record::Summary,
            summary: SinkSummary {
                layer_received: Vec::with_capacity(layers),
                layer_lost: Vec::with_capacity(layers),
                ..SinkSummary::default()
            },
            windows: Vec::new(),
            layers: groups.iter().map(|&g| (g, Instant::ZERO)).collect(),
            schedule,
            next_change: 0,
            level: 0,
            gaps: Vec::with_capacity(layers),
            events: Vec::with_capacity(layers + 1),
            records: SinkRecords::default(),
        }
    }

    /// A sink that also records every arrival and gap ([`Record::Arrivals`]).
    pub fn recording(groups: Vec<GroupId>, schedule: Vec<(Instant, u32)>) -> Self {
        LayeredSink::new(groups, schedule).with_record(Record::Arrivals)
    }

    pub fn with_record(mut self, record: Record) -> Self {
        self.record = record;
        self
    }

    /// Compute the worst-case loss online for each window (nanoseconds, each positive: the
    /// caller checks and names the field).
    pub fn with_windows(mut self, windows_ns: &[u64]) -> Self {
        self.windows = windows_ns.iter().map(|&w| WorstWindowLoss::new(w)).collect();
        self
    }

    pub fn record(&self) -> Record {
        self.record
    }

    /// The configured windows (nanoseconds).
    pub fn windows_ns(&self) -> Vec<u64> {
        self.windows.iter().map(|w| w.window_ns()).collect()
    }

    /// The online worst-case loss for a configured window, or `None` if it is not configured.
    pub fn worst_window_loss(&self, window_ns: u64) -> Option<f64> {
        self.windows.iter().find(|w| w.window_ns() == window_ns).map(|w| w.value())
    }

    pub fn level(&self) -> u32 {
        self.level
    }

    /// The level the schedule ends at (its latest entry), None without a schedule.
    pub fn planned_level(&self) -> Option<u32> {
        self.schedule.last().map(|&(_, l)| l.min(self.layers.len() as u32))
    }

    fn set_level(&mut self, now: Instant, target: u32) {
        let target = target.min(self.layers.len() as u32);
        if target == self.level {
            return;
        }
        // Join upward in layer order, leave downward from the top, as a cumulative receiver does.
        while self.level < target {
            let layer = &mut self.layers[self.level as usize];
            layer.1 = now;
            self.events.push(AgentEvent::Join(layer.0));
            self.level += 1;
        }
        while self.level > target {
            self.level -= 1;
            let layer = self.level as u8;
            self.events.push(AgentEvent::Leave(self.layers[self.level as usize].0));
            self.gaps.retain(|g| g.layer != layer);
        }
        self.events.push(AgentEvent::LevelChanged { level: self.level });
    }

    /// Whether `p` belongs to a subscribed layer and was sent after that layer was joined
    /// (the tail of an earlier subscription still in flight must not seed gap tracking).
    fn tracked(&self, p: &Packet) -> bool {
        match p.group() {
            None => true,
            Some(g) => match self.layers[..self.level as usize].iter().find(|x| x.0 == g) {
                Some(&(_, joined_at)) => p.sent_at >= joined_at,
                None => false,
            },
        }
    }
}

impl Agent for LayeredSink {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        self.handle_timeout(now);
    }

    /// A sender restarted: its sequence numbers start afresh, so gap tracking of its flows
    /// starts again from their next packet (the counters stay). A sink hears only data, and
    /// the gap states do not name their sender: every one is reset.
    fn handle_peer_restart(&mut self, _now: Instant, _node: NodeId) {
        self.gaps.clear();
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        let t = now.as_nanos();
        let full = self.record == Record::Arrivals;
        if full {
            let r = &mut self.records;
            r.arr_time_ns.push(t);
            r.arr_flow.push(p.flow);
            r.arr_layer.push(p.layer);
            r.arr_seq.push(p.seq);
            r.arr_size.push(p.size_bytes);
        }
        let sm = &mut self.summary;
        let l = sm.layer(p.layer);
        sm.received += 1;
        sm.bytes += u64::from(p.size_bytes);
        sm.layer_received[l] += 1;
        sm.first_arrival_ns.get_or_insert(t);
        sm.last_arrival_ns = Some(t);
        // the loss a gap reveals is counted at this instant, before this arrival (as
        // castlab_core::metrics::arrival_process orders them)
        let mut gap = 0u64;
        if self.tracked(p) {
            match self.gaps.iter_mut().find(|g| g.flow == p.flow && g.layer == p.layer) {
                None => self.gaps.push(GapState { flow: p.flow, layer: p.layer, next: p.seq + 1 }),
                Some(g) => {
                    if p.seq > g.next {
                        // a gap row holds at most u32::MAX losses, in the records and here alike
                        gap = (p.seq - g.next).min(u32::MAX as u64);
                    }
                    if p.seq >= g.next {
                        g.next = p.seq + 1;
                    }
                }
            }
        }
        if gap > 0 {
            self.summary.lost += gap;
            self.summary.layer_lost[l] += gap;
            if full {
                let r = &mut self.records;
                r.loss_time_ns.push(t);
                r.loss_flow.push(p.flow);
                r.loss_layer.push(p.layer);
                r.loss_count.push(gap as u32);
            }
        }
        for w in &mut self.windows {
            if gap > 0 {
                w.push(t, 0, gap);
            }
            w.push(t, 1, 0);
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        while let Some(&(t, lvl)) = self.schedule.get(self.next_change) {
            if t > now {
                break;
            }
            self.next_change += 1;
            self.set_level(now, lvl);
        }
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        None
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.schedule.get(self.next_change).map(|(t, _)| *t)
    }

    /// `handle_packet` only counts: it sends nothing, and joins, leaves and the schedule move
    /// only in `handle_timeout`.
    fn packets_only_count(&self) -> bool {
        true
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        if self.events.is_empty() {
            None
        } else {
            Some(self.events.remove(0))
        }
    }
}

pub mod registration;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Driver;
    use castlab_core::{Addr, Dest, NodeId, Rng};

    fn start(s: LayeredSink) -> Driver<LayeredSink> {
        Driver::start_with(s, Instant::ZERO, StartInfo { addr: Addr::new(NodeId(0), 1), rng: Rng::seed_from_u64(0) })
    }

    /// The events the sink reported at `t`.
    fn events_at(d: &Driver<LayeredSink>, t: Instant) -> Vec<AgentEvent> {
        d.events.iter().filter(|(at, _)| *at == t).map(|(_, e)| *e).collect()
    }

    fn pkt(g: u32, layer: u8, seq: u64) -> Packet {
        let mut p = Packet::data(Dest::Group(GroupId(g)), 1000);
        p.layer = layer;
        p.seq = seq;
        p
    }

    #[test]
    fn joins_cumulatively_and_counts_gaps() {
        let mut d =
            start(LayeredSink::recording(vec![GroupId(10), GroupId(11), GroupId(12)], vec![(Instant::ZERO, 2)]));
        assert_eq!(
            events_at(&d, Instant::ZERO),
            vec![AgentEvent::Join(GroupId(10)), AgentEvent::Join(GroupId(11)), AgentEvent::LevelChanged { level: 2 }]
        );
        let t = Instant::from_nanos(5);
        for seq in [3, 4, 7, 8, 9, 12] {
            d.packet(t, &pkt(10, 0, seq));
        }
        d.packet(t, &pkt(11, 1, 0));
        d.packet(t, &pkt(11, 1, 1));
        let s = &d.agent;
        assert_eq!(s.records.received(), 8);
        // gaps on layer 0: 5,6 and 10,11 -> 4 lost in two rows; first packet sets the base.
        assert_eq!(s.records.loss_count, vec![2, 2]);
        assert_eq!(s.records.lost(), 4);
        assert_eq!((s.summary.received, s.summary.lost, s.summary.bytes), (8, 4, 8000));
        assert_eq!(s.summary.layer_received, vec![6, 2]);
        assert_eq!(s.summary.layer_lost, vec![4, 0]);
    }

    #[test]
    fn summary_sink_keeps_no_rows_but_the_same_counts() {
        let groups = vec![GroupId(10), GroupId(11)];
        let full = LayeredSink::recording(groups.clone(), vec![(Instant::ZERO, 2)]).with_windows(&[1_000, 10]);
        let lean = LayeredSink::new(groups, vec![(Instant::ZERO, 2)]).with_windows(&[1_000, 10]);
        assert_eq!(lean.record(), Record::Summary);
        let (mut f, mut l) = (start(full), start(lean));
        for (i, seq) in [0u64, 1, 4, 5, 9, 10, 11, 30].into_iter().enumerate() {
            let t = Instant::from_nanos(100 * i as u64);
            f.packet(t, &pkt(10, 0, seq));
            l.packet(t, &pkt(10, 0, seq));
            f.packet(t, &pkt(11, 1, seq / 2));
            l.packet(t, &pkt(11, 1, seq / 2));
        }
        let (full, lean) = (&f.agent, &l.agent);
        assert_eq!(full.summary, lean.summary);
        assert_eq!(lean.summary.lost, full.records.lost());
        assert_eq!(lean.summary.received, full.records.received());
        assert!(lean.records.arr_time_ns.is_empty() && lean.records.loss_time_ns.is_empty());
        for w in [1_000, 10] {
            let (a, b) = (full.worst_window_loss(w).unwrap(), lean.worst_window_loss(w).unwrap());
            assert_eq!(a.to_bits(), b.to_bits());
        }
        assert_eq!(lean.worst_window_loss(5), None);
    }

    #[test]
    fn leave_and_rejoin_does_not_count_unsubscribed_packets() {
        let t = |s: f64| Instant::from_secs_f64(s);
        let mut s =
            start(LayeredSink::recording(vec![GroupId(0), GroupId(1)], vec![(t(0.0), 2), (t(1.0), 1), (t(2.0), 2)]));
        s.packet(t(0.5), &pkt(1, 1, 0));
        s.advance_to(t(1.0));
        assert_eq!(events_at(&s, t(1.0)), vec![AgentEvent::Leave(GroupId(1)), AgentEvent::LevelChanged { level: 1 }]);
        s.packet(t(1.1), &pkt(1, 1, 1)); // late packet before the prune: recorded, not checked
        s.advance_to(t(2.0));
        // the tail of the first subscription, sent at 1.5 s, arrives after the re-join
        let mut old = pkt(1, 1, 2);
        old.sent_at = t(1.5);
        s.packet(t(2.2), &old);
        let mut p50 = pkt(1, 1, 50);
        p50.sent_at = t(2.1);
        let mut p51 = pkt(1, 1, 51);
        p51.sent_at = t(2.2);
        s.packet(t(2.5), &p50);
        s.packet(t(2.6), &p51);
        assert_eq!(s.agent.records.lost(), 0);
        assert_eq!(s.agent.records.received(), 5);
        // a real gap after the re-join is still a loss
        let mut p55 = pkt(1, 1, 55);
        p55.sent_at = t(2.3);
        s.packet(t(2.7), &p55);
        assert_eq!(s.agent.records.lost(), 3);
        assert_eq!(s.agent.poll_timeout(), None);
    }
}
