//! AES-256-GCM encrypt and decrypt tasks (128-bit tag) through a `doca_aes_gcm` context
//! against OpenSSL's EVP interface (the system's libcrypto) called directly, in the same
//! run, on 4 KiB and 64 KiB blocks. Throughput is GB/s of plaintext.

use crate::ec::{Runner, measure_all};
use clap::Args;
use doca_aes_gcm::{AesGcm, AesGcmJob, KeyType};
use doca_core::exec::Job;
use doca_core::{Buf, WorkQ};
use openssl::cipher::Cipher;
use openssl::cipher_ctx::CipherCtx;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct AesGcmArgs {
    /// Samples per measurement (the median is reported).
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Length of one sample in milliseconds.
    #[arg(long, default_value_t = 40)]
    sample_ms: u64,
    /// A short run to check that everything works.
    #[arg(long)]
    quick: bool,
}

const KEY: [u8; 32] = [0x2b; 32];
const IV: [u8; 12] = [0x5c; 12];

/// OpenSSL's EVP with its key set once (as the task's key is): each operation sets
/// the IV, runs, and makes or checks the tag.
struct Ossl {
    enc: CipherCtx,
    dec: CipherCtx,
}

impl Ossl {
    fn new() -> Ossl {
        let mut enc = CipherCtx::new().expect("ctx");
        enc.encrypt_init(Some(Cipher::aes_256_gcm()), Some(&KEY), None)
            .expect("init");
        let mut dec = CipherCtx::new().expect("ctx");
        dec.decrypt_init(Some(Cipher::aes_256_gcm()), Some(&KEY), None)
            .expect("init");
        Ossl { enc, dec }
    }

    /// Encrypts `pt` into `out` (ciphertext, then the 16-byte tag).
    fn seal(&mut self, pt: &[u8], out: &mut [u8]) {
        let n = pt.len();
        self.enc.encrypt_init(None, None, Some(&IV)).expect("iv");
        let k = self
            .enc
            .cipher_update(pt, Some(&mut out[..n]))
            .expect("update");
        self.enc.cipher_final(&mut out[k..n]).expect("final");
        self.enc.tag(&mut out[n..n + 16]).expect("tag");
    }

    /// Decrypts and authenticates `sealed` (ciphertext, tag) into `out`.
    fn open(&mut self, sealed: &[u8], out: &mut [u8]) {
        let n = sealed.len() - 16;
        self.dec.decrypt_init(None, None, Some(&IV)).expect("iv");
        self.dec.set_tag(&sealed[n..]).expect("tag");
        let k = self
            .dec
            .cipher_update(&sealed[..n], Some(&mut out[..n]))
            .expect("update");
        self.dec.cipher_final(&mut out[k..n]).expect("authentic");
    }
}

pub fn run(a: &AesGcmArgs) {
    let (reps, sample) = if a.quick {
        (3, Duration::from_millis(5))
    } else {
        (a.reps.max(1), Duration::from_millis(a.sample_ms))
    };
    println!("median of {reps} samples; samples of each runner taken in turn; GB/s of plaintext\n");
    println!("| operation | block | ours (task) | OpenSSL EVP | ours/OpenSSL |");
    println!("|---|---|---|---|---|");
    let dev = doca_core::devinfo_list().expect("devices")[0]
        .open()
        .expect("open");
    let (mmap, inv) = doca_tools::local_memory(&dev, vec![0x61u8; 1 << 20], 8).expect("memory");
    let aes = AesGcm::new();
    aes.as_ctx().dev_add(&dev).expect("dev_add");
    aes.as_ctx().start().expect("start");
    let key = aes.key_create(&KEY, KeyType::Aes256).expect("key");
    let mut wq = WorkQ::new(4).expect("workq");
    aes.as_ctx().workq_add(&mut wq).expect("workq_add");
    for size in [4096usize, 65536] {
        let pt = vec![0x61u8; size];
        mmap.write_at(0, &pt).expect("write");
        let mut bufs: Option<(Buf, Buf)> = Some((
            inv.buf_with_data_at(&mmap, 0, size).expect("src"),
            inv.buf_at(&mmap, 256 << 10, size + 64).expect("dst"),
        ));
        let run_task = |wq: &mut WorkQ, bufs: &mut Option<(Buf, Buf)>, encrypt: bool| {
            let (src, mut dst) = bufs.take().expect("buffers");
            dst.reset_data_len();
            let job = if encrypt {
                AesGcmJob::encrypt(src, dst, &key, &IV, 16, 0, 0)
            } else {
                AesGcmJob::decrypt(src, dst, &key, &IV, 16, 0, 0)
            }
            .expect("job");
            wq.submit_job(aes.as_ctx(), job.into_record())
                .map_err(|(e, _)| e)
                .expect("submit");
            let mut done = wq.wait(Some(Duration::from_secs(30))).expect("task");
            let src = done.take_buf(AesGcmJob::SRC).expect("src");
            let dst = done.take_buf(AesGcmJob::DST).expect("dst");
            *bufs = Some((src, dst));
        };
        let mut sealed = vec![0u8; size + 16];
        let mut ossl = Ossl::new();
        ossl.seal(&pt, &mut sealed);
        // Ours agrees with OpenSSL.
        run_task(&mut wq, &mut bufs, true);
        assert!(
            bufs.as_ref().expect("bufs").1.data_to_vec() == sealed,
            "ours and OpenSSL differ"
        );
        let rates = {
            let wq = &mut wq;
            let bufs = &mut bufs;
            let (pt, sealed_c, ossl) = (&pt, &mut sealed.clone(), &mut ossl);
            let mut runners: Vec<Runner<'_>> = vec![
                Box::new(|| run_task(wq, bufs, true)),
                Box::new(|| ossl.seal(pt, sealed_c)),
            ];
            measure_all(size, reps, sample, &mut runners)
        };
        println!(
            "| encrypt | {} KiB | {:.2} GB/s | {:.2} GB/s | {:.2}x |",
            size >> 10,
            rates[0],
            rates[1],
            rates[0] / rates[1]
        );
        drop(bufs);
        mmap.write_at(0, &sealed).expect("write");
        let mut bufs = Some((
            inv.buf_with_data_at(&mmap, 0, size + 16).expect("src"),
            inv.buf_at(&mmap, 256 << 10, size + 64).expect("dst"),
        ));
        let mut back = vec![0u8; size + 32];
        let rates = {
            let wq = &mut wq;
            let bufs2 = &mut bufs;
            let mut runners: Vec<Runner<'_>> = vec![
                Box::new(|| run_task(wq, bufs2, false)),
                Box::new(|| ossl.open(&sealed, &mut back)),
            ];
            measure_all(size, reps, sample, &mut runners)
        };
        assert!(
            bufs.as_ref().expect("bufs").1.data_to_vec() == pt,
            "decrypt"
        );
        println!(
            "| decrypt | {} KiB | {:.2} GB/s | {:.2} GB/s | {:.2}x |",
            size >> 10,
            rates[0],
            rates[1],
            rates[0] / rates[1]
        );
    }
}
