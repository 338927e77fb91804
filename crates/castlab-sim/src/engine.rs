//! The discrete-event engine and the network it simulates.
//!
//! # Time and events
//! Time is integer nanoseconds ([`Instant`]). Events are keyed by `(time, sequence number)`;
//! the sequence number only grows, so events at equal times run in the order they were
//! scheduled (first in, first out). The loop asserts that time never goes back.
//!
//! # Links
//! A duplex link is two simplex channels, each with its own output queue at the sending node,
//! as in ns-3's point-to-point device: a packet waits in the queue, is serialised onto the wire
//! for `size / rate`, then propagates for the link's delay. Optional Bernoulli loss per
//! direction drops a packet on the wire after serialisation (it used the capacity).
//!
//! # Multicast
//! Groups are source-specific. A member's join grafts hop by hop toward the group's source
//! along the reverse shortest path (the unicast route from the member to the source); each
//! hop of the graft costs that link's propagation delay, and the first hop adds the
//! configured `join_latency` (IGMP report delay, default 0). A node with no members and no
//! downstream interfaces prunes itself `leave_latency` after it became empty (default 0, as in
//! the NLM paper's "no IGMP leave delay"); the prune takes one link delay to reach the
//! upstream node, which then removes the interface and, if it is itself left empty, prunes on
//! (without further latency). Packets go only down interfaces with members downstream:
//! forwarding a packet costs its node's out-degree on that group's tree.
//!
//! Any agent may send to a group (RLM receivers announce join-experiments to the session). A
//! group packet sent at a node other than the group's source first travels by unicast routing
//! up to the source node, the root of the group's tree (as PIM-SM sends to its rendezvous
//! point), and is then forwarded down the tree like the source's own packets: every member,
//! the sender included if it is a member, receives it once.
//!
//! # Determinism
//! One master seed; each agent, channel and router extension draws from its own stream
//! derived from (seed, kind, index). No hash map is iterated on an event path. A run is a pure
//! function of scenario and seed.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use castlab_core::{
    Addr, Agent, AgentEvent, AgentId, ChannelId, Dest, Duration, GroupId, Instant, NetView, NodeId, Packet, Port, Rng,
    RouterExtension, RouterSend, StartInfo, StreamKind, Verdict,
};

use crate::error::{Result, SimError};
use crate::queue::{Admit, Queue, QueueConfig};
use crate::routing::Routes;

/// Engine-wide settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Extra delay before a member's join leaves its node (IGMP report latency). Default 0:
    /// a graft then costs only the links' propagation delays.
    pub join_latency: Duration,
    /// Delay from a node's last member leaving to its prune being sent. Default 0.
    pub leave_latency: Duration,
    /// Weight of the averaged queue length kept for DropTail queues (RED uses its own w_q).
    pub queue_avg_weight: f64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig { join_latency: Duration::ZERO, leave_latency: Duration::ZERO, queue_avg_weight: 0.002 }
    }
}

/// One direction of a duplex link, as given by the user.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    pub rate_bps: f64,
    pub delay_s: f64,
    pub queue: QueueConfig,
    /// Bernoulli loss on the wire, a→b and b→a.
    pub loss_ab: f64,
    pub loss_ba: f64,
    /// Routing cost of each direction (1 = hop count).
    pub cost: u64,
}

impl LinkConfig {
    pub fn new(rate_bps: f64, delay_s: f64, queue: QueueConfig) -> Self {
        LinkConfig { rate_bps, delay_s, queue, loss_ab: 0.0, loss_ba: 0.0, cost: 1 }
    }
}

/// Per-channel counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelStats {
    /// Packets offered to the output queue.
    pub arrivals: u64,
    pub enqueued: u64,
    pub drops_forced: u64,
    pub drops_early: u64,
    pub marked: u64,
    /// Packets that finished serialisation.
    pub departures: u64,
    pub bytes_departed: u64,
    /// Packets lost on the wire (Bernoulli loss).
    pub lost_random: u64,
    /// Packets that reached the far node.
    pub delivered: u64,
    /// Packets the sending node's extension dropped for this interface.
    pub ext_drops: u64,
}

impl ChannelStats {
    pub fn drops(&self) -> u64 {
        self.drops_forced + self.drops_early
    }
}

/// Per-node counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeStats {
    pub ext_drops: u64,
    pub ext_consumed: u64,
    /// Packets handed to agents on this node (a multicast packet counts once per node).
    pub delivered_local: u64,
    /// Unicast packets for a port nobody is bound to.
    pub no_listener: u64,
    /// Unicast packets with no route to their destination.
    pub no_route: u64,
    /// Multicast packets that arrived where nobody wanted them (in flight during a prune, or
    /// sent by a source nobody has joined).
    pub mc_unwanted: u64,
}

/// Global packet accounting: every packet copy ends in exactly one terminal counter, or is
/// still in a queue, on a wire or being serialised.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Conservation {
    pub created: u64,
    pub queue_drops: u64,
    pub lost_random: u64,
    pub ext_drops: u64,
    pub ext_consumed: u64,
    pub delivered_local: u64,
    pub no_listener: u64,
    pub no_route: u64,
    pub mc_unwanted: u64,
    pub in_queues: u64,
    pub in_transmission: u64,
    pub in_flight: u64,
}

impl Conservation {
    pub fn accounted(&self) -> u64 {
        self.queue_drops
            + self.lost_random
            + self.ext_drops
            + self.ext_consumed
            + self.delivered_local
            + self.no_listener
            + self.no_route
            + self.mc_unwanted
            + self.in_queues
            + self.in_transmission
            + self.in_flight
    }
    pub fn holds(&self) -> bool {
        self.created == self.accounted()
    }
}

/// Periodic samples of one channel.
#[derive(Clone, Debug, Default)]
pub struct ChannelSeries {
    pub interval: Duration,
    pub time_ns: Vec<u64>,
    pub qlen: Vec<u32>,
    pub qavg: Vec<f64>,
    /// Cumulative bytes that finished serialisation.
    pub bytes: Vec<u64>,
    /// Cumulative queue drops.
    pub drops: Vec<u64>,
}

/// Timelines the engine records from agent events.
#[derive(Clone, Debug, Default)]
pub struct Timelines {
    pub level_time_ns: Vec<u64>,
    pub level_agent: Vec<u32>,
    pub level: Vec<u32>,
    pub rate_time_ns: Vec<u64>,
    pub rate_agent: Vec<u32>,
    pub rate_bps: Vec<f64>,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    TxDone {
        ch: u32,
        pkt: u32,
    },
    Arrive {
        ch: u32,
        pkt: u32,
    },
    AgentStart {
        agent: u32,
    },
    AgentTimer {
        agent: u32,
    },
    ExtStart {
        node: u32,
    },
    ExtTimer {
        node: u32,
    },
    /// A graft travelling up channel `ch` (downstream → upstream).
    Graft {
        group: u32,
        ch: u32,
    },
    /// A node decides to prune itself from a group's tree.
    PruneFire {
        group: u32,
        node: u32,
        gen: u32,
    },
    /// A prune travelling up channel `ch`.
    PruneArrive {
        group: u32,
        ch: u32,
    },
    Sample {
        ch: u32,
    },
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    time: u64,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest `(time, seq)` first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// Packets live in a pool and are referred to by index; freed slots are reused, so the
/// steady state allocates nothing.
#[derive(Default)]
struct Pool {
    slots: Vec<Packet>,
    /// Per slot: a group packet sent by a node other than the group's source travels up to the
    /// source first (the root of the shared tree, like PIM-SM's rendezvous point), then down
    /// the tree. Engine routing state, so it lives here and not in the packet.
    to_root: Vec<bool>,
    free: Vec<u32>,
    live: u64,
}

impl Pool {
    fn alloc(&mut self, p: Packet) -> u32 {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            self.to_root[i as usize] = false;
            i
        } else {
            self.slots.push(p);
            self.to_root.push(false);
            (self.slots.len() - 1) as u32
        }
    }
    fn release(&mut self, i: u32) {
        self.live -= 1;
        self.free.push(i);
    }
}

struct Node {
    name: String,
    out: Vec<ChannelId>,
    ports: Vec<(Port, u32)>,
    next_port: Port,
    stats: NodeStats,
}

struct Channel {
    from: NodeId,
    to: NodeId,
    rate_bps: u64,
    delay: Duration,
    loss: f64,
    queue: Queue,
    busy: bool,
    idle_since: Instant,
    reverse: u32,
    cost: u64,
    rng: Rng,
    in_flight: u64,
    stats: ChannelStats,
    series: Option<ChannelSeries>,
}

struct AgentSlot {
    agent: Box<dyn Agent>,
    node: NodeId,
    port: Port,
    armed: Option<Instant>,
    joined: Vec<GroupId>,
}

#[derive(Clone, Default)]
struct Mc {
    oifs: Vec<u32>,
    members: Vec<u32>,
    on_tree: bool,
    gen: u32,
}

struct Group {
    source: NodeId,
    mc: Vec<Mc>,
}

struct ExtSlot {
    ext: Box<dyn RouterExtension>,
    armed: Option<Instant>,
}

/// Counters of the engine's own work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    pub events: u64,
    /// Packets serialised onto links (one per hop).
    pub forwarded: u64,
}

/// The simulator: topology, agents, extensions and the event loop.
pub struct Simulator {
    cfg: SimConfig,
    seed: u64,
    now: Instant,
    seq: u64,
    heap: BinaryHeap<Entry>,
    pool: Pool,
    nodes: Vec<Node>,
    names: HashMap<String, NodeId>,
    channels: Vec<Channel>,
    routes: Routes,
    groups: Vec<Group>,
    agents: Vec<AgentSlot>,
    exts: Vec<Option<ExtSlot>>,
    frozen: bool,
    next_uid: u64,
    created: u64,
    dirty_agents: Vec<u32>,
    dirty_exts: Vec<u32>,
    timelines: Timelines,
    stats: EngineStats,
    mc_unreachable: u64,
}

fn check_finite_nonneg(field: &'static str, v: f64) -> Result<()> {
    if !v.is_finite() || v < 0.0 {
        return Err(SimError::invalid(field, v, "must be a finite number >= 0"));
    }
    Ok(())
}

fn check_prob(field: &'static str, v: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&v) {
        return Err(SimError::invalid(field, v, "must be a probability in [0, 1]"));
    }
    Ok(())
}

fn check_queue(q: &QueueConfig) -> Result<()> {
    match q {
        QueueConfig::DropTail { .. } => Ok(()),
        QueueConfig::Red(r) => {
            check_finite_nonneg("min_th", r.min_th)?;
            check_finite_nonneg("max_th", r.max_th)?;
            if r.max_th <= r.min_th {
                return Err(SimError::invalid("max_th", r.max_th, "must exceed min_th"));
            }
            check_prob("max_p", r.max_p)?;
            if !(r.w_q > 0.0 && r.w_q <= 1.0) {
                return Err(SimError::invalid("w_q", r.w_q, "must be in (0, 1]"));
            }
            if r.mean_pkt_bytes == 0 {
                return Err(SimError::invalid("mean_pkt_bytes", 0, "must be positive"));
            }
            Ok(())
        }
    }
}

/// What a router extension sees of the network.
struct View<'a> {
    node: NodeId,
    nodes: &'a [Node],
    channels: &'a [Channel],
    routes: &'a Routes,
    groups: &'a [Group],
}

impl NetView for View<'_> {
    fn node(&self) -> NodeId {
        self.node
    }
    fn out_channels(&self) -> &[ChannelId] {
        &self.nodes[self.node.index()].out
    }
    fn channel_peer(&self, ch: ChannelId) -> NodeId {
        self.channels[ch.index()].to
    }
    fn reverse_channel(&self, ch: ChannelId) -> Option<ChannelId> {
        self.channels.get(ch.index()).map(|c| ChannelId(c.reverse))
    }
    fn queue_len_pkts(&self, ch: ChannelId) -> usize {
        self.channels[ch.index()].queue.len()
    }
    fn queue_avg_pkts(&self, ch: ChannelId) -> f64 {
        self.channels[ch.index()].queue.avg()
    }
    fn queue_limit_pkts(&self, ch: ChannelId) -> usize {
        self.channels[ch.index()].queue.limit()
    }
    fn channel_rate_bps(&self, ch: ChannelId) -> u64 {
        self.channels[ch.index()].rate_bps
    }
    fn route_channel(&self, dst: NodeId) -> Option<ChannelId> {
        if dst.index() >= self.nodes.len() {
            return None;
        }
        self.routes.next(self.node, dst)
    }
    fn group_source(&self, group: GroupId) -> Option<NodeId> {
        self.groups.get(group.index()).map(|g| g.source)
    }
}

macro_rules! view {
    ($s:ident, $n:expr) => {
        View { node: NodeId($n), nodes: &$s.nodes, channels: &$s.channels, routes: &$s.routes, groups: &$s.groups }
    };
}

impl Simulator {
    pub fn new(seed: u64) -> Self {
        Simulator::with_config(seed, SimConfig::default()).expect("default config is valid")
    }

    pub fn with_config(seed: u64, cfg: SimConfig) -> Result<Self> {
        if !(cfg.queue_avg_weight > 0.0 && cfg.queue_avg_weight <= 1.0) {
            return Err(SimError::invalid("queue_avg_weight", cfg.queue_avg_weight, "must be in (0, 1]"));
        }
        Ok(Simulator {
            cfg,
            seed,
            now: Instant::ZERO,
            seq: 0,
            heap: BinaryHeap::new(),
            pool: Pool::default(),
            nodes: Vec::new(),
            names: HashMap::new(),
            channels: Vec::new(),
            routes: Routes::new(0),
            groups: Vec::new(),
            agents: Vec::new(),
            exts: Vec::new(),
            frozen: false,
            next_uid: 0,
            created: 0,
            dirty_agents: Vec::new(),
            dirty_exts: Vec::new(),
            timelines: Timelines::default(),
            stats: EngineStats::default(),
            mc_unreachable: 0,
        })
    }

    pub fn now(&self) -> Instant {
        self.now
    }
    pub fn seed(&self) -> u64 {
        self.seed
    }
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    // ----------------------------------------------------------------- building the scenario

    pub fn add_node(&mut self, name: &str) -> Result<NodeId> {
        if self.frozen {
            return Err(SimError::Frozen { field: "node" });
        }
        if name.is_empty() {
            return Err(SimError::invalid("name", "''", "must not be empty"));
        }
        if self.names.contains_key(name) {
            return Err(SimError::DuplicateNode { field: "name", name: name.to_string() });
        }
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(Node {
            name: name.to_string(),
            out: Vec::new(),
            ports: Vec::new(),
            next_port: 1000,
            stats: NodeStats::default(),
        });
        self.names.insert(name.to_string(), id);
        self.exts.push(None);
        Ok(id)
    }

    /// Look a node up by name; `field` names the argument in the error.
    pub fn node_named(&self, field: &'static str, name: &str) -> Result<NodeId> {
        self.names.get(name).copied().ok_or_else(|| SimError::MissingNode { field, name: name.to_string() })
    }

    pub fn node_name(&self, n: NodeId) -> &str {
        &self.nodes[n.index()].name
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    fn check_node(&self, field: &'static str, n: NodeId) -> Result<()> {
        if n.index() < self.nodes.len() {
            Ok(())
        } else {
            Err(SimError::MissingNodeId { field, id: n.0 })
        }
    }

    /// Add a duplex link; returns the channels (a→b, b→a).
    pub fn add_link(&mut self, a: NodeId, b: NodeId, cfg: &LinkConfig) -> Result<(ChannelId, ChannelId)> {
        if self.frozen {
            return Err(SimError::Frozen { field: "link" });
        }
        self.check_node("a", a)?;
        self.check_node("b", b)?;
        if a == b {
            return Err(SimError::invalid("b", self.node_name(b), "a link needs two different nodes"));
        }
        if !(cfg.rate_bps.is_finite() && cfg.rate_bps >= 1.0) {
            return Err(SimError::invalid("rate_bps", cfg.rate_bps, "must be a finite rate of at least 1 bit/s"));
        }
        check_finite_nonneg("delay", cfg.delay_s)?;
        check_prob("loss_ab", cfg.loss_ab)?;
        check_prob("loss_ba", cfg.loss_ba)?;
        if cfg.cost == 0 {
            return Err(SimError::invalid("cost", 0, "must be at least 1"));
        }
        check_queue(&cfg.queue)?;
        let rate = cfg.rate_bps.round() as u64;
        let delay = Duration::from_secs_f64(cfg.delay_s);
        let ab = self.channels.len() as u32;
        let ba = ab + 1;
        for (from, to, loss, rev) in [(a, b, cfg.loss_ab, ba), (b, a, cfg.loss_ba, ab)] {
            let id = self.channels.len() as u32;
            self.channels.push(Channel {
                from,
                to,
                rate_bps: rate,
                delay,
                loss,
                queue: Queue::new(&cfg.queue, rate, self.cfg.queue_avg_weight),
                busy: false,
                idle_since: Instant::ZERO,
                reverse: rev,
                cost: cfg.cost,
                rng: Rng::stream(self.seed, StreamKind::Channel, id as u64),
                in_flight: 0,
                stats: ChannelStats::default(),
                series: None,
            });
            self.nodes[from.index()].out.push(ChannelId(id));
        }
        Ok((ChannelId(ab), ChannelId(ba)))
    }

    /// A source-specific multicast group whose source is `source`.
    pub fn add_group(&mut self, source: NodeId) -> Result<GroupId> {
        self.check_node("source", source)?;
        let id = GroupId(self.groups.len() as u32);
        let mut g = Group { source, mc: Vec::new() };
        if self.frozen {
            g.mc = vec![Mc::default(); self.nodes.len()];
            g.mc[source.index()].on_tree = true;
        }
        self.groups.push(g);
        Ok(id)
    }

    pub fn check_group(&self, field: &'static str, g: GroupId) -> Result<()> {
        if g.index() < self.groups.len() {
            Ok(())
        } else {
            Err(SimError::UnknownGroup { field, id: g.0 })
        }
    }

    pub fn group_source(&self, g: GroupId) -> Option<NodeId> {
        self.groups.get(g.index()).map(|g| g.source)
    }

    /// Check a start time given in seconds: finite, non-negative, not before now.
    pub fn check_start(&self, field: &'static str, t: f64) -> Result<Instant> {
        if !t.is_finite() || t < 0.0 {
            return Err(SimError::invalid(field, t, "must be a finite time >= 0"));
        }
        let at = Instant::from_secs_f64(t);
        if at < self.now {
            return Err(SimError::InPast { field, value: t, now: self.now.as_secs_f64() });
        }
        Ok(at)
    }

    /// Attach an agent to `node`, bound to `port` (None: the next free port from 1000), started
    /// at `start` (not in the past).
    pub fn add_agent(
        &mut self,
        node: NodeId,
        port: Option<Port>,
        start: Instant,
        agent: Box<dyn Agent>,
    ) -> Result<AgentId> {
        self.check_node("node", node)?;
        if start < self.now {
            return Err(SimError::InPast { field: "start", value: start.as_secs_f64(), now: self.now.as_secs_f64() });
        }
        let nd = &mut self.nodes[node.index()];
        let port = match port {
            Some(p) => {
                if nd.ports.iter().any(|(q, _)| *q == p) {
                    return Err(SimError::PortInUse { field: "port", node: nd.name.clone(), port: p });
                }
                p
            }
            None => {
                while nd.ports.iter().any(|(q, _)| *q == nd.next_port) {
                    nd.next_port = nd.next_port.wrapping_add(1);
                }
                nd.next_port
            }
        };
        let id = self.agents.len() as u32;
        nd.ports.push((port, id));
        self.agents.push(AgentSlot { agent, node, port, armed: None, joined: Vec::new() });
        self.schedule(start, Ev::AgentStart { agent: id });
        Ok(AgentId(id))
    }

    pub fn agent_addr(&self, a: AgentId) -> Option<Addr> {
        self.agents.get(a.index()).map(|s| Addr::new(s.node, s.port))
    }

    pub fn agent_count(&self) -> usize {
        self.agents.len()
    }

    /// Attach a router extension to `node` (one per node).
    pub fn attach_extension(&mut self, node: NodeId, ext: Box<dyn RouterExtension>) -> Result<()> {
        self.check_node("node", node)?;
        if self.exts[node.index()].is_some() {
            return Err(SimError::ExtensionPresent { field: "node", node: self.node_name(node).to_string() });
        }
        self.exts[node.index()] = Some(ExtSlot { ext, armed: None });
        self.schedule(self.now, Ev::ExtStart { node: node.0 });
        Ok(())
    }

    /// Whether `node` already has a router extension (a node holds at most one).
    pub fn has_extension(&self, node: NodeId) -> bool {
        self.exts.get(node.index()).is_some_and(Option::is_some)
    }

    /// The channel from `a` to `b`, if they are linked.
    pub fn channel_between(&self, a: NodeId, b: NodeId) -> Option<ChannelId> {
        self.nodes.get(a.index())?.out.iter().copied().find(|c| self.channels[c.index()].to == b)
    }

    pub fn check_channel(&self, field: &'static str, ch: ChannelId) -> Result<()> {
        if ch.index() < self.channels.len() {
            Ok(())
        } else {
            Err(SimError::UnknownChannel { field, id: ch.0 })
        }
    }

    /// Sample a channel's queue length, average and cumulative bytes every `interval`.
    pub fn monitor_channel(&mut self, ch: ChannelId, interval: Duration) -> Result<()> {
        self.check_channel("channel", ch)?;
        if interval.is_zero() {
            return Err(SimError::invalid("interval", 0, "must be positive"));
        }
        if self.channels[ch.index()].series.is_none() {
            self.channels[ch.index()].series = Some(ChannelSeries { interval, ..Default::default() });
            self.schedule(self.now, Ev::Sample { ch: ch.0 });
        }
        Ok(())
    }

    // ----------------------------------------------------------------------------- running

    fn schedule(&mut self, at: Instant, ev: Ev) {
        self.seq += 1;
        self.heap.push(Entry { time: at.as_nanos(), seq: self.seq, ev });
    }

    fn freeze(&mut self) {
        if self.frozen {
            return;
        }
        self.frozen = true;
        let n = self.nodes.len();
        self.routes = Routes::new(n);
        for (i, c) in self.channels.iter().enumerate() {
            self.routes.add_channel(c.from, c.to, ChannelId(i as u32), c.cost);
        }
        for g in &mut self.groups {
            g.mc = vec![Mc::default(); n];
            g.mc[g.source.index()].on_tree = true;
        }
    }

    /// Run until `until` (inclusive of events at `until`). May be called repeatedly.
    pub fn run(&mut self, until: Instant) -> Result<()> {
        if until < self.now {
            return Err(SimError::InPast { field: "until", value: until.as_secs_f64(), now: self.now.as_secs_f64() });
        }
        self.freeze();
        let limit = until.as_nanos();
        while let Some(top) = self.heap.peek() {
            if top.time > limit {
                break;
            }
            let e = self.heap.pop().expect("peeked");
            assert!(e.time >= self.now.as_nanos(), "time went back: {} < {}", e.time, self.now.as_nanos());
            self.now = Instant::from_nanos(e.time);
            self.stats.events += 1;
            self.dispatch(e.ev);
            self.drain_dirty();
        }
        self.now = until;
        Ok(())
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::TxDone { ch, pkt } => self.tx_done(ch, pkt),
            Ev::Arrive { ch, pkt } => {
                let c = &mut self.channels[ch as usize];
                c.in_flight -= 1;
                c.stats.delivered += 1;
                let to = c.to.0;
                self.node_receive(to, pkt, Some(ch), false);
            }
            Ev::AgentStart { agent } => {
                let s = &mut self.agents[agent as usize];
                let info = StartInfo {
                    addr: Addr::new(s.node, s.port),
                    rng: Rng::stream(self.seed, StreamKind::Agent, agent as u64),
                };
                s.agent.handle_start(self.now, info);
                self.drive_agent(agent);
            }
            Ev::AgentTimer { agent } => {
                let now = self.now;
                let s = &mut self.agents[agent as usize];
                if s.armed == Some(now) {
                    s.armed = None;
                }
                if matches!(s.agent.poll_timeout(), Some(t) if t <= now) {
                    s.agent.handle_timeout(now);
                }
                self.drive_agent(agent);
            }
            Ev::ExtStart { node } => {
                let rng = Rng::stream(self.seed, StreamKind::Extension, node as u64);
                if let Some(x) = self.exts[node as usize].as_mut() {
                    let v = view!(self, node);
                    x.ext.handle_start(self.now, rng, &v);
                }
                self.drive_ext(node);
            }
            Ev::ExtTimer { node } => {
                let now = self.now;
                if let Some(x) = self.exts[node as usize].as_mut() {
                    if x.armed == Some(now) {
                        x.armed = None;
                    }
                    if matches!(x.ext.poll_timeout(), Some(t) if t <= now) {
                        let v = view!(self, node);
                        x.ext.handle_timeout(now, &v);
                    }
                }
                self.drive_ext(node);
            }
            Ev::Graft { group, ch } => self.graft_arrive(group, ch),
            Ev::PruneFire { group, node, gen } => self.prune_fire(group, node, gen),
            Ev::PruneArrive { group, ch } => self.prune_arrive(group, ch),
            Ev::Sample { ch } => {
                let now = self.now;
                let c = &mut self.channels[ch as usize];
                let (qlen, qavg, bytes, drops) =
                    (c.queue.len() as u32, c.queue.avg(), c.stats.bytes_departed, c.stats.drops());
                if let Some(s) = c.series.as_mut() {
                    s.time_ns.push(now.as_nanos());
                    s.qlen.push(qlen);
                    s.qavg.push(qavg);
                    s.bytes.push(bytes);
                    s.drops.push(drops);
                    let next = now + s.interval;
                    self.schedule(next, Ev::Sample { ch });
                }
            }
        }
    }

    fn drain_dirty(&mut self) {
        loop {
            if let Some(a) = self.dirty_agents.pop() {
                self.drive_agent(a);
            } else if let Some(n) = self.dirty_exts.pop() {
                self.drive_ext(n);
            } else {
                break;
            }
        }
    }

    /// Apply the driving rule to an agent: drain transmits, re-arm its timer, drain events.
    fn drive_agent(&mut self, a: u32) {
        let now = self.now;
        loop {
            let s = &mut self.agents[a as usize];
            let Some(mut p) = s.agent.poll_transmit() else { break };
            p.src = Addr::new(s.node, s.port);
            self.next_uid += 1;
            p.uid = self.next_uid;
            p.sent_at = now;
            let node = s.node.0;
            self.created += 1;
            let i = self.pool.alloc(p);
            self.node_receive(node, i, None, false);
        }
        let s = &mut self.agents[a as usize];
        if let Some(t) = s.agent.poll_timeout() {
            let t = t.max(now);
            if s.armed.is_none_or(|armed| t < armed) {
                s.armed = Some(t);
                self.schedule(t, Ev::AgentTimer { agent: a });
            }
        }
        while let Some(ev) = self.agents[a as usize].agent.poll_event() {
            match ev {
                AgentEvent::Join(g) => self.join(a, g),
                AgentEvent::Leave(g) => self.leave(a, g),
                AgentEvent::LevelChanged { level } => {
                    self.timelines.level_time_ns.push(now.as_nanos());
                    self.timelines.level_agent.push(a);
                    self.timelines.level.push(level);
                }
                AgentEvent::RateChanged { rate_bps } => {
                    self.timelines.rate_time_ns.push(now.as_nanos());
                    self.timelines.rate_agent.push(a);
                    self.timelines.rate_bps.push(rate_bps);
                }
            }
        }
    }

    fn drive_ext(&mut self, n: u32) {
        let now = self.now;
        loop {
            let Some(x) = self.exts[n as usize].as_mut() else { return };
            let Some(send) = x.ext.poll_transmit() else { break };
            let (mut p, via) = match send {
                RouterSend::Route(p) => (p, None),
                RouterSend::Via(ch, p) => (p, Some(ch)),
            };
            self.next_uid += 1;
            p.uid = self.next_uid;
            p.sent_at = now;
            self.created += 1;
            let i = self.pool.alloc(p);
            match via {
                None => self.node_receive(n, i, None, true),
                Some(ch) if ch.index() < self.channels.len() && self.channels[ch.index()].from.0 == n => {
                    self.enqueue(ch.0, i)
                }
                Some(_) => {
                    // not one of this node's interfaces: the extension's mistake, counted
                    self.nodes[n as usize].stats.no_route += 1;
                    self.pool.release(i);
                }
            }
        }
        let Some(x) = self.exts[n as usize].as_mut() else { return };
        if let Some(t) = x.ext.poll_timeout() {
            let t = t.max(now);
            if x.armed.is_none_or(|armed| t < armed) {
                x.armed = Some(t);
                self.schedule(t, Ev::ExtTimer { node: n });
            }
        }
    }

    /// A packet is at node `n`: from channel `from`, or sent locally (`from` None).
    fn node_receive(&mut self, n: u32, p: u32, from: Option<u32>, skip_ext: bool) {
        if !skip_ext {
            if let Some(x) = self.exts[n as usize].as_mut() {
                let v = View {
                    node: NodeId(n),
                    nodes: &self.nodes,
                    channels: &self.channels,
                    routes: &self.routes,
                    groups: &self.groups,
                };
                let verdict = x.ext.on_arrival(self.now, &mut self.pool.slots[p as usize], from.map(ChannelId), &v);
                self.dirty_exts.push(n);
                match verdict {
                    Verdict::Forward => {}
                    Verdict::Drop => {
                        self.nodes[n as usize].stats.ext_drops += 1;
                        self.pool.release(p);
                        return;
                    }
                    Verdict::Consume => {
                        self.nodes[n as usize].stats.ext_consumed += 1;
                        self.pool.release(p);
                        return;
                    }
                }
            }
        }
        let pkt = self.pool.slots[p as usize];
        match pkt.dst {
            Dest::Unicast(addr) => {
                if addr.node.0 == n {
                    let nd = &mut self.nodes[n as usize];
                    match nd.ports.iter().find(|(q, _)| *q == addr.port) {
                        Some(&(_, a)) => {
                            nd.stats.delivered_local += 1;
                            self.agents[a as usize].agent.handle_packet(self.now, &pkt);
                            self.dirty_agents.push(a);
                        }
                        None => nd.stats.no_listener += 1,
                    }
                    self.pool.release(p);
                } else if addr.node.index() < self.nodes.len() {
                    match self.routes.next(NodeId(n), addr.node) {
                        Some(ch) => self.forward(n, p, ch.0),
                        None => {
                            self.nodes[n as usize].stats.no_route += 1;
                            self.pool.release(p);
                        }
                    }
                } else {
                    self.nodes[n as usize].stats.no_route += 1;
                    self.pool.release(p);
                }
            }
            Dest::Group(g) => {
                let gi = g.index();
                if gi >= self.groups.len() {
                    self.nodes[n as usize].stats.no_route += 1;
                    self.pool.release(p);
                    return;
                }
                let source = self.groups[gi].source;
                if source.0 != n {
                    // A member sending to the group: up to the root first (shared tree).
                    if from.is_none() {
                        self.pool.to_root[p as usize] = true;
                    }
                    if self.pool.to_root[p as usize] {
                        match self.routes.next(NodeId(n), source) {
                            Some(ch) => self.forward(n, p, ch.0),
                            None => {
                                self.nodes[n as usize].stats.no_route += 1;
                                self.pool.release(p);
                            }
                        }
                        return;
                    }
                } else {
                    self.pool.to_root[p as usize] = false;
                }
                let pkt = self.pool.slots[p as usize];
                let st = &self.groups[gi].mc[n as usize];
                if !st.members.is_empty() {
                    self.nodes[n as usize].stats.delivered_local += 1;
                    for &m in &st.members {
                        self.agents[m as usize].agent.handle_packet(self.now, &pkt);
                        self.dirty_agents.push(m);
                    }
                }
                let k = st.oifs.len();
                if k == 0 {
                    if st.members.is_empty() {
                        self.nodes[n as usize].stats.mc_unwanted += 1;
                    }
                    self.pool.release(p);
                    return;
                }
                if !self.groups[gi].mc[n as usize].members.is_empty() {
                    // the original went to the local members; every interface gets a copy
                    for i in 0..k {
                        let ch = self.groups[gi].mc[n as usize].oifs[i];
                        let q = self.pool.alloc(pkt);
                        self.created += 1;
                        self.forward(n, q, ch);
                    }
                    self.pool.release(p);
                } else {
                    for i in 0..k {
                        let ch = self.groups[gi].mc[n as usize].oifs[i];
                        let q = if i + 1 == k {
                            p
                        } else {
                            self.created += 1;
                            self.pool.alloc(pkt)
                        };
                        self.forward(n, q, ch);
                    }
                }
            }
        }
    }

    /// Node `n` puts packet `p` on output channel `ch`, after its extension's say.
    fn forward(&mut self, n: u32, p: u32, ch: u32) {
        if let Some(x) = self.exts[n as usize].as_mut() {
            let v = View {
                node: NodeId(n),
                nodes: &self.nodes,
                channels: &self.channels,
                routes: &self.routes,
                groups: &self.groups,
            };
            let verdict = x.ext.on_forward(self.now, &mut self.pool.slots[p as usize], ChannelId(ch), &v);
            self.dirty_exts.push(n);
            if verdict != Verdict::Forward {
                self.channels[ch as usize].stats.ext_drops += 1;
                self.pool.release(p);
                return;
            }
        }
        self.enqueue(ch, p);
    }

    fn enqueue(&mut self, ch: u32, p: u32) {
        let now = self.now;
        let c = &mut self.channels[ch as usize];
        c.stats.arrivals += 1;
        let idle = if c.busy { None } else { Some(c.idle_since) };
        match c.queue.arrive(p, now, idle, &mut c.rng) {
            Admit::Enqueued => c.stats.enqueued += 1,
            Admit::Marked => {
                c.stats.enqueued += 1;
                c.stats.marked += 1;
                self.pool.slots[p as usize].marked = true;
            }
            Admit::DropForced => {
                c.stats.drops_forced += 1;
                self.pool.release(p);
            }
            Admit::DropEarly => {
                c.stats.drops_early += 1;
                self.pool.release(p);
            }
        }
        if !self.channels[ch as usize].busy {
            self.start_tx(ch);
        }
    }

    fn start_tx(&mut self, ch: u32) {
        let c = &mut self.channels[ch as usize];
        let Some(p) = c.queue.pop() else { return };
        c.busy = true;
        let t = self.now + Duration::transmission(self.pool.slots[p as usize].size_bytes, c.rate_bps);
        self.schedule(t, Ev::TxDone { ch, pkt: p });
    }

    fn tx_done(&mut self, ch: u32, p: u32) {
        let now = self.now;
        let c = &mut self.channels[ch as usize];
        c.busy = false;
        c.stats.departures += 1;
        c.stats.bytes_departed += self.pool.slots[p as usize].size_bytes as u64;
        self.stats.forwarded += 1;
        if c.loss > 0.0 && c.rng.bernoulli(c.loss) {
            c.stats.lost_random += 1;
            self.pool.release(p);
        } else {
            c.in_flight += 1;
            let at = now + c.delay;
            self.schedule(at, Ev::Arrive { ch, pkt: p });
        }
        let c = &mut self.channels[ch as usize];
        if c.queue.is_empty() {
            c.idle_since = now;
        } else {
            self.start_tx(ch);
        }
    }

    // ------------------------------------------------------------------------- multicast

    fn join(&mut self, a: u32, g: GroupId) {
        let gi = g.index();
        if gi >= self.groups.len() {
            return; // agents are built with validated groups; nothing to join otherwise
        }
        let node = self.agents[a as usize].node.0;
        if !self.agents[a as usize].joined.contains(&g) {
            self.agents[a as usize].joined.push(g);
        }
        let st = &mut self.groups[gi].mc[node as usize];
        if !st.members.contains(&a) {
            st.members.push(a);
        }
        st.gen = st.gen.wrapping_add(1);
        if !st.on_tree {
            self.graft_up(gi as u32, node, self.cfg.join_latency);
        }
    }

    fn graft_up(&mut self, g: u32, n: u32, extra: Duration) {
        let source = self.groups[g as usize].source;
        match self.routes.next(NodeId(n), source) {
            Some(ch) => {
                self.groups[g as usize].mc[n as usize].on_tree = true;
                let at = self.now + extra + self.channels[ch.index()].delay;
                self.schedule(at, Ev::Graft { group: g, ch: ch.0 });
            }
            None => self.mc_unreachable += 1,
        }
    }

    fn graft_arrive(&mut self, g: u32, ch: u32) {
        let c = &self.channels[ch as usize];
        let (u, oif) = (c.to.0, c.reverse);
        let st = &mut self.groups[g as usize].mc[u as usize];
        if !st.oifs.contains(&oif) {
            st.oifs.push(oif);
        }
        st.gen = st.gen.wrapping_add(1);
        if !st.on_tree {
            self.graft_up(g, u, Duration::ZERO);
        }
    }

    fn leave(&mut self, a: u32, g: GroupId) {
        let gi = g.index();
        if gi >= self.groups.len() {
            return;
        }
        self.agents[a as usize].joined.retain(|x| *x != g);
        let node = self.agents[a as usize].node.0;
        let st = &mut self.groups[gi].mc[node as usize];
        st.members.retain(|m| *m != a);
        st.gen = st.gen.wrapping_add(1);
        self.maybe_prune(gi as u32, node, self.cfg.leave_latency);
    }

    fn maybe_prune(&mut self, g: u32, n: u32, after: Duration) {
        let grp = &mut self.groups[g as usize];
        let is_source = grp.source.0 == n;
        let st = &mut grp.mc[n as usize];
        if is_source || !st.on_tree || !st.members.is_empty() || !st.oifs.is_empty() {
            return;
        }
        st.gen = st.gen.wrapping_add(1);
        let gen = st.gen;
        self.schedule(self.now + after, Ev::PruneFire { group: g, node: n, gen });
    }

    fn prune_fire(&mut self, g: u32, n: u32, gen: u32) {
        let source = self.groups[g as usize].source;
        let st = &mut self.groups[g as usize].mc[n as usize];
        if st.gen != gen || !st.on_tree || !st.members.is_empty() || !st.oifs.is_empty() {
            return;
        }
        st.on_tree = false;
        if let Some(ch) = self.routes.next(NodeId(n), source) {
            let at = self.now + self.channels[ch.index()].delay;
            self.schedule(at, Ev::PruneArrive { group: g, ch: ch.0 });
        }
    }

    fn prune_arrive(&mut self, g: u32, ch: u32) {
        let c = &self.channels[ch as usize];
        let (u, oif) = (c.to.0, c.reverse);
        let st = &mut self.groups[g as usize].mc[u as usize];
        st.oifs.retain(|o| *o != oif);
        st.gen = st.gen.wrapping_add(1);
        self.maybe_prune(g, u, Duration::ZERO);
    }

    // ----------------------------------------------------------------------------- results

    pub fn engine_stats(&self) -> EngineStats {
        self.stats
    }

    pub fn channel_stats(&self, ch: ChannelId) -> Option<&ChannelStats> {
        self.channels.get(ch.index()).map(|c| &c.stats)
    }

    pub fn channel_series(&self, ch: ChannelId) -> Option<&ChannelSeries> {
        self.channels.get(ch.index()).and_then(|c| c.series.as_ref())
    }

    /// (from, to, rate_bps, delay) of a channel.
    pub fn channel_info(&self, ch: ChannelId) -> Option<(NodeId, NodeId, u64, Duration)> {
        self.channels.get(ch.index()).map(|c| (c.from, c.to, c.rate_bps, c.delay))
    }

    pub fn channel_count(&self) -> usize {
        self.channels.len()
    }

    pub fn queue_len(&self, ch: ChannelId) -> Option<usize> {
        self.channels.get(ch.index()).map(|c| c.queue.len())
    }

    pub fn queue_avg(&self, ch: ChannelId) -> Option<f64> {
        self.channels.get(ch.index()).map(|c| c.queue.avg())
    }

    pub fn node_stats(&self, n: NodeId) -> Option<&NodeStats> {
        self.nodes.get(n.index()).map(|d| &d.stats)
    }

    pub fn timelines(&self) -> &Timelines {
        &self.timelines
    }

    /// Borrow an agent as its concrete type.
    pub fn agent<T: Agent>(&self, a: AgentId) -> Option<&T> {
        self.agents.get(a.index()).and_then(|s| s.agent.as_any().downcast_ref::<T>())
    }

    pub fn extension<T: RouterExtension>(&self, n: NodeId) -> Option<&T> {
        self.exts.get(n.index())?.as_ref()?.ext.as_any().downcast_ref::<T>()
    }

    /// Groups the agent is currently joined to.
    pub fn agent_groups(&self, a: AgentId) -> &[GroupId] {
        self.agents.get(a.index()).map(|s| s.joined.as_slice()).unwrap_or(&[])
    }

    /// Whether node `n` currently forwards group `g` on channel `ch`.
    pub fn forwards(&self, g: GroupId, n: NodeId, ch: ChannelId) -> bool {
        self.groups.get(g.index()).and_then(|grp| grp.mc.get(n.index())).is_some_and(|st| st.oifs.contains(&ch.0))
    }

    /// Joins that could not graft because the source was unreachable.
    pub fn multicast_unreachable(&self) -> u64 {
        self.mc_unreachable
    }

    pub fn conservation(&self) -> Conservation {
        let mut c = Conservation { created: self.created, ..Default::default() };
        for ch in &self.channels {
            c.queue_drops += ch.stats.drops();
            c.lost_random += ch.stats.lost_random;
            c.ext_drops += ch.stats.ext_drops;
            c.in_queues += ch.queue.len() as u64;
            c.in_transmission += ch.busy as u64;
            c.in_flight += ch.in_flight;
        }
        for n in &self.nodes {
            c.ext_drops += n.stats.ext_drops;
            c.ext_consumed += n.stats.ext_consumed;
            c.delivered_local += n.stats.delivered_local;
            c.no_listener += n.stats.no_listener;
            c.no_route += n.stats.no_route;
            c.mc_unwanted += n.stats.mc_unwanted;
        }
        debug_assert_eq!(self.pool.live, c.in_queues + c.in_transmission + c.in_flight);
        c
    }

    /// Packets currently held by the engine (queued, on the wire or being serialised).
    pub fn packets_live(&self) -> u64 {
        self.pool.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_time_events_pop_first_in_first_out() {
        let mut h = BinaryHeap::new();
        let evs = [(5u64, 1u64), (3, 2), (5, 3), (3, 4), (5, 5), (1, 6)];
        for (t, s) in evs {
            h.push(Entry { time: t, seq: s, ev: Ev::Sample { ch: s as u32 } });
        }
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| h.pop()).map(|e| (e.time, e.seq)).collect();
        assert_eq!(order, vec![(1, 6), (3, 2), (3, 4), (5, 1), (5, 3), (5, 5)]);
    }

    #[test]
    fn event_entries_are_small() {
        // the heap moves entries on every push and pop
        assert!(std::mem::size_of::<Entry>() <= 32, "{}", std::mem::size_of::<Entry>());
    }
}
