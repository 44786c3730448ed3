//! Compress tasks end to end on both engines (inline, and two engine threads): deflate
//! both ways against libdeflate itself, LZ4 blocks and streams against lz4_flex's
//! encoder, the checksums DOCA reports, and bad input: corrupt, truncated and hostile
//! data fail their task with a clear error and write nothing past the destination.

#![allow(clippy::result_large_err)]

use doca_compress::{
    Compress, DeflateJob, JOB_COMPRESS_DEFLATE, JOB_DECOMPRESS_LZ4_STREAM, Lz4Job, Lz4Stream,
    checksums,
};
use doca_core::device::{self, Topology};
use doca_core::{
    AccessFlags, Buf, BufInventory, Completion, Dev, ErrorCode, Mmap, RetrieveError, WorkQ,
};
use std::time::Duration;

fn device(threads: u32) -> Dev {
    let text = format!(
        "[[host.device]]\npci_addr = \"0000:{:02x}:00.0\"\nibdev_name = \"cmp{threads}\"\nengine_threads = {threads}\n",
        0x50 + threads
    );
    let t = Topology::from_toml(&text, None).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

fn engines() -> [Dev; 2] {
    [device(0), device(2)]
}

const MEM: usize = 8 << 20;

struct Env {
    mmap: Mmap,
    inv: BufInventory,
    wq: WorkQ,
    ctx: Compress,
}

impl Env {
    fn new(dev: &Dev) -> Env {
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; MEM]).unwrap();
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
        mmap.dev_add(dev).unwrap();
        mmap.start().unwrap();
        let mut inv = BufInventory::new(64).unwrap();
        inv.start().unwrap();
        let ctx = Compress::new();
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

    fn empty(&self, off: usize, len: usize) -> Buf {
        self.inv.buf_at(&self.mmap, off, len).unwrap()
    }

    fn run(&mut self, job: impl doca_core::exec::Job) -> Result<Completion, RetrieveError> {
        self.wq
            .submit_job(self.ctx.as_ctx(), job)
            .map_err(|(e, _)| e)
            .unwrap();
        self.wq.wait(Some(Duration::from_secs(20)))
    }

    fn failed(&mut self, job: impl doca_core::exec::Job) -> String {
        match self.run(job) {
            Err(RetrieveError::IoFailed(c)) => {
                assert_eq!(c.event().result, ErrorCode::InvalidValue as u64);
                c.error.unwrap().to_string()
            }
            other => panic!("the task should fail: {other:?}"),
        }
    }
}

/// Text (words repeated with variation) and incompressible bytes.
fn corpus() -> Vec<(&'static str, Vec<u8>)> {
    let words = [
        "erasure", "coding", "compress", "deflate", "block", "stream", "storage", "the", "of",
        "and",
    ];
    let mut text = Vec::new();
    let mut x = 12345u64;
    while text.len() < 300_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        text.extend_from_slice(words[(x >> 33) as usize % words.len()].as_bytes());
        text.push(if x & 7 == 0 { b'\n' } else { b' ' });
    }
    let mut bin = vec![0u8; 200_000];
    for (i, b) in bin.iter_mut().enumerate() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *b = if i % 4096 < 1024 { 0 } else { (x >> 56) as u8 };
    }
    vec![("text", text), ("binary", bin)]
}

fn crc_adler(b: &[u8]) -> (u32, u32) {
    (libdeflater::crc32(b), libdeflater::adler32(b))
}

fn crc_xxh(b: &[u8]) -> (u32, u32) {
    (libdeflater::crc32(b), xxhash_rust::xxh32::xxh32(b, 0))
}

#[test]
fn deflate_both_ways_with_libdeflate_and_the_checksums() {
    for dev in engines() {
        let mut e = Env::new(&dev);
        for (name, data) in corpus() {
            let src = e.data(0, &data);
            let dst = e.empty(1 << 20, 1 << 20);
            let mut c = e.run(DeflateJob::compress(src, dst, 1)).unwrap();
            assert_eq!(checksums(&c), crc_adler(&data), "{name}");
            let packed = c.take_buf(DeflateJob::DST).unwrap().data_to_vec();
            assert!(
                name != "text" || packed.len() < data.len() / 2,
                "{name}: {} bytes",
                packed.len()
            );
            // libdeflate reads it back.
            let mut back = vec![0u8; data.len()];
            let n = libdeflater::Decompressor::new()
                .deflate_decompress(&packed, &mut back)
                .unwrap();
            assert_eq!(&back[..n], &data[..], "{name}");
            // And this decompresses what libdeflate made, at level 1 and 12.
            for lvl in [1, 12] {
                let mut c =
                    libdeflater::Compressor::new(libdeflater::CompressionLvl::new(lvl).unwrap());
                let mut theirs = vec![0u8; c.deflate_compress_bound(data.len())];
                let k = c.deflate_compress(&data, &mut theirs).unwrap();
                let src = e.data(2 << 20, &theirs[..k]);
                let dst = e.empty(4 << 20, data.len());
                let mut c = e.run(DeflateJob::decompress(src, dst, 2)).unwrap();
                assert_eq!(checksums(&c), crc_adler(&data), "{name} level {lvl}");
                assert_eq!(c.take_buf(DeflateJob::DST).unwrap().data_to_vec(), data);
            }
        }
    }
}

#[test]
fn bad_deflate_input_fails_clearly_and_writes_nothing_past_the_destination() {
    for dev in engines() {
        let mut e = Env::new(&dev);
        let data = &corpus()[0].1;
        let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::default());
        let mut packed = vec![0u8; c.deflate_compress_bound(data.len())];
        let k = c.deflate_compress(data, &mut packed).unwrap();
        packed.truncate(k);
        // Truncated.
        let src = e.data(0, &packed[..k / 2]);
        let msg = e.failed(DeflateJob::decompress(src, e.empty(1 << 20, data.len()), 1));
        assert!(msg.contains("not valid raw deflate"), "{msg}");
        // Garbage.
        let src = e.data(0, &[0xffu8; 1000]);
        let msg = e.failed(DeflateJob::decompress(src, e.empty(1 << 20, data.len()), 1));
        assert!(msg.contains("not valid raw deflate"), "{msg}");
        // A bomb: 4 MiB of zeros in a few KiB, against a 64 KiB destination with a
        // guard after it.
        let zeros = vec![0u8; 4 << 20];
        let mut bomb = vec![0u8; c.deflate_compress_bound(zeros.len())];
        let b = c.deflate_compress(&zeros, &mut bomb).unwrap();
        assert!(b < 16 << 10);
        let guard = e.data((1 << 20) + (64 << 10), &[0xa5u8; 4096]);
        let src = e.data(0, &bomb[..b]);
        let msg = e.failed(DeflateJob::decompress(src, e.empty(1 << 20, 64 << 10), 1));
        assert!(msg.contains("too small"), "{msg}");
        assert!(
            guard.data_to_vec().iter().all(|&x| x == 0xa5),
            "bytes past the destination"
        );
        // Compressing into too little room.
        let src = e.data(0, data);
        let msg = e.failed(DeflateJob::compress(src, e.empty(1 << 20, 100), 1));
        assert!(msg.contains("too small"), "{msg}");
        // A failed task leaves its destination's data length alone.
        let dst = e.empty(1 << 20, 100);
        let keep = dst.refcount_add().unwrap();
        let src = e.data(0, data);
        let _ = e.failed(DeflateJob::compress(src, dst, 1));
        assert_eq!(keep.data_len(), 0);
    }
}

#[test]
fn lz4_blocks_and_streams() {
    for dev in engines() {
        let mut e = Env::new(&dev);
        for (name, data) in corpus() {
            // One block.
            let block = lz4_flex::block::compress(&data);
            let src = e.data(0, &block);
            let mut c = e
                .run(Lz4Job::block(src, e.empty(1 << 20, data.len()), 1))
                .unwrap();
            assert_eq!(checksums(&c), crc_xxh(&data), "{name}");
            assert_eq!(c.take_buf(DeflateJob::DST).unwrap().data_to_vec(), data);

            // A stream of independent 64 KiB blocks, a stored one among them, with and
            // without block checksums; then one whose blocks refer back.
            for (checksum, independent) in [(true, true), (false, true), (true, false)] {
                let stream = make_stream(&data, checksum, independent);
                let src = e.data(0, &stream);
                let job = Lz4Job::stream(
                    src,
                    e.empty(1 << 20, data.len()),
                    Lz4Stream {
                        has_block_checksum: checksum,
                        are_blocks_independent: independent,
                    },
                    2,
                );
                let mut c = e.run(job).unwrap();
                assert_eq!(
                    checksums(&c),
                    crc_xxh(&data),
                    "{name} {checksum} {independent}"
                );
                assert_eq!(c.take_buf(DeflateJob::DST).unwrap().data_to_vec(), data);
            }
        }
    }
}

/// An LZ4 stream of `data` in 64 KiB blocks (the third stored uncompressed), each
/// followed by its checksum when asked; blocks refer back when not independent.
fn make_stream(data: &[u8], checksum: bool, independent: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, chunk) in data.chunks(64 << 10).enumerate() {
        let start = i * (64 << 10);
        let (word, body) = if i == 2 {
            (chunk.len() as u32 | 0x8000_0000, chunk.to_vec())
        } else if independent {
            let b = lz4_flex::block::compress(chunk);
            (b.len() as u32, b)
        } else {
            let dict = &data[start.saturating_sub(64 << 10)..start];
            let b = lz4_flex::block::compress_with_dict(chunk, dict);
            (b.len() as u32, b)
        };
        out.extend_from_slice(&word.to_le_bytes());
        out.extend_from_slice(&body);
        if checksum {
            out.extend_from_slice(&xxhash_rust::xxh32::xxh32(&body, 0).to_le_bytes());
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out
}

#[test]
fn bad_lz4_input_fails_clearly() {
    for dev in engines() {
        let mut e = Env::new(&dev);
        let data = &corpus()[0].1;
        let stream = make_stream(data, true, true);
        let flags = Lz4Stream {
            has_block_checksum: true,
            are_blocks_independent: true,
        };
        // A block checksum that does not match.
        let mut bad = stream.clone();
        bad[10] ^= 0x40;
        let src = e.data(0, &bad);
        let msg = e.failed(Lz4Job::stream(src, e.empty(1 << 20, data.len()), flags, 1));
        assert!(msg.contains("checksum"), "{msg}");
        // Truncated inside a block.
        let src = e.data(0, &stream[..1000]);
        let msg = e.failed(Lz4Job::stream(src, e.empty(1 << 20, data.len()), flags, 1));
        assert!(msg.contains("block at byte 0"), "{msg}");
        // A block size past the end.
        let mut big = vec![0xff, 0xff, 0xff, 0x7f];
        big.extend_from_slice(&[0u8; 64]);
        let src = e.data(0, &big);
        let msg = e.failed(Lz4Job::stream(src, e.empty(1 << 20, 1024), flags, 1));
        assert!(msg.contains("left"), "{msg}");
        // Too little room.
        let src = e.data(0, &stream);
        let msg = e.failed(Lz4Job::stream(src, e.empty(1 << 20, 1000), flags, 1));
        assert!(msg.contains("too small"), "{msg}");
        // A corrupt block (an offset before the start of the output).
        let src = e.data(0, &[0x1f, b'a', 0xff, 0xff, 0x00]);
        let msg = e.failed(Lz4Job::block(src, e.empty(1 << 20, 1 << 16), 1));
        assert!(msg.contains("not a valid LZ4 block"), "{msg}");
    }
}

#[test]
fn capabilities_answer_for_every_task_type() {
    let info = device::devinfo_list().unwrap()[0].clone();
    for t in [JOB_COMPRESS_DEFLATE, JOB_DECOMPRESS_LZ4_STREAM] {
        Compress::job_get_supported(&info, t).unwrap();
        assert_eq!(
            Compress::max_buf_size(&info, t).unwrap(),
            doca_compress::MAX_BUF_SIZE
        );
        assert_eq!(
            Compress::max_buf_list_len(&info, t).unwrap(),
            doca_compress::MAX_BUF_LIST_LEN
        );
    }
    assert_eq!(
        Compress::job_get_supported(&info, 1).unwrap_err().code(),
        ErrorCode::NotSupported
    );
}

#[test]
fn lists_as_source_and_destination() {
    for dev in engines() {
        let mut e = Env::new(&dev);
        let data = &corpus()[0].1[..100_000];
        // The source in three pieces, compressed into one buffer.
        let mut src = e.data(0, &data[..30_000]);
        src.chain(e.data(40_000, &data[30_000..31_000])).unwrap();
        src.chain(e.data(50_000, &data[31_000..])).unwrap();
        let mut c = e
            .run(DeflateJob::compress(src, e.empty(1 << 20, 1 << 19), 1))
            .unwrap();
        assert_eq!(checksums(&c), crc_adler(data));
        let packed = c.take_buf(DeflateJob::DST).unwrap().data_to_vec();
        // Decompressed into a list of three destinations: each filled up to its room,
        // in order; the last one holds the rest.
        let one = e.data(2 << 20, &packed);
        let mut dst = e.empty(3 << 20, 10_000);
        dst.chain(e.empty(3 << 20 | 20_000, 50_000)).unwrap();
        dst.chain(e.empty(3 << 20 | 80_000, 60_000)).unwrap();
        let mut c = e.run(DeflateJob::decompress(one, dst, 2)).unwrap();
        assert_eq!(checksums(&c), crc_adler(data));
        let dst = c.take_buf(DeflateJob::DST).unwrap();
        let lens: Vec<usize> = dst.iter().map(|d| d.data_len()).collect();
        assert_eq!(lens, [10_000, 50_000, 40_000]);
        assert_eq!(dst.list_data_to_vec(), data);
        // Too little room over the whole list: the task fails and no element grows.
        let one = e.data(2 << 20, &packed);
        let mut dst = e.empty(5 << 20, 10_000);
        dst.chain(e.empty(5 << 20 | 20_000, 10_000)).unwrap();
        let msg = e.failed(DeflateJob::decompress(one, dst, 3));
        assert!(msg.contains("too small"), "{msg}");
        // More elements than max_buf_list_len: refused at submit.
        let mut src = e.data(0, &data[..10]);
        for i in 0..doca_compress::MAX_BUF_LIST_LEN as usize {
            src.chain(e.data(6 << 20 | (i * 64), &data[..10])).unwrap();
        }
        let job = DeflateJob::compress(src, e.empty(1 << 20, 1 << 16), 4);
        let (err, _) = e.wq.submit_job(e.ctx.as_ctx(), job).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidValue);
        assert!(err.to_string().contains("max list length"), "{err}");
    }
}

#[test]
fn tasks_as_futures_on_tokio() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for dev in engines() {
            let e = Env::new(&dev);
            let Env {
                mmap,
                inv,
                mut wq,
                ctx,
            } = e;
            ctx.as_ctx().workq_rm(&mut wq).unwrap();
            let wq = doca_core::aio::AsyncWorkQ::new(WorkQ::new(8).unwrap()).unwrap();
            wq.attach(ctx.as_ctx()).unwrap();
            let data = corpus()[0].1[..50_000].to_vec();
            let mut src = inv.buf_at(&mmap, 0, 65536).unwrap();
            src.append(&data).unwrap();
            let dst = inv.buf_at(&mmap, 1 << 20, 65536).unwrap();
            let mut done = wq
                .submit_job(ctx.as_ctx(), DeflateJob::compress(src, dst, 1))
                .map_err(|(e, _)| e)
                .unwrap()
                .await;
            done.status().unwrap();
            assert_eq!(checksums(&done), crc_adler(&data));
            let packed = done.take_buf(DeflateJob::DST).unwrap();
            let back = inv.buf_at(&mmap, 2 << 20, 65536).unwrap();
            let mut done = wq
                .submit_job(ctx.as_ctx(), DeflateJob::decompress(packed, back, 2))
                .map_err(|(e, _)| e)
                .unwrap()
                .await;
            done.status().unwrap();
            assert_eq!(done.take_buf(DeflateJob::DST).unwrap().data_to_vec(), data);
            wq.detach(ctx.as_ctx()).unwrap();
        }
    });
}

/// The host side of [`tasks_on_host_memory_the_dpu_imported`], a child process: 1 MiB
/// exported to the DPU, its first half holding text; answers `peek OFF N` (the bytes,
/// in hex).
#[test]
fn child_process() {
    let Some(role) = doca_testkit::peer::role() else {
        return;
    };
    assert_eq!(role, "host");
    let host = Topology::from_toml(device::DEFAULT_MACHINE, Some("host"))
        .unwrap()
        .open_device("0000:b1:00.0")
        .unwrap();
    let mut mem = vec![0u8; 1 << 20];
    let text = host_text();
    mem[..text.len()].copy_from_slice(&text);
    let mut hm = Mmap::new();
    hm.set_memory(mem).unwrap();
    hm.set_permissions(AccessFlags::LOCAL_READ_WRITE | AccessFlags::DPU_READ_WRITE)
        .unwrap();
    hm.dev_add(&host).unwrap();
    hm.start().unwrap();
    let base = hm.memrange().unwrap().0;
    doca_testkit::peer::say(&doca_testkit::peer::hex(&hm.export_dpu(&host).unwrap()));
    for line in doca_testkit::peer::commands() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w[0] != "peek" {
            break;
        }
        let (off, n): (usize, usize) = (w[1].parse().unwrap(), w[2].parse().unwrap());
        // SAFETY: inside the host's memory; the DPU's writes to it completed.
        let b = unsafe { std::slice::from_raw_parts(base.add(off), n) };
        doca_testkit::peer::say(&doca_testkit::peer::hex(b));
    }
}

fn host_text() -> Vec<u8> {
    corpus().into_iter().find(|(n, _)| *n == "text").unwrap().1[..200_000].to_vec()
}

/// Compress tasks of a DPU process on host memory it imported (as NVIDIA's storage
/// service decompresses straight into the host's buffers): deflate from the host's
/// bytes, and decompress into them, on both engines.
#[test]
fn tasks_on_host_memory_the_dpu_imported() {
    let mut host = doca_testkit::peer::Peer::spawn("child_process", "host");
    let blob = doca_testkit::peer::unhex(&host.recv());
    for threads in [0, 2] {
        let text = device::DEFAULT_MACHINE.replace(
            "\npci_addr = \"0000:03:00.0\"\n",
            &format!("\npci_addr = \"0000:03:00.0\"\nengine_threads = {threads}\n"),
        );
        let dpu = Topology::from_toml(&text, Some("dpu"))
            .unwrap()
            .open_device("0000:03:00.0")
            .unwrap();
        let imported = Mmap::create_from_export(doca_core::Data(0), &blob, &dpu).unwrap();
        let (hp, _) = imported.memrange().unwrap();
        let mut e = Env::new(&dpu);
        let data = host_text();
        // From the host's bytes.
        let src = e.inv.buf_by_data(&imported, hp, data.len()).unwrap();
        let dst = e.empty(0, 1 << 20);
        let mut c = e.run(DeflateJob::compress(src, dst, 1)).unwrap();
        assert_eq!(checksums(&c), crc_adler(&data));
        let packed = c.take_buf(DeflateJob::DST).unwrap().data_to_vec();
        drop(c);
        // Into the host's bytes, at 512 KiB.
        let src = e.data(2 << 20, &packed);
        // SAFETY: inside the imported range (exporter addresses, never dereferenced).
        let dst = e
            .inv
            .buf_by_addr(&imported, unsafe { hp.add(512 << 10) }, 512 << 10)
            .unwrap();
        let mut c = e.run(DeflateJob::decompress(src, dst, 2)).unwrap();
        assert_eq!(c.take_buf(DeflateJob::DST).unwrap().data_len(), data.len());
        drop(c);
        host.send(&format!("peek {} {}", 512 << 10, data.len()));
        assert_eq!(host.recv(), doca_testkit::peer::hex(&data));
    }
    host.finish();
}
