//! Captures that Wireshark reads: a pcap file (the classic format, nanosecond timestamps) of
//! UDP datagrams, each wrapped in synthetic IPv4 and UDP headers around the exact bytes sent or
//! received, link type LINKTYPE_IPV4 (228). The driver writes what its sockets send and read
//! (`Driver::set_pcap`); the simulator writes the same records for a link, so one dissector
//! reads both: tshark's own PGM dissector for the PGM wire (`-d udp.port==PORT,pgm`), and
//! `contrib/wireshark/castlab.lua` for castlab's envelope.
//!
//! Writing allocates nothing per record: the headers are built in a fixed array and the file
//! is buffered.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::Path;

/// pcap's magic for nanosecond timestamps.
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_IPV4: each record is an IPv4 packet.
pub const LINKTYPE_IPV4: u32 = 228;
/// The largest record: an IPv4 header, a UDP header and the largest UDP payload.
pub const SNAPLEN: u32 = 65_535;

/// The Internet checksum of `d` (RFC 1071), as the IPv4 header carries it.
pub fn inet_checksum(d: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in d.chunks(2) {
        s += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// The 28 bytes of IPv4 (no options, TTL `ttl`, DF clear, identification `id`) and UDP
/// headers (checksum 0: none, allowed over IPv4) in front of a `payload_len`-byte payload.
pub fn ip_udp_header(src: SocketAddrV4, dst: SocketAddrV4, payload_len: usize, ttl: u8, id: u16) -> [u8; 28] {
    let mut h = [0u8; 28];
    let total = (28 + payload_len).min(u16::MAX as usize) as u16;
    h[0] = 0x45;
    h[2..4].copy_from_slice(&total.to_be_bytes());
    h[4..6].copy_from_slice(&id.to_be_bytes());
    h[8] = ttl;
    h[9] = 17; // UDP
    h[12..16].copy_from_slice(&src.ip().octets());
    h[16..20].copy_from_slice(&dst.ip().octets());
    let c = inet_checksum(&h[..20]);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h[20..22].copy_from_slice(&src.port().to_be_bytes());
    h[22..24].copy_from_slice(&dst.port().to_be_bytes());
    h[24..26].copy_from_slice(&((8 + payload_len).min(u16::MAX as usize) as u16).to_be_bytes());
    h
}

/// A pcap file being written.
pub struct PcapWriter<W: Write = BufWriter<File>> {
    out: W,
    next_id: u16,
    /// Records written.
    pub records: u64,
}

impl PcapWriter<BufWriter<File>> {
    /// Create (or truncate) `path` and write the file header.
    pub fn create(path: &Path) -> io::Result<Self> {
        PcapWriter::new(BufWriter::with_capacity(1 << 16, File::create(path)?))
    }
}

impl<W: Write> PcapWriter<W> {
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_IPV4.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out, next_id: 0, records: 0 })
    }

    /// One datagram `payload` from `src` to `dst` at `time_ns` (since the Unix epoch, or any
    /// origin the reader is told of).
    pub fn record(&mut self, time_ns: u64, src: SocketAddrV4, dst: SocketAddrV4, payload: &[u8]) -> io::Result<()> {
        let len = payload.len().min(SNAPLEN as usize - 28);
        let ttl = if dst.ip().is_multicast() { 1 } else { 64 };
        self.next_id = self.next_id.wrapping_add(1);
        let ip = ip_udp_header(src, dst, len, ttl, self.next_id);
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((time_ns / 1_000_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((time_ns % 1_000_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&((28 + len) as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&((28 + len) as u32).to_le_bytes());
        self.out.write_all(&rec)?;
        self.out.write_all(&ip)?;
        self.out.write_all(&payload[..len])?;
        self.records += 1;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The unspecified address and port 0: a datagram end the driver cannot name.
pub const UNKNOWN: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_checksum_verifies_and_fields_are_where_ipv4_puts_them() {
        let h = ip_udp_header(
            SocketAddrV4::new(Ipv4Addr::new(10, 77, 0, 1), 47000),
            SocketAddrV4::new(Ipv4Addr::new(239, 255, 0, 1), 47000),
            560,
            1,
            9,
        );
        // a header with its checksum sums to all ones: the checksum of it is zero
        assert_eq!(inet_checksum(&h[..20]), 0);
        assert_eq!(u16::from_be_bytes([h[2], h[3]]), 588);
        assert_eq!(u16::from_be_bytes([h[24], h[25]]), 568);
        assert_eq!(&h[16..20], &[239, 255, 0, 1]);
    }

    #[test]
    fn file_layout() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let a = SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 1), 1);
        w.record(1_500_000_123, a, a, &[1, 2, 3]).unwrap();
        let b = w.into_inner();
        assert_eq!(b.len(), 24 + 16 + 28 + 3);
        assert_eq!(&b[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), 228);
        assert_eq!(u32::from_le_bytes(b[24..28].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(b[28..32].try_into().unwrap()), 500_000_123);
        assert_eq!(&b[b.len() - 3..], &[1, 2, 3]);
    }
}
