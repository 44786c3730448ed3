//! What the far side of a comch connection puts on the wire, mutated: comch's own
//! messages (their header byte, consumer announcements with and without a descriptor,
//! any length) to a live server, and raw datagrams into a live consumer's data socket
//! (headers that lie about their immediate data, messages longer than the posted
//! buffers, empty ones). Every input must be refused or handled: no panic, no hang, no
//! memory error, and the channel keeps working.

#![no_main]

use doca_comm_channel::comch::{Comch, Connection, fuzzing};
use doca_comm_channel::fastpath::Consumer;
use doca_core::device::{DEFAULT_MACHINE, Topology};
use doca_core::exec::{CtxPhase, Pe, PeEvent};
use doca_core::{AccessFlags, BufInventory, Data, Dev, JobRecord, Mmap};
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, Mutex, OnceLock};

struct World {
    server: Comch,
    spe: Pe,
    client: Comch,
    cpe: Pe,
    cconn: Arc<Connection>,
    sconn: Arc<Connection>,
    consumer: Consumer,
    kpe: Pe,
    consumer_id: u32,
    heard: Arc<Mutex<u64>>,
    _mem: Vec<u8>,
    _mm: Mmap,
    _inv: BufInventory,
}

// The fuzzer runs inputs on one thread; the world is used from it only.
struct Shared(World);
unsafe impl Sync for Shared {}
unsafe impl Send for Shared {}

fn device(role: &str, pci: &str) -> Dev {
    Topology::from_toml(DEFAULT_MACHINE, Some(role))
        .unwrap()
        .open_device(pci)
        .unwrap()
}

fn world() -> &'static World {
    static W: OnceLock<Shared> = OnceLock::new();
    &W.get_or_init(|| {
        let rt = std::env::temp_dir().join(format!("doca-fuzz-comch-{}", std::process::id()));
        let _ = std::fs::create_dir(&rt);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).unwrap();
        // SAFETY: set before any channel reads it, on the only thread.
        unsafe { std::env::set_var("DOCA_SW_RUNTIME_DIR", &rt) };
        let dpu = device("dpu", "0000:03:00.0");
        let rep = dpu.open_rep("0000:3b:00.0").unwrap();
        let server = Comch::server(&dpu, &rep, "fuzz").unwrap();
        server.set_send_tasks(64).unwrap();
        let heard = Arc::new(Mutex::new(0u64));
        let h = Arc::clone(&heard);
        server
            .on_message(move |_, m: &mut [u8]| {
                *h.lock().unwrap() += m.len() as u64;
            })
            .unwrap();
        server.on_consumer(|_, _| {}, |_, _| {}).unwrap();
        let spe = Pe::new().unwrap();
        spe.connect(server.ctx()).unwrap();
        spe.start_ctx(server.ctx()).unwrap();
        let host = device("host", "0000:3b:00.0");
        let client = Comch::client(&host, "fuzz").unwrap();
        client.set_send_tasks(64).unwrap();
        client.on_consumer(|_, _| {}, |_, _| {}).unwrap();
        let cpe = Pe::new().unwrap();
        cpe.connect(client.ctx()).unwrap();
        let _ = cpe.start_ctx(client.ctx());
        while client.ctx().phase() != CtxPhase::Running || server.num_connections() == 0 {
            cpe.progress(|_| {});
            spe.progress(|_| {});
        }
        let cconn = client.connection().unwrap();
        // The server's connection: found by the first message.
        client.send(&cconn, b"hello", Data(0)).unwrap();
        let sconn = loop {
            cpe.progress(|_| {});
            spe.progress(|_| {});
            if let Some(c) = server.connections().into_iter().next() {
                break c;
            }
        };
        // A consumer on the server's side, fed by the fuzzer through the client's
        // connection.
        let consumer = Consumer::new(&sconn).unwrap();
        consumer.set_num_tasks(4).unwrap();
        let kpe = Pe::new().unwrap();
        kpe.connect(consumer.ctx()).unwrap();
        let _ = kpe.start_ctx(consumer.ctx());
        while consumer.ctx().phase() != CtxPhase::Running
            || !fuzzing::to_consumer(&cconn, consumer.id(), &[0u8; 24])
        {
            kpe.progress(|_| {});
            spe.progress(|_| {});
            cpe.progress(|_| {});
        }
        let mut mem = vec![0u8; 4 * 256];
        let mut mm = Mmap::new();
        // SAFETY: the vector lives in the world as long as the mmap.
        unsafe { mm.set_memrange(mem.as_mut_ptr(), mem.len()) }.unwrap();
        mm.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
        mm.dev_add(&dpu).unwrap();
        mm.start().unwrap();
        let mut inv = BufInventory::new(8).unwrap();
        inv.start().unwrap();
        let base = mem.as_mut_ptr();
        for i in 0..4 {
            // SAFETY: inside the mmap.
            let b = inv
                .buf_by_addr(&mm, unsafe { base.add(i * 256) }, 256)
                .unwrap();
            consumer.post_recv(b, Data(i as u64)).unwrap();
        }
        let consumer_id = consumer.id();
        Shared(World {
            server,
            spe,
            client,
            cpe,
            cconn,
            sconn,
            consumer,
            kpe,
            consumer_id,
            heard,
            _mem: mem,
            _mm: mm,
            _inv: inv,
        })
    })
    .0
}

fn pump(w: &World) {
    for _ in 0..4 {
        w.cpe.progress(|_| {});
        w.spe.progress(|_| {});
        w.kpe.progress(|ev| {
            if let PeEvent::Task(mut c) = ev {
                // Repost the buffer, whatever came into it.
                if let Some(mut b) = c.take_buf(JobRecord::DST) {
                    b.reset_data_len();
                    let _ = w.consumer.post_recv(b, c.record.user_data);
                }
            }
        });
    }
}

fuzz_target!(|data: &[u8]| {
    let w = world();
    let Some((&case, rest)) = data.split_first() else {
        return;
    };
    match case % 3 {
        // comch's own messages, with a descriptor attached or not.
        0 | 1 => {
            let pass = (case % 3 == 1).then(|| {
                let mut fds = [0; 2];
                // SAFETY: socketpair writes two descriptors.
                unsafe {
                    libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0, fds.as_mut_ptr())
                };
                fds
            });
            let _ = fuzzing::send_raw(
                &w.client,
                &w.cconn,
                &rest[..rest.len().min(4000)],
                pass.map(|f| f[1]),
            );
            if let Some(f) = pass {
                // SAFETY: our descriptors, closed once.
                unsafe {
                    libc::close(f[0]);
                    libc::close(f[1]);
                }
            }
        }
        // Raw datagrams into the consumer's socket.
        _ => {
            let _ = fuzzing::to_consumer(&w.cconn, w.consumer_id, &rest[..rest.len().min(8192)]);
        }
    }
    pump(w);
    // The channel still works: a user message gets through.
    let before = *w.heard.lock().unwrap();
    if w.client.send(&w.cconn, b"ping", Data(0)).is_ok() {
        for _ in 0..1000 {
            pump(w);
            if *w.heard.lock().unwrap() > before {
                break;
            }
        }
        assert!(
            *w.heard.lock().unwrap() > before,
            "the channel stopped working"
        );
    }
    let _ = (&w.sconn, &w.server);
});
