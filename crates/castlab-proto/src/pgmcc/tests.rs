//! PGMCC driven by hand against draft-ietf-rmt-bb-pgmcc-03's rules.

use super::*;
use crate::testing::{Driver, Link, Pair};
use castlab_core::{
    Addr, Agent, AgentEvent, ControlMsg, Dest, GroupId, Header, NodeId, Packet, PgmHeader, Rng, StartInfo, StreamKind,
};

const G: GroupId = GroupId(5);
const SENDER: Addr = Addr::new(NodeId(1), 1);
const RX: Addr = Addr::new(NodeId(2), 7);

fn ms(x: u64) -> Instant {
    Instant::from_nanos(x * 1_000_000)
}

fn rx_addr(i: u32) -> Addr {
    Addr::new(NodeId(10 + i), 7)
}

fn info(addr: Addr, k: u64) -> StartInfo {
    StartInfo { addr, rng: Rng::stream(7, StreamKind::Agent, k) }
}

fn sender() -> PgmccSender {
    PgmccSender::try_new(PgmccConfig::default(), G, 3, Instant::ZERO, Instant::MAX).unwrap()
}

fn receiver() -> PgmccReceiver {
    PgmccReceiver::try_new(PgmccConfig::default(), G, 3).unwrap()
}

/// One sender and one receiver, `one_way` apart each way, infinitely fast links; the sender's
/// packets pass `loss` first.
fn pair(one_way: u64, loss: impl FnMut(&Packet) -> bool + 'static) -> Pair<PgmccSender, PgmccReceiver> {
    Pair::start(
        sender(),
        info(SENDER, 0),
        receiver(),
        info(RX, 1),
        Link::delay(Duration::from_millis(one_way)).loss(loss),
        Link::delay(Duration::from_millis(one_way)),
    )
}

fn tx_seq(p: &Packet) -> Option<u64> {
    DataHeader::decode(p).map(|h| h.tx_seq)
}

/// A NAK from `from` at `now` reporting loss `p` and an RTT of `rtt_ms` (an echo of the
/// sender's clock `rtt_ms` ago); `election`: a dummy NAK of §2.3.1.
fn nak(now: Instant, from: Addr, p: f64, rtt_ms: u64, seq: u64, election: bool) -> Packet {
    let echo = micros(now) - (rtt_ms * 1000) as u32;
    let h = NakHeader { ts_echo_us: echo, have_ts: true, loss: loss_to_wire(p), election, ack: None };
    let mut pkt = Packet::data(Dest::Unicast(SENDER), 64);
    pkt.src = from;
    pkt.flow = 3;
    pkt.seq = seq;
    pkt.header = h.encode();
    pkt
}

// ------------------------------------------------------------------ constants and formats

#[test]
fn default_config_is_the_drafts() {
    let c = PgmccConfig::default();
    assert_eq!(c.acker_bias, 0.75); // §2.3
    assert_eq!(c.loss_filter, 500.0 / 65536.0); // §2.6
    assert_eq!(c.ssthresh, 4.0); // §2.2
    assert_eq!(c.dupacks, 3); // §2.2
    assert_eq!(c.initial_rto, Duration::from_secs(3)); // §2.7
    assert_eq!(c.retry_max, 2); // §2.7
    assert_eq!(ACK_BITMAP_BITS, 32); // §2.1.2
    assert!(c.validate().is_ok());
}

#[test]
fn bad_config_names_the_field() {
    let e = PgmccConfig { acker_bias: 1.5, ..PgmccConfig::default() }.validate().unwrap_err();
    assert_eq!(e.field, "acker_bias");
    let e = PgmccConfig { dupacks: 40, ..PgmccConfig::default() }.validate().unwrap_err();
    assert_eq!(e.field, "dupacks");
    let e = PgmccConfig { min_rto: Duration::from_secs(90), ..PgmccConfig::default() }.validate().unwrap_err();
    assert_eq!(e.field, "max_rto");
    let e = PgmccSender::try_new(PgmccConfig::default(), G, 0, ms(5), ms(1)).unwrap_err();
    assert_eq!(e.field, "stop");
}

#[test]
fn throughput_equation_by_hand() {
    // RTT 100 ms, p = 0.01: sqrt(p) = 0.1, 1 + 9·0.01·(1 + 32·10^-4) = 1.090288.
    assert!((inverse_throughput(0.1, 0.01) - 0.01090288).abs() < 1e-12);
    // p = 0: M = 0, so any receiver with loss replaces an acker without.
    assert_eq!(inverse_throughput(0.3, 0.0), 0.0);
    assert!(replaces_acker(1e-9, 0.0, 0.75));
    // §2.3 with C = 0.75: T_i < 0.75·T_acker, i.e. M_i > M_acker / 0.75.
    assert!(!replaces_acker(0.0133, 0.01, 0.75));
    assert!(replaces_acker(0.0134, 0.01, 0.75));
}

#[test]
fn headers_round_trip_and_reject_reserved_bits() {
    let mut p = Packet::data(Dest::Group(G), 1000);
    let d = DataHeader { tx_seq: 1 << 40, ts_us: 0xDEAD_BEEF, acker: Some(rx_addr(3)), rdata: true, trail: 77 };
    p.header = d.encode();
    assert_eq!(DataHeader::decode(&p), Some(d));
    let none = DataHeader { acker: None, rdata: false, ..d };
    p.header = none.encode();
    assert_eq!(DataHeader::decode(&p), Some(none));
    assert_eq!(NakHeader::decode(&p), None);
    let n =
        NakHeader { ts_echo_us: 12345, have_ts: true, loss: 65535, election: true, ack: Some((1 << 40, 0x8000_0001)) };
    p.header = n.encode();
    assert_eq!(NakHeader::decode(&p), Some(n));
    let a = AckHeader { ts_echo_us: 9, loss: 300, rx_max: 1 << 33, bitmap: 0x8000_0001 };
    p.header = a.encode();
    assert_eq!(AckHeader::decode(&p), Some(a));
    // An ACK whose bitmap does not report RX_MAX itself is malformed.
    p.header = AckHeader { bitmap: 2, ..a }.encode();
    assert_eq!(AckHeader::decode(&p), None);
    // Reserved flag bits of a data header.
    p.header = Header::Control(ControlMsg { kind: PGMCC_DATA_KIND, args: [0, 0, 1 << 20] });
    assert_eq!(DataHeader::decode(&p), None);
    assert_eq!(loss_from_wire(loss_to_wire(0.25)), 16384.0 / 65535.0);
}

// ------------------------------------------------------------------ receiver

#[test]
fn loss_filter_by_hand() {
    let mut r = Driver::start(receiver(), Instant::ZERO, RX, 1);
    assert!(r.events.iter().any(|e| e.1 == AgentEvent::Join(G)));
    let data = |tx: u64, seq: u64| {
        let mut p = Packet::data(Dest::Group(G), 1000);
        p.src = SENDER;
        p.flow = 3;
        p.seq = seq;
        p.header = DataHeader { tx_seq: tx, ts_us: 0, acker: Some(rx_addr(0)), rdata: false, trail: 0 }.encode();
        p
    };
    let c = 500.0 / 65536.0;
    r.packet(ms(1), &data(0, 0));
    r.packet(ms(2), &data(1, 1));
    assert_eq!(r.agent.loss_rate(), 0.0);
    // Transmit sequence numbers 2 and 3 missed: two losses then a receipt.
    r.packet(ms(3), &data(4, 4));
    let want = (c + (1.0 - c) * c) * (1.0 - c);
    assert!((r.agent.loss_rate() - want).abs() < 1e-15, "{} {want}", r.agent.loss_rate());
    assert_eq!(r.agent.records().lost, 2);
    // Two PGM gaps wait for their NAKs; not the acker, so no ACK was sent.
    assert_eq!(r.agent.pending_naks(), 2);
    assert_eq!(r.agent.records().acks_sent, 0);
    // Both NAKs leave within the back-off, with p and the held timestamp.
    r.advance_to(ms(60));
    let naks: Vec<_> = r.sent.iter().filter_map(|(t, p)| NakHeader::decode(p).map(|n| (*t, p.seq, n))).collect();
    assert_eq!(naks.iter().map(|n| n.1).collect::<Vec<_>>().len(), 2);
    for (t, seq, n) in naks {
        assert!((2..=3).contains(&seq) && t <= ms(53));
        assert_eq!(n.loss, loss_to_wire(want));
        // The echo is the last timestamp (0) plus the time held since 3 ms.
        assert_eq!(n.ts_echo_us as u64, (t.as_nanos() - ms(3).as_nanos()) / 1000);
    }
}

#[test]
fn ncf_suppresses_a_pending_nak_and_the_acker_acks_with_its_bitmap() {
    let mut r = Driver::start(receiver(), Instant::ZERO, RX, 1);
    let data = |tx: u64, seq: u64| {
        let mut p = Packet::data(Dest::Group(G), 1000);
        p.src = SENDER;
        p.flow = 3;
        p.seq = seq;
        p.header = DataHeader { tx_seq: tx, ts_us: 500, acker: Some(RX), rdata: false, trail: 0 }.encode();
        p
    };
    r.packet(ms(1), &data(10, 0));
    r.packet(ms(1), &data(12, 2));
    let acks: Vec<_> = r.sent.iter().filter_map(|(_, p)| AckHeader::decode(p)).collect();
    assert_eq!(acks.len(), 2);
    assert_eq!((acks[1].rx_max, acks[1].bitmap, acks[1].ts_echo_us), (12, 0b101, 500));
    assert_eq!(r.agent.pending_naks(), 1);
    let mut ncf = Packet::data(Dest::Group(G), 64);
    ncf.src = SENDER;
    ncf.flow = 3;
    ncf.seq = 1;
    ncf.header = Header::Control(ControlMsg { kind: PGMCC_NCF_KIND, args: [0; 3] });
    r.packet(ms(2), &ncf);
    r.advance_to(ms(200));
    assert_eq!(r.agent.records().suppressed, 1);
    assert_eq!(r.agent.records().naks_sent, 0);
}

// ------------------------------------------------------------------ acker election

#[test]
fn first_nak_elects_the_acker_and_a_lossier_receiver_takes_over_only_past_the_bias() {
    let mut s = Driver::start(sender(), Instant::ZERO, SENDER, 1);
    // One packet asks for an election (§2.3.1).
    let first: Vec<_> = s.sent.iter().filter_map(|(_, p)| DataHeader::decode(p)).collect();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].acker, None);
    // The first NAK elects its receiver and adds a token (§3): the next packet names it.
    s.packet(ms(100), &nak(ms(100), rx_addr(0), 0.01, 100, 0, true));
    assert_eq!(s.agent.acker(), Some(rx_addr(0)));
    let last = DataHeader::decode(&s.sent.last().unwrap().1).unwrap();
    assert_eq!(last.acker, Some(rx_addr(0)));
    // Receiver 1 at the same RTT: p = 0.015 gives T_1/T_0 ≈ 0.78, above C = 0.75: no switch.
    let m0 = inverse_throughput(0.1, loss_from_wire(loss_to_wire(0.01)));
    let m1 = inverse_throughput(0.1, loss_from_wire(loss_to_wire(0.015)));
    assert!(m0 / m1 > 0.75 && m0 / m1 < 0.8, "{}", m0 / m1);
    s.packet(ms(200), &nak(ms(200), rx_addr(1), 0.015, 100, 0, false));
    assert_eq!(s.agent.acker(), Some(rx_addr(0)));
    // p = 0.02: T_1/T_0 ≈ 0.69 < 0.75: receiver 1 is the acker.
    s.packet(ms(300), &nak(ms(300), rx_addr(1), 0.02, 100, 0, false));
    assert_eq!(s.agent.acker(), Some(rx_addr(1)));
    // A longer RTT counts as much as loss: receiver 2 with p = 0.01 at 250 ms.
    s.packet(ms(400), &nak(ms(400), rx_addr(2), 0.01, 250, 0, false));
    assert_eq!(s.agent.acker(), Some(rx_addr(2)));
    let r = s.agent.records();
    assert_eq!(r.acker_receiver, vec![0, 1, 2]);
    assert_eq!(r.naks, 4);
    assert!((r.fb_rtt_s[3] - 0.25).abs() < 1e-6);
}

#[test]
fn a_nak_is_confirmed_and_repaired_under_the_window() {
    let mut s = Driver::start(sender(), Instant::ZERO, SENDER, 1);
    s.packet(ms(100), &nak(ms(100), rx_addr(0), 0.01, 100, 0, true));
    let before = s.sent.len();
    // NAK for PGM sequence number 0 (sent); and for 9 (never sent): refused.
    s.packet(ms(110), &nak(ms(110), rx_addr(1), 0.001, 100, 0, false));
    s.packet(ms(111), &nak(ms(111), rx_addr(1), 0.001, 100, 9, false));
    let after: Vec<_> = s.sent[before..].iter().map(|(_, p)| p).collect();
    // The NCF goes at once; no token is left, so the repair waits.
    assert_eq!(after.len(), 1);
    assert!(matches!(after[0].header, Header::Control(ControlMsg { kind: PGMCC_NCF_KIND, .. })));
    assert_eq!(s.agent.records().repairs_refused, 1);
    // An ACK from the acker for transmit sequence number 1 returns tokens: the RDATA goes first.
    let ack = AckHeader { ts_echo_us: micros(ms(100)), loss: 0, rx_max: 1, bitmap: 1 };
    let mut p = Packet::data(Dest::Unicast(SENDER), 64);
    p.src = rx_addr(0);
    p.flow = 3;
    p.header = ack.encode();
    s.packet(ms(200), &p);
    let h = DataHeader::decode(&s.sent[before + 1].1).unwrap();
    assert!(h.rdata);
    assert_eq!(s.sent[before + 1].1.seq, 0);
    assert_eq!(h.tx_seq, 2);
}

// ------------------------------------------------------------------ window

#[test]
fn single_receiver_is_elected_and_the_window_opens_one_packet_per_rtt() {
    let mut pr = pair(50, |_| false);
    pr.run_until(ms(3000));
    assert_eq!(pr.a.agent.acker(), Some(RX));
    let w3 = pr.a.agent.window();
    pr.run_until(ms(5000));
    let w5 = pr.a.agent.window();
    // Congestion avoidance: +1 packet per 100 ms RTT, so about 20 in 2 s.
    assert!((18.0..=21.0).contains(&(w5 - w3)), "{w3} -> {w5}");
    let r = pr.a.agent.records();
    assert_eq!((r.halvings, r.timeouts, r.naks), (0, 0, 1));
    // Every packet sent was ACKed by the one receiver.
    assert_eq!(pr.b.agent.records().acks_sent, r.data_sent - 1);
}

#[test]
fn a_loss_halves_the_window_once_and_suspends_it_for_an_rtt() {
    let mut pr = pair(50, |p| tx_seq(p) == Some(300));
    let mut w_before = 0.0;
    let mut cut_at = None;
    while pr.step(ms(20_000)) {
        let r = pr.a.agent.records();
        if r.halvings == 1 && cut_at.is_none() {
            cut_at = Some(pr.a.now);
            assert_eq!(pr.a.agent.window(), w_before / 2.0);
        }
        if cut_at.is_some_and(|t| pr.a.now < t + Duration::from_millis(90)) {
            // Suspended: the window does not move for the next RTT.
            assert_eq!(pr.a.agent.window(), w_before / 2.0);
        }
        if cut_at.is_none() {
            w_before = pr.a.agent.window();
        }
        if pr.a.now > ms(10_000) {
            break;
        }
    }
    let r = pr.a.agent.records();
    assert_eq!((r.halvings, r.timeouts), (1, 0));
    // The loss was seen, NAKed (besides the election NAK), confirmed and repaired.
    let rx = pr.b.agent.records();
    assert_eq!((rx.naks_sent, rx.election_naks, rx.repaired, r.rdata_sent, r.ncf_sent), (2, 1, 1, 1, 1));
    assert!(pr.a.agent.window() > w_before / 2.0 + 10.0);
}

#[test]
fn periodic_loss_gives_tcps_sawtooth() {
    // One transmission in 1/p = 100 lost. TCP's periodic-loss sawtooth (Mathis et al. 1997)
    // grows W/2 to W in W/2 RTTs, 3W²/8 packets. §2.2 adds the suspension: after a halving
    // the sender owes W/2 tokens (half an RTT without sending) and then waits an RTT for the
    // feedback of its next packet, 1.5 RTT at about W/2 per RTT, 3W/4 packets. So
    // 3W²/8 + 3W/4 = 100: W = 15.36, a cycle of W/2 + 1.5 = 9.18 RTTs of 100 ms, 108.9
    // packets/s (Mathis's model alone: 122.5).
    let w = (-0.75 + (0.75f64 * 0.75 + 4.0 * 0.375 * 100.0).sqrt()) / 0.75;
    let model = 100.0 / ((w / 2.0 + 1.5) * 0.1);
    assert!((model - 108.9).abs() < 0.1, "{model}");
    let mut pr = pair(50, |p| tx_seq(p).is_some_and(|s| s % 100 == 99));
    pr.run_until(ms(10_000));
    let r0 = pr.a.agent.records().clone();
    pr.run_until(ms(70_000));
    let r = pr.a.agent.records();
    let rate = ((r.data_sent + r.rdata_sent) - (r0.data_sent + r0.rdata_sent)) as f64 / 60.0;
    assert!((rate / model - 1.0).abs() < 0.05, "{rate} packets/s");
    assert_eq!(r.timeouts, 0);
    assert!(r.halvings >= 40, "{}", r.halvings);
}

#[test]
fn silence_times_out_and_drops_the_acker_after_retry_max() {
    // Everything after transmit sequence number 50 is lost.
    let mut pr = pair(50, |p| tx_seq(p).is_some_and(|s| s > 50));
    pr.run_until(ms(60_000));
    let r = pr.a.agent.records();
    assert!(r.timeouts >= 3, "{}", r.timeouts);
    assert_eq!(r.acker_drops, 1);
    assert_eq!(r.acker_receiver, vec![0, -1]);
    assert_eq!(pr.a.agent.window(), 1.0);
    // Timeouts back off: successive deadlines at least double (from at least min_rto).
    assert!(pr.a.agent.rto() >= Duration::from_secs(8));
}

#[test]
fn garbage_never_panics_and_is_counted() {
    // Every kind with arbitrary words, from anywhere, to both ends: decoded or counted, never a
    // panic (sequence numbers at the ends of their range included).
    let mut rng = Rng::seed_from_u64(42);
    let mut s = Driver::start(sender(), Instant::ZERO, SENDER, 1);
    let mut r = Driver::start(receiver(), Instant::ZERO, RX, 1);
    let kinds = [PGMCC_DATA_KIND, PGMCC_NAK_KIND, PGMCC_NCF_KIND, PGMCC_ACK_KIND, 0x1234];
    for i in 0..20_000u64 {
        let word = |rng: &mut Rng| match rng.below(4) {
            0 => 0,
            1 => u64::MAX,
            2 => rng.below(64),
            _ => rng.next_u64(),
        };
        let kind = kinds[rng.below(kinds.len() as u64) as usize];
        let args = [word(&mut rng), word(&mut rng), word(&mut rng)];
        let mut p = Packet::data(Dest::Group(G), 1000);
        p.src = rx_addr(rng.below(3) as u32);
        p.flow = 3;
        p.seq = word(&mut rng);
        p.header = Header::Control(ControlMsg { kind, args });
        let t = Instant::from_nanos(i * 1_000_000);
        r.packet(t, &p);
        p.dst = Dest::Unicast(SENDER);
        s.packet(t, &p);
    }
    assert!(s.agent.records().ignored > 0 && r.agent.records().ignored > 0);
    assert!(r.agent.pending_naks() <= PgmccConfig::default().nak_slots as usize);
}

// ------------------------------------------------------------------ RFC 3208's sequence numbers

fn pgm_seq_pair(loss: impl FnMut(&Packet) -> bool + 'static) -> Pair<PgmccSender, PgmccReceiver> {
    let cfg = PgmccConfig { pgm_seq_acks: true, ..PgmccConfig::default() };
    Pair::start(
        PgmccSender::try_new(cfg.clone(), G, 3, Instant::ZERO, Instant::MAX).unwrap(),
        info(SENDER, 0),
        PgmccReceiver::try_new(cfg, G, 3).unwrap(),
        info(RX, 1),
        Link::delay(Duration::from_millis(50)).loss(loss),
        Link::delay(Duration::from_millis(50)),
    )
}

#[test]
fn with_pgm_seq_acks_a_repair_is_acknowledged_under_the_number_it_repeats() {
    // ODATA 300 is lost; its RDATA repeats 300 and the ACKs report it there (OpenPGM's ACK).
    let mut pr = pgm_seq_pair(|p| DataHeader::decode(p).is_some_and(|h| !h.rdata) && p.seq == 300);
    pr.run_until(ms(10_000));
    let sent: Vec<_> = pr.a.sent.iter().filter_map(|(_, p)| DataHeader::decode(p).map(|h| (p.seq, h))).collect();
    assert!(sent.iter().all(|(seq, h)| h.tx_seq == *seq));
    let rdata: Vec<_> = sent.iter().filter(|(_, h)| h.rdata).collect();
    assert_eq!(rdata.len(), 1);
    assert_eq!(rdata[0].0, 300);
    // The first ACK after the repair arrived reports 300 received.
    let repaired_at = pr.b.agent.records().repaired;
    assert_eq!(repaired_at, 1);
    let acks: Vec<_> = pr.b.sent.iter().filter_map(|(_, p)| AckHeader::decode(p)).collect();
    let first_with =
        acks.iter().position(|a| a.rx_max >= 300 && a.rx_max - 300 < 32 && a.bitmap >> (a.rx_max - 300) & 1 == 1);
    let first_without =
        acks.iter().position(|a| a.rx_max > 300 && a.rx_max - 300 < 32 && a.bitmap >> (a.rx_max - 300) & 1 == 0);
    assert!(first_without.unwrap() < first_with.unwrap());
    let r = pr.a.agent.records();
    // One loss, one halving; the repair's ACK returned its token (the RDATA left the network).
    assert_eq!((r.halvings, r.timeouts, r.losses_seen, r.repairs_acked, r.rdata_sent), (1, 0, 1, 1, 1));
    assert!(pr.a.agent.tokens() <= pr.a.agent.window());
}

#[test]
fn an_election_nak_carries_the_receivers_ack_state() {
    let mut r = Driver::start(receiver(), Instant::ZERO, RX, 1);
    for (tx, seq) in [(4, 4), (6, 6)] {
        let mut p = Packet::data(Dest::Group(G), 1000);
        p.src = SENDER;
        p.flow = 3;
        p.seq = seq;
        p.header = DataHeader { tx_seq: tx, ts_us: 500, acker: None, rdata: false, trail: 0 }.encode();
        r.packet(ms(1), &p);
    }
    r.advance_to(ms(100));
    let naks: Vec<_> = r.sent.iter().filter_map(|(_, p)| NakHeader::decode(p)).collect();
    let election: Vec<_> = naks.iter().filter(|n| n.election).collect();
    assert_eq!(election.len(), 1);
    assert_eq!(election[0].ack, Some((6, 0b101)));
    // A repair request carries none.
    assert!(naks.iter().filter(|n| !n.election).all(|n| n.ack.is_none()));
}

#[test]
fn pgm_headers_nak_and_ncf_are_understood() {
    // RFC 3208's wire delivers an NCF, and a third party's NAK without PGMCC's feedback, as
    // castlab's PGM header.
    let mut s = Driver::start(sender(), Instant::ZERO, SENDER, 1);
    let before = s.sent.len();
    let mut nak = Packet::data(Dest::Unicast(SENDER), 64);
    nak.src = rx_addr(0);
    nak.flow = 3;
    nak.seq = 0;
    nak.header = Header::Pgm(PgmHeader { kind: PgmHeader::NAK, trail: 0, lead: 0 });
    s.packet(ms(100), &nak);
    assert!(matches!(s.sent[before].1.header, Header::Control(ControlMsg { kind: PGMCC_NCF_KIND, .. })));
    assert_eq!(s.agent.acker(), None, "a NAK without feedback elects nobody");

    let mut r = Driver::start(receiver(), Instant::ZERO, RX, 1);
    for seq in [0, 2] {
        let mut p = Packet::data(Dest::Group(G), 1000);
        p.src = SENDER;
        p.flow = 3;
        p.seq = seq;
        p.header = DataHeader { tx_seq: seq, ts_us: 500, acker: Some(rx_addr(5)), rdata: false, trail: 0 }.encode();
        r.packet(ms(1), &p);
    }
    assert_eq!(r.agent.pending_naks(), 1);
    let mut ncf = Packet::data(Dest::Group(G), 64);
    ncf.src = SENDER;
    ncf.flow = 3;
    ncf.seq = 1;
    ncf.header = Header::Pgm(PgmHeader { kind: PgmHeader::NCF, trail: 0, lead: 2 });
    r.packet(ms(2), &ncf);
    assert_eq!(r.agent.records().suppressed, 1);
}

#[test]
fn ambient_spms_follow_spm_interval() {
    let cfg = PgmccConfig { spm_interval: Duration::from_millis(500), ..PgmccConfig::default() };
    let mut s =
        Driver::start(PgmccSender::try_new(cfg, G, 3, Instant::ZERO, ms(1200)).unwrap(), Instant::ZERO, SENDER, 1);
    s.advance_to(ms(3000));
    let spms: Vec<_> =
        s.sent.iter().filter(|(_, p)| matches!(p.header, Header::Pgm(h) if h.kind == PgmHeader::SPM)).collect();
    // At 0, 0.5 and 1 s; none after the stop at 1.2 s.
    assert_eq!(spms.iter().map(|(t, _)| *t).collect::<Vec<_>>(), vec![ms(0), ms(500), ms(1000)]);
    // The default sends none.
    let s = Driver::start(sender(), Instant::ZERO, SENDER, 1);
    assert!(!s.sent.iter().any(|(_, p)| matches!(p.header, Header::Pgm(_))));
}

// ------------------------------------------------------------------ shutdown

#[test]
fn a_stopped_acker_stops_acking_and_leaves() {
    let mut r = Driver::start(receiver(), Instant::ZERO, RX, 1);
    let data = |seq: u64| {
        let mut p = Packet::data(Dest::Group(G), 1000);
        p.src = SENDER;
        p.flow = 3;
        p.seq = seq;
        p.header = DataHeader { tx_seq: seq, ts_us: 500, acker: Some(RX), rdata: false, trail: 0 }.encode();
        p
    };
    r.packet(ms(1), &data(0));
    r.packet(ms(2), &data(2)); // 1 missing: a NAK is pending
    let acks = |r: &Driver<PgmccReceiver>| r.sent.iter().filter(|(_, p)| AckHeader::decode(p).is_some()).count();
    assert_eq!((acks(&r), r.agent.pending_naks()), (2, 1));
    r.shutdown(ms(3));
    assert_eq!(r.events.last().map(|e| e.1), Some(AgentEvent::Leave(G)));
    assert_eq!(r.agent.poll_timeout(), None);
    let sent = r.sent.len();
    r.packet(ms(4), &data(3));
    r.advance_to(ms(500));
    // No ACK for the data after the stop, and the pending NAK never went.
    assert_eq!(r.sent.len(), sent);
    assert_eq!(r.agent.records().naks_sent, 0);
    assert!(!r.agent.is_acker());
}

#[test]
fn a_stopped_source_ends_its_session_with_an_spm() {
    let mut s = Driver::start(sender(), Instant::ZERO, SENDER, 1);
    s.packet(ms(100), &nak(ms(100), rx_addr(0), 0.01, 100, 0, true));
    let next = s.sent.iter().filter(|(_, p)| DataHeader::decode(p).is_some_and(|h| !h.rdata)).count() as u64;
    s.shutdown(ms(150));
    let (_, last) = s.sent.last().unwrap();
    assert_eq!(last.header, Header::Pgm(PgmHeader { kind: PgmHeader::SPM, trail: 0, lead: next }));
    assert_eq!(last.dst, Dest::Group(G));
    assert_eq!(s.agent.poll_timeout(), None);
    let sent = s.sent.len();
    // Later NAKs and ACKs are ignored: no NCF, no repair, no new data.
    s.packet(ms(200), &nak(ms(200), rx_addr(0), 0.01, 100, 0, false));
    let ack = AckHeader { ts_echo_us: micros(ms(100)), loss: 0, rx_max: 1, bitmap: 1 };
    let mut p = Packet::data(Dest::Unicast(SENDER), 64);
    p.src = rx_addr(0);
    p.flow = 3;
    p.header = ack.encode();
    s.packet(ms(210), &p);
    s.advance_to(ms(10_000));
    assert_eq!(s.sent.len(), sent);
    // A second stop sends nothing more.
    s.shutdown(ms(10_001));
    assert_eq!(s.sent.len(), sent);
}

fn ack_from(now: Instant, from: Addr, rtt_ms: u64, rx_max: u64, bitmap: u32) -> Packet {
    let h = AckHeader { ts_echo_us: micros(now) - (rtt_ms * 1000) as u32, loss: 0, rx_max, bitmap };
    let mut p = Packet::data(Dest::Unicast(SENDER), 64);
    p.src = from;
    p.flow = 3;
    p.header = h.encode();
    p
}

#[test]
fn with_pgm_seq_acks_a_repair_of_data_a_previous_acker_acknowledged_returns_its_token() {
    // Receiver A acknowledges everything; B, lossier, NAKs PGM sequence number 2 and becomes
    // the acker. The RDATA of 2 repeats a number the ACKs reported before: B's ACK for it
    // shows nothing new, yet the repair has left the network and its token must return, or
    // the window stalls until the timer.
    let cfg = PgmccConfig { pgm_seq_acks: true, ..PgmccConfig::default() };
    let mut s =
        Driver::start(PgmccSender::try_new(cfg, G, 3, Instant::ZERO, Instant::MAX).unwrap(), Instant::ZERO, SENDER, 1);
    let (a, b) = (rx_addr(0), rx_addr(1));
    s.packet(ms(100), &nak(ms(100), a, 0.0, 10, 0, true));
    let sent_seqs = |s: &Driver<PgmccSender>| {
        s.sent.iter().filter_map(|(_, p)| DataHeader::decode(p).map(|h| (p.seq, h.rdata))).collect::<Vec<_>>()
    };
    // A acknowledges what was sent: 0 and 1, then 2..5
    s.packet(ms(110), &ack_from(ms(110), a, 10, 1, 0b11));
    let hi = sent_seqs(&s).iter().map(|x| x.0).max().unwrap();
    s.packet(ms(120), &ack_from(ms(120), a, 10, hi, u32::MAX >> (31 - hi)));
    let hi = sent_seqs(&s).iter().map(|x| x.0).max().unwrap();
    assert!(hi >= 6, "{:?}", sent_seqs(&s));
    // B's NAK for 2 with p = 0.5 makes it the acker; the NCF goes, the RDATA waits for a token
    s.packet(ms(130), &nak(ms(130), b, 0.5, 10, 2, false));
    assert_eq!(s.agent.acker(), Some(b));
    // A's ACK of everything sent (a previous acker's ACK returns tokens): the RDATA of 2 goes
    s.packet(ms(140), &ack_from(ms(140), a, 10, hi, u32::MAX >> (31 - hi)));
    assert!(sent_seqs(&s).contains(&(2, true)), "{:?}", sent_seqs(&s));
    let sent = s.sent.len();
    let hi2 = sent_seqs(&s).iter().map(|x| x.0).max().unwrap();
    // Nothing else was sent unless tokens were left: drain what A's ACK freed, with B's ACKs
    // of what B got (everything up to hi, 2 included).
    let t_before = s.agent.tokens();
    s.packet(ms(150), &ack_from(ms(150), b, 10, hi, u32::MAX >> (31 - hi)));
    assert_eq!(s.agent.records().repairs_acked, 1);
    // the token came back: one more packet, or one more token
    let more = s.sent.len() - sent;
    assert!(more >= 1 || s.agent.tokens() >= t_before + 1.0, "{more} {t_before} {}", s.agent.tokens());
    assert!(hi2 >= hi);
}

#[test]
fn a_lost_tail_after_a_halving_keeps_the_timer_armed() {
    // After a halving the tokens are below zero; the acker then reports only the newest packet
    // sent, the ones before it missing (too few after them to declare them lost, §2.2). They
    // are outstanding: the timer must stay armed, since no ACK and no token will come.
    let mut s = Driver::start(sender(), Instant::ZERO, SENDER, 1);
    let a = rx_addr(0);
    s.packet(ms(100), &nak(ms(100), a, 0.0, 10, 0, true));
    let newest = |s: &Driver<PgmccSender>| s.sent.iter().filter_map(|(_, p)| tx_seq(p)).max().unwrap();
    let bitmap = |got: &[u64], rx_max: u64| {
        got.iter().filter(|&&g| g <= rx_max && rx_max - g < 32).fold(0u32, |b, &g| b | 1 << (rx_max - g))
    };
    let mut got: Vec<u64> = Vec::new();
    let mut t = 110;
    // one ACK per packet, in order, until the window passes 12
    let mut next = 0;
    while s.agent.window() < 12.0 {
        got.push(next);
        s.packet(ms(t), &ack_from(ms(t), a, 10, next, bitmap(&got, next)));
        next += 1;
        t += 1;
    }
    // `next`, next + 1 and next + 2 are lost; the three after them arrive: a halving
    for k in 3..6 {
        got.push(next + k);
        s.packet(ms(t), &ack_from(ms(t), a, 10, next + k, bitmap(&got, next + k)));
        t += 1;
    }
    assert_eq!(s.agent.records().halvings, 1);
    assert!(s.agent.tokens() < 0.0, "{}", s.agent.tokens());
    // only the newest packet sent arrives
    let last = newest(&s);
    got.push(last);
    s.packet(ms(t), &ack_from(ms(t), a, 10, last, bitmap(&got, last)));
    assert!(s.agent.tokens() < 1.0 && newest(&s) == last, "{} {}", s.agent.tokens(), newest(&s));
    assert!(s.agent.outstanding());
    let before = s.agent.records().timeouts;
    s.advance_to(ms(t + 1500));
    assert_eq!(s.agent.records().timeouts, before + 1);
    assert!(newest(&s) > last, "the timer restarted the window");
}

#[test]
fn with_pgm_seq_acks_a_lost_repair_returns_its_token_after_three_later_packets() {
    // ODATA 300 and its RDATA are both lost: the ACKs never report 300, and once three ODATA
    // sent after the RDATA are reported, its token returns (no stall, no timeout).
    let mut pr = pgm_seq_pair(|p| p.seq == 300 && DataHeader::decode(p).is_some());
    pr.run_until(ms(10_000));
    let r = pr.a.agent.records();
    assert_eq!((r.rdata_sent, r.repairs_lost, r.repairs_acked, r.timeouts), (1, 1, 0, 0), "{r:?}");
    assert!(pr.a.agent.window() > 20.0, "{}", pr.a.agent.window());
}
