//! Property tests and an offline fuzz target for the wire codec.
//!
//! * `round_trip_every_header_kind`: any packet of any header kind (every wire-enum value,
//!   arbitrary fields, both destination kinds) decodes to itself.
//! * `single_byte_mutations_decode_consistently_or_fail`: flipping any one byte of a valid
//!   encoding either gives an error or a packet that re-encodes to exactly the mutated bytes;
//!   never a panic.
//! * `fuzz_decode_*`: a libFuzzer-free fuzz loop (cargo-fuzz needs nightly) of mutated valid
//!   encodings (bit flips, truncations, extensions, splices of two encodings, random bytes):
//!   10^6 inputs in the normal suite; `cargo test --release -p castlab-core --test
//!   codec_properties -- --ignored` runs 10^7 and prints the counts (docs/testing.md).

use castlab_core::codec::{decode, encode, encoded_len};
use castlab_core::packet::{BcfKind, NlmKind, PgmKind, RlmKind};
use castlab_core::{
    Addr, BcfHeader, ControlMsg, Dest, GroupId, Header, Instant, NlmHeader, NodeId, Packet, PgmHeader, RlmHeader, Rng,
    TcpHeader,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;

fn addr() -> impl Strategy<Value = Addr> {
    (any::<u32>(), any::<u16>()).prop_map(|(n, p)| Addr::new(NodeId(n), p))
}

fn header() -> impl Strategy<Value = Header> {
    prop_oneof![
        Just(Header::Data),
        (any::<u16>(), any::<[u64; 3]>()).prop_map(|(kind, args)| Header::Control(ControlMsg { kind, args })),
        (any::<u64>(), 0u8..8, any::<u32>(), any::<u32>(), any::<u64>(), any::<u64>(), any::<[(u32, u32); 3]>())
            .prop_map(|(ack, flags, payload, wnd, ts_val, ts_ecr, blocks)| Header::Tcp(TcpHeader {
                ack,
                flags,
                payload,
                wnd,
                ts_val,
                ts_ecr,
                // a block is (start, end) with start < end, or (0, 0) when absent
                sack: blocks.map(|(a, b)| if a < b { (a, b) } else { (0, 0) }),
            })),
        (prop::sample::select(RlmKind::ALL.to_vec()), any::<u8>(), any::<u8>(), any::<u32>())
            .prop_map(|(kind, level, current, receivers)| Header::Rlm(RlmHeader { kind, level, current, receivers })),
        (prop::sample::select(NlmKind::ALL.to_vec()), any::<u8>(), any::<u32>(), addr(), any::<u32>())
            .prop_map(|(kind, level, group, up, seq)| Header::Nlm(NlmHeader { kind, level, group, up, seq })),
        (prop::sample::select(BcfKind::ALL.to_vec()), 0u8..4, any::<u32>(), any::<u32>(), any::<u64>())
            .prop_map(|(kind, flags, level, label, msg)| Header::Bcf(BcfHeader { kind, flags, level, label, msg })),
        (prop::sample::select(PgmKind::ALL.to_vec()), any::<u64>(), any::<u64>())
            .prop_map(|(kind, trail, lead)| Header::Pgm(PgmHeader { kind, trail, lead })),
    ]
}

fn packet() -> impl Strategy<Value = Packet> {
    (
        header(),
        addr(),
        prop_oneof![addr().prop_map(Dest::Unicast), any::<u32>().prop_map(|g| Dest::Group(GroupId(g)))],
        (any::<u32>(), any::<u32>(), any::<u64>(), any::<u8>(), any::<bool>(), any::<u64>(), any::<u64>()),
    )
        .prop_map(|(header, src, dst, (size_bytes, flow, seq, layer, marked, uid, sent))| Packet {
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn round_trip_every_header_kind(p in packet()) {
        let mut buf = [0u8; 128];
        let n = encode(&p, &mut buf).unwrap();
        prop_assert_eq!(n, encoded_len(&p));
        prop_assert_eq!(decode(&buf[..n]).unwrap(), p);
    }

    #[test]
    fn single_byte_mutations_decode_consistently_or_fail(p in packet(), at in any::<prop::sample::Index>(), b in any::<u8>()) {
        let mut buf = [0u8; 128];
        let n = encode(&p, &mut buf).unwrap();
        let i = at.index(n);
        buf[i] = b;
        if let Ok(q) = decode(&buf[..n]) {
            let mut again = [0u8; 128];
            let m = encode(&q, &mut again).unwrap();
            prop_assert_eq!(&again[..m], &buf[..n]);
        }
    }
}

/// Counts of one fuzz run.
#[derive(Debug, Default)]
struct Outcome {
    executions: u64,
    decoded: u64,
    rejected: u64,
}

/// Mutate valid encodings `n` times with the project's own deterministic RNG and feed each
/// result to `decode`; any panic fails the test. Every decoded packet must re-encode to the
/// same bytes.
fn fuzz(n: u64, seed: u64) -> Outcome {
    let mut r = Rng::seed_from_u64(seed);
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strat = packet();
    let corpus: Vec<Vec<u8>> = (0..256)
        .map(|_| {
            let p = strat.new_tree(&mut runner).unwrap().current();
            let mut b = vec![0u8; encoded_len(&p)];
            encode(&p, &mut b).unwrap();
            b
        })
        .collect();
    let mut out = Outcome::default();
    let mut input = Vec::with_capacity(256);
    let mut again = [0u8; 128];
    for _ in 0..n {
        input.clear();
        input.extend_from_slice(&corpus[r.below(corpus.len() as u64) as usize]);
        match r.below(6) {
            0 => {
                // bit flips
                for _ in 0..=r.below(4) {
                    let i = r.below(input.len() as u64) as usize;
                    input[i] ^= 1 << r.below(8);
                }
            }
            1 => {
                let keep = r.below(input.len() as u64 + 1) as usize;
                input.truncate(keep);
            }
            2 => {
                for _ in 0..=r.below(8) {
                    input.push(r.next_u64() as u8);
                }
            }
            3 => {
                // splice: the head of one encoding, the tail of another
                let other = &corpus[r.below(corpus.len() as u64) as usize];
                let cut = r.below(input.len().min(other.len()) as u64) as usize;
                input.truncate(cut);
                input.extend_from_slice(&other[cut..]);
            }
            4 => {
                let len = r.below(96) as usize;
                input.clear();
                input.extend((0..len).map(|_| r.next_u64() as u8));
                if len > 0 && r.bernoulli(0.5) {
                    input[0] = castlab_core::codec::VERSION;
                }
            }
            _ => {
                let i = r.below(input.len() as u64) as usize;
                input[i] = r.next_u64() as u8;
            }
        }
        out.executions += 1;
        match decode(&input) {
            Ok(p) => {
                out.decoded += 1;
                let m = encode(&p, &mut again).unwrap();
                assert_eq!(&again[..m], &input[..], "a decoded packet must re-encode to its bytes");
            }
            Err(_) => out.rejected += 1,
        }
    }
    out
}

#[test]
fn fuzz_decode_quick() {
    let o = fuzz(1_000_000, 1);
    assert_eq!(o.executions, 1_000_000);
    // the mutations must exercise both paths, or the fuzz says nothing
    assert!(o.decoded > 100_000 && o.rejected > 100_000, "{o:?}");
}

#[test]
#[ignore = "long: cargo test --release -p castlab-core --test codec_properties -- --ignored --nocapture"]
fn fuzz_decode_long() {
    let t = std::time::Instant::now();
    let o = fuzz(10_000_000, 7);
    let s = t.elapsed().as_secs_f64();
    println!(
        "codec fuzz: {} executions ({} decoded, {} rejected) in {:.1} s, {:.0} exec/s",
        o.executions,
        o.decoded,
        o.rejected,
        s,
        o.executions as f64 / s
    );
    assert_eq!(o.executions, 10_000_000);
}
