//! The NLM router extension: a layered-multicast-capable router (LMR, Nakauchi et al. §3)
//! wrapping the sans-IO [`Lmr`], and optionally a [`LossMeter`] on
//! one output channel that counts, per flow and layer, the data packets offered to its queue
//! after the filters and those its DropTail queue dropped (§4.1's loss). The meter also runs
//! alone (no LMR), to measure another protocol the same way on the same set-up.
//!
//! Wiring (§3.2-§3.5):
//! * on arrival: SESS updates PrevID / UpID / L_max; DROP_REQ / ADD_REQ addressed to this LMR
//!   (`Addr(node, LMR_PORT)`) are consumed and processed at the interface leading back to
//!   where they came from (Figures 5-6);
//! * at each output interface: NLM data above L_cur(I_j, S) is filtered; SESS is registered and
//!   rewritten (Figure 7); every packet that will be queued updates the interface's averaged
//!   queue length and may trigger DROP or ADD (§3.3);
//! * requests the LMR generates or forwards are routed by unicast to the session's PrevID.

use castlab_core::ConfigError;

use super::{Lmr, LossMeter, NlmConfig, LMR_PORT};
use castlab_core::{
    ChannelId, Dest, Duration, Header, Instant, NetView, NlmHeader, Packet, Rng, RouterExtension, RouterSend, Verdict,
};

/// An LMR and/or a loss meter on one router node.
#[derive(Debug)]
pub struct NlmRouter {
    cfg: Option<NlmConfig>,
    lmr: Option<Lmr>,
    /// Interface index of each channel id (u32::MAX: not this node's).
    oif_of: Vec<u32>,
    meter: Option<(ChannelId, LossMeter)>,
}

impl NlmRouter {
    /// An LMR with this configuration (checked here; the LMR itself is built at start, when
    /// the node's interfaces are known).
    pub fn lmr(cfg: NlmConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(NlmRouter { cfg: Some(cfg), lmr: None, oif_of: Vec::new(), meter: None })
    }

    /// No LMR: only the loss meter (a plain DropTail router, as for a protocol without router support).
    pub fn meter_only(channel: ChannelId, bin: Duration, layers: usize) -> Self {
        NlmRouter { cfg: None, lmr: None, oif_of: Vec::new(), meter: Some((channel, LossMeter::new(bin, layers))) }
    }

    /// Also meter `channel` (one of this node's output channels).
    pub fn with_meter(mut self, channel: ChannelId, bin: Duration, layers: usize) -> Self {
        self.meter = Some((channel, LossMeter::new(bin, layers)));
        self
    }

    pub fn core(&self) -> Option<&Lmr> {
        self.lmr.as_ref()
    }
    pub fn meter(&self) -> Option<(ChannelId, &LossMeter)> {
        self.meter.as_ref().map(|(c, m)| (*c, m))
    }

    fn oif(&self, ch: ChannelId) -> Option<usize> {
        match self.oif_of.get(ch.index()) {
            Some(&i) if i != u32::MAX => Some(i as usize),
            _ => None,
        }
    }
}

impl RouterExtension for NlmRouter {
    fn handle_start(&mut self, _now: Instant, _rng: Rng, net: &dyn NetView) {
        let chans = net.out_channels().to_vec();
        let top = chans.iter().map(|c| c.index() + 1).max().unwrap_or(0);
        self.oif_of = vec![u32::MAX; top];
        for (i, c) in chans.iter().enumerate() {
            self.oif_of[c.index()] = i as u32;
        }
        if let Some(cfg) = self.cfg.take() {
            let addr = castlab_core::Addr::new(net.node(), LMR_PORT);
            self.lmr = Some(Lmr::try_new(cfg, addr, &chans).expect("validated at construction"));
        }
    }

    fn on_arrival(&mut self, now: Instant, pkt: &mut Packet, from: Option<ChannelId>, net: &dyn NetView) -> Verdict {
        let Some(lmr) = self.lmr.as_mut() else { return Verdict::Forward };
        let Header::Nlm(mut h) = pkt.header else { return Verdict::Forward };
        match h.kind {
            NlmHeader::SESS => {
                lmr.handle_sess_arrival(now, &mut h);
                pkt.header = Header::Nlm(h);
                Verdict::Forward
            }
            NlmHeader::DROP_REQ | NlmHeader::ADD_REQ if pkt.dst == Dest::Unicast(lmr.addr()) => {
                // received at the interface that leads back to the sender of the request
                let oif = from
                    .and_then(|c| net.reverse_channel(c))
                    .and_then(|c| self.oif_of.get(c.index()).copied().filter(|&i| i != u32::MAX).map(|i| i as usize));
                if let Some(j) = oif {
                    lmr.handle_request(now, j, &h);
                }
                Verdict::Consume
            }
            _ => Verdict::Forward,
        }
    }

    fn on_forward(&mut self, now: Instant, pkt: &mut Packet, out: ChannelId, net: &dyn NetView) -> Verdict {
        let oif = self.oif(out);
        if let (Some(lmr), Some(j)) = (self.lmr.as_mut(), oif) {
            if let Header::Nlm(mut h) = pkt.header {
                match h.kind {
                    NlmHeader::DATA if !lmr.filter_data(j, castlab_core::GroupId(h.group), pkt.layer) => {
                        return Verdict::Drop;
                    }
                    NlmHeader::SESS => {
                        lmr.handle_sess_forward(now, j, &mut h);
                        pkt.header = Header::Nlm(h);
                    }
                    _ => {}
                }
            }
        }
        let qcur = net.queue_len_pkts(out);
        if let (Some(lmr), Some(j)) = (self.lmr.as_mut(), oif) {
            lmr.handle_enqueue(now, j, qcur);
        }
        if let Some((ch, meter)) = self.meter.as_mut() {
            let is_data =
                matches!(pkt.header, Header::Data) || matches!(pkt.header, Header::Nlm(h) if h.kind == NlmHeader::DATA);
            if *ch == out && is_data {
                // DropTail drops an arrival that finds the buffer full (queue.rs)
                meter.record(now, pkt.flow, pkt.layer, qcur >= net.queue_limit_pkts(out));
            }
        }
        Verdict::Forward
    }

    fn handle_timeout(&mut self, now: Instant, _net: &dyn NetView) {
        if let Some(l) = self.lmr.as_mut() {
            if l.poll_timeout().is_some_and(|t| t <= now) {
                l.handle_timeout(now);
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<RouterSend> {
        let l = self.lmr.as_mut()?;
        let (to, h) = l.poll_transmit()?;
        Some(RouterSend::Route(l.request_packet(to, h)))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.lmr.as_ref().and_then(|l| l.poll_timeout())
    }
}
