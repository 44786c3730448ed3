//! Biased ownership of a shared word: an inventory's reference counts and an mmap's
//! byte-range lock are, in nearly every program, touched by one thread only (the one
//! that made them and runs the jobs). That thread (the *owner*) updates them with plain
//! loads and stores; the first other thread to touch them *revokes* the bias, once, and
//! from then on every thread uses the atomic read-modify-write protocol.
//!
//! The owner's side is an asymmetric Dekker handshake: it marks itself busy, then
//! checks that it still owns the bias, with no fence between the two but a compiler
//! fence. The revoker publishes the revocation, then runs `membarrier(2)` (private
//! expedited), which executes a full memory barrier on every running thread of the
//! process, then waits until the owner is not busy. Either the owner's busy mark is seen
//! by the revoker, or the owner sees the revocation; never neither. Where `membarrier`
//! is not available (old kernels, sandboxes, emulators), every bias starts revoked and
//! the atomic protocol is used throughout.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering, compiler_fence};

/// [`Bias::owner`]: revoked for good; the atomic protocol is in use.
const REVOKED: usize = usize::MAX;
/// [`Bias::owner`]: a revoker is waiting for the owner to leave.
const REVOKING: usize = usize::MAX - 1;

/// Whether `membarrier(PRIVATE_EXPEDITED)` works here: 0 not known yet, 1 yes, 2 no.
static MEMBARRIER: AtomicU8 = AtomicU8::new(0);

fn membarrier_available() -> bool {
    match MEMBARRIER.load(Ordering::Acquire) {
        1 => true,
        2 => false,
        _ => {
            use rustix::thread::{MembarrierCommand, membarrier};
            let ok = std::env::var_os("DOCA_NO_BIAS").is_none()
                && membarrier(MembarrierCommand::RegisterPrivateExpedited).is_ok()
                && membarrier(MembarrierCommand::PrivateExpedited).is_ok();
            MEMBARRIER.store(if ok { 1 } else { 2 }, Ordering::Release);
            ok
        }
    }
}

/// The heavy half of the handshake. A process forked from one that registered is not
/// registered (the kernel keeps the registration per address space): it registers then.
fn heavy_barrier() {
    use rustix::thread::{MembarrierCommand, membarrier};
    if membarrier(MembarrierCommand::PrivateExpedited).is_ok() {
        return;
    }
    let fenced = membarrier(MembarrierCommand::RegisterPrivateExpedited).is_ok()
        && membarrier(MembarrierCommand::PrivateExpedited).is_ok();
    // It worked when probed; going on without it could lose updates.
    assert!(fenced, "membarrier(2) stopped working in this process");
}

/// An identity of the calling thread, unique among live threads and never `REVOKED` or
/// `REVOKING`: its thread pointer.
#[inline(always)]
fn me() -> usize {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        let tp: usize;
        // SAFETY: on x86-64 Linux (glibc and musl), %fs:0 holds the thread pointer
        // itself (the TLS ABI's self-pointer); reading it has no side effect.
        unsafe {
            std::arch::asm!("mov {}, qword ptr fs:[0]", out(reg) tp,
                options(nostack, readonly, preserves_flags, pure));
        }
        tp
    }
    #[cfg(all(target_arch = "aarch64", target_os = "linux"))]
    {
        let tp: usize;
        // SAFETY: reading the thread pointer register has no side effect.
        unsafe {
            std::arch::asm!("mrs {}, tpidr_el0", out(reg) tp,
                options(nomem, nostack, preserves_flags, pure));
        }
        tp
    }
    #[cfg(not(any(
        all(target_arch = "x86_64", target_os = "linux"),
        all(target_arch = "aarch64", target_os = "linux")
    )))]
    {
        thread_local!(static TOKEN: u8 = const { 0 });
        TOKEN.with(|t| t as *const u8 as usize)
    }
}

/// The bias of one shared object (see the module's documentation).
pub(crate) struct Bias {
    /// The owner's identity, `REVOKING` or `REVOKED`.
    owner: AtomicUsize,
    /// Set by the owner while it works on the object without atomic operations.
    busy: AtomicBool,
}

impl std::fmt::Debug for Bias {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = self.owner.load(Ordering::Relaxed);
        f.write_str(if o >= REVOKING { "revoked" } else { "biased" })
    }
}

/// The owner's hold: plain loads and stores on the object are safe while it lives.
pub(crate) struct Owned<'a> {
    bias: &'a Bias,
    prev: bool,
}

impl Drop for Owned<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.bias.leave(self.prev);
    }
}

impl Bias {
    /// A bias owned by the calling thread (revoked from the start where `membarrier`
    /// does not work).
    pub(crate) fn new() -> Bias {
        Bias {
            owner: AtomicUsize::new(if membarrier_available() {
                me()
            } else {
                REVOKED
            }),
            busy: AtomicBool::new(false),
        }
    }

    /// The owner's fast path: `Some` when the calling thread owns the bias (the hold
    /// nests). `None` otherwise: call [`revoke`](Bias::revoke), then use atomics.
    #[inline(always)]
    pub(crate) fn enter(&self) -> Option<Owned<'_>> {
        self.enter_raw().map(|prev| Owned { bias: self, prev })
    }

    /// [`enter`](Bias::enter) without a guard: `Some(prev)` to give to
    /// [`leave`](Bias::leave), holds left in the reverse order of their entries.
    #[inline(always)]
    pub(crate) fn enter_raw(&self) -> Option<bool> {
        let me = me();
        if self.owner.load(Ordering::Relaxed) != me {
            return None;
        }
        let prev = self.busy.load(Ordering::Relaxed);
        self.busy.store(true, Ordering::Relaxed);
        // The light half of the handshake: the revoker's membarrier orders this store
        // before the load below on this thread.
        compiler_fence(Ordering::SeqCst);
        if self.owner.load(Ordering::Relaxed) != me {
            self.busy.store(prev, Ordering::Release);
            return None;
        }
        Some(prev)
    }

    /// Ends a hold of [`enter_raw`](Bias::enter_raw).
    #[inline(always)]
    pub(crate) fn leave(&self, prev: bool) {
        // Release: a revoker that sees the owner not busy sees its writes too.
        self.busy.store(prev, Ordering::Release);
    }

    /// Makes sure the atomic protocol is in use: revokes the bias when it is another
    /// thread's (once per object), and returns when its owner has left. The caller must
    /// not be inside [`enter`](Bias::enter) of this object.
    #[inline]
    pub(crate) fn revoke(&self) {
        if self.owner.load(Ordering::Acquire) != REVOKED {
            self.revoke_slow();
        }
    }

    #[cold]
    fn revoke_slow(&self) {
        let o = self.owner.load(Ordering::Acquire);
        if o < REVOKING
            && self
                .owner
                .compare_exchange(o, REVOKING, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            // The heavy half: every thread of the process passes a full barrier, so
            // the owner either is seen busy below or sees REVOKING on its next entry.
            heavy_barrier();
            let mut spins = 0u32;
            while self.busy.load(Ordering::Acquire) {
                spins += 1;
                if spins < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
            self.owner.store(REVOKED, Ordering::Release);
            return;
        }
        // Another thread is revoking: wait until it is done.
        let mut spins = 0u32;
        while self.owner.load(Ordering::Acquire) != REVOKED {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicU64;

    /// A counter updated with plain load + store by its owner and with fetch_add by
    /// others, through the bias: no update is lost.
    #[test]
    fn owner_and_revokers_lose_no_update() {
        for _ in 0..20 {
            let bias = Arc::new(Bias::new());
            let n = Arc::new(AtomicU64::new(0));
            let add = |b: &Bias, n: &AtomicU64| {
                if let Some(_g) = b.enter() {
                    n.store(n.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                } else {
                    b.revoke();
                    n.fetch_add(1, Ordering::AcqRel);
                }
            };
            let others: Vec<_> = (0..3)
                .map(|_| {
                    let (b, n) = (Arc::clone(&bias), Arc::clone(&n));
                    std::thread::spawn(move || {
                        for _ in 0..20_000 {
                            add(&b, &n);
                        }
                    })
                })
                .collect();
            for _ in 0..60_000 {
                add(&bias, &n);
            }
            for t in others {
                t.join().unwrap();
            }
            assert_eq!(n.load(Ordering::Acquire), 120_000);
        }
    }

    #[test]
    fn holds_nest_and_other_threads_are_not_owners() {
        let bias = Bias::new();
        if bias.owner.load(Ordering::Relaxed) == REVOKED {
            return; // no membarrier here: nothing is biased
        }
        {
            let _a = bias.enter().expect("owner");
            let _b = bias.enter().expect("nested");
        }
        assert!(!bias.busy.load(Ordering::Relaxed));
        std::thread::scope(|s| {
            s.spawn(|| {
                assert!(bias.enter().is_none());
                bias.revoke();
            });
        });
        assert!(bias.enter().is_none(), "revoked for good");
        assert_eq!(format!("{bias:?}"), "revoked");
    }
}
