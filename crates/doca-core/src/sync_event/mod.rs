//! `doca_sync_event`: a 64-bit counter that one side publishes (set, add) and another
//! subscribes to (get, wait until greater than a value), used synchronously or, as a
//! context, through jobs on a work queue.
//!
//! ```
//! use doca_core::{devinfo_list, SyncEvent};
//! use std::time::Duration;
//!
//! let dev = devinfo_list()?[0].open()?;
//! let se = SyncEvent::new();
//! se.publisher_add_location_cpu(&dev)?;
//! se.subscriber_add_location_cpu(&dev)?;
//! se.start()?;
//! std::thread::scope(|s| {
//!     s.spawn(|| se.update_add(5));
//!     se.wait_gt_blocking(4, u64::MAX, Some(Duration::from_secs(10)))
//! })?;
//! assert_eq!(se.get()?, 5);
//! se.stop()?;
//! # Ok::<(), doca_core::Error>(())
//! ```

use crate::device::{Capability, Dev, DevInfo, Role};
use crate::error::{Error, ErrorCode, Result};
use crate::exec::{Ctx, CtxOps, ExecEnv, Job, JobOps, JobRecord};
use crate::memory::export::{Export, ExportSpec, Import, exporter_gone};
use crate::types::{Data, action};
use crate::xproc::blob::Kind;
use crate::xproc::{self, Block, LIVE, Page};
use std::fmt;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// `DOCA_SYNC_EVENT_JOB_WAIT_GT`.
pub const JOB_WAIT_GT: u32 = action::SYNC_EVENT_FIRST + 1;
/// `DOCA_SYNC_EVENT_JOB_GET`.
pub const JOB_GET: u32 = action::SYNC_EVENT_FIRST + 2;
/// `DOCA_SYNC_EVENT_JOB_UPDATE_SET`.
pub const JOB_UPDATE_SET: u32 = action::SYNC_EVENT_FIRST + 3;
/// `DOCA_SYNC_EVENT_JOB_UPDATE_ADD`.
pub const JOB_UPDATE_ADD: u32 = action::SYNC_EVENT_FIRST + 4;
/// A wait for `(event & mask) == value` (the task generation's `wait_eq` task).
pub const JOB_WAIT_EQ: u32 = action::SYNC_EVENT_FIRST + 5;
/// A wait for `(event & mask) != value` (the task generation's `wait_neq` task).
pub const JOB_WAIT_NEQ: u32 = action::SYNC_EVENT_FIRST + 6;

/// The sync event's task table: the one declaration of its job and task types, handed
/// to a generator macro (`$gen`): [`task_specs!`](crate::task_specs) makes
/// [`tasks`] from it, and the C faces make their 2.2 job translation and their 3.x task
/// functions from it. Record layout: parameter 0 the value (set, add, wait), 1 the
/// wait's mask or the program's result pointer, 2 the value read (get) or the value
/// before (add).
#[macro_export]
macro_rules! sync_event_task_table {
    ($gen:path) => {
        $gen! {
            lib: "sync event",
            capability: SyncEvent,
            topology: "sync_event",
            c3_handle: doca_sync_event3,
            tasks: [
                {
                    spec: GET @ $crate::sync_event::tasks::GET,
                    module: get,
                    name: "get",
                    job: $crate::sync_event::JOB_GET,
                    job_types: [get = $crate::sync_event::JOB_GET],
                    inputs: [
                        param ret_val_ptr: 1 (*mut u64)
                            get doca_sync_event_task_get_get_ret_val_ptr
                            set doca_sync_event_task_get_set_ret_val_ptr,
                    ],
                    write_back: [2 -> 1],
                    hooks: $crate::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_sync_event_task_get,
                        cb: doca_sync_event_task_get_completion_cb_t,
                        set_conf: doca_sync_event_task_get_set_conf (num_idle_not_permitted),
                        alloc_init: doca_sync_event_task_get_alloc_init,
                        as_task: doca_sync_event_task_get_as_doca_task,
                        setters: void,
                        caps: [
                            supported doca_sync_event_cap_task_get_is_supported,
                        ],
                    },
                    c22: { doca_sync_event_job_get { value: ret_val_ptr } },
                },
                {
                    spec: NOTIFY_SET @ $crate::sync_event::tasks::NOTIFY_SET,
                    module: notify_set,
                    name: "notify_set",
                    job: $crate::sync_event::JOB_UPDATE_SET,
                    job_types: [update_set = $crate::sync_event::JOB_UPDATE_SET],
                    inputs: [
                        param set_val: 0 (u64)
                            get doca_sync_event_task_notify_set_get_set_val
                            set doca_sync_event_task_notify_set_set_set_val,
                    ],
                    write_back: [],
                    hooks: $crate::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_sync_event_task_notify_set,
                        cb: doca_sync_event_task_notify_set_completion_cb_t,
                        set_conf: doca_sync_event_task_notify_set_set_conf (num_idle_not_permitted),
                        alloc_init: doca_sync_event_task_notify_set_alloc_init,
                        as_task: doca_sync_event_task_notify_set_as_doca_task,
                        setters: void,
                        caps: [
                            supported doca_sync_event_cap_task_notify_set_is_supported,
                        ],
                    },
                    c22: { doca_sync_event_job_update_set { value: set_val } },
                },
                {
                    spec: NOTIFY_ADD @ $crate::sync_event::tasks::NOTIFY_ADD,
                    module: notify_add,
                    name: "notify_add",
                    job: $crate::sync_event::JOB_UPDATE_ADD,
                    job_types: [update_add = $crate::sync_event::JOB_UPDATE_ADD],
                    inputs: [
                        param inc_val: 0 (u64)
                            get doca_sync_event_task_notify_add_get_inc_val
                            set doca_sync_event_task_notify_add_set_inc_val,
                        param fetched_val_ptr: 1 (*mut u64)
                            get doca_sync_event_task_notify_add_get_fetched_val_ptr
                            set doca_sync_event_task_notify_add_set_fetched_val_ptr,
                    ],
                    write_back: [2 -> 1],
                    hooks: $crate::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_sync_event_task_notify_add,
                        cb: doca_sync_event_task_notify_add_completion_cb_t,
                        set_conf: doca_sync_event_task_notify_add_set_conf (num_idle_not_permitted),
                        alloc_init: doca_sync_event_task_notify_add_alloc_init,
                        as_task: doca_sync_event_task_notify_add_as_doca_task,
                        setters: void,
                        caps: [
                            supported doca_sync_event_cap_task_notify_add_is_supported,
                        ],
                    },
                    c22: { doca_sync_event_job_update_add { value: inc_val, fetched: fetched_val_ptr } },
                },
                {
                    spec: WAIT_GT @ $crate::sync_event::tasks::WAIT_GT,
                    module: wait_gt,
                    name: "wait_gt",
                    job: $crate::sync_event::JOB_WAIT_GT,
                    job_types: [wait_gt = $crate::sync_event::JOB_WAIT_GT],
                    inputs: [
                        param wait_val: 0 (u64)
                            get doca_sync_event_task_wait_gt_get_wait_val
                            set doca_sync_event_task_wait_gt_set_wait_val,
                        param mask: 1 (u64)
                            get doca_sync_event_task_wait_gt_get_mask
                            set doca_sync_event_task_wait_gt_set_mask,
                    ],
                    write_back: [],
                    hooks: $crate::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_sync_event_task_wait_gt,
                        cb: doca_sync_event_task_wait_gt_completion_cb_t,
                        set_conf: doca_sync_event_task_wait_gt_set_conf (num_idle_not_permitted),
                        alloc_init: doca_sync_event_task_wait_gt_alloc_init,
                        as_task: doca_sync_event_task_wait_gt_as_doca_task,
                        setters: void,
                        caps: [
                            supported doca_sync_event_cap_task_wait_gt_is_supported,
                        ],
                    },
                    c22: { doca_sync_event_job_wait { value: wait_val, mask: mask } },
                },
                {
                    spec: WAIT_EQ @ $crate::sync_event::tasks::WAIT_EQ,
                    module: wait_eq,
                    name: "wait_eq",
                    job: $crate::sync_event::JOB_WAIT_EQ,
                    job_types: [wait_eq = $crate::sync_event::JOB_WAIT_EQ],
                    inputs: [
                        param wait_val: 0 (u64)
                            get doca_sync_event_task_wait_eq_get_wait_val
                            set doca_sync_event_task_wait_eq_set_wait_val,
                        param mask: 1 (u64)
                            get doca_sync_event_task_wait_eq_get_mask
                            set doca_sync_event_task_wait_eq_set_mask,
                    ],
                    write_back: [],
                    hooks: $crate::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_sync_event_task_wait_eq,
                        cb: doca_sync_event_task_wait_eq_completion_cb_t,
                        set_conf: doca_sync_event_task_wait_eq_set_conf (num_idle_not_permitted),
                        alloc_init: doca_sync_event_task_wait_eq_alloc_init,
                        as_task: doca_sync_event_task_wait_eq_as_doca_task,
                        setters: void,
                        caps: [
                            supported doca_sync_event_cap_task_wait_eq_is_supported,
                        ],
                    },
                    c22: {},
                },
                {
                    spec: WAIT_NEQ @ $crate::sync_event::tasks::WAIT_NEQ,
                    module: wait_neq,
                    name: "wait_neq",
                    job: $crate::sync_event::JOB_WAIT_NEQ,
                    job_types: [wait_neq = $crate::sync_event::JOB_WAIT_NEQ],
                    inputs: [
                        param wait_val: 0 (u64)
                            get doca_sync_event_task_wait_neq_get_wait_val
                            set doca_sync_event_task_wait_neq_set_wait_val,
                        param mask: 1 (u64)
                            get doca_sync_event_task_wait_neq_get_mask
                            set doca_sync_event_task_wait_neq_set_mask,
                    ],
                    write_back: [],
                    hooks: $crate::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_sync_event_task_wait_neq,
                        cb: doca_sync_event_task_wait_neq_completion_cb_t,
                        set_conf: doca_sync_event_task_wait_neq_set_conf (num_idle_not_permitted),
                        alloc_init: doca_sync_event_task_wait_neq_alloc_init,
                        as_task: doca_sync_event_task_wait_neq_as_doca_task,
                        setters: void,
                        caps: [
                            supported doca_sync_event_cap_task_wait_neq_is_supported,
                        ],
                    },
                    c22: {},
                },
            ],
        }
    };
}

/// The sync event's task types, from [`sync_event_task_table!`](crate::sync_event_task_table).
pub mod tasks {
    crate::sync_event_task_table!(crate::task_specs);
}

/// Largest value and threshold of an asynchronous wait job (the guide's limit).
pub const MAX_ASYNC_WAIT_VALUE: u64 = 254;

/// Where a publisher or subscriber runs.
#[derive(Clone, PartialEq, Eq)]
enum Location {
    Cpu(Dev),
    Dpu,
    /// A peer on the network (RDMA's remote net sync event tasks).
    RemoteNet,
}

const IDLE: u8 = 0;
const SYNC: u8 = 1;
const ASYNC: u8 = 2;

struct Config {
    publisher: Option<Location>,
    subscriber: Option<Location>,
}

/// Where the counter lives: a shared page of this process from the start (so that
/// exporting it is only a descriptor naming it), the exporter's page for an event created
/// from an export, or (when no shared page can be made) private memory.
enum Store {
    Private(Box<Block>),
    Page(Arc<Page>),
    Imported(Box<Import>),
}

struct Shared {
    cfg: Mutex<Config>,
    /// IDLE, SYNC or ASYNC.
    mode: AtomicU8,
    store: Store,
    /// Caller-supplied backing memory (`set_addr`), or null for the store's counter.
    external: AtomicPtr<u64>,
    /// Threads in any wait: `stop` makes them return, `destroy` waits until they have.
    waiters: AtomicU32,
    /// The context's shared state, for waking its work queues.
    ctx: OnceLock<Weak<crate::exec::CtxShared>>,
    /// The export to the DPU, while it lives.
    export: Mutex<Option<(Export, Arc<[u8]>)>>,
    /// The export to remote peers on the network, while it lives.
    net_export: Mutex<Option<(net::Listing, Arc<[u8]>)>>,
    /// Other processes' event handles, duplicated into this process: (pid, their fd, ours).
    bells: Mutex<Vec<(u32, i32, OwnedFd)>>,
    /// The event handle this process registered in the block (-1: none).
    my_bell: std::sync::atomic::AtomicI32,
}

impl Shared {
    fn block(&self) -> &Block {
        match &self.store {
            Store::Private(b) => b,
            Store::Page(p) => p.block(),
            Store::Imported(i) => i.page.block(),
        }
    }

    fn imported(&self) -> Option<&Import> {
        match &self.store {
            Store::Imported(i) => Some(i),
            _ => None,
        }
    }

    fn counter(&self) -> &AtomicU64 {
        let p = self.external.load(Ordering::Acquire);
        if p.is_null() {
            &self.block().value
        } else {
            // SAFETY: `set_addr`'s caller promised 8 aligned bytes that stay valid and are
            // only accessed atomically for the sync event's life.
            unsafe { AtomicU64::from_ptr(p) }
        }
    }

    /// For an event created from an export: `ConnectionAborted` once the exporter
    /// destroyed it; with `probe`, also `ConnectionReset` once the exporter has exited.
    fn remote_ok(&self, probe: bool) -> Result<()> {
        let Some(i) = self.imported() else {
            return Ok(());
        };
        if i.page.block().state.load(Ordering::Acquire) != LIVE {
            return Err(Error::with_context(
                ErrorCode::ConnectionAborted,
                "the exporter destroyed the sync event",
            ));
        }
        if probe && !i.peer.alive() {
            return Err(exporter_gone(i.peer.pid));
        }
        Ok(())
    }

    /// Wakes every thread asleep in a blocking wait on this event (in any process): they
    /// look at the event again.
    fn wake_sleepers(&self) {
        let b = self.block();
        b.seq.fetch_add(1, Ordering::SeqCst);
        xproc::futex_wake(&b.seq);
    }

    /// The value changed: wake blocking waiters (of every process), this process's work
    /// queues with waiting jobs, and the other processes' registered event handles.
    fn changed(&self) {
        let b = self.block();
        b.seq.fetch_add(1, Ordering::SeqCst);
        if b.sleepers.load(Ordering::SeqCst) > 0 {
            xproc::futex_wake(&b.seq);
        }
        if self.mode.load(Ordering::Acquire) == ASYNC
            && let Some(ctx) = self.ctx.get().and_then(Weak::upgrade)
        {
            ctx.wake_workqs();
        }
        if !matches!(self.store, Store::Private(_)) {
            self.ring_bells(b);
        }
    }

    /// Wakes the event handles other processes registered for this event.
    fn ring_bells(&self, b: &Block) {
        let me = xproc::me().0;
        let owner = b.owner.load(Ordering::Acquire);
        if owner != me {
            let fd = b.owner_bell.load(Ordering::Acquire);
            if fd >= 0 {
                self.ring(owner, fd);
            }
        }
        for s in &b.slots {
            let fd = s.bell.load(Ordering::Acquire);
            let pid = s.pid.load(Ordering::Acquire);
            if fd >= 0 && pid != 0 && pid != me {
                self.ring(pid, fd);
            }
        }
    }

    /// Makes process `pid`'s event handle `fd` readable. Only ever writes to an eventfd:
    /// the descriptor is duplicated (pidfd_getfd) and checked before the first use.
    fn ring(&self, pid: u32, fd: i32) {
        let mut bells = self.bells.lock().unwrap_or_else(|e| e.into_inner());
        let i = match bells.iter().position(|(p, f, _)| *p == pid && *f == fd) {
            Some(i) => i,
            None => {
                let Some(ours) = grab_eventfd(pid, fd) else {
                    return;
                };
                if bells.len() >= 64 {
                    bells.clear();
                }
                bells.push((pid, fd, ours));
                bells.len() - 1
            }
        };
        let one = 1u64.to_ne_bytes();
        // A full counter (EAGAIN) is readable already.
        let _ = rustix::io::write(&bells[i].2, &one);
    }

    /// Registers this process's event handle (of an event-driven work queue the context
    /// is attached to) so that updates from the other side wake it.
    fn register_bell(&self) {
        if matches!(self.store, Store::Private(_)) {
            return;
        }
        let Some(fd) = self
            .ctx
            .get()
            .and_then(Weak::upgrade)
            .and_then(|c| c.event_fd())
        else {
            return;
        };
        if self.my_bell.swap(fd, Ordering::AcqRel) == fd {
            return;
        }
        xproc::allow_peer_access();
        match &self.store {
            Store::Imported(i) => i.page.block().slots[i.slot]
                .bell
                .store(fd, Ordering::Release),
            Store::Page(p) => p.block().owner_bell.store(fd, Ordering::Release),
            Store::Private(_) => {}
        }
    }
}

/// Duplicates process `pid`'s descriptor `fd` into this process, if it is an eventfd.
fn grab_eventfd(pid: u32, fd: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if pidfd < 0 {
        return None;
    }
    // SAFETY: a new descriptor nothing else owns.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) };
    // SAFETY: pidfd_getfd takes a pidfd, a descriptor number of that process and flags,
    // and returns a new descriptor or -1.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if got < 0 {
        return None;
    }
    // SAFETY: a new descriptor nothing else owns.
    let got = unsafe { OwnedFd::from_raw_fd(got as RawFd) };
    let link = std::fs::read_link(format!("/proc/self/fd/{}", got.as_raw_fd())).ok()?;
    (link.as_os_str() == "anon_inode:[eventfd]").then_some(got)
}

/// A sync event (`struct doca_sync_event`): configure its publisher and subscriber
/// locations, then start it synchronously ([`start`](SyncEvent::start)) or as a
/// context ([`as_ctx`](SyncEvent::as_ctx)) for jobs; the mode is fixed until stopped.
/// Thread-safe: clones share the event.
#[derive(Clone)]
pub struct SyncEvent {
    shared: Arc<Shared>,
    ctx: Ctx,
}

impl fmt::Debug for SyncEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.shared.mode.load(Ordering::Acquire) {
            SYNC => "synchronous",
            ASYNC => "asynchronous",
            _ => "stopped",
        };
        f.debug_struct("SyncEvent")
            .field("mode", &mode)
            .field("value", &self.shared.counter().load(Ordering::Acquire))
            .finish()
    }
}

impl Default for SyncEvent {
    fn default() -> SyncEvent {
        SyncEvent::new()
    }
}

fn not_supported(what: &'static str) -> Error {
    Error::with_context(
        ErrorCode::NotSupported,
        format!("{what} locations are not supported: use the CPU or the DPU"),
    )
}

impl SyncEvent {
    /// `doca_sync_event_create`: value 0, no locations.
    pub fn new() -> SyncEvent {
        let store = match Page::create("sync event") {
            Ok(p) => Store::Page(Arc::new(p)),
            // SAFETY: a Block is integer atomics only: all zeroes is a valid value.
            Err(_) => Store::Private(Box::new(unsafe { std::mem::zeroed::<Block>() })),
        };
        SyncEvent::with_store(store)
    }

    fn with_store(store: Store) -> SyncEvent {
        let shared = Arc::new(Shared {
            cfg: Mutex::new(Config {
                publisher: None,
                subscriber: None,
            }),
            mode: AtomicU8::new(IDLE),
            store,
            external: AtomicPtr::new(std::ptr::null_mut()),
            waiters: AtomicU32::new(0),
            ctx: OnceLock::new(),
            export: Mutex::new(None),
            net_export: Mutex::new(None),
            bells: Mutex::new(Vec::new()),
            my_bell: std::sync::atomic::AtomicI32::new(-1),
        });
        let ctx = Ctx::new(SyncEventOps {
            shared: Arc::clone(&shared),
        });
        let _ = shared.ctx.set(Arc::downgrade(&ctx.shared));
        SyncEvent { shared, ctx }
    }

    fn configure(&self, publisher: bool, loc: Location) -> Result<()> {
        self.not_imported()?;
        if self.shared.mode.load(Ordering::Acquire) != IDLE || self.ctx.is_started() {
            return Err(Error::bad_state(
                "sync event is started; locations are set before start",
            ));
        }
        // The context (asynchronous mode) runs its jobs on the CPU location's device.
        // (Taken before the configuration lock: starting takes them the other way.)
        if let Location::Cpu(dev) = &loc
            && self.ctx.dev().is_none()
        {
            match self.ctx.dev_add_implied(dev) {
                Ok(()) => {}
                Err(e) if e.code() == ErrorCode::AlreadyExist => {}
                Err(e) => return Err(e),
            }
        }
        let mut cfg = self.shared.cfg.lock().unwrap_or_else(|e| e.into_inner());
        let slot = if publisher {
            &mut cfg.publisher
        } else {
            &mut cfg.subscriber
        };
        if slot.is_some() {
            return Err(Error::with_context(
                ErrorCode::AlreadyExist,
                if publisher {
                    "the sync event already has its (single) publisher location"
                } else {
                    "the sync event already has its (single) subscriber location"
                },
            ));
        }
        *slot = Some(loc);
        Ok(())
    }

    /// `doca_sync_event_publisher_add_location_cpu`.
    pub fn publisher_add_location_cpu(&self, dev: &Dev) -> Result<()> {
        self.configure(true, Location::Cpu(dev.clone()))
    }

    /// `doca_sync_event_publisher_add_location_dpu`.
    pub fn publisher_add_location_dpu(&self) -> Result<()> {
        self.configure(true, Location::Dpu)
    }

    /// `doca_sync_event_add_publisher_location_remote_net`: a peer on the network
    /// updates the event (RDMA's remote net sync event tasks).
    pub fn publisher_add_location_remote_net(&self) -> Result<()> {
        self.configure(true, Location::RemoteNet)
    }

    /// `doca_sync_event_add_subscriber_location_remote_net`: a peer on the network
    /// reads the event.
    pub fn subscriber_add_location_remote_net(&self) -> Result<()> {
        self.configure(false, Location::RemoteNet)
    }

    /// `doca_sync_event_export_to_remote_net`: a descriptor a peer on the network turns
    /// into its handle of this event ([`net::RemoteNetEvent::from_export`]), for RDMA's
    /// remote net sync event tasks. The event must have a remote net location. Called
    /// again, the same descriptor; destroying the event revokes it.
    pub fn export_to_remote_net(&self) -> Result<Arc<[u8]>> {
        self.not_imported()?;
        {
            let cfg = self.shared.cfg.lock().unwrap_or_else(|e| e.into_inner());
            let remote = |l: &Option<Location>| matches!(l, Some(Location::RemoteNet));
            if !remote(&cfg.publisher) && !remote(&cfg.subscriber) {
                return Err(Error::with_context(
                    ErrorCode::NotPermitted,
                    "the sync event has no remote net location: add one (doca_sync_event_add_publisher_location_remote_net) before exporting it to remote peers",
                ));
            }
        }
        let mut ex = self
            .shared
            .net_export
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((_, d)) = ex.as_ref() {
            return Ok(Arc::clone(d));
        }
        let (listing, desc) = net::Listing::publish(Arc::downgrade(&self.shared))?;
        let d: Arc<[u8]> = Arc::from(desc);
        *ex = Some((listing, Arc::clone(&d)));
        Ok(d)
    }

    /// `doca_sync_event_publisher_add_location_dpa`: `NotSupported`.
    pub fn publisher_add_location_dpa(&self) -> Result<()> {
        Err(not_supported("DPA"))
    }

    /// `doca_sync_event_publisher_add_location_gpu`: `NotSupported`.
    pub fn publisher_add_location_gpu(&self) -> Result<()> {
        Err(not_supported("GPU"))
    }

    /// `doca_sync_event_subscriber_add_location_cpu`.
    pub fn subscriber_add_location_cpu(&self, dev: &Dev) -> Result<()> {
        self.configure(false, Location::Cpu(dev.clone()))
    }

    /// `doca_sync_event_subscriber_add_location_dpu`.
    pub fn subscriber_add_location_dpu(&self) -> Result<()> {
        self.configure(false, Location::Dpu)
    }

    /// `doca_sync_event_subscriber_add_location_dpa`: `NotSupported`.
    pub fn subscriber_add_location_dpa(&self) -> Result<()> {
        Err(not_supported("DPA"))
    }

    /// `doca_sync_event_subscriber_add_location_gpu`: `NotSupported`.
    pub fn subscriber_add_location_gpu(&self) -> Result<()> {
        Err(not_supported("GPU"))
    }

    /// `doca_sync_event_set_addr`: the counter lives in caller memory from now on (its
    /// current content is the value). Only before start.
    ///
    /// # Safety
    /// `addr` must point to 8 bytes, aligned to 8, that stay valid until the sync event
    /// is dropped and are accessed only atomically meanwhile (by this or other sync
    /// events, or other processes sharing the memory).
    pub unsafe fn set_addr(&self, addr: *mut u64) -> Result<()> {
        self.not_imported()?;
        if self.shared.mode.load(Ordering::Acquire) != IDLE || self.ctx.is_started() {
            return Err(Error::bad_state(
                "sync event is started; set its memory before start",
            ));
        }
        let Some(p) = NonNull::new(addr) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the sync event's memory address is NULL",
            ));
        };
        if !(p.as_ptr() as usize).is_multiple_of(8) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the sync event's memory must be aligned to 8 bytes",
            ));
        }
        self.shared.external.store(p.as_ptr(), Ordering::Release);
        Ok(())
    }

    /// `NotPermitted` for a handle created from an export (it cannot be configured).
    fn not_imported(&self) -> Result<()> {
        if self.shared.imported().is_some() {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "a sync event created from an export cannot be configured; start it as it is",
            ));
        }
        Ok(())
    }

    fn check_configured(&self) -> Result<()> {
        if self.shared.imported().is_some() {
            return self.shared.remote_ok(true);
        }
        let cfg = self.shared.cfg.lock().unwrap_or_else(|e| e.into_inner());
        if cfg.publisher.is_none() || cfg.subscriber.is_none() {
            return Err(Error::bad_state(
                "a sync event needs a publisher and a subscriber location before start",
            ));
        }
        Ok(())
    }

    /// `doca_sync_event_start`: synchronous mode.
    pub fn start(&self) -> Result<()> {
        self.check_configured()?;
        if self.ctx.is_started() {
            return Err(Error::bad_state(
                "sync event is started as a context (asynchronous mode)",
            ));
        }
        self.shared
            .mode
            .compare_exchange(IDLE, SYNC, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(|_| Error::bad_state("sync event is already started"))
    }

    /// `doca_sync_event_stop` (synchronous mode; a context is stopped with `Ctx::stop`).
    pub fn stop(&self) -> Result<()> {
        match self
            .shared
            .mode
            .compare_exchange(SYNC, IDLE, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                // Waiters see the stop at their next look; sleeping ones are woken now.
                self.shared.wake_sleepers();
                Ok(())
            }
            Err(ASYNC) => Err(Error::bad_state(
                "sync event runs as a context: stop it with its context",
            )),
            Err(_) => Err(Error::bad_state("sync event is not started")),
        }
    }

    /// `doca_sync_event_as_ctx`: start this context for asynchronous mode.
    pub fn as_ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// `doca_sync_event_destroy`: refused with `InUse` (the event comes back) while
    /// started. Threads still inside a wait (it was stopped under them) return
    /// `BadState` within a millisecond; destroy returns once they have, so that none of
    /// them is left reading a destroyed event.
    pub fn destroy(self) -> std::result::Result<(), (SyncEvent, Error)> {
        if self.shared.mode.load(Ordering::Acquire) != IDLE || self.ctx.is_started() {
            return Err((
                self,
                Error::with_context(ErrorCode::InUse, "sync event is started; stop it first"),
            ));
        }
        while self.shared.waiters.load(Ordering::SeqCst) > 0 {
            self.shared.wake_sleepers();
            std::thread::yield_now();
        }
        // The export ends: the importers' later operations fail.
        *self.shared.export.lock().unwrap_or_else(|e| e.into_inner()) = None;
        *self
            .shared
            .net_export
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }

    fn sync_mode(&self) -> Result<&AtomicU64> {
        match self.shared.mode.load(Ordering::Acquire) {
            SYNC => {
                self.shared.remote_ok(false)?;
                Ok(self.shared.counter())
            }
            ASYNC => Err(Error::bad_state(
                "sync event runs in asynchronous mode: submit jobs on a work queue",
            )),
            _ => Err(Error::bad_state("sync event is not started")),
        }
    }

    /// `doca_sync_event_get`.
    pub fn get(&self) -> Result<u64> {
        Ok(self.sync_mode()?.load(Ordering::Acquire))
    }

    /// `doca_sync_event_update_set`.
    pub fn update_set(&self, value: u64) -> Result<()> {
        self.sync_mode()?.store(value, Ordering::Release);
        self.shared.changed();
        Ok(())
    }

    /// `doca_sync_event_update_add`: adds atomically; the previous value comes back.
    pub fn update_add(&self, value: u64) -> Result<u64> {
        let prev = self.sync_mode()?.fetch_add(value, Ordering::AcqRel);
        self.shared.changed();
        Ok(prev)
    }
}

mod export;
mod jobs;
pub mod net;
mod wait;
pub use jobs::SyncEventJob;
use jobs::SyncEventOps;
