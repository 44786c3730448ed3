//! What another process hands us, mutated: export descriptors (for mmaps and sync
//! events) and comm channel traffic (greetings and messages sent to a live service by a
//! stranger). Every input must be refused or handled with a DOCA error: no panic, no
//! hang, no memory error.
//!
//! The first byte picks the case. Descriptors are tried raw, and as a live export's
//! descriptor XORed with the input and sealed again (its checksum recomputed), so that
//! the checks behind the checksum are reached too; DOCA 1.x's JSON descriptors as the
//! live export's text XORed with the input, or as the input itself.

#![no_main]

use doca_comm_channel::Endpoint;
use doca_core::device::{self, DEFAULT_MACHINE, Topology};
use doca_core::{AccessFlags, Data, Dev, Mmap, RepFilter, SyncEvent};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

struct World {
    host: Dev,
    dpu: Dev,
    mmap: Mmap,
    mmap_blob: Vec<u8>,
    se_blob: Vec<u8>,
    _se: SyncEvent,
}

// SAFETY-free: the fuzzer runs inputs on one thread; the world is only read.
struct Shared(World);
unsafe impl Sync for Shared {}
unsafe impl Send for Shared {}

fn device(role: &str) -> Dev {
    let t = Topology::from_toml(DEFAULT_MACHINE, Some(role)).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

fn world() -> &'static World {
    static W: OnceLock<Shared> = OnceLock::new();
    &W.get_or_init(|| {
        let host = device("host");
        let dpu = device("dpu");
        let mut mmap = Mmap::new();
        // Shared memory: mutated descriptors also reach the code that maps it.
        mmap.set_memory(doca_core::SharedMemory::new(4096).unwrap())
            .unwrap();
        mmap.set_permissions(AccessFlags::DPU_READ_WRITE | AccessFlags::RDMA_WRITE)
            .unwrap();
        mmap.dev_add(&host).unwrap();
        mmap.start().unwrap();
        let mmap_blob = mmap.export_dpu(&host).unwrap().to_vec();
        let se = SyncEvent::new();
        let se_blob = se.export_to_dpu(&host).unwrap().to_vec();
        Shared(World {
            host,
            dpu,
            mmap,
            mmap_blob,
            se_blob,
            _se: se,
        })
    })
    .0
}

/// Recomputes the descriptor's checksum (FNV-1a of its first 88 bytes, at 88..96).
fn reseal(b: &mut [u8]) {
    if b.len() < 96 {
        return;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in &b[..88] {
        h = (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
    }
    b[88..96].copy_from_slice(&h.to_le_bytes());
}

fn try_descriptor(w: &World, d: &[u8]) {
    for dev in [&w.dpu, &w.host] {
        if let Ok(m) = Mmap::create_from_export(Data(0), d, dev) {
            // No export of another process of this machine exists here. A well-formed
            // RDMA descriptor naming a process this one cannot reach (another machine)
            // is taken as memory only RDMA tasks reach, which the exporter checks: no
            // byte of it is reachable from here.
            let r = m.remote().expect("an import is remote memory");
            assert!(
                r.net_key().is_some() && !r.is_local(),
                "a mutated descriptor was accepted as reachable memory: {m:?}"
            );
            assert!(m.read_at(0, &mut [0u8; 1]).is_err());
        }
        let _ = SyncEvent::create_from_export(dev, d);
    }
}

fn stranger(data: &[u8]) {
    use std::os::unix::ffi::OsStrExt;
    static SERVICE: OnceLock<std::sync::Mutex<Endpoint>> = OnceLock::new();
    let ep = SERVICE.get_or_init(|| {
        // SAFETY: getuid cannot fail.
        let dir = std::env::temp_dir().join(format!("doca-fuzz-{}", std::process::id()));
        let _ = std::fs::create_dir(&dir);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        // SAFETY: set once, before any other thread looks at the environment.
        unsafe { std::env::set_var("DOCA_SW_RUNTIME_DIR", &dir) };
        let dpu = device("dpu");
        let rep = dpu.rep_list(RepFilter::All).unwrap()[0].open().unwrap();
        let mut ep = Endpoint::new();
        ep.set_device(&dpu).unwrap();
        ep.set_device_rep(&rep).unwrap();
        ep.listen("fuzz").unwrap();
        std::sync::Mutex::new(ep)
    });
    let mut ep = ep.lock().unwrap();
    // The service's socket: the only one in the directory.
    let dir = std::path::PathBuf::from(std::env::var_os("DOCA_SW_RUNTIME_DIR").unwrap()).join("cc");
    let Some(path) = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .next()
    else {
        return;
    };
    // Split the input into packets at 0xff bytes; send them on one connection.
    // SAFETY: plain socket calls on a descriptor this function owns and closes.
    unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0);
        let mut a: libc::sockaddr_un = std::mem::zeroed();
        a.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (d, c) in a.sun_path.iter_mut().zip(path.as_os_str().as_bytes()) {
            *d = *c as libc::c_char;
        }
        let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        if libc::connect(fd, (&raw const a).cast(), len) == 0 {
            for p in data.split(|&b| b == 0xff) {
                libc::send(
                    fd,
                    p.as_ptr().cast(),
                    p.len(),
                    libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
                );
            }
        }
        let mut buf = [0u8; 64];
        for _ in 0..8 {
            let _ = ep.recvfrom(&mut buf);
        }
        libc::close(fd);
        for _ in 0..4 {
            let _ = ep.recvfrom(&mut buf);
        }
        for id in ep.peers() {
            let _ = ep.disconnect(id);
        }
        let _ = ep.pending_connections();
    }
}

fuzz_target!(|data: &[u8]| {
    let w = world();
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    match pick % 5 {
        0 => try_descriptor(w, rest),
        4 => {
            // DOCA 1.x's JSON form: the live export's text mutated, or the input as text.
            let text = if pick & 0x80 == 0 {
                let mut t = doca_core::memory::export_desc_to_json(&w.mmap_blob)
                    .unwrap()
                    .into_bytes();
                for (x, y) in t.iter_mut().zip(rest) {
                    *x ^= y;
                }
                t
            } else {
                rest.to_vec()
            };
            if let Ok(d) = doca_core::memory::export_desc_from_json(&text) {
                let again = doca_core::memory::export_desc_to_json(&d)
                    .expect("a descriptor read from JSON writes as JSON");
                assert_eq!(
                    doca_core::memory::export_desc_from_json(again.as_bytes()).unwrap(),
                    d
                );
                try_descriptor(w, &d);
            }
        }
        1 | 2 => {
            let mut d = if pick % 4 == 1 {
                w.mmap_blob.clone()
            } else {
                w.se_blob.clone()
            };
            for (x, y) in d.iter_mut().zip(rest) {
                *x ^= y;
            }
            if pick & 0x80 == 0 {
                reseal(&mut d);
            }
            try_descriptor(w, &d);
        }
        _ => stranger(rest),
    }
    assert!(w.mmap.exported());
});
