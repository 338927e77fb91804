//! Offline fuzz of the network envelope (what a receiver does with any datagram): mutated
//! sealed datagrams, with and without a session key, go through `Envelope::open`; it never
//! panics, a datagram that opens re-seals to the same bytes, and every rejection has a reason.
//! 2x10^5 inputs in the normal suite; `--ignored` runs 2x10^6 and prints the counts.

use castlab_core::{Addr, Dest, GroupId, Header, NodeId, Packet, PgmHeader, RlmHeader, Rng};
use castlab_net::{Envelope, Reject};

fn corpus(env: &Envelope) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (i, size) in [60u32, 200, 560, 1000].into_iter().enumerate() {
        for h in [
            Header::Data,
            Header::Rlm(RlmHeader { kind: RlmHeader::JOIN, level: 3, current: 2, receivers: 9 }),
            Header::Pgm(PgmHeader { kind: PgmHeader::NAK, trail: 4, lead: 99 }),
        ] {
            let mut p = Packet::data(
                if i % 2 == 0 { Dest::Group(GroupId(2)) } else { Dest::Unicast(Addr::new(NodeId(1), 1)) },
                size,
            );
            p.header = h;
            p.seq = 17 + i as u64;
            // every other one carries application bytes (a short run of a symbol's bytes)
            let app: Vec<u8> = if i % 2 == 1 { (0..40 + i as u8).collect() } else { Vec::new() };
            let mut buf = vec![0u8; env.datagram_len_with(&p, app.len())];
            let n = env.seal_with(&p, &app, &mut buf).expect("seals");
            buf.truncate(n);
            out.push(buf);
        }
    }
    out
}

fn fuzz(n: u64, seed: u64, key: Option<&[u8]>) -> [u64; 8] {
    let env = Envelope::new(7, key);
    let corpus = corpus(&env);
    let mut r = Rng::seed_from_u64(seed);
    let mut counts = [0u64; 8]; // index 7: opened
    let mut input = Vec::with_capacity(1100);
    let mut again = vec![0u8; 1100];
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
        match env.open_parts(&input) {
            Ok(o) => {
                counts[7] += 1;
                // the epoch is the sender's: re-seal as that sender, with the bytes it carried
                let m = env
                    .clone()
                    .with_epoch(o.epoch)
                    .seal_with(&o.packet, &input[o.app.clone()], &mut again)
                    .expect("an opened packet seals");
                assert_eq!(&again[..m], &input[..], "an opened datagram must re-seal to its bytes");
            }
            Err(reason) => counts[reason as usize] += 1,
        }
    }
    counts
}

#[test]
fn envelope_fuzz_quick() {
    for key in [None, Some(&b"castlab-test-key"[..])] {
        let c = fuzz(100_000, 3, key);
        assert_eq!(c.iter().sum::<u64>(), 100_000);
        assert!(c[7] > 0 && c[Reject::Malformed as usize] > 0, "{c:?}");
        if key.is_some() {
            assert!(c[Reject::BadMac as usize] > 0, "{c:?}");
        }
    }
}

#[test]
#[ignore = "long: cargo test --release -p castlab-net --test envelope_fuzz -- --ignored --nocapture"]
fn envelope_fuzz_long() {
    for key in [None, Some(&b"castlab-test-key"[..])] {
        let t = std::time::Instant::now();
        let c = fuzz(2_000_000, 11, key);
        let s = t.elapsed().as_secs_f64();
        println!(
            "envelope fuzz (key: {}): 2000000 executions in {:.1} s ({:.0}/s); opened {}, rejected by reason {:?}",
            key.is_some(),
            s,
            2e6 / s,
            c[7],
            &c[..7]
        );
    }
}
