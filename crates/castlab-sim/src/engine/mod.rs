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
//! Nakauchi et al.'s "no IGMP leave delay"); the prune takes one link delay to reach the
//! upstream node, which then removes the interface and, if it is itself left empty, prunes on
//! (without further latency). Packets go only down interfaces with members downstream:
//! forwarding a packet costs its node's out-degree on that group's tree.
//!
//! Any agent may send to a group (receivers may announce their experiments to the session). A
//! group packet sent at a node other than the group's source first travels by unicast routing
//! up to the source node, the root of the group's tree (as PIM-SM sends to its rendezvous
//! point), and is then forwarded down the tree like the source's own packets: every member,
//! the sender included if it is a member, receives it once.
//!
//! # Determinism
//! One master seed; each agent, channel and router extension draws from its own stream
//! derived from (seed, kind, index). No hash map is iterated on an event path. A run is a pure
//! function of (scenario, seed): the same inputs give byte-identical outputs.
//!
//! # Phase randomisation
//! A deterministic simulator lines packets up in fixed phases: a paced flow behind a TCP flow
//! may always meet a full queue, or never, and a sub-millisecond change of a delay swings its
//! loss (Floyd and Jacobson, "On traffic phase effects in packet-switched gateways", 1992).
//! Their remedy, ns-2's `overhead_` at TCP senders, is a random processing time at the sender.
//! With [`SimConfig::phase_overhead`] set, every packet an agent sends leaves its node after a
//! delay drawn uniformly from [0, `phase_overhead`] on the agent's own phase stream; an agent's
//! packets still leave in the order it sent them (a packet never overtakes the one before it,
//! so a burst is not stretched into one packet per delay as ns-2's one-packet-per-timer TCP
//! does). Off (zero) by default: packets then leave at once and no stream is drawn, so runs are
//! those without the mechanism, byte for byte.
//!
//! # Where things are
//! [`event`](self) holds the event type and the queue, with the reason for the `(time, seq)`
//! order; `pool` the packet slots; `topology` building the scenario; `link` channels, queues
//! and a packet's way from a queue to the far node, batched link events included; `multicast`
//! grafts and prunes; `fanout` a group packet going down the tree at a node, its fast paths
//! and the one hook that keeps them exact; `class` fan-outs to many alike receivers handled
//! as one packet; `faults` links and nodes that fail and come back; `stats` the
//! counters and result accessors. This file holds the simulator itself, the run loop and
//! packet handling at a node.

mod class;
mod event;
mod fanout;
mod faults;
mod link;
mod multicast;
mod pool;
mod stats;
#[cfg(test)]
mod tests;
mod topology;

use std::collections::HashMap;

use castlab_core::{
    Addr, Agent, AgentEvent, AgentId, ChannelId, Dest, Duration, GroupId, Instant, NetView, NodeId, Port, Rng,
    RouterExtension, RouterSend, StartInfo, StreamKind, Verdict,
};

use crate::error::{Result, SimError};
use crate::routing::Routes;
use class::{ClassId, Classes};
use event::{Entry, Ev, EventQueue};
use fanout::Touch;
use link::{Channel, LastLink, OPEN_LINKS};
use multicast::Group;
use pool::{Pool, Slot};

pub use link::{ChannelSeries, ChannelStats, LinkConfig, LinkTap, TokenBucket};
pub use stats::{Conservation, EngineStats, NodeStats, Timelines};

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
    /// Phase randomisation: the largest random delay a sent packet waits at its sender before
    /// it enters the network (uniform on [0, this]). Default 0: off, every packet leaves at once
    /// (our choice, so that runs without it are unchanged; see the module doc).
    pub phase_overhead: Duration,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            join_latency: Duration::ZERO,
            leave_latency: Duration::ZERO,
            queue_avg_weight: 0.002,
            phase_overhead: Duration::ZERO,
        }
    }
}

/// An agent's phase randomisation: its stream, and when its last packet leaves (the next one
/// may not leave before it).
pub(super) struct Phase {
    pub(super) rng: Rng,
    pub(super) last: Instant,
}

/// Fields in declaration order (`repr(C)`, aligned to a cache line): the counters a delivery
/// writes and the flags it reads first, in one line.
#[repr(C, align(64))]
pub(super) struct Node {
    pub(super) stats: NodeStats,
    /// Whether `Simulator::exts` holds an extension for this node (read on every packet
    /// instead of that list).
    pub(super) has_ext: bool,
    /// The class (`class`) whose member this node is, or `NO_CLASS`.
    pub(super) class: ClassId,
    pub(super) ports: Vec<(Port, AgentId)>,
    pub(super) out: Vec<ChannelId>,
    pub(super) next_port: Port,
    pub(super) name: String,
    /// Failed (the engine's `faults`): every link of the node is down.
    pub(super) down: bool,
}

/// Fields in declaration order (`repr(C)`, aligned to a cache line): what delivering a packet
/// and driving the agent after it read first, in one line.
#[repr(C, align(64))]
pub(super) struct AgentSlot {
    pub(super) agent: Box<dyn Agent>,
    /// The agent's `packets_only_count`: no driving after a packet.
    pub(super) only_counts: bool,
    /// The class (`class`) whose member this agent is, or `NO_CLASS`.
    pub(super) class: ClassId,
    pub(super) armed: Option<Instant>,
    pub(super) node: NodeId,
    pub(super) port: Port,
    pub(super) joined: Vec<GroupId>,
    /// Set only when `SimConfig::phase_overhead` is positive.
    pub(super) phase: Option<Phase>,
}

pub(super) struct ExtSlot {
    pub(super) ext: Box<dyn RouterExtension>,
    pub(super) armed: Option<Instant>,
}

/// The simulator: topology, agents, extensions and the event loop.
pub struct Simulator {
    cfg: SimConfig,
    seed: u64,
    now: Instant,
    seq: u64,
    queue: EventQueue,
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
    dirty_agents: Vec<AgentId>,
    dirty_exts: Vec<NodeId>,
    timelines: Timelines,
    stats: EngineStats,
    mc_unreachable: u64,
    /// The `(ch, pkt)` lists of `Ev::TxDoneBatch` / `Ev::ArriveBatch`, reused.
    batches: Vec<Vec<(ChannelId, Slot)>>,
    batch_free: Vec<u32>,
    /// The link events that may still grow into batches, at most one per time (`schedule_link`).
    last_links: [Option<LastLink>; OPEN_LINKS],
    /// Batch link events and share fan-out copies' slots (off only in the test that checks
    /// that both give the same run).
    coalesce: bool,
    /// Packets sent by agents and still waiting out their phase-randomisation delay.
    in_sender: u64,
    /// `PREFETCH_FROM` (lowered only in the test that checks that prefetching changes nothing).
    prefetch_from: usize,
    /// Fan-outs handled as classes (`class`; read and changed through `fanout` only).
    classes: Classes,
    /// Router extensions attached (classes are formed only without any: an extension may read
    /// any channel's queue through `NetView`).
    ext_count: usize,
    /// Per channel, where the last arrival on it was handled (`link`'s `Hint`); kept only
    /// from `hint_from` channels on (`hinting`, set when the run starts).
    hints: Vec<link::Hint>,
    hint_from: usize,
    hinting: bool,
    /// The train the running batch of departures fills with its arrivals (`NO_TRAIN`: none;
    /// the event queue's "Trains"), and the shortest batch that builds one (`TRAIN_FROM`;
    /// changed only in the tests that check that trains change nothing).
    train: u32,
    train_from: usize,
}

/// How many members ahead of the one it runs a batch asks for the next members' state.
pub(super) const AHEAD: usize = 8;
/// Batches and fan-outs at least this long prefetch (`AHEAD`): below, every receiver's state
/// stays in the caches and the hints only add instructions; above, it does not (a receiver's
/// copy touches about ten lines of engine state and its agent's own). Measured on the star of
/// docs/engine.md's "at scale" section: the hints cost about 10 % per event at 100 receivers,
/// are even at 1,000 and save about a quarter at 10^4.
const PREFETCH_FROM: usize = 1 << 12;
/// From this many channels on, the run loop asks the caches for the state the next arrival
/// will read while it handles the current event (`link`'s `Hint`): with thousands of
/// receivers, each handling a packet in turn, a receiver's state has left the caches by its
/// next packet (our choice: 2^13 channels, a few thousand receivers of a kilobyte or more).
const HINT_FROM: usize = 1 << 13;
/// A batch of departures at least this long puts its arrivals on a train (the event queue's
/// "Trains"): below, the heap of wire fronts is small and a train's sort would cost more than
/// it saves (our choice).
const TRAIN_FROM: usize = 64;

/// A hint to the caches: fetch the line holding `at`. It never faults (any address may be
/// given) and changes nothing the program computes.
#[inline(always)]
pub(super) fn prefetch(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing into the program and cannot fault, whatever the
    // address; SSE is part of every x86_64 target.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
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
        self.channels.get(ch.index()).map(|c| c.reverse)
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
        View { node: $n, nodes: &$s.nodes, channels: &$s.channels, routes: &$s.routes, groups: &$s.groups }
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
        if cfg.phase_overhead > Duration::from_secs(1) {
            return Err(SimError::invalid(
                "phase_overhead",
                cfg.phase_overhead.as_secs_f64(),
                "must be at most 1 s (a processing delay, not a path delay)",
            ));
        }
        Ok(Simulator {
            cfg,
            seed,
            now: Instant::ZERO,
            seq: 0,
            queue: EventQueue::default(),
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
            batches: Vec::new(),
            batch_free: Vec::new(),
            last_links: [None; OPEN_LINKS],
            coalesce: true,
            in_sender: 0,
            prefetch_from: PREFETCH_FROM,
            classes: Classes::default(),
            ext_count: 0,
            hints: Vec::new(),
            hint_from: HINT_FROM,
            hinting: false,
            train: link::NO_TRAIN,
            train_from: TRAIN_FROM,
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

    // ----------------------------------------------------------------------------- running

    #[inline]
    fn schedule(&mut self, at: Instant, ev: Ev) {
        self.seq += 1;
        self.last_links = [None; OPEN_LINKS];
        self.queue.push(Entry { time: at.as_nanos(), seq: self.seq, ev });
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
            g.size_for(n);
        }
        self.hinting = self.channels.len() >= self.hint_from;
        if self.hinting {
            self.hints = vec![link::Hint::default(); self.channels.len()];
        }
    }

    /// Run until `until` (inclusive of events at `until`). May be called repeatedly.
    pub fn run(&mut self, until: Instant) -> Result<()> {
        self.advance(until)?;
        self.settle();
        Ok(())
    }

    /// Bring every receiver of a fan-out handled as one class (`class`) up to date, so that
    /// results read now are exact. [`Simulator::run`] does it before it returns; after
    /// [`Simulator::advance`], call it (or `run`) before reading results.
    pub fn settle(&mut self) {
        self.settle_fan_outs();
    }

    /// Run until `until` as [`Simulator::run`] does, but leave the receivers of fan-outs
    /// handled as classes as they are: their counters and agents may lag until the next
    /// [`Simulator::settle`] or `run` (the run itself is the same). For a caller that runs in
    /// many short slices and reads results only at the end: settling is a pass over every
    /// such receiver, which at 10^6 receivers takes longer than a short slice.
    pub fn advance(&mut self, until: Instant) -> Result<()> {
        if until < self.now {
            return Err(SimError::InPast { field: "until", value: until.as_secs_f64(), now: self.now.as_secs_f64() });
        }
        self.freeze();
        let limit = until.as_nanos();
        while let Some((time, ev)) = self.queue.pop_until(limit) {
            assert!(time >= self.now.as_nanos(), "time went back: {} < {}", time, self.now.as_nanos());
            self.now = Instant::from_nanos(time);
            // a popped event's batch is closed: later link events start their own
            self.last_links = [None; OPEN_LINKS];
            self.stats.events += 1;
            if self.hinting {
                if let Some((ch, on_wire)) = self.queue.next_wire() {
                    self.prefetch_hint(ch, on_wire);
                } else if let Some(ch) = self.queue.next_tx_done() {
                    // the next event ends a copy's serialisation: it reads the channel, draws
                    // its wire's loss and puts the copy on the channel's wire
                    self.prefetch_channel(ch);
                    self.prefetch_rng(ch);
                    self.prefetch_wire(ch);
                }
                // two events ahead: the hint lines of the arrivals that may come after the
                // next, so that reading the next one's hint at the next event does not wait
                for ch in self.queue.wires_after_next() {
                    self.prefetch_hint_line(ch);
                }
            }
            self.dispatch(ev);
            self.drain_dirty();
        }
        self.now = until;
        Ok(())
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Link(ev) => self.link_event(ev),
            Ev::ClassTx { class, pkt } => self.class_event(class, pkt, false),
            Ev::ClassArrive { class, pkt } => self.class_event(class, pkt, true),
            Ev::AgentStart { agent } => {
                self.touch_member(Touch::Agent(agent));
                let s = &mut self.agents[agent.index()];
                let info = StartInfo {
                    addr: Addr::new(s.node, s.port),
                    rng: Rng::stream(self.seed, StreamKind::Agent, u64::from(agent.0)),
                };
                s.agent.handle_start(self.now, info);
                self.drive_agent(agent);
            }
            Ev::AgentTimer { agent } => {
                self.touch_member(Touch::Agent(agent));
                let now = self.now;
                let s = &mut self.agents[agent.index()];
                if s.armed == Some(now) {
                    s.armed = None;
                }
                if matches!(s.agent.poll_timeout(), Some(t) if t <= now) {
                    s.agent.handle_timeout(now);
                }
                self.drive_agent(agent);
            }
            Ev::ExtStart { node } => {
                let rng = Rng::stream(self.seed, StreamKind::Extension, u64::from(node.0));
                if let Some(x) = self.exts[node.index()].as_mut() {
                    let v = view!(self, node);
                    x.ext.handle_start(self.now, rng, &v);
                }
                self.drive_ext(node);
            }
            Ev::ExtTimer { node } => {
                let now = self.now;
                if let Some(x) = self.exts[node.index()].as_mut() {
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
            Ev::Inject { agent, pkt } => {
                self.in_sender -= 1;
                self.pool.slots[pkt.index()].sent_at = self.now;
                let node = self.agents[agent.index()].node;
                self.node_receive(node, pkt, None, false);
            }
            Ev::Graft { group, ch, epoch } => self.graft_arrive(group, ch, epoch),
            Ev::PruneFire { group, node, gen } => self.prune_fire(group, node, gen),
            Ev::PruneArrive { group, ch, epoch } => self.prune_arrive(group, ch, epoch),
            Ev::LinkState { ch, up } => self.set_link_state(ch, up),
            Ev::NodeState { node, up } => self.set_node_state(node, up),
            Ev::Sample { ch } => {
                let now = self.now;
                let c = &mut self.channels[ch.index()];
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
    fn drive_agent(&mut self, a: AgentId) {
        let now = self.now;
        loop {
            let s = &mut self.agents[a.index()];
            let Some(mut p) = s.agent.poll_transmit() else { break };
            p.src = Addr::new(s.node, s.port);
            self.next_uid += 1;
            p.uid = self.next_uid;
            p.sent_at = now;
            let node = s.node;
            self.created += 1;
            if let Some(ph) = s.phase.as_mut() {
                // phase randomisation (module doc): a uniform delay, never overtaking
                let max_ns = self.cfg.phase_overhead.as_nanos();
                let at = (now + Duration::from_nanos(ph.rng.below(max_ns + 1))).max(ph.last);
                ph.last = at;
                let i = self.pool.alloc(p);
                self.in_sender += 1;
                self.schedule(at, Ev::Inject { agent: a, pkt: i });
                continue;
            }
            let i = self.pool.alloc(p);
            self.node_receive(node, i, None, false);
        }
        let s = &mut self.agents[a.index()];
        if let Some(t) = s.agent.poll_timeout() {
            let t = t.max(now);
            if s.armed.is_none_or(|armed| t < armed) {
                s.armed = Some(t);
                self.schedule(t, Ev::AgentTimer { agent: a });
            }
        }
        while let Some(ev) = self.agents[a.index()].agent.poll_event() {
            match ev {
                AgentEvent::Join(g) => self.join(a, g),
                AgentEvent::Leave(g) => self.leave(a, g),
                AgentEvent::LevelChanged { level } => {
                    self.timelines.level_time_ns.push(now.as_nanos());
                    self.timelines.level_agent.push(a.0);
                    self.timelines.level.push(level);
                }
                AgentEvent::RateChanged { rate_bps } => {
                    self.timelines.rate_time_ns.push(now.as_nanos());
                    self.timelines.rate_agent.push(a.0);
                    self.timelines.rate_bps.push(rate_bps);
                }
            }
        }
    }

    fn drive_ext(&mut self, n: NodeId) {
        let now = self.now;
        loop {
            let Some(x) = self.exts[n.index()].as_mut() else { return };
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
                Some(ch) if ch.index() < self.channels.len() && self.channels[ch.index()].from == n => {
                    self.enqueue(ch, i)
                }
                Some(_) => {
                    // not one of this node's interfaces: the extension's mistake, counted
                    self.nodes[n.index()].stats.no_route += 1;
                    self.pool.release(i);
                }
            }
        }
        let Some(x) = self.exts[n.index()].as_mut() else { return };
        if let Some(t) = x.ext.poll_timeout() {
            let t = t.max(now);
            if x.armed.is_none_or(|armed| t < armed) {
                x.armed = Some(t);
                self.schedule(t, Ev::ExtTimer { node: n });
            }
        }
    }

    /// A packet is at node `n`: from channel `from`, or sent locally (`from` None). The node's
    /// extension has its say first (unless `skip_ext`: the extension sent it itself); then a
    /// unicast packet is delivered or routed on, and a group packet goes up to its root or down
    /// the tree through the fan-out (`fanout`).
    fn node_receive(&mut self, n: NodeId, mut p: Slot, from: Option<ChannelId>, skip_ext: bool) {
        self.touch_member(Touch::Node(n));
        if !skip_ext && self.nodes[n.index()].has_ext {
            // the extension may write the packet: it gets a slot of its own
            p = self.pool.own(p);
            if !self.ext_arrival(n, p, from) {
                return;
            }
        }
        // the packet is read in its slot, not copied out (it is ~100 bytes and this runs at
        // every hop)
        match self.pool.slots[p.index()].dst {
            Dest::Unicast(addr) => self.unicast(n, p, addr),
            Dest::Group(g) => self.multicast(n, p, g, from.is_some()),
        }
    }

    /// Node `n`'s extension sees packet `p` on arrival: true when it lets it go on.
    fn ext_arrival(&mut self, n: NodeId, p: Slot, from: Option<ChannelId>) -> bool {
        let Some(x) = self.exts[n.index()].as_mut() else { return true };
        let v = view!(self, n);
        let verdict = x.ext.on_arrival(self.now, &mut self.pool.slots[p.index()], from, &v);
        self.dirty_exts.push(n);
        let st = &mut self.nodes[n.index()].stats;
        match verdict {
            Verdict::Forward => return true,
            Verdict::Drop => st.ext_drops += 1,
            Verdict::Consume => st.ext_consumed += 1,
        }
        self.pool.release(p);
        false
    }

    /// A unicast packet at node `n`: to its listener there, or on along its route.
    fn unicast(&mut self, n: NodeId, p: Slot, addr: Addr) {
        // only a fan-out shares slots, and only an extension can turn a group packet into a
        // unicast one, after taking its own slot
        debug_assert!(!self.pool.shared(p));
        if addr.node == n {
            let nd = &mut self.nodes[n.index()];
            match nd.ports.iter().find(|(q, _)| *q == addr.port) {
                Some(&(_, a)) => {
                    nd.stats.delivered_local += 1;
                    self.agents[a.index()].agent.handle_packet(self.now, &self.pool.slots[p.index()]);
                    self.dirty_agents.push(a);
                }
                None => nd.stats.no_listener += 1,
            }
            self.pool.release(p);
            return;
        }
        let next = if addr.node.index() < self.nodes.len() { self.routes.next(n, addr.node) } else { None };
        match next {
            Some(ch) => self.forward(n, p, ch),
            None => {
                self.nodes[n.index()].stats.no_route += 1;
                self.pool.release(p);
            }
        }
    }

    /// A packet of group `g` at node `n` (`off_link`: it came off a link). Sent by an agent
    /// at a node other than the group's source, it travels by unicast routing up to the source
    /// first (the root of the group's tree); then it goes down the tree (`fan_out`).
    fn multicast(&mut self, n: NodeId, p: Slot, g: GroupId, off_link: bool) {
        let gi = g.index();
        if gi >= self.groups.len() {
            self.nodes[n.index()].stats.no_route += 1;
            self.pool.release(p);
            return;
        }
        let source = self.groups[gi].source;
        if source != n {
            if !off_link {
                self.pool.to_root[p.index()] = true;
            }
            if self.pool.to_root[p.index()] {
                let p = self.pool.own(p);
                match self.routes.next(n, source) {
                    Some(ch) => self.forward(n, p, ch),
                    None => {
                        self.nodes[n.index()].stats.no_route += 1;
                        self.pool.release(p);
                    }
                }
                return;
            }
        } else {
            self.pool.to_root[p.index()] = false;
        }
        self.fan_out(g, n, p, off_link);
    }

    /// Node `n` puts packet `p` on output channel `ch`, after its extension's say.
    fn forward(&mut self, n: NodeId, p: Slot, ch: ChannelId) {
        if let Some(x) = self.exts[n.index()].as_mut() {
            let v = view!(self, n);
            let verdict = x.ext.on_forward(self.now, &mut self.pool.slots[p.index()], ch, &v);
            self.dirty_exts.push(n);
            if verdict != Verdict::Forward {
                self.channels[ch.index()].stats.ext_drops += 1;
                self.pool.release(p);
                return;
            }
        }
        self.enqueue(ch, p);
    }
}
