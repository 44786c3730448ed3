//! `doca_buf_pool.h` of the task generation: a pool of equal elements carved from one
//! mmap, configured before start (element alignment, user data) and laid out at start.

use crate::common::handles::{Handle, kind};
use crate::common::{
    Result, doca_data, doca_error_t, ffi, handle, handle_mut, new_handle, out_ptr, put,
};
use crate::v22::mem::{doca_buf, doca_mmap};
use doca_core::{BufPool, BufPoolSpec, ErrorCode};

/// `struct doca_buf_pool`: its configuration, and the pool once started.
#[derive(Debug)]
pub struct doca_buf_pool {
    spec: BufPoolSpec,
    pool: Option<BufPool>,
    started: bool,
}

impl Handle for doca_buf_pool {
    type Kind = kind::Boxed;
}

impl doca_buf_pool {
    fn configurable(&mut self, what: &str) -> Result<&mut BufPoolSpec> {
        if self.started {
            return Err(crate::common::err(
                ErrorCode::BadState,
                format!("the buffer pool is started; set its {what} before start (or after stop)"),
            ));
        }
        // A new layout is made at the next start.
        if self
            .pool
            .as_ref()
            .is_some_and(|p| p.num_free_elements() == p.num_elements())
        {
            self.pool = None;
        } else if self.pool.is_some() {
            return Err(crate::common::err(
                ErrorCode::InUse,
                format!(
                    "buffers of the pool are still out; their layout, and the {what}, cannot change"
                ),
            ));
        }
        Ok(&mut self.spec)
    }
}

/// `doca_buf_pool_create`: `num_elements` elements of `element_size` bytes from `mmap`
/// (which must be started before the pool is).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_pool_create(
    num_elements: usize,
    element_size: usize,
    mmap: *const doca_mmap,
    buf_pool: *mut *mut doca_buf_pool,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let m = unsafe { handle(mmap, "mmap") }?;
        new_handle(buf_pool, "buf_pool", || {
            Ok(doca_buf_pool {
                spec: BufPoolSpec::new(num_elements, element_size, m)?,
                pool: None,
                started: false,
            })
        })
    })
}

/// `doca_buf_pool_destroy`: `IN_USE` while buffers are out; implicitly stops.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_pool_destroy(buf_pool: *mut doca_buf_pool) -> doca_error_t {
    // SAFETY: a live handle.
    ffi(|| unsafe {
        crate::common::handles::destroy_in_place(buf_pool, "buf_pool", |mut p| {
            match p.pool.take() {
                None => Ok(()),
                Some(pool) => match pool.destroy() {
                    Ok(()) => Ok(()),
                    Err((pool, e)) => {
                        p.pool = Some(pool);
                        Err((p, e))
                    }
                },
            }
        })
    })
}

/// `doca_buf_pool_start`: lays the elements out (the mmap must be started).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_pool_start(buf_pool: *mut doca_buf_pool) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let p = unsafe { handle_mut(buf_pool, "buf_pool") }?;
        if p.started {
            return Err(crate::common::err(
                ErrorCode::BadState,
                "the buffer pool is already started",
            ));
        }
        if p.pool.is_none() {
            p.pool = Some(p.spec.build()?);
        }
        p.pool.as_mut().map_or(Ok(()), BufPool::start)?;
        p.started = true;
        Ok(())
    })
}

/// `doca_buf_pool_stop`: no more allocations; the pool's properties may be set again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_pool_stop(buf_pool: *mut doca_buf_pool) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let p = unsafe { handle_mut(buf_pool, "buf_pool") }?;
        if !p.started {
            return Err(crate::common::err(
                ErrorCode::BadState,
                "the buffer pool is not started",
            ));
        }
        p.pool.as_mut().map_or(Ok(()), BufPool::stop)?;
        p.started = false;
        Ok(())
    })
}

/// `doca_buf_pool_buf_alloc`: a free element, its data section empty at its head
/// (`NO_MEMORY` when every element is out).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_pool_buf_alloc(
    buf_pool: *mut doca_buf_pool,
    buf: *mut *mut doca_buf,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let p = unsafe { handle(buf_pool, "buf_pool") }?;
        let out = out_ptr(buf, "buf")?;
        let pool = p.pool.as_ref().filter(|_| p.started).ok_or_else(|| {
            crate::common::err(ErrorCode::BadState, "the buffer pool is not started")
        })?;
        let b = pool.buf_alloc()?;
        // SAFETY: output checked; the reference moves to the program.
        unsafe { put(out, b.into_raw().as_ptr()) };
        Ok(())
    })
}

/// `doca_buf_pool_set_element_alignment`: a power of two, while not started.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_pool_set_element_alignment(
    buf_pool: *mut doca_buf_pool,
    element_alignment: usize,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let p = unsafe { handle_mut(buf_pool, "buf_pool") }?;
        p.configurable("element alignment")?
            .set_alignment(element_alignment)
    })
}

/// `doca_buf_pool_get_element_alignment` (1 unless set).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_pool_get_element_alignment(
    buf_pool: *const doca_buf_pool,
    element_alignment: *mut usize,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let p = unsafe { handle(buf_pool, "buf_pool") }?;
        let out = out_ptr(element_alignment, "element_alignment")?;
        // SAFETY: output checked.
        unsafe { put(out, p.spec.alignment()) };
        Ok(())
    })
}

/// `doca_buf_pool_set_user_data`, while not started.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_pool_set_user_data(
    buf_pool: *mut doca_buf_pool,
    user_data: doca_data,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let p = unsafe { handle_mut(buf_pool, "buf_pool") }?;
        p.configurable("user data")?
            .set_user_data(doca_core::Data(user_data.u64()));
        Ok(())
    })
}

/// `doca_buf_pool_get_user_data` (0 unless set).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_pool_get_user_data(
    buf_pool: *const doca_buf_pool,
    user_data: *mut doca_data,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let p = unsafe { handle(buf_pool, "buf_pool") }?;
        let out = out_ptr(user_data, "user_data")?;
        // SAFETY: output checked.
        unsafe { put(out, doca_data::from_u64(p.spec.user_data().0)) };
        Ok(())
    })
}

/// `doca_buf_pool_get_num_elements`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_pool_get_num_elements(
    buf_pool: *const doca_buf_pool,
    num_of_elements: *mut u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let p = unsafe { handle(buf_pool, "buf_pool") }?;
        let out = out_ptr(num_of_elements, "num_of_elements")?;
        // SAFETY: output checked.
        unsafe { put(out, p.spec.num_elements() as u32) };
        Ok(())
    })
}

/// `doca_buf_pool_get_num_free_elements`: every element until the pool is laid out.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_pool_get_num_free_elements(
    buf_pool: *const doca_buf_pool,
    num_of_free_elements: *mut u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let p = unsafe { handle(buf_pool, "buf_pool") }?;
        let out = out_ptr(num_of_free_elements, "num_of_free_elements")?;
        let n = p
            .pool
            .as_ref()
            .map_or(p.spec.num_elements() as u32, BufPool::num_free_elements);
        // SAFETY: output checked.
        unsafe { put(out, n) };
        Ok(())
    })
}
