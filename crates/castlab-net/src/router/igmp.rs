//! The IGMP querier and per-interface group membership (RFC 3376's router side, with RFC
//! 2236's v1/v2 reports and leaves understood).
//!
//! Where we simplify RFC 3376 §6 (our choices, for a router that is the only one on each of
//! its links, as in the testbed):
//! - a group is either any-source (a v2 report, `IS_EX`/`TO_EX` with any exclude list: the
//!   exclude list is not tracked, every source is forwarded) or a set of sources, each with its
//!   own timer (`IS_IN`/`ALLOW`/`TO_IN` with sources); both may hold at once;
//! - a leave (`v2 leave`, `TO_IN{}`, `TO_IN` without the any-source state, `BLOCK`) on a
//!   point-to-point interface removes the state at once (fast leave: there is no other host to
//!   ask); on a shared LAN the router lowers the timers concerned to the last-member query time
//!   and sends group-specific queries (§6.6.3.1; a group-specific query also serves for a
//!   `BLOCK`: v3 hosts answer it with their whole current state of the group, §5.2, which
//!   refreshes the sources still wanted);
//! - we never hear another querier (queries received are counted and ignored: no election).
//!
//! Under hostile input (RFC 3376 §9 leaves the size of the state to the router):
//! - the table is bounded: at most [`IgmpConfig::max_groups`] groups and
//!   [`IgmpConfig::max_sources`] source memberships per interface; a report that would add more
//!   is not applied and counted ([`IgmpDrops`]), the state already there keeps its timers;
//! - every lookup is a hash lookup and every timer sits in a list kept in deadline order, so
//!   the work of a report, of an expiry and of [`Membership::next_deadline`] does not grow with
//!   the table. Timers are of three kinds, each always set to `now` plus a constant (the group
//!   membership interval, the last-member query time, the last-member query interval), so a
//!   list per kind stays sorted by appending: a refresh moves an entry to its list's tail;
//! - all storage is allocated when the interface is made, for the caps: applying a report
//!   allocates nothing.
//!
//! The router relays the memberships to its neighbours from the changes the table reports
//! ([`Membership::take_changes`]): an entry added or removed, never a rescan of the table.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use castlab_core::{Duration, Instant};

use super::frame::{self, Record};

/// The querier's timers, and the bounds of its table. Timer defaults are RFC 3376 §8's.
#[derive(Clone, Debug, PartialEq)]
pub struct IgmpConfig {
    /// §8.1 Robustness Variable: 2.
    pub robustness: u32,
    /// §8.2 Query Interval: 125 s.
    pub query_interval: Duration,
    /// §8.3 Query Response Interval: 10 s.
    pub query_response_interval: Duration,
    /// §8.8 Last Member Query Interval: 1 s.
    pub last_member_query_interval: Duration,
    /// Groups with members on one interface, at most. Default 256 (our choice; RFC 3376 sets no
    /// bound): the testbed's largest session uses 7 groups (6 layers and a control group), so
    /// 256 leaves room for 36 such sessions on one link, while a flood of reports for fresh
    /// groups costs at most 256 entries, allocated at start, and 256 relayed joins.
    pub max_groups: usize,
    /// Source-specific memberships, (S, G) pairs, on one interface, at most. Default 1024 (our
    /// choice): four sources for each of `max_groups` groups; the testbed's sessions have one
    /// source per group.
    pub max_sources: usize,
    /// Accept joins of any group. Default false: only RFC 2365's administratively scoped
    /// 239.0.0.0/8, where castlab's sessions live unless `--allow-any-group` (the hosts' driver
    /// keeps to it the same way, `NetConfig::allow_any_group`).
    pub any_group: bool,
}

impl Default for IgmpConfig {
    fn default() -> Self {
        IgmpConfig {
            robustness: 2,
            query_interval: Duration::from_secs(125),
            query_response_interval: Duration::from_secs(10),
            last_member_query_interval: Duration::from_secs(1),
            max_groups: 256,
            max_sources: 1024,
            any_group: false,
        }
    }
}

impl IgmpConfig {
    /// §8.4 Group Membership Interval: robustness · query interval + query response interval.
    pub fn membership_interval(&self) -> Duration {
        self.query_interval * self.robustness as u64 + self.query_response_interval
    }
    /// §8.9 Last Member Query Time: count (= robustness, §8.9) · interval.
    pub fn last_member_query_time(&self) -> Duration {
        self.last_member_query_interval * self.robustness as u64
    }
    /// §8.6 Startup Query Interval: a quarter of the query interval.
    pub fn startup_query_interval(&self) -> Duration {
        Duration::from_nanos(self.query_interval.as_nanos() / 4)
    }
    /// The max-response field of a query, tenths of a second (RFC 3376 §4.1.1, exact form).
    pub fn max_resp_code(&self, d: Duration) -> u8 {
        (d.as_nanos() / 100_000_000).clamp(1, 127) as u8
    }
}

/// Reports, or parts of them, the table did not apply, by reason. Kept by the router for all
/// its interfaces together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IgmpDrops {
    /// Joins of a new group on an interface that has `max_groups` already.
    pub groups_full: u64,
    /// Sources not added because the interface has `max_sources` already.
    pub sources_full: u64,
    /// Sources in a record that cannot be a sender: unspecified, multicast, broadcast,
    /// loopback.
    pub bad_source: u64,
    /// Joins of a link-local group (224.0.0.0/24): never routed (RFC 5771 §4), so never
    /// worth a table entry.
    pub link_local: u64,
    /// Joins of a group outside 239.0.0.0/8 without [`IgmpConfig::any_group`].
    pub out_of_scope: u64,
}

/// A membership that appeared or went on an interface: (group, source; None: any source).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    pub group: Ipv4Addr,
    pub source: Option<Ipv4Addr>,
    pub added: bool,
}

/// What the querier asks its router to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryOut {
    General,
    Group(Ipv4Addr),
}

const NIL: u32 = u32::MAX;

/// The links of an entry in a deadline-ordered list.
#[derive(Clone, Copy, Debug)]
struct Link {
    prev: u32,
    next: u32,
}

/// A list of slots in deadline order (head first), linked through a `[Link]` beside the slots.
#[derive(Clone, Copy, Debug)]
struct Fifo {
    head: u32,
    tail: u32,
}

impl Fifo {
    const EMPTY: Fifo = Fifo { head: NIL, tail: NIL };

    fn push(&mut self, links: &mut [Link], i: u32) {
        links[i as usize] = Link { prev: self.tail, next: NIL };
        match self.tail {
            NIL => self.head = i,
            t => links[t as usize].next = i,
        }
        self.tail = i;
    }

    fn remove(&mut self, links: &mut [Link], i: u32) {
        let l = links[i as usize];
        match l.prev {
            NIL => self.head = l.next,
            p => links[p as usize].next = l.next,
        }
        match l.next {
            NIL => self.tail = l.prev,
            n => links[n as usize].prev = l.prev,
        }
    }
}

/// Which timer list a membership entry is in.
const GMI: usize = 0;
const LMQT: usize = 1;

/// A membership: any-source (`key`'s low half 0) or of one source, until `until`.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    until: Instant,
    list: usize,
}

/// A group with members: how many entries it has, and its group-specific queries.
#[derive(Clone, Copy, Debug)]
struct GroupSlot {
    group: Ipv4Addr,
    any_source: bool,
    sources: u32,
    /// Group-specific queries still to send, and when the next is due (in `lmq` while > 0).
    lmq_left: u32,
    lmq_next: Instant,
}

fn key(group: Ipv4Addr, source: Option<Ipv4Addr>) -> u64 {
    (u32::from(group) as u64) << 32 | source.map_or(0, |s| u32::from(s) as u64)
}

fn is_link_local(g: Ipv4Addr) -> bool {
    let o = g.octets();
    o[0] == 224 && o[1] == 0 && o[2] == 0
}

/// A source a membership may name: a unicast host address.
fn usable_source(s: Ipv4Addr) -> bool {
    !(s.is_unspecified() || s.is_multicast() || s.is_broadcast() || s.is_loopback())
}

/// Room for the changes of one call: one poll's expiries (at most the whole table) or one
/// report's (one per source or record it names; a frame of at most 2048 bytes names at most
/// 512), so that the buffers never grow.
pub fn change_capacity(cfg: &IgmpConfig) -> usize {
    cfg.max_groups + cfg.max_sources + 512
}

/// Membership on one interface.
#[derive(Clone, Debug)]
pub struct Membership {
    /// A point-to-point link: leaves take effect at once.
    pub point_to_point: bool,
    max_groups: usize,
    max_sources: usize,
    /// (group, source or 0.0.0.0 for any source) -> slot in `entries`.
    index: HashMap<u64, u32>,
    entries: Vec<Entry>,
    entry_links: Vec<Link>,
    free_entries: Vec<u32>,
    /// Expiry lists: [`GMI`] (refreshed by a report), [`LMQT`] (lowered by a leave).
    timers: [Fifo; 2],
    /// group -> slot in `slots`.
    groups: HashMap<Ipv4Addr, u32>,
    slots: Vec<GroupSlot>,
    slot_links: Vec<Link>,
    free_slots: Vec<u32>,
    /// Groups with group-specific queries to send, by when the next is due.
    lmq: Fifo,
    n_sources: usize,
    changes: Vec<Change>,
    next_general: Instant,
    startup_left: u32,
    /// Counters: records and messages applied.
    pub joins: u64,
    pub leaves: u64,
    pub expiries: u64,
}

impl Membership {
    /// An empty table with all its storage for `cfg`'s caps.
    pub fn new(point_to_point: bool, cfg: &IgmpConfig, now: Instant) -> Self {
        let (ng, ns) = (cfg.max_groups, cfg.max_sources);
        let cap = ng + ns;
        let unset = Entry { key: 0, until: Instant::ZERO, list: GMI };
        let slot =
            GroupSlot { group: Ipv4Addr::UNSPECIFIED, any_source: false, sources: 0, lmq_left: 0, lmq_next: now };
        let nil = Link { prev: NIL, next: NIL };
        Membership {
            point_to_point,
            max_groups: ng,
            max_sources: ns,
            // twice the entries, so that a table kept full rehashes in place, never grows
            index: HashMap::with_capacity(2 * cap),
            entries: vec![unset; cap],
            entry_links: vec![nil; cap],
            free_entries: (0..cap as u32).rev().collect(),
            timers: [Fifo::EMPTY; 2],
            groups: HashMap::with_capacity(2 * ng),
            slots: vec![slot; ng],
            slot_links: vec![nil; ng],
            free_slots: (0..ng as u32).rev().collect(),
            lmq: Fifo::EMPTY,
            n_sources: 0,
            changes: Vec::with_capacity(change_capacity(cfg)),
            next_general: now,
            startup_left: cfg.robustness,
            joins: 0,
            leaves: 0,
            expiries: 0,
        }
    }

    /// Whether a packet of `group` from `source` is wanted on this interface.
    #[inline]
    pub fn wants(&self, group: Ipv4Addr, source: Ipv4Addr) -> bool {
        !self.groups.is_empty()
            && (self.index.contains_key(&key(group, None)) || self.index.contains_key(&key(group, Some(source))))
    }

    /// Whether any host on this interface is a member of `group` (any source).
    pub fn has_group(&self, group: Ipv4Addr) -> bool {
        self.groups.contains_key(&group)
    }

    /// Groups with members, and source-specific memberships, on this interface.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }
    pub fn source_count(&self) -> usize {
        self.n_sources
    }

    /// Move the memberships added and removed since the last call into `out` (cleared first;
    /// `out` and the table's own buffer swap, so neither allocates once both have grown).
    pub fn take_changes(&mut self, out: &mut Vec<Change>) {
        out.clear();
        std::mem::swap(out, &mut self.changes);
    }

    /// Add the membership (group, source) until `until`, or refresh it: true if it holds now.
    fn refresh(&mut self, group: Ipv4Addr, source: Option<Ipv4Addr>, until: Instant, drops: &mut IgmpDrops) -> bool {
        let k = key(group, source);
        if let Some(&i) = self.index.get(&k) {
            let e = &mut self.entries[i as usize];
            self.timers[e.list].remove(&mut self.entry_links, i);
            e.until = until;
            e.list = GMI;
            self.timers[GMI].push(&mut self.entry_links, i);
            return true;
        }
        let slot = self.groups.get(&group).copied();
        if slot.is_none() && self.groups.len() >= self.max_groups {
            drops.groups_full += 1;
            return false;
        }
        if source.is_some() && self.n_sources >= self.max_sources {
            drops.sources_full += 1;
            return false;
        }
        let (Some(i), Some(gi)) = (self.free_entries.pop(), slot.or_else(|| self.free_slots.pop())) else {
            // the caps above keep both free lists from running dry
            drops.groups_full += 1;
            return false;
        };
        if slot.is_none() {
            self.slots[gi as usize] =
                GroupSlot { group, any_source: false, sources: 0, lmq_left: 0, lmq_next: Instant::ZERO };
            self.groups.insert(group, gi);
        }
        let g = &mut self.slots[gi as usize];
        match source {
            None => g.any_source = true,
            Some(_) => {
                g.sources += 1;
                self.n_sources += 1;
            }
        }
        self.entries[i as usize] = Entry { key: k, until, list: GMI };
        self.timers[GMI].push(&mut self.entry_links, i);
        self.index.insert(k, i);
        self.changes.push(Change { group, source, added: true });
        true
    }

    /// Remove entry `i` (and its group with its last entry).
    fn remove(&mut self, i: u32) {
        let e = self.entries[i as usize];
        self.timers[e.list].remove(&mut self.entry_links, i);
        self.index.remove(&e.key);
        self.free_entries.push(i);
        let group = Ipv4Addr::from((e.key >> 32) as u32);
        let source = match e.key as u32 {
            0 => None,
            s => Some(Ipv4Addr::from(s)),
        };
        self.changes.push(Change { group, source, added: false });
        let Some(&gi) = self.groups.get(&group) else { return };
        let g = &mut self.slots[gi as usize];
        match source {
            None => g.any_source = false,
            Some(_) => {
                g.sources -= 1;
                self.n_sources -= 1;
            }
        }
        if !g.any_source && g.sources == 0 {
            if g.lmq_left > 0 {
                self.lmq.remove(&mut self.slot_links, gi);
            }
            self.groups.remove(&group);
            self.free_slots.push(gi);
        }
    }

    /// Lower the membership (group, source) to end by `until` at the latest.
    fn lower_entry(&mut self, group: Ipv4Addr, source: Option<Ipv4Addr>, until: Instant) {
        let Some(&i) = self.index.get(&key(group, source)) else { return };
        let e = &mut self.entries[i as usize];
        if e.until <= until {
            return;
        }
        self.timers[e.list].remove(&mut self.entry_links, i);
        e.until = until;
        e.list = LMQT;
        self.timers[LMQT].push(&mut self.entry_links, i);
    }

    /// A report for `group` came in time: its group-specific queries stop.
    fn stop_queries(&mut self, group: Ipv4Addr) {
        let Some(&gi) = self.groups.get(&group) else { return };
        if self.slots[gi as usize].lmq_left > 0 {
            self.slots[gi as usize].lmq_left = 0;
            self.lmq.remove(&mut self.slot_links, gi);
        }
    }

    /// Start the last-member queries of `group` (§6.6.3.1): one now (returned), the others
    /// a last-member query interval apart.
    fn start_queries(&mut self, group: Ipv4Addr, now: Instant, cfg: &IgmpConfig) -> Option<QueryOut> {
        let gi = *self.groups.get(&group)?;
        if self.slots[gi as usize].lmq_left > 0 {
            self.lmq.remove(&mut self.slot_links, gi);
        }
        let g = &mut self.slots[gi as usize];
        g.lmq_left = cfg.robustness.saturating_sub(1);
        g.lmq_next = now + cfg.last_member_query_interval;
        if g.lmq_left > 0 {
            self.lmq.push(&mut self.slot_links, gi);
        }
        Some(QueryOut::Group(group))
    }

    /// Whether a join of `group` may enter the table at all.
    fn joinable(cfg: &IgmpConfig, group: Ipv4Addr, drops: &mut IgmpDrops) -> bool {
        if is_link_local(group) {
            drops.link_local += 1;
            return false;
        }
        if !cfg.any_group && group.octets()[0] != 239 {
            drops.out_of_scope += 1;
            return false;
        }
        true
    }

    /// A v1/v2 report: any-source membership.
    pub fn report(&mut self, group: Ipv4Addr, now: Instant, cfg: &IgmpConfig, drops: &mut IgmpDrops) {
        if !Self::joinable(cfg, group, drops) {
            return;
        }
        if self.refresh(group, None, now + cfg.membership_interval(), drops) {
            self.stop_queries(group);
            self.joins += 1;
        }
    }

    /// A v2 leave, or a v3 `TO_IN{}`: the any-source membership goes (now, or after the
    /// last-member queries on a LAN). Returns a group-specific query to send now, if any.
    pub fn leave_any_source(&mut self, group: Ipv4Addr, now: Instant, cfg: &IgmpConfig) -> Option<QueryOut> {
        let gi = *self.groups.get(&group)?;
        self.leaves += 1;
        if !self.slots[gi as usize].any_source {
            return None;
        }
        if self.point_to_point {
            let i = *self.index.get(&key(group, None))?;
            self.remove(i);
            return None;
        }
        self.lower_entry(group, None, now + cfg.last_member_query_time());
        self.start_queries(group, now, cfg)
    }

    /// A v3 group record (`f` is the frame holding its sources). Returns a query to send now.
    pub fn record(
        &mut self,
        f: &[u8],
        r: &Record,
        now: Instant,
        cfg: &IgmpConfig,
        drops: &mut IgmpDrops,
    ) -> Option<QueryOut> {
        let gmi = now + cfg.membership_interval();
        match r.kind {
            frame::MODE_IS_EXCLUDE | frame::CHANGE_TO_EXCLUDE => {
                if Self::joinable(cfg, r.group, drops) && self.refresh(r.group, None, gmi, drops) {
                    self.stop_queries(r.group);
                    self.joins += 1;
                }
                None
            }
            frame::MODE_IS_INCLUDE | frame::ALLOW_NEW_SOURCES | frame::CHANGE_TO_INCLUDE => {
                if r.n_sources > 0 && Self::joinable(cfg, r.group, drops) {
                    let mut any = false;
                    for k in 0..r.n_sources {
                        let s = r.source(f, k);
                        if !usable_source(s) {
                            drops.bad_source += 1;
                            continue;
                        }
                        any |= self.refresh(r.group, Some(s), gmi, drops);
                    }
                    if any {
                        self.stop_queries(r.group);
                        self.joins += 1;
                    }
                }
                if r.kind == frame::CHANGE_TO_INCLUDE {
                    // TO_IN: the any-source state (if any) ends
                    return self.leave_any_source(r.group, now, cfg);
                }
                None
            }
            frame::BLOCK_OLD_SOURCES => {
                if !self.groups.contains_key(&r.group) {
                    return None;
                }
                self.leaves += 1;
                if self.point_to_point {
                    for k in 0..r.n_sources {
                        if let Some(&i) = self.index.get(&key(r.group, Some(r.source(f, k)))) {
                            self.remove(i);
                        }
                    }
                    return None;
                }
                if r.n_sources == 0 {
                    return None;
                }
                let lmqt = now + cfg.last_member_query_time();
                for k in 0..r.n_sources {
                    self.lower_entry(r.group, Some(r.source(f, k)), lmqt);
                }
                self.start_queries(r.group, now, cfg)
            }
            _ => None,
        }
    }

    /// Run the timers due at `now`: expire memberships, and say which queries to send (at most
    /// one general and one group-specific query per group per call).
    pub fn poll(&mut self, now: Instant, cfg: &IgmpConfig, out: &mut Vec<QueryOut>) {
        if now >= self.next_general {
            out.push(QueryOut::General);
            if self.startup_left > 1 {
                self.startup_left -= 1;
                self.next_general = now + cfg.startup_query_interval();
            } else {
                self.startup_left = 0;
                self.next_general = now + cfg.query_interval;
            }
        }
        // queries first, then expiries: a group whose last query is due as its members expire
        // is asked once more, as the per-group order of RFC 3376 §6.6.3.1 has it
        let mut due = self.lmq.head;
        let stop = self.lmq.tail;
        while due != NIL {
            let gi = due;
            let g = self.slots[gi as usize];
            if g.lmq_next > now {
                break;
            }
            // the list is walked once: a group re-queued at the tail is not served twice
            due = if gi == stop { NIL } else { self.slot_links[gi as usize].next };
            self.lmq.remove(&mut self.slot_links, gi);
            out.push(QueryOut::Group(g.group));
            let s = &mut self.slots[gi as usize];
            s.lmq_left -= 1;
            if s.lmq_left > 0 {
                s.lmq_next = now + cfg.last_member_query_interval;
                self.lmq.push(&mut self.slot_links, gi);
            }
        }
        for list in [GMI, LMQT] {
            loop {
                let i = self.timers[list].head;
                if i == NIL || self.entries[i as usize].until > now {
                    break;
                }
                self.remove(i);
                self.expiries += 1;
            }
        }
    }

    /// The next instant [`Membership::poll`] has something to do.
    pub fn next_deadline(&self) -> Instant {
        let mut t = self.next_general;
        for f in &self.timers {
            if f.head != NIL {
                t = t.min(self.entries[f.head as usize].until);
            }
        }
        if self.lmq.head != NIL {
            t = t.min(self.slots[self.lmq.head as usize].lmq_next);
        }
        t
    }

    /// The groups with members, for status output: (group, any-source, sources), in address
    /// order. At most `max_groups` of them.
    pub fn groups(&self) -> Vec<(Ipv4Addr, bool, usize)> {
        let mut v: Vec<_> = self
            .groups
            .values()
            .map(|&gi| {
                let g = &self.slots[gi as usize];
                (g.group, g.any_source, g.sources as usize)
            })
            .collect();
        v.sort_unstable_by_key(|x| x.0);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: Ipv4Addr = Ipv4Addr::new(239, 1, 0, 1);
    const S: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const T: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 9);

    fn secs(s: u64) -> Instant {
        Instant::from_nanos(s * 1_000_000_000)
    }

    fn group(k: u32) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(Ipv4Addr::new(239, 2, 0, 0)) + k)
    }

    /// A frame holding `sources` and a record of `kind` for `g` naming them.
    fn rec(kind: u8, g: Ipv4Addr, sources: &[Ipv4Addr]) -> (Vec<u8>, Record) {
        let f: Vec<u8> = sources.iter().flat_map(|s| s.octets()).collect();
        (f, Record { kind, group: g, sources_at: 0, n_sources: sources.len() })
    }

    #[test]
    fn v2_join_then_leave_is_immediate_on_point_to_point() {
        let cfg = IgmpConfig::default();
        let mut d = IgmpDrops::default();
        let mut m = Membership::new(true, &cfg, secs(0));
        m.report(G, secs(1), &cfg, &mut d);
        assert!(m.wants(G, S) && m.wants(G, T));
        assert_eq!(m.leave_any_source(G, secs(2), &cfg), None);
        assert!(!m.wants(G, S));
        assert_eq!(m.group_count(), 0);
    }

    #[test]
    fn leave_on_a_lan_queries_and_prunes_after_the_last_member_query_time() {
        let cfg = IgmpConfig::default();
        let mut d = IgmpDrops::default();
        let mut m = Membership::new(false, &cfg, secs(0));
        let mut out = Vec::new();
        m.poll(secs(0), &cfg, &mut out); // the first general query
        m.report(G, secs(1), &cfg, &mut d);
        assert_eq!(m.leave_any_source(G, secs(10), &cfg), Some(QueryOut::Group(G)));
        assert!(m.wants(G, S), "still forwarding while asking");
        assert_eq!(m.next_deadline(), secs(11), "the second group-specific query");
        m.poll(secs(11), &cfg, &mut out);
        assert!(out.contains(&QueryOut::Group(G)), "the second group-specific query, {out:?}");
        assert_eq!(m.next_deadline(), secs(12), "the lowered membership's end");
        out.clear();
        m.poll(secs(12), &cfg, &mut out);
        assert!(!m.wants(G, S), "pruned after 2 x 1 s");
        assert!(!out.contains(&QueryOut::Group(G)), "two queries in all (robustness 2): {out:?}");
        // a report in time keeps it, and stops the queries
        m.report(G, secs(20), &cfg, &mut d);
        m.leave_any_source(G, secs(21), &cfg);
        m.report(G, secs(21), &cfg, &mut d);
        out.clear();
        m.poll(secs(23), &cfg, &mut out);
        assert!(m.wants(G, S));
        assert!(!out.contains(&QueryOut::Group(G)), "{out:?}");
        m.poll(secs(280), &cfg, &mut out);
        assert!(m.wants(G, S), "the refresh at 21 s holds for the membership interval");
        m.poll(secs(21) + cfg.membership_interval(), &cfg, &mut out);
        assert!(!m.wants(G, S));
    }

    #[test]
    fn source_specific_membership_and_expiry() {
        let cfg = IgmpConfig::default();
        let mut d = IgmpDrops::default();
        let mut m = Membership::new(true, &cfg, secs(0));
        let (f, allow) = rec(frame::ALLOW_NEW_SOURCES, G, &[S]);
        m.record(&f, &allow, secs(1), &cfg, &mut d);
        assert!(m.wants(G, S) && !m.wants(G, T));
        assert_eq!(m.source_count(), 1);
        let mut out = Vec::new();
        // the membership interval (260 s) later it is gone unless refreshed
        m.poll(secs(1) + cfg.membership_interval(), &cfg, &mut out);
        assert!(!m.wants(G, S));
        assert_eq!((m.source_count(), m.group_count(), m.expiries), (0, 0, 1));
        m.record(&f, &allow, secs(300), &cfg, &mut d);
        let block = Record { kind: frame::BLOCK_OLD_SOURCES, ..allow };
        m.record(&f, &block, secs(301), &cfg, &mut d);
        assert!(!m.wants(G, S), "fast leave of a source");
    }

    #[test]
    fn startup_queries_then_the_query_interval() {
        let cfg = IgmpConfig::default();
        let mut m = Membership::new(true, &cfg, secs(0));
        let mut out = Vec::new();
        m.poll(secs(0), &cfg, &mut out);
        assert_eq!(out, vec![QueryOut::General]);
        assert_eq!(m.next_deadline(), secs(0) + cfg.startup_query_interval());
        out.clear();
        m.poll(m.next_deadline(), &cfg, &mut out);
        assert_eq!(out, vec![QueryOut::General]);
        assert_eq!(m.next_deadline(), secs(0) + cfg.startup_query_interval() + cfg.query_interval);
    }

    #[test]
    fn new_groups_beyond_the_cap_are_dropped_and_counted_while_members_stay() {
        let cfg = IgmpConfig { max_groups: 4, ..IgmpConfig::default() };
        let mut d = IgmpDrops::default();
        let mut m = Membership::new(true, &cfg, secs(0));
        for k in 0..6 {
            m.report(group(k), secs(1), &cfg, &mut d);
        }
        assert_eq!((m.group_count(), d.groups_full), (4, 2));
        assert!(m.wants(group(3), S) && !m.wants(group(4), S) && !m.wants(group(5), S));
        // a member of a group in the table still refreshes it, sources of it included
        let (f, allow) = rec(frame::ALLOW_NEW_SOURCES, group(0), &[S]);
        m.record(&f, &allow, secs(2), &cfg, &mut d);
        assert!(m.wants(group(0), T) && m.source_count() == 1 && d.groups_full == 2);
        m.report(group(1), secs(100), &cfg, &mut d);
        assert_eq!(d.groups_full, 2);
        // a v3 join of a new group is refused the same way
        let (f, to_ex) = rec(frame::CHANGE_TO_EXCLUDE, group(9), &[]);
        m.record(&f, &to_ex, secs(3), &cfg, &mut d);
        assert_eq!((m.group_count(), d.groups_full), (4, 3));
        // a group that goes makes room
        m.leave_any_source(group(2), secs(4), &cfg);
        m.report(group(4), secs(5), &cfg, &mut d);
        assert!(m.wants(group(4), S) && m.group_count() == 4);
    }

    #[test]
    fn sources_beyond_the_cap_are_dropped_and_counted() {
        let cfg = IgmpConfig { max_sources: 3, ..IgmpConfig::default() };
        let mut d = IgmpDrops::default();
        let mut m = Membership::new(true, &cfg, secs(0));
        let srcs: Vec<Ipv4Addr> = (1..=5).map(|k| Ipv4Addr::new(10, 0, 0, k)).collect();
        let (f, allow) = rec(frame::ALLOW_NEW_SOURCES, G, &srcs);
        m.record(&f, &allow, secs(1), &cfg, &mut d);
        assert_eq!((m.source_count(), d.sources_full), (3, 2));
        assert!(m.wants(G, srcs[2]) && !m.wants(G, srcs[3]));
        // sources already in are refreshed without counting a drop; another group's sources
        // share the interface's cap
        m.record(&f, &allow, secs(2), &cfg, &mut d);
        assert_eq!(d.sources_full, 4);
        let (f2, allow2) = rec(frame::ALLOW_NEW_SOURCES, group(1), &srcs[..1]);
        m.record(&f2, &allow2, secs(2), &cfg, &mut d);
        assert_eq!((m.source_count(), d.sources_full, m.has_group(group(1))), (3, 5, false));
    }

    #[test]
    fn groups_outside_239_need_any_group() {
        let mut d = IgmpDrops::default();
        let cfg = IgmpConfig::default();
        let mut m = Membership::new(true, &cfg, secs(0));
        let g = Ipv4Addr::new(230, 1, 2, 3);
        m.report(g, secs(1), &cfg, &mut d);
        let (f, allow) = rec(frame::ALLOW_NEW_SOURCES, g, &[S]);
        m.record(&f, &allow, secs(1), &cfg, &mut d);
        assert_eq!((d.out_of_scope, m.group_count()), (2, 0));
        let any = IgmpConfig { any_group: true, ..IgmpConfig::default() };
        m.report(g, secs(2), &any, &mut d);
        assert!(m.wants(g, S) && d.out_of_scope == 2);
    }

    #[test]
    fn link_local_groups_and_impossible_sources_never_enter_the_table() {
        let cfg = IgmpConfig::default();
        let mut d = IgmpDrops::default();
        let mut m = Membership::new(true, &cfg, secs(0));
        m.report(Ipv4Addr::new(224, 0, 0, 251), secs(1), &cfg, &mut d);
        let bad = [Ipv4Addr::UNSPECIFIED, Ipv4Addr::new(239, 9, 9, 9), Ipv4Addr::BROADCAST, Ipv4Addr::LOCALHOST, S];
        let (f, allow) = rec(frame::ALLOW_NEW_SOURCES, G, &bad);
        m.record(&f, &allow, secs(1), &cfg, &mut d);
        assert_eq!((d.link_local, d.bad_source), (1, 4));
        assert_eq!((m.group_count(), m.source_count()), (1, 1));
        assert!(m.wants(G, S) && !m.wants(Ipv4Addr::new(224, 0, 0, 251), S));
    }

    #[test]
    fn every_membership_added_and_removed_is_reported_once() {
        let cfg = IgmpConfig::default();
        let mut d = IgmpDrops::default();
        let mut m = Membership::new(true, &cfg, secs(0));
        let mut ch = Vec::new();
        let (f, allow) = rec(frame::ALLOW_NEW_SOURCES, G, &[S, T]);
        m.record(&f, &allow, secs(1), &cfg, &mut d);
        m.report(G, secs(1), &cfg, &mut d);
        m.report(G, secs(2), &cfg, &mut d); // a refresh: no change
        m.take_changes(&mut ch);
        let add = |source| Change { group: G, source, added: true };
        assert_eq!(ch, vec![add(Some(S)), add(Some(T)), add(None)]);
        m.take_changes(&mut ch);
        assert!(ch.is_empty());
        // a block of one source, then the rest expire in their order
        let (f1, block) = rec(frame::BLOCK_OLD_SOURCES, G, &[S]);
        m.record(&f1, &block, secs(3), &cfg, &mut d);
        let mut out = Vec::new();
        m.poll(secs(1) + cfg.membership_interval(), &cfg, &mut out);
        m.take_changes(&mut ch);
        let gone = |source| Change { group: G, source, added: false };
        assert_eq!(ch, vec![gone(Some(S)), gone(Some(T))], "T expires at 261 s, the group's any-source at 262 s");
        m.poll(secs(2) + cfg.membership_interval(), &cfg, &mut out);
        m.take_changes(&mut ch);
        assert_eq!(ch, vec![gone(None)]);
        assert_eq!(m.group_count(), 0);
    }

    #[test]
    fn timers_fire_in_deadline_order_whatever_the_order_of_reports() {
        // refreshes move an entry behind the others; a lowered one is due before them all
        let cfg = IgmpConfig::default();
        let mut d = IgmpDrops::default();
        let mut m = Membership::new(false, &cfg, secs(0));
        for k in 0..5 {
            m.report(group(k), secs(1 + k as u64), &cfg, &mut d);
        }
        m.report(group(0), secs(10), &cfg, &mut d);
        m.leave_any_source(group(3), secs(11), &cfg);
        let gmi = cfg.membership_interval();
        let mut out = Vec::new();
        m.poll(secs(11), &cfg, &mut out); // the startup general query
        assert_eq!(m.next_deadline(), secs(12), "group 3's second query");
        m.poll(secs(12), &cfg, &mut out);
        assert_eq!(m.next_deadline(), secs(13), "group 3's lowered end");
        m.poll(secs(13), &cfg, &mut out);
        assert!(!m.has_group(group(3)));
        let mut gone = Vec::new();
        let mut ch = Vec::new();
        let mut t = secs(13);
        while m.group_count() > 0 {
            t = m.next_deadline();
            m.poll(t, &cfg, &mut out);
            m.take_changes(&mut ch);
            gone.extend(ch.iter().filter(|c| !c.added).map(|c| (c.group, t)));
        }
        let want: Vec<(Ipv4Addr, Instant)> = [1u32, 2, 4]
            .iter()
            .map(|&k| (group(k), secs(1 + k as u64) + gmi))
            .chain([(group(0), secs(10) + gmi)])
            .collect();
        let gone: Vec<_> = gone.into_iter().filter(|(g, _)| *g != group(3)).collect();
        assert_eq!(gone, want);
        assert!(t >= secs(10) + gmi);
    }

    /// Nanoseconds per report for a table of `n` groups: `reps` refreshes of its groups in
    /// turn, each followed by a poll and the next deadline, as the router runs them.
    fn ns_per_report(n: usize, reps: usize) -> f64 {
        let cfg = IgmpConfig { max_groups: n, max_sources: 0, ..IgmpConfig::default() };
        let mut d = IgmpDrops::default();
        let mut m = Membership::new(true, &cfg, secs(0));
        let mut out = Vec::with_capacity(4);
        let mut ch = Vec::with_capacity(n);
        for k in 0..n {
            m.report(group(k as u32), secs(1), &cfg, &mut d);
        }
        m.take_changes(&mut ch);
        let t0 = std::time::Instant::now();
        for r in 0..reps {
            let now = secs(2) + Duration::from_nanos(r as u64);
            m.report(group((r % n) as u32), now, &cfg, &mut d);
            out.clear();
            m.poll(now, &cfg, &mut out);
            std::hint::black_box(m.next_deadline());
        }
        t0.elapsed().as_nanos() as f64 / reps as f64
    }

    #[test]
    #[ignore = "timing: cargo test --release -p castlab-net --lib report_cost -- --ignored --nocapture"]
    fn report_cost_does_not_grow_with_the_table() {
        for n in [16, 256, 4096, 65_536, 1_000_000] {
            println!("{n:>8} groups: {:.0} ns per report (report, poll, next deadline)", ns_per_report(n, 1_000_000));
        }
    }

    #[test]
    fn a_full_table_kept_churning_stays_consistent() {
        // joins, leaves and expiries of many groups and sources, with the caps reached: the
        // counts match a plain model of the table after every step
        let cfg = IgmpConfig { max_groups: 16, max_sources: 24, ..IgmpConfig::default() };
        let mut d = IgmpDrops::default();
        let mut m = Membership::new(true, &cfg, secs(0));
        let mut model: std::collections::BTreeMap<(u32, u32), u64> = Default::default();
        let mut rng = castlab_core::Rng::seed_from_u64(3);
        let mut out = Vec::new();
        for step in 0..20_000u64 {
            let now = Instant::from_nanos(step * 50_000_000);
            let g = rng.below(24) as u32;
            let s = rng.below(4) as u32; // 0: any source
            let src = Ipv4Addr::new(10, 0, 0, s as u8);
            let gm = group(g);
            match rng.below(3) {
                0 | 1 => {
                    let groups: std::collections::BTreeSet<u32> = model.keys().map(|k| k.0).collect();
                    let n_src = model.keys().filter(|k| k.1 != 0).count();
                    let fits = model.contains_key(&(g, s))
                        || ((groups.contains(&g) || groups.len() < 16) && (s == 0 || n_src < 24));
                    if s == 0 {
                        m.report(gm, now, &cfg, &mut d);
                    } else {
                        let (f, r) = rec(frame::ALLOW_NEW_SOURCES, gm, &[src]);
                        m.record(&f, &r, now, &cfg, &mut d);
                    }
                    if fits {
                        model.insert((g, s), step * 50_000_000 + cfg.membership_interval().as_nanos());
                    }
                }
                _ => {
                    if s == 0 {
                        m.leave_any_source(gm, now, &cfg);
                    } else {
                        let (f, r) = rec(frame::BLOCK_OLD_SOURCES, gm, &[src]);
                        m.record(&f, &r, now, &cfg, &mut d);
                    }
                    model.remove(&(g, s));
                }
            }
            m.poll(now, &cfg, &mut out);
            model.retain(|_, until| *until > now.as_nanos());
            let groups: std::collections::BTreeSet<u32> = model.keys().map(|k| k.0).collect();
            assert_eq!(m.group_count(), groups.len(), "step {step}");
            assert_eq!(m.source_count(), model.keys().filter(|k| k.1 != 0).count(), "step {step}");
            assert!(m.wants(gm, src) == (model.contains_key(&(g, 0)) || model.contains_key(&(g, s))), "step {step}");
        }
        assert!(d.groups_full > 0 && d.sources_full > 0, "{d:?}");
    }
}
