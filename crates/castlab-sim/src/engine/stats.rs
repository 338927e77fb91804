//! Counters and records the engine keeps, and the accessors that read results.

use castlab_core::{Agent, AgentId, ChannelId, Duration, GroupId, NodeId, RouterExtension};

use super::link::{ChannelSeries, ChannelStats};
use super::Simulator;

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
    /// Lost to a link that went down (queued, serialised or on the wire then, or sent onto it
    /// while down).
    pub link_down: u64,
    pub ext_drops: u64,
    pub ext_consumed: u64,
    pub delivered_local: u64,
    pub no_listener: u64,
    pub no_route: u64,
    pub mc_unwanted: u64,
    pub in_queues: u64,
    pub in_transmission: u64,
    pub in_flight: u64,
    /// Sent by an agent and still waiting out its phase-randomisation delay.
    pub in_sender: u64,
}

impl Conservation {
    pub fn accounted(&self) -> u64 {
        self.queue_drops
            + self.lost_random
            + self.link_down
            + self.ext_drops
            + self.ext_consumed
            + self.delivered_local
            + self.no_listener
            + self.no_route
            + self.mc_unwanted
            + self.in_queues
            + self.in_transmission
            + self.in_flight
            + self.in_sender
    }
    pub fn holds(&self) -> bool {
        self.created == self.accounted()
    }
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

/// Counters of the engine's own work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    pub events: u64,
    /// Packets serialised onto links (one per hop).
    pub forwarded: u64,
}

impl Simulator {
    /// Results are read after `run` or `settle`, not between `advance` calls (debug builds
    /// check).
    #[inline]
    fn debug_settled(&self) {
        debug_assert!(self.fan_outs_settled(), "results read after `advance` without `settle`");
    }

    pub fn engine_stats(&self) -> EngineStats {
        self.stats
    }

    pub fn channel_stats(&self, ch: ChannelId) -> Option<&ChannelStats> {
        self.debug_settled();
        self.channels.get(ch.index()).map(|c| &c.stats)
    }

    pub fn channel_series(&self, ch: ChannelId) -> Option<&ChannelSeries> {
        self.channels.get(ch.index()).and_then(|c| c.series.as_deref())
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
        self.debug_settled();
        self.nodes.get(n.index()).map(|d| &d.stats)
    }

    pub fn timelines(&self) -> &Timelines {
        &self.timelines
    }

    /// Borrow an agent as its concrete type.
    pub fn agent<T: Agent>(&self, a: AgentId) -> Option<&T> {
        self.debug_settled();
        self.agents.get(a.index()).and_then(|s| s.agent.as_any().downcast_ref::<T>())
    }

    /// Borrow an agent as `Any`, for a caller that tries several types.
    pub fn agent_any(&self, a: AgentId) -> Option<&dyn core::any::Any> {
        self.debug_settled();
        self.agents.get(a.index()).map(|s| s.agent.as_any())
    }

    /// Borrow the router extension of a node as `Any`.
    pub fn extension_any(&self, n: NodeId) -> Option<&dyn core::any::Any> {
        Some(self.exts.get(n.index())?.as_ref()?.ext.as_any())
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
        self.groups.get(g.index()).and_then(|grp| grp.mc.get(n.index())).is_some_and(|st| st.oifs.contains(&ch))
    }

    /// Joins that could not graft because the source was unreachable.
    pub fn multicast_unreachable(&self) -> u64 {
        self.mc_unreachable
    }

    pub fn conservation(&self) -> Conservation {
        self.debug_settled();
        let mut c = Conservation { created: self.created, in_sender: self.in_sender, ..Default::default() };
        for ch in &self.channels {
            c.queue_drops += ch.stats.drops();
            c.lost_random += ch.stats.lost_random;
            c.link_down += ch.stats.drops_link_down;
            c.ext_drops += ch.stats.ext_drops;
            c.in_queues += ch.queue.len() as u64;
            // a token-bucket channel waiting for tokens is busy with its packet still queued
            c.in_transmission += (ch.busy && !ch.bucket.as_ref().is_some_and(|b| b.waiting)) as u64;
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
        debug_assert_eq!(self.pool.live, c.in_queues + c.in_transmission + c.in_flight + c.in_sender);
        c
    }

    /// Entries the event queue has popped: `engine_stats().events` counts every event, and a
    /// batch of link events (see `Simulator::schedule_link`) is one entry.
    pub fn queue_pops(&self) -> u64 {
        self.queue.pops
    }

    /// Packets currently held by the engine (queued, on the wire, being serialised, or waiting
    /// out a phase-randomisation delay at their sender).
    pub fn packets_live(&self) -> u64 {
        self.pool.live
    }
}
