//! Descriptor slabs: `doca_buf_inventory` (any mmap, any address) and `doca_bufpool`
//! (fixed-size elements carved from one mmap).
//!
//! Both preallocate every descriptor at creation; allocating and freeing buffers after
//! start touches only the slab and a free list with reserved capacity.

use super::buf::{Buf, BufDesc};
use super::mmap::{Mmap, MmapShared};
use crate::error::{Error, ErrorCode, Result};
use crate::lock;
use crate::types::Data;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering, Ordering::Relaxed};

/// Largest number of elements one inventory or pool may hold.
pub const MAX_ELEMENTS: usize = 1 << 24;

struct Fixed {
    mmap: Arc<MmapShared>,
    base: usize,
    stride: usize,
    element_size: usize,
}

/// How many times an inventory may grow (`doca_buf_inventory_expand`).
const MAX_GROWTH: usize = 16;

pub(crate) struct PoolShared {
    slots: Box<[BufDesc]>,
    /// Descriptors added by [`BufInventory::expand`]: (first index, descriptors). Set
    /// once each, never moved, so descriptors stay where buffers point.
    more: [std::sync::OnceLock<(u32, Box<[BufDesc]>)>; MAX_GROWTH],
    /// Every descriptor, `slots` and `more` together.
    total: std::sync::atomic::AtomicU32,
    free: Mutex<Vec<u32>>,
    started: AtomicBool,
    user_data: std::sync::atomic::AtomicU64,
    fixed: Option<Fixed>,
    /// Who may update the descriptors' counts without atomic operations.
    pub(crate) bias: crate::bias::Bias,
}

// SAFETY: descriptors are made of atomics plus a constant back-pointer to this pool; the
// free list is behind a Mutex.
unsafe impl Send for PoolShared {}
// SAFETY: as above.
unsafe impl Sync for PoolShared {}

impl PoolShared {
    fn create(n: usize, user_data: Data, fixed: Option<Fixed>) -> Arc<PoolShared> {
        Arc::new_cyclic(|weak| {
            let me = weak.as_ptr();
            let slots: Box<[BufDesc]> = (0..n).map(|i| BufDesc::new(me, i as u32)).collect();
            // Free list popped from the end: hand out low indices first.
            let free: Vec<u32> = (0..n as u32).rev().collect();
            PoolShared {
                slots,
                more: Default::default(),
                total: std::sync::atomic::AtomicU32::new(n as u32),
                free: Mutex::new(free),
                started: AtomicBool::new(false),
                user_data: std::sync::atomic::AtomicU64::new(user_data.0),
                fixed,
                bias: crate::bias::Bias::new(),
            }
        })
    }

    /// Returns slot `index` to the free list. Never allocates: the list has capacity for
    /// every slot.
    pub(crate) fn put(&self, index: u32) {
        lock(&self.free).push(index);
    }

    fn take(&self) -> Option<u32> {
        lock(&self.free).pop()
    }

    /// The descriptor of slot `index` (one the free list handed out).
    #[inline]
    fn slot(&self, index: u32) -> &BufDesc {
        match self.slots.get(index as usize) {
            Some(d) => d,
            None => self.slot_grown(index),
        }
    }

    #[inline(never)]
    fn slot_grown(&self, index: u32) -> &BufDesc {
        self.more
            .iter()
            .filter_map(|m| m.get())
            .find_map(|(first, ds)| ds.get(index.checked_sub(*first)? as usize))
            .expect("a slot index the free list gave")
    }

    /// Every descriptor of the pool.
    fn num_slots(&self) -> u32 {
        self.total.load(Ordering::Acquire)
    }

    /// Adds `n` descriptors (`doca_buf_inventory_expand`).
    fn expand(&self, n: usize) -> Result<()> {
        // The free list's lock serializes growth.
        let mut free = lock(&self.free);
        let first = self.num_slots();
        if n == 0 || first as usize + n > MAX_ELEMENTS {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "an inventory holds 1 to {MAX_ELEMENTS} elements; it has {first}, {n} more asked"
                ),
            ));
        }
        let Some(cell) = self.more.iter().find(|m| m.get().is_none()) else {
            return Err(Error::with_context(
                ErrorCode::NoMemory,
                format!("an inventory grows at most {MAX_GROWTH} times"),
            ));
        };
        let me: *const PoolShared = self;
        let ds: Box<[BufDesc]> = (0..n as u32).map(|i| BufDesc::new(me, first + i)).collect();
        free.reserve(n);
        if cell.set((first, ds)).is_err() {
            return Err(Error::with_context(
                ErrorCode::Unexpected,
                "inventory growth raced",
            ));
        }
        free.extend((first..first + n as u32).rev());
        self.total.store(first + n as u32, Ordering::Release);
        Ok(())
    }

    fn num_free(&self) -> u32 {
        lock(&self.free).len() as u32
    }

    /// Allocates a descriptor over `[addr, addr+len)` with the given data section, inside
    /// `mmap` (`mmap_arc` is its shared state).
    fn alloc(
        self: &Arc<Self>,
        mmap: &Arc<MmapShared>,
        addr: usize,
        len: usize,
        data: usize,
        data_len: usize,
        slot: Option<u32>,
    ) -> Result<Buf> {
        if !self.started.load(Ordering::Acquire) {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "inventory is not started",
            ));
        }
        let (lo, hi) = {
            let st = mmap.state();
            if !st.started {
                return Err(Error::with_context(
                    ErrorCode::BadState,
                    "mmap is not started",
                ));
            }
            let end = match addr.checked_add(len) {
                Some(e) => e,
                None => {
                    return Err(Error::with_context(
                        ErrorCode::InvalidValue,
                        "buffer range overflows",
                    ));
                }
            };
            // A buffer of length 0 is an empty buffer: programs take one and point its
            // data section elsewhere in the mmap.
            let Some(range) = st.range_holding(addr, end) else {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    "buffer range lies outside the mmap's memory range",
                ));
            };
            if data < addr || data > end || data_len > end - data {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    "data section lies outside the buffer range",
                ));
            }
            range
        };
        let index = match slot {
            Some(i) => i,
            None => match self.take() {
                Some(i) => i,
                None => {
                    return Err(Error::with_context(
                        ErrorCode::NoMemory,
                        "no free element left in the inventory",
                    ));
                }
            },
        };
        let d = self.slot(index);
        d.head.store(addr, Relaxed);
        d.len.store(len, Relaxed);
        d.data.store(data, Relaxed);
        d.data_len.store(data_len, Relaxed);
        d.lo.store(lo, Relaxed);
        d.hi.store(hi, Relaxed);
        d.next.store(std::ptr::null_mut(), Relaxed);
        d.prev.store(std::ptr::null_mut(), Relaxed);
        mmap.num_bufs.fetch_add(1, Ordering::AcqRel);
        d.mmap
            .store(Arc::into_raw(Arc::clone(mmap)) as *mut MmapShared, Relaxed);
        // The descriptor holds the pool alive until it is freed.
        let _ = Arc::into_raw(Arc::clone(self));
        d.counts.store(1, Ordering::Release);
        // SAFETY: the descriptor is live with one reference, given to the handle.
        Ok(unsafe { Buf::from_desc(NonNull::from(d)) })
    }

    fn in_use(&self) -> u32 {
        self.num_slots() - self.num_free()
    }
}

fn check_create(num_elements: usize, extensions: u32) -> Result<()> {
    if num_elements == 0 || num_elements > MAX_ELEMENTS {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!("num_elements must be 1..={MAX_ELEMENTS}, got {num_elements}"),
        ));
    }
    if extensions != 0 {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "unknown buffer extensions {extensions:#x} (only DOCA_BUF_EXTENSION_NONE = 0 exists)"
            ),
        ));
    }
    Ok(())
}

/// A buffer inventory (`struct doca_buf_inventory`): a fixed number of descriptors for
/// buffers anywhere inside any started mmap. Used by one thread at a time.
pub struct BufInventory {
    shared: Arc<PoolShared>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl fmt::Debug for BufInventory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufInventory")
            .field("num_elements", &self.num_elements())
            .field("num_free", &self.num_free_elements())
            .field("started", &self.is_started())
            .finish()
    }
}

impl BufInventory {
    /// `doca_buf_inventory_create` with no user data and no extensions.
    pub fn new(num_elements: usize) -> Result<BufInventory> {
        BufInventory::create(Data::default(), num_elements, 0)
    }

    /// `doca_buf_inventory_create`.
    pub fn create(user_data: Data, num_elements: usize, extensions: u32) -> Result<BufInventory> {
        check_create(num_elements, extensions)?;
        Ok(BufInventory {
            shared: PoolShared::create(num_elements, user_data, None),
            _not_sync: PhantomData,
        })
    }

    /// `doca_buf_inventory_start`.
    pub fn start(&mut self) -> Result<()> {
        if self.shared.started.swap(true, Ordering::AcqRel) {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "inventory is already started",
            ));
        }
        Ok(())
    }

    /// `doca_buf_inventory_stop`: allocation is refused until started again; buffers
    /// already out stay valid.
    pub fn stop(&mut self) -> Result<()> {
        if !self.shared.started.swap(false, Ordering::AcqRel) {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "inventory is not started",
            ));
        }
        Ok(())
    }

    /// Whether started.
    pub fn is_started(&self) -> bool {
        self.shared.started.load(Ordering::Acquire)
    }

    /// `doca_buf_inventory_buf_by_args`: a buffer over `[addr, addr+len)` with data
    /// section `[data, data+data_len)`; both must lie inside the started `mmap`'s range.
    pub fn buf_by_args(
        &self,
        mmap: &Mmap,
        addr: *mut u8,
        len: usize,
        data: *mut u8,
        data_len: usize,
    ) -> Result<Buf> {
        self.shared.alloc(
            &mmap.shared,
            addr as usize,
            len,
            data as usize,
            data_len,
            None,
        )
    }

    /// `doca_buf_inventory_buf_by_addr`: a buffer over `[addr, addr+len)`, empty data
    /// section at its head.
    pub fn buf_by_addr(&self, mmap: &Mmap, addr: *mut u8, len: usize) -> Result<Buf> {
        self.buf_by_args(mmap, addr, len, addr, 0)
    }

    /// `doca_buf_inventory_buf_by_data`: a buffer over `[data, data+len)` that is all data.
    pub fn buf_by_data(&self, mmap: &Mmap, data: *mut u8, len: usize) -> Result<Buf> {
        self.buf_by_args(mmap, data, len, data, len)
    }

    /// Like `buf_by_addr`, by offset into the mmap's range.
    pub fn buf_at(&self, mmap: &Mmap, offset: usize, len: usize) -> Result<Buf> {
        let (base, _) = mmap.memrange()?;
        let addr = (base as usize)
            .checked_add(offset)
            .ok_or_else(|| Error::with_context(ErrorCode::InvalidValue, "offset overflows"))?;
        self.buf_by_addr(mmap, addr as *mut u8, len)
    }

    /// Like `buf_by_data`, by offset into the mmap's range.
    pub fn buf_with_data_at(&self, mmap: &Mmap, offset: usize, len: usize) -> Result<Buf> {
        let (base, _) = mmap.memrange()?;
        let addr = (base as usize)
            .checked_add(offset)
            .ok_or_else(|| Error::with_context(ErrorCode::InvalidValue, "offset overflows"))?;
        self.buf_by_data(mmap, addr as *mut u8, len)
    }

    /// `doca_buf_inventory_buf_dup`: new descriptors from this inventory with the same
    /// memory, head, length and data section as `src` (for a list, every element from
    /// `src` on, chained in the same order). The bytes themselves are shared, not copied.
    pub fn buf_dup(&self, src: &BufDesc) -> Result<Buf> {
        let needed = src.num_elements();
        if self.num_free_elements() < needed {
            return Err(Error::with_context(
                ErrorCode::NoMemory,
                "not enough free elements in the inventory to duplicate the list",
            ));
        }
        let mut head: Option<Buf> = None;
        for e in src.iter() {
            let mmap = mmap_arc(e);
            let b = self.shared.alloc(
                &mmap,
                e.head.load(Relaxed),
                e.len(),
                e.data.load(Relaxed),
                e.data_len(),
                None,
            )?;
            match head.as_mut() {
                None => head = Some(b),
                Some(h) => h.chain(b).map_err(|(err, _)| err)?,
            }
        }
        head.ok_or_else(|| Error::with_context(ErrorCode::Unexpected, "empty list"))
    }

    /// `doca_buf_inventory_get_num_elements`.
    pub fn num_elements(&self) -> u32 {
        self.shared.num_slots()
    }

    /// `doca_buf_inventory_expand`: `n` more elements, while started (`BadState`
    /// otherwise). This allocates; allocating buffers afterwards still does not.
    pub fn expand(&self, n: u32) -> Result<()> {
        if !self.shared.started.load(Ordering::Acquire) {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "inventory is not started; expand a started inventory",
            ));
        }
        self.shared.expand(n as usize)
    }

    /// `doca_buf_inventory_get_num_free_elements`.
    pub fn num_free_elements(&self) -> u32 {
        self.shared.num_free()
    }

    /// `doca_buf_inventory_set_user_data` (2.5 and later): only before start
    /// (`BadState`).
    pub fn set_user_data(&self, user_data: Data) -> Result<()> {
        if self
            .shared
            .started
            .load(std::sync::atomic::Ordering::Acquire)
        {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "inventory is started; set its user data before start",
            ));
        }
        self.shared
            .user_data
            .store(user_data.0, std::sync::atomic::Ordering::Release);
        Ok(())
    }

    /// `doca_buf_inventory_get_user_data`.
    pub fn user_data(&self) -> Data {
        Data(
            self.shared
                .user_data
                .load(std::sync::atomic::Ordering::Acquire),
        )
    }

    /// `doca_buf_inventory_destroy`: refused with `InUse` (the inventory comes back) while
    /// buffers from it are out.
    pub fn destroy(self) -> std::result::Result<(), (BufInventory, Error)> {
        let n = self.shared.in_use();
        if n > 0 {
            let e = Error::with_context(
                ErrorCode::InUse,
                format!("{n} buffers from this inventory are still out"),
            );
            return Err((self, e));
        }
        Ok(())
    }
}

fn mmap_arc(d: &BufDesc) -> Arc<MmapShared> {
    let p = d.mmap.load(Relaxed) as *const MmapShared;
    // SAFETY: a live descriptor holds one strong count on its mmap; we add one for the
    // returned Arc.
    unsafe {
        Arc::increment_strong_count(p);
        Arc::from_raw(p)
    }
}

/// A buffer pool (`struct doca_bufpool`): `num_elements` buffers of `element_size` bytes,
/// each aligned to `element_alignment`, carved from one started mmap. Used by one thread
/// at a time.
pub struct BufPool {
    shared: Arc<PoolShared>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl fmt::Debug for BufPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufPool")
            .field("num_elements", &self.num_elements())
            .field("num_free", &self.num_free_elements())
            .field("element_size", &self.element_size())
            .finish()
    }
}

impl BufPool {
    /// `doca_bufpool_create`. The mmap must be started and large enough for
    /// `num_elements` elements at the alignment (a power of two; 0 means 1).
    pub fn create(
        user_data: Data,
        num_elements: usize,
        extensions: u32,
        element_size: usize,
        element_alignment: usize,
        mmap: &Mmap,
    ) -> Result<BufPool> {
        BufPool::create_in(
            user_data,
            num_elements,
            extensions,
            element_size,
            element_alignment,
            &mmap.shared,
        )
    }

    fn create_in(
        user_data: Data,
        num_elements: usize,
        extensions: u32,
        element_size: usize,
        element_alignment: usize,
        mmap: &Arc<MmapShared>,
    ) -> Result<BufPool> {
        check_create(num_elements, extensions)?;
        if element_size == 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "element_size must be greater than 0",
            ));
        }
        let align = element_alignment.max(1);
        if !align.is_power_of_two() {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("element_alignment {element_alignment} is not a power of two"),
            ));
        }
        let (base, len) = {
            let st = mmap.state();
            if !st.started {
                return Err(Error::with_context(
                    ErrorCode::BadState,
                    "the bufpool's mmap must be started",
                ));
            }
            (st.base, st.len)
        };
        let first = base
            .checked_next_multiple_of(align)
            .ok_or_else(|| Error::with_context(ErrorCode::InvalidValue, "alignment overflows"))?;
        let stride = element_size
            .checked_next_multiple_of(align)
            .ok_or_else(|| {
                Error::with_context(ErrorCode::InvalidValue, "element size overflows")
            })?;
        let needed = stride
            .checked_mul(num_elements - 1)
            .and_then(|x| x.checked_add(element_size))
            .and_then(|x| x.checked_add(first - base));
        match needed {
            Some(n) if n <= len => {}
            _ => {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    format!(
                        "mmap of {len} bytes cannot hold {num_elements} elements of {element_size} bytes aligned to {align}"
                    ),
                ));
            }
        }
        let fixed = Fixed {
            mmap: Arc::clone(mmap),
            base: first,
            stride,
            element_size,
        };
        Ok(BufPool {
            shared: PoolShared::create(num_elements, user_data, Some(fixed)),
            _not_sync: PhantomData,
        })
    }

    /// `doca_bufpool_start`.
    pub fn start(&mut self) -> Result<()> {
        if self.shared.started.swap(true, Ordering::AcqRel) {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "bufpool is already started",
            ));
        }
        Ok(())
    }

    /// `doca_bufpool_stop`.
    pub fn stop(&mut self) -> Result<()> {
        if !self.shared.started.swap(false, Ordering::AcqRel) {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "bufpool is not started",
            ));
        }
        Ok(())
    }

    /// `doca_bufpool_buf_alloc`: a free element as a buffer (data section empty at its
    /// head). `NoMemory` when all are out.
    pub fn buf_alloc(&self) -> Result<Buf> {
        let fixed =
            self.shared.fixed.as_ref().ok_or_else(|| {
                Error::with_context(ErrorCode::Unexpected, "bufpool without layout")
            })?;
        if !self.shared.started.load(Ordering::Acquire) {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "bufpool is not started",
            ));
        }
        let Some(i) = self.shared.take() else {
            return Err(Error::with_context(
                ErrorCode::NoMemory,
                "every element of the bufpool is in use",
            ));
        };
        let addr = fixed.base + i as usize * fixed.stride;
        let r = self
            .shared
            .alloc(&fixed.mmap, addr, fixed.element_size, addr, 0, Some(i));
        if r.is_err() {
            self.shared.put(i);
        }
        r
    }

    /// `doca_bufpool_get_num_elements`.
    pub fn num_elements(&self) -> u32 {
        self.shared.num_slots()
    }

    /// `doca_bufpool_get_num_free_elements`.
    pub fn num_free_elements(&self) -> u32 {
        self.shared.num_free()
    }

    /// Element size in bytes.
    pub fn element_size(&self) -> usize {
        self.shared.fixed.as_ref().map_or(0, |f| f.element_size)
    }

    /// `doca_bufpool_get_user_data`.
    pub fn user_data(&self) -> Data {
        Data(
            self.shared
                .user_data
                .load(std::sync::atomic::Ordering::Acquire),
        )
    }

    /// `doca_bufpool_destroy`: refused with `InUse` while buffers are out.
    pub fn destroy(self) -> std::result::Result<(), (BufPool, Error)> {
        let n = self.shared.in_use();
        if n > 0 {
            let e = Error::with_context(
                ErrorCode::InUse,
                format!("{n} buffers from this bufpool are still out"),
            );
            return Err((self, e));
        }
        Ok(())
    }
}

/// DOCA 3.x's buffer pool as a program configures it (`doca_buf_pool_create`, then
/// `doca_buf_pool_set_element_alignment` and `_set_user_data` while not started): the
/// elements are laid out from the mmap when the pool is built, at its start, so the mmap
/// need only be started by then.
pub struct BufPoolSpec {
    mmap: Arc<MmapShared>,
    num_elements: usize,
    element_size: usize,
    alignment: usize,
    user_data: Data,
}

impl fmt::Debug for BufPoolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufPoolSpec")
            .field("num_elements", &self.num_elements)
            .field("element_size", &self.element_size)
            .field("alignment", &self.alignment)
            .finish()
    }
}

impl BufPoolSpec {
    /// `num_elements` elements of `element_size` bytes from `mmap`, alignment 1.
    /// `InvalidValue` for 0 elements (or more than [`MAX_ELEMENTS`]) or a size of 0.
    pub fn new(num_elements: usize, element_size: usize, mmap: &Mmap) -> Result<BufPoolSpec> {
        check_create(num_elements, 0)?;
        if element_size == 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "element_size must be greater than 0",
            ));
        }
        Ok(BufPoolSpec {
            mmap: Arc::clone(&mmap.shared),
            num_elements,
            element_size,
            alignment: 1,
            user_data: Data::default(),
        })
    }

    /// Each element's alignment: a power of two (`InvalidValue` otherwise).
    pub fn set_alignment(&mut self, alignment: usize) -> Result<()> {
        if !alignment.is_power_of_two() {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("element alignment {alignment} is not a power of two"),
            ));
        }
        self.alignment = alignment;
        Ok(())
    }

    /// The elements' alignment (1 unless set).
    pub fn alignment(&self) -> usize {
        self.alignment
    }

    /// The number of elements.
    pub fn num_elements(&self) -> usize {
        self.num_elements
    }

    /// The pool's user data.
    pub fn set_user_data(&mut self, user_data: Data) {
        self.user_data = user_data;
    }

    /// The pool's user data (0 unless set).
    pub fn user_data(&self) -> Data {
        self.user_data
    }

    /// The pool, laid out from the mmap now (`BadState` while the mmap is not started,
    /// `InvalidValue` when its memory cannot hold the elements).
    pub fn build(&self) -> Result<BufPool> {
        BufPool::create_in(
            self.user_data,
            self.num_elements,
            0,
            self.element_size,
            self.alignment,
            &self.mmap,
        )
    }
}
