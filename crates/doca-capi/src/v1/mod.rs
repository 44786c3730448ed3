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

use crate::common::{
    Result, cstr, doca_error_t, err, ffi, handle, handle_mut, invalid, new_handle, out_ptr, put,
};
use crate::v22::dev::{doca_dev, doca_dev_rep, doca_devinfo, doca_devinfo_rep};
use crate::v22::dma::doca_dma_job_memcpy;
use crate::v22::exec::{doca_job, doca_workq};
use crate::v22::mem::{doca_buf, doca_buf_inventory, doca_mmap, doca_mmap_memrange_free_cb_t};
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

mod buffers;
mod comm_channel;
mod devices;
mod mmap;
mod workq;
// The 1.x face as one module: every item of its parts is reachable as `v1::name`.
pub use buffers::*;
pub use comm_channel::*;
pub use devices::*;
pub(crate) use mmap::create_from_json_export;
pub use mmap::*;
pub use workq::*;
