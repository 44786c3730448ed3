//! Sharing a sync event with the other side of the PCIe link: exports and the handles
//! made from them, and what the devices support.

use super::*;
use crate::Error;

impl SyncEvent {
    /// `doca_sync_event_export_to_dpu`: a descriptor from which a DPU-side process
    /// creates its handle of this event ([`SyncEvent::create_from_export`]); both then
    /// share one counter. `dev` is a host device with the export capability. Called
    /// again, the same descriptor; it stays valid until the event is destroyed.
    pub fn export_to_dpu(&self, dev: &Dev) -> Result<Arc<[u8]>> {
        let info = dev.as_devinfo();
        if !SyncEvent::export_to_dpu_supported(info) {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "device {} cannot export sync events to the DPU (a host device with the capability is needed)",
                    info.pci_addr()
                ),
            ));
        }
        self.export_pci(dev)
    }

    /// `doca_sync_event_export_to_remote_pci` (3.x): a descriptor for the process on
    /// the other side of the PCIe link, from either side: a host device's export is
    /// for the DPU that represents it, a DPU device's for the host.
    pub fn export_to_remote_pci(&self, dev: &Dev) -> Result<Arc<[u8]>> {
        let info = dev.as_devinfo();
        if !SyncEvent::export_to_remote_pci_supported(info) {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "device {} cannot export sync events over PCIe (the capability is needed)",
                    info.pci_addr()
                ),
            ));
        }
        self.export_pci(dev)
    }

    /// `doca_sync_event_cap_is_export_to_remote_pci_supported` and
    /// `..._create_from_export_supported` (3.x): a device of either side with the
    /// capability.
    pub fn export_to_remote_pci_supported(devinfo: &DevInfo) -> bool {
        devinfo.has_capability(Capability::SyncEventExportDpu)
    }

    /// `doca_sync_event_create_from_export` (3.x): the handle of an event the other
    /// side exported. On the DPU side, `dev` must represent the exporting host device.
    pub fn create_from_remote_pci_export(dev: &Dev, desc: &[u8]) -> Result<SyncEvent> {
        let info = dev.as_devinfo();
        if info.role() == Role::Dpu {
            return SyncEvent::create_from_export(dev, desc);
        }
        let imp = Import::open(desc, &[Kind::SyncEvent])?;
        if !SyncEvent::export_to_remote_pci_supported(info) {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "device {} cannot create sync events from exports (the capability is needed)",
                    info.pci_addr()
                ),
            ));
        }
        let se = SyncEvent::with_store(Store::Imported(Box::new(imp)));
        se.ctx.dev_add_implied(dev)?;
        Ok(se)
    }

    fn export_pci(&self, dev: &Dev) -> Result<Arc<[u8]>> {
        let mut ex = self.shared.export.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, blob)) = &*ex {
            return Ok(Arc::clone(blob));
        }
        let info = dev.as_devinfo();
        let page = match &self.shared.store {
            Store::Page(p) => Arc::clone(p),
            Store::Imported(_) => {
                return Err(Error::with_context(
                    ErrorCode::NotPermitted,
                    "a sync event created from an export cannot be exported again",
                ));
            }
            Store::Private(_) => {
                return Err(Error::with_context(
                    ErrorCode::NoMemory,
                    "the sync event could not be placed in shared memory when it was created",
                ));
            }
        };
        if !self.shared.external.load(Ordering::Acquire).is_null() {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "a sync event whose counter is in set_addr memory cannot be exported; export one with its own counter",
            ));
        }
        let export = Export::publish(
            page,
            ExportSpec {
                kind: Kind::SyncEvent,
                base: 0,
                len: 8,
                perms: 0,
                dev: crate::memory::pci_code(&info.pci_addr()),
                shm: None,
                via: None,
            },
        )?;
        let blob: Arc<[u8]> = Arc::from(export.blob());
        *ex = Some((export, Arc::clone(&blob)));
        Ok(blob)
    }

    /// `doca_sync_event_create_from_export`: this side's handle of an event another
    /// process exported, sharing its counter. It cannot be configured; start it (sync
    /// or as a context) before use. `dev` is a DPU device with the representor of the
    /// exporting host device.
    pub fn create_from_export(dev: &Dev, desc: &[u8]) -> Result<SyncEvent> {
        let imp = Import::open(desc, &[Kind::SyncEvent])?;
        let info = dev.as_devinfo();
        if !SyncEvent::create_from_export_supported(info) {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "device {} cannot create sync events from exports (a DPU device with the capability is needed)",
                    info.pci_addr()
                ),
            ));
        }
        imp.check_represented_by(info)?;
        let se = SyncEvent::with_store(Store::Imported(Box::new(imp)));
        se.ctx.dev_add_implied(dev)?;
        Ok(se)
    }

    /// Whether this handle was created from an export.
    pub fn is_from_export(&self) -> bool {
        self.shared.imported().is_some()
    }

    /// `doca_sync_event_job_get_supported`.
    pub fn job_get_supported(devinfo: &DevInfo, job_type: u32) -> Result<()> {
        if !(JOB_WAIT_GT..=JOB_WAIT_NEQ).contains(&job_type) {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!("job type {job_type} is not a sync event job"),
            ));
        }
        crate::exec::job_supported_in(super::tasks::ALL, devinfo, job_type)
    }

    /// `doca_sync_event_get_export_to_dpu_supported`: whether the device can export a
    /// sync event to the DPU (a topology capability).
    pub fn export_to_dpu_supported(devinfo: &DevInfo) -> bool {
        devinfo.role() == Role::Host && devinfo.has_capability(Capability::SyncEventExportDpu)
    }

    /// `doca_sync_event_get_create_from_export_supported`: a DPU device with the
    /// capability.
    pub fn create_from_export_supported(devinfo: &DevInfo) -> bool {
        devinfo.role() == Role::Dpu && devinfo.has_capability(Capability::SyncEventExportDpu)
    }

    /// `doca_sync_event_get_export_to_dpa_supported`: no DPA here.
    pub fn export_to_dpa_supported(_devinfo: &DevInfo) -> bool {
        false
    }

    /// `doca_sync_event_get_export_to_gpu_supported`: no GPU here.
    pub fn export_to_gpu_supported(_devinfo: &DevInfo) -> bool {
        false
    }
}
