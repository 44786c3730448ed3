//! Work queues of the 1.x face: properties, and DMA jobs submitted in the 1.x
//! layout (`num_bytes_to_copy`).

use super::*;

/// `doca_workq_property_set`: the depth, while the queue is attached to no context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_property_set(
    workq: *mut doca_workq,
    property: doca_workq_property,
    value: *const u8,
    size: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle used by this thread.
        let w = unsafe { handle_mut(workq, "workq") }?;
        match property {
            WORKQ_DEPTH => {
                let depth = get_u32(value, size, "DOCA_WORKQ_PROPERTY_DEPTH")?;
                w.wq.set_depth(depth)
            }
            p => Err(unknown("doca_workq_property", p)),
        }
    })
}

/// `doca_workq_property_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_property_get(
    workq: *const doca_workq,
    property: doca_workq_property,
    value: *mut u8,
    size: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let w = unsafe { handle(workq, "workq") }?;
        match property {
            WORKQ_DEPTH => put_value(
                value,
                size,
                &w.wq.depth().to_ne_bytes(),
                false,
                "DOCA_WORKQ_PROPERTY_DEPTH",
            ),
            p => Err(unknown("doca_workq_property", p)),
        }
    })
}

/// `struct doca_dma_job_memcpy` of 1.x: the 2.2 job and the number of bytes to copy.
#[repr(C)]
#[derive(Debug)]
pub struct doca_dma_job_memcpy_v1 {
    /// The 2.2 part: base, destination, source.
    pub job: doca_dma_job_memcpy,
    /// Bytes copied from the source's head to the destination's head.
    pub num_bytes_to_copy: usize,
}

/// `doca_workq_submit` of 1.x: a DMA memcpy copies `num_bytes_to_copy` bytes between
/// the buffers' heads; other jobs as in 2.2.
#[unsafe(export_name = "doca1__workq_submit")]
pub unsafe extern "C" fn doca_workq_submit(
    workq: *mut doca_workq,
    job: *const doca_job,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle used by this thread.
        let w = unsafe { handle_mut(workq, "workq") }?;
        // SAFETY: NULL or a job struct of its type whose context is NULL or live (the C
        // contract).
        let (ctx, t) = unsafe { crate::v22::exec::job_head(job) }?;
        let bytes = if t == doca_dma::JOB_MEMCPY {
            // SAFETY: a DMA memcpy job of 1.x is the larger struct.
            let j = unsafe { &*(job as *const doca_dma_job_memcpy_v1) };
            if j.num_bytes_to_copy == 0 {
                return Err(invalid("num_bytes_to_copy is 0"));
            }
            j.num_bytes_to_copy as u64
        } else {
            0
        };
        w.wq.submit_in_place(&ctx.ctx, |rec: &mut JobRecord| {
            // SAFETY: as above.
            unsafe { crate::v22::exec::fill_from_c(job, ctx, t, rec) }?;
            rec.params[doca_dma::MemcpyJob::BYTES] = bytes;
            Ok(())
        })
    })
}
