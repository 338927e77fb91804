//! Property tests (proptest) of what castlab reads off a wire: the router's frame parser
//! (Ethernet, IPv4 with options, UDP, IGMP v1/v2/v3), the PGM codec and the envelope.
//!
//! Inputs are generated from the formats' structure and written here byte by byte (with a
//! checksum written here too, RFC 1071's), apart from the code under test, so that:
//! - a well-formed input reads back as the fields it was built from (round trips);
//! - the same input mutated (bytes overwritten, the end cut off, the IP checksum fixed after the
//!   change so that the checks behind it are reached), or plain random bytes, never panics, and
//!   what is accepted keeps the parser's promises;
//! - a sealed envelope under a key refuses any change of any byte.
//!
//! Cases per property: `CASTLAB_FUZZ_CASES`; seed: `CASTLAB_FUZZ_SEED` (default fixed, so that a
//! run is repeatable). The suite's default, 10,000 per property (90,000 in all), took 4.9 s in
//! the debug build `make test` runs; 10^6 per property took 73 s in release (2026-11-28, a
//! shared 2-core x86_64 machine), more than the suite can spend, so 10^6 and 10^8 are run by
//! hand (10^8: about 100 times that, two hours):
//!
//! ```text
//! CASTLAB_FUZZ_CASES=1000000 cargo test --release -p castlab-net --test proptest_wire
//! CASTLAB_FUZZ_CASES=100000000 CASTLAB_FUZZ_SEED=7 cargo test --release -p castlab-net --test proptest_wire
//! ```

use std::net::Ipv4Addr;

use castlab_core::{Addr, Dest, GroupId, Header, Instant, NodeId, Packet, PgmHeader, RlmHeader};
use castlab_net::pgm_codec::{self, PgmPacket, PgmType, NAK_LIST_MAX};
use castlab_net::router::frame::{self, FrameError, Igmp, Parsed, ETH_HDR};
use castlab_net::router::igmp::{IgmpConfig, IgmpDrops, Membership};
use castlab_net::{Envelope, Reject};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config() -> Config {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    Config {
        cases: env("CASTLAB_FUZZ_CASES").unwrap_or(10_000).min(u32::MAX as u64) as u32,
        rng_seed: RngSeed::Fixed(env("CASTLAB_FUZZ_SEED").unwrap_or(0x6361_7374)),
        failure_persistence: None,
        ..Config::default()
    }
}

/// RFC 1071's checksum, written apart from `frame::checksum`.
fn csum(d: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in d.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

// ------------------------------------------------------------------------ frames

#[derive(Clone, Debug)]
enum Opt {
    Nop,
    /// RFC 2113: type 148, length 4, a 16-bit value (0: "examine the packet").
    RouterAlert(u16),
    /// Any other option: type 2..=255 and its data.
    Other(u8, Vec<u8>),
}

#[derive(Clone, Debug)]
struct Record {
    kind: u8,
    group: Ipv4Addr,
    sources: Vec<Ipv4Addr>,
    aux_words: usize,
}

#[derive(Clone, Debug)]
enum Body {
    /// IGMP v1 (0x12) or v2 (0x16) report, v2 leave (0x17), for a group.
    V12(u8, Ipv4Addr),
    /// A query with `extra` bytes after the 8 (a v3 query's).
    Query(Ipv4Addr, Vec<u8>),
    V3(Vec<Record>),
    /// UDP from `sport` to `dport` with a payload; the checksum filled in or zero.
    Udp(u16, u16, Vec<u8>, bool),
}

#[derive(Clone, Debug)]
struct Frame {
    dst_mac: [u8; 6],
    src_mac: [u8; 6],
    ttl: u8,
    tos: u8,
    ident: u16,
    frag: u16,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    opts: Vec<Opt>,
    body: Body,
    padding: usize,
}

fn addr() -> impl Strategy<Value = Ipv4Addr> {
    any::<u32>().prop_map(Ipv4Addr::from)
}

fn group() -> impl Strategy<Value = Ipv4Addr> {
    (0u32..1 << 28).prop_map(|x| Ipv4Addr::from(0xe000_0000 | x))
}

fn opt() -> impl Strategy<Value = Opt> {
    prop_oneof![
        Just(Opt::Nop),
        prop_oneof![Just(0u16), any::<u16>()].prop_map(Opt::RouterAlert),
        (2u8..=255, proptest::collection::vec(any::<u8>(), 0..8)).prop_map(|(t, d)| Opt::Other(t, d)),
    ]
}

fn record() -> impl Strategy<Value = Record> {
    (1u8..=6, group(), proptest::collection::vec(addr(), 0..6), 0usize..3)
        .prop_map(|(kind, group, sources, aux_words)| Record { kind, group, sources, aux_words })
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        (prop_oneof![Just(0x12u8), Just(0x16), Just(0x17)], group()).prop_map(|(t, g)| Body::V12(t, g)),
        (prop_oneof![Just(Ipv4Addr::UNSPECIFIED), group()], proptest::collection::vec(any::<u8>(), 0..12))
            .prop_map(|(g, x)| Body::Query(g, x)),
        proptest::collection::vec(record(), 0..5).prop_map(Body::V3),
        (any::<u16>(), any::<u16>(), proptest::collection::vec(any::<u8>(), 0..200), any::<bool>())
            .prop_map(|(a, b, p, c)| Body::Udp(a, b, p, c)),
    ]
}

fn frame_strategy() -> impl Strategy<Value = Frame> {
    (
        (any::<[u8; 6]>(), any::<[u8; 6]>(), any::<u8>(), any::<u8>(), any::<u16>()),
        prop_oneof![Just(0u16), Just(0x4000), any::<u16>()],
        (addr(), prop_oneof![group(), addr()]),
        proptest::collection::vec(opt(), 0..6),
        body(),
        0usize..20,
    )
        .prop_map(|((dst_mac, src_mac, ttl, tos, ident), frag, (src, dst), mut opts, body, padding)| {
            // at most 40 bytes of options (IHL is 4 bits)
            while opts_len(&opts) > 40 {
                opts.pop();
            }
            Frame { dst_mac, src_mac, ttl, tos, ident, frag, src, dst, opts, body, padding }
        })
}

fn opts_len(o: &[Opt]) -> usize {
    o.iter()
        .map(|x| match x {
            Opt::Nop => 1,
            Opt::RouterAlert(_) => 4,
            Opt::Other(_, d) => 2 + d.len(),
        })
        .sum()
}

fn proto(b: &Body) -> u8 {
    if matches!(b, Body::Udp(..)) {
        17
    } else {
        2
    }
}

/// The frame's bytes, and where its IP header ends.
fn build(f: &Frame) -> (Vec<u8>, usize) {
    let mut o = Vec::new();
    for x in &f.opts {
        match x {
            Opt::Nop => o.push(1),
            Opt::RouterAlert(v) => o.extend([0x94, 4, (v >> 8) as u8, *v as u8]),
            Opt::Other(t, d) => {
                o.extend([*t, 2 + d.len() as u8]);
                o.extend(d);
            }
        }
    }
    while o.len() % 4 != 0 {
        o.push(0); // End of Option List, then padding
    }
    let hl = 20 + o.len();
    let payload = match &f.body {
        Body::V12(t, g) => {
            let mut m = vec![*t, 0, 0, 0];
            m.extend(g.octets());
            m
        }
        Body::Query(g, x) => {
            let mut m = vec![0x11, 100, 0, 0];
            m.extend(g.octets());
            m.extend(x);
            m
        }
        Body::V3(recs) => {
            let mut m = vec![0x22, 0, 0, 0, 0, 0];
            m.extend((recs.len() as u16).to_be_bytes());
            for r in recs {
                m.extend([r.kind, r.aux_words as u8]);
                m.extend((r.sources.len() as u16).to_be_bytes());
                m.extend(r.group.octets());
                for s in &r.sources {
                    m.extend(s.octets());
                }
                m.extend(std::iter::repeat_n(0xaa, 4 * r.aux_words));
            }
            m
        }
        Body::Udp(sp, dp, p, with_sum) => {
            let len = 8 + p.len();
            let mut m = Vec::with_capacity(len);
            m.extend(sp.to_be_bytes());
            m.extend(dp.to_be_bytes());
            m.extend((len as u16).to_be_bytes());
            m.extend([0, 0]);
            m.extend(p);
            if *with_sum {
                let mut ph = Vec::new();
                ph.extend(f.src.octets());
                ph.extend(f.dst.octets());
                ph.extend([0, 17]);
                ph.extend((len as u16).to_be_bytes());
                ph.extend(&m);
                let c = match csum(&ph) {
                    0 => 0xffff,
                    c => c,
                };
                m[6..8].copy_from_slice(&c.to_be_bytes());
            }
            m
        }
    };
    let mut payload = payload;
    if proto(&f.body) == 2 {
        let c = csum(&payload);
        payload[2..4].copy_from_slice(&c.to_be_bytes());
    }
    let total = hl + payload.len();
    let mut b = Vec::with_capacity(ETH_HDR + total + f.padding);
    b.extend(f.dst_mac);
    b.extend(f.src_mac);
    b.extend([0x08, 0x00]);
    let mut h = vec![0x40 | (hl / 4) as u8, f.tos];
    h.extend((total as u16).to_be_bytes());
    h.extend(f.ident.to_be_bytes());
    h.extend(f.frag.to_be_bytes());
    h.extend([f.ttl, proto(&f.body), 0, 0]);
    h.extend(f.src.octets());
    h.extend(f.dst.octets());
    h.extend(&o);
    let c = csum(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    b.extend(h);
    b.extend(payload);
    b.extend(std::iter::repeat_n(0u8, f.padding));
    (b, ETH_HDR + hl)
}

/// Whether the options hold a Router Alert of value 0 before any End of Option List.
fn has_alert(opts: &[Opt]) -> bool {
    opts.iter().any(|o| match o {
        Opt::RouterAlert(v) => *v == 0,
        Opt::Other(0x94, d) => d.len() == 2 && d == &[0, 0],
        _ => false,
    })
}

/// Everything the router runs on a frame, checking the parser's promises on what it accepts.
fn process(input: &mut [u8], m: &mut Membership, cfg: &IgmpConfig, t: &mut u64) -> Result<(), FrameError> {
    let Parsed::Ipv4(_, ip) = frame::parse(input)? else { return Ok(()) };
    assert!(ip.hdr_len >= 20 && ip.end() <= input.len() && ip.payload_at() <= ip.end());
    assert_eq!(csum(&input[ETH_HDR..ETH_HDR + ip.hdr_len]), 0, "an accepted header has a valid checksum");
    match ip.proto {
        frame::PROTO_UDP => {
            let full = frame::parse_udp(input, &ip, false);
            if let Ok(u) = frame::parse_udp(input, &ip, true) {
                assert!(ip.payload_at() + 8 == u.payload.0 && u.payload.0 <= u.payload.1 && u.payload.1 <= ip.end());
            }
            full?;
        }
        frame::PROTO_IGMP => {
            if let Igmp::V3 { at, n, end } = frame::parse_igmp(input, &ip)? {
                assert!(at <= end && end <= input.len());
                *t += 1;
                let now = Instant::from_nanos(*t * 1_000_000);
                let mut drops = IgmpDrops::default();
                for r in frame::records(input, at, n) {
                    assert!(r.n_sources == 0 || 4 * r.n_sources <= end - at);
                    let _ = m.record(input, &r, now, cfg, &mut drops);
                }
                let mut q = Vec::new();
                m.poll(now, cfg, &mut q);
            }
        }
        _ => {}
    }
    if !frame::fill_l4_checksum(input, &ip) {
        return Err(FrameError::Truncated);
    }
    if ip.ttl > 1 {
        frame::decrement_ttl(input, &ip);
        match frame::parse(input) {
            Ok(Parsed::Ipv4(_, ip2)) => assert_eq!(ip2.ttl, ip.ttl - 1),
            other => panic!("a TTL decrement broke a valid frame: {other:?}"),
        }
    }
    Ok(())
}

#[derive(Clone, Debug)]
enum Mutation {
    Set(usize, u8),
    Cut(usize),
}

fn mutations() -> impl Strategy<Value = (Vec<Mutation>, bool)> {
    let m = prop_oneof![
        3 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        1 => any::<usize>().prop_map(Mutation::Cut),
    ];
    (proptest::collection::vec(m, 1..4), any::<bool>())
}

fn mutate(b: &mut Vec<u8>, ms: &[Mutation], from: usize) {
    for m in ms {
        if b.len() <= from {
            return;
        }
        match *m {
            Mutation::Set(i, v) => {
                let i = from + i % (b.len() - from);
                b[i] = v;
            }
            Mutation::Cut(n) => b.truncate(from + n % (b.len() - from + 1)),
        }
    }
}

/// Recompute the IPv4 header checksum of a mutated frame, if its IHL leaves a header there.
fn fix_ip_checksum(b: &mut [u8]) {
    if b.len() < ETH_HDR + 20 || b[ETH_HDR] >> 4 != 4 {
        return;
    }
    let hl = ((b[ETH_HDR] & 15) as usize * 4).max(20);
    if b.len() >= ETH_HDR + hl {
        b[ETH_HDR + 10..ETH_HDR + 12].fill(0);
        let c = csum(&b[ETH_HDR..ETH_HDR + hl]);
        b[ETH_HDR + 10..ETH_HDR + 12].copy_from_slice(&c.to_be_bytes());
    }
}

proptest! {
    #![proptest_config(config())]

    /// A well-formed frame reads back as what it was built from: Ethernet, every IPv4 field
    /// the router uses (Router Alert among the options), UDP's ports and payload, IGMP's
    /// message and every v3 record with its sources.
    #[test]
    fn a_frame_reads_back_as_built(f in frame_strategy()) {
        let (b, ip_end) = build(&f);
        let Ok(Parsed::Ipv4(eth, ip)) = frame::parse(&b) else { panic!("refused: {:?}", frame::parse(&b)) };
        prop_assert_eq!((eth.dst, eth.src, eth.ethertype), (f.dst_mac, f.src_mac, 0x0800));
        prop_assert_eq!(ETH_HDR + ip.hdr_len, ip_end);
        prop_assert_eq!((ip.ttl, ip.src, ip.dst, ip.proto), (f.ttl, f.src, f.dst, proto(&f.body)));
        prop_assert_eq!(ip.fragment, f.frag & 0x3fff != 0);
        prop_assert_eq!(ip.router_alert, has_alert(&f.opts));
        prop_assert_eq!(ip.end(), b.len() - f.padding);
        match &f.body {
            Body::Udp(sp, dp, p, with_sum) => {
                let u = frame::parse_udp(&b, &ip, false).expect("a valid datagram");
                prop_assert_eq!((u.src_port, u.dst_port), (*sp, *dp));
                prop_assert_eq!(&b[u.payload.0..u.payload.1], &p[..]);
                if *with_sum {
                    // one flipped payload bit breaks it
                    let mut c = b.clone();
                    if !p.is_empty() {
                        c[u.payload.0] ^= 1;
                        prop_assert_eq!(frame::parse_udp(&c, &ip, false), Err(FrameError::BadUdpChecksum));
                    }
                }
            }
            Body::V12(t, g) => {
                let want = if *t == 0x17 { Igmp::Leave(*g) } else { Igmp::Report(*g) };
                prop_assert_eq!(frame::parse_igmp(&b, &ip), Ok(want));
            }
            Body::Query(..) => prop_assert_eq!(frame::parse_igmp(&b, &ip), Ok(Igmp::Query)),
            Body::V3(recs) => {
                let Ok(Igmp::V3 { at, end, n }) = frame::parse_igmp(&b, &ip) else { panic!("a v3 report") };
                prop_assert_eq!((n, end), (recs.len(), ip.end()));
                let got: Vec<_> = frame::records(&b, at, n).collect();
                prop_assert_eq!(got.len(), recs.len());
                for (g, r) in got.iter().zip(recs) {
                    prop_assert_eq!((g.kind, g.group, g.n_sources), (r.kind, r.group, r.sources.len()));
                    let srcs: Vec<Ipv4Addr> = (0..g.n_sources).map(|k| g.source(&b, k)).collect();
                    prop_assert_eq!(&srcs, &r.sources);
                }
            }
        }
    }

    /// Mutated frames (and the same with the IP checksum fixed after the change) never make
    /// the router's path panic, and what passes keeps the parser's promises.
    #[test]
    fn a_mutated_frame_never_panics(f in frame_strategy(), (ms, fix) in mutations()) {
        let (mut b, _) = build(&f);
        mutate(&mut b, &ms, 0);
        if fix {
            fix_ip_checksum(&mut b);
        }
        let cfg = IgmpConfig { max_groups: 8, max_sources: 8, ..IgmpConfig::default() };
        let mut m = Membership::new(false, &cfg, Instant::ZERO);
        let mut t = 0;
        let _ = process(&mut b, &mut m, &cfg, &mut t);
    }

    /// Random bytes, as any frame a link may hand the router.
    #[test]
    fn random_bytes_never_panic(mut b in proptest::collection::vec(any::<u8>(), 0..1600), ipv4 in any::<bool>()) {
        if ipv4 && b.len() > ETH_HDR {
            b[12] = 0x08;
            b[13] = 0x00;
            b[ETH_HDR] = 0x40 | (b[ETH_HDR] & 15);
            fix_ip_checksum(&mut b);
        }
        let cfg = IgmpConfig::default();
        let mut m = Membership::new(true, &cfg, Instant::ZERO);
        let mut t = 0;
        let _ = process(&mut b, &mut m, &cfg, &mut t);
    }
}

// ------------------------------------------------------------------------ PGM

/// A PGM packet of a type castlab reads, with the fields its type carries (the others zero).
fn pgm_strategy() -> impl Strategy<Value = PgmPacket> {
    let kind = prop_oneof![
        Just(PgmType::Spm),
        Just(PgmType::Odata),
        Just(PgmType::Rdata),
        Just(PgmType::Nak),
        Just(PgmType::Nnak),
        Just(PgmType::Ncf),
    ];
    (
        kind,
        (any::<u16>(), any::<u16>(), any::<[u8; 6]>()),
        (any::<u32>(), any::<u32>(), any::<u32>()),
        (any::<u32>(), any::<u32>()),
        proptest::collection::vec(any::<u32>(), 0..=NAK_LIST_MAX),
        any::<bool>(),
        0u16..1400,
    )
        .prop_map(|(kind, (sport, dport, gsi), (sqn, trail, lead), (nla, grp), naks, fin, tsdu)| {
            let mut p = PgmPacket::new(kind);
            (p.sport, p.dport, p.gsi, p.sqn) = (sport, dport, gsi, sqn);
            match kind {
                PgmType::Spm => {
                    (p.trail, p.lead, p.nla, p.fin) = (trail, lead, Ipv4Addr::from(nla), fin);
                }
                PgmType::Odata | PgmType::Rdata => {
                    (p.trail, p.tsdu_len) = (trail, tsdu);
                }
                _ => {
                    (p.nla, p.group) = (Ipv4Addr::from(nla), Ipv4Addr::from(grp));
                    for s in naks {
                        p.naks.push(s);
                    }
                }
            }
            p
        })
}

fn pgm_bytes(p: &PgmPacket, tsdu_seed: u8) -> Vec<u8> {
    let mut buf = vec![0u8; p.wire_len()];
    let n = pgm_codec::encode(p, &mut buf, |t| {
        for (i, x) in t.iter_mut().enumerate() {
            *x = tsdu_seed.wrapping_add(i as u8);
        }
    })
    .expect("encodes");
    buf.truncate(n);
    buf
}

/// The PGM checksum (RFC 3208 §8: over the whole packet, 0 sent as all ones).
fn pgm_resum(b: &mut [u8]) {
    if b.len() < 8 {
        return;
    }
    b[6..8].fill(0);
    let c = match csum(b) {
        0 => 0xffff,
        c => c,
    };
    b[6..8].copy_from_slice(&c.to_be_bytes());
}

proptest! {
    #![proptest_config(config())]

    /// A packet encodes and decodes to its fields, TSDU included.
    #[test]
    fn a_pgm_packet_round_trips(p in pgm_strategy(), seed in any::<u8>()) {
        let b = pgm_bytes(&p, seed);
        prop_assert_eq!(pgm_codec::decode(&b), Ok(p));
        let at = p.tsdu_offset();
        prop_assert_eq!(b.len() - at, p.tsdu_len as usize);
        prop_assert!(b[at..].iter().enumerate().all(|(i, x)| *x == seed.wrapping_add(i as u8)));
    }

    /// Mutated packets (with the checksum fixed or not) never panic the decoder, a change
    /// without a new checksum is refused, and what is accepted re-encodes to what decodes the
    /// same: NAKs and NCFs of every wrong length included.
    #[test]
    fn a_mutated_pgm_packet_never_panics(p in pgm_strategy(), (ms, fix) in mutations()) {
        let orig = pgm_bytes(&p, 3);
        let mut b = orig.clone();
        mutate(&mut b, &ms, 0);
        if fix {
            pgm_resum(&mut b);
        }
        if let Ok(q) = pgm_codec::decode(&b) {
            // one byte changed moves the ones'-complement sum (by less than 0xffff, never 0)
            let one_byte = ms.len() == 1 && matches!(ms[0], Mutation::Set(..));
            prop_assert!(fix || !one_byte || b == orig, "a changed packet passed its old checksum");
            let at = q.tsdu_offset();
            let tsdu = if matches!(q.kind, PgmType::Odata | PgmType::Rdata) { &b[at..] } else { &[][..] };
            let mut again = vec![0u8; q.wire_len()];
            let n = pgm_codec::encode(&q, &mut again, |t| t.copy_from_slice(tsdu)).expect("re-encodes");
            if !matches!(q.kind, PgmType::Spmr | PgmType::Poll | PgmType::Polr | PgmType::Ack) {
                prop_assert_eq!(pgm_codec::decode(&again[..n]), Ok(q));
            }
        }
    }

    #[test]
    fn random_bytes_never_panic_the_pgm_decoder(mut b in proptest::collection::vec(any::<u8>(), 0..1500), fix in any::<bool>()) {
        if fix {
            pgm_resum(&mut b);
        }
        let _ = pgm_codec::decode(&b);
    }
}

// ------------------------------------------------------------------------ envelope

fn packet_strategy() -> impl Strategy<Value = Packet> {
    let header = prop_oneof![
        Just(Header::Data),
        (any::<bool>(), any::<u8>(), any::<u8>(), any::<u32>()).prop_map(|(j, level, current, receivers)| {
            Header::Rlm(RlmHeader {
                kind: if j { RlmHeader::JOIN } else { RlmHeader::SESSION },
                level,
                current,
                receivers,
            })
        }),
        (0usize..5, any::<u64>(), any::<u64>()).prop_map(|(k, trail, lead)| {
            let kind = [PgmHeader::ODATA, PgmHeader::RDATA, PgmHeader::NAK, PgmHeader::NCF, PgmHeader::SPM][k];
            Header::Pgm(PgmHeader { kind, trail, lead })
        }),
    ];
    let dst = prop_oneof![
        any::<u32>().prop_map(|g| Dest::Group(GroupId(g))),
        (any::<u32>(), any::<u16>()).prop_map(|(n, p)| Dest::Unicast(Addr::new(NodeId(n), p))),
    ];
    (
        dst,
        (any::<u32>(), any::<u16>()),
        0u32..1500,
        (any::<u32>(), any::<u64>(), any::<u8>(), any::<bool>(), any::<u64>()),
        header,
    )
        .prop_map(|(dst, (sn, sp), size, (flow, seq, layer, marked, sent), header)| {
            let mut p = Packet::data(dst, size);
            p.src = Addr::new(NodeId(sn), sp);
            (p.flow, p.seq, p.layer, p.marked, p.sent_at, p.header) =
                (flow, seq, layer, marked, Instant::from_nanos(sent), header);
            p
        })
}

proptest! {
    #![proptest_config(config())]

    /// A sealed packet opens to itself, with its epoch and application bytes, keyed or not.
    #[test]
    fn a_sealed_packet_opens_to_itself(
        p in packet_strategy(),
        app in proptest::collection::vec(any::<u8>(), 0..64),
        key in proptest::option::of(any::<[u8; 16]>()),
        epoch in any::<u64>(),
    ) {
        let env = Envelope::new(0x5e55, key.as_ref().map(|k| &k[..])).with_epoch(epoch);
        let mut buf = vec![0u8; env.datagram_len_with(&p, app.len())];
        let n = env.seal_with(&p, &app, &mut buf).expect("seals");
        let o = env.open_parts(&buf[..n]).expect("opens");
        prop_assert_eq!(o.packet.dst, p.dst);
        prop_assert_eq!(o.packet.src, p.src);
        prop_assert_eq!((o.packet.size_bytes, o.packet.flow, o.packet.seq), (p.size_bytes, p.flow, p.seq));
        prop_assert_eq!((o.packet.layer, o.packet.marked, o.packet.header), (p.layer, p.marked, p.header));
        prop_assert_eq!(o.packet.sent_at, p.sent_at);
        prop_assert_eq!(o.epoch, epoch);
        prop_assert_eq!(&buf[o.app.clone()], &app[..]);
    }

    /// Under a key, any change of any one byte of a sealed datagram (its epoch, session, header,
    /// MAC, body, application bytes, padding) is refused; a datagram cut short is too.
    #[test]
    fn a_keyed_datagram_refuses_any_change(
        p in packet_strategy(),
        app in proptest::collection::vec(any::<u8>(), 0..64),
        key in any::<[u8; 16]>(),
        at in any::<usize>(),
        flip in 1u8..=255,
        cut in any::<usize>(),
    ) {
        let env = Envelope::new(0x5e55, Some(&key));
        let mut buf = vec![0u8; env.datagram_len_with(&p, app.len())];
        let n = env.seal_with(&p, &app, &mut buf).expect("seals");
        buf.truncate(n);
        let mut b = buf.clone();
        b[at % n] ^= flip;
        prop_assert!(env.open_parts(&b).is_err(), "byte {} changed and still opened", at % n);
        prop_assert!(env.open_parts(&buf[..cut % n]).is_err());
        // a host without the key cannot make one: the same packet sealed under another key
        let other = Envelope::new(0x5e55, Some(&[key[0] ^ 1; 16][..]));
        let mut f = vec![0u8; n];
        let m = other.seal_with(&p, &app, &mut f).expect("seals");
        prop_assert_eq!(env.open_parts(&f[..m]).map(|_| ()), Err(Reject::BadMac));
    }

    /// Without a key: mutated datagrams never panic, and what opens re-seals to its bytes.
    #[test]
    fn a_mutated_datagram_never_panics(
        p in packet_strategy(),
        app in proptest::collection::vec(any::<u8>(), 0..64),
        (ms, _) in mutations(),
    ) {
        let env = Envelope::new(0x5e55, None);
        let mut buf = vec![0u8; env.datagram_len_with(&p, app.len())];
        let n = env.seal_with(&p, &app, &mut buf).expect("seals");
        buf.truncate(n);
        mutate(&mut buf, &ms, 0);
        if let Ok(o) = env.open_parts(&buf) {
            let mut again = vec![0u8; buf.len() + 64];
            let m = env.clone().with_epoch(o.epoch).seal_with(&o.packet, &buf[o.app.clone()], &mut again)
                .expect("an opened packet seals");
            prop_assert_eq!(&again[..m], &buf[..]);
        }
    }
}
