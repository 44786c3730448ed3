//! The C interface of DOCA's first generation (1.3 and 1.4): the Core calls of the 1.x
//! programming guide (property get and set, remote devices, named memory maps populated
//! chunk by chunk, `doca_buf_head_get`) and DMA jobs with `num_bytes_to_copy`, over
//! the same objects as the other generations.
//!
//! A name 1.x shares with 2.2 but with another prototype or meaning
//! (`doca_mmap_create`, `doca_buf_inventory_create`, `doca_workq_submit`, ...) is
//! defined here under the link name `doca1__<rest>`; `scripts/install-capi.sh` gives it
//! its public name in the 1.x library. Names only 1.x has are exported as they are; the
//! calls both generations mean the same way (`doca_mmap_start`, `doca_ctx_*`,
//! `doca_workq_progress_retrieve`, `doca_buf_refcount_rm`, ...) are 2.2's.

use crate::dev::{doca_dev, doca_dev_rep, doca_devinfo, doca_devinfo_rep};
use crate::exec::{doca_dma_job_memcpy, doca_job, doca_workq};
use crate::mem::{doca_buf, doca_buf_inventory, doca_mmap, doca_mmap_memrange_free_cb_t};
use crate::{
    Result, cstr, doca_error_t, err, ffi, handle, handle_mut, invalid, new_handle, out_ptr, put,
};
use doca_core::device::PciAddr;
use doca_core::{BufInventory, Data, ErrorCode, JobRecord, Mmap};
use std::ffi::{c_char, c_int, c_void};

/// `struct doca_devinfo_remote`: a representor's information.
pub type doca_devinfo_remote = doca_devinfo_rep;
/// `struct doca_dev_remote`: an open representor.
pub type doca_dev_remote = doca_dev_rep;
/// `enum doca_devinfo_property`.
pub type doca_devinfo_property = c_int;
/// `enum doca_devinfo_remote_property`.
pub type doca_devinfo_remote_property = c_int;
/// `enum doca_dev_remote_filter`.
pub type doca_dev_remote_filter = c_int;
/// `enum doca_mmap_property`.
pub type doca_mmap_property = c_int;
/// `enum doca_buf_inventory_property`.
pub type doca_buf_inventory_property = c_int;
/// `enum doca_workq_property`.
pub type doca_workq_property = c_int;

/// `enum doca_devinfo_property`.
pub const DEVINFO_VUID: c_int = 0;
/// `DOCA_DEVINFO_PROPERTY_PCI_ADDR`: a `struct doca_pci_bdf`.
pub const DEVINFO_PCI_ADDR: c_int = 1;
/// `DOCA_DEVINFO_PROPERTY_IPV4_ADDR`.
pub const DEVINFO_IPV4_ADDR: c_int = 2;
/// `DOCA_DEVINFO_PROPERTY_IPV6_ADDR`.
pub const DEVINFO_IPV6_ADDR: c_int = 3;
/// `DOCA_DEVINFO_PROPERTY_IFACE_NAME`.
pub const DEVINFO_IFACE_NAME: c_int = 4;
/// `DOCA_DEVINFO_PROPERTY_IBDEV_NAME`.
pub const DEVINFO_IBDEV_NAME: c_int = 5;

/// `enum doca_devinfo_remote_property`.
pub const REMOTE_VUID: c_int = 0;
/// `DOCA_DEVINFO_REMOTE_PROPERTY_PCI_ADDR`.
pub const REMOTE_PCI_ADDR: c_int = 1;
/// `DOCA_DEVINFO_REMOTE_PROPERTY_PCI_FUNC_TYPE`.
pub const REMOTE_PCI_FUNC_TYPE: c_int = 2;

/// `enum doca_mmap_property`.
pub const MMAP_NAME: c_int = 0;
/// `DOCA_MMAP_MAX_NUM_CHUNKS` (`uint32_t`).
pub const MMAP_MAX_NUM_CHUNKS: c_int = 1;
/// `DOCA_MMAP_MAX_NUM_DEVICES` (`uint32_t`).
pub const MMAP_MAX_NUM_DEVICES: c_int = 2;
/// `DOCA_MMAP_NUM_BUFS` (`uint32_t`, read-only).
pub const MMAP_NUM_BUFS: c_int = 3;
/// `DOCA_MMAP_EXPORTED` (`uint8_t`, read-only).
pub const MMAP_EXPORTED: c_int = 4;
/// `DOCA_MMAP_FROM_EXPORT` (`uint8_t`, read-only).
pub const MMAP_FROM_EXPORT: c_int = 5;
/// `DOCA_MMAP_ACCESS_FLAGS` (`uint32_t`).
pub const MMAP_ACCESS_FLAGS: c_int = 6;

/// `enum doca_buf_inventory_property` (all read-only).
pub const INV_NUM_ELEMENTS: c_int = 0;
/// `DOCA_BUF_INVENTORY_PROPERTY_NUM_FREE_ELEMENTS` (`uint32_t`).
pub const INV_NUM_FREE_ELEMENTS: c_int = 1;
/// `DOCA_BUF_INVENTORY_PROPERTY_EXTENSIONS` (`uint32_t`).
pub const INV_EXTENSIONS: c_int = 2;

/// `enum doca_workq_property`: `DOCA_WORKQ_PROPERTY_DEPTH` (`uint32_t`).
pub const WORKQ_DEPTH: c_int = 0;

/// `enum doca_dev_remote_filter`.
pub const REMOTE_FILTER_ALL: c_int = 0;
/// `DOCA_DEV_REMOTE_FILTER_NET`.
pub const REMOTE_FILTER_NET: c_int = 1;

/// `DOCA_DMA_CAP_HW_OFFLOAD`, a bit of `doca_dma_devinfo_caps_get`'s answer.
pub const DMA_CAP_HW_OFFLOAD: u32 = 1 << 0;

/// Sizes of the device properties, in bytes.
const VUID_SIZE: usize = 128;
const IFACE_NAME_SIZE: usize = 256;
const IBDEV_NAME_SIZE: usize = 64;

/// `struct doca_pci_bdf` as a `uint16_t`: bus (bits 8-15), device (3-7), function (0-2).
pub(crate) fn bdf(a: PciAddr) -> u16 {
    (u16::from(a.bus) << 8) | (u16::from(a.device & 0x1f) << 3) | u16::from(a.function & 7)
}

/// A local device's VUID: stable per PCI function of the topology.
fn local_vuid(info: &doca_core::DevInfo) -> String {
    let a = info.pci_addr();
    format!(
        "SWDOCA{:04X}{:02X}{:02X}{:X}-{}",
        a.domain,
        a.bus,
        a.device,
        a.function,
        info.ibdev_name()
    )
}

/// The bytes of a property value, checked against the caller's size: exactly the
/// value's size for a fixed-size value, room for the text and its NUL for a `string`
/// (the rest of the buffer is zeroed).
fn put_value(value: *mut u8, size: u32, bytes: &[u8], string: bool, what: &str) -> Result<()> {
    let value = out_ptr(value, "value")?;
    let size = size as usize;
    let need = bytes.len() + usize::from(string);
    let fits = if string {
        size >= need
    } else {
        size == bytes.len()
    };
    if !fits {
        return Err(invalid(format!(
            "{what} needs a value of {} {} bytes; size is {size}",
            if string { "at least" } else { "exactly" },
            need
        )));
    }
    // SAFETY: the program gives `size` writable bytes at `value` (the C contract).
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), value, bytes.len());
        if string {
            std::ptr::write_bytes(value.add(bytes.len()), 0, size - bytes.len());
        }
    }
    Ok(())
}

/// A text property: at most `max - 1` bytes of `text`, NUL-terminated (see
/// [`put_value`]).
fn put_text(value: *mut u8, size: u32, text: &str, max: usize, what: &str) -> Result<()> {
    let t = text.as_bytes();
    put_value(value, size, &t[..t.len().min(max - 1)], true, what)
}

/// Reads a `uint32_t` property value.
fn get_u32(value: *const u8, size: u32, what: &str) -> Result<u32> {
    if value.is_null() {
        return Err(invalid("value is NULL"));
    }
    if size as usize != std::mem::size_of::<u32>() {
        return Err(invalid(format!(
            "{what} is a uint32_t: size must be 4, not {size}"
        )));
    }
    // SAFETY: 4 readable bytes at `value` (the C contract), read unaligned.
    Ok(unsafe { (value as *const u32).read_unaligned() })
}

fn unknown(what: &str, p: c_int) -> doca_core::Error {
    invalid(format!("{p} is not a {what}"))
}

// ---- devices ----

/// `doca_devinfo_list_create` as DOCA 1.3 declares it (no count; the list ends with
/// NULL). The 1.x header calls it for the one-argument form.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_list_create_v13(
    dev_list: *mut *mut *mut doca_devinfo,
) -> doca_error_t {
    let mut n = 0u32;
    // SAFETY: the same contract; the count goes to a local.
    unsafe { crate::dev::doca_devinfo_list_create(dev_list, &mut n) }
}

/// `doca_devinfo_property_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_property_get(
    devinfo: *const doca_devinfo,
    property: doca_devinfo_property,
    value: *mut u8,
    size: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let d = unsafe { handle(devinfo, "devinfo") }?;
        let info = &d.info;
        match property {
            DEVINFO_VUID => put_text(
                value,
                size,
                &local_vuid(info),
                VUID_SIZE,
                "DOCA_DEVINFO_PROPERTY_VUID",
            ),
            DEVINFO_PCI_ADDR => put_value(
                value,
                size,
                &bdf(info.pci_addr()).to_ne_bytes(),
                false,
                "DOCA_DEVINFO_PROPERTY_PCI_ADDR (struct doca_pci_bdf)",
            ),
            DEVINFO_IPV4_ADDR => put_value(
                value,
                size,
                &info.ipv4_addr(),
                false,
                "DOCA_DEVINFO_PROPERTY_IPV4_ADDR",
            ),
            DEVINFO_IPV6_ADDR => put_value(
                value,
                size,
                &info.ipv6_addr(),
                false,
                "DOCA_DEVINFO_PROPERTY_IPV6_ADDR",
            ),
            DEVINFO_IFACE_NAME => put_text(
                value,
                size,
                info.iface_name(),
                IFACE_NAME_SIZE,
                "DOCA_DEVINFO_PROPERTY_IFACE_NAME",
            ),
            DEVINFO_IBDEV_NAME => put_text(
                value,
                size,
                info.ibdev_name(),
                IBDEV_NAME_SIZE,
                "DOCA_DEVINFO_PROPERTY_IBDEV_NAME",
            ),
            p => Err(unknown("doca_devinfo_property", p)),
        }
    })
}

/// Devices open through the 1.x face: (handle, opens). Opening a device already open
/// gives the same handle (the guide's device life cycle); it closes with its last close.
static OPEN_DEVS: std::sync::Mutex<Vec<(usize, u32)>> = std::sync::Mutex::new(Vec::new());

/// `doca_dev_open` of 1.x: a device already open is the same `struct doca_dev`.
#[unsafe(export_name = "doca1__dev_open")]
pub unsafe extern "C" fn doca_dev_open(
    devinfo: *mut doca_devinfo,
    dev: *mut *mut doca_dev,
) -> doca_error_t {
    ffi(|| {
        let out = out_ptr(dev, "dev")?;
        // SAFETY: NULL or a live handle.
        let info = unsafe { handle(devinfo, "devinfo") }?;
        let mut open = doca_core::lock(&OPEN_DEVS);
        for (h, n) in open.iter_mut() {
            // SAFETY: registered handles are open devices (removed at their last close).
            let d = unsafe { &*(*h as *const doca_dev) };
            if d.dev.as_devinfo().pci_addr() == info.info.pci_addr()
                && d.dev.as_devinfo().role() == info.info.role()
            {
                *n += 1;
                // SAFETY: checked non-NULL.
                unsafe { put(out, *h as *mut doca_dev) };
                return Ok(());
            }
        }
        let mut h = std::ptr::null_mut();
        // SAFETY: the same contract, with a local output.
        match unsafe { crate::dev::doca_dev_open(devinfo, &mut h) } {
            0 => {}
            e => {
                return Err(doca_core::Error::from_raw(e).unwrap_or_else(|| invalid("open failed")));
            }
        }
        open.push((h as usize, 1));
        // SAFETY: checked non-NULL.
        unsafe { put(out, h) };
        Ok(())
    })
}

/// `doca_dev_close` of 1.x: the last close of a device closes it.
#[unsafe(export_name = "doca1__dev_close")]
pub unsafe extern "C" fn doca_dev_close(dev: *mut doca_dev) -> doca_error_t {
    {
        let mut open = doca_core::lock(&OPEN_DEVS);
        if let Some(i) = open.iter().position(|(h, _)| *h == dev as usize) {
            if open[i].1 > 1 {
                open[i].1 -= 1;
                return 0;
            }
            open.swap_remove(i);
        }
    }
    // SAFETY: the same contract: an open device, closed once more.
    unsafe { crate::dev::doca_dev_close(dev) }
}

/// `doca_dev_as_devinfo` of 1.x: the information through an output parameter.
#[unsafe(export_name = "doca1__dev_as_devinfo")]
pub unsafe extern "C" fn doca_dev_as_devinfo(
    dev: *mut doca_dev,
    devinfo: *mut *mut doca_devinfo,
) -> doca_error_t {
    ffi(|| {
        let out = out_ptr(devinfo, "devinfo")?;
        // SAFETY: NULL or an open device handle.
        unsafe { handle(dev, "dev") }?;
        // SAFETY: a live device (checked above).
        let info = unsafe { crate::dev::doca_dev_as_devinfo(dev) };
        // SAFETY: checked non-NULL.
        unsafe { put(out, info) };
        Ok(())
    })
}

/// `doca_devinfo_remote_list_create` as DOCA 1.4 declares it: the host functions a DPU
/// device reaches (its representors), filtered.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_remote_list_create(
    dev: *mut doca_dev,
    filter: doca_dev_remote_filter,
    list: *mut *mut *mut doca_devinfo_remote,
    nb: *mut u32,
) -> doca_error_t {
    let f = match filter {
        REMOTE_FILTER_ALL => 0,
        REMOTE_FILTER_NET => 2,
        other => {
            return ffi(|| {
                Err(invalid(format!(
                    "{other} is not a doca_dev_remote_filter (0 = ALL, 1 = NET)"
                )))
            });
        }
    };
    // SAFETY: the same contract.
    unsafe { crate::dev::doca_devinfo_rep_list_create(dev, f, list, nb) }
}

/// `doca_devinfo_remote_list_create` as DOCA 1.3 declares it (the network functions;
/// the list ends with NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_remote_list_create_v13(
    dev: *mut doca_dev,
    list: *mut *mut *mut doca_devinfo_remote,
) -> doca_error_t {
    let mut n = 0u32;
    // SAFETY: the same contract; the count goes to a local.
    unsafe { doca_devinfo_remote_list_create(dev, REMOTE_FILTER_NET, list, &mut n) }
}

/// `doca_devinfo_remote_list_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_remote_list_destroy(
    list: *mut *mut doca_devinfo_remote,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::dev::doca_devinfo_rep_list_destroy(list) }
}

/// `doca_devinfo_remote_property_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_remote_property_get(
    devinfo_remote: *const doca_devinfo_remote,
    property: doca_devinfo_remote_property,
    value: *mut u8,
    size: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let r = unsafe { handle(devinfo_remote, "devinfo_remote") }?;
        let info = r.info();
        match property {
            REMOTE_VUID => put_text(
                value,
                size,
                info.vuid(),
                VUID_SIZE,
                "DOCA_DEVINFO_REMOTE_PROPERTY_VUID",
            ),
            REMOTE_PCI_ADDR => put_value(
                value,
                size,
                &bdf(info.pci_addr()).to_ne_bytes(),
                false,
                "DOCA_DEVINFO_REMOTE_PROPERTY_PCI_ADDR (struct doca_pci_bdf)",
            ),
            REMOTE_PCI_FUNC_TYPE => put_value(
                value,
                size,
                &(info.pci_func_type() as u32).to_ne_bytes(),
                false,
                "DOCA_DEVINFO_REMOTE_PROPERTY_PCI_FUNC_TYPE",
            ),
            p => Err(unknown("doca_devinfo_remote_property", p)),
        }
    })
}

/// `doca_dev_remote_open`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dev_remote_open(
    devinfo_remote: *mut doca_devinfo_remote,
    dev_remote: *mut *mut doca_dev_remote,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::dev::doca_dev_rep_open(devinfo_remote, dev_remote) }
}

/// `doca_dev_remote_close`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dev_remote_close(dev_remote: *mut doca_dev_remote) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::dev::doca_dev_rep_close(dev_remote) }
}

/// `doca_dev_remote_as_devinfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dev_remote_as_devinfo(
    dev_remote: *mut doca_dev_remote,
    devinfo_remote: *mut *mut doca_devinfo_remote,
) -> doca_error_t {
    ffi(|| {
        let out = out_ptr(devinfo_remote, "devinfo_remote")?;
        // SAFETY: NULL or an open remote device handle.
        unsafe { handle(dev_remote, "dev_remote") }?;
        // SAFETY: a live handle (checked above).
        let info = unsafe { crate::dev::doca_dev_rep_as_devinfo(dev_remote) };
        // SAFETY: checked non-NULL.
        unsafe { put(out, info) };
        Ok(())
    })
}

/// `doca_dma_devinfo_caps_get`: `DOCA_DMA_CAP_HW_OFFLOAD` when the device runs DMA
/// jobs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_devinfo_caps_get(
    devinfo: *mut doca_devinfo,
    caps: *mut u32,
) -> doca_error_t {
    ffi(|| {
        let caps = out_ptr(caps, "caps")?;
        // SAFETY: NULL or a live handle.
        let d = unsafe { handle(devinfo, "devinfo") }?;
        let supported = d
            .info
            .job_supported(doca_dma::JOB_MEMCPY)
            .map(|()| DMA_CAP_HW_OFFLOAD)
            .unwrap_or(0);
        // SAFETY: checked non-NULL.
        unsafe { put(caps, supported) };
        Ok(())
    })
}

// ---- buffers and inventories ----

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
    unsafe { crate::mem::doca_buf_get_refcount(buf, refcount) }
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

// ---- memory maps ----

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
    user_data: *const crate::doca_data,
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
    if r != crate::DOCA_SUCCESS {
        return r;
    }
    // SAFETY: the same contract, with the binary descriptor the text stands for.
    unsafe {
        crate::mem::doca_mmap_create_from_export(
            user_data,
            blob.as_ptr().cast(),
            blob.len(),
            dev,
            mmap,
        )
    }
}
// ---- work queues ----

/// `doca_workq_property_set`: the depth, while the queue is attached to no context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_property_set(
    workq: *mut doca_workq,
    property: doca_workq_property,
    value: *const u8,
    size: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle used by this thread.
        let w = unsafe { handle_mut(workq, "workq") }?;
        match property {
            WORKQ_DEPTH => {
                let depth = get_u32(value, size, "DOCA_WORKQ_PROPERTY_DEPTH")?;
                w.wq.set_depth(depth)
            }
            p => Err(unknown("doca_workq_property", p)),
        }
    })
}

/// `doca_workq_property_get`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_property_get(
    workq: *const doca_workq,
    property: doca_workq_property,
    value: *mut u8,
    size: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let w = unsafe { handle(workq, "workq") }?;
        match property {
            WORKQ_DEPTH => put_value(
                value,
                size,
                &w.wq.depth().to_ne_bytes(),
                false,
                "DOCA_WORKQ_PROPERTY_DEPTH",
            ),
            p => Err(unknown("doca_workq_property", p)),
        }
    })
}

/// `struct doca_dma_job_memcpy` of 1.x: the 2.2 job and the number of bytes to copy.
#[repr(C)]
#[derive(Debug)]
pub struct doca_dma_job_memcpy_v1 {
    /// The 2.2 part: base, destination, source.
    pub job: doca_dma_job_memcpy,
    /// Bytes copied from the source's head to the destination's head.
    pub num_bytes_to_copy: usize,
}

/// `doca_workq_submit` of 1.x: a DMA memcpy copies `num_bytes_to_copy` bytes between
/// the buffers' heads; other jobs as in 2.2.
#[unsafe(export_name = "doca1__workq_submit")]
pub unsafe extern "C" fn doca_workq_submit(
    workq: *mut doca_workq,
    job: *const doca_job,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle used by this thread.
        let w = unsafe { handle_mut(workq, "workq") }?;
        // SAFETY: NULL or a job struct of its type whose context is NULL or live (the C
        // contract).
        let (ctx, t) = unsafe { crate::exec::job_head(job) }?;
        let bytes = if t == doca_dma::JOB_MEMCPY {
            // SAFETY: a DMA memcpy job of 1.x is the larger struct.
            let j = unsafe { &*(job as *const doca_dma_job_memcpy_v1) };
            if j.num_bytes_to_copy == 0 {
                return Err(invalid("num_bytes_to_copy is 0"));
            }
            j.num_bytes_to_copy as u64
        } else {
            0
        };
        w.wq.submit_in_place(&ctx.ctx, |rec: &mut JobRecord| {
            // SAFETY: as above.
            unsafe { crate::exec::fill_from_c(job, ctx, t, rec) }?;
            rec.params[doca_dma::MemcpyJob::BYTES] = bytes;
            Ok(())
        })
    })
}

// ---- the comm channel of DOCA 1.3 ----

/// `struct doca_comm_channel_init_attr` (1.3).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_comm_channel_init_attr {
    /// The program's value (kept, not used).
    pub cookie: u32,
    /// 0 or `DOCA_COMM_CHANNEL_INIT_FLAG_NONBLOCK`.
    pub flags: u32,
    /// Messages a send queue holds (0: the default).
    pub maxmsgs: u32,
    /// The largest message (0: the default).
    pub msgsize: u32,
}

/// `DOCA_COMM_CHANNEL_INIT_FLAG_NONBLOCK`.
const CC_INIT_NONBLOCK: u32 = 1;
/// `DOCA_CC_MSG_FLAG_DONTWAIT`.
const CC_MSG_DONTWAIT: c_int = 1;
/// `DOCA_CC_MSG_FLAG_MORE` (not supported).
const CC_MSG_MORE: c_int = 2;

/// `struct doca_comm_channel_ep_t` of 1.3: an endpoint with the device (and, on the DPU
/// side, the representor) this process talks through, and whether its calls block.
pub struct doca_comm_channel_ep_t {
    ep: doca_comm_channel::Endpoint,
    dev: doca_core::Dev,
    rep: Option<doca_core::DevRep>,
    attr: doca_comm_channel_init_attr,
    nonblock: bool,
    /// Readable when the endpoint has a message or a new peer: the endpoint's receive
    /// and service descriptors in one epoll set (`doca_comm_channel_ep_event_channel_get`).
    events: std::os::fd::OwnedFd,
}

impl std::fmt::Debug for doca_comm_channel_ep_t {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("doca_comm_channel_ep_t")
            .field("nonblock", &self.nonblock)
            .finish()
    }
}

/// `struct doca_comm_channel_addr_t`.
pub type doca_comm_channel_addr_t = doca_comm_channel::PeerAddr;
/// `doca_event_channel_t`: a descriptor.
pub type doca_event_channel_t = c_int;
/// `struct doca_pollfd` (`struct pollfd`).
pub type doca_pollfd = libc::pollfd;

/// `struct doca_comm_channel_peer_addr_info`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct doca_comm_channel_peer_addr_info {
    /// The peer's function (0: no switch ports here).
    pub vport: u16,
    /// The largest message.
    pub msgsize: u32,
    /// Messages a send queue holds.
    pub maxmsgs: u32,
    /// Messages sent and not yet taken by the peer.
    pub curmsgs: u32,
    /// Messages received.
    pub rx_msgs: u64,
    /// Messages sent.
    pub tx_msgs: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
}

/// How long a blocking connect waits for the service before it gives up.
const CC_CONNECT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

impl doca_comm_channel_ep_t {
    /// Waits (up to `ms` milliseconds) until the endpoint may have something to receive
    /// or a peer to accept.
    fn wait_readable(&self, ms: c_int) {
        use std::os::fd::AsRawFd;
        let mut p = libc::pollfd {
            fd: self.events.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut p, 1, ms) };
    }

    fn blocks(&self, flags: c_int) -> Result<bool> {
        if flags & CC_MSG_MORE != 0 {
            return Err(err(
                ErrorCode::NotSupported,
                "DOCA_CC_MSG_FLAG_MORE is not supported",
            ));
        }
        if flags & !(CC_MSG_DONTWAIT | CC_MSG_MORE) != 0 {
            return Err(invalid(format!("unknown message flags {flags:#x}")));
        }
        Ok(!self.nonblock && flags & CC_MSG_DONTWAIT == 0)
    }
}

/// An epoll set of the endpoint's receive and service descriptors.
fn cc_event_set(ep: &doca_comm_channel::Endpoint) -> Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain system calls; the new descriptor is owned once made.
    unsafe {
        let fd = libc::epoll_create1(libc::EPOLL_CLOEXEC);
        if fd < 0 {
            return Err(err(
                ErrorCode::NoMemory,
                "cannot make the endpoint's event channel (epoll_create1 failed)",
            ));
        }
        let owned = std::os::fd::OwnedFd::from_raw_fd(fd);
        let (_, recv) = ep.event_channels();
        for inner in [recv, ep.service_event_channel()] {
            let mut ev = libc::epoll_event {
                events: libc::EPOLLIN as u32,
                u64: inner as u64,
            };
            if libc::epoll_ctl(fd, libc::EPOLL_CTL_ADD, inner, &mut ev) != 0 {
                return Err(err(
                    ErrorCode::Unexpected,
                    "cannot make the endpoint's event channel (epoll_ctl failed)",
                ));
            }
        }
        Ok(owned)
    }
}

/// An endpoint of `dev` (and `rep`) as `a` asks.
fn cc_endpoint(
    dev: &doca_core::Dev,
    rep: Option<&doca_core::DevRep>,
    a: &doca_comm_channel_init_attr,
) -> Result<doca_comm_channel::Endpoint> {
    let mut e = doca_comm_channel::Endpoint::try_new()?;
    e.set_device(dev)?;
    if let Some(r) = rep {
        e.set_device_rep(r)?;
    }
    if a.msgsize > 0 {
        e.set_max_msg_size(a.msgsize as u16)?;
    }
    if a.maxmsgs > 0 {
        e.set_send_queue_size(a.maxmsgs as u16)?;
        e.set_recv_queue_size(a.maxmsgs as u16)?;
    }
    Ok(e)
}

/// `doca_comm_channel_ep_create` of 1.3: the endpoint talks through this process's
/// first device (on the DPU side, for its first host function's representor).
#[unsafe(export_name = "doca1__comm_channel_ep_create")]
pub unsafe extern "C" fn doca_comm_channel_ep_create(
    attr: *mut doca_comm_channel_init_attr,
    ep: *mut *mut doca_comm_channel_ep_t,
) -> doca_error_t {
    ffi(|| {
        if attr.is_null() {
            return Err(invalid("attr is NULL"));
        }
        // SAFETY: non-NULL, the caller's attributes.
        let a = unsafe { *attr };
        if a.flags & !CC_INIT_NONBLOCK != 0 {
            return Err(invalid(format!("unknown endpoint flags {:#x}", a.flags)));
        }
        let max = doca_comm_channel::MAX_MESSAGE_SIZE;
        if a.msgsize > max {
            return Err(err(
                ErrorCode::NotPermitted,
                format!(
                    "msgsize {} is over the largest message, {max} bytes",
                    a.msgsize
                ),
            ));
        }
        if a.maxmsgs > doca_comm_channel::MAX_QUEUE_SIZE {
            return Err(err(
                ErrorCode::NotPermitted,
                format!(
                    "maxmsgs {} is over the largest queue, {}",
                    a.maxmsgs,
                    doca_comm_channel::MAX_QUEUE_SIZE
                ),
            ));
        }
        new_handle(ep, "ep", || {
            let info = crate::dev::machine_devices()?
                .into_iter()
                .next()
                .ok_or_else(|| {
                    err(
                        ErrorCode::NotFound,
                        "this process has no device for the comm channel",
                    )
                })?;
            let dev = info.open()?;
            let rep = if dev.as_devinfo().role() == doca_core::device::Role::Dpu {
                let r = dev
                    .rep_list(doca_core::RepFilter::Net)?
                    .into_iter()
                    .next()
                    .ok_or_else(|| {
                        err(
                            ErrorCode::NotFound,
                            "the DPU device serves no host function",
                        )
                    })?
                    .open()?;
                Some(r)
            } else {
                None
            };
            let e = cc_endpoint(&dev, rep.as_ref(), &a)?;
            let events = cc_event_set(&e)?;
            Ok(doca_comm_channel_ep_t {
                ep: e,
                dev,
                rep,
                attr: a,
                nonblock: a.flags & CC_INIT_NONBLOCK != 0,
                events,
            })
        })
    })
}

fn with_ep1(
    ep: *mut doca_comm_channel_ep_t,
    f: impl FnOnce(&mut doca_comm_channel_ep_t) -> Result<()>,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle, used by one thread at a time (DOCA's rule).
        let e = unsafe { handle_mut(ep, "local_ep") }?;
        f(e)
    })
}

fn cc_peer(
    ep: &doca_comm_channel::Endpoint,
    p: *const doca_comm_channel_addr_t,
) -> Result<doca_comm_channel::PeerId> {
    if p.is_null() {
        return Err(err(ErrorCode::NotConnected, "peer_addr is NULL"));
    }
    ep.peer_id_at(p).ok_or_else(|| {
        err(
            ErrorCode::NotConnected,
            "peer_addr is not a peer of this endpoint (disconnected?)",
        )
    })
}

/// `doca_comm_channel_ep_listen` of 1.3.
#[unsafe(export_name = "doca1__comm_channel_ep_listen")]
pub unsafe extern "C" fn doca_comm_channel_ep_listen(
    local_ep: *mut doca_comm_channel_ep_t,
    name: *const c_char,
) -> doca_error_t {
    with_ep1(local_ep, |e| {
        // SAFETY: NULL or a NUL-terminated string.
        let n = unsafe { cstr(name, "name") }?;
        e.ep.listen(n)
    })
}

/// `doca_comm_channel_ep_connect` of 1.3: blocks until connected (unless the endpoint
/// does not block); `CONNECTION_ABORTED` when no such service listens.
#[unsafe(export_name = "doca1__comm_channel_ep_connect")]
pub unsafe extern "C" fn doca_comm_channel_ep_connect(
    local_ep: *mut doca_comm_channel_ep_t,
    name: *const c_char,
    peer_addr: *mut *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    with_ep1(local_ep, |e| {
        // SAFETY: NULL or a NUL-terminated string.
        let n = unsafe { cstr(name, "name") }?;
        let out = out_ptr(peer_addr, "peer_addr")?;
        let id = e.ep.connect(n)?;
        if !e.nonblock {
            let t = std::time::Instant::now();
            while !e.ep.peers().contains(&id) {
                if t.elapsed() > CC_CONNECT_WAIT {
                    // The endpoint is as it was before the call: it may connect again.
                    let fresh = cc_endpoint(&e.dev, e.rep.as_ref(), &e.attr)?;
                    e.events = cc_event_set(&fresh)?;
                    e.ep = fresh;
                    return Err(err(
                        ErrorCode::ConnectionAborted,
                        format!(
                            "no service \"{n}\" listens for this device (start the DPU side first)"
                        ),
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        let a = crate::comm_channel::addr_of(&e.ep, id)?;
        // SAFETY: non-NULL, writable.
        unsafe { put(out, a) };
        Ok(())
    })
}

/// `doca_comm_channel_ep_sendto` of 1.3: blocks while the peer's queue is full unless
/// flags or the endpoint say not to.
#[unsafe(export_name = "doca1__comm_channel_ep_sendto")]
pub unsafe extern "C" fn doca_comm_channel_ep_sendto(
    local_ep: *mut doca_comm_channel_ep_t,
    msg: *const c_void,
    len: usize,
    flags: c_int,
    peer_addr: *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    with_ep1(local_ep, |e| {
        let block = e.blocks(flags)?;
        if msg.is_null() {
            return Err(invalid("msg is NULL"));
        }
        let id = cc_peer(&e.ep, peer_addr)?;
        loop {
            // SAFETY: msg is non-NULL; the caller passes len readable bytes.
            match unsafe { crate::comm_channel::send_bytes(&mut e.ep, msg, len, id) } {
                Err(x) if block && x.code() == ErrorCode::Again => {
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
                r => return r,
            }
        }
    })
}

/// `doca_comm_channel_ep_recvfrom` of 1.3: blocks while nothing came unless flags or
/// the endpoint say not to; `NOT_CONNECTED` with `*peer_addr` set when a peer's
/// connection ended.
#[unsafe(export_name = "doca1__comm_channel_ep_recvfrom")]
pub unsafe extern "C" fn doca_comm_channel_ep_recvfrom(
    local_ep: *mut doca_comm_channel_ep_t,
    msg: *mut c_void,
    len: *mut usize,
    flags: c_int,
    peer_addr: *mut *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    with_ep1(local_ep, |e| {
        let block = e.blocks(flags)?;
        loop {
            // SAFETY: the caller's pointers, as recv_bytes asks.
            match unsafe { crate::comm_channel::recv_bytes(&mut e.ep, msg, len, peer_addr) } {
                Err(x) if block && x.code() == ErrorCode::Again => e.wait_readable(10),
                r => return r,
            }
        }
    })
}

/// `doca_comm_channel_ep_disconnect` of 1.3.
#[unsafe(export_name = "doca1__comm_channel_ep_disconnect")]
pub unsafe extern "C" fn doca_comm_channel_ep_disconnect(
    local_ep: *mut doca_comm_channel_ep_t,
    peer_addr: *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    with_ep1(local_ep, |e| {
        let id = cc_peer(&e.ep, peer_addr)?;
        e.ep.disconnect(id)
    })
}

/// `doca_comm_channel_ep_destroy` of 1.3.
#[unsafe(export_name = "doca1__comm_channel_ep_destroy")]
pub unsafe extern "C" fn doca_comm_channel_ep_destroy(
    ep: *mut doca_comm_channel_ep_t,
) -> doca_error_t {
    // SAFETY: NULL or a live boxed handle, freed once.
    ffi(|| unsafe { crate::free_handle(ep, "ep") })
}

/// `doca_comm_channel_peer_addr_user_data_get` (1.3).
#[unsafe(export_name = "doca1__comm_channel_peer_addr_user_data_get")]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_user_data_get(
    peer_addr: *mut doca_comm_channel_addr_t,
    user_data: *mut u64,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live peer address.
        let a = unsafe { handle(peer_addr, "peer_addr") }?;
        let o = out_ptr(user_data, "user_data")?;
        // SAFETY: non-NULL, writable.
        unsafe { put(o, a.user_data()) };
        Ok(())
    })
}

/// `doca_comm_channel_peer_addr_user_data_set` (1.3).
#[unsafe(export_name = "doca1__comm_channel_peer_addr_user_data_set")]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_user_data_set(
    peer_addr: *mut doca_comm_channel_addr_t,
    user_context: u64,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live peer address.
        let a = unsafe { handle(peer_addr, "peer_addr") }?;
        a.set_user_data(user_context);
        Ok(())
    })
}

/// `doca_comm_channel_ep_event_channel_get` (1.3): -1 for a NULL endpoint.
#[unsafe(export_name = "doca1__comm_channel_ep_event_channel_get")]
pub unsafe extern "C" fn doca_comm_channel_ep_event_channel_get(
    local_ep: *mut doca_comm_channel_ep_t,
) -> doca_event_channel_t {
    use std::os::fd::AsRawFd;
    crate::ffi_value(-1, || {
        // SAFETY: NULL or a live handle.
        let e = unsafe { handle(local_ep, "local_ep") }?;
        Ok(e.events.as_raw_fd())
    })
}

/// `doca_comm_channels_poll` (1.3): `poll()` over the descriptors.
#[unsafe(export_name = "doca1__comm_channels_poll")]
pub unsafe extern "C" fn doca_comm_channels_poll(
    fds: *mut doca_pollfd,
    nfds: u32,
    timeout: c_int,
) -> c_int {
    if fds.is_null() && nfds > 0 {
        return -1;
    }
    // SAFETY: the caller's array of nfds pollfds (the contract of poll()).
    unsafe { libc::poll(fds, libc::nfds_t::from(nfds), timeout) }
}

/// `doca_comm_channel_peer_addr_info_get` (1.3).
#[unsafe(export_name = "doca1__comm_channel_peer_addr_info_get")]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_info_get(
    peer_addr: *mut doca_comm_channel_addr_t,
    info: *mut doca_comm_channel_peer_addr_info,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live peer address.
        let a = unsafe { handle(peer_addr, "peer_addr") }?;
        let o = out_ptr(info, "info")?;
        if !a.is_connected() {
            return Err(err(ErrorCode::NotConnected, "the peer is not connected"));
        }
        let i = doca_comm_channel_peer_addr_info {
            vport: 0,
            msgsize: doca_comm_channel::MAX_MESSAGE_SIZE,
            maxmsgs: 0,
            curmsgs: a.send_in_flight_messages() as u32,
            rx_msgs: a.recv_messages(),
            tx_msgs: a.send_messages(),
            rx_bytes: a.recv_bytes(),
            tx_bytes: a.send_bytes(),
        };
        // SAFETY: non-NULL, writable.
        unsafe { put(o, i) };
        Ok(())
    })
}
