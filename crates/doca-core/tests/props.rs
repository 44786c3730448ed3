//! Property tests: buffer invariants under any sequence of operations, and scatter-gather
//! lists against a simple model.

use doca_core::{Buf, BufInventory, ErrorCode, Mmap};
use proptest::prelude::*;

const MEM: usize = 1 << 16;

fn setup(n: usize) -> (Mmap, BufInventory) {
    let mut m = Mmap::new();
    m.set_memory(vec![0u8; MEM]).unwrap();
    m.start().unwrap();
    let mut inv = BufInventory::new(n).unwrap();
    inv.start().unwrap();
    (m, inv)
}

#[derive(Debug, Clone)]
enum Op {
    SetData(usize, usize),
    Append(usize),
    Reset,
    Write(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0usize..600, 0usize..600).prop_map(|(o, l)| Op::SetData(o, l)),
        (0usize..300).prop_map(Op::Append),
        Just(Op::Reset),
        (0usize..600).prop_map(Op::Write),
    ]
}

/// A buffer's answers: its range inside the mmap; its data section inside the mmap (a
/// program may set it outside the buffer); inside the buffer, headroom + data + tailroom
/// is the buffer, and outside it the room runs to the end of the mmap.
fn invariant(b: &Buf, base: usize, mem_len: usize) {
    let head = b.head() as usize;
    let data = b.data() as usize;
    let end = head + b.len();
    assert!(head >= base && end <= base + mem_len);
    assert!(data >= base && data + b.data_len() <= base + mem_len);
    if head <= data && data + b.data_len() <= end {
        assert_eq!(b.headroom() + b.data_len() + b.tailroom(), b.len());
    } else {
        assert_eq!(b.headroom(), data.saturating_sub(head));
        assert_eq!(b.tailroom(), base + mem_len - (data + b.data_len()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn buffer_invariants_hold(off in 0usize..MEM - 512, len in 1usize..512, data_off in 0usize..512, ops in prop::collection::vec(op(), 0..40)) {
        let (m, inv) = setup(1);
        let base = m.memrange().unwrap().0 as usize;
        let data_off = data_off % (len + 1);
        let data_len = (len - data_off) / 2;
        let mut b = inv
            .buf_by_args(&m, (base + off) as *mut u8, len, (base + off + data_off) as *mut u8, data_len)
            .unwrap();
        invariant(&b, base, MEM);
        let mut model: Vec<u8> = vec![0; data_len];
        for op in ops {
            let before = (b.data() as usize, b.data_len());
            let r = match &op {
                Op::SetData(o, l) => b.set_data_range(*o, *l),
                Op::Append(n) => b.append(&vec![0xab; *n]),
                Op::Reset => { b.reset_data_len(); Ok(()) }
                Op::Write(n) => b.write_data(&vec![0xcd; *n]),
            };
            match r {
                Ok(()) => match &op {
                    Op::SetData(o, l) => {
                        prop_assert!(off + o + l <= MEM);
                        prop_assert_eq!(b.headroom(), *o);
                        let mut v = vec![0u8; *l];
                        m.read_at(off + o, &mut v).unwrap();
                        model = v;
                    }
                    Op::Append(n) => model.extend(std::iter::repeat_n(0xab, *n)),
                    Op::Reset => model.clear(),
                    Op::Write(n) => model = vec![0xcd; *n],
                },
                Err(e) => {
                    prop_assert_eq!(e.code(), ErrorCode::InvalidValue);
                    // A refused operation changes nothing.
                    prop_assert_eq!((b.data() as usize, b.data_len()), before);
                }
            }
            invariant(&b, base, MEM);
            prop_assert_eq!(b.data_to_vec(), model.clone());
        }
    }

    #[test]
    fn lists_match_a_model(n in 2usize..10, ops in prop::collection::vec((0usize..10, 0usize..10, any::<bool>()), 0..40)) {
        let (m, inv) = setup(n);
        // Buffer i sits at offset i * 100: the offset names it.
        let mut heads: Vec<Buf> = (0..n).map(|i| inv.buf_at(&m, i * 100, 10).unwrap()).collect();
        let mut model: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
        for (a, b, chain) in ops {
            if chain {
                if heads.len() < 2 { continue; }
                let a = a % heads.len();
                let mut b = b % heads.len();
                if a == b { b = (b + 1) % heads.len(); }
                let list2 = heads.remove(b);
                let tail = model.remove(b);
                let a = if b < a { a - 1 } else { a };
                heads[a].chain(list2).map_err(|(e, _)| e).unwrap();
                model[a].extend(tail);
            } else {
                let a = a % heads.len();
                let len = model[a].len();
                if len < 2 {
                    prop_assert_eq!(heads[a].unchain_at(1).unwrap_err().code(), ErrorCode::InvalidValue);
                    continue;
                }
                let at = 1 + b % (len - 1);
                let detached = heads[a].unchain_at(at).unwrap();
                let rest = model[a].split_off(at);
                heads.push(detached);
                model.push(rest);
            }
            prop_assert_eq!(heads.len(), model.len());
            for (h, want) in heads.iter().zip(&model) {
                let got: Vec<usize> = h.iter().map(|e| e.mmap_offset() / 100).collect();
                prop_assert_eq!(&got, want);
                prop_assert_eq!(h.num_elements() as usize, want.len());
                prop_assert!(h.is_first());
                prop_assert_eq!(h.is_in_list(), want.len() > 1);
                prop_assert!(h.last().is_last());
                for (i, e) in h.iter().enumerate() {
                    prop_assert_eq!(e.is_first(), i == 0);
                    prop_assert_eq!(e.is_last(), i + 1 == want.len());
                }
            }
            prop_assert_eq!(inv.num_free_elements(), 0);
        }
        // Releasing each head releases its whole list.
        let mut freed = 0;
        for (h, want) in heads.into_iter().zip(&model) {
            drop(h);
            freed += want.len();
            prop_assert_eq!(inv.num_free_elements() as usize, freed);
        }
        prop_assert_eq!(m.num_bufs(), 0);
    }
}
