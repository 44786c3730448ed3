//! Host and DPU as two processes: a host-side process exports an mmap, a DPU-side
//! process (this test binary run again, as a child) imports it and moves the bytes with
//! DMA jobs, on both engines. Faults: the exporter stops, destroys or dies; the importer
//! dies mid-transfer; descriptors that no live export produced.

#![allow(clippy::result_large_err)]

use doca_core::device::{self, DEFAULT_MACHINE, Topology};
use doca_core::{AccessFlags, Buf, BufInventory, Data, Dev, ErrorCode, Mmap, RetrieveError, WorkQ};
use doca_dma::{Dma, MemcpyJob};
use doca_testkit::peer::{self, Peer, hex, unhex};
use std::time::{Duration, Instant};

/// The default machine's device `pci` on `role`'s side, with `threads` engine threads.
fn device(role: &str, pci: &str, threads: u32) -> Dev {
    let text = DEFAULT_MACHINE.replace(
        &format!("\npci_addr = \"{pci}\"\n"),
        &format!("\npci_addr = \"{pci}\"\nengine_threads = {threads}\n"),
    );
    Topology::from_toml(&text, Some(role))
        .unwrap()
        .open_device(pci)
        .unwrap()
}

fn host_dev() -> Dev {
    device("host", "0000:b1:00.0", 0)
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2654435761).to_le_bytes()[1] ^ seed)
        .collect()
}

/// Host side: a started mmap of `len` bytes holding `pattern(len, 1)`, exported.
fn exported(len: usize, perms: AccessFlags) -> (Mmap, Dev, Vec<u8>, usize) {
    exported_in(len, perms, false)
}

/// As [`exported`], in shared memory when `shared` (importers map it).
fn exported_in(len: usize, perms: AccessFlags, shared: bool) -> (Mmap, Dev, Vec<u8>, usize) {
    let dev = host_dev();
    let mut mmap = Mmap::new();
    if shared {
        let mut m = doca_core::SharedMemory::new(len).unwrap();
        use doca_core::MemoryRegion;
        // SAFETY: the region's len bytes, borrowed exclusively here.
        unsafe { std::slice::from_raw_parts_mut(m.as_mut_ptr(), len) }
            .copy_from_slice(&pattern(len, 1));
        mmap.set_memory(m).unwrap();
    } else {
        mmap.set_memory(pattern(len, 1)).unwrap();
    }
    mmap.set_permissions(perms).unwrap();
    mmap.dev_add(&dev).unwrap();
    mmap.start().unwrap();
    let blob = mmap.export_dpu(&dev).unwrap().to_vec();
    let base = mmap.memrange().unwrap().0 as usize;
    (mmap, dev, blob, base)
}

fn run_job(wq: &mut WorkQ, dma: &Dma, src: Buf, dst: Buf) -> Result<Buf, doca_core::Error> {
    wq.submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, 1))
        .map_err(|(e, _)| e)?;
    let mut done = match wq.wait(Some(Duration::from_secs(20))) {
        Ok(c) => c,
        Err(RetrieveError::IoFailed(c)) => return Err(c.status().unwrap_err()),
        Err(RetrieveError::Again) => panic!("the job did not complete in 20 s"),
    };
    Ok(done.take_buf(MemcpyJob::DST).unwrap())
}

// ---- The child side ----------------------------------------------------------------

/// Child protocol (one command per line on stdin, answers prefixed with '>'):
/// `import <threads> <blob-hex> <addr> <len>` then `read`, `write <seed>`, `sg`,
/// `loop`, `try-read`, `quit`.
#[test]
fn child_process() {
    let Some(role) = peer::role() else {
        return;
    };
    let mut lines = peer::commands();
    let say = |s: String| peer::say(&s);
    match role.as_str() {
        "importer" => importer(&mut lines, say),
        "exporter" => {
            // A host process that exports and then waits to be killed.
            let (mmap, _dev, blob, base) = exported(8 << 20, AccessFlags::DPU_READ_WRITE);
            say(format!("{} {base} {}", hex(&blob), 8 << 20));
            for _ in lines.by_ref() {}
            drop(mmap);
        }
        r => panic!("unknown child role {r}"),
    }
}

fn importer(lines: &mut impl Iterator<Item = String>, say: impl Fn(String)) {
    let first = lines.next().unwrap();
    let w: Vec<&str> = first.split_whitespace().collect();
    assert_eq!(w[0], "import");
    let threads: u32 = w[1].parse().unwrap();
    let blob = unhex(w[2]);
    let addr: usize = w[3].parse().unwrap();
    let len: usize = w[4].parse().unwrap();
    let dev = if w.get(5) == Some(&"norep") {
        // A DPU device without the representor of the exporting host function b1:00.0.
        let text = DEFAULT_MACHINE.replace(
            "  pci_addr = \"0000:b1:00.0\"\n  vuid",
            "  pci_addr = \"0000:b2:00.0\"\n  vuid",
        );
        let t = Topology::from_toml(&text, Some("dpu")).unwrap();
        device::devinfo_list_from(&t)[0].open().unwrap()
    } else if w.get(5) == Some(&"host") {
        host_dev()
    } else {
        device("dpu", "0000:03:00.0", threads)
    };
    let remote = match Mmap::create_from_export(Data(0), &blob, &dev) {
        Ok(m) => m,
        Err(e) => {
            say(format!("import-error {}", e.code().name()));
            return;
        }
    };
    assert!(remote.from_export() && remote.is_started());
    let mut local = Mmap::new();
    local.set_memory(vec![0u8; 2 * len]).unwrap();
    local.dev_add(&dev).unwrap();
    local.start().unwrap();
    let mut inv = BufInventory::new(64).unwrap();
    inv.start().unwrap();
    let dma = Dma::new();
    dma.as_ctx().dev_add(&dev).unwrap();
    dma.as_ctx().start().unwrap();
    let mut wq = WorkQ::new(8).unwrap();
    dma.as_ctx().workq_add(&mut wq).unwrap();
    say("imported".into());
    for line in lines {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w[0] {
            // Remote -> local, then report a checksum of what arrived.
            "read" => {
                let src = inv.buf_by_data(&remote, addr as *mut u8, len).unwrap();
                let dst = inv.buf_at(&local, 0, len).unwrap();
                match run_job(&mut wq, &dma, src, dst) {
                    Ok(d) => say(format!("read {}", hex(&digest(&d.data_to_vec())))),
                    Err(e) => say(format!("error {}", e.code().name())),
                }
            }
            // Local -> remote: pattern(len, seed) into the exporter's memory.
            "write" => {
                let seed: u8 = w[1].parse().unwrap();
                local.write_at(len, &pattern(len, seed)).unwrap();
                let src = inv.buf_with_data_at(&local, len, len).unwrap();
                let dst = inv.buf_by_addr(&remote, addr as *mut u8, len).unwrap();
                match run_job(&mut wq, &dma, src, dst) {
                    Ok(_) => say("written".into()),
                    Err(e) => say(format!("error {}", e.code().name())),
                }
            }
            // Scatter-gather both ways: 4 remote pieces -> 3 local, then 3 local -> 4
            // remote pieces in the second half, reversed piece order.
            "sg" => {
                let q = len / 4;
                let mut src = inv.buf_by_data(&remote, addr as *mut u8, q).unwrap();
                for i in 1..4 {
                    let e = inv
                        .buf_by_data(&remote, (addr + i * q) as *mut u8, q)
                        .unwrap();
                    src.chain(e).map_err(|(e, _)| e).unwrap();
                }
                let t = len / 3 + 1;
                let mut dst = inv.buf_at(&local, 0, t).unwrap();
                for i in 1..3 {
                    let e = inv.buf_at(&local, i * t, t).unwrap();
                    dst.chain(e).map_err(|(e, _)| e).unwrap();
                }
                let got = run_job(&mut wq, &dma, src, dst).unwrap();
                say(format!("sg-read {}", hex(&digest(&got.list_data_to_vec()))));
                drop(got);
                // Back out: local pieces [0, len) -> remote pieces in reverse order.
                let half = len / 2;
                let mut src = inv.buf_with_data_at(&local, 0, half / 2).unwrap();
                let e = inv.buf_with_data_at(&local, half / 2, half / 2).unwrap();
                src.chain(e).map_err(|(e, _)| e).unwrap();
                let mut dst = inv
                    .buf_by_addr(&remote, (addr + half + half / 2) as *mut u8, half / 2)
                    .unwrap();
                let e = inv
                    .buf_by_addr(&remote, (addr + half) as *mut u8, half / 2)
                    .unwrap();
                dst.chain(e).map_err(|(e, _)| e).unwrap();
                run_job(&mut wq, &dma, src, dst).unwrap();
                say("sg-written".into());
            }
            // Copies until one fails; reports the first failure.
            "loop" => {
                say("looping".into());
                loop {
                    let src = inv.buf_by_data(&remote, addr as *mut u8, len).unwrap();
                    let dst = inv.buf_at(&local, 0, len).unwrap();
                    if let Err(e) = run_job(&mut wq, &dma, src, dst) {
                        say(format!("loop-error {}", e.code().name()));
                        break;
                    }
                }
            }
            "mapped" => say(format!("mapped {}", remote.remote().unwrap().is_mapped())),
            "quit" => break,
            c => panic!("unknown command {c}"),
        }
    }
    dma.as_ctx().workq_rm(&mut wq).unwrap();
    dma.as_ctx().stop().unwrap();
}

fn digest(b: &[u8]) -> [u8; 8] {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h = (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
    }
    h.to_le_bytes()
}

fn import(threads: u32, blob: &[u8], base: usize, len: usize) -> Peer {
    let mut p = Peer::spawn("child_process", "importer");
    p.send(&format!("import {threads} {} {base} {len}", hex(blob)));
    p
}

// ---- The tests (host side) ---------------------------------------------------------

#[test]
fn the_dpu_reads_and_writes_host_memory_on_both_engines() {
    for (threads, shared) in [(0, false), (3, false), (0, true), (3, true)] {
        let len = 6 << 20;
        let (mmap, dev, blob, base) = exported_in(len, AccessFlags::DPU_READ_WRITE, shared);
        assert!(mmap.exported());
        assert_eq!(
            mmap.export_dpu(&dev).unwrap().to_vec(),
            blob,
            "same descriptor again"
        );
        let mut p = import(threads, &blob, base, len);
        assert_eq!(p.recv(), "imported");
        p.send("mapped");
        assert_eq!(p.recv(), format!("mapped {shared}"));
        p.send("read");
        assert_eq!(p.recv(), format!("read {}", hex(&digest(&pattern(len, 1)))));
        p.send("write 7");
        assert_eq!(p.recv(), "written");
        let mut now = vec![0u8; len];
        mmap.read_at(0, &mut now).unwrap();
        assert!(
            now == pattern(len, 7),
            "the host memory holds what the DPU wrote"
        );
        p.send("sg");
        // The four remote pieces read back in order: the whole range.
        assert_eq!(
            p.recv(),
            format!("sg-read {}", hex(&digest(&pattern(len, 7))))
        );
        assert_eq!(p.recv(), "sg-written");
        mmap.read_at(0, &mut now).unwrap();
        let (q, h) = (len / 4, len / 2);
        // Local [0, q) went to remote [h + q, len), local [q, 2q) to remote [h, h + q).
        assert!(now[h + q..] == pattern(len, 7)[..q]);
        assert!(now[h..h + q] == pattern(len, 7)[q..2 * q]);
        p.send("quit");
        p.finish();
    }
}

#[test]
fn a_read_only_export_refuses_writes() {
    for shared in [false, true] {
        read_only(shared);
    }
}

fn read_only(shared: bool) {
    let len = 1 << 16;
    let (mmap, _dev, blob, base) = exported_in(len, AccessFlags::DPU_READ_ONLY, shared);
    let mut p = import(0, &blob, base, len);
    assert_eq!(p.recv(), "imported");
    p.send("write 9");
    assert_eq!(p.recv(), "error DOCA_ERROR_NOT_PERMITTED");
    p.send("read");
    assert_eq!(p.recv(), format!("read {}", hex(&digest(&pattern(len, 1)))));
    let mut now = vec![0u8; len];
    mmap.read_at(0, &mut now).unwrap();
    assert!(now == pattern(len, 1), "nothing was written");
    p.send("quit");
    p.finish();
}

#[test]
fn export_needs_a_started_mmap_the_dpu_permission_and_a_host_device() {
    let dev = host_dev();
    let mut mmap = Mmap::new();
    mmap.set_memory(vec![0u8; 4096]).unwrap();
    mmap.dev_add(&dev).unwrap();
    assert_eq!(
        mmap.export_dpu(&dev).unwrap_err().code(),
        ErrorCode::BadState
    );
    mmap.start().unwrap();
    // Local read-write only: the export fails, as the guide says.
    assert_eq!(
        mmap.export_dpu(&dev).unwrap_err().code(),
        ErrorCode::NotPermitted
    );
    assert_eq!(
        mmap.export_rdma(&dev).unwrap_err().code(),
        ErrorCode::NotPermitted
    );
    assert!(!mmap.exported());
    mmap.stop().unwrap();
    mmap.set_permissions(AccessFlags::DPU_READ_WRITE | AccessFlags::RDMA_READ)
        .unwrap();
    mmap.start().unwrap();
    let other = device("host", "0000:3b:00.0", 0);
    assert_eq!(
        mmap.export_dpu(&other).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    let a = mmap.export_dpu(&dev).unwrap();
    let b = mmap.export_rdma(&dev).unwrap();
    assert_ne!(a, b);
    assert!(mmap.exported());
    // Importing in the exporting process is refused.
    let dpu = device("dpu", "0000:03:00.0", 0);
    assert_eq!(
        Mmap::create_from_export(Data(0), &a, &dpu)
            .unwrap_err()
            .code(),
        ErrorCode::NotSupported
    );
    // A DPU device cannot export to the DPU.
    let mut d = Mmap::new();
    d.set_memory(vec![0u8; 64]).unwrap();
    d.set_permissions(AccessFlags::DPU_READ_WRITE).unwrap();
    d.dev_add(&dpu).unwrap();
    d.start().unwrap();
    assert_eq!(
        d.export_dpu(&dpu).unwrap_err().code(),
        ErrorCode::NotSupported
    );
    mmap.stop().unwrap();
    assert!(!mmap.exported(), "stop ends the exports");
}

#[test]
fn descriptors_no_live_export_made_are_refused() {
    let len = 1 << 16;
    let (mut mmap, _dev, blob, base) = exported(len, AccessFlags::DPU_READ_WRITE);
    // Truncated, padded, a flipped byte (checksum), a forged token (checksum fixed up by
    // re-encoding is not possible from outside: flip and see the refusal).
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("truncated", blob[..blob.len() - 1].to_vec()),
        ("padded", [&blob[..], &[0]].concat()),
        ("flipped", {
            let mut b = blob.clone();
            b[45] ^= 1;
            b
        }),
    ];
    for (what, b) in cases {
        let mut p = import(0, &b, base, len);
        let r = p.recv();
        assert!(r.starts_with("import-error"), "{what}: {r}");
        p.finish();
    }
    // A stopped mmap's descriptor: no live export behind it any more.
    mmap.stop().unwrap();
    let mut p = import(0, &blob, base, len);
    assert_eq!(p.recv(), "import-error DOCA_ERROR_NOT_FOUND");
    p.finish();
    // Started and exported again: a new descriptor; the old one stays dead.
    mmap.start().unwrap();
    let dev = host_dev();
    let fresh = mmap.export_dpu(&dev).unwrap().to_vec();
    assert_ne!(fresh, blob);
    let mut p = import(0, &blob, base, len);
    assert!(p.recv().starts_with("import-error"));
    p.finish();
    // A destroyed mmap's descriptor.
    drop(mmap);
    let mut p = import(0, &fresh, base, len);
    assert!(p.recv().starts_with("import-error"));
    p.finish();
}

#[test]
fn only_the_dpu_device_that_represents_the_exporter_imports() {
    let len = 4096;
    let (_mmap, _dev, blob, base) = exported(len, AccessFlags::DPU_READ_WRITE);
    // 03:00.0 owns the representor of b1:00.0, the exporting device: accepted.
    let mut p = import(0, &blob, base, len);
    assert_eq!(p.recv(), "imported");
    p.send("quit");
    p.finish();
    // A DPU device without that representor, and a host device: refused.
    for (which, code) in [("norep", "NOT_PERMITTED"), ("host", "NOT_SUPPORTED")] {
        let mut p = Peer::spawn("child_process", "importer");
        p.send(&format!("import 0 {} {base} {len} {which}", hex(&blob)));
        assert_eq!(
            p.recv(),
            format!("import-error DOCA_ERROR_{code}"),
            "{which}"
        );
        p.finish();
    }
}

#[test]
fn after_stop_the_importer_gets_errors_and_no_byte_is_touched() {
    for shared in [false, true] {
        after_stop(shared);
    }
}

fn after_stop(shared: bool) {
    let len = 8 << 20;
    let (mut mmap, _dev, blob, base) = exported_in(len, AccessFlags::DPU_READ_WRITE, shared);
    let mut p = import(0, &blob, base, len);
    assert_eq!(p.recv(), "imported");
    p.send("loop");
    assert_eq!(p.recv(), "looping");
    std::thread::sleep(Duration::from_millis(200));
    // Stop revokes the export and waits for the copy in flight.
    mmap.stop().unwrap();
    assert_eq!(p.recv(), "loop-error DOCA_ERROR_CONNECTION_ABORTED");
    p.send("write 3");
    assert_eq!(p.recv(), "error DOCA_ERROR_CONNECTION_ABORTED");
    let mut now = vec![0u8; len];
    mmap.read_at(0, &mut now).unwrap();
    assert!(now == pattern(len, 1), "no byte changed after stop");
    p.send("quit");
    p.finish();
}

#[test]
fn an_importer_killed_mid_transfer_does_not_block_stop_or_destroy() {
    for _ in 0..3 {
        let len = 32 << 20;
        let (mut mmap, _dev, blob, base) = exported(len, AccessFlags::DPU_READ_WRITE);
        let mut p = import(2, &blob, base, len);
        assert_eq!(p.recv(), "imported");
        p.send("loop");
        assert_eq!(p.recv(), "looping");
        std::thread::sleep(Duration::from_millis(100));
        p.kill();
        let t = Instant::now();
        mmap.stop().unwrap();
        drop(mmap);
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "stop waited {:?}",
            t.elapsed()
        );
    }
}

#[test]
fn an_exporter_killed_mid_transfer_fails_the_importers_jobs() {
    let mut host = Peer::spawn("child_process", "exporter");
    let line = host.recv();
    let w: Vec<&str> = line.split_whitespace().collect();
    let (blob, base, len) = (unhex(w[0]), w[1].parse().unwrap(), w[2].parse().unwrap());
    let mut p = import(0, &blob, base, len);
    assert_eq!(p.recv(), "imported");
    p.send("loop");
    assert_eq!(p.recv(), "looping");
    std::thread::sleep(Duration::from_millis(150));
    host.kill();
    let r = p.recv();
    assert!(
        r == "loop-error DOCA_ERROR_CONNECTION_RESET" || r == "loop-error DOCA_ERROR_IO_FAILED",
        "{r}"
    );
    p.send("read");
    assert_eq!(p.recv(), "error DOCA_ERROR_CONNECTION_RESET");
    p.send("quit");
    p.finish();
    // Its descriptor is refused from now on: the process is gone.
    let mut q = import(0, &blob, base, len);
    assert_eq!(q.recv(), "import-error DOCA_ERROR_NOT_FOUND");
    q.finish();
}

#[test]
fn an_rdma_export_is_imported_by_another_process_with_any_device() {
    let len = 1 << 16;
    let dev = host_dev();
    let mut mmap = Mmap::new();
    mmap.set_memory(pattern(len, 1)).unwrap();
    mmap.set_permissions(AccessFlags::RDMA_READ).unwrap();
    mmap.dev_add(&dev).unwrap();
    mmap.start().unwrap();
    // No DPU permission: no DPU export; the RDMA one works.
    assert_eq!(
        mmap.export_dpu(&dev).unwrap_err().code(),
        ErrorCode::NotPermitted
    );
    let blob = mmap.export_rdma(&dev).unwrap().to_vec();
    let base = mmap.memrange().unwrap().0 as usize;
    // Imported on the host side, by another process.
    let mut p = Peer::spawn("child_process", "importer");
    p.send(&format!("import 0 {} {base} {len} host", hex(&blob)));
    assert_eq!(p.recv(), "imported");
    p.send("read");
    assert_eq!(p.recv(), format!("read {}", hex(&digest(&pattern(len, 1)))));
    p.send("write 5");
    assert_eq!(p.recv(), "error DOCA_ERROR_NOT_PERMITTED", "RDMA_READ only");
    p.send("quit");
    p.finish();
}
