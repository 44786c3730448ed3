//! DMA on tokio: 256 memcpy jobs of 64 KiB, 32 in flight from one task, each copy
//! checked.

use doca_core::aio::AsyncWorkQ;
use doca_core::{Result, WorkQ, devinfo_list};
use doca_dma::{Dma, MemcpyJob};
use doca_examples::local_memory;
use std::collections::VecDeque;

const SIZE: usize = 64 * 1024;
const INFLIGHT: usize = 32;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let dev = devinfo_list()?[0].open()?;
    let (mmap, inv) = local_memory(&dev, 2 * INFLIGHT * SIZE, 2 * INFLIGHT)?;
    let dma = Dma::new();
    dma.as_ctx().dev_add(&dev)?;
    dma.as_ctx().start()?;
    let wq = AsyncWorkQ::new(WorkQ::new(INFLIGHT as u32)?)?;
    wq.attach(dma.as_ctx())?;

    let job = |n: usize| -> Result<MemcpyJob> {
        let slot = n % INFLIGHT;
        let mut src = inv.buf_at(&mmap, slot * SIZE, SIZE)?;
        let fill: Vec<u8> = (0..SIZE).map(|i| (i ^ n) as u8).collect();
        src.append(&fill)?;
        let dst = inv.buf_at(&mmap, (INFLIGHT + slot) * SIZE, SIZE)?;
        Ok(MemcpyJob::new(src, dst, n as u64))
    };
    let mut running = VecDeque::new();
    let (mut next, total) = (0usize, 256usize);
    let mut bytes = 0usize;
    while next < INFLIGHT {
        running.push_back(
            wq.submit_job(dma.as_ctx(), job(next)?)
                .map_err(|(e, _)| e)?,
        );
        next += 1;
    }
    while let Some(f) = running.pop_front() {
        let mut done = f.await;
        done.status()?;
        let n = done.event().user_data.u64() as usize;
        let dst = done.take_buf(MemcpyJob::DST).expect("destination");
        assert!(
            dst.data_to_vec()
                .iter()
                .enumerate()
                .all(|(i, &b)| b == (i ^ n) as u8)
        );
        bytes += dst.data_len();
        // Both buffers go back to the inventory before the next job takes two.
        drop((dst, done));
        if next < total {
            running.push_back(
                wq.submit_job(dma.as_ctx(), job(next)?)
                    .map_err(|(e, _)| e)?,
            );
            next += 1;
        }
    }
    wq.detach(dma.as_ctx())?;
    println!("dma: {total} jobs, {bytes} bytes copied and checked");
    Ok(())
}
