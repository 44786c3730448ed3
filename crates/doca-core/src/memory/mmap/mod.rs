//! `doca_mmap`: a memory range, the devices allowed to reach it, and their permissions.

use super::export::{Export, ExportSpec, Import, RemoteMemory};
use crate::device::{Capability, Dev, Role};
use crate::error::{Error, ErrorCode, Result};
use crate::lock;
use crate::types::{AccessFlags, Data};
use crate::xproc::blob::Kind;

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Default `max_num_devices` of a new mmap.
pub const DEFAULT_MAX_NUM_DEVICES: u32 = 16;

/// Memory an mmap can own: anything that is one contiguous, writable byte range that
/// stays put while the owner lives (`Vec<u8>`, `Box<[u8]>`, a file mapping, ...).
///
/// # Safety
///
/// Buffers, jobs and engine threads read and write the range through raw pointers on
/// the strength of this trait, so an implementation must uphold, for as long as the
/// value lives (including after it is moved):
///
/// - `as_mut_ptr()` returns the start of `len()` bytes that are allocated, initialized,
///   readable and writable, and not reachable through any other path (no `&` or `&mut`
///   the implementation hands out elsewhere);
/// - both return the same values on every call, and moving the value does not move
///   the bytes (heap and mapped memory qualify; an inline array does not);
/// - the bytes stay valid until the value is dropped.
///
/// A safe `impl` is refused by the compiler:
///
/// ```compile_fail,E0200
/// struct Bogus;
/// impl doca_core::MemoryRegion for Bogus {
///     fn as_mut_ptr(&mut self) -> *mut u8 { 8 as *mut u8 }
///     fn len(&self) -> usize { 1 << 40 }
/// }
/// ```
pub unsafe trait MemoryRegion: Send + 'static {
    /// Start of the range. Must stay the same while `self` is not moved-from or dropped
    /// (moving the owner must not move the bytes, as for heap and mapped memory).
    fn as_mut_ptr(&mut self) -> *mut u8;
    /// Length in bytes.
    fn len(&self) -> usize;
    /// Whether the range is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The shared file that holds the range, and the range's offset in it, for memory
    /// another process can map (see [`SharedMemory`]). `None` for private memory.
    fn shared_file(&self) -> Option<(std::os::fd::RawFd, u64)> {
        None
    }
}

/// Memory another process can map: a sealed memfd, mapped shared. An mmap over it that
/// is exported is mapped by its importers, whose jobs then copy at memory speed (other
/// memory is reached through the kernel's cross-process copies, about half as fast).
///
/// ```
/// use doca_core::{Mmap, SharedMemory};
/// let mut mmap = Mmap::new();
/// mmap.set_memory(SharedMemory::new(1 << 20)?)?;
/// # Ok::<(), doca_core::Error>(())
/// ```
pub struct SharedMemory {
    map: memmap2::MmapMut,
    file: std::fs::File,
}

impl fmt::Debug for SharedMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedMemory")
            .field("len", &self.map.len())
            .finish()
    }
}

impl SharedMemory {
    /// `len` zeroed bytes (at least 1).
    pub fn new(len: usize) -> Result<SharedMemory> {
        if len == 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "shared memory length must be greater than 0",
            ));
        }
        let file = crate::xproc::sealed_memfd("shared memory", len)?;
        // SAFETY: a new memfd of this process, sealed against shrinking; the mapping is
        // only reached through the mmap that owns this region.
        let map = unsafe { memmap2::MmapOptions::new().len(len).map_mut(&file) }.map_err(|e| {
            Error::with_context(ErrorCode::NoMemory, format!("mapping shared memory: {e}"))
        })?;
        Ok(SharedMemory { map, file })
    }
}

// SAFETY: a shared mapping stays at its address until it is unmapped on drop; its length
// is fixed (the memfd is sealed).
unsafe impl MemoryRegion for SharedMemory {
    fn as_mut_ptr(&mut self) -> *mut u8 {
        <[u8]>::as_mut_ptr(&mut self.map)
    }
    fn len(&self) -> usize {
        self.map.len()
    }
    fn shared_file(&self) -> Option<(std::os::fd::RawFd, u64)> {
        use std::os::fd::AsRawFd;
        Some((self.file.as_raw_fd(), 0))
    }
}

// SAFETY: a Vec's heap buffer does not move when the Vec does, is initialized over len
// and stays put while the Vec is not modified (the mmap owns it and never resizes it).
unsafe impl MemoryRegion for Vec<u8> {
    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.as_mut_slice().as_mut_ptr()
    }
    fn len(&self) -> usize {
        Vec::len(self)
    }
}

// SAFETY: a boxed slice's heap bytes do not move when the Box does.
unsafe impl MemoryRegion for Box<[u8]> {
    fn as_mut_ptr(&mut self) -> *mut u8 {
        <[u8]>::as_mut_ptr(self)
    }
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
}

// SAFETY: a writable mapping stays at its address until it is unmapped on drop.
unsafe impl MemoryRegion for memmap2::MmapMut {
    fn as_mut_ptr(&mut self) -> *mut u8 {
        <[u8]>::as_mut_ptr(self)
    }
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
}

enum Memory {
    /// Owned memory, kept here until the mmap's shared state is dropped.
    Owned {
        region: Box<dyn MemoryRegion>,
    },
    Foreign,
    /// Another process's memory (an mmap created from an export).
    Remote,
}

type FreeCb = Box<dyn FnOnce(*mut u8, usize) + Send>;

/// A memory range populated into a chunked mmap after its first.
struct Chunk {
    base: usize,
    len: usize,
    free_cb: Option<FreeCb>,
}

pub(crate) struct MmapState {
    memory: Option<Memory>,
    pub(crate) base: usize,
    pub(crate) len: usize,
    pub(crate) permissions: AccessFlags,
    max_devices: u32,
    devices: Vec<Dev>,
    free_cb: Option<FreeCb>,
    pub(crate) started: bool,
    /// Live exports while started: to the DPU and for RDMA.
    exports: [Option<(Export, Arc<[u8]>)>; 2],
    from_export: bool,
    /// Made by [`Mmap::chunked`]: started empty, then populated with chunks (the first
    /// is `base`/`len`, the others `chunks`), devices added while started.
    chunked: bool,
    max_chunks: u32,
    chunks: Vec<Chunk>,
    /// The 1.x name given at creation.
    name: String,
    /// Started at least once (a chunked mmap's configuration is fixed from then on).
    ever_started: bool,
    /// Exported at least once (DOCA 1.x exports a map once).
    ever_exported: bool,
    /// `doca_mmap_enable_thread_safety`: destroy goes ahead while buffers point into
    /// the mmap (they keep its memory until the last one is released).
    thread_safe: bool,
}

impl MmapState {
    pub(crate) fn has_device(&self, dev: &Dev) -> bool {
        self.devices.contains(dev)
    }

    /// The memory range `[lo, hi)` of the mmap that holds `[addr, end)`, if one does.
    pub(crate) fn range_holding(&self, addr: usize, end: usize) -> Option<(usize, usize)> {
        if self.memory.is_some() && addr >= self.base && end <= self.base + self.len {
            return Some((self.base, self.base + self.len));
        }
        self.chunks
            .iter()
            .find(|c| addr >= c.base && end <= c.base + c.len)
            .map(|c| (c.base, c.base + c.len))
    }

    fn num_chunks(&self) -> u32 {
        u32::from(self.memory.is_some()) + self.chunks.len() as u32
    }
}

/// State shared by an mmap handle and the buffers that point into it.
pub(crate) struct MmapShared {
    state: Mutex<MmapState>,
    /// Serializes byte access through the safe API (buffers and the mmap handle).
    pub(crate) io: super::io::RangeLock,
    pub(crate) num_bufs: AtomicU32,
    user_data: std::sync::atomic::AtomicU64,
    /// Snapshot taken at start, read by jobs without the state lock: the configuration
    /// cannot change while started, and buffers exist only while started.
    pub(crate) frozen: Frozen,
    /// The exporter's memory, for an mmap created from an export.
    pub(crate) remote: Option<Arc<RemoteMemory>>,
}

/// Most devices whose identities the start snapshot holds; mmaps with more devices are
/// asked under the state lock.
const FROZEN_DEVS: usize = 4;

#[derive(Default)]
pub(crate) struct Frozen {
    permissions: AtomicU32,
    ndevs: AtomicUsize,
    devs: [AtomicUsize; FROZEN_DEVS],
}

impl Frozen {
    fn store(&self, st: &MmapState) {
        self.permissions
            .store(st.permissions.bits(), Ordering::Release);
        for (slot, d) in self.devs.iter().zip(&st.devices) {
            slot.store(d.id(), Ordering::Release);
        }
        self.ndevs.store(st.devices.len(), Ordering::Release);
    }
}

impl MmapShared {
    #[inline]
    /// Permissions as of the last start.
    pub(crate) fn started_permissions(&self) -> AccessFlags {
        AccessFlags::from_bits_truncate(self.frozen.permissions.load(Ordering::Acquire))
    }

    #[inline]
    /// Whether `dev` was added, as of the last start.
    pub(crate) fn started_has_device(&self, dev: &Dev) -> bool {
        let n = self.frozen.ndevs.load(Ordering::Acquire);
        if n > FROZEN_DEVS {
            return self.state().has_device(dev);
        }
        let id = dev.id();
        self.frozen.devs[..n]
            .iter()
            .any(|d| d.load(Ordering::Acquire) == id)
    }
}

// SAFETY: the raw memory range is only touched under `io` or by code that owns the bytes
// exclusively (`memory_mut` with no buffers); every other field is behind a Mutex or atomic.
unsafe impl Send for MmapShared {}
// SAFETY: as above: all shared access is synchronized.
unsafe impl Sync for MmapShared {}

impl MmapShared {
    pub(crate) fn state(&self) -> MutexGuard<'_, MmapState> {
        lock(&self.state)
    }
}

impl Drop for MmapShared {
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        // No importer touches the memory once this returns.
        st.exports = Default::default();
        if st.memory.is_some()
            && let Some(cb) = st.free_cb.take()
        {
            cb(st.base as *mut u8, st.len);
        }
        for c in std::mem::take(&mut st.chunks) {
            if let Some(cb) = c.free_cb {
                cb(c.base as *mut u8, c.len);
            }
        }
        st.memory = None;
    }
}

/// A memory map (`struct doca_mmap`): one memory range, the devices that may reach it and
/// their access permissions. Create, configure, [`start`](Mmap::start), then allocate
/// buffers from it through an inventory.
///
/// Used by one thread at a time (`Send`, not `Sync`). Buffers keep the memory alive: it is
/// released (and the free callback called, once) when the mmap and every buffer into it
/// are gone.
pub struct Mmap {
    pub(crate) shared: Arc<MmapShared>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl fmt::Debug for Mmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.shared.state();
        f.debug_struct("Mmap")
            .field("base", &format_args!("{:#x}", st.base))
            .field("len", &st.len)
            .field("started", &st.started)
            .field("permissions", &st.permissions)
            .field("devices", &st.devices.len())
            .finish()
    }
}

impl Mmap {
    /// `doca_mmap_create` with zero user data. As in DOCA, a new mmap lets the local
    /// device read and write its memory ([`AccessFlags::LOCAL_READ_WRITE`]) until
    /// [`set_permissions`](Mmap::set_permissions) says otherwise.
    pub fn new() -> Mmap {
        Mmap::with_user_data(Data::default())
    }

    /// `doca_mmap_create`.
    pub fn with_user_data(user_data: Data) -> Mmap {
        Mmap::make(user_data, false)
    }

    /// A memory map of the 1.x generation (`doca_mmap_create(name, ...)`): it starts
    /// with no memory; once started, memory ranges are added one by one with
    /// [`populate`](Mmap::populate) (up to [`max_num_chunks`](Mmap::max_num_chunks),
    /// 1 unless set before start) and devices are added and removed. Buffers may point
    /// into any one chunk. Local read-write and DPU read-write access.
    pub fn chunked(user_data: Data) -> Mmap {
        let m = Mmap::make(user_data, true);
        m.shared.state().permissions = AccessFlags::LOCAL_READ_WRITE | AccessFlags::DPU_READ_WRITE;
        m
    }

    fn make(user_data: Data, chunked: bool) -> Mmap {
        Mmap {
            shared: Arc::new(MmapShared {
                state: Mutex::new(MmapState {
                    memory: None,
                    base: 0,
                    len: 0,
                    permissions: AccessFlags::LOCAL_READ_WRITE,
                    max_devices: DEFAULT_MAX_NUM_DEVICES,
                    devices: Vec::new(),
                    free_cb: None,
                    started: false,
                    exports: Default::default(),
                    from_export: false,
                    chunked,
                    max_chunks: 1,
                    chunks: Vec::new(),
                    name: String::new(),
                    ever_started: false,
                    ever_exported: false,
                    thread_safe: false,
                }),
                io: super::io::RangeLock::default(),
                num_bufs: AtomicU32::new(0),
                user_data: std::sync::atomic::AtomicU64::new(user_data.0),
                frozen: Frozen::default(),
                remote: None,
            }),
            _not_sync: PhantomData,
        }
    }

    /// The state, for a change of devices: before start, or any time for a chunked
    /// mmap that is not exported; the caller refreshes the start snapshot.
    fn devices_editable(&self) -> Result<MutexGuard<'_, MmapState>> {
        let chunked = self.shared.state().chunked;
        if !chunked {
            return self.configurable();
        }
        let st = self.shared.state();
        if st.from_export || st.exports.iter().any(Option::is_some) {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "an exported mmap, or one created from an export, keeps its devices",
            ));
        }
        Ok(st)
    }

    /// The 1.x `DOCA_MMAP_MAX_NUM_CHUNKS` property: how many memory ranges
    /// [`populate`](Mmap::populate) may add (a chunked mmap, before start).
    pub fn set_max_num_chunks(&mut self, max: u32) -> Result<()> {
        let mut st = self.configurable()?;
        if !st.chunked {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "only an mmap made as chunked (Mmap::chunked) holds several chunks",
            ));
        }
        if max == 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "max_num_chunks must be at least 1",
            ));
        }
        st.max_chunks = max;
        Ok(())
    }

    /// Names the mmap (the 1.x `doca_mmap_create(name, ...)`; read as the
    /// `DOCA_MMAP_NAME` property).
    pub fn set_name(&mut self, name: &str) {
        self.shared.state().name = name.to_owned();
    }

    /// The name given with [`set_name`](Mmap::set_name) (empty if none).
    pub fn name(&self) -> String {
        self.shared.state().name.clone()
    }

    /// The most chunks (1 for a chunked mmap unless set; 1 for an mmap with a memory
    /// range).
    pub fn max_num_chunks(&self) -> u32 {
        self.shared.state().max_chunks
    }

    /// Memory ranges held: populated chunks, or the one range set.
    pub fn num_chunks(&self) -> u32 {
        self.shared.state().num_chunks()
    }

    /// `doca_mmap_populate` (1.x): adds `[addr, addr + len)` to a started chunked mmap.
    /// `free_cb`, if any, is called once with the range when the memory is released
    /// (the mmap and every buffer into it are gone). `NoMemory` at `max_num_chunks`;
    /// `NotPermitted` for a range that overlaps a chunk, an mmap that is exported or
    /// created from an export, or one that is not chunked; `BadState` before start.
    ///
    /// # Safety
    ///
    /// As [`set_memrange`](Mmap::set_memrange): the range must be valid for reads and
    /// writes, and reached only through this mmap and its buffers, until the mmap and
    /// every buffer into it are gone.
    pub unsafe fn populate(
        &mut self,
        addr: *mut u8,
        len: usize,
        free_cb: Option<Box<dyn FnOnce(*mut u8, usize) + Send>>,
    ) -> Result<()> {
        let mut st = self.shared.state();
        if !st.chunked {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "this mmap has one memory range (set_memrange); chunks are populated into 1.x mmaps",
            ));
        }
        if st.from_export || st.exports.iter().any(Option::is_some) {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "an exported mmap, or one created from an export, cannot be populated",
            ));
        }
        if !st.started {
            return Err(Error::bad_state(
                "mmap is not started; start it, then populate it",
            ));
        }
        if addr.is_null() || len == 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "memory range address is NULL or its length is 0",
            ));
        }
        let base = addr as usize;
        let Some(end) = base.checked_add(len) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "memory range wraps around the address space",
            ));
        };
        if st.num_chunks() >= st.max_chunks {
            return Err(Error::with_context(
                ErrorCode::NoMemory,
                format!(
                    "mmap already holds max_num_chunks ({}) chunks; set a larger DOCA_MMAP_MAX_NUM_CHUNKS before start",
                    st.max_chunks
                ),
            ));
        }
        let overlaps = |b: usize, l: usize| base < b + l && b < end;
        if (st.memory.is_some() && overlaps(st.base, st.len))
            || st.chunks.iter().any(|c| overlaps(c.base, c.len))
        {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "memory range intersects a chunk already populated",
            ));
        }
        if st.memory.is_none() {
            st.memory = Some(Memory::Foreign);
            st.base = base;
            st.len = len;
            st.free_cb = free_cb;
        } else {
            st.chunks.push(Chunk { base, len, free_cb });
        }
        Ok(())
    }

    fn configurable(&self) -> Result<MutexGuard<'_, MmapState>> {
        let st = self.shared.state();
        if st.started {
            return Err(Error::bad_state(
                "mmap is started; stop it before changing its configuration",
            ));
        }
        if st.from_export {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "an mmap created from an export cannot be reconfigured",
            ));
        }
        if st.chunked && st.ever_started {
            return Err(Error::bad_state(
                "a 1.x mmap's properties became read-only at its first start",
            ));
        }
        Ok(st)
    }

    /// `doca_mmap_set_memrange` with memory the mmap owns from now on (a `Vec<u8>`,
    /// `Box<[u8]>`, file mapping...). It is freed when the mmap and its buffers are gone.
    pub fn set_memory<M: MemoryRegion>(&mut self, mut memory: M) -> Result<()> {
        let mut st = self.configurable()?;
        if memory.is_empty() {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "memory range length must be greater than 0",
            ));
        }
        if st.memory.is_some() && self.shared.num_bufs.load(Ordering::Acquire) > 0 {
            return Err(Error::with_context(
                ErrorCode::InUse,
                "buffers still point into the current memory range",
            ));
        }
        let base = memory.as_mut_ptr() as usize;
        let len = memory.len();
        st.memory = Some(Memory::Owned {
            region: Box::new(memory),
        });
        st.base = base;
        st.len = len;
        Ok(())
    }

    /// `doca_mmap_set_memrange` with memory the caller owns.
    ///
    /// # Safety
    ///
    /// `[addr, addr + len)` must be valid for reads and writes, and must not be accessed
    /// other than through this mmap and its buffers, until the mmap and every buffer into
    /// it are gone (the free callback, if set, says when).
    pub unsafe fn set_memrange(&mut self, addr: *mut u8, len: usize) -> Result<()> {
        let mut st = self.configurable()?;
        if addr.is_null() {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "memory range address is NULL",
            ));
        }
        if len == 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "memory range length must be greater than 0",
            ));
        }
        if (addr as usize).checked_add(len).is_none() {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "memory range wraps around the address space",
            ));
        }
        if st.memory.is_some() && self.shared.num_bufs.load(Ordering::Acquire) > 0 {
            return Err(Error::with_context(
                ErrorCode::InUse,
                "buffers still point into the current memory range",
            ));
        }
        st.memory = Some(Memory::Foreign);
        st.base = addr as usize;
        st.len = len;
        Ok(())
    }

    /// `doca_mmap_get_memrange`: (address, length); `BadState` when none is set.
    pub fn memrange(&self) -> Result<(*mut u8, usize)> {
        let st = self.shared.state();
        if st.memory.is_none() {
            return Err(Error::bad_state("mmap has no memory range"));
        }
        Ok((st.base as *mut u8, st.len))
    }

    /// `doca_mmap_set_permissions`: replaces the default (local read-write).
    pub fn set_permissions(&mut self, access: AccessFlags) -> Result<()> {
        let mut st = self.configurable()?;
        st.permissions = access;
        Ok(())
    }

    /// The access permissions.
    pub fn permissions(&self) -> AccessFlags {
        self.shared.state().permissions
    }

    /// `doca_mmap_set_max_num_devices`.
    pub fn set_max_num_devices(&mut self, max: u32) -> Result<()> {
        let mut st = self.configurable()?;
        if max == 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "max_num_devices must be at least 1",
            ));
        }
        if (max as usize) < st.devices.len() {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "max_num_devices {max} is below the {} devices already added",
                    st.devices.len()
                ),
            ));
        }
        st.max_devices = max;
        Ok(())
    }

    /// `doca_mmap_get_max_num_devices`.
    pub fn max_num_devices(&self) -> u32 {
        self.shared.state().max_devices
    }

    /// `doca_mmap_set_free_cb`: called once, with the range, when the memory is released
    /// (the mmap and all its buffers are gone).
    pub fn set_free_cb(&mut self, cb: impl FnOnce(*mut u8, usize) + Send + 'static) -> Result<()> {
        let mut st = self.configurable()?;
        st.free_cb = Some(Box::new(cb));
        Ok(())
    }

    /// `doca_mmap_dev_add` (before start; also while started, for a chunked mmap).
    pub fn dev_add(&mut self, dev: &Dev) -> Result<()> {
        let mut st = self.devices_editable()?;
        if st.devices.contains(dev) {
            return Err(Error::with_context(
                ErrorCode::AlreadyExist,
                "device was already added to this mmap",
            ));
        }
        if st.devices.len() >= st.max_devices as usize {
            return Err(Error::with_context(
                ErrorCode::NoMemory,
                format!(
                    "mmap already has max_num_devices ({}) devices",
                    st.max_devices
                ),
            ));
        }
        st.devices.push(dev.clone());
        if st.started {
            self.shared.frozen.store(&st);
        }
        Ok(())
    }

    /// `doca_mmap_dev_rm` (before start; also while started, for a chunked mmap).
    pub fn dev_rm(&mut self, dev: &Dev) -> Result<()> {
        let mut st = self.devices_editable()?;
        match st.devices.iter().position(|d| d == dev) {
            Some(i) => {
                st.devices.remove(i);
                if st.started {
                    self.shared.frozen.store(&st);
                }
                Ok(())
            }
            None => Err(Error::with_context(
                ErrorCode::NotFound,
                "device was not added to this mmap",
            )),
        }
    }

    /// The devices added.
    pub fn devices(&self) -> Vec<Dev> {
        self.shared.state().devices.clone()
    }

    /// Whether `dev` was added.
    pub fn has_device(&self, dev: &Dev) -> bool {
        self.shared.state().devices.contains(dev)
    }

    /// `doca_mmap_start`: no configuration change afterwards (until stopped).
    pub fn start(&mut self) -> Result<()> {
        let mut st = self.shared.state();
        if st.started {
            return Err(Error::bad_state("mmap is already started"));
        }
        if st.memory.is_none() && !st.chunked {
            return Err(Error::bad_state(
                "mmap has no memory range; set one before start",
            ));
        }
        self.shared.frozen.store(&st);
        st.started = true;
        st.ever_started = true;
        Ok(())
    }

    /// `doca_mmap_stop`: refused with `InUse` while buffers point into the mmap. A stopped
    /// mmap can be reconfigured and started again.
    pub fn stop(&mut self) -> Result<()> {
        let mut st = self.shared.state();
        if !st.started {
            return Err(Error::bad_state("mmap is not started"));
        }
        let n = self.shared.num_bufs.load(Ordering::Acquire);
        if n > 0 {
            return Err(Error::with_context(
                ErrorCode::InUse,
                format!("{n} buffers still point into the mmap"),
            ));
        }
        // Importers lose access; this returns once none of their accesses is in flight.
        st.exports = Default::default();
        st.started = false;
        Ok(())
    }

    /// `doca_mmap_stop` of DOCA 1.x, allowed at any point for a chunked mmap: buffers
    /// already taken stay valid, while no buffer, range or device can be added and the
    /// mmap cannot be exported until it is started again; importers lose access (the
    /// exports are revoked). Other mmaps follow [`stop`](Mmap::stop).
    pub fn stop_keeping_buffers(&mut self) -> Result<()> {
        let mut st = self.shared.state();
        if !st.chunked {
            drop(st);
            return self.stop();
        }
        if !st.started {
            return Err(Error::bad_state("mmap is not started"));
        }
        // A chunked mmap's memory is fixed once started, so the buffers keep pointing
        // into memory the mmap holds.
        st.exports = Default::default();
        st.started = false;
        Ok(())
    }

    /// Whether the mmap was ever exported (DOCA 1.x refuses a second export).
    pub fn ever_exported(&self) -> bool {
        self.shared.state().ever_exported
    }

    /// Whether started.
    pub fn is_started(&self) -> bool {
        self.shared.state().started
    }

    /// `doca_mmap_set_user_data` (2.5 and later): only before start (`BadState`).
    pub fn set_user_data(&self, user_data: Data) -> Result<()> {
        if self.is_started() {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "mmap is started; set its user data before start",
            ));
        }
        self.shared
            .user_data
            .store(user_data.0, std::sync::atomic::Ordering::Release);
        Ok(())
    }

    /// `doca_mmap_get_user_data`.
    pub fn user_data(&self) -> Data {
        Data(
            self.shared
                .user_data
                .load(std::sync::atomic::Ordering::Acquire),
        )
    }

    /// `doca_mmap_get_num_bufs`: buffers currently pointing into the mmap.
    pub fn num_bufs(&self) -> u32 {
        self.shared.num_bufs.load(Ordering::Acquire)
    }

    /// `doca_mmap_get_exported`: whether a live export of this mmap exists.
    pub fn exported(&self) -> bool {
        self.shared.state().exports.iter().any(Option::is_some)
    }

    /// `doca_mmap_get_from_export`.
    pub fn from_export(&self) -> bool {
        self.shared.state().from_export
    }

    /// `doca_mmap_enable_thread_safety` (before start; `BadState` after): the mmap is
    /// used from several threads, buffers included (it always may be here), and
    /// [`destroy`](Mmap::destroy) goes ahead while buffers still point into it: they keep
    /// its memory (and its free callback waits) until the last of them is released.
    pub fn enable_thread_safety(&self) -> Result<()> {
        let mut st = self.shared.state();
        // An mmap created from an export starts out started; DOCA lets its creator
        // enable thread safety on it before using it.
        if st.started && !st.from_export {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "mmap is started; enable thread safety before start",
            ));
        }
        st.thread_safe = true;
        Ok(())
    }

    /// `doca_mmap_destroy`: refused with `InUse` (the mmap comes back) while buffers point
    /// into it, unless thread safety was enabled.
    pub fn destroy(self) -> std::result::Result<(), (Mmap, Error)> {
        let n = self.num_bufs();
        if n > 0 && !self.shared.state().thread_safe {
            let e = Error::with_context(
                ErrorCode::InUse,
                format!("{n} buffers still point into the mmap"),
            );
            return Err((self, e));
        }
        Ok(())
    }
}

impl Default for Mmap {
    fn default() -> Mmap {
        Mmap::new()
    }
}

mod remote;
pub(crate) use remote::{pci_code, pci_text};
