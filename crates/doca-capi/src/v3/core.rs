//! The Core objects under the task generation's names: memory maps, inventories,
//! buffers and devices. Calls whose shape did not change are the job generation's own
//! functions (the same symbols); these are the renamed and reshaped ones.

use crate::common::{doca_data, doca_error_t, ffi, handle, new_handle};
use crate::v22::dev::{doca_dev, doca_devinfo, doca_devinfo_rep};
use crate::v22::libs::devinfo_value;
use crate::v22::mem::{doca_buf, doca_buf_inventory, doca_mmap};
use doca_core::{BufInventory, Data, ErrorCode, Mmap, PciFuncType};
use std::ffi::{c_char, c_int, c_void};

// ---- memory maps ----

/// `doca_mmap_create`: a stopped map with no user data.
#[unsafe(export_name = "doca3__mmap_create")]
pub unsafe extern "C" fn doca_mmap_create(mmap: *mut *mut doca_mmap) -> doca_error_t {
    ffi(|| new_handle(mmap, "mmap", || Ok(Mmap::new())))
}

/// `doca_mmap_add_dev`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_add_dev(
    mmap: *mut doca_mmap,
    dev: *mut doca_dev,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::mem::doca_mmap_dev_add(mmap, dev) }
}

/// `doca_mmap_rm_dev`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_rm_dev(
    mmap: *mut doca_mmap,
    dev: *mut doca_dev,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::mem::doca_mmap_dev_rm(mmap, dev) }
}

crate::common::handles::call!(handle;
    /// `doca_mmap_set_user_data`: before start.
    pub unsafe extern "C" fn doca_mmap_set_user_data(mmap: *mut doca_mmap, user_data: doca_data) -> doca_error_t => |m| m.set_user_data(user_data));

/// `doca_mmap_export_pci`: the job generation's export to the other side of PCI.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_export_pci(
    mmap: *mut doca_mmap,
    dev: *const doca_dev,
    export_desc: *mut *const c_void,
    export_desc_len: *mut usize,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::mem::doca_mmap_export_dpu(mmap, dev, export_desc, export_desc_len) }
}

/// `doca_mmap_set_dmabuf_memrange`: the task generation adds the address the dma-buf
/// is mapped at.
#[unsafe(export_name = "doca3__mmap_set_dmabuf_memrange")]
pub unsafe extern "C" fn doca_mmap_set_dmabuf_memrange(
    mmap: *mut doca_mmap,
    dmabuf_fd: c_int,
    _addr: *mut c_void,
    dmabuf_offset: usize,
    len: usize,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::mem::doca_mmap_set_dmabuf_memrange(mmap, dmabuf_fd, dmabuf_offset, len) }
}

/// `doca_mmap_cap_is_export_pci_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_cap_is_export_pci_supported(
    devinfo: *const doca_devinfo,
    supported: *mut u8,
) -> doca_error_t {
    devinfo_value(devinfo, supported, |d| {
        Ok(u8::from(d.is_mmap_export_dpu_supported()))
    })
}

/// `doca_mmap_cap_is_create_from_export_pci_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_cap_is_create_from_export_pci_supported(
    devinfo: *const doca_devinfo,
    supported: *mut u8,
) -> doca_error_t {
    devinfo_value(devinfo, supported, |d| {
        Ok(u8::from(d.is_mmap_from_export_dpu_supported()))
    })
}

// ---- inventories ----

/// `doca_buf_inventory_create`: `num_elements` buffers, no user data.
#[unsafe(export_name = "doca3__buf_inventory_create")]
pub unsafe extern "C" fn doca_buf_inventory_create(
    num_elements: usize,
    buf_inventory: *mut *mut doca_buf_inventory,
) -> doca_error_t {
    ffi(|| {
        new_handle(buf_inventory, "buf_inventory", || {
            BufInventory::create(Data(0), num_elements, 0)
        })
    })
}

crate::common::handles::call!(handle;
    /// `doca_buf_inventory_set_user_data`: before start.
    pub unsafe extern "C" fn doca_buf_inventory_set_user_data(inventory: *mut doca_buf_inventory, user_data: doca_data) -> doca_error_t => |i| i.set_user_data(user_data));

/// `doca_buf_inventory_buf_get_by_args`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_buf_get_by_args(
    inventory: *mut doca_buf_inventory,
    mmap: *mut doca_mmap,
    addr: *mut c_void,
    len: usize,
    data: *mut c_void,
    data_len: usize,
    buf: *mut *mut doca_buf,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe {
        crate::v22::mem::doca_buf_inventory_buf_by_args(
            inventory, mmap, addr, len, data, data_len, buf,
        )
    }
}

/// `doca_buf_inventory_buf_reuse_by_args`: points a buffer the caller holds at another
/// range of its mmap, with the given data section.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_buf_reuse_by_args(
    buf: *mut doca_buf,
    addr: *mut c_void,
    len: usize,
    data: *mut c_void,
    data_len: usize,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: a live buffer the caller holds.
        let mut b = unsafe { crate::v22::mem::buf_view(buf) }?;
        b.reuse(addr as usize, len, data as usize, data_len)
    })
}

/// `doca_buf_inventory_buf_reuse_by_addr`: an empty buffer `[addr, addr + len)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_buf_reuse_by_addr(
    buf: *mut doca_buf,
    addr: *mut c_void,
    len: usize,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_buf_inventory_buf_reuse_by_args(buf, addr, len, addr, 0) }
}

/// `doca_buf_inventory_buf_reuse_by_data`: a buffer `[data, data + data_len)` that is
/// all data.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_buf_reuse_by_data(
    buf: *mut doca_buf,
    data: *mut c_void,
    data_len: usize,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_buf_inventory_buf_reuse_by_args(buf, data, data_len, data, data_len) }
}

// ---- buffers ----

/// `doca_buf_inc_refcount`: `*refcount` gets the count before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inc_refcount(
    buf: *mut doca_buf,
    refcount: *mut u16,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::mem::doca_buf_refcount_add(buf, refcount) }
}

/// `doca_buf_dec_refcount`: `*refcount` (may be NULL) gets the count before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_dec_refcount(
    buf: *mut doca_buf,
    refcount: *mut u16,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::mem::doca_buf_refcount_rm(buf, refcount) }
}

/// `doca_buf_get_next_in_list`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_get_next_in_list(
    buf: *mut doca_buf,
    next_buf: *mut *mut doca_buf,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::mem::doca_buf_list_next(buf, next_buf) }
}

/// `doca_buf_get_last_in_list`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_get_last_in_list(
    buf: *mut doca_buf,
    last_buf: *mut *mut doca_buf,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::mem::doca_buf_list_last(buf, last_buf) }
}

crate::common::handles::getter!(
    /// `doca_buf_is_last_in_list`.
    pub unsafe extern "C" fn doca_buf_is_last_in_list(buf: *const doca_buf, is_last: *mut u8) -> doca_error_t => |b| u8::from(b.is_last()));
crate::common::handles::getter!(
    /// `doca_buf_is_first_in_list`.
    pub unsafe extern "C" fn doca_buf_is_first_in_list(buf: *const doca_buf, is_first: *mut u8) -> doca_error_t => |b| u8::from(b.is_first()));

/// `doca_buf_get_list_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_get_list_len(
    buf: *const doca_buf,
    num_elements: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::mem::doca_buf_list_num_elements(buf, num_elements) }
}

/// `doca_buf_chain_list`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_chain_list(
    list1: *mut doca_buf,
    list2: *mut doca_buf,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::mem::doca_buf_list_chain(list1, list2) }
}

/// `doca_buf_set_data_len`: the data address stays, the length changes. DOCA leaves a
/// section past the buffer's end undefined; here it is refused (`INVALID_VALUE`) and
/// nothing changes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_set_data_len(
    buf: *mut doca_buf,
    data_len: usize,
) -> doca_error_t {
    crate::common::ffi(|| {
        // SAFETY: a live buffer the caller holds.
        let mut b = unsafe { crate::v22::mem::buf_view(buf) }?;
        let data = b.data();
        b.set_data_as_given(data, data_len);
        Ok(())
    })
}

/// `doca_buf_chain_list_tail`: `doca_buf_chain_list` where the program names list1's
/// tail (checked: it must be the last element of list1).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_chain_list_tail(
    list1_head: *mut doca_buf,
    list1_tail: *mut doca_buf,
    list2: *mut doca_buf,
) -> doca_error_t {
    crate::common::ffi(|| {
        if list1_head.is_null() || list1_tail.is_null() || list2.is_null() {
            return Err(crate::common::invalid(
                "list1_head, list1_tail and list2 must not be NULL",
            ));
        }
        // SAFETY: a live buffer the caller holds (checked non-NULL).
        let head = unsafe { &*(list1_head as *const doca_core::BufDesc) };
        if !std::ptr::eq(head.last(), list1_tail as *const doca_core::BufDesc) {
            return Err(crate::common::invalid(
                "list1_tail is not the last element of the list list1_head starts",
            ));
        }
        // SAFETY: live buffers the caller holds.
        unsafe { crate::v22::mem::chain_lists(list1_head, list2) }
    })
}

/// `doca_buf_unchain_list`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_unchain_list(
    list1: *mut doca_buf,
    list2: *mut doca_buf,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::mem::doca_buf_list_unchain(list1, list2) }
}

// ---- devices ----

/// `doca_dev_close`: NULL is a device already closed (DOCA's own samples close one
/// twice on their way out), which succeeds; otherwise as in the job generation.
#[unsafe(export_name = "doca3__dev_close")]
pub unsafe extern "C" fn doca_dev_close(dev: *mut doca_dev) -> doca_error_t {
    if dev.is_null() {
        crate::common::log::internal(
            crate::common::log::LEVEL_DEBUG,
            "doca_dev_close(NULL): nothing to close",
        );
        return crate::common::DOCA_SUCCESS;
    }
    // SAFETY: the same contract.
    unsafe { crate::v22::dev::doca_dev_close(dev) }
}

/// `doca_devinfo_create_list`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_create_list(
    dev_list: *mut *mut *mut doca_devinfo,
    nb_devs: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::dev::doca_devinfo_list_create(dev_list, nb_devs) }
}

/// `doca_devinfo_destroy_list`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_destroy_list(
    dev_list: *mut *mut doca_devinfo,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::dev::doca_devinfo_list_destroy(dev_list) }
}

/// `doca_devinfo_rep_create_list`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_create_list(
    dev: *mut doca_dev,
    filter: c_int,
    dev_list_rep: *mut *mut *mut doca_devinfo_rep,
    nb_devs_rep: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::dev::doca_devinfo_rep_list_create(dev, filter, dev_list_rep, nb_devs_rep) }
}

/// `doca_devinfo_rep_destroy_list`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_destroy_list(
    dev_list_rep: *mut *mut doca_devinfo_rep,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::dev::doca_devinfo_rep_list_destroy(dev_list_rep) }
}

/// `doca_devinfo_is_equal_pci_addr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_is_equal_pci_addr(
    devinfo: *const doca_devinfo,
    pci_addr_str: *const c_char,
    is_equal: *mut u8,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::dev::doca_devinfo_get_is_pci_addr_equal(devinfo, pci_addr_str, is_equal) }
}

/// `doca_devinfo_rep_is_equal_pci_addr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_is_equal_pci_addr(
    devinfo_rep: *const doca_devinfo_rep,
    pci_addr_str: *const c_char,
    is_equal: *mut u8,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe {
        crate::v22::dev::doca_devinfo_rep_get_is_pci_addr_equal(devinfo_rep, pci_addr_str, is_equal)
    }
}

macro_rules! flag {
    ($(#[$doc:meta])* pub unsafe extern "C" fn $name:ident(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t => $q:ident) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t {
            devinfo_value(devinfo, out, |d| Ok(u8::from(d.$q())))
        }
    };
}

flag!(
    /// `doca_devinfo_cap_is_hotplug_manager_supported`.
    pub unsafe extern "C" fn doca_devinfo_cap_is_hotplug_manager_supported(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t => is_hotplug_manager_supported);
flag!(
    /// `doca_devinfo_rep_cap_is_filter_all_supported`.
    pub unsafe extern "C" fn doca_devinfo_rep_cap_is_filter_all_supported(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t => is_rep_list_all_supported);
flag!(
    /// `doca_devinfo_rep_cap_is_filter_net_supported`.
    pub unsafe extern "C" fn doca_devinfo_rep_cap_is_filter_net_supported(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t => is_rep_list_net_supported);
flag!(
    /// `doca_devinfo_rep_cap_is_filter_emulated_supported`.
    pub unsafe extern "C" fn doca_devinfo_rep_cap_is_filter_emulated_supported(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t => is_rep_list_emulated_supported);

/// `doca_devinfo_get_pci_func_type`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_get_pci_func_type(
    devinfo: *const doca_devinfo,
    pci_func_type: *mut crate::common::doca_pci_func_type,
) -> doca_error_t {
    devinfo_value(devinfo, pci_func_type, |d| {
        Ok(d.props().func_type as crate::common::doca_pci_func_type)
    })
}

/// `doca_devinfo_get_sf_index`: for a sub-function only (`NOT_SUPPORTED` otherwise); the
/// index is its PCI function number.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_get_sf_index(
    devinfo: *const doca_devinfo,
    sf_index: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, sf_index, |d| {
        if d.props().func_type != PciFuncType::Sf {
            return Err(crate::common::err(
                ErrorCode::NotSupported,
                format!("device {} is not a sub-function", d.pci_addr_str()),
            ));
        }
        Ok(u32::from(d.pci_addr().function))
    })
}

/// `doca_buf_inventory_expand`: more elements for a started inventory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_buf_inventory_expand(
    inventory: *mut doca_buf_inventory,
    num_elements: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let inv = unsafe { handle(inventory, "inventory") }?;
        inv.expand(num_elements)
    })
}

/// `doca_mmap_enable_thread_safety`: before start; destroy then goes ahead while
/// buffers point into the mmap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_enable_thread_safety(mmap: *mut doca_mmap) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let m = unsafe { handle(mmap, "mmap") }?;
        m.enable_thread_safety()
    })
}

/// `doca_devinfo_get_active_rate`: bits per second.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_get_active_rate(
    devinfo: *const doca_devinfo,
    active_rate: *mut u64,
) -> doca_error_t {
    devinfo_value(devinfo, active_rate, |d| Ok(d.active_rate()))
}

/// `doca_devinfo_get_vhca_id`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_get_vhca_id(
    devinfo: *const doca_devinfo,
    vhca_id: *mut u16,
) -> doca_error_t {
    devinfo_value(devinfo, vhca_id, |d| Ok(d.vhca_id()))
}

/// A representor's value into `out`.
///
/// # Safety
/// `rep` is NULL or a live handle; `out` is NULL or writable.
unsafe fn rep_value<T>(
    rep: *const doca_devinfo_rep,
    out: *mut T,
    f: impl FnOnce(&doca_core::DevInfoRep) -> T,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: the caller's contract.
        let info = unsafe { handle(rep, "devinfo_rep") }?;
        let o = crate::common::out_ptr(out, "output")?;
        // SAFETY: checked non-NULL; writable by the caller's contract.
        unsafe { o.write(f(info.info())) };
        Ok(())
    })
}

/// `doca_devinfo_rep_get_iface_name`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_get_iface_name(
    devinfo_rep: *const doca_devinfo_rep,
    iface_name: *mut c_char,
    size: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle; the output holds size bytes.
        unsafe {
            let info = handle(devinfo_rep, "devinfo_rep")?;
            crate::v22::dev::fill(iface_name as *mut u8, size as usize, "iface_name", |b| {
                info.info().iface_name_into(b)
            })
        }
    })
}

/// `doca_devinfo_rep_get_is_hotplug`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_get_is_hotplug(
    devinfo_rep: *const doca_devinfo_rep,
    is_hotplug: *mut u8,
) -> doca_error_t {
    // SAFETY: the C contract.
    unsafe { rep_value(devinfo_rep, is_hotplug, |r| u8::from(r.is_hotplug())) }
}

/// `doca_devinfo_rep_get_vhca_id`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_get_vhca_id(
    devinfo_rep: *const doca_devinfo_rep,
    vhca_id: *mut u16,
) -> doca_error_t {
    // SAFETY: the C contract.
    unsafe { rep_value(devinfo_rep, vhca_id, |r| r.vhca_id()) }
}

/// `doca_devinfo_cap_is_accelerate_resource_reclaim_supported`: 0, a software device
/// keeps no hardware resources to reclaim faster.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_cap_is_accelerate_resource_reclaim_supported(
    devinfo: *const doca_devinfo,
    is_accelerate_resource_reclaim: *mut u8,
) -> doca_error_t {
    devinfo_value(devinfo, is_accelerate_resource_reclaim, |_| Ok(0))
}

/// `doca_dev_accelerate_resource_reclaim`: `NOT_SUPPORTED`, as its capability says.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dev_accelerate_resource_reclaim(dev: *mut doca_dev) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle(dev, "dev") }?;
        Err(crate::common::err(
            ErrorCode::NotSupported,
            "the device keeps no hardware resources to reclaim (doca_devinfo_cap_is_accelerate_resource_reclaim_supported answers 0)",
        ))
    })
}

/// `doca_devinfo_cap_is_notification_moderation_supported`: 0, completions are
/// notified one by one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_cap_is_notification_moderation_supported(
    devinfo: *const doca_devinfo,
    is_notification_moderation_supported: *mut u8,
) -> doca_error_t {
    devinfo_value(devinfo, is_notification_moderation_supported, |_| Ok(0))
}

/// `doca_mmap_set_dpa_memrange`: `NOT_SUPPORTED`, there is no DPA here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_set_dpa_memrange(
    mmap: *mut doca_mmap,
    dpa: *mut crate::v22::mem::doca_dpa,
    dpa_addr: u64,
    len: usize,
) -> doca_error_t {
    let _ = (dpa, dpa_addr, len);
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle(mmap, "mmap") }?;
        Err(crate::common::err(
            ErrorCode::NotSupported,
            "there is no DPA here: an mmap's memory is this process's (doca_mmap_set_memrange)",
        ))
    })
}

/// `doca_dpa_dev_mmap_t`: an mmap's handle on a DPA.
pub type doca_dpa_dev_mmap_t = u64;

/// `doca_mmap_dev_get_dpa_handle`: `NOT_SUPPORTED`, there is no DPA here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_dev_get_dpa_handle(
    mmap: *mut doca_mmap,
    dev: *const doca_dev,
    dpa_mmap_handle: *mut doca_dpa_dev_mmap_t,
) -> doca_error_t {
    let _ = dpa_mmap_handle;
    ffi(|| {
        // SAFETY: NULL or live handles.
        unsafe {
            handle(mmap, "mmap")?;
            handle(dev, "dev")?;
        }
        Err(crate::common::err(
            ErrorCode::NotSupported,
            "there is no DPA here to hand an mmap to",
        ))
    })
}
