//! DOCA SHA in software: SHA-1, SHA-256 and SHA-512 jobs, one-shot or as partial
//! sessions, on the RustCrypto `sha1`/`sha2` crates (which use SHA-NI where present).
//!
//! ```
//! use doca_core::{devinfo_list, AccessFlags, BufInventory, Mmap, WorkQ};
//! use doca_sha::{Sha, ShaAlgo, ShaJob};
//!
//! let dev = devinfo_list()?[0].open()?;
//! let mut mmap = Mmap::new();
//! mmap.set_memory(vec![0u8; 8192])?;
//! mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE)?;
//! mmap.dev_add(&dev)?;
//! mmap.start()?;
//! let mut inv = BufInventory::new(2)?;
//! inv.start()?;
//! let mut src = inv.buf_at(&mmap, 0, 4096)?;
//! src.append(b"abc")?;
//! let dst = inv.buf_at(&mmap, 4096, 64)?;
//!
//! let sha = Sha::new();
//! sha.as_ctx().dev_add(&dev)?;
//! sha.as_ctx().start()?;
//! let mut wq = WorkQ::new(4)?;
//! sha.as_ctx().workq_add(&mut wq)?;
//! wq.submit_job(sha.as_ctx(), ShaJob::new(ShaAlgo::Sha256, src, dst, 1)).map_err(|(e, _)| e)?;
//! let mut done = wq.wait(None)?;
//! let digest = done.take_buf(ShaJob::RESP).unwrap().data_to_vec();
//! assert_eq!(digest[..4], [0xba, 0x78, 0x16, 0xbf]);
//! # Ok::<(), doca_core::Error>(())
//! ```

use doca_core::device::Capability;
use doca_core::exec::{CtxOps, ExecEnv, Job, JobOps, JobRecord};
use doca_core::lock;
use doca_core::memory::with_io_locked;
use doca_core::types::action;
use doca_core::{Buf, BufDesc, Ctx, Data, Dev, DevInfo, Error, ErrorCode, Result, WorkQ};
use sha2::Digest;
use std::sync::{Arc, Condvar, Mutex};

/// `DOCA_SHA_JOB_SHA1`.
pub const JOB_SHA1: u32 = action::SHA_FIRST + 1;
/// `DOCA_SHA_JOB_SHA256`.
pub const JOB_SHA256: u32 = action::SHA_FIRST + 2;
/// `DOCA_SHA_JOB_SHA512`.
pub const JOB_SHA512: u32 = action::SHA_FIRST + 3;
/// `DOCA_SHA_JOB_SHA1_PARTIAL`.
pub const JOB_SHA1_PARTIAL: u32 = action::SHA_FIRST + 4;
/// `DOCA_SHA_JOB_SHA256_PARTIAL`.
pub const JOB_SHA256_PARTIAL: u32 = action::SHA_FIRST + 5;
/// `DOCA_SHA_JOB_SHA512_PARTIAL`.
pub const JOB_SHA512_PARTIAL: u32 = action::SHA_FIRST + 6;
/// `DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL`.
pub const FLAG_PARTIAL_FINAL: u64 = 1;
/// Most elements of a source list.
pub const MAX_LIST_ELEMENTS: u32 = 256;
/// Largest source (4 GiB).
pub const MAX_SRC_BUFFER_SIZE: u64 = 1 << 32;

/// SHA's task table: the one declaration of its job and task types, handed to a
/// generator macro (`$gen`): [`doca_core::task_specs!`] makes [`tasks`] from it, and the C
/// faces make their 2.2 job translation and their 3.x task functions from it. Record
/// layout: buffer 0 the source, 1 the digest's destination; parameter 0 the flags
/// (`FLAG_PARTIAL_FINAL`), 1 the partial session's ticket (taken at submit), 2 the
/// algorithm of a 3.x task (a 2.2 job says it with its job type); the partial session
/// is the record's object.
#[macro_export]
macro_rules! sha_task_table {
    ($gen:path) => {
        $gen! {
            lib: "sha",
            capability: Sha,
            topology: "sha",
            c3_handle: doca_sha3,
            tasks: [
                {
                    spec: HASH @ $crate::tasks::HASH,
                    module: hash,
                    name: "hash",
                    job: $crate::JOB_SHA1,
                    job_types: [sha1 = $crate::JOB_SHA1, sha256 = $crate::JOB_SHA256, sha512 = $crate::JOB_SHA512],
                    inputs: [
                        param algorithm: 2 (doca_sha_algorithm)
                            get doca_sha_task_hash_get_algorithm
                            set doca_sha_task_hash_set_algorithm,
                        buf src: 0 (*const doca_buf)
                            get doca_sha_task_hash_get_src
                            set doca_sha_task_hash_set_src,
                        buf dst: 1 (*mut doca_buf)
                            get doca_sha_task_hash_get_dst as (*const doca_buf)
                            set doca_sha_task_hash_set_dst,
                        flag flags: 0 (u64),
                    ],
                    write_back: [],
                    hooks: $crate::task_hooks::HASH,
                    c3: {
                        task: doca_sha_task_hash,
                        cb: doca_sha_task_hash_completion_cb_t,
                        set_conf: doca_sha_task_hash_set_conf (log),
                        alloc_init: doca_sha_task_hash_alloc_init,
                        as_task: doca_sha_task_hash_as_task,
                        setters: checked,
                    },
                    c22: { doca_sha_job { req_buf: src, resp_buf: dst, flags: flags } },
                },
                {
                    spec: PARTIAL_HASH @ $crate::tasks::PARTIAL_HASH,
                    module: partial_hash,
                    name: "partial_hash",
                    job: $crate::JOB_SHA1_PARTIAL,
                    job_types: [sha1_partial = $crate::JOB_SHA1_PARTIAL, sha256_partial = $crate::JOB_SHA256_PARTIAL, sha512_partial = $crate::JOB_SHA512_PARTIAL],
                    inputs: [
                        param algorithm: 2 (doca_sha_algorithm)
                            get doca_sha_task_partial_hash_get_algorithm
                            set doca_sha_task_partial_hash_set_algorithm,
                        buf src: 0 (*const doca_buf)
                            get doca_sha_task_partial_hash_get_src
                            set doca_sha_task_partial_hash_set_src,
                        buf dst: 1 (*mut doca_buf)
                            get doca_sha_task_partial_hash_get_dst as (*const doca_buf)
                            set doca_sha_task_partial_hash_set_dst,
                        flag final_buf: 0 (u64),
                        object session: 0 (*mut doca_sha_partial_session),
                    ],
                    write_back: [],
                    hooks: $crate::task_hooks::PARTIAL_HASH,
                    c3: {
                        task: doca_sha_task_partial_hash,
                        cb: doca_sha_task_partial_hash_completion_cb_t,
                        set_conf: doca_sha_task_partial_hash_set_conf (log),
                        alloc_init: doca_sha_task_partial_hash_alloc_init,
                        as_task: doca_sha_task_partial_hash_as_task,
                        setters: checked,
                    },
                    c22: { doca_sha_partial_job { sha_job.req_buf: src, sha_job.resp_buf: dst, sha_job.flags: final_buf, session: session } },
                },
            ],
        }
    };
}

/// SHA's task types, from [`sha_task_table!`].
pub mod tasks {
    crate::sha_task_table!(doca_core::task_specs);
}

/// What SHA's task types do beyond their table's slots.
pub mod task_hooks {
    use super::{FLAG_PARTIAL_FINAL, PartialSession, ShaAlgo};
    use doca_core::exec::{JobRecord, TaskHooks, TaskInputs};
    use doca_core::{Error, ErrorCode, Result};

    /// A partial hash task's own state: a segment was submitted since its start.
    pub const STARTED: u64 = 1;
    /// Its own state: the final segment completed, the digest is in its destination.
    pub const HAS_RESULT: u64 = 2;

    /// The algorithm of a 3.x task (`enum doca_sha_algorithm`: 0 SHA-1, 1 SHA-256, 2
    /// SHA-512).
    pub fn algorithm(v: u64) -> Result<ShaAlgo> {
        match v {
            0 => Ok(ShaAlgo::Sha1),
            1 => Ok(ShaAlgo::Sha256),
            2 => Ok(ShaAlgo::Sha512),
            _ => Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "{} is not a doca_sha_algorithm (0: SHA1, 1: SHA256, 2: SHA512)",
                    v as i64
                ),
            )),
        }
    }

    fn check_hash(slot: usize, v: u64) -> Result<()> {
        match slot {
            2 => algorithm(v).map(|_| ()),
            0 if v != 0 => Err(Error::with_context(
                ErrorCode::InvalidValue,
                "SHA_PARTIAL_FINAL is for partial jobs only",
            )),
            _ => Ok(()),
        }
    }

    fn check_partial(slot: usize, v: u64) -> Result<()> {
        match slot {
            2 => algorithm(v).map(|_| ()),
            0 if v > FLAG_PARTIAL_FINAL => Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("SHA job flags {v:#x} are not NONE (0) or SHA_PARTIAL_FINAL (1)"),
            )),
            _ => Ok(()),
        }
    }

    /// The session a partial hash task carries.
    pub fn session(t: &TaskInputs) -> Result<PartialSession> {
        t.aux
            .borrow()
            .as_ref()
            .and_then(PartialSession::from_aux)
            .ok_or_else(|| {
                Error::with_context(ErrorCode::BadState, "the partial hash task has no session")
            })
    }

    fn partial_init(t: &TaskInputs) {
        *t.aux.borrow_mut() = Some(PartialSession::new().as_aux());
    }

    fn not_started(t: &TaskInputs, input: &'static str) -> Result<()> {
        if input != "src" && t.state.get() & STARTED != 0 {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the partial hash is in progress; reset the task first",
            ));
        }
        Ok(())
    }

    fn partial_prepare(t: &TaskInputs, _: &mut JobRecord) -> Result<()> {
        let state = t.state.get();
        if state & STARTED == 0 && t.params[0].get() & FLAG_PARTIAL_FINAL != 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the first segment of a partial hash cannot be the final one: use a hash task",
            ));
        }
        t.state.set((state | STARTED) & !HAS_RESULT);
        Ok(())
    }

    fn partial_finish(t: &TaskInputs, _: &JobRecord, failed: bool) {
        let state = t.state.get();
        if failed {
            if let Ok(s) = session(t) {
                s.reset();
            }
            t.state.set(state & !(STARTED | HAS_RESULT));
        } else if t.params[0].get() & FLAG_PARTIAL_FINAL != 0 {
            t.state.set((state & !STARTED) | HAS_RESULT);
        }
    }

    /// The hash task's.
    pub const HASH: TaskHooks = TaskHooks {
        job_type: Some(|t| Ok(algorithm(t.params[2].get())?.job_type())),
        check_param: Some(check_hash),
        ..TaskHooks::NONE
    };

    /// The partial hash task's: its session, its progress, its final flag.
    pub const PARTIAL_HASH: TaskHooks = TaskHooks {
        init: Some(partial_init),
        job_type: Some(|t| Ok(algorithm(t.params[2].get())?.partial_job_type())),
        check_param: Some(check_partial),
        before_set: Some(not_started),
        prepare: Some(partial_prepare),
        finish: Some(partial_finish),
    };
}

/// A SHA algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShaAlgo {
    /// SHA-1, 20-byte digest.
    Sha1,
    /// SHA-256, 32-byte digest.
    Sha256,
    /// SHA-512, 64-byte digest.
    Sha512,
}

impl ShaAlgo {
    /// Digest length (`DOCA_SHA*_BYTE_COUNT`).
    pub const fn digest_len(self) -> usize {
        match self {
            ShaAlgo::Sha1 => 20,
            ShaAlgo::Sha256 => 32,
            ShaAlgo::Sha512 => 64,
        }
    }

    /// Block length: partial segments other than the last are multiples of it.
    pub const fn block_len(self) -> usize {
        match self {
            ShaAlgo::Sha512 => 128,
            _ => 64,
        }
    }

    /// The one-shot job type.
    pub const fn job_type(self) -> u32 {
        match self {
            ShaAlgo::Sha1 => JOB_SHA1,
            ShaAlgo::Sha256 => JOB_SHA256,
            ShaAlgo::Sha512 => JOB_SHA512,
        }
    }

    /// The partial job type.
    pub const fn partial_job_type(self) -> u32 {
        match self {
            ShaAlgo::Sha1 => JOB_SHA1_PARTIAL,
            ShaAlgo::Sha256 => JOB_SHA256_PARTIAL,
            ShaAlgo::Sha512 => JOB_SHA512_PARTIAL,
        }
    }

    /// The algorithm and partial-ness of a job type.
    pub fn from_job_type(t: u32) -> Option<(ShaAlgo, bool)> {
        Some(match t {
            JOB_SHA1 => (ShaAlgo::Sha1, false),
            JOB_SHA256 => (ShaAlgo::Sha256, false),
            JOB_SHA512 => (ShaAlgo::Sha512, false),
            JOB_SHA1_PARTIAL => (ShaAlgo::Sha1, true),
            JOB_SHA256_PARTIAL => (ShaAlgo::Sha256, true),
            JOB_SHA512_PARTIAL => (ShaAlgo::Sha512, true),
            _ => return None,
        })
    }
}

/// A SHA context (`struct doca_sha`).
#[derive(Debug, Clone)]
pub struct Sha {
    ctx: Ctx,
}

impl Default for Sha {
    fn default() -> Sha {
        Sha::new()
    }
}

impl Sha {
    /// `doca_sha_create`.
    pub fn new() -> Sha {
        Sha {
            ctx: Ctx::new(ShaOps),
        }
    }

    /// `doca_sha_as_ctx`.
    pub fn as_ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// `doca_sha_job_get_supported`.
    pub fn job_get_supported(devinfo: &DevInfo, job_type: u32) -> Result<()> {
        if ShaAlgo::from_job_type(job_type).is_none() {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "not a SHA job type",
            ));
        }
        doca_core::exec::job_supported_in(tasks::ALL, devinfo, job_type)
    }

    /// `doca_sha_get_max_list_buf_num_elem`.
    pub fn max_list_buf_num_elem(devinfo: &DevInfo) -> Result<u32> {
        Sha::job_get_supported(devinfo, JOB_SHA256).map(|_| MAX_LIST_ELEMENTS)
    }

    /// `doca_sha_get_max_src_buffer_size`.
    pub fn max_src_buffer_size(devinfo: &DevInfo) -> Result<u64> {
        Sha::job_get_supported(devinfo, JOB_SHA256).map(|_| MAX_SRC_BUFFER_SIZE)
    }

    /// `doca_sha_get_min_dst_buffer_size`: the digest length of the job type.
    pub fn min_dst_buffer_size(devinfo: &DevInfo, job_type: u32) -> Result<u32> {
        Sha::job_get_supported(devinfo, job_type)?;
        let (algo, _) =
            ShaAlgo::from_job_type(job_type).ok_or_else(|| Error::new(ErrorCode::NotSupported))?;
        Ok(algo.digest_len() as u32)
    }

    /// `doca_sha_get_hardware_supported`: the software device computes SHA on the CPU
    /// (with SHA-NI where present); answered `Ok` when the device has the SHA capability.
    pub fn hardware_supported(devinfo: &DevInfo) -> Result<()> {
        Sha::job_get_supported(devinfo, JOB_SHA256)
    }

    /// `doca_sha_partial_session_create` (the work queue is where its jobs go).
    pub fn partial_session_create(&self, _workq: &WorkQ) -> Result<PartialSession> {
        Ok(PartialSession::new())
    }

    /// `doca_sha_partial_session_copy`: `to` continues from `from`'s state.
    pub fn partial_session_copy(
        &self,
        _workq: &WorkQ,
        from: &PartialSession,
        to: &PartialSession,
    ) -> Result<()> {
        if Arc::ptr_eq(&from.state, &to.state) {
            return Ok(());
        }
        let h = lock(&from.state.s).hash.clone();
        lock(&to.state.s).hash = h;
        Ok(())
    }

    /// `doca_sha_partial_session_destroy`: refused with `InUse` while a job of the
    /// session is in flight.
    pub fn partial_session_destroy(
        &self,
        _workq: &WorkQ,
        session: PartialSession,
    ) -> std::result::Result<(), (PartialSession, Error)> {
        if Arc::strong_count(&session.state) > 1 {
            return Err((
                session,
                Error::with_context(ErrorCode::InUse, "a job of this session is still in flight"),
            ));
        }
        Ok(())
    }
}

#[derive(Clone)]
enum SessionState {
    Idle,
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
    Sha512(sha2::Sha512),
}

/// A session's hash state plus the tickets that keep its jobs in submission order even
/// when engine threads run them.
struct Session {
    hash: SessionState,
    next_ticket: u64,
    next_exec: u64,
}

struct SessionCell {
    s: Mutex<Session>,
    turn: Condvar,
}

impl SessionCell {
    fn new() -> SessionCell {
        SessionCell {
            s: Mutex::new(Session {
                hash: SessionState::Idle,
                next_ticket: 0,
                next_exec: 0,
            }),
            turn: Condvar::new(),
        }
    }
}

/// A partial-hash session (`struct doca_sha_partial_session`): segments hashed by
/// partial jobs; the job with the FINAL flag appends the digest of them all.
#[derive(Clone)]
pub struct PartialSession {
    state: Arc<SessionCell>,
}

impl Default for PartialSession {
    fn default() -> PartialSession {
        PartialSession::new()
    }
}

impl PartialSession {
    /// A session with nothing hashed yet (what a partial hash task of the task
    /// generation carries).
    pub fn new() -> PartialSession {
        PartialSession {
            state: Arc::new(SessionCell::new()),
        }
    }

    /// Forgets what was hashed (`doca_sha_task_partial_hash_reset`); ordering tickets
    /// of segments in flight are kept.
    pub fn reset(&self) {
        lock(&self.state.s).hash = SessionState::Idle;
    }

    /// The object a partial job's record keeps alive (its `aux`): the session's state.
    pub fn as_aux(&self) -> Arc<dyn std::any::Any + Send + Sync> {
        self.state.clone()
    }

    /// The session whose state a record or a task keeps ([`as_aux`](Self::as_aux)).
    pub fn from_aux(aux: &Arc<dyn std::any::Any + Send + Sync>) -> Option<PartialSession> {
        Arc::clone(aux)
            .downcast::<SessionCell>()
            .ok()
            .map(|state| PartialSession { state })
    }
}

impl std::fmt::Debug for PartialSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartialSession").finish_non_exhaustive()
    }
}

/// A one-shot hash job (`struct doca_sha_job`): the digest of `req`'s data is appended
/// to `resp`.
#[derive(Debug)]
pub struct ShaJob {
    /// Algorithm.
    pub algo: ShaAlgo,
    /// Source buffer (or list head).
    pub req: Buf,
    /// Response buffer: needs `digest_len` bytes of tailroom.
    pub resp: Buf,
    /// Echoed in the completion.
    pub user_data: Data,
}

impl ShaJob {
    /// Record slot of the request (the source).
    pub const REQ: usize = JobRecord::SRC;
    /// Record slot of the response (the destination).
    pub const RESP: usize = JobRecord::DST;

    /// A one-shot job.
    pub fn new(algo: ShaAlgo, req: Buf, resp: Buf, user_data: u64) -> ShaJob {
        ShaJob {
            algo,
            req,
            resp,
            user_data: Data(user_data),
        }
    }
}

impl ShaJob {
    /// The record of a one-shot job (`job_type` one of `JOB_SHA1/256/512`) whose buffers
    /// stay the caller's (the C face).
    ///
    /// # Safety
    /// `req` and `resp` must be live descriptors until the job completes.
    pub unsafe fn record_borrowed(
        job_type: u32,
        req: *mut BufDesc,
        resp: *mut BufDesc,
        user_data: Data,
    ) -> JobRecord {
        let mut r = JobRecord::new(job_type, user_data);
        // SAFETY: the caller keeps both descriptors live while the job is in flight.
        unsafe {
            r.set_buf_raw(ShaJob::REQ, req);
            r.set_buf_raw(ShaJob::RESP, resp);
        }
        r
    }
}

impl Job for ShaJob {
    fn into_record(self) -> JobRecord {
        let mut r = JobRecord::new(self.algo.job_type(), self.user_data);
        r.set_buf(ShaJob::REQ, self.req);
        r.set_buf(ShaJob::RESP, self.resp);
        r
    }
}

/// A partial hash job (`struct doca_sha_partial_job`): hashes `req` into the session;
/// with `final_segment`, appends the digest of every segment to `resp`.
#[derive(Debug)]
pub struct ShaPartialJob {
    /// Algorithm (the same for every job of a session).
    pub algo: ShaAlgo,
    /// The session.
    pub session: PartialSession,
    /// This segment (a multiple of the block length unless final).
    pub req: Buf,
    /// Response buffer (used by the final job).
    pub resp: Buf,
    /// Whether this is the last segment.
    pub final_segment: bool,
    /// Echoed in the completion.
    pub user_data: Data,
}

impl ShaPartialJob {
    /// The record of a partial job (`job_type` one of `JOB_SHA*_PARTIAL`) whose buffers
    /// stay the caller's (the C face); the record keeps the session alive.
    ///
    /// # Safety
    /// `req` and `resp` must be live descriptors until the job completes.
    pub unsafe fn record_borrowed(
        job_type: u32,
        session: &PartialSession,
        req: *mut BufDesc,
        resp: *mut BufDesc,
        final_segment: bool,
        user_data: Data,
    ) -> JobRecord {
        // SAFETY: forwarded from the caller.
        let mut r = unsafe { ShaJob::record_borrowed(job_type, req, resp, user_data) };
        r.params[0] = if final_segment { FLAG_PARTIAL_FINAL } else { 0 };
        r.aux = Some(session.state.clone());
        r
    }
}

impl Job for ShaPartialJob {
    fn into_record(self) -> JobRecord {
        let mut r = JobRecord::new(self.algo.partial_job_type(), self.user_data);
        r.set_buf(ShaJob::REQ, self.req);
        r.set_buf(ShaJob::RESP, self.resp);
        r.params[0] = if self.final_segment {
            FLAG_PARTIAL_FINAL
        } else {
            0
        };
        r.aux = Some(self.session.state);
        r
    }
}

struct ShaOps;

fn update(state: &mut SessionState, bytes: &[u8]) {
    match state {
        SessionState::Idle => {}
        SessionState::Sha1(h) => h.update(bytes),
        SessionState::Sha256(h) => h.update(bytes),
        SessionState::Sha512(h) => h.update(bytes),
    }
}

/// Bytes of another process's memory hashed per read.
const REMOTE_CHUNK: usize = 16 << 10;

fn feed(state: &mut SessionState, src: &BufDesc) -> Result<()> {
    for e in src.iter() {
        let (data, len) = e.data_span();
        if let Some(r) = e.remote() {
            // Memory of an exporting process: read in chunks.
            let mut chunk = [0u8; REMOTE_CHUNK];
            let mut off = 0;
            while off < len {
                let n = (len - off).min(REMOTE_CHUNK);
                // SAFETY: the chunk is valid for writes of n <= REMOTE_CHUNK bytes.
                unsafe { r.read_raw(data + off, chunk.as_mut_ptr(), n) }?;
                update(state, &chunk[..n]);
                off += n;
            }
            continue;
        }
        // SAFETY: the span lies inside the element's buffer, inside its started mmap,
        // kept alive by the job's buffers; the job holds the mmaps' io locks while hashing.
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, len) };
        update(state, bytes);
    }
    Ok(())
}

fn finish(state: SessionState, job: &JobRecord, resp: &BufDesc) -> Result<()> {
    let mut out = [0u8; 64];
    let n = match state {
        SessionState::Idle => 0,
        SessionState::Sha1(h) => {
            out[..20].copy_from_slice(&h.finalize());
            20
        }
        SessionState::Sha256(h) => {
            out[..32].copy_from_slice(&h.finalize());
            32
        }
        SessionState::Sha512(h) => {
            out.copy_from_slice(&h.finalize());
            64
        }
    };
    // Looked at again under the io locks: the room may have gone to another job.
    let (to, room) = job.dst_tail(resp);
    if room < n {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "response tailroom is smaller than the digest (another job in flight took it)",
        ));
    }
    match resp.remote() {
        // SAFETY: `out` holds n bytes.
        Some(r) => unsafe { r.write_raw(to, out.as_ptr(), n) }?,
        // SAFETY: the tailroom span holds n bytes inside the response's buffer, inside its
        // mmap; the io locks are held.
        None => unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), to as *mut u8, n) },
    }
    // The response is the job's destination: its data grows when the job is delivered.
    job.grow_dst_at_delivery(n)
}

fn fresh(algo: ShaAlgo) -> SessionState {
    match algo {
        ShaAlgo::Sha1 => SessionState::Sha1(sha1::Sha1::new()),
        ShaAlgo::Sha256 => SessionState::Sha256(sha2::Sha256::new()),
        ShaAlgo::Sha512 => SessionState::Sha512(sha2::Sha512::new()),
    }
}

fn same_algo(s: &SessionState, algo: ShaAlgo) -> bool {
    matches!(
        (s, algo),
        (SessionState::Sha1(_), ShaAlgo::Sha1)
            | (SessionState::Sha256(_), ShaAlgo::Sha256)
            | (SessionState::Sha512(_), ShaAlgo::Sha512)
    )
}

impl CtxOps for ShaOps {
    fn tasks(&self) -> &'static [&'static doca_core::exec::TaskSpec] {
        tasks::ALL
    }
    fn name(&self) -> &'static str {
        "sha"
    }

    fn capability(&self) -> Capability {
        Capability::Sha
    }

    fn handles(&self, job_type: u32) -> bool {
        ShaAlgo::from_job_type(job_type).is_some()
    }
}

impl JobOps for ShaOps {
    fn validate(&self, job: &mut JobRecord, _dev: &Dev) -> Result<()> {
        let (Some(req), Some(_resp)) = (job.buf(ShaJob::REQ), job.buf(ShaJob::RESP)) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "SHA job needs a request and a response buffer",
            ));
        };
        if req.num_elements() > MAX_LIST_ELEMENTS {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "request list has more elements than the SHA maximum (256)",
            ));
        }
        let (_, partial) = ShaAlgo::from_job_type(job.job_type)
            .ok_or_else(|| Error::new(ErrorCode::InvalidValue))?;
        if partial {
            let Some(cell) = job
                .aux
                .as_ref()
                .and_then(|a| a.downcast_ref::<SessionCell>())
            else {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    "partial SHA job needs a partial session",
                ));
            };
            // Accepted from here on: take the next turn of the session.
            let mut s = lock(&cell.s);
            job.params[1] = s.next_ticket;
            s.next_ticket += 1;
        }
        Ok(())
    }

    fn execute(&self, job: &mut JobRecord, env: &ExecEnv<'_>) -> Result<()> {
        let dev = env.dev();
        let (_, partial) = ShaAlgo::from_job_type(job.job_type)
            .ok_or_else(|| Error::new(ErrorCode::InvalidValue))?;
        let cell = if partial {
            job.aux
                .as_ref()
                .and_then(|a| a.downcast_ref::<SessionCell>())
        } else {
            None
        };
        let Some(cell) = cell else {
            if partial {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    "partial SHA job needs a partial session",
                ));
            }
            return run(job, dev, None);
        };
        // Wait for this job's turn in its session before touching any lock a job ahead
        // of it may need; the turn passes on whatever the outcome.
        let ticket = job.params[1];
        let mut s = lock(&cell.s);
        while s.next_exec != ticket {
            s = cell.turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        let r = run(job, dev, Some(&mut s.hash));
        s.next_exec += 1;
        drop(s);
        cell.turn.notify_all();
        r
    }
}

/// Checks and runs one job; `session` is the partial session's hash state.
fn run(job: &JobRecord, dev: &Dev, session: Option<&mut SessionState>) -> Result<()> {
    let (algo, partial) =
        ShaAlgo::from_job_type(job.job_type).ok_or_else(|| Error::new(ErrorCode::InvalidValue))?;
    let (Some(req), Some(resp)) = (job.buf(ShaJob::REQ), job.buf(ShaJob::RESP)) else {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "SHA job needs a request and a response buffer",
        ));
    };
    for e in req.iter().chain(resp.iter()) {
        if !e.mmap_has_device(dev) {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "a buffer's mmap was not given access to the context's device (mmap dev_add)",
            ));
        }
    }
    if req.list_data_len() as u64 > MAX_SRC_BUFFER_SIZE {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "request is larger than the SHA maximum (4 GiB)",
        ));
    }
    let final_segment = !partial || job.params[0] & FLAG_PARTIAL_FINAL != 0;
    if final_segment {
        if !resp.mmap_writable() {
            return Err(match resp.remote() {
                Some(r) => r.read_only(),
                None => Error::with_context(
                    ErrorCode::NotPermitted,
                    "the response's mmap does not grant write access (DOCA_ACCESS_LOCAL_READ_WRITE)",
                ),
            });
        }
        if job.dst_tail(resp).1 < algo.digest_len() {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "response tailroom is smaller than the digest",
            ));
        }
    } else if req.list_data_len() % algo.block_len() != 0 {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "a partial segment other than the final one must be a multiple of the block length (64 bytes; 128 for SHA-512)",
        ));
    }
    let run = || match session {
        None => {
            let mut st = fresh(algo);
            feed(&mut st, req)?;
            finish(st, job, resp)
        }
        Some(st) => partial_step(st, algo, job, req, resp, final_segment),
    };
    with_io_locked(&[req], &[resp], run).unwrap_or_else(|| {
        Err(Error::with_context(
            ErrorCode::InvalidValue,
            "job spans more than 16 mmaps",
        ))
    })
}

fn partial_step(
    st: &mut SessionState,
    algo: ShaAlgo,
    job: &JobRecord,
    req: &BufDesc,
    resp: &BufDesc,
    final_segment: bool,
) -> Result<()> {
    match &*st {
        SessionState::Idle => *st = fresh(algo),
        s if !same_algo(s, algo) => {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "partial job algorithm differs from the session's",
            ));
        }
        _ => {}
    }
    feed(st, req)?;
    if final_segment {
        let done = std::mem::replace(st, SessionState::Idle);
        finish(done, job, resp)?;
    }
    Ok(())
}
