//! Byte-for-byte agreement with ISA-L (built from source, linked only in tests and
//! benchmarks): Cauchy encode of random data and `ec_encode_data_update`-style updates.
#![cfg(target_arch = "x86_64")]

use ec_codec::{CodingMatrix, Encoder, Isa, Updater};
use erasure_isa_l_sys as isal;

mod common;
use common::Rng;

/// ISA-L's Cauchy matrix and encode tables for (m, k).
fn isal_tables(m: usize, k: usize) -> (Vec<u8>, Vec<u8>) {
    let mut a = vec![0u8; (m + k) * m];
    let mut g = vec![0u8; 32 * m * k];
    // SAFETY: buffers have the sizes ISA-L documents: (m+k) x m matrix, 32*m*k tables.
    unsafe {
        isal::gf_gen_cauchy1_matrix(a.as_mut_ptr(), (m + k) as i32, m as i32);
        isal::ec_init_tables(m as i32, k as i32, a[m * m..].as_mut_ptr(), g.as_mut_ptr());
    }
    (a, g)
}

fn isal_encode(m: usize, k: usize, data: &mut [Vec<u8>]) -> Vec<Vec<u8>> {
    let len = data[0].len();
    let (_, mut g) = isal_tables(m, k);
    let mut parity = vec![vec![0u8; len]; k];
    let mut dp: Vec<*mut u8> = data.iter_mut().map(|b| b.as_mut_ptr()).collect();
    let mut pp: Vec<*mut u8> = parity.iter_mut().map(|b| b.as_mut_ptr()).collect();
    // SAFETY: m data and k parity pointers, each to len bytes; tables from ec_init_tables.
    unsafe {
        isal::ec_encode_data(
            len as i32,
            m as i32,
            k as i32,
            g.as_mut_ptr(),
            dp.as_mut_ptr(),
            pp.as_mut_ptr(),
        )
    };
    parity
}

#[test]
fn cauchy_matrix_is_isal_s() {
    for (m, k) in [(4, 2), (10, 4), (128, 32), (1, 1)] {
        let (a, _) = isal_tables(m, k);
        let ours = CodingMatrix::cauchy(m, k).unwrap();
        assert_eq!(&a[m * m..], ours.coefs(), "({m},{k})");
    }
}

#[test]
fn encode_matches_isal_on_every_kernel() {
    let mut rng = Rng(2024);
    for (m, k, len) in [
        (4, 2, 64),
        (10, 4, 4096),
        (20, 8, 65536),
        (128, 32, 1024),
        (3, 7, 960),
        (12, 1, 128),
    ] {
        let mut data: Vec<Vec<u8>> = (0..m).map(|_| rng.bytes(len)).collect();
        let want = isal_encode(m, k, &mut data);
        let enc = Encoder::new(&CodingMatrix::cauchy(m, k).unwrap()).unwrap();
        for isa in Isa::ALL.into_iter().filter(|i| i.is_supported()) {
            let e = enc.clone().with_isa(isa).unwrap();
            let mut got = vec![vec![0u8; len]; k];
            e.encode(
                &data.iter().map(|b| &b[..]).collect::<Vec<_>>(),
                &mut got.iter_mut().map(|b| &mut b[..]).collect::<Vec<_>>(),
            )
            .unwrap();
            assert!(
                got == want,
                "{} differs from ISA-L for ({m},{k}) x {len}",
                isa.name()
            );
        }
    }
}

#[test]
fn update_matches_isal_encode_data_update() {
    let mut rng = Rng(77);
    let (m, k, len) = (10, 4, 4096);
    let mut data: Vec<Vec<u8>> = (0..m).map(|_| rng.bytes(len)).collect();
    let mut parity = isal_encode(m, k, &mut data);
    let old = parity.clone();
    let changed = [2usize, 7];
    let mut new_blocks: Vec<Vec<u8>> = changed.iter().map(|_| rng.bytes(len)).collect();

    // ISA-L: remove each old block's contribution, add the new one's.
    let (_, mut g) = isal_tables(m, k);
    let mut pp: Vec<*mut u8> = parity.iter_mut().map(|b| b.as_mut_ptr()).collect();
    for (u, &i) in changed.iter().enumerate() {
        // SAFETY: k parity pointers to len bytes, one data block of len bytes, tables
        // from ec_init_tables for (m, k).
        unsafe {
            isal::ec_encode_data_update(
                len as i32,
                m as i32,
                k as i32,
                i as i32,
                g.as_mut_ptr(),
                data[i].as_mut_ptr(),
                pp.as_mut_ptr(),
            );
            isal::ec_encode_data_update(
                len as i32,
                m as i32,
                k as i32,
                i as i32,
                g.as_mut_ptr(),
                new_blocks[u].as_mut_ptr(),
                pp.as_mut_ptr(),
            );
        }
    }

    let up = Updater::new(&CodingMatrix::cauchy(m, k).unwrap(), &changed).unwrap();
    let mut sources: Vec<&[u8]> = Vec::new();
    for (u, &i) in changed.iter().enumerate() {
        sources.push(&data[i]);
        sources.push(&new_blocks[u]);
    }
    for p in &old {
        sources.push(p);
    }
    let mut got = vec![vec![0u8; len]; k];
    up.update(
        &sources,
        &mut got.iter_mut().map(|b| &mut b[..]).collect::<Vec<_>>(),
    )
    .unwrap();
    assert!(got == parity, "update differs from ISA-L");
    new_blocks.clear();
}
