//! The BCFS paper's open question measured: a BCF router's memory and per-packet processing
//! time (Yano & McCanne, §V: "a router's required memory and processing load"), against the
//! number of receivers (directed links per label), the number of labels held, and the rate of
//! requests. Run with:
//!
//!     cargo bench -p castlab-sim --bench bcfs
//!
//! The router is castlab's `BcfRouter`, the very extension the simulator's nodes host, driven
//! through its `RouterExtension` calls with a stand-in `NetView` (channel i leads back to the
//! neighbour packets arrive from on channel i, as in the user-space router). Per case:
//! 1. every receiver requests every label once (level 1), the requests spread evenly over
//!    the case's virtual time at the given rate: the first request of a label is forwarded,
//!    the rest suppressed (§II-B.1); the time per request is measured over all of them;
//! 2. the table then holds labels x receivers breadcrumbs: its heap bytes are read
//!    (`BcfTable::memory_bytes`), and divided by the breadcrumbs;
//! 3. the source replies once per label (level 1): a copy down every link and teardown
//!    (§II-B.2); the time per reply and per copy are measured, the copies drained as the
//!    simulator drains `poll_transmit`.
//!
//! The rate sets how much virtual time the requests span: at the lowest rates the early
//! labels' links outlive their lifetime before the replies come (§II-B soft-state ageing), so
//! fewer copies go out (printed), and requests spread past the refresh interval become
//! refreshes (printed).

use std::time::Instant as WallInstant;

use castlab_core::{
    Addr, ChannelId, Duration, GroupId, Instant, NetView, NodeId, Packet, Rng, RouterExtension, Verdict,
};
use castlab_proto::bcfs::{BcfConfig, BcfHost, BcfRouter};

struct View {
    channels: Vec<ChannelId>,
}

impl NetView for View {
    fn node(&self) -> NodeId {
        NodeId(0)
    }
    fn out_channels(&self) -> &[ChannelId] {
        &self.channels
    }
    fn channel_peer(&self, ch: ChannelId) -> NodeId {
        NodeId(ch.0 + 1)
    }
    fn reverse_channel(&self, ch: ChannelId) -> Option<ChannelId> {
        Some(ch)
    }
    fn queue_len_pkts(&self, _: ChannelId) -> usize {
        0
    }
    fn queue_avg_pkts(&self, _: ChannelId) -> f64 {
        0.0
    }
    fn queue_limit_pkts(&self, _: ChannelId) -> usize {
        100
    }
    fn channel_rate_bps(&self, _: ChannelId) -> u64 {
        10_000_000
    }
    fn route_channel(&self, _: NodeId) -> Option<ChannelId> {
        Some(ChannelId(0))
    }
    fn group_source(&self, _: GroupId) -> Option<NodeId> {
        None
    }
}

struct Case {
    receivers: u32,
    labels: u32,
    rate: f64,
}

fn run(c: &Case) -> String {
    let view = View { channels: (0..=c.receivers).map(ChannelId).collect() };
    let cfg = BcfConfig { max_entries: c.labels as usize, ..Default::default() };
    let mut router = BcfRouter::new(cfg);
    router.handle_start(Instant::ZERO, Rng::seed_from_u64(1), &view);
    let source = Addr::new(NodeId(1000), 7);
    let mut src = BcfHost::new(1, 40, 512);
    src.set_addr(source);
    src.bind(0, 0);
    // the receivers' requests, built before timing (receiver r arrives on channel r + 1)
    let hosts: Vec<BcfHost> = (0..c.receivers)
        .map(|r| {
            let mut h = BcfHost::new(1, 40, 512);
            h.set_addr(Addr::new(NodeId(r + 1), 9));
            h
        })
        .collect();
    let step = Duration::from_secs_f64(1.0 / c.rate);
    let mut now = Instant::ZERO;
    let (mut forwarded, mut suppressed) = (0u64, 0u64);
    let wall = WallInstant::now();
    for label in 0..c.labels {
        for (r, h) in hosts.iter().enumerate() {
            let mut p: Packet = h.request(source, label, 1, None);
            match router.on_arrival(now, &mut p, Some(ChannelId(r as u32 + 1)), &view) {
                Verdict::Forward => forwarded += 1,
                _ => suppressed += 1,
            }
            now += step;
        }
    }
    let requests = c.labels as u64 * c.receivers as u64;
    let ns_request = wall.elapsed().as_nanos() as f64 / requests as f64;
    let links = router.table.links_held();
    let bytes = router.table.memory_bytes();
    let refreshes = router.table.stats.refreshes_sent;
    let wall = WallInstant::now();
    let mut copies = 0u64;
    for label in 0..c.labels {
        let mut p = src.reply(label, 1, label as u64);
        p.src = source;
        router.on_arrival(now, &mut p, None, &view);
        while router.poll_transmit().is_some() {
            copies += 1;
        }
    }
    let reply_ns = wall.elapsed().as_nanos() as f64;
    assert_eq!(router.table.len(), 0, "level-1 replies tear every breadcrumb down");
    assert_eq!(forwarded + suppressed, requests);
    format!(
        "{:>9} {:>7} {:>9.0} {:>10} {:>11} {:>9.1} {:>10.0} {:>10.0} {:>9} {:>9.1} {:>9} {:>9}",
        c.receivers,
        c.labels,
        c.rate,
        links,
        bytes,
        bytes as f64 / links.max(1) as f64,
        ns_request,
        reply_ns / c.labels as f64,
        copies,
        reply_ns / copies.max(1) as f64,
        forwarded,
        refreshes,
    )
}

fn main() {
    let only: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !only.is_empty() && !only.iter().any(|a| a == "bcfs") {
        return;
    }
    println!(
        "BCF router (castlab_proto::bcfs::BcfRouter): memory and processing per packet; load average {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "{:>9} {:>7} {:>9} {:>10} {:>11} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9}",
        "receivers",
        "labels",
        "req/s",
        "crumbs",
        "bytes",
        "B/crumb",
        "ns/request",
        "ns/reply",
        "copies",
        "ns/copy",
        "fwd",
        "refresh"
    );
    let mut cases = Vec::new();
    for &(receivers, labels) in &[(1, 10_000), (10, 10_000), (100, 1_000), (100, 10_000), (1_000, 1_000)] {
        for &rate in &[1_000.0, 10_000.0, 100_000.0] {
            cases.push(Case { receivers, labels, rate });
        }
    }
    for c in &cases {
        println!("{}", run(c));
    }
}
