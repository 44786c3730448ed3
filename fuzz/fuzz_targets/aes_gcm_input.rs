//! Hostile sealed data: bytes decrypted by AES-GCM tasks (tag of 12 or 16 bytes, some
//! additional data, a list source or not) into a destination between two guards, half
//! the time after sealing a plaintext with the same key and flipping the bits the input
//! names. Every task ends: a genuine sealed block decrypts to its plaintext; anything
//! else fails with `IO_FAILED` (a tag that does not match) or `INVALID_VALUE` (sizes),
//! the destination's length stays 0 and its room holds no plaintext; nothing outside
//! the destination is written.

#![no_main]

use doca_aes_gcm::{AesGcm, AesGcmJob, Key, KeyType};
use doca_core::{AccessFlags, BufInventory, ErrorCode, Mmap, RetrieveError, WorkQ};
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

const GUARD: usize = 4096;
const ROOM: usize = 8192;
const SRC: usize = 2 * GUARD + ROOM;
const MEM: usize = SRC + 3 * 65536;

struct Env {
    dev: doca_core::Dev,
    aes: AesGcm,
    key: Arc<Key>,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let dev = doca_core::devinfo_list().unwrap()[0].open().unwrap();
        let aes = AesGcm::new();
        aes.as_ctx().dev_add(&dev).unwrap();
        aes.as_ctx().start().unwrap();
        let key = aes.key_create(&[0x42; 32], KeyType::Aes256).unwrap();
        Env { dev, aes, key }
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 || data.len() > 65536 {
        return;
    }
    let (mode, input) = (data[0], &data[1..]);
    let tag = if mode & 1 == 0 { 16 } else { 12 };
    let aad = u32::from((mode >> 1) & 7) * 3;
    let iv = [mode; 12];
    let e = env();
    let mut mmap = Mmap::new();
    mmap.set_memory(vec![0xa5u8; MEM]).unwrap();
    mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
    mmap.dev_add(&e.dev).unwrap();
    mmap.start().unwrap();
    let mut inv = BufInventory::new(8).unwrap();
    inv.start().unwrap();
    let mut wq = WorkQ::new(2).unwrap();
    e.aes.as_ctx().workq_add(&mut wq).unwrap();
    // Half the time: seal the input first (with the same key and IV), then flip bits.
    let mut sealed = input.to_vec();
    let genuine = mode & 0x10 != 0 && input.len() >= aad as usize;
    if genuine {
        mmap.write_at(SRC + 65536, input).unwrap();
        let src = inv.buf_with_data_at(&mmap, SRC + 65536, input.len()).unwrap();
        let dst = inv.buf_at(&mmap, SRC + 2 * 65536, 65536).unwrap();
        let job = AesGcmJob::encrypt(src, dst, &e.key, &iv, tag, aad, 0).unwrap();
        wq.submit_job(e.aes.as_ctx(), job).map_err(|(e, _)| e).unwrap();
        let mut done = wq.wait(None).unwrap();
        sealed = done.take_buf(AesGcmJob::DST).unwrap().data_to_vec();
        if mode & 0x20 != 0 {
            let at = usize::from(mode >> 6) * 7 % sealed.len();
            sealed[at] ^= 1 << (mode % 8);
        }
    }
    mmap.write_at(SRC, &sealed).unwrap();
    let src = if mode & 0x40 != 0 && sealed.len() > 2 {
        let mut a = inv.buf_with_data_at(&mmap, SRC, sealed.len() / 2).unwrap();
        let b = inv
            .buf_with_data_at(&mmap, SRC + sealed.len() / 2, sealed.len() - sealed.len() / 2)
            .unwrap();
        a.chain(b).map_err(|(e, _)| e).unwrap();
        a
    } else {
        inv.buf_with_data_at(&mmap, SRC, sealed.len()).unwrap()
    };
    let dst = inv.buf_at(&mmap, GUARD, ROOM).unwrap();
    let job = AesGcmJob::decrypt(src, dst, &e.key, &iv, tag, aad, 0).unwrap();
    let untouched = genuine && mode & 0x20 == 0;
    match wq.submit_job(e.aes.as_ctx(), job) {
        Err((err, _)) => assert_eq!(err.code(), ErrorCode::InvalidValue),
        Ok(()) => match wq.wait(None) {
            Ok(mut done) => {
                let d = done.take_buf(AesGcmJob::DST).unwrap();
                assert!(d.data_len() <= ROOM);
                if untouched {
                    assert_eq!(d.data_to_vec(), input);
                }
            }
            Err(RetrieveError::IoFailed(mut done)) => {
                let r = done.event().result;
                assert!(
                    r == ErrorCode::IoFailed as u64 || r == ErrorCode::InvalidValue as u64,
                    "{r}"
                );
                // A genuine block fails only for lack of room.
                assert!(!untouched || input.len() > ROOM, "a genuine block failed");
                let d = done.take_buf(AesGcmJob::DST).unwrap();
                assert_eq!(d.data_len(), 0);
                let mut room = vec![0u8; ROOM];
                mmap.read_at(GUARD, &mut room).unwrap();
                assert!(room.iter().all(|&x| x == 0xa5 || x == 0), "plaintext left behind");
            }
            Err(e) => panic!("{e:?}"),
        },
    }
    let mut guards = vec![0u8; GUARD];
    mmap.read_at(0, &mut guards).unwrap();
    assert!(guards.iter().all(|&x| x == 0xa5), "written before the destination");
    mmap.read_at(GUARD + ROOM, &mut guards).unwrap();
    assert!(guards.iter().all(|&x| x == 0xa5), "written after the destination");
    e.aes.as_ctx().workq_rm(&mut wq).unwrap();
});
