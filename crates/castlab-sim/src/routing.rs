//! Static shortest-path unicast routing.
//!
//! Routes are computed per destination, lazily, the first time a packet or a multicast tree
//! needs that destination: Dijkstra from the destination over reversed channels gives every
//! node's next channel toward it. Costs are the links' configured costs (1 each by default,
//! i.e. hop count). Ties are broken deterministically: the heap orders by (distance, node id)
//! and a node keeps the first (lowest-cost, then lowest channel id) channel found.
//! Computing a column allocates once per destination; look-ups afterwards are indexing.
//!
//! A channel that is down (a failed link or node, see the engine's `faults`) is left out of
//! the graph; setting a channel's state drops every computed column, so routes are computed
//! anew on the topology that holds from then on (as ns-2's centralised `rtproto Session`
//! recomputes at once on `rtmodel-at`).

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use castlab_core::{ChannelId, NodeId};

pub(crate) const NONE: u32 = u32::MAX;

/// The graph as routing sees it: for each node, its incoming channels as (from, channel, cost).
#[derive(Default, Debug)]
pub(crate) struct Routes {
    /// in_edges[v] = channels whose far end is v: (from node, channel, cost)
    in_edges: Vec<Vec<(u32, u32, u64)>>,
    /// columns[dst][node] = next channel from node toward dst (NONE if none or node == dst)
    columns: RefCell<Vec<Option<Box<[u32]>>>>,
    /// down[channel]: the channel is out of the graph.
    down: Vec<bool>,
}

impl Routes {
    pub fn new(n_nodes: usize) -> Self {
        Routes { in_edges: vec![Vec::new(); n_nodes], columns: RefCell::new(vec![None; n_nodes]), down: Vec::new() }
    }

    pub fn add_channel(&mut self, from: NodeId, to: NodeId, ch: ChannelId, cost: u64) {
        self.in_edges[to.index()].push((from.0, ch.0, cost));
        if self.down.len() <= ch.index() {
            self.down.resize(ch.index() + 1, false);
        }
    }

    /// Take channel `ch` out of the graph (`down`) or put it back; every route is recomputed
    /// on its next look-up.
    pub fn set_down(&mut self, ch: ChannelId, down: bool) {
        if let Some(d) = self.down.get_mut(ch.index()) {
            if *d != down {
                *d = down;
                self.columns.get_mut().iter_mut().for_each(|c| *c = None);
            }
        }
    }

    /// Next channel from `node` toward `dst`; None if `node == dst` or unreachable.
    pub fn next(&self, node: NodeId, dst: NodeId) -> Option<ChannelId> {
        let mut cols = self.columns.borrow_mut();
        let col = cols[dst.index()].get_or_insert_with(|| self.compute(dst));
        match col[node.index()] {
            NONE => None,
            c => Some(ChannelId(c)),
        }
    }

    fn compute(&self, dst: NodeId) -> Box<[u32]> {
        let n = self.in_edges.len();
        let mut dist = vec![u64::MAX; n];
        let mut next = vec![NONE; n].into_boxed_slice();
        let mut heap = BinaryHeap::new();
        dist[dst.index()] = 0;
        heap.push(Reverse((0u64, dst.0)));
        while let Some(Reverse((d, v))) = heap.pop() {
            if d > dist[v as usize] {
                continue;
            }
            for &(u, ch, cost) in &self.in_edges[v as usize] {
                if self.down[ch as usize] {
                    continue;
                }
                let nd = d.saturating_add(cost);
                let ui = u as usize;
                if nd < dist[ui] || (nd == dist[ui] && ch < next[ui] && ui != dst.index()) {
                    let improved = nd < dist[ui];
                    dist[ui] = nd;
                    next[ui] = ch;
                    if improved {
                        heap.push(Reverse((nd, u)));
                    }
                }
            }
        }
        next
    }
}
