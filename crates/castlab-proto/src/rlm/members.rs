//! The member table behind an RLM receiver's group-size estimate n̂ (§3.5: "estimated through
//! the exchange of session-wide control messages (e.g., as in RTCP)"): the other receivers
//! heard from, each with the time it was last heard, and an estimate of how many are current.
//!
//! Up to `limit` (L, [`super::RlmConfig::member_limit`]) current members the table is exact:
//! every sender is stored and the estimate is the number of current members. Beyond that it
//! samples the membership as RFC 2762 describes ("Sampling the Group Membership in RTP"):
//!
//! - §2: the receiver has a key K (the hash of its own address) and a mask of m bits; a sender
//!   is stored only if the hash of its address equals K under the mask (here: the top m bits
//!   of the two 64-bit hashes agree). The RFC hashes the identifier first because identifiers
//!   need not be uniform; castlab's addresses (`node << 16 | port`) are not random at all, so
//!   they are hashed (splitmix64's finaliser; not a cryptographic hash, which §5 wants only
//!   against senders forging identifiers, and a simulated session has none). A sender that
//!   does not match is rejected before the table is read: the receiver's own few words decide.
//! - §3: when a new member would be the (L+1)-th stored one, m grows by one and the members
//!   that no longer match are dropped (about half), repeatedly until there is room. Expired
//!   entries are dropped first, so only current members count towards L.
//! - §4.2 (the binning algorithm): each stored member sits in bin i, the m under which it was
//!   stored, and the estimate is Σ 2^i over the current members. When m grows, the members of
//!   the bins below the new m that still match move up to it. When the table has emptied to
//!   L/4 at a member expiry (RLM's session messages have no BYE, so timeouts are the only way
//!   members leave), m shrinks by one and nothing moves: a member heard again from a bin above
//!   m moves down to bin m, so the old estimate fades out as the members are heard again
//!   (the RFC gives no rule for when to shrink; L/4 is castlab's: a shrink doubles the share
//!   stored, so the table refills to about L/2, below the next growth).
//! - §4.4 (senders kept apart): RLM's data source sends no control messages and is never in
//!   the table, so nothing needs keeping apart.
//!
//! With m = 0 every bin is 0 and the estimate is the exact count: the table below L is the
//! exact one. §2.1: with G members and m bits, the estimate's standard deviation over its
//! mean is sqrt((2^m - 1)/G); the table holds between L/2 and L members once sampling, so
//! about 1/sqrt(L/2) to 1/sqrt(L).
//!
//! Every control packet of the session reaches every receiver, so a receiver looks a sender up
//! once per control packet: with N receivers, N lookups per packet. The table answers each in
//! constant expected time (an open-addressing index over the members' numbers), where a list
//! searched from the front takes time in proportion to N. A member that times out is marked
//! expired, not removed (until room is needed): heard again, it is current again under its
//! old number, as if it had been removed and added anew.

use castlab_core::{Addr, Instant};

/// An empty slot of the index.
const EMPTY: u32 = u32::MAX;
/// A member's `heard` while it is expired. No control packet arrives at `Instant::MAX`.
const EXPIRED: u64 = u64::MAX;
/// The index's length when the first member comes (a power of two).
const MIN_SLOTS: usize = 8;
/// The fewest members the table grows by.
const MIN_GROWTH: usize = 8;
/// The most bits in the mask (RFC 2762 §2: 32-bit keys and masks, §4.2: 32 bins).
pub(super) const MAX_BITS: u32 = 32;
/// The bits of `Member::key` that hold the address (`node << 16 | port`: 48 bits).
const ADDR_BITS: u64 = (1 << 48) - 1;
/// Where `Member::key` holds the member's bin.
const BIN_SHIFT: u32 = 56;

/// One member: its address, packed as `node << 16 | port`, with its bin (RFC 2762 §4.2) in the
/// top byte, and when it was last heard (ns), or [`EXPIRED`]. Side by side, so that a lookup
/// reads one cache line after the index's.
#[derive(Clone, Copy, Debug)]
struct Member {
    key: u64,
    heard: u64,
}

impl Member {
    fn addr(&self) -> u64 {
        self.key & ADDR_BITS
    }
    fn bin(&self) -> u32 {
        (self.key >> BIN_SHIFT) as u32
    }
    fn set_bin(&mut self, bin: u32) {
        self.key = self.addr() | u64::from(bin) << BIN_SHIFT;
    }
    fn weight(&self) -> u64 {
        1 << self.bin()
    }
}

/// Other receivers heard from (or a sample of them), numbered in the order stored. In order
/// (`repr(C)`): what a lookup reads first (the key and mask that may reject the sender, then
/// the index), so that the receiver can keep them in its first cache line.
#[derive(Clone, Debug)]
#[repr(C)]
pub(super) struct Members {
    /// K, the hash of this receiver's own address (RFC 2762 §2: "usually derived from the
    /// SSRC of the user who is performing the sampling").
    key: u64,
    /// m, the bits in the mask (RFC 2762 §2).
    bits: u32,
    /// Open addressing with linear probing over a power-of-two length, at most 3/4 full: a
    /// member number or [`EMPTY`].
    slots: Vec<u32>,
    /// Member number → the member.
    all: Vec<Member>,
    /// Members stored and not expired.
    current: usize,
    /// Σ 2^bin over the current members: RFC 2762 §4.2's L(t), this receiver not included.
    estimate: u64,
    /// L, the most members stored.
    limit: usize,
}

fn addr_key(a: Addr) -> u64 {
    u64::from(a.node.0) << 16 | u64::from(a.port)
}

/// splitmix64's finaliser: the low bits pick the index's home slot, the top bits are matched
/// against the key.
fn mix(k: u64) -> u64 {
    let mut h = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

/// Whether a sender whose address hashes to `h` matches `key` under a mask of `bits` bits
/// (RFC 2762 §2's `K*M == S*M`, the mask over the top bits).
fn matches(key: u64, h: u64, bits: u32) -> bool {
    bits == 0 || (h ^ key) >> (64 - bits) == 0
}

impl Members {
    /// An empty table that stores at most `limit` members (at least one).
    pub(super) fn new(limit: usize) -> Self {
        Members { all: Vec::new(), slots: Vec::new(), current: 0, estimate: 0, bits: 0, key: 0, limit: limit.max(1) }
    }

    /// Take `a`, this receiver's own address, as the key K. Before any member is heard.
    pub(super) fn set_key(&mut self, a: Addr) {
        self.key = mix(addr_key(a));
    }

    /// The estimated number of other current members: RFC 2762 §4.2's Σ 2^i·B(i); the exact
    /// count while no more than L have been current at once.
    pub(super) fn estimate(&self) -> u64 {
        self.estimate
    }

    /// Bits in the mask (0: every sender is stored).
    #[cfg(test)]
    pub(super) fn bits(&self) -> u32 {
        self.bits
    }

    /// Members stored, current or expired.
    #[cfg(test)]
    pub(super) fn stored(&self) -> usize {
        self.all.len()
    }

    /// The bytes from the start of the table to the end of its index's handle: what a
    /// lookup reads before the index itself.
    #[cfg(test)]
    pub(super) const HOT_BYTES: usize = std::mem::offset_of!(Members, slots) + std::mem::size_of::<Vec<u32>>();

    /// Bytes of its tables (allocated capacity).
    pub(super) fn heap_bytes(&self) -> usize {
        self.all.capacity() * std::mem::size_of::<Member>() + self.slots.capacity() * std::mem::size_of::<u32>()
    }

    /// `a` was heard at `now`: a sender not sampled (nothing stored), a new member, an expired
    /// one current again, or a current one heard anew. Returns false, changing nothing, when
    /// the table is full and cannot sample further (`u32::MAX - 1` members numbered, or L
    /// current members under a mask of [`MAX_BITS`]).
    pub(super) fn heard(&mut self, a: Addr, now: Instant) -> bool {
        debug_assert!(now.as_nanos() != EXPIRED);
        let k = addr_key(a);
        let h = mix(k);
        if !matches(self.key, h, self.bits) {
            return true; // RFC 2762 §2: "treated as if it has never been received"
        }
        if !self.slots.is_empty() {
            let mask = self.slots.len() - 1;
            let mut i = h as usize & mask;
            loop {
                match self.slots[i] {
                    EMPTY => break,
                    n if self.all[n as usize].addr() == k => {
                        let m = &mut self.all[n as usize];
                        if m.heard == EXPIRED {
                            self.current += 1;
                        } else {
                            self.estimate -= m.weight();
                        }
                        if m.bin() > self.bits {
                            m.set_bin(self.bits); // §4.2: heard again, down to the current bin
                        }
                        self.estimate += m.weight();
                        m.heard = now.as_nanos();
                        return true;
                    }
                    _ => i = (i + 1) & mask,
                }
            }
        }
        let n = self.all.len();
        if n >= EMPTY as usize - 1 {
            return false;
        }
        if n >= self.limit {
            if !self.make_room() {
                return false;
            }
            if !matches(self.key, h, self.bits) {
                return true; // the mask grew past it
            }
        }
        let n = self.all.len();
        if (n + 1) * 4 > self.slots.len() * 3 {
            self.rebuild((self.slots.len() * 2).max(MIN_SLOTS));
        }
        if n == self.all.capacity() {
            // by an eighth, not by doubling: a few percent spare at any size, never beyond L
            self.all.reserve_exact((n / 8).max(MIN_GROWTH).min(self.limit - n));
        }
        self.all.push(Member { key: k | u64::from(self.bits) << BIN_SHIFT, heard: now.as_nanos() });
        self.current += 1;
        self.estimate += 1 << self.bits;
        self.place(h, n as u32);
        true
    }

    /// Room for one more member: the expired ones go; then, while L members are current, one
    /// more mask bit (RFC 2762 §3), the members of the bins below it that still match move up to
    /// it and the others go (§4.2). False when the mask has [`MAX_BITS`] and L are still current.
    fn make_room(&mut self) -> bool {
        self.all.retain(|m| m.heard != EXPIRED);
        let mut room = true;
        while self.all.len() >= self.limit {
            if self.bits == MAX_BITS {
                room = false;
                break;
            }
            self.bits += 1;
            let (key, bits) = (self.key, self.bits);
            self.all.retain_mut(|m| {
                if m.bin() >= bits {
                    return true;
                }
                let keep = matches(key, mix(m.addr()), bits);
                if keep {
                    m.set_bin(bits);
                }
                keep
            });
        }
        self.current = self.all.len();
        self.estimate = self.all.iter().map(Member::weight).sum();
        self.rebuild(self.slots.len());
        room
    }

    /// Expire every current member last heard `timeout` or longer before `now`. If the table
    /// is then at most a quarter full, the mask loses a bit (RFC 2762 §4; §4.2: nothing moves).
    pub(super) fn expire(&mut self, now: Instant, timeout: castlab_core::Duration) {
        let (now, timeout) = (now.as_nanos(), timeout.as_nanos());
        for m in &mut self.all {
            if m.heard != EXPIRED && now.saturating_sub(m.heard) >= timeout {
                m.heard = EXPIRED;
                self.current -= 1;
                self.estimate -= m.weight();
            }
        }
        if self.bits > 0 && self.current * 4 <= self.limit {
            self.bits -= 1;
        }
    }

    fn place(&mut self, h: u64, n: u32) {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        while self.slots[i] != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = n;
    }

    fn rebuild(&mut self, len: usize) {
        self.slots.clear();
        self.slots.resize(len, EMPTY);
        for n in 0..self.all.len() {
            self.place(mix(self.all[n].addr()), n as u32);
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

    /// The most bytes a table of at most `limit` members allocates: `limit` entries and the
    /// smallest power-of-two index (at least 8 slots) that holds them at most 3/4 full.
    fn bound(limit: usize) -> usize {
        limit * std::mem::size_of::<Member>() + (limit * 4).div_ceil(3).next_power_of_two().max(MIN_SLOTS) * 4
    }

    #[test]
    fn below_the_limit_counts_current_members_as_a_list_that_removes_expired_ones() {
        let mut dropped_expired = 0;
        for seed in 0..40u64 {
            let mut rng = Rng::seed_from_u64(seed);
            let limit = 100 + (rng.uniform() * 300.0) as usize;
            let mut table = Members::new(limit);
            table.set_key(Addr::new(NodeId(1_000_000 + seed as u32), 1));
            let mut list = List::default();
            // up to 3,000 distinct senders, some at the extremes of node and port
            let senders = 1 + (rng.uniform() * 3000.0) as u32;
            let addr = |i: u32| match i % 5 {
                0 => Addr::new(NodeId(u32::MAX - i), u16::MAX),
                1 => Addr::new(NodeId(i), 0),
                _ => Addr::new(NodeId(i / 3), (i % 3) as u16 + 1),
            };
            let mut ever = std::collections::HashSet::new();
            let mut now = Instant::ZERO;
            for _ in 0..20_000 {
                now += Duration::from_nanos((rng.uniform() * 2e7) as u64);
                if rng.uniform() < 0.01 {
                    let timeout = Duration::from_nanos((0.5e9 + rng.uniform() * 4.5e9) as u64);
                    table.expire(now, timeout);
                    list.expire(now, timeout);
                } else {
                    let i = (rng.uniform() * f64::from(senders)) as u32;
                    list.heard(addr(i), now);
                    if list.0.len() > limit {
                        break; // beyond L the table samples: the tests below
                    }
                    assert!(table.heard(addr(i), now));
                    ever.insert(i);
                }
                assert_eq!(table.estimate(), list.0.len() as u64, "seed {seed}");
                assert_eq!(table.bits(), 0);
                assert!(table.stored() <= limit && table.heap_bytes() <= bound(limit));
            }
            if ever.len() > limit {
                dropped_expired += 1; // more senders than L came and went: expired ones made room
            }
        }
        assert!(dropped_expired >= 10, "{dropped_expired} of 40 streams exercised making room");
    }

    #[test]
    fn a_member_heard_exactly_the_timeout_ago_expires() {
        let mut t = Members::new(256);
        let a = Addr::new(NodeId(7), 3);
        t.heard(a, Instant::from_secs_f64(1.0));
        t.expire(Instant::from_secs_f64(1.5), Duration::from_millis(500));
        assert_eq!(t.estimate(), 0);
        t.heard(a, Instant::from_secs_f64(2.0));
        assert_eq!(t.estimate(), 1);
        t.expire(Instant::from_secs_f64(2.4), Duration::from_millis(500));
        assert_eq!(t.estimate(), 1);
    }

    /// 10^5 distinct senders, each heard at least once and none expiring, for ten receivers
    /// (keys) and L = 256. The bound: a sender is stored at the end exactly when its hash
    /// matches the key under the final mask of m bits (it matched every shorter mask, so it was
    /// stored when first heard, and a new bit drops only senders that do not match). Taking the
    /// hash as uniform, each of the G senders matches with probability p = 2^-m independently,
    /// so the stored count X is Binomial(G, p), and the estimate 2^m·X has mean G and standard
    /// deviation sqrt(G·(2^m - 1)) (RFC 2762 §2.1's coefficient of variation
    /// sqrt((2^m - 1)/G)). m is chosen by the data, so the bound must hold for every m at once:
    /// for each m, X ≥ L/2 = 128 in the range that can end the run, where the binomial is
    /// close to normal and P(|estimate - G| > 5 sd) ≈ 6·10^-7; over the 33 possible m, below
    /// 2·10^-5. With a fixed seed the test is deterministic; the bound says it is not tuned.
    #[test]
    fn beyond_the_limit_stores_at_most_l_and_estimates_within_the_binomial_error() {
        const G: u32 = 100_000;
        let limit = 256;
        let mut rng = Rng::seed_from_u64(39);
        for r in 0..10u32 {
            let mut t = Members::new(limit);
            t.set_key(Addr::new(NodeId(G + r), 1));
            let addr = |i: u32| Addr::new(NodeId(i), (i % 7) as u16);
            let mut now = Instant::ZERO;
            let heard = |t: &mut Members, i: u32, now: Instant| {
                assert!(t.heard(addr(i), now));
                assert!(t.stored() <= limit, "{} stored", t.stored());
                assert!(t.heap_bytes() <= bound(limit), "{} bytes", t.heap_bytes());
            };
            for i in 0..G {
                now += Duration::from_micros(10);
                heard(&mut t, i, now);
                // and one at random among those heard so far
                heard(&mut t, (rng.uniform() * f64::from(i + 1)) as u32, now);
            }
            let m = t.bits();
            assert!(m > 0);
            let sd = (f64::from(G) * ((1u64 << m) - 1) as f64).sqrt();
            let err = t.estimate() as f64 - f64::from(G);
            assert!(err.abs() <= 5.0 * sd, "receiver {r}: estimate {} with {m} bits, sd {sd:.0}", t.estimate());
            assert!(t.stored() >= limit / 4, "receiver {r}: {} stored", t.stored());
        }
    }

    /// A group of 10^4 that shrinks to 100: the silent members expire, the mask loses a bit at
    /// each expiry while the table is at most a quarter full, and once it has none the estimate
    /// is the exact count again (RFC 2762 §4.2: members heard again move down to the current
    /// bin, new ones come in at it).
    #[test]
    fn a_shrinking_group_brings_the_mask_back_to_an_exact_count() {
        let mut t = Members::new(256);
        t.set_key(Addr::new(NodeId(u32::MAX), 9));
        let addr = |i: u32| Addr::new(NodeId(i), 1);
        let mut now = Instant::ZERO;
        for i in 0..10_000 {
            now += Duration::from_micros(100);
            assert!(t.heard(addr(i), now));
        }
        let bits = t.bits();
        assert!(bits >= 5, "{bits} bits for 10^4 members in 256");
        let timeout = Duration::from_secs(5);
        let mut seen = Vec::new();
        for s in 2..40u64 {
            now = Instant::from_secs_f64(s as f64);
            for i in 0..100 {
                assert!(t.heard(addr(i), now));
            }
            t.expire(now, timeout);
            seen.push((t.bits(), t.estimate()));
            assert!(t.stored() <= 256);
        }
        // the mask shrank one bit per expiry, from the first expiry of the silent members on
        assert_eq!(seen.last(), Some(&(0, 100)), "{seen:?}");
        let first_zero = seen.iter().position(|&(b, _)| b == 0).unwrap();
        assert!(first_zero >= bits as usize, "{seen:?}");
    }
}
