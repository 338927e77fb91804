use super::*;
use crate::headers::*;
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
    let n =
        encode(&sample(Header::Bcf(BcfHeader { kind: BcfHeader::REQUEST, ..Default::default() })), &mut buf).unwrap();
    assert_eq!(n, FIXED_LEN + BcfHeader::LEN);
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
    assert_eq!((n, buf[2], buf[FIXED_LEN]), (FIXED_LEN + NlmHeader::LEN, 4, 3));
    for bad_kind in [0u8, 5, 255] {
        let mut bad = buf;
        bad[FIXED_LEN] = bad_kind;
        assert_eq!(decode(&bad[..n]), Err(CodecError::UnknownKind { field: "nlm kind", value: bad_kind }));
    }
}

#[test]
fn pgm_kind_is_checked() {
    let mut buf = [0u8; 128];
    let n = encode(&sample(Header::Pgm(PgmHeader { kind: PgmHeader::RDATA, trail: 1, lead: 2 })), &mut buf).unwrap();
    assert_eq!(n, FIXED_LEN + PgmHeader::LEN);
    assert_eq!(buf[2], 6);
    assert_eq!(buf[FIXED_LEN], 2);
    for bad_kind in [0u8, 6, 255] {
        let mut bad = buf;
        bad[FIXED_LEN] = bad_kind;
        assert_eq!(decode(&bad[..n]), Err(CodecError::UnknownKind { field: "pgm kind", value: bad_kind }));
    }
}

/// The RLM kind, the TCP flags and the fixed part's flags are checked: every byte outside the
/// documented values is an error.
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
    for bad_bit in [16u8, 0x80] {
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
