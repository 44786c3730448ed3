//! `doca_buf`: a descriptor of a region inside an mmap (head, length) with a data section
//! (data, data length), and scatter-gather lists of them.

use super::mmap::MmapShared;
use super::pool::PoolShared;
use crate::error::{Error, ErrorCode, Result};
use std::fmt;
use std::ptr::{self, NonNull};
use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering, Ordering::Relaxed};

/// The most references one buffer can have (`uint16_t` in DOCA).
pub const MAX_REFCOUNT: u32 = u16::MAX as u32;

/// The low half of [`BufDesc::counts`]: the reference count.
const RC_MASK: u32 = 0xffff;
/// One pin in the high half of [`BufDesc::counts`].
const PIN_ONE: u32 = 1 << 16;

#[inline]
fn rc_of(counts: u32) -> u32 {
    counts & RC_MASK
}

#[inline]
fn pins_of(counts: u32) -> u32 {
    counts >> 16
}

/// A buffer descriptor (`struct doca_buf`), seen through a [`Buf`] handle or while
/// walking a list. Every getter of DOCA's `doca_buf.h` is here.
///
/// Descriptors live in their inventory's slab; their fields are atomics so that a
/// misbehaving program can get wrong answers but never undefined behaviour.
pub struct BufDesc {
    pub(crate) pool: *const PoolShared,
    pub(crate) index: u32,
    pub(crate) mmap: AtomicPtr<MmapShared>,
    pub(crate) head: AtomicUsize,
    pub(crate) len: AtomicUsize,
    pub(crate) data: AtomicUsize,
    pub(crate) data_len: AtomicUsize,
    /// The memory range of the mmap that holds the buffer, `[lo, hi)`: a data section
    /// the program sets outside the buffer (`doca_buf_set_data` takes any) is held to
    /// it for byte access, and a task whose data section leaves it is refused.
    pub(crate) lo: AtomicUsize,
    pub(crate) hi: AtomicUsize,
    /// The reference count (low 16 bits) and, of those references, how many jobs in
    /// flight that borrowed the buffer hold (high 16 bits; the C face): the program's
    /// own releases cannot take those, and a pinned list does not change. One word,
    /// so that a pin or an unpin is one atomic operation.
    pub(crate) counts: AtomicU32,
    pub(crate) next: AtomicPtr<BufDesc>,
    pub(crate) prev: AtomicPtr<BufDesc>,
}

// SAFETY: every mutable field is an atomic; `pool` and `index` never change after the
// slab is made and point at a `Sync` pool; bytes behind the addresses are reached only
// under the mmap's range lock (or by code that owns them exclusively).
unsafe impl Sync for BufDesc {}

impl fmt::Debug for BufDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufDesc")
            .field("head", &format_args!("{:#x}", self.head.load(Relaxed)))
            .field("len", &self.len())
            .field("data_offset", &self.headroom())
            .field("data_len", &self.data_len())
            .field("refcount", &self.refcount())
            .finish()
    }
}

impl BufDesc {
    pub(crate) fn new(pool: *const PoolShared, index: u32) -> BufDesc {
        BufDesc {
            pool,
            index,
            mmap: AtomicPtr::new(ptr::null_mut()),
            head: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            data: AtomicUsize::new(0),
            data_len: AtomicUsize::new(0),
            lo: AtomicUsize::new(0),
            hi: AtomicUsize::new(0),
            counts: AtomicU32::new(0),
            next: AtomicPtr::new(ptr::null_mut()),
            prev: AtomicPtr::new(ptr::null_mut()),
        }
    }

    #[inline]
    /// `doca_buf_get_len`: the whole buffer (headroom + data + tailroom).
    pub fn len(&self) -> usize {
        self.len.load(Relaxed)
    }

    #[inline]
    /// Whether the buffer has length 0 (an empty buffer a program takes to point its
    /// data section elsewhere in the mmap).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    /// `doca_buf_get_head`: start address of the buffer.
    pub fn head(&self) -> *mut u8 {
        self.head.load(Relaxed) as *mut u8
    }

    #[inline]
    /// `doca_buf_get_data`: start address of the data section.
    pub fn data(&self) -> *mut u8 {
        self.data.load(Relaxed) as *mut u8
    }

    #[inline]
    /// `doca_buf_get_data_len`.
    pub fn data_len(&self) -> usize {
        self.data_len.load(Relaxed)
    }

    #[inline]
    /// The data section as one snapshot, held to the memory range of the mmap that
    /// holds the buffer: `(address, length)`. Other handles of the buffer may move the
    /// data section at any time, and a program may set it outside the buffer; whatever
    /// they do, the span lies inside the mmap's memory, so byte access through it stays
    /// in bounds. Every byte access uses it.
    pub fn data_span(&self) -> (usize, usize) {
        let (data, data_len, _) = self.snapshot();
        (data, data_len)
    }

    #[inline]
    /// `(data, data_len, end)`: one snapshot with `lo <= data <= data + data_len <= end
    /// <= hi`. `end`, where a library's room for new data ends, is the buffer's end
    /// (`head + len`) while the data section lies inside the buffer; for an empty
    /// buffer (length 0) or a data section the program set outside the buffer, it is the
    /// end of the mmap's memory range, as a program that points such a buffer elsewhere
    /// in its memory means it.
    fn snapshot(&self) -> (usize, usize, usize) {
        self.snapshot_with(None)
    }

    /// [`snapshot`](BufDesc::snapshot), with `data_len` for the data length when given.
    #[inline]
    fn snapshot_with(&self, data_len: Option<usize>) -> (usize, usize, usize) {
        let head = self.head.load(Relaxed);
        // No overflow: head + len was checked against the mmap's range at allocation.
        let end = head + self.len();
        let (lo, hi) = (self.lo.load(Relaxed), self.hi.load(Relaxed));
        let raw = self.data.load(Relaxed);
        let data = raw.clamp(lo, hi);
        let data_len = data_len
            .unwrap_or_else(|| self.data_len.load(Relaxed))
            .min(hi - data);
        let inside = end > head && raw >= head && data + data_len <= end;
        (data, data_len, if inside { end } else { hi })
    }

    /// The memory range `[lo, hi)` of the mmap that holds the buffer: where its data
    /// section may lie.
    pub fn mmap_range(&self) -> (usize, usize) {
        (self.lo.load(Relaxed), self.hi.load(Relaxed))
    }

    /// `Ok` when the data section the program set lies inside the memory range of the
    /// buffer's mmap; else `InvalidValue` saying where it lies (a task refuses such a
    /// buffer at submit rather than touch what the section names).
    pub fn check_data_section(&self) -> Result<()> {
        let (data, data_len) = (self.data.load(Relaxed), self.data_len.load(Relaxed));
        let (lo, hi) = (self.lo.load(Relaxed), self.hi.load(Relaxed));
        if data >= lo && data <= hi && data_len <= hi - data {
            return Ok(());
        }
        Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "a buffer's data section ({data_len} bytes at {data:#x}, set by doca_buf_set_data) lies outside the memory range of its mmap [{lo:#x}, {hi:#x})"
            ),
        ))
    }

    #[inline]
    /// [`tail_span`](BufDesc::tail_span) as if the data length were `data_len` (a job's
    /// view of its destination as submitted).
    pub fn tail_span_after(&self, data_len: usize) -> (usize, usize) {
        let (data, _, end) = self.snapshot_with(Some(data_len));
        let tail = (data + data_len).min(end);
        (tail, end - tail)
    }

    #[inline]
    /// The tailroom as one snapshot inside the buffer: `(address, length)`, the address
    /// just after the data section (see [`data_span`](BufDesc::data_span)).
    pub fn tail_span(&self) -> (usize, usize) {
        let (data, data_len, end) = self.snapshot();
        let tail = data + data_len;
        (tail, end - tail)
    }

    #[inline]
    /// The data section and the tailroom as one snapshot inside the buffer:
    /// `(address, length)` from the data address to the end of the buffer.
    pub fn data_room_span(&self) -> (usize, usize) {
        let (data, _, end) = self.snapshot();
        (data, end - data)
    }

    #[inline]
    /// The data section becomes the `n` bytes a library wrote at the data address (over
    /// what was there). `InvalidValue` past the end of the buffer.
    pub fn set_written_data_len(&self, n: usize) -> Result<()> {
        let (data, _, end) = self.snapshot();
        if n > end - data {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "data would reach past the end of the buffer",
            ));
        }
        self.data_len.store(n, Relaxed);
        Ok(())
    }

    #[inline]
    /// Bytes between head and data (0 when the program set the data section before
    /// the head).
    pub fn headroom(&self) -> usize {
        self.data_span().0.saturating_sub(self.head.load(Relaxed))
    }

    #[inline]
    /// Bytes after the data section up to the end of the buffer.
    pub fn tailroom(&self) -> usize {
        self.tail_span().1
    }

    #[inline]
    /// `doca_buf_get_refcount`.
    pub fn refcount(&self) -> u16 {
        rc_of(self.counts.load(Ordering::Acquire)) as u16
    }

    /// Offset of the head from the start of its mmap's memory range.
    pub fn mmap_offset(&self) -> usize {
        self.head
            .load(Relaxed)
            .wrapping_sub(self.mmap_shared().state().base)
    }

    #[inline]
    /// Access permissions of the buffer's mmap.
    pub fn mmap_permissions(&self) -> crate::types::AccessFlags {
        self.mmap_shared().started_permissions()
    }

    #[inline]
    /// Whether `dev` was added to the buffer's mmap.
    pub fn mmap_has_device(&self, dev: &crate::device::Dev) -> bool {
        self.mmap_shared().started_has_device(dev)
    }

    #[inline]
    /// An identity of the buffer's mmap (its shared state's address), for ordering locks.
    pub fn mmap_key(&self) -> usize {
        self.mmap.load(Relaxed) as usize
    }

    #[inline]
    /// Grows the data section by `n` bytes written into the tailroom by a library.
    /// `InvalidValue` when the tailroom is smaller.
    pub fn grow_data_len(&self, n: usize) -> Result<()> {
        let (data, data_len, end) = self.snapshot();
        if n > end - (data + data_len) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "data would grow past the end of the buffer",
            ));
        }
        // The writer holds the bytes (io lock): a load and a store suffice.
        self.data_len.store(data_len + n, Relaxed);
        Ok(())
    }

    #[inline]
    pub(crate) fn mmap_shared(&self) -> &MmapShared {
        // SAFETY: a live descriptor holds a strong count on its mmap, set at allocation.
        unsafe { &*self.mmap.load(Relaxed) }
    }

    #[inline]
    /// `doca_buf_list_is_first`: no element before this one.
    pub fn is_first(&self) -> bool {
        self.prev.load(Relaxed).is_null()
    }

    #[inline]
    /// `doca_buf_list_is_last`: no element after this one.
    pub fn is_last(&self) -> bool {
        self.next.load(Relaxed).is_null()
    }

    #[inline]
    /// `doca_buf_is_in_list`: part of a list of two or more.
    pub fn is_in_list(&self) -> bool {
        !self.is_first() || !self.is_last()
    }

    #[inline]
    /// `doca_buf_list_next`: the next element, if any.
    pub fn next(&self) -> Option<&BufDesc> {
        // SAFETY: list elements stay allocated while they are linked (the list holds them).
        unsafe { self.next.load(Relaxed).as_ref() }
    }

    /// `doca_buf_list_last`: the last element of the list from here (itself if last).
    pub fn last(&self) -> &BufDesc {
        let mut cur = self;
        while let Some(n) = cur.next() {
            cur = n;
        }
        cur
    }

    #[inline]
    /// `doca_buf_list_num_elements`: elements from here to the end (the whole list when
    /// called on the head).
    pub fn num_elements(&self) -> u32 {
        self.iter().count() as u32
    }

    #[inline]
    /// Walks the list from this element.
    pub fn iter(&self) -> ListIter<'_> {
        ListIter { cur: Some(self) }
    }

    #[inline]
    /// Total data length of the list from here.
    pub fn list_data_len(&self) -> usize {
        self.iter().map(BufDesc::data_len).sum()
    }

    /// Copies the data section (of this element only) into `out`, which must be at least
    /// `data_len` long; returns the number of bytes copied.
    pub fn copy_data_to(&self, out: &mut [u8]) -> Result<usize> {
        let (data, n) = self.data_span();
        if out.len() < n {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "output is shorter than the buffer's data length",
            ));
        }
        self.mmap_shared().io.with(data, n, false, || {
            if let Some(r) = self.remote() {
                // SAFETY: `out` is valid for writes of n bytes and borrowed exclusively.
                return unsafe { r.read_raw(data, out.as_mut_ptr(), n) };
            }
            // SAFETY: [data, data+data_len) lies inside the mmap's memory (an invariant kept
            // by every setter), which stays valid while this descriptor holds the mmap; no
            // writer holds the range (range lock).
            unsafe { ptr::copy_nonoverlapping(data as *const u8, out.as_mut_ptr(), n) };
            Ok(())
        })?;
        Ok(n)
    }

    /// The data section of this element, copied into a new vector. For a buffer of an
    /// mmap created from an export, empty when the exporter's memory cannot be read
    /// (use [`copy_data_to`](BufDesc::copy_data_to) to see why).
    pub fn data_to_vec(&self) -> Vec<u8> {
        loop {
            let mut v = vec![0; self.data_span().1];
            // Fails when another handle grew the data meanwhile: look again.
            match self.copy_data_to(&mut v) {
                Ok(n) => {
                    v.truncate(n);
                    return v;
                }
                Err(_) if self.remote().is_some() && v.len() >= self.data_span().1 => {
                    return Vec::new();
                }
                Err(_) => {}
            }
        }
    }

    #[inline]
    /// The exporter's memory, when the buffer's mmap was created from an export: the
    /// buffer's addresses are then the exporter's, reached through it, never directly.
    pub fn remote(&self) -> Option<&super::RemoteMemory> {
        self.mmap_shared().remote.as_deref()
    }

    #[inline]
    /// Whether jobs may write into the buffer: its mmap allows local writes
    /// (`LOCAL_READ_WRITE`), or, for an mmap created from an export, the exporter allows
    /// the importer's writes.
    pub fn mmap_writable(&self) -> bool {
        match self.remote() {
            Some(r) => r.writable(),
            None => self
                .mmap_permissions()
                .contains(crate::types::AccessFlags::LOCAL_READ_WRITE),
        }
    }

    /// The data of the whole list from here, gathered into a new vector.
    pub fn list_data_to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.list_data_len());
        for e in self.iter() {
            v.extend_from_slice(&e.data_to_vec());
        }
        v
    }

    fn set_data_checked(&self, data: usize, data_len: usize) -> Result<()> {
        let (lo, hi) = (self.lo.load(Relaxed), self.hi.load(Relaxed));
        if data < lo || data > hi {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "data address {data:#x} lies outside the memory range of the buffer's mmap [{lo:#x}, {hi:#x})"
                ),
            ));
        }
        if data_len > hi - data {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "data section would run past the end of the mmap's memory range",
            ));
        }
        self.data.store(data, Relaxed);
        self.data_len.store(data_len, Relaxed);
        Ok(())
    }

    /// Adds one reference: `BadState` when the buffer was already returned to its
    /// inventory (a released descriptor is never brought back), `NoMemory` at 65535.
    pub(crate) fn acquire(&self) -> Result<()> {
        self.add_ref(1)
    }

    /// Moves the counts word from its value to `next(value)` in one atomic step (or
    /// not at all, when `next` refuses); the values it moved from and to come back.
    #[inline]
    fn update_counts(&self, next: impl Fn(u32) -> Result<u32>) -> Result<(u32, u32)> {
        // SAFETY: a descriptor's pool outlives it (the slab is the pool's).
        let bias = unsafe { &(*self.pool).bias };
        if let Some(_owned) = bias.enter() {
            // The inventory's owner thread, with the bias held: nobody else updates
            // the word meanwhile.
            let cur = self.counts.load(Relaxed);
            let new = next(cur)?;
            self.counts.store(new, Relaxed);
            return Ok((cur, new));
        }
        bias.revoke();
        let mut cur = self.counts.load(Ordering::Acquire);
        loop {
            let new = next(cur)?;
            match self
                .counts
                .compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok((cur, new)),
                Err(v) => cur = v,
            }
        }
    }

    /// Adds `add` (one reference, perhaps also one pin) with the checks of
    /// [`acquire`](BufDesc::acquire).
    #[inline]
    fn add_ref(&self, add: u32) -> Result<()> {
        self.update_counts(|cur| {
            let rc = rc_of(cur);
            if rc == 0 {
                return Err(Error::with_context(
                    ErrorCode::BadState,
                    "buffer was already returned to its inventory",
                ));
            }
            if rc >= MAX_REFCOUNT {
                return Err(Error::with_context(
                    ErrorCode::NoMemory,
                    "buffer reference count is at its maximum (65535)",
                ));
            }
            Ok(cur + add)
        })
        .map(|_| ())
    }

    /// Pins the buffer for a job in flight: one more reference, which only
    /// [`unpin`](BufDesc::unpin) gives back.
    #[inline]
    pub(crate) fn pin(&self) -> Result<()> {
        self.add_ref(1 + PIN_ONE)
    }

    /// Gives back a reference [`pin`](BufDesc::pin) took. When that was the last
    /// reference of a list element still linked, the list's head keeps it (only the
    /// pin goes).
    ///
    /// # Safety
    /// The caller holds that pin, and the descriptor is live (the pin keeps it so).
    #[inline]
    pub(crate) unsafe fn unpin(&self) {
        let moved = self.update_counts(|cur| {
            debug_assert!(pins_of(cur) > 0 && rc_of(cur) > 0);
            Ok(if rc_of(cur) == 1 && !self.is_first() {
                cur - PIN_ONE
            } else {
                cur - PIN_ONE - 1
            })
        });
        if matches!(moved, Ok((_, 0))) {
            // SAFETY: that was the last reference of a list head (or a lone buffer),
            // which the pin kept live.
            unsafe { self.free_list() };
        }
    }

    /// Whether other references exist, or jobs in flight hold the buffer.
    #[inline]
    fn shared_or_pinned(&self) -> bool {
        self.counts.load(Ordering::Acquire) != 1
    }

    pub(crate) fn release_one(&self) -> Result<u16> {
        let (before, _) = self.update_counts(|cur| {
            let rc = rc_of(cur);
            if rc == 0 {
                return Err(Error::with_context(
                    ErrorCode::BadState,
                    "buffer was already returned to its inventory",
                ));
            }
            if rc <= pins_of(cur) {
                return Err(Error::with_context(
                    ErrorCode::InUse,
                    "the buffer's remaining references belong to jobs in flight; retrieve their completions first",
                ));
            }
            // A list element's last reference of its own (pins aside) is the list's to
            // release: taking it would leave the element held by pins alone, and the
            // head's release would then take a pin's reference.
            if rc - pins_of(cur) == 1 && !self.is_first() {
                return Err(Error::with_context(
                    ErrorCode::NotPermitted,
                    "buffer is inside a list; unchain it (or release the list head) first",
                ));
            }
            Ok(cur - 1)
        })?;
        if rc_of(before) == 1 {
            // SAFETY: that was the last reference of a list head (or a lone buffer).
            unsafe { self.free_list() };
        }
        Ok((rc_of(before) - 1) as u16)
    }

    /// Frees a descriptor whose last reference just went, and with it the list it
    /// heads: each element loses the reference the list held.
    ///
    /// # Safety
    /// The caller just took this descriptor's reference count to 0.
    unsafe fn free_list(&self) {
        let mut next = self.next.swap(ptr::null_mut(), Relaxed);
        // SAFETY: the descriptor is no longer referenced; it returns to its pool.
        unsafe { free_desc(self) };
        while let Some(n) = NonNull::new(next) {
            // SAFETY: list elements are live while linked.
            let e = unsafe { n.as_ref() };
            next = e.next.swap(ptr::null_mut(), Relaxed);
            e.prev.store(ptr::null_mut(), Relaxed);
            let dropped = e.update_counts(|c| {
                if rc_of(c) == 0 {
                    return Err(Error::with_context(
                        ErrorCode::BadState,
                        "list element was already returned to its inventory",
                    ));
                }
                Ok(c - 1)
            });
            if matches!(dropped, Ok((_, 0))) {
                // SAFETY: that was its last reference.
                unsafe { free_desc(e) };
            }
        }
    }
}

/// Returns a descriptor with no references to its pool.
///
/// # Safety
/// `d` must be live (allocated) with a reference count that just reached 0.
unsafe fn free_desc(d: &BufDesc) {
    let mmap = d.mmap.swap(ptr::null_mut(), Relaxed);
    d.next.store(ptr::null_mut(), Relaxed);
    d.prev.store(ptr::null_mut(), Relaxed);
    let pool = d.pool;
    let index = d.index;
    // SAFETY: the descriptor's pool outlives its allocated descriptors (each holds a
    // strong count, released below).
    unsafe { (*pool).put(index) };
    if !mmap.is_null() {
        // SAFETY: the descriptor held one strong count on its mmap since allocation.
        unsafe {
            (*mmap).num_bufs.fetch_sub(1, Ordering::AcqRel);
            Arc::decrement_strong_count(mmap as *const MmapShared);
        }
    }
    // SAFETY: the descriptor held one strong count on its pool since allocation; `d` is
    // not used after this.
    unsafe { Arc::decrement_strong_count(pool) };
}

/// Iterator over a buffer list.
#[derive(Debug)]
pub struct ListIter<'a> {
    cur: Option<&'a BufDesc>,
}

impl<'a> Iterator for ListIter<'a> {
    type Item = &'a BufDesc;
    #[inline]
    fn next(&mut self) -> Option<&'a BufDesc> {
        let c = self.cur?;
        self.cur = c.next();
        Some(c)
    }
}

/// One reference to a buffer (`struct doca_buf *`). Dropping it is
/// `doca_buf_refcount_rm`: at zero references the buffer (and, for a list head, each
/// element of its list) returns to its inventory.
///
/// `Send`, not `Sync`. Reading and writing the bytes is by copy (`copy_data_to`,
/// `append`, ...), so no two `&mut` views of the same bytes can exist.
pub struct Buf {
    desc: NonNull<BufDesc>,
}

// SAFETY: all descriptor fields are atomics, byte access is serialized by the mmap's io
// lock, and returning to the pool is synchronized; moving a handle across threads is fine.
unsafe impl Send for Buf {}

impl fmt::Debug for Buf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl std::ops::Deref for Buf {
    type Target = BufDesc;
    fn deref(&self) -> &BufDesc {
        // SAFETY: a handle owns one reference, which keeps the descriptor allocated.
        unsafe { self.desc.as_ref() }
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        // A handle never owns the last reference of a non-head list element (chaining
        // consumes the handle), so this cannot be refused.
        let _ = self.release_one();
    }
}

impl Buf {
    /// Wraps a descriptor whose reference this handle now owns.
    ///
    /// # Safety
    /// `desc` must be a live descriptor and the caller must give one reference to the handle.
    pub(crate) unsafe fn from_desc(desc: NonNull<BufDesc>) -> Buf {
        Buf { desc }
    }

    #[inline]
    /// The descriptor address (the C `struct doca_buf *`).
    pub fn as_ptr(&self) -> *mut BufDesc {
        self.desc.as_ptr()
    }

    #[inline]
    /// Gives up the handle without releasing its reference; returns the descriptor.
    pub fn into_raw(self) -> NonNull<BufDesc> {
        let d = self.desc;
        std::mem::forget(self);
        d
    }

    #[inline]
    /// Takes back a reference given up with [`into_raw`](Buf::into_raw).
    ///
    /// # Safety
    /// `desc` must come from `into_raw` (or otherwise own one reference) and be live.
    pub unsafe fn from_raw(desc: NonNull<BufDesc>) -> Buf {
        Buf { desc }
    }

    /// `doca_buf_refcount_add`: a new handle to the same buffer.
    pub fn refcount_add(&self) -> Result<Buf> {
        self.acquire()?;
        // SAFETY: the reference was just added for the new handle.
        Ok(unsafe { Buf::from_desc(self.desc) })
    }

    /// `doca_buf_refcount_rm` made explicit: releases this reference and returns how many
    /// remain.
    pub fn release(self) -> Result<u16> {
        let r = self.release_one();
        std::mem::forget(self);
        r
    }

    /// `doca_buf_set_data`: sets the data section; it must lie inside the memory range
    /// of the buffer's mmap (it may lie outside the buffer itself, as DOCA programs set
    /// it: byte access and a task's room follow the data section).
    pub fn set_data(&mut self, data: *mut u8, data_len: usize) -> Result<()> {
        self.set_data_checked(data as usize, data_len)
    }

    /// `doca_buf_set_data` as DOCA's C interface has it: it always succeeds and stores
    /// the section as given. A task whose buffer's data section lies outside its mmap's
    /// memory range is refused at submit
    /// ([`check_data_section`](BufDesc::check_data_section)); byte access is held to
    /// that range meanwhile.
    pub fn set_data_as_given(&mut self, data: *mut u8, data_len: usize) {
        self.data.store(data as usize, Relaxed);
        self.data_len.store(data_len, Relaxed);
    }

    /// `doca_buf_inventory_buf_reuse_by_args` (3.x): points this buffer at another range
    /// `[addr, addr + len)` of its mmap with the data section `[data, data + data_len)`
    /// inside it, as taking a new buffer from the inventory would, without giving this
    /// one back. Its references and its place in a list stay. `InvalidValue` when the
    /// range leaves the mmap's memory or the data leaves the range, `InUse` while a task
    /// in flight holds the buffer; the buffer is unchanged then.
    pub fn reuse(&mut self, addr: usize, len: usize, data: usize, data_len: usize) -> Result<()> {
        if pins_of(self.counts.load(Ordering::Acquire)) != 0 {
            return Err(Error::with_context(
                ErrorCode::InUse,
                "a task in flight holds this buffer: reuse it after the task completes",
            ));
        }
        let end = addr.checked_add(len).ok_or_else(|| {
            Error::with_context(ErrorCode::InvalidValue, "buffer range overflows")
        })?;
        let Some((lo, hi)) = self.mmap_shared().state().range_holding(addr, end) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "buffer range [{addr:#x}, {end:#x}) lies outside the memory range of the buffer's mmap"
                ),
            ));
        };
        if data < addr || data > end || data_len > end - data {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "data section lies outside the buffer range",
            ));
        }
        self.head.store(addr, Relaxed);
        self.len.store(len, Relaxed);
        self.data.store(data, Relaxed);
        self.data_len.store(data_len, Relaxed);
        self.lo.store(lo, Relaxed);
        self.hi.store(hi, Relaxed);
        Ok(())
    }

    /// Sets the data section by offset from the head.
    pub fn set_data_range(&mut self, offset: usize, data_len: usize) -> Result<()> {
        let head = self.head.load(Relaxed);
        match head.checked_add(offset) {
            Some(d) => self.set_data_checked(d, data_len),
            None => Err(Error::with_context(
                ErrorCode::InvalidValue,
                "offset overflows",
            )),
        }
    }

    #[inline]
    /// `doca_buf_reset_data_len`: data length 0; the data address stays.
    pub fn reset_data_len(&mut self) {
        self.data_len.store(0, Relaxed);
    }

    /// Appends bytes at the tail of the data section, as a DOCA library does with a
    /// destination buffer; the data length grows. `InvalidValue` when the tailroom is
    /// too small (nothing is written then).
    pub fn append(&mut self, bytes: &[u8]) -> Result<()> {
        // One snapshot for the check and the write: other handles may move the data.
        let (dst, room) = self.tail_span();
        if bytes.len() > room {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "bytes do not fit in the buffer's tailroom",
            ));
        }
        self.mmap_shared().io.with(dst, bytes.len(), true, || {
            if let Some(r) = self.remote() {
                // SAFETY: `bytes` is valid for reads of its length.
                return unsafe { r.write_raw(dst, bytes.as_ptr(), bytes.len()) };
            }
            // SAFETY: [dst, dst+n) is inside the tailroom (checked), inside the mmap's memory,
            // valid while this descriptor holds the mmap; nothing else holds the range.
            unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), dst as *mut u8, bytes.len()) };
            Ok(())
        })?;
        self.data_len.fetch_add(bytes.len(), Relaxed);
        Ok(())
    }

    /// Overwrites the data section with `bytes` (placed at the current data address);
    /// `InvalidValue` when they do not fit before the end of the buffer.
    pub fn write_data(&mut self, bytes: &[u8]) -> Result<()> {
        let room = self.len().saturating_sub(self.headroom());
        if bytes.len() > room {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "bytes do not fit between the data address and the end of the buffer",
            ));
        }
        self.data_len.store(0, Relaxed);
        self.append(bytes)
    }

    /// `doca_buf_list_chain`: appends the list headed by `list2` to the end of this
    /// list. `self` must head its list and `list2` must be a list head not already in
    /// this list. The list takes over `list2`'s reference; on error it comes back.
    ///
    /// In Rust, a list's structure changes only through its sole owner: both lists'
    /// buffers must have one reference each (`InUse` otherwise), so no other handle can
    /// be walking a list while it changes.
    pub fn chain(&mut self, list2: Buf) -> std::result::Result<(), (Error, Buf)> {
        if self.shared_or_pinned() {
            return Err((
                Error::with_context(
                    ErrorCode::InUse,
                    "list1 has other references; a shared list cannot change",
                ),
                list2,
            ));
        }
        if list2.iter().any(BufDesc::shared_or_pinned) {
            return Err((
                Error::with_context(
                    ErrorCode::InUse,
                    "list2 has buffers with other references; a shared buffer cannot join a list",
                ),
                list2,
            ));
        }
        if !self.is_first() {
            return Err((
                Error::with_context(
                    ErrorCode::InvalidValue,
                    "list1 must be the head of its list",
                ),
                list2,
            ));
        }
        if !list2.is_first() {
            return Err((
                Error::with_context(
                    ErrorCode::InvalidValue,
                    "list2 must be the head of its list",
                ),
                list2,
            ));
        }
        if self.iter().any(|e| ptr::eq(e, &*list2)) {
            return Err((
                Error::with_context(ErrorCode::InvalidValue, "list2 is already part of list1"),
                list2,
            ));
        }
        let last = self.last() as *const BufDesc as *mut BufDesc;
        // SAFETY: `last` is a live element of this list.
        unsafe { (*last).next.store(list2.as_ptr(), Relaxed) };
        list2.prev.store(last, Relaxed);
        let _ = list2.into_raw();
        Ok(())
    }

    /// `doca_buf_list_unchain` by position: detaches the elements from `index` (at least
    /// 1) onwards and returns a handle to the detached list's head.
    pub fn unchain_at(&mut self, index: usize) -> Result<Buf> {
        if self.shared_or_pinned() {
            return Err(Error::with_context(
                ErrorCode::InUse,
                "list has other references; a shared list cannot change",
            ));
        }
        if !self.is_first() {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "unchain must be called on the head of the list",
            ));
        }
        if index == 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "cannot unchain the head from its own list",
            ));
        }
        let Some(elem) = self.iter().nth(index) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "index is past the end of the list",
            ));
        };
        let elem = NonNull::from(elem);
        // SAFETY: `elem` is a live element of this list, not the head.
        unsafe { self.unchain_elem(elem) };
        // SAFETY: the list's reference to the detached head moves to the new handle.
        Ok(unsafe { Buf::from_desc(elem) })
    }

    /// `doca_buf_list_unchain` by element: `list2` (compared by address only) must be an
    /// element of this list other than the head. The reference the list held moves to
    /// the returned handle.
    pub fn unchain(&mut self, list2: *const BufDesc) -> Result<Buf> {
        let Some(pos) = self.iter().position(|e| ptr::eq(e, list2)) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "list2 is not an element of list1",
            ));
        };
        self.unchain_at(pos)
    }

    /// # Safety
    /// `elem` must be a live, non-head element of a list.
    unsafe fn unchain_elem(&self, elem: NonNull<BufDesc>) {
        // SAFETY: per the contract, `elem` and its predecessor are live.
        unsafe {
            let e = elem.as_ref();
            let prev = e.prev.swap(ptr::null_mut(), Relaxed);
            (*prev).next.store(ptr::null_mut(), Relaxed);
        }
    }
}
