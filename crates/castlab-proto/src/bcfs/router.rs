//! The BCF router: the breadcrumb table as a router extension (§II-B).

use castlab_core::{
    Addr, BcfHeader, ChannelId, Dest, Header, Instant, NetView, Packet, Rng, RouterExtension, RouterSend, Verdict,
};

use super::*;

/// The BCF router: a [`BcfTable`] as a router extension (§II-B).
#[derive(Debug)]
pub struct BcfRouter {
    pub table: BcfTable,
    node: castlab_core::NodeId,
    out: Vec<BcfLink>,
    pending: std::collections::VecDeque<RouterSend>,
    /// Reply copies sent down each output channel, indexed by channel id.
    pub replies_per_channel: Vec<u64>,
    /// Reply copies handed to local agents.
    pub local_deliveries: u64,
}

impl BcfRouter {
    pub fn new(cfg: BcfConfig) -> Self {
        BcfRouter {
            table: BcfTable::new(cfg),
            node: castlab_core::NodeId(0),
            out: Vec::with_capacity(16),
            pending: std::collections::VecDeque::with_capacity(16),
            replies_per_channel: Vec::new(),
            local_deliveries: 0,
        }
    }

    /// Reply copies this router sent down channel `ch`.
    pub fn replies_on(&self, ch: ChannelId) -> u64 {
        self.replies_per_channel.get(ch.index()).copied().unwrap_or(0)
    }
}

impl RouterExtension for BcfRouter {
    fn handle_start(&mut self, _now: Instant, _rng: Rng, net: &dyn NetView) {
        self.node = net.node();
        let n = net.out_channels().iter().map(|c| c.index() + 1).max().unwrap_or(0);
        self.replies_per_channel = vec![0; n];
    }

    fn on_arrival(&mut self, now: Instant, pkt: &mut Packet, from: Option<ChannelId>, net: &dyn NetView) -> Verdict {
        let Header::Bcf(h) = pkt.header else { return Verdict::Forward };
        match h.kind {
            BcfHeader::REQUEST => {
                let Dest::Unicast(source) = pkt.dst else { return Verdict::Forward };
                let link = match from {
                    Some(ch) => match net.reverse_channel(ch) {
                        Some(back) => BcfLink::Channel(back),
                        None => return Verdict::Forward,
                    },
                    None => BcfLink::Local(pkt.src.port),
                };
                match self.table.on_request(now, source, h.label, h.level, link) {
                    RequestAction::Forward => Verdict::Forward,
                    RequestAction::Suppress => Verdict::Consume,
                    RequestAction::Refresh { level } => {
                        // §II-B: a specially marked null message for the label, toward the source
                        pkt.header = Header::Bcf(BcfHeader {
                            kind: BcfHeader::REQUEST,
                            flags: BcfHeader::NULL | BcfHeader::REFRESH,
                            level,
                            label: h.label,
                            msg: 0,
                        });
                        Verdict::Forward
                    }
                }
            }
            BcfHeader::REPLY => {
                let source = pkt.src;
                let mut out = std::mem::take(&mut self.out);
                self.table.on_reply(now, source, h.label, h.level, &mut out);
                for &link in &out {
                    let copy = *pkt;
                    match link {
                        BcfLink::Channel(ch) => {
                            if let Some(c) = self.replies_per_channel.get_mut(ch.index()) {
                                *c += 1;
                            }
                            self.pending.push_back(RouterSend::Via(ch, copy));
                        }
                        BcfLink::Local(port) => {
                            let mut copy = copy;
                            copy.dst = Dest::Unicast(Addr::new(self.node, port));
                            self.local_deliveries += 1;
                            self.pending.push_back(RouterSend::Route(copy));
                        }
                    }
                }
                self.out = out;
                Verdict::Consume
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<RouterSend> {
        self.pending.pop_front()
    }
}
