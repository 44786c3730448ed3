//! The misuse table for contexts, work queues and jobs: each wrong step and the DOCA
//! error a user gets. No case panics or loses its job.

#![allow(clippy::result_large_err)]

use doca_core::device::{self, Topology};
use doca_core::{AccessFlags, BufInventory, Ctx, Dev, Error, ErrorCode, JobRecord, Mmap, WorkQ};
use doca_dma::{Dma, JOB_MEMCPY, MemcpyJob};
use doca_sha::{JOB_SHA256_PARTIAL, Sha, ShaAlgo, ShaJob};

fn dev_with(extra: &str, bus: u8) -> Dev {
    let text = format!("[[host.device]]\npci_addr = \"0000:{bus:02x}:00.0\"\n{extra}\n");
    let t = Topology::from_toml(&text, None).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

fn dev() -> Dev {
    dev_with("", 0x70)
}

fn code<T: std::fmt::Debug>(r: Result<T, Error>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got Ok({v:?})"),
        Err(e) => {
            assert!(
                e.context_str().is_some_and(|c| !c.is_empty()),
                "{e:?} has no context"
            );
            e.code()
        }
    }
}

fn sub(r: Result<(), (Error, JobRecord)>) -> ErrorCode {
    code(r.map_err(|(e, rec)| {
        // The refused job comes back whole.
        assert!(rec.job_type != 0);
        e
    }))
}

fn started_dma(d: &Dev) -> Dma {
    let dma = Dma::new();
    dma.as_ctx().dev_add(d).unwrap();
    dma.as_ctx().start().unwrap();
    dma
}

struct Mem {
    mmap: Mmap,
    inv: BufInventory,
}

fn mem(d: &Dev) -> Mem {
    let mut mmap = Mmap::new();
    mmap.set_memory(vec![0u8; 65536]).unwrap();
    mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
    mmap.dev_add(d).unwrap();
    mmap.start().unwrap();
    let mut inv = BufInventory::new(32).unwrap();
    inv.start().unwrap();
    Mem { mmap, inv }
}

fn memcpy(m: &Mem, at: usize) -> MemcpyJob {
    MemcpyJob::new(
        m.inv.buf_with_data_at(&m.mmap, at, 16).unwrap(),
        m.inv.buf_at(&m.mmap, at + 1024, 64).unwrap(),
        1,
    )
}

fn attached(d: &Dev, depth: u32) -> (Dma, WorkQ) {
    let dma = started_dma(d);
    let mut wq = WorkQ::new(depth).unwrap();
    dma.as_ctx().workq_add(&mut wq).unwrap();
    (dma, wq)
}

type Case = (&'static str, ErrorCode, fn() -> ErrorCode);

const CASES: &[Case] = &[
    ("work queue of depth 0", ErrorCode::InvalidValue, || {
        code(WorkQ::new(0))
    }),
    (
        "work queue deeper than the maximum",
        ErrorCode::InvalidValue,
        || code(WorkQ::new(doca_core::exec::MAX_DEPTH + 1)),
    ),
    (
        "start a context without a device",
        ErrorCode::BadState,
        || code(Dma::new().as_ctx().start()),
    ),
    ("start a context twice", ErrorCode::BadState, || {
        code(started_dma(&dev()).as_ctx().start())
    }),
    (
        "stop a context that is not started",
        ErrorCode::BadState,
        || code(Dma::new().as_ctx().stop()),
    ),
    (
        "add a device to a started context",
        ErrorCode::BadState,
        || code(started_dma(&dev()).as_ctx().dev_add(&dev())),
    ),
    (
        "add a device without the library's capability",
        ErrorCode::NotSupported,
        || {
            code(
                Dma::new()
                    .as_ctx()
                    .dev_add(&dev_with("capabilities = [\"sha\"]", 0x71)),
            )
        },
    ),
    ("add the same device twice", ErrorCode::AlreadyExist, || {
        let c = Dma::new();
        c.as_ctx().dev_add(&dev()).unwrap();
        code(c.as_ctx().dev_add(&dev()))
    }),
    ("add a second device", ErrorCode::InvalidValue, || {
        let c = Dma::new();
        c.as_ctx().dev_add(&dev()).unwrap();
        code(c.as_ctx().dev_add(&dev_with("", 0x72)))
    }),
    ("remove a device never added", ErrorCode::NotFound, || {
        code(Dma::new().as_ctx().dev_rm(&dev()))
    }),
    (
        "remove the device of a started context",
        ErrorCode::BadState,
        || code(started_dma(&dev()).as_ctx().dev_rm(&dev())),
    ),
    (
        "attach a work queue to a stopped context",
        ErrorCode::BadState,
        || code(Dma::new().as_ctx().workq_add(&mut WorkQ::new(4).unwrap())),
    ),
    ("attach a work queue twice", ErrorCode::AlreadyExist, || {
        let (dma, mut wq) = attached(&dev(), 4);
        code(dma.as_ctx().workq_add(&mut wq))
    }),
    (
        "detach a work queue never attached",
        ErrorCode::NotFound,
        || {
            code(
                started_dma(&dev())
                    .as_ctx()
                    .workq_rm(&mut WorkQ::new(4).unwrap()),
            )
        },
    ),
    (
        "stop a context with work queues attached",
        ErrorCode::InUse,
        || {
            let (dma, _wq) = attached(&dev(), 4);
            code(dma.as_ctx().stop())
        },
    ),
    ("destroy a started context", ErrorCode::InUse, || {
        code(
            started_dma(&dev())
                .as_ctx()
                .clone()
                .destroy()
                .map_err(|(_, e)| e),
        )
    }),
    (
        "destroy a context that still has its device",
        ErrorCode::InUse,
        || {
            let c = Dma::new();
            c.as_ctx().dev_add(&dev()).unwrap();
            code(c.as_ctx().clone().destroy().map_err(|(_, e)| e))
        },
    ),
    ("submit to a stopped context", ErrorCode::BadState, || {
        let d = dev();
        let m = mem(&d);
        let dma = Dma::new();
        dma.as_ctx().dev_add(&d).unwrap();
        sub(WorkQ::new(4)
            .unwrap()
            .submit_job(dma.as_ctx(), memcpy(&m, 0)))
    }),
    (
        "submit through a work queue the context is not attached to",
        ErrorCode::NotFound,
        || {
            let d = dev();
            let m = mem(&d);
            let (dma, _wq) = attached(&d, 4);
            sub(WorkQ::new(4)
                .unwrap()
                .submit_job(dma.as_ctx(), memcpy(&m, 0)))
        },
    ),
    (
        "submit another library's job",
        ErrorCode::InvalidValue,
        || {
            let d = dev();
            let m = mem(&d);
            let (dma, mut wq) = attached(&d, 4);
            let job = ShaJob::new(
                ShaAlgo::Sha1,
                m.inv.buf_with_data_at(&m.mmap, 0, 8).unwrap(),
                m.inv.buf_at(&m.mmap, 100, 64).unwrap(),
                0,
            );
            sub(wq.submit_job(dma.as_ctx(), job))
        },
    ),
    (
        "submit a job without buffers",
        ErrorCode::InvalidValue,
        || {
            let (dma, mut wq) = attached(&dev(), 4);
            sub(wq.submit(dma.as_ctx(), JobRecord::new(JOB_MEMCPY, Default::default())))
        },
    ),
    (
        "submit a job type the device does not list",
        ErrorCode::NotSupported,
        || {
            let d = dev_with(
                "capabilities = [\"dma\", \"sha\"]\njob_types = [\"sha.sha1\"]",
                0x73,
            );
            let m = mem(&d);
            let (dma, mut wq) = attached(&d, 4);
            sub(wq.submit_job(dma.as_ctx(), memcpy(&m, 0)))
        },
    ),
    ("submit to a full work queue", ErrorCode::NoMemory, || {
        let d = dev();
        let m = mem(&d);
        let (dma, mut wq) = attached(&d, 1);
        wq.submit_job(dma.as_ctx(), memcpy(&m, 0))
            .map_err(|(e, _)| e)
            .unwrap();
        sub(wq.submit_job(dma.as_ctx(), memcpy(&m, 2048)))
    }),
    ("retrieve with nothing completed", ErrorCode::Again, || {
        let (_dma, mut wq) = attached(&dev(), 4);
        wq.progress_retrieve().map(|_| ()).unwrap_err().code()
    }),
    (
        "detach a work queue with jobs in flight",
        ErrorCode::InUse,
        || {
            let d = dev();
            let m = mem(&d);
            let (dma, mut wq) = attached(&d, 4);
            wq.submit_job(dma.as_ctx(), memcpy(&m, 0))
                .map_err(|(e, _)| e)
                .unwrap();
            code(dma.as_ctx().workq_rm(&mut wq))
        },
    ),
    (
        "event handle of a polling work queue",
        ErrorCode::BadState,
        || code(WorkQ::new(4).unwrap().event_handle()),
    ),
    ("arm a polling work queue", ErrorCode::BadState, || {
        code(WorkQ::new(4).unwrap().event_handle_arm())
    }),
    (
        "change the mode of an attached work queue",
        ErrorCode::BadState,
        || {
            let (_dma, mut wq) = attached(&dev(), 4);
            code(wq.set_event_driven_enable(true))
        },
    ),
    ("clear another handle", ErrorCode::InvalidValue, || {
        let mut wq = WorkQ::new(4).unwrap();
        wq.set_event_driven_enable(true).unwrap();
        let h = wq.event_handle().unwrap();
        code(wq.event_handle_clear(h + 1))
    }),
    (
        "ask DMA about a SHA job type",
        ErrorCode::NotSupported,
        || {
            code(Dma::job_get_supported(
                dev().as_devinfo(),
                doca_sha::JOB_SHA1,
            ))
        },
    ),
    (
        "ask SHA for the digest size of a DMA job",
        ErrorCode::NotSupported,
        || code(Sha::min_dst_buffer_size(dev().as_devinfo(), JOB_MEMCPY)),
    ),
    (
        "partial SHA job without a session",
        ErrorCode::InvalidValue,
        || {
            let d = dev();
            let m = mem(&d);
            let sha = Sha::new();
            sha.as_ctx().dev_add(&d).unwrap();
            sha.as_ctx().start().unwrap();
            let mut wq = WorkQ::new(4).unwrap();
            sha.as_ctx().workq_add(&mut wq).unwrap();
            let mut r = JobRecord::new(JOB_SHA256_PARTIAL, Default::default());
            r.set_buf(0, m.inv.buf_with_data_at(&m.mmap, 0, 64).unwrap());
            r.set_buf(1, m.inv.buf_at(&m.mmap, 100, 64).unwrap());
            sub(wq.submit(sha.as_ctx(), r))
        },
    ),
    (
        "destroy a partial session still held elsewhere",
        ErrorCode::InUse,
        || {
            let sha = Sha::new();
            let wq = WorkQ::new(4).unwrap();
            let s = sha.partial_session_create(&wq).unwrap();
            let _other = s.clone();
            code(sha.partial_session_destroy(&wq, s).map_err(|(_, e)| e))
        },
    ),
    (
        "destroy an attached context handle",
        ErrorCode::InUse,
        || {
            let (dma, _wq) = attached(&dev(), 4);
            let c: Ctx = dma.as_ctx().clone();
            code(c.destroy().map_err(|(_, e)| e))
        },
    ),
];

#[test]
fn misuse_table_for_contexts_work_queues_and_jobs() {
    assert!(CASES.len() >= 25, "only {} cases", CASES.len());
    let mut failures = Vec::new();
    for (what, want, run) in CASES {
        match std::panic::catch_unwind(run) {
            Ok(c) if c == *want => {}
            Ok(c) => failures.push(format!(
                "{what}: expected {}, got {}",
                want.name(),
                c.name()
            )),
            Err(_) => failures.push(format!("{what}: panicked")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} wrong:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}
