//! Which network of this machine a device's RDMA goes through.
//!
//! A topology file may name it per device: `rdma_iface` (an interface) or `rdma_addr`
//! (an address, and so the interface holding it). UCX then uses only that interface
//! (its `NET_DEVICES`; shared memory on one machine is not a network device and stays
//! available), the connection manager listens on that address, and the device's GID
//! table lists that interface's addresses. A device that names neither uses whatever
//! UCX picks, and its GID table lists every address of the machine.

use doca_core::{DevInfo, Error, ErrorCode, Result};
use std::net::IpAddr;

/// The network a device's RDMA uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetChoice {
    /// The only interface UCX may use; `None`: any.
    pub iface: Option<String>,
    /// The address the connection manager listens on; `None`: every IPv4 address.
    pub listen: Option<IpAddr>,
}

/// Every address of this machine (of the calling thread's network namespace) with its
/// interface, in the kernel's order.
pub fn machine_addresses() -> Vec<(String, IpAddr)> {
    let Ok(list) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for a in list {
        let Some(sa) = a.address else { continue };
        let ip = if let Some(v4) = sa.as_sockaddr_in() {
            IpAddr::V4(v4.ip())
        } else if let Some(v6) = sa.as_sockaddr_in6() {
            IpAddr::V6(v6.ip())
        } else {
            continue;
        };
        out.push((a.interface_name, ip));
    }
    out
}

fn names(addrs: &[(String, IpAddr)]) -> String {
    let mut n: Vec<&str> = Vec::new();
    for (i, _) in addrs {
        if !n.contains(&i.as_str()) {
            n.push(i);
        }
    }
    if n.is_empty() {
        "none".into()
    } else {
        n.join(", ")
    }
}

fn iface_exists(name: &str) -> bool {
    nix::net::if_::if_nametoindex(name).is_ok()
}

/// The network the device `info` describes uses: what its topology names, checked
/// against the machine. A named interface that does not exist here, or an address no
/// interface holds, is `NotFound`; an address on another interface than the one named,
/// `InvalidValue`.
pub fn choice(info: &DevInfo) -> Result<NetChoice> {
    let p = info.props();
    if p.rdma_iface.is_none() && p.rdma_addr.is_none() {
        return Ok(NetChoice::default());
    }
    choice_among(info, &machine_addresses())
}

/// [`choice`], against `addrs` (the machine's, from [`machine_addresses`]).
pub(crate) fn choice_among(info: &DevInfo, addrs: &[(String, IpAddr)]) -> Result<NetChoice> {
    let p = info.props();
    let dev = p.pci_addr;
    match (&p.rdma_iface, p.rdma_addr) {
        (Some(n), addr) => {
            if !iface_exists(n) {
                return Err(Error::with_context(
                    ErrorCode::NotFound,
                    format!(
                        "device {dev}: its topology names rdma_iface '{n}', which is not a network interface here (this network namespace has: {}); name one of them, or leave rdma_iface out",
                        names(addrs)
                    ),
                ));
            }
            let listen = match addr {
                Some(a) => {
                    if !addrs.iter().any(|(i, x)| i == n && *x == a) {
                        return Err(Error::with_context(
                            ErrorCode::InvalidValue,
                            format!(
                                "device {dev}: its topology's rdma_addr {a} is not an address of its rdma_iface '{n}'"
                            ),
                        ));
                    }
                    Some(a)
                }
                None => addrs
                    .iter()
                    .find(|(i, x)| i == n && x.is_ipv4())
                    .map(|&(_, x)| x),
            };
            Ok(NetChoice {
                iface: Some(n.clone()),
                listen,
            })
        }
        (None, Some(a)) => match addrs.iter().find(|&&(_, x)| x == a) {
            Some((i, _)) => Ok(NetChoice {
                iface: Some(i.clone()),
                listen: Some(a),
            }),
            None => Err(Error::with_context(
                ErrorCode::NotFound,
                format!(
                    "device {dev}: its topology names rdma_addr {a}, which no interface here holds (interfaces: {}); name an address of this machine, or leave rdma_addr out",
                    names(addrs)
                ),
            )),
        },
        (None, None) => Ok(NetChoice::default()),
    }
}
