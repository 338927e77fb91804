//! A group packet going down the tree at a node: the one entry ([`Simulator::fan_out`]) and
//! the one hook that keeps its fast paths exact ([`Simulator::touch_member`]).
//!
//! What a fan-out does is plain: the node's members get the packet, and every outgoing
//! interface of the group's tree gets a copy. Three fast paths give the same run for less:
//! - **leaf**: a packet off a link at a receiver's leaf (one member, nothing downstream, no
//!   extension) is only read there; its member gets it and is driven at once;
//! - **share**: copies that only wait, travel and are read by a receiver share one packet
//!   slot (the pool's references; the far node takes its own slot before anything could write
//!   it);
//! - **class**: a fan-out to `CLASS_MIN` or more alike receivers' leaves whose agents only
//!   count packets is handled as one packet (the engine's `class`, which gives the argument).
//!
//! A class defers what its copies do to its members (their links, nodes and agents), so every
//! site that changes or reads a member's link, node, agent, the group's membership or tree, or
//! a link's or node's failure state calls [`Simulator::touch_member`] first, and results are
//! read after [`Simulator::settle_fan_outs`]. Outside this file and `class`, the engine only
//! declares and initialises the class fields and hands a class its own events.

use castlab_core::{AgentId, ChannelId, GroupId, NodeId};

use super::class::{CLASS_MIN, NO_CLASS};
use super::multicast::NO_AGENT;
use super::pool::Slot;
use super::{Simulator, AHEAD};

/// What is about to change or be read (the argument of [`Simulator::touch_member`]).
#[derive(Clone, Copy, Debug)]
pub(super) enum Touch {
    /// A packet offered to channel `ch` (its queue, link and counters).
    Link(ChannelId),
    /// A packet reaching node `n` (its counters, its agents).
    Node(NodeId),
    /// An event of agent `a` (its start or timer).
    Agent(AgentId),
    /// Group `group`'s membership or branches at node `node` (a join, leave, graft or prune).
    Tree { group: GroupId, node: NodeId },
    /// A link or node failing or coming back.
    Failure,
}

impl Simulator {
    /// The hook: call it before `t` happens. A class whose member is touched is brought up to
    /// date or ended (the engine's `class` lists why each case needs which).
    #[inline(always)]
    pub(super) fn touch_member(&mut self, t: Touch) {
        match t {
            Touch::Link(ch) => {
                let c = self.channels[ch.index()].class;
                if c != NO_CLASS {
                    // a packet of its own on a class's member link: back to copies
                    self.end_class(c, true);
                }
            }
            Touch::Node(n) => {
                let c = self.nodes[n.index()].class;
                if c != NO_CLASS {
                    self.class_member_touched(c);
                }
            }
            Touch::Agent(a) => {
                let c = self.agents[a.index()].class;
                if c != NO_CLASS {
                    self.class_member_touched(c);
                }
            }
            Touch::Tree { group, node } => {
                if !self.classes.live.is_empty() {
                    self.class_tree_change(group, node);
                }
            }
            Touch::Failure => self.end_all_classes(true),
        }
    }

    /// Bring every fan-out handled as a class up to date (before results are read).
    pub(super) fn settle_fan_outs(&mut self) {
        self.end_all_classes(false);
    }

    /// Whether every fan-out's receivers are up to date (no class lives).
    pub(super) fn fan_outs_settled(&self) -> bool {
        self.classes.live.is_empty()
    }

    /// Packet `p` of group `g` at node `n`, on its way down the tree (`off_link`: it came off
    /// a link, and is not one going up to the root): the node's members get it, then every
    /// outgoing interface of the tree a copy.
    pub(super) fn fan_out(&mut self, g: GroupId, n: NodeId, p: Slot, off_link: bool) {
        let gr = &self.groups[g.index()];
        if off_link {
            // the leaf's member from the dense `leaf` array: the node's `mc` line stays unread
            let m = gr.leaf[n.index()];
            debug_assert_eq!(m, {
                let st = &gr.mc[n.index()];
                if gr.source != n && st.is_leaf() {
                    st.member0
                } else {
                    NO_AGENT
                }
            });
            if m != NO_AGENT && !self.nodes[n.index()].has_ext {
                return self.deliver_at_leaf(n, p, m);
            }
        }
        let st = &gr.mc[n.index()];
        if !st.members.is_empty() {
            self.nodes[n.index()].stats.delivered_local += 1;
            let pkt = &self.pool.slots[p.index()];
            for &m in &st.members {
                self.agents[m.index()].agent.handle_packet(self.now, pkt);
                self.dirty_agents.push(m);
            }
        }
        let k = st.oifs.len();
        if k == 0 {
            if st.members.is_empty() {
                self.nodes[n.index()].stats.mc_unwanted += 1;
            }
            self.pool.release(p);
            return;
        }
        let pkt = self.pool.slots[p.index()];
        if !self.groups[g.index()].mc[n.index()].members.is_empty() {
            // the original went to the local members; every interface gets a copy
            for i in 0..k {
                let ch = self.groups[g.index()].mc[n.index()].oifs[i];
                let q = self.pool.alloc(pkt);
                self.created += 1;
                self.forward(n, q, ch);
            }
            self.pool.release(p);
            return;
        }
        // the copies go on from here: the last one is the packet itself, in a slot of its own
        let p = self.pool.own(p);
        let ext = self.nodes[n.index()].has_ext;
        // many alike receivers: one class instead of k copies (`class`)
        if k >= CLASS_MIN && self.coalesce && !ext && self.fan_out_as_class(g, n, p) {
            return;
        }
        // without an extension at this node, `forward` is `enqueue`: called directly; and the
        // copies share the slot where nothing can write them on the way (a DropTail queue does
        // not mark; the far node takes its own slot unless the copy is for a receiver's leaf)
        for i in 0..k {
            let oifs = &self.groups[g.index()].mc[n.index()].oifs;
            let ch = oifs[i];
            if k >= self.prefetch_from {
                if let Some(&c) = oifs.get(i + AHEAD) {
                    self.prefetch_channel(c);
                }
            }
            let q = if i + 1 == k {
                p
            } else {
                self.created += 1;
                if !ext && self.coalesce && self.channels[ch.index()].queue.red().is_none() {
                    self.pool.share(p)
                } else {
                    self.pool.alloc(pkt)
                }
            };
            if ext {
                self.forward(n, q, ch);
            } else {
                self.enqueue(ch, q);
            }
        }
    }

    /// A packet off a link at a receiver's leaf: its one member `m` gets it and is driven at
    /// once instead of through `dirty_agents`. The same order: this is the last thing the
    /// packet's `Arrive` event does, and `drain_dirty`, which runs right after, pops the agent
    /// pushed last first: it would drive exactly this agent next (nothing else is pending: the
    /// lists are drained after every event, only events fill them, and the leaf has no
    /// extension). An agent that only counts packets, or says it is quiet after this one, has
    /// nothing to poll: its driving would send nothing, re-arm nothing (its deadline is
    /// unchanged and already armed) and report nothing, so it is skipped. The packet (maybe a shared copy) is only read.
    fn deliver_at_leaf(&mut self, n: NodeId, p: Slot, m: AgentId) {
        debug_assert_eq!(m, {
            let castlab_core::Dest::Group(g) = self.pool.slots[p.index()].dst else { unreachable!() };
            self.groups[g.index()].mc[n.index()].members[0]
        });
        self.nodes[n.index()].stats.delivered_local += 1;
        let s = &mut self.agents[m.index()];
        s.agent.handle_packet(self.now, &self.pool.slots[p.index()]);
        self.pool.release(p);
        debug_assert!(self.dirty_agents.is_empty() && self.dirty_exts.is_empty());
        if s.only_counts || s.agent.quiet_after_packet() {
            debug_assert!(s.agent.poll_transmit().is_none() && s.agent.poll_event().is_none());
            debug_assert!(s.agent.poll_timeout().is_none_or(|t| s.armed.is_some_and(|a| a <= t.max(self.now))));
        } else {
            self.drive_agent(m);
        }
    }
}
