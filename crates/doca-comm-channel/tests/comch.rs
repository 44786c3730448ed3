//! comch (the 3.x channel) between a server and clients on progress engines, both sides
//! in this process (the host and DPU halves of the default machine); the two-process
//! runs are NVIDIA's sample pairs in CI.

use doca_comm_channel::comch::{self, Comch, Connection};
use doca_core::exec::{CtxPhase, Pe, PeEvent};
use doca_core::{Data, Dev, DevRep, ErrorCode};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;
use common::device;

fn host() -> Dev {
    device("host", "0000:3b:00.0")
}

fn dpu() -> (Dev, DevRep) {
    let d = device("dpu", "0000:03:00.0");
    let r = d.open_rep("0000:3b:00.0").unwrap();
    (d, r)
}

fn name(what: &str) -> String {
    format!(
        "{what}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    )
}

type Log = Arc<Mutex<Vec<(u64, Vec<u8>)>>>;

/// Messages received, with the connection's user data.
fn recorder(c: &Comch) -> Log {
    let log: Log = Arc::default();
    let l = Arc::clone(&log);
    c.on_message(move |conn: &Connection, m: &mut [u8]| {
        l.lock().unwrap().push((conn.user_data().0, m.to_vec()));
    })
    .unwrap();
    log
}

/// Progresses the engines at least once and until `done` holds (at most 10 s), collecting send
/// completions and state changes.
fn run(
    pes: &[&Pe],
    events: &mut Vec<(u32, u64, Option<ErrorCode>)>,
    mut done: impl FnMut(&[(u32, u64, Option<ErrorCode>)]) -> bool,
) {
    let t = Instant::now();
    let mut first = true;
    while first || !done(events) {
        first = false;
        assert!(t.elapsed() < Duration::from_secs(10), "stuck: {events:?}");
        for pe in pes {
            pe.progress(|ev| match ev {
                PeEvent::Task(c) => events.push((
                    c.record.job_type,
                    c.record.user_data.0,
                    c.error.map(|e| e.code()),
                )),
                PeEvent::State { next, .. } => events.push((0, next as u64, None)),
            });
        }
    }
}

#[test]
fn a_client_may_start_first_and_messages_go_both_ways_in_order() {
    let n = name("pingpong");
    let client = Comch::client(&host(), &n).unwrap();
    client.set_send_tasks(4).unwrap();
    client.set_recv_queue_size(4).unwrap();
    let got_c = recorder(&client);
    let cpe = Pe::new().unwrap();
    cpe.connect(client.ctx()).unwrap();
    let e = cpe.start_ctx(client.ctx()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InProgress);
    assert_eq!(client.ctx().phase(), CtxPhase::Starting);
    assert_eq!(client.connection().unwrap_err().code(), ErrorCode::BadState);
    // No server yet: it keeps starting.
    for _ in 0..20 {
        cpe.progress(|_| {});
    }
    assert_eq!(client.ctx().phase(), CtxPhase::Starting);

    let (d, r) = dpu();
    let server = Comch::server(&d, &r, &n).unwrap();
    server.set_send_tasks(64).unwrap();
    server.set_recv_queue_size(2).unwrap();
    let got_s: Log = Arc::default();
    let peer_seen = Arc::new(Mutex::new(None));
    let (l, ps) = (Arc::clone(&got_s), Arc::clone(&peer_seen));
    server
        .on_message(move |conn: &Connection, m: &mut [u8]| {
            *ps.lock().unwrap() = Some(conn.peer());
            l.lock().unwrap().push((conn.user_data().0, m.to_vec()));
        })
        .unwrap();
    let conns = Arc::new(Mutex::new((0, 0)));
    let (c1, c2) = (Arc::clone(&conns), Arc::clone(&conns));
    server
        .on_connection(
            move |c, ok| {
                assert!(ok && c.is_server());
                c.set_user_data(Data(77));
                c1.lock().unwrap().0 += 1
            },
            move |_, _| c2.lock().unwrap().1 += 1,
        )
        .unwrap();
    let spe = Pe::new().unwrap();
    spe.connect(server.ctx()).unwrap();
    spe.start_ctx(server.ctx()).unwrap();
    assert_eq!(server.ctx().phase(), CtxPhase::Running);

    let mut ev = Vec::new();
    run(&[&cpe, &spe], &mut ev, |_| {
        client.ctx().phase() == CtxPhase::Running && conns.lock().unwrap().0 == 1
    });
    assert!(ev.contains(&(0, CtxPhase::Running as u64, None)));
    let conn = client.connection().unwrap();
    conn.set_user_data(Data(5));
    // More messages than the server's receive queue and the client's send tasks: the
    // sends wait for room, in order. Half are given as pointers into one buffer that is
    // overwritten as soon as the send returns, as C programs do with DOCA (whose send
    // queue takes the message at submit).
    let mut sent = 0u64;
    let mut want = Vec::new();
    let mut reused = [0u8; 32];
    ev.clear();
    while sent < 100 {
        let msg = format!("msg {sent}");
        let r = if sent.is_multiple_of(2) {
            client.send(&conn, msg.as_bytes(), Data(sent))
        } else {
            reused[..msg.len()].copy_from_slice(msg.as_bytes());
            // SAFETY: the buffer holds msg.len() bytes for the call.
            let r = unsafe {
                client.send_raw(
                    &*conn as *const Connection,
                    reused.as_ptr(),
                    msg.len(),
                    Data(sent),
                )
            };
            reused.fill(0xff);
            r
        };
        match r {
            Ok(()) => {
                want.push((77, msg.into_bytes()));
                sent += 1;
            }
            Err(e) => {
                assert_eq!(e.code(), ErrorCode::NoMemory);
                run(&[&cpe, &spe], &mut ev, |_| true);
            }
        }
    }
    run(&[&cpe, &spe], &mut ev, |_| {
        got_s.lock().unwrap().len() == 100
    });
    assert_eq!(*got_s.lock().unwrap(), want);
    run(&[&cpe, &spe], &mut ev, |e| e.len() == 100);
    let ids: Vec<u64> = ev.iter().map(|e| e.1).collect();
    assert_eq!(ids, (0..100).collect::<Vec<_>>());
    assert!(ev.iter().all(|e| e.0 == comch::JOB_SEND && e.2.is_none()));
    assert_eq!(conn.counters()[0], 100);

    // The server answers over the connection the message came on.
    let peer = *peer_seen.lock().unwrap();
    server.send_to(peer.unwrap(), b"pong", Data(1000)).unwrap();
    run(&[&cpe, &spe], &mut ev, |_| {
        !got_c.lock().unwrap().is_empty()
    });
    assert_eq!(got_c.lock().unwrap()[0], (5, b"pong".to_vec()));

    // The client stops: the server sees the disconnection.
    cpe.stop_ctx(client.ctx()).unwrap();
    assert_eq!(client.ctx().phase(), CtxPhase::Idle);
    run(&[&cpe, &spe], &mut ev, |_| conns.lock().unwrap().1 == 1);
    assert_eq!(server.num_connections(), 0);
    spe.stop_ctx(server.ctx()).unwrap();
    server.destroy().unwrap();
    client.destroy().unwrap();
}

#[test]
fn a_producer_fills_the_buffers_a_consumer_posted_on_the_other_side() {
    use doca_comm_channel::fastpath::{Consumer, JOB_CONSUMER_RECV, JOB_PRODUCER_SEND, Producer};
    use doca_core::{AccessFlags, BufInventory, Mmap};
    let n = name("fast");
    let (d, r) = dpu();
    let server = Comch::server(&d, &r, &n).unwrap();
    let news = Arc::new(Mutex::new(Vec::new()));
    let (n1, n2) = (Arc::clone(&news), Arc::clone(&news));
    server
        .on_consumer(
            move |_, id| n1.lock().unwrap().push((true, id)),
            move |_, id| n2.lock().unwrap().push((false, id)),
        )
        .unwrap();
    let seen = Arc::new(Mutex::new(None));
    let s2 = Arc::clone(&seen);
    server
        .on_message(move |c: &Connection, _: &mut [u8]| *s2.lock().unwrap() = Some(c.peer()))
        .unwrap();
    let spe = Pe::new().unwrap();
    spe.connect(server.ctx()).unwrap();
    spe.start_ctx(server.ctx()).unwrap();
    let client = Comch::client(&host(), &n).unwrap();
    let cpe = Pe::new().unwrap();
    cpe.connect(client.ctx()).unwrap();
    let _ = cpe.start_ctx(client.ctx());
    let mut ev = Vec::new();
    run(&[&cpe, &spe], &mut ev, |_| {
        client.ctx().phase() == CtxPhase::Running
    });
    let cconn = client.connection().unwrap();
    client.send(&cconn, b"hi", Data(0)).unwrap();
    run(&[&cpe, &spe], &mut ev, |_| seen.lock().unwrap().is_some());
    let sconn = server.connection_of(seen.lock().unwrap().unwrap()).unwrap();

    // The host side consumes, on an engine of its own.
    let consumer = Consumer::new(&cconn).unwrap();
    consumer.set_num_tasks(8).unwrap();
    let kpe = Pe::new().unwrap();
    kpe.connect(consumer.ctx()).unwrap();
    assert_eq!(
        kpe.start_ctx(consumer.ctx()).unwrap_err().code(),
        ErrorCode::InProgress
    );
    // The far side hears of the consumer at its start, before the consumer's engine is
    // progressed (NVIDIA's storage application waits for that event first).
    run(&[&cpe, &spe], &mut ev, |_| !news.lock().unwrap().is_empty());
    assert_eq!(consumer.ctx().phase(), CtxPhase::Starting);
    run(&[&kpe, &cpe, &spe], &mut ev, |_| {
        consumer.ctx().phase() == CtxPhase::Running && !news.lock().unwrap().is_empty()
    });
    assert_eq!(news.lock().unwrap()[0], (true, consumer.id()));

    let mem = Arc::new(Mutex::new(vec![0u8; 8 * 64]));
    let mut mm = Mmap::new();
    let base = mem.lock().unwrap().as_mut_ptr();
    // SAFETY: the vector outlives the mmap's use in this test and does not move.
    unsafe { mm.set_memrange(base, 8 * 64) }.unwrap();
    mm.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
    mm.dev_add(&host()).unwrap();
    mm.start().unwrap();
    let mut inv = BufInventory::new(32).unwrap();
    inv.start().unwrap();
    for i in 0..8usize {
        // SAFETY: inside the mmap.
        let b = inv
            .buf_by_addr(&mm, unsafe { base.add(i * 64) }, 64)
            .unwrap();
        consumer.post_recv(b, Data(i as u64)).unwrap();
    }
    let producer = Producer::new(&sconn).unwrap();
    producer.set_num_tasks(4).unwrap();
    let ppe = Pe::new().unwrap();
    ppe.connect(producer.ctx()).unwrap();
    ppe.start_ctx(producer.ctx()).unwrap();
    // A consumer id nobody announced is refused at once.
    let mut sm = Mmap::new();
    let mut src = vec![0u8; 64];
    // SAFETY: `src` outlives the mmap's use here.
    unsafe { sm.set_memrange(src.as_mut_ptr(), 64) }.unwrap();
    sm.dev_add(&d).unwrap();
    sm.start().unwrap();
    let mut sinv = BufInventory::new(8).unwrap();
    sinv.start().unwrap();
    let mut b = sinv.buf_by_addr(&sm, src.as_mut_ptr(), 64).unwrap();
    b.set_data(src.as_mut_ptr(), 5).unwrap();
    let (e, b) = producer
        .send(b, b"", consumer.id() + 1000, Data(0))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    src[..5].copy_from_slice(b"hello");
    producer.send(b, b"imm!", consumer.id(), Data(7)).unwrap();
    let mut got = Vec::new();
    let mut sent = 0;
    let t = Instant::now();
    while got.is_empty() || sent == 0 {
        assert!(t.elapsed() < Duration::from_secs(10));
        kpe.progress(|e| {
            if let PeEvent::Task(mut c) = e {
                assert_eq!(c.record.job_type, JOB_CONSUMER_RECV);
                assert!(c.error.is_none(), "{:?}", c.error);
                let b = c.take_buf(doca_core::JobRecord::DST).unwrap();
                got.push((c.record.user_data.0, b.data_to_vec(), c.record.params));
            }
        });
        ppe.progress(|e| {
            if let PeEvent::Task(c) = e {
                assert_eq!(c.record.job_type, JOB_PRODUCER_SEND);
                assert!(c.error.is_none());
                sent += 1;
            }
        });
    }
    assert_eq!(got[0].0, 0);
    assert_eq!(got[0].1, b"hello");
    assert_eq!(got[0].2[0] as u32, producer.id());
    assert_eq!(got[0].2[0] >> 32, 4);
    assert_eq!(&got[0].2[1].to_le_bytes()[..4], b"imm!");
    // The consumer stops: the far side hears it expired.
    kpe.stop_ctx(consumer.ctx()).unwrap_err();
    run(&[&kpe, &cpe, &spe], &mut ev, |_| {
        consumer.ctx().phase() == CtxPhase::Idle && news.lock().unwrap().len() == 2
    });
    assert_eq!(news.lock().unwrap()[1], (false, consumer.id()));
}
