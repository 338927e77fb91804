//! The protocol headers a [`Packet`](crate::Packet) carries, each with its wire body.
//!
//! Every header is a `Copy` struct (a [`Header`] variant) with its kind codes as a
//! [`wire_enum!`](crate::wire_enum), and its body's length, layout, encoding and checks beside
//! it: `LEN`, `write` and `read`. [`crate::codec`] writes the fixed part of a packet and hands
//! the body to `Header::write_body` and `Header::read_body`. The body layouts (big-endian),
//! after the 52-byte fixed part:
//! ```text
//! data    none
//! control u16 kind, 3 x u64 args (26 bytes)
//! tcp     u64 ack, u8 flags, u32 payload, u32 wnd, u64 ts_val, u64 ts_ecr,
//!         3 x (u32, u32) SACK blocks as offsets above ack, (0, 0) absent (57 bytes)
//! rlm     u8 kind, u8 level, u8 current, u32 receivers (7 bytes)
//! nlm     u8 kind, u8 level, u32 group, u32 up node, u16 up port, u32 seq (16 bytes)
//! pgm     u8 kind, u64 trail, u64 lead (17 bytes)
//! bcf     u8 kind (1 request, 2 reply), u8 flags (bits 0-1), u32 level, u32 label, u64 msg (18 bytes)
//! ```
//! Reading never panics: an unknown kind byte or a reserved bit is a [`CodecError`]; the
//! codec has checked the body's length before.
//!
//! A new protocol reuses a variant when one fits; otherwise its header goes here, with a
//! [`HeaderKind`] code, a [`Header`] variant and an arm in each of the dispatches below.

use crate::codec::{code, u16_at, u32_at, u64_at, CodecError};
use crate::ids::{Addr, NodeId};

/// A small generic control message: a kind tag and three words. Enough for test extensions
/// and simple signalling; protocols with richer headers get their own [`Header`] variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ControlMsg {
    pub kind: u16,
    pub args: [u64; 3],
}

impl ControlMsg {
    /// Wire body: u16 kind, 3 x u64 args.
    pub(crate) const LEN: usize = 26;

    fn write(&self, b: &mut [u8]) {
        b[0..2].copy_from_slice(&self.kind.to_be_bytes());
        for (i, a) in self.args.iter().enumerate() {
            b[2 + 8 * i..10 + 8 * i].copy_from_slice(&a.to_be_bytes());
        }
    }

    fn read(b: &[u8]) -> Result<Self, CodecError> {
        Ok(ControlMsg { kind: u16_at(b, 0), args: [u64_at(b, 2), u64_at(b, 10), u64_at(b, 18)] })
    }
}

/// TCP segment header fields beyond `Packet::seq` (the first byte's sequence number for
/// data, in bytes) and `Packet::size_bytes` (headers included).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpHeader {
    /// Cumulative acknowledgement: the next byte expected (valid with `TcpHeader::ACK`).
    pub ack: u64,
    /// Bit set of `TcpHeader::DATA`, `TcpHeader::ACK`, `TcpHeader::FIN`.
    pub flags: u8,
    /// Payload bytes carried (0 for a pure ACK).
    pub payload: u32,
    /// Receiver window, bytes.
    pub wnd: u32,
    /// Timestamp value and echo (RFC 7323 style), ns: the sender's clock; the receiver echoes it.
    pub ts_val: u64,
    pub ts_ecr: u64,
    /// SACK blocks (RFC 2018 §3), at most three (the option space left beside timestamps),
    /// as offsets above `ack`: block i covers bytes `[ack + sack[i].0, ack + sack[i].1)`; a
    /// block with `0 == 1` is absent. Offsets keep the header small (a window is < 2^32 bytes).
    pub sack: [(u32, u32); 3],
}

impl TcpHeader {
    pub const DATA: u8 = 1;
    pub const ACK: u8 = 2;
    pub const FIN: u8 = 4;
    /// RFC 9293 §3.9.1's push: the sender marks the last segment of what it hands the network
    /// at once (castlab-proto's `TcpConfig::push`).
    pub const PSH: u8 = 8;
    /// Every flag bit; the codec rejects any other.
    pub const ALL_FLAGS: u8 = Self::DATA | Self::ACK | Self::FIN | Self::PSH;

    /// SACK block `i` as absolute `[start, end)`, or None when absent.
    pub fn sack_block(&self, i: usize) -> Option<(u64, u64)> {
        let (s, e) = *self.sack.get(i)?;
        (s < e).then(|| (self.ack + s as u64, self.ack + e as u64))
    }
}

impl TcpHeader {
    /// Wire body: u64 ack, u8 flags, u32 payload, u32 wnd, u64 ts_val, u64 ts_ecr, 3 x (u32,
    /// u32) SACK blocks as offsets above ack, (0, 0) absent. Flags outside
    /// [`TcpHeader::ALL_FLAGS`] and inverted or empty non-zero blocks are rejected.
    pub(crate) const LEN: usize = 57;

    fn write(&self, b: &mut [u8]) {
        b[0..8].copy_from_slice(&self.ack.to_be_bytes());
        b[8] = self.flags;
        b[9..13].copy_from_slice(&self.payload.to_be_bytes());
        b[13..17].copy_from_slice(&self.wnd.to_be_bytes());
        b[17..25].copy_from_slice(&self.ts_val.to_be_bytes());
        b[25..33].copy_from_slice(&self.ts_ecr.to_be_bytes());
        for (i, (s, e)) in self.sack.iter().enumerate() {
            b[33 + 8 * i..37 + 8 * i].copy_from_slice(&s.to_be_bytes());
            b[37 + 8 * i..41 + 8 * i].copy_from_slice(&e.to_be_bytes());
        }
    }

    fn read(b: &[u8]) -> Result<Self, CodecError> {
        if b[8] & !TcpHeader::ALL_FLAGS != 0 {
            return Err(CodecError::Reserved("tcp flags"));
        }
        let mut sack = [(0u32, 0u32); 3];
        for (i, blk) in sack.iter_mut().enumerate() {
            *blk = (u32_at(b, 33 + 8 * i), u32_at(b, 37 + 8 * i));
            if blk.0 > blk.1 || (blk.0 == blk.1 && blk.0 != 0) {
                return Err(CodecError::Reserved("tcp sack block"));
            }
        }
        Ok(TcpHeader {
            ack: u64_at(b, 0),
            flags: b[8],
            payload: u32_at(b, 9),
            wnd: u32_at(b, 13),
            ts_val: u64_at(b, 17),
            ts_ecr: u64_at(b, 25),
            sack,
        })
    }
}

/// RLM control messages (McCanne et al. §3.3: join-experiment announcements, and session
/// messages from which receivers estimate the group size, as RTCP does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RlmHeader {
    /// `RlmKind::Join` (an experiment at `level` starts) or `RlmKind::Session`.
    pub kind: RlmKind,
    /// The layer level concerned (1-based subscription level).
    pub level: u8,
    /// The sender's current subscription level (session messages).
    pub current: u8,
    /// The sender's estimate of the number of receivers (session messages).
    pub receivers: u32,
}

crate::wire_enum! {
    /// The kind of an RLM control message.
    pub enum RlmKind { Join = 1, Session = 2 }
}

impl RlmHeader {
    pub const JOIN: RlmKind = RlmKind::Join;
    pub const SESSION: RlmKind = RlmKind::Session;
}

impl RlmHeader {
    /// Wire body: u8 kind, u8 level, u8 current, u32 receivers.
    pub(crate) const LEN: usize = 7;

    fn write(&self, b: &mut [u8]) {
        b[0] = self.kind as u8;
        b[1] = self.level;
        b[2] = self.current;
        b[3..7].copy_from_slice(&self.receivers.to_be_bytes());
    }

    fn read(b: &[u8]) -> Result<Self, CodecError> {
        Ok(RlmHeader { kind: code("rlm kind", b[0])?, level: b[1], current: b[2], receivers: u32_at(b, 3) })
    }
}

/// A Breadcrumb Forwarding Service message (Yano & McCanne 1999, §II-A, Fig. 2): a request
/// travels from a receiver toward the source and leaves breadcrumbs; a reply travels back along
/// them. `Packet::dst` of a request is the source's address (the `src` of `bcf_request`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BcfHeader {
    /// `BcfKind::Request` or `BcfKind::Reply`.
    pub kind: BcfKind,
    /// Bit set of `BcfHeader::NULL` (no transport message) and `BcfHeader::REFRESH` (a
    /// router's specially marked null request, §II-B soft state).
    pub flags: u8,
    /// The level number (§II-A): requests pass a breadcrumb only above its level; a reply tears
    /// down links whose level is at most this.
    pub level: u32,
    /// The BCF label; with the source it names the breadcrumb (S, L).
    pub label: u32,
    /// The transport message (`msg` of Fig. 2), one word: a symbol id, a sequence number...
    pub msg: u64,
}

crate::wire_enum! {
    /// The kind of a BCF message.
    pub enum BcfKind { Request = 1, Reply = 2 }
}

impl BcfHeader {
    pub const REQUEST: BcfKind = BcfKind::Request;
    pub const REPLY: BcfKind = BcfKind::Reply;
    pub const NULL: u8 = 1;
    pub const REFRESH: u8 = 2;

    pub fn is_request(&self) -> bool {
        self.kind == Self::REQUEST
    }
    pub fn is_reply(&self) -> bool {
        self.kind == Self::REPLY
    }
}

impl BcfHeader {
    /// Wire body: u8 kind (1 request, 2 reply), u8 flags (bits 0-1), u32 level, u32 label,
    /// u64 msg. Other flag bits are rejected.
    pub(crate) const LEN: usize = 18;

    fn write(&self, b: &mut [u8]) {
        b[0] = self.kind as u8;
        b[1] = self.flags;
        b[2..6].copy_from_slice(&self.level.to_be_bytes());
        b[6..10].copy_from_slice(&self.label.to_be_bytes());
        b[10..18].copy_from_slice(&self.msg.to_be_bytes());
    }

    fn read(b: &[u8]) -> Result<Self, CodecError> {
        let kind = code("bcf kind", b[0])?;
        if b[1] & !(BcfHeader::NULL | BcfHeader::REFRESH) != 0 {
            return Err(CodecError::Reserved("bcf flags"));
        }
        Ok(BcfHeader { kind, flags: b[1], level: u32_at(b, 2), label: u32_at(b, 6), msg: u64_at(b, 10) })
    }
}

/// PGM-like transport header of LE-SBCC (Thapliyal et al. §5.1): the packet kinds ODATA,
/// RDATA, NAK and NCF, with the source's transmit window carried in every packet the source
/// sends (in place of PGM's SPMs). The sequence number concerned is `Packet::seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PgmHeader {
    /// `ODATA`, `RDATA`, `NAK`, `NCF` or `SPM`.
    pub kind: PgmKind,
    /// Transmit-window trail: the oldest sequence number the source can still repair.
    pub trail: u64,
    /// Transmit-window lead, exclusive: one past the highest sequence number sent so far.
    pub lead: u64,
}

crate::wire_enum! {
    /// The kind of a PGM-like packet.
    pub enum PgmKind {
        /// Original data.
        Odata = 1,
        /// Repair data (a retransmission answering a NAK).
        Rdata = 2,
        /// Negative acknowledgement, receiver to source (one loss indication, LI).
        Nak = 3,
        /// NAK confirmation, multicast by the source: suppresses other receivers' NAKs.
        Ncf = 4,
        /// Window advertisement without data, sent only after the last ODATA of a finite
        /// transfer so that a lost tail is noticed (PGM's SPM role, which §5.1 otherwise drops).
        Spm = 5,
    }
}

impl PgmHeader {
    pub const ODATA: PgmKind = PgmKind::Odata;
    pub const RDATA: PgmKind = PgmKind::Rdata;
    pub const NAK: PgmKind = PgmKind::Nak;
    pub const NCF: PgmKind = PgmKind::Ncf;
    pub const SPM: PgmKind = PgmKind::Spm;
}

impl PgmHeader {
    /// Wire body: u8 kind, u64 trail, u64 lead.
    pub(crate) const LEN: usize = 17;

    fn write(&self, b: &mut [u8]) {
        b[0] = self.kind as u8;
        b[1..9].copy_from_slice(&self.trail.to_be_bytes());
        b[9..17].copy_from_slice(&self.lead.to_be_bytes());
    }

    fn read(b: &[u8]) -> Result<Self, CodecError> {
        Ok(PgmHeader { kind: code("pgm kind", b[0])?, trail: u64_at(b, 1), lead: u64_at(b, 9) })
    }
}

/// NLM packets (Nakauchi, Morikawa, Aoyama, *Network-supported Rate Control Mechanism for
/// Multicast Streaming Media*, §3): data with its layer (all layers of a session on one group,
/// §3.1; the layer itself is `Packet::layer`, 0-based, i.e. Layer(S, L) has `layer = L - 1`),
/// the signalling requests DROP_REQ / ADD_REQ (§3.4, unicast to the upstream LMR) and the
/// session message SESS (§3.5, multicast by the sender and rewritten by each LMR, Fig. 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NlmHeader {
    /// `NlmKind::Data`, `DropReq`, `AddReq` or `Sess`.
    pub kind: NlmKind,
    /// L: the layer number of a request (1-based), or the number of layers in SESS.
    pub level: u8,
    /// The session S_i: its (source-specific) multicast group.
    pub group: u32,
    /// SESS: UpID, the address of the last LMR (or the sender) the message passed.
    /// DROP_REQ / ADD_REQ: the request's originator (kept when an LMR forwards it).
    pub up: Addr,
    /// DROP_REQ / ADD_REQ: the originator's request number. The repetitions of a request carry
    /// the same (originator, number), so that an LMR can tell a repetition from a new request
    /// (§3.4-§3.5: a request changes L_cur only when it is "the first one received").
    pub seq: u32,
}

crate::wire_enum! {
    /// The kind of an NLM packet.
    pub enum NlmKind { Data = 1, DropReq = 2, AddReq = 3, Sess = 4 }
}

impl NlmHeader {
    pub const DATA: NlmKind = NlmKind::Data;
    pub const DROP_REQ: NlmKind = NlmKind::DropReq;
    pub const ADD_REQ: NlmKind = NlmKind::AddReq;
    pub const SESS: NlmKind = NlmKind::Sess;
}

impl NlmHeader {
    /// Wire body: u8 kind, u8 level, u32 group, u32 up node, u16 up port, u32 seq.
    pub(crate) const LEN: usize = 16;

    fn write(&self, b: &mut [u8]) {
        b[0] = self.kind as u8;
        b[1] = self.level;
        b[2..6].copy_from_slice(&self.group.to_be_bytes());
        b[6..10].copy_from_slice(&self.up.node.0.to_be_bytes());
        b[10..12].copy_from_slice(&self.up.port.to_be_bytes());
        b[12..16].copy_from_slice(&self.seq.to_be_bytes());
    }

    fn read(b: &[u8]) -> Result<Self, CodecError> {
        Ok(NlmHeader {
            kind: code("nlm kind", b[0])?,
            level: b[1],
            group: u32_at(b, 2),
            up: Addr::new(NodeId(u32_at(b, 6)), u16_at(b, 10)),
            seq: u32_at(b, 12),
        })
    }
}

crate::wire_enum! {
    /// The wire tag of each [`Header`] variant (5 was used once and is retired).
    pub enum HeaderKind { Data = 0, Control = 1, Tcp = 2, Rlm = 3, Nlm = 4, Pgm = 6, Bcf = 7 }
}

/// Protocol header carried by a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Header {
    /// Application data (CBR and layered sources).
    #[default]
    Data,
    /// A generic control message.
    Control(ControlMsg),
    Tcp(TcpHeader),
    Rlm(RlmHeader),
    Bcf(BcfHeader),
    Pgm(PgmHeader),
    Nlm(NlmHeader),
}

impl Header {
    /// This header's wire tag.
    pub const fn kind(&self) -> HeaderKind {
        match self {
            Header::Data => HeaderKind::Data,
            Header::Control(_) => HeaderKind::Control,
            Header::Tcp(_) => HeaderKind::Tcp,
            Header::Rlm(_) => HeaderKind::Rlm,
            Header::Nlm(_) => HeaderKind::Nlm,
            Header::Pgm(_) => HeaderKind::Pgm,
            Header::Bcf(_) => HeaderKind::Bcf,
        }
    }
}

impl Header {
    /// The body's length for a header kind.
    pub(crate) const fn body_len(k: HeaderKind) -> usize {
        match k {
            HeaderKind::Data => 0,
            HeaderKind::Control => ControlMsg::LEN,
            HeaderKind::Tcp => TcpHeader::LEN,
            HeaderKind::Rlm => RlmHeader::LEN,
            HeaderKind::Nlm => NlmHeader::LEN,
            HeaderKind::Bcf => BcfHeader::LEN,
            HeaderKind::Pgm => PgmHeader::LEN,
        }
    }

    /// Write the body into `b`, which is exactly `body_len(self.kind())` zeroed bytes.
    pub(crate) fn write_body(&self, b: &mut [u8]) {
        match self {
            Header::Data => {}
            Header::Control(h) => h.write(b),
            Header::Tcp(h) => h.write(b),
            Header::Rlm(h) => h.write(b),
            Header::Nlm(h) => h.write(b),
            Header::Bcf(h) => h.write(b),
            Header::Pgm(h) => h.write(b),
        }
    }

    /// Read a body of kind `k` from `b`, which holds at least `body_len(k)` bytes.
    pub(crate) fn read_body(k: HeaderKind, b: &[u8]) -> Result<Header, CodecError> {
        Ok(match k {
            HeaderKind::Data => Header::Data,
            HeaderKind::Control => Header::Control(ControlMsg::read(b)?),
            HeaderKind::Tcp => Header::Tcp(TcpHeader::read(b)?),
            HeaderKind::Rlm => Header::Rlm(RlmHeader::read(b)?),
            HeaderKind::Nlm => Header::Nlm(NlmHeader::read(b)?),
            HeaderKind::Bcf => Header::Bcf(BcfHeader::read(b)?),
            HeaderKind::Pgm => Header::Pgm(PgmHeader::read(b)?),
        })
    }
}

/// PGMCC's packets (Rizzo et al., draft-ietf-rmt-bb-pgmcc-03; the agents are
/// `castlab_proto::pgmcc`): `ControlMsg` layouts, here so that the real-network driver can
/// map them to RFC 3208 packets with OpenPGM's PGMCC options and back.
pub mod pgmcc {
    use crate::ids::{Addr, NodeId};
    use crate::{ControlMsg, Header, Packet};

    /// `ControlMsg::kind` of ODATA and RDATA ("PD").
    pub const PGMCC_DATA_KIND: u16 = 0x5044;
    /// `ControlMsg::kind` of NAKs, repair requests and election requests ("PN").
    pub const PGMCC_NAK_KIND: u16 = 0x504E;
    /// `ControlMsg::kind` of NCFs ("PC").
    pub const PGMCC_NCF_KIND: u16 = 0x5043;
    /// `ControlMsg::kind` of the acker's ACKs ("PA").
    pub const PGMCC_ACK_KIND: u16 = 0x5041;

    fn addr_bits(a: Addr) -> (u64, u64) {
        (a.node.0 as u64, a.port as u64)
    }

    /// What an ODATA or RDATA carries besides `Packet::seq` (PGM's sequence number), as
    /// OPT_PGMCC_DATA (timestamp, acker) plus the transmit sequence number and PGM's trail.
    ///
    /// Layout in `ControlMsg::args`: `args[0]` = transmit sequence number; `args[1]` = timestamp
    /// (bits 0-31, the sender's clock in microseconds) and the acker's node (32-63); `args[2]` = the acker's port (0-15),
    /// has-acker (16), RDATA (17), and the transmit window's trail, PGM's low 32 bits (32-63).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct DataHeader {
        pub tx_seq: u64,
        pub ts_us: u32,
        /// The receiver that must acknowledge this packet (None: an election is asked for).
        pub acker: Option<Addr>,
        pub rdata: bool,
        /// The oldest PGM sequence number the sender can still repair (low 32 bits).
        pub trail: u32,
    }

    impl DataHeader {
        pub fn encode(&self) -> Header {
            let (node, port) = self.acker.map(addr_bits).unwrap_or((0, 0));
            let flags = (self.acker.is_some() as u64) << 16 | (self.rdata as u64) << 17;
            Header::Control(ControlMsg {
                kind: PGMCC_DATA_KIND,
                args: [self.tx_seq, self.ts_us as u64 | node << 32, port | flags | (self.trail as u64) << 32],
            })
        }

        /// The header of a PGMCC data packet, or None (not one, or reserved bits set).
        pub fn decode(p: &Packet) -> Option<Self> {
            let Header::Control(ControlMsg { kind: PGMCC_DATA_KIND, args }) = p.header else { return None };
            if args[2] & 0xFFFC_0000 != 0 {
                return None;
            }
            let acker = (args[2] >> 16 & 1 == 1).then(|| Addr::new(NodeId((args[1] >> 32) as u32), args[2] as u16));
            Some(DataHeader {
                tx_seq: args[0],
                ts_us: args[1] as u32,
                acker,
                rdata: args[2] >> 17 & 1 == 1,
                trail: (args[2] >> 32) as u32,
            })
        }
    }

    /// A NAK besides `Packet::seq` (the PGM sequence number asked for): OPT_PGMCC_FEEDBACK's
    /// timestamp echo and loss rate. An election NAK (§2.3.1) also carries the receiver's ACK
    /// state (`ack`: RX_MAX and the bitmap, as an [`AckHeader`] has them): on RFC 3208's wire it
    /// travels as an ACK, the packet OpenPGM's receivers answer an election with.
    ///
    /// Layout in `ControlMsg::args`: `args[0]` = the echoed timestamp plus the correction term
    /// (bits 0-31, the sender's clock) and p (32-47, the 16-bit loss rate); `args[1]` = election
    /// (bit 0: a dummy NAK of §2.3.1 asking for no repair), has-timestamp (bit 1), has-ACK-state
    /// (bit 2), the bitmap (32-63); `args[2]` = RX_MAX (0 without ACK state).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct NakHeader {
        pub ts_echo_us: u32,
        pub have_ts: bool,
        pub loss: u16,
        pub election: bool,
        /// (RX_MAX, bitmap) of an election NAK; None on a repair request.
        pub ack: Option<(u64, u32)>,
    }

    impl NakHeader {
        pub fn encode(&self) -> Header {
            let (rx_max, bitmap) = self.ack.unwrap_or((0, 0));
            Header::Control(ControlMsg {
                kind: PGMCC_NAK_KIND,
                args: [
                    self.ts_echo_us as u64 | (self.loss as u64) << 32,
                    self.election as u64
                        | (self.have_ts as u64) << 1
                        | (self.ack.is_some() as u64) << 2
                        | (bitmap as u64) << 32,
                    rx_max,
                ],
            })
        }

        pub fn decode(p: &Packet) -> Option<Self> {
            let Header::Control(ControlMsg { kind: PGMCC_NAK_KIND, args }) = p.header else { return None };
            let has_ack = args[1] >> 2 & 1 == 1;
            if args[0] >> 48 != 0 || args[1] & 0xFFFF_FFF8 != 0 || (!has_ack && (args[1] >> 32 != 0 || args[2] != 0)) {
                return None;
            }
            Some(NakHeader {
                ts_echo_us: args[0] as u32,
                loss: (args[0] >> 32) as u16,
                election: args[1] & 1 == 1,
                have_ts: args[1] >> 1 & 1 == 1,
                ack: has_ack.then_some((args[2], (args[1] >> 32) as u32)),
            })
        }
    }

    /// An ACK (§2.1.2; OpenPGM's packet type 0x0d with OPT_PGMCC_FEEDBACK).
    ///
    /// Layout in `ControlMsg::args`: `args[0]` = the echoed timestamp plus correction (bits 0-31)
    /// and p (32-47, the 16-bit loss rate); `args[1]` = RX_MAX, the highest transmit sequence number received; `args[2]`
    /// = the bitmap (bits 0-31; bit k: RX_MAX - k received, so bit 0 is always set).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct AckHeader {
        pub ts_echo_us: u32,
        pub loss: u16,
        pub rx_max: u64,
        pub bitmap: u32,
    }

    impl AckHeader {
        pub fn encode(&self) -> Header {
            Header::Control(ControlMsg {
                kind: PGMCC_ACK_KIND,
                args: [self.ts_echo_us as u64 | (self.loss as u64) << 32, self.rx_max, self.bitmap as u64],
            })
        }

        pub fn decode(p: &Packet) -> Option<Self> {
            let Header::Control(ControlMsg { kind: PGMCC_ACK_KIND, args }) = p.header else { return None };
            if args[0] >> 48 != 0 || args[2] >> 32 != 0 || args[2] & 1 == 0 {
                return None;
            }
            Some(AckHeader {
                ts_echo_us: args[0] as u32,
                loss: (args[0] >> 32) as u16,
                rx_max: args[1],
                bitmap: args[2] as u32,
            })
        }
    }
}
