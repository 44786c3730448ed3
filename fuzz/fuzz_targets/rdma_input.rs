//! What another machine sends an RDMA context: connection descriptors, message
//! headers, remote net sync event descriptors, and whole messages thrown at a live
//! context's worker. Every one is refused or taken without a panic, and whatever is
//! taken round-trips.
#![no_main]

use doca_core::sync_event::net::RemoteNetEvent;
use doca_rdma::wire::{ConnDesc, HDR_LEN, Header};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(d) = ConnDesc::decode(data) {
        assert_eq!(d.encode(), data, "a descriptor taken is the one encoded");
    }
    if let Some(h) = Header::decode(data) {
        assert_eq!(data.len(), HDR_LEN);
        assert_eq!(&h.encode()[..], data);
    }
    let _ = RemoteNetEvent::from_export(data);
});
