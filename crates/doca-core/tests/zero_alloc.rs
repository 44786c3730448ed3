//! After start, the data path allocates nothing: buffer allocation by address or data,
//! reference counting, lists, appends, pool allocation and the common refusals.

use doca_core::{AccessFlags, BufInventory, BufPool, Data, ErrorCode, Mmap};
use doca_testkit::allocations_in;

#[global_allocator]
static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;

#[test]
fn data_path_allocates_nothing() {
    let mut mmap = Mmap::new();
    mmap.set_memory(vec![0u8; 1 << 20]).unwrap();
    mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
    mmap.start().unwrap();
    let mut inv = BufInventory::new(64).unwrap();
    inv.start().unwrap();
    let mut pool = BufPool::create(Data(0), 16, 0, 4096, 64, &mmap).unwrap();
    pool.start().unwrap();
    let (base, _) = mmap.memrange().unwrap();
    let mut scratch = [0u8; 64];

    let n = allocations_in(|| {
        for round in 0..1000usize {
            let off = (round * 512) % ((1 << 20) - 4096);
            let addr = base.wrapping_add(off);
            let mut head = inv.buf_by_addr(&mmap, addr, 1024).unwrap();
            let data = base.wrapping_add(off + 2048);
            let b2 = inv.buf_by_data(&mmap, data, 256).unwrap();
            let b3 = inv.buf_by_args(&mmap, addr, 4096, data, 16).unwrap();
            let extra = b2.refcount_add().unwrap();
            assert_eq!(extra.release().unwrap(), 1);
            head.append(b"payload").unwrap();
            head.chain(b2).unwrap();
            head.chain(b3).unwrap();
            assert_eq!(head.num_elements(), 3);
            assert!(head.last().is_last());
            assert!(head.is_in_list());
            let tail = head.unchain_at(2).unwrap();
            assert!(tail.is_first());
            let n = head.copy_data_to(&mut scratch).unwrap();
            assert_eq!(n, 7);
            drop(tail);
            drop(head);
            let mut p = pool.buf_alloc().unwrap();
            p.set_data_range(0, 100).unwrap();
            p.reset_data_len();
            drop(p);
            // Refusals with fixed messages allocate nothing either.
            assert_eq!(head_err(&inv, &mmap), ErrorCode::InvalidValue);
        }
    });
    assert_eq!(n, 0, "the data path allocated {n} times");
    assert_eq!(inv.num_free_elements(), 64);
    assert_eq!(mmap.num_bufs(), 0);

    // Exhaustion is reported without allocating.
    let held: Vec<_> = (0..64)
        .map(|i| inv.buf_at(&mmap, i * 8, 8).unwrap())
        .collect();
    let n = allocations_in(|| {
        let e = inv.buf_by_addr(&mmap, base, 8).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NoMemory);
    });
    assert_eq!(n, 0);
    drop(held);

    // The counter works: an allocation is seen.
    let n = allocations_in(|| drop(std::hint::black_box(vec![1u8; 10])));
    assert_eq!(n, 1);
}

fn head_err(inv: &BufInventory, mmap: &Mmap) -> ErrorCode {
    let (base, len) = mmap.memrange().unwrap();
    inv.buf_by_addr(mmap, base, len + 1).unwrap_err().code()
}
