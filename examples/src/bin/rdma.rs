//! RDMA on tokio, as two processes (as on two machines): this program starts a copy of
//! itself as the responder, which exports its memory and posts one receive; the
//! requester writes 1 MiB into the responder's memory, reads it back, and sends a
//! message with immediate data. The responder only awaits its receive: the write and
//! the read need no program on its side. Connection details and the memory's export
//! pass through files, as DOCA's samples pass them.
//!
//! `rdma` runs both; `rdma responder DIR` is the side it starts.

use doca_core::aio::AsyncWorkQ;
use doca_core::{AccessFlags, BufInventory, Data, Dev, Error, ErrorCode, Mmap, Result, WorkQ};
use doca_rdma::Rdma;
use doca_rdma::jobs::{Read, Received, Recv, Send, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const LEN: usize = 1 << 20;

fn io(e: std::io::Error, what: &str) -> Error {
    Error::with_context(ErrorCode::IoFailed, format!("{what}: {e}"))
}

/// Writes a file whole (a temporary name first, so that the reader never sees half).
fn put(dir: &Path, name: &str, data: &[u8]) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    std::fs::write(&tmp, data).map_err(|e| io(e, "write"))?;
    std::fs::rename(&tmp, dir.join(name)).map_err(|e| io(e, "rename"))
}

/// Waits (at most 30 s) for a file and reads it.
async fn get(dir: &Path, name: &str) -> Result<Vec<u8>> {
    let t = Instant::now();
    loop {
        if let Ok(d) = std::fs::read(dir.join(name)) {
            return Ok(d);
        }
        if t.elapsed() > Duration::from_secs(30) {
            return Err(Error::with_context(
                ErrorCode::TimeOut,
                format!("{name} never came"),
            ));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A started RDMA context on `dev`, its jobs on an event-driven work queue.
fn context(dev: &Dev) -> Result<(Rdma, AsyncWorkQ)> {
    let r = Rdma::new(dev)?;
    r.set_permissions(
        (AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE).bits(),
    )?;
    r.ctx().start()?;
    let wq = AsyncWorkQ::new(WorkQ::new(8)?)?;
    wq.attach(r.ctx())?;
    Ok((r, wq))
}

fn memory(dev: &Dev, remote: AccessFlags) -> Result<Mmap> {
    let mut m = Mmap::new();
    m.set_memory(vec![0u8; LEN + 4096])?;
    m.set_permissions(AccessFlags::LOCAL_READ_WRITE | remote)?;
    m.dev_add(dev)?;
    m.start()?;
    Ok(m)
}

/// Connects `r` to the peer: our details go out as `mine`, the peer's come as `theirs`.
async fn connect(r: &Rdma, dir: &Path, mine: &str, theirs: &str) -> Result<()> {
    let (desc, conn) = r.export()?;
    put(dir, mine, &desc)?;
    let peer = get(dir, theirs).await?;
    r.connect(&peer, &conn)
}

async fn responder(dir: &Path) -> Result<()> {
    let dev = doca_core::devinfo_list()?[0].open()?;
    let (r, wq) = context(&dev)?;
    let mem = memory(&dev, AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE)?;
    put(dir, "memory", &mem.export_rdma(&dev)?)?;
    connect(&r, dir, "responder", "requester").await?;
    let mut inv = BufInventory::new(2)?;
    inv.start()?;
    let dst = inv.buf_at(&mem, LEN, 4096)?;
    let mut done = wq
        .submit_job(r.ctx(), Recv::new(Some(dst), 1))
        .map_err(|(e, _)| e)?
        .await;
    done.status()?;
    let got = Received::of(&done.record).expect("a receive's record");
    let msg = done.take_buf(doca_rdma::slot::DST).expect("the buffer");
    // The requester's write landed before its message (it awaited the write first).
    let mut head = [0u8; 16];
    mem.read_at(0, &mut head)?;
    println!(
        "responder: got {:?} with immediate {:?}; my memory starts {:?}",
        String::from_utf8_lossy(&msg.data_to_vec()),
        got.immediate,
        &head[..4]
    );
    drop(msg);
    put(dir, "responder-done", b"1")?;
    wq.detach(r.ctx())?;
    r.ctx().stop()
}

async fn requester(dir: &Path) -> Result<()> {
    let dev = doca_core::devinfo_list()?[0].open()?;
    let (r, wq) = context(&dev)?;
    connect(&r, dir, "requester", "responder").await?;
    let remote = Mmap::create_from_export(Data(0), &get(dir, "memory").await?, &dev)?;
    let local = memory(&dev, AccessFlags::empty())?;
    let mut inv = BufInventory::new(4)?;
    inv.start()?;

    // 1 MiB into the responder's memory.
    let pattern: Vec<u8> = (0..LEN).map(|i| (i % 251) as u8).collect();
    let mut src = inv.buf_at(&local, 0, LEN)?;
    src.append(&pattern)?;
    let dst = inv.buf_at(&remote, 0, LEN)?;
    wq.submit_job(r.ctx(), Write::new(src, dst, 1))
        .map_err(|(e, _)| e)?
        .await
        .status()?;

    // And back, into another part of ours.
    let mut back_src = inv.buf_at(&remote, 0, LEN)?;
    back_src.set_data_range(0, LEN)?;
    let back = inv.buf_at(&local, 0, LEN)?;
    let mut done = wq
        .submit_job(r.ctx(), Read::new(back_src, back, 2))
        .map_err(|(e, _)| e)?
        .await;
    done.status()?;
    let back = done.take_buf(doca_rdma::slot::DST).expect("the buffer");
    if back.data_to_vec() != pattern {
        return Err(Error::with_context(
            ErrorCode::Unexpected,
            "what came back differs from what was written",
        ));
    }
    drop(back);

    // A small read: with shared memory allowed, copied directly by this side.
    let mut small_src = inv.buf_at(&remote, 4096, 64)?;
    small_src.set_data_range(0, 64)?;
    let small = inv.buf_at(&local, LEN + 1024, 64)?;
    let mut done = wq
        .submit_job(r.ctx(), Read::new(small_src, small, 4))
        .map_err(|(e, _)| e)?
        .await;
    done.status()?;
    let small = done.take_buf(doca_rdma::slot::DST).expect("the buffer");
    if small.data_to_vec() != pattern[4096..4096 + 64] {
        return Err(Error::with_context(
            ErrorCode::Unexpected,
            "the small read differs from what was written",
        ));
    }
    drop(small);

    let transports = r
        .connections()
        .first()
        .map(|c| r.transports(c).unwrap_or_else(|e| e.to_string()))
        .unwrap_or_default();
    let mut msg = inv.buf_at(&local, LEN, 64)?;
    msg.append(b"hello over RDMA")?;
    wq.submit_job(r.ctx(), Send::new(msg, 3).with_immediate(2026))
        .map_err(|(e, _)| e)?
        .await
        .status()?;
    get(dir, "responder-done").await?;
    println!(
        "requester: 1 MiB written, read back and checked, 64 bytes read back; message sent (UCX: {transports}; reads and writes copied directly: {}; writes sent in pieces through shared memory: {})",
        r.direct_copies(),
        doca_rdma::nic::transfers_in_pieces()
    );
    wq.detach(r.ctx())?;
    r.ctx().stop()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "responder" {
        return responder(Path::new(&args[2])).await;
    }
    let dir = std::env::temp_dir().join(format!("doca-rdma-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| io(e, "mkdir"))?;
    let exe = std::env::current_exe().map_err(|e| io(e, "current_exe"))?;
    let mut child = tokio::process::Command::new(exe)
        .arg("responder")
        .arg(&dir)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| io(e, "spawn the responder"))?;
    let r = requester(&dir).await;
    let status = child.wait().await.map_err(|e| io(e, "wait"))?;
    let _ = std::fs::remove_dir_all::<PathBuf>(dir);
    r?;
    if !status.success() {
        return Err(Error::with_context(
            ErrorCode::Unexpected,
            format!("the responder failed: {status}"),
        ));
    }
    println!("rdma: two processes, write, read and send over RDMA");
    Ok(())
}
