//! A measuring receiver: records every arrival and detects losses from sequence gaps.
//!
//! The sink subscribes to a layered session by level (level L = the groups of layers
//! 0..L-1, cumulative as in RLM §2) following a fixed schedule of `(time, level)` changes, or
//! receives unicast packets on its port. For each (flow, layer) it tracks the next expected
//! sequence number; a gap of k packets is recorded as k losses at the arrival time of the
//! packet that revealed it. Gap tracking for a layer starts at the first packet after joining
//! it and stops when the layer is left, so a leave/re-join does not count the packets sent
//! while unsubscribed. Packets that still arrive for a layer after it was left (before the
//! prune takes effect), or that were sent before the layer was (re)joined, are recorded as
//! arrivals but not gap-checked: on a long path the tail of the old subscription can arrive
//! after the re-join, and would otherwise make the jump to the new packets look like a loss.

use castlab_core::{Agent, AgentEvent, GroupId, Instant, Packet, StartInfo};

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

/// A receiver that records arrivals and losses, joining groups on a schedule.
#[derive(Debug)]
pub struct LayeredSink {
    groups: Vec<GroupId>,
    schedule: Vec<(Instant, u32)>,
    next_change: usize,
    level: u32,
    /// When each layer was last joined; gap tracking uses only packets sent after it.
    joined_at: Vec<Instant>,
    gaps: Vec<GapState>,
    events: Vec<AgentEvent>,
    pub records: SinkRecords,
}

impl LayeredSink {
    /// `groups[m]` carries layer m. `schedule` lists `(time, level)` changes in time order.
    /// With no groups the sink is a plain unicast sink.
    pub fn new(groups: Vec<GroupId>, mut schedule: Vec<(Instant, u32)>) -> Self {
        schedule.sort_by_key(|(t, _)| *t);
        LayeredSink {
            joined_at: vec![Instant::ZERO; groups.len()],
            groups,
            schedule,
            next_change: 0,
            level: 0,
            gaps: Vec::new(),
            events: Vec::new(),
            records: SinkRecords::default(),
        }
    }

    pub fn level(&self) -> u32 {
        self.level
    }

    fn set_level(&mut self, now: Instant, target: u32) {
        let target = target.min(self.groups.len() as u32);
        if target == self.level {
            return;
        }
        // Join upward in layer order, leave downward from the top, as a cumulative receiver does.
        while self.level < target {
            self.events.push(AgentEvent::Join(self.groups[self.level as usize]));
            self.joined_at[self.level as usize] = now;
            self.level += 1;
        }
        while self.level > target {
            self.level -= 1;
            let layer = self.level as u8;
            self.events.push(AgentEvent::Leave(self.groups[self.level as usize]));
            self.gaps.retain(|g| g.layer != layer);
        }
        self.events.push(AgentEvent::LevelChanged { level: self.level });
    }

    /// Whether `p` belongs to a subscribed layer and was sent after that layer was joined
    /// (the tail of an earlier subscription still in flight must not seed gap tracking).
    fn tracked(&self, p: &Packet) -> bool {
        match p.group() {
            None => true,
            Some(g) => match self.groups[..self.level as usize].iter().position(|x| *x == g) {
                Some(m) => p.sent_at >= self.joined_at[m],
                None => false,
            },
        }
    }
}

impl Agent for LayeredSink {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        self.handle_timeout(now);
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        let r = &mut self.records;
        r.arr_time_ns.push(now.as_nanos());
        r.arr_flow.push(p.flow);
        r.arr_layer.push(p.layer);
        r.arr_seq.push(p.seq);
        r.arr_size.push(p.size_bytes);
        if !self.tracked(p) {
            return;
        }
        match self.gaps.iter_mut().find(|g| g.flow == p.flow && g.layer == p.layer) {
            None => self.gaps.push(GapState { flow: p.flow, layer: p.layer, next: p.seq + 1 }),
            Some(g) => {
                if p.seq > g.next {
                    let r = &mut self.records;
                    r.loss_time_ns.push(now.as_nanos());
                    r.loss_flow.push(p.flow);
                    r.loss_layer.push(p.layer);
                    r.loss_count.push((p.seq - g.next).min(u32::MAX as u64) as u32);
                }
                if p.seq >= g.next {
                    g.next = p.seq + 1;
                }
            }
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

    fn poll_event(&mut self) -> Option<AgentEvent> {
        if self.events.is_empty() {
            None
        } else {
            Some(self.events.remove(0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use castlab_core::{Addr, Dest, NodeId, Rng};

    fn start(s: &mut LayeredSink) -> Vec<AgentEvent> {
        s.handle_start(Instant::ZERO, StartInfo { addr: Addr::new(NodeId(0), 1), rng: Rng::seed_from_u64(0) });
        std::iter::from_fn(|| s.poll_event()).collect()
    }

    fn pkt(g: u32, layer: u8, seq: u64) -> Packet {
        let mut p = Packet::data(Dest::Group(GroupId(g)), 1000);
        p.layer = layer;
        p.seq = seq;
        p
    }

    #[test]
    fn joins_cumulatively_and_counts_gaps() {
        let mut s = LayeredSink::new(vec![GroupId(10), GroupId(11), GroupId(12)], vec![(Instant::ZERO, 2)]);
        let ev = start(&mut s);
        assert_eq!(
            ev,
            vec![AgentEvent::Join(GroupId(10)), AgentEvent::Join(GroupId(11)), AgentEvent::LevelChanged { level: 2 }]
        );
        let t = Instant::from_nanos(5);
        for seq in [3, 4, 7, 8, 9, 12] {
            s.handle_packet(t, &pkt(10, 0, seq));
        }
        s.handle_packet(t, &pkt(11, 1, 0));
        s.handle_packet(t, &pkt(11, 1, 1));
        assert_eq!(s.records.received(), 8);
        // gaps on layer 0: 5,6 and 10,11 -> 4 lost in two rows; first packet sets the base.
        assert_eq!(s.records.loss_count, vec![2, 2]);
        assert_eq!(s.records.lost(), 4);
    }

    #[test]
    fn leave_and_rejoin_does_not_count_unsubscribed_packets() {
        let t = |s: f64| Instant::from_secs_f64(s);
        let mut s = LayeredSink::new(vec![GroupId(0), GroupId(1)], vec![(t(0.0), 2), (t(1.0), 1), (t(2.0), 2)]);
        start(&mut s);
        s.handle_packet(t(0.5), &pkt(1, 1, 0));
        s.handle_timeout(t(1.0));
        let ev: Vec<_> = std::iter::from_fn(|| s.poll_event()).collect();
        assert_eq!(ev, vec![AgentEvent::Leave(GroupId(1)), AgentEvent::LevelChanged { level: 1 }]);
        s.handle_packet(t(1.1), &pkt(1, 1, 1)); // late packet before the prune: recorded, not checked
        s.handle_timeout(t(2.0));
        // the tail of the first subscription, sent at 1.5 s, arrives after the re-join
        let mut old = pkt(1, 1, 2);
        old.sent_at = t(1.5);
        s.handle_packet(t(2.2), &old);
        let mut p50 = pkt(1, 1, 50);
        p50.sent_at = t(2.1);
        let mut p51 = pkt(1, 1, 51);
        p51.sent_at = t(2.2);
        s.handle_packet(t(2.5), &p50);
        s.handle_packet(t(2.6), &p51);
        assert_eq!(s.records.lost(), 0);
        assert_eq!(s.records.received(), 5);
        // a real gap after the re-join is still a loss
        let mut p55 = pkt(1, 1, 55);
        p55.sent_at = t(2.3);
        s.handle_packet(t(2.7), &p55);
        assert_eq!(s.records.lost(), 3);
        assert_eq!(s.poll_timeout(), None);
    }
}
