//! The source's per-receiver tables, laid out small (§1: "efficient implementations can reduce
//! the average case memory requirement to below 1MB for 10,000-50,000 receivers").
//!
//! Every table that grows with the receivers heard from is a column indexed by the receiver's
//! number (the order of its first NAK), grown by [`grow_slim`] rather than by doubling, so that
//! its spare capacity stays a few percent at any size. The source maps a NAK's address to that
//! number through [`ReceiverTable`]: the addresses in a 6-byte column and an open-addressing
//! index of 4-byte receiver numbers, instead of a hash map holding each address a second time.

use castlab_core::{Addr, NodeId};

/// Smallest step by which a column grows (elements).
const MIN_STEP: usize = 1024;
/// A column grows by 1/`GROWTH_DIV` of its capacity (our choice: at most about 3 % spare, and
/// each element copied at most about 32 times in all by reallocations).
const GROWTH_DIV: usize = 32;

/// Make `v` hold `n` elements, new ones set to `fill`. Capacity grows to at least `n` and by at
/// least 1/32 of itself (and [`MIN_STEP`] elements), not to twice itself: the figure of the
/// source's state counts capacity, and doubling would leave up to half of it unused.
pub(crate) fn grow_slim<T: Clone>(v: &mut Vec<T>, n: usize, fill: T) {
    if n <= v.len() {
        return;
    }
    if n > v.capacity() {
        let target = n.max(v.capacity() + (v.capacity() / GROWTH_DIV).max(MIN_STEP));
        v.reserve_exact(target - v.len());
    }
    v.resize(n, fill);
}

/// An address in 6 bytes (a node's 4, a port's 2), where [`Addr`] takes 8 with its padding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct PackedAddr([u16; 3]);

impl PackedAddr {
    fn new(a: Addr) -> Self {
        PackedAddr([a.node.0 as u16, (a.node.0 >> 16) as u16, a.port])
    }
    fn addr(self) -> Addr {
        let [lo, hi, port] = self.0;
        Addr::new(NodeId(u32::from(lo) | u32::from(hi) << 16), port)
    }
}

/// An empty slot of [`ReceiverTable::slots`].
const EMPTY: u32 = u32::MAX;
/// The index grows when it would be fuller than `LOAD_NUM / LOAD_DEN` (linear probing stays
/// short below about 0.8: our choice).
const LOAD_NUM: usize = 4;
const LOAD_DEN: usize = 5;
/// ... and then by a quarter (so it is between 64 % and 80 % full after its first growths).
const INDEX_GROWTH_DIV: usize = 4;
const MIN_SLOTS: usize = 64;

/// Receivers told apart by address, numbered in the order they are first seen.
#[derive(Clone, Debug, Default)]
pub struct ReceiverTable {
    /// Receiver number → address.
    addrs: Vec<PackedAddr>,
    /// Open addressing with linear probing: a receiver number or [`EMPTY`]. The home slot of an
    /// address is its hash scaled to the table's length (any length, not only powers of two).
    slots: Vec<u32>,
}

impl ReceiverTable {
    /// Receivers seen.
    pub fn len(&self) -> usize {
        self.addrs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }
    /// Address of receiver `i` (`i < len()`).
    pub fn addr(&self, i: usize) -> Addr {
        self.addrs[i].addr()
    }
    /// The addresses, by receiver number.
    pub fn addrs(&self) -> impl ExactSizeIterator<Item = Addr> + '_ {
        self.addrs.iter().map(|p| p.addr())
    }
    /// Bytes of its tables (allocated capacity).
    pub fn heap_bytes(&self) -> usize {
        self.addrs.capacity() * std::mem::size_of::<PackedAddr>() + self.slots.capacity() * std::mem::size_of::<u32>()
    }

    fn home(slots: usize, a: Addr) -> usize {
        // splitmix64's finaliser over the 48 bits of the address; the top 32 bits scaled to
        // the table's length
        let mut h = (u64::from(a.node.0) << 16 | u64::from(a.port)).wrapping_add(0x9E37_79B9_7F4A_7C15);
        h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 31;
        (((h >> 32) * slots as u64) >> 32) as usize
    }

    /// Receiver `a`'s number, if seen.
    pub fn get(&self, a: Addr) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let key = PackedAddr::new(a);
        let mut i = Self::home(self.slots.len(), a);
        loop {
            match self.slots[i] {
                EMPTY => return None,
                r if self.addrs[r as usize] == key => return Some(r),
                _ => i = if i + 1 == self.slots.len() { 0 } else { i + 1 },
            }
        }
    }

    /// Receiver `a`'s number, numbering it next if new. `None` only when `u32::MAX - 1`
    /// receivers are already numbered (a number must fit the records' `u32`, and `u32::MAX`
    /// marks an empty slot).
    pub fn get_or_insert(&mut self, a: Addr) -> Option<u32> {
        if let Some(r) = self.get(a) {
            return Some(r);
        }
        let r = self.addrs.len();
        if r >= EMPTY as usize - 1 {
            return None;
        }
        if (r + 1) * LOAD_DEN > self.slots.len() * LOAD_NUM {
            let grown = self.slots.len() + self.slots.len() / INDEX_GROWTH_DIV;
            self.rebuild(grown.max(MIN_SLOTS).max((r + 1) * LOAD_DEN / LOAD_NUM + 1));
        }
        grow_slim(&mut self.addrs, r + 1, PackedAddr::new(a));
        self.place(a, r as u32);
        Some(r as u32)
    }

    fn place(&mut self, a: Addr, r: u32) {
        let mut i = Self::home(self.slots.len(), a);
        while self.slots[i] != EMPTY {
            i = if i + 1 == self.slots.len() { 0 } else { i + 1 };
        }
        self.slots[i] = r;
    }

    /// Re-index every receiver into `n` slots (allocated to exactly `n`).
    fn rebuild(&mut self, n: usize) {
        let mut slots = Vec::with_capacity(n);
        slots.resize(n, EMPTY);
        self.slots = slots;
        for r in 0..self.addrs.len() {
            self.place(self.addrs[r].addr(), r as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    //! The packed tables against straightforward references written here: a `HashMap` of
    //! addresses with a `Vec` of them, `Option` times and rounds in maps, a plain `Vec<f64>`
    //! of counts. Random LI sequences from many receivers, with the values at the edges of the
    //! narrowed types.

    use std::collections::HashMap;

    use castlab_core::{Addr, Duration, Instant, NodeId, Rng};

    use super::super::{Li2Le, MaxLprf};
    use super::*;

    /// 2^48 ns: the first time the 6-byte column cannot hold.
    const LIMIT: u64 = 1 << 48;

    fn random_addr(rng: &mut Rng, pool: u64) -> Addr {
        // a small pool so that addresses repeat, spread over the extremes of node and port
        let k = rng.below(pool);
        let node = match k % 4 {
            0 => k as u32,
            1 => u32::MAX - k as u32,
            2 => (k as u32) << 16 | 0xFFFF,
            _ => 0x8000_0000 | k as u32,
        };
        let port = match k % 3 {
            0 => 0,
            1 => u16::MAX,
            _ => k as u16,
        };
        Addr::new(NodeId(node), port)
    }

    #[test]
    fn receiver_table_numbers_addresses_as_a_hash_map_does() {
        for seed in 0..4 {
            let mut rng = Rng::seed_from_u64(seed);
            let mut t = ReceiverTable::default();
            let mut map: HashMap<Addr, u32> = HashMap::new();
            let mut list: Vec<Addr> = Vec::new();
            for _ in 0..60_000 {
                let a = random_addr(&mut rng, 20_000);
                let want = *map.entry(a).or_insert_with(|| {
                    list.push(a);
                    list.len() as u32 - 1
                });
                assert_eq!(t.get_or_insert(a), Some(want));
                assert_eq!(t.get(a), Some(want));
            }
            assert_eq!(t.len(), list.len());
            assert_eq!(t.addrs().collect::<Vec<_>>(), list);
            assert!((0..list.len()).all(|i| t.addr(i) == list[i]));
            // an address never seen is not found (node 7 with port 1 is outside the pool's forms)
            assert_eq!(t.get(Addr::new(NodeId(7), 1)), None);
            // the index is never fuller than 80 %, and the columns' spare is under their step
            assert!(t.slots.len() * 4 >= t.len() * 5, "{} slots for {}", t.slots.len(), t.len());
            assert!(t.addrs.capacity() - t.len() <= MIN_STEP.max(t.len() / GROWTH_DIV));
        }
    }

    #[test]
    fn grow_slim_leaves_a_few_percent_spare_at_any_size() {
        let mut v: Vec<u64> = Vec::new();
        for n in 1..300_000usize {
            grow_slim(&mut v, n, 0);
            assert_eq!(v.len(), n);
            // spare below one step of growth: at most 1024 elements or 1/32 of the length
            assert!(v.capacity() - n <= MIN_STEP.max(n / GROWTH_DIV + 1), "{n}: capacity {}", v.capacity());
        }
        // asked for a size at once, it takes that size
        let mut w: Vec<u64> = Vec::new();
        grow_slim(&mut w, 10_001, 7);
        assert_eq!((w.len(), w.capacity()), (10_001, 10_001));
    }

    /// LI2LE's window reading, as §2.1 and Appendix A state it: per receiver an optional time.
    #[derive(Default)]
    struct RefWindow {
        last: HashMap<usize, Instant>,
    }

    impl RefWindow {
        fn offer(&mut self, now: Instant, rcv: usize, window: Duration) -> bool {
            let pass = match self.last.get(&rcv) {
                None => true,
                Some(&t) => now.saturating_since(t) > window,
            };
            if pass {
                self.last.insert(rcv, now);
            }
            pass
        }
    }

    /// LI2LE's slot reading: one clock of rounds from the first LI, per receiver an optional
    /// last round passed.
    #[derive(Default)]
    struct RefSlot {
        start_ns: Option<u64>,
        round: u64,
        last: HashMap<usize, u64>,
    }

    impl RefSlot {
        fn offer(&mut self, now: Instant, rcv: usize, slot: Duration) -> bool {
            let t = now.as_nanos();
            let start = *self.start_ns.get_or_insert(t);
            let len = slot.as_nanos().max(1);
            let whole = t.saturating_sub(start) / len;
            self.round += whole;
            self.start_ns = Some(start + whole * len);
            let pass = self.last.get(&rcv).is_none_or(|&r| r < self.round);
            if pass {
                self.last.insert(rcv, self.round);
            }
            pass
        }
    }

    /// Max-LPRF as Appendix A states it, over a plain vector of counts.
    #[derive(Default)]
    struct RefLprf {
        x: Vec<f64>,
        sum: f64,
        max: f64,
    }

    impl RefLprf {
        fn offer(&mut self, rcv: usize, u: f64) -> bool {
            if self.x.len() <= rcv {
                self.x.resize(rcv + 1, 0.0);
            }
            self.x[rcv] += 1.0;
            self.sum += 1.0;
            self.max = self.max.max(self.x[rcv]);
            u < self.max / self.sum
        }
        fn decay(&mut self, f: f64) {
            for v in &mut self.x {
                *v *= f;
            }
            self.sum = self.x.iter().fold(0.0, |s, v| s + v);
            self.max *= f;
        }
    }

    /// A random LI stream from `receivers` receivers starting at `t0` ns: gaps of 0 to about
    /// `mean_gap` ns (a fifth of them 0, LIs at one instant), windows from 0 to a few times the
    /// gap, and now and then a jump of `jump` ns.
    fn stream(seed: u64, receivers: u64, t0: u64, mean_gap: u64, jump: u64) -> Vec<(Instant, usize, Duration)> {
        let mut rng = Rng::seed_from_u64(seed);
        let mut t = t0;
        (0..40_000)
            .map(|_| {
                let gap = if rng.below(5) == 0 { 0 } else { rng.below(2 * mean_gap + 1) };
                t = t.saturating_add(gap).saturating_add(if rng.below(1000) == 0 { jump } else { 0 });
                let window = match rng.below(4) {
                    0 => 0,
                    1 => 1,
                    _ => rng.below(receivers * mean_gap + 1),
                };
                (Instant::from_nanos(t), rng.below(receivers) as usize, Duration::from_nanos(window))
            })
            .collect()
    }

    #[test]
    fn li2le_window_reading_decides_as_the_reference_across_the_narrow_limit() {
        // streams wholly below 2^48 ns, starting just below it (the column widens mid-way),
        // and starting at it
        let starts = [(0, 1_000_000, 0), (LIMIT - 2_000_000_000, 200_000, 1_000_000_000), (LIMIT - 1, 1_000, 0)];
        for (k, &(t0, gap, jump)) in starts.iter().enumerate() {
            let (mut packed, mut reference) = (Li2Le::default(), RefWindow::default());
            let s = stream(k as u64, 3000, t0, gap, jump);
            for (i, &(now, rcv, window)) in s.iter().enumerate() {
                assert_eq!(packed.offer(now, rcv, window), reference.offer(now, rcv, window), "LI {i} of stream {k}");
            }
            let last = s.last().expect("LIs").0.as_nanos();
            assert_eq!(packed.is_narrow(), last < LIMIT - 1, "stream {k} ends at {last}");
        }
    }

    #[test]
    fn li2le_keeps_a_pass_at_the_narrow_sentinels_value() {
        // a pass at 2^48 − 1 ns (the 6-byte column's "never") is a time like any other
        let w = Duration::from_nanos(10);
        let mut f = Li2Le::default();
        assert!(f.offer(Instant::from_nanos(LIMIT - 2), 0, w));
        assert!(f.is_narrow());
        assert!(f.offer(Instant::from_nanos(LIMIT - 1), 1, w));
        assert!(!f.is_narrow());
        assert!(!f.offer(Instant::from_nanos(LIMIT - 1 + 10), 1, w), "10 ns after its pass, not more");
        assert!(f.offer(Instant::from_nanos(LIMIT - 1 + 11), 1, w));
        // receiver 0's time survived the widening; receiver 2 was never passed
        assert!(!f.offer(Instant::from_nanos(LIMIT + 8), 0, w));
        assert!(f.offer(Instant::from_nanos(LIMIT + 9), 0, w));
        assert!(f.offer(Instant::from_nanos(LIMIT + 9), 2, w));
        // and the last instant before the end of time
        assert!(f.offer(Instant::from_nanos(u64::MAX - 1), 3, w));
        assert!(!f.offer(Instant::from_nanos(u64::MAX - 1), 3, w));
    }

    #[test]
    fn li2le_slot_reading_decides_as_the_reference_with_rounds_past_the_narrow_limit() {
        // 1 ns slots from an LI at 0: the round number is the time in ns, and crosses 2^48
        let cases = [(0, 1_000_000, 0, false), (0, 500, LIMIT - 10_000_000, true), (3, 50, LIMIT, true)];
        for (k, &(t0, gap, jump, tiny)) in cases.iter().enumerate() {
            let (mut packed, mut reference) = (Li2Le::default(), RefSlot::default());
            let mut s = stream(10 + k as u64, 2000, t0, gap, jump);
            if tiny {
                for li in &mut s {
                    li.2 = Duration::from_nanos(li.2.as_nanos() % 3);
                }
                s.insert(0, (Instant::ZERO, 0, Duration::from_nanos(1)));
            }
            for (i, &(now, rcv, slot)) in s.iter().enumerate() {
                assert_eq!(packed.offer_slot(now, rcv, slot), reference.offer(now, rcv, slot), "LI {i} of case {k}");
            }
            assert_eq!(packed.round(), reference.round);
            assert_eq!(packed.is_narrow(), reference.round < LIMIT - 1, "case {k}: round {}", reference.round);
        }
        // a receiver passed in round 2^48 − 1 (the 6-byte column's "never") is passed in it
        let mut f = Li2Le::default();
        let one = Duration::from_nanos(1);
        assert!(f.offer_slot(Instant::ZERO, 0, one));
        assert!(f.offer_slot(Instant::from_nanos(LIMIT - 2), 0, one));
        assert!(f.is_narrow());
        assert!(f.offer_slot(Instant::from_nanos(LIMIT - 1), 1, one));
        assert_eq!((f.round(), f.is_narrow()), (LIMIT - 1, false));
        assert!(!f.offer_slot(Instant::from_nanos(LIMIT - 1), 1, one));
        // receiver 0, last passed in round 2^48 − 2, kept its round through the widening
        assert!(f.offer_slot(Instant::from_nanos(LIMIT - 1), 0, one));
        assert!(!f.offer_slot(Instant::from_nanos(LIMIT - 1), 0, one));
        assert!(f.offer_slot(Instant::from_nanos(LIMIT), 0, one));
        assert!(f.offer_slot(Instant::from_nanos(LIMIT), 1, one));
    }

    #[test]
    fn max_lprf_decides_and_counts_as_the_reference() {
        let mut rng = Rng::seed_from_u64(5);
        let (mut packed, mut reference) = (MaxLprf::default(), RefLprf::default());
        for i in 0..200_000u32 {
            // receivers with unequal rates, some heard only late
            let rcv = (rng.below(64) * rng.below(64) + if i > 100_000 { rng.below(5000) } else { 0 }) as usize;
            let u = rng.uniform();
            assert_eq!(packed.offer(rcv, u), reference.offer(rcv, u), "LE {i}");
            if rng.below(3000) == 0 {
                packed.decay(0.9);
                reference.decay(0.9);
            }
        }
        assert_eq!(packed.counts().len(), reference.x.len());
        assert!(packed.counts().iter().zip(&reference.x).all(|(a, b)| a.to_bits() == b.to_bits()));
        assert_eq!(packed.ratio().to_bits(), (reference.max / reference.sum).to_bits());
    }
}
