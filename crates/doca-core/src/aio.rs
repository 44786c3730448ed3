//! Jobs as futures on tokio (feature `tokio`).
//!
//! [`AsyncWorkQ`] wraps a [`WorkQ`] in event-driven mode: its event handle (an eventfd)
//! is registered with tokio's reactor, so a task that waits for a job sleeps in epoll
//! with no thread blocked and no busy polling. Submitting a job gives a [`JobFuture`]
//! of its completion; many may be in flight from one task (`join_all`,
//! `FuturesUnordered`), or jobs may be submitted detached and their completions read as
//! a [`Completions`] stream. Graph instances and sync event waits are jobs like the
//! others.
//!
//! [`AsyncPe`] does the same for a progress engine (the task API generation): contexts
//! are connected and started on it, tasks are futures, and
//! [`stop_ctx`](AsyncPe::stop_ctx) awaits a stop while tasks are in flight.
//!
//! Both engines work: with the inline engine a job is done when it is submitted and its
//! future is ready at its first poll; with engine threads the eventfd wakes the task.
//!
//! Dropping a [`JobFuture`] never frees buffers the job still uses: the job stays in
//! flight, completes in the background, and its completion (with its buffers) is dropped
//! when the queue next retrieves it, so owned buffers return to their inventory as they
//! would have.
//!
//! After [`AsyncWorkQ::new`], submitting and awaiting allocate nothing (apart from
//! what the runtime allocates for its own tasks).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> doca_core::Result<()> {
//! use doca_core::aio::AsyncWorkQ;
//! use doca_core::{devinfo_list, AccessFlags, BufInventory, Mmap, WorkQ};
//! use doca_dma::{Dma, MemcpyJob};
//!
//! let dev = devinfo_list()?[0].open()?;
//! let mut mmap = Mmap::new();
//! mmap.set_memory(vec![0u8; 8192])?;
//! mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE)?;
//! mmap.dev_add(&dev)?;
//! mmap.start()?;
//! let mut inv = BufInventory::new(8)?;
//! inv.start()?;
//!
//! let dma = Dma::new();
//! dma.as_ctx().dev_add(&dev)?;
//! dma.as_ctx().start()?;
//! let wq = AsyncWorkQ::new(WorkQ::new(16)?)?;
//! wq.attach(dma.as_ctx())?;
//!
//! let mut src = inv.buf_at(&mmap, 0, 4096)?;
//! src.append(b"async hello")?;
//! let dst = inv.buf_at(&mmap, 4096, 4096)?;
//! let mut done = wq
//!     .submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, 7))
//!     .map_err(|(e, _)| e)?
//!     .await;
//! done.status()?;
//! let dst = done.take_buf(MemcpyJob::DST).unwrap();
//! assert_eq!(dst.data_to_vec(), b"async hello");
//! wq.detach(dma.as_ctx())?;
//! # Ok(())
//! # }
//! ```

use crate::exec::{Completion, Job, JobRecord, RetrieveError};
use crate::exec::{Pe, PeEvent};
use crate::graph::{Graph, GraphInstance};
use crate::sync_event::{SyncEvent, SyncEventJob};
use crate::{Ctx, Data, Error, ErrorCode, Result, WorkQ};
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// The high half of the user data the queue gives the jobs futures wait for (the low
/// half is the slot; the job's own user data comes back in its completion). No user
/// space address starts with it; detached jobs keep their user data, and one that
/// starts with it is reserved.
const TAG: u64 = 0xD0CA_A510 << 32;

/// How many times a task yields (staying runnable) for completions from engine threads
/// before it sleeps on the event handle: short jobs end within a few yields, and
/// sleeping costs an eventfd write, an epoll wake-up and a read.
const SPINS: u32 = 64;

/// How often jobs that wait on a condition changed behind the library's back (a sync
/// event updated by another process) are retried while a task sleeps on the queue.
const NAP: Duration = Duration::from_millis(1);

/// A duplicate of a queue's eventfd, or of another library's event descriptor (one
/// file description, so it is readable when the original is), owned so that it stays
/// open while tokio watches it. Made by [`watch`].
#[derive(Debug)]
pub struct EventFd(OwnedFd);

impl AsRawFd for EventFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// One job in flight, by slot.
enum Slot {
    Free,
    /// A [`JobFuture`] waits for it.
    Waiting {
        waker: Option<Waker>,
        user_data: Data,
    },
    /// Completed; its future has not taken it yet.
    Done(Completion),
    /// Its future was dropped: the completion is dropped when it comes.
    Abandoned,
}

struct Driver<Q> {
    q: Q,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Completions of detached jobs, in the order they were retrieved.
    ready: VecDeque<Completion>,
    /// A second queue of the same capacity, which a [`Completions`] stream takes to
    /// read a batch without the lock (swapped with `ready`).
    spare: Option<VecDeque<Completion>>,
    /// Yields since the last completion (see [`SPINS`]).
    spins: u32,
    /// Detached jobs in flight.
    detached: u32,
    stream_waker: Option<Waker>,
    /// The waker last registered with the eventfd (and the nap timer).
    reactor_waker: Option<Waker>,
    /// Retries conditions changed behind the library's back; `None` when the runtime
    /// has no timer.
    nap: Option<Pin<Box<tokio::time::Sleep>>>,
}

/// A work queue ([`AsyncWorkQ`]) or a progress engine ([`AsyncPe`]) whose jobs are
/// futures on tokio. See the [module](self) documentation.
///
/// It is `Send` and `Sync`: futures borrow it, and may be polled from any thread of a
/// multi-threaded runtime.
pub struct AsyncQueue<Q: Queue> {
    fd: AsyncFd<EventFd>,
    driver: Latch<Driver<Q>>,
}

/// A work queue whose jobs are futures ([`AsyncQueue`] over a [`WorkQ`]).
pub type AsyncWorkQ = AsyncQueue<WorkQ>;

/// A progress engine whose tasks are futures ([`AsyncQueue`] over a [`Pe`]).
pub type AsyncPe = AsyncQueue<Pe>;

impl<Q: Queue> std::fmt::Debug for AsyncQueue<Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = self.driver.lock();
        f.debug_struct("AsyncQueue")
            .field("slots", &d.slots.len())
            .field("inflight", &d.q.inflight())
            .finish()
    }
}

/// What an [`AsyncQueue`] drives: a [`WorkQ`] or a [`Pe`] (sealed).
pub trait Queue: sealed::Sealed + Send + 'static {
    #[doc(hidden)]
    fn submit_record(
        &mut self,
        ctx: &Ctx,
        record: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)>;
    #[doc(hidden)]
    fn submit_instance(
        &mut self,
        instance: GraphInstance,
        user_data: u64,
    ) -> std::result::Result<(), (Error, GraphInstance)>;
    /// Hands every completion at hand to `on`.
    #[doc(hidden)]
    fn retrieve(&mut self, on: &mut dyn FnMut(Completion));
    #[doc(hidden)]
    fn arm(&mut self);
    #[doc(hidden)]
    fn clear(&mut self);
    #[doc(hidden)]
    fn event_fd(&self) -> Result<RawFd>;
    #[doc(hidden)]
    fn pending_jobs(&self) -> u32;
    #[doc(hidden)]
    fn engine_inflight(&self) -> u32;
    #[doc(hidden)]
    fn inflight(&self) -> u32;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::WorkQ {}
    impl Sealed for crate::exec::Pe {}
}

impl Queue for WorkQ {
    fn submit_record(
        &mut self,
        ctx: &Ctx,
        record: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        self.submit(ctx, record)
    }
    fn submit_instance(
        &mut self,
        instance: GraphInstance,
        user_data: u64,
    ) -> std::result::Result<(), (Error, GraphInstance)> {
        self.graph_submit(instance, user_data)
    }
    #[inline]
    fn retrieve(&mut self, on: &mut dyn FnMut(Completion)) {
        loop {
            match self.progress_retrieve() {
                Ok(c) | Err(RetrieveError::IoFailed(c)) => on(c),
                Err(RetrieveError::Again) => return,
            }
        }
    }
    fn arm(&mut self) {
        let _ = self.event_handle_arm();
    }
    fn clear(&mut self) {
        if let Ok(fd) = self.event_handle() {
            let _ = self.event_handle_clear(fd);
        }
    }
    fn event_fd(&self) -> Result<RawFd> {
        self.event_handle()
    }
    fn pending_jobs(&self) -> u32 {
        WorkQ::pending_jobs(self)
    }
    fn engine_inflight(&self) -> u32 {
        WorkQ::engine_inflight(self)
    }
    fn inflight(&self) -> u32 {
        WorkQ::inflight(self)
    }
}

impl Queue for Pe {
    fn submit_record(
        &mut self,
        ctx: &Ctx,
        record: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        self.submit(ctx, record)
    }
    fn submit_instance(
        &mut self,
        instance: GraphInstance,
        user_data: u64,
    ) -> std::result::Result<(), (Error, GraphInstance)> {
        self.graph_submit(instance, user_data)
    }
    fn retrieve(&mut self, on: &mut dyn FnMut(Completion)) {
        // State changes are read from the contexts themselves (`Ctx::phase`).
        while self.progress(|ev| {
            if let PeEvent::Task(c) = ev {
                on(c);
            }
        }) {}
    }
    fn arm(&mut self) {
        let _ = self.request_notification();
    }
    fn clear(&mut self) {
        if let Ok(fd) = self.notification_handle() {
            let _ = self.clear_notification(fd);
        }
    }
    fn event_fd(&self) -> Result<RawFd> {
        self.notification_handle()
    }
    fn pending_jobs(&self) -> u32 {
        self.queue_stats().0
    }
    fn engine_inflight(&self) -> u32 {
        self.queue_stats().1
    }
    fn inflight(&self) -> u32 {
        Pe::inflight(self)
    }
}

/// Registers a duplicate of the event descriptor `raw` (an eventfd, an epoll
/// descriptor of a channel) with the current tokio runtime's reactor, for readability.
/// The caller's descriptor stays the caller's. `BadState` outside a runtime or in one
/// without I/O.
pub fn watch(raw: RawFd) -> Result<AsyncFd<EventFd>> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(Error::with_context(
            ErrorCode::BadState,
            "async DOCA objects are made inside a tokio runtime (its reactor watches their event handles)",
        ));
    }
    // SAFETY: `raw` is the queue's open eventfd, borrowed only to duplicate it.
    let dup = unsafe { BorrowedFd::borrow_raw(raw) }
        .try_clone_to_owned()
        .map_err(|e| {
            Error::with_context(
                ErrorCode::OperatingSystem,
                format!("cannot duplicate the event handle: {e}"),
            )
        })?;
    std::panic::catch_unwind(|| {
        // SAFETY: the descriptor is owned by the `EventFd` given to tokio, so it stays
        // open, and is the same one, for as long as the `AsyncFd` exists.
        unsafe { AsyncFd::register_with_interest(EventFd(dup), Interest::READABLE) }
    })
    .map_err(|_| {
        Error::with_context(
            ErrorCode::BadState,
            "the tokio runtime has no I/O driver: build it with enable_io() or enable_all()",
        )
    })?
    .map_err(|e| {
        Error::with_context(
            ErrorCode::OperatingSystem,
            format!("cannot register the event handle with tokio: {e}"),
        )
    })
}

impl<Q: Queue> AsyncQueue<Q> {
    fn with_queue(q: Q, fd: AsyncFd<EventFd>, slots: usize) -> AsyncQueue<Q> {
        let nap = std::panic::catch_unwind(|| Box::pin(tokio::time::sleep(NAP))).ok();
        AsyncQueue {
            fd,
            driver: Latch::new(Driver {
                q,
                slots: (0..slots).map(|_| Slot::Free).collect(),
                free: (0..slots as u32).rev().collect(),
                ready: VecDeque::with_capacity(slots),
                spare: Some(VecDeque::with_capacity(slots)),
                spins: 0,
                detached: 0,
                stream_waker: None,
                reactor_waker: None,
                nap,
            }),
        }
    }
}

impl AsyncWorkQ {
    /// Takes `wq` (no context attached yet), turns on its event-driven mode and
    /// registers its event handle with the current tokio runtime, which must have I/O
    /// enabled (`enable_io` or `enable_all`; with `enable_time` too, sync event waits
    /// also see updates made by other processes). `BadState` outside a runtime or with a
    /// context already attached.
    pub fn new(mut wq: WorkQ) -> Result<AsyncWorkQ> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "an AsyncWorkQ is made inside a tokio runtime (its reactor watches the event handle)",
            ));
        }
        wq.set_event_driven_enable(true)?;
        let fd = watch(wq.event_handle()?)?;
        let depth = wq.depth() as usize;
        Ok(AsyncQueue::with_queue(wq, fd, depth))
    }

    /// `doca_ctx_workq_add`: `ctx`'s jobs may be submitted here.
    pub fn attach(&self, ctx: &Ctx) -> Result<()> {
        ctx.workq_add(&mut self.driver.lock().q)
    }

    /// `doca_ctx_workq_rm`.
    pub fn detach(&self, ctx: &Ctx) -> Result<()> {
        ctx.workq_rm(&mut self.driver.lock().q)
    }

    /// `doca_graph_workq_add`: `graph`'s instances may be submitted here.
    pub fn graph_add(&self, graph: &Graph) -> Result<()> {
        graph.workq_add(&self.driver.lock().q)
    }

    /// `doca_graph_workq_rm`.
    pub fn graph_rm(&self, graph: &Graph) -> Result<()> {
        graph.workq_rm(&self.driver.lock().q)
    }
}

impl AsyncPe {
    /// Takes `pe` (no context connected yet) and registers its notification handle
    /// with the current tokio runtime (I/O enabled; a timer too for sync event waits
    /// across processes). At most `max_in_flight` tasks wait for futures at once.
    /// `BadState` outside a runtime.
    pub fn new(pe: Pe, max_in_flight: u32) -> Result<AsyncPe> {
        if max_in_flight == 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "an AsyncPe needs room for at least one task in flight",
            ));
        }
        if pe.num_contexts() > 0 {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "give the AsyncPe its engine before connecting contexts",
            ));
        }
        let fd = watch(pe.notification_handle()?)?;
        Ok(AsyncQueue::with_queue(pe, fd, max_in_flight as usize))
    }

    /// `doca_pe_connect_ctx` then `doca_ctx_start`. Contexts that run their own events
    /// (comch) are refused (`NotSupported`): their callbacks would run under the
    /// queue's lock.
    pub fn connect_and_start(&self, ctx: &Ctx) -> Result<()> {
        if ctx.is_channel() {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "contexts with their own events (comch) are not driven by an AsyncPe",
            ));
        }
        let d = self.driver.lock();
        d.q.connect(ctx)?;
        d.q.start_ctx(ctx)
    }

    /// `doca_ctx_stop`, awaited: tasks still in flight complete (those that never ran
    /// with an error) and the context reaches idle.
    pub async fn stop_ctx(&self, ctx: &Ctx) -> Result<()> {
        std::future::poll_fn(|cx| {
            loop {
                let mut d = self.driver.lock();
                match d.q.stop_ctx(ctx) {
                    Ok(()) => return Poll::Ready(Ok(())),
                    Err(e) if e.code() == ErrorCode::InProgress => {}
                    Err(e) => return Poll::Ready(Err(e)),
                }
                d.drive();
                if ctx.phase() == crate::exec::CtxPhase::Idle {
                    d.hand_off(cx.waker());
                    return Poll::Ready(Ok(()));
                }
                if self.sleep(d, cx).is_pending() {
                    return Poll::Pending;
                }
            }
        })
        .await
    }

    /// `doca_graph_start` on this engine: `graph`'s instances may be submitted here.
    pub fn graph_attach(&self, graph: &Graph) -> Result<()> {
        self.driver.lock().q.graph_attach(graph)
    }

    /// `doca_graph_stop`.
    pub fn graph_detach(&self, graph: &Graph) -> Result<()> {
        self.driver.lock().q.graph_detach(graph)
    }
}

impl<Q: Queue> AsyncQueue<Q> {
    /// Jobs in flight (awaited, detached or abandoned).
    pub fn inflight(&self) -> u32 {
        self.driver.lock().q.inflight()
    }

    /// Submits `record` on `ctx` and returns the future of its completion, whose
    /// record keeps the job's own user data. Refusals give the record back, as
    /// [`WorkQ::submit`] does; `NoMemory` when the queue's depth is in flight.
    pub fn submit(
        &self,
        ctx: &Ctx,
        record: JobRecord,
    ) -> std::result::Result<JobFuture<'_, Q>, (Error, JobRecord)> {
        let slot = self.start(ctx, record)?;
        Ok(JobFuture {
            q: self,
            slot,
            done: false,
        })
    }

    /// [`submit`](AsyncWorkQ::submit) of a typed job.
    pub fn submit_job(
        &self,
        ctx: &Ctx,
        job: impl Job,
    ) -> std::result::Result<JobFuture<'_, Q>, (Error, JobRecord)> {
        self.submit(ctx, job.into_record())
    }

    /// Submits `record` with no future: its completion comes out of
    /// [`completions`](AsyncWorkQ::completions).
    pub fn submit_detached(
        &self,
        ctx: &Ctx,
        record: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        // Its user data stays as it is: completions not tagged for a future are the
        // stream's.
        let mut d = self.driver.lock();
        d.q.submit_record(ctx, record)?;
        d.detached += 1;
        Ok(())
    }

    /// The completions of detached jobs, as a stream (`futures_core::Stream`), in the
    /// order they complete. It ends when no detached job is in flight and none is left
    /// to read.
    pub fn completions(&self) -> Completions<'_, Q> {
        Completions {
            q: self,
            batch: None,
        }
    }

    /// `doca_graph_instance_submit`: the future of the instance's completion, which
    /// carries the instance back in `graph_instance` (its nodes' results inside).
    /// `user_data` comes back in the completion's record.
    pub fn submit_graph(
        &self,
        instance: GraphInstance,
        user_data: u64,
    ) -> std::result::Result<JobFuture<'_, Q>, (Error, GraphInstance)> {
        let mut d = self.driver.lock();
        let Some(slot) = d.free.pop() else {
            return Err((full(), instance));
        };
        if let Err(e) = d.q.submit_instance(instance, TAG | slot as u64) {
            d.free.push(slot);
            return Err(e);
        }
        d.slots[slot as usize] = Slot::Waiting {
            waker: None,
            user_data: Data(user_data),
        };
        Ok(JobFuture {
            q: self,
            slot,
            done: false,
        })
    }

    /// Waits until `event`'s value masked with `mask` is greater than `value`, as a sync
    /// event wait job on this queue (`event`'s context must be attached here). Updates
    /// through this library wake the task at once; updates by another process are seen
    /// within a millisecond when the runtime has a timer.
    pub async fn sync_event_wait_gt(&self, event: &SyncEvent, value: u64, mask: u64) -> Result<()> {
        let job = SyncEventJob::wait_gt(value, mask, 0);
        let f = self.submit_job(event.as_ctx(), job).map_err(|(e, _)| e)?;
        f.await.status()
    }

    /// Waits until the jobs whose futures were dropped have completed (their
    /// completions are dropped, their buffers back in their inventories): before
    /// detaching contexts at shutdown, for instance.
    pub async fn settle(&self) {
        std::future::poll_fn(|cx| {
            loop {
                let mut d = self.driver.lock();
                d.drive();
                if !d.slots.iter().any(|s| matches!(s, Slot::Abandoned)) {
                    d.hand_off(cx.waker());
                    return Poll::Ready(());
                }
                if self.sleep(d, cx).is_pending() {
                    return Poll::Pending;
                }
            }
        })
        .await
    }

    /// Submits `record` for a future in a free slot.
    fn start(
        &self,
        ctx: &Ctx,
        mut record: JobRecord,
    ) -> std::result::Result<u32, (Error, JobRecord)> {
        let mut d = self.driver.lock();
        let Some(slot) = d.free.pop() else {
            return Err((full(), record));
        };
        let user_data = record.user_data;
        record.user_data = Data(TAG | slot as u64);
        if let Err((e, mut r)) = d.q.submit_record(ctx, record) {
            d.free.push(slot);
            r.user_data = user_data;
            return Err((e, r));
        }
        d.slots[slot as usize] = Slot::Waiting {
            waker: None,
            user_data,
        };
        Ok(slot)
    }

    /// Polls for the completion in `slot`.
    fn poll_slot(&self, slot: u32, cx: &mut Context<'_>) -> Poll<Completion> {
        loop {
            let mut d = self.driver.lock();
            // Another future's poll may have retrieved this job already.
            if !matches!(d.slots[slot as usize], Slot::Done(_)) {
                d.drive();
            }
            let s = &mut d.slots[slot as usize];
            if matches!(s, Slot::Done(_)) {
                let Slot::Done(c) = std::mem::replace(s, Slot::Free) else {
                    unreachable!()
                };
                d.free.push(slot);
                d.hand_off(cx.waker());
                return Poll::Ready(c);
            }
            if let Slot::Waiting { waker, .. } = s
                && !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker()))
            {
                *waker = Some(cx.waker().clone());
            }
            if self.sleep(d, cx).is_pending() {
                return Poll::Pending;
            }
        }
    }

    /// Arms the event handle (and the nap timer while jobs wait on conditions) and
    /// registers `cx` with them. Ready when the handle fired: drive again.
    fn sleep(&self, mut d: Held<'_, Driver<Q>>, cx: &mut Context<'_>) -> Poll<()> {
        if d.q.engine_inflight() > 0 && d.spins < SPINS {
            // Engine threads are at work: give them the CPU for a moment, then look
            // again (as the blocking wait does), before sleeping on the handle.
            d.spins += 1;
            drop(d);
            std::thread::yield_now();
            return Poll::Ready(());
        }
        // Completions that came meanwhile make the handle readable at once.
        d.q.arm();
        if !d
            .reactor_waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            d.reactor_waker = Some(cx.waker().clone());
        }
        if d.q.pending_jobs() > 0 {
            match &mut d.nap {
                Some(nap) => {
                    if nap.is_elapsed() {
                        nap.as_mut().reset(tokio::time::Instant::now() + NAP);
                    }
                    if nap.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(());
                    }
                }
                // No timer: come back soon.
                None => cx.waker().wake_by_ref(),
            }
        }
        drop(d);
        match self.fd.poll_read_ready(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(mut ready)) => {
                ready.clear_ready();
                self.driver.lock().q.clear();
                Poll::Ready(())
            }
            Poll::Ready(Err(_)) => {
                // The reactor is shutting down: nothing will wake us, so poll again.
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }

    fn abandon(&self, slot: u32, waker: Option<&Waker>) {
        let mut d = self.driver.lock();
        let s = &mut d.slots[slot as usize];
        let done = match std::mem::replace(s, Slot::Abandoned) {
            Slot::Done(c) => {
                *s = Slot::Free;
                d.free.push(slot);
                Some(c)
            }
            Slot::Waiting { waker: w, .. } => {
                if let Some(w) = w.as_ref().or(waker) {
                    d.hand_off(w);
                }
                None
            }
            other => {
                *s = other;
                None
            }
        };
        drop(d);
        // Buffers go back to their inventory outside the lock.
        drop(done);
    }
}

/// The queue's lock. Its holders never block or wait (they retrieve completions and
/// move records), so a waiter spins, yielding its thread; taking it is one atomic
/// operation and giving it back a store, which is most of the cost of a job's future
/// when the job itself takes 100 ns.
struct Latch<T> {
    held: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a `Held`, of which `held` admits one at a
// time; `T: Send` lets it be used from whichever thread holds it.
unsafe impl<T: Send> Sync for Latch<T> {}

impl<T> Latch<T> {
    fn new(value: T) -> Latch<T> {
        Latch {
            held: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    #[inline]
    fn lock(&self) -> Held<'_, T> {
        let mut spins = 0u32;
        while self
            .held
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        Held { latch: self }
    }
}

/// The lock held; given back when dropped (also while unwinding).
struct Held<'a, T> {
    latch: &'a Latch<T>,
}

impl<T> Deref for Held<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (see `Latch::lock`).
        unsafe { &*self.latch.value.get() }
    }
}

impl<T> DerefMut for Held<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard is the only one, borrowed mutably.
        unsafe { &mut *self.latch.value.get() }
    }
}

impl<T> Drop for Held<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.latch.held.store(false, Ordering::Release);
    }
}

/// `NoMemory`: every slot is in flight.
fn full() -> Error {
    Error::with_context(
        ErrorCode::NoMemory,
        "the work queue's depth is in flight: await some jobs first",
    )
}

impl<Q: Queue> Driver<Q> {
    /// Retrieves every completion at hand and gives each to its slot.
    fn drive(&mut self) {
        let Driver {
            q,
            slots,
            free,
            ready,
            spins,
            detached,
            stream_waker,
            ..
        } = self;
        q.retrieve(&mut |c| {
            *spins = 0;
            dispatch(slots, free, ready, detached, stream_waker.as_ref(), c);
        });
    }

    /// The task of `leaving` stops waiting: when it was the one the eventfd would wake,
    /// another waiter is woken to take its place.
    fn hand_off(&mut self, leaving: &Waker) {
        if !self
            .reactor_waker
            .as_ref()
            .is_some_and(|w| w.will_wake(leaving))
        {
            return;
        }
        self.reactor_waker = None;
        let other = self.slots.iter().find_map(|s| match s {
            Slot::Waiting { waker: Some(w), .. } if !w.will_wake(leaving) => Some(w),
            _ => None,
        });
        if let Some(w) = other.or(self.stream_waker.as_ref().filter(|w| !w.will_wake(leaving))) {
            w.wake_by_ref();
        }
    }
}

/// Gives a retrieved completion to its slot (a waiting future), drops it (an
/// abandoned one), or queues it for the stream (a detached job's).
fn dispatch(
    slots: &mut [Slot],
    free: &mut Vec<u32>,
    ready: &mut VecDeque<Completion>,
    detached: &mut u32,
    stream_waker: Option<&Waker>,
    mut c: Completion,
) {
    let ud = c.record.user_data.u64();
    let idx = (ud & 0xffff_ffff) as usize;
    let ours = ud & !0xffff_ffff == TAG && idx < slots.len();
    if !ours {
        // A detached job's: the stream's.
        *detached = detached.saturating_sub(1);
        ready.push_back(c);
        if let Some(w) = stream_waker {
            w.wake_by_ref();
        }
        return;
    }
    let slot = &mut slots[idx];
    match std::mem::replace(slot, Slot::Free) {
        Slot::Waiting { waker, user_data } => {
            c.record.user_data = user_data;
            *slot = Slot::Done(c);
            if let Some(w) = waker {
                w.wake();
            }
        }
        Slot::Abandoned => {
            free.push(idx as u32);
            drop(c);
        }
        other => {
            *slot = other;
            ready.push_back(c);
        }
    }
}

/// The completion of one job submitted with [`AsyncWorkQ::submit`]: `error` is `None`
/// on success, and the record holds the job's buffers either way. Dropping it before
/// it is ready leaves the job to complete in the background.
#[must_use = "a job's future does nothing unless awaited (the job runs anyway)"]
pub struct JobFuture<'q, Q: Queue = WorkQ> {
    q: &'q AsyncQueue<Q>,
    slot: u32,
    done: bool,
}

impl<Q: Queue> std::fmt::Debug for JobFuture<'_, Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobFuture")
            .field("slot", &self.slot)
            .field("done", &self.done)
            .finish()
    }
}

impl<Q: Queue> Future for JobFuture<'_, Q> {
    type Output = Completion;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Completion> {
        let this = self.get_mut();
        if this.done {
            panic!("a JobFuture polled after it completed");
        }
        let r = this.q.poll_slot(this.slot, cx);
        if r.is_ready() {
            this.done = true;
        }
        r
    }
}

impl<Q: Queue> Drop for JobFuture<'_, Q> {
    fn drop(&mut self) {
        if !self.done {
            self.q.abandon(self.slot, None);
        }
    }
}

/// The stream of detached jobs' completions ([`AsyncWorkQ::completions`]).
pub struct Completions<'q, Q: Queue = WorkQ> {
    q: &'q AsyncQueue<Q>,
    /// A batch taken from the queue, read without its lock.
    batch: Option<VecDeque<Completion>>,
}

impl<Q: Queue> std::fmt::Debug for Completions<'_, Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completions")
            .field("batch", &self.batch.as_ref().map_or(0, VecDeque::len))
            .finish()
    }
}

impl<Q: Queue> futures_core::Stream for Completions<'_, Q> {
    type Item = Completion;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Completion>> {
        let this = self.get_mut();
        if let Some(c) = this.batch.as_mut().and_then(VecDeque::pop_front) {
            return Poll::Ready(Some(c));
        }
        let q = this.q;
        loop {
            let mut d = q.driver.lock();
            d.drive();
            if !d.ready.is_empty() {
                // Swap the filled queue for this stream's empty one (both keep their
                // capacity: nothing is allocated).
                match &mut this.batch {
                    Some(b) => std::mem::swap(b, &mut d.ready),
                    None => match d.spare.take() {
                        Some(mut b) => {
                            std::mem::swap(&mut b, &mut d.ready);
                            this.batch = Some(b);
                        }
                        // Another stream holds the spare: read one at a time.
                        None => return Poll::Ready(d.ready.pop_front()),
                    },
                }
                drop(d);
                return Poll::Ready(this.batch.as_mut().and_then(VecDeque::pop_front));
            }
            if d.detached == 0 {
                d.stream_waker = None;
                return Poll::Ready(None);
            }
            if !d
                .stream_waker
                .as_ref()
                .is_some_and(|w| w.will_wake(cx.waker()))
            {
                d.stream_waker = Some(cx.waker().clone());
            }
            if q.sleep(d, cx).is_pending() {
                return Poll::Pending;
            }
        }
    }
}

impl<Q: Queue> Drop for Completions<'_, Q> {
    fn drop(&mut self) {
        let mut d = self.q.driver.lock();
        if let Some(mut b) = self.batch.take() {
            // Completions not read yet go back to the queue, ahead of newer ones.
            while let Some(c) = b.pop_back() {
                d.ready.push_front(c);
            }
            if d.spare.is_none() {
                d.spare = Some(b);
            }
        }
        if let Some(w) = d.stream_waker.take() {
            d.hand_off(&w);
        }
    }
}
