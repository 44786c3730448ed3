//! A sync event shared by two processes: the host exports it, a DPU-side process (this
//! test binary run again) creates its handle from the export; both see one counter
//! through get/set/add, busy, yielding and blocking waits, and asynchronous jobs whose
//! armed event handles the other side's updates wake. Faults: the exporter destroys the
//! event or dies while the other side waits.

#![allow(clippy::result_large_err)]

use doca_core::device::{DEFAULT_MACHINE, Topology};
use doca_core::{Dev, ErrorCode, RetrieveError, SyncEvent, SyncEventJob, WorkQ};
use doca_testkit::peer::{self, Peer, hex, unhex};
use std::os::fd::{BorrowedFd, RawFd};
use std::time::{Duration, Instant};

fn device(role: &str, pci: &str) -> Dev {
    Topology::from_toml(DEFAULT_MACHINE, Some(role))
        .unwrap()
        .open_device(pci)
        .unwrap()
}

/// The host's event: publisher on the CPU, subscriber on the DPU, exported.
fn host_event() -> (SyncEvent, Vec<u8>) {
    let dev = device("host", "0000:3b:00.0");
    let se = SyncEvent::new();
    se.publisher_add_location_cpu(&dev).unwrap();
    se.subscriber_add_location_dpu().unwrap();
    let blob = se.export_to_dpu(&dev).unwrap().to_vec();
    assert_eq!(se.export_to_dpu(&dev).unwrap().to_vec(), blob);
    (se, blob)
}

fn poll_readable(fd: RawFd, timeout: Duration) -> bool {
    // SAFETY: the work queue owns the descriptor for the duration of the call.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let mut p = [rustix::event::PollFd::new(
        &fd,
        rustix::event::PollFlags::IN,
    )];
    let ts = rustix::time::Timespec {
        tv_sec: timeout.as_secs() as i64,
        tv_nsec: timeout.subsec_nanos() as i64,
    };
    matches!(rustix::event::poll(&mut p, Some(&ts)), Ok(n) if n > 0)
}

fn code(r: doca_core::Result<impl Sized>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) => e.code().name().to_string(),
    }
}

/// Child protocol: `import <blob> <sync|async>`, then `get`, `set V`, `add V`,
/// `wait V busy|yield|block`, `await V` (async wait job; answered once the armed event
/// handle wakes and the job completed), `configure`.
#[test]
fn child_process() {
    let Some(role) = peer::role() else {
        return;
    };
    assert_eq!(role, "dpu");
    let mut cmds = peer::commands();
    let first = cmds.next().unwrap();
    let w: Vec<&str> = first.split_whitespace().collect();
    let dev = device("dpu", "0000:03:00.0");
    let se = match SyncEvent::create_from_export(&dev, &unhex(w[1])) {
        Ok(se) => se,
        Err(e) => {
            peer::say(&format!("import-error {}", e.code().name()));
            return;
        }
    };
    assert!(se.is_from_export());
    let asynchronous = w[2] == "async";
    let mut wq = WorkQ::new(8).unwrap();
    if asynchronous {
        wq.set_event_driven_enable(true).unwrap();
        se.as_ctx().start().unwrap();
        se.as_ctx().workq_add(&mut wq).unwrap();
    } else {
        se.start().unwrap();
    }
    peer::say("imported");
    for line in cmds {
        let w: Vec<&str> = line.split_whitespace().collect();
        let arg = |i: usize| w.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
        let reply = match w[0] {
            "get" => match se.get() {
                Ok(v) => format!("value {v}"),
                Err(e) => e.code().name().to_string(),
            },
            "set" => code(se.update_set(arg(1))),
            "add" => match se.update_add(arg(1)) {
                Ok(prev) => format!("prev {prev}"),
                Err(e) => e.code().name().to_string(),
            },
            "wait" => {
                let t = Instant::now();
                let r = match w[2] {
                    "busy" => se.wait_gt(arg(1), u64::MAX),
                    "yield" => se.wait_gt_yield(arg(1), u64::MAX),
                    _ => se.wait_gt_blocking(arg(1), u64::MAX, Some(Duration::from_secs(20))),
                };
                format!("{} after {} ms", code(r), t.elapsed().as_millis())
            }
            "await" => {
                wq.submit_job(se.as_ctx(), SyncEventJob::wait_gt(arg(1), 0xff, 5))
                    .map_err(|(e, _)| e)
                    .unwrap();
                let fd = wq.event_handle().unwrap();
                wq.event_handle_arm().unwrap();
                peer::say("armed");
                let woke = poll_readable(fd, Duration::from_secs(20));
                let done = match wq.progress_retrieve() {
                    Ok(c) => format!("job done {}", c.event().user_data.u64()),
                    Err(RetrieveError::IoFailed(c)) => format!("job failed {}", code(c.status())),
                    Err(RetrieveError::Again) => "job pending".into(),
                };
                let _ = wq.event_handle_clear(fd);
                format!("woke {woke} {done}")
            }
            "configure" => code(se.subscriber_add_location_dpu()),
            c => panic!("unknown command {c}"),
        };
        peer::say(&reply);
    }
    if asynchronous {
        let _ = se.as_ctx().workq_rm(&mut wq);
        let _ = se.as_ctx().stop();
    } else {
        let _ = se.stop();
    }
}

fn dpu(blob: &[u8], mode: &str) -> Peer {
    let mut p = Peer::spawn("child_process", "dpu");
    p.send(&format!("import {} {mode}", hex(blob)));
    p
}

#[test]
fn both_sides_see_one_counter_and_wake_each_other() {
    let (se, blob) = host_event();
    se.start().unwrap();
    let mut p = dpu(&blob, "sync");
    assert_eq!(p.recv(), "imported");
    p.send("configure");
    assert_eq!(
        p.recv(),
        "DOCA_ERROR_NOT_PERMITTED",
        "an imported handle cannot be configured"
    );
    se.update_set(41).unwrap();
    p.send("get");
    assert_eq!(p.recv(), "value 41");
    p.send("add 1");
    assert_eq!(p.recv(), "prev 41");
    assert_eq!(se.get().unwrap(), 42);
    // The DPU side waits (each kind); the host updates after a pause.
    for (i, kind) in ["busy", "yield", "block"].into_iter().enumerate() {
        let target = 100 + i as u64;
        p.send(&format!("wait {} {kind}", target - 1));
        std::thread::sleep(Duration::from_millis(100));
        se.update_set(target).unwrap();
        let r = p.recv();
        assert!(r.starts_with("ok after"), "{kind}: {r}");
    }
    // The host waits (blocking, on the futex) for the DPU side's update.
    let h = std::thread::spawn({
        let se = se.clone();
        move || se.wait_gt_blocking(499, u64::MAX, Some(Duration::from_secs(20)))
    });
    std::thread::sleep(Duration::from_millis(100));
    p.send("set 500");
    assert_eq!(p.recv(), "ok");
    h.join().unwrap().unwrap();
    // Atomic adds from both sides at once lose nothing.
    se.update_set(0).unwrap();
    let adder = std::thread::spawn({
        let se = se.clone();
        move || {
            for _ in 0..10_000 {
                se.update_add(1).unwrap();
            }
        }
    });
    for _ in 0..200 {
        p.send("add 1");
        assert!(p.recv().starts_with("prev"));
    }
    adder.join().unwrap();
    assert_eq!(se.get().unwrap(), 10_200);
    p.finish();
    se.stop().unwrap();
    se.destroy().map_err(|(_, e)| e).unwrap();
}

#[test]
fn an_async_wait_job_on_the_dpu_side_wakes_its_armed_handle() {
    let (se, blob) = host_event();
    se.start().unwrap();
    let mut p = dpu(&blob, "async");
    assert_eq!(p.recv(), "imported");
    for round in 1..=3u64 {
        p.send(&format!("await {}", round * 10));
        assert_eq!(p.recv(), "armed");
        std::thread::sleep(Duration::from_millis(50));
        se.update_set(round * 10 + 1).unwrap();
        assert_eq!(p.recv(), "woke true job done 5", "round {round}");
    }
    p.finish();
    se.stop().unwrap();
}

#[test]
fn an_async_wait_job_on_the_host_side_wakes_on_the_dpu_sides_update() {
    let dev = device("host", "0000:3b:00.0");
    let se = SyncEvent::new();
    se.publisher_add_location_dpu().unwrap();
    se.subscriber_add_location_cpu(&dev).unwrap();
    let blob = se.export_to_dpu(&dev).unwrap().to_vec();
    let mut wq = WorkQ::new(8).unwrap();
    wq.set_event_driven_enable(true).unwrap();
    se.as_ctx().start().unwrap();
    se.as_ctx().workq_add(&mut wq).unwrap();
    let mut p = dpu(&blob, "sync");
    assert_eq!(p.recv(), "imported");
    wq.submit_job(se.as_ctx(), SyncEventJob::wait_gt(6, 0xff, 9))
        .map_err(|(e, _)| e)
        .unwrap();
    let fd = wq.event_handle().unwrap();
    wq.event_handle_arm().unwrap();
    assert!(!poll_readable(fd, Duration::from_millis(50)));
    p.send("set 7");
    assert_eq!(p.recv(), "ok");
    assert!(
        poll_readable(fd, Duration::from_secs(10)),
        "the handle woke"
    );
    let c = wq.progress_retrieve().map_err(|e| e.code()).unwrap();
    assert_eq!(c.event().user_data.u64(), 9);
    p.finish();
    se.as_ctx().workq_rm(&mut wq).unwrap();
    se.as_ctx().stop().unwrap();
}

#[test]
fn destroying_the_exported_event_ends_the_other_sides_wait() {
    let (se, blob) = host_event();
    se.start().unwrap();
    let mut p = dpu(&blob, "sync");
    assert_eq!(p.recv(), "imported");
    p.send("wait 1000 block");
    std::thread::sleep(Duration::from_millis(150));
    se.stop().unwrap();
    se.destroy().map_err(|(_, e)| e).unwrap();
    let r = p.recv();
    assert!(r.starts_with("DOCA_ERROR_CONNECTION_ABORTED"), "{r}");
    p.send("get");
    assert_eq!(p.recv(), "DOCA_ERROR_CONNECTION_ABORTED");
    p.finish();
}

#[test]
fn the_exporters_death_wakes_the_other_sides_waits_with_an_error() {
    // The exporter is a child too: it exports, says the descriptor, and is killed while
    // the importer waits (blocking, yielding, spinning); the wait ends with an error
    // within a second of the kill.
    for kind in ["block", "yield", "busy"] {
        let mut host = Peer::spawn("exporter_process", "host");
        let blob = unhex(&host.recv());
        let mut p = dpu(&blob, "sync");
        assert_eq!(p.recv(), "imported");
        p.send(&format!("wait 1000 {kind}"));
        std::thread::sleep(Duration::from_millis(150));
        host.kill();
        let killed = Instant::now();
        let r = p
            .recv_within(Duration::from_secs(1))
            .unwrap_or_else(|| panic!("{kind}: the wait did not end within a second"));
        assert!(r.starts_with("DOCA_ERROR_CONNECTION_RESET"), "{kind}: {r}");
        eprintln!("{kind}: {r}, {:?} after the kill", killed.elapsed());
        p.finish();
        if kind == "busy" {
            // The exporter is gone: its descriptor is refused.
            let mut p = dpu(&blob, "sync");
            assert_eq!(p.recv(), "import-error DOCA_ERROR_NOT_FOUND");
            p.finish();
        }
    }
}

#[test]
fn exporter_process() {
    if peer::role().as_deref() != Some("host") {
        return;
    }
    let (se, blob) = host_event();
    se.start().unwrap();
    peer::say(&hex(&blob));
    for _ in peer::commands() {}
}

#[test]
fn export_and_import_refuse_what_does_not_fit() {
    let host = device("host", "0000:3b:00.0");
    let dpu_dev = device("dpu", "0000:03:00.0");
    let se = SyncEvent::new();
    // A DPU device does not export to the DPU.
    assert_eq!(
        se.export_to_dpu(&dpu_dev).unwrap_err().code(),
        ErrorCode::NotSupported
    );
    let blob = se.export_to_dpu(&host).unwrap();
    // Not in the exporting process itself; not with a host device; not a damaged blob.
    assert_eq!(
        SyncEvent::create_from_export(&dpu_dev, &blob)
            .unwrap_err()
            .code(),
        ErrorCode::NotSupported
    );
    let mut bad = blob.to_vec();
    bad[50] ^= 4;
    assert_eq!(
        SyncEvent::create_from_export(&dpu_dev, &bad)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidValue
    );
    assert_eq!(
        SyncEvent::create_from_export(&dpu_dev, &blob[..10])
            .unwrap_err()
            .code(),
        ErrorCode::InvalidValue
    );
    // An mmap's descriptor is not a sync event's.
    let mut m = doca_core::Mmap::new();
    m.set_memory(vec![0u8; 64]).unwrap();
    m.set_permissions(doca_core::AccessFlags::DPU_READ_WRITE)
        .unwrap();
    m.dev_add(&host).unwrap();
    m.start().unwrap();
    let mblob = m.export_dpu(&host).unwrap();
    assert_eq!(
        SyncEvent::create_from_export(&dpu_dev, &mblob)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidValue
    );
}
