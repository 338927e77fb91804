//! The router-extension contract: code attached to a router node.
//!
//! A layered-multicast-capable router, a breadcrumb router and PGM NAK aggregation are router
//! extensions. An extension sees each packet when it arrives at its node
//! ([`RouterExtension::on_arrival`]) and again at each output interface the packet would be
//! forwarded on ([`RouterExtension::on_forward`]); it may let the packet pass, drop it, or (on
//! arrival) consume it; it may rewrite the packet in place (marking, header fields). It sends
//! its own packets and sets a timer in the same sans-IO way as agents: the driver drains
//! [`RouterExtension::poll_transmit`] and re-reads [`RouterExtension::poll_timeout`] after every
//! call into the extension. Through [`NetView`] it reads its node's interfaces and their output
//! queues' instantaneous and averaged lengths.

use crate::ids::{ChannelId, GroupId, NodeId};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::Instant;

/// What to do with a packet an extension has seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Carry on as the router normally would.
    Forward,
    /// Discard it (counted as dropped by the extension).
    Drop,
    /// The extension took it (only meaningful on arrival); the router does nothing more.
    Consume,
}

/// A packet an extension asks its router to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouterSend {
    /// Route it from this node as if it had arrived here (unicast or multicast forwarding).
    Route(Packet),
    /// Put it on this output channel of the node, bypassing routing (e.g. a request sent
    /// toward the upstream neighbour, or a reply down one branch).
    Via(ChannelId, Packet),
}

/// What a router extension may read of its node and the network.
pub trait NetView {
    fn node(&self) -> NodeId;
    /// The node's output channels (one per attached link direction), in creation order.
    fn out_channels(&self) -> &[ChannelId];
    /// The neighbour at the far end of one of this node's output channels.
    fn channel_peer(&self, ch: ChannelId) -> NodeId;
    /// The output channel of the neighbour `peer` that leads back to this node, if linked.
    fn reverse_channel(&self, ch: ChannelId) -> Option<ChannelId>;
    /// Packets waiting in (not yet being sent by) this channel's output queue.
    fn queue_len_pkts(&self, ch: ChannelId) -> usize;
    /// The channel's exponentially averaged queue length (RED's average on a RED queue).
    fn queue_avg_pkts(&self, ch: ChannelId) -> f64;
    fn queue_limit_pkts(&self, ch: ChannelId) -> usize;
    fn channel_rate_bps(&self, ch: ChannelId) -> u64;
    /// This node's output channel toward `dst` on the unicast shortest path (None at `dst`).
    fn route_channel(&self, dst: NodeId) -> Option<ChannelId>;
    /// The source node of a group, if the group exists.
    fn group_source(&self, group: GroupId) -> Option<NodeId>;
}

/// Code attached to a router. Default methods let every packet through.
pub trait RouterExtension: crate::agent::AsAny {
    /// Called once when the run starts, with the extension's private random stream.
    fn handle_start(&mut self, _now: Instant, _rng: Rng, _net: &dyn NetView) {}
    /// A packet arrived on `from` (None: sent by an agent on this node, or by the extension).
    fn on_arrival(
        &mut self,
        _now: Instant,
        _pkt: &mut Packet,
        _from: Option<ChannelId>,
        _net: &dyn NetView,
    ) -> Verdict {
        Verdict::Forward
    }
    /// The packet is about to be queued on output channel `out`.
    fn on_forward(&mut self, _now: Instant, _pkt: &mut Packet, _out: ChannelId, _net: &dyn NetView) -> Verdict {
        Verdict::Forward
    }
    fn handle_timeout(&mut self, _now: Instant, _net: &dyn NetView) {}
    fn poll_transmit(&mut self) -> Option<RouterSend> {
        None
    }
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}
