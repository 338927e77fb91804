//! The counting allocator counts the watched thread's allocations, and only those.

use castlab_core::alloc_count::{allocations_in, counting_is_installed, CountingAlloc};

#[global_allocator]
static A: CountingAlloc = CountingAlloc;

#[test]
fn counts_the_watched_threads_allocations_and_no_other() {
    assert!(counting_is_installed());
    // two boxes, a vector's allocation and its one reallocation when it must hold more
    let (v, n) = allocations_in(|| {
        let a = std::hint::black_box(Box::new(1u64));
        let b = std::hint::black_box(Box::new(2u64));
        let mut v: Vec<u64> = Vec::with_capacity(4);
        v.reserve_exact(100);
        v.push(*a + *b);
        v
    });
    assert_eq!((v.len(), n), (1, 4));
    // nothing in the closure allocates: another thread allocating all the while is not counted
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s = stop.clone();
    let other = std::thread::spawn(move || {
        let mut k = 0u64;
        while !s.load(std::sync::atomic::Ordering::Relaxed) {
            k += std::hint::black_box(vec![1u8; 256]).len() as u64;
        }
        k
    });
    let ((), n) = allocations_in(|| {
        let t0 = std::time::Instant::now();
        let mut x = 0u64;
        while t0.elapsed() < std::time::Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(other.join().expect("the other thread ends") > 0);
    assert_eq!(n, 0);
}
