//! Offline fuzz of the router's frame parser (what the router does with any frame a link
//! hands it): mutated valid frames (ARP, UDP with a castlab envelope, IGMP v2/v3 reports and
//! queries, TCP) and random bytes go through `frame::parse` and everything the router runs
//! after it (UDP and IGMP checks, v3 records into a membership table, checksum filling, TTL
//! decrement). Nothing panics; whatever parses satisfies the parser's promises (offsets inside
//! the frame, a valid header checksum, a TTL decrement that keeps it valid); every rejection
//! has a reason. 2x10^5 inputs in the normal suite; `--ignored` runs 2x10^6 and prints counts.

use std::net::Ipv4Addr;

use castlab_core::{Addr, Dest, GroupId, Instant, NodeId, Packet, Rng};
use castlab_net::router::frame::{self, FrameError, Igmp, Parsed, ETH_HDR};
use castlab_net::router::igmp::{IgmpConfig, IgmpDrops, Membership};
use castlab_net::Envelope;

const H1: Ipv4Addr = Ipv4Addr::new(10, 1, 0, 2);
const H2: Ipv4Addr = Ipv4Addr::new(10, 2, 0, 2);

fn udp_frame(payload: &[u8], dst: Ipv4Addr) -> Vec<u8> {
    let mut f = vec![0u8; ETH_HDR + 28 + payload.len()];
    frame::write_eth(&mut f, frame::group_mac(Ipv4Addr::new(239, 1, 1, 1)), [2, 0, 0, 0, 0, 1], frame::ETHERTYPE_IPV4);
    frame::write_ipv4(&mut f, 28 + payload.len(), 9, frame::PROTO_UDP, H1, dst, false);
    f[ETH_HDR + 28..].copy_from_slice(payload);
    frame::write_udp(&mut f, 20, H1, dst, 47_001, 47_000, payload.len());
    f
}

fn igmp_frame(body: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; ETH_HDR + 24 + body.len()];
    frame::write_eth(&mut f, [1, 0, 0x5e, 0, 0, 22], [2, 0, 0, 0, 0, 3], frame::ETHERTYPE_IPV4);
    frame::write_ipv4(&mut f, 24 + body.len(), 1, frame::PROTO_IGMP, H2, Ipv4Addr::new(224, 0, 0, 22), true);
    f[ETH_HDR + 24..].copy_from_slice(body);
    let c = frame::checksum(&f[ETH_HDR + 24..]);
    f[ETH_HDR + 26..ETH_HDR + 28].copy_from_slice(&c.to_be_bytes());
    f
}

fn corpus() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut arp = vec![0u8; 60];
    frame::write_arp(&mut arp, frame::BROADCAST_MAC, 1, [2, 0, 0, 0, 0, 1], H1, [0; 6], Ipv4Addr::new(10, 1, 0, 1));
    out.push(arp);
    let env = Envelope::new(7, None);
    let mut p = Packet::data(Dest::Group(GroupId(1)), 200);
    p.src = Addr::new(NodeId(1), 1);
    let mut buf = vec![0u8; 256];
    let n = env.seal(&p, &mut buf).unwrap();
    out.push(udp_frame(&buf[..n], Ipv4Addr::new(239, 1, 1, 1)));
    out.push(udp_frame(b"plain datagram", H2));
    // v2 report and leave
    for t in [frame::IGMP_V2_REPORT, frame::IGMP_V2_LEAVE] {
        out.push(igmp_frame(&[t, 0, 0, 0, 239, 1, 1, 1]));
    }
    // v3 report: TO_EX{} for one group, ALLOW{H1} and BLOCK{H1, H2} for another
    let mut v3 = vec![frame::IGMP_V3_REPORT, 0, 0, 0, 0, 0, 0, 3];
    v3.extend([frame::CHANGE_TO_EXCLUDE, 0, 0, 0, 239, 1, 1, 2]);
    v3.extend([frame::ALLOW_NEW_SOURCES, 0, 0, 1, 239, 1, 1, 3]);
    v3.extend(H1.octets());
    v3.extend([frame::BLOCK_OLD_SOURCES, 1, 0, 2, 239, 1, 1, 3]);
    v3.extend(H1.octets());
    v3.extend(H2.octets());
    v3.extend([0, 0, 0, 0]); // one word of auxiliary data
    out.push(igmp_frame(&v3));
    let mut q = vec![0u8; 64];
    let n = frame::write_query(&mut q, [2; 6], H2, None, 100, 125);
    q.truncate(n);
    out.push(q);
    // TCP: a 20-byte header, forwarded without a look inside
    let mut tcp = vec![0u8; ETH_HDR + 40 + 10];
    frame::write_eth(&mut tcp, [2; 6], [4; 6], frame::ETHERTYPE_IPV4);
    frame::write_ipv4(&mut tcp, 50, 64, frame::PROTO_TCP, H1, H2, false);
    tcp[ETH_HDR + 32] = 0x50;
    out.push(tcp);
    out
}

/// Run what the router runs on one frame; returns the counter index (0..9 errors, 9 ok).
fn process(input: &mut [u8], m: &mut Membership, cfg: &IgmpConfig, t: &mut u64) -> usize {
    let parsed = match frame::parse(input) {
        Ok(p) => p,
        Err(e) => return e as usize,
    };
    let Parsed::Ipv4(_, ip) = parsed else { return OK };
    assert!(ip.hdr_len >= 20 && ip.end() <= input.len() && ip.payload_at() <= ip.end());
    assert_eq!(frame::checksum(&input[ETH_HDR..ETH_HDR + ip.hdr_len]), 0, "a parsed header has a valid checksum");
    match ip.proto {
        frame::PROTO_UDP => {
            let full = frame::parse_udp(input, &ip, false);
            let partial = frame::parse_udp(input, &ip, true);
            if let Ok(u) = partial {
                assert!(ip.payload_at() + 8 == u.payload.0 && u.payload.0 <= u.payload.1 && u.payload.1 <= ip.end());
            }
            match (full, partial) {
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                (Ok(_), Err(e)) => panic!("the checksum-free check refused what the full one passed: {e:?}"),
                (Err(e), _) => return e as usize,
            }
        }
        frame::PROTO_IGMP => match frame::parse_igmp(input, &ip) {
            Ok(Igmp::V3 { at, n, end }) => {
                assert!(at <= end && end <= input.len());
                *t += 1;
                let now = Instant::from_nanos(*t * 1_000_000);
                let mut drops = IgmpDrops::default();
                for r in frame::records(input, at, n) {
                    let _ = m.record(input, &r, now, cfg, &mut drops);
                }
                let mut q = Vec::new();
                m.poll(now, cfg, &mut q);
            }
            Ok(_) => {}
            Err(e) => return e as usize,
        },
        _ => {}
    }
    if !frame::fill_l4_checksum(input, &ip) {
        return FrameError::Truncated as usize;
    }
    if ip.ttl > 1 {
        frame::decrement_ttl(input, &ip);
        match frame::parse(input) {
            Ok(Parsed::Ipv4(_, ip2)) => assert_eq!(ip2.ttl, ip.ttl - 1),
            other => panic!("a TTL decrement broke a valid frame: {other:?}"),
        }
    }
    OK
}

/// The counter index of a frame the router could use.
const OK: usize = FrameError::ALL.len();

fn fuzz(n: u64, seed: u64) -> [u64; OK + 1] {
    let corpus = corpus();
    let cfg = IgmpConfig::default();
    let mut m = Membership::new(false, &cfg, Instant::ZERO);
    let mut r = Rng::seed_from_u64(seed);
    let mut counts = [0u64; OK + 1];
    let mut t = 0;
    // the unmutated corpus is valid
    for f in &corpus {
        let mut g = f.clone();
        assert_eq!(process(&mut g, &mut m, &cfg, &mut t), OK, "corpus frame refused: {f:?}");
    }
    let mut input = Vec::with_capacity(1600);
    for _ in 0..n {
        input.clear();
        input.extend_from_slice(&corpus[r.below(corpus.len() as u64) as usize]);
        match r.below(5) {
            0 => {
                for _ in 0..=r.below(3) {
                    let i = r.below(input.len() as u64) as usize;
                    input[i] ^= 1 << r.below(8);
                }
            }
            1 => input.truncate(r.below(input.len() as u64 + 1) as usize),
            2 => {
                // a byte of the headers (Ethernet, IP, the first of the transport) anywhere
                let i = r.below(input.len().min(64) as u64) as usize;
                input[i] = r.next_u64() as u8;
            }
            3 => {
                // a mutation, then the IP checksum fixed: garbage that gets past the IP check
                let i = ETH_HDR + r.below((input.len() - ETH_HDR) as u64) as usize;
                input[i] = r.next_u64() as u8;
                if input.len() >= ETH_HDR + 20 && input[ETH_HDR] >> 4 == 4 {
                    let hl = ((input[ETH_HDR] & 15) as usize * 4).clamp(20, 60);
                    if input.len() >= ETH_HDR + hl {
                        frame::write_ip_checksum(&mut input, hl);
                    }
                }
            }
            _ => {
                let len = r.below(1600) as usize;
                input.clear();
                input.extend((0..len).map(|_| r.next_u64() as u8));
            }
        }
        counts[process(&mut input, &mut m, &cfg, &mut t)] += 1;
    }
    counts
}

#[test]
fn frame_fuzz_quick() {
    let c = fuzz(200_000, 5);
    assert_eq!(c.iter().sum::<u64>(), 200_000);
    for e in [FrameError::Truncated, FrameError::BadIpChecksum, FrameError::BadIgmp, FrameError::BadUdpChecksum] {
        assert!(c[e as usize] > 0, "{} never hit: {c:?}", e.name());
    }
    assert!(c[OK] > 0, "{c:?}");
}

#[test]
#[ignore = "long: cargo test --release -p castlab-net --test frame_fuzz -- --ignored --nocapture"]
fn frame_fuzz_long() {
    let t = std::time::Instant::now();
    let c = fuzz(2_000_000, 17);
    let s = t.elapsed().as_secs_f64();
    let names: Vec<String> = FrameError::ALL.iter().map(|e| format!("{} {}", e.name(), c[*e as usize])).collect();
    println!("frame fuzz: 2000000 in {s:.1} s ({:.0}/s); passed {}, refused: {}", 2e6 / s, c[OK], names.join(", "));
}
