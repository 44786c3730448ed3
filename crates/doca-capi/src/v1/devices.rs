//! Devices of the 1.x face: the device list, properties, opening by property, remote
//! devices and DMA capabilities.

use super::*;

/// `doca_devinfo_list_create` as DOCA 1.3 declares it (no count; the list ends with
/// NULL). The 1.x header calls it for the one-argument form.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_list_create_v13(
    dev_list: *mut *mut *mut doca_devinfo,
) -> doca_error_t {
    let mut n = 0u32;
    // SAFETY: the same contract; the count goes to a local.
    unsafe { crate::v22::dev::doca_devinfo_list_create(dev_list, &mut n) }
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
        match unsafe { crate::v22::dev::doca_dev_open(devinfo, &mut h) } {
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
    unsafe { crate::v22::dev::doca_dev_close(dev) }
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
        let info = unsafe { crate::v22::dev::doca_dev_as_devinfo(dev) };
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
    unsafe { crate::v22::dev::doca_devinfo_rep_list_create(dev, f, list, nb) }
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
    unsafe { crate::v22::dev::doca_devinfo_rep_list_destroy(list) }
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
    unsafe { crate::v22::dev::doca_dev_rep_open(devinfo_remote, dev_remote) }
}

/// `doca_dev_remote_close`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dev_remote_close(dev_remote: *mut doca_dev_remote) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::dev::doca_dev_rep_close(dev_remote) }
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
        let info = unsafe { crate::v22::dev::doca_dev_rep_as_devinfo(dev_remote) };
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
        let supported = doca_dma::Dma::job_get_supported(&d.info, doca_dma::JOB_MEMCPY)
            .map(|()| DMA_CAP_HW_OFFLOAD)
            .unwrap_or(0);
        // SAFETY: checked non-NULL.
        unsafe { put(caps, supported) };
        Ok(())
    })
}
