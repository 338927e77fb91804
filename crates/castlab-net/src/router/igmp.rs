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
//! Membership changes allocate (a new group or source entry); forwarding lookups do not.

use std::net::Ipv4Addr;

use castlab_core::{Duration, Instant};

use super::frame::{self, Record};

/// The querier's timers. Defaults are RFC 3376 §8's.
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
}

impl Default for IgmpConfig {
    fn default() -> Self {
        IgmpConfig {
            robustness: 2,
            query_interval: Duration::from_secs(125),
            query_response_interval: Duration::from_secs(10),
            last_member_query_interval: Duration::from_secs(1),
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

#[derive(Clone, Debug)]
struct GroupState {
    group: Ipv4Addr,
    /// Any-source membership, until this time.
    asm_until: Option<Instant>,
    sources: Vec<(Ipv4Addr, Instant)>,
    /// Group-specific queries still to send, and when the next is due.
    lmq_left: u32,
    lmq_next: Instant,
}

/// What the querier asks its router to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryOut {
    General,
    Group(Ipv4Addr),
}

/// Membership on one interface.
#[derive(Clone, Debug)]
pub struct Membership {
    /// A point-to-point link: leaves take effect at once.
    pub point_to_point: bool,
    groups: Vec<GroupState>,
    next_general: Instant,
    startup_left: u32,
    /// Counters: records and messages applied.
    pub joins: u64,
    pub leaves: u64,
    pub expiries: u64,
}

impl Membership {
    pub fn new(point_to_point: bool, cfg: &IgmpConfig, now: Instant) -> Self {
        Membership {
            point_to_point,
            groups: Vec::new(),
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
        self.groups
            .iter()
            .any(|g| g.group == group && (g.asm_until.is_some() || g.sources.iter().any(|(s, _)| *s == source)))
    }

    /// Whether any host on this interface is a member of `group` (any source).
    pub fn has_group(&self, group: Ipv4Addr) -> bool {
        self.groups.iter().any(|g| g.group == group)
    }

    fn entry(&mut self, group: Ipv4Addr, now: Instant) -> &mut GroupState {
        match self.groups.iter().position(|g| g.group == group) {
            Some(i) => &mut self.groups[i],
            None => {
                self.groups.push(GroupState {
                    group,
                    asm_until: None,
                    sources: Vec::new(),
                    lmq_left: 0,
                    lmq_next: now,
                });
                self.groups.last_mut().expect("just pushed")
            }
        }
    }

    /// A v1/v2 report: any-source membership.
    pub fn report(&mut self, group: Ipv4Addr, now: Instant, cfg: &IgmpConfig) {
        let gmi = cfg.membership_interval();
        let e = self.entry(group, now);
        e.asm_until = Some(now + gmi);
        e.lmq_left = 0;
        self.joins += 1;
    }

    /// A v2 leave, or a v3 `TO_IN{}`: the any-source membership goes (now, or after the
    /// last-member queries on a LAN). Returns a group-specific query to send now, if any.
    pub fn leave_any_source(&mut self, group: Ipv4Addr, now: Instant, cfg: &IgmpConfig) -> Option<QueryOut> {
        let p2p = self.point_to_point;
        let i = self.groups.iter().position(|g| g.group == group)?;
        self.leaves += 1;
        let e = &mut self.groups[i];
        e.asm_until?;
        if p2p {
            e.asm_until = None;
            self.gc(i);
            return None;
        }
        self.lower(i, now, cfg, true, None)
    }

    /// Lower timers to the last-member query time and start the group-specific queries.
    fn lower(
        &mut self,
        i: usize,
        now: Instant,
        cfg: &IgmpConfig,
        asm: bool,
        src: Option<Ipv4Addr>,
    ) -> Option<QueryOut> {
        let lmqt = now + cfg.last_member_query_time();
        let e = &mut self.groups[i];
        if asm {
            e.asm_until = e.asm_until.map(|t| t.min(lmqt));
        }
        if let Some(s) = src {
            for (x, t) in e.sources.iter_mut() {
                if *x == s {
                    *t = (*t).min(lmqt);
                }
            }
        }
        e.lmq_left = cfg.robustness.saturating_sub(1);
        e.lmq_next = now + cfg.last_member_query_interval;
        Some(QueryOut::Group(e.group))
    }

    fn gc(&mut self, i: usize) {
        let e = &self.groups[i];
        if e.asm_until.is_none() && e.sources.is_empty() {
            self.groups.swap_remove(i);
        }
    }

    /// A v3 group record (`f` is the frame holding its sources). Returns a query to send now.
    pub fn record(&mut self, f: &[u8], r: &Record, now: Instant, cfg: &IgmpConfig) -> Option<QueryOut> {
        let gmi = now + cfg.membership_interval();
        match r.kind {
            frame::MODE_IS_EXCLUDE | frame::CHANGE_TO_EXCLUDE => {
                let e = self.entry(r.group, now);
                e.asm_until = Some(gmi);
                e.lmq_left = 0;
                self.joins += 1;
                None
            }
            frame::MODE_IS_INCLUDE | frame::ALLOW_NEW_SOURCES | frame::CHANGE_TO_INCLUDE => {
                if r.n_sources > 0 {
                    let e = self.entry(r.group, now);
                    for k in 0..r.n_sources {
                        let s = r.source(f, k);
                        match e.sources.iter_mut().find(|(x, _)| *x == s) {
                            Some((_, t)) => *t = gmi,
                            None => e.sources.push((s, gmi)),
                        }
                    }
                    e.lmq_left = 0;
                    self.joins += 1;
                }
                if r.kind == frame::CHANGE_TO_INCLUDE {
                    // TO_IN: the any-source state (if any) ends
                    return self.leave_any_source(r.group, now, cfg);
                }
                None
            }
            frame::BLOCK_OLD_SOURCES => {
                let i = self.groups.iter().position(|g| g.group == r.group)?;
                self.leaves += 1;
                if self.point_to_point {
                    for k in 0..r.n_sources {
                        let s = r.source(f, k);
                        self.groups[i].sources.retain(|(x, _)| *x != s);
                    }
                    self.gc(i);
                    return None;
                }
                let mut q = None;
                for k in 0..r.n_sources {
                    q = self.lower(i, now, cfg, false, Some(r.source(f, k)));
                }
                q
            }
            _ => None,
        }
    }

    /// Run the timers due at `now`: expire memberships, and say which queries to send (at most
    /// one general and `out.len()` group-specific ones per call).
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
        let mut i = 0;
        while i < self.groups.len() {
            let e = &mut self.groups[i];
            if e.lmq_left > 0 && now >= e.lmq_next {
                e.lmq_left -= 1;
                e.lmq_next = now + cfg.last_member_query_interval;
                out.push(QueryOut::Group(e.group));
            }
            if e.asm_until.is_some_and(|t| t <= now) {
                e.asm_until = None;
                self.expiries += 1;
            }
            let before = e.sources.len();
            e.sources.retain(|(_, t)| *t > now);
            self.expiries += (before - e.sources.len()) as u64;
            if e.asm_until.is_none() && e.sources.is_empty() {
                self.groups.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// The next instant [`Membership::poll`] has something to do.
    pub fn next_deadline(&self) -> Instant {
        let mut t = self.next_general;
        for g in &self.groups {
            if let Some(a) = g.asm_until {
                t = t.min(a);
            }
            for (_, s) in &g.sources {
                t = t.min(*s);
            }
            if g.lmq_left > 0 {
                t = t.min(g.lmq_next);
            }
        }
        t
    }

    /// Every (group, source) with a source-specific member, and (group, None) for any-source
    /// members, into `out` (cleared first; no allocation once it has grown).
    pub fn wanted(&self, out: &mut Vec<(Ipv4Addr, Option<Ipv4Addr>)>) {
        out.clear();
        for g in &self.groups {
            if g.asm_until.is_some() {
                out.push((g.group, None));
            }
            out.extend(g.sources.iter().map(|(s, _)| (g.group, Some(*s))));
        }
    }

    /// The groups with members, for status output: (group, any-source, sources).
    pub fn groups(&self) -> impl Iterator<Item = (Ipv4Addr, bool, usize)> + '_ {
        self.groups.iter().map(|g| (g.group, g.asm_until.is_some(), g.sources.len()))
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

    #[test]
    fn v2_join_then_leave_is_immediate_on_point_to_point() {
        let cfg = IgmpConfig::default();
        let mut m = Membership::new(true, &cfg, secs(0));
        m.report(G, secs(1), &cfg);
        assert!(m.wants(G, S) && m.wants(G, T));
        assert_eq!(m.leave_any_source(G, secs(2), &cfg), None);
        assert!(!m.wants(G, S));
    }

    #[test]
    fn leave_on_a_lan_queries_and_prunes_after_the_last_member_query_time() {
        let cfg = IgmpConfig::default();
        let mut m = Membership::new(false, &cfg, secs(0));
        m.report(G, secs(1), &cfg);
        assert_eq!(m.leave_any_source(G, secs(10), &cfg), Some(QueryOut::Group(G)));
        assert!(m.wants(G, S), "still forwarding while asking");
        let mut out = Vec::new();
        m.poll(secs(11), &cfg, &mut out);
        assert!(out.contains(&QueryOut::Group(G)), "the second group-specific query, {out:?}");
        out.clear();
        m.poll(secs(12), &cfg, &mut out);
        assert!(!m.wants(G, S), "pruned after 2 x 1 s");
        // a report in time keeps it
        m.report(G, secs(20), &cfg);
        m.leave_any_source(G, secs(21), &cfg);
        m.report(G, secs(22), &cfg);
        m.poll(secs(23), &cfg, &mut out);
        assert!(m.wants(G, S));
    }

    #[test]
    fn source_specific_membership_and_expiry() {
        let cfg = IgmpConfig::default();
        let mut m = Membership::new(true, &cfg, secs(0));
        let mut f = [0u8; 4];
        f.copy_from_slice(&S.octets());
        let rec = Record { kind: frame::ALLOW_NEW_SOURCES, group: G, sources_at: 0, n_sources: 1 };
        m.record(&f, &rec, secs(1), &cfg);
        assert!(m.wants(G, S) && !m.wants(G, T));
        let mut out = Vec::new();
        // the membership interval (260 s) later it is gone unless refreshed
        m.poll(secs(1) + cfg.membership_interval(), &cfg, &mut out);
        assert!(!m.wants(G, S));
        m.record(&f, &rec, secs(300), &cfg);
        let block = Record { kind: frame::BLOCK_OLD_SOURCES, ..rec };
        m.record(&f, &block, secs(301), &cfg);
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
}
