//! DOCA Compress in software: raw deflate compress and decompress (libdeflate), LZ4
//! block and LZ4 stream decompress (liblz4's safe decoder; lz4_flex's checked decoder
//! says what is wrong with a block liblz4 refuses), each reporting the
//! checksums of the uncompressed data DOCA reports: CRC-32 with Adler-32 for deflate,
//! CRC-32 with xxHash-32 for LZ4.
//!
//! ```
//! use doca_core::{devinfo_list, AccessFlags, BufInventory, Mmap, WorkQ};
//! use doca_compress::{checksums, Compress, DeflateJob};
//!
//! let dev = devinfo_list()?[0].open()?;
//! let mut mmap = Mmap::new();
//! mmap.set_memory(vec![0u8; 1 << 16])?;
//! mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE)?;
//! mmap.dev_add(&dev)?;
//! mmap.start()?;
//! let mut inv = BufInventory::new(4)?;
//! inv.start()?;
//! let mut text = inv.buf_at(&mmap, 0, 8192)?;
//! text.append(&b"all work and no play ".repeat(100))?;
//! let packed = inv.buf_at(&mmap, 8192, 8192)?;
//!
//! let back = inv.buf_at(&mmap, 16384, 8192)?;
//!
//! let compress = Compress::new();
//! compress.as_ctx().dev_add(&dev)?;
//! compress.as_ctx().start()?;
//! let mut wq = WorkQ::new(4)?;
//! compress.as_ctx().workq_add(&mut wq)?;
//! wq.submit_job(compress.as_ctx(), DeflateJob::compress(text, packed, 1))
//!     .map_err(|(e, _)| e)?;
//! let mut done = wq.wait(None)?;
//! let sums = checksums(&done);
//! let packed = done.take_buf(DeflateJob::DST).unwrap();
//! assert!(packed.data_len() < 100);
//! wq.submit_job(compress.as_ctx(), DeflateJob::decompress(packed, back, 2))
//!     .map_err(|(e, _)| e)?;
//! let mut done = wq.wait(None)?;
//! // The same checksums of the same uncompressed bytes, both ways.
//! assert_eq!(checksums(&done), sums);
//! let back = done.take_buf(DeflateJob::DST).unwrap();
//! assert_eq!(back.data_to_vec(), b"all work and no play ".repeat(100));
//! # Ok::<(), doca_core::Error>(())
//! ```

mod xxh32;

use doca_core::device::Capability;
use doca_core::exec::{
    Completion, CtxOps, ExecEnv, Job, JobOps, JobRecord, TaskHooks, TaskInputs, local_src_dst,
    run_on_lists, staged,
};
use doca_core::memory::with_io_locked;
use doca_core::types::action;
use doca_core::{Buf, BufDesc, Ctx, Data, Dev, DevInfo, Error, ErrorCode, Result};
use std::cell::RefCell;

/// `DOCA_COMPRESS_DEFLATE_JOB`: raw deflate of the source's data into the destination.
pub const JOB_COMPRESS_DEFLATE: u32 = action::COMPRESS_FIRST + 1;
/// `DOCA_DECOMPRESS_DEFLATE_JOB`: raw deflate data back to its bytes.
pub const JOB_DECOMPRESS_DEFLATE: u32 = action::COMPRESS_FIRST + 2;
/// The task generation's LZ4 stream decompress (blocks, each with its size).
pub const JOB_DECOMPRESS_LZ4_STREAM: u32 = action::COMPRESS_FIRST + 3;
/// The task generation's LZ4 block decompress (one data-only block).
pub const JOB_DECOMPRESS_LZ4_BLOCK: u32 = action::COMPRESS_FIRST + 4;
/// Largest source or destination of one task (2 GiB).
pub const MAX_BUF_SIZE: u64 = 1 << 31;
/// Longest buffer list of a task's source or destination: a list source is read as
/// its elements' data in order, a list destination is filled element by element, each
/// up to its tailroom.
pub const MAX_BUF_LIST_LEN: u32 = 16;
/// The deflate level compress tasks use (libdeflate's default).
pub const DEFLATE_LEVEL: i32 = 6;

/// Record parameter of an LZ4 stream task: 1 when each block ends with its xxHash-32.
pub const PARAM_HAS_BLOCK_CHECKSUM: usize = 0;
/// Record parameter of an LZ4 stream task: 1 when no block refers to an earlier one.
pub const PARAM_BLOCKS_INDEPENDENT: usize = 1;
/// Record parameter of a 2.2 deflate job: where its checksums go (`output_chksum`).
pub const PARAM_CHECKSUM_PTR: usize = 1;
/// Record parameter of every task once done: the CRC-32 of the uncompressed data (low
/// 32 bits) and its Adler-32 (deflate) or xxHash-32 (LZ4) (high 32 bits).
pub const PARAM_CHECKSUMS: usize = 2;

/// Compress's task table: the one declaration of its job and task types, handed to a
/// generator macro (`$gen`): [`doca_core::task_specs!`] makes [`tasks`] from it, and the C
/// faces make their 2.2 job translation and their 3.x task functions from it. Record
/// layout: buffer 0 the source, 1 the destination; parameters as the `PARAM_*`
/// constants say.
#[macro_export]
macro_rules! compress_task_table {
    ($gen:path) => {
        $gen! {
            lib: "compress",
            capability: Compress,
            topology: "compress",
            c3_handle: doca_compress3,
            tasks: [
                {
                    spec: COMPRESS_DEFLATE @ $crate::tasks::COMPRESS_DEFLATE,
                    module: compress_deflate,
                    name: "compress_deflate",
                    job: $crate::JOB_COMPRESS_DEFLATE,
                    job_types: [compress_deflate = $crate::JOB_COMPRESS_DEFLATE],
                    inputs: [
                        buf src: 0 (*const doca_buf)
                            get doca_compress_task_compress_deflate_get_src
                            set doca_compress_task_compress_deflate_set_src,
                        buf dst: 1 (*mut doca_buf)
                            get doca_compress_task_compress_deflate_get_dst
                            set doca_compress_task_compress_deflate_set_dst,
                        flag output_chksum: 1 (*mut u64),
                    ],
                    write_back: [2 -> 1],
                    hooks: $crate::RESULT_HOOKS,
                    c3: {
                        task: doca_compress_task_compress_deflate,
                        cb: doca_compress_task_compress_deflate_completion_cb_t,
                        set_conf: doca_compress_task_compress_deflate_set_conf (num),
                        alloc_init: doca_compress_task_compress_deflate_alloc_init,
                        as_task: doca_compress_task_compress_deflate_as_task,
                        setters: void,
                        caps: [
                            supported doca_compress_cap_task_compress_deflate_is_supported,
                            value doca_compress_cap_task_compress_deflate_get_max_buf_size (u64) = $crate::MAX_BUF_SIZE,
                            value doca_compress_cap_task_compress_deflate_get_max_buf_list_len (u32) = $crate::MAX_BUF_LIST_LEN,
                        ],
                    },
                    c22: { doca_compress_deflate_job { src_buff: src, dst_buff: dst, output_chksum: output_chksum } },
                },
                {
                    spec: DECOMPRESS_DEFLATE @ $crate::tasks::DECOMPRESS_DEFLATE,
                    module: decompress_deflate,
                    name: "decompress_deflate",
                    job: $crate::JOB_DECOMPRESS_DEFLATE,
                    job_types: [decompress_deflate = $crate::JOB_DECOMPRESS_DEFLATE],
                    inputs: [
                        buf src: 0 (*const doca_buf)
                            get doca_compress_task_decompress_deflate_get_src
                            set doca_compress_task_decompress_deflate_set_src,
                        buf dst: 1 (*mut doca_buf)
                            get doca_compress_task_decompress_deflate_get_dst
                            set doca_compress_task_decompress_deflate_set_dst,
                        flag output_chksum: 1 (*mut u64),
                    ],
                    write_back: [2 -> 1],
                    hooks: $crate::RESULT_HOOKS,
                    c3: {
                        task: doca_compress_task_decompress_deflate,
                        cb: doca_compress_task_decompress_deflate_completion_cb_t,
                        set_conf: doca_compress_task_decompress_deflate_set_conf (num),
                        alloc_init: doca_compress_task_decompress_deflate_alloc_init,
                        as_task: doca_compress_task_decompress_deflate_as_task,
                        setters: void,
                        caps: [
                            supported doca_compress_cap_task_decompress_deflate_is_supported,
                            value doca_compress_cap_task_decompress_deflate_get_max_buf_size (u64) = $crate::MAX_BUF_SIZE,
                            value doca_compress_cap_task_decompress_deflate_get_max_buf_list_len (u32) = $crate::MAX_BUF_LIST_LEN,
                        ],
                    },
                    c22: { doca_compress_deflate_job { src_buff: src, dst_buff: dst, output_chksum: output_chksum } },
                },
                {
                    spec: DECOMPRESS_LZ4_STREAM @ $crate::tasks::DECOMPRESS_LZ4_STREAM,
                    module: decompress_lz4_stream,
                    name: "decompress_lz4_stream",
                    job: $crate::JOB_DECOMPRESS_LZ4_STREAM,
                    job_types: [decompress_lz4_stream = $crate::JOB_DECOMPRESS_LZ4_STREAM],
                    inputs: [
                        param has_block_checksum: 0 (u8)
                            get doca_compress_task_decompress_lz4_stream_get_has_block_checksum
                            set doca_compress_task_decompress_lz4_stream_set_has_block_checksum,
                        param are_blocks_independent: 1 (u8)
                            get doca_compress_task_decompress_lz4_stream_get_are_blocks_independent
                            set doca_compress_task_decompress_lz4_stream_set_are_blocks_independent,
                        buf src: 0 (*const doca_buf)
                            get doca_compress_task_decompress_lz4_stream_get_src
                            set doca_compress_task_decompress_lz4_stream_set_src,
                        buf dst: 1 (*mut doca_buf)
                            get doca_compress_task_decompress_lz4_stream_get_dst
                            set doca_compress_task_decompress_lz4_stream_set_dst,
                    ],
                    write_back: [],
                    hooks: $crate::RESULT_HOOKS,
                    c3: {
                        task: doca_compress_task_decompress_lz4_stream,
                        cb: doca_compress_task_decompress_lz4_stream_completion_cb_t,
                        set_conf: doca_compress_task_decompress_lz4_stream_set_conf (num),
                        alloc_init: doca_compress_task_decompress_lz4_stream_alloc_init,
                        as_task: doca_compress_task_decompress_lz4_stream_as_task,
                        setters: void,
                        caps: [
                            supported doca_compress_cap_task_decompress_lz4_stream_is_supported,
                            value doca_compress_cap_task_decompress_lz4_stream_get_max_buf_size (u64) = $crate::MAX_BUF_SIZE,
                            value doca_compress_cap_task_decompress_lz4_stream_get_max_buf_list_len (u32) = $crate::MAX_BUF_LIST_LEN,
                        ],
                    },
                    c22: {},
                },
                {
                    spec: DECOMPRESS_LZ4_BLOCK @ $crate::tasks::DECOMPRESS_LZ4_BLOCK,
                    module: decompress_lz4_block,
                    name: "decompress_lz4_block",
                    job: $crate::JOB_DECOMPRESS_LZ4_BLOCK,
                    job_types: [decompress_lz4_block = $crate::JOB_DECOMPRESS_LZ4_BLOCK],
                    inputs: [
                        buf src: 0 (*const doca_buf)
                            get doca_compress_task_decompress_lz4_block_get_src
                            set doca_compress_task_decompress_lz4_block_set_src,
                        buf dst: 1 (*mut doca_buf)
                            get doca_compress_task_decompress_lz4_block_get_dst
                            set doca_compress_task_decompress_lz4_block_set_dst,
                    ],
                    write_back: [],
                    hooks: $crate::RESULT_HOOKS,
                    c3: {
                        task: doca_compress_task_decompress_lz4_block,
                        cb: doca_compress_task_decompress_lz4_block_completion_cb_t,
                        set_conf: doca_compress_task_decompress_lz4_block_set_conf (num),
                        alloc_init: doca_compress_task_decompress_lz4_block_alloc_init,
                        as_task: doca_compress_task_decompress_lz4_block_as_task,
                        setters: void,
                        caps: [
                            supported doca_compress_cap_task_decompress_lz4_block_is_supported,
                            value doca_compress_cap_task_decompress_lz4_block_get_max_buf_size (u64) = $crate::MAX_BUF_SIZE,
                            value doca_compress_cap_task_decompress_lz4_block_get_max_buf_list_len (u32) = $crate::MAX_BUF_LIST_LEN,
                        ],
                    },
                    c22: {},
                },
            ],
        }
    };
}

/// Compress's task types, from [`compress_task_table!`].
pub mod tasks {
    crate::compress_task_table!(doca_core::task_specs);
}

/// A compress context (`struct doca_compress`).
#[derive(Debug, Clone)]
pub struct Compress {
    ctx: Ctx,
}

impl Default for Compress {
    fn default() -> Compress {
        Compress::new()
    }
}

fn is_compress_job(job_type: u32) -> bool {
    (JOB_COMPRESS_DEFLATE..=JOB_DECOMPRESS_LZ4_BLOCK).contains(&job_type)
}

impl Compress {
    /// `doca_compress_create`.
    pub fn new() -> Compress {
        Compress {
            ctx: Ctx::new(CompressOps),
        }
    }

    /// `doca_compress_as_ctx`.
    pub fn as_ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// Whether the device runs `job_type` (`NotSupported` for a job type of another
    /// library or a device without compress).
    pub fn job_get_supported(devinfo: &DevInfo, job_type: u32) -> Result<()> {
        if !is_compress_job(job_type) {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!("job type {job_type} is not a compress task"),
            ));
        }
        doca_core::exec::job_supported_in(tasks::ALL, devinfo, job_type)
    }

    /// The largest source or destination of a task of `job_type` on the device.
    pub fn max_buf_size(devinfo: &DevInfo, job_type: u32) -> Result<u64> {
        Compress::job_get_supported(devinfo, job_type).map(|()| MAX_BUF_SIZE)
    }

    /// The longest buffer list of a task's source or destination on the device.
    pub fn max_buf_list_len(devinfo: &DevInfo, job_type: u32) -> Result<u32> {
        Compress::job_get_supported(devinfo, job_type).map(|()| MAX_BUF_LIST_LEN)
    }
}

/// A deflate compress or decompress job (`struct doca_compress_deflate_job`): the
/// source's data, raw deflate data or the bytes it stands for, is appended to the
/// destination's tailroom.
#[derive(Debug)]
pub struct DeflateJob {
    job_type: u32,
    src: Buf,
    dst: Buf,
    user_data: Data,
}

impl DeflateJob {
    /// Record slot of the source.
    pub const SRC: usize = JobRecord::SRC;
    /// Record slot of the destination.
    pub const DST: usize = JobRecord::DST;

    /// Compresses the source's data.
    pub fn compress(src: Buf, dst: Buf, user_data: u64) -> DeflateJob {
        DeflateJob {
            job_type: JOB_COMPRESS_DEFLATE,
            src,
            dst,
            user_data: Data(user_data),
        }
    }

    /// Decompresses the source's data.
    pub fn decompress(src: Buf, dst: Buf, user_data: u64) -> DeflateJob {
        DeflateJob {
            job_type: JOB_DECOMPRESS_DEFLATE,
            src,
            dst,
            user_data: Data(user_data),
        }
    }
}

impl Job for DeflateJob {
    fn into_record(self) -> JobRecord {
        let mut r = JobRecord::new(self.job_type, self.user_data);
        r.set_buf(JobRecord::SRC, self.src);
        r.set_buf(JobRecord::DST, self.dst);
        r
    }
}

/// An LZ4 decompress job: one data-only block (`stream: None`), or a stream of blocks,
/// each a 4-byte little-endian size (its top bit set: the block is stored
/// uncompressed) and the block, with its xxHash-32 after it when the stream says so; a
/// size of 0 ends the stream, as does the end of the source.
#[derive(Debug)]
pub struct Lz4Job {
    src: Buf,
    dst: Buf,
    stream: Option<Lz4Stream>,
    user_data: Data,
}

/// How an LZ4 stream is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lz4Stream {
    /// Each block is followed by the xxHash-32 of its bytes as stored.
    pub has_block_checksum: bool,
    /// No block refers to the bytes of an earlier one.
    pub are_blocks_independent: bool,
}

impl Lz4Job {
    /// Decompresses one data-only LZ4 block.
    pub fn block(src: Buf, dst: Buf, user_data: u64) -> Lz4Job {
        Lz4Job {
            src,
            dst,
            stream: None,
            user_data: Data(user_data),
        }
    }

    /// Decompresses an LZ4 stream of blocks.
    pub fn stream(src: Buf, dst: Buf, stream: Lz4Stream, user_data: u64) -> Lz4Job {
        Lz4Job {
            src,
            dst,
            stream: Some(stream),
            user_data: Data(user_data),
        }
    }
}

impl Job for Lz4Job {
    fn into_record(self) -> JobRecord {
        let job_type = match self.stream {
            Some(_) => JOB_DECOMPRESS_LZ4_STREAM,
            None => JOB_DECOMPRESS_LZ4_BLOCK,
        };
        let mut r = JobRecord::new(job_type, self.user_data);
        r.set_buf(JobRecord::SRC, self.src);
        r.set_buf(JobRecord::DST, self.dst);
        if let Some(s) = self.stream {
            r.params[PARAM_HAS_BLOCK_CHECKSUM] = u64::from(s.has_block_checksum);
            r.params[PARAM_BLOCKS_INDEPENDENT] = u64::from(s.are_blocks_independent);
        }
        r
    }
}

/// The checksums of a completed task's uncompressed data: its CRC-32, and its Adler-32
/// (deflate) or xxHash-32 (LZ4).
pub fn checksums(c: &Completion) -> (u32, u32) {
    split(c.record.params[PARAM_CHECKSUMS])
}

/// The two checksums packed in a record's result parameter.
pub fn split(v: u64) -> (u32, u32) {
    (v as u32, (v >> 32) as u32)
}

struct CompressOps;

impl CtxOps for CompressOps {
    fn tasks(&self) -> &'static [&'static doca_core::exec::TaskSpec] {
        tasks::ALL
    }
    fn name(&self) -> &'static str {
        "compress"
    }

    fn capability(&self) -> Capability {
        Capability::Compress
    }

    fn handles(&self, job_type: u32) -> bool {
        is_compress_job(job_type)
    }
}

/// The source and destination of a job (each one buffer or a list of at most
/// [`MAX_BUF_LIST_LEN`]), local, reachable by the device, the destination writable.
fn buffers<'a>(job: &'a JobRecord, dev: &Dev) -> Result<(&'a BufDesc, &'a BufDesc)> {
    local_src_dst(job, dev, "compress", MAX_BUF_LIST_LEN)
}

/// What a pooled task keeps of its record once completed: the checksums, for the
/// task's checksum getters (`doca_compress_task_*_get_crc_cs` and the others).
pub const RESULT_HOOKS: TaskHooks = TaskHooks {
    finish: Some(keep_checksums),
    ..TaskHooks::NONE
};

fn keep_checksums(inputs: &TaskInputs, rec: &JobRecord, failed: bool) {
    inputs.state.set(if failed {
        0
    } else {
        rec.params[PARAM_CHECKSUMS]
    });
}

/// The checksums a completed pooled task keeps (see [`RESULT_HOOKS`]): its CRC-32 and
/// its Adler-32 or xxHash-32; zeros before its first success.
pub fn task_checksums(inputs: &TaskInputs) -> (u32, u32) {
    split(inputs.state.get())
}

impl JobOps for CompressOps {
    fn validate(&self, job: &mut JobRecord, dev: &Dev) -> Result<()> {
        let (src, _) = buffers(job, dev)?;
        if src.list_data_len() as u64 > MAX_BUF_SIZE {
            return Err(Error::invalid(format!(
                "the source holds {} bytes; a compress task takes at most {MAX_BUF_SIZE}",
                src.list_data_len()
            )));
        }
        if job.job_type == JOB_DECOMPRESS_LZ4_STREAM {
            for (slot, what) in [
                (PARAM_HAS_BLOCK_CHECKSUM, "has_block_checksum"),
                (PARAM_BLOCKS_INDEPENDENT, "are_blocks_independent"),
            ] {
                if job.params[slot] > 1 {
                    return Err(Error::invalid(format!(
                        "{what} is 0 or 1, not {}",
                        job.params[slot]
                    )));
                }
            }
        }
        Ok(())
    }

    fn execute(&self, job: &mut JobRecord, env: &ExecEnv<'_>) -> Result<()> {
        let (src, dst) = buffers(job, env.dev())?;
        let job_type = job.job_type;
        let flags = (
            job.params[PARAM_HAS_BLOCK_CHECKSUM] != 0,
            job.params[PARAM_BLOCKS_INDEPENDENT] != 0,
        );
        if staged(src, dst) {
            let sums = execute_lists(job, src, dst, flags)?;
            job.params[PARAM_CHECKSUMS] = sums;
            return Ok(());
        }
        let (to, room) = job.dst_tail(dst);
        let r = with_io_locked(&[src], &[dst], || {
            let (from, n) = src.data_span();
            if ranges_overlap((from, n), (to, room)) {
                return Err(Error::invalid("the source and the destination overlap"));
            }
            // SAFETY: both spans lie inside their buffers' mmaps, kept alive by the
            // job's buffers, in this process (checked); they do not overlap (checked);
            // the io locks give this job their bytes.
            let (input, output) = unsafe {
                (
                    std::slice::from_raw_parts(from as *const u8, n),
                    std::slice::from_raw_parts_mut(to as *mut u8, room),
                )
            };
            run(job_type, flags, input, output)
        })
        .ok_or_else(|| Error::invalid("the task spans more than 16 mmaps"))?;
        let (written, sums) = r?;
        job.params[PARAM_CHECKSUMS] = sums;
        job.grow_dst_at_delivery(written)
    }
}

/// A task on buffer lists: the source's elements read in order, the output spread
/// over the destination's elements in order (see [`run_on_lists`]).
fn execute_lists(
    job: &JobRecord,
    src: &BufDesc,
    dst: &BufDesc,
    flags: (bool, bool),
) -> Result<u64> {
    let job_type = job.job_type;
    let mut sums = 0;
    run_on_lists(job, src, dst, MAX_BUF_SIZE as usize, |input, output| {
        let (written, s) = run(job_type, flags, input, output)?;
        sums = s;
        Ok(written)
    })?;
    Ok(sums)
}

fn ranges_overlap(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.0 + b.1 && b.0 < a.0 + a.1 && a.1 > 0 && b.1 > 0
}

thread_local! {
    /// Each thread's deflate state (libdeflate's are a few hundred KiB): made once, so
    /// the data path allocates nothing afterwards.
    static DEFLATE: RefCell<(Option<libdeflater::Compressor>, Option<libdeflater::Decompressor>)> =
        const { RefCell::new((None, None)) };
}

/// Runs one task: the bytes written to `output` and the packed checksums.
fn run(job_type: u32, lz4: (bool, bool), input: &[u8], output: &mut [u8]) -> Result<(usize, u64)> {
    let pack = |crc: u32, other: u32| u64::from(crc) | (u64::from(other) << 32);
    match job_type {
        JOB_COMPRESS_DEFLATE => {
            let n = DEFLATE.with_borrow_mut(|(c, _)| {
                let c = c.get_or_insert_with(|| {
                    libdeflater::Compressor::new(
                        libdeflater::CompressionLvl::new(DEFLATE_LEVEL).unwrap_or_default(),
                    )
                });
                c.deflate_compress(input, output)
            });
            let n = n.map_err(|_| {
                Error::invalid(format!(
                    "the destination's tailroom ({} bytes) is too small for the compressed data of {} bytes",
                    output.len(),
                    input.len()
                ))
            })?;
            Ok((
                n,
                pack(libdeflater::crc32(input), libdeflater::adler32(input)),
            ))
        }
        JOB_DECOMPRESS_DEFLATE => {
            let n = DEFLATE.with_borrow_mut(|(_, d)| {
                d.get_or_insert_with(libdeflater::Decompressor::new)
                    .deflate_decompress(input, output)
            });
            let n = n.map_err(|e| match e {
                libdeflater::DecompressionError::InsufficientSpace => Error::invalid(format!(
                    "the destination's tailroom ({} bytes) is too small for the decompressed data",
                    output.len()
                )),
                libdeflater::DecompressionError::BadData => {
                    Error::invalid("the source is not valid raw deflate data")
                }
            })?;
            let out = &output[..n];
            Ok((n, pack(libdeflater::crc32(out), libdeflater::adler32(out))))
        }
        JOB_DECOMPRESS_LZ4_BLOCK => {
            let n = lz4_block(input, output, &[])?;
            let out = &output[..n];
            Ok((n, lz4_sums(out)))
        }
        JOB_DECOMPRESS_LZ4_STREAM => {
            let n = lz4_stream(input, output, lz4.0, lz4.1)?;
            let out = &output[..n];
            Ok((n, lz4_sums(out)))
        }
        _ => Err(Error::invalid(format!(
            "job type {job_type} is not a compress task"
        ))),
    }
}

/// The CRC-32 and xxHash-32 of `out` (an LZ4 task's checksums).
fn lz4_sums(out: &[u8]) -> u64 {
    u64::from(libdeflater::crc32(out)) | (u64::from(xxh32::xxh32(out, 0)) << 32)
}

// liblz4 (built by lz4-sys) provides the decoder declared below.
use lz4_sys as _;

unsafe extern "C" {
    /// liblz4's bounds-checked block decoder with a dictionary (a dictionary that ends
    /// where the destination starts is the data decoded before, as a stream's dependent
    /// blocks need). Negative for a malformed block or one that would not fit.
    fn LZ4_decompress_safe_usingDict(
        src: *const std::ffi::c_char,
        dst: *mut std::ffi::c_char,
        src_size: std::ffi::c_int,
        dst_capacity: std::ffi::c_int,
        dict: *const std::ffi::c_char,
        dict_size: std::ffi::c_int,
    ) -> std::ffi::c_int;
}

/// One data-only LZ4 block into `output`, `dict` the bytes before it: liblz4's decoder
/// (the faster one), which never reads outside `input` and `dict` nor writes outside
/// `output`, whatever the block says.
fn lz4_block(input: &[u8], output: &mut [u8], dict: &[u8]) -> Result<usize> {
    let Ok(src_size) = std::ffi::c_int::try_from(input.len()) else {
        return Err(Error::invalid(format!(
            "an LZ4 block of {} bytes is larger than LZ4 allows",
            input.len()
        )));
    };
    // A block decodes to at most this much, far below the cap.
    let cap = output.len().min(std::ffi::c_int::MAX as usize) as std::ffi::c_int;
    let dict = &dict[dict.len().saturating_sub(LZ4_WINDOW)..];
    // SAFETY: the pointers and lengths name the three slices, which do not overlap
    // (`dict` is only read); liblz4's safe decoder stays inside them.
    let n = unsafe {
        LZ4_decompress_safe_usingDict(
            input.as_ptr().cast(),
            output.as_mut_ptr().cast(),
            src_size,
            cap,
            dict.as_ptr().cast(),
            dict.len() as std::ffi::c_int,
        )
    };
    if let Ok(n) = usize::try_from(n) {
        return Ok(n);
    }
    // Failed: the checked decoder of lz4_flex says why (a block too large for the
    // destination, or which part of it is malformed).
    lz4_flex::block::decompress_into_with_dict(input, output, dict).map_err(|e| match e {
        lz4_flex::block::DecompressError::OutputTooSmall { expected, actual } => Error::invalid(format!(
            "the destination's tailroom ({actual} bytes) is too small for the decompressed data (at least {expected} bytes)"
        )),
        e => Error::invalid(format!("the source is not a valid LZ4 block: {e}")),
    })
}

/// Largest window an LZ4 block refers back into.
const LZ4_WINDOW: usize = 64 << 10;

/// An LZ4 stream of blocks into `output` (see [`Lz4Job`]).
fn lz4_stream(
    input: &[u8],
    output: &mut [u8],
    has_block_checksum: bool,
    independent: bool,
) -> Result<usize> {
    let (mut at, mut written) = (0usize, 0usize);
    while at < input.len() {
        let Some(word) = input.get(at..at + 4) else {
            return Err(Error::invalid(format!(
                "the LZ4 stream ends inside a block size at byte {at}"
            )));
        };
        let word = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        at += 4;
        if word == 0 {
            break;
        }
        let stored = word & 0x8000_0000 != 0;
        let len = (word & 0x7fff_ffff) as usize;
        let Some(block) = input.get(at..at + len) else {
            return Err(Error::invalid(format!(
                "the LZ4 stream's block at byte {} says {len} bytes; {} are left",
                at - 4,
                input.len() - at
            )));
        };
        at += len;
        if has_block_checksum {
            let Some(sum) = input.get(at..at + 4) else {
                return Err(Error::invalid(
                    "the LZ4 stream ends before a block's checksum",
                ));
            };
            let sum = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
            if sum != xxh32::xxh32(block, 0) {
                return Err(Error::invalid(format!(
                    "the checksum of the LZ4 stream's block at byte {} does not match its bytes",
                    at - len - 4
                )));
            }
            at += 4;
        }
        let (before, rest) = output.split_at_mut(written);
        let n = if stored {
            let Some(out) = rest.get_mut(..len) else {
                return Err(Error::invalid(format!(
                    "the destination's tailroom ({} bytes) is too small for the decompressed data",
                    before.len() + rest.len()
                )));
            };
            out.copy_from_slice(block);
            len
        } else {
            let dict = if independent {
                &before[..0]
            } else {
                &before[before.len().saturating_sub(LZ4_WINDOW)..]
            };
            lz4_block(block, rest, dict)?
        };
        written += n;
    }
    Ok(written)
}
