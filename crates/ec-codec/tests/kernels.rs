//! Every kernel against the scalar reference: size classes, misaligned blocks, shapes
//! from 1 x 1 up to the maxima.
//!
//! Two settings serve slow machines (an emulated CPU runs these binaries at a few tens
//! of millions of instructions a second): `EC_CODEC_TEST_KERNELS` names the kernels to
//! check (comma-separated, as `DOCA_EC_ISA` names them; default: every kernel this CPU
//! runs), and `EC_CODEC_TEST_QUICK=1` has the three largest tests take a sample of their
//! cases that still reaches every code path they aim at (each shape once, the lengths and
//! coefficient kinds spread over the shapes). The scalar reference computes the expected
//! bytes either way.

use ec_codec::{GfMatrix, Isa};

mod common;
use common::Rng;

fn kernels() -> Vec<Isa> {
    // The kernels EC_CODEC_TEST_KERNELS names, read with the library's own names.
    let chosen: Option<Vec<Isa>> = std::env::var("EC_CODEC_TEST_KERNELS").ok().map(|list| {
        list.split(',')
            .map(|n| {
                Isa::from_name(n.trim()).unwrap_or_else(|| {
                    panic!(
                        "EC_CODEC_TEST_KERNELS names '{n}', which is no kernel (known: {})",
                        Isa::ALL.map(|i| i.name()).join(", ")
                    )
                })
            })
            .collect()
    });
    let wanted = |isa: Isa| chosen.as_ref().is_none_or(|c| c.contains(&isa));
    let v: Vec<Isa> = Isa::ALL
        .into_iter()
        .filter(|&i| i.is_supported() && wanted(i))
        .collect();
    for isa in Isa::ALL {
        if !isa.is_supported() && wanted(isa) {
            eprintln!(
                "note: this CPU cannot run the {} kernel; it is not tested here",
                isa.name()
            );
        }
    }
    assert!(
        !v.is_empty() || chosen.is_none(),
        "EC_CODEC_TEST_KERNELS leaves no kernel this CPU runs"
    );
    v
}

/// Whether the largest tests take a sample of their cases (`EC_CODEC_TEST_QUICK=1`).
fn quick() -> bool {
    std::env::var_os("EC_CODEC_TEST_QUICK").is_some_and(|v| v != "0")
}

/// Runs rows x cols with blocks of `len` bytes at byte offset `shift` inside their
/// allocations, on every kernel, and compares with the scalar kernel.
fn check(rows: usize, cols: usize, len: usize, shift: usize, seed: u64) {
    let mut rng = Rng(seed | 1);
    let mut coefs = vec![0u8; rows * cols];
    rng.fill(&mut coefs);
    // Some zero and one coefficients, which kernels may special-case.
    if coefs.len() > 2 {
        coefs[0] = 0;
        coefs[1] = 1;
    }
    check_coefs(rows, cols, len, shift, &coefs, &mut rng);
}

fn check_coefs(rows: usize, cols: usize, len: usize, shift: usize, coefs: &[u8], rng: &mut Rng) {
    let mut store: Vec<Vec<u8>> = (0..cols).map(|_| vec![0u8; len + shift]).collect();
    for b in &mut store {
        rng.fill(b);
    }
    let inputs: Vec<&[u8]> = store.iter().map(|b| &b[shift..]).collect();
    let base = GfMatrix::new(rows, cols, coefs).unwrap();
    let mut want = vec![vec![0u8; len]; rows];
    {
        let mut outs: Vec<&mut [u8]> = want.iter_mut().map(|b| &mut b[..]).collect();
        base.clone()
            .with_isa(Isa::Scalar)
            .unwrap()
            .apply(&inputs, &mut outs)
            .unwrap();
    }
    // Every kernel is run before any failure is reported, so one report names all the
    // kernels that disagree.
    let mut failures = Vec::new();
    for isa in kernels() {
        let g = base.clone().with_isa(isa).unwrap();
        let mut got: Vec<Vec<u8>> = (0..rows).map(|_| vec![0xeeu8; len + shift]).collect();
        let mut outs: Vec<&mut [u8]> = got.iter_mut().map(|b| &mut b[shift..]).collect();
        g.apply(&inputs, &mut outs).unwrap();
        for r in 0..rows {
            if got[r][shift..] != want[r][..] {
                let at = (0..len).find(|&i| got[r][shift + i] != want[r][i]).unwrap();
                failures.push(format!(
                    "{} differs: {rows}x{cols}, len {len}, shift {shift}, row {r}, first at byte {at}",
                    isa.name()
                ));
                break;
            }
            if !got[r][..shift].iter().all(|&b| b == 0xee) {
                failures.push(format!("{} wrote before the block", isa.name()));
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("; "));
}

#[test]
fn size_classes() {
    for (i, len) in [64, 128, 192, 960, 4096, 65536 + 64, 1 << 20]
        .into_iter()
        .enumerate()
    {
        check(4, 10, len, 0, 100 + i as u64);
    }
}

#[test]
fn several_megabytes_cross_tiles_and_streaming_decisions() {
    check(6, 3, 3 << 20, 0, 7);
}

#[test]
fn misaligned_blocks() {
    for shift in [1, 7, 31, 33, 63] {
        check(3, 5, 4096 + 64, shift, shift as u64);
    }
}

#[test]
fn shapes_from_one_to_the_maxima() {
    let shapes = [
        (1, 1),
        (1, 2),
        (2, 1),
        (7, 3),
        (8, 8),
        (9, 17),
        (16, 16),
        (17, 20),
        (32, 128),
        (32, 1),
        (1, 128),
        (32, 288),
        (5, 288),
        // Either side of the AVX2 kernel's switch from 8-output to 4-output passes.
        (8, 64),
        (8, 65),
    ];
    for (i, (rows, cols)) in shapes.into_iter().enumerate() {
        check(rows, cols, 256, 0, 1000 + i as u64);
    }
}

/// The nibble kernels' source-by-source loop walks tiles of 1 KiB (512 bytes with 32
/// outputs): several tiles and a short last one, a lone source (set and written by one
/// pass), groups of outputs short of four, blocks misaligned alike (the realigned
/// head and tail run apart).
#[test]
fn source_by_source_over_tiles_with_a_short_last_tile() {
    let shapes = [(4, 10), (32, 128), (5, 3), (1, 1), (7, 1), (32, 2)];
    for (i, (rows, cols)) in shapes.into_iter().enumerate() {
        for (j, (len, shift)) in [(3 * 1024 + 192, 0), (2 * 512 + 64, 0), (2048 + 128, 16)]
            .into_iter()
            .enumerate()
        {
            check(rows, cols, len, shift, 3000 + 10 * i as u64 + j as u64);
        }
    }
}

#[test]
fn output_groups_over_staged_tiles_with_a_short_last_tile() {
    // More outputs than any kernel's group, so sources are staged tile by tile; block
    // lengths that leave a short last tile, and blocks that start mid-line.
    for (i, (rows, cols, len, shift)) in [
        (20, 40, (64 << 10) + 192, 3),
        (32, 128, (8 << 10) + 64, 0),
        (17, 9, (256 << 10) + 640, 17),
        (32, 288, 1024 + 64, 5),
    ]
    .into_iter()
    .enumerate()
    {
        // The sample: the two smallest jobs (one with more outputs than a group and a
        // short last tile, one at the maxima with blocks that start mid-line).
        if quick() && i % 2 == 0 {
            continue;
        }
        check(rows, cols, len, shift, 4000 + i as u64);
    }
}

#[test]
fn parallel_path_matches() {
    let rows = 4;
    let cols = 10;
    let len = 1 << 20;
    let mut rng = Rng(99);
    let mut coefs = vec![0u8; rows * cols];
    rng.fill(&mut coefs);
    let mut src = vec![0u8; cols * len];
    rng.fill(&mut src);
    let g = GfMatrix::new(rows, cols, &coefs).unwrap();
    let mut a = vec![0u8; rows * len];
    let mut b = vec![0u8; rows * len];
    g.apply_contiguous(&src, &mut a, 1).unwrap();
    g.apply_contiguous(&src, &mut b, 3).unwrap();
    assert!(a == b);
    let scalar = g.clone().with_isa(Isa::Scalar).unwrap();
    let mut c = vec![0u8; rows * len];
    scalar.apply_contiguous(&src, &mut c, 2).unwrap();
    assert!(a == c);
}

#[test]
fn bad_shapes_are_refused() {
    let g = GfMatrix::new(2, 3, &[1; 6]).unwrap();
    let b = vec![0u8; 64];
    let mut o1 = vec![0u8; 64];
    let mut o2 = vec![0u8; 64];
    assert!(
        g.apply(&[&b, &b], &mut [&mut o1, &mut o2])
            .unwrap_err()
            .to_string()
            .contains("expected 3 input")
    );
    let short = vec![0u8; 63];
    assert!(
        g.apply(
            &[&short, &short, &short],
            &mut [&mut o1[..63], &mut o2[..63]]
        )
        .unwrap_err()
        .to_string()
        .contains("block size")
    );
    let odd = vec![0u8; 100];
    assert!(
        g.apply(&[&odd, &odd, &odd], &mut [&mut o1, &mut o2])
            .unwrap_err()
            .to_string()
            .contains("multiple of 64")
    );
    let big = vec![0u8; 128];
    assert!(
        g.apply(&[&b, &big, &b], &mut [&mut o1, &mut o2])
            .unwrap_err()
            .to_string()
            .contains("same size")
    );
    assert!(
        g.apply_contiguous(&[0u8; 64 * 3], &mut [0u8; 64], 1)
            .unwrap_err()
            .to_string()
            .contains("destination")
    );
    assert!(GfMatrix::new(33, 1, &[0; 33]).is_err());
    assert!(GfMatrix::new(1, 289, &[0; 289]).is_err());
    assert!(GfMatrix::new(2, 2, &[0; 3]).is_err());
}

#[test]
fn zero_and_one_columns() {
    let mut rng = Rng(31337);
    for (rows, cols) in [(4, 10), (16, 40), (32, 96), (3, 7)] {
        // Only 0 and 1: every column is skipped or XORed.
        let binary: Vec<u8> = (0..rows * cols).map(|_| (rng.next() % 2) as u8).collect();
        check_coefs(rows, cols, 512, 0, &binary, &mut rng);
        // Mostly zero with some general coefficients.
        let sparse: Vec<u8> = (0..rows * cols)
            .map(|_| {
                if rng.next().is_multiple_of(4) {
                    rng.next() as u8
                } else {
                    0
                }
            })
            .collect();
        check_coefs(rows, cols, 512, 3, &sparse, &mut rng);
        // Identity-like blocks (the parity columns of an update matrix).
        let mut ident = vec![0u8; rows * cols];
        for r in 0..rows.min(cols) {
            ident[r * cols + r] = 1;
        }
        for c in rows.min(cols)..cols {
            ident[c % rows * cols + c] = rng.next() as u8;
        }
        check_coefs(rows, cols, 1024, 0, &ident, &mut rng);
    }
    // A column of all zeros and a matrix that is all zeros.
    check_coefs(5, 3, 128, 0, &[0u8; 15], &mut rng);
}

#[test]
fn rows_of_ones() {
    let mut rng = Rng(0x0e5_0e5);
    for (rows, cols) in [
        (1, 5),
        (4, 10),
        (4, 8),
        (3, 6),
        (6, 12),
        (8, 20),
        (12, 30),
        (20, 9),
    ] {
        for len in [64, 4096 + 64, 70_000 - 70_000 % 64] {
            // The sample: blocks of one line and of several pages, not the long ones.
            if quick() && len > 8192 {
                continue;
            }
            let general = |rng: &mut Rng| {
                let mut v = vec![0u8; rows * cols];
                for b in &mut v {
                    *b = 2 + (rng.next() % 254) as u8;
                }
                v
            };
            // A Vandermonde code's rows p^0, p^1, ...: the first row and the first column
            // are all ones.
            let mut vand = vec![0u8; rows * cols];
            for r in 0..rows {
                let g = ec_codec::gf::pow(2, r as u32);
                let mut p = 1u8;
                for c in 0..cols {
                    vand[r * cols + c] = p;
                    p = ec_codec::gf::mul(p, g);
                }
            }
            check_coefs(rows, cols, len, 0, &vand, &mut rng);
            // A row of ones first in each output group the kernels may form (every 4th),
            // with no column of ones, then with a zero in one column.
            for r in (0..rows).step_by(4) {
                let mut m = general(&mut rng);
                m[r * cols..(r + 1) * cols].fill(1);
                check_coefs(rows, cols, len, 5, &m, &mut rng);
                m[r * cols + cols / 2] = 0;
                check_coefs(rows, cols, len, 0, &m, &mut rng);
            }
        }
    }
}

/// Blocks that share one misalignment (as large heap blocks do): the kernels may run
/// the bulk from the next 64-byte boundary and the first and last 64 bytes apart. Every
/// byte of every block must still be right, and no byte around a block touched.
#[test]
fn blocks_misaligned_alike() {
    let mut rng = Rng(0x5eed);
    for (rows, cols) in [(1, 1), (4, 10), (9, 3), (16, 20), (20, 4)] {
        for len in [128, 192, 4096 + 64] {
            for shift in [1, 16, 48, 63] {
                let mut coefs = vec![0u8; rows * cols];
                rng.fill(&mut coefs);
                let base = GfMatrix::new(rows, cols, &coefs).unwrap();
                // One arena, every block at `shift` past a 64-byte boundary, with a
                // guard of 64 bytes before and after each.
                let slot = len + 256;
                let mut arena = vec![0u8; slot * (rows + cols) + 64];
                let a0 = arena.as_ptr().align_offset(64);
                rng.fill(&mut arena);
                let (ins, outs) = arena[a0..].split_at_mut(slot * cols);
                let inputs: Vec<&[u8]> = (0..cols)
                    .map(|c| &ins[c * slot + 64 + shift..][..len])
                    .collect();
                let mut want = vec![vec![0u8; len]; rows];
                {
                    let mut w: Vec<&mut [u8]> = want.iter_mut().map(|b| &mut b[..]).collect();
                    base.clone()
                        .with_isa(Isa::Scalar)
                        .unwrap()
                        .apply(&inputs, &mut w)
                        .unwrap();
                }
                for isa in kernels() {
                    outs.fill(0xee);
                    let g = base.clone().with_isa(isa).unwrap();
                    {
                        let mut o: Vec<&mut [u8]> = outs
                            .chunks_mut(slot)
                            .take(rows)
                            .map(|s| &mut s[64 + shift..][..len])
                            .collect();
                        g.apply(&inputs, &mut o).unwrap();
                    }
                    for (r, s) in outs.chunks(slot).take(rows).enumerate() {
                        let what = format!(
                            "{} {rows}x{cols} len {len} shift {shift} row {r}",
                            isa.name()
                        );
                        assert!(
                            s[..64 + shift].iter().all(|&b| b == 0xee),
                            "{what}: wrote before"
                        );
                        assert_eq!(&s[64 + shift..][..len], &want[r][..], "{what}: wrong bytes");
                        assert!(
                            s[64 + shift + len..].iter().all(|&b| b == 0xee),
                            "{what}: wrote after"
                        );
                    }
                }
            }
        }
    }
}

/// Blocks back to back in one buffer, at a stride of their size (as DOCA's EC tasks lay
/// them out) or a few bytes more (as a heap lays out blocks of one size): every block
/// shares its offset in the L2's set period, and the kernels split such multiplications
/// by columns when the job outgrows L2, summing the first columns on the stack. Shapes
/// whose split takes one, two and several passes before the last, and shapes not split
/// (more outputs than a split takes); matrices with rows of ones, zero columns and
/// random coefficients; every byte right and none around the blocks touched.
#[test]
fn crowded_blocks_split_by_columns() {
    let mut rng = Rng(0xc403d);
    let shapes = [(4, 10), (2, 10), (1, 9), (4, 6), (3, 30), (4, 40), (6, 13)];
    for (si, (rows, cols)) in shapes.into_iter().enumerate() {
        for (li, (len, extra, shift)) in [
            (256 << 10, 0, 0),
            (256 << 10, 16, 0),
            (128 << 10, 0, 16),
            ((192 << 10) + 4096, 0, 0),
            ((160 << 10) + 192, 0, 48),
        ]
        .into_iter()
        .enumerate()
        {
            // The sample: each shape once, with one layout and one kind of coefficients,
            // the layouts and kinds turning over from shape to shape.
            if quick() && li != si % 5 {
                continue;
            }
            let stride = len + extra;
            for kind in 0..3 {
                if quick() && kind != si % 3 {
                    continue;
                }
                let mut coefs = vec![0u8; rows * cols];
                rng.fill(&mut coefs);
                match kind {
                    0 => {}
                    // A row of ones first, as a Vandermonde code's.
                    1 => coefs[..cols].fill(1),
                    // A zero column and a column of ones.
                    _ => {
                        for r in 0..rows {
                            coefs[r * cols] = 0;
                            coefs[r * cols + cols - 1] = 1;
                        }
                    }
                }
                let base = GfMatrix::new(rows, cols, &coefs).unwrap();
                let mut arena = vec![0u8; stride * (rows + cols) + 256];
                let a0 = arena.as_ptr().align_offset(64) + 64 + shift;
                rng.fill(&mut arena);
                let (ins, outs) = arena[a0..].split_at_mut(stride * cols);
                let inputs: Vec<&[u8]> = (0..cols).map(|c| &ins[c * stride..][..len]).collect();
                let mut want = vec![vec![0u8; len]; rows];
                {
                    let mut w: Vec<&mut [u8]> = want.iter_mut().map(|b| &mut b[..]).collect();
                    base.clone()
                        .with_isa(Isa::Scalar)
                        .unwrap()
                        .apply(&inputs, &mut w)
                        .unwrap();
                }
                for isa in kernels() {
                    outs.fill(0xee);
                    let g = base.clone().with_isa(isa).unwrap();
                    {
                        let mut o: Vec<&mut [u8]> = (0..rows)
                            .map(|r| r * stride)
                            .scan(&mut outs[..], |rest, _| {
                                let taken = std::mem::take(rest);
                                let (b, tail) = taken.split_at_mut(stride.min(taken.len()));
                                *rest = tail;
                                Some(&mut b[..len])
                            })
                            .collect();
                        g.apply(&inputs, &mut o).unwrap();
                    }
                    let what = format!(
                        "{} {rows}x{cols} len {len} stride {stride} shift {shift} kind {kind}",
                        isa.name()
                    );
                    for r in 0..rows {
                        let s = &outs[r * stride..];
                        assert_eq!(&s[..len], &want[r][..], "{what}: row {r} wrong");
                        let gap = if r + 1 < rows { extra } else { 64 };
                        assert!(
                            s[len..len + gap].iter().all(|&b| b == 0xee),
                            "{what}: wrote after row {r}"
                        );
                    }
                }
            }
        }
    }
}
