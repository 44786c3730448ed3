//! SHA on tokio: the SHA-256 of a 3000-byte message in one job, and of the same
//! message fed in 4 segments through a partial session, each segment awaited; both
//! digests are compared with the sha2 crate's.

use doca_core::aio::AsyncWorkQ;
use doca_core::{Result, WorkQ, devinfo_list};
use doca_examples::local_memory;
use doca_sha::{PartialSession, Sha, ShaAlgo, ShaJob, ShaPartialJob};
use sha2::Digest;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let dev = devinfo_list()?[0].open()?;
    let (mmap, inv) = local_memory(&dev, 1 << 16, 16)?;
    let sha = Sha::new();
    sha.as_ctx().dev_add(&dev)?;
    sha.as_ctx().start()?;
    let wq = AsyncWorkQ::new(WorkQ::new(8)?)?;
    wq.attach(sha.as_ctx())?;

    let msg: Vec<u8> = b"abc".repeat(1000);
    let want = sha2::Sha256::digest(&msg).to_vec();

    // One job.
    let mut src = inv.buf_at(&mmap, 0, msg.len())?;
    src.append(&msg)?;
    let dst = inv.buf_at(&mmap, 8192, 64)?;
    let mut done = wq
        .submit_job(sha.as_ctx(), ShaJob::new(ShaAlgo::Sha256, src, dst, 1))
        .map_err(|(e, _)| e)?
        .await;
    done.status()?;
    let one = done.take_buf(ShaJob::RESP).expect("digest").data_to_vec();
    assert_eq!(one, want);

    // Four segments of a partial session (all but the last a multiple of 64 bytes).
    let session = PartialSession::new();
    let cuts = [0, 768, 1536, 2304, msg.len()];
    let mut digest = Vec::new();
    for (i, w) in cuts.windows(2).enumerate() {
        let mut req = inv.buf_at(&mmap, 16384 + w[0], w[1] - w[0])?;
        req.append(&msg[w[0]..w[1]])?;
        let resp = inv.buf_at(&mmap, 32768, 64)?;
        let job = ShaPartialJob {
            algo: ShaAlgo::Sha256,
            session: session.clone(),
            req,
            resp,
            final_segment: i == 3,
            user_data: doca_core::Data(i as u64),
        };
        let mut done = wq.submit_job(sha.as_ctx(), job).map_err(|(e, _)| e)?.await;
        done.status()?;
        digest = done.take_buf(ShaJob::RESP).expect("response").data_to_vec();
    }
    assert_eq!(digest, want);
    let hex: String = want.iter().map(|b| format!("{b:02x}")).collect();
    println!("sha: sha256 of 3000 bytes = {hex} (one job, and 4 partial segments)");
    wq.detach(sha.as_ctx())?;
    Ok(())
}
