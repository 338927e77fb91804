//! Wire encoding of [`Packet`] for the real-network mode (and for test vectors).
//!
//! Layout (big-endian), 48-byte fixed part then the header body:
//! ```text
//! 0  u8   version (= 1)
//! 1  u8   dst kind (0 unicast, 1 group)
//! 2  u8   header kind ([`HeaderKind`]: 0 data, 1 control, 2 tcp, 3 rlm, 4 nlm, 6 pgm, 7 bcf)
//! 3  u8   flags (bit 0: marked; the other bits reserved, 0)
//! 4  u32  src node     8  u16 src port    10 u8 layer   11 u8 reserved (0)
//! 12 u32  dst node or group                16 u16 dst port (0 for a group)  18 u16 reserved
//! 20 u32  size_bytes   24 u32 flow        28 u64 seq     36 u64 uid       44 u64 sent_at ns
//! 52 ...  header body: data none; control u16 kind, 3 x u64 args (26 bytes);
//!          tcp u64 ack, u8 flags, u32 payload, u32 wnd, u64 ts_val, u64 ts_ecr,
//!              3 x (u32, u32) SACK blocks as offsets above ack, (0, 0) absent (57 bytes);
//!          rlm u8 kind, u8 level, u8 current, u32 receivers (7 bytes);
//!          nlm u8 kind, u8 level, u32 group, u32 up node, u16 up port, u32 seq (16 bytes);
//!          pgm u8 kind, u64 trail, u64 lead (17 bytes);
//!          bcf u8 kind (1 request, 2 reply), u8 flags (bits 0-1), u32 level, u32 label, u64 msg (18 bytes)
//! ```
//! Decoding never panics: a short, unknown or inconsistent buffer is a [`CodecError`]. Every
//! kind byte is a `u8`-backed enum checked here, and TCP flags outside
//! [`TcpHeader::ALL_FLAGS`] are rejected.

use crate::ids::{Addr, Dest, GroupId, NodeId};
use crate::packet::{
    BcfHeader, BcfKind, ControlMsg, Header, HeaderKind, NlmHeader, NlmKind, Packet, PgmHeader, PgmKind, RlmHeader,
    RlmKind, TcpHeader,
};
use crate::time::Instant;

pub const VERSION: u8 = 1;
pub const FIXED_LEN: usize = 52;
const CONTROL_LEN: usize = 26;
const TCP_LEN: usize = 57;
const RLM_LEN: usize = 7;
const NLM_LEN: usize = 16;
const BCF_LEN: usize = 18;
const PGM_LEN: usize = 17;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    #[error("packet too short: {got} bytes, need {need}")]
    Truncated { got: usize, need: usize },
    #[error("unsupported version {0}")]
    Version(u8),
    #[error("unknown {field} value {value}")]
    UnknownKind { field: &'static str, value: u8 },
    #[error("non-zero reserved field `{0}`")]
    Reserved(&'static str),
    #[error("{0} trailing bytes after the header body")]
    Trailing(usize),
    #[error("output buffer too small: {got} bytes, need {need}")]
    BufferTooSmall { got: usize, need: usize },
}

/// Length of a header kind's body.
const fn body_len(k: HeaderKind) -> usize {
    match k {
        HeaderKind::Data => 0,
        HeaderKind::Control => CONTROL_LEN,
        HeaderKind::Tcp => TCP_LEN,
        HeaderKind::Rlm => RLM_LEN,
        HeaderKind::Nlm => NLM_LEN,
        HeaderKind::Bcf => BCF_LEN,
        HeaderKind::Pgm => PGM_LEN,
    }
}

/// Bytes needed to encode `p`.
pub fn encoded_len(p: &Packet) -> usize {
    FIXED_LEN + body_len(p.header.kind())
}

/// `byte` as the wire enum `E`, or an error naming `field`.
fn code<E: TryFrom<u8, Error = u8>>(field: &'static str, byte: u8) -> Result<E, CodecError> {
    E::try_from(byte).map_err(|value| CodecError::UnknownKind { field, value })
}

/// Encode `p` into `out`, returning the number of bytes written.
pub fn encode(p: &Packet, out: &mut [u8]) -> Result<usize, CodecError> {
    let need = encoded_len(p);
    if out.len() < need {
        return Err(CodecError::BufferTooSmall { got: out.len(), need });
    }
    let out = &mut out[..need];
    out.fill(0);
    out[0] = VERSION;
    let (dkind, dnode, dport) = match p.dst {
        Dest::Unicast(a) => (0u8, a.node.0, a.port),
        Dest::Group(g) => (1u8, g.0, 0),
    };
    out[1] = dkind;
    out[2] = p.header.kind() as u8;
    out[3] = p.marked as u8;
    out[4..8].copy_from_slice(&p.src.node.0.to_be_bytes());
    out[8..10].copy_from_slice(&p.src.port.to_be_bytes());
    out[10] = p.layer;
    out[12..16].copy_from_slice(&dnode.to_be_bytes());
    out[16..18].copy_from_slice(&dport.to_be_bytes());
    out[20..24].copy_from_slice(&p.size_bytes.to_be_bytes());
    out[24..28].copy_from_slice(&p.flow.to_be_bytes());
    out[28..36].copy_from_slice(&p.seq.to_be_bytes());
    out[36..44].copy_from_slice(&p.uid.to_be_bytes());
    out[44..52].copy_from_slice(&p.sent_at.as_nanos().to_be_bytes());
    let b = &mut out[FIXED_LEN..];
    match p.header {
        Header::Data => {}
        Header::Control(c) => {
            b[0..2].copy_from_slice(&c.kind.to_be_bytes());
            for (i, a) in c.args.iter().enumerate() {
                b[2 + 8 * i..10 + 8 * i].copy_from_slice(&a.to_be_bytes());
            }
        }
        Header::Tcp(t) => {
            b[0..8].copy_from_slice(&t.ack.to_be_bytes());
            b[8] = t.flags;
            b[9..13].copy_from_slice(&t.payload.to_be_bytes());
            b[13..17].copy_from_slice(&t.wnd.to_be_bytes());
            b[17..25].copy_from_slice(&t.ts_val.to_be_bytes());
            b[25..33].copy_from_slice(&t.ts_ecr.to_be_bytes());
            for (i, (s, e)) in t.sack.iter().enumerate() {
                b[33 + 8 * i..37 + 8 * i].copy_from_slice(&s.to_be_bytes());
                b[37 + 8 * i..41 + 8 * i].copy_from_slice(&e.to_be_bytes());
            }
        }
        Header::Rlm(r) => {
            b[0] = r.kind as u8;
            b[1] = r.level;
            b[2] = r.current;
            b[3..7].copy_from_slice(&r.receivers.to_be_bytes());
        }
        Header::Nlm(h) => {
            b[0] = h.kind as u8;
            b[1] = h.level;
            b[2..6].copy_from_slice(&h.group.to_be_bytes());
            b[6..10].copy_from_slice(&h.up.node.0.to_be_bytes());
            b[10..12].copy_from_slice(&h.up.port.to_be_bytes());
            b[12..16].copy_from_slice(&h.seq.to_be_bytes());
        }
        Header::Bcf(h) => {
            b[0] = h.kind as u8;
            b[1] = h.flags;
            b[2..6].copy_from_slice(&h.level.to_be_bytes());
            b[6..10].copy_from_slice(&h.label.to_be_bytes());
            b[10..18].copy_from_slice(&h.msg.to_be_bytes());
        }
        Header::Pgm(g) => {
            b[0] = g.kind as u8;
            b[1..9].copy_from_slice(&g.trail.to_be_bytes());
            b[9..17].copy_from_slice(&g.lead.to_be_bytes());
        }
    }
    Ok(need)
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

/// Decode one packet that fills `buf` exactly.
pub fn decode(buf: &[u8]) -> Result<Packet, CodecError> {
    if buf.len() < FIXED_LEN {
        return Err(CodecError::Truncated { got: buf.len(), need: FIXED_LEN });
    }
    if buf[0] != VERSION {
        return Err(CodecError::Version(buf[0]));
    }
    if buf[11] != 0 {
        return Err(CodecError::Reserved("byte 11"));
    }
    if u16_at(buf, 18) != 0 {
        return Err(CodecError::Reserved("bytes 18-19"));
    }
    if buf[3] & !1 != 0 {
        return Err(CodecError::Reserved("flags"));
    }
    let dnode = u32_at(buf, 12);
    let dport = u16_at(buf, 16);
    let dst = match buf[1] {
        0 => Dest::Unicast(Addr::new(NodeId(dnode), dport)),
        1 => {
            if dport != 0 {
                return Err(CodecError::Reserved("group dst port"));
            }
            Dest::Group(GroupId(dnode))
        }
        v => return Err(CodecError::UnknownKind { field: "dst kind", value: v }),
    };
    let kind: HeaderKind = code("header kind", buf[2])?;
    let body_len = body_len(kind);
    let need = FIXED_LEN + body_len;
    if buf.len() < need {
        return Err(CodecError::Truncated { got: buf.len(), need });
    }
    let b = &buf[FIXED_LEN..];
    let header = match kind {
        HeaderKind::Data => Header::Data,
        HeaderKind::Control => {
            Header::Control(ControlMsg { kind: u16_at(b, 0), args: [u64_at(b, 2), u64_at(b, 10), u64_at(b, 18)] })
        }
        HeaderKind::Tcp => {
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
            Header::Tcp(TcpHeader {
                ack: u64_at(b, 0),
                flags: b[8],
                payload: u32_at(b, 9),
                wnd: u32_at(b, 13),
                ts_val: u64_at(b, 17),
                ts_ecr: u64_at(b, 25),
                sack,
            })
        }
        HeaderKind::Rlm => Header::Rlm(RlmHeader {
            kind: code::<RlmKind>("rlm kind", b[0])?,
            level: b[1],
            current: b[2],
            receivers: u32_at(b, 3),
        }),
        HeaderKind::Nlm => Header::Nlm(NlmHeader {
            kind: code::<NlmKind>("nlm kind", b[0])?,
            level: b[1],
            group: u32_at(b, 2),
            up: Addr::new(NodeId(u32_at(b, 6)), u16_at(b, 10)),
            seq: u32_at(b, 12),
        }),
        HeaderKind::Bcf => {
            let kind = code::<BcfKind>("bcf kind", b[0])?;
            if b[1] & !(BcfHeader::NULL | BcfHeader::REFRESH) != 0 {
                return Err(CodecError::Reserved("bcf flags"));
            }
            Header::Bcf(BcfHeader { kind, flags: b[1], level: u32_at(b, 2), label: u32_at(b, 6), msg: u64_at(b, 10) })
        }
        HeaderKind::Pgm => {
            Header::Pgm(PgmHeader { kind: code::<PgmKind>("pgm kind", b[0])?, trail: u64_at(b, 1), lead: u64_at(b, 9) })
        }
    };
    let end = FIXED_LEN + body_len;
    if buf.len() > end {
        return Err(CodecError::Trailing(buf.len() - end));
    }
    Ok(Packet {
        uid: u64_at(buf, 36),
        src: Addr::new(NodeId(u32_at(buf, 4)), u16_at(buf, 8)),
        dst,
        size_bytes: u32_at(buf, 20),
        flow: u32_at(buf, 24),
        seq: u64_at(buf, 28),
        layer: buf[10],
        marked: buf[3] & 1 == 1,
        sent_at: Instant::from_nanos(u64_at(buf, 44)),
        header,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn sample(header: Header) -> Packet {
        Packet {
            uid: 0x0102_0304_0506_0708,
            src: Addr::new(NodeId(7), 4000),
            dst: Dest::Unicast(Addr::new(NodeId(9), 80)),
            size_bytes: 1000,
            flow: 42,
            seq: 123_456_789,
            layer: 5,
            marked: true,
            sent_at: Instant::from_nanos(987_654_321),
            header,
        }
    }

    #[test]
    fn round_trip_data_and_control() {
        let mut buf = [0u8; 128];
        for h in [
            Header::Data,
            Header::Control(ControlMsg { kind: 3, args: [1, u64::MAX, 77] }),
            Header::Tcp(TcpHeader {
                ack: 99,
                flags: TcpHeader::ACK | TcpHeader::DATA,
                payload: 960,
                wnd: 65535,
                ts_val: 5,
                ts_ecr: u64::MAX,
                sack: [(1000, 3000), (5000, 6000), (0, 0)],
            }),
            Header::Rlm(RlmHeader { kind: RlmHeader::JOIN, level: 4, current: 3, receivers: 100_000 }),
            Header::Nlm(NlmHeader {
                kind: NlmHeader::SESS,
                level: 5,
                group: 0xDEAD_BEEF,
                up: Addr::new(NodeId(u32::MAX), 65_000),
                seq: 0x0102_0304,
            }),
            Header::Bcf(BcfHeader {
                kind: BcfHeader::REQUEST,
                flags: BcfHeader::NULL,
                level: 3,
                label: 0xdead_beef,
                msg: 7,
            }),
            Header::Bcf(BcfHeader {
                kind: BcfHeader::REPLY,
                flags: BcfHeader::NULL | BcfHeader::REFRESH,
                level: u32::MAX,
                label: 0,
                msg: u64::MAX,
            }),
            Header::Pgm(PgmHeader { kind: PgmHeader::NAK, trail: 17, lead: u64::MAX }),
            Header::Pgm(PgmHeader { kind: PgmHeader::ODATA, trail: 0, lead: 1 }),
        ] {
            for dst in [Dest::Unicast(Addr::new(NodeId(1), 2)), Dest::Group(GroupId(12))] {
                let mut p = sample(h);
                p.dst = dst;
                let n = encode(&p, &mut buf).unwrap();
                assert_eq!(n, encoded_len(&p));
                assert_eq!(decode(&buf[..n]).unwrap(), p);
            }
        }
    }

    #[test]
    fn fixed_layout_is_stable() {
        // A hand-written vector: guards the layout documented above.
        let p = Packet { layer: 0, marked: false, ..sample(Header::Data) };
        let mut buf = [0u8; FIXED_LEN];
        encode(&p, &mut buf).unwrap();
        assert_eq!(&buf[0..4], &[1, 0, 0, 0]);
        assert_eq!(&buf[4..8], &[0, 0, 0, 7]);
        assert_eq!(&buf[8..10], &[0x0f, 0xa0]); // 4000
        assert_eq!(&buf[20..24], &[0, 0, 0x03, 0xe8]); // 1000
        assert_eq!(&buf[36..44], &[1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn malformed_input_is_an_error_never_a_panic() {
        let mut buf = [0u8; 128];
        for h in [
            Header::Control(ControlMsg::default()),
            Header::Tcp(TcpHeader::default()),
            Header::Rlm(RlmHeader::default()),
            Header::Nlm(NlmHeader::default()),
            Header::Bcf(BcfHeader { kind: BcfHeader::REPLY, ..Default::default() }),
            Header::Pgm(PgmHeader { kind: PgmHeader::NCF, trail: 3, lead: 9 }),
        ] {
            let n = encode(&sample(h), &mut buf).unwrap();
            for cut in 0..n {
                assert!(decode(&buf[..cut]).is_err(), "cut at {cut}");
            }
        }
        let n = encode(&sample(Header::Control(ControlMsg::default())), &mut buf).unwrap();
        let mut bad = buf;
        bad[0] = 9;
        assert_eq!(decode(&bad[..n]), Err(CodecError::Version(9)));
        let mut bad = buf;
        bad[2] = 200;
        assert!(matches!(decode(&bad[..n]), Err(CodecError::UnknownKind { .. })));
        assert!(matches!(decode(&buf[..n + 1]), Err(CodecError::Trailing(1))));
        // a bcf body with an unknown message kind or unknown flag bits
        let n = encode(&sample(Header::Bcf(BcfHeader { kind: BcfHeader::REQUEST, ..Default::default() })), &mut buf)
            .unwrap();
        assert_eq!(n, FIXED_LEN + BCF_LEN);
        let mut bad = buf;
        bad[FIXED_LEN] = 3;
        assert_eq!(decode(&bad[..n]), Err(CodecError::UnknownKind { field: "bcf kind", value: 3 }));
        let mut bad = buf;
        bad[FIXED_LEN + 1] = 4;
        assert_eq!(decode(&bad[..n]), Err(CodecError::Reserved("bcf flags")));
        // random garbage never panics
        let mut r = Rng::seed_from_u64(5);
        for _ in 0..20_000 {
            let len = r.below(90) as usize;
            let mut g = vec![0u8; len];
            for b in &mut g {
                *b = r.next_u64() as u8;
            }
            if len > 0 && r.bernoulli(0.5) {
                g[0] = VERSION;
            }
            let _ = decode(&g);
        }
    }

    #[test]
    fn nlm_kind_is_checked() {
        let mut buf = [0u8; 128];
        let h = NlmHeader { kind: NlmHeader::ADD_REQ, level: 3, group: 9, up: Addr::new(NodeId(4), 5), seq: 6 };
        let n = encode(&sample(Header::Nlm(h)), &mut buf).unwrap();
        assert_eq!((n, buf[2], buf[FIXED_LEN]), (FIXED_LEN + NLM_LEN, 4, 3));
        for bad_kind in [0u8, 5, 255] {
            let mut bad = buf;
            bad[FIXED_LEN] = bad_kind;
            assert_eq!(decode(&bad[..n]), Err(CodecError::UnknownKind { field: "nlm kind", value: bad_kind }));
        }
    }

    #[test]
    fn pgm_kind_is_checked() {
        let mut buf = [0u8; 128];
        let n =
            encode(&sample(Header::Pgm(PgmHeader { kind: PgmHeader::RDATA, trail: 1, lead: 2 })), &mut buf).unwrap();
        assert_eq!(n, FIXED_LEN + PGM_LEN);
        assert_eq!(buf[2], 6);
        assert_eq!(buf[FIXED_LEN], 2);
        for bad_kind in [0u8, 6, 255] {
            let mut bad = buf;
            bad[FIXED_LEN] = bad_kind;
            assert_eq!(decode(&bad[..n]), Err(CodecError::UnknownKind { field: "pgm kind", value: bad_kind }));
        }
    }

    /// The RLM kind, the TCP flags and the fixed part's flags were trusted before: every byte
    /// outside the documented values is now an error.
    #[test]
    fn rlm_kind_tcp_flags_and_packet_flags_are_checked() {
        let mut buf = [0u8; 128];
        let rlm = RlmHeader { kind: RlmHeader::SESSION, level: 2, current: 2, receivers: 5 };
        let n = encode(&sample(Header::Rlm(rlm)), &mut buf).unwrap();
        assert_eq!((buf[2], buf[FIXED_LEN]), (3, 2));
        for bad_kind in [0u8, 3, 255] {
            let mut bad = buf;
            bad[FIXED_LEN] = bad_kind;
            assert_eq!(decode(&bad[..n]), Err(CodecError::UnknownKind { field: "rlm kind", value: bad_kind }));
        }
        let tcp = TcpHeader { flags: TcpHeader::ALL_FLAGS, ..Default::default() };
        let n = encode(&sample(Header::Tcp(tcp)), &mut buf).unwrap();
        assert!(decode(&buf[..n]).is_ok());
        for bad_bit in [8u8, 0x80] {
            let mut bad = buf;
            bad[FIXED_LEN + 8] |= bad_bit;
            assert_eq!(decode(&bad[..n]), Err(CodecError::Reserved("tcp flags")));
        }
        // bit 1 of the fixed part's flags carried the engine's old `to_root`: now reserved
        let n = encode(&sample(Header::Data), &mut buf).unwrap();
        let mut bad = buf;
        bad[3] |= 2;
        assert_eq!(decode(&bad[..n]), Err(CodecError::Reserved("flags")));
        // the retired header kind 5 and everything past 7
        for k in [5u8, 8, 255] {
            let mut bad = buf;
            bad[2] = k;
            assert_eq!(decode(&bad[..n]), Err(CodecError::UnknownKind { field: "header kind", value: k }));
        }
    }

    #[test]
    fn wire_enums_round_trip_their_bytes() {
        for &k in HeaderKind::ALL {
            assert_eq!(HeaderKind::try_from(k as u8), Ok(k));
        }
        for &k in PgmKind::ALL {
            assert_eq!(PgmKind::try_from(k as u8), Ok(k));
        }
        assert_eq!(PgmKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>(), ["Odata", "Rdata", "Nak", "Ncf", "Spm"]);
        assert_eq!(NlmKind::try_from(0), Err(0));
        assert_eq!(RlmKind::default(), RlmKind::Join);
    }

    #[test]
    fn small_output_buffer_is_an_error() {
        let mut buf = [0u8; 10];
        assert!(matches!(encode(&sample(Header::Data), &mut buf), Err(CodecError::BufferTooSmall { .. })));
    }
}
