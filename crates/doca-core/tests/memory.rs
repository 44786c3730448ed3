//! Memory subsystem behaviour: mmaps, buffers, lists, inventories, pools, arrays.

use doca_core::{
    AccessFlags, BufArray, BufInventory, BufPool, Data, ErrorCode, Mmap, devinfo_list,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn started_mmap(size: usize) -> Mmap {
    let mut m = Mmap::new();
    m.set_memory(vec![0u8; size]).unwrap();
    m.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
    m.start().unwrap();
    m
}

fn inventory(n: usize) -> BufInventory {
    let mut inv = BufInventory::new(n).unwrap();
    inv.start().unwrap();
    inv
}

#[test]
fn mmap_lifecycle_and_getters() {
    let dev = devinfo_list().unwrap()[0].open().unwrap();
    let mut m = Mmap::with_user_data(Data(77));
    assert_eq!(m.user_data(), Data(77));
    assert_eq!(m.memrange().unwrap_err().code(), ErrorCode::BadState);
    m.set_memory(vec![1u8; 4096]).unwrap();
    let (addr, len) = m.memrange().unwrap();
    assert!(!addr.is_null());
    assert_eq!(len, 4096);
    m.set_max_num_devices(2).unwrap();
    assert_eq!(m.max_num_devices(), 2);
    m.dev_add(&dev).unwrap();
    assert!(m.has_device(&dev));
    m.set_permissions(AccessFlags::LOCAL_READ_WRITE | AccessFlags::DPU_READ_WRITE)
        .unwrap();
    assert!(m.permissions().local_write());
    assert!(!m.exported() && !m.from_export());
    m.start().unwrap();
    assert!(m.is_started());
    assert_eq!(m.num_bufs(), 0);
    // Restart: stop, reconfigure, start.
    m.stop().unwrap();
    m.dev_rm(&dev).unwrap();
    m.set_memory(vec![2u8; 128]).unwrap();
    m.start().unwrap();
    assert_eq!(m.memrange().unwrap().1, 128);
    let mut b = [0u8; 4];
    m.read_at(124, &mut b).unwrap();
    assert_eq!(b, [2; 4]);
    m.write_at(0, b"abcd").unwrap();
    m.read_at(0, &mut b).unwrap();
    assert_eq!(&b, b"abcd");
    m.destroy().unwrap();
}

#[test]
fn free_cb_runs_once_after_the_last_buffer() {
    let calls = Arc::new(AtomicUsize::new(0));
    let mut m = Mmap::new();
    m.set_memory(vec![0u8; 256]).unwrap();
    let (base, _) = m.memrange().unwrap();
    let base = base as usize;
    let c = Arc::clone(&calls);
    m.set_free_cb(move |addr, len| {
        assert_eq!(addr as usize, base);
        assert_eq!(len, 256);
        c.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    m.start().unwrap();
    let inv = inventory(4);
    let buf = inv.buf_at(&m, 0, 64).unwrap();
    // Destroy refused while a buffer points into it; nothing is lost.
    let (m, e) = m.destroy().unwrap_err();
    assert_eq!(e.code(), ErrorCode::InUse);
    assert_eq!(m.num_bufs(), 1);
    // Dropping the handle keeps the memory alive for the buffer.
    drop(m);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(buf.len(), 64);
    drop(buf);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn foreign_memory() {
    let mut backing = vec![9u8; 512];
    let mut m = Mmap::new();
    // SAFETY: `backing` outlives the mmap and its buffers and is not touched meanwhile.
    unsafe { m.set_memrange(backing.as_mut_ptr(), backing.len()).unwrap() };
    m.start().unwrap();
    let inv = inventory(2);
    let b = inv.buf_with_data_at(&m, 10, 20).unwrap();
    assert_eq!(b.data_to_vec(), vec![9u8; 20]);
    drop(b);
    drop(m);
    assert_eq!(backing[0], 9);
}

#[test]
fn buffer_rooms_and_data() {
    let m = started_mmap(4096);
    let inv = inventory(8);
    let (base, _) = m.memrange().unwrap();
    let addr = base.wrapping_add(100);
    let mut b = inv
        .buf_by_args(&m, addr, 200, addr.wrapping_add(10), 50)
        .unwrap();
    assert_eq!(b.head(), addr);
    assert_eq!(b.len(), 200);
    assert_eq!(b.headroom(), 10);
    assert_eq!(b.data_len(), 50);
    assert_eq!(b.tailroom(), 140);
    assert_eq!(b.mmap_offset(), 100);
    assert_eq!(m.num_bufs(), 1);
    b.reset_data_len();
    assert_eq!(b.data_len(), 0);
    assert_eq!(b.data(), addr.wrapping_add(10));
    b.append(b"xyz").unwrap();
    b.append(b"123").unwrap();
    assert_eq!(b.data_to_vec(), b"xyz123");
    assert_eq!(b.tailroom(), 200 - 10 - 6);
    // Too big for the tailroom: refused, nothing written.
    let big = vec![7u8; 185];
    assert_eq!(b.append(&big).unwrap_err().code(), ErrorCode::InvalidValue);
    assert_eq!(b.data_to_vec(), b"xyz123");
    b.set_data_range(0, 200).unwrap();
    assert_eq!(b.tailroom(), 0);
    b.set_data_range(200, 0).unwrap();
    // A data section may leave the buffer, as DOCA programs set it, but not the mmap
    // (4096 bytes; the buffer starts at 100).
    b.set_data_range(201, 0).unwrap();
    b.set_data_range(100, 101).unwrap();
    assert_eq!(
        b.tailroom(),
        4096 - 100 - 201,
        "a data section outside the buffer: room up to the end of the mmap"
    );
    assert_eq!(
        b.set_data_range(3997, 0).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    assert_eq!(
        b.set_data_range(100, 3897).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    b.set_data(base, 1).unwrap();
    assert_eq!(b.headroom(), 0, "data before the head: no headroom");
    assert_eq!(b.tailroom(), 4095);
    assert_eq!(
        b.set_data(base.wrapping_add(4096), 1).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    b.set_data_range(200, 0).unwrap();
    assert_eq!(
        b.write_data(b"hello").unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    b.set_data_range(0, 0).unwrap();
    b.write_data(b"hello").unwrap();
    assert_eq!(b.data_to_vec(), b"hello");
    let mut out = [0u8; 2];
    assert_eq!(
        b.copy_data_to(&mut out).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    // The bytes are in the mmap at the data address.
    let mut raw = [0u8; 5];
    m.read_at(100, &mut raw).unwrap();
    assert_eq!(&raw, b"hello");
}

#[test]
fn by_addr_and_by_data() {
    let m = started_mmap(1024);
    let inv = inventory(4);
    let (base, _) = m.memrange().unwrap();
    let a = inv.buf_by_addr(&m, base, 64).unwrap();
    assert_eq!((a.data(), a.data_len()), (base, 0));
    let d = inv.buf_by_data(&m, base, 64).unwrap();
    assert_eq!((d.data(), d.data_len()), (base, 64));
    assert_eq!(inv.num_free_elements(), 2);
    drop(a);
    drop(d);
    assert_eq!(inv.num_free_elements(), 4);
}

#[test]
fn refcounts_return_buffers_at_zero() {
    let m = started_mmap(1024);
    let inv = inventory(2);
    let b = inv.buf_at(&m, 0, 64).unwrap();
    assert_eq!(b.refcount(), 1);
    let b2 = b.refcount_add().unwrap();
    assert_eq!(b.refcount(), 2);
    assert_eq!(b.as_ptr(), b2.as_ptr());
    assert_eq!(b2.release().unwrap(), 1);
    assert_eq!(inv.num_free_elements(), 1);
    assert_eq!(b.release().unwrap(), 0);
    assert_eq!(inv.num_free_elements(), 2);
    assert_eq!(m.num_bufs(), 0);
}

#[test]
fn scatter_gather_lists() {
    let m = started_mmap(4096);
    let inv = inventory(8);
    let mut bufs: Vec<_> = (0..4)
        .map(|i| inv.buf_with_data_at(&m, i * 100, 10).unwrap())
        .collect();
    for (i, b) in bufs.iter_mut().enumerate() {
        b.write_data(&[i as u8; 10]).unwrap();
    }
    let mut it = bufs.into_iter();
    let mut head = it.next().unwrap();
    let b1 = it.next().unwrap();
    let p1 = b1.as_ptr();
    head.chain(b1).unwrap();
    let mut tail = it.next().unwrap();
    tail.chain(it.next().unwrap()).unwrap();
    head.chain(tail).unwrap();
    assert_eq!(head.num_elements(), 4);
    assert!(head.is_first() && !head.is_last() && head.is_in_list());
    let last = head.last();
    assert!(last.is_last() && !last.is_first());
    assert_eq!(head.next().unwrap() as *const _ as *mut _, p1);
    assert_eq!(head.list_data_len(), 40);
    let gathered = head.list_data_to_vec();
    assert_eq!(&gathered[..10], &[0; 10]);
    assert_eq!(&gathered[30..], &[3; 10]);

    // Chain rules: a list cannot be chained into itself.
    let mut lone = inv.buf_at(&m, 2000, 10).unwrap();
    let lone_again = lone.refcount_add().unwrap();
    let (e, back) = lone.chain(lone_again).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InUse);
    drop(back);

    // Unchain from position 2: head keeps 2, detached list has 2.
    let detached = head.unchain_at(2).unwrap();
    assert_eq!(head.num_elements(), 2);
    assert_eq!(detached.num_elements(), 2);
    assert!(detached.is_first());
    assert_eq!(
        head.unchain_at(0).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    assert_eq!(
        head.unchain_at(5).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    let second: *const _ = head.next().unwrap();
    let single = head.unchain(second).unwrap();
    assert!(!single.is_in_list());
    assert!(!head.is_in_list());
    assert_eq!(
        head.unchain(&*detached).unwrap_err().code(),
        ErrorCode::InvalidValue
    );

    // Releasing a list head releases the whole list.
    let free_before = inv.num_free_elements();
    drop(detached);
    assert_eq!(inv.num_free_elements(), free_before + 2);
    drop(single);
    drop(head);
    drop(lone);
    assert_eq!(inv.num_free_elements(), 8);
    assert_eq!(m.num_bufs(), 0);
}

#[test]
fn shared_buffers_cannot_change_lists() {
    let m = started_mmap(1024);
    let inv = inventory(4);
    let mut head = inv.buf_at(&m, 0, 10).unwrap();
    let elem = inv.buf_at(&m, 10, 10).unwrap();
    let keep = elem.refcount_add().unwrap();
    let (e, elem) = head.chain(elem).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InUse);
    drop(keep);
    head.chain(elem).unwrap();
    // Several handles of one list may read it, but none may change it.
    let reader = head.refcount_add().unwrap();
    assert_eq!(reader.num_elements(), 2);
    let other = inv.buf_at(&m, 20, 10).unwrap();
    let (e, other) = head.chain(other).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InUse);
    assert_eq!(head.unchain_at(1).unwrap_err().code(), ErrorCode::InUse);
    drop(reader);
    let tail = head.unchain_at(1).unwrap();
    assert_eq!(inv.num_free_elements(), 1);
    drop((head, tail, other));
    assert_eq!(inv.num_free_elements(), 4);
}

#[test]
fn buf_dup_duplicates_descriptors_of_a_list() {
    let m = started_mmap(1024);
    let inv = inventory(8);
    let mut head = inv.buf_with_data_at(&m, 0, 8).unwrap();
    head.write_data(b"abcdefgh").unwrap();
    let mut e = inv.buf_at(&m, 100, 16).unwrap();
    e.append(b"ijk").unwrap();
    head.chain(e).unwrap();
    let other = inventory(4);
    let dup = other.buf_dup(&head).unwrap();
    assert_eq!(dup.num_elements(), 2);
    assert_eq!(dup.list_data_to_vec(), b"abcdefghijk");
    assert_eq!(dup.data(), head.data());
    assert_eq!(dup.next().unwrap().len(), 16);
    assert_ne!(dup.as_ptr(), head.as_ptr());
    assert_eq!(other.num_free_elements(), 2);
    assert_eq!(m.num_bufs(), 4);
    let tiny = inventory(1);
    assert_eq!(tiny.buf_dup(&head).unwrap_err().code(), ErrorCode::NoMemory);
    assert_eq!(tiny.num_free_elements(), 1);
}

#[test]
fn inventory_accounting_and_exhaustion() {
    let m = started_mmap(1024);
    let mut inv = BufInventory::create(Data(5), 3, 0).unwrap();
    assert_eq!(inv.user_data(), Data(5));
    assert_eq!(
        inv.buf_at(&m, 0, 8).unwrap_err().code(),
        ErrorCode::BadState
    );
    inv.start().unwrap();
    let a = inv.buf_at(&m, 0, 8).unwrap();
    let b = inv.buf_at(&m, 8, 8).unwrap();
    let c = inv.buf_at(&m, 16, 8).unwrap();
    assert_eq!(inv.num_free_elements(), 0);
    assert_eq!(
        inv.buf_at(&m, 24, 8).unwrap_err().code(),
        ErrorCode::NoMemory
    );
    inv.stop().unwrap();
    assert_eq!(
        inv.buf_at(&m, 24, 8).unwrap_err().code(),
        ErrorCode::BadState
    );
    assert_eq!(a.len(), 8);
    drop((a, b));
    let (inv, e) = inv.destroy().unwrap_err();
    assert_eq!(e.code(), ErrorCode::InUse);
    drop(c);
    inv.destroy().unwrap();
}

#[test]
fn buffers_move_between_threads() {
    let m = started_mmap(1 << 16);
    let inv = inventory(64);
    let bufs: Vec<_> = (0..64)
        .map(|i| inv.buf_at(&m, i * 1024, 1024).unwrap())
        .collect();
    let handles: Vec<_> = bufs
        .into_iter()
        .enumerate()
        .map(|(i, mut b)| {
            std::thread::spawn(move || {
                b.append(&[i as u8; 1000]).unwrap();
                b.data_to_vec().iter().all(|&x| x == i as u8)
            })
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap());
    }
    assert_eq!(inv.num_free_elements(), 64);
    assert_eq!(m.num_bufs(), 0);
}

#[test]
fn bufpool_carves_aligned_elements() {
    let mut m = Mmap::new();
    m.set_memory(vec![0u8; 4096 + 64]).unwrap();
    assert_eq!(
        BufPool::create(Data(0), 4, 0, 100, 64, &m)
            .unwrap_err()
            .code(),
        ErrorCode::BadState
    );
    m.start().unwrap();
    let mut pool = BufPool::create(Data(3), 8, 0, 100, 128, &m).unwrap();
    assert_eq!(pool.user_data(), Data(3));
    assert_eq!(pool.buf_alloc().unwrap_err().code(), ErrorCode::BadState);
    pool.start().unwrap();
    let bufs: Vec<_> = (0..8).map(|_| pool.buf_alloc().unwrap()).collect();
    for b in &bufs {
        assert_eq!(b.head() as usize % 128, 0);
        assert_eq!(b.len(), 100);
        assert_eq!(b.data_len(), 0);
    }
    let mut heads: Vec<_> = bufs.iter().map(|b| b.head() as usize).collect();
    heads.sort();
    heads.dedup();
    assert_eq!(heads.len(), 8);
    assert_eq!(pool.buf_alloc().unwrap_err().code(), ErrorCode::NoMemory);
    assert_eq!(pool.num_free_elements(), 0);
    drop(bufs);
    assert_eq!(pool.num_free_elements(), 8);
    assert_eq!(pool.num_elements(), 8);
    // Too many elements for the mmap.
    assert_eq!(
        BufPool::create(Data(0), 100, 0, 100, 64, &m)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidValue
    );
    assert_eq!(
        BufPool::create(Data(0), 1, 0, 100, 3, &m)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidValue
    );
    pool.stop().unwrap();
    pool.destroy().unwrap();
}

#[test]
fn buf_array_configuration() {
    let mut m = Mmap::new();
    m.set_memory(vec![0u8; 1024]).unwrap();
    let mut arr = BufArray::create(&m).unwrap();
    assert_eq!(
        arr.set_target_gpu().unwrap_err().code(),
        ErrorCode::NotSupported
    );
    assert_eq!(arr.start().unwrap_err().code(), ErrorCode::BadState);
    arr.set_params(100, 10, 24).unwrap();
    assert_eq!(arr.start().unwrap_err().code(), ErrorCode::BadState); // mmap not started
    m.start().unwrap();
    arr.set_params(100, 11, 0).unwrap();
    assert_eq!(arr.start().unwrap_err().code(), ErrorCode::InvalidValue);
    arr.set_params(100, 10, 24).unwrap();
    arr.start().unwrap();
    let (p, n) = arr.element(9).unwrap();
    assert_eq!(n, 100);
    assert_eq!(p as usize - m.memrange().unwrap().0 as usize, 924);
    assert_eq!(arr.element(10).unwrap_err().code(), ErrorCode::InvalidValue);
    assert_eq!(
        arr.gpu_handle().unwrap_err().code(),
        ErrorCode::NotSupported
    );
    arr.stop().unwrap();
}

#[test]
fn file_mapping_as_memory() {
    let path = std::env::temp_dir().join(format!("doca-mmap-file-{}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    file.set_len(8192).unwrap();
    // SAFETY: the file is private to this test and not resized while mapped.
    let map = unsafe { memmap2::MmapMut::map_mut(&file) }.unwrap();
    let mut m = Mmap::new();
    m.set_memory(map).unwrap();
    m.start().unwrap();
    let inv = inventory(1);
    let mut b = inv.buf_at(&m, 4096, 100).unwrap();
    b.append(b"persisted").unwrap();
    drop(b);
    drop(m);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[4096..4105], b"persisted");
    std::fs::remove_file(&path).unwrap();
}

/// Two handles of one buffer on two threads: one moves the data section about while the
/// other appends, reads and asks for its rooms. Whatever the interleaving, every answer
/// stays inside the mmap and no byte outside it is touched (this used to overflow in
/// `tailroom` and write out of bounds in `append`). A torn update may put the data
/// section outside the buffer, where the room is the mmap's, so the buffer here is the
/// whole mmap, and the memory around the mmap is the guard.
#[test]
fn handles_on_two_threads_cannot_break_the_buffer_bounds() {
    let mut backing = vec![0u8; 3 * 4096];
    let mut m = Mmap::new();
    // SAFETY: the middle page of `backing`, which outlives the mmap and is not touched
    // through `backing` until the mmap is gone.
    unsafe { m.set_memrange(backing.as_mut_ptr().add(4096), 4096) }.unwrap();
    m.start().unwrap();
    let inv = inventory(4);
    let mut a = inv.buf_at(&m, 0, 4096).unwrap();
    let mut b = a.refcount_add().unwrap();
    let (base, _) = m.memrange().unwrap();
    let (lo, hi) = (base as usize, base as usize + 4096);
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(300);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 0usize;
            while std::time::Instant::now() < deadline {
                i = i
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let off = (i >> 20) % 4097;
                let len = (i >> 40) % 4097;
                let _ = b.set_data_range(off, len.min(4096 - off));
                if i.is_multiple_of(7) {
                    b.reset_data_len();
                }
            }
        });
        let chunk = [0xA5u8; 700];
        let mut out = vec![0u8; 4096];
        while std::time::Instant::now() < deadline {
            let (d, l) = a.data_span();
            assert!(d >= lo && d + l <= hi);
            assert!(a.headroom() <= 4096 && a.tailroom() <= 4096);
            let (t, room) = a.tail_span();
            assert!(t >= lo && t + room <= hi);
            let _ = a.append(&chunk[..(d % 700) + 1]);
            let _ = a.copy_data_to(&mut out);
            let _ = a.data_to_vec();
        }
    });
    drop(a);
    drop(m);
    assert!(
        backing[..4096].iter().all(|&x| x == 0),
        "bytes before the mmap were written"
    );
    assert!(
        backing[8192..].iter().all(|&x| x == 0),
        "bytes after the mmap were written"
    );
}

/// Biased ownership: the thread that made an inventory and an mmap updates counts and
/// takes the range lock without atomic operations until another thread touches them.
/// Three threads join the owner while it is busy with both: no reference is lost or
/// doubled, every write lands, and every buffer comes back.
#[test]
fn owner_and_other_threads_share_counts_and_bytes() {
    for round in 0..8 {
        let mmap = started_mmap(64 * 1024);
        let inv = inventory(64);
        let shared = inv.buf_at(&mmap, 0, 4096).unwrap();
        let mut mine = inv.buf_at(&mmap, 4096, 4096).unwrap();
        let theirs: Vec<_> = (0..3)
            .map(|i| inv.buf_at(&mmap, (i + 2) * 4096, 4096).unwrap())
            .collect();
        let go = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for (t, mut b) in theirs.into_iter().enumerate() {
                // Each thread has its own handle on the shared buffer.
                let (shared, go) = (shared.refcount_add().unwrap(), &go);
                s.spawn(move || {
                    while go.load(Ordering::Acquire) == 0 {
                        std::hint::spin_loop();
                    }
                    for i in 0..3000usize {
                        let extra = shared.refcount_add().unwrap();
                        b.reset_data_len();
                        b.append(&((t * 10_000 + i) as u64).to_le_bytes()).unwrap();
                        assert_eq!(b.data_to_vec(), ((t * 10_000 + i) as u64).to_le_bytes());
                        drop(extra);
                    }
                });
            }
            // The owner starts busy and keeps going while the others revoke.
            for i in 0..20_000usize {
                if i == 100 + round * 50 {
                    go.store(1, Ordering::Release);
                }
                let extra = shared.refcount_add().unwrap();
                mine.reset_data_len();
                mine.append(&(i as u64).to_le_bytes()).unwrap();
                drop(extra);
            }
        });
        assert_eq!(shared.refcount(), 1);
        assert_eq!(mine.data_to_vec(), 19_999u64.to_le_bytes());
        drop(mine);
        drop(shared);
        assert_eq!(inv.num_free_elements(), 64);
    }
}

/// A 1.x memory map: started empty, populated chunk by chunk up to its limit, devices
/// added while started, buffers in any one chunk (never across the gap between two),
/// a DMA copy from one chunk into another, and each chunk's free callback called once
/// when the mmap and its buffers are gone.
#[test]
fn chunked_mmap_populate_devices_buffers_and_free_callbacks() {
    use doca_core::exec::Job;
    let dev = devinfo_list().unwrap()[0].open().unwrap();
    let mut mem = vec![0u8; 3 * 8192];
    let base = mem.as_mut_ptr();
    let freed = Arc::new(AtomicUsize::new(0));
    let cb = |freed: &Arc<AtomicUsize>| -> Option<Box<dyn FnOnce(*mut u8, usize) + Send>> {
        let f = Arc::clone(freed);
        Some(Box::new(move |_, len| {
            f.fetch_add(len, Ordering::AcqRel);
        }))
    };
    let mut m = doca_core::Mmap::chunked(Data(5));
    assert_eq!(m.max_num_chunks(), 1);
    // SAFETY: the range is memory this test owns, alive until the mmap is gone.
    let err = unsafe { m.populate(base, 4096, None) }.unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadState, "{err}");
    m.set_max_num_chunks(2).unwrap();
    m.start().unwrap();
    assert_eq!(
        m.set_max_num_chunks(3).unwrap_err().code(),
        ErrorCode::BadState
    );
    m.dev_add(&dev).unwrap();
    // SAFETY: the range is memory this test owns, alive until the mmap is gone.
    unsafe { m.populate(base, 8192, cb(&freed)) }.unwrap();
    // SAFETY: the range is memory this test owns, alive until the mmap is gone.
    let e = unsafe { m.populate(base.add(4096), 8192, None) }.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotPermitted, "overlap: {e}");
    // SAFETY: the range is memory this test owns, alive until the mmap is gone.
    unsafe { m.populate(base.add(16384), 8192, cb(&freed)) }.unwrap();
    assert_eq!(m.num_chunks(), 2);
    // SAFETY: the range is memory this test owns, alive until the mmap is gone.
    let e = unsafe { m.populate(base.add(8192), 4096, None) }.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NoMemory, "{e}");
    // A two-chunk mmap is not exported.
    assert_eq!(
        m.export_dpu(&dev).unwrap_err().code(),
        ErrorCode::NotSupported
    );

    let inv = inventory(8);
    let mut src = inv.buf_at(&m, 100, 512).unwrap();
    src.write_data(&[0xab; 512]).unwrap();
    // Offsets are from the first chunk: the second starts at 16384.
    let dst = inv.buf_at(&m, 16384 + 64, 512).unwrap();
    let gap = inv.buf_at(&m, 8000, 512).unwrap_err();
    assert_eq!(gap.code(), ErrorCode::InvalidValue, "{gap}");
    let dma = doca_dma::Dma::new();
    dma.as_ctx().dev_add(&dev).unwrap();
    dma.as_ctx().start().unwrap();
    let mut wq = doca_core::WorkQ::new(4).unwrap();
    dma.as_ctx().workq_add(&mut wq).unwrap();
    wq.submit(
        dma.as_ctx(),
        doca_dma::MemcpyJob::new(src, dst, 1).into_record(),
    )
    .map_err(|(e, _)| e)
    .unwrap();
    let mut c = wq.wait(Some(std::time::Duration::from_secs(5))).unwrap();
    c.status().unwrap();
    let dst = c.take_buf(doca_dma::MemcpyJob::DST).unwrap();
    assert_eq!(dst.data_to_vec(), vec![0xab; 512]);
    drop(c);
    drop(dst);
    dma.as_ctx().workq_rm(&mut wq).unwrap();
    dma.as_ctx().stop().unwrap();
    // Devices come and go while started; the memory is freed once, chunk by chunk.
    m.dev_rm(&dev).unwrap();
    m.dev_add(&dev).unwrap();
    assert_eq!(freed.load(Ordering::Acquire), 0);
    m.destroy().unwrap();
    assert_eq!(freed.load(Ordering::Acquire), 2 * 8192);
    drop(mem);

    // An mmap with one memory range is not populated.
    let mut one = started_mmap(4096);
    let mut x = [0u8; 64];
    // SAFETY: the range is memory this test owns, alive until the mmap is gone.
    let e = unsafe { one.populate(x.as_mut_ptr(), 64, None) }.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotPermitted);
    assert_eq!(
        one.set_max_num_chunks(2).unwrap_err().code(),
        ErrorCode::BadState
    );
}
