//! DOCA AES-GCM in software: encrypt and decrypt tasks with 128- and 256-bit keys and
//! 96- or 128-bit authentication tags, on AWS-LC's AES-GCM (AES-NI, VAES and
//! VPCLMULQDQ where the CPU has them).
//!
//! The data layout is DOCA's: a task's source holds `aad_size` bytes of additional
//! authenticated data followed by the payload. Encrypt appends to the destination the
//! same additional data, the ciphertext and the tag; decrypt takes that (the additional
//! data, the ciphertext, then `tag_size` bytes of tag) and appends the additional data
//! and the plaintext. The IV is up to 12 bytes, padded with zeros to 12. A decrypt whose
//! tag does not match fails with `DOCA_ERROR_IO_FAILED`, its destination's data length
//! unchanged and the bytes it wrote there zeroed: no plaintext the program could take
//! for good data.
//!
//! ```
//! use doca_core::{devinfo_list, AccessFlags, BufInventory, Mmap, WorkQ};
//! use doca_aes_gcm::{AesGcm, AesGcmJob, KeyType};
//!
//! let dev = devinfo_list()?[0].open()?;
//! let mut mmap = Mmap::new();
//! mmap.set_memory(vec![0u8; 1 << 16])?;
//! mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE)?;
//! mmap.dev_add(&dev)?;
//! mmap.start()?;
//! let mut inv = BufInventory::new(4)?;
//! inv.start()?;
//!
//! let aes = AesGcm::new();
//! aes.as_ctx().dev_add(&dev)?;
//! aes.as_ctx().start()?;
//! let key = aes.key_create(&[7u8; 32], KeyType::Aes256)?;
//! let mut wq = WorkQ::new(4)?;
//! aes.as_ctx().workq_add(&mut wq)?;
//!
//! let mut plain = inv.buf_at(&mmap, 0, 4096)?;
//! plain.append(b"secret block")?;
//! let sealed = inv.buf_at(&mmap, 4096, 4096)?;
//! let iv = [1u8; 12];
//! let job = AesGcmJob::encrypt(plain, sealed, &key, &iv, 16, 0, 1)?;
//! wq.submit_job(aes.as_ctx(), job).map_err(|(e, _)| e)?;
//! let mut done = wq.wait(None)?;
//! let sealed = done.take_buf(AesGcmJob::DST).unwrap();
//! assert_eq!(sealed.data_len(), 12 + 16); // ciphertext and tag
//!
//! let back = inv.buf_at(&mmap, 8192, 4096)?;
//! let job = AesGcmJob::decrypt(sealed, back, &key, &iv, 16, 0, 2)?;
//! wq.submit_job(aes.as_ctx(), job).map_err(|(e, _)| e)?;
//! let mut done = wq.wait(None)?;
//! assert_eq!(done.take_buf(AesGcmJob::DST).unwrap().data_to_vec(), b"secret block");
//! # Ok::<(), doca_core::Error>(())
//! ```

use aws_lc_sys as lc;
use doca_core::device::Capability;
use doca_core::exec::{
    CtxOps, ExecEnv, Job, JobOps, JobRecord, TaskHooks, local_src_dst, run_on_lists, staged,
};
use doca_core::memory::with_io_locked;
use doca_core::types::action;
use doca_core::{Buf, BufDesc, Ctx, Data, Dev, DevInfo, Error, ErrorCode, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The encrypt task's job type.
pub const JOB_ENCRYPT: u32 = action::AES_GCM_FIRST + 1;
/// The decrypt task's job type.
pub const JOB_DECRYPT: u32 = action::AES_GCM_FIRST + 2;
/// Largest source or destination of one task (2 GiB).
pub const MAX_BUF_SIZE: u64 = 1 << 31;
/// Longest buffer list of a task's source or destination (a list source is read as
/// its elements' data in order; a list destination is filled element by element).
pub const MAX_LIST_BUF_NUM_ELEM: u32 = 16;
/// Longest IV, in bytes (shorter ones are padded with zeros).
pub const MAX_IV_LEN: u32 = 12;
/// The tag sizes a task may ask for, in bytes (96 and 128 bits).
pub const TAG_SIZES: [u32; 2] = [12, 16];

/// Record parameter: the key's handle (the key itself is kept alive by the record).
pub const PARAM_KEY: usize = 0;
/// Record parameter: IV bytes 0 to 7 (little-endian).
pub const PARAM_IV_LO: usize = 1;
/// Record parameter: IV bytes 8 to 11 (low 32 bits, little-endian) and the IV's length
/// (bits 32 to 39).
pub const PARAM_IV_HI: usize = 2;
/// Record parameter: the tag size in bytes.
pub const PARAM_TAG_SIZE: usize = 3;
/// Record parameter: the additional authenticated data's size in bytes.
pub const PARAM_AAD_SIZE: usize = 4;

/// AES-GCM's task table: the one declaration of its task types, handed to a generator
/// macro (`$gen`): [`doca_core::task_specs!`] makes [`tasks`] from it, and the C face
/// makes its 3.x task functions from it (the IV, two C arguments for one record value,
/// has its `alloc_init`, `set_iv` and `get_iv` written by hand). Record layout: buffer
/// 0 the source, 1 the destination; parameters as the `PARAM_*` constants say.
#[macro_export]
macro_rules! aes_gcm_task_table {
    ($gen:path) => {
        $gen! {
            lib: "aes_gcm",
            capability: AesGcm,
            topology: "aes_gcm",
            c3_handle: doca_aes_gcm,
            tasks: [
                {
                    spec: ENCRYPT @ $crate::tasks::ENCRYPT,
                    module: encrypt,
                    name: "encrypt",
                    job: $crate::JOB_ENCRYPT,
                    job_types: [encrypt = $crate::JOB_ENCRYPT],
                    inputs: [
                        buf src: 0 (*const doca_buf)
                            get doca_aes_gcm_task_encrypt_get_src
                            set doca_aes_gcm_task_encrypt_set_src,
                        buf dst: 1 (*mut doca_buf)
                            get doca_aes_gcm_task_encrypt_get_dst
                            set doca_aes_gcm_task_encrypt_set_dst,
                        handle key: 0 (*mut doca_aes_gcm_key)
                            get doca_aes_gcm_task_encrypt_get_key
                            set doca_aes_gcm_task_encrypt_set_key,
                        param iv: 1 (*const u8),
                        param iv_length: 2 (u32),
                        param tag_size: 3 (u32)
                            get doca_aes_gcm_task_encrypt_get_tag_size
                            set doca_aes_gcm_task_encrypt_set_tag_size,
                        param aad_size: 4 (u32)
                            get doca_aes_gcm_task_encrypt_get_aad_size
                            set doca_aes_gcm_task_encrypt_set_aad_size,
                    ],
                    write_back: [],
                    hooks: $crate::HOOKS,
                    c3: {
                        task: doca_aes_gcm_task_encrypt,
                        cb: doca_aes_gcm_task_encrypt_completion_cb_t,
                        set_conf: doca_aes_gcm_task_encrypt_set_conf (num),
                        alloc_init: doca_aes_gcm_task_encrypt_alloc_init (by_hand),
                        as_task: doca_aes_gcm_task_encrypt_as_task,
                        setters: void,
                        caps: [
                            supported doca_aes_gcm_cap_task_encrypt_is_supported,
                            supported doca_aes_gcm_cap_task_encrypt_is_tag_96_supported,
                            supported doca_aes_gcm_cap_task_encrypt_is_tag_128_supported,
                            value doca_aes_gcm_cap_task_encrypt_get_max_iv_len (u32) = $crate::MAX_IV_LEN,
                            value doca_aes_gcm_cap_task_encrypt_get_max_buf_size (u64) = $crate::MAX_BUF_SIZE,
                            value doca_aes_gcm_cap_task_encrypt_get_max_list_buf_num_elem (u32) = $crate::MAX_LIST_BUF_NUM_ELEM,
                        ],
                    },
                    c22: {},
                },
                {
                    spec: DECRYPT @ $crate::tasks::DECRYPT,
                    module: decrypt,
                    name: "decrypt",
                    job: $crate::JOB_DECRYPT,
                    job_types: [decrypt = $crate::JOB_DECRYPT],
                    inputs: [
                        buf src: 0 (*const doca_buf)
                            get doca_aes_gcm_task_decrypt_get_src
                            set doca_aes_gcm_task_decrypt_set_src,
                        buf dst: 1 (*mut doca_buf)
                            get doca_aes_gcm_task_decrypt_get_dst
                            set doca_aes_gcm_task_decrypt_set_dst,
                        handle key: 0 (*mut doca_aes_gcm_key)
                            get doca_aes_gcm_task_decrypt_get_key
                            set doca_aes_gcm_task_decrypt_set_key,
                        param iv: 1 (*const u8),
                        param iv_length: 2 (u32),
                        param tag_size: 3 (u32)
                            get doca_aes_gcm_task_decrypt_get_tag_size
                            set doca_aes_gcm_task_decrypt_set_tag_size,
                        param aad_size: 4 (u32)
                            get doca_aes_gcm_task_decrypt_get_aad_size
                            set doca_aes_gcm_task_decrypt_set_aad_size,
                    ],
                    write_back: [],
                    hooks: $crate::HOOKS,
                    c3: {
                        task: doca_aes_gcm_task_decrypt,
                        cb: doca_aes_gcm_task_decrypt_completion_cb_t,
                        set_conf: doca_aes_gcm_task_decrypt_set_conf (num),
                        alloc_init: doca_aes_gcm_task_decrypt_alloc_init (by_hand),
                        as_task: doca_aes_gcm_task_decrypt_as_task,
                        setters: void,
                        caps: [
                            supported doca_aes_gcm_cap_task_decrypt_is_supported,
                            supported doca_aes_gcm_cap_task_decrypt_is_tag_96_supported,
                            supported doca_aes_gcm_cap_task_decrypt_is_tag_128_supported,
                            value doca_aes_gcm_cap_task_decrypt_get_max_iv_len (u32) = $crate::MAX_IV_LEN,
                            value doca_aes_gcm_cap_task_decrypt_get_max_buf_size (u64) = $crate::MAX_BUF_SIZE,
                            value doca_aes_gcm_cap_task_decrypt_get_max_list_buf_num_elem (u32) = $crate::MAX_LIST_BUF_NUM_ELEM,
                        ],
                    },
                    c22: {},
                },
            ],
        }
    };
}

/// AES-GCM's task types, from [`aes_gcm_task_table!`].
pub mod tasks {
    crate::aes_gcm_task_table!(doca_core::task_specs);
}

/// What the task types check beyond their slots: the tag size.
pub const HOOKS: TaskHooks = TaskHooks {
    check_param: Some(check_param),
    ..TaskHooks::NONE
};

fn check_param(slot: usize, v: u64) -> Result<()> {
    if slot == PARAM_TAG_SIZE {
        check_tag_size(v)?;
    }
    Ok(())
}

fn check_tag_size(v: u64) -> Result<()> {
    if TAG_SIZES.iter().any(|&t| u64::from(t) == v) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "the tag size is 12 or 16 bytes (96 or 128 bits), not {v}"
        )))
    }
}

/// Checks an IV's length.
pub fn check_iv_len(len: u32) -> Result<()> {
    if len <= MAX_IV_LEN {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "an IV is at most {MAX_IV_LEN} bytes, not {len}"
        )))
    }
}

/// The two record parameters of an IV of `iv.len()` bytes (at most 12, checked).
pub fn iv_params(iv: &[u8]) -> Result<(u64, u64)> {
    let len = u32::try_from(iv.len()).unwrap_or(u32::MAX);
    check_iv_len(len)?;
    let mut b = [0u8; 12];
    b[..iv.len()].copy_from_slice(iv);
    let lo = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let hi = u64::from(u32::from_le_bytes([b[8], b[9], b[10], b[11]])) | (u64::from(len) << 32);
    Ok((lo, hi))
}

/// The IV (padded to 12 bytes) and its length from the two record parameters.
pub fn iv_from_params(lo: u64, hi: u64) -> ([u8; 12], u32) {
    let mut b = [0u8; 12];
    b[..8].copy_from_slice(&lo.to_le_bytes());
    b[8..].copy_from_slice(&(hi as u32).to_le_bytes());
    (b, ((hi >> 32) & 0xff) as u32)
}

/// `enum doca_aes_gcm_key_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyType {
    /// `DOCA_AES_GCM_KEY_128`: 16 bytes.
    Aes128 = 1,
    /// `DOCA_AES_GCM_KEY_256`: 32 bytes.
    Aes256 = 2,
}

impl KeyType {
    /// The type of DOCA's value (`InvalidValue` for others).
    pub fn from_raw(v: i64) -> Result<KeyType> {
        match v {
            1 => Ok(KeyType::Aes128),
            2 => Ok(KeyType::Aes256),
            v => Err(Error::invalid(format!(
                "{v} is not a key type (DOCA_AES_GCM_KEY_128 is 1, DOCA_AES_GCM_KEY_256 is 2)"
            ))),
        }
    }

    /// The key's length in bytes.
    pub fn len(self) -> usize {
        match self {
            KeyType::Aes128 => 16,
            KeyType::Aes256 => 32,
        }
    }

    /// Always false: a key has bytes.
    pub fn is_empty(self) -> bool {
        false
    }
}

/// One AWS-LC AEAD context: the expanded key for one tag size.
struct AeadCtx(Box<lc::EVP_AEAD_CTX>);

// SAFETY: AWS-LC's EVP_AEAD_CTX is immutable after EVP_AEAD_CTX_init: seal and open take
// it by const pointer and may run on several threads at once (AWS-LC documents AEAD
// contexts as safe for concurrent use); it is freed only in Drop, with `&mut self`.
unsafe impl Send for AeadCtx {}
// SAFETY: as above.
unsafe impl Sync for AeadCtx {}

impl AeadCtx {
    fn new(kind: KeyType, raw: &[u8], tag_len: usize) -> Result<AeadCtx> {
        // SAFETY: a zeroed EVP_AEAD_CTX is the state EVP_AEAD_CTX_zero makes.
        let mut ctx: Box<lc::EVP_AEAD_CTX> = Box::new(unsafe { std::mem::zeroed() });
        // SAFETY: the AEAD descriptors are static.
        let aead = unsafe {
            match kind {
                KeyType::Aes128 => lc::EVP_aead_aes_128_gcm(),
                KeyType::Aes256 => lc::EVP_aead_aes_256_gcm(),
            }
        };
        // SAFETY: ctx is a zeroed context; raw holds the key's bytes.
        let ok = unsafe {
            lc::EVP_AEAD_CTX_zero(&mut *ctx);
            lc::EVP_AEAD_CTX_init(
                &mut *ctx,
                aead,
                raw.as_ptr(),
                raw.len(),
                tag_len,
                std::ptr::null_mut(),
            )
        };
        if ok != 1 {
            wipe(&mut ctx);
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "AWS-LC refused the AES-GCM key",
            ));
        }
        Ok(AeadCtx(ctx))
    }
}

/// Zeroes a context's bytes (the expanded key), in a way the compiler keeps.
fn wipe(ctx: &mut lc::EVP_AEAD_CTX) {
    let p = (ctx as *mut lc::EVP_AEAD_CTX).cast::<u8>();
    for i in 0..std::mem::size_of::<lc::EVP_AEAD_CTX>() {
        // SAFETY: i is inside the context, which this call has to itself.
        unsafe { std::ptr::write_volatile(p.add(i), 0) };
    }
    std::sync::atomic::compiler_fence(Ordering::SeqCst);
}

impl Drop for AeadCtx {
    fn drop(&mut self) {
        // SAFETY: an initialized context, dropped once.
        unsafe { lc::EVP_AEAD_CTX_cleanup(&mut *self.0) };
        wipe(&mut self.0);
    }
}

/// An AES-GCM key (`struct doca_aes_gcm_key`): expanded for both tag sizes; its bytes
/// are wiped when it is dropped. Tasks in flight keep it alive.
pub struct Key {
    kind: KeyType,
    tag12: AeadCtx,
    tag16: AeadCtx,
    keys: Arc<AtomicUsize>,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl Key {
    /// The key's type.
    pub fn kind(&self) -> KeyType {
        self.kind
    }

    fn ctx(&self, tag: usize) -> &lc::EVP_AEAD_CTX {
        if tag == 12 {
            &self.tag12.0
        } else {
            &self.tag16.0
        }
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        self.keys.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An AES-GCM context (`struct doca_aes_gcm`).
#[derive(Debug, Clone)]
pub struct AesGcm {
    ctx: Ctx,
    keys: Arc<AtomicUsize>,
}

impl Default for AesGcm {
    fn default() -> AesGcm {
        AesGcm::new()
    }
}

fn is_aes_gcm_job(t: u32) -> bool {
    t == JOB_ENCRYPT || t == JOB_DECRYPT
}

impl AesGcm {
    /// `doca_aes_gcm_create`.
    pub fn new() -> AesGcm {
        AesGcm {
            ctx: Ctx::new(AesGcmOps),
            keys: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// `doca_aes_gcm_as_ctx`.
    pub fn as_ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// `doca_aes_gcm_key_create`: a key from `raw` (16 bytes for [`KeyType::Aes128`], 32
    /// for [`KeyType::Aes256`]). The context needs its device first, as on DOCA.
    pub fn key_create(&self, raw: &[u8], kind: KeyType) -> Result<Arc<Key>> {
        if self.ctx.dev().is_none() {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the AES-GCM context has no device yet: add one before creating keys",
            ));
        }
        if raw.len() != kind.len() {
            return Err(Error::invalid(format!(
                "a {}-bit key is {} bytes, not {}",
                kind.len() * 8,
                kind.len(),
                raw.len()
            )));
        }
        let key = Key {
            kind,
            tag12: AeadCtx::new(kind, raw, 12)?,
            tag16: AeadCtx::new(kind, raw, 16)?,
            keys: self.keys.clone(),
        };
        self.keys.fetch_add(1, Ordering::AcqRel);
        Ok(Arc::new(key))
    }

    /// Keys of this context not yet dropped (`doca_aes_gcm_destroy` refuses while any
    /// is left).
    pub fn keys_alive(&self) -> usize {
        self.keys.load(Ordering::Acquire)
    }

    /// Whether the device runs tasks of `job_type` (`NotSupported` for other job types
    /// or a device without AES-GCM).
    pub fn job_get_supported(devinfo: &DevInfo, job_type: u32) -> Result<()> {
        if !is_aes_gcm_job(job_type) {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!("job type {job_type} is not an AES-GCM task"),
            ));
        }
        doca_core::exec::job_supported_in(tasks::ALL, devinfo, job_type)
    }
}

/// An encrypt or decrypt job (see the crate's documentation for the layout).
#[derive(Debug)]
pub struct AesGcmJob {
    job_type: u32,
    src: Buf,
    dst: Buf,
    key: Arc<Key>,
    iv: (u64, u64),
    tag_size: u32,
    aad_size: u32,
    user_data: Data,
}

impl AesGcmJob {
    /// Record slot of the source.
    pub const SRC: usize = JobRecord::SRC;
    /// Record slot of the destination.
    pub const DST: usize = JobRecord::DST;

    #[allow(clippy::too_many_arguments)]
    fn new(
        job_type: u32,
        src: Buf,
        dst: Buf,
        key: &Arc<Key>,
        iv: &[u8],
        tag_size: u32,
        aad_size: u32,
        user_data: u64,
    ) -> Result<AesGcmJob> {
        check_tag_size(u64::from(tag_size))?;
        Ok(AesGcmJob {
            job_type,
            src,
            dst,
            key: key.clone(),
            iv: iv_params(iv)?,
            tag_size,
            aad_size,
            user_data: Data(user_data),
        })
    }

    /// Encrypts the source's data (`aad_size` bytes of additional data, then the
    /// plaintext) with an IV of at most 12 bytes and a tag of 12 or 16 bytes.
    #[allow(clippy::too_many_arguments)]
    pub fn encrypt(
        src: Buf,
        dst: Buf,
        key: &Arc<Key>,
        iv: &[u8],
        tag_size: u32,
        aad_size: u32,
        user_data: u64,
    ) -> Result<AesGcmJob> {
        AesGcmJob::new(
            JOB_ENCRYPT,
            src,
            dst,
            key,
            iv,
            tag_size,
            aad_size,
            user_data,
        )
    }

    /// Decrypts and authenticates the source's data (the additional data, the
    /// ciphertext, then the tag).
    #[allow(clippy::too_many_arguments)]
    pub fn decrypt(
        src: Buf,
        dst: Buf,
        key: &Arc<Key>,
        iv: &[u8],
        tag_size: u32,
        aad_size: u32,
        user_data: u64,
    ) -> Result<AesGcmJob> {
        AesGcmJob::new(
            JOB_DECRYPT,
            src,
            dst,
            key,
            iv,
            tag_size,
            aad_size,
            user_data,
        )
    }
}

impl Job for AesGcmJob {
    fn into_record(self) -> JobRecord {
        let mut r = JobRecord::new(self.job_type, self.user_data);
        r.set_buf(JobRecord::SRC, self.src);
        r.set_buf(JobRecord::DST, self.dst);
        r.params[PARAM_KEY] = Arc::as_ptr(&self.key) as usize as u64;
        r.params[PARAM_IV_LO] = self.iv.0;
        r.params[PARAM_IV_HI] = self.iv.1;
        r.params[PARAM_TAG_SIZE] = u64::from(self.tag_size);
        r.params[PARAM_AAD_SIZE] = u64::from(self.aad_size);
        r.aux = Some(self.key);
        r
    }
}

struct AesGcmOps;

impl CtxOps for AesGcmOps {
    fn tasks(&self) -> &'static [&'static doca_core::exec::TaskSpec] {
        tasks::ALL
    }
    fn name(&self) -> &'static str {
        "aes_gcm"
    }

    fn capability(&self) -> Capability {
        Capability::AesGcm
    }

    fn handles(&self, job_type: u32) -> bool {
        is_aes_gcm_job(job_type)
    }
}

/// The record's key, source and destination, checked.
fn parts<'a>(job: &'a JobRecord, dev: &Dev) -> Result<(&'a Key, &'a BufDesc, &'a BufDesc)> {
    let key = job
        .aux
        .as_deref()
        .and_then(|a| a.downcast_ref::<Key>())
        .ok_or_else(|| Error::invalid("an AES-GCM task needs a key (doca_aes_gcm_key_create)"))?;
    let (src, dst) = local_src_dst(job, dev, "AES-GCM", MAX_LIST_BUF_NUM_ELEM)?;
    check_tag_size(job.params[PARAM_TAG_SIZE])?;
    check_iv_len(iv_from_params(job.params[PARAM_IV_LO], job.params[PARAM_IV_HI]).1)?;
    Ok((key, src, dst))
}

/// The output length of a task on `n` source bytes, checked against its sizes.
fn out_len(job_type: u32, n: usize, aad: usize, tag: usize) -> Result<usize> {
    if job_type == JOB_ENCRYPT {
        if n < aad {
            return Err(Error::invalid(format!(
                "the source holds {n} bytes, fewer than the {aad} bytes of additional authenticated data"
            )));
        }
        Ok(n + tag)
    } else {
        if n < aad + tag {
            return Err(Error::invalid(format!(
                "the source holds {n} bytes, fewer than its {aad} bytes of additional authenticated data and its {tag}-byte tag"
            )));
        }
        Ok(n - tag)
    }
}

impl JobOps for AesGcmOps {
    fn validate(&self, job: &mut JobRecord, dev: &Dev) -> Result<()> {
        let (_, src, _) = parts(job, dev)?;
        if src.list_data_len() as u64 > MAX_BUF_SIZE {
            return Err(Error::invalid(format!(
                "the source holds {} bytes; an AES-GCM task takes at most {MAX_BUF_SIZE}",
                src.list_data_len()
            )));
        }
        out_len(
            job.job_type,
            src.list_data_len(),
            job.params[PARAM_AAD_SIZE] as usize,
            job.params[PARAM_TAG_SIZE] as usize,
        )
        .map(|_| ())
    }

    fn execute(&self, job: &mut JobRecord, env: &ExecEnv<'_>) -> Result<()> {
        let (key, src, dst) = parts(job, env.dev())?;
        let (iv, _) = iv_from_params(job.params[PARAM_IV_LO], job.params[PARAM_IV_HI]);
        let aad = job.params[PARAM_AAD_SIZE] as usize;
        let tag = job.params[PARAM_TAG_SIZE] as usize;
        let c = Crypt {
            encrypt: job.job_type == JOB_ENCRYPT,
            key,
            iv,
            tag,
            aad,
        };
        if staged(src, dst) {
            run_on_lists(job, src, dst, MAX_BUF_SIZE as usize, |input, output| {
                let need = c.fits(input.len(), output.len())?;
                c.run(input, &mut output[..need])
            })?;
            return Ok(());
        }
        let (to, room) = job.dst_tail(dst);
        let r = with_io_locked(&[src], &[dst], || {
            let (from, n) = src.data_span();
            let need = c.fits(n, room)?;
            if from < to + need && to < from + n && n > 0 && need > 0 {
                return Err(Error::invalid("the source and the destination overlap"));
            }
            // SAFETY: both spans lie inside their buffers' mmaps, kept alive by the
            // job's buffers, in this process (checked); they do not overlap (checked);
            // the io locks give this job their bytes.
            let (input, output) = unsafe {
                (
                    std::slice::from_raw_parts(from as *const u8, n),
                    std::slice::from_raw_parts_mut(to as *mut u8, need),
                )
            };
            c.run(input, output)
        })
        .ok_or_else(|| Error::invalid("the task spans more than 16 mmaps"))?;
        job.grow_dst_at_delivery(r?)
    }
}

/// One task's operation: its direction, key, IV and sizes.
struct Crypt<'a> {
    encrypt: bool,
    key: &'a Key,
    iv: [u8; 12],
    tag: usize,
    aad: usize,
}

impl Crypt<'_> {
    /// The output length for `n` source bytes, checked against `room`.
    fn fits(&self, n: usize, room: usize) -> Result<usize> {
        let job_type = if self.encrypt {
            JOB_ENCRYPT
        } else {
            JOB_DECRYPT
        };
        let need = out_len(job_type, n, self.aad, self.tag)?;
        if room < need {
            return Err(Error::invalid(format!(
                "the destination's tailroom ({room} bytes) is too small for the {need} bytes of the result"
            )));
        }
        Ok(need)
    }

    /// Encrypts or decrypts `input` into `output` (exactly [`fits`](Crypt::fits)'s
    /// length); the output's length.
    fn run(&self, input: &[u8], output: &mut [u8]) -> Result<usize> {
        if self.encrypt {
            seal(self.key, &self.iv, self.tag, self.aad, input, output)?;
        } else {
            open(self.key, &self.iv, self.tag, self.aad, input, output)?;
        }
        Ok(output.len())
    }
}

/// Encrypts `input` (additional data, plaintext) into `output` (additional data,
/// ciphertext, tag).
fn seal(
    key: &Key,
    iv: &[u8; 12],
    tag: usize,
    aad: usize,
    input: &[u8],
    output: &mut [u8],
) -> Result<()> {
    let (ad, pt) = input.split_at(aad);
    let (out_ad, rest) = output.split_at_mut(aad);
    out_ad.copy_from_slice(ad);
    let (ct, out_tag) = rest.split_at_mut(pt.len());
    let mut tag_len = 0usize;
    // SAFETY: every pointer and length names a slice above; the context is initialized;
    // the output and tag buffers have the lengths AWS-LC is told.
    let ok = unsafe {
        lc::EVP_AEAD_CTX_seal_scatter(
            key.ctx(tag),
            ct.as_mut_ptr(),
            out_tag.as_mut_ptr(),
            &mut tag_len,
            out_tag.len(),
            iv.as_ptr(),
            iv.len(),
            pt.as_ptr(),
            pt.len(),
            std::ptr::null(),
            0,
            ad.as_ptr(),
            ad.len(),
        )
    };
    if ok != 1 || tag_len != tag {
        // SAFETY: clears AWS-LC's thread-local error queue.
        unsafe { lc::ERR_clear_error() };
        return Err(Error::with_context(
            ErrorCode::IoFailed,
            "AWS-LC failed to encrypt the data",
        ));
    }
    Ok(())
}

/// Decrypts `input` (additional data, ciphertext, tag) into `output` (additional
/// data, plaintext) if the tag matches; otherwise zeroes `output` and fails.
fn open(
    key: &Key,
    iv: &[u8; 12],
    tag: usize,
    aad: usize,
    input: &[u8],
    output: &mut [u8],
) -> Result<()> {
    let (ad, rest) = input.split_at(aad);
    let (ct, in_tag) = rest.split_at(rest.len() - tag);
    // SAFETY: every pointer and length names a slice above; the context is initialized;
    // the output has room for the ciphertext's length.
    let ok = unsafe {
        lc::EVP_AEAD_CTX_open_gather(
            key.ctx(tag),
            output[aad..].as_mut_ptr(),
            iv.as_ptr(),
            iv.len(),
            ct.as_ptr(),
            ct.len(),
            in_tag.as_ptr(),
            in_tag.len(),
            ad.as_ptr(),
            ad.len(),
        )
    };
    if ok != 1 {
        output.fill(0);
        // SAFETY: clears AWS-LC's thread-local error queue.
        unsafe { lc::ERR_clear_error() };
        return Err(Error::with_context(
            ErrorCode::IoFailed,
            "the authentication tag does not match: the ciphertext, the tag, the additional data, the key or the IV is not the one encrypted (nothing was decrypted)",
        ));
    }
    output[..aad].copy_from_slice(ad);
    Ok(())
}
