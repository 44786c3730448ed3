//! Sequences of Rust API calls on mmaps, inventories and buffers (handles, shared
//! references, data sections, lists), checked after every call against what the API
//! promises: a data section inside its mmap, rooms that add up (inside the buffer) or
//! run to the end of the mmap (outside it), bytes that read back as written, and, once
//! every handle is gone, every descriptor back in its inventory and every mmap free of
//! buffers.

#![no_main]

use arbitrary::Arbitrary;
use doca_core::{Buf, BufInventory, Mmap};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Op {
    NewMmap {
        size: u16,
    },
    StopMmap(u8),
    StartMmap(u8),
    DestroyMmap(u8),
    NewInventory {
        n: u8,
    },
    StopInventory(u8),
    DestroyInventory(u8),
    BufAt {
        inv: u8,
        mmap: u8,
        off: u16,
        len: u16,
    },
    BufWithData {
        inv: u8,
        mmap: u8,
        off: u16,
        len: u16,
    },
    Dup {
        inv: u8,
        h: u8,
    },
    RefAdd(u8),
    Drop(u8),
    Release(u8),
    SetDataRange {
        h: u8,
        off: u16,
        len: u16,
    },
    Append {
        h: u8,
        len: u16,
        byte: u8,
    },
    WriteData {
        h: u8,
        len: u16,
        byte: u8,
    },
    ResetDataLen(u8),
    Chain {
        a: u8,
        b: u8,
    },
    UnchainAt {
        h: u8,
        i: u8,
    },
    Read(u8),
    MmapWrite {
        mmap: u8,
        off: u16,
        len: u8,
        byte: u8,
    },
}

fn pick<T>(v: &[T], i: u8) -> Option<usize> {
    (!v.is_empty()).then(|| i as usize % v.len())
}

fn check(b: &Buf) {
    let head = b.head() as usize;
    let end = head + b.len();
    let (lo, hi) = b.mmap_range();
    let (d, l) = b.data_span();
    assert!(lo <= head && end <= hi, "buffer outside its mmap");
    assert!(d >= lo && d + l <= hi, "data section outside the mmap");
    if b.len() > 0 && d >= head && d + l <= end {
        assert_eq!(b.headroom() + b.data_len() + b.tailroom(), b.len());
    } else {
        // A data section set outside the buffer (or an empty buffer): the room runs to
        // the end of the mmap's memory.
        assert_eq!(b.headroom(), d.saturating_sub(head));
        assert_eq!(b.tailroom(), hi - (d + l));
    }
    assert_eq!(b.data_to_vec().len(), b.data_len());
    assert!(b.refcount() >= 1);
    let mut n = 0usize;
    for e in b.iter() {
        n += e.data_len();
    }
    assert_eq!(n, b.list_data_len());
}

fuzz_target!(|ops: Vec<Op>| {
    let mut mmaps: Vec<Mmap> = Vec::new();
    let mut invs: Vec<(BufInventory, u32)> = Vec::new();
    let mut bufs: Vec<Buf> = Vec::new();
    for op in ops.into_iter().take(256) {
        match op {
            Op::NewMmap { size } => {
                if mmaps.len() < 4 {
                    let mut m = Mmap::new();
                    m.set_memory(vec![0u8; 1 + size as usize % 8192]).unwrap();
                    m.start().unwrap();
                    mmaps.push(m);
                }
            }
            Op::StopMmap(i) => {
                if let Some(i) = pick(&mmaps, i) {
                    let _ = mmaps[i].stop();
                }
            }
            Op::StartMmap(i) => {
                if let Some(i) = pick(&mmaps, i) {
                    let _ = mmaps[i].start();
                }
            }
            Op::DestroyMmap(i) => {
                if let Some(i) = pick(&mmaps, i) {
                    let m = mmaps.swap_remove(i);
                    if let Err((m, _)) = m.destroy() {
                        mmaps.push(m);
                    }
                }
            }
            Op::NewInventory { n } => {
                if invs.len() < 3 {
                    let n = 1 + n as u32 % 16;
                    let mut inv = BufInventory::new(n as usize).unwrap();
                    inv.start().unwrap();
                    invs.push((inv, n));
                }
            }
            Op::StopInventory(i) => {
                if let Some(i) = pick(&invs, i) {
                    let _ = invs[i].0.stop();
                    let _ = invs[i].0.start();
                }
            }
            Op::DestroyInventory(i) => {
                if let Some(i) = pick(&invs, i) {
                    let (inv, n) = invs.swap_remove(i);
                    if let Err((inv, _)) = inv.destroy() {
                        invs.push((inv, n));
                    }
                }
            }
            Op::BufAt {
                inv,
                mmap,
                off,
                len,
            }
            | Op::BufWithData {
                inv,
                mmap,
                off,
                len,
            } => {
                let with_data = matches!(op, Op::BufWithData { .. });
                if let (Some(i), Some(m)) = (pick(&invs, inv), pick(&mmaps, mmap)) {
                    let (off, len) = (off as usize, len as usize);
                    let r = if with_data {
                        invs[i].0.buf_with_data_at(&mmaps[m], off, len)
                    } else {
                        invs[i].0.buf_at(&mmaps[m], off, len)
                    };
                    if let Ok(b) = r {
                        assert!(
                            b.len() == len
                                && b.head() as usize >= mmaps[m].memrange().unwrap().0 as usize
                        );
                        bufs.push(b);
                    }
                }
            }
            Op::Dup { inv, h } => {
                if let (Some(i), Some(h)) = (pick(&invs, inv), pick(&bufs, h)) {
                    if let Ok(b) = invs[i].0.buf_dup(&bufs[h]) {
                        bufs.push(b);
                    }
                }
            }
            Op::RefAdd(h) => {
                if let Some(h) = pick(&bufs, h) {
                    if let Ok(b) = bufs[h].refcount_add() {
                        bufs.push(b);
                    }
                }
            }
            Op::Drop(h) => {
                if let Some(h) = pick(&bufs, h) {
                    drop(bufs.swap_remove(h));
                }
            }
            Op::Release(h) => {
                if let Some(h) = pick(&bufs, h) {
                    let _ = bufs.swap_remove(h).release();
                }
            }
            Op::SetDataRange { h, off, len } => {
                if let Some(h) = pick(&bufs, h) {
                    let _ = bufs[h].set_data_range(off as usize, len as usize);
                }
            }
            Op::Append { h, len, byte } | Op::WriteData { h, len, byte } => {
                let write = matches!(op, Op::WriteData { .. });
                if let Some(h) = pick(&bufs, h) {
                    let bytes = vec![byte; len as usize % 4096];
                    let before = bufs[h].data_to_vec();
                    let r = if write {
                        bufs[h].write_data(&bytes)
                    } else {
                        bufs[h].append(&bytes)
                    };
                    let after = bufs[h].data_to_vec();
                    match (r, write) {
                        (Ok(()), false) => assert_eq!(after, [before, bytes].concat()),
                        (Ok(()), true) => assert_eq!(after, bytes),
                        (Err(_), false) => {
                            assert_eq!(after, before, "a refused append changed the data")
                        }
                        (Err(_), true) => {}
                    }
                }
            }
            Op::ResetDataLen(h) => {
                if let Some(h) = pick(&bufs, h) {
                    bufs[h].reset_data_len();
                    assert_eq!(bufs[h].data_len(), 0);
                }
            }
            Op::Chain { a, b } => {
                if let (Some(a), Some(b)) = (pick(&bufs, a), pick(&bufs, b)) {
                    if a != b {
                        let second = bufs.swap_remove(b);
                        let a = if a == bufs.len() { b } else { a };
                        let before = bufs[a].num_elements() + second.num_elements();
                        match bufs[a].chain(second) {
                            Ok(()) => assert_eq!(bufs[a].num_elements(), before),
                            Err((_, second)) => bufs.push(second),
                        }
                    }
                }
            }
            Op::UnchainAt { h, i } => {
                if let Some(h) = pick(&bufs, h) {
                    if let Ok(b) = bufs[h].unchain_at(i as usize) {
                        bufs.push(b);
                    }
                }
            }
            Op::Read(h) => {
                if let Some(h) = pick(&bufs, h) {
                    let mut out = vec![0u8; bufs[h].data_len()];
                    assert_eq!(bufs[h].copy_data_to(&mut out).unwrap(), out.len());
                    let _ = bufs[h].list_data_to_vec();
                }
            }
            Op::MmapWrite {
                mmap,
                off,
                len,
                byte,
            } => {
                if let Some(m) = pick(&mmaps, mmap) {
                    let _ = mmaps[m].write_at(off as usize, &vec![byte; len as usize]);
                }
            }
        }
        bufs.iter().for_each(check);
    }
    drop(bufs);
    for (inv, n) in &invs {
        assert_eq!(inv.num_free_elements(), *n, "a descriptor never came back");
    }
    for m in &mmaps {
        assert_eq!(m.num_bufs(), 0, "an mmap still counts buffers");
    }
});
