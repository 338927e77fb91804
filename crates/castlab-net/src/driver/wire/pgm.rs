//! The PGM wire (`NetConfig::pgm_wire`): castlab's PGM packets as RFC 3208 datagrams over UDP
//! encapsulation ([`crate::pgm_codec`] has the format), so that third-party PGM peers take
//! part. Only agents whose packets carry a `PgmHeader`, or one of the congestion-control
//! layouts [`pgm_codec::cc_from_castlab`] maps (with OpenPGM's options and ACK), can use it;
//! one agent per node and driver, every group on one UDP port.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use castlab_core::{Addr, Dest, GroupId, Header, Instant, NodeId, Packet, PgmHeader, PgmKind};

use super::super::{invalid, Driver, NetError, Slot, Sock};
use crate::envelope::Reject;
use crate::pgm_codec::{self, NakList, PgmEncodeError, PgmPacket, PgmType};
use crate::session::{NetConfig, SessionTable};
use crate::stats::{NetStats, TokenBucket};

/// Node ids from here up name PGM peers the session table does not list (third-party
/// receivers known only by the address their NAKs come from), in order of first datagram.
pub const PEER_NODE_BASE: u32 = 1 << 30;
/// At most this many unlisted PGM peers are remembered; datagrams from more are refused as
/// from a wrong source (the table is allocated as it grows, never per packet after).
const MAX_PEERS: usize = 4096;

/// The PGM session of a driver with `pgm_wire`.
pub(in crate::driver) struct PgmSession {
    /// The one UDP port: the groups', every agent socket's, and PGM's data-destination port.
    pub(in crate::driver) port: u16,
    /// The session's group and its address (the group NLA of NAKs and NCFs).
    group: GroupId,
    group_addr: Ipv4Addr,
    /// This process's TSI (what its downstream packets carry): GSI "cl" + the session id,
    /// data-source port `pgm_flow` (our choice: stable across runs, unique per session).
    gsi: [u8; 6],
    sport: u16,
    /// The TSI of the source whose downstream packets arrived last: the NAKs' destination TSI.
    remote: Option<([u8; 6], u16)>,
    /// SPM sequence number (RFC 3208 §8.1: its own sequence, one per SPM sent).
    spm_sqn: u32,
    /// Unlisted peers' addresses: peer k is node `PEER_NODE_BASE + k`.
    peers: Vec<Ipv4Addr>,
    /// The last SPM sent (agent index, destination, packet), with its window edges moved on by
    /// every ODATA since: the template of the SPM with OPT_FIN that ends the session.
    last_spm: Option<(usize, SocketAddrV4, PgmPacket)>,
    /// The driver's shutdown step is under way: every SPM carries OPT_FIN (the session's end,
    /// RFC 3208 §9), and whether one was encoded since.
    pub(in crate::driver) ending: bool,
    pub(in crate::driver) fin_encoded: bool,
}

/// Why a packet was not encoded for the PGM wire.
pub(in crate::driver) enum NotSent {
    /// Not a PGM packet, or no PGM form for it (counted as no route).
    NoRoute,
    /// Over the rate cap: the datagram's length.
    RateCap(usize),
    Encode(PgmEncodeError),
}

/// What a decoded datagram is for this socket.
enum PgmIn {
    /// Deliver to the agent socket's agent (NAKs) or to the group's members (the rest).
    Deliver,
    /// Counted, not for an agent (SPMR, NNAK, POLL...).
    Counted,
}

/// A datagram accepted from the PGM wire: the castlab packet for its own sequence number and
/// the further ones of its OPT_NAK_LIST.
pub(in crate::driver) struct Accepted {
    pub(in crate::driver) packet: Packet,
    pub(in crate::driver) more: NakList,
}

impl PgmSession {
    /// The PGM session of a configuration with `pgm_wire`: the groups must share one UDP
    /// port; the lowest group id is the session's group.
    pub(in crate::driver) fn new(cfg: &NetConfig, table: &SessionTable) -> Result<Self, NetError> {
        let mut groups = table.groups();
        let (group, first) =
            groups.next().ok_or_else(|| invalid("groups", "none", "pgm_wire needs the session's group"))?;
        if let Some((g, e)) = table.groups().find(|(_, e)| e.udp_port != first.udp_port) {
            return Err(invalid(
                "group port",
                format!("{} of {g}", e.udp_port),
                "with pgm_wire, every group has one UDP port",
            )
            .into());
        }
        let id = cfg.session_id.to_be_bytes();
        Ok(PgmSession {
            port: first.udp_port,
            group,
            group_addr: first.addr,
            gsi: [b'c', b'l', id[0], id[1], id[2], id[3]],
            sport: cfg.pgm_flow as u16,
            remote: None,
            spm_sqn: 0,
            peers: Vec::new(),
            last_spm: None,
            ending: false,
            fin_encoded: false,
        })
    }

    /// The IPv4 address of `node`: the session table's, or an unlisted PGM peer's.
    fn ip_of(&self, table: &SessionTable, node: NodeId) -> Option<Ipv4Addr> {
        match node.0.checked_sub(PEER_NODE_BASE) {
            Some(k) => self.peers.get(k as usize).copied(),
            None => table.node(node),
        }
    }

    /// The node id of `ip`: the session table's node with that address, or a PGM peer's (a new
    /// one is remembered; None when the peer table is full).
    fn node_of(&mut self, table: &SessionTable, ip: Ipv4Addr) -> Option<NodeId> {
        if let Some(n) = table.node_of(ip) {
            return Some(n);
        }
        let k = match self.peers.iter().position(|a| *a == ip) {
            Some(k) => k,
            None if self.peers.len() < MAX_PEERS => {
                self.peers.push(ip);
                self.peers.len() - 1
            }
            None => return None,
        };
        Some(NodeId(PEER_NODE_BASE + k as u32))
    }

    /// Agent `i`'s packet `p` as a PGM datagram in `buf` (castlab's PGM header mapped onto
    /// RFC 3208's fields; the sequence numbers are the low 32 bits, as on the wire), after the
    /// rate cap: where it goes, its length and type. Remembers SPMs for the session's end.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::driver) fn encode(
        &mut self,
        i: usize,
        p: &Packet,
        own_ip: Ipv4Addr,
        table: &SessionTable,
        bucket: &mut TokenBucket,
        now: Instant,
        buf: &mut [u8],
    ) -> Result<(SocketAddrV4, usize, PgmType), NotSent> {
        let ends = pgm_codec::Ends {
            port: self.port,
            group_addr: self.group_addr,
            gsi: self.gsi,
            sport: self.sport,
            remote: self.remote,
            spm_sqn: self.spm_sqn,
        };
        let dst_ip = match p.dst {
            Dest::Unicast(a) => self.ip_of(table, a.node),
            Dest::Group(_) => None,
        };
        // the PGM wire carries PGM only: castlab's PGM header, or a layout with PGM options
        let mapped = match p.header {
            Header::Pgm(h) => pgm_codec::from_castlab(p, h, &ends, own_ip, dst_ip),
            Header::Control(c) => pgm_codec::cc_from_castlab(p, c, &ends, own_ip, dst_ip, |n| self.ip_of(table, n)),
            _ => None,
        };
        let (mut w, target, data) = mapped.ok_or(NotSent::NoRoute)?;
        if self.ending && w.kind == PgmType::Spm {
            w.fin = true;
        }
        let len = w.wire_len();
        if !bucket.take(now.as_nanos(), len) {
            return Err(NotSent::RateCap(len));
        }
        let seq = p.seq;
        let n = pgm_codec::encode(&w, buf, |t| {
            if data {
                pgm_codec::zmq::frame(t, seq)
            }
        })
        .map_err(NotSent::Encode)?;
        match (w.kind, &mut self.last_spm) {
            (PgmType::Spm, _) => {
                self.fin_encoded |= w.fin;
                self.spm_sqn = self.spm_sqn.wrapping_add(1);
                self.last_spm = Some((i, target, w));
            }
            // an SPM's lead is the highest sequence number sent, its trail the window's
            (PgmType::Odata, Some((_, _, spm))) => {
                spm.lead = w.sqn;
                spm.trail = w.trail;
            }
            _ => {}
        }
        Ok((target, n, w.kind))
    }

    /// The SPM with OPT_FIN that ends the session, encoded in `buf`: the agent sending it,
    /// where, the length and type. None before the first SPM (receivers know no session yet).
    fn encode_end(&mut self, buf: &mut [u8]) -> Option<Result<(usize, SocketAddrV4, usize, PgmType), PgmEncodeError>> {
        let (i, target, mut w) = self.last_spm?;
        w.sqn = self.spm_sqn;
        w.fin = true;
        self.spm_sqn = self.spm_sqn.wrapping_add(1);
        Some(pgm_codec::encode(&w, buf, |_| {}).map(|n| (i, target, n, w.kind)))
    }

    /// Where a datagram read on `sock` was sent, for the capture: the agent socket's address,
    /// or the session's group.
    pub(in crate::driver) fn capture_to(&self, sock: Sock, slots: &[Slot]) -> SocketAddrV4 {
        match sock {
            Sock::Agent(i) => slots[i].bound,
            Sock::Group(_) => SocketAddrV4::new(self.group_addr, self.port),
        }
    }

    /// Check one datagram read on `sock` from `from` against the session and turn it into
    /// castlab packets, counting what is refused in `stats`. `now` is the arrival time.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::driver) fn accept(
        &mut self,
        datagram: &[u8],
        sock: Sock,
        from: SocketAddr,
        slots: &[Slot],
        table: &SessionTable,
        flow: u32,
        stats: &mut NetStats,
        now: Instant,
    ) -> Option<Accepted> {
        let w = match pgm_codec::decode(datagram) {
            Ok(w) => w,
            Err(_) => {
                stats.rejected[Reject::Malformed as usize] += 1;
                return None;
            }
        };
        stats.pgm_received[w.kind as usize & 0x0f] += 1;
        let SocketAddr::V4(from) = from else {
            stats.rejected[Reject::WrongSource as usize] += 1;
            return None;
        };
        let agent = match sock {
            Sock::Agent(i) => Some(slots[i].addr),
            Sock::Group(_) => None,
        };
        match self.check(agent, table, &w) {
            Ok(PgmIn::Deliver) => {}
            Ok(PgmIn::Counted) => return None,
            Err(r) => {
                stats.rejected[r as usize] += 1;
                return None;
            }
        }
        let Some(node) = self.node_of(table, *from.ip()) else {
            stats.rejected[Reject::WrongSource as usize] += 1;
            return None;
        };
        let mut p = Packet::data(Dest::Group(self.group), datagram.len() as u32);
        p.src = Addr::new(node, 0);
        p.flow = flow;
        p.seq = w.sqn as u64;
        let (kind, trail, lead) = match w.kind {
            PgmType::Odata => (PgmKind::Odata, w.trail as u64, w.sqn as u64 + 1),
            PgmType::Rdata => (PgmKind::Rdata, w.trail as u64, w.sqn as u64 + 1),
            // an NCF carries no window: trail 0 gives nothing up, lead = the confirmed one
            PgmType::Ncf => (PgmKind::Ncf, 0, w.sqn as u64 + 1),
            PgmType::Spm => {
                p.seq = w.lead.wrapping_add(1) as u64;
                (PgmKind::Spm, w.trail as u64, w.lead.wrapping_add(1) as u64)
            }
            _ => (PgmKind::Nak, 0, 0),
        };
        p.header = Header::Pgm(PgmHeader { kind, trail, lead });
        // OpenPGM's congestion-control options make it one of castlab's layouts instead
        let acker = match pgm_codec::cc_acker(&w) {
            Some(ip) => match slots.iter().find(|s| *s.bound.ip() == ip) {
                Some(s) => Some(s.addr),
                None => match self.node_of(table, ip) {
                    Some(n) => Some(Addr::new(n, 0)),
                    None => {
                        stats.rejected[Reject::WrongSource as usize] += 1;
                        return None;
                    }
                },
            },
            _ => None,
        };
        if let Some(h) = pgm_codec::cc_to_castlab(&w, acker) {
            p.header = h;
        } else if w.kind == PgmType::Ack {
            // an ACK without its feedback names no receiver; one whose bitmap is empty
            // reports nothing
            stats.rejected[Reject::Malformed as usize] += 1;
            return None;
        }
        if w.kind.downstream() {
            self.remote = Some((w.gsi, w.sport));
        }
        match agent {
            Some(a) => p.dst = Dest::Unicast(a),
            None => {
                // only the group's source may send on it, as for the envelope
                let ok = match table.group(self.group).and_then(|e| e.source) {
                    Some(src) => node == src && table.node(src) == Some(*from.ip()),
                    None => true,
                };
                if !ok {
                    stats.rejected[Reject::WrongSource as usize] += 1;
                    return None;
                }
            }
        }
        if table.node(node).is_none() {
            stats.from_unlisted += 1;
        }
        p.sent_at = now;
        Some(Accepted { packet: p, more: w.naks })
    }

    /// Whether a decoded datagram belongs to this session and this socket (`agent`: the
    /// address of the agent socket it was read on; None: the group socket).
    fn check(&self, agent: Option<Addr>, table: &SessionTable, w: &PgmPacket) -> Result<PgmIn, Reject> {
        match (agent, w.kind) {
            // upstream to our source: its TSI, its address, our group
            (Some(a), PgmType::Nak) => {
                if w.gsi != self.gsi || w.dport != self.sport || w.sport != self.port {
                    return Err(Reject::ForeignSession);
                }
                let own = table.node(a.node);
                if own != Some(w.nla) || w.group != self.group_addr {
                    return Err(Reject::Misdirected);
                }
                Ok(PgmIn::Deliver)
            }
            // an ACK (OpenPGM's congestion-control type) to our source: its TSI
            (Some(_), PgmType::Ack) => {
                if w.gsi != self.gsi || w.dport != self.sport || w.sport != self.port {
                    return Err(Reject::ForeignSession);
                }
                Ok(PgmIn::Deliver)
            }
            (Some(_), PgmType::Nnak | PgmType::Spmr) => Ok(PgmIn::Counted),
            (None, PgmType::Odata | PgmType::Rdata | PgmType::Ncf | PgmType::Spm) => {
                if w.dport != self.port {
                    return Err(Reject::ForeignSession);
                }
                if w.kind == PgmType::Ncf && w.group != self.group_addr {
                    return Err(Reject::Misdirected);
                }
                Ok(PgmIn::Deliver)
            }
            // receivers' multicast SPMRs (§13.6) and the rest: seen, not ours to answer
            (None, PgmType::Spmr | PgmType::Poll | PgmType::Polr | PgmType::Ack | PgmType::Nnak) => Ok(PgmIn::Counted),
            _ => Err(Reject::Misdirected),
        }
    }
}

impl Driver {
    /// Count the outcome of [`PgmSession::encode`] for agent `i` and send what was encoded.
    pub(in crate::driver) fn send_pgm(
        &mut self,
        i: usize,
        encoded: Result<(SocketAddrV4, usize, PgmType), NotSent>,
        now: Instant,
    ) {
        match encoded {
            Ok((target, n, kind)) => {
                self.send_pgm_datagram(i, target, n, kind, now);
            }
            Err(NotSent::NoRoute) => self.stats.no_route += 1,
            Err(NotSent::RateCap(len)) => {
                self.stats.rate_cap_drops += 1;
                self.stats.rate_cap_drop_bytes += len as u64;
            }
            Err(NotSent::Encode(e)) => {
                self.stats.send_errors += 1;
                self.note_error(format!("agent {}: {e}", self.slots[i].id.0));
            }
        }
    }

    /// Send the `n` encoded bytes in the buffer from agent `i`'s socket, counting them (and
    /// capturing them) by PGM type. True when sent.
    fn send_pgm_datagram(&mut self, i: usize, target: SocketAddrV4, n: usize, kind: PgmType, now: Instant) -> bool {
        let sent = self.send_datagram(i, target, n, now);
        if sent {
            self.stats.pgm_sent[kind as usize & 0x0f] += 1;
        }
        sent
    }

    /// End the PGM session: send one SPM carrying RFC 3208's OPT_FIN (the session's end), the
    /// window's edges those of the last data sent. True when sent;
    /// false without the PGM wire or before the first SPM (receivers know no session yet).
    pub fn end_pgm_session(&mut self) -> bool {
        let super::Wire::Pgm(s) = &mut self.wire else { return false };
        match s.encode_end(&mut self.buf) {
            None => false,
            Some(Err(e)) => {
                self.stats.send_errors += 1;
                self.note_error(format!("end of session: {e}"));
                false
            }
            Some(Ok((i, target, n, kind))) => {
                let now = self.now();
                self.send_pgm_datagram(i, target, n, kind, now)
            }
        }
    }

    /// Deliver an accepted PGM datagram read on `sock`: to the agent socket's agent (NAKs) or
    /// to the group's local members, one packet per sequence number (a NAK or NCF with an
    /// OPT_NAK_LIST is several).
    pub(in crate::driver) fn deliver_pgm(&mut self, sock: Sock, a: Accepted) {
        let Accepted { packet: mut p, more } = a;
        let now = p.sent_at;
        self.deliver_one_pgm(sock, now, &p);
        for &q in more.as_slice() {
            p.seq = q as u64;
            if let Header::Pgm(h) = &mut p.header {
                if h.kind == PgmKind::Ncf {
                    h.lead = q as u64 + 1;
                }
            }
            self.deliver_one_pgm(sock, now, &p);
        }
    }

    fn deliver_one_pgm(&mut self, sock: Sock, now: Instant, p: &Packet) {
        match sock {
            Sock::Agent(i) => {
                self.stats.delivered += 1;
                self.slots[i].agent.handle_packet(now, p);
                self.drive(i, now);
            }
            Sock::Group(_) => {
                let Some(g) = p.group() else { return };
                self.deliver_to_members(g, now, p, 0);
            }
        }
    }
}
