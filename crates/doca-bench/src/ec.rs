//! Erasure-coding benchmark.

use clap::Args;
use ec_codec::{CodingMatrix, Decoder, Encoder};
use erasure_isa_l_sys as isal;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct EcArgs {
    /// Samples per measurement (the median is reported).
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Target duration of one sample, in milliseconds.
    #[arg(long, default_value_t = 40)]
    sample_ms: u64,
    /// Thread counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    threads: Vec<usize>,
    /// Only these shapes, as M+K@SIZE (e.g. 10+4@64K); default: the full set.
    #[arg(long, value_delimiter = ',')]
    shapes: Vec<String>,
    /// A short run (3 samples of 5 ms, small shapes) to check that everything works.
    #[arg(long)]
    quick: bool,
    /// Skip the peers whose names are given (isal, rss, rse).
    #[arg(long, value_delimiter = ',')]
    skip: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Shape {
    m: usize,
    k: usize,
    len: usize,
}

const DEFAULT_SHAPES: &[(usize, usize, usize)] = &[
    (10, 4, 4 << 10),
    (10, 4, 64 << 10),
    (10, 4, 1 << 20),
    (10, 4, 16 << 20),
    (4, 2, 64 << 10),
    (8, 4, 64 << 10),
    (20, 8, 64 << 10),
    (20, 8, 1 << 20),
    (128, 32, 64 << 10),
    (128, 32, 1 << 20),
];

fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (n, mul) = if let Some(n) = s.strip_suffix(['K', 'k']) {
        (n, 1 << 10)
    } else if let Some(n) = s.strip_suffix(['M', 'm']) {
        (n, 1 << 20)
    } else {
        (s, 1)
    };
    n.parse::<usize>().ok().map(|v| v * mul)
}

fn parse_shape(s: &str) -> Option<Shape> {
    let (mk, size) = s.split_once('@')?;
    let (m, k) = mk.split_once('+')?;
    Some(Shape {
        m: m.parse().ok()?,
        k: k.parse().ok()?,
        len: parse_size(size)?,
    })
}

fn size_str(n: usize) -> String {
    if n >= 1 << 20 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{} KiB", n >> 10)
    }
}

struct Rng(u64);
impl Rng {
    fn fill(&mut self, b: &mut [u8]) {
        for chunk in b.chunks_mut(8) {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            let v = self.0.to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

pub(crate) type Runner<'a> = Box<dyn FnMut() + 'a>;

/// Measures several runners of the same operation (over `bytes` of data in), taking
/// their samples in turn so that machine noise falls on all of them alike. Returns each
/// one's median GB/s.
pub(crate) fn measure_all(
    bytes: usize,
    reps: usize,
    sample: Duration,
    runners: &mut [Runner<'_>],
) -> Vec<f64> {
    let iters: Vec<usize> = runners
        .iter_mut()
        .map(|f| {
            f();
            let t = Instant::now();
            f();
            let once = t.elapsed().max(Duration::from_nanos(100));
            ((sample.as_secs_f64() / once.as_secs_f64()) as usize).clamp(1, 1_000_000)
        })
        .collect();
    let mut rates = vec![Vec::with_capacity(reps); runners.len()];
    for _ in 0..reps {
        for (i, f) in runners.iter_mut().enumerate() {
            let t = Instant::now();
            for _ in 0..iters[i] {
                f();
            }
            rates[i].push((bytes * iters[i]) as f64 / t.elapsed().as_secs_f64() / 1e9);
        }
    }
    rates
        .into_iter()
        .map(|mut r| {
            r.sort_by(|a, b| a.total_cmp(b));
            r[r.len() / 2]
        })
        .collect()
}

/// One runner's median GB/s.
fn measure(bytes: usize, reps: usize, sample: Duration, f: impl FnMut()) -> f64 {
    let mut rs: [Runner<'_>; 1] = [Box::new(f)];
    measure_all(bytes, reps, sample, &mut rs)[0]
}

/// Splits `[0, len)` of a job over `blocks` blocks into `threads` 64-byte-aligned
/// ranges and runs `f` on each on as many threads (the first on this thread). Jobs too
/// small to gain from threads run on one thread: the same rule as `ec-codec`'s parallel
/// path (at least 64 KiB per thread and 4 MiB touched), so every library is split alike.
fn split_job<F: Fn(usize, usize) + Sync>(len: usize, blocks: usize, threads: usize, f: F) {
    let per_thread = (len / threads.max(1)).next_multiple_of(64);
    if threads <= 1 || per_thread < (64 << 10) || (blocks > 0 && len * blocks < (4 << 20)) {
        f(0, len);
        return;
    }
    let per = (len / threads).next_multiple_of(64);
    // On the helper threads ec-codec's own parallel path uses, so that every library
    // pays the same hand-over.
    ec_codec::parallel(threads, len.div_ceil(per), &|i| {
        let off = i * per;
        f(off, per.min(len - off));
    });
}

struct Stripe {
    data: Vec<Vec<u8>>,
    parity: Vec<Vec<u8>>,
}

fn stripe(sh: Shape) -> Stripe {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let data: Vec<Vec<u8>> = (0..sh.m)
        .map(|_| {
            let mut v = vec![0u8; sh.len];
            rng.fill(&mut v);
            v
        })
        .collect();
    let parity = vec![vec![0u8; sh.len]; sh.k];
    Stripe { data, parity }
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Encode,
    Recover,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Encode => "encode",
            Op::Recover => "recover",
        }
    }
}

struct Ptrs(Vec<*mut u8>);
// SAFETY: used only by scoped benchmark threads on disjoint ranges of the outputs.
unsafe impl Sync for Ptrs {}
// SAFETY: as above.
unsafe impl Send for Ptrs {}

impl Ptrs {
    fn get(&self) -> &[*mut u8] {
        &self.0
    }
}

// ISA-L's own AVX2 encoder (the one its dispatcher picks on a CPU with AVX2 and no
// AVX-512), in the same static library as `ec_encode_data`.
unsafe extern "C" {
    fn ec_encode_data_avx2(
        len: i32,
        k: i32,
        rows: i32,
        g_tbls: *mut u8,
        data: *mut *mut u8,
        coding: *mut *mut u8,
    );
}

/// Whether ec-codec runs its AVX2 kernel (`DOCA_EC_ISA=avx2`, or a CPU with AVX2 and no
/// AVX-512): ISA-L is then held to its AVX2 functions too, like for like.
fn isal_avx2_only() -> bool {
    ec_codec::dispatch::selected().name() == "avx2"
}

/// ISA-L: encode tables (or decode tables for the first K data blocks lost).
fn isal_run<'a>(sh: Shape, op: Op, st: &'a mut Stripe, threads: usize) -> Runner<'a> {
    let (m, k, len) = (sh.m, sh.k, sh.len);
    let mut a = vec![0u8; (m + k) * m];
    let mut g = vec![0u8; 32 * m * k];
    // SAFETY: sizes as ISA-L documents.
    unsafe { isal::gf_gen_cauchy1_matrix(a.as_mut_ptr(), (m + k) as i32, m as i32) };
    let (ins, outs): (Ptrs, Ptrs) = match op {
        Op::Encode => {
            // SAFETY: a holds the (m+k) x m matrix; g has 32*m*k bytes.
            unsafe {
                isal::ec_init_tables(m as i32, k as i32, a[m * m..].as_mut_ptr(), g.as_mut_ptr())
            };
            (
                Ptrs(st.data.iter_mut().map(|b| b.as_mut_ptr()).collect()),
                Ptrs(st.parity.iter_mut().map(|b| b.as_mut_ptr()).collect()),
            )
        }
        Op::Recover => {
            // Lost: data 0..k. Survivors: data k..m then parity 0..k.
            let survivors: Vec<usize> = (k..m + k).collect();
            let mut b = vec![0u8; m * m];
            for (r, &s) in survivors.iter().enumerate() {
                b[r * m..(r + 1) * m].copy_from_slice(&a[s * m..(s + 1) * m]);
            }
            let mut inv = vec![0u8; m * m];
            // SAFETY: m x m matrices.
            let singular =
                unsafe { isal::gf_invert_matrix(b.as_mut_ptr(), inv.as_mut_ptr(), m as i32) };
            assert_eq!(singular, 0);
            let mut d = vec![0u8; k * m];
            d.copy_from_slice(&inv[..k * m]);
            // SAFETY: k x m decode matrix.
            unsafe { isal::ec_init_tables(m as i32, k as i32, d.as_mut_ptr(), g.as_mut_ptr()) };
            let mut ins: Vec<*mut u8> = st.data[k..].iter_mut().map(|b| b.as_mut_ptr()).collect();
            ins.extend(st.parity.iter_mut().map(|b| b.as_mut_ptr()));
            (
                Ptrs(ins),
                Ptrs(st.data[..k].iter_mut().map(|b| b.as_mut_ptr()).collect()),
            )
        }
    };
    let tables = Ptrs(vec![g.as_mut_ptr()]);
    let keep = (a, g);
    let avx2 = isal_avx2_only();
    let encode = move |n: usize, i: *mut *mut u8, o: *mut *mut u8| {
        // SAFETY: tables from ec_init_tables; m inputs and k outputs of n bytes; the AVX2
        // function only where the CPU has AVX2 (ours was chosen for it).
        unsafe {
            if avx2 {
                ec_encode_data_avx2(n as i32, m as i32, k as i32, tables.get()[0], i, o)
            } else {
                isal::ec_encode_data(n as i32, m as i32, k as i32, tables.get()[0], i, o)
            }
        };
    };
    if threads <= 1 {
        // One call on the whole blocks, with the pointer arrays built once, as a user's
        // loop would make it: the peer pays only for its own call.
        let (mut ins, mut outs) = (ins, outs);
        return Box::new(move || {
            let _ = &keep;
            encode(len, ins.0.as_mut_ptr(), outs.0.as_mut_ptr());
        });
    }
    Box::new(move || {
        let _ = &keep;
        split_job(len, m + k, threads, |off, n| {
            // SAFETY: each pointer addresses `len` bytes; ranges are disjoint per thread.
            let mut i: Vec<*mut u8> = ins.get().iter().map(|p| unsafe { p.add(off) }).collect();
            // SAFETY: as above.
            let mut o: Vec<*mut u8> = outs.get().iter().map(|p| unsafe { p.add(off) }).collect();
            encode(n, i.as_mut_ptr(), o.as_mut_ptr());
        })
    })
}

fn ours_run<'a>(sh: Shape, op: Op, st: &'a mut Stripe, threads: usize) -> Runner<'a> {
    let (m, k, _len) = (sh.m, sh.k, sh.len);
    let mat = CodingMatrix::cauchy(m, k).expect("shape within limits");
    match op {
        Op::Encode => {
            let enc = Encoder::new(&mat).expect("encoder");
            let Stripe { data, parity } = st;
            let ins: Vec<&[u8]> = data.iter().map(|b| &b[..]).collect();
            let mut outs: Vec<&mut [u8]> = parity.iter_mut().map(|b| &mut b[..]).collect();
            Box::new(move || enc.encode_par(&ins, &mut outs, threads).expect("encode"))
        }
        Op::Recover => {
            let enc = Encoder::new(&mat).expect("encoder");
            {
                let Stripe { data, parity } = &mut *st;
                let ins: Vec<&[u8]> = data.iter().map(|b| &b[..]).collect();
                let mut outs: Vec<&mut [u8]> = parity.iter_mut().map(|b| &mut b[..]).collect();
                enc.encode(&ins, &mut outs).expect("encode");
            }
            let missing: Vec<usize> = (0..k).collect();
            let dec = Decoder::new(&mat, &missing).expect("decoder");
            let (lost, kept) = st.data.split_at_mut(k);
            let mut ins: Vec<&[u8]> = kept.iter().map(|b| &b[..]).collect();
            ins.extend(st.parity.iter().map(|b| &b[..]));
            let mut outs: Vec<&mut [u8]> = lost.iter_mut().map(|b| &mut b[..]).collect();
            Box::new(move || dec.recover_par(&ins, &mut outs, threads).expect("recover"))
        }
    }
}

fn rss_run<'a>(sh: Shape, op: Op, st: &'a mut Stripe, threads: usize) -> Option<Runner<'a>> {
    use reed_solomon_simd::{ReedSolomonDecoder, ReedSolomonEncoder};
    let (m, k, len) = (sh.m, sh.k, sh.len);
    let data = &st.data;
    match op {
        Op::Encode => Some(Box::new(move || {
            split_job(len, m + k, threads, |off, n| {
                let mut enc = ReedSolomonEncoder::new(m, k, n).expect("rss encoder");
                for d in data {
                    enc.add_original_shard(&d[off..off + n]).expect("rss shard");
                }
                let r = enc.encode().expect("rss encode");
                std::hint::black_box(r.recovery(0));
            })
        })),
        Op::Recover => {
            let recovery: Vec<Vec<u8>> = {
                let mut enc = ReedSolomonEncoder::new(m, k, len).ok()?;
                for d in data {
                    enc.add_original_shard(d).ok()?;
                }
                enc.encode()
                    .ok()?
                    .recovery_iter()
                    .map(|r| r.to_vec())
                    .collect()
            };
            Some(Box::new(move || {
                split_job(len, m + k, threads, |off, n| {
                    let mut dec = ReedSolomonDecoder::new(m, k, n).expect("rss decoder");
                    for (i, d) in data.iter().enumerate().skip(k) {
                        dec.add_original_shard(i, &d[off..off + n])
                            .expect("rss shard");
                    }
                    for (i, r) in recovery.iter().enumerate() {
                        dec.add_recovery_shard(i, &r[off..off + n])
                            .expect("rss shard");
                    }
                    let r = dec.decode().expect("rss decode");
                    std::hint::black_box(r.restored_original(0));
                })
            }))
        }
    }
}

fn rse_run<'a>(sh: Shape, op: Op, st: &'a mut Stripe, threads: usize) -> Option<Runner<'a>> {
    use reed_solomon_erasure::galois_8::ReedSolomon;
    let (m, k, len) = (sh.m, sh.k, sh.len);
    if m + k > 256 {
        return None;
    }
    let rs = ReedSolomon::new(m, k).ok()?;
    let outs = Ptrs(st.parity.iter_mut().map(|b| b.as_mut_ptr()).collect());
    let data = &st.data;
    match op {
        Op::Encode => Some(Box::new(move || {
            split_job(len, m + k, threads, |off, n| {
                let ins: Vec<&[u8]> = data.iter().map(|d| &d[off..off + n]).collect();
                // SAFETY: each parity block has `len` bytes; threads write disjoint ranges.
                let mut o: Vec<&mut [u8]> = outs
                    .get()
                    .iter()
                    .map(|p| unsafe { std::slice::from_raw_parts_mut(p.add(off), n) })
                    .collect();
                rs.encode_sep(&ins, &mut o).expect("rse encode");
            })
        })),
        Op::Recover => {
            let mut shards: Vec<Vec<u8>> = data.clone();
            shards.extend(vec![vec![0u8; len]; k]);
            rs.encode(&mut shards).ok()?;
            let sp = Ptrs(shards.iter_mut().map(|b| b.as_mut_ptr()).collect());
            Some(Box::new(move || {
                // The shards live as long as the runner (the pointers address them).
                let _ = &shards;
                split_job(len, m + k, threads, |off, n| {
                    let mut v: Vec<(&mut [u8], bool)> = sp
                        .get()
                        .iter()
                        .enumerate()
                        .map(|(i, p)| {
                            // SAFETY: each shard has `len` bytes; threads use disjoint ranges.
                            let s = unsafe { std::slice::from_raw_parts_mut(p.add(off), n) };
                            (s, i >= k)
                        })
                        .collect();
                    rs.reconstruct_data(&mut v).expect("rse reconstruct");
                })
            }))
        }
    }
}

/// Copies of `bytes` bytes on one thread and split over two (GB/s copied): how far this
/// machine lets a job of that size scale.
fn copy_scaling(bytes: usize, reps: usize, sample: Duration) -> (f64, f64) {
    // Mapped, not allocated: freeing large allocations moves glibc's mmap threshold,
    // which would change where the stripes' blocks land, and their speed with it.
    let mut src = memmap2::MmapMut::map_anon(bytes).expect("anonymous memory");
    src.fill(1);
    let mut dst = memmap2::MmapMut::map_anon(bytes).expect("anonymous memory");
    let one = measure(bytes, reps, sample, || {
        dst.copy_from_slice(&src);
        std::hint::black_box(&dst);
    });
    let half = (bytes / 2).next_multiple_of(64);
    let out = SyncPtr(dst.as_mut_ptr());
    let two = measure(bytes, reps, sample, || {
        ec_codec::parallel(2, 2, &|i| {
            let (off, n) = if i == 0 {
                (0, half)
            } else {
                (half, bytes - half)
            };
            let o = &out;
            // SAFETY: the two pieces write disjoint halves of `dst`, alive for the call.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().add(off), o.0.add(off), n) };
        });
        std::hint::black_box(&dst);
    });
    (one, two)
}

/// A destination shared by the pieces of one parallel copy.
struct SyncPtr(*mut u8);
// SAFETY: the pieces write disjoint ranges through it during one call.
unsafe impl Sync for SyncPtr {}

/// Read and copy bandwidth of this machine, measured now (GB/s): explains the ceiling of
/// jobs larger than the caches.
fn memory_bandwidth(reps: usize, sample: Duration) -> (f64, f64) {
    let n = 256 << 20;
    let src = vec![1u8; n];
    let mut dst = vec![0u8; n];
    let read = measure(n, reps, sample, || {
        let mut acc = 0u64;
        for c in src.chunks_exact(64) {
            let w: &[u8; 64] = c.try_into().expect("64-byte chunk");
            acc ^= u64::from_le_bytes(w[..8].try_into().expect("8 bytes"))
                ^ u64::from_le_bytes(w[56..].try_into().expect("8 bytes"));
        }
        std::hint::black_box(acc);
    });
    let copy = measure(n, reps, sample, || {
        dst.copy_from_slice(&src);
        std::hint::black_box(&dst);
    });
    (read, copy)
}

/// The traffic floor of a shape: one pass that reads every source block once and writes
/// every output once (each output the XOR of the sources, no products), as an encode or
/// a recover must at the least. Where the blocks come from memory rather than cache, no
/// codec beats it. It runs on the CPU's widest registers (AVX-512, else AVX2), storing
/// with non-temporal stores when `nt` (ordinary ones otherwise); the faster of the two is
/// the floor.
fn traffic_run(st: &mut Stripe, nt: bool) -> Runner<'_> {
    let ins: Vec<*const u8> = st.data.iter().map(|b| b.as_ptr()).collect();
    let outs = Ptrs(st.parity.iter_mut().map(|b| b.as_mut_ptr()).collect());
    let len = st.data[0].len();
    Box::new(move || {
        // SAFETY: every source is readable and every output writable over `len` bytes;
        // the stripe's blocks are distinct allocations, so no output overlaps anything.
        unsafe { xor_pass(&ins, outs.get(), len, nt) };
        std::hint::black_box(&outs.0);
    })
}

/// Each output set to the XOR of the sources over `[0, len)`: bytes before the outputs'
/// first 64-byte boundary and after the last one byte by byte, the rest in 64-byte
/// lines on the widest registers this CPU has.
///
/// # Safety
/// Sources readable and outputs writable over `len` bytes; no output overlaps a source
/// or another output.
unsafe fn xor_pass(ins: &[*const u8], outs: &[*mut u8], len: usize, nt: bool) {
    let bytes = |from: usize, to: usize| {
        for i in from..to {
            // SAFETY: i < len (the caller's contract).
            let x = ins.iter().fold(0u8, |a, s| a ^ unsafe { *s.add(i) });
            for o in outs {
                // SAFETY: as above.
                unsafe { *o.add(i) = x };
            }
        }
    };
    let head = ((64 - outs[0] as usize % 64) % 64).min(len);
    let aligned = outs.iter().all(|o| (*o as usize + head).is_multiple_of(64));
    let (head, bulk) = if aligned {
        (head, (len - head) / 64 * 64)
    } else {
        (0, len / 64 * 64)
    };
    bytes(0, head);
    #[cfg(target_arch = "x86_64")]
    {
        let nt = nt && aligned;
        let line = |f: unsafe fn(&[*const u8], &[*mut u8], usize, usize, bool)| {
            // SAFETY: [head, head + bulk) lies inside every block; the CPU has the
            // features (checked by the caller of `line`).
            unsafe { f(ins, outs, head, bulk, nt) }
        };
        if std::arch::is_x86_feature_detected!("avx512f") {
            line(xor_lines_512);
        } else if std::arch::is_x86_feature_detected!("avx2") {
            line(xor_lines_256);
        } else {
            bytes(head, head + bulk);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = nt;
        bytes(head, head + bulk);
    }
    bytes(head + bulk, len);
    if nt {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE is part of x86-64.
        unsafe {
            std::arch::x86_64::_mm_sfence()
        };
    }
}

/// [`xor_pass`]'s lines on 512-bit registers, over `[off, off + len)` (`len` a multiple
/// of 64; outputs 64-byte aligned at `off` when `nt`).
///
/// # Safety
/// AVX-512F present; as [`xor_pass`] over the range.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn xor_lines_512(ins: &[*const u8], outs: &[*mut u8], off: usize, len: usize, nt: bool) {
    use std::arch::x86_64::*;
    let mut at = off;
    while at < off + len {
        // SAFETY: `at + 64 <= off + len`, inside every block (contract).
        unsafe {
            let mut x = _mm512_loadu_si512(ins[0].add(at).cast());
            for s in &ins[1..] {
                x = _mm512_xor_si512(x, _mm512_loadu_si512(s.add(at).cast()));
            }
            for o in outs {
                if nt {
                    _mm512_stream_si512(o.add(at).cast(), x);
                } else {
                    _mm512_storeu_si512(o.add(at).cast(), x);
                }
            }
        }
        at += 64;
    }
}

/// [`xor_lines_512`] on 256-bit registers.
///
/// # Safety
/// AVX2 present; as [`xor_pass`] over the range.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn xor_lines_256(ins: &[*const u8], outs: &[*mut u8], off: usize, len: usize, nt: bool) {
    use std::arch::x86_64::*;
    let mut at = off;
    while at < off + len {
        // SAFETY: `at + 64 <= off + len`, inside every block (contract).
        unsafe {
            let ld = |p: *const u8| {
                (
                    _mm256_loadu_si256(p.add(at).cast()),
                    _mm256_loadu_si256(p.add(at + 32).cast()),
                )
            };
            let (mut a, mut b) = ld(ins[0]);
            for s in &ins[1..] {
                let (c, d) = ld(*s);
                a = _mm256_xor_si256(a, c);
                b = _mm256_xor_si256(b, d);
            }
            for o in outs {
                let p = o.add(at);
                if nt {
                    _mm256_stream_si256(p.cast(), a);
                    _mm256_stream_si256(p.add(32).cast(), b);
                } else {
                    _mm256_storeu_si256(p.cast(), a);
                    _mm256_storeu_si256(p.add(32).cast(), b);
                }
            }
        }
        at += 64;
    }
}

/// Cycles per 64 bytes of one product on this CPU with the kernel ec-codec selected, and
/// the clock (GHz): the compute floor's terms. `None` where the benchmark cannot time
/// that kernel's instructions (no AVX2, or a portable kernel).
fn product_cost() -> Option<(f64, f64)> {
    #[cfg(target_arch = "x86_64")]
    {
        use ec_codec::Isa;
        let f = crate::isal::product_floor()?;
        let c = match ec_codec::dispatch::selected() {
            Isa::Gfni512 => f.gfni512?,
            Isa::Gfni256 => f.gfni256?,
            // Nibble tables on 512-bit registers: the 256-bit step's instructions on
            // twice the bytes.
            Isa::Avx512 => f.wide * 2.0,
            Isa::Avx2 => f.wide * 4.0,
            Isa::Scalar | Isa::Portable => return None,
        };
        Some((c, f.ghz))
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// The floors table: for each shape of 1 MiB blocks or more, the traffic floor (measured
/// beside the libraries), the compute floor (the kernel's products at this CPU's cost for
/// one, with nothing else), the lower of the two, and ours against it.
fn print_floors(floors: &[(Shape, Op, f64, f64)]) {
    let cost = product_cost();
    println!(
        "\nFloors, one thread (GB/s of data in). Traffic: every source block read once and every output written once, each output the XOR of the sources (no products), on the widest registers, the faster of ordinary and non-temporal stores. Compute: K products per 64 bytes of data in at this CPU's cost for one ({}). The floor is the lower: what bounds the shape.\n",
        match cost {
            Some((c, ghz)) => format!(
                "{c:.2} cycles per 64 bytes for the {} kernel, {ghz:.2} GHz",
                ec_codec::dispatch::selected().name()
            ),
            None => "not timed for this kernel".to_string(),
        }
    );
    println!(
        "| shape | block | op | traffic | compute | bound by | ours | ours / floor | target |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for &(sh, op, traffic, ours) in floors {
        let compute = cost.map(|(c, ghz)| ghz * 64.0 / (sh.k as f64 * c));
        let (floor, bound) = match compute {
            Some(c) if c < traffic => (c, "compute"),
            _ => (traffic, "traffic"),
        };
        let r = ours / floor;
        let want = match (sh.m, sh.k, sh.len) {
            (10, 4, l) if l == 16 << 20 => Some(0.95),
            (128, 32, l) if l == 1 << 20 => Some(0.9),
            _ => None,
        };
        println!(
            "| {}+{} | {} | {} | {traffic:.2} | {} | {bound} | {ours:.2} | {r:.2}x | {} |",
            sh.m,
            sh.k,
            size_str(sh.len),
            op.name(),
            compute.map_or("-".to_string(), |c| format!("{c:.2}")),
            want.map_or("-".to_string(), |w| format!(
                ">= {w} {}",
                if r >= w { "met" } else { "not met" }
            ))
        );
    }
}

pub fn run(a: &EcArgs) {
    let (reps, sample) = if a.quick {
        (3, Duration::from_millis(5))
    } else {
        (a.reps.max(1), Duration::from_millis(a.sample_ms))
    };
    let shapes: Vec<Shape> = if !a.shapes.is_empty() {
        a.shapes
            .iter()
            .map(|s| {
                parse_shape(s).unwrap_or_else(|| {
                    eprintln!(
                        "doca-bench: '{s}' is not a shape (expected M+K@SIZE, e.g. 10+4@64K)"
                    );
                    std::process::exit(2)
                })
            })
            .collect()
    } else if a.quick {
        vec![
            Shape {
                m: 10,
                k: 4,
                len: 64 << 10,
            },
            Shape {
                m: 128,
                k: 32,
                len: 4 << 10,
            },
        ]
    } else {
        DEFAULT_SHAPES
            .iter()
            .map(|&(m, k, len)| Shape { m, k, len })
            .collect()
    };
    let skip = |name: &str| a.skip.iter().any(|s| s == name);
    println!(
        "ec-codec kernel: {} | peers: ISA-L 2.32 (from source{}), reed-solomon-simd 3, reed-solomon-erasure 6 (simd-accel)",
        ec_codec::dispatch::selected().name(),
        if isal_avx2_only() {
            "; its AVX2 functions, as ours"
        } else {
            ""
        }
    );
    println!("GB/s of data in (M x block), median of {reps} samples; ratio = ours / peer\n");
    println!(
        "| shape | block | op | thr | ours | ISA-L | ours/ISA-L | rs-simd | ours/rs-simd | rs-erasure | ours/rs-erasure |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let fmt = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
    let ratio = |o: f64, p: Option<f64>| p.map_or("-".to_string(), |x| format!("{:.2}x", o / x));
    // (shape, op, traffic floor, ours) of the shapes whose blocks are 1 MiB or more.
    let mut floors: Vec<(Shape, Op, f64, f64)> = Vec::new();
    // (shape, op, threads, ours) of every row; the machine's copy scaling per shape.
    let mut rows: Vec<(Shape, Op, usize, f64)> = Vec::new();
    let mut copies: Vec<(Shape, f64, f64)> = Vec::new();
    let scaling = a.threads.contains(&1) && a.threads.contains(&2);
    for sh in shapes {
        if ec_codec::matrix::check_counts_pub(sh.m, sh.k).is_err()
            || ec_codec::check_block_len(sh.len).is_err()
        {
            eprintln!(
                "doca-bench: skipping {}+{}@{}: outside the codec's limits",
                sh.m, sh.k, sh.len
            );
            continue;
        }
        if scaling && sh.m * sh.len >= 4 << 20 {
            let (one, two) = copy_scaling(sh.m * sh.len, reps, sample);
            copies.push((sh, one, two));
        }
        // One stripe per library: runners write their own outputs and are measured in turn.
        // The traffic floor (ordinary and non-temporal stores, a stripe each) is measured
        // among the libraries, so that the machine's other load weighs on all alike.
        let with_floor = sh.len >= 1 << 20;
        let mut stripes: Vec<Stripe> = (0..if with_floor { 6 } else { 4 })
            .map(|_| stripe(sh))
            .collect();
        for op in [Op::Encode, Op::Recover] {
            for &t in &a.threads {
                let (ours_st, floor_st) = stripes.split_at_mut(4);
                let [s0, s1, s2, s3] = ours_st else {
                    unreachable!("four stripes")
                };
                let mut runners: Vec<Runner<'_>> = vec![ours_run(sh, op, s0, t)];
                let mut slots = [None, None, None];
                if !skip("isal") {
                    slots[0] = Some(runners.len());
                    runners.push(isal_run(sh, op, s1, t));
                }
                if !skip("rss")
                    && let Some(r) = rss_run(sh, op, s2, t)
                {
                    slots[1] = Some(runners.len());
                    runners.push(r);
                }
                if !skip("rse")
                    && let Some(r) = rse_run(sh, op, s3, t)
                {
                    slots[2] = Some(runners.len());
                    runners.push(r);
                }
                let floor_at = runners.len();
                let floor_here = with_floor && t == 1;
                if floor_here {
                    let [f0, f1] = floor_st else {
                        unreachable!("two floor stripes")
                    };
                    runners.push(traffic_run(f0, false));
                    runners.push(traffic_run(f1, true));
                }
                let rates = measure_all(sh.m * sh.len, reps, sample, &mut runners);
                drop(runners);
                let ours = rates[0];
                rows.push((sh, op, t, ours));
                let [isal, rss, rse] = slots.map(|i| i.map(|i| rates[i]));
                if floor_here {
                    let f = rates[floor_at].max(rates[floor_at + 1]);
                    floors.push((sh, op, f, ours));
                }
                println!(
                    "| {}+{} | {} | {} | {} | {:.2} | {} | {} | {} | {} | {} | {} |",
                    sh.m,
                    sh.k,
                    size_str(sh.len),
                    op.name(),
                    t,
                    ours,
                    fmt(isal),
                    ratio(ours, isal),
                    fmt(rss),
                    ratio(ours, rss),
                    fmt(rse),
                    ratio(ours, rse)
                );
            }
        }
    }
    if !floors.is_empty() {
        print_floors(&floors);
    }
    if !copies.is_empty() {
        println!(
            "\nTwo threads against one (ours, GB/s of data in; the machine's copy of the same bytes split the same way, in the same run; target >= 1.8x)\n"
        );
        println!("| shape | block | op | 1 thread | 2 threads | ours 2/1 | copy 2/1 | target |");
        println!("|---|---|---|---|---|---|---|---|");
        for &(sh, one_copy, two_copy) in &copies {
            for op in [Op::Encode, Op::Recover] {
                let at = |t: usize| {
                    rows.iter()
                        .find(|r| r.0 == sh && r.1 == op && r.2 == t)
                        .map(|r| r.3)
                };
                let (Some(one), Some(two)) = (at(1), at(2)) else {
                    continue;
                };
                let r = two / one;
                println!(
                    "| {}+{} | {} | {} | {one:.2} | {two:.2} | {r:.2}x | {:.2}x | {} |",
                    sh.m,
                    sh.k,
                    size_str(sh.len),
                    op.name(),
                    two_copy / one_copy,
                    if r >= 1.8 { "met" } else { "not met" }
                );
            }
        }
    }
    let (read, copy) = memory_bandwidth(reps.min(5), sample);
    println!(
        "\nmemory bandwidth, one thread, 256 MiB: read {read:.1} GB/s, copy {copy:.1} GB/s (bytes copied per second)"
    );
}
