//! Memory maps of the 1.x face: created by name, properties, populated chunk by
//! chunk, exported to and created from the DPU side.

use super::*;

/// `doca_mmap_create` of 1.x: a named, chunked memory map (populated after start).
#[unsafe(export_name = "doca1__mmap_create")]
pub unsafe extern "C" fn doca_mmap_create(
    name: *const c_char,
    mmap: *mut *mut doca_mmap,
) -> doca_error_t {
    ffi(|| {
        let name = if name.is_null() {
            ""
        } else {
            // SAFETY: a NUL-terminated string (the C contract).
            unsafe { cstr(name, "name") }?
        };
        new_handle(mmap, "mmap", || {
            let mut m = Mmap::chunked(Data(0));
            m.set_name(name);
            // 1.x: one device unless set before start.
            m.set_max_num_devices(1)?;
            Ok(m)
        })
    })
}

/// `doca_mmap_property_set`: before start, and not on an mmap from an export.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_property_set(
    mmap: *mut doca_mmap,
    property: doca_mmap_property,
    value: *const u8,
    size: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle used by this thread.
        let m = unsafe { handle_mut(mmap, "mmap") }?;
        if m.from_export() || m.exported() {
            return Err(err(
                ErrorCode::NotPermitted,
                "an exported mmap, or one created from an export, keeps its properties",
            ));
        }
        match property {
            MMAP_MAX_NUM_CHUNKS => {
                m.set_max_num_chunks(get_u32(value, size, "DOCA_MMAP_MAX_NUM_CHUNKS")?)
            }
            MMAP_MAX_NUM_DEVICES => {
                m.set_max_num_devices(get_u32(value, size, "DOCA_MMAP_MAX_NUM_DEVICES")?)
            }
            MMAP_ACCESS_FLAGS => {
                let bits = get_u32(value, size, "DOCA_MMAP_ACCESS_FLAGS")?;
                let flags = doca_core::AccessFlags::from_bits(bits).ok_or_else(|| {
                    invalid(format!("{bits:#x} is not a set of doca_access_flags"))
                })?;
                m.set_permissions(flags)
            }
            MMAP_NAME | MMAP_NUM_BUFS | MMAP_EXPORTED | MMAP_FROM_EXPORT => Err(err(
                ErrorCode::NotPermitted,
                "this memory map property is read-only",
            )),
            p => Err(unknown("doca_mmap_property", p)),
        }
    })
}

/// `doca_mmap_property_get` (`value` is written, whatever its `const`). The name comes
/// back NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_property_get(
    mmap: *mut doca_mmap,
    property: doca_mmap_property,
    value: *const u8,
    size: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let m = unsafe { handle(mmap, "mmap") }?;
        let value = value as *mut u8;
        let u32v = |v: u32, what| put_value(value, size, &v.to_ne_bytes(), false, what);
        match property {
            MMAP_NAME => put_value(value, size, m.name().as_bytes(), true, "DOCA_MMAP_NAME"),
            MMAP_MAX_NUM_CHUNKS => u32v(m.max_num_chunks(), "DOCA_MMAP_MAX_NUM_CHUNKS"),
            MMAP_MAX_NUM_DEVICES => u32v(m.max_num_devices(), "DOCA_MMAP_MAX_NUM_DEVICES"),
            MMAP_NUM_BUFS => u32v(m.num_bufs(), "DOCA_MMAP_NUM_BUFS"),
            MMAP_ACCESS_FLAGS => u32v(m.permissions().bits(), "DOCA_MMAP_ACCESS_FLAGS"),
            MMAP_EXPORTED => put_value(
                value,
                size,
                &[u8::from(m.exported())],
                false,
                "DOCA_MMAP_EXPORTED",
            ),
            MMAP_FROM_EXPORT => put_value(
                value,
                size,
                &[u8::from(m.from_export())],
                false,
                "DOCA_MMAP_FROM_EXPORT",
            ),
            p => Err(unknown("doca_mmap_property", p)),
        }
    })
}

/// `doca_mmap_populate`: adds a memory range to a started mmap; `free_cb(addr, len,
/// opaque)` is called once the mmap and its buffers are gone. `pg_sz` must be a power
/// of two of at least 4096 (the range itself need not be aligned).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_populate(
    mmap: *mut doca_mmap,
    addr: *mut c_void,
    len: usize,
    pg_sz: usize,
    free_cb: Option<doca_mmap_memrange_free_cb_t>,
    opaque: *mut c_void,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle used by this thread.
        let m = unsafe { handle_mut(mmap, "mmap") }?;
        if pg_sz < 4096 || !pg_sz.is_power_of_two() {
            return Err(invalid(format!(
                "pg_sz {pg_sz} is not a power of two of at least 4096"
            )));
        }
        let opaque = opaque as usize;
        let cb = free_cb.map(|f| -> Box<dyn FnOnce(*mut u8, usize) + Send> {
            Box::new(move |a, l| {
                // SAFETY: the program's callback, with the range it populated and its
                // opaque value.
                unsafe { f(a.cast(), l, opaque as *mut c_void) }
            })
        });
        // SAFETY: the program keeps the range valid, and touches it only through the
        // mmap's buffers, until the free callback says it is released (the C contract).
        unsafe { m.populate(addr.cast(), len, cb) }
    })
}

/// `doca_version_runtime` of the 1.x library: the version of the library the program
/// runs with (its headers say which they describe, `DOCA_VER_STRING`).
#[unsafe(export_name = "doca1__version_runtime")]
pub extern "C" fn doca_version_runtime() -> *const c_char {
    c"1.4.0079".as_ptr()
}

/// `doca_mmap_export`: a descriptor for `doca_mmap_create_from_export` on the DPU side,
/// in memory the caller frees with `free()`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_export(
    mmap: *mut doca_mmap,
    dev: *const doca_dev,
    export_desc: *mut *mut u8,
    export_desc_len: *mut usize,
) -> doca_error_t {
    ffi(|| {
        let (out, out_len) = (
            out_ptr(export_desc, "export_desc")?,
            out_ptr(export_desc_len, "export_desc_len")?,
        );
        // SAFETY: NULL or live handles.
        let (m, d) = unsafe { (handle(mmap, "mmap")?, handle(dev, "dev")?) };
        if m.ever_exported() {
            return Err(err(
                ErrorCode::NotPermitted,
                "the memory map was exported already (DOCA 1.x exports a map once)",
            ));
        }
        let blob = m.export_dpu(&d.dev)?;
        // DOCA 1.x's form: JSON text ending with a NUL, which the length counts.
        let mut text = doca_core::memory::export_desc_to_json(&blob)?.into_bytes();
        text.push(0);
        // SAFETY: a fresh allocation of the text's size (at least 1 byte).
        let p = unsafe { libc::malloc(text.len()) } as *mut u8;
        if p.is_null() {
            return Err(err(
                ErrorCode::NoMemory,
                "no memory for the export descriptor",
            ));
        }
        // SAFETY: `p` holds text.len() bytes; the outputs were checked non-NULL.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), p, text.len());
            put(out, p);
            put(out_len, text.len());
        }
        Ok(())
    })
}

/// `doca_mmap_stop` of 1.x: at any point, as the 1.x guide allows. Buffers already
/// taken stay valid; no buffer, range or device can be added, and the map cannot be
/// exported, until it is started again; importers of its export lose access.
#[unsafe(export_name = "doca1__mmap_stop")]
pub unsafe extern "C" fn doca_mmap_stop(mmap: *mut doca_mmap) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle used by this thread.
        let m = unsafe { handle_mut(mmap, "mmap") }?;
        m.stop_keeping_buffers()
    })
}

/// `doca_mmap_create_from_export` of 1.x: a name (which plays no part) instead of user
/// data, and the descriptor is `doca_mmap_export`'s JSON text (with or without the NUL
/// that ends it).
#[unsafe(export_name = "doca1__mmap_create_from_export")]
pub unsafe extern "C" fn doca_mmap_create_from_export(
    _name: *const c_char,
    export_desc: *const u8,
    export_desc_len: usize,
    dev: *mut doca_dev,
    mmap: *mut *mut doca_mmap,
) -> doca_error_t {
    // SAFETY: the same contract; 1.x has a name (which plays no part), not user data.
    unsafe { create_from_json_export(std::ptr::null(), export_desc, export_desc_len, dev, mmap) }
}
/// A memory map from `doca_mmap_export`'s JSON text (with or without the NUL that ends
/// it): the 1.x and 1.5 forms of `doca_mmap_create_from_export`.
///
/// # Safety
/// As for `doca_mmap_create_from_export`: `export_desc` holds `export_desc_len` bytes.
pub(crate) unsafe fn create_from_json_export(
    user_data: *const crate::common::doca_data,
    export_desc: *const u8,
    export_desc_len: usize,
    dev: *mut doca_dev,
    mmap: *mut *mut doca_mmap,
) -> doca_error_t {
    let mut blob = Vec::new();
    let r = ffi(|| {
        if export_desc.is_null() || export_desc_len == 0 {
            return Err(err(ErrorCode::InvalidValue, "export_desc is NULL or empty"));
        }
        // SAFETY: the caller's descriptor of export_desc_len bytes (the C contract).
        let text = unsafe { std::slice::from_raw_parts(export_desc, export_desc_len) };
        blob = doca_core::memory::export_desc_from_json(text)?;
        Ok(())
    });
    if r != crate::common::DOCA_SUCCESS {
        return r;
    }
    // SAFETY: the same contract, with the binary descriptor the text stands for.
    unsafe {
        crate::v22::mem::doca_mmap_create_from_export(
            user_data,
            blob.as_ptr().cast(),
            blob.len(),
            dev,
            mmap,
        )
    }
}
