//! DOCA RDMA in software, on UCX.

pub mod nic;
mod ucx;
pub mod wire;
