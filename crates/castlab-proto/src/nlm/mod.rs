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
//!   to its own `L_cur` by Figure 7. The sender's own `L_cur` filters what it transmits. This
//!   departs from §3.5's literal "L_cur", forced by the other sentence.
//! * **The averaged queue length** follows §3.3's formula, updated at each packet queued at the
//!   interface, and nothing else: §3.3 cites RED [12] for it, but RED's idle-time correction
//!   (decaying the average over an idle queue as if small packets had arrived) is not in §3.3,
//!   so an average stays where the last enqueue left it while the queue is idle. It only
//!   matters after silences; a busy bottleneck queues packets all the time.
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

use std::collections::VecDeque;

use castlab_core::{
    Addr, Agent, AgentEvent, ChannelId, ConfigError, Dest, Duration, GroupId, Header, Instant, NlmHeader, Packet,
    StartInfo,
};

use crate::cbr::{CbrSource, CbrStream};

mod lmr;
mod meter;
mod receiver;
pub mod registration;
mod router;
mod sender;

pub use lmr::*;
pub use meter::LossMeter;
pub use receiver::*;
pub use router::NlmRouter;
pub use sender::*;

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
    /// Trace rows (our choice, not Table 2's): `Full` (default) keeps the receivers' per-bin
    /// counts and a row per DROP_REQ / ADD_REQ copy at LMRs and the sender; `Off` keeps the
    /// counters and the event records (level changes, decisions, intervals, requests
    /// generated), so memory stays flat over a long run.
    pub trace: crate::Trace,
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
            trace: crate::Trace::Full,
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
    trace,
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

castlab_core::records_table!(SenderRecords {
    columns: [level_time_ns, level, level_cause, req_time_ns, req_kind, req_level],
    scalars: [sess_sent = |r| r.sess_sent, data_sent = |r| r.data_sent, data_withheld = |r| r.data_withheld],
});

castlab_core::records_table!(LmrRecords {
    columns: [
        lcur_time_ns,
        lcur_oif,
        lcur_group,
        lcur_old,
        lcur_new,
        lcur_cause,
        req_time_ns,
        req_event,
        req_kind,
        req_group,
        req_level,
        req_oif,
        dec_time_ns,
        dec_oif,
        dec_group,
        dec_kind,
        dec_level,
        dec_qlen,
        intvl_time_ns,
        intvl_oif,
        intvl_s,
        intvl_reason,
    ],
    scalars: [sess_processed = |r| r.sess_processed],
});

/// A request being repeated every `ss_intvl` until `until` (§3.4), by a receiver or an LMR.
#[derive(Clone, Copy, Debug)]
struct Repeat {
    h: NlmHeader,
    to: Addr,
    next: Instant,
    until: Instant,
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

fn control_packet(cfg: &NlmConfig, dst: Dest, h: NlmHeader) -> Packet {
    let mut p = Packet::data(dst, cfg.control_size_bytes);
    p.header = Header::Nlm(h);
    p
}

// ===================================================================================== sender

/// Columnar records of a sender.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Driver;
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
        let rx = NlmReceiver::try_new(cfg, G1, 5, Duration::from_secs(1)).unwrap();
        let info = StartInfo { addr: Addr::new(NodeId(3), 1000), rng: Rng::seed_from_u64(1) };
        let mut rx = Driver::start_with(rx, t(0.0), info);
        assert_eq!(rx.events.first(), Some(&(t(0.0), AgentEvent::Join(G1))));
        let mut s = Packet::data(Dest::Group(G1), 40);
        s.header = Header::Nlm(sess(G1, 5, 9));
        rx.packet(t(0.0), &s);
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
                rx.packet(t(now), &p);
            }
        }
        assert!(rx.sent.is_empty() && rx.agent.records.req_time_ns.is_empty());
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
                rx.packet(t(now), &p);
                if rx.agent.records.req_time_ns.len() == 1 {
                    break;
                }
            }
            if !rx.agent.records.req_time_ns.is_empty() {
                break;
            }
        }
        let p = rx.sent.first().expect("a DROP_REQ").1;
        assert_eq!(p.dst, Dest::Unicast(Addr::new(NodeId(9), LMR_PORT)));
        assert!(matches!(p.header, Header::Nlm(h) if h.kind == NlmHeader::DROP_REQ && h.level == 3));
        assert!(rx.agent.records.over_loss[0] > 0.25);
    }

    #[test]
    fn receiver_told_to_stop_leaves_its_group_and_stops_repeating_its_drop_req() {
        let rx = NlmReceiver::try_new(NlmConfig::default(), G1, 2, Duration::from_secs(1)).unwrap();
        let info = StartInfo { addr: Addr::new(NodeId(3), 1000), rng: Rng::seed_from_u64(1) };
        let mut rx = Driver::start_with(rx, t(0.0), info);
        let mut s = Packet::data(Dest::Group(G1), 40);
        s.header = Header::Nlm(sess(G1, 2, 9));
        rx.packet(t(0.0), &s);
        let data = |seq: u64, m: u8| {
            let mut p = Packet::data(Dest::Group(G1), 1024);
            p.seq = seq;
            p.layer = m;
            p.header =
                Header::Nlm(NlmHeader { kind: NlmHeader::DATA, level: m + 1, group: G1.0, ..Default::default() });
            p
        };
        // two layers at 100 packets/s each, losing every other packet: a DROP_REQ, then its repeats
        let mut k = 0u64;
        while rx.agent.records.req_time_ns.is_empty() && k < 1000 {
            k += 2;
            for m in 0..2 {
                rx.packet(t(k as f64 * 0.01), &data(k, m));
            }
        }
        assert!(!rx.agent.records.req_time_ns.is_empty() && rx.agent.poll_timeout().is_some());
        let stop = t(k as f64 * 0.01 + 0.001);
        rx.shutdown(stop);
        assert_eq!(rx.events.last(), Some(&(stop, AgentEvent::Leave(G1))));
        assert_eq!(rx.agent.poll_timeout(), None);
        let (sent, got) = (rx.sent.len(), rx.agent.records.received);
        rx.packet(stop + Duration::from_millis(10), &data(k + 1, 0));
        rx.advance_to(t(60.0));
        assert_eq!((rx.sent.len(), rx.agent.records.received), (sent, got));
    }

    #[test]
    fn a_layer_filtered_for_less_than_layer_timeout_is_not_loss_once_sess_announces_it() {
        // 2 layers, 100 packets/s each; layer 2 is filtered for 0.8 s (a DROP, then an ADD) while
        // layer 1 goes on: the 80 missing packets would be 80 of 280 in the window that counts
        // them, over loss_th
        for announce in [true, false] {
            let rx = NlmReceiver::try_new(NlmConfig::default(), G1, 5, Duration::from_secs(1)).unwrap();
            let info = StartInfo { addr: Addr::new(NodeId(3), 1000), rng: Rng::seed_from_u64(1) };
            let mut rx = Driver::start_with(rx, t(0.0), info);
            let sess_at = |rx: &mut Driver<NlmReceiver>, now: f64, level: u8| {
                let mut s = Packet::data(Dest::Group(G1), 40);
                s.header = Header::Nlm(sess(G1, level, 9));
                rx.packet(t(now), &s);
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
                    rx.packet(t(now), &p);
                }
            }
            if announce {
                assert_eq!(rx.agent.records.lost, 0);
                assert!(rx.agent.records.req_time_ns.is_empty() && rx.sent.is_empty());
            } else {
                // without the announcement the 0.8 s gap (under layer_timeout) reads as loss
                assert_eq!(rx.agent.records.lost, 80);
                assert_eq!(rx.agent.records.req_time_ns.len(), 1);
            }
        }
    }

    #[test]
    fn sender_honours_requests_and_announces_sess() {
        let s =
            NlmSender::try_new(NlmConfig::default(), G1, &[100e3, 100e3, 200e3], 1024, 7, t(0.0), Instant::MAX, false)
                .unwrap();
        let info = StartInfo { addr: Addr::new(NodeId(0), 1000), rng: Rng::seed_from_u64(1) };
        let mut d = crate::testing::Driver::start_with(s, t(0.0), info);
        /// Data packets per layer and SESS messages the sender sent since the last call.
        fn sent(d: &mut crate::testing::Driver<NlmSender>) -> ([u32; 3], u32) {
            let (mut layers, mut sess) = ([0u32; 3], 0);
            for (_, p) in d.sent.drain(..) {
                match p.header {
                    Header::Nlm(h) if h.kind == NlmHeader::SESS => {
                        assert_eq!(h.level, 3);
                        sess += 1;
                    }
                    Header::Nlm(h) if h.kind == NlmHeader::DATA => layers[p.layer as usize] += 1,
                    _ => panic!("unexpected"),
                }
            }
            (layers, sess)
        }
        d.advance_to(t(9.95));
        let (layers, sess) = sent(&mut d);
        assert!(sess == 99 || sess == 100, "{sess}"); // every ss_intvl, from a random phase
        assert_eq!(layers[1] + layers[2], 0); // base layer only at first
        let mut p = Packet::data(Dest::Unicast(Addr::new(NodeId(0), 1000)), 40);
        p.header = Header::Nlm(req(NlmHeader::ADD_REQ, G1, 3));
        d.packet(t(10.0), &p);
        assert_eq!(d.agent.level(), 3);
        p.header = Header::Nlm(req(NlmHeader::DROP_REQ, G1, 3));
        d.packet(t(10.0), &p);
        assert_eq!(d.agent.level(), 2);
        p.header = Header::Nlm(req(NlmHeader::DROP_REQ, G1, 3)); // a new request, no effect: 3 > L_cur
        d.packet(t(10.0), &p);
        assert_eq!(d.agent.level(), 2);
        let again = req(NlmHeader::ADD_REQ, G1, 3);
        p.header = Header::Nlm(again);
        d.packet(t(10.0), &p);
        assert_eq!(d.agent.level(), 3);
        p.header = Header::Nlm(req(NlmHeader::DROP_REQ, G1, 3));
        d.packet(t(10.0), &p);
        p.header = Header::Nlm(again); // a repetition of the ADD_REQ acted on: no effect
        d.packet(t(10.0), &p);
        assert_eq!(d.agent.level(), 2);
        sent(&mut d);
        d.advance_to(t(19.95));
        let (layers, _) = sent(&mut d);
        assert!(layers[1] > 0 && layers[2] == 0);
    }

    #[test]
    fn sender_told_to_stop_sends_no_more_data_nor_sess() {
        let s =
            NlmSender::try_new(NlmConfig::default(), G1, &[100e3, 100e3, 200e3], 1024, 7, t(0.0), Instant::MAX, false)
                .unwrap();
        let info = StartInfo { addr: Addr::new(NodeId(0), 1000), rng: Rng::seed_from_u64(1) };
        let mut d = crate::testing::Driver::start_with(s, t(0.0), info);
        d.advance_to(t(2.0));
        let is_sess = |p: &Packet| matches!(p.header, Header::Nlm(h) if h.kind == NlmHeader::SESS);
        let sent = d.sent.len();
        assert!(d.sent.iter().any(|(_, p)| is_sess(p)) && d.sent.iter().any(|(_, p)| !is_sess(p)));
        assert!(d.agent.poll_timeout().is_some());
        d.shutdown(t(2.001));
        assert_eq!(d.agent.poll_timeout(), None);
        d.advance_to(t(60.0));
        assert_eq!(d.sent.len(), sent);
        assert_eq!(d.agent.records.data_sent + d.agent.records.sess_sent, sent as u64);
    }
}
