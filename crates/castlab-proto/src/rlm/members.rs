//! The member table behind an RLM receiver's group-size estimate n̂ (§3.5: "estimated through
//! the exchange of session-wide control messages (e.g., as in RTCP)"): the other receivers
//! heard from, each with the time it was last heard, and how many of them are current.
//!
//! Every control packet of the session reaches every receiver, so a receiver looks a sender up
//! once per control packet: with N receivers, N lookups per packet. The table answers each in
//! constant expected time (an open-addressing index over the members' numbers), where a list
//! searched from the front takes time in proportion to N. A member that times out is marked
//! expired, not removed: heard again, it is current again under its old number, as if it
//! had been removed and added anew. The number of current members, the only thing the
//! receiver reads, is the same either way.

use castlab_core::{Addr, Instant};

/// An empty slot of the index.
const EMPTY: u32 = u32::MAX;
/// A member's `heard` while it is expired. No control packet arrives at `Instant::MAX`.
const EXPIRED: u64 = u64::MAX;
/// The index's length when the first member comes (a power of two).
const MIN_SLOTS: usize = 8;
/// The fewest members the table grows by.
const MIN_GROWTH: usize = 8;

/// One member: its address, packed as `node << 16 | port`, and when it was last heard (ns),
/// or [`EXPIRED`]. Side by side, so that a lookup reads one cache line after the index's.
#[derive(Clone, Copy, Debug)]
struct Member {
    key: u64,
    heard: u64,
}

/// Other receivers heard from, numbered in the order first heard.
#[derive(Clone, Debug, Default)]
pub(super) struct Members {
    /// Member number → the member.
    all: Vec<Member>,
    /// Open addressing with linear probing over a power-of-two length, at most 3/4 full: a
    /// member number or [`EMPTY`].
    slots: Vec<u32>,
    /// Members not expired.
    current: usize,
}

fn key(a: Addr) -> u64 {
    u64::from(a.node.0) << 16 | u64::from(a.port)
}

/// The home slot of `k` in an index of `mask + 1` slots (splitmix64's finaliser).
fn home(k: u64, mask: usize) -> usize {
    let mut h = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^= h >> 31;
    (h as usize) & mask
}

impl Members {
    /// Members heard and not expired.
    pub(super) fn current(&self) -> usize {
        self.current
    }

    /// Bytes of its tables (allocated capacity).
    pub(super) fn heap_bytes(&self) -> usize {
        self.all.capacity() * std::mem::size_of::<Member>() + self.slots.capacity() * std::mem::size_of::<u32>()
    }

    /// `a` was heard at `now`: a new member, an expired one current again, or a current one
    /// heard anew. Returns false, changing nothing, when `u32::MAX - 1` members are already
    /// numbered (a number must fit the index's `u32`, and `u32::MAX` marks an empty slot).
    pub(super) fn heard(&mut self, a: Addr, now: Instant) -> bool {
        debug_assert!(now.as_nanos() != EXPIRED);
        let k = key(a);
        let mask = self.slots.len().wrapping_sub(1);
        if !self.slots.is_empty() {
            let mut i = home(k, mask);
            loop {
                match self.slots[i] {
                    EMPTY => break,
                    m if self.all[m as usize].key == k => {
                        let t = &mut self.all[m as usize].heard;
                        if *t == EXPIRED {
                            self.current += 1;
                        }
                        *t = now.as_nanos();
                        return true;
                    }
                    _ => i = (i + 1) & mask,
                }
            }
        }
        let m = self.all.len();
        if m >= EMPTY as usize - 1 {
            return false;
        }
        if (m + 1) * 4 > self.slots.len() * 3 {
            self.rebuild((self.slots.len() * 2).max(MIN_SLOTS));
        }
        if self.all.len() == self.all.capacity() {
            // by an eighth, not by doubling: a few percent spare at any size
            self.all.reserve_exact((m / 8).max(MIN_GROWTH));
        }
        self.all.push(Member { key: k, heard: now.as_nanos() });
        self.current += 1;
        self.place(k, m as u32);
        true
    }

    /// Expire every current member last heard `timeout` or longer before `now`.
    pub(super) fn expire(&mut self, now: Instant, timeout: castlab_core::Duration) {
        let (now, timeout) = (now.as_nanos(), timeout.as_nanos());
        for m in &mut self.all {
            if m.heard != EXPIRED && now.saturating_sub(m.heard) >= timeout {
                m.heard = EXPIRED;
                self.current -= 1;
            }
        }
    }

    fn place(&mut self, k: u64, m: u32) {
        let mask = self.slots.len() - 1;
        let mut i = home(k, mask);
        while self.slots[i] != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = m;
    }

    fn rebuild(&mut self, len: usize) {
        self.slots.clear();
        self.slots.resize(len, EMPTY);
        for m in 0..self.all.len() {
            self.place(self.all[m].key, m as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use castlab_core::{Duration, NodeId, Rng};

    /// The reference: a list of (address, last heard), searched from the front; expiry
    /// removes (the receiver's member list as RTCP describes it).
    #[derive(Default)]
    struct List(Vec<(Addr, Instant)>);

    impl List {
        fn heard(&mut self, a: Addr, now: Instant) {
            match self.0.iter_mut().find(|(x, _)| *x == a) {
                Some(m) => m.1 = now,
                None => self.0.push((a, now)),
            }
        }
        fn expire(&mut self, now: Instant, timeout: Duration) {
            self.0.retain(|(_, t)| now.saturating_since(*t) < timeout);
        }
    }

    #[test]
    fn counts_current_members_as_a_list_that_removes_expired_ones() {
        for seed in 0..20u64 {
            let mut rng = Rng::seed_from_u64(seed);
            let (mut table, mut list) = (Members::default(), List::default());
            // up to 3,000 distinct senders, some at the extremes of node and port
            let senders = 1 + (rng.uniform() * 3000.0) as u32;
            let addr = |i: u32| match i % 5 {
                0 => Addr::new(NodeId(u32::MAX - i), u16::MAX),
                1 => Addr::new(NodeId(i), 0),
                _ => Addr::new(NodeId(i / 3), (i % 3) as u16 + 1),
            };
            let mut now = Instant::ZERO;
            for _ in 0..20_000 {
                now += Duration::from_nanos((rng.uniform() * 2e7) as u64);
                if rng.uniform() < 0.002 {
                    let timeout = Duration::from_nanos((rng.uniform() * 5e9) as u64);
                    table.expire(now, timeout);
                    list.expire(now, timeout);
                } else {
                    let a = addr((rng.uniform() * f64::from(senders)) as u32);
                    assert!(table.heard(a, now));
                    list.heard(a, now);
                }
                assert_eq!(table.current(), list.0.len(), "seed {seed}");
            }
        }
    }

    #[test]
    fn a_member_heard_exactly_the_timeout_ago_expires() {
        let mut t = Members::default();
        let a = Addr::new(NodeId(7), 3);
        t.heard(a, Instant::from_secs_f64(1.0));
        t.expire(Instant::from_secs_f64(1.5), Duration::from_millis(500));
        assert_eq!(t.current(), 0);
        t.heard(a, Instant::from_secs_f64(2.0));
        assert_eq!(t.current(), 1);
        t.expire(Instant::from_secs_f64(2.4), Duration::from_millis(500));
        assert_eq!(t.current(), 1);
    }
}
