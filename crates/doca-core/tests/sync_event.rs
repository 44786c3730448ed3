//! Sync events: configuration rules, synchronous operations under contention, waits that
//! wake when the value passes, caller memory, and asynchronous jobs on both engines
//! (polling and epoll).

#![allow(clippy::result_large_err)]

use doca_core::device::{self, Topology};
use doca_core::sync_event::{
    JOB_GET, JOB_UPDATE_ADD, JOB_UPDATE_SET, JOB_WAIT_EQ, JOB_WAIT_GT, JOB_WAIT_NEQ,
};
use doca_core::{Dev, ErrorCode, RetrieveError, SyncEvent, SyncEventJob, WorkQ};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A device running jobs on `threads` engine threads (each test file on its own bus).
fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0xb0 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

fn started(dev: &Dev) -> SyncEvent {
    let se = SyncEvent::new();
    se.publisher_add_location_cpu(dev).unwrap();
    se.subscriber_add_location_cpu(dev).unwrap();
    se.start().unwrap();
    se
}

#[test]
fn configuration_rules() {
    let dev = device(0);
    let se = SyncEvent::new();
    assert_eq!(se.start().unwrap_err().code(), ErrorCode::BadState);
    assert_eq!(se.get().unwrap_err().code(), ErrorCode::BadState);
    assert_eq!(
        se.publisher_add_location_dpa().unwrap_err().code(),
        ErrorCode::NotSupported
    );
    assert_eq!(
        se.subscriber_add_location_gpu().unwrap_err().code(),
        ErrorCode::NotSupported
    );
    se.publisher_add_location_cpu(&dev).unwrap();
    assert_eq!(
        se.publisher_add_location_dpu().unwrap_err().code(),
        ErrorCode::AlreadyExist
    );
    let e = se.start().unwrap_err();
    assert!(e.to_string().contains("publisher and a subscriber"), "{e}");
    se.subscriber_add_location_dpu().unwrap();
    // SAFETY: a NULL or misaligned address is refused before it is used.
    unsafe {
        assert_eq!(
            se.set_addr(std::ptr::null_mut()).unwrap_err().code(),
            ErrorCode::InvalidValue
        );
        let mut two = [0u64; 2];
        let odd = (two.as_mut_ptr() as *mut u8).add(4) as *mut u64;
        assert_eq!(
            se.set_addr(odd).unwrap_err().code(),
            ErrorCode::InvalidValue
        );
    }
    se.start().unwrap();
    assert_eq!(se.start().unwrap_err().code(), ErrorCode::BadState);
    // The mode is fixed once started: no context start, no reconfiguration.
    assert_eq!(se.as_ctx().start().unwrap_err().code(), ErrorCode::BadState);
    assert_eq!(
        se.subscriber_add_location_cpu(&dev).unwrap_err().code(),
        ErrorCode::BadState
    );
    let se = match se.destroy() {
        Err((se, e)) => {
            assert_eq!(e.code(), ErrorCode::InUse);
            se
        }
        Ok(()) => panic!("destroyed while started"),
    };
    se.stop().unwrap();
    assert_eq!(se.stop().unwrap_err().code(), ErrorCode::BadState);
    se.destroy().unwrap();

    // Asynchronous mode refuses the synchronous operations, and the other way round.
    let se = SyncEvent::new();
    se.publisher_add_location_cpu(&dev).unwrap();
    se.subscriber_add_location_cpu(&dev).unwrap();
    se.as_ctx().start().unwrap();
    assert_eq!(se.start().unwrap_err().code(), ErrorCode::BadState);
    let e = se.update_set(1).unwrap_err();
    assert!(e.to_string().contains("asynchronous mode"), "{e}");
    assert_eq!(se.stop().unwrap_err().code(), ErrorCode::BadState);
    se.as_ctx().stop().unwrap();
    se.start().unwrap();
    se.stop().unwrap();
}

#[test]
fn capabilities() {
    let info = &device::devinfo_list().unwrap()[0];
    for t in [
        JOB_WAIT_GT,
        JOB_GET,
        JOB_UPDATE_SET,
        JOB_UPDATE_ADD,
        JOB_WAIT_EQ,
        JOB_WAIT_NEQ,
    ] {
        SyncEvent::job_get_supported(info, t).unwrap();
    }
    assert_eq!(
        SyncEvent::job_get_supported(info, JOB_WAIT_NEQ + 1)
            .unwrap_err()
            .code(),
        ErrorCode::NotSupported
    );
    // A host device exports; the DPU side creates handles from exports.
    assert!(SyncEvent::export_to_dpu_supported(info));
    assert!(!SyncEvent::create_from_export_supported(info));
    assert!(!SyncEvent::export_to_dpa_supported(info));
    assert!(!SyncEvent::export_to_gpu_supported(info));
    let t = Topology::from_toml(
        "[[host.device]]\npci_addr = \"0000:02:00.0\"\ncapabilities = [\"dma\"]\n",
        None,
    )
    .unwrap();
    let plain = &device::devinfo_list_from(&t)[0];
    assert!(!SyncEvent::export_to_dpu_supported(plain));
    assert_eq!(
        SyncEvent::job_get_supported(plain, JOB_GET)
            .unwrap_err()
            .code(),
        ErrorCode::NotSupported
    );
}

#[test]
fn concurrent_adds_reach_the_exact_sum() {
    let se = started(&device(0));
    const THREADS: u64 = 4;
    const ADDS: u64 = 1_000_000;
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..ADDS {
                    se.update_add(1).unwrap();
                }
            });
        }
    });
    assert_eq!(se.get().unwrap(), THREADS * ADDS);
    // update_add hands back the value before.
    assert_eq!(se.update_add(10).unwrap(), THREADS * ADDS);
}

#[test]
fn waits_wake_when_the_value_passes() {
    let se = started(&device(0));
    for how in 0..3 {
        se.update_set(0).unwrap();
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                match how {
                    0 => se.wait_gt(4, u64::MAX).unwrap(),
                    1 => se.wait_gt_yield(4, u64::MAX).unwrap(),
                    _ => se
                        .wait_gt_blocking(4, u64::MAX, Some(Duration::from_secs(30)))
                        .unwrap(),
                }
                done.store(true, Ordering::SeqCst);
            });
            for v in 1..=4 {
                se.update_set(v).unwrap();
                std::thread::sleep(Duration::from_millis(2));
                assert!(!done.load(Ordering::SeqCst), "woke at {v}, not above 4");
            }
            se.update_add(1).unwrap();
        });
        assert!(done.load(Ordering::SeqCst));
    }
    // The mask selects the bits compared: 0x100 & 0xff is 0, not above 0.
    se.update_set(0x100).unwrap();
    let e = se
        .wait_gt_blocking(0, 0xff, Some(Duration::from_millis(20)))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::TimeOut);
    se.update_set(0x101).unwrap();
    se.wait_gt_blocking(0, 0xff, Some(Duration::from_secs(1)))
        .unwrap();
}

#[test]
fn caller_memory_holds_the_counter() {
    let dev = device(0);
    let cell = Box::new(std::sync::atomic::AtomicU64::new(41));
    let se = SyncEvent::new();
    se.publisher_add_location_cpu(&dev).unwrap();
    se.subscriber_add_location_dpu().unwrap();
    // SAFETY: the box outlives the sync event and is only used atomically.
    unsafe { se.set_addr(cell.as_ptr()).unwrap() };
    se.start().unwrap();
    assert_eq!(se.get().unwrap(), 41);
    se.update_add(1).unwrap();
    assert_eq!(cell.load(Ordering::SeqCst), 42);
    // A change made straight in the memory (another process, say) is seen by a wait.
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(5));
            cell.store(100, Ordering::SeqCst);
        });
        se.wait_gt_blocking(99, u64::MAX, Some(Duration::from_secs(10)))
            .unwrap();
    });
    se.stop().unwrap();
    drop(se);
}

fn async_event(dev: &Dev, wq: &mut WorkQ) -> SyncEvent {
    let se = SyncEvent::new();
    se.publisher_add_location_cpu(dev).unwrap();
    se.subscriber_add_location_cpu(dev).unwrap();
    se.as_ctx().start().unwrap();
    se.as_ctx().workq_add(wq).unwrap();
    se
}

fn done(wq: &mut WorkQ) -> doca_core::Completion {
    wq.wait(Some(Duration::from_secs(10))).unwrap()
}

#[test]
fn asynchronous_jobs_on_both_engines() {
    for threads in [0, 2] {
        let dev = device(threads);
        let mut wq = WorkQ::new(8).unwrap();
        let se = async_event(&dev, &mut wq);
        let ctx = se.as_ctx();
        wq.submit_job(ctx, SyncEventJob::update_set(7, 1))
            .map_err(|(e, _)| e)
            .unwrap();
        assert_eq!(done(&mut wq).event().job_type, JOB_UPDATE_SET);
        wq.submit_job(ctx, SyncEventJob::update_add(3, 2))
            .map_err(|(e, _)| e)
            .unwrap();
        let c = done(&mut wq);
        assert_eq!(
            (c.event().user_data.u64(), SyncEventJob::result_value(&c)),
            (2, 7)
        );
        wq.submit_job(ctx, SyncEventJob::get(3))
            .map_err(|(e, _)| e)
            .unwrap();
        assert_eq!(SyncEventJob::result_value(&done(&mut wq)), 10);

        // A wait stays pending until the value passes its threshold.
        wq.submit_job(ctx, SyncEventJob::wait_gt(20, 0xff, 4))
            .map_err(|(e, _)| e)
            .unwrap();
        for _ in 0..20 {
            assert!(matches!(wq.progress_retrieve(), Err(RetrieveError::Again)));
        }
        assert_eq!(wq.inflight(), 1);
        // Another work queue on another thread publishes.
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut wq2 = WorkQ::new(2).unwrap();
                ctx.workq_add(&mut wq2).unwrap();
                std::thread::sleep(Duration::from_millis(5));
                wq2.submit_job(ctx, SyncEventJob::update_set(21, 9))
                    .map_err(|(e, _)| e)
                    .unwrap();
                wq2.wait(Some(Duration::from_secs(10))).unwrap();
                ctx.workq_rm(&mut wq2).unwrap();
            });
            let c = done(&mut wq);
            assert_eq!(
                (c.event().job_type, c.event().user_data.u64()),
                (JOB_WAIT_GT, 4)
            );
        });

        // Limits of asynchronous waits.
        let (e, _) = wq
            .submit_job(ctx, SyncEventJob::wait_gt(255, 0xff, 5))
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidValue);
        wq.submit_job(ctx, SyncEventJob::update_set(1000, 6))
            .map_err(|(e, _)| e)
            .unwrap();
        done(&mut wq);
        wq.submit_job(ctx, SyncEventJob::wait_gt(3, u64::MAX, 7))
            .map_err(|(e, _)| e)
            .unwrap();
        match wq.wait(Some(Duration::from_secs(10))) {
            Err(RetrieveError::IoFailed(c)) => {
                assert_eq!(c.event().result, ErrorCode::InvalidValue as u64);
                assert!(
                    c.status()
                        .unwrap_err()
                        .to_string()
                        .contains("outside 0..=254")
                );
            }
            other => panic!("expected a failed wait, got {other:?}"),
        }
        ctx.workq_rm(&mut wq).unwrap();
        ctx.stop().unwrap();
    }
}

#[test]
fn an_epoll_loop_wakes_for_a_pending_wait() {
    use rustix::event::epoll;
    use std::os::fd::BorrowedFd;
    for threads in [0, 2] {
        let dev = device(threads);
        let mut wq = WorkQ::new(4).unwrap();
        wq.set_event_driven_enable(true).unwrap();
        let se = async_event(&dev, &mut wq);
        let ctx = se.as_ctx();
        let fd = wq.event_handle().unwrap();
        let ep = epoll::create(epoll::CreateFlags::CLOEXEC).unwrap();
        // SAFETY: the work queue's event handle stays open while `wq` lives.
        let bfd = unsafe { BorrowedFd::borrow_raw(fd) };
        epoll::add(
            &ep,
            bfd,
            epoll::EventData::new_u64(1),
            epoll::EventFlags::IN,
        )
        .unwrap();
        wq.submit_job(ctx, SyncEventJob::wait_gt(0, 0xff, 11))
            .map_err(|(e, _)| e)
            .unwrap();
        let t = Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(20));
                let mut wq2 = WorkQ::new(1).unwrap();
                ctx.workq_add(&mut wq2).unwrap();
                wq2.submit_job(ctx, SyncEventJob::update_add(1, 0))
                    .map_err(|(e, _)| e)
                    .unwrap();
                wq2.wait(Some(Duration::from_secs(10))).unwrap();
                ctx.workq_rm(&mut wq2).unwrap();
            });
            // The guide's loop: retrieve, arm, wait on the fd, clear, retrieve.
            let c = loop {
                match wq.progress_retrieve() {
                    Ok(c) => break c,
                    Err(RetrieveError::Again) => {}
                    Err(e) => panic!("{e}"),
                }
                wq.event_handle_arm().unwrap();
                let mut events: Vec<epoll::Event> = Vec::with_capacity(4);
                let ts = rustix::time::Timespec {
                    tv_sec: 10,
                    tv_nsec: 0,
                };
                epoll::wait(&ep, rustix::buffer::spare_capacity(&mut events), Some(&ts)).unwrap();
                assert!(t.elapsed() < Duration::from_secs(10), "no wake-up");
                wq.event_handle_clear(fd).unwrap();
            };
            assert_eq!(c.event().user_data.u64(), 11);
        });
        ctx.workq_rm(&mut wq).unwrap();
        ctx.stop().unwrap();
    }
}

/// A wait that no value can end (`(event & mask) > value` with `value >= mask`, mask 0
/// included) is refused at once, synchronous or asynchronous: it used to block forever,
/// and a pending asynchronous one kept `workq_rm` and `ctx_stop` refusing forever.
#[test]
fn waits_that_can_never_end_are_refused() {
    let dev = device(0);
    let se = started(&dev);
    for (value, mask) in [
        (0, 0),
        (5, 0),
        (0xff, 0xff),
        (u64::MAX, u64::MAX),
        (16, 0x0f),
    ] {
        for e in [
            se.wait_gt(value, mask).unwrap_err(),
            se.wait_gt_yield(value, mask).unwrap_err(),
            se.wait_gt_blocking(value, mask, None).unwrap_err(),
        ] {
            assert_eq!(e.code(), ErrorCode::InvalidValue, "{value} {mask:#x}");
            assert!(e.to_string().contains("can never end"), "{e}");
        }
    }
    // A wait that a later value ends still waits.
    se.update_set(0x10).unwrap();
    se.wait_gt(0x0f, 0xff).unwrap();

    for threads in [0, 2] {
        let dev = device(threads);
        let mut wq = WorkQ::new(4).unwrap();
        let se = async_event(&dev, &mut wq);
        let ctx = se.as_ctx();
        // Asynchronous waits see values 0..=254: mask 0x100 leaves nothing to pass.
        for (value, mask) in [(0, 0), (3, 0x03), (0, 0x100), (254, u64::MAX)] {
            let (e, _) = wq
                .submit_job(ctx, SyncEventJob::wait_gt(value, mask, 1))
                .unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidValue, "{value} {mask:#x}");
            assert!(e.to_string().contains("can never end"), "{e}");
        }
        assert_eq!(wq.inflight(), 0);
        // A wait a later value ends stays pending; meanwhile stop says why it cannot.
        wq.submit_job(ctx, SyncEventJob::wait_gt(3, 0xff, 2))
            .map_err(|(e, _)| e)
            .unwrap();
        for _ in 0..50 {
            // On engine threads the wait comes back to the owner to be retried.
            assert!(matches!(wq.progress_retrieve(), Err(RetrieveError::Again)));
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(ctx.stop().unwrap_err().code(), ErrorCode::NotPermitted);
        assert_eq!(ctx.workq_rm(&mut wq).unwrap_err().code(), ErrorCode::InUse);
        se.update_set(4).unwrap_err(); // asynchronous mode: updates go through jobs
        wq.submit_job(ctx, SyncEventJob::update_set(4, 3))
            .map_err(|(e, _)| e)
            .unwrap();
        for _ in 0..2 {
            wq.wait(Some(Duration::from_secs(10))).unwrap();
        }
        ctx.workq_rm(&mut wq).unwrap();
        ctx.stop().unwrap();
    }
}

/// A thread waiting on an event that is stopped and destroyed under it returns an error
/// (it used to read freed memory and return a bogus success); destroy refuses while
/// started and returns only once every waiter has left.
#[test]
fn stopping_under_a_waiter_wakes_it_with_an_error() {
    let dev = device(0);
    for kind in 0..3 {
        let se = started(&dev);
        let waiter = se.clone();
        let h = std::thread::spawn(move || match kind {
            0 => waiter.wait_gt(5, 0xff),
            1 => waiter.wait_gt_yield(5, 0xff),
            _ => waiter.wait_gt_blocking(5, 0xff, None),
        });
        std::thread::sleep(Duration::from_millis(20));
        let (se, e) = se.destroy().unwrap_err();
        assert_eq!(e.code(), ErrorCode::InUse);
        se.stop().unwrap();
        let r = h.join().unwrap();
        let e = r.unwrap_err();
        assert_eq!(e.code(), ErrorCode::BadState, "{kind}");
        assert!(e.to_string().contains("stopped while"), "{e}");
        se.destroy().unwrap();
    }
}
