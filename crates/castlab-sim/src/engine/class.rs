//! Deferred fan-out: one packet's copies to many identical receivers, handled as one.
//!
//! # When
//! A node without an extension fans a group packet out on `CLASS_MIN` or more interfaces, and
//! every one of them is alike: the same rate and delay, an idle DropTail link with nothing
//! waiting, on the wire or lost on it, up, with no tap, series or Bernoulli loss, leading to a
//! receiver's leaf (one member, nothing downstream, no extension) whose agent only counts
//! packets (`Agent::packets_only_count`). The copies then leave at one instant, finish
//! serialisation at one instant and arrive at one instant, and what each arrival does (counters
//! on its channel and node, the agent's `handle_packet`) has no effect on anything else. Such a
//! fan-out becomes a *class*: its interfaces, their agents, and a log of the packets sent to
//! them, and it stays one for later packets of the group at that node while that stays true.
//! Another group whose fan-out at that node has the very same interfaces, in the same order,
//! to the same agents (a layered receiver's groups) joins the class: its packets go into the
//! same log, so each member still sees every packet in the order its link carried them.
//!
//! # Why the run is the same
//! Copy by copy, the fan-out's k `TxDone` events run as one batch at consecutive sequence
//! numbers, and so do the k `Arrive` events they schedule (`Simulator::schedule_link`). A
//! class pushes one event for each batch at the batch's first key and reserves the other k − 1
//! sequence numbers, so every other event keeps its place in the `(time, seq)` order. Those
//! two events only advance the packet through the log; what the copies would have done to
//! each member (its channel's counters and averaged queue length, its node's counter, its
//! agent) is done later, member by member over the logged packets in their order
//! ([`Simulator::flush_class`]). Nothing else reads that state while the class lives: every
//! path that could is a trigger that first brings it up to date or ends the class, through
//! the one hook `Simulator::touch_member` (the engine's `fanout`) or `settle`:
//! - a packet offered to a member's link (`enqueue`), or reaching a member's node by another
//!   way (`node_receive`), or an event of a member's agent: the class ends, unless nothing has
//!   arrived since it was last brought up to date (then the member's state is exact already);
//! - a join, leave, graft or prune of the group at the fan-out node or a member's node: ends;
//! - a link or node failing or coming back, and the end of `run` (results are read between
//!   runs): every class ends.
//!
//! When a class ends, every member's state is brought up to date, and its packets still being
//! serialised or on the wire go back to being k copies: the class's events then run copy by
//! copy, as the batches they stand for would have (`run_dead_class`). The equivalence test
//! (`engine::tests`) checks the whole observable state against runs without batching or
//! classes.

use castlab_core::{AgentId, ChannelId, Duration, GroupId, Instant, NodeId};

use super::event::{Entry, Ev};
use super::link::OPEN_LINKS;
use super::pool::Slot;
use super::{prefetch, Simulator, AHEAD};

/// A class: its index in `Simulator::classes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ClassId(pub(super) u32);

impl ClassId {
    #[inline(always)]
    pub(super) const fn index(self) -> usize {
        self.0 as usize
    }
}

/// `Channel::class`, `Node::class`, `AgentSlot::class` outside any class.
pub(super) const NO_CLASS: ClassId = ClassId(u32::MAX);
/// Fan-outs to fewer interfaces run copy by copy (a class's own events cost about as much).
pub(super) const CLASS_MIN: usize = 4;
/// Arrived packets a class logs before it applies them to its members: each member's state is
/// then touched once per this many packets instead of once per packet.
const FLUSH_AT: usize = 256;
/// After a class was refused or ended early, a (group, node) fan-out waits this long before it
/// tries again, doubled at each failure up to 2^16 times (about 65 s): each attempt reads
/// every interface once. A time, not a count of packets, so that a layered receiver's groups,
/// whose class ends for all of them at once, try again together.
const BACKOFF: Duration = Duration::from_millis(1);
const MAX_DOUBLINGS: u32 = 16;

/// How far a logged packet has gone: on the members' wires being serialised (`QUEUED`), then
/// propagating (`DEPARTED`), then arrived at every member (`ARRIVED`).
const QUEUED: u8 = 1;
const DEPARTED: u8 = 2;
const ARRIVED: u8 = 3;

/// One packet of a class.
struct Logged {
    pkt: Slot,
    size: u32,
    /// When it finished serialisation, and when it arrived (ns).
    t1: u64,
    t2: u64,
    /// How far it has gone, and how far its effects have been applied to the members.
    stage: u8,
    applied: u8,
}

#[derive(Default)]
pub(super) struct Class {
    live: bool,
    /// The groups whose fan-out at `node` this class is (one, or a layered receiver's).
    groups: Vec<GroupId>,
    node: NodeId,
    rate_bps: u64,
    delay: Duration,
    /// The member channels in the fan-out's interface order, and each one's agent.
    chans: Vec<ChannelId>,
    agents: Vec<AgentId>,
    log: std::collections::VecDeque<Logged>,
    /// Logged packets that have arrived and are not yet applied.
    arrived: usize,
    /// The class's events still in the event queue (it is reused only when none is).
    in_queue: u32,
}

/// Every class by index, the free indices, the live ones, and the (group, node) fan-outs big
/// enough for one.
#[derive(Default)]
pub(super) struct Classes {
    pub(super) all: Vec<Class>,
    pub(super) free: Vec<ClassId>,
    pub(super) live: Vec<ClassId>,
    pub(super) tries: Vec<ClassTry>,
    /// Classes formed, flushes, classes ended early, and groups that joined a class formed by
    /// another (read by the tests).
    pub(super) counts: (u64, u64, u64, u64),
}

/// A (group, node) fan-out big enough for a class: its class, or when it may try again.
pub(super) struct ClassTry {
    group: GroupId,
    node: NodeId,
    class: ClassId,
    /// No attempt before this time.
    next: Instant,
    fails: u32,
}

impl Simulator {
    /// Node `n` fans packet `p` of group `g` out on its `k` >= `CLASS_MIN` interfaces: as a
    /// class if it is or can become one (true), or not (false: the caller sends the copies).
    pub(super) fn fan_out_as_class(&mut self, g: GroupId, n: NodeId, p: Slot) -> bool {
        let t = match self.classes.tries.iter().position(|t| t.group == g && t.node == n) {
            Some(t) => t,
            None => {
                let t = ClassTry { group: g, node: n, class: NO_CLASS, next: Instant::ZERO, fails: 0 };
                self.classes.tries.push(t);
                self.classes.tries.len() - 1
            }
        };
        let tr = &self.classes.tries[t];
        let mut c = tr.class;
        if c == NO_CLASS {
            if self.now < tr.next || self.ext_count > 0 {
                return false;
            }
            match self.join_class(g, n).or_else(|| self.form_class(g, n)) {
                Some(new) => {
                    c = new;
                    self.classes.tries[t].class = c;
                }
                None => {
                    let now = self.now;
                    backoff(&mut self.classes.tries[t], now);
                    return false;
                }
            }
        }
        let cl = &self.classes.all[c.index()];
        if cl.log.back().is_some_and(|e| e.stage == QUEUED) {
            // the links are still serialising the last packet: this one would wait in queues
            self.end_class(c, true);
            return false;
        }
        let k = cl.chans.len() as u64;
        let size = self.pool.slots[p.index()].size_bytes;
        let t1 = self.now + Duration::transmission(size, cl.rate_bps);
        let t2 = t1 + cl.delay;
        let cl = &mut self.classes.all[c.index()];
        cl.log.push_back(Logged { pkt: p, size, t1: t1.as_nanos(), t2: t2.as_nanos(), stage: QUEUED, applied: 0 });
        cl.in_queue += 1;
        self.created += k - 1;
        self.push_class_event(t1.as_nanos(), k, Ev::ClassTx { class: c, pkt: p });
        true
    }

    /// Push a class event at the key the first of its `k` copies' events would have had, and
    /// reserve the other copies' sequence numbers.
    fn push_class_event(&mut self, time: u64, k: u64, ev: Ev) {
        self.seq += 1;
        self.queue.push(Entry { time, seq: self.seq, ev });
        self.seq += k - 1;
        self.last_links = [None; OPEN_LINKS];
    }

    /// A live class at node `n` whose interfaces and agents are exactly group `g`'s fan-out
    /// there: `g` joins it.
    fn join_class(&mut self, g: GroupId, n: NodeId) -> Option<ClassId> {
        let gr = &self.groups[g.index()];
        let oifs = &gr.mc[n.index()].oifs;
        let c = *self.classes.live.iter().find(|&&c| {
            let cl = &self.classes.all[c.index()];
            cl.node == n && cl.chans == *oifs
        })?;
        let cl = &self.classes.all[c.index()];
        for (&ch, &a) in cl.chans.iter().zip(&cl.agents) {
            let to = self.channels[ch.index()].to.index();
            let st = &gr.mc[to];
            if to == gr.source.index() || !st.is_leaf() || st.member0 != a {
                return None;
            }
        }
        self.classes.all[c.index()].groups.push(g);
        self.classes.counts.3 += 1;
        Some(c)
    }

    /// The fan-out of group `g` at node `n` as a class, if every interface qualifies (module
    /// doc); nothing changes when one does not.
    fn form_class(&mut self, g: GroupId, n: NodeId) -> Option<ClassId> {
        let gr = &self.groups[g.index()];
        let oifs = &gr.mc[n.index()].oifs;
        let first = &self.channels[oifs.first()?.index()];
        let (rate, delay) = (first.rate_bps, first.delay);
        let mut agents = Vec::with_capacity(oifs.len());
        for &ch in oifs {
            let c = &self.channels[ch.index()];
            let link_ok = c.class == NO_CLASS
                && !c.down
                && !c.busy
                && !c.tx_doomed
                && c.doomed == 0
                && c.tap.is_none()
                && c.series.is_none()
                && c.loss == 0.0
                && c.rate_bps == rate
                && c.delay == delay
                && !c.bucketed
                && c.queue.passes_through();
            if !link_ok {
                return None;
            }
            let to = c.to.index();
            let st = &gr.mc[to];
            let nd = &self.nodes[to];
            if to == gr.source.index() || nd.class != NO_CLASS || nd.down || nd.has_ext || !st.is_leaf() {
                return None;
            }
            let a = &self.agents[st.member0.index()];
            if !a.only_counts || a.class != NO_CLASS {
                return None;
            }
            agents.push(st.member0);
        }
        let chans = oifs.clone();
        let c = match self.classes.free.pop() {
            Some(c) => c,
            None => {
                self.classes.all.push(Class::default());
                ClassId((self.classes.all.len() - 1) as u32)
            }
        };
        for (&ch, &a) in chans.iter().zip(&agents) {
            let chn = &mut self.channels[ch.index()];
            chn.class = c;
            self.nodes[chn.to.index()].class = c;
            self.agents[a.index()].class = c;
        }
        let cl = &mut self.classes.all[c.index()];
        debug_assert!(cl.in_queue == 0 && cl.log.is_empty());
        let mut groups = std::mem::take(&mut cl.groups);
        groups.clear();
        groups.push(g);
        *cl = Class { live: true, groups, node: n, rate_bps: rate, delay, chans, agents, ..Class::default() };
        self.classes.live.push(c);
        self.classes.counts.0 += 1;
        Some(c)
    }

    /// The class's `TxDone` (its copies finished serialisation) or `Arrive` (they arrived).
    pub(super) fn class_event(&mut self, c: ClassId, pkt: Slot, arrive: bool) {
        let cl = &mut self.classes.all[c.index()];
        cl.in_queue -= 1;
        let k = cl.chans.len() as u64;
        // the run loop counted one event; the copies are k
        self.stats.events += k - 1;
        if !cl.live {
            return self.run_dead_class(c, pkt, arrive);
        }
        if !arrive {
            let e = cl.log.back_mut().expect("a class's TxDone has its packet logged");
            debug_assert!(e.stage == QUEUED && e.pkt == pkt);
            e.stage = DEPARTED;
            let t2 = e.t2;
            cl.in_queue += 1;
            self.stats.forwarded += k;
            self.push_class_event(t2, k, Ev::ClassArrive { class: c, pkt });
        } else {
            let e = cl.log.iter_mut().find(|e| e.stage == DEPARTED).expect("a class's Arrive has its packet logged");
            debug_assert!(e.pkt == pkt);
            e.stage = ARRIVED;
            cl.arrived += 1;
            if cl.arrived >= FLUSH_AT {
                self.flush_class(c);
                for t in self.classes.tries.iter_mut().filter(|t| t.class == c) {
                    t.fails = 0;
                }
            }
        }
    }

    /// A class event whose class has ended: its copies run one by one, as the batch it stands
    /// for (`run_batch`).
    fn run_dead_class(&mut self, c: ClassId, pkt: Slot, arrive: bool) {
        let chans = std::mem::take(&mut self.classes.all[c.index()].chans);
        let pf = chans.len() >= self.prefetch_from;
        for (i, &ch) in chans.iter().enumerate() {
            if pf {
                if let Some(&next) = chans.get(i + AHEAD) {
                    self.prefetch_channel(next);
                }
            }
            if arrive {
                if pf {
                    if let Some(&next) = chans.get(i + AHEAD / 2) {
                        self.prefetch_receiver(next, pkt);
                    }
                    if let Some(&next) = chans.get(i + AHEAD / 4) {
                        self.prefetch_agent(next, pkt);
                    }
                }
                self.arrive(ch, pkt, false);
            } else {
                self.tx_done(ch, pkt);
            }
            self.drain_dirty();
        }
        self.classes.all[c.index()].chans = chans;
        self.free_class_if_done(c);
    }

    /// An ended class with no event left in the queue is free for reuse.
    fn free_class_if_done(&mut self, c: ClassId) {
        let cl = &mut self.classes.all[c.index()];
        if !cl.live && cl.in_queue == 0 {
            cl.chans.clear();
            cl.agents.clear();
            self.classes.free.push(c);
        }
    }

    /// Apply what the logged packets did to every member, member by member (each member's
    /// state is then read once for all of them), and drop the packets that have arrived.
    pub(super) fn flush_class(&mut self, c: ClassId) {
        let cl = std::mem::take(&mut self.classes.all[c.index()]);
        let pf = cl.chans.len() >= self.prefetch_from;
        let busy = cl.log.back().is_some_and(|e| e.stage == QUEUED);
        for (i, (&ch, &a)) in cl.chans.iter().zip(&cl.agents).enumerate() {
            if pf {
                if let (Some(&nc), Some(&na)) = (cl.chans.get(i + 2), cl.agents.get(i + 2)) {
                    self.prefetch_member(nc, na);
                }
            }
            let chn = &mut self.channels[ch.index()];
            let nd = &mut self.nodes[chn.to.index()];
            let s = &mut self.agents[a.index()];
            for e in &cl.log {
                if e.applied < QUEUED {
                    // `enqueue` on an idle link with nothing waiting
                    chn.stats.arrivals += 1;
                    chn.stats.enqueued += 1;
                    let passed = chn.queue.pass_through();
                    debug_assert!(passed);
                }
                if e.applied < DEPARTED && e.stage >= DEPARTED {
                    // `tx_done`
                    chn.stats.departures += 1;
                    chn.stats.bytes_departed += e.size as u64;
                    chn.in_flight += 1;
                    chn.idle_since = Instant::from_nanos(e.t1);
                }
                if e.applied < ARRIVED && e.stage >= ARRIVED {
                    // `arrive`, then `deliver_at_leaf`
                    chn.in_flight -= 1;
                    chn.stats.delivered += 1;
                    nd.stats.delivered_local += 1;
                    s.agent.handle_packet(Instant::from_nanos(e.t2), &self.pool.slots[e.pkt.index()]);
                    debug_assert!(s.agent.poll_transmit().is_none() && s.agent.poll_event().is_none());
                }
            }
            chn.busy = busy;
        }
        let mut cl = cl;
        while cl.log.front().is_some_and(|e| e.stage == ARRIVED) {
            let e = cl.log.pop_front().expect("checked");
            self.pool.release(e.pkt);
        }
        for e in cl.log.iter_mut() {
            e.applied = e.stage;
        }
        cl.arrived = 0;
        self.classes.all[c.index()] = cl;
        self.classes.counts.1 += 1;
    }

    /// Hints for a member's channel, node, agent slot and agent (as `prefetch_receiver`).
    #[inline(always)]
    fn prefetch_member(&self, ch: ChannelId, a: AgentId) {
        self.prefetch_channel(ch);
        if let Some(c) = self.channels.get(ch.index()) {
            if let Some(nd) = self.nodes.get(c.to.index()) {
                prefetch(nd as *const super::Node as *const u8);
            }
        }
        if let Some(s) = self.agents.get(a.index()) {
            prefetch(s as *const super::AgentSlot as *const u8);
            let at = &*s.agent as *const dyn castlab_core::Agent as *const u8;
            prefetch(at);
            prefetch(at.wrapping_add(64));
            prefetch(at.wrapping_add(128));
        }
    }

    /// End class `c`: bring every member up to date, and give its packets still on the members'
    /// links back their k copies (its events in the queue then run copy by copy). `early`: it
    /// ended because of something a member or the tree did, not at the end of a run.
    pub(super) fn end_class(&mut self, c: ClassId, early: bool) {
        self.flush_class(c);
        let cl = &mut self.classes.all[c.index()];
        cl.live = false;
        let k = cl.chans.len() as u32;
        for e in cl.log.drain(..) {
            // the class held one reference for all k copies
            self.pool.refs[e.pkt.index()] += k - 1;
            self.pool.live += u64::from(k - 1);
        }
        for (&ch, &a) in cl.chans.iter().zip(&cl.agents) {
            let chn = &mut self.channels[ch.index()];
            chn.class = NO_CLASS;
            self.nodes[chn.to.index()].class = NO_CLASS;
            self.agents[a.index()].class = NO_CLASS;
        }
        self.free_class_if_done(c);
        self.classes.live.retain(|&x| x != c);
        for t in self.classes.tries.iter_mut().filter(|t| t.class == c) {
            t.class = NO_CLASS;
            if early {
                backoff(t, self.now);
            }
        }
        if early {
            self.classes.counts.2 += 1;
        }
    }

    /// End every class (before results are read, and when a link or node changes state).
    pub(super) fn end_all_classes(&mut self, early: bool) {
        while let Some(&c) = self.classes.live.last() {
            self.end_class(c, early);
        }
    }

    /// Group `g`'s tree changes at node `n`: end the class fanning out there or reaching a
    /// member there.
    pub(super) fn class_tree_change(&mut self, g: GroupId, n: NodeId) {
        let at_member = self.nodes[n.index()].class;
        if at_member != NO_CLASS && self.classes.all[at_member.index()].groups.contains(&g) {
            self.end_class(at_member, true);
        }
        if let Some(&c) = self.classes.live.iter().find(|&&c| {
            let cl = &self.classes.all[c.index()];
            cl.node == n && cl.groups.contains(&g)
        }) {
            self.end_class(c, true);
        }
    }

    /// Something other than the class's packets reaches a member (its node or its agent):
    /// the class ends unless the member's state is already exact (nothing arrived since the
    /// last flush; what is still on its way changes only counters, which add up).
    #[inline(never)]
    pub(super) fn class_member_touched(&mut self, c: ClassId) {
        if self.classes.all[c.index()].arrived > 0 {
            self.end_class(c, true);
        }
    }
}

/// A (group, node) fan-out's class was refused or ended early: no attempt for twice as long as
/// after the last failure.
fn backoff(t: &mut ClassTry, now: Instant) {
    t.fails = t.fails.saturating_add(1);
    t.next = now + Duration::from_nanos(BACKOFF.as_nanos() << t.fails.min(MAX_DOUBLINGS));
}
