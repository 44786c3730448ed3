//! Buffers and inventories of the 1.x face: head, length and reference count
//! getters, inventories created with their properties.

use super::*;

/// `doca_buf_head_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_head_get(buf: *mut doca_buf, head: *mut *mut u8) -> doca_error_t {
    ffi(|| {
        let out = out_ptr(head, "head")?;
        // SAFETY: NULL or a live buffer.
        let b = unsafe { handle(buf, "buf") }?;
        // SAFETY: checked non-NULL.
        unsafe { put(out, b.head()) };
        Ok(())
    })
}

/// `doca_buf_len_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_len_get(buf: *mut doca_buf, len: *mut usize) -> doca_error_t {
    ffi(|| {
        let out = out_ptr(len, "len")?;
        // SAFETY: NULL or a live buffer.
        let b = unsafe { handle(buf, "buf") }?;
        // SAFETY: checked non-NULL.
        unsafe { put(out, b.len()) };
        Ok(())
    })
}

/// `doca_buf_refcount_get` (2.2 names it `doca_buf_get_refcount`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_refcount_get(
    buf: *mut doca_buf,
    refcount: *mut u16,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::mem::doca_buf_get_refcount(buf, refcount) }
}

/// `doca_buf_inventory_create` of 1.x: a name (which plays no part) instead of user
/// data.
#[unsafe(export_name = "doca1__buf_inventory_create")]
pub unsafe extern "C" fn doca_buf_inventory_create(
    _name: *const c_char,
    num_elements: usize,
    extensions: u32,
    buf_inventory: *mut *mut doca_buf_inventory,
) -> doca_error_t {
    ffi(|| {
        new_handle(buf_inventory, "buf_inventory", || {
            BufInventory::create(Data(0), num_elements, extensions)
        })
    })
}

/// `doca_buf_inventory_property_set`: every inventory property is read-only.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_property_set(
    inventory: *mut doca_buf_inventory,
    property: doca_buf_inventory_property,
    _value: *const u8,
    _size: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle(inventory, "inventory") }?;
        match property {
            INV_NUM_ELEMENTS | INV_NUM_FREE_ELEMENTS | INV_EXTENSIONS => Err(err(
                ErrorCode::NotPermitted,
                "buffer inventory properties are read-only",
            )),
            p => Err(unknown("doca_buf_inventory_property", p)),
        }
    })
}

/// `doca_buf_inventory_property_get` (`value` is written, whatever its `const`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_property_get(
    inventory: *mut doca_buf_inventory,
    property: doca_buf_inventory_property,
    value: *const u8,
    size: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let inv = unsafe { handle(inventory, "inventory") }?;
        let (v, what) = match property {
            INV_NUM_ELEMENTS => (
                inv.num_elements(),
                "DOCA_BUF_INVENTORY_PROPERTY_NUM_ELEMENTS",
            ),
            INV_NUM_FREE_ELEMENTS => (
                inv.num_free_elements(),
                "DOCA_BUF_INVENTORY_PROPERTY_NUM_FREE_ELEMENTS",
            ),
            // Only DOCA_BUF_EXTENSION_NONE exists.
            INV_EXTENSIONS => (0, "DOCA_BUF_INVENTORY_PROPERTY_EXTENSIONS"),
            p => return Err(unknown("doca_buf_inventory_property", p)),
        };
        put_value(value as *mut u8, size, &v.to_ne_bytes(), false, what)
    })
}
