//! Ethernet II, ARP, IPv4, UDP and IGMP: parsing in place and writing in place.
//!
//! Parsing never panics and never allocates: every length is checked before it is used, and
//! every problem is a [`FrameError`] the router counts. Frames are read from a buffer the
//! router owns; the parsed headers are small `Copy` structs of offsets and fields.
//!
//! What is checked: Ethernet II with an EtherType (no 802.3 length frames, no VLAN tags);
//! ARP for IPv4 over Ethernet (RFC 826); IPv4 (RFC 791): version 4, IHL ≥ 5, total length
//! within the frame (Ethernet padding after it is allowed), the header checksum, the options'
//! lengths (RFC 791 §3.1: each inside the header; the Router Alert option of RFC 2113 noted);
//! UDP (RFC 768):
//! its length within the IP payload and its checksum where it is not zero; IGMP (RFC 2236,
//! RFC 3376 §4): the checksum and every record's length. TCP is forwarded without looking
//! into it (its checksum is the end hosts' business, as for any router).

use std::net::Ipv4Addr;

pub const ETH_HDR: usize = 14;
pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_ARP: u16 = 0x0806;
pub const PROTO_IGMP: u8 = 2;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
pub const UDP_HDR: usize = 8;
pub const ARP_LEN: usize = 28;

pub type Mac = [u8; 6];
pub const BROADCAST_MAC: Mac = [0xff; 6];

/// Why a frame could not be used. The router keeps one counter per reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameError {
    /// Shorter than the header it claims to carry (Ethernet, ARP, IPv4, UDP or IGMP).
    Truncated = 0,
    /// An 802.3 length field or a VLAN tag instead of an EtherType we speak.
    Unsupported = 1,
    /// ARP not for IPv4 over Ethernet, or an unknown operation.
    BadArp = 2,
    /// IPv4 version, IHL or total length inconsistent.
    BadIpHeader = 3,
    BadIpChecksum = 4,
    /// UDP length inconsistent with the IP payload.
    BadUdpHeader = 5,
    BadUdpChecksum = 6,
    /// An IGMP message of a wrong length, with a wrong checksum, an unknown type or a
    /// record that runs past the end.
    BadIgmp = 7,
    /// An IPv4 option whose length is below 2 or runs past the header.
    BadIpOptions = 8,
}

impl FrameError {
    pub const ALL: [FrameError; 9] = [
        FrameError::Truncated,
        FrameError::Unsupported,
        FrameError::BadArp,
        FrameError::BadIpHeader,
        FrameError::BadIpChecksum,
        FrameError::BadUdpHeader,
        FrameError::BadUdpChecksum,
        FrameError::BadIgmp,
        FrameError::BadIpOptions,
    ];
    pub fn name(self) -> &'static str {
        match self {
            FrameError::Truncated => "truncated",
            FrameError::Unsupported => "unsupported",
            FrameError::BadArp => "bad_arp",
            FrameError::BadIpHeader => "bad_ip_header",
            FrameError::BadIpChecksum => "bad_ip_checksum",
            FrameError::BadUdpHeader => "bad_udp_header",
            FrameError::BadUdpChecksum => "bad_udp_checksum",
            FrameError::BadIgmp => "bad_igmp",
            FrameError::BadIpOptions => "bad_ip_options",
        }
    }
}

/// The Ethernet header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eth {
    pub dst: Mac,
    pub src: Mac,
    pub ethertype: u16,
}

/// An ARP message for IPv4 over Ethernet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arp {
    /// 1 request, 2 reply.
    pub op: u16,
    pub sha: Mac,
    pub spa: Ipv4Addr,
    pub tha: Mac,
    pub tpa: Ipv4Addr,
}

/// An IPv4 header, with the offsets the router needs (from the frame's start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4 {
    /// Header length in bytes (IHL · 4).
    pub hdr_len: usize,
    pub total_len: usize,
    pub ttl: u8,
    pub proto: u8,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    /// A fragment (MF set or a non-zero offset): forwarded, never opened.
    pub fragment: bool,
    /// The header carries a Router Alert option (RFC 2113 §2.1: type 148, length 4, value 0).
    pub router_alert: bool,
}

impl Ipv4 {
    /// Offset of the IP payload in the frame.
    pub fn payload_at(&self) -> usize {
        ETH_HDR + self.hdr_len
    }
    /// End of the IP datagram in the frame (Ethernet padding may follow).
    pub fn end(&self) -> usize {
        ETH_HDR + self.total_len
    }
}

/// What a frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    Arp(Eth, Arp),
    Ipv4(Eth, Ipv4),
    /// Another EtherType (IPv6, LLDP...): not ours, dropped and counted apart.
    Other(Eth),
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn ip_at(b: &[u8], at: usize) -> Ipv4Addr {
    Ipv4Addr::new(b[at], b[at + 1], b[at + 2], b[at + 3])
}

fn mac_at(b: &[u8], at: usize) -> Mac {
    let mut m = [0u8; 6];
    m.copy_from_slice(&b[at..at + 6]);
    m
}

/// The Internet checksum's 32-bit accumulation (RFC 1071), to be folded by [`fold`].
pub fn sum16(mut acc: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc = acc.wrapping_add(u16::from_be_bytes([c[0], c[1]]) as u32);
    }
    if let [last] = chunks.remainder() {
        acc = acc.wrapping_add((*last as u32) << 8);
    }
    acc
}

/// Fold a 32-bit accumulation into the 16-bit ones'-complement sum.
pub fn fold(mut acc: u32) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The checksum of `data` (its complemented ones'-complement sum).
pub fn checksum(data: &[u8]) -> u16 {
    !fold(sum16(0, data))
}

/// The pseudo-header sum of UDP and TCP (RFC 768).
fn pseudo_sum(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, len: usize) -> u32 {
    let mut acc = sum16(0, &src.octets());
    acc = sum16(acc, &dst.octets());
    acc + proto as u32 + len as u32
}

/// Parse the Ethernet header and the ARP or IPv4 header behind it.
pub fn parse(f: &[u8]) -> Result<Parsed, FrameError> {
    if f.len() < ETH_HDR {
        return Err(FrameError::Truncated);
    }
    let eth = Eth { dst: mac_at(f, 0), src: mac_at(f, 6), ethertype: be16(f, 12) };
    match eth.ethertype {
        ETHERTYPE_ARP => parse_arp(&f[ETH_HDR..]).map(|a| Parsed::Arp(eth, a)),
        ETHERTYPE_IPV4 => parse_ipv4(f).map(|ip| Parsed::Ipv4(eth, ip)),
        t if t < 0x0600 => Err(FrameError::Unsupported),
        0x8100 | 0x88a8 => Err(FrameError::Unsupported),
        _ => Ok(Parsed::Other(eth)),
    }
}

fn parse_arp(a: &[u8]) -> Result<Arp, FrameError> {
    if a.len() < ARP_LEN {
        return Err(FrameError::Truncated);
    }
    // hardware Ethernet (1), protocol IPv4, lengths 6 and 4
    if be16(a, 0) != 1 || be16(a, 2) != ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4 {
        return Err(FrameError::BadArp);
    }
    let op = be16(a, 6);
    if op != 1 && op != 2 {
        return Err(FrameError::BadArp);
    }
    Ok(Arp { op, sha: mac_at(a, 8), spa: ip_at(a, 14), tha: mac_at(a, 18), tpa: ip_at(a, 24) })
}

fn parse_ipv4(f: &[u8]) -> Result<Ipv4, FrameError> {
    let b = &f[ETH_HDR..];
    if b.len() < 20 {
        return Err(FrameError::Truncated);
    }
    if b[0] >> 4 != 4 {
        return Err(FrameError::BadIpHeader);
    }
    let hdr_len = (b[0] & 0x0f) as usize * 4;
    let total_len = be16(b, 2) as usize;
    if hdr_len < 20 || total_len < hdr_len {
        return Err(FrameError::BadIpHeader);
    }
    if b.len() < total_len {
        return Err(FrameError::Truncated);
    }
    if checksum(&b[..hdr_len]) != 0 {
        return Err(FrameError::BadIpChecksum);
    }
    let router_alert = ip_options(&b[20..hdr_len])?;
    let frag = be16(b, 6);
    Ok(Ipv4 {
        hdr_len,
        total_len,
        ttl: b[8],
        proto: b[9],
        src: ip_at(b, 12),
        dst: ip_at(b, 16),
        fragment: frag & 0x3fff != 0,
        router_alert,
    })
}

/// Walk IPv4 options (RFC 791 §3.1): End of Option List (0) ends them, No Operation (1) is one
/// byte, every other option has a length byte of at least 2 that keeps it inside the header.
/// Returns whether a Router Alert (RFC 2113) is among them.
fn ip_options(o: &[u8]) -> Result<bool, FrameError> {
    let mut alert = false;
    let mut k = 0;
    while k < o.len() {
        match o[k] {
            0 => break,
            1 => k += 1,
            t => {
                let len = *o.get(k + 1).ok_or(FrameError::BadIpOptions)? as usize;
                if len < 2 || k + len > o.len() {
                    return Err(FrameError::BadIpOptions);
                }
                if t == 0x94 && len == 4 && o[k + 2] == 0 && o[k + 3] == 0 {
                    alert = true;
                }
                k += len;
            }
        }
    }
    Ok(alert)
}

/// A UDP datagram inside an IPv4 frame: ports and the payload's range in the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Udp {
    pub src_port: u16,
    pub dst_port: u16,
    /// Payload start and end offsets in the frame.
    pub payload: (usize, usize),
}

/// Check the UDP header of `ip` in frame `f` (length, and the checksum unless it is zero, or
/// unless `csum_partial`: the sender's offload has not filled it in yet, see
/// [`fill_l4_checksum`]).
pub fn parse_udp(f: &[u8], ip: &Ipv4, csum_partial: bool) -> Result<Udp, FrameError> {
    let at = ip.payload_at();
    let avail = ip.total_len - ip.hdr_len;
    if avail < UDP_HDR {
        return Err(FrameError::Truncated);
    }
    let len = be16(f, at + 4) as usize;
    if len < UDP_HDR || len > avail {
        return Err(FrameError::BadUdpHeader);
    }
    if !csum_partial && be16(f, at + 6) != 0 {
        let acc = sum16(pseudo_sum(ip.src, ip.dst, PROTO_UDP, len), &f[at..at + len]);
        if fold(acc) != 0xffff {
            return Err(FrameError::BadUdpChecksum);
        }
    }
    Ok(Udp { src_port: be16(f, at), dst_port: be16(f, at + 2), payload: (at + UDP_HDR, at + len) })
}

/// Fill in the UDP or TCP checksum of a frame whose sender left it to an offload
/// (`TP_STATUS_CSUMNOTREADY`: the field holds only the pseudo-header sum). Other protocols
/// are left alone. Returns false if the frame is too short for the transport header.
pub fn fill_l4_checksum(f: &mut [u8], ip: &Ipv4) -> bool {
    let at = ip.payload_at();
    let len = ip.total_len - ip.hdr_len;
    let field = match ip.proto {
        PROTO_UDP if len >= UDP_HDR => at + 6,
        PROTO_TCP if len >= 20 => at + 16,
        PROTO_UDP | PROTO_TCP => return false,
        _ => return true,
    };
    if ip.fragment {
        return true;
    }
    f[field] = 0;
    f[field + 1] = 0;
    let acc = sum16(pseudo_sum(ip.src, ip.dst, ip.proto, len), &f[at..at + len]);
    let mut c = !fold(acc);
    if c == 0 && ip.proto == PROTO_UDP {
        c = 0xffff; // RFC 768: a computed zero is sent as all ones
    }
    f[field..field + 2].copy_from_slice(&c.to_be_bytes());
    true
}

/// Decrement the TTL of the IPv4 header in `f` and recompute the header checksum.
pub fn decrement_ttl(f: &mut [u8], ip: &Ipv4) {
    f[ETH_HDR + 8] = ip.ttl - 1;
    write_ip_checksum(f, ip.hdr_len);
}

/// Recompute the IPv4 header checksum of the header at `ETH_HDR`.
pub fn write_ip_checksum(f: &mut [u8], hdr_len: usize) {
    f[ETH_HDR + 10] = 0;
    f[ETH_HDR + 11] = 0;
    let c = checksum(&f[ETH_HDR..ETH_HDR + hdr_len]);
    f[ETH_HDR + 10..ETH_HDR + 12].copy_from_slice(&c.to_be_bytes());
}

/// Write the Ethernet header.
pub fn write_eth(f: &mut [u8], dst: Mac, src: Mac, ethertype: u16) {
    f[0..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f[12..14].copy_from_slice(&ethertype.to_be_bytes());
}

/// The Ethernet address of an IPv4 group (RFC 1112 §6.4): 01:00:5e and the group's low 23 bits.
pub fn group_mac(g: Ipv4Addr) -> Mac {
    let o = g.octets();
    [0x01, 0x00, 0x5e, o[1] & 0x7f, o[2], o[3]]
}

/// Write a whole ARP frame; returns its length (padded to Ethernet's 60-byte minimum).
pub fn write_arp(f: &mut [u8], eth_dst: Mac, op: u16, sha: Mac, spa: Ipv4Addr, tha: Mac, tpa: Ipv4Addr) -> usize {
    write_eth(f, eth_dst, sha, ETHERTYPE_ARP);
    let a = &mut f[ETH_HDR..ETH_HDR + ARP_LEN];
    a[0..2].copy_from_slice(&1u16.to_be_bytes());
    a[2..4].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    a[4] = 6;
    a[5] = 4;
    a[6..8].copy_from_slice(&op.to_be_bytes());
    a[8..14].copy_from_slice(&sha);
    a[14..18].copy_from_slice(&spa.octets());
    a[18..24].copy_from_slice(&tha);
    a[24..28].copy_from_slice(&tpa.octets());
    f[ETH_HDR + ARP_LEN..60].fill(0);
    60
}

/// Write an IPv4 header (no options unless `router_alert`) at `ETH_HDR`; returns its length.
pub fn write_ipv4(
    f: &mut [u8],
    total_len: usize,
    ttl: u8,
    proto: u8,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    router_alert: bool,
) -> usize {
    let hl = if router_alert { 24 } else { 20 };
    let h = &mut f[ETH_HDR..ETH_HDR + hl];
    h[0] = 0x40 | (hl / 4) as u8;
    h[1] = if router_alert { 0xc0 } else { 0 }; // IGMP: DSCP CS6 (internetwork control)
    h[2..4].copy_from_slice(&(total_len as u16).to_be_bytes());
    h[4..6].fill(0);
    h[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF
    h[8] = ttl;
    h[9] = proto;
    h[12..16].copy_from_slice(&src.octets());
    h[16..20].copy_from_slice(&dst.octets());
    if router_alert {
        h[20..24].copy_from_slice(&[0x94, 0x04, 0, 0]); // RFC 2113
    }
    write_ip_checksum(f, hl);
    hl
}

/// Write UDP's header and checksum around a payload already in place after an IPv4 header of
/// `ip_hdr_len` bytes (`payload_len` bytes after the 8 of UDP's header).
pub fn write_udp(
    f: &mut [u8],
    ip_hdr_len: usize,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    sport: u16,
    dport: u16,
    payload_len: usize,
) {
    let at = ETH_HDR + ip_hdr_len;
    let len = UDP_HDR + payload_len;
    f[at..at + 2].copy_from_slice(&sport.to_be_bytes());
    f[at + 2..at + 4].copy_from_slice(&dport.to_be_bytes());
    f[at + 4..at + 6].copy_from_slice(&(len as u16).to_be_bytes());
    f[at + 6..at + 8].fill(0);
    let mut c = !fold(sum16(pseudo_sum(src, dst, PROTO_UDP, len), &f[at..at + len]));
    if c == 0 {
        c = 0xffff;
    }
    f[at + 6..at + 8].copy_from_slice(&c.to_be_bytes());
}

/// Set the IPv4 total length of the header at `ETH_HDR` and recompute its checksum.
pub fn set_ip_total_len(f: &mut [u8], hdr_len: usize, total_len: usize) {
    f[ETH_HDR + 2..ETH_HDR + 4].copy_from_slice(&(total_len as u16).to_be_bytes());
    write_ip_checksum(f, hdr_len);
}

// ------------------------------------------------------------------------------------ IGMP

pub const IGMP_QUERY: u8 = 0x11;
pub const IGMP_V1_REPORT: u8 = 0x12;
pub const IGMP_V2_REPORT: u8 = 0x16;
pub const IGMP_V2_LEAVE: u8 = 0x17;
pub const IGMP_V3_REPORT: u8 = 0x22;

/// RFC 3376 §4.2.12 record types.
pub const MODE_IS_INCLUDE: u8 = 1;
pub const MODE_IS_EXCLUDE: u8 = 2;
pub const CHANGE_TO_INCLUDE: u8 = 3;
pub const CHANGE_TO_EXCLUDE: u8 = 4;
pub const ALLOW_NEW_SOURCES: u8 = 5;
pub const BLOCK_OLD_SOURCES: u8 = 6;

/// A checked IGMP message; a v3 report's records are read with [`records`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Igmp {
    /// A query from another router (we are the only querier on our links: counted, ignored).
    Query,
    /// v1/v2 membership report for a group.
    Report(Ipv4Addr),
    /// v2 leave group.
    Leave(Ipv4Addr),
    /// v3 report: `n` records from `at` to `end` in the frame, every one checked to fit.
    V3 { at: usize, end: usize, n: usize },
}

/// Check an IGMP message (checksum, type, lengths, every v3 record inside the message).
pub fn parse_igmp(f: &[u8], ip: &Ipv4) -> Result<Igmp, FrameError> {
    let at = ip.payload_at();
    let end = ip.end();
    let m = &f[at..end];
    if m.len() < 8 || checksum(m) != 0 {
        return Err(FrameError::BadIgmp);
    }
    let group = ip_at(m, 4);
    match m[0] {
        IGMP_QUERY => Ok(Igmp::Query),
        IGMP_V1_REPORT | IGMP_V2_REPORT if group.is_multicast() => Ok(Igmp::Report(group)),
        IGMP_V2_LEAVE if group.is_multicast() => Ok(Igmp::Leave(group)),
        IGMP_V3_REPORT => {
            let n = be16(m, 6) as usize;
            let mut off = 8;
            for _ in 0..n {
                if off + 8 > m.len() {
                    return Err(FrameError::BadIgmp);
                }
                let aux = m[off + 1] as usize * 4;
                let nsrc = be16(m, off + 2) as usize;
                if !(1..=6).contains(&m[off]) || !ip_at(m, off + 4).is_multicast() {
                    return Err(FrameError::BadIgmp);
                }
                off += 8 + nsrc * 4 + aux;
                if off > m.len() {
                    return Err(FrameError::BadIgmp);
                }
            }
            Ok(Igmp::V3 { at: at + 8, end, n })
        }
        _ => Err(FrameError::BadIgmp),
    }
}

/// One group record of a v3 report: its type, group, and its sources' range in the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub kind: u8,
    pub group: Ipv4Addr,
    pub(crate) sources_at: usize,
    pub n_sources: usize,
}

impl Record {
    pub fn source(&self, f: &[u8], i: usize) -> Ipv4Addr {
        ip_at(f, self.sources_at + 4 * i)
    }
}

/// The records of a v3 report [`parse_igmp`] checked.
pub fn records(f: &[u8], at: usize, n: usize) -> impl Iterator<Item = Record> + '_ {
    let mut off = at;
    (0..n).map(move |_| {
        let aux = f[off + 1] as usize * 4;
        let nsrc = be16(f, off + 2) as usize;
        let r = Record { kind: f[off], group: ip_at(f, off + 4), sources_at: off + 8, n_sources: nsrc };
        off += 8 + nsrc * 4 + aux;
        r
    })
}

/// Write an IGMPv3 query (RFC 3376 §4.1) from `src` to 224.0.0.1 (general, `group` None) or
/// to `group` (group-specific), TTL 1 with Router Alert; returns the frame's length.
/// `max_resp_ds`: the maximum response time in tenths of a second (below 128: exact);
/// `qqic`: the querier's query interval in seconds (below 128: exact).
pub fn write_query(
    f: &mut [u8],
    src_mac: Mac,
    src: Ipv4Addr,
    group: Option<Ipv4Addr>,
    max_resp_ds: u8,
    qqic: u8,
) -> usize {
    let dst = group.unwrap_or(Ipv4Addr::new(224, 0, 0, 1));
    write_eth(f, group_mac(dst), src_mac, ETHERTYPE_IPV4);
    let igmp_len = 12;
    let hl = write_ipv4(f, 24 + igmp_len, 1, PROTO_IGMP, src, dst, true);
    let at = ETH_HDR + hl;
    let q = &mut f[at..at + igmp_len];
    q[0] = IGMP_QUERY;
    q[1] = max_resp_ds;
    q[2..4].fill(0);
    q[4..8].copy_from_slice(&group.unwrap_or(Ipv4Addr::UNSPECIFIED).octets());
    q[8] = 2; // S = 0, QRV = 2 (RFC 3376 §8.1's default robustness)
    q[9] = qqic;
    q[10..12].fill(0); // no sources
    let c = checksum(q);
    q[2..4].copy_from_slice(&c.to_be_bytes());
    (at + igmp_len).max(60)
}

/// Write an IGMPv3 report (RFC 3376 §4.2) from `src` to 224.0.0.22 with one record of `kind`
/// for `group`, TTL 1 with Router Alert; returns the frame's length. With a `source`:
/// ALLOW_NEW_SOURCES or BLOCK_OLD_SOURCES of that source; without: CHANGE_TO_EXCLUDE (an
/// any-source join, `TO_EX{}`) or CHANGE_TO_INCLUDE (its leave, `TO_IN{}`). A router sends it
/// to a neighbour router for its downstream members, as a host would.
pub fn write_report(
    f: &mut [u8],
    src_mac: Mac,
    src: Ipv4Addr,
    kind: u8,
    group: Ipv4Addr,
    source: Option<Ipv4Addr>,
) -> usize {
    let dst = Ipv4Addr::new(224, 0, 0, 22);
    write_eth(f, group_mac(dst), src_mac, ETHERTYPE_IPV4);
    let igmp_len = if source.is_some() { 20 } else { 16 };
    let hl = write_ipv4(f, 24 + igmp_len, 1, PROTO_IGMP, src, dst, true);
    let at = ETH_HDR + hl;
    let q = &mut f[at..at + igmp_len];
    q[0] = IGMP_V3_REPORT;
    q[1] = 0;
    q[2..6].fill(0);
    q[6..8].copy_from_slice(&1u16.to_be_bytes());
    q[8] = kind;
    q[9] = 0;
    q[10..12].copy_from_slice(&(source.is_some() as u16).to_be_bytes());
    q[12..16].copy_from_slice(&group.octets());
    if let Some(s) = source {
        q[16..20].copy_from_slice(&s.octets());
    }
    let c = checksum(q);
    q[2..4].copy_from_slice(&c.to_be_bytes());
    (at + igmp_len).max(60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_report_parses_as_one_source_specific_record() {
        let mut f = vec![0u8; 128];
        let (g, s) = (Ipv4Addr::new(239, 1, 2, 3), Ipv4Addr::new(10, 0, 0, 9));
        let n = write_report(&mut f, [2; 6], Ipv4Addr::new(10, 0, 1, 1), ALLOW_NEW_SOURCES, g, Some(s));
        let Ok(Parsed::Ipv4(_, ip)) = parse(&f[..n]) else { panic!("parses") };
        let Ok(Igmp::V3 { at, n: k, .. }) = parse_igmp(&f[..n], &ip) else { panic!("a v3 report") };
        let recs: Vec<Record> = records(&f[..n], at, k).collect();
        assert_eq!(recs.len(), 1);
        assert_eq!((recs[0].kind, recs[0].group, recs[0].n_sources), (ALLOW_NEW_SOURCES, g, 1));
        assert_eq!(recs[0].source(&f[..n], 0), s);
        // an any-source join: TO_EX with no source
        let n = write_report(&mut f, [2; 6], Ipv4Addr::new(10, 0, 1, 1), CHANGE_TO_EXCLUDE, g, None);
        let Ok(Parsed::Ipv4(_, ip)) = parse(&f[..n]) else { panic!("parses") };
        let Ok(Igmp::V3 { at, n: k, .. }) = parse_igmp(&f[..n], &ip) else { panic!("a v3 report") };
        let recs: Vec<Record> = records(&f[..n], at, k).collect();
        assert_eq!((recs.len(), recs[0].kind, recs[0].group, recs[0].n_sources), (1, CHANGE_TO_EXCLUDE, g, 0));
    }

    fn udp_frame(payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; ETH_HDR + 28 + payload.len()];
        write_eth(&mut f, [2; 6], [4; 6], ETHERTYPE_IPV4);
        let src = Ipv4Addr::new(10, 0, 0, 1);
        let dst = Ipv4Addr::new(10, 0, 1, 2);
        write_ipv4(&mut f, 28 + payload.len(), 64, PROTO_UDP, src, dst, false);
        f[ETH_HDR + 28..].copy_from_slice(payload);
        write_udp(&mut f, 20, src, dst, 5000, 6000, payload.len());
        f
    }

    #[test]
    fn checksum_of_rfc1071_example() {
        // RFC 1071 §3: the sum of 00 01 f2 03 f4 f5 f6 f7 is ddf2, its complement 220d
        assert_eq!(checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]), 0x220d);
    }

    #[test]
    fn udp_frame_round_trips_and_ttl_decrement_keeps_the_checksum_valid() {
        let mut f = udp_frame(b"hello, router");
        let Ok(Parsed::Ipv4(_, ip)) = parse(&f) else { panic!("parses") };
        assert_eq!((ip.ttl, ip.proto, ip.total_len), (64, PROTO_UDP, 28 + 13));
        let u = parse_udp(&f, &ip, false).unwrap();
        assert_eq!((u.src_port, u.dst_port), (5000, 6000));
        assert_eq!(&f[u.payload.0..u.payload.1], b"hello, router");
        decrement_ttl(&mut f, &ip);
        let Ok(Parsed::Ipv4(_, ip2)) = parse(&f) else { panic!("still parses") };
        assert_eq!(ip2.ttl, 63);
        // a flipped payload bit breaks UDP's checksum, a flipped header bit IP's
        let mut g = f.clone();
        g[ETH_HDR + 30] ^= 1;
        assert_eq!(parse_udp(&g, &ip2, false), Err(FrameError::BadUdpChecksum));
        assert_eq!(parse_udp(&g, &ip2, true).map(|_| ()), Ok(()));
        let mut h = f.clone();
        h[ETH_HDR + 12] ^= 1;
        assert_eq!(parse(&h), Err(FrameError::BadIpChecksum));
    }

    #[test]
    fn partial_checksum_is_filled_in() {
        let mut f = udp_frame(b"offloaded");
        let Ok(Parsed::Ipv4(_, ip)) = parse(&f) else { panic!() };
        let good = [f[ETH_HDR + 26], f[ETH_HDR + 27]];
        f[ETH_HDR + 26] = 0x12;
        f[ETH_HDR + 27] = 0x34;
        assert!(fill_l4_checksum(&mut f, &ip));
        assert_eq!([f[ETH_HDR + 26], f[ETH_HDR + 27]], good);
    }

    #[test]
    fn ip_options_are_checked_and_router_alert_noted() {
        // a 28-byte header: 8 bytes of options after the 20 fixed ones
        let with = |opts: [u8; 8]| {
            let mut f = vec![0u8; ETH_HDR + 28 + 8];
            write_eth(&mut f, [2; 6], [4; 6], ETHERTYPE_IPV4);
            let h = &mut f[ETH_HDR..ETH_HDR + 28];
            h[0] = 0x47;
            h[2..4].copy_from_slice(&36u16.to_be_bytes());
            h[8] = 1;
            h[9] = PROTO_IGMP;
            h[12..16].copy_from_slice(&[10, 0, 0, 1]);
            h[16..20].copy_from_slice(&[224, 0, 0, 22]);
            h[20..28].copy_from_slice(&opts);
            write_ip_checksum(&mut f, 28);
            parse(&f).map(|p| match p {
                Parsed::Ipv4(_, ip) => ip.router_alert,
                _ => panic!("IPv4"),
            })
        };
        // NOP, Router Alert (RFC 2113), NOP, End of List, padding
        assert_eq!(with([1, 0x94, 4, 0, 0, 1, 0, 0]), Ok(true));
        // a Router Alert with a reserved value, or after the end of the list, is not one
        assert_eq!(with([0x94, 4, 0, 1, 0, 0, 0, 0]), Ok(false));
        assert_eq!(with([0, 0x94, 4, 0, 0, 0, 0, 0]), Ok(false));
        // a timestamp-like option of 8 bytes fits exactly
        assert_eq!(with([0x44, 8, 5, 0, 0, 0, 0, 0]), Ok(false));
        // lengths below 2, past the header, or missing
        assert_eq!(with([0x94, 1, 0, 0, 0, 0, 0, 0]), Err(FrameError::BadIpOptions));
        assert_eq!(with([1, 1, 1, 0x44, 6, 0, 0, 0]), Err(FrameError::BadIpOptions));
        assert_eq!(with([1, 1, 1, 1, 1, 1, 1, 0x94]), Err(FrameError::BadIpOptions));
        // the router's own queries and reports carry it
        let mut f = [0u8; 64];
        let n = write_report(
            &mut f,
            [2; 6],
            Ipv4Addr::new(10, 0, 0, 1),
            CHANGE_TO_EXCLUDE,
            Ipv4Addr::new(239, 1, 1, 1),
            None,
        );
        let Ok(Parsed::Ipv4(_, ip)) = parse(&f[..n]) else { panic!() };
        assert!(ip.router_alert && ip.ttl == 1);
    }

    #[test]
    fn truncations_are_errors() {
        let f = udp_frame(b"0123456789");
        for n in 0..f.len() {
            let r = parse(&f[..n]);
            assert!(r.is_err(), "{n} bytes parsed");
        }
    }

    #[test]
    fn igmp_query_parses_and_v3_records_are_bounded() {
        let mut f = [0u8; 64];
        let n = write_query(&mut f, [2; 6], Ipv4Addr::new(10, 0, 0, 254), None, 100, 125);
        let Ok(Parsed::Ipv4(e, ip)) = parse(&f[..n]) else { panic!() };
        assert_eq!(e.dst, [1, 0, 0x5e, 0, 0, 1]);
        assert_eq!((ip.ttl, ip.hdr_len), (1, 24));
        assert_eq!(parse_igmp(&f, &ip), Ok(Igmp::Query));
        // a v3 report with one TO_EX{} record for 239.1.2.3, then one claiming 5 sources
        let mut r = vec![0u8; ETH_HDR + 24 + 16];
        write_eth(&mut r, [1, 0, 0x5e, 0, 0, 22], [4; 6], ETHERTYPE_IPV4);
        let hl =
            write_ipv4(&mut r, 24 + 16, 1, PROTO_IGMP, Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(224, 0, 0, 22), true);
        let at = ETH_HDR + hl;
        r[at] = IGMP_V3_REPORT;
        r[at + 7] = 1;
        r[at + 8] = CHANGE_TO_EXCLUDE;
        r[at + 12..at + 16].copy_from_slice(&[239, 1, 2, 3]);
        let c = checksum(&r[at..]);
        r[at + 2..at + 4].copy_from_slice(&c.to_be_bytes());
        let Ok(Parsed::Ipv4(_, ip)) = parse(&r) else { panic!() };
        let Ok(Igmp::V3 { at: a, n, .. }) = parse_igmp(&r, &ip) else { panic!() };
        let recs: Vec<Record> = records(&r, a, n).collect();
        assert_eq!(recs.len(), 1);
        assert_eq!(
            (recs[0].kind, recs[0].group, recs[0].n_sources),
            (CHANGE_TO_EXCLUDE, Ipv4Addr::new(239, 1, 2, 3), 0)
        );
        r[at + 11] = 5; // five sources that are not there
        r[at + 2..at + 4].fill(0);
        let c = checksum(&r[at..]);
        r[at + 2..at + 4].copy_from_slice(&c.to_be_bytes());
        assert_eq!(parse_igmp(&r, &ip), Err(FrameError::BadIgmp));
    }
}
