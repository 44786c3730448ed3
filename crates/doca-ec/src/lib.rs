//! DOCA Erasure Coding in software: an `Ec` context whose create, update, recover and
//! Galois-multiply jobs run on the `ec-codec` kernels, with DOCA 2.2's buffer layouts.
//!
//! Sources are one buffer, or a scatter-gather list, holding the job's input blocks back
//! to back; the block size is the source data length divided by the block count (a
//! multiple of 64 bytes, 64 B to 128 MiB). The result blocks are appended, back to back,
//! to the destination buffer, whose data length grows.
//!
//! ```
//! use doca_core::{devinfo_list, AccessFlags, BufInventory, Mmap, WorkQ};
//! use doca_ec::{Ec, EcCreateJob, EcRecoverJob, MatrixType};
//!
//! let dev = devinfo_list()?[0].open()?;
//! let (m, k, block) = (4, 2, 1024);
//! let mut mmap = Mmap::new();
//! mmap.set_memory(vec![0u8; 16 * block])?;
//! mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE)?;
//! mmap.dev_add(&dev)?;
//! mmap.start()?;
//! let mut inv = BufInventory::new(8)?;
//! inv.start()?;
//! let data: Vec<u8> = (0..m * block).map(|i| (i * 7 % 251) as u8).collect();
//! let mut src = inv.buf_at(&mmap, 0, m * block)?;
//! src.write_data(&data)?;
//! let parity = inv.buf_at(&mmap, 8 * block, k * block)?;
//!
//! let ec = Ec::new();
//! ec.as_ctx().dev_add(&dev)?;
//! ec.as_ctx().start()?;
//! let mut wq = WorkQ::new(4)?;
//! ec.as_ctx().workq_add(&mut wq)?;
//! let coding = ec.matrix_create(MatrixType::Cauchy, m, k)?;
//! wq.submit_job(ec.as_ctx(), EcCreateJob::new(&coding, src, parity, 1)).map_err(|(e, _)| e)?;
//! let mut done = wq.wait(None)?;
//! let parity = done.take_buf(EcCreateJob::DST).unwrap();
//! assert_eq!(parity.data_len(), k * block);
//! # drop(done); ec.as_ctx().workq_rm(&mut wq)?;
//! # Ok::<(), doca_core::Error>(())
//! ```

use doca_core::device::Capability;
use doca_core::exec::{CtxOps, ExecEnv, Job, JobOps, JobRecord};
use doca_core::memory::with_io_locked;
use doca_core::types::action;
use doca_core::{AccessFlags, Buf, BufDesc, Ctx, Data, Dev, DevInfo, Error, ErrorCode, Result};
use ec_codec::kernels::{MAX_COLS, MAX_ROWS};
use ec_codec::{CodecError, CodingMatrix, Decoder, GfMatrix, MatrixKind, Updater};
use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// `DOCA_EC_JOB_GALOIS_MUL`.
pub const JOB_GALOIS_MUL: u32 = action::EC_FIRST + 1;
/// `DOCA_EC_JOB_CREATE`.
pub const JOB_CREATE: u32 = action::EC_FIRST + 2;
/// `DOCA_EC_JOB_UPDATE`.
pub const JOB_UPDATE: u32 = action::EC_FIRST + 3;
/// `DOCA_EC_JOB_RECOVER`.
pub const JOB_RECOVER: u32 = action::EC_FIRST + 4;

/// Most data blocks (BlueField-3 limit).
pub const MAX_DATA_BLOCKS: usize = ec_codec::MAX_DATA;
/// Most redundancy blocks (BlueField-3 limit).
pub const MAX_RDNC_BLOCKS: usize = ec_codec::MAX_RDNC;
/// Smallest block.
pub const MIN_BLOCK_SIZE: usize = ec_codec::MIN_BLOCK;
/// Largest block (128 MiB).
pub const MAX_BLOCK_SIZE: usize = ec_codec::MAX_BLOCK;
/// Most elements of a source list.
pub const MAX_LIST_ELEMENTS: u32 = 128;
/// Largest source or destination data length one job may have (4 GiB - 64).
pub const MAX_BUF_SIZE: u32 = u32::MAX - 63;

/// `enum doca_ec_matrix_types`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum MatrixType {
    /// `DOCA_CODING_MATRIX_CAUCHY`: coefficient (r, j) = inv((M + r) XOR j), as ISA-L.
    Cauchy = 1,
    /// `DOCA_CODING_MATRIX_VANDERMONDE`: coefficient (r, j) = (j + 1)^r.
    Vandermonde = 2,
}

impl TryFrom<u32> for MatrixType {
    type Error = Error;

    fn try_from(v: u32) -> Result<MatrixType> {
        match v {
            1 => Ok(MatrixType::Cauchy),
            2 => Ok(MatrixType::Vandermonde),
            _ => Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("{v} is not a matrix type (1: Cauchy, 2: Vandermonde)"),
            )),
        }
    }
}

fn codec_error(e: CodecError) -> Error {
    Error::with_context(ErrorCode::InvalidValue, e.to_string())
}

/// What a matrix object is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatrixRole {
    /// A coding matrix (create jobs, and the base of recover and update matrices).
    Coding,
    /// A recover matrix for one erasure pattern (recover jobs).
    Recover,
    /// An update matrix for one set of changed data blocks (update jobs).
    Update,
}

enum Plan {
    Coding { coding: CodingMatrix, gf: GfMatrix },
    Recover { decoder: Decoder },
    Update { updater: Updater },
}

struct MatrixInner {
    ctx_id: u64,
    data_count: usize,
    rdnc_count: usize,
    plan: Plan,
}

impl MatrixInner {
    fn gf(&self) -> &GfMatrix {
        match &self.plan {
            Plan::Coding { gf, .. } => gf,
            Plan::Recover { decoder } => decoder.matrix(),
            Plan::Update { updater } => updater.matrix(),
        }
    }

    fn role(&self) -> MatrixRole {
        match self.plan {
            Plan::Coding { .. } => MatrixRole::Coding,
            Plan::Recover { .. } => MatrixRole::Recover,
            Plan::Update { .. } => MatrixRole::Update,
        }
    }
}

/// Erasure coding's task table: the one declaration of its job and task types, handed
/// to a generator macro (`$gen`): [`doca_core::task_specs!`] makes [`tasks`] from it,
/// and the C faces make their 2.2 job translation and their 3.x task functions from it.
/// Record layout: buffer 0 the source blocks, 1 the destination; parameter 0 the
/// matrix's handle, the matrix itself kept alive as the record's object.
#[macro_export]
macro_rules! ec_task_table {
    ($gen:path) => {
        $gen! {
            lib: "ec",
            capability: Ec,
            topology: "ec",
            c3_handle: doca_ec3,
            tasks: [
                {
                    spec: GALOIS_MUL @ $crate::tasks::GALOIS_MUL,
                    module: galois_mul,
                    name: "galois_mul",
                    job: $crate::JOB_GALOIS_MUL,
                    job_types: [galois_mul = $crate::JOB_GALOIS_MUL],
                    inputs: [
                        handle coding_matrix: 0 (*const doca_ec_matrix)
                            get doca_ec_task_galois_mul_get_coding_matrix
                            set doca_ec_task_galois_mul_set_coding_matrix,
                        buf src_buf: 0 (*const doca_buf)
                            get doca_ec_task_galois_mul_get_src_buf
                            set doca_ec_task_galois_mul_set_src_buf,
                        buf dst_buf: 1 (*mut doca_buf)
                            get doca_ec_task_galois_mul_get_dst_buf
                            set doca_ec_task_galois_mul_set_dst_buf,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_ec_task_galois_mul,
                        cb: doca_ec_task_galois_mul_completion_cb_t,
                        set_conf: doca_ec_task_galois_mul_set_conf (num),
                        alloc_init: doca_ec_task_galois_mul_allocate_init,
                        as_task: doca_ec_task_galois_mul_as_task,
                        setters: void,
                        caps: [
                            supported doca_ec_cap_task_galois_mul_is_supported,
                        ],
                    },
                    c22: { doca_ec_job { matrix: coding_matrix, src_buff: src_buf, dst_buff: dst_buf } },
                },
                {
                    spec: CREATE @ $crate::tasks::CREATE,
                    module: create,
                    name: "create",
                    job: $crate::JOB_CREATE,
                    job_types: [create = $crate::JOB_CREATE],
                    inputs: [
                        handle coding_matrix: 0 (*const doca_ec_matrix)
                            get doca_ec_task_create_get_coding_matrix
                            set doca_ec_task_create_set_coding_matrix,
                        buf original_data_blocks: 0 (*const doca_buf)
                            get doca_ec_task_create_get_original_data_blocks
                            set doca_ec_task_create_set_original_data_blocks,
                        buf rdnc_blocks: 1 (*mut doca_buf)
                            get doca_ec_task_create_get_rdnc_blocks
                            set doca_ec_task_create_set_rdnc_blocks,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_ec_task_create,
                        cb: doca_ec_task_create_completion_cb_t,
                        set_conf: doca_ec_task_create_set_conf (num),
                        alloc_init: doca_ec_task_create_allocate_init,
                        as_task: doca_ec_task_create_as_task,
                        setters: void,
                        caps: [
                            supported doca_ec_cap_task_create_is_supported,
                        ],
                    },
                    c22: { doca_ec_job { matrix: coding_matrix, src_buff: original_data_blocks, dst_buff: rdnc_blocks } },
                },
                {
                    spec: UPDATE @ $crate::tasks::UPDATE,
                    module: update,
                    name: "update",
                    job: $crate::JOB_UPDATE,
                    job_types: [update = $crate::JOB_UPDATE],
                    inputs: [
                        handle update_matrix: 0 (*const doca_ec_matrix)
                            get doca_ec_task_update_get_update_matrix
                            set doca_ec_task_update_set_update_matrix,
                        buf original_updated_and_rdnc_blocks: 0 (*const doca_buf)
                            get doca_ec_task_update_get_original_updated_and_rdnc_blocks
                            set doca_ec_task_update_set_original_updated_and_rdnc_blocks,
                        buf updated_rdnc_blocks: 1 (*mut doca_buf)
                            get doca_ec_task_update_get_updated_rdnc_blocks
                            set doca_ec_task_update_set_updated_rdnc_blocks,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_ec_task_update,
                        cb: doca_ec_task_update_completion_cb_t,
                        set_conf: doca_ec_task_update_set_conf (num),
                        alloc_init: doca_ec_task_update_allocate_init,
                        as_task: doca_ec_task_update_as_task,
                        setters: void,
                        caps: [
                            supported doca_ec_cap_task_update_is_supported,
                        ],
                    },
                    c22: { doca_ec_job { matrix: update_matrix, src_buff: original_updated_and_rdnc_blocks, dst_buff: updated_rdnc_blocks } },
                },
                {
                    spec: RECOVER @ $crate::tasks::RECOVER,
                    module: recover,
                    name: "recover",
                    job: $crate::JOB_RECOVER,
                    job_types: [recover = $crate::JOB_RECOVER],
                    inputs: [
                        handle recover_matrix: 0 (*const doca_ec_matrix)
                            get doca_ec_task_recover_get_recover_matrix
                            set doca_ec_task_recover_set_recover_matrix,
                        buf available_blocks: 0 (*const doca_buf)
                            get doca_ec_task_recover_get_available_blocks
                            set doca_ec_task_recover_set_available_blocks,
                        buf recovered_data_blocks: 1 (*mut doca_buf)
                            get doca_ec_task_recover_get_recovered_data_blocks
                            set doca_ec_task_recover_set_recovered_data_blocks,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_ec_task_recover,
                        cb: doca_ec_task_recover_completion_cb_t,
                        set_conf: doca_ec_task_recover_set_conf (num),
                        alloc_init: doca_ec_task_recover_allocate_init,
                        as_task: doca_ec_task_recover_as_task,
                        setters: void,
                        caps: [
                            supported doca_ec_cap_task_recover_is_supported,
                        ],
                    },
                    c22: { doca_ec_job { matrix: recover_matrix, src_buff: available_blocks, dst_buff: recovered_data_blocks } },
                },
            ],
        }
    };
}

/// Erasure coding's task types, from [`ec_task_table!`].
pub mod tasks {
    crate::ec_task_table!(doca_core::task_specs);
}

/// A matrix object (`struct doca_matrix`) of one EC context. Clones share it; jobs in
/// flight keep it alive.
#[derive(Clone)]
pub struct Matrix {
    inner: Arc<MatrixInner>,
}

impl Matrix {
    /// The object a job's record keeps alive while in flight (its `aux`).
    pub fn as_aux(&self) -> Arc<dyn Any + Send + Sync> {
        self.inner.clone()
    }
}

impl fmt::Debug for Matrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Matrix")
            .field("role", &self.role())
            .field("data_count", &self.inner.data_count)
            .field("rdnc_count", &self.inner.rdnc_count)
            .field("inputs", &self.inputs())
            .field("outputs", &self.outputs())
            .finish()
    }
}

impl Matrix {
    /// What the matrix is for.
    pub fn role(&self) -> MatrixRole {
        self.inner.role()
    }

    /// M, the data block count of the coding matrix behind it.
    pub fn data_count(&self) -> usize {
        self.inner.data_count
    }

    /// K, the redundancy block count of the coding matrix behind it.
    pub fn rdnc_count(&self) -> usize {
        self.inner.rdnc_count
    }

    /// Blocks a job with this matrix reads (M for create and recover, 2u + K for update).
    pub fn inputs(&self) -> usize {
        self.inner.gf().cols()
    }

    /// Blocks a job with this matrix writes (K for create and update, the missing count
    /// for recover).
    pub fn outputs(&self) -> usize {
        self.inner.gf().rows()
    }

    /// For a recover matrix: the missing block indices, in output order.
    pub fn missing(&self) -> Option<&[usize]> {
        match &self.inner.plan {
            Plan::Recover { decoder } => Some(decoder.missing()),
            _ => None,
        }
    }

    /// For a recover matrix: the block indices a recover job's source holds, in order
    /// (the first M surviving blocks: data first, then redundancy).
    pub fn survivors(&self) -> Option<&[usize]> {
        match &self.inner.plan {
            Plan::Recover { decoder } => Some(decoder.survivors()),
            _ => None,
        }
    }

    /// For an update matrix: the changed data block indices, in source order.
    pub fn updated(&self) -> Option<&[usize]> {
        match &self.inner.plan {
            Plan::Update { updater } => Some(updater.changed()),
            _ => None,
        }
    }

    /// `doca_ec_matrix_destroy`. Jobs still in flight keep their matrix until they
    /// complete.
    pub fn destroy(self) -> Result<()> {
        Ok(())
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// An erasure coding context (`struct doca_ec`).
#[derive(Debug, Clone)]
pub struct Ec {
    ctx: Ctx,
    id: u64,
}

impl Default for Ec {
    fn default() -> Ec {
        Ec::new()
    }
}

fn supported(job_type: u32) -> Result<()> {
    if matches!(
        job_type,
        JOB_GALOIS_MUL | JOB_CREATE | JOB_UPDATE | JOB_RECOVER
    ) {
        Ok(())
    } else {
        Err(Error::with_context(
            ErrorCode::NotSupported,
            format!(
                "job type {job_type} is not an erasure coding job (galois_mul {JOB_GALOIS_MUL}, create {JOB_CREATE}, update {JOB_UPDATE}, recover {JOB_RECOVER})"
            ),
        ))
    }
}

impl Ec {
    /// `doca_ec_create`.
    pub fn new() -> Ec {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        Ec {
            ctx: Ctx::new(EcOps { id }),
            id,
        }
    }

    /// `doca_ec_as_ctx`.
    pub fn as_ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// `doca_ec_job_get_supported`.
    pub fn job_get_supported(devinfo: &DevInfo, job_type: u32) -> Result<()> {
        supported(job_type)?;
        doca_core::exec::job_supported_in(tasks::ALL, devinfo, job_type)
    }

    /// `doca_ec_get_max_buffer_size`: the largest data length of a job's source or
    /// destination buffer.
    pub fn max_buffer_size(devinfo: &DevInfo, job_type: u32) -> Result<u32> {
        Ec::job_get_supported(devinfo, job_type).map(|_| MAX_BUF_SIZE)
    }

    /// `doca_ec_get_max_list_buf_num_elem`.
    pub fn max_list_buf_num_elem(devinfo: &DevInfo) -> Result<u32> {
        if !devinfo.has_capability(Capability::Ec) {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "device {} does not support erasure coding",
                    devinfo.pci_addr_str()
                ),
            ));
        }
        Ok(MAX_LIST_ELEMENTS)
    }

    fn matrix(&self, coding: CodingMatrix) -> Result<Matrix> {
        let gf = GfMatrix::new(coding.rdnc_count(), coding.data_count(), coding.coefs())
            .map_err(codec_error)?;
        Ok(Matrix {
            inner: Arc::new(MatrixInner {
                ctx_id: self.id,
                data_count: coding.data_count(),
                rdnc_count: coding.rdnc_count(),
                plan: Plan::Coding { coding, gf },
            }),
        })
    }

    /// `doca_ec_matrix_create`: an M x K coding matrix (M data blocks 1..=128, K
    /// redundancy blocks 1..=32).
    pub fn matrix_create(
        &self,
        kind: MatrixType,
        data_count: usize,
        rdnc_count: usize,
    ) -> Result<Matrix> {
        let kind = match kind {
            MatrixType::Cauchy => MatrixKind::Cauchy,
            MatrixType::Vandermonde => MatrixKind::Vandermonde,
        };
        self.matrix(CodingMatrix::new(kind, data_count, rdnc_count).map_err(codec_error)?)
    }

    /// `doca_ec_matrix_from_raw`: caller coefficients, `raw[j * K + r]` for data block
    /// j and redundancy block r (`data_count * rdnc_count` bytes).
    pub fn matrix_from_raw(
        &self,
        raw: &[u8],
        data_count: usize,
        rdnc_count: usize,
    ) -> Result<Matrix> {
        self.matrix(CodingMatrix::from_raw(raw, data_count, rdnc_count).map_err(codec_error)?)
    }

    fn coding_of<'m>(&self, m: &'m Matrix, what: &str) -> Result<&'m CodingMatrix> {
        if m.inner.ctx_id != self.id {
            return Err(Error::invalid(format!(
                "the coding matrix belongs to another EC context; create the {what} matrix with the context that made it"
            )));
        }
        match &m.inner.plan {
            Plan::Coding { coding, .. } => Ok(coding),
            _ => Err(Error::invalid(format!(
                "a {what} matrix is made from a coding matrix (matrix_create or matrix_from_raw), not from a {:?} matrix",
                m.role()
            ))),
        }
    }

    /// `doca_ec_recover_matrix_create`: rebuilds the blocks in `missing` (data 0..M,
    /// redundancy M..M+K; at most K of them), in that order. `InvalidValue` for a pattern
    /// the coding matrix cannot recover (possible with Vandermonde or raw matrices).
    pub fn recover_matrix_create(&self, coding: &Matrix, missing: &[u32]) -> Result<Matrix> {
        let c = self.coding_of(coding, "recover")?;
        let missing: Vec<usize> = missing.iter().map(|&i| i as usize).collect();
        let decoder = Decoder::new(c, &missing).map_err(codec_error)?;
        Ok(Matrix {
            inner: Arc::new(MatrixInner {
                ctx_id: self.id,
                data_count: c.data_count(),
                rdnc_count: c.rdnc_count(),
                plan: Plan::Recover { decoder },
            }),
        })
    }

    /// `doca_ec_update_matrix_create`: new redundancy after the data blocks in
    /// `updated` (indices 0..M) changed.
    pub fn update_matrix_create(&self, coding: &Matrix, updated: &[u32]) -> Result<Matrix> {
        let c = self.coding_of(coding, "update")?;
        let updated: Vec<usize> = updated.iter().map(|&i| i as usize).collect();
        let updater = Updater::new(c, &updated).map_err(codec_error)?;
        Ok(Matrix {
            inner: Arc::new(MatrixInner {
                ctx_id: self.id,
                data_count: c.data_count(),
                rdnc_count: c.rdnc_count(),
                plan: Plan::Update { updater },
            }),
        })
    }
}

mod op {
    /// Only this crate names erasure coding operations.
    pub trait Sealed {}
}

/// An erasure coding operation: the type of [`EcJob`]s that run it.
pub trait EcOp: op::Sealed {
    /// Its job type (`DOCA_EC_JOB_*`).
    const TYPE: u32;
}

/// Create: M data blocks in, K redundancy blocks out (a coding matrix).
#[derive(Debug)]
pub enum Create {}
/// Recover: the M surviving blocks in, the missing blocks out (a recover matrix).
#[derive(Debug)]
pub enum Recover {}
/// Update: old1, new1, ..., oldu, newu, then the K redundancy blocks in; the new
/// redundancy blocks out (an update matrix).
#[derive(Debug)]
pub enum Update {}
/// Galois multiply: the matrix's input blocks in, its output blocks out (any matrix).
#[derive(Debug)]
pub enum GaloisMul {}

impl op::Sealed for Create {}
impl op::Sealed for Recover {}
impl op::Sealed for Update {}
impl op::Sealed for GaloisMul {}
impl EcOp for Create {
    const TYPE: u32 = JOB_CREATE;
}
impl EcOp for Recover {
    const TYPE: u32 = JOB_RECOVER;
}
impl EcOp for Update {
    const TYPE: u32 = JOB_UPDATE;
}
impl EcOp for GaloisMul {
    const TYPE: u32 = JOB_GALOIS_MUL;
}

/// An erasure coding job of operation `O` (`struct doca_ec_job`, `doca_ec_job_create`,
/// `doca_ec_job_update`, `doca_ec_job_recover`): a matrix, a source (one buffer or a
/// list) with the input blocks back to back, and a destination buffer the output
/// blocks are appended to. One type per operation: [`EcCreateJob`], [`EcRecoverJob`],
/// [`EcUpdateJob`], [`EcGaloisMulJob`].
pub struct EcJob<O: EcOp> {
    /// The matrix.
    pub matrix: Matrix,
    /// Source buffer (or list head).
    pub src: Buf,
    /// Destination buffer.
    pub dst: Buf,
    /// Echoed in the completion.
    pub user_data: Data,
    op: std::marker::PhantomData<O>,
}

/// A create job.
pub type EcCreateJob = EcJob<Create>;
/// A recover job.
pub type EcRecoverJob = EcJob<Recover>;
/// An update job.
pub type EcUpdateJob = EcJob<Update>;
/// A Galois multiply job.
pub type EcGaloisMulJob = EcJob<GaloisMul>;

impl<O: EcOp> fmt::Debug for EcJob<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EcJob")
            .field("type", &role_name(O::TYPE))
            .field("matrix", &self.matrix)
            .field("src", &self.src)
            .field("dst", &self.dst)
            .field("user_data", &self.user_data)
            .finish()
    }
}

impl<O: EcOp> EcJob<O> {
    /// The job type.
    pub const TYPE: u32 = O::TYPE;
    /// Record slot of the source.
    pub const SRC: usize = JobRecord::SRC;
    /// Record slot of the destination.
    pub const DST: usize = JobRecord::DST;

    /// A job of this operation.
    pub fn new(matrix: &Matrix, src: Buf, dst: Buf, user_data: u64) -> EcJob<O> {
        EcJob {
            matrix: matrix.clone(),
            src,
            dst,
            user_data: Data(user_data),
            op: std::marker::PhantomData,
        }
    }
}

impl<O: EcOp> Job for EcJob<O> {
    fn into_record(self) -> JobRecord {
        let mut r = JobRecord::new(O::TYPE, self.user_data);
        r.set_buf(JobRecord::SRC, self.src);
        r.set_buf(JobRecord::DST, self.dst);
        r.aux = Some(self.matrix.inner as Arc<dyn Any + Send + Sync>);
        r
    }
}

/// The record of an erasure coding job whose type is chosen at run time
/// (`job_type` one of the `JOB_*` constants; others are refused at submission).
pub fn job_record(job_type: u32, matrix: &Matrix, src: Buf, dst: Buf, user_data: u64) -> JobRecord {
    let mut r = JobRecord::new(job_type, Data(user_data));
    r.set_buf(JobRecord::SRC, src);
    r.set_buf(JobRecord::DST, dst);
    r.aux = Some(matrix.inner.clone() as Arc<dyn Any + Send + Sync>);
    r
}

/// The record of an erasure coding job of any type whose buffers stay the caller's (the
/// C face); the record keeps the matrix alive.
///
/// # Safety
/// `src` and `dst` must be live descriptors until the job completes.
pub unsafe fn record_borrowed(
    job_type: u32,
    matrix: &Matrix,
    src: *mut doca_core::BufDesc,
    dst: *mut doca_core::BufDesc,
    user_data: Data,
) -> JobRecord {
    let mut r = JobRecord::new(job_type, user_data);
    // SAFETY: the caller keeps both descriptors live while the job is in flight.
    unsafe {
        r.set_buf_raw(JobRecord::SRC, src);
        r.set_buf_raw(JobRecord::DST, dst);
    }
    r.aux = Some(matrix.inner.clone() as Arc<dyn Any + Send + Sync>);
    r
}

struct EcOps {
    id: u64,
}

/// A job's checked shape: the matrix, its buffers and the block size.
struct Shape<'a> {
    matrix: &'a MatrixInner,
    src: &'a BufDesc,
    dst: &'a BufDesc,
    /// One snapshot of the source elements' data spans (address, length): checks and
    /// coding use these, whatever other handles do to the buffers meanwhile.
    spans: [(usize, usize); MAX_LIST_ELEMENTS as usize],
    n_spans: usize,
    /// Where the results go: the destination's tailroom at the snapshot.
    out_at: usize,
    block: usize,
}

fn ranges_overlap(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.0 + b.1 && b.0 < a.0 + a.1 && a.1 > 0 && b.1 > 0
}

fn role_name(job_type: u32) -> &'static str {
    match job_type {
        JOB_CREATE => "create",
        JOB_UPDATE => "update",
        JOB_RECOVER => "recover",
        _ => "galois_mul",
    }
}

impl EcOps {
    fn shape<'a>(&self, job: &'a JobRecord) -> Result<Shape<'a>> {
        let matrix = job
            .aux
            .as_ref()
            .and_then(|a| a.downcast_ref::<MatrixInner>())
            .ok_or_else(|| Error::invalid("EC job has no matrix"))?;
        if matrix.ctx_id != self.id {
            return Err(Error::invalid(
                "the job's matrix belongs to another EC context; create matrices with the context the job is submitted to",
            ));
        }
        let want = match job.job_type {
            JOB_CREATE => Some(MatrixRole::Coding),
            JOB_UPDATE => Some(MatrixRole::Update),
            JOB_RECOVER => Some(MatrixRole::Recover),
            _ => None,
        };
        // A recover job multiplies whatever matrix it is given with the blocks it is
        // given, as DOCA's engine does: with a coding matrix, the blocks it combines are
        // the product. NVIDIA's storage service rebuilds a lost half of a 2+1 stripe so
        // (coding matrix, the other half and the parity); with the all-ones parity row
        // of a Vandermonde code that product is the lost half.
        let recover_by_coding = job.job_type == JOB_RECOVER && matrix.role() == MatrixRole::Coding;
        if let Some(w) = want
            && matrix.role() != w
            && !recover_by_coding
        {
            return Err(Error::invalid(format!(
                "a {} job needs a {w:?} matrix, got a {:?} matrix",
                role_name(job.job_type),
                matrix.role()
            )));
        }
        let (Some(src), Some(dst)) = (job.buf(JobRecord::SRC), job.buf(JobRecord::DST)) else {
            return Err(Error::invalid(
                "EC job needs a source and a destination buffer",
            ));
        };
        let gf = matrix.gf();
        let (cols, rows) = (gf.cols(), gf.rows());
        if src.num_elements() > MAX_LIST_ELEMENTS {
            return Err(Error::invalid(format!(
                "source list has {} elements; at most {MAX_LIST_ELEMENTS}",
                src.num_elements()
            )));
        }
        let mut spans = [(0usize, 0usize); MAX_LIST_ELEMENTS as usize];
        let mut n_spans = 0;
        for (slot, e) in spans.iter_mut().zip(src.iter()) {
            *slot = e.data_span();
            n_spans += 1;
        }
        let spans_now = &spans[..n_spans];
        if let Some(&(_, len)) = spans_now.iter().find(|(_, len)| !len.is_multiple_of(64)) {
            return Err(Error::invalid(format!(
                "every source element's data length must be a multiple of 64 bytes (pad buffers to 64 B); found {len}"
            )));
        }
        if !dst.is_last() || !dst.is_first() {
            return Err(Error::invalid(
                "the destination must be one buffer, not a list",
            ));
        }
        let total: usize = spans_now.iter().map(|s| s.1).sum();
        if total > MAX_BUF_SIZE as usize {
            return Err(Error::invalid(format!(
                "source data length {total} exceeds the maximum buffer size {MAX_BUF_SIZE}"
            )));
        }
        if total == 0 || !total.is_multiple_of(cols) {
            return Err(Error::invalid(format!(
                "source data length {total} is not {cols} equal blocks (the {} job's block count)",
                role_name(job.job_type)
            )));
        }
        let block = total / cols;
        ec_codec::check_block_len(block).map_err(codec_error)?;
        let out = rows * block;
        let (out_at, room) = job.dst_tail(dst);
        if room < out {
            return Err(Error::invalid(format!(
                "destination tailroom is {room} bytes; the job appends {rows} blocks of {block} bytes ({out} bytes)"
            )));
        }
        if spans_now.iter().any(|&s| ranges_overlap(s, (out_at, out))) {
            return Err(Error::invalid("source and destination buffers overlap"));
        }
        Ok(Shape {
            matrix,
            src,
            dst,
            spans,
            n_spans,
            out_at,
            block,
        })
    }
}

/// Jobs at least this large (bytes read and written) share their work with the
/// engine's threads...
const PAR_MIN_BYTES: usize = 4 << 20;
/// ...in pieces of at least this many bytes of each block.
const PAR_MIN_PIECE: usize = 64 << 10;

impl CtxOps for EcOps {
    fn tasks(&self) -> &'static [&'static doca_core::exec::TaskSpec] {
        tasks::ALL
    }
    fn name(&self) -> &'static str {
        "erasure coding"
    }

    fn capability(&self) -> Capability {
        Capability::Ec
    }

    fn handles(&self, job_type: u32) -> bool {
        supported(job_type).is_ok()
    }
}

impl JobOps for EcOps {
    fn validate(&self, job: &mut JobRecord, _dev: &Dev) -> Result<()> {
        self.shape(job).map(|_| ())
    }

    fn execute(&self, job: &mut JobRecord, env: &ExecEnv<'_>) -> Result<()> {
        let s = self.shape(job)?;
        let dev = env.dev();
        if s.src.iter().any(|e| !e.mmap_has_device(dev)) || !s.dst.mmap_has_device(dev) {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "a buffer's mmap was not given access to the context's device (mmap dev_add)",
            ));
        }
        if s.src.iter().any(|e| e.remote().is_some()) || s.dst.remote().is_some() {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "erasure coding jobs work on this process's memory: bring imported memory in with a DMA job first",
            ));
        }
        if !s
            .dst
            .mmap_permissions()
            .contains(AccessFlags::LOCAL_READ_WRITE)
        {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "the destination's mmap does not grant write access (DOCA_ACCESS_LOCAL_READ_WRITE)",
            ));
        }
        // Shaped again under the io locks, from one snapshot of the buffers: another job
        // into the same destination may have taken its room since the first look. The
        // result's room is claimed before the locks go.
        with_io_locked(&[s.src], &[s.dst], || {
            let s = self.shape(job)?;
            run(&s, env);
            job.grow_dst_at_delivery(s.matrix.gf().rows() * s.block)
        })
        .ok_or_else(|| Error::invalid("job spans more than 16 mmaps"))?
    }
}

/// Runs the matrix over the job's blocks, splitting a large job across the engine.
fn run(s: &Shape<'_>, env: &ExecEnv<'_>) {
    let gf = s.matrix.gf();
    let bytes = (gf.rows() + gf.cols()) * s.block;
    let threads = env.threads();
    if threads > 1 && bytes >= PAR_MIN_BYTES && s.block >= 2 * PAR_MIN_PIECE {
        let pieces = (s.block / PAR_MIN_PIECE).min(2 * threads);
        let per = (s.block / pieces).next_multiple_of(64);
        env.parallel(pieces, &|i| {
            let a = (i * per).min(s.block);
            let b = if i + 1 == pieces {
                s.block
            } else {
                ((i + 1) * per).min(s.block)
            };
            run_span(s, a, b);
        });
    } else {
        run_span(s, 0, s.block);
    }
}

/// Runs the matrix over bytes `[a, b)` of every block. A source list may cut blocks
/// at element edges (multiples of 64): the span is split there so that each piece of
/// every block is contiguous.
fn run_span(s: &Shape<'_>, a: usize, b: usize) {
    let gf = s.matrix.gf();
    let (cols, rows, block) = (gf.cols(), gf.rows(), s.block);
    // In-block offsets where some element starts, inside (a, b).
    let mut cuts = [0usize; MAX_LIST_ELEMENTS as usize + 2];
    let mut n = 0;
    cuts[n] = a;
    n += 1;
    let spans = &s.spans[..s.n_spans];
    let mut pos = 0;
    for &(_, len) in spans {
        let off = pos % block;
        if pos > 0 && off > a && off < b && !cuts[..n].contains(&off) {
            cuts[n] = off;
            n += 1;
        }
        pos += len;
    }
    cuts[n] = b;
    n += 1;
    cuts[..n].sort_unstable();
    let dst = s.out_at;
    let mut ins = [std::ptr::null::<u8>(); MAX_COLS];
    let mut outs = [std::ptr::null_mut::<u8>(); MAX_ROWS];
    for w in cuts[..n].windows(2) {
        let (lo, hi) = (w[0], w[1]);
        if hi <= lo {
            continue;
        }
        // Each block's bytes at offset `lo`: walk the list once, blocks in order.
        let mut elems = spans.iter();
        let mut cur = elems.next();
        let mut start = 0usize;
        for (c, p) in ins.iter_mut().take(cols).enumerate() {
            let want = c * block + lo;
            while let Some(&(_, len)) = cur {
                if want < start + len {
                    break;
                }
                start += len;
                cur = elems.next();
            }
            let Some(&(addr, _)) = cur else {
                return;
            };
            *p = (addr + (want - start)) as *const u8;
        }
        for (r, p) in outs.iter_mut().take(rows).enumerate() {
            *p = (dst + r * block + lo) as *mut u8;
        }
        // SAFETY: each input pointer starts `hi - lo` contiguous source bytes inside one
        // element's data (no element edge falls inside (lo, hi) of any block); each output
        // lies in the destination's tailroom (checked: room for rows x block bytes); the
        // outputs do not overlap each other or the sources (checked); the job holds its
        // byte ranges; lengths and offsets are multiples of 64.
        unsafe { gf.run_raw(&ins[..cols], &outs[..rows], hi - lo, 1) };
    }
}
