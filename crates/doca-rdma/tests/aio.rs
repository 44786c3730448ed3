//! RDMA on tokio: two contexts' jobs as futures on event-driven work queues
//! (`AsyncWorkQ`), with no thread blocked and no busy polling.

use doca_core::aio::AsyncWorkQ;
use doca_core::{AccessFlags, BufInventory, Data, Mmap, WorkQ, device};
use doca_rdma::Rdma;
use doca_rdma::jobs::{Atomic, AtomicOp, Read, Received, Recv, Send, Write};
use doca_rdma::nic::RecvOpcode;

fn mmap(dev: &doca_core::Dev, len: usize, remote: AccessFlags) -> Mmap {
    let mut m = Mmap::new();
    m.set_memory(vec![0u8; len]).unwrap();
    m.set_permissions(AccessFlags::LOCAL_READ_WRITE | remote)
        .unwrap();
    m.dev_add(dev).unwrap();
    m.start().unwrap();
    m
}

#[tokio::test(flavor = "current_thread")]
async fn jobs_are_futures_on_event_driven_work_queues() {
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let side = || {
        let r = Rdma::new(&dev).unwrap();
        r.set_permissions(
            (AccessFlags::LOCAL_READ_WRITE
                | AccessFlags::RDMA_READ
                | AccessFlags::RDMA_WRITE
                | AccessFlags::RDMA_ATOMIC)
                .bits(),
        )
        .unwrap();
        r.ctx().start().unwrap();
        let wq = AsyncWorkQ::new(WorkQ::new(16).unwrap()).unwrap();
        wq.attach(r.ctx()).unwrap();
        (r, wq)
    };
    let (a, wqa) = side();
    let (b, wqb) = side();
    let (da, ca) = a.export().unwrap();
    let (db, cb) = b.export().unwrap();
    a.connect(&db, &ca).unwrap();
    b.connect(&da, &cb).unwrap();

    let exported = mmap(
        &dev,
        1 << 16,
        AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE | AccessFlags::RDMA_ATOMIC,
    );
    let remote =
        Mmap::create_from_export(Data(0), &exported.export_rdma(&dev).unwrap(), &dev).unwrap();
    let local = mmap(&dev, 1 << 16, AccessFlags::empty());
    let mut inv = BufInventory::new(32).unwrap();
    inv.start().unwrap();

    // A write, awaited: the bytes are in B's memory when it completes.
    let mut src = inv.buf_at(&local, 0, 4096).unwrap();
    src.append(&[0x5a; 4096]).unwrap();
    let dst = inv.buf_at(&remote, 0, 4096).unwrap();
    let done = wqa
        .submit_job(a.ctx(), Write::new(src, dst, 1))
        .map_err(|(e, _)| e)
        .unwrap()
        .await;
    done.status().unwrap();
    let mut back = vec![0u8; 4096];
    exported.read_at(0, &mut back).unwrap();
    assert!(back.iter().all(|&x| x == 0x5a));

    // A read of it, awaited.
    let mut rsrc = inv.buf_at(&remote, 0, 4096).unwrap();
    rsrc.set_data_range(0, 4096).unwrap();
    let rdst = inv.buf_at(&local, 8192, 4096).unwrap();
    let mut done = wqa
        .submit_job(a.ctx(), Read::new(rsrc, rdst, 2))
        .map_err(|(e, _)| e)
        .unwrap()
        .await;
    done.status().unwrap();
    let got = done.take_buf(doca_rdma::slot::DST).unwrap();
    assert_eq!(got.data_to_vec(), vec![0x5a; 4096]);

    // A fetch-and-add.
    let mut target = inv.buf_at(&remote, 64, 8).unwrap();
    target.set_data_range(0, 8).unwrap();
    let result = inv.buf_at(&local, 16384, 8).unwrap();
    let done = wqa
        .submit_job(
            a.ctx(),
            Atomic::new(target, result, AtomicOp::FetchAdd(9), 3).on(&ca),
        )
        .map_err(|(e, _)| e)
        .unwrap()
        .await;
    done.status().unwrap();
    let mut v = [0u8; 8];
    exported.read_at(64, &mut v).unwrap();
    assert_eq!(u64::from_ne_bytes(v), 0x5a5a_5a5a_5a5a_5a5a + 9);

    // A receive on B and a send with immediate from A, both in flight at once.
    let rbuf = inv.buf_at(&local, 32768, 256).unwrap();
    let recv = wqb
        .submit_job(b.ctx(), Recv::new(Some(rbuf), 4))
        .map_err(|(e, _)| e)
        .unwrap();
    let mut msg = inv.buf_at(&local, 40000, 64).unwrap();
    msg.append(b"over tokio").unwrap();
    let send = wqa
        .submit_job(a.ctx(), Send::new(msg, 5).with_immediate(77))
        .map_err(|(e, _)| e)
        .unwrap();
    let (mut r, s) = tokio::join!(recv, send);
    s.status().unwrap();
    r.status().unwrap();
    let got = Received::of(&r.record).unwrap();
    assert_eq!(got.len, 10);
    assert_eq!(got.opcode, RecvOpcode::SendImm);
    assert_eq!(got.immediate, Some(77));
    assert_eq!(
        r.take_buf(doca_rdma::slot::DST).unwrap().data_to_vec(),
        b"over tokio"
    );

    wqa.detach(a.ctx()).unwrap();
    wqb.detach(b.ctx()).unwrap();
    a.ctx().stop().unwrap();
    b.ctx().stop().unwrap();
}
