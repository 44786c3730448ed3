//! Compress on tokio: 8 blocks of text deflated as 8 tasks in flight, each
//! decompressed back and compared, the checksums of both directions equal; then a
//! corrupt block fails its task with INVALID_VALUE and leaves the destination empty.

use doca_compress::{Compress, DeflateJob, checksums};
use doca_core::aio::AsyncWorkQ;
use doca_core::{ErrorCode, Result, WorkQ, devinfo_list};
use doca_examples::local_memory;
use futures_util::future::join_all;

const BLOCK: usize = 16384;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let dev = devinfo_list()?[0].open()?;
    let (mmap, inv) = local_memory(&dev, 1 << 20, 64)?;
    let c = Compress::new();
    c.as_ctx().dev_add(&dev)?;
    c.as_ctx().start()?;
    let wq = AsyncWorkQ::new(WorkQ::new(16)?)?;
    wq.attach(c.as_ctx())?;

    let text: Vec<Vec<u8>> = (0..8)
        .map(|i| {
            format!("block {i}: storage engineers compress blocks next to erasure coding. ")
                .into_bytes()
                .into_iter()
                .cycle()
                .take(BLOCK)
                .collect()
        })
        .collect();
    let mut jobs = Vec::new();
    for (i, t) in text.iter().enumerate() {
        let mut src = inv.buf_at(&mmap, i * BLOCK, BLOCK)?;
        src.append(t)?;
        let dst = inv.buf_at(&mmap, (8 + i) * BLOCK, BLOCK)?;
        jobs.push(
            wq.submit_job(c.as_ctx(), DeflateJob::compress(src, dst, i as u64))
                .map_err(|(e, _)| e)?,
        );
    }
    let (mut packed_bytes, mut back) = (0, Vec::new());
    for mut done in join_all(jobs).await {
        done.status()?;
        let i = done.event().user_data.u64() as usize;
        let sums = checksums(&done);
        let packed = done.take_buf(DeflateJob::DST).expect("destination");
        packed_bytes += packed.data_len();
        let out = inv.buf_at(&mmap, (16 + i) * BLOCK, BLOCK)?;
        back.push((
            i,
            sums,
            wq.submit_job(c.as_ctx(), DeflateJob::decompress(packed, out, i as u64))
                .map_err(|(e, _)| e)?,
        ));
    }
    for (i, sums, job) in back {
        let mut done = job.await;
        done.status()?;
        assert_eq!(checksums(&done), sums, "block {i}: the checksums differ");
        let out = done.take_buf(DeflateJob::DST).expect("destination");
        assert_eq!(out.data_to_vec(), text[i], "block {i} differs");
    }

    // A corrupt block: the task fails, nothing lands in the destination.
    let mut src = inv.buf_at(&mmap, 24 * BLOCK, 64)?;
    src.append(&[0xff; 64])?;
    let dst = inv.buf_at(&mmap, 25 * BLOCK, BLOCK)?;
    let mut done = wq
        .submit_job(c.as_ctx(), DeflateJob::decompress(src, dst, 99))
        .map_err(|(e, _)| e)?
        .await;
    let err = done.status().expect_err("a corrupt block must fail");
    assert_eq!(err.code(), ErrorCode::InvalidValue);
    assert_eq!(
        done.take_buf(DeflateJob::DST)
            .expect("destination")
            .data_len(),
        0
    );

    println!(
        "compress: 8 blocks of {BLOCK} bytes deflated to {packed_bytes} bytes and back, checksums equal; a corrupt block refused"
    );
    wq.detach(c.as_ctx())?;
    Ok(())
}
