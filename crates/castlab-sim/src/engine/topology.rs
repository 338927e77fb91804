//! Building the scenario: nodes, links, groups, agents, router extensions and monitors, with
//! every input checked (a clear error naming the field, never a panic).

use super::Phase;
use castlab_core::{
    Addr, Agent, AgentId, ChannelId, Duration, GroupId, Instant, NodeId, Port, Rng, RouterExtension, StreamKind,
};

use super::event::Ev;
use super::link::{Channel, ChannelSeries, ChannelStats, LinkConfig};
use super::multicast::Group;
use super::stats::NodeStats;
use super::{AgentSlot, ExtSlot, Node, Simulator};
use crate::error::{Result, SimError};
use crate::queue::{Queue, QueueConfig};

/// The largest token bucket (and per-packet overhead) a link takes: 2^30 bytes, so that the
/// bucket's bit-nanoseconds fit in a u64.
const MAX_BURST_BYTES: u32 = 1 << 30;

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

impl Simulator {
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
            has_ext: false,
            class: super::class::NO_CLASS,
            down: false,
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
        if let Some(b) = cfg.bucket {
            if !(1..=MAX_BURST_BYTES).contains(&b.burst_bytes) {
                return Err(SimError::invalid("burst_bytes", b.burst_bytes, "must be 1 to 2^30 bytes"));
            }
            if b.overhead_bytes > MAX_BURST_BYTES {
                return Err(SimError::invalid("overhead_bytes", b.overhead_bytes, "must be at most 2^30 bytes"));
            }
        }
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
                reverse: ChannelId(rev),
                cost: cfg.cost,
                rng: Rng::stream(self.seed, StreamKind::Channel, id as u64),
                in_flight: 0,
                stats: ChannelStats::default(),
                series: None,
                tap: None,
                forced_down: false,
                down: false,
                downs: 0,
                class: super::class::NO_CLASS,
                tx_doomed: false,
                doomed: 0,
                bucketed: cfg.bucket.is_some(),
                bucket: cfg.bucket.map(|b| Box::new(super::link::Bucket::new(b))),
            });
            self.nodes[from.index()].out.push(ChannelId(id));
        }
        Ok((ChannelId(ab), ChannelId(ba)))
    }

    /// A source-specific multicast group whose source is `source`.
    pub fn add_group(&mut self, source: NodeId) -> Result<GroupId> {
        self.check_node("source", source)?;
        let id = GroupId(self.groups.len() as u32);
        let mut g = Group::new(source);
        if self.frozen {
            g.size_for(self.nodes.len());
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
        let id = AgentId(self.agents.len() as u32);
        nd.ports.push((port, id));
        let phase = (self.cfg.phase_overhead > Duration::ZERO)
            .then(|| Phase { rng: Rng::stream(self.seed, StreamKind::Phase, u64::from(id.0)), last: Instant::ZERO });
        let only_counts = agent.packets_only_count();
        let class = super::class::NO_CLASS;
        self.agents.push(AgentSlot { agent, only_counts, class, node, port, armed: None, joined: Vec::new(), phase });
        self.schedule(start, Ev::AgentStart { agent: id });
        Ok(id)
    }

    pub fn agent_addr(&self, a: AgentId) -> Option<Addr> {
        self.agents.get(a.index()).map(|s| Addr::new(s.node, s.port))
    }

    pub fn agent_count(&self) -> usize {
        self.agents.len()
    }

    /// Attach a router extension to `node` (one per node).
    pub fn attach_extension(&mut self, node: NodeId, ext: Box<dyn RouterExtension>) -> Result<()> {
        // an extension may read any channel (classes are formed only without one)
        self.settle();
        self.check_node("node", node)?;
        if self.exts[node.index()].is_some() {
            return Err(SimError::ExtensionPresent { field: "node", node: self.node_name(node).to_string() });
        }
        self.exts[node.index()] = Some(ExtSlot { ext, armed: None });
        self.nodes[node.index()].has_ext = true;
        self.ext_count += 1;
        self.schedule(self.now, Ev::ExtStart { node });
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
        self.settle();
        self.check_channel("channel", ch)?;
        if interval.is_zero() {
            return Err(SimError::invalid("interval", 0, "must be positive"));
        }
        if self.channels[ch.index()].series.is_none() {
            self.channels[ch.index()].series = Some(Box::new(ChannelSeries { interval, ..Default::default() }));
            self.schedule(self.now, Ev::Sample { ch });
        }
        Ok(())
    }
}
