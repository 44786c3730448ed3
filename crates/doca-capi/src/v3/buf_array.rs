//! `doca_buf_array.h` of the task generation: an array of equal buffers over one mmap,
//! meant for a GPU's or DPA's data path. Its number of elements is given at creation and
//! its mmap with its parameters; there is no GPU or DPA here to target, so setting one
//! (and asking for its handle) answers `NOT_SUPPORTED`.

use crate::common::handles::{Handle, kind};
use crate::common::{doca_error_t, ffi, handle, handle_mut, new_handle, out_ptr};
use crate::v22::mem::{doca_dpa, doca_gpu, doca_gpu_buf_arr, doca_mmap};
use doca_core::{BufArray, ErrorCode};

/// `struct doca_buf_arr` of this generation.
#[derive(Debug)]
pub struct doca_buf_arr3 {
    num_elem: u32,
    arr: Option<BufArray>,
}

impl Handle for doca_buf_arr3 {
    type Kind = kind::Boxed;
}

/// `doca_dpa_dev_buf_arr_t`: a buffer array's handle on a DPA.
pub type doca_dpa_dev_buf_arr_t = u64;

fn no_gpu_or_dpa(what: &str) -> doca_core::Error {
    crate::common::err(
        ErrorCode::NotSupported,
        format!("there is no {what} here: a buffer array serves only this process"),
    )
}

/// `doca_buf_arr_create`: an array of `num_elem` buffers (parameters next).
#[unsafe(export_name = "doca3__buf_arr_create")]
pub unsafe extern "C" fn doca_buf_arr_create(
    num_elem: usize,
    buf_arr: *mut *mut doca_buf_arr3,
) -> doca_error_t {
    ffi(|| {
        let n = u32::try_from(num_elem)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                crate::common::invalid(format!(
                    "a buffer array holds 1 to {} elements, not {num_elem}",
                    u32::MAX
                ))
            })?;
        new_handle(buf_arr, "buf_arr", || {
            Ok(doca_buf_arr3 {
                num_elem: n,
                arr: None,
            })
        })
    })
}

/// `doca_buf_arr_set_params`: the mmap, each element's size and the offset of the first
/// in the mmap (before start).
#[unsafe(export_name = "doca3__buf_arr_set_params")]
pub unsafe extern "C" fn doca_buf_arr_set_params(
    buf_arr: *mut doca_buf_arr3,
    mmap: *mut doca_mmap,
    elem_size: usize,
    start_offset: u64,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (a, m) = unsafe { (handle_mut(buf_arr, "buf_arr")?, handle(mmap, "mmap")?) };
        let off = u32::try_from(start_offset).map_err(|_| {
            crate::common::invalid(format!("start offset {start_offset} is beyond 4 GiB"))
        })?;
        if a.arr.as_ref().is_some_and(BufArray::is_started) {
            return Err(crate::common::err(
                ErrorCode::BadState,
                "the buffer array is started",
            ));
        }
        let mut arr = BufArray::create(m)?;
        arr.set_params(elem_size, a.num_elem, off)?;
        a.arr = Some(arr);
        Ok(())
    })
}

/// `doca_buf_arr_set_target_gpu`: `NOT_SUPPORTED`, no GPU here.
#[unsafe(export_name = "doca3__buf_arr_set_target_gpu")]
pub unsafe extern "C" fn doca_buf_arr_set_target_gpu(
    buf_arr: *mut doca_buf_arr3,
    gpu_handler: *mut doca_gpu,
) -> doca_error_t {
    let _ = gpu_handler;
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle(buf_arr, "buf_arr") }?;
        Err(no_gpu_or_dpa("GPU"))
    })
}

/// `doca_buf_arr_set_target_dpa`: `NOT_SUPPORTED`, no DPA here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_arr_set_target_dpa(
    buf_arr: *mut doca_buf_arr3,
    dpa_handler: *mut doca_dpa,
) -> doca_error_t {
    let _ = dpa_handler;
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle(buf_arr, "buf_arr") }?;
        Err(no_gpu_or_dpa("DPA"))
    })
}

/// `doca_buf_arr_start`: the elements must fit in the (started) mmap.
#[unsafe(export_name = "doca3__buf_arr_start")]
pub unsafe extern "C" fn doca_buf_arr_start(buf_arr: *mut doca_buf_arr3) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let a = unsafe { handle_mut(buf_arr, "buf_arr") }?;
        a.arr
            .as_mut()
            .ok_or_else(|| {
                crate::common::err(
                    ErrorCode::BadState,
                    "doca_buf_arr_set_params must be called before start",
                )
            })?
            .start()
    })
}

/// `doca_buf_arr_stop`.
#[unsafe(export_name = "doca3__buf_arr_stop")]
pub unsafe extern "C" fn doca_buf_arr_stop(buf_arr: *mut doca_buf_arr3) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let a = unsafe { handle_mut(buf_arr, "buf_arr") }?;
        a.arr
            .as_mut()
            .ok_or_else(|| {
                crate::common::err(ErrorCode::BadState, "the buffer array is not started")
            })?
            .stop()
    })
}

/// `doca_buf_arr_destroy`: implicitly stops.
#[unsafe(export_name = "doca3__buf_arr_destroy")]
pub unsafe extern "C" fn doca_buf_arr_destroy(buf_arr: *mut doca_buf_arr3) -> doca_error_t {
    // SAFETY: a live boxed handle, destroyed once.
    ffi(|| unsafe { crate::common::handles::free_handle(buf_arr, "buf_arr") })
}

/// `doca_buf_arr_get_gpu_handle`: `NOT_SUPPORTED`, no GPU here.
#[unsafe(export_name = "doca3__buf_arr_get_gpu_handle")]
pub unsafe extern "C" fn doca_buf_arr_get_gpu_handle(
    buf_arr: *const doca_buf_arr3,
    gpu_buf_arr: *mut *mut doca_gpu_buf_arr,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle(buf_arr, "buf_arr") }?;
        out_ptr(gpu_buf_arr, "gpu_buf_arr")?;
        Err(no_gpu_or_dpa("GPU"))
    })
}

/// `doca_buf_arr_get_dpa_handle`: `NOT_SUPPORTED`, no DPA here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_arr_get_dpa_handle(
    buf_arr: *const doca_buf_arr3,
    dpa_buf_arr: *mut doca_dpa_dev_buf_arr_t,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle(buf_arr, "buf_arr") }?;
        out_ptr(dpa_buf_arr, "dpa_buf_arr")?;
        Err(no_gpu_or_dpa("DPA"))
    })
}
