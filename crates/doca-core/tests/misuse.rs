//! The misuse table: each wrong lifecycle step or bad input, and the DOCA error a user
//! gets for it. No case panics or loses anything.

use doca_core::device::{self, RepFilter, Topology};
use doca_core::{
    AccessFlags, BufArray, BufInventory, BufPool, Data, Error, ErrorCode, Mmap, PciAddr,
    PciFuncType,
};

fn mmap_with(size: usize, start: bool) -> Mmap {
    let mut m = Mmap::new();
    m.set_memory(vec![0u8; size]).unwrap();
    if start {
        m.start().unwrap();
    }
    m
}

fn started_inv(n: usize) -> BufInventory {
    let mut inv = BufInventory::new(n).unwrap();
    inv.start().unwrap();
    inv
}

fn code<T: std::fmt::Debug>(r: Result<T, Error>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got Ok({v:?})"),
        Err(e) => {
            // Every error a user sees has words to act on.
            assert!(
                e.context_str().is_some_and(|c| !c.is_empty()),
                "{e:?} has no context"
            );
            e.code()
        }
    }
}

fn code_back<T, U: std::fmt::Debug>(r: Result<U, (T, Error)>) -> ErrorCode {
    code(r.map_err(|(_, e)| e))
}

type Case = (&'static str, ErrorCode, fn() -> ErrorCode);

const CASES: &[Case] = &[
    // --- mmap lifecycle ---
    (
        "mmap start without a memory range",
        ErrorCode::BadState,
        || code(Mmap::new().start()),
    ),
    ("mmap double start", ErrorCode::BadState, || {
        code(mmap_with(64, true).start())
    }),
    ("mmap stop when not started", ErrorCode::BadState, || {
        code(mmap_with(64, false).stop())
    }),
    ("mmap set_memory after start", ErrorCode::BadState, || {
        code(mmap_with(64, true).set_memory(vec![0u8; 8]))
    }),
    (
        "mmap set_permissions after start",
        ErrorCode::BadState,
        || code(mmap_with(64, true).set_permissions(AccessFlags::LOCAL_READ_WRITE)),
    ),
    (
        "mmap set_max_num_devices after start",
        ErrorCode::BadState,
        || code(mmap_with(64, true).set_max_num_devices(4)),
    ),
    ("mmap set_free_cb after start", ErrorCode::BadState, || {
        code(mmap_with(64, true).set_free_cb(|_, _| {}))
    }),
    ("mmap dev_add after start", ErrorCode::BadState, || {
        let dev = device::devinfo_list().unwrap()[0].open().unwrap();
        code(mmap_with(64, true).dev_add(&dev))
    }),
    ("mmap dev_add twice", ErrorCode::AlreadyExist, || {
        let dev = device::devinfo_list().unwrap()[0].open().unwrap();
        let mut m = mmap_with(64, false);
        m.dev_add(&dev).unwrap();
        code(m.dev_add(&dev))
    }),
    (
        "mmap dev_add beyond max_num_devices",
        ErrorCode::NoMemory,
        || {
            let t =
                Topology::from_toml(include_str!("../../../topology/bluefield-guide.toml"), None)
                    .unwrap();
            let list = device::devinfo_list_from(&t);
            let mut m = mmap_with(64, false);
            m.set_max_num_devices(1).unwrap();
            m.dev_add(&list[0].open().unwrap()).unwrap();
            code(m.dev_add(&list[1].open().unwrap()))
        },
    ),
    (
        "mmap dev_rm of a device never added",
        ErrorCode::NotFound,
        || {
            let dev = device::devinfo_list().unwrap()[0].open().unwrap();
            code(mmap_with(64, false).dev_rm(&dev))
        },
    ),
    ("mmap max_num_devices 0", ErrorCode::InvalidValue, || {
        code(Mmap::new().set_max_num_devices(0))
    }),
    (
        "mmap max_num_devices below devices added",
        ErrorCode::InvalidValue,
        || {
            let t =
                Topology::from_toml(include_str!("../../../topology/bluefield-guide.toml"), None)
                    .unwrap();
            let list = device::devinfo_list_from(&t);
            let mut m = Mmap::new();
            m.dev_add(&list[0].open().unwrap()).unwrap();
            m.dev_add(&list[1].open().unwrap()).unwrap();
            code(m.set_max_num_devices(1))
        },
    ),
    ("mmap empty memory", ErrorCode::InvalidValue, || {
        code(Mmap::new().set_memory(Vec::<u8>::new()))
    }),
    ("mmap NULL memrange", ErrorCode::InvalidValue, || {
        // SAFETY: a NULL range is refused before any use.
        code(unsafe { Mmap::new().set_memrange(std::ptr::null_mut(), 64) })
    }),
    ("mmap zero-length memrange", ErrorCode::InvalidValue, || {
        let mut b = [0u8; 4];
        // SAFETY: a zero-length range is refused before any use.
        code(unsafe { Mmap::new().set_memrange(b.as_mut_ptr(), 0) })
    }),
    (
        "mmap memrange wrapping the address space",
        ErrorCode::InvalidValue,
        || {
            // SAFETY: the range is refused before any use.
            code(unsafe { Mmap::new().set_memrange(usize::MAX as *mut u8, 2) })
        },
    ),
    (
        "mmap get_memrange with none set",
        ErrorCode::BadState,
        || code(Mmap::new().memrange()),
    ),
    ("mmap stop with buffers out", ErrorCode::InUse, || {
        let mut m = mmap_with(64, true);
        let inv = started_inv(1);
        let _b = inv.buf_at(&m, 0, 8).unwrap();
        code(m.stop())
    }),
    ("mmap destroy with buffers out", ErrorCode::InUse, || {
        let m = mmap_with(64, true);
        let inv = started_inv(1);
        let _b = inv.buf_at(&m, 0, 8).unwrap();
        code_back(m.destroy())
    }),
    ("mmap memory_mut with buffers out", ErrorCode::InUse, || {
        let mut m = mmap_with(64, true);
        let inv = started_inv(1);
        let _b = inv.buf_at(&m, 0, 8).unwrap();
        code(m.memory_mut().map(|s| s.len()))
    }),
    ("mmap read_at past the end", ErrorCode::InvalidValue, || {
        code(mmap_with(64, true).read_at(60, &mut [0u8; 8]))
    }),
    (
        "mmap write_at with offset overflow",
        ErrorCode::InvalidValue,
        || code(mmap_with(64, true).write_at(usize::MAX, b"x")),
    ),
    (
        "access mask with unknown bits",
        ErrorCode::InvalidValue,
        || code(AccessFlags::from_raw(1 << 9)),
    ),
    // --- inventory ---
    ("inventory with 0 elements", ErrorCode::InvalidValue, || {
        code(BufInventory::new(0))
    }),
    (
        "inventory with unknown extensions",
        ErrorCode::InvalidValue,
        || code(BufInventory::create(Data(0), 4, 8)),
    ),
    ("inventory double start", ErrorCode::BadState, || {
        code(started_inv(1).start())
    }),
    (
        "inventory stop when not started",
        ErrorCode::BadState,
        || code(BufInventory::new(1).unwrap().stop()),
    ),
    (
        "buffer from an inventory not started",
        ErrorCode::BadState,
        || {
            code(
                BufInventory::new(1)
                    .unwrap()
                    .buf_at(&mmap_with(64, true), 0, 8),
            )
        },
    ),
    (
        "buffer from an mmap not started",
        ErrorCode::BadState,
        || code(started_inv(1).buf_at(&mmap_with(64, false), 0, 8)),
    ),
    (
        "buffer past the end of the mmap",
        ErrorCode::InvalidValue,
        || code(started_inv(1).buf_at(&mmap_with(64, true), 60, 8)),
    ),
    (
        "buffer before the start of the mmap",
        ErrorCode::InvalidValue,
        || {
            let m = mmap_with(64, true);
            let base = m.memrange().unwrap().0 as usize;
            code(started_inv(1).buf_by_addr(&m, (base - 1) as *mut u8, 8))
        },
    ),
    (
        "buffer of length 0 past the mmap",
        ErrorCode::InvalidValue,
        || code(started_inv(1).buf_at(&mmap_with(64, true), 65, 0)),
    ),
    ("buffer with NULL address", ErrorCode::InvalidValue, || {
        code(started_inv(1).buf_by_addr(&mmap_with(64, true), std::ptr::null_mut(), 8))
    }),
    (
        "buffer whose data lies outside it",
        ErrorCode::InvalidValue,
        || {
            let m = mmap_with(64, true);
            let base = m.memrange().unwrap().0;
            let (a, d) = (base.wrapping_add(8), base.wrapping_add(4));
            code(started_inv(1).buf_by_args(&m, a, 8, d, 2))
        },
    ),
    (
        "buffer whose data runs past its end",
        ErrorCode::InvalidValue,
        || {
            let m = mmap_with(64, true);
            let base = m.memrange().unwrap().0;
            let d = base.wrapping_add(4);
            code(started_inv(1).buf_by_args(&m, base, 8, d, 5))
        },
    ),
    ("inventory exhausted", ErrorCode::NoMemory, || {
        let m = mmap_with(64, true);
        let inv = started_inv(1);
        let _a = inv.buf_at(&m, 0, 8).unwrap();
        code(inv.buf_at(&m, 8, 8))
    }),
    (
        "inventory destroy with buffers out",
        ErrorCode::InUse,
        || {
            let m = mmap_with(64, true);
            let inv = started_inv(1);
            let _a = inv.buf_at(&m, 0, 8).unwrap();
            code_back(inv.destroy())
        },
    ),
    (
        "buf_dup into a too-small inventory",
        ErrorCode::NoMemory,
        || {
            let m = mmap_with(64, true);
            let inv = started_inv(2);
            let mut a = inv.buf_at(&m, 0, 8).unwrap();
            a.chain(inv.buf_at(&m, 8, 8).unwrap()).unwrap();
            code(started_inv(1).buf_dup(&a))
        },
    ),
    // --- buffers ---
    ("set_data before the mmap", ErrorCode::InvalidValue, || {
        let m = mmap_with(64, true);
        let inv = started_inv(1);
        let mut b = inv.buf_at(&m, 8, 8).unwrap();
        let p = m.memrange().unwrap().0;
        code(b.set_data(p.wrapping_sub(1), 1))
    }),
    (
        "set_data past the end of the mmap",
        ErrorCode::InvalidValue,
        || {
            let m = mmap_with(64, true);
            let inv = started_inv(1);
            code(inv.buf_at(&m, 8, 8).unwrap().set_data_range(50, 7))
        },
    ),
    (
        "append beyond the tailroom",
        ErrorCode::InvalidValue,
        || {
            let m = mmap_with(64, true);
            let inv = started_inv(1);
            code(inv.buf_at(&m, 0, 4).unwrap().append(b"hello"))
        },
    ),
    (
        "copy data into a short slice",
        ErrorCode::InvalidValue,
        || {
            let m = mmap_with(64, true);
            let inv = started_inv(1);
            code(
                inv.buf_with_data_at(&m, 0, 8)
                    .unwrap()
                    .copy_data_to(&mut [0u8; 4]),
            )
        },
    ),
    (
        "chain a non-head element onto a list",
        ErrorCode::InvalidValue,
        || {
            let m = mmap_with(64, true);
            let inv = started_inv(3);
            let mut a = inv.buf_at(&m, 0, 8).unwrap();
            let mut b = inv.buf_at(&m, 8, 8).unwrap();
            b.chain(inv.buf_at(&m, 16, 8).unwrap()).unwrap();
            let elem = std::ptr::NonNull::from(b.next().unwrap());
            // SAFETY: borrows the list's reference for the call; given back afterwards so
            // the list keeps it.
            let e = unsafe { doca_core::Buf::from_raw(elem) };
            let r = a.chain(e).map_err(|(err, back)| {
                let _ = back.into_raw();
                err
            });
            code(r)
        },
    ),
    (
        "chain a buffer that has other references",
        ErrorCode::InUse,
        || {
            let m = mmap_with(64, true);
            let inv = started_inv(2);
            let mut a = inv.buf_at(&m, 0, 8).unwrap();
            let b = inv.buf_at(&m, 8, 8).unwrap();
            let _b2 = b.refcount_add().unwrap();
            code(a.chain(b).map_err(|(e, _)| e))
        },
    ),
    (
        "unchain a list that has other references",
        ErrorCode::InUse,
        || {
            let m = mmap_with(64, true);
            let inv = started_inv(2);
            let mut a = inv.buf_at(&m, 0, 8).unwrap();
            a.chain(inv.buf_at(&m, 8, 8).unwrap()).unwrap();
            let _reader = a.refcount_add().unwrap();
            code(a.unchain_at(1))
        },
    ),
    ("chain a list into itself", ErrorCode::InUse, || {
        let m = mmap_with(64, true);
        let inv = started_inv(1);
        let mut a = inv.buf_at(&m, 0, 8).unwrap();
        let again = a.refcount_add().unwrap();
        code(a.chain(again).map_err(|(e, _)| e))
    }),
    ("unchain the head", ErrorCode::InvalidValue, || {
        let m = mmap_with(64, true);
        let inv = started_inv(1);
        code(inv.buf_at(&m, 0, 8).unwrap().unchain_at(0))
    }),
    (
        "unchain an element of another list",
        ErrorCode::InvalidValue,
        || {
            let m = mmap_with(64, true);
            let inv = started_inv(2);
            let mut a = inv.buf_at(&m, 0, 8).unwrap();
            let b = inv.buf_at(&m, 8, 8).unwrap();
            code(a.unchain(&*b))
        },
    ),
    (
        "release a list element's last reference before its head",
        ErrorCode::NotPermitted,
        || {
            let m = mmap_with(64, true);
            let inv = started_inv(2);
            let mut a = inv.buf_at(&m, 0, 8).unwrap();
            a.chain(inv.buf_at(&m, 8, 8).unwrap()).unwrap();
            let elem = std::ptr::NonNull::from(a.next().unwrap());
            // SAFETY: the handle takes over the list's reference to the element; the
            // release is refused, so the handle is forgotten to give it back.
            let h = unsafe { doca_core::Buf::from_raw(elem) };
            let r = h.release();
            code(r)
        },
    ),
    // --- bufpool ---
    (
        "bufpool on an mmap not started",
        ErrorCode::BadState,
        || code(BufPool::create(Data(0), 2, 0, 8, 8, &mmap_with(64, false))),
    ),
    (
        "bufpool too large for the mmap",
        ErrorCode::InvalidValue,
        || code(BufPool::create(Data(0), 9, 0, 8, 8, &mmap_with(64, true))),
    ),
    (
        "bufpool alignment not a power of two",
        ErrorCode::InvalidValue,
        || code(BufPool::create(Data(0), 2, 0, 8, 12, &mmap_with(64, true))),
    ),
    ("bufpool element size 0", ErrorCode::InvalidValue, || {
        code(BufPool::create(Data(0), 2, 0, 0, 8, &mmap_with(64, true)))
    }),
    ("bufpool alloc before start", ErrorCode::BadState, || {
        code(
            BufPool::create(Data(0), 2, 0, 8, 8, &mmap_with(64, true))
                .unwrap()
                .buf_alloc(),
        )
    }),
    ("bufpool destroy with buffers out", ErrorCode::InUse, || {
        let mut p = BufPool::create(Data(0), 2, 0, 8, 8, &mmap_with(64, true)).unwrap();
        p.start().unwrap();
        let _b = p.buf_alloc().unwrap();
        code_back(p.destroy())
    }),
    // --- buf array ---
    (
        "buf array with a GPU target",
        ErrorCode::NotSupported,
        || {
            code(
                BufArray::create(&mmap_with(64, true))
                    .unwrap()
                    .set_target_gpu(),
            )
        },
    ),
    (
        "buf array start without params",
        ErrorCode::BadState,
        || code(BufArray::create(&mmap_with(64, true)).unwrap().start()),
    ),
    (
        "buf array elements past the mmap",
        ErrorCode::InvalidValue,
        || {
            let mut a = BufArray::create(&mmap_with(64, true)).unwrap();
            a.set_params(16, 5, 0).unwrap();
            code(a.start())
        },
    ),
    // --- devices ---
    (
        "representors of a host device",
        ErrorCode::NotSupported,
        || {
            code(
                device::devinfo_list().unwrap()[0]
                    .open()
                    .unwrap()
                    .rep_list(RepFilter::All),
            )
        },
    ),
    ("malformed PCI address", ErrorCode::InvalidValue, || {
        code(PciAddr::parse("0000:0b:00"))
    }),
    ("PCI compare with garbage", ErrorCode::InvalidValue, || {
        code(device::devinfo_list().unwrap()[0].is_pci_addr_equal("not-an-address"))
    }),
    ("mac into a 5-byte buffer", ErrorCode::InvalidValue, || {
        code(device::devinfo_list().unwrap()[0].mac_addr_into(&mut [0u8; 5]))
    }),
    (
        "iface name into a short buffer",
        ErrorCode::InvalidValue,
        || code(device::devinfo_list().unwrap()[0].iface_name_into(&mut [0u8; 16])),
    ),
    ("unknown PCI function type", ErrorCode::InvalidValue, || {
        code(PciFuncType::from_raw(7))
    }),
    (
        "unknown representor filter",
        ErrorCode::InvalidValue,
        || code(RepFilter::from_raw(3)),
    ),
    (
        "a job type no table declares",
        ErrorCode::NotSupported,
        || {
            code(doca_core::exec::job_supported_in(
                doca_core::sync_event::tasks::ALL,
                &device::devinfo_list().unwrap()[0],
                42,
            ))
        },
    ),
    (
        "open a device absent from the topology",
        ErrorCode::NotFound,
        || code(doca_core::Dev::open_by_pci("7f:1f.7")),
    ),
    // --- limits and waits that can never end ---
    (
        "a topology with 10^8 engine threads",
        ErrorCode::InvalidValue,
        || {
            code(Topology::from_toml(
                "[[host.device]]\npci_addr = \"01:00.0\"\nengine_threads = 100000000",
                None,
            ))
        },
    ),
    (
        "a topology path that is a device",
        ErrorCode::InvalidValue,
        || code(Topology::from_file(std::path::Path::new("/dev/zero"), None)),
    ),
    ("a sync wait with mask 0", ErrorCode::InvalidValue, || {
        let dev = device::devinfo_list().unwrap()[0].open().unwrap();
        let se = doca_core::SyncEvent::new();
        se.publisher_add_location_cpu(&dev).unwrap();
        se.subscriber_add_location_cpu(&dev).unwrap();
        se.start().unwrap();
        code(se.wait_gt(0, 0))
    }),
    (
        "a sync event destroyed while started",
        ErrorCode::InUse,
        || {
            let dev = device::devinfo_list().unwrap()[0].open().unwrap();
            let se = doca_core::SyncEvent::new();
            se.publisher_add_location_cpu(&dev).unwrap();
            se.subscriber_add_location_cpu(&dev).unwrap();
            se.start().unwrap();
            code(se.destroy().map_err(|(_, e)| e))
        },
    ),
    // --- export and import ---
    (
        "export of an mmap that is not started",
        ErrorCode::BadState,
        || {
            let dev = device::devinfo_list().unwrap()[0].open().unwrap();
            let mut m = mmap_with(64, false);
            m.dev_add(&dev).unwrap();
            code(m.export_dpu(&dev))
        },
    ),
    (
        "export to the DPU without DPU permissions",
        ErrorCode::NotPermitted,
        || {
            let dev = device::devinfo_list().unwrap()[0].open().unwrap();
            let mut m = mmap_with(64, false);
            m.dev_add(&dev).unwrap();
            m.start().unwrap();
            code(m.export_dpu(&dev))
        },
    ),
    (
        "export with a device not added to the mmap",
        ErrorCode::InvalidValue,
        || {
            let dev = device::devinfo_list().unwrap()[0].open().unwrap();
            let mut m = mmap_with(64, false);
            m.set_permissions(AccessFlags::DPU_READ_WRITE).unwrap();
            m.start().unwrap();
            code(m.export_dpu(&dev))
        },
    ),
    (
        "import of an empty descriptor",
        ErrorCode::InvalidValue,
        || {
            let dev = device::devinfo_list().unwrap()[0].open().unwrap();
            code(Mmap::create_from_export(Default::default(), &[], &dev))
        },
    ),
    (
        "import of a random descriptor",
        ErrorCode::InvalidValue,
        || {
            let dev = device::devinfo_list().unwrap()[0].open().unwrap();
            code(Mmap::create_from_export(
                Default::default(),
                &[0x5a; 88],
                &dev,
            ))
        },
    ),
    (
        "a CPU copy through this process's own RDMA export (only RDMA tasks reach it)",
        ErrorCode::NotSupported,
        || {
            let dev = device::devinfo_list().unwrap()[0].open().unwrap();
            let mut m = mmap_with(64, false);
            m.set_permissions(AccessFlags::RDMA_READ).unwrap();
            m.dev_add(&dev).unwrap();
            m.start().unwrap();
            let blob = m.export_rdma(&dev).unwrap();
            let r = Mmap::create_from_export(Default::default(), &blob, &dev).unwrap();
            assert!(r.remote().unwrap().net_key().is_some());
            assert!(!r.remote().unwrap().is_local());
            code(r.read_at(0, &mut [0u8; 8]))
        },
    ),
    (
        "a sync event's descriptor imported as an mmap",
        ErrorCode::InvalidValue,
        || {
            let dev = device::devinfo_list().unwrap()[0].open().unwrap();
            let se = doca_core::SyncEvent::new();
            let blob = se.export_to_dpu(&dev).unwrap();
            code(Mmap::create_from_export(Default::default(), &blob, &dev))
        },
    ),
    (
        "a sync event exported with set_addr memory",
        ErrorCode::NotSupported,
        || {
            let dev = device::devinfo_list().unwrap()[0].open().unwrap();
            let se = doca_core::SyncEvent::new();
            static WORD: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            // SAFETY: a static, aligned word that lives forever and is accessed atomically.
            unsafe { se.set_addr(WORD.as_ptr()) }.unwrap();
            code(se.export_to_dpu(&dev))
        },
    ),
];

#[test]
fn misuse_table() {
    assert!(CASES.len() >= 40, "only {} cases", CASES.len());
    let mut failures = Vec::new();
    for (what, want, run) in CASES {
        let got = std::panic::catch_unwind(run);
        match got {
            Ok(code) if code == *want => {}
            Ok(code) => failures.push(format!(
                "{what}: expected {}, got {}",
                want.name(),
                code.name()
            )),
            Err(_) => failures.push(format!("{what}: panicked")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}
