//! Agent invariants under random input, driven through the one hand-driving harness
//! ([`crate::testing::Driver`]): random sequences of well-formed and foreign packets (other
//! groups, flows and kinds, out-of-order and duplicated sequence numbers) at random
//! non-decreasing instants, with the timers firing in between. The harness itself checks on
//! every step that `poll_timeout` never asks for an instant before `now`.

use castlab_core::{
    Addr, AgentEvent, Dest, Duration, GroupId, Header, Instant, NodeId, Packet, PgmHeader, PgmKind, RlmHeader, RlmKind,
    TcpHeader,
};
use proptest::prelude::*;

use crate::lesbcc::pgm_transport::{PgmReceiver, PgmReceiverConfig};
use crate::rlm::{RlmConfig, RlmReceiver};
use crate::tcp::{CcAlgorithm, TcpConfig, TcpSender};
use crate::testing::Driver;

/// (milliseconds to wait, a selector, a number) per step.
fn steps() -> impl Strategy<Value = Vec<(u16, u8, u64)>> {
    prop::collection::vec((0u16..3000, any::<u8>(), 0u64..64), 1..300)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// RLM (§3): the subscription level stays within 1..=layers, whatever arrives.
    #[test]
    fn rlm_level_stays_within_its_layers(input in steps()) {
        const LAYERS: u32 = 6;
        let groups: Vec<GroupId> = (0..LAYERS).map(|m| GroupId(10 + m)).collect();
        let rx = RlmReceiver::try_new(RlmConfig::default(), groups, GroupId(99)).expect("valid");
        let mut d = Driver::started(rx);
        let mut t = Instant::ZERO;
        let mut seq = [0u64; 8];
        for (dt, sel, x) in input {
            t += Duration::from_millis(dt as u64);
            let layer = (sel % 8) as usize; // 6 and 7 are foreign groups
            let p = match sel % 5 {
                0 => {
                    let mut c = Packet::data(Dest::Group(GroupId(99)), 40);
                    c.src = Addr::new(NodeId(2 + (x % 3) as u32), 1);
                    let kind = if x % 2 == 0 { RlmKind::Join } else { RlmKind::Session };
                    c.header = Header::Rlm(RlmHeader { kind, level: (x % 9) as u8, current: 3, receivers: 4 });
                    c
                }
                _ => {
                    let mut p = Packet::data(Dest::Group(GroupId(10 + layer as u32)), 1000);
                    p.layer = layer as u8;
                    // mostly in order, sometimes a gap, a duplicate or a step back
                    seq[layer] = match sel % 7 { 0 => seq[layer] + x, 1 => seq[layer].saturating_sub(x), _ => seq[layer] + 1 };
                    p.seq = seq[layer];
                    p.sent_at = t;
                    p
                }
            };
            d.packet(t, &p);
            let lv = d.agent.level();
            prop_assert!((1..=LAYERS).contains(&lv), "level {lv}");
        }
        for (_, e) in &d.events {
            if let AgentEvent::LevelChanged { level } = e {
                prop_assert!((1..=LAYERS).contains(level));
            }
        }
    }

    /// PGM (§5.1): a receiver never NAKs a sequence number it holds.
    #[test]
    fn pgm_receiver_never_naks_what_it_holds(input in steps()) {
        let rx = PgmReceiver::try_new(Some(GroupId(0)), 7, PgmReceiverConfig::default()).expect("valid");
        let mut d = Driver::started(rx);
        let mut t = Instant::ZERO;
        let mut lead = 0u64;
        for (dt, sel, x) in input {
            t += Duration::from_millis(dt as u64 / 4);
            let kind = [PgmKind::Odata, PgmKind::Odata, PgmKind::Odata, PgmKind::Rdata, PgmKind::Ncf, PgmKind::Spm][sel as usize % 6];
            let seq = if sel % 3 == 0 { lead.saturating_sub(x) } else { lead + x % 4 };
            lead = lead.max(seq + 1);
            let mut p = Packet::data(Dest::Group(GroupId(0)), 560);
            p.src = Addr::new(NodeId(0), 1);
            p.flow = if sel % 17 == 0 { 8 } else { 7 }; // now and then another session
            p.seq = seq;
            p.header = Header::Pgm(PgmHeader { kind, trail: 0, lead });
            // check each NAK against what the receiver held when it was sent: first those its
            // timers sent on the way to `t`, then those the packet itself caused
            for deliver in [false, true] {
                let before = d.sent.len();
                if deliver { d.packet(t, &p) } else { d.advance_to(t) }
                for (_, n) in &d.sent[before..] {
                    if let Header::Pgm(h) = n.header {
                        if h.kind == PgmKind::Nak {
                            prop_assert!(!d.agent.has(n.seq), "NAK for held seq {}", n.seq);
                        }
                    }
                }
            }
        }
    }

    /// TCP (RFC 5681): the congestion window never falls below one segment.
    #[test]
    fn tcp_cwnd_never_below_one_segment(input in steps()) {
        let cfg = TcpConfig::default();
        let mss = cfg.mss_bytes as u64;
        let tx = TcpSender::newreno(Addr::new(NodeId(2), 1), 1, cfg);
        let mut d = Driver::started(tx);
        let mut t = Instant::ZERO;
        let mut acked = 0u64;
        for (dt, sel, x) in input {
            t += Duration::from_millis(dt as u64 / 8);
            let sent_hi = d.agent.snd_max();
            // new ACKs, duplicate ACKs and stale ACKs in a random mix
            acked = match sel % 4 { 0 | 1 => (acked + x * mss).min(sent_hi), 2 => acked, _ => acked.saturating_sub(mss) };
            let mut a = Packet::data(Dest::Unicast(Addr::new(NodeId(1), 1)), 40);
            a.src = Addr::new(NodeId(2), 1);
            a.flow = 1;
            a.header = Header::Tcp(TcpHeader { ack: acked, flags: TcpHeader::ACK, payload: 0, wnd: u32::MAX, ts_val: 0, ts_ecr: 0, sack: [(0, 0); 3] });
            d.packet(t, &a);
            prop_assert!(d.agent.cwnd() >= mss, "cwnd {} < mss {mss}", d.agent.cwnd());
        }
    }

    /// CUBIC and BBR under random ACKs with random SACK blocks, echoes and timeouts: cwnd stays
    /// at least one segment, BBR's pacing rate positive and finite, nothing panics, and the
    /// harness sees no deadline (pacing included) before `now`.
    #[test]
    fn cubic_and_bbr_stay_sane_under_random_acks(input in steps(), bbr in any::<bool>()) {
        let algo = if bbr { CcAlgorithm::Bbr } else { CcAlgorithm::Cubic };
        let cfg = algo.default_config();
        let mss = cfg.mss_bytes as u64;
        let tx = TcpSender::new(Addr::new(NodeId(2), 1), 1, cfg.clone(), algo.build(&cfg));
        let mut d = Driver::started(tx);
        let mut t = Instant::ZERO;
        let mut acked = 0u64;
        for (dt, sel, x) in input {
            t += Duration::from_millis(dt as u64 / 8);
            let sent_hi = d.agent.snd_max();
            acked = match sel % 4 { 0 | 1 => (acked + x * mss).min(sent_hi), 2 => acked, _ => acked.saturating_sub(mss) };
            // a SACK block somewhere above the ACK (offsets as the header carries them)
            let (s, e) = ((x as u32 % 7 + 1) * mss as u32, (x as u32 % 7 + 1 + sel as u32 % 5) * mss as u32);
            let ecr = t.as_nanos().saturating_sub(x * 3_000_000);
            let mut a = Packet::data(Dest::Unicast(Addr::new(NodeId(1), 1)), 52);
            a.src = Addr::new(NodeId(2), 1);
            a.flow = 1;
            a.header = Header::Tcp(TcpHeader { ack: acked, flags: TcpHeader::ACK, payload: 0, wnd: 3 << 20, ts_val: 0,
                                                ts_ecr: ecr, sack: [(s, e), (0, 0), (0, 0)] });
            d.packet(t, &a);
            prop_assert!(d.agent.cwnd() >= mss, "cwnd {} < mss {mss}", d.agent.cwnd());
            if let Some(r) = d.agent.controller().pacing_rate() {
                prop_assert!(r.is_finite() && r > 0.0, "pacing rate {r}");
            }
        }
    }
}
