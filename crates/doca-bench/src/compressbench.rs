//! Compress tasks against the libraries called directly, in the same run: deflate
//! compress and decompress through a `doca_compress` context against libdeflate (the
//! library the tasks run on) and zlib (flate2 on the system's libz) at levels 1 and 6;
//! LZ4 block and stream decompress against liblz4 (the C library: `LZ4_decompress_safe`
//! for a block, the frame decoder with its content checksum for a stream, as the task
//! reports a checksum of the content too). A task reports checksums of the data it
//! produced (deflate: CRC-32 and Adler-32; LZ4: CRC-32 and xxHash-32), so the
//! decompress rows also time the library doing that whole work (libdeflate's
//! checksums, liblz4's own xxHash-32) and print the ratio against it beside the ratio
//! against the bare decoder. Blocks of 64 KiB and 1 MiB of real text
//! (this repository's sources and documents) and real binary data (this program).
//! Throughput is GB/s of uncompressed data; ratio is compressed / uncompressed.

use crate::ec::{Runner, measure_all};
use clap::Args;
use doca_compress::{Compress, DeflateJob, Lz4Job, Lz4Stream};
use doca_core::exec::Job;
use doca_core::{Buf, BufInventory, Dev, Mmap, WorkQ};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct CompressArgs {
    /// Samples per measurement (the median is reported).
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Length of one sample in milliseconds.
    #[arg(long, default_value_t = 40)]
    sample_ms: u64,
    /// A short run to check that everything works.
    #[arg(long)]
    quick: bool,
}

/// This repository's text (Rust sources and Markdown), at least `n` bytes.
pub(crate) fn text_corpus(n: usize) -> Vec<u8> {
    fn walk(dir: &Path, out: &mut Vec<u8>, n: usize) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if out.len() >= n {
                return;
            }
            let name = p.file_name().and_then(|s| s.to_str()).unwrap_or("");
            if p.is_dir() && !name.starts_with('.') && name != "target" {
                walk(&p, out, n);
            } else if name.ends_with(".rs") || name.ends_with(".md") {
                out.extend(std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    walk(&root, &mut out, n);
    assert!(!out.is_empty(), "no text found under {}", root.display());
    out.iter().copied().cycle().take(n).collect()
}

/// Real binary data: this program's own bytes, at least `n`.
pub(crate) fn binary_corpus(n: usize) -> Vec<u8> {
    let exe = std::fs::read("/proc/self/exe").expect("reading this program");
    exe.iter().copied().cycle().skip(4096).take(n).collect()
}

fn device() -> Dev {
    doca_core::devinfo_list().expect("devices")[0]
        .open()
        .expect("open")
}

struct Ctx {
    mmap: Mmap,
    inv: BufInventory,
    c: Compress,
    wq: WorkQ,
}

const AT_SRC: usize = 0;
const AT_DST: usize = 4 << 20;
const MEM: usize = 8 << 20;

fn setup(dev: &Dev) -> Ctx {
    let (mmap, inv) = doca_tools::local_memory(dev, vec![0u8; MEM], 8).expect("memory");
    let c = Compress::new();
    c.as_ctx().dev_add(dev).expect("dev_add");
    c.as_ctx().start().expect("start");
    let mut wq = WorkQ::new(4).expect("workq");
    c.as_ctx().workq_add(&mut wq).expect("workq_add");
    Ctx { mmap, inv, c, wq }
}

/// Runs one task from the source (`n` bytes at AT_SRC) into the destination; returns
/// the output length.
fn task(
    x: &mut Ctx,
    bufs: &mut Option<(Buf, Buf)>,
    make: &dyn Fn(Buf, Buf) -> doca_core::JobRecord,
) -> usize {
    let (src, mut dst) = bufs.take().expect("buffers");
    dst.reset_data_len();
    x.wq.submit_job(x.c.as_ctx(), make(src, dst))
        .map_err(|(e, _)| e)
        .expect("submit");
    let mut done = x.wq.wait(Some(Duration::from_secs(30))).expect("task");
    let src = done.take_buf(DeflateJob::SRC).expect("src");
    let dst = done.take_buf(DeflateJob::DST).expect("dst");
    let n = dst.data_len();
    *bufs = Some((src, dst));
    n
}

fn zlib_compress(data: &[u8], level: u32, out: &mut Vec<u8>) -> usize {
    out.clear();
    let mut e =
        flate2::write::DeflateEncoder::new(std::mem::take(out), flate2::Compression::new(level));
    e.write_all(data).expect("deflate");
    *out = e.finish().expect("deflate");
    out.len()
}

fn lz4_frame(data: &[u8]) -> Vec<u8> {
    let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(
        lz4_flex::frame::FrameInfo::new()
            .block_size(lz4_flex::frame::BlockSize::Max64KB)
            .block_mode(lz4_flex::frame::BlockMode::Independent)
            .content_checksum(true),
        Vec::new(),
    );
    enc.write_all(data).expect("lz4 frame");
    enc.finish().expect("lz4 frame")
}

/// The blocks of an LZ4 frame without its header, end mark and content checksum (as
/// NVIDIA's sample hands a stream task).
fn frame_blocks(frame: &[u8]) -> &[u8] {
    let flg = frame[4];
    let header = 7 + if flg & 0x08 != 0 { 8 } else { 0 };
    let footer = 4 + if flg & 0x04 != 0 { 4 } else { 0 };
    &frame[header..frame.len() - footer]
}

/// liblz4's frame decoder: the whole frame into `out`, its content checksum checked.
struct Lz4F(lz4_sys::LZ4FDecompressionContext);

impl Lz4F {
    fn new() -> Lz4F {
        let mut ctx = lz4_sys::LZ4FDecompressionContext(std::ptr::null_mut());
        // SAFETY: creates a context of the version the library was built with.
        let r =
            unsafe { lz4_sys::LZ4F_createDecompressionContext(&mut ctx, lz4_sys::LZ4F_VERSION) };
        assert_eq!(r, 0, "LZ4F context");
        Lz4F(ctx)
    }

    fn decompress(&mut self, frame: &[u8], out: &mut [u8]) -> usize {
        let (mut at, mut made) = (0usize, 0usize);
        loop {
            let mut dst_len = out.len() - made;
            let mut src_len = frame.len() - at;
            // SAFETY: the pointers and lengths name the slices' remaining parts.
            let r = unsafe {
                lz4_sys::LZ4F_decompress(
                    self.0,
                    out[made..].as_mut_ptr(),
                    &mut dst_len,
                    frame[at..].as_ptr(),
                    &mut src_len,
                    std::ptr::null(),
                )
            };
            // SAFETY: a status code of the library.
            assert_eq!(unsafe { lz4_sys::LZ4F_isError(r) }, 0, "LZ4F_decompress");
            at += src_len;
            made += dst_len;
            if r == 0 {
                return made;
            }
        }
    }
}

impl Drop for Lz4F {
    fn drop(&mut self) {
        // SAFETY: a live context, freed once.
        unsafe { lz4_sys::LZ4F_freeDecompressionContext(self.0) };
    }
}

fn row(name: &str, size: usize, rates: &[f64], labels: &[&str], ratios: &[Option<f64>]) {
    let mut line = format!(
        "| {name} | {} |",
        if size >= 1 << 20 {
            format!("{} MiB", size >> 20)
        } else {
            format!("{} KiB", size >> 10)
        }
    );
    for (i, r) in rates.iter().enumerate() {
        let ratio = ratios
            .get(i)
            .copied()
            .flatten()
            .map(|x| format!(", ratio {x:.3}"))
            .unwrap_or_default();
        line.push_str(&format!(" {} {:.2} GB/s{ratio} |", labels[i], r));
    }
    line.push_str(&format!(
        " ours/{}: {:.2}x |",
        labels[1],
        rates[0] / rates[1]
    ));
    // Where the last runner is the peer doing the task's whole work (the data and the
    // checksums the task reports), the ratio against it too.
    if let Some(last) = labels.last().filter(|l| l.contains('+')) {
        line.push_str(&format!(
            " ours/{last}: {:.2}x |",
            rates[0] / rates[rates.len() - 1]
        ));
    }
    println!("{line}");
}

unsafe extern "C" {
    /// liblz4's own xxHash-32 (its frame format's checksum), exported by the library.
    fn XXH32(input: *const std::ffi::c_void, len: usize, seed: u32) -> u32;
}

/// The checksums a deflate decompress task reports, computed as a program calling
/// libdeflate directly would.
fn deflate_sums(out: &[u8]) -> u64 {
    u64::from(libdeflater::crc32(out)) << 32 | u64::from(libdeflater::adler32(out))
}

/// The checksums an LZ4 decompress task reports: CRC-32 (libdeflate) and liblz4's
/// xxHash-32.
fn lz4_sums(out: &[u8]) -> u64 {
    // SAFETY: the pointer and length name `out`.
    let x = unsafe { XXH32(out.as_ptr().cast(), out.len(), 0) };
    u64::from(libdeflater::crc32(out)) << 32 | u64::from(x)
}

pub fn run(a: &CompressArgs) {
    let (reps, sample) = if a.quick {
        (3, Duration::from_millis(5))
    } else {
        (a.reps.max(1), Duration::from_millis(a.sample_ms))
    };
    println!(
        "median of {reps} samples; samples of each runner taken in turn; GB/s of uncompressed data\n"
    );
    let dev = device();
    let mut x = setup(&dev);
    let sizes: &[usize] = if a.quick { &[65536] } else { &[65536, 1 << 20] };
    for (cname, corpus) in [
        ("text", text_corpus(1 << 20)),
        ("binary", binary_corpus(1 << 20)),
    ] {
        for &size in sizes {
            let data = &corpus[..size];
            let name = cname.to_string();
            // ---- deflate compress ----
            x.mmap.write_at(AT_SRC, data).expect("write");
            let mut bufs = Some((
                x.inv.buf_with_data_at(&x.mmap, AT_SRC, size).expect("src"),
                x.inv.buf_at(&x.mmap, AT_DST, 2 * size + 4096).expect("dst"),
            ));
            let ours_len = task(&mut x, &mut bufs, &|s, d| {
                DeflateJob::compress(s, d, 0).into_record()
            });
            let mut lc =
                libdeflater::Compressor::new(libdeflater::CompressionLvl::new(6).expect("level"));
            let mut out = vec![0u8; lc.deflate_compress_bound(size)];
            let lib_len = lc.deflate_compress(data, &mut out).expect("libdeflate");
            let (mut z1, mut z6) = (Vec::new(), Vec::new());
            let z1_len = zlib_compress(data, 1, &mut z1);
            let z6_len = zlib_compress(data, 6, &mut z6);
            let rates = {
                let x = &mut x;
                let bufs = &mut bufs;
                let mut runners: Vec<Runner<'_>> = vec![
                    Box::new(move || {
                        task(x, bufs, &|s, d| DeflateJob::compress(s, d, 0).into_record());
                    }),
                    Box::new(|| {
                        std::hint::black_box(
                            lc.deflate_compress(data, &mut out).expect("libdeflate"),
                        );
                    }),
                    Box::new(|| {
                        zlib_compress(data, 1, &mut z1);
                    }),
                    Box::new(|| {
                        zlib_compress(data, 6, &mut z6);
                    }),
                ];
                measure_all(size, reps, sample, &mut runners)
            };
            let r = |n: usize| Some(n as f64 / size as f64);
            row(
                &format!("{name} deflate compress"),
                size,
                &rates,
                &["ours (level 6)", "libdeflate 6", "zlib 1", "zlib 6"],
                &[r(ours_len), r(lib_len), r(z1_len), r(z6_len)],
            );
            drop(bufs);

            // ---- deflate decompress (of libdeflate level 6's output) ----
            let packed = out[..lib_len].to_vec();
            x.mmap.write_at(AT_SRC, &packed).expect("write");
            let mut bufs = Some((
                x.inv
                    .buf_with_data_at(&x.mmap, AT_SRC, packed.len())
                    .expect("src"),
                x.inv.buf_at(&x.mmap, AT_DST, size).expect("dst"),
            ));
            assert_eq!(
                task(&mut x, &mut bufs, &|s, d| DeflateJob::decompress(s, d, 0)
                    .into_record()),
                size
            );
            let mut ld = libdeflater::Decompressor::new();
            let mut back = vec![0u8; size];
            let mut ld2 = libdeflater::Decompressor::new();
            let mut back2 = vec![0u8; size];
            let rates = {
                let x = &mut x;
                let bufs = &mut bufs;
                let mut runners: Vec<Runner<'_>> = vec![
                    Box::new(move || {
                        task(x, bufs, &|s, d| {
                            DeflateJob::decompress(s, d, 0).into_record()
                        });
                    }),
                    Box::new(|| {
                        ld.deflate_decompress(&packed, &mut back)
                            .expect("libdeflate");
                    }),
                    Box::new(|| {
                        let mut d = flate2::read::DeflateDecoder::new(&packed[..]);
                        let mut v = Vec::with_capacity(size);
                        d.read_to_end(&mut v).expect("zlib");
                        std::hint::black_box(v);
                    }),
                    Box::new(|| {
                        let n = ld2
                            .deflate_decompress(&packed, &mut back2)
                            .expect("libdeflate");
                        std::hint::black_box(deflate_sums(&back2[..n]));
                    }),
                ];
                measure_all(size, reps, sample, &mut runners)
            };
            row(
                &format!("{name} deflate decompress (ours with CRC-32 and Adler-32)"),
                size,
                &rates,
                &[
                    "ours",
                    "libdeflate",
                    "zlib",
                    "libdeflate + CRC-32 + Adler-32",
                ],
                &[],
            );
            drop(bufs);

            // ---- LZ4 block decompress ----
            let block = lz4_flex::block::compress(data);
            x.mmap.write_at(AT_SRC, &block).expect("write");
            let mut bufs = Some((
                x.inv
                    .buf_with_data_at(&x.mmap, AT_SRC, block.len())
                    .expect("src"),
                x.inv.buf_at(&x.mmap, AT_DST, size).expect("dst"),
            ));
            assert_eq!(
                task(&mut x, &mut bufs, &|s, d| Lz4Job::block(s, d, 0)
                    .into_record()),
                size
            );
            let rates = {
                let x = &mut x;
                let bufs = &mut bufs;
                let back = &mut back;
                let back2 = &mut back2;
                let block = &block;
                let mut runners: Vec<Runner<'_>> = vec![
                    Box::new(move || {
                        task(x, bufs, &|s, d| Lz4Job::block(s, d, 0).into_record());
                    }),
                    Box::new(move || {
                        // SAFETY: the pointers and lengths name the two slices.
                        let n = unsafe {
                            lz4_sys::LZ4_decompress_safe(
                                block.as_ptr().cast(),
                                back.as_mut_ptr().cast(),
                                block.len() as i32,
                                back.len() as i32,
                            )
                        };
                        assert_eq!(n as usize, size);
                    }),
                    Box::new(move || {
                        // SAFETY: the pointers and lengths name the two slices.
                        let n = unsafe {
                            lz4_sys::LZ4_decompress_safe(
                                block.as_ptr().cast(),
                                back2.as_mut_ptr().cast(),
                                block.len() as i32,
                                back2.len() as i32,
                            )
                        };
                        assert_eq!(n as usize, size);
                        std::hint::black_box(lz4_sums(&back2[..size]));
                    }),
                ];
                measure_all(size, reps, sample, &mut runners)
            };
            row(
                &format!("{name} LZ4 block decompress (ours with CRC-32 and xxHash-32)"),
                size,
                &rates,
                &["ours", "liblz4", "liblz4 + CRC-32 + xxHash-32"],
                &[Some(block.len() as f64 / size as f64)],
            );
            drop(bufs);

            // ---- LZ4 stream decompress (64 KiB independent blocks) ----
            let frame = lz4_frame(data);
            let blocks = frame_blocks(&frame).to_vec();
            x.mmap.write_at(AT_SRC, &blocks).expect("write");
            let mut bufs = Some((
                x.inv
                    .buf_with_data_at(&x.mmap, AT_SRC, blocks.len())
                    .expect("src"),
                x.inv.buf_at(&x.mmap, AT_DST, size).expect("dst"),
            ));
            let stream = Lz4Stream {
                has_block_checksum: false,
                are_blocks_independent: true,
            };
            assert_eq!(
                task(&mut x, &mut bufs, &|s, d| Lz4Job::stream(s, d, stream, 0)
                    .into_record()),
                size
            );
            let mut lf = Lz4F::new();
            assert_eq!(lf.decompress(&frame, &mut back), size);
            let rates = {
                let x = &mut x;
                let bufs = &mut bufs;
                let mut runners: Vec<Runner<'_>> = vec![
                    Box::new(move || {
                        task(x, bufs, &|s, d| {
                            Lz4Job::stream(s, d, stream, 0).into_record()
                        });
                    }),
                    Box::new(|| {
                        lf.decompress(&frame, &mut back);
                    }),
                ];
                measure_all(size, reps, sample, &mut runners)
            };
            row(
                &format!("{name} LZ4 stream decompress (both with xxHash-32 of the content)"),
                size,
                &rates,
                &["ours", "liblz4 frame"],
                &[Some(frame.len() as f64 / size as f64)],
            );
            drop(bufs);
        }
    }
}
