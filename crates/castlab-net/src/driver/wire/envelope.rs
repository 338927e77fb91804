//! The envelope wire, the default: each packet is one datagram in castlab's envelope
//! ([`crate::envelope`]) sent from its agent's socket, to the destination agent's socket or
//! to the group's address and UDP port.

use std::net::{SocketAddr, SocketAddrV4};

use castlab_core::{Dest, Instant, Packet};

use super::super::{Driver, Sock, UID_COUNT_MASK};
use crate::envelope::{OpenedDatagram, Reject};

impl Driver {
    /// Stamp `uid` and `sent_at` as the simulator does (`src` is stamped), then send one
    /// datagram.
    pub(in crate::driver) fn send_envelope(&mut self, i: usize, mut p: Packet, now: Instant) {
        let slot = &self.slots[i];
        let id = slot.id.0;
        self.next_uid += 1;
        // Unique across the session's processes: the node in the top bits, a count below.
        p.uid = (slot.addr.node.0 as u64) << 40 | (self.next_uid & UID_COUNT_MASK);
        p.sent_at = Instant::from_nanos(self.epoch_ns.saturating_add(now.as_nanos()));
        let target = match p.dst {
            Dest::Unicast(a) => match (self.table.node(a.node), self.cfg.udp_port(a.port)) {
                (Some(ip), Some(port)) => SocketAddrV4::new(ip, port),
                _ => {
                    self.stats.no_route += 1;
                    return;
                }
            },
            Dest::Group(g) => match self.table.group(g) {
                Some(e) => SocketAddrV4::new(e.addr, e.udp_port),
                None => {
                    self.stats.no_route += 1;
                    return;
                }
            },
        };
        let m = self.slots[i].agent.poll_payload(&p, &mut self.app).min(self.app.len());
        let len = self.envelope.datagram_len_with(&p, m);
        if !self.bucket.take(now.as_nanos(), len) {
            self.stats.rate_cap_drops += 1;
            self.stats.rate_cap_drop_bytes += len as u64;
            return;
        }
        let n = match self.envelope.seal_with(&p, &self.app[..m], &mut self.buf) {
            Ok(n) => n,
            Err(e) => {
                self.stats.send_errors += 1;
                self.note_error(format!("agent {id}: {e}"));
                return;
            }
        };
        self.send_datagram(i, target, n, now);
    }

    /// Open the envelope of the `n`-byte datagram from `from` in the receive buffer, read on
    /// `sock`, note it in the capture, check it and deliver its packet: to the agent socket's
    /// agent, or to every local member of its group.
    pub(in crate::driver) fn on_envelope_datagram(&mut self, sock: Sock, n: usize, from: SocketAddr) {
        let opened = self.envelope.open_parts(&self.buf[..n]);
        if self.pcap.is_some() {
            let to = match sock {
                Sock::Agent(i) => Some(self.slots[i].bound),
                Sock::Group(_) => None,
            };
            let to = to
                .or_else(|| match &opened {
                    Ok(OpenedDatagram { packet: p, .. }) => {
                        p.group().and_then(|g| self.table.group(g)).map(|e| SocketAddrV4::new(e.addr, e.udp_port))
                    }
                    Err(_) => None,
                })
                .unwrap_or(crate::pcap::UNKNOWN);
            let from = match from {
                SocketAddr::V4(a) => a,
                SocketAddr::V6(_) => crate::pcap::UNKNOWN,
            };
            let now = self.now();
            self.capture(now, from, to, n);
        }
        let (mut p, epoch, app) = match opened {
            Ok(o) => (o.packet, o.epoch, o.app),
            Err(r) => {
                self.stats.rejected[r as usize] += 1;
                return;
            }
        };
        match sock {
            Sock::Agent(i) => {
                if p.dst != Dest::Unicast(self.slots[i].addr) {
                    self.stats.rejected[Reject::Misdirected as usize] += 1;
                    return;
                }
                let SocketAddr::V4(from) = from else {
                    self.stats.rejected[Reject::WrongSource as usize] += 1;
                    return;
                };
                if !self.source_ok(&p, *from.ip()) {
                    self.stats.rejected[Reject::WrongSource as usize] += 1;
                    return;
                }
                if !self.epoch_ok(p.src.node, epoch) || !self.replay_ok(&p, epoch) {
                    return;
                }
                self.to_local_time(&mut p);
                self.stats.delivered += 1;
                let now = self.now();
                if !app.is_empty() {
                    self.slots[i].agent.handle_payload(&p, &self.buf[app]);
                }
                self.slots[i].agent.handle_packet(now, &p);
                self.drive(i, now);
            }
            Sock::Group(j) => {
                let entry = match p.dst {
                    Dest::Group(g) => self.table.group(g).filter(|e| e.udp_port == self.gsocks[j].udp_port),
                    Dest::Unicast(_) => None,
                };
                let Some(entry) = entry else {
                    self.stats.rejected[Reject::Misdirected as usize] += 1;
                    return;
                };
                let SocketAddr::V4(from) = from else {
                    self.stats.rejected[Reject::WrongSource as usize] += 1;
                    return;
                };
                // Source-specific groups: only the group's source may send on it.
                let from_source = match entry.source {
                    Some(s) => p.src.node == s && self.table.node(s) == Some(*from.ip()),
                    None => true,
                };
                if !from_source || !self.source_ok(&p, *from.ip()) {
                    self.stats.rejected[Reject::WrongSource as usize] += 1;
                    return;
                }
                if !self.epoch_ok(p.src.node, epoch) || !self.replay_ok(&p, epoch) {
                    return;
                }
                self.to_local_time(&mut p);
                let Some(g) = p.group() else { return };
                let m = app.len();
                self.rx_app[..m].copy_from_slice(&self.buf[app]);
                let now = self.now();
                self.deliver_to_members(g, now, &p, m);
            }
        }
    }
}
