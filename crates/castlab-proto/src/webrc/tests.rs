//! WEBRC's tests: the RFC's formulas against values computed by hand from its text, the
//! sender's schedules, and each receiver event driven through [`crate::testing::Driver`].

use castlab_core::{Addr, Agent, AgentEvent, Dest, GroupId, Instant, NodeId, Packet, Rng, StartInfo};

use super::*;
use crate::testing::Driver;

fn ms(x: u64) -> Instant {
    Instant::from_nanos(x * 1_000_000)
}
fn secs(x: f64) -> Instant {
    Instant::from_nanos((x * 1e9).round() as u64)
}
fn info() -> StartInfo {
    StartInfo { addr: Addr::new(NodeId(2), 1), rng: Rng::seed_from_u64(1) }
}
fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// A small session: TSD 1 s, QD 3 s (Q = 3), N = 4 waves, T = 7, BCR_P 10 packets/s.
fn small() -> WebrcConfig {
    WebrcConfig {
        tsd: Duration::from_secs(1),
        qd: Duration::from_secs(3),
        waves: 4,
        layers: 8,
        bcr_p: 10.0,
        el: Duration::from_millis(50),
        ..WebrcConfig::default()
    }
}
fn groups(n: u32) -> Vec<GroupId> {
    (0..n).map(|m| GroupId(100 + m)).collect()
}

#[test]
fn defaults_are_the_rfcs_and_their_derived_values() {
    let c = WebrcConfig::default();
    c.validate().unwrap();
    assert_eq!((c.bcr_p, c.p, c.nu, c.delta, c.alpha), (1.0, 0.75, 0.3, 0.3, 0.25));
    assert_eq!((c.tsd, c.qd, c.el), (Duration::from_secs(10), Duration::from_secs(300), Duration::from_millis(500)));
    // Q = ceil(300/10) = 30, T = 20 + 30 = 50.
    assert_eq!((c.q_min(), c.t(), c.q()), (30, 50, 30));
    // L = ceil(1·10·(0.75-1)/ln 0.75) = ceil(8.6901) = 9.
    assert_eq!(c.l(), 9);
    // M = floor((4/3)^20·(1 - 0.75^20)/(ln(4/3)/10)) = floor(10926.54).
    assert_eq!(c.wave_packets(), 10926);
    // SR_P = ((4/3)^21 - 1)/(1/3) = 1258.347 packets/s, 10.07 Mb/s at 1000 B.
    assert!(close(c.sr_p(), 1258.347, 1e-3), "{}", c.sr_p());
}

#[test]
fn validate_rejects_too_few_channels_and_bad_constants() {
    let c = WebrcConfig { layers: 50, ..WebrcConfig::default() };
    assert_eq!(c.validate().unwrap_err().field, "layers");
    let c = WebrcConfig { p: 1.0, ..WebrcConfig::default() };
    assert_eq!(c.validate().unwrap_err().field, "p");
    let c = WebrcConfig { el: Duration::from_secs(11), ..WebrcConfig::default() };
    assert_eq!(c.validate().unwrap_err().field, "el");
    let c = WebrcConfig { tsd: Duration::ZERO, ..WebrcConfig::default() };
    assert_eq!(c.validate().unwrap_err().field, "tsd");
    let c = WebrcConfig { tsd: Duration::from_secs(1 << 20), ..WebrcConfig::default() };
    assert_eq!(c.validate().unwrap_err().field, "tsd");
    // A wave of more than 2^16 packets cannot be numbered in 16 bits.
    let c = WebrcConfig { bcr_p: 10.0, ..WebrcConfig::default() };
    assert_eq!(c.validate().unwrap_err().field, "waves");
    assert!(WebrcSender::try_new(small(), &groups(7), 1, Instant::ZERO, Instant::MAX).is_err());
    let mut g = groups(8);
    g[3] = g[2];
    assert!(WebrcReceiver::try_new(small(), &g, 1).is_err());
}

#[test]
fn rate_equation_is_the_rfcs() {
    // 1/(0.1·0.1·(0.816 + 7.35·0.01·(1 + 32·0.0001))) = 1/(0.01·0.8895352) = 112.3930.
    assert!(close(reqn(0.1, 0.01), 112.3930, 1e-3), "{}", reqn(0.1, 0.01));
    let p = lossp_for_rate(0.1, 112.3930);
    assert!(close(p, 0.01, 1e-6), "{p}");
    assert_eq!(lossp_for_rate(0.1, 0.01), 1.0);
}

#[test]
fn loss_filter_follows_the_update_rules() {
    // Reset to 0.01 (Z = 100), 50 packets, a loss event, 30 packets, an epoch with
    // G = 0.3·0.5/10 = 0.015, Delta = 0.3:
    // Z = 100·0.7^0.015 + 0.015·50/1.015·(1 - 0.7^1.015) = 99.6909; X = 49.25; Y = 0.985;
    // Z1 = 82.746, Z2 = 66.724: LOSSP = 1/82.746 = 0.0120851.
    let mut f = LossFilter::reset(0.01);
    for _ in 0..50 {
        f.packet();
    }
    f.loss_event();
    for _ in 0..30 {
        f.packet();
    }
    let lossp = f.epoch(0.015, 0.3);
    assert!(close(f.z, 99.69085, 1e-4), "{}", f.z);
    assert!(close(f.x, 49.25, 1e-9) && close(f.y, 0.985, 1e-9));
    assert!(close(lossp, 0.01208512, 1e-7), "{lossp}");
}

#[test]
fn artt_filter_weights_by_variance_and_floors_at_p_artt() {
    // Base: ARTT 0.2, V 0.04. K = 1, MRTT 0.3: Omega = 0.25, Rho = 0.25/(1 - 0.75²) = 0.571429,
    // V = 0.428571·0.04 + 0.571429·0.09 = 0.0685714, ARTT = 0.257143.
    let mut r = RttFilter::base(0.2);
    r.measure(0.3, 0.25, 0.75);
    assert!(close(r.artt, 0.2571429, 1e-6) && close(r.v, 0.0685714, 1e-6), "{r:?}");
    // K = 2, MRTT 0 (it can be 0 or negative): the EWMA 0.14700 is below P·ARTT = 0.192857.
    r.measure(0.0, 0.25, 0.75);
    assert!(close(r.artt, 0.1928571, 1e-6), "{r:?}");
}

#[test]
fn wire_fields_round_trip_and_reject_out_of_width() {
    let i = CcInfo { ctsi: 49, cn: 50, psn: 65535 };
    let mut p = Packet::data(Dest::Group(GroupId(1)), 1000);
    p.header = i.encode();
    assert_eq!(CcInfo::decode(&p), Some(i));
    p.header = castlab_core::Header::Control(castlab_core::ControlMsg { kind: WEBRC_DATA_KIND, args: [256, 0, 0] });
    assert_eq!(CcInfo::decode(&p), None);
}

/// Every packet of a sender of `cfg` from 0 to `until`.
fn sent(cfg: WebrcConfig, until: Instant) -> Vec<(Instant, CcInfo)> {
    let n = cfg.layers;
    let s = WebrcSender::try_new(cfg, &groups(n), 1, Instant::ZERO, until).unwrap();
    let mut d = Driver::start_with(s, Instant::ZERO, info());
    while let Some(t) = d.agent.poll_timeout() {
        d.advance_to(t);
    }
    d.sent.iter().map(|(t, p)| (*t, CcInfo::decode(p).unwrap())).collect()
}

#[test]
fn base_channel_sends_l_packets_per_slot_with_psn_mod_l() {
    let c = small();
    // L = ceil(10·(0.25/ln(4/3))) = ceil(8.6901) = 9.
    assert_eq!(c.l(), 9);
    let pk = sent(c, secs(3.0));
    let base: Vec<_> = pk.iter().filter(|(_, i)| i.cn == 7).collect();
    assert_eq!(base.len(), 27);
    for (k, (t, i)) in base.iter().enumerate() {
        assert_eq!(i.psn as usize, k);
        assert_eq!(i.ctsi as usize, k / 9, "CTSI of packet {k} at {t:?}");
    }
    // The first packet of each slot at the slot's start; the rate falls within the slot:
    // packet 1 when 10/λ·(1 - e^(-λt)) = 1, t = -ln(1 - λ/10)/λ = 0.10146 s.
    assert_eq!(base[9].0, secs(1.0));
    assert!(close(base[1].0.as_secs_f64(), 0.101464, 1e-5), "{:?}", base[1].0);
}

#[test]
fn waves_decay_by_p_per_slot_end_at_psn_65535_then_go_quiescent() {
    let c = small();
    // M = floor(10·(4/3)^4·(1 - 0.75^4)/ln(4/3)) = floor(75.10) = 75.
    assert_eq!(c.wave_packets(), 75);
    let pk = sent(c, secs(12.0));
    // Channel 3: its first wave ends with slot 3 and began at slot 0 (the sender's start).
    let ch3: Vec<_> = pk.iter().filter(|(_, i)| i.cn == 3).collect();
    let first: Vec<_> = ch3.iter().filter(|(t, _)| *t < secs(4.0)).collect();
    assert_eq!(first.len(), 75);
    assert_eq!(first[0].1.psn, 65461);
    assert_eq!(first[74].1.psn, 65535);
    // Per slot: 10·(4/3)^4·0.75^k·0.86901 = 27.46, 20.60, 15.45, 11.59 packets.
    let per: Vec<usize> =
        (0..4).map(|k| first.iter().filter(|(t, _)| t.as_secs_f64().floor() as usize == k).count()).collect();
    for (k, want) in [27.46, 20.60, 15.45, 11.59].iter().enumerate() {
        assert!((per[k] as f64 - want).abs() <= 1.0, "slot {k}: {} packets", per[k]);
    }
    // Quiescent in slots 4..=6; the next wave (ending with slot 10) starts at slot 7.
    assert!(!ch3.iter().any(|(t, _)| *t >= secs(4.0) && *t < secs(7.0)));
    assert!(ch3.iter().any(|(t, i)| *t == secs(7.0) && i.psn == 65461));
    // Each packet's CTSI is its slot modulo T = 7.
    for (t, i) in &pk {
        assert_eq!(i.ctsi as u64, (t.as_nanos() / 1_000_000_000) % 7, "{t:?} {i:?}");
    }
    // Waves under way at the start: channel 0's wave ends with slot 0 at BCR_P/P = 13.3 packets/s
    // down to 10: 10·(1/0.75)·0.86901 = 11.59 packets in slot 0.
    let ch0 = pk.iter().filter(|(t, i)| i.cn == 0 && *t < secs(1.0)).count();
    assert!((ch0 as f64 - 11.59).abs() <= 1.0, "{ch0}");
}

fn rx(cfg: WebrcConfig) -> Driver<WebrcReceiver> {
    let n = cfg.layers;
    Driver::start_with(WebrcReceiver::try_new(cfg, &groups(n), 1).unwrap(), Instant::ZERO, info())
}
fn pkt(ctsi: u8, cn: u8, psn: u16) -> Packet {
    let mut p = Packet::data(Dest::Group(GroupId(100 + cn as u32)), 1000);
    p.flow = 1;
    p.header = CcInfo { ctsi, cn, psn }.encode();
    p
}
fn joins(d: &Driver<WebrcReceiver>) -> Vec<GroupId> {
    d.events.iter().filter_map(|(_, e)| if let AgentEvent::Join(g) = e { Some(*g) } else { None }).collect()
}
fn leaves(d: &Driver<WebrcReceiver>) -> Vec<GroupId> {
    d.events.iter().filter_map(|(_, e)| if let AgentEvent::Leave(g) = e { Some(*g) } else { None }).collect()
}

#[test]
fn receiver_joins_the_base_channel_first_and_measures_artt_from_it() {
    let mut d = rx(small());
    assert_eq!(joins(&d), vec![GroupId(107)]);
    // First base packet 200 ms after the join, PSN 3 (k = 3): ARTT = 0.2;
    // TRR_P = ARR_P = 10 + 3·ln(0.75)/1 = 9.13695.
    d.packet(ms(200), &pkt(0, 7, 3));
    let r = &d.agent;
    assert_eq!(r.artt(), Some(0.2));
    assert!(close(r.trr(), 9.136954, 1e-5) && close(r.arr(), 9.136954, 1e-5));
    assert!(r.in_slow_start());
}

/// A receiver of `small()` that saw the base channel's first packet at 100 ms and joined its
/// first wave (CN 0) at the 150 ms epoch: start-up's target 4·TRR_P allows it.
fn joined_once() -> Driver<WebrcReceiver> {
    let mut d = rx(small());
    d.packet(ms(100), &pkt(0, 7, 0));
    d.advance_to(ms(150));
    assert_eq!(joins(&d), vec![GroupId(107), GroupId(100)]);
    assert_eq!(d.agent.nwc(), 1);
    assert!(d.agent.is_joining());
    d
}

#[test]
fn mrtt_subtracts_half_the_joined_waves_mean_spacing() {
    let mut d = joined_once();
    // First packet of CN 0 at 450 ms: FirstTime - JoinTime = 0.3 (joined at 150 ms);
    // MRTT = 0.3 - ln(4/3)/2/0.25/10·0.75 = 0.3 - 0.0431523 = 0.2568477.
    d.packet(ms(450), &pkt(0, 0, 60000));
    let rec = d.agent.records();
    assert_eq!(rec.mrtt.len(), 2);
    assert!(close(rec.mrtt[1], 0.2568477, 1e-6), "{}", rec.mrtt[1]);
    // ARTT from 0.1 (V 0.01) with K = 1: Rho = 0.571429, ARTT = 0.1 + 0.571429·0.1568477.
    assert!(close(d.agent.artt().unwrap(), 0.1896273, 1e-6), "{:?}", d.agent.artt());
    assert!(!d.agent.is_joining());
}

#[test]
fn a_loss_ends_start_up_and_blocks_joins_for_artt() {
    let mut d = joined_once();
    d.packet(ms(200), &pkt(0, 0, 60000));
    // Base PSN 1 and 2 missing: two packets lost, one loss event; SSR_P = max{SSMINR_P,
    // P·TRR_P} with SSMINR_P = 10·(1 + 4/3 + 16/9) = 41.11.
    d.packet(ms(210), &pkt(0, 7, 3));
    let r = &d.agent;
    assert_eq!(r.records().lost, 2);
    assert_eq!(r.records().loss_event_ns, vec![ms(210).as_nanos()]);
    assert!(!r.in_slow_start());
    assert!(close(r.ssr(), 41.1111, 1e-3), "{}", r.ssr());
    // LOSSP was reset so that REQN(ARTT, LOSSP) = TRR_P.
    let want = reqn(r.artt().unwrap(), r.lossp());
    assert!(close(want, r.trr(), 1e-6 * r.trr()), "{want} vs {}", r.trr());
    // While the loss event lasts (ARTT) no join happens; the loss event then ends.
    let until = ms(210) + Duration::from_secs_f64(r.artt().unwrap());
    let n = joins(&d).len();
    d.advance_to(until - Duration::from_millis(1));
    assert_eq!(joins(&d).len(), n);
}

#[test]
fn a_time_slot_change_leaves_the_lowest_wave() {
    let mut d = joined_once();
    d.packet(ms(200), &pkt(0, 0, 60000));
    d.advance_to(ms(999));
    let nwc = d.agent.nwc();
    // CTSI 1: wave channel 0 goes quiescent and is left.
    d.packet_before_timers(ms(999), &pkt(1, 7, 9));
    assert_eq!(leaves(&d).last(), Some(&GroupId(100)));
    assert_eq!(d.agent.nwc(), nwc - 1);
    assert_eq!(d.agent.records().slot_changes, 1);
    // A straggler of the old slot (6 = T-1 ahead of CTSI 1, more than T - Q/2 = 5.5) is no change.
    d.packet(ms(1010), &pkt(0, 7, 10));
    assert_eq!(d.agent.records().slot_changes, 1);
}

#[test]
fn slot_change_moves_arr_by_minus_p_bcr() {
    let mut d = joined_once();
    d.packet(ms(200), &pkt(0, 0, 60000));
    // Deliver the slot change between epochs (epochs fire every 50 ms).
    d.advance_to(ms(1000));
    let before = d.agent.arr();
    d.packet_before_timers(ms(1000), &pkt(1, 7, 9));
    assert!(close(d.agent.arr(), before - 7.5, 1e-9), "{} -> {}", before, d.agent.arr());
}

#[test]
fn a_join_without_a_first_packet_times_out_and_is_undone() {
    let mut d = joined_once();
    let arr = d.agent.arr();
    // ARTT 0.1, V 0.01: timeout max{2·0.01/0.1, 10·0.1} = 1 s after the join at 150 ms.
    // Feed base packets so that the session stays alive.
    d.packet(ms(1100), &pkt(0, 7, 1));
    assert_eq!(d.agent.nwc(), 1);
    d.advance_to(ms(1151));
    assert_eq!(d.agent.records().join_timeouts, 1);
    assert_eq!(d.agent.nwc(), 0);
    assert_eq!(leaves(&d), vec![GroupId(100)]);
    assert!(d.agent.arr() < arr);
}

#[test]
fn silence_makes_the_receiver_leave_the_session() {
    let mut d = joined_once();
    // §3.2.3.8: no packet for max{10, TSD} = 10 s.
    d.advance_to(secs(10.099));
    assert!(!d.agent.left_session());
    d.advance_to(secs(10.101));
    assert!(d.agent.left_session());
    assert!(leaves(&d).contains(&GroupId(107)) && leaves(&d).contains(&GroupId(100)));
    assert_eq!(d.agent.poll_timeout(), None);
}

#[test]
fn packets_of_unjoined_channels_and_other_sessions_are_ignored() {
    let mut d = rx(small());
    d.packet(ms(100), &pkt(0, 7, 0));
    d.packet(ms(110), &pkt(0, 3, 100));
    let mut other = pkt(0, 7, 1);
    other.flow = 9;
    d.packet(ms(120), &other);
    assert_eq!(d.agent.records().ignored, 2);
    assert_eq!(d.agent.records().received, 1);
}

/// A receiver fed every packet of the channels it joined, `delay` after they were sent,
/// losing those `lose` picks. A join or leave reaches the sender's side `delay` after the
/// receiver made it (the tree's branch is at the sender): a packet sent at t is delivered
/// when the receiver's last join or leave of its group made by t - delay was a join.
fn session(cfg: WebrcConfig, until: f64, delay_ms: u64, lose: impl Fn(u64) -> bool) -> Driver<WebrcReceiver> {
    let pk = {
        let n = cfg.layers;
        let s = WebrcSender::try_new(cfg.clone(), &groups(n), 1, Instant::ZERO, secs(until)).unwrap();
        let mut d = Driver::start_with(s, Instant::ZERO, info());
        while let Some(t) = d.agent.poll_timeout() {
            d.advance_to(t);
        }
        d.sent
    };
    let delay = Duration::from_millis(delay_ms);
    let mut d = rx(cfg);
    let mut k = 0u64;
    for (t, p) in pk {
        let at = t + delay;
        d.advance_to(at);
        let Dest::Group(g) = p.dst else { continue };
        let member = d
            .events
            .iter()
            .filter(|(et, _)| *et + delay <= t)
            .filter_map(|(_, e)| match e {
                AgentEvent::Join(x) if *x == g => Some(true),
                AgentEvent::Leave(x) if *x == g => Some(false),
                _ => None,
            })
            .next_back()
            .unwrap_or(false);
        if member {
            k += 1;
            if !lose(k) {
                d.packet(at, &p);
            }
        }
    }
    d
}

#[test]
fn without_loss_the_receiver_climbs_to_its_maximum_rate() {
    // MRR_P = 100 packets/s (0.8 Mb/s): the target rate caps there.
    let cfg = WebrcConfig { max_rate_bps: 800_000.0, ..small() };
    let d = session(cfg, 30.0, 20, |_| false);
    let r = d.agent.records();
    assert_eq!(r.lost, 0);
    // Reception rate over the last 10 s within 25 % of MRR_P = 100 packets/s and never
    // above ARR_P_max for the NWC it holds.
    let last: Vec<f64> = r.epoch_rr.iter().rev().take(200).copied().collect();
    let mean = last.iter().sum::<f64>() / last.len() as f64;
    assert!(mean > 75.0 && mean < 125.0, "mean rate {mean}");
    assert!(r.epoch_nwc.iter().any(|&n| n >= 1));
}

#[test]
fn with_loss_reception_follows_the_equations_target() {
    // One packet in 50 lost, 60 ms each way (MRTT about 0.12 s): REQN(0.12 s, 0.02) = 61
    // packets/s, above SSMINR_P = 41.1 and below SR_P = 96.4, so the equation sets the target.
    let d = session(small(), 60.0, 60, |k| k % 50 == 0);
    let r = d.agent.records();
    assert!(!d.agent.in_slow_start() && d.agent.lossp().is_finite());
    let n = 400; // the last 20 s of 50 ms epochs
    let mean = |v: &[f64]| v.iter().rev().take(n).sum::<f64>() / n as f64;
    let (rr, trate) = (mean(&r.epoch_rr), mean(&r.epoch_trate));
    let eq: Vec<f64> = r.epoch_artt.iter().zip(&r.epoch_lossp).map(|(a, p)| reqn(*a, *p)).collect();
    let eq = mean(&eq);
    // The target is the equation's (SSR_P below it) and the reception rate tracks the target
    // (the RFC's "reasonably fair": within a factor of two).
    assert!(close(trate, eq, 0.05 * eq), "trate {trate} reqn {eq}");
    assert!(rr > 0.5 * trate && rr < 2.0 * trate, "rate {rr} target {trate}");
}
