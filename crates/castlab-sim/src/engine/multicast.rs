//! Source-specific multicast trees: joins graft hop by hop toward the source, leaves prune
//! after the configured latency (see the engine's module documentation for the model).

use castlab_core::{AgentId, ChannelId, Duration, GroupId, NodeId};

use super::event::Ev;
use super::fanout::Touch;
use super::Simulator;

/// A node's state in one group. One cache line (aligned): a node that fans a packet out reads
/// its lengths; a receiver's leaf is read in `Group::leaf` instead.
#[derive(Clone)]
#[repr(align(64))]
pub(super) struct Mc {
    pub(super) oifs: Vec<ChannelId>,
    pub(super) members: Vec<AgentId>,
    /// `members[0]` (`NO_AGENT` when there is none), kept beside the lengths `is_leaf` reads so
    /// that `Group::sync_leaf` and the classes find a leaf's member without reading the list.
    pub(super) member0: AgentId,
    pub(super) on_tree: bool,
    pub(super) gen: u32,
    /// The channel the node grafted on toward the source (its reverse path when it grafted),
    /// `NO_CHANNEL` off the tree and at the source: a prune goes up it, and a route change
    /// is seen by comparing it with the route in force (`faults`).
    pub(super) up: ChannelId,
}

/// `Mc::up` of a node with no upstream channel.
pub(super) const NO_CHANNEL: ChannelId = ChannelId(u32::MAX);
/// `Mc::member0` of a node with no member.
pub(super) const NO_AGENT: AgentId = AgentId(u32::MAX);

impl Default for Mc {
    fn default() -> Self {
        Mc { oifs: Vec::new(), members: Vec::new(), member0: NO_AGENT, on_tree: false, gen: 0, up: NO_CHANNEL }
    }
}

impl Mc {
    /// One member here and no branch downstream: a receiver's leaf.
    #[inline]
    pub(super) fn is_leaf(&self) -> bool {
        self.members.len() == 1 && self.oifs.is_empty()
    }
}

pub(super) struct Group {
    pub(super) source: NodeId,
    pub(super) mc: Vec<Mc>,
    /// Per node, its member when the node is a receiver's leaf of this group (`Mc::is_leaf`,
    /// not the source), else `NO_AGENT`: what a copy arriving at a leaf reads, 4 bytes a node
    /// in one dense array instead of a cache line of `mc` per node, so that a fan-out to N
    /// leaves reads N/16 lines here. Kept by `sync_leaf` wherever a node's members or
    /// branches change.
    pub(super) leaf: Vec<AgentId>,
    /// A bit per channel, set when a graft made the channel an outgoing interface of its
    /// sending node's state in `mc`. A clear bit means the channel is not in that node's
    /// `oifs`; a set one that it may be (code that removes an interface need not clear it),
    /// and only then does a graft scan `oifs`. Scanning on every graft made a fan-out node's
    /// N grafts cost N²/2 comparisons.
    pub(super) oif_bits: Vec<u64>,
}

impl Group {
    pub(super) fn new(source: NodeId) -> Self {
        Group { source, mc: Vec::new(), leaf: Vec::new(), oif_bits: Vec::new() }
    }

    /// The state of `nodes` nodes, none of them on the tree but the source.
    pub(super) fn size_for(&mut self, nodes: usize) {
        self.mc = vec![Mc::default(); nodes];
        self.leaf = vec![NO_AGENT; nodes];
        if let Some(st) = self.mc.get_mut(self.source.index()) {
            st.on_tree = true;
        }
    }

    /// Bring `leaf[n]` in line with node `n`'s members and branches.
    #[inline]
    pub(super) fn sync_leaf(&mut self, n: NodeId) {
        let st = &self.mc[n.index()];
        self.leaf[n.index()] = if n != self.source && st.is_leaf() { st.member0 } else { NO_AGENT };
    }

    /// Set or clear channel `ch`'s bit; returns its old value.
    fn set_oif_bit(&mut self, ch: ChannelId, on: bool) -> bool {
        let (w, b) = ((ch.0 / 64) as usize, 1u64 << (ch.0 % 64));
        if self.oif_bits.len() <= w {
            if !on {
                return false;
            }
            self.oif_bits.resize(w + 1, 0);
        }
        let was = self.oif_bits[w] & b != 0;
        if on {
            self.oif_bits[w] |= b;
        } else {
            self.oif_bits[w] &= !b;
        }
        was
    }
}

impl Simulator {
    pub(super) fn join(&mut self, a: AgentId, g: GroupId) {
        let gi = g.index();
        if gi >= self.groups.len() {
            return; // agents are built with validated groups; nothing to join otherwise
        }
        let node = self.agents[a.index()].node;
        self.touch_member(Touch::Tree { group: g, node });
        if !self.agents[a.index()].joined.contains(&g) {
            self.agents[a.index()].joined.push(g);
        }
        let st = &mut self.groups[gi].mc[node.index()];
        if !st.members.contains(&a) {
            st.members.push(a);
        }
        st.member0 = st.members[0];
        st.gen = st.gen.wrapping_add(1);
        let on_tree = st.on_tree;
        self.groups[gi].sync_leaf(node);
        if !on_tree {
            self.graft_up(g, node, self.cfg.join_latency);
        }
    }

    pub(super) fn graft_up(&mut self, g: GroupId, n: NodeId, extra: Duration) {
        let source = self.groups[g.index()].source;
        match self.routes.next(n, source) {
            Some(ch) => {
                let st = &mut self.groups[g.index()].mc[n.index()];
                st.on_tree = true;
                st.up = ch;
                let c = &self.channels[ch.index()];
                let (at, epoch) = (self.now + extra + c.delay, c.downs);
                self.schedule(at, Ev::Graft { group: g, ch, epoch });
            }
            None => self.mc_unreachable += 1,
        }
    }

    /// Whether a graft or prune sent up `ch` when it had gone down `epoch` times gets there:
    /// not if the channel has gone down since (it was lost on the failed link).
    fn control_arrives(&self, ch: ChannelId, epoch: u32) -> bool {
        let c = &self.channels[ch.index()];
        !c.down && c.downs == epoch
    }

    pub(super) fn graft_arrive(&mut self, g: GroupId, ch: ChannelId, epoch: u32) {
        if !self.control_arrives(ch, epoch) {
            return;
        }
        let u = self.channels[ch.index()].to;
        self.touch_member(Touch::Tree { group: g, node: u });
        let c = &self.channels[ch.index()];
        let (u, oif) = (c.to, c.reverse);
        let grp = &mut self.groups[g.index()];
        let maybe = grp.set_oif_bit(oif, true);
        let st = &mut grp.mc[u.index()];
        if !maybe || !st.oifs.contains(&oif) {
            st.oifs.push(oif);
        }
        st.gen = st.gen.wrapping_add(1);
        let on_tree = st.on_tree;
        grp.sync_leaf(u);
        if !on_tree {
            self.graft_up(g, u, Duration::ZERO);
        }
    }

    pub(super) fn leave(&mut self, a: AgentId, g: GroupId) {
        let gi = g.index();
        if gi >= self.groups.len() {
            return;
        }
        let node = self.agents[a.index()].node;
        self.touch_member(Touch::Tree { group: g, node });
        self.agents[a.index()].joined.retain(|x| *x != g);
        let st = &mut self.groups[gi].mc[node.index()];
        st.members.retain(|m| *m != a);
        st.member0 = st.members.first().copied().unwrap_or(NO_AGENT);
        st.gen = st.gen.wrapping_add(1);
        self.groups[gi].sync_leaf(node);
        self.maybe_prune(g, node, self.cfg.leave_latency);
    }

    pub(super) fn maybe_prune(&mut self, g: GroupId, n: NodeId, after: Duration) {
        let grp = &mut self.groups[g.index()];
        let is_source = grp.source == n;
        let st = &mut grp.mc[n.index()];
        if is_source || !st.on_tree || !st.members.is_empty() || !st.oifs.is_empty() {
            return;
        }
        st.gen = st.gen.wrapping_add(1);
        let gen = st.gen;
        self.schedule(self.now + after, Ev::PruneFire { group: g, node: n, gen });
    }

    pub(super) fn prune_fire(&mut self, g: GroupId, n: NodeId, gen: u32) {
        let st = &mut self.groups[g.index()].mc[n.index()];
        if st.gen != gen || !st.on_tree || !st.members.is_empty() || !st.oifs.is_empty() {
            return;
        }
        st.on_tree = false;
        let up = std::mem::replace(&mut st.up, NO_CHANNEL);
        self.send_prune(g, up);
    }

    /// A prune up channel `up` (the branch it grafted on), unless there is none or it is down.
    pub(super) fn send_prune(&mut self, g: GroupId, up: ChannelId) {
        if up == NO_CHANNEL || self.channels[up.index()].down {
            return;
        }
        let c = &self.channels[up.index()];
        let (at, epoch) = (self.now + c.delay, c.downs);
        self.schedule(at, Ev::PruneArrive { group: g, ch: up, epoch });
    }

    pub(super) fn prune_arrive(&mut self, g: GroupId, ch: ChannelId, epoch: u32) {
        if !self.control_arrives(ch, epoch) {
            return;
        }
        let u = self.channels[ch.index()].to;
        self.touch_member(Touch::Tree { group: g, node: u });
        let c = &self.channels[ch.index()];
        let (u, oif) = (c.to, c.reverse);
        let grp = &mut self.groups[g.index()];
        grp.set_oif_bit(oif, false);
        let st = &mut grp.mc[u.index()];
        st.oifs.retain(|o| *o != oif);
        st.gen = st.gen.wrapping_add(1);
        grp.sync_leaf(u);
        self.maybe_prune(g, u, Duration::ZERO);
    }
}
