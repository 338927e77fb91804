//! Offline fuzz of the PGM codec (what a PGM session does with any datagram): packets of every
//! type castlab sends or reads, mutated (bit flips, truncation, random bytes), half of them with
//! the checksum recomputed afterwards so that the structural checks behind it are reached too,
//! go through `pgm_codec::decode`; it never panics, a datagram with a bad checksum is always
//! refused, and what it accepts re-encodes (with the same TSDU) to a packet that decodes to the
//! same fields. 10^5 inputs in the normal suite; `--ignored` runs 2x10^6 and prints counts.

use std::net::Ipv4Addr;

use castlab_core::Rng;
use castlab_net::pgm_codec::{self, PgmError, PgmPacket, PgmType};

fn corpus() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for kind in [PgmType::Spm, PgmType::Odata, PgmType::Rdata, PgmType::Nak, PgmType::Ncf, PgmType::Spmr] {
        for variant in 0..3u32 {
            let mut p = PgmPacket::new(kind);
            p.sport = 1 + variant as u16;
            p.dport = 7500;
            p.gsi = [0x63, 0x6c, 0, 0, 0, 7];
            p.sqn = 1000 + variant;
            p.trail = 900;
            p.lead = 999 + variant;
            if matches!(kind, PgmType::Spm | PgmType::Nak | PgmType::Ncf) {
                p.nla = Ipv4Addr::new(10, 77, 0, 1);
            }
            if matches!(kind, PgmType::Nak | PgmType::Ncf) {
                p.group = Ipv4Addr::new(239, 255, 0, 1);
                for k in 0..variant * 3 {
                    p.naks.push(1001 + k);
                }
            }
            if kind == PgmType::Spm && variant == 2 {
                p.fin = true;
            }
            if matches!(kind, PgmType::Odata | PgmType::Rdata) {
                p.tsdu_len = [12u16, 200, 536][variant as usize];
            }
            let mut buf = vec![0u8; p.wire_len()];
            pgm_codec::encode(&p, &mut buf, |t| {
                if t.len() >= pgm_codec::zmq::MIN_TSDU {
                    pgm_codec::zmq::frame(t, p.sqn as u64)
                }
            })
            .expect("encodes");
            out.push(buf);
        }
    }
    out
}

fn resum(b: &mut [u8]) {
    if b.len() < 8 {
        return;
    }
    b[6..8].fill(0);
    let mut s: u32 = 0;
    for c in b.chunks(2) {
        s += (u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])) as u32;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    let c = !(s as u16);
    b[6..8].copy_from_slice(&if c == 0 { 0xffffu16 } else { c }.to_be_bytes());
}

/// Counts: [accepted, truncated, unknown type, checksum, afi, options, length].
fn fuzz(n: u64, seed: u64) -> [u64; 7] {
    let corpus = corpus();
    let mut r = Rng::seed_from_u64(seed);
    let mut counts = [0u64; 7];
    let mut input = Vec::with_capacity(1100);
    let mut again = vec![0u8; 70_000];
    for _ in 0..n {
        input.clear();
        input.extend_from_slice(&corpus[r.below(corpus.len() as u64) as usize]);
        match r.below(4) {
            0 => {
                for _ in 0..=r.below(3) {
                    let i = r.below(input.len() as u64) as usize;
                    input[i] ^= 1 << r.below(8);
                }
            }
            1 => input.truncate(r.below(input.len() as u64 + 1) as usize),
            2 => {
                let i = r.below(input.len().min(64) as u64) as usize;
                input[i] = r.next_u64() as u8;
            }
            _ => {
                let len = r.below(1100) as usize;
                input.clear();
                input.extend((0..len).map(|_| r.next_u64() as u8));
            }
        }
        let fixed = r.below(2) == 0;
        if fixed {
            resum(&mut input);
        }
        match pgm_codec::decode(&input) {
            Ok(p) => {
                counts[0] += 1;
                let at = p.tsdu_offset();
                let tsdu = if matches!(p.kind, PgmType::Odata | PgmType::Rdata) { &input[at..] } else { &[][..] };
                let m =
                    pgm_codec::encode(&p, &mut again, |t| t.copy_from_slice(tsdu)).expect("an accepted packet encodes");
                if !matches!(p.kind, PgmType::Spmr | PgmType::Poll | PgmType::Polr) {
                    assert_eq!(pgm_codec::decode(&again[..m]), Ok(p), "re-encoding changed the fields of {input:?}");
                }
            }
            Err(e) => {
                let k = match e {
                    PgmError::Truncated => 1,
                    PgmError::UnknownType(_) => 2,
                    PgmError::Checksum => 3,
                    PgmError::Afi => 4,
                    PgmError::Options => 5,
                    PgmError::Length => 6,
                };
                counts[k] += 1;
            }
        }
    }
    counts
}

#[test]
fn pgm_fuzz_quick() {
    let c = fuzz(100_000, 5);
    assert_eq!(c.iter().sum::<u64>(), 100_000);
    // every reason is reached, and some mutated packets still decode
    assert!(c.iter().all(|&k| k > 0), "{c:?}");
}

#[test]
fn a_flipped_bit_without_a_new_checksum_is_always_refused() {
    for d in corpus() {
        for i in 0..d.len() * 8 {
            let mut x = d.clone();
            x[i / 8] ^= 1 << (i % 8);
            assert!(pgm_codec::decode(&x).is_err(), "bit {i} of {d:?}");
        }
    }
}

#[test]
#[ignore = "long: cargo test --release -p castlab-net --test pgm_fuzz -- --ignored --nocapture"]
fn pgm_fuzz_long() {
    let t = std::time::Instant::now();
    let c = fuzz(2_000_000, 13);
    let s = t.elapsed().as_secs_f64();
    println!(
        "pgm fuzz: 2000000 executions in {s:.1} s ({:.0}/s); accepted {}, refused [truncated, type, checksum, afi, options, length] {:?}",
        2e6 / s,
        c[0],
        &c[1..]
    );
}
