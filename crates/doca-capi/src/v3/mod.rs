//! The C interface of DOCA's task generation (DOCA 2.5 and later, 3.x): the progress
//! engine and tasks, and the Core objects under their newer names.
//!
//! Both generations are built from this crate. A name both generations use with
//! different meanings (`doca_dma_create`, `doca_ctx_start`, `doca_mmap_create`, ...) is
//! defined here under the link name `doca3__<rest>`; `scripts/install-capi.sh` gives
//! each generation's library its own set of names, so a program sees only the
//! functions of the headers it was compiled with. Names only this generation has are
//! exported as they are.

mod advise;
mod aes_gcm;
mod argp;
mod buf_array;
mod buf_pool;
mod cc26;
mod clock;
mod comch;
mod comch_fast;
mod compat26;
mod compress;
mod core;
mod dma;
mod ec;
mod graph;
mod lib;
mod log;
mod pe;
pub(crate) mod rdma;
mod sha;
mod sync_event;
mod task_batch;

pub use self::core::*;
pub use advise::*;
pub use aes_gcm::*;
pub use clock::*;
pub use comch::*;
pub use comch_fast::*;
pub use compress::*;
pub use dma::*;
pub use ec::*;
pub use graph::*;
pub use lib::Lib3;
pub use log::*;
pub use pe::*;
pub use rdma::*;
pub use sha::*;
pub use sync_event::*;

use crate::common::{Result, ffi_value, handle, invalid};
use crate::v22::mem::doca_buf;
use std::ffi::c_char;

/// The C functions the libraries' task tables made for this generation (their names,
/// return and parameter types as Rust spells them), for the header checks.
pub fn generated_functions() -> impl Iterator<Item = crate::common::tasks::GenFn> {
    [
        dma::C3_FUNCTIONS,
        sha::C3_FUNCTIONS,
        ec::C3_FUNCTIONS,
        sync_event::C3_FUNCTIONS,
        advise::C3_FUNCTIONS,
        rdma::C3_FUNCTIONS,
        compress::C3_FUNCTIONS,
        aes_gcm::C3_FUNCTIONS,
    ]
    .into_iter()
    .flatten()
    .copied()
}

/// Most tasks one context's pool of one type may hold.
pub const MAX_TASKS: u32 = 1 << 16;

pub(crate) fn check_num_tasks(n: u32) -> Result<()> {
    if n == 0 || n > MAX_TASKS {
        return Err(invalid(format!(
            "number of tasks {n} is not in 1..={MAX_TASKS}"
        )));
    }
    Ok(())
}

/// A typed task's buffer setter.
fn set_buf(task: *mut doca_task, i: usize, b: *const doca_buf) {
    ffi_value((), || {
        // SAFETY: NULL or a task the program holds.
        unsafe { handle(task, "task") }?.bufs[i].set(b);
        Ok(())
    })
}

/// A typed task's buffer getter.
fn get_buf(task: *const doca_task, i: usize) -> *const doca_buf {
    ffi_value(std::ptr::null(), || {
        // SAFETY: NULL or a task the program holds.
        Ok(unsafe { handle(task, "task") }?.bufs[i].get())
    })
}

/// `doca_error_get_name`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_error_get_name(error: crate::common::doca_error_t) -> *const c_char {
    crate::common::doca_get_error_name(error)
}

/// `doca_error_get_descr`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_error_get_descr(error: crate::common::doca_error_t) -> *const c_char {
    crate::common::doca_get_error_string(error)
}

/// The version of this generation's library.
pub const VERSION: &std::ffi::CStr = c"3.3.0";

/// `doca_version_runtime`.
#[unsafe(export_name = "doca3__version_runtime")]
pub extern "C" fn doca_version_runtime() -> *const c_char {
    VERSION.as_ptr()
}
