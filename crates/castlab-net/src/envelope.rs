//! The wire envelope around castlab's codec: what a real datagram carries.
//!
//! ```text
//! 0   [u8; 4]  magic b"CLAB"
//! 4   u8       envelope version (= 2)
//! 5   u8       flags: bit 0 = a MAC follows; bit 1 = application bytes follow the codec;
//!              other bits must be zero
//! 6   u16      codec length n: the bytes of `castlab_core::codec` that follow
//! 8   u32      session id
//! 12  u64      session epoch: the sending driver's incarnation (below)
//! 20  [u8;16]  MAC (only with flag bit 0): HMAC-SHA256 truncated to 16 bytes, keyed with the
//!              pre-shared session key, over bytes 0..20 and everything after the MAC
//! ..  [u8; n]  castlab_core::codec::encode(packet)
//! ..  (flag bit 1) u16 m, then m application bytes: what the agent's packet carries beyond
//!              its header ([`castlab_core::Agent::poll_payload`]), e.g. a fountain symbol
//! ..  zero padding, up to the packet's `size_bytes`
//! ```
//! All integers big-endian, as in the codec.
//!
//! The epoch tells a restarted process from the one before it. The agents' sequence numbers
//! live in the agents, so a source that is killed and started again counts from zero again
//! while its receivers still expect the old numbers: without a sign of the restart they
//! would take the new packets for old ones (or NAK the old sequence space). The envelope is
//! where the sign belongs: it is what every datagram of a process carries whatever the
//! protocol, so one mechanism serves every agent, and the agents learn of it through
//! [`castlab_core::Agent::handle_peer_restart`] without knowing any wire format. The driver
//! stamps its creation time (Unix-epoch nanoseconds) so that a later incarnation has a
//! larger epoch; the receiving driver's use of it is in [`crate::driver`]. Version 1 had no
//! epoch; its datagrams are malformed here. The datagram's UDP payload is
//! `max(size_bytes, header + n [+ 2 + m])` bytes: a source's rate is computed from
//! `size_bytes`, so the real bandwidth matches the simulated one as long as the application
//! bytes fit in the packet's size. A receiver checks the length against the packet's claim
//! ([`Reject::WrongSize`]). A datagram without application bytes has flag bit 1 clear and
//! is byte for byte the same datagram a sender that knows no application bytes seals.
//!
//! Opening a datagram never panics: every problem is a [`Reject`] reason that the driver counts.

use castlab_core::codec::{self, CodecError};
use castlab_core::Packet;
use hmac::{Hmac, Mac};
use sha2::Sha256;

pub const MAGIC: [u8; 4] = *b"CLAB";
pub const VERSION: u8 = 2;
/// Envelope header without the MAC.
pub const HEADER_LEN: usize = 20;
/// Truncated MAC length: 128 bits (RFC 2104 §5 allows truncation to at least half the hash).
pub const MAC_LEN: usize = 16;
pub const FLAG_MAC: u8 = 1;
pub const FLAG_PAYLOAD: u8 = 2;
/// The length field in front of the application bytes.
pub const PAYLOAD_LEN_FIELD: usize = 2;
/// The largest UDP payload over IPv4.
pub const MAX_DATAGRAM: usize = 65_507;

type HmacSha256 = Hmac<Sha256>;

/// Why a received datagram was dropped. The driver keeps one counter per reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Reject {
    /// Too short, wrong magic or version, reserved flags set, inconsistent codec or
    /// application-bytes length, a codec error, or non-zero padding.
    Malformed = 0,
    /// A well-formed envelope of another session.
    ForeignSession = 1,
    /// No MAC while this session has a key.
    Unauthenticated = 2,
    /// A MAC that does not verify (or a MAC while this session has no key).
    BadMac = 3,
    /// The datagram's IP source is not the group's source, or not the IP of the node the
    /// packet claims to come from.
    WrongSource = 4,
    /// The datagram's length disagrees with the packet's `size_bytes`.
    WrongSize = 5,
    /// Well-formed, but not for this socket: a unicast packet for another address, a group
    /// packet on a unicast socket or for a group the session does not know.
    Misdirected = 6,
}

impl Reject {
    pub const ALL: [Reject; 7] = [
        Reject::Malformed,
        Reject::ForeignSession,
        Reject::Unauthenticated,
        Reject::BadMac,
        Reject::WrongSource,
        Reject::WrongSize,
        Reject::Misdirected,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Reject::Malformed => "malformed",
            Reject::ForeignSession => "foreign_session",
            Reject::Unauthenticated => "unauthenticated",
            Reject::BadMac => "bad_mac",
            Reject::WrongSource => "wrong_source",
            Reject::WrongSize => "wrong_size",
            Reject::Misdirected => "misdirected",
        }
    }
}

/// Errors building an envelope (our own packet: a driver bug or an impossible size).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    #[error("packet of {0} bytes does not fit in one UDP datagram ({MAX_DATAGRAM} bytes)")]
    TooLarge(usize),
    #[error(transparent)]
    Codec(#[from] CodecError),
}

/// The session's envelope parameters: id and optional key. Sealing and opening allocate
/// nothing: the keyed HMAC state is built once and cloned per datagram.
#[derive(Clone)]
pub struct Envelope {
    session: u32,
    epoch: u64,
    mac: Option<HmacSha256>,
}

impl core::fmt::Debug for Envelope {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Envelope")
            .field("session", &self.session)
            .field("epoch", &self.epoch)
            .field("keyed", &self.mac.is_some())
            .finish()
    }
}

impl Envelope {
    /// `key`: the pre-shared session key (any length; HMAC hashes long keys), or none. The
    /// epoch it seals is 0 until [`Envelope::with_epoch`] sets one.
    pub fn new(session: u32, key: Option<&[u8]>) -> Self {
        let mac = key.map(|k| HmacSha256::new_from_slice(k).expect("HMAC accepts any key length"));
        Envelope { session, epoch: 0, mac }
    }

    /// The same envelope sealing `epoch` (this process's incarnation) into every datagram.
    pub fn with_epoch(mut self, epoch: u64) -> Self {
        self.epoch = epoch;
        self
    }

    pub fn session(&self) -> u32 {
        self.session
    }

    /// The epoch this envelope seals.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    pub fn keyed(&self) -> bool {
        self.mac.is_some()
    }

    /// Bytes before the codec.
    pub fn overhead(&self) -> usize {
        HEADER_LEN + if self.mac.is_some() { MAC_LEN } else { 0 }
    }

    /// The datagram length for `p`: its `size_bytes`, or the encoding if that is longer.
    pub fn datagram_len(&self, p: &Packet) -> usize {
        self.datagram_len_with(p, 0)
    }

    /// The datagram length for `p` carrying `m` application bytes.
    pub fn datagram_len_with(&self, p: &Packet, m: usize) -> usize {
        let app = if m > 0 { PAYLOAD_LEN_FIELD + m } else { 0 };
        (self.overhead() + codec::encoded_len(p) + app).max(p.size_bytes as usize)
    }

    /// Write `p`'s datagram into `out`; returns its length.
    pub fn seal(&self, p: &Packet, out: &mut [u8]) -> Result<usize, SealError> {
        self.seal_with(p, &[], out)
    }

    /// Write `p`'s datagram carrying the application bytes `app` (none: exactly [`Envelope::seal`]).
    pub fn seal_with(&self, p: &Packet, app: &[u8], out: &mut [u8]) -> Result<usize, SealError> {
        let n = codec::encoded_len(p);
        let total = self.datagram_len_with(p, app.len());
        if total > MAX_DATAGRAM || app.len() > u16::MAX as usize {
            return Err(SealError::TooLarge(total));
        }
        if out.len() < total {
            return Err(SealError::Codec(CodecError::BufferTooSmall { got: out.len(), need: total }));
        }
        let ov = self.overhead();
        out[0..4].copy_from_slice(&MAGIC);
        out[4] = VERSION;
        out[5] = if self.mac.is_some() { FLAG_MAC } else { 0 } | if app.is_empty() { 0 } else { FLAG_PAYLOAD };
        out[6..8].copy_from_slice(&(n as u16).to_be_bytes());
        out[8..12].copy_from_slice(&self.session.to_be_bytes());
        out[12..20].copy_from_slice(&self.epoch.to_be_bytes());
        codec::encode(p, &mut out[ov..ov + n])?;
        let mut end = ov + n;
        if !app.is_empty() {
            out[end..end + PAYLOAD_LEN_FIELD].copy_from_slice(&(app.len() as u16).to_be_bytes());
            end += PAYLOAD_LEN_FIELD;
            out[end..end + app.len()].copy_from_slice(app);
            end += app.len();
        }
        out[end..total].fill(0);
        if let Some(m) = &self.mac {
            let tag = tag(m, &out[..HEADER_LEN], &out[ov..total]);
            out[HEADER_LEN..HEADER_LEN + MAC_LEN].copy_from_slice(&tag[..MAC_LEN]);
        }
        Ok(total)
    }

    /// Check and decode one datagram: form, session, codec, padding and size (cheap checks
    /// first), then authentication. Source and destination are checked by the driver, which
    /// knows the addresses. Decoding before authenticating is safe: the codec never panics.
    pub fn open(&self, d: &[u8]) -> Result<Packet, Reject> {
        self.open_with_epoch(d).map(|(p, _)| p)
    }

    /// [`Envelope::open`], also giving the sender's epoch (authenticated with the rest when
    /// the session has a key).
    pub fn open_with_epoch(&self, d: &[u8]) -> Result<(Packet, u64), Reject> {
        self.open_parts(d).map(|o| (o.packet, o.epoch))
    }

    /// [`Envelope::open_with_epoch`], also giving where the application bytes are in `d`
    /// (an empty range when there are none).
    pub fn open_parts(&self, d: &[u8]) -> Result<OpenedDatagram, Reject> {
        if d.len() < HEADER_LEN || d[0..4] != MAGIC || d[4] != VERSION || d[5] & !(FLAG_MAC | FLAG_PAYLOAD) != 0 {
            return Err(Reject::Malformed);
        }
        let n = u16::from_be_bytes([d[6], d[7]]) as usize;
        let session = u32::from_be_bytes([d[8], d[9], d[10], d[11]]);
        let has_mac = d[5] & FLAG_MAC != 0;
        let ov = HEADER_LEN + if has_mac { MAC_LEN } else { 0 };
        if d.len() < ov + n {
            return Err(Reject::Malformed);
        }
        if session != self.session {
            return Err(Reject::ForeignSession);
        }
        let p = codec::decode(&d[ov..ov + n]).map_err(|_| Reject::Malformed)?;
        let mut end = ov + n;
        let mut app = end..end;
        if d[5] & FLAG_PAYLOAD != 0 {
            if d.len() < end + PAYLOAD_LEN_FIELD {
                return Err(Reject::Malformed);
            }
            let m = u16::from_be_bytes([d[end], d[end + 1]]) as usize;
            end += PAYLOAD_LEN_FIELD;
            // a flag with nothing behind it is not how a sender writes "no bytes"
            if m == 0 || d.len() < end + m {
                return Err(Reject::Malformed);
            }
            app = end..end + m;
            end += m;
        }
        if d[end..].iter().any(|&b| b != 0) {
            return Err(Reject::Malformed);
        }
        if d.len() != end.max(p.size_bytes as usize) {
            return Err(Reject::WrongSize);
        }
        match (&self.mac, has_mac) {
            (Some(_), false) => return Err(Reject::Unauthenticated),
            (None, true) => return Err(Reject::BadMac),
            (Some(m), true) => {
                let want = tag(m, &d[..HEADER_LEN], &d[ov..]);
                if !ct_eq(&want[..MAC_LEN], &d[HEADER_LEN..HEADER_LEN + MAC_LEN]) {
                    return Err(Reject::BadMac);
                }
            }
            (None, false) => {}
        }
        let epoch = u64::from_be_bytes(d[12..20].try_into().expect("the header is 20 bytes"));
        Ok(OpenedDatagram { packet: p, epoch, app })
    }
}

/// An opened datagram: its packet, the sender's epoch, and where its application bytes are.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenedDatagram {
    pub packet: Packet,
    pub epoch: u64,
    /// The application bytes' range in the datagram; empty when it carries none.
    pub app: core::ops::Range<usize>,
}

fn tag(m: &HmacSha256, header: &[u8], rest: &[u8]) -> [u8; 32] {
    let mut m = m.clone();
    m.update(header);
    m.update(rest);
    m.finalize().into_bytes().into()
}

/// Constant-time comparison (no early exit on the first differing byte).
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use castlab_core::{Addr, ControlMsg, Dest, GroupId, Header, NodeId};

    fn pkt(size: u32) -> Packet {
        let mut p = Packet::data(Dest::Group(GroupId(3)), size);
        p.src = Addr::new(NodeId(2), 1000);
        p.seq = 77;
        p.layer = 2;
        p.flow = 9;
        p
    }

    #[test]
    fn pads_to_size_bytes_and_round_trips() {
        let e = Envelope::new(5, None);
        let mut buf = [0u8; 2048];
        let n = e.seal(&pkt(1000), &mut buf).unwrap();
        assert_eq!(n, 1000);
        assert_eq!(e.open(&buf[..n]), Ok(pkt(1000)));
        // a packet smaller than its encoding: the datagram is the encoding, no padding
        let mut small = pkt(10);
        small.header = Header::Control(ControlMsg { kind: 7, args: [2, 1, 3] });
        let n = e.seal(&small, &mut buf).unwrap();
        assert_eq!(n, HEADER_LEN + codec::encoded_len(&small));
        assert_eq!(e.open(&buf[..n]), Ok(small));
    }

    #[test]
    fn the_epoch_travels_and_is_authenticated() {
        let e = Envelope::new(5, None).with_epoch(0x0102_0304_0506_0708);
        let mut buf = [0u8; 2048];
        let n = e.seal(&pkt(300), &mut buf).unwrap();
        assert_eq!(&buf[12..20], &[1, 2, 3, 4, 5, 6, 7, 8]);
        // any receiver opens it whatever its own epoch, and learns the sender's
        assert_eq!(Envelope::new(5, None).open_with_epoch(&buf[..n]), Ok((pkt(300), 0x0102_0304_0506_0708)));
        let k = Envelope::new(5, Some(b"k")).with_epoch(9);
        let n = k.seal(&pkt(300), &mut buf).unwrap();
        assert_eq!(k.open_with_epoch(&buf[..n]).map(|(_, e)| e), Ok(9));
        buf[19] ^= 1; // a forged epoch fails the MAC
        assert_eq!(k.open_with_epoch(&buf[..n]), Err(Reject::BadMac));
        // a version-1 datagram (no epoch) is not read as one
        let n = e.seal(&pkt(300), &mut buf).unwrap();
        buf[4] = 1;
        assert_eq!(e.open(&buf[..n]), Err(Reject::Malformed));
    }

    #[test]
    fn keyed_round_trip_and_every_bit_flip_is_rejected() {
        let e = Envelope::new(5, Some(b"secret"));
        let mut buf = [0u8; 2048];
        let n = e.seal(&pkt(200), &mut buf).unwrap();
        assert_eq!(n, 200);
        assert_eq!(e.open(&buf[..n]), Ok(pkt(200)));
        for i in 0..n {
            let mut b = buf;
            b[i] ^= 0x10;
            assert!(e.open(&b[..n]).is_err(), "flip at byte {i} accepted");
        }
        // same session, other key
        assert_eq!(Envelope::new(5, Some(b"other")).open(&buf[..n]), Err(Reject::BadMac));
        // no key here, MAC there; key here, no MAC there
        assert_eq!(Envelope::new(5, None).open(&buf[..n]), Err(Reject::BadMac));
        let plain = Envelope::new(5, None);
        let m = plain.seal(&pkt(200), &mut buf).unwrap();
        assert_eq!(e.open(&buf[..m]), Err(Reject::Unauthenticated));
    }

    #[test]
    fn rejects_by_reason() {
        let e = Envelope::new(5, None);
        let mut buf = [0u8; 2048];
        let n = e.seal(&pkt(300), &mut buf).unwrap();
        assert_eq!(e.open(&buf[..5]), Err(Reject::Malformed));
        assert_eq!(e.open(&[]), Err(Reject::Malformed));
        let mut b = buf;
        b[0] = b'X';
        assert_eq!(e.open(&b[..n]), Err(Reject::Malformed));
        let mut b = buf;
        b[5] = 0x80;
        assert_eq!(e.open(&b[..n]), Err(Reject::Malformed));
        assert_eq!(Envelope::new(6, None).open(&buf[..n]), Err(Reject::ForeignSession));
        // one byte short or long of the claimed size
        assert_eq!(e.open(&buf[..n - 1]), Err(Reject::WrongSize));
        assert_eq!(e.open(&buf[..n + 1]), Err(Reject::WrongSize));
        // non-zero padding
        let mut b = buf;
        b[n - 1] = 1;
        assert_eq!(e.open(&b[..n]), Err(Reject::Malformed));
        // codec garbage (bad codec version)
        let mut b = buf;
        b[HEADER_LEN] = 99;
        assert_eq!(e.open(&b[..n]), Err(Reject::Malformed));
        // codec length pointing past the end
        let mut b = buf;
        b[6..8].copy_from_slice(&5000u16.to_be_bytes());
        assert_eq!(e.open(&b[..n]), Err(Reject::Malformed));
    }

    #[test]
    fn application_bytes_travel_inside_the_packet_size_and_are_checked() {
        let e = Envelope::new(5, None);
        let mut buf = [0u8; 2048];
        let app: Vec<u8> = (0..100u8).collect();
        // 20 + 52 (a data packet's codec) + 2 + 100 = 174 bytes fit in 300: the datagram stays 300
        let n = e.seal_with(&pkt(300), &app, &mut buf).unwrap();
        assert_eq!(n, 300);
        assert_eq!(buf[5], FLAG_PAYLOAD);
        let o = e.open_parts(&buf[..n]).unwrap();
        assert_eq!((o.packet, &buf[o.app.clone()]), (pkt(300), &app[..]));
        assert_eq!(o.app, HEADER_LEN + 52 + 2..HEADER_LEN + 52 + 2 + 100);
        // bytes past the size grow the datagram, as the codec does
        let n = e.seal_with(&pkt(100), &app, &mut buf).unwrap();
        assert_eq!(n, HEADER_LEN + 52 + 2 + 100);
        assert_eq!(&buf[e.open_parts(&buf[..n]).unwrap().app], &app[..]);
        // no bytes: the flag stays clear and the datagram is the plain one
        let mut plain = [0u8; 2048];
        let m = e.seal(&pkt(300), &mut plain).unwrap();
        let k = e.seal_with(&pkt(300), &[], &mut buf).unwrap();
        assert_eq!(&buf[..k], &plain[..m]);
        assert!(e.open_parts(&plain[..m]).unwrap().app.is_empty());
        // a plain datagram's padding is still checked: a stray byte there is no payload
        plain[m - 1] = 7;
        assert_eq!(e.open(&plain[..m]), Err(Reject::Malformed));
    }

    #[test]
    fn application_bytes_are_authenticated_and_their_length_checked() {
        let k = Envelope::new(5, Some(b"secret"));
        let mut buf = [0u8; 2048];
        let n = k.seal_with(&pkt(300), &[9; 64], &mut buf).unwrap();
        let app = k.open_parts(&buf[..n]).unwrap().app;
        let mut b = buf;
        b[app.start + 10] ^= 1;
        assert_eq!(k.open(&b[..n]), Err(Reject::BadMac));
        let e = Envelope::new(5, None);
        let n = e.seal_with(&pkt(300), &[9; 64], &mut buf).unwrap();
        let at = HEADER_LEN + 52;
        // a length of zero, a length past the datagram, a byte after the payload
        let mut b = buf;
        b[at..at + 2].copy_from_slice(&0u16.to_be_bytes());
        assert_eq!(e.open(&b[..n]), Err(Reject::Malformed));
        let mut b = buf;
        b[at..at + 2].copy_from_slice(&400u16.to_be_bytes());
        assert_eq!(e.open(&b[..n]), Err(Reject::Malformed));
        let mut b = buf;
        b[at + 2 + 64] = 1;
        assert_eq!(e.open(&b[..n]), Err(Reject::Malformed));
        // the flag cleared under a payload: its bytes are now non-zero padding
        let mut b = buf;
        b[5] = 0;
        assert_eq!(e.open(&b[..n]), Err(Reject::Malformed));
    }

    #[test]
    fn too_large_is_an_error_not_a_panic() {
        let e = Envelope::new(1, None);
        let mut buf = vec![0u8; 70_000];
        assert_eq!(e.seal(&pkt(70_000), &mut buf), Err(SealError::TooLarge(70_000)));
        let mut small = [0u8; 10];
        assert!(matches!(e.seal(&pkt(100), &mut small), Err(SealError::Codec(CodecError::BufferTooSmall { .. }))));
    }
}
