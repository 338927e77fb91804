//! Per-link pcap in the simulator (ns-3's `EnablePcap`): a `LinkTap` on a channel that writes
//! each departing packet as the real mode would put it on the wire, castlab's envelope or PGM
//! (RFC 3208), inside synthetic IPv4/UDP headers, so that the dissectors that read a real
//! capture read a simulated one. It lives here because `castlab-sim` may not depend on
//! `castlab-net`.
//!
//! Addresses are synthetic: node n is 10.0.0.0 + n + 1, group g is 239.255.0.1 + g (the real
//! roles' default group base), castlab port p is UDP port `port_base + p`, every group (and,
//! for PGM, every datagram) is on `port_base`, the real roles' defaults. Timestamps are the
//! simulated time since the run's start.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::Path;

use castlab_core::{Dest, GroupId, Header, Instant, NodeId, Packet};
use castlab_net::envelope::MAX_DATAGRAM;
use castlab_net::pcap::PcapWriter;
use castlab_net::{pgm_codec, Envelope};
use castlab_sim::LinkTap;

pub(crate) enum Wire {
    Castlab(Envelope),
    Pgm { gsi: [u8; 6] },
}

pub(crate) struct PcapTap {
    w: PcapWriter,
    wire: Wire,
    port_base: u16,
    spm_sqn: u32,
    buf: Box<[u8]>,
    /// Packets with no form on this wire (not PGM on a PGM capture), and write errors.
    pub(crate) skipped: u64,
}

pub(crate) fn node_ip(n: NodeId) -> Ipv4Addr {
    Ipv4Addr::from(0x0a00_0001u32.wrapping_add(n.0))
}

fn group_ip(g: GroupId) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(Ipv4Addr::new(239, 255, 0, 1)).wrapping_add(g.0))
}

impl PcapTap {
    pub(crate) fn create(path: &Path, wire: Wire, port_base: u16) -> std::io::Result<Self> {
        Ok(PcapTap {
            w: PcapWriter::create(path)?,
            wire,
            port_base,
            spm_sqn: 0,
            buf: vec![0u8; MAX_DATAGRAM].into_boxed_slice(),
            skipped: 0,
        })
    }

    fn port(&self, p: u16) -> u16 {
        self.port_base.wrapping_add(p)
    }
}

impl LinkTap for PcapTap {
    fn on_depart(&mut self, now: Instant, _from: NodeId, _to: NodeId, p: &Packet) {
        let src_ip = node_ip(p.src.node);
        let (n, src, dst) = match &self.wire {
            Wire::Castlab(env) => {
                let dst = match p.dst {
                    Dest::Unicast(a) => SocketAddrV4::new(node_ip(a.node), self.port(a.port)),
                    Dest::Group(g) => SocketAddrV4::new(group_ip(g), self.port_base),
                };
                match env.seal(p, &mut self.buf) {
                    Ok(n) => (n, SocketAddrV4::new(src_ip, self.port(p.src.port)), dst),
                    Err(_) => {
                        self.skipped += 1;
                        return;
                    }
                }
            }
            Wire::Pgm { gsi } => {
                let Header::Pgm(h) = p.header else {
                    self.skipped += 1;
                    return;
                };
                let group = match p.dst {
                    Dest::Group(g) => g,
                    Dest::Unicast(_) => GroupId(0),
                };
                let sport = p.flow as u16;
                let ends = pgm_codec::Ends {
                    port: self.port_base,
                    group_addr: group_ip(group),
                    gsi: *gsi,
                    sport,
                    remote: Some((*gsi, sport)),
                    spm_sqn: self.spm_sqn,
                };
                let dst_ip = match p.dst {
                    Dest::Unicast(a) => Some(node_ip(a.node)),
                    Dest::Group(_) => None,
                };
                let Some((w, target, data)) = pgm_codec::from_castlab(p, h, &ends, src_ip, dst_ip) else {
                    self.skipped += 1;
                    return;
                };
                let seq = p.seq;
                let Ok(n) = pgm_codec::encode(&w, &mut self.buf, |t| {
                    if data {
                        pgm_codec::zmq::frame(t, seq)
                    }
                }) else {
                    self.skipped += 1;
                    return;
                };
                if w.kind == pgm_codec::PgmType::Spm {
                    self.spm_sqn = self.spm_sqn.wrapping_add(1);
                }
                (n, SocketAddrV4::new(src_ip, self.port_base), target)
            }
        };
        if self.w.record(now.as_nanos(), src, dst, &self.buf[..n]).is_err() {
            self.skipped += 1;
        }
    }
}

impl Drop for PcapTap {
    fn drop(&mut self) {
        let _ = self.w.flush();
    }
}
