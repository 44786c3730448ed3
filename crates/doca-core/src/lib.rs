//! DOCA Core, in software.
//!
//! The objects of NVIDIA DOCA Core (API generation 2.2) for machines without a BlueField:
//! [`Error`] codes, software [`device`]s described by a topology, and the [`memory`]
//! subsystem (mmaps, buffers, inventories, pools), the [`exec`]ution model (contexts,
//! work queues, jobs), [`sync_event`]s and [`graph`]s.
//!
//! ```
//! use doca_core::{devinfo_list, AccessFlags, BufInventory, Mmap};
//!
//! let dev = devinfo_list()?[0].open()?;
//! let mut mmap = Mmap::new();
//! mmap.set_memory(vec![0u8; 4096])?;
//! mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE)?;
//! mmap.dev_add(&dev)?;
//! mmap.start()?;
//!
//! let mut inv = BufInventory::new(8)?;
//! inv.start()?;
//! let mut buf = inv.buf_at(&mmap, 0, 1024)?;
//! buf.append(b"hello")?;
//! assert_eq!(buf.data_len(), 5);
//! assert_eq!(buf.data_to_vec(), b"hello");
//! # Ok::<(), doca_core::Error>(())
//! ```

#[cfg(feature = "tokio")]
pub mod aio;
mod bias;
pub mod clock;
pub mod device;
pub mod error;
pub mod exec;
pub mod graph;
pub mod memory;
pub mod sync_event;
pub mod types;
mod xproc;

pub use device::{
    Capability, Dev, DevInfo, DevInfoRep, DevRep, PciAddr, RepFilter, Role, Topology, devinfo_list,
};
pub use error::{Error, ErrorCode, Result};
pub use exec::{Completion, Ctx, CtxOps, Event, JobRecord, RetrieveError, WorkQ};
pub use graph::{Graph, GraphInstance, GraphNode, NodeState};
pub use memory::{
    Buf, BufArray, BufDesc, BufInventory, BufPool, BufPoolSpec, MemoryRegion, Mmap, RemoteMemory,
    SharedMemory,
};
pub use sync_event::{SyncEvent, SyncEventJob};
pub use types::{AccessFlags, Data, PciFuncType};

/// Locks `m`, also after a thread panicked while holding it: every critical section in
/// these libraries leaves its data consistent before anything that can panic, so a
/// poisoned lock's data is still good, and a panic in one handle's user never makes
/// the others fail.
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Fills `b` with random bytes from the system (`getrandom`), for `what` (named in the
/// error when the system has none to give).
pub fn random_fill(b: &mut [u8], what: &'static str) -> Result<()> {
    let mut got = 0usize;
    while got < b.len() {
        // SAFETY: the pointer and length stay inside `b`.
        let n = unsafe {
            libc::getrandom(
                b.as_mut_ptr().add(got) as *mut libc::c_void,
                b.len() - got,
                0,
            )
        };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(Error::with_context(
                ErrorCode::Unknown,
                format!("no random bits from the system for {what}"),
            ));
        }
        got += n as usize;
    }
    Ok(())
}

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The book's examples (docs/), compiled and run as doctests, one chapter each.
#[cfg(doctest)]
pub mod book_doctests {
    #[doc = include_str!("../../../docs/rust-sdk.md")]
    pub struct RustSdk;
    #[doc = include_str!("../../../docs/sync-events-and-graphs.md")]
    pub struct SyncEventsAndGraphs;
    #[doc = include_str!("../../../docs/erasure-coding.md")]
    pub struct ErasureCoding;
    #[doc = include_str!("../../../docs/async.md")]
    pub struct Async;
    #[doc = include_str!("../../../docs/c-faces.md")]
    pub struct CFaces;
    #[doc = include_str!("../../../docs/libisal.md")]
    pub struct Libisal;
    #[doc = include_str!("../../../docs/machine.md")]
    pub struct Machine;
    #[doc = include_str!("../../../docs/rdma.md")]
    pub struct Rdma;
    #[doc = include_str!("../../../docs/compress-aes-gcm.md")]
    pub struct CompressAesGcm;
    #[doc = include_str!("../../../docs/storage-application.md")]
    pub struct StorageApplication;
    #[doc = include_str!("../../../docs/safety.md")]
    pub struct Safety;
    #[doc = include_str!("../../../docs/layout.md")]
    pub struct Layout;
}
