//! Test support: a global allocator that counts allocations while asked to, on every
//! thread of the process (engine threads included) except the test harness's main
//! thread. A test binary installs it with
//! `#[global_allocator] static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;`
//! and runs its zero-allocation scenarios in one test (another test, or the harness
//! reporting one, would allocate meanwhile).
//!
//! ```
//! #[global_allocator]
//! static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;
//!
//! fn main() {
//!     // A test runs on a thread of its own (the process's main thread is not counted).
//!     std::thread::spawn(|| {
//!         let mut v = Vec::with_capacity(16);
//!         // Pushing within the capacity allocates nothing; a new vector does.
//!         assert_eq!(doca_testkit::allocations_in(|| v.extend_from_slice(&[1u8; 16])), 0);
//!         let n = doca_testkit::allocations_in(|| drop(std::hint::black_box(vec![0u8; 64])));
//!         assert_eq!(n, 1);
//!     })
//!     .join()
//!     .unwrap();
//! }
//! ```

pub mod install;
pub mod netns;
pub mod peer;
mod rng;

pub use rng::Rng;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The counting allocator (forwards to the system allocator).
#[derive(Debug)]
pub struct Counting;

static ON: AtomicBool = AtomicBool::new(false);
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// The harness's main thread (its thread id is the process id) runs beside the test:
/// under load it may still be finishing the test thread's spawn while the test counts.
fn on_harness_thread() -> bool {
    rustix::thread::gettid().as_raw_nonzero().get() as u32 == std::process::id()
}

fn note() {
    if ON.load(Ordering::Relaxed) && !on_harness_thread() {
        COUNT.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator; the bookkeeping is two atomics and a
// system call that does not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Sets the count back to zero.
pub fn reset() {
    COUNT.store(0, Ordering::SeqCst);
}

/// Starts or stops counting.
pub fn set_counting(on: bool) {
    ON.store(on, Ordering::SeqCst);
}

/// Allocations counted since the last [`reset`].
pub fn count() -> usize {
    COUNT.load(Ordering::SeqCst)
}

/// The allocations made, on any thread, while `f` runs.
pub fn allocations_in(f: impl FnOnce()) -> usize {
    reset();
    set_counting(true);
    f();
    set_counting(false);
    count()
}

/// What this process holds: open descriptors, threads, and shared mappings (memory
/// shared with other processes: control pages, shared-memory segments). A survivor of
/// its peers' deaths holds what it held before them.
pub fn held() -> (usize, usize, usize) {
    held_in("self")
}

/// What process `pid` ("self" for this one) holds, as [`held`] counts it.
pub fn held_in(pid: &str) -> (usize, usize, usize) {
    let count = |d: String| std::fs::read_dir(d).map_or(0, |r| r.count());
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    let shared = maps
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|p| p.ends_with('s'))
        })
        .count();
    (
        count(format!("/proc/{pid}/fd")),
        count(format!("/proc/{pid}/task")),
        shared,
    )
}
