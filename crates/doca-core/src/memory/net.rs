//! Memory exported for RDMA as the network sees it: every mmap exported with
//! `doca_mmap_export_rdma` is listed here under its export's random token, with its
//! range, permissions and device. A remote access names a token and a range; the
//! target's RDMA engine checks it here ([`access`]) before a byte moves, and counts it
//! in flight until the bytes have moved. Revoking the export (the mmap stops or goes)
//! takes it off the list and waits for the accesses in flight, so that none touches the
//! memory afterwards.

use crate::error::{Error, ErrorCode, Result};
use crate::types::AccessFlags;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// What a remote side needs to name an exported range: the export's token, the range
/// (in the exporter's address space), the permissions granted and the exporting device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetKey {
    /// The export's 128 random bits.
    pub token: [u64; 2],
    /// Start of the range, an address of the exporter.
    pub base: u64,
    /// Length of the range in bytes.
    pub len: u64,
    /// `DOCA_ACCESS_*` flags the exporter granted.
    pub perms: AccessFlags,
    /// The exporting device's PCI address code.
    pub dev: u32,
}

impl NetKey {
    /// Whether `[addr, addr + n)` lies inside the range.
    pub fn covers(&self, addr: u64, n: u64) -> bool {
        addr >= self.base
            && addr
                .checked_add(n)
                .is_some_and(|e| e <= self.base.saturating_add(self.len))
    }
}

/// The code a device's exports carry (its PCI address), which a serving RDMA context
/// compares with its own device's.
pub fn dev_code(dev: &crate::Dev) -> u32 {
    super::pci_code(&dev.as_devinfo().pci_addr())
}

struct Entry {
    key: NetKey,
    live: AtomicBool,
    inflight: AtomicU32,
    /// For a range this process imported and re-exports (host memory a DPU process
    /// serves): the import its bytes move through.
    via: Option<Arc<super::export::RemoteMemory>>,
}

fn table() -> &'static Mutex<HashMap<[u64; 2], Arc<Entry>>> {
    static T: OnceLock<Mutex<HashMap<[u64; 2], Arc<Entry>>>> = OnceLock::new();
    T.get_or_init(|| Mutex::new(HashMap::new()))
}

fn lock() -> std::sync::MutexGuard<'static, HashMap<[u64; 2], Arc<Entry>>> {
    table().lock().unwrap_or_else(|e| e.into_inner())
}

/// A range listed for remote access; dropping it revokes the listing (see
/// [`NetExport::revoke`]).
pub(crate) struct NetExport {
    entry: Arc<Entry>,
}

impl std::fmt::Debug for NetExport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetExport")
            .field("len", &self.entry.key.len)
            .finish()
    }
}

impl NetExport {
    /// Lists `key` for remote access; `via`: the import its bytes move through, for a
    /// re-export of imported memory (its addresses are the original exporter's).
    pub(crate) fn publish(key: NetKey, via: Option<Arc<super::export::RemoteMemory>>) -> NetExport {
        let entry = Arc::new(Entry {
            key,
            live: AtomicBool::new(true),
            inflight: AtomicU32::new(0),
            via,
        });
        lock().insert(key.token, Arc::clone(&entry));
        NetExport { entry }
    }

    /// Takes the range off the list and returns once no remote access to it is in
    /// flight: later accesses are refused before they touch a byte.
    pub(crate) fn revoke(&self) {
        if !self.entry.live.swap(false, Ordering::SeqCst) {
            return;
        }
        {
            let mut t = lock();
            if t.get(&self.entry.key.token)
                .is_some_and(|e| Arc::ptr_eq(e, &self.entry))
            {
                t.remove(&self.entry.key.token);
            }
        }
        // Accesses in flight are copies the RDMA engine runs on its own thread: they end
        // on their own (a transfer whose peer dies fails), so waiting is bounded by them.
        let mut pause = Duration::from_micros(10);
        while self.entry.inflight.load(Ordering::SeqCst) != 0 {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }
}

impl Drop for NetExport {
    fn drop(&mut self) {
        self.revoke();
    }
}

/// One remote access in flight to a listed range: the range stays valid (its mmap
/// cannot finish stopping) until this is dropped.
pub struct NetAccess {
    entry: Arc<Entry>,
    addr: u64,
    len: u64,
}

impl std::fmt::Debug for NetAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetAccess")
            .field("addr", &format_args!("{:#x}", self.addr))
            .field("len", &self.len)
            .finish()
    }
}

impl NetAccess {
    /// The first byte of the access, an address of this process, valid for the
    /// access's length (reads, and writes when the access asked for them) while `self`
    /// lives; `None` for relayed memory (another process's, imported here), whose bytes
    /// move only with [`copy_out`](NetAccess::copy_out) and
    /// [`copy_in`](NetAccess::copy_in).
    pub fn local_ptr(&self) -> Option<*mut u8> {
        self.entry
            .via
            .is_none()
            .then_some(self.addr as usize as *mut u8)
    }

    /// Copies `n` bytes at `off` of the access into `dst`.
    ///
    /// # Safety
    /// `dst` is valid for writes of `n` bytes and nothing else touches them meanwhile.
    pub unsafe fn copy_out(&self, off: usize, dst: *mut u8, n: usize) -> Result<()> {
        self.check_span(off, n)?;
        let at = self.addr as usize + off;
        match &self.entry.via {
            // SAFETY: the caller's contract for `dst`.
            Some(r) => unsafe { r.read_raw(at, dst, n) },
            None => {
                // SAFETY: [at, at + n) lies in the access (checked), live exported
                // memory while the access is counted; `dst` as the caller promised.
                unsafe { std::ptr::copy(at as *const u8, dst, n) };
                Ok(())
            }
        }
    }

    /// Copies `n` bytes from `src` to `off` of the access (which asked for writes).
    ///
    /// # Safety
    /// `src` is valid for reads of `n` bytes.
    pub unsafe fn copy_in(&self, off: usize, src: *const u8, n: usize) -> Result<()> {
        self.check_span(off, n)?;
        let at = self.addr as usize + off;
        match &self.entry.via {
            // SAFETY: the caller's contract for `src`.
            Some(r) => unsafe { r.write_raw(at, src, n) },
            None => {
                // SAFETY: as in `copy_out`, the access asked for writes.
                unsafe { std::ptr::copy(src, at as *mut u8, n) };
                Ok(())
            }
        }
    }

    fn check_span(&self, off: usize, n: usize) -> Result<()> {
        if off.checked_add(n).is_some_and(|e| e as u64 <= self.len) {
            Ok(())
        } else {
            Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the copy runs past the checked access",
            ))
        }
    }

    /// Length of the access in bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the access covers no byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for NetAccess {
    fn drop(&mut self) {
        self.entry.inflight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Checks a remote access against the listing: the token names a live export of device
/// `dev`, `[addr, addr + len)` lies inside it, and the export grants `need`. The access
/// then counts in flight until the returned guard drops.
///
/// The errors say what was wrong in words for the remote side's log:
/// `NotFound` (no live export has this token: never made, forged, or revoked),
/// `NotPermitted` (another device, or a permission the exporter did not grant),
/// `InvalidValue` (outside the range).
pub fn access(
    token: [u64; 2],
    addr: u64,
    len: u64,
    need: AccessFlags,
    dev: u32,
) -> Result<NetAccess> {
    let entry = lock().get(&token).cloned().ok_or_else(|| {
        Error::with_context(
            ErrorCode::NotFound,
            "no live RDMA export has this key (never exported, forged, or revoked by a stop or destroy of its mmap)",
        )
    })?;
    let k = entry.key;
    if k.dev != dev {
        return Err(Error::with_context(
            ErrorCode::NotPermitted,
            "the memory was exported for RDMA on another device than the one serving this connection",
        ));
    }
    if !k.perms.contains(need) {
        return Err(Error::with_context(
            ErrorCode::NotPermitted,
            format!(
                "the exporter did not grant {} on this memory",
                if need.contains(AccessFlags::RDMA_ATOMIC) {
                    "DOCA_ACCESS_RDMA_ATOMIC"
                } else if need.contains(AccessFlags::RDMA_WRITE) {
                    "DOCA_ACCESS_RDMA_WRITE"
                } else {
                    "DOCA_ACCESS_RDMA_READ"
                }
            ),
        ));
    }
    if !k.covers(addr, len) {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "{len} bytes at {addr:#x} lie outside the exported range ({} bytes at {:#x})",
                k.len, k.base
            ),
        ));
    }
    entry.inflight.fetch_add(1, Ordering::SeqCst);
    let a = NetAccess { entry, addr, len };
    if !a.entry.live.load(Ordering::SeqCst) {
        return Err(Error::with_context(
            ErrorCode::NotFound,
            "the RDMA export was revoked (its mmap stopped or was destroyed)",
        ));
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(token: [u64; 2], buf: &[u8], perms: AccessFlags) -> NetKey {
        NetKey {
            token,
            base: buf.as_ptr() as u64,
            len: buf.len() as u64,
            perms,
            dev: 7,
        }
    }

    #[test]
    fn accesses_are_checked_and_revocation_waits_for_them() {
        let buf = vec![0u8; 4096];
        let k = key(
            [11, 12],
            &buf,
            AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE,
        );
        let x = NetExport::publish(k, None);
        let a = access(k.token, k.base + 100, 10, AccessFlags::RDMA_WRITE, 7).unwrap();
        assert_eq!(a.len(), 10);
        let code = |t, at, n, need, dev| access(t, at, n, need, dev).unwrap_err().code();
        assert_eq!(
            code([11, 13], k.base, 1, AccessFlags::RDMA_READ, 7),
            ErrorCode::NotFound
        );
        assert_eq!(
            code(k.token, k.base, 1, AccessFlags::RDMA_ATOMIC, 7),
            ErrorCode::NotPermitted
        );
        assert_eq!(
            code(k.token, k.base, 1, AccessFlags::RDMA_READ, 8),
            ErrorCode::NotPermitted
        );
        assert_eq!(
            code(k.token, k.base + 4090, 7, AccessFlags::RDMA_READ, 7),
            ErrorCode::InvalidValue
        );
        assert_eq!(
            code(k.token, u64::MAX - 2, 7, AccessFlags::RDMA_READ, 7),
            ErrorCode::InvalidValue
        );
        let done = Arc::new(AtomicBool::new(false));
        let d = Arc::clone(&done);
        let t = std::thread::spawn(move || {
            x.revoke();
            d.store(true, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(30));
        assert!(
            !done.load(Ordering::SeqCst),
            "revocation waits for the access"
        );
        drop(a);
        t.join().unwrap();
        assert_eq!(
            code(k.token, k.base, 1, AccessFlags::RDMA_READ, 7),
            ErrorCode::NotFound
        );
    }
}
