//! `doca_buf_arr`: a fixed-size buffer layout over one mmap, configured on the CPU for a
//! GPU (or other) target. No GPU is reachable here, so targeting one answers
//! `NotSupported`; the CPU-side configuration and its checks are complete.

use super::mmap::{Mmap, MmapShared};
use crate::error::{Error, ErrorCode, Result};
use std::fmt;
use std::sync::Arc;

/// A buffer array (`struct doca_buf_arr`).
pub struct BufArray {
    mmap: Arc<MmapShared>,
    params: Option<(usize, u32, u32)>,
    started: bool,
}

impl fmt::Debug for BufArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufArray")
            .field("params", &self.params)
            .field("started", &self.started)
            .finish()
    }
}

impl BufArray {
    /// `doca_buf_arr_create`.
    pub fn create(mmap: &Mmap) -> Result<BufArray> {
        Ok(BufArray {
            mmap: Arc::clone(&mmap.shared),
            params: None,
            started: false,
        })
    }

    /// Whether started.
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// `doca_buf_arr_set_target_gpu`: no GPU exists in the software device.
    pub fn set_target_gpu(&mut self) -> Result<()> {
        Err(Error::with_context(
            ErrorCode::NotSupported,
            "no GPU is available to the software DOCA device",
        ))
    }

    /// `doca_buf_arr_set_params`: `num_elem` elements of `size` bytes from `start_offset`.
    pub fn set_params(&mut self, size: usize, num_elem: u32, start_offset: u32) -> Result<()> {
        if self.started {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "buf array is started",
            ));
        }
        if size == 0 || num_elem == 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "element size and count must be greater than 0",
            ));
        }
        self.params = Some((size, num_elem, start_offset));
        Ok(())
    }

    /// `doca_buf_arr_start`: checks that the parameters are set, the mmap is started and
    /// the elements fit in it.
    pub fn start(&mut self) -> Result<()> {
        if self.started {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "buf array is already started",
            ));
        }
        let Some((size, n, off)) = self.params else {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "set_params must be called before start",
            ));
        };
        let st = self.mmap.state();
        if !st.started {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the buf array's mmap is not started",
            ));
        }
        let end = size
            .checked_mul(n as usize)
            .and_then(|x| x.checked_add(off as usize));
        match end {
            Some(e) if e <= st.len => {}
            _ => {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    format!(
                        "{n} elements of {size} bytes from offset {off} do not fit in the mmap's {} bytes",
                        st.len
                    ),
                ));
            }
        }
        drop(st);
        self.started = true;
        Ok(())
    }

    /// `doca_buf_arr_stop`.
    pub fn stop(&mut self) -> Result<()> {
        if !self.started {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "buf array is not started",
            ));
        }
        self.started = false;
        Ok(())
    }

    /// Address and length of element `i` (CPU view), once started.
    pub fn element(&self, i: u32) -> Result<(*mut u8, usize)> {
        if !self.started {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "buf array is not started",
            ));
        }
        let (size, n, off) = self.params.ok_or_else(|| Error::new(ErrorCode::BadState))?;
        if i >= n {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "element index out of range",
            ));
        }
        let base = self.mmap.state().base;
        Ok(((base + off as usize + size * i as usize) as *mut u8, size))
    }

    /// `doca_buf_arr_get_gpu_handle`: no GPU target exists.
    pub fn gpu_handle(&self) -> Result<()> {
        Err(Error::with_context(
            ErrorCode::NotSupported,
            "no GPU is available to the software DOCA device",
        ))
    }
}
