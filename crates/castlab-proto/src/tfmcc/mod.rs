//! TFMCC, TCP-Friendly Multicast Congestion Control: Widmer and Handley, RFC 4654 (August
//! 2006), with TFRC's loss intervals (RFC 4654 §5, as RFC 5348 §5).
//!
//! A single-rate scheme: one sender multicasts data at rate X to one group; every receiver
//! measures its loss event rate p (§5) and its RTT R to the sender (§4.3.2, §4.3.3) and
//! computes the TCP-friendly rate X_r of equation (1) (§2.1, §4.4), or twice its receive rate
//! before its first loss (§4.3.4, slowstart §3.6). The sender follows the receiver with the
//! lowest rate, the current limiting receiver (CLR, §3.3). Receivers report in feedback rounds
//! of T = 6·R_max with exponentially biased random timers, cancelled by the suppression rate
//! the sender echoes (§3.4, §4.5); the CLR reports once per RTT outside that process.
//!
//! * [`TfmccSender`] (`sender.rs`): rate, CLR, R_max, feedback rounds and the suppression
//!   rate, timestamp echoes with their priorities (§3.5), no-feedback halvings (§3.3).
//! * [`TfmccReceiver`] (`receiver.rs`): loss detection and loss events (`loss.rs`, §5), RTT
//!   and one-way adjustments, desired rate, feedback timers and suppression.
//!
//! # Where the RFC is loose (our readings)
//!
//! * **Wire format** (§2.2 leaves it to the transport): data and feedback travel in
//!   `Header::Control` with kinds [`TFMCC_DATA_KIND`] and [`TFMCC_FEEDBACK_KIND`], laid out
//!   in [`DataHeader`] and [`FeedbackHeader`]. Timestamps are the sender's or receiver's own
//!   clock in microseconds, 32 bits wrapping ([`micros`]; the RFC asks for at least 16 bits
//!   of milliseconds); rates are floats (the RFC's 12-bit float is a size optimisation); R_max
//!   takes the RFC's 8-bit float, rounded up ([`rtt_on_the_wire`]); the
//!   feedback round counter is 8 bits (the RFC asks for at least 4). The receiver ID is the
//!   receiver's address (§2.2.2: "it may simply be the IP address").
//! * **Feedback is unicast to the sender** (the SSM case of §1.2 and §4.5), so T is 6·R_max
//!   (§3.4) and only the sender's suppression rate suppresses feedback. Receivers learn the
//!   sender's address from its data packets.
//! * **"RTT" in the no-feedback rules of §3.3** is the CLR's last instantaneous RTT as the
//!   sender measured it (R_max with no CLR), but at least one packet interval 8s/X: a
//!   receiver cannot report more often than packets reach it (TFRC's nofeedback timer takes
//!   the same floor, RFC 5348 §4.3). The rate halves once per CLR silence of 4 such RTTs
//!   (unless the CLR was chosen less than 10 ago); after 10 the CLR is dropped, and every 10
//!   without any feedback halve it again, down to one packet per 8 s.
//! * **Increases** outside slowstart (§3.3 cases 1 and 4): X ← min(X_r, X + 8s/R_max), at
//!   most once per R_max. Case 4 gives the step per CLR report, and the CLR reports once per
//!   its own RTT (§4.5), which may be far below R_max; case 1 and §3.3's sentence on recovery
//!   give the rate, "8s/R_max bits/s every R_max", and we take that as the bound. (§3.6 calls
//!   the same bound "8s/R_max bits/s every RTT"; R_max is the RTT of the slowest receiver.) A
//!   report below X lowers it at once.
//!   In slowstart (§3.6) the rate rises towards the lowest reported rate (the CLR's, or a
//!   lower one from another receiver in the same feedback round), or by 8s/R_max once
//!   per R_max when that is more, "gradually over an RTT": linearly in
//!   `slowstart_ramp_steps` equal steps over the CLR's RTT as the sender measured it (R_max
//!   without a CLR), each step rescheduling the next packet. A report below the current
//!   rate lowers it at once (its receiver then receives less than half of X) and ends the
//!   increase, as do the end of slowstart and any other rate change.
//! * **A rate change reschedules the next packet** at the last send time plus the new
//!   interval (§3.7 computes each interval at send time; without this a sender at one
//!   packet per 500 ms would take 500 ms to notice a tenfold increase).
//! * **Loss detection** (§5.1): a packet is lost once three later packets have arrived; a
//!   late packet arriving after that does not undo the loss (the RFC allows recalculating).
//! * **History discounting** (§5.5, RFC 5348 §5.5) is on by default. The general factor DF
//!   weighs the closed intervals against I_0 in the average that includes I_0 (in the
//!   average over I_1..I_n alone a common factor cancels), as in ns-2's TFRC receiver: that
//!   is what the mechanism is for, more weight on a long loss-free interval.
//! * **Receive rate** (§4.3.4): bits received over the last k RTTs divided by k RTTs, k = 2
//!   (the RFC recommends 2 to 4). The rate at the first loss (§5.6) is measured over the
//!   last RTT, and have_loss clears after 10 RTTs without data (§4.3.1). In these three
//!   counts the RTT is the receiver's own (R' between measurements, R_max before the first,
//!   §4.1), as the RFC writes. When packets are further apart than k RTTs the receive rate
//!   reads 0 or one packet per k RTTs depending on when it is read; `windows_over_rmax`
//!   (not the RFC) counts over max(R, R_max) instead, which §3.2 keeps above the packet
//!   interval.
//! * **Leaving** (§2.2.2's receiver_leave, §3.3 case 3): a receiver leaves at a time it is
//!   given (the scenario's `leave`), or when told to stop (`Agent::handle_shutdown`: a signal to
//!   `castlab net tfmcc-receiver`, or the end of its run). Only the CLR tells the sender, with
//!   one last report with the flag set; other receivers leave silently, since their leaving changes nothing at the sender. The sender never makes a
//!   leaving receiver the CLR nor lets its rate lower X_supp; when the CLR leaves, the sender
//!   has no CLR until the next report, whose receiver becomes the CLR, lowering X at once if
//!   its rate is lower, and X does not increase for one feedback round (T) from the leave,
//!   in slowstart either (a slowstart increase under way stops).
//!   Without a CLR only the "no feedback at all" rule of §3.3 halves the rate.
//! * **The lowest reported rate** (§4.4's MAY) is one packet per 8 s, and with it the MUST
//!   that comes with it: a receiver whose equation rate stays below that floor for 120 s
//!   leaves the session (as any leaving receiver does: as the CLR, with a last report).
//! * **The sign of D_r** (§4.3.3): the RFC writes D_r = tr_r' - ts_i and R' = D_r + tr_now -
//!   ts_j; for R' to equal the RTT sample R_sample = tr_now - tr_r' on the very packet that
//!   carried the echo, D_r must be ts_i - tr_r' (the receiver-to-sender delay, plus the
//!   clocks' offset that tr_now - ts_j cancels), which is what we use.
//! * **A "significant" change of R_max** (§4.5, rescheduling the feedback timer) is one of
//!   more than 10 % (our choice).
//! * **The CLR's own feedback** (§4.5, once per RTT) is sent only when a data packet arrived
//!   since its last report: receivers that get no data stop reporting (§3.3).

use castlab_core::config::check;
use castlab_core::{Addr, ConfigError, ControlMsg, Duration, Header, Instant, NodeId, Packet};

mod arrivals;
mod loss;
mod receiver;
pub mod registration;
mod sender;

pub use loss::{LossTracker, ReceiverLossHistory};
pub use receiver::{ReceiverRecords, TfmccReceiver};
pub use sender::{SenderRecords, TfmccSender};

/// `ControlMsg::kind` of TFMCC data packets ("TD").
pub const TFMCC_DATA_KIND: u16 = 0x5444;
/// `ControlMsg::kind` of TFMCC receiver reports ("TF").
pub const TFMCC_FEEDBACK_KIND: u16 = 0x5446;

/// Most loss intervals the average may weigh (bounds the receiver's fixed state).
pub const TFMCC_MAX_INTERVALS: usize = 16;

/// TFMCC constants. `Default` is RFC 4654's recommended values; fields the RFC leaves to the
/// application say "our choice".
#[derive(Clone, Debug, PartialEq)]
pub struct TfmccConfig {
    /// s, data packet size in bytes, headers included (§2.1: fixed by the application; our
    /// choice 1000 B).
    pub packet_size: u32,
    /// Size of a receiver report in bytes (our choice: 64 B).
    pub feedback_size: u32,
    /// Initial maximum RTT (§3.1: "should not be smaller than 500 milliseconds").
    pub initial_rtt: Duration,
    /// ts_gran, the sender's clock granularity; R_max ≥ 8s/X + ts_gran (§3.2, §3.7: "a value
    /// of 10 milliseconds can be safely assumed").
    pub clock_granularity: Duration,
    /// R_max decay per feedback round without a larger RTT (§3.2: 0.9).
    pub rmax_decay: f64,
    /// g: how far higher-rate feedback suppresses lower-rate feedback (§3.4: 0.1).
    pub suppression_g: f64,
    /// T in units of R_max (§3.4: 6 with unicast feedback; 4 allowed with ASM).
    pub round_rtts: f64,
    /// N, the estimated upper bound on the number of receivers (§4.5: 10,000).
    pub receivers_bound: f64,
    /// q, RTT filter of a non-CLR receiver (§4.3.2: 0.5).
    pub rtt_filter: f64,
    /// q, RTT filter of the CLR (§4.3.2: 0.9).
    pub clr_rtt_filter: f64,
    /// k, the receive rate is measured over the last k RTTs (§4.3.4: 2 to 4; our choice 2).
    pub receive_rate_rtts: u32,
    /// n, loss intervals in the average (§5.4: 8).
    pub loss_intervals: u32,
    /// Later packets that reveal a loss (§5.1: 3).
    pub dupacks: u32,
    /// History discounting of the loss intervals (§5.5, TFRC's mechanism of RFC 5348 §5.5).
    pub history_discounting: bool,
    /// THRESHOLD of RFC 5348 §5.5: the smallest general discount factor DF, so that the
    /// intervals of an earlier congested period are never discounted entirely (0.5: the value
    /// of ns-2's TFRC receiver, `minDiscountRatio_`, from which the RFC's pseudo-code comes).
    pub discount_threshold: f64,
    /// RTTs without a CLR report before the rate halves (§3.3: 4).
    pub clr_halve_rtts: u32,
    /// RTTs without a CLR report before the CLR counts as gone; a CLR chosen fewer RTTs ago
    /// is not halved; RTTs without any feedback per further halving (§3.3: 10).
    pub clr_timeout_rtts: u32,
    /// The slowest rate: one packet per this long (§3.3, §4.4: 8 s).
    pub min_packet_interval: Duration,
    /// A slowstart increase is spread over one RTT in this many equal steps (§3.6 asks for
    /// "gradually over an RTT"; the steps are our choice: 8).
    pub slowstart_ramp_steps: u32,
    /// A receiver whose calculated rate stays below the one packet per `min_packet_interval`
    /// it reports for longer than this leaves the session (§4.4: 120 s).
    pub low_rate_leave_after: Duration,
    /// Ablation, not RFC 4654: count the receive rate (§4.3.4), the rate at the first loss
    /// (§5.6) and the 10 RTTs without data (§4.3.1) over max(R, R_max) instead of the
    /// receiver's RTT R (default false: the RFC's R).
    pub windows_over_rmax: bool,
    /// The loss interval that seeds the history at the first loss event (default: §5.6's).
    pub first_interval: FirstInterval,
    /// Ablation, not RFC 4654: equation (1) with the smoothed RTT R of §4.3.2 instead of the
    /// one-way-adjusted R' of §4.3.3 (default false: R').
    pub rate_from_smoothed_rtt: bool,
    /// Ablation, not RFC 4654: losses within R_max (instead of the receiver's RTT, §5.2) of
    /// the start of a loss event belong to it (default false).
    pub merge_over_rmax: bool,
}

/// How the first loss event seeds the loss history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstInterval {
    /// §5.6: the synthetic interval l_0 = (X_recv·R/(sqrt(3/2)·8s))², X_recv in bits/s over
    /// the last RTT, at least one packet.
    Rfc,
    /// Ablation: no seed; the first closed interval is the one the second event ends.
    None,
    /// Ablation: UFTP's formula, X_recv in bytes/s (l_0/64), truncated; 0 is no seed.
    Uftp,
}

castlab_core::config_enum!(FirstInterval { Rfc => "rfc", None => "none", Uftp => "uftp" });

impl Default for TfmccConfig {
    fn default() -> Self {
        TfmccConfig {
            packet_size: 1000,
            feedback_size: 64,
            initial_rtt: Duration::from_millis(500),
            clock_granularity: Duration::from_millis(10),
            rmax_decay: 0.9,
            suppression_g: 0.1,
            round_rtts: 6.0,
            receivers_bound: 10_000.0,
            rtt_filter: 0.5,
            clr_rtt_filter: 0.9,
            receive_rate_rtts: 2,
            loss_intervals: 8,
            dupacks: 3,
            history_discounting: true,
            discount_threshold: 0.5,
            clr_halve_rtts: 4,
            clr_timeout_rtts: 10,
            min_packet_interval: Duration::from_secs(8),
            slowstart_ramp_steps: 8,
            low_rate_leave_after: Duration::from_secs(120),
            windows_over_rmax: false,
            first_interval: FirstInterval::Rfc,
            rate_from_smoothed_rtt: false,
            merge_over_rmax: false,
        }
    }
}

castlab_core::config_fields!(TfmccConfig {
    packet_size,
    feedback_size,
    initial_rtt,
    clock_granularity,
    rmax_decay,
    suppression_g,
    round_rtts,
    receivers_bound,
    rtt_filter,
    clr_rtt_filter,
    receive_rate_rtts,
    loss_intervals,
    dupacks,
    history_discounting,
    discount_threshold,
    clr_halve_rtts,
    clr_timeout_rtts,
    min_packet_interval,
    slowstart_ramp_steps,
    low_rate_leave_after,
    windows_over_rmax,
    first_interval,
    rate_from_smoothed_rtt,
    merge_over_rmax,
});

impl TfmccConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check::int_in("packet_size", self.packet_size as u64, 64, 65_535)?;
        check::int_in("feedback_size", self.feedback_size as u64, 40, 65_535)?;
        check::nonzero("initial_rtt", self.initial_rtt)?;
        check::in_open_closed("rmax_decay", self.rmax_decay, 0.0, 1.0)?;
        check::in_closed("suppression_g", self.suppression_g, 0.0, 0.9)?;
        check::in_closed("round_rtts", self.round_rtts, 1.0, 100.0)?;
        check::in_closed("receivers_bound", self.receivers_bound, 2.0, 1e9)?;
        check::in_closed("rtt_filter", self.rtt_filter, 0.0, 1.0)?;
        check::in_closed("clr_rtt_filter", self.clr_rtt_filter, 0.0, 1.0)?;
        check::int_in("receive_rate_rtts", self.receive_rate_rtts as u64, 1, 16)?;
        check::int_in("loss_intervals", self.loss_intervals as u64, 2, TFMCC_MAX_INTERVALS as u64)?;
        check::int_in("dupacks", self.dupacks as u64, 1, 64)?;
        check::in_open_closed("discount_threshold", self.discount_threshold, 0.0, 1.0)?;
        check::int_in("clr_halve_rtts", self.clr_halve_rtts as u64, 1, 1000)?;
        check::int_in("clr_timeout_rtts", self.clr_timeout_rtts as u64, 1, 1000)?;
        check::nonzero("min_packet_interval", self.min_packet_interval)?;
        check::int_in("slowstart_ramp_steps", self.slowstart_ramp_steps as u64, 1, 1000)?;
        check::nonzero("low_rate_leave_after", self.low_rate_leave_after)?;
        Ok(())
    }

    /// The lowest rate, b/s: one packet per `min_packet_interval`.
    pub fn min_rate_bps(&self) -> f64 {
        8.0 * self.packet_size as f64 / self.min_packet_interval.as_secs_f64()
    }

    /// 8s/R: one packet per R, b/s (the increase step of §3.3).
    pub fn packet_per(&self, r: Duration) -> f64 {
        8.0 * self.packet_size as f64 / r.as_secs_f64().max(1e-9)
    }
}

/// §5.6: the loss interval that equation (1)'s simplified form maps to receive rate
/// `x_recv_bps` at RTT `r_s`: l_0 = (X_recv·R / (sqrt(3/2)·8s))².
pub fn synthetic_interval(s_bytes: f64, r_s: f64, x_recv_bps: f64) -> f64 {
    let l = x_recv_bps * r_s / (1.5f64.sqrt() * 8.0 * s_bytes);
    l * l
}

/// A timestamp of §2.2: microseconds of the stamping agent's own clock, wrapping at 2^32
/// (71 minutes; the RFC asks for at least 16 bits of milliseconds). Differences are taken
/// modulo 2^32, so the two ends' clocks need not agree (§4.3.3).
pub fn micros(t: Instant) -> u32 {
    (t.as_nanos() / 1000) as u32
}

/// `later - earlier` of two [`micros`] stamps, as a signed number of microseconds.
pub fn micros_between(later: u32, earlier: u32) -> i64 {
    later.wrapping_sub(earlier) as i32 as i64
}

/// A timestamp echo in a data packet (§2.2.1): receiver `receiver`'s report timestamp plus
/// the time the sender held it (tr_r' = tr_r + ts_d), in the receiver's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Echo {
    pub receiver: Addr,
    pub timestamp_us: u32,
}

/// What a data packet carries besides `Packet::seq` (i). Its timestamps travel in the
/// header, not in `Packet::sent_at`, which a real-network driver restates in the receiving
/// process's clock.
///
/// Layout in `ControlMsg::args`: `args[0]` = receiver node (bits 0-31), port (32-47), has-echo
/// (48), is_CLR (49), fb_nr (56-63); `args[1]` = ts_i (bits 0-31) and the echoed tr_r'
/// (32-63), in [`micros`]; `args[2]` =
/// X_supp as f32 bits (32-63, +inf: no suppression) and R_max in µs (0-31).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataHeader {
    /// ts_i, the sender's clock.
    pub ts_us: u32,
    pub echo: Option<Echo>,
    /// The echoed receiver is the CLR.
    pub is_clr: bool,
    pub fb_nr: u8,
    /// X_supp, b/s.
    pub suppression_bps: f32,
    pub r_max: Duration,
}

impl DataHeader {
    pub fn encode(&self) -> Header {
        let (addr, ts, has) = match self.echo {
            Some(e) => ((e.receiver.node.0 as u64) | ((e.receiver.port as u64) << 32), e.timestamp_us, 1u64),
            None => (0, 0, 0),
        };
        let a0 = addr | (has << 48) | ((self.is_clr as u64) << 49) | ((self.fb_nr as u64) << 56);
        let rmax_us = (self.r_max.as_nanos() / 1000).min(u32::MAX as u64);
        let a2 = ((self.suppression_bps.to_bits() as u64) << 32) | rmax_us;
        let a1 = self.ts_us as u64 | (ts as u64) << 32;
        Header::Control(ControlMsg { kind: TFMCC_DATA_KIND, args: [a0, a1, a2] })
    }

    /// The header of a TFMCC data packet, or None (not one, or a field out of range).
    pub fn decode(p: &Packet) -> Option<Self> {
        let Header::Control(ControlMsg { kind: TFMCC_DATA_KIND, args }) = p.header else { return None };
        let supp = f32::from_bits((args[2] >> 32) as u32);
        let r_max = Duration::from_micros(args[2] & 0xFFFF_FFFF);
        if supp.is_nan() || supp <= 0.0 || r_max.is_zero() {
            return None;
        }
        let echo = (args[0] >> 48 & 1 == 1).then(|| Echo {
            receiver: Addr::new(NodeId(args[0] as u32), (args[0] >> 32) as u16),
            timestamp_us: (args[1] >> 32) as u32,
        });
        Some(DataHeader {
            ts_us: args[1] as u32,
            echo,
            is_clr: args[0] >> 49 & 1 == 1,
            fb_nr: (args[0] >> 56) as u8,
            suppression_bps: supp,
            r_max,
        })
    }
}

/// A receiver report (§2.2.2) besides the receiver's ID (`Packet::src`).
///
/// Layout in `ControlMsg::args`: `args[0]` = ts_i' (bits 0-31, the sender's clock) and tr_r
/// (32-63, the receiver's), in [`micros`]; `args[1]` =
/// X_r as f64 bits; `args[2]` = have_RTT (bit 0), have_loss (1), receiver_leave (2), fb_nr
/// (8-15), and the receiver's loss event rate p as f32 bits (32-63; for records only).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeedbackHeader {
    /// ts_i': the last data packet's timestamp plus the time the receiver held it.
    pub ts_echo_us: u32,
    /// tr_r, when the report was sent (the receiver's clock).
    pub tr_us: u32,
    /// X_r, b/s.
    pub rate_bps: f64,
    pub have_rtt: bool,
    pub have_loss: bool,
    pub leave: bool,
    pub fb_nr: u8,
    pub loss_event_rate: f32,
}

impl FeedbackHeader {
    pub fn encode(&self) -> Header {
        let flags = self.have_rtt as u64 | (self.have_loss as u64) << 1 | (self.leave as u64) << 2;
        let a2 = flags | (self.fb_nr as u64) << 8 | (self.loss_event_rate.to_bits() as u64) << 32;
        Header::Control(ControlMsg {
            kind: TFMCC_FEEDBACK_KIND,
            args: [self.ts_echo_us as u64 | (self.tr_us as u64) << 32, self.rate_bps.to_bits(), a2],
        })
    }

    /// The report in `p`, or None (not one, or a rate that is not a positive number).
    pub fn decode(p: &Packet) -> Option<Self> {
        let Header::Control(ControlMsg { kind: TFMCC_FEEDBACK_KIND, args }) = p.header else { return None };
        let rate = f64::from_bits(args[1]);
        let loss = f32::from_bits((args[2] >> 32) as u32);
        if !(rate.is_finite() && rate > 0.0 && (0.0..=1.0).contains(&loss)) {
            return None;
        }
        Some(FeedbackHeader {
            ts_echo_us: args[0] as u32,
            tr_us: (args[0] >> 32) as u32,
            rate_bps: rate,
            have_rtt: args[2] & 1 == 1,
            have_loss: args[2] >> 1 & 1 == 1,
            leave: args[2] >> 2 & 1 == 1,
            fb_nr: (args[2] >> 8) as u8,
            loss_event_rate: loss,
        })
    }
}

/// R_max as §2.2.1 carries it: an 8-bit float of 4 exponent and 4 mantissa bits in
/// milliseconds, (1 + m/16)·2^e ms (1 ms to 63.5 s, steps of at most 6.25 %), rounded up so
/// that a receiver never sees a maximum below the sender's. The margin matters: receivers whose
/// RTT exceeds R_max are exempt from suppression (§3.4), and on paths of equal RTT an exact
/// maximum would exempt every receiver whose estimate lies a nanosecond above it.
pub fn rtt_on_the_wire(r: Duration) -> Duration {
    let ms = r.as_secs_f64() * 1e3;
    for e in 0..16 {
        let base = (1u64 << e) as f64;
        for m in 0..16u64 {
            let v = base * (1.0 + m as f64 / 16.0);
            if v >= ms {
                return Duration::from_micros((v * 1000.0).round() as u64);
            }
        }
    }
    Duration::from_micros(31 * (1 << 15) * 1000 / 16)
}

/// `a` is a newer feedback round than `b` (§4.5: a counter more than half the space below
/// counts as wrapped, so as newer).
pub fn round_is_newer(a: u8, b: u8) -> bool {
    a != b && a.wrapping_sub(b) < 128
}

#[cfg(test)]
mod tests;
