//! A task type added in one file (test-only; `docs/adding-a-task-type.md` walks through
//! it): the `measure` library, whose one task multiplies its source's data length by
//! `scale` and writes the product where the program asked. Its task table is the only
//! declaration: from it come the record slots (`tasks::measure::src`), the 3.x C
//! functions (`doca_measure_task_measure_*`) and the DOCA 2.2 job translation
//! (`struct doca_measure_job`). What is left is the library itself: its context
//! operations and its execute function.

use crate::v3::{Lib3, doca_ctx3};
use crate::v22::exec::doca_job;
use crate::v22::mem::doca_buf;
use doca_core::device::Capability;
use doca_core::exec::{CtxOps, ExecEnv, JobOps, JobRecord};
use doca_core::{Ctx, Dev, Error, ErrorCode, Result};

/// The job type (in DMA's range, so that every device of the default machine runs it).
pub const JOB_MEASURE: u32 = doca_core::types::action::DMA_FIRST + 0x100;

/// The measure library's task table.
macro_rules! measure_task_table {
    ($gen:path) => {
        $gen! {
            lib: "measure",
            capability: Dma,
            topology: "measure",
            c3_handle: doca_measure,
            tasks: [{
                spec: MEASURE @ crate::task_type_example::tasks::MEASURE,
                module: measure,
                name: "measure",
                job: crate::task_type_example::JOB_MEASURE,
                job_types: [measure = crate::task_type_example::JOB_MEASURE],
                inputs: [
                    buf src: 0 (*const doca_buf)
                        get doca_measure_task_measure_get_src
                        set doca_measure_task_measure_set_src,
                    param scale: 0 (u32)
                        get doca_measure_task_measure_get_scale
                        set doca_measure_task_measure_set_scale,
                    param result_ptr: 1 (*mut u64)
                        get doca_measure_task_measure_get_result_ptr,
                ],
                write_back: [2 -> 1],
                hooks: doca_core::exec::TaskHooks::NONE,
                c3: {
                    task: doca_measure_task_measure,
                    cb: doca_measure_task_measure_completion_cb_t,
                    set_conf: doca_measure_task_measure_set_conf (num),
                    alloc_init: doca_measure_task_measure_alloc_init,
                    as_task: doca_measure_task_measure_as_task,
                    setters: void,
                    caps: [
                        supported doca_measure_cap_task_measure_is_supported,
                        value doca_measure_cap_task_measure_get_max_scale (u32) = 1000,
                    ],
                },
                c22: { doca_measure_job { src: src, scale: scale, result: result_ptr } },
            }],
        }
    };
}

/// The task specs (what the engine and the Rust face read).
pub mod tasks {
    measure_task_table!(doca_core::task_specs);
}

/// The library: its context operations and its execute function.
struct MeasureOps;

impl CtxOps for MeasureOps {
    fn tasks(&self) -> &'static [&'static doca_core::exec::TaskSpec] {
        tasks::ALL
    }
    fn name(&self) -> &'static str {
        "measure"
    }
    fn capability(&self) -> Capability {
        Capability::Dma
    }
    fn handles(&self, job_type: u32) -> bool {
        job_type == JOB_MEASURE
    }
}

impl JobOps for MeasureOps {
    fn validate(&self, job: &mut JobRecord, _: &Dev) -> Result<()> {
        match job.buf(tasks::measure::src) {
            Some(_) => Ok(()),
            None => Err(Error::with_context(ErrorCode::InvalidValue, "no source")),
        }
    }
    fn execute(&self, job: &mut JobRecord, _: &ExecEnv<'_>) -> Result<()> {
        let len = job.buf(tasks::measure::src).map_or(0, |b| b.data_len()) as u64;
        job.params[2] = len * job.params[tasks::measure::scale];
        Ok(())
    }
}

/// `struct doca_measure`.
pub type doca_measure = Lib3<()>;

// The 3.x C functions.
measure_task_table!(crate::common::tasks::c3_tasks);

/// `struct doca_measure_job`: the 2.2 job.
#[repr(C)]
pub struct doca_measure_job {
    base: doca_job,
    src: *const doca_buf,
    scale: u32,
    result: *mut u64,
}

/// The 2.2 job translation.
mod jobs {
    use super::doca_measure_job;
    measure_task_table!(crate::common::tasks::c22_jobs);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v3::{
        doca_ctx_start, doca_ctx_stop, doca_pe, doca_pe_connect_ctx, doca_pe_create,
        doca_pe_destroy, doca_pe_progress, doca_task, doca_task_free, doca_task_get_status,
        doca_task_submit,
    };
    use doca_core::{AccessFlags, BufInventory, Data, Mmap, WorkQ};
    use std::cell::Cell;

    thread_local! {
        static DONE: Cell<u32> = const { Cell::new(0) };
    }

    unsafe extern "C" fn done(_: *mut doca_task, ud: Data, _: Data) {
        DONE.with(|d| d.set(d.get() + ud.u64() as u32));
    }

    /// The generated 3.x functions and the 2.2 translation run the task end to end.
    #[test]
    fn a_task_type_from_one_table() {
        let dev = doca_core::devinfo_list().unwrap()[0].open().unwrap();
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; 4096]).unwrap();
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
        mmap.dev_add(&dev).unwrap();
        mmap.start().unwrap();
        let mut inv = BufInventory::new(2).unwrap();
        inv.start().unwrap();
        let mut src = inv.buf_at(&mmap, 0, 1024).unwrap();
        src.append(&[1u8; 100]).unwrap();
        let src_ptr: *const doca_buf = &*src;

        // 3.x: a handle whose context runs the library.
        let ctx = Ctx::new(MeasureOps);
        ctx.dev_add(&dev).unwrap();
        let h: *mut doca_measure = Box::into_raw(Box::new(Lib3 {
            lib: (),
            ctx: doca_ctx3::new(ctx.clone()),
        }));
        let mut result = 0u64;
        // SAFETY: the calls a C program makes, with live handles and out-pointers.
        unsafe {
            let c: *mut doca_ctx3 = &mut (*h).ctx;
            let mut pe: *mut doca_pe = std::ptr::null_mut();
            assert_eq!(doca_pe_create(&mut pe), 0);
            assert_eq!(doca_pe_connect_ctx(pe, c), 0);
            assert_eq!(
                doca_measure_task_measure_set_conf(h, Some(done), Some(done), 4),
                0
            );
            assert_eq!(doca_ctx_start(c), 0);
            let mut t: *mut doca_measure_task_measure = std::ptr::null_mut();
            let r =
                doca_measure_task_measure_alloc_init(h, src_ptr, 3, &mut result, Data(5), &mut t);
            assert_eq!(r, 0);
            assert_eq!(doca_measure_task_measure_get_scale(t), 3);
            assert_eq!(doca_measure_task_measure_get_src(t), src_ptr);
            doca_measure_task_measure_set_scale(t, 7);
            assert_eq!(doca_task_submit(doca_measure_task_measure_as_task(t)), 0);
            while doca_pe_progress(pe) == 0 {}
            assert_eq!(DONE.with(|d| d.get()), 5);
            assert_eq!(doca_task_get_status(t), 0);
            assert_eq!(result, 700, "written back at delivery");
            // A task without its source is refused at submission, naming the input.
            doca_measure_task_measure_set_src(t, std::ptr::null());
            assert_eq!(
                doca_task_submit(t),
                ErrorCode::InvalidValue as i32,
                "a NULL source is refused"
            );
            doca_task_free(t);
            assert_eq!(doca_ctx_stop(c), 0);
            (*h).ctx.destroy().unwrap();
            drop(Box::from_raw(h));
            assert_eq!(doca_pe_destroy(pe), 0);
        }

        // 2.2: the job struct becomes the same record, run on a work queue.
        let mut out = 0u64;
        let job = doca_measure_job {
            base: doca_job {
                type_: JOB_MEASURE as i32,
                flags: 0,
                ctx: std::ptr::null_mut(),
                user_data: Data(9),
            },
            src: src_ptr,
            scale: 2,
            result: &mut out,
        };
        let mut rec = JobRecord::new(0, Data(0));
        // SAFETY: the job struct of its type, with a live buffer.
        unsafe { jobs::fill(&job.base, JOB_MEASURE, Data(9), &mut rec) }.unwrap();
        assert_eq!(rec.params[tasks::measure::scale], 2);
        let ctx = Ctx::new(MeasureOps);
        ctx.dev_add(&dev).unwrap();
        ctx.start().unwrap();
        let mut wq = WorkQ::new(4).unwrap();
        ctx.workq_add(&mut wq).unwrap();
        wq.submit(&ctx, rec).map_err(|(e, _)| e).unwrap();
        let c = wq.progress_retrieve().unwrap();
        // SAFETY: the program's pointer, live.
        unsafe { tasks::MEASURE.write_back(&c.record, false) };
        assert_eq!(out, 200);
        drop(c);
        ctx.workq_rm(&mut wq).unwrap();
        ctx.stop().unwrap();

        // The capabilities the table declares: the default machine's device runs the
        // task type (its library's capability), and answers its limit.
        let list = doca_core::devinfo_list().unwrap();
        let info: *const crate::v22::dev::doca_devinfo = &crate::v22::dev::doca_devinfo {
            info: list[0].clone(),
        };
        let mut max = 0u32;
        // SAFETY: a live devinfo and out-pointer; NULL is refused.
        unsafe {
            assert_eq!(doca_measure_cap_task_measure_is_supported(info), 0);
            assert_eq!(
                doca_measure_cap_task_measure_get_max_scale(info, &mut max),
                0
            );
            assert_eq!(
                doca_measure_cap_task_measure_is_supported(std::ptr::null()),
                ErrorCode::InvalidValue as i32
            );
        }
        assert_eq!(max, 1000);

        // What the header checks read: every function the table made.
        let names: Vec<&str> = super::C3_FUNCTIONS.iter().map(|f| f.name).collect();
        assert_eq!(names.len(), 10, "{names:?}");
        let alloc = super::C3_FUNCTIONS
            .iter()
            .find(|f| f.name == "doca_measure_task_measure_alloc_init")
            .unwrap();
        assert_eq!(alloc.params.len(), 6, "{:?}", alloc.params);
    }
}
