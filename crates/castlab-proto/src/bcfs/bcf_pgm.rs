//! PGM-like reliable multicast over BCFS (Yano & McCanne §II-B.3).
//!
//! Original data go to the whole group by ordinary multicast. A receiver that finds a gap
//! sends, for each missing sequence number, a NAK as a BCF request whose label is the sequence
//! number hashed into the low 16 bits under a session prefix in the upper 16. The source
//! answers with the lost packet as a BCF reply on the same label, which the BCF routers copy
//! down exactly the links that requested it: the repair reaches the NAKers and nobody else.
//! A NAK not answered within `nak_timeout` is sent again one level higher, so that it passes
//! breadcrumbs left by a lost NAK or repair (§II-A levels).

use std::collections::VecDeque;

use castlab_core::{Addr, Agent, AgentEvent, Dest, Duration, GroupId, Instant, Packet, StartInfo};

use crate::bcfs::BcfHost;

/// PGM-over-BCFS settings (§II-B.3 gives the scheme, no constants; ours are stated).
#[derive(Clone, Debug, PartialEq)]
pub struct BcfPgmConfig {
    /// Original data packets in the session.
    pub count: u32,
    /// Wire size of data and repairs, bytes (512 as in §IV).
    pub packet_bytes: u32,
    /// Wire size of a NAK, bytes. Paper silent: 40.
    pub nak_bytes: u32,
    /// The well-known upper 16 bits of every NAK label (§II-B.3, "perhaps selected as a hash
    /// of a session-specific identifier").
    pub label_prefix: u16,
    /// A NAK unanswered this long is repeated one level higher. Paper silent: 0.5 s.
    pub nak_timeout: Duration,
    /// With no original data for this long, a receiver NAKs everything still missing (losses
    /// at the end of the session). Paper silent: 0.5 s.
    pub idle_timeout: Duration,
}

impl Default for BcfPgmConfig {
    fn default() -> Self {
        BcfPgmConfig {
            count: 1000,
            packet_bytes: 512,
            nak_bytes: 40,
            label_prefix: 0x5047,
            nak_timeout: Duration::from_millis(500),
            idle_timeout: Duration::from_millis(500),
        }
    }
}

castlab_core::config_fields!(BcfPgmConfig { count, packet_bytes, nak_bytes, label_prefix, nak_timeout, idle_timeout });

impl BcfPgmConfig {
    /// Check every field; the error names the field.
    pub fn validate(&self) -> Result<(), castlab_core::ConfigError> {
        use castlab_core::config::check::{int_in, nonzero};
        int_in("count", self.count.into(), 1, 1 << 16)?; // one 16-bit label space (see `label`)
        int_in("packet_bytes", self.packet_bytes.into(), 1, 65_507)?;
        int_in("nak_bytes", self.nak_bytes.into(), 1, 65_507)?;
        nonzero("nak_timeout", self.nak_timeout)?;
        nonzero("idle_timeout", self.idle_timeout)?;
        Ok(())
    }

    /// The NAK label of sequence number `seq` (§II-B.3).
    pub fn label(&self, seq: u32) -> u32 {
        (self.label_prefix as u32) << 16 | (seq & 0xffff)
    }
}

/// The PGM source: original data at a constant rate to `group`; repairs as BCF replies.
#[derive(Debug)]
pub struct BcfPgmSource {
    pub cfg: BcfPgmConfig,
    pub host: BcfHost,
    group: GroupId,
    interval: Duration,
    next: Option<Instant>,
    seq: u32,
    pending: VecDeque<Packet>,
    pub data_sent: u64,
    pub naks_seen: u64,
    pub repairs_sent: u64,
    /// Address each repair to the sender of the NAK it answers (see
    /// [`BcfPgmSource::replying_to_requesters`]).
    reply_to_requester: bool,
    /// Told to stop ([`Agent::handle_shutdown`]): no more data or repairs.
    stopped: bool,
}

impl BcfPgmSource {
    pub fn new(cfg: BcfPgmConfig, group: GroupId, rate_bps: f64, flow: u32) -> Self {
        let mut host = BcfHost::new(flow, cfg.nak_bytes, cfg.packet_bytes);
        host.bind((cfg.label_prefix as u32) << 16, 0xffff_0000);
        let interval = Duration::from_secs_f64(cfg.packet_bytes as f64 * 8.0 / rate_bps);
        BcfPgmSource {
            cfg,
            host,
            group,
            interval,
            next: None,
            seq: 0,
            pending: VecDeque::with_capacity(8),
            data_sent: 0,
            naks_seen: 0,
            repairs_sent: 0,
            reply_to_requester: false,
            stopped: false,
        }
    }

    /// Address each repair to the sender of the NAK it answers rather than to the source
    /// itself. On the real network the source's host runs no BCF router: unicast routing then
    /// takes the repair to the first router, which copies it down the breadcrumbs whatever its
    /// address (as the real-network fountain source does).
    pub fn replying_to_requesters(mut self) -> Self {
        self.reply_to_requester = true;
        self
    }

    pub fn group(&self) -> GroupId {
        self.group
    }
}

impl Agent for BcfPgmSource {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        self.host.set_addr(info.addr);
        self.next = Some(now);
    }
    fn handle_packet(&mut self, _now: Instant, p: &Packet) {
        if self.stopped {
            return;
        }
        let Some(m) = self.host.receive(p) else { return };
        if !m.is_request() {
            return;
        }
        self.naks_seen += 1;
        let seq = m.msg as u32;
        if seq >= self.seq || m.label != self.cfg.label(seq) {
            return; // not sent yet, or a label that does not match its sequence number
        }
        let mut r = self.host.reply(m.label, m.level, seq as u64);
        r.seq = seq as u64;
        if self.reply_to_requester {
            r.dst = Dest::Unicast(m.from);
        }
        self.repairs_sent += 1;
        self.pending.push_back(r);
    }
    /// Told to stop: the source sends no more data and answers no more NAKs; repairs not yet
    /// sent are dropped. The PGM-like transport over BCFS has no message for the session's end.
    fn handle_shutdown(&mut self, _now: Instant) {
        self.stopped = true;
        self.next = None;
        self.pending.clear();
    }
    fn handle_timeout(&mut self, now: Instant) {
        if self.stopped || self.seq >= self.cfg.count {
            self.next = None;
            return;
        }
        let mut p = Packet::data(Dest::Group(self.group), self.cfg.packet_bytes);
        p.flow = self.host.flow;
        p.seq = self.seq as u64;
        self.seq += 1;
        self.data_sent += 1;
        self.pending.push_back(p);
        self.next = Some(now + self.interval);
    }
    fn poll_transmit(&mut self) -> Option<Packet> {
        self.pending.pop_front()
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }
}

/// What a PGM receiver records.
#[derive(Clone, Debug, Default)]
pub struct PgmRecords {
    pub data_received: u64,
    pub naks_sent: u64,
    pub repairs_received: u64,
    /// Repairs for a sequence number this receiver never NAKed (BCFS should make this 0).
    pub repairs_unrequested: u64,
    pub duplicates: u64,
    pub done_at: Option<Instant>,
}

/// A PGM receiver over BCFS.
#[derive(Debug)]
pub struct BcfPgmReceiver {
    pub cfg: BcfPgmConfig,
    pub host: BcfHost,
    source: Addr,
    group: GroupId,
    have: Vec<bool>,
    /// Level of the last NAK sent per sequence number (0: never NAKed).
    nak_level: Vec<u32>,
    got: u32,
    next_expected: u32,
    last_data: Option<Instant>,
    idle_fired: bool,
    retries: VecDeque<(Instant, u32)>,
    pending: VecDeque<Packet>,
    events: Option<AgentEvent>,
    /// Told to stop ([`Agent::handle_shutdown`]): no more NAKs, the group left.
    stopped: bool,
    pub rec: PgmRecords,
}

impl BcfPgmReceiver {
    pub fn new(cfg: BcfPgmConfig, source: Addr, group: GroupId, flow: u32) -> Self {
        let mut host = BcfHost::new(flow, cfg.nak_bytes, 0);
        host.bind((cfg.label_prefix as u32) << 16, 0xffff_0000);
        let n = cfg.count as usize;
        BcfPgmReceiver {
            host,
            source,
            group,
            have: vec![false; n],
            nak_level: vec![0; n],
            got: 0,
            next_expected: 0,
            last_data: None,
            idle_fired: false,
            retries: VecDeque::with_capacity(n.min(1024)),
            pending: VecDeque::with_capacity(16),
            events: None,
            stopped: false,
            rec: PgmRecords::default(),
            cfg,
        }
    }

    /// Whether sequence number `seq` was NAKed by this receiver.
    pub fn naked(&self, seq: u32) -> bool {
        self.nak_level.get(seq as usize).is_some_and(|l| *l > 0)
    }

    pub fn complete(&self) -> bool {
        self.got == self.cfg.count
    }

    fn nak(&mut self, now: Instant, seq: u32) {
        let level = self.nak_level[seq as usize] + 1;
        self.nak_level[seq as usize] = level;
        self.rec.naks_sent += 1;
        let label = self.cfg.label(seq);
        self.pending.push_back(self.host.request(self.source, label, level, Some(seq as u64)));
        self.retries.push_back((now + self.cfg.nak_timeout, seq));
    }

    fn take(&mut self, now: Instant, seq: u32) -> bool {
        let Some(h) = self.have.get_mut(seq as usize) else { return false };
        if *h {
            self.rec.duplicates += 1;
            return false;
        }
        *h = true;
        self.got += 1;
        if self.complete() && self.rec.done_at.is_none() {
            self.rec.done_at = Some(now);
            self.retries.clear();
        }
        true
    }
}

impl Agent for BcfPgmReceiver {
    fn handle_start(&mut self, _now: Instant, info: StartInfo) {
        self.host.set_addr(info.addr);
        self.events = Some(AgentEvent::Join(self.group));
    }

    /// Told to stop: the receiver NAKs no more (its retries and the end-of-session NAKs are
    /// dropped) and leaves its group; what it received stays in its records.
    fn handle_shutdown(&mut self, _now: Instant) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        self.retries.clear();
        self.pending.clear();
        self.idle_fired = true;
        self.events = Some(AgentEvent::Leave(self.group));
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        if self.stopped {
            return;
        }
        if p.dst == Dest::Group(self.group) {
            // original data (ODATA)
            let s = p.seq as u32;
            if s >= self.cfg.count {
                return;
            }
            self.rec.data_received += 1;
            self.last_data = Some(now);
            self.take(now, s);
            if s >= self.next_expected {
                for miss in self.next_expected..s {
                    if !self.have[miss as usize] {
                        self.nak(now, miss);
                    }
                }
                self.next_expected = s + 1;
            }
            return;
        }
        let Some(m) = self.host.receive(p) else { return };
        if !m.is_reply() || m.from != self.source {
            return;
        }
        let s = m.msg as u32;
        if s >= self.cfg.count {
            return;
        }
        self.rec.repairs_received += 1;
        if !self.naked(s) {
            self.rec.repairs_unrequested += 1;
        }
        self.take(now, s);
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.stopped {
            return;
        }
        while let Some(&(t, seq)) = self.retries.front() {
            if t > now {
                break;
            }
            self.retries.pop_front();
            if !self.have[seq as usize] {
                self.nak(now, seq);
            }
        }
        if let Some(last) = self.last_data {
            if !self.idle_fired && !self.complete() && now >= last + self.cfg.idle_timeout {
                // the end of the session: NAK the tail nobody has announced as missing
                self.idle_fired = true;
                for miss in self.next_expected..self.cfg.count {
                    if !self.have[miss as usize] {
                        self.nak(now, miss);
                    }
                }
                self.next_expected = self.cfg.count;
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        self.pending.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.complete() {
            return None;
        }
        let retry = self.retries.front().map(|r| r.0);
        let idle = match (self.last_data, self.idle_fired) {
            (Some(t), false) => Some(t + self.cfg.idle_timeout),
            _ => None,
        };
        match (retry, idle) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        self.events.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Driver;
    use castlab_core::NodeId;

    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }
    const G: GroupId = GroupId(3);
    const SRC: Addr = Addr::new(NodeId(0), 7);

    fn odata(seq: u64) -> Packet {
        let mut p = Packet::data(Dest::Group(G), 1000);
        p.src = SRC;
        p.seq = seq;
        p
    }

    #[test]
    fn told_to_stop_a_receiver_naks_no_more_and_leaves_its_group() {
        let r = BcfPgmReceiver::new(BcfPgmConfig::default(), SRC, G, 0);
        let mut d = Driver::start(r, Instant::ZERO, Addr::new(NodeId(2), 1), 1);
        assert_eq!(d.events, vec![(Instant::ZERO, AgentEvent::Join(G))]);
        d.packet(ms(10), &odata(0));
        d.packet(ms(20), &odata(3)); // 1 and 2 missing: NAKed, retries armed
        let naks = d.sent.len();
        assert!(naks >= 2 && d.agent.poll_timeout().is_some());
        d.shutdown(ms(21));
        assert_eq!(d.events.last(), Some(&(ms(21), AgentEvent::Leave(G))));
        assert_eq!(d.agent.poll_timeout(), None);
        d.packet(ms(30), &odata(6));
        d.advance_to(ms(60_000));
        assert_eq!(d.sent.len(), naks, "no NAK after the stop");
        assert_eq!(d.agent.rec.data_received, 2);
    }

    #[test]
    fn told_to_stop_the_source_sends_nothing_more() {
        let s = BcfPgmSource::new(BcfPgmConfig::default(), G, 80_000.0, 0);
        let mut d = Driver::start(s, Instant::ZERO, SRC, 1);
        d.advance_to(ms(1000)); // a 512-byte packet every 51 ms
        let sent = d.sent.len();
        assert!(sent >= 10 && d.agent.poll_timeout().is_some());
        d.shutdown(ms(1001));
        assert_eq!(d.agent.poll_timeout(), None);
        d.advance_to(ms(60_000));
        assert_eq!(d.sent.len(), sent);
        assert_eq!(d.agent.data_sent as usize, sent);
    }
}
