//! After start (and a first task on each thread, which makes that thread's deflate
//! state), compress and decompress tasks allocate nothing, on both engines.

use doca_compress::{Compress, DeflateJob, Lz4Job};
use doca_core::device::{self, Topology};
use doca_core::exec::Job;
use doca_core::{AccessFlags, Buf, BufInventory, Dev, Mmap, WorkQ};
use std::time::Duration;

#[global_allocator]
static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;

fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0xa0 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

#[test]
fn compress_tasks_allocate_nothing() {
    let text: Vec<u8> = b"storage engineers compress blocks next to erasure coding "
        .iter()
        .copied()
        .cycle()
        .take(64 << 10)
        .collect();
    let lz4 = lz4_flex::block::compress(&text);
    for threads in [0, 2] {
        let dev = device(threads);
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; 1 << 20]).unwrap();
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
        mmap.dev_add(&dev).unwrap();
        mmap.start().unwrap();
        mmap.write_at(0, &text).unwrap();
        mmap.write_at(128 << 10, &lz4).unwrap();
        let mut inv = BufInventory::new(8).unwrap();
        inv.start().unwrap();
        let c = Compress::new();
        c.as_ctx().dev_add(&dev).unwrap();
        c.as_ctx().start().unwrap();
        let mut wq = WorkQ::new(4).unwrap();
        c.as_ctx().workq_add(&mut wq).unwrap();
        let mut bufs: Vec<Buf> = vec![
            inv.buf_with_data_at(&mmap, 0, text.len()).unwrap(),
            inv.buf_at(&mmap, 256 << 10, 64 << 10).unwrap(),
            inv.buf_with_data_at(&mmap, 128 << 10, lz4.len()).unwrap(),
            inv.buf_at(&mmap, 512 << 10, 64 << 10).unwrap(),
        ];
        let mut round = |count: bool| {
            doca_testkit::set_counting(count);
            let mut b = bufs.drain(..);
            let (src, mut dst, lsrc, mut ldst) = (
                b.next().unwrap(),
                b.next().unwrap(),
                b.next().unwrap(),
                b.next().unwrap(),
            );
            drop(b);
            dst.reset_data_len();
            ldst.reset_data_len();
            wq.submit_job(c.as_ctx(), DeflateJob::compress(src, dst, 0).into_record())
                .map_err(|(e, _)| e)
                .unwrap();
            wq.submit_job(c.as_ctx(), Lz4Job::block(lsrc, ldst, 1).into_record())
                .map_err(|(e, _)| e)
                .unwrap();
            let mut back: [Option<(Buf, Buf)>; 2] = [None, None];
            for _ in 0..2 {
                let mut done = wq.wait(Some(Duration::from_secs(30))).unwrap();
                let i = done.event().user_data.u64() as usize;
                back[i] = Some((
                    done.take_buf(DeflateJob::SRC).unwrap(),
                    done.take_buf(DeflateJob::DST).unwrap(),
                ));
            }
            doca_testkit::set_counting(false);
            for (s, d) in back.into_iter().map(Option::unwrap) {
                bufs.push(s);
                bufs.push(d);
            }
        };
        // Warm-up: every engine thread makes its deflate state once (32 rounds: each
        // of two engine threads takes a compress task all but surely).
        for _ in 0..32 {
            round(false);
        }
        doca_testkit::reset();
        for _ in 0..20 {
            round(true);
        }
        assert_eq!(
            doca_testkit::count(),
            0,
            "compress tasks allocated ({threads} engine threads)"
        );
    }
}
