//! `doca-bench`: benchmarks against peers measured in the same run, with ratios.
//!
//! `cargo run --release -p doca-bench -- ec` measures erasure-coding encode and
//! recover-K-lost throughput (GB/s of data in, medians) of `ec-codec` against ISA-L 2.32
//! (built from source), reed-solomon-simd and reed-solomon-erasure (simd-accel), on one
//! and two threads, and prints a markdown table.

mod aesbench;
mod asyncbench;
mod comchbench;
mod compressbench;
mod ec;
mod ecctx;
mod exec;
mod graphbench;
mod isal;
mod pebench;
mod peers;
mod rdmabench;
mod syncev;
mod xproc;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(version, about = "Benchmarks against peer libraries, with ratios")]
struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Erasure coding: encode and recover against ISA-L, reed-solomon-simd, reed-solomon-erasure.
    Ec(ec::EcArgs),
    /// Work queue round trip, DMA memcpy and SHA-256 through contexts, against plain copies and the sha2 crate.
    Exec(exec::ExecArgs),
    /// Erasure coding through the DOCA context against ec-codec directly, and the doca-ec tool on a file against cat and a copy.
    EcCtx(ecctx::EcCtxArgs),
    /// 64 B memcpy round trips through the 3.x progress engine against the 2.2 work queue, through the C interface and in Rust.
    Pe(pebench::PeArgs),
    /// Sync event ping-pong between two threads against a raw AtomicU64 ping-pong.
    SyncEvent(syncev::SyncEventArgs),
    /// A graph of 3 DMA nodes against submitting the same 3 jobs by hand.
    Graph(graphbench::GraphArgs),
    /// Host and DPU as two processes: DMA from an imported mmap, sync event ping-pong and comm channel round trips, against the same in one process (or a raw socket).
    Xproc(xproc::XprocArgs),
    /// pyeclib over liberasurecode on our libisal.so.2 against the same on ISA-L 2.32, and the two libraries' ec_encode_data called directly.
    Isal(isal::IsalArgs),
    /// 64 DMA jobs of 4 KiB in flight from one tokio task against the blocking API, and the CPU an idle async program uses.
    Async(asyncbench::AsyncArgs),
    /// RDMA write/read throughput and the 64 B send/receive round trip through DOCA RDMA contexts, against raw UCX (put/get, active messages).
    Rdma(rdmabench::RdmaArgs),
    /// Compress tasks (deflate both ways, LZ4 block and stream decompress) against libdeflate, zlib and liblz4 on 64 KiB and 1 MiB of real text and binary data.
    Compress(compressbench::CompressArgs),
    /// AES-256-GCM encrypt and decrypt tasks against OpenSSL's EVP on 4 KiB and 64 KiB.
    AesGcm(aesbench::AesGcmArgs),
    /// The DPU side of `xproc` (started by it).
    #[command(hide = true)]
    XprocPeer(xproc::PeerArgs),
}

/// The middle value (the upper one of an even count).
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // Printed tables piped into `head` end the run quietly, as Unix tools do.
    // SAFETY: restoring the default action of SIGPIPE before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let args = Args::parse();
    match args.cmd {
        Cmd::Ec(a) => ec::run(&a),
        Cmd::Exec(a) => exec::run(&a),
        Cmd::EcCtx(a) => ecctx::run(&a),
        Cmd::Pe(a) => pebench::run(&a),
        Cmd::SyncEvent(a) => syncev::run(&a),
        Cmd::Graph(a) => graphbench::run(&a),
        Cmd::Xproc(a) => xproc::run(&a),
        Cmd::Isal(a) => isal::run(&a),
        Cmd::XprocPeer(a) => xproc::peer(&a),
        Cmd::Async(a) => asyncbench::run(&a),
        Cmd::Rdma(a) => rdmabench::run(&a),
        Cmd::Compress(a) => compressbench::run(&a),
        Cmd::AesGcm(a) => aesbench::run(&a),
    }
}
