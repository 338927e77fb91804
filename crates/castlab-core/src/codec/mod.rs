//! Wire encoding of [`Packet`] for the real-network mode (and for test vectors).
//!
//! Layout (big-endian), 52-byte fixed part then the header body:
//! ```text
//! 0  u8   version (= 1)
//! 1  u8   dst kind (0 unicast, 1 group)
//! 2  u8   header kind ([`HeaderKind`])
//! 3  u8   flags (bit 0: marked; the other bits reserved, 0)
//! 4  u32  src node     8  u16 src port    10 u8 layer   11 u8 reserved (0)
//! 12 u32  dst node or group                16 u16 dst port (0 for a group)  18 u16 reserved
//! 20 u32  size_bytes   24 u32 flow        28 u64 seq     36 u64 uid       44 u64 sent_at ns
//! 52 ...  header body, laid out by its type in [`crate::headers`]
//! ```
//! Decoding never panics: a short, unknown or inconsistent buffer is a [`CodecError`]. Every
//! kind byte is a `u8`-backed enum checked where it is read, and each header rejects its
//! reserved bits.

use crate::headers::{Header, HeaderKind};
use crate::ids::{Addr, Dest, GroupId, NodeId};
use crate::packet::Packet;
use crate::time::Instant;

pub const VERSION: u8 = 1;
pub const FIXED_LEN: usize = 52;

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

/// Bytes needed to encode `p`.
pub fn encoded_len(p: &Packet) -> usize {
    FIXED_LEN + Header::body_len(p.header.kind())
}

/// `byte` as the wire enum `E`, or an error naming `field`.
pub(crate) fn code<E: TryFrom<u8, Error = u8>>(field: &'static str, byte: u8) -> Result<E, CodecError> {
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
    p.header.write_body(&mut out[FIXED_LEN..]);
    Ok(need)
}

pub(crate) fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}
pub(crate) fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}
pub(crate) fn u64_at(b: &[u8], i: usize) -> u64 {
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
    let body_len = Header::body_len(kind);
    let need = FIXED_LEN + body_len;
    if buf.len() < need {
        return Err(CodecError::Truncated { got: buf.len(), need });
    }
    let header = Header::read_body(kind, &buf[FIXED_LEN..need])?;
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
mod tests;
