//! What the software NIC's tests share: two connected NICs of this process, and memory
//! exported for RDMA with the key an importer sees.

use doca_core::{AccessFlags, Mmap, device};
use doca_rdma::nic::{Cmd, Nic, Sink, random_u64};
use doca_rdma::wire::ConnDesc;
use std::sync::Arc;

/// Two NICs of this process on the first device, connection 1 of the first connected
/// to connection 7 of the second, each with its own sink.
pub fn pair<S: Sink + Default>() -> (Nic, Arc<S>, Nic, Arc<S>) {
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let (ca, cb) = (Arc::new(S::default()), Arc::new(S::default()));
    let a = Nic::start(&dev, doca_rdma::nic::GRANT_ALL, ca.clone()).unwrap();
    let b = Nic::start(&dev, doca_rdma::nic::GRANT_ALL, cb.clone()).unwrap();
    let (ka, kb) = (random_u64().unwrap(), random_u64().unwrap());
    // SAFETY: control commands name no memory.
    unsafe {
        a.submit(Cmd::Register { conn: 1, key: ka });
        b.submit(Cmd::Register { conn: 7, key: kb });
        let da = ConnDesc::decode(&a.descriptor(1, ka)).unwrap();
        let db = ConnDesc::decode(&b.descriptor(7, kb)).unwrap();
        a.submit(Cmd::Connect { conn: 1, desc: db });
        b.submit(Cmd::Connect { conn: 7, desc: da });
    }
    (a, ca, b, cb)
}

/// `len` zero bytes exported with `perms` on the first device, and the export's token
/// and base address as an importer sees them.
pub fn exported(len: usize, perms: AccessFlags) -> (Mmap, [u64; 2], u64) {
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let mut m = Mmap::new();
    m.set_memory(vec![0u8; len]).unwrap();
    m.set_permissions(perms).unwrap();
    m.dev_add(&dev).unwrap();
    m.start().unwrap();
    let blob = m.export_rdma(&dev).unwrap();
    let r = Mmap::create_from_export(Default::default(), &blob, &dev).unwrap();
    let k = r.remote().unwrap().net_key().unwrap();
    (m, k.token, k.base)
}
