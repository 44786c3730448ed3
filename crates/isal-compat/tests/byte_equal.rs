//! Every exported function against ISA-L 2.32 built from source, loaded side by side:
//! the same random inputs (shapes up to 255 blocks, every length class including tails
//! that are not a multiple of 16, 32 or 64, buffers at odd addresses) must give the
//! same bytes and the same return values.
#![cfg(target_arch = "x86_64")]

mod common;

use common::{Lib, Rng, ours, reference};
use std::ffi::{c_int, c_void};

type Encode = unsafe extern "C" fn(c_int, c_int, c_int, *mut u8, *mut *mut u8, *mut *mut u8);
type Update = unsafe extern "C" fn(c_int, c_int, c_int, c_int, *mut u8, *mut u8, *mut *mut u8);
type DotProd = unsafe extern "C" fn(c_int, c_int, *mut u8, *mut *mut u8, *mut u8);
type NDotProd = unsafe extern "C" fn(c_int, c_int, *mut u8, *mut *mut u8, *mut *mut u8);
type Mad = unsafe extern "C" fn(c_int, c_int, c_int, *mut u8, *mut u8, *mut u8);
type NMad = unsafe extern "C" fn(c_int, c_int, c_int, *mut u8, *mut u8, *mut *mut u8);
type VectMul = unsafe extern "C" fn(c_int, *mut u8, *mut c_void, *mut c_void) -> c_int;
type InitTables = unsafe extern "C" fn(c_int, c_int, *mut u8, *mut u8);
type MulInit = unsafe extern "C" fn(u8, *mut u8);
type GenMatrix = unsafe extern "C" fn(*mut u8, c_int, c_int);
type Invert = unsafe extern "C" fn(*mut u8, *mut u8, c_int) -> c_int;
type Raid = unsafe extern "C" fn(c_int, c_int, *mut *mut c_void) -> c_int;

/// Lengths that cover every tail class of the 16-, 32- and 64-byte kernels.
const LENGTHS: &[usize] = &[
    1,
    2,
    15,
    16,
    17,
    31,
    32,
    33,
    47,
    48,
    63,
    64,
    65,
    95,
    96,
    127,
    128,
    129,
    200,
    255,
    256,
    1000,
    4095,
    4096,
    4097,
    65_536 + 17,
];

/// 64 bytes at a 64-byte boundary: the unit buffers are made of.
#[derive(Clone, Copy, PartialEq, Debug)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// One buffer at a 64-byte boundary, `len` bytes long.
#[derive(Clone, PartialEq, Debug)]
struct Block {
    lines: Vec<Line>,
    len: usize,
}

impl Block {
    fn bytes(&self) -> &[u8] {
        // SAFETY: the lines are len.div_ceil(64) * 64 >= len contiguous initialised bytes.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast(), self.len) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast(), self.len) }
    }
}

/// Buffers for one call: `bufs[i]` is used from byte `off` on, so the addresses the
/// functions see are odd unless a test asks for aligned ones.
#[derive(Clone, PartialEq, Debug)]
struct Bufs {
    bufs: Vec<Block>,
    off: usize,
}

impl Bufs {
    /// Random buffers of `sizes` bytes at a random offset (0 to 63).
    fn new(rng: &mut Rng, sizes: &[usize]) -> Bufs {
        let off = rng.below(64);
        Bufs::at(rng, sizes, off)
    }

    /// Random buffers of `sizes` bytes at offset 0 or 32 from a 64-byte boundary.
    fn aligned(rng: &mut Rng, sizes: &[usize]) -> Bufs {
        let off = 32 * rng.below(2);
        Bufs::at(rng, sizes, off)
    }

    /// Random buffers of `sizes` bytes at offset `off` from a 64-byte boundary.
    fn at(rng: &mut Rng, sizes: &[usize], off: usize) -> Bufs {
        let bufs = sizes
            .iter()
            .map(|&n| {
                let mut b = Block {
                    lines: vec![Line([0; 64]); (n + off).div_ceil(64)],
                    len: n + off,
                };
                b.bytes_mut().copy_from_slice(&rng.bytes(n + off));
                b
            })
            .collect();
        Bufs { bufs, off }
    }

    /// The bytes a function sees of buffer `i`.
    fn data(&mut self, i: usize) -> &mut [u8] {
        let off = self.off;
        &mut self.bufs[i].bytes_mut()[off..]
    }

    /// Pointers to buffers `range`.
    fn ptrs(&mut self, range: std::ops::Range<usize>) -> Vec<*mut u8> {
        range.map(|i| self.ptr(i)).collect()
    }

    fn ptr(&mut self, i: usize) -> *mut u8 {
        self.data(i).as_mut_ptr()
    }
}

/// Runs `f` on copies of `bufs` with each library; both results and all bytes must agree.
/// Calls `lib`'s `ec_encode_data`-shaped function `name`: blocks `0..k` of `b` are the
/// data, `k..k + rows` the coding blocks (`len` bytes each), block `k + rows` the tables.
fn encode_with(lib: &Lib, name: &str, b: &mut Bufs, len: usize, k: usize, rows: usize) {
    let f: Encode = lib.get(name);
    let mut data = b.ptrs(0..k);
    let mut coding = b.ptrs(k..k + rows);
    let t = b.ptr(k + rows);
    // SAFETY: k data and rows coding blocks of len bytes; 32 * k * rows bytes of tables.
    unsafe {
        f(
            len as c_int,
            k as c_int,
            rows as c_int,
            t,
            data.as_mut_ptr(),
            coding.as_mut_ptr(),
        )
    };
}

fn same(what: &str, bufs: &Bufs, f: impl Fn(&Lib, &mut Bufs) -> i64) {
    if std::env::var_os("ISAL_TRACE").is_some() {
        eprintln!("{what}");
    }
    let (mut a, mut b) = (bufs.clone(), bufs.clone());
    let ra = f(ours(), &mut a);
    let rb = f(reference(), &mut b);
    assert_eq!(ra, rb, "{what}: return values differ");
    for (i, (x, y)) in a.bufs.iter().zip(&b.bufs).enumerate() {
        let (x, y) = (x.bytes(), y.bytes());
        if x != y {
            let at = x.iter().zip(y).position(|(p, q)| p != q).unwrap();
            panic!(
                "{what}: buffer {i} differs first at byte {} (ours {:#04x}, ISA-L {:#04x})",
                at as isize - a.off as isize,
                x[at],
                y[at]
            );
        }
    }
}

/// A random encoding shape with k + rows <= 255.
fn shape(rng: &mut Rng) -> (usize, usize) {
    let kmax = if rng.below(4) == 0 { 254 } else { 16 };
    let k = 1 + rng.below(kmax);
    let rmax = if rng.below(4) == 0 { 64 } else { 8 };
    let rows = 1 + rng.below((255 - k).min(rmax));
    (k, rows)
}

/// Coefficients with zeros and ones among them, and often a row of ones, expanded by
/// ISA-L's `ec_init_tables`.
fn tables(rng: &mut Rng, k: usize, rows: usize) -> Vec<u8> {
    let mut a: Vec<u8> = (0..k * rows)
        .map(|_| match rng.below(8) {
            0 => 0,
            1 => 1,
            _ => rng.next() as u8,
        })
        .collect();
    // Often a row of ones (as a Vandermonde code's first parity row) at a row where the
    // kernels may start an output group.
    if rng.below(3) == 0 {
        let r = rng.below(rows) / 4 * 4;
        a[r * k..(r + 1) * k].fill(1);
    }
    let mut g = vec![0u8; 32 * k * rows];
    let init: InitTables = reference().get("ec_init_tables");
    // SAFETY: k * rows coefficients, 32 * k * rows bytes of tables.
    unsafe { init(k as c_int, rows as c_int, a.as_mut_ptr(), g.as_mut_ptr()) };
    g
}

#[test]
fn scalars_tables_and_versions() {
    let (mul_a, mul_b): (
        unsafe extern "C" fn(u8, u8) -> u8,
        unsafe extern "C" fn(u8, u8) -> u8,
    ) = (ours().get("gf_mul"), reference().get("gf_mul"));
    let (inv_a, inv_b): (
        unsafe extern "C" fn(u8) -> u8,
        unsafe extern "C" fn(u8) -> u8,
    ) = (ours().get("gf_inv"), reference().get("gf_inv"));
    for a in 0..=255u8 {
        // SAFETY: plain scalar functions.
        unsafe {
            assert_eq!(inv_a(a), inv_b(a), "gf_inv({a})");
            for b in 0..=255u8 {
                assert_eq!(mul_a(a, b), mul_b(a, b), "gf_mul({a}, {b})");
            }
        }
    }
    for name in ["gf_vect_mul_init", "gf_vect_mul_init_base"] {
        let (f, g): (MulInit, MulInit) = (ours().get(name), reference().get(name));
        for c in 0..=255u8 {
            let (mut x, mut y) = ([0u8; 33], [0u8; 33]);
            // SAFETY: 32 writable bytes each.
            unsafe { (f(c, x[1..].as_mut_ptr()), g(c, y[1..].as_mut_ptr())) };
            assert_eq!(x, y, "{name}({c})");
        }
    }
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for name in ["ec_init_tables", "ec_init_tables_base"] {
        for _ in 0..50 {
            let (k, rows) = shape(&mut rng);
            let mut bufs = Bufs::new(&mut rng, &[k * rows, 32 * k * rows]);
            bufs.data(1).fill(0);
            same(name, &bufs, |lib, b| {
                let f: InitTables = lib.get(name);
                // SAFETY: sizes as ISA-L documents.
                unsafe { f(k as c_int, rows as c_int, b.ptr(0), b.ptr(1)) };
                0
            });
        }
    }
    let v: unsafe extern "C" fn() -> u32 = ours().get("isal_get_version");
    let w: unsafe extern "C" fn() -> u32 = reference().get("isal_get_version");
    // SAFETY: no arguments.
    unsafe { assert_eq!(v(), w()) };
    let v: unsafe extern "C" fn() -> *const std::ffi::c_char = ours().get("isal_get_version_str");
    let w: unsafe extern "C" fn() -> *const std::ffi::c_char =
        reference().get("isal_get_version_str");
    // SAFETY: both return static NUL-terminated strings.
    unsafe { assert_eq!(std::ffi::CStr::from_ptr(v()), std::ffi::CStr::from_ptr(w())) };
}

#[test]
fn generator_matrices_and_inversion() {
    for name in ["gf_gen_rs_matrix", "gf_gen_cauchy1_matrix"] {
        for m in 1..=255usize {
            for k in [1, 2, m / 3, m / 2, m.saturating_sub(1), m] {
                if k == 0 || k > m {
                    continue;
                }
                let bufs = Bufs::at(&mut Rng(m as u64 * 256 + k as u64), &[m * k], 0);
                same(&format!("{name}({m}, {k})"), &bufs, |lib, b| {
                    let f: GenMatrix = lib.get(name);
                    // SAFETY: m * k writable bytes.
                    unsafe { f(b.ptr(0), m as c_int, k as c_int) };
                    0
                });
            }
        }
    }
    let mut rng = Rng(0x0dd_ba11);
    for case in 0..400 {
        let n = 1 + rng.below(if case % 10 == 0 { 128 } else { 24 });
        let mut bufs = Bufs::new(&mut rng, &[n * n, n * n]);
        // Some singular matrices: a repeated row, or a zero column.
        match case % 7 {
            0 if n > 1 => {
                let row = bufs.data(0)[..n].to_vec();
                bufs.data(0)[n * (n - 1)..].copy_from_slice(&row);
            }
            1 => {
                for r in 0..n {
                    bufs.data(0)[r * n] = 0;
                }
            }
            2 => {
                // A submatrix of a Cauchy encoder, as decoders invert.
                let mut a = vec![0u8; (n + 4) * n];
                let cauchy: GenMatrix = reference().get("gf_gen_cauchy1_matrix");
                // SAFETY: (n + 4) * n bytes.
                unsafe { cauchy(a.as_mut_ptr(), (n + 4) as c_int, n as c_int) };
                bufs.data(0).copy_from_slice(&a[4 * n..]);
            }
            _ => {}
        }
        same(&format!("gf_invert_matrix(n = {n})"), &bufs, |lib, b| {
            let f: Invert = lib.get("gf_invert_matrix");
            // SAFETY: two n x n matrices.
            unsafe { f(b.ptr(0), b.ptr(1), n as c_int) as i64 }
        });
    }
}

#[test]
fn encoding_and_updates() {
    let mut rng = Rng(0xfeed_f00d_1234_5678);
    let encoders = [
        "ec_encode_data",
        "ec_encode_data_base",
        "ec_encode_data_sse",
        "ec_encode_data_avx",
        "ec_encode_data_avx2",
    ];
    let updaters = [
        "ec_encode_data_update",
        "ec_encode_data_update_base",
        "ec_encode_data_update_sse",
        "ec_encode_data_update_avx",
        "ec_encode_data_update_avx2",
    ];
    for (i, &len) in LENGTHS.iter().cycle().take(3 * LENGTHS.len()).enumerate() {
        let (k, rows) = shape(&mut rng);
        // Large shapes at short lengths only, so the base arithmetic stays quick.
        let (k, rows) = if len > 4096 {
            (k.min(16), rows.min(8))
        } else {
            (k, rows)
        };
        let g = tables(&mut rng, k, rows);
        let mut sizes = vec![len; k + rows];
        sizes.push(g.len());
        let mut bufs = Bufs::new(&mut rng, &sizes);
        bufs.data(k + rows).copy_from_slice(&g);
        let name = encoders[i % encoders.len()];
        same(
            &format!("{name}(len {len}, k {k}, rows {rows})"),
            &bufs,
            |lib, b| {
                encode_with(lib, name, b, len, k, rows);
                0
            },
        );
        let name = updaters[i % updaters.len()];
        same(
            &format!("{name}(len {len}, k {k}, rows {rows})"),
            &bufs,
            |lib, b| {
                let f: Update = lib.get(name);
                let mut coding = b.ptrs(k..k + rows);
                let t = b.ptr(k + rows);
                for vec_i in (0..k).step_by(1 + k / 4) {
                    let d = b.ptr(vec_i);
                    // SAFETY: one data block and rows coding blocks of len bytes; the tables.
                    unsafe {
                        f(
                            len as c_int,
                            k as c_int,
                            rows as c_int,
                            vec_i as c_int,
                            t,
                            d,
                            coding.as_mut_ptr(),
                        )
                    };
                }
                0
            },
        );
    }
}

#[test]
fn dot_products_and_multiply_adds() {
    let mut rng = Rng(0xabad_cafe_0000_0001);
    for &len in LENGTHS {
        let vlen = 1 + rng.below(if len > 4096 { 12 } else { 40 });
        for n in 1..=6usize {
            let sfx: &[&str] = if n == 1 {
                &["", "_base", "_sse", "_avx", "_avx2"]
            } else {
                &["_sse", "_avx", "_avx2"]
            };
            let g = tables(&mut rng, vlen, n);
            for s in sfx {
                let mut sizes = vec![len; vlen + n];
                sizes.push(g.len());
                let mut bufs = Bufs::new(&mut rng, &sizes);
                bufs.data(vlen + n).copy_from_slice(&g);
                let dot = if n == 1 {
                    format!("gf_vect_dot_prod{s}")
                } else {
                    format!("gf_{n}vect_dot_prod{s}")
                };
                same(
                    &format!("{dot}(len {len}, vlen {vlen})"),
                    &bufs,
                    |lib, b| {
                        let mut src = b.ptrs(0..vlen);
                        let t = b.ptr(vlen + n);
                        if n == 1 {
                            let f: DotProd = lib.get(&dot);
                            let d = b.ptr(vlen);
                            // SAFETY: vlen sources and one output of len bytes; the tables.
                            unsafe { f(len as c_int, vlen as c_int, t, src.as_mut_ptr(), d) };
                        } else {
                            let f: NDotProd = lib.get(&dot);
                            let mut d = b.ptrs(vlen..vlen + n);
                            // SAFETY: vlen sources and n outputs of len bytes; the tables.
                            unsafe {
                                f(
                                    len as c_int,
                                    vlen as c_int,
                                    t,
                                    src.as_mut_ptr(),
                                    d.as_mut_ptr(),
                                )
                            };
                        }
                        0
                    },
                );
                let mad = if n == 1 {
                    format!("gf_vect_mad{s}")
                } else {
                    format!("gf_{n}vect_mad{s}")
                };
                let vec_i = rng.below(vlen);
                same(
                    &format!("{mad}(len {len}, vec {vlen}, vec_i {vec_i})"),
                    &bufs,
                    |lib, b| {
                        let src = b.ptr(0);
                        let t = b.ptr(vlen + n);
                        if n == 1 {
                            let f: Mad = lib.get(&mad);
                            let d = b.ptr(vlen);
                            // SAFETY: one source and one output of len bytes; the tables.
                            unsafe { f(len as c_int, vlen as c_int, vec_i as c_int, t, src, d) };
                        } else {
                            let f: NMad = lib.get(&mad);
                            let mut d = b.ptrs(vlen..vlen + n);
                            // SAFETY: one source and n outputs of len bytes; the tables.
                            unsafe {
                                f(
                                    len as c_int,
                                    vlen as c_int,
                                    vec_i as c_int,
                                    t,
                                    src,
                                    d.as_mut_ptr(),
                                )
                            };
                        }
                        0
                    },
                );
            }
        }
    }
}

#[test]
fn vector_multiplication() {
    let mut rng = Rng(77);
    for name in [
        "gf_vect_mul",
        "gf_vect_mul_sse",
        "gf_vect_mul_avx",
        "gf_vect_mul_base",
    ] {
        // ISA-L asks for 32-byte-aligned buffers here, and writes 32 bytes at length 0.
        for &len in LENGTHS.iter().chain(&[32 * 1000]) {
            let c = rng.next() as u8;
            let mut bufs = Bufs::aligned(&mut rng, &[32, len, len]);
            bufs.data(0).copy_from_slice(&ec_codec::tables::init(c));
            same(&format!("{name}(len {len}, c {c})"), &bufs, |lib, b| {
                let f: VectMul = lib.get(name);
                let (t, s, d) = (b.ptr(0), b.ptr(1), b.ptr(2));
                // SAFETY: the 32-byte table; source and destination of len bytes.
                let r = unsafe { f(len as c_int, t, s.cast(), d.cast()) };
                // In place, as ISA-L's tests do it.
                // SAFETY: as above, with the destination as the source.
                let q = unsafe { f(len as c_int, t, d.cast(), d.cast()) };
                (r as i64) << 8 | q as i64
            });
        }
    }
}

#[test]
fn raid_parity() {
    let mut rng = Rng(0x5eed);
    let gens: &[(&str, usize)] = &[
        ("xor_gen", 3),
        ("xor_gen_base", 3),
        ("xor_gen_sse", 3),
        ("xor_gen_avx", 3),
        ("pq_gen", 4),
        ("pq_gen_base", 4),
        ("pq_gen_sse", 4),
        ("pq_gen_avx", 4),
        ("pq_gen_avx2", 4),
    ];
    let checks: &[(&str, usize)] = &[
        ("xor_check", 2),
        ("xor_check_base", 2),
        ("xor_check_sse", 2),
        ("pq_check", 4),
        ("pq_check_base", 4),
        ("pq_check_sse", 4),
    ];
    for &len in LENGTHS.iter().chain(&[0, 8, 24, 40]) {
        for vects in [1usize, 2, 3, 4, 5, 9, 33] {
            for &(name, _) in gens {
                // ISA-L asks for 32-byte-aligned buffers here.
                let bufs = Bufs::aligned(&mut rng, &vec![len; vects]);
                same(
                    &format!("{name}(vects {vects}, len {len})"),
                    &bufs,
                    |lib, b| {
                        let f: Raid = lib.get(name);
                        let mut p: Vec<*mut c_void> =
                            b.ptrs(0..vects).into_iter().map(|p| p.cast()).collect();
                        // SAFETY: vects buffers of len bytes.
                        unsafe { f(vects as c_int, len as c_int, p.as_mut_ptr()) as i64 }
                    },
                );
            }
            for &(name, min) in checks {
                // Parity made right, then possibly broken at one byte of P or Q.
                let mut bufs = Bufs::aligned(&mut rng, &vec![len; vects]);
                if vects >= min && len >= 32 && len % 32 == 0 {
                    let make: Raid = reference().get(if name.starts_with("xor") {
                        "xor_gen"
                    } else {
                        "pq_gen"
                    });
                    let mut p: Vec<*mut c_void> =
                        bufs.ptrs(0..vects).into_iter().map(|p| p.cast()).collect();
                    // SAFETY: as above.
                    unsafe { make(vects as c_int, len as c_int, p.as_mut_ptr()) };
                    if rng.below(2) == 0 {
                        let (i, at) = (vects - 1 - rng.below(2), rng.below(len));
                        bufs.data(i)[at] ^= 1 << rng.below(8);
                    }
                }
                same(
                    &format!("{name}(vects {vects}, len {len})"),
                    &bufs,
                    |lib, b| {
                        let f: Raid = lib.get(name);
                        let mut p: Vec<*mut c_void> =
                            b.ptrs(0..vects).into_iter().map(|p| p.cast()).collect();
                        // SAFETY: vects buffers of len bytes.
                        unsafe { f(vects as c_int, len as c_int, p.as_mut_ptr()) as i64 }
                    },
                );
            }
        }
    }
}

#[test]
fn avx512_names_run_on_this_cpu_and_agree() {
    // ISA-L's _avx512 functions need the instructions; ours run on the selected kernel,
    // so they are checked against ISA-L's dispatched function instead.
    let mut rng = Rng(512);
    for &len in LENGTHS.iter().filter(|&&l| l >= 64) {
        let (k, rows) = (1 + rng.below(20), 1 + rng.below(6));
        let g = tables(&mut rng, k, rows);
        let mut sizes = vec![len; k + rows];
        sizes.push(g.len());
        let mut bufs = Bufs::new(&mut rng, &sizes);
        bufs.data(k + rows).copy_from_slice(&g);
        let (a, b) = (bufs.clone(), bufs.clone());
        let run = |lib: &Lib, name: &str, mut b: Bufs| {
            encode_with(lib, name, &mut b, len, k, rows);
            b
        };
        assert_eq!(
            run(ours(), "ec_encode_data_avx512", a),
            run(reference(), "ec_encode_data", b),
            "ec_encode_data_avx512 len {len}"
        );
    }
}
