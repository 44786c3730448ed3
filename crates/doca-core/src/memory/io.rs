//! Byte access for jobs and for the safe accessors: every mmap has a range lock, so
//! that work on disjoint bytes of one mmap runs in parallel (engine threads) while no
//! writer ever overlaps another reader or writer. A job takes its ranges in every mmap it
//! touches, mmaps in address order (no deadlock).

use super::buf::BufDesc;
use super::mmap::MmapShared;
use crate::lock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Most distinct mmaps one job may touch.
pub const MAX_JOB_MMAPS: usize = 16;

/// Ranges held at once in one mmap; more holders wait for room.
const MAX_ACTIVE: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Range {
    start: usize,
    end: usize,
    write: bool,
}

impl Range {
    const EMPTY: Range = Range {
        start: 0,
        end: 0,
        write: false,
    };

    #[inline]
    fn conflicts(&self, o: &Range) -> bool {
        (self.write || o.write) && self.start < o.end && o.start < self.end
    }
}

struct Active {
    ranges: [Range; MAX_ACTIVE],
    n: usize,
    waiters: usize,
}

/// `RangeLock::state`: a small job holds the whole mmap with one atomic operation.
const FAST_HELD: usize = 1;
/// `RangeLock::state`: ranges are held or waited for through the table; the fast path is
/// closed until the table is empty and nobody waits.
const SLOW: usize = 2;

/// Jobs whose read and write ranges in one mmap add up to at most this many bytes take
/// the fast path: they hold the whole mmap, but briefly.
const FAST_MAX_BYTES: usize = 64 << 10;

/// A lock over byte ranges of one mmap: shared for reads, exclusive for writes. A small
/// job with the mmap to itself takes it whole with one compare-and-swap instead.
pub(crate) struct RangeLock {
    /// The mmap's owner thread holds the whole mmap with plain stores (see
    /// [`Bias`](crate::bias::Bias)); other threads revoke that first.
    pub(crate) bias: crate::bias::Bias,
    state: AtomicUsize,
    st: Mutex<Active>,
    cv: Condvar,
}

impl Default for RangeLock {
    fn default() -> RangeLock {
        RangeLock {
            bias: crate::bias::Bias::new(),
            state: AtomicUsize::new(0),
            st: Mutex::new(Active {
                ranges: [Range::EMPTY; MAX_ACTIVE],
                n: 0,
                waiters: 0,
            }),
            cv: Condvar::new(),
        }
    }
}

impl RangeLock {
    /// Holds the whole mmap if nobody holds or waits for any of it.
    #[inline]
    fn try_fast(&self) -> bool {
        self.state
            .compare_exchange(0, FAST_HELD, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Releases a [`try_fast`](Self::try_fast) hold, waking those who queued meanwhile.
    #[inline]
    fn release_fast(&self) {
        if self
            .state
            .compare_exchange(FAST_HELD, 0, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            // A range holder queued behind the fast holder (it set SLOW under the mutex).
            let a = lock(&self.st);
            self.state.fetch_and(!FAST_HELD, Ordering::Release);
            let wake = a.waiters > 0;
            drop(a);
            if wake {
                self.cv.notify_all();
            }
        }
    }

    /// Waits until `want` (at most two ranges) conflicts with nothing held, then holds it.
    fn acquire(&self, want: &[Range]) {
        let want: &[Range] = &want[..want.len().min(2)];
        let mut a = lock(&self.st);
        // From now until the table empties, small jobs use the table too.
        self.state.fetch_or(SLOW, Ordering::AcqRel);
        loop {
            let held = &a.ranges[..a.n];
            let free = self.state.load(Ordering::Acquire) & FAST_HELD == 0
                && a.n + want.len() <= MAX_ACTIVE
                && !want.iter().any(|w| held.iter().any(|h| h.conflicts(w)));
            if free {
                break;
            }
            a.waiters += 1;
            a = self.cv.wait(a).unwrap_or_else(|e| e.into_inner());
            a.waiters -= 1;
        }
        for w in want {
            let n = a.n;
            a.ranges[n] = *w;
            a.n += 1;
        }
    }

    fn release(&self, held: &[Range]) {
        let mut a = lock(&self.st);
        for h in held {
            let n = a.n;
            if let Some(i) = a.ranges[..n].iter().position(|r| r == h) {
                a.ranges[i] = a.ranges[n - 1];
                a.n -= 1;
            }
        }
        if a.n == 0 && a.waiters == 0 {
            self.state.fetch_and(!SLOW, Ordering::Release);
        }
        let wake = a.waiters > 0;
        drop(a);
        if wake {
            self.cv.notify_all();
        }
    }

    /// Runs `f` while holding `[start, start+len)` for reading or writing.
    pub(crate) fn with<R>(
        &self,
        start: usize,
        len: usize,
        write: bool,
        f: impl FnOnce() -> R,
    ) -> R {
        if let Some(_owned) = self.bias.enter() {
            return f();
        }
        self.bias.revoke();
        let r = [Range {
            start,
            end: start + len,
            write,
        }];
        self.acquire(&r);
        let _held = Held {
            lock: self,
            ranges: r,
            n: 1,
        };
        f()
    }
}

/// Releases ranges when dropped (also when the work unwinds).
struct Held<'a, const N: usize> {
    lock: &'a RangeLock,
    ranges: [Range; N],
    n: usize,
}

impl<const N: usize> Drop for Held<'_, N> {
    fn drop(&mut self) {
        self.lock.release(&self.ranges[..self.n]);
    }
}

/// The bounding read and write ranges of one mmap's elements in a job.
#[derive(Clone, Copy)]
struct MmapRanges {
    mmap: *const MmapShared,
    read: Option<(usize, usize)>,
    write: Option<(usize, usize)>,
}

#[inline]
fn widen(r: &mut Option<(usize, usize)>, start: usize, end: usize) {
    *r = Some(match *r {
        None => (start, end),
        Some((s, e)) => (s.min(start), e.max(end)),
    });
}

impl MmapRanges {
    #[inline]
    fn ranges(&self) -> ([Range; 2], usize) {
        let mut out = [Range::EMPTY; 2];
        let mut n = 0;
        if let Some((start, end)) = self.read {
            out[0] = Range {
                start,
                end,
                write: false,
            };
            n = 1;
        }
        if let Some((start, end)) = self.write {
            out[n] = Range {
                start,
                end,
                write: true,
            };
            n += 1;
        }
        (out, n)
    }
}

/// Holds one job's ranges in every mmap it touches; released on drop.
struct JobHeld {
    mmaps: [MmapRanges; MAX_JOB_MMAPS],
    /// Per mmap held: `Some(prev)` when held through its owner's bias (see
    /// [`Bias::enter_raw`](crate::bias::Bias::enter_raw)), `None` when through its ranges.
    biased: [Option<bool>; MAX_JOB_MMAPS],
    n: usize,
}

impl Drop for JobHeld {
    fn drop(&mut self) {
        for (m, b) in self.mmaps[..self.n].iter().zip(&self.biased).rev() {
            // SAFETY: each mmap is kept alive by the job's buffers, borrowed while held.
            let shared: &MmapShared = unsafe { &*m.mmap };
            match *b {
                Some(prev) => shared.io.bias.leave(prev),
                None => {
                    let (r, n) = m.ranges();
                    shared.io.release(&r[..n]);
                }
            }
        }
    }
}

/// Runs `f` while the job holds its bytes: the whole buffer range of every element of
/// `reads` for reading and of `writes` for writing (per mmap, the bounding range of
/// each). Work on disjoint bytes proceeds in parallel; a conflicting holder is waited
/// for. `None` (and `f` not run) when the lists span more than [`MAX_JOB_MMAPS`]
/// mmaps. Allocates nothing.
pub fn with_io_locked<R>(
    reads: &[&BufDesc],
    writes: &[&BufDesc],
    f: impl FnOnce() -> R,
) -> Option<R> {
    // Most jobs stay inside one mmap: take its ranges without the general bookkeeping.
    let mut ranges = [Range::EMPTY; 2];
    if let Some((lock, n)) = single_ranges(reads, writes, &mut ranges) {
        if let Some(_owned) = lock.bias.enter() {
            // The mmap's owner thread: nobody else holds any of it.
            return Some(f());
        }
        lock.bias.revoke();
        let bytes: usize = ranges[..n].iter().map(|r| r.end - r.start).sum();
        if bytes <= FAST_MAX_BYTES && lock.try_fast() {
            let _held = FastRelease { lock };
            return Some(f());
        }
        lock.acquire(&ranges[..n]);
        let _held = Release {
            lock,
            ranges: &ranges[..n],
        };
        return Some(f());
    }
    with_io_locked_general(reads, writes, f)
}

/// Releases a fast hold when dropped (also when the work unwinds).
struct FastRelease<'a> {
    lock: &'a RangeLock,
}

impl Drop for FastRelease<'_> {
    #[inline]
    fn drop(&mut self) {
        self.lock.release_fast();
    }
}

/// Releases ranges of one mmap when dropped (also when the work unwinds).
struct Release<'a> {
    lock: &'a RangeLock,
    ranges: &'a [Range],
}

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.lock.release(self.ranges);
    }
}

/// When all the job's elements are in one mmap: its range lock, with the bounding read
/// and write ranges written to `out` (how many comes back).
#[inline]
fn single_ranges<'a>(
    reads: &[&'a BufDesc],
    writes: &[&'a BufDesc],
    out: &mut [Range; 2],
) -> Option<(&'a RangeLock, usize)> {
    // The common job: one buffer read, one written, in one mmap.
    if let ([r], [w]) = (reads, writes)
        && r.next().is_none()
        && w.next().is_none()
        && std::ptr::eq(r.mmap_shared(), w.mmap_shared())
    {
        let (rs, ws) = (r.head() as usize, w.head() as usize);
        out[0] = Range {
            start: rs,
            end: rs + r.len(),
            write: false,
        };
        out[1] = Range {
            start: ws,
            end: ws + w.len(),
            write: true,
        };
        let shared: &'a MmapShared = r.mmap_shared();
        return Some((&shared.io, 2));
    }
    let first = reads.first().or(writes.first())?.mmap_shared() as *const MmapShared;
    // Bounding ranges, kept in registers: [lo, hi) per direction, empty when lo >= hi.
    let (mut rlo, mut rhi, mut wlo, mut whi) = (usize::MAX, 0usize, usize::MAX, 0usize);
    for head in reads {
        for e in head.iter() {
            if !std::ptr::eq(e.mmap_shared(), first) {
                return None;
            }
            let start = e.head() as usize;
            rlo = rlo.min(start);
            rhi = rhi.max(start + e.len());
        }
    }
    for head in writes {
        for e in head.iter() {
            if !std::ptr::eq(e.mmap_shared(), first) {
                return None;
            }
            let start = e.head() as usize;
            wlo = wlo.min(start);
            whi = whi.max(start + e.len());
        }
    }
    let mut n = 0;
    if rlo < rhi {
        out[0] = Range {
            start: rlo,
            end: rhi,
            write: false,
        };
        n = 1;
    }
    if wlo < whi {
        out[n] = Range {
            start: wlo,
            end: whi,
            write: true,
        };
        n += 1;
    }
    // SAFETY: the mmap is kept alive by the buffers borrowed for 'a.
    let shared: &'a MmapShared = unsafe { &*first };
    Some((&shared.io, n))
}

/// Jobs spanning several mmaps: ranges per mmap, taken in address order.
#[inline(never)]
fn with_io_locked_general<R>(
    reads: &[&BufDesc],
    writes: &[&BufDesc],
    f: impl FnOnce() -> R,
) -> Option<R> {
    let mut held = JobHeld {
        mmaps: [MmapRanges {
            mmap: std::ptr::null(),
            read: None,
            write: None,
        }; MAX_JOB_MMAPS],
        biased: [None; MAX_JOB_MMAPS],
        n: 0,
    };
    let mut n = 0;
    for (lists, write) in [(reads, false), (writes, true)] {
        for head in lists {
            for e in head.iter() {
                let k = e.mmap_shared() as *const MmapShared;
                let i = match held.mmaps[..n].iter().position(|m| m.mmap == k) {
                    Some(i) => i,
                    None if n == MAX_JOB_MMAPS => return None,
                    None => {
                        held.mmaps[n].mmap = k;
                        n += 1;
                        n - 1
                    }
                };
                let start = e.head() as usize;
                let end = start + e.len();
                let m = &mut held.mmaps[i];
                widen(if write { &mut m.write } else { &mut m.read }, start, end);
            }
        }
    }
    held.mmaps[..n].sort_unstable_by_key(|m| m.mmap as usize);
    for i in 0..n {
        let m = held.mmaps[i];
        // SAFETY: each mmap is kept alive by the buffers borrowed for this call.
        let shared: &MmapShared = unsafe { &*m.mmap };
        held.biased[i] = shared.io.bias.enter_raw();
        if held.biased[i].is_none() {
            shared.io.bias.revoke();
            let (r, k) = m.ranges();
            shared.io.acquire(&r[..k]);
        }
        held.n = i + 1;
    }
    Some(f())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    fn r(start: usize, end: usize, write: bool) -> Range {
        Range { start, end, write }
    }

    #[test]
    fn disjoint_writers_and_shared_readers_hold_at_once() {
        let l = RangeLock::default();
        l.acquire(&[r(0, 64, true)]);
        l.acquire(&[r(64, 128, true)]);
        l.acquire(&[r(128, 256, false)]);
        l.acquire(&[r(100, 200, false)][..0]);
        l.acquire(&[r(128, 256, false)]);
        assert_eq!(lock(&l.st).n, 4);
        l.release(&[r(0, 64, true), r(64, 128, true)]);
        l.release(&[r(128, 256, false), r(128, 256, false)]);
        assert_eq!(lock(&l.st).n, 0);
    }

    #[test]
    fn a_job_may_read_and_write_its_own_overlapping_ranges() {
        let l = RangeLock::default();
        l.acquire(&[r(0, 100, false), r(50, 150, true)]);
        l.release(&[r(0, 100, false), r(50, 150, true)]);
    }

    #[test]
    fn overlapping_writer_waits_for_release() {
        let l = RangeLock::default();
        let got = AtomicBool::new(false);
        l.acquire(&[r(0, 64, false)]);
        std::thread::scope(|s| {
            s.spawn(|| {
                l.acquire(&[r(32, 96, true)]);
                got.store(true, Ordering::SeqCst);
                l.release(&[r(32, 96, true)]);
            });
            std::thread::sleep(Duration::from_millis(50));
            assert!(
                !got.load(Ordering::SeqCst),
                "writer got a range a reader holds"
            );
            l.release(&[r(0, 64, false)]);
        });
        assert!(got.load(Ordering::SeqCst));
    }

    #[test]
    fn a_fast_hold_excludes_range_holders_and_they_close_the_fast_path() {
        let l = RangeLock::default();
        assert!(l.try_fast());
        assert!(!l.try_fast(), "the mmap is held whole");
        let got = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                l.acquire(&[r(1 << 20, (1 << 20) + 64, false)]);
                got.store(true, Ordering::SeqCst);
                // While a range is held, small jobs take the table too.
                assert!(!l.try_fast());
                l.release(&[r(1 << 20, (1 << 20) + 64, false)]);
            });
            std::thread::sleep(Duration::from_millis(50));
            assert!(
                !got.load(Ordering::SeqCst),
                "a range holder overlapped a fast hold"
            );
            l.release_fast();
        });
        assert!(got.load(Ordering::SeqCst));
        assert!(
            l.try_fast(),
            "the fast path reopens once the table is empty"
        );
        l.release_fast();
    }

    #[test]
    fn fast_and_range_holders_never_overlap_under_contention() {
        let l = RangeLock::default();
        let inside = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..4 {
                let (l, inside) = (&l, &inside);
                s.spawn(move || {
                    for i in 0..2000 {
                        if (t + i) % 2 == 0 && l.try_fast() {
                            assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                            inside.fetch_sub(1, Ordering::SeqCst);
                            l.release_fast();
                        } else {
                            let w = [r(0, 64, true)];
                            l.acquire(&w);
                            assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                            inside.fetch_sub(1, Ordering::SeqCst);
                            l.release(&w);
                        }
                    }
                });
            }
        });
        assert!(l.try_fast());
    }

    #[test]
    fn full_table_waits_for_room() {
        let l = RangeLock::default();
        for i in 0..MAX_ACTIVE {
            l.acquire(&[r(i * 10, i * 10 + 10, true)]);
        }
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                l.acquire(&[r(10_000, 10_010, true)]);
                l.release(&[r(10_000, 10_010, true)]);
            });
            std::thread::sleep(Duration::from_millis(20));
            assert!(!h.is_finished());
            l.release(&[r(0, 10, true)]);
        });
    }
}
