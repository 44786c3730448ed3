//! Hostile compressed data: bytes read as raw deflate, as one LZ4 block and as an LZ4
//! stream (with and without block checksums, linked or independent), decompressed by
//! compress tasks into a small destination between two guards. Every task ends, either
//! with its bytes or with `INVALID_VALUE`; no panic, no byte written outside the
//! destination, and a destination's length is what the task reports.

#![no_main]

use doca_compress::{Compress, DeflateJob, Lz4Job, Lz4Stream};
use doca_core::{AccessFlags, BufInventory, ErrorCode, Mmap, RetrieveError, WorkQ};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const GUARD: usize = 4096;
const ROOM: usize = 8192;
const SRC: usize = 2 * GUARD + ROOM;
const MEM: usize = SRC + 65536;

struct Env {
    dev: doca_core::Dev,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| Env {
        dev: doca_core::devinfo_list().unwrap()[0].open().unwrap(),
    })
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() || data.len() > 65536 {
        return;
    }
    let (mode, input) = (data[0], &data[1..]);
    if input.is_empty() {
        return;
    }
    let e = env();
    let mut mmap = Mmap::new();
    mmap.set_memory(vec![0xa5u8; MEM]).unwrap();
    mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
    mmap.dev_add(&e.dev).unwrap();
    mmap.start().unwrap();
    mmap.write_at(SRC, input).unwrap();
    let mut inv = BufInventory::new(4).unwrap();
    inv.start().unwrap();
    let src = inv.buf_with_data_at(&mmap, SRC, input.len()).unwrap();
    let dst = inv.buf_at(&mmap, GUARD, ROOM).unwrap();
    let c = Compress::new();
    c.as_ctx().dev_add(&e.dev).unwrap();
    c.as_ctx().start().unwrap();
    let mut wq = WorkQ::new(2).unwrap();
    c.as_ctx().workq_add(&mut wq).unwrap();
    let r = match mode % 6 {
        0 => wq.submit_job(c.as_ctx(), DeflateJob::decompress(src, dst, 0)),
        1 => wq.submit_job(c.as_ctx(), Lz4Job::block(src, dst, 0)),
        m => {
            let s = Lz4Stream {
                has_block_checksum: m & 1 == 0,
                are_blocks_independent: m & 2 == 0,
            };
            wq.submit_job(c.as_ctx(), Lz4Job::stream(src, dst, s, 0))
        }
    };
    r.map_err(|(e, _)| e).unwrap();
    match wq.wait(None) {
        Ok(mut done) => {
            let d = done.take_buf(DeflateJob::DST).unwrap();
            assert!(d.data_len() <= ROOM);
        }
        Err(RetrieveError::IoFailed(done)) => {
            assert_eq!(done.event().result, ErrorCode::InvalidValue as u64);
        }
        Err(e) => panic!("{e:?}"),
    }
    let mut guards = vec![0u8; GUARD];
    mmap.read_at(0, &mut guards).unwrap();
    assert!(
        guards.iter().all(|&x| x == 0xa5),
        "written before the destination"
    );
    mmap.read_at(GUARD + ROOM, &mut guards).unwrap();
    assert!(
        guards.iter().all(|&x| x == 0xa5),
        "written after the destination"
    );
    c.as_ctx().workq_rm(&mut wq).unwrap();
});
