//! Events and the event queue.
//!
//! # Why `(time, seq)`
//! An event is keyed by its time (integer nanoseconds) and a sequence number that the
//! simulator increments at every `schedule` and never reuses. Ordering by `(time, seq)` makes
//! the order of events total: two events never compare equal, so *any* correct priority queue
//! pops them in exactly the same order, and a run is a pure function of scenario and seed
//! (swapping the queue's data structure cannot change a result). Among events at the same
//! time the one scheduled first runs first (first in, first out): a packet handed to a link
//! before another at the same instant is also served before it, and an agent's timer set
//! before a packet's arrival at that instant fires before the arrival is handled, as the
//! order of the calls that scheduled them says. Time itself never goes back; the run loop
//! asserts it.
//!
//! # The queue
//! A heap of *runs* of equal-time events ([`EventQueue`] says why that keeps the exact
//! order), keyed by `(time, seq)` packed into one `u128` so two keys compare in one step; the
//! heap is `std`'s binary heap while it is small and 4-ary ([`RunHeap`]) once it has held
//! [`QUAD_FROM`] runs, for the millions of runs of a large session. Arrivals at the far end
//! of a link wait apart, in a first-in-first-out queue per channel, with only each channel's
//! front in a second heap (see "Arrivals on the wire" at [`EventQueue`]); the arrivals of a
//! long batch of departures wait on one train, sorted once, with only its front in that heap
//! ("Trains").
//! Measured with callgrind on the CBR star with 100 receivers for 60 s (1.52 M events):
//! 1.010 G instructions with `std`'s heap of single events and the `(time, seq)` tuple
//! compare, 0.936 G with the packed key, 0.708 G with runs; wall time of the 10,000-receiver
//! star for 60 s: 9.8 s with the heap of single events, 4.3 s with runs (docs/engine.md). A
//! hand-written 4-ary heap of single events took 1.202 G (2-ary 1.124 G) and was dropped.
//! Four runs open to appends instead of one (see [`EventQueue`]): 6.52 G to 5.27 G on the
//! protocols bench's layered-receiver scenario, whose saturated links had made nearly every run a single
//! event.

use std::collections::{BinaryHeap, VecDeque};

use castlab_core::{AgentId, ChannelId, GroupId, NodeId};

use super::class::ClassId;
use super::link::LinkEv;
use super::pool::Slot;

/// What happens at an event.
#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    /// A packet's serialisation ends or it reaches the far end of its link (the engine's
    /// `link`).
    Link(LinkEv),
    AgentStart {
        agent: AgentId,
    },
    AgentTimer {
        agent: AgentId,
    },
    ExtStart {
        node: NodeId,
    },
    ExtTimer {
        node: NodeId,
    },
    /// A graft travelling up channel `ch` (downstream → upstream), sent while the channel
    /// had gone down `epoch` times (lost if it went down since).
    Graft {
        group: GroupId,
        ch: ChannelId,
        epoch: u32,
    },
    /// A node decides to prune itself from a group's tree.
    PruneFire {
        group: GroupId,
        node: NodeId,
        gen: u32,
    },
    /// A prune travelling up channel `ch` (`epoch` as for `Graft`).
    PruneArrive {
        group: GroupId,
        ch: ChannelId,
        epoch: u32,
    },
    /// A duplex link (channel `ch` and its reverse) is set down or up.
    LinkState {
        ch: ChannelId,
        up: bool,
    },
    /// A node fails (every link of it down) or comes back.
    NodeState {
        node: NodeId,
        up: bool,
    },
    Sample {
        ch: ChannelId,
    },
    /// A class's copies of packet `pkt` finish serialisation (the engine's `class`).
    ClassTx {
        class: ClassId,
        pkt: Slot,
    },
    /// A class's copies of packet `pkt` arrive.
    ClassArrive {
        class: ClassId,
        pkt: Slot,
    },
    /// A packet agent `agent` sent, leaving its host after the phase-randomisation delay.
    Inject {
        agent: AgentId,
        pkt: Slot,
    },
}

/// A scheduled event: its key `(time, seq)` and what happens.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) time: u64,
    pub(super) seq: u64,
    pub(super) ev: Ev,
}

impl Entry {
    /// `(time, seq)` as one 128-bit number: one comparison orders two entries.
    #[inline(always)]
    fn key(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.seq)
    }
}

/// A run: events of one time, in `seq` order (see [`EventQueue`]), popped from the front by
/// moving `head` (cheaper than a ring buffer's wrap-around, and the storage is reused when the
/// run empties). The heap key holds the first event's `seq`; the events' own `seq`s are not
/// needed once they are in order, so the run does not store them. The first event sits in the
/// run itself and only the later ones in `rest`: most runs hold one event (an arrival at a time
/// of its own, as with every receiver on a link of its own delay), and such a run then needs no
/// buffer of its own, neither its bytes (a run is in the queue for every packet in flight, 5
/// million at once with 10^5 receivers) nor the cache miss of reading it when it is popped.
#[derive(Clone, Copy)]
struct Run {
    time: u64,
    /// The next event to pop (0: `first`, i: `rest`'s i-1).
    head: u32,
    len: u32,
    first: Ev,
    /// The later events' buffer in `EventQueue::rests`, or `NO_REST` while the run holds one.
    rest: u32,
}

/// `Run::rest` of a run that holds one event.
const NO_REST: u32 = u32::MAX;

/// How many open runs (of distinct times) a push may append to.
const OPEN: usize = 4;
/// An empty slot of [`EventQueue::open`].
const NONE: u32 = u32::MAX;

/// A run's place in the heap: its time and its first event's `seq`, packed.
#[derive(Clone, Copy)]
struct RunKey {
    key: u128,
    run: u32,
}
/// Four [`RunKey`]s, aligned so that the four children of a node of [`RunHeap`] share the
/// same two cache lines.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Quad([RunKey; 4]);

/// An unused slot of a [`Quad`].
const NO_KEY: RunKey = RunKey { key: u128::MAX, run: NONE };

/// A 4-ary min-heap of run keys, the smallest key on top. Position 0 is the root and the
/// children of position p are 4p+1 ..= 4p+4; position p is stored in slot p + 3, so the four
/// children of p fill quad p + 1. At 10^5 receivers the heap holds millions of runs (a packet
/// in flight to each receiver, each at a time of its own) and a pop is a walk from the root
/// to a leaf whose every step is a cache miss: four children per step halve the steps, and
/// the two lines a step reads are adjacent and fetched together. Any correct heap pops the
/// same order, keys being distinct (the module's doc).
#[derive(Default)]
struct RunHeap {
    quads: Vec<Quad>,
    len: usize,
}

const SKIP: usize = 3;

impl RunHeap {
    #[inline(always)]
    fn at(&self, p: usize) -> RunKey {
        let s = p + SKIP;
        self.quads[s >> 2].0[s & 3]
    }

    #[inline(always)]
    fn set(&mut self, p: usize, k: RunKey) {
        let s = p + SKIP;
        self.quads[s >> 2].0[s & 3] = k;
    }

    #[inline(always)]
    fn peek(&self) -> Option<RunKey> {
        if self.len == 0 {
            None
        } else {
            Some(self.at(0))
        }
    }

    fn push(&mut self, k: RunKey) {
        if (self.len + SKIP) >> 2 >= self.quads.len() {
            self.quads.push(Quad([NO_KEY; 4]));
        }
        let mut p = self.len;
        self.len += 1;
        while p > 0 {
            let up = (p - 1) / 4;
            let u = self.at(up);
            if u.key < k.key {
                break;
            }
            self.set(p, u);
            p = up;
        }
        self.set(p, k);
    }

    /// Remove the top.
    fn pop(&mut self) {
        if self.len == 0 {
            return;
        }
        self.len -= 1;
        let last = self.at(self.len);
        self.set(self.len, NO_KEY);
        if self.len == 0 {
            return;
        }
        self.sift_down(last);
    }

    /// Replace the top with `k` (one walk down instead of a pop's and a push's).
    fn replace_top(&mut self, k: RunKey) {
        if self.len == 0 {
            return self.push(k);
        }
        self.sift_down(k);
    }

    /// Put `last` in the root's place and move it down to where it belongs.
    #[inline(always)]
    fn sift_down(&mut self, last: RunKey) {
        // unused slots hold `NO_KEY`, larger than every key: a node's four children are
        // compared without looking at `len`
        let mut p = 0;
        loop {
            let c = 4 * p + 1;
            if c >= self.len {
                break;
            }
            let q = &self.quads[p + 1].0;
            let (mut m, mut mk) = (0, q[0].key);
            for (i, k) in q.iter().enumerate().skip(1) {
                if k.key < mk {
                    m = i;
                    mk = k.key;
                }
            }
            if last.key < mk {
                break;
            }
            let child = q[m];
            self.set(p, child);
            p = c + m;
        }
        self.set(p, last);
    }
}

impl PartialEq for RunKey {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for RunKey {}
impl PartialOrd for RunKey {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for RunKey {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest run first.
    #[inline(always)]
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.key.cmp(&self.key)
    }
}

/// Runs in the heap from which it is a [`RunHeap`] rather than `std`'s binary heap: 2^15 keys
/// are 1 MiB, about what a core's private caches hold. Below, every level is in the cache and
/// the binary heap's fewer comparisons cost less (the layered receivers' scenarios hold a few
/// hundred runs); above, the 4-ary heap's fewer levels save cache misses (our choice, from a
/// steady state of random keys: the two equal at 10^3 keys, the 4-ary 1.8 times faster at 10^5).
const QUAD_FROM: usize = 1 << 15;

/// The heap of runs: `std`'s binary heap while small, a [`RunHeap`] once it has held
/// `quad_from` runs (for good: a simulation whose heap grew so far tends to again). Both pop the smallest
/// key, and keys are distinct, so the order is the same either way.
enum Heap {
    Binary(BinaryHeap<RunKey>),
    Quad(RunHeap),
}

impl Heap {
    #[inline(always)]
    fn peek(&self) -> Option<RunKey> {
        match self {
            Heap::Binary(h) => h.peek().copied(),
            Heap::Quad(h) => h.peek(),
        }
    }

    #[inline]
    fn push(&mut self, k: RunKey, quad_from: usize) {
        match self {
            Heap::Binary(h) => {
                h.push(k);
                if h.len() >= quad_from {
                    self.make_quad();
                }
            }
            Heap::Quad(h) => h.push(k),
        }
    }

    #[inline(always)]
    fn pop(&mut self) {
        match self {
            Heap::Binary(h) => {
                h.pop();
            }
            Heap::Quad(h) => h.pop(),
        }
    }

    /// Replace the top (there is one) with `k`.
    #[inline(always)]
    fn replace_top(&mut self, k: RunKey) {
        match self {
            Heap::Binary(h) => {
                if let Some(mut top) = h.peek_mut() {
                    *top = k;
                }
            }
            Heap::Quad(h) => h.replace_top(k),
        }
    }

    /// The runs (or channels) of the top's children, `NONE` where there is none: whatever is
    /// on top after the next pop is one of them or a key pushed since (a prefetch hint).
    #[inline(always)]
    fn top_children(&self) -> [u32; 4] {
        match self {
            Heap::Binary(h) => {
                let s = h.as_slice();
                let run = |i: usize| s.get(i).map_or(NONE, |k| k.run);
                [run(1), run(2), NONE, NONE]
            }
            // unused slots hold `NO_KEY`, whose run is `NONE`
            Heap::Quad(h) => h.quads.get(1).map_or([NONE; 4], |q| q.0.map(|k| k.run)),
        }
    }

    /// Move every key to a [`RunHeap`] (once per run of the simulator at most).
    #[inline(never)]
    fn make_quad(&mut self) {
        if let Heap::Binary(h) = self {
            let mut q = RunHeap::default();
            for k in std::mem::take(h).into_vec() {
                q.push(k);
            }
            *self = Heap::Quad(q);
        }
    }
}

/// An arrival on a channel's wire (see [`EventQueue`]): its key and event (an `Arrive` or an
/// `ArriveBatch` whose first member is on this channel).
#[derive(Clone, Copy)]
struct Wire {
    time: u64,
    seq: u64,
    ev: Ev,
}

impl Wire {
    #[inline(always)]
    fn key(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.seq)
    }
}

/// `EventQueue::backs` of an empty wire.
const NO_BACK: u64 = u64::MAX;

/// A place ([`EventQueue::last_pushed`]) whose first number carries this bit is in a wire:
/// the channel is the rest of that number, the second number the index from the wire's front.
const WIRE: u32 = 1 << 31;
/// A place carrying this bit as well as `WIRE`, or a key of `heads` carrying it, is in a
/// train: the train is the rest of that number (the place's second number: the index in the
/// train). Channels from this number on have no wire (their arrivals go to the runs).
const TRAIN: u32 = 1 << 30;

/// A train of arrivals (see "Trains" at [`EventQueue`]): pushed in any order while it is
/// built, sorted once, then popped from `head`. Its storage is recycled.
#[derive(Default)]
struct Train {
    wires: Vec<Wire>,
    head: usize,
}

/// Pending events, earliest `(time, seq)` first.
///
/// A multicast fan-out schedules one event per branch at the same time in one go (every copy's
/// `TxDone`, then every copy's `Arrive`): with 10,000 receivers, 10,000 heap entries that a
/// plain heap sifts through 14 levels each. So events are grouped into *runs* of one time, and
/// the heap holds runs, keyed by `(time, seq of the run's first event)`. A push at time T
/// appends to the newest run of time T if that run is one of the few recently started runs
/// remembered in `open`; otherwise it starts a new run. Remembering several (not only the
/// last) matters on a saturated link: each departure schedules its packet's `Arrive` and the
/// next packet's `TxDone`, alternating two times, and with only the last run remembered every
/// event would start a run of its own (measured: 5.6 M runs for 11.5 M events in the protocols
/// bench's layered-receiver scenario).
///
/// Why the order is still exactly `(time, seq)`: `seq` only grows, and a push at T only ever
/// appends to the *newest* run of time T (a run enters `open` when it is started, a new run of
/// T is only started when no run of T is in `open`, and a run leaves `open` for good when it
/// is evicted, emptied or closed by an arrival of its time, below). So of two runs with the
/// same time, every event of the older one has a smaller `seq` than every event of the newer
/// one, and each run is in `seq` order. Hence the
/// run at the top of the heap holds the smallest pending `(time, seq)` at its front, keeps it
/// after each pop (its key does not change, and whatever it is compared with is later in
/// time or, at the same time, wholly after it), and is popped from the front until it is
/// empty. A fan-out's events are then popped at O(1) each. Runs are recycled with their
/// storage, so a steady state allocates nothing.
///
/// # Arrivals on the wire
/// A packet's copies on links of distinct delays arrive at distinct times, so each would be a
/// run of its own: at 10^5 receivers, millions of runs in the heap at once, each pop a walk
/// down a heap far larger than the caches. But a channel delivers in order: its arrivals are
/// scheduled at `now + delay` with one delay and `now` never going back, so in `(time, seq)`
/// order. So arrivals ([`EventQueue::push_wire`]) wait in a FIFO per channel (`wires`), and
/// only each channel's front sits in a second heap (`heads`, at most one key per channel); a
/// pop takes whichever of the two heaps' tops has the smaller `(time, seq)`. Every event keeps
/// the `seq` it was given, and each structure pops its own events in `(time, seq)` order, so
/// the merged order is exactly that of one queue holding them all. For the runs that needs one
/// more rule: an arrival closes the open run of its time (it leaves `open`), since a run's
/// events pop together and a later push of that time must not join a run begun before the
/// arrival, whose `seq` lies between theirs. An arrival whose key is
/// not above its channel's last (none in the simulator; a caller may schedule so) goes to the
/// runs instead: the order stays exact either way. The FIFOs keep their storage, so a steady
/// state allocates nothing.
///
/// # Trains
/// A fan-out to many receivers' links of one rate is one batch of departures, and each
/// departure puts its copy on its own channel's wire at `now + delay`: with 10^5 receivers on
/// links of distinct delays, each wire holds a packet or two and the heap of wire fronts holds
/// about one key per receiver, so every arrival is a push and a pop in a heap of megabytes.
/// The arrivals one batch of departures schedules are instead collected into a *train*
/// ([`EventQueue::begin_train`], [`EventQueue::push_train`]), sorted by `(time, seq)` once
/// when the batch is done ([`EventQueue::end_train`]), and the train's front alone sits in the
/// heap of fronts (a key whose `run` carries `TRAIN`): a pop takes the next entry of an array
/// read in order. The merged order is still exactly `(time, seq)`: every event keeps its
/// `seq`, each train pops its own events in that order, and no pop comes while a train is
/// built (a batch runs within one event). A train's entry closes the open run of its time, as
/// an arrival on a wire does. While a train is built its entries' places (`last_pushed`) are
/// valid; the sort moves them, so the caller forgets its places when the train ends.
pub(super) struct EventQueue {
    heap: Heap,
    /// When the heap becomes a [`RunHeap`] ([`QUAD_FROM`]; lower in tests).
    quad_from: usize,
    runs: Vec<Run>,
    free: Vec<u32>,
    /// The buffers of the runs' later events, recycled with their storage (`rests_free`).
    rests: Vec<Vec<Ev>>,
    rests_free: Vec<u32>,
    /// Recently started runs that still hold events, as `(time, run)`; at most one per time,
    /// and it is the newest run of its time. `NONE` marks an empty slot.
    open: [(u64, u32); OPEN],
    /// The slot the next started run takes (round robin).
    victim: usize,
    len: usize,
    /// Where the most recent push went: its run and its index in the run.
    last: (u32, u32),
    /// Entries popped so far (a batch counts once).
    pub(super) pops: u64,
    /// Per channel, its arrivals in `(time, seq)` order; grown to the highest channel pushed.
    wires: Vec<VecDeque<Wire>>,
    /// Per channel, the time of its wire's last arrival, `NO_BACK` when the wire is empty (or
    /// that time is `NO_BACK` itself). Dense, 8 bytes a channel, so that a push in order reads
    /// it here rather than the wire's last entry, a cache miss of its own behind the wire's
    /// header at 10^5 channels.
    backs: Vec<u64>,
    /// The front of every non-empty wire and train, keyed as a run is, `run` holding the
    /// channel (or `TRAIN` and the train).
    heads: Heap,
    /// Trains, built, waiting, or free for reuse (`trains_free`).
    trains: Vec<Train>,
    trains_free: Vec<u32>,
    /// Trains ended holding at least one event.
    pub(super) trains_run: u64,
    /// Whether the event popped last came off a train.
    pub(super) popped_train: bool,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            heap: Heap::Binary(BinaryHeap::new()),
            quad_from: QUAD_FROM,
            runs: Vec::new(),
            free: Vec::new(),
            rests: Vec::new(),
            rests_free: Vec::new(),
            open: [(0, NONE); OPEN],
            victim: 0,
            len: 0,
            last: (NONE, 0),
            pops: 0,
            wires: Vec::new(),
            backs: Vec::new(),
            heads: Heap::Binary(BinaryHeap::new()),
            trains: Vec::new(),
            trains_free: Vec::new(),
            trains_run: 0,
            popped_train: false,
        }
    }
}

impl EventQueue {
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The earliest pending event's time.
    #[cfg(test)]
    pub(super) fn peek_time(&self) -> Option<u64> {
        let k = self.heap.peek().map_or(u128::MAX, |k| k.key).min(self.heads.peek().map_or(u128::MAX, |k| k.key));
        (k != u128::MAX).then_some((k >> 64) as u64)
    }

    /// Push an arrival on channel `ch` (see "Arrivals on the wire"). Its `seq` must be larger
    /// than every earlier push's.
    #[inline]
    pub(super) fn push_wire(&mut self, ch: ChannelId, e: Entry) {
        let c = ch.index();
        if c >= self.wires.len() {
            if ch.0 >= TRAIN {
                return self.push(e);
            }
            self.wires.resize_with(c + 1, VecDeque::new);
            self.backs.resize(c + 1, NO_BACK);
        }
        self.close_runs_of(e.time);
        let key = e.key();
        let w = &mut self.wires[c];
        // a later time than the last arrival's, or the same time with a larger `seq` (every
        // push's is), is in order; else the wire itself decides (empty, or out of order)
        let back = self.backs[c];
        if back == NO_BACK || e.time < back {
            match w.back() {
                None => self.heads.push(RunKey { key, run: ch.0 }, self.quad_from),
                Some(b) if b.key() < key => {}
                // not in order behind the channel's last arrival: among the runs, still exact
                Some(_) => return self.push(e),
            }
        }
        self.backs[c] = e.time;
        w.push_back(Wire { time: e.time, seq: e.seq, ev: e.ev });
        self.last = (WIRE | ch.0, (w.len() - 1) as u32);
        self.len += 1;
    }

    /// An event of `time` kept apart from the runs (on a wire or a train) closes the open run of
    /// its time: a later push of that time must not join a run begun before it, whose events
    /// would then pop together, the kept-apart event after all of them.
    #[inline(always)]
    fn close_runs_of(&mut self, time: u64) {
        for slot in &mut self.open {
            if slot.0 == time {
                *slot = (0, NONE);
            }
        }
    }

    /// A new train, empty, to be filled with `push_train` and ended with `end_train` before the
    /// next pop (see "Trains").
    pub(super) fn begin_train(&mut self) -> u32 {
        match self.trains_free.pop() {
            Some(t) => t,
            None => {
                self.trains.push(Train::default());
                (self.trains.len() - 1) as u32
            }
        }
    }

    /// Push an event on train `t` (begun and not yet ended). Its `seq` must be larger than
    /// every earlier push's; its time may be any (the train is sorted when it ends).
    #[inline]
    pub(super) fn push_train(&mut self, t: u32, e: Entry) {
        self.close_runs_of(e.time);
        let tr = &mut self.trains[t as usize];
        tr.wires.push(Wire { time: e.time, seq: e.seq, ev: e.ev });
        self.last = (WIRE | TRAIN | t, (tr.wires.len() - 1) as u32);
        self.len += 1;
    }

    /// End train `t`: sort it and put its front among the fronts (an empty train is freed).
    /// The places of its entries (`last_pushed`) are no longer valid.
    pub(super) fn end_train(&mut self, t: u32) {
        let tr = &mut self.trains[t as usize];
        if tr.wires.is_empty() {
            self.trains_free.push(t);
            return;
        }
        tr.wires.sort_unstable_by_key(Wire::key);
        self.trains_run += 1;
        let key = tr.wires[0].key();
        self.heads.push(RunKey { key, run: TRAIN | t }, self.quad_from);
    }

    /// Push an event. Its `seq` must be larger than every earlier push's.
    #[inline]
    pub(super) fn push(&mut self, e: Entry) {
        self.len += 1;
        // newest first: a push most often continues the run started last (a fan-out)
        for k in 1..=OPEN {
            let (t, r) = self.open[(self.victim + OPEN - k) % OPEN];
            if t == e.time && r != NONE {
                let run = &self.runs[r as usize];
                let rest = if run.rest == NO_REST { self.take_rest(r) } else { run.rest };
                self.rests[rest as usize].push(e.ev);
                let run = &mut self.runs[r as usize];
                self.last = (r, run.len);
                run.len += 1;
                return;
            }
        }
        self.start_run(e);
    }

    /// Start a run with `e` (out of line: the common push appends, and stays short).
    #[inline(never)]
    fn start_run(&mut self, e: Entry) {
        let run = Run { time: e.time, head: 0, len: 1, first: e.ev, rest: NO_REST };
        let r = match self.free.pop() {
            Some(r) => {
                self.runs[r as usize] = run;
                r
            }
            None => {
                self.runs.push(run);
                (self.runs.len() - 1) as u32
            }
        };
        self.last = (r, 0);
        self.heap.push(RunKey { key: e.key(), run: r }, self.quad_from);
        self.open[self.victim] = (e.time, r);
        self.victim = (self.victim + 1) % OPEN;
    }

    /// Give run `r` a buffer for its later events (out of line: once per run of more than one).
    #[inline(never)]
    fn take_rest(&mut self, r: u32) -> u32 {
        let b = match self.rests_free.pop() {
            Some(b) => b,
            None => {
                self.rests.push(Vec::new());
                (self.rests.len() - 1) as u32
            }
        };
        self.runs[r as usize].rest = b;
        b
    }

    /// Where the most recently pushed event sits: its run and its index there. The place stays
    /// the event's until the next pop (a run is cleared and reused only once emptied by pops).
    #[inline]
    pub(super) fn last_pushed(&self) -> (u32, u32) {
        self.last
    }

    /// The event pushed at place `at` (from [`EventQueue::last_pushed`]). Only valid while no
    /// pop came since that push: the caller knows (the simulator forgets its places at each
    /// pop).
    #[inline]
    pub(super) fn pushed_mut(&mut self, at: (u32, u32)) -> &mut Ev {
        if at.0 & WIRE != 0 {
            if at.0 & TRAIN != 0 {
                return &mut self.trains[(at.0 & !(WIRE | TRAIN)) as usize].wires[at.1 as usize].ev;
            }
            return &mut self.wires[(at.0 & !WIRE) as usize][at.1 as usize].ev;
        }
        let run = &mut self.runs[at.0 as usize];
        match at.1 {
            0 => &mut run.first,
            i => &mut self.rests[run.rest as usize][i as usize - 1],
        }
    }

    /// The earliest event: its time and what happens.
    #[cfg(test)]
    pub(super) fn pop(&mut self) -> Option<(u64, Ev)> {
        self.pop_until(u64::MAX)
    }

    /// The earliest event if its time is at most `limit`.
    #[inline]
    pub(super) fn pop_until(&mut self, limit: u64) -> Option<(u64, Ev)> {
        let head = self.heads.peek();
        let top = match self.heap.peek() {
            Some(top) if head.is_none_or(|h| top.key < h.key) => top,
            _ => return self.pop_wire(head?, limit),
        };
        if (top.key >> 64) as u64 > limit {
            return None;
        }
        self.popped_train = false;
        let run = &mut self.runs[top.run as usize];
        let ev = match run.head {
            0 => run.first,
            i => self.rests[run.rest as usize][i as usize - 1],
        };
        run.head += 1;
        let time = run.time;
        if run.head == run.len {
            if run.rest != NO_REST {
                self.rests[run.rest as usize].clear();
                self.rests_free.push(run.rest);
            }
            self.heap.pop();
            self.free.push(top.run);
            for slot in &mut self.open {
                if slot.1 == top.run {
                    *slot = (0, NONE);
                }
            }
        }
        self.len -= 1;
        self.pops += 1;
        Some((time, ev))
    }

    /// The channel whose arrival is the earliest pending event, if it is one, and whether it
    /// waits on the channel's wire (else on a train; read from the two heaps' tops and the
    /// train's front only).
    #[inline(always)]
    pub(super) fn next_wire(&self) -> Option<(ChannelId, bool)> {
        let head = self.heads.peek()?;
        match self.heap.peek() {
            Some(top) if top.key < head.key => None,
            _ if head.run & TRAIN != 0 => self.train_channel(head.run, 0).map(|ch| (ch, false)),
            _ => Some((ChannelId(head.run), true)),
        }
    }

    /// The channel of the single arrival `k` entries after the front of train `run` (a key's
    /// `run`, `TRAIN` included), if there is one.
    #[inline(always)]
    fn train_channel(&self, run: u32, k: usize) -> Option<ChannelId> {
        let tr = self.trains.get((run & !TRAIN) as usize)?;
        match tr.wires.get(tr.head + k)?.ev {
            Ev::Link(LinkEv::Arrive { ch, .. }) => Some(ch),
            _ => None,
        }
    }

    /// The channel of the earliest pending event if it is a single `TxDone` (read from the
    /// heaps' tops and the run on top only): a prefetch hint.
    #[inline(always)]
    pub(super) fn next_tx_done(&self) -> Option<ChannelId> {
        let top = self.heap.peek()?;
        if self.heads.peek().is_some_and(|h| h.key < top.key) {
            return None;
        }
        let run = self.runs.get(top.run as usize)?;
        let ev = match run.head {
            0 => &run.first,
            i => self.rests.get(run.rest as usize)?.get(i as usize - 1)?,
        };
        match ev {
            Ev::Link(LinkEv::TxDone { ch, .. }) => Some(*ch),
            _ => None,
        }
    }

    /// The channels whose front arrival may be the event after the next one, besides the next
    /// one's own channel (`NONE` for none; read from the heap of wire fronts only): a prefetch
    /// hint, possibly wrong.
    #[inline(always)]
    pub(super) fn wires_after_next(&self) -> [u32; 4] {
        match self.heads.peek() {
            // a train's next entries are read in order: the two after the next, and the
            // children of its key
            Some(h) if h.run & TRAIN != 0 => {
                let ch = |k| self.train_channel(h.run, k).map_or(NONE, |c| c.0);
                let c = self.heads.top_children();
                [ch(1), ch(2), c[0], c[1]]
            }
            _ => self.heads.top_children(),
        }
    }

    /// The address of channel `ch`'s wire (where its front is found), 0 if it has none: a
    /// prefetch hint.
    #[inline(always)]
    pub(super) fn wire_addr(&self, ch: ChannelId) -> usize {
        self.wires.get(ch.index()).map_or(0, |w| w as *const VecDeque<Wire> as usize)
    }

    /// The address of channel `ch`'s next arrival in its wire, 0 if none: a prefetch hint.
    #[inline(always)]
    pub(super) fn front_addr(&self, ch: ChannelId) -> usize {
        self.wires.get(ch.index()).and_then(|w| w.front()).map_or(0, |x| x as *const Wire as usize)
    }

    /// `pop_until` when the earliest event is the front of the wire in `head`.
    #[inline]
    fn pop_wire(&mut self, head: RunKey, limit: u64) -> Option<(u64, Ev)> {
        if (head.key >> 64) as u64 > limit {
            return None;
        }
        if head.run & TRAIN != 0 {
            self.popped_train = true;
            return Some(self.pop_train(head));
        }
        self.popped_train = false;
        let w = &mut self.wires[head.run as usize];
        let x = w.pop_front()?;
        match w.front() {
            Some(next) => self.heads.replace_top(RunKey { key: next.key(), run: head.run }),
            None => {
                self.heads.pop();
                self.backs[head.run as usize] = NO_BACK;
            }
        }
        self.len -= 1;
        self.pops += 1;
        Some((x.time, x.ev))
    }

    /// `pop_wire` when the front is a train's (`head.run` carries `TRAIN`).
    #[inline]
    fn pop_train(&mut self, head: RunKey) -> (u64, Ev) {
        let t = (head.run & !TRAIN) as usize;
        let tr = &mut self.trains[t];
        let x = tr.wires[tr.head];
        tr.head += 1;
        match tr.wires.get(tr.head) {
            Some(next) => {
                let key = next.key();
                self.heads.replace_top(RunKey { key, run: head.run });
            }
            None => {
                tr.wires.clear();
                tr.head = 0;
                self.heads.pop();
                self.trains_free.push(t as u32);
            }
        }
        self.len -= 1;
        self.pops += 1;
        (x.time, x.ev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use castlab_core::Rng;
    use std::collections::BTreeSet;

    fn entry(time: u64, seq: u64) -> Entry {
        Entry { time, seq, ev: Ev::Sample { ch: ChannelId(seq as u32) } }
    }

    /// `(time, seq)` of a popped event: these tests push `Ev::Sample { ch: seq }`.
    fn popped((time, ev): (u64, Ev)) -> (u64, u64) {
        match ev {
            Ev::Sample { ch } => (time, u64::from(ch.0)),
            other => panic!("{other:?}"),
        }
    }

    /// Pop one event from `q` and from `one` (the same events, all as runs), each checked
    /// against the sorted `reference`; the popped time, if any.
    fn pop_as_reference(q: &mut EventQueue, one: &mut EventQueue, reference: &mut BTreeSet<(u64, u64)>) -> Option<u64> {
        let want = reference.pop_first();
        assert_eq!(q.peek_time(), want.map(|w| w.0));
        let got = q.pop().map(popped);
        assert_eq!(got, want);
        assert_eq!(one.pop().map(popped), want);
        got.map(|(t, _)| t)
    }

    /// Pop what is left in `q`, checked against `reference`, and find `q` empty.
    fn drain_as_reference(q: &mut EventQueue, reference: &mut BTreeSet<(u64, u64)>) {
        while let Some(want) = reference.pop_first() {
            assert_eq!(q.pop().map(popped), Some(want));
        }
        assert!(q.pop().is_none());
    }

    #[test]
    fn a_wire_takes_what_is_in_order_behind_its_last_arrival_and_nothing_else() {
        // the wire's last time is kept apart from the wire (`backs`): an arrival at that time
        // (larger seq) or later joins the wire, an earlier one goes to the runs, and once the
        // wire is emptied any time joins it again
        let mut q = EventQueue::default();
        let on_wire = |q: &EventQueue| q.last_pushed().0 & WIRE != 0;
        q.push_wire(ChannelId(2), entry(10, 1));
        assert!(on_wire(&q));
        q.push_wire(ChannelId(2), entry(10, 2));
        assert!(on_wire(&q));
        q.push_wire(ChannelId(2), entry(5, 3));
        assert!(!on_wire(&q), "an arrival before the wire's last one must go to the runs");
        q.push_wire(ChannelId(2), entry(12, 4));
        assert!(on_wire(&q));
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop()).map(popped).collect();
        assert_eq!(order, vec![(5, 3), (10, 1), (10, 2), (12, 4)]);
        // emptied: an earlier time than the last one it held is in order again
        q.push_wire(ChannelId(2), entry(3, 5));
        assert!(on_wire(&q));
        q.push_wire(ChannelId(2), entry(3, 6));
        assert!(on_wire(&q));
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop()).map(popped).collect();
        assert_eq!(order, vec![(3, 5), (3, 6)]);
    }

    #[test]
    fn equal_time_events_pop_first_in_first_out() {
        let mut q = EventQueue::default();
        let evs = [(5u64, 1u64), (3, 2), (5, 3), (3, 4), (5, 5), (1, 6)];
        for (t, s) in evs {
            q.push(entry(t, s));
        }
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop()).map(popped).collect();
        assert_eq!(order, vec![(1, 6), (3, 2), (3, 4), (5, 1), (5, 3), (5, 5)]);
    }

    #[test]
    fn pops_in_the_same_order_as_a_sorted_list_under_random_interleaving() {
        // Random pushes and pops, checked against a sorted reference (a different structure):
        // the queue must return exactly the minimum every time. Few distinct times make long
        // runs and many runs of one time; bursts push one time many times in a row, as a
        // fan-out does.
        // Each with the heap binary throughout, 4-ary from the start, and turning 4-ary mid-run.
        for (distinct, burst, quad_from) in [(2u64, 1usize), (3, 1), (6, 1), (50, 1), (5, 40), (1_000, 200)]
            .into_iter()
            .flat_map(|(d, b)| [(d, b, QUAD_FROM), (d, b, 1), (d, b, 40)])
        {
            let mut rng = Rng::seed_from_u64(7 + distinct);
            let mut q = EventQueue { quad_from, ..EventQueue::default() };
            let mut reference: BTreeSet<(u64, u64)> = BTreeSet::new();
            let mut seq = 0;
            for _ in 0..20_000 {
                if rng.uniform() < 0.55 {
                    let t = rng.below(distinct);
                    let n = if rng.uniform() < 0.1 { 1 + rng.below(burst as u64) as usize } else { 1 };
                    for _ in 0..n {
                        seq += 1;
                        q.push(entry(t, seq));
                        reference.insert((t, seq));
                    }
                } else if rng.uniform() < 0.2 {
                    // a run's end: nothing after `limit` comes out
                    let limit = rng.below(distinct);
                    let want = reference.first().copied().filter(|w| w.0 <= limit);
                    if want.is_some() {
                        reference.pop_first();
                    }
                    assert_eq!(q.pop_until(limit).map(popped), want);
                } else {
                    let want = reference.pop_first();
                    assert_eq!(q.peek_time(), want.map(|w| w.0));
                    assert_eq!(q.pop().map(popped), want);
                }
                assert_eq!(q.len(), reference.len());
            }
            while let Some(want) = reference.pop_first() {
                assert_eq!(q.peek_time(), Some(want.0));
                assert_eq!(q.pop().map(popped), Some(want));
            }
            assert!(q.pop().is_none());
        }
    }

    #[test]
    fn an_event_changed_in_place_after_its_push_pops_changed_and_in_its_place() {
        // `pushed_mut` reaches a run's first event (kept in the run) and its later ones
        // (kept in a buffer) alike; the simulator turns link events into batches this way
        let mut q = EventQueue::default();
        let mut places = Vec::new();
        for (t, s) in [(9u64, 1u64), (4, 2), (9, 3), (9, 4), (4, 5)] {
            q.push(entry(t, s));
            places.push(q.last_pushed());
        }
        for (k, &at) in places.iter().enumerate() {
            *q.pushed_mut(at) = Ev::Sample { ch: ChannelId(100 + k as u32) };
        }
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop()).map(popped).collect();
        assert_eq!(order, vec![(4, 101), (4, 104), (9, 100), (9, 102), (9, 103)]);
        // the emptied runs and buffers are used again, holding nothing of before
        q.push(entry(2, 6));
        q.push(entry(2, 7));
        q.push(entry(1, 8));
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop()).map(popped).collect();
        assert_eq!(order, vec![(1, 8), (2, 6), (2, 7)]);
    }

    #[test]
    fn the_heap_turns_4_ary_once_it_holds_quad_from_runs() {
        let mut q = EventQueue { quad_from: 5, ..EventQueue::default() };
        for s in 1..=4u64 {
            q.push(entry(100 - s, s));
        }
        assert!(matches!(q.heap, Heap::Binary(_)));
        q.push(entry(50, 5));
        assert!(matches!(q.heap, Heap::Quad(_)));
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop()).map(popped).collect();
        assert_eq!(order, vec![(50, 5), (96, 4), (97, 3), (98, 2), (99, 1)]);
        assert!(matches!(q.heap, Heap::Quad(_)));
    }

    #[test]
    fn the_run_heap_pops_keys_in_order_at_every_depth() {
        // many distinct keys (every event a run of its own, as arrivals on links of distinct
        // delays), so the 4-ary heap is eight and more levels deep; checked against a sorted set
        let mut rng = Rng::seed_from_u64(11);
        let mut h = RunHeap::default();
        let mut reference: BTreeSet<u128> = BTreeSet::new();
        for round in 0..4u32 {
            let grow = [0.9, 0.6, 0.5, 0.1][round as usize];
            for _ in 0..60_000 {
                if rng.uniform() < grow || reference.is_empty() {
                    let k = (u128::from(rng.below(1 << 40)) << 64) | u128::from(rng.below(1 << 40));
                    if reference.insert(k) {
                        h.push(RunKey { key: k, run: 0 });
                    }
                } else {
                    assert_eq!(h.peek().map(|r| r.key), reference.pop_first());
                    h.pop();
                }
                assert_eq!(h.len, reference.len());
            }
        }
        while let Some(want) = reference.pop_first() {
            assert_eq!(h.peek().map(|r| r.key), Some(want));
            h.pop();
        }
        assert!(h.peek().is_none());
    }

    #[test]
    fn arrivals_on_wires_and_other_events_pop_as_one_queue_would() {
        // A simulated schedule: channels of few distinct delays (many arrivals of one time,
        // on one channel and across channels), other events at times of their own or the
        // arrivals' times. The queue with arrivals on wires must pop exactly what a queue
        // holding every event as a run pops, and a sorted set's order. Some arrivals are
        // pushed out of order behind their channel's last (they must go to the runs).
        for (channels, delays, quad_from) in [(3u32, 2u64, QUAD_FROM), (50, 4, QUAD_FROM), (400, 40, 1), (400, 3, 64)] {
            let mut rng = Rng::seed_from_u64(u64::from(channels) + delays);
            let mut q = EventQueue { quad_from, ..EventQueue::default() };
            let mut one = EventQueue::default();
            let mut reference: BTreeSet<(u64, u64)> = BTreeSet::new();
            let delay: Vec<u64> = (0..channels).map(|_| 1 + rng.below(delays)).collect();
            let (mut seq, mut now, mut on_wires) = (0u64, 0u64, 0usize);
            for _ in 0..40_000 {
                let u = rng.uniform();
                if u < 0.5 {
                    // a departure's burst: arrivals on several channels at `now + delay`
                    for _ in 0..1 + rng.below(6) {
                        let ch = rng.below(u64::from(channels)) as u32;
                        let odd = rng.uniform() < 0.02;
                        let t = if odd { now + rng.below(delay[ch as usize]) } else { now + delay[ch as usize] };
                        seq += 1;
                        let e = Entry { time: t, seq, ev: Ev::Sample { ch: ChannelId(seq as u32) } };
                        q.push_wire(ChannelId(ch), e);
                        on_wires += usize::from(q.last_pushed().0 & WIRE != 0);
                        one.push(e);
                        reference.insert((t, seq));
                    }
                } else if u < 0.65 {
                    // a timer or a departure, sometimes at an arrival's time
                    let t = now + rng.below(delays + 2);
                    seq += 1;
                    q.push(entry(t, seq));
                    one.push(entry(t, seq));
                    reference.insert((t, seq));
                } else if let Some(t) = pop_as_reference(&mut q, &mut one, &mut reference) {
                    now = t;
                }
                assert_eq!(q.len(), reference.len());
            }
            drain_as_reference(&mut q, &mut reference);
            assert!(on_wires > 10_000, "{on_wires} arrivals on wires");
        }
    }

    #[test]
    fn trains_wires_and_runs_pop_as_one_queue_would() {
        // Bursts of arrivals pushed on trains (times in any order, ties within a train and
        // with other events), on wires, and as runs; other events at the same times. The queue
        // must pop exactly a sorted set's order, and what a queue holding every event as a run
        // pops; trains are ended before each pop, as the simulator ends one within its event.
        for (span, quad_from) in [(3u64, QUAD_FROM), (40, QUAD_FROM), (1_000, 1), (7, 16)] {
            let mut rng = Rng::seed_from_u64(span + 100);
            let mut q = EventQueue { quad_from, ..EventQueue::default() };
            let mut one = EventQueue::default();
            let mut reference: BTreeSet<(u64, u64)> = BTreeSet::new();
            let (mut seq, mut now, mut on_trains) = (0u64, 0u64, 0usize);
            for _ in 0..40_000 {
                let u = rng.uniform();
                if u < 0.3 {
                    // a batch of departures: its arrivals on one train, some other events
                    // (a timer, another channel's arrival on its wire) scheduled in between
                    let t = q.begin_train();
                    for _ in 0..rng.below(40) {
                        seq += 1;
                        let time = now + rng.below(span);
                        let e = entry(time, seq);
                        match rng.below(10) {
                            0 => q.push(e),
                            1 => q.push_wire(ChannelId(rng.below(8) as u32), e),
                            _ => {
                                q.push_train(t, e);
                                on_trains += 1;
                            }
                        }
                        one.push(e);
                        reference.insert((time, seq));
                    }
                    q.end_train(t);
                } else if u < 0.45 {
                    seq += 1;
                    let time = now + rng.below(span);
                    q.push(entry(time, seq));
                    one.push(entry(time, seq));
                    reference.insert((time, seq));
                } else if let Some(t) = pop_as_reference(&mut q, &mut one, &mut reference) {
                    now = t;
                }
                assert_eq!(q.len(), reference.len());
            }
            drain_as_reference(&mut q, &mut reference);
            assert!(on_trains > 100_000, "{on_trains} arrivals on trains");
            // every train was emptied and freed for reuse
            assert_eq!(q.trains.len(), q.trains_free.len());
        }
    }

    #[test]
    fn an_arrival_on_a_train_changed_in_place_while_it_is_built_pops_changed_and_in_its_place() {
        // the simulator turns an arrival into a batch through `pushed_mut` while its train is
        // built; the train's sort then moves it to its key's place
        let mut q = EventQueue::default();
        let t = q.begin_train();
        q.push_train(t, entry(12, 1));
        q.push_train(t, entry(10, 2));
        let second = q.last_pushed();
        q.push(entry(10, 3));
        q.push_train(t, entry(11, 4));
        *q.pushed_mut(second) = Ev::Sample { ch: ChannelId(100) };
        q.end_train(t);
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop()).map(popped).collect();
        assert_eq!(order, vec![(10, 100), (10, 3), (11, 4), (12, 1)]);
        // an empty train is freed at once
        let u = q.begin_train();
        q.end_train(u);
        assert_eq!(q.begin_train(), u);
    }

    #[test]
    fn an_arrival_on_a_wire_changed_in_place_pops_changed_and_in_its_place() {
        // the simulator turns an arrival into a batch through `pushed_mut`, wherever it waits
        let mut q = EventQueue::default();
        q.push_wire(ChannelId(3), entry(10, 1));
        let first = q.last_pushed();
        q.push_wire(ChannelId(3), entry(12, 2));
        q.push(entry(10, 3));
        q.push_wire(ChannelId(1), entry(10, 4));
        *q.pushed_mut(first) = Ev::Sample { ch: ChannelId(100) };
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop()).map(popped).collect();
        assert_eq!(order, vec![(10, 100), (10, 3), (10, 4), (12, 2)]);
    }

    #[test]
    fn event_entries_are_small() {
        // the heap moves entries on every push and pop
        assert!(std::mem::size_of::<Entry>() <= 32, "{}", std::mem::size_of::<Entry>());
    }
}
