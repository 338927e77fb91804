//! PGM (RFC 3208) on the wire, over UDP encapsulation: the codec, and how castlab's PGM header
//! maps onto it.
//!
//! castlab's PGM transport (the packets carrying a [`PgmHeader`], Thapliyal et al. §5.1)
//! speaks the standard's packet formats so that third-party PGM receivers and sources
//! (OpenPGM, and ZeroMQ's `epgm://` transport built on it) take part, and tshark's PGM
//! dissector reads a capture. This module turns one PGM packet's fields ([`PgmPacket`]) into
//! bytes and back, and castlab's PGM header into those fields ([`from_castlab`], used by the
//! driver and by the simulator's captures; the driver maps received fields back). It knows
//! nothing of windows, NAK back-off or repairs: those belong to the protocol whose agents send
//! the header (castlab-proto; [`PgmHeader`] names it).
//!
//! ```text
//! common header (RFC 3208 §8), 16 bytes, big-endian:
//! 0   u16     source port       (downstream: the TSI's data-source port; upstream: the
//! 2   u16     destination port   data-destination port, the two swapped, §8)
//! 4   u8      type              SPM 0x00, ODATA 0x04, RDATA 0x05, NAK 0x08, NNAK 0x09,
//!                               NCF 0x0a, SPMR 0x0c (POLL, POLR, ACK: header only)
//! 5   u8      options           0x01 present, 0x02 network-significant, 0x40 variable
//!                               packet length, 0x80 parity
//! 6   u16     checksum          one's complement of the one's complement sum of the whole
//!                               PGM packet (§8); zero would mean "none": we never send it
//!                               and refuse it (our choice)
//! 8   [u8;6]  GSI               with the source port: the source's TSI
//! 14  u16     TSDU length       bytes of user data after the options (ODATA, RDATA only)
//! then by type (§8.1-§8.3):
//! SPM         u32 spm_sqn, u32 trail, u32 lead (the highest sequence number sent),
//!             u16 AFI (1 = IPv4), u16 reserved, path NLA (4 bytes)
//! ODATA/RDATA u32 sqn, u32 trail
//! NAK/NNAK/NCF u32 sqn, u16 AFI, u16 reserved, source NLA, u16 AFI, u16 reserved, group NLA
//! ACK         u32 RX_MAX, u32 received-packet bitmap (PGMCC, as OpenPGM's PGM_ACK)
//! then the options (§9), if flagged: OPT_LENGTH first (type 0x00, length 4, u16 total
//! length of all options), then options of [type (0x80 = last), length, OPX byte, reserved,
//! body]; OPT_NAK_LIST (0x02) carries 1..=62 more sequence numbers of a NAK or NCF,
//! OPT_PGMCC_DATA (0x12, ODATA/RDATA: u32 timestamp, u16 AFI, u16 reserved, acker NLA) and
//! OPT_PGMCC_FEEDBACK (0x13, NAK/ACK: u32 timestamp, u16 AFI, u16 loss rate, the receiver's
//! NLA) are PGMCC's as OpenPGM lays them out (its packed `pgm_opt_pgmcc_data` and
//! `pgm_opt_pgmcc_feedback` after its 3-byte option header: 16 bytes each),
//! OPT_FIN (0x0e) marks a session's end, OPT_FRAGMENT (0x01) and the rest are skipped
//! ```
//!
//! PGMCC (draft-ietf-rmt-bb-pgmcc-03) defines no packet formats (§2.1); the ACK type and the
//! two options are OpenPGM's. castlab's PGMCC agents (`castlab_core::pgmcc`'s `ControlMsg`
//! layouts) map onto them in [`cc_from_castlab`] and back in [`cc_to_castlab`]: ODATA/RDATA
//! keep RFC 3208's sequence numbers and the ACK's RX_MAX and bitmap count them, as OpenPGM's
//! do (the agents' `pgm_seq_acks`); timestamps are milliseconds on the wire, as OpenPGM's,
//! microseconds in the agents; an election request travels as an ACK, as OpenPGM's receivers
//! answer an election (docs/fidelity/pgmcc.md, "The PGM wire").
//! UDP encapsulation (OpenPGM's, and RFC 3208's note on it) is the PGM packet as the UDP
//! payload: no pseudo-header, the same checksum.
//!
//! Decoding never panics and never allocates: every problem is a [`PgmError`] that the
//! driver counts as a malformed datagram.

use std::net::{Ipv4Addr, SocketAddrV4};

use castlab_core::pgmcc::{AckHeader, DataHeader, NakHeader, PGMCC_NCF_KIND};
use castlab_core::{Addr, ControlMsg, Dest, Header, NodeId, Packet, PgmHeader, PgmKind};

/// The common header's length.
pub const HEADER_LEN: usize = 16;
/// The most sequence numbers an OPT_NAK_LIST carries (RFC 3208 §9.3.5: 62).
pub const NAK_LIST_MAX: usize = 62;
/// Address family indicator of an IPv4 NLA (RFC 1700).
pub const AFI_IPV4: u16 = 1;

pub const OPTS_PRESENT: u8 = 0x01;
pub const OPTS_NETWORK: u8 = 0x02;
pub const OPT_LENGTH: u8 = 0x00;
pub const OPT_FRAGMENT: u8 = 0x01;
pub const OPT_NAK_LIST: u8 = 0x02;
pub const OPT_FIN: u8 = 0x0e;
pub const OPT_PGMCC_DATA: u8 = 0x12;
pub const OPT_PGMCC_FEEDBACK: u8 = 0x13;
pub const OPT_END: u8 = 0x80;
/// The length of either PGMCC option, its 4-byte option header included.
pub const OPT_PGMCC_LEN: usize = 16;

castlab_core::wire_enum! {
    /// A PGM packet type (RFC 3208 §8, and §13.6 for SPMR, §14.7 for POLL/POLR; ACK is
    /// PGMCC's).
    pub enum PgmType {
        Spm = 0x00,
        Poll = 0x01,
        Polr = 0x02,
        Odata = 0x04,
        Rdata = 0x05,
        Nak = 0x08,
        Nnak = 0x09,
        Ncf = 0x0a,
        Spmr = 0x0c,
        Ack = 0x0d,
    }
}

impl PgmType {
    /// Sent by the source toward the group (ODATA, RDATA, NCF, SPM, POLL).
    pub fn downstream(self) -> bool {
        matches!(self, PgmType::Spm | PgmType::Odata | PgmType::Rdata | PgmType::Ncf | PgmType::Poll)
    }
    fn body_len(self) -> usize {
        match self {
            PgmType::Spm => 20,
            PgmType::Odata | PgmType::Rdata => 8,
            PgmType::Nak | PgmType::Nnak | PgmType::Ncf => 20,
            PgmType::Ack => 8,
            PgmType::Spmr | PgmType::Poll | PgmType::Polr => 0,
        }
    }
}

/// Why a datagram is not a PGM packet we accept. The driver counts every one as malformed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PgmError {
    #[error("shorter than its header or body")]
    Truncated,
    #[error("unknown packet type {0:#04x}")]
    UnknownType(u8),
    #[error("checksum missing or wrong")]
    Checksum,
    #[error("an NLA that is not IPv4")]
    Afi,
    #[error("options malformed")]
    Options,
    #[error("TSDU length disagrees with the packet")]
    Length,
}

/// Errors building a packet (our own: a driver bug or an impossible size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PgmEncodeError {
    #[error("buffer of {got} bytes, the packet needs {need}")]
    BufferTooSmall { got: usize, need: usize },
    #[error("a PGM packet of {0} bytes does not fit in one UDP datagram")]
    TooLarge(usize),
}

/// The sequence numbers of an OPT_NAK_LIST (beyond the header's own), without allocation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct NakList {
    len: u8,
    sqns: [u32; NAK_LIST_MAX],
}

impl Default for NakList {
    fn default() -> Self {
        NakList { len: 0, sqns: [0; NAK_LIST_MAX] }
    }
}

impl core::fmt::Debug for NakList {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl NakList {
    pub fn as_slice(&self) -> &[u32] {
        &self.sqns[..self.len as usize]
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Add one; false when full.
    pub fn push(&mut self, sqn: u32) -> bool {
        if self.len as usize == NAK_LIST_MAX {
            return false;
        }
        self.sqns[self.len as usize] = sqn;
        self.len += 1;
        true
    }
}

/// OPT_PGMCC_DATA: what a PGMCC source puts in its data packets (draft §2.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PgmccData {
    /// The source's timestamp (OpenPGM: milliseconds).
    pub tstamp: u32,
    /// The receiver that must acknowledge the packet; unspecified (0.0.0.0): none, an
    /// election is asked for (§2.3.1).
    pub acker: Ipv4Addr,
}

/// OPT_PGMCC_FEEDBACK: what a PGMCC receiver puts in its NAKs and ACKs (draft §2.1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PgmccFeedback {
    /// The echoed timestamp plus the time the receiver held it.
    pub tstamp: u32,
    /// p, 0 no loss to 65535 all lost (§2.1.3).
    pub loss: u16,
    /// The receiver's own address (its identity for acker election).
    pub nla: Ipv4Addr,
}

/// One PGM packet's fields, as on the wire (nothing inferred). Fields a type does not carry
/// are zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PgmPacket {
    pub kind: PgmType,
    pub sport: u16,
    pub dport: u16,
    /// The options byte's flags other than "present" (network-significant, variable length,
    /// parity), kept as received; "present" follows from the options themselves.
    pub flags: u8,
    pub gsi: [u8; 6],
    /// SPM: spm_sqn; ODATA/RDATA: data_sqn; NAK/NNAK/NCF: the requested sequence number.
    pub sqn: u32,
    /// SPM, ODATA, RDATA: the transmit window's trailing edge.
    pub trail: u32,
    /// SPM: the leading edge (the highest sequence number sent; trail = lead + 1 when none).
    pub lead: u32,
    /// SPM: the path NLA (where NAKs go); NAK/NNAK/NCF: the source NLA.
    pub nla: Ipv4Addr,
    /// NAK/NNAK/NCF: the multicast group NLA.
    pub group: Ipv4Addr,
    /// NAK/NNAK/NCF: OPT_NAK_LIST's further sequence numbers.
    pub naks: NakList,
    /// OPT_FIN: the session ends.
    pub fin: bool,
    /// ODATA/RDATA: OPT_PGMCC_DATA.
    pub pgmcc_data: Option<PgmccData>,
    /// NAK/ACK: OPT_PGMCC_FEEDBACK.
    pub pgmcc_feedback: Option<PgmccFeedback>,
    /// ACK: RX_MAX, the highest sequence number received, and the bitmap of the 32 up to it
    /// (least significant bit: RX_MAX).
    pub ack_rx_max: u32,
    pub ack_bitmap: u32,
    /// ODATA/RDATA: user data bytes (the TSDU); zero for the other types.
    pub tsdu_len: u16,
}

impl PgmPacket {
    /// A packet of `kind` with every other field zero.
    pub fn new(kind: PgmType) -> Self {
        PgmPacket {
            kind,
            sport: 0,
            dport: 0,
            flags: 0,
            gsi: [0; 6],
            sqn: 0,
            trail: 0,
            lead: 0,
            nla: Ipv4Addr::UNSPECIFIED,
            group: Ipv4Addr::UNSPECIFIED,
            naks: NakList::default(),
            fin: false,
            pgmcc_data: None,
            pgmcc_feedback: None,
            ack_rx_max: 0,
            ack_bitmap: 0,
            tsdu_len: 0,
        }
    }

    fn has_nlas(&self) -> bool {
        matches!(self.kind, PgmType::Spm | PgmType::Nak | PgmType::Nnak | PgmType::Ncf)
    }

    /// Bytes of options this packet's fields need (0: none).
    pub fn options_len(&self) -> usize {
        let mut n = 0;
        if !self.naks.is_empty() {
            n += 4 + 4 * self.naks.len as usize;
        }
        if self.fin {
            n += 4;
        }
        n += OPT_PGMCC_LEN * (self.pgmcc_data.is_some() as usize + self.pgmcc_feedback.is_some() as usize);
        if n > 0 {
            n + 4 // OPT_LENGTH
        } else {
            0
        }
    }

    /// The packet's length on the wire (the UDP payload).
    pub fn wire_len(&self) -> usize {
        HEADER_LEN + self.kind.body_len() + self.options_len() + self.tsdu_len as usize
    }

    /// Where the TSDU starts in the encoded packet.
    pub fn tsdu_offset(&self) -> usize {
        HEADER_LEN + self.kind.body_len() + self.options_len()
    }
}

/// The Internet checksum's one's complement sum of `d` (odd length: a zero byte appended).
fn ones_sum(d: &[u8]) -> u16 {
    let mut s: u32 = 0;
    let mut chunks = d.chunks_exact(2);
    for c in &mut chunks {
        s += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [b] = chunks.remainder() {
        s += (*b as u32) << 8;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

/// Write `p` into `out`: header, body, options; then `fill` writes the TSDU (`p.tsdu_len`
/// bytes) and the checksum is computed over the whole. Returns the length.
pub fn encode(p: &PgmPacket, out: &mut [u8], fill: impl FnOnce(&mut [u8])) -> Result<usize, PgmEncodeError> {
    let total = p.wire_len();
    if total > crate::envelope::MAX_DATAGRAM {
        return Err(PgmEncodeError::TooLarge(total));
    }
    if out.len() < total {
        return Err(PgmEncodeError::BufferTooSmall { got: out.len(), need: total });
    }
    let o = &mut out[..total];
    o[0..2].copy_from_slice(&p.sport.to_be_bytes());
    o[2..4].copy_from_slice(&p.dport.to_be_bytes());
    o[4] = p.kind as u8;
    let opts = p.options_len();
    o[5] = (p.flags & !OPTS_PRESENT) | if opts > 0 { OPTS_PRESENT } else { 0 };
    o[6..8].fill(0);
    o[8..14].copy_from_slice(&p.gsi);
    o[14..16].copy_from_slice(&p.tsdu_len.to_be_bytes());
    let b = &mut o[HEADER_LEN..];
    match p.kind {
        PgmType::Spm => {
            b[0..4].copy_from_slice(&p.sqn.to_be_bytes());
            b[4..8].copy_from_slice(&p.trail.to_be_bytes());
            b[8..12].copy_from_slice(&p.lead.to_be_bytes());
            put_nla(&mut b[12..20], p.nla);
        }
        PgmType::Odata | PgmType::Rdata => {
            b[0..4].copy_from_slice(&p.sqn.to_be_bytes());
            b[4..8].copy_from_slice(&p.trail.to_be_bytes());
        }
        PgmType::Nak | PgmType::Nnak | PgmType::Ncf => {
            b[0..4].copy_from_slice(&p.sqn.to_be_bytes());
            put_nla(&mut b[4..12], p.nla);
            put_nla(&mut b[12..20], p.group);
        }
        PgmType::Ack => {
            b[0..4].copy_from_slice(&p.ack_rx_max.to_be_bytes());
            b[4..8].copy_from_slice(&p.ack_bitmap.to_be_bytes());
        }
        PgmType::Spmr | PgmType::Poll | PgmType::Polr => {}
    }
    let mut at = HEADER_LEN + p.kind.body_len();
    if opts > 0 {
        o[at] = OPT_LENGTH;
        o[at + 1] = 4;
        o[at + 2..at + 4].copy_from_slice(&(opts as u16).to_be_bytes());
        at += 4;
        // Written in this order; the last one carries OPT_END.
        let mut last = at;
        if !p.naks.is_empty() {
            let len = 4 + 4 * p.naks.len as usize;
            o[at] = OPT_NAK_LIST;
            o[at + 1] = len as u8;
            o[at + 2] = 0;
            o[at + 3] = 0;
            for (k, s) in p.naks.as_slice().iter().enumerate() {
                o[at + 4 + 4 * k..at + 8 + 4 * k].copy_from_slice(&s.to_be_bytes());
            }
            last = at;
            at += len;
        }
        if let Some(d) = p.pgmcc_data {
            o[at..at + 4].copy_from_slice(&[OPT_PGMCC_DATA, OPT_PGMCC_LEN as u8, 0, 0]);
            o[at + 4..at + 8].copy_from_slice(&d.tstamp.to_be_bytes());
            put_nla(&mut o[at + 8..at + 16], d.acker);
            last = at;
            at += OPT_PGMCC_LEN;
        }
        if let Some(f) = p.pgmcc_feedback {
            o[at..at + 4].copy_from_slice(&[OPT_PGMCC_FEEDBACK, OPT_PGMCC_LEN as u8, 0, 0]);
            o[at + 4..at + 8].copy_from_slice(&f.tstamp.to_be_bytes());
            put_nla(&mut o[at + 8..at + 16], f.nla);
            // the NLA's reserved half-word is the loss rate here
            o[at + 10..at + 12].copy_from_slice(&f.loss.to_be_bytes());
            last = at;
            at += OPT_PGMCC_LEN;
        }
        if p.fin {
            o[at..at + 4].copy_from_slice(&[OPT_FIN, 4, 0, 0]);
            last = at;
            at += 4;
        }
        o[last] |= OPT_END;
    }
    fill(&mut o[at..total]);
    let c = !ones_sum(o);
    let c = if c == 0 { 0xffff } else { c };
    o[6..8].copy_from_slice(&c.to_be_bytes());
    Ok(total)
}

fn put_nla(b: &mut [u8], a: Ipv4Addr) {
    b[0..2].copy_from_slice(&AFI_IPV4.to_be_bytes());
    b[2..4].fill(0);
    b[4..8].copy_from_slice(&a.octets());
}

fn get_nla(b: &[u8]) -> Result<Ipv4Addr, PgmError> {
    if u16::from_be_bytes([b[0], b[1]]) != AFI_IPV4 {
        return Err(PgmError::Afi);
    }
    Ok(Ipv4Addr::new(b[4], b[5], b[6], b[7]))
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Check and decode one datagram (a UDP payload). The TSDU is `d[p.tsdu_offset()..]`.
pub fn decode(d: &[u8]) -> Result<PgmPacket, PgmError> {
    if d.len() < HEADER_LEN {
        return Err(PgmError::Truncated);
    }
    let kind = PgmType::try_from(d[4]).map_err(PgmError::UnknownType)?;
    // §8: the checksum covers the whole packet; summed with its own field it gives all ones.
    if d[6] == 0 && d[7] == 0 || ones_sum(d) != 0xffff {
        return Err(PgmError::Checksum);
    }
    let body = kind.body_len();
    if d.len() < HEADER_LEN + body {
        return Err(PgmError::Truncated);
    }
    let mut p = PgmPacket::new(kind);
    p.sport = u16::from_be_bytes([d[0], d[1]]);
    p.dport = u16::from_be_bytes([d[2], d[3]]);
    p.flags = d[5] & !OPTS_PRESENT;
    p.gsi.copy_from_slice(&d[8..14]);
    let tsdu_len = u16::from_be_bytes([d[14], d[15]]);
    let b = &d[HEADER_LEN..HEADER_LEN + body];
    match kind {
        PgmType::Spm => {
            p.sqn = u32_at(b, 0);
            p.trail = u32_at(b, 4);
            p.lead = u32_at(b, 8);
            p.nla = get_nla(&b[12..20])?;
        }
        PgmType::Odata | PgmType::Rdata => {
            p.sqn = u32_at(b, 0);
            p.trail = u32_at(b, 4);
        }
        PgmType::Nak | PgmType::Nnak | PgmType::Ncf => {
            p.sqn = u32_at(b, 0);
            p.nla = get_nla(&b[4..12])?;
            p.group = get_nla(&b[12..20])?;
        }
        PgmType::Ack => {
            p.ack_rx_max = u32_at(b, 0);
            p.ack_bitmap = u32_at(b, 4);
        }
        PgmType::Spmr | PgmType::Poll | PgmType::Polr => {
            // bodies we do not read: the rest is opaque (counted by type, never delivered)
            return Ok(p);
        }
    }
    let mut at = HEADER_LEN + body;
    if d[5] & OPTS_PRESENT != 0 {
        // §9.1: OPT_LENGTH comes first and gives the options' total length.
        if d.len() < at + 4 || d[at] != OPT_LENGTH || d[at + 1] != 4 {
            return Err(PgmError::Options);
        }
        let total = u16::from_be_bytes([d[at + 2], d[at + 3]]) as usize;
        if total < 8 || d.len() < at + total {
            return Err(PgmError::Options);
        }
        let end = at + total;
        at += 4;
        loop {
            if at + 4 > end {
                return Err(PgmError::Options);
            }
            let t = d[at];
            let len = d[at + 1] as usize;
            if len < 4 || at + len > end {
                return Err(PgmError::Options);
            }
            match t & !OPT_END {
                OPT_NAK_LIST if p.has_nlas() => {
                    if !len.is_multiple_of(4) || len == 4 || (len - 4) / 4 > NAK_LIST_MAX || !p.naks.is_empty() {
                        return Err(PgmError::Options);
                    }
                    for k in 0..(len - 4) / 4 {
                        p.naks.push(u32_at(d, at + 4 + 4 * k));
                    }
                }
                OPT_FIN => {
                    if len != 4 {
                        return Err(PgmError::Options);
                    }
                    p.fin = true;
                }
                OPT_PGMCC_DATA if matches!(kind, PgmType::Odata | PgmType::Rdata) => {
                    if len != OPT_PGMCC_LEN || p.pgmcc_data.is_some() {
                        return Err(PgmError::Options);
                    }
                    let acker = get_nla(&d[at + 8..at + 16])?;
                    p.pgmcc_data = Some(PgmccData { tstamp: u32_at(d, at + 4), acker });
                }
                OPT_PGMCC_FEEDBACK if matches!(kind, PgmType::Nak | PgmType::Ack) => {
                    if len != OPT_PGMCC_LEN || p.pgmcc_feedback.is_some() {
                        return Err(PgmError::Options);
                    }
                    // the AFI's reserved half-word carries the loss rate: check the AFI alone
                    if u16::from_be_bytes([d[at + 8], d[at + 9]]) != AFI_IPV4 {
                        return Err(PgmError::Afi);
                    }
                    let nla = Ipv4Addr::new(d[at + 12], d[at + 13], d[at + 14], d[at + 15]);
                    let loss = u16::from_be_bytes([d[at + 10], d[at + 11]]);
                    p.pgmcc_feedback = Some(PgmccFeedback { tstamp: u32_at(d, at + 4), loss, nla });
                }
                OPT_LENGTH => return Err(PgmError::Options),
                _ => {} // OPT_FRAGMENT and the rest: not ours to act on
            }
            at += len;
            if t & OPT_END != 0 {
                break;
            }
        }
        if at != end {
            return Err(PgmError::Options);
        }
    }
    let rest = d.len() - at;
    match kind {
        PgmType::Odata | PgmType::Rdata if rest == tsdu_len as usize => p.tsdu_len = tsdu_len,
        PgmType::Odata | PgmType::Rdata => return Err(PgmError::Length),
        _ if tsdu_len == 0 && rest == 0 => {}
        _ => return Err(PgmError::Length),
    }
    Ok(p)
}

/// The session's side of the mapping from castlab's PGM packets to RFC 3208's: the one UDP
/// port, the group, this sender's TSI, the source's TSI (for NAKs) and the next SPM sequence
/// number.
#[derive(Clone, Copy, Debug)]
pub struct Ends {
    pub port: u16,
    pub group_addr: Ipv4Addr,
    pub gsi: [u8; 6],
    pub sport: u16,
    pub remote: Option<([u8; 6], u16)>,
    pub spm_sqn: u32,
}

/// castlab's PGM packet `p` (header `h`), sent from `own_ip`, as RFC 3208 fields, the UDP
/// destination, and whether it carries data (its TSDU then pads the packet to `size_bytes`):
/// ODATA/RDATA and NCF and SPM to the group, a NAK to `dst_ip` with the ports swapped and the
/// source's TSI (§8.3). Sequence numbers are the low 32 bits. None: no PGM form (a NAK
/// without a known source TSI or address, a downstream kind sent unicast).
pub fn from_castlab(
    p: &Packet,
    h: PgmHeader,
    e: &Ends,
    own_ip: Ipv4Addr,
    dst_ip: Option<Ipv4Addr>,
) -> Option<(PgmPacket, SocketAddrV4, bool)> {
    let mut w = PgmPacket::new(PgmType::Odata);
    w.sport = e.sport;
    w.dport = e.port;
    w.gsi = e.gsi;
    w.sqn = p.seq as u32;
    w.trail = h.trail as u32;
    let group = SocketAddrV4::new(e.group_addr, e.port);
    let (target, data) = match (h.kind, p.dst) {
        (PgmKind::Odata | PgmKind::Rdata, Dest::Group(_)) => {
            w.kind = if h.kind == PgmKind::Odata { PgmType::Odata } else { PgmType::Rdata };
            (group, true)
        }
        (PgmKind::Ncf, Dest::Group(_)) => {
            w.kind = PgmType::Ncf;
            w.trail = 0;
            w.nla = own_ip;
            w.group = e.group_addr;
            (group, false)
        }
        (PgmKind::Spm, Dest::Group(_)) => {
            // §8.1: spm_lead is the highest sequence number sent (castlab's lead is one past)
            w.kind = PgmType::Spm;
            w.sqn = e.spm_sqn;
            w.lead = (h.lead as u32).wrapping_sub(1);
            w.nla = own_ip;
            (group, false)
        }
        (PgmKind::Nak, Dest::Unicast(_)) => {
            let (ip, (gsi, sport)) = (dst_ip?, e.remote?);
            w.kind = PgmType::Nak;
            w.sport = e.port;
            w.dport = sport;
            w.gsi = gsi;
            w.trail = 0;
            w.nla = ip;
            w.group = e.group_addr;
            (SocketAddrV4::new(ip, e.port), false)
        }
        _ => return None,
    };
    if data {
        pad_tsdu(&mut w, p);
    }
    Some((w, target, data))
}

/// A data packet's TSDU: what pads the packet to `p.size_bytes`, at least a framed tag.
fn pad_tsdu(w: &mut PgmPacket, p: &Packet) {
    let head = w.wire_len();
    w.tsdu_len = (p.size_bytes as usize).saturating_sub(head).max(zmq::MIN_TSDU).min(u16::MAX as usize) as u16;
}

/// OpenPGM's timestamps count milliseconds; the agents' microseconds (both 32 bits). A stamp
/// goes out as `us / 1000` and comes back as `ms * 1000`, so an echo keeps its meaning within
/// a wrap of the microsecond clock (71.6 min), quantised to 1 ms.
fn ms_of_us(us: u32) -> u32 {
    us / 1000
}

fn us_of_ms(ms: u32) -> u32 {
    ms.wrapping_mul(1000)
}

/// castlab's PGMCC packet `p` (`ControlMsg` `c`, a layout of `castlab_core::pgmcc`) as RFC 3208
/// fields with OpenPGM's PGMCC options, as [`from_castlab`] does for castlab's PGM header:
/// ODATA/RDATA with OPT_PGMCC_DATA (the acker's NLA from `ip_of`; 0.0.0.0 asks for an
/// election) and NCF to the group; a NAK with OPT_PGMCC_FEEDBACK, an ACK with it, and an
/// election request as such an ACK (what OpenPGM's receivers send) to the source. None: no
/// PGM form (not a PGMCC layout, a data packet whose transmit sequence number is not its PGM
/// one, an acker or source of unknown address, an election request without ACK state).
pub fn cc_from_castlab(
    p: &Packet,
    c: ControlMsg,
    e: &Ends,
    own_ip: Ipv4Addr,
    dst_ip: Option<Ipv4Addr>,
    ip_of: impl Fn(NodeId) -> Option<Ipv4Addr>,
) -> Option<(PgmPacket, SocketAddrV4, bool)> {
    let mut w = PgmPacket::new(PgmType::Odata);
    w.sport = e.sport;
    w.dport = e.port;
    w.gsi = e.gsi;
    w.sqn = p.seq as u32;
    let group = SocketAddrV4::new(e.group_addr, e.port);
    let upstream = |w: &mut PgmPacket| -> Option<SocketAddrV4> {
        let (ip, (gsi, sport)) = (dst_ip?, e.remote?);
        w.sport = e.port;
        w.dport = sport;
        w.gsi = gsi;
        Some(SocketAddrV4::new(ip, e.port))
    };
    match p.dst {
        Dest::Group(_) if c.kind == PGMCC_NCF_KIND => {
            w.kind = PgmType::Ncf;
            w.nla = own_ip;
            w.group = e.group_addr;
            Some((w, group, false))
        }
        Dest::Group(_) => {
            let h = DataHeader::decode(p)?;
            if h.tx_seq != p.seq {
                return None;
            }
            w.kind = if h.rdata { PgmType::Rdata } else { PgmType::Odata };
            w.trail = h.trail;
            let acker = match h.acker {
                Some(a) => ip_of(a.node)?,
                None => Ipv4Addr::UNSPECIFIED,
            };
            w.pgmcc_data = Some(PgmccData { tstamp: ms_of_us(h.ts_us), acker });
            pad_tsdu(&mut w, p);
            Some((w, group, true))
        }
        Dest::Unicast(_) => {
            let target = upstream(&mut w)?;
            if let Some(a) = AckHeader::decode(p) {
                w.kind = PgmType::Ack;
                w.sqn = 0;
                w.ack_rx_max = a.rx_max as u32;
                w.ack_bitmap = a.bitmap;
                w.pgmcc_feedback = Some(PgmccFeedback { tstamp: ms_of_us(a.ts_echo_us), loss: a.loss, nla: own_ip });
                return Some((w, target, false));
            }
            let n = NakHeader::decode(p)?;
            let feedback =
                n.have_ts.then_some(PgmccFeedback { tstamp: ms_of_us(n.ts_echo_us), loss: n.loss, nla: own_ip });
            if n.election {
                let (rx_max, bitmap) = n.ack?;
                w.kind = PgmType::Ack;
                w.sqn = 0;
                w.ack_rx_max = rx_max as u32;
                w.ack_bitmap = bitmap;
                w.pgmcc_feedback = Some(feedback?);
            } else {
                w.kind = PgmType::Nak;
                w.nla = dst_ip?;
                w.group = e.group_addr;
                w.pgmcc_feedback = feedback;
            }
            Some((w, target, false))
        }
    }
}

/// The acker a decoded ODATA/RDATA names in OPT_PGMCC_DATA (None: no option, or 0.0.0.0, an
/// election).
pub fn cc_acker(w: &PgmPacket) -> Option<Ipv4Addr> {
    w.pgmcc_data.map(|d| d.acker).filter(|ip| !ip.is_unspecified())
}

/// The PGMCC header of a decoded packet with OpenPGM's PGMCC options, for castlab's agents:
/// ODATA/RDATA with OPT_PGMCC_DATA (transmit sequence number = PGM's; `acker`: the agent
/// the acker NLA names, None for 0.0.0.0), a NAK with OPT_PGMCC_FEEDBACK, an ACK with it (its
/// RX_MAX moved down to the newest packet its bitmap reports received). None: no PGMCC option
/// (the packet maps to castlab's PGM header), or an ACK that reports nothing received (both are
/// refused if an ACK).
pub fn cc_to_castlab(w: &PgmPacket, acker: Option<Addr>) -> Option<Header> {
    match (w.kind, w.pgmcc_data, w.pgmcc_feedback) {
        (PgmType::Odata | PgmType::Rdata, Some(d), _) => Some(
            DataHeader {
                tx_seq: w.sqn as u64,
                ts_us: us_of_ms(d.tstamp),
                acker,
                rdata: w.kind == PgmType::Rdata,
                trail: w.trail,
            }
            .encode(),
        ),
        (PgmType::Nak, _, Some(f)) => Some(
            NakHeader { ts_echo_us: us_of_ms(f.tstamp), have_ts: true, loss: f.loss, election: false, ack: None }
                .encode(),
        ),
        (PgmType::Ack, _, Some(f)) if w.ack_bitmap != 0 => {
            // OpenPGM's RX_MAX is its receive window's lead, which an SPM advances past what
            // arrived; the draft's (§2.1.2) is the highest sequence number received: the
            // highest bit set in the bitmap
            let k = w.ack_bitmap.trailing_zeros();
            Some(
                AckHeader {
                    ts_echo_us: us_of_ms(f.tstamp),
                    loss: f.loss,
                    rx_max: w.ack_rx_max.wrapping_sub(k) as u64,
                    bitmap: w.ack_bitmap >> k,
                }
                .encode(),
            )
        }
        _ => None,
    }
}

/// The payload framing a ZeroMQ `epgm://` SUB needs to deliver a PGM data packet's TSDU as one
/// message (what libzmq's PGM sender writes, found by reading its source and checked against
/// it in the interop tests): a u16 offset of the first message that starts in this packet
/// (0: at once; 0xffff: none), then ZMTP/1.0 frames, each a length (one byte when the length,
/// flags byte included, is below 255; else 0xff and eight bytes) of the flags byte plus the
/// body, a flags byte (0: last frame of its message), and the body.
pub mod zmq {
    /// Bytes of framing before a body of `body_len` bytes.
    pub fn overhead(body_len: usize) -> usize {
        2 + if body_len + 1 < 255 { 2 } else { 10 }
    }

    /// The smallest TSDU that frames an 8-byte body.
    pub const MIN_TSDU: usize = 12;

    /// Fill `tsdu` with one message whose body starts with `tag` (big-endian) and is zero
    /// after it; the body takes every byte the framing leaves. `tsdu.len() >= MIN_TSDU`.
    pub fn frame(tsdu: &mut [u8], tag: u64) {
        let n = tsdu.len();
        tsdu[0..2].fill(0); // the first message starts at offset 0
        let body_at = if n - 4 + 1 < 255 {
            tsdu[2] = (n - 4 + 1) as u8;
            tsdu[3] = 0;
            4
        } else {
            tsdu[2] = 0xff;
            tsdu[3..11].copy_from_slice(&((n - 12 + 1) as u64).to_be_bytes());
            tsdu[11] = 0;
            12
        };
        let body = &mut tsdu[body_at..];
        let k = body.len().min(8);
        body[..k].copy_from_slice(&tag.to_be_bytes()[..k]);
        body[k..].fill(0);
    }

    /// The tag of a single-message TSDU framed as [`frame`] writes it (None when it is not).
    pub fn tag(tsdu: &[u8]) -> Option<u64> {
        if tsdu.len() < MIN_TSDU || tsdu[0] != 0 || tsdu[1] != 0 {
            return None;
        }
        let body = if tsdu[2] != 0xff { tsdu.get(4..)? } else { tsdu.get(12..)? };
        let b: [u8; 8] = body.get(..8)?.try_into().ok()?;
        Some(u64::from_be_bytes(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spm() -> PgmPacket {
        let mut p = PgmPacket::new(PgmType::Spm);
        p.sport = 4242;
        p.dport = 7500;
        p.gsi = [1, 2, 3, 4, 5, 6];
        p.sqn = 9;
        p.trail = 100;
        p.lead = 199;
        p.nla = Ipv4Addr::new(10, 77, 0, 1);
        p
    }

    fn round_trip(p: &PgmPacket) -> Vec<u8> {
        let mut buf = vec![0u8; p.wire_len()];
        let n = encode(p, &mut buf, |t| t.fill(0xab)).unwrap();
        assert_eq!(n, p.wire_len());
        assert_eq!(decode(&buf), Ok(*p));
        buf
    }

    #[test]
    fn spm_layout_follows_rfc3208_section_8_1() {
        let b = round_trip(&spm());
        assert_eq!(b.len(), 36);
        assert_eq!(&b[0..6], &[0x10, 0x92, 0x1d, 0x4c, 0x00, 0x00]);
        assert_eq!(&b[8..16], &[1, 2, 3, 4, 5, 6, 0, 0]);
        assert_eq!(&b[16..28], &[0, 0, 0, 9, 0, 0, 0, 100, 0, 0, 0, 199]);
        assert_eq!(&b[28..36], &[0, 1, 0, 0, 10, 77, 0, 1]);
        // the checksum field makes the packet's one's complement sum all ones
        assert_eq!(ones_sum(&b), 0xffff);
    }

    #[test]
    fn checksum_matches_a_hand_computed_one() {
        // header of an SPMR with every field zero except type 0x0c and gsi 00..01: the sum of
        // the words is 0x0c00 + 0x0001 = 0x0c01, so the checksum is !0x0c01 = 0xf3fe
        let mut p = PgmPacket::new(PgmType::Spmr);
        p.gsi = [0, 0, 0, 0, 0, 1];
        let mut b = [0u8; 16];
        encode(&p, &mut b, |_| {}).unwrap();
        assert_eq!(&b[6..8], &[0xf3, 0xfe]);
    }

    #[test]
    fn data_nak_ncf_round_trip_with_options() {
        let mut d = PgmPacket::new(PgmType::Odata);
        d.sqn = 7;
        d.trail = 3;
        d.tsdu_len = 500;
        round_trip(&d);
        d.kind = PgmType::Rdata;
        round_trip(&d);
        let mut n = PgmPacket::new(PgmType::Nak);
        n.sqn = 40;
        n.nla = Ipv4Addr::new(10, 77, 0, 1);
        n.group = Ipv4Addr::new(239, 255, 0, 1);
        round_trip(&n);
        for s in 41..45 {
            n.naks.push(s);
        }
        n.flags = OPTS_NETWORK;
        let b = round_trip(&n);
        // OPT_LENGTH (4) + OPT_NAK_LIST (4 + 16), the last option flagged
        assert_eq!(b.len(), 36 + 24);
        assert_eq!(&b[36..40], &[0x00, 0x04, 0x00, 24]);
        assert_eq!(&b[40..44], &[0x82, 20, 0, 0]);
        n.kind = PgmType::Ncf;
        round_trip(&n);
        let mut s = spm();
        s.fin = true;
        let b = round_trip(&s);
        assert_eq!(&b[36..44], &[0x00, 0x04, 0x00, 0x08, 0x8e, 0x04, 0x00, 0x00]);
        assert_eq!(b[5], OPTS_PRESENT);
    }

    #[test]
    fn every_single_bit_flip_is_refused() {
        let mut n = PgmPacket::new(PgmType::Nak);
        n.sqn = 40;
        n.nla = Ipv4Addr::new(10, 77, 0, 1);
        n.group = Ipv4Addr::new(239, 255, 0, 1);
        n.naks.push(41);
        let b = round_trip(&n);
        for i in 0..b.len() * 8 {
            let mut x = b.clone();
            x[i / 8] ^= 1 << (i % 8);
            assert!(decode(&x).is_err(), "bit {i} flipped and accepted");
        }
    }

    fn resum(b: &mut [u8]) {
        b[6..8].fill(0);
        let c = !ones_sum(b);
        b[6..8].copy_from_slice(&if c == 0 { 0xffffu16 } else { c }.to_be_bytes());
    }

    #[test]
    fn malformed_by_reason() {
        assert_eq!(decode(&[0; 10]), Err(PgmError::Truncated));
        let mut b = round_trip(&spm());
        b[4] = 0x03;
        resum(&mut b);
        assert_eq!(decode(&b), Err(PgmError::UnknownType(3)));
        let mut b = round_trip(&spm());
        b[6..8].fill(0);
        assert_eq!(decode(&b), Err(PgmError::Checksum));
        let mut b = round_trip(&spm());
        b[29] = 2; // IPv6 AFI with a 4-byte NLA
        resum(&mut b);
        assert_eq!(decode(&b), Err(PgmError::Afi));
        let mut b = round_trip(&spm());
        b.truncate(30);
        resum(&mut b);
        assert_eq!(decode(&b), Err(PgmError::Truncated));
        // options flagged but absent
        let mut b = round_trip(&spm());
        b[5] = OPTS_PRESENT;
        resum(&mut b);
        assert_eq!(decode(&b), Err(PgmError::Options));
        // TSDU length one off
        let mut d = PgmPacket::new(PgmType::Odata);
        d.tsdu_len = 20;
        let mut b = round_trip(&d);
        b[15] = 21;
        resum(&mut b);
        assert_eq!(decode(&b), Err(PgmError::Length));
        // trailing bytes after an SPM
        let mut b = round_trip(&spm());
        b.extend_from_slice(&[0, 0]);
        resum(&mut b);
        assert_eq!(decode(&b), Err(PgmError::Length));
        // an option running past OPT_LENGTH's total
        let mut s = spm();
        s.fin = true;
        let mut b = round_trip(&s);
        b[41] = 8;
        resum(&mut b);
        assert_eq!(decode(&b), Err(PgmError::Options));
    }

    #[test]
    fn pgmcc_options_and_ack_follow_openpgms_layout() {
        // OpenPGM's ODATA with OPT_PGMCC_DATA, laid out by hand from its packed structures
        // (packet.h: pgm_opt_header {type, length, reserved}, pgm_opt_pgmcc_data {reserved,
        // tstamp, nla_afi, reserved2, nla}): 16 + 8 + OPT_LENGTH 4 + 16, then a 3-byte TSDU.
        let mut b = vec![0u8; 16 + 8 + 4 + 16 + 3];
        b[4] = 0x04;
        b[5] = 0x01;
        b[14..16].copy_from_slice(&3u16.to_be_bytes());
        b[16..20].copy_from_slice(&9u32.to_be_bytes());
        b[24..28].copy_from_slice(&[0x00, 0x04, 0x00, 20]);
        b[28..32].copy_from_slice(&[0x12 | 0x80, 16, 0, 0]);
        b[32..36].copy_from_slice(&0x0102_0304u32.to_be_bytes());
        b[36..40].copy_from_slice(&[0, 1, 0, 0]);
        b[40..44].copy_from_slice(&[10, 0, 0, 2]);
        resum(&mut b);
        let p = decode(&b).unwrap();
        assert_eq!(p.pgmcc_data, Some(PgmccData { tstamp: 0x0102_0304, acker: Ipv4Addr::new(10, 0, 0, 2) }));
        assert_eq!((p.sqn, p.tsdu_len, p.tsdu_offset()), (9, 3, 44));
        let mut again = vec![0u8; p.wire_len()];
        encode(&p, &mut again, |t| t.copy_from_slice(&b[44..])).unwrap();
        assert_eq!(again, b);

        // OpenPGM's send_ack: type 0x0d, pgm_ack {rx_max, bitmap}, OPT_LENGTH, then
        // OPT_PGMCC_FEEDBACK {reserved, tstamp, nla_afi, loss_rate, nla} as the last option.
        let mut a = vec![0u8; 16 + 8 + 4 + 16];
        a[4] = 0x0d;
        a[5] = 0x01;
        a[16..20].copy_from_slice(&1000u32.to_be_bytes());
        a[20..24].copy_from_slice(&0xffff_fff7u32.to_be_bytes());
        a[24..28].copy_from_slice(&[0x00, 0x04, 0x00, 20]);
        a[28..32].copy_from_slice(&[0x13 | 0x80, 16, 0, 0]);
        a[32..36].copy_from_slice(&77u32.to_be_bytes());
        a[36..40].copy_from_slice(&[0, 1, 0x01, 0xf4]);
        a[40..44].copy_from_slice(&[10, 0, 0, 3]);
        resum(&mut a);
        let p = decode(&a).unwrap();
        assert_eq!((p.kind, p.ack_rx_max, p.ack_bitmap), (PgmType::Ack, 1000, 0xffff_fff7));
        assert_eq!(p.pgmcc_feedback, Some(PgmccFeedback { tstamp: 77, loss: 500, nla: Ipv4Addr::new(10, 0, 0, 3) }));
        let mut again = vec![0u8; p.wire_len()];
        encode(&p, &mut again, |_| {}).unwrap();
        assert_eq!(again, a);

        // A NAK with a NAK list and the feedback: both round-trip, the feedback last.
        let mut n = PgmPacket::new(PgmType::Nak);
        n.sqn = 40;
        n.nla = Ipv4Addr::new(10, 77, 0, 1);
        n.group = Ipv4Addr::new(239, 255, 0, 1);
        n.naks.push(41);
        n.pgmcc_feedback = Some(PgmccFeedback { tstamp: 5, loss: 65535, nla: Ipv4Addr::new(10, 0, 0, 4) });
        let b = round_trip(&n);
        assert_eq!(&b[40..44], &[0x02, 8, 0, 0]);
        assert_eq!(&b[48..52], &[0x93, 16, 0, 0]);

        // Malformed: a PGMCC option of the wrong length, or an NLA that is not IPv4.
        let mut bad = a.clone();
        bad[29] = 12;
        resum(&mut bad);
        assert_eq!(decode(&bad), Err(PgmError::Options));
        let mut bad = a.clone();
        bad[37] = 2;
        resum(&mut bad);
        assert_eq!(decode(&bad), Err(PgmError::Afi));
        // An ACK shorter than its body.
        let mut short = a[..20].to_vec();
        short[5] = 0;
        resum(&mut short);
        assert_eq!(decode(&short), Err(PgmError::Truncated));
    }

    #[test]
    fn pgmcc_agents_packets_map_to_openpgms_and_back() {
        let e = Ends {
            port: 7500,
            group_addr: Ipv4Addr::new(239, 255, 0, 1),
            gsi: *b"cl\0\0\0\x01",
            sport: 3,
            remote: Some((*b"cl\0\0\0\x09", 4)),
            spm_sqn: 0,
        };
        let src_ip = Ipv4Addr::new(10, 77, 0, 1);
        let rx_ip = Ipv4Addr::new(10, 77, 1, 2);
        let ip_of = |n: NodeId| (n == NodeId(2)).then_some(rx_ip);
        let acker = Addr::new(NodeId(2), 7);
        let through = |w: &PgmPacket| {
            let mut b = vec![0u8; w.wire_len()];
            encode(w, &mut b, |t| {
                if !t.is_empty() {
                    zmq::frame(t, 1)
                }
            })
            .unwrap();
            decode(&b).unwrap()
        };

        // ODATA: PGM's sequence number, the acker's NLA, the timestamp in milliseconds
        let mut p = Packet::data(Dest::Group(castlab_core::GroupId(0)), 1000);
        p.seq = 41;
        let d = DataHeader { tx_seq: 41, ts_us: 123_456_789, acker: Some(acker), rdata: false, trail: 9 };
        p.header = d.encode();
        let Header::Control(c) = p.header else { unreachable!() };
        let (w, to, data) = cc_from_castlab(&p, c, &e, src_ip, None, ip_of).unwrap();
        assert_eq!(
            (w.kind, w.sqn, w.trail, to, data),
            (PgmType::Odata, 41, 9, SocketAddrV4::new(e.group_addr, 7500), true)
        );
        assert_eq!(w.pgmcc_data, Some(PgmccData { tstamp: 123_456, acker: rx_ip }));
        assert_eq!(w.wire_len(), 1000);
        let back = cc_to_castlab(&through(&w), Some(acker)).unwrap();
        p.header = back;
        assert_eq!(DataHeader::decode(&p), Some(DataHeader { ts_us: 123_456_000, ..d }));
        // an RDATA, and one naming no acker (an election: 0.0.0.0)
        p.header = DataHeader { rdata: true, acker: None, ..d }.encode();
        let Header::Control(c) = p.header else { unreachable!() };
        let (w, _, _) = cc_from_castlab(&p, c, &e, src_ip, None, ip_of).unwrap();
        assert_eq!((w.kind, w.pgmcc_data.unwrap().acker), (PgmType::Rdata, Ipv4Addr::UNSPECIFIED));
        p.header = cc_to_castlab(&through(&w), None).unwrap();
        assert_eq!(DataHeader::decode(&p).map(|h| (h.rdata, h.acker)), Some((true, None)));
        // a transmit sequence number PGM cannot carry, or an acker of unknown address: no PGM form
        p.header = DataHeader { tx_seq: 42, ..d }.encode();
        let Header::Control(c) = p.header else { unreachable!() };
        assert!(cc_from_castlab(&p, c, &e, src_ip, None, ip_of).is_none());
        p.header = DataHeader { acker: Some(Addr::new(NodeId(5), 7)), ..d }.encode();
        let Header::Control(c) = p.header else { unreachable!() };
        assert!(cc_from_castlab(&p, c, &e, src_ip, None, ip_of).is_none());

        // upstream: to the source's address, its TSI, the ports swapped (RFC 3208 §8)
        let mut q = Packet::data(Dest::Unicast(Addr::new(NodeId(0), 0)), 64);
        q.seq = 40;
        let nak = NakHeader { ts_echo_us: 5_000_000, have_ts: true, loss: 700, election: false, ack: None };
        q.header = nak.encode();
        let Header::Control(c) = q.header else { unreachable!() };
        let (w, to, _) = cc_from_castlab(&q, c, &e, rx_ip, Some(src_ip), ip_of).unwrap();
        assert_eq!(
            (w.kind, w.sqn, w.nla, w.group, to),
            (PgmType::Nak, 40, src_ip, e.group_addr, SocketAddrV4::new(src_ip, 7500))
        );
        assert_eq!((w.gsi, w.sport, w.dport), (*b"cl\0\0\0\x09", 7500, 4));
        assert_eq!(w.pgmcc_feedback, Some(PgmccFeedback { tstamp: 5000, loss: 700, nla: rx_ip }));
        q.header = cc_to_castlab(&through(&w), None).unwrap();
        assert_eq!(NakHeader::decode(&q), Some(nak));
        // the acker's ACK
        let ack = AckHeader { ts_echo_us: 7_000, loss: 3, rx_max: 40, bitmap: 0xffff_fff7 };
        q.header = ack.encode();
        let Header::Control(c) = q.header else { unreachable!() };
        let (w, _, _) = cc_from_castlab(&q, c, &e, rx_ip, Some(src_ip), ip_of).unwrap();
        assert_eq!((w.kind, w.ack_rx_max, w.ack_bitmap), (PgmType::Ack, 40, 0xffff_fff7));
        q.header = cc_to_castlab(&through(&w), None).unwrap();
        assert_eq!(AckHeader::decode(&q), Some(ack));
        // OpenPGM's RX_MAX is its window's lead, which an SPM moves past what arrived: bits 0-15
        // clear; RX_MAX comes down to the newest received, the bitmap with it
        let mut w2 = w;
        w2.ack_rx_max = 0x77;
        w2.ack_bitmap = 0xfffd_0000;
        q.header = cc_to_castlab(&through(&w2), None).unwrap();
        let a2 = AckHeader::decode(&q).unwrap();
        assert_eq!((a2.rx_max, a2.bitmap), (0x77 - 16, 0xfffd));
        w2.ack_bitmap = 0;
        assert_eq!(cc_to_castlab(&through(&w2), None), None);
        // an election request goes as OpenPGM's receivers send one: an ACK with the feedback
        let el = NakHeader { election: true, ack: Some((12, 0b1011)), ..nak };
        q.header = el.encode();
        let Header::Control(c) = q.header else { unreachable!() };
        let (w, _, _) = cc_from_castlab(&q, c, &e, rx_ip, Some(src_ip), ip_of).unwrap();
        assert_eq!(
            (w.kind, w.ack_rx_max, w.ack_bitmap, w.pgmcc_feedback.unwrap().nla),
            (PgmType::Ack, 12, 0b1011, rx_ip)
        );
        // an NCF to the group
        let mut n = Packet::data(Dest::Group(castlab_core::GroupId(0)), 64);
        n.seq = 40;
        n.header = Header::Control(ControlMsg { kind: PGMCC_NCF_KIND, args: [0; 3] });
        let Header::Control(c) = n.header else { unreachable!() };
        let (w, _, data) = cc_from_castlab(&n, c, &e, src_ip, None, ip_of).unwrap();
        assert_eq!((w.kind, w.sqn, w.nla, data), (PgmType::Ncf, 40, src_ip, false));
        // a packet without PGMCC's options is not one of its layouts
        assert_eq!(cc_to_castlab(&through(&w), None), None);
    }

    #[test]
    fn unknown_options_are_skipped() {
        // an ODATA with OPT_LENGTH and an OPT_FRAGMENT (as OpenPGM sends for a large APDU)
        let mut b = vec![0u8; 16 + 8 + 4 + 16 + 5];
        b[4] = PgmType::Odata as u8;
        b[5] = OPTS_PRESENT;
        b[14..16].copy_from_slice(&5u16.to_be_bytes());
        b[16..20].copy_from_slice(&77u32.to_be_bytes());
        b[24..28].copy_from_slice(&[0, 4, 0, 20]);
        b[28] = OPT_FRAGMENT | OPT_END;
        b[29] = 16;
        resum(&mut b);
        let p = decode(&b).unwrap();
        assert_eq!((p.kind, p.sqn, p.tsdu_len, p.tsdu_offset()), (PgmType::Odata, 77, 5, 24));
    }

    #[test]
    fn zmq_framing_short_and_long() {
        for n in [12usize, 100, 257, 258, 300, 536] {
            let mut t = vec![0xeeu8; n];
            zmq::frame(&mut t, 0x0102_0304_0506_0708);
            assert_eq!(zmq::tag(&t), Some(0x0102_0304_0506_0708), "{n}");
            // the length counts the flags byte and the body: the rest of the TSDU
            if t[2] == 0xff {
                assert_eq!(u64::from_be_bytes(t[3..11].try_into().unwrap()) as usize, n - 11);
            } else {
                assert_eq!(t[2] as usize, n - 3);
            }
        }
    }
}
