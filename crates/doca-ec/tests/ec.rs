//! The EC guide's flows through the context, on both engines (inline, and two engine
//! threads): create, delete blocks, recover, compare; updates; Galois multiply; events;
//! and the misuse cases, each with its DOCA code and a message.

#![allow(clippy::result_large_err)]

use doca_core::device::{self, Topology};
use doca_core::exec::Job;
use doca_core::{
    AccessFlags, Buf, BufInventory, Completion, Dev, ErrorCode, Mmap, RetrieveError, WorkQ,
};
use doca_ec::{
    Ec, EcCreateJob, EcGaloisMulJob, EcRecoverJob, EcUpdateJob, JOB_CREATE, JOB_GALOIS_MUL,
    JOB_RECOVER, JOB_UPDATE, Matrix, MatrixType,
};
use std::time::Duration;

/// A device running jobs on `threads` engine threads (each test file on its own bus).
fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0x70 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

fn engines() -> [Dev; 2] {
    [device(0), device(2)]
}

fn bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

struct Env {
    ec: Ec,
    wq: WorkQ,
    mmap: Mmap,
    inv: BufInventory,
    /// Next free offset in the mmap.
    next: usize,
}

impl Env {
    fn new(dev: &Dev, size: usize, access: AccessFlags) -> Env {
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; size]).unwrap();
        mmap.set_permissions(access).unwrap();
        mmap.dev_add(dev).unwrap();
        mmap.start().unwrap();
        let mut inv = BufInventory::new(512).unwrap();
        inv.start().unwrap();
        let ec = Ec::new();
        ec.as_ctx().dev_add(dev).unwrap();
        ec.as_ctx().start().unwrap();
        let mut wq = WorkQ::new(16).unwrap();
        ec.as_ctx().workq_add(&mut wq).unwrap();
        Env {
            ec,
            wq,
            mmap,
            inv,
            next: 0,
        }
    }

    /// A buffer of `len` bytes holding `data` (at most `len`).
    fn buf(&mut self, len: usize, data: &[u8]) -> Buf {
        let off = self.next;
        self.next += len.next_multiple_of(64);
        let mut b = self.inv.buf_at(&self.mmap, off, len).unwrap();
        if !data.is_empty() {
            b.write_data(data).unwrap();
        }
        b
    }

    /// `data` as a list of elements of the given sizes (the last takes the rest).
    fn list(&mut self, data: &[u8], sizes: &[usize]) -> Buf {
        let mut head: Option<Buf> = None;
        let mut at = 0;
        for (i, &n) in sizes.iter().enumerate() {
            let n = if i + 1 == sizes.len() {
                data.len() - at
            } else {
                n
            };
            let b = self.buf(n, &data[at..at + n]);
            at += n;
            match &mut head {
                None => head = Some(b),
                Some(h) => h.chain(b).map_err(|(e, _)| e).unwrap(),
            }
        }
        head.unwrap()
    }

    fn submit(&mut self, job: impl Job) -> Result<(), doca_core::Error> {
        self.wq
            .submit_job(self.ec.as_ctx(), job)
            .map_err(|(e, _)| e)
    }

    fn wait(&mut self) -> Result<Completion, RetrieveError> {
        self.wq.wait(Some(Duration::from_secs(30)))
    }

    /// Runs a job to completion; the destination's data.
    fn run(&mut self, job: impl Job) -> Vec<u8> {
        self.submit(job).unwrap();
        let mut c = self.wait().unwrap();
        c.take_buf(doca_core::JobRecord::DST).unwrap().data_to_vec()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        while self.wq.inflight() > 0 {
            let _ = self.wait();
        }
        let _ = self.ec.as_ctx().workq_rm(&mut self.wq);
    }
}

/// Splits `data` into `n` blocks.
fn blocks(data: &[u8], n: usize) -> Vec<&[u8]> {
    data.chunks(data.len() / n).collect()
}

/// The guide's flow: create redundancy, delete blocks, recover them, compare.
fn round_trip(
    dev: &Dev,
    kind: MatrixType,
    m: usize,
    k: usize,
    block: usize,
    missing: &[u32],
    sg: bool,
) {
    let mut e = Env::new(
        dev,
        4 * (m + k) * block + (1 << 16),
        AccessFlags::LOCAL_READ_WRITE,
    );
    let data = bytes(m * block, (m * 1000 + k * 10 + block) as u64);
    let coding = e.ec.matrix_create(kind, m, k).unwrap();
    let src = if sg {
        // Elements that cut blocks at 64-byte edges.
        e.list(&data, &[(block / 128) * 64 + 64, 3 * 64, block])
    } else {
        e.buf(data.len(), &data)
    };
    let dst = e.buf(k * block, &[]);
    let parity = e.run(EcCreateJob::new(&coding, src, dst, 1));
    assert_eq!(parity.len(), k * block);
    let all: Vec<&[u8]> = blocks(&data, m)
        .into_iter()
        .chain(blocks(&parity, k))
        .collect();

    let rec = e.ec.recover_matrix_create(&coding, missing).unwrap();
    let survivors = rec.survivors().unwrap().to_vec();
    assert_eq!(survivors.len(), m);
    let remaining: Vec<u8> = survivors
        .iter()
        .flat_map(|&i| all[i].iter().copied())
        .collect();
    let src = if sg {
        e.list(&remaining, &[64, block + 128, 5 * 64])
    } else {
        e.buf(remaining.len(), &remaining)
    };
    let dst = e.buf(missing.len() * block, &[]);
    let out = e.run(EcRecoverJob::new(&rec, src, dst, 2));
    for (o, &i) in missing.iter().enumerate() {
        assert!(
            out[o * block..(o + 1) * block] == *all[i as usize],
            "{kind:?} {m}+{k} block {block}: block {i} not rebuilt (missing {missing:?}, sg {sg})"
        );
    }
}

#[test]
fn create_delete_recover_compare() {
    for dev in engines() {
        for kind in [MatrixType::Cauchy, MatrixType::Vandermonde] {
            for sg in [false, true] {
                round_trip(&dev, kind, 2, 2, 1024, &[0], sg);
                round_trip(&dev, kind, 4, 2, 4096, &[1, 3], sg);
                round_trip(&dev, kind, 10, 4, 1024, &[0, 5, 9, 12], sg);
                round_trip(&dev, kind, 6, 3, 64 * 33, &[7, 2], sg);
            }
        }
        // Every single and double erasure of 4+2 with Cauchy.
        for a in 0..6u32 {
            round_trip(&dev, MatrixType::Cauchy, 4, 2, 512, &[a], false);
            for b in 0..6u32 {
                if a != b {
                    round_trip(&dev, MatrixType::Cauchy, 4, 2, 512, &[a, b], false);
                }
            }
        }
    }
}

#[test]
fn large_jobs_are_shared_by_the_engine_threads() {
    // 8 + 2 blocks of 1 MiB: above the size that splits a job.
    for dev in engines() {
        round_trip(&dev, MatrixType::Cauchy, 8, 2, 1 << 20, &[3, 9], false);
        round_trip(&dev, MatrixType::Cauchy, 8, 2, 1 << 20, &[0, 4], true);
    }
}

#[test]
fn update_equals_re_encoding_and_galois_mul_equals_create() {
    for dev in engines() {
        let (m, k, block) = (6, 3, 2048);
        let mut e = Env::new(&dev, 1 << 20, AccessFlags::LOCAL_READ_WRITE);
        let coding = e.ec.matrix_create(MatrixType::Cauchy, m, k).unwrap();
        let old = bytes(m * block, 11);
        let src = e.buf(old.len(), &old);
        let dst = e.buf(k * block, &[]);
        let parity = e.run(EcCreateJob::new(&coding, src, dst, 0));
        // Data blocks 1 and 4 change.
        let mut new = old.clone();
        new[block..2 * block].copy_from_slice(&bytes(block, 12));
        new[4 * block..5 * block].copy_from_slice(&bytes(block, 13));
        let upd = e.ec.update_matrix_create(&coding, &[1, 4]).unwrap();
        assert_eq!(upd.updated().unwrap(), &[1, 4]);
        let mut src_bytes = Vec::new();
        for i in [1, 4] {
            src_bytes.extend_from_slice(&old[i * block..(i + 1) * block]);
            src_bytes.extend_from_slice(&new[i * block..(i + 1) * block]);
        }
        src_bytes.extend_from_slice(&parity);
        let src = e.buf(src_bytes.len(), &src_bytes);
        let dst = e.buf(k * block, &[]);
        let updated = e.run(EcUpdateJob::new(&upd, src, dst, 0));
        let src = e.buf(new.len(), &new);
        let dst = e.buf(k * block, &[]);
        let fresh = e.run(EcCreateJob::new(&coding, src, dst, 0));
        assert_eq!(
            updated, fresh,
            "updated redundancy differs from re-encoding"
        );
        let src = e.buf(new.len(), &new);
        let dst = e.buf(k * block, &[]);
        assert_eq!(e.run(EcGaloisMulJob::new(&coding, src, dst, 0)), fresh);
    }
}

#[test]
fn raw_matrix_equals_the_named_one() {
    let dev = device(0);
    let mut e = Env::new(&dev, 1 << 20, AccessFlags::LOCAL_READ_WRITE);
    let (m, k, block) = (5, 3, 256);
    let cauchy = ec_codec::CodingMatrix::cauchy(m, k).unwrap();
    // raw[j * K + r] = coefficient (r, j).
    let mut raw = vec![0u8; m * k];
    for j in 0..m {
        for r in 0..k {
            raw[j * k + r] = cauchy.coef(r, j);
        }
    }
    let a = e.ec.matrix_from_raw(&raw, m, k).unwrap();
    let b = e.ec.matrix_create(MatrixType::Cauchy, m, k).unwrap();
    let data = bytes(m * block, 5);
    let (s1, d1) = (e.buf(data.len(), &data), e.buf(k * block, &[]));
    let (s2, d2) = (e.buf(data.len(), &data), e.buf(k * block, &[]));
    assert_eq!(
        e.run(EcCreateJob::new(&a, s1, d1, 0)),
        e.run(EcCreateJob::new(&b, s2, d2, 0))
    );
}

#[test]
fn events_carry_job_type_and_user_data() {
    for dev in engines() {
        let mut e = Env::new(&dev, 1 << 20, AccessFlags::LOCAL_READ_WRITE);
        let coding = e.ec.matrix_create(MatrixType::Cauchy, 4, 2).unwrap();
        let rec = e.ec.recover_matrix_create(&coding, &[0, 1]).unwrap();
        let upd = e.ec.update_matrix_create(&coding, &[2]).unwrap();
        let block = 128;
        let mut want = Vec::new();
        for (i, (t, mx, ins, outs)) in [
            (JOB_CREATE, &coding, 4, 2),
            (JOB_RECOVER, &rec, 4, 2),
            (JOB_UPDATE, &upd, 4, 2),
            (JOB_GALOIS_MUL, &coding, 4, 2),
        ]
        .into_iter()
        .enumerate()
        {
            let src = e.buf(ins * block, &bytes(ins * block, i as u64));
            let dst = e.buf(outs * block, &[]);
            let ud = 0xEC00 + i as u64;
            e.submit(doca_ec::job_record(t, mx, src, dst, ud)).unwrap();
            want.push((t, ud));
        }
        let mut got = Vec::new();
        for _ in 0..4 {
            let c = e.wait().unwrap();
            assert_eq!(c.event().result, 0);
            got.push((c.event().job_type, c.event().user_data.u64()));
        }
        got.sort();
        want.sort();
        assert_eq!(got, want);
    }
}

fn refused(e: &mut Env, job: impl Job, words: &str) {
    match e.wq.submit_job(e.ec.as_ctx(), job) {
        Err((err, _rec)) => {
            assert_eq!(err.code(), ErrorCode::InvalidValue, "{err}");
            assert!(
                err.to_string().contains(words),
                "'{err}' should say '{words}'"
            );
        }
        Ok(()) => panic!("job accepted; expected a refusal saying '{words}'"),
    }
}

#[test]
fn misuse_is_refused_with_a_reason() {
    let dev = device(0);
    let mut e = Env::new(&dev, 1 << 20, AccessFlags::LOCAL_READ_WRITE);
    let coding = e.ec.matrix_create(MatrixType::Cauchy, 4, 2).unwrap();
    let other = Ec::new();
    let foreign = other.matrix_create(MatrixType::Cauchy, 4, 2).unwrap();

    // Matrix calls.
    let bad = |r: Result<Matrix, doca_core::Error>, words: &str| {
        let err = r.expect_err(words);
        assert_eq!(err.code(), ErrorCode::InvalidValue, "{err}");
        assert!(
            err.to_string().contains(words),
            "'{err}' should say '{words}'"
        );
    };
    bad(
        e.ec.matrix_create(MatrixType::Cauchy, 0, 2),
        "data block count",
    );
    bad(
        e.ec.matrix_create(MatrixType::Cauchy, 129, 2),
        "data block count",
    );
    bad(
        e.ec.matrix_create(MatrixType::Vandermonde, 4, 33),
        "redundancy block count",
    );
    bad(e.ec.matrix_from_raw(&[1, 2, 3], 2, 2), "4");
    bad(
        e.ec.recover_matrix_create(&foreign, &[0]),
        "another EC context",
    );
    bad(
        e.ec.update_matrix_create(&foreign, &[0]),
        "another EC context",
    );
    bad(e.ec.recover_matrix_create(&coding, &[0, 1, 2]), "at most 2");
    bad(e.ec.recover_matrix_create(&coding, &[6]), "out of range");
    bad(e.ec.recover_matrix_create(&coding, &[1, 1]), "twice");
    bad(e.ec.recover_matrix_create(&coding, &[]), "no missing block");
    bad(e.ec.update_matrix_create(&coding, &[4]), "out of range");
    let rec = e.ec.recover_matrix_create(&coding, &[0]).unwrap();
    bad(
        e.ec.recover_matrix_create(&rec, &[1]),
        "from a coding matrix",
    );
    assert!(MatrixType::try_from(3).is_err());
    // A Vandermonde pattern whose surviving rows are dependent: (j+1)^r over GF(2^8)
    // with 8 + 4 has singular patterns; find one and check it is named.
    let v = e.ec.matrix_create(MatrixType::Vandermonde, 8, 4).unwrap();
    let mut singular = None;
    'find: for a in 0..8u32 {
        for b in a + 1..8 {
            for c in 8..12u32 {
                for d in c + 1..12 {
                    if let Err(err) = e.ec.recover_matrix_create(&v, &[a, b, c, d]) {
                        singular = Some(err);
                        break 'find;
                    }
                }
            }
        }
    }
    if let Some(err) = singular {
        assert!(err.to_string().contains("singular"), "{err}");
    }

    // Jobs.
    let block = 256;
    let d = bytes(4 * block, 1);
    let (s, t) = (e.buf(4 * block, &d), e.buf(2 * block, &[]));
    refused(
        &mut e,
        EcCreateJob::new(&foreign, s, t, 0),
        "another EC context",
    );
    let (s, t) = (e.buf(4 * block, &d), e.buf(2 * block, &[]));
    refused(
        &mut e,
        EcCreateJob::new(&rec, s, t, 0),
        "needs a Coding matrix",
    );
    let (s, t) = (e.buf(4 * 100, &d[..400]), e.buf(2 * block, &[]));
    refused(&mut e, EcCreateJob::new(&coding, s, t, 0), "multiple of 64");
    let three = e.ec.matrix_create(MatrixType::Cauchy, 3, 2).unwrap();
    let (s, t) = (e.buf(4 * 64, &d[..256]), e.buf(2 * block, &[]));
    refused(
        &mut e,
        EcCreateJob::new(&three, s, t, 0),
        "not 3 equal blocks",
    );
    let (s, t) = (e.buf(4 * block, &d), e.buf(2 * block - 64, &[]));
    refused(
        &mut e,
        EcCreateJob::new(&coding, s, t, 0),
        "destination tailroom",
    );
    let s = e.list(&d, &[100, 4 * block - 100]);
    let t = e.buf(2 * block, &[]);
    refused(&mut e, EcCreateJob::new(&coding, s, t, 0), "multiple of 64");
    let s = e.buf(4 * block, &d);
    let mut t = e.buf(block, &[]);
    t.chain(e.buf(block, &[])).map_err(|(e, _)| e).unwrap();
    refused(
        &mut e,
        EcCreateJob::new(&coding, s, t, 0),
        "one buffer, not a list",
    );
    // Overlap: the destination's tailroom is inside the source.
    let off = e.next;
    e.next += 8 * block;
    let mut s = e.inv.buf_at(&e.mmap, off, 4 * block).unwrap();
    s.write_data(&d).unwrap();
    let t = e.inv.buf_at(&e.mmap, off + 2 * block, 4 * block).unwrap();
    refused(&mut e, EcCreateJob::new(&coding, s, t, 0), "overlap");
    assert_eq!(e.wq.inflight(), 0);
}

#[test]
fn a_read_only_destination_fails_the_job() {
    for dev in engines() {
        let mut e = Env::new(&dev, 1 << 16, AccessFlags::LOCAL_READ_ONLY);
        let coding = e.ec.matrix_create(MatrixType::Cauchy, 2, 1).unwrap();
        let (s, t) = (e.buf(128, &bytes(128, 3)), e.buf(64, &[]));
        e.submit(EcCreateJob::new(&coding, s, t, 77)).unwrap();
        match e.wait() {
            Err(RetrieveError::IoFailed(c)) => {
                assert_eq!(c.event().user_data.u64(), 77);
                assert_eq!(c.event().result, ErrorCode::NotPermitted as u64);
                assert!(c.status().unwrap_err().to_string().contains("write access"));
            }
            other => panic!("expected a failed job, got {other:?}"),
        }
    }
}

#[test]
fn capabilities_and_limits() {
    let info = &device::devinfo_list().unwrap()[0];
    for t in [JOB_CREATE, JOB_UPDATE, JOB_RECOVER, JOB_GALOIS_MUL] {
        Ec::job_get_supported(info, t).unwrap();
        assert_eq!(Ec::max_buffer_size(info, t).unwrap(), doca_ec::MAX_BUF_SIZE);
    }
    assert_eq!(
        Ec::job_get_supported(info, doca_core::types::action::DMA_FIRST + 1)
            .unwrap_err()
            .code(),
        ErrorCode::NotSupported
    );
    assert_eq!(
        Ec::max_list_buf_num_elem(info).unwrap(),
        doca_ec::MAX_LIST_ELEMENTS
    );
    let t = Topology::from_toml(
        "[[host.device]]\npci_addr = \"0000:01:00.0\"\ncapabilities = [\"dma\"]\n",
        None,
    )
    .unwrap();
    let dma_only = &device::devinfo_list_from(&t)[0];
    assert_eq!(
        Ec::job_get_supported(dma_only, JOB_CREATE)
            .unwrap_err()
            .code(),
        ErrorCode::NotSupported
    );
    assert_eq!(
        Ec::max_list_buf_num_elem(dma_only).unwrap_err().code(),
        ErrorCode::NotSupported
    );
    let ec = Ec::new();
    let err = ec.as_ctx().dev_add(&dma_only.open().unwrap()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotSupported);
}

/// Two create jobs in flight into one destination with room for one result: as on DOCA,
/// both see the room the destination had at submit (its data length changes at
/// delivery) and both succeed; the destination holds one job's parity, whole, with one
/// result's data length, and nothing past it is written.
#[test]
fn jobs_in_flight_share_a_destination_room() {
    for dev in engines() {
        // Small enough that each engine thread takes one job (no sharing of one job).
        let block = 256 << 10;
        let mut e = Env::new(&dev, 96 << 20, AccessFlags::LOCAL_READ_WRITE);
        let coding = e.ec.matrix_create(MatrixType::Cauchy, 4, 2).unwrap();
        for round in 0..10u64 {
            let da = bytes(4 * block, 2 * round + 1);
            let db = bytes(4 * block, 2 * round + 2);
            let a = e.buf(4 * block, &da);
            let b = e.buf(4 * block, &db);
            let dst = e.buf(2 * block, &[]);
            let after = e.next;
            // A gap that nothing may write.
            e.next += 2 * block;
            let dst2 = dst.refcount_add().unwrap();
            e.submit(EcCreateJob::new(&coding, a, dst, 1)).unwrap();
            e.submit(EcCreateJob::new(&coding, b, dst2, 2)).unwrap();
            let mut out = Vec::new();
            for _ in 0..2 {
                match e.wait() {
                    Ok(mut c) => {
                        let d = c.take_buf(doca_core::JobRecord::DST).unwrap();
                        assert_eq!(d.data_len(), 2 * block, "round {round}");
                        out = d.data_to_vec();
                    }
                    Err(x) => panic!("round {round}: {x:?}"),
                }
            }
            let mut past = vec![1u8; 2 * block];
            e.mmap.read_at(after, &mut past).unwrap();
            assert!(
                past.iter().all(|&x| x == 0),
                "round {round}: bytes past the destination were written"
            );
            // One job's parity, whole, as computed alone.
            let mut alone = |data: &[u8], tag| {
                let src = e.buf(4 * block, data);
                let dst = e.buf(2 * block, &[]);
                e.run(EcCreateJob::new(&coding, src, dst, tag))
            };
            let (pa, pb) = (alone(&da, 3), alone(&db, 4));
            assert!(
                out == pa || out == pb,
                "round {round}: a mix of two results"
            );
        }
    }
}

/// A recover job given the coding matrix multiplies it with the blocks it is given, as
/// DOCA's engine does. NVIDIA's storage service rebuilds a lost half of a 2+1 stripe
/// this way (the other half and the parity, the coding matrix): with Vandermonde's
/// all-ones parity row the product is the lost half; with Cauchy it is not (it is the
/// coding row times the blocks, as for a create job).
#[test]
fn a_recover_job_with_the_coding_matrix_multiplies_it() {
    for dev in engines() {
        let block = 2048;
        let mut e = Env::new(&dev, 1 << 20, AccessFlags::LOCAL_READ_WRITE);
        for kind in [MatrixType::Vandermonde, MatrixType::Cauchy] {
            let coding = e.ec.matrix_create(kind, 2, 1).unwrap();
            let data = bytes(2 * block, 21);
            let src = e.buf(data.len(), &data);
            let dst = e.buf(block, &[]);
            let parity = e.run(EcCreateJob::new(&coding, src, dst, 0));
            // Lost: data block 1. Given: parity and data block 2.
            let mut given = parity.clone();
            given.extend_from_slice(&data[block..]);
            let src = e.buf(given.len(), &given);
            let dst = e.buf(block, &[]);
            let got = e.run(EcRecoverJob::new(&coding, src, dst, 0));
            // What a create job makes of the same blocks.
            let src = e.buf(given.len(), &given);
            let dst = e.buf(block, &[]);
            assert_eq!(
                got,
                e.run(EcCreateJob::new(&coding, src, dst, 0)),
                "{kind:?}"
            );
            if kind == MatrixType::Vandermonde {
                assert_eq!(got, data[..block], "the lost half, rebuilt");
            } else {
                assert_ne!(got, data[..block]);
            }
        }
    }
}
