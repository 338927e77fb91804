//! TCP Reno and NewReno as sans-IO agents: a bulk or fixed-size sender ([`TcpSender`]) and a
//! cumulative-ACK receiver ([`TcpSink`]).
//!
//! What is implemented, and where it comes from:
//! - congestion control behind the [`CongestionControl`] interface: [`Reno`] (RFC 5681 §3.1
//!   slow start and congestion avoidance, §3.2 fast retransmit and fast recovery) and
//!   [`NewReno`] (RFC 6582 §3.2: partial acknowledgements keep the sender in fast recovery and
//!   retransmit the next hole, `recover` guards against a second reduction);
//! - [`Sack`]: selective acknowledgements (RFC 2018) with the scoreboard-based loss recovery
//!   of RFC 6675 (`IsLost`, `SetPipe`, `NextSeg` in the sender, the window in [`Sack`]);
//! - the retransmission timer of RFC 6298 (§2 estimator, §3 Karn's rule, §5 timer management
//!   with exponential back-off), in [`RttEstimator`] and [`TcpSender`];
//! - a receiver sending cumulative ACKs, immediately or delayed (RFC 5681 §4.2, RFC 1122
//!   §4.2.3.2), with an RFC 7323-style timestamp echo used for RTT samples.
//!
//! The model is one-way data transfer in the style of ns-2's `Agent/TCP` and `TCPSink`: no
//! connection set-up or tear-down, sequence numbers count payload bytes from 0, and every
//! segment but the last of a fixed-size transfer carries exactly `mss_bytes` of payload.
//! Per-flow traces ([`TcpTrace`], [`SinkTrace`]) are columnar vectors that a caller reads after
//! a run (`Simulator::agent::<TcpSender>(id)`).

use core::fmt::Debug;
use std::collections::VecDeque;

use castlab_core::{
    Addr, Agent, ConfigError, Dest, Duration, Header, Instant, Packet, Rng, StartInfo, TcpHeader, TimerTable,
};

// ------------------------------------------------------------------------------------------
// Configuration
// ------------------------------------------------------------------------------------------

/// How much data the application hands to the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    /// An FTP-like bulk source: always data to send (until the stop time).
    Bulk,
    /// A fixed number of payload bytes; the last segment carries `FIN`.
    Bytes(u64),
}

/// Parameters of a TCP sender and sink. `Default` gives the values named on each field.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Sender maximum segment size (SMSS), payload bytes per segment. Default 1000 (the usual
    /// ns-2 packet size of the papers' simulations).
    pub mss_bytes: u32,
    /// Header overhead added to the payload to get the on-wire size. Default 40 (IPv4 + TCP
    /// without options). A pure ACK is this many bytes.
    pub header_bytes: u32,
    /// Initial window, segments. Default 2: RFC 2581 §3.1 (IW <= 2 segments), still within
    /// the upper bound of RFC 5681 §3.1 eq. (1) for every SMSS (ns-2's `windowInit_` is 2 too).
    pub initial_window_segs: u32,
    /// Initial slow-start threshold, bytes. Default 1 GiB: RFC 5681 §3.1 says "arbitrarily
    /// high (e.g., the size of the largest possible advertised window)", which is 2^30 with
    /// RFC 7323 §2.3 window scaling.
    pub initial_ssthresh_bytes: u64,
    /// Receiver window the sink advertises, bytes. Default 1 GiB (RFC 7323 §2.3 maximum), so
    /// that the congestion window governs; set e.g. 20 × MSS to mimic ns-2's `window_ 20`.
    pub rwnd_bytes: u32,
    /// RTO before any RTT sample. Default 1 s, RFC 6298 §2.1.
    pub initial_rto: Duration,
    /// Lower bound on the RTO. Default 1 s, RFC 6298 §2.4. (Many ns-2 scripts use 0.2 s, and
    /// Linux uses 200 ms: make it a parameter of the scenario.)
    pub min_rto: Duration,
    /// Upper bound on the RTO. Default 60 s, RFC 6298 §2.5 ("at least 60 seconds").
    pub max_rto: Duration,
    /// Clock granularity G of RFC 6298 §2 (RTO = SRTT + max(G, K·RTTVAR)). Default 1 ms.
    pub clock_granularity: Duration,
    /// Where `min_rto` applies. False (default): RFC 6298 §2.4, RTO = max(min_rto, SRTT +
    /// max(G, 4·RTTVAR)). True: Linux's `tcp_rtt_estimator` / `__tcp_set_rto`, which floors the
    /// variance term instead, RTO = SRTT + max(min_rto, G, 4·RTTVAR): however steady the RTT,
    /// the timer leaves `min_rto` of room above SRTT, so a recovery that takes one RTT does not
    /// end in a timeout when SRTT is near `min_rto`.
    pub rto_min_on_variance: bool,
    /// Duplicate ACKs that trigger fast retransmit. Default 3, RFC 5681 §3.2.
    pub dupack_threshold: u32,
    /// Limited Transmit (RFC 3042 §2, RFC 5681 §3.2 step 1 "SHOULD"): on each of the first
    /// `dupack_threshold - 1` duplicate ACKs send one segment of new data, if the receiver's
    /// window allows and FlightSize stays within cwnd + 2·SMSS; cwnd is not changed, and these
    /// segments are left out of the ssthresh of a following fast retransmit. Default true. It
    /// lets a flow with a small window get the three duplicates fast retransmit needs instead
    /// of waiting for the timer: with 100 flows on a 10 Mb/s dumbbell (a few segments each) it
    /// turned about 2,900 timeouts a minute into about 150 (docs/fidelity/tcp.md). ns-2's
    /// agents do the same (`singledup_ 1`, their default).
    pub limited_transmit: bool,
    /// RTT measurement from the timestamp echo (RFC 7323 §4.1, RTTM). With timestamps every
    /// ACK of new data gives a sample, retransmitted segments included: RFC 6298 §3 says the
    /// timestamp option "removes the ambiguity" Karn's rule guards against. Without it the
    /// ACK must cover data sent after the last retransmission (strict Karn). Default true.
    /// Strict Karn lets a flow that lost a retransmission keep a backed-off RTO for many
    /// RTTs (every loss in go-back-N recovery restarts the lockout); ns-2's default agents
    /// (`timestamps_ false`) behave like `false`.
    pub timestamps: bool,
    /// Delayed ACKs at the sink: ACK every second segment or after `delayed_ack_timeout`
    /// (RFC 5681 §4.2, RFC 1122 §4.2.3.2). Default off, as ns-2's plain `TCPSink`.
    pub delayed_ack: bool,
    /// Delayed-ACK timer. Default 200 ms (RFC 1122 §4.2.3.2 allows up to 500 ms).
    pub delayed_ack_timeout: Duration,
    /// Linux's quick-ACK mode at the sink (`tcp_incr_quickack`, `tcp_enter_quickack_mode` in
    /// `tcp_input.c`): the first data segment, an in-order data segment arriving more than
    /// `quickack_gap` after the previous in-order one (`tcp_event_data_recv`: "too long gap"),
    /// and a duplicate segment each make the next `quickacks` ACKs immediate, as if delayed
    /// ACKs were off. False (default): RFC 5681 has no such mode, and [`TcpConfig::linux`]
    /// leaves it off too: our choice, an opt-in (the net-peers twin's `quickack_gap_s`,
    /// docs/real-network.md).
    pub quickack: bool,
    /// The ACKs quick-ACK mode makes immediate: Linux's `TCP_MAX_QUICKACKS`, 16 (fewer only
    /// with a receive window under 32 segments, `tcp_incr_quickack`).
    pub quickacks: u32,
    /// The gap that starts quick-ACK mode. Linux compares with the receiver's own RTO
    /// (`icsk_rto`), which for a receiver that sends no data comes from its handshake's RTT:
    /// 200 ms (`TCP_RTO_MIN`) and a little more on an empty path, seconds behind a full queue.
    /// Default 200 ms.
    pub quickack_gap: Duration,
    /// The RTT the connection's handshake measured, which the sender holds when its transfer
    /// starts: the RTT estimator's first sample, the rate sampler's minimum RTT, and a
    /// controller's ([`CongestionControl::on_handshake_rtt`]; BBR's min RTT and initial pacing
    /// rate, `bbr_init`). Linux takes this sample from the SYN-ACK (`tcp_synack_rtt_meas`,
    /// `tcp_ack_update_rtt`), so `srtt_us` and `tcp_min_rtt` are set before the first data
    /// segment. None (default): no handshake is modelled, the first sample is the first data
    /// ACK's. Not an RFC value: a property of the path when the connection opened.
    pub handshake_rtt: Option<Duration>,
    /// Linux's internal pacing as `tcp_output.c` runs it, for a controller with a pacing rate
    /// (BBR): data leaves in skbs of `tcp_tso_segs` segments, sent back to back (the stack's
    /// GSO splits them on the wire); each skb pushes the next departure on by its payload at
    /// the rate, less up to half of that for the time the sender fell behind its schedule
    /// (`tcp_update_skb_after_send`, "take into account OS jitter"); and the first 10
    /// segments are not paced (`data_segs_out >= 10`). An skb holds
    /// `max(bytes / SMSS, min TSO segments)` segments, where bytes is the pacing rate's
    /// 1/2^`pacing_shift` of a second plus `gso_max_bytes` >> (min RTT in µs >>
    /// `tso_rtt_log`), at most `gso_max_bytes` (`tcp_tso_autosize`); the minimum is the
    /// controller's (`min_tso_segs`: BBR's 1 below 1.2 Mbit/s, else 2) or `min_tso_segs`.
    /// Fewer when the window or the data allow fewer. False (default; RFCs say nothing of
    /// pacing's grain): each segment is paced on its own by its payload at the rate. True in
    /// [`TcpConfig::linux`]: beside the kernel's bbr on the testbed it is what gives the twin's
    /// BBR the kernel's bursts and min RTT (docs/fidelity/tcp.md, "Pacing per skb").
    pub skb_pacing: bool,
    /// Linux's push marks and its receiver's answer to them. The sender sets PSH on the last
    /// new segment of each burst outside loss recovery: where the window is full after it, or
    /// under [`TcpConfig::skb_pacing`] where its skb ends. (Linux marks the tail of the data the
    /// application has written, `tcp_push`; a bulk sender whose socket buffer the window keeps
    /// drained sends up to that tail at each ACK.) The sink ACKs an in-order full-sized PSH
    /// segment at once while nothing is out of order: Linux (6.6 and later) sets
    /// `ICSK_ACK_PUSHED` for it (`tcp_measure_rcv_mss`), and `tcp_cleanup_rbuf` sends the ACK
    /// when the application has read all it holds. Without it a window's odd last segment waits
    /// at the receiver for the next one. False (default): no PSH, RFC 1122 §4.2.3.2's ACK every
    /// second segment. True in [`TcpConfig::linux`].
    pub push: bool,
    /// `sk_pacing_shift`: an skb carries the pacing rate's 1/2^this of a second. Linux's
    /// default for TCP, 10 (about 1 ms).
    pub pacing_shift: u32,
    /// `net.ipv4.tcp_tso_rtt_log`: for every 2^this µs of min RTT the extra skb allowance
    /// halves. Linux's default, 9 (512 µs).
    pub tso_rtt_log: u32,
    /// The device's largest GSO skb, bytes (`sk_gso_max_size`; `GSO_LEGACY_MAX_SIZE`, 65,536,
    /// for veth and most NICs).
    pub gso_max_bytes: u32,
    /// `net.ipv4.tcp_min_tso_segs`, for controllers without a minimum of their own. Linux's
    /// default, 2.
    pub min_tso_segs: u32,
    /// Selective acknowledgements (RFC 2018) at both ends: the sink reports SACK blocks and the
    /// sender recovers by RFC 6675's scoreboard. Default false (ns-2's default agents and
    /// RFC 5681 have none). Set by choosing the "sack" variant (`CcAlgorithm::Sack`), not on its
    /// own: the two ends negotiate it (SACK-permitted) and the sender needs the SACK controller.
    pub sack: bool,
    /// RACK loss detection (RFC 8985 §6) on a SACK flow: segments are marked lost by their
    /// transmit time (a later-sent segment delivered, and RACK.rtt plus the reordering window
    /// passed), which replaces RFC 6675's DupThresh and `IsLost` and finds lost
    /// retransmissions. Default false (ns-2's agents and RFC 6675); true in
    /// [`TcpConfig::linux`] (`net.ipv4.tcp_recovery` 1, Linux's default). Needs SACK.
    pub rack: bool,
    /// Tail loss probes (RFC 8985 §7): a probe segment 2·SRTT after the last transmission or
    /// ACK of new data, so that a lost tail is found by RACK rather than by the RTO. Default
    /// false; true in [`TcpConfig::linux`] (`net.ipv4.tcp_early_retrans` 3). Needs `rack`.
    pub tlp: bool,
    /// RACK's reordering window is RACK.min_RTT over this (RFC 8985 §6.2 step 4: min_RTT/4,
    /// Linux's `tcp_rack_reo_wnd`). Default 4.
    pub rack_reo_wnd_divisor: u32,
    /// Added to the reordering timer: Linux's `tcp_rack_mark_lost` adds `TCP_TIMEOUT_MIN`, two
    /// jiffies, which is 8 ms with the testbed kernel's `CONFIG_HZ=250`. RFC 8985 adds none.
    /// Default 8 ms.
    pub rack_reo_slack: Duration,
    /// TLP.max_ack_delay (RFC 8985 §7.2, "implementation specific"), added to the PTO when one
    /// segment is in flight: Linux adds its minimum RTO (`tcp_schedule_loss_probe`,
    /// `tcp_rto_min_us`), 200 ms. Default 200 ms.
    pub tlp_max_ack_delay: Duration,
    /// Added to the PTO when more than one segment is in flight: Linux's `TCP_TIMEOUT_MIN_US`,
    /// 2 ms (`tcp_schedule_loss_probe`). RFC 8985 adds none. Default 2 ms.
    pub tlp_slack: Duration,
    /// Bulk (FTP-like) or fixed-size transfer. Default bulk.
    pub transfer: Transfer,
    /// The sender starts sending at `max(start, the agent's start)`. Default 0.
    pub start: Instant,
    /// The sender sends no new data from `stop` on; data already sent is still recovered
    /// (retransmitted) until acknowledged. Default never.
    pub stop: Instant,
    /// The sender's [`TcpTrace`] and the sink's [`SinkTrace`] (rows per ACK, RTT sample,
    /// window change, retransmission, timeout and delivered segment): `Full` (default) or
    /// `Off` (counters only, memory flat over a long run). Not an RFC value: our choice.
    pub trace: crate::Trace,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss_bytes: 1000,
            header_bytes: 40,
            initial_window_segs: 2,
            initial_ssthresh_bytes: 1 << 30,
            rwnd_bytes: 1 << 30,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            clock_granularity: Duration::from_millis(1),
            rto_min_on_variance: false,
            dupack_threshold: 3,
            limited_transmit: true,
            timestamps: true,
            delayed_ack: false,
            delayed_ack_timeout: Duration::from_millis(200),
            quickack: false,
            quickacks: 16,
            quickack_gap: Duration::from_millis(200),
            handshake_rtt: None,
            skb_pacing: false,
            push: false,
            pacing_shift: 10,
            tso_rtt_log: 9,
            gso_max_bytes: 65_536,
            min_tso_segs: 2,
            sack: false,
            rack: false,
            tlp: false,
            rack_reo_wnd_divisor: 4,
            rack_reo_slack: Duration::from_millis(8),
            tlp_max_ack_delay: Duration::from_millis(200),
            tlp_slack: Duration::from_millis(2),
            transfer: Transfer::Bulk,
            start: Instant::ZERO,
            stop: Instant::MAX,
            trace: crate::Trace::Full,
        }
    }
}

impl TcpConfig {
    /// Linux's settings, which the "cubic" and "bbr" variants start from (a caller's overrides
    /// still apply): SMSS 1448 and 52 header bytes (a 1500-byte Ethernet MTU less IPv4, TCP and
    /// the 12-byte timestamp option, as Linux negotiates by default); an initial window of 10
    /// segments (RFC 6928 §2, Linux's `TCP_INIT_CWND`); a receive window of 3 MiB (half of
    /// `net.ipv4.tcp_rmem`'s default maximum of 6 MiB, what receive-buffer auto-tuning grows
    /// to with `tcp_adv_win_scale` 1; the model advertises it from the start); RTO bounds of
    /// 200 ms and 120 s (`TCP_RTO_MIN`, `TCP_RTO_MAX`) with an initial 1 s (`TCP_TIMEOUT_INIT`,
    /// RFC 6298 §2.1), the minimum applied to the variance term as Linux does
    /// (`rto_min_on_variance`); delayed ACKs, every second segment or after 40 ms (`TCP_DELACK_MIN`);
    /// SACK at both ends; RACK-TLP (RFC 8985, `tcp_recovery` 1 and `tcp_early_retrans` 3);
    /// pacing per skb (`skb_pacing`, for a controller that paces). Everything else as
    /// [`TcpConfig::default`].
    pub fn linux() -> Self {
        TcpConfig {
            mss_bytes: 1448,
            header_bytes: 52,
            initial_window_segs: 10,
            rwnd_bytes: 3 << 20,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(120),
            rto_min_on_variance: true,
            delayed_ack: true,
            delayed_ack_timeout: Duration::from_millis(40),
            sack: true,
            rack: true,
            tlp: true,
            skb_pacing: true,
            push: true,
            ..TcpConfig::default()
        }
    }

    /// The largest initial window accepted: RFC 6928 allows 10 segments; 1,000 leaves room for
    /// experiments while a typo (10^9) cannot send a whole window at t = 0.
    pub const MAX_INITIAL_WINDOW_SEGS: u32 = 1000;

    /// Check every field; the error names the field. (`transfer`, `start` and `stop` are the
    /// flow's, set by whoever creates it.)
    pub fn validate(&self) -> Result<(), ConfigError> {
        use castlab_core::config::check::{int_in, nonzero};
        int_in("mss_bytes", self.mss_bytes.into(), 1, 65_495)?;
        int_in("header_bytes", self.header_bytes.into(), 0, 65_535 - u64::from(self.mss_bytes))?;
        int_in("initial_window_segs", self.initial_window_segs.into(), 1, Self::MAX_INITIAL_WINDOW_SEGS.into())?;
        int_in("initial_ssthresh_bytes", self.initial_ssthresh_bytes, 2 * u64::from(self.mss_bytes), u64::MAX)?;
        int_in("rwnd_bytes", self.rwnd_bytes.into(), self.mss_bytes.into(), u32::MAX.into())?;
        nonzero("initial_rto", self.initial_rto)?;
        nonzero("min_rto", self.min_rto)?;
        if self.max_rto < self.min_rto {
            return Err(ConfigError::new("max_rto", self.max_rto.as_secs_f64(), "must be >= min_rto"));
        }
        nonzero("clock_granularity", self.clock_granularity)?;
        int_in("dupack_threshold", self.dupack_threshold.into(), 1, 1000)?;
        nonzero("delayed_ack_timeout", self.delayed_ack_timeout)?;
        int_in("quickacks", self.quickacks.into(), 1, 1000)?;
        nonzero("quickack_gap", self.quickack_gap)?;
        if self.tlp && !self.rack {
            return Err(ConfigError::new(
                "tlp",
                1,
                "needs rack (RFC 8985 §7.4: RACK finds the losses a probe reveals)",
            ));
        }
        int_in("rack_reo_wnd_divisor", self.rack_reo_wnd_divisor.into(), 1, 1000)?;
        if let Some(r) = self.handshake_rtt {
            nonzero("handshake_rtt", r)?;
        }
        int_in("pacing_shift", self.pacing_shift.into(), 0, 31)?;
        int_in("tso_rtt_log", self.tso_rtt_log.into(), 0, 31)?;
        int_in("gso_max_bytes", self.gso_max_bytes.into(), self.mss_bytes.into(), 1 << 20)?;
        int_in("min_tso_segs", self.min_tso_segs.into(), 1, 127)?;
        if self.stop < self.start {
            return Err(ConfigError::new("stop", self.stop.as_secs_f64(), "must not be before start"));
        }
        if self.transfer == Transfer::Bytes(0) {
            return Err(ConfigError::new("transfer_bytes", 0, "must be positive (None for a bulk transfer)"));
        }
        Ok(())
    }
}

castlab_core::config_fields!(TcpConfig {
    mss_bytes,
    header_bytes,
    initial_window_segs,
    initial_ssthresh_bytes,
    rwnd_bytes,
    initial_rto,
    min_rto,
    max_rto,
    clock_granularity,
    rto_min_on_variance,
    dupack_threshold,
    limited_transmit,
    timestamps,
    delayed_ack,
    delayed_ack_timeout,
    quickack,
    quickacks,
    quickack_gap,
    rack,
    tlp,
    rack_reo_wnd_divisor,
    rack_reo_slack,
    tlp_max_ack_delay,
    tlp_slack,
    handshake_rtt,
    skb_pacing,
    push,
    pacing_shift,
    tso_rtt_log,
    gso_max_bytes,
    min_tso_segs,
    trace,
});

mod bbr;
mod congestion;
mod cubic;
mod new_reno;
mod rack;
mod rate;
pub mod registration;
mod reno;
mod rtt;
mod sack;
mod sender;
mod sink;

pub use bbr::{Bbr, BbrConfig, BbrMode};
pub use congestion::*;
pub use cubic::{Cubic, CubicConfig};
pub use new_reno::NewReno;
pub use reno::Reno;
pub use rtt::RttEstimator;
pub use sack::Sack;
pub use sender::*;
pub use sink::*;

castlab_core::records_table!(TcpTrace {
    columns: [
        cc_time_ns,
        cwnd_bytes,
        ssthresh_bytes,
        rtt_time_ns,
        rtt_ns,
        srtt_ns,
        rto_ns,
        retx_time_ns,
        retx_seq,
        timeout_time_ns,
        timeout_rto_ns,
        ack_time_ns,
        acked_bytes,
        retx_kind,
        tx_time_ns,
        tx_bytes,
        state_time_ns,
        state_code,
        pacing_rate_bps,
        model_bw_bps,
        min_rtt_ns,
    ],
});
castlab_core::records_table!(SinkTrace { columns: [rx_time_ns, rx_bytes] });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{ms, start_info as info, Driver, Link, Pair};
    use castlab_core::NodeId;

    const SND: Addr = Addr::new(NodeId(0), 1);
    const RCV: Addr = Addr::new(NodeId(1), 2);

    /// Sender and sink on the shared harness ([`crate::testing::Pair`]), joined by a link of
    /// fixed one-way delay and infinite rate each way, so that a window leaves in one instant
    /// and its ACKs return together one RTT later. `drop(seq, n)` says whether the link loses
    /// the `n`-th (0-based) transmission of the data segment starting at byte `seq`. ACKs are
    /// never lost. Packets due at the same instant are delivered in the order they were sent,
    /// before timers due then.
    fn pair(
        snd: TcpSender,
        snk: TcpSink,
        one_way: Duration,
        drop: impl FnMut(u64, u32) -> bool + 'static,
    ) -> Pair<TcpSender, TcpSink> {
        let data = Link::delay(one_way).loss(nth_transmission(drop));
        Pair::start(snd, info(SND), snk, info(RCV), data, Link::delay(one_way))
    }

    /// A loss pattern for [`Link::loss`]: `drop(seq, n)` for the `n`-th transmission of the
    /// segment starting at `seq` (1000-byte segments).
    fn nth_transmission(mut drop: impl FnMut(u64, u32) -> bool + 'static) -> impl FnMut(&Packet) -> bool + 'static {
        let mut times_sent: Vec<u32> = Vec::new();
        move |p| {
            let k = (p.seq / 1000) as usize;
            if times_sent.len() <= k {
                times_sent.resize(k + 1, 0);
            }
            let n = times_sent[k];
            times_sent[k] += 1;
            drop(p.seq, n)
        }
    }

    /// [`pair`] run until `until`: every data segment sent (lost or not) with its send time,
    /// and the two agents.
    fn run(
        snd: TcpSender,
        snk: TcpSink,
        one_way: Duration,
        until: Instant,
        drop: impl FnMut(u64, u32) -> bool + 'static,
    ) -> (Vec<(Instant, Packet)>, TcpSender, TcpSink) {
        let mut p = pair(snd, snk, one_way, drop);
        p.run_until(until);
        (p.a.sent, p.a.agent, p.b.agent)
    }

    /// Data segments sent per distinct send time, in time order.
    fn rounds(sent: &[(Instant, Packet)]) -> Vec<(Instant, usize)> {
        let mut out: Vec<(Instant, usize)> = Vec::new();
        for (t, _) in sent {
            match out.last_mut() {
                Some((lt, n)) if lt == t => *n += 1,
                _ => out.push((*t, 1)),
            }
        }
        out
    }

    /// cwnd and ssthresh in force at the end of instant `t`, from the trace.
    fn cc_at(tr: &TcpTrace, t: Instant) -> (u64, u64) {
        let k = tr.cc_time_ns.partition_point(|&x| x <= t.as_nanos());
        assert!(k > 0);
        (tr.cwnd_bytes[k - 1], tr.ssthresh_bytes[k - 1])
    }

    fn sender(newreno: bool, cfg: TcpConfig) -> TcpSender {
        if newreno {
            TcpSender::newreno(RCV, 5, cfg)
        } else {
            TcpSender::reno(RCV, 5, cfg)
        }
    }

    #[test]
    fn slow_start_doubles_per_rtt_until_ssthresh_then_one_segment_per_rtt() {
        // RTT 100 ms, IW 2, ssthresh 64 segments. RFC 5681 §3.1: slow start adds one SMSS per
        // ACK (one ACK per segment here), so each round is twice the previous one until cwnd
        // reaches ssthresh; congestion avoidance then adds one SMSS per round.
        for newreno in [false, true] {
            let cfg = TcpConfig { initial_ssthresh_bytes: 64_000, ..Default::default() };
            let (sent, snd, _) =
                run(sender(newreno, cfg.clone()), TcpSink::new(cfg), Duration::from_millis(50), ms(950), |_, _| false);
            let r = rounds(&sent);
            let sizes: Vec<usize> = r.iter().map(|x| x.1).collect();
            assert_eq!(sizes, vec![2, 4, 8, 16, 32, 64, 65, 66, 67, 68]);
            for (k, (t, _)) in r.iter().enumerate() {
                assert_eq!(*t, ms(100 * k as u64), "round {k} leaves one RTT after the previous");
            }
            // cwnd at the end of each round's ACK burst (the burst at 100·k ms closes round k-1).
            let expect_cwnd = [4_000, 8_000, 16_000, 32_000, 64_000, 65_000, 66_000, 67_000, 68_000];
            for (k, w) in expect_cwnd.iter().enumerate() {
                assert_eq!(cc_at(&snd.trace, ms(100 * (k as u64 + 1))), (*w, 64_000), "after round {k}");
            }
            assert_eq!(snd.stats.retransmissions + snd.stats.timeouts, 0);
            // Every RTT sample is the pipe's 100 ms.
            assert!(!snd.trace.rtt_ns.is_empty());
            assert!(snd.trace.rtt_ns.iter().all(|&r| r == 100_000_000));
        }
    }

    // With ssthresh = 8 segments the rounds are 2, 4, 8 (slow start), 9, 10 (congestion
    // avoidance): segments 23..=32 (bytes 23000..33000) form the window of 10 sent at 400 ms.

    #[test]
    fn single_loss_in_congestion_avoidance_halves_cwnd_by_fast_retransmit() {
        for newreno in [false, true] {
            let cfg = TcpConfig { initial_ssthresh_bytes: 8_000, ..Default::default() };
            let (sent, snd, snk) =
                run(sender(newreno, cfg.clone()), TcpSink::new(cfg), Duration::from_millis(50), ms(3000), |seq, n| {
                    seq == 23_000 && n == 0
                });
            let r = rounds(&sent);
            assert_eq!(r[4], (ms(400), 10), "the window of 10 holding the loss");
            assert_eq!(cc_at(&snd.trace, ms(400)).0, 10_000);
            // The ACKs of that window return at 500 ms: the third duplicate triggers the fast
            // retransmit of segment 23 at once (RFC 5681 §3.2), no timer.
            assert_eq!(snd.trace.retx_seq, vec![23_000]);
            assert_eq!(snd.trace.retx_kind, vec![RetxKind::Fast as u8]);
            assert_eq!(snd.trace.retx_time_ns, vec![ms(500).as_nanos()]);
            assert!(snd.trace.timeout_time_ns.is_empty());
            assert_eq!(snd.stats.timeouts, 0);
            // ssthresh = FlightSize / 2 = 10 segments / 2; cwnd = ssthresh + 3 SMSS on entry.
            let k = snd.trace.ssthresh_bytes.iter().position(|&s| s == 5_000).expect("halved");
            assert_eq!(snd.trace.cc_time_ns[k], ms(500).as_nanos());
            assert_eq!(snd.trace.cwnd_bytes[k], 8_000);
            // The retransmission is acknowledged at 600 ms: cwnd deflates to ssthresh = half
            // the 10-segment window it had before the loss.
            assert_eq!(cc_at(&snd.trace, ms(600)), (5_000, 5_000));
            assert!(!snd.controller().in_recovery());
            // and the transfer goes on in congestion avoidance.
            assert!(snd.snd_una() > 100_000, "{}", snd.snd_una());
            assert_eq!(snk.received_bytes(), snd.snd_una());
        }
    }

    #[test]
    fn newreno_recovers_several_losses_in_one_window_without_timeout_reno_does_not() {
        let lost = [23_000u64, 25_000, 27_000, 29_000];
        let mut results = Vec::new();
        for newreno in [false, true] {
            let cfg = TcpConfig { initial_ssthresh_bytes: 8_000, ..Default::default() };
            let (_, snd, _) = run(
                sender(newreno, cfg.clone()),
                TcpSink::new(cfg),
                Duration::from_millis(50),
                ms(5000),
                move |seq, n| lost.contains(&seq) && n == 0,
            );
            assert!(snd.snd_una() > 100_000, "the transfer carries on");
            results.push(snd);
        }
        let (reno, newreno) = (&results[0], &results[1]);
        // NewReno (RFC 6582 §3.2): one fast retransmit, then one retransmission per partial
        // ACK, one RTT apart; exactly the lost segments are resent and ssthresh is cut once.
        assert_eq!(newreno.stats.timeouts, 0);
        assert_eq!(newreno.trace.retx_seq, lost.to_vec());
        let k = |x: RetxKind| x as u8;
        assert_eq!(
            newreno.trace.retx_kind,
            vec![k(RetxKind::Fast), k(RetxKind::Partial), k(RetxKind::Partial), k(RetxKind::Partial)]
        );
        let want_t: Vec<u64> = [500, 600, 700, 800].iter().map(|&t| ms(t).as_nanos()).collect();
        assert_eq!(newreno.trace.retx_time_ns, want_t);
        let mut thresholds = newreno.trace.ssthresh_bytes.clone();
        thresholds.dedup();
        assert_eq!(thresholds, vec![8_000, 5_000], "one reduction, to half the 10-segment window");
        // Reno leaves recovery on the first partial ACK with too little in flight to get three
        // more duplicates: it must wait for the retransmission timer.
        assert!(reno.stats.timeouts >= 1, "{:?}", reno.stats);
        assert_eq!(reno.trace.retx_kind[0], k(RetxKind::Fast));
        // The timer expires one (minimum, 1 s) RTO after the partial ACK at 600 ms restarted it.
        assert_eq!(reno.trace.timeout_time_ns[0], ms(1600).as_nanos());
    }

    #[test]
    fn sack_repairs_four_losses_of_one_window_in_two_round_trips_without_a_timeout() {
        // The window of 10 sent at 400 ms (segments 23..=32) loses 23, 25, 27 and 29. The
        // sink SACKs 24, 26, 28, 30-32 as they arrive at 450 ms; the ACKs return at 500 ms.
        // The first two duplicates send 33 and 34 (Limited Transmit). RFC 6675: the third
        // (SACKing 24, 26, 28) makes 23 lost (three SACKed ranges above it): cwnd = ssthresh =
        // 10 segments / 2 (the Limited Transmit segments left out), RecoveryPoint 35 000, 23
        // retransmitted. Counting 33 and 34, the pipe has room for two more only after the
        // ACK SACKing 32, when 25 and 27 are lost (29 is not yet: two SACKed segments above
        // it). At 600 ms the SACKs of 33 and 34 mark 29 lost: it goes with one new segment.
        // Four losses, two round trips, no timeout; NewReno needs one round trip per loss
        // (newreno_recovers_several_losses_...). Recovery ends at 700 ms.
        let lost = [23_000u64, 25_000, 27_000, 29_000];
        let cfg = TcpConfig { initial_ssthresh_bytes: 8_000, sack: true, ..Default::default() };
        let drop = move |seq: u64, n: u32| lost.contains(&seq) && n == 0;
        let mut pipe = pair(TcpSender::sack(RCV, 5, cfg.clone()), TcpSink::new(cfg), Duration::from_millis(50), drop);
        pipe.run_until(ms(500));
        assert_eq!(pipe.a.agent.trace.retx_seq, lost[..3].to_vec());
        assert_eq!(pipe.a.agent.trace.retx_time_ns, vec![ms(500).as_nanos(); 3]);
        let k = |x: RetxKind| x as u8;
        assert_eq!(pipe.a.agent.trace.retx_kind, vec![k(RetxKind::Fast), k(RetxKind::Sack), k(RetxKind::Sack)]);
        let at_500: Vec<u64> = pipe.a.sent.iter().filter(|(t, _)| *t == ms(500)).map(|(_, p)| p.seq).collect();
        assert_eq!(at_500, vec![33_000, 34_000, 23_000, 25_000, 27_000]);
        assert_eq!(cc_at(&pipe.a.agent.trace, ms(500)), (5_000, 5_000));
        assert!(pipe.a.agent.controller().in_recovery());
        assert_eq!(
            pipe.a.agent.scoreboard(),
            &[(24_000, 25_000), (26_000, 27_000), (28_000, 29_000), (30_000, 33_000)]
        );
        pipe.run_until(ms(600));
        assert_eq!(pipe.a.agent.trace.retx_seq, lost.to_vec());
        assert_eq!(pipe.a.agent.trace.retx_time_ns[3], ms(600).as_nanos());
        assert!(pipe.a.agent.controller().in_recovery());
        pipe.run_until(ms(700));
        assert!(!pipe.a.agent.controller().in_recovery());
        assert!(pipe.a.agent.snd_una() >= 35_000, "{}", pipe.a.agent.snd_una());
        assert_eq!(pipe.a.agent.ssthresh(), 5_000);
        pipe.run_until(ms(3000));
        assert_eq!(
            (pipe.a.agent.stats.timeouts, pipe.a.agent.stats.fast_retransmits, pipe.a.agent.stats.retransmissions),
            (0, 1, 4)
        );
        assert_eq!(pipe.b.agent.stats.duplicates, 0, "nothing SACKed was sent again");
        assert_eq!(pipe.b.agent.received_bytes(), pipe.a.agent.snd_una());
    }

    #[test]
    fn sack_sender_after_a_timeout_skips_what_the_sink_sacks_again() {
        // Segment 23 and its fast retransmission are lost, so the timer fires. RFC 2018 §8:
        // the scoreboard is cleared; the go-back-N that follows resends 23, and the ACK of it
        // jumps over everything the sink holds: no segment reaches the sink twice.
        let cfg = TcpConfig { initial_ssthresh_bytes: 8_000, sack: true, ..Default::default() };
        let (_, snd, snk) = run(
            TcpSender::sack(RCV, 5, cfg.clone()),
            TcpSink::new(cfg),
            Duration::from_millis(50),
            ms(4000),
            |seq, n| seq == 23_000 && n <= 1,
        );
        assert_eq!(snd.stats.timeouts, 1);
        assert_eq!(snk.stats.duplicates, 0);
        assert!(snd.snd_una() > 40_000);
        assert_eq!(snk.received_bytes(), snd.snd_una());
    }

    #[test]
    fn sink_reports_sack_blocks_most_recent_first() {
        // RFC 2018 §4: the first block holds the segment that triggered the ACK; the others
        // repeat the most recently reported blocks; at most three; none without SACK.
        let cfg = TcpConfig { sack: true, ..Default::default() };
        // one segment a millisecond; the ACK it triggers
        let blocks = |d: &mut Driver<TcpSink>, seq: u64| -> (u64, Vec<(u64, u64)>) {
            let before = d.sent.len();
            d.packet(d.now + Duration::from_millis(1), &seg(seq, 0));
            assert_eq!(d.sent.len(), before + 1, "one ack");
            let Header::Tcp(h) = d.sent[before].1.header else { panic!() };
            (h.ack, (0..3).filter_map(|i| h.sack_block(i)).collect())
        };
        let mut s = Driver::start_with(TcpSink::new(cfg), Instant::ZERO, info(RCV));
        assert_eq!(blocks(&mut s, 0), (1000, vec![]));
        assert_eq!(blocks(&mut s, 2000), (1000, vec![(2000, 3000)]));
        assert_eq!(blocks(&mut s, 4000), (1000, vec![(4000, 5000), (2000, 3000)]));
        assert_eq!(blocks(&mut s, 6000), (1000, vec![(6000, 7000), (4000, 5000), (2000, 3000)]));
        assert_eq!(blocks(&mut s, 8000), (1000, vec![(8000, 9000), (6000, 7000), (4000, 5000)]));
        // 3000 joins 2000 and 4000 into one block, reported first
        assert_eq!(blocks(&mut s, 3000), (1000, vec![(2000, 5000), (8000, 9000), (6000, 7000)]));
        // 1000 advances the ACK past the first block: the others remain
        assert_eq!(blocks(&mut s, 1000), (5000, vec![(8000, 9000), (6000, 7000)]));
        let mut plain = Driver::start_with(TcpSink::new(TcpConfig::default()), Instant::ZERO, info(RCV));
        assert_eq!(blocks(&mut plain, 2000), (0, vec![]));
    }

    #[test]
    fn a_loss_in_a_three_segment_window_is_fast_retransmitted_with_limited_transmit_not_timed_out() {
        // cwnd = ssthresh = 3 segments (0, 1, 2 at t = 0); the first transmission of segment 1
        // is lost. At 100 ms the ACK of 0 sends segment 3 and the ACK of 2 is the first
        // duplicate; at 200 ms the ACK of 3 is the second. Two duplicates are too few for fast
        // retransmit. RFC 3042 §2 (RFC 5681 §3.2 step 1): each of them sends one new segment
        // (4 at 100 ms, 5 at 200 ms), cwnd unchanged, FlightSize <= cwnd + 2 SMSS; the ACK of 4
        // (200 ms) is the third duplicate and segment 1 is fast retransmitted at 200 ms instead
        // of waiting for the 1 s timer. ssthresh leaves the Limited Transmit segments out of
        // FlightSize (RFC 5681 §3.2 step 2): max(3 SMSS / 2, 2 SMSS) = 2 SMSS. Without Limited
        // Transmit (ns-2's singledup_ 0) the same loss costs a timeout.
        for newreno in [false, true] {
            let cfg = TcpConfig { initial_window_segs: 3, initial_ssthresh_bytes: 3_000, ..Default::default() };
            let lose = |seq: u64, n: u32| seq == 1_000 && n == 0;
            let (sent, snd, _) =
                run(sender(newreno, cfg.clone()), TcpSink::new(cfg.clone()), Duration::from_millis(50), ms(400), lose);
            let at = |t: u64| -> Vec<u64> { sent.iter().filter(|(x, _)| *x == ms(t)).map(|(_, p)| p.seq).collect() };
            assert_eq!(at(100), vec![3_000, 4_000], "newreno={newreno}");
            assert_eq!(at(200), vec![5_000, 1_000], "Limited Transmit, then the fast retransmission");
            assert_eq!(cc_at(&snd.trace, ms(100)), (3_000, 3_000), "cwnd unchanged by Limited Transmit");
            assert_eq!(snd.stats.timeouts, 0, "newreno={newreno}");
            assert_eq!(snd.trace.retx_seq, vec![1_000]);
            assert_eq!(snd.trace.retx_kind, vec![RetxKind::Fast as u8]);
            assert_eq!(snd.trace.retx_time_ns, vec![ms(200).as_nanos()]);
            assert_eq!(cc_at(&snd.trace, ms(200)).1, 2_000, "ssthresh from 3 segments, not 5");

            let off = TcpConfig { limited_transmit: false, ..cfg };
            let (sent, snd, _) =
                run(sender(newreno, off.clone()), TcpSink::new(off), Duration::from_millis(50), ms(1400), lose);
            let at_100: Vec<u64> = sent.iter().filter(|(x, _)| *x == ms(100)).map(|(_, p)| p.seq).collect();
            assert_eq!(at_100, vec![3_000], "nothing sent on the duplicate");
            // The ACK of 0 at 100 ms restarted the 1 s timer (RFC 6298 §5.3).
            assert_eq!(snd.trace.timeout_time_ns, vec![ms(1100).as_nanos()], "newreno={newreno}");
            assert_eq!(snd.stats.fast_retransmits, 0);
        }
    }

    #[test]
    fn timeout_in_fast_recovery_halves_the_uninflated_window_not_the_inflated_flight() {
        // Segment 23 000 is lost and so is its fast retransmission. Every duplicate ACK then
        // inflates cwnd and lets a new segment out, for a whole RTO, so snd_max - snd_una ends
        // far above the 5-segment recovery window. The timeout must halve that window
        // (ssthresh 5 000 -> 2 500), not the inflated FlightSize (RFC 5681 §3.1: "no more than"
        // eq. (4)).
        for newreno in [false, true] {
            let cfg = TcpConfig { initial_ssthresh_bytes: 8_000, ..Default::default() };
            let (_, snd, _) =
                run(sender(newreno, cfg.clone()), TcpSink::new(cfg), Duration::from_millis(50), ms(1400), |seq, n| {
                    seq == 23_000 && n <= 1
                });
            assert_eq!(snd.stats.timeouts, 1, "newreno={newreno}");
            let at = snd.trace.timeout_time_ns[0];
            assert!(snd.snd_max() > 23_000 + 20 * 1000, "the inflated recovery sent plenty: {}", snd.snd_max());
            let mut thresholds: Vec<u64> = snd
                .trace
                .cc_time_ns
                .iter()
                .zip(&snd.trace.ssthresh_bytes)
                .filter(|(t, _)| **t <= at)
                .map(|(_, s)| *s)
                .collect();
            thresholds.dedup();
            assert_eq!(thresholds, vec![8_000, 5_000, 2_500], "newreno={newreno}");
        }
    }

    #[test]
    fn rto_backs_off_exponentially_up_to_the_maximum() {
        // Nothing ever arrives. RFC 6298: first RTO 1 s (§2.1), doubled at each expiry (§5.5),
        // capped at 60 s (§2.5); each expiry resends the first segment (§5.4).
        let cfg = TcpConfig::default();
        let (sent, snd, _) = run(
            TcpSender::reno(RCV, 5, cfg.clone()),
            TcpSink::new(cfg),
            Duration::from_millis(50),
            Instant::from_secs_f64(200.0),
            |_, _| true,
        );
        let s = |x: u64| x * 1_000_000_000;
        assert_eq!(snd.trace.timeout_time_ns, vec![s(1), s(3), s(7), s(15), s(31), s(63), s(123), s(183)]);
        assert_eq!(snd.trace.timeout_rto_ns, vec![s(1), s(2), s(4), s(8), s(16), s(32), s(60), s(60)]);
        assert_eq!(snd.trace.retx_seq, vec![0; 8]);
        assert!(snd.trace.retx_kind.iter().all(|&k| k == RetxKind::Timeout as u8));
        // The loss window is one segment (RFC 5681 §3.1): IW of 2, then one per expiry.
        assert_eq!(sent.len(), 2 + 8);
        assert_eq!(snd.cwnd(), 1000);
        assert_eq!(snd.ssthresh(), 2000);
    }

    #[test]
    fn karn_no_rtt_sample_from_a_retransmitted_segment() {
        // Segment 0 is lost once; segment 1 alone gives one duplicate ACK, so the timer
        // recovers it at 1 s (RTO backs off to 2 s). Its ACK at 1.1 s covers retransmitted data
        // and gives no sample; the first sample comes from new data, acknowledged at 1.2 s.
        let cfg = TcpConfig { timestamps: false, ..Default::default() };
        let drop = |seq: u64, n: u32| seq == 0 && n == 0;
        let mut pipe =
            pair(TcpSender::newreno(RCV, 5, cfg.clone()), TcpSink::new(cfg), Duration::from_millis(50), drop);
        pipe.run_until(ms(1150));
        assert_eq!(pipe.a.agent.trace.timeout_time_ns, vec![ms(1000).as_nanos()]);
        assert_eq!(pipe.a.agent.snd_una(), 2000);
        assert!(pipe.a.agent.trace.rtt_ns.is_empty(), "{:?}", pipe.a.agent.trace.rtt_ns);
        assert_eq!(pipe.a.agent.rtt_estimator().rto(), Duration::from_secs(2), "the backed-off RTO stays");
        pipe.run_until(ms(1250));
        assert_eq!(pipe.a.agent.trace.rtt_time_ns.first(), Some(&ms(1200).as_nanos()));
        assert_eq!(pipe.a.agent.trace.rtt_ns[0], 100_000_000);
        assert_eq!(pipe.a.agent.rtt_estimator().rto(), Duration::from_secs(1));
    }

    #[test]
    fn timestamps_give_a_sample_from_a_retransmitted_segment() {
        // The same loss as above with timestamps on (the default): the ACK at 1.1 s echoes the
        // retransmission's timestamp (1.0 s), so it is an unambiguous 100 ms sample (RFC 7323
        // §4.1) and the backed-off RTO falls back to the 1 s floor at once, not at 1.2 s.
        let cfg = TcpConfig::default();
        assert!(cfg.timestamps);
        let drop = |seq: u64, n: u32| seq == 0 && n == 0;
        let mut pipe =
            pair(TcpSender::newreno(RCV, 5, cfg.clone()), TcpSink::new(cfg), Duration::from_millis(50), drop);
        pipe.run_until(ms(1150));
        assert_eq!(pipe.a.agent.trace.timeout_time_ns, vec![ms(1000).as_nanos()]);
        assert_eq!(pipe.a.agent.trace.rtt_time_ns.last(), Some(&ms(1100).as_nanos()));
        assert_eq!(pipe.a.agent.trace.rtt_ns.last(), Some(&100_000_000));
        assert_eq!(pipe.a.agent.rtt_estimator().rto(), Duration::from_secs(1));
    }

    #[test]
    fn a_handshake_rtt_is_the_first_sample_and_the_floor_of_min_rtt() {
        // Linux's settings: RTO = SRTT + max(200 ms, 4·RTTVAR) = 5 + 200 ms after the SYN-ACK's
        // 5 ms sample; the first data ACK (100 ms RTT and the pacing of the segment it answers)
        // does not raise the minimum
        let cfg = TcpConfig { handshake_rtt: Some(Duration::from_millis(5)), ..TcpConfig::linux() };
        let mut pipe =
            pair(TcpSender::bbr(RCV, 5, cfg.clone()), TcpSink::new(cfg), Duration::from_millis(50), |_, _| false);
        pipe.run_until(ms(1));
        let snd = &pipe.a.agent;
        assert_eq!(snd.rtt_estimator().srtt(), Some(Duration::from_millis(5)));
        assert_eq!(snd.rtt_estimator().rto(), Duration::from_millis(205));
        assert_eq!((snd.trace.rtt_time_ns.clone(), snd.trace.rtt_ns.clone()), (vec![0], vec![5_000_000]));
        pipe.run_until(ms(150));
        assert!(pipe.a.agent.trace.rtt_ns.get(1).is_some_and(|&r| r >= 100_000_000));
        assert_eq!(pipe.a.agent.min_rtt(), Some(Duration::from_millis(5)));
        // without one, the first sample is the first data ACK's
        let cfg = TcpConfig::linux();
        let mut pipe =
            pair(TcpSender::bbr(RCV, 5, cfg.clone()), TcpSink::new(cfg), Duration::from_millis(50), |_, _| false);
        pipe.run_until(ms(150));
        assert!(pipe.a.agent.trace.rtt_ns.first().is_some_and(|&r| r >= 100_000_000));
        assert!(pipe.a.agent.min_rtt().is_some_and(|r| r >= Duration::from_millis(100)));
        let zero = TcpConfig { handshake_rtt: Some(Duration::ZERO), ..TcpConfig::linux() };
        assert!(zero.validate().is_err());
    }

    #[test]
    fn rtt_estimator_follows_rfc_6298() {
        let cfg = TcpConfig { min_rto: Duration::from_millis(200), ..Default::default() };
        let mut e = RttEstimator::new(&cfg);
        assert_eq!(e.rto(), Duration::from_secs(1), "§2.1 initial RTO");
        e.sample(Duration::from_millis(100));
        // §2.2: SRTT = 100, RTTVAR = 50, RTO = 100 + 4·50 = 300 ms.
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        assert_eq!(e.rto(), Duration::from_millis(300));
        e.sample(Duration::from_millis(200));
        // §2.3: RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5;
        // RTO = 112.5 + 4·62.5 = 362.5 ms.
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.rto(), Duration::from_micros(362_500));
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60), "§2.5 cap");
        // §2.4: the default floor is 1 s.
        let mut d = RttEstimator::new(&TcpConfig::default());
        d.sample(Duration::from_millis(100));
        assert_eq!(d.rto(), Duration::from_secs(1));
    }

    fn seg(seq: u64, ts: u64) -> Packet {
        let mut p = Packet::data(Dest::Unicast(RCV), 1040);
        p.src = SND;
        p.flow = 5;
        p.seq = seq;
        p.header = Header::Tcp(TcpHeader { flags: TcpHeader::DATA, payload: 1000, ts_val: ts, ..Default::default() });
        p
    }

    /// The ACKs (ack, echoed timestamp) the sink sent since the last call (`seen` of them
    /// were read before).
    fn acks(d: &Driver<TcpSink>, seen: &mut usize) -> Vec<(u64, u64)> {
        let out = d.sent[*seen..]
            .iter()
            .map(|(_, p)| {
                assert_eq!(p.dst, Dest::Unicast(SND));
                assert_eq!(p.size_bytes, 40);
                let Header::Tcp(h) = p.header else { panic!("not tcp") };
                assert_eq!(h.flags, TcpHeader::ACK);
                (h.ack, h.ts_ecr)
            })
            .collect();
        *seen = d.sent.len();
        out
    }

    #[test]
    fn sink_delayed_acks_every_second_segment_or_on_timer() {
        let cfg = TcpConfig { delayed_ack: true, ..Default::default() };
        let mut s = Driver::start_with(TcpSink::new(cfg), Instant::ZERO, info(RCV));
        let k = &mut 0;
        s.packet(ms(0), &seg(0, 7));
        assert_eq!(acks(&s, k), vec![]);
        assert_eq!(s.agent.poll_timeout(), Some(ms(200)));
        s.packet(ms(10), &seg(1000, 8));
        // RFC 5681 §4.2: every second segment; the echo is the earliest unacknowledged one's.
        assert_eq!(acks(&s, k), vec![(2000, 7)]);
        assert_eq!(s.agent.poll_timeout(), None);
        s.packet(ms(20), &seg(2000, 9));
        assert_eq!(acks(&s, k), vec![]);
        assert_eq!(s.agent.poll_timeout(), Some(ms(220)));
        s.advance_to(ms(220));
        assert_eq!(acks(&s, k), vec![(3000, 9)], "timer ACK");
        assert_eq!(s.sent.last().map(|x| x.0), Some(ms(220)));
        // Out of order: immediate duplicate ACK; filling the hole: immediate ACK past it.
        s.packet(ms(300), &seg(4000, 11));
        assert_eq!(acks(&s, k), vec![(3000, 9)]);
        s.packet(ms(310), &seg(3000, 10));
        assert_eq!(acks(&s, k), vec![(5000, 10)]);
        // A duplicate segment: immediate ACK.
        s.packet(ms(320), &seg(0, 12));
        assert_eq!(acks(&s, k), vec![(5000, 12)]);
        assert_eq!(s.agent.poll_timeout(), None);
        assert_eq!((s.agent.stats.duplicates, s.agent.stats.out_of_order, s.agent.stats.acks_sent), (1, 1, 5));
        assert_eq!(s.agent.trace.rx_bytes, vec![1000, 2000, 3000, 5000]);
    }

    #[test]
    fn sink_quick_ack_mode_acks_the_first_segments_and_those_after_a_long_gap_at_once() {
        // Linux's receiver: 2 quick ACKs after the first segment or a gap over 100 ms between
        // in-order segments, delayed ACKs otherwise
        let cfg = TcpConfig {
            delayed_ack: true,
            quickack: true,
            quickacks: 2,
            quickack_gap: Duration::from_millis(100),
            ..Default::default()
        };
        let mut s = Driver::start_with(TcpSink::new(cfg), Instant::ZERO, info(RCV));
        let k = &mut 0;
        let mut at = |s: &mut Driver<TcpSink>, t: u64, sq: u64| {
            s.packet(ms(t), &seg(sq, t));
            acks(s, k).into_iter().map(|a| a.0).collect::<Vec<_>>()
        };
        // the first two segments: one ACK each; then every second segment
        assert_eq!(at(&mut s, 0, 0), vec![1000]);
        assert_eq!(at(&mut s, 10, 1000), vec![2000]);
        assert_eq!(at(&mut s, 20, 2000), vec![]);
        assert_eq!(at(&mut s, 30, 3000), vec![4000]);
        // 100 ms after the last segment is no gap yet; a delayed ACK is due at 240 ms
        assert_eq!(at(&mut s, 130, 4000), vec![]);
        // 101 ms after it: quick again, for two ACKs (the first covers the segment held back)
        assert_eq!(at(&mut s, 231, 5000), vec![6000]);
        assert_eq!(at(&mut s, 241, 6000), vec![7000]);
        assert_eq!(at(&mut s, 251, 7000), vec![]);
        assert_eq!(at(&mut s, 261, 8000), vec![9000]);
        // out-of-order segments neither start it nor are its clock: the hole-filling segment
        // after a long wait does (Linux times the gap from the last in-order segment)
        assert_eq!(at(&mut s, 300, 10000), vec![9000]);
        assert_eq!(at(&mut s, 400, 9000), vec![11000]);
        assert_eq!(at(&mut s, 410, 11000), vec![12000], "quick: the hole filled 139 ms after 8000");
        assert_eq!(at(&mut s, 420, 12000), vec![]);
        // a duplicate segment: quick again, its own ACK the first of the two
        assert_eq!(at(&mut s, 430, 0), vec![13000]);
        assert_eq!(at(&mut s, 440, 13000), vec![14000]);
        assert_eq!(at(&mut s, 450, 14000), vec![]);
        assert_eq!(at(&mut s, 460, 15000), vec![16000]);
        // off (the default): the first segment waits for the timer
        let off = TcpConfig { delayed_ack: true, ..Default::default() };
        let mut s = Driver::start_with(TcpSink::new(off), Instant::ZERO, info(RCV));
        s.packet(ms(0), &seg(0, 1));
        assert!(s.sent.is_empty());
    }

    #[test]
    fn sink_with_push_acks_a_pushed_or_short_segment_at_once() {
        // Linux 6.6 and later: a full-sized segment with PSH, or any shorter one, sets
        // ICSK_ACK_PUSHED, and the read that empties the queue sends the ACK
        let cfg = TcpConfig { delayed_ack: true, push: true, ..Default::default() };
        let pushed = |sq: u64, ts: u64| {
            let mut p = seg(sq, ts);
            if let Header::Tcp(h) = &mut p.header {
                h.flags |= TcpHeader::PSH;
            }
            p
        };
        let mut s = Driver::start_with(TcpSink::new(cfg), Instant::ZERO, info(RCV));
        let k = &mut 0;
        s.packet(ms(0), &pushed(0, 1));
        assert_eq!(acks(&s, k), vec![(1000, 1)], "a pushed full segment: at once");
        s.packet(ms(10), &seg(1000, 2));
        assert_eq!(acks(&s, k), vec![], "not pushed: held");
        s.packet(ms(20), &pushed(2000, 3));
        assert_eq!(acks(&s, k), vec![(3000, 2)], "the second segment, pushed or not");
        s.packet(ms(30), &seg(3000, 4));
        s.advance_to(ms(229));
        assert_eq!(acks(&s, k), vec![]);
        s.advance_to(ms(230));
        assert_eq!(acks(&s, k), vec![(4000, 4)], "the timer, 200 ms on");
        let mut short = seg(4000, 5);
        short.size_bytes = 540;
        if let Header::Tcp(h) = &mut short.header {
            h.payload = 500;
        }
        s.packet(ms(300), &short);
        assert_eq!(acks(&s, k), vec![(4500, 5)], "a short segment: at once");
        // with data out of order the read does not empty the queue: held as before, and
        // the hole's filling is ACKed at once (RFC 5681 §4.2)
        s.packet(ms(310), &seg(5500, 6));
        assert_eq!(acks(&s, k), vec![(4500, 5)]);
        s.packet(ms(320), &pushed(4500, 7));
        assert_eq!(acks(&s, k), vec![(6500, 7)]);
        // push off (the default): the pushed segment waits for the timer
        let off = TcpConfig { delayed_ack: true, ..Default::default() };
        let mut s = Driver::start_with(TcpSink::new(off), Instant::ZERO, info(RCV));
        s.packet(ms(0), &pushed(0, 1));
        assert!(s.sent.is_empty());
    }

    fn is_pushed(p: &Packet) -> bool {
        matches!(p.header, Header::Tcp(h) if h.flags & TcpHeader::PSH != 0)
    }

    #[test]
    fn push_marks_the_last_segment_of_each_burst_the_window_lets_out() {
        // IW 2, slow start over a 100 ms RTT, an ACK per segment: the initial window at 0,
        // then each ACK of one segment frees two (4 at 100 ms, 8 at 200 ms), sent as it is
        // read. Each pair fills the window: its second segment is pushed, no other is; and
        // without push none is.
        let cfg = TcpConfig { push: true, ..Default::default() };
        let (sent, _, _) =
            run(sender(true, cfg), TcpSink::new(TcpConfig::default()), Duration::from_millis(50), ms(250), |_, _| {
                false
            });
        let marks: Vec<(Instant, Vec<bool>)> = rounds(&sent)
            .iter()
            .map(|&(t, _)| (t, sent.iter().filter(|(u, _)| *u == t).map(|(_, p)| is_pushed(p)).collect()))
            .collect();
        let sizes: Vec<usize> = marks.iter().map(|(_, m)| m.len()).collect();
        assert_eq!(sizes, vec![2, 4, 8]);
        for (t, m) in &marks {
            let want: Vec<bool> = (0..m.len()).map(|k| k % 2 == 1).collect();
            assert_eq!(m, &want, "at {t:?}");
        }
        let (off, _, _) = run(
            sender(true, TcpConfig::default()),
            TcpSink::new(TcpConfig::default()),
            Duration::from_millis(50),
            ms(250),
            |_, _| false,
        );
        assert!(off.iter().all(|(_, p)| !is_pushed(p)));
    }

    #[test]
    fn push_marks_each_skb_end_under_skb_pacing() {
        // skb_pacing_sends_pairs_back_to_back_and_paces_each_pair's departures: ten unpaced
        // segments in skbs of 2, then a pair every 2 ms; each skb's second segment is pushed
        let cfg = TcpConfig { skb_pacing: true, push: true, ..Default::default() };
        let cc = Box::new(Fixed { cwnd: 100_000, rate: 1e6 });
        let (sent, _, _) = run(
            TcpSender::new(RCV, 5, cfg.clone(), cc),
            TcpSink::new(cfg),
            Duration::from_millis(50),
            ms(49),
            |_, _| false,
        );
        assert_eq!(sent.len(), 58);
        for (k, (t, p)) in sent.iter().enumerate() {
            assert_eq!(is_pushed(p), k % 2 == 1, "segment {k} at {t:?}");
        }
    }

    #[test]
    fn push_leaves_loss_recovery_unmarked() {
        // The second segment of the initial window is lost; three later ACKs carry SACK blocks
        // and RFC 6675 recovery resends it: the retransmission is not pushed.
        let cfg = TcpConfig { push: true, sack: true, initial_window_segs: 10, ..Default::default() };
        let (sent, snd, _) = run(
            TcpSender::sack(RCV, 5, cfg.clone()),
            TcpSink::new(cfg),
            Duration::from_millis(50),
            ms(400),
            |seq, n| seq == 1000 && n == 0,
        );
        assert_eq!(snd.stats.fast_retransmits, 1);
        let resent: Vec<&Packet> = sent.iter().filter(|(_, p)| p.seq == 1000).map(|(_, p)| p).skip(1).collect();
        assert_eq!(resent.len(), 1);
        assert!(!is_pushed(resent[0]));
    }

    #[test]
    fn sink_without_delay_acks_each_segment_and_merges_holes() {
        let mut s = Driver::start_with(TcpSink::new(TcpConfig::default()), Instant::ZERO, info(RCV));
        let k = &mut 0;
        let mut got = Vec::new();
        for (i, sq) in [0u64, 2000, 4000, 3000, 1000, 5000].into_iter().enumerate() {
            s.packet(ms(i as u64), &seg(sq, i as u64));
            got.extend(acks(&s, k).into_iter().map(|a| a.0));
        }
        assert_eq!(got, vec![1000, 1000, 1000, 1000, 5000, 6000]);
        assert_eq!(s.agent.poll_timeout(), None);
        // A packet of another connection or without a TCP header is counted and ignored.
        let mut other = seg(6000, 0);
        other.flow = 6;
        s.packet(ms(9), &other);
        s.packet(ms(9), &Packet::data(Dest::Unicast(RCV), 100));
        assert_eq!(acks(&s, k), vec![]);
        assert_eq!(s.agent.stats.ignored, 2);
        assert_eq!(s.agent.received_bytes(), 6000);
    }

    #[test]
    fn fixed_size_transfer_completes_with_fin() {
        // 10 500 bytes = 10 full segments + 500: rounds of 2, 4, then the last 5 at 200 ms.
        let cfg = TcpConfig { transfer: Transfer::Bytes(10_500), ..Default::default() };
        let (sent, snd, snk) = run(
            TcpSender::newreno(RCV, 5, cfg.clone()),
            TcpSink::new(cfg),
            Duration::from_millis(50),
            Instant::from_secs_f64(100.0),
            |_, _| false,
        );
        assert_eq!(rounds(&sent).iter().map(|r| r.1).collect::<Vec<_>>(), vec![2, 4, 5]);
        let last = sent.last().unwrap().1;
        let Header::Tcp(h) = last.header else { panic!() };
        assert_eq!((last.seq, h.payload, last.size_bytes), (10_000, 500, 540));
        assert!(h.flags & TcpHeader::FIN != 0);
        assert!(sent[..sent.len() - 1]
            .iter()
            .all(|(_, p)| matches!(p.header, Header::Tcp(h) if h.flags & TcpHeader::FIN == 0)));
        assert_eq!(snd.completed_at(), Some(ms(300)));
        assert_eq!(snk.fin_at(), Some(ms(250)));
        assert_eq!(snk.received_bytes(), 10_500);
        assert_eq!(snd.stats.payload_bytes_sent, 10_500);
        assert_eq!(snd.poll_timeout(), None, "no timer left once done");
        assert_eq!(snd.trace.acked_between(0, ms(300).as_nanos()), 10_500);
    }

    #[test]
    fn start_and_stop_times_bound_new_data() {
        let cfg = TcpConfig { start: ms(1000), stop: ms(1350), ..Default::default() };
        let (sent, snd, _) = run(
            TcpSender::reno(RCV, 5, cfg.clone()),
            TcpSink::new(cfg),
            Duration::from_millis(50),
            Instant::from_secs_f64(10.0),
            |_, _| false,
        );
        let r = rounds(&sent);
        assert_eq!(r, vec![(ms(1000), 2), (ms(1100), 4), (ms(1200), 8), (ms(1300), 16)]);
        assert_eq!(snd.snd_una(), 30_000);
        assert_eq!(snd.poll_timeout(), None);
    }

    #[test]
    fn sender_ignores_what_is_not_a_valid_ack() {
        let cfg = TcpConfig::default();
        let mut d = Driver::start_with(TcpSender::reno(RCV, 5, cfg), Instant::ZERO, info(SND));
        let mut a = Packet::data(Dest::Unicast(SND), 40);
        a.flow = 5;
        a.header = Header::Tcp(TcpHeader { ack: 5000, flags: TcpHeader::ACK, wnd: 1 << 20, ..Default::default() });
        d.packet(ms(1), &a); // acknowledges bytes never sent
        d.packet(ms(1), &Packet::data(Dest::Unicast(SND), 40));
        let snd = &d.agent;
        assert_eq!(snd.stats.ignored, 2);
        assert_eq!(snd.snd_una(), 0);
        assert_eq!(snd.cwnd(), 2000);
    }

    /// A controller with a fixed window and a fixed pacing rate (payload bytes/s).
    #[derive(Debug)]
    struct Fixed {
        cwnd: u64,
        rate: f64,
    }

    impl CongestionControl for Fixed {
        fn name(&self) -> &'static str {
            "fixed"
        }
        fn cwnd(&self) -> u64 {
            self.cwnd
        }
        fn ssthresh(&self) -> u64 {
            self.cwnd
        }
        fn in_recovery(&self) -> bool {
            false
        }
        fn on_new_ack(&mut self, _a: &AckInfo) -> AckResponse {
            AckResponse { retransmit: false, restart_rto: true }
        }
        fn on_dup_ack(&mut self, _a: &AckInfo, _n: u32) -> AckResponse {
            AckResponse { retransmit: false, restart_rto: false }
        }
        fn on_timeout(&mut self, _to: &TimeoutInfo) {}
        fn pacing_rate(&self) -> Option<f64> {
            Some(self.rate)
        }
    }

    /// Paced at 10^6 payload bytes/s (1 ms per 1000-byte segment), a window of `cwnd_segs`,
    /// Linux's skb pacing on.
    fn skb_paced(cwnd_segs: u64, handshake_rtt: Option<Duration>) -> (TcpSender, TcpSink) {
        let cfg = TcpConfig { skb_pacing: true, handshake_rtt, ..Default::default() };
        let cc = Box::new(Fixed { cwnd: cwnd_segs * 1000, rate: 1e6 });
        (TcpSender::new(RCV, 5, cfg.clone(), cc), TcpSink::new(cfg))
    }

    fn us(x: u64) -> Instant {
        Instant::from_nanos(x * 1000)
    }

    #[test]
    fn skb_pacing_sends_pairs_back_to_back_and_paces_each_pair() {
        // tcp_tso_autosize at 10^6 B/s: 10^6 / 1024 = 976 bytes, under one segment, and the min
        // RTT (100 ms) adds nothing (100,000 µs >> 9 is past 31): skbs of min_tso_segs = 2. The
        // first 10 segments are not paced (data_segs_out < 10 before the fifth skb); from then
        // each skb of 2,000 bytes holds the next back by 2 ms.
        let (snd, snk) = skb_paced(100, None);
        let (sent, _, _) = run(snd, snk, Duration::from_millis(50), ms(49), |_, _| false);
        let mut want = vec![(ms(0), 10)];
        want.extend((1..=24).map(|k| (ms(2 * k), 2)));
        assert_eq!(rounds(&sent), want);
    }

    #[test]
    fn skb_pacing_halves_the_first_gap_after_the_sender_fell_behind() {
        // A window of 10 goes at 0 (unpaced) and sets the next departure at 2 ms; the window
        // then holds the sender until the ACKs come back at 100 ms, 98 ms behind its schedule.
        // The first ACK frees one segment: an skb of 1 at 100 ms, whose 1 ms loses half to that
        // credit (tcp_update_skb_after_send). The other nine ACKs of the instant wait for
        // 100.5 ms; from there skbs of 2 every 2 ms, then the last segment the window allows.
        let (snd, snk) = skb_paced(10, None);
        let (sent, _, _) = run(snd, snk, Duration::from_millis(50), ms(150), |_, _| false);
        assert_eq!(
            rounds(&sent),
            vec![
                (ms(0), 10),
                (ms(100), 1),
                (us(100_500), 2),
                (us(102_500), 2),
                (us(104_500), 2),
                (us(106_500), 2),
                (us(108_500), 1)
            ]
        );
    }

    #[test]
    fn skb_pacing_sizes_skbs_by_the_min_rtt() {
        // With a handshake RTT of 1 ms the min RTT is 1,000 µs: 1,000 >> 9 = 1, so an skb may
        // take 976 + 65,536 / 2 = 33,744 bytes, 33 segments. Each 33-segment skb holds the next
        // back by 33 ms; the window of 100 leaves one segment for the fourth.
        let (snd, snk) = skb_paced(100, Some(Duration::from_millis(1)));
        let (sent, _, _) = run(snd, snk, Duration::from_millis(50), ms(99), |_, _| false);
        assert_eq!(rounds(&sent), vec![(ms(0), 33), (ms(33), 33), (ms(66), 33), (ms(99), 1)]);
    }

    #[test]
    fn skb_pacing_caps_an_skb_at_half_the_window() {
        // The same 33-segment skbs as above, in a window of 20: tcp_cwnd_test lets one skb take
        // at most half of it, 10 segments. The first skb goes unpaced (the sender's first 10
        // segments) and sets the next departure 10 ms on; the window is full after the second.
        let (snd, snk) = skb_paced(20, Some(Duration::from_millis(1)));
        let (sent, _, _) = run(snd, snk, Duration::from_millis(50), ms(99), |_, _| false);
        assert_eq!(rounds(&sent), vec![(ms(0), 10), (ms(10), 10)]);
    }

    #[test]
    fn without_skb_pacing_each_segment_is_paced_on_its_own() {
        let cfg = TcpConfig::default();
        let cc = Box::new(Fixed { cwnd: 100_000, rate: 1e6 });
        let (sent, _, _) = run(
            TcpSender::new(RCV, 5, cfg.clone(), cc),
            TcpSink::new(cfg),
            Duration::from_millis(50),
            ms(20),
            |_, _| false,
        );
        assert_eq!(rounds(&sent), (0..=20).map(|k| (ms(k), 1)).collect::<Vec<_>>());
    }
}
