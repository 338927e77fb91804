//! PGMCC, a single-rate TCP-friendly multicast congestion control: Rizzo, "pgmcc: a
//! TCP-friendly single-rate multicast congestion control scheme" (SIGCOMM 2000), as specified
//! by Rizzo, Iannaccone, Vicisano and Handley, draft-ietf-rmt-bb-pgmcc-03 (July 2004; "the
//! draft" below, cited by section).
//!
//! One sender multicasts to a group and runs a window-based, TCP-like loop (§2.2) with one
//! receiver, the ACKER, which acknowledges every data packet designated to it. Every other
//! receiver reports only in NAKs: its loss rate p (an EWMA over the packets it misses, §2.6)
//! and an echoed timestamp from which the sender measures its RTT (§2.5.1). The sender keeps
//! as ACKER the receiver with the lowest TCP throughput T ~ 1/(RTT·sqrt(p)·(1 + 9p(1 + 32p²)))
//! (§2.4), switching to receiver i only when T_i < C·T_acker, C = 0.75 (§2.3). Losses are
//! repaired as in PGM (RFC 3208): a receiver NAKs a missing packet after a random back-off, the
//! sender multicasts an NCF (which suppresses other receivers' NAKs for it) and a repair
//! (RDATA), which travels under the congestion window like new data.
//!
//! * [`PgmccSender`] (`sender.rs`): window W and tokens T, the ACK bitmap and loss detection,
//!   acker election and switches, the retransmission timer (§2.7), NCFs and repairs.
//! * [`PgmccReceiver`] (`receiver.rs`): the loss filter, timestamps and their correction
//!   terms, ACKs when acker, NAKs with back-off and NCF suppression, election NAKs (§2.3.1).
//!
//! # Where the draft is loose (our readings)
//!
//! * **Two sequence spaces.** §2.1.1's data sequence number "is incremented by one for each
//!   data packet transmitted": every ODATA and every RDATA takes the next one (the *transmit
//!   sequence number*, which the ACK's RX_MAX and bitmap and the receivers' loss filter count).
//!   PGM's own sequence number (`Packet::seq`, which an RDATA repeats) names the data for
//!   NAKs and repairs. So a repair is acknowledged like new data and returns its token, and a
//!   lost repair counts as a loss. RFC 3208's packets carry one sequence number, which an
//!   RDATA repeats; on that wire (`pgm_seq_acks`) the ACKs count PGM's sequence numbers, as
//!   OpenPGM's do: a repair is acknowledged under the number it repeats (its token returns,
//!   without growth, when an ACK reports that number, or for an ACK that reports nothing new
//!   when the bitmap cannot reach it), and a lost repair is not seen by the window (its token
//!   returns once three ODATA sent after it are reported and it is not). §2.1.1 asks only that a number not wrap within the receivers' recent history;
//!   it names nothing that tells a repair from new data, and §2.1 leaves the packets to the
//!   transport.
//! * **The loss filter** (§2.6) is written p_i = c_p·p_{i-1} + (1 - c_p)·p_i with
//!   c_p = 500/65536; taken literally the filter would keep under 1 % of its past. We give the
//!   new sample the weight c_p, p ← (1 - c_p)·p + c_p·x (x = 1 lost, 0 received), as OpenPGM
//!   does (`rxw.c`), a time constant of about 131 packets. A packet counts as lost when a
//!   later transmit sequence number arrives; one arriving late after that is not undone.
//! * **RTT** (§2.5.1, the explicit timestamp): data packets carry the sender's clock in
//!   microseconds (32 bits, wrapping); a receiver echoes the latest one plus the time it held
//!   it (the correction term), so a NAK's back-off does not enter the sample. Each report
//!   gives one instantaneous sample; the sender compares those (as OpenPGM does), and keeps
//!   SRTT and RTTVAR of the acker's ACKs for its timer only (§2.7).
//! * **The window** (§2.2): the draft's pseudo-code, with T capped at W. After a halving,
//!   "all window manipulation is suspended" until an ACK reports a packet sent after it: W
//!   stays and each newly acknowledged packet returns one token (without the 1/W of growth),
//!   so the sender resumes once half the old window is acknowledged, as TCP's fast recovery
//!   does. A loss is a hole in the ACKs with at least `dupacks` acknowledged packets above it
//!   (§2.2: 3); each hole is reacted to once, and holes older than the suspension are not.
//! * **Acker switches** (§2.3): ACKs update the window only when they come from the current
//!   acker. ACKs from the previous acker still mark the packets they report as received and
//!   return their tokens (no growth, no loss reaction): packets sent before the switch name
//!   the old acker, and without their tokens a full window would stall until the timer.
//! * **The timer** (§2.7): RFC 6298's SRTT, RTTVAR and RTO from the acker's ACK samples,
//!   restarted on every acker change; 3 s before a sample (the draft's value); at least
//!   `min_rto` (1 s, RFC 6298 §2.4, castlab's TCP default); doubled after each timeout, as
//!   TCP; armed while any packet sent is neither reported nor declared lost (a lost tail
//!   after a halving leaves no token and no ACK to come). A timeout sets W = T = 1; after
//!   `retry_max` (2) successive timeouts the acker is dropped and the next packets ask for an
//!   election (§2.3.1, §3).
//! * **Election NAKs** (§2.3.1): a receiver answering a data packet that names no acker sends
//!   one NAK with no sequence number after the usual back-off, at most one pending at a time.
//!   The sender makes the first one's receiver the acker and adds one token (§3).
//! * **Repairs** (PGM, RFC 3208 §5-§6, simplified as castlab's other PGM transport): one NAK
//!   per missing packet after a back-off uniform in [0, `nak_backoff_max`], cancelled by an
//!   NCF or the packet; no NAK repetition (reliability is not what PGMCC is about, §1:
//!   "decouple congestion control from data integrity"). The sender answers a NAK inside its
//!   transmit window with one multicast NCF (outside the congestion window: a control packet
//!   of `feedback_size`) and queues one RDATA, sent before new data.
//! * **Leaving** (`Agent::handle_shutdown`): a receiver stops ACKing and NAKing and leaves
//!   the group; the source stops and ends its session with one SPM (OPT_FIN on RFC 3208's
//!   wire). The draft's ACKER_LEAVING (§2.3.2) is not sent: the source's timer drops a silent
//!   acker (§2.7).
//! * **Not modelled**: ACKER_LEAVING (§2.3.2), ECN (§2.9), the discrepancy checks of §5,
//!   routers' NAK aggregation (§2.8).
//! * **Wire format** (the draft leaves it to the transport, §2.1): `Header::Control` with the
//!   kinds of `castlab_core::pgmcc`, laid out in [`DataHeader`], [`NakHeader`] and
//!   [`AckHeader`]. The fields are the draft's (§2.1.3) and OpenPGM's OPT_PGMCC_DATA /
//!   OPT_PGMCC_FEEDBACK and ACK (type 0x0d: RX_MAX, bitmap); the acker identity is the
//!   receiver's castlab address. On the real network they travel in castlab's envelope, or
//!   (`castlab net --wire pgm`) as RFC 3208 packets with OpenPGM's options, which castlab-net's
//!   PGM codec maps them to (`pgm_codec::cc_from_castlab`); the source's SPMs
//!   (`spm_interval`) and its NCFs are PGM's own, and the receivers take an NCF in either form.

use castlab_core::config::check;
use castlab_core::{ConfigError, Duration, Instant};

pub use castlab_core::pgmcc::{
    AckHeader, DataHeader, NakHeader, PGMCC_ACK_KIND, PGMCC_DATA_KIND, PGMCC_NAK_KIND, PGMCC_NCF_KIND,
};

mod receiver;
pub mod registration;
mod sender;

pub use receiver::{PgmccReceiver, ReceiverRecords};
pub use sender::{PgmccSender, SenderRecords};

/// N, the packets one ACK's bitmap reports (§2.1.2: "typically N=32").
pub const ACK_BITMAP_BITS: u32 = 32;

/// PGMCC constants. `Default` is the draft's values; fields it leaves open say "our choice".
#[derive(Clone, Debug, PartialEq)]
pub struct PgmccConfig {
    /// Data packet size in bytes, headers included (our choice: 1000 B, castlab's TCP segment).
    pub packet_size: u32,
    /// Size of a NAK, NCF or ACK in bytes (our choice: 64 B).
    pub feedback_size: u32,
    /// C, the bias against switching acker: i becomes acker when T_i < C·T_acker (§2.3: 0.75).
    pub acker_bias: f64,
    /// c_p, the loss filter's weight of a new sample (§2.6: 500/65536; see the module doc).
    pub loss_filter: f64,
    /// SSTHRESH, packets: the window opens exponentially below it (§2.2: "a fixed, small
    /// value ... (e.g. 4 packets)").
    pub ssthresh: f64,
    /// Acknowledged packets above a hole that make it a loss (§2.2: 3).
    pub dupacks: u32,
    /// The retransmission timer before any RTT sample (§2.7: 3 s).
    pub initial_rto: Duration,
    /// The smallest timer (RFC 6298 §2.4: 1 s; castlab's TCP default).
    pub min_rto: Duration,
    /// The largest timer (RFC 6298 §2.5 allows a maximum of at least 60 s: 60 s).
    pub max_rto: Duration,
    /// Successive timeouts after which the acker is dropped (§2.7: "after two successive
    /// timeouts").
    pub retry_max: u32,
    /// Upper end of the uniform NAK back-off (PGM's NAK_BO_IVL, RFC 3208 §6.3, which gives
    /// no value; our choice 50 ms, OpenPGM's example receivers' `ack_bo_ivl`).
    pub nak_backoff_max: Duration,
    /// The sender's transmit window: how many of the latest packets it can repair (our
    /// choice: 4096).
    pub tx_window_pkts: u32,
    /// Most repairs queued at the sender; NAKs beyond are counted and dropped (our choice:
    /// 256).
    pub repair_queue_pkts: u32,
    /// Most missing packets a receiver tracks for NAKs at once; further gaps are counted and
    /// given up (our choice: 256).
    pub nak_slots: u32,
    /// The sequence numbers the ACKs count (module doc, "Two sequence spaces"): false, the
    /// transmit sequence number every ODATA and RDATA takes anew (§2.1.1, castlab's reading);
    /// true, PGM's own (RFC 3208's, which an RDATA repeats), as OpenPGM's ACKs count them
    /// and as RFC 3208's packets can carry (`castlab net --wire pgm` sets it).
    pub pgm_seq_acks: bool,
    /// The source's ambient SPM interval (RFC 3208 §6.1; 0: none). PGMCC needs no SPMs; a
    /// PGM receiver such as OpenPGM's learns from them where its NAKs and ACKs go
    /// (`castlab net --wire pgm` sets 0.5 s). Our choice: 0.
    pub spm_interval: Duration,
}

impl Default for PgmccConfig {
    fn default() -> Self {
        PgmccConfig {
            packet_size: 1000,
            feedback_size: 64,
            acker_bias: 0.75,
            loss_filter: 500.0 / 65536.0,
            ssthresh: 4.0,
            dupacks: 3,
            initial_rto: Duration::from_secs(3),
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            retry_max: 2,
            nak_backoff_max: Duration::from_millis(50),
            tx_window_pkts: 4096,
            repair_queue_pkts: 256,
            nak_slots: 256,
            pgm_seq_acks: false,
            spm_interval: Duration::ZERO,
        }
    }
}

castlab_core::config_fields!(PgmccConfig {
    packet_size,
    feedback_size,
    acker_bias,
    loss_filter,
    ssthresh,
    dupacks,
    initial_rto,
    min_rto,
    max_rto,
    retry_max,
    nak_backoff_max,
    tx_window_pkts,
    repair_queue_pkts,
    nak_slots,
    pgm_seq_acks,
    spm_interval,
});

impl PgmccConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check::int_in("packet_size", self.packet_size as u64, 64, 65_535)?;
        check::int_in("feedback_size", self.feedback_size as u64, 40, 65_535)?;
        check::in_open_closed("acker_bias", self.acker_bias, 0.0, 1.0)?;
        check::in_open_closed("loss_filter", self.loss_filter, 0.0, 1.0)?;
        check::in_closed("ssthresh", self.ssthresh, 1.0, 1e6)?;
        check::int_in("dupacks", self.dupacks as u64, 1, (ACK_BITMAP_BITS - 1) as u64)?;
        check::nonzero("initial_rto", self.initial_rto)?;
        check::nonzero("min_rto", self.min_rto)?;
        check::nonzero("max_rto", self.max_rto)?;
        if self.max_rto < self.min_rto {
            return Err(ConfigError::new("max_rto", self.max_rto.as_secs_f64(), "must be at least min_rto"));
        }
        check::int_in("retry_max", self.retry_max as u64, 0, 1000)?;
        check::int_in("tx_window_pkts", self.tx_window_pkts as u64, 1, 1 << 24)?;
        check::int_in("repair_queue_pkts", self.repair_queue_pkts as u64, 0, 1 << 16)?;
        check::int_in("nak_slots", self.nak_slots as u64, 1, 1 << 16)?;
        Ok(())
    }
}

/// §2.4: M = 1/T ∝ RTT·sqrt(p)·(1 + 9p(1 + 32p²)), the inverse of the throughput the sender
/// compares (RTO = 4·RTT, constants dropped). 0 when p = 0.
pub fn inverse_throughput(rtt_s: f64, p: f64) -> f64 {
    rtt_s * p.sqrt() * (1.0 + 9.0 * p * (1.0 + 32.0 * p * p))
}

/// §2.3: a receiver of inverse throughput `m_i` replaces the acker of `m_acker` when
/// T_i < C·T_acker, i.e. M_i·C > M_acker.
pub fn replaces_acker(m_i: f64, m_acker: f64, c: f64) -> bool {
    m_i * c > m_acker
}

/// The loss rate p on the wire (§2.1.3): 16 bits, 0 no loss, 65535 all lost.
pub fn loss_to_wire(p: f64) -> u16 {
    (p.clamp(0.0, 1.0) * 65535.0).round() as u16
}

/// The loss rate of a 16-bit field (§2.1.3).
pub fn loss_from_wire(v: u16) -> f64 {
    v as f64 / 65535.0
}

/// A timestamp of §2.1.3: microseconds of the sender's clock, wrapping at 2^32 (the draft
/// asks for 32 bits of 1 ms or better).
pub fn micros(t: Instant) -> u32 {
    (t.as_nanos() / 1000) as u32
}

/// `later - earlier` of two [`micros`] stamps, in microseconds (negative: `later` is older).
pub fn micros_between(later: u32, earlier: u32) -> i64 {
    later.wrapping_sub(earlier) as i32 as i64
}

#[cfg(test)]
mod tests;
