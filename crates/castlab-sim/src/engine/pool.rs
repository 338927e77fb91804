//! The packet pool: packets live in reused slots and are referred to by index, so forwarding,
//! queueing and fan-out move a [`Slot`] (a `u32`), and the steady state allocates nothing.
//!
//! A fan-out's copies may share one slot (each copy holds a reference): copies that only
//! wait, travel and are read by the receiving agent never need their own. A slot is written
//! only by its sole holder; the engine takes a private copy ([`Pool::unshare`]) before anything
//! that could write one (an extension, a congestion mark, forwarding on).

use castlab_core::Packet;

/// A slot of the pool: what the engine moves for a packet (queues hold its number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot(pub(super) u32);

impl Slot {
    #[inline(always)]
    pub(super) const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Packets live in a pool and are referred to by index; freed slots are reused, so the
/// steady state allocates nothing.
#[derive(Default)]
pub(super) struct Pool {
    pub(super) slots: Vec<Packet>,
    /// Per slot: a group packet sent by a node other than the group's source travels up to the
    /// source first (the root of the shared tree, like PIM-SM's rendezvous point), then down
    /// the tree. Engine routing state, so it lives here and not in the packet.
    pub(super) to_root: Vec<bool>,
    pub(super) free: Vec<Slot>,
    /// Per slot: how many packet copies refer to it (0 when free).
    pub(super) refs: Vec<u32>,
    /// Packet copies alive (a shared slot counts once per copy).
    pub(super) live: u64,
}

impl Pool {
    #[inline]
    pub(super) fn alloc(&mut self, p: Packet) -> Slot {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.slots[i.index()] = p;
            self.to_root[i.index()] = false;
            self.refs[i.index()] = 1;
            i
        } else {
            self.slots.push(p);
            self.to_root.push(false);
            self.refs.push(1);
            Slot((self.slots.len() - 1) as u32)
        }
    }
    /// One more copy of the packet in slot `i`, sharing the slot.
    #[inline]
    pub(super) fn share(&mut self, i: Slot) -> Slot {
        self.live += 1;
        self.refs[i.index()] += 1;
        i
    }
    #[inline]
    pub(super) fn shared(&self, i: Slot) -> bool {
        self.refs[i.index()] > 1
    }
    /// Slot `i` for a holder that may write it or pass it on: itself when it holds the only
    /// reference, else a private copy (`unshare`).
    #[inline]
    pub(super) fn own(&mut self, i: Slot) -> Slot {
        if self.shared(i) {
            self.unshare(i)
        } else {
            i
        }
    }
    /// A private slot for one copy of the shared packet in slot `i` (which keeps the others).
    #[inline(never)]
    pub(super) fn unshare(&mut self, i: Slot) -> Slot {
        let (p, up) = (self.slots[i.index()], self.to_root[i.index()]);
        self.release(i);
        let j = self.alloc(p);
        self.to_root[j.index()] = up;
        j
    }
    #[inline]
    pub(super) fn release(&mut self, i: Slot) {
        self.live -= 1;
        let r = &mut self.refs[i.index()];
        *r -= 1;
        if *r == 0 {
            self.free.push(i);
        }
    }
}
