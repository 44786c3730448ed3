//! A device's GID table, as RDMA programs read it (`doca_rdma_cap_get_gid`), made from
//! the addresses of this machine as an mlx5 device makes its table from its netdev's:
//! IPv6 link-local addresses first, then IPv4 addresses mapped into IPv6
//! (`::ffff:a.b.c.d`), then the other IPv6 addresses; each address twice, as RoCE v1
//! then RoCE v2 list it. With an IPv6 link-local and one IPv4 address, index 3 is the
//! IPv4 address's RoCE v2 GID, the index RDMA programs commonly pick.
//!
//! The addresses are those of the interface the device's topology names
//! ([`crate::netdev`]); without one, every interface's, loopback last; on a machine
//! with no address at all, the topology's own `ipv6` and `ipv4`.

use crate::netdev;
use doca_core::Dev;
use std::net::IpAddr;

/// Size of a GID.
pub const GID_LEN: usize = 16;

/// The GID table of `dev`.
pub fn table(dev: &Dev) -> Vec<[u8; GID_LEN]> {
    table_of(dev.as_devinfo())
}

fn gid(a: IpAddr) -> [u8; GID_LEN] {
    match a {
        IpAddr::V4(v) => v.to_ipv6_mapped().octets(),
        IpAddr::V6(v) => v.octets(),
    }
}

fn rank(a: &IpAddr) -> u8 {
    match a {
        IpAddr::V6(v) if v.is_unicast_link_local() => 0,
        IpAddr::V4(_) => 1,
        IpAddr::V6(_) => 2,
    }
}

/// The GID table of the device `info` describes.
pub fn table_of(info: &doca_core::DevInfo) -> Vec<[u8; GID_LEN]> {
    let all = netdev::machine_addresses();
    let mut addrs: Vec<IpAddr> = match netdev::choice_among(info, &all) {
        Ok(netdev::NetChoice { iface: Some(n), .. }) => all
            .iter()
            .filter(|(i, _)| *i == n)
            .map(|&(_, a)| a)
            .collect(),
        // A device naming what is not here lists no GID: its RDMA context cannot
        // start either, with the reason.
        Err(_) => Vec::new(),
        Ok(_) => {
            let mut v: Vec<IpAddr> = all
                .iter()
                .filter(|(_, a)| !a.is_loopback())
                .map(|&(_, a)| a)
                .collect();
            v.extend(all.iter().filter(|(_, a)| a.is_loopback()).map(|&(_, a)| a));
            if v.is_empty() {
                v.push(IpAddr::from(info.ipv6_addr()));
                v.push(IpAddr::from(info.ipv4_addr()));
            }
            v
        }
    };
    // Stable: loopback stays last within its rank's order.
    addrs.sort_by_key(rank);
    let mut seen: Vec<IpAddr> = Vec::with_capacity(addrs.len());
    addrs.retain(|a| {
        let new = !seen.contains(a);
        seen.push(*a);
        new
    });
    let mut out = Vec::with_capacity(addrs.len() * 2);
    for a in addrs {
        out.push(gid(a));
        out.push(gid(a));
    }
    out
}
