//! The Breadcrumb Forwarding Service (Yano & McCanne, UCB/CSD-99-1068, §II).
//!
//! - [`BcfTable`]: the BCF router's breadcrumb state as a sans-IO unit (§II-B): per (source,
//!   label) a list of directed links, each with a level; request setup and suppression
//!   (§II-B.1), reply forwarding and teardown (§II-B.2), data-driven soft-state refresh with a
//!   specially marked null request (§II-B), link ageing and LRU reclamation under a bound on
//!   entries (§II-B, "timed out by a soft-state aging process or ... LRU replacement").
//! - [`BcfRouter`]: the table wrapped as a [`RouterExtension`]. Every node on a BCF path runs
//!   one, the hosts included: a request sent by a local agent records a local link (its port),
//!   so that a reply reaching the host is handed to exactly the processes that asked.
//! - [`BcfHost`]: the host API of Fig. 2 (`bcf_bind`, `bcf_request`, `bcf_reply`, `bcf_rcv`) for
//!   transports to build on (Rainbow, PGM-like recovery, EXPRESS-style channels).
//! - [`ExpressSource`] / [`ExpressReceiver`]: EXPRESS channels over BCFS (§II-B): receivers
//!   refresh a channel (S, L) with level-1 null requests, the source sends level-0 replies.
//!
//! Addressing in the simulator: a request is a unicast packet to the source's address, so
//! routers forward it along the unicast route toward the source, which is the reverse path of
//! the replies (§IV: "a reverse path is available from each node via the route"). A reply is
//! sent by the source with `dst` = its own address; the BCF router at the source's node takes
//! it and from there on every copy travels hop by hop on breadcrumbs (`RouterSend::Via`).

pub mod bcf_pgm;
mod express;
pub mod fountain;
mod host;
pub mod rainbow;
pub mod registration;
mod router;
mod table;

pub use express::{ExpressReceiver, ExpressSource};
pub use host::{BcfHost, BcfMsg};
pub use router::BcfRouter;
pub use table::*;

#[cfg(test)]
mod tests {
    use super::*;
    use castlab_core::NodeId;
    use castlab_core::{Addr, BcfHeader, ChannelId, Dest, Duration, Header, Instant};

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }
    const S: Addr = Addr::new(NodeId(0), 7);
    const A: BcfLink = BcfLink::Channel(ChannelId(1));
    const B: BcfLink = BcfLink::Channel(ChannelId(2));
    const C: BcfLink = BcfLink::Local(9);

    #[test]
    fn request_rules_of_section_ii_b1() {
        let mut tb = BcfTable::new(BcfConfig::default());
        // new label: create, forward
        assert_eq!(tb.on_request(t(0), S, 5, 1, A), RequestAction::Forward);
        // known label, new link, same level: added, suppressed
        assert_eq!(tb.on_request(t(1), S, 5, 1, B), RequestAction::Suppress);
        assert_eq!(tb.entry(S, 5).unwrap().links, vec![(B, 1), (A, 1)]);
        // known link at a higher level: raised and, above every level held, forwarded
        assert_eq!(tb.on_request(t(2), S, 5, 2, A), RequestAction::Forward);
        assert_eq!(tb.entry(S, 5).unwrap().links, vec![(B, 1), (A, 2)]);
        assert_eq!(tb.stats.levels_raised, 1);
        // a new link at level 2 does not exceed the held 2: suppressed, but recorded at 2
        assert_eq!(tb.on_request(t(3), S, 5, 2, C), RequestAction::Suppress);
        // a lower level on a link never lowers it
        assert_eq!(tb.on_request(t(4), S, 5, 1, A), RequestAction::Suppress);
        assert_eq!(tb.entry(S, 5).unwrap().links, vec![(C, 2), (B, 1), (A, 2)]);
        // another label, another source: independent state
        assert_eq!(tb.on_request(t(5), S, 6, 1, A), RequestAction::Forward);
        assert_eq!(tb.on_request(t(5), Addr::new(NodeId(3), 7), 5, 1, A), RequestAction::Forward);
        assert_eq!(tb.len(), 3);
    }

    #[test]
    fn reply_copies_to_every_link_and_tears_down_up_to_its_level() {
        let mut tb = BcfTable::new(BcfConfig::default());
        let mut out = Vec::new();
        tb.on_request(t(0), S, 5, 1, A);
        tb.on_request(t(0), S, 5, 3, B);
        tb.on_request(t(0), S, 5, 2, C);
        tb.on_reply(t(1), S, 5, 2, &mut out);
        assert_eq!(out, vec![C, B, A]);
        // levels 1 and 2 deleted, level 3 retained
        assert_eq!(tb.entry(S, 5).unwrap().links, vec![(B, 3)]);
        tb.on_reply(t(2), S, 5, 3, &mut out);
        assert_eq!(out, vec![B]);
        assert!(tb.entry(S, 5).is_none(), "the last link's teardown frees the entry");
        tb.on_reply(t(3), S, 5, 3, &mut out);
        assert!(out.is_empty());
        assert_eq!(tb.stats.replies_without_state, 1);
        // a level-0 reply (EXPRESS data) tears nothing down
        tb.on_request(t(4), S, 8, 1, A);
        tb.on_reply(t(5), S, 8, 0, &mut out);
        assert_eq!(out, vec![A]);
        assert_eq!(tb.entry(S, 8).unwrap().links, vec![(A, 1)]);
    }

    #[test]
    fn stale_suppression_sends_a_marked_refresh_once_per_interval() {
        let cfg = BcfConfig { refresh_interval: Duration::from_millis(100), ..Default::default() };
        let mut tb = BcfTable::new(cfg);
        assert_eq!(tb.on_request(t(0), S, 1, 2, A), RequestAction::Forward);
        assert_eq!(tb.on_request(t(50), S, 1, 1, B), RequestAction::Suppress);
        // 100 ms after the last upstream message: a refresh at the highest level held
        assert_eq!(tb.on_request(t(100), S, 1, 1, B), RequestAction::Refresh { level: 2 });
        assert_eq!(tb.on_request(t(150), S, 1, 1, B), RequestAction::Suppress);
        assert_eq!(tb.on_request(t(200), S, 1, 1, A), RequestAction::Refresh { level: 2 });
        assert_eq!(tb.stats.refreshes_sent, 2);
    }

    #[test]
    fn links_age_out_and_lru_bounds_the_table() {
        let cfg = BcfConfig { max_entries: 2, link_lifetime: Duration::from_millis(100), ..Default::default() };
        let mut tb = BcfTable::new(cfg);
        let mut out = Vec::new();
        tb.on_request(t(0), S, 1, 1, A);
        tb.on_request(t(60), S, 1, 1, B);
        // at 120 ms A (refreshed at 0) has aged, B (60) has not
        tb.on_reply(t(120), S, 1, 0, &mut out);
        assert_eq!(out, vec![B]);
        assert_eq!(tb.stats.links_aged, 1);
        // an aged entry no longer suppresses: the request goes up as for a new label
        assert_eq!(tb.on_request(t(400), S, 1, 1, A), RequestAction::Forward);
        // the bound: a third label evicts the least recently used entry
        tb.on_request(t(401), S, 2, 1, A);
        tb.on_request(t(402), S, 1, 1, B); // touches label 1
        tb.on_request(t(403), S, 3, 1, A);
        assert_eq!(tb.len(), 2);
        assert!(tb.entry(S, 2).is_none(), "label 2 was least recently used");
        assert!(tb.entry(S, 1).is_some() && tb.entry(S, 3).is_some());
        assert_eq!(tb.stats.entries_evicted, 1);
        assert_eq!(tb.stats.peak_entries, 2);
    }

    #[test]
    fn memory_counts_every_breadcrumb_and_reuses_freed_ones() {
        let mut tb = BcfTable::new(BcfConfig::default());
        let empty = tb.memory_bytes();
        for label in 0..100 {
            for ch in 0..10 {
                tb.on_request(t(0), S, label, 1, BcfLink::Channel(ChannelId(ch)));
            }
        }
        assert_eq!(tb.links_held(), 1000);
        let full = tb.memory_bytes();
        // at least a link record (a link, a level, a time, a next index) per breadcrumb
        assert!(full - empty >= 1000 * (8 + 4 + 8 + 4), "{empty} -> {full}");
        // replies of level 1 tear every link down; the slabs keep the freed records (and
        // their free lists grow once), so building the same state again and again costs no
        // more memory after the first teardown
        let mut out = Vec::new();
        let mut after = Vec::new();
        for round in 1..=3 {
            for label in 0..100 {
                tb.on_reply(t(round), S, label, 1, &mut out);
            }
            assert_eq!((tb.links_held(), tb.len()), (0, 0));
            for label in 0..100 {
                for ch in 0..10 {
                    tb.on_request(t(round), S, label, 1, BcfLink::Channel(ChannelId(ch)));
                }
            }
            after.push(tb.memory_bytes());
        }
        assert_eq!(after[1], after[0]);
        assert_eq!(after[2], after[0]);
        assert!(after[0] - full <= 1100 * 4 * 2, "only the free lists grew: {full} -> {}", after[0]);
    }

    #[test]
    fn host_api_binds_and_builds_messages() {
        let mut h = BcfHost::new(3, 40, 512);
        h.set_addr(Addr::new(NodeId(4), 1000));
        h.bind(0x1200, 0xff00);
        let r = h.request(S, 0x1234, 2, Some(99));
        assert_eq!(r.dst, Dest::Unicast(S));
        assert_eq!(r.size_bytes, 40);
        let Header::Bcf(b) = r.header else { panic!() };
        assert_eq!((b.kind, b.flags, b.label, b.level, b.msg), (BcfHeader::REQUEST, 0, 0x1234, 2, 99));
        let n = h.request(S, 0x1234, 1, None);
        assert!(matches!(n.header, Header::Bcf(b) if b.flags == BcfHeader::NULL));
        let mut rep = h.reply(0x12ff, 1, 5);
        assert_eq!(rep.size_bytes, 512);
        rep.src = S;
        let m = h.receive(&rep).unwrap();
        assert!(m.is_reply() && m.label == 0x12ff && m.from == S && m.msg == 5);
        let other = h.reply(0x1300, 1, 5);
        assert!(h.receive(&other).is_none());
        assert_eq!(h.unbound, 1);
    }
}
