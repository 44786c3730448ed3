//! `doca_rdma_bridge.h`: no RDMA device (ibverbs) stands behind the software devices, so
//! every call answers `NOT_SUPPORTED`, saying why.

use crate::common::{doca_error_t, err, ffi, handle, out_ptr};
use crate::v22::dev::doca_dev;
use crate::v22::mem::doca_buf;
use doca_core::ErrorCode;

/// `struct ibv_pd` (rdma-core's protection domain; opaque here).
#[derive(Debug)]
pub enum ibv_pd {}

fn no_rdma(what: &str) -> doca_core::Error {
    err(
        ErrorCode::NotSupported,
        format!(
            "{what}: the software devices have no RDMA (ibverbs) device behind them; \
             memory moves between host and DPU processes through mmap export instead"
        ),
    )
}

/// `doca_rdma_bridge_get_dev_pd`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_bridge_get_dev_pd(
    dev: *const doca_dev,
    pd: *mut *mut ibv_pd,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle(dev, "dev") }?;
        out_ptr(pd, "pd")?;
        Err(no_rdma("no protection domain"))
    })
}

/// `doca_rdma_bridge_open_dev_from_pd`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_bridge_open_dev_from_pd(
    pd: *mut ibv_pd,
    dev: *mut *mut doca_dev,
) -> doca_error_t {
    ffi(|| {
        if pd.is_null() {
            return Err(crate::common::invalid("pd is NULL"));
        }
        out_ptr(dev, "dev")?;
        Err(no_rdma("no device opens from a protection domain"))
    })
}

/// `doca_rdma_bridge_get_buf_mkey`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_bridge_get_buf_mkey(
    buf: *const doca_buf,
    dev: *mut doca_dev,
    mkey: *mut u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        unsafe { (handle(buf, "buf")?, handle(dev, "dev")?) };
        out_ptr(mkey, "mkey")?;
        Err(no_rdma("no memory key"))
    })
}
