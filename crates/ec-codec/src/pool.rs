//! The helper threads of parallel block operations (`threads > 1`): started on the
//! first such call, up to the most it asked for, and kept for later calls, so that a
//! call pays a wake-up rather than a thread's start and end (tens of microseconds, a
//! fifth of a 10+4 encode of 1 MiB blocks). A helper that finished spins a short while
//! for the next call, then sleeps. One call uses the helpers at a time; a call made
//! while they are busy runs its pieces on its own thread.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Most helper threads (a call asking for more threads runs more pieces per thread).
pub(crate) const MAX_HELPERS: usize = 63;

/// How long a helper that finished waits, spinning, for the next call before it sleeps.
const SPIN: Duration = Duration::from_micros(200);

/// One call's pieces, on the calling thread's stack while the call lasts.
struct Work<'a> {
    f: &'a (dyn Fn(usize) + Sync),
    n: usize,
    next: AtomicUsize,
    done: AtomicUsize,
    panicked: AtomicBool,
}

impl Work<'_> {
    /// Runs pieces until none is left; a piece that panics still counts as done.
    fn run(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::AcqRel);
            if i >= self.n {
                return;
            }
            if catch_unwind(AssertUnwindSafe(|| (self.f)(i))).is_err() {
                self.panicked.store(true, Ordering::Release);
            }
            self.done.fetch_add(1, Ordering::AcqRel);
        }
    }
}

struct Pool {
    /// Held by the call using the helpers; the number of helpers started so far.
    owner: Mutex<usize>,
    /// The current call's work (type-erased `*const Work`), null between calls.
    work: AtomicPtr<()>,
    /// Bumped by every call: helpers wait for it to change.
    epoch: AtomicU64,
    /// Helpers between announcing themselves and letting go of the current work.
    active: AtomicUsize,
    /// Helpers whose thread has started (its start-up, allocations included, done).
    up: AtomicUsize,
    /// Helpers asleep, and the condition they sleep on (its mutex is `sleep`).
    sleepers: AtomicUsize,
    sleep: Mutex<()>,
    wake: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        owner: Mutex::new(0),
        work: AtomicPtr::new(std::ptr::null_mut()),
        epoch: AtomicU64::new(0),
        active: AtomicUsize::new(0),
        up: AtomicUsize::new(0),
        sleepers: AtomicUsize::new(0),
        sleep: Mutex::new(()),
        wake: Condvar::new(),
    })
}

/// Runs `f(0) .. f(n - 1)`, on this thread and up to `threads - 1` helpers; returns
/// once every piece ran. A panic in a piece is raised here once all are done.
pub(crate) fn run(threads: usize, n: usize, f: &(dyn Fn(usize) + Sync)) {
    let helpers = threads
        .saturating_sub(1)
        .min(MAX_HELPERS)
        .min(n.saturating_sub(1));
    let p = pool();
    let mut guard = match (helpers, p.owner.try_lock()) {
        (1.., Ok(g)) => g,
        (1.., Err(std::sync::TryLockError::Poisoned(e))) => e.into_inner(),
        // No helper wanted, or another call has them: this thread runs every piece.
        _ => {
            (0..n).for_each(f);
            return;
        }
    };
    p.ensure(&mut guard, helpers);
    let work = Work {
        f,
        n,
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        panicked: AtomicBool::new(false),
    };
    p.work
        .store(&work as *const Work<'_> as *mut (), Ordering::SeqCst);
    p.epoch.fetch_add(1, Ordering::SeqCst);
    if p.sleepers.load(Ordering::SeqCst) > 0 {
        let _g = p.sleep.lock().unwrap_or_else(|e| e.into_inner());
        p.wake.notify_all();
    }
    work.run();
    wait_until(|| work.done.load(Ordering::Acquire) >= n);
    // No helper may still hold the work once this returns: a helper counts itself
    // active before it looks at `work`, and this looks at `active` after clearing it.
    p.work.store(std::ptr::null_mut(), Ordering::SeqCst);
    wait_until(|| p.active.load(Ordering::SeqCst) == 0);
    drop(guard);
    if work.panicked.load(Ordering::Acquire) {
        panic!("a piece of a parallel block operation panicked");
    }
}

/// Spins until `cond` holds, yielding the CPU now and then (a helper may be waiting
/// for one).
fn wait_until(cond: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !cond() {
        spins += 1;
        if spins.is_multiple_of(256) {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

impl Pool {
    /// Starts helpers until `started` (the owner's count) reaches `n` (fewer if the
    /// system refuses threads: the calls then run with those there are).
    fn ensure(&'static self, started: &mut usize, n: usize) {
        while *started < n {
            let spawned = std::thread::Builder::new()
                .name("ec-codec-helper".into())
                .spawn(move || self.helper());
            if spawned.is_err() {
                return;
            }
            *started += 1;
        }
        // A thread's start allocates, in the new thread: it is over before the call
        // goes on, so that no later call (the data path) sees its allocations.
        wait_until(|| self.up.load(Ordering::SeqCst) >= *started);
    }

    fn helper(&self) {
        self.up.fetch_add(1, Ordering::SeqCst);
        let mut seen = self.epoch.load(Ordering::SeqCst);
        loop {
            // Wait for the next call: spin a while, then sleep.
            let t = Instant::now();
            while self.epoch.load(Ordering::SeqCst) == seen {
                if t.elapsed() > SPIN {
                    let g = self.sleep.lock().unwrap_or_else(|e| e.into_inner());
                    self.sleepers.fetch_add(1, Ordering::SeqCst);
                    let g = if self.epoch.load(Ordering::SeqCst) == seen {
                        self.wake
                            .wait_timeout(g, Duration::from_millis(100))
                            .unwrap_or_else(|e| e.into_inner())
                            .0
                    } else {
                        g
                    };
                    self.sleepers.fetch_sub(1, Ordering::SeqCst);
                    drop(g);
                } else {
                    std::hint::spin_loop();
                }
            }
            seen = self.epoch.load(Ordering::SeqCst);
            self.active.fetch_add(1, Ordering::SeqCst);
            let w = self.work.load(Ordering::SeqCst) as *const Work<'static>;
            if !w.is_null() {
                // SAFETY: the call that stored `w` keeps it alive until `active` is 0
                // after clearing `work`; this helper counted itself active before
                // loading `w`, so the call waits for it (see `run`).
                unsafe { &*w }.run();
            }
            self.active.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_piece_runs_once_with_any_thread_count() {
        for threads in [1, 2, 3, 8] {
            for n in [0, 1, 2, 5, 64] {
                let hits: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
                run(threads, n, &|i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                });
                assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            }
        }
    }

    #[test]
    fn calls_from_several_threads_at_once_all_finish() {
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..200 {
                        let sum = AtomicUsize::new(0);
                        run(2, 4, &|i| {
                            sum.fetch_add(i + 1, Ordering::Relaxed);
                        });
                        assert_eq!(sum.load(Ordering::Relaxed), 10);
                    }
                });
            }
        });
    }

    #[test]
    fn a_panicking_piece_is_raised_to_the_caller_and_the_pool_goes_on() {
        let r = catch_unwind(|| run(2, 4, &|i| assert!(i != 2, "piece two")));
        assert!(r.is_err());
        let sum = AtomicUsize::new(0);
        run(2, 4, &|i| {
            sum.fetch_add(i, Ordering::Relaxed);
        });
        assert_eq!(sum.load(Ordering::Relaxed), 6);
    }
}
