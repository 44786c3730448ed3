//! The DOCA 2.2 C interface over the software DOCA.
//!
//! Every `extern "C"` function here is a thin translation: it checks its arguments
//! (NULL pointers are `DOCA_ERROR_INVALID_VALUE`, integers are converted before they
//! become Rust enums), calls the Rust object, and writes its outputs only on success.
//! No panic crosses the boundary: one turns into `DOCA_ERROR_UNEXPECTED`.
//!
//! The headers are in `include/`; `scripts/install-capi.sh` builds the `libdoca_*`
//! libraries and pkg-config files from this crate's static library.
//!
//! A C program calls these functions by their DOCA names; the same calls from Rust
//! (memory of the program's own, as a C program passes it):
//!
//! ```
//! use doca_capi::{dev, mem};
//! use std::ptr::null_mut;
//!
//! let mut memory = vec![0u8; 4096];
//! let (mut list, mut n) = (null_mut(), 0u32);
//! let (mut d, mut mmap, mut inv, mut buf) = (null_mut(), null_mut(), null_mut(), null_mut());
//! // SAFETY: DOCA's calls in DOCA's order, with live out-pointers; `memory` outlives
//! // the mmap.
//! unsafe {
//!     assert_eq!(dev::doca_devinfo_list_create(&mut list, &mut n), 0);
//!     assert!(n > 0);
//!     assert_eq!(dev::doca_dev_open(*list, &mut d), 0);
//!     assert_eq!(dev::doca_devinfo_list_destroy(list), 0);
//!     assert_eq!(mem::doca_mmap_create(std::ptr::null(), &mut mmap), 0);
//!     let base = memory.as_mut_ptr().cast();
//!     assert_eq!(mem::doca_mmap_set_memrange(mmap, base, memory.len()), 0);
//!     assert_eq!(mem::doca_mmap_dev_add(mmap, d), 0);
//!     assert_eq!(mem::doca_mmap_start(mmap), 0);
//!     assert_eq!(mem::doca_buf_inventory_create(std::ptr::null(), 4, 0, &mut inv), 0);
//!     assert_eq!(mem::doca_buf_inventory_start(inv), 0);
//!     assert_eq!(mem::doca_buf_inventory_buf_by_args(inv, mmap, base, 4096, base, 100, &mut buf), 0);
//!     let mut len = 0usize;
//!     assert_eq!(mem::doca_buf_get_data_len(buf, &mut len), 0);
//!     assert_eq!(len, 100);
//!     // A wrong call gets DOCA's error code: the mmap is in use by the buffer.
//!     assert_ne!(mem::doca_mmap_destroy(mmap), 0);
//!     assert_eq!(mem::doca_buf_refcount_rm(buf, null_mut()), 0);
//!     assert_eq!(mem::doca_buf_inventory_stop(inv), 0);
//!     assert_eq!(mem::doca_buf_inventory_destroy(inv), 0);
//!     assert_eq!(mem::doca_mmap_stop(mmap), 0);
//!     assert_eq!(mem::doca_mmap_destroy(mmap), 0);
//!     assert_eq!(dev::doca_dev_close(d), 0);
//! }
//! ```

#![allow(non_camel_case_types)]
// The contracts of the C functions are the headers' documentation.
#![allow(clippy::missing_safety_doc)]

pub mod common;
#[cfg(test)]
mod task_type_example;
pub mod v1;
pub mod v15;
pub mod v22;
pub mod v3;

// The paths Rust programs and tests name: the 2.2 face's objects, which the other faces
// share, and the base's parts.
pub use common::{
    DOCA_SUCCESS, argp, doca_argp_type, doca_data, doca_dma_job_types, doca_ec_job_types,
    doca_ec_matrix_types, doca_error_t, doca_get_error_name, doca_get_error_string,
    doca_graph_instance_node_state, doca_pci_func_type, doca_sha_job_type,
    doca_sync_event_job_types, doca_version_runtime, handles, log, tasks,
};
pub use v22::{
    comm_channel, compress, dev, dma, ec, exec, graph, libs, mem, rdma, rdma_bridge, sha,
    sync_event, workq,
};
