//! The host side of BCFS (Fig. 2): what a transport embeds to send requests and replies.

use castlab_core::{Addr, BcfHeader, Dest, Header, Packet};

/// A BCF message as `bcf_rcv` hands it to a transport (Fig. 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BcfMsg {
    /// Request: the source it was addressed to is this host; `from` is the sender of this copy.
    /// Reply: the source that sent it.
    pub from: Addr,
    pub kind: castlab_core::BcfKind,
    pub flags: u8,
    pub label: u32,
    pub level: u32,
    pub msg: u64,
}

impl BcfMsg {
    pub fn is_request(&self) -> bool {
        self.kind == BcfHeader::REQUEST
    }
    pub fn is_reply(&self) -> bool {
        self.kind == BcfHeader::REPLY
    }
    /// A router's marked null request: the original request was lost upstream (§II-B).
    pub fn is_refresh(&self) -> bool {
        self.flags & BcfHeader::REFRESH != 0
    }
}

/// The host side of BCFS (Fig. 2): a transport embeds one and calls it from its `Agent` code.
#[derive(Clone, Debug)]
pub struct BcfHost {
    addr: Addr,
    binds: Vec<(u32, u32)>,
    /// Flow id stamped on every packet (monitors key on it).
    pub flow: u32,
    /// Wire size of requests, bytes.
    pub request_bytes: u32,
    /// Wire size of replies, bytes.
    pub reply_bytes: u32,
    /// Messages refused because no binding matched their label.
    pub unbound: u64,
}

impl BcfHost {
    pub fn new(flow: u32, request_bytes: u32, reply_bytes: u32) -> Self {
        BcfHost { addr: Addr::default(), binds: Vec::new(), flow, request_bytes, reply_bytes, unbound: 0 }
    }

    /// Called from the agent's `handle_start`: the host's own address.
    pub fn set_addr(&mut self, addr: Addr) {
        self.addr = addr;
    }

    pub fn addr(&self) -> Addr {
        self.addr
    }

    /// `bcf_bind(lab, mask)`: receive BCF messages whose label matches `label` on the bits of
    /// `mask` (mask 0 binds every label).
    pub fn bind(&mut self, label: u32, mask: u32) {
        self.binds.push((label & mask, mask));
    }

    fn bound(&self, label: u32) -> bool {
        self.binds.iter().any(|&(l, m)| label & m == l)
    }

    /// `bcf_request(src, lab, lev, msg)`: a request toward `source`.
    pub fn request(&self, source: Addr, label: u32, level: u32, msg: Option<u64>) -> Packet {
        let mut p = Packet::data(Dest::Unicast(source), self.request_bytes);
        p.flow = self.flow;
        p.header = Header::Bcf(BcfHeader {
            kind: BcfHeader::REQUEST,
            flags: if msg.is_none() { BcfHeader::NULL } else { 0 },
            level,
            label,
            msg: msg.unwrap_or(0),
        });
        p
    }

    /// `bcf_reply(lab, lev, msg)`: a reply on `label` tearing down level `level` and below.
    pub fn reply(&self, label: u32, level: u32, msg: u64) -> Packet {
        let mut p = Packet::data(Dest::Unicast(self.addr), self.reply_bytes);
        p.flow = self.flow;
        p.header = Header::Bcf(BcfHeader { kind: BcfHeader::REPLY, flags: 0, level, label, msg });
        p
    }

    /// `bcf_rcv`: the BCF message in `p`, if it is one and its label is bound here.
    pub fn receive(&mut self, p: &Packet) -> Option<BcfMsg> {
        let Header::Bcf(h) = p.header else { return None };
        if !self.bound(h.label) {
            self.unbound += 1;
            return None;
        }
        Some(BcfMsg { from: p.src, kind: h.kind, flags: h.flags, label: h.label, level: h.level, msg: h.msg })
    }
}
