//! `doca_aes_gcm.h`: the AES-GCM instance, its keys, and its encrypt and decrypt tasks.
//! The IV is two C arguments (pointer and length) for one record value, so the tasks'
//! `alloc_init`, `set_iv` and `get_iv` are written here; the rest comes from the task
//! table.

use super::lib::{Lib3, lib_as_ctx, lib_create};
use super::pe::{doca_ctx3, doca_task};
use crate::common::handles::{Handle, kind};
use crate::common::tasks::InputValue;
use crate::common::{
    Result, doca_data, doca_error_t, err, ffi, ffi_value, free_handle, handle, invalid, new_handle,
    out_ptr, put,
};
use crate::v22::dev::{doca_dev, doca_devinfo};
use crate::v22::libs::devinfo_query;
use crate::v22::mem::doca_buf;
use ::doca_aes_gcm::{
    AesGcm, JOB_DECRYPT, JOB_ENCRYPT, Key, KeyType, PARAM_AAD_SIZE, PARAM_IV_HI, PARAM_IV_LO,
    PARAM_KEY, PARAM_TAG_SIZE,
};
use doca_core::ErrorCode;
use doca_core::exec::TaskSpec;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

/// `struct doca_aes_gcm`.
pub type doca_aes_gcm = Lib3<AesGcm>;
/// `enum doca_aes_gcm_key_type`.
pub type doca_aes_gcm_key_type = c_int;

/// `struct doca_aes_gcm_key`: a key; tasks in flight keep its material alive, which is
/// wiped once the last of them is done.
#[derive(Debug)]
pub struct doca_aes_gcm_key {
    pub(crate) key: Arc<Key>,
}

impl Handle for doca_aes_gcm_key {
    type Kind = kind::Boxed;
}

/// A task's key: its handle in the parameter slot, the key kept alive by the record.
impl InputValue for *mut doca_aes_gcm_key {
    const NONE: Self = std::ptr::null_mut();
    unsafe fn store(
        self,
        inputs: &doca_core::exec::TaskInputs,
        _: &TaskSpec,
        slot: usize,
        name: &str,
    ) -> Result<()> {
        // SAFETY: NULL or a live key (the caller's contract).
        let k = unsafe { self.as_ref() }.ok_or_else(|| invalid(format!("the {name} is NULL")))?;
        inputs.params[slot].set(self as usize as u64);
        *inputs.aux.borrow_mut() = Some(k.key.clone());
        Ok(())
    }
    fn load(inputs: &doca_core::exec::TaskInputs, slot: usize) -> Self {
        inputs.params[slot].get() as usize as Self
    }
    unsafe fn put(
        self,
        out: &mut doca_core::JobRecord,
        _: &TaskSpec,
        slot: usize,
        name: &str,
    ) -> Result<()> {
        // SAFETY: as `store`.
        let k = unsafe { self.as_ref() }.ok_or_else(|| invalid(format!("the {name} is NULL")))?;
        out.params[slot] = self as usize as u64;
        out.aux = Some(k.key.clone());
        Ok(())
    }
}

/// `doca_aes_gcm_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_aes_gcm_create(
    dev: *mut doca_dev,
    aes_gcm: *mut *mut doca_aes_gcm,
) -> doca_error_t {
    let a = AesGcm::new();
    let ctx = a.as_ctx().clone();
    // SAFETY: NULL or a live device.
    unsafe { lib_create(dev, aes_gcm, a, ctx) }
}

/// `doca_aes_gcm_destroy`: only while idle, with its tasks freed and its keys
/// destroyed (`IN_USE`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_aes_gcm_destroy(aes_gcm: *mut doca_aes_gcm) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(aes_gcm, "aes_gcm") }?;
        let keys = h.lib.keys_alive();
        if keys > 0 {
            return Err(err(
                ErrorCode::InUse,
                format!(
                    "{keys} key(s) of this instance are not destroyed yet (doca_aes_gcm_key_destroy)"
                ),
            ));
        }
        h.ctx.destroy()?;
        // SAFETY: a live boxed handle, freed once.
        unsafe { free_handle(aes_gcm, "aes_gcm") }
    })
}

/// `doca_aes_gcm_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_aes_gcm_as_ctx(aes_gcm: *mut doca_aes_gcm) -> *mut doca_ctx3 {
    // SAFETY: NULL or a live handle.
    unsafe { lib_as_ctx(aes_gcm) }
}

/// `doca_aes_gcm_cap_get_max_num_tasks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_aes_gcm_cap_get_max_num_tasks(
    aes_gcm: *mut doca_aes_gcm,
    max_num_tasks: *mut u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle(aes_gcm, "aes_gcm") }?;
        let o = out_ptr(max_num_tasks, "max_num_tasks")?;
        // SAFETY: checked.
        unsafe { put(o, super::MAX_TASKS) };
        Ok(())
    })
}

/// `doca_aes_gcm_key_create`: a key from 16 (`DOCA_AES_GCM_KEY_128`) or 32
/// (`DOCA_AES_GCM_KEY_256`) raw bytes; the instance needs its device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_aes_gcm_key_create(
    aes_gcm: *mut doca_aes_gcm,
    raw_key: *const c_void,
    raw_key_type: doca_aes_gcm_key_type,
    key: *mut *mut doca_aes_gcm_key,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(aes_gcm, "aes_gcm") }?;
        let kind = KeyType::from_raw(i64::from(raw_key_type))?;
        if raw_key.is_null() {
            return Err(invalid("the raw key is NULL"));
        }
        // SAFETY: the program gives a key of its type's length (the C contract).
        let raw = unsafe { std::slice::from_raw_parts(raw_key.cast::<u8>(), kind.len()) };
        let k = h.lib.key_create(raw, kind)?;
        new_handle(key, "key", || Ok(doca_aes_gcm_key { key: k }))
    })
}

/// `doca_aes_gcm_key_destroy`: the key's material is wiped once no task in flight
/// uses it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_aes_gcm_key_destroy(key: *mut doca_aes_gcm_key) -> doca_error_t {
    // SAFETY: NULL or a live key, freed once.
    ffi(|| unsafe { free_handle(key, "key") })
}

/// `doca_aes_gcm_cap_task_encrypt_is_key_type_supported`: 128- and 256-bit keys.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_aes_gcm_cap_task_encrypt_is_key_type_supported(
    devinfo: *const doca_devinfo,
    key_type: doca_aes_gcm_key_type,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        AesGcm::job_get_supported(d, JOB_ENCRYPT)?;
        KeyType::from_raw(i64::from(key_type)).map(|_| ())
    })
}

/// `doca_aes_gcm_cap_task_decrypt_is_key_type_supported`: 128- and 256-bit keys.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_aes_gcm_cap_task_decrypt_is_key_type_supported(
    devinfo: *const doca_devinfo,
    key_type: doca_aes_gcm_key_type,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        AesGcm::job_get_supported(d, JOB_DECRYPT)?;
        KeyType::from_raw(i64::from(key_type)).map(|_| ())
    })
}

// ---- tasks: from AES-GCM's task table ----

::doca_aes_gcm::aes_gcm_task_table!(crate::common::tasks::c3_tasks);

/// Stores an IV of `len` bytes (at most 12) given as a pointer.
///
/// # Safety
/// `iv` is NULL (with `len` 0) or points to `len` readable bytes.
unsafe fn store_iv(t: &doca_task, iv: *const u8, len: u32) -> Result<()> {
    ::doca_aes_gcm::check_iv_len(len)?;
    let bytes: &[u8] = if len == 0 {
        &[]
    } else if iv.is_null() {
        return Err(invalid(format!("the IV is NULL but its length is {len}")));
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(iv, len as usize) }
    };
    let (lo, hi) = ::doca_aes_gcm::iv_params(bytes)?;
    t.params[PARAM_IV_LO].set(lo);
    t.params[PARAM_IV_HI].set(hi);
    Ok(())
}

/// An `alloc_init` of either task type.
///
/// # Safety
/// Handles are NULL or live; `iv` as [`store_iv`].
#[allow(clippy::too_many_arguments)]
unsafe fn alloc_init(
    spec: &'static TaskSpec,
    aes_gcm: *mut doca_aes_gcm,
    src_buff: *const doca_buf,
    dst_buff: *mut doca_buf,
    key: *mut doca_aes_gcm_key,
    iv: *const u8,
    iv_length: u32,
    tag_size: u32,
    aad_size: u32,
    user_data: doca_data,
    task: *mut *mut doca_task,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(aes_gcm, "aes_gcm") }?;
        let o = out_ptr(task, "task")?;
        let t = h.ctx.alloc_task(spec, user_data, |t| {
            // SAFETY: handles and the IV as the caller's contract says.
            unsafe {
                src_buff.store(t, spec, 0, "src_buff")?;
                dst_buff.store(t, spec, 1, "dst_buff")?;
                key.store(t, spec, PARAM_KEY, "key")?;
                store_iv(t, iv, iv_length)?;
                tag_size.store(t, spec, PARAM_TAG_SIZE, "tag_size")?;
                aad_size.store(t, spec, PARAM_AAD_SIZE, "aad_size")
            }
        })?;
        // SAFETY: output checked.
        unsafe { put(o, t) };
        Ok(())
    })
}

/// `doca_aes_gcm_task_encrypt_alloc_init`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_aes_gcm_task_encrypt_alloc_init(
    aes_gcm: *mut doca_aes_gcm,
    src_buff: *const doca_buf,
    dst_buff: *mut doca_buf,
    key: *mut doca_aes_gcm_key,
    iv: *const u8,
    iv_length: u32,
    tag_size: u32,
    aad_size: u32,
    user_data: doca_data,
    task: *mut *mut doca_aes_gcm_task_encrypt,
) -> doca_error_t {
    // SAFETY: forwarded.
    unsafe {
        alloc_init(
            &::doca_aes_gcm::tasks::ENCRYPT,
            aes_gcm,
            src_buff,
            dst_buff,
            key,
            iv,
            iv_length,
            tag_size,
            aad_size,
            user_data,
            task,
        )
    }
}

/// `doca_aes_gcm_task_decrypt_alloc_init`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn doca_aes_gcm_task_decrypt_alloc_init(
    aes_gcm: *mut doca_aes_gcm,
    src_buff: *const doca_buf,
    dst_buff: *mut doca_buf,
    key: *mut doca_aes_gcm_key,
    iv: *const u8,
    iv_length: u32,
    tag_size: u32,
    aad_size: u32,
    user_data: doca_data,
    task: *mut *mut doca_aes_gcm_task_decrypt,
) -> doca_error_t {
    // SAFETY: forwarded.
    unsafe {
        alloc_init(
            &::doca_aes_gcm::tasks::DECRYPT,
            aes_gcm,
            src_buff,
            dst_buff,
            key,
            iv,
            iv_length,
            tag_size,
            aad_size,
            user_data,
            task,
        )
    }
}

/// A task's IV: a pointer to the 12 bytes the task keeps (valid while the task is),
/// and its length.
fn get_iv(task: *const doca_task, iv_length: *mut u32) -> *const u8 {
    ffi_value(std::ptr::null(), || {
        // SAFETY: NULL or a task the program holds.
        let t = unsafe { handle(task, "task") }?;
        let (_, len) = ::doca_aes_gcm::iv_from_params(
            t.params[PARAM_IV_LO].get(),
            t.params[PARAM_IV_HI].get(),
        );
        if let Ok(o) = out_ptr(iv_length, "iv_length") {
            // SAFETY: checked.
            unsafe { put(o, len) };
        }
        // The two parameter cells are adjacent and hold the IV's bytes in order (they
        // were stored little-endian, and this machine is little-endian).
        const _: () = assert!(cfg!(target_endian = "little"));
        Ok(t.params[PARAM_IV_LO].as_ptr() as *const u8)
    })
}

/// `doca_aes_gcm_task_encrypt_get_iv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_aes_gcm_task_encrypt_get_iv(
    task: *const doca_aes_gcm_task_encrypt,
    iv_length: *mut u32,
) -> *const u8 {
    get_iv(task, iv_length)
}

/// `doca_aes_gcm_task_decrypt_get_iv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_aes_gcm_task_decrypt_get_iv(
    task: *const doca_aes_gcm_task_decrypt,
    iv_length: *mut u32,
) -> *const u8 {
    get_iv(task, iv_length)
}

fn set_iv(task: *mut doca_task, iv: *const u8, iv_length: u32) {
    ffi_value((), || {
        // SAFETY: NULL or a task the program holds.
        let t = unsafe { handle(task, "task") }?;
        // SAFETY: the program gives iv_length readable bytes (the C contract).
        unsafe { store_iv(t, iv, iv_length) }
    })
}

/// `doca_aes_gcm_task_encrypt_set_iv`: the IV's bytes are copied.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_aes_gcm_task_encrypt_set_iv(
    task: *mut doca_aes_gcm_task_encrypt,
    iv: *const u8,
    iv_length: u32,
) {
    set_iv(task, iv, iv_length)
}

/// `doca_aes_gcm_task_decrypt_set_iv`: the IV's bytes are copied.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_aes_gcm_task_decrypt_set_iv(
    task: *mut doca_aes_gcm_task_decrypt,
    iv: *const u8,
    iv_length: u32,
) {
    set_iv(task, iv, iv_length)
}
