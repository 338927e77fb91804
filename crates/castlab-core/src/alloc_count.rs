//! Counting a thread's allocations, for the tests that check that per-packet work allocates
//! nothing. [`CountingAlloc`], installed as a test binary's global allocator, counts an
//! allocation (or reallocation) only on a thread that asked for it ([`watch`]), in a counter of
//! that thread's own: the test harness's other threads (its output, its timers, other tests
//! running beside) are never counted, whatever they do meanwhile.
//!
//! ```ignore
//! #[global_allocator]
//! static A: castlab_core::alloc_count::CountingAlloc = castlab_core::alloc_count::CountingAlloc;
//!
//! let ((), n) = castlab_core::alloc_count::allocations_in(|| per_packet_work());
//! assert_eq!(n, 0);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the allocations of watched threads.
pub struct CountingAlloc;

thread_local! {
    static WATCHED: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: an allocation while the thread's locals are torn down is not counted
    if WATCHED.try_with(Cell::get).unwrap_or(false) {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every call is passed to `System` unchanged; counting touches only const-initialised
// thread locals, which never allocate.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(p, l, n) }
    }
}

/// Count (or stop counting) the calling thread's allocations.
pub fn watch(on: bool) {
    WATCHED.with(|w| w.set(on));
}

/// The calling thread's allocations counted so far (while it was watched).
pub fn thread_allocations() -> u64 {
    COUNT.with(Cell::get)
}

/// `f`'s result and the allocations the calling thread made while running it: 0 unless
/// [`CountingAlloc`] is the global allocator (see [`counting_is_installed`]).
pub fn allocations_in<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = thread_allocations();
    watch(true);
    let r = f();
    watch(false);
    (r, thread_allocations() - before)
}

/// Whether [`CountingAlloc`] counts in this binary: one known allocation is seen. A test asserts
/// it first, so that a binary without the allocator cannot pass by counting nothing.
pub fn counting_is_installed() -> bool {
    allocations_in(|| drop(std::hint::black_box(vec![0u8; 64]))).1 == 1
}
