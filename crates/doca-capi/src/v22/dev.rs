//! `doca_dev.h`.

use crate::common::handles::{Handle, kind};
use crate::common::{
    Result, cstr, doca_error_t, ffi, free_handle, handle, handle_mut, invalid, new_handle, out_ptr,
    put,
};
use doca_core::{Dev, DevInfo, DevInfoRep, DevRep, PciFuncType, RepFilter};
use std::ffi::{c_char, c_int};

crate::common::handles::handle_kinds! {
    Boxed: doca_dev, doca_dev_rep;
    Borrowed: doca_devinfo, doca_devinfo_rep;
}

/// `struct doca_devinfo`.
#[derive(Debug)]
pub struct doca_devinfo {
    pub(crate) info: DevInfo,
}

/// `struct doca_dev`: the open device and its own information.
#[derive(Debug)]
pub struct doca_dev {
    pub(crate) dev: Dev,
    info: doca_devinfo,
}

/// `struct doca_devinfo_rep`.
#[derive(Debug)]
pub struct doca_devinfo_rep {
    info: DevInfoRep,
}

impl doca_devinfo_rep {
    /// The representor's information.
    pub(crate) fn info(&self) -> &DevInfoRep {
        &self.info
    }
}

/// `struct doca_dev_rep`.
#[derive(Debug)]
pub struct doca_dev_rep {
    pub(crate) rep: DevRep,
    info: doca_devinfo_rep,
}

/// Called before `main` by programs built with the DPU flavour of the installation
/// (`pkg-config doca-dpu`, whose `doca_build_config.h` defines `DOCA_ARCH_DPU`): `dpu`
/// nonzero makes the process the DPU side of the machine, zero the host side.
/// `DOCA_SW_ROLE` still overrides. Not part of DOCA's interface.
#[unsafe(no_mangle)]
pub extern "C" fn doca_capi_build_role_set(dpu: c_int) -> doca_error_t {
    ffi(|| {
        doca_core::device::set_build_role(if dpu != 0 {
            doca_core::device::Role::Dpu
        } else {
            doca_core::device::Role::Host
        });
        Ok(())
    })
}

/// Hands C a NULL-terminated array of handles and its length; both outputs are checked
/// before `items` is made. The entries are borrowed from the list, which owns them.
fn give_list<T: Handle<Kind = kind::Borrowed>>(
    list: *mut *mut *mut T,
    len: *mut u32,
    items: impl FnOnce() -> Result<Vec<T>>,
) -> Result<()> {
    let (list, len) = (out_ptr(list, "list")?, out_ptr(len, "count")?);
    let items = items()?;
    let n = items.len() as u32;
    let mut v: Vec<*mut T> = items
        .into_iter()
        .map(|t| Box::into_raw(Box::new(t)))
        .collect();
    v.push(std::ptr::null_mut());
    let p = Box::into_raw(v.into_boxed_slice()) as *mut *mut T;
    // SAFETY: both outputs were checked non-NULL; the caller gives writable memory.
    unsafe {
        put(list, p);
        put(len, n);
    }
    Ok(())
}

/// Frees an array made by [`give_list`].
///
/// # Safety
/// `list` is NULL or came from `give_list::<T>`, and is freed once.
unsafe fn free_list<T: Handle<Kind = kind::Borrowed>>(list: *mut *mut T) -> Result<()> {
    if list.is_null() {
        return Err(invalid("the list is NULL"));
    }
    let mut n = 0;
    // SAFETY: the array ends with NULL (give_list).
    while !unsafe { *list.add(n) }.is_null() {
        n += 1;
    }
    // SAFETY: the array was a boxed slice of n + 1 pointers, each a boxed T.
    unsafe {
        let b = Box::from_raw(std::ptr::slice_from_raw_parts_mut(list, n + 1));
        for p in &b[..n] {
            drop(Box::from_raw(*p));
        }
    }
    Ok(())
}

/// The local devices of the machine in force. Listing fails only on the user's
/// configuration (a topology file or `DOCA_SW_ROLE` that cannot be used), not on a
/// mistake in the call, and the returned code alone does not say which file or line
/// is wrong: the reason is logged at error level.
pub(crate) fn machine_devices() -> Result<Vec<DevInfo>> {
    doca_core::devinfo_list().inspect_err(|e| {
        crate::common::log::internal(crate::common::log::LEVEL_ERROR, &e.to_string())
    })
}

/// `doca_devinfo_list_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_list_create(
    dev_list: *mut *mut *mut doca_devinfo,
    nb_devs: *mut u32,
) -> doca_error_t {
    ffi(|| {
        give_list(dev_list, nb_devs, || {
            let infos = machine_devices()?;
            Ok(infos
                .into_iter()
                .map(|info| doca_devinfo { info })
                .collect())
        })
    })
}

/// `doca_devinfo_list_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_list_destroy(
    dev_list: *mut *mut doca_devinfo,
) -> doca_error_t {
    // SAFETY: a list from doca_devinfo_list_create, destroyed once (the C contract).
    ffi(|| unsafe { free_list(dev_list) })
}

/// `doca_devinfo_rep_list_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_list_create(
    dev: *mut doca_dev,
    filter: c_int,
    dev_list_rep: *mut *mut *mut doca_devinfo_rep,
    nb_devs_rep: *mut u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: dev is NULL or an open device handle.
        let dev = unsafe { handle(dev, "dev") }?;
        give_list(dev_list_rep, nb_devs_rep, || {
            let reps = dev.dev.rep_list(RepFilter::from_raw(filter)?)?;
            Ok(reps
                .into_iter()
                .map(|info| doca_devinfo_rep { info })
                .collect())
        })
    })
}

/// `doca_devinfo_rep_list_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_list_destroy(
    dev_list_rep: *mut *mut doca_devinfo_rep,
) -> doca_error_t {
    // SAFETY: a list from doca_devinfo_rep_list_create, destroyed once.
    ffi(|| unsafe { free_list(dev_list_rep) })
}

/// `doca_dev_open`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dev_open(
    devinfo: *mut doca_devinfo,
    dev: *mut *mut doca_dev,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: devinfo is NULL or a live handle.
        let info = unsafe { handle(devinfo, "devinfo") }?;
        new_handle(dev, "dev", || {
            let d = info.info.open()?;
            Ok(doca_dev {
                info: doca_devinfo {
                    info: d.as_devinfo().clone(),
                },
                dev: d,
            })
        })
    })
}

/// `doca_dev_close`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dev_close(dev: *mut doca_dev) -> doca_error_t {
    // SAFETY: an open device handle, closed once; contexts and mmaps hold their own
    // references to the device.
    ffi(|| unsafe { free_handle(dev, "dev") })
}

/// `doca_dev_rep_open`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dev_rep_open(
    devinfo: *mut doca_devinfo_rep,
    dev_rep: *mut *mut doca_dev_rep,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let info = unsafe { handle(devinfo, "devinfo") }?;
        new_handle(dev_rep, "dev_rep", || {
            let rep = info.info.open()?;
            Ok(doca_dev_rep {
                info: doca_devinfo_rep {
                    info: rep.as_devinfo().clone(),
                },
                rep,
            })
        })
    })
}

/// `doca_dev_rep_close`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dev_rep_close(dev: *mut doca_dev_rep) -> doca_error_t {
    // SAFETY: an open representor handle, closed once.
    ffi(|| unsafe { free_handle(dev, "dev") })
}

/// `doca_dev_as_devinfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dev_as_devinfo(dev: *const doca_dev) -> *mut doca_devinfo {
    crate::common::ffi_value(std::ptr::null_mut(), || {
        // SAFETY: NULL or an open device handle.
        let d = unsafe { handle(dev, "dev") }?;
        Ok(&d.info as *const doca_devinfo as *mut doca_devinfo)
    })
}

/// `doca_dev_rep_as_devinfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dev_rep_as_devinfo(
    dev_rep: *mut doca_dev_rep,
) -> *mut doca_devinfo_rep {
    crate::common::ffi_value(std::ptr::null_mut(), || {
        // SAFETY: NULL or an open representor handle.
        let d = unsafe { handle_mut(dev_rep, "dev_rep") }?;
        Ok(&mut d.info as *mut doca_devinfo_rep)
    })
}

/// Fills a C buffer of `size` bytes through a Rust writer, only on success.
///
/// # Safety
/// `out` is NULL or writable for `size` bytes.
pub(crate) unsafe fn fill(
    out: *mut u8,
    size: usize,
    what: &str,
    f: impl FnOnce(&mut [u8]) -> Result<()>,
) -> Result<()> {
    let out = out_ptr(out, what)?;
    // Every property fits in 256 bytes; a larger buffer is filled up to that.
    let n = size.min(1024);
    let mut tmp = vec![0u8; n];
    f(&mut tmp)?;
    // SAFETY: the caller's contract: out holds size >= n bytes.
    unsafe { std::ptr::copy_nonoverlapping(tmp.as_ptr(), out, n) };
    Ok(())
}

macro_rules! devinfo_fill {
    ($(#[$doc:meta])* pub unsafe extern "C" fn $name:ident(devinfo: *const doca_devinfo, out: *mut $ty:ty, size: u32) -> doca_error_t => $method:ident) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(devinfo: *const doca_devinfo, out: *mut $ty, size: u32) -> doca_error_t {
            ffi(|| {
                // SAFETY: NULL or a live handle; out holds size bytes (the C contract).
                unsafe {
                    let info = handle(devinfo, "devinfo")?;
                    fill(out as *mut u8, size as usize, "buffer", |b| info.info.$method(b))
                }
            })
        }
    };
}

devinfo_fill!(
    /// `doca_devinfo_get_ipv4_addr`.
    pub unsafe extern "C" fn doca_devinfo_get_ipv4_addr(devinfo: *const doca_devinfo, out: *mut u8, size: u32) -> doca_error_t => ipv4_addr_into);
devinfo_fill!(
    /// `doca_devinfo_get_ipv6_addr`.
    pub unsafe extern "C" fn doca_devinfo_get_ipv6_addr(devinfo: *const doca_devinfo, out: *mut u8, size: u32) -> doca_error_t => ipv6_addr_into);
devinfo_fill!(
    /// `doca_devinfo_get_mac_addr`.
    pub unsafe extern "C" fn doca_devinfo_get_mac_addr(devinfo: *const doca_devinfo, out: *mut u8, size: u32) -> doca_error_t => mac_addr_into);
devinfo_fill!(
    /// `doca_devinfo_get_iface_name`.
    pub unsafe extern "C" fn doca_devinfo_get_iface_name(devinfo: *const doca_devinfo, out: *mut c_char, size: u32) -> doca_error_t => iface_name_into);
devinfo_fill!(
    /// `doca_devinfo_get_ibdev_name`.
    pub unsafe extern "C" fn doca_devinfo_get_ibdev_name(devinfo: *const doca_devinfo, out: *mut c_char, size: u32) -> doca_error_t => ibdev_name_into);

/// `doca_devinfo_get_pci_addr_str`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_get_pci_addr_str(
    devinfo: *const doca_devinfo,
    pci_addr_str: *mut c_char,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle; the output holds DOCA_DEVINFO_PCI_ADDR_SIZE bytes.
        unsafe {
            let info = handle(devinfo, "devinfo")?;
            fill(
                pci_addr_str as *mut u8,
                doca_core::device::PCI_ADDR_SIZE,
                "pci_addr_str",
                |b| info.info.pci_addr_into(b),
            )
        }
    })
}

/// `doca_devinfo_get_is_pci_addr_equal`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_get_is_pci_addr_equal(
    devinfo: *const doca_devinfo,
    pci_addr_str: *const c_char,
    is_equal: *mut u8,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles / NUL-terminated string.
        let (info, addr) = unsafe {
            (
                handle(devinfo, "devinfo")?,
                cstr(pci_addr_str, "pci_addr_str")?,
            )
        };
        let out = out_ptr(is_equal, "is_equal")?;
        let eq = info.info.is_pci_addr_equal(addr)?;
        // SAFETY: checked non-NULL.
        unsafe { put(out, eq as u8) };
        Ok(())
    })
}

/// `doca_devinfo_get_lid`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_get_lid(
    devinfo: *const doca_devinfo,
    lid: *mut u16,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let info = unsafe { handle(devinfo, "devinfo") }?;
        let out = out_ptr(lid, "lid")?;
        // SAFETY: checked non-NULL.
        unsafe { put(out, info.info.lid()) };
        Ok(())
    })
}

macro_rules! devinfo_flag {
    ($(#[$doc:meta])* pub unsafe extern "C" fn $name:ident(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t => $method:ident) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t {
            ffi(|| {
                // SAFETY: NULL or a live handle.
                let info = unsafe { handle(devinfo, "devinfo") }?;
                let out = out_ptr(out, "output")?;
                // SAFETY: checked non-NULL.
                unsafe { put(out, info.info.$method() as u8) };
                Ok(())
            })
        }
    };
}

devinfo_flag!(
    /// `doca_devinfo_get_is_hotplug_manager_supported`.
    pub unsafe extern "C" fn doca_devinfo_get_is_hotplug_manager_supported(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t => is_hotplug_manager_supported);
devinfo_flag!(
    /// `doca_devinfo_get_is_mmap_export_dpu_supported`.
    pub unsafe extern "C" fn doca_devinfo_get_is_mmap_export_dpu_supported(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t => is_mmap_export_dpu_supported);
devinfo_flag!(
    /// `doca_devinfo_get_is_mmap_from_export_dpu_supported`.
    pub unsafe extern "C" fn doca_devinfo_get_is_mmap_from_export_dpu_supported(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t => is_mmap_from_export_dpu_supported);
devinfo_flag!(
    /// `doca_devinfo_rep_get_is_list_all_supported`.
    pub unsafe extern "C" fn doca_devinfo_rep_get_is_list_all_supported(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t => is_rep_list_all_supported);
devinfo_flag!(
    /// `doca_devinfo_rep_get_is_list_net_supported`.
    pub unsafe extern "C" fn doca_devinfo_rep_get_is_list_net_supported(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t => is_rep_list_net_supported);
devinfo_flag!(
    /// `doca_devinfo_rep_get_is_list_emulated_supported`.
    pub unsafe extern "C" fn doca_devinfo_rep_get_is_list_emulated_supported(devinfo: *const doca_devinfo, out: *mut u8) -> doca_error_t => is_rep_list_emulated_supported);

/// `doca_devinfo_rep_get_vuid`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_get_vuid(
    devinfo_rep: *const doca_devinfo_rep,
    rep_vuid: *mut c_char,
    size: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle; the output holds size bytes.
        unsafe {
            let info = handle(devinfo_rep, "devinfo_rep")?;
            fill(rep_vuid as *mut u8, size as usize, "rep_vuid", |b| {
                info.info.vuid_into(b)
            })
        }
    })
}

/// `doca_devinfo_rep_get_pci_addr_str`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_get_pci_addr_str(
    devinfo_rep: *const doca_devinfo_rep,
    pci_addr_str: *mut c_char,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle; the output holds DOCA_DEVINFO_REP_PCI_ADDR_SIZE bytes.
        unsafe {
            let info = handle(devinfo_rep, "devinfo_rep")?;
            fill(
                pci_addr_str as *mut u8,
                doca_core::device::PCI_ADDR_SIZE,
                "pci_addr_str",
                |b| info.info.pci_addr_into(b),
            )
        }
    })
}

/// `doca_devinfo_rep_get_pci_func_type`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_get_pci_func_type(
    devinfo_rep: *const doca_devinfo_rep,
    pci_func_type: *mut crate::common::doca_pci_func_type,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let info = unsafe { handle(devinfo_rep, "devinfo_rep") }?;
        let out = out_ptr(pci_func_type, "pci_func_type")?;
        let t: PciFuncType = info.info.pci_func_type();
        // SAFETY: checked non-NULL.
        unsafe { put(out, t as crate::common::doca_pci_func_type) };
        Ok(())
    })
}

/// `doca_devinfo_rep_get_is_pci_addr_equal`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_get_is_pci_addr_equal(
    devinfo_rep: *const doca_devinfo_rep,
    pci_addr_str: *const c_char,
    is_equal: *mut u8,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle / NUL-terminated string.
        let (info, addr) = unsafe {
            (
                handle(devinfo_rep, "devinfo_rep")?,
                cstr(pci_addr_str, "pci_addr_str")?,
            )
        };
        let out = out_ptr(is_equal, "is_equal")?;
        let eq = info.info.is_pci_addr_equal(addr)?;
        // SAFETY: checked non-NULL.
        unsafe { put(out, eq as u8) };
        Ok(())
    })
}
