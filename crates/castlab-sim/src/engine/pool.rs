//! The packet pool: packets live in reused slots and are referred to by index, so forwarding,
//! queueing and fan-out move a `u32`, and the steady state allocates nothing.

use castlab_core::Packet;

/// Packets live in a pool and are referred to by index; freed slots are reused, so the
/// steady state allocates nothing.
#[derive(Default)]
pub(super) struct Pool {
    pub(super) slots: Vec<Packet>,
    /// Per slot: a group packet sent by a node other than the group's source travels up to the
    /// source first (the root of the shared tree, like PIM-SM's rendezvous point), then down
    /// the tree. Engine routing state, so it lives here and not in the packet.
    pub(super) to_root: Vec<bool>,
    pub(super) free: Vec<u32>,
    pub(super) live: u64,
}

impl Pool {
    #[inline]
    pub(super) fn alloc(&mut self, p: Packet) -> u32 {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            self.to_root[i as usize] = false;
            i
        } else {
            self.slots.push(p);
            self.to_root.push(false);
            (self.slots.len() - 1) as u32
        }
    }
    #[inline]
    pub(super) fn release(&mut self, i: u32) {
        self.live -= 1;
        self.free.push(i);
    }
}
