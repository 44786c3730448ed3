//! After start and key creation, encrypt and decrypt tasks allocate nothing, on both
//! engines (the key travels with each record as a reference count).

use doca_aes_gcm::{AesGcm, AesGcmJob, KeyType};
use doca_core::device::{self, Topology};
use doca_core::exec::Job;
use doca_core::{AccessFlags, Buf, BufInventory, Dev, Mmap, WorkQ};
use std::time::Duration;

#[global_allocator]
static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;

fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0xb0 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

#[test]
fn aes_gcm_tasks_allocate_nothing() {
    for threads in [0, 2] {
        let dev = device(threads);
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; 1 << 20]).unwrap();
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
        mmap.dev_add(&dev).unwrap();
        mmap.start().unwrap();
        mmap.write_at(0, &[0x5a; 8192]).unwrap();
        let mut inv = BufInventory::new(8).unwrap();
        inv.start().unwrap();
        let aes = AesGcm::new();
        aes.as_ctx().dev_add(&dev).unwrap();
        aes.as_ctx().start().unwrap();
        let key = aes.key_create(&[1u8; 32], KeyType::Aes256).unwrap();
        let mut wq = WorkQ::new(4).unwrap();
        aes.as_ctx().workq_add(&mut wq).unwrap();
        let mut bufs: Vec<Buf> = vec![
            inv.buf_with_data_at(&mmap, 0, 8192).unwrap(),
            inv.buf_at(&mmap, 64 << 10, 16 << 10).unwrap(),
            inv.buf_at(&mmap, 128 << 10, 16 << 10).unwrap(),
        ];
        let mut round = |count: bool| {
            doca_testkit::set_counting(count);
            let mut b = bufs.drain(..);
            let (src, mut sealed, mut back) =
                (b.next().unwrap(), b.next().unwrap(), b.next().unwrap());
            drop(b);
            sealed.reset_data_len();
            back.reset_data_len();
            let job = AesGcmJob::encrypt(src, sealed, &key, &[2; 12], 16, 16, 0).unwrap();
            wq.submit_job(aes.as_ctx(), job.into_record())
                .map_err(|(e, _)| e)
                .unwrap();
            let mut done = wq.wait(Some(Duration::from_secs(30))).unwrap();
            let (src, sealed) = (
                done.take_buf(AesGcmJob::SRC).unwrap(),
                done.take_buf(AesGcmJob::DST).unwrap(),
            );
            drop(done);
            let job = AesGcmJob::decrypt(sealed, back, &key, &[2; 12], 16, 16, 1).unwrap();
            wq.submit_job(aes.as_ctx(), job.into_record())
                .map_err(|(e, _)| e)
                .unwrap();
            let mut done = wq.wait(Some(Duration::from_secs(30))).unwrap();
            let (sealed, back) = (
                done.take_buf(AesGcmJob::SRC).unwrap(),
                done.take_buf(AesGcmJob::DST).unwrap(),
            );
            drop(done);
            doca_testkit::set_counting(false);
            assert_eq!(back.data_len(), 8192);
            bufs.push(src);
            bufs.push(sealed);
            bufs.push(back);
        };
        for _ in 0..8 {
            round(false);
        }
        doca_testkit::reset();
        for _ in 0..20 {
            round(true);
        }
        assert_eq!(
            doca_testkit::count(),
            0,
            "AES-GCM tasks allocated ({threads} engine threads)"
        );
    }
}
