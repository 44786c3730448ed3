//! After start, comch allocates nothing in its data paths: a control-path round trip
//! (send task, message event, echo, send completion) and the fast path (a producer's
//! buffers into the buffers a consumer reposts), both sides in this process.

use doca_comm_channel::comch::{Comch, Connection};
use doca_comm_channel::fastpath::{Consumer, Producer};
use doca_core::exec::{CtxPhase, Pe, PeEvent};
use doca_core::{AccessFlags, BufInventory, Data, JobRecord, Mmap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

mod common;
use common::device;

#[global_allocator]
static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;

/// The counter is global, so one test runs both paths in turn.
#[test]
fn comch_data_paths_allocate_nothing() {
    let dir = std::env::temp_dir().join(format!("doca-comch-zero-{}", std::process::id()));
    let _ = std::fs::create_dir(&dir);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    // SAFETY: set before any channel reads it; this test binary has one test.
    unsafe { std::env::set_var("DOCA_SW_RUNTIME_DIR", &dir) };
    let dpu = device("dpu", "0000:03:00.0");
    let rep = dpu.open_rep("0000:3b:00.0").unwrap();
    let host = device("host", "0000:3b:00.0");
    let server = Comch::server(&dpu, &rep, "zero").unwrap();
    server.set_send_tasks(8).unwrap();
    // The server's message callback keeps the last message in a fixed array.
    let last = Arc::new(Mutex::new(([0u8; 64], 0usize, None)));
    let l = Arc::clone(&last);
    server
        .on_message(move |c: &Connection, m: &mut [u8]| {
            let mut g = l.lock().unwrap();
            g.0[..m.len()].copy_from_slice(m);
            g.1 = m.len();
            g.2 = Some(c.peer());
        })
        .unwrap();
    let spe = Pe::new().unwrap();
    spe.connect(server.ctx()).unwrap();
    spe.start_ctx(server.ctx()).unwrap();
    let client = Comch::client(&host, "zero").unwrap();
    client.set_send_tasks(8).unwrap();
    let echoes = Arc::new(AtomicU64::new(0));
    let e = Arc::clone(&echoes);
    client
        .on_message(move |_, m: &mut [u8]| {
            assert_eq!(m, b"ping-ping-ping");
            e.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    let cpe = Pe::new().unwrap();
    cpe.connect(client.ctx()).unwrap();
    let _ = cpe.start_ctx(client.ctx());
    while client.ctx().phase() != CtxPhase::Running {
        cpe.progress(|_| {});
        spe.progress(|_| {});
    }
    let conn = client.connection().unwrap();
    let round = || {
        let want = echoes.load(Ordering::Relaxed) + 1;
        client.send(&conn, b"ping-ping-ping", Data(1)).unwrap();
        while echoes.load(Ordering::Relaxed) < want {
            cpe.progress(|_| {});
            spe.progress(|_| {});
            let msg = {
                let mut g = last.lock().unwrap();
                g.2.take().map(|p| (p, g.0, g.1))
            };
            if let Some((peer, m, n)) = msg {
                server.send_to(peer, &m[..n], Data(2)).unwrap();
            }
        }
    };
    for _ in 0..50 {
        round();
    }
    let n = doca_testkit::allocations_in(|| {
        for _ in 0..500 {
            round();
        }
    });
    assert_eq!(n, 0, "{n} allocations in 500 comch round trips");

    // The fast path: the client's consumer, the server's producer.
    let sconn = server.connections().into_iter().next().unwrap();
    let consumer = Consumer::new(&conn).unwrap();
    consumer.set_num_tasks(8).unwrap();
    let kpe = Pe::new().unwrap();
    kpe.connect(consumer.ctx()).unwrap();
    let _ = kpe.start_ctx(consumer.ctx());
    while consumer.ctx().phase() != CtxPhase::Running {
        kpe.progress(|_| {});
        cpe.progress(|_| {});
        spe.progress(|_| {});
    }
    let mut mm = Mmap::new();
    mm.set_memory(vec![0u8; 16 * 1024]).unwrap();
    mm.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
    mm.dev_add(&host).unwrap();
    mm.dev_add(&dpu).unwrap();
    mm.start().unwrap();
    let mut inv = BufInventory::new(32).unwrap();
    inv.start().unwrap();
    for i in 0..8 {
        let b = inv.buf_at(&mm, i * 1024, 1024).unwrap();
        consumer.post_recv(b, Data(i as u64)).unwrap();
    }
    let producer = Producer::new(&sconn).unwrap();
    producer.set_num_tasks(4).unwrap();
    let ppe = Pe::new().unwrap();
    ppe.connect(producer.ctx()).unwrap();
    ppe.start_ctx(producer.ctx()).unwrap();
    let id = consumer.id();
    while sconn.user_data().0 == 0 {
        // Wait until the server side has heard of the consumer (a send finds it).
        let b = inv.buf_with_data_at(&mm, 8 * 1024, 100).unwrap();
        match producer.send(b, b"", id, Data(0)) {
            Ok(()) => sconn.set_user_data(Data(1)),
            Err((_, b)) => {
                drop(b);
                cpe.progress(|_| {});
                spe.progress(|_| {});
            }
        }
    }
    let mut src = Some(inv.buf_with_data_at(&mm, 9 * 1024, 700).unwrap());
    let mut received = 0u64;
    let mut fast = |rounds: u64| {
        for _ in 0..rounds {
            let want = received + 1;
            if let Err((e, _)) = producer.send(src.take().unwrap(), b"imm", id, Data(9)) {
                panic!("{e}");
            }
            while received < want || src.is_none() {
                ppe.progress(|ev| {
                    if let PeEvent::Task(mut c) = ev {
                        assert!(c.error.is_none());
                        if c.record.user_data.0 == 9 {
                            src = c.take_buf(JobRecord::SRC);
                        }
                    }
                });
                kpe.progress(|ev| {
                    if let PeEvent::Task(mut c) = ev {
                        assert!(c.error.is_none());
                        received += 1;
                        let mut b = c.take_buf(JobRecord::DST).unwrap();
                        b.reset_data_len();
                        consumer.post_recv(b, c.record.user_data).unwrap();
                    }
                });
            }
        }
    };
    fast(50);
    let n = doca_testkit::allocations_in(|| fast(500));
    assert_eq!(n, 0, "{n} allocations in 500 fast-path buffers");
}
