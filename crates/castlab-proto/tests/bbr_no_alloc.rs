//! BBR's per-ACK work allocates nothing, the ACK-aggregation estimate included: a counting
//! global allocator watches a controller driven through STARTUP, PROBE_BW (DRAIN ends on the
//! ACK that starts it: one BDP is in flight), ACK trains and PROBE_RTT by hand-made ACKs.
//!
//! Only the test's own thread is counted (`castlab_core::alloc_count`).

use castlab_core::alloc_count::{counting_is_installed, thread_allocations, watch, CountingAlloc};
use castlab_core::{Duration, Instant, Rng};
use castlab_proto::tcp::{AckSample, Bbr, BbrConfig, BbrMode, CongestionControl, RateSample, TcpConfig};

#[global_allocator]
static A: CountingAlloc = CountingAlloc;

#[test]
fn bbr_per_ack_work_allocates_nothing() {
    const MSS: u64 = 1000;
    let tcp = TcpConfig { mss_bytes: MSS as u32, initial_window_segs: 10, sack: true, ..TcpConfig::default() };
    let mut cc = Bbr::new(&tcp, BbrConfig::default());
    cc.on_start(Instant::ZERO, Rng::seed_from_u64(3));
    let (rate, rtt) = (1.25e6, Duration::from_millis(40));
    let mut now = Instant::ZERO;
    let mut delivered = 0u64;
    assert!(counting_is_installed(), "the counting allocator is not in use");
    let before = thread_allocations();
    watch(true);
    let mut modes = [false; 4];
    // 12 s of ACKs one segment apart at the link rate, every 50th a stretch ACK of 4 after a
    // silence; the RTT stays above the first sample, so PROBE_RTT comes at 10 s
    for i in 0..15_000u64 {
        let segs = if i % 50 == 49 { 4 } else { 1 };
        now += Duration::from_secs_f64(segs as f64 * MSS as f64 / rate);
        delivered += segs * MSS;
        let inflight = if cc.mode() == BbrMode::ProbeRtt { cc.cwnd().min(4 * MSS) } else { 50 * MSS };
        let s = AckSample {
            now,
            rtt: Some(if i == 0 { rtt } else { rtt + Duration::from_millis(1) }),
            srtt: Some(rtt),
            ack: delivered,
            snd_nxt: delivered + inflight,
            newly_delivered: segs * MSS,
            inflight,
            delivered,
            delivered_time: now,
            rate: Some(RateSample {
                delivered: 50 * MSS,
                interval: rtt,
                prior_delivered: delivered.saturating_sub(50 * MSS),
                is_app_limited: false,
            }),
            losses: 0,
        };
        cc.on_ack_sample(&s);
        cc.on_ack_processed(&s);
        modes[cc.state_code().map_or(0, |c| c.min(3)) as usize] = true;
    }
    watch(false);
    assert_eq!(thread_allocations() - before, 0, "allocations in BBR's per-ACK work");
    // the run went through STARTUP (0), PROBE_RTT (2) and PROBE_BW (8 and up), and the
    // allowance was in use
    assert_eq!(modes, [true, false, true, true], "{modes:?}");
    assert!(cc.extra_acked() >= 4 * MSS, "{}", cc.extra_acked());
    assert!(cc.ack_aggregation_cwnd() > 0);
}
