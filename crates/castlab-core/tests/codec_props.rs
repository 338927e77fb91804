//! Property tests for the wire codec: every header kind, every wire enum value, arbitrary field
//! values and both destination kinds round-trip; every single-byte mutation of a valid encoding
//! either decodes to a packet that re-encodes to exactly the mutated bytes, or is an error.

use castlab_core::codec::{decode, encode, encoded_len, CodecError, FIXED_LEN};
use castlab_core::ids::{Addr, Dest, GroupId, NodeId};
use castlab_core::packet::{
    BcfHeader, BcfKind, ControlMsg, Header, NlmHeader, NlmKind, Packet, PgmHeader, PgmKind, RlmHeader, RlmKind,
    TcpHeader,
};
use castlab_core::time::Instant;
use proptest::prelude::*;

fn addr() -> impl Strategy<Value = Addr> {
    (any::<u32>(), any::<u16>()).prop_map(|(n, p)| Addr::new(NodeId(n), p))
}

fn dest() -> impl Strategy<Value = Dest> {
    prop_oneof![addr().prop_map(Dest::Unicast), any::<u32>().prop_map(|g| Dest::Group(GroupId(g)))]
}

/// A value drawn from a wire enum's `ALL` list, so a new variant is covered without editing here.
fn one_of<E: Copy + std::fmt::Debug + 'static>(all: &'static [E]) -> impl Strategy<Value = E> {
    proptest::sample::select(all)
}

fn header() -> impl Strategy<Value = Header> {
    prop_oneof![
        Just(Header::Data),
        (any::<u16>(), any::<[u64; 3]>()).prop_map(|(kind, args)| Header::Control(ControlMsg { kind, args })),
        (any::<u64>(), 0..=TcpHeader::ALL_FLAGS, any::<u32>(), any::<u32>(), any::<u64>(), any::<u64>()).prop_map(
            |(ack, flags, payload, wnd, ts_val, ts_ecr)| Header::Tcp(TcpHeader {
                ack,
                flags,
                payload,
                wnd,
                ts_val,
                ts_ecr
            })
        ),
        (one_of(RlmKind::ALL), any::<u8>(), any::<u8>(), any::<u32>())
            .prop_map(|(kind, level, current, receivers)| Header::Rlm(RlmHeader { kind, level, current, receivers })),
        (one_of(NlmKind::ALL), any::<u8>(), any::<u32>(), addr(), any::<u32>())
            .prop_map(|(kind, level, group, up, seq)| Header::Nlm(NlmHeader { kind, level, group, up, seq })),
        (one_of(PgmKind::ALL), any::<u64>(), any::<u64>())
            .prop_map(|(kind, trail, lead)| Header::Pgm(PgmHeader { kind, trail, lead })),
        (
            one_of(BcfKind::ALL),
            0..=(BcfHeader::NULL | BcfHeader::REFRESH),
            any::<u32>(),
            any::<u32>(),
            any::<u64>()
        )
            .prop_map(|(kind, flags, level, label, msg)| Header::Bcf(BcfHeader { kind, flags, level, label, msg })),
    ]
}

fn packet() -> impl Strategy<Value = Packet> {
    (
        any::<u64>(),
        addr(),
        dest(),
        any::<u32>(),
        any::<u32>(),
        any::<u64>(),
        any::<u8>(),
        any::<bool>(),
        any::<u64>(),
        header(),
    )
        .prop_map(|(uid, src, dst, size_bytes, flow, seq, layer, marked, sent, header)| Packet {
            uid,
            src,
            dst,
            size_bytes,
            flow,
            seq,
            layer,
            marked,
            sent_at: Instant::from_nanos(sent),
            header,
        })
}

fn encoded(p: &Packet) -> Vec<u8> {
    let mut buf = vec![0u8; encoded_len(p)];
    let n = encode(p, &mut buf).expect("a buffer of encoded_len bytes is enough");
    assert_eq!(n, buf.len());
    buf
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn decode_inverts_encode(p in packet()) {
        let bytes = encoded(&p);
        prop_assert!(bytes.len() >= FIXED_LEN);
        prop_assert_eq!(decode(&bytes), Ok(p));
    }

    #[test]
    fn one_byte_mutation_is_exact_or_an_error(p in packet(), pos in any::<prop::sample::Index>(), val in any::<u8>()) {
        let mut bytes = encoded(&p);
        let i = pos.index(bytes.len());
        bytes[i] = val;
        match decode(&bytes) {
            // accepted: the decoder lost nothing and invented nothing
            Ok(q) => prop_assert_eq!(encoded(&q), bytes),
            Err(e) => prop_assert!(!matches!(e, CodecError::BufferTooSmall { .. }), "decode said {e}"),
        }
    }

}

proptest! {
    // 85 positions x 256 values per case: fewer cases keep it to about a second.
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_single_byte_mutation_of_every_position(p in packet()) {
        let bytes = encoded(&p);
        let mut m = bytes.clone();
        for i in 0..bytes.len() {
            for v in 0..=255u8 {
                m[i] = v;
                if let Ok(q) = decode(&m) {
                    prop_assert_eq!(encoded(&q), m.clone(), "position {} value {}", i, v);
                }
            }
            m[i] = bytes[i];
        }
    }

}

proptest! {
    #[test]
    fn truncation_and_extension_are_errors(p in packet(), extra in 1usize..8) {
        let bytes = encoded(&p);
        for cut in 0..bytes.len() {
            prop_assert!(decode(&bytes[..cut]).is_err(), "cut at {}", cut);
        }
        let mut longer = bytes.clone();
        longer.extend(std::iter::repeat_n(0, extra));
        prop_assert_eq!(decode(&longer), Err(CodecError::Trailing(extra)));
    }
}

/// Every wire enum value appears on the wire as its own byte and comes back (the strategies
/// above draw from `ALL`; this pins that `ALL` is complete against the 256 possible bytes).
#[test]
fn wire_enum_all_lists_every_accepted_byte() {
    fn check<E: TryFrom<u8, Error = u8> + Copy + PartialEq + std::fmt::Debug>(all: &[E], to: fn(E) -> u8) {
        let accepted: Vec<u8> = (0..=255u8).filter(|b| E::try_from(*b).is_ok()).collect();
        let listed: Vec<u8> = all.iter().map(|e| to(*e)).collect();
        assert_eq!(accepted, listed);
    }
    check(RlmKind::ALL, |e| e as u8);
    check(NlmKind::ALL, |e| e as u8);
    check(PgmKind::ALL, |e| e as u8);
    check(BcfKind::ALL, |e| e as u8);
    check(castlab_core::packet::HeaderKind::ALL, |e| e as u8);
}
