//! The RDMA context on a progress engine: two contexts of one process, connected with
//! exported descriptors, running every task type through jobs.

use doca_core::exec::Pe;
use doca_core::{AccessFlags, BufInventory, Data, ErrorCode, JobRecord, Mmap, device};
use doca_rdma::{
    JOB_ATOMIC_CMP_SWP, JOB_ATOMIC_FETCH_ADD, JOB_READ, JOB_RECV, JOB_SEND, JOB_SEND_IMM,
    JOB_WRITE, JOB_WRITE_IMM, Rdma, slot,
};
use doca_testkit::peer::{self, Peer, hex, unhex};
use std::time::{Duration, Instant};

mod rdma_shared;

use rdma_shared::*;

#[test]
fn every_task_type_between_two_contexts() {
    let a = side();
    let b = side();
    let (da, ca) = a.rdma.export().unwrap();
    let (db, cb) = b.rdma.export().unwrap();
    a.rdma.connect(&db, &ca).unwrap();
    b.rdma.connect(&da, &cb).unwrap();
    // A connection is connected once.
    assert_eq!(
        a.rdma.connect(&db, &ca).unwrap_err().code(),
        ErrorCode::BadState
    );
    let conn_a = std::sync::Arc::as_ptr(&ca) as u64;
    let conn_b = std::sync::Arc::as_ptr(&cb) as u64;

    // B's exported memory, A's local memory.
    let mb = mmap(
        1 << 20,
        AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE | AccessFlags::RDMA_ATOMIC,
    );
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let remote = Mmap::create_from_export(Data(0), &mb.export_rdma(&dev).unwrap(), &dev).unwrap();
    let ma = mmap(1 << 20, AccessFlags::empty());
    let mut inv = BufInventory::new(64).unwrap();
    inv.start().unwrap();
    let (pa, _) = ma.memrange().unwrap();
    let (pr, _) = remote.memrange().unwrap();
    let n = 100_000usize;
    // SAFETY: A's mmap memory, nothing else touches it meanwhile.
    unsafe {
        for i in 0..n {
            *pa.add(i) = (i % 251) as u8;
        }
    }

    // Write A -> B, at the remote buffer's tail.
    let src = inv.buf_by_data(&ma, pa, n).unwrap();
    let dst = inv.buf_by_addr(&remote, pr, n).unwrap();
    // SAFETY: the record owns its buffers; nothing else touches their bytes.
    unsafe {
        a.rdma
            .submit(job(JOB_WRITE, 1, conn_a, Some(src), Some(dst)))
    }
    .unwrap();
    let (_, st) = wait(&a.pe, 1);
    st.unwrap();
    let (pb, _) = mb.memrange().unwrap();
    // SAFETY: B's memory, written before the write completed.
    let got = unsafe { std::slice::from_raw_parts(pb, n) };
    assert!(got.iter().enumerate().all(|(i, &x)| x == (i % 251) as u8));

    // Read it back into A at offset 512 KiB: the destination grows by what came.
    let src = inv.buf_by_data(&remote, pr, n).unwrap();
    // SAFETY: offset inside A's 1 MiB.
    let dst = inv
        .buf_by_addr(&ma, unsafe { pa.add(512 << 10) }, n)
        .unwrap();
    // SAFETY: as above.
    unsafe {
        a.rdma
            .submit(job(JOB_READ, 2, conn_a, Some(src), Some(dst)))
    }
    .unwrap();
    let (mut rec, st) = wait(&a.pe, 2);
    st.unwrap();
    assert_eq!(rec.params[slot::RES_CONN], n as u64);
    assert_eq!(rec.take_buf(slot::DST).unwrap().data_len(), n);
    // SAFETY: A's memory.
    let back = unsafe { std::slice::from_raw_parts(pa.add(512 << 10), n) };
    assert_eq!(back, got);

    // Atomics on B's first 8 bytes (which hold 0..7 now).
    let first = u64::from_ne_bytes(got[..8].try_into().unwrap());
    let target = inv.buf_by_data(&remote, pr, 8).unwrap();
    // SAFETY: offset inside A's memory.
    let res = inv
        .buf_by_addr(&ma, unsafe { pa.add(1000 << 10) }, 8)
        .unwrap();
    let mut r = job(JOB_ATOMIC_FETCH_ADD, 3, conn_a, Some(target), Some(res));
    r.params[slot::ARG] = 10;
    // SAFETY: as above.
    unsafe { a.rdma.submit(r) }.unwrap();
    let (mut rec, st) = wait(&a.pe, 3);
    st.unwrap();
    let res = rec.take_buf(slot::DST).unwrap();
    assert_eq!(res.data_len(), 8);
    // SAFETY: the result buffer's 8 bytes.
    let old = unsafe { (res.data() as *const u64).read_unaligned() };
    assert_eq!(old, first);
    let target = inv.buf_by_data(&remote, pr, 8).unwrap();
    // SAFETY: as above.
    let res2 = inv
        .buf_by_addr(&ma, unsafe { pa.add(1001 << 10) }, 8)
        .unwrap();
    let mut r = job(JOB_ATOMIC_CMP_SWP, 4, conn_a, Some(target), Some(res2));
    r.params[slot::ARG] = first + 10;
    r.params[slot::SWAP] = 7;
    // SAFETY: as above.
    unsafe { a.rdma.submit(r) }.unwrap();
    wait(&a.pe, 4).1.unwrap();
    // SAFETY: B's memory.
    assert_eq!(unsafe { (pb as *const u64).read_unaligned() }, 7);

    // Send with immediate B -> A before A posts its receive: it waits.
    let msg = inv.buf_by_data(&ma, pa, 64).unwrap();
    let mut r = job(JOB_SEND_IMM, 5, conn_b, Some(msg), None);
    r.params[slot::ARG] = 0xdead_beef;
    // The sender uses A's bytes through its own mmap (same process): fine here.
    // SAFETY: as above.
    unsafe { b.rdma.submit(r) }.unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let mut seen = false;
    b.pe.progress(|_| seen = true);
    assert!(!seen, "no receive posted: the send waits");
    // SAFETY: as above.
    let rbuf = inv
        .buf_by_addr(&ma, unsafe { pa.add(900 << 10) }, 4096)
        .unwrap();
    // SAFETY: as above.
    unsafe { a.rdma.submit(job(JOB_RECV, 6, 0, None, Some(rbuf))) }.unwrap();
    let (mut rec, st) = wait(&a.pe, 6);
    st.unwrap();
    assert_eq!(rec.params[slot::RES_LEN_OP], 64 | (1 << 32));
    assert_eq!(rec.params[slot::RES_IMM], 0xdead_beef);
    assert_eq!(rec.params[slot::RES_CONN], conn_a);
    assert_eq!(rec.take_buf(slot::DST).unwrap().data_len(), 64);
    wait(&b.pe, 5).1.unwrap();

    // A plain send and a write with immediate, both received by B.
    for (t, ud) in [(JOB_SEND, 7u64), (JOB_WRITE_IMM, 8)] {
        // SAFETY: as above.
        let rbuf = inv
            .buf_by_addr(&ma, unsafe { pa.add(950 << 10) }, 4096)
            .unwrap();
        // SAFETY: as above.
        unsafe { b.rdma.submit(job(JOB_RECV, ud + 100, 0, None, Some(rbuf))) }.unwrap();
        let src = inv.buf_by_data(&ma, pa, 32).unwrap();
        let dst = (t == JOB_WRITE_IMM).then(|| inv.buf_by_addr(&remote, pr, 32).unwrap());
        let mut r = job(t, ud, conn_a, Some(src), dst);
        r.params[slot::ARG] = 99;
        // SAFETY: as above.
        unsafe { a.rdma.submit(r) }.unwrap();
        let (rec, st) = wait(&b.pe, ud + 100);
        st.unwrap();
        let op = rec.params[slot::RES_LEN_OP] >> 32;
        assert_eq!(op, if t == JOB_SEND { 0 } else { 2 });
        wait(&a.pe, ud).1.unwrap();
    }

    // Refusals at submit: a remote buffer where a local one belongs, a missing
    // connection.
    let bad = inv.buf_by_data(&remote, pr, 8).unwrap();
    // SAFETY: as above.
    let (e, _) = unsafe { a.rdma.submit(job(JOB_SEND, 9, conn_a, Some(bad), None)) }.unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidValue);
    let src = inv.buf_by_data(&ma, pa, 8).unwrap();
    // SAFETY: as above.
    let (e, _) = unsafe { a.rdma.submit(job(JOB_SEND, 10, 0, Some(src), None)) }.unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidValue);

    // Stop with a receive in flight: it ends with an error and the context goes idle.
    // SAFETY: as above.
    let rbuf = inv
        .buf_by_addr(&ma, unsafe { pa.add(960 << 10) }, 64)
        .unwrap();
    // SAFETY: as above.
    unsafe { a.rdma.submit(job(JOB_RECV, 11, 0, None, Some(rbuf))) }.unwrap();
    let _ = a.pe.stop_ctx(a.rdma.ctx());
    let (_, st) = wait(&a.pe, 11);
    assert!(st.is_err());
}

/// The DOCA 2.2 face: contexts created with no device, jobs on work queues naming no
/// connection (the context's one), a receive written over its buffer's data.
#[test]
fn jobs_on_work_queues_use_the_one_connection() {
    use doca_core::WorkQ;
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let mk = || {
        let r = Rdma::new_unbound();
        // Permissions need the device first.
        assert_eq!(
            r.set_permissions(AccessFlags::RDMA_WRITE.bits())
                .unwrap_err()
                .code(),
            ErrorCode::BadState
        );
        r.ctx().dev_add(&dev).unwrap();
        r.set_permissions((AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE).bits())
            .unwrap();
        r.ctx().start().unwrap();
        let mut wq = WorkQ::new(4).unwrap();
        r.ctx().workq_add(&mut wq).unwrap();
        (r, wq)
    };
    let (a, mut wqa) = mk();
    let (b, mut wqb) = mk();
    let retrieve = |wq: &mut WorkQ| {
        let t = Instant::now();
        loop {
            match wq.progress_retrieve() {
                Ok(c) => return (c.record, Ok(())),
                Err(doca_core::RetrieveError::IoFailed(c)) => {
                    let e = c.status().map_err(|e| e.code());
                    return (c.record, e);
                }
                Err(doca_core::RetrieveError::Again) => {}
            }
            assert!(t.elapsed() < Duration::from_secs(20), "no completion");
            std::thread::sleep(Duration::from_micros(100));
        }
    };
    let m = mmap(8192, AccessFlags::RDMA_WRITE);
    let mut inv = BufInventory::new(8).unwrap();
    inv.start().unwrap();
    let (p, _) = m.memrange().unwrap();

    // Before the connection, a job is refused at submission and given back.
    let msg = inv.buf_by_data(&m, p, 5).unwrap();
    let (e, rec) = wqa
        .submit(a.ctx(), job(JOB_SEND, 1, 0, Some(msg), None))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotConnected);
    assert!(rec.buf(slot::SRC).is_some(), "the job comes back whole");

    let (da, ca) = a.export().unwrap();
    let (db, cb) = b.export().unwrap();
    a.connect(&db, &ca).unwrap();
    b.connect(&da, &cb).unwrap();

    // A receive over a buffer whose data spans it: the message replaces the data.
    // SAFETY: the mmap's memory, which nothing else touches meanwhile.
    unsafe {
        std::ptr::copy_nonoverlapping(b"hello".as_ptr(), p, 5);
        std::ptr::write_bytes(p.add(4096), b'x', 64);
    }
    // SAFETY: inside the mmap.
    let rbuf = inv.buf_by_data(&m, unsafe { p.add(4096) }, 64).unwrap();
    wqb.submit(b.ctx(), job(JOB_RECV, 2, 0, None, Some(rbuf)))
        .map_err(|(e, _)| e)
        .unwrap();
    let msg = inv.buf_by_data(&m, p, 5).unwrap();
    let mut r = job(JOB_SEND_IMM, 3, 0, Some(msg), None);
    r.params[slot::ARG] = 42;
    wqa.submit(a.ctx(), r).map_err(|(e, _)| e).unwrap();
    let (_, st) = retrieve(&mut wqa);
    st.unwrap();
    let (mut rec, st) = retrieve(&mut wqb);
    st.unwrap();
    assert_eq!(rec.params[slot::RES_LEN_OP], 5 | (1 << 32));
    assert_eq!(rec.params[slot::RES_IMM], 42);
    let got = rec.take_buf(slot::DST).unwrap();
    assert_eq!(got.data_len(), 5);
    // SAFETY: the buffer's 5 bytes of data.
    let bytes = unsafe { std::slice::from_raw_parts(got.data(), 5) };
    assert_eq!(bytes, b"hello");
    drop(got);

    // The work queue holds the context while jobs are out; both end cleanly.
    for (r, mut wq) in [(a, wqa), (b, wqb)] {
        r.ctx().workq_rm(&mut wq).unwrap();
        r.ctx().stop().unwrap();
    }
}

/// A topology naming a network this machine does not have: the context does not
/// start, and says which name is wrong and what the machine has; the GID table is
/// empty. Naming the loopback interface works and lists its addresses.
#[test]
fn a_topology_naming_a_missing_network_is_refused_with_the_reason() {
    use doca_core::device::Topology;
    let topo = |field: &str| {
        Topology::from_toml(
            &format!("[[host.device]]\npci_addr = \"0000:3b:00.0\"\n{field}\n"),
            None,
        )
        .unwrap()
    };
    for (field, what) in [
        ("rdma_iface = \"nosuchif9\"", "rdma_iface 'nosuchif9'"),
        ("rdma_addr = \"198.51.100.254\"", "rdma_addr 198.51.100.254"),
    ] {
        let dev = topo(field).open_device("3b:00.0").unwrap();
        assert!(doca_rdma::gid::table(&dev).is_empty());
        let rdma = Rdma::new(&dev).unwrap();
        let pe = Pe::new().unwrap();
        pe.connect(rdma.ctx()).unwrap();
        let e = pe.start_ctx(rdma.ctx()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound, "{e}");
        let msg = e.to_string();
        assert!(msg.contains(what) && msg.contains("lo"), "{msg}");
    }
    let dev = topo("rdma_iface = \"lo\"").open_device("3b:00.0").unwrap();
    let t = doca_rdma::gid::table(&dev);
    let v4 = std::net::Ipv4Addr::LOCALHOST.to_ipv6_mapped().octets();
    assert_eq!(t.iter().filter(|g| **g == v4).count(), 2, "{t:?}");
    let pe = Pe::new().unwrap();
    let rdma = Rdma::new(&dev).unwrap();
    pe.connect(rdma.ctx()).unwrap();
    pe.start_ctx(rdma.ctx()).unwrap();
    pe.stop_ctx(rdma.ctx()).unwrap();
}

/// The host side of [`host_memory_exported_again_by_the_dpu_is_reached_through_it`],
/// run as a child process: exports 256 KiB to the DPU, then answers `peek OFF N` (the
/// bytes, in hex), `fill OFF N BYTE`, `put64 OFF V`, `get64 OFF` and `stop` (stops the
/// mmap, revoking the export).
#[test]
fn child_process() {
    use doca_core::device::{DEFAULT_MACHINE, Topology};
    let Some(role) = peer::role() else {
        return;
    };
    assert_eq!(role, "host");
    let host = Topology::from_toml(DEFAULT_MACHINE, Some("host"))
        .unwrap()
        .open_device("0000:b1:00.0")
        .unwrap();
    let mut hm = Mmap::new();
    hm.set_memory(vec![0u8; RELAY_LEN]).unwrap();
    hm.set_permissions(
        AccessFlags::LOCAL_READ_WRITE
            | AccessFlags::DPU_READ_WRITE
            | AccessFlags::RDMA_READ
            | AccessFlags::RDMA_WRITE
            | AccessFlags::RDMA_ATOMIC,
    )
    .unwrap();
    hm.dev_add(&host).unwrap();
    hm.start().unwrap();
    peer::say(&hex(&hm.export_dpu(&host).unwrap()));
    let (ph, _) = hm.memrange().unwrap();
    for line in peer::commands() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| w[i].parse::<usize>().unwrap();
        match w[0] {
            "peek" => {
                // SAFETY: inside the host's memory; remote writes to it completed.
                let b = unsafe { std::slice::from_raw_parts(ph.add(num(1)), num(2)) };
                peer::say(&hex(b));
            }
            "fill" => {
                // SAFETY: inside the host's memory, nothing else writes it now.
                unsafe { std::ptr::write_bytes(ph.add(num(1)), num(3) as u8, num(2)) };
                peer::say("ok");
            }
            "put64" => {
                // SAFETY: 8 bytes inside the host's memory.
                unsafe { (ph.add(num(1)) as *mut u64).write_unaligned(num(2) as u64) };
                peer::say("ok");
            }
            "get64" => {
                // SAFETY: 8 bytes inside the host's memory.
                let v = unsafe { (ph.add(num(1)) as *const u64).read_unaligned() };
                peer::say(&v.to_string());
            }
            "stop" => {
                hm.stop().unwrap();
                peer::say("stopped");
            }
            _ => break,
        }
    }
}

const RELAY_LEN: usize = 256 << 10;

/// Host memory a DPU process imported and exported again for RDMA (as NVIDIA's storage
/// service does, so that storage targets write reads straight into the host): a remote
/// side's writes, reads and atomics reach the host's bytes through the DPU's device,
/// and fail once the host stops its mmap.
#[test]
fn host_memory_exported_again_by_the_dpu_is_reached_through_it() {
    use doca_core::device::{DEFAULT_MACHINE, Topology};
    let dpu = Topology::from_toml(DEFAULT_MACHINE, Some("dpu"))
        .unwrap()
        .open_device("0000:03:00.0")
        .unwrap();
    let mut host = Peer::spawn("child_process", "host");
    let blob = unhex(&host.recv());
    let imported = Mmap::create_from_export(Data(0), &blob, &dpu).unwrap();
    // Made thread safe by its creator, as NVIDIA's storage service does.
    imported.enable_thread_safety().unwrap();
    // Exported again for RDMA only, on the device it was imported with.
    assert_eq!(
        imported.export_dpu(&dpu).unwrap_err().code(),
        ErrorCode::NotPermitted
    );
    let again = imported.export_rdma(&dpu).unwrap().to_vec();

    // The DPU's RDMA context serves it; a context of "another machine" reaches it.
    let d = side_on(&dpu, |_| {});
    let t = side();
    let (dd, cd) = d.rdma.export().unwrap();
    let (dt, ct) = t.rdma.export().unwrap();
    d.rdma.connect(&dt, &cd).unwrap();
    t.rdma.connect(&dd, &ct).unwrap();
    let conn = std::sync::Arc::as_ptr(&ct) as u64;
    let tdev = device::devinfo_list().unwrap()[0].open().unwrap();
    let remote = Mmap::create_from_export(Data(0), &again, &tdev).unwrap();
    assert!(
        remote.remote().is_some_and(|r| !r.is_local()),
        "only RDMA tasks reach relayed memory"
    );
    let (pr, rlen) = remote.memrange().unwrap();
    assert_eq!(rlen, RELAY_LEN);
    let local = mmap(RELAY_LEN, AccessFlags::empty());
    let (pl, _) = local.memrange().unwrap();
    let mut inv = BufInventory::new(16).unwrap();
    inv.start().unwrap();
    let n = 100_000usize;
    let pattern: Vec<u8> = (0..n).map(|i| (i % 241) as u8).collect();
    // SAFETY: the target side's own memory, untouched by anything else.
    unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), pl, n) };

    // Write: lands in the host's memory.
    let src = inv.buf_by_data(&local, pl, n).unwrap();
    // SAFETY: inside the remote range.
    let dst = inv
        .buf_by_addr(&remote, unsafe { pr.add(4096) }, n)
        .unwrap();
    // SAFETY: the record owns its buffers; nothing else touches their bytes.
    unsafe { t.rdma.submit(job(JOB_WRITE, 1, conn, Some(src), Some(dst))) }.unwrap();
    wait_with(&t, &d, 1).1.unwrap();
    host.send(&format!("peek 4096 {n}"));
    assert_eq!(host.recv(), hex(&pattern));

    // Read: the host's bytes come back.
    host.send(&format!("fill {} 1000 90", 200 << 10));
    assert_eq!(host.recv(), "ok");
    // SAFETY: inside the remote range.
    let src = inv
        .buf_by_data(&remote, unsafe { pr.add(200 << 10) }, 1000)
        .unwrap();
    // SAFETY: inside the local range.
    let dst = inv
        .buf_by_addr(&local, unsafe { pl.add(150 << 10) }, 1000)
        .unwrap();
    // SAFETY: as above.
    unsafe { t.rdma.submit(job(JOB_READ, 2, conn, Some(src), Some(dst))) }.unwrap();
    wait_with(&t, &d, 2).1.unwrap();
    // SAFETY: the local memory the read filled.
    let back = unsafe { std::slice::from_raw_parts(pl.add(150 << 10), 1000) };
    assert!(back.iter().all(|&x| x == 90));

    // The host granted DOCA_ACCESS_RDMA_ATOMIC: a fetch-and-add on its 8 bytes.
    host.send("put64 8192 41");
    assert_eq!(host.recv(), "ok");
    // SAFETY: inside the remote range.
    let target = inv
        .buf_by_data(&remote, unsafe { pr.add(8192) }, 8)
        .unwrap();
    // SAFETY: inside the local range.
    let res = inv
        .buf_by_addr(&local, unsafe { pl.add(240 << 10) }, 8)
        .unwrap();
    let mut r = job(JOB_ATOMIC_FETCH_ADD, 3, conn, Some(target), Some(res));
    r.params[slot::ARG] = 1;
    // SAFETY: as above.
    unsafe { t.rdma.submit(r) }.unwrap();
    wait_with(&t, &d, 3).1.unwrap();
    host.send("get64 8192");
    assert_eq!(host.recv(), "42");

    // The host stops its mmap: the DPU cannot relay any more, the read fails.
    host.send("stop");
    assert_eq!(host.recv(), "stopped");
    // SAFETY: inside the remote range.
    let src = inv.buf_by_data(&remote, pr, 64).unwrap();
    let dst = inv.buf_by_addr(&local, pl, 64).unwrap();
    // SAFETY: as above.
    unsafe { t.rdma.submit(job(JOB_READ, 5, conn, Some(src), Some(dst))) }.unwrap();
    assert_eq!(wait_with(&t, &d, 5).1.unwrap_err(), ErrorCode::NotFound);
    host.finish();
}

/// [`wait`] on `a` while `b` (the serving side) progresses too.
fn wait_with(a: &Side, b: &Side, ud: u64) -> (JobRecord, Result<(), ErrorCode>) {
    wait_beside(&a.pe, &[&b.pe], ud)
}

/// An RDMA service as NVIDIA's multi-connection samples make one: a context listening
/// for connection manager requests (accepting each; acknowledging each end with
/// `disconnect`), 1 MiB of memory exported for reads and writes. It says its port and
/// export, then "lost ID" for every connection that fails or ends; "check" answers
/// whether it holds what it held before any peer came.
#[test]
fn rdma_service_process() {
    use doca_rdma::ConnectionEvent;
    use std::sync::{Arc, Mutex};
    if peer::role().as_deref() != Some("service") {
        return;
    }
    let a = side_with(|r| r.set_max_num_connections(64).unwrap());
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let m = mmap(1 << 20, AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE);
    let blob = m.export_rdma(&dev).unwrap().to_vec();
    let port = 30000 + (std::process::id() % 20000) as u16;
    a.rdma.start_listen_to_port(port).unwrap();
    let ended: Arc<Mutex<Vec<u32>>> = Arc::default();
    {
        let ended = ended.clone();
        a.rdma.on_connection_event(move |c, ev| match ev {
            ConnectionEvent::Requested => c.accept().unwrap(),
            ConnectionEvent::Disconnected => {
                c.disconnect().unwrap();
                ended.lock().unwrap().push(c.id());
            }
            ConnectionEvent::Failed => ended.lock().unwrap().push(c.id()),
            ConnectionEvent::Established => {}
        });
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in peer::commands() {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    // After the thread that reads the commands: it stays.
    let before = doca_testkit::held();
    peer::say(&format!("{port} {}", hex(&blob)));
    loop {
        a.pe.progress(|_| {});
        for id in ended.lock().unwrap().drain(..) {
            peer::say(&format!("lost {id}"));
        }
        match rx.try_recv().as_deref() {
            Ok("check") => {
                let now = doca_testkit::held();
                peer::say(&if now == before {
                    "holds what it held".to_string()
                } else {
                    format!("holds {now:?}, held {before:?}")
                });
            }
            Ok(_) | Err(std::sync::mpsc::TryRecvError::Disconnected) => break,
            Err(std::sync::mpsc::TryRecvError::Empty) => {
                std::thread::sleep(Duration::from_micros(100))
            }
        }
    }
    drop(m);
}

/// A requester of that service: connects through the connection manager, then writes
/// 64 KiB and reads it back, again and again, each round's bytes checked; says "ok N"
/// every 20 rounds.
#[test]
fn rdma_requester_process() {
    use doca_rdma::ConnectionEvent;
    use std::sync::atomic::{AtomicBool, Ordering};
    let Some(role) = peer::role() else {
        return;
    };
    let w: Vec<&str> = role.split_whitespace().collect();
    if w.first() != Some(&"requester") {
        return;
    }
    let (port, blob, slot_no) = (w[1], unhex(w[2]), w[3].parse::<usize>().unwrap());
    let b = side();
    let up = std::sync::Arc::new(AtomicBool::new(false));
    {
        let up = up.clone();
        b.rdma.on_connection_event(move |_, ev| {
            if ev == ConnectionEvent::Established {
                up.store(true, Ordering::Release);
            }
        });
    }
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let remote = Mmap::create_from_export(Data(0), &blob, &dev).unwrap();
    let (pr, _) = remote.memrange().unwrap();
    let local = mmap(128 << 10, AccessFlags::empty());
    let (pl, _) = local.memrange().unwrap();
    let mut inv = BufInventory::new(8).unwrap();
    inv.start().unwrap();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let conn = b.rdma.connect_to_addr(addr, Data(0)).unwrap();
    let t = Instant::now();
    while !up.load(Ordering::Acquire) {
        b.pe.progress(|_| {});
        assert!(t.elapsed() < Duration::from_secs(20), "never connected");
        std::thread::sleep(Duration::from_micros(100));
    }
    peer::say("up");
    let cp = std::sync::Arc::as_ptr(&conn) as u64;
    let n = 64 << 10;
    for round in 1u64.. {
        // SAFETY: the local mmap's first 64 KiB, nothing else touches them meanwhile.
        let out = unsafe { std::slice::from_raw_parts_mut(pl, n) };
        for (i, x) in out.iter_mut().enumerate() {
            *x = (i as u64).wrapping_mul(31).wrapping_add(round) as u8;
        }
        // SAFETY: the slot's 64 KiB of the remote range.
        let rdst = unsafe { pr.add(slot_no * n) };
        let src = inv.buf_by_data(&local, pl, n).unwrap();
        let dst = inv.buf_by_addr(&remote, rdst, n).unwrap();
        // SAFETY: the record owns its buffers.
        unsafe { b.rdma.submit(job(JOB_WRITE, 1, cp, Some(src), Some(dst))) }.unwrap();
        wait(&b.pe, 1).1.unwrap();
        let rsrc = inv.buf_by_data(&remote, rdst, n).unwrap();
        // SAFETY: the local mmap's second 64 KiB.
        let back = unsafe { pl.add(n) };
        let ldst = inv.buf_by_addr(&local, back, n).unwrap();
        // SAFETY: as above.
        unsafe { b.rdma.submit(job(JOB_READ, 2, cp, Some(rsrc), Some(ldst))) }.unwrap();
        wait(&b.pe, 2).1.unwrap();
        // SAFETY: the bytes the read brought.
        let got = unsafe { std::slice::from_raw_parts(back, n) };
        assert!(got == &out[..], "round {round}: the bytes read back differ");
        if round % 20 == 0 {
            peer::say(&format!("ok {round}"));
        }
    }
}

/// Requesters of an RDMA service killed (SIGKILL) at random moments: while connecting,
/// mid-write, mid-read. The service reports each lost connection within a second,
/// serves a steady requester all along (its bytes checked round by round), and once the
/// killed ones are gone holds the descriptors, threads and shared mappings it held
/// before any peer came.
#[test]
fn requesters_killed_at_random_moments_leave_the_service_serving() {
    if peer::role().is_some() {
        return;
    }
    let mut svc = Peer::spawn("rdma_service_process", "service");
    let hello = svc.recv();
    let (port, blob) = hello.split_once(' ').unwrap();
    let requester = |slot: usize| {
        Peer::spawn(
            "rdma_requester_process",
            &format!("requester {port} {blob} {slot}"),
        )
    };
    let mut steady = requester(0);
    assert_eq!(steady.recv(), "up");
    assert!(steady.recv().starts_with("ok "));
    let mut rng = doca_testkit::Rng(0x6b1_11ed ^ u64::from(std::process::id()));
    let rounds = 8;
    let mut reported = 0;
    for round in 0..rounds {
        let mut v = requester(1 + round % 15);
        // When: at a random moment after its start (perhaps while connecting), or
        // once connected, or mid-transfer.
        let when = rng.below(3);
        if when > 0 {
            assert_eq!(v.recv(), "up");
        }
        if when > 1 {
            assert!(v.recv().starts_with("ok "));
        }
        let ms = if when == 0 { 150 } else { 20 };
        std::thread::sleep(Duration::from_millis(rng.below(ms) as u64));
        drop(v);
        let killed = Instant::now();
        // One that connected is reported within a second; one killed before its
        // connection reached the service may leave nothing to report.
        match svc.recv_within(Duration::from_secs(1)) {
            Some(line) => {
                assert!(line.starts_with("lost "), "round {round}: {line}");
                reported += 1;
                eprintln!("round {round} ({when}): reported in {:?}", killed.elapsed());
            }
            None => assert_eq!(
                when, 0,
                "round {round}: a connected requester's end not reported within 1 s"
            ),
        }
        let before = steady.recv();
        assert!(
            steady.recv() != before,
            "round {round}: the steady requester stalled"
        );
    }
    assert!(reported > 0, "no kill was reported");
    drop(steady);
    let killed = Instant::now();
    assert!(svc.recv().starts_with("lost "));
    assert!(killed.elapsed() < Duration::from_secs(1));
    svc.send("check");
    assert_eq!(svc.recv(), "holds what it held");
    svc.send("end");
    svc.finish();
}
