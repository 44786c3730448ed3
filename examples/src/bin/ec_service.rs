//! A small erasure coding service on tokio: clients send requests over TCP (a 4-byte
//! little-endian length, then that many bytes); the service splits each into 4 data
//! blocks (zero-padded to a multiple of 64 bytes each), codes 2 redundancy blocks with
//! a Cauchy matrix as a DOCA EC job, and answers with the redundancy (length, then
//! bytes), in request order. Up to 8 jobs per connection are in flight while the next
//! requests are read.
//!
//! `ec_service --listen 127.0.0.1:7878` serves until stopped. Without `--listen` it
//! checks itself: it serves on a free loopback port and runs a client that pipelines
//! `--requests N` requests (default 200) of varied sizes and compares every answer with
//! `ec-codec` run directly.

use doca_core::aio::AsyncWorkQ;
use doca_core::{BufInventory, Dev, Error, ErrorCode, Mmap, Result, WorkQ, devinfo_list};
use doca_ec::{Ec, EcCreateJob, Matrix, MatrixType};
use doca_examples::local_memory;
use std::collections::VecDeque;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

const M: usize = 4;
const K: usize = 2;
/// Largest request.
const MAX_REQUEST: usize = 1 << 20;
/// Jobs in flight per connection.
const SLOTS: usize = 8;

/// What every connection shares: the EC context, its coding matrix and the job queue.
struct Service {
    dev: Dev,
    ec: Ec,
    coding: Matrix,
    wq: AsyncWorkQ,
}

fn io(e: std::io::Error) -> Error {
    Error::with_context(ErrorCode::OperatingSystem, format!("socket: {e}"))
}

/// The block length for a request of `len` bytes.
fn block_len(len: usize) -> usize {
    len.div_ceil(M).div_ceil(64).max(1) * 64
}

/// Reads requests into a channel (so that reading never races the job futures).
async fn read_requests(
    mut rd: tokio::net::tcp::OwnedReadHalf,
    tx: mpsc::Sender<Vec<u8>>,
) -> Result<()> {
    loop {
        let mut head = [0u8; 4];
        match rd.read_exact(&mut head).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(io(e)),
        }
        let len = u32::from_le_bytes(head) as usize;
        if len == 0 || len > MAX_REQUEST {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("a request holds 1 to {MAX_REQUEST} bytes, not {len}"),
            ));
        }
        let mut body = vec![0u8; len];
        rd.read_exact(&mut body).await.map_err(io)?;
        if tx.send(body).await.is_err() {
            return Ok(());
        }
    }
}

async fn serve_connection(svc: Arc<Service>, sock: TcpStream) -> Result<()> {
    let (rd, mut wr) = sock.into_split();
    let (tx, mut rx) = mpsc::channel(SLOTS);
    let reader = tokio::spawn(read_requests(rd, tx));
    let slot_bytes = M * block_len(MAX_REQUEST) + K * block_len(MAX_REQUEST);
    let (mmap, inv): (Mmap, BufInventory) = local_memory(&svc.dev, SLOTS * slot_bytes, 2 * SLOTS)?;
    let mut free: Vec<usize> = (0..SLOTS).collect();
    let mut inflight: VecDeque<(doca_core::aio::JobFuture<'_>, usize)> = VecDeque::new();
    let mut open = true;
    while open || !inflight.is_empty() {
        tokio::select! {
            // The oldest job first: answers go out in request order.
            done = async { (&mut inflight.front_mut().expect("a job").0).await }, if !inflight.is_empty() => {
                let (_, slot) = inflight.pop_front().expect("the job awaited");
                let mut done: doca_core::Completion = done;
                done.status()?;
                let parity = done.take_buf(EcCreateJob::DST).expect("redundancy").data_to_vec();
                drop(done);
                free.push(slot);
                wr.write_all(&(parity.len() as u32).to_le_bytes()).await.map_err(io)?;
                wr.write_all(&parity).await.map_err(io)?;
            }
            req = rx.recv(), if open && !free.is_empty() => {
                let Some(req) = req else {
                    open = false;
                    continue;
                };
                let slot = free.pop().expect("a free slot");
                let block = block_len(req.len());
                let base = slot * slot_bytes;
                let mut src = inv.buf_at(&mmap, base, M * block)?;
                let mut padded = req;
                padded.resize(M * block, 0);
                src.write_data(&padded)?;
                let dst = inv.buf_at(&mmap, base + M * block, K * block)?;
                let job = EcCreateJob::new(&svc.coding, src, dst, slot as u64);
                let f = svc.wq.submit_job(svc.ec.as_ctx(), job).map_err(|(e, _)| e)?;
                inflight.push_back((f, slot));
            }
        }
    }
    drop(inflight);
    wr.shutdown().await.map_err(io)?;
    reader.await.expect("reader task")
}

async fn serve(svc: Arc<Service>, listener: TcpListener) -> Result<()> {
    loop {
        let (sock, _) = listener.accept().await.map_err(io)?;
        let svc = Arc::clone(&svc);
        tokio::spawn(async move {
            if let Err(e) = serve_connection(svc, sock).await {
                eprintln!("ec_service: connection ended: {e}");
            }
        });
    }
}

/// Sends `n` requests of varied sizes, pipelined, and checks every answer against
/// ec-codec.
async fn client(addr: std::net::SocketAddr, n: usize) -> Result<usize> {
    let sock = TcpStream::connect(addr).await.map_err(io)?;
    let (mut rd, mut wr) = sock.into_split();
    let requests: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let len = 1 + (i * 7919) % (64 * 1024);
            (0..len).map(|k| (k * 31 + i) as u8).collect()
        })
        .collect();
    let sent = requests.clone();
    let writer = tokio::spawn(async move {
        for r in &sent {
            wr.write_all(&(r.len() as u32).to_le_bytes())
                .await
                .map_err(io)?;
            wr.write_all(r).await.map_err(io)?;
        }
        wr.shutdown().await.map_err(io)
    });
    let m = ec_codec::CodingMatrix::cauchy(M, K)
        .map_err(|e| Error::with_context(ErrorCode::Unexpected, e.to_string()))?;
    let enc = ec_codec::Encoder::new(&m)
        .map_err(|e| Error::with_context(ErrorCode::Unexpected, e.to_string()))?;
    let mut bytes = 0;
    for r in &requests {
        let mut head = [0u8; 4];
        rd.read_exact(&mut head).await.map_err(io)?;
        let mut parity = vec![0u8; u32::from_le_bytes(head) as usize];
        rd.read_exact(&mut parity).await.map_err(io)?;
        let block = block_len(r.len());
        let mut padded = r.clone();
        padded.resize(M * block, 0);
        let data: Vec<&[u8]> = padded.chunks(block).collect();
        let mut want = vec![vec![0u8; block]; K];
        enc.encode(
            &data,
            &mut want.iter_mut().map(|b| &mut b[..]).collect::<Vec<_>>(),
        )
        .map_err(|e| Error::with_context(ErrorCode::Unexpected, e.to_string()))?;
        if parity != want.concat() {
            return Err(Error::with_context(
                ErrorCode::Unexpected,
                "an answer differs from ec-codec's redundancy",
            ));
        }
        bytes += r.len();
    }
    writer.await.expect("writer task")?;
    Ok(bytes)
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let dev = devinfo_list()?[0].open()?;
    let ec = Ec::new();
    ec.as_ctx().dev_add(&dev)?;
    ec.as_ctx().start()?;
    let coding = ec.matrix_create(MatrixType::Cauchy, M, K)?;
    let wq = AsyncWorkQ::new(WorkQ::new(256)?)?;
    wq.attach(ec.as_ctx())?;
    let svc = Arc::new(Service {
        dev,
        ec,
        coding,
        wq,
    });

    if let Some(addr) = arg("--listen") {
        let listener = TcpListener::bind(&addr).await.map_err(io)?;
        println!(
            "ec_service: listening on {}",
            listener.local_addr().map_err(io)?
        );
        return serve(svc, listener).await;
    }
    let n: usize = match arg("--requests") {
        Some(v) => v.parse().map_err(|_| {
            Error::with_context(
                ErrorCode::InvalidValue,
                format!("--requests takes a count, not {v:?}"),
            )
        })?,
        None => 200,
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.map_err(io)?;
    let addr = listener.local_addr().map_err(io)?;
    let server = tokio::spawn(serve(Arc::clone(&svc), listener));
    let t = std::time::Instant::now();
    let bytes = client(addr, n).await?;
    server.abort();
    println!(
        "ec_service: {n} requests ({bytes} bytes) coded {M}+{K} over TCP in {} ms; every answer equals ec-codec's",
        t.elapsed().as_millis()
    );
    Ok(())
}
