//! What the comm channel's tests share.

use doca_core::Dev;
use doca_core::device::{DEFAULT_MACHINE, Topology};

/// The default machine's device at `pci` on `role`'s side ("host" or "dpu").
pub fn device(role: &str, pci: &str) -> Dev {
    Topology::from_toml(DEFAULT_MACHINE, Some(role))
        .unwrap()
        .open_device(pci)
        .unwrap()
}
