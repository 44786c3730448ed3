//! The asynchronous engine: a device configured with engine threads runs its contexts'
//! jobs on them (like a DPU's accelerators) and posts completions to the work queues.

use super::ctx::CtxShared;
use super::job::JobRecord;
use super::workq::{WqShared, complete};
use crate::device::Dev;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, Weak};

pub(crate) struct Task {
    pub(crate) ctx: Arc<CtxShared>,
    pub(crate) wq: Arc<WqShared>,
    pub(crate) dev: Dev,
    pub(crate) record: JobRecord,
}

struct Queue {
    tasks: VecDeque<Task>,
    /// Sum of the depths of the work queues attached to contexts of this engine.
    reserved: usize,
    shutdown: bool,
}

pub(crate) struct Inner {
    q: Mutex<Queue>,
    cv: Condvar,
}

/// One device's engine threads. Dropping the last handle stops them once their queue
/// is empty.
pub(crate) struct Engine {
    inner: Arc<Inner>,
    threads: usize,
    dev_id: usize,
}

static ENGINES: Mutex<Vec<(usize, Weak<Engine>)>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Engine {
    /// The engine of `dev` (shared by its contexts), or `None` for a device that runs
    /// jobs in the caller.
    pub(crate) fn for_device(dev: &Dev) -> Option<Arc<Engine>> {
        let n = dev.as_devinfo().engine_threads() as usize;
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
        let inner = Arc::new(Inner {
            q: Mutex::new(Queue {
                tasks: VecDeque::new(),
                reserved: 0,
                shutdown: false,
            }),
            cv: Condvar::new(),
        });
        for i in 0..n {
            let inner = Arc::clone(&inner);
            let spawned = std::thread::Builder::new()
                .name(format!("doca-engine-{i}"))
                .spawn(move || worker(&inner));
            if spawned.is_err() {
                // Fewer threads than configured still make progress; none means inline.
                if i == 0 {
                    return None;
                }
                break;
            }
        }
        let e = Arc::new(Engine {
            inner,
            threads: n,
            dev_id: dev.id(),
        });
        all.push((e.dev_id, Arc::downgrade(&e)));
        Some(e)
    }

    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    /// Makes room for `n` more queued tasks (done when a work queue attaches, so that
    /// submitting never allocates).
    pub(crate) fn reserve(&self, n: usize) {
        let mut q = lock(&self.inner.q);
        q.reserved += n;
        let want = q.reserved.saturating_sub(q.tasks.len());
        q.tasks.reserve(want);
    }

    pub(crate) fn push(&self, t: Task) {
        lock(&self.inner.q).tasks.push_back(t);
        self.inner.cv.notify_one();
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        lock(&self.inner.q).shutdown = true;
        self.inner.cv.notify_all();
    }
}

fn worker(inner: &Inner) {
    loop {
        let task = {
            let mut q = lock(&inner.q);
            loop {
                if let Some(t) = q.tasks.pop_front() {
                    break t;
                }
                if q.shutdown {
                    return;
                }
                q = inner.cv.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        let Task {
            ctx,
            wq,
            dev,
            mut record,
        } = task;
        let r = ctx.ops.execute(&mut record, &dev);
        complete(&wq, record, r);
    }
}
