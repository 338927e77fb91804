//! The packet every agent, router extension and link handles.
//!
//! A `Packet` is a fixed-size `Copy` value: the simulator stores packets in a pool and moves
//! them by value, so forwarding and multicast fan-out never allocate. Protocol headers are
//! variants of [`Header`]; each protocol issue adds its own variant (and its wire encoding in
//! [`crate::codec`]).

use crate::ids::{Addr, Dest, GroupId};
use crate::time::Instant;

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
}

impl TcpHeader {
    pub const DATA: u8 = 1;
    pub const ACK: u8 = 2;
    pub const FIN: u8 = 4;
}

/// RLM control messages (McCanne et al. §3.3: join-experiment announcements, and session
/// messages from which receivers estimate the group size, as RTCP does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RlmHeader {
    /// `RlmHeader::JOIN` (an experiment at `level` starts) or `RlmHeader::SESSION`.
    pub kind: u8,
    /// The layer level concerned (1-based subscription level).
    pub level: u8,
    /// The sender's current subscription level (session messages).
    pub current: u8,
    /// The sender's estimate of the number of receivers (session messages).
    pub receivers: u32,
}

impl RlmHeader {
    pub const JOIN: u8 = 1;
    pub const SESSION: u8 = 2;
}

/// A Breadcrumb Forwarding Service message (Yano & McCanne 1999, §II-A, Fig. 2): a request
/// travels from a receiver toward the source and leaves breadcrumbs; a reply travels back along
/// them. `Packet::dst` of a request is the source's address (the `src` of `bcf_request`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BcfHeader {
    /// `BcfHeader::REQUEST` or `BcfHeader::REPLY`.
    pub kind: u8,
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

impl BcfHeader {
    pub const REQUEST: u8 = 1;
    pub const REPLY: u8 = 2;
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
    pub kind: u8,
    /// Transmit-window trail: the oldest sequence number the source can still repair.
    pub trail: u64,
    /// Transmit-window lead, exclusive: one past the highest sequence number sent so far.
    pub lead: u64,
}

impl PgmHeader {
    /// Original data.
    pub const ODATA: u8 = 1;
    /// Repair data (a retransmission answering a NAK).
    pub const RDATA: u8 = 2;
    /// Negative acknowledgement, receiver to source (one loss indication, LI).
    pub const NAK: u8 = 3;
    /// NAK confirmation, multicast by the source: suppresses other receivers' NAKs.
    pub const NCF: u8 = 4;
    /// Window advertisement without data, sent only after the last ODATA of a finite transfer
    /// so that a lost tail is noticed (PGM's SPM role, which §5.1 otherwise drops).
    pub const SPM: u8 = 5;
}

/// NLM packets (Nakauchi, Morikawa, Aoyama, *Network-supported Rate Control Mechanism for
/// Multicast Streaming Media*, §3): data with its layer (all layers of a session on one group,
/// §3.1; the layer itself is `Packet::layer`, 0-based, i.e. Layer(S, L) has `layer = L - 1`),
/// the signalling requests DROP_REQ / ADD_REQ (§3.4, unicast to the upstream LMR) and the
/// session message SESS (§3.5, multicast by the sender and rewritten by each LMR, Fig. 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NlmHeader {
    /// `NlmHeader::DATA`, `DROP_REQ`, `ADD_REQ` or `SESS`.
    pub kind: u8,
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

impl NlmHeader {
    pub const DATA: u8 = 1;
    pub const DROP_REQ: u8 = 2;
    pub const ADD_REQ: u8 = 3;
    pub const SESS: u8 = 4;
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
    /// A group packet sent by a node other than the group's source travels up to the source
    /// first (the root of the shared tree, like PIM-SM's rendezvous point), then down the
    /// tree. Set and cleared by the engine.
    pub to_root: bool,
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
            to_root: false,
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
