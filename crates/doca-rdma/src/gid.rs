//! A device's GID table, as RDMA programs read it (`doca_rdma_cap_get_gid`): one entry
//! per address of the device, IPv6 first, then its IPv4 address mapped into IPv6
//! (`::ffff:a.b.c.d`, as RoCE v2 writes an IPv4 GID).

use doca_core::Dev;

/// Size of a GID.
pub const GID_LEN: usize = 16;

/// The GID table of `dev`.
pub fn table(dev: &Dev) -> Vec<[u8; GID_LEN]> {
    table_of(dev.as_devinfo())
}

/// The GID table of the device `info` describes.
pub fn table_of(info: &doca_core::DevInfo) -> Vec<[u8; GID_LEN]> {
    let mut v = vec![info.ipv6_addr()];
    let a = info.ipv4_addr();
    let mut mapped = [0u8; GID_LEN];
    mapped[10] = 0xff;
    mapped[11] = 0xff;
    mapped[12..].copy_from_slice(&a);
    v.push(mapped);
    v
}
