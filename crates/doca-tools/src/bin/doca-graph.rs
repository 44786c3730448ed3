//! `doca-graph`: DOCA's graph sample. A SHA-256 job and a DMA copy of the same source
//! run in parallel as context nodes of one graph; a user node that depends on both then
//! prints the digest and checks the copy.

use clap::Parser;
use doca_core::device::Capability;
use doca_core::graph::NodeView;
use doca_core::{Data, Error, ErrorCode, Graph, Result, WorkQ};
use doca_dma::{Dma, JOB_MEMCPY, MemcpyJob};
use doca_sha::{JOB_SHA256, Sha, ShaAlgo, ShaJob};
use doca_tools::{cleanup, io_error, open_device, outln, report};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Hash and copy a buffer in parallel with a DOCA graph, then check both.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Device PCI address (default: the first device with DMA and SHA).
    #[arg(short, long)]
    pci_addr: Option<String>,
    /// Hash and copy this file instead of the built-in text (up to 64 MiB).
    #[arg(short, long)]
    input: Option<PathBuf>,
    /// Print nothing on success.
    #[arg(short, long)]
    quiet: bool,
}

const DEFAULT_TEXT: &[u8] = b"DOCA graph sample: this text is hashed by a SHA context node and copied by a DMA context node at the same time.";
const MAX_INPUT: u64 = 64 << 20;

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn run(a: &Args) -> Result<String> {
    let source = match &a.input {
        None => DEFAULT_TEXT.to_vec(),
        Some(p) => {
            let len = std::fs::metadata(p)
                .map_err(|e| io_error(format!("cannot open '{}'", p.display()), &e))?
                .len();
            if len > MAX_INPUT || len == 0 {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    format!(
                        "'{}' has {len} bytes; the sample takes 1 byte to 64 MiB",
                        p.display()
                    ),
                ));
            }
            std::fs::read(p).map_err(|e| io_error(format!("cannot read '{}'", p.display()), &e))?
        }
    };
    let dev = open_device(a.pci_addr.as_deref(), Capability::Dma)?;
    if !dev.as_devinfo().has_capability(Capability::Sha) {
        return Err(Error::with_context(
            ErrorCode::NotSupported,
            format!(
                "device {} has no SHA capability",
                dev.as_devinfo().pci_addr_str()
            ),
        ));
    }
    let n = source.len();
    let (mmap, inv) = doca_tools::local_memory(&dev, vec![0u8; 2 * n + 64], 4)?;
    let mut src = inv.buf_at(&mmap, 0, n)?;
    src.write_data(&source)?;
    let dst = inv.buf_at(&mmap, n, n)?;
    let resp = inv.buf_at(&mmap, 2 * n, 64)?;

    let dma = Dma::new();
    dma.as_ctx().dev_add(&dev)?;
    dma.as_ctx().start()?;
    let sha = Sha::new();
    sha.as_ctx().dev_add(&dev)?;
    sha.as_ctx().start()?;
    let mut wq = WorkQ::new(8)?;
    dma.as_ctx().workq_add(&mut wq)?;
    sha.as_ctx().workq_add(&mut wq)?;

    let graph = Graph::new();
    let copy = graph.ctx_node_create(JOB_MEMCPY, dma.as_ctx())?;
    let hash = graph.ctx_node_create(JOB_SHA256, sha.as_ctx())?;
    let report_lines: Arc<Mutex<Vec<String>>> = Arc::default();
    let lines = Arc::clone(&report_lines);
    let check = graph.user_node_create(move |v: &NodeView<'_>, _cookie: Data| {
        let unexpected = |m: &str| Error::with_context(ErrorCode::Unexpected, m.to_string());
        let sha_rec = v
            .record(hash)?
            .ok_or_else(|| unexpected("the SHA node has no job"))?;
        let digest = sha_rec
            .buf(ShaJob::RESP)
            .ok_or_else(|| unexpected("the SHA job has no response buffer"))?
            .data_to_vec();
        let dma_rec = v
            .record(copy)?
            .ok_or_else(|| unexpected("the DMA node has no job"))?;
        let (Some(s), Some(d)) = (dma_rec.buf(MemcpyJob::SRC), dma_rec.buf(MemcpyJob::DST)) else {
            return Err(unexpected("the DMA job has no buffers"));
        };
        let same = s.data_to_vec() == d.data_to_vec();
        let mut l = lines.lock().unwrap_or_else(|e| e.into_inner());
        l.push(format!("SHA-256 of the source: {}", hex(&digest)));
        l.push(format!(
            "DMA copy of {} bytes: {}",
            d.data_len(),
            if same {
                "matches the source"
            } else {
                "DIFFERS from the source"
            }
        ));
        if same {
            Ok(())
        } else {
            Err(unexpected("the DMA copy differs from the source"))
        }
    })?;
    graph.add_dependency(copy, check)?;
    graph.add_dependency(hash, check)?;
    graph.start()?;
    graph.workq_add(&wq)?;

    let mut inst = graph.instance_create()?;
    let src2 = src.refcount_add()?;
    inst.set_ctx_node_data(copy, MemcpyJob::new(src, dst, 1))?;
    inst.set_ctx_node_data(hash, ShaJob::new(ShaAlgo::Sha256, src2, resp, 2))?;
    wq.graph_submit(inst, 42).map_err(|(e, _)| e)?;
    let c = wq.wait(Some(Duration::from_secs(60)));
    let (status, inst) = match c {
        Ok(mut c) => (Ok(()), c.graph_instance.take()),
        Err(doca_core::RetrieveError::IoFailed(mut c)) => (c.status(), c.graph_instance.take()),
        Err(e) => (Err(Error::from(e)), None),
    };
    drop(inst);
    graph.workq_rm(&wq)?;
    graph.stop()?;
    dma.as_ctx().workq_rm(&mut wq)?;
    sha.as_ctx().workq_rm(&mut wq)?;
    status?;
    let lines = report_lines
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .join("\n");
    // The digest is checked against the sha2 crate's too.
    let want = {
        use sha2::Digest;
        hex(&sha2::Sha256::digest(&source))
    };
    if !lines.contains(&want) {
        return Err(Error::with_context(
            ErrorCode::Unexpected,
            "the graph's SHA-256 differs from the sha2 crate's",
        ));
    }
    Ok(format!(
        "graph: DMA copy and SHA-256 ran in parallel, then the check node:\n{lines}"
    ))
}

fn main() -> ExitCode {
    cleanup::install();
    let a = Args::parse();
    match run(&a) {
        Ok(msg) => {
            if !a.quiet {
                outln!("{msg}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => report("doca-graph", &e),
    }
}
