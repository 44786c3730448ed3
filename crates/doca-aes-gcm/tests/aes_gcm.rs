//! AES-GCM tasks end to end on both engines (inline, and two engine threads): encrypt
//! and decrypt with both key sizes, both tag sizes, additional data and short IVs,
//! checked against RustCrypto's AES-GCM (an independent implementation); tampered
//! ciphertext, tag and additional data, a wrong key and a wrong IV fail the decrypt
//! with IO_FAILED, its destination unchanged and zeroed; bad sizes are refused; keys are
//! counted; tasks run as futures on tokio.

#![allow(clippy::result_large_err)]

use aes_gcm::aead::AeadInPlace;
use aes_gcm::aead::consts::{U12, U16};
use aes_gcm::{AesGcm as RcGcm, KeyInit};
use doca_aes_gcm::{AesGcm, AesGcmJob, Key, KeyType};
use doca_core::device::{self, Topology};
use doca_core::{
    AccessFlags, Buf, BufInventory, Completion, Dev, ErrorCode, Mmap, RetrieveError, WorkQ,
};
use std::sync::Arc;
use std::time::Duration;

fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0x60 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

struct Env {
    mmap: Mmap,
    inv: BufInventory,
    wq: WorkQ,
    ctx: AesGcm,
}

impl Env {
    fn new(dev: &Dev) -> Env {
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; 4 << 20]).unwrap();
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
        mmap.dev_add(dev).unwrap();
        mmap.start().unwrap();
        let mut inv = BufInventory::new(32).unwrap();
        inv.start().unwrap();
        let ctx = AesGcm::new();
        ctx.as_ctx().dev_add(dev).unwrap();
        ctx.as_ctx().start().unwrap();
        let mut wq = WorkQ::new(8).unwrap();
        ctx.as_ctx().workq_add(&mut wq).unwrap();
        Env { mmap, inv, wq, ctx }
    }

    fn data(&self, off: usize, bytes: &[u8]) -> Buf {
        let mut b = self
            .inv
            .buf_at(&self.mmap, off, bytes.len().max(1))
            .unwrap();
        b.write_data(bytes).unwrap();
        b
    }

    fn room(&self, off: usize, len: usize) -> Buf {
        self.inv.buf_at(&self.mmap, off, len).unwrap()
    }

    fn run(&mut self, job: AesGcmJob) -> Result<Completion, RetrieveError> {
        self.wq
            .submit_job(self.ctx.as_ctx(), job)
            .map_err(|(e, _)| e)
            .unwrap();
        self.wq.wait(Some(Duration::from_secs(20)))
    }
}

/// RustCrypto's encryption of `aad || pt` as DOCA lays it out: aad, ciphertext, tag.
fn reference(key: &[u8], iv: &[u8], tag: u32, aad: &[u8], pt: &[u8]) -> Vec<u8> {
    let mut nonce = [0u8; 12];
    nonce[..iv.len()].copy_from_slice(iv);
    let mut ct = pt.to_vec();
    let t: Vec<u8> = match (key.len(), tag) {
        (16, 16) => RcGcm::<aes_gcm::aes::Aes128, U12, U16>::new_from_slice(key)
            .unwrap()
            .encrypt_in_place_detached(&nonce.into(), aad, &mut ct)
            .unwrap()
            .to_vec(),
        (16, 12) => RcGcm::<aes_gcm::aes::Aes128, U12, U12>::new_from_slice(key)
            .unwrap()
            .encrypt_in_place_detached(&nonce.into(), aad, &mut ct)
            .unwrap()
            .to_vec(),
        (32, 16) => RcGcm::<aes_gcm::aes::Aes256, U12, U16>::new_from_slice(key)
            .unwrap()
            .encrypt_in_place_detached(&nonce.into(), aad, &mut ct)
            .unwrap()
            .to_vec(),
        (32, 12) => RcGcm::<aes_gcm::aes::Aes256, U12, U12>::new_from_slice(key)
            .unwrap()
            .encrypt_in_place_detached(&nonce.into(), aad, &mut ct)
            .unwrap()
            .to_vec(),
        _ => unreachable!(),
    };
    [aad, &ct, &t].concat()
}

fn payload(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect()
}

#[test]
fn round_trips_match_an_independent_implementation() {
    for threads in [0, 2] {
        let mut e = Env::new(&device(threads));
        for (raw, kind) in [
            (vec![0x11u8; 16], KeyType::Aes128),
            (payload(32, 9), KeyType::Aes256),
        ] {
            let key = e.ctx.key_create(&raw, kind).unwrap();
            for tag in [12u32, 16] {
                for (aad_len, iv) in [(0usize, payload(12, 1)), (13, payload(8, 2)), (40, vec![])] {
                    for n in [0usize, 1, 15, 4096, 65536 + 7] {
                        let pt = payload(n, n as u64);
                        let aad = payload(aad_len, 77);
                        let input = [&aad[..], &pt].concat();
                        let want = reference(&raw, &iv, tag, &aad, &pt);
                        let src = e.data(0, &input);
                        let job = AesGcmJob::encrypt(
                            src,
                            e.room(1 << 20, 1 << 20),
                            &key,
                            &iv,
                            tag,
                            aad_len as u32,
                            1,
                        )
                        .unwrap();
                        let mut c = e.run(job).unwrap();
                        let sealed = c.take_buf(AesGcmJob::DST).unwrap().data_to_vec();
                        assert_eq!(
                            sealed,
                            want,
                            "{kind:?} tag {tag} aad {aad_len} iv {} n {n}",
                            iv.len()
                        );
                        let src = e.data(2 << 20, &sealed);
                        let job = AesGcmJob::decrypt(
                            src,
                            e.room(3 << 20, 1 << 20),
                            &key,
                            &iv,
                            tag,
                            aad_len as u32,
                            2,
                        )
                        .unwrap();
                        let mut c = e.run(job).unwrap();
                        assert_eq!(c.take_buf(AesGcmJob::DST).unwrap().data_to_vec(), input);
                    }
                }
            }
        }
    }
}

fn tampered(e: &mut Env, key: &Arc<Key>, iv: &[u8], sealed: &[u8], aad: u32) {
    // A destination with old data: its length must not change, and what the task wrote
    // after it must be zeros.
    let mut dst = e.room(3 << 20, 1 << 20);
    dst.append(b"old").unwrap();
    e.mmap.write_at((3 << 20) + 3, &[0xEE; 256]).unwrap();
    let src = e.data(2 << 20, sealed);
    let job = AesGcmJob::decrypt(src, dst, key, iv, 16, aad, 3).unwrap();
    match e.run(job) {
        Err(RetrieveError::IoFailed(mut c)) => {
            assert_eq!(c.event().result, ErrorCode::IoFailed as u64);
            let msg = c.error.as_ref().unwrap().to_string();
            assert!(msg.contains("authentication tag does not match"), "{msg}");
            let d = c.take_buf(AesGcmJob::DST).unwrap();
            assert_eq!(d.data_to_vec(), b"old");
            let mut after = vec![1u8; sealed.len() - 16];
            e.mmap.read_at((3 << 20) + 3, &mut after).unwrap();
            assert!(after.iter().all(|&b| b == 0), "plaintext left behind");
        }
        other => panic!("a tampered decrypt must fail: {other:?}"),
    }
}

#[test]
fn tampering_fails_the_decrypt_and_leaves_no_plaintext() {
    for threads in [0, 2] {
        let mut e = Env::new(&device(threads));
        let raw = payload(32, 5);
        let key = e.ctx.key_create(&raw, KeyType::Aes256).unwrap();
        let iv = payload(12, 6);
        let aad = payload(20, 7);
        let pt = payload(1000, 8);
        let sealed = reference(&raw, &iv, 16, &aad, &pt);
        let n = sealed.len();
        for (what, at) in [
            ("ciphertext", 20 + 500),
            ("tag", n - 1),
            ("additional data", 3),
        ] {
            let mut bad = sealed.clone();
            bad[at] ^= 0x01;
            eprintln!("tampered {what}");
            tampered(&mut e, &key, &iv, &bad, 20);
        }
        // A wrong IV and a wrong key.
        tampered(&mut e, &key, &payload(12, 99), &sealed, 20);
        let other = e
            .ctx
            .key_create(&payload(32, 100), KeyType::Aes256)
            .unwrap();
        tampered(&mut e, &other, &iv, &sealed, 20);
        // The untouched data still decrypts.
        let src = e.data(2 << 20, &sealed);
        let job = AesGcmJob::decrypt(src, e.room(3 << 20, 4096), &key, &iv, 16, 20, 4).unwrap();
        let mut c = e.run(job).unwrap();
        assert_eq!(
            c.take_buf(AesGcmJob::DST).unwrap().data_to_vec(),
            [&aad[..], &pt].concat()
        );
    }
}

#[test]
fn bad_sizes_and_keys_are_refused() {
    let dev = device(0);
    let mut e = Env::new(&dev);
    let key = e.ctx.key_create(&[1u8; 16], KeyType::Aes128).unwrap();
    assert_eq!(
        e.ctx
            .key_create(&[1u8; 16], KeyType::Aes256)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidValue
    );
    assert_eq!(
        KeyType::from_raw(3).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    let src = e.data(0, b"x");
    assert_eq!(
        AesGcmJob::encrypt(src, e.room(4096, 64), &key, &[0; 12], 8, 0, 1)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidValue
    );
    let src = e.data(0, b"x");
    assert_eq!(
        AesGcmJob::encrypt(src, e.room(4096, 64), &key, &[0; 13], 16, 0, 1)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidValue
    );
    // More additional data than the source holds, and a decrypt shorter than its tag:
    // refused at submit.
    let src = e.data(0, b"short");
    let job = AesGcmJob::encrypt(src, e.room(4096, 64), &key, &[0; 12], 16, 10, 1).unwrap();
    let (err, _) = e.wq.submit_job(e.ctx.as_ctx(), job).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidValue);
    let src = e.data(0, &[0u8; 15]);
    let job = AesGcmJob::decrypt(src, e.room(4096, 64), &key, &[0; 12], 16, 0, 1).unwrap();
    let (err, _) = e.wq.submit_job(e.ctx.as_ctx(), job).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidValue);
    // Too little room: the task fails, nothing is written past the destination.
    e.mmap.write_at(4096 + 16, &[0xAB; 64]).unwrap();
    let src = e.data(0, &[5u8; 100]);
    let job = AesGcmJob::encrypt(src, e.room(4096, 16), &key, &[0; 12], 16, 0, 1).unwrap();
    assert!(matches!(e.run(job), Err(RetrieveError::IoFailed(_))));
    let mut past = [0u8; 64];
    e.mmap.read_at(4096 + 16, &mut past).unwrap();
    assert!(past.iter().all(|&b| b == 0xAB));
    // Keys are counted until dropped.
    assert_eq!(e.ctx.keys_alive(), 1);
    drop(key);
    assert_eq!(e.ctx.keys_alive(), 0);
    // No device yet: no key.
    let bare = AesGcm::new();
    assert_eq!(
        bare.key_create(&[0; 16], KeyType::Aes128)
            .unwrap_err()
            .code(),
        ErrorCode::BadState
    );
}

#[test]
fn tasks_as_futures_on_tokio() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for threads in [0, 2] {
            let dev = device(threads);
            let e = Env::new(&dev);
            let key = e.ctx.key_create(&[3u8; 32], KeyType::Aes256).unwrap();
            let Env {
                mmap,
                inv,
                mut wq,
                ctx,
            } = e;
            ctx.as_ctx().workq_rm(&mut wq).unwrap();
            let wq = doca_core::aio::AsyncWorkQ::new(WorkQ::new(8).unwrap()).unwrap();
            wq.attach(ctx.as_ctx()).unwrap();
            drop(inv);
            let mut inv = BufInventory::new(8).unwrap();
            inv.start().unwrap();
            let mut src = inv.buf_at(&mmap, 0, 4096).unwrap();
            src.append(&[9u8; 4000]).unwrap();
            let dst = inv.buf_at(&mmap, 8192, 8192).unwrap();
            let job = AesGcmJob::encrypt(src, dst, &key, &[4; 12], 12, 0, 1).unwrap();
            let mut done = wq
                .submit_job(ctx.as_ctx(), job)
                .map_err(|(e, _)| e)
                .unwrap()
                .await;
            done.status().unwrap();
            let sealed = done.take_buf(AesGcmJob::DST).unwrap();
            assert_eq!(
                sealed.data_to_vec(),
                reference(&[3u8; 32], &[4; 12], 12, &[], &[9u8; 4000])
            );
            let back = inv.buf_at(&mmap, 32768, 8192).unwrap();
            let job = AesGcmJob::decrypt(sealed, back, &key, &[4; 12], 12, 0, 2).unwrap();
            let mut done = wq
                .submit_job(ctx.as_ctx(), job)
                .map_err(|(e, _)| e)
                .unwrap()
                .await;
            done.status().unwrap();
            assert_eq!(
                done.take_buf(AesGcmJob::DST).unwrap().data_to_vec(),
                vec![9u8; 4000]
            );
            wq.detach(ctx.as_ctx()).unwrap();
        }
    });
}

#[test]
fn lists_as_source_and_destination() {
    for threads in [0, 2] {
        let mut e = Env::new(&device(threads));
        let raw = payload(16, 21);
        let key = e.ctx.key_create(&raw, KeyType::Aes128).unwrap();
        let iv = payload(12, 22);
        let input = payload(10_000, 23);
        let want = reference(&raw, &iv, 16, &input[..8], &input[8..]);
        let mut src = e.data(0, &input[..3000]);
        src.chain(e.data(8192, &input[3000..3001])).unwrap();
        src.chain(e.data(16384, &input[3001..])).unwrap();
        let mut dst = e.room(1 << 20, 4000);
        dst.chain(e.room((1 << 20) + 8192, 4000)).unwrap();
        dst.chain(e.room((1 << 20) + 16384, 4000)).unwrap();
        let job = AesGcmJob::encrypt(src, dst, &key, &iv, 16, 8, 1).unwrap();
        let mut c = e.run(job).unwrap();
        let d = c.take_buf(AesGcmJob::DST).unwrap();
        let lens: Vec<usize> = d.iter().map(|b| b.data_len()).collect();
        assert_eq!(lens, [4000, 4000, 2016]);
        assert_eq!(d.list_data_to_vec(), want);
        // A tampered list source: nothing lands in the destination list.
        let mut bad = want.clone();
        bad[5000] ^= 0x80;
        let mut src = e.data(2 << 20, &bad[..5000]);
        src.chain(e.data((2 << 20) + 8192, &bad[5000..])).unwrap();
        let mut dst = e.room(3 << 20, 6000);
        dst.chain(e.room((3 << 20) + 8192, 6000)).unwrap();
        let job = AesGcmJob::decrypt(src, dst, &key, &iv, 16, 8, 2).unwrap();
        match e.run(job) {
            Err(RetrieveError::IoFailed(mut c)) => {
                let d = c.take_buf(AesGcmJob::DST).unwrap();
                assert!(d.iter().all(|b| b.data_len() == 0));
            }
            other => panic!("{other:?}"),
        }
    }
}
