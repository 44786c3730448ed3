//! An mmap across processes and machines: its exports (to the DPU side, for RDMA) and
//! the mmaps created from them, and reading and writing its bytes from outside.

use super::*;
use crate::Error;

impl Mmap {
    /// `doca_mmap_export_dpu`: a descriptor that lets a DPU-side process create this
    /// mmap's twin ([`Mmap::create_from_export`]) and reach its memory with jobs. The
    /// mmap must be started, `dev` (a host device with the export capability) added,
    /// and the permissions must include [`AccessFlags::DPU_READ_ONLY`] or
    /// [`AccessFlags::DPU_READ_WRITE`]. Called again, the same descriptor; it stays
    /// valid until the mmap is stopped or destroyed, which revokes it.
    pub fn export_dpu(&self, dev: &Dev) -> Result<Arc<[u8]>> {
        self.export(dev, Kind::MmapDpu)
    }

    /// `doca_mmap_export_rdma`: as [`export_dpu`](Mmap::export_dpu), for another
    /// process of this machine that imports it with any device; the permissions must
    /// include an `RDMA_*` flag.
    pub fn export_rdma(&self, dev: &Dev) -> Result<Arc<[u8]>> {
        self.export(dev, Kind::MmapRdma)
    }

    fn export(&self, dev: &Dev, kind: Kind) -> Result<Arc<[u8]>> {
        let mut st = self.shared.state();
        let i = (kind == Kind::MmapRdma) as usize;
        if let Some((_, blob)) = &st.exports[i] {
            return Ok(Arc::clone(blob));
        }
        if st.from_export {
            return self.reexport(&mut st, dev, kind);
        }
        if !st.started {
            return Err(Error::bad_state(
                "mmap is not started; start it before exporting",
            ));
        }
        if !st.devices.contains(dev) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the device was not added to this mmap (mmap dev_add)",
            ));
        }
        let info = dev.as_devinfo();
        let (need, names) = match kind {
            Kind::MmapDpu => (
                AccessFlags::DPU_READ_ONLY | AccessFlags::DPU_READ_WRITE,
                "DOCA_ACCESS_DPU_READ_ONLY or DOCA_ACCESS_DPU_READ_WRITE",
            ),
            _ => (
                AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE | AccessFlags::RDMA_ATOMIC,
                "DOCA_ACCESS_RDMA_READ, _WRITE or _ATOMIC",
            ),
        };
        if kind == Kind::MmapDpu {
            if info.role() != Role::Host {
                return Err(Error::with_context(
                    ErrorCode::NotSupported,
                    "only the host side exports memory to the DPU (this device is on the DPU)",
                ));
            }
            if !info.has_capability(Capability::MmapExportDpu) {
                return Err(Error::with_context(
                    ErrorCode::NotSupported,
                    format!("device {} cannot export memory to the DPU", info.pci_addr()),
                ));
            }
        }
        if !st.permissions.intersects(need) {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                format!("the mmap's permissions do not allow this export: set {names}"),
            ));
        }
        if st.memory.is_none() {
            return Err(Error::bad_state(
                "mmap has no memory; populate it before exporting",
            ));
        }
        if !st.chunks.is_empty() {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "only an mmap of a single chunk can be exported",
            ));
        }
        let pci = info.pci_addr();
        let shm = match &st.memory {
            Some(Memory::Owned { region }) => region.shared_file(),
            _ => None,
        };
        let export = Export::new(ExportSpec {
            kind,
            base: st.base as u64,
            len: st.len as u64,
            perms: st.permissions.bits(),
            dev: pci_code(&pci),
            shm,
            via: None,
        })?;
        let blob: Arc<[u8]> = Arc::from(export.blob());
        st.exports[i] = Some((export, Arc::clone(&blob)));
        st.ever_exported = true;
        Ok(blob)
    }

    /// An RDMA export of an mmap created from a DPU export (host memory this DPU process
    /// imported), as a BlueField lets its NIC serve host memory to remote peers: the
    /// descriptor names this process and `dev`, and this process's RDMA engine moves
    /// the bytes through the import. The importer's checks apply (range, the
    /// `DOCA_ACCESS_RDMA_*` flags the host granted, `dev`), and the host's stop or
    /// destroy revokes the memory underneath: accesses then fail.
    fn reexport(&self, st: &mut MmapState, dev: &Dev, kind: Kind) -> Result<Arc<[u8]>> {
        let remote = self.shared.remote.as_ref().filter(|r| r.is_local());
        let Some(remote) = remote.filter(|r| r.net_key().is_none()) else {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "only an mmap created from memory a host exported to the DPU can be exported again (for RDMA)",
            ));
        };
        if kind != Kind::MmapRdma {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "an mmap created from an export can be exported again for RDMA only",
            ));
        }
        if !st.devices.contains(dev) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the device is not the one this mmap was created from the export with",
            ));
        }
        let rdma = AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE | AccessFlags::RDMA_ATOMIC;
        if !st.permissions.intersects(rdma) {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "the host exported this memory without DOCA_ACCESS_FLAG_RDMA_READ, _WRITE or _ATOMIC: it cannot be exported for RDMA",
            ));
        }
        let export = Export::new(ExportSpec {
            kind,
            base: st.base as u64,
            len: st.len as u64,
            perms: st.permissions.bits(),
            dev: pci_code(&dev.as_devinfo().pci_addr()),
            shm: None,
            via: Some(Arc::clone(remote)),
        })?;
        let blob: Arc<[u8]> = Arc::from(export.blob());
        st.exports[1] = Some((export, Arc::clone(&blob)));
        Ok(blob)
    }

    /// `doca_mmap_create_from_export`: an mmap over the memory another process exported,
    /// at the exporter's addresses, already started and not reconfigurable. `dev` is
    /// this side's device: for a DPU export, a DPU device with the representor of the
    /// exporting host device (the guide's matching table). Buffers are taken from it
    /// by address as usual; jobs move the bytes between the two processes.
    pub fn create_from_export(user_data: Data, desc: &[u8], dev: &Dev) -> Result<Mmap> {
        let blob = crate::xproc::blob::Blob::decode(desc)?;
        let own = blob.pid == crate::xproc::me().0;
        if blob.kind == Kind::MmapRdma
            && (own || blob.relay || !crate::xproc::reachable(blob.pid, blob.start, blob.uid))
        {
            // The exporter runs elsewhere (or is this process, over the loopback): RDMA
            // tasks reach its memory, and its side checks every access against the
            // export.
            let remote = RemoteMemory::network(blob);
            return Ok(Mmap::from_remote(user_data, remote, dev));
        }
        let imp = Import::open(desc, &[Kind::MmapDpu, Kind::MmapRdma])?;
        let info = dev.as_devinfo();
        if imp.blob.kind == Kind::MmapDpu {
            if info.role() != Role::Dpu {
                return Err(Error::with_context(
                    ErrorCode::NotSupported,
                    "memory exported to the DPU is imported on the DPU side (this device is a host device)",
                ));
            }
            if !info.has_capability(Capability::MmapFromExportDpu) {
                return Err(Error::with_context(
                    ErrorCode::NotSupported,
                    format!(
                        "device {} cannot create mmaps from exports",
                        info.pci_addr()
                    ),
                ));
            }
            imp.check_represented_by(info)?;
        }
        let remote = RemoteMemory::new(imp)?;
        Ok(Mmap::from_remote(user_data, remote, dev))
    }

    fn from_remote(user_data: Data, remote: RemoteMemory, dev: &Dev) -> Mmap {
        let (base, len) = (remote.base(), remote.len());
        let permissions = AccessFlags::from_bits_truncate(remote.perms());
        let st = MmapState {
            memory: Some(Memory::Remote),
            base,
            len,
            permissions,
            max_devices: DEFAULT_MAX_NUM_DEVICES,
            devices: vec![dev.clone()],
            free_cb: None,
            started: true,
            exports: Default::default(),
            from_export: true,
            chunked: false,
            max_chunks: 1,
            chunks: Vec::new(),
            name: String::new(),
            ever_started: true,
            ever_exported: false,
            thread_safe: false,
        };
        let frozen = Frozen::default();
        frozen.store(&st);
        Mmap {
            shared: Arc::new(MmapShared {
                state: Mutex::new(st),
                io: crate::memory::io::RangeLock::default(),
                num_bufs: AtomicU32::new(0),
                user_data: std::sync::atomic::AtomicU64::new(user_data.0),
                frozen,
                remote: Some(Arc::new(remote)),
            }),
            _not_sync: PhantomData,
        }
    }

    /// The exporter's memory, for an mmap created from an export.
    pub fn remote(&self) -> Option<&RemoteMemory> {
        self.shared.remote.as_deref()
    }

    fn range_check(&self, offset: usize, n: usize) -> Result<usize> {
        let st = self.shared.state();
        if st.memory.is_none() {
            return Err(Error::bad_state("mmap has no memory range"));
        }
        match offset.checked_add(n) {
            Some(end) if end <= st.len => Ok(st.base + offset),
            _ => Err(Error::with_context(
                ErrorCode::InvalidValue,
                "byte range lies outside the mmap's memory range",
            )),
        }
    }

    /// Copies bytes out of the memory range, starting at `offset`.
    pub fn read_at(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        let addr = self.range_check(offset, out.len())?;
        let n = out.len();
        if let Some(r) = &self.shared.remote {
            // SAFETY: `out` is valid for writes of n bytes and borrowed exclusively.
            return unsafe { r.read_raw(addr, out.as_mut_ptr(), n) };
        }
        self.shared.io.with(addr, n, false, || {
            // SAFETY: the range lies inside the mmap's memory (checked), which is valid for
            // reads while the mmap lives; no writer holds it (range lock).
            unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, out.as_mut_ptr(), n) };
        });
        Ok(())
    }

    /// Copies bytes into the memory range, starting at `offset`.
    pub fn write_at(&self, offset: usize, bytes: &[u8]) -> Result<()> {
        let addr = self.range_check(offset, bytes.len())?;
        if let Some(r) = &self.shared.remote {
            if !r.writable() {
                return Err(r.read_only());
            }
            // SAFETY: `bytes` is valid for reads of its length.
            return unsafe { r.write_raw(addr, bytes.as_ptr(), bytes.len()) };
        }
        self.shared.io.with(addr, bytes.len(), true, || {
            // SAFETY: as in `read_at`; the memory is valid for writes and nothing else holds
            // the range (range lock).
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), addr as *mut u8, bytes.len()) };
        });
        Ok(())
    }

    /// The whole memory range as a mutable slice, while no buffer points into it (`InUse`
    /// otherwise): the borrow keeps new buffers from being made until it ends.
    pub fn memory_mut(&mut self) -> Result<&mut [u8]> {
        if self.shared.remote.is_some() {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "the memory of an mmap created from an export lives in the exporting process; use read_at/write_at or jobs",
            ));
        }
        let n = self.num_bufs();
        if n > 0 {
            return Err(Error::with_context(
                ErrorCode::InUse,
                format!("{n} buffers point into the mmap; use read_at/write_at"),
            ));
        }
        let (base, len) = self.memrange()?;
        // SAFETY: the range is valid for reads and writes while the mmap lives; `&mut self`
        // and the zero buffer count mean nothing else can reach the bytes during the borrow.
        Ok(unsafe { std::slice::from_raw_parts_mut(base, len) })
    }
}

/// A PCI address as one number (domain << 16 | bus << 8 | device << 3 | function).
pub(crate) fn pci_code(a: &crate::device::PciAddr) -> u32 {
    (u32::from(a.domain) << 16)
        | (u32::from(a.bus) << 8)
        | (u32::from(a.device & 0x1f) << 3)
        | u32::from(a.function & 7)
}

pub(crate) fn pci_text(code: u32) -> String {
    format!(
        "{:04x}:{:02x}:{:02x}.{:x}",
        code >> 16,
        (code >> 8) & 0xff,
        (code >> 3) & 0x1f,
        code & 7
    )
}
