//! The software NIC on one machine: two NICs of one process, talking through UCX.

mod common;

use common::exported;
use doca_core::{AccessFlags, ErrorCode, Mmap, device};
use doca_rdma::nic::{Cmd, ConnEvent, Done, Nic, RecvOpcode, Sink};
use doca_rdma::wire::ConnDesc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Col {
    done: Mutex<Vec<(u64, doca_core::Result<Done>)>>,
    cv: Condvar,
    events: Mutex<Vec<(u32, ConnEvent)>>,
}

impl Sink for Col {
    fn complete(&self, user: u64, r: doca_core::Result<Done>) {
        self.done.lock().unwrap().push((user, r));
        self.cv.notify_all();
    }
    fn conn_event(&self, conn: u32, ev: ConnEvent) {
        self.events.lock().unwrap().push((conn, ev));
        self.cv.notify_all();
    }
}

impl Col {
    fn wait(&self, user: u64) -> doca_core::Result<Done> {
        let t = Instant::now();
        let mut g = self.done.lock().unwrap();
        loop {
            if let Some(i) = g.iter().position(|(u, _)| *u == user) {
                return g.remove(i).1;
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "operation {user} never ended"
            );
            g = self
                .cv
                .wait_timeout(g, Duration::from_millis(50))
                .unwrap()
                .0;
        }
    }
    fn pending(&self, user: u64) -> bool {
        !self.done.lock().unwrap().iter().any(|(u, _)| *u == user)
    }
}

struct Pair {
    a: Nic,
    b: Nic,
    ca: Arc<Col>,
    cb: Arc<Col>,
}

fn pair() -> Pair {
    let (a, ca, b, cb) = common::pair::<Col>();
    Pair { a, b, ca, cb }
}

fn bytes_of(m: &Mmap) -> &[u8] {
    let (p, n) = m.memrange().unwrap();
    // SAFETY: the mmap's memory, alive while `m` is; the NIC wrote it before the
    // operation completed.
    unsafe { std::slice::from_raw_parts(p, n) }
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn writes_reads_and_atomics_reach_exported_memory_eager_and_rendezvous() {
    let p = pair();
    let all = AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE | AccessFlags::RDMA_ATOMIC;
    let (m, token, base) = exported(2 << 20, all);
    for (k, n) in [64usize, 4096, 64 << 10, 1 << 20].into_iter().enumerate() {
        let src = pattern(n, k as u8);
        let user = 100 + k as u64;
        // SAFETY: src lives until the completion is awaited below.
        unsafe {
            p.a.submit(Cmd::Write {
                user,
                conn: 1,
                ptr: src.as_ptr(),
                len: n,
                token,
                addr: base + 4096,
                imm: None,
            })
        };
        assert_eq!(p.ca.wait(user).unwrap().len, n as u64);
        assert_eq!(&bytes_of(&m)[4096..4096 + n], &src[..]);
        let mut back = vec![0u8; n];
        // SAFETY: back lives until the completion.
        unsafe {
            p.a.submit(Cmd::Read {
                user: user + 50,
                conn: 1,
                ptr: back.as_mut_ptr(),
                len: n,
                token,
                addr: base + 4096,
            })
        };
        p.ca.wait(user + 50).unwrap();
        assert_eq!(back, src);
    }
    let mut old = [0u8; 8];
    for (i, (cas, b, c, want_old)) in [
        (false, 5u64, 0u64, 0u64),
        (false, 7, 0, 5),
        (true, 12, 99, 12),
        (true, 12, 1, 99),
    ]
    .into_iter()
    .enumerate()
    {
        // SAFETY: old lives until the completion.
        unsafe {
            p.a.submit(Cmd::Atomic {
                user: 900 + i as u64,
                conn: 1,
                token,
                addr: base + 8,
                cas,
                b,
                c,
                result: old.as_mut_ptr(),
            })
        };
        let d = p.ca.wait(900 + i as u64).unwrap();
        assert_eq!(d.value, want_old);
        assert_eq!(u64::from_ne_bytes(old), want_old);
    }
    assert_eq!(
        u64::from_ne_bytes(bytes_of(&m)[8..16].try_into().unwrap()),
        99
    );
    drop(p);
}

#[test]
fn sends_wait_for_a_receive_and_deliver_immediates() {
    let p = pair();
    let small = pattern(100, 1);
    let big = pattern(1 << 20, 2);
    // SAFETY: the buffers live until their completions are awaited.
    unsafe {
        p.a.submit(Cmd::Send {
            user: 1,
            conn: 1,
            ptr: small.as_ptr(),
            len: small.len(),
            imm: Some(0xabcd),
        });
        p.a.submit(Cmd::Send {
            user: 2,
            conn: 1,
            ptr: big.as_ptr(),
            len: big.len(),
            imm: None,
        });
    }
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        p.ca.pending(1) && p.ca.pending(2),
        "no receive posted: sends wait"
    );
    let mut r1 = vec![0u8; 256];
    let mut r2 = vec![0u8; 2 << 20];
    // SAFETY: the receive buffers live until their completions.
    unsafe {
        p.b.submit(Cmd::Recv {
            user: 11,
            ptr: r1.as_mut_ptr(),
            cap: r1.len(),
        });
        p.b.submit(Cmd::Recv {
            user: 12,
            ptr: r2.as_mut_ptr(),
            cap: r2.len(),
        });
    }
    let d = p.cb.wait(11).unwrap();
    assert_eq!(
        (d.len, d.imm, d.opcode, d.conn),
        (100, Some(0xabcd), RecvOpcode::SendImm, 7)
    );
    assert_eq!(&r1[..100], &small[..]);
    let d = p.cb.wait(12).unwrap();
    assert_eq!((d.len, d.imm, d.opcode), (1 << 20, None, RecvOpcode::Send));
    assert_eq!(&r2[..1 << 20], &big[..]);
    p.ca.wait(1).unwrap();
    p.ca.wait(2).unwrap();
    // Too long for the receive: both sides hear of it.
    let mut tiny = [0u8; 10];
    // SAFETY: as above.
    unsafe {
        p.b.submit(Cmd::Recv {
            user: 13,
            ptr: tiny.as_mut_ptr(),
            cap: 10,
        });
        p.a.submit(Cmd::Send {
            user: 3,
            conn: 1,
            ptr: small.as_ptr(),
            len: 100,
            imm: None,
        });
    }
    assert_eq!(p.cb.wait(13).unwrap_err().code(), ErrorCode::InvalidValue);
    assert_eq!(p.ca.wait(3).unwrap_err().code(), ErrorCode::InvalidValue);
}

#[test]
fn a_write_with_immediate_lands_then_completes_a_receive() {
    let p = pair();
    let (m, token, base) = exported(1 << 16, AccessFlags::RDMA_WRITE);
    let src = pattern(5000, 9);
    // SAFETY: src lives until the completion.
    unsafe {
        p.a.submit(Cmd::Write {
            user: 1,
            conn: 1,
            ptr: src.as_ptr(),
            len: src.len(),
            token,
            addr: base,
            imm: Some(77),
        })
    };
    std::thread::sleep(Duration::from_millis(50));
    assert!(p.ca.pending(1), "the immediate waits for a receive");
    let mut r = [0u8; 4];
    // SAFETY: r lives until the completion.
    unsafe {
        p.b.submit(Cmd::Recv {
            user: 5,
            ptr: r.as_mut_ptr(),
            cap: 4,
        })
    };
    let d = p.cb.wait(5).unwrap();
    assert_eq!(
        (d.imm, d.opcode, d.len),
        (Some(77), RecvOpcode::WriteImm, 5000)
    );
    p.ca.wait(1).unwrap();
    assert_eq!(&bytes_of(&m)[..5000], &src[..]);
}

#[test]
fn accesses_outside_the_export_its_permissions_or_its_life_are_refused() {
    let p = pair();
    let (mut m, token, base) = exported(4096, AccessFlags::RDMA_READ);
    let src = [1u8; 16];
    let mut dst = [0u8; 16];
    let write = |user, token, addr| {
        // SAFETY: src outlives the awaited completion.
        unsafe {
            p.a.submit(Cmd::Write {
                user,
                conn: 1,
                ptr: src.as_ptr(),
                len: 16,
                token,
                addr,
                imm: None,
            })
        };
        p.ca.wait(user).unwrap_err().code()
    };
    assert_eq!(write(1, token, base), ErrorCode::NotPermitted);
    assert_eq!(
        write(2, [token[0] ^ 1, token[1]], base),
        ErrorCode::NotFound
    );
    // SAFETY: dst outlives the awaited completions.
    let read = |user, addr, len| unsafe {
        p.a.submit(Cmd::Read {
            user,
            conn: 1,
            ptr: dst.as_ptr() as *mut u8,
            len,
            token,
            addr,
        });
        p.ca.wait(user).map(|d| d.len).map_err(|e| e.code())
    };
    assert_eq!(read(3, base + 4090, 16), Err(ErrorCode::InvalidValue));
    assert_eq!(read(4, base - 1, 16), Err(ErrorCode::InvalidValue));
    assert_eq!(read(5, base + 4080, 16), Ok(16));
    let mut old = [0u8; 8];
    // SAFETY: old outlives the completion.
    unsafe {
        p.a.submit(Cmd::Atomic {
            user: 6,
            conn: 1,
            token,
            addr: base,
            cas: false,
            b: 1,
            c: 0,
            result: old.as_mut_ptr(),
        })
    };
    assert_eq!(p.ca.wait(6).unwrap_err().code(), ErrorCode::NotPermitted);
    // Revoked by a stop: refused before a byte moves.
    m.stop().unwrap();
    assert_eq!(read(7, base, 16), Err(ErrorCode::NotFound));
    let _ = &mut dst;
}

#[test]
fn forged_keys_are_dropped_and_a_stopped_peer_fails_operations() {
    let p = pair();
    // A third NIC that knows B's worker address but not conn 7's key.
    let cc = Arc::new(Col::default());
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let c = Nic::start(&dev, doca_rdma::nic::GRANT_ALL, cc.clone()).unwrap();
    let mut forged = ConnDesc::decode(&p.b.descriptor(7, 0)).unwrap();
    forged.key = 12345;
    let msg = [5u8; 8];
    // SAFETY: msg outlives the awaited completion; control commands name no memory.
    unsafe {
        c.submit(Cmd::Register { conn: 3, key: 1 });
        c.submit(Cmd::Connect {
            conn: 3,
            desc: forged,
        });
        c.submit(Cmd::Send {
            user: 1,
            conn: 3,
            ptr: msg.as_ptr(),
            len: 8,
            imm: None,
        });
    }
    let mut r = [0u8; 8];
    // SAFETY: r outlives the test's waits.
    unsafe {
        p.b.submit(Cmd::Recv {
            user: 9,
            ptr: r.as_mut_ptr(),
            cap: 8,
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        p.cb.pending(9),
        "a message with a wrong key never reaches a receive"
    );
    drop(c);
    // A's peer stops: A's send fails instead of waiting for ever.
    let Pair { a, b, ca, cb } = p;
    drop(b);
    drop(cb);
    // SAFETY: msg outlives the completion.
    unsafe {
        a.submit(Cmd::Send {
            user: 2,
            conn: 1,
            ptr: msg.as_ptr(),
            len: 8,
            imm: None,
        })
    };
    let e = ca.wait(2).unwrap_err();
    assert!(
        matches!(
            e.code(),
            ErrorCode::NotConnected | ErrorCode::ConnectionReset | ErrorCode::ConnectionAborted
        ),
        "{e}"
    );
}
