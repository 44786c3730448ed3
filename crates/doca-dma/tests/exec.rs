//! The execution model end to end, with DMA and SHA contexts, on both engines: jobs run
//! in the caller (engine_threads = 0) or on two engine threads. Every test runs on both.

#![allow(clippy::result_large_err)]

use doca_core::device::{self, Topology};
use doca_core::{AccessFlags, Buf, BufInventory, Ctx, Dev, ErrorCode, Mmap, RetrieveError, WorkQ};
use doca_dma::{Dma, JOB_MEMCPY, MemcpyJob};
use doca_sha::{Sha, ShaAlgo, ShaJob, ShaPartialJob};
use sha2::Digest;
use std::time::Duration;

/// A device with `threads` engine threads (distinct PCI addresses keep them apart).
fn device(threads: u32) -> Dev {
    let text = format!(
        "[[host.device]]\npci_addr = \"0000:{:02x}:00.0\"\nibdev_name = \"eng{threads}\"\nengine_threads = {threads}\n",
        0x40 + threads
    );
    let t = Topology::from_toml(&text, None).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

fn engines() -> [Dev; 2] {
    [device(0), device(2)]
}

struct Env {
    dev: Dev,
    mmap: Mmap,
    inv: BufInventory,
}

fn env(dev: &Dev, access: AccessFlags) -> Env {
    let mut mmap = Mmap::new();
    mmap.set_memory(vec![0u8; 1 << 20]).unwrap();
    mmap.set_permissions(access).unwrap();
    mmap.dev_add(dev).unwrap();
    mmap.start().unwrap();
    let mut inv = BufInventory::new(256).unwrap();
    inv.start().unwrap();
    Env {
        dev: dev.clone(),
        mmap,
        inv,
    }
}

impl Env {
    fn data(&self, off: usize, bytes: &[u8]) -> Buf {
        let mut b = self
            .inv
            .buf_at(&self.mmap, off, bytes.len().max(1))
            .unwrap();
        b.write_data(bytes).unwrap();
        b
    }
    fn empty(&self, off: usize, len: usize) -> Buf {
        self.inv.buf_at(&self.mmap, off, len).unwrap()
    }
}

fn started(ctx: &Ctx, dev: &Dev) {
    ctx.dev_add(dev).unwrap();
    ctx.start().unwrap();
}

fn wait(wq: &mut WorkQ) -> Result<doca_core::Completion, RetrieveError> {
    wq.wait(Some(Duration::from_secs(10)))
}

#[test]
fn memcpy_and_user_data_echo() {
    for dev in engines() {
        let e = env(&dev, AccessFlags::LOCAL_READ_WRITE);
        let dma = Dma::new();
        started(dma.as_ctx(), &e.dev);
        let mut wq = WorkQ::new(16).unwrap();
        dma.as_ctx().workq_add(&mut wq).unwrap();
        assert_eq!(wq.progress_retrieve().unwrap_err().code(), ErrorCode::Again);
        for i in 0..10u64 {
            let src = e.data(i as usize * 1000, format!("payload {i}").as_bytes());
            let mut dst = e.empty(500_000 + i as usize * 1000, 100);
            dst.append(b">").unwrap();
            wq.submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, 1000 + i))
                .map_err(|(e, _)| e)
                .unwrap();
        }
        let mut seen = Vec::new();
        for _ in 0..10 {
            let mut c = wait(&mut wq).unwrap();
            assert_eq!(c.event().job_type, JOB_MEMCPY);
            assert_eq!(c.event().result, 0);
            let i = c.event().user_data.u64() - 1000;
            let dst = c.take_buf(MemcpyJob::DST).unwrap();
            assert_eq!(dst.data_to_vec(), format!(">payload {i}").as_bytes());
            seen.push(i);
        }
        seen.sort();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        assert_eq!(wq.inflight(), 0);
        dma.as_ctx().workq_rm(&mut wq).unwrap();
        dma.as_ctx().stop().unwrap();
        assert_eq!(e.inv.num_free_elements(), 256);
    }
}

/// DOCA's samples never call `set_permissions`: a new mmap lets the local device read
/// and write, so jobs write into it; an explicit read-only setting still refuses writes.
#[test]
fn new_mmap_is_local_read_write_by_default() {
    for dev in engines() {
        let mut mmap = Mmap::new();
        assert_eq!(mmap.permissions(), AccessFlags::LOCAL_READ_WRITE);
        mmap.set_memory(vec![0u8; 8192]).unwrap();
        mmap.dev_add(&dev).unwrap();
        mmap.start().unwrap();
        let mut ro = Mmap::new();
        ro.set_memory(vec![0u8; 4096]).unwrap();
        ro.set_permissions(AccessFlags::LOCAL_READ_ONLY).unwrap();
        ro.dev_add(&dev).unwrap();
        ro.start().unwrap();
        let mut inv = BufInventory::new(8).unwrap();
        inv.start().unwrap();
        let dma = Dma::new();
        started(dma.as_ctx(), &dev);
        let mut wq = WorkQ::new(4).unwrap();
        dma.as_ctx().workq_add(&mut wq).unwrap();

        let mut src = inv.buf_at(&mmap, 0, 64).unwrap();
        src.append(b"no set_permissions needed").unwrap();
        let dst = inv.buf_at(&mmap, 4096, 64).unwrap();
        wq.submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, 1))
            .map_err(|(e, _)| e)
            .unwrap();
        let mut c = wait(&mut wq).unwrap();
        assert_eq!(c.event().result, 0);
        let dst = c.take_buf(MemcpyJob::DST).unwrap();
        assert_eq!(dst.data_to_vec(), b"no set_permissions needed");
        let mut back = [0u8; 25];
        mmap.read_at(4096, &mut back).unwrap();
        assert_eq!(&back, b"no set_permissions needed");
        drop(c);

        let mut src = inv.buf_at(&mmap, 0, 64).unwrap();
        src.append(b"x").unwrap();
        let dst = inv.buf_at(&ro, 0, 64).unwrap();
        wq.submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, 2))
            .map_err(|(e, _)| e)
            .unwrap();
        match wait(&mut wq) {
            Err(RetrieveError::IoFailed(c)) => {
                assert_eq!(c.event().result, ErrorCode::NotPermitted as u64);
                // The completion says why, in the words the C face logs at debug level.
                let why = c.error.as_ref().unwrap().to_string();
                assert!(why.contains("does not grant write access"), "{why}");
            }
            other => panic!("a write into a read-only mmap: {other:?}"),
        }
        dma.as_ctx().workq_rm(&mut wq).unwrap();
    }
}

#[test]
fn scatter_gather_memcpy() {
    for dev in engines() {
        let e = env(&dev, AccessFlags::LOCAL_READ_WRITE);
        let dma = Dma::new();
        started(dma.as_ctx(), &e.dev);
        let mut wq = WorkQ::new(4).unwrap();
        dma.as_ctx().workq_add(&mut wq).unwrap();
        let mut src = e.data(0, b"hello ");
        src.chain(e.data(100, b"scatter ")).unwrap();
        src.chain(e.data(200, b"gather")).unwrap();
        let mut dst = e.empty(10_000, 5);
        dst.chain(e.empty(20_000, 3)).unwrap();
        dst.chain(e.empty(30_000, 100)).unwrap();
        wq.submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, 1))
            .map_err(|(e, _)| e)
            .unwrap();
        let mut c = wait(&mut wq).unwrap();
        let dst = c.take_buf(MemcpyJob::DST).unwrap();
        assert_eq!(dst.data_len(), 5);
        assert_eq!(dst.list_data_to_vec(), b"hello scatter gather");
        let src = c.take_buf(MemcpyJob::SRC).unwrap();
        assert_eq!(src.num_elements(), 3);
        drop(c);
        dma.as_ctx().workq_rm(&mut wq).unwrap();
    }
}

#[test]
fn failed_jobs_report_their_error() {
    for dev in engines() {
        let e = env(&dev, AccessFlags::LOCAL_READ_WRITE);
        let ro = env(&dev, AccessFlags::LOCAL_READ_ONLY);
        let mut unmapped = Mmap::new();
        unmapped.set_memory(vec![0u8; 4096]).unwrap();
        unmapped
            .set_permissions(AccessFlags::LOCAL_READ_WRITE)
            .unwrap();
        unmapped.start().unwrap();
        let dma = Dma::new();
        started(dma.as_ctx(), &e.dev);
        let mut wq = WorkQ::new(8).unwrap();
        dma.as_ctx().workq_add(&mut wq).unwrap();
        let cases: Vec<(MemcpyJob, ErrorCode)> = vec![
            // Destination tailroom too small.
            (
                MemcpyJob::new(e.data(0, &[1; 64]), e.empty(4096, 32), 1),
                ErrorCode::InvalidValue,
            ),
            // Source data and destination tailroom overlap.
            (
                MemcpyJob::new(e.data(8192, &[2; 64]), e.empty(8192 + 32, 128), 2),
                ErrorCode::InvalidValue,
            ),
            // Destination mmap is read-only for the device.
            (
                MemcpyJob::new(e.data(16384, &[3; 16]), ro.empty(0, 64), 3),
                ErrorCode::NotPermitted,
            ),
            // Destination mmap was never given the device.
            (
                MemcpyJob::new(
                    e.data(20000, &[4; 16]),
                    e.inv.buf_at(&unmapped, 0, 64).unwrap(),
                    4,
                ),
                ErrorCode::NotPermitted,
            ),
        ];
        let n = cases.len();
        let want: Vec<(u64, ErrorCode)> =
            cases.iter().map(|(j, c)| (j.user_data.u64(), *c)).collect();
        for (job, _) in cases {
            wq.submit_job(dma.as_ctx(), job)
                .map_err(|(e, _)| e)
                .unwrap();
        }
        for _ in 0..n {
            match wait(&mut wq) {
                Err(RetrieveError::IoFailed(mut c)) => {
                    let (_, code) = want
                        .iter()
                        .find(|(u, _)| *u == c.event().user_data.u64())
                        .unwrap();
                    assert_eq!(
                        c.event().result,
                        *code as u64,
                        "job {}",
                        c.event().user_data.u64()
                    );
                    assert_eq!(c.status().unwrap_err().code(), *code);
                    assert!(c.error.as_ref().unwrap().context_str().is_some());
                    // Nothing was written and the buffers come back.
                    let dst = c.take_buf(MemcpyJob::DST).unwrap();
                    assert_eq!(dst.data_len(), 0);
                }
                other => panic!("expected a failed job, got {other:?}"),
            }
        }
        dma.as_ctx().workq_rm(&mut wq).unwrap();
    }
}

#[test]
fn submit_refusals_give_the_job_back() {
    for dev in engines() {
        let e = env(&dev, AccessFlags::LOCAL_READ_WRITE);
        let dma = Dma::new();
        let mut wq = WorkQ::new(2).unwrap();
        // Context not started.
        dma.as_ctx().dev_add(&e.dev).unwrap();
        let (err, rec) = wq
            .submit_job(
                dma.as_ctx(),
                MemcpyJob::new(e.data(0, b"a"), e.empty(100, 8), 0),
            )
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::BadState);
        assert!(rec.buf(0).is_some());
        dma.as_ctx().start().unwrap();
        // Not attached to this work queue.
        let (err, _) = wq.submit(dma.as_ctx(), rec).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NotFound);
        dma.as_ctx().workq_add(&mut wq).unwrap();
        // A SHA job on the DMA context.
        let (err, _) = wq
            .submit_job(
                dma.as_ctx(),
                ShaJob::new(ShaAlgo::Sha1, e.data(0, b"x"), e.empty(200, 64), 0),
            )
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidValue);
        // A malformed record: no buffers.
        let (err, _) = wq
            .submit(
                dma.as_ctx(),
                doca_core::JobRecord::new(JOB_MEMCPY, Default::default()),
            )
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidValue);
        // Full: depth 2.
        wq.submit_job(
            dma.as_ctx(),
            MemcpyJob::new(e.data(300, b"1"), e.empty(400, 8), 1),
        )
        .map_err(|(e, _)| e)
        .unwrap();
        wq.submit_job(
            dma.as_ctx(),
            MemcpyJob::new(e.data(500, b"2"), e.empty(600, 8), 2),
        )
        .map_err(|(e, _)| e)
        .unwrap();
        let (err, back) = wq
            .submit_job(
                dma.as_ctx(),
                MemcpyJob::new(e.data(700, b"3"), e.empty(800, 8), 3),
            )
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoMemory);
        drop(back);
        // Stop refused while attached; workq_rm refused while jobs are in flight.
        assert_eq!(dma.as_ctx().stop().unwrap_err().code(), ErrorCode::InUse);
        assert_eq!(
            dma.as_ctx().workq_rm(&mut wq).unwrap_err().code(),
            ErrorCode::InUse
        );
        wait(&mut wq).unwrap();
        wait(&mut wq).unwrap();
        dma.as_ctx().workq_rm(&mut wq).unwrap();
        assert_eq!(
            dma.as_ctx().workq_rm(&mut wq).unwrap_err().code(),
            ErrorCode::NotFound
        );
        let (ctx, err) = dma.as_ctx().clone().destroy().unwrap_err();
        assert_eq!(err.code(), ErrorCode::InUse);
        ctx.stop().unwrap();
        ctx.dev_rm(&e.dev).unwrap();
        ctx.destroy().unwrap();
        assert_eq!(e.inv.num_free_elements(), 256);
    }
}

#[test]
fn one_workq_many_contexts_and_one_context_many_workqs() {
    for dev in engines() {
        let e = env(&dev, AccessFlags::LOCAL_READ_WRITE);
        let dma = Dma::new();
        let sha = Sha::new();
        started(dma.as_ctx(), &e.dev);
        started(sha.as_ctx(), &e.dev);
        let mut wq1 = WorkQ::new(8).unwrap();
        let mut wq2 = WorkQ::new(8).unwrap();
        dma.as_ctx().workq_add(&mut wq1).unwrap();
        sha.as_ctx().workq_add(&mut wq1).unwrap();
        dma.as_ctx().workq_add(&mut wq2).unwrap();
        assert_eq!(
            dma.as_ctx().workq_add(&mut wq2).unwrap_err().code(),
            ErrorCode::AlreadyExist
        );
        wq1.submit_job(
            dma.as_ctx(),
            MemcpyJob::new(e.data(0, b"one"), e.empty(1000, 8), 1),
        )
        .map_err(|(e, _)| e)
        .unwrap();
        wq1.submit_job(
            sha.as_ctx(),
            ShaJob::new(ShaAlgo::Sha256, e.data(2000, b"two"), e.empty(3000, 64), 2),
        )
        .map_err(|(e, _)| e)
        .unwrap();
        wq2.submit_job(
            dma.as_ctx(),
            MemcpyJob::new(e.data(4000, b"three"), e.empty(5000, 8), 3),
        )
        .map_err(|(e, _)| e)
        .unwrap();
        let mut types = vec![
            wait(&mut wq1).unwrap().event().job_type,
            wait(&mut wq1).unwrap().event().job_type,
        ];
        types.sort();
        assert_eq!(types, [JOB_MEMCPY, doca_sha::JOB_SHA256]);
        assert_eq!(wait(&mut wq2).unwrap().event().user_data.u64(), 3);
        assert_eq!(dma.as_ctx().num_workqs(), 2);
        drop(wq1);
        drop(wq2);
        // Dropping the work queues detached them.
        dma.as_ctx().stop().unwrap();
        sha.as_ctx().stop().unwrap();
    }
}

#[test]
fn sha_digests_match_the_crates() {
    let text: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
    for dev in engines() {
        let e = env(&dev, AccessFlags::LOCAL_READ_WRITE);
        let sha = Sha::new();
        started(sha.as_ctx(), &e.dev);
        let mut wq = WorkQ::new(8).unwrap();
        sha.as_ctx().workq_add(&mut wq).unwrap();
        for (algo, want) in [
            (ShaAlgo::Sha1, sha1::Sha1::digest(&text).to_vec()),
            (ShaAlgo::Sha256, sha2::Sha256::digest(&text).to_vec()),
            (ShaAlgo::Sha512, sha2::Sha512::digest(&text).to_vec()),
        ] {
            // As a list of three pieces.
            let mut src = e.data(0, &text[..1000]);
            src.chain(e.data(20_000, &text[1000..7000])).unwrap();
            src.chain(e.data(40_000, &text[7000..])).unwrap();
            wq.submit_job(sha.as_ctx(), ShaJob::new(algo, src, e.empty(60_000, 64), 9))
                .map_err(|(e, _)| e)
                .unwrap();
            let mut c = wait(&mut wq).unwrap();
            assert_eq!(
                c.take_buf(ShaJob::RESP).unwrap().data_to_vec(),
                want,
                "{algo:?}"
            );
        }
        // Response too small for the digest.
        wq.submit_job(
            sha.as_ctx(),
            ShaJob::new(ShaAlgo::Sha512, e.data(0, b"x"), e.empty(70_000, 63), 1),
        )
        .map_err(|(e, _)| e)
        .unwrap();
        match wait(&mut wq) {
            Err(RetrieveError::IoFailed(c)) => {
                assert_eq!(c.event().result, ErrorCode::InvalidValue as u64)
            }
            other => panic!("{other:?}"),
        }
        sha.as_ctx().workq_rm(&mut wq).unwrap();
    }
}

fn partial(
    algo: ShaAlgo,
    session: &doca_sha::PartialSession,
    req: Buf,
    resp: Buf,
    last: bool,
    ud: u64,
) -> ShaPartialJob {
    ShaPartialJob {
        algo,
        session: session.clone(),
        req,
        resp,
        final_segment: last,
        user_data: doca_core::Data(ud),
    }
}

#[test]
fn partial_sessions_equal_one_shot_hashing() {
    let text: Vec<u8> = (0..64 * 40 + 17).map(|i| (i % 253) as u8).collect();
    for dev in engines() {
        let e = env(&dev, AccessFlags::LOCAL_READ_WRITE);
        let sha = Sha::new();
        started(sha.as_ctx(), &e.dev);
        let mut wq = WorkQ::new(64).unwrap();
        sha.as_ctx().workq_add(&mut wq).unwrap();
        for algo in [ShaAlgo::Sha1, ShaAlgo::Sha256, ShaAlgo::Sha512] {
            let session = sha.partial_session_create(&wq).unwrap();
            let seg = algo.block_len() * 3;
            let chunks: Vec<&[u8]> = text.chunks(seg).collect();
            // Submit every segment at once: on engine threads they still run in order.
            for (i, chunk) in chunks.iter().enumerate() {
                let last = i + 1 == chunks.len();
                let job = partial(
                    algo,
                    &session,
                    e.data(i * 1024, chunk),
                    e.empty(500_000 + i * 128, 64),
                    last,
                    i as u64,
                );
                wq.submit_job(sha.as_ctx(), job)
                    .map_err(|(e, _)| e)
                    .unwrap();
            }
            let mut digest = None;
            for _ in 0..chunks.len() {
                let mut c = wait(&mut wq).unwrap();
                let d = c.take_buf(ShaJob::RESP).unwrap().data_to_vec();
                if c.event().user_data.u64() as usize + 1 == chunks.len() {
                    digest = Some(d);
                } else {
                    assert!(d.is_empty());
                }
            }
            let want = match algo {
                ShaAlgo::Sha1 => sha1::Sha1::digest(&text).to_vec(),
                ShaAlgo::Sha256 => sha2::Sha256::digest(&text).to_vec(),
                ShaAlgo::Sha512 => sha2::Sha512::digest(&text).to_vec(),
            };
            assert_eq!(digest.unwrap(), want, "{algo:?}");
            sha.partial_session_destroy(&wq, session).unwrap();
        }
        // A non-final segment must be a multiple of the block length.
        let session = sha.partial_session_create(&wq).unwrap();
        let job = partial(
            ShaAlgo::Sha256,
            &session,
            e.data(0, &[0u8; 65]),
            e.empty(1000, 64),
            false,
            1,
        );
        wq.submit_job(sha.as_ctx(), job)
            .map_err(|(e, _)| e)
            .unwrap();
        match wait(&mut wq) {
            Err(RetrieveError::IoFailed(c)) => {
                assert_eq!(c.event().result, ErrorCode::InvalidValue as u64)
            }
            other => panic!("{other:?}"),
        }
        // Copying a session continues from its state.
        let a = sha.partial_session_create(&wq).unwrap();
        let job = partial(
            ShaAlgo::Sha256,
            &a,
            e.data(0, &text[..64]),
            e.empty(2000, 64),
            false,
            2,
        );
        wq.submit_job(sha.as_ctx(), job)
            .map_err(|(e, _)| e)
            .unwrap();
        wait(&mut wq).unwrap();
        let b = sha.partial_session_create(&wq).unwrap();
        sha.partial_session_copy(&wq, &a, &b).unwrap();
        let job = partial(
            ShaAlgo::Sha256,
            &b,
            e.data(3000, &text[64..100]),
            e.empty(4000, 64),
            true,
            3,
        );
        wq.submit_job(sha.as_ctx(), job)
            .map_err(|(e, _)| e)
            .unwrap();
        let mut c = wait(&mut wq).unwrap();
        assert_eq!(
            c.take_buf(ShaJob::RESP).unwrap().data_to_vec(),
            sha2::Sha256::digest(&text[..100]).to_vec()
        );
        // A session with a job in flight (or other handles) cannot be destroyed.
        let (a, err) = sha.partial_session_destroy(&wq, a.clone()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InUse);
        drop((a, session));
        sha.as_ctx().workq_rm(&mut wq).unwrap();
    }
}

/// The events an epoll set reports within `timeout`.
fn epoll_wait(ep: &rustix::fd::OwnedFd, timeout: Duration) -> Vec<rustix::event::epoll::Event> {
    let mut events = Vec::with_capacity(4);
    let ts = rustix::time::Timespec {
        tv_sec: timeout.as_secs() as i64,
        tv_nsec: timeout.subsec_nanos() as i64,
    };
    rustix::event::epoll::wait(ep, rustix::buffer::spare_capacity(&mut events), Some(&ts)).unwrap();
    events
}

#[test]
fn event_driven_with_epoll() {
    use rustix::event::epoll;
    use rustix::fd::BorrowedFd;
    for dev in engines() {
        let e = env(&dev, AccessFlags::LOCAL_READ_WRITE);
        let dma = Dma::new();
        started(dma.as_ctx(), &e.dev);
        assert!(dma.as_ctx().event_driven_supported());
        let mut wq = WorkQ::new(32).unwrap();
        assert_eq!(wq.event_handle().unwrap_err().code(), ErrorCode::BadState);
        // 1. Enable before attaching.
        wq.set_event_driven_enable(true).unwrap();
        assert!(wq.event_driven_enabled());
        // 2. Get the handle and register it with epoll.
        let fd = wq.event_handle().unwrap();
        let ep = epoll::create(epoll::CreateFlags::CLOEXEC).unwrap();
        // SAFETY: the work queue keeps its eventfd open for the rest of the test.
        let bfd = unsafe { BorrowedFd::borrow_raw(fd) };
        epoll::add(
            &ep,
            bfd,
            epoll::EventData::new_u64(7),
            epoll::EventFlags::IN,
        )
        .unwrap();
        // 3. Attach to the context: the mode can no longer change.
        dma.as_ctx().workq_add(&mut wq).unwrap();
        assert_eq!(
            wq.set_event_driven_enable(false).unwrap_err().code(),
            ErrorCode::BadState
        );
        let total = 20;
        let (mut done, mut submitted) = (0, 0);
        while done < total {
            // 4. Submit.
            while submitted < total && wq.inflight() < 8 {
                let src = e.data(submitted * 2000, &[submitted as u8; 1000]);
                let dst = e.empty(500_000 + submitted * 2000, 1000);
                wq.submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, submitted as u64))
                    .map_err(|(e, _)| e)
                    .unwrap();
                submitted += 1;
            }
            // 5. Arm; 6. wait on epoll.
            wq.event_handle_arm().unwrap();
            let events = epoll_wait(&ep, Duration::from_secs(10));
            assert!(!events.is_empty(), "epoll timed out");
            assert_eq!(events[0].data.u64(), 7);
            // 7. Clear the handle.
            wq.event_handle_clear(fd).unwrap();
            assert_eq!(
                wq.event_handle_clear(fd + 1000).unwrap_err().code(),
                ErrorCode::InvalidValue
            );
            // 8. Retrieve until Again.
            loop {
                match wq.progress_retrieve() {
                    Ok(mut c) => {
                        let i = c.event().user_data.u64() as u8;
                        assert_eq!(
                            c.take_buf(MemcpyJob::DST).unwrap().data_to_vec(),
                            vec![i; 1000]
                        );
                        done += 1;
                    }
                    Err(RetrieveError::Again) => break,
                    Err(other) => panic!("{other}"),
                }
            }
        }
        // With nothing pending, an armed handle stays quiet.
        wq.event_handle_arm().unwrap();
        assert!(epoll_wait(&ep, Duration::from_millis(20)).is_empty());
        dma.as_ctx().workq_rm(&mut wq).unwrap();
        dma.as_ctx().stop().unwrap();
    }
}

/// Jobs on disjoint bytes of one mmap run side by side on the engine threads while
/// another thread reads the memory; every copy lands whole and readers never see a
/// destination half written.
#[test]
fn parallel_jobs_in_one_mmap_with_a_concurrent_reader() {
    for dev in engines() {
        let e = env(&dev, AccessFlags::LOCAL_READ_WRITE);
        let dma = Dma::new();
        started(dma.as_ctx(), &dev);
        let mut wq = WorkQ::new(64).unwrap();
        dma.as_ctx().workq_add(&mut wq).unwrap();
        const N: usize = 16;
        const LEN: usize = 16 << 10;
        // Round r fills destination i with the byte r + i + 1.
        let fill = |round: usize, i: usize| vec![(round + i + 1) as u8; LEN];
        let stop = std::sync::atomic::AtomicBool::new(false);
        // Views of the destinations, read by another thread.
        let views: Vec<Buf> = (0..N)
            .map(|i| e.inv.buf_with_data_at(&e.mmap, (N + i) * LEN, LEN).unwrap())
            .collect();
        std::thread::scope(|s| {
            let stop = &stop;
            s.spawn(move || {
                let mut out = vec![0u8; LEN];
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for v in &views {
                        v.copy_data_to(&mut out).unwrap();
                        let v = out[0];
                        assert!(
                            out.iter().all(|b| *b == v),
                            "a reader saw a destination half written"
                        );
                    }
                }
            });
            for round in 0..20 {
                for i in 0..N {
                    let src = e.data(i * LEN, &fill(round, i));
                    let dst = e.empty((N + i) * LEN, LEN);
                    wq.submit_job(
                        dma.as_ctx(),
                        MemcpyJob::new(src, dst, (round * N + i) as u64),
                    )
                    .map_err(|(e, _)| e)
                    .unwrap();
                }
                for _ in 0..N {
                    let mut c = wait(&mut wq).unwrap();
                    let i = c.event().user_data.u64() as usize % N;
                    let dst = c.take_buf(MemcpyJob::DST).unwrap();
                    assert_eq!(dst.data_to_vec(), fill(round, i));
                }
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        dma.as_ctx().workq_rm(&mut wq).unwrap();
    }
}

/// A large scatter-gather copy is shared by the engine threads (and runs whole inline).
#[test]
fn large_scatter_gather_copy_on_both_engines() {
    for dev in engines() {
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; 32 << 20]).unwrap();
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
        mmap.dev_add(&dev).unwrap();
        mmap.start().unwrap();
        let mut inv = BufInventory::new(16).unwrap();
        inv.start().unwrap();
        let sizes = [(3 << 20) + 64, 2 << 20, (1 << 20) - 64, 5 << 20, 17];
        let mut off = 0;
        let mut want = Vec::new();
        let mut src: Option<Buf> = None;
        for (i, n) in sizes.into_iter().enumerate() {
            let bytes: Vec<u8> = (0..n).map(|j| (j * 31 + i * 7) as u8).collect();
            let mut b = inv.buf_at(&mmap, off, n).unwrap();
            b.write_data(&bytes).unwrap();
            want.extend_from_slice(&bytes);
            off += n;
            match &mut src {
                None => src = Some(b),
                Some(h) => h.chain(b).map_err(|(e, _)| e).unwrap(),
            }
        }
        let total = want.len();
        // Destination: two elements, the first with some data already in it.
        let base = 12 << 20;
        let mut d1 = inv.buf_at(&mmap, base, (4 << 20) + 100).unwrap();
        d1.write_data(b"kept").unwrap();
        let d2 = inv.buf_at(&mmap, base + (5 << 20), total).unwrap();
        d1.chain(d2).map_err(|(e, _)| e).unwrap();
        let dma = Dma::new();
        started(dma.as_ctx(), &dev);
        let mut wq = WorkQ::new(4).unwrap();
        dma.as_ctx().workq_add(&mut wq).unwrap();
        wq.submit_job(dma.as_ctx(), MemcpyJob::new(src.unwrap(), d1, 9))
            .map_err(|(e, _)| e)
            .unwrap();
        let mut c = wait(&mut wq).unwrap();
        let dst = c.take_buf(MemcpyJob::DST).unwrap();
        let got = dst.list_data_to_vec();
        assert_eq!(&got[..4], b"kept");
        assert!(
            got[4..] == want[..],
            "copy differs ({} engine threads)",
            dev.as_devinfo().engine_threads()
        );
        assert_eq!(dst.list_data_len(), 4 + total);
        drop((c, dst));
        dma.as_ctx().workq_rm(&mut wq).unwrap();
    }
}

/// Two jobs in flight into one destination with room for one: as on DOCA, both see
/// the room the destination had when they were submitted (its data length changes at
/// delivery), so both succeed; the destination ends with one job's bytes, whole (jobs
/// write under the byte-range lock), and one job's data length.
#[test]
fn jobs_in_flight_share_a_destination_room() {
    const N: usize = 16 << 20;
    for dev in engines() {
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; 3 * N]).unwrap();
        mmap.dev_add(&dev).unwrap();
        mmap.start().unwrap();
        let mut inv = BufInventory::new(8).unwrap();
        inv.start().unwrap();
        let dma = Dma::new();
        started(dma.as_ctx(), &dev);
        let mut wq = WorkQ::new(4).unwrap();
        dma.as_ctx().workq_add(&mut wq).unwrap();
        for round in 0..3u8 {
            let mut a = inv.buf_at(&mmap, 0, N).unwrap();
            a.append(&vec![round.wrapping_mul(2) + 1; N]).unwrap();
            let mut b = inv.buf_at(&mmap, N, N).unwrap();
            b.append(&vec![round.wrapping_mul(2) + 2; N]).unwrap();
            let dst = inv.buf_at(&mmap, 2 * N, N).unwrap();
            let dst2 = dst.refcount_add().unwrap();
            wq.submit_job(dma.as_ctx(), MemcpyJob::new(a, dst, 1))
                .map_err(|(e, _)| e)
                .unwrap();
            wq.submit_job(dma.as_ctx(), MemcpyJob::new(b, dst2, 2))
                .map_err(|(e, _)| e)
                .unwrap();
            let mut lens = Vec::new();
            for _ in 0..2 {
                match wait(&mut wq) {
                    Ok(mut c) => {
                        lens.push(c.take_buf(doca_core::JobRecord::DST).unwrap().data_len())
                    }
                    Err(e) => panic!("round {round}: {e:?}"),
                }
            }
            assert_eq!(lens, [N, N], "round {round}: one job's data length");
            let mut out = vec![0u8; N];
            mmap.read_at(2 * N, &mut out).unwrap();
            let (x, y) = (round.wrapping_mul(2) + 1, round.wrapping_mul(2) + 2);
            assert!(
                out.iter().all(|&v| v == x) || out.iter().all(|&v| v == y),
                "round {round}: one job's bytes, whole"
            );
        }
        dma.as_ctx().workq_rm(&mut wq).unwrap();
    }
}
