//! The asynchronous engine: a device configured with engine threads runs its contexts'
//! jobs on them (like a DPU's accelerators) and posts completions to the work queues. A
//! large job may share its work with idle engine threads ([`ExecEnv::parallel`]).

use super::job::JobRecord;
use crate::device::Dev;
use crate::lock;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};

/// What runs a job: its context (which checks its state and catches a panic of the
/// library's code).
pub(crate) trait Runner: Send + Sync {
    /// Runs `record` with `env`.
    fn run(&self, record: &mut JobRecord, env: &ExecEnv<'_>) -> crate::error::Result<()>;
}

/// Where a job run on an engine thread completes: its work queue.
pub(crate) trait Sink: Send + Sync {
    /// Posts the finished job and wakes the queue's owner.
    fn complete(&self, record: JobRecord, r: crate::error::Result<()>);
}

/// A job handed to the engine threads.
pub(crate) struct Task {
    pub(crate) runner: Arc<dyn Runner>,
    pub(crate) sink: Arc<dyn Sink>,
    pub(crate) dev: Dev,
    pub(crate) record: JobRecord,
}

/// Pieces of one job's work, shared with idle engine threads.
struct Help {
    f: *const (dyn Fn(usize) + Sync),
    n: usize,
    next: AtomicUsize,
    done: AtomicUsize,
    /// Helpers that took this from the queue (counted under the queue lock) and that
    /// have since let go of it.
    entered: AtomicUsize,
    left: AtomicUsize,
    /// A piece panicked (on whichever thread): the owner panics once all are done.
    panicked: AtomicBool,
}

impl Help {
    /// Runs pieces until none is left. A piece that panics still counts as done, so
    /// that neither the owner nor a helper is left waiting, or unwinds early.
    fn work(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::AcqRel);
            if i >= self.n {
                return;
            }
            // SAFETY: the owner of `f` waits until every claimed piece is done (`done`
            // reaches n) before `f` goes; a piece below n is claimed only once.
            let piece = std::panic::catch_unwind(AssertUnwindSafe(|| unsafe { (*self.f)(i) }));
            if piece.is_err() {
                self.panicked.store(true, Ordering::Release);
            }
            self.done.fetch_add(1, Ordering::AcqRel);
        }
    }
}

enum Item {
    Job(Task),
    Help(*const Help),
}

// SAFETY: a `Help` pointer is only followed while its owner waits for the helper to let
// go (see `Inner::parallel`); `Help` holds atomics and a `Sync` closure.
unsafe impl Send for Item {}

struct Queue {
    items: VecDeque<Item>,
    /// Sum of the depths of the work queues attached to contexts of this engine, plus
    /// room for help items.
    reserved: usize,
    shutdown: bool,
}

pub(crate) struct Inner {
    q: Mutex<Queue>,
    cv: Condvar,
    threads: usize,
}

/// One device's engine threads. Dropping the last handle stops them once their queue
/// is empty.
pub(crate) struct Engine {
    inner: Arc<Inner>,
    dev_id: usize,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

static ENGINES: Mutex<Vec<(usize, Weak<Engine>)>> = Mutex::new(Vec::new());

impl Engine {
    /// The engine of `dev` (shared by its contexts), or `None` for a device that runs
    /// jobs in the caller.
    pub(crate) fn for_device(dev: &Dev) -> Option<Arc<Engine>> {
        // Topologies refuse more; a DeviceProps built by hand is held to the same limit.
        let n = dev
            .as_devinfo()
            .engine_threads()
            .min(crate::device::MAX_ENGINE_THREADS) as usize;
        if n == 0 {
            return None;
        }
        let mut all = lock(&ENGINES);
        all.retain(|(_, w)| w.strong_count() > 0);
        if let Some(e) = all
            .iter()
            .find(|(id, _)| *id == dev.id())
            .and_then(|(_, w)| w.upgrade())
        {
            return Some(e);
        }
        // Every thread may share one job at a time with all the others.
        let help_room = n * n;
        let inner = Arc::new(Inner {
            q: Mutex::new(Queue {
                items: VecDeque::with_capacity(help_room),
                reserved: help_room,
                shutdown: false,
            }),
            cv: Condvar::new(),
            threads: n,
        });
        // The threads are running (their start-up done) before the engine is handed out,
        // so that nothing of theirs allocates once jobs flow.
        let ready = Arc::new((Mutex::new(0usize), Condvar::new()));
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            let inner = Arc::clone(&inner);
            let ready_t = Arc::clone(&ready);
            let r = std::thread::Builder::new()
                .name(format!("doca-engine-{i}"))
                .spawn(move || {
                    *lock(&ready_t.0) += 1;
                    ready_t.1.notify_all();
                    worker(&inner)
                });
            match r {
                Ok(h) => handles.push(h),
                Err(_) => break,
            }
        }
        let spawned = handles.len();
        let mut up = lock(&ready.0);
        while *up < spawned {
            up = ready.1.wait(up).unwrap_or_else(|e| e.into_inner());
        }
        drop(up);
        if spawned < n {
            // A thread could not be made: stop those that were, and run jobs inline.
            lock(&inner.q).shutdown = true;
            inner.cv.notify_all();
            for h in handles {
                let _ = h.join();
            }
            return None;
        }
        let e = Arc::new(Engine {
            inner,
            dev_id: dev.id(),
            threads: Mutex::new(handles),
        });
        all.push((e.dev_id, Arc::downgrade(&e)));
        Some(e)
    }

    pub(crate) fn threads(&self) -> usize {
        self.inner.threads
    }

    /// Makes room for `n` more queued tasks (done when a work queue attaches, so that
    /// submitting never allocates).
    pub(crate) fn reserve(&self, n: usize) {
        let mut q = lock(&self.inner.q);
        q.reserved += n;
        let want = q.reserved.saturating_sub(q.items.len());
        q.items.reserve(want);
    }

    /// Gives back the room [`reserve`](Engine::reserve) made for a work queue that
    /// detaches; the queue's memory shrinks once it holds far more room than the work
    /// queues still attached need (attach/detach cycles do not grow it).
    pub(crate) fn release(&self, n: usize) {
        let mut q = lock(&self.inner.q);
        let base = self.inner.threads * self.inner.threads;
        q.reserved = q.reserved.saturating_sub(n).max(base);
        let keep = q.reserved.max(q.items.len());
        if q.items.capacity() > 2 * keep {
            q.items.shrink_to(keep);
        }
    }

    /// The room the task queue holds now.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        lock(&self.inner.q).items.capacity()
    }

    pub(crate) fn push(&self, t: Task) {
        lock(&self.inner.q).items.push_back(Item::Job(t));
        self.inner.cv.notify_one();
    }
}

impl Drop for Engine {
    /// Stops the threads once their queue is empty, and waits for them (unless dropped
    /// on one of them), so that no engine thread outlives its engine.
    fn drop(&mut self) {
        lock(&self.inner.q).shutdown = true;
        self.inner.cv.notify_all();
        let me = std::thread::current().id();
        let handles = std::mem::take(&mut *lock(&self.threads));
        for h in handles {
            if h.thread().id() != me {
                let _ = h.join();
            }
        }
    }
}

impl Inner {
    /// Runs `f(0..n)`, sharing the pieces with idle engine threads; returns when all
    /// are done. Allocates nothing (help items use reserved queue room; without room,
    /// the caller runs every piece).
    fn parallel(&self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        let f: *const (dyn Fn(usize) + Sync) = f;
        // SAFETY: only the lifetime is erased; `f` outlives every use (see `Help::work`
        // and the wait for helpers below).
        let f: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(f) };
        let help = Help {
            f,
            n,
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            entered: AtomicUsize::new(0),
            left: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
        };
        let me: *const Help = &help;
        let helpers = self.threads.saturating_sub(1).min(n.saturating_sub(1));
        if helpers > 0 {
            let mut q = lock(&self.q);
            for _ in 0..helpers {
                if q.items.len() == q.items.capacity() {
                    break;
                }
                q.items.push_back(Item::Help(me));
            }
            drop(q);
            self.cv.notify_all();
        }
        help.work();
        while help.done.load(Ordering::Acquire) < n {
            std::thread::yield_now();
        }
        // Help items nobody took are withdrawn; those taken are waited out.
        let entered = {
            let mut q = lock(&self.q);
            q.items
                .retain(|it| !matches!(it, Item::Help(p) if std::ptr::eq(*p, me)));
            help.entered.load(Ordering::Acquire)
        };
        while help.left.load(Ordering::Acquire) < entered {
            std::thread::yield_now();
        }
        // Nobody refers to `help` any more: a piece's panic may unwind the owner now.
        if help.panicked.load(Ordering::Acquire) {
            std::panic::resume_unwind(Box::new("a piece of a parallel job panicked"));
        }
    }
}

/// What a job executes with: its device, and the engine threads it may share its work
/// with.
pub struct ExecEnv<'a> {
    dev: &'a Dev,
    engine: Option<&'a Inner>,
}

impl std::fmt::Debug for ExecEnv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecEnv")
            .field("threads", &self.threads())
            .finish_non_exhaustive()
    }
}

impl<'a> ExecEnv<'a> {
    pub(crate) fn new(dev: &'a Dev, engine: Option<&'a Inner>) -> ExecEnv<'a> {
        ExecEnv { dev, engine }
    }

    /// The context's device.
    pub fn dev(&self) -> &Dev {
        self.dev
    }

    /// Threads that may work on this job at once (1 for the inline engine).
    pub fn threads(&self) -> usize {
        self.engine.map_or(1, |e| e.threads)
    }

    /// Runs `f(i)` for every `i` in `0..n` and returns when all are done: on the engine
    /// threads that are idle (and this one) with engine threads, else in order on this
    /// thread. No thread is created.
    pub fn parallel(&self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        match self.engine {
            Some(e) if n > 1 && e.threads > 1 => e.parallel(n, f),
            _ => (0..n).for_each(f),
        }
    }
}

fn worker(inner: &Inner) {
    loop {
        let item = {
            let mut q = lock(&inner.q);
            loop {
                match q.items.pop_front() {
                    Some(Item::Help(p)) => {
                        // SAFETY: the owner waits for every helper counted here to leave.
                        unsafe { &*p }.entered.fetch_add(1, Ordering::AcqRel);
                        break Item::Help(p);
                    }
                    Some(it) => break it,
                    None => {}
                }
                if q.shutdown {
                    return;
                }
                q = inner.cv.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        match item {
            Item::Help(p) => {
                // SAFETY: as above: alive until `left` counts this helper.
                let h = unsafe { &*p };
                h.work();
                h.left.fetch_add(1, Ordering::AcqRel);
            }
            Item::Job(Task {
                runner,
                sink,
                dev,
                mut record,
            }) => {
                let r = runner.run(&mut record, &ExecEnv::new(&dev, Some(inner)));
                sink.complete(record, r);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    /// Attaching and detaching a deep work queue again and again leaves the engine's
    /// queue no bigger than one attachment needs (it grew by the depth each time).
    #[test]
    fn attach_detach_cycles_give_the_room_back() {
        let t = crate::device::Topology::single_device("e1:00.0", 2).unwrap();
        let dev = crate::device::devinfo_list_from(&t)[0].open().unwrap();
        let se = crate::SyncEvent::new();
        se.publisher_add_location_cpu(&dev).unwrap();
        se.subscriber_add_location_cpu(&dev).unwrap();
        se.as_ctx().start().unwrap();
        let engine = Engine::for_device(&dev).unwrap();
        let idle = engine.capacity();
        let depth = 1 << 16;
        let mut wq = crate::WorkQ::new(depth).unwrap();
        for _ in 0..20 {
            se.as_ctx().workq_add(&mut wq).unwrap();
            assert!(engine.capacity() >= depth as usize);
            assert!(engine.capacity() < 3 * depth as usize);
            se.as_ctx().workq_rm(&mut wq).unwrap();
        }
        assert!(
            engine.capacity() <= 2 * idle.max(4),
            "{}",
            engine.capacity()
        );
        // Dropping an attached work queue gives its room back too.
        se.as_ctx().workq_add(&mut wq).unwrap();
        drop(wq);
        assert!(
            engine.capacity() <= 2 * idle.max(4),
            "{}",
            engine.capacity()
        );
        se.as_ctx().stop().unwrap();
    }

    fn engine(threads: usize) -> (Arc<Inner>, Vec<std::thread::JoinHandle<()>>) {
        let inner = Arc::new(Inner {
            q: Mutex::new(Queue {
                items: VecDeque::with_capacity(threads * threads),
                reserved: threads * threads,
                shutdown: false,
            }),
            cv: Condvar::new(),
            threads,
        });
        let hs = (0..threads)
            .map(|_| {
                let i = Arc::clone(&inner);
                std::thread::spawn(move || worker(&i))
            })
            .collect();
        (inner, hs)
    }

    fn stop(inner: &Inner, hs: Vec<std::thread::JoinHandle<()>>) {
        lock(&inner.q).shutdown = true;
        inner.cv.notify_all();
        for h in hs {
            h.join().unwrap();
        }
        assert!(lock(&inner.q).items.is_empty(), "no help item left behind");
    }

    #[test]
    fn parallel_runs_every_piece_once_from_several_callers() {
        let (inner, hs) = engine(3);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for round in 0..200 {
                        let n = 1 + round % 17;
                        let hits: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
                        inner.parallel(n, &|i| {
                            hits[i].fetch_add(1, Ordering::Relaxed);
                        });
                        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
                    }
                });
            }
        });
        stop(&inner, hs);
    }

    #[test]
    fn pieces_run_on_engine_threads() {
        let (inner, hs) = engine(2);
        let names = Mutex::new(std::collections::HashSet::new());
        // Pieces that wait for each other can only finish if two threads run them.
        let arrived = AtomicU32::new(0);
        inner.parallel(2, &|_| {
            arrived.fetch_add(1, Ordering::AcqRel);
            while arrived.load(Ordering::Acquire) < 2 {
                std::thread::yield_now();
            }
            lock(&names).insert(std::thread::current().id());
        });
        assert_eq!(lock(&names).len(), 2);
        stop(&inner, hs);
    }
}
