//! Every exported function against ISA-L 2.32 built from source, loaded side by side:
//! the same random inputs (shapes up to 255 blocks, every length class including tails
//! that are not a multiple of 16, 32 or 64, buffers at odd addresses) must give the
//! same bytes and the same return values.
#![cfg(target_arch = "x86_64")]

mod common;

use common::{Lib, Rng, ours, reference};
use ec_codec::tables::Layout;
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

fn same(what: &str, bufs: &Bufs, f: &impl Fn(&Lib, &mut Bufs) -> i64) {
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

/// Coefficients with zeros and ones among them, and often a row of ones, expanded into
/// tables as ISA-L's `ec_init_tables` writes them on this CPU, or as its nibble-table or
/// GFNI init functions write them, or (one time in five) random bytes: every function
/// must read any tables as ISA-L's does.
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
    let init = match rng.below(5) {
        0 => return rng.bytes(32 * k * rows),
        1 => "ec_init_tables_base",
        2 => "ec_init_tables_gfni",
        _ => "ec_init_tables",
    };
    let mut g = vec![0u8; 32 * k * rows];
    let init: InitTables = reference().get(init);
    // SAFETY: k * rows coefficients, 32 * k * rows bytes of tables.
    unsafe { init(k as c_int, rows as c_int, a.as_mut_ptr(), g.as_mut_ptr()) };
    g
}

/// Whether this CPU can run ISA-L's own code of the function `name` (its suffix names
/// the instructions it needs; dispatched and `_base` names run everywhere).
fn isal_runs(name: &str) -> bool {
    let avx512 = std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vl");
    let gfni = std::is_x86_feature_detected!("gfni");
    let avx2 = std::is_x86_feature_detected!("avx2");
    if name.ends_with("_avx512_gfni") {
        avx512 && gfni
    } else if name.ends_with("_avx2_gfni") {
        avx2 && gfni
    } else if name.ends_with("_avx512") {
        avx512
    } else if name.ends_with("_avx2") {
        avx2
    } else if name.ends_with("_avx") {
        std::is_x86_feature_detected!("avx")
    } else {
        true
    }
}

/// How ISA-L's function `name` reads tables and from which length its SIMD code runs:
/// the model a function is checked against where this CPU cannot run ISA-L's code.
/// `(layout, minimum)`; below the minimum the encoders compute as the base code does
/// and the other functions do nothing and return 1.
fn model_of(name: &str) -> (Layout, usize) {
    let kind = if name.starts_with("ec_encode_data_update") {
        "update"
    } else if name.starts_with("ec_encode_data") {
        "encode"
    } else if name.contains("dot_prod") {
        "dot"
    } else if name.contains("mad") {
        "mad"
    } else {
        "mul"
    };
    if name.ends_with("_avx512_gfni") {
        (Layout::Affine, 0)
    } else if name.ends_with("_avx2_gfni") {
        let lanes = matches!(kind, "encode" | "dot" | "mul");
        (
            if lanes {
                Layout::AffineLanes
            } else {
                Layout::Affine
            },
            0,
        )
    } else if name.ends_with("_avx512") {
        (
            Layout::Nibble,
            if name == "gf_vect_dot_prod_avx512" {
                32
            } else {
                64
            },
        )
    } else {
        panic!("{name}: no model (ISA-L's code runs on every x86-64 CPU)")
    }
}

/// The product of `x` at block offset `i` by the 32-byte tables `t` read as `layout`.
fn product(layout: Layout, t: &[u8], x: u8, i: usize) -> u8 {
    let matrix = |lane: usize| u64::from_le_bytes(t[8 * lane..8 * lane + 8].try_into().unwrap());
    let affine = |m: u64| {
        (0..8).fold(0u8, |y, bit| {
            let row = (m >> (8 * (7 - bit))) as u8;
            y | ((((row & x).count_ones() & 1) as u8) << bit)
        })
    };
    match layout {
        Layout::Nibble => t[(x & 15) as usize] ^ t[16 + (x >> 4) as usize],
        Layout::Base => ec_codec::gf::mul(t[1], x),
        Layout::Affine => affine(matrix(0)),
        Layout::AffineLanes => affine(matrix(i % 32 / 8)),
    }
}

/// `outs[r] (^)= XOR over c of product(tables of (r, c), ins[c])` by the model.
fn model_multiply(
    layout: Layout,
    len: usize,
    tbls: &[u8],
    stride: usize,
    ins: &[Vec<u8>],
    outs: &mut [Vec<u8>],
    acc: bool,
) {
    for (r, out) in outs.iter_mut().enumerate() {
        for i in 0..len {
            let mut a = if acc { out[i] } else { 0 };
            for (c, inp) in ins.iter().enumerate() {
                a ^= product(layout, &tbls[32 * (r * stride + c)..], inp[i], i);
            }
            out[i] = a;
        }
    }
}

/// Checks our function `name` against ISA-L's where this CPU runs ISA-L's code, else
/// against `model` (which returns the function's return value), and says so.
fn same_or_model(
    what: &str,
    name: &str,
    bufs: &Bufs,
    f: impl Fn(&Lib, &mut Bufs) -> i64,
    model: impl Fn(&mut Bufs) -> i64,
) {
    let modelled = ["_avx512_gfni", "_avx2_gfni", "_avx512"]
        .iter()
        .any(|x| name.ends_with(x));
    if isal_runs(name) {
        same(what, bufs, &f);
        if modelled {
            // The model is checked against ISA-L wherever ISA-L's code runs.
            let (mut a, mut b) = (bufs.clone(), bufs.clone());
            let ra = f(reference(), &mut a);
            let rb = model(&mut b);
            assert_eq!(
                ra, rb,
                "{what}: the model's return value differs from ISA-L's"
            );
            assert!(a == b, "{what}: the model's bytes differ from ISA-L's");
        }
        return;
    }
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap();
    if !said.iter().any(|n| n == name) {
        // Written past the test harness's capture, so that every run shows it.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "{name}: this CPU cannot run ISA-L's code; checked against its model"
        );
        said.push(name.to_string());
    }
    drop(said);
    let (mut a, mut b) = (bufs.clone(), bufs.clone());
    let ra = f(ours(), &mut a);
    let rb = model(&mut b);
    assert_eq!(ra, rb, "{what}: return values differ from the model");
    assert!(a == b, "{what}: bytes differ from the model");
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
    for name in [
        "gf_vect_mul_init",
        "gf_vect_mul_init_base",
        "gf_vect_mul_init_gfni",
    ] {
        let (f, g): (MulInit, MulInit) = (ours().get(name), reference().get(name));
        for c in 0..=255u8 {
            let (mut x, mut y) = ([0u8; 33], [0u8; 33]);
            // SAFETY: 32 writable bytes each.
            unsafe { (f(c, x[1..].as_mut_ptr()), g(c, y[1..].as_mut_ptr())) };
            assert_eq!(x, y, "{name}({c})");
        }
    }
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for name in [
        "ec_init_tables",
        "ec_init_tables_base",
        "ec_init_tables_gfni",
    ] {
        for _ in 0..50 {
            let (k, rows) = shape(&mut rng);
            let mut bufs = Bufs::new(&mut rng, &[k * rows, 32 * k * rows]);
            bufs.data(1).fill(0);
            same(name, &bufs, &|lib, b| {
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
                same(&format!("{name}({m}, {k})"), &bufs, &|lib, b| {
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
        same(&format!("gf_invert_matrix(n = {n})"), &bufs, &|lib, b| {
            let f: Invert = lib.get("gf_invert_matrix");
            // SAFETY: two n x n matrices.
            unsafe { f(b.ptr(0), b.ptr(1), n as c_int) as i64 }
        });
    }
}

/// The blocks of `b`'s buffers `range`, as the model takes them.
fn blocks(b: &mut Bufs, range: std::ops::Range<usize>) -> Vec<Vec<u8>> {
    range.map(|i| b.data(i).to_vec()).collect()
}

/// Writes `blocks` back into `b`'s buffers from `first` on.
fn put(b: &mut Bufs, first: usize, blocks: &[Vec<u8>]) {
    for (i, blk) in blocks.iter().enumerate() {
        b.data(first + i).copy_from_slice(blk);
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
        "ec_encode_data_avx512",
        "ec_encode_data_avx2_gfni",
        "ec_encode_data_avx512_gfni",
    ];
    let updaters = [
        "ec_encode_data_update",
        "ec_encode_data_update_base",
        "ec_encode_data_update_sse",
        "ec_encode_data_update_avx",
        "ec_encode_data_update_avx2",
        "ec_encode_data_update_avx512",
        "ec_encode_data_update_avx2_gfni",
        "ec_encode_data_update_avx512_gfni",
    ];
    for (i, &len) in LENGTHS.iter().cycle().take(4 * LENGTHS.len()).enumerate() {
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
        for name in [
            encoders[i % encoders.len()],
            encoders[(i + 3) % encoders.len()],
        ] {
            same_or_model(
                &format!("{name}(len {len}, k {k}, rows {rows})"),
                name,
                &bufs,
                |lib, b| {
                    encode_with(lib, name, b, len, k, rows);
                    0
                },
                |b| {
                    let (layout, min) = model_of(name);
                    let layout = if len < min { Layout::Base } else { layout };
                    let (ins, mut outs) = (blocks(b, 0..k), blocks(b, k..k + rows));
                    let t = b.data(k + rows).to_vec();
                    model_multiply(layout, len, &t, k, &ins, &mut outs, false);
                    put(b, k, &outs);
                    0
                },
            );
        }
        for name in [
            updaters[i % updaters.len()],
            updaters[(i + 5) % updaters.len()],
        ] {
            let vecs: Vec<usize> = (0..k).step_by(1 + k / 4).collect();
            same_or_model(
                &format!("{name}(len {len}, k {k}, rows {rows})"),
                name,
                &bufs,
                |lib, b| {
                    let f: Update = lib.get(name);
                    let mut coding = b.ptrs(k..k + rows);
                    let t = b.ptr(k + rows);
                    for &vec_i in &vecs {
                        let d = b.ptr(vec_i);
                        // SAFETY: one data block and rows coding blocks of len bytes; the
                        // tables.
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
                |b| {
                    let (layout, min) = model_of(name);
                    let layout = if len < min { Layout::Base } else { layout };
                    let mut outs = blocks(b, k..k + rows);
                    let t = b.data(k + rows).to_vec();
                    for &vec_i in &vecs {
                        let ins = blocks(b, vec_i..vec_i + 1);
                        model_multiply(layout, len, &t[32 * vec_i..], k, &ins, &mut outs, true);
                    }
                    put(b, k, &outs);
                    0
                },
            );
        }
    }
}

/// The dot-product (`dot`) or multiply-add names of `n` outputs ISA-L 2.32 has.
fn kernel_names(dot: bool, n: usize) -> Vec<String> {
    let stem = match (dot, n) {
        (true, 1) => "gf_vect_dot_prod".to_string(),
        (true, _) => format!("gf_{n}vect_dot_prod"),
        (false, 1) => "gf_vect_mad".to_string(),
        (false, _) => format!("gf_{n}vect_mad"),
    };
    let mut sfx = vec!["_sse", "_avx", "_avx2", "_avx512", "_avx512_gfni"];
    if n == 1 {
        sfx.extend(["", "_base"]);
    }
    // ISA-L's AVX2 GFNI code has up to 3 outputs for dot products and 5 for multiply-adds.
    if n <= if dot { 3 } else { 5 } {
        sfx.push("_avx2_gfni");
    }
    sfx.iter().map(|x| format!("{stem}{x}")).collect()
}

#[test]
fn dot_products_and_multiply_adds() {
    let mut rng = Rng(0xabad_cafe_0000_0001);
    for &len in LENGTHS {
        let vlen = 1 + rng.below(if len > 4096 { 12 } else { 40 });
        for n in 1..=6usize {
            let g = tables(&mut rng, vlen, n);
            for dot in kernel_names(true, n) {
                let mut sizes = vec![len; vlen + n];
                sizes.push(g.len());
                let mut bufs = Bufs::new(&mut rng, &sizes);
                bufs.data(vlen + n).copy_from_slice(&g);
                same_or_model(
                    &format!("{dot}(len {len}, vlen {vlen})"),
                    &dot,
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
                    |b| {
                        let (layout, min) = model_of(&dot);
                        if len >= min {
                            let (ins, mut outs) = (blocks(b, 0..vlen), blocks(b, vlen..vlen + n));
                            let t = b.data(vlen + n).to_vec();
                            model_multiply(layout, len, &t, vlen, &ins, &mut outs, false);
                            put(b, vlen, &outs);
                        }
                        0
                    },
                );
            }
            for mad in kernel_names(false, n) {
                let mut sizes = vec![len; vlen + n];
                sizes.push(g.len());
                let mut bufs = Bufs::new(&mut rng, &sizes);
                bufs.data(vlen + n).copy_from_slice(&g);
                let vec_i = rng.below(vlen);
                same_or_model(
                    &format!("{mad}(len {len}, vec {vlen}, vec_i {vec_i})"),
                    &mad,
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
                    |b| {
                        let (layout, min) = model_of(&mad);
                        if len >= min {
                            let (ins, mut outs) = (blocks(b, 0..1), blocks(b, vlen..vlen + n));
                            let t = b.data(vlen + n).to_vec();
                            model_multiply(
                                layout,
                                len,
                                &t[32 * vec_i..],
                                vlen,
                                &ins,
                                &mut outs,
                                true,
                            );
                            put(b, vlen, &outs);
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
    let init: MulInit = reference().get("gf_vect_mul_init");
    for name in [
        "gf_vect_mul",
        "gf_vect_mul_sse",
        "gf_vect_mul_avx",
        "gf_vect_mul_base",
        "gf_vect_mul_avx2_gfni",
    ] {
        // ISA-L asks for 32-byte-aligned buffers here, and writes 32 bytes at length 0.
        for &len in LENGTHS.iter().chain(&[32 * 1000]) {
            let c = rng.next() as u8;
            let mut bufs = Bufs::aligned(&mut rng, &[32, len, len]);
            // Tables as ISA-L's dispatched init writes them on this CPU, or random bytes.
            if rng.below(4) == 0 {
                let t = rng.bytes(32);
                bufs.data(0).copy_from_slice(&t);
            } else {
                // SAFETY: 32 writable bytes.
                unsafe { init(c, bufs.ptr(0)) };
            }
            same_or_model(
                &format!("{name}(len {len}, c {c})"),
                name,
                &bufs,
                |lib, b| {
                    let f: VectMul = lib.get(name);
                    let (t, s, d) = (b.ptr(0), b.ptr(1), b.ptr(2));
                    // SAFETY: the 32-byte table; source and destination of len bytes.
                    let r = unsafe { f(len as c_int, t, s.cast(), d.cast()) };
                    // In place, as ISA-L's tests do it.
                    // SAFETY: as above, with the destination as the source.
                    let q = unsafe { f(len as c_int, t, d.cast(), d.cast()) };
                    (r as i64) << 8 | q as i64
                },
                |b| {
                    if len % 32 != 0 {
                        return 1 << 8 | 1;
                    }
                    let (layout, _) = model_of(name);
                    let t = b.data(0).to_vec();
                    let mut out = blocks(b, 1..2);
                    model_multiply(layout, len, &t, 1, &out.clone(), &mut out, false);
                    let again = out.clone();
                    model_multiply(layout, len, &t, 1, &again, &mut out, false);
                    put(b, 2, &out);
                    0
                },
            );
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
                    &|lib, b| {
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
                    &|lib, b| {
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
