//! Erasure coding on tokio: 4 data blocks of 4 KiB get 2 redundancy blocks (Cauchy
//! matrix); two data blocks are then lost and recovered from the 4 survivors, each step
//! an awaited job; the recovered blocks equal the lost ones.

use doca_core::aio::AsyncWorkQ;
use doca_core::{Result, WorkQ, devinfo_list};
use doca_ec::{Ec, EcCreateJob, EcRecoverJob, MatrixType};
use doca_examples::local_memory;

const M: usize = 4;
const K: usize = 2;
const BLOCK: usize = 4096;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let dev = devinfo_list()?[0].open()?;
    let (mmap, inv) = local_memory(&dev, 32 * BLOCK, 8)?;
    let ec = Ec::new();
    ec.as_ctx().dev_add(&dev)?;
    ec.as_ctx().start()?;
    let wq = AsyncWorkQ::new(WorkQ::new(4)?)?;
    wq.attach(ec.as_ctx())?;
    let coding = ec.matrix_create(MatrixType::Cauchy, M, K)?;

    let data: Vec<u8> = (0..M * BLOCK).map(|i| (i * 7 % 251) as u8).collect();
    let mut src = inv.buf_at(&mmap, 0, M * BLOCK)?;
    src.write_data(&data)?;
    let parity = inv.buf_at(&mmap, 8 * BLOCK, K * BLOCK)?;
    let mut done = wq
        .submit_job(ec.as_ctx(), EcCreateJob::new(&coding, src, parity, 1))
        .map_err(|(e, _)| e)?
        .await;
    done.status()?;
    let parity = done
        .take_buf(EcCreateJob::DST)
        .expect("redundancy")
        .data_to_vec();

    // Blocks 1 and 2 are lost: the survivors are data 0 and 3, then both redundancy
    // blocks, back to back.
    let missing = [1u32, 2];
    let recover = ec.recover_matrix_create(&coding, &missing)?;
    let mut survivors = Vec::new();
    survivors.extend_from_slice(&data[..BLOCK]);
    survivors.extend_from_slice(&data[3 * BLOCK..]);
    survivors.extend_from_slice(&parity);
    let mut src = inv.buf_at(&mmap, 12 * BLOCK, M * BLOCK)?;
    src.write_data(&survivors)?;
    let out = inv.buf_at(&mmap, 20 * BLOCK, K * BLOCK)?;
    let mut done = wq
        .submit_job(ec.as_ctx(), EcRecoverJob::new(&recover, src, out, 2))
        .map_err(|(e, _)| e)?
        .await;
    done.status()?;
    let got = done
        .take_buf(EcRecoverJob::DST)
        .expect("recovered")
        .data_to_vec();
    assert_eq!(got, data[BLOCK..3 * BLOCK]);
    println!("ec: {M}+{K} blocks of {BLOCK} B coded; blocks 1 and 2 lost and recovered");
    drop(done);
    wq.detach(ec.as_ctx())?;
    Ok(())
}
