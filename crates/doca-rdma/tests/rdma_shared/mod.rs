//! What the RDMA context tests share: two contexts of one process on progress engines,
//! memory exported for RDMA, job records and waiting for their completions.
#![allow(dead_code)]

use doca_core::exec::{Pe, PeEvent};
use doca_core::{AccessFlags, Buf, Data, ErrorCode, JobRecord, Mmap, device};
use doca_rdma::{Rdma, slot};
use std::time::{Duration, Instant};

pub struct Side {
    pub rdma: Rdma,
    pub pe: Pe,
}

pub fn side() -> Side {
    side_with(|_| {})
}

/// [`side`], with settings of its own made before the start.
pub fn side_with(set: impl FnOnce(&Rdma)) -> Side {
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    side_on(&dev, set)
}

/// [`side_with`] on the device `dev`.
pub fn side_on(dev: &doca_core::Dev, set: impl FnOnce(&Rdma)) -> Side {
    let rdma = Rdma::new(dev).unwrap();
    set(&rdma);
    rdma.set_permissions(
        (AccessFlags::LOCAL_READ_WRITE
            | AccessFlags::RDMA_READ
            | AccessFlags::RDMA_WRITE
            | AccessFlags::RDMA_ATOMIC)
            .bits(),
    )
    .unwrap();
    let pe = Pe::new().unwrap();
    pe.connect(rdma.ctx()).unwrap();
    pe.start_ctx(rdma.ctx()).unwrap();
    Side { rdma, pe }
}

pub fn mmap(len: usize, remote_perms: AccessFlags) -> Mmap {
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let mut m = Mmap::new();
    m.set_memory(vec![0u8; len]).unwrap();
    m.set_permissions(AccessFlags::LOCAL_READ_WRITE | remote_perms)
        .unwrap();
    m.dev_add(&dev).unwrap();
    m.start().unwrap();
    m
}

/// Progresses `pe` until the job with user data `ud` completes; its record and status.
pub fn wait(pe: &Pe, ud: u64) -> (JobRecord, Result<(), ErrorCode>) {
    wait_beside(pe, &[], ud)
}

/// [`wait`], progressing the engines `beside` too (a serving side).
pub fn wait_beside(pe: &Pe, beside: &[&Pe], ud: u64) -> (JobRecord, Result<(), ErrorCode>) {
    let t = Instant::now();
    loop {
        for b in beside {
            b.progress(|_| {});
        }
        let mut got = None;
        pe.progress(|ev| {
            if let PeEvent::Task(mut c) = ev
                && c.record.user_data.0 == ud
            {
                let st = c.status().map_err(|e| e.code());
                got = Some((
                    std::mem::replace(&mut c.record, JobRecord::new(0, Data(0))),
                    st,
                ));
            }
        });
        if let Some(g) = got {
            return g;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "job {ud} never completed"
        );
        std::thread::sleep(Duration::from_micros(100));
    }
}

pub fn job(t: u32, ud: u64, conn: u64, src: Option<Buf>, dst: Option<Buf>) -> JobRecord {
    let mut r = JobRecord::new(t, Data(ud));
    if let Some(b) = src {
        r.set_buf(slot::SRC, b);
    }
    if let Some(b) = dst {
        r.set_buf(slot::DST, b);
    }
    r.params[slot::CONN] = conn;
    r
}
