//! What the C faces make from each library's task table (see
//! `docs/adding-a-task-type.md`): `c3_tasks!` makes a 3.x task type's C functions
//! (`*_set_conf`, `*_alloc_init`, `*_as_task`, the getters and setters of its inputs) and
//! `c22_jobs!` the translation of DOCA 2.2 job structs into records. Both put every
//! input where the table says, through [`InputValue`]: a C type says what kind of input
//! it is (a buffer, a value, a pointer the program gives, a library object).

use crate::common::{Result, invalid};
use doca_core::JobRecord;
use doca_core::exec::TaskInputs;
use doca_core::exec::TaskSpec;
use std::ffi::c_int;

/// A C value that goes into a task's input slot and comes back out of it.
pub trait InputValue: Copy {
    /// Stores the value in slot `slot` of `inputs` (a buffer slot for buffers, a
    /// parameter slot for the rest; a library object is kept alive beside it), after the
    /// library's check of a parameter. `name` is the input's, for messages.
    ///
    /// # Safety
    /// A handle given (a matrix, a session) is NULL or live.
    unsafe fn store(
        self,
        inputs: &TaskInputs,
        spec: &TaskSpec,
        slot: usize,
        name: &str,
    ) -> Result<()>;
    /// The value in slot `slot`.
    fn load(inputs: &TaskInputs, slot: usize) -> Self;
    /// Puts the value straight into a record's slot `slot` (a DOCA 2.2 job's field),
    /// after the library's check of a parameter.
    ///
    /// # Safety
    /// As [`store`](InputValue::store); a buffer is a live descriptor until the job
    /// completes.
    unsafe fn put(
        self,
        out: &mut JobRecord,
        spec: &TaskSpec,
        slot: usize,
        name: &str,
    ) -> Result<()>;
    /// What a getter answers for a NULL task: 0, or NULL.
    const NONE: Self;
}

macro_rules! value_inputs {
    ($($t:ty),*) => {$(
        impl InputValue for $t {
            const NONE: Self = 0;
            unsafe fn store(self, inputs: &TaskInputs, spec: &TaskSpec, slot: usize, _: &str) -> Result<()> {
                let v = self as u64;
                spec.check_param(slot, v)?;
                inputs.params[slot].set(v);
                Ok(())
            }
            fn load(inputs: &TaskInputs, slot: usize) -> Self {
                inputs.params[slot].get() as $t
            }
            #[inline]
            unsafe fn put(self, out: &mut JobRecord, spec: &TaskSpec, slot: usize, _: &str) -> Result<()> {
                let v = self as u64;
                spec.check_param(slot, v)?;
                out.params[slot] = v;
                Ok(())
            }
        }
    )*};
}
value_inputs!(u64, u32, u8, c_int);

/// A pointer the program gives for a result (a sync event get's value): any address,
/// NULL for none.
impl InputValue for *mut u64 {
    const NONE: Self = std::ptr::null_mut();
    unsafe fn store(self, inputs: &TaskInputs, _: &TaskSpec, slot: usize, _: &str) -> Result<()> {
        inputs.params[slot].set(self as usize as u64);
        Ok(())
    }
    fn load(inputs: &TaskInputs, slot: usize) -> Self {
        inputs.params[slot].get() as usize as *mut u64
    }
    unsafe fn put(self, out: &mut JobRecord, _: &TaskSpec, slot: usize, _: &str) -> Result<()> {
        out.params[slot] = self as usize as u64;
        Ok(())
    }
}

/// Handles a task keeps in a parameter slot, declared beside their types (the program
/// keeps them alive while the task is in flight).
macro_rules! handle_inputs {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::common::tasks::InputValue for $t {
            const NONE: Self = std::ptr::null_mut::<()>() as Self;
            unsafe fn store(
                self,
                inputs: &doca_core::exec::TaskInputs,
                _: &doca_core::exec::TaskSpec,
                slot: usize,
                _: &str,
            ) -> $crate::common::Result<()> {
                inputs.params[slot].set(self as usize as u64);
                Ok(())
            }
            fn load(inputs: &doca_core::exec::TaskInputs, slot: usize) -> Self {
                inputs.params[slot].get() as usize as Self
            }
            unsafe fn put(
                self,
                out: &mut doca_core::JobRecord,
                _: &doca_core::exec::TaskSpec,
                slot: usize,
                _: &str,
            ) -> $crate::common::Result<()> {
                out.params[slot] = self as usize as u64;
                Ok(())
            }
        }
    )*};
}
pub(crate) use handle_inputs;

/// A C function a task table made: its name, return type and parameter types as Rust
/// spells them (what the header checks compare with the headers' prototypes).
#[derive(Debug, Clone, Copy)]
pub struct GenFn {
    /// The C name.
    pub name: &'static str,
    /// The return type (`()` for none).
    pub ret: &'static str,
    /// The parameter types.
    pub params: &'static [&'static str],
}

/// The 3.x C functions of a library's task types, from its task table (the library's
/// `<lib>_task_table!` hands its declaration here).
macro_rules! c3_tasks {
    (
        lib: $lib:literal,
        capability: $capab:ident,
        topology: $topo:literal,
        c3_handle: $h:ty,
        tasks: [$({
            spec: $spec:ident @ $specpath:path,
            module: $module:ident,
            name: $name:literal,
            job: $job:expr,
            job_types: [$($jt:expr),* $(,)?],
            inputs: [$($kind:ident $input:ident: $slot:literal ($cty:ty) $(get $getter:ident $(as ($gty:ty))?)? $(set $setter:ident)?),* $(,)?],
            write_back: [$($wv:literal -> $wto:literal),* $(,)?],
            hooks: $hooks:expr,
            c3: {
                task: $task:ident,
                cb: $cb:ident,
                set_conf: $set_conf:ident ($style:ident),
                alloc_init: $alloc:ident $(($by_hand:ident))?,
                as_task: $as_task:ident,
                setters: $setters:ident
                $(, caps: [$($capkind:ident $capfn:ident $(($capty:ty) = $capv:expr)?),* $(,)?])? $(,)?
            },
            c22: $c22:tt $(,)?
        }),* $(,)?] $(,)?
    ) => {
        /// The C functions made here from the task table, for the header checks.
        pub(crate) static C3_FUNCTIONS: &[$crate::common::tasks::GenFn] = &[$(
            $crate::common::tasks::c3_tasks!(@set_conf_fn $style $set_conf $h, $cb),
            $crate::common::tasks::c3_tasks!(@alloc_fn $alloc $h, $task, [] $($kind ($cty),)*),
            $crate::common::tasks::GenFn {
                name: stringify!($as_task),
                ret: "*mut doca_task",
                params: &[concat!("*mut ", stringify!($task))],
            },
            $($(
                $crate::common::tasks::GenFn {
                    name: stringify!($getter),
                    ret: $crate::common::tasks::c3_tasks!(@first $(($gty))? ($cty)),
                    params: &[concat!("*const ", stringify!($task))],
                },
            )?)*
            $($(
                $crate::common::tasks::GenFn {
                    name: stringify!($setter),
                    ret: $crate::common::tasks::c3_tasks!(@setter_ret $setters),
                    params: &[concat!("*mut ", stringify!($task)), stringify!($cty)],
                },
            )?)*
            $($(
                $crate::common::tasks::c3_tasks!(@capfn $capkind $capfn [$(($capty))?]),
            )*)?
        )*];
        $(
            #[doc = concat!("`struct ", stringify!($task), "`: the generic task.")]
            pub type $task = $crate::v3::doca_task;
            #[doc = concat!("`", stringify!($cb), "`.")]
            pub type $cb = $crate::v3::TaskCb;

            $crate::common::tasks::c3_tasks!(@set_conf $style $set_conf $h, $cb, $specpath);
            $crate::common::tasks::c3_tasks!(@alloc_unless [$($by_hand)?] $alloc $h, $task, $specpath, [] [] $($kind $input $slot ($cty),)*);

            #[doc = concat!("`", stringify!($as_task), "`.")]
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $as_task(task: *mut $task) -> *mut $crate::v3::doca_task {
                task
            }

            $($(
                $crate::common::tasks::c3_tasks!(@getter $getter $task, $slot, ($cty) $(($gty))?);
            )?)*

            $($(
                $crate::common::tasks::c3_tasks!(@setter $setters $setter $task, $input, $slot, ($cty));
            )?)*

            $($(
                $crate::common::tasks::c3_tasks!(@cap $capkind $capfn $specpath, [$(($capty) = $capv)?]);
            )*)?
        )*
    };

    // A device capability of a task type: whether a device runs it, or a limit a device
    // that runs it has (the library's value).
    (@capfn supported $fn:ident []) => {
        $crate::common::tasks::GenFn {
            name: stringify!($fn),
            ret: "doca_error_t",
            params: &["*const doca_devinfo"],
        }
    };
    (@capfn value $fn:ident [($t:ty)]) => {
        $crate::common::tasks::GenFn {
            name: stringify!($fn),
            ret: "doca_error_t",
            params: &["*const doca_devinfo", concat!("*mut ", stringify!($t))],
        }
    };
    (@cap supported $fn:ident $spec:path, []) => {
        #[doc = concat!("`", stringify!($fn), "`: `DOCA_SUCCESS` when the device runs the task type, `NOT_SUPPORTED` with the reason when not.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $fn(
            devinfo: *const $crate::v22::dev::doca_devinfo,
        ) -> $crate::common::doca_error_t {
            $crate::v22::libs::devinfo_query(devinfo, |d| $spec.supported_on(d))
        }
    };
    (@cap value $fn:ident $spec:path, [($t:ty) = $v:expr]) => {
        #[doc = concat!("`", stringify!($fn), "`: for a device that runs the task type.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $fn(
            devinfo: *const $crate::v22::dev::doca_devinfo,
            out: *mut $t,
        ) -> $crate::common::doca_error_t {
            $crate::v22::libs::devinfo_value(devinfo, out, |d| {
                $spec.supported_on(d)?;
                Ok($v)
            })
        }
    };

    (@first ($t:ty) $($rest:tt)*) => {
        stringify!($t)
    };
    (@setter_ret void) => {
        "()"
    };
    (@setter_ret checked) => {
        "doca_error_t"
    };
    (@set_conf_fn log $set_conf:ident $h:ty, $cb:ident) => {
        $crate::common::tasks::GenFn {
            name: stringify!($set_conf),
            ret: "doca_error_t",
            params: &[concat!("*mut ", stringify!($h)), stringify!($cb), stringify!($cb), "u8"],
        }
    };
    (@set_conf_fn $style:ident $set_conf:ident $h:ty, $cb:ident) => {
        $crate::common::tasks::GenFn {
            name: stringify!($set_conf),
            ret: "doca_error_t",
            params: &[concat!("*mut ", stringify!($h)), stringify!($cb), stringify!($cb), "u32"],
        }
    };
    (@alloc_fn $alloc:ident $h:ty, $task:ident, [$($acc:tt)*] flag ($cty:ty), $($rest:tt)*) => {
        $crate::common::tasks::c3_tasks!(@alloc_fn $alloc $h, $task, [$($acc)*] $($rest)*)
    };
    (@alloc_fn $alloc:ident $h:ty, $task:ident, [$($acc:tt)*] object ($cty:ty), $($rest:tt)*) => {
        $crate::common::tasks::c3_tasks!(@alloc_fn $alloc $h, $task, [$($acc)*] $($rest)*)
    };
    (@alloc_fn $alloc:ident $h:ty, $task:ident, [$($acc:tt)*] $kind:ident ($cty:ty), $($rest:tt)*) => {
        $crate::common::tasks::c3_tasks!(@alloc_fn $alloc $h, $task, [$($acc)* stringify!($cty),] $($rest)*)
    };
    (@alloc_fn $alloc:ident $h:ty, $task:ident, [$($acc:tt)*]) => {
        $crate::common::tasks::GenFn {
            name: stringify!($alloc),
            ret: "doca_error_t",
            params: &[
                concat!("*mut ", stringify!($h)),
                $($acc)*
                "doca_data",
                concat!("*mut *mut ", stringify!($task)),
            ],
        }
    };
    (@set_conf num $set_conf:ident $h:ty, $cb:ident, $spec:path) => {
        #[doc = concat!("`", stringify!($set_conf), "`: the callbacks and the number of tasks (1 to `MAX_TASKS`), only while idle.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $set_conf(
            ctx: *mut $h,
            task_completion_cb: $cb,
            task_error_cb: $cb,
            num_tasks: u32,
        ) -> $crate::common::doca_error_t {
            $crate::common::ffi(|| {
                // SAFETY: NULL or a live handle.
                let h = unsafe { $crate::common::handle(ctx, "context") }?;
                $crate::v3::check_num_tasks(num_tasks)?;
                h.ctx.set_conf(&$spec, task_completion_cb, task_error_cb, num_tasks)
            })
        }
    };
    (@set_conf num_idle_not_permitted $set_conf:ident $h:ty, $cb:ident, $spec:path) => {
        #[doc = concat!("`", stringify!($set_conf), "`: only while the context is idle (`NOT_PERMITTED`).")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $set_conf(
            ctx: *mut $h,
            task_completion_cb: $cb,
            task_error_cb: $cb,
            num_tasks: u32,
        ) -> $crate::common::doca_error_t {
            $crate::common::ffi(|| {
                // SAFETY: NULL or a live handle.
                let h = unsafe { $crate::common::handle(ctx, "context") }?;
                $crate::v3::check_num_tasks(num_tasks)?;
                h.ctx
                    .set_conf(&$spec, task_completion_cb, task_error_cb, num_tasks)
                    .map_err($crate::common::tasks::idle_not_permitted)
            })
        }
    };
    (@set_conf log $set_conf:ident $h:ty, $cb:ident, $spec:path) => {
        #[doc = concat!("`", stringify!($set_conf), "`: the pool holds `2^log_num_tasks` tasks.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $set_conf(
            ctx: *mut $h,
            task_completion_cb: $cb,
            task_error_cb: $cb,
            log_num_tasks: u8,
        ) -> $crate::common::doca_error_t {
            $crate::common::ffi(|| {
                // SAFETY: NULL or a live handle.
                let h = unsafe { $crate::common::handle(ctx, "context") }?;
                let n = $crate::common::tasks::log_num_tasks(log_num_tasks)?;
                h.ctx.set_conf(&$spec, task_completion_cb, task_error_cb, n)
            })
        }
    };

    // alloc_init, unless the library's C face writes it by hand (`(by_hand)`: inputs
    // that are one value in the record but two C arguments, as an IV and its length).
    (@alloc_unless [by_hand] $($rest:tt)*) => {};
    (@alloc_unless [] $($rest:tt)*) => {
        $crate::common::tasks::c3_tasks!(@alloc $($rest)*);
    };
    // alloc_init: the inputs a pooled task takes at allocation, in the table's order.
    (@alloc $alloc:ident $h:ty, $task:ident, $spec:path, [$($args:tt)*] [$($stores:tt)*]
        flag $input:ident $slot:literal ($cty:ty), $($rest:tt)*) => {
        $crate::common::tasks::c3_tasks!(@alloc $alloc $h, $task, $spec, [$($args)*] [$($stores)*] $($rest)*);
    };
    (@alloc $alloc:ident $h:ty, $task:ident, $spec:path, [$($args:tt)*] [$($stores:tt)*]
        object $input:ident $slot:literal ($cty:ty), $($rest:tt)*) => {
        $crate::common::tasks::c3_tasks!(@alloc $alloc $h, $task, $spec, [$($args)*] [$($stores)*] $($rest)*);
    };
    (@alloc $alloc:ident $h:ty, $task:ident, $spec:path, [$($args:tt)*] [$($stores:tt)*]
        $kind:ident $input:ident $slot:literal ($cty:ty), $($rest:tt)*) => {
        $crate::common::tasks::c3_tasks!(@alloc $alloc $h, $task, $spec,
            [$($args)* $input: $cty,]
            [$($stores)* ($input $slot),]
            $($rest)*);
    };
    (@alloc $alloc:ident $h:ty, $task:ident, $spec:path, [$($input:ident: $cty:ty,)*] [$(($sinput:ident $slot:literal),)*]) => {
        #[doc = concat!("`", stringify!($alloc), "`: a task from its context's pool, with its inputs.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $alloc(
            ctx: *mut $h,
            $($input: $cty,)*
            user_data: $crate::common::doca_data,
            task: *mut *mut $task,
        ) -> $crate::common::doca_error_t {
            $crate::common::ffi(|| {
                // SAFETY: NULL or a live handle.
                let h = unsafe { $crate::common::handle(ctx, "context") }?;
                let o = $crate::common::out_ptr(task, "task")?;
                let t = h.ctx.alloc_task(&$spec, user_data, |t| {
                    $(
                        // SAFETY: a handle given is NULL or live (the C contract).
                        unsafe {
                            $crate::common::tasks::InputValue::store($sinput, t, &$spec, $slot, stringify!($sinput))
                        }?;
                    )*
                    Ok(())
                })?;
                // SAFETY: output checked.
                unsafe { $crate::common::put(o, t) };
                Ok(())
            })
        }
    };

    (@getter $getter:ident $task:ident, $slot:literal, ($cty:ty)) => {
        $crate::common::tasks::c3_tasks!(@getter $getter $task, $slot, ($cty) ($cty));
    };
    (@getter $getter:ident $task:ident, $slot:literal, ($cty:ty) ($gty:ty)) => {
        #[doc = concat!("`", stringify!($getter), "`.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $getter(task: *const $task) -> $gty {
            $crate::common::ffi_value(<$cty as $crate::common::tasks::InputValue>::NONE as $gty, || {
                // SAFETY: NULL or a task the program holds.
                let t = unsafe { $crate::common::handle(task, "task") }?;
                Ok(<$cty as $crate::common::tasks::InputValue>::load(t, $slot) as $gty)
            })
        }
    };

    // Setters: `void` ones store what they are given (the program owns the task); those
    // that answer refuse a submitted task and what the library refuses.
    (@setter void $setter:ident $task:ident, $input:ident, $slot:literal, ($cty:ty)) => {
        #[doc = concat!("`", stringify!($setter), "`.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $setter(task: *mut $task, $input: $cty) {
            $crate::common::ffi_value((), || {
                // SAFETY: NULL or a task the program holds.
                let t = unsafe { $crate::common::handle(task, "task") }?;
                // SAFETY: a handle given is NULL or live (the C contract).
                unsafe { $crate::common::tasks::InputValue::store($input, t, t.spec(), $slot, stringify!($input)) }
            })
        }
    };
    (@setter checked $setter:ident $task:ident, $input:ident, $slot:literal, ($cty:ty)) => {
        #[doc = concat!("`", stringify!($setter), "`: refused while the task is submitted.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $setter(task: *mut $task, $input: $cty) -> $crate::common::doca_error_t {
            $crate::common::ffi(|| {
                // SAFETY: NULL or a task the program holds.
                let t = unsafe { $crate::common::handle(task, "task") }?;
                t.check_settable(stringify!($input))?;
                // SAFETY: a handle given is NULL or live (the C contract).
                unsafe { $crate::common::tasks::InputValue::store($input, t, t.spec(), $slot, stringify!($input)) }
            })
        }
    };
}
pub(crate) use c3_tasks;

/// The translation of a library's DOCA 2.2 job structs into records, from its task
/// table: `fill(job, t, user_data, out)` writes the record of a job of type `t` (one
/// the library's context handles) into `out`. The job structs the table names are
/// those in scope where it is invoked.
macro_rules! c22_jobs {
    (
        lib: $lib:literal,
        capability: $capab:ident,
        topology: $topo:literal,
        c3_handle: $h:ty,
        tasks: [$({
            spec: $spec:ident @ $specpath:path,
            module: $module:ident,
            name: $name:literal,
            job: $job:expr,
            job_types: [$($jt:expr),* $(,)?],
            inputs: [$($kind:ident $input:ident: $slot:literal ($cty:ty) $(get $getter:ident $(as ($gty:ty))?)? $(set $setter:ident)?),* $(,)?],
            write_back: [$($wv:literal -> $wto:literal),* $(,)?],
            hooks: $hooks:expr,
            c3: $c3:tt,
            c22: {$($jstruct:ident { $($($field:ident).+ : $finput:ident),* $(,)? })?} $(,)?
        }),* $(,)?] $(,)?
    ) => {
        /// Writes the record of the 2.2 job `job` of type `t` into `out`, an empty
        /// record, through the task table; `InvalidValue` for a type with no 2.2 job.
        ///
        /// # Safety
        /// `job` points to the full job struct of type `t`; its buffers and handles are
        /// live while the job is in flight (the C contract).
        pub(crate) unsafe fn fill(
            job: *const $crate::v22::exec::doca_job,
            t: u32,
            user_data: doca_core::Data,
            out: &mut doca_core::JobRecord,
        ) -> $crate::common::Result<()> {
            $({
                #[allow(dead_code)]
                const NAMES: &[&str] = &[$(stringify!($input)),*];
                #[allow(dead_code)]
                const SLOTS: &[usize] = &[$($slot),*];
                $(
                    if $specpath.covers(t) {
                        // SAFETY: the caller's contract: the struct of this job type.
                        let j = unsafe { &*(job as *const $jstruct) };
                        $(
                            // The slot is found when the library is built: a name the
                            // table does not declare stops the build.
                            let slot = const {
                                doca_core::exec::TaskSpec::slot_named(NAMES, SLOTS, stringify!($finput))
                            };
                            // SAFETY: the caller's contract.
                            unsafe {
                                $crate::common::tasks::InputValue::put(j.$($field).+, out, &$specpath, slot, stringify!($finput))
                            }?;
                        )*
                        return $specpath.seal(t, user_data, out);
                    }
                )?
            })*
            Err($crate::common::invalid(format!(
                "job type {t} has no DOCA 2.2 job struct in the {} library",
                $lib
            )))
        }
    };
}
pub(crate) use c22_jobs;

/// A set_conf refused while the context is not idle answers `NOT_PERMITTED` (the sync
/// event's and the mmap advise's tasks, as DOCA says).
pub(crate) fn idle_not_permitted(e: doca_core::Error) -> doca_core::Error {
    if e.code() == doca_core::ErrorCode::BadState {
        crate::common::err(
            doca_core::ErrorCode::NotPermitted,
            "tasks can be configured only while the context is idle",
        )
    } else {
        e
    }
}

/// The largest `log_num_tasks`.
pub(crate) const MAX_LOG_TASKS: u8 = 16;

/// The pool size of a `log_num_tasks`.
pub(crate) fn log_num_tasks(log: u8) -> Result<u32> {
    if log > MAX_LOG_TASKS {
        return Err(invalid(format!(
            "log_num_tasks {log} is above {MAX_LOG_TASKS}"
        )));
    }
    Ok(1 << log)
}
