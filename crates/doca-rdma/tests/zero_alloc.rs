//! Once connected and warmed up, RDMA writes, reads and send/receive round trips
//! through two contexts allocate nothing: not the submitting thread, not the progress
//! engines, not the NICs (the allocation counter counts every thread of the process).

use doca_core::exec::{Pe, PeEvent};
use doca_core::{AccessFlags, BufInventory, Data, JobRecord, Mmap, device};
use doca_rdma::{JOB_READ, JOB_RECV, JOB_SEND, JOB_WRITE, Rdma, slot};
use doca_testkit::allocations_in;
use std::sync::Arc;

#[global_allocator]
static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;

const MEM: usize = 1 << 20;

struct Side {
    rdma: Rdma,
    pe: Pe,
    conn: Arc<doca_rdma::Connection>,
    desc: Vec<u8>,
}

fn side(dev: &doca_core::Dev) -> Side {
    let rdma = Rdma::new(dev).unwrap();
    rdma.set_permissions(
        (AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE).bits(),
    )
    .unwrap();
    let pe = Pe::new().unwrap();
    pe.connect(rdma.ctx()).unwrap();
    pe.start_ctx(rdma.ctx()).unwrap();
    let (desc, conn) = rdma.export().unwrap();
    Side {
        rdma,
        pe,
        conn,
        desc,
    }
}

fn mmap(dev: &doca_core::Dev, remote: AccessFlags) -> Mmap {
    let mut m = Mmap::new();
    m.set_memory(vec![1u8; MEM]).unwrap();
    m.set_permissions(AccessFlags::LOCAL_READ_WRITE | remote)
        .unwrap();
    m.dev_add(dev).unwrap();
    m.start().unwrap();
    m
}

/// Waits for `n` completions on `pe`, all successful; the receives among them.
fn reap(pe: &Pe, n: usize) -> usize {
    let (mut got, mut recvs) = (0, 0);
    let t = std::time::Instant::now();
    while got < n {
        assert!(t.elapsed().as_secs() < 10, "reap: {got} of {n}");
        pe.progress(|ev| {
            if let PeEvent::Task(c) = ev {
                c.status().expect("task");
                got += 1;
                if c.record.job_type == JOB_RECV {
                    recvs += 1;
                }
            }
        });
    }
    recvs
}

#[test]
fn the_rdma_data_path_allocates_nothing() {
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let a = side(&dev);
    let b = side(&dev);
    a.rdma.connect(&b.desc, &a.conn).unwrap();
    b.rdma.connect(&a.desc, &b.conn).unwrap();
    let exported = mmap(&dev, AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE);
    let remote =
        Mmap::create_from_export(Data(0), &exported.export_rdma(&dev).unwrap(), &dev).unwrap();
    let local = mmap(&dev, AccessFlags::empty());
    let mut inv = BufInventory::new(16).unwrap();
    inv.start().unwrap();
    let (pl, _) = local.memrange().unwrap();
    let (pr, _) = remote.memrange().unwrap();
    let conn_a = Arc::as_ptr(&a.conn) as usize as u64;
    let conn_b = Arc::as_ptr(&b.conn) as usize as u64;

    let round = || {
        // A write and a read of 64 KiB.
        for (t, ud) in [(JOB_WRITE, 1u64), (JOB_READ, 2)] {
            // SAFETY: offsets inside both memories.
            let (l, r) = unsafe { (pl.add(4096), pr.add(4096)) };
            let (src, dst) = if t == JOB_WRITE {
                (
                    inv.buf_by_data(&local, l, 65536).unwrap(),
                    inv.buf_by_addr(&remote, r, 65536).unwrap(),
                )
            } else {
                (
                    inv.buf_by_data(&remote, r, 65536).unwrap(),
                    inv.buf_by_addr(&local, l, 65536).unwrap(),
                )
            };
            let mut rec = JobRecord::new(t, Data(ud));
            rec.set_buf(slot::SRC, src);
            rec.set_buf(slot::DST, dst);
            rec.params[slot::CONN] = conn_a;
            // SAFETY: the record owns its buffers; nothing else touches their bytes.
            unsafe { a.rdma.submit(rec) }.map_err(|(e, _)| e).unwrap();
            reap(&a.pe, 1);
        }
        // A 64 B message from A into a receive B posted.
        // SAFETY: inside the memory.
        let rb = inv
            .buf_by_addr(&local, unsafe { pl.add(MEM - 4096) }, 64)
            .unwrap();
        let mut rec = JobRecord::new(JOB_RECV, Data(3));
        rec.set_buf(slot::DST, rb);
        // SAFETY: as above.
        unsafe { b.rdma.submit(rec) }.map_err(|(e, _)| e).unwrap();
        let sb = inv.buf_by_data(&local, pl, 64).unwrap();
        let mut rec = JobRecord::new(JOB_SEND, Data(4));
        rec.set_buf(slot::SRC, sb);
        rec.params[slot::CONN] = conn_a;
        // SAFETY: as above.
        unsafe { a.rdma.submit(rec) }.map_err(|(e, _)| e).unwrap();
        assert_eq!(reap(&b.pe, 1), 1);
        // B answers: its send carries the answer to A's.
        let sb = inv.buf_by_data(&local, pl, 64).unwrap();
        let mut rec = JobRecord::new(JOB_SEND, Data(5));
        rec.set_buf(slot::SRC, sb);
        rec.params[slot::CONN] = conn_b;
        // SAFETY: as above.
        let rb = inv
            .buf_by_addr(&local, unsafe { pl.add(MEM - 8192) }, 64)
            .unwrap();
        let mut rrec = JobRecord::new(JOB_RECV, Data(6));
        rrec.set_buf(slot::DST, rb);
        // SAFETY: as above.
        unsafe { a.rdma.submit(rrec) }.map_err(|(e, _)| e).unwrap();
        // SAFETY: as above.
        unsafe { b.rdma.submit(rec) }.map_err(|(e, _)| e).unwrap();
        // A: its send's completion and the receive; B: its send's.
        let mut recvs = 0;
        let mut done = 0;
        let t = std::time::Instant::now();
        while done < 3 {
            assert!(t.elapsed().as_secs() < 10, "round end: {done} of 3");
            for pe in [&a.pe, &b.pe] {
                pe.progress(|ev| {
                    if let PeEvent::Task(c) = ev {
                        c.status().expect("task");
                        done += 1;
                        if c.record.job_type == JOB_RECV {
                            recvs += 1;
                        }
                    }
                });
            }
        }
        assert_eq!(recvs, 1);
    };
    for _ in 0..200 {
        round();
    }
    let n = allocations_in(|| {
        for _ in 0..500 {
            round();
        }
    });
    assert_eq!(n, 0, "{n} allocations in 500 rounds of the data path");
    for s in [&a, &b] {
        let _ = s.pe.stop_ctx(s.rdma.ctx());
        let t = std::time::Instant::now();
        while s.rdma.ctx().phase() != doca_core::exec::CtxPhase::Idle {
            assert!(t.elapsed().as_secs() < 10, "the context did not stop");
            s.pe.progress(|_| {});
        }
    }
}
