//! Once a matrix is prepared, encode / recover / update allocate nothing.

use ec_codec::{CodingMatrix, Decoder, Encoder, Updater};

#[global_allocator]
static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;

/// The counting allocator counts every thread, so the scenarios run in one test.
#[test]
fn prepared_and_borrowed_operations_allocate_nothing() {
    assert_eq!(prepared_operations(), 0, "prepared matrices");
    assert_eq!(isa_l_layout_tables(), 0, "ISA-L-layout tables");
    assert_eq!(parallel_runs(), 0, "runs on two threads, helpers started");
}

/// Allocations of encodes and recovers split over two threads, once the helper thread
/// has started (its start is the first call's).
fn parallel_runs() -> usize {
    let (m, k, len) = (10, 4, 512 << 10);
    let mat = CodingMatrix::cauchy(m, k).unwrap();
    let enc = Encoder::new(&mat).unwrap();
    let dec = Decoder::new(&mat, &[1, 2]).unwrap();
    let data: Vec<Vec<u8>> = (0..m).map(|i| vec![i as u8 ^ 0x5a; len]).collect();
    let mut parity = vec![vec![0u8; len]; k];
    let mut rebuilt = vec![vec![0u8; len]; 2];
    let din: Vec<&[u8]> = data.iter().map(|b| &b[..]).collect();
    let mut pout: Vec<&mut [u8]> = parity.iter_mut().map(|b| &mut b[..]).collect();
    enc.encode_par(&din, &mut pout, 2).unwrap();
    drop(pout);
    let survivors: Vec<&[u8]> = dec
        .survivors()
        .iter()
        .map(|&i| {
            if i < m {
                &data[i][..]
            } else {
                &parity[i - m][..]
            }
        })
        .collect();
    let mut rout: Vec<&mut [u8]> = rebuilt.iter_mut().map(|b| &mut b[..]).collect();
    let n = doca_testkit::allocations_in(|| {
        for _ in 0..20 {
            dec.recover_par(&survivors, &mut rout, 2).unwrap();
        }
    });
    drop(rout);
    assert_eq!(rebuilt[0], data[1], "recovered on two threads");
    assert_eq!(rebuilt[1], data[2], "recovered on two threads");
    n
}

/// Allocations of encode, recover, update and contiguous runs of prepared matrices.
fn prepared_operations() -> usize {
    let (m, k, len) = (10, 4, 4096);
    let mat = CodingMatrix::cauchy(m, k).unwrap();
    let enc = Encoder::new(&mat).unwrap();
    let dec = Decoder::new(&mat, &[0, 3, 11]).unwrap();
    let up = Updater::new(&mat, &[2]).unwrap();
    let data: Vec<Vec<u8>> = (0..m).map(|i| vec![i as u8; len]).collect();
    let mut parity = vec![vec![0u8; len]; k];
    let mut rebuilt = vec![vec![0u8; len]; 3];
    let mut newp = vec![vec![0u8; len]; k];
    let din: Vec<&[u8]> = data.iter().map(|b| &b[..]).collect();
    let mut pout: Vec<&mut [u8]> = parity.iter_mut().map(|b| &mut b[..]).collect();
    let mut rout: Vec<&mut [u8]> = rebuilt.iter_mut().map(|b| &mut b[..]).collect();
    let mut uout: Vec<&mut [u8]> = newp.iter_mut().map(|b| &mut b[..]).collect();
    let survivors: Vec<&[u8]> = dec
        .survivors()
        .iter()
        .map(|&i| if i < m { &data[i][..] } else { &data[0][..] })
        .collect();
    let usrc: Vec<&[u8]> = [
        &data[2][..],
        &data[5][..],
        &data[0][..],
        &data[1][..],
        &data[3][..],
        &data[4][..],
    ]
    .to_vec();
    let contiguous: Vec<u8> = vec![7u8; m * len];
    let mut cout = vec![0u8; k * len];

    doca_testkit::allocations_in(|| {
        for _ in 0..100 {
            enc.encode(&din, &mut pout).unwrap();
            dec.recover(&survivors, &mut rout).unwrap();
            up.update(&usrc, &mut uout).unwrap();
            enc.matrix()
                .apply_contiguous(&contiguous, &mut cout, 1)
                .unwrap();
        }
    })
}

/// Allocations of runs of ISA-L-layout tables where they lie, in every layout.
fn isa_l_layout_tables() -> usize {
    use ec_codec::tables::{Layout, init, init_affine, multiply_as};
    let (k, rows, len) = (10usize, 4usize, 4096 + 33);
    let coef = |i: usize| (i * 7 + 3) as u8;
    let nibbles: Vec<u8> = (0..k * rows).flat_map(|i| init(coef(i))).collect();
    let affine: Vec<u8> = (0..k * rows).flat_map(|i| init_affine(coef(i))).collect();
    let data: Vec<Vec<u8>> = (0..k).map(|i| vec![i as u8; len]).collect();
    let mut parity = vec![vec![0u8; len]; rows];
    let ins: Vec<*const u8> = data.iter().map(|b| b.as_ptr()).collect();
    let outs: Vec<*mut u8> = parity.iter_mut().map(|b| b.as_mut_ptr()).collect();
    // The kernel choice, the cache size and the derived tables are made once per process.
    ec_codec::tables::warm_up();

    doca_testkit::allocations_in(|| {
        for (layout, tables) in [
            (Layout::Nibble, &nibbles),
            (Layout::Base, &nibbles),
            (Layout::Affine, &affine),
            (Layout::AffineLanes, &affine),
        ] {
            for accumulate in [false, true, false] {
                for _ in 0..20 {
                    // SAFETY: k inputs and rows outputs of len bytes; 32 * k * rows bytes
                    // of tables.
                    unsafe {
                        multiply_as(layout, len, tables.as_ptr(), k, &ins, &outs, accumulate)
                    };
                }
            }
        }
    })
}
