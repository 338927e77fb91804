//! The router's configuration: interfaces with their links' rate, delay and queue, static
//! routes, the IGMP querier's timers, and (optionally) the castlab session whose packets an
//! extension sees. Built in code or parsed from command-line words
//! ([`RouterConfig::from_args`]), the one format the example binary, the Python role and the
//! testbed share.

use std::net::Ipv4Addr;

use castlab_core::queue::{QueueConfig, RedConfig};
use castlab_core::{Duration, GroupId, NodeId};

use super::igmp::IgmpConfig;
use crate::session::{GroupEntry, NetConfig, SessionTable};

/// One router interface and the output side of its link.
#[derive(Clone, Debug, PartialEq)]
pub struct IfaceConfig {
    /// The interface's name in the router's namespace.
    pub name: String,
    /// The router's address on the link and the link's prefix length.
    pub addr: Ipv4Addr,
    pub prefix_len: u8,
    /// The link's rate, bit/s, at which the output queue is drained; 0: as fast as the
    /// socket takes frames (no serialisation modelled).
    pub rate_bps: u64,
    /// Propagation delay added after serialisation (the delay line).
    pub delay: Duration,
    /// The output queue's discipline. Default DropTail 100 packets (our choice: deep enough
    /// never to matter on a link that is not a bottleneck).
    pub queue: QueueConfig,
    /// A shared LAN (several hosts): leaves are confirmed with group-specific queries.
    /// Default false: a point-to-point link with fast leave.
    pub lan: bool,
    /// The castlab node at the far end (for `NetView::channel_peer`), if known.
    pub peer: Option<NodeId>,
}

impl IfaceConfig {
    pub fn new(name: &str, addr: Ipv4Addr, prefix_len: u8) -> Self {
        IfaceConfig {
            name: name.to_string(),
            addr,
            prefix_len,
            rate_bps: 0,
            delay: Duration::ZERO,
            queue: QueueConfig::DropTail { limit_pkts: 100 },
            lan: false,
            peer: None,
        }
    }

    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        prefix_contains(self.addr, self.prefix_len, ip)
    }
}

pub fn prefix_contains(net: Ipv4Addr, len: u8, ip: Ipv4Addr) -> bool {
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len as u32) };
    u32::from(net) & mask == u32::from(ip) & mask
}

/// A static route: `dst/prefix_len` via the neighbour `via` (on one of the interfaces' links),
/// or straight out of interface `dev` (hosts on point-to-point links that share one subnet,
/// as the testbed's per-host LANs do).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub dst: Ipv4Addr,
    pub prefix_len: u8,
    pub via: RouteVia,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteVia {
    Gateway(Ipv4Addr),
    Dev(String),
}

/// The castlab session whose datagrams the router opens for a hosted extension.
#[derive(Clone, Debug)]
pub struct RouterSession {
    pub net: NetConfig,
    pub table: SessionTable,
}

/// Everything the router needs.
#[derive(Clone, Debug)]
pub struct RouterConfig {
    pub ifaces: Vec<IfaceConfig>,
    pub routes: Vec<Route>,
    pub igmp: IgmpConfig,
    /// The router's castlab node id (for extensions' `NetView::node` and their packets).
    pub node: NodeId,
    /// Master seed: RED's draws on interface i use `Rng::stream(seed, Channel, i)`, the
    /// extension `Rng::stream(seed, Extension, node)`, as in the simulator.
    pub seed: u64,
    /// Weight of the averaged queue length kept for DropTail queues (RED uses its own w_q).
    /// Default 0.002, the simulator's.
    pub queue_avg_weight: f64,
    /// With a session, castlab datagrams are opened: other sessions' and malformed ones are
    /// counted and dropped, the rest shown to the extension. Without, the router forwards
    /// every datagram as plain IP.
    pub session: Option<RouterSession>,
    /// Refuse interfaces whose driver is not `veth` (the testbed's). Default true.
    pub require_veth: bool,
    /// Receive and send buffer of each packet socket, bytes. Default 4 MiB (our choice, as
    /// the host driver's sockets).
    pub socket_buffer_bytes: usize,
    /// TTL of multicast packets an extension sends. Default 8 (our choice: above any testbed's
    /// hop count, inside 239.0.0.0/8's administrative scope).
    pub multicast_ttl: u8,
}

impl Default for RouterConfig {
    fn default() -> Self {
        RouterConfig {
            ifaces: Vec::new(),
            routes: Vec::new(),
            igmp: IgmpConfig::default(),
            node: NodeId(0),
            seed: 0,
            queue_avg_weight: 0.002,
            session: None,
            require_veth: true,
            socket_buffer_bytes: 4 << 20,
            multicast_ttl: 8,
        }
    }
}

/// A configuration error, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason} (got {value:?})")]
pub struct ConfigErr {
    pub field: String,
    pub value: String,
    pub reason: String,
}

fn err(field: &str, value: impl ToString, reason: &str) -> ConfigErr {
    ConfigErr { field: field.to_string(), value: value.to_string(), reason: reason.to_string() }
}

/// A rate in bit/s: a number with an optional k/M/G suffix (`1M`, `1.5e6`, `32k`).
pub fn parse_rate(s: &str) -> Option<f64> {
    let (num, k) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1e3),
        'M' => (&s[..s.len() - 1], 1e6),
        'G' => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    num.parse::<f64>().ok().map(|v| v * k).filter(|v| v.is_finite() && *v >= 0.0)
}

/// A duration: seconds, or with an `ms`/`us`/`s` suffix.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let (num, k) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else {
        (s, 1.0)
    };
    num.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0 && *v < 1e6).map(|v| Duration::from_secs_f64(v * k))
}

fn parse_prefix(field: &str, s: &str) -> Result<(Ipv4Addr, u8), ConfigErr> {
    if s == "default" {
        return Ok((Ipv4Addr::UNSPECIFIED, 0));
    }
    let (a, l) = s.split_once('/').ok_or_else(|| err(field, s, "must be ADDR/LEN"))?;
    let a: Ipv4Addr = a.parse().map_err(|_| err(field, s, "not an IPv4 address"))?;
    let l: u8 = l.parse().ok().filter(|l| *l <= 32).ok_or_else(|| err(field, s, "prefix length must be 0..=32"))?;
    Ok((a, l))
}

/// A queue: `droptail:LIMIT` or `red:LIMIT:MIN_TH:MAX_TH:MAX_P:W_Q[:gentle]`.
pub fn parse_queue(s: &str) -> Result<QueueConfig, ConfigErr> {
    let parts: Vec<&str> = s.split(':').collect();
    let num = |i: usize| -> Result<f64, ConfigErr> {
        parts.get(i).and_then(|v| v.parse::<f64>().ok()).ok_or_else(|| err("queue", s, "a number is missing or bad"))
    };
    let limit = |v: f64| -> Result<usize, ConfigErr> {
        if (1.0..=100_000.0).contains(&v) && v.fract() == 0.0 {
            Ok(v as usize)
        } else {
            Err(err("queue", s, "the limit must be a whole number of packets in 1..=100000"))
        }
    };
    match parts[0] {
        "droptail" if parts.len() == 2 => Ok(QueueConfig::DropTail { limit_pkts: limit(num(1)?)? }),
        "red" if parts.len() == 6 || (parts.len() == 7 && parts[6] == "gentle") => {
            let r = RedConfig {
                limit_pkts: limit(num(1)?)?,
                min_th: num(2)?,
                max_th: num(3)?,
                max_p: num(4)?,
                w_q: num(5)?,
                gentle: parts.len() == 7,
                ..RedConfig::default()
            };
            r.validate().map_err(|e| err("queue", s, &e))?;
            Ok(QueueConfig::Red(r))
        }
        _ => Err(err("queue", s, "must be droptail:LIMIT or red:LIMIT:MIN_TH:MAX_TH:MAX_P:W_Q[:gentle]")),
    }
}

impl RouterConfig {
    /// Check the whole configuration.
    pub fn validate(&self) -> Result<(), ConfigErr> {
        if self.ifaces.is_empty() {
            return Err(err("iface", "none", "a router needs at least one interface"));
        }
        if self.ifaces.len() > 64 {
            return Err(err("iface", self.ifaces.len(), "at most 64 interfaces"));
        }
        for (i, f) in self.ifaces.iter().enumerate() {
            if self.ifaces[..i].iter().any(|g| g.name == f.name) {
                return Err(err("iface", &f.name, "named twice"));
            }
            if f.addr.is_multicast() || f.addr.is_unspecified() || f.addr.is_broadcast() || f.prefix_len > 30 {
                return Err(err("iface address", f.addr, "must be a unicast address with a prefix of at most /30"));
            }
            if let QueueConfig::Red(r) = &f.queue {
                r.validate().map_err(|e| err("queue", &f.name, &e))?;
            }
            if f.queue.limit_pkts() == 0 {
                return Err(err("queue", &f.name, "the limit must be at least one packet"));
            }
            if f.delay > Duration::from_secs(10) {
                return Err(err("delay", &f.name, "at most 10 s"));
            }
        }
        for r in &self.routes {
            match &r.via {
                RouteVia::Gateway(g) if !self.ifaces.iter().any(|f| f.contains(*g)) => {
                    return Err(err("route", g, "the gateway is on none of the interfaces' links"));
                }
                RouteVia::Dev(d) if !self.ifaces.iter().any(|f| &f.name == d) => {
                    return Err(err("route", d, "no such interface"));
                }
                _ => {}
            }
        }
        let g = &self.igmp;
        if !(1..=1_000_000).contains(&g.max_groups) {
            return Err(err("igmp max_groups", g.max_groups, "must be 1..=1000000"));
        }
        if g.max_sources > 1_000_000 {
            return Err(err("igmp max_sources", g.max_sources, "must be 0..=1000000"));
        }
        if !(self.queue_avg_weight > 0.0 && self.queue_avg_weight <= 1.0) {
            return Err(err("queue_avg_weight", self.queue_avg_weight, "must be in (0, 1]"));
        }
        if let Some(s) = &self.session {
            s.net.validate().map_err(|e| err("session", e.to_string(), "invalid session settings"))?;
        }
        Ok(())
    }

    /// Parse command-line words (see `docs/real-network.md`, "The user-space router"):
    ///
    /// ```text
    /// --iface NAME,ADDR/LEN[,rate=R][,delay=D][,queue=Q][,lan][,peer=NODE]   (repeatable)
    /// --route DST/LEN|default,via=GW  or  DST/LEN,dev=IFACE                  (repeatable)
    /// --node N  --seed N  --queue-avg-weight W  --allow-any-driver  --multicast-ttl N
    /// --igmp-query-interval D  --igmp-response-interval D  --igmp-last-member-interval D
    /// --igmp-max-groups N  --igmp-max-sources N                              (per interface)
    /// --session N [--key HEX] [--port-base P] [--allow-any-group]
    /// --host NODE=ADDR   --group ID=ADDR[:PORT][@SOURCE_NODE]                (repeatable)
    /// ```
    /// Words it does not know are returned, in order, for the caller (a binary's own flags).
    pub fn from_args(args: &[String]) -> Result<(Self, Vec<String>), ConfigErr> {
        let mut c = RouterConfig::default();
        let mut rest = Vec::new();
        let mut session_id: Option<u32> = None;
        let mut net = NetConfig::default();
        let mut table = SessionTable::new();
        let mut groups: Vec<(u32, Ipv4Addr, Option<u16>, Option<u32>)> = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut val = |name: &str| -> Result<String, ConfigErr> {
                it.next().cloned().ok_or_else(|| err(name, "", "needs a value"))
            };
            match a.as_str() {
                "--iface" => c.ifaces.push(parse_iface(&val("--iface")?)?),
                "--route" => {
                    let v = val("--route")?;
                    let (p, via) = if let Some((p, gw)) = v.split_once(",via=") {
                        let gw = gw.parse().map_err(|_| err("--route", &v, "the gateway is not an IPv4 address"))?;
                        (p, RouteVia::Gateway(gw))
                    } else if let Some((p, dev)) = v.split_once(",dev=") {
                        (p, RouteVia::Dev(dev.to_string()))
                    } else {
                        return Err(err("--route", &v, "must be DST/LEN,via=GW or DST/LEN,dev=IFACE"));
                    };
                    let (dst, prefix_len) = parse_prefix("--route", p)?;
                    c.routes.push(Route { dst, prefix_len, via });
                }
                "--node" => c.node = NodeId(num(&val("--node")?, "--node")?),
                "--seed" => c.seed = num(&val("--seed")?, "--seed")?,
                "--queue-avg-weight" => {
                    let v = val("--queue-avg-weight")?;
                    c.queue_avg_weight = v.parse().map_err(|_| err("--queue-avg-weight", &v, "not a number"))?;
                }
                "--allow-any-driver" => c.require_veth = false,
                "--multicast-ttl" => c.multicast_ttl = num(&val("--multicast-ttl")?, "--multicast-ttl")?,
                "--igmp-query-interval" => c.igmp.query_interval = dur(&val(a)?, a)?,
                "--igmp-response-interval" => c.igmp.query_response_interval = dur(&val(a)?, a)?,
                "--igmp-last-member-interval" => c.igmp.last_member_query_interval = dur(&val(a)?, a)?,
                "--igmp-max-groups" => c.igmp.max_groups = num(&val(a)?, a)?,
                "--igmp-max-sources" => c.igmp.max_sources = num(&val(a)?, a)?,
                "--session" => session_id = Some(num(&val("--session")?, "--session")?),
                "--key" => {
                    let v = val("--key")?;
                    net.key = Some(hex(&v).ok_or_else(|| err("--key", "(hidden)", "must be hex digits"))?);
                }
                "--port-base" => net.port_base = num(&val("--port-base")?, "--port-base")?,
                "--allow-any-group" => {
                    net.allow_any_group = true;
                    c.igmp.any_group = true;
                }
                "--host" => {
                    let v = val("--host")?;
                    let (n, ip) = v.split_once('=').ok_or_else(|| err("--host", &v, "must be NODE=ADDR"))?;
                    let ip: Ipv4Addr = ip.parse().map_err(|_| err("--host", &v, "not an IPv4 address"))?;
                    table.set_node(NodeId(num(n, "--host")?), ip).map_err(|e| err("--host", &v, &e.to_string()))?;
                }
                "--group" => {
                    let v = val("--group")?;
                    let (id, rest) =
                        v.split_once('=').ok_or_else(|| err("--group", &v, "must be ID=ADDR[:PORT][@NODE]"))?;
                    let (addr_port, src) = match rest.split_once('@') {
                        Some((a, s)) => (a, Some(num(s, "--group")?)),
                        None => (rest, None),
                    };
                    let (addr, port) = match addr_port.split_once(':') {
                        Some((a, p)) => (a, Some(num(p, "--group")?)),
                        None => (addr_port, None),
                    };
                    let addr = addr.parse().map_err(|_| err("--group", &v, "not an IPv4 address"))?;
                    groups.push((num(id, "--group")?, addr, port, src));
                }
                _ => rest.push(a.clone()),
            }
        }
        if let Some(id) = session_id {
            net.session_id = id;
            for (g, addr, port, src) in groups {
                let e = GroupEntry { addr, udp_port: port.unwrap_or(net.port_base), source: src.map(NodeId) };
                table.set_group(GroupId(g), e).map_err(|e| err("--group", g, &e.to_string()))?;
            }
            c.session = Some(RouterSession { net, table });
        } else if !groups.is_empty() || net.key.is_some() {
            return Err(err("--session", "none", "--group and --key need --session"));
        }
        c.validate()?;
        Ok((c, rest))
    }
}

fn num<T: std::str::FromStr>(s: &str, field: &str) -> Result<T, ConfigErr> {
    s.parse().map_err(|_| err(field, s, "not a valid whole number"))
}

fn dur(s: &str, field: &str) -> Result<Duration, ConfigErr> {
    parse_duration(s).filter(|d| !d.is_zero()).ok_or_else(|| err(field, s, "must be a positive duration (s, ms, us)"))
}

fn hex(s: &str) -> Option<Vec<u8>> {
    if s.is_empty() || !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// `NAME,ADDR/LEN[,rate=R][,delay=D][,queue=Q][,lan][,peer=NODE]`
pub fn parse_iface(s: &str) -> Result<IfaceConfig, ConfigErr> {
    let mut parts = s.split(',');
    let name = parts.next().filter(|n| !n.is_empty()).ok_or_else(|| err("--iface", s, "needs a name"))?;
    let (addr, len) = parse_prefix("--iface", parts.next().ok_or_else(|| err("--iface", s, "needs ADDR/LEN"))?)?;
    let mut f = IfaceConfig::new(name, addr, len);
    for p in parts {
        match p.split_once('=') {
            Some(("rate", v)) => {
                f.rate_bps = parse_rate(v).ok_or_else(|| err("rate", v, "must be bit/s, e.g. 1M or 1.5e6"))? as u64
            }
            Some(("delay", v)) => f.delay = parse_duration(v).ok_or_else(|| err("delay", v, "must be a duration"))?,
            Some(("queue", v)) => f.queue = parse_queue(v)?,
            Some(("peer", v)) => f.peer = Some(NodeId(num(v, "peer")?)),
            None if p == "lan" => f.lan = true,
            _ => return Err(err("--iface", p, "unknown option (rate=, delay=, queue=, lan, peer=)")),
        }
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_interfaces_queues_and_routes() {
        let (c, rest) = RouterConfig::from_args(&words(
            "--iface r-a,10.0.1.1/24,rate=1M,delay=250ms,queue=red:50:5:15:0.1:0.002:gentle \
             --iface r-b,10.0.2.1/24,lan --route 10.9.0.0/16,via=10.0.2.7 --seed 3 --other x",
        ))
        .unwrap();
        assert_eq!(rest, words("--other x"));
        assert_eq!(c.ifaces[0].rate_bps, 1_000_000);
        assert_eq!(c.ifaces[0].delay, Duration::from_millis(250));
        let QueueConfig::Red(r) = &c.ifaces[0].queue else { panic!() };
        assert!(r.gentle && r.min_th == 5.0 && r.max_th == 15.0 && r.max_p == 0.1 && r.w_q == 0.002);
        assert!(c.ifaces[1].lan && c.ifaces[1].rate_bps == 0);
        let via = RouteVia::Gateway(Ipv4Addr::new(10, 0, 2, 7));
        assert_eq!(c.routes, vec![Route { dst: Ipv4Addr::new(10, 9, 0, 0), prefix_len: 16, via }]);
        let (c, _) = RouterConfig::from_args(&words("--iface a,10.0.1.1/24 --route 10.0.1.9/32,dev=a")).unwrap();
        assert_eq!(c.routes[0].via, RouteVia::Dev("a".into()));
        assert_eq!((c.igmp.max_groups, c.igmp.max_sources, c.igmp.any_group), (256, 1024, false));
        let (c, _) = RouterConfig::from_args(&words("--iface a,10.0.1.1/24 --allow-any-group")).unwrap();
        assert!(c.igmp.any_group);
        let (c, _) =
            RouterConfig::from_args(&words("--iface a,10.0.1.1/24 --igmp-max-groups 8 --igmp-max-sources 0")).unwrap();
        assert_eq!((c.igmp.max_groups, c.igmp.max_sources), (8, 0));
    }

    #[test]
    fn refuses_bad_input_with_the_field() {
        for bad in [
            "",
            "--iface x",
            "--iface x,10.0.0.1/24,rate=fast",
            "--iface x,10.0.0.1/24,queue=red:50:15:5:0.1:0.002",
            "--iface x,10.0.0.1/24,queue=droptail:0",
            "--iface x,10.0.0.1/24 --route 10.9.0.0/16,via=10.1.0.1",
            "--iface x,239.0.0.1/24",
            "--iface x,10.0.0.1/24 --group 1=239.1.1.1",
            "--iface x,10.0.0.1/24,bogus",
            "--iface x,10.0.0.1/24 --route 10.0.0.9/32,dev=y",
            "--iface x,10.0.0.1/24 --igmp-max-groups 0",
            "--iface x,10.0.0.1/24 --igmp-max-sources -1",
        ] {
            assert!(RouterConfig::from_args(&words(bad)).is_err(), "{bad:?} accepted");
        }
    }
}
