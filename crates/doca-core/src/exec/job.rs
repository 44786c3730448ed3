//! Jobs and completions as plain data.

use crate::error::{Error, ErrorCode};
use crate::memory::{Buf, BufDesc};
use crate::types::Data;
use std::any::Any;
use std::fmt;
use std::ptr::{self, NonNull};
use std::sync::Arc;

/// Most buffers one job refers to.
pub const MAX_JOB_BUFS: usize = 2;

/// A job record: type, flags, user data, up to two buffers and three parameters, and an
/// optional library object (matrix, session...) kept alive while the job is in flight.
/// Every library's jobs fit it, so work queues hold fixed slots.
pub struct JobRecord {
    /// Job type (e.g. `DOCA_DMA_JOB_MEMCPY`).
    pub job_type: u32,
    /// Job flags.
    pub flags: u32,
    /// Echoed in the completion event.
    pub user_data: Data,
    bufs: [*mut BufDesc; MAX_JOB_BUFS],
    /// Bit i set: the record owns one reference of `bufs[i]`.
    owned: u8,
    /// Bit i set: `bufs[i]` is borrowed (the submitter keeps the reference).
    borrowed: u8,
    /// Bit i set: `bufs[i]` is borrowed, and pinned while the job is in flight: the
    /// record holds one reference (also in `owned`) until [`unpin`](JobRecord::unpin).
    pinned: u8,
    /// Library parameters.
    pub params: [u64; crate::exec::MAX_JOB_PARAMS],
    /// Library object kept alive while in flight.
    pub aux: Option<Arc<dyn Any + Send + Sync>>,
    /// The submitting context's identity (set by the work queue).
    pub(crate) ctx_id: usize,
    /// For a job of a graph node: which run and node (0: not a graph node's job).
    pub(crate) graph_tag: u32,
    /// The destination's data length once the job is delivered ([`NO_LEN`]: none): a
    /// job's results become visible at delivery, as on DOCA's hardware.
    dst_len: std::sync::atomic::AtomicUsize,
    /// The destination's data length when the job was submitted ([`NO_LEN`]: not
    /// taken): where its results go, whatever was delivered since, as on DOCA's
    /// hardware, whose work request is made at submit.
    dst_base: usize,
}

/// [`JobRecord`]'s `dst_len` when the job leaves the destination's length alone.
const NO_LEN: usize = usize::MAX;

// SAFETY: the record's buffers are either owned references (Send handles) or raw
// descriptors the submitter promised to leave alone while in flight; descriptors are
// atomics and byte access goes through the mmap io locks.
unsafe impl Send for JobRecord {}

impl fmt::Debug for JobRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobRecord")
            .field("job_type", &self.job_type)
            .field("flags", &self.flags)
            .field("user_data", &self.user_data)
            .field("bufs", &self.bufs.iter().filter(|b| !b.is_null()).count())
            .field("params", &self.params)
            .finish()
    }
}

impl JobRecord {
    /// The slot of a job's source (one buffer or a list head), in every library.
    pub const SRC: usize = 0;
    /// The slot of a job's destination, in every library.
    pub const DST: usize = 1;
    /// A flag of the record: its task table says a completed job writes results back
    /// to the program ([`TaskSpec::write_back`](super::TaskSpec::write_back)).
    pub const WRITES_BACK: u32 = 1;
    /// A flag of the record: the job writes its destination (one buffer, not a list)
    /// from the start of the destination's data section, over whatever data it holds,
    /// and leaves the data length at what it wrote. DOCA up to 2.0.2 (the 1.5 face)
    /// treats output buffers so; later DOCA appends to the data.
    pub const OVERWRITES_DST: u32 = 2;

    #[inline]
    /// A record with no buffers.
    pub fn new(job_type: u32, user_data: Data) -> JobRecord {
        JobRecord {
            job_type,
            flags: 0,
            user_data,
            bufs: [ptr::null_mut(); MAX_JOB_BUFS],
            owned: 0,
            borrowed: 0,
            pinned: 0,
            params: [0; crate::exec::MAX_JOB_PARAMS],
            aux: None,
            ctx_id: 0,
            graph_tag: 0,
            dst_len: std::sync::atomic::AtomicUsize::new(NO_LEN),
            dst_base: NO_LEN,
        }
    }

    /// Writes [`JobRecord::new`]`(0, Data(0))` at `p` field by field, each with its own
    /// store (building the value and copying it would go through a temporary).
    ///
    /// # Safety
    /// `p` is valid for writes and aligned; what it held is overwritten, not dropped.
    #[inline(always)]
    pub(crate) unsafe fn write_empty(p: *mut JobRecord) {
        // SAFETY: the caller's contract; every field is written once.
        unsafe {
            (&raw mut (*p).job_type).write(0);
            (&raw mut (*p).flags).write(0);
            (&raw mut (*p).user_data).write(Data(0));
            (&raw mut (*p).bufs).write([ptr::null_mut(); MAX_JOB_BUFS]);
            (&raw mut (*p).owned).write(0);
            (&raw mut (*p).borrowed).write(0);
            (&raw mut (*p).pinned).write(0);
            (&raw mut (*p).params).write([0; crate::exec::MAX_JOB_PARAMS]);
            (&raw mut (*p).aux).write(None);
            (&raw mut (*p).ctx_id).write(0);
            (&raw mut (*p).graph_tag).write(0);
            (&raw mut (*p).dst_len).write(std::sync::atomic::AtomicUsize::new(NO_LEN));
            (&raw mut (*p).dst_base).write(NO_LEN);
        }
    }

    #[inline]
    /// Puts an owned buffer (its reference moves into the record) in slot `i`.
    pub fn set_buf(&mut self, i: usize, buf: Buf) {
        if !self.slot_empty(i) {
            self.clear_buf(i);
        }
        self.bufs[i] = buf.into_raw().as_ptr();
        self.owned |= 1 << i;
    }

    /// Puts a borrowed descriptor in slot `i` (the C face: the caller keeps its reference
    /// and must leave the buffer alone while the job is in flight).
    ///
    /// # Safety
    /// `desc` must stay a live descriptor until the job completes.
    #[inline]
    pub unsafe fn set_buf_raw(&mut self, i: usize, desc: *mut BufDesc) {
        if !self.slot_empty(i) {
            self.clear_buf(i);
        }
        self.bufs[i] = desc;
        if !desc.is_null() {
            self.borrowed |= 1 << i;
        }
    }

    /// Whether slot `i` holds nothing (a new record's slots do not).
    #[inline]
    fn slot_empty(&self, i: usize) -> bool {
        self.bufs[i].is_null() && (self.owned | self.borrowed | self.pinned) & (1 << i) == 0
    }

    fn clear_buf(&mut self, i: usize) {
        self.unpin_slot(i);
        if let Some(b) = self.take_buf(i) {
            drop(b);
        }
        self.bufs[i] = ptr::null_mut();
        self.owned &= !(1 << i);
        self.borrowed &= !(1 << i);
    }

    /// Gives back every buffer the record holds (owned references and pins) and empties
    /// its slots, in place: what dropping it does to its buffers.
    #[inline]
    pub fn release_bufs(&mut self) {
        for i in 0..MAX_JOB_BUFS {
            if !self.slot_empty(i) {
                self.clear_buf(i);
            }
        }
    }

    /// The job wrote `n` bytes into its destination's (slot [`DST`](JobRecord::DST), one
    /// buffer) tailroom: the destination's data section grows by them when the job is
    /// delivered, not before, so that other jobs submitted meanwhile see the same room,
    /// as on DOCA. `InvalidValue` when the tailroom is smaller (nothing changes then).
    #[inline]
    pub fn grow_dst_at_delivery(&self, n: usize) -> Result<(), Error> {
        let Some(d) = self.buf(Self::DST) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the job has no destination",
            ));
        };
        let (at, room) = self.dst_tail(d);
        if n > room {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "data would grow past the end of the destination buffer",
            ));
        }
        let data = d.data_span().0;
        self.dst_len
            .store(at - data + n, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Takes the destination's data length as the job is submitted (see
    /// [`dst_tail`](JobRecord::dst_tail)).
    #[inline]
    pub(crate) fn take_dst_base(&mut self) {
        self.dst_base = match self.buf(Self::DST) {
            Some(d) if d.next().is_none() => {
                if self.flags & Self::OVERWRITES_DST != 0 {
                    0
                } else {
                    d.data_len()
                }
            }
            _ => NO_LEN,
        };
    }

    /// The destination's data length as the job was submitted, when it was taken (one
    /// destination buffer).
    #[inline]
    pub fn dst_base(&self) -> Option<usize> {
        (self.dst_base != NO_LEN).then_some(self.dst_base)
    }

    /// The tailroom of `d` where this job writes: for its destination (one buffer), the
    /// room after the data the destination held when the job was submitted, as on DOCA
    /// (jobs in flight into one destination all see the same room, whatever was
    /// delivered since); for any other buffer, its tailroom now.
    #[inline]
    pub fn dst_tail(&self, d: &BufDesc) -> (usize, usize) {
        match self.buf(Self::DST) {
            Some(x) if self.dst_base != NO_LEN && std::ptr::eq(x, d) => {
                d.tail_span_after(self.dst_base)
            }
            _ => d.tail_span(),
        }
    }

    /// Makes what the job wrote visible (see
    /// [`grow_dst_at_delivery`](JobRecord::grow_dst_at_delivery)): the engine calls it as
    /// it delivers the job's completion.
    #[inline(always)]
    pub(crate) fn deliver_results(&mut self) {
        if *self.dst_len.get_mut() != NO_LEN {
            self.deliver_dst_len();
        }
    }

    #[inline(never)]
    fn deliver_dst_len(&mut self) {
        let n = std::mem::replace(self.dst_len.get_mut(), NO_LEN);
        if let Some(d) = self.buf(Self::DST) {
            d.data_len.store(n, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// `Ok` when every buffer of the job (each element of a list) has its data section
    /// inside its mmap's memory range ([`BufDesc::check_data_section`]). Allocates
    /// nothing unless it fails.
    #[inline]
    pub fn check_data_sections(&self) -> Result<(), Error> {
        for &p in &self.bufs {
            if p.is_null() {
                continue;
            }
            // SAFETY: a slot holds a live descriptor while the record holds it (owned)
            // or the submitter keeps it (borrowed, `set_buf_raw`'s contract).
            let mut e = Some(unsafe { &*p });
            while let Some(d) = e {
                d.check_data_section()?;
                e = d.next();
            }
        }
        Ok(())
    }

    /// Takes a reference of every borrowed buffer for as long as the job is in flight,
    /// so that a program releasing its own reference early cannot free a buffer an
    /// engine thread is using. `BadState` when a buffer was already returned to its
    /// inventory (nothing stays pinned then). Allocates nothing.
    #[inline]
    pub fn pin_borrowed(&mut self) -> Result<(), Error> {
        if self.borrowed & !self.pinned == 0 {
            return Ok(());
        }
        for i in 0..MAX_JOB_BUFS {
            let p = self.bufs[i];
            if self.borrowed & !self.pinned & (1 << i) == 0 {
                continue;
            }
            // SAFETY: a borrowed slot holds a descriptor the submitter keeps live at
            // least until submission returns (`set_buf_raw`'s contract); descriptors stay
            // in their slab, so a released one is seen with refcount 0.
            if let Err(e) = unsafe { &*p }.pin() {
                self.unpin();
                return Err(e);
            }
            self.owned |= 1 << i;
            self.pinned |= 1 << i;
        }
        Ok(())
    }

    /// Releases the references [`pin_borrowed`](JobRecord::pin_borrowed) took; the
    /// slots stay borrowed (the record can run again).
    #[inline]
    pub fn unpin(&mut self) {
        if self.pinned == 0 {
            return;
        }
        for i in 0..MAX_JOB_BUFS {
            self.unpin_slot(i);
        }
    }

    #[inline]
    fn unpin_slot(&mut self, i: usize) {
        if self.pinned & (1 << i) == 0 {
            return;
        }
        self.pinned &= !(1 << i);
        self.owned &= !(1 << i);
        if let Some(d) = NonNull::new(self.bufs[i]) {
            // SAFETY: this record holds the pin, which keeps the descriptor live; the
            // pointer stays in the slot (the submitter may still hold its own reference).
            unsafe { d.as_ref().unpin() };
        }
    }

    #[inline]
    /// The descriptor in slot `i`, if any.
    pub fn buf(&self, i: usize) -> Option<&BufDesc> {
        // SAFETY: slots hold live descriptors while the record exists (owned references,
        // or borrowed ones the submitter keeps alive).
        unsafe { self.bufs.get(i)?.as_ref() }
    }

    #[inline]
    /// Takes back the owned buffer in slot `i` (`None` for empty or borrowed slots).
    pub fn take_buf(&mut self, i: usize) -> Option<Buf> {
        if i >= MAX_JOB_BUFS || self.owned & !self.pinned & (1 << i) == 0 {
            return None;
        }
        self.owned &= !(1 << i);
        let p = std::mem::replace(&mut self.bufs[i], ptr::null_mut());
        // SAFETY: the record owned one reference of this descriptor.
        NonNull::new(p).map(|d| unsafe { Buf::from_raw(d) })
    }
}

impl Drop for JobRecord {
    fn drop(&mut self) {
        self.unpin();
        for i in 0..MAX_JOB_BUFS {
            drop(self.take_buf(i));
        }
    }
}

/// A completion event (`struct doca_event`): the job type, the job's user data and the
/// result (`DOCA_SUCCESS` or the job's error code, as a `u64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The job type.
    pub job_type: u32,
    /// The job's user data.
    pub user_data: Data,
    /// 0 on success, else the job's `doca_error_t`.
    pub result: u64,
}

impl Event {
    /// The job's outcome.
    pub fn status(&self) -> Result<(), Error> {
        match Error::from_raw(self.result as i32) {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }
}

/// A finished job: its event and its record (buffers come back with
/// [`take_buf`](Completion::take_buf)).
#[derive(Debug)]
pub struct Completion {
    /// The failure, with its context, when the job failed.
    pub error: Option<Error>,
    /// The job record, with the buffers it owned.
    pub record: JobRecord,
    /// For a graph completion (`JOB_GRAPH`): the instance, with its nodes' results.
    pub graph_instance: Option<crate::graph::GraphInstance>,
}

impl Completion {
    /// The completion of `record` run with result `r`.
    #[inline]
    pub(crate) fn of(record: JobRecord, r: Result<(), Error>) -> Completion {
        Completion {
            error: r.err(),
            record,
            graph_instance: None,
        }
    }

    /// The completion event (`struct doca_event`): job type, user data and result.
    #[inline]
    pub fn event(&self) -> Event {
        Event {
            job_type: self.record.job_type,
            user_data: self.record.user_data,
            result: self.error.as_ref().map_or(0, |e| e.raw() as u64),
        }
    }

    #[inline]
    /// Takes back the owned buffer in slot `i`.
    pub fn take_buf(&mut self, i: usize) -> Option<Buf> {
        self.record.take_buf(i)
    }

    /// The job's outcome.
    pub fn status(&self) -> Result<(), Error> {
        match &self.error {
            None => Ok(()),
            Some(e) => Err(e.clone()),
        }
    }
}

/// What `progress_retrieve` says when it has no successful completion to give.
#[derive(Debug)]
pub enum RetrieveError {
    /// Nothing completed (`DOCA_ERROR_AGAIN`).
    Again,
    /// A job failed (`DOCA_ERROR_IO_FAILED`): its completion, whose event result holds
    /// the job's error.
    IoFailed(Completion),
}

impl RetrieveError {
    /// The DOCA code: `Again` or `IoFailed`.
    pub fn code(&self) -> ErrorCode {
        match self {
            RetrieveError::Again => ErrorCode::Again,
            RetrieveError::IoFailed(_) => ErrorCode::IoFailed,
        }
    }
}

impl fmt::Display for RetrieveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetrieveError::Again => write!(f, "DOCA_ERROR_AGAIN: no job has completed"),
            RetrieveError::IoFailed(c) => match &c.error {
                Some(e) => write!(f, "DOCA_ERROR_IO_FAILED: job failed: {e}"),
                None => write!(f, "DOCA_ERROR_IO_FAILED"),
            },
        }
    }
}

impl std::error::Error for RetrieveError {}

/// A typed job of some library: it turns into the work queue's fixed record, and the
/// library's context is the one it must be submitted with.
pub trait Job {
    /// The record, owning the job's buffers while in flight.
    fn into_record(self) -> JobRecord;
}

/// A record made by hand (or with its job type chosen at run time) is submitted as it is.
impl Job for JobRecord {
    #[inline]
    fn into_record(self) -> JobRecord {
        self
    }
}

impl From<RetrieveError> for Error {
    /// `Again`, or the failed job's own error.
    fn from(e: RetrieveError) -> Error {
        match e {
            RetrieveError::Again => Error::with_context(ErrorCode::Again, "no job has completed"),
            RetrieveError::IoFailed(c) => {
                c.error.unwrap_or_else(|| Error::new(ErrorCode::IoFailed))
            }
        }
    }
}
