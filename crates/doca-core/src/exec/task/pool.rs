//! A context's pool of tasks of one type.

use super::*;

struct Slot<T> {
    taken: AtomicBool,
    value: UnsafeCell<T>,
}

/// A context's pool of tasks of one type (what `*_set_conf` sizes): slots at stable
/// addresses, taken and given back without allocating. Tasks taken and not given back
/// keep the context from finishing a stop.
pub struct TaskPool<T> {
    slots: Box<[Slot<T>]>,
    free: Mutex<Vec<u32>>,
    ctx: Ctx,
}

// SAFETY: a slot's value is reached only through the pointer `alloc` hands out, by the
// one holder of that task at a time (the pool itself never reads it); the free list is
// behind a mutex and the taken flags are atomics.
unsafe impl<T: Send> Sync for TaskPool<T> {}
// SAFETY: as above; the values move with the pool.
unsafe impl<T: Send> Send for TaskPool<T> {}

impl<T> fmt::Debug for TaskPool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskPool")
            .field("capacity", &self.capacity())
            .field("outstanding", &self.outstanding())
            .finish()
    }
}

impl<T> TaskPool<T> {
    /// A pool of `n` tasks of `ctx`, each made by `init`.
    pub fn new(ctx: &Ctx, n: u32, mut init: impl FnMut(usize) -> T) -> TaskPool<T> {
        let slots: Box<[Slot<T>]> = (0..n as usize)
            .map(|i| Slot {
                taken: AtomicBool::new(false),
                value: UnsafeCell::new(init(i)),
            })
            .collect();
        TaskPool {
            slots,
            free: Mutex::new((0..n).rev().collect()),
            ctx: ctx.clone(),
        }
    }

    /// Takes a task: `BadState` unless the context is running, `NoMemory` when every
    /// task is taken. The pointer stays valid while the pool lives; the holder has the
    /// task to itself until [`free`](TaskPool::free).
    #[inline]
    pub fn alloc(&self) -> Result<NonNull<T>> {
        if self.ctx.phase() != CtxPhase::Running {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "context is not running; start it before allocating tasks",
            ));
        }
        let Some(i) = lock(&self.free).pop() else {
            return Err(Error::with_context(
                ErrorCode::NoMemory,
                format!(
                    "all {} tasks of this type are taken; free some, or configure a larger pool",
                    self.slots.len()
                ),
            ));
        };
        let slot = &self.slots[i as usize];
        slot.taken.store(true, Ordering::Release);
        self.ctx.shared.tasks_out.fetch_add(1, Ordering::AcqRel);
        // SAFETY: `UnsafeCell::get` of a live slot is never null.
        Ok(unsafe { NonNull::new_unchecked(slot.value.get()) })
    }

    /// The index of a task of this pool.
    pub fn index_of(&self, p: *const T) -> Option<usize> {
        let base = self.slots.as_ptr() as usize;
        let size = std::mem::size_of::<Slot<T>>().max(1);
        let a = p as usize;
        if a < base {
            return None;
        }
        let i = (a - base) / size;
        (i < self.slots.len() && std::ptr::eq(self.slots[i].value.get(), p)).then_some(i)
    }

    /// Whether `p` is a task of this pool that is taken.
    pub fn is_taken(&self, p: *const T) -> bool {
        self.index_of(p)
            .is_some_and(|i| self.slots[i].taken.load(Ordering::Acquire))
    }

    /// Gives a task back: `InvalidValue` for a pointer that is not a taken task of this
    /// pool (freed twice, or another pool's). The holder must not use it afterwards.
    pub fn free(&self, p: *const T) -> Result<()> {
        let Some(i) = self.index_of(p) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "not a task of this pool",
            ));
        };
        if !self.slots[i].taken.swap(false, Ordering::AcqRel) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "task was already freed",
            ));
        }
        lock(&self.free).push(i as u32);
        self.ctx.shared.tasks_out.fetch_sub(1, Ordering::AcqRel);
        Ok(())
    }

    /// Tasks in the pool.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Tasks taken and not given back.
    pub fn outstanding(&self) -> usize {
        self.slots.len() - lock(&self.free).len()
    }
}

impl<T> Drop for TaskPool<T> {
    fn drop(&mut self) {
        let out = self.outstanding();
        self.ctx.shared.tasks_out.fetch_sub(out, Ordering::AcqRel);
    }
}
