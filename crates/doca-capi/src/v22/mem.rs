//! `doca_mmap.h`, `doca_buf.h`, `doca_buf_inventory.h`, `doca_bufpool.h`,
//! `doca_buf_array.h`.

use crate::common::destroy_in_place;
use crate::common::handles::{call, getter};
use crate::common::tasks::InputValue;
use crate::common::{
    Result, doca_data, doca_error_t, err, ffi, free_handle, handle, handle_mut, invalid,
    new_handle, out_ptr, put,
};
use crate::v22::dev::doca_dev;
use doca_core::JobRecord;
use doca_core::exec::{TaskInputs, TaskSpec};
use doca_core::{
    AccessFlags, Buf, BufArray, BufDesc, BufInventory, BufPool, Data, ErrorCode, Mmap,
};
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

crate::common::handles::handle_kinds! {
    Boxed: doca_mmap, doca_buf_inventory, doca_bufpool, doca_buf_arr;
    Shared: doca_buf;
}

/// `struct doca_mmap`.
pub type doca_mmap = Mmap;
/// `struct doca_buf`.
pub type doca_buf = BufDesc;
/// `struct doca_buf_inventory`.
pub type doca_buf_inventory = BufInventory;
/// `struct doca_bufpool`.
pub type doca_bufpool = BufPool;
/// `struct doca_buf_arr`.
pub type doca_buf_arr = BufArray;

/// `struct doca_gpu` (no GPU exists here).
#[derive(Debug)]
pub enum doca_gpu {}
/// `struct doca_dpa` (no DPA exists here).
#[derive(Debug)]
pub enum doca_dpa {}
/// `struct doca_gpu_buf_arr`.
#[derive(Debug)]
pub enum doca_gpu_buf_arr {}

/// `doca_mmap_memrange_free_cb_t`.
pub type doca_mmap_memrange_free_cb_t =
    unsafe extern "C" fn(addr: *mut c_void, len: usize, cookie: *mut c_void);

/// The user data behind an optional `const union doca_data *`.
///
/// # Safety
/// `p` is NULL or readable.
pub(crate) unsafe fn user_data(p: *const doca_data) -> Data {
    // SAFETY: the caller's contract.
    unsafe { p.as_ref() }.copied().unwrap_or_default()
}

/// `doca_mmap_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_create(
    user_data_p: *const doca_data,
    mmap: *mut *mut doca_mmap,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or readable user data.
        let ud = unsafe { user_data(user_data_p) };
        new_handle(mmap, "mmap", || Ok(Mmap::with_user_data(ud)))
    })
}

/// `doca_mmap_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_destroy(mmap: *mut doca_mmap) -> doca_error_t {
    // SAFETY: a live mmap handle.
    ffi(|| unsafe { destroy_in_place(mmap, "mmap", Mmap::destroy) })
}

call!(handle_mut;
    /// `doca_mmap_start`.
    pub unsafe extern "C" fn doca_mmap_start(mmap: *mut doca_mmap) -> doca_error_t => |m| m.start());
call!(handle_mut;
    /// `doca_mmap_stop`.
    pub unsafe extern "C" fn doca_mmap_stop(mmap: *mut doca_mmap) -> doca_error_t => |m| m.stop());
call!(handle_mut;
    /// `doca_mmap_set_max_num_devices`.
    pub unsafe extern "C" fn doca_mmap_set_max_num_devices(mmap: *mut doca_mmap, max_num_devices: u32) -> doca_error_t => |m| m.set_max_num_devices(max_num_devices));
call!(handle_mut;
    /// `doca_mmap_set_permissions`.
    pub unsafe extern "C" fn doca_mmap_set_permissions(mmap: *mut doca_mmap, access_mask: u32) -> doca_error_t => |m| m.set_permissions(AccessFlags::from_raw(access_mask)?));

/// `doca_mmap_dev_add`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_dev_add(
    mmap: *mut doca_mmap,
    dev: *mut doca_dev,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (m, d) = unsafe { (handle_mut(mmap, "mmap")?, handle(dev, "dev")?) };
        m.dev_add(&d.dev)
    })
}

/// `doca_mmap_dev_rm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_dev_rm(
    mmap: *mut doca_mmap,
    dev: *mut doca_dev,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (m, d) = unsafe { (handle_mut(mmap, "mmap")?, handle(dev, "dev")?) };
        m.dev_rm(&d.dev)
    })
}

/// `doca_mmap_export_dpu`: the descriptor stays valid, at the same address, until the
/// mmap is stopped or destroyed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_export_dpu(
    mmap: *mut doca_mmap,
    dev: *const doca_dev,
    export_desc: *mut *const c_void,
    export_desc_len: *mut usize,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { export(mmap, dev, export_desc, export_desc_len, false) }
}

/// `doca_mmap_export_rdma`: as `doca_mmap_export_dpu`, for another process of this
/// machine (`DOCA_ACCESS_RDMA_*` permissions).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_export_rdma(
    mmap: *mut doca_mmap,
    dev: *const doca_dev,
    export_desc: *mut *const c_void,
    export_desc_len: *mut usize,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { export(mmap, dev, export_desc, export_desc_len, true) }
}

/// # Safety
/// NULL or live handles; NULL or writable out pointers.
unsafe fn export(
    mmap: *mut doca_mmap,
    dev: *const doca_dev,
    export_desc: *mut *const c_void,
    export_desc_len: *mut usize,
    rdma: bool,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (m, d) = unsafe { (handle(mmap, "mmap")?, handle(dev, "dev")?) };
        let desc = out_ptr(export_desc, "export_desc")?;
        let len = out_ptr(export_desc_len, "export_desc_len")?;
        let blob = if rdma {
            m.export_rdma(&d.dev)?
        } else {
            m.export_dpu(&d.dev)?
        };
        // The mmap keeps its copy of the descriptor while the export lives.
        // SAFETY: both out pointers are non-NULL and writable (the caller's contract).
        unsafe {
            put(desc, blob.as_ptr() as *const c_void);
            put(len, blob.len());
        }
        Ok(())
    })
}

/// `doca_mmap_create_from_export`: a started mmap over the exporter's memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_create_from_export(
    user_data_p: *const doca_data,
    export_desc: *const c_void,
    export_desc_len: usize,
    dev: *mut doca_dev,
    mmap: *mut *mut doca_mmap,
) -> doca_error_t {
    ffi(|| {
        if export_desc.is_null() || export_desc_len == 0 {
            return Err(invalid("export_desc is NULL or empty"));
        }
        // SAFETY: NULL or a live handle.
        let d = unsafe { handle(dev, "dev") }?;
        // SAFETY: NULL or readable user data.
        let ud = unsafe { user_data(user_data_p) };
        // SAFETY: the caller passes export_desc_len readable bytes.
        let desc = unsafe { std::slice::from_raw_parts(export_desc as *const u8, export_desc_len) };
        new_handle(mmap, "mmap", || Mmap::create_from_export(ud, desc, &d.dev))
    })
}

/// `doca_mmap_set_memrange`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_set_memrange(
    mmap: *mut doca_mmap,
    addr: *mut c_void,
    len: usize,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle; the range is the caller's memory, valid until
        // the map is destroyed (the documented contract).
        unsafe {
            let m = handle_mut(mmap, "mmap")?;
            if addr.is_null() {
                return Err(invalid("addr is NULL"));
            }
            m.set_memrange(addr as *mut u8, len)
        }
    })
}

/// `doca_mmap_set_dmabuf_memrange`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_set_dmabuf_memrange(
    mmap: *mut doca_mmap,
    _dmabuf_fd: i32,
    _offset: usize,
    _len: usize,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle_mut(mmap, "mmap") }?;
        Err(err(
            ErrorCode::NotSupported,
            "dma-buf memory needs a GPU or NIC driver; none exists here",
        ))
    })
}

/// `doca_mmap_get_memrange`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_get_memrange(
    mmap: *const doca_mmap,
    addr: *mut *mut c_void,
    len: *mut usize,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let m = unsafe { handle(mmap, "mmap") }?;
        let (a, l) = (out_ptr(addr, "addr")?, out_ptr(len, "len")?);
        let (base, n) = m.memrange()?;
        // SAFETY: outputs checked.
        unsafe {
            put(a, base as *mut c_void);
            put(l, n);
        }
        Ok(())
    })
}

struct FreeCb {
    cb: doca_mmap_memrange_free_cb_t,
    opaque: *mut c_void,
}

// SAFETY: the callback and its cookie are the program's; DOCA calls it from whichever
// thread releases the map, as the C API documents.
unsafe impl Send for FreeCb {}

/// `doca_mmap_set_free_cb`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_set_free_cb(
    mmap: *mut doca_mmap,
    free_cb: Option<doca_mmap_memrange_free_cb_t>,
    opaque: *mut c_void,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let m = unsafe { handle_mut(mmap, "mmap") }?;
        let cb = free_cb.ok_or_else(|| invalid("free_cb is NULL"))?;
        let f = FreeCb { cb, opaque };
        m.set_free_cb(move |addr, len| {
            let f = f;
            // SAFETY: the program's callback with the cookie it gave.
            unsafe { (f.cb)(addr as *mut c_void, len, f.opaque) }
        })
    })
}

getter!(
    /// `doca_mmap_get_user_data`.
    pub unsafe extern "C" fn doca_mmap_get_user_data(mmap: *mut doca_mmap, user_data: *mut doca_data) -> doca_error_t => |m| m.user_data());
getter!(
    /// `doca_mmap_get_max_num_devices`.
    pub unsafe extern "C" fn doca_mmap_get_max_num_devices(mmap: *mut doca_mmap, max_num_devices: *mut u32) -> doca_error_t => |m| m.max_num_devices());
getter!(
    /// `doca_mmap_get_num_bufs`.
    pub unsafe extern "C" fn doca_mmap_get_num_bufs(mmap: *mut doca_mmap, num_bufs: *mut u32) -> doca_error_t => |m| m.num_bufs());
getter!(
    /// `doca_mmap_get_exported`.
    pub unsafe extern "C" fn doca_mmap_get_exported(mmap: *mut doca_mmap, exported: *mut u8) -> doca_error_t => |m| m.exported() as u8);
getter!(
    /// `doca_mmap_get_from_export`.
    pub unsafe extern "C" fn doca_mmap_get_from_export(mmap: *mut doca_mmap, from_export: *mut u8) -> doca_error_t => |m| m.from_export() as u8);

// ---- buffers ----

/// Hands C a new buffer: its reference passes to the caller (`out` is checked before the
/// buffer is taken).
fn give_buf(out: *mut *mut doca_buf, what: &str, take: impl FnOnce() -> Result<Buf>) -> Result<()> {
    let out = out_ptr(out, what)?;
    let b = take()?;
    // SAFETY: checked non-NULL; the C caller gives writable memory.
    unsafe { put(out, b.into_raw().as_ptr()) };
    Ok(())
}

/// A borrowed handle view of a C buffer: C holds the reference.
///
/// # Safety
/// `p` is NULL or a live descriptor on which the caller holds a reference.
pub(crate) unsafe fn buf_view(p: *const doca_buf) -> Result<ManuallyDrop<Buf>> {
    let nn = NonNull::new(p as *mut BufDesc).ok_or_else(|| invalid("buf is NULL"))?;
    // SAFETY: the caller holds a reference; ManuallyDrop never releases it.
    Ok(ManuallyDrop::new(unsafe { Buf::from_raw(nn) }))
}

/// `doca_buf_refcount_add`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_refcount_add(
    buf: *mut doca_buf,
    refcount: *mut u16,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: a live buffer the caller holds.
        let b = unsafe { buf_view(buf) }?;
        let before = b.refcount();
        let extra = b.refcount_add()?;
        let _ = extra.into_raw();
        if !refcount.is_null() {
            // SAFETY: non-NULL output.
            unsafe { put(refcount, before) };
        }
        Ok(())
    })
}

/// `doca_buf_refcount_rm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_refcount_rm(
    buf: *mut doca_buf,
    refcount: *mut u16,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: a live buffer; the caller gives up one reference.
        let b = unsafe { buf_view(buf) }?;
        let before = b.refcount();
        ManuallyDrop::into_inner(b).release()?;
        if !refcount.is_null() {
            // SAFETY: non-NULL output.
            unsafe { put(refcount, before) };
        }
        Ok(())
    })
}

getter!(
    /// `doca_buf_get_refcount`.
    pub unsafe extern "C" fn doca_buf_get_refcount(buf: *mut doca_buf, refcount: *mut u16) -> doca_error_t => |b| b.refcount());
getter!(
    /// `doca_buf_get_len`.
    pub unsafe extern "C" fn doca_buf_get_len(buf: *const doca_buf, len: *mut usize) -> doca_error_t => |b| b.len());
getter!(
    /// `doca_buf_get_head`.
    pub unsafe extern "C" fn doca_buf_get_head(buf: *const doca_buf, head: *mut *mut c_void) -> doca_error_t => |b| b.head() as *mut c_void);
getter!(
    /// `doca_buf_get_data_len`.
    pub unsafe extern "C" fn doca_buf_get_data_len(buf: *const doca_buf, data_len: *mut usize) -> doca_error_t => |b| b.data_len());
getter!(
    /// `doca_buf_get_data`.
    pub unsafe extern "C" fn doca_buf_get_data(buf: *const doca_buf, data: *mut *mut c_void) -> doca_error_t => |b| b.data() as *mut c_void);
getter!(
    /// `doca_buf_list_is_last`.
    pub unsafe extern "C" fn doca_buf_list_is_last(buf: *const doca_buf, is_last: *mut bool) -> doca_error_t => |b| b.is_last());
getter!(
    /// `doca_buf_list_is_first`.
    pub unsafe extern "C" fn doca_buf_list_is_first(buf: *const doca_buf, is_first: *mut bool) -> doca_error_t => |b| b.is_first());
getter!(
    /// `doca_buf_is_in_list`.
    pub unsafe extern "C" fn doca_buf_is_in_list(buf: *const doca_buf, is_in_list: *mut u8) -> doca_error_t => |b| b.is_in_list() as u8);
getter!(
    /// `doca_buf_list_num_elements`.
    pub unsafe extern "C" fn doca_buf_list_num_elements(buf: *const doca_buf, num_elements: *mut u32) -> doca_error_t => |b| b.num_elements());
getter!(
    /// `doca_buf_list_next`.
    pub unsafe extern "C" fn doca_buf_list_next(buf: *mut doca_buf, next_buf: *mut *mut doca_buf) -> doca_error_t =>
    |b| b.next().map_or(std::ptr::null_mut(), |n| n as *const BufDesc as *mut BufDesc));
getter!(
    /// `doca_buf_list_last`.
    pub unsafe extern "C" fn doca_buf_list_last(buf: *mut doca_buf, last_buf: *mut *mut doca_buf) -> doca_error_t => |b| b.last() as *const BufDesc as *mut BufDesc);

/// `doca_buf_set_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_set_data(
    buf: *mut doca_buf,
    data: *mut c_void,
    data_len: usize,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: a live buffer the caller holds.
        let mut b = unsafe { buf_view(buf) }?;
        // DOCA takes any section here; a task refuses one outside the buffer's mmap.
        b.set_data_as_given(data as *mut u8, data_len);
        Ok(())
    })
}

/// `doca_buf_reset_data_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_reset_data_len(buf: *mut doca_buf) -> doca_error_t {
    ffi(|| {
        // SAFETY: a live buffer the caller holds.
        let mut b = unsafe { buf_view(buf) }?;
        b.reset_data_len();
        Ok(())
    })
}

/// `doca_buf_list_chain`: list2's reference moves into list1.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_list_chain(
    list1: *mut doca_buf,
    list2: *mut doca_buf,
) -> doca_error_t {
    // SAFETY: the same contract.
    ffi(|| unsafe { chain_lists(list1, list2) })
}

/// Appends the list `list2` heads to the list `list1` heads (every face's chaining); on
/// refusal the program keeps its reference to list2.
///
/// # Safety
/// `list1` and `list2` are NULL or live buffers the caller holds.
pub(crate) unsafe fn chain_lists(list1: *mut doca_buf, list2: *mut doca_buf) -> Result<()> {
    // SAFETY: the caller's contract.
    let (mut l1, l2) = unsafe { (buf_view(list1)?, buf_view(list2)?) };
    match l1.chain(ManuallyDrop::into_inner(l2)) {
        Ok(()) => Ok(()),
        Err((e, back)) => {
            let _ = back.into_raw();
            Err(e)
        }
    }
}

/// `doca_buf_list_unchain`: list2 heads its own list again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_list_unchain(
    list1: *mut doca_buf,
    list2: *mut doca_buf,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: a live buffer the caller holds.
        let mut l1 = unsafe { buf_view(list1) }?;
        if list2.is_null() {
            return Err(invalid("list2 is NULL"));
        }
        let tail = l1.unchain(list2)?;
        let _ = tail.into_raw();
        Ok(())
    })
}

// ---- inventories ----

/// `doca_buf_inventory_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_create(
    user_data_p: *const doca_data,
    num_elements: usize,
    extensions: u32,
    buf_inventory: *mut *mut doca_buf_inventory,
) -> doca_error_t {
    ffi(|| {
        new_handle(buf_inventory, "buf_inventory", || {
            // SAFETY: NULL or readable user data.
            let ud = unsafe { user_data(user_data_p) };
            BufInventory::create(ud, num_elements, extensions)
        })
    })
}

/// `doca_buf_inventory_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_destroy(
    inventory: *mut doca_buf_inventory,
) -> doca_error_t {
    // SAFETY: a live inventory handle.
    ffi(|| unsafe { destroy_in_place(inventory, "inventory", BufInventory::destroy) })
}

/// `doca_buf_inventory_start`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_start(
    inventory: *mut doca_buf_inventory,
) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    ffi(|| unsafe { handle_mut(inventory, "inventory") }?.start())
}

/// `doca_buf_inventory_stop`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_stop(
    inventory: *mut doca_buf_inventory,
) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    ffi(|| unsafe { handle_mut(inventory, "inventory") }?.stop())
}

/// `doca_buf_inventory_buf_by_args`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_buf_by_args(
    inventory: *mut doca_buf_inventory,
    mmap: *mut doca_mmap,
    addr: *mut c_void,
    len: usize,
    data: *mut c_void,
    data_len: usize,
    buf: *mut *mut doca_buf,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (inv, m) = unsafe { (handle(inventory, "inventory")?, handle(mmap, "mmap")?) };
        give_buf(buf, "buf", || {
            inv.buf_by_args(m, addr as *mut u8, len, data as *mut u8, data_len)
        })
    })
}

/// `doca_buf_inventory_buf_dup`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_buf_dup(
    inventory: *mut doca_buf_inventory,
    src_buf: *const doca_buf,
    dst_buf: *mut *mut doca_buf,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (inv, src) = unsafe { (handle(inventory, "inventory")?, handle(src_buf, "src_buf")?) };
        give_buf(dst_buf, "dst_buf", || inv.buf_dup(src))
    })
}

getter!(
    /// `doca_buf_inventory_get_num_elements`.
    pub unsafe extern "C" fn doca_buf_inventory_get_num_elements(inventory: *mut doca_buf_inventory, num_of_elements: *mut u32) -> doca_error_t => |i| i.num_elements());
getter!(
    /// `doca_buf_inventory_get_num_free_elements`.
    pub unsafe extern "C" fn doca_buf_inventory_get_num_free_elements(inventory: *mut doca_buf_inventory, num_of_free_elements: *mut u32) -> doca_error_t => |i| i.num_free_elements());
getter!(
    /// `doca_buf_inventory_get_user_data`.
    pub unsafe extern "C" fn doca_buf_inventory_get_user_data(inventory: *mut doca_buf_inventory, user_data: *mut doca_data) -> doca_error_t => |i| i.user_data());

// ---- pools ----

/// `doca_bufpool_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_bufpool_create(
    user_data_p: *const doca_data,
    num_elements: usize,
    extensions: u32,
    element_size: usize,
    element_alignment: usize,
    mmap: *const doca_mmap,
    bufpool: *mut *mut doca_bufpool,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle / readable user data.
        let (m, ud) = unsafe { (handle(mmap, "mmap")?, user_data(user_data_p)) };
        new_handle(bufpool, "bufpool", || {
            BufPool::create(
                ud,
                num_elements,
                extensions,
                element_size,
                element_alignment,
                m,
            )
        })
    })
}

/// `doca_bufpool_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_bufpool_destroy(bufpool: *mut doca_bufpool) -> doca_error_t {
    // SAFETY: a live pool handle.
    ffi(|| unsafe { destroy_in_place(bufpool, "bufpool", BufPool::destroy) })
}

/// `doca_bufpool_start`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_bufpool_start(bufpool: *mut doca_bufpool) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    ffi(|| unsafe { handle_mut(bufpool, "bufpool") }?.start())
}

/// `doca_bufpool_stop`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_bufpool_stop(bufpool: *mut doca_bufpool) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    ffi(|| unsafe { handle_mut(bufpool, "bufpool") }?.stop())
}

/// `doca_bufpool_buf_alloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_bufpool_buf_alloc(
    bufpool: *mut doca_bufpool,
    buf: *mut *mut doca_buf,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let p = unsafe { handle(bufpool, "bufpool") }?;
        give_buf(buf, "buf", || p.buf_alloc())
    })
}

getter!(
    /// `doca_bufpool_get_num_elements`.
    pub unsafe extern "C" fn doca_bufpool_get_num_elements(bufpool: *const doca_bufpool, num_of_elements: *mut u32) -> doca_error_t => |p| p.num_elements());
getter!(
    /// `doca_bufpool_get_num_free_elements`.
    pub unsafe extern "C" fn doca_bufpool_get_num_free_elements(bufpool: *const doca_bufpool, num_of_free_elements: *mut u32) -> doca_error_t => |p| p.num_free_elements());
getter!(
    /// `doca_bufpool_get_user_data`.
    pub unsafe extern "C" fn doca_bufpool_get_user_data(bufpool: *const doca_bufpool, user_data: *mut doca_data) -> doca_error_t => |p| p.user_data());

// ---- buffer arrays ----

/// `doca_buf_arr_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_arr_create(
    mmap: *mut doca_mmap,
    buf_arr: *mut *mut doca_buf_arr,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let m = unsafe { handle(mmap, "mmap") }?;
        new_handle(buf_arr, "buf_arr", || BufArray::create(m))
    })
}

/// `doca_buf_arr_set_target_gpu`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_arr_set_target_gpu(
    buf_arr: *mut doca_buf_arr,
    _gpu_handler: *mut doca_gpu,
) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    ffi(|| unsafe { handle_mut(buf_arr, "buf_arr") }?.set_target_gpu())
}

/// `doca_buf_arr_set_params`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_arr_set_params(
    buf_arr: *mut doca_buf_arr,
    size: usize,
    num_elem: u32,
    start_offset: u32,
) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    ffi(|| unsafe { handle_mut(buf_arr, "buf_arr") }?.set_params(size, num_elem, start_offset))
}

/// `doca_buf_arr_start`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_arr_start(buf_arr: *mut doca_buf_arr) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    ffi(|| unsafe { handle_mut(buf_arr, "buf_arr") }?.start())
}

/// `doca_buf_arr_stop`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_arr_stop(buf_arr: *mut doca_buf_arr) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    ffi(|| unsafe { handle_mut(buf_arr, "buf_arr") }?.stop())
}

/// `doca_buf_arr_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_arr_destroy(buf_arr: *mut doca_buf_arr) -> doca_error_t {
    // SAFETY: a live boxed handle, destroyed once.
    ffi(|| unsafe { free_handle(buf_arr, "buf_arr") })
}

/// `doca_buf_arr_get_gpu_handle`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_arr_get_gpu_handle(
    buf_arr: *const doca_buf_arr,
    gpu_buf_arr: *mut *mut doca_gpu_buf_arr,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let a = unsafe { handle(buf_arr, "buf_arr") }?;
        out_ptr(gpu_buf_arr, "gpu_buf_arr")?;
        a.gpu_handle()?;
        Err(err(ErrorCode::NotSupported, "no GPU exists here"))
    })
}

// A buffer goes into a buffer slot of a task or job.
impl InputValue for *const doca_buf {
    const NONE: Self = std::ptr::null();
    unsafe fn store(self, inputs: &TaskInputs, _: &TaskSpec, slot: usize, _: &str) -> Result<()> {
        inputs.bufs[slot].set(self);
        Ok(())
    }
    #[inline]
    unsafe fn put(self, out: &mut JobRecord, _: &TaskSpec, slot: usize, _: &str) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { out.set_buf_raw(slot, self as *mut BufDesc) };
        Ok(())
    }
    fn load(inputs: &TaskInputs, slot: usize) -> Self {
        inputs.bufs[slot].get()
    }
}

impl InputValue for *mut doca_buf {
    const NONE: Self = std::ptr::null_mut();
    unsafe fn store(self, inputs: &TaskInputs, _: &TaskSpec, slot: usize, _: &str) -> Result<()> {
        inputs.bufs[slot].set(self);
        Ok(())
    }
    #[inline]
    unsafe fn put(self, out: &mut JobRecord, _: &TaskSpec, slot: usize, _: &str) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { out.set_buf_raw(slot, self) };
        Ok(())
    }
    fn load(inputs: &TaskInputs, slot: usize) -> Self {
        inputs.bufs[slot].get() as *mut BufDesc
    }
}
