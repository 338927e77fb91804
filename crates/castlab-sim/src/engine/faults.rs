//! Links and nodes that fail and come back, scheduled like ns-2's `rtmodel-at`.
//!
//! # The model
//! A duplex link is set down or up as a whole (both channels), as ns-2's `$ns rtmodel-at T
//! down|up $n1 $n2`; a node that fails takes every link of it down with it, and coming back
//! brings them up, unless a link was set down by itself (ns-2's `rtmodel-at T down $n`). A
//! channel is down while its link is set down or either end node is down.
//!
//! When a channel goes down, what it holds is lost, as ns-2's `Link down` resets the link's
//! connectors (its queue and its delay line): the packets in its queue, the one being
//! serialised and those on the wire. While it is down, a packet offered to it is dropped (ns-2's
//! `DynamicLink` drops what reaches a link that is down). All of them count in the channel's
//! `drops_link_down`, so packet conservation still holds.
//!
//! Routes are recomputed at the instant of the change on the topology in force, as ns-2's
//! centralised `rtproto Session` does (castlab has no routing protocol whose convergence time
//! would matter; the default static routing of ns-2 would not reroute at all). A packet that
//! finds no route is counted as `no_route` at the node that holds it.
//!
//! Source-specific trees follow the new reverse paths at once: a node whose branch leaves from
//! a failed interface drops that branch (as a router drops an interface that went down), and
//! every node on a tree whose route toward the group's source changed leaves its old upstream
//! with a prune (if that link still works) and grafts on its new reverse path, hop by hop as
//! any graft, if it still has members or branches. A node cut off from the source (no route)
//! leaves the tree and keeps its members and branches; it grafts again when a route comes
//! back. Grafts and prunes on their way over a link when it fails are lost with it.
//!
//! What keeps running: the agents and router extensions of a failed node go on with their
//! timers, cut off from the network (ns-2's agents on a node that is down do likewise); a
//! host that "crashes and restarts" is modelled by the protocol, not here. Packets already
//! waiting out the phase-randomisation delay at a sender enter its node as usual.
//!
//! Without scheduled failures nothing here runs, and a run is the run without this module,
//! byte for byte.

use castlab_core::{ChannelId, Duration, GroupId, Instant, NodeId};

use super::event::Ev;
use super::fanout::Touch;
use super::multicast::NO_CHANNEL;
use super::pool::Slot;
use super::Simulator;
use crate::error::{Result, SimError};

impl Simulator {
    /// Schedule the duplex link that channel `ch` belongs to (both directions) to go down
    /// (`up` false) or come back at `at`.
    pub fn schedule_link_state(&mut self, at: Instant, ch: ChannelId, up: bool) -> Result<()> {
        self.check_channel("link", ch)?;
        self.check_event_time(at)?;
        self.schedule(at, Ev::LinkState { ch, up });
        Ok(())
    }

    /// Schedule node `n` to fail (`up` false: every link of it goes down) or come back at `at`.
    pub fn schedule_node_state(&mut self, at: Instant, n: NodeId, up: bool) -> Result<()> {
        if n.index() >= self.nodes.len() {
            return Err(SimError::MissingNodeId { field: "node", id: n.0 });
        }
        self.check_event_time(at)?;
        self.schedule(at, Ev::NodeState { node: n, up });
        Ok(())
    }

    fn check_event_time(&self, at: Instant) -> Result<()> {
        if at < self.now {
            return Err(SimError::InPast { field: "at", value: at.as_secs_f64(), now: self.now.as_secs_f64() });
        }
        Ok(())
    }

    /// Whether channel `ch` is up now (false for a channel that does not exist).
    pub fn channel_up(&self, ch: ChannelId) -> bool {
        self.channels.get(ch.index()).is_some_and(|c| !c.down)
    }

    /// Whether node `n` is up now (false for a node that does not exist).
    pub fn node_up(&self, n: NodeId) -> bool {
        self.nodes.get(n.index()).is_some_and(|d| !d.down)
    }

    /// The next channel from `node` toward `dst` on the routes in force (None: `node == dst`,
    /// no route, or no such node). Before the run starts, routes are not built yet: None.
    pub fn route_next(&self, node: NodeId, dst: NodeId) -> Option<ChannelId> {
        if !self.frozen || node.index() >= self.nodes.len() || dst.index() >= self.nodes.len() {
            return None;
        }
        self.routes.next(node, dst)
    }

    pub(super) fn set_link_state(&mut self, ch: ChannelId, up: bool) {
        self.touch_member(Touch::Failure);
        let rev = self.channels[ch.index()].reverse;
        for c in [ch, rev] {
            self.channels[c.index()].forced_down = !up;
        }
        self.refresh(&[ch, rev]);
    }

    pub(super) fn set_node_state(&mut self, n: NodeId, up: bool) {
        self.touch_member(Touch::Failure);
        self.nodes[n.index()].down = !up;
        let out = &self.nodes[n.index()].out;
        let chans: Vec<ChannelId> =
            out.iter().copied().chain(out.iter().map(|c| self.channels[c.index()].reverse)).collect();
        self.refresh(&chans);
    }

    /// Bring the channels in `chans` to the state their link and end nodes call for; if any
    /// changed, recompute the routes and re-graft the trees.
    fn refresh(&mut self, chans: &[ChannelId]) {
        let mut changed = false;
        for &ch in chans {
            let c = &self.channels[ch.index()];
            let down = c.forced_down || self.nodes[c.from.index()].down || self.nodes[c.to.index()].down;
            if down == c.down {
                continue;
            }
            changed = true;
            if down {
                self.fail_channel(ch);
            } else {
                self.channels[ch.index()].down = false;
                self.routes.set_down(ch, false);
            }
        }
        if changed {
            self.retree();
        }
    }

    /// Channel `ch` goes down: what it holds is lost (module doc), routing leaves it out, and
    /// the trees' branches on it are cut.
    fn fail_channel(&mut self, ch: ChannelId) {
        let c = &mut self.channels[ch.index()];
        c.down = true;
        c.downs = c.downs.wrapping_add(1);
        while let Some(p) = c.queue.pop() {
            c.stats.drops_link_down += 1;
            self.pool.release(Slot(p));
        }
        let c = &mut self.channels[ch.index()];
        if c.busy {
            c.tx_doomed = true;
        }
        // every packet on the wire now arrives before any sent later (one delay, in order)
        c.doomed = c.in_flight;
        let from = c.from;
        self.routes.set_down(ch, true);
        for g in 0..self.groups.len() {
            let st = &mut self.groups[g].mc[from.index()];
            if st.oifs.contains(&ch) {
                st.oifs.retain(|&o| o != ch);
                st.gen = st.gen.wrapping_add(1);
                self.groups[g].sync_leaf(from);
                self.maybe_prune(GroupId(g as u32), from, Duration::ZERO);
            }
        }
    }

    /// Every tree onto the reverse paths in force (module doc). Nodes and groups in index
    /// order, so the grafts and prunes are scheduled in one order for a given run.
    fn retree(&mut self) {
        for g in 0..self.groups.len() {
            let source = self.groups[g].source;
            for n in 0..self.nodes.len() {
                if n == source.index() {
                    continue;
                }
                let st = &self.groups[g].mc[n];
                let busy = !st.members.is_empty() || !st.oifs.is_empty();
                if st.on_tree {
                    let now_up = self.routes.next(NodeId(n as u32), source).unwrap_or(NO_CHANNEL);
                    if now_up == st.up {
                        continue;
                    }
                    let st = &mut self.groups[g].mc[n];
                    let old = std::mem::replace(&mut st.up, NO_CHANNEL);
                    st.on_tree = false;
                    st.gen = st.gen.wrapping_add(1);
                    self.send_prune(GroupId(g as u32), old);
                    if busy {
                        self.graft_up(GroupId(g as u32), NodeId(n as u32), Duration::ZERO);
                    }
                } else if busy {
                    // cut off before: graft again if a route came back
                    if self.routes.next(NodeId(n as u32), source).is_some() {
                        self.graft_up(GroupId(g as u32), NodeId(n as u32), Duration::ZERO);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use castlab_core::{Addr, AgentId, ChannelId, Dest, Duration, GroupId, Instant, NodeId};
    use castlab_proto::{CbrSource, CbrStream, LayeredSink};

    use crate::{LinkConfig, QueueConfig, SimError, Simulator};

    fn secs(s: f64) -> Instant {
        Instant::from_secs_f64(s)
    }

    fn link(rate: f64, delay: f64, limit: usize) -> LinkConfig {
        LinkConfig::new(rate, delay, QueueConfig::DropTail { limit_pkts: limit })
    }

    /// A diamond: S–A–D is the shorter path (cost 1 each), S–B–D the longer one (cost 2 on
    /// B–D), so routes and trees move to B only when the A side fails.
    struct Diamond {
        sim: Simulator,
        n: [NodeId; 4],
        sa: (ChannelId, ChannelId),
        ad: (ChannelId, ChannelId),
        sb: (ChannelId, ChannelId),
        bd: (ChannelId, ChannelId),
    }

    fn diamond(seed: u64) -> Diamond {
        let mut sim = Simulator::new(seed);
        let n = ["S", "A", "B", "D"].map(|x| sim.add_node(x).unwrap());
        let [s, a, b, d] = n;
        let sa = sim.add_link(s, a, &link(10e6, 0.005, 50)).unwrap();
        let ad = sim.add_link(a, d, &link(10e6, 0.005, 50)).unwrap();
        let sb = sim.add_link(s, b, &link(10e6, 0.005, 50)).unwrap();
        let mut l = link(10e6, 0.005, 50);
        l.cost = 2;
        let bd = sim.add_link(b, d, &l).unwrap();
        Diamond { sim, n, sa, ad, sb, bd }
    }

    fn sink(sim: &Simulator, a: AgentId) -> &LayeredSink {
        sim.agent::<LayeredSink>(a).unwrap()
    }

    /// Arrivals a recording sink saw in [t0, t1) seconds.
    fn arrivals_between(k: &LayeredSink, t0: f64, t1: f64) -> usize {
        let (a, b) = ((t0 * 1e9) as u64, (t1 * 1e9) as u64);
        k.records.arr_time_ns.iter().filter(|&&t| t >= a && t < b).count()
    }

    /// A unicast CBR flow S→D (port 9) and its recording sink.
    fn unicast_flow(dm: &mut Diamond, rate: f64) -> AgentId {
        let (s, d) = (dm.n[0], dm.n[3]);
        let k = dm.sim.add_agent(d, Some(9), Instant::ZERO, Box::new(LayeredSink::recording(vec![], vec![]))).unwrap();
        let st = CbrStream::new(Dest::Unicast(Addr::new(d, 9)), rate, 0);
        let src = CbrSource::try_new(vec![st], 1000, 1, Instant::ZERO, Instant::MAX, false).unwrap();
        dm.sim.add_agent(s, None, Instant::ZERO, Box::new(src)).unwrap();
        k
    }

    /// One group rooted at S with a CBR source, and a recording sink at D joined from 0.
    fn multicast_flow(dm: &mut Diamond, rate: f64) -> (GroupId, AgentId) {
        let (s, d) = (dm.n[0], dm.n[3]);
        let g = dm.sim.add_group(s).unwrap();
        let src = CbrSource::try_layered(&[g], &[rate], 1000, 1, Instant::ZERO, Instant::MAX, false).unwrap();
        dm.sim.add_agent(s, None, Instant::ZERO, Box::new(src)).unwrap();
        let k = dm.sim.add_agent(
            d,
            None,
            Instant::ZERO,
            Box::new(LayeredSink::recording(vec![g], vec![(Instant::ZERO, 1)])),
        );
        (g, k.unwrap())
    }

    #[test]
    fn a_failed_link_reroutes_unicast_and_its_repair_restores_the_short_path() {
        let mut dm = diamond(1);
        let k = unicast_flow(&mut dm, 1e6);
        let (s, a, d) = (dm.n[0], dm.n[1], dm.n[3]);
        dm.sim.schedule_link_state(secs(2.0), dm.ad.0, false).unwrap();
        dm.sim.schedule_link_state(secs(4.0), dm.ad.0, true).unwrap();
        dm.sim.run(secs(1.0)).unwrap();
        assert_eq!(dm.sim.route_next(s, d), Some(dm.sa.0));
        dm.sim.run(secs(3.0)).unwrap();
        assert!(!dm.sim.channel_up(dm.ad.0) && !dm.sim.channel_up(dm.ad.1), "both directions go down");
        assert_eq!(dm.sim.route_next(s, d), Some(dm.sb.0));
        // A still routes toward D, now back through S
        assert_eq!(dm.sim.route_next(a, d), Some(dm.sa.1));
        dm.sim.run(secs(6.0)).unwrap();
        assert_eq!(dm.sim.route_next(s, d), Some(dm.sa.0));
        let rx = sink(&dm.sim, k);
        // 125 packets/s: delivery goes on through B while A–D is down, and through A after
        assert!(arrivals_between(rx, 2.1, 3.9) > 200, "{}", arrivals_between(rx, 2.1, 3.9));
        assert!(arrivals_between(rx, 4.1, 6.0) > 200);
        let bd = dm.sim.channel_stats(dm.bd.0).unwrap();
        assert!(bd.delivered > 200 && bd.delivered < 260, "B carried the detour only: {}", bd.delivered);
        let c = dm.sim.conservation();
        assert!(c.holds(), "{c:?}");
    }

    #[test]
    fn what_a_link_holds_when_it_fails_is_dropped_and_counted_by_cause() {
        // one link, a source at twice its rate that stops at 1 s: a full queue, a packet being
        // serialised and packets on the wire when the link fails at 1 s
        let mut sim = Simulator::new(3);
        let x = sim.add_node("X").unwrap();
        let y = sim.add_node("Y").unwrap();
        let (xy, _) = sim.add_link(x, y, &link(1e6, 0.050, 30)).unwrap();
        sim.add_agent(y, Some(9), Instant::ZERO, Box::new(LayeredSink::new(vec![], vec![]))).unwrap();
        let st = CbrStream::new(Dest::Unicast(Addr::new(y, 9)), 2e6, 0);
        let src = CbrSource::try_new(vec![st], 1000, 1, Instant::ZERO, secs(0.9), false).unwrap();
        sim.add_agent(x, None, Instant::ZERO, Box::new(src)).unwrap();
        let down = secs(1.0) + Duration::from_nanos(1);
        sim.schedule_link_state(down, xy, false).unwrap();
        sim.run(secs(1.0)).unwrap();
        let before = sim.conservation();
        let held = before.in_queues + before.in_transmission + before.in_flight;
        assert!(before.in_queues > 10 && before.in_transmission == 1 && before.in_flight > 3, "{before:?}");
        sim.run(secs(2.0)).unwrap();
        let st = sim.channel_stats(xy).unwrap();
        assert_eq!(st.drops_link_down, held, "every packet the link held, and only those");
        let after = sim.conservation();
        assert_eq!(after.link_down, held);
        assert_eq!(after.in_queues + after.in_transmission + after.in_flight, 0);
        assert_eq!(after.delivered_local, before.delivered_local, "nothing arrives after the failure");
        assert!(after.holds(), "{after:?}");
    }

    #[test]
    fn a_tree_regrafts_on_the_new_reverse_path_and_back_after_repair() {
        let mut dm = diamond(2);
        let (g, k) = multicast_flow(&mut dm, 1e6);
        let [s, a, b, _d] = dm.n;
        dm.sim.schedule_link_state(secs(2.0), dm.ad.0, false).unwrap();
        dm.sim.schedule_link_state(secs(4.0), dm.ad.0, true).unwrap();
        dm.sim.run(secs(1.9)).unwrap();
        assert!(dm.sim.forwards(g, s, dm.sa.0) && dm.sim.forwards(g, a, dm.ad.0));
        assert!(!dm.sim.forwards(g, s, dm.sb.0) && !dm.sim.forwards(g, b, dm.bd.0));
        dm.sim.run(secs(2.5)).unwrap();
        // the failed branch is cut, A pruned itself off, D grafted through B
        assert!(!dm.sim.forwards(g, a, dm.ad.0));
        assert!(!dm.sim.forwards(g, s, dm.sa.0), "A, left without branches, pruned");
        assert!(dm.sim.forwards(g, s, dm.sb.0) && dm.sim.forwards(g, b, dm.bd.0));
        dm.sim.run(secs(6.0)).unwrap();
        // back on the short path, the detour pruned
        assert!(dm.sim.forwards(g, s, dm.sa.0) && dm.sim.forwards(g, a, dm.ad.0));
        assert!(!dm.sim.forwards(g, s, dm.sb.0) && !dm.sim.forwards(g, b, dm.bd.0));
        let rx = sink(&dm.sim, k);
        assert!(arrivals_between(rx, 2.1, 3.9) > 200, "{}", arrivals_between(rx, 2.1, 3.9));
        assert!(arrivals_between(rx, 4.1, 6.0) > 200);
        // no copies twice: each sequence number at most once
        let mut seqs = rx.records.arr_seq.clone();
        let n = seqs.len();
        seqs.sort_unstable();
        seqs.dedup();
        assert_eq!(seqs.len(), n, "duplicate deliveries");
        assert!(dm.sim.conservation().holds());
    }

    #[test]
    fn a_failed_node_takes_its_links_down_and_its_return_brings_them_back() {
        let mut dm = diamond(4);
        let (g, k) = multicast_flow(&mut dm, 1e6);
        let [s, a, b, d] = dm.n;
        // a link of A set down by itself stays down when A comes back
        dm.sim.schedule_node_state(secs(2.0), a, false).unwrap();
        dm.sim.schedule_link_state(secs(3.0), dm.sa.0, false).unwrap();
        dm.sim.schedule_node_state(secs(4.0), a, true).unwrap();
        dm.sim.run(secs(3.5)).unwrap();
        assert!(!dm.sim.node_up(a));
        for ch in [dm.sa.0, dm.sa.1, dm.ad.0, dm.ad.1] {
            assert!(!dm.sim.channel_up(ch));
        }
        assert_eq!(dm.sim.route_next(s, a), None, "A is cut off");
        assert_eq!(dm.sim.route_next(d, s), Some(dm.bd.1));
        dm.sim.run(secs(5.0)).unwrap();
        assert!(dm.sim.node_up(a) && dm.sim.channel_up(dm.ad.0) && !dm.sim.channel_up(dm.sa.0));
        // A is reachable again, but only through D: the tree stays on B
        assert_eq!(dm.sim.route_next(s, a), Some(dm.sb.0));
        assert!(dm.sim.forwards(g, b, dm.bd.0) && dm.sim.forwards(g, s, dm.sb.0));
        let rx = sink(&dm.sim, k);
        assert!(arrivals_between(rx, 2.1, 5.0) > 300);
        assert!(dm.sim.node_stats(a).unwrap().no_route == 0);
        assert!(dm.sim.conservation().holds());
    }

    #[test]
    fn a_receiver_cut_off_from_the_source_grafts_again_when_a_route_comes_back() {
        let mut dm = diamond(5);
        let (g, k) = multicast_flow(&mut dm, 1e6);
        let [s, _a, b, _d] = dm.n;
        // both ways to D fail: D has no route to S; then B–D comes back
        dm.sim.schedule_link_state(secs(2.0), dm.ad.0, false).unwrap();
        dm.sim.schedule_link_state(secs(2.0), dm.bd.0, false).unwrap();
        dm.sim.schedule_link_state(secs(3.0), dm.bd.0, true).unwrap();
        dm.sim.run(secs(2.9)).unwrap();
        assert!(!dm.sim.forwards(g, s, dm.sa.0) && !dm.sim.forwards(g, s, dm.sb.0), "nobody wants the group");
        assert!(dm.sim.multicast_unreachable() >= 1);
        dm.sim.run(secs(5.0)).unwrap();
        assert!(dm.sim.forwards(g, s, dm.sb.0) && dm.sim.forwards(g, b, dm.bd.0));
        let rx = sink(&dm.sim, k);
        assert_eq!(arrivals_between(rx, 2.1, 2.9), 0);
        assert!(arrivals_between(rx, 3.1, 5.0) > 200);
        assert!(dm.sim.conservation().holds());
    }

    #[test]
    fn a_graft_on_a_link_that_fails_under_it_is_lost_and_the_tree_takes_the_other_path() {
        let mut dm = diamond(6);
        let [s, a, b, d] = dm.n;
        let g = dm.sim.add_group(s).unwrap();
        let src = CbrSource::try_layered(&[g], &[1e6], 1000, 1, Instant::ZERO, Instant::MAX, false).unwrap();
        dm.sim.add_agent(s, None, Instant::ZERO, Box::new(src)).unwrap();
        // D joins at 1 s: its graft reaches A at 1.005 s, A's reaches S at 1.010 s; A–S fails
        // at 1.007 s, with A's graft on it
        let k = dm.sim.add_agent(d, None, secs(1.0), Box::new(LayeredSink::recording(vec![g], vec![(secs(1.0), 1)])));
        let k = k.unwrap();
        dm.sim.schedule_link_state(secs(1.007), dm.sa.0, false).unwrap();
        dm.sim.run(secs(3.0)).unwrap();
        assert!(!dm.sim.forwards(g, s, dm.sa.0));
        assert!(dm.sim.forwards(g, s, dm.sb.0) && dm.sim.forwards(g, b, dm.bd.0));
        assert!(!dm.sim.forwards(g, a, dm.ad.0), "A, whose upstream failed, pruned itself");
        assert!(arrivals_between(sink(&dm.sim, k), 1.1, 3.0) > 200);
        assert!(dm.sim.conservation().holds());
    }

    /// Everything observable of a run with failures, for comparing two runs.
    fn fingerprint(seed: u64) -> String {
        let mut dm = diamond(seed);
        let ku = unicast_flow(&mut dm, 3e6);
        let (_, km) = multicast_flow(&mut dm, 4e6);
        let [_, a, _, _] = dm.n;
        dm.sim.schedule_link_state(secs(0.5), dm.ad.0, false).unwrap();
        dm.sim.schedule_node_state(secs(0.9), a, false).unwrap();
        dm.sim.schedule_link_state(secs(1.2), dm.ad.0, true).unwrap();
        dm.sim.schedule_node_state(secs(1.5), a, true).unwrap();
        dm.sim.run(secs(3.0)).unwrap();
        let chans: Vec<_> =
            (0..dm.sim.channel_count() as u32).map(|c| dm.sim.channel_stats(ChannelId(c)).cloned()).collect();
        format!(
            "{:?} {:?} {:?} {:?} {:?}",
            dm.sim.conservation(),
            chans,
            sink(&dm.sim, ku).records.arr_time_ns,
            sink(&dm.sim, km).records.arr_seq,
            dm.sim.engine_stats()
        )
    }

    #[test]
    fn a_run_with_failures_is_a_pure_function_of_scenario_and_seed() {
        let one = fingerprint(11);
        assert_eq!(one, fingerprint(11));
        assert!(one.contains("link_down: ") && !one.contains("link_down: 0,"), "the failures caught packets");
    }

    #[test]
    fn bad_failure_events_are_refused_with_the_field_named() {
        let mut dm = diamond(1);
        assert!(matches!(
            dm.sim.schedule_link_state(secs(1.0), ChannelId(99), false),
            Err(SimError::UnknownChannel { field: "link", id: 99 })
        ));
        assert!(matches!(
            dm.sim.schedule_node_state(secs(1.0), NodeId(42), false),
            Err(SimError::MissingNodeId { field: "node", id: 42 })
        ));
        dm.sim.run(secs(2.0)).unwrap();
        assert!(matches!(
            dm.sim.schedule_link_state(secs(1.0), dm.sa.0, false),
            Err(SimError::InPast { field: "at", .. })
        ));
    }
}
