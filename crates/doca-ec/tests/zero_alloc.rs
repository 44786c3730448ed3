//! After start, submitting, executing (small jobs and large ones shared by the engine
//! threads) and retrieving EC jobs allocates nothing, on both engines.

use doca_core::device::{self, Topology};
use doca_core::exec::Job;
use doca_core::{AccessFlags, Buf, BufInventory, Dev, Mmap, WorkQ};
use doca_ec::{Ec, EcCreateJob, EcRecoverJob, MatrixType};
use std::time::Duration;

#[global_allocator]
static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;

/// A device running jobs on `threads` engine threads (each test file on its own bus).
fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0x90 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

#[test]
fn ec_jobs_allocate_nothing() {
    for threads in [0, 2] {
        let dev = device(threads);
        // Small jobs (4 + 2 of 4 KiB) and large ones (8 + 2 of 1 MiB, split on engines).
        for (m, k, block) in [(4usize, 2usize, 4096usize), (8, 2, 1 << 20)] {
            let mut mmap = Mmap::new();
            mmap.set_memory(vec![3u8; 2 * (m + k) * block]).unwrap();
            mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
            mmap.dev_add(&dev).unwrap();
            mmap.start().unwrap();
            let mut inv = BufInventory::new(8).unwrap();
            inv.start().unwrap();
            let ec = Ec::new();
            ec.as_ctx().dev_add(&dev).unwrap();
            ec.as_ctx().start().unwrap();
            let mut wq = WorkQ::new(4).unwrap();
            ec.as_ctx().workq_add(&mut wq).unwrap();
            let coding = ec.matrix_create(MatrixType::Cauchy, m, k).unwrap();
            let rec = ec.recover_matrix_create(&coding, &[0, 1]).unwrap();
            let mut bufs: Vec<(Buf, Buf)> = vec![
                (
                    inv.buf_with_data_at(&mmap, 0, m * block).unwrap(),
                    inv.buf_at(&mmap, m * block, k * block).unwrap(),
                ),
                (
                    inv.buf_with_data_at(&mmap, (m + k) * block, m * block)
                        .unwrap(),
                    inv.buf_at(&mmap, (2 * m + k) * block, 2 * block).unwrap(),
                ),
            ];
            let mut round = |count: bool| {
                doca_testkit::set_counting(count);
                for (i, (src, mut dst)) in bufs.drain(..).enumerate() {
                    dst.reset_data_len();
                    let job = if i == 0 {
                        EcCreateJob::new(&coding, src, dst, i as u64).into_record()
                    } else {
                        EcRecoverJob::new(&rec, src, dst, i as u64).into_record()
                    };
                    wq.submit_job(ec.as_ctx(), job).map_err(|(e, _)| e).unwrap();
                }
                let mut back = [None, None];
                for _ in 0..2 {
                    let mut c = wq.wait(Some(Duration::from_secs(30))).unwrap();
                    let i = c.event().user_data.u64() as usize;
                    back[i] = Some((
                        c.take_buf(EcCreateJob::SRC).unwrap(),
                        c.take_buf(EcCreateJob::DST).unwrap(),
                    ));
                }
                doca_testkit::set_counting(false);
                bufs.extend(back.into_iter().map(Option::unwrap));
            };
            round(false);
            doca_testkit::reset();
            for _ in 0..20 {
                round(true);
            }
            assert_eq!(
                doca_testkit::count(),
                0,
                "allocations with {threads} engine threads, {m}+{k} x {block}"
            );
            drop(bufs);
            ec.as_ctx().workq_rm(&mut wq).unwrap();
        }
    }
}
