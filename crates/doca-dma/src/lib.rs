//! DOCA DMA in software: a context whose memcpy jobs copy between buffers (and
//! scatter-gather lists of them) of mmaps the device may reach.
//!
//! ```
//! use doca_core::{devinfo_list, AccessFlags, BufInventory, Mmap, WorkQ};
//! use doca_dma::{Dma, MemcpyJob};
//!
//! let dev = devinfo_list()?[0].open()?;
//! let mut mmap = Mmap::new();
//! mmap.set_memory(vec![0u8; 1 << 16])?;
//! mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE)?;
//! mmap.dev_add(&dev)?;
//! mmap.start()?;
//! let mut inv = BufInventory::new(4)?;
//! inv.start()?;
//! let mut src = inv.buf_at(&mmap, 0, 4096)?;
//! src.append(b"copied by DMA")?;
//! let dst = inv.buf_at(&mmap, 8192, 4096)?;
//!
//! let dma = Dma::new();
//! dma.as_ctx().dev_add(&dev)?;
//! dma.as_ctx().start()?;
//! let mut wq = WorkQ::new(8)?;
//! dma.as_ctx().workq_add(&mut wq)?;
//! wq.submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, 7)).map_err(|(e, _)| e)?;
//! let mut done = wq.wait(None)?;
//! assert_eq!(done.event().user_data.u64(), 7);
//! let dst = done.take_buf(MemcpyJob::DST).unwrap();
//! assert_eq!(dst.data_to_vec(), b"copied by DMA");
//! # drop(done); dma.as_ctx().workq_rm(&mut wq)?;
//! # Ok::<(), doca_core::Error>(())
//! ```

use doca_core::device::Capability;
use doca_core::exec::{CtxOps, ExecEnv, Job, JobOps, JobRecord};
use doca_core::memory::with_io_locked;
use doca_core::types::action;
use doca_core::{BufDesc, Ctx, Data, Dev, DevInfo, Error, ErrorCode, RemoteMemory, Result};

/// `DOCA_DMA_JOB_MEMCPY`.
pub const JOB_MEMCPY: u32 = action::DMA_FIRST + 1;
/// Most elements of a source or destination list.
pub const MAX_LIST_ELEMENTS: u32 = 256;
/// Largest copy (2 GiB).
pub const MAX_BUF_SIZE: u64 = 1 << 31;

/// DMA's task table: the one declaration of its job and task types, handed to a
/// generator macro (`$gen`): [`doca_core::task_specs!`] makes [`tasks`] from it, and the C
/// faces make their 2.2 job translation and their 3.x task functions from it. Record
/// layout: buffer 0 the source, 1 the destination.
#[macro_export]
macro_rules! dma_task_table {
    ($gen:path) => {
        $gen! {
            lib: "dma",
            capability: Dma,
            topology: "dma",
            c3_handle: doca_dma3,
            tasks: [
                {
                    spec: MEMCPY @ $crate::tasks::MEMCPY,
                    module: memcpy,
                    name: "memcpy",
                    job: $crate::JOB_MEMCPY,
                    job_types: [memcpy = $crate::JOB_MEMCPY],
                    inputs: [
                        buf src: 0 (*const doca_buf)
                            get doca_dma_task_memcpy_get_src
                            set doca_dma_task_memcpy_set_src,
                        buf dst: 1 (*mut doca_buf)
                            get doca_dma_task_memcpy_get_dst
                            set doca_dma_task_memcpy_set_dst,
                    ],
                    write_back: [],
                    hooks: doca_core::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_dma_task_memcpy,
                        cb: doca_dma_task_memcpy_completion_cb_t,
                        set_conf: doca_dma_task_memcpy_set_conf (num),
                        alloc_init: doca_dma_task_memcpy_alloc_init,
                        as_task: doca_dma_task_memcpy_as_task,
                        setters: void,
                        caps: [
                            supported doca_dma_cap_task_memcpy_is_supported,
                            value doca_dma_cap_task_memcpy_get_max_buf_list_len (u32) = $crate::MAX_LIST_ELEMENTS,
                            value doca_dma_cap_task_memcpy_get_max_buf_size (u64) = $crate::MAX_BUF_SIZE,
                        ],
                    },
                    c22: { doca_dma_job_memcpy { src_buff: src, dst_buff: dst } },
                },
            ],
        }
    };
}

/// DMA's task types, from [`dma_task_table!`].
pub mod tasks {
    crate::dma_task_table!(doca_core::task_specs);
}

/// A DMA context (`struct doca_dma`).
#[derive(Debug, Clone)]
pub struct Dma {
    ctx: Ctx,
}

impl Default for Dma {
    fn default() -> Dma {
        Dma::new()
    }
}

impl Dma {
    /// `doca_dma_create`.
    pub fn new() -> Dma {
        Dma {
            ctx: Ctx::new(DmaOps),
        }
    }

    /// `doca_dma_as_ctx`.
    pub fn as_ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// `doca_dma_job_get_supported`.
    pub fn job_get_supported(devinfo: &DevInfo, job_type: u32) -> Result<()> {
        if job_type != JOB_MEMCPY {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "the DMA library has only the memcpy job type",
            ));
        }
        doca_core::exec::job_supported_in(tasks::ALL, devinfo, job_type)
    }

    /// `doca_dma_get_max_list_buf_num_elem`.
    pub fn max_list_buf_num_elem(devinfo: &DevInfo) -> Result<u32> {
        Dma::job_get_supported(devinfo, JOB_MEMCPY).map(|_| MAX_LIST_ELEMENTS)
    }

    /// `doca_dma_get_max_buf_size`.
    pub fn max_buf_size(devinfo: &DevInfo) -> Result<u64> {
        Dma::job_get_supported(devinfo, JOB_MEMCPY).map(|_| MAX_BUF_SIZE)
    }
}

/// A memcpy job (`struct doca_dma_job_memcpy`): the source list's data is appended to
/// the destination list's tailrooms, whose data lengths grow.
#[derive(Debug)]
pub struct MemcpyJob {
    /// Source buffer (or list head).
    pub src: doca_core::Buf,
    /// Destination buffer (or list head).
    pub dst: doca_core::Buf,
    /// Echoed in the completion.
    pub user_data: Data,
}

impl MemcpyJob {
    /// The job type.
    pub const TYPE: u32 = JOB_MEMCPY;
    /// Record slot of the source.
    pub const SRC: usize = JobRecord::SRC;
    /// Record slot of the destination.
    pub const DST: usize = JobRecord::DST;

    /// A memcpy job.
    pub fn new(src: doca_core::Buf, dst: doca_core::Buf, user_data: u64) -> MemcpyJob {
        MemcpyJob {
            src,
            dst,
            user_data: Data(user_data),
        }
    }
}

impl MemcpyJob {
    /// The record of a memcpy job whose buffers stay the caller's (the C face: the
    /// submitter keeps its references and leaves the buffers alone while in flight).
    ///
    /// # Safety
    /// `src` and `dst` must be live descriptors until the job completes.
    pub unsafe fn record_borrowed(
        src: *mut doca_core::BufDesc,
        dst: *mut doca_core::BufDesc,
        user_data: Data,
    ) -> JobRecord {
        let mut r = JobRecord::new(JOB_MEMCPY, user_data);
        // SAFETY: the caller's contract.
        unsafe { MemcpyJob::fill_borrowed(&mut r, src, dst, user_data) };
        r
    }

    /// The record parameter that, when not 0, makes a memcpy copy that many bytes
    /// from the source's head to the destination's head (the 1.x job's
    /// `num_bytes_to_copy`) instead of the source's data into the destination's
    /// tailroom.
    pub const BYTES: usize = 0;

    /// [`record_borrowed`](MemcpyJob::record_borrowed) written into `r`, an empty
    /// record ([`JobRecord::new`]) where a work queue keeps it.
    ///
    /// # Safety
    /// `src` and `dst` must be live descriptors until the job completes.
    #[inline]
    pub unsafe fn fill_borrowed(
        r: &mut JobRecord,
        src: *mut doca_core::BufDesc,
        dst: *mut doca_core::BufDesc,
        user_data: Data,
    ) {
        r.job_type = JOB_MEMCPY;
        r.user_data = user_data;
        // SAFETY: the caller keeps both descriptors live while the job is in flight.
        unsafe {
            r.set_buf_raw(MemcpyJob::SRC, src);
            r.set_buf_raw(MemcpyJob::DST, dst);
        }
    }
}

impl Job for MemcpyJob {
    fn into_record(self) -> JobRecord {
        let mut r = JobRecord::new(JOB_MEMCPY, self.user_data);
        r.set_buf(MemcpyJob::SRC, self.src);
        r.set_buf(MemcpyJob::DST, self.dst);
        r
    }
}

struct DmaOps;

fn ranges_overlap(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.0 + b.1 && b.0 < a.0 + a.1 && a.1 > 0 && b.1 > 0
}

impl CtxOps for DmaOps {
    fn tasks(&self) -> &'static [&'static doca_core::exec::TaskSpec] {
        tasks::ALL
    }
    fn name(&self) -> &'static str {
        "dma"
    }

    fn capability(&self) -> Capability {
        Capability::Dma
    }

    fn handles(&self, job_type: u32) -> bool {
        job_type == JOB_MEMCPY
    }
}

impl JobOps for DmaOps {
    fn validate(&self, job: &mut JobRecord, _dev: &Dev) -> Result<()> {
        let (Some(dst), Some(src)) = (job.buf(MemcpyJob::DST), job.buf(MemcpyJob::SRC)) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "memcpy job needs a source and a destination buffer",
            ));
        };
        let is_list = src.next().is_some() || dst.next().is_some();
        if is_list
            && (src.num_elements() > MAX_LIST_ELEMENTS || dst.num_elements() > MAX_LIST_ELEMENTS)
        {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "buffer list has more elements than the DMA maximum (256)",
            ));
        }
        Ok(())
    }

    fn execute(&self, job: &mut JobRecord, env: &ExecEnv<'_>) -> Result<()> {
        let (Some(dst), Some(src)) = (job.buf(MemcpyJob::DST), job.buf(MemcpyJob::SRC)) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "memcpy job needs a source and a destination buffer",
            ));
        };
        if job.params[0] != 0 {
            return copy_heads(src, dst, job.params[0], env);
        }
        if src.list_data_len() == 0 {
            // As on the hardware: a copy of nothing fails (in the completion).
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the memcpy source holds no data (data length 0)",
            ));
        }
        copy(job, src, dst, env)
    }
}

/// Gathers `src`'s data into `dst`'s tailrooms.
fn copy(job: &JobRecord, src: &BufDesc, dst: &BufDesc, env: &ExecEnv<'_>) -> Result<()> {
    if src.next().is_none() && dst.next().is_none() {
        return copy_one(job, src, dst, env);
    }
    let dev = env.dev();
    for e in src.iter().chain(dst.iter()) {
        if !e.mmap_has_device(dev) {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "a buffer's mmap was not given access to the context's device (mmap dev_add)",
            ));
        }
    }
    if let Some(d) = dst.iter().find(|e| !e.mmap_writable()) {
        return Err(not_writable(d));
    }
    let total = src.list_data_len();
    if total as u64 > MAX_BUF_SIZE {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "source is larger than the DMA maximum (2 GiB)",
        ));
    }
    let room: usize = dst.iter().map(BufDesc::tailroom).sum();
    if room < total {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "destination tailroom is smaller than the source data",
        ));
    }
    for s in src.iter() {
        for d in dst.iter() {
            if same_space(s, d) && ranges_overlap(s.data_span(), d.tail_span()) {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    "source and destination buffers overlap",
                ));
            }
        }
    }
    let mut out = Ok(());
    if with_io_locked(&[src], &[dst], || out = gather(job, src, dst, total, env)).is_none() {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "job spans more than 16 mmaps",
        ));
    }
    out
}

/// [`copy`] of one buffer into one buffer: the same checks, in a straight line.
fn copy_one(job: &JobRecord, src: &BufDesc, dst: &BufDesc, env: &ExecEnv<'_>) -> Result<()> {
    check_access(src, dst, env)?;
    if src.data_len() as u64 > MAX_BUF_SIZE {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "source is larger than the DMA maximum (2 GiB)",
        ));
    }
    let mut out = Ok(());
    with_io_locked(&[src], &[dst], || {
        // Under the lock, one snapshot of each buffer: another job into the same
        // destination may have taken its room since submission, and other handles may
        // have moved the data. Nothing is written unless all of it fits.
        let (from, n) = src.data_span();
        let (to, room) = job.dst_tail(dst);
        if n > room {
            out = Err(Error::with_context(
                ErrorCode::InvalidValue,
                "destination tailroom is smaller than the source data",
            ));
            return;
        }
        if same_space(src, dst) && ranges_overlap((from, n), (to, room)) {
            out = Err(Error::with_context(
                ErrorCode::InvalidValue,
                "source and destination buffers overlap",
            ));
            return;
        }
        if env.threads() > 1 && n >= PAR_MIN_BYTES {
            out = gather(job, src, dst, n, env);
            return;
        }
        // SAFETY: both spans lie inside their buffers, inside started mmaps kept alive by
        // the job's buffers (or in an exporter's range, reached through it); they do not
        // overlap (checked); the job holds their bytes.
        out = unsafe { move_bytes(src.remote(), from, dst.remote(), to, n) }
            .and_then(|()| job.grow_dst_at_delivery(n));
    });
    out
}

/// A single source and destination the context's device may use: both mmaps reach it,
/// and the destination's may be written.
#[inline]
fn check_access(src: &BufDesc, dst: &BufDesc, env: &ExecEnv<'_>) -> Result<()> {
    let dev = env.dev();
    if !src.mmap_has_device(dev) || !dst.mmap_has_device(dev) {
        return Err(Error::with_context(
            ErrorCode::NotPermitted,
            "a buffer's mmap was not given access to the context's device (mmap dev_add)",
        ));
    }
    if !dst.mmap_writable() {
        return Err(not_writable(dst));
    }
    Ok(())
}

/// The 1.x memcpy ([`MemcpyJob::BYTES`] set): `n` bytes from the source's head to the
/// destination's head, whatever their data sections say (1.x buffers have none); the
/// data sections are left as they are.
fn copy_heads(src: &BufDesc, dst: &BufDesc, n: u64, env: &ExecEnv<'_>) -> Result<()> {
    if src.next().is_some() || dst.next().is_some() {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "a copy of num_bytes_to_copy takes single buffers, not lists",
        ));
    }
    check_access(src, dst, env)?;
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    if n as u64 > MAX_BUF_SIZE {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "num_bytes_to_copy is larger than the DMA maximum (2 GiB)",
        ));
    }
    if n > src.len() || n > dst.len() {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "num_bytes_to_copy is larger than the source or the destination buffer",
        ));
    }
    let (from, to) = (src.head() as usize, dst.head() as usize);
    if same_space(src, dst) && ranges_overlap((from, n), (to, n)) {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "source and destination buffers overlap",
        ));
    }
    let mut out = Ok(());
    with_io_locked(&[src], &[dst], || {
        // SAFETY: both ranges lie inside their buffers' fixed ranges (checked against
        // the lengths above), inside started mmaps kept alive by the job's buffers (or
        // in an exporter's range, reached through it); they do not overlap; the job
        // holds their bytes.
        out = unsafe { move_bytes(src.remote(), from, dst.remote(), to, n) };
    });
    out
}

/// The error of a destination the job may not write.
fn not_writable(d: &BufDesc) -> Error {
    match d.remote() {
        Some(r) => r.read_only(),
        None => Error::with_context(
            ErrorCode::NotPermitted,
            "the destination's mmap does not grant write access (DOCA_ACCESS_LOCAL_READ_WRITE)",
        ),
    }
}

/// Whether two buffers' addresses are in one address space (both local, or both in one
/// exporter's), so that their ranges can overlap.
fn same_space(a: &BufDesc, b: &BufDesc) -> bool {
    match (a.remote(), b.remote()) {
        (None, None) => true,
        (Some(x), Some(y)) => x.exporter_pid() == y.exporter_pid(),
        _ => false,
    }
}

/// Bytes one bounce of a copy between two exporters' memories carries.
const BOUNCE: usize = 16 << 10;

/// Copies `n` bytes from `sp` to `dp`, each an address of this process (`None`) or of
/// an exporter's memory.
///
/// # Safety
/// Local ranges must be valid (the source for reads, the destination for writes), not
/// overlap, and be held by the caller's job.
unsafe fn move_bytes(
    sr: Option<&RemoteMemory>,
    sp: usize,
    dr: Option<&RemoteMemory>,
    dp: usize,
    n: usize,
) -> Result<()> {
    // SAFETY: (all arms) the caller's promise covers the local ranges; remote ones are
    // checked and reached by the kernel.
    unsafe {
        match (sr, dr) {
            (None, None) => {
                std::ptr::copy_nonoverlapping(sp as *const u8, dp as *mut u8, n);
                Ok(())
            }
            (Some(r), None) => r.read_raw(sp, dp as *mut u8, n),
            (None, Some(w)) => w.write_raw(dp, sp as *const u8, n),
            (Some(r), Some(w)) => {
                let mut bounce = [0u8; BOUNCE];
                let mut off = 0;
                while off < n {
                    let m = (n - off).min(BOUNCE);
                    r.read_raw(sp + off, bounce.as_mut_ptr(), m)?;
                    w.write_raw(dp + off, bounce.as_ptr(), m)?;
                    off += m;
                }
                Ok(())
            }
        }
    }
}

/// The error of a job whose destination room went to another job first.
fn room_taken() -> Error {
    Error::with_context(
        ErrorCode::InvalidValue,
        "destination tailroom is smaller than the source data (another job in flight took it)",
    )
}

/// Copies that share their work with the engine's other threads: at least this much...
const PAR_MIN_BYTES: usize = 4 << 20;
/// ...in pieces of at least this much.
const PAR_PIECE: usize = 1 << 20;

/// Appends `src`'s data (`total` bytes) to `dst`'s tailrooms (checked to fit), under the
/// io locks; a large copy is split across the engine threads.
fn gather(
    job: &JobRecord,
    src: &BufDesc,
    dst: &BufDesc,
    total: usize,
    env: &ExecEnv<'_>,
) -> Result<()> {
    // Under the locks: the room may have gone to another job in flight since the checks.
    // One destination: the room as the job was submitted (see `JobRecord::dst_tail`).
    let base = if dst.next().is_none() {
        job.dst_base()
    } else {
        None
    };
    let room: usize = match base {
        Some(_) => job.dst_tail(dst).1,
        None => dst.iter().map(BufDesc::tailroom).sum(),
    };
    if room < total || src.list_data_len() != total {
        return Err(room_taken());
    }
    let threads = env.threads();
    if threads > 1 && total >= PAR_MIN_BYTES {
        let pieces = (total / PAR_PIECE).clamp(1, 4 * threads);
        let per = total.div_ceil(pieces);
        let failed = std::sync::Mutex::new(None);
        env.parallel(pieces, &|i| {
            let start = i * per;
            if let Err(e) = copy_span(base, src, dst, start, per.min(total.saturating_sub(start))) {
                *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            }
        });
        if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
    } else {
        copy_span(base, src, dst, 0, total)?;
    }
    // One destination grows when the job is delivered; the elements of a list grow
    // in order, each up to its tailroom.
    if dst.next().is_none() {
        return job.grow_dst_at_delivery(total);
    }
    let mut left = total;
    for d in dst.iter() {
        if left == 0 {
            break;
        }
        let n = left.min(d.tailroom());
        d.grow_data_len(n)?;
        left -= n;
    }
    Ok(())
}

/// Copies bytes `[start, start + len)` of `src`'s data stream to the same positions of
/// `dst`'s tailroom stream (the destination's data lengths are not changed).
fn copy_span(
    base: Option<usize>,
    src: &BufDesc,
    dst: &BufDesc,
    start: usize,
    len: usize,
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    // (address, bytes, memory) pieces of each stream from `start` on.
    type Piece<'a> = (usize, usize, Option<&'a RemoteMemory>);
    let mut srcs = src
        .iter()
        .map(|s| {
            let (p, n) = s.data_span();
            (p, n, s.remote())
        })
        .filter(|p| p.1 > 0);
    let mut dsts = dst
        .iter()
        .map(|d| {
            let (p, n) = match base {
                Some(b) => d.tail_span_after(b),
                None => d.tail_span(),
            };
            (p, n, d.remote())
        })
        .filter(|p| p.1 > 0);
    fn skip<'a>(it: &mut dyn Iterator<Item = Piece<'a>>, mut off: usize) -> Option<Piece<'a>> {
        for (p, n, m) in it {
            if off < n {
                return Some((p + off, n - off, m));
            }
            off -= n;
        }
        None
    }
    let mut cur_s = skip(&mut srcs, start);
    let mut cur_d = skip(&mut dsts, start);
    let mut left = len;
    while left > 0 {
        let (Some((sp, sn, sm)), Some((dp, dn, dm))) = (cur_s, cur_d) else {
            return Ok(());
        };
        let n = left.min(sn).min(dn);
        // SAFETY: [sp, sp+n) lies in the source's data and [dp, dp+n) in the destination's
        // tailroom, both inside started mmaps kept alive by the job's buffers (or in an
        // exporter's range, reached through it); they do not overlap (checked); the
        // caller holds the job's byte ranges, and the pieces of one job write disjoint
        // destination bytes.
        unsafe { move_bytes(sm, sp, dm, dp, n) }?;
        left -= n;
        cur_s = if n < sn {
            Some((sp + n, sn - n, sm))
        } else {
            srcs.next()
        };
        cur_d = if n < dn {
            Some((dp + n, dn - n, dm))
        } else {
            dsts.next()
        };
    }
    Ok(())
}
