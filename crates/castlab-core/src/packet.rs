//! The packet every agent, router extension and link handles.
//!
//! A `Packet` is a fixed-size `Copy` value: the simulator stores packets in a pool and moves
//! them by value, so forwarding and multicast fan-out never allocate. Protocol headers are
//! variants of [`Header`]; each protocol issue adds its own variant (and its wire encoding in
//! [`crate::codec`]).

use crate::ids::{Addr, Dest, GroupId};
use crate::time::Instant;

/// A `u8`-backed code carried on the wire: the codec turns an unknown byte into an error in one
/// place ([`TryFrom<u8>`]), and bindings show it by [`name`](Self::name). The first variant is
/// the `Default`.
#[macro_export]
macro_rules! wire_enum {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $(#[$fm:meta])* $first:ident = $fv:literal $(, $(#[$vm:meta])* $var:ident = $val:literal)* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        $vis enum $name {
            $(#[$fm])* $first = $fv,
            $($(#[$vm])* $var = $val,)*
        }
        impl Default for $name {
            fn default() -> Self {
                $name::$first
            }
        }
        impl TryFrom<u8> for $name {
            type Error = u8;
            fn try_from(v: u8) -> Result<Self, u8> {
                match v {
                    $fv => Ok($name::$first),
                    $($val => Ok($name::$var),)*
                    other => Err(other),
                }
            }
        }
        impl $name {
            /// Every value, in wire order.
            pub const ALL: &'static [$name] = &[$name::$first $(, $name::$var)*];
            /// Every value's name, in wire order (index = code where the codes count from 0).
            pub const NAMES: &'static [&'static str] = &[stringify!($first) $(, stringify!($var))*];
            /// The variant's name, for records and bindings.
            pub const fn name(self) -> &'static str {
                match self {
                    $name::$first => stringify!($first),
                    $($name::$var => stringify!($var),)*
                }
            }
        }
    };
}

/// A small generic control message: a kind tag and three words. Enough for test extensions
/// and simple signalling; protocols with richer headers get their own [`Header`] variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ControlMsg {
    pub kind: u16,
    pub args: [u64; 3],
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
    /// Every flag bit; the codec rejects any other.
    pub const ALL_FLAGS: u8 = Self::DATA | Self::ACK | Self::FIN;

    /// SACK block `i` as absolute `[start, end)`, or None when absent.
    pub fn sack_block(&self, i: usize) -> Option<(u64, u64)> {
        let (s, e) = *self.sack.get(i)?;
        (s < e).then(|| (self.ack + s as u64, self.ack + e as u64))
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

wire_enum! {
    /// The kind of an RLM control message.
    pub enum RlmKind { Join = 1, Session = 2 }
}

impl RlmHeader {
    pub const JOIN: RlmKind = RlmKind::Join;
    pub const SESSION: RlmKind = RlmKind::Session;
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

wire_enum! {
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

wire_enum! {
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

wire_enum! {
    /// The kind of an NLM packet.
    pub enum NlmKind { Data = 1, DropReq = 2, AddReq = 3, Sess = 4 }
}

impl NlmHeader {
    pub const DATA: NlmKind = NlmKind::Data;
    pub const DROP_REQ: NlmKind = NlmKind::DropReq;
    pub const ADD_REQ: NlmKind = NlmKind::AddReq;
    pub const SESS: NlmKind = NlmKind::Sess;
}

wire_enum! {
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

/// A packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique id within a run, stamped by the engine when the packet is first sent (0 before).
    pub uid: u64,
    /// Sender's address; the engine stamps it from the sending agent's binding.
    pub src: Addr,
    pub dst: Dest,
    /// Size on the wire, headers included: what serialisation time is computed from.
    pub size_bytes: u32,
    /// Flow or session identifier, chosen by the sender; monitors key on it.
    pub flow: u32,
    /// Sequence number, per (flow, layer) for data.
    pub seq: u64,
    /// Layer (0-based) for layered sources; 0 otherwise.
    pub layer: u8,
    /// Congestion mark (RED in marking mode, ECN-like); routers may set it.
    pub marked: bool,
    /// When the sender created it.
    pub sent_at: Instant,
    pub header: Header,
}

impl Packet {
    /// A data packet with the given destination and size; every other field zero.
    pub fn data(dst: Dest, size_bytes: u32) -> Self {
        Packet {
            uid: 0,
            src: Addr::default(),
            dst,
            size_bytes,
            flow: 0,
            seq: 0,
            layer: 0,
            marked: false,
            sent_at: Instant::ZERO,
            header: Header::Data,
        }
    }

    pub fn group(&self) -> Option<GroupId> {
        match self.dst {
            Dest::Group(g) => Some(g),
            Dest::Unicast(_) => None,
        }
    }
}
