//! The user-space multicast router: the real-network twin of the simulator's router node.
//!
//! One process per router namespace, kernel forwarding off. It reads every frame of its
//! interfaces through one AF_PACKET socket each and forwards by itself:
//! - **ARP** (RFC 826): it answers for its own addresses and resolves next hops by asking;
//!   it learns neighbours from the ARP it hears. (Dynamic rather than static neighbours: the
//!   hosts' kernels ARP for their gateway anyway, so the router must answer ARP in any case,
//!   and resolving its own next hops the same way needs nothing from the testbed.) A packet
//!   to a neighbour not yet resolved is dropped and counted, and a request is sent (at most
//!   one a second per neighbour).
//! - **IPv4 unicast** by longest-prefix match over the interfaces' links and static routes;
//!   TTL decrement and header checksum; no ICMP.
//! - **IGMP** ([`igmp`]): the querier of each link and its membership table; fast leave on
//!   point-to-point links, group-specific queries before pruning on a LAN. A message counts
//!   only if sent as RFC 3376 §4 and §9 say a host sends it (TTL 1, Router Alert, from an
//!   address on the link or 0.0.0.0); each table is capped (groups and sources per interface)
//!   and its per-report work does not grow with its size. Source-specific
//!   memberships of its links are relayed toward the source as a host would ask for them (a
//!   v3 ALLOW on the interface toward S, a BLOCK when the last member goes), so that a chain
//!   of routers builds the tree hop by hop, as the simulator's grafts do. Any-source
//!   memberships are relayed to every neighbour router (each interface a static route goes
//!   through a gateway on) but the members' own (split horizon): a `TO_EX{}` while some
//!   other interface has any-source members of the group, a `TO_IN{}` when the last goes.
//!   On the testbed's trees this builds one shared tree per group that reaches every member
//!   from every sender, once each: what the simulator gives any-source senders, whose
//!   packets climb to the group's root and come down its tree to every member. The router
//!   knows no group's root (the session table names one only when an extension is hosted),
//!   and grafting toward it alone would not carry a member's packets to the other branches
//!   without PIM-SM's register step; the flood needs neither, and costs one membership
//!   per router link and group. On a topology with cycles it would keep memberships alive
//!   around the cycle: the testbed's topologies are trees.
//! - **Multicast**: a packet from source S to group G arriving on the interface toward S
//!   (the reverse-path check) goes out of every other interface where a host asked for G
//!   from any source or from S: source-specific trees on reverse shortest paths, as in the
//!   simulator. Link-local groups (224.0.0.0/24) are never forwarded.
//! - **Output** ([`port`]): per interface a bounded DropTail or RED queue (castlab-core's,
//!   the simulator's very code) drained at the link's rate, then a delay line.
//! - **Extensions**: a `castlab_core::RouterExtension` is hosted as the simulator hosts it:
//!   castlab datagrams of the configured session are opened (the host driver's envelope) and
//!   shown to `on_arrival` and, per output interface, `on_forward`; a verdict drops or
//!   consumes, a rewritten packet is sealed again; `poll_transmit`'s `RouterSend`s are sent,
//!   `poll_timeout`'s deadline runs `handle_timeout`; [`NetView`] reads the ports' exact
//!   queue lengths. Interface i is `ChannelId(i)`. A `RouterSend::Via(i, p)` copy goes to the
//!   neighbour on interface i, as the simulator's channel delivers it to the next node: when
//!   `p`'s destination is not routed out of i, the copy is addressed to that neighbour (the
//!   interface's `peer`, or the one neighbour heard there), its `dst` node rewritten. On a
//!   shared LAN (`lan`, no `peer`) every host the session lists on the link gets a copy
//!   addressed to it ([`Router::via_lan`]).
//!
//! Bad input never panics: every frame the router cannot use is counted under its reason
//! ([`RouterStats`]), as the host driver counts datagrams.

pub mod config;
mod drain;
pub mod frame;
pub mod igmp;
pub mod port;
pub mod sys;

use std::collections::HashMap;
use std::io;
use std::net::Ipv4Addr;
use std::time::{SystemTime, UNIX_EPOCH};

use castlab_core::queue::Admit;
use castlab_core::{
    ChannelId, Dest, GroupId, Instant, NetView, NodeId, Packet, Rng, RouterExtension, RouterSend, StreamKind, Verdict,
};

use crate::envelope::{Envelope, Reject, MAGIC};
pub use config::{IfaceConfig, RouterConfig, RouterSession};
pub use drain::DrainReport;
use frame::{FrameError, Igmp, Ipv4, Mac, Parsed, ETH_HDR, PROTO_IGMP, PROTO_UDP, UDP_HDR};
use igmp::{Change, IgmpDrops, Membership, QueryOut};
use port::{Port, PortStats, SLOT};
use sys::PacketSocket;

/// At most this many frames are read from one interface per loop turn, so that a flood on
/// one cannot starve the others or the timers.
const READS_PER_TURN: usize = 2 * sys::BATCH;
/// One receive buffer: a frame of the largest MTU the router accepts (`SLOT`); a longer one
/// is cut, and counted as `oversize` by its real length, which the kernel reports.
const RX_BUF: usize = SLOT;
/// TTL of the unicast packets an extension sends.
const UNICAST_TTL: u8 = 64;
/// Frames held while their next hop's address is resolved (as a host's ARP queue holds them),
/// at most this many in all, each at most `HOLD_FOR`; beyond either they are dropped and
/// counted as `no_neighbour`.
const MAX_HELD: usize = 64;
const HOLD_FOR: castlab_core::Duration = castlab_core::Duration::from_secs(3);
/// How often every relayed membership is sent again (the upstream router's membership lasts
/// its membership interval, 260 s by default). A change is relayed when it happens.
const RELAY_REFRESH: castlab_core::Duration = castlab_core::Duration::from_secs(20);
/// Relayed memberships the router has room for before its table grows: (interface, group,
/// source) entries, each from at least one membership of another interface.
const RELAY_PREALLOC_MAX: usize = 1 << 16;

/// Errors starting or running the router. Each names what it concerns.
#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    #[error(transparent)]
    Config(#[from] config::ConfigErr),
    /// A safety check refused to start.
    #[error("refusing to start: {0}")]
    Refused(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> RouterError {
    let what = what.into();
    move |source| RouterError::Io { what, source }
}

/// Router-wide counters: what came in and was not forwarded, by reason, and the control plane.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouterStats {
    /// Frames the parser refused, by [`FrameError`] (index `FrameError as usize`).
    pub frame_errors: [u64; 9],
    /// Frames longer than the interface's MTU allows (a segmentation offload left on).
    pub oversize: u64,
    /// Frames of another EtherType (IPv6, LLDP...).
    pub other_ethertype: u64,
    /// Unicast frames for another host's MAC address.
    pub not_for_us: u64,
    /// Transport checksums filled in for frames a sender's offload left partial.
    pub csum_filled: u64,
    /// Sources that cannot be: multicast, broadcast, unspecified, loopback.
    pub martian: u64,
    pub ttl_expired: u64,
    pub no_route: u64,
    /// Packets whose next hop's MAC address did not come in time (an ARP request went out;
    /// the packet was held up to 3 s, at most 64 at once).
    pub no_neighbour: u64,
    /// Packets held while their next hop was resolved, then sent.
    pub arp_held: u64,
    /// Unicast packets for the router itself that no extension consumed, and broadcasts.
    pub local: u64,
    /// Multicast packets that failed the reverse-path check (not from the interface toward
    /// their source).
    pub rpf_fail: u64,
    /// Multicast packets no interface wanted, and link-local ones (never forwarded).
    pub mc_no_members: u64,
    pub mc_link_local: u64,
    /// Packets forwarded (a multicast packet counts once per output interface).
    pub forwarded: u64,
    pub arp_replies_sent: u64,
    pub arp_requests_sent: u64,
    pub arp_learned: u64,
    pub igmp_reports: u64,
    pub igmp_leaves: u64,
    pub igmp_queries_heard: u64,
    pub igmp_queries_sent: u64,
    /// IGMP messages ignored for failing RFC 3376's checks on how they are sent (§4: "sent
    /// with an IP Time-to-Live of 1 ... and carries an IP Router Alert option"; §9.2, §9.3:
    /// ignore a report whose source is not on the receiving interface's subnet, 0.0.0.0
    /// excepted): a TTL other than 1, no Router Alert, a source off the link.
    pub igmp_bad_ttl: u64,
    pub igmp_no_router_alert: u64,
    pub igmp_off_link: u64,
    /// Reports, or parts of them, the membership tables did not apply (full, a source that
    /// cannot be, a link-local group, a group outside 239.0.0.0/8).
    pub igmp_drops: IgmpDrops,
    /// Joins and leaves relayed to neighbour routers: source-specific (ALLOW, BLOCK toward
    /// the source) and any-source (TO_EX{}, TO_IN{} to every neighbour router).
    pub igmp_relayed_joins: u64,
    pub igmp_relayed_leaves: u64,
    /// castlab datagrams of the session dropped by the envelope's checks, by [`Reject`].
    pub rejected: [u64; 7],
    /// castlab datagrams shown to the extension; its verdicts on arrival.
    pub ext_seen: u64,
    pub ext_consumed: u64,
    pub ext_drops: u64,
    /// Packets the extension sent, and those that could not be sent (unknown destination,
    /// bad channel, no route, too large).
    pub ext_sent: u64,
    pub ext_send_errors: u64,
    pub ext_timer_fires: u64,
    /// Receive errors other than "nothing to read".
    pub recv_errors: u64,
    /// With [`Router::set_extension_timing`] on: calls into the hosted extension and the
    /// nanoseconds spent inside them (CLOCK_MONOTONIC), by kind: `on_arrival`; `on_forward`
    /// (the router's forwarding and the extension's own sends); `handle_timeout` with the
    /// `poll_timeout` check before it; `poll_transmit` and `poll_timeout` after each event
    /// (collecting its sends). Only the extension's code is inside; the router's building and
    /// queueing of the frames it sends is not.
    pub ext_arrival_calls: u64,
    pub ext_arrival_ns: u64,
    pub ext_forward_calls: u64,
    pub ext_forward_ns: u64,
    pub ext_timer_calls: u64,
    pub ext_timer_ns: u64,
    pub ext_poll_calls: u64,
    pub ext_poll_ns: u64,
}

impl RouterStats {
    /// Every counter as (name, value), in a fixed order.
    pub fn pairs(&self) -> Vec<(&'static str, u64)> {
        let mut v = Vec::new();
        for e in FrameError::ALL {
            v.push((e.name(), self.frame_errors[e as usize]));
        }
        v.extend([
            ("oversize", self.oversize),
            ("other_ethertype", self.other_ethertype),
            ("not_for_us", self.not_for_us),
            ("csum_filled", self.csum_filled),
            ("martian", self.martian),
            ("ttl_expired", self.ttl_expired),
            ("no_route", self.no_route),
            ("no_neighbour", self.no_neighbour),
            ("arp_held", self.arp_held),
            ("local", self.local),
            ("rpf_fail", self.rpf_fail),
            ("mc_no_members", self.mc_no_members),
            ("mc_link_local", self.mc_link_local),
            ("forwarded", self.forwarded),
            ("arp_replies_sent", self.arp_replies_sent),
            ("arp_requests_sent", self.arp_requests_sent),
            ("arp_learned", self.arp_learned),
            ("igmp_reports", self.igmp_reports),
            ("igmp_leaves", self.igmp_leaves),
            ("igmp_queries_heard", self.igmp_queries_heard),
            ("igmp_queries_sent", self.igmp_queries_sent),
            ("igmp_bad_ttl", self.igmp_bad_ttl),
            ("igmp_no_router_alert", self.igmp_no_router_alert),
            ("igmp_off_link", self.igmp_off_link),
            ("igmp_groups_full", self.igmp_drops.groups_full),
            ("igmp_sources_full", self.igmp_drops.sources_full),
            ("igmp_bad_source", self.igmp_drops.bad_source),
            ("igmp_link_local", self.igmp_drops.link_local),
            ("igmp_out_of_scope", self.igmp_drops.out_of_scope),
            ("igmp_relayed_joins", self.igmp_relayed_joins),
            ("igmp_relayed_leaves", self.igmp_relayed_leaves),
        ]);
        for r in Reject::ALL {
            v.push((r.name(), self.rejected[r as usize]));
        }
        v.extend([
            ("ext_seen", self.ext_seen),
            ("ext_consumed", self.ext_consumed),
            ("ext_drops", self.ext_drops),
            ("ext_sent", self.ext_sent),
            ("ext_send_errors", self.ext_send_errors),
            ("ext_timer_fires", self.ext_timer_fires),
            ("recv_errors", self.recv_errors),
            ("ext_arrival_calls", self.ext_arrival_calls),
            ("ext_arrival_ns", self.ext_arrival_ns),
            ("ext_forward_calls", self.ext_forward_calls),
            ("ext_forward_ns", self.ext_forward_ns),
            ("ext_timer_calls", self.ext_timer_calls),
            ("ext_timer_ns", self.ext_timer_ns),
            ("ext_poll_calls", self.ext_poll_calls),
            ("ext_poll_ns", self.ext_poll_ns),
        ]);
        v
    }
}

impl PortStats {
    /// Every counter as (name, value), in a fixed order.
    pub fn pairs(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("rx_frames", self.rx_frames),
            ("rx_bytes", self.rx_bytes),
            ("rx_kernel_drops", self.rx_kernel_drops),
            ("arrivals", self.arrivals),
            ("enqueued", self.enqueued),
            ("marked", self.marked),
            ("drops_forced", self.drops_forced),
            ("drops_early", self.drops_early),
            ("drops_delay_line", self.drops_delay_line),
            ("drops_ext", self.drops_ext),
            ("departures", self.departures),
            ("bytes_departed", self.bytes_departed),
            ("tx_frames", self.tx_frames),
            ("tx_bytes", self.tx_bytes),
            ("tx_errors", self.tx_errors),
            ("late_total_ns", self.late_total_ns),
            ("late_max_ns", self.late_max_ns),
        ]
    }
}

/// A membership relayed to a neighbour router: (interface, group, source; None: any source).
type Relayed = (usize, Ipv4Addr, Option<Ipv4Addr>);

/// A route: a prefix, the output interface, and the gateway (None: on the link).
#[derive(Clone, Copy, Debug)]
struct RouteEntry {
    net: Ipv4Addr,
    len: u8,
    port: usize,
    via: Option<Ipv4Addr>,
}

#[derive(Clone, Copy, Debug)]
struct Neighbour {
    ip: Ipv4Addr,
    mac: Mac,
    port: usize,
}

/// A frame built in `slot` of `port`, waiting for the MAC address of `hop`.
#[derive(Clone, Copy, Debug)]
struct Held {
    port: usize,
    hop: Ipv4Addr,
    slot: u32,
    len: usize,
    since: Instant,
}

struct ExtSlot {
    ext: Box<dyn RouterExtension + Send>,
    armed: Option<Instant>,
}

/// Which extension call a timed section is, for [`RouterStats`]' `ext_*_ns` counters.
#[derive(Clone, Copy)]
enum ExtCall {
    Start,
    Arrival,
    Forward,
    Timer,
}

/// What an extension reads of the router. Channel i is interface i.
struct View<'a> {
    node: NodeId,
    ports: &'a [Port],
    channels: &'a [ChannelId],
    routes: &'a [RouteEntry],
    session: Option<&'a RouterSession>,
}

fn lookup(routes: &[RouteEntry], ip: Ipv4Addr) -> Option<(usize, Ipv4Addr)> {
    // routes are sorted longest prefix first
    routes.iter().find(|r| config::prefix_contains(r.net, r.len, ip)).map(|r| (r.port, r.via.unwrap_or(ip)))
}

impl NetView for View<'_> {
    fn node(&self) -> NodeId {
        self.node
    }
    fn out_channels(&self) -> &[ChannelId] {
        self.channels
    }
    fn channel_peer(&self, ch: ChannelId) -> NodeId {
        self.ports.get(ch.index()).and_then(|p| p.cfg.peer).unwrap_or(NodeId(u32::MAX))
    }
    fn reverse_channel(&self, ch: ChannelId) -> Option<ChannelId> {
        // Here a channel names one of the router's own interfaces, both ways: a packet that
        // arrived `from` interface i goes back to its neighbour out of interface i. (The
        // simulator's channels are one-way and global, so there the two differ.) An extension
        // that answers a request hop by hop finds the link back to its sender this way.
        (ch.index() < self.ports.len()).then_some(ch)
    }
    fn queue_len_pkts(&self, ch: ChannelId) -> usize {
        self.ports.get(ch.index()).map_or(0, |p| p.queue_len())
    }
    fn queue_avg_pkts(&self, ch: ChannelId) -> f64 {
        self.ports.get(ch.index()).map_or(0.0, |p| p.queue_avg())
    }
    fn queue_limit_pkts(&self, ch: ChannelId) -> usize {
        self.ports.get(ch.index()).map_or(0, |p| p.queue_limit())
    }
    fn channel_rate_bps(&self, ch: ChannelId) -> u64 {
        self.ports.get(ch.index()).map_or(0, |p| p.cfg.rate_bps)
    }
    fn route_channel(&self, dst: NodeId) -> Option<ChannelId> {
        let ip = self.session?.table.node(dst)?;
        if self.ports.iter().any(|p| p.cfg.addr == ip) {
            return None;
        }
        lookup(self.routes, ip).map(|(p, _)| ChannelId(p as u32))
    }
    fn group_source(&self, group: GroupId) -> Option<NodeId> {
        self.session?.table.group(group)?.source
    }
}

/// The castlab packet a frame carries, while the router handles it.
#[derive(Clone, Copy)]
struct Opened {
    pkt: Packet,
    /// The packet as it arrived (local time), to see whether an extension rewrote it.
    orig: Packet,
    /// Where its application bytes are in `Router::rx` (start, end); empty when none.
    app: (usize, usize),
}

/// The router. See the module documentation.
pub struct Router {
    cfg: RouterConfig,
    ports: Vec<Port>,
    pollfds: Vec<libc::pollfd>,
    channels: Vec<ChannelId>,
    routes: Vec<RouteEntry>,
    neighbours: Vec<Neighbour>,
    /// Neighbours asked for: (ip, port, when the last request went out).
    asked: Vec<(Ipv4Addr, usize, Instant)>,
    held: Vec<Held>,
    clock0: std::time::Instant,
    epoch_ns: u64,
    /// The frame being handled, and the buffers of the next receive batch.
    rx: Box<[u8]>,
    rx_batch: Vec<Box<[u8]>>,
    rx_info: Vec<sys::RecvInfo>,
    envelope: Option<Envelope>,
    ext: Option<ExtSlot>,
    /// The frame being handled carries application bytes: its packet's uid and where they are
    /// in `rx`. A packet an extension sends while handling it with the same uid is a copy of
    /// it (a BCF reply's copies down the breadcrumbs) and carries the same bytes.
    cur_app: Option<(u64, usize, usize)>,
    next_uid: u64,
    queries: Vec<QueryOut>,
    /// (interface, group, S) relayed to the neighbour router on the interface (S None: an
    /// any-source membership), with the number of memberships of other interfaces that want
    /// it; a scratch list for the refresh; the membership changes being relayed.
    relayed: HashMap<Relayed, u32>,
    relay_scratch: Vec<Relayed>,
    changes: Vec<Change>,
    /// Whether a static route goes through a gateway on interface i: a neighbour router.
    router_link: Vec<bool>,
    relay_next: Instant,
    stats: RouterStats,
    last_error: Option<String>,
    /// Time the frames' transit through the router (ports' `transit`).
    transit_on: bool,
    /// For the frame being handled: ns since the kernel received it.
    cur_wait: u64,
    /// Time the extension's calls (`ext_*_ns`).
    ext_timing: bool,
    /// Wake this long before a port's deadline and poll without sleeping until it (ns).
    spin_ns: u64,
}

impl Router {
    /// Check the safety rules and open the interfaces. Refuses to start outside a namespace
    /// made with `ip netns` (so never in the host's own), with kernel IPv4 forwarding on in
    /// this one (both would forward),
    /// or on an interface that is not a veth (unless `require_veth` is off).
    pub fn new(cfg: RouterConfig) -> Result<Self, RouterError> {
        cfg.validate()?;
        match sys::netns_name() {
            Ok(Some(_)) => {}
            Ok(None) => {
                return Err(RouterError::Refused(
                    "this is not a namespace made with `ip netns` (the host's own network namespace?): run the \
                     router inside a testbed namespace (ip netns exec NAME ...)"
                        .into(),
                ))
            }
            Err(e) => return Err(RouterError::Refused(format!("cannot tell the network namespace: {e}"))),
        }
        let fwd = std::fs::read_to_string("/proc/sys/net/ipv4/ip_forward").map_err(io_err("reading ip_forward"))?;
        if fwd.trim() != "0" {
            return Err(RouterError::Refused(
                "net.ipv4.ip_forward is on in this namespace: the kernel would forward too (set it to 0)".into(),
            ));
        }
        let now0 = std::time::Instant::now();
        let mut ports = Vec::with_capacity(cfg.ifaces.len());
        for (i, f) in cfg.ifaces.iter().enumerate() {
            if cfg.require_veth {
                // an interface without a driver to name (lo) is not a veth either
                let d = match sys::driver_name(&f.name) {
                    Ok(d) => d,
                    Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => "device without a driver".into(),
                    Err(e) => return Err(RouterError::Io { what: format!("interface {}", f.name), source: e }),
                };
                if d != "veth" {
                    return Err(RouterError::Refused(format!(
                        "interface {} is a {d}, not one of the testbed's veths",
                        f.name
                    )));
                }
            }
            let sock = PacketSocket::open(&f.name, cfg.socket_buffer_bytes)
                .map_err(io_err(format!("interface {}", f.name)))?;
            let mac = sys::mac_address(&f.name).map_err(io_err(format!("{}: MAC address", f.name)))?;
            let mtu = sys::mtu(&f.name).map_err(io_err(format!("{}: MTU", f.name)))?;
            if mtu as usize + ETH_HDR > SLOT {
                return Err(RouterError::Refused(format!("{}: MTU {mtu} is above {}", f.name, SLOT - ETH_HDR)));
            }
            let m = Membership::new(!f.lan, &cfg.igmp, Instant::ZERO);
            let rng = Rng::stream(cfg.seed, StreamKind::Channel, i as u64);
            ports.push(Port::new(f.clone(), sock, mac, mtu, m, rng, cfg.queue_avg_weight));
        }
        let mut routes: Vec<RouteEntry> = cfg
            .ifaces
            .iter()
            .enumerate()
            .map(|(i, f)| RouteEntry { net: f.addr, len: f.prefix_len, port: i, via: None })
            .collect();
        for r in &cfg.routes {
            let (port, via) = match &r.via {
                config::RouteVia::Gateway(g) => (cfg.ifaces.iter().position(|f| f.contains(*g)), Some(*g)),
                config::RouteVia::Dev(d) => (cfg.ifaces.iter().position(|f| &f.name == d), None),
            };
            routes.push(RouteEntry { net: r.dst, len: r.prefix_len, port: port.expect("validated"), via });
        }
        routes.sort_by_key(|r| std::cmp::Reverse(r.len));
        let router_link = (0..ports.len()).map(|i| routes.iter().any(|r| r.port == i && r.via.is_some())).collect();
        let pollfds = ports
            .iter()
            .map(|p| libc::pollfd { fd: std::os::fd::AsRawFd::as_raw_fd(&p.sock), events: libc::POLLIN, revents: 0 })
            .collect();
        let envelope = cfg.session.as_ref().map(|s| Envelope::new(s.net.session_id, s.net.key.as_deref()));
        let (ng, ns) = (cfg.igmp.max_groups, cfg.igmp.max_sources);
        let n = ports.len();
        // each router link may carry every other interface's groups, and one entry per
        // source-specific membership toward its source
        let relay_cap = (n * n * ng + n * ns).min(RELAY_PREALLOC_MAX);
        let epoch_ns = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
        sys::set_timer_slack(1_000);
        Ok(Router {
            channels: (0..ports.len() as u32).map(ChannelId).collect(),
            ports,
            pollfds,
            routes,
            neighbours: Vec::with_capacity(64),
            asked: Vec::with_capacity(64),
            held: Vec::with_capacity(MAX_HELD),
            clock0: now0,
            epoch_ns,
            rx: vec![0u8; RX_BUF].into_boxed_slice(),
            rx_batch: (0..sys::BATCH).map(|_| vec![0u8; RX_BUF].into_boxed_slice()).collect(),
            rx_info: vec![sys::RecvInfo::default(); sys::BATCH],
            envelope,
            ext: None,
            cur_app: None,
            next_uid: 0,
            queries: Vec::with_capacity(ng + 1),
            relayed: HashMap::with_capacity(2 * relay_cap),
            relay_scratch: Vec::with_capacity(relay_cap),
            changes: Vec::with_capacity(igmp::change_capacity(&cfg.igmp)),
            router_link,
            relay_next: Instant::ZERO + RELAY_REFRESH,
            stats: RouterStats::default(),
            last_error: None,
            transit_on: false,
            cur_wait: 0,
            ext_timing: false,
            spin_ns: 0,
            cfg,
        })
    }

    /// Host an extension: started now with `Rng::stream(seed, Extension, node)` as in the
    /// simulator. Needs a session (the extension sees castlab packets only).
    pub fn set_extension(&mut self, ext: Box<dyn RouterExtension + Send>) -> Result<(), RouterError> {
        if self.cfg.session.is_none() {
            return Err(config::ConfigErr {
                field: "session".into(),
                value: "none".into(),
                reason: "an extension needs the castlab session whose packets it sees".into(),
            }
            .into());
        }
        if self.ext.is_some() {
            return Err(config::ConfigErr {
                field: "extension".into(),
                value: "a second".into(),
                reason: "the router hosts one extension".into(),
            }
            .into());
        }
        self.ext = Some(ExtSlot { ext, armed: None });
        let now = self.now();
        let rng = Rng::stream(self.cfg.seed, StreamKind::Extension, self.cfg.node.0 as u64);
        self.with_ext(now, ExtCall::Start, |ext, view| ext.handle_start(now, rng, view));
        self.drive_ext(now);
        Ok(())
    }

    /// Time every forwarded frame's transit through the router: the kernel stamps each
    /// received frame (`SO_TIMESTAMPNS` on the packet sockets) and each output port keeps a
    /// histogram of the router-only added latency ([`port::Port::transit`]). Off by default:
    /// it costs two clock reads per receive batch and one per send batch.
    pub fn set_transit_timing(&mut self, on: bool) -> Result<(), RouterError> {
        for p in self.ports.iter_mut() {
            p.sock.set_timestamps(on).map_err(io_err(format!("{}: SO_TIMESTAMPNS", p.cfg.name)))?;
            p.set_transit(on.then_some(self.clock0));
        }
        self.transit_on = on;
        self.cur_wait = 0;
        Ok(())
    }

    /// Interface i's transit histogram (router-only added latency of the frames it sent,
    /// ns), with [`Router::set_transit_timing`] on.
    pub fn transit(&self, i: usize) -> Option<&port::LatencyHist> {
        self.ports[i].transit()
    }

    /// Interface i's lateness histogram (the part of [`Router::transit`] after the frames'
    /// due time, ns), with [`Router::set_transit_timing`] on.
    pub fn transit_late(&self, i: usize) -> Option<&port::LatencyHist> {
        self.ports[i].transit_late()
    }

    /// Empty every interface's transit histogram.
    pub fn clear_transit(&mut self) {
        for p in self.ports.iter_mut() {
            p.clear_transit();
        }
    }

    /// Wake `ns` before each deadline (a frame due out of the delay line, the end of a
    /// serialisation, a timer) and poll the sockets without sleeping until it comes, so
    /// that the hand-over is not as late as the kernel's timer wake-up. At most `ns` of busy
    /// polling per deadline; 0 (the default) sleeps until the deadline. Limited to 1 ms.
    pub fn set_spin(&mut self, ns: u64) {
        self.spin_ns = ns.min(1_000_000);
    }

    /// Count the hosted extension's calls and the time spent inside them (`ext_*_calls`,
    /// `ext_*_ns` in [`RouterStats`]). The clock is CLOCK_MONOTONIC, read through the vDSO
    /// (tens of ns a read); CLOCK_THREAD_CPUTIME_ID would leave out time the thread was
    /// preempted, but each read is a system call costing about as much as the calls timed.
    /// Off by default: the normal path reads no clock for it.
    pub fn set_extension_timing(&mut self, on: bool) {
        self.ext_timing = on;
    }

    /// The hosted extension as its concrete type.
    pub fn extension<T: 'static>(&self) -> Option<&T> {
        self.extension_any().and_then(|x| x.downcast_ref::<T>())
    }

    /// The hosted extension, for a reader that downcasts it.
    pub fn extension_any(&self) -> Option<&dyn core::any::Any> {
        self.ext.as_ref().map(|x| x.ext.as_any())
    }

    /// Wall-clock time since the router was created.
    pub fn now(&self) -> Instant {
        Instant::from_nanos(self.clock0.elapsed().as_nanos() as u64)
    }
    pub fn config(&self) -> &RouterConfig {
        &self.cfg
    }
    pub fn stats(&self) -> &RouterStats {
        &self.stats
    }
    pub fn port_count(&self) -> usize {
        self.ports.len()
    }
    pub fn port_name(&self, i: usize) -> &str {
        &self.ports[i].cfg.name
    }
    pub fn port_stats(&self, i: usize) -> &PortStats {
        &self.ports[i].stats
    }
    pub fn queue_len(&self, i: usize) -> usize {
        self.ports[i].queue_len()
    }
    pub fn queue_avg(&self, i: usize) -> f64 {
        self.ports[i].queue_avg()
    }
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
    /// The groups with members on interface i: (group, any-source, number of sources), in
    /// address order; at most the configured `max_groups`.
    pub fn members(&self, i: usize) -> Vec<(Ipv4Addr, bool, usize)> {
        self.ports[i].membership.groups()
    }
    /// Interface i's groups with members and source-specific memberships, counted.
    pub fn member_counts(&self, i: usize) -> (usize, usize) {
        let m = &self.ports[i].membership;
        (m.group_count(), m.source_count())
    }
    /// Neighbours learnt: (address, MAC, interface).
    pub fn neighbours(&self) -> Vec<(Ipv4Addr, Mac, usize)> {
        self.neighbours.iter().map(|n| (n.ip, n.mac, n.port)).collect()
    }

    /// Every counter, as `tc -s qdisc` and `ip -s link` would show them, as text.
    pub fn stats_text(&self) -> String {
        let mut s = String::new();
        for p in &self.ports {
            s.push_str(&p.tc_text());
            if let (Some(h), Some(l)) = (p.transit(), p.transit_late()) {
                s.push_str(&format!(
                    " transit (router only) frames {} p50 {:.1}us p99 {:.1}us max {:.1}us; of it late after due \
                     p50 {:.1}us p99 {:.1}us\n",
                    h.count(),
                    h.quantile(0.5) as f64 / 1e3,
                    h.quantile(0.99) as f64 / 1e3,
                    h.max() as f64 / 1e3,
                    l.quantile(0.5) as f64 / 1e3,
                    l.quantile(0.99) as f64 / 1e3,
                ));
            }
        }
        s.push_str("router");
        for (k, v) in self.stats.pairs() {
            if v != 0 {
                s.push_str(&format!(" {k} {v}"));
            }
        }
        s.push('\n');
        s
    }

    fn with_ext<R>(
        &mut self,
        now: Instant,
        call: ExtCall,
        f: impl FnOnce(&mut dyn RouterExtension, &View) -> R,
    ) -> Option<R> {
        let x = self.ext.as_mut()?;
        for p in self.ports.iter_mut() {
            p.advance(now);
        }
        let view = View {
            node: self.cfg.node,
            ports: &self.ports,
            channels: &self.channels,
            routes: &self.routes,
            session: self.cfg.session.as_ref(),
        };
        if !self.ext_timing {
            return Some(f(x.ext.as_mut(), &view));
        }
        let t0 = std::time::Instant::now();
        let r = f(x.ext.as_mut(), &view);
        let ns = t0.elapsed().as_nanos() as u64;
        let s = &mut self.stats;
        let (calls, total) = match call {
            ExtCall::Start => return Some(r),
            ExtCall::Arrival => (&mut s.ext_arrival_calls, &mut s.ext_arrival_ns),
            ExtCall::Forward => (&mut s.ext_forward_calls, &mut s.ext_forward_ns),
            ExtCall::Timer => (&mut s.ext_timer_calls, &mut s.ext_timer_ns),
        };
        *calls += 1;
        *total += ns;
        Some(r)
    }

    /// Run until the wall clock reaches `until`, or until a signal interrupts the wait
    /// (returns early, so that the caller can look at it).
    pub fn run_until(&mut self, until: Instant) -> Result<(), RouterError> {
        loop {
            let now = self.now();
            self.run_timers(now);
            let now = self.now();
            if now >= until {
                for p in self.ports.iter_mut() {
                    p.read_kernel_drops();
                }
                return Ok(());
            }
            let next = self.next_deadline();
            let mut timeout = next.min(until).saturating_since(now).as_nanos();
            if self.spin_ns > 0 && next <= until {
                // wake early for the deadline, then poll without sleeping
                timeout = timeout.saturating_sub(self.spin_ns);
            }
            match sys::ppoll(&mut self.pollfds, Some(timeout)) {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(e) => return Err(RouterError::Io { what: "ppoll".into(), source: e }),
            }
            for i in 0..self.ports.len() {
                if self.pollfds[i].revents & (libc::POLLIN | libc::POLLERR) != 0 {
                    self.read_port(i);
                }
            }
        }
    }

    fn next_deadline(&self) -> Instant {
        let mut t = Instant::MAX;
        for p in &self.ports {
            if let Some(d) = p.next_deadline() {
                t = t.min(d);
            }
            t = t.min(p.membership.next_deadline());
        }
        if let Some(a) = self.ext.as_ref().and_then(|x| x.armed) {
            t = t.min(a);
        }
        if let Some(h) = self.held.first() {
            t = t.min(h.since + HOLD_FOR);
        }
        t.min(self.relay_next)
    }

    /// Relay the membership changes of interface `j` (in `self.changes`) to the neighbour
    /// routers: a source-specific (S, G) toward S (an ALLOW when the first interface wants it,
    /// a BLOCK when the last no longer does); an any-source G on every other router link (a
    /// `TO_EX{}`, then a `TO_IN{}`). A source on one of the router's own links needs no relay
    /// (no router stands between); link-local groups stay on their link. The work is per
    /// change, whatever the size of the tables.
    fn relay_changes(&mut self, j: usize) {
        let changes = std::mem::take(&mut self.changes);
        for c in &changes {
            match c.source {
                None => {
                    let o = c.group.octets();
                    if o[0] == 224 && o[1] == 0 && o[2] == 0 {
                        continue;
                    }
                    for up in 0..self.ports.len() {
                        if up != j && self.router_link[up] {
                            self.relay_ref((up, c.group, None), c.added);
                        }
                    }
                }
                Some(s) => {
                    let Some((up, _)) = lookup(&self.routes, s) else { continue };
                    if up == j || self.ports[up].cfg.contains(s) {
                        continue;
                    }
                    self.relay_ref((up, c.group, Some(s)), c.added);
                }
            }
        }
        self.changes = changes;
        self.changes.clear();
    }

    /// One more (or one fewer) membership wants `r` relayed: the first sends the join, the
    /// last going sends the leave.
    fn relay_ref(&mut self, r: Relayed, added: bool) {
        if added {
            let n = self.relayed.entry(r).or_insert(0);
            *n += 1;
            if *n == 1 {
                let kind = if r.2.is_some() { frame::ALLOW_NEW_SOURCES } else { frame::CHANGE_TO_EXCLUDE };
                self.send_report(r, kind, true);
            }
        } else if let Some(n) = self.relayed.get_mut(&r) {
            *n -= 1;
            if *n == 0 {
                self.relayed.remove(&r);
                let kind = if r.2.is_some() { frame::BLOCK_OLD_SOURCES } else { frame::CHANGE_TO_INCLUDE };
                self.send_report(r, kind, false);
            }
        }
    }

    /// Send every relayed membership again, before the upstream router's timer ends it.
    fn refresh_relays(&mut self) {
        let mut all = std::mem::take(&mut self.relay_scratch);
        all.clear();
        all.extend(self.relayed.keys().copied());
        for &r in &all {
            let kind = if r.2.is_some() { frame::ALLOW_NEW_SOURCES } else { frame::CHANGE_TO_EXCLUDE };
            self.send_report(r, kind, true);
        }
        self.relay_scratch = all;
    }

    fn send_report(&mut self, (port, group, source): Relayed, kind: u8, join: bool) {
        let Some(s) = self.ports[port].alloc() else { return };
        let (mac, me) = (self.ports[port].mac, self.ports[port].cfg.addr);
        let n = frame::write_report(self.ports[port].slot_mut(s), mac, me, kind, group, source);
        if self.ports[port].send_now(s, n).is_ok() {
            if join {
                self.stats.igmp_relayed_joins += 1;
            } else {
                self.stats.igmp_relayed_leaves += 1;
            }
        }
    }

    fn run_timers(&mut self, now: Instant) {
        if now >= self.relay_next {
            self.relay_next = now + RELAY_REFRESH;
            self.refresh_relays();
        }
        let mut k = 0;
        while k < self.held.len() {
            let h = self.held[k];
            if now.saturating_since(h.since) >= HOLD_FOR {
                self.held.swap_remove(k);
                self.ports[h.port].release(h.slot);
                self.stats.no_neighbour += 1;
            } else {
                k += 1;
            }
        }
        for i in 0..self.ports.len() {
            self.ports[i].poll(now);
            self.queries.clear();
            let mut q = std::mem::take(&mut self.queries);
            self.ports[i].membership.poll(now, &self.cfg.igmp, &mut q);
            for &query in &q {
                self.send_query(i, query);
            }
            self.queries = q;
            self.ports[i].membership.take_changes(&mut self.changes);
            if !self.changes.is_empty() {
                self.relay_changes(i);
            }
        }
        if let Some(a) = self.ext.as_ref().and_then(|x| x.armed) {
            if a <= now {
                self.ext.as_mut().expect("armed").armed = None;
                self.stats.ext_timer_fires += 1;
                self.cur_app = None;
                self.with_ext(now, ExtCall::Timer, |ext, v| {
                    if ext.poll_timeout().is_some_and(|t| t <= now) {
                        ext.handle_timeout(now, v)
                    }
                });
                self.drive_ext(now);
            }
        }
    }

    /// Read what waits on interface i, [`BATCH`] frames per `recvmmsg(2)`, at most
    /// `READS_PER_TURN` in all, and handle each frame in turn.
    fn read_port(&mut self, i: usize) {
        let mut read = 0;
        while read < READS_PER_TURN {
            let n = match self.ports[i].sock.recv_batch(&mut self.rx_batch, &mut self.rx_info) {
                Ok(0) => return,
                Ok(n) => n,
                Err(e) => {
                    self.stats.recv_errors += 1;
                    self.note_error(format!("{}: receive: {e}", self.ports[i].cfg.name));
                    return;
                }
            };
            read += n;
            // the wall clock less the router's clock, to place the kernel's receive stamps
            let real_minus_mono =
                if self.transit_on { sys::realtime_ns().wrapping_sub(self.now().as_nanos()) } else { 0 };
            for k in 0..n {
                let info = self.rx_info[k];
                if info.outgoing {
                    continue;
                }
                // the frame's buffer becomes `self.rx` (buffers are interchangeable)
                std::mem::swap(&mut self.rx, &mut self.rx_batch[k]);
                let now = self.now();
                if self.transit_on {
                    // 0 for a frame the kernel did not stamp (enabled after it was queued)
                    self.cur_wait = match info.rx_ns {
                        0 => 0,
                        rx => now.as_nanos().wrapping_add(real_minus_mono).saturating_sub(rx),
                    };
                }
                self.ports[i].stats.rx_frames += 1;
                self.ports[i].stats.rx_bytes += info.wire_len as u64;
                if info.truncated || info.wire_len > self.ports[i].mtu as usize + ETH_HDR {
                    self.stats.oversize += 1;
                    continue;
                }
                self.handle_frame(i, info.len, info.csum_partial, info.other_host, now);
            }
            if n < sys::BATCH {
                return;
            }
        }
        // more may be waiting: the next ppoll reports it at once
    }

    fn note_error(&mut self, e: String) {
        self.last_error = Some(e);
    }

    /// One frame of `len` bytes in `self.rx`, read on interface `i` at `now`.
    fn handle_frame(&mut self, i: usize, len: usize, csum_partial: bool, other_host: bool, now: Instant) {
        self.cur_app = None;
        self.handle_frame_inner(i, len, csum_partial, other_host, now);
        self.cur_app = None;
    }

    fn handle_frame_inner(&mut self, i: usize, len: usize, csum_partial: bool, other_host: bool, now: Instant) {
        let parsed = match frame::parse(&self.rx[..len]) {
            Ok(p) => p,
            Err(e) => {
                self.stats.frame_errors[e as usize] += 1;
                return;
            }
        };
        match parsed {
            Parsed::Other(_) => self.stats.other_ethertype += 1,
            Parsed::Arp(_, a) => self.handle_arp(i, a, now),
            Parsed::Ipv4(eth, ip) => {
                let for_us = eth.dst == self.ports[i].mac || eth.dst[0] & 1 == 1;
                if other_host || !for_us {
                    self.stats.not_for_us += 1;
                    return;
                }
                if csum_partial {
                    if !frame::fill_l4_checksum(&mut self.rx[..len], &ip) {
                        self.stats.frame_errors[FrameError::Truncated as usize] += 1;
                        return;
                    }
                    self.stats.csum_filled += 1;
                }
                let s = ip.src;
                // an IGMP report from 0.0.0.0 (a host without an address yet) is valid (RFC
                // 3376 §9.2)
                let unaddressed_igmp = s.is_unspecified() && ip.proto == PROTO_IGMP && ip.dst.is_multicast();
                if s.is_multicast() || s.is_broadcast() || (s.is_unspecified() && !unaddressed_igmp) || s.is_loopback()
                {
                    self.stats.martian += 1;
                    return;
                }
                if ip.dst.is_multicast() {
                    self.handle_multicast(i, ip, now);
                } else {
                    self.handle_unicast(i, ip, now);
                }
            }
        }
    }

    fn learn(&mut self, ip: Ipv4Addr, mac: Mac, port: usize) {
        if mac[0] & 1 == 1 || ip.is_unspecified() || !self.ports[port].cfg.contains(ip) {
            return;
        }
        match self.neighbours.iter_mut().find(|n| n.ip == ip && n.port == port) {
            Some(n) => n.mac = mac,
            None => {
                self.neighbours.push(Neighbour { ip, mac, port });
                self.stats.arp_learned += 1;
            }
        }
        self.asked.retain(|(a, p, _)| !(*a == ip && *p == port));
        let mut k = 0;
        while k < self.held.len() {
            let h = self.held[k];
            if h.port == port && h.hop == ip {
                self.held.swap_remove(k);
                self.ports[port].slot_mut(h.slot)[0..6].copy_from_slice(&mac);
                self.stats.arp_held += 1;
                let now = self.now();
                self.ports[port].enqueue(h.slot, h.len, h.len - ETH_HDR, now);
            } else {
                k += 1;
            }
        }
    }

    /// Hold a frame built in `slot` until `hop` is resolved (or drop it if too many wait).
    fn hold(&mut self, port: usize, hop: Ipv4Addr, slot: u32, len: usize, now: Instant) {
        if self.held.len() >= MAX_HELD {
            self.stats.no_neighbour += 1;
            self.ports[port].release(slot);
        } else {
            self.held.push(Held { port, hop, slot, len, since: now });
        }
        self.ask(port, hop, now);
    }

    fn handle_arp(&mut self, i: usize, a: frame::Arp, now: Instant) {
        let me = self.ports[i].cfg.addr;
        if a.tpa == me || a.op == 2 {
            self.learn(a.spa, a.sha, i);
        }
        if a.op == 1 && a.tpa == me {
            let Some(s) = self.ports[i].alloc() else { return };
            let mac = self.ports[i].mac;
            let n = frame::write_arp(self.ports[i].slot_mut(s), a.sha, 2, mac, me, a.sha, a.spa);
            if self.ports[i].send_now(s, n).is_ok() {
                self.stats.arp_replies_sent += 1;
            }
        }
        let _ = now;
    }

    /// Ask for `ip`'s MAC on interface `port` (at most once a second per neighbour).
    fn ask(&mut self, port: usize, ip: Ipv4Addr, now: Instant) {
        let second = castlab_core::Duration::from_secs(1);
        if let Some(e) = self.asked.iter_mut().find(|(a, p, _)| *a == ip && *p == port) {
            if now.saturating_since(e.2) < second {
                return;
            }
            e.2 = now;
        } else {
            self.asked.push((ip, port, now));
        }
        let Some(s) = self.ports[port].alloc() else { return };
        let (mac, me) = (self.ports[port].mac, self.ports[port].cfg.addr);
        let n = frame::write_arp(self.ports[port].slot_mut(s), frame::BROADCAST_MAC, 1, mac, me, [0; 6], ip);
        if self.ports[port].send_now(s, n).is_ok() {
            self.stats.arp_requests_sent += 1;
        }
    }

    fn neighbour(&self, port: usize, ip: Ipv4Addr) -> Option<Mac> {
        self.neighbours.iter().find(|n| n.ip == ip && n.port == port).map(|n| n.mac)
    }

    fn send_query(&mut self, i: usize, q: QueryOut) {
        let Some(s) = self.ports[i].alloc() else { return };
        let (mac, me) = (self.ports[i].mac, self.ports[i].cfg.addr);
        let igmp = &self.cfg.igmp;
        let (group, resp) = match q {
            QueryOut::General => (None, igmp.query_response_interval),
            QueryOut::Group(g) => (Some(g), igmp.last_member_query_interval),
        };
        let code = igmp.max_resp_code(resp);
        let qqic = igmp.query_interval.as_secs_f64().round().clamp(1.0, 127.0) as u8;
        let n = frame::write_query(self.ports[i].slot_mut(s), mac, me, group, code, qqic);
        if self.ports[i].send_now(s, n).is_ok() {
            self.stats.igmp_queries_sent += 1;
        }
    }

    fn handle_igmp(&mut self, i: usize, ip: Ipv4, now: Instant) {
        // RFC 3376 §4 (every IGMP message: TTL 1, Router Alert) and §9.2-9.3 (a report from
        // another subnet is ignored): a report from off the link, or one a router forwarded,
        // may not change the link's membership
        if ip.ttl != 1 {
            self.stats.igmp_bad_ttl += 1;
            return;
        }
        if !ip.router_alert {
            self.stats.igmp_no_router_alert += 1;
            return;
        }
        if !ip.src.is_unspecified() && !self.ports[i].cfg.contains(ip.src) {
            self.stats.igmp_off_link += 1;
            return;
        }
        let msg = match frame::parse_igmp(&self.rx, &ip) {
            Ok(m) => m,
            Err(e) => {
                self.stats.frame_errors[e as usize] += 1;
                return;
            }
        };
        let cfg = &self.cfg.igmp;
        let m = &mut self.ports[i].membership;
        let drops = &mut self.stats.igmp_drops;
        let mut query = None;
        match msg {
            Igmp::Query => self.stats.igmp_queries_heard += 1,
            Igmp::Report(g) => {
                self.stats.igmp_reports += 1;
                m.report(g, now, cfg, drops);
            }
            Igmp::Leave(g) => {
                self.stats.igmp_leaves += 1;
                query = m.leave_any_source(g, now, cfg);
            }
            Igmp::V3 { at, n, .. } => {
                self.stats.igmp_reports += 1;
                for r in frame::records(&self.rx, at, n) {
                    if let Some(q) = m.record(&self.rx, &r, now, cfg, drops) {
                        query = Some(q);
                    }
                }
            }
        }
        if let Some(q) = query {
            self.send_query(i, q);
        }
        self.ports[i].membership.take_changes(&mut self.changes);
        if !self.changes.is_empty() {
            self.relay_changes(i);
        }
    }

    /// Open a castlab datagram of the session, if this is one. `Err(())`: counted and dropped.
    fn open(&mut self, ip: &Ipv4) -> Result<Option<Opened>, ()> {
        if ip.proto != PROTO_UDP || ip.fragment {
            return Ok(None);
        }
        let udp = match frame::parse_udp(&self.rx, ip, false) {
            Ok(u) => u,
            Err(e) => {
                self.stats.frame_errors[e as usize] += 1;
                return Err(());
            }
        };
        let Some(env) = &self.envelope else { return Ok(None) };
        let payload = &self.rx[udp.payload.0..udp.payload.1];
        if payload.len() < 4 || payload[..4] != MAGIC {
            return Ok(None);
        }
        match env.open_parts(payload) {
            Ok(o) => {
                let mut p = o.packet;
                p.sent_at = Instant::from_nanos(p.sent_at.as_nanos().saturating_sub(self.epoch_ns));
                let app = (udp.payload.0 + o.app.start, udp.payload.0 + o.app.end);
                self.cur_app = (app.1 > app.0).then_some((p.uid, app.0, app.1));
                Ok(Some(Opened { pkt: p, orig: p, app }))
            }
            Err(r) => {
                self.stats.rejected[r as usize] += 1;
                Err(())
            }
        }
    }

    /// Show an opened packet to the extension on arrival. False: it is gone.
    fn ext_arrival(&mut self, i: usize, o: &mut Opened, now: Instant) -> bool {
        if self.ext.is_none() {
            return true;
        }
        self.stats.ext_seen += 1;
        let v = self
            .with_ext(now, ExtCall::Arrival, |ext, v| ext.on_arrival(now, &mut o.pkt, Some(ChannelId(i as u32)), v));
        self.drive_ext(now);
        match v {
            Some(Verdict::Forward) | None => true,
            Some(Verdict::Drop) => {
                self.stats.ext_drops += 1;
                false
            }
            Some(Verdict::Consume) => {
                self.stats.ext_consumed += 1;
                false
            }
        }
    }

    fn handle_unicast(&mut self, i: usize, ip: Ipv4, now: Instant) {
        let local = self.ports.iter().any(|p| p.cfg.addr == ip.dst);
        let bcast = ip.dst.is_broadcast() || self.ports.iter().any(|p| is_subnet_broadcast(&p.cfg, ip.dst));
        if bcast {
            self.stats.local += 1;
            return;
        }
        let Ok(mut opened) = self.open(&ip) else { return };
        if let Some(o) = opened.as_mut() {
            if !self.ext_arrival(i, o, now) {
                return;
            }
        }
        if local {
            self.stats.local += 1;
            return;
        }
        if ip.ttl <= 1 {
            self.stats.ttl_expired += 1;
            return;
        }
        let Some((out, hop)) = lookup(&self.routes, ip.dst) else {
            self.stats.no_route += 1;
            return;
        };
        let mac = self.neighbour(out, hop);
        self.forward_copy(out, mac.ok_or(hop), &ip, opened, now);
    }

    fn handle_multicast(&mut self, i: usize, ip: Ipv4, now: Instant) {
        if ip.proto == PROTO_IGMP {
            self.handle_igmp(i, ip, now);
            return;
        }
        let o = ip.dst.octets();
        if o[0] == 224 && o[1] == 0 && o[2] == 0 {
            self.stats.mc_link_local += 1;
            return;
        }
        // reverse-path check: only from the interface toward the source
        if lookup(&self.routes, ip.src).map(|(p, _)| p) != Some(i) {
            self.stats.rpf_fail += 1;
            return;
        }
        if ip.ttl <= 1 {
            self.stats.ttl_expired += 1;
            return;
        }
        let Ok(mut opened) = self.open(&ip) else { return };
        if let Some(o) = opened.as_mut() {
            if !self.ext_arrival(i, o, now) {
                return;
            }
        }
        if !self.ports.iter().enumerate().any(|(k, p)| k != i && p.membership.wants(ip.dst, ip.src)) {
            self.stats.mc_no_members += 1;
            return;
        }
        let mac = frame::group_mac(ip.dst);
        for k in 0..self.ports.len() {
            if k != i && self.ports[k].membership.wants(ip.dst, ip.src) {
                self.forward_copy(k, Ok(mac), &ip, opened, now);
            }
        }
    }

    /// Copy the frame in `self.rx` to output `out` toward `dst_mac` (or, `Err(hop)`, toward a
    /// next hop still to resolve: the frame is held), decrement its TTL, let the extension see
    /// it (`on_forward`), seal it again if rewritten, and queue it.
    fn forward_copy(
        &mut self,
        out: usize,
        dst_mac: Result<Mac, Ipv4Addr>,
        ip: &Ipv4,
        opened: Option<Opened>,
        now: Instant,
    ) {
        let mut opened = opened;
        if let Some(o) = opened.as_mut() {
            if self.ext.is_some() {
                let v = self.with_ext(now, ExtCall::Forward, |ext, v| {
                    ext.on_forward(now, &mut o.pkt, ChannelId(out as u32), v)
                });
                self.drive_ext(now);
                if v.is_some_and(|v| v != Verdict::Forward) {
                    self.ports[out].stats.drops_ext += 1;
                    return;
                }
            }
        }
        let Some(s) = self.ports[out].alloc() else {
            self.ports[out].stats.drops_forced += 1;
            return;
        };
        if self.transit_on {
            self.ports[out].set_ingress_wait(s, self.cur_wait);
        }
        let end = ip.end();
        let src_mac = self.ports[out].mac;
        let slot = self.ports[out].slot_mut(s);
        slot[..end].copy_from_slice(&self.rx[..end]);
        frame::write_eth(slot, dst_mac.unwrap_or([0; 6]), src_mac, frame::ETHERTYPE_IPV4);
        frame::decrement_ttl(slot, ip);
        let mut len = end;
        if let Some(o) = opened.filter(|o| o.pkt != o.orig) {
            match self.reseal(out, s, ip, o.pkt, o.app) {
                Some(n) => len = n,
                None => {
                    self.ports[out].release(s);
                    self.stats.ext_send_errors += 1;
                    return;
                }
            }
        }
        self.stats.forwarded += 1;
        if let Err(hop) = dst_mac {
            self.hold(out, hop, s, len, now);
            return;
        }
        if self.ports[out].enqueue(s, len, len - ETH_HDR, now) == Admit::Marked {
            // ECN-style marking is a castlab packet field: seal the mark into the datagram
            if let Some(mut o) = opened {
                o.pkt.marked = true;
                self.mark_queued(out, s, ip, o.pkt, o.app);
            }
        }
    }

    /// A queued frame's packet was marked by RED: write the mark into the datagram in place
    /// (the sealed length does not change with the flag).
    fn mark_queued(&mut self, out: usize, s: u32, ip: &Ipv4, p: Packet, app: (usize, usize)) {
        let _ = self.reseal(out, s, ip, p, app);
    }

    /// Seal `p` (local time), with the application bytes at `app` in `rx` (the frame's own),
    /// into the UDP payload of the frame in slot `s` of port `out`, fix the lengths and
    /// checksums; returns the frame length, None if it does not fit.
    fn reseal(&mut self, out: usize, s: u32, ip: &Ipv4, mut p: Packet, app: (usize, usize)) -> Option<usize> {
        let env = self.envelope.as_ref()?;
        p.sent_at = Instant::from_nanos(p.sent_at.as_nanos().saturating_add(self.epoch_ns));
        let at = ip.payload_at() + UDP_HDR;
        let mtu_end = (self.ports[out].mtu as usize + ETH_HDR).min(SLOT);
        let slot = self.ports[out].slot_mut(s);
        let n = env.seal_with(&p, &self.rx[app.0..app.1], &mut slot[at..mtu_end]).ok()?;
        let (sport, dport) =
            (u16::from_be_bytes([slot[at - 8], slot[at - 7]]), u16::from_be_bytes([slot[at - 6], slot[at - 5]]));
        frame::set_ip_total_len(slot, ip.hdr_len, ip.hdr_len + UDP_HDR + n);
        frame::write_udp(slot, ip.hdr_len, ip.src, ip.dst, sport, dport, n);
        Some(at + n)
    }

    /// The driving rule for the extension: send what it asks, re-read its deadline.
    fn drive_ext(&mut self, now: Instant) {
        loop {
            let t0 = self.ext_timing.then(std::time::Instant::now);
            let Some(x) = self.ext.as_mut() else { return };
            let send = x.ext.poll_transmit();
            self.count_poll(t0);
            let Some(send) = send else { break };
            self.originate(send, now);
        }
        let t0 = self.ext_timing.then(std::time::Instant::now);
        if let Some(x) = self.ext.as_mut() {
            x.armed = x.ext.poll_timeout();
        }
        self.count_poll(t0);
    }

    fn count_poll(&mut self, t0: Option<std::time::Instant>) {
        if let Some(t0) = t0 {
            self.stats.ext_poll_calls += 1;
            self.stats.ext_poll_ns += t0.elapsed().as_nanos() as u64;
        }
    }

    /// Send a packet the extension made: `Route` by unicast routing or group membership (each
    /// output shown to `on_forward`, as the simulator does), `Via` straight onto a channel:
    /// toward its destination if that is routed out of the channel, else to the neighbour at
    /// the channel's far end, addressed to it (see [`Router::link_neighbour`]). In the
    /// simulator a channel delivers to the next node whatever the address; here the address
    /// decides who takes a frame, so it is rewritten to say the same.
    fn originate(&mut self, send: RouterSend, now: Instant) {
        let (mut p, via) = match send {
            RouterSend::Route(p) => (p, None),
            RouterSend::Via(ch, p) => (p, Some(ch)),
        };
        let app = match self.cur_app {
            Some((uid, a, b)) if uid == p.uid => (a, b),
            _ => (0, 0),
        };
        self.next_uid += 1;
        p.uid = (self.cfg.node.0 as u64) << 40 | (self.next_uid & ((1 << 40) - 1));
        p.sent_at = now;
        let Some(sess) = self.cfg.session.as_ref() else { return };
        let (dst_ip, dport, group) = match p.dst {
            Dest::Unicast(a) => match (sess.table.node(a.node), sess.net.udp_port(a.port)) {
                (Some(ip), Some(port)) => (ip, port, false),
                _ => {
                    self.stats.ext_send_errors += 1;
                    return;
                }
            },
            Dest::Group(g) => match sess.table.group(g) {
                Some(e) => (e.addr, e.udp_port, true),
                None => {
                    self.stats.ext_send_errors += 1;
                    return;
                }
            },
        };
        let Some(sport) = sess.net.udp_port(p.src.port) else {
            self.stats.ext_send_errors += 1;
            return;
        };
        let listed_src = sess.table.node(p.src.node);
        self.stats.ext_sent += 1;
        match via {
            Some(ch) => {
                let k = ch.index();
                if k >= self.ports.len() {
                    self.stats.ext_send_errors += 1;
                    return;
                }
                if !group && self.ports[k].cfg.lan && self.ports[k].cfg.peer.is_none() {
                    self.via_lan(k, p, app, listed_src, sport, dport, now);
                    return;
                }
                let mut dst_ip = dst_ip;
                if !group && lookup(&self.routes, dst_ip).map(|(port, _)| port) != Some(k) {
                    // `Via` names a link, not a destination: the copy goes to the neighbour on
                    // that link whatever its address says (a BCF reply still carries its
                    // source's). Unicast routing would send it elsewhere, so it is addressed to
                    // the neighbour: the next router takes it from there, and a host gets it
                    // as its own (its driver delivers only what is addressed to it).
                    let Some((ip, node)) = self.link_neighbour(k) else {
                        self.stats.ext_send_errors += 1;
                        return;
                    };
                    dst_ip = ip;
                    if let (Some(n), Dest::Unicast(a)) = (node, p.dst) {
                        p.dst = Dest::Unicast(castlab_core::Addr::new(n, a.port));
                    }
                }
                self.emit(k, p, app, listed_src, dst_ip, sport, dport, group, now);
            }
            None if group => {
                let src = listed_src.unwrap_or(self.ports[0].cfg.addr);
                for k in 0..self.ports.len() {
                    if !self.ports[k].membership.wants(dst_ip, src) {
                        continue;
                    }
                    let mut q = p;
                    let v = self
                        .with_ext(now, ExtCall::Forward, |ext, v| ext.on_forward(now, &mut q, ChannelId(k as u32), v));
                    if v.is_some_and(|v| v != Verdict::Forward) {
                        self.ports[k].stats.drops_ext += 1;
                        continue;
                    }
                    self.emit(k, q, app, listed_src, dst_ip, sport, dport, group, now);
                }
            }
            None => {
                let Some((k, _)) = lookup(&self.routes, dst_ip) else {
                    self.stats.ext_send_errors += 1;
                    return;
                };
                let v =
                    self.with_ext(now, ExtCall::Forward, |ext, v| ext.on_forward(now, &mut p, ChannelId(k as u32), v));
                if v.is_some_and(|v| v != Verdict::Forward) {
                    self.ports[k].stats.drops_ext += 1;
                    return;
                }
                self.emit(k, p, app, listed_src, dst_ip, sport, dport, group, now);
            }
        }
    }

    /// A unicast `Via` copy onto a shared LAN: the channel's far end is every host on the
    /// segment, and a breadcrumb there cannot say which of them asked, so each host the
    /// session lists on the link gets a copy addressed to it (a host's driver takes only what
    /// is addressed to it). The simulator has no shared LANs (the testbed's twins give each
    /// host its own link): this is the real network's reading of one channel to several nodes.
    #[allow(clippy::too_many_arguments)]
    fn via_lan(
        &mut self,
        k: usize,
        p: Packet,
        app: (usize, usize),
        src: Option<Ipv4Addr>,
        sport: u16,
        dport: u16,
        now: Instant,
    ) {
        let Dest::Unicast(a) = p.dst else { return };
        let slots = self.cfg.session.as_ref().map_or(0, |s| s.table.node_slots());
        let mut sent = 0;
        for n in 0..slots {
            let Some(ip) = self.cfg.session.as_ref().and_then(|s| s.table.node(NodeId(n))) else { continue };
            let f = &self.ports[k].cfg;
            if !f.contains(ip) || self.ports.iter().any(|q| q.cfg.addr == ip) {
                continue;
            }
            let mut q = p;
            q.dst = Dest::Unicast(castlab_core::Addr::new(NodeId(n), a.port));
            self.emit(k, q, app, src, ip, sport, dport, false, now);
            sent += 1;
        }
        if sent == 0 {
            self.stats.ext_send_errors += 1;
        }
    }

    /// The neighbour at the far end of interface `k`'s link: its address and, if the session
    /// lists it, its node. The interface's configured peer first; else the one neighbour
    /// heard on that link (ARP), if there is exactly one. None on a LAN of several
    /// neighbours with no peer configured: a `Via` copy there has no single receiver.
    fn link_neighbour(&self, k: usize) -> Option<(Ipv4Addr, Option<NodeId>)> {
        let table = &self.cfg.session.as_ref()?.table;
        let f = &self.ports[k].cfg;
        if let Some(ip) = f.peer.and_then(|n| table.node(n)).filter(|ip| f.contains(*ip) && *ip != f.addr) {
            return Some((ip, f.peer));
        }
        let mut heard = self.neighbours.iter().filter(|n| n.port == k);
        let one = heard.next()?;
        if heard.next().is_some() {
            return None;
        }
        Some((one.ip, table.node_of(one.ip)))
    }

    /// Build and queue one router-originated datagram on port `k`, carrying the application
    /// bytes at `app` in `rx` (none when empty).
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        k: usize,
        mut p: Packet,
        app: (usize, usize),
        src: Option<Ipv4Addr>,
        dst: Ipv4Addr,
        sport: u16,
        dport: u16,
        group: bool,
        now: Instant,
    ) {
        let src = src.unwrap_or(self.ports[k].cfg.addr);
        let mac = if group {
            frame::group_mac(dst)
        } else {
            let hop = if self.ports[k].cfg.contains(dst) {
                dst
            } else {
                match lookup(&self.routes, dst) {
                    Some((port, hop)) if port == k => hop,
                    _ => {
                        self.stats.ext_send_errors += 1;
                        return;
                    }
                }
            };
            match self.neighbour(k, hop) {
                Some(m) => m,
                None => {
                    self.stats.no_neighbour += 1;
                    self.ask(k, hop, now);
                    return;
                }
            }
        };
        let Some(env) = self.envelope.clone() else { return };
        let Some(s) = self.ports[k].alloc() else {
            self.ports[k].stats.drops_forced += 1;
            return;
        };
        p.sent_at = Instant::from_nanos(p.sent_at.as_nanos().saturating_add(self.epoch_ns));
        let ttl = if group { self.cfg.multicast_ttl } else { UNICAST_TTL };
        let mtu_end = (self.ports[k].mtu as usize + ETH_HDR).min(SLOT);
        let src_mac = self.ports[k].mac;
        let slot = self.ports[k].slot_mut(s);
        let at = ETH_HDR + 20 + UDP_HDR;
        let Ok(n) = env.seal_with(&p, &self.rx[app.0..app.1], &mut slot[at..mtu_end]) else {
            self.ports[k].release(s);
            self.stats.ext_send_errors += 1;
            return;
        };
        frame::write_eth(slot, mac, src_mac, frame::ETHERTYPE_IPV4);
        frame::write_ipv4(slot, 20 + UDP_HDR + n, ttl, PROTO_UDP, src, dst, false);
        frame::write_udp(slot, 20, src, dst, sport, dport, n);
        self.ports[k].enqueue(s, at + n, at + n - ETH_HDR, now);
    }
}

fn is_subnet_broadcast(f: &IfaceConfig, ip: Ipv4Addr) -> bool {
    let host_bits = 32 - f.prefix_len as u32;
    f.contains(ip)
        && host_bits > 0
        && (u32::from(ip) & ((1u64 << host_bits) - 1) as u32) == ((1u64 << host_bits) - 1) as u32
}
