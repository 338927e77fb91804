//! NLM, network-supported layered multicast: Nakauchi, Morikawa and Aoyama,
//! *Network-supported Rate Control Mechanism for Multicast Streaming Media*, §3.
//!
//! Three sans-IO pieces:
//! * [`NlmSender`]: all layers of a session on one group with the layer in each packet (§3.1);
//!   it handles DROP_REQ / ADD_REQ at its own interface as an LMR does (§3.4, "a sender
//!   processes signaling packets in the same way as a LMR") and multicasts SESS every
//!   `ss_intvl` (§3.5).
//! * [`NlmReceiver`]: measures the loss rate over all layers of its session and sends DROP_REQ
//!   upstream when it exceeds `loss_th`, for congestion between LMRs that no LMR sees (§3.4).
//! * [`Lmr`]: the layered-multicast-capable router's logic (§3.2-§3.6): the session state table
//!   (Figure 1), the averaged queue length per interface, DROP and ADD (Figure 4 and §3.3),
//!   filtering, signalling generation with repetition (§3.4), the processing of DROP_REQ and
//!   ADD_REQ (Figures 5 and 6) and of SESS (Figure 7), and the adaptive `add_intvl` (§3.6). A
//!   router extension ([`NlmRouter`], in `router.rs`) wraps it; [`LossMeter`] counts, per flow and
//!   layer, the packets that passed the filters and those a DropTail queue then dropped, which
//!   is how §4.1 counts NLM's loss.
//!
//! # Conventions where the paper is silent or inconsistent (our choices)
//!
//! * **Layers.** `L` is 1-based as in the paper: Layer(S, L) is carried with
//!   `Packet::layer = L - 1`. `L_cur(I_j, S) = 0` means "S is not registered at I_j".
//! * **What the sender announces in SESS.** The paper says the sender sends SESS(S, L) with
//!   `L = L_cur` of its interface, and also that an LMR ADDs only while `L_cur + 1 ≤ L_max`,
//!   `L_max` being the L of the last SESS. Taken together, the first DROP_REQ to reach the
//!   sender would fix `L_max` at every LMR below the top layer for ever, and the repeated ADDs
//!   of Figure 9 (add_intvl growing to its maximum) could not happen. We read `L_max` as the
//!   paper motivates it ("to know the available bandwidth at upstream links"): the sender
//!   announces the number of layers it can send (all encoded layers), and each LMR lowers it
//!   to its own `L_cur` by Figure 7. The sender's own `L_cur` filters what it transmits.
//! * **SESS phase.** A sender's first SESS goes out at a random instant within its first
//!   `ss_intvl` (from the agent's own random stream), so that senders started together do not
//!   burst their SESS into the same queue at the same instants.
//! * **Initial state.** The sender starts transmitting `initial_layers` (1) layers; an LMR
//!   registers a session at an interface with `L_cur = 1` (the base layer) and counts the
//!   registration as that interface's last ADD (`add_time = now`), so the first ADD comes
//!   `add_intvl` later (this matches Figure 9's timing: join at 20 s, DROP_REQ at 41 s).
//! * **Ties.** DROP takes, among the sessions with the largest `L_cur`, the one registered
//!   first at this LMR; ADD likewise among the smallest.
//! * **The base layer** is never dropped: a DROP_REQ with L ≤ 1 is discarded.
//! * **Repetition.** A generated request is sent at once and again every `ss_intvl` while less
//!   than `detect_period` has passed (50 copies with Table 2). A newer request of the same LMR
//!   for the same session replaces the one being repeated. Forwarded requests are not repeated
//!   by the forwarder: the originator's repetitions are forwarded in turn.
//! * **Telling a repetition from a new request.** Figures 5-6 assume a repeated copy finds
//!   L_cur already changed and so changes nothing ("this is the first one received"). That
//!   fails once L_cur has moved since: a downstream LMR still repeating ADD_REQ(S, 5) would undo
//!   the DROP of layer 5 that congestion just forced here, and NLM would lose packets as a
//!   drop-tail router does. Requests therefore carry (originator, number); a copy already seen
//!   changes no state but is still forwarded by Figures 5-6's rule (it may be the copy that
//!   reaches upstream).
//! * **§3.6's verdict on an ADD** is given once per ADD: a failure as soon as congestion is
//!   detected at the interface (average above `qmax`) or DROP_REQ(S, L_cur) arrives there
//!   within `detect_period`; otherwise, at `detect_period` after the ADD, a failure if no SESS
//!   of S with `L ≥ L_cur` arrived since the ADD, else a success. ADDs caused by an ADD_REQ
//!   (Figure 6) set `add_time` but get no verdict: they are not "conducted by the LMR".
//! * **Receiver loss measurement.** Loss is measured from per-layer sequence gaps over
//!   consecutive windows of `loss_interval` (1 s) with at least `loss_min_packets` (10) packets;
//!   a layer silent for more than `layer_timeout` (1 s) restarts its gap tracking (it was
//!   filtered, not lost), and so does a layer that a SESS announced as not transmitted (its
//!   number above the SESS's L, which the LMRs above rewrite to what they pass, §3.5) since its
//!   last packet: an LMR may filter a layer for less than `layer_timeout` (a DROP, then an ADD
//!   0.8 s later in Figure 10's set-up), and that gap is filtering, not the congestion loss
//!   §3.4's receivers measure. The receiver requests DROP_REQ(S, L) for the highest layer L it
//!   received in the window.

use core::any::Any;
use std::collections::VecDeque;

use castlab_core::{
    Addr, Agent, AgentEvent, ChannelId, ConfigError, Dest, Duration, GroupId, Header, Instant, NlmHeader, Packet,
    StartInfo,
};

use crate::cbr::{CbrSource, CbrStream};

mod router;
pub use router::NlmRouter;

/// The port an LMR answers on at its router node (signalling is unicast to `Addr(node, LMR_PORT)`).
pub const LMR_PORT: u16 = 65_001;

/// Table 2's parameters, and the values the paper leaves open (marked "our choice").
#[derive(Clone, Debug, PartialEq)]
pub struct NlmConfig {
    /// qmax: congestion is detected when the averaged queue exceeds it (§3.2; Table 2: 15 packets).
    pub qmax: f64,
    /// qmin: congestion is solved when the averaged queue is below it (§3.2; Table 2: 3 packets).
    pub qmin: f64,
    /// qweight: weight of the queue average updated at each enqueue (§3.3; Table 2: 0.05).
    pub qweight: f64,
    /// add_intvl_min (§3.6; Table 2: 5 s); also the initial add_intvl of every interface (our choice).
    pub add_intvl_min: Duration,
    /// add_intvl_max (§3.6; Table 2: 80 s).
    pub add_intvl_max: Duration,
    /// drop_intvl: no DROP at an interface for this long after the last (§3.3; Table 2: 0.5 s).
    pub drop_intvl: Duration,
    /// detect_period: how long signalling is repeated, SESS rewriting waits after an ADD, and
    /// an ADD is watched for congestion (§3.4-§3.6; Table 2: 5 s).
    pub detect_period: Duration,
    /// α, add_intvl increase factor after an ADD that caused congestion (§3.6; Table 2: 2.0).
    pub alpha: f64,
    /// β, add_intvl decrease factor otherwise (§3.6; Table 2: 0.75).
    pub beta: f64,
    /// loss_th: receivers send DROP_REQ when their loss rate exceeds it (§3.4; Table 2: 0.25).
    pub loss_th: f64,
    /// ss_intvl: SESS period and signalling repetition period (§3.4-§3.5; Table 2: 0.1 s).
    pub ss_intvl: Duration,
    /// Receiver loss-measurement window (our choice: 1 s; the paper gives none).
    pub loss_interval: Duration,
    /// Fewest packets (received + lost) a window needs before its loss rate is judged (our choice: 10).
    pub loss_min_packets: u32,
    /// A layer silent this long restarts gap tracking: it was filtered (our choice: 1 s).
    pub layer_timeout: Duration,
    /// Size of SESS / DROP_REQ / ADD_REQ packets on the wire (our choice: 40 bytes).
    pub control_size_bytes: u32,
    /// Layers the sender transmits before any ADD_REQ (our choice: 1, the base layer).
    pub initial_layers: u8,
    /// Figure 7 waits detect_period after "the last ADD" at the interface (`add_time^j`, one
    /// per interface in Table 1) before rewriting SESS: during that wait SESS of *every*
    /// session passes unchanged. With this flag the wait follows the last ADD of the same
    /// session only (an ablation; default false, the paper's per-interface variable).
    pub sess_wait_per_session: bool,
}

impl Default for NlmConfig {
    fn default() -> Self {
        NlmConfig {
            qmax: 15.0,
            qmin: 3.0,
            qweight: 0.05,
            add_intvl_min: Duration::from_secs(5),
            add_intvl_max: Duration::from_secs(80),
            drop_intvl: Duration::from_millis(500),
            detect_period: Duration::from_secs(5),
            alpha: 2.0,
            beta: 0.75,
            loss_th: 0.25,
            ss_intvl: Duration::from_millis(100),
            loss_interval: Duration::from_secs(1),
            loss_min_packets: 10,
            layer_timeout: Duration::from_secs(1),
            control_size_bytes: 40,
            initial_layers: 1,
            sess_wait_per_session: false,
        }
    }
}

castlab_core::config_fields!(NlmConfig {
    qmax,
    qmin,
    qweight,
    add_intvl_min,
    add_intvl_max,
    drop_intvl,
    detect_period,
    alpha,
    beta,
    loss_th,
    ss_intvl,
    loss_interval,
    loss_min_packets,
    layer_timeout,
    control_size_bytes,
    initial_layers,
    sess_wait_per_session,
});

impl NlmConfig {
    /// Check every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |field: &str, value: f64, reason: &str| Err(ConfigError::new(field, value, reason));
        if !(self.qmin.is_finite() && self.qmin >= 0.0) {
            return bad("qmin", self.qmin, "must be finite and >= 0");
        }
        if !(self.qmax.is_finite() && self.qmax > self.qmin) {
            return bad("qmax", self.qmax, "must be finite and > qmin");
        }
        if !(self.qweight > 0.0 && self.qweight <= 1.0) {
            return bad("qweight", self.qweight, "must be in (0, 1]");
        }
        if self.add_intvl_min.is_zero() {
            return bad("add_intvl_min", 0.0, "must be > 0");
        }
        if self.add_intvl_max < self.add_intvl_min {
            return bad("add_intvl_max", self.add_intvl_max.as_secs_f64(), "must be >= add_intvl_min");
        }
        if !(self.alpha.is_finite() && self.alpha > 1.0) {
            return bad("alpha", self.alpha, "must be > 1");
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return bad("beta", self.beta, "must be in (0, 1)");
        }
        if !(self.loss_th > 0.0 && self.loss_th < 1.0) {
            return bad("loss_th", self.loss_th, "must be in (0, 1)");
        }
        if self.ss_intvl.is_zero() {
            return bad("ss_intvl", 0.0, "must be > 0");
        }
        if self.loss_interval.is_zero() {
            return bad("loss_interval", 0.0, "must be > 0");
        }
        if self.control_size_bytes == 0 {
            return bad("control_size_bytes", 0.0, "must be > 0");
        }
        if self.initial_layers == 0 {
            return bad("initial_layers", 0.0, "must be >= 1");
        }
        Ok(())
    }
}

fn control_packet(cfg: &NlmConfig, dst: Dest, h: NlmHeader) -> Packet {
    let mut p = Packet::data(dst, cfg.control_size_bytes);
    p.header = Header::Nlm(h);
    p
}

// ===================================================================================== sender

/// Columnar records of a sender.
#[derive(Clone, Debug, Default)]
pub struct SenderRecords {
    /// Every change of the sender's L_cur: when, the new value, and why (cause codes as
    /// [`LmrRecords::lcur_cause`]: 2 DROP_REQ, 3 ADD_REQ).
    pub level_time_ns: Vec<u64>,
    pub level: Vec<u8>,
    pub level_cause: Vec<u8>,
    /// Requests received: when, kind (`NlmHeader::DROP_REQ` / `ADD_REQ`), L.
    pub req_time_ns: Vec<u64>,
    pub req_kind: Vec<u8>,
    pub req_level: Vec<u8>,
    pub sess_sent: u64,
    /// Data packets sent, and those withheld because their layer was above L_cur.
    pub data_sent: u64,
    pub data_withheld: u64,
}

/// The NLM sender of one session (§3.1, §3.4, §3.5).
#[derive(Debug)]
pub struct NlmSender {
    cfg: NlmConfig,
    group: GroupId,
    layers: u8,
    l_cur: u8,
    cbr: CbrSource,
    addr: Addr,
    next_sess: Instant,
    stop: Instant,
    sess_due: bool,
    events: Vec<AgentEvent>,
    rates_bps: Vec<f64>,
    seen: Seen,
    pub records: SenderRecords,
}

impl NlmSender {
    /// Layer m (0-based) at `rates_bps[m]`, all on `group`; CBR with RLM §4's jitter if asked.
    #[allow(clippy::too_many_arguments)]
    pub fn try_new(
        cfg: NlmConfig,
        group: GroupId,
        rates_bps: &[f64],
        packet_size: u32,
        flow: u32,
        start: Instant,
        stop: Instant,
        jitter: bool,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if rates_bps.is_empty() || rates_bps.len() > 255 {
            return Err(ConfigError::new("rates_bps", rates_bps.len() as f64, "needs 1 to 255 layers"));
        }
        if let Some(r) = rates_bps.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
            return Err(ConfigError::new("rates_bps", *r, "every rate must be positive"));
        }
        let streams =
            rates_bps.iter().enumerate().map(|(m, r)| CbrStream::new(Dest::Group(group), *r, m as u8)).collect();
        let layers = rates_bps.len() as u8;
        Ok(NlmSender {
            l_cur: cfg.initial_layers.min(layers),
            cfg,
            group,
            layers,
            cbr: CbrSource::try_new(streams, packet_size, flow, start, stop, jitter)?,
            addr: Addr::default(),
            next_sess: Instant::MAX,
            stop,
            sess_due: false,
            events: Vec::with_capacity(4),
            rates_bps: rates_bps.to_vec(),
            seen: Seen::default(),
            records: SenderRecords::default(),
        })
    }

    /// The number of layers the sender currently transmits (its L_cur).
    pub fn level(&self) -> u8 {
        self.l_cur
    }
    pub fn layers(&self) -> u8 {
        self.layers
    }
    pub fn config(&self) -> &NlmConfig {
        &self.cfg
    }

    fn set_level(&mut self, now: Instant, l: u8, cause: u8) {
        self.l_cur = l;
        self.records.level_time_ns.push(now.as_nanos());
        self.records.level.push(l);
        self.records.level_cause.push(cause);
        let rate: f64 = self.rates_bps[..l as usize].iter().sum();
        self.events.push(AgentEvent::RateChanged { rate_bps: rate });
    }
}

impl Agent for NlmSender {
    fn handle_start(&mut self, now: Instant, mut info: StartInfo) {
        self.addr = info.addr;
        // the first SESS at a random phase within ss_intvl (our choice): senders started
        // together would otherwise send their SESS in synchronised bursts
        let phase = self.cfg.ss_intvl.mul_f64(info.rng.uniform());
        self.cbr.handle_start(now, info);
        self.next_sess = now + phase;
        let l = self.l_cur;
        self.set_level(now, l, 5);
    }

    /// DROP_REQ / ADD_REQ at the sender's only interface: Figures 5 and 6 with no other
    /// interface and no upstream (nothing is forwarded).
    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        let Header::Nlm(h) = p.header else { return };
        if h.group != self.group.0 || !(h.kind == NlmHeader::DROP_REQ || h.kind == NlmHeader::ADD_REQ) {
            return;
        }
        self.records.req_time_ns.push(now.as_nanos());
        self.records.req_kind.push(h.kind as u8);
        self.records.req_level.push(h.level);
        if !self.seen.first_copy(&h) {
            return; // a repetition of a request already acted on
        }
        if h.kind == NlmHeader::DROP_REQ {
            // Figure 5: L ≤ L_cur → L_cur = L - 1 (never below the base layer)
            if h.level >= 2 && h.level <= self.l_cur {
                self.set_level(now, h.level - 1, 2);
            }
        } else if h.level > self.l_cur {
            // Figure 6: L > L_cur → L_cur = L
            self.set_level(now, h.level.min(self.layers), 3);
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if matches!(self.cbr.poll_timeout(), Some(t) if t <= now) {
            self.cbr.handle_timeout(now);
        }
        if self.next_sess <= now {
            self.sess_due = true;
            self.next_sess = now + self.cfg.ss_intvl;
            if self.next_sess >= self.stop {
                self.next_sess = Instant::MAX;
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        if self.sess_due {
            self.sess_due = false;
            self.records.sess_sent += 1;
            // §3.5: SESS(S, L) every ss_intvl; L = the layers the source can send (see the
            // module documentation), UpID = the sender itself.
            let h = NlmHeader { kind: NlmHeader::SESS, level: self.layers, group: self.group.0, up: self.addr, seq: 0 };
            return Some(control_packet(&self.cfg, Dest::Group(self.group), h));
        }
        loop {
            let mut p = self.cbr.poll_transmit()?;
            if p.layer >= self.l_cur {
                self.records.data_withheld += 1;
                continue;
            }
            self.records.data_sent += 1;
            p.header = Header::Nlm(NlmHeader {
                kind: NlmHeader::DATA,
                level: p.layer + 1,
                group: self.group.0,
                up: self.addr,
                seq: 0,
            });
            return Some(p);
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let c = self.cbr.poll_timeout().unwrap_or(Instant::MAX);
        let t = c.min(self.next_sess);
        (t != Instant::MAX).then_some(t)
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        if self.events.is_empty() {
            None
        } else {
            Some(self.events.remove(0))
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// =================================================================================== receiver

/// Columnar records of a receiver.
#[derive(Clone, Debug, Default)]
pub struct ReceiverRecords {
    /// Width of the counting bins.
    pub bin: Duration,
    /// Per bin and layer (flat, `bin * layers + layer`): data packets received, and lost
    /// (from sequence gaps).
    pub bin_received: Vec<u32>,
    pub bin_lost: Vec<u32>,
    /// Measurement windows whose loss exceeded loss_th: end time, loss rate.
    pub over_time_ns: Vec<u64>,
    pub over_loss: Vec<f64>,
    /// DROP_REQs generated (first copy): when, L, to whom (node).
    pub req_time_ns: Vec<u64>,
    pub req_level: Vec<u8>,
    pub req_to: Vec<u32>,
    /// Copies of requests sent, repetitions included.
    pub req_copies: u64,
    pub received: u64,
    pub lost: u64,
    pub sess_received: u64,
}

#[derive(Clone, Copy, Debug)]
struct Repeat {
    h: NlmHeader,
    to: Addr,
    next: Instant,
    until: Instant,
}

/// An NLM receiver (§3.1, §3.4): joins its session's group, counts losses over all layers and
/// sends DROP_REQ to the upstream LMR (UpID of the last SESS) when the loss rate exceeds loss_th.
#[derive(Debug)]
pub struct NlmReceiver {
    cfg: NlmConfig,
    group: GroupId,
    layers: usize,
    upstream: Option<Addr>,
    next_seq: Vec<u64>,
    last_seen: Vec<Option<Instant>>,
    /// Per layer: a SESS announced it filtered since its last packet (restart its gap tracking).
    announced_filtered: Vec<bool>,
    win_end: Instant,
    win_received: u32,
    win_lost: u32,
    win_top: u8,
    repeat: Option<Repeat>,
    addr: Addr,
    next_req: u32,
    joined: bool,
    events: Vec<AgentEvent>,
    out: Option<Packet>,
    pub records: ReceiverRecords,
}

impl NlmReceiver {
    /// A receiver of the session on `group` with `layers` layers, counting in bins of `bin`.
    pub fn try_new(cfg: NlmConfig, group: GroupId, layers: usize, bin: Duration) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if layers == 0 || layers > 255 {
            return Err(ConfigError::new("layers", layers as f64, "needs 1 to 255 layers"));
        }
        if bin.is_zero() {
            return Err(ConfigError::new("bin", 0.0, "must be > 0"));
        }
        Ok(NlmReceiver {
            cfg,
            group,
            layers,
            upstream: None,
            next_seq: vec![0; layers],
            last_seen: vec![None; layers],
            announced_filtered: vec![false; layers],
            win_end: Instant::MAX,
            win_received: 0,
            win_lost: 0,
            win_top: 0,
            repeat: None,
            addr: Addr::default(),
            next_req: 0,
            joined: false,
            events: Vec::with_capacity(4),
            out: None,
            records: ReceiverRecords { bin, ..Default::default() },
        })
    }

    pub fn layers(&self) -> usize {
        self.layers
    }

    /// The upstream LMR (or sender) learnt from SESS.
    pub fn upstream(&self) -> Option<Addr> {
        self.upstream
    }

    fn bin_index(&mut self, now: Instant) -> usize {
        let b = (now.as_nanos() / self.records.bin.as_nanos()) as usize;
        let need = (b + 1) * self.layers;
        if self.records.bin_received.len() < need {
            self.records.bin_received.resize(need, 0);
            self.records.bin_lost.resize(need, 0);
        }
        b
    }

    fn on_data(&mut self, now: Instant, p: &Packet) {
        let m = p.layer as usize;
        if m >= self.layers {
            return;
        }
        let b = self.bin_index(now) * self.layers + m;
        self.records.received += 1;
        self.records.bin_received[b] += 1;
        let fresh = match self.last_seen[m] {
            None => true,
            Some(t) => now.saturating_since(t) > self.cfg.layer_timeout || self.announced_filtered[m],
        };
        self.announced_filtered[m] = false;
        let mut lost = 0;
        if fresh {
            self.next_seq[m] = p.seq + 1;
        } else if p.seq >= self.next_seq[m] {
            lost = (p.seq - self.next_seq[m]) as u32;
            self.next_seq[m] = p.seq + 1;
        }
        self.last_seen[m] = Some(now);
        if lost > 0 {
            self.records.lost += lost as u64;
            self.records.bin_lost[b] += lost;
        }
        // §3.4: loss rate over all layers of the session, judged once per window
        if now >= self.win_end {
            self.judge_window(now);
        }
        if self.win_end == Instant::MAX {
            self.win_end = now + self.cfg.loss_interval;
        }
        self.win_received += 1;
        self.win_lost += lost;
        self.win_top = self.win_top.max(p.layer + 1);
    }

    fn judge_window(&mut self, now: Instant) {
        let n = self.win_received + self.win_lost;
        if n >= self.cfg.loss_min_packets {
            let rate = self.win_lost as f64 / n as f64;
            if rate > self.cfg.loss_th {
                self.records.over_time_ns.push(now.as_nanos());
                self.records.over_loss.push(rate);
                if let (Some(up), true) = (self.upstream, self.win_top >= 2) {
                    self.next_req = self.next_req.wrapping_add(1);
                    let h = NlmHeader {
                        kind: NlmHeader::DROP_REQ,
                        level: self.win_top,
                        group: self.group.0,
                        up: self.addr,
                        seq: self.next_req,
                    };
                    self.records.req_time_ns.push(now.as_nanos());
                    self.records.req_level.push(self.win_top);
                    self.records.req_to.push(up.node.0);
                    self.repeat = Some(Repeat { h, to: up, next: now, until: now + self.cfg.detect_period });
                    self.send_repeat(now);
                }
            }
        }
        self.win_end = now + self.cfg.loss_interval;
        self.win_received = 0;
        self.win_lost = 0;
        self.win_top = 0;
    }

    fn send_repeat(&mut self, now: Instant) {
        let Some(r) = self.repeat.as_mut() else { return };
        if r.next > now {
            return;
        }
        self.out = Some(control_packet(&self.cfg, Dest::Unicast(r.to), r.h));
        self.records.req_copies += 1;
        r.next = now + self.cfg.ss_intvl;
        if r.next >= r.until {
            self.repeat = None;
        }
    }
}

impl Agent for NlmReceiver {
    fn handle_start(&mut self, _now: Instant, info: StartInfo) {
        self.addr = info.addr;
        self.joined = true;
        self.events.push(AgentEvent::Join(self.group));
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        let Header::Nlm(h) = p.header else { return };
        if h.group != self.group.0 {
            return;
        }
        match h.kind {
            NlmHeader::DATA => self.on_data(now, p),
            NlmHeader::SESS => {
                self.records.sess_received += 1;
                self.upstream = Some(h.up);
                // layers above L are not transmitted to us: their next gap is filtering
                for m in (h.level as usize).min(self.layers)..self.layers {
                    self.announced_filtered[m] = true;
                }
            }
            _ => {}
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.send_repeat(now);
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        self.out.take()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.repeat.map(|r| r.next)
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        self.events.pop()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The last few (originator, request number) pairs acted on: repetitions of a request are
/// recognised and change nothing (fixed size: no allocation per request).
#[derive(Clone, Copy, Debug)]
struct Seen {
    keys: [(Addr, u32); 8],
    next: usize,
}

impl Default for Seen {
    fn default() -> Self {
        Seen { keys: [(Addr::new(castlab_core::NodeId(u32::MAX), u16::MAX), u32::MAX); 8], next: 0 }
    }
}

impl Seen {
    /// Whether `h` is the first copy of its request seen here (and remember it).
    fn first_copy(&mut self, h: &NlmHeader) -> bool {
        let k = (h.up, h.seq);
        if self.keys.contains(&k) {
            return false;
        }
        self.keys[self.next] = k;
        self.next = (self.next + 1) % self.keys.len();
        true
    }
}

// ======================================================================================== LMR

/// Causes of an L_cur change in [`LmrRecords::lcur_cause`].
pub mod cause {
    /// DROP at the interface (congestion, §3.3).
    pub const DROP: u8 = 0;
    /// ADD at the interface (congestion solved, §3.3).
    pub const ADD: u8 = 1;
    /// A DROP_REQ received at the interface (Figure 5).
    pub const DROP_REQ: u8 = 2;
    /// An ADD_REQ received at the interface (Figure 6).
    pub const ADD_REQ: u8 = 3;
    /// SESS from upstream announced fewer layers (Figure 7).
    pub const SESS: u8 = 4;
    /// The session was registered at the interface (Figure 7), or the sender started.
    pub const REGISTER: u8 = 5;
}

/// What happened to a request, in [`LmrRecords::req_event`].
pub mod req_event {
    /// Generated by this LMR after a DROP or ADD (first copy).
    pub const GENERATED: u8 = 0;
    /// A repetition of a generated request.
    pub const REPEATED: u8 = 1;
    /// Received and forwarded upstream.
    pub const FORWARDED: u8 = 2;
    /// Received and discarded.
    pub const DISCARDED: u8 = 3;
}

/// Verdicts on an ADD (§3.6), in [`LmrRecords::intvl_reason`].
pub mod verdict {
    pub const SUCCESS: u8 = 0;
    /// Congestion detected at the interface within detect_period.
    pub const CONGESTION: u8 = 1;
    /// DROP_REQ(S, L_cur) received at the interface within detect_period.
    pub const DROP_REQ: u8 = 2;
    /// No SESS(S, L_cur) by detect_period after the ADD.
    pub const NO_SESS: u8 = 3;
}

/// Columnar records of an LMR: every L_cur change, every request sent or received, every
/// DROP / ADD decision and every add_intvl update.
#[derive(Clone, Debug, Default)]
pub struct LmrRecords {
    pub lcur_time_ns: Vec<u64>,
    /// Output channel (its id) of the interface.
    pub lcur_oif: Vec<u32>,
    pub lcur_group: Vec<u32>,
    pub lcur_old: Vec<u8>,
    pub lcur_new: Vec<u8>,
    /// See [`cause`].
    pub lcur_cause: Vec<u8>,
    pub req_time_ns: Vec<u64>,
    /// See [`req_event`].
    pub req_event: Vec<u8>,
    pub req_kind: Vec<u8>,
    pub req_group: Vec<u32>,
    pub req_level: Vec<u8>,
    /// Interface the request was received at or generated for (channel id).
    pub req_oif: Vec<u32>,
    pub dec_time_ns: Vec<u64>,
    pub dec_oif: Vec<u32>,
    pub dec_group: Vec<u32>,
    /// `NlmHeader::DROP_REQ` for a DROP, `NlmHeader::ADD_REQ` for an ADD.
    pub dec_kind: Vec<u8>,
    /// The target layer (L_dt or L_at).
    pub dec_level: Vec<u8>,
    /// The averaged queue length that triggered it.
    pub dec_qlen: Vec<f64>,
    pub intvl_time_ns: Vec<u64>,
    pub intvl_oif: Vec<u32>,
    /// add_intvl after the update, seconds.
    pub intvl_s: Vec<f64>,
    /// See [`verdict`].
    pub intvl_reason: Vec<u8>,
    pub sess_processed: u64,
}

#[derive(Clone, Copy, Debug)]
struct AddWindow {
    slot: usize,
    level: u8,
    start: Instant,
}

#[derive(Clone, Debug)]
struct Iface {
    ch: ChannelId,
    qlen: f64,
    add_intvl: Duration,
    add_time: Option<Instant>,
    drop_time: Option<Instant>,
    window: Option<AddWindow>,
    /// Data packets filtered here.
    filtered: u64,
}

#[derive(Clone, Debug)]
struct Session {
    group: GroupId,
    prev: Option<Addr>,
    l_max: u8,
    /// The L of the last SESS that arrived, and when.
    last_sess_level: u8,
    last_sess_at: Option<Instant>,
    repeat: Option<Repeat>,
    seen: Seen,
}

/// The LMR's logic, sans-IO. Interfaces are indices into the channel list given at creation.
///
/// Driving: feed SESS with [`Lmr::handle_sess_arrival`] once when it arrives and
/// [`Lmr::handle_sess_forward`] for each interface it is forwarded on; DROP_REQ / ADD_REQ
/// addressed to this LMR with [`Lmr::handle_request`] (the interface is the one it came in
/// on); ask [`Lmr::filter_data`] for each data packet at each interface; call
/// [`Lmr::handle_enqueue`] for every packet that will be queued at an interface (with the
/// queue length it finds); then drain [`Lmr::poll_transmit`] (unicast requests) and re-read
/// [`Lmr::poll_timeout`].
#[derive(Debug)]
pub struct Lmr {
    cfg: NlmConfig,
    addr: Addr,
    ifs: Vec<Iface>,
    sessions: Vec<Session>,
    slot_of_group: Vec<u32>,
    /// L_cur(I_j, S_i), `[j][i]`; 0 = not registered.
    l_cur: Vec<Vec<u8>>,
    /// The last ADD (own, by ADD_REQ, or registration) of S_i at I_j, `[j][i]`.
    add_time_s: Vec<Vec<Option<Instant>>>,
    out: VecDeque<(Addr, NlmHeader)>,
    deadline: Option<Instant>,
    next_req: u32,
    pub records: LmrRecords,
}

const NO_SLOT: u32 = u32::MAX;

impl Lmr {
    pub fn try_new(cfg: NlmConfig, addr: Addr, oifs: &[ChannelId]) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let ifs = oifs
            .iter()
            .map(|&ch| Iface {
                ch,
                qlen: 0.0,
                add_intvl: cfg.add_intvl_min,
                add_time: None,
                drop_time: None,
                window: None,
                filtered: 0,
            })
            .collect();
        Ok(Lmr {
            cfg,
            addr,
            ifs,
            sessions: Vec::new(),
            slot_of_group: Vec::new(),
            l_cur: vec![Vec::new(); oifs.len()],
            add_time_s: vec![Vec::new(); oifs.len()],
            out: VecDeque::with_capacity(64),
            deadline: None,
            next_req: 0,
            records: LmrRecords::default(),
        })
    }

    pub fn config(&self) -> &NlmConfig {
        &self.cfg
    }
    pub fn addr(&self) -> Addr {
        self.addr
    }
    pub fn interfaces(&self) -> usize {
        self.ifs.len()
    }
    pub fn channel(&self, oif: usize) -> ChannelId {
        self.ifs[oif].ch
    }
    /// The interface index of an output channel.
    pub fn oif_of(&self, ch: ChannelId) -> Option<usize> {
        self.ifs.iter().position(|i| i.ch == ch)
    }
    fn slot(&self, g: GroupId) -> Option<usize> {
        match self.slot_of_group.get(g.index()) {
            Some(&s) if s != NO_SLOT => Some(s as usize),
            _ => None,
        }
    }
    /// L_cur(I_j, S) (0: not registered).
    pub fn l_cur(&self, oif: usize, g: GroupId) -> u8 {
        self.slot(g).map_or(0, |s| self.l_cur[oif][s])
    }
    /// L_max(S) (0: unknown session).
    pub fn l_max(&self, g: GroupId) -> u8 {
        self.slot(g).map_or(0, |s| self.sessions[s].l_max)
    }
    /// PrevID of a session.
    pub fn prev(&self, g: GroupId) -> Option<Addr> {
        self.slot(g).and_then(|s| self.sessions[s].prev)
    }
    pub fn add_intvl(&self, oif: usize) -> Duration {
        self.ifs[oif].add_intvl
    }
    pub fn qlen(&self, oif: usize) -> f64 {
        self.ifs[oif].qlen
    }
    pub fn filtered(&self, oif: usize) -> u64 {
        self.ifs[oif].filtered
    }
    pub fn sessions(&self) -> impl Iterator<Item = GroupId> + '_ {
        self.sessions.iter().map(|s| s.group)
    }

    /// The session slot of `g`, created on first sight (grows only on a new session).
    fn slot_or_insert(&mut self, g: GroupId) -> usize {
        if let Some(s) = self.slot(g) {
            return s;
        }
        if self.slot_of_group.len() <= g.index() {
            self.slot_of_group.resize(g.index() + 1, NO_SLOT);
        }
        let s = self.sessions.len();
        self.slot_of_group[g.index()] = s as u32;
        self.sessions.push(Session {
            group: g,
            prev: None,
            l_max: 0,
            last_sess_level: 0,
            last_sess_at: None,
            repeat: None,
            seen: Seen::default(),
        });
        for row in &mut self.l_cur {
            row.push(0);
        }
        for row in &mut self.add_time_s {
            row.push(None);
        }
        s
    }

    fn set_lcur(&mut self, now: Instant, oif: usize, slot: usize, new: u8, why: u8) {
        let old = self.l_cur[oif][slot];
        if old == new {
            return;
        }
        self.l_cur[oif][slot] = new;
        let r = &mut self.records;
        r.lcur_time_ns.push(now.as_nanos());
        r.lcur_oif.push(self.ifs[oif].ch.0);
        r.lcur_group.push(self.sessions[slot].group.0);
        r.lcur_old.push(old);
        r.lcur_new.push(new);
        r.lcur_cause.push(why);
    }

    fn record_req(&mut self, now: Instant, ev: u8, h: &NlmHeader, oif: Option<usize>) {
        let r = &mut self.records;
        r.req_time_ns.push(now.as_nanos());
        r.req_event.push(ev);
        r.req_kind.push(h.kind as u8);
        r.req_group.push(h.group);
        r.req_level.push(h.level);
        r.req_oif.push(oif.map_or(u32::MAX, |o| self.ifs[o].ch.0));
    }

    /// max_{k≠j} L_cur(I_k, S)
    fn max_other(&self, oif: usize, slot: usize) -> u8 {
        (0..self.ifs.len()).filter(|&k| k != oif).map(|k| self.l_cur[k][slot]).max().unwrap_or(0)
    }

    fn set_intvl(&mut self, now: Instant, oif: usize, failed: u8) {
        let f = &mut self.ifs[oif];
        let cur = f.add_intvl.as_secs_f64();
        // §3.6: ×α (up to add_intvl_max) after an ADD that caused congestion, ×β (down to
        // add_intvl_min) otherwise
        let next = if failed != verdict::SUCCESS {
            (cur * self.cfg.alpha).min(self.cfg.add_intvl_max.as_secs_f64())
        } else {
            (cur * self.cfg.beta).max(self.cfg.add_intvl_min.as_secs_f64())
        };
        f.add_intvl = Duration::from_secs_f64(next);
        f.window = None;
        let r = &mut self.records;
        r.intvl_time_ns.push(now.as_nanos());
        r.intvl_oif.push(f.ch.0);
        r.intvl_s.push(next);
        r.intvl_reason.push(failed);
    }

    /// Generate a request for `slot` and repeat it every ss_intvl for detect_period (§3.4).
    fn generate(&mut self, now: Instant, oif: usize, slot: usize, kind: castlab_core::NlmKind, level: u8) {
        self.next_req = self.next_req.wrapping_add(1);
        let h = NlmHeader { kind, level, group: self.sessions[slot].group.0, up: self.addr, seq: self.next_req };
        self.record_req(now, req_event::GENERATED, &h, Some(oif));
        let Some(to) = self.sessions[slot].prev else { return };
        self.out.push_back((to, h));
        let next = now + self.cfg.ss_intvl;
        let until = now + self.cfg.detect_period;
        self.sessions[slot].repeat = (next < until).then_some(Repeat { h, to, next, until });
        self.refresh_deadline();
    }

    fn refresh_deadline(&mut self) {
        let a = self.sessions.iter().filter_map(|s| s.repeat.map(|r| r.next)).min();
        let b = self.ifs.iter().filter_map(|f| f.window.map(|w| w.start + self.cfg.detect_period)).min();
        self.deadline = match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
    }

    // ------------------------------------------------------------------ SESS (Figure 7)

    /// A SESS arrived at this router: PrevID ← UpID if they differ, UpID ← this LMR, and
    /// L_max(S) ← L (Figure 7, the part common to every interface).
    pub fn handle_sess_arrival(&mut self, now: Instant, h: &mut NlmHeader) {
        let slot = self.slot_or_insert(GroupId(h.group));
        let s = &mut self.sessions[slot];
        if s.prev != Some(h.up) {
            s.prev = Some(h.up);
        }
        h.up = self.addr;
        s.l_max = h.level;
        s.last_sess_level = h.level;
        s.last_sess_at = Some(now);
        self.records.sess_processed += 1;
    }

    /// The SESS is being transmitted from interface `oif`: register S there, then, once
    /// detect_period has passed since the last ADD at the interface, lower L to L_cur or
    /// L_cur to L (Figure 7).
    pub fn handle_sess_forward(&mut self, now: Instant, oif: usize, h: &mut NlmHeader) {
        let slot = self.slot_or_insert(GroupId(h.group));
        if self.l_cur[oif][slot] == 0 {
            // registration: base layer only, counted as this interface's last ADD (our choice)
            self.set_lcur(now, oif, slot, 1, cause::REGISTER);
            self.ifs[oif].add_time = Some(now);
            self.add_time_s[oif][slot] = Some(now);
        }
        let last_add = if self.cfg.sess_wait_per_session { self.add_time_s[oif][slot] } else { self.ifs[oif].add_time };
        let settled = last_add.is_none_or(|t| now.saturating_since(t) >= self.cfg.detect_period);
        if settled {
            let lc = self.l_cur[oif][slot];
            if h.level > lc {
                h.level = lc;
            } else if h.level < lc {
                let l = h.level.max(1);
                self.set_lcur(now, oif, slot, l, cause::SESS);
            }
        }
    }

    // ---------------------------------------------------- DROP_REQ / ADD_REQ (Figures 5-6)

    /// A DROP_REQ or ADD_REQ addressed to this LMR arrived at interface `oif`.
    pub fn handle_request(&mut self, now: Instant, oif: usize, h: &NlmHeader) {
        let Some(slot) = self.slot(GroupId(h.group)) else {
            self.record_req(now, req_event::DISCARDED, h, Some(oif));
            return;
        };
        if h.kind != NlmHeader::DROP_REQ && h.kind != NlmHeader::ADD_REQ {
            return;
        }
        let lc = self.l_cur[oif][slot];
        let l = h.level;
        if h.kind == NlmHeader::DROP_REQ && l <= 1 {
            self.record_req(now, req_event::DISCARDED, h, Some(oif));
            return;
        }
        // a repetition of a request already acted on changes nothing here, but is forwarded
        // like the first copy (it may be the one that reaches upstream)
        let first = self.sessions[slot].seen.first_copy(h);
        if first && h.kind == NlmHeader::DROP_REQ {
            // §3.6, second way: DROP_REQ(S, L_cur(I_j, S)) within detect_period of an ADD
            if let Some(w) = self.ifs[oif].window {
                if w.slot == slot && l == lc && now.saturating_since(w.start) < self.cfg.detect_period {
                    self.set_intvl(now, oif, verdict::DROP_REQ);
                    self.refresh_deadline();
                }
            }
            // Figure 5
            if l <= lc {
                self.set_lcur(now, oif, slot, l - 1, cause::DROP_REQ);
                self.ifs[oif].drop_time = Some(now);
            }
        } else if first && l > lc {
            // Figure 6
            self.set_lcur(now, oif, slot, l, cause::ADD_REQ);
            self.ifs[oif].add_time = Some(now);
            self.add_time_s[oif][slot] = Some(now);
        }
        match self.sessions[slot].prev {
            Some(prev) if l > self.max_other(oif, slot) => {
                self.record_req(now, req_event::FORWARDED, h, Some(oif));
                self.out.push_back((prev, *h));
            }
            _ => self.record_req(now, req_event::DISCARDED, h, Some(oif)),
        }
    }

    // ------------------------------------------------------------------- filtering (§3.2)

    /// Whether Layer(S, layer + 1) passes interface `oif`: its number is at most L_cur(I_j, S).
    /// An unknown session passes its base layer only.
    pub fn filter_data(&mut self, oif: usize, group: GroupId, layer: u8) -> bool {
        let lc = match self.slot(group) {
            Some(s) => self.l_cur[oif][s].max(1),
            None => 1,
        };
        let pass = layer < lc;
        if !pass {
            self.ifs[oif].filtered += 1;
        }
        pass
    }

    // ---------------------------------------------------------- DROP / ADD (§3.3, Figure 4)

    /// A packet is being queued at `oif`, finding `qcur` packets waiting: update the average
    /// (§3.3) and DROP or ADD when congestion occurs or is solved.
    pub fn handle_enqueue(&mut self, now: Instant, oif: usize, qcur: usize) {
        let w = self.cfg.qweight;
        let f = &mut self.ifs[oif];
        f.qlen = w * qcur as f64 + (1.0 - w) * f.qlen;
        let q = f.qlen;
        if q > self.cfg.qmax {
            // §3.6, first way: congestion at I_j within detect_period of our ADD
            if let Some(win) = f.window {
                if now.saturating_since(win.start) < self.cfg.detect_period {
                    self.set_intvl(now, oif, verdict::CONGESTION);
                    self.refresh_deadline();
                }
            }
            let f = &self.ifs[oif];
            if f.drop_time.is_none_or(|t| now.saturating_since(t) >= self.cfg.drop_intvl) {
                self.drop(now, oif);
            }
        } else if q < self.cfg.qmin {
            // the verdict on the last ADD comes first: it may change add_intvl
            self.close_window(now, oif);
            let f = &self.ifs[oif];
            if f.add_time.is_none_or(|t| now.saturating_since(t) >= f.add_intvl) {
                self.add(now, oif);
            }
        }
    }

    /// DROP at `oif`: the session with the largest L_cur, if that is at least 2 (Figure 4).
    fn drop(&mut self, now: Instant, oif: usize) {
        let row = &self.l_cur[oif];
        let mut best: Option<usize> = None;
        for (i, &l) in row.iter().enumerate() {
            if l >= 2 && best.is_none_or(|b| l > row[b]) {
                best = Some(i);
            }
        }
        let Some(slot) = best else { return };
        let l_dt = row[slot];
        self.set_lcur(now, oif, slot, l_dt - 1, cause::DROP);
        self.ifs[oif].drop_time = Some(now);
        self.record_decision(now, oif, slot, NlmHeader::DROP_REQ, l_dt);
        // §3.4: DROP_REQ(S, L_dt) if L_dt > max_{k≠j} L_cur(I_k, S)
        if l_dt > self.max_other(oif, slot) {
            self.generate(now, oif, slot, NlmHeader::DROP_REQ, l_dt);
        }
    }

    /// ADD at `oif`: the session with the smallest L_cur among those with L_cur + 1 ≤ L_max.
    fn add(&mut self, now: Instant, oif: usize) {
        let row = &self.l_cur[oif];
        let mut best: Option<usize> = None;
        for (i, &l) in row.iter().enumerate() {
            if l >= 1 && l < self.sessions[i].l_max && best.is_none_or(|b| l < row[b]) {
                best = Some(i);
            }
        }
        let Some(slot) = best else { return };
        let l_at = row[slot] + 1;
        self.set_lcur(now, oif, slot, l_at, cause::ADD);
        self.ifs[oif].add_time = Some(now);
        self.add_time_s[oif][slot] = Some(now);
        self.ifs[oif].window = Some(AddWindow { slot, level: l_at, start: now });
        self.record_decision(now, oif, slot, NlmHeader::ADD_REQ, l_at);
        if l_at > self.max_other(oif, slot) {
            self.generate(now, oif, slot, NlmHeader::ADD_REQ, l_at);
        } else {
            self.refresh_deadline();
        }
    }

    fn record_decision(&mut self, now: Instant, oif: usize, slot: usize, kind: castlab_core::NlmKind, level: u8) {
        let r = &mut self.records;
        r.dec_time_ns.push(now.as_nanos());
        r.dec_oif.push(self.ifs[oif].ch.0);
        r.dec_group.push(self.sessions[slot].group.0);
        r.dec_kind.push(kind as u8);
        r.dec_level.push(level);
        r.dec_qlen.push(self.ifs[oif].qlen);
    }

    /// §3.6, third way: detect_period after the ADD, a SESS of S with L ≥ L_at must have
    /// arrived since; the verdict is a success otherwise.
    fn close_window(&mut self, now: Instant, oif: usize) {
        let Some(w) = self.ifs[oif].window else { return };
        if now.saturating_since(w.start) < self.cfg.detect_period {
            return;
        }
        let s = &self.sessions[w.slot];
        let seen = s.last_sess_at.is_some_and(|t| t >= w.start) && s.last_sess_level >= w.level;
        self.set_intvl(now, oif, if seen { verdict::SUCCESS } else { verdict::NO_SESS });
        self.refresh_deadline();
    }

    // ---------------------------------------------------------------------- timers, output

    pub fn handle_timeout(&mut self, now: Instant) {
        for i in 0..self.sessions.len() {
            let Some(mut r) = self.sessions[i].repeat else { continue };
            if r.next > now {
                continue;
            }
            self.out.push_back((r.to, r.h));
            let h = r.h;
            self.record_req(now, req_event::REPEATED, &h, None);
            r.next = now + self.cfg.ss_intvl;
            self.sessions[i].repeat = (r.next < r.until).then_some(r);
        }
        for j in 0..self.ifs.len() {
            self.close_window(now, j);
        }
        self.refresh_deadline();
    }

    /// The next request to send: (destination, header).
    pub fn poll_transmit(&mut self) -> Option<(Addr, NlmHeader)> {
        self.out.pop_front()
    }

    /// A request as a packet, ready to route.
    pub fn request_packet(&self, to: Addr, h: NlmHeader) -> Packet {
        let mut p = control_packet(&self.cfg, Dest::Unicast(to), h);
        p.src = self.addr;
        p
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadline
    }
}

// ================================================================================== LossMeter

/// Per flow and layer, per time bin: data packets that passed an interface's filters and were
/// offered to its queue, and those the DropTail queue dropped (§4.1: "only the packets dropped
/// by drop-tail in spite of passing the filter").
#[derive(Clone, Debug)]
pub struct LossMeter {
    bin: Duration,
    layers: usize,
    slot_of_flow: Vec<u32>,
    pub flows: Vec<u32>,
    /// Per flow slot: flat `[bin * layers + layer]`.
    pub passed: Vec<Vec<u32>>,
    pub dropped: Vec<Vec<u32>>,
}

impl LossMeter {
    /// Layers at or above `layers` are counted in the last one.
    pub fn new(bin: Duration, layers: usize) -> Self {
        LossMeter {
            bin,
            layers: layers.max(1),
            slot_of_flow: Vec::new(),
            flows: Vec::new(),
            passed: Vec::new(),
            dropped: Vec::new(),
        }
    }
    pub fn bin(&self) -> Duration {
        self.bin
    }
    pub fn layers(&self) -> usize {
        self.layers
    }

    pub fn record(&mut self, now: Instant, flow: u32, layer: u8, dropped: bool) {
        let f = flow as usize;
        if f >= 1 << 20 {
            return; // flow ids this large are not sessions of ours
        }
        if self.slot_of_flow.len() <= f {
            self.slot_of_flow.resize(f + 1, NO_SLOT);
        }
        if self.slot_of_flow[f] == NO_SLOT {
            self.slot_of_flow[f] = self.flows.len() as u32;
            self.flows.push(flow);
            self.passed.push(Vec::new());
            self.dropped.push(Vec::new());
        }
        let s = self.slot_of_flow[f] as usize;
        let b = (now.as_nanos() / self.bin.as_nanos()) as usize;
        let need = (b + 1) * self.layers;
        if self.passed[s].len() < need {
            let n = need.max(self.passed[s].len() * 2).max(64 * self.layers);
            self.passed[s].resize(n, 0);
            self.dropped[s].resize(n, 0);
        }
        let i = b * self.layers + (layer as usize).min(self.layers - 1);
        self.passed[s][i] += 1;
        if dropped {
            self.dropped[s][i] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use castlab_core::{NodeId, Rng};

    const G1: GroupId = GroupId(1);
    const G2: GroupId = GroupId(2);
    const G3: GroupId = GroupId(3);

    fn t(s: f64) -> Instant {
        Instant::from_secs_f64(s)
    }

    /// An LMR with `oifs` interfaces; qweight 1 so that the average is the queue length given
    /// (the averaging itself is tested on its own).
    fn lmr(oifs: u32) -> Lmr {
        let chans: Vec<ChannelId> = (0..oifs).map(ChannelId).collect();
        let cfg = NlmConfig { qweight: 1.0, ..NlmConfig::default() };
        Lmr::try_new(cfg, Addr::new(NodeId(50), LMR_PORT), &chans).unwrap()
    }

    fn sess(g: GroupId, level: u8, up: u32) -> NlmHeader {
        NlmHeader { kind: NlmHeader::SESS, level, group: g.0, up: Addr::new(NodeId(up), LMR_PORT), seq: 0 }
    }

    /// Deliver a SESS to `l` at `now` and forward it on every interface in `oifs`.
    fn feed_sess(l: &mut Lmr, now: Instant, g: GroupId, level: u8, oifs: &[usize]) -> Vec<NlmHeader> {
        let mut h = sess(g, level, 1);
        l.handle_sess_arrival(now, &mut h);
        oifs.iter()
            .map(|&o| {
                let mut c = h;
                l.handle_sess_forward(now, o, &mut c);
                c
            })
            .collect()
    }

    /// A new request (each call gets its own number).
    fn req(kind: castlab_core::NlmKind, g: GroupId, level: u8) -> NlmHeader {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        let seq = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        NlmHeader { kind, level, group: g.0, up: Addr::new(NodeId(99), LMR_PORT), seq }
    }

    fn drain(l: &mut Lmr) -> Vec<(Addr, NlmHeader)> {
        std::iter::from_fn(|| l.poll_transmit()).collect()
    }

    /// An enqueue that finds the queue above qmax (or below qmin).
    fn congest(l: &mut Lmr, now: Instant, oif: usize) {
        l.handle_enqueue(now, oif, 20);
    }
    fn relieve(l: &mut Lmr, now: Instant, oif: usize) {
        l.handle_enqueue(now, oif, 0);
    }

    #[test]
    fn defaults_are_table_2() {
        let c = NlmConfig::default();
        assert_eq!((c.qmax, c.qmin, c.qweight), (15.0, 3.0, 0.05));
        assert_eq!((c.add_intvl_min.as_secs_f64(), c.add_intvl_max.as_secs_f64()), (5.0, 80.0));
        assert_eq!((c.drop_intvl.as_secs_f64(), c.detect_period.as_secs_f64()), (0.5, 5.0));
        assert_eq!((c.alpha, c.beta, c.loss_th, c.ss_intvl.as_secs_f64()), (2.0, 0.75, 0.25, 0.1));
        c.validate().unwrap();
        let bad = NlmConfig { qmax: 2.0, ..NlmConfig::default() };
        assert_eq!(bad.validate().unwrap_err().field, "qmax");
        let bad = NlmConfig { beta: 1.0, ..NlmConfig::default() };
        assert_eq!(bad.validate().unwrap_err().field, "beta");
    }

    #[test]
    fn queue_average_uses_qweight_at_each_enqueue() {
        let mut l = Lmr::try_new(NlmConfig::default(), Addr::default(), &[ChannelId(0)]).unwrap();
        l.handle_enqueue(t(1.0), 0, 10);
        assert!((l.qlen(0) - 0.5).abs() < 1e-12);
        l.handle_enqueue(t(1.0), 0, 10);
        assert!((l.qlen(0) - (0.05 * 10.0 + 0.95 * 0.5)).abs() < 1e-12);
    }

    /// Three sessions at one interface with L_cur 3, 5, 1 (L_max 5): set through ADD_REQ.
    fn three_sessions() -> Lmr {
        let mut l = lmr(1);
        for g in [G1, G2, G3] {
            feed_sess(&mut l, t(0.0), g, 5, &[0]);
        }
        l.handle_request(t(0.1), 0, &req(NlmHeader::ADD_REQ, G1, 3));
        l.handle_request(t(0.1), 0, &req(NlmHeader::ADD_REQ, G2, 5));
        drain(&mut l);
        l
    }

    #[test]
    fn drop_takes_the_largest_l_cur_and_never_the_base_layer() {
        let mut l = three_sessions();
        assert_eq!((l.l_cur(0, G1), l.l_cur(0, G2), l.l_cur(0, G3)), (3, 5, 1));
        congest(&mut l, t(10.0), 0);
        // one DROP per drop_intvl: G2 5 → 4
        assert_eq!((l.l_cur(0, G1), l.l_cur(0, G2), l.l_cur(0, G3)), (3, 4, 1));
        assert_eq!(l.records.dec_level, vec![5]);
        congest(&mut l, t(10.4), 0); // held: drop_intvl 0.5 s
        assert_eq!(l.l_cur(0, G2), 4);
        let mut now = 10.5;
        for _ in 0..20 {
            congest(&mut l, t(now), 0);
            now += 0.5;
        }
        // everyone at the base layer; the base layer is never dropped
        assert_eq!((l.l_cur(0, G1), l.l_cur(0, G2), l.l_cur(0, G3)), (1, 1, 1));
        // the order of DROPs: always from the largest L_cur (ties: first registered)
        let order: Vec<(u32, u8)> =
            l.records.dec_group.iter().copied().zip(l.records.dec_level.iter().copied()).collect();
        assert_eq!(order, vec![(2, 5), (2, 4), (1, 3), (2, 3), (1, 2), (2, 2)]);
        assert!(l.records.lcur_new.iter().all(|&x| x >= 1));
    }

    #[test]
    fn add_takes_the_smallest_l_cur_that_can_grow_and_skips_sessions_at_l_max() {
        let mut l = lmr(1);
        feed_sess(&mut l, t(0.0), G1, 2, &[0]); // L_max 2
        feed_sess(&mut l, t(0.0), G2, 5, &[0]);
        feed_sess(&mut l, t(0.0), G3, 5, &[0]);
        l.handle_request(t(0.0), 0, &req(NlmHeader::ADD_REQ, G1, 2)); // G1 at its L_max
        l.handle_request(t(0.0), 0, &req(NlmHeader::ADD_REQ, G2, 3));
        drain(&mut l);
        // registration and ADD_REQ count as the last ADD: nothing before add_intvl (5 s)
        relieve(&mut l, t(4.9), 0);
        assert!(l.records.dec_time_ns.is_empty());
        relieve(&mut l, t(5.0), 0);
        // smallest L_cur that can grow: G3 (1), not G1 (2 = L_max) although smaller than G2
        assert_eq!((l.l_cur(0, G1), l.l_cur(0, G2), l.l_cur(0, G3)), (2, 3, 2));
        for (g, lv) in [(G1, 2), (G2, 5), (G3, 5)] {
            feed_sess(&mut l, t(5.5), g, lv, &[0]); // confirms the ADD (§3.6): add_intvl stays 5 s
        }
        relieve(&mut l, t(10.0), 0);
        // now G3 (2) ties with G1 (2) but G1 is at L_max: G3 again
        assert_eq!((l.l_cur(0, G1), l.l_cur(0, G2), l.l_cur(0, G3)), (2, 3, 3));
        let mut now = 10.0;
        for _ in 0..20 {
            now += 100.0;
            relieve(&mut l, t(now), 0);
        }
        assert_eq!((l.l_cur(0, G1), l.l_cur(0, G2), l.l_cur(0, G3)), (2, 5, 5));
        // ADD's target layers were always L_cur + 1 of the smallest growable session
        assert!(l.records.dec_kind.iter().all(|&k| k == NlmHeader::ADD_REQ as u8));
    }

    #[test]
    fn drop_and_add_generate_requests_only_when_the_layer_becomes_needless_or_needed() {
        // two interfaces carrying G1: L_cur 3 on both
        let mut l = lmr(2);
        feed_sess(&mut l, t(0.0), G1, 5, &[0, 1]);
        l.handle_request(t(0.0), 0, &req(NlmHeader::ADD_REQ, G1, 3));
        l.handle_request(t(0.0), 1, &req(NlmHeader::ADD_REQ, G1, 3));
        drain(&mut l);
        congest(&mut l, t(1.0), 0); // DROP layer 3 at I_0: still sent on I_1, no DROP_REQ
        assert_eq!(l.l_cur(0, G1), 2);
        assert!(drain(&mut l).is_empty());
        congest(&mut l, t(1.0), 1); // DROP layer 3 at I_1: needless now
        let out = drain(&mut l);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].1.kind, out[0].1.level), (NlmHeader::DROP_REQ, 3));
        assert_eq!(out[0].0, Addr::new(NodeId(1), LMR_PORT)); // PrevID from SESS's UpID
        relieve(&mut l, t(10.0), 0); // ADD layer 3 at I_0: needed again
        let out = drain(&mut l);
        assert_eq!((out[0].1.kind, out[0].1.level), (NlmHeader::ADD_REQ, 3));
    }

    #[test]
    fn a_repeated_request_does_not_undo_a_later_drop_but_is_still_forwarded() {
        let mut l = lmr(1);
        feed_sess(&mut l, t(0.0), G1, 5, &[0]);
        let add = req(NlmHeader::ADD_REQ, G1, 5);
        l.handle_request(t(0.0), 0, &add);
        assert_eq!(l.l_cur(0, G1), 5);
        congest(&mut l, t(1.0), 0); // DROP of layer 5 here
        assert_eq!(l.l_cur(0, G1), 4);
        drain(&mut l);
        l.handle_request(t(1.1), 0, &add); // the downstream LMR's repetition of its ADD_REQ
        assert_eq!(l.l_cur(0, G1), 4);
        let out = drain(&mut l);
        assert!(out.iter().any(|(_, h)| h.kind == NlmHeader::ADD_REQ && h.seq == add.seq));
        // a new ADD_REQ (another number) is acted on
        l.handle_request(t(1.2), 0, &req(NlmHeader::ADD_REQ, G1, 5));
        assert_eq!(l.l_cur(0, G1), 5);
    }

    #[test]
    fn sess_rewrites_prev_and_up_and_l_or_l_cur_depending_on_detect_period() {
        let mut l = lmr(1);
        let mut h = sess(G1, 4, 7);
        l.handle_sess_arrival(t(0.0), &mut h);
        assert_eq!(l.prev(G1), Some(Addr::new(NodeId(7), LMR_PORT)));
        assert_eq!(h.up, l.addr()); // UpID ← this LMR
        assert_eq!(l.l_max(G1), 4);
        l.handle_sess_forward(t(0.0), 0, &mut h);
        assert_eq!(l.l_cur(0, G1), 1); // registered at the base layer
                                       // within detect_period of the registration (an ADD): L passes unchanged
        assert_eq!(h.level, 4);
        // after it: L > L_cur → L ← L_cur
        let out = feed_sess(&mut l, t(5.0), G1, 4, &[0]);
        assert_eq!(out[0].level, 1);
        // ADD_REQ raises L_cur to 4 and sets add_time: L < L_cur not applied for detect_period
        l.handle_request(t(6.0), 0, &req(NlmHeader::ADD_REQ, G1, 4));
        let out = feed_sess(&mut l, t(8.0), G1, 2, &[0]);
        assert_eq!((out[0].level, l.l_cur(0, G1)), (2, 4));
        // after detect_period: L < L_cur → L_cur ← L
        let out = feed_sess(&mut l, t(11.0), G1, 2, &[0]);
        assert_eq!((out[0].level, l.l_cur(0, G1)), (2, 2));
        assert_eq!(*l.records.lcur_cause.last().unwrap(), cause::SESS);
        // a new upstream (tree change): PrevID follows UpID
        let mut h = sess(G1, 2, 8);
        l.handle_sess_arrival(t(12.0), &mut h);
        assert_eq!(l.prev(G1), Some(Addr::new(NodeId(8), LMR_PORT)));
    }

    #[test]
    fn sess_waits_after_any_add_at_the_interface_or_only_the_sessions_own_with_the_ablation() {
        for per_session in [false, true] {
            let cfg = NlmConfig { qweight: 1.0, sess_wait_per_session: per_session, ..NlmConfig::default() };
            let mut l = Lmr::try_new(cfg, Addr::new(NodeId(50), LMR_PORT), &[ChannelId(0)]).unwrap();
            feed_sess(&mut l, t(0.0), G1, 5, &[0]);
            feed_sess(&mut l, t(0.0), G2, 2, &[0]); // G2 can grow to 2 only
                                                    // 10 s: ADD of G1 (smallest L_cur that can grow: G1 and G2 tie at 1, G1 first)
            relieve(&mut l, t(10.0), 0);
            assert_eq!((l.l_cur(0, G1), l.l_cur(0, G2)), (2, 1));
            // G2's SESS right after: rewritten to L_cur only if the wait is per session
            let out = feed_sess(&mut l, t(11.0), G2, 2, &[0]);
            assert_eq!(out[0].level, if per_session { 1 } else { 2 });
        }
    }

    #[test]
    fn add_intvl_grows_by_alpha_after_a_failed_add_and_shrinks_by_beta_otherwise() {
        let mut l = lmr(1);
        feed_sess(&mut l, t(0.0), G1, 5, &[0]);
        // ADD at 5 s; congestion within detect_period → ×2
        relieve(&mut l, t(5.0), 0);
        assert_eq!(l.l_cur(0, G1), 2);
        congest(&mut l, t(6.0), 0);
        assert_eq!(l.add_intvl(0).as_secs_f64(), 10.0);
        assert_eq!(*l.records.intvl_reason.last().unwrap(), verdict::CONGESTION);
        let mut now = 6.0;
        let mut seen = vec![];
        for _ in 0..6 {
            now += l.add_intvl(0).as_secs_f64() + 0.5;
            relieve(&mut l, t(now), 0);
            feed_sess(&mut l, t(now + 0.1), G1, 5, &[0]);
            // a DROP_REQ for the layer just added, within detect_period → ×2
            l.handle_request(t(now + 1.0), 0, &req(NlmHeader::DROP_REQ, G1, l.l_cur(0, G1)));
            seen.push(l.add_intvl(0).as_secs_f64());
        }
        assert_eq!(seen, vec![20.0, 40.0, 80.0, 80.0, 80.0, 80.0]); // capped at add_intvl_max
        assert!(l.records.intvl_reason.iter().skip(1).all(|&r| r == verdict::DROP_REQ));
        // successful ADDs (SESS confirms, no congestion): ×0.75 down to add_intvl_min
        let mut seen = vec![];
        for _ in 0..9 {
            now += l.add_intvl(0).as_secs_f64() + 0.001;
            feed_sess(&mut l, t(now), G1, 5, &[0]);
            l.handle_timeout(t(now)); // closes the previous window (if any)
            relieve(&mut l, t(now), 0);
            feed_sess(&mut l, t(now + 0.2), G1, 5, &[0]);
            l.handle_timeout(t(now + 5.0));
            seen.push(l.add_intvl(0).as_secs_f64());
            // keep room to grow
            l.handle_request(t(now + 5.0), 0, &req(NlmHeader::DROP_REQ, G1, 2));
        }
        let want: Vec<f64> =
            [60.0, 45.0, 33.75, 25.3125, 18.984375, 14.23828125, 10.6787109375, 8.009033203125, 6.00677490234375]
                .to_vec();
        for (a, b) in seen.iter().zip(&want) {
            assert!((a - b).abs() < 1e-6, "{seen:?}");
        }
        for _ in 0..3 {
            now += 100.0;
            feed_sess(&mut l, t(now), G1, 5, &[0]);
            relieve(&mut l, t(now), 0);
            feed_sess(&mut l, t(now + 0.2), G1, 5, &[0]);
            l.handle_timeout(t(now + 5.0));
            l.handle_request(t(now + 5.0), 0, &req(NlmHeader::DROP_REQ, G1, 2));
        }
        assert_eq!(l.add_intvl(0).as_secs_f64(), 5.0);
    }

    #[test]
    fn an_add_without_sess_confirmation_fails() {
        let mut l = lmr(1);
        feed_sess(&mut l, t(0.0), G1, 5, &[0]);
        relieve(&mut l, t(5.0), 0);
        assert_eq!(l.l_cur(0, G1), 2);
        // upstream keeps announcing 1 layer: no SESS(S, 2) by detect_period
        feed_sess(&mut l, t(7.0), G1, 1, &[0]);
        assert_eq!(l.l_cur(0, G1), 2); // within detect_period: L_cur is left alone
        assert!(l.add_intvl(0).as_secs_f64() == 5.0 && l.poll_timeout().is_some());
        l.handle_timeout(t(10.0));
        assert_eq!(*l.records.intvl_reason.last().unwrap(), verdict::NO_SESS);
        assert_eq!(l.add_intvl(0).as_secs_f64(), 10.0);
    }

    #[test]
    fn generated_requests_repeat_every_ss_intvl_for_detect_period() {
        let mut l = lmr(1);
        feed_sess(&mut l, t(0.0), G1, 5, &[0]);
        l.handle_request(t(0.0), 0, &req(NlmHeader::ADD_REQ, G1, 3));
        drain(&mut l);
        congest(&mut l, t(1.0), 0);
        let mut copies = drain(&mut l).len();
        while let Some(d) = l.poll_timeout() {
            if d > t(20.0) {
                break;
            }
            l.handle_timeout(d);
            copies += drain(&mut l).len();
        }
        assert_eq!(copies, 50); // 5 s / 0.1 s
        let rep = l.records.req_event.iter().filter(|&&e| e == req_event::REPEATED).count();
        assert_eq!(rep, 49);
    }

    #[test]
    fn receiver_sends_drop_req_above_loss_th_and_not_below() {
        let cfg = NlmConfig::default();
        let mut rx = NlmReceiver::try_new(cfg, G1, 5, Duration::from_secs(1)).unwrap();
        rx.handle_start(t(0.0), StartInfo { addr: Addr::new(NodeId(3), 1000), rng: Rng::seed_from_u64(1) });
        assert_eq!(rx.poll_event(), Some(AgentEvent::Join(G1)));
        let mut s = Packet::data(Dest::Group(G1), 40);
        s.header = Header::Nlm(sess(G1, 5, 9));
        rx.handle_packet(t(0.0), &s);
        let mut seq = [0u64; 3];
        let mut now = 0.0;
        // 2 s with 20 % loss on layer 3 only (of 3 layers, ~7 % overall): no request
        for k in 0..200 {
            now += 0.01;
            for m in 0..3u8 {
                seq[m as usize] += 1;
                if m == 2 && k % 5 == 0 {
                    continue;
                }
                let mut p = Packet::data(Dest::Group(G1), 1024);
                p.layer = m;
                p.seq = seq[m as usize];
                p.header =
                    Header::Nlm(NlmHeader { kind: NlmHeader::DATA, level: m + 1, group: G1.0, ..Default::default() });
                rx.handle_packet(t(now), &p);
            }
        }
        assert!(rx.poll_transmit().is_none() && rx.records.req_time_ns.is_empty());
        // then 50 % loss on every layer: DROP_REQ(S, 3) to the UpID of SESS
        for k in 0..200 {
            now += 0.01;
            for m in 0..3u8 {
                seq[m as usize] += 1;
                if k % 2 == 0 {
                    continue;
                }
                let mut p = Packet::data(Dest::Group(G1), 1024);
                p.layer = m;
                p.seq = seq[m as usize];
                p.header =
                    Header::Nlm(NlmHeader { kind: NlmHeader::DATA, level: m + 1, group: G1.0, ..Default::default() });
                rx.handle_packet(t(now), &p);
                if rx.records.req_time_ns.len() == 1 {
                    break;
                }
            }
            if !rx.records.req_time_ns.is_empty() {
                break;
            }
        }
        let p = rx.poll_transmit().expect("a DROP_REQ");
        assert_eq!(p.dst, Dest::Unicast(Addr::new(NodeId(9), LMR_PORT)));
        assert!(matches!(p.header, Header::Nlm(h) if h.kind == NlmHeader::DROP_REQ && h.level == 3));
        assert!(rx.records.over_loss[0] > 0.25);
    }

    #[test]
    fn a_layer_filtered_for_less_than_layer_timeout_is_not_loss_once_sess_announces_it() {
        // 2 layers, 100 packets/s each; layer 2 is filtered for 0.8 s (a DROP, then an ADD) while
        // layer 1 goes on: the 80 missing packets would be 80 of 280 in the window that counts
        // them, over loss_th
        for announce in [true, false] {
            let mut rx = NlmReceiver::try_new(NlmConfig::default(), G1, 5, Duration::from_secs(1)).unwrap();
            rx.handle_start(t(0.0), StartInfo { addr: Addr::new(NodeId(3), 1000), rng: Rng::seed_from_u64(1) });
            let sess_at = |rx: &mut NlmReceiver, now: f64, level: u8| {
                let mut s = Packet::data(Dest::Group(G1), 40);
                s.header = Header::Nlm(sess(G1, level, 9));
                rx.handle_packet(t(now), &s);
            };
            sess_at(&mut rx, 0.0, 2);
            let mut seq = [0u64; 2];
            for k in 1..=400 {
                let now = k as f64 * 0.01;
                if announce && k % 10 == 0 {
                    // SESS every 0.1 s: L = 1 while layer 2 is filtered upstream (1.2-2.0 s)
                    sess_at(&mut rx, now, if (121..=200).contains(&k) { 1 } else { 2 });
                }
                for m in 0..2u8 {
                    seq[m as usize] += 1;
                    if m == 1 && (121..=200).contains(&k) {
                        continue;
                    }
                    let mut p = Packet::data(Dest::Group(G1), 1024);
                    p.layer = m;
                    p.seq = seq[m as usize];
                    p.header = Header::Nlm(NlmHeader {
                        kind: NlmHeader::DATA,
                        level: m + 1,
                        group: G1.0,
                        ..Default::default()
                    });
                    rx.handle_packet(t(now), &p);
                }
            }
            if announce {
                assert_eq!(rx.records.lost, 0);
                assert!(rx.records.req_time_ns.is_empty() && rx.poll_transmit().is_none());
            } else {
                // without the announcement the 0.8 s gap (under layer_timeout) reads as loss
                assert_eq!(rx.records.lost, 80);
                assert_eq!(rx.records.req_time_ns.len(), 1);
            }
        }
    }

    #[test]
    fn sender_honours_requests_and_announces_sess() {
        let mut s =
            NlmSender::try_new(NlmConfig::default(), G1, &[100e3, 100e3, 200e3], 1024, 7, t(0.0), Instant::MAX, false)
                .unwrap();
        s.handle_start(t(0.0), StartInfo { addr: Addr::new(NodeId(0), 1000), rng: Rng::seed_from_u64(1) });
        let mut layers = [0u32; 3];
        let mut sess = 0;
        fn drive(s: &mut NlmSender, until: f64, layers: &mut [u32; 3], sess: &mut u32) {
            while let Some(d) = s.poll_timeout() {
                if d > t(until) {
                    break;
                }
                s.handle_timeout(d);
                while let Some(p) = s.poll_transmit() {
                    match p.header {
                        Header::Nlm(h) if h.kind == NlmHeader::SESS => {
                            assert_eq!(h.level, 3);
                            *sess += 1;
                        }
                        Header::Nlm(h) if h.kind == NlmHeader::DATA => layers[p.layer as usize] += 1,
                        _ => panic!("unexpected"),
                    }
                }
            }
        }
        drive(&mut s, 9.95, &mut layers, &mut sess);
        assert!(sess == 99 || sess == 100, "{sess}"); // every ss_intvl, from a random phase
        assert_eq!(layers[1] + layers[2], 0); // base layer only at first
        let mut p = Packet::data(Dest::Unicast(Addr::new(NodeId(0), 1000)), 40);
        p.header = Header::Nlm(req(NlmHeader::ADD_REQ, G1, 3));
        s.handle_packet(t(10.0), &p);
        assert_eq!(s.level(), 3);
        p.header = Header::Nlm(req(NlmHeader::DROP_REQ, G1, 3));
        s.handle_packet(t(10.0), &p);
        assert_eq!(s.level(), 2);
        p.header = Header::Nlm(req(NlmHeader::DROP_REQ, G1, 3)); // a new request, no effect: 3 > L_cur
        s.handle_packet(t(10.0), &p);
        assert_eq!(s.level(), 2);
        let again = req(NlmHeader::ADD_REQ, G1, 3);
        p.header = Header::Nlm(again);
        s.handle_packet(t(10.0), &p);
        assert_eq!(s.level(), 3);
        p.header = Header::Nlm(req(NlmHeader::DROP_REQ, G1, 3));
        s.handle_packet(t(10.0), &p);
        p.header = Header::Nlm(again); // a repetition of the ADD_REQ acted on: no effect
        s.handle_packet(t(10.0), &p);
        assert_eq!(s.level(), 2);
        layers = [0; 3];
        drive(&mut s, 19.95, &mut layers, &mut sess);
        assert!(layers[1] > 0 && layers[2] == 0);
    }
}
