//! Libraries whose work needs its input and output contiguous (a compressor, a cipher)
//! run a task on buffer lists through [`run_on_lists`]: the source's elements gathered
//! in order into scratch memory, the output made in scratch memory, then spread over
//! the destination's elements in order, each up to its tailroom. Memory imported from
//! another process of this machine (host memory a DPU process created an mmap from)
//! goes the same way ([`staged`]): its bytes are read and written through the import.

use super::job::JobRecord;
use crate::device::Dev;
use crate::error::{Error, ErrorCode, Result};
use crate::memory::{BufDesc, with_io_locked};
use std::cell::RefCell;

/// Scratch memory kept between tasks (more is given back after a task).
const SCRATCH_KEEP: usize = 64 << 20;

/// Each thread's scratch memory: the gathered source and the output. Reused, so the
/// data path allocates only when a task needs more than any before it on the thread.
struct Scratch {
    input: Vec<u8>,
    output: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = const {
        RefCell::new(Scratch { input: Vec::new(), output: Vec::new() })
    };
}

/// Runs `work(input, output)` for a task whose source or destination is a list: the
/// input is the source's data (every element's, in order), the output has room for
/// the destination's tailroom (every element's; for a single destination, its room as
/// the task was submitted), at most `max_out` bytes. `work` returns how many output
/// bytes it made; they are copied to the destination's elements in order and the
/// destination grows by as much (a single destination when the task is delivered, a
/// list's elements now). On an error of `work` nothing is written to the destination.
pub fn run_on_lists(
    job: &JobRecord,
    src: &BufDesc,
    dst: &BufDesc,
    max_out: usize,
    work: impl FnOnce(&[u8], &mut [u8]) -> Result<usize>,
) -> Result<usize> {
    let single = dst.next().is_none();
    let base = if single { job.dst_base() } else { None };
    let room: usize = if single {
        job.dst_tail(dst).1
    } else {
        dst.iter().map(BufDesc::tailroom).sum()
    };
    let room = room.min(max_out);
    let written = with_io_locked(&[src], &[dst], || {
        SCRATCH.with_borrow_mut(|s| {
            s.input.clear();
            for e in src.iter() {
                let (p, n) = e.data_span();
                if let Some(r) = e.remote() {
                    let at = s.input.len();
                    s.input.resize(at + n, 0);
                    // SAFETY: the scratch vector has room for the n bytes at `at`.
                    unsafe { r.read_raw(p, s.input[at..].as_mut_ptr(), n) }?;
                    continue;
                }
                // SAFETY: the element's data lies inside its mmap, kept alive by the
                // job's buffers, in this process (the library checked); the io locks
                // give this job its bytes, and nothing writes them during this copy.
                s.input
                    .extend_from_slice(unsafe { std::slice::from_raw_parts(p as *const u8, n) });
            }
            s.output.clear();
            s.output.resize(room, 0);
            let r = work(&s.input, &mut s.output);
            if let Ok(written) = r {
                let written = written.min(room);
                let mut done = 0;
                for d in dst.iter() {
                    if done == written {
                        break;
                    }
                    let (p, n) = match base {
                        Some(b) => d.tail_span_after(b),
                        None => d.tail_span(),
                    };
                    let n = n.min(written - done);
                    if let Some(r) = d.remote() {
                        // SAFETY: the scratch vector holds the n bytes at `done`.
                        unsafe { r.write_raw(p, s.output[done..].as_ptr(), n) }?;
                        done += n;
                        continue;
                    }
                    // SAFETY: [p, p+n) is the element's tailroom inside its mmap, kept
                    // alive by the job's buffers, in this process (the library
                    // checked), held by this job through the io locks; the bytes come
                    // from the scratch vector, which no buffer's memory overlaps.
                    unsafe {
                        std::ptr::copy_nonoverlapping(s.output[done..].as_ptr(), p as *mut u8, n)
                    };
                    done += n;
                }
            }
            if s.input.capacity() > SCRATCH_KEEP {
                s.input = Vec::new();
            }
            if s.output.capacity() > SCRATCH_KEEP {
                s.output = Vec::new();
            }
            r
        })
    })
    .ok_or_else(|| {
        Error::with_context(ErrorCode::InvalidValue, "the task spans more than 16 mmaps")
    })??;
    if single {
        job.grow_dst_at_delivery(written)?;
        return Ok(written);
    }
    let mut left = written;
    for d in dst.iter() {
        if left == 0 {
            break;
        }
        let n = left.min(d.tailroom());
        d.grow_data_len(n)?;
        left -= n;
    }
    Ok(written)
}

/// Whether a task on `src` and `dst` must run through [`run_on_lists`]: one of them is
/// a list, or an element is memory imported from another process.
pub fn staged(src: &BufDesc, dst: &BufDesc) -> bool {
    src.next().is_some() || dst.next().is_some() || src.remote().is_some() || dst.remote().is_some()
}

/// The source and destination of a task that works on this machine's memory (a
/// compressor, a cipher): each one buffer or a list of at most `max_list` elements,
/// every element this process's memory or memory it imported from another process of
/// this machine, reachable by the device, the destination's writable. `lib` names the
/// library in the messages ("compress", "AES-GCM").
pub fn local_src_dst<'a>(
    job: &'a JobRecord,
    dev: &Dev,
    lib: &str,
    max_list: u32,
) -> Result<(&'a BufDesc, &'a BufDesc)> {
    let (Some(src), Some(dst)) = (job.buf(JobRecord::SRC), job.buf(JobRecord::DST)) else {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!("a {lib} task needs a source and a destination buffer"),
        ));
    };
    if src.next().is_none() && dst.next().is_none() {
        check_local(src, dev, lib, false)?;
        return check_local(dst, dev, lib, true).map(|()| (src, dst));
    }
    for (list, what, writes) in [(src, "source", false), (dst, "destination", true)] {
        let mut n = 0u32;
        for e in list.iter() {
            n += 1;
            if n > max_list {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    format!(
                        "the {what} is a list of more than {max_list} buffers (the {lib} task's max list length)"
                    ),
                ));
            }
            check_local(e, dev, lib, writes)?;
        }
    }
    Ok((src, dst))
}

fn check_local(b: &BufDesc, dev: &Dev, lib: &str, writes: bool) -> Result<()> {
    if let Some(r) = b.remote() {
        if !r.is_local() {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "{lib} tasks work on this machine's memory: memory of another machine is reached with RDMA tasks"
                ),
            ));
        }
        if writes && !r.writable() {
            return Err(r.read_only());
        }
    }
    if !b.mmap_has_device(dev) {
        return Err(Error::with_context(
            ErrorCode::NotPermitted,
            "a buffer's mmap was not given access to the context's device (mmap dev_add)",
        ));
    }
    if writes && !b.mmap_writable() {
        return Err(Error::with_context(
            ErrorCode::NotPermitted,
            "the destination's mmap does not grant write access (DOCA_ACCESS_LOCAL_READ_WRITE)",
        ));
    }
    Ok(())
}
