//! The DOCA memory subsystem: [`Mmap`], [`Buf`] and lists, [`BufInventory`],
//! [`BufPool`], [`BufArray`].

pub mod advise;
mod buf;
mod buf_array;
pub(crate) mod export;
mod io;
mod mmap;
pub mod net;
mod pool;

/// DOCA 1.x's JSON form of export descriptors.
pub use crate::xproc::blob::{
    desc_from_json as export_desc_from_json, desc_to_json as export_desc_to_json,
};
pub use buf::{Buf, BufDesc, ListIter, MAX_REFCOUNT};
pub use buf_array::BufArray;
pub use export::RemoteMemory;
pub use io::{MAX_JOB_MMAPS, with_io_locked};
pub(crate) use mmap::pci_code;
pub use mmap::{DEFAULT_MAX_NUM_DEVICES, MemoryRegion, Mmap, SharedMemory};
pub use pool::{BufInventory, BufPool, BufPoolSpec, MAX_ELEMENTS};
