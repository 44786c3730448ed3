//! A task type as data: its inputs and their record slots, its hooks, what it writes
//! back; and the macro that declares a library's task types from its task table.

use super::*;
use crate::Error;

/// Parameters a record carries.
pub const MAX_JOB_PARAMS: usize = 5;

/// What an input of a task type is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A buffer (or list head): a buffer slot of the record, which must be set.
    Buf,
    /// A buffer that may be NULL (an RDMA send of an empty message): a buffer slot of
    /// the record, left empty when not set.
    OptBuf,
    /// A value (or a pointer the program gives): a parameter slot of the record.
    Param,
    /// A library object (a matrix): its C handle in a parameter slot, the object kept
    /// alive by the record while in flight.
    Handle,
    /// A library object with no parameter slot (a partial hash's session): kept alive
    /// by the record while in flight. A pooled task makes its own
    /// ([`TaskHooks::init`]); a DOCA 2.2 job names it.
    Object,
    /// A parameter that a pooled task sets through calls of its own (a partial hash's
    /// final flag), not through its `alloc_init`; a DOCA 2.2 job has it as a field.
    Flag,
}

/// One named input of a task type and the record slot it goes to.
#[derive(Debug, Clone, Copy)]
pub struct SlotSpec {
    /// Its name in DOCA's API (`src`, `dst`, `inc_val`, ...).
    pub name: &'static str,
    /// What it is.
    pub kind: InputKind,
    /// The record slot (a buffer slot for [`InputKind::Buf`], else a parameter slot).
    pub slot: usize,
    /// Its C type, as DOCA's headers declare it.
    pub c_type: &'static str,
}

/// A value a completed task writes through a pointer the program gave (a sync event
/// get's value): record parameter `value` is written to the address in parameter `to`,
/// when the task succeeded and the address is not NULL.
#[derive(Debug, Clone, Copy)]
pub struct WriteBack {
    /// The record parameter holding the result.
    pub value: usize,
    /// The record parameter holding the program's pointer.
    pub to: usize,
}

/// What a library does beyond the table's slots for one task type; each is optional.
/// `init`, `job_type`, `before_set`, `prepare` and `finish` concern a pooled task (the
/// task generation); a DOCA 2.2 job, which has no state of its own, gets its job type
/// from its struct and runs none of them.
#[derive(Debug, Clone, Copy)]
pub struct TaskHooks {
    /// Sets up a task just taken from its pool (its inputs cleared): a partial hash's
    /// session.
    pub init: Option<fn(&TaskInputs)>,
    /// The record's job type from the task's inputs (SHA: by algorithm); without it,
    /// the spec's `job_type`.
    pub job_type: Option<fn(&TaskInputs) -> Result<u32>>,
    /// Checks a value given for a parameter slot (alloc_init and setters) before it is
    /// stored.
    pub check_param: Option<fn(usize, u64) -> Result<()>>,
    /// Checks that an input (by name) may change now (SHA partial: not mid-hash).
    pub before_set: Option<fn(&TaskInputs, &'static str) -> Result<()>>,
    /// Before a task's record is submitted, with the record made from its slots: may
    /// refuse, and may update the task's own state.
    pub prepare: Option<fn(&TaskInputs, &mut JobRecord) -> Result<()>>,
    /// Once a task completed (`failed` or not), from the record it ran as: updates the
    /// task's own state.
    pub finish: Option<fn(&TaskInputs, &JobRecord, bool)>,
}

impl TaskHooks {
    /// No hooks.
    pub const NONE: TaskHooks = TaskHooks {
        init: None,
        job_type: None,
        check_param: None,
        before_set: None,
        prepare: None,
        finish: None,
    };
}

/// A task type of a library, as its task table declares it.
#[derive(Debug)]
pub struct TaskSpec {
    /// The library ("dma", ...).
    pub lib: &'static str,
    /// The device capability the library needs.
    pub capability: crate::device::Capability,
    /// The library's name in topology files (`job_types = ["dma.memcpy"]`).
    pub topology: &'static str,
    /// The task type's name in DOCA's API ("memcpy", ...).
    pub name: &'static str,
    /// Its key, and its record's job type unless [`TaskHooks::job_type`] says otherwise.
    pub job_type: u32,
    /// Every job type its records may have (the DOCA 2.2 job types it covers).
    pub job_types: &'static [u32],
    /// Their names in topology files, beside [`job_types`](TaskSpec::job_types).
    pub job_type_names: &'static [&'static str],
    /// Its inputs, in the order of its C `alloc_init`'s arguments.
    pub inputs: &'static [SlotSpec],
    /// Bit i set: buffer slot i is an input (made from `inputs` by
    /// [`TaskSpec::buf_mask`]).
    pub bufs: u8,
    /// Bit i set: buffer slot i may be NULL (made by [`TaskSpec::opt_buf_mask`]).
    pub opt_bufs: u8,
    /// Bit i set: parameter slot i is an input (made from `inputs` by
    /// [`TaskSpec::param_mask`]).
    pub params: u8,
    /// Whether the record keeps a library object (a `Handle` or `Object` input).
    pub keeps_object: bool,
    /// No hooks and no write-backs (made by [`TaskSpec::is_plain`]): the record is its
    /// slots, and a completion needs nothing of the library.
    pub plain: bool,
    /// What a completed task writes back.
    pub write_back: &'static [WriteBack],
    /// The library's hooks.
    pub hooks: TaskHooks,
}

impl TaskSpec {
    /// The buffer slots among `inputs`, as bits.
    pub const fn buf_mask(inputs: &[SlotSpec]) -> u8 {
        let mut m = 0u8;
        let mut i = 0;
        while i < inputs.len() {
            if matches!(inputs[i].kind, InputKind::Buf | InputKind::OptBuf) {
                m |= 1 << inputs[i].slot;
            }
            i += 1;
        }
        m
    }

    /// The buffer slots among `inputs` that may be NULL, as bits.
    pub const fn opt_buf_mask(inputs: &[SlotSpec]) -> u8 {
        let mut m = 0u8;
        let mut i = 0;
        while i < inputs.len() {
            if matches!(inputs[i].kind, InputKind::OptBuf) {
                m |= 1 << inputs[i].slot;
            }
            i += 1;
        }
        m
    }

    /// The parameter slots among `inputs`, as bits.
    pub const fn param_mask(inputs: &[SlotSpec]) -> u8 {
        let mut m = 0u8;
        let mut i = 0;
        while i < inputs.len() {
            if !matches!(
                inputs[i].kind,
                InputKind::Buf | InputKind::OptBuf | InputKind::Object
            ) {
                m |= 1 << inputs[i].slot;
            }
            i += 1;
        }
        m
    }

    /// Whether a task type with these hooks and write-backs is plain (see
    /// [`TaskSpec::plain`]).
    pub const fn is_plain(hooks: &TaskHooks, write_back: &[WriteBack]) -> bool {
        write_back.is_empty()
            && hooks.init.is_none()
            && hooks.job_type.is_none()
            && hooks.check_param.is_none()
            && hooks.before_set.is_none()
            && hooks.prepare.is_none()
            && hooks.finish.is_none()
    }

    /// Whether `inputs` name a library object the record keeps.
    pub const fn keeps_object(inputs: &[SlotSpec]) -> bool {
        let mut i = 0;
        while i < inputs.len() {
            if matches!(inputs[i].kind, InputKind::Handle | InputKind::Object) {
                return true;
            }
            i += 1;
        }
        false
    }

    /// The record slot of the input called `name` among `names` (with `slots` beside
    /// them), at compile time: a table's DOCA 2.2 field mapping names inputs, and a
    /// name it does not declare stops the build.
    pub const fn slot_named(names: &[&str], slots: &[usize], name: &str) -> usize {
        let mut i = 0;
        while i < names.len() {
            let (a, b) = (names[i].as_bytes(), name.as_bytes());
            if a.len() == b.len() {
                let mut k = 0;
                while k < a.len() && a[k] == b[k] {
                    k += 1;
                }
                if k == a.len() {
                    return slots[i];
                }
            }
            i += 1;
        }
        panic!("the task table's 2.2 mapping names an input it does not declare")
    }

    /// Whether a device runs tasks of this type (`*_cap_task_*_is_supported`): the
    /// library's capability, and the job type among those a topology lists for it;
    /// `NotSupported` with the reason otherwise.
    pub fn supported_on(&self, devinfo: &crate::DevInfo) -> Result<()> {
        devinfo.task_supported(self, self.job_type)
    }

    /// The topology-file name of one of its job types (`memcpy` of `dma.memcpy`).
    pub fn topology_name(&self, job_type: u32) -> Option<&'static str> {
        self.job_types
            .iter()
            .position(|&t| t == job_type)
            .and_then(|i| self.job_type_names.get(i).copied())
    }

    /// Whether records of `job_type` are of this task type.
    #[inline]
    pub fn covers(&self, job_type: u32) -> bool {
        job_type == self.job_type
            || (self.job_types.len() > 1 && self.job_types.contains(&job_type))
    }

    /// An input by its name.
    pub fn input(&self, name: &str) -> Option<&'static SlotSpec> {
        self.inputs.iter().find(|s| s.name == name)
    }

    /// Checks a value for parameter `slot` ([`TaskHooks::check_param`]).
    pub fn check_param(&self, slot: usize, value: u64) -> Result<()> {
        self.hooks.check_param.map_or(Ok(()), |f| f(slot, value))
    }

    /// Writes the record of a job of type `job_type` (one this task type covers) with
    /// these inputs into `out`, an empty record (where the engine keeps it): the job
    /// type, the buffers (borrowed: the program keeps its references), the parameters,
    /// the library object. `InvalidValue` names a buffer that is not set.
    ///
    /// # Safety
    /// The buffers set in `inputs` are live descriptors until the task completes.
    #[inline(always)]
    pub unsafe fn fill(
        &self,
        inputs: &TaskInputs,
        job_type: u32,
        user_data: Data,
        out: &mut JobRecord,
    ) -> Result<()> {
        let (b0, b1) = (inputs.bufs[0].get(), inputs.bufs[1].get());
        let m = self.bufs;
        let need = m & !self.opt_bufs;
        if (need & 1 != 0 && b0.is_null()) || (need & 2 != 0 && b1.is_null()) {
            return Err(self.missing(usize::from(need & 1 == 0 || !b0.is_null())));
        }
        out.job_type = job_type;
        out.user_data = user_data;
        // SAFETY: the caller's contract.
        unsafe {
            if m & 1 != 0 && !b0.is_null() {
                out.set_buf_raw(0, b0 as *mut BufDesc);
            }
            if m & 2 != 0 && !b1.is_null() {
                out.set_buf_raw(1, b1 as *mut BufDesc);
            }
        }
        if self.params != 0 || self.keeps_object || !self.write_back.is_empty() {
            self.fill_rest(inputs, out);
        }
        Ok(())
    }

    /// [`fill`](TaskSpec::fill)'s parameters, object and flags.
    #[inline(never)]
    fn fill_rest(&self, inputs: &TaskInputs, out: &mut JobRecord) {
        if !self.write_back.is_empty() {
            out.flags |= JobRecord::WRITES_BACK;
        }
        // Parameters the table does not name are 0 in the inputs, as in a new record.
        for (o, p) in out.params.iter_mut().zip(&inputs.params) {
            *o = p.get();
        }
        if self.keeps_object {
            out.aux = inputs.aux.borrow().clone();
        }
    }

    /// Finishes a record whose inputs were stored straight into it (a DOCA 2.2 job's
    /// fields): its job type, its user data, the table's flags; `InvalidValue` names a
    /// buffer that is not set.
    #[inline]
    pub fn seal(&self, job_type: u32, user_data: Data, out: &mut JobRecord) -> Result<()> {
        for slot in 0..MAX_JOB_BUFS {
            if self.bufs & !self.opt_bufs & (1 << slot) != 0 && out.buf(slot).is_none() {
                return Err(self.missing(slot));
            }
        }
        out.job_type = job_type;
        out.user_data = user_data;
        if !self.write_back.is_empty() {
            out.flags |= JobRecord::WRITES_BACK;
        }
        Ok(())
    }

    #[cold]
    fn missing(&self, slot: usize) -> Error {
        let buf = self
            .inputs
            .iter()
            .find(|i| i.kind == InputKind::Buf && i.slot == slot)
            .map_or("a", |i| i.name);
        Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "the {} {} task's {buf} buffer is NULL; set it before submitting",
                self.lib, self.name
            ),
        )
    }

    /// Writes back what the table says a completed record gives the program
    /// ([`WriteBack`]).
    ///
    /// # Safety
    /// The program's pointers in the record's parameters are NULL or writable (the C
    /// contract of the task's pointer parameters).
    #[inline]
    pub unsafe fn write_back(&self, record: &JobRecord, failed: bool) {
        if failed {
            return;
        }
        for w in self.write_back {
            let p = record.params[w.to] as usize as *mut u64;
            if !p.is_null() {
                // SAFETY: the caller's contract.
                unsafe { p.write_unaligned(record.params[w.value]) };
            }
        }
    }
}

/// Whether `devinfo` runs jobs of `job_type`, by the library's task table `table`
/// ([`DevInfo::task_supported`](crate::DevInfo::task_supported) of the task type that
/// covers it); `NotSupported` for a job type the table does not declare.
pub fn job_supported_in(
    table: &[&TaskSpec],
    devinfo: &crate::DevInfo,
    job_type: u32,
) -> Result<()> {
    match table.iter().find(|s| s.covers(job_type)) {
        Some(s) => devinfo.task_supported(s, job_type),
        None => Err(Error::with_context(
            ErrorCode::NotSupported,
            format!(
                "job type {job_type:#x} is not one of the {} library's",
                table.first().map_or("context's", |s| s.lib)
            ),
        )),
    }
}

/// Declares a library's task specs from its task table (the library's
/// `<lib>_task_table!` macro hands its declaration to this one): one
/// [`TaskSpec`] static per task type, and a module per task type with the record slot
/// of each input by its DOCA name (`tasks::memcpy::src`). What the C faces generate from
/// the same declaration (the `c3` and `c22` parts) is read by their own generators.
#[macro_export]
macro_rules! task_specs {
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
            job_types: [$($jtn:ident = $jt:expr),* $(,)?],
            inputs: [$($kind:ident $input:ident: $slot:literal ($cty:ty) $(get $getter:ident $(as ($gty:ty))?)? $(set $setter:ident)?),* $(,)?],
            write_back: [$($wv:literal -> $wto:literal),* $(,)?],
            hooks: $hooks:expr,
            c3: $c3:tt,
            c22: $c22:tt $(,)?
        }),* $(,)?] $(,)?
    ) => {
        #[doc = concat!("Every task type of the ", $lib, " library.")]
        pub static ALL: &[&$crate::exec::TaskSpec] = &[$(&$spec),*];
        $(
            #[doc = concat!("The `", $name, "` task type of the ", $lib, " library, from its task table.")]
            pub static $spec: $crate::exec::TaskSpec = {
                const HOOKS: $crate::exec::TaskHooks = $hooks;
                const WRITE_BACK: &[$crate::exec::WriteBack] =
                    &[$($crate::exec::WriteBack { value: $wv, to: $wto }),*];
                const INPUTS: &[$crate::exec::SlotSpec] = &[$($crate::exec::SlotSpec {
                    name: stringify!($input),
                    kind: $crate::__task_input_kind!($kind),
                    slot: $slot,
                    c_type: stringify!($cty),
                }),*];
                $crate::exec::TaskSpec {
                    lib: $lib,
                    capability: $crate::device::Capability::$capab,
                    topology: $topo,
                    name: $name,
                    job_type: $job,
                    job_types: &[$($jt),*],
                    job_type_names: &[$(stringify!($jtn)),*],
                    inputs: INPUTS,
                    bufs: $crate::exec::TaskSpec::buf_mask(INPUTS),
                    opt_bufs: $crate::exec::TaskSpec::opt_buf_mask(INPUTS),
                    params: $crate::exec::TaskSpec::param_mask(INPUTS),
                    keeps_object: $crate::exec::TaskSpec::keeps_object(INPUTS),
                    plain: $crate::exec::TaskSpec::is_plain(&HOOKS, WRITE_BACK),
                    write_back: WRITE_BACK,
                    hooks: HOOKS,
                }
            };
            #[doc = concat!("The record slots of the `", $name, "` task type's inputs, by their DOCA names.")]
            #[allow(non_upper_case_globals)]
            pub mod $module {
                $(
                    #[doc = concat!("The record slot of `", stringify!($input), "`.")]
                    pub const $input: usize = $slot;
                )*
            }
        )*
    };
}

/// The [`InputKind`] of a task table's input keyword.
#[doc(hidden)]
#[macro_export]
macro_rules! __task_input_kind {
    (buf) => {
        $crate::exec::InputKind::Buf
    };
    (opt_buf) => {
        $crate::exec::InputKind::OptBuf
    };
    (param) => {
        $crate::exec::InputKind::Param
    };
    (handle) => {
        $crate::exec::InputKind::Handle
    };
    (object) => {
        $crate::exec::InputKind::Object
    };
    (flag) => {
        $crate::exec::InputKind::Flag
    };
}
