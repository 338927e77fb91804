//! EXPRESS channels over BCFS (§II-B): a best-effort source and its subscribers.

use castlab_core::{Addr, Agent, Duration, Instant, Packet, StartInfo};

use super::*;

/// An EXPRESS channel source over BCFS (§II-B): data go out best effort as level-0 replies on
/// label `label`, which tear nothing down, to every receiver whose breadcrumbs are alive.
#[derive(Debug)]
pub struct ExpressSource {
    pub host: BcfHost,
    pub label: u32,
    pub interval: Duration,
    pub stop: Instant,
    next: Option<Instant>,
    seq: u64,
    pending: Option<Packet>,
    pub sent: u64,
    pub subscriptions_seen: u64,
    pub refreshes_seen: u64,
}

impl ExpressSource {
    pub fn new(label: u32, packet_bytes: u32, interval: Duration, stop: Instant) -> Self {
        let mut host = BcfHost::new(label, 40, packet_bytes);
        host.bind(label, u32::MAX);
        ExpressSource {
            host,
            label,
            interval,
            stop,
            next: None,
            seq: 0,
            pending: None,
            sent: 0,
            subscriptions_seen: 0,
            refreshes_seen: 0,
        }
    }
}

impl Agent for ExpressSource {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        self.host.set_addr(info.addr);
        self.next = Some(now);
    }
    fn handle_packet(&mut self, _now: Instant, p: &Packet) {
        if let Some(m) = self.host.receive(p) {
            if m.is_request() {
                self.subscriptions_seen += 1;
                self.refreshes_seen += m.is_refresh() as u64;
            }
        }
    }
    fn handle_timeout(&mut self, now: Instant) {
        if now >= self.stop {
            self.next = None;
            return;
        }
        let mut p = self.host.reply(self.label, 0, self.seq);
        p.seq = self.seq;
        self.seq += 1;
        self.sent += 1;
        self.pending = Some(p);
        self.next = Some(now + self.interval);
    }
    fn poll_transmit(&mut self) -> Option<Packet> {
        self.pending.take()
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }
}

/// An EXPRESS channel subscriber: a level-1 null request on (S, L) every `refresh` until
/// `stop`; it counts the channel's packets it receives and when.
#[derive(Debug)]
pub struct ExpressReceiver {
    pub host: BcfHost,
    pub source: Addr,
    pub label: u32,
    pub refresh: Duration,
    pub stop: Instant,
    next: Option<Instant>,
    pending: Option<Packet>,
    pub received: u64,
    pub last_rx: Option<Instant>,
}

impl ExpressReceiver {
    pub fn new(source: Addr, label: u32, refresh: Duration, stop: Instant) -> Self {
        let mut host = BcfHost::new(label, 40, 0);
        host.bind(label, u32::MAX);
        ExpressReceiver { host, source, label, refresh, stop, next: None, pending: None, received: 0, last_rx: None }
    }
}

impl Agent for ExpressReceiver {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        self.host.set_addr(info.addr);
        self.next = Some(now);
    }
    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        if let Some(m) = self.host.receive(p) {
            if m.is_reply() && m.from == self.source {
                self.received += 1;
                self.last_rx = Some(now);
            }
        }
    }
    fn handle_timeout(&mut self, now: Instant) {
        if now >= self.stop {
            self.next = None;
            return;
        }
        self.pending = Some(self.host.request(self.source, self.label, 1, None));
        self.next = Some(now + self.refresh);
    }
    fn poll_transmit(&mut self) -> Option<Packet> {
        self.pending.take()
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }
}
