//! Small router extensions that exercise the extension hook (used by tests, the Python API
//! and as examples for protocol authors).

use castlab_core::{ChannelId, ControlMsg, Header, Instant, NetView, Packet, RouterExtension, RouterSend, Verdict};

/// Drops every packet of one layer on one output interface, and counts what it dropped.
/// Optionally, every `report_every` it sends a control packet on `report_via` carrying
/// (dropped so far, queue length, averaged queue length × 1000) of that interface: this shows
/// an extension sending its own packets, setting timers and reading its queues.
#[derive(Debug)]
pub struct LayerDropper {
    pub channel: ChannelId,
    pub layer: u8,
    pub dropped: u64,
    pub seen_on_arrival: u64,
    report: Option<(ChannelId, castlab_core::Duration)>,
    next_report: Option<Instant>,
    pending: Option<Packet>,
    pub reports_sent: u64,
}

impl LayerDropper {
    pub fn new(channel: ChannelId, layer: u8) -> Self {
        LayerDropper {
            channel,
            layer,
            dropped: 0,
            seen_on_arrival: 0,
            report: None,
            next_report: None,
            pending: None,
            reports_sent: 0,
        }
    }

    pub fn with_reports(mut self, via: ChannelId, every: castlab_core::Duration) -> Self {
        self.report = Some((via, every));
        self
    }
}

/// Control kind of the dropper's report packets.
pub const REPORT_KIND: u16 = 0xD0;

impl RouterExtension for LayerDropper {
    fn handle_start(&mut self, now: Instant, _rng: castlab_core::Rng, _net: &dyn NetView) {
        if let Some((_, every)) = self.report {
            self.next_report = Some(now + every);
        }
    }

    fn on_arrival(
        &mut self,
        _now: Instant,
        _pkt: &mut Packet,
        _from: Option<ChannelId>,
        _net: &dyn NetView,
    ) -> Verdict {
        self.seen_on_arrival += 1;
        Verdict::Forward
    }

    fn on_forward(&mut self, _now: Instant, pkt: &mut Packet, out: ChannelId, _net: &dyn NetView) -> Verdict {
        if out == self.channel && pkt.layer == self.layer && matches!(pkt.header, Header::Data) {
            self.dropped += 1;
            Verdict::Drop
        } else {
            Verdict::Forward
        }
    }

    fn handle_timeout(&mut self, now: Instant, net: &dyn NetView) {
        let Some((via, every)) = self.report else { return };
        let peer = net.channel_peer(via);
        let mut p = Packet::data(castlab_core::Dest::Unicast(castlab_core::Addr::new(peer, 9)), 64);
        p.header = Header::Control(ControlMsg {
            kind: REPORT_KIND,
            args: [
                self.dropped,
                net.queue_len_pkts(self.channel) as u64,
                (net.queue_avg_pkts(self.channel) * 1000.0) as u64,
            ],
        });
        self.pending = Some(p);
        self.next_report = Some(now + every);
    }

    fn poll_transmit(&mut self) -> Option<RouterSend> {
        let p = self.pending.take()?;
        self.reports_sent += 1;
        Some(RouterSend::Via(self.report.expect("reports on").0, p))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.next_report
    }
}
