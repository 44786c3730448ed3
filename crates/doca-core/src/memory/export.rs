//! Memory shared between processes: an mmap's export (the exporter's side) and the
//! memory of an mmap created from an export (the importer's side), whose bytes live in
//! the exporter's address space and move with `process_vm_readv`/`process_vm_writev`.
//!
//! Every access of an importer is counted in its slot of the export's control block
//! while the export is live; the exporter's stop or destroy revokes the export and waits
//! until no access is in flight (or the importer is gone), so that no byte is touched
//! afterwards.

use crate::error::{Error, ErrorCode, Result};
use crate::xproc::blob::{BLOB_LEN, Blob, Kind};
use crate::xproc::{self, LIVE, Page, Peer, REVOKED};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// One export of an mmap (or a sync event): its control page and descriptor.
pub(crate) struct Export {
    page: Arc<Page>,
    blob: Box<[u8; BLOB_LEN]>,
    kind: Kind,
    /// An RDMA export's listing for remote sides on the network.
    net: Option<super::net::NetExport>,
}

impl std::fmt::Debug for Export {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Export").field("kind", &self.kind).finish()
    }
}

/// The fields an export describes.
pub(crate) struct ExportSpec {
    pub(crate) kind: Kind,
    pub(crate) base: u64,
    pub(crate) len: u64,
    pub(crate) perms: u32,
    pub(crate) dev: u32,
    /// A sealed memfd holding the range, and the range's offset in it.
    pub(crate) shm: Option<(i32, u64)>,
    /// For an RDMA re-export of memory this process imported: the import (its bytes
    /// move through it, and the descriptor says that only RDMA reaches them).
    pub(crate) via: Option<Arc<RemoteMemory>>,
}

impl Export {
    /// Publishes a new export in a new control page.
    pub(crate) fn new(spec: ExportSpec) -> Result<Export> {
        Export::publish(Arc::new(Page::create("export")?), spec)
    }

    /// Publishes a new export in `page` (a sync event's own page).
    pub(crate) fn publish(page: Arc<Page>, spec: ExportSpec) -> Result<Export> {
        xproc::allow_peer_access();
        let token = xproc::token()?;
        let (pid, start) = xproc::me();
        let b = page.block();
        b.base.store(spec.base, Ordering::Relaxed);
        b.len.store(spec.len, Ordering::Relaxed);
        b.perms.store(spec.perms, Ordering::Relaxed);
        b.dev.store(spec.dev, Ordering::Relaxed);
        b.publish(spec.kind as u32, token, pid);
        let blob = Blob {
            kind: spec.kind,
            pid,
            uid: xproc::uid(),
            start,
            fd: page.fd(),
            perms: spec.perms,
            token,
            base: spec.base,
            len: spec.len,
            dev: spec.dev,
            shm_fd: spec.shm.map_or(-1, |s| s.0),
            shm_off: spec.shm.map_or(0, |s| s.1),
            relay: spec.via.is_some(),
        };
        let net = (spec.kind == Kind::MmapRdma).then(|| {
            super::net::NetExport::publish(
                super::net::NetKey {
                    token,
                    base: spec.base,
                    len: spec.len,
                    perms: crate::types::AccessFlags::from_bits_truncate(spec.perms),
                    dev: spec.dev,
                },
                spec.via.clone(),
            )
        });
        Ok(Export {
            page,
            blob: Box::new(blob.encode()),
            kind: spec.kind,
            net,
        })
    }

    /// The descriptor (stable while the export lives).
    pub(crate) fn blob(&self) -> &[u8] {
        &self.blob[..]
    }

    /// Ends the export: importers' later accesses fail, and this returns once no access
    /// is in flight (accesses of importers that have exited do not count).
    pub(crate) fn revoke(&self) {
        if let Some(n) = &self.net {
            n.revoke();
        }
        let b = self.page.block();
        if b.state.swap(REVOKED, Ordering::SeqCst) != LIVE {
            return;
        }
        // Sleepers on a sync event's value (in any process) see the revocation now.
        b.seq.fetch_add(1, Ordering::SeqCst);
        xproc::futex_wake(&b.seq);
        for s in &b.slots {
            loop {
                let n = s.inflight.load(Ordering::SeqCst);
                if n == 0 {
                    break;
                }
                let pid = s.pid.load(Ordering::Acquire);
                if pid == 0 || !xproc::running(pid, s.start.load(Ordering::Acquire)) {
                    break;
                }
                xproc::futex_wait(&s.inflight, n, Duration::from_millis(10));
            }
        }
    }
}

impl Drop for Export {
    fn drop(&mut self) {
        self.revoke();
    }
}

/// A live export opened by an importer: the exporter, the control page, and this
/// process's slot in it.
pub(crate) struct Import {
    pub(crate) blob: Blob,
    pub(crate) page: Page,
    pub(crate) peer: Peer,
    pub(crate) slot: usize,
}

impl std::fmt::Debug for Import {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Import")
            .field("kind", &self.blob.kind)
            .field("exporter", &self.peer.pid)
            .finish()
    }
}

fn no_live_export(kind: Kind) -> Error {
    Error::with_context(
        ErrorCode::NotFound,
        format!(
            "no live export stands behind this descriptor of {} (stopped, destroyed, or never made)",
            kind.what()
        ),
    )
}

impl Import {
    /// Checks a descriptor against the live export it names and takes a slot in it.
    pub(crate) fn open(bytes: &[u8], kinds: &[Kind]) -> Result<Import> {
        let blob = Blob::decode(bytes)?;
        if !kinds.contains(&blob.kind) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "the descriptor is of {}, not what is asked for",
                    blob.kind.what()
                ),
            ));
        }
        if blob.uid != xproc::uid() {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "the export belongs to another user",
            ));
        }
        let peer = Peer::find(blob.pid, blob.start)?;
        let page = Page::open(blob.pid, blob.fd)?;
        let b = page.block();
        if !b.matches(blob.kind as u32, blob.token) {
            return Err(no_live_export(blob.kind));
        }
        let fields_agree = b.owner.load(Ordering::Acquire) == blob.pid
            && b.base.load(Ordering::Acquire) == blob.base
            && b.len.load(Ordering::Acquire) == blob.len
            && b.perms.load(Ordering::Acquire) == blob.perms
            && b.dev.load(Ordering::Acquire) == blob.dev;
        if !fields_agree {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the descriptor does not agree with its export (forged or altered)",
            ));
        }
        if b.state.load(Ordering::SeqCst) != LIVE {
            return Err(no_live_export(blob.kind));
        }
        let (me, start) = xproc::me();
        if me == blob.pid {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "an export is imported by another process, not by its exporter",
            ));
        }
        let slot = b.claim(me, start).ok_or_else(|| {
            Error::with_context(
                ErrorCode::NoMemory,
                format!(
                    "the export already has {} importing processes",
                    xproc::MAX_IMPORTERS
                ),
            )
        })?;
        let imp = Import {
            blob,
            page,
            peer,
            slot,
        };
        if imp.page.block().state.load(Ordering::SeqCst) != LIVE {
            return Err(no_live_export(blob.kind));
        }
        Ok(imp)
    }

    /// `NotPermitted` unless the DPU device `info` owns the representor of the exporting
    /// host device (the guide's matching table).
    pub(crate) fn check_represented_by(&self, info: &crate::device::DevInfo) -> Result<()> {
        let host = self.blob.dev;
        if info
            .props()
            .reps
            .iter()
            .any(|r| super::pci_code(&r.pci_addr) == host)
        {
            return Ok(());
        }
        Err(Error::with_context(
            ErrorCode::NotPermitted,
            format!(
                "device {} has no representor of the exporting host device {}",
                info.pci_addr(),
                super::mmap::pci_text(host)
            ),
        ))
    }

    /// Counts one access in flight while the export is live and the exporter runs.
    pub(crate) fn enter(&self) -> Result<Access<'_>> {
        let b = self.page.block();
        let s = &b.slots[self.slot];
        s.inflight.fetch_add(1, Ordering::SeqCst);
        let access = Access { imp: self };
        if b.state.load(Ordering::SeqCst) != LIVE {
            return Err(Error::with_context(
                ErrorCode::ConnectionAborted,
                format!(
                    "the exporter stopped or destroyed {} (export revoked)",
                    self.blob.kind.what()
                ),
            ));
        }
        if !self.peer.alive_lately() {
            return Err(exporter_gone(self.peer.pid));
        }
        Ok(access)
    }
}

pub(crate) fn exporter_gone(pid: u32) -> Error {
    Error::with_context(
        ErrorCode::ConnectionReset,
        format!("the exporting process {pid} has exited"),
    )
}

impl Drop for Import {
    fn drop(&mut self) {
        let s = &self.page.block().slots[self.slot];
        s.bell.store(-1, Ordering::Release);
        s.inflight.store(0, Ordering::SeqCst);
        xproc::futex_wake(&s.inflight);
        let _ = s
            .pid
            .compare_exchange(xproc::me().0, 0, Ordering::AcqRel, Ordering::Relaxed);
    }
}

/// One access in flight (see [`Import::enter`]).
pub(crate) struct Access<'a> {
    imp: &'a Import,
}

impl Drop for Access<'_> {
    fn drop(&mut self) {
        let b = self.imp.page.block();
        let s = &b.slots[self.imp.slot];
        s.inflight.fetch_sub(1, Ordering::SeqCst);
        if b.state.load(Ordering::SeqCst) != LIVE {
            xproc::futex_wake(&s.inflight);
        }
    }
}

/// The memory of an mmap created from an export: a range of the exporter's address
/// space. Its addresses are the exporter's; they are never dereferenced here.
#[derive(Debug)]
pub struct RemoteMemory {
    /// The export opened on this machine; `None` for an RDMA export of another machine
    /// (or another user), which only RDMA tasks reach.
    imp: Option<Import>,
    blob: Blob,
    /// The exporter's range mapped here, when it lives in shared memory (a
    /// [`SharedMemory`](super::SharedMemory) region): jobs copy at memory speed.
    view: Option<View>,
}

/// A mapping of the exporter's shared memory.
enum View {
    Read(memmap2::Mmap),
    Write(memmap2::MmapMut),
}

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            View::Read(_) => "View::Read",
            View::Write(_) => "View::Write",
        })
    }
}

impl View {
    fn ptr(&self) -> *mut u8 {
        match self {
            View::Read(m) => m.as_ptr() as *mut u8,
            View::Write(m) => m.as_ptr() as *mut u8,
        }
    }
}

/// Most iovecs one `process_vm_*` call takes here.
const IOV_BATCH: usize = 64;

impl RemoteMemory {
    pub(crate) fn new(imp: Import) -> Result<RemoteMemory> {
        let blob = imp.blob;
        let mut r = RemoteMemory {
            imp: Some(imp),
            blob,
            view: None,
        };
        let b = blob;
        if b.shm_fd >= 0 {
            let write = r.writable();
            let file = xproc::open_peer_file(b.pid, b.shm_fd, b.shm_off + b.len, write)?;
            let mut o = memmap2::MmapOptions::new();
            o.offset(b.shm_off).len(b.len as usize);
            let map_err = |e: std::io::Error| {
                Error::with_context(ErrorCode::NoMemory, format!("mapping the export: {e}"))
            };
            // SAFETY: a sealed memfd of the exporter (it cannot shrink under the mapping);
            // the bytes are only copied in and out through raw pointers while an access is
            // counted in flight, never handed out as references.
            r.view = Some(unsafe {
                if write {
                    View::Write(o.map_mut(&file).map_err(map_err)?)
                } else {
                    View::Read(o.map(&file).map_err(map_err)?)
                }
            });
        }
        Ok(r)
    }

    /// Whether the exporter's range is mapped here (shared memory) rather than reached
    /// through the kernel's cross-process copies.
    pub fn is_mapped(&self) -> bool {
        self.view.is_some()
    }

    /// The memory of an RDMA export whose exporter runs elsewhere (another machine, or
    /// a user or process namespace this one cannot reach): only RDMA tasks, which the
    /// exporter's side checks, move its bytes.
    pub(crate) fn network(blob: Blob) -> RemoteMemory {
        RemoteMemory {
            imp: None,
            blob,
            view: None,
        }
    }

    /// What RDMA tasks name this memory by, for an mmap exported with
    /// `doca_mmap_export_rdma` (`None` for a DPU export).
    pub fn net_key(&self) -> Option<super::net::NetKey> {
        (self.blob.kind == Kind::MmapRdma).then(|| super::net::NetKey {
            token: self.blob.token,
            base: self.blob.base,
            len: self.blob.len,
            perms: crate::types::AccessFlags::from_bits_truncate(self.blob.perms),
            dev: self.blob.dev,
        })
    }

    /// The `DOCA_ACCESS_*` bits the exporter granted.
    pub fn perms(&self) -> u32 {
        self.blob.perms
    }

    /// Whether this process reaches the exporter's memory itself (same machine and
    /// user), so that DMA jobs can move its bytes; otherwise only RDMA tasks can.
    pub fn is_local(&self) -> bool {
        self.imp.is_some()
    }

    /// Start of the exported range, in the exporter's address space.
    pub fn base(&self) -> usize {
        self.blob.base as usize
    }

    /// Length of the exported range.
    pub fn len(&self) -> usize {
        self.blob.len as usize
    }

    /// Whether the range is empty (never, for a live export).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The exporting process (0 when it runs elsewhere).
    pub fn exporter_pid(&self) -> u32 {
        self.imp.as_ref().map_or(0, |i| i.peer.pid)
    }

    /// Whether the export lets importers write (`DPU_READ_WRITE` for a DPU export,
    /// `RDMA_WRITE` for an RDMA one).
    pub fn writable(&self) -> bool {
        let p = crate::types::AccessFlags::from_bits_truncate(self.blob.perms);
        match self.blob.kind {
            Kind::MmapDpu => p.contains(crate::types::AccessFlags::DPU_READ_WRITE),
            _ => p.contains(crate::types::AccessFlags::RDMA_WRITE),
        }
    }

    /// The error of a write into an export that allows reads only.
    pub fn read_only(&self) -> Error {
        Error::with_context(
            ErrorCode::NotPermitted,
            "the exporter allows reads only (export with DOCA_ACCESS_DPU_READ_WRITE or DOCA_ACCESS_RDMA_WRITE to allow writes)",
        )
    }

    fn check_range(&self, remote: usize, n: usize) -> Result<()> {
        let inside = remote >= self.base()
            && remote
                .checked_add(n)
                .is_some_and(|e| e <= self.base() + self.len());
        if inside {
            Ok(())
        } else {
            Err(Error::with_context(
                ErrorCode::InvalidValue,
                "byte range lies outside the exported memory range",
            ))
        }
    }

    /// Copies `n` bytes at `remote` (exporter's address) into `local`.
    ///
    /// # Safety
    /// `local` must be valid for writes of `n` bytes, not accessed by anything else
    /// during the call.
    pub unsafe fn read_raw(&self, remote: usize, local: *mut u8, n: usize) -> Result<()> {
        // SAFETY: as the caller promised.
        unsafe { self.transfer(remote, local, n, false) }
    }

    /// Copies `n` bytes from `local` to `remote` (exporter's address).
    ///
    /// # Safety
    /// `local` must be valid for reads of `n` bytes, not written by anything else during
    /// the call.
    pub unsafe fn write_raw(&self, remote: usize, local: *const u8, n: usize) -> Result<()> {
        // SAFETY: as the caller promised; a write only reads `local`.
        unsafe { self.transfer(remote, local as *mut u8, n, true) }
    }

    /// # Safety
    /// `local` is valid for `n` bytes (writes when reading from the remote side).
    unsafe fn transfer(&self, remote: usize, local: *mut u8, n: usize, write: bool) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.check_range(remote, n)?;
        if write && !self.writable() {
            return Err(self.read_only());
        }
        let Some(imp) = &self.imp else {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "this memory was exported for RDMA by a process this one cannot reach (another machine or user): only RDMA tasks move its bytes",
            ));
        };
        let _access = imp.enter()?;
        if let Some(v) = &self.view {
            // SAFETY: [remote, remote + n) lies in the exported range (checked), which the
            // view maps whole; `local` is valid as the caller promised; the access is
            // counted, so the export is live; memmove tolerates any overlap.
            unsafe {
                let at = v.ptr().add(remote - self.base());
                if write {
                    std::ptr::copy(local as *const u8, at, n);
                } else {
                    std::ptr::copy(at as *const u8, local, n);
                }
            }
            return Ok(());
        }
        let mut done = 0usize;
        while done < n {
            // Pieces, so that one call never exceeds what the kernel moves at once.
            let mut liov = [libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            }; IOV_BATCH];
            let mut riov = liov;
            let piece = 1usize << 30;
            let mut k = 0;
            let mut off = done;
            while k < IOV_BATCH && off < n {
                let m = (n - off).min(piece);
                // SAFETY: off + m <= n keeps the local pointer inside the caller's range.
                liov[k].iov_base = unsafe { local.add(off) } as *mut libc::c_void;
                liov[k].iov_len = m;
                riov[k].iov_base = (remote + off) as *mut libc::c_void;
                riov[k].iov_len = m;
                off += m;
                k += 1;
            }
            // SAFETY: the local iovecs lie inside the caller's buffer (valid as promised);
            // the remote ones are in the exporter's address space, which the kernel checks;
            // the access is counted in flight, so the exporter has not revoked the export
            // and waits for it before its memory can go.
            let r = unsafe {
                if write {
                    libc::process_vm_writev(
                        imp.peer.pid as libc::pid_t,
                        liov.as_ptr(),
                        k as libc::c_ulong,
                        riov.as_ptr(),
                        k as libc::c_ulong,
                        0,
                    )
                } else {
                    libc::process_vm_readv(
                        imp.peer.pid as libc::pid_t,
                        liov.as_ptr(),
                        k as libc::c_ulong,
                        riov.as_ptr(),
                        k as libc::c_ulong,
                        0,
                    )
                }
            };
            if r <= 0 {
                let e = std::io::Error::last_os_error();
                if r < 0 && e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                if !imp.peer.alive() || e.raw_os_error() == Some(libc::ESRCH) {
                    return Err(exporter_gone(imp.peer.pid));
                }
                return Err(Error::with_context(
                    ErrorCode::IoFailed,
                    format!(
                        "cannot {} the exporter's memory: {e}",
                        if write { "write" } else { "read" }
                    ),
                ));
            }
            done += r as usize;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live() -> Export {
        Export::new(ExportSpec {
            kind: Kind::MmapRdma,
            base: 0x1000,
            len: 4096,
            perms: crate::types::AccessFlags::RDMA_READ.bits(),
            dev: 0,
            shm: None,
            via: None,
        })
        .unwrap()
    }

    #[test]
    fn descriptors_of_another_user_a_dead_process_or_a_forged_token_are_refused() {
        let e = live();
        let good = Blob::decode(e.blob()).unwrap();
        let code = |b: Blob| {
            Import::open(&b.encode(), &[Kind::MmapRdma])
                .unwrap_err()
                .code()
        };
        // This process's own export: refused as such (an importer is another process).
        assert_eq!(code(good), ErrorCode::NotSupported);
        assert_eq!(
            code(Blob {
                uid: good.uid ^ 1,
                ..good
            }),
            ErrorCode::NotPermitted
        );
        assert_eq!(
            code(Blob {
                start: good.start + 1,
                ..good
            }),
            ErrorCode::NotFound
        );
        assert_eq!(
            code(Blob {
                pid: i32::MAX as u32 - 7,
                ..good
            }),
            ErrorCode::NotFound
        );
        assert_eq!(
            code(Blob {
                token: [1, 2],
                ..good
            }),
            ErrorCode::NotFound
        );
        assert_eq!(code(Blob { len: 8192, ..good }), ErrorCode::InvalidValue);
        assert_eq!(code(Blob { fd: 0, ..good }), ErrorCode::InvalidValue);
        assert_eq!(
            code(Blob {
                kind: Kind::MmapDpu,
                ..good
            }),
            ErrorCode::InvalidValue
        );
        // Revoked: nothing lives behind it any more.
        e.revoke();
        assert_eq!(code(good), ErrorCode::NotFound);
    }

    #[test]
    fn forged_json_descriptors_of_doca_1x_are_refused() {
        let e = live();
        let text = crate::xproc::blob::desc_to_json(e.blob()).unwrap();
        let good = Blob::decode(e.blob()).unwrap();
        let open = |t: &str| {
            let bytes = crate::xproc::blob::desc_from_json(t.as_bytes()).unwrap();
            Import::open(&bytes, &[Kind::MmapRdma]).unwrap_err().code()
        };
        // Unaltered, it reaches the export (refused only as this process's own).
        assert_eq!(open(&text), ErrorCode::NotSupported);
        let moved = text.replace(
            &format!("\"addr\":{}", good.base),
            &format!("\"addr\":{}", good.base + 4096),
        );
        assert_eq!(open(&moved), ErrorCode::InvalidValue);
        let longer = text.replace(
            &format!("\"len\":{}", good.len),
            &format!("\"len\":{}", good.len + 1),
        );
        assert_eq!(open(&longer), ErrorCode::InvalidValue);
        let t0 = format!("{:016x}", good.token[0]);
        let other = format!("{:016x}", good.token[0] ^ 1);
        assert_eq!(open(&text.replace(&t0, &other)), ErrorCode::NotFound);
    }
}
