//! An offline fuzz harness for the wire codec that runs on stable Rust (no cargo-fuzz, no
//! libFuzzer): seeded mutations of valid encodings (bit flips, byte overwrites, truncations,
//! extensions, splices of two encodings) and random byte strings go through `decode`; every
//! accepted input must re-encode to exactly its bytes. Executions and outcomes are counted and
//! printed.
//!
//! - quick form, in the normal suite: `cargo test -p castlab-core --test codec_fuzz` (10^5 inputs)
//! - long form: `cargo test --release -p castlab-core --test codec_fuzz -- --ignored --nocapture`
//!   (10^6 inputs by default; `CASTLAB_FUZZ_N` and `CASTLAB_FUZZ_SEED` override)

use std::collections::BTreeMap;
use std::time::Instant as WallClock;

use castlab_core::codec::{decode, encode, encoded_len, CodecError};
use castlab_core::ids::{Addr, Dest, GroupId, NodeId};
use castlab_core::packet::{
    BcfHeader, BcfKind, ControlMsg, Header, NlmHeader, NlmKind, Packet, PgmHeader, PgmKind, RlmHeader, RlmKind,
    TcpHeader,
};
use castlab_core::rng::Rng;
use castlab_core::time::Instant;

/// Valid encodings of every header kind and every wire enum value, both destination kinds.
fn corpus() -> Vec<Vec<u8>> {
    let mut headers = vec![
        Header::Data,
        Header::Control(ControlMsg { kind: 7, args: [1, u64::MAX, 0] }),
        Header::Tcp(TcpHeader { ack: 9, flags: TcpHeader::ALL_FLAGS, payload: 960, wnd: 1 << 20, ts_val: 3, ts_ecr: 4 }),
    ];
    headers.extend(RlmKind::ALL.iter().map(|&kind| Header::Rlm(RlmHeader { kind, level: 3, current: 2, receivers: 10 })));
    headers.extend(NlmKind::ALL.iter().map(|&kind| {
        Header::Nlm(NlmHeader { kind, level: 2, group: 5, up: Addr::new(NodeId(3), 9), seq: 77 })
    }));
    headers.extend(PgmKind::ALL.iter().map(|&kind| Header::Pgm(PgmHeader { kind, trail: 10, lead: 20 })));
    headers.extend(BcfKind::ALL.iter().map(|&kind| {
        Header::Bcf(BcfHeader { kind, flags: BcfHeader::NULL | BcfHeader::REFRESH, level: 4, label: 99, msg: 12 })
    }));
    let mut out = Vec::new();
    for h in headers {
        for dst in [Dest::Unicast(Addr::new(NodeId(2), 80)), Dest::Group(GroupId(12))] {
            let p = Packet {
                uid: 0xfeed,
                src: Addr::new(NodeId(1), 4000),
                dst,
                size_bytes: 1000,
                flow: 3,
                seq: 123,
                layer: 2,
                marked: true,
                sent_at: Instant::from_nanos(5_000_000),
                header: h,
            };
            let mut b = vec![0u8; encoded_len(&p)];
            encode(&p, &mut b).unwrap();
            out.push(b);
        }
    }
    out
}

#[derive(Default, Debug)]
struct Tally {
    execs: u64,
    by_mutator: BTreeMap<&'static str, u64>,
    by_outcome: BTreeMap<&'static str, u64>,
}

fn outcome(r: &Result<Packet, CodecError>) -> &'static str {
    match r {
        Ok(_) => "ok",
        Err(CodecError::Truncated { .. }) => "truncated",
        Err(CodecError::Version(_)) => "version",
        Err(CodecError::UnknownKind { .. }) => "unknown kind",
        Err(CodecError::Reserved(_)) => "reserved",
        Err(CodecError::Trailing(_)) => "trailing",
        Err(CodecError::BufferTooSmall { .. }) => "buffer too small",
    }
}

/// One mutated input into `buf` (cleared first); returns the mutator's name.
fn mutate(r: &mut Rng, corpus: &[Vec<u8>], buf: &mut Vec<u8>) -> &'static str {
    buf.clear();
    let base = &corpus[r.below(corpus.len() as u64) as usize];
    let pick = r.below(6);
    if pick == 5 {
        let len = r.below(100) as usize;
        buf.extend((0..len).map(|_| r.next_u64() as u8));
        if len > 0 && r.bernoulli(0.5) {
            buf[0] = 1; // past the version check half the time
        }
        return "random bytes";
    }
    buf.extend_from_slice(base);
    match pick {
        0 => {
            for _ in 0..1 + r.below(4) {
                let i = r.below(buf.len() as u64) as usize;
                buf[i] ^= 1 << r.below(8);
            }
            "bit flips"
        }
        1 => {
            const INTERESTING: [u8; 8] = [0, 1, 2, 3, 7, 8, 0x7f, 0xff];
            for _ in 0..1 + r.below(3) {
                let i = r.below(buf.len() as u64) as usize;
                buf[i] = if r.bernoulli(0.5) { INTERESTING[r.below(8) as usize] } else { r.next_u64() as u8 };
            }
            "byte overwrites"
        }
        2 => {
            let cut = r.below(buf.len() as u64) as usize;
            buf.truncate(cut);
            "truncation"
        }
        3 => {
            for _ in 0..1 + r.below(16) {
                buf.push(r.next_u64() as u8);
            }
            "extension"
        }
        _ => {
            let other = &corpus[r.below(corpus.len() as u64) as usize];
            let at = r.below(buf.len() as u64 + 1) as usize;
            let from = r.below(other.len() as u64) as usize;
            buf.truncate(at);
            buf.extend_from_slice(&other[from..]);
            "splice"
        }
    }
}

fn run(n: u64, seed: u64) -> Tally {
    let corpus = corpus();
    let mut r = Rng::seed_from_u64(seed);
    let mut t = Tally::default();
    let mut buf = Vec::with_capacity(256);
    let mut re = vec![0u8; 256];
    for _ in 0..n {
        let m = mutate(&mut r, &corpus, &mut buf);
        let res = decode(&buf);
        if let Ok(p) = &res {
            let k = encode(p, &mut re).expect("256 bytes hold any packet");
            assert_eq!(&re[..k], &buf[..], "accepted input does not re-encode to itself ({m})");
        }
        t.execs += 1;
        *t.by_mutator.entry(m).or_default() += 1;
        *t.by_outcome.entry(outcome(&res)).or_default() += 1;
    }
    t
}

fn report(t: &Tally, secs: f64) {
    println!("codec fuzz: {} executions in {:.2} s ({:.0} exec/s)", t.execs, secs, t.execs as f64 / secs);
    println!("  mutators: {:?}", t.by_mutator);
    println!("  outcomes: {:?}", t.by_outcome);
}

fn check(t: &Tally, n: u64) {
    assert_eq!(t.execs, n);
    // the harness reaches every outcome the decoder has for a whole buffer (else a mutator is dead)
    for o in ["ok", "truncated", "version", "unknown kind", "reserved", "trailing"] {
        assert!(t.by_outcome.get(o).copied().unwrap_or(0) > 0, "no input reached `{o}`: {:?}", t.by_outcome);
    }
    assert_eq!(t.by_outcome.get("buffer too small"), None);
}

#[test]
fn quick_fuzz_1e5() {
    let n = 100_000;
    let start = WallClock::now();
    let t = run(n, 1);
    report(&t, start.elapsed().as_secs_f64());
    check(&t, n);
}

#[test]
#[ignore = "long form: run in release with --ignored (see docs/testing.md)"]
fn long_fuzz() {
    let n = std::env::var("CASTLAB_FUZZ_N").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000u64);
    let seed = std::env::var("CASTLAB_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(2u64);
    let start = WallClock::now();
    let t = run(n, seed);
    report(&t, start.elapsed().as_secs_f64());
    check(&t, n);
}
